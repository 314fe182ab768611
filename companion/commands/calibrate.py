"""`companion calibrate camera`: the camera's intrinsics and lens distortion from
views of a printed ChArUco board (or OpenCV's chessboard or circle grid),
written as OpenCV's calibration YAML."""

from __future__ import annotations

import argparse
import time

from calibration.charuco import (
    DEFAULT_DICTIONARY,
    DEFAULT_MARKER_MM,
    DEFAULT_SQUARE_MM,
    DEFAULT_SQUARES,
    STILLS_NEW_ANGLE_DEG,
    CalibrationError,
    CalibrationResult,
    CharucoBoardSpec,
    ViewCollector,
)
from calibration.patterns import PATTERNS, ChessboardSpec, CircleGridSpec, PatternError

from . import CommandError

#: With no new view for this long, a live camera's progress says what it sees.
_STATUS_EVERY_S = 3.0


def register(sub) -> None:
    p = sub.add_parser("calibrate", help="calibrate the camera from views of a ChArUco board or a chessboard",
                       description="Calibration: measure the camera so table positions come out in "
                                   "true millimetres.")
    kinds = p.add_subparsers(dest="what", metavar="WHAT", title="what to calibrate")
    p.set_defaults(func=lambda args: _print_help(p))

    cam = kinds.add_parser(
        "camera", help="intrinsics and lens distortion from views of a ChArUco board or a chessboard",
        description="Show the printed ChArUco board (companion markers board) to the camera in many "
                    "places and tilts, reaching the frame's edges and corners. Views that add "
                    "coverage of the frame or a new orientation are taken; then the camera is "
                    "calibrated and written as OpenCV's calibration YAML. From a live camera, "
                    "press Ctrl+C to finish early. OpenCV's chessboard or circle grid works too "
                    "(--pattern chessboard --cols 9 --rows 6 --square-mm 25): each view must then "
                    "show the whole pattern.")
    cam.add_argument("--source", required=True,
                     help="a camera number (0), a video file, a folder of photos or one photo")
    cam.add_argument("--out", required=True, help="the camera file to write (OpenCV YAML), e.g. camera.yml")
    cam.add_argument("--pattern", choices=PATTERNS, default="charuco",
                     help="what was printed: a ChArUco board (default; `companion markers board`), "
                          "OpenCV's chessboard, or its circle grid (circles, asymmetric-circles)")
    cam.add_argument("--cols", type=int,
                     help="chessboard: inner corners across (squares minus one: 9 for OpenCV's 10 x 7 "
                          "squares); circle grid: circles across")
    cam.add_argument("--rows", type=int, help="chessboard: inner corners down (6 for OpenCV's board); "
                                              "circle grid: circles down")
    cam.add_argument("--squares", type=_squares, default=DEFAULT_SQUARES, metavar="XxY",
                     help=f"squares across x down (default {DEFAULT_SQUARES[0]}x{DEFAULT_SQUARES[1]})")
    cam.add_argument("--square-mm", type=float, default=DEFAULT_SQUARE_MM,
                     help=f"side of a chessboard square, measured on the print (default {DEFAULT_SQUARE_MM:g}); "
                          f"for a circle grid, the spacing of the circles' centres (an asymmetric grid: "
                          f"half the step along a row, as OpenCV's sample)")
    cam.add_argument("--marker-mm", type=float, default=DEFAULT_MARKER_MM,
                     help=f"side of a marker's black square (default {DEFAULT_MARKER_MM:g})")
    cam.add_argument("--dictionary", default=DEFAULT_DICTIONARY,
                     help=f"the board's ArUco dictionary (default {DEFAULT_DICTIONARY})")
    cam.add_argument("--legacy", action="store_true",
                     help="the board was drawn by OpenCV before 4.6 (matters for an even number of rows)")
    cam.add_argument("--min-views", type=int, default=10,
                     help="refuse to calibrate from fewer views (default 10)")
    cam.add_argument("--max-views", type=int, default=30,
                     help="stop taking views after this many (default 30)")
    cam.set_defaults(func=cmd_calibrate_camera)


def _print_help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def _squares(text: str) -> tuple[int, int]:
    parts = text.lower().replace("×", "x").split("x")
    try:
        x, y = (int(part) for part in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not squares across x down, such as 5x7") from None
    return x, y


def cmd_calibrate_camera(args: argparse.Namespace) -> int:
    from vision.sources import ImageFolderSource, open_source

    if args.min_views < 3:
        raise CommandError("--min-views must be at least 3 (three views of a flat board are the "
                           "least that determine a camera)")
    if args.max_views < args.min_views:
        raise CommandError(f"--max-views ({args.max_views}) is below --min-views ({args.min_views})")
    if args.source.strip() == "demo":
        raise CommandError("the synthetic table shows no calibration board; give a camera number, "
                           "a video or a folder of photos of the board")
    spec = _pattern_spec(args)

    source = open_source(args.source)
    # Photos were taken one by one on purpose: a smaller turn counts as new, and
    # each skipped one is named.  A video or a camera skips most frames as
    # near-duplicates, which is no news.
    stills = isinstance(source, ImageFolderSource)
    collector = ViewCollector(spec, max_views=args.max_views,
                              **({"new_angle_deg": STILLS_NEW_ANGLE_DEG} if stills else {}))
    print(f"looking for a {spec.describe()} in {source.description}"
          f"{'; press Ctrl+C to finish' if source.live else ''}", flush=True)
    last_status = time.monotonic()
    with source:
        try:
            for frame in source:
                name = frame.name if stills else f"frame {frame.index}"
                decision = collector.add(frame.image, name, frame.index)
                if decision.kept:
                    view = decision.view
                    print(f"view {len(collector.views)} ({view.name}): {decision.corner_count} corners, "
                          f"coverage {collector.coverage_percent:.0f} %, tilt {view.tilt_deg:.0f} deg "
                          f"({decision.reason})", flush=True)
                    last_status = time.monotonic()
                elif stills:
                    print(f"skipped {name}: {decision.reason}", flush=True)
                elif source.live and time.monotonic() - last_status > _STATUS_EVERY_S:
                    print(f"{len(collector.views)} views, coverage {collector.coverage_percent:.0f} %; "
                          f"now: {decision.reason}", flush=True)
                    last_status = time.monotonic()
                if collector.full:
                    break
        except KeyboardInterrupt:
            if not source.live:
                raise
            print("", flush=True)
        except CalibrationError as exc:
            raise CommandError(str(exc)) from None

    try:
        result = collector.calibrate(min_views=args.min_views)
    except CalibrationError as exc:
        raise CommandError(str(exc)) from None
    _report(result)
    try:
        written = result.write(args.out)
    except OSError as exc:
        raise CommandError(f"cannot write {args.out}: {exc.strerror or exc}") from None
    print(f"wrote {written}", flush=True)
    return 0


def _pattern_spec(args: argparse.Namespace):
    """What was printed, from the options, or a CommandError naming the one missing or wrong."""
    pattern = getattr(args, "pattern", "charuco")
    try:
        if pattern == "charuco":
            if args.cols is not None or args.rows is not None:
                raise CommandError("--cols and --rows describe a chessboard or a circle grid; a ChArUco "
                                   "board takes --squares XxY (or give --pattern chessboard)")
            return CharucoBoardSpec(args.squares[0], args.squares[1], args.square_mm, args.marker_mm,
                                    args.dictionary, args.legacy)
        if args.cols is None or args.rows is None:
            example = "--cols 9 --rows 6" if pattern == "chessboard" else "--cols 4 --rows 11"
            raise CommandError(f"--pattern {pattern} needs --cols and --rows ({example}"
                               f"{': inner corners, squares minus one' if pattern == 'chessboard' else ''})")
        if pattern == "chessboard":
            return ChessboardSpec(args.cols, args.rows, args.square_mm)
        return CircleGridSpec(args.cols, args.rows, args.square_mm, asymmetric=pattern == "asymmetric-circles")
    except (CalibrationError, PatternError) as exc:
        raise CommandError(str(exc)) from None


def _report(result: CalibrationResult) -> None:
    cam = result.camera
    k, std = cam.camera_matrix, result.intrinsics_std
    print(f"calibrated from {len(result.views)} views: RMS reprojection error {result.rms_px:.3f} px",
          flush=True)
    print(f"focal length {k[0, 0]:.1f} x {k[1, 1]:.1f} px (+/- {std['fx']:.1f}, {std['fy']:.1f}), "
          f"principal point {k[0, 2]:.1f}, {k[1, 2]:.1f} px (+/- {std['cx']:.1f}, {std['cy']:.1f}), "
          f"image {cam.image_size[0]} x {cam.image_size[1]}", flush=True)
    names = ("k1", "k2", "p1", "p2", "k3")
    print("distortion " + ", ".join(f"{n} {v:.4f}" for n, v in zip(names, cam.dist_coeffs)), flush=True)
    # Every view's own error, worst first: a view far above the rest is a
    # blurred frame or a bent board, and is where to look.
    ranked = result.worst_views(len(result.view_errors_px))
    print("each view's error, worst first: "
          + ", ".join(f"{name} {err:.3f} px" for name, err in ranked), flush=True)
    if result.rms_px > 1.0:
        # Above a pixel something is off: a misprinted board, a blurred view, a
        # board that bends.  The worst views are where to look.
        print("the RMS error is above 1 px: check the board is flat and its sizes right, and "
              "leave out the worst views", flush=True)

"""`companion calibrate camera`: the camera's intrinsics and lens distortion from
views of a printed ChArUco board (or OpenCV's chessboard or circle grid),
written as OpenCV's calibration YAML. `companion calibrate projector`: the projector
over the table, measured by the camera (companion/projector_cal.py)."""

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

    proj = kinds.add_parser(
        "projector", help="the projector over the table, measured by the camera (no tape measure)",
        description="The projector throws numbered dots (10 frames), the camera finds where each lands on "
                    "the table (through the anchors), and the projector's mapping (its pose, keystone and "
                    "lens) is solved, checked with marks thrown through it, and saved beside the table file "
                    "(projector.json). With --demo the demo's synthetic projector is calibrated through its "
                    "synthetic camera, with no hardware. With a camera, open the page this prints "
                    "(/projector) full-screen on the projector; the calibration starts once it is open. "
                    "A calibration that fails leaves the one saved before as it was.")
    proj.add_argument("--demo", action="store_true",
                      help="calibrate the demo's synthetic projector through its synthetic camera (same as "
                           "--source demo)")
    proj.add_argument("--source", help="a camera index (0) watching the table, or 'demo'")
    proj.add_argument("--table", help="the table file (TOML); with --demo, the built-in demo table by default")
    proj.add_argument("--camera", help="the camera's calibration (OpenCV YAML); without it the lens is "
                                       "estimated from the anchors")
    proj.add_argument("--out", help="the calibration file to write (default: projector.json beside the table "
                                    "file; for the built-in demo table, in the current folder)")
    proj.add_argument("--port", type=int, default=8766,
                      help="with a camera: the port the projector page is served on (default 8766)")
    proj.add_argument("--wait", type=float, default=300.0,
                      help="with a camera: how long to wait for the projector page to open (seconds, default 300)")
    proj.add_argument("--size", type=_frame_size, default=(1920, 1080), metavar="WxH",
                      help="with --demo: the synthetic camera's frame size (default 1920x1080)")
    proj.set_defaults(func=cmd_calibrate_projector)


def _print_help(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2


def cmd_calibrate_projector(args: argparse.Namespace) -> int:
    from calibration.tablefile import TableFileError, load_table

    from ..projector_cal import FILE_NAME, projector_file

    demo = args.demo or (args.source or "").strip() == "demo"
    if not demo and not args.source:
        raise CommandError("say which camera watches the table (--source 0), or --demo for the synthetic table")
    if args.table:
        try:
            table = load_table(args.table)
        except TableFileError as exc:
            raise CommandError(str(exc)) from None
    elif demo:
        from vision.demo import demo_table
        table = demo_table()
    else:
        raise CommandError("say which table with --table T.toml (the table file the camera's anchors are in)")
    out = projector_file(table, args.out) or projector_file(table, FILE_NAME)
    if demo:
        return _calibrate_demo_projector(args, table, out)
    return _calibrate_live_projector(args, table, out)


def _calibrate_demo_projector(args: argparse.Namespace, table, out) -> int:
    """The demo's synthetic projector (vision/projector_sim.py) through its synthetic camera."""
    from vision.demo import DemoScript
    from vision.projector_sim import demo_projector
    from vision.render import TableRenderer

    from ..projector_cal import ProjectorCalError, SyntheticRig, calibrate, save_calibration

    w, h = args.size
    renderer = TableRenderer.overhead(table, width=w, height=h)
    projector = demo_projector(table)
    rig = SyntheticRig(renderer, projector, DemoScript(table).poses_at(0.0))
    print(f"throwing the synthetic projector's dots ({projector.size_px[0]} x {projector.size_px[1]} px) "
          f"on {table.source}, seen by a {w} x {h} synthetic camera", flush=True)
    try:
        result = calibrate(table, rig.throw, rig.grab, projector.size_px, camera=renderer.camera)
    except ProjectorCalError as exc:
        raise CommandError(str(exc)) from None
    _report_projector(result)
    try:
        print(save_calibration(result.model, out, table), flush=True)
    except ProjectorCalError as exc:
        raise CommandError(str(exc)) from None
    return 0


def _calibrate_live_projector(args: argparse.Namespace, table, out) -> int:
    """A real projector: the projector page served for it, the camera's frames tracked,
    the calibration run once the page has said its size."""
    import threading

    from waitress import create_server

    from calibration.camera import CameraFileError
    from vision.sources import SourceError, open_source

    from ..live import LiveTable
    from ..projector_cal import ProjectorCalError
    from ..web import create_app
    from ..web.projector_cal_api import service
    from . import load_camera
    from .locate import fit_camera_to_source

    try:
        camera = load_camera(args.camera)
        source = open_source(args.source, table)
        source, camera, note = fit_camera_to_source(source, camera)
    except (CameraFileError, SourceError) as exc:
        raise CommandError(str(exc)) from None
    if note:
        print(f"warning: {note}", flush=True)
    live = LiveTable(source, table, camera).start()
    app = create_app(live, {"PROJECTOR_FILE": str(out)})
    try:
        server = create_server(app, host="127.0.0.1", port=args.port, threads=8)
    except OSError as exc:
        live.stop()
        raise CommandError(f"cannot serve the projector page on port {args.port}: {exc.strerror or exc}; "
                           f"give another with --port") from None
    thread = threading.Thread(target=server.run, name="projector-page", daemon=True)
    thread.start()
    try:
        print(f"open http://127.0.0.1:{server.effective_port}/projector full-screen in a browser on the "
              f"projector; the calibration starts once it is open", flush=True)
        display = app.config["PROJECTOR"]
        waited = 0.0
        while not display.screen_px:
            if waited >= args.wait:
                raise CommandError(f"the projector page was not opened within {args.wait:g} s: open "
                                   f"http://127.0.0.1:{server.effective_port}/projector on the projector and "
                                   f"run this again")
            time.sleep(0.25)
            waited += 0.25
        svc = service(app)
        try:
            result = svc.calibrate_now()
        except ProjectorCalError as exc:
            raise CommandError(str(exc)) from None
        finally:
            display.clear_pattern()
        _report_projector(result)
        print(svc.saved, flush=True)
        return 0
    finally:
        server.close()
        live.stop()


def _report_projector(result) -> None:
    m = result.model
    print(f"measured {result.dots_used} of the projector's {result.dots_thrown} dots on the table "
          f"({result.dots_seen} seen; the rest missed the table or lay on a car)", flush=True)
    print(f"the fit's scatter: {m.rms_mm:.2f} mm RMS ({m.rms_px:.2f} projector px)", flush=True)
    print(result.coverage.words(), flush=True)
    if result.coverage.missed:
        print("move or zoom the projector so its image covers the whole table, then calibrate again", flush=True)
    for note in result.notes:
        print(note, flush=True)
    if result.check is not None:
        print(f"check: {result.check.words}", flush=True)


def _frame_size(text: str) -> tuple[int, int]:
    parts = text.lower().replace("×", "x").split("x")
    try:
        w, h = (int(part) for part in parts)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a frame size in pixels, width x height, "
                                         f"such as 1920x1080") from None
    if not (160 <= w <= 8192 and 120 <= h <= 8192):
        raise argparse.ArgumentTypeError(f"'{text}' is no camera's frame: from 160x120 to 8192x8192") from None
    return w, h


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

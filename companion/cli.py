"""The `companion` command."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from calibration.camera import CameraFileError, CameraModel
from calibration.table_pose import TablePoseError
from calibration.tablefile import TableFileError, TableSpec, load_table
from vision.detect import DetectionError
from vision.sources import SourceError

#: Errors that are the user's to fix: printed as one line, never a traceback.
USER_ERRORS = (TableFileError, CameraFileError, TablePoseError, SourceError, DetectionError)

DEFAULT_PORT = 8765


class CommandError(Exception):
    """A command that cannot go on; the message says why."""


def _camera(path: str | None) -> CameraModel | None:
    return CameraModel.from_yaml(path) if path else None


# --- locate ----------------------------------------------------------------------

def cmd_locate(args: argparse.Namespace) -> int:
    from vision.locate import Locator
    from vision.sources import ImageSource, open_source

    table = load_table(args.table)
    camera = _camera(args.camera)
    source = open_source(args.input, table)
    locator = Locator(table, camera)
    single = isinstance(source, ImageSource)
    with source:
        for frame in source:
            located = locator.locate(frame.image, frame.index)
            if single and located.table_pose is None:
                raise CommandError(f"{args.input}: {located.error}")
            print(json.dumps(located.to_json()), flush=True)
    return 0


# --- serving ---------------------------------------------------------------------

def _serve(live, port: int, host: str = "127.0.0.1") -> int:
    from waitress import create_server

    from .web import create_app

    app = create_app(live)
    # Each open page holds one thread for its event stream.
    server = create_server(app, host=host, port=port, threads=24, ident="table-companion")
    address = f"http://{host}:{server.effective_port}/"
    live.start()
    print(f"Table companion: {address}", flush=True)
    print(f"  showing {live.source.description} on {live.table.source}; Ctrl+C stops it", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        live.stop()
        server.close()
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from vision.sources import SyntheticSource

    from .live import LiveTable

    source = SyntheticSource(fps=args.fps)
    # The synthetic camera is known exactly, as a calibration file would give it.
    live = LiveTable(source, source.table, source.camera)
    return _serve(live, args.port)


def cmd_serve(args: argparse.Namespace) -> int:
    from vision.sources import open_source

    from .live import LiveTable

    table = load_table(args.table)
    camera = _camera(args.camera)
    source = open_source(args.source, table)
    live = LiveTable(source, table, camera, paced=True)
    return _serve(live, args.port)


# --- render ----------------------------------------------------------------------

def cmd_render(args: argparse.Namespace) -> int:
    import cv2

    from vision.demo import DemoScript, demo_table
    from vision.render import RenderOptions, TableRenderer

    table: TableSpec = load_table(args.table) if args.table else demo_table()
    renderer = TableRenderer.overhead(table, options=RenderOptions(), seed=args.seed)
    script = DemoScript(table)
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    truth_lines = []
    if out.suffix.lower() in {".png", ".jpg", ".jpeg", ".bmp"}:
        frame = renderer.render(script.poses_at(args.start))
        if not cv2.imwrite(str(out), frame.image):
            raise CommandError(f"{out}: could not write the image")
        truth_lines.append(_truth_json(0, frame))
    else:
        w, h = renderer.camera.image_size
        fourcc = cv2.VideoWriter_fourcc(*("mp4v" if out.suffix.lower() == ".mp4" else "MJPG"))
        writer = cv2.VideoWriter(str(out), fourcc, args.fps, (w, h))
        if not writer.isOpened():
            raise CommandError(f"{out}: cannot write a video of that kind (try .avi or .mp4)")
        n = max(int(args.seconds * args.fps), 1)
        for i in range(n):
            frame = renderer.render(script.poses_at(args.start + i / args.fps))
            writer.write(frame.image)
            truth_lines.append(_truth_json(i, frame))
        writer.release()
    if args.camera_out:
        renderer.camera.to_yaml(args.camera_out)
    if args.truth:
        Path(args.truth).write_text("".join(json.dumps(t) + "\n" for t in truth_lines))
    print(f"wrote {out}" + (f", camera {args.camera_out}" if args.camera_out else "")
          + (f", truth {args.truth}" if args.truth else ""))
    return 0


def _truth_json(index: int, frame) -> dict:
    return {"frame": index, "cars": [{"id": c.id, "x_mm": round(c.x_mm, 3), "y_mm": round(c.y_mm, 3),
                                      "heading_deg": round(c.heading_deg, 3)}
                                     for c in frame.cars.values()]}


# --- the parser ------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="companion",
        description="The table companion: tracks diecast cars on a real table by the ArUco "
                    "markers on their roofs and shows them on a web page.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    p = sub.add_parser("demo", help="run the companion on its built-in synthetic demo table",
                       description="Render a scripted game on a synthetic table and serve the page.")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to serve on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--fps", type=float, default=15.0, help="frames per second to render (default 15)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("serve", help="serve the table page for a camera, video or folder of images",
                       description="Track the cars of a real table and serve the page on 127.0.0.1.")
    p.add_argument("--source", required=True, help="a camera index (0), a video file, a folder of images, or 'demo'")
    p.add_argument("--table", required=True, help="the table file (TOML)")
    p.add_argument("--camera", help="the camera's calibration (OpenCV YAML); without it the camera is estimated from the anchors")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port to serve on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("locate", help="print each car's table position in an image or video as JSON",
                       description="Print one JSON object for an image, or one per line for a video or folder.")
    p.add_argument("input", metavar="IMAGE_OR_VIDEO", help="an image, a video file or a folder of images")
    p.add_argument("--table", required=True, help="the table file (TOML)")
    p.add_argument("--camera", help="the camera's calibration (OpenCV YAML)")
    p.set_defaults(func=cmd_locate)

    p = sub.add_parser("render", help="render the demo game on a synthetic table to an image or video",
                       description="Render frames of the scripted demo game as a webcam 1.1 m above the table would see them.")
    p.add_argument("output", help="an image (.png, .jpg) or a video (.avi, .mp4)")
    p.add_argument("--table", help="the table file (default: the built-in demo table)")
    p.add_argument("--seconds", type=float, default=3.0, help="video length (default 3)")
    p.add_argument("--fps", type=float, default=15.0, help="video frame rate (default 15)")
    p.add_argument("--start", type=float, default=0.0, help="the game time of the first frame, in seconds")
    p.add_argument("--seed", type=int, default=0, help="seed for the sensor noise")
    p.add_argument("--camera-out", help="also write the synthetic camera's calibration YAML here")
    p.add_argument("--truth", help="also write the true poses here, one JSON line per frame")
    p.set_defaults(func=cmd_render)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return args.func(args)
    except (*USER_ERRORS, CommandError) as exc:
        print(f"companion: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

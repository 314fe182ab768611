"""`companion demo` and `companion serve`: the table page, live."""

from __future__ import annotations

import argparse

from calibration.tablefile import load_table

from . import load_camera

DEFAULT_PORT = 8765


def register(sub) -> None:
    p = sub.add_parser("demo", help="run the companion on its built-in synthetic demo table",
                       description="Render a scripted game on a synthetic table and serve the page.")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port to serve on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--fps", type=float, default=15.0, help="frames per second to render (default 15)")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("serve", help="serve the table page for a camera, video or folder of images",
                       description="Track the cars of a real table and serve the page on 127.0.0.1.")
    p.add_argument("--source", required=True, help="a camera index (0), a video file, a folder of images, or 'demo'")
    p.add_argument("--table", required=True, help="the table file (TOML)")
    p.add_argument("--camera", help="the camera's calibration (OpenCV YAML); without it the camera is estimated from the anchors")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port to serve on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.set_defaults(func=cmd_serve)


def _serve(live, port: int, host: str = "127.0.0.1") -> int:
    from waitress import create_server

    from ..web import create_app

    app = create_app(live)
    # Each open page holds one thread for its event stream.
    server = create_server(app, host=host, port=port, threads=24, ident="table-companion")
    address = f"http://{host}:{server.effective_port}/"
    live.start()
    print(f"Table companion: {address}", flush=True)
    print(f"  showing {live.description} on {live.table.source}; Ctrl+C stops it", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        live.stop()
        server.close()
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from vision.sources import PrefetchSource, SyntheticSource

    from ..live import LiveTable

    source = SyntheticSource(fps=args.fps)
    # The synthetic camera is known exactly, as a calibration file would give it;
    # frames render on a reader thread while the last one is tracked.
    live = LiveTable(PrefetchSource(source), source.table, source.camera)
    return _serve(live, args.port)


def cmd_serve(args: argparse.Namespace) -> int:
    from vision.sources import open_source

    from ..live import LiveTable

    table = load_table(args.table)
    camera = load_camera(args.camera)
    # Open it once now, so a wrong path or a missing camera is said at once;
    # later, when it stops, the live table opens it again with back-off.
    first = [open_source(args.source, table)]

    def opener():
        return first.pop() if first else open_source(args.source, table)

    live = LiveTable(opener, table, camera, paced=True)
    return _serve(live, args.port)

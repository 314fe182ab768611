"""`companion demo` and `companion serve`: the table page, live."""

from __future__ import annotations

import argparse

from calibration.tablefile import load_table

from . import CommandError, load_camera

DEFAULT_PORT = 8765


def register(sub) -> None:
    p = sub.add_parser("demo", help="run the companion on its built-in synthetic demo table",
                       description="Render a scripted game on a synthetic table and serve the page.")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port to serve on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--fps", type=float, default=15.0, help="frames per second to render (default 15)")
    p.add_argument("--no-game", action="store_true", help="start without the demo's game (set one up on the page)")
    _lan_args(p)
    _game_arg(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("serve", help="serve the table page for a camera, video or folder of images",
                       description="Track the cars of a real table and serve the page on 127.0.0.1.")
    p.add_argument("--source", required=True, help="a camera index (0), a video file, a folder of images, or 'demo'")
    p.add_argument("--table", required=True, help="the table file (TOML)")
    p.add_argument("--camera", help="the camera's calibration (OpenCV YAML); without it the camera is estimated from the anchors")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port to serve on (default {DEFAULT_PORT}; 0 picks a free one)")
    _lan_args(p)
    _game_arg(p)
    p.set_defaults(func=cmd_serve)


def _game_arg(p) -> None:
    p.add_argument("--game", metavar="GAME.db",
                   help="record the game in this file (every event, with the frames its verdicts were measured "
                        "from); if it already holds a game, resume it where its last event left it")


def _lan_args(p) -> None:
    p.add_argument("--lan", action="store_true",
                   help="listen on every network interface, so phones on the same network can join; "
                        "prints the join address and a table PIN (without it, visitors can only watch)")
    p.add_argument("--pin", help="the table PIN for --lan (default: a new random one each time)")


def _lan_address() -> str:
    """This machine's address on the local network (the one a route out would use)."""
    import socket
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))        # no packet is sent: it only picks a route
            return s.getsockname()[0]
        except OSError:
            return "127.0.0.1"


def _open_tray(table):
    """The tray, when the table file's [dice] says so: its link runs on a thread of its own."""
    if table.dice.source != "tray":
        return None, None
    from hardware.link import TrayLink

    from ..tray import TrayDice
    link = TrayLink(table.dice.port, table.dice.baud).start()
    return link, TrayDice(link)


def _serve(live, port: int, *, lan: bool = False, pin: str | None = None, demo_game: bool = False,
           game_file: str | None = None) -> int:
    import secrets

    from waitress import create_server

    from ..game import TableGame
    from ..web import create_app

    store = None
    if game_file:
        from ..store import GameStore, StoreError
        try:
            store = GameStore(game_file)
        except StoreError as exc:
            raise CommandError(str(exc)) from None
    link, tray = _open_tray(live.table)
    game = TableGame(live, tray=tray, seed=live.table.dice.seed, store=store)
    resumed = False
    if store is not None and len(store):
        from ..record import ReplayError
        try:
            game.resume()
        except (ReplayError, StoreError) as exc:
            raise CommandError(f"{game_file}: cannot resume the game: {exc}") from None
        resumed = True
    if tray is not None:
        tray.on_voided = game.void_throw
        tray.on_note = lambda text, event: game.note(f"tray: {text} (event {event.seq})", "warn")
        link.on_status = lambda status, detail: game.note(f"tray {status}: {detail}",
                                                           "warn" if status in ("lost", "gap", "waiting") else "info")
    if lan:
        pin = pin or f"{secrets.randbelow(10 ** 6):06d}"
    elif pin:
        print("--pin only applies with --lan", flush=True)
        pin = None
    app = create_app(game, {"PIN": pin if lan else None})
    host = "0.0.0.0" if lan else "127.0.0.1"
    # Each open page holds one thread for its event stream.
    server = create_server(app, host=host, port=port, threads=32, ident="table-companion")
    address = f"http://{'127.0.0.1' if not lan else _lan_address()}:{server.effective_port}/"
    live.start()
    if demo_game and not resumed:
        _start_demo_game(game)
    print(f"Table companion: {address}", flush=True)
    print(f"  showing {live.description} on {live.table.source}; Ctrl+C stops it", flush=True)
    if store is not None:
        what = f"resumed at event {len(store)}" if resumed else "recording"
        print(f"  game file {game_file}: {what}; the audit page is {address}audit", flush=True)
    if lan:
        print(f"  players on this network join at {address} with the table PIN {pin}", flush=True)
        print("  without the PIN a visitor can watch but not change anything", flush=True)
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        live.stop()
        server.close()
        if link is not None:
            link.stop()
        if store is not None:
            store.close()
    return 0


def _start_demo_game(game) -> None:
    """The demo's game of Shattered Highways, once the camera has seen every car."""
    import time
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(game.live.snapshot()["cars"]) < len(game.table.cars):
        time.sleep(0.05)
    try:
        game.start("shattered_highways", {}, game.starter_rosters())
    except Exception as exc:                      # the page still runs; Setup can start one
        print(f"  (the demo game did not start: {exc})", flush=True)


def cmd_demo(args: argparse.Namespace) -> int:
    from vision.sources import PrefetchSource, SyntheticSource

    from ..live import LiveTable

    source = SyntheticSource(fps=args.fps)
    # The synthetic camera is known exactly, as a calibration file would give it;
    # frames render on a reader thread while the last one is tracked.
    live = LiveTable(PrefetchSource(source), source.table, source.camera)
    return _serve(live, args.port, lan=args.lan, pin=args.pin, demo_game=not args.no_game, game_file=args.game)


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
    return _serve(live, args.port, lan=args.lan, pin=args.pin, game_file=args.game)

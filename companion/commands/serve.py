"""`companion demo` and `companion serve`: the table page, live."""

from __future__ import annotations

import argparse
import errno

from calibration.tablefile import load_table

from ..rules.base import DEFAULT_SYSTEM
from . import CommandError, load_camera

DEFAULT_PORT = 8765
#: The game the demo starts when not told which.
DEMO_RULES = DEFAULT_SYSTEM


def register(sub) -> None:
    p = sub.add_parser("demo", help="run the companion on its built-in synthetic demo table",
                       description="Render a synthetic table as a webcam would see it, track it, and serve the "
                                   "page. The cars stand where the rule system's game begins; players drag and "
                                   "turn them on the page, and the camera follows them as they drive there.")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port to serve on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--fps", type=float, default=15.0, help="frames per second to render (default 15)")
    p.add_argument("--rules", metavar="NAME", default=DEMO_RULES,
                   help=f"the rule system whose game the demo starts, with its starter rosters and its cars "
                        f"where its game begins (`companion rules list` names them; default {DEMO_RULES})")
    p.add_argument("--scripted", action="store_true",
                   help="a scripted convoy drives round the table by itself instead (players cannot move it)")
    p.add_argument("--no-game", action="store_true", help="start without the demo's game (set one up on the page)")
    p.add_argument("--cameras", type=int, default=1, choices=(1, 2, 3),
                   help="how many synthetic cameras watch the table (default 1); with 2 or 3 the table is 6 x 4 ft, "
                        "each camera sees a strip of it, and the page shows what each covers")
    p.add_argument("--projector", action="store_true",
                   help="a synthetic projector hangs over the table (off-centre, tilted): it is calibrated through "
                        "the camera at start, draws what the page draws (open /projector to see its image) and the "
                        "camera sees its light on the table")
    _lan_args(p)
    _game_arg(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("serve", help="serve the table page for a camera, video or folder of images",
                       description="Track the cars of a real table and serve the page on 127.0.0.1.")
    p.add_argument("--source", required=True, action="append",
                   help="a camera index (0), a video file, a folder of images, or 'demo'; give it again for each "
                        "further camera over the same table (each finds its own pose from the anchors it sees)")
    p.add_argument("--table", required=True, help="the table file (TOML)")
    p.add_argument("--camera", action="append",
                   help="the camera's calibration (OpenCV YAML); without it the camera is estimated from the anchors; "
                        "with several --source, one --camera per --source, in the same order")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port to serve on (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--loop", action="store_true",
                   help="play a video file or a folder of images again and again (by default it is played "
                        "once, and the page then says it ended, as it says a camera stopped)")
    p.add_argument("--projector", metavar="FILE",
                   help="the projector's calibration (`companion calibrate projector` makes it); one made on another "
                        "table is refused and the companion starts without the projector, saying why")
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
    p.add_argument("--host-name", action="append", default=[], metavar="NAME",
                   help="with --lan, another name players may open the page at (this machine's own names "
                        "and addresses are known already); other names are refused (DNS rebinding)")


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


def _check_pin(pin: str) -> str:
    from ..web.security import MAX_PIN_CHARS
    pin = pin.strip()
    if not (4 <= len(pin) <= MAX_PIN_CHARS and pin.isascii() and pin.isalnum()):
        raise CommandError(f"--pin {pin!r}: a table PIN is 4 to {MAX_PIN_CHARS} ASCII letters and digits")
    return pin


def _serve(live, port: int, *, lan: bool = False, pin: str | None = None, demo_rules: str | None = None,
           game_file: str | None = None, demo_cars=None, warnings: tuple[str, ...] = (),
           host_names: tuple[str, ...] = (), projector=None, demo_light=None,
           projector_file: str | None = None) -> int:
    """Serve the page for `live`. On the demo: `demo_rules` is the game to start (None: none),
    `demo_cars` the playable cars players move from the page (None: the scripted convoy).
    `warnings` (a camera file scaled to fit, ...) are printed and put on the page's notes.
    `projector`: the companion's ProjectorDisplay (None: one with no calibration);
    `demo_light`: the demo's synthetic projector (DemoLight), calibrated once the camera runs;
    `projector_file`: where a calibration made from Setup is saved (None: beside the table file)."""
    import secrets

    from waitress import create_server

    from ..game import TableGame
    from ..web import API_THREADS, MAX_BODY_BYTES, create_app
    from ..web.security import LOCAL_HOSTS, lan_hosts

    if lan and pin:
        pin = _check_pin(pin)
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
    _ready_game(game, live, warnings, demo_rules)
    if demo_cars is not None:
        game.demo_mover = demo_cars.move
        if resumed:
            _place_as_resumed(game, demo_cars)
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
    config = {"PIN": pin if lan else None, "ALLOWED_HOSTS": lan_hosts(host_names) if lan else LOCAL_HOSTS}
    if projector is not None:
        config["PROJECTOR"] = projector
        # A calibration made from Setup is saved where serve's was read (None: beside the table file).
        config["PROJECTOR_FILE"] = projector_file
    app = create_app(game, config)
    if demo_light is not None:
        demo_light.follow(game)
    app.extensions["host_alarms"].append(lambda text: print(f"  WARNING: {text}", flush=True))
    host = "0.0.0.0" if lan else "127.0.0.1"
    # Each open stream holds a thread while it is open; the API keeps threads of its own.
    try:
        server = create_server(app, host=host, port=port, ident="table-companion",
                               threads=app.config["STREAM_MAX_TOTAL"] + API_THREADS,
                               # Pages beyond the streams poll; each keeps a connection (poll() has no 1024 cap).
                               connection_limit=1000, asyncore_use_poll=True,
                               # A larger body is refused (413) before waitress spools it to disk.
                               max_request_body_size=MAX_BODY_BYTES,
                               # A client that stopped reading is dropped, freeing its stream's thread.
                               channel_timeout=60)
    except OSError as exc:
        # A port already taken (another companion left running) is the usual cause: one line, no traceback.
        if link is not None:
            link.stop()
        if store is not None:
            store.close()
        busy = exc.errno == errno.EADDRINUSE
        raise CommandError(f"port {port} on {host} " + ("is already in use (another companion or program listens "
                                                         "there)" if busy else f"cannot be opened: {exc.strerror or exc}")
                           + f"; stop that program, or choose another port with --port N (--port 0 picks a free "
                             f"one)") from None
    address = f"http://{'127.0.0.1' if not lan else _lan_address()}:{server.effective_port}/"
    live.start()
    if projector is not None:
        from ..web import projector_cal_api
        if demo_light is not None:
            demo_light.calibrate_in_background(game, projector_cal_api.service(app))
        elif projector.model is not None:
            # The check marks thrown once at start: a projector moved since is said.
            projector_cal_api.check_at_start(app)
        # During play its lines are watched in the camera's frames: one knocked later is said too.
        projector_cal_api.watch_lines(app)
    if demo_rules and not resumed:
        _start_demo_game(game, demo_rules)
    print(f"Table companion: {address}", flush=True)
    print(f"  showing {live.description} on {live.table.source}; Ctrl+C stops it", flush=True)
    for text in warnings:
        print(f"  warning: {text}", flush=True)
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
        if "projector_watch" in app.extensions:
            app.extensions["projector_watch"].stop()
        if link is not None:
            link.stop()
        if store is not None:
            store.close()
    return 0


def _ready_game(game, live, warnings, demo_rules: str | None) -> None:
    """The served game before its page opens: the setup warnings on its notes, the demo's
    rules (Setup offers them first if the demo's game does not start), and a camera that
    later loses (or gains) a shared anchor said on its notes too."""
    from ..live import MultiLiveTable

    note_warnings(game, warnings)
    game.demo_rules = demo_rules
    if isinstance(live, MultiLiveTable):
        live.on_note = game.note


def note_warnings(game, warnings) -> None:
    """Put each setup warning (a camera file scaled to fit, ...) on the page's notes."""
    for text in warnings:
        game.note(text, "warn")


def _start_demo_game(game, rules: str) -> None:
    """The demo's game of `rules` with its starter rosters, once the camera has seen every car."""
    import time
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and len(game.live.snapshot()["cars"]) < len(game.table.cars):
        time.sleep(0.05)
    try:
        game.start(rules, {}, game.starter_rosters(rules))
    except Exception as exc:                      # the page still runs; Setup can start one
        print(f"  (the demo game did not start: {exc})", flush=True)
        # Said on the page too, or players see only "no game yet" and never learn why.
        game.note(f"the demo game did not start: {exc}; Setup can start one", "warn")


def _place_as_resumed(game, cars) -> None:
    """A demo game resumed from its file: its cars stand where the game last had them."""
    if game.session is None:
        return
    for marker, piece in game.session.rules.pieces(game.session.state).items():
        pose = piece.pose
        if pose is not None and int(marker) in cars.car_ids:
            cars.place(int(marker), pose.x_mm, pose.y_mm, pose.heading_deg)


def _demo_cars(system, table):
    """The playable demo's cars, standing where `system`'s game begins on the demo table."""
    from vision.playable import PlayableCars

    layout = system.demo_layout([(c.id, c.name, c.length_mm, c.width_mm) for c in table.cars],
                                (table.width_mm, table.depth_mm))
    missing = [c.name for c in table.cars if c.id not in layout]
    if missing:
        raise CommandError(f"{system.name}'s demo layout leaves out {', '.join(missing)}: every car of the demo "
                           f"table needs a place")
    off = [c.name for c in table.cars if not (0 <= layout[c.id][0] <= table.width_mm
                                               and 0 <= layout[c.id][1] <= table.depth_mm)]
    if off:
        raise CommandError(f"{system.name}'s demo layout puts {', '.join(off)} off the "
                           f"{table.width_mm:.0f} x {table.depth_mm:.0f} mm table")
    return PlayableCars({c.id: layout[c.id] for c in table.cars})


def with_scenery(table, system):
    """The demo table with the terrain and gates `system`'s games use (its `demo_scenery`)."""
    import dataclasses

    from calibration.tablefile import TERRAIN_KINDS, GateSpec, TerrainSpec

    scenery = system.demo_scenery((table.width_mm, table.depth_mm))
    if scenery is None:
        return table
    terrain, gates = [], []
    for t in scenery.get("terrain", []):
        if t["kind"] not in TERRAIN_KINDS:
            raise CommandError(f"{system.name}'s demo scenery: '{t['kind']}' is not a kind of terrain "
                               f"(one of {', '.join(TERRAIN_KINDS)})")
        terrain.append(TerrainSpec(t["name"], t["kind"], tuple((float(x), float(y)) for x, y in t["points"])))
    for g in scenery.get("gates", []):
        gates.append(GateSpec(g["name"], g.get("role", ""), tuple(map(float, g["a_mm"])), tuple(map(float, g["b_mm"]))))
    return dataclasses.replace(table, terrain=tuple(terrain), gates=tuple(gates))


def cmd_demo(args: argparse.Namespace) -> int:
    from vision.demo import demo_table
    from vision.sources import SyntheticSource

    from ..live import LiveTable
    from ..rules.base import rule_system

    # A wrong name is said (with the right ones) before anything starts.
    system = rule_system(args.rules)
    if getattr(args, "cameras", 1) > 1:
        return _demo_cameras(args, system)
    table = with_scenery(demo_table(), system)
    cars = None if args.scripted else _demo_cars(system, table)
    source = SyntheticSource(table, fps=args.fps, script=cars)
    light = None
    if getattr(args, "projector", False):
        print("Hanging the synthetic projector over the table (its light is worked out once, a few seconds)...",
              flush=True)
        light = source.projected = DemoLight(source.renderer, table)
    # The synthetic camera is known exactly, as a calibration file would give it;
    # frames render on a reader thread while the last one is tracked. The live table opens
    # the source (and its reader) when it starts: a resumed game first puts the cars back
    # where it left them, so no frame shows them anywhere else.
    live = LiveTable(lambda: source, source.table, source.camera)
    live.description = source.description
    return _serve(live, args.port, lan=args.lan, pin=args.pin, demo_rules=None if args.no_game else args.rules,
                  game_file=args.game, demo_cars=cars, host_names=tuple(args.host_name),
                  projector=light.display if light is not None else None, demo_light=light)


def _demo_cameras(args: argparse.Namespace, system) -> int:
    """The demo on a 6 x 4 ft table through several synthetic 1080p cameras, each over a
    strip of it: the page shows the fused cars and what each camera covers."""
    from vision.demo import DemoScript, big_demo_table
    from vision.multicam import demo_renderers, view_source

    from ..live import MultiLiveTable

    if getattr(args, "projector", False):
        raise CommandError("--projector runs with the demo's one camera: leave out --cameras, or leave out --projector")
    table = with_scenery(big_demo_table(), system)
    cars = None if args.scripted else _demo_cars(system, table)
    script = cars if cars is not None else DemoScript(table)
    renderers = demo_renderers(table, args.cameras)

    def opener(i):
        return lambda: view_source(renderers[i], script, fps=args.fps, name=f"demo camera {i + 1}", seed=i)

    live = MultiLiveTable([opener(i) for i in range(len(renderers))], table, [r.camera for r in renderers],
                          descriptions=[f"demo camera {i + 1}" for i in range(len(renderers))])
    return _serve(live, args.port, lan=args.lan, pin=args.pin, demo_rules=None if args.no_game else args.rules,
                  game_file=args.game, demo_cars=cars, host_names=tuple(args.host_name))


def cmd_serve(args: argparse.Namespace) -> int:
    live, warnings = live_for_serving(args)
    projector, said = served_projector(getattr(args, "projector", None), live.table)
    return _serve(live, args.port, lan=args.lan, pin=args.pin, game_file=args.game, warnings=warnings + said,
                  host_names=tuple(args.host_name), projector=projector,
                  # The file given is the one used: a calibration made from Setup is saved there (one
                  # refused, another table's or damaged, is kept beside it as FILE.old first).
                  projector_file=getattr(args, "projector", None))


def served_projector(path, table):
    """The projector display `serve` runs with, and what to say about it: the calibration
    at `path` (else the one kept beside the table file, if any). One that cannot be used
    (another table's, unreadable) is said, and the companion runs without it."""
    from calibration.projector import ProjectorFileError

    from ..projector import ProjectorDisplay
    from ..projector_cal import load_for, projector_file

    where = projector_file(table, path)
    if where is None or (not path and not where.exists()):
        return ProjectorDisplay(), ()
    try:
        return ProjectorDisplay(load_for(table, where)), ()
    except ProjectorFileError as exc:
        return ProjectorDisplay(), (f"the projector is off: {exc}",)


class DemoLight:
    """The demo's synthetic projector (off-centre, tilted, vision.projector_sim): the
    companion's projector display thrown as light on the table the demo camera renders
    (SyntheticSource's `projected`), so calibration, drawing and the camera seeing the
    drawing run with no hardware. The projector's image is drawn again only when what it
    throws changes; the light's maps are worked out once."""

    def __init__(self, renderer, table) -> None:
        from vision.projector_sim import LightMaps, demo_projector

        from ..projector import ProjectorDisplay

        self.projector = demo_projector(table)
        self.display = ProjectorDisplay()
        # The synthetic projector fixes the size a calibration pattern is drawn in.
        self.display.screen_px = self.projector.size_px
        self.maps = LightMaps(renderer, self.projector)
        self._scene = lambda: []
        self._key = None
        self._json = None
        self._image = None
        self.drawn = 0                      # how many times the projector's image was drawn
        self.failed = None                  # why the scene could not be made, said once
        self._held = _HeldLight(self)

    def follow(self, game) -> None:
        """Throw the scene of `game` (companion/projector_scene.py), as /projector draws it."""
        from ..projector_scene import SceneSource
        self._scene = SceneSource(game).scene

    def __call__(self):
        """(LightMaps, the projector's image) for the next frame, or None when it throws nothing."""
        import json

        from vision.projector_sim import rasterize

        d = self.display
        needed = d.model is not None and not d.showing_pattern and d.mode != "nothing"
        try:
            scene = tuple(self._scene()) if needed else ()
        except Exception as exc:              # a frame without the scene beats no frame at all
            if self.failed is None:
                self.failed = f"{type(exc).__name__}: {exc}"
                print(f"  warning: the demo projector's scene could not be made ({self.failed})", flush=True)
            scene = ()
        key = (d.version, scene)
        if key != self._key:
            shapes = d.frame(list(scene))["shapes"]
            text = json.dumps(shapes)
            if text != self._json:
                self._image = rasterize(shapes, self.projector.size_px) if shapes else None
                self._json = text
                self.drawn += 1
            self._key = key
        return (self._held, self._image) if self._image is not None else None

    def calibrate_in_background(self, game, service=None, wait_s: float = 30.0, **service_args):
        """Calibrate the projector through the camera (companion/projector_cal.py), as Setup's
        button does, once the camera has located the table; what came of it goes on the notes.
        `service`: the app's ProjectorService (so Setup shows it under way); None: one of its own."""
        import threading
        import time

        from ..projector_cal import LiveFrames, ProjectorService

        def run() -> None:
            svc = service if service is not None else ProjectorService(self.display, game.live, **service_args)
            deadline = time.monotonic() + wait_s
            while LiveFrames(game.live).pose_and_cars()[0] is None:
                if time.monotonic() > deadline:
                    game.note("the demo's projector was not calibrated: the camera did not find the table; "
                              "calibrate it from Setup", "warn")
                    return
                time.sleep(0.2)
            if not svc.start("calibrate"):
                return                        # one asked from Setup already runs
            while svc.busy:
                time.sleep(0.2)
            if svc.error or svc.last_result is None:
                game.note(f"the demo's projector was not calibrated: {svc.error}; calibrate it from Setup", "warn")
            else:
                game.note(f"the demo's projector was calibrated through the camera: {svc.last_result.words()}")

        thread = threading.Thread(target=run, name="demo-projector-calibration", daemon=True)
        thread.start()
        return thread


class _HeldLight:
    """The demo projector's light in the camera's view, kept while the projector's image
    and the cars' roofs stay the same: on a still table a frame costs no light worked out
    again (the renderer asks `light(image, roofs)` of what it is given as the maps)."""

    def __init__(self, demo: DemoLight) -> None:
        self.demo = demo
        self._key = None
        self._light = None

    def light(self, thrown, regions=()):
        key = (self.demo.drawn, tuple(regions))
        if key != self._key:
            self._light = self.demo.maps.light(thrown, regions)
            self._key = key
        return self._light


def live_for_serving(args: argparse.Namespace):
    """The live table `serve` shows (not started yet), and the warnings to say
    on the page: (LiveTable, (text, ...))."""
    from ..live import LiveTable
    from .locate import fit_camera_to_source

    table = load_table(args.table)
    sources = [args.source] if isinstance(args.source, str) else list(args.source)
    cameras = [args.camera] if isinstance(args.camera, str) else list(args.camera or [])
    if len(sources) > 1 or len(cameras) > 1:
        return _multi_live_for_serving(args, table, sources, cameras)
    camera = load_camera(cameras[0] if cameras else None)
    args.source = sources[0]
    # Open it once now, so a wrong path or a missing camera is said at once, and
    # its first frame tells whether the camera file fits the frames.
    source = open_source_for_serving(args.source, table, loop=args.loop)
    source, camera, note = fit_camera_to_source(source, camera)
    if _plays_once(source):
        # A video or a folder of images is played once: when it ends the page
        # says so ("ended"), as it says a camera stopped, and the game goes on.
        from vision.sources import PrefetchSource
        live = LiveTable(PrefetchSource(source), table, camera, paced=True)
    else:
        # A camera (or the demo's synthetic table) that stops is opened again
        # with back-off; so is a looped file that fails.
        first = [source]

        def opener():
            return first.pop() if first else open_source_for_serving(args.source, table, loop=args.loop)

        live = LiveTable(opener, table, camera, paced=True)
    return live, ((note,) if note else ())


def _multi_live_for_serving(args: argparse.Namespace, table, sources: list[str], cameras: list[str]):
    """Several cameras over one table: each --source with its --camera, in order. Refuses the
    same source or camera file given twice, and --camera files that do not pair with the sources."""
    from pathlib import Path

    from calibration.camera import CameraFileError
    from vision.multicam import MultiCameraError
    from vision.sources import PeekedSource, PrefetchSource, SourceError

    from ..live import MultiLiveTable
    from .locate import fit_camera_to_source

    names = [f"camera {i + 1}" for i in range(len(sources))]
    if cameras and len(cameras) != len(sources):
        raise CommandError(f"{len(cameras)} --camera for {len(sources)} --source: give one --camera per --source, "
                           f"in the same order (--source A --camera a.yml --source B --camera b.yml), or none to "
                           f"estimate every camera from its anchors")

    def key(spec: str) -> str:
        spec = spec.strip()
        return f"camera index {int(spec)}" if spec.isdigit() else spec if spec == "demo" else str(Path(spec).resolve())

    for i, spec in enumerate(sources):
        for j in range(i):
            if key(spec) == key(sources[j]):
                raise CommandError(f"--source {spec} is given twice ({names[j]} and {names[i]}): two views of one "
                                   f"camera are not two cameras; give each camera once, each with its own --camera")
    for i, path in enumerate(cameras):
        for j in range(i):
            if Path(path).resolve() == Path(cameras[j]).resolve():
                raise CommandError(f"{names[j]} and {names[i]} are given the same camera file {path}: each camera "
                                   f"needs its own calibration; calibrate each (companion calibrate camera --source N "
                                   f"--out cameraN.yml) and give its file after its --source")
    models = [load_camera(c) for c in cameras] or [None] * len(sources)
    feeds, fitted, notes, opened, descriptions, firsts = [], [], [], [], [], []
    try:
        for name, spec, model in zip(names, sources, models):
            try:
                source = open_source_for_serving(spec, table, loop=args.loop)
                opened.append(source)
                source, model, note = fit_camera_to_source(source, model)
                if not isinstance(source, PeekedSource):
                    source = PeekedSource(source)     # its first frame says which anchors it sees
                opened.append(source)
            except (CameraFileError, SourceError) as exc:
                raise CommandError(f"{name} (--source {spec}): {exc}") from None
            if note:
                notes.append(f"{name}: {note}")
            # The frame read ahead (PeekedSource keeps it for the first read).
            firsts.append(source._first.image if source._first is not None else None)
            fitted.append(model)
            descriptions.append(source.description)
            if _plays_once(source):
                feeds.append(PrefetchSource(source))
                opened.append(feeds[-1])
            else:
                feeds.append(_reopener(source, spec, table, args.loop))
        try:
            live = MultiLiveTable(feeds, table, fitted, names=names, paced=True, descriptions=descriptions)
        except MultiCameraError as exc:
            raise CommandError(str(exc)) from None
    except BaseException:
        # Every source opened so far (and its reader thread) is closed before the refusal
        # leaves: a reader still running as the process exits aborts it ("terminate called").
        for s in reversed(opened):
            try:
                s.close()
            except Exception:
                pass
        raise
    alone, warning = _no_shared_anchor(table, names, firsts)
    live.anchor_watch.said = alone          # said at start: the live table says only changes
    return live, tuple(notes) + warning


def _no_shared_anchor(table, names: list[str], images: list) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """The cameras whose first frames share no anchor with any other camera's (as `doctor`
    says it), and the warning: without an anchor both see, their positions can disagree
    where a car crosses. Nothing when a camera gave no frame yet (the live table's
    SharedAnchorWatch says it once it runs, and says any later change)."""
    from vision.detect import MarkerDetector
    from vision.multicam import unshared_anchors

    if any(image is None for image in images):
        return (), ()
    detector = MarkerDetector(table.dictionary)
    anchors = set(table.anchor_ids)
    seen = [sorted({d.id for d in detector.detect(image)} & anchors) for image in images]
    alone, warning = unshared_anchors(names, seen)
    return alone, ((warning,) if warning else ())


def _reopener(first_source, spec: str, table, loop: bool):
    """A function that gives the source opened already, then opens it again."""
    first = [first_source]

    def opener():
        return first.pop() if first else open_source_for_serving(spec, table, loop=loop)
    return opener


def open_source_for_serving(spec: str, table, *, loop: bool = False):
    """The source `serve` plays: as open_source opens it, a video file or a folder
    of images looped when `loop` says so. A camera's or video's Motion-JPEG frames are
    decoded straight to grey, their colour only when a page or the evidence asks
    (vision.sources.JpegGray): at 4K that is a third of a core, and 20-60 ms of every
    frame's way to the page (docs/benchmarks.md, "The page at 4K")."""
    from vision.sources import ImageFolderSource, LoopingSource, VideoSource, open_source

    source = open_source(spec, table, lazy_colour=True)
    if loop and isinstance(source, (VideoSource, ImageFolderSource)):
        return LoopingSource(source, lambda: open_source(spec, table, lazy_colour=True))
    return source


def _plays_once(source) -> bool:
    """True for a video file or a folder of images that is not looped."""
    from vision.sources import ImageFolderSource, PeekedSource, VideoSource

    inner = source.inner if isinstance(source, PeekedSource) else source
    return isinstance(inner, (VideoSource, ImageFolderSource))

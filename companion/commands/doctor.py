"""`companion doctor`: a table checked end to end before a game, each check said as
OK, WARN or FAIL with what to fix: the table file, the camera (it opens, frames come,
their size, the camera file fits), the anchors (how many seen, each where the table
file puts it), the cars' markers (each seen or why not, big and sharp enough) and the
dice (a virtual roll, typed dice, or a tray that opens and says HELLO)."""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass

from calibration.camera import CameraFileError
from calibration.tablefile import TableFileError, load_table
from vision.sources import SourceError

from . import CommandError, load_camera

OK, WARN, FAIL = "OK", "WARN", "FAIL"

#: Frames looked at: enough for the tracker to settle and for a car driven past a hand.
DEFAULT_FRAMES = 10
#: How long a tray has to say HELLO once its port is open (it says it on connect and when asked).
DEFAULT_HELLO_S = 3.0


@dataclass(frozen=True)
class Check:
    status: str             # OK, WARN or FAIL
    what: str               # "camera", "anchors", "car 10 (Interceptor)", ...
    said: str               # what was found
    fix: str = ""           # what to do about it (empty when nothing)

    def line(self) -> str:
        return f"{self.status:<4}  {self.what}: {self.said}" + (f"\n      fix: {self.fix}" if self.fix else "")


def register(sub) -> None:
    p = sub.add_parser("doctor", help="check a table end to end: table file, camera, anchors, markers, dice",
                       description="Check a table before a game and say what to fix: the table file parses, the "
                                   "camera opens and gives frames (and the camera file fits them), the anchors are "
                                   "seen where the table file puts them, each car's marker is seen, big and sharp "
                                   "enough, and the dice source answers. Each check is printed as OK, WARN or FAIL; "
                                   "the exit status is 0 when nothing FAILs. `companion doctor --source demo` checks "
                                   "the built-in demo table.")
    p.add_argument("--source", required=True,
                   help="a camera index (0), a video file, a folder of images, an image, or 'demo'")
    p.add_argument("--table", help="the table file (TOML); with --source demo, the built-in demo table by default")
    p.add_argument("--camera", help="the camera's calibration (OpenCV YAML); without it the lens is estimated "
                                    "from the anchors")
    p.add_argument("--dice", metavar="PORT",
                   help="check the dice tray on this port (a device or pyserial URL) instead of the table "
                        "file's [dice]")
    p.add_argument("--frames", type=int, default=DEFAULT_FRAMES,
                   help=f"how many frames to look at (default {DEFAULT_FRAMES})")
    p.add_argument("--hello-seconds", type=float, default=DEFAULT_HELLO_S,
                   help=f"how long to wait for the tray's HELLO (default {DEFAULT_HELLO_S:g})")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    if args.frames < 1:
        raise CommandError(f"--frames must be 1 or more, not {args.frames}")
    failed = False
    for check in run_checks(args):
        print(check.line(), flush=True)
        failed |= check.status == FAIL
    print("doctor: " + ("something FAILed: fix it before playing" if failed else "nothing failed"), flush=True)
    return 1 if failed else 0


def run_checks(args: argparse.Namespace):
    """The checks in order, each as soon as it is made; a check the others need (the
    table file, the camera) that fails ends the camera's part, not the dice's."""
    table = yield from _table_check(args)
    if table is None:
        return
    yield from _camera_checks(args, table)
    yield from _dice_checks(args, table)


# --- the table file --------------------------------------------------------------------------

def _table_check(args):
    if args.table is None:
        if args.source.strip() != "demo":
            yield Check(FAIL, "table file", "none given", "say which with --table T.toml "
                                                          "(examples/table.toml is one to copy)")
            return None
        from vision.demo import demo_table
        table = demo_table()
    else:
        try:
            table = load_table(args.table)
        except TableFileError as exc:
            yield Check(FAIL, "table file", str(exc), "correct the file where the message points")
            return None
    yield Check(OK, "table file", f"{table.source}: {table.width_mm:g} x {table.depth_mm:g} mm, "
                                  f"{len(table.anchors)} anchors, {len(table.cars)} cars, {table.dictionary}")
    if len(table.anchors) < 3:
        yield Check(WARN, "table file", f"only {len(table.anchors)} anchors",
                    "lay at least 3 (4 or more, spread to the corners, keeps the table found when a hand "
                    "covers one) and add each as an [[anchor]]")
    return table


# --- the camera, the anchors and the markers ------------------------------------------------

def _camera_checks(args, table):
    from vision.locate import frame_checks
    from vision.pipeline import TablePipeline
    from vision.sources import SyntheticSource, open_source

    from .locate import fit_camera_to_source

    camera = None
    if args.camera:
        try:
            camera = load_camera(args.camera)
        except CameraFileError as exc:
            yield Check(FAIL, "camera file", str(exc), "give the file `companion calibrate camera` wrote")
            return
    try:
        if args.source.strip() == "demo":
            source = SyntheticSource(table, paced=False)
            camera = camera or source.camera       # the synthetic camera is known exactly
        else:
            source = open_source(args.source, table)
    except SourceError as exc:
        yield Check(FAIL, "camera", str(exc), _source_fix(args.source))
        return
    try:
        source, camera, note = fit_camera_to_source(source, camera)
    except CameraFileError as exc:
        source.close()
        yield Check(FAIL, "camera file", str(exc), "calibrate at the resolution you play at "
                                                     "(`companion calibrate camera --source ...`)")
        return
    pipeline = TablePipeline(table, camera, full_scan_every=1)
    frames = 0
    last = image = None
    started = time.monotonic()
    try:
        with source:
            for frame in source:
                last = pipeline.process(frame.image, frame.index, frame.time_s, gray=frame.gray)
                image = frame.image
                frames += 1
                if frames >= args.frames:
                    break
    except SourceError as exc:
        yield Check(FAIL, "camera", f"{source.description if hasattr(source, 'description') else args.source}: "
                                    f"{exc}", _source_fix(args.source))
        return
    if last is None:
        yield Check(FAIL, "camera", f"{args.source} opened but gave no frame",
                    "check the camera is not in use by another program, or that the file holds frames")
        return
    h, w = image.shape[:2]
    took = time.monotonic() - started
    yield Check(OK, "camera", f"{args.source}: {frames} frame(s) of {w} x {h} px in {took:.1f} s")
    if camera is None:
        yield Check(WARN, "camera file", "none given: the lens is estimated from the anchors (positions are "
                                         "less certain, much less where the camera looks straight down)",
                    "calibrate once: `companion calibrate camera --source ... --out camera.yml`, then --camera")
    elif note:
        yield Check(WARN, "camera file", note, "calibrate at the resolution you play at to be sure")
    else:
        yield Check(OK, "camera file", f"{getattr(camera, 'source', args.camera or 'the synthetic camera')} fits "
                                       f"{w} x {h} px frames")
    located = last.located
    quality, setup = frame_checks(image, located, table, camera)
    yield from _anchor_checks(table, located, setup)
    yield from _marker_checks(table, last, quality)


def _source_fix(spec: str) -> str:
    text = str(spec).strip()
    if text.isdigit():
        return (f"plug the camera in (or close the program using it), or try another index "
                f"(--source {int(text) + 1}); on Linux `ls /dev/video*` lists the cameras")
    return "give a camera index (0 is the first), a video, a folder of images, or 'demo'"


def _anchor_checks(table, located, setup):
    want = sorted(a.id for a in table.anchors)
    seen = sorted(set(located.anchors))
    unseen = [i for i in want if i not in seen]
    if located.table_pose is None:
        yield Check(FAIL, "anchors", f"the table is not found: {len(seen)} of {len(want)} anchors seen"
                                     + (f" ({', '.join(map(str, seen))})" if seen else "")
                                     + (f"; {located.error}" if getattr(located, "error", None) else ""),
                    "put the camera where it sees the anchors (at least 3), uncovered and lit; check the "
                    "table file's dictionary matches the printed markers")
        return
    said = f"{len(seen)} of {len(want)} seen" + (f"; not seen: {', '.join(map(str, unseen))}" if unseen else "")
    yield Check(WARN if unseen else OK, "anchors", said,
                "uncover or bring into view the anchors not seen (the pose is surer with all)" if unseen else "")
    if setup is None:
        return
    warnings = list(setup.get("warnings", []))
    for w in warnings:
        yield Check(WARN, "setup", w)       # each warning already says what to do
    if not warnings:
        worst = max((a["off_mm"] for a in setup.get("anchors", [])), default=None)
        said = "each anchor is where the table file puts it"
        if worst is not None:
            said += f" (within {worst:.1f} mm)"
        if "camera_fit" in setup:
            said += "; the camera file fits the anchors"
        yield Check(OK, "setup", said)


def _marker_checks(table, tracked, quality):
    poses = {c.id: c for c in tracked.cars}
    why = tracked.missing_why
    for car in table.cars:
        name = f"car {car.id} ({car.name})" if car.name else f"car {car.id}"
        c = poses.get(car.id)
        if c is not None and not c.stale:
            yield Check(OK, name, f"seen at ({c.x_mm:.0f}, {c.y_mm:.0f}) mm, heading {round(c.heading_deg) or 0}°")
        elif c is not None:
            yield Check(WARN, name, "seen earlier, not in the last frame",
                        "check its roof marker is uncovered and in view")
        else:
            yield Check(WARN, name, why.get(car.id, "not seen"),
                        f"put it on the table with its roof marker ({car.marker_mm:g} mm, id {car.id}) in view, "
                        f"or leave it out of the table file")
    verdict = quality.get("verdict")
    sides = quality.get("marker_side_px")
    size = f"markers {sides['min']:.0f} px across at the smallest" if sides else "no marker to measure"
    blur = quality.get("edge_blur_px")
    said = size + (f", edge blur {blur:.1f} px" if blur is not None else "")
    advice = "; ".join(quality.get("advice", []))
    if verdict == "ok":
        yield Check(OK, "marker size and sharpness", said)
    elif verdict == "poor":
        yield Check(FAIL, "marker size and sharpness", said, advice or "bigger markers, a lower camera or focus")
    else:
        yield Check(WARN, "marker size and sharpness", f"{said} ({verdict})",
                    advice or "bigger markers, a lower camera or focus")


# --- the dice ---------------------------------------------------------------------------------

def _dice_checks(args, table):
    port = args.dice or (table.dice.port if table.dice.source == "tray" else None)
    if port is None:
        said = {"virtual": "a virtual roll (seeded, recorded)", "typed": "typed in on the page"}.get(
            table.dice.source, table.dice.source)
        yield Check(OK, "dice", said)
        return
    yield from check_tray(port, table.dice.baud, args.hello_seconds)


def check_tray(port: str, baud: int, hello_s: float):
    """The tray's port opens (a device or a pyserial URL), and the tray says HELLO on it."""
    import serial

    from hardware.link import TrayLink

    try:
        probe = serial.serial_for_url(port, baudrate=baud, timeout=0.1)
    except (serial.SerialException, OSError, ValueError) as exc:
        yield Check(FAIL, "dice tray", f"{port} does not open: {exc}",
                    "plug the tray in and give its port (`ls /dev/ttyACM* /dev/ttyUSB*` on Linux), "
                    "or [dice] source = \"virtual\" or \"typed\" in the table file")
        return
    probe.close()
    link = TrayLink(port, baud, backoff_s=(0.2,)).start()
    try:
        deadline = time.monotonic() + hello_s
        while link.tray is None and time.monotonic() < deadline:
            time.sleep(0.05)
        tray, proto = link.tray, link.proto
    finally:
        link.stop()
    if tray is None:
        yield Check(FAIL, "dice tray", f"{port} opens but no HELLO came in {hello_s:g} s",
                    f"check it is the dice tray's port, at {baud} baud, and that the tray is powered")
        return
    yield Check(OK, "dice tray", f"{port}: HELLO from '{tray}' (protocol {proto})")


"""`companion doctor`: a table checked end to end before a game, each check said as
OK, WARN or FAIL with what to fix: the table file, the camera (it opens, frames come,
their size, the camera file fits), the anchors (how many seen, each where the table
file puts it), the cars' markers (each seen or why not, big and sharp enough) and the
dice (a virtual roll, typed dice, or a tray that opens and says HELLO).

From the table's pose it also says, for each car, how big its roof marker looks where it
stands and at the worst place the camera covers, with the choices that would make it big
enough (a bigger marker, a camera of more pixels, a lower or a second camera), and what the
camera covers of the table.  With several `--source X --camera Y` pairs, each camera is
checked on its own, then together: their overlap, the anchors each and all see, and the
parts of the table none covers."""

from __future__ import annotations

import argparse
import math
import os
import time
from dataclasses import dataclass, replace

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
    p.add_argument("--source", required=True, action="append",
                   help="a camera index (0), a video file, a folder of images, an image, or 'demo'; "
                        "give it again for each camera over the table (each with its own --camera)")
    p.add_argument("--table", help="the table file (TOML); with --source demo, the built-in demo table by default")
    p.add_argument("--camera", action="append",
                   help="the camera's calibration (OpenCV YAML); without it the lens is estimated from the "
                        "anchors. With several --source, the first --camera is the first source's, and so on")
    p.add_argument("--dice", metavar="PORT",
                   help="check the dice tray on this port (a device or pyserial URL) instead of the table "
                        "file's [dice]")
    p.add_argument("--frames", type=int, default=DEFAULT_FRAMES,
                   help=f"how many frames to look at (default {DEFAULT_FRAMES})")
    p.add_argument("--projector", metavar="FILE",
                   help="the projector's calibration to check (default: projector.json beside the table file, "
                        "when there is one); with --source demo its check marks are thrown by the demo's "
                        "synthetic projector and measured")
    p.add_argument("--hello-seconds", type=float, default=DEFAULT_HELLO_S,
                   help=f"how long to wait for the tray's HELLO (default {DEFAULT_HELLO_S:g})")
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    if args.frames < 1:
        raise CommandError(f"--frames must be 1 or more, not {args.frames}")
    camera_pairs(args)                      # refuses a camera given twice before anything opens
    failed = False
    for check in run_checks(args):
        print(check.line(), flush=True)
        failed |= check.status == FAIL
    print("doctor: " + ("something FAILed: fix it before playing" if failed else "nothing failed"), flush=True)
    return 1 if failed else 0


def run_checks(args: argparse.Namespace):
    """The checks in order, each as soon as it is made; a check the others need (the
    table file, the camera) that fails ends the camera's part, not the dice's."""
    pairs = camera_pairs(args)
    table = yield from _table_check(args, pairs[0][0])
    if table is None:
        return
    if len(pairs) == 1:
        seen = yield from _camera_checks(args, table, *pairs[0])
        if seen is not None and seen.pose is not None:
            yield from _reach_checks(table, [seen])
            yield from _coverage_checks(table, [seen])
    else:
        views = []
        for n, (source, camera) in enumerate(pairs, 1):
            seen = yield from _labelled(_camera_checks(args, table, source, camera, per_car=False), n)
            views.append(seen)
        yield from _cameras_together(table, views)
        seen = views[0]
    yield from _projector_checks(args, table, seen)
    yield from _dice_checks(args, table)


def camera_pairs(args) -> list[tuple[str, str | None]]:
    """The (source, camera file) pairs in the order given: each --camera goes with the
    --source in its place. Refused: more camera files than sources, one source given
    twice, one camera file given for two cameras (each camera has its own lens and
    pose, so one file cannot describe two)."""
    sources = [args.source] if isinstance(args.source, str) else list(args.source)
    cameras = ([args.camera] if isinstance(args.camera, str) else list(args.camera or []))
    if len(cameras) > len(sources):
        raise CommandError(f"{len(cameras)} --camera files for {len(sources)} --source: give one --camera "
                           f"after each --source it belongs to")
    pairs = [(s, cameras[k] if k < len(cameras) else None) for k, s in enumerate(sources)]
    seen: dict[str, int] = {}
    for n, (source, _) in enumerate(pairs, 1):
        key = _same_thing(source)
        if key in seen:
            raise CommandError(f"--source {source} is given for camera {seen[key]} and camera {n}: each camera "
                               f"over the table is its own --source (another index, video or image)")
        seen[key] = n
    files: dict[str, int] = {}
    for n, (_, camera) in enumerate(pairs, 1):
        if camera is None:
            continue
        key = _same_thing(camera)
        if key in files:
            raise CommandError(f"the camera file {camera} is given for camera {files[key]} and camera {n}: each "
                               f"camera needs its own calibration (`companion calibrate camera --source ...` for "
                               f"each), or leave out --camera for one to have its lens estimated")
        files[key] = n
    return pairs


def _same_thing(spec: str) -> str:
    """A source or file as one key: a camera index as its number, a path as the file it names."""
    text = str(spec).strip()
    if text.isdigit():
        return f"index {int(text)}"
    if text == "demo":
        return text
    return os.path.realpath(text)


def _labelled(checks, n: int):
    """The checks of camera `n` among several, each named for it ("anchors (camera 2)");
    returns what the checks return."""
    while True:
        try:
            check = next(checks)
        except StopIteration as stop:
            return stop.value
        what = f"camera {n}" if check.what == "camera" else f"{check.what} (camera {n})"
        yield replace(check, what=what)


# --- the table file --------------------------------------------------------------------------

def _table_check(args, source: str):
    if args.table is None:
        if source.strip() != "demo":
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

@dataclass(frozen=True, eq=False)
class CameraSeen:
    """What one camera showed: its table pose (None when the table was not found),
    its last frame's cars and anchors, and its frames' size."""

    source: str
    pose: object
    tracked: object
    image_size: tuple[int, int]


def _camera_checks(args, table, source_spec: str, camera_path: str | None, per_car: bool = True):
    """The camera's checks; returns what it saw (CameraSeen), or None when it gave no frame."""
    from vision.locate import frame_checks
    from vision.pipeline import TablePipeline
    from vision.sources import SyntheticSource, open_source

    from .locate import fit_camera_to_source

    camera = None
    if camera_path:
        try:
            camera = load_camera(camera_path)
        except CameraFileError as exc:
            yield Check(FAIL, "camera file", str(exc), "give the file `companion calibrate camera` wrote")
            return
    try:
        if source_spec.strip() == "demo":
            source = SyntheticSource(table, paced=False)
            camera = camera or source.camera       # the synthetic camera is known exactly
        else:
            source = open_source(source_spec, table)
    except SourceError as exc:
        yield Check(FAIL, "camera", str(exc), _source_fix(source_spec))
        return None
    try:
        source, camera, note = fit_camera_to_source(source, camera)
    except CameraFileError as exc:
        source.close()
        yield Check(FAIL, "camera file", str(exc), "calibrate at the resolution you play at "
                                                     "(`companion calibrate camera --source ...`)")
        return None
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
        yield Check(FAIL, "camera", f"{source.description if hasattr(source, 'description') else source_spec}: "
                                    f"{exc}", _source_fix(source_spec))
        return None
    if last is None:
        yield Check(FAIL, "camera", f"{source_spec} opened but gave no frame",
                    "check the camera is not in use by another program, or that the file holds frames")
        return None
    h, w = image.shape[:2]
    took = time.monotonic() - started
    yield Check(OK, "camera", f"{source_spec}: {frames} frame(s) of {w} x {h} px in {took:.1f} s")
    if camera is None:
        yield Check(WARN, "camera file", "none given: the lens is estimated from the anchors (positions are "
                                         "less certain, much less where the camera looks straight down)",
                    "calibrate once: `companion calibrate camera --source ... --out camera.yml`, then --camera")
    elif note:
        yield Check(WARN, "camera file", note, "calibrate at the resolution you play at to be sure")
    else:
        yield Check(OK, "camera file", f"{getattr(camera, 'source', camera_path or 'the synthetic camera')} fits "
                                       f"{w} x {h} px frames")
    located = last.located
    quality, setup = frame_checks(image, located, table, camera)
    in_view = None
    if not per_car and located.table_pose is not None:
        from vision.coverage import anchors_in_view
        in_view = set(anchors_in_view(located.table_pose, table, (w, h)))
    yield from _anchor_checks(table, located, setup, in_view)
    yield from _marker_checks(table, last, quality, per_car)
    return CameraSeen(source_spec, located.table_pose, last, (w, h))


def _source_fix(spec: str) -> str:
    text = str(spec).strip()
    if text.isdigit():
        return (f"plug the camera in (or close the program using it), or try another index "
                f"(--source {int(text) + 1}); on Linux `ls /dev/video*` lists the cameras")
    return "give a camera index (0 is the first), a video, a folder of images, or 'demo'"


def _anchor_checks(table, located, setup, in_view: set | None = None):
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
    if in_view is None:
        said = f"{len(seen)} of {len(want)} seen" + (f"; not seen: {', '.join(map(str, unseen))}" if unseen else "")
        fix = "uncover or bring into view the anchors not seen (the pose is surer with all)"
    else:
        # One of several cameras: the anchors outside its view are the others' to see.
        unseen = sorted(i for i in in_view if i not in seen)
        said = (f"{len(seen)} of {len(want)} seen, {len(in_view)} in its view"
                + (f"; in its view but not seen: {', '.join(map(str, unseen))}" if unseen else ""))
        fix = "uncover the anchors in its view but not seen (the pose is surer with all)"
    yield Check(WARN if unseen else OK, "anchors", said, fix if unseen else "")
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


def _marker_checks(table, tracked, quality, per_car: bool = True):
    poses = {c.id: c for c in tracked.cars}
    why = tracked.missing_why
    for car in table.cars if per_car else ():
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


# --- each car's marker across the table, and what the cameras cover --------------------------

#: Webcam resolutions offered as a fix, by shape: the next one up that is big enough.
RESOLUTIONS = ((1280, 720), (1920, 1080), (2560, 1440), (3840, 2160),
               (640, 480), (1280, 960), (1600, 1200), (2048, 1536), (2592, 1944), (4000, 3000))
#: Two cameras over one table overlap by about this much (mm) so a car crossing is seen by both.
SECOND_CAMERA_OVERLAP_MM = 100.0
#: A roof sticker keeps a white margin of at least this much (mm) each side of the marker.
STICKER_MARGIN_MM = 2.0


def _car_name(car) -> str:
    return f"car {car.id} ({car.name})" if car.name else f"car {car.id}"


def _reach_checks(table, views: list):
    """For each car: its roof marker's size (px) where it stands and at the worst place the
    cameras cover, judged against what the detector reads well (vision.quality), with the
    choices that would make it big enough."""
    from vision.coverage import marker_side_px, smallest_marker_px
    from vision.quality import SIDE_OK_PX, SIDE_POOR_PX

    usable = [v for v in views if v is not None and v.pose is not None]
    if not usable:
        return
    poses = [v.pose for v in usable]
    sizes = [v.image_size for v in usable]
    for car in table.cars:
        name = _car_name(car)
        spot = smallest_marker_px(poses, table, car, sizes)
        if spot is None:
            yield Check(FAIL, f"marker size, {name}", "no camera sees the table at its roof's height",
                        "put the camera above the table, looking down at it")
            continue
        here = None
        for v in usable:
            c = next((c for c in v.tracked.cars if c.id == car.id and not c.stale), None)
            if c is not None:
                side = marker_side_px(v.pose, c.x_mm, c.y_mm, car.roof_mm, car.marker_mm)
                here = side if here is None else max(here, side)
        worst = min(spot.side_px, here) if here is not None else spot.side_px
        where = (f"{here:.1f} px where it stands" if here is not None else "not seen now")
        said = (f"its {car.marker_mm:g} mm marker is {where}, {spot.side_px:.1f} px at the worst place "
                f"{'the cameras cover' if len(usable) > 1 else 'the camera covers'} ({spot.place})")
        if worst >= SIDE_OK_PX:
            yield Check(OK, f"marker size, {name}", said)
            continue
        said += f"; {SIDE_OK_PX:.0f} px or more reads reliably"
        status = FAIL if worst < SIDE_POOR_PX else WARN
        if status == WARN:
            said += ", under it a car is lost when the picture is not sharp"
        yield Check(status, f"marker size, {name}", said, _size_fix(table, car, worst, spot, usable))


def _size_fix(table, car, worst: float, spot, usable: list) -> str:
    """The choices, each with its numbers, that bring `worst` (px) up to SIDE_OK_PX."""
    from vision.quality import SIDE_OK_PX

    choices, note = [], ""
    roof = min(car.width_mm, car.length_mm)
    fits = roof - 2 * STICKER_MARGIN_MM           # the biggest marker its roof holds

    def marker_for(px: float) -> int:
        return math.ceil(car.marker_mm * SIDE_OK_PX / px)

    mm = marker_for(worst)
    if mm <= fits:
        choices.append(f"{mm} mm markers ({worst:.1f} px -> {worst * mm / car.marker_mm:.1f} px)")
    else:
        note = (f" (no marker big enough fits its {roof:.0f} mm roof: {mm} mm would be needed, and it holds "
                f"{math.floor(fits)} mm with a {STICKER_MARGIN_MM:g} mm margin)")
    w, h = min((v.image_size for v in usable), key=lambda s: s[0] * s[1])
    bigger = [r for r in RESOLUTIONS if abs(r[0] / r[1] - w / h) < 0.02 and r[0] * worst / w >= SIDE_OK_PX]
    if bigger:
        r = min(bigger)
        kind = "a " if len(usable) == 1 else ""
        kind = f"{kind}{r[0]} x {r[1]} camera" + ("" if len(usable) == 1 else "s")
        choices.append(f"{kind} with the same field of view ({worst:.1f} px -> "
                       f"{worst * r[0] / w:.1f} px)")
    def short(px: float) -> str:
        """What else it takes when a choice alone falls short of SIDE_OK_PX."""
        if px >= SIDE_OK_PX:
            return ""
        both = marker_for(px)
        return f"; with {both} mm markers, {px * both / car.marker_mm:.1f} px" if both <= fits else ", still short"

    if len(usable) == 1:
        lower = _lower_camera(table, car, usable[0])
        if lower is not None and lower[1] > worst * 1.05:
            height, px = lower
            choices.append(f"the camera lower, {usable[0].pose.camera_height_mm / 1000:.2f} m -> {height / 1000:.2f} m "
                           f"above the table ({worst:.1f} px -> {px:.1f} px"
                           + (", the lowest that still sees the whole table" if px < SIDE_OK_PX else "")
                           + short(px) + ")")
        gain, turned = _second_camera_gain(table, (w, h))
        if gain > 1.05:
            two = worst * gain
            text = ("a second camera, the two over one half of the table each"
                    + (", turned so the picture's long side runs from the near edge to the far" if turned else "")
                    + f" ({worst:.1f} px -> about {two:.1f} px")
            choices.append(text + short(two) + ")")
    else:
        choices.append(f"another camera over {spot.place}")
    if not choices:
        return "bigger markers, a camera of more pixels, or the camera lower" + note
    if len(choices) == 1:
        return choices[0] + note
    return ", ".join(choices[:-1]) + ", or " + choices[-1] + note


def _lower_camera(table, car, seen) -> tuple[float, float] | None:
    """How far the camera can come down its line of sight and still see the whole table
    (each corner, at the car's roof height), and the car's worst size there: (height mm,
    px), coming down no further than makes it big enough; None when the camera does not
    see the whole table now."""
    import numpy as np

    from calibration.table_pose import TablePose
    from vision.coverage import smallest_marker_px
    from vision.quality import SIDE_OK_PX

    w, h = seen.image_size
    corners = np.array([(x, y, car.roof_mm) for x in (0.0, table.width_mm) for y in (0.0, table.depth_mm)])

    def moved(step):
        # Moving the camera `step` mm along its own axis changes only tvec's z.
        return TablePose(seen.pose.camera, seen.pose.rvec, seen.pose.tvec - [0.0, 0.0, step], (), 0.0, 0.0)

    def sees_all(pose) -> bool:
        depth = (corners @ pose.rotation.T + pose.tvec)[:, 2]
        px = pose.image_from_table(corners)
        return bool(np.all(depth > 0) and np.all((px >= 0) & (px <= [w - 1, h - 1])))

    def worst(step) -> float:
        spot = smallest_marker_px(moved(step), table, car, (w, h))
        return spot.side_px if spot is not None else 0.0

    if not sees_all(seen.pose):
        return None
    lo, hi = 0.0, float(seen.pose.tvec[2]) * 0.95
    for _ in range(25):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if sees_all(moved(mid)) else (lo, mid)
    if worst(lo) > SIDE_OK_PX:
        # Lower than needed: come down only until the marker is big enough (to 1 cm).
        a, b = 0.0, lo
        while b - a > 10.0:
            mid = (a + b) / 2
            a, b = (a, mid) if worst(mid) >= SIDE_OK_PX else (mid, b)
        lo = b
    return moved(lo).camera_height_mm, worst(lo)


def _second_camera_gain(table, size: tuple[int, int]) -> tuple[float, bool]:
    """How many times bigger a marker looks with two such cameras each over one half of
    the table (plus an overlap) than with one over all of it, each turned the way that
    fits its part best; and whether the two are turned a quarter from the table's long side."""
    a, b = max(size), min(size)
    long_side, short_side = max(table.width_mm, table.depth_mm), min(table.width_mm, table.depth_mm)
    one = min(a / long_side, b / short_side)
    half = long_side / 2 + SECOND_CAMERA_OVERLAP_MM
    two = min(a / max(half, short_side), b / min(half, short_side))
    turned = short_side > half
    return two / one, turned


def _coverage_checks(table, views: list):
    """One camera: the share of the table it sees and the anchors in view; each part of
    the table it misses, named."""
    from vision.coverage import coverage

    seen = views[0]
    cov = coverage([seen.pose], table, [seen.image_size])
    view = cov.views[0]
    said = (f"the camera sees {view.share:.0%} of the table and {len(view.anchors)} of {len(table.anchors)} "
            f"anchors whole")
    yield Check(OK if not cov.gaps else WARN, "coverage", said,
                "" if not cov.gaps else "raise the camera, or use a wider lens, until it sees the whole table")
    for gap in cov.gaps:
        yield Check(WARN, "coverage", f"the camera does not see {gap.place} ({_gap_size(gap)})",
                    f"turn the camera towards {gap.place}, raise it, or add a second camera over it")


def _projector_checks(args, table, seen):
    """The projector, when the table has one: its calibration is there and this table's,
    what it covers, and (on the demo, whose synthetic projector doctor can throw light
    with) its check marks where they should land. With a real projector the marks are
    thrown at every start of `serve`, which serves the projector page."""
    from calibration.projector import ProjectorFileError, ProjectorModel, calibrate_command

    from ..projector_cal import check_marks, projector_file

    given = getattr(args, "projector", None)
    path = projector_file(table, given)
    if path is None or (not given and not path.exists()):
        return                              # no projector at this table
    try:
        model = ProjectorModel.load(path, table)
    except ProjectorFileError as exc:
        # The file and what is wrong with it; what to do, with this doctor's own camera and table.
        sources = getattr(args, "source", None) or []
        command = calibrate_command(path, table, sources[0] if sources else None)
        yield Check(FAIL, "projector", exc.problem, f"calibrate it: `{command}` (or Setup → Calibrate projector "
                                                    f"in `serve`)")
        return
    cov = model.coverage(table.width_mm, table.depth_mm)
    yield Check(OK if not cov.missed else WARN, "projector",
                f"calibrated ({path}: {model.points} points, {model.rms_mm:.2f} mm RMS); {cov.words()}",
                "" if not cov.missed else "move or zoom the projector until its image covers the whole table, "
                                          "then calibrate it again")
    if seen is None or seen.pose is None:
        return
    if seen.source.strip() != "demo":
        yield Check(OK, "projector check", "its check marks are thrown and measured at every start of `serve` "
                                           "(and by Setup → Check projector); doctor does not drive the projector")
        return
    from vision.demo import DemoScript
    from vision.projector_sim import demo_projector
    from vision.render import TableRenderer

    from ..projector_cal import SyntheticRig
    w, h = seen.image_size
    renderer = TableRenderer.overhead(table, width=w, height=h)     # the demo source's camera
    rig = SyntheticRig(renderer, demo_projector(table), DemoScript(table).poses_at(0.0))
    result = check_marks(table, model, rig.throw, rig.grab, seen.pose, seen.tracked.located.cars)
    yield Check(OK if result.ok else FAIL, "projector check",
                f"the demo's synthetic projector: {result.words}",
                "" if result.ok else "calibrate it again: `companion calibrate projector --demo`")


def _gap_size(gap) -> str:
    x0, y0, x1, y1 = gap.bounds_mm
    return f"about {x1 - x0:.0f} x {y1 - y0:.0f} mm"


def _cameras_together(table, views: list):
    """Several cameras: where each car is seen; each camera's share of the table and the
    anchors it sees (a FAIL when too few to find its own pose); their overlap and the
    anchors all see; the parts no camera covers; each car's marker size."""
    from calibration.table_pose import MIN_ANCHORS
    from vision.coverage import coverage, place_name

    for car in table.cars:
        where = []
        for n, v in enumerate(views, 1):
            if v is None:
                continue
            c = next((c for c in v.tracked.cars if c.id == car.id and not c.stale), None)
            if c is not None:
                where.append((n, c))
        if where:
            n, c = where[0]
            by = " and ".join(f"camera {k}" for k, _ in where)
            yield Check(OK, _car_name(car), f"seen at ({c.x_mm:.0f}, {c.y_mm:.0f}) mm by {by}")
        else:
            yield Check(WARN, _car_name(car), "not seen by any camera",
                        f"put it on the table with its roof marker ({car.marker_mm:g} mm, id {car.id}) in view of "
                        f"a camera, or leave it out of the table file")
    found = [(n, v) for n, v in enumerate(views, 1) if v is not None and v.pose is not None]
    for n, v in enumerate(views, 1):
        if v is None:
            continue
        if v.pose is None:
            ids = sorted(set(v.tracked.located.anchors))
            saw = ", ".join(map(str, ids)) if ids else "none"
            yield Check(FAIL, f"coverage (camera {n})",
                        f"camera {n} finds too few anchors to know where it is: it sees {saw} (it needs "
                        f"{MIN_ANCHORS})", f"turn or raise camera {n} until it sees at least {MIN_ANCHORS} anchors, "
                                           f"or lay more anchors in its view")
    if not found:
        return
    cov = coverage([v.pose for _, v in found], table, [v.image_size for _, v in found])
    for (n, v), view in zip(found, cov.views):
        anchors = ", ".join(map(str, view.anchors)) or "none"
        said = f"sees {view.share:.0%} of the table and anchors {anchors}"
        if len(view.anchors) < MIN_ANCHORS:
            near = place_name(table, *_centroid(view.polygon_mm)) if view.polygon_mm else "its view"
            yield Check(FAIL, f"coverage (camera {n})", f"{said}: too few to find its own pose (it needs "
                                                        f"{MIN_ANCHORS})",
                        f"lay anchors where camera {n} sees them (around {near}) and add each to the table file, "
                        f"or turn camera {n} until it sees {MIN_ANCHORS}")
        else:
            yield Check(OK, f"coverage (camera {n})", said)
    if len(found) > 1:
        names = " and ".join(f"camera {n}" for n, _ in found)
        shared = ", ".join(map(str, cov.anchors_shared))
        said = (f"{names} overlap over {cov.overlap_mm2:,.0f} mm² ({cov.overlap_share:.0%} of the table); "
                f"together they see {cov.union_share:.0%} of it; "
                + (f"all see anchors {shared}" if shared else "no anchor is seen by all"))
        if cov.overlap_mm2 <= 0:
            yield Check(WARN, "cameras together", said,
                        "turn the cameras so their views overlap by a car's length or more: a car crossing from "
                        "one to the other is lost between them")
        elif not cov.anchors_shared:
            yield Check(WARN, "cameras together", said,
                        "lay an anchor where the cameras overlap and add it to the table file: an anchor both see "
                        "keeps their positions agreeing where a car crosses")
        else:
            yield Check(OK, "cameras together", said)
    for gap in cov.gaps:
        yield Check(WARN, "coverage", f"no camera sees {gap.place} ({_gap_size(gap)})",
                    f"turn a camera towards {gap.place}, raise it, or add one over it")
    if not cov.gaps:
        yield Check(OK, "coverage", "every part of the table is seen by a camera")
    yield from _reach_checks(table, [v for _, v in found])


def _centroid(points) -> tuple[float, float]:
    xs, ys = zip(*points)
    return sum(xs) / len(xs), sum(ys) / len(ys)


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


"""Calibrating the projector with the camera, and checking it has not moved.

The projector throws a grid of dots, each known by its number: one frame with every
dot, then one frame per bit of the dot's number (structured light, as gray-code
projector-camera calibration does), after a frame of black. The camera's change from
the black frame is the projector's light alone (the table's own print, its anchors and
the room's light cancel, as a ratio), so each dot seen is known by its number even when
part of the grid misses the table or lands on a car. Each dot's centre in the camera's
pixels is put on the table plane through the table's pose (the anchors), and the pairs
(table mm, projector px) fit the projector's model (calibration/projector.py).

A check throws a few marks at known table places through the saved model and measures
where the camera sees them land: "projection within 1.2 mm", or that the projector has
moved and is to be calibrated again.

Runs the same against the demo's synthetic projector and a real one: the flow is given
`throw(shapes or None)` (shapes: a pattern in projector px; [] throws black; None gives
the projector back to the scene) and `grab()` (the camera's next frame once the light
has settled).

A moved projector is noticed (see ProjectorService): the check runs at every start of
`serve` with a calibration, when asked (Setup's "Check projector"), and again whenever
the camera reports the table moved in its view (a knocked camera or table: the marks
then say whether the projector still lands where it should). The marks are not thrown
during play unasked, as they would flash over the game: a projector knocked on its own
while the camera stays put is noticed from the game's own lines instead
(companion/projector_watch.py).
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from calibration.projector import (MIN_POINTS, MIN_POINTS_FOR_LENS, Coverage, ProjectorFileError,
                                   ProjectorModel, fit_projector, table_fingerprint)
from calibration.table_pose import TablePose
from calibration.tablefile import TableSpec

from .projector import ProjectorDisplay, ProjectorShape

log = logging.getLogger(__name__)

#: Dots across and down the projector's image: 160 dots, numbered in 8 bits, so a
#: calibration is 10 frames (black, all dots, 8 bits).
GRID = (16, 10)
#: A dot's radius as a share of the grid's step.
DOT_RADIUS_SHARE = 0.15
#: The marks a check throws land within this of where they should: the projector is in place (mm).
CHECK_OK_MM = 3.0
#: A check mark's radius on the table (mm).
CHECK_MARK_MM = 8.0
#: A calibration whose own points scatter more than this (mm RMS) is not kept.
MAX_RMS_MM = 2.0
#: The least change a dot must make, in grey levels, to count as seen (a camera's noise is 2-4).
MIN_CHANGE_GREY = 10.0
#: Frames waited after the light changes before one is taken (the projector page's
#: poll, the projector's own lag, the camera's exposure), and at least this long.
SETTLE_FRAMES = 3
SETTLE_S = 0.4
#: Camera-moved checks at most this often (s).
RECHECK_EVERY_S = 60.0
#: The calibration's file, kept beside the table file.
FILE_NAME = "projector.json"

Throw = Callable[[list | None], None]
Grab = Callable[[], np.ndarray]


class ProjectorCalError(ValueError):
    """A calibration or check that could not be made: what the camera saw and what to do."""


# --- the pattern --------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class DotPattern:
    """The numbered dots thrown to calibrate a projector of `size_px`."""

    size_px: tuple[int, int]
    centres_px: np.ndarray          # (N, 2), dot n at row n // cols, column n % cols
    radius_px: float

    @classmethod
    def for_size(cls, size_px: tuple[int, int], grid: tuple[int, int] = GRID) -> "DotPattern":
        w, h = (int(v) for v in size_px)
        if w < 64 or h < 64:
            raise ProjectorCalError(f"the projector's image is {w} x {h} px, too small to calibrate: open the "
                                    f"projector page full-screen on the projector")
        cols, rows = grid
        step = min(w / cols, h / rows)
        r = DOT_RADIUS_SHARE * step
        # From edge to edge of the image: the outer dots show where the image ends.
        xs = np.linspace(r + 2, w - r - 2, cols)
        ys = np.linspace(r + 2, h - r - 2, rows)
        gx, gy = np.meshgrid(xs, ys)
        return cls((w, h), np.column_stack([gx.ravel(), gy.ravel()]), float(r))

    @property
    def count(self) -> int:
        return len(self.centres_px)

    @property
    def bits(self) -> int:
        return max(1, int(math.ceil(math.log2(self.count))))

    def shapes(self, which: np.ndarray | None = None, role: str = "pattern") -> list[ProjectorShape]:
        """Filled dots (all, or those `which` marks)."""
        idx = np.arange(self.count) if which is None else np.flatnonzero(which)
        return [_dot(self.centres_px[i], self.radius_px, role, f"calibration dot {i + 1}") for i in idx]

    def frames(self) -> list[tuple[str, list[ProjectorShape]]]:
        """What is thrown, in order: black, every dot, then the dots whose number has bit k."""
        n = np.arange(self.count)
        out = [("black", []), ("every dot", self.shapes())]
        for k in range(self.bits):
            out.append((f"bit {k + 1} of {self.bits}", self.shapes((n >> k) & 1 == 1)))
        return out


def _dot(centre, radius: float, role: str, label: str, sides: int = 20) -> ProjectorShape:
    a = np.linspace(0, 2 * np.pi, sides, endpoint=False)
    pts = np.column_stack([centre[0] + radius * np.cos(a), centre[1] + radius * np.sin(a)])
    return ProjectorShape(role, tuple(map(tuple, pts.tolist())), True, True, 0.0, "#ffffff", label)


# --- finding the light ----------------------------------------------------------------------------

def _grey(image: np.ndarray) -> np.ndarray:
    if image.ndim == 3:
        image = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
    return image.astype(np.float32)


@dataclass(frozen=True, eq=False)
class _Light:
    """The projector's light in one frame against the black one."""

    ratio: np.ndarray          # (lit - black) / black: the light as a share of the room's
    change: np.ndarray         # lit - black, grey levels
    clipped: np.ndarray        # pixels the camera saturated


def _light(black: np.ndarray, lit: np.ndarray) -> _Light:
    b, l = _grey(black), _grey(lit)
    if b.shape != l.shape:
        raise ProjectorCalError(f"the camera's frames changed size during the calibration ({b.shape[1]} x "
                                f"{b.shape[0]}, then {l.shape[1]} x {l.shape[0]}); calibrate again")
    # As a ratio the table's own print and the room's uneven light cancel (the light
    # multiplies what the surface reflects); a floor keeps black ink from blowing it up.
    base = np.maximum(cv2.blur(b, (3, 3)), 15.0)
    change = l - b
    return _Light(change / base, change, l >= 250)


@dataclass(frozen=True)
class Blob:
    """A spot of the projector's light the camera saw: its centre (px, weighted by the
    light), its size and its pixels."""

    centre_px: tuple[float, float]
    area_px: int
    pixels: tuple[np.ndarray, np.ndarray]       # its pixels' (rows, columns)


def _find_blobs(light: _Light, what: str) -> tuple[list[Blob], np.ndarray, float]:
    """The lit spots in a frame: (blobs, labels, threshold on the ratio). Refuses a frame
    in which the camera saw no change."""
    smooth = cv2.blur(light.change, (3, 3))
    peak = float(smooth.max())
    if peak < MIN_CHANGE_GREY:
        raise ProjectorCalError(
            f"the camera saw no change on the table when the projector threw {what} (the brightest change was "
            f"{max(peak, 0):.0f} grey levels): check the projector is on, shows the projector page full-screen, "
            f"is not covered and points at the table, then try again")
    ratio = cv2.blur(light.ratio, (3, 3))
    lit = smooth >= 0.5 * MIN_CHANGE_GREY
    peak_ratio = float(np.percentile(ratio[lit], 99)) if lit.any() else float(ratio.max())
    noise = 1.4826 * float(np.median(np.abs(light.ratio - np.median(light.ratio))))
    thr = max(0.4 * peak_ratio, 2 * noise)        # 6 sigma of the 3 x 3 mean's noise (a third of a pixel's)
    mask = ((ratio >= thr) & (smooth >= 0.5 * MIN_CHANGE_GREY)).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    h, w = mask.shape
    weights = np.clip(light.ratio - 0.5 * thr, 0, None)
    blobs = []
    areas = stats[1:, cv2.CC_STAT_AREA]
    typical = float(np.median(areas)) if len(areas) else 0.0
    for k in range(1, n):
        x, y, bw, bh, area = stats[k]
        if area < 4 or area > 6 * max(typical, 4) or x == 0 or y == 0 or x + bw >= w or y + bh >= h:
            continue              # a speck of noise, two dots run together, or cut by the frame's edge
        ys, xs = np.nonzero(labels[y:y + bh, x:x + bw] == k)
        if light.clipped[ys + y, xs + x].any():
            continue              # the camera saturated on it (a white sticker): its centre would be pulled
        wt = weights[ys + y, xs + x]
        if wt.sum() <= 0:
            continue
        blobs.append(Blob((float(np.sum(wt * (xs + x)) / wt.sum()), float(np.sum(wt * (ys + y)) / wt.sum())),
                          int(area), (ys + y, xs + x)))
    return blobs, labels, thr


def _on_table(table: TableSpec, xy: np.ndarray, margin_mm: float) -> np.ndarray:
    return ((xy[:, 0] >= margin_mm) & (xy[:, 0] <= table.width_mm - margin_mm)
            & (xy[:, 1] >= margin_mm) & (xy[:, 1] <= table.depth_mm - margin_mm))


def _near_cars(table: TableSpec, xy: np.ndarray, cars) -> np.ndarray:
    """Points on or beside a car: the light there lands on its body, above the table."""
    near = np.zeros(len(xy), bool)
    for c in cars:
        spec = table.car(c.id)
        reach = (math.hypot(spec.length_mm, spec.width_mm) / 2 if spec is not None else 60.0) + 15.0
        near |= np.hypot(xy[:, 0] - c.x_mm, xy[:, 1] - c.y_mm) < reach
    return near


# --- the table's pose ----------------------------------------------------------------------------

def locate_table(table: TableSpec, camera, image: np.ndarray):
    """The table's pose and cars in a frame (vision's Locator: the anchors), or a refusal
    saying which anchors the camera saw."""
    from vision.locate import Locator
    located = Locator(table, camera).locate(image)
    if located.table_pose is None:
        raise ProjectorCalError(
            f"the camera cannot find the table, so it cannot tell where the projector's light lands "
            f"({located.error or 'too few anchors seen'}): make sure the anchors are in view and uncovered, "
            f"with the projector dark, then try again")
    return located


# --- calibrating ---------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class CalibrationResult:
    model: ProjectorModel
    dots_thrown: int
    dots_seen: int            # found and read in the camera's frames
    dots_used: int            # on the table, off the cars, agreeing with the rest
    coverage: Coverage
    check: "CheckResult | None" = None
    notes: tuple[str, ...] = ()

    def words(self) -> str:
        m = self.model
        text = (f"{self.dots_used} of the projector's {self.dots_thrown} dots measured on the table "
                f"({self.dots_seen} seen), {m.rms_mm:.2f} mm RMS; {self.coverage.words()}")
        if self.check is not None:
            text += f"; {self.check.words}"
        return text + "".join(f"; {n}" for n in self.notes)


def calibrate(table: TableSpec, throw: Throw, grab: Grab, size_px: tuple[int, int], *, camera=None,
              pose: TablePose | None = None, cars=None, check: bool = True) -> CalibrationResult:
    """Throw the numbered dots, read them in the camera's frames, fit the projector.

    `camera`: the camera's model (None: estimated from the anchors); `pose`: the table's
    pose the live pipeline solved (None: found from the black frame's anchors); `cars`:
    where the cars stand (CarLocation-like, x_mm/y_mm/id), dots on them are left out
    (None: as the black frame shows them). With `check`, the new model's check marks are
    thrown and measured before it is returned; one that fails them is refused.
    Raises ProjectorCalError saying what the camera saw and what to do."""
    pattern = DotPattern.for_size(size_px)
    frames = []
    try:
        for name, shapes in pattern.frames():
            throw(shapes)
            frames.append(grab())
        black = frames[0]
        if pose is None or cars is None:
            located = locate_table(table, camera, black)
            pose = pose if pose is not None else located.table_pose
            cars = cars if cars is not None else located.cars
        result = _solve(table, pattern, frames, pose, cars)
        if check:
            checked = check_marks(table, result.model, throw, grab, pose, cars, black=black)
            if checked.marks < 2:
                raise ProjectorCalError(
                    f"the projector lights too little of the table to use: {result.coverage.words()} (the camera "
                    f"measured {result.dots_used} of its dots there); aim and zoom the projector so its image "
                    f"covers the whole table, then calibrate again. Nothing was saved")
            if not checked.ok:
                raise ProjectorCalError(f"the new calibration failed its own check ({checked.words}); nothing "
                                        f"was saved: keep the projector and camera still and calibrate again")
            result = CalibrationResult(result.model, result.dots_thrown, result.dots_seen, result.dots_used,
                                       result.coverage, checked, result.notes)
        return result
    finally:
        throw(None)


def _solve(table: TableSpec, pattern: DotPattern, frames: list[np.ndarray], pose: TablePose,
           cars) -> CalibrationResult:
    black, every, bits = frames[0], frames[1], frames[2:]
    light = _light(black, every)
    blobs, labels, thr = _find_blobs(light, "its calibration dots")
    if not blobs:
        raise ProjectorCalError("the camera saw the projector's light change the table but no dot in it (only "
                                "large lit areas): make sure the projector page shows the dots full-screen and "
                                "in focus, then calibrate again")
    # Each dot's number, one bit per frame: lit if it kept more than half its light.
    numbers = np.zeros(len(blobs), int)
    sure = np.ones(len(blobs), bool)
    masks = [b.pixels for b in blobs]
    on = np.array([light.ratio[m].mean() for m in masks])
    for k, frame in enumerate(bits):
        r = _light(black, frame).ratio
        share = np.array([r[m].mean() for m in masks]) / np.maximum(on, 1e-6)
        numbers |= (share > 0.5).astype(int) << k
        sure &= (share < 0.3) | (share > 0.7)
    ok = sure & (numbers < pattern.count)
    counts = np.bincount(numbers[ok], minlength=pattern.count)
    ok &= counts[np.minimum(numbers, pattern.count - 1)] == 1      # a number read twice: neither is trusted
    seen = int(ok.sum())
    centres = np.array([b.centre_px for b in blobs], float)[ok]
    numbers = numbers[ok]
    if seen < max(8, pattern.count // 10) and seen < len(blobs) / 2:
        # A few specks that changed between two frames, most of them unreadable, are the
        # camera's own noise (or a hand), not a pattern of dots: most likely no dot reached
        # the table at all.
        raise ProjectorCalError(
            f"the camera saw none of the projector's calibration dots on the table (only specks of change, as a "
            f"camera's noise makes: {len(blobs)}, of which {seen} read as dots): check the projector is on, shows "
            f"the projector page full-screen, is not covered and points at the table, then try again")
    if seen == 0:
        raise ProjectorCalError(f"the camera saw {len(blobs)} dots of light but could read none of their "
                                f"numbers (the table's light changed between frames?): keep the room's light "
                                f"steady and calibrate again")
    table_mm = pose.table_from_image(centres)
    # A dot whose light spills off the table's edge is left out: its centre would be pulled.
    radius_mm = float(np.median([math.sqrt(b.area_px / math.pi) for b, k in zip(blobs, ok) if k])
                      * pose.mm_per_px(table.width_mm / 2, table.depth_mm / 2))
    keep = _on_table(table, table_mm, radius_mm) & ~_near_cars(table, table_mm, cars)
    src, dst = table_mm[keep], pattern.centres_px[numbers[keep]]
    on_table = len(src)
    if on_table < MIN_POINTS:
        raise ProjectorCalError(
            f"the camera found only {on_table} of the projector's {pattern.count} dots on the table ({seen} seen "
            f"in all): the projector's image misses most of the table; aim it (and zoom it) so its image covers "
            f"the whole table, clear the table of cars, then calibrate again")
    # Dots read wrongly (a bit lost under a hand) land far from their neighbours' fit.
    step_px = float(np.min(np.diff(np.unique(pattern.centres_px[:, 0])))) if pattern.count > 1 else 50.0
    _, inliers = cv2.findHomography(src, dst, cv2.RANSAC, 0.3 * step_px)
    if inliers is not None:
        src, dst = src[inliers.ravel() > 0], dst[inliers.ravel() > 0]
    notes = []
    lens = _spread(dst, pattern.size_px) >= 0.4 if len(src) >= MIN_POINTS_FOR_LENS else False
    if len(src) >= MIN_POINTS_FOR_LENS and not lens:
        notes.append("the dots cover too little of the projector's image to measure its lens; the fit is "
                     "straight-line only")
    model = fit_projector(src, dst, pattern.size_px, table_fingerprint(table), lens=lens)
    for _ in range(3):
        res = np.hypot(*(model.projector_to_table(dst) - src).T)
        good = res <= max(3 * model.rms_mm, 1.0)
        if good.all() or good.sum() < MIN_POINTS:
            break
        src, dst = src[good], dst[good]
        model = fit_projector(src, dst, pattern.size_px, table_fingerprint(table), lens=lens)
    if model.rms_mm > MAX_RMS_MM:
        raise ProjectorCalError(
            f"the projector's dots do not agree with each other ({model.rms_mm:.1f} mm RMS over {len(src)} dots): "
            f"was the projector or the camera moved during the calibration? Keep both still and calibrate again")
    return CalibrationResult(model, pattern.count, seen, len(src),
                             model.coverage(table.width_mm, table.depth_mm), None, tuple(notes))


def _spread(px: np.ndarray, size_px: tuple[int, int]) -> float:
    """The share of the projector's image the points' hull covers."""
    if len(px) < 3:
        return 0.0
    hull = cv2.convexHull(px.astype(np.float32))
    return float(cv2.contourArea(hull)) / (size_px[0] * size_px[1])


# --- checking ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CheckResult:
    ok: bool
    words: str
    max_mm: float | None                # the worst mark's error, None when none was seen
    marks: int                          # thrown
    seen: int


def check_positions(table: TableSpec, model: ProjectorModel, cars=()) -> np.ndarray:
    """Where the check marks go: a 3 x 3 grid over the table, each one the projector
    lights, away from the anchors (no light on a marker) and the cars."""
    w, d = table.width_mm, table.depth_mm
    pts = np.array([(w * fx, d * fy) for fy in (0.2, 0.5, 0.8) for fx in (0.17, 0.5, 0.83)])
    keep = model.inside(model.table_to_projector(pts)) & model._in_front(pts)
    for a in table.anchors:
        keep &= np.hypot(pts[:, 0] - a.x_mm, pts[:, 1] - a.y_mm) > a.size_mm + 2 * CHECK_MARK_MM
    keep &= ~_near_cars(table, pts, cars)
    # Marks within a margin of the image's edge would be cut by it.
    px = model.table_to_projector(pts)
    margin = 2 * CHECK_MARK_MM * model.px_per_mm((w / 2, d / 2))
    keep &= (px[:, 0] > margin) & (px[:, 0] < model.size_px[0] - margin) & \
            (px[:, 1] > margin) & (px[:, 1] < model.size_px[1] - margin)
    return pts[keep]


def check_marks(table: TableSpec, model: ProjectorModel, throw: Throw, grab: Grab, pose: TablePose, cars=(),
                black: np.ndarray | None = None) -> CheckResult:
    """Throw marks at known table places through `model` and measure where they land.
    `black`: a frame with the projector dark, already taken (else one is). The caller
    gives the projector back (throw(None))."""
    targets = check_positions(table, model, cars)
    if len(targets) < 2:
        return CheckResult(False, "the projector's calibration lights too little of the table clear of anchors "
                                  "and cars to check it: calibrate it again", None, len(targets), 0)
    shapes = []
    for i, (x, y) in enumerate(targets):
        a = np.linspace(0, 2 * np.pi, 24, endpoint=False)
        ring = np.column_stack([x + CHECK_MARK_MM * np.cos(a), y + CHECK_MARK_MM * np.sin(a)])
        px = model.table_to_projector(ring)
        shapes.append(ProjectorShape("check", tuple(map(tuple, px.tolist())), True, True, 0.0, "#ffffff",
                                     f"check mark {i + 1}"))
    if black is None:
        throw([])
        black = grab()
    throw(shapes)
    lit = grab()
    try:
        blobs, _, _ = _find_blobs(_light(black, lit), "its check marks")
    except ProjectorCalError as exc:
        return CheckResult(False, str(exc), None, len(targets), 0)
    found = pose.table_from_image(np.array([b.centre_px for b in blobs], float)) if blobs else np.zeros((0, 2))
    # Each mark matched to the nearest spot seen, within half the marks' spacing.
    spacing = min(table.width_mm, table.depth_mm) * 0.3
    errors = []
    for t in targets:
        if len(found):
            dist = np.hypot(*(found - t).T)
            if dist.min() < 0.5 * spacing:
                errors.append(float(dist.min()))
    seen = len(errors)
    if seen == 0:
        return CheckResult(False, f"the camera saw none of the projector's {len(targets)} check marks where they "
                                  f"should land: the projector has moved since it was calibrated (or is covered); "
                                  f"calibrate it again", None, len(targets), 0)
    missing = len(targets) - seen
    # A moved projector moves every mark; one mark off alone landed on something standing
    # on the table (a car the camera did not find, a hand): two thirds must agree.
    good = [e for e in errors if e <= CHECK_OK_MM]
    if len(good) * 3 < seen * 2:
        return CheckResult(False, f"the projector has moved since it was calibrated: its check marks land up to "
                                  f"{max(errors):.1f} mm from where they should; calibrate it again", max(errors),
                           len(targets), seen)
    worst = max(good)
    text = f"projection within {worst:.1f} mm"
    if len(good) < seen:
        text += (f" ({seen - len(good)} of {len(targets)} check marks landed elsewhere, on something standing on "
                 f"the table?)")
    if missing:
        text += f" ({missing} of {len(targets)} check marks not seen: covered?)"
    return CheckResult(missing * 2 <= len(targets), text, worst, len(targets), seen)


# --- the file --------------------------------------------------------------------------------------

def projector_file(table: TableSpec, given: str | Path | None = None) -> Path | None:
    """Where the table's projector calibration is kept: `given`, else beside the table
    file (None for a table with no file, such as the built-in demo's)."""
    if given:
        return Path(given)
    src = Path(str(table.source))
    if str(table.source).startswith("<") or not src.suffix:
        return None
    return src.with_name(FILE_NAME)


def save_calibration(model: ProjectorModel, path: str | Path, table: TableSpec) -> str:
    """Save a calibration that succeeded (written whole, then moved into place). A file
    there that is not this table's calibration (another table's, or not one at all) is
    kept beside it as NAME.old first: nothing calibrated is lost. Says what was done."""
    path = Path(path)
    kept = ""
    try:
        if path.exists():
            try:
                ProjectorModel.load(path, table)
            except ProjectorFileError as exc:
                old = path.with_name(path.name + ".old")
                path.replace(old)
                kept = f" (what was there is kept as {old}: {exc})"
        model.save(path)
    except OSError as exc:
        raise ProjectorCalError(f"the calibration was measured but cannot be saved to {path} "
                                f"({exc.strerror or exc}): give a file in a folder that exists and may be "
                                f"written") from None
    return f"saved to {path}{kept}"


def load_for(table: TableSpec, path: str | Path) -> ProjectorModel:
    """The calibration at `path`, refused (ProjectorFileError) when it is from another table."""
    return ProjectorModel.load(path, table)


# --- a running companion ----------------------------------------------------------------------------

class LiveFrames:
    """`grab()` over a live table: the next frame once the light has settled (SETTLE_FRAMES
    new frames and SETTLE_S after the call), averaged over two frames against noise."""

    def __init__(self, live, settle_frames: int = SETTLE_FRAMES, settle_s: float = SETTLE_S,
                 timeout_s: float = 10.0) -> None:
        self.live = live
        self.settle_frames = settle_frames
        self.settle_s = settle_s
        self.timeout_s = timeout_s

    def _next(self, after: int | None, deadline: float):
        while True:
            image, tracked = self.live.last_image()
            index = tracked.frame if tracked is not None else None
            if image is not None and (after is None or (index is not None and index > after)):
                return image, index
            if time.monotonic() > deadline:
                raise ProjectorCalError("the camera gave no new frame: check it is running (the Camera tab), "
                                        "then try again")
            self.live.wait_for(self.live.version, 0.2)

    def grab(self) -> np.ndarray:
        start = time.monotonic()
        deadline = start + self.timeout_s
        _, tracked = self.live.last_image()
        index = tracked.frame if tracked is not None else None
        for _ in range(self.settle_frames):
            _, index = self._next(index, deadline)
        while time.monotonic() - start < self.settle_s:
            _, index = self._next(index, deadline)
        a, index = self._next(index, deadline)
        b, _ = self._next(index, deadline)
        return ((a.astype(np.uint16) + b) // 2).astype(np.uint8)

    def pose_and_cars(self):
        """The live pipeline's table pose and cars now (None, None before it has one)."""
        _, tracked = self.live.last_image()
        if tracked is None or tracked.located.table_pose is None or not tracked.located.pose_checked:
            return None, None
        return tracked.located.table_pose, tracked.located.cars


@dataclass
class ProjectorService:
    """A running companion's projector calibration and check, on a thread of their own,
    and what they said (GET /api/projector/status)."""

    display: ProjectorDisplay
    live: object                               # companion.live.LiveTable
    #: Where a calibration is saved (None: beside the table file; kept in memory when it has none).
    path: Path | None = None
    settle_frames: int = SETTLE_FRAMES
    settle_s: float = SETTLE_S
    busy: bool = False
    step: str | None = None
    error: str | None = None
    last_result: CalibrationResult | None = None
    saved: str = ""                            # where the last calibration went, in words
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _checked_at: float = -float("inf")

    @property
    def table(self) -> TableSpec:
        return self.live.table

    @property
    def file(self) -> Path | None:
        """The calibration's file: the one `serve --projector FILE` gave, else the one beside the
        table file (None: the table has none, and a calibration lasts until the companion stops)."""
        return self.path or projector_file(self.table)

    def status(self) -> dict:
        model = self.display.model
        error = self.error
        path = self.file
        if model is None and error is None and not self.busy:
            # A file there that cannot be used (another table's, say) is said, not passed over.
            if path is not None and path.exists():
                try:
                    ProjectorModel.load(path, self.table)
                except ProjectorFileError as exc:
                    error = str(exc)
        return {"calibrated": model is not None, "busy": self.busy, "step": self.step,
                "rms_mm": round(model.rms_mm, 2) if model is not None else None,
                "coverage": model.coverage(self.table.width_mm, self.table.depth_mm).words()
                if model is not None else None,
                "check": self.display.check_text or None, "error": error,
                # Where the calibration is read from and a new one saved, as the page names it.
                "file": str(path) if path is not None else None, "saved": self.saved or None}

    def start(self, what: str) -> bool:
        """Start "calibrate" or "check" in the background; False when one is running."""
        if what not in ("calibrate", "check"):
            raise ValueError(f"the projector can be calibrated or checked, not {what!r}")
        with self._lock:
            if self.busy:
                return False
            self.busy, self.error = True, None
            self.step = "calibrating" if what == "calibrate" else "checking"
        threading.Thread(target=self._run, args=(what,), name=f"projector-{what}", daemon=True).start()
        return True

    def _run(self, what: str) -> None:
        try:
            if what == "calibrate":
                self.calibrate_now()
            else:
                self.check_now()
        except ProjectorCalError as exc:
            self.error = str(exc)
        except Exception as exc:      # a bug must not leave the projector showing a pattern, nor the page waiting
            log.exception("the projector's %s failed", what)
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            self.display.clear_pattern()
            self.busy, self.step = False, None

    def _frames(self) -> LiveFrames:
        return LiveFrames(self.live, self.settle_frames, self.settle_s)

    def _throw(self, why: str) -> Throw:
        def throw(shapes):
            if shapes is None:
                self.display.clear_pattern()
            else:
                self.display.show_pattern(shapes, why)
        return throw

    def _size_px(self) -> tuple[int, int]:
        """The size the pattern is drawn in: the projector page's own (told by its hello),
        else the calibration's."""
        size = self.display.screen_px
        if not size and self.display.model is not None:
            size = self.display.model.size_px
        if not size:
            raise ProjectorCalError("the projector page has not said its size yet: open /projector full-screen "
                                    "in a browser on the projector, then calibrate")
        return tuple(int(v) for v in size)

    def calibrate_now(self) -> CalibrationResult:
        table = self.table
        frames = self._frames()
        pose, cars = frames.pose_and_cars()
        size = self._size_px()
        pattern = DotPattern.for_size(size)
        total = pattern.bits + 2 + 1                     # the dots' frames and the check's marks
        shown = [0]
        throw_pattern = self._throw("calibrating the projector")

        def throw(shapes):
            if shapes is not None:
                shown[0] += 1
                self.step = (f"the camera reads the projector's numbered dots: frame {min(shown[0], total)} of "
                             f"{total}")
            throw_pattern(shapes)
        self.step = f"throwing {pattern.count} numbered dots in {pattern.bits + 2} frames"
        result = calibrate(table, throw, frames.grab, size,
                           camera=pose.camera if pose is not None else self.live.camera_file, pose=pose, cars=cars)
        path = self.file
        if path is not None:
            try:
                self.saved = save_calibration(result.model, path, table)
            except ProjectorCalError as exc:      # measured all the same: used until the companion stops
                self.saved = f"not saved: {exc}; it is used until the companion stops"
        else:
            self.saved = "kept until the companion stops (the table has no file to keep it beside)"
        self.display.set_model(result.model)
        self.display.check_text = result.check.words if result.check else ""
        self.last_result = result
        return result

    def check_now(self) -> CheckResult:
        model = self.display.model
        if model is None:
            raise ProjectorCalError("the projector is not calibrated: calibrate it first (Setup → Calibrate "
                                    "projector, or `companion calibrate projector`)")
        self.step = "throwing check marks"
        frames = self._frames()
        pose, cars = frames.pose_and_cars()
        throw = self._throw("checking the projector")
        if pose is None:
            throw([])
            located = locate_table(self.table, self.live.camera_file, frames.grab())
            pose, cars = located.table_pose, located.cars
        try:
            result = check_marks(self.table, model, throw, frames.grab, pose, cars or ())
        finally:
            throw(None)
        self._checked_at = time.monotonic()
        self.display.check_text = result.words
        if not result.ok:
            self.error = result.words
        return result

    def watch_camera(self) -> None:
        """Check the projector again when the camera reports the table moved in its view
        (at most every RECHECK_EVERY_S)."""
        def on_frame(tracked) -> None:
            if (tracked.located.table_moved and self.display.model is not None and not self.busy
                    and time.monotonic() - self._checked_at > RECHECK_EVERY_S):
                self._checked_at = time.monotonic()
                self.start("check")
        self.live.add_frame_listener(on_frame)


# --- the demo's synthetic projector --------------------------------------------------------------------

class SyntheticRig:
    """The demo's projector and camera with no hardware: `throw` sets what the synthetic
    projector shows, `grab` renders the camera's view of the table under that light
    (vision.projector_sim), the cars standing where `cars` says."""

    def __init__(self, renderer, projector, cars=(), seed: int = 0) -> None:
        from vision.projector_sim import LightMaps
        self.renderer = renderer
        self.projector = projector
        self.maps = LightMaps(renderer, projector)
        self.cars = list(cars)
        self.shapes: list = []
        self.rng = np.random.default_rng(seed)

    def throw(self, shapes) -> None:
        self.shapes = [] if shapes is None else list(shapes)

    def grab(self) -> np.ndarray:
        from vision.projector_sim import rasterize
        image = rasterize(self.shapes, self.projector.size_px)
        return self.renderer.render(self.cars, self.rng, projected=(self.maps, image)).image

"""Watching, during play, that the projector's lines still land where they should.

The check marks (companion/projector_cal.py) are thrown at start, when asked and when the
camera reports the table moved: a projector knocked while the camera stays put would
otherwise go unnoticed until the next check, and marks thrown unasked would flash over
the game. So while the projector draws the game's lines (templates, regions, arcs,
squares, the ruler; never the masks) the camera's frame is looked at every few seconds
where those lines were drawn: across each sampled stroke, ±10 mm along its normal, for
the stroke's light (a peak brighter than both sides: no unlit frame is taken during
play, so the light is told from its neighbourhood).

Each stroke found gives its signed offset along its normal only. A closed outline's
opposite sides have opposite normals, so a plain median of signed offsets cancels a
shift out; instead the offsets fit a displacement field over the table (an affine one:
a small turn or shift of the projector moves the light that way, to well under a
millimetre over a table), and what is said is the median distance that field moves the
found points. Enough points from several shapes, with normals in both directions and a
fair share of the sampled ones found, or nothing is said. Only after several watches in
a row agree is the display's check line set to a plain warning and a note put on the
game's notes, once; the warning goes when the lines come back.

Cheap: only the profiles' pixels are read (cv2.remap on a map of a few thousand
points; no whole frame is converted or filtered), one watch every few seconds, only when
the projector throws a scene with lines and the scene has held still.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import dataclass, field

import cv2
import numpy as np

log = logging.getLogger(__name__)

#: How far either side of a stroke its light is looked for, along the stroke's normal (mm).
SEARCH_MM = 10.0
#: The profile's step across a stroke (mm).
PROFILE_STEP_MM = 0.25
#: Sample points along a stroke this far apart (mm), at most MAX_SAMPLES of them in all.
SAMPLE_EVERY_MM = 15.0
MAX_SAMPLES = 200
#: The lines landing further than this from where they should: the projector may have moved (mm).
MOVED_MM = 2.5
#: Watches in a row that must agree before the warning is raised or cleared.
IN_A_ROW = 3
#: What a watch needs to say anything: points found, shapes they lie on, share of the sampled found.
MIN_POINTS = 20
MIN_SHAPES = 3
MIN_FOUND_SHARE = 0.35
#: The stroke's light must stand this far above both sides (grey levels), and this many
#: times the profile's own noise.
MIN_PEAK_GREY = 6.0
MIN_PEAK_SIGMA = 5.0
#: One watch every this many seconds (the scene must have held still as long).
WATCH_EVERY_S = 3.0
#: Roles whose strokes are watched (masks are black; patterns and check marks are the calibration's).
WATCHED_ROLES = ("template", "region", "arc", "reach", "ruler", "square", "gate", "placement", "blast")


@dataclass(frozen=True)
class Reading:
    """What one watch saw: `off_mm` (the median distance the lines land from where they
    should) or None with `why` nothing can be said."""

    off_mm: float | None
    sampled: int = 0
    found: int = 0
    shapes: int = 0
    why: str = ""
    shift_mm: tuple[float, float] | None = None     # the field's mean shift (x, y), for people


# --- where to look ------------------------------------------------------------------------------

def segments(shape) -> np.ndarray:
    """A shape's straight pieces (N, 2, 2) in mm: its outline closed when it is closed."""
    pts = np.asarray(shape.points_mm, float).reshape(-1, 2)
    ends = np.vstack([pts, pts[:1]]) if shape.closed and len(pts) > 2 else pts
    return np.stack([ends[:-1], ends[1:]], axis=1) if len(ends) > 1 else np.zeros((0, 2, 2))


def stroke_samples(scene, every_mm: float = SAMPLE_EVERY_MM, max_samples: int = MAX_SAMPLES,
                   search_mm: float = SEARCH_MM):
    """Points along the scene's watched strokes (table mm), each with its stroke's unit
    normal and its shape's index: (points (N, 2), normals (N, 2), shape (N,)). Points
    whose profile would cross another stroke (a corner, a crossing line, a parallel line
    within reach) are left out; a stroke drawn twice (two squares' shared side) is one."""
    shapes = [s for s in scene if s.role in WATCHED_ROLES and not s.filled]
    segs, owner = [], []
    for i, s in enumerate(shapes):
        sg = segments(s)
        segs.append(sg)
        owner += [i] * len(sg)
    if not owner:
        return np.zeros((0, 2)), np.zeros((0, 2)), np.zeros(0, int)
    segs = np.concatenate(segs)
    a, b = segs[:, 0], segs[:, 1]
    ab = b - a
    length = np.hypot(ab[:, 0], ab[:, 1])
    ok = length > 1e-9
    d = np.zeros_like(ab)
    d[ok] = ab[ok] / length[ok, None]
    pts, nrm, who = [], [], []
    reach = search_mm + 3.0
    for k in np.flatnonzero(length >= 2.0):
        # Clear of the segment's ends by the profile's reach (a corner's other side), else its middle.
        inner = length[k] - 2 * reach
        n = max(1, int(inner // every_mm) + 1) if inner > 0 else 1
        for s in (np.arange(n) + 0.5) * inner / n + reach if inner > 0 else [length[k] / 2]:
            pts.append(a[k] + d[k] * s)
            nrm.append((-d[k, 1], d[k, 0]))
            who.append(owner[k])
    pts, nrm, who = np.array(pts), np.array(nrm), np.array(who, int)
    if len(pts) > 4 * max_samples:
        # A board of hundreds of squares: an even spread of them, not all.
        keep = np.linspace(0, len(pts) - 1, 4 * max_samples).round().astype(int)
        pts, nrm, who = pts[keep], nrm[keep], who[keep]
    # A point is clear when every segment within reach of its profile lies along its own line.
    ap = pts[:, None, :] - a[None]                                 # (N, S, 2)
    t = np.clip(np.einsum("nsk,sk->ns", ap, ab) / np.maximum(length ** 2, 1e-12), 0, 1)
    near = np.hypot(*(ap - t[..., None] * ab[None]).transpose(2, 0, 1)) < reach
    off_line = np.abs(np.einsum("nsk,sk->ns", ap, np.stack([-d[:, 1], d[:, 0]], 1)))
    parallel = np.abs(np.einsum("nk,sk->ns", nrm, np.stack([-d[:, 1], d[:, 0]], 1))) > math.cos(math.radians(8))
    same_line = parallel & (off_line < 1.0)
    clear = ~(near & ~same_line).any(axis=1)
    pts, nrm, who = pts[clear], nrm[clear], who[clear]
    if len(pts) > max_samples:
        keep = np.linspace(0, len(pts) - 1, max_samples).round().astype(int)
        pts, nrm, who = pts[keep], nrm[keep], who[keep]
    return pts, nrm, who


def _inside(poly: np.ndarray, xy: np.ndarray) -> np.ndarray:
    path = poly.astype(np.float32).reshape(-1, 1, 2)
    return np.array([cv2.pointPolygonTest(path, (float(x), float(y)), True) for x, y in xy])


def usable(points: np.ndarray, table, cars=(), masks=(), model=None, search_mm: float = SEARCH_MM) -> np.ndarray:
    """Which sample points can be looked at: their profile on the table, clear of every
    car (its body stands in the light) and of every mask (no light there), inside the
    projector's image."""
    if not len(points):
        return np.zeros(0, bool)
    m = search_mm + 2.0
    ok = ((points[:, 0] >= m) & (points[:, 0] <= table.width_mm - m)
          & (points[:, 1] >= m) & (points[:, 1] <= table.depth_mm - m))
    for c in cars or ():
        spec = table.car(c.id)
        reach = (math.hypot(spec.length_mm, spec.width_mm) / 2 if spec is not None else 60.0) + 10.0 + search_mm
        ok &= np.hypot(points[:, 0] - c.x_mm, points[:, 1] - c.y_mm) >= reach
    for s in masks or ():
        poly = np.asarray(s.points_mm, float).reshape(-1, 2)
        if s.z_mm > 0 and model is not None and len(poly):
            poly = np.vstack([poly, model.lifted(poly, s.z_mm)])
            poly = cv2.convexHull(poly.astype(np.float32)).reshape(-1, 2)
        if len(poly) >= 3 and ok.any():
            idx = np.flatnonzero(ok)
            ok[idx] = _inside(poly, points[idx]) < -(search_mm + 2.0)
    if model is not None and ok.any():
        px = model.table_to_projector(points)
        w, h = model.size_px
        ok &= (px[:, 0] > 2) & (px[:, 0] < w - 2) & (px[:, 1] > 2) & (px[:, 1] < h - 2)
    return ok


# --- finding the light ------------------------------------------------------------------------------

def profiles(image: np.ndarray, pose, points: np.ndarray, normals: np.ndarray,
             search_mm: float = SEARCH_MM, step_mm: float = PROFILE_STEP_MM):
    """The camera's grey across each stroke: (t (K,) mm along the normal, profiles (N, K)),
    NaN rows where a profile leaves the frame. Only these pixels are read."""
    t = np.arange(-search_mm, search_mm + step_mm / 2, step_mm)
    # Five points a profile through the camera's model, the rest in between: the lens bends
    # a 20 mm line by hundredths of a pixel between them, and projecting every sample is
    # most of a watch's time.
    knots = np.linspace(t[0], t[-1], 5)
    ends = points[:, None, :] + knots[None, :, None] * normals[:, None, :]       # (N, 5, 2)
    flat = ends.reshape(-1, 2)
    kpx = pose.image_from_table(np.column_stack([flat, np.zeros(len(flat))])).reshape(len(points), 5, 2)
    weights = np.stack([np.interp(t, knots, np.eye(5)[i]) for i in range(5)], axis=1)   # (K, 5)
    px = np.matmul(weights[None], kpx).reshape(-1, 2).astype(np.float32)
    h, w = image.shape[:2]
    mx = px[:, 0].reshape(1, -1)
    my = px[:, 1].reshape(1, -1)
    vals = cv2.remap(image, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=0)
    vals = vals.reshape(len(px), -1).astype(np.float32).mean(axis=1) if vals.ndim == 3 else vals.reshape(-1)
    prof = vals.astype(np.float32).reshape(len(points), len(t))
    out = ((px[:, 0] < 1) | (px[:, 0] > w - 2) | (px[:, 1] < 1) | (px[:, 1] > h - 2)).reshape(len(points), len(t))
    prof[out.any(axis=1)] = np.nan
    return t, prof


def _row_median(values: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Each row's median over the kept entries (nanmedian is ten times slower)."""
    ordered = np.sort(np.where(keep, values, np.inf), axis=1)
    count = np.maximum(keep.sum(axis=1), 1)
    return ordered[np.arange(len(values)), (count - 1) // 2]


def stroke_offsets(t: np.ndarray, prof: np.ndarray) -> np.ndarray:
    """Each profile's stroke centre along t (mm), NaN where no single peak stands clearly
    above both sides of it. All profiles at once (a watch has a few ms)."""
    n, k = prof.shape
    out = np.full(n, np.nan)
    if n == 0:
        return out
    step = float(t[1] - t[0])
    side = max(3, int(round(2.0 / step)))          # 2 mm each end: the neighbourhood's level
    gap = int(round(3.0 / step))                   # the peak's own width, either side
    rows = np.isfinite(prof).all(axis=1)
    p = np.where(rows[:, None], prof, 0.0)
    # The neighbourhood's level: a line through both ends (the table's light varies slowly).
    x0, x1 = t[:side].mean(), t[-side:].mean()
    y0, y1 = np.median(p[:, :side], axis=1), np.median(p[:, -side:], axis=1)
    r = p - (y0[:, None] + (t[None] - x0) * ((y1 - y0) / (x1 - x0))[:, None])
    j = np.argmax(r[:, side:-side], axis=1) + side
    idx = np.arange(k)[None]
    sides = (idx < (j - gap)[:, None]) | (idx > (j + gap)[:, None])
    masked = np.where(sides, r, np.nan)
    level = _row_median(r, sides)
    height = r[np.arange(n), j] - level
    both = sides[:, 1:] & sides[:, :-1]
    noise = 1.4826 * _row_median(np.abs(np.diff(r, axis=1)), both) / math.sqrt(2) + 0.5
    # One peak only: nothing else on the profile half as bright (another line, the table's print).
    other = np.nanmax(masked, axis=1) - level
    good = rows & (height >= np.maximum(MIN_PEAK_GREY, MIN_PEAK_SIGMA * noise)) & (other <= 0.5 * height)
    half = level + height / 2
    below = r <= half[:, None]
    # The run above half the peak around it: from the last point below it on the left to the first on the right.
    a = np.where(below & (idx < j[:, None]), idx, -1).max(axis=1) + 1
    b = np.where(below & (idx > j[:, None]), idx, k).min(axis=1) - 1
    good &= (b - a + 1) * step <= 6.0              # a broad glow is not a stroke
    wt = np.where((idx >= a[:, None]) & (idx <= b[:, None]), r - half[:, None], 0.0)
    total = wt.sum(axis=1)
    good &= total > 0
    out[good] = (wt[good] * t[None]).sum(axis=1) / total[good]
    return out


def fit_displacement(points: np.ndarray, normals: np.ndarray, offsets: np.ndarray):
    """The displacement field (affine over the table, else a plain shift) that best explains
    the offsets seen along each stroke's normal, fitted robustly: (displacements at the
    points (M, 2), which points agree (N,) bool) or None when the normals cannot fix it
    (all strokes one way)."""
    nn = normals.T @ normals / max(len(normals), 1)
    if np.linalg.eigvalsh(nn)[0] < 0.08:
        return None
    centre = points.mean(axis=0)
    scale = max(float(np.abs(points - centre).max()), 1.0)
    q = (points - centre) / scale
    nx, ny = normals[:, 0], normals[:, 1]
    affine = np.column_stack([nx, ny, nx * q[:, 0], nx * q[:, 1], ny * q[:, 0], ny * q[:, 1]])
    design = affine if np.linalg.cond(affine) < 25 else affine[:, :2]
    keep = np.ones(len(offsets), bool)
    coef = None
    for _ in range(4):
        if keep.sum() < design.shape[1] + 3:
            return None
        coef, *_ = np.linalg.lstsq(design[keep], offsets[keep], rcond=None)
        res = offsets - design @ coef
        spread = 1.4826 * float(np.median(np.abs(res[keep])))
        keep = np.abs(res) <= max(3.0 * spread, 1.0)
    b = coef[:2]
    a = np.zeros((2, 2)) if len(coef) == 2 else np.array([[coef[2], coef[3]], [coef[4], coef[5]]])
    return b + q @ a.T, keep


def measure(image: np.ndarray, pose, scene, table, cars=(), model=None, samples=None) -> Reading:
    """One watch: where the scene's strokes land in the camera's frame against where they
    were drawn. `samples`: stroke_samples(scene), when already made."""
    pts, nrm, who = samples if samples is not None else stroke_samples(scene)
    if len(pts) == 0 or len(set(who.tolist())) < MIN_SHAPES:
        return Reading(None, len(pts), 0, len(set(who.tolist())), "the projector draws too few lines to watch")
    masks = [s for s in scene if s.role == "mask"]
    ok = usable(pts, table, cars, masks, model)
    pts, nrm, who = pts[ok], nrm[ok], who[ok]
    if len(pts) < MIN_POINTS or len(set(who.tolist())) < MIN_SHAPES:
        return Reading(None, len(pts), 0, len(set(who.tolist())),
                       "too few of the projector's lines lie clear of the cars and masks to watch")
    t, prof = profiles(image, pose, pts, nrm)
    off = stroke_offsets(t, prof)
    seen = np.isfinite(off)
    found, shapes = int(seen.sum()), len(set(who[seen].tolist()))
    if found < MIN_POINTS or shapes < MIN_SHAPES or found < MIN_FOUND_SHARE * len(pts):
        return Reading(None, len(pts), found, shapes,
                       f"the camera saw {found} of {len(pts)} places along the projector's lines")
    fit = fit_displacement(pts[seen], nrm[seen], off[seen])
    if fit is None:
        return Reading(None, len(pts), found, shapes, "the lines seen all run one way")
    moved, agree = fit
    if agree.sum() < max(MIN_POINTS, 0.5 * found):
        return Reading(None, len(pts), found, shapes, "the lines seen do not agree where they land")
    dist = np.hypot(moved[:, 0], moved[:, 1])
    mean = moved[agree].mean(axis=0)
    return Reading(float(np.median(dist[agree])), len(pts), found, shapes, "",
                   (round(float(mean[0]), 2), round(float(mean[1]), 2)))


# --- during play ------------------------------------------------------------------------------------

def warning_words(off_mm: float) -> str:
    return (f"the projector's lines land {off_mm:.0f} mm from where they should: it may have moved; "
            f"Setup → Check projector")


@dataclass
class ProjectorWatch:
    """Watches the live table's frames for the projector's lines (one watch every
    `every_s`, on a thread of its own once started); sets the display's check line and a
    note after `in_a_row` watches in a row see the lines off, and clears it after as many
    see them back."""

    display: object                         # companion.projector.ProjectorDisplay
    live: object                            # companion.live.LiveTable (last_image(), table)
    scene: object                           # () -> list[TableShape]: what the display draws
    note: object = None                     # (text, kind) -> None: the game's notes
    every_s: float = WATCH_EVERY_S
    in_a_row: int = IN_A_ROW
    moved_mm: float = MOVED_MM
    warned: bool = False
    last: Reading | None = None
    readings: int = 0                       # watches that said something
    _streak: list = field(default_factory=list)
    _held: tuple | None = None              # the scene seen at the last tick
    _samples: tuple | None = None
    _before: str = ""                       # the check line before the warning
    _model_id: int | None = None            # the calibration the streak was seen with
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def drawing_lines(self) -> bool:
        d = self.display
        return d.model is not None and not d.showing_pattern and d.mode != "nothing"

    def _thrown(self, scene) -> list:
        """The scene's shapes the display's mode throws."""
        from .projector import PLACEMENT_ROLES
        return [s for s in scene if self.display.mode == "everything" or s.role in PLACEMENT_ROLES]

    @staticmethod
    def _lines_key(scene) -> tuple:
        """The watched lines to the millimetre: the camera's jitter moves the masks and the
        ruler by hundredths of one from frame to frame, which is no change of scene here."""
        return tuple((s.role, s.closed, tuple((round(x), round(y)) for x, y in s.points_mm))
                     for s in scene if s.role in WATCHED_ROLES and not s.filled)

    def observe(self, image: np.ndarray, pose, cars, scene) -> Reading:
        """One watch of `image` (taken while `scene` was thrown), and what follows from it."""
        if id(self.display.model) != self._model_id:
            # Calibrated again (or another calibration loaded): what was seen before no longer counts.
            self._model_id, self._streak = id(self.display.model), []
            if self.warned:
                self.warned = False
                if self.display.check_text.startswith("the projector's lines land "):
                    self.display.check_text = self._before
        scene = self._thrown(scene)
        key = self._lines_key(scene)
        if self._samples is None or self._samples[0] != key:
            self._samples = (key, stroke_samples(scene))
        reading = measure(image, pose, scene, self.live.table, cars, self.display.model, self._samples[1])
        self.last = reading
        if reading.off_mm is None:
            return reading             # nothing said: the streak neither grows nor breaks
        self.readings += 1
        self._streak = (self._streak + [reading.off_mm > self.moved_mm])[-self.in_a_row:]
        if len(self._streak) == self.in_a_row and all(self._streak) and not self.warned:
            self._warn(reading)
        elif len(self._streak) == self.in_a_row and not any(self._streak) and self.warned:
            self._clear()
        return reading

    def _warn(self, reading: Reading) -> None:
        self.warned = True
        self._before = self.display.check_text
        text = warning_words(reading.off_mm)
        self.display.check_text = text
        if self.note is not None:
            self.note(text, "warn")

    def _clear(self) -> None:
        self.warned = False
        # Only our own warning is taken back (a check run since has said its own words).
        if self.display.check_text.startswith("the projector's lines land "):
            self.display.check_text = self._before
        if self.note is not None:
            self.note("the projector's lines land where they should again", "info")

    def tick(self) -> Reading | None:
        """One watch from the live table, when the projector throws lines and the scene has
        held still since the last tick (its light has reached the table)."""
        if not self.drawing_lines():
            self._held = None
            return None
        scene = list(self.scene())
        held = (self.display.version, id(self.display.model), self.display.mode, self._lines_key(scene))
        steady, self._held = held == self._held, held
        if not steady or not held[3]:
            return None
        image, tracked = self.live.last_image()
        if image is None or tracked is None:
            return None
        located = tracked.located
        if located.table_pose is None or not located.pose_checked or located.table_moved:
            return None
        # The scene again: one that changed while the frame was taken is not watched.
        if self._lines_key(self.scene()) != held[3] or self.display.version != held[0]:
            return None
        return self.observe(image, located.table_pose, located.cars, scene)

    def start(self) -> "ProjectorWatch":
        def run() -> None:
            while not self._stop.wait(self.every_s):
                try:
                    self.tick()
                except Exception:           # a watch must never take the companion down
                    log.exception("the projector's watch failed")
        self._thread = threading.Thread(target=run, name="projector-watch", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()

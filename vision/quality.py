"""Can this camera read these markers well?  Marker size and sharpness, with advice.

From one frame's detections and its grey image: each marker's side in pixels
(and its cell, a sixth of that for 4x4 markers) and how soft its edges are (the
blur's sigma in pixels, from the spread of the brightness step across the
marker's outer edges).  Judged against thresholds measured on rendered tables
(see the constants), the verdict is "ok", "marginal" or "poor", with advice in
players' words: bigger markers, the camera lower, focus.

When a frame shows no marker at all, the strongest edges anywhere in it still
tell whether the picture is too soft to find any (`global_blur_px`).

Pure NumPy (no OpenCV): the detections come from `vision.detect`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from .refine import sample_bilinear

#: Where along each edge to probe (fractions of its length): clear of the corners.
_ALONG = np.linspace(0.2, 0.8, 8)
#: Sampling step across an edge (px).
_STEP_PX = 0.25
#: Least grey-level step between a marker's black border and its white margin
#: for an edge profile to count (a hand's shadow, a glare).
MIN_CONTRAST = 20.0
#: The spread a perfectly sharp edge still shows: a pixel's own width (sigma
#: 0.29 px) and the bilinear sampling between pixels.  Measured on tables
#: rendered with no blur: 0.47 px.
SHARP_SPREAD_PX = 0.47

# Thresholds, measured on the demo table rendered at 1080p (noise 2, JPEG 85),
# 3 frames of 5 cars per setting, blur sigma 0.6-2.5 px, roof markers 8-20 mm
# (9-25 px across), located by Locator with the camera known; roof markers found of 15:
#   24.5 px: 15 up to blur 1.4, 12 at 1.5, 6 at 1.8-2.0, 0 at 2.5
#   19.7 px: 15 up to 1.0, 9 at 1.2, 3 at 1.4;   16 px: 15 at 0.6, 5 at 1.0
#   11.4 px: 2 even at 0.6;   9.5 px: 5 at 0.6.
#: Roof markers smaller than this (px across) are poor: at 11 px (a 2 px cell)
#: most are lost even on a sharp picture.
SIDE_POOR_PX = 14.0
#: ... and smaller than this marginal: 16-19 px markers are found only while the
#: picture is sharp (blur under 1 px); 24 px ones stand a blur of 1.4 px.
SIDE_OK_PX = 20.0
#: Blur sigma as a share of a cell: markers start to be lost at 0.33-0.38 (1.2 px
#: on 3.3 px cells, 1.0 on 2.65, 1.36 on 4.1) and every one is found up to
#: 0.23-0.29: poor from 0.33, marginal from 0.25.
BLUR_POOR_PER_CELL = 0.33
BLUR_OK_PER_CELL = 0.25
#: With no marker found, a frame whose strongest edges are blurred more than this
#: (sigma, px) is called too soft: a 4 px cell (a 20 mm roof at 1080p) is lost from
#: a blur of about 1.4 px (0.33 of a cell).
GLOBAL_BLUR_POOR_PX = 1.4
#: The size a marker should reach (px across) when advising a bigger one.
TARGET_SIDE_PX = 24.0


@dataclass(frozen=True)
class MarkerQuality:
    """One marker's side (px), cell (px) and edge blur (sigma px; None: too little contrast to tell)."""

    id: int
    side_px: float
    cell_px: float
    edge_blur_px: float | None
    is_car: bool = False


@dataclass(frozen=True)
class FrameQuality:
    """Whether a frame's markers are big and sharp enough to read well."""

    markers: tuple[MarkerQuality, ...]
    verdict: str                       # "ok", "marginal", "poor", or "unknown" (nothing to judge)
    advice: tuple[str, ...] = ()
    #: Blur sigma (px) from the strongest edges anywhere in the frame: set when no marker was found.
    global_blur_px: float | None = None
    notes: dict = field(default_factory=dict)

    @property
    def judged(self) -> tuple[MarkerQuality, ...]:
        """The markers whose size matters: the cars' roofs when any are seen, else all."""
        cars = tuple(m for m in self.markers if m.is_car)
        return cars or self.markers

    @property
    def edge_blur_px(self) -> float | None:
        blurs = [m.edge_blur_px for m in self.markers if m.edge_blur_px is not None]
        if blurs:
            return float(np.median(blurs))
        return self.global_blur_px

    def to_json(self) -> dict:
        sides = [m.side_px for m in self.judged]
        out: dict = {"verdict": self.verdict, "advice": list(self.advice), "markers": len(self.markers)}
        if sides:
            out["marker_side_px"] = {"min": round(min(sides), 1), "median": round(float(np.median(sides)), 1)}
            out["cell_px"] = round(min(m.cell_px for m in self.judged), 2)
        blur = self.edge_blur_px
        out["edge_blur_px"] = None if blur is None else round(blur, 2)
        out.update(self.notes)
        return out


def edge_blur_px(gray: np.ndarray, corners_px: np.ndarray, cells: int) -> np.ndarray:
    """(N,) the blur sigma (px) of each marker's outer edges, NaN when it cannot tell.

    Across each edge, from the black border into the white margin, the
    brightness rises as a blurred step; its derivative is the blur's own
    profile, whose spread (standard deviation) is the blur's sigma, less what
    a sharp edge shows (SHARP_SPREAD_PX).  Probes reach a cell either side,
    so the next cell's edge stays out of the window."""
    corners = np.asarray(corners_px, dtype=np.float64).reshape(-1, 4, 2)
    n = len(corners)
    if n == 0:
        return np.zeros(0)
    g = np.asarray(gray, dtype=np.float32)
    a = corners
    b = np.roll(corners, -1, axis=1)
    along = b - a
    length = np.linalg.norm(along, axis=-1)                                # (N, 4)
    tangent = along / np.maximum(length, 1e-9)[..., None]
    normal = np.stack([tangent[..., 1], -tangent[..., 0]], axis=-1)
    centre = corners.mean(axis=1)
    mid = (a + b) / 2 - centre[:, None, :]
    normal *= np.where((normal * mid).sum(-1) < 0, -1.0, 1.0)[..., None]   # outwards
    cell = length.mean(axis=1) / cells                                       # (N,)
    # A cell each side, but at least 2.5 px (a soft edge is wider than a small cell)
    # and at most 8 px.
    reach = np.clip(cell, 2.5, 8.0)
    k = int(2 * 8.0 / _STEP_PX) + 1
    unit = np.linspace(-1.0, 1.0, k)
    offsets = unit[None, :] * reach[:, None]                                 # (N, K)
    base = a[:, :, None, :] + _ALONG[None, None, :, None] * along[:, :, None, :]       # (N,4,M,2)
    probes = base[:, :, :, None, :] + offsets[:, None, None, :, None] * normal[:, :, None, None, :]
    prof = sample_bilinear(g, probes)                                              # (N,4,M,K)
    # The profiles along one edge, averaged: a straight edge's step lies at the same
    # offset all along it (the corners are refined), and averaging halves the noise
    # that would otherwise widen a sharp step.
    prof = prof.mean(axis=2)                                                 # (N,4,K)
    tail = max(k // 8, 1)
    dark = prof[..., :tail].mean(axis=-1)
    light = prof[..., -tail:].mean(axis=-1)
    contrast = light - dark
    rel = (prof - dark[..., None]) / np.where(contrast > 0, contrast, 1.0)[..., None]
    # Where the step crosses 20 % and 80 % of the way up, found outwards from its middle.
    lo = _crossing(rel, offsets, 0.2)
    hi = _crossing(rel, offsets, 0.8)
    width = (hi - lo) / RISE_20_80_PER_SIGMA                                 # (N, 4)
    good = (contrast > MIN_CONTRAST) & np.isfinite(width) & (width > 0)
    width = np.where(good, width, np.nan)
    out = np.full(n, np.nan)
    for i in range(n):
        v = width[i][np.isfinite(width[i])]
        if v.size >= 2:
            spread = float(np.median(v))
            out[i] = math.sqrt(max(spread ** 2 - SHARP_SPREAD_PX ** 2, 0.0))
    return out


#: A Gaussian step rises from 20 % to 80 % over 1.683 sigma.
RISE_20_80_PER_SIGMA = 1.683


def _crossing(rel: np.ndarray, offsets: np.ndarray, level: float) -> np.ndarray:
    """(N, 4) the offset where each profile (N, 4, K) last crosses `level` before its
    middle (for levels under a half) or first after it (over a half), interpolated."""
    k = rel.shape[-1]
    idx = np.arange(k)
    mid = np.argmax(rel >= 0.5, axis=-1)                                     # first at half
    if level < 0.5:
        below = (rel < level) & (idx < mid[..., None])
        j = np.where(below.any(-1), k - 1 - np.argmax(below[..., ::-1], axis=-1), -1)   # last below
        j0, j1 = j, j + 1
    else:
        above = (rel >= level) & (idx >= mid[..., None])
        j1 = np.where(above.any(-1), np.argmax(above, axis=-1), -1)
        j0 = j1 - 1
    valid = (j0 >= 0) & (j1 >= 1) & (j1 < k)
    j0c, j1c = np.clip(j0, 0, k - 1), np.clip(j1, 0, k - 1)
    v0 = np.take_along_axis(rel, j0c[..., None], -1)[..., 0]
    v1 = np.take_along_axis(rel, j1c[..., None], -1)[..., 0]
    off = np.broadcast_to(offsets[:, None, :], rel.shape)
    s0 = np.take_along_axis(off, j0c[..., None], -1)[..., 0]
    s1 = np.take_along_axis(off, j1c[..., None], -1)[..., 0]
    t = np.where(np.abs(v1 - v0) > 1e-6, (level - v0) / np.where(np.abs(v1 - v0) > 1e-6, v1 - v0, 1.0), 0.5)
    return np.where(valid, s0 + np.clip(t, 0, 1) * (s1 - s0), np.nan)


def global_blur_px(gray: np.ndarray, top_share: float = 0.002) -> float | None:
    """Blur sigma (px) of the sharpest strong edges anywhere in the frame, or None.

    A step of contrast C blurred by sigma has a steepest slope of C / (sigma * 2.51);
    over the frame's steepest edges (the top `top_share` of pixels by slope, with a
    contrast over MIN_CONTRAST in their neighbourhood) the ratio gives sigma.  Used
    when no marker is found: it tells a picture too soft to read from one with no
    markers in it."""
    g = np.asarray(gray, dtype=np.float32)
    if g.ndim != 2 or min(g.shape) < 16:
        return None
    # Central differences (slope per px) and the contrast across 4 px each way.
    gx = np.zeros_like(g)
    gy = np.zeros_like(g)
    gx[:, 1:-1] = (g[:, 2:] - g[:, :-2]) / 2
    gy[1:-1, :] = (g[2:, :] - g[:-2, :]) / 2
    slope = np.hypot(gx, gy)
    r = 4
    cx = np.zeros_like(g)
    cy = np.zeros_like(g)
    cx[:, r:-r] = np.abs(g[:, 2 * r:] - g[:, :-2 * r])
    cy[r:-r, :] = np.abs(g[2 * r:, :] - g[:-2 * r, :])
    contrast = np.maximum(cx, cy)
    ok = contrast > 2 * MIN_CONTRAST
    if ok.sum() < 50:
        return None
    s = slope[ok]
    c = contrast[ok]
    count = max(int(top_share * g.size), 50)
    idx = np.argpartition(-s, min(count, s.size - 1))[:count]
    with np.errstate(divide="ignore"):
        sigma = c[idx] / (math.sqrt(2 * math.pi) * s[idx])
    sigma = sigma[np.isfinite(sigma)]
    if sigma.size == 0:
        return None
    spread = float(np.median(sigma))
    return math.sqrt(max(spread ** 2 - SHARP_SPREAD_PX ** 2, 0.0))


def assess(gray: np.ndarray, detections: Sequence, cells: int, car_ids: Iterable[int] = (),
           expected_car_side_px: float | None = None) -> FrameQuality:
    """Judge one frame: `detections` have `id` and `corners_px` (vision.detect.MarkerDetection);
    `cells` is the marker grid with its border (6 for 4x4); `car_ids` the roof markers.
    `expected_car_side_px`: how big the smallest roof marker should look (from the
    table's pose and the table file), judged when no roof marker is found: the
    anchors, three times bigger, may read well where the roofs do not."""
    cars = set(car_ids)
    dets = list(detections)
    if not dets:
        blur = global_blur_px(gray)
        return judge((), blur)
    corners = np.array([d.corners_px for d in dets], dtype=np.float64).reshape(-1, 4, 2)
    blurs = edge_blur_px(gray, corners, cells)
    sides = np.linalg.norm(corners - np.roll(corners, -1, axis=1), axis=-1).mean(axis=1)
    markers = tuple(MarkerQuality(int(d.id), float(s), float(s) / cells,
                                  None if not np.isfinite(b) else float(b), int(d.id) in cars)
                    for d, s, b in zip(dets, sides, blurs))
    if cars and not any(m.is_car for m in markers) and expected_car_side_px:
        return judge(markers, expected_car_side_px=expected_car_side_px, cells=cells)
    return judge(markers)


def judge(markers: tuple[MarkerQuality, ...], global_blur: float | None = None, *,
          expected_car_side_px: float | None = None, cells: int = 6) -> FrameQuality:
    """The verdict and advice for these markers (or, with none, the frame's global blur)."""
    if not markers:
        if global_blur is not None and global_blur > GLOBAL_BLUR_POOR_PX:
            return FrameQuality((), "poor", (
                f"No markers found, and the picture is too soft to find them (edges blurred over about "
                f"{global_blur:.1f} px): focus the camera, or hold it still.",), global_blur)
        return FrameQuality((), "unknown", (), global_blur)
    quality = FrameQuality(markers, "ok")
    judged = quality.judged
    side = min(m.side_px for m in judged)
    cell = min(m.cell_px for m in judged)
    blur = quality.edge_blur_px
    levels, advice = [], []
    what = "Roof markers" if any(m.is_car for m in markers) else "Markers"
    notes: dict = {}
    if expected_car_side_px:
        # No roof seen: judge what they should look like from where the table is.
        side, cell, what = expected_car_side_px, expected_car_side_px / cells, "No roof marker is found; they should be"
        notes["expected_car_side_px"] = round(expected_car_side_px, 1)
    if side < SIDE_OK_PX:
        levels.append("poor" if side < SIDE_POOR_PX else "marginal")
        grow = TARGET_SIDE_PX / side
        verb = "" if expected_car_side_px else " are"
        advice.append(f"{what}{verb} {side:.0f} px across; {SIDE_OK_PX:.0f} px or more reads reliably: "
                      f"use markers about {grow:.1f} times bigger or lower the camera.")
    if blur is not None:
        per_cell = blur / cell
        if per_cell > BLUR_POOR_PER_CELL:
            levels.append("poor")
        elif per_cell > BLUR_OK_PER_CELL:
            levels.append("marginal")
        if per_cell > BLUR_OK_PER_CELL:
            advice.append(f"The picture is soft (edges blurred over about {blur:.1f} px, a cell is "
                          f"{cell:.1f} px): focus the camera, or hold it still.")
    verdict = "poor" if "poor" in levels else "marginal" if levels else "ok"
    return FrameQuality(markers, verdict, tuple(advice), global_blur, notes)


"""Sub-pixel marker outlines from edge lines, not corners.

OpenCV refines each corner alone, in a window a fraction of a cell wide; on a
24-pixel roof marker that window is two pixels, and the corner of a blurred
square is pulled inwards.  The four edges are long and straight, so instead we
find where each edge crosses half-way between the marker's black border and its
white margin, at a dozen places along its middle, fit a line through them, and
intersect neighbouring lines.  The residuals of the fits say how noisy this
marker's outline is, which becomes its sigma.

All markers of a frame are refined together (one gather of every probe), so the
cost is a fraction of a millisecond per frame, not per marker.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Where along each edge to probe (fractions of its length): clear of the corners.
_ALONG = np.linspace(0.14, 0.86, 12)
#: Probes across each edge (spanning about a cell: the border and the margin).
_PROBES_ACROSS = 17
#: Least contrast (grey levels) between border and margin for a probe to count.
MIN_CONTRAST = 12.0
#: Fewest good probes an edge needs.
MIN_PROBES = 5


@dataclass(frozen=True, eq=False)
class RefinedOutlines:
    """The outlines of N markers: `ok[i]` False means keep the detector's corners."""

    corners_px: np.ndarray      # (N, 4, 2), OpenCV's order
    edge_sigma_px: np.ndarray   # (N,) RMS distance of edge crossings from their lines
    contrast: np.ndarray        # (N,) mean grey levels between black border and white margin
    ok: np.ndarray              # (N,) bool


def sample_bilinear(gray: np.ndarray, xy: np.ndarray) -> np.ndarray:
    """The grey frame at sub-pixel points (..., 2), bilinearly interpolated."""
    h, w = gray.shape
    x = np.clip(xy[..., 0], 0, w - 1.001)
    y = np.clip(xy[..., 1], 0, h - 1.001)
    x0 = x.astype(np.intp)
    y0 = y.astype(np.intp)
    fx, fy = x - x0, y - y0
    # Four gathers from the flat frame: a fraction of what 2-D fancy indexing costs.
    flat = gray.ravel() if gray.flags.c_contiguous else np.ascontiguousarray(gray).ravel()
    i = y0 * w + x0
    # The four neighbours in one gather (four calls cost twice as much on a frame's probes).
    near = flat.take(i[..., None] + np.array([0, 1, w, w + 1])).astype(np.float64)
    a, b, c, d = near[..., 0], near[..., 1], near[..., 2], near[..., 3]
    top = a + (b - a) * fx
    bottom = c + (d - c) * fx
    return top + (bottom - top) * fy


def _median_last(values: np.ndarray) -> np.ndarray:
    """np.median over the last axis, to the same numbers, for the few samples of a
    probe's end (np.median's general path costs more than the sort of four)."""
    s = np.sort(values, axis=-1)
    k = s.shape[-1]
    return s[..., k // 2] if k % 2 else (s[..., k // 2 - 1] + s[..., k // 2]) / 2


def _fit_lines(pts: np.ndarray, weight: np.ndarray):
    """Weighted total-least-squares lines through (..., M, 2) points.

    Returns (centroid (..., 2), unit direction (..., 2), RMS residual (...))."""
    wsum = np.maximum(weight.sum(axis=-1), 1e-9)
    c = (pts * weight[..., None]).sum(axis=-2) / wsum[..., None]
    d = pts - c[..., None, :]
    cxx = (weight * d[..., 0] ** 2).sum(-1) / wsum
    cyy = (weight * d[..., 1] ** 2).sum(-1) / wsum
    cxy = (weight * d[..., 0] * d[..., 1]).sum(-1) / wsum
    angle = 0.5 * np.arctan2(2 * cxy, cxx - cyy)
    direction = np.stack([np.cos(angle), np.sin(angle)], axis=-1)
    half_diff = np.sqrt(((cxx - cyy) / 2) ** 2 + cxy ** 2)
    smallest = np.maximum((cxx + cyy) / 2 - half_diff, 0.0)
    return c, direction, np.sqrt(smallest)


def _intersect(p1, d1, p2, d2):
    """Where lines (p1, d1) and (p2, d2) cross; (..., 2), with |det| to judge."""
    det = d1[..., 0] * (-d2[..., 1]) - (-d2[..., 0]) * d1[..., 1]
    r = p2 - p1
    safe = np.where(np.abs(det) < 1e-9, 1e-9, det)
    t = (r[..., 0] * (-d2[..., 1]) - (-d2[..., 0]) * r[..., 1]) / safe
    return p1 + t[..., None] * d1, np.abs(det)


def refine_outlines(gray: np.ndarray, corners_px: np.ndarray, cells: int,
                    iterations: int = 2) -> RefinedOutlines:
    """Fit every marker's four outer edges and intersect them.

    `gray` is the frame (float32 preferred); `corners_px` is (N, 4, 2) from the
    detector; `cells` is the marker's grid with its border (6 for 4x4 markers).
    """
    g = gray        # sampled where needed; converting the whole frame costs more
    corners = np.asarray(corners_px, dtype=np.float64).reshape(-1, 4, 2)
    n = len(corners)
    if n == 0:
        empty = np.zeros(0)
        return RefinedOutlines(corners, empty, empty, np.zeros(0, bool))
    original = corners.copy()
    ok = np.ones(n, bool)
    sigma = np.zeros(n)
    contrast_out = np.zeros(n)
    n_off = None
    for _ in range(iterations):
        centre = corners.mean(axis=1)                                   # (N, 2)
        a = corners                                                     # (N, 4, 2)
        b = np.roll(corners, -1, axis=1)
        along = b - a
        length = np.linalg.norm(along, axis=-1)                         # (N, 4)
        tangent = along / np.maximum(length, 1e-9)[..., None]
        normal = np.stack([tangent[..., 1], -tangent[..., 0]], axis=-1)
        mid = (a + b) / 2 - centre[:, None, :]
        normal *= np.where((normal * mid).sum(-1) < 0, -1.0, 1.0)[..., None]   # outwards
        cell_px = length.mean(axis=1) / cells                           # (N,)
        # Probe about half a cell either side: the black border inside, the
        # white margin outside, both a cell wide.
        reach = np.clip(0.6 * cell_px, 1.0, 4.0)
        n_off = _PROBES_ACROSS
        unit = np.linspace(-1.0, 1.0, n_off)                            # scaled per marker
        offsets = unit[None, :] * reach[:, None]                        # (N, K)
        base = a[:, :, None, :] + _ALONG[None, None, :, None] * along[:, :, None, :]   # (N,4,M,2)
        probes = (base[:, :, :, None, :]
                  + offsets[:, None, None, :, None] * normal[:, :, None, None, :])     # (N,4,M,K,2)
        prof = sample_bilinear(g, probes)                                     # (N,4,M,K)
        side = max(n_off // 4, 1)
        dark = _median_last(prof[..., :side])
        light = _median_last(prof[..., -side:])
        contrast = light - dark
        level = (dark + light) / 2
        above = prof >= level[..., None]
        first = np.argmax(above, axis=-1)                               # (N,4,M)
        good = (contrast > MIN_CONTRAST) & above.any(-1) & (first > 0)
        idx = np.clip(first, 1, n_off - 1)
        v0 = np.take_along_axis(prof, (idx - 1)[..., None], -1)[..., 0]
        v1 = np.take_along_axis(prof, idx[..., None], -1)[..., 0]
        frac = np.where(v1 > v0, (level - v0) / np.maximum(v1 - v0, 1e-6), 0.5)
        step = (offsets[:, 1] - offsets[:, 0])[:, None, None]
        s = np.take_along_axis(np.broadcast_to(offsets[:, None, None, :], prof.shape),
                               (idx - 1)[..., None], -1)[..., 0] + frac * step
        pts = base + s[..., None] * normal[:, :, None, :]               # (N,4,M,2)
        w = good.astype(np.float64)
        c, d, rms = _fit_lines(pts, w)
        # One pass of outlier rejection: a speck of dust or a glint on one probe.
        perp = np.stack([-d[..., 1], d[..., 0]], axis=-1)
        dist = np.abs(((pts - c[:, :, None, :]) * perp[:, :, None, :]).sum(-1))
        w = w * (dist < np.maximum(3 * rms, 0.15)[..., None])
        c, d, rms = _fit_lines(pts, w)
        counts = w.sum(-1)                                              # (N,4)
        # Corner k joins edge k-1 (into it) and edge k (out of it).
        new, det = _intersect(np.roll(c, 1, axis=1), np.roll(d, 1, axis=1), c, d)
        moved = np.linalg.norm(new - original, axis=-1).max(axis=1)
        ok &= ((counts >= MIN_PROBES).all(axis=1) & (det > 0.2).all(axis=1)
               & (moved < np.maximum(2.0, 0.5 * cell_px)) & np.isfinite(new).all(axis=(1, 2)))
        corners = np.where(ok[:, None, None], new, original)
        sigma = np.sqrt(np.mean(rms ** 2, axis=1))
        good_count = good.reshape(n, -1).sum(axis=1)
        contrast_out = (np.where(good, contrast, 0.0).reshape(n, -1).sum(axis=1)
                        / np.maximum(good_count, 1))
    return RefinedOutlines(corners, sigma, np.nan_to_num(contrast_out), ok)

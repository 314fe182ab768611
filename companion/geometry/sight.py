"""Line of sight between footprints, blocked by terrain and, optionally, cars.

Two readings (rule systems choose): "any" (an unobstructed line between any
part of one and any part of the other) and "centre" (centre to centre).  What
grazing an obstacle's edge counts as is an option: by default a line that only
touches an edge or a corner is not blocked.

"Any part" is judged on lines between sample points of both footprints (the
centre, the corners and the edge midpoints): centre to centre first, then the
16 corner-to-corner lines, then the 48 other corner and midpoint pairs; a pair
is blocked only when every one of them is.

Blocking is tested exactly and fast: every obstacle is held as convex pieces
(a non-convex one is cut into triangles), and each line is clipped against
each piece's edges (Cyrus-Beck); it is blocked when some of it lies inside a
piece.  Grazing is decided by shrinking the pieces by a micron (grazing clear)
or growing them (grazing blocks).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from .pose import Footprint, Terrain

ANY, CENTRE = "any", "centre"
_MICRON = 1e-3      # mm


@dataclass(frozen=True)
class Sight:
    """Whether a clear line exists, and one such line (or the blocked centre line)."""

    clear: bool
    line: tuple[tuple[float, float], tuple[float, float]]
    blocked_by: tuple[str, ...] = ()


def _convex_pieces(polygon) -> list[np.ndarray]:
    """The polygon as convex pieces, each its vertices anticlockwise (no repeat)."""
    poly = shapely.normalize(polygon)
    if abs(poly.area - poly.convex_hull.area) <= 1e-9 * max(poly.area, 1.0) and not poly.interiors:
        pieces = [poly]
    else:
        pieces = list(shapely.constrained_delaunay_triangles(poly).geoms)
    out = []
    for piece in pieces:
        ring = np.asarray(piece.exterior.coords)[:-1]
        x, y = ring[:, 0], ring[:, 1]
        if np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y) < 0:
            ring = ring[::-1]
        out.append(ring)
    return out


def sample_points(fp: Footprint) -> np.ndarray:
    """Centre, corners, then edge midpoints (9 points)."""
    c = fp.corners
    mids = (c + np.roll(c, -1, axis=0)) / 2
    return np.vstack([fp.centre[None, :], c, mids])


class Obstacles:
    """The things that block sight on a table, prepared once per snapshot."""

    def __init__(self, terrain: list[Terrain] | tuple[Terrain, ...] = (), cars=(),
                 *, grazing_blocks: bool = False) -> None:
        self.grazing_blocks = grazing_blocks
        names, owners, rings = [], [], []
        self.items: list[tuple[str, object, int | None]] = []
        for t in terrain:
            if t.blocks_sight:
                self.items.append((t.name or t.kind, t.polygon, None))
        for fp in cars:
            self.items.append((fp.name or str(fp.id), fp.polygon, fp.id))
        for k, (name, poly, owner) in enumerate(self.items):
            for ring in _convex_pieces(poly):
                names.append(k)
                owners.append(-1 if owner is None else owner)
                rings.append(ring)
        self._item_of_piece = np.array(names, dtype=int)
        self._owner = np.array(owners, dtype=np.int64)
        v = max((len(r) for r in rings), default=0)
        k = len(rings)
        # Each piece as half-planes n . x < c (outward normals), padded with always-true rows.
        self._normals = np.zeros((k, v, 2))
        self._offsets = np.full((k, v), np.inf)
        shift = _MICRON if grazing_blocks else -_MICRON
        for i, ring in enumerate(rings):
            edges = np.roll(ring, -1, axis=0) - ring
            n = np.column_stack([edges[:, 1], -edges[:, 0]])
            n /= np.linalg.norm(n, axis=1, keepdims=True)
            self._normals[i, :len(ring)] = n
            self._offsets[i, :len(ring)] = np.einsum("ij,ij->i", n, ring) + shift
        self._lo = np.array([r.min(axis=0) for r in rings]) if rings else np.zeros((0, 2))
        self._hi = np.array([r.max(axis=0) for r in rings]) if rings else np.zeros((0, 2))

    @property
    def empty(self) -> bool:
        return len(self._owner) == 0

    def hits(self, starts: np.ndarray, ends: np.ndarray, car_a: np.ndarray, car_b: np.ndarray) -> np.ndarray:
        """(M, K) whether line m passes through piece k (pieces of its own two cars excluded)."""
        m, k = len(starts), len(self._owner)
        out = np.zeros((m, k), dtype=bool)
        if m == 0 or k == 0:
            return out
        # A cheap box test first: most lines miss most pieces.
        lo = np.minimum(starts, ends)
        hi = np.maximum(starts, ends)
        near = ((lo[:, None, 0] <= self._hi[None, :, 0]) & (hi[:, None, 0] >= self._lo[None, :, 0])
                & (lo[:, None, 1] <= self._hi[None, :, 1]) & (hi[:, None, 1] >= self._lo[None, :, 1]))
        near &= (self._owner[None, :] != car_a[:, None]) & (self._owner[None, :] != car_b[:, None])
        li, pi = np.nonzero(near)
        if len(li) == 0:
            return out
        n = self._normals[pi]                                   # (H, V, 2)
        s0 = starts[li]
        d = ends[li] - s0
        nd = n[:, :, 0] * d[:, 0:1] + n[:, :, 1] * d[:, 1:2]
        rhs = self._offsets[pi] - (n[:, :, 0] * s0[:, 0:1] + n[:, :, 1] * s0[:, 1:2])
        with np.errstate(divide="ignore", invalid="ignore"):
            t = rhs / nd
        upper = np.where(nd > 0, t, np.inf).min(axis=1)
        lower = np.where(nd < 0, t, -np.inf).max(axis=1)
        outside = ((nd == 0) & ~(rhs > 0)).any(axis=1)          # parallel to an edge, outside it
        inside = (np.minimum(upper, 1.0) - np.maximum(lower, 0.0) > 1e-12) & ~outside
        out[li[inside], pi[inside]] = True
        return out

    def near(self, lo: np.ndarray, hi: np.ndarray, car_a: np.ndarray, car_b: np.ndarray) -> np.ndarray:
        """(M,) whether any piece (not of the two cars) overlaps each box [lo, hi]."""
        if len(self._owner) == 0:
            return np.zeros(len(lo), dtype=bool)
        hit = ((lo[:, None, 0] <= self._hi[None, :, 0]) & (hi[:, None, 0] >= self._lo[None, :, 0])
               & (lo[:, None, 1] <= self._hi[None, :, 1]) & (hi[:, None, 1] >= self._lo[None, :, 1]))
        hit &= (self._owner[None, :] != car_a[:, None]) & (self._owner[None, :] != car_b[:, None])
        return hit.any(axis=1)

    def blocked(self, starts, ends, car_a, car_b) -> np.ndarray:
        return self.hits(starts, ends, car_a, car_b).any(axis=1)

    def blockers(self, start, end, car_a: int, car_b: int) -> tuple[str, ...]:
        h = self.hits(np.asarray([start], float), np.asarray([end], float), np.array([car_a]), np.array([car_b]))[0]
        return tuple(sorted({self.items[self._item_of_piece[k]][0] for k in np.flatnonzero(h)}))

    def line_of_sight(self, a: Footprint, b: Footprint, mode: str = ANY) -> Sight:
        return sight_between([(a, b)], self, mode)[0]


def _stage(a_points, b_points, skip=()):
    pairs = [(i, j) for i in a_points for j in b_points if (i, j) not in skip]
    return np.array([i for i, _ in pairs]), np.array([j for _, j in pairs])


_CORNERS, _EDGES = range(1, 5), range(1, 9)
#: Lines tried, in turn, between sample points (0 the centre, 1-4 the corners,
#: 5-8 the edge midpoints): centre to centre; corner to corner; then every
#: corner and midpoint pair not tried yet. A pair is blocked only when all are.
_STAGES = (_stage([0], [0]), _stage(_CORNERS, _CORNERS),
           _stage(_EDGES, _EDGES, skip={(i, j) for i in _CORNERS for j in _CORNERS}))


def sight_arrays(samples_a: np.ndarray, samples_b: np.ndarray, ida: np.ndarray, idb: np.ndarray,
                 obstacles: Obstacles, mode: str = ANY) -> tuple[np.ndarray, np.ndarray]:
    """Line of sight for P pairs given each side's 9 sample points (P, 9, 2):
    (clear (P,), a line (P, 2, 2): a clear one, or the centre line when blocked)."""
    lines = np.stack([samples_a[:, 0], samples_b[:, 0]], axis=1)
    clear = np.zeros(len(ida), dtype=bool)
    if obstacles.empty:
        clear[:] = True
        return clear, lines
    if mode == CENTRE:
        return ~obstacles.blocked(lines[:, 0], lines[:, 1], ida, idb), lines
    # A pair with no obstacle anywhere in the box round both cars is clear.
    both = np.concatenate([samples_a, samples_b], axis=1)
    near = obstacles.near(both.min(axis=1), both.max(axis=1), ida, idb)
    clear[~near] = True
    todo = np.flatnonzero(near)
    for ia, ib in _STAGES:
        if len(todo) == 0:
            break
        starts = samples_a[todo][:, ia]                                      # (T, L, 2)
        ends = samples_b[todo][:, ib]
        per = len(ia)
        owner = np.repeat(todo, per)
        hit = obstacles.hits(starts.reshape(-1, 2), ends.reshape(-1, 2), ida[owner], idb[owner])
        hit = hit.reshape(len(todo), per, -1)                                # (T, L, pieces)
        free = ~hit.any(axis=2)
        found = free.any(axis=1)
        settled = found
        if per == 16:
            # One convex piece across all 16 corner-to-corner lines blocks every
            # line between the two (convex) cars: a line missing it would leave
            # some corner of each on its side of a separating line, and the
            # corner-to-corner line between those would miss it too.
            settled = found | hit.all(axis=1).any(axis=1)
        first = free.argmax(axis=1)
        rows = np.flatnonzero(found)
        clear[todo[rows]] = True
        lines[todo[rows], 0] = starts[rows, first[rows]]
        lines[todo[rows], 1] = ends[rows, first[rows]]
        todo = todo[~settled]
    return clear, lines


def sight_between(pairs: list[tuple[Footprint, Footprint]], obstacles: Obstacles, mode: str = ANY) -> list[Sight]:
    """Line of sight for many pairs, with what blocks each blocked one."""
    if not pairs:
        return []
    ida = np.array([a.id for a, _ in pairs])
    idb = np.array([b.id for _, b in pairs])
    samples_a = np.array([sample_points(a) for a, _ in pairs])
    samples_b = np.array([sample_points(b) for _, b in pairs])
    clear, lines = sight_arrays(samples_a, samples_b, ida, idb, obstacles, mode)
    names: dict[int, tuple[str, ...]] = {}
    shut = np.flatnonzero(~clear)
    if len(shut):
        hits = obstacles.hits(lines[shut, 0], lines[shut, 1], ida[shut], idb[shut])
        for row, p in enumerate(shut):
            names[int(p)] = tuple(sorted({obstacles.items[obstacles._item_of_piece[k]][0]
                                          for k in np.flatnonzero(hits[row])}))
    return [Sight(bool(clear[p]), (_xy(lines[p, 0]), _xy(lines[p, 1])), names.get(p, ()))
            for p in range(len(pairs))]


def _xy(p) -> tuple[float, float]:
    return float(p[0]), float(p[1])


def line_of_sight(a: Footprint, b: Footprint, terrain=(), cars=(), *, mode: str = ANY,
                  grazing_blocks: bool = False) -> Sight:
    """One-off line of sight (for many pairs, build an `Obstacles` once)."""
    return Obstacles(terrain, cars, grazing_blocks=grazing_blocks).line_of_sight(a, b, mode)

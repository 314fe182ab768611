"""Every pair of cars at once: distances, arcs and line of sight for a whole table.

The single-pair functions (`closest_distance`, `in_half_plane_arc`, ...) read
like the rulebook; this module answers the same questions for all pairs in a
handful of vectorized Shapely and NumPy calls, for the page and `companion
measure`, which ask them of every pair every frame.  Its answers are the
single-pair functions' answers (tests compare them).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from .pose import Footprint
from .sight import ANY, Obstacles, sight_arrays


@dataclass(frozen=True)
class PairTable:
    """Measurements for every unordered pair (i < j) of `cars`, as arrays indexed like `pairs`."""

    cars: tuple[Footprint, ...]
    pairs: np.ndarray              # (P, 2) indices into cars
    distance_mm: np.ndarray        # (P,)
    distance_sigma_mm: np.ndarray  # (P,)
    closest_points: np.ndarray     # (P, 2, 2): the point on cars[i], then on cars[j]
    #: front_depth[i, j]: how far car j reaches ahead of car i's centre line (any part), mm
    front_depth: np.ndarray        # (N, N)
    rear_depth: np.ndarray         # (N, N)
    arc_sigma_mm: np.ndarray       # (N, N)
    sight_clear: np.ndarray        # (P,) bool
    sight_line: np.ndarray         # (P, 2, 2)



def _frames(cars):
    centres = np.array([c.pose.xy for c in cars])
    t = np.radians([c.pose.heading_deg for c in cars])
    forward = np.column_stack([np.cos(t), np.sin(t)])
    corners = np.array([c.corners for c in cars])                       # (N, 4, 2)
    axis = np.array([c.pose.axis_sigma_mm for c in cars])
    turn = np.array([c.pose.heading_sigma_rad for c in cars])
    return centres, forward, corners, axis, turn


def measure_all(cars: list[Footprint] | tuple[Footprint, ...], obstacles: Obstacles | None = None,
                sight_mode: str = ANY) -> PairTable:
    cars = tuple(cars)
    n = len(cars)
    iu, ju = np.triu_indices(n, k=1)
    pairs = np.column_stack([iu, ju])
    centres, forward, corners, axis, turn = _frames(cars)
    polys = shapely.polygons(corners)          # all at once, not one Polygon per car

    # Closest distances and their points, all pairs in two calls.
    lines = shapely.shortest_line(polys[iu], polys[ju])
    coords = shapely.get_coordinates(lines).reshape(-1, 2, 2)
    dist = np.hypot(*(coords[:, 1] - coords[:, 0]).T)
    dist = np.where(shapely.intersects(polys[iu], polys[ju]), 0.0, dist)
    with np.errstate(invalid="ignore", divide="ignore"):
        u = (coords[:, 1] - coords[:, 0]) / dist[:, None]
    # Doubt: both positions, and each car turning about its centre (lever arm of its closest point).
    def lever(idx, point):
        r = point - centres[idx]
        perp = np.column_stack([-r[:, 1], r[:, 0]])
        return np.where(dist > 1e-9, np.abs(np.sum(perp * np.nan_to_num(u), axis=1)), np.hypot(r[:, 0], r[:, 1]))
    dsig = np.sqrt(axis[iu] ** 2 + axis[ju] ** 2 + (lever(iu, coords[:, 0]) * turn[iu]) ** 2
                   + (lever(ju, coords[:, 1]) * turn[ju]) ** 2)

    # Arcs: every car's corners against every car's centre line.
    rel = corners[None, :, :, :] - centres[:, None, None, :]            # (N shooter, N target, 4, 2)
    ahead = np.einsum("stkd,sd->stk", rel, forward)                      # along each shooter's heading
    front = ahead.max(axis=2)
    rear = (-ahead).max(axis=2)
    k_front = ahead.argmax(axis=2)
    deep = np.take_along_axis(rel, k_front[:, :, None, None], axis=2)[:, :, 0, :]
    lateral = np.abs(np.einsum("std,sd->st", deep, np.column_stack([-forward[:, 1], forward[:, 0]])))
    arc_sigma = np.sqrt(axis[:, None] ** 2 + axis[None, :] ** 2 + (lateral * turn[:, None]) ** 2)

    # Line of sight.
    if obstacles is None or obstacles.empty or not len(pairs):
        clear = np.ones(len(pairs), dtype=bool)
        sight = np.stack([centres[iu], centres[ju]], axis=1)
    else:
        ids = np.array([c.id for c in cars])
        mids = (corners + np.roll(corners, -1, axis=1)) / 2
        samples = np.concatenate([centres[:, None, :], corners, mids], axis=1)   # (N, 9, 2)
        clear, sight = sight_arrays(samples[iu], samples[ju], ids[iu], ids[ju], obstacles, sight_mode)
    return PairTable(cars, pairs, dist, dsig, coords, front, rear, arc_sigma, clear, sight)

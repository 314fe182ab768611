"""Geometry speed: what a rule system asks of a busy table, every frame.

    python -m bench.geometry [--repeat 200]

- all pairs of 20 cars (190 pairs): closest distance with its points and doubt,
  front and rear arcs both ways, line of sight (any part) against 10 terrain
  pieces: target 5 ms or less (the terrain is prepared once per game, as it
  does not move; that one-off cost is reported apart);
- the move region of one car among 20 (the template at its front bumper, the
  other cars carved out, the reachable part kept): target 2 ms or less.

Prints the median and p95 over `--repeat` runs, on fresh random tables.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

from companion.geometry.batch import measure_all
from companion.geometry import (FRONT, REAR, Footprint, MoveTemplate, Obstacles, Pose, Terrain,
                                closest_distance, in_half_plane_arc, move_region)


def random_table(rng: np.random.Generator, cars: int = 20, terrain: int = 10):
    """A 4 ft x 2 ft 8 in table: 10 blocking pieces (30-120 mm across), then 20
    cars placed where a player could put them: apart, and not inside terrain."""
    pieces = []
    for k in range(terrain):
        cx, cy = rng.uniform(100, 1100), rng.uniform(100, 700)
        w, h = rng.uniform(30, 120), rng.uniform(30, 120)
        pieces.append(Terrain.from_points([(cx - w / 2, cy - h / 2), (cx + w / 2, cy - h / 2),
                                           (cx + w / 2, cy + h / 2), (cx - w / 2, cy + h / 2)],
                                          "blocking", f"block {k}"))
    feet: list[Footprint] = []
    while len(feet) < cars:
        p = Pose(float(rng.uniform(80, 1140)), float(rng.uniform(80, 730)), float(rng.uniform(-180, 180)), 0.2, 0.3)
        fp = Footprint(len(feet) + 1, p, float(rng.uniform(68, 95)), float(rng.uniform(29, 36)))
        if (all(math.hypot(p.x_mm - f.pose.x_mm, p.y_mm - f.pose.y_mm) > 90 for f in feet)
                and all(fp.polygon.distance(t.polygon) > 10 for t in pieces)):
            feet.append(fp)
    return feet, pieces


def all_pairs(feet, obstacles) -> int:
    """As the page and `companion measure` ask it: the whole table at once. The
    terrain is prepared once (it does not move during a game), the cars every frame."""
    table = measure_all(feet, obstacles)
    return len(table.pairs)


def all_pairs_one_by_one(feet, pieces) -> int:
    """The same questions asked pair by pair (the rulebook-shaped calls), for comparison."""
    obstacles = Obstacles(pieces)
    n = 0
    for i, a in enumerate(feet):
        for b in feet[i + 1:]:
            closest_distance(a, b)
            in_half_plane_arc(a, b, FRONT)
            in_half_plane_arc(a, b, REAR)
            in_half_plane_arc(b, a, FRONT)
            in_half_plane_arc(b, a, REAR)
            obstacles.line_of_sight(a, b)
            n += 1
    return n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=200)
    args = ap.parse_args()
    rng = np.random.default_rng(3)
    pair_ms, region_ms, single_ms, prepare_ms = [], [], [], []
    for _ in range(args.repeat):
        feet, pieces = random_table(rng)
        t = time.perf_counter()
        obstacles = Obstacles(pieces)
        prepare_ms.append((time.perf_counter() - t) * 1000)
        # Fresh footprints, so no shape made while placing the cars is reused.
        feet = [Footprint(f.id, f.pose, f.length_mm, f.width_mm) for f in feet]
        t = time.perf_counter()
        pairs = all_pairs(feet, obstacles)
        pair_ms.append((time.perf_counter() - t) * 1000)
        if len(single_ms) < 20:
            t = time.perf_counter()
            all_pairs_one_by_one(feet, pieces)
            single_ms.append((time.perf_counter() - t) * 1000)
        car = feet[0]
        t = time.perf_counter()
        move_region(car, MoveTemplate.at_front_bumper(car), feet[1:])
        region_ms.append((time.perf_counter() - t) * 1000)
    print(json.dumps({
        "pairs": pairs,
        "all_pairs_ms": {"median": round(float(np.median(pair_ms)), 3), "p95": round(float(np.percentile(pair_ms, 95)), 3)},
        "terrain_prepared_once_ms": {"median": round(float(np.median(prepare_ms)), 3)},
        "all_pairs_one_by_one_ms": {"median": round(float(np.median(single_ms)), 3)},
        "move_region_ms": {"median": round(float(np.median(region_ms)), 3), "p95": round(float(np.percentile(region_ms, 95)), 3)},
    }))


if __name__ == "__main__":
    main()

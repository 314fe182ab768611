"""Every pair of cars on a table, measured: the figures `companion measure` prints
and the page draws."""

from __future__ import annotations

from .geometry import ANY, Obstacles, judge, to_inches
from .geometry.batch import measure_all
from .scene import Scene


def measure_pairs(scene: Scene, *, sight_mode: str = ANY, cars_block_sight: bool = False,
                  grazing_blocks: bool = False) -> list[dict]:
    """For each ordered pair (from, to): the closest distance with its points and
    doubt, whether `to` is in `from`'s front and rear half-plane arcs (any part,
    as DESIGN.md reads them), and line of sight."""
    obstacles = Obstacles(scene.terrain, scene.cars if cars_block_sight else (), grazing_blocks=grazing_blocks)
    table = measure_all(scene.cars, obstacles, sight_mode)
    cars = scene.cars
    out = []
    for k, (i, j) in enumerate(table.pairs):
        d = float(table.distance_mm[k])
        for a, b, points in ((i, j, table.closest_points[k]), (j, i, table.closest_points[k][::-1])):
            front = judge(f"{cars[b].name or cars[b].id} in {cars[a].name or cars[a].id}'s front arc (any)",
                          float(table.front_depth[a, b]), 0.0, float(table.arc_sigma_mm[a, b]), at_most=False)
            rear = judge(f"{cars[b].name or cars[b].id} in {cars[a].name or cars[a].id}'s rear arc (any)",
                         float(table.rear_depth[a, b]), 0.0, float(table.arc_sigma_mm[a, b]), at_most=False)
            line = table.sight_line[k] if a == i else table.sight_line[k][::-1]
            out.append({
                "from": cars[a].id, "to": cars[b].id,
                "distance_mm": round(d, 3),
                "distance_in": round(to_inches(d), 4),
                "distance_sigma_mm": round(float(table.distance_sigma_mm[k]), 3),
                "closest_points": [[round(float(v), 3) for v in p] for p in points],
                "in_front_arc": front.margin_mm > 0,
                "in_rear_arc": rear.margin_mm > 0,
                "front_arc": front.to_json(),
                "rear_arc": rear.to_json(),
                "line_of_sight": bool(table.sight_clear[k]),
                "sight_line": [[round(float(v), 3) for v in p] for p in line],
                "sight_blocked_by": [],
            })
    out.sort(key=lambda p: (p["from"], p["to"]))
    if not bool(table.sight_clear.all()):
        _name_blockers(scene, obstacles, out, sight_mode)
    return out


def _name_blockers(scene: Scene, obstacles: Obstacles, pairs: list[dict], mode: str) -> None:
    """What blocks each blocked pair's centre line (for people reading the output)."""
    from .geometry.sight import sight_between

    by_id = {c.id: c for c in scene.cars}
    blocked = [p for p in pairs if not p["line_of_sight"]]
    sights = sight_between([(by_id[p["from"]], by_id[p["to"]]) for p in blocked], obstacles, mode)
    for p, s in zip(blocked, sights):
        p["sight_blocked_by"] = list(s.blocked_by)

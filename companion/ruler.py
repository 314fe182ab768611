"""The ruler: two cars as the camera sees them now, measured as the rules would measure
them (closest and centre distance with their doubt, arcs, line of sight)."""

from __future__ import annotations

from .geometry import Footprint, Pose, centre_distance, closest_distance, in_half_plane_arc
from .geometry.pose import MM_PER_IN
from .geometry.sight import Obstacles


class RulerError(ValueError):
    """Two cars that cannot be measured; the message says why."""


def measure(live: dict[int, dict], table, terrain, a: int, b: int) -> dict:
    """Between two cars as the camera sees them now: closest and centre distance with
    doubt, arcs, and line of sight (terrain and the other cars block it)."""
    feet = {}
    for m in (a, b):
        c = live.get(m)
        spec = table.car(m)
        if c is None or spec is None:
            raise RulerError(f"the camera has not found car {m} on the table")
        feet[m] = Footprint(m, Pose(c["x_mm"], c["y_mm"], c["heading_deg"], c["sigma_mm"], c["sigma_deg"]),
                            spec.length_mm, spec.width_mm, spec.name)
    if a == b:
        raise RulerError("choose two different cars")
    others = []
    for m, c in live.items():
        spec = table.car(m)
        if m not in (a, b) and spec is not None:
            others.append(Footprint(m, Pose(c["x_mm"], c["y_mm"], c["heading_deg"]),
                                    spec.length_mm, spec.width_mm, spec.name))
    d = closest_distance(feet[a], feet[b])
    cd = centre_distance(feet[a], feet[b])
    sight = Obstacles(terrain, others).line_of_sight(feet[a], feet[b])
    return {
        "from": a, "to": b, "names": [feet[a].name, feet[b].name],
        "distance_mm": round(d.distance_mm, 2), "distance_in": round(d.distance_mm / MM_PER_IN, 3),
        "sigma_mm": round(d.sigma_mm, 3), "sigma_in": round(d.sigma_mm / MM_PER_IN, 3),
        "line": [list(map(float, d.from_point)), list(map(float, d.to_point))],
        "centre_distance_mm": round(cd.distance_mm, 2), "centre_sigma_mm": round(cd.sigma_mm, 3),
        "in_front_arc": in_half_plane_arc(feet[a], feet[b], "front").verdict.to_json(),
        "in_rear_arc": in_half_plane_arc(feet[a], feet[b], "rear").verdict.to_json(),
        "line_of_sight": {"clear": sight.clear, "blocked_by": list(sight.blocked_by),
                          "line": [list(sight.line[0]), list(sight.line[1])]},
    }

"""Hand-worked geometry cases, like perft files for a chess move generator: each
file in tests/geometry_cases holds inputs and the answers worked out by hand."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import shapely

from companion import geometry as g

CASES = Path(__file__).parent / "geometry_cases"


def car(spec, car_id=1, points=()):
    x, y, h, length, width, *sig = spec
    sigma_mm, sigma_deg = (sig + [0.0, 0.0])[:2]
    return g.Footprint(car_id, g.Pose(x, y, h, sigma_mm, sigma_deg), length, width,
                       name=f"car{car_id}", points=tuple(tuple(p) for p in points))


def bounds(poly):
    return [round(v, 4) for v in poly.bounds]


def _verdict(v):
    return {"margin_mm": v.margin_mm, "outcome": v.outcome}


def run(case):
    op = case["op"]
    a = car(case["a"], 1, case.get("a_points", ())) if "a" in case else None
    b = car(case["b"], 2) if "b" in case else None
    if op in ("closest_distance", "centre_distance"):
        d = getattr(g, op)(a, b)
        return {"distance_mm": d.distance_mm, "from_x": d.from_point[0], "from_y": d.from_point[1],
                "to_x": d.to_point[0], "to_y": d.to_point[1]}
    if op == "point_distance":
        d = g.point_distance(a, case["a_point"], b, case.get("b_point"))
        return {"distance_mm": d.distance_mm}
    if op == "within_inches":
        d = g.closest_distance(a, b)
        return {"distance_mm": d.distance_mm, "outcome": d.within(g.inches(case["inches"])).outcome}
    if op == "half_plane":
        return _verdict(g.in_half_plane_arc(a, b, case["side"], case["mode"]).verdict)
    if op == "sector":
        sector = g.Sector.of(a.pose, case["facing"], case["width"], case.get("radius"))
        return _verdict(g.in_sector(sector, b, case["mode"]).verdict)
    if op == "sight":
        others = [car(case["c"], 3)] if "c" in case and case.get("cars_block") else []
        terrain = [g.Terrain.from_points(p) for p in case.get("terrain", [])]
        sight = g.line_of_sight(a, b, terrain, others, mode=case["mode"],
                                grazing_blocks=case.get("grazing_blocks", False))
        return {"clear": sight.clear}
    if op in ("template", "boarding_marks", "move_region"):
        length = g.inches(case.get("length_in", 9))
        place = case.get("place", "forwards")
        template = (g.MoveTemplate.centred_on(a, length) if place == "centred"
                    else g.MoveTemplate.at_front_bumper(a, place == "forwards", length))
        if op == "boarding_marks":
            return {"marks": [[round(v, 4) for v in m] for m in template.boarding_marks()]}
        if op == "move_region":
            region = g.move_region(a, template, [car(o, 10 + k) for k, o in enumerate(case["others"])])
            out = {"area": region.polygon.area}
            if "bumper" in case:
                out.update(_verdict(region.allows(case["bumper"])))
            return out
        shape = template.box(case["box"]) if "box" in case else (
            template.section(case["section"]) if "section" in case else template.polygon)
        return {"bounds": bounds(shape)}
    if op == "swept_straight":
        path = g.swept_path(a, g.straight(a.pose, case["distance"], case.get("drift", 0.0)))
        return {"area": path.area, "bounds": bounds(path)}
    if op == "swept_turn":
        poses = g.turning(a.pose, case["angle"], case["radius"])
        path = g.swept_path(a, poses)
        end = poses[-1]
        return {"covers_start": bool(shapely.covers(path.buffer(1e-6), a.polygon)),
                "covers_end": bool(shapely.covers(path.buffer(1e-6), a.at(end).polygon)),
                "end": [round(end.x_mm, 4), round(end.y_mm, 4), round(end.heading_deg, 4)]}
    if op == "behind":
        zone = g.directly_behind(a, case["length"])
        return _verdict(g.overlaps(zone, b)) if b is not None else {"bounds": bounds(zone)}
    if op == "radius":
        return _verdict(g.within_radius(case["point"], case["radius"], b))
    if op == "gate":
        gate = g.Gate(tuple(case["gate"][0]), tuple(case["gate"][1]))
        before, after = car(case["before"]), car(case["after"])
        return {"crossing": gate.crossing(before, after), "past_rear": gate.distance_past(after, "rear"),
                "past_front": gate.distance_past(after, "front")}
    if op in ("grid", "grid_centre"):
        grid = g.SquareGrid(g.Pose(*case["origin"]), case["square"], *case["size"])
        if op == "grid_centre":
            return {"centre": [round(v, 4) for v in grid.centre_of(*case["square_at"])]}
        square = grid.square_of(case["point"])
        return {"square": list(square) if square is not None else None}
    if op == "judge":
        v = g.judge("distance", case["value"], case["threshold"], case["sigma"], at_most=case.get("at_most", True))
        return {**_verdict(v), "text": v.describe("in")}
    if op == "rig":
        rig = g.Articulated(car(case["tractor"], 1), car(case["trailer"], 2), tuple(case["tractor_hitch"]),
                            tuple(case["trailer_hitch"]))
        return {"gap_mm": rig.hitch_gap_mm, "articulation_deg": rig.articulation_deg}
    raise AssertionError(f"unknown op {op}")


def all_cases():
    for path in sorted(CASES.glob("*.json")):
        for case in json.loads(path.read_text())["cases"]:
            yield pytest.param(case, id=f"{path.stem}: {case['name']}")


@pytest.mark.parametrize("case", list(all_cases()))
def test_hand_worked_case(case):
    got = run(case)
    for key, want in case["expect"].items():
        have = got[key]
        if isinstance(want, float) or (isinstance(want, int) and not isinstance(want, bool) and isinstance(have, float)):
            assert have == pytest.approx(want, abs=2e-3), f"{key}: {have} != {want}"
        elif isinstance(want, list) and want and isinstance(want[0], (int, float, list)):
            assert np.allclose(np.array(have, float), np.array(want, float), atol=2e-3), f"{key}: {have} != {want}"
        else:
            assert have == want, f"{key}: {have!r} != {want!r}"


def test_every_geometry_function_has_hand_worked_cases():
    ops = {c.values[0]["op"] for c in all_cases()}
    assert ops >= {"closest_distance", "centre_distance", "point_distance", "half_plane", "sector", "sight",
                   "template", "boarding_marks", "move_region", "swept_straight", "swept_turn", "behind",
                   "radius", "gate", "grid", "grid_centre", "judge", "rig"}

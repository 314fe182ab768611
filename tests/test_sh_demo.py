"""Shattered Highways' demo (issue 23, point 4): the starter fleets field a War Rig as a rig
("Vehicles": Rigs, two guns, side mounts allowed), and the demo table carries the book's
play space: a highway with room on either side ("Play Space"), no gates, nothing standing in
the road."""

from __future__ import annotations

import copy

import pytest
import shapely

from calibration.tablefile import TERRAIN_KINDS
from companion.commands.serve import with_scenery
from companion.geometry import Footprint, Pose
from companion.rules.base import RulesError, rule_system
from companion.scene import parse_scene
from vision.demo import demo_table


def demo_game():
    rules = rule_system("shattered_highways")
    table = demo_table()
    cars = [(c.id, c.name, c.length_mm, c.width_mm) for c in table.cars]
    layout = rules.demo_layout(cars, (table.width_mm, table.depth_mm))
    scene = parse_scene({"rules": "shattered_highways", "table": {"width_mm": table.width_mm, "depth_mm": table.depth_mm},
                         "cars": [{"id": m, "name": n, "x_mm": layout[m][0], "y_mm": layout[m][1], "heading_deg": 0.0,
                                   "length_mm": ln, "width_mm": w} for m, n, ln, w in cars]})
    state = rules.new_game(rules.starter_rosters([(m, n) for m, n, *_ in cars]), scene)
    return rules, table, layout, state


def test_the_demo_fleets_field_a_war_rig_as_a_rig():
    rules, _, _, state = demo_game()
    rig = next(v for v in state.vehicles.values() if v.name == "War Rig")
    assert rig.cls == "rig" and rig.hp == {"tractor": 25, "trailer": 25}
    assert [w.mount for w in rig.weapons] == ["left", "right"]
    assert [part for _, part in rig.seats] == ["tractor", "tractor", "trailer", "trailer", "trailer", "trailer"]
    # Its card shows both parts, and its forms a rig's sideswipe.
    assert {h["part"] for h in rules.card(state, rig.marker)["hp"]} == {"tractor", "trailer"}
    ram = next(s for s in rules.action_specs(state, rig.marker) if s.act == "ram")
    assert ram.field("second_target") is not None


def test_the_demo_table_is_a_highway_with_rough_roadsides_and_no_gates():
    rules, table, layout, state = demo_game()
    scenery = rules.demo_scenery((table.width_mm, table.depth_mm))
    assert scenery["gates"] == []
    assert [t["name"] for t in scenery["terrain"]] == ["Roadside (near side)", "Roadside (far side)"]
    assert {t["kind"] for t in scenery["terrain"]} <= set(TERRAIN_KINDS)
    # Nothing lies under the pack, the anchors or off the table; the highway between is 8 lanes.
    cars = [Footprint(m, Pose(*layout[m]), v.length_mm, v.width_mm).polygon for m, v in state.vehicles.items()]
    for t in scenery["terrain"]:
        poly = shapely.Polygon(t["points"])
        assert shapely.box(0, 0, table.width_mm, table.depth_mm).contains(poly)
        assert not any(poly.intersects(c) for c in cars)
        assert not any(poly.intersects(shapely.Point(a.x_mm, a.y_mm).buffer(a.size_mm / 2 * 1.5)) for a in table.anchors)
    near, far = (shapely.Polygon(t["points"]).bounds for t in scenery["terrain"])
    assert far[1] - near[3] == pytest.approx(406.4)
    # The demo applies it: the table's own bus and scrap heap (another system's) and its gates go.
    dressed = with_scenery(table, rules)
    assert [t.name for t in dressed.terrain] == ["Roadside (near side)", "Roadside (far side)"] and dressed.gates == ()


def test_in_the_demo_pack_a_car_can_board_the_one_beside_it():
    """The book's 2 in lanes: the Interceptor's neighbour is within a Board's 1 in."""
    rules, _, _, state = demo_game()
    board = next(s for s in rules.action_specs(state, 10) if s.act == "board")
    assert board.field("target").allowed({})


def test_the_demo_rig_rides_between_two_of_maxs_cars():
    """The lanes from the near side: Interceptor, Buggy, War Rig, Hearse, Rust Bucket. A rig's
    multi-nudge ("Rigs can Ram/Nudge multiple vehicles from the side") of the Buggy and the
    Hearse, both Max's, is in reach from the start: the rules take it up to its first die (the
    Move into position), where a car two lanes away would be refused as out of reach."""
    rules, _, layout, state = demo_game()
    lanes = [state.vehicles[m].name for m in sorted(layout, key=lambda m: layout[m][1])]
    assert lanes == ["Interceptor", "Buggy", "War Rig", "Hearse", "Rust Bucket"]
    sides = {state.vehicles[m].owner for m in (13, 14)}
    assert sides == {"Max"} and state.vehicles[12].owner == "Furiosa"
    gen = rules.resolve(copy.deepcopy(state), {"act": "nudge", "vehicle": 12, "target": 13, "second_target": 14})
    assert "Move into position to nudge the Buggy, Hearse" in next(gen).describe()
    with pytest.raises(RulesError, match="out of the War Rig's reach"):
        next(rules.resolve(copy.deepcopy(state), {"act": "nudge", "vehicle": 12, "target": 13, "second_target": 10}))

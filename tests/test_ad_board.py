"""Alpha Destructicus: everything that acts is on the board, with one name everywhere. A freak on
foot is drawn where his walk, climbing in, grabbing hold and jacking are measured from, his name
on him; a car is called by the table's name in the game as on the page (the page labels the
table file's cars; the roster's sample gives only what the car is)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import shapely

from companion.dice import FixedChoices, FixedDice
from companion.geometry import Footprint, Pose
from companion.race import gates_from_posts
from companion.rules.base import RulesError, rule_system
from companion.scene import Scene, parse_scene
from companion.session import GameSession

BASE = json.loads((Path(__file__).resolve().parents[1] / "examples" / "scenarios" /
                   "ad-01-gate-scoring.json").read_text(encoding="utf-8"))


def demo_game(demo_table):
    """The demo table's cars where Alpha Destructicus's demo puts them, with its starter rosters:
    what `./dev demo --rules alpha_destructicus` starts."""
    rules = rule_system("alpha_destructicus")
    cars = [(c.id, c.name, c.length_mm, c.width_mm) for c in demo_table.cars]
    layout = rules.demo_layout(cars, (demo_table.width_mm, demo_table.depth_mm))
    feet = tuple(Footprint(c.id, Pose(*layout[c.id]), c.length_mm, c.width_mm, c.name) for c in demo_table.cars)
    scene = Scene("alpha_destructicus", demo_table.width_mm, demo_table.depth_mm, feet, (), "the demo table",
                  gates_from_posts(demo_table.gates))
    rosters = rules.starter_rosters([(c.id, c.name) for c in demo_table.cars])
    return rules, rules.new_game(rosters, scene), rosters


def test_the_game_calls_each_car_by_the_name_the_page_labels_it_with(demo_table):
    """The page labels a car with the table file's name (the War Rig); the game's piece, its card,
    its events and its targets said another (Sarge, the sample it plays as)."""
    rules, state, rosters = demo_game(demo_table)
    table_names = {c.id: c.name for c in demo_table.cars}
    assert {m: p.name for m, p in rules.pieces(state).items()} == table_names
    assert all(v["name"] == table_names[v["marker"]] for r in rosters for v in r["vehicles"])
    war_rig = next(v for r in rosters for v in r["vehicles"] if v["marker"] == 12)
    assert war_rig["sample"] == "sarge" and state.vehicles[12].type == "truck"       # the sample: what it is
    assert rules.card(state, 12)["name"] == "War Rig"
    assert {t["name"] for m in rules.pieces(state) for t in rules.targets(state, m)} <= set(table_names.values())
    # And in what a resolution asks and says: the War Rig's engine, not Sarge's.
    s = GameSession(rules, state, None, FixedChoices(["Player 1"]))
    s.start_round({})
    s.act({"act": "repair", "freak": "Freak 1.2", "component": "engine"})
    assert s.pending.purpose == "skill: repair the War Rig's engine (needs 3+)"


def test_a_roster_without_a_name_takes_the_tables_and_one_naming_it_otherwise_is_refused():
    rosters = copy.deepcopy(BASE["rosters"])
    cars = copy.deepcopy(BASE["cars"])
    next(c for c in cars if c["id"] == 10)["name"] = "Interceptor"
    rules = rule_system("alpha_destructicus")
    state = rules.new_game(rosters, parse_scene({**BASE, "cars": cars}))
    assert state.vehicles[10].name == "Interceptor" and state.vehicles[10].armour["front"] == 4   # a Rhinocerator
    rosters[0]["vehicles"][0]["name"] = "Rhinocerator"
    with pytest.raises(RulesError, match="the table calls marker 10 'Interceptor' and the roster calls it "
                                         "'Rhinocerator'; a car has one name everywhere"):
        rules.new_game(rosters, parse_scene({**BASE, "cars": cars}))
    rosters[0]["vehicles"][0]["name"] = "Interceptor"
    assert rules.new_game(rosters, parse_scene({**BASE, "cars": cars})).vehicles[10].name == "Interceptor"


def _session():
    rules = rule_system("alpha_destructicus")
    state = rules.new_game(copy.deepcopy(BASE["rosters"]), parse_scene(BASE))
    s = GameSession(rules, state, FixedDice([]), FixedChoices(["Ann"]))
    s.start_round({})
    return s


def _freaks(board) -> dict:
    return {c["label"]: c for c in (board or {}).get("cells", []) if c["kind"] == "freak"}


def test_freaks_on_foot_are_on_the_board_where_their_distances_are_measured_from():
    s = _session()
    drawn = _freaks(s.rules.board(s.state))
    assert set(drawn) == {"Ix", "Kez"}                                 # the drivers ride on their cars' markers
    for name, at in (("Ix", (300, 600)), ("Kez", (600, 600))):
        ring = shapely.Polygon(drawn[name]["polygon"])
        assert ring.centroid.x == pytest.approx(at[0], abs=0.01) and ring.centroid.y == pytest.approx(at[1], abs=0.01)
        assert 20 < 2 * ring.exterior.distance(ring.centroid) < 26      # a 1 in base
    assert "measured from" in s.rules.board(s.state)["about"]
    # He walks: the board follows; he climbs in: he rides on the car's marker, off the board.
    s.act({"act": "walk", "freak": "Ix", "to": [376.2, 600]})
    assert shapely.Polygon(_freaks(s.rules.board(s.state))["Ix"]["polygon"]).centroid.x == pytest.approx(376.2)
    s.act({"act": "board", "freak": "Ix", "vehicle": 14, "seat": "driver"})
    assert set(_freaks(s.rules.board(s.state))) == {"Kez"}
    # A freak who is down lies where he fell, and says so.
    s.state.freaks["Kez"].down = True
    assert set(_freaks(s.rules.board(s.state))) == {"Kez (down)"}
    s.state.freaks["Kez"].pos = None
    assert s.rules.board(s.state) is None                            # nobody on foot: nothing to draw

"""Issue 25 for Wasteland Rally: slow ground charged for every part of the car, an advance's one
free manoeuvre said as enforced, the arc a target is judged in said as judged, every action's
declared fields, a game begun part way through (`start_part_way`), and every die of a step in
its `rolls`."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from companion.rules.base import RulesError, rule_system
from companion.scenario import load_scenario, run_scenario
from tests.test_wasteland_rally import game

SCEN_DIR = Path(__file__).resolve().parents[1] / "examples" / "scenarios"
SCENARIOS = sorted(SCEN_DIR.glob("wr-*.json"))


def scenario(name: str, **options) -> dict:
    data = load_scenario(SCEN_DIR / name)
    data["options"] = {**data.get("options", {}), **options}
    return data


# --- slow ground ------------------------------------------------------------------------------

def test_slow_ground_by_the_centre_alone_is_the_old_reading():
    # wr-22 with slow_measure "centre": the Rustler's nose 30 mm into the sand pays nothing, so the
    # move the book refuses (11.12 in of its 10) goes ahead, and the Scrapjaw along the strip pays none.
    data = scenario("wr-22-slow-ground-any-part-of-the-car.json", slow_measure="centre")
    refused = [data["steps"][0], data["steps"][3]]
    for step in refused:
        step.pop("expect_error")
    data.update(steps=[refused[0], {"end_turn": True}, refused[1]], expect={})
    out = run_scenario(data)
    assert out["steps"][0]["move"]["slow_extra_mm"] == 0.0 and out["steps"][0]["movement"]["outcome"] == "in"
    assert out["steps"][2]["move"]["slow_extra_mm"] == 0.0 and out["steps"][2]["movement"]["outcome"] == "in"


def test_slow_ground_by_each_part_agrees_on_the_worked_cases_and_differs_driving_right_through():
    # wr-22's nose, flank and clear cases come out the same by each part (the most any one part
    # drives over sand): the nose's 30 mm, the flank's whole run, nothing.
    data = scenario("wr-22-slow-ground-any-part-of-the-car.json", slow_measure="each_part")
    from companion.scenario import check_expectations
    assert check_expectations(data, run_scenario(data)) == []
    # Driven right through: the Rustler (75 mm) from x 560 to x 760 into 100 mm of sand (x 700..800,
    # y 250..350): while any part is on it, from centre 662.5 to 760, 97.5 mm; each part: its nose
    # (597.5 to 797.5) drives 97.5 mm of sand, the most of any part; the centre 60 mm. Further on to
    # x 850 (the tail leaves at centre 837.5): any part 175 mm; each part 100 (every point crosses
    # the whole sand, none more); centre 100.
    from companion.geometry import Pose
    from tests.test_wasteland_rally import KIND_TERRAIN, place, SCENE
    cars = place(SCENE["cars"], {10: (560, 300, 0)})
    want = {"any_part": (97.5, 175.0), "each_part": (97.5, 100.0), "centre": (60.0, 100.0)}
    for reading, (part_way, through) in want.items():
        rules, st = game({"check_deployment": False, "slow_measure": reading}, cars=cars, terrain=KIND_TERRAIN)
        v = st.vehicles[10]
        assert rules.check_path(st, v, [Pose(760, 300, 0)])["slow_extra_mm"] == pytest.approx(part_way, abs=0.01)
        assert rules.check_path(st, v, [Pose(760, 300, 0), Pose(850, 300, 0)])["slow_extra_mm"] == \
            pytest.approx(through, abs=0.01), reading


@pytest.mark.parametrize("reading, through, backing", [("any_part", 175.0, 30.0), ("each_part", 100.0, 30.0),
                                                      ("centre", 100.0, 0.0)])
def test_wr26_by_each_reading(reading, through, backing):
    # wr-26: the Dart right through 100 mm of sand; the Crawler backing its nose 30 mm out of it.
    out = run_scenario(scenario("wr-26-driven-right-through-the-sand.json", slow_measure=reading))
    assert out["steps"][0]["move"]["slow_extra_mm"] == pytest.approx(through, abs=0.01)
    assert out["steps"][2]["move"]["slow_extra_mm"] == pytest.approx(backing, abs=0.01)


def test_slow_ground_on_a_turn_is_charged_for_the_ground_driven_not_the_turning():
    # A turn on the spot over sand drives no ground (its cost is the manoeuvre); driving on with the
    # nose in the sand is charged. The Rustler stands with its nose 10 mm in (x 500 on).
    rules, st = game({"check_deployment": False},
                     terrain=[{"kind": "slow", "name": "sand", "points": [[500, 100], [700, 100], [700, 260],
                                                                          [500, 260]]}])
    v = st.vehicles[20]                     # the Scrapjaw at (450, 200), 75 mm: nose at 487.5
    from companion.geometry import Pose
    v.pose = v.stood = Pose(472.5, 200, 0)  # nose at 510: 10 mm in
    m = rules.check_path(st, v, [Pose(472.5, 200, 30)])
    assert m["slow_extra_mm"] == 0.0 and m["manoeuvres"] == 1
    # backing straight out 40 mm: in the sand for the first 10 mm of it
    m = rules.check_path(st, v, [Pose(432.5, 200, 0)])
    assert m["direction"] == "backward" and m["slow_extra_mm"] == pytest.approx(10.0, abs=0.01)
    # a Rugged car pays nothing (CORE, "Rugged")
    st.vehicles[21].pose = st.vehicles[21].stood = Pose(472.5, 150, 0)
    assert rules.check_path(st, st.vehicles[21], [Pose(432.5, 150, 0)])["slow_extra_mm"] == 0.0


# --- an advance's free manoeuvre --------------------------------------------------------------

def test_an_advance_reports_one_free_manoeuvre_even_with_tank_tracks():
    out = run_scenario(load_scenario(SCEN_DIR / "wr-23-advance-one-free-manoeuvre-with-tank-tracks.json"))
    assert out["steps"][1]["move"]["free_manoeuvres"] == 1
    assert out["steps"][3]["move"]["free_manoeuvres"] == 2


# --- the arc judged ---------------------------------------------------------------------------

def test_a_car_with_its_nose_past_the_centre_line_is_in_the_front_arc_on_the_page_too():
    data = load_scenario(SCEN_DIR / "wr-24-nose-past-the-centre-line-is-the-front-arc.json")
    from companion.scene import parse_scene
    rules = rule_system("wasteland_rally", data["options"])
    st = rules.new_game(copy.deepcopy(data["rosters"]), parse_scene(data))
    arcs = rules.arc_of(st.vehicles[10].footprint(), st.vehicles[20].footprint())
    assert arcs["front"].outcome == "in" and arcs["rear"].outcome == "out"
    target = next(t for t in rules.targets(st, 10) if t["marker"] == 20)
    gun = next(w for w in target["weapons"] if w["weapon"] == "heavy_machine_gun")
    assert gun["arc"]["arc"] == "front" and "front arc" in gun["arc"]["why"]
    drop = next(w for w in target["weapons"] if w["weapon"] == "oil_dropper")
    assert drop["arc"]["arc"] == "rear" and drop["arc"]["outcome"] == "out"
    assert "so it is in the front arc" in drop["arc"]["why"]


# --- declared fields --------------------------------------------------------------------------

def test_every_action_declares_its_fields():
    rules = rule_system("wasteland_rally")
    assert set(rules.action_fields) == set(rules.handlers)


@pytest.mark.parametrize("action, words", [
    ({"act": "move", "vehicle": 10, "path": [[600, 300, 0]], "to": [600, 300, 0]}, "move: no field 'to'"),
    ({"act": "move", "vehicle": 10, "path": [600, 300, 0]}, "path must be a path"),
    ({"act": "attack", "vehicle": 10, "weapon": "laser", "target": 20}, "weapon must be one of"),
    ({"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 20, "at_2": 1}, "no field 'at_2'"),
    ({"act": "reposition", "vehicle": 10, "by": "Joe", "to": ["left", "left"]}, "to must be a pose"),
    ({"act": "campaign_mission", "campaign_round": 2.5}, "campaign_round must be a whole number"),
])
def test_a_field_unknown_or_of_the_wrong_shape_is_refused_before_anything(action, words):
    rules, st = game({"check_deployment": False})
    before = json.dumps(st.to_json(), sort_keys=True)
    with pytest.raises(RulesError, match=words):
        next(rules.resolve(st, action))
    assert json.dumps(st.to_json(), sort_keys=True) == before


# --- every roll in rolls ----------------------------------------------------------------------

@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_each_steps_rolls_list_every_die_it_threw(path):
    out = run_scenario(load_scenario(path))
    for event in out["log"]:
        thrown = sum(len(t["faces"]) for t in event["dice"])
        rolls = event["outcome"].get("rolls") if isinstance(event["outcome"], dict) else None
        assert rolls is not None and len(rolls) == thrown, (event["n"], event["kind"], thrown, rolls)
        assert [r["face"] for r in rolls] == [f for t in event["dice"] for f in t["faces"]]


# --- a game part way through ------------------------------------------------------------------

def started(block, options=None):
    rules, st = game({"check_deployment": False, **(options or {})})
    rules.start_part_way(st, block)
    return rules, st


@pytest.mark.parametrize("block, words", [
    ({"vehicle": {}}, r"state: no field .vehicle. \(its fields: round, initiative"),
    ({"vehicles": {"10": {"hp_body": 3}}}, r"state.vehicles.10: no field .hp_body. \(its fields: hp, stress"),
    ({"vehicles": {"10": {"hp": "4"}}}, "state.vehicles.10: hp must be a whole number"),
    ({"vehicles": {"10": {"hp": 11}}}, r"state.vehicles.10.hp must be from 0 to 10"),
    ({"vehicles": {"10": {"hp": 0}}}, "0 hit points is destroyed"),
    ({"vehicles": {"10": {"status": "destroyed", "hp": 3}}}, "a destroyed car has 0 hit points"),
    ({"vehicles": {"10": {"status": "parked"}}}, "status must be one of racing, destroyed, eliminated, finished"),
    ({"vehicles": {"99": {}}}, r"state.vehicles.99: no such car \(the cars: 10, 11, 20, 21\)"),
    ({"vehicles": {"10": {"stress": 4}}}, "stress must be from 0 to 3"),
    ({"vehicles": {"11": {"boost_used": True}}}, "the Dust Devil has no boost"),
    ({"vehicles": {"10": {"gates_crossed": 6}}}, "gates_crossed must be from 0 to 5"),
    ({"vehicles": {"10": {"gates_crossed": 5}}}, "has crossed every gate, so it was ranked"),
    ({"vehicles": {"10": {"status": "finished"}}}, "give its place in finish_order"),
    ({"vehicles": {"10": {"damaged_this_round": True}}}, "damaged_this_round is for a round under way"),
    ({"finish_order": [10, 10]}, "in finish_order twice"),
    ({"finish_order": [10], "vehicles": {"10": {"status": "eliminated"}}}, "its status is eliminated"),
    ({"scores": {"Bob": 2}}, r"state.scores: no player 'Bob' \(the players: Max, Joe\)"),
    ({"pools": {"Max": -1}}, "state.pools.Max must be 0 or more"),
    ({"removed_terrain": ["bus"]}, "no terrain 'bus' on the table"),
    ({"elimination_gate": 3}, "the two lap race has no elimination gate"),
    ({"first_across": {"1": 10}}, "only the arena race"),
    ({"round": -1}, "state.round must be 0 or more"),
    ({"round": 2, "initiative": ["Max"]}, "every player once"),
    ({"initiative": ["Max", "Joe"]}, "needs its number"),
    ({"round": 1, "activated": [10]}, "give its initiative too"),
    ({"round": 1, "initiative": ["Max", "Joe"], "activated": [10, 20, 11, 21]}, "round 1 is over"),
])
def test_a_state_block_is_refused_by_name_and_nothing_changes(block, words):
    rules, st = game({"check_deployment": False})
    before = json.dumps(st.to_json(), sort_keys=True)
    with pytest.raises(RulesError, match=words):
        rules.start_part_way(st, block)
    assert json.dumps(st.to_json(), sort_keys=True) == before


def test_a_state_block_sets_what_play_reaches():
    rules, st = started({"round": 2, "scores": {"Joe": 3}, "pools": {"Max": 4},
                         "vehicles": {"10": {"hp": 4, "stress": 2, "boost_used": True, "gates_crossed": 3},
                                      "11": {"status": "eliminated"}, "20": {"status": "destroyed"}},
                         "finish_order": [21], "removed_terrain": ["burnt-out bus"]})
    j = st.to_json()
    assert j["round"] == 2 and j["up"] is None and j["scores"] == {"Joe": 3, "Max": 0} and j["pools"]["Max"] == 4
    v = j["vehicles"]
    assert (v["10"]["hp"], v["10"]["stress"], v["10"]["boost_used"], v["10"]["progress"]) == (4, 2, True, 3)
    assert v["11"]["status"] == "eliminated" and j["eliminated"] == [11]
    assert v["20"]["status"] == "destroyed" and v["20"]["hp"] == 0
    assert v["21"]["status"] == "finished 1" and v["21"]["progress"] == 5 and j["finish_order"] == [21]
    assert j["removed_terrain"] == ["burnt-out bus"]
    # what follows from it: 10 - 2 (badly damaged) - 2 (stress) = 6 in
    assert rules.allowance_in(st.vehicles[10], False)[0] == 6.0
    # a game begun part way goes on: the next round is round 3
    gen = rules.start_round(st, {})
    from companion.dice import DiceThrow
    req = next(gen)
    try:
        while True:
            req = gen.send(DiceThrow((7,) if req.who == "Max" else (3,), req.dice))
    except StopIteration as stop:
        assert stop.value["round"] == 3 and stop.value["up"] == "Max"


def test_a_round_under_way_passes_the_turn_from_the_last_car_that_activated():
    rules, st = started({"round": 3, "initiative": ["Joe", "Max"], "activated": [20],
                         "vehicles": {"10": {"hp": 7, "damaged_this_round": True}}})
    assert st.round == 3 and st.up == "Max" and st.activated == [20]
    # the damage this round brings stress at the round's end (CORE, "Stress")
    assert st.vehicles[10].damaged_this_round


def test_elimination_and_arena_states():
    rules, st = started({"elimination_gate": 3, "vehicles": {"10": {"gates_crossed": 3}}},
                        {"mission": "elimination_race"})
    assert st.elimination_index == 2 and st.to_json()["elimination_gate"]["index"] == 3
    rules, st = started({"first_across": {"1": 10, "2": 20}, "scores": {"Max": 1, "Joe": 1},
                         "vehicles": {"10": {"gates_crossed": 1}, "20": {"gates_crossed": 2}}},
                        {"mission": "arena_race"})
    assert st.gate_firsts == {0: 10, 1: 20} and st.to_json()["first_across"] == {"1": 10, "2": 20}
    with pytest.raises(RulesError, match="the Rustler has crossed 0 gates, not gate 1"):
        started({"first_across": {"1": 10}}, {"mission": "arena_race"})


def test_the_worked_part_way_scenario_starts_from_its_state_block():
    out = run_scenario(load_scenario(SCEN_DIR / "wr-25-part-way-through-a-two-lap-race.json"))
    assert out["state"]["vehicles"]["10"]["progress"] == 4 and out["state"]["scores"]["Joe"] == 3

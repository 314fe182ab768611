"""Car Cult and issue 25: every action's fields declared (an unknown or misshapen field refused
by name before the rules see it), a game started part way (`start_part_way`, the scenario's
`state` block, validated as strictly as rosters), every die thrown in its step's `rolls`, and a
casualty leaving the round's order."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from companion.rules import cc_data as D
from companion.rules.base import RulesError, rule_system
from companion.scenario import load_scenario, run_scenario
from companion.scene import parse_scene
from companion.session import GameSession
from companion.dice import FixedChoices, FixedDice

from test_car_cult import ROSTERS, SCENE, rosters

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "examples" / "scenarios").glob("cc-*.json"))


def game(options=None, roster_list=None):
    rules = rule_system("car_cult", options)
    return rules, rules.new_game(copy.deepcopy(roster_list or ROSTERS), parse_scene(copy.deepcopy(SCENE)))


# --- declared fields ----------------------------------------------------------------------

def test_every_action_declares_its_fields():
    rules = rule_system("car_cult")
    assert set(rules.action_fields) == set(rules.handlers) == {"activate", "allocate", "move", "attack", "fix"}
    # Every track a car can have takes ST by its own field, a second of one too.
    assert {"st_engine", "st_machine_gun", "st_rifle_2", f"st_dangerous_driver_{D.MOST_OF_ONE}"} \
        <= set(rules.action_fields["allocate"])


@pytest.mark.parametrize("action, says", [
    # The old allocate form, an object, allocated nothing and was silently ignored (issue 25).
    ({"act": "allocate", "vehicle": 20, "allocation": {"engine": 1}}, "allocate: no field 'allocation'"),
    ({"act": "move", "vehicle": 20, "path": [[700, 300, 180]], "mine_9": [1, 2]}, "move: no field 'mine_9'"),
    ({"act": "attack", "vehicle": 20, "weapon": "cannon", "target": "Rustler"}, "attack: target must be a car's marker"),
    ({"act": "fix", "vehicle": 20, "a": ["engine", 1], "b": "cannon:1"}, "fix: a must be a text"),
    ({"act": "activate", "vehicle": 20, "downshift": 1.5}, "activate: downshift must be a whole number"),
    ({"act": "allocate", "vehicle": 20, "st_engine": "1"}, "allocate: st_engine must be a whole number"),
])
def test_an_unknown_or_misshapen_field_is_refused_by_name(action, says):
    rules, state = game()
    before = state.to_json()
    session = GameSession(rules, state, FixedDice([5, 6]), FixedChoices([]))
    session.start_round({})
    with pytest.raises(RulesError, match=says):
        session.act(action)
    assert state.to_json()["vehicles"] == before["vehicles"]


def test_a_roster_car_with_more_of_one_part_than_the_fields_hold_is_refused():
    big = copy.deepcopy(ROSTERS)
    big[0]["cars"] = [{"marker": 10, "name": "Rustler", "engine": "four_banger",
                       "crew": ["gutsy_gunner"] * (D.MOST_OF_ONE + 1)}]
    rules = rule_system("car_cult", {"build_limit": 100})
    with pytest.raises(RulesError, match=f"more than {D.MOST_OF_ONE} of one component \\(the Gutsy Gunner\\)"):
        rules.new_game(big, parse_scene(copy.deepcopy(SCENE)))


# --- every die in its step's rolls ---------------------------------------------------------

@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_die_thrown_is_in_its_steps_rolls(path):
    data = load_scenario(path)
    if data.get("expect_error"):
        return
    out = run_scenario(data, str(path))
    events = [e for e in out["log"] if not e["undone"]]
    assert events, path
    for e in events:
        thrown = [f for throw in e["dice"] for f in throw["faces"]]
        listed = [r["face"] for r in (e["outcome"] or {}).get("rolls", [])]
        assert listed == thrown, (path.name, e["kind"], e["detail"])


# --- a casualty leaves the order -------------------------------------------------------------

def test_a_car_that_explodes_before_and_after_the_turn_leaves_the_order():
    # Order Scrapjaw, Rustler, Gravedigger, Dust Devil; the Rustler is active (turn 1). The
    # Gravedigger (after it) and the Scrapjaw (before it) explode: the Rustler is still the car
    # at the turn, and the Dust Devil still follows it.
    rules, state = game()
    rules.start_part_way(state, {"round": 1, "order": [20, 10, 21, 11], "activated": [20]})
    state.active_marker = 10
    for m in (21, 20):
        car = state.vehicle(m)
        for c in car.components:
            c.zones = [D.DT] * c.az
        rules._explode(state, car, [])
        assert m not in [x for _, x in state.order]
    assert [m for _, m in state.order] == [10, 11] and state.order[state.turn][1] == 10
    assert rules.turn_info(state)["order"] == [{"player": "Max", "vehicle": 10}, {"player": "Max", "vehicle": 11}]
    rules._close_activation(state, state.vehicle(10))
    assert rules.up_next(state).marker == 11


# --- starting part way ----------------------------------------------------------------------

def test_start_part_way_sets_what_play_reaches():
    rules, state = game({"blocking_damage": "st_penalty"})
    rules.start_part_way(state, {
        "round": 3, "order": [20, 10, 21, 11], "activated": [20, 10],
        "vehicles": {"10": {"tracks": {"engine": "SSD..", "dangerous_driver": "SS", "armour": "DD"}},
                     "21": {"st_penalty": 2}},
        "mines": [{"layer": 11, "at": [400, 600], "round": 2}, {"layer": 11, "at": [450, 600]}]})
    j = state.to_json()
    assert j["round"] == 3 and j["order"] == [20, 10, 21, 11] and j["activated"] == [20, 10] and j["active"] is None
    assert j["vehicles"]["10"]["components"]["engine"] == "SSD.." and j["vehicles"]["10"]["dt"] == 3
    assert state.vehicle(21).st_penalty == 2
    assert [(m["id"], m["at"], m["round"], m["layer"]) for m in j["mines"]] == [(1, [400, 600], 2, 11),
                                                                                (2, [450, 600], 3, 11)]
    assert state.next_mine == 3
    assert rules.up_next(state).marker == 21
    assert rules.turn_text(state) == "round 3: the Gravedigger (Joe) activates next"


def test_a_round_number_alone_is_a_round_over():
    rules, state = game()
    rules.start_part_way(state, {"round": 2})
    assert rules.turn_text(state) == "round 2 is over: start the next (Round tab)"
    session = GameSession(rules, state, FixedDice([5, 6]), FixedChoices([]))
    assert session.start_round({})["round"] == 3


def test_a_car_full_of_dt_is_a_casualty_and_a_player_without_cars_has_lost():
    rules, state = game()
    full = {c: "D" * n for c, n in (("engine", 6), ("dangerous_driver", 2), ("cannon", 2), ("armour", 1))}
    full_gd = {c: "D" * n for c, n in (("engine", 7), ("dangerous_driver", 2), ("gutsy_gunner", 2),
                                        ("flamethrower", 3), ("rifle", 2))}
    rules.start_part_way(state, {"vehicles": {"20": {"tracks": full}, "21": {"tracks": full_gd}}})
    assert state.vehicle(20).exploded and state.vehicle(21).exploded
    assert state.over and state.winner == "Max"


@pytest.mark.parametrize("block, says", [
    ("round 2", "state: an object"),
    ({"rounds": 2}, "state: no field 'rounds' \\(its fields: round, order, activated, vehicles, mines\\)"),
    ({"round": -1}, "state.round: a round number"),
    ({"round": "2"}, "state: round must be a whole number"),
    ({"vehicles": {"10": {"hp_body": 3}}}, "state.vehicles.10: no field 'hp_body' \\(its fields: tracks, st_penalty\\)"),
    ({"vehicles": {"99": {}}}, "state.vehicles.99: no car with marker '99'"),
    ({"vehicles": {"10": {"tracks": {"cannon": ".."}}}}, "state.vehicles.10.tracks: no field 'cannon' \\(its fields: "
                                                          "engine, dangerous_driver, gutsy_gunner, machine_gun, armour\\)"),
    ({"vehicles": {"10": {"tracks": {"engine": "SS.."}}}}, "state.vehicles.10.tracks.engine: the Rustler's Straight "
                                                           "Five is 5 zones"),
    ({"vehicles": {"10": {"tracks": {"engine": "SSx.."}}}}, "each S \\(an ST\\), D \\(a DT\\) or \\."),
    ({"vehicles": {"10": {"tracks": {"armour": "S."}}}}, "the Rustler's Armour takes no ST"),
    ({"vehicles": {"11": {"tracks": {"reinforced_ram": "S."}}}}, "the Dust Devil's Reinforced Ram takes no ST"),
    ({"vehicles": {"10": {"tracks": {"engine": "S.S.."}}}}, "an ST right of an empty zone"),
    ({"vehicles": {"10": {"st_penalty": 1}}}, "only blocking_damage 'st_penalty'"),
    ({"order": [10, 20, 11, 21]}, "state.order: a round's order needs its 'round'"),
    ({"round": 1, "activated": [10]}, "state.activated: give the round's 'order' too"),
    ({"round": 1, "order": [10, 20, 11]}, "every car in play once each .*missing: Gravedigger"),
    ({"round": 1, "order": [10, 20, 11, 21, 10]}, "one is listed twice"),
    ({"round": 1, "order": [10, 20, 11, 99]}, "state.order: no car with marker 99"),
    ({"round": 1, "order": [10, 20, 11, 21], "activated": [20]}, "state.activated: the cars that have activated are "
                                                                   "the order's first ones"),
    ({"mines": [{"layer": 11}]}, "state.mines.0: needs 'at'"),
    ({"mines": [{"layer": 10, "at": [1, 2]}]}, "state.mines.0.layer: the Rustler has no Mines"),
    ({"mines": [{"layer": 11, "at": [1, 2], "owner": "Max"}]}, "state.mines.0: no field 'owner'"),
    ({"mines": [{"layer": 11, "at": [1300, 2]}]}, "state.mines.0.at: \\[1300, 2\\] is off the table"),
    ({"round": 1, "mines": [{"layer": 11, "at": [1, 2], "round": 2}]}, "state.mines.0.round: laid in round 2"),
    ({"mines": [{"layer": 11, "at": [1, 2, 3]}]}, "state: mines must be a list, each an object|state.mines.0: at must"),
])
def test_a_bad_state_block_is_refused_naming_it_and_changes_nothing(block, says):
    rules, state = game()
    before = state.to_json()
    with pytest.raises(RulesError, match=says):
        rules.start_part_way(state, block)
    assert state.to_json() == before and state.mines == [] and state.next_mine == 1

"""Stop The Truck! (issue 25): over every worked scenario, each step's `rolls` lists every die
its resolution threw, damage dice included, in order; every action the page offers at any point
of a scenario carries only fields its action declares; and a field the action does not have, or
of the wrong shape, is refused by name before anything is resolved."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from companion.dice import FixedChoices, FixedDice
from companion.rules.base import RulesError, rule_system
from companion.scenario import load_scenario, play_step, run_scenario
from companion.scene import parse_scene
from companion.session import GameSession

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "examples" / "scenarios").glob("st-*.json"))


def start(rules, data: dict, source: str):
    """The scenario's game: its rosters, then its part-way state block if it has one."""
    state = rules.new_game(data.get("rosters", []), parse_scene(data, source))
    if data.get("state"):
        rules.start_part_way(state, data["state"])
    return state


def _faces_in_rolls(outcome) -> list[int]:
    """Every face an outcome's `rolls` lists (the turn's start, an action, the end of a turn)."""
    return [r["face"] for r in outcome.get("rolls", [])] if isinstance(outcome, dict) else []


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_die_thrown_is_in_the_steps_rolls(path):
    out = run_scenario(load_scenario(path), str(path))
    checked = 0
    for event in out["log"]:
        thrown = [f for throw in event["dice"] for f in throw["faces"]]
        assert _faces_in_rolls(event["outcome"]) == thrown, (event["n"], event["kind"], event["detail"])
        checked += len(thrown)
    # Every die the file gives was thrown by some step, and so is in some step's rolls.
    assert checked == len(load_scenario(path).get("dice", [])) - out["dice_left"]


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_offered_field_is_declared_all_through_the_scenario(path):
    """The page's specs at every step of the scenario (action_specs refuses a spec offering a
    field its action does not declare), for every vehicle."""
    data = load_scenario(path)
    rules = rule_system(data["rules"], data.get("options"))
    state = start(rules, data, str(path))
    session = GameSession(rules, state, FixedDice(data.get("dice", [])), FixedChoices(data.get("choices", [])))
    offered = set()
    for n, step in enumerate(data["steps"]):
        for m in rules.pieces(session.state):
            for spec in rules.action_specs(session.state, m):
                offered.add(spec.act)
                assert {f.name for f in spec.fields} <= set(rules.action_fields[spec.act]), (n, spec.act)
        try:
            play_step(session, step)
        except RulesError:
            assert step.get("expect_error"), (n, step)
    assert offered


def test_an_unknown_or_misshapen_field_is_refused_by_name_and_nothing_changes():
    data = load_scenario(next(p for p in SCENARIOS if p.name.startswith("st-21")))
    rules = rule_system(data["rules"], data.get("options"))
    state = start(rules, data, "st-21")
    session = GameSession(rules, state, FixedDice([]), FixedChoices([]))
    session.start_round({})
    before = copy.deepcopy(session.state.to_json())
    cases = [({"act": "select", "vehicle": 3, "box": "2:3", "bomb_1": [9, 3]}, "select: no field 'bomb_1'"),
             ({"act": "select", "vehicle": 3, "box": ["2:3"]}, "select: box must be a text"),
             ({"act": "select", "vehicle": 1, "box": "2:3", "bomb1": "9,3"},
              "select: bomb1 must be a list, each a whole number"),
             ({"act": "select", "vehicle": "3", "box": "2:3"}, "select: vehicle must be a car's marker"),
             ({"act": "shoot", "vehicle": 3, "at": "tyres"}, "shoot: at must be one of vehicle, harpoonist, snake"),
             ({"act": "drop", "vehicle": 3, "payload": "mine"}, "drop: payload must be one of bomb, snake"),
             ({"act": "truck_sideways", "vehicle": 1, "to": [650, 600, 0]}, "truck_sideways: no field 'to'"),
             ({"act": "avoid", "vehicle": 3, "to": [1, 2]}, "avoid: to must be a pose")]
    for action, words in cases:
        with pytest.raises(RulesError) as e:
            session.act(action)
        assert str(e.value).startswith(words), str(e.value)
        assert session.state.to_json() == before and session.pending is None

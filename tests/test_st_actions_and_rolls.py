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


# The paths the worked scenarios do not throw dice on, each checked the same way: every face the
# action took is in its outcome's rolls, in order.
from tests.test_stop_the_truck import Game, at, gyro_setup, red_setup, shoot_setup  # noqa: E402


def _rolled(g, dice, **action) -> dict:
    start = g.dice.used
    out = g.act(list(dice), **action)
    assert [r["face"] for r in out["rolls"]] == g.dice.faces[start:g.dice.used] == list(dice), out["rolls"]
    return out


def test_the_red_tables_own_dice_are_in_the_rolls():
    # A failed red roll; RED 5, engine fire, 1d10/2.
    out = _rolled(red_setup("typed"), [9, 5, 7], act="drive_roll", vehicle=11)
    assert "engine fire" in " ".join(out["events"])
    # RED 10, the big accident: the roll to come out alive.
    _rolled(red_setup("typed"), [9, 10, 3], act="drive_roll", vehicle=11)
    # RED 9, roll twice on this table.
    _rolled(red_setup("typed"), [9, 9, 1, 2], act="drive_roll", vehicle=11)


def test_a_blue_fail_sent_to_the_red_table_keeps_every_die():
    g = Game({10: at(3, 4)}, extra={10: {"driver_skill": 3}})
    g.round()
    g.picks({10: "2:4 1L"}, truck="2:3")
    g.act(act="move", vehicle=10, to=at(4, 5))
    out = _rolled(g, [9, 10, 1], act="drive_roll", vehicle=10)
    assert "roll on the red table" in " ".join(out["events"])


def test_the_gyros_bomb_in_its_hand_keeps_every_die():
    out = _rolled(gyro_setup(), [1, 1, 4], act="drop", vehicle=9, target=11, payload="bomb")
    assert out["result"] == "hit"


def test_a_waking_snakes_bite_and_its_red_roll_are_in_the_turns_rolls():
    g = Game({11: at(3, 3)}, {"snake_table": "sheet"})
    g.v(11).snake = {"active": 0, "asleep": True}
    start = g.dice.used
    out = g.round([1, 10, 9, 1])
    assert [r["face"] for r in out["rolls"]] == g.dice.faces[start:] == [1, 10, 9, 1]


def test_max_s_red_roll_from_a_shot_keeps_every_die():
    g = shoot_setup({12: at(3, 5)})
    out = _rolled(g, [1, 8, 9, 1], act="shoot", vehicle=12, at="max")
    assert "red driving roll: 9 against 7: failed" in " ".join(out["events"])

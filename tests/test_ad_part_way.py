"""Alpha Destructicus: a game started part way through (a scenario's "state" block), every die of a
step in its `rolls`, and every jump the page offers taken (issue 25)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

import companion.scenario as scenario_mod
from companion.rules.base import rule_system
from companion.rules.base import RulesError
from companion.scenario import load_scenario, run_scenario
from companion.scene import parse_scene

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "examples" / "scenarios").glob("ad-*.json"))
GATES = next(p for p in SCENARIOS if p.name.startswith("ad-37-"))
JUMP = next(p for p in SCENARIOS if p.name.startswith("ad-38-"))


def _game(block: dict, options: dict | None = None, source: Path = GATES):
    data = load_scenario(source)
    rules = rule_system("alpha_destructicus", {**data.get("options", {}), **(options or {})})
    state = rules.new_game(data["rosters"], parse_scene(data))
    rules.start_part_way(state, block)
    return rules, state


def test_the_state_block_sets_what_play_reached():
    rules, state = _game({
        "round": 3, "scores": {"Ann": 2, "Bob": 1}, "destroyed_by": {"Bob": 1},
        "vehicles": {"11": {"armour": {"front": 0, "top": 0}, "components": {"engine": "working", "booster": "destroyed"},
                            "burning": True, "pending": {"table": "glancing", "result": 6, "heading_deg": 90},
                            "last_gate": "Gate 2"},
                     "12": {"destroyed": True, "last_driver": "Zed"}},
        "freaks": {"Zed": {"wounds": 2, "down": True, "moved": True}, "Mo": {"aboard": 11, "seat": "passenger"},
                   "Kez": {"out": True}, "Pox": {"at": [500, 500]}}})
    dragster, rhino = state.vehicles[11], state.vehicles[12]
    assert dragster.armour == {"front": 0, "side": 1, "back": 1, "top": 0} and dragster.functional
    assert dragster.component("booster").status == "destroyed" and dragster.burning
    assert (dragster.pending, dragster.pending_table, dragster.pending_heading) == (6, "glancing", 90.0)
    assert dragster.last_gate == "Gate 2" and rhino.destroyed and rhino.last_team == "Ann"
    zed = state.freaks["Zed"]
    assert (zed.wounds, zed.down, zed.moved) == (2, True, True)
    assert state.freaks["Mo"].aboard == 11 and state.freaks["Kez"].out and state.freaks["Pox"].pos == (500.0, 500.0)
    assert state.round == 3 and state.scores == {"Ann": 2, "Bob": 1} and state.destroyed_by["Bob"] == 1
    # Round 3 is under way (Zed has moved): the chips of the others in play are in the bag.
    assert sorted(state.bag) == ["Ann", "Ann", "Bob", "Bob"]
    # The hit waiting acts at its driver's next turn: his rollover slides the way it travelled.
    assert rules._forced_due(state, dragster) is False
    state.activation += 1
    assert rules._forced_due(state, dragster) is True


def test_two_breached_walls_are_rubble_and_a_pending_hit_is_cleared():
    data = load_scenario(next(p for p in SCENARIOS if p.name.startswith("ad-39-")))
    rules = rule_system("alpha_destructicus", data["options"])
    state = rules.new_game(data["rosters"], parse_scene(data))
    rules.start_part_way(state, {"terrain": {"Bank": {"breached": [0, 2], "burning": True}},
                                 "vehicles": {"10": {"pending": None}}})
    assert state.terrain["Bank"].kind == "rubble" and state.terrain["Bank"].breached == [0, 2]
    assert state.vehicles[10].pending == 0


@pytest.mark.parametrize("block, message", [
    ({"rounds": 2}, "state: no field 'rounds' (its fields: round, chip, scores"),
    ({"vehicles": {"11": {"hp_body": 3}}}, "state.vehicles.11: no field 'hp_body' (its fields: armour, components"),
    ({"vehicles": {"99": {}}}, "state.vehicles.99: no vehicle with marker 99 (vehicles: 11, 12)"),
    ({"vehicles": {"11": {"armour": {"front": 2}}}}, "state.vehicles.11.armour.front must be a whole number from 0 to 1"),
    ({"vehicles": {"11": {"armour": {"left": 0}}}}, "state.vehicles.11.armour.left: armour facings are front"),
    ({"vehicles": {"11": {"components": {"horns": "working"}}}}, "the Dragster has no component 'horns'"),
    ({"vehicles": {"11": {"components": {"engine": "fixed"}}}}, "engine must be working, damaged or destroyed"),
    ({"vehicles": {"11": {"burning": "yes"}}}, "state.vehicles.11: burning must be true or false"),
    ({"vehicles": {"11": {"pending": {"table": "glancing", "result": 5}}}}, "only 1, 2, 3, 4, 6 wait"),
    ({"vehicles": {"11": {"pending": {"table": "glancing", "result": 6}}}}, "give the heading it travelled"),
    ({"vehicles": {"11": {"pending": {"table": "bike", "result": 2}}}}, "takes glancing and penetrating hits"),
    ({"vehicles": {"11": {"last_gate": "Gate 9"}}}, "state.vehicles.11.last_gate: no gate 'Gate 9'"),
    ({"freaks": {"Zed": {"wounds": 0}}}, "state.freaks.Zed.wounds must be a whole number from 1 to 3"),
    ({"freaks": {"Zed": {"at": [1, 2], "aboard": 11}}}, "not both"),
    ({"freaks": {"Mo": {"aboard": 11, "seat": "driver"}}}, "the Dragster has two drivers"),
    ({"freaks": {"Zed": {"seat": "roof"}}}, "say which ('aboard')"),
    ({"freaks": {"Nobody": {}}}, "state.freaks.Nobody: no freak 'Nobody'"),
    ({"freaks": {"Zed": {"out": True, "wounds": 2}}}, "give 'out' alone"),
    ({"terrain": {"Bank": {}}}, "state.terrain.Bank: no terrain 'Bank'"),
    ({"scores": {"Cy": 1}}, "state.scores.Cy: no player 'Cy'"),
    ({"scores": {"Ann": -1}}, "state.scores.Ann must be a whole number of 0 or more"),
    ({"round": 7}, "state.round must be a whole number from 0 to 6"),
    ({"freaks": {"Zed": {"moved": True}}}, "in round 0"),
    ({"round": 1, "chip": "Ann"}, "state.chip: with chips declared"),
])
def test_a_state_block_is_refused_naming_what_is_wrong(block, message):
    with pytest.raises(RulesError, match=None) as err:
        _game(block)
    assert message in str(err.value)


def test_chips_drawn_by_hand_need_the_chip_that_is_out():
    with pytest.raises(RulesError, match="say whose chip is out of the bag now"):
        _game({"round": 2, "freaks": {"Zed": {"moved": True}}}, {"chip_draw": "drawn"})
    _, state = _game({"round": 2, "freaks": {"Zed": {"moved": True}}, "chip": "Bob"}, {"chip_draw": "drawn"})
    assert state.chip == "Bob" and sorted(state.bag) == ["Ann", "Ann", "Bob", "Bob"]


def test_terrain_in_the_block_is_checked_against_its_kind():
    data = load_scenario(next(p for p in SCENARIOS if p.name.startswith("ad-39-")))
    rules = rule_system("alpha_destructicus", data["options"])
    for block, message in (({"Bank": {"breached": [4]}}, "state.terrain.Bank.breached must be a whole number from 0 to 3"),
                           ({"Bank": {"breached": [1, 1]}}, "a list of different wall numbers"),
                           ({"Bank": {"offset_mm": [10, 0]}}, "only a normal barrier is knocked away"),
                           ({"Bank": {"wall_armour": {"7": 1}}}, "Bank's walls are numbered 0 to 3")):
        state = rules.new_game(data["rosters"], parse_scene(data))
        with pytest.raises(RulesError) as err:
            rules.start_part_way(state, {"terrain": block})
        assert message in str(err.value)


# --- every die in its step's rolls --------------------------------------------------------

@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_every_die_a_step_throws_is_in_its_rolls(path, monkeypatch):
    """docs/scenarios.md: a step's `rolls` list every die thrown in it, damage dice included (a 2d6
    roll lists both faces)."""
    counted = []
    play = scenario_mod.play_step

    def counting(session, step, where="a step"):
        before = session.dice.used
        out = play(session, step, where)
        if out is not None:
            counted.append((where, session.dice.used - before, out.get("rolls", [])))
        return out
    monkeypatch.setattr(scenario_mod, "play_step", counting)
    run_scenario(load_scenario(path), str(path))
    assert counted
    for where, thrown, rolls in counted:
        listed = sum(len(r["faces"]) if "faces" in r else 1 for r in rolls)
        assert listed == thrown, f"{where}: {thrown} dice thrown, {listed} in its rolls: {json.dumps(rolls)[:300]}"


# --- jumps: every offer is taken -------------------------------------------------------------

def test_every_jump_distance_offered_is_taken_and_none_beyond():
    """ "up to the maximum possible jump" ("Jumping"): each distance the driver's player is offered,
    the longest (rounded down to the hundredth) included, flies; the page's number field spans the
    same; a hundredth more than the most is refused with the span."""
    data = load_scenario(JUMP)
    data["steps"] = [s for s in data["steps"] if not s.get("expect_error")]
    for value in [5.66, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 11.3]:
        run = copy.deepcopy(data)
        run["choices"] = [{"player": "Ann", "value": value}]
        out = run_scenario(run)
        jump = out["steps"][-1]["jump"]
        assert jump["declared_in"] == value and jump["distance_in"] == value
    # The offers are exactly those, and the spec the page shows for a jump spans them.
    rules = rule_system("alpha_destructicus", data["options"])
    state = rules.new_game(data["rosters"], parse_scene(data))
    rules.start_part_way(state, {"vehicles": {"10": {"components": {"engine": "working"}}}})
    from companion.dice import FixedChoices, FixedDice
    from companion.session import GameSession
    s = GameSession(rules, state, FixedDice([]), FixedChoices([]))
    s.start_round({})
    s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "path": data["steps"][-1]["path"]})
    assert [o["value"] for o in s.pending.options] == [5.66, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 11.3]
    most = s.state.ground_mm + s.state.turn_cost_mm
    assert rules._jump_choices(most) == [o["value"] for o in s.pending.options]
    for bad in (11.31, 5.65):
        with pytest.raises(RulesError, match="declare between 5.66 in and 11.30 in"):
            rules._check_jump(s.state, s.state.vehicles[10], s.state.ground_mm, s.state.turn_cost_mm, bad)


@pytest.mark.parametrize("most_in", [0.5, 3.0, 6.1, 9.37, 11.3071, 11.305, 11.3099, 12.0, 17.995])
def test_the_offers_and_the_check_agree(most_in):
    rules = rule_system("alpha_destructicus")
    data = load_scenario(JUMP)
    state = rules.new_game(data["rosters"], parse_scene(data))
    v = state.vehicles[10]
    most = most_in * 25.4
    picks = rules._jump_choices(most)
    assert picks[0] * 25.4 >= most / 2 - 1e-6 and picks[-1] * 25.4 <= most + 1e-6
    for d in picks:
        rules._check_jump(state, v, most, 0.0, d)
    with pytest.raises(RulesError, match="cannot be stated"):
        rules._check_jump(state, v, most, 0.0, round(picks[-1] + 0.01, 2))


def test_the_docs_state_examples_start_their_games():
    """docs/rules/alpha-destructicus.md, "Starting part way through a game": the first example is
    ad-44's block; the fuller one starts on ad-37's table."""
    import re
    doc = (Path(__file__).resolve().parents[1] / "docs" / "rules" / "alpha-destructicus.md").read_text()
    part = doc[doc.index("## Starting part way through a game"):]
    blocks = [json.loads("{" + b + "}")["state"] for b in re.findall(r"```json\n(.*?)\n```", part, re.S)]
    assert len(blocks) == 2
    ad44 = next(p for p in SCENARIOS if p.name.startswith("ad-44-"))
    assert load_scenario(ad44)["state"] == blocks[0]
    _, state = _game(blocks[1])
    assert state.vehicles[11].pending_heading == 90.0 and state.freaks["Kez"].out

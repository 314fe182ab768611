"""Shattered Highways, issue 25: the section struck is the face the cars meet along; a rig's
further targets declare their sections; every action declares its fields; every die thrown is
in its step's rolls; a game can be taken up part way through."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from companion.dice import ChoiceRequest, DiceError, FixedChoices, FixedDice, FixedPlacements
from companion.geometry import Footprint, Pose
from companion.rules.base import RulesError, rule_system
from companion.rules.shattered_highways import FIELDS, ShatteredHighways, _contact_faces
from companion.scenario import load_scenario, play_step, run_scenario, start_game
from companion.scene import parse_scene
from companion.session import GameSession

HERE = Path(__file__).resolve().parents[1] / "examples" / "scenarios"
SH = sorted(p for p in HERE.glob("*.json") if p.name[:2].isdigit() or p.name.startswith("sh-"))
FLANK = load_scenario(HERE / "47-a-rig-along-the-flank-strikes-the-flank.json")
PART_WAY = load_scenario(HERE / "52-part-way-a-battered-interceptor-goes-down.json")


def car(marker, x, y, length=75.0, width=32.0, heading=0.0):
    return Footprint(marker, Pose(x, y, heading), length, width, str(marker))


# --- the face in contact -------------------------------------------------------------------

def test_a_rig_along_a_cars_flank_meets_its_flank_not_its_nose():
    """The War Rig's tail 27.5 mm behind the Interceptor's nose, along its left: the Interceptor's
    left and the rig's right, though the rig's centre lies more ahead than beside (the old reading
    said its front)."""
    interceptor, rig = car(10, 600, 400), car(20, 685, 434, 150, 36)
    assert _contact_faces(interceptor, rig) == ("left",)
    assert _contact_faces(rig, interceptor) == ("right",)


def test_nose_to_tail_a_few_degrees_off_and_a_gap_still_read_as_front_and_rear():
    behind, ahead = car(10, 600, 400), car(11, 674, 403, 72, 31, heading=4.0)
    assert _contact_faces(behind, ahead) == ("front",) and _contact_faces(ahead, behind) == ("rear",)


@pytest.mark.parametrize("overlap_mm, faces", [(0.0, ("front", "right")), (2.0, ("front", "right")),
                                               (4.0, ("right",))])
def test_a_corner_is_a_corner_until_the_faces_share_three_mm(overlap_mm, faces):
    """The Buggy diagonally ahead-right: corner to corner, its two faces; side by side for less
    than CORNER_MM (3 mm) still a corner; 4 mm of the Interceptor's right along the Buggy: its
    right."""
    buggy = car(21, 637.5 + 34 - overlap_mm, 369, 68, 30)
    assert _contact_faces(car(10, 600, 400), buggy) == faces


def test_the_sections_struck_are_reported_and_a_declared_one_must_meet():
    out = run_scenario(copy.deepcopy(FLANK), "47")
    assert out["steps"][0]["sections"] == [{"target": 10, "with": "right", "at": "left",
                                            "how": {"with": "where they meet", "at": "where they meet"}}]
    data = copy.deepcopy(FLANK)
    data["steps"] = [{"act": "ram", "vehicle": 20, "target": 10, "at": "front", "expect_error": True}]
    data["dice"] = []
    out = run_scenario(data, "47")
    assert "the Interceptor's front does not meet the other car where they stand: left does" in out["steps"][0]["error"]


def test_a_corner_asks_the_attackers_player_only_where_the_armour_differs():
    """Scenario 49 without the Buggy's rear armour and the Interceptor's front armour: nothing to
    ask (the same numbers either way); the event names the corner."""
    data = copy.deepcopy(load_scenario(HERE / "49-a-ram-at-a-corner-is-the-attackers-to-declare.json"))
    for r in data["rosters"]:
        r["vehicles"][0]["addons"] = []
    data.pop("choices")
    data.pop("expect")
    out = run_scenario(data, "49")
    how = out["steps"][0]["sections"][0]["how"]
    assert how == {"with": "the Interceptor's front-right corner (the same armour either way)",
                   "at": "the Buggy's rear-left corner (the same armour either way)"}


def test_the_corner_question_is_the_attackers_and_names_the_armoured_face():
    data = load_scenario(HERE / "49-a-ram-at-a-corner-is-the-attackers-to-declare.json")
    rules = rule_system("shattered_highways")
    session = GameSession(rules, rules.new_game(data["rosters"], parse_scene(data)), FixedDice([5]),
                          placements=FixedPlacements(source="test", as_asked=True))
    assert session.act({"act": "ram", "vehicle": 10, "target": 21}) is None
    asked = session.pending
    assert isinstance(asked, ChoiceRequest) and asked.player == "Max"
    assert "they meet only at the Interceptor's front-right corner" in asked.purpose
    assert [o["label"] for o in asked.options] == ["the Interceptor's front (armoured)", "the Interceptor's right"]


def test_a_second_targets_sections_without_a_second_target_are_refused():
    rules = rule_system("shattered_highways")
    session = GameSession(rules, rules.new_game(FLANK["rosters"], parse_scene(FLANK)), FixedDice([]))
    with pytest.raises(RulesError, match="sections are declared against a second target, but there is none"):
        session.act({"act": "ram", "vehicle": 20, "target": 10, "at_2": "left"})
    with pytest.raises(RulesError, match="against a third target, but there is none"):
        session.act({"act": "nudge", "vehicle": 20, "target": 10, "with_3": "right"})
    assert session.log == [] and session.pending is None


def test_a_rigs_page_offers_each_targets_sections_and_every_field_is_declared():
    rules = rule_system("shattered_highways")
    state = rules.new_game(FLANK["rosters"], parse_scene(FLANK))
    for marker in (10, 20):
        for spec in rules.action_specs(state, marker):     # refuses a field its action does not declare
            assert {f.name for f in spec.fields} <= set(FIELDS[spec.act])
    ram = next(s for s in rules.action_specs(state, 20) if s.act == "ram")
    assert {"with", "at", "with_2", "at_2", "with_3", "at_3"} <= {f.name for f in ram.fields}
    assert set(ShatteredHighways.action_fields) == set(ShatteredHighways.handlers)


@pytest.mark.parametrize("action, message", [
    ({"act": "ram", "vehicle": 20, "target": 10, "at2": "left"}, "ram: no field 'at2'"),
    ({"act": "ram", "vehicle": 20, "target": 10, "at": ["left", "left"]},
     'ram: at must be one of front, rear, left, right, not ["left", "left"]'),
    ({"act": "ram", "vehicle": 20, "target": 10, "with_2": "side"}, "with_2 must be one of front, rear, left, right"),
    ({"act": "move", "vehicle": 20, "desperate": True}, "move: no field 'desperate'"),
    ({"act": "unjam", "warrior": "Joe:20:W1", "weapon": "cannon"}, "weapon must be one of front, rear, left, right, pistol"),
    ({"act": "shoot", "warrior": "Joe:20:W1", "target": "10"}, "target must be a car's marker"),
])
def test_an_unknown_field_or_a_wrong_shape_is_refused_before_anything(action, message):
    rules = rule_system("shattered_highways")
    session = GameSession(rules, rules.new_game(FLANK["rosters"], parse_scene(FLANK)), FixedDice([]))
    with pytest.raises(RulesError, match=message.replace("[", r"\[").replace("]", r"\]")):
        session.act(action)
    assert session.log == [] and session.pending is None


# --- every die in its step's rolls ----------------------------------------------------------

@pytest.mark.parametrize("path", SH, ids=[p.stem for p in SH])
def test_every_die_a_step_throws_is_in_its_rolls(path):
    """Each step's `rolls` has one row a die thrown in it (damage, Lost Control's box, a hero's
    tenacity, the initiative included), as docs/scenarios.md promises."""
    data = load_scenario(path)
    rules = rule_system(data["rules"], data.get("options"))
    dice = FixedDice(data.get("dice", []), "scenario")
    session = GameSession(rules, start_game(rules, data, parse_scene(data)), dice,
                          FixedChoices(data.get("choices", []), "scenario"),
                          placements=FixedPlacements(source="scenario", as_asked=True))
    for n, step in enumerate(data["steps"]):
        before = dice.remaining
        try:
            out = play_step(session, {k: v for k, v in step.items() if k != "expect_error"})
        except (RulesError, DiceError):
            session.cancel() if session.pending is not None else None
            assert dice.remaining == before or step.get("expect_error"), (n, step)
            continue
        thrown = before - dice.remaining
        if "undo" in step:
            continue
        rows = out.get("rolls", []) if isinstance(out, dict) else []
        assert sum(len(r.get("faces", [r["face"]])) for r in rows) == thrown, (path.name, n, rows)


# --- a game taken up part way ------------------------------------------------------------------

def part_way(block, data=PART_WAY):
    rules = rule_system("shattered_highways")
    state = rules.new_game(data["rosters"], parse_scene(data))
    before = state.to_json()
    try:
        rules.start_part_way(state, block)
    except RulesError:
        assert state.to_json() == before           # nothing changes unless the whole block is taken
        raise
    return rules, state


def test_the_worked_part_way_scenario_starts_where_its_block_says():
    rules, state = part_way(PART_WAY["state"])
    assert state.round == 2 and state.active.marker == 20
    assert state.vehicles[10].hp == {"body": 4} and [g.jammed for g in state.vehicles[10].weapons] == [True]
    assert state.warriors["Joe:20:P1"].out and state.warriors["Joe:20:D"].acted
    assert rules.turn_info(state)["up"] == "Joe"


def test_between_rounds_the_next_round_step_starts_the_round_after():
    rules, state = part_way({"round": 3})
    assert state.active is None and state.round == 3
    session = GameSession(rules, state, FixedDice([4, 2]))
    out = session.start_round({"Max": [10], "Joe": [20]})
    assert out["round"] == 4 and [r["face"] for r in out["rolls"]] == [4, 2]


@pytest.mark.parametrize("block, message", [
    ({"rounds": 2}, "state: no field 'rounds'"),
    ({"vehicles": {"10": {"hp_body": 3}}}, r"state.vehicles.10: no field 'hp_body' \(its fields: hp, destroyed"),
    ({"vehicles": {"10": {"hp": {"tractor": 3}}}}, r"state.vehicles.10.hp: no field 'tractor' \(its fields: body\)"),
    ({"vehicles": {"10": {"hp": {"body": "3"}}}}, "state.vehicles.10.hp: body must be a whole number"),
    ({"vehicles": {"10": {"hp": {"body": 30}}}}, "body has 25 hit points at most, not 30"),
    ({"vehicles": {"10": {"hp": {"body": 0}}}}, 'say "destroyed": true'),
    ({"vehicles": {"99": {}}}, "state.vehicles.99: no vehicle with marker '99'"),
    ({"vehicles": {"10": {"jammed": ["rear"]}}}, "the Interceptor has no rear gun"),
    ({"vehicles": {"10": {"controller": "Zed"}}}, "'Zed' is not playing"),
    ({"vehicles": {"20": {"decoupled": True}}}, "only a rig whose trailer is at 0"),
    ({"vehicles": {"10": {"deployed": True}}}, "the Interceptor is no hidden buggy"),
    ({"warriors": {"Max:10:Q": {"out": True}}}, r"state.warriors.Max:10:Q: no warrior 'Max:10:Q'"),
    ({"warriors": {"Max:10:D": {"hurt": 2}}}, "state.warriors.Max:10:D: no field 'hurt'"),
    ({"warriors": {"Joe:20:P1": {"vehicle": 10}}}, "say where aboard the Interceptor"),
    ({"warriors": {"Joe:20:P1": {"vehicle": 10, "seat": "D"}}}, "Max:10:D and Joe:20:P1 are both in the driver's seat"),
    ({"warriors": {"Joe:20:P1": {"vehicle": 10, "seat": "P9"}}}, "the Interceptor has no passenger seat 9 \\(its seats: D, W1, P1\\)"),
    ({"warriors": {"Joe:20:W1": {"jammed": True}}}, "only a hero carries a pistol"),
    ({"round": -1}, "state.round: the rounds played so far"),
    ({"order": [10, 20]}, "a round's order needs its 'round'"),
    ({"round": 1, "order": [10]}, "state.order leaves out the War Rig"),
    ({"round": 1, "order": [10, 20, 10]}, "names the Interceptor twice"),
    ({"round": 1, "order": [10, 20], "turn": 2}, "state.turn: the place in the order"),
    ({"round": 1, "turn": 1}, "give the round's 'order' too"),
])
def test_a_part_way_block_is_checked_as_strictly_as_a_roster(block, message):
    with pytest.raises(RulesError, match=message):
        part_way(block)


def test_a_wreck_and_a_trailer_cut_loose_take_their_riders_and_a_hidden_buggy_can_be_out():
    data = copy.deepcopy(load_scenario(HERE / "27-hidden-buggy-in-a-wreck.json"))
    rig = next(v for r in data["rosters"] for v in r["vehicles"] if v.get("hidden_buggy"))
    buggy = rig["hidden_buggy"]["marker"]
    if not any(c["id"] == buggy for c in data["cars"]):
        data["cars"].append({"id": buggy, "name": "Buggy", "x_mm": 400.0, "y_mm": 600.0, "heading_deg": 0.0,
                             "length_mm": 68.0, "width_mm": 30.0})
    rules, state = part_way({"vehicles": {str(rig["marker"]): {"hp": {"trailer": 0}, "decoupled": True},
                                          str(buggy): {"deployed": True}}}, data)
    v = state.vehicles[rig["marker"]]
    trailer_riders = [w for w in state.warriors.values() if w.id.startswith(f"{v.owner}:{v.marker}:")
                      and w.seat in ("W2", "P1", "P2", "P3")]
    assert v.decoupled and all(s in ("D", "W1") for s, _ in v.seats)
    assert trailer_riders and all(w.out for w in trailer_riders)
    assert state.vehicles[buggy].in_play and state.vehicles[buggy].pose is not None and v.hidden_buggy is None
    rules, state = part_way({"vehicles": {str(rig["marker"]): {"hp": {"tractor": 0}, "destroyed": True}}}, data)
    assert all(w.out for w in state.warriors.values() if w.vehicle == rig["marker"])
    assert state.vehicles[buggy].destroyed


def test_the_docs_example_block_is_taken_on_scenario_26s_game():
    """docs/rules/shattered-highways.md's example `state` block, as written, on the fleets of
    scenario 26 (Max's Interceptor 10 and Rust Bucket 11, Joe's War Rig 20 and Buggy 21)."""
    import json
    import re
    doc = (Path(__file__).resolve().parents[1] / "docs" / "rules" / "shattered-highways.md").read_text()
    block = json.loads("{" + re.search(r'```json\n(\s*"state": \{.*?\n\})\n```', doc, re.S).group(1) + "}")["state"]
    rules, state = part_way(block, load_scenario(HERE / "26-rig-sideswipe.json"))
    assert state.round == 2 and state.active.marker == 20
    assert state.vehicles[11].destroyed and all(w.out for w in state.warriors.values() if w.id.startswith("Max:11:"))
    assert state.warriors["Max:10:P1"].vehicle == 20 and state.warriors["Max:10:P1"].seat is None
    assert state.warriors["Max:10:D"].jammed and 11 in state.vehicles[20].rammed_with

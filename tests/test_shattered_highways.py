"""Shattered Highways: the worked scenarios, every option's readings, rosters, the session."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from companion.cli import main
from companion.dice import DiceError, DiceThrow, FixedDice
from companion.geometry import Pose
from companion.rules.base import RulesError, rule_system, rule_systems
from companion.scenario import check_expectations, load_scenario, run_scenario
from companion.scene import RULE_SYSTEMS, parse_scene
from companion.session import GameSession

ALL_SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "examples" / "scenarios").glob("*.json"))
#: Shattered Highways' own: the files whose names start with their number.
SCENARIOS = [p for p in ALL_SCENARIOS if p.name[:2].isdigit()]
BASE = load_scenario(SCENARIOS[0])


@pytest.mark.parametrize("path", ALL_SCENARIOS, ids=[p.stem for p in ALL_SCENARIOS])
def test_worked_scenario(path):
    """Every worked scenario, of every rule system, plays to what it expects."""
    data = load_scenario(path)
    assert data["rules"] in RULE_SYSTEMS and data.get("expect")
    if path in SCENARIOS:
        assert data["rules"] == "shattered_highways"
    assert check_expectations(data, run_scenario(data, str(path))) == []


def test_there_are_a_dozen_worked_scenarios_or_more():
    assert len(SCENARIOS) >= 12


def game(options=None, **changes):
    data = copy.deepcopy(BASE)
    data.update(changes)
    rules = rule_system("shattered_highways", options)
    return rules, rules.new_game(data["rosters"], parse_scene(data))


def play(options, steps, dice):
    data = copy.deepcopy(BASE)
    data.update(steps=steps, dice=dice, options=options or {})
    return run_scenario(data)


# --- every option, both ways ------------------------------------------------------

def test_option_arc_edge():
    """A target level with the shooter (its front at x 624, the Interceptor's centre at 600, its
    bumper at 637.5): in the front arc by the centre line, not by the bumper line."""
    steps = [{"poses": {"21": [590, 460, 0]}}, {"act": "shoot", "warrior": "Max:10:W1", "target": 21}]
    assert play({}, steps, [2])["steps"][1]["arc"]["outcome"] == "in"
    with pytest.raises(Exception, match="not in the front gun's arc"):
        play({"arc_edge": "bumper_line"}, steps, [2])


def test_option_template_keeps():
    rules, st = game()
    assert rules.judge_move(st, 10, Pose(700, 440, 0))["legal"]
    rules, st = game({"template_keeps": "whole_car"})
    j = rules.judge_move(st, 10, Pose(700, 440, 0))
    assert not j["legal"] and j["margin_mm"] == pytest.approx(-5.2)


def test_option_pack_heading_tolerance_deg():
    rules, st = game()
    assert not rules.judge_move(st, 10, Pose(700, 440, 8))["legal"]
    rules, st = game({"pack_heading_tolerance_deg": 10.0})
    assert rules.judge_move(st, 10, Pose(700, 440, 8))["legal"]


def test_option_board_touching():
    steps = [{"poses": {"20": [650, 440, 0]}}, {"act": "board", "warrior": "Max:10:P1", "target": 20}]
    assert play({}, steps, [5])["steps"][1]["result"] == "boarded"        # a 6 mm gap: within 1 in
    with pytest.raises(Exception, match="Board reaches"):
        play({"board_touching": "in_contact_only"}, steps, [5])


@pytest.mark.parametrize("reading, where", [
    ("far_point", [714.3, 349.2]), ("outer_edge_middle", [676.2, 349.2]), ("box_centre", [676.2, 374.6])])
def test_option_lost_control_destination(reading, where):
    out = play({"lost_control_destination": reading}, [{"act": "move", "vehicle": 10, "to": [700, 440, 0]}], [1, 1])
    assert out["state"]["vehicles"]["10"]["pose"][:2] == pytest.approx(where, abs=0.01)


def test_option_box_one():
    rules, st = game({"box_one": "rear_right"})
    xy = rules.lost_control_destination(st, st.vehicles[10], 1)
    assert list(xy) == pytest.approx([485.7, 349.2], abs=0.01)     # box 1 now at the rear-right


def test_option_machine_gun_both_on():
    rules = rule_system("shattered_highways")
    heroic = copy.deepcopy(BASE)
    heroic["rosters"][1]["hero"] = {"vehicle": 21, "seat": "W1"}      # a hero with a d10 behind the gun
    heroic.update(steps=[{"act": "shoot", "warrior": "Joe:21:W1", "target": 10}], dice=[7, 3])
    assert run_scenario(heroic)["state"]["warriors_out"] == []        # 7 is not a d10's maximum: nothing asked
    heroic["options"] = {"machine_gun_both_on": "six_or_more"}
    heroic["dice"] = [7, 3, 5]
    heroic["choices"] = ["yes", "Max:10:P1"]                          # Joe takes it, Max picks who
    assert run_scenario(heroic)["state"]["warriors_out"] == ["Max:10:P1"]


def test_option_wreck_leap_window():
    """The buggy's perfect ram wrecks the Interceptor in the buggy's activation; when it ends, the
    passenger who did not leap goes with the wreck ("this_activation"), or may still leap later
    ("any_time")."""
    steps = [{"round": {"Max": [10, 11], "Joe": [21, 20]}},
             {"act": "ram", "vehicle": 21, "target": 10, "to": [528.5, 400, 0]},
             {"end_turn": True}]
    dice = [2, 5, 4, 6, 1, 4]           # Joe first; in position; 6 against 1: 25, the buggy veers clear
    out = play({}, steps, dice)
    assert out["state"]["vehicles"]["10"]["destroyed"] and "Max:10:P1" in out["state"]["warriors_out"]
    assert any("left in the Interceptor's wreck" in e for e in out["steps"][2]["events"])
    out = play({"wreck_leap_window": "any_time"}, steps, dice)
    assert "Max:10:P1" not in out["state"]["warriors_out"]
    leap = {"act": "board", "warrior": "Max:10:P1", "target": 21, "desperate": True}
    assert play({"wreck_leap_window": "any_time"}, steps + [leap], dice + [6])["steps"][3]["result"] == "boarded"
    with pytest.raises(Exception, match="Max:10:P1 is out of the fight"):
        play({}, steps + [leap], dice + [6])


def test_option_weapons_included_and_fleet_points():
    data = copy.deepcopy(BASE)
    data["rosters"][0]["points"] = 55            # 30 + 31 with every weapon paid for
    with pytest.raises(RulesError, match="costs 61 creation points, over its 55"):
        rule_system("shattered_highways").new_game(data["rosters"], parse_scene(data))
    rule_system("shattered_highways", {"weapons_included": True}).new_game(data["rosters"], parse_scene(data))
    with pytest.raises(RulesError, match="over its 50"):
        rule_system("shattered_highways", {"fleet_points": 50}).new_game(BASE["rosters"], parse_scene(BASE))


def test_option_rig_damage_split():
    steps = [{"poses": {"20": [640, 450, 0]}}, {"act": "shoot", "warrior": "Max:11:W1", "target": 20}]
    out = play({}, steps, [5, 1])                                 # 1 + 2 = 3: 2 to the tractor, 1 trailer
    assert out["state"]["vehicles"]["20"]["hp"] == {"tractor": 23, "trailer": 24}
    out = play({"rig_damage_split": "trailer_first"}, steps, [5, 1])
    assert out["state"]["vehicles"]["20"]["hp"] == {"tractor": 24, "trailer": 23}


def test_option_decouple_success():
    rules, st = game()
    st.vehicles[20].hp["trailer"] = 0
    for option, result in ((4, "still hitched"), (3, "decoupled")):
        rules = rule_system("shattered_highways", {"decouple_success": option})
        session = GameSession(rules, copy.deepcopy(st), FixedDice([3, 3]))
        assert session.act({"act": "decouple", "vehicle": 20})["result"] == result


def test_option_ram_damage_needs_win():
    steps = [{"act": "ram", "vehicle": 21, "target": 10, "to": [528.5, 400, 0]}]
    assert play({}, steps, [4, 2, 5])["state"]["vehicles"]["10"]["hp"]["body"] == 25
    assert play({"ram_damage_needs_win": False}, steps, [4, 2, 5, 3])["state"]["vehicles"]["10"]["hp"]["body"] == 22


def test_every_option_quotes_its_rule_and_has_a_test():
    rules = rule_system("shattered_highways")
    tested = {name[len("test_option_"):] for name in globals() if name.startswith("test_option_")}
    for option in rules.options:
        assert option.rule.startswith("shattered-highways-0.3.8.txt") and len(option.doc) > 40
        assert any(option.name in t for t in tested), f"{option.name} has no test_option_ test"


def test_unknown_options_and_values_are_named():
    with pytest.raises(RulesError, match="no option 'speed'"):
        rule_system("shattered_highways", {"speed": 1})
    with pytest.raises(RulesError, match="option arc_edge: 'wide' is not one of"):
        rule_system("shattered_highways", {"arc_edge": "wide"})
    with pytest.raises(RulesError, match="no rule system 'chess'"):
        rule_system("chess")
    names = [cls.name for cls in rule_systems()]
    assert "shattered_highways" in names and set(names) <= set(RULE_SYSTEMS)


# --- rosters -------------------------------------------------------------------

@pytest.mark.parametrize("change, message", [
    (lambda r: r[0]["vehicles"][0].update({"class": "tank"}), "class must be one of buggy, car, truck, rig, not 'tank'"),
    (lambda r: r[0]["vehicles"][0].update(weapons=["front", "rear"]), "2 weapons, but a car carries at most 1"),
    (lambda r: r[0]["vehicles"][0].update(weapons=["left"]), "a car mounts weapons front, rear"),
    (lambda r: r[0]["vehicles"][0].update(addons=["hidden_buggy"]), "hidden_buggy is a rig-only add-on"),
    (lambda r: r[0]["vehicles"][0].update(addons=["armor:roof"]), "armour goes on the front, rear, left, right"),
    (lambda r: r[1]["vehicles"][1].update(marker=10), "marker 10 is already another vehicle's"),
    (lambda r: r[0].update(hero={"vehicle": 10, "seat": "X9"}), "the hero's seat"),
])
def test_roster_mistakes_are_named(change, message):
    data = copy.deepcopy(BASE)
    change(data["rosters"])
    with pytest.raises(RulesError, match=message.replace("(", r"\(").replace(")", r"\)")):
        rule_system("shattered_highways").new_game(data["rosters"], parse_scene(data))


def test_a_fleet_has_its_crews_in_their_seats():
    rules, st = game()
    assert [w.seat for w in st.crew(10)] == ["D", "W1", "P1"]
    assert st.warriors["Max:10:D"].kind == "hero" and st.warriors["Max:10:D"].skill_die == "d10"
    rig = st.vehicles[20]
    assert dict(rig.seats) == {"D": "tractor", "W1": "tractor", "W2": "trailer", "P1": "trailer",
                               "P2": "trailer", "P3": "trailer"}
    assert sum(1 for w in st.crew(20) if w.seat is None) == 4          # the reinforcements, clinging


# --- the session ---------------------------------------------------------------

def test_a_resolution_waits_for_dice_and_refuses_impossible_ones():
    rules, st = game()
    session = GameSession(rules, st, None)
    assert session.act({"act": "move", "vehicle": 10, "to": [700, 440, 0]}) is None
    assert session.pending.describe() == "1d10 Move for Max's hero Max:10:D on the Interceptor"
    with pytest.raises(DiceError, match="a d10 cannot show 11"):
        session.answer(DiceThrow((11,), ("d10",), "typed"))
    with pytest.raises(RulesError, match="waiting for dice"):
        session.act({"act": "move", "vehicle": 11, "to": [860, 400, 0]})
    out = session.answer(DiceThrow((8,), ("d10",), "typed"))
    assert out["result"] == "moved" and session.state.vehicles[10].pose == Pose(700, 440, 0)
    assert session.log[-1].dice[0]["source"] == "typed"


def test_cancel_leaves_nothing_and_undo_is_logged():
    rules, st = game()
    session = GameSession(rules, st, None)
    session.act({"act": "move", "vehicle": 10, "to": [700, 440, 0]})
    session.cancel()
    assert session.state.vehicles[10].pose == Pose(600, 400, 0) and session.log == []
    session.dice = FixedDice([8])
    session.act({"act": "move", "vehicle": 10, "to": [700, 440, 0]})
    session.undo()
    assert session.state.vehicles[10].pose == Pose(600, 400, 0)
    assert [(e.kind, e.undone) for e in session.log] == [("action", True), ("undo", False)]
    with pytest.raises(RulesError, match="nothing to undo"):
        session.undo()


def test_turn_order_and_who_may_act():
    rules, st = game()
    session = GameSession(rules, st, FixedDice([2, 5]))
    out = session.start_round({"Max": [10, 11], "Joe": [21, 20]})
    assert out["first"] == "Joe" and [o["vehicle"] for o in out["order"]] == [21, 10, 20, 11]
    with pytest.raises(RulesError, match="it is the Buggy's turn"):
        session.act({"act": "move", "vehicle": 10, "to": [700, 440, 0]})
    with pytest.raises(RulesError, match="names Buggy, which Joe owns"):
        GameSession(rules, game()[1], FixedDice([1, 2])).start_round({"Max": [10, 21], "Joe": [20]})


# --- the commands --------------------------------------------------------------

def test_rules_list_and_judge_move_commands(capsys, tmp_path):
    assert main(["rules", "list"]) == 0
    out = capsys.readouterr().out
    assert "shattered_highways" in out and "template_keeps" in out and "Move" in out
    scene = Path(__file__).resolve().parents[1] / "examples" / "scenes" / "highway.json"
    assert main(["rules", "judge-move", str(scene), "--car", "10", "--to", "700,430,0"]) == 0
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["legal"] is False and verdict["reasons"] == ["it would overlap the Rust Bucket"]
    assert main(["rules", "judge-move", str(scene), "--car", "10", "--to", "700,440,0"]) == 0
    assert json.loads(capsys.readouterr().out)["legal"] is True


def test_scenario_run_command(capsys):
    assert main(["scenario", "run", str(SCENARIOS[0]), "--check"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["steps"][0]["result"] == "moved" and out["dice_left"] == 0

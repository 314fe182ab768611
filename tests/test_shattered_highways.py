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
HERE = Path(__file__).resolve().parents[1] / "examples" / "scenarios"


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
    """"So long as the front bumper does not move outside the full template": the Interceptor
    (32 mm wide) slid 40 mm sideways has a bumper corner 5.2 mm past the 4 in template's side, and
    30 mm sideways is inside. A hand-worked review found the bumper's middle alone judged, which is
    "bumper_middle" now."""
    rules, st = game()
    j = rules.judge_move(st, 10, Pose(700, 440, 0))
    assert not j["legal"] and j["margin_mm"] == pytest.approx(-5.2, abs=0.01), j
    assert j["reasons"] == ["the front bumper ends 0.20 in outside the move template"], j
    assert j["fix"] == ["bring its front bumper 0.20 in back into the template"], j
    assert rules.judge_move(st, 10, Pose(680, 430, 0))["legal"]
    rules, st = game({"template_keeps": "bumper_middle"})
    assert rules.judge_move(st, 10, Pose(700, 440, 0))["legal"]
    rules, st = game({"template_keeps": "whole_car"})
    j = rules.judge_move(st, 10, Pose(700, 440, 0))
    assert not j["legal"] and j["margin_mm"] == pytest.approx(-5.2)


def test_option_pack_heading_tolerance_deg():
    rules, st = game()
    assert not rules.judge_move(st, 10, Pose(680, 425, 8))["legal"]
    rules, st = game({"pack_heading_tolerance_deg": 10.0})
    assert rules.judge_move(st, 10, Pose(680, 425, 8))["legal"]


def test_option_board_touching():
    steps = [{"poses": {"20": [650, 440, 0]}}, {"act": "board", "warrior": "Max:10:P1", "target": 20}]
    assert play({}, steps, [5])["steps"][1]["result"] == "boarded"        # a 6 mm gap: within 1 in
    with pytest.raises(Exception, match="Board reaches"):
        play({"board_touching": "in_contact_only"}, steps, [5])


@pytest.mark.parametrize("reading, where", [
    ("far_point", [714.3, 349.2]), ("outer_edge_middle", [676.2, 349.2]), ("box_centre", [676.2, 374.6])])
def test_option_lost_control_destination(reading, where):
    out = play({"lost_control_destination": reading}, [{"act": "move", "vehicle": 10, "to": [680, 430, 0]}], [1, 1])
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
    with pytest.raises(Exception, match=r"Max's cannon fodder \(the Interceptor's passenger 1\) is out of the fight"):
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
    for w in st.crew(20):
        if w.seat in ("W2", "P1", "P2", "P3"):     # the trailer's riders (each would be asked to leap)
            w.out = True
    for option, result in ((4, "still hitched"), (3, "decoupled")):
        rules = rule_system("shattered_highways", {"decouple_success": option})
        session = GameSession(rules, copy.deepcopy(st), FixedDice([3, 3]))
        assert session.act({"act": "decouple", "vehicle": 20})["result"] == result


def test_option_ram_damage_needs_win():
    steps = [{"act": "ram", "vehicle": 21, "target": 10, "to": [528.5, 400, 0]}]
    assert play({}, steps, [4, 2, 5])["state"]["vehicles"]["10"]["hp"]["body"] == 25
    assert play({"ram_damage_needs_win": False}, steps, [4, 2, 5, 3])["state"]["vehicles"]["10"]["hp"]["body"] == 22


def test_option_drag_chains_zone():
    """Drag chains: "any vehicle that overlaps a 1 template section directly behind them" is at -1,
    and a template section "is a 3"x4" box" ("Terms"). The War Rig alongside the Rust Bucket (its
    near side 22 mm from the Rust Bucket's centre line, 6.5 mm beyond its side) is in the 4 in box
    (the default) but not in a strip only as wide as the Rust Bucket (car_width). A hand-worked review
    found the zone as narrow as the car."""
    data = load_scenario(Path(__file__).resolve().parents[1] / "examples" / "scenarios" / "30-boarder-acts-once-a-round.json")
    section = run_scenario(data, "30")["steps"][7]["rolls"][0]["modifiers"]
    data = {**data, "options": {"drag_chains_zone": "car_width"}}
    data.pop("expect", None)
    narrow = run_scenario(data, "30")["steps"][7]["rolls"][0]["modifiers"]
    dust = {"value": -1, "reason": "in the Rust Bucket's drag chains' dust"}
    assert dust in section and dust not in narrow, (section, narrow)


def test_option_corner_contact():
    """Scenario 49: the Interceptor's front-right corner (front armour) meets the Buggy's rear-left
    corner (rear armour), nothing declared. attacker_declares (the default): Max is asked for both
    faces (the scenario's choices: front, left). either_armoured: armour on either face counts,
    no question (the Buggy takes 5 - 1, the Interceptor 2 - 1). bearing: the faces towards the
    other's centre, the Buggy's rear (armoured) and the Interceptor's right (bare)."""
    data = load_scenario(HERE / "49-a-ram-at-a-corner-is-the-attackers-to-declare.json")
    out = run_scenario(data, "49")
    assert [c["player"] for c in data["choices"]] == ["Max", "Max"] and out["steps"][0]["sections"][0]["at"] == "left"
    for option, buggy, interceptor, at in (("either_armoured", 11, 24, "rear"), ("bearing", 11, 23, "rear")):
        d = {**copy.deepcopy(data), "options": {"corner_contact": option}}
        d.pop("choices")
        out = run_scenario(d, option)
        hp = {m: out["state"]["vehicles"][m]["hp"]["body"] for m in ("21", "10")}
        assert hp == {"21": buggy, "10": interceptor} and out["steps"][0]["sections"][0]["at"] == at, (option, out)
        assert "corner" in out["steps"][0]["sections"][0]["how"]["at"]


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
    assert session.act({"act": "move", "vehicle": 10, "to": [680, 430, 0]}) is None
    assert session.pending.describe() == "1d10 Move for Max's hero on the Interceptor"
    with pytest.raises(DiceError, match="a d10 cannot show 11"):
        session.answer(DiceThrow((11,), ("d10",), "typed"))
    with pytest.raises(RulesError, match="waiting for dice"):
        session.act({"act": "move", "vehicle": 11, "to": [860, 400, 0]})
    out = session.answer(DiceThrow((8,), ("d10",), "typed"))
    assert out["result"] == "moved" and session.state.vehicles[10].pose == Pose(680, 430, 0)
    assert session.log[-1].dice[0]["source"] == "typed"


def test_cancel_leaves_nothing_and_undo_is_logged():
    rules, st = game()
    session = GameSession(rules, st, None)
    session.act({"act": "move", "vehicle": 10, "to": [680, 430, 0]})
    session.cancel()
    assert session.state.vehicles[10].pose == Pose(600, 400, 0) and session.log == []
    session.dice = FixedDice([8])
    session.act({"act": "move", "vehicle": 10, "to": [680, 430, 0]})
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
        session.act({"act": "move", "vehicle": 10, "to": [680, 430, 0]})
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
    assert main(["rules", "judge-move", str(scene), "--car", "10", "--to", "680,430,0"]) == 0
    assert json.loads(capsys.readouterr().out)["legal"] is True


def test_scenario_run_command(capsys):
    assert main(["scenario", "run", str(SCENARIOS[0]), "--check"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["steps"][0]["result"] == "moved" and out["dice_left"] == 0


# --- at the table: the page's requests, the camera's poses ------------------------------------

DEMO_CARS = ((10, "Interceptor", 75.0, 32.0), (11, "Rust Bucket", 72.0, 31.0), (12, "War Rig", 95.0, 36.0),
             (13, "Buggy", 68.0, 30.0), (14, "Hearse", 80.0, 33.0))


def test_the_demo_pack_heads_one_way_and_the_demo_rosters_fit_any_markers():
    rules = rule_system("shattered_highways")
    layout = rules.demo_layout(list(DEMO_CARS), (1219.2, 812.8))
    assert {h for _, _, h in layout.values()} == {0.0}
    lanes = sorted(y for _, y, _ in layout.values())
    assert [round(b - a, 1) for a, b in zip(lanes, lanes[1:])] == [50.8] * 4     # the book's 2 in lanes
    # Every leader a template's length (9 in) or more from the front edge ("Play Setup").
    assert all(1219.2 - (x + length / 2) >= 228.6 for (m, _, length, _), (x, _, _) in
               zip(DEMO_CARS, (layout[m] for m, *_ in DEMO_CARS)))
    scene = parse_scene({"rules": "shattered_highways", "table": {"width_mm": 1219.2, "depth_mm": 812.8},
                         "cars": [{"id": m, "name": n, "x_mm": layout[m][0], "y_mm": layout[m][1], "heading_deg": 0,
                                   "length_mm": ln, "width_mm": w} for m, n, ln, w in DEMO_CARS]})
    st = rules.new_game(rules.starter_rosters([(m, n) for m, n, *_ in DEMO_CARS]), scene)
    # A Move straight ahead from the pack is legal for every car.
    for m, *_ in DEMO_CARS:
        x, y, _ = layout[m]
        assert rules.judge_move(st, m, Pose(x + 60, y, 0.0))["legal"], m
    # The demo's fleets, by the cars' names, whatever markers they carry; any other cars: two players.
    renumbered = rules.starter_rosters([(m + 30, n) for m, n, *_ in DEMO_CARS])
    assert [r["player"] for r in renumbered] == ["Max", "Furiosa"] and renumbered[0]["hero"]["vehicle"] == 40
    assert {v["name"]: v["marker"] for r in renumbered for v in r["vehicles"]}["Buggy"] == 43
    other = rules.starter_rosters([(1, "Red"), (2, "Blue"), (3, "Green")])
    assert [[v["marker"] for v in r["vehicles"]] for r in other] == [[1, 3], [2]]


def test_an_activation_played_through_the_table_game_with_the_pages_requests(demo_table):
    """The demo table's pack, the real vision path: a round begun with typed dice, the
    Interceptor's gunner rolls a 6 (Max is asked about the bonus, Furiosa who takes it), its
    hero Moves it where it was driven on the table; then the War Rig nudges the Buggy, set down
    by hand before the action is sent, and the rules judge it from where it stood."""
    from companion.game import GameError, TableGame
    from companion.live import LiveTable
    from vision.playable import PlayableCars
    from vision.sources import SyntheticSource

    rules = rule_system("shattered_highways")
    layout = rules.demo_layout([(c.id, c.name, c.length_mm, c.width_mm) for c in demo_table.cars],
                               (demo_table.width_mm, demo_table.depth_mm))
    cars = PlayableCars(layout)
    source = SyntheticSource(demo_table, paced=False, script=cars)
    live = LiveTable(source, demo_table, source.camera)
    game = TableGame(live)
    game.demo_mover = cars.move

    def settle(extra=4):
        while True:
            f = source.read()
            live.process(f.image, f.index, f.time_s)
            if not cars.moving():
                extra -= 1
                if extra <= 0:
                    return

    settle()
    game.start("shattered_highways", {}, game.starter_rosters("shattered_highways"))
    game.start_round({"Max": [10, 13, 14], "Furiosa": [12, 11]})
    game.answer_typed([5])
    out = game.answer_typed([2])                                   # Max 5, Furiosa 2: Max first
    assert out["game"]["active"] == 10 and out["game"]["up"] == "Max"
    acts = {a["act"]: a for a in game.car(10)["actions"]}
    assert {"move", "ram", "nudge", "shoot", "board", "attack", "pass"} <= set(acts)    # every seat taken: no Change
    assert {f["name"]: f["kind"] for f in acts["nudge"]["fields"]}["push_to"] == "table_pose"

    # The gunner: 6 hits the War Rig (two lanes over, level with it: in the front arc), 3 + 2 damage.
    game.act({"act": "shoot", "warrior": "Max:10:W1", "target": 12, "at": "vehicle"})
    game.answer_typed([6])
    out = game.answer_typed([3])
    assert out["pending"]["waiting"] == "choice" and out["pending"]["player"] == "Max"
    with pytest.raises(GameError, match="this choice is Max's"):
        game.answer_choice("Furiosa", "yes")
    with pytest.raises(GameError, match="cannot act now: waiting for Max to choose"):
        game.act({"act": "move", "vehicle": 10})
    out = game.answer_choice("Max", "yes")
    assert out["pending"]["player"] == "Furiosa"
    assert {o["value"] for o in out["pending"]["options"]} == {"Furiosa:12:D", "Furiosa:12:W1", "Furiosa:12:W2",
                                                                "Furiosa:12:P1", "Furiosa:12:P2", "Furiosa:12:P3"}
    game.answer_choice("Furiosa", "Furiosa:12:P2")
    out = game.answer_typed([5])                                   # 5 against tenacity 4
    state = out["game"]["state"]
    # A rig's damage is split, the odd point to the tractor ("Shoot", option rig_damage_split).
    assert state["vehicles"]["12"]["hp"] == {"tractor": 22, "trailer": 23}
    assert state["warriors_out"] == ["Furiosa:12:P2"]

    # The hero drives 60 mm ahead on the table; the Move takes where the camera sees it.
    x, y, _ = layout[10]
    game.move_demo_car(10, x + 60.0, y + 10.0, 0.0)
    settle()
    with pytest.raises(GameError, match="read from the table by the camera"):
        game.act({"act": "move", "vehicle": 10, "to": [x, y, 0.0]})
    game.act({"act": "move", "vehicle": 10})
    out = game.answer_typed([7])
    pose = out["game"]["state"]["vehicles"]["10"]["pose"]
    assert pose == pytest.approx([x + 60.0, y + 10.0, 0.0], abs=1.0)
    out = game.end_turn()
    assert out["game"]["active"] == 12 and out["game"]["up"] == "Furiosa"

    # The War Rig nudges the Buggy in the next lane: the Buggy is set down 40 mm on by hand first.
    bx, by, _ = layout[13]
    game.move_demo_car(13, bx + 40.0, by, 0.0)
    settle()
    game.act({"act": "nudge", "vehicle": 12, "target": 13})
    for face in (6, 8):                                            # in position; the rig's hero 8
        game.answer_typed([face])
    out = game.answer_typed([2])                                   # the Buggy's driver 2: three sections
    event = out["log"][0]
    assert event["outcome"]["result"] == "nudged" and event["outcome"]["sections_won"] == {"13": 3}
    vehicles = out["game"]["state"]["vehicles"]
    assert vehicles["13"]["pose"] == pytest.approx([bx + 40.0, by, 0.0], abs=1.0)
    assert vehicles["13"]["hp"]["body"] == 14 and vehicles["12"]["hp"] == {"tractor": 21, "trailer": 23}
    assert vehicles["12"]["pose"] == pytest.approx(list(layout[12]), abs=1.0)   # it did not go on


def test_the_whole_game_takes_every_action_through_the_pages_specs():
    """sh-game-whole.json played step by step as the page plays it: each action checked against
    the acting car's spec (no field outside it), the camera's fields filled from where the step
    puts the cars (or where they stand), the choices asked of the players they belong to; and
    every act of the book is taken."""
    from companion.dice import ChoiceRequest
    from companion.rules.actions import CAMERA_KINDS
    from companion.rules.shattered_highways import ACTIONS

    path = Path(__file__).resolve().parents[1] / "examples" / "scenarios" / "sh-game-whole.json"
    data = load_scenario(path)
    rules = rule_system("shattered_highways", data.get("options"))
    session = GameSession(rules, rules.new_game(data["rosters"], parse_scene(data)), FixedDice(data["dice"]))
    choices = list(data["choices"])
    used, asked = set(), []

    class Table:
        """The camera's answers: where the step puts a car, else where it stands."""
        def __init__(self, spec, step):
            self.spec, self.step = spec, step

        def pose_of(self, marker):
            for f in self.spec.fields:
                if f.kind == "table_pose" and f.name in self.step and \
                        (f.of == marker or self.step.get(f.of) == marker):
                    return list(self.step[f.name]) + [0.3, 0.2]
            p = session.state.vehicles[marker].pose
            return [p.x_mm, p.y_mm, p.heading_deg, 0.3, 0.2]

        def path_of(self, marker):
            return [self.pose_of(marker)]

        def point(self, value, what):
            return tuple(value)

    for n, step in enumerate(data["steps"]):
        if "round" in step:
            out = session.start_round(step["round"])
        elif step.get("end_turn"):
            out = session.end_turn()
        else:
            marker = rules.actor_marker(session.state, step)
            specs = {s.act: s for s in rules.action_specs(session.state, marker)}
            assert step["act"] in specs, f"step {n}: {step['act']} is not among {sorted(specs)}"
            spec = specs[step["act"]]
            sent = {k: v for k, v in step.items() if spec.field(k) is None or spec.field(k).kind not in CAMERA_KINDS}
            filled = spec.fill(sent, Table(spec, step))
            for k, v in step.items():          # the page's fields as sent, the camera's where the step put them
                assert filled[k] == v or filled[k][:3] == v, (n, k)
            used.add(step["act"])
            out = session.act(filled)
        while out is None and isinstance(session.pending, ChoiceRequest):
            c = choices.pop(0)
            asked.append((session.pending.player, c["player"]))
            out = session.choose(c["player"], c["value"])
        assert out is not None, f"step {n} waits for {session.waiting_for()}"
    assert used == set(ACTIONS) and not choices
    assert asked == [("Max", "Max"), ("Joe", "Joe"), ("Joe", "Joe")] + [("Joe", "Joe")] * 4   # the trailer's four
    outcome = {"state": session.state.to_json(), "dice_left": session.dice.remaining}
    assert check_expectations({"expect": {k: v for k, v in data["expect"].items() if k.startswith("state")}},
                              outcome) == []


def test_a_nudges_evidence_shows_the_reach_where_the_target_stood_and_where_it_was_set_down():
    data = load_scenario(next(p for p in SCENARIOS if p.name.startswith("23-")))
    rules = rule_system("shattered_highways")
    st = rules.new_game(data["rosters"], parse_scene(data))
    step = data["steps"][0]
    st.vehicles[10].pose = Pose(*step["push_to"])             # the camera sees it set down already
    shapes = rules.evidence(st, step, 21, 10)
    by = {s["label"]: s for s in shapes if s["label"]}
    centre = lambda s: [sum(p[i] for p in s["points"]) / 4 for i in (0, 1)]  # noqa: E731
    assert centre(by["Interceptor stood"]) == pytest.approx([600.0, 400.0])
    assert centre(by["set down"]) == pytest.approx(step["push_to"][:2])
    assert "reach" in by and sum(1 for s in shapes if s["role"] == "template") == 4


# --- daisy-chained nudges, and a move set down against another car --------------------

CHAIN = json.loads((Path(__file__).resolve().parents[1] / "examples" / "scenarios"
                    / "29-nudge-daisy-chain.json").read_text())


def _chain_play(step: dict, dice: list[int]) -> dict:
    data = copy.deepcopy(CHAIN)
    data.update(steps=[step], dice=dice)
    return run_scenario(data)


def test_a_daisy_chain_stops_where_a_struck_car_keeps_control():
    """The Rust Bucket keeps control (5): the War Rig it would have been knocked into is never
    struck, and stands where it was."""
    out = _chain_play(CHAIN["steps"][0], [4, 6, 2, 5])
    events = out["steps"][0]["events"]
    assert "the Rust Bucket keeps control" in events
    assert not any("War Rig" in e for e in events)
    assert out["state"]["vehicles"]["20"]["pose"][:2] == [941.0, 400.0]
    assert out["dice_left"] == 0


def test_a_link_of_the_chain_needs_the_car_before_it_knocked_against_it():
    step = dict(CHAIN["steps"][0])
    del step["chain_to"]                             # the Rust Bucket knocked nowhere, yet into the rig
    with pytest.raises(Exception, match="knocked on into another only after"):
        _chain_play(step, [4, 6, 2, 2])
    step = dict(CHAIN["steps"][0], chain_to=[800, 400, 0])   # knocked, but 36 mm short of the rig
    with pytest.raises(Exception, match="to knock the Rust Bucket into the War Rig, set the Rust Bucket down against it"):
        _chain_play(step, [4, 6, 2, 2])
    step = dict(CHAIN["steps"][0], into_2=10)        # a car already in the chain
    with pytest.raises(Exception, match="already in the chain"):
        _chain_play(step, [4, 6, 2, 2])


def test_a_car_set_down_against_another_within_the_cameras_doubt_is_too_close_to_call_not_refused():
    """Touching is not overlapping; a camera reads a touch to within its doubt. Set down 0.2 mm
    into the Rust Bucket with 0.2 mm of doubt: too close to call, so the move stands. 3 mm into
    it is refused."""
    rules, state = game()
    v = state.vehicle(10)
    rust = state.vehicle(11)
    touching_x = rust.pose.x_mm - (rust.length_mm + v.length_mm) / 2
    judged = rules.judge_move(state, 10, Pose(touching_x + 0.2, 400.0, 0.0, 0.2, 0.1))
    assert judged["legal"] and judged["verdict"] == "too close to call", judged
    judged = rules.judge_move(state, 10, Pose(touching_x + 3.0, 400.0, 0.0, 0.2, 0.1))
    assert not judged["legal"] and "overlap the Rust Bucket" in judged["reasons"][0], judged


# --- the rules review of issue 16 ---------------------------------------------------------

def test_option_game_end():
    """The book has no end of the game: by default the last player controlling a vehicle in the
    fight wins; "table_decides" never calls it."""
    for option, winner in (("last_fleet_running", "Joe"), ("table_decides", None)):
        rules, st = game({"game_end": option})
        for m in (10, 11):
            st.vehicles[m].destroyed = True
        events = []
        rules._check_winner(st, events)
        assert st.winner == winner


def test_a_rigs_targets_list_is_taken_as_its_target_fields():
    """docs/scenarios.md names a rig's several targets `targets`: it is the page's `target`,
    `second_target`, `third_target`, not a missing field."""
    data = json.loads((Path(__file__).resolve().parents[1] / "examples" / "scenarios"
                       / "39-rig-nudges-two.json").read_text())
    step = dict(data["steps"][0])
    del step["target"], step["second_target"]
    step["targets"] = [10, 11]
    data.update(steps=[step])
    out = run_scenario(data)
    assert out["steps"][0]["sections_won"] == {"10": 3, "11": 3} and out["dice_left"] == 0
    step["targets"] = [10, 11, 21, 13]
    with pytest.raises(Exception, match="targets: a list of one to 3"):
        run_scenario(data)


def test_a_changes_minus_one_is_on_the_warriors_own_action_not_a_defence():
    """ "perform another action at a -1": the hero who Changed acts at -1, but resisting a ram
    later is no action of his."""
    rules, st = game()
    st.vehicle(10).seats.append(("P2", "body"))
    session = GameSession(rules, st, FixedDice([5, 3, 4, 5, 4, 2, 3]))
    session.start_round({"Max": [10, 11], "Joe": [21, 20]})
    session.act({"act": "change", "warrior": "Max:10:D", "seat": "P2"})
    session.act({"act": "change", "warrior": "Max:10:W1", "seat": "D"})
    move = session.act({"act": "move", "vehicle": 10, "to": [640, 400, 0]})
    assert move["rolls"][0]["total"] == 3 and move["result"] == "moved"     # 4 - 1
    session.end_turn()                                                  # the Buggy's turn
    ram = session.act({"act": "ram", "vehicle": 21, "target": 10, "to": [568.5, 400, 0]})
    resist = ram["rolls"][2]
    assert "resist" in resist["asked"] and not any("Change" in m["reason"] for m in resist["modifiers"])


def test_the_hidden_buggy_gets_one_try_a_round():
    data = json.loads((Path(__file__).resolve().parents[1] / "examples" / "scenarios"
                       / "27-hidden-buggy-in-a-wreck.json").read_text())
    rules = rule_system("shattered_highways")
    st = rules.new_game(data["rosters"], parse_scene(data))
    rig = next(v for v in st.vehicles.values() if v.hidden_buggy is not None)
    session = GameSession(rules, st, FixedDice([5, 3, 2, 4]))
    order = {p: [v.marker for v in st.vehicles.values() if v.owner == p and v.hidden_in is None] for p in st.players}
    session.start_round(order)
    assert session.act({"act": "deploy", "vehicle": rig.marker})["result"] == "still hidden"
    with pytest.raises(RulesError, match="next try is next round"):
        session.act({"act": "deploy", "vehicle": rig.marker})


def test_hand_to_hand_does_not_reach_between_a_rigs_tractor_and_trailer():
    rules, st = game()
    st.warriors["Max:10:P1"].vehicle, st.warriors["Max:10:P1"].seat = 20, "P1"   # in the trailer's P1
    st.warriors["Joe:20:P1"].out = True
    session = GameSession(rules, st, FixedDice([]))
    with pytest.raises(RulesError, match="on the rig's tractor"):
        session.act({"act": "attack", "warrior": "Max:10:P1", "target": "Joe:20:W1"})


def test_option_wreck_veer_fumble():
    """A 1 on the Move to veer round a wreck: clipped (1d6) and out of control, or only clipped."""
    data = json.loads((Path(__file__).resolve().parents[1] / "examples" / "scenarios"
                       / "41-veering-round-a-wreck-on-a-1.json").read_text())
    out = run_scenario(data)
    assert out["state"]["vehicles"]["21"]["pose"][:2] == pytest.approx([414.2, 450.8])
    data.update(options={"wreck_veer_fumble": "clip_only"}, dice=data["dice"][:-1])
    out = run_scenario(data)
    assert out["state"]["vehicles"]["21"]["pose"][:2] == [528.5, 400.0] and out["dice_left"] == 0
    assert out["state"]["vehicles"]["21"]["hp"]["body"] == 9


def test_the_back_edge_is_reached_within_a_quarter_inch_of_it_and_not_beyond():
    """ "Move": "If a vehicle reaches the back edge": touching counts, within CONTACT_MM (a
    quarter inch, the touching of Moves and Rams); the Rust Bucket of 53 stands its rear 6 mm in
    (at the edge) or 7 mm in (clear of it) when the Buggy's turn ends."""
    data = load_scenario(HERE / "53-touching-the-back-edge-is-reaching-it.json")
    for gap_mm, at_edge in ((0.0, True), (6.0, True), (7.0, False)):
        d = copy.deepcopy(data)
        d["cars"][2]["x_mm"] = 36.0 + gap_mm                        # the 72 mm Rust Bucket's rear gap_mm in
        out = run_scenario(d, "53")
        assert out["state"]["vehicles"]["11"]["at_back_edge"] is at_edge, gap_mm
        assert out["state"]["vehicles"]["10"]["at_back_edge"] is False          # rejoined


def test_an_unmanned_drop_meets_a_car_its_line_runs_into_even_by_a_corner():
    """ "Driver Actions": the car merely touching it alongside is slid past (54), but one behind
    whose side overlaps its lane by 3 mm is in the straight line back: met, it rams at -1."""
    data = load_scenario(HERE / "54-an-unmanned-drop-slides-past-touching-cars.json")
    d = copy.deepcopy(data)
    # The Rust Bucket behind, 20 mm clear of the rear bumper, its right side 3 mm inside the lane.
    d["cars"][2].update(x_mm=600.0 - 37.5 - 20.0 - 36.0, y_mm=400.0 + 16.0 + 15.5 - 3.0)
    d["dice"] = [6, 1, 5, 5, 2, 4, 5]            # initiative, board; the ram 5 - 1, defence 2, damage 4; control
    out = run_scenario(d, "54")
    events = out["steps"][2]["events"]
    assert events[0] == "the unmanned Interceptor drops back 0.8 in, up against the Rust Bucket", events
    assert out["state"]["vehicles"]["10"]["hp"]["body"] == 21 and out["dice_left"] == 0

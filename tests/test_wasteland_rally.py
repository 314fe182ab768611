"""Wasteland Rally: rosters by the team tables, Open Fire's rolls and movement, losing control,
terrain, gates and elimination, every option's readings, the campaign, the page hooks, and a
whole two lap race played to its finish with fixed dice."""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path

import pytest

from companion.dice import DiceSource, DiceThrow, FixedChoices
from companion.geometry import Pose
from companion.rules.base import RulesError, rule_system
from companion.rules.wr_state import campaign_roster
from companion.scenario import check_expectations, load_scenario, run_scenario, state_json
from companion.scene import parse_scene
from companion.session import GameSession

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "examples" / "scenarios").glob("wr-*.json"))
MM = 25.4

# A small oval: lanes round an impassable infield, anticlockwise. The start/finish gate
# crosses the near straight at x 500 (driving +x); the far gate the far straight at x 700
# (driving -x). Max's cars run the inner lane, Joe's the outer.
SCENE = {
    "rules": "wasteland_rally",
    "table": {"width_mm": 1400, "depth_mm": 1000},
    "cars": [
        {"id": 10, "name": "Rustler", "x_mm": 450, "y_mm": 300, "heading_deg": 0, "length_mm": 75, "width_mm": 32},
        {"id": 11, "name": "Dust Devil", "x_mm": 320, "y_mm": 300, "heading_deg": 0, "length_mm": 70, "width_mm": 32},
        {"id": 20, "name": "Scrapjaw", "x_mm": 450, "y_mm": 200, "heading_deg": 0, "length_mm": 75, "width_mm": 32},
        {"id": 21, "name": "Gravedigger", "x_mm": 320, "y_mm": 200, "heading_deg": 0, "length_mm": 80, "width_mm": 34},
    ],
    "terrain": [
        {"kind": "blocking", "name": "infield", "points": [[420, 370], [980, 370], [980, 630], [420, 630]]},
        {"kind": "wreckage", "name": "burnt-out bus", "points": [[1130, 470], [1170, 470], [1170, 500], [1130, 500]]},
        {"kind": "blocking", "name": "exploding barrels", "points": [[560, 140], [600, 140], [600, 170], [560, 170]]},
    ],
    "gates": [{"name": "start", "role": "start_finish", "a": [500, 364.3], "b": [500, 135.7]},
              {"name": "far", "role": "checkpoint", "a": [700, 635.7], "b": [700, 864.3]}],
}
ROSTERS = [
    {"player": "Max", "points": 50, "vehicles": [
        {"marker": 10, "name": "Rustler", "type": "car", "weapons": ["heavy_machine_gun", "oil_dropper"],
         "upgrades": ["boost"], "driver": "marksman"},
        {"marker": 11, "name": "Dust Devil", "type": "buggy", "weapons": ["twin_light_machine_guns", "spiked_ram"],
         "upgrades": ["sturdy"], "driver": "reckless"}]},
    {"player": "Joe", "points": 50, "vehicles": [
        {"marker": 20, "name": "Scrapjaw", "type": "hotrod",
         "weapons": [{"weapon": "light_machine_gun", "mods": ["turret_mount"]}, "spike_dropper"],
         "upgrades": ["reinforced_armour"]},
        {"marker": 21, "name": "Gravedigger", "type": "truck", "weapons": ["flamethrower", "wrecker_arm"],
         "driver": "skilled_driver"}]},
]


def game(options=None, rosters=None, **scene_changes):
    scene = copy.deepcopy(SCENE)
    scene.update(scene_changes)
    rules = rule_system("wasteland_rally", options)
    return rules, rules.new_game(copy.deepcopy(rosters or ROSTERS), parse_scene(scene))


def play(steps, dice, options=None, rosters=None, **scene_changes):
    data = copy.deepcopy(SCENE)
    data.update(scene_changes)
    data.update(rosters=copy.deepcopy(rosters or ROSTERS), steps=steps, dice=dice, options=options or {})
    return run_scenario(data)


def place(data_cars, poses):
    cars = copy.deepcopy(data_cars)
    for c in cars:
        if c["id"] in poses:
            c["x_mm"], c["y_mm"], c["heading_deg"] = poses[c["id"]]
    return cars


def with_progress(crossed):
    rosters = copy.deepcopy(ROSTERS)
    for r in rosters:
        for v in r["vehicles"]:
            v["gates_crossed"] = crossed.get(v["marker"], 0)
    return rosters


# --- the worked scenarios -------------------------------------------------------------

@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_worked_scenario(path):
    data = load_scenario(path)
    assert data["rules"] == "wasteland_rally" and data.get("expect")
    assert check_expectations(data, run_scenario(data, str(path))) == []


def test_there_are_worked_scenarios():
    assert len(SCENARIOS) >= 4


def test_scenario_command_checks_them(capsys):
    from companion.cli import main
    assert main(["scenario", "run", str(SCENARIOS[0]), "--check"]) == 0


# --- building a team ------------------------------------------------------------------

def roster_with(**vehicle):
    base = {"marker": 10, "name": "Rustler", "type": "car"}
    base.update(vehicle)
    return [{"player": "Max", "points": 50, "vehicles": [base]}, ROSTERS[1]]


def test_vehicle_profiles_and_costs():
    rules, st = game()
    r, d = st.vehicles[10], st.vehicles[11]
    # Car 10 + HMG 2 + oil dropper 1 + boost 2 + marksman 2 = 17
    from companion.rules.wr_state import vehicle_cost
    assert vehicle_cost(r) == 17
    assert rules._attribute(r, "skill") == 7 and rules._attribute(r, "command") == 6
    assert d.max_hp == 10 and d.hp == 10                     # buggy 8 + sturdy 2
    assert rules._attribute(st.vehicles[21], "command") == 4     # skilled driver
    assert rules._attribute(st.vehicles[20], "defence") == 4     # hotrod 5, reinforced armour


def test_option_costly_modification():
    from companion.rules.wr_state import Weapon
    assert Weapon("minigun", ["stabilised"]).cost() == 4 + 1 + 1
    assert Weapon("heavy_machine_gun", ["stabilised"]).cost() == 2 + 1
    assert Weapon("rocket_launcher", ["improved_sights", "turret_mount"]).cost() == 6 + 3 + 2
    assert Weapon("rocket_launcher", ["improved_sights", "turret_mount"]).cost("once_per_weapon") == 6 + 3 + 1
    # a team at 51 points per modification is 50 once per weapon
    rosters = roster_with(type="truck", weapons=[{"weapon": "rocket_launcher", "mods": ["improved_sights",
                                                                                     "turret_mount"]}],
                          upgrades=["sturdy", "boost"], driver="marksman")
    rosters[0]["vehicles"].append({"marker": 11, "name": "Dust Devil", "type": "truck",
                                   "weapons": ["minigun"], "upgrades": ["sturdy"], "driver": "marksman"})
    with pytest.raises(RulesError, match=r"the team costs 51 points \(Rustler 30, Dust Devil 21\), over its 50"):
        game(rosters=rosters)
    rules, st = game({"costly_modification": "once_per_weapon"}, rosters=rosters)
    assert st.vehicles[10].weapons[0].special[-3:] == ("Accurate", "Rending (1)", "Turret Mount")


@pytest.mark.parametrize("vehicle, message", [
    ({"type": "tank"}, 'type must be one of car, hotrod, sports_car, buggy, truck, not \'tank\' (wasteland-rally.txt, "Vehicle Types")'),
    ({"upgrades": ["tank_tracks", "boost"]}, "vehicle upgrades total 5 points (tank_tracks 3, boost 2); at most 4"),
    ({"weapons": ["light_machine_gun", "minigun", "spiked_ram"]}, "3 weapons; a vehicle carries one ranged weapon and one other"),
    ({"weapons": ["spiked_ram", "oil_dropper"]}, "two weapons but no ranged one"),
    ({"weapons": [{"weapon": "flamethrower", "mods": ["inferno_ammo"]}]}, "inferno ammo cannot be taken for a flamethrower"),
    ({"weapons": [{"weapon": "spiked_ram", "mods": ["stabilised"]}]}, "only ranged weapons may be modified"),
    ({"driver": ["marksman", "reckless"]}, "2 driver upgrades; each vehicle is permitted one"),
    ({"driver": "ace"}, "unknown driver upgrade 'ace'"),
    ({"weapons": ["rocket_launcher", "wrecker_arm"], "upgrades": ["sturdy", "boost"], "driver": "marksman",
      "type": "truck"}, "the team costs 53 points (Rustler 28, Gravedigger 25), over its 50"),
])
def test_roster_errors_name_the_rule(vehicle, message):
    rosters = roster_with(**vehicle)
    if "Gravedigger" in message:
        rosters[0]["vehicles"].append({"marker": 12, "name": "Gravedigger", "type": "truck",
                                       "weapons": ["minigun", "wrecker_arm"], "upgrades": ["tank_tracks"], "driver": "marksman"})
    with pytest.raises(RulesError) as err:
        game(rosters=rosters, cars=[c for c in SCENE["cars"] if c["id"] != 11])
    assert message in str(err.value)
    assert "roster of Max" in str(err.value)


def test_game_sizes():
    rosters = copy.deepcopy(ROSTERS)
    rosters[0]["size"] = "small"
    with pytest.raises(RulesError, match=r"2 vehicles; a small game has 3-5 \(wasteland-rally.txt, \"One-Off Game\"\)"):
        game(rosters=rosters)


def test_option_second_weapon():
    rosters = roster_with(weapons=["light_machine_gun", "heavy_machine_gun"])
    cars = [c for c in SCENE["cars"] if c["id"] != 11]
    rules, st = game(rosters=rosters, cars=cars)
    assert [w.key for w in st.vehicles[10].weapons] == ["light_machine_gun", "heavy_machine_gun"]
    with pytest.raises(RulesError, match="two ranged weapons; with second_weapon 'not_ranged'"):
        game({"second_weapon": "not_ranged"}, rosters=rosters, cars=cars)


def test_campaign_roster_and_pool():
    vehicles = [{"marker": 30 + k, "name": f"Car {k}", "type": "car", "weapons": ["light_machine_gun"]}
                for k in range(8)]
    # 8 cars of 11 points: 88 spent, 12 left, 10 kept in the pool
    assert campaign_roster({"player": "Max", "vehicles": vehicles}) == {
        "player": "Max", "vehicles": 8, "spent": 88, "pool": 10}
    with pytest.raises(RulesError, match="7 vehicles; a campaign roster has 8-10"):
        campaign_roster({"player": "Max", "vehicles": vehicles[:7]})
    upgraded = copy.deepcopy(vehicles)
    upgraded[0]["upgrades"] = ["boost"]
    with pytest.raises(RulesError, match="Car 0: a campaign vehicle starts with one weapon upgrade and no other"):
        campaign_roster({"player": "Max", "vehicles": upgraded})
    trucks = [{**v, "type": "truck"} for v in vehicles] + [{"marker": 50, "name": "Big", "type": "truck"}]
    with pytest.raises(RulesError, match="the roster costs 125 points, over 100"):
        campaign_roster({"player": "Max", "vehicles": trucks})


# --- deployment and missions ----------------------------------------------------------

def test_deployment_spacing_and_the_start_gate():
    with pytest.raises(RulesError, match=r"deployed 0.22 in apart; at least 2 in"):
        game(cars=place(SCENE["cars"], {11: (372, 300, 0)}))
    with pytest.raises(RulesError, match="deployed over the start gate start"):
        game(cars=place(SCENE["cars"], {10: (480, 300, 0)}))
    rules, st = game({"check_deployment": False}, cars=place(SCENE["cars"], {10: (480, 300, 0)}))
    assert st.vehicles[10].pose.x_mm == 480


def test_deployment_as_close_as_possible_to_the_start_gate():
    # The front row stands 12.5 mm (half an inch) behind the gate; the Dust Devil hangs back
    # 215 mm, though a spot 2 in behind the Rustler, in the gate's lane, is 135.4 mm from it.
    back = place(SCENE["cars"], {11: (250, 300, 0)})
    with pytest.raises(RulesError) as err:
        game(cars=back)
    msg = str(err.value)
    assert msg.startswith("the Dust Devil could have deployed 3.13 in closer to the start gate start: it stands "
                          "8.46 in from it, and a spot at (13.0, 13.7) in, heading 0°, is free 5.33 in from it")
    assert "Gravedigger" not in msg and '"Deployment Areas"' in msg
    # the table as it stands: closer spots within the slack (half an inch) pass
    assert game()[1].vehicles[11].pose.x_mm == 320
    with pytest.raises(RulesError, match="the Dust Devil could have deployed 0.38 in closer"):
        game({"deploy_slack_mm": 5.0})
    # beside the gate's post counts too: a spot beside the Scrapjaw, 2.5 mm from the post
    with pytest.raises(RulesError, match=r"the Dust Devil could have deployed 5.61 in closer .* "
                                         r"a spot at \(18.3, 4.6\) in, heading 0°, is free 0.10 in"):
        game({"deploy_zone": "behind_line"})
    # turned off, or with the whole deployment check off (a table part way through a game)
    assert game({"check_deploy_closest": False}, cars=back)[1].vehicles[11].pose.x_mm == 250
    assert game({"check_deployment": False}, cars=back)[1].vehicles[11].pose.x_mm == 250

def test_mission_gate_sequences():
    assert game()[1].sequence == ["start", "far", "start", "far", "start"]
    assert game({"start_gate_counts": False, "check_deployment": False})[1].sequence == ["far", "start", "far", "start"]
    _, st = game({"mission": "elimination_race"})
    assert st.sequence[:3] == ["start", "far", "start"] and st.to_json()["elimination_gate"] == {"index": 2, "gate": "far"}
    _, st = game({"mission": "arena_race"})
    assert "36 in" in st.setup_notes[0]            # the gates are 9.4 in apart here
    with pytest.raises(RulesError, match="the outrun needs one gate"):
        game({"mission": "outrun"})
    _, st = game({"mission": "outrun"}, gates=[{"name": "safety", "role": "finish", "a": [1400, 900], "b": [1400, 670]}])
    assert st.sequence == ["safety"] and st.setup_notes == []
    extra = SCENE["gates"] + [{"name": "third", "a": [100, 100], "b": [100, 328.6]}]
    with pytest.raises(RulesError, match=r"the battle royale needs a gate per player \(2\), the scene has 3"):
        game({"mission": "battle_royale"}, gates=extra)


def test_battle_royale_gates_face_the_centre():
    gates = [{"name": "north", "a": [900, 906.4], "b": [500, 906.4]},       # 16" from the centre, facing it
             {"name": "south", "a": [900, 93.6], "b": [500, 93.6]}]         # facing away
    _, st = game({"mission": "battle_royale", "check_deployment": False}, gates=gates)
    assert st.setup_notes == ["gate south does not face the centre of the table (wasteland-rally.txt, \"Battle Royale\")"]


# --- activation -----------------------------------------------------------------------

def test_initiative_ties_are_rerolled_and_turns_alternate():
    out = play([{"round": {}}, {"act": "hold", "vehicle": 20}, {"end_turn": True},
                {"act": "hold", "vehicle": 21, "expect_error": True},
                {"act": "hold", "vehicle": 11}, {"end_turn": True}], [6, 6, 3, 8])
    assert out["steps"][0]["initiative"] == [{"Max": 6, "Joe": 6}, {"Max": 3, "Joe": 8}]
    assert out["steps"][0]["order"] == ["Joe", "Max"]
    assert "it is Max's turn to activate a vehicle, and the Gravedigger is Joe's" in out["steps"][3]["error"]
    assert out["state"]["up"] == "Joe"


def test_planned_orders_are_kept():
    out = play([{"round": {"Max": [11, 10]}}, {"act": "hold", "vehicle": 10, "expect_error": True}], [9, 4])
    assert "Max's order activates the Dust Devil next, not the Rustler" in out["steps"][1]["error"]


def test_round_must_finish_before_the_next():
    out = play([{"round": {}}, {"act": "hold", "vehicle": 10}, {"end_turn": True}], [9, 4])
    rules, st = game()
    sess = GameSession(rules, st, ScriptedDice())
    sess.start_round({})
    with pytest.raises(RulesError, match="round 1 is not over"):
        sess.start_round({})
    assert out["state"]["activated"] == [10]


def test_the_player_whose_turn_it_is_passes_by_activating_a_car_that_does_nothing():
    # Max's order names the Dust Devil next: his pass activates it. Joe has two cars and no
    # order: he is asked which. Max's last car is the only one left: no question. The round ends.
    rules, st = game()
    sess = GameSession(rules, st, ScriptedDice(), FixedChoices([{"player": "Joe", "value": 21}]))
    sess.start_round({"Max": [11]})
    assert st.up == "Max"
    out = sess.end_turn()
    assert out["vehicle"] == 11 and out["events"][0] == "Max passes: the Dust Devil activates and does nothing"
    out = sess.end_turn()
    assert out["vehicle"] == 21 and sess.log[-1].choices[0]["player"] == "Joe"
    assert sess.log[-1].choices[0]["asked"] == "Joe to choose which car activates and does nothing (a pass)"
    assert sess.end_turn()["vehicle"] == 10
    out = sess.end_turn()
    assert out["vehicle"] == 20 and st.up is None and st.activated == []     # the round is over
    with pytest.raises(RulesError, match="round 1 is over: start the next round"):
        sess.end_turn()
    # Asked on the page: a choice only Joe may make, among his cars left.
    rules, st = game()
    sess = GameSession(rules, st, ScriptedDice())
    sess.dice.rounds = 1                                        # Joe wins the roll-off
    sess.start_round({})
    assert sess.end_turn() is None and sess.pending.player == "Joe"
    assert [o["value"] for o in sess.pending.options] == [20, 21]
    with pytest.raises(Exception, match="this choice is Joe's to make"):
        sess.choose("Max", 20)
    assert sess.choose("Joe", 20)["vehicle"] == 20 and st.up == "Max"


def test_before_a_round_there_is_nothing_to_pass():
    rules, st = game()
    sess = GameSession(rules, st, ScriptedDice())
    with pytest.raises(RulesError, match="no round has begun: start a round"):
        sess.end_turn()


def test_a_first_move_reads_the_cameras_path_from_where_the_car_stood():
    # On the table the car is pushed before its move is declared: the game's pose follows the
    # camera to where it ends, and the camera's path starts where it stood.
    rules, st = game()
    sess = GameSession(rules, st, ScriptedDice())
    sess.start_round({})
    camera_path = [[450 + 5 * k, 300, 0, 0.3, 0.2] for k in range(31)]        # 150 mm in 5 mm steps
    rules.update_poses(st, {10: Pose(*camera_path[-1])})
    out = sess.act({"act": "move", "vehicle": 10, "path": camera_path})
    assert out["move"]["distance_mm"] == pytest.approx(150.0) and out["move"]["manoeuvres"] == 0
    assert st.vehicles[10].progress == 1 and st.vehicles[10].stood.x_mm == 600
    # judged from where it stood, not from the camera's pose: 12 in from the start is too far
    assert rules.judge_move(st, 11, Pose(320 + 12 * MM, 300, 0))["legal"] is False
    rules.update_poses(st, {11: Pose(320 + 8 * MM, 300, 0)})
    assert rules.judge_move(st, 11, Pose(320 + 8 * MM, 300, 0))["distance_mm"] == pytest.approx(8 * MM)


def test_a_reposition_is_judged_from_where_the_car_lost_control():
    steps, dice, options, cars = lost_control_game()
    rules, st = game(options, cars=cars)
    sess = GameSession(rules, st, ScriptedDice())
    sess.dice.queue += dice
    sess.act(steps[0])
    assert st.pending[0]["from"][:3] == [700.0, 300.0, 0.0]
    # the camera sees the car lifted 6.7 in and turned 95 degrees: refused, whatever the game's pose
    far = Pose(700 + 6.7 * MM, 300, 95)
    rules.update_poses(st, {10: far})
    j = rules.judge_move(st, 10, far)
    assert j["legal"] is False and j["reposition"] and "turned 95.0 degrees from where it lost control" in j["reasons"][0]
    with pytest.raises(RulesError, match="turned 95.0 degrees from where it lost control"):
        sess.act({"act": "reposition", "vehicle": 10, "by": "Joe", "to": [far.x_mm, far.y_mm, far.heading_deg]})
    assert st.pending and st.vehicles[10].pose == far                         # nothing changed
    near = Pose(712, 300, 20)
    rules.update_poses(st, {10: near})
    assert rules.judge_move(st, 10, near)["legal"]
    out = sess.act({"act": "reposition", "vehicle": 10, "by": "Joe", "to": [712, 300, 20]})
    assert "turned 20.0 degrees, moved 0.47 in from where it lost control" in out["events"][0]


def test_a_repositioned_car_moves_in_its_next_activation():
    steps, dice, options, cars = lost_control_game()
    rules, st = game(options, cars=cars)
    sess = GameSession(rules, st, ScriptedDice())
    sess.dice.rounds = 1                                        # Joe first
    sess.start_round({})
    sess.dice.queue += dice
    sess.act(steps[0])                                          # the Gravedigger's wrecker arm
    sess.act({"act": "reposition", "vehicle": 10, "by": "Joe", "to": [700, 310, 10]})
    sess.end_turn()
    assert st.up == "Max" and st.vehicles[10].stood == Pose(700, 310, 10)
    ahead = [700 + 50 * math.cos(math.radians(10)), 310 + 50 * math.sin(math.radians(10)), 10]
    out = sess.act({"act": "move", "vehicle": 10, "path": [ahead]})
    assert out["result"] == "moved" and out["move"]["distance_mm"] == pytest.approx(50.0)


def test_the_demo_layout_is_a_legal_starting_grid_on_the_demo_table():
    from companion.commands.serve import with_scenery
    from vision.demo import demo_table
    rules = rule_system("wasteland_rally")
    t = with_scenery(demo_table(), rules)          # the demo's own race (demo_scenery)
    layout = rules.demo_layout([(c.id, c.name, c.length_mm, c.width_mm) for c in t.cars], (t.width_mm, t.depth_mm))
    scene = {"rules": "wasteland_rally", "table": {"width_mm": t.width_mm, "depth_mm": t.depth_mm},
             "cars": [{"id": c.id, "name": c.name, "x_mm": layout[c.id][0], "y_mm": layout[c.id][1],
                       "heading_deg": layout[c.id][2], "length_mm": c.length_mm, "width_mm": c.width_mm}
                      for c in t.cars],
             "terrain": [{"kind": x.kind, "name": x.name, "points": [list(p) for p in x.points]} for x in t.terrain],
             "gates": [{"name": g.name, "role": g.role, "a": list(g.a_mm), "b": list(g.b_mm)} for g in t.gates]}
    # spacing, not over the gate, and none could have stood closer to it
    st = rules.new_game(rules.starter_rosters([(c.id, c.name) for c in t.cars]), parse_scene(scene))
    assert all(v.pose.x_mm + v.length_mm / 2 < 609.6 for v in st.vehicles.values())
    # a car moved a little closer is refused by the same check: the grid is as close as it can be
    scene["cars"][-1]["x_mm"] -= 30
    with pytest.raises(RulesError, match="could have deployed"):
        rules.new_game(rules.starter_rosters([(c.id, c.name) for c in t.cars]), parse_scene(scene))


# --- attribute rolls and attacks -------------------------------------------------------

def test_natural_one_fails_and_twelve_passes():
    # The Gravedigger (skilled driver, command 4) drives over the Dust Devil: a 1 fails even for it;
    # the Dust Devil, badly damaged (-1), passes on a 12 regardless.
    rosters = copy.deepcopy(ROSTERS)
    rosters[0]["vehicles"][1]["hp"] = 4
    out = play([{"act": "move", "vehicle": 21, "path": [[480, 300, 0]]}], [1, 12, 10],
               rosters=rosters, options={"check_deployment": False},
               cars=place(SCENE["cars"], {21: (260, 300, 0), 11: (380, 300, 0), 10: (800, 300, 0)}))
    rolls = out["steps"][0]["rolls"]
    assert rolls[0]["face"] == 1 and rolls[0]["passed"] is False and rolls[0]["target"] == 4
    assert rolls[1]["face"] == 12 and rolls[1]["total"] == 11 - 0 and rolls[1]["passed"] is True
    assert out["steps"][0]["result"] == "lost control"


def shoot_setup():
    return place(SCENE["cars"], {20: (800, 250, 0), 10: (600, 300, 0)})


def test_attack_range_arc_and_sight():
    cars = shoot_setup()
    out = play([{"act": "attack", "vehicle": 20, "weapon": "spike_dropper", "target": 10, "expect_error": True},
                {"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 21, "expect_error": True}],
               [], options={"check_deployment": False}, cars=cars)
    assert "is a dropper" in out["steps"][0]["error"]
    assert "the Gravedigger is" in out["steps"][1]["error"] and "not in the Heavy Machine Gun's front arc" in out["steps"][1]["error"]
    far = place(SCENE["cars"], {20: (1200, 250, 0), 10: (600, 300, 0)})
    out = play([{"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 20, "expect_error": True}],
               [], options={"check_deployment": False}, cars=far)
    assert "is 20.68 in away; the Heavy Machine Gun reaches 16 in" in out["steps"][0]["error"]


def test_attack_sight_blocked_by_the_infield():
    cars = place(SCENE["cars"], {10: (700, 300, 90), 20: (700, 700, 0)})
    out = play([{"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 20, "expect_error": True}],
               [], options={"check_deployment": False}, cars=cars)
    assert "terrain blocks every line" in out["steps"][0]["error"]


def test_option_cars_block_sight():
    # the Dust Devil sits between the Rustler and the Gravedigger: a friend in the way blocks the
    # shot; the Scrapjaw (an enemy) between them and the Gravedigger only hides part of it
    cars = place(SCENE["cars"], {10: (500, 300, 0), 11: (640, 300, 0), 21: (800, 300, 0), 20: (300, 200, 0)})
    step = [{"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 21, "expect_error": True}]
    out = play(step, [], options={"check_deployment": False}, cars=cars)
    assert "a car of its own side is in the way" in out["steps"][0]["error"]
    step[0]["expect_error"] = False
    out = play(step, [5, 5], options={"check_deployment": False, "cars_block_sight": False}, cars=cars)
    assert out["steps"][0]["sight"] == {"line": "clear", "hidden_fraction": 0.0}
    cars = place(cars, {11: (300, 300, 0), 20: (640, 312, 0)})
    rules, st = game({"check_deployment": False, "sight_from": "centre"}, cars=cars)
    seen, hidden = rules.sight(st, st.vehicles[10].footprint(), st.vehicles[21].footprint())
    assert seen == "obscured" and hidden > 0.5
    # from any part of the Rustler, its near side sees under the Scrapjaw: only the far side's
    # three points stay hidden
    rules, st = game({"check_deployment": False}, cars=cars)
    assert rules.sight(st, st.vehicles[10].footprint(), st.vehicles[21].footprint()) == ("clear", 3 / 9)


def test_option_sight_from_any_part_of_the_shooter():
    # The Rustler stands along the infield's near side, nose out past its corner; the Scrapjaw is
    # round the corner. Its nose sees the Scrapjaw (CORE, "Line of Sight": looking "through the
    # model"); from its centre every line crosses the infield.
    cars = place(SCENE["cars"], {10: (440, 340, 180), 20: (380, 600, 90), 21: (1200, 100, 0), 11: (150, 100, 0)})
    step = [{"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 20}]
    out = play(step, [3, 3], options={"check_deployment": False}, cars=cars)
    assert out["steps"][0]["sight"] == {"line": "clear", "hidden_fraction": 0.0}
    assert out["steps"][0]["result"] == "miss"
    step[0]["expect_error"] = True
    out = play(step, [], options={"check_deployment": False, "sight_from": "centre"}, cars=cars)
    assert "the Rustler cannot see the Scrapjaw: terrain blocks every line" in out["steps"][0]["error"]
    rules, st = game({"check_deployment": False}, cars=cars)
    target = next(t for t in rules.targets(st, 10) if t["marker"] == 20)
    assert target["sight"]["line"] == "clear" and target["shootable"]


def test_turret_fires_outside_the_front_arc_at_minus_one():
    cars = place(SCENE["cars"], {20: (600, 200, 0), 10: (500, 300, 0)})
    out = play([{"act": "attack", "vehicle": 20, "weapon": "light_machine_gun", "target": 10}], [10, 9, 10],
               options={"check_deployment": False}, cars=cars)
    rolls = out["steps"][0]["rolls"]
    assert {"value": -1, "reason": "turret firing outside the front arc"} in rolls[0]["modifiers"]
    assert [r["passed"] for r in rolls[:2]] == [True, False]          # 10-1 = 9 hits, 9-1 = 8 misses
    assert out["steps"][0]["arc"]["outcome"] == "in"


def test_assault_range_restricts_targets_and_torrent():
    cars = place(SCENE["cars"], {21: (600, 300, 0), 10: (700, 300, 0), 20: (800, 200, 0)})
    out = play([{"act": "attack", "vehicle": 21, "weapon": "flamethrower", "target": 10, "expect_error": True},
                {"act": "attack", "vehicle": 21, "weapon": "wrecker_arm", "target": 10}],
               [9, 3, 5, 5, 5, 10], options={"check_deployment": False}, cars=cars)
    assert "(Torrent) may not be used within assault range" in out["steps"][0]["error"]
    attack = out["steps"][1]
    mods = attack["rolls"][0]["modifiers"]
    assert {"value": -2, "reason": "Unwieldy"} in mods
    assert not any(m["reason"].startswith("not an assault weapon") for m in mods)   # Melee counts as Assault
    # 9 - 2 (Unwieldy) = 7 against skill 9: a miss; 3 misses too
    assert attack["hits"] == 0


def test_a_target_in_a_friends_assault_range_is_refused():
    # the Dust Devil is within 1 in of the Scrapjaw (0.63 in); the Rustler, 5.6 in away, may not shoot it
    cars = place(SCENE["cars"], {10: (500, 300, 0), 11: (700, 152, 0), 20: (700, 200, 0)})
    out = play([{"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 20, "expect_error": True}],
               [], options={"check_deployment": False}, cars=cars)
    assert "the Scrapjaw is in assault range of Max's Dust Devil" in out["steps"][0]["error"]


def test_obstructing_hit_forces_a_command_test():
    cars = place(SCENE["cars"], {21: (600, 300, 0), 10: (700, 300, 0), 20: (800, 200, 0)})
    # wrecker arm: 12 hits (a natural 12, critical), 2 misses; 3 defence rolls (2, 10, 10): 1 damage;
    # one critical test (8, passes), then the Obstructing test (3, fails): loses control, defence 10.
    out = play([{"act": "attack", "vehicle": 21, "weapon": "wrecker_arm", "target": 10}],
               [12, 2, 2, 10, 10, 8, 3, 10], options={"check_deployment": False}, cars=cars)
    a = out["steps"][0]
    assert a["hits"] == 1 and a["criticals"] == 1 and a["damage"] == 1
    assert "hit by the obstructing Wrecker Arm" in " ".join(a["events"])
    assert out["state"]["pending"][0]["vehicle"] == 10 and out["state"]["pending"][0]["by"] == ["Joe"]


def test_rapid_fire_and_obscured_defence():
    # the twin LMGs at 4 in: within half of 12 in, so 4 attacks; the target behind the barrels'
    # corner is not obscured (less than half hidden)
    cars = place(SCENE["cars"], {11: (600, 300, 0), 20: (780, 300, 0)})
    out = play([{"act": "attack", "vehicle": 11, "weapon": "twin_light_machine_guns", "target": 20}],
               [8, 8, 1, 2, 10, 10], options={"check_deployment": False}, cars=cars)
    a = out["steps"][0]
    assert "Rapid Fire: +1 attack within half range" in a["events"]
    assert a["hits"] == 2 and a["damage"] == 0 and a["sight"]["line"] == "clear"


def test_dropper_hits_everything_behind():
    # the Rustler drops oil: the Dust Devil 1.08 in behind (a friend) and the Scrapjaw 1.21 in behind
    # and aside are both attacked; the Gravedigger far back is not
    cars = place(SCENE["cars"], {10: (700, 250, 0), 11: (600, 255, 0), 20: (600, 200, 0), 21: (300, 200, 0)})
    out = play([{"act": "drop", "vehicle": 10}], [9, 1, 6, 1, 1], options={"check_deployment": False}, cars=cars)
    d = out["steps"][0]
    assert [t["target"] for t in d["targets"]] == [11, 20]
    assert d["targets"][0]["hits"] == 1 and d["targets"][0]["damage"] == 0       # oil: no damage
    assert "hit by the obstructing Oil Dropper" in " ".join(d["events"])
    # the Dust Devil passed (6); the Scrapjaw was not hit
    assert out["state"]["pending"] == []


def test_option_dropper_zone():
    cars = place(SCENE["cars"], {10: (700, 250, 0), 11: (600, 255, 0), 20: (600, 200, 0), 21: (300, 200, 0)})
    out = play([{"act": "drop", "vehicle": 10}], [1, 1], options={"check_deployment": False,
                                                                 "dropper_zone": "directly_behind"}, cars=cars)
    assert [t["target"] for t in out["steps"][0]["targets"]] == [11]


def test_option_arc_layout():
    # the Scrapjaw ahead and to the right at 45+ degrees: front half, but the right quarter
    cars = place(SCENE["cars"], {10: (600, 300, 0), 20: (640, 150, 0)})
    rules, st = game({"check_deployment": False}, cars=cars)
    me, them = st.vehicles[10].footprint(), st.vehicles[20].footprint()
    assert rules.arc_of(me, them)["front"].outcome == "in"
    rules, st = game({"check_deployment": False, "arc_layout": "quarters"}, cars=cars)
    arcs = rules.arc_of(me, them)
    assert arcs["right"].outcome == "in" and arcs["front"].outcome == "out"


def test_option_critical_success():
    cars = shoot_setup()
    rosters = copy.deepcopy(ROSTERS)
    rosters[0]["vehicles"][0]["weapons"] = [{"weapon": "heavy_machine_gun", "mods": ["improved_sights"]}]
    steps = [{"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 20}]
    # 11 + 2 (Accurate) = 13: a critical only by total
    out = play(steps, [11, 2, 10, 10], options={"check_deployment": False}, cars=cars, rosters=rosters)
    assert out["steps"][0]["criticals"] == 0
    out = play(steps, [11, 2, 10, 10, 10], options={"check_deployment": False, "critical_success": "total_12"},
               cars=cars, rosters=rosters)
    assert out["steps"][0]["criticals"] == 1 and "a critical hit" in " ".join(out["steps"][0]["events"])


def test_option_critical_tests_and_rending():
    cars = shoot_setup()
    rosters = copy.deepcopy(ROSTERS)
    rosters[0]["vehicles"][0]["weapons"] = [{"weapon": "heavy_machine_gun", "mods": ["improved_sights"]}]
    steps = [{"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 20}]
    dice = [12, 12, 10, 10, 10, 10, 10, 10]
    out = play(steps, dice, options={"check_deployment": False}, cars=cars, rosters=rosters)
    assert out["steps"][0]["damage"] == 2           # Rending (1) on each 12, all saves made
    assert out["dice_left"] == 1                    # one command test for the two criticals
    out = play(steps, dice, options={"check_deployment": False, "critical_tests": "per_critical"},
               cars=cars, rosters=rosters)
    assert out["dice_left"] == 0


def test_option_reinforced_armour():
    rules, st = game({"reinforced_armour": "literal"})
    assert rules._attribute(st.vehicles[20], "defence") == 6


def test_option_melee_is_assault():
    cars = place(SCENE["cars"], {21: (600, 300, 0), 10: (700, 300, 0), 20: (800, 200, 0)})
    out = play([{"act": "attack", "vehicle": 21, "weapon": "wrecker_arm", "target": 10}], [9, 3],
               options={"check_deployment": False, "melee_is_assault": False}, cars=cars)
    assert {"value": -4, "reason": "not an assault weapon, in assault range"} in out["steps"][0]["rolls"][0]["modifiers"]


def test_shooting_exploding_terrain():
    out = play([{"act": "attack", "vehicle": 21, "weapon": "flamethrower", "terrain": "exploding barrels"}],
               [5, 5, 5, 5, 5, 5, 5, 12, 3], cars=SCENE["cars"])
    a = out["steps"][0]
    assert a["result"] == "exploded"
    # the Scrapjaw is 2.9 in from the barrels: one defence test (3 against 4), 3 damage; the
    # Gravedigger, 7.87 in away, and the cars in the inner lane are clear
    assert out["state"]["vehicles"]["20"]["hp"] == 7
    assert out["state"]["removed_terrain"] == ["exploding barrels"]
    out = play([{"act": "attack", "vehicle": 21, "weapon": "flamethrower", "terrain": "infield", "expect_error": True}],
               [], cars=SCENE["cars"])
    assert "no exploding terrain named 'infield'" in out["steps"][0]["error"]
    # the page's attack has both as optional fields: one of them, not both, not neither
    for extra, says in (({"terrain": "exploding barrels", "target": 20}, "not both"), ({}, "say what the Flamethrower")):
        out = play([{"act": "attack", "vehicle": 21, "weapon": "flamethrower", **extra, "expect_error": True}], [],
                   cars=SCENE["cars"])
        assert says in out["steps"][0]["error"]


def test_option_explosion_removes():
    out = play([{"act": "attack", "vehicle": 21, "weapon": "flamethrower", "terrain": "exploding barrels"}],
               [5, 5, 5, 5, 5, 5, 5, 12, 10], options={"explosion_removes": False}, cars=SCENE["cars"])
    assert out["state"]["removed_terrain"] == []


def test_option_exploding_terrain_by_name():
    terrain = copy.deepcopy(SCENE["terrain"])
    terrain[2]["name"] = "fuel dump"
    rules, st = game({"exploding_terrain": ["fuel dump"]}, terrain=terrain)
    from companion.rules.wasteland_rally import _terrain_kind
    assert [_terrain_kind(rules, t) for t in st.terrain] == ["impassable", "wreckage", "exploding"]
    rules, st = game(terrain=terrain)
    assert _terrain_kind(rules, st.terrain[2]) == "impassable"


KIND_TERRAIN = SCENE["terrain"][:2] + [
    {"kind": "exploding", "name": "fuel drums", "points": [[560, 140], [600, 140], [600, 170], [560, 170]]},
    {"kind": "impassable", "name": "rock", "points": [[1100, 100], [1140, 100], [1140, 140], [1100, 140]]},
    {"kind": "slow", "name": "sand", "points": [[700, 250], [800, 250], [800, 350], [700, 350]]},
    {"kind": "blocking", "name": "barrier of tyres", "points": [[900, 280], [910, 280], [910, 320], [900, 320]]},
]


def test_terrain_kinds_from_the_scene():
    # A scene may say a piece's Wasteland Rally keyword as its kind, whatever its name.
    from companion.rules.wasteland_rally import _terrain_kind
    rules, st = game(terrain=KIND_TERRAIN)
    assert [_terrain_kind(rules, t) for t in st.terrain] == ["impassable", "wreckage", "exploding", "impassable",
                                                             "slow", "barrier"]
    # the fuel drums explode when shot, as the "exploding barrels" do by their name
    out = play([{"act": "attack", "vehicle": 21, "weapon": "flamethrower", "terrain": "fuel drums"}],
               [5, 5, 5, 5, 5, 5, 5, 12, 3], cars=SCENE["cars"], terrain=KIND_TERRAIN)
    assert out["steps"][0]["result"] == "exploded" and out["state"]["vehicles"]["20"]["hp"] == 7
    assert out["state"]["removed_terrain"] == ["fuel drums"]
    # the Scrapjaw drives into them: a command test (8, kept) and the D12 for the drums (10: they go off)
    out = play([{"act": "move", "vehicle": 20, "path": [[522, 155, 0]]}], [8, 10, 5, 5, 5],
               options={"check_deployment": False}, cars=place(SCENE["cars"], {20: (450, 155, 0)}),
               terrain=KIND_TERRAIN)
    assert out["steps"][0]["contacts"][0]["kind"] == "exploding"
    assert "the fuel drums explodes!" in out["steps"][0]["events"]
    # the rock (kind impassable) cannot be driven through; touching it is a command test
    cars = place(SCENE["cars"], {20: (1000, 83.5, 0)})
    out = play([{"act": "move", "vehicle": 20, "path": [[1100, 100, 0]], "expect_error": True},
                {"act": "move", "vehicle": 20, "path": [[1150, 83.5, 0]]}], [8], options={
                    "check_deployment": False, "path_tolerance_mm": 20.0}, cars=cars, terrain=KIND_TERRAIN)
    assert "drives through rock (impassable)" in out["steps"][0]["error"]
    assert out["steps"][1]["contacts"] == [{"at": out["steps"][1]["contacts"][0]["at"], "kind": "impassable",
                                            "what": "rock"}]
    # the sand (kind slow) counts double (CORE, "Slow"): 160 mm driven; the Rustler's nose (37.5 mm
    # ahead of its centre) is in the sand (from x 700) for the last 57.5 mm of it: cost 217.5
    cars = place(SCENE["cars"], {10: (560, 300, 0)})
    step = [{"act": "move", "vehicle": 10, "path": [[720, 300, 0]]}]
    out = play(step, [], options={"check_deployment": False}, cars=cars, terrain=KIND_TERRAIN)
    assert out["steps"][0]["move"]["slow_extra_mm"] == 57.5 and out["steps"][0]["move"]["cost_mm"] == 217.5
    # with slow_measure "centre" only the 20 mm its centre drove in the sand counted
    out = play(step, [], options={"check_deployment": False, "slow_measure": "centre"}, cars=cars,
               terrain=KIND_TERRAIN)
    assert out["steps"][0]["move"]["slow_extra_mm"] == 20.0 and out["steps"][0]["move"]["cost_mm"] == 180.0
    # 180 mm driven, the last 77.5 of it with the nose in the sand: 257.5 mm, over the Car's 10 in (254 mm)
    step[0].update(path=[[740, 300, 0]], expect_error=True)
    out = play(step, [], options={"check_deployment": False}, cars=cars, terrain=KIND_TERRAIN)
    assert "the move costs 10.14 in" in out["steps"][0]["error"]


def test_option_barrier_terrain():
    # The "barrier of tyres" (a barrier by its name; CORE, "Barrier"): driving across costs 1 in more
    # than the ground; stopping on it is refused. Named in the option, a piece of any name is one.
    cars = place(SCENE["cars"], {10: (850, 300, 0)})
    out = play([{"act": "move", "vehicle": 10, "path": [[960, 300, 0]]}], [],
               options={"check_deployment": False}, cars=cars, terrain=KIND_TERRAIN)
    m = out["steps"][0]["move"]
    assert m["distance_mm"] == 110.0 and m["barrier_extra_mm"] == 25.4 and m["cost_mm"] == 135.4
    assert out["steps"][0]["contacts"] == [] and out["steps"][0]["rolls"] == []      # no collision
    out = play([{"act": "move", "vehicle": 10, "path": [[900, 300, 0]], "expect_error": True}], [],
               options={"check_deployment": False}, cars=cars, terrain=KIND_TERRAIN)
    assert "would end its move on the barrier of tyres (a barrier)" in out["steps"][0]["error"]
    terrain = copy.deepcopy(KIND_TERRAIN)
    terrain[-1]["name"] = "low wall"
    out = play([{"act": "move", "vehicle": 10, "path": [[960, 300, 0]], "expect_error": True}], [],
               options={"check_deployment": False}, cars=cars, terrain=terrain)
    assert "drives through low wall (impassable)" in out["steps"][0]["error"]
    out = play([{"act": "move", "vehicle": 10, "path": [[960, 300, 0]]}], [],
               options={"check_deployment": False, "barrier_terrain": ["low wall"]}, cars=cars, terrain=terrain)
    assert out["steps"][0]["move"]["barrier_extra_mm"] == 25.4


# --- movement ---------------------------------------------------------------------------

def test_option_move_doubt():
    # The Rustler (a Car, 10 in = 254 mm) is driven 255 mm: 1 mm over. With no doubt given (the
    # page's path: x, y, heading) that is refused; with the camera's doubt on the last pose
    # (2 mm at 95 %) it is too close to call and the move stands, said so; 11 mm over is still out.
    step = [{"act": "move", "vehicle": 10, "path": [[705, 300, 0]], "expect_error": True}]
    out = play(step, [])
    assert "the move costs 10.04 in" in out["steps"][0]["error"]
    step = [{"act": "move", "vehicle": 10, "path": [[705, 300, 0, 2.0, 1.0]]}]
    out = play(step, [])
    assert out["steps"][0]["result"] == "moved"
    assert out["steps"][0]["movement"]["outcome"] == "too close to call"
    assert out["steps"][0]["events"][0] == ("the move costs 10.04 in of the Rustler's 10.00 in: too close to call "
                                            "(-1.0 mm, the camera's doubt 1.6 mm), so it stands")
    assert out["state"]["vehicles"]["10"]["pose"][0] == 705
    step[0].update(expect_error=True)
    out = play(step, [], options={"move_doubt": "strict"})
    assert "the move costs 10.04 in" in out["steps"][0]["error"]
    step[0]["path"] = [[715, 300, 0, 2.0, 1.0]]
    out = play(step, [])
    assert "the move costs 10.43 in" in out["steps"][0]["error"]
    step[0]["path"] = [[705, 300, 0, -2.0, 1.0]]
    out = play(step, [])
    assert "sigma_mm and sigma_deg are not negative" in out["steps"][0]["error"]

def test_boost_and_advance():
    out = play([{"act": "move", "vehicle": 10, "boost": True, "path": [[678.6, 300, 0], [932.6, 300, 0]]},
                {"end_turn": True}, {"act": "move", "vehicle": 11, "boost": True, "path": [[500, 300, 0]], "expect_error": True}],
               [], cars=SCENE["cars"])
    m = out["steps"][0]["move"]
    assert m["boost_mm"] == pytest.approx(228.6) and m["distance_mm"] == pytest.approx(254.0)
    assert out["state"]["vehicles"]["10"]["boost_used"] is True
    assert "has no boost" in out["steps"][2]["error"]


def test_option_boost_counts():
    steps = [{"act": "move", "vehicle": 10, "boost": True, "path": [[678.6, 300, 0], [932.6, 300, 0]]}]
    with pytest.raises(Exception, match="the move costs 19.00 in"):
        play(steps, [], options={"boost_counts": True}, cars=SCENE["cars"])


def test_option_backward_cost():
    # a 45-degree turn (free) and 3 in backwards: in at half rate (5 in), but doubled it is 6 of 10
    steps = [{"act": "move", "vehicle": 11, "path": [[320, 300, 45], [320 - 76.2 * math.cos(math.radians(45)),
                                                                      300 - 76.2 * math.sin(math.radians(45)), 45]]}]
    out = play(steps, [], cars=SCENE["cars"])
    assert out["steps"][0]["move"]["allowance_mm"] == pytest.approx(114.3)
    out = play(steps, [], options={"backward_cost": "double_distance"}, cars=SCENE["cars"])
    assert out["steps"][0]["move"]["cost_mm"] == pytest.approx(152.4)
    assert out["steps"][0]["move"]["allowance_mm"] == pytest.approx(228.6)


def test_forward_and_back_in_one_move_is_refused():
    out = play([{"act": "move", "vehicle": 11, "path": [[360, 300, 0], [300, 300, 0]], "expect_error": True}],
               [], cars=SCENE["cars"])
    assert "drives both forwards and backwards" in out["steps"][0]["error"]


def test_options_path_and_turn_tolerance():
    # the Rustler has driven off: the others no longer stand as close to the gate as they could
    cars = place(SCENE["cars"], {10: (800, 300, 0)})
    part_way = {"check_deploy_closest": False}
    steps = [{"act": "move", "vehicle": 11, "path": [[400, 308, 0]]}]
    out = play(steps + [], [], cars=cars, options={**part_way, "path_tolerance_mm": 10.0})
    assert out["steps"][0]["result"] == "moved"
    with pytest.raises(Exception, match="slides 8.0 mm sideways"):
        play(steps, [], cars=cars, options=part_way)
    steps = [{"act": "move", "vehicle": 11, "path": [[320, 300, 4], [380, 304.2, 4]]}]
    assert play(steps, [], cars=cars, options={**part_way, "turn_tolerance_deg": 5.0})["steps"][0]["move"]["manoeuvres"] == 0
    assert play(steps, [], cars=cars, options=part_way)["steps"][0]["move"]["manoeuvres"] == 1


def test_badly_damaged_and_stressed_vehicles_move_less():
    rules, st = game()
    v = st.vehicles[10]
    v.hp, v.stress = 4, 2
    assert rules.allowance_in(v, False) == (6.0, ["Car 10", "badly damaged -2", "stress -2"])
    rules, st = game({"use_stress": False})
    st.vehicles[10].stress = 2
    assert rules.allowance_in(st.vehicles[10], True)[0] == 16.0


def test_terrain_collision_and_wreckage():
    # the Scrapjaw scrapes the infield (command test passed) and the Gravedigger smashes the bus
    cars = place(SCENE["cars"], {20: (600, 353.5, 0), 21: (1150, 400, 90)})
    out = play([{"act": "move", "vehicle": 20, "path": [[700, 363.5, 0]], "expect_error": True},
                {"act": "move", "vehicle": 20, "path": [[700, 353.5, 0]]}, {"end_turn": True},
                {"act": "move", "vehicle": 21, "path": [[1150, 600, 90]]}],
               [8, 9], options={"check_deployment": False, "path_tolerance_mm": 12.0}, cars=cars)
    assert "drives through infield" in out["steps"][0]["error"]
    assert out["steps"][1]["contacts"][0]["kind"] == "impassable"
    assert out["steps"][3]["contacts"][0] == {"at": out["steps"][3]["contacts"][0]["at"], "kind": "wreckage",
                                              "what": "burnt-out bus"}
    assert out["state"]["removed_terrain"] == ["burnt-out bus"]


def test_option_contact_mm():
    # driving along 0.5 mm from the infield: touching by the default 1 mm (a command test), not by 0.2 mm
    cars = place(SCENE["cars"], {20: (600, 353.5, 0)})
    step = [{"act": "move", "vehicle": 20, "path": [[700, 353.5, 0]]}]
    out = play(step, [8], options={"check_deployment": False}, cars=cars)
    assert [c["what"] for c in out["steps"][0]["contacts"]] == ["infield"] and out["dice_left"] == 0
    out = play(step, [], options={"check_deployment": False, "contact_mm": 0.2}, cars=cars)
    assert out["steps"][0]["contacts"] == [] and out["steps"][0]["rolls"] == []


def test_failing_against_wreckage_stops_the_car_at_contact():
    cars = place(SCENE["cars"], {21: (1150, 400, 90)})
    out = play([{"act": "move", "vehicle": 21, "path": [[1150, 600, 90]]}], [2, 10],
               options={"check_deployment": False}, cars=cars)
    y = out["state"]["vehicles"]["21"]["pose"][1]
    assert out["steps"][0]["result"] == "lost control"
    assert 429 <= y <= 431            # its front (40 mm ahead of the centre) at the bus's edge, 470
    assert out["state"]["removed_terrain"] == []


def test_ending_on_another_car_is_refused():
    out = play([{"act": "move", "vehicle": 11, "path": [[440, 300, 0]], "expect_error": True}], [], cars=SCENE["cars"])
    assert "must completely pass to the other side" in out["steps"][0]["error"]


def test_judge_move():
    rules, st = game()
    assert rules.judge_move(st, 10, Pose(700, 300, 0))["legal"]
    j = rules.judge_move(st, 11, Pose(320, 600, 90))
    assert not j["legal"]


# --- losing control -------------------------------------------------------------------

def lost_control_game(options=None):
    cars = place(SCENE["cars"], {21: (615, 300, 0), 10: (700, 300, 0), 20: (800, 200, 0)})
    steps = [{"act": "attack", "vehicle": 21, "weapon": "wrecker_arm", "target": 10}]
    return steps, [12, 2, 10, 10, 10, 3, 10, 10], dict({"check_deployment": False}, **(options or {})), cars


def test_reposition_limits():
    steps, dice, options, cars = lost_control_game()
    tries = [([700, 300, 50], "turned 50.0 degrees from where it lost control (its dashed outline on the page); at most 45"),
             ([730, 300, 0], "moved 1.18 in (its centre) from where it lost control"),
             ([680, 300, 0], "over the Gravedigger"),
             ([700, 320, 0], None)]
    for to, err in tries:
        s = steps + [{"act": "reposition", "vehicle": 10, "by": "Joe", "to": to, "expect_error": err is not None}]
        out = play(s, dice, options=options, cars=cars)
        if err:
            assert err in out["steps"][1]["error"]
        else:
            assert out["state"]["vehicles"]["10"]["pose"] == [700.0, 320.0, 0.0]


def test_reposition_not_over_terrain():
    steps, dice, options, cars = lost_control_game()
    cars = place(cars, {21: (600, 345, 0), 10: (700, 345, 0)})
    s = steps + [{"act": "reposition", "vehicle": 10, "by": "Joe", "to": [700, 360, 0], "expect_error": True}]
    assert "over infield" in play(s, dice, options=options, cars=cars)["steps"][1]["error"]


def test_option_reposition_measure():
    steps, dice, options, cars = lost_control_game()
    s = steps + [{"act": "reposition", "vehicle": 10, "by": "Joe", "to": [700, 310, 40], "expect_error": True}]
    out = play(s, dice, options=dict(options, reposition_measure="any_point"), cars=cars)
    assert "(its farthest corner) from where it lost control" in out["steps"][1]["error"]
    s[-1]["expect_error"] = False
    assert play(s, dice, options=options, cars=cars)["steps"][1]["result"] == "repositioned"


def test_nothing_else_happens_until_the_reposition():
    steps, dice, options, cars = lost_control_game()
    out = play(steps + [{"act": "hold", "vehicle": 21, "expect_error": True}], dice, options=options, cars=cars)
    assert "Joe must reposition it first" in out["steps"][1]["error"]


# --- gates, finishing, elimination ------------------------------------------------------

def test_crossing_back_undoes_a_gate():
    out = play([{"act": "move", "vehicle": 10, "path": [[560, 300, 0]]}, {"end_turn": True},
                {"act": "move", "vehicle": 10, "path": [[480, 300, 0]]}], [], cars=SCENE["cars"])
    assert out["state"]["vehicles"]["10"]["progress"] == 0
    assert "backs over gate 1 (start)" in " ".join(out["steps"][2]["events"])


def test_a_car_round_the_end_of_a_gate_does_not_cross_it():
    cars = place(SCENE["cars"], {21: (420, 80, 0)})
    out = play([{"act": "move", "vehicle": 21, "path": [[600, 80, 0]]}], [], options={"check_deployment": False},
               cars=cars, terrain=SCENE["terrain"][:2])
    assert out["state"]["vehicles"]["21"]["progress"] == 0


def finish_game(options=None):
    cars = place(SCENE["cars"], {10: (450, 300, 0), 11: (900, 700, 180), 20: (440, 200, 0), 21: (1000, 800, 180)})
    rosters = with_progress({10: 4, 11: 2, 20: 4, 21: 2})
    steps = [{"round": {}},
             {"act": "move", "vehicle": 10, "path": [[620, 300, 0]]}, {"end_turn": True},
             {"act": "move", "vehicle": 20, "path": [[640, 200, 0]]}, {"end_turn": True},
             {"act": "hold", "vehicle": 11}, {"end_turn": True}, {"act": "hold", "vehicle": 21}, {"end_turn": True}]
    return play(steps, [9, 4], options=dict({"check_deployment": False}, **(options or {})), cars=cars, rosters=rosters,
                terrain=SCENE["terrain"][:2])


def test_option_finish_distance_from():
    # past the line by the rear: Rustler 82.5 mm, Scrapjaw 102.5; by the front 157.5 and 177.5:
    # the same order either way (the next test tells them apart); the points are the option's
    assert finish_game()["state"]["finish_order"] == [20, 10]
    assert finish_game({"finish_distance_from": "front"})["state"]["finish_order"] == [20, 10]
    out = finish_game({"finishing_points": [5, 1]})
    assert out["state"]["scores"] == {"Joe": 5, "Max": 1}


def test_finish_ranking_front_differs_from_rear():
    cars = place(SCENE["cars"], {10: (450, 300, 0), 11: (900, 700, 180), 20: (440, 200, 0), 21: (1000, 800, 180)})
    cars = [dict(c, length_mm=150) if c["id"] == 20 else c for c in cars]
    cars = place(cars, {20: (400, 200, 0)})
    rosters = with_progress({10: 4, 11: 2, 20: 4, 21: 2})
    steps = [{"round": {}},
             {"act": "move", "vehicle": 10, "path": [[620, 300, 0]]}, {"end_turn": True},
             {"act": "move", "vehicle": 20, "path": [[660, 200, 0]]}, {"end_turn": True},
             {"act": "hold", "vehicle": 11}, {"end_turn": True}, {"act": "hold", "vehicle": 21}, {"end_turn": True}]
    # Scrapjaw 150 long at 660: rear 85 past, front 235; Rustler rear 82.5, front 157.5
    kw = dict(cars=cars, rosters=rosters, terrain=SCENE["terrain"][:2])
    assert play(steps, [9, 4], options={"check_deployment": False}, **kw)["state"]["finish_order"] == [20, 10]
    steps[3]["path"] = [[654, 200, 0]]          # rear 79 past: behind the Rustler's 82.5 by the rear
    assert play(steps, [9, 4], options={"check_deployment": False}, **kw)["state"]["finish_order"] == [10, 20]
    assert play(steps, [9, 4], options={"check_deployment": False, "finish_distance_from": "front"},
                **kw)["state"]["finish_order"] == [20, 10]


def elimination_round_end(options=None):
    # everyone but nobody-behind: all four across the elimination gate (far, gate 2); the one
    # closest to it at the round's end goes
    cars = place(SCENE["cars"], {10: (560, 700, 180), 11: (300, 600, -90), 20: (640, 800, 180), 21: (690, 300, 0)})
    rosters = with_progress({10: 2, 11: 2, 20: 2, 21: 2})
    steps = [{"round": {}}]
    for m in (10, 20, 11, 21):
        steps += [{"act": "hold", "vehicle": m}, {"end_turn": True}]
    return play(steps, [9, 4], options=dict({"check_deployment": False, "mission": "elimination_race"}, **(options or {})),
                cars=cars, rosters=rosters, terrain=SCENE["terrain"][:2])


def test_elimination_at_round_end_closest_to_the_gate():
    out = elimination_round_end()
    assert out["state"]["eliminated"] == [20]           # its rear 22.5 mm past the far gate: the nearest
    assert "closest to it" in " ".join(out["steps"][-1]["events"])
    assert out["state"]["elimination_gate"] == {"index": 3, "gate": "start"}


def test_option_elimination_closest():
    # the Gravedigger on the near straight straddles the far gate's line extended (0 from it) but
    # is 318 mm from the gate between its posts; the Scrapjaw is 22.5 mm past the gate itself
    seg = elimination_round_end()["state"]["eliminated"]
    line = elimination_round_end({"elimination_closest": "line"})["state"]["eliminated"]
    assert seg == [20] and line == [21]


# --- other missions ------------------------------------------------------------------

def test_battle_royale_scores_damage():
    gates = [{"name": "north", "a": [900, 906.4], "b": [500, 906.4]},
             {"name": "south", "a": [900, 93.6], "b": [500, 93.6]}]
    cars = shoot_setup()
    steps = [{"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 20}]
    dice = [9, 9, 1, 1, 10, 10]
    out = play(steps, dice, options={"mission": "battle_royale", "check_deployment": False}, cars=cars, gates=gates)
    assert out["state"]["scores"] == {"Joe": 0, "Max": 1}
    out = play(steps, dice, options={"mission": "battle_royale", "check_deployment": False,
                                     "royale_scoring": "per_hit_point"}, cars=cars, gates=gates)
    assert out["state"]["scores"] == {"Joe": 0, "Max": 2}


def test_battle_royale_player_with_no_cars_left_forfeits():
    gates = [{"name": "north", "a": [900, 906.4], "b": [500, 906.4]},
             {"name": "south", "a": [900, 93.6], "b": [500, 93.6]}]
    rosters = copy.deepcopy(ROSTERS)
    rosters[1]["vehicles"][0]["hp"] = 2
    rosters[1]["vehicles"][1]["hp"] = 0          # already wrecked
    cars = shoot_setup()
    steps = [{"round": {}}, {"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 20},
             {"end_turn": True}, {"act": "hold", "vehicle": 11}, {"end_turn": True}]
    out = play(steps, [9, 4, 9, 9, 1, 1, 10, 10], options={"mission": "battle_royale", "check_deployment": False},
               cars=cars, gates=gates, rosters=rosters)
    assert out["state"]["vehicles"]["20"]["status"] == "destroyed"
    assert out["state"]["over"] is True and out["state"]["winner"] == "Max"
    assert "Joe has no vehicles left and forfeits: Max wins" in out["steps"][-1]["events"]


def test_arena_race_scores_first_across():
    steps = [{"act": "move", "vehicle": 10, "path": [[600, 300, 0]]}, {"end_turn": True},
             {"act": "move", "vehicle": 20, "path": [[600, 200, 0]]}]
    out = play(steps, [], options={"mission": "arena_race"}, cars=SCENE["cars"])
    assert out["state"]["scores"] == {"Joe": 0, "Max": 1}


def test_race_round_limit_and_game_length():
    out = play([{"round": {}}] + sum(([{"act": "hold", "vehicle": m}, {"end_turn": True}] for m in (10, 20, 11, 21)), []),
               [9, 4], options={"race_round_limit": 1}, cars=SCENE["cars"])
    assert out["state"]["over"] is True and out["state"]["winner"] is None
    with pytest.raises(Exception, match="the game is over"):
        play([{"round": {}}] + sum(([{"act": "hold", "vehicle": m}, {"end_turn": True}] for m in (10, 20, 11, 21)), [])
             + [{"round": {}}], [9, 4], options={"race_round_limit": 1}, cars=SCENE["cars"])


# --- stress ------------------------------------------------------------------------------

def stressed(options=None, dice_recover=(12,)):
    cars = place(SCENE["cars"], {21: (600, 300, 0), 10: (700, 300, 0), 20: (800, 200, 0)})
    steps = [{"round": {}}, {"act": "attack", "vehicle": 21, "weapon": "wrecker_arm", "target": 10}, {"end_turn": True},
             {"act": "hold", "vehicle": 10}, {"end_turn": True}, {"act": "hold", "vehicle": 20}, {"end_turn": True},
             {"act": "hold", "vehicle": 11}, {"end_turn": True},
             {"round": {}}, {"act": "recover", "vehicle": 10}]
    # Joe first; wrecker arm 11-2 hits, 2 misses; defence 1, 1, 10: 2 damage; Obstructing: command 9 passes
    return play(steps, [4, 9, 11, 2, 1, 1, 10, 9, 9, 4, *dice_recover],
                options=dict({"check_deployment": False}, **(options or {})), cars=cars)


def test_stress_from_damage_and_recovery():
    out = stressed(dice_recover=(7,))
    assert "stress 1" in " ".join(out["steps"][8]["events"])
    assert out["steps"][10]["removed"] == 1 and out["state"]["vehicles"]["10"]["stress"] == 0


def test_option_recover():
    out = stressed({"recover": "twelve_only"}, dice_recover=(7,))
    assert out["steps"][10]["removed"] == 0 and out["state"]["vehicles"]["10"]["stress"] == 1


def test_option_use_stress():
    with pytest.raises(Exception, match="has no stress to recover from"):
        stressed({"use_stress": False}, dice_recover=(7,))


def test_option_start_gate_counts():
    out = play([{"act": "move", "vehicle": 10, "path": [[600, 300, 0]]}], [],
               options={"start_gate_counts": False, "check_deployment": False}, cars=SCENE["cars"])
    assert out["state"]["vehicles"]["10"]["progress"] == 0          # the far gate is gate 1


def test_option_mission_values():
    rules = rule_system("wasteland_rally")
    names = {o.name for o in rules.options}
    assert {"mission", "critical_success", "reposition_measure", "finish_distance_from"} <= names
    for o in rules.options:
        assert o.rule and o.doc and (o.choices is None or o.default in o.choices)
    with pytest.raises(RulesError, match="option mission: 'demolition' is not one of"):
        rule_system("wasteland_rally", {"mission": "demolition"})


# --- campaign -------------------------------------------------------------------------

def test_campaign_mission_roll():
    out = play([{"act": "campaign_mission", "campaign_round": 1},
                {"act": "campaign_mission", "campaign_round": 2, "previous": "two_lap_race"},
                {"act": "campaign_mission", "campaign_round": 3, "previous": "arena_race"},
                {"act": "campaign_mission", "campaign_round": 4, "final": True}], [2, 5], cars=SCENE["cars"])
    assert [s["mission"] for s in out["steps"]] == ["two_lap_race", "arena_race", "elimination_race", "outrun"]
    # said in players' words: the page heads the outcome with its result ("ARENA_RACE" was shown)
    assert [s["result"] for s in out["steps"]] == ["two lap race", "arena race", "elimination race", "outrun"]


def test_upgrade_stage_needs_the_game_over():
    out = play([{"act": "upgrade_stage", "expect_error": True}], [], cars=SCENE["cars"])
    assert "comes after the game is over" in out["steps"][0]["error"]


# --- page hooks -------------------------------------------------------------------------

def test_page_hooks():
    rules, st = game()
    card = rules.card(st, 20)
    assert card["attributes"] == {"move_in": 11, "skill": 9, "defence": 4, "command": 6}
    assert card["weapons"][0]["arcs"] == ["front", "left", "right", "rear"]
    assert card["gates"] == {"crossed": 0, "of": 5, "next": "start"}
    ov = rules.overlays(st, 10)
    assert ov["move_regions"][0]["allowance_in"] == 10.0 and len(ov["arcs"]) == 2
    t = rules.targets(st, 10)
    assert t[0]["marker"] in (11, 20) and all("range" in w for w in t[0]["weapons"])
    specs = [a.to_json() for a in rules.action_specs(st, 10)]
    assert [a["act"] for a in specs] == ["hold", "move", "attack", "drop"]
    move = next(a for a in specs if a["act"] == "move")
    assert {"name": "path", "kind": "table_path", "of": 10,
            "label": "the way the car drove, as the camera saw it"} in move["fields"]
    assert [f["name"] for f in move["fields"]] == ["vehicle", "path", "advance", "boost", "backward"]
    attack = next(a for a in specs if a["act"] == "attack")
    # the exploding barrels by the start can be shot at (a critical success sets them off): one
    # choice of target, the cars then the barrels
    assert [f["name"] for f in attack["fields"]] == ["vehicle", "weapon", "target"]
    assert attack["fields"][2]["choices"][-1] == {"value": "exploding barrels",
                                                  "label": "exploding barrels (exploding terrain)"}
    json.dumps([card, ov, t, specs])


def test_an_attack_has_one_choice_of_target_the_cars_then_the_exploding_terrain():
    """An attack has one target, a car or a piece of exploding terrain: one required choice. Two
    optional fields (a car, or terrain) left the page's checks, which try the options of the
    required choices, nothing to try: Attack was greyed ("say what the Heavy Machine Gun
    attacks") on every table with exploding terrain, the demo's among them."""
    from companion.checks import check_action, dry_run
    rules, st = game()
    spec = next(a for a in rules.action_specs(st, 21) if a.act == "attack")
    target = spec.field("target")
    assert not target.optional and spec.field("terrain") is None
    assert [c["value"] for c in target.choices] == [10, 11, "exploding barrels"]      # the enemy cars
    out = check_action(spec, lambda value: 0,
                       lambda spec, body: dry_run(rules, copy.deepcopy(st), {**body, "vehicle": 21}))
    rows = {r["value"]: r for r in out["options"]["target"]}
    assert out["ok"] and rows["exploding barrels"]["ok"], out
    # Resolved with the barrels as its target, as with `terrain` (scenario files may say either).
    out = play([{"act": "attack", "vehicle": 21, "weapon": "flamethrower", "target": "exploding barrels"}],
               [5, 5, 5, 5, 5, 5, 5, 12, 3], cars=SCENE["cars"])
    assert out["steps"][0]["result"] == "exploded" and out["state"]["vehicles"]["20"]["hp"] == 7
    out = play([{"act": "attack", "vehicle": 21, "weapon": "flamethrower", "target": "infield", "expect_error": True}],
               [], cars=SCENE["cars"])
    assert "no exploding terrain named 'infield'" in out["steps"][0]["error"]


def arc_path(x, y, heading_deg, radius_mm, turn_deg, steps):
    """Poses along a turn driven on a circle (the camera's samples of a car pushed round a bend)."""
    out = []
    for k in range(1, steps + 1):
        a = math.radians(heading_deg + turn_deg * k / steps)
        h0 = math.radians(heading_deg)
        cx, cy = x - radius_mm * math.sin(h0), y + radius_mm * math.cos(h0)
        out.append([cx + radius_mm * math.sin(a), cy - radius_mm * math.cos(a), heading_deg + turn_deg * k / steps])
    return out


def test_option_path_reading():
    # the Dust Devil drives a quarter circle of radius 100 mm to the left (157 mm): two manoeuvres
    cars = place(SCENE["cars"], {10: (800, 300, 0), 11: (300, 200, 0), 20: (1000, 700, 180), 21: (1000, 800, 180)})
    step = [{"act": "move", "vehicle": 11, "path": arc_path(300, 200, 0, 100, 90, 18)}]
    m = play(step, [], options={"check_deployment": False}, cars=cars)["steps"][0]["move"]
    assert m["manoeuvres"] == 2 and m["distance_mm"] == pytest.approx(math.pi * 50, abs=0.5)
    with pytest.raises(Exception, match="degrees while moving"):
        play(step, [], options={"check_deployment": False, "path_reading": "on_the_spot"}, cars=cars)


def test_a_slow_drift_adds_up_to_manoeuvres():
    # 2 degrees at a time, each under the tolerance, 50 degrees in all: two manoeuvres
    cars = place(SCENE["cars"], {10: (800, 300, 0), 11: (300, 200, 0), 20: (1000, 700, 180), 21: (1000, 800, 180)})
    step = [{"act": "move", "vehicle": 11, "path": arc_path(300, 200, 0, 150, 50, 25)}]
    assert play(step, [], options={"check_deployment": False}, cars=cars)["steps"][0]["move"]["manoeuvres"] == 2
    # camera jitter (1 degree back and forth) on a straight is no manoeuvre
    jitter = [[300 + 10 * k, 200, (-1) ** k] for k in range(1, 11)]
    step = [{"act": "move", "vehicle": 11, "path": jitter}]
    assert play(step, [], options={"check_deployment": False}, cars=cars)["steps"][0]["move"]["manoeuvres"] == 0


def test_page_offers_only_the_reposition_while_one_is_owed():
    steps, dice, options, cars = lost_control_game()
    rules, st = game(options, cars=cars)
    sess = GameSession(rules, st, ScriptedDice())
    sess.dice.queue += dice
    sess.act(steps[0])
    acts = [a.to_json() for a in rules.action_specs(sess.state, 10)]
    assert [a["act"] for a in acts] == ["reposition"]
    assert acts[0]["fields"][1]["choices"] == [{"value": "Joe", "label": "Joe"}]
    assert acts[0]["fields"][2] == {"name": "to", "kind": "table_pose", "label": "where the car stands now", "of": 10}
    assert rules.actions(sess.state, 21) == []


def test_judging_only_where_the_car_ended_reads_turn_straight_turn():
    rules, st = game({"check_deployment": False})
    j = rules.judge_move(st, 11, Pose(320, 380, 90))
    assert j["legal"] and j["manoeuvres"] == 2 and j["direction"] == "forward"
    # a move itself is read from the path the camera saw: there is no 'to' to send, and one sent is
    # refused by name (it was ignored, and the move refused for its missing path)
    with pytest.raises(Exception, match="move: no field 'to' \\(its fields: vehicle, path, advance, boost, backward\\)"):
        play([{"act": "move", "vehicle": 11, "to": [320, 380, 90]}], [], options={"check_deployment": False},
             cars=SCENE["cars"])


def test_state_is_plain_and_deep_copyable():
    rules, st = game()
    twin = copy.deepcopy(st)
    assert json.dumps(state_json(twin), sort_keys=True) == json.dumps(state_json(st), sort_keys=True)
    assert state_json(st)["vehicles"]["10"]["pose"] == [450.0, 300.0, 0.0]


RECORDED = [p for p in SCENARIOS if p.stem.startswith(("wr-02", "wr-04"))]


@pytest.mark.parametrize("path", RECORDED, ids=[p.stem for p in RECORDED])
def test_a_recorded_game_plays_back(tmp_path, path):
    from companion.record import resume
    from companion.store import GameStore
    data = load_scenario(path)
    store = GameStore(tmp_path / "game.db")
    played = run_scenario(data, str(path), store=store)
    assert state_json(resume(store).session.state) == played["state"]


def test_undo_restores_the_state():
    rules, st = game()
    sess = GameSession(rules, st, ScriptedDice())
    sess.act({"act": "move", "vehicle": 10, "path": [[600, 300, 0]]})
    assert sess.state.vehicles[10].progress == 1
    sess.undo()
    assert sess.state.vehicles[10].progress == 0 and sess.state.active is None


# --- a whole race -----------------------------------------------------------------------

class ScriptedDice(DiceSource):
    """Fixed dice: faces queued for the moments the test sets up, else a fixed face by what is
    asked (commands and defences pass, skill 9, the initiative alternating, blasts 3)."""

    name = "scripted"

    def __init__(self):
        self.queue: list[int] = []
        self.asked: list[str] = []
        self.rounds = 0

    def throw(self, request):
        self.asked.append(request.describe())
        faces = []
        for _ in request.dice:
            if self.queue:
                faces.append(self.queue.pop(0))
            elif "initiative" in request.purpose:
                first = "Max" if self.rounds % 2 == 0 else "Joe"
                faces.append(9 if request.who == first else 4)
            elif request.purpose.startswith(("command", "defence")):
                faces.append(10)
            elif request.purpose.startswith("skill"):
                faces.append(9)
            elif "explode" in request.purpose:
                faces.append(3)
            else:
                faces.append(5)
        return DiceThrow(tuple(faces), request.dice, self.name)


def lane(offset_mm):
    """A car's lane: the corners of its rectangle round the infield, anticlockwise."""
    o = offset_mm
    return [(300 - o, 250 - o), (1100 + o, 250 - o), (1100 + o, 750 + o), (300 - o, 750 + o)]


HEADINGS = [0.0, 90.0, 180.0, -90.0]


def plan(pose, offset_mm, budget_mm, free, turns=True):
    """A path round the lane: straight runs and 90-degree turns on the spot at the corners (two
    manoeuvres each, extras at 2 in), spending at most `budget_mm`."""
    corners = lane(offset_mm)
    edge = min(range(4), key=lambda i: abs((pose.heading_deg - HEADINGS[i] + 180) % 360 - 180))
    x, y = pose.x_mm, pose.y_mm
    path, used, man, run = [], 0.0, 0, 0.0
    while True:
        cx, cy = corners[(edge + 1) % 4]
        to_corner = math.hypot(cx - x, cy - y)
        left = budget_mm - used
        if to_corner >= left:
            h = math.radians(HEADINGS[edge])
            path.append([x + left * math.cos(h), y + left * math.sin(h), HEADINGS[edge]])
            run += left
            break
        if to_corner > 0.01:
            path.append([cx, cy, HEADINGS[edge]])
        used += to_corner
        run += to_corner
        x, y = cx, cy
        extra = (max(0, man + 2 - free) - max(0, man - free)) * 2 * MM
        if not turns or used + extra > budget_mm:
            break
        used += extra
        man += 2
        edge = (edge + 1) % 4
        path.append([x, y, HEADINGS[edge]])
    return path, run


class Race:
    def __init__(self):
        rosters = copy.deepcopy(ROSTERS)
        rosters[1]["pool"] = 3
        self.rules, st = game(rosters=rosters)
        self.dice = ScriptedDice()
        #: The choices the owners make when the rules ask (the upgrade stage's repairs and saves).
        self.choices = FixedChoices([], "test")
        self.session = GameSession(self.rules, st, self.dice, self.choices)
        self.kinds: set[str] = set()
        self.events: list[str] = []

    @property
    def state(self):
        return self.session.state

    def act(self, **action):
        out = self.session.act(action)
        self.kinds.add(action["act"])
        self.events += out.get("events", [])
        for p in list(self.state.pending):
            v = self.state.vehicles[p["vehicle"]]
            self.act(act="reposition", vehicle=v.marker, by=p["by"][0],
                     to=[v.pose.x_mm, v.pose.y_mm, v.pose.heading_deg])
        return out

    def end(self):
        out = self.session.end_turn()
        self.events += out["events"]
        return out

    def offset(self, v):
        return -50.0 if v.owner == "Max" else 50.0

    def drive(self, v):
        """Round the lane, as far as the car may, stopping clear of the others."""
        st = self.state
        if v.progress >= len(st.sequence):
            return self.act(act="hold", vehicle=v.marker)
        free = 2 if "tank_tracks" in v.upgrades else 1
        best = None
        for advance in (False, True):
            budget = MM * self.rules.allowance_in(v, advance)[0]
            while budget > 0:
                path, run = plan(v.pose, self.offset(v), budget, free, turns=not advance)
                if not path:
                    budget = 0
                    break
                end = v.footprint(Pose(*path[-1]))
                if all(end.polygon.distance(o.footprint().polygon) > 5 for o in st.in_play() if o is not v):
                    break
                budget -= 20
            if budget > 0 and (best is None or run > best[2]):
                best = (advance, path, run)
        if best is None:
            return self.act(act="hold", vehicle=v.marker)
        return self.act(act="move", vehicle=v.marker, path=best[1], advance=best[0])

    def turn(self):
        st = self.state
        mine = [v for v in st.vehicles.values() if v.owner == st.up and v.in_play and v.marker not in st.activated]
        self.drive(mine[0])
        self.end()


def test_a_whole_two_lap_race():
    race = Race()
    st = race.state
    dice = race.dice

    # Round 1, Max first. The Rustler boosts 9 in, drives 4.8 in more and crosses the start.
    race.session.start_round({"Max": [10, 11], "Joe": [21, 20]})
    dice.rounds += 1
    out = race.act(act="move", vehicle=10, boost=True, path=[[678.6, 300, 0], [800, 300, 0]])
    assert out["move"]["boost_mm"] == pytest.approx(228.6) and st.vehicles[10].progress == 1
    race.end()
    # The Gravedigger sets off the barrels by the start with its flamethrower: a 12 among the
    # eight Torrent dice. The Scrapjaw beside them fails its defence test: 3 damage.
    dice.queue += [5, 5, 5, 5, 5, 5, 5, 12, 2]
    out = race.act(act="attack", vehicle=21, weapon="flamethrower", terrain="exploding barrels")
    assert out["result"] == "exploded" and st.vehicles[20].hp == 7
    race.end()
    race.act(act="move", vehicle=11, path=[[540, 300, 0]])
    assert st.vehicles[11].progress == 1
    race.end()
    # The Scrapjaw advances, then its turret gun hits the Dust Devil behind it with a natural 12;
    # the Dust Devil fails its command test and loses control: Joe's Scrapjaw is nearest, so Joe
    # repositions it (the race driver leaves it where it stands).
    race.act(act="move", vehicle=20, path=[[700, 200, 0]], advance=True)
    dice.queue += [12, 3, 10, 2, 10]
    out = race.act(act="attack", vehicle=20, weapon="light_machine_gun", target=11)
    assert out["criticals"] == 1 and "reposition" in race.kinds
    assert any(m["reason"] == "made an advance move" for m in out["rolls"][0]["modifiers"])
    race.end()
    assert st.round == 1 and st.up is None                      # the round is over
    assert st.vehicles[20].stress == 1                         # the blast damaged it

    # Round 2, Joe first. The Scrapjaw recovers its stress and backs up 8 mm; the Rustler drops
    # oil on it (2.98 in behind): two hits, no damage, and it keeps control.
    race.session.start_round({})
    dice.rounds += 1
    assert st.up == "Joe"
    dice.queue += [8]
    race.act(act="recover", vehicle=20)
    assert st.vehicles[20].stress == 0
    race.act(act="move", vehicle=20, path=[[692, 200, 0]], backward=True)
    assert st.vehicles[20].moved == "backward"
    race.end()
    out = race.act(act="drop", vehicle=10)
    assert [(t["target"], t["hits"], t["damage"]) for t in out["targets"]] == [(20, 2, 0)]
    assert "the Scrapjaw keeps control (hit by the obstructing Oil Dropper)" in out["events"]
    race.end()
    race.act(act="hold", vehicle=21)        # the Gravedigger waits for the smoke to clear
    race.end()
    race.turn()                             # the Dust Devil drives on

    # Then they race: every car round its lane until all four have finished.
    for _ in range(400):
        if st.over:
            break
        if st.up is None:
            race.session.start_round({})
            dice.rounds += 1
        else:
            race.turn()
    assert st.over
    assert sorted(st.finish_order) == [10, 11, 20, 21]
    assert [st.vehicles[m].finished for m in st.finish_order] == [1, 2, 3, 4]
    assert all(v.progress == 5 for v in st.vehicles.values())
    assert st.winner == st.vehicles[st.finish_order[0]].owner
    # laps from the gate crossings: each car crossed start, far, start, far, start
    crossings = [e for e in race.events if "crosses gate" in e]
    assert len(crossings) == 20
    assert "burnt-out bus" in st.removed_terrain         # a car in the outer lane smashed through it
    assert "the Scrapjaw smashes through the wreckage burnt-out bus: remove it" in race.events
    assert "the Dust Devil drives over the Rustler: both take command tests" in race.events

    assert st.finish_order == [10, 20, 11, 21] and st.scores == {"Max": 3 + 1, "Joe": 2 + 0}
    for m in (10, 11, 20, 21):
        name = st.vehicles[m].name
        mine = [e for e in crossings if e.startswith(f"the {name} crosses")]
        assert [e.split("(")[-1] for e in mine] == ["start)", "far)", "start)", "far)", "start)"]
    # The upgrade stage: race points into the pools (Joe had 3 banked), a D12 for the damaged
    # Scrapjaw: 10, and Joe, asked, saves it for 5 points
    dice.queue += [10]
    race.choices.choices.append(True)
    out = race.act(act="upgrade_stage")
    assert out["vehicles"] == {"20": "saved for 5"}
    assert st.pools == {"Max": 4, "Joe": 0} and out["campaign_points"] == {"Max": 1}
    out = race.act(act="campaign_mission", campaign_round=2, previous="two_lap_race")
    assert out["mission"] == "arena_race" and out["result"] == "arena race"
    assert race.kinds == {"move", "attack", "drop", "recover", "reposition", "hold", "upgrade_stage",
                          "campaign_mission"}
    json.dumps(state_json(st))


# --- at the table: the page's requests on the demo table, through the camera ---------------

class DemoTable:
    """The demo table with Wasteland Rally's starting grid, filmed by the synthetic camera and
    tracked; cars are moved as the demo's page moves them, and every request is the page's."""

    def __init__(self):
        from companion.game import TableGame
        from companion.live import LiveTable
        from companion.web import create_app
        from vision.demo import demo_table
        from vision.playable import PlayableCars
        from vision.sources import SyntheticSource
        table = demo_table()
        rules = rule_system("wasteland_rally")
        layout = rules.demo_layout([(c.id, c.name, c.length_mm, c.width_mm) for c in table.cars],
                                   (table.width_mm, table.depth_mm))
        self.cars = PlayableCars(layout)
        self.source = SyntheticSource(table, paced=False, script=self.cars)
        self.live = LiveTable(self.source, table, self.source.camera)
        self.game = TableGame(self.live)
        self.game.demo_mover = self.cars.move
        self.client = create_app(self.game, {"TESTING": True}).test_client()
        self.headers = {"X-CSRF-Token": self.client.get("/api/session").get_json()["csrf"]}
        self.film(4)

    def film(self, still: int = 4) -> None:
        """Frames until every car has got where it was sent, then `still` frames of it standing."""
        left = still
        while left > 0:
            f = self.source.read()
            self.live.process(f.image, f.index, f.time_s)
            left = still if self.cars.moving() else left - 1

    def post(self, path: str, body: dict, status: int = 200) -> dict:
        r = self.client.post(f"/api/{path}", json=body, headers=self.headers)
        assert r.status_code == status, r.get_json()
        return r.get_json()

    def drive(self, marker: int, *poses) -> None:
        """Drag the car on the demo page through these poses; the camera films it going."""
        for x, y, h in poses:
            self.post("demo/move", {"vehicle": marker, "x_mm": x, "y_mm": y, "heading_deg": h})
        self.film()

    def state(self) -> dict:
        return self.client.get("/api/game").get_json()


def test_activations_played_on_the_demo_table_through_the_page():
    t = DemoTable()
    g = t.post("game", {"rules": "wasteland_rally", "rosters": t.client.get(
        "/api/rosters/starter?rules=wasteland_rally").get_json()})
    assert g["game"]["turn_text"] == "before the first round: start a round (the initiative roll-off)"
    g = t.post("round", {"orders": {}})
    assert g["pending"]["purpose"] == "initiative roll-off"
    t.post("dice/typed", {"faces": [9]})
    g = t.post("dice/typed", {"faces": [3]})
    assert g["game"]["up"] == "Player 1" and g["game"]["active"] is None
    start = g["game"]["state"]["vehicles"]["10"]["pose"]

    # The Interceptor is pushed 150 mm straight on before its move is declared (its first
    # action): the camera's path from where it stood gives the distance, and it crosses the start.
    car = t.client.get("/api/car/10").get_json()
    assert [a["act"] for a in car["actions"]] == ["hold", "move", "attack"]
    t.drive(10, (start[0] + 150, start[1], 0))
    g = t.post("act", {"act": "move", "vehicle": 10})
    out = g["last_outcome"]["event"]["outcome"]
    assert out["result"] == "moved" and out["move"]["distance_mm"] == pytest.approx(150, abs=3)
    assert out["move"]["manoeuvres"] == 0
    assert any("crosses gate 1 of 5 (Start/finish)" in e for e in out["events"])
    assert g["game"]["active"] == 10
    # it has moved: a second move is not offered, and one sent is refused naming what it can do
    bad = t.post("act", {"act": "move", "vehicle": 10}, status=409)
    assert "cannot move now" in bad["error"]
    g = t.post("end_turn", {})
    assert g["game"]["up"] == "Player 2"

    # Player 2 passes: two cars left and no order, so the page asks which; only Player 2 may say.
    g = t.post("end_turn", {})
    assert g["pending"]["waiting"] == "choice" and g["pending"]["player"] == "Player 2"
    assert [o["value"] for o in g["pending"]["options"]] == [11, 13]
    bad = t.post("choice", {"player": "Player 1", "value": 13}, status=409)
    assert "Player 2's to make" in bad["error"]
    g = t.post("choice", {"player": "Player 2", "value": 13})
    assert g["game"]["up"] == "Player 1" and 13 in g["game"]["state"]["activated"]

    # The War Rig's gun hits the Rust Bucket with a natural 12: a critical; it fails its command
    # test and loses control (passing its defence test); the War Rig is nearest, so Player 1
    # repositions it.
    t.post("act", {"act": "attack", "vehicle": 12, "weapon": "heavy_machine_gun", "target": 11})
    for faces in ([12, 3], [10, 10], [2], [10]):
        g = t.post("dice/typed", {"faces": faces})
    out = g["last_outcome"]["event"]["outcome"]
    assert out["criticals"] == 1 and any("loses control" in e for e in out["events"])
    assert g["game"]["turn_text"] == "the Rust Bucket lost control: Player 1 repositions it"
    was = g["game"]["state"]["pending"][0]["from"]
    specs = t.client.get("/api/car/11").get_json()["actions"]
    assert [a["act"] for a in specs] == ["reposition"]
    # Put down 6.7 in away and turned 95 degrees: the page says why not, and nothing changes.
    t.drive(11, (was[0] + 6.7 * MM, was[1], 95))
    pv = t.post("preview", {"act": "reposition", "vehicle": 11, "by": "Player 1"})
    assert pv["judged"]["legal"] is False and re.search(r"turned 9[45]\.\d degrees", pv["judged"]["reasons"][0])
    bad = t.post("act", {"act": "reposition", "vehicle": 11, "by": "Player 1"}, status=409)
    assert "from where it lost control" in bad["error"]
    assert t.state()["game"]["state"]["pending"]
    # Turned 20 degrees and slid half an inch: taken.
    t.drive(11, (was[0] + 10, was[1], 20))
    g = t.post("act", {"act": "reposition", "vehicle": 11, "by": "Player 1"})
    assert g["game"]["state"]["pending"] == []
    assert g["last_outcome"]["event"]["outcome"]["moved"]["outcome"] == "in"
    g = t.post("end_turn", {})
    assert g["game"]["up"] == "Player 2"

    # The repositioned Rust Bucket drives on in its own activation, from where it was put.
    stood = g["game"]["state"]["vehicles"]["11"]["pose"]
    h = math.radians(stood[2])
    t.drive(11, (stood[0] + 80 * math.cos(h), stood[1] + 80 * math.sin(h), stood[2]))
    g = t.post("act", {"act": "move", "vehicle": 11})
    out = g["last_outcome"]["event"]["outcome"]
    assert out["result"] == "moved" and out["move"]["distance_mm"] == pytest.approx(80, abs=3)
    g = t.post("end_turn", {})
    # Player 1's last car, the Hearse, passes (no question: it is the only one): the round ends.
    g = t.post("end_turn", {})
    assert g["game"]["up"] is None and g["game"]["round"] == 1
    assert g["game"]["turn_text"] == "round 1 is over: start the next round"
    g = t.post("round", {"orders": {}})
    assert g["pending"]["purpose"] == "initiative roll-off"


def test_the_whole_game_uses_every_action_and_only_the_pages_fields():
    """examples/scenarios/wr-game-whole.json: each action is one the acting car's side is offered
    at that moment, with no field outside its spec; the camera's fields (the path driven, where a
    repositioned car stands) are given to the spec as the table gives them, not sent."""
    from companion.dice import FixedDice
    from companion.rules.actions import CAMERA_KINDS
    path = SCENARIOS[0].parent / "wr-game-whole.json"
    data = load_scenario(path)
    assert check_expectations(data, run_scenario(data, str(path))) == []
    rules = rule_system("wasteland_rally", data["options"])
    sess = GameSession(rules, rules.new_game(data["rosters"], parse_scene(data)), FixedDice(data["dice"]),
                       FixedChoices(data["choices"]))

    class Table:
        def __init__(self, step):
            self.step = step

        def pose_of(self, marker):
            return self.step["to"]

        def path_of(self, marker):
            return self.step["path"]

        def point(self, value, what):
            return value

    acts, passes, rounds = set(), 0, 0
    for step in data["steps"]:
        if "round" in step:
            rounds += 1
            sess.start_round(step["round"])
        elif step.get("end_turn"):
            passes += sess.state.active is None
            sess.end_turn()
        else:
            st = sess.state
            specs = {s.act: s for s in rules.action_specs(st, rules.actor_marker(st, step))}
            assert step["act"] in specs, (step, list(specs))
            spec = specs[step["act"]]
            camera = {f.name for f in spec.fields if f.kind in CAMERA_KINDS}
            filled = spec.fill({k: v for k, v in step.items() if k not in camera}, Table(step))
            assert {k: v for k, v in filled.items() if k in step} == step
            sess.act(filled)
            acts.add(step["act"])
    assert acts == {"move", "attack", "drop", "hold", "recover", "reposition", "upgrade_stage", "campaign_mission"}
    assert passes == 1 and rounds == 2 and sess.state.over


def test_a_move_judged_on_a_scene_alone():
    rules = rule_system("wasteland_rally")
    scene = copy.deepcopy(SCENE)
    scene["cars"][1]["type"] = "buggy"
    st = rules.game_from_scene(parse_scene(scene), scene["cars"])
    assert {v.owner for v in st.vehicles.values()} == {"Player 1", "Player 2"}
    assert st.vehicles[11].type == "buggy"
    assert rules.judge_move(st, 11, Pose(320 + 9 * MM - 1, 300, 0))["legal"]         # a buggy's 9 in
    assert not rules.judge_move(st, 11, Pose(320 + 9 * MM + 5, 300, 0))["legal"]
    with pytest.raises(RulesError, match="cars of two players"):
        rules.game_from_scene(parse_scene({**scene, "cars": scene["cars"][:1]}), scene["cars"][:1])


def test_turn_info_lists_the_rounds_activations():
    rules, st = game()
    sess = GameSession(rules, st, ScriptedDice())
    sess.start_round({"Max": [10, 11], "Joe": [21]})
    info = rules.turn_info(st)
    # In turns, as play will reach them (CORE, "Activating Units"), not each player's cars together.
    assert info["order"] == [{"player": "Max", "vehicle": 10}, {"player": "Joe", "vehicle": 21},
                             {"player": "Max", "vehicle": 11}] and info["turn"] == -1 and info["up"] == "Max"
    sess.act({"act": "hold", "vehicle": 10})
    assert rules.turn_info(st)["turn"] == 0 and rules.turn_info(st)["active"] == 10
    sess.end_turn()
    sess.act({"act": "hold", "vehicle": 21})
    info = rules.turn_info(st)
    assert [o["vehicle"] for o in info["order"]] == [10, 21, 11] and info["turn"] == 1
    assert rules.turn_text(st) == "round 1: the Gravedigger's activation (Joe)"


def test_a_car_pushed_outside_its_move_has_not_moved_for_free():
    # During the Rustler's activation Joe's Scrapjaw is pushed 150 mm up the lane. When its own
    # turn comes the table's path starts where it was pushed to (paths restart when an activation
    # ends), but the move is judged from where the rules last put it: 150 + 150 mm, over its 11 in.
    rules, st = game()
    sess = GameSession(rules, st, ScriptedDice())
    sess.start_round({})
    sess.act({"act": "hold", "vehicle": 10})
    rules.update_poses(st, {20: Pose(600, 200, 0)})
    sess.end_turn()
    assert st.up == "Joe" and st.vehicles[20].stood == Pose(450, 200, 0)
    camera_path = [[600 + 5 * k, 200, 0] for k in range(31)]
    rules.update_poses(st, {20: Pose(750, 200, 0)})
    with pytest.raises(RulesError, match=r"the move costs 11\.81 in \(11\.81 in driven"):
        sess.act({"act": "move", "vehicle": 20, "path": camera_path})
    # Nor may it attack from where it was pushed: it moves only in a move.
    with pytest.raises(RulesError, match=r"the Scrapjaw stands 300 mm and 0 degrees from where it stood \(its dashed outline on the page\)"):
        sess.act({"act": "drop", "vehicle": 20, "weapon": "spike_dropper"})
    # Put back (a hair off, as hands do), it acts. (A refused action leaves the state as it was
    # before: the session's, not the object it was tried on.)
    rules.update_poses(sess.state, {20: Pose(451.5, 200.5, 1)})
    assert sess.act({"act": "drop", "vehicle": 20, "weapon": "spike_dropper"})["result"] == "dropped"


# --- issue 16: the rules read again ---------------------------------------------------

SCEN_DIR = Path(__file__).resolve().parents[1] / "examples" / "scenarios"


def scenario_with(name, **options):
    data = load_scenario(SCEN_DIR / name)
    data["options"] = {**data.get("options", {}), **options}
    return data


def test_option_race_tie_best_finisher():
    # wr-08: Max 3, Joe 3; a draw by default, Max's (the Rustler finished 1st) with best_finisher
    out = run_scenario(scenario_with("wr-08-race-tied-on-points.json", race_tie="best_finisher"))
    assert out["state"]["winner"] == "Max"
    assert "Rustler finished 1st: Max wins" in out["steps"][-1]["events"][-1]


def test_race_won_on_points_not_first_home():
    # wr-08 with points (3, 2, 2): Max's cars 1st and 4th, 3; Joe's 2nd and 3rd, 4: Joe wins, though
    # the first car home is Max's
    out = run_scenario(scenario_with("wr-08-race-tied-on-points.json", finishing_points=[3, 2, 2]))
    assert out["state"]["scores"] == {"Max": 3, "Joe": 4}
    assert out["state"]["winner"] == "Joe"


@pytest.mark.parametrize("mission", ["scavengers", "outrun"])
def test_cut_off_missions_may_be_refused(mission):
    gates = [{"name": "exit", "role": "finish", "a": [1400, 600], "b": [1400, 372]}]
    with pytest.raises(RulesError, match=f"the {mission} mission stops mid-text in the book"):
        game({"mission": mission, f"{mission}_reading": "not_supported", "check_deployment": False}, gates=gates)
    _, st = game({"mission": mission, "check_deployment": False}, gates=gates)
    assert st.sequence == ["exit"]


def test_option_side_arc_half_plane():
    # wr-09: the Scrapjaw dead ahead is in both half-plane side arcs, in neither flank
    cars = load_scenario(SCEN_DIR / "wr-09-spiked-wheels-side-arc.json")["cars"]
    for reading, outcome in (("flank", "out"), ("half_plane", "in")):
        rules, st = game({"check_deployment": False, "side_arc": reading}, cars=cars)
        arcs = rules.arc_of(st.vehicles[10].footprint(), st.vehicles[20].footprint())
        assert arcs["left"].outcome == arcs["right"].outcome == outcome


def test_spiked_wheels_flank_not_astern_or_ahead():
    cars = [{"id": 10, "name": "Rustler", "x_mm": 300, "y_mm": 700, "heading_deg": 0, "length_mm": 75, "width_mm": 32},
            {"id": 20, "name": "Scrapjaw", "x_mm": 215, "y_mm": 700, "heading_deg": 0, "length_mm": 75, "width_mm": 32},
            {"id": 21, "name": "Gravedigger", "x_mm": 300, "y_mm": 657, "heading_deg": 0, "length_mm": 80, "width_mm": 34},
            {"id": 11, "name": "Dust Devil", "x_mm": 370, "y_mm": 760, "heading_deg": 0, "length_mm": 70, "width_mm": 32}]
    rules, st = game({"check_deployment": False}, cars=cars)
    me = st.vehicles[10].footprint()
    astern = rules.arc_of(me, st.vehicles[20].footprint())
    right = rules.arc_of(me, st.vehicles[21].footprint())
    diagonal = rules.arc_of(me, st.vehicles[11].footprint())     # ahead-left, its rear overlapping the flank
    assert astern["left"].outcome == astern["right"].outcome == "out"
    assert right["right"].outcome == "in" and right["left"].outcome == "out"
    assert diagonal["left"].outcome == "in" and diagonal["front"].outcome == "in"


def test_turns_close_together_are_one_manoeuvre_far_apart_two():
    rules, st = game({"check_deployment": False})
    v = st.vehicles[11]
    start = Pose(320, 300, 0)
    def path(gap):
        a = math.radians(20)
        p1 = (320 + gap * math.cos(a), 300 + gap * math.sin(a))
        return [Pose(320, 300, 20), Pose(*p1, 20), Pose(*p1, 40)]
    assert rules.check_path(st, v, path(10.0), start=start)["manoeuvres"] == 1       # 10 mm apart: one 40-degree turn
    assert rules.check_path(st, v, path(30.0), start=start)["manoeuvres"] == 2       # over 1 in of straight: two
    with_break = rule_system("wasteland_rally", {"check_deployment": False, "turn_break_mm": 50.0})
    assert with_break.check_path(st, v, path(30.0), start=start)["manoeuvres"] == 1


def test_battle_royale_scores_damage_from_a_critical_loss_of_control():
    # the HMG hits once with a 12 (critical); both defence rolls pass (no damage from the shot); the
    # Scrapjaw fails its command test, loses control and fails its defence test: 1 damage, caused by
    # Max's attack: a point to Max
    gates = [{"name": "north", "a": [900, 906.4], "b": [500, 906.4]},
             {"name": "south", "a": [900, 93.6], "b": [500, 93.6]}]
    steps = [{"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 20}]
    out = play(steps, [12, 3, 10, 10, 2, 1], options={"mission": "battle_royale", "check_deployment": False},
               cars=shoot_setup(), gates=gates)
    assert out["state"]["vehicles"]["20"]["hp"] == 9
    assert out["state"]["scores"] == {"Joe": 0, "Max": 1}


def test_wreckage_already_touched_is_tested_again_when_driven_into():
    # the Rustler stands against the bus (its nose 0.5 mm off): driving on into it takes the test
    cars = place(SCENE["cars"], {10: (1092, 485, 0)})
    out = play([{"act": "move", "vehicle": 10, "path": [[1200, 485, 0]]}], [12],
               options={"check_deployment": False}, cars=cars)
    assert out["steps"][0]["contacts"][0]["kind"] == "wreckage"
    assert "smashes through the wreckage burnt-out bus" in " ".join(out["steps"][0]["events"])


def test_edge_gate_is_crossed_by_driving_off_the_table_through_it():
    # Outrun: the one gate on the right edge. The Rustler drives off the table through it (wholly
    # past the line) and finishes; the Scrapjaw may not leave the table beside the gate.
    gates = [{"name": "home", "role": "finish", "a": [1400, 578.6], "b": [1400, 350]}]
    cars = [{"id": 10, "name": "Rustler", "x_mm": 1300, "y_mm": 460, "heading_deg": 0, "length_mm": 75, "width_mm": 32},
            {"id": 20, "name": "Scrapjaw", "x_mm": 1300, "y_mm": 800, "heading_deg": 0, "length_mm": 75, "width_mm": 32}]
    rosters = [{"player": "Max", "points": 50, "vehicles": [{"marker": 10, "name": "Rustler", "type": "car"}]},
               {"player": "Joe", "points": 50, "vehicles": [{"marker": 20, "name": "Scrapjaw", "type": "hotrod"}]}]
    steps = [{"round": {}}, {"act": "move", "vehicle": 10, "path": [[1460, 460, 0]]}, {"end_turn": True},
             {"act": "move", "vehicle": 20, "path": [[1460, 800, 0]], "expect_error": True},
             {"act": "hold", "vehicle": 20}, {"end_turn": True}]
    out = play(steps, [9, 4], options={"mission": "outrun", "check_deployment": False}, cars=cars, gates=gates,
               terrain=[], rosters=rosters)
    assert "the path leaves the table" in out["steps"][3]["error"]
    assert out["state"]["finish_order"] == [10] and out["state"]["scores"] == {"Max": 3, "Joe": 0}
    assert out["state"]["setup_notes"] == []


def test_own_cars_are_not_targets_and_attacking_one_is_refused_for_that():
    """A newcomers' pass: the Dust Devil's own Rustler was offered as a target, and attacking
    it was refused for something else (a friend in assault range of it: the Rustler itself).
    A weapon "may only target enemy units" (wasteland-rally.txt, "Vehicle Weapons")."""
    rules, st = game({"check_deployment": False})
    assert [t["marker"] for t in rules.targets(st, 11)] == [21, 20]
    attack = next(a for a in rules.action_specs(st, 11) if a.act == "attack")
    at = next(f for f in attack.fields if f.name == "target")
    assert [c["value"] for c in at.choices] == [20, 21, "exploding barrels"]
    step = {"act": "attack", "vehicle": 11, "weapon": "twin_light_machine_guns", "target": 10, "expect_error": True}
    out = play([step], [], options={"check_deployment": False})
    assert out["steps"][0]["error"].endswith(
        "the Rustler is Max's own car: weapons \"may only target enemy units\" (wasteland-rally.txt, "
        "\"Vehicle Weapons\"; open-fire-0.3-core-rules.md, \"Friendly and Enemy\")"), out["steps"][0]["error"]


def test_asked_texts_name_each_thing_once(monkeypatch):
    """A newcomers' pass: texts put together from a description and its subject said things
    twice: "whether to repair the Scrapjaw now ... for Scrapjaw" (a choice's `who` after a
    question naming the car), "touching the exploding exploding fuel drums", "the exploding
    fuel drums's blast". Every dice and choice request the worked scenarios make is read as
    the page shows it (its `describe`), and every event."""
    import companion.dice as dice_mod
    texts = []
    for cls in (dice_mod.DiceRequest, dice_mod.ChoiceRequest):
        def spy(self, _old=cls.describe):
            texts.append(_old(self))
            return texts[-1]
        monkeypatch.setattr(cls, "describe", spy)
    names, events = set(), []
    for path in SCENARIOS:
        data = json.loads(path.read_text())
        names |= {v["name"] for r in data.get("rosters", []) for v in r.get("vehicles", []) if "name" in v}
        outcome = run_scenario(data, str(path))
        events += [e for step in outcome["steps"] for e in step.get("events", [])]
    assert len(texts) > 100 and any("for 4 points" in t for t in texts)
    bad = [t for t in set(texts) if any(t.count(n) > 1 for n in names)]
    bad += [t for t in set(texts + events) if re.search(r"\b(\w+) \1\b", t) or "s's " in t]
    assert not bad, bad

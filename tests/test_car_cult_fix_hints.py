"""Car Cult: what the live ruler tells a player to do when a move is not legal (`judge_move`'s
`fix`), and what a car has left after it is hurt (`condition`).

Each illegal position is worked out by hand from car-cult-2016-draft.txt, "Car Movement/Engines"
(straight moves, drift a quarter of the minimum rounded down, one 45-degree turn per AZ with no
ST); the fix is checked as stated AND by doing it to the pose, which must then be legal. The
table's tolerances count as the rules module reads them: sideways wobble up to
`path_tolerance_mm` (3 mm) is no drift, a turn up to `turn_tolerance_deg` (4 degrees) is none.
"""

from __future__ import annotations

import copy
import math
import random
import re

import pytest

from companion.dice import FixedChoices, FixedDice
from companion.geometry import Pose
from companion.rules.base import rule_system
from companion.scene import parse_scene
from companion.session import GameSession

from test_car_cult import ROSTERS, SCENE, TIE, page_shape, place, rosters, solo

MM = 25.4
TOL_MM = 3.0
TOL_DEG = 4.0


def game(roster_list, options=None, cars=None):
    scene = copy.deepcopy(SCENE)
    if cars is not None:
        scene["cars"] = cars
    rules = rule_system("car_cult", options)
    return rules, rules.new_game(copy.deepcopy(roster_list), parse_scene(scene))


# The Scrapjaw (V6: speeds 2, 5, 8, 11, 14, 16), given a Gutsy Gunner to generate 5 ST, with 5 ST
# on its engine: "the minimum ... is the
# speed above the fourth AZ and the maximum is above the fifth" -> 11 in to 14 in; drift 11 / 4 =
# 2.75, rounded down: 2 in (the draft's own example); its 6-AZ engine has one AZ free of ST: one
# turn of up to 45 degrees. It stands at (900, 300) facing -x, so "ahead" is -x, its left is -y.
FAST = rosters(c20={"engine_st": 5, "crew": ["dangerous_driver", "gutsy_gunner"]})
# The Rustler (Straight Five: 3, 6, 9, 12, 15) with its 2 ST: 3 in to 6 in, drift 3 / 4 -> 0 in:
# any sideways slide past the tolerance is too much. At (300, 300) facing +x: its left is +y.
SLOW = ROSTERS


def scrapjaw(ahead_in, left_in=0.0, heading_deg=180.0):
    return Pose(900 - ahead_in * MM, 300 - left_in * MM, heading_deg)


def apply_fix(start: Pose, to: Pose, fixes: list[str]) -> Pose:
    """Do what the fixes say to a car standing at `to`, as a player would with it in hand: a turn
    about its centre; "back"/"forward" along the line it travelled and "left"/"right" across it.
    That line is the draft's straight move: a car that turned on the way is read as heading half
    way between where it started and where it points now ("Car Movement/Engines")."""
    pose = to
    for fix in fixes:
        turned = (pose.heading_deg - start.heading_deg + 180) % 360 - 180
        mid = math.radians(start.heading_deg + turned / 2)
        fwd = (math.cos(mid), math.sin(mid))
        left = (-fwd[1], fwd[0])
        if m := re.fullmatch(r"turn it (\d+)° (left|right)", fix):
            deg = int(m[1]) * (1 if m[2] == "left" else -1)
            pose = Pose(pose.x_mm, pose.y_mm, pose.heading_deg + deg)
        elif m := re.fullmatch(r"bring it (\d+\.\d\d) in (back|forward)( \(.*\))?", fix):
            d = float(m[1]) * MM * (-1 if m[2] == "back" else 1)
            pose = Pose(pose.x_mm + d * fwd[0], pose.y_mm + d * fwd[1], pose.heading_deg)
        elif m := re.fullmatch(r"slide it (\d+\.\d\d) in (left|right), toward its line", fix):
            d = float(m[1]) * MM * (1 if m[2] == "left" else -1)
            pose = Pose(pose.x_mm + d * left[0], pose.y_mm + d * left[1], pose.heading_deg)
        else:
            raise AssertionError(f"a fix the test cannot do: {fix!r}")
    return pose


# --- illegal positions worked by hand ----------------------------------------------------

@pytest.mark.parametrize("to, fault, fixes", [
    # 15 in straight ahead, maximum 14 in: 1 in too far, back along its line.
    (scrapjaw(15), "maximum is 14 in", ["bring it 1.00 in back (its maximum is 14 in)"]),
    # 12 in ahead (within 11-14) and 2.5 in to its left: drift 2.5 > 2 in, slide 0.5 in right.
    (scrapjaw(12, 2.5), "drifts 2.50 in left", ["slide it 0.50 in right, toward its line"]),
    # Both: 16 in ahead, 3 in right (+y): 2 in back, then 1 in left.
    (scrapjaw(16, -3), "maximum is 14 in", ["bring it 2.00 in back (its maximum is 14 in)",
                                            "slide it 1.00 in left, toward its line"]),
    # Turned 60 degrees left (heading 240) with one free AZ: two turns, one allowed. One turn
    # covers 45 degrees plus the 4-degree tolerance: 60 - 49 = 11 degrees back right. It stands
    # 12 in along the half-way heading (210 degrees), so once turned it is still 12 cos 5.5 =
    # 11.94 in ahead (within 11-14) and 12 sin 5.5 = 1.15 in across (within 2): only the turn.
    (Pose(900 + 12 * MM * math.cos(math.radians(210)), 300 + 12 * MM * math.sin(math.radians(210)), 240),
     "makes 2 turns", ["turn it 11° right"]),
    # 1 in behind where it stood: backwards ("straight lines", ahead). Anything within 3 mm of
    # its start is no move: 25.4 - 3 = 22.4 mm = 0.882 in, rounded up to 0.89 in forward.
    (scrapjaw(-1), "backwards", ["bring it 0.89 in forward (cars do not reverse)"]),
])
def test_a_fix_is_stated_and_doing_it_makes_the_move_legal(to, fault, fixes):
    rules, state = game(FAST)
    start = state.vehicle(20).pose
    j = rules.judge_move(state, 20, to)
    assert not j["legal"] and fault in j["reasons"][0]
    assert j["fix"] == fixes
    fixed = rules.judge_move(state, 20, apply_fix(start, to, j["fix"]))
    assert fixed["legal"] and fixed["fix"] == [], fixed["reasons"]


def test_a_fix_short_of_what_it_says_is_not_enough():
    # The fixes go to the limit: 0.02 in less than "bring it 1.00 in back" is still too far,
    # 1 degree less than "turn it 11° right" still two turns.
    rules, state = game(FAST)
    assert not rules.judge_move(state, 20, scrapjaw(15 - 0.98))["legal"]
    assert rules.judge_move(state, 20, scrapjaw(14))["legal"]
    to = Pose(900 + 12 * MM * math.cos(math.radians(210)), 300 + 12 * MM * math.sin(math.radians(210)), 230)
    assert "makes 2 turns" in rules.judge_move(state, 20, to)["reasons"][0]


def test_with_no_drift_any_slide_past_the_tolerance_is_fixed():
    # The Rustler: 5 in ahead (within 3-6) and 1 in to its left (+y); it may drift 0 in, and up
    # to 3 mm of wobble is no drift: slide 25.4 - 3 = 22.4 mm = 0.882 -> 0.89 in right.
    rules, state = game(SLOW)
    start = state.vehicle(10).pose
    to = Pose(300 + 5 * MM, 300 + MM, 0)
    j = rules.judge_move(state, 10, to)
    assert not j["legal"] and "at most 0 in" in j["reasons"][0]
    assert j["fix"] == ["slide it 0.89 in right, toward its line"]
    assert rules.judge_move(state, 10, apply_fix(start, to, j["fix"]))["legal"]
    # 0.88 in would leave 3.05 mm: still a drift
    assert not rules.judge_move(state, 10, Pose(300 + 5 * MM, 300 + MM - 0.88 * MM, 0))["legal"]


def test_a_car_with_no_speed_is_told_to_put_it_back():
    # The Rustler with no ST on its engine moves 0 to 0 in ("Car Movement/Engines": the numbers
    # above the filled AZ; none filled): 2 in ahead is 2 in too far.
    rules, state = game(rosters(c10={"engine_st": 0}))
    start = state.vehicle(10).pose
    to = Pose(300 + 2 * MM, 300, 0)
    j = rules.judge_move(state, 10, to)
    assert j["fix"] == ["bring it 2.00 in back (it may not move)"]
    assert rules.judge_move(state, 10, apply_fix(start, to, j["fix"]))["legal"]


def test_the_option_turn_zones_changes_the_fix():
    # With turn_zones "car", every empty AZ on the car gives a turn: the Scrapjaw's 13 AZ less its
    # 5 ST leave 8 turns, so 60 degrees is legal; with the engine's one, it is fixed as above.
    to = Pose(900 + 12 * MM * math.cos(math.radians(210)), 300 + 12 * MM * math.sin(math.radians(210)), 240)
    rules, state = game(FAST, {"turn_zones": "car"})
    j = rules.judge_move(state, 20, to)
    assert j["legal"] and j["fix"] == []


# --- legal answers ---------------------------------------------------------------------

@pytest.mark.parametrize("to, brakes", [
    (scrapjaw(12), False),            # within 11-14 in
    (scrapjaw(14, 2), False),         # at the maximum, drifting the whole 2 in
    (scrapjaw(6), True),              # short of the minimum: a brake roll, not illegal
    (scrapjaw(0), True),              # standing still brakes for the whole minimum
])
def test_legal_answers_have_an_empty_fix(to, brakes):
    rules, state = game(FAST)
    j = rules.judge_move(state, 20, to)
    assert j["legal"] and j["fix"] == [] and j["brakes"] is brakes


def test_existing_keys_are_kept():
    rules, state = game(FAST)
    j = rules.judge_move(state, 20, scrapjaw(15))
    for key in ("legal", "reasons", "brakes", "distance_mm", "distance_in", "drift_left_mm", "drift_right_mm",
                "turns", "turn_runs_deg", "free_turns", "min_in", "max_in", "max_drift_in", "maximum",
                "minimum", "drift"):
        assert key in j, key


@pytest.mark.parametrize("seed", range(4))
def test_any_illegal_pose_is_made_legal_by_its_fix(seed):
    # Poses scattered around each car: whatever is wrong (too far, drift, turns, backwards, or
    # several), doing the fixes in order makes the move legal; a legal pose has no fix.
    rng = random.Random(seed)
    rules, state = game(rosters(c20={"engine_st": 5, "crew": ["dangerous_driver", "gutsy_gunner"]}, c11={"engine_st": 3}, c10={"engine_st": 4}))
    illegal = 0
    for _ in range(60):
        marker = rng.choice([10, 11, 20, 21])
        start = state.vehicle(marker).pose
        ahead = rng.uniform(-3, 20) * MM
        across = rng.uniform(-5, 5) * MM
        turned = rng.uniform(-150, 150)
        h = math.radians(start.heading_deg + turned / 2)
        to = Pose(start.x_mm + ahead * math.cos(h) - across * math.sin(h),
                  start.y_mm + ahead * math.sin(h) + across * math.cos(h), start.heading_deg + turned)
        j = rules.judge_move(state, marker, to)
        if j["legal"]:
            assert j["fix"] == []
            continue
        illegal += 1
        assert j["fix"], j["reasons"]
        fixed = rules.judge_move(state, marker, apply_fix(start, to, j["fix"]))
        assert fixed["legal"], (marker, to, j["reasons"], j["fix"], fixed["reasons"])
    assert illegal > 20


# --- condition ----------------------------------------------------------------------------

def test_condition_before_and_after_an_attack():
    # The Rustler's Machine Gun at the Scrapjaw (as test_car_cult's rustler_shoots): three hits.
    # The first DT must go on the armour ("Armour - DT must be applied here before any other AZ",
    # "Building a Car Cult"); Joe puts the other two on the engine. The Scrapjaw: V6 6 AZ, a
    # Dangerous Driver 2, a Cannon 2, armour 1 = 11 AZ, 8 free of DT after.
    rules = rule_system("car_cult")
    scene = copy.deepcopy(SCENE)
    scene["cars"] = place({20: [600, 300, 180]})
    state = rules.new_game(solo(10), parse_scene(scene))
    session = GameSession(rules, state, FixedDice(TIE + [9, 8, 1, 20, 10, 2]),
                          FixedChoices([0, "engine", "engine"]))
    assert rules.condition(state, 20) == "11 of 11 AZ free of DT"
    assert rules.condition(state, 10) == "13 of 13 AZ free of DT"
    assert rules.condition(state, 99) is None
    session.start_round({})
    session.act({"act": "activate", "vehicle": 10})
    session.act(page_shape({"act": "allocate", "vehicle": 10, "allocation": {"machine_gun": 2, "gutsy_gunner": 2}}))
    # ST placed on the Rustler's tracks are not damage: its condition is the same.
    assert rules.condition(state, 10) == "13 of 13 AZ free of DT"
    session.act({"act": "attack", "vehicle": 10, "weapon": "machine_gun", "target": 20})
    assert rules.condition(state, 20) == "8 of 11 AZ free of DT (2 DT on engine, 1 on armour)"
    assert rules.condition(state, 10) == "13 of 13 AZ free of DT"


def test_condition_of_a_stalled_and_an_exploded_car():
    # "Any model that has all it's Engine AZ track filled with DT may no longer move"; "Any car
    # which has every AZ filled with DT explodes" ("Attacking opponents", 6).
    rules, state = game(rosters(c20={"engine_st": 0, "dt": {"engine": 6, "armour": 1, "cannon": 2,
                                                              "dangerous_driver": 1}}))
    assert rules.condition(state, 20) == ("1 of 11 AZ free of DT (6 DT on engine, 1 on Dangerous Driver, 2 on "
                                          "Cannon, 1 on armour), engine full: may no longer move")
    events: list[str] = []
    rules._damage(state, state.vehicle(20), 1, "a test hit", events)
    assert state.vehicle(20).exploded
    assert rules.condition(state, 20) == "exploded, a casualty"


def test_condition_names_a_second_weapon_and_an_st_penalty():
    rules, state = game(rosters(c21={"weapons": ["rifle", "rifle"], "dt": {"rifle_2": 1}}))
    assert rules.condition(state, 21) == "14 of 15 AZ free of DT (1 DT on Rifle 2)"
    state.vehicle(21).st_penalty = 2         # blocking_damage "st_penalty": what the halt left
    assert rules.condition(state, 21).endswith(", 2 ST fewer at its next activation")

"""Wasteland Rally: what the live ruler tells a player to do with the car in hand when where it
stands is not legal (judge_move's "fix"), worked by hand from the books, and checked by doing
it: the pose the phrase describes is judged again and is legal. And a car's condition in the
book's damage terms, before and after it is hurt."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from companion.geometry import Pose
from companion.session import GameSession
from tests.test_wasteland_rally import KIND_TERRAIN, MM, SCENE, ScriptedDice, game, lost_control_game, place

NUMBER = r"(\d+(?:\.\d+)?)"


def apply_one(phrase: str, pose: Pose, start: Pose) -> Pose:
    """Do what one phrase says to the car at `pose` (`start`: where its move began, or where it
    lost control), as a player would with the car in hand."""
    if m := re.fullmatch(rf"bring it {NUMBER} in back (?:along its path|towards where it lost control)(, off .*)?",
                         phrase):
        d = start.xy - pose.xy
        xy = pose.xy + d / np.hypot(*d) * float(m[1]) * MM
        return Pose(float(xy[0]), float(xy[1]), pose.heading_deg)
    if m := re.fullmatch(rf"push it {NUMBER} in on along its path(, off .*)?", phrase):
        d = pose.xy - start.xy
        xy = pose.xy + d / np.hypot(*d) * float(m[1]) * MM
        return Pose(float(xy[0]), float(xy[1]), pose.heading_deg)
    if m := re.fullmatch(r"turn it (\d+)° (left|right)", phrase):
        # Headings grow anticlockwise: a turn to the car's left adds.
        return Pose(pose.x_mm, pose.y_mm, pose.heading_deg + (1 if m[2] == "left" else -1) * int(m[1]))
    if m := re.fullmatch(rf"move it {NUMBER} in (forward|back|left|right|forward and left|forward and right|"
                         rf"back and left|back and right)(, off .*)?", phrase):
        ways = {"forward": pose.forward, "back": -pose.forward, "left": pose.left, "right": -pose.left}
        unit = sum(ways[w] for w in m[2].split(" and "))
        xy = pose.xy + unit / np.hypot(*unit) * float(m[1]) * MM
        return Pose(float(xy[0]), float(xy[1]), pose.heading_deg)
    raise AssertionError(f"a fix the test cannot carry out: {phrase!r}")


def apply_all(fixes: list[str], pose: Pose, start: Pose) -> Pose:
    for phrase in fixes:
        pose = apply_one(phrase, pose, start)
    return pose


def alternatives(fixes: list[str]) -> list[list[str]]:
    """A one-phrase fix may offer choices ("bring it 1.50 in back along its path, or turn it
    12° right"): each is a whole fix on its own."""
    if len(fixes) == 1 and ", or " in fixes[0]:
        return [[f] for f in fixes[0].split(", or ")]
    return [fixes]


def check_fix(rules, st, marker: int, to: Pose, start: Pose, expected: list[str]) -> None:
    """The answer at `to` is illegal with exactly `expected` as its fix, and doing it (each
    alternative) makes it legal."""
    j = rules.judge_move(st, marker, to)
    assert j["legal"] is False and j["reasons"]
    assert j["fix"] == expected
    for fix in alternatives(j["fix"]):
        after = rules.judge_move(st, marker, apply_all(fix, to, start))
        assert after["legal"], (fix, after["reasons"])
        assert after["fix"] == []


# --- moves: wasteland-rally.txt, "Vehicle Types" (MOV); open-fire-0.3-expansion-vehicles.md,
# "Vehicle Movement" (45-degree manoeuvres, one free, 2 in each more) and "Vehicle Restrictions"
# (backwards at half rate); open-fire-0.3-core-rules.md, "Terrain" (Slow, Barrier) ---------------

def test_a_move_too_far_is_brought_back_by_the_excess():
    # The Dust Devil is a Buggy: MOV 9 in. Driven 12 in straight ahead from (320, 300, 0): no
    # manoeuvre, cost 12 in, 3 in too many; brought back 3.00 in along its path it has driven 9.
    rules, st = game({"check_deployment": False})
    start = Pose(320, 300, 0)
    check_fix(rules, st, 11, Pose(320 + 12 * MM, 300, 0), start, ["bring it 3.00 in back along its path"])


def test_a_move_too_far_by_its_turn_may_be_brought_back_or_turned():
    # The Buggy driven 8.5 in ahead and turned to 60 degrees at the end: (60 - 3 tolerance) / 45
    # rounds up to 2 manoeuvres, 1 free, so 2 in more: 10.50 in of 9. Either 1.50 in back (8.5 - 1.5
    # + 2 = 9), or turned back to 48 degrees or less ((48 - 3) / 45 = 1 manoeuvre, free): 12° right.
    rules, st = game({"check_deployment": False})
    to = Pose(320 + 8.5 * MM, 300, 60)
    assert rules.judge_move(st, 11, to)["reasons"] == ["it costs 10.50 in of 9.00 in (a plain move)"]
    check_fix(rules, st, 11, to, Pose(320, 300, 0), ["bring it 1.50 in back along its path, or turn it 12° right"])
    # 11° is not enough: still 2 manoeuvres
    assert rules.judge_move(st, 11, Pose(to.x_mm, to.y_mm, 49))["legal"] is False


def test_a_reverse_too_far_is_brought_back_towards_where_it_stood():
    # Backwards at half rate (backward_cost half_rate): the Buggy may reverse 4.5 in; 5 in straight
    # back is 0.50 in too far, and "back along its path" is forwards for the car.
    rules, st = game({"check_deployment": False})
    to = Pose(320 - 5 * MM, 300, 0)
    assert rules.judge_move(st, 11, to)["direction"] == "backward"
    check_fix(rules, st, 11, to, Pose(320, 300, 0), ["bring it 0.50 in back along its path"])


def test_slow_ground_counts_twice_in_the_fix():
    # The Rustler (a Car, MOV 10 in = 254 mm, not Rugged, 75 mm long) from (650, 300, 0) 8 in ahead
    # to x 853.2 across the sand (x 700..800). Some part of it is on the sand while its centre is
    # between 662.5 (nose at 700) and 837.5 (tail at 800): 175 mm counted twice (slow_measure
    # any_part; CORE, "Slow" and "Measuring"), cost 378.2 mm. Brought back b mm its end is inside
    # that stretch, so the cost is (203.2 - b) + (853.2 - b - 662.5) = 393.9 - 2b <= 254: b = 69.95
    # mm = 2.754 in, rounded up 2.76 (its end at x 783.25, nose still in the sand).
    cars = place(SCENE["cars"], {10: (650, 300, 0)})
    rules, st = game({"check_deployment": False}, cars=cars, terrain=KIND_TERRAIN)
    to = Pose(650 + 8 * MM, 300, 0)
    assert rules.judge_move(st, 10, to)["slow_extra_mm"] == pytest.approx(175.0)
    check_fix(rules, st, 10, to, Pose(650, 300, 0), ["bring it 2.76 in back along its path"])
    # slow_measure "centre": only the 100 mm its centre crosses; brought back 49.2 mm its end is at
    # x 804, still past the sand: 154 + 100 = 254. 49.2 mm = 1.937 in, rounded up 1.94.
    rules, st = game({"check_deployment": False, "slow_measure": "centre"}, cars=cars, terrain=KIND_TERRAIN)
    assert rules.judge_move(st, 10, to)["slow_extra_mm"] == pytest.approx(100.0)
    check_fix(rules, st, 10, to, Pose(650, 300, 0), ["bring it 1.94 in back along its path"])


def test_a_car_ending_on_a_barrier_is_moved_off_it_the_shorter_way():
    # The barrier of tyres spans x 900..910; the Rustler is 75 mm long and counts as on it when its
    # footprint, shrunk by contact_mm (1 mm), meets it. From (850, 300, 0):
    # - ended at x 900 (front 937.5, rear 862.5): back until the front is at 901, 36.5 mm = 1.437
    #   in, rounded 1.44; on past it, the rear to 909 would be 47.5 mm: back is shorter.
    # - ended at x 940 (rear 902.5): on until the rear is at 909, 6.5 mm = 0.256 in, rounded 0.26,
    #   shorter than back 76.5 mm; the cost then, 96.5 mm + 1 in for the barrier, is within 10 in.
    cars = place(SCENE["cars"], {10: (850, 300, 0)})
    rules, st = game({"check_deployment": False}, cars=cars, terrain=KIND_TERRAIN)
    start = Pose(850, 300, 0)
    check_fix(rules, st, 10, Pose(900, 300, 0), start, ["bring it 1.44 in back along its path, off the barrier of tyres"])
    check_fix(rules, st, 10, Pose(940, 300, 0), start, ["push it 0.26 in on along its path, off the barrier of tyres"])


def test_when_the_turns_alone_cost_too_much_the_fix_is_a_turn():
    # The Buggy with 3 stress (-3) and badly damaged (4 of 8 hit points is not more than half lost:
    # 3 of 8 left is, -2): 9 - 3 - 2 = 4 in. Driven 1 in ahead and turned about (180 degrees):
    # (180 - 3) / 45 -> 4 manoeuvres, 3 extra, 6 in: 7 of 4. Brought all the way back the turn on
    # the spot still costs 6: no distance is enough. Turned to 93 degrees or less off its first
    # heading ((93 - 3) / 45 = 2 manoeuvres, 1 extra): 1 + 2 = 3 in; 94 would be 3 extra. So 87°.
    rules, st = game({"check_deployment": False})
    v = st.vehicles[11]
    v.stress, v.hp = 3, 3
    to = Pose(320 + 1 * MM, 300, 180)
    j = rules.judge_move(st, 11, to)
    assert j["reasons"] == ["it costs 7.00 in of 4.00 in (a plain move)"]
    assert j["fix"] in (["turn it 87° left"], ["turn it 87° right"])
    check_fix(rules, st, 11, to, Pose(320, 300, 0), j["fix"])


def test_legal_moves_have_no_fix():
    rules, st = game({"check_deployment": False})
    for to in (Pose(320 + 8 * MM, 300, 0), Pose(320 + 5 * MM, 300, 40), Pose(320 - 4 * MM, 300, 0)):
        j = rules.judge_move(st, 11, to)
        assert j["legal"] and j["fix"] == [] and j["reasons"] == []


# --- repositions: wasteland-rally.txt, "Losing Control" (up to 45 degrees, up to 1 in, not over a
# car, terrain or off the table) ----------------------------------------------------------------

def lost_control(options=None):
    """The Rustler loses control at (700, 300, 0) to the Gravedigger's wrecker arm (a critical),
    with the Gravedigger (80 mm long) just behind it at (615, 300, 0)."""
    steps, dice, opts, cars = lost_control_game(options)
    rules, st = game(opts, cars=cars)
    sess = GameSession(rules, st, ScriptedDice())
    sess.dice.queue += dice
    sess.act(steps[0])
    assert st.pending[0]["from"][:3] == [700.0, 300.0, 0.0]
    return rules, st


WAS = Pose(700, 300, 0)


def test_a_reposition_turned_too_far_is_turned_back_by_the_excess():
    # 50 degrees left is 5 over the 45: turn it 5° right. 45.5 is 0.5 over: a whole degree.
    rules, st = lost_control()
    check_fix(rules, st, 10, Pose(700, 300, 50), WAS, ["turn it 5° right"])
    check_fix(rules, st, 10, Pose(700, 300, -45.5), WAS, ["turn it 1° left"])


def test_a_reposition_moved_too_far_is_brought_back():
    # Its centre 30 mm on: 4.6 mm over the inch = 0.181 in, rounded up 0.19.
    rules, st = lost_control()
    check_fix(rules, st, 10, Pose(730, 300, 0), WAS, ["bring it 0.19 in back towards where it lost control"])


def test_a_reposition_over_a_car_is_moved_off_it():
    # Put down at x 680 the Rustler's rear (642.5) is over the Gravedigger's front (655): the ground
    # newly covered, shrunk by the 1 mm contact, must clear it, so the rear at 654 or more: centre
    # 691.5, 11.5 mm forward = 0.453 in, rounded up 0.46.
    rules, st = lost_control()
    check_fix(rules, st, 10, Pose(680, 300, 0), WAS, ["move it 0.46 in forward, off the Gravedigger"])


def test_a_reposition_breaking_two_limits_gets_both_fixes():
    # Lifted 6.7 in away and turned 95 degrees: turn it 50° right (to 45), then its centre is
    # 170.18 mm away, 144.78 mm = 5.70 in over the inch.
    rules, st = lost_control()
    check_fix(rules, st, 10, Pose(700 + 6.7 * MM, 300, 95), WAS,
              ["turn it 50° right", "bring it 5.70 in back towards where it lost control"])


def test_measured_at_the_farthest_corner_a_turn_alone_can_be_too_far():
    # reposition_measure any_point: the Rustler's corners are 40.77 mm from its centre
    # (37.5 by 16), so turning it by t moves them 2 * 40.77 * sin(t / 2): at 45 degrees 31.2 mm,
    # over the inch; 25.4 mm allows 36.3 degrees at most, so from 45 it turns 9° back.
    rules, st = lost_control({"reposition_measure": "any_point"})
    check_fix(rules, st, 10, Pose(700, 300, 45), WAS, ["turn it 9° right"])
    check_fix(rules, st, 10, Pose(700, 300, 60), WAS, ["turn it 24° right"])


def test_a_legal_reposition_has_no_fix():
    rules, st = lost_control()
    j = rules.judge_move(st, 10, Pose(712, 300, 20))
    assert j["legal"] and j["fix"] == []


# --- condition: open-fire-0.3-core-rules.md, "Step 3 - Apply Damage"; expansion-vehicles,
# "Vehicle Restrictions" (badly damaged past half) ------------------------------------------------

def test_condition_before_and_after_damage():
    rules, st = lost_control()            # the Rustler passed its defence: no damage yet
    assert rules.condition(st, 10) == "10 of 10 hit points left"
    assert rules.condition(st, 21) == "12 of 12 hit points left"
    assert rules.condition(st, 99) is None
    # The wrecker arm again (damage 3, so three defence tests), all three failed, then the loss of
    # control's defence test failed too: 3 + 1 = 4 off the Rustler's 10.
    steps, dice, opts, cars = lost_control_game()
    rules, st = game(opts, cars=cars)
    sess = GameSession(rules, st, ScriptedDice())
    sess.dice.queue += [12, 2, 2, 2, 2, 3, 2, 10]
    out = sess.act(steps[0])
    assert st.vehicles[10].hp == 6, out["events"]
    assert rules.condition(st, 10) == "6 of 10 hit points left"
    # Past half lost (6 of 10 is not; 4 of 10 is): badly damaged, said so.
    before = rules.condition(st, 10)
    st.vehicles[10].hp = 4
    assert rules.condition(st, 10) == "4 of 10 hit points left, badly damaged" != before
    st.vehicles[10].hp, st.vehicles[10].destroyed = 0, True
    assert rules.condition(st, 10) == "destroyed"
    st.vehicles[20].eliminated = True
    assert rules.condition(st, 20) == "out of the race (eliminated)"
    st.vehicles[21].finished = 2
    assert rules.condition(st, 21) == "finished 2nd"

"""The fresh review of Wasteland Rally (tests/data/review/wasteland_rally/): what its reader
found unclear, now said plainly: a barrier's refusal names the barrier crossed apart from the
allowance, a boost turned first cites its rule, a friend in the line of sight is named, every
arc's evidence counts into the arc as positive, a drop says why it passed a car in range by,
and a judged pose too far for a plain move says when an advance or the boost would reach it."""

from __future__ import annotations

from companion.geometry import Pose
from tests.test_wasteland_rally import KIND_TERRAIN, MM, SCENE, game, place, play


def test_a_barrier_refusal_names_the_barrier_in_the_cost_and_the_allowance_reads_apart():
    # The Rustler (10 in) drives 250 mm across the barrier of tyres: 250 + 25.4 > 254.
    cars = place(SCENE["cars"], {10: (700, 300, 0)})
    out = play([{"act": "move", "vehicle": 10, "path": [[950, 300, 0]], "expect_error": True}], [],
               options={"check_deployment": False, "slow_measure": "centre"}, cars=cars,
               terrain=[t for t in KIND_TERRAIN if t["name"] != "sand"])
    err = out["steps"][0]["error"]
    assert "1.00 in more for crossing the barrier of tyres (1 in each time)" in err
    assert "may move 10.00 in (Car 10; " in err and "barriers crossed" not in err


def test_the_allowance_lists_its_parts_apart():
    rules, st = game({"check_deployment": False})
    st.vehicles[10].stress = 1
    m = rules.check_path(st, st.vehicles[10], [Pose(500, 300, 0)], advance=True)
    assert m["allowance"] == "Car 10, stress -1, advance +6" and m["barriers_crossed"] == []


def test_a_boost_after_a_turn_is_refused_citing_the_rule():
    out = play([{"act": "move", "vehicle": 10, "boost": True, "path": [[450, 300, 30], [600, 386.6, 30]],
                 "expect_error": True}], [], options={"check_deployment": False})
    err = out["steps"][0]["error"]
    assert "this path turns 30 degrees before it" in err and '(wasteland-rally.txt, "Vehicle Upgrades")' in err


def test_line_of_sight_refusal_names_the_friend_in_the_way():
    # The Dust Devil (Max's) stands between the Rustler and Joe's Gravedigger.
    cars = place(SCENE["cars"], {10: (500, 300, 0), 11: (640, 300, 0), 21: (800, 300, 0), 20: (300, 200, 0)})
    out = play([{"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 21,
                 "expect_error": True}], [], options={"check_deployment": False}, cars=cars)
    assert "a car of its own side is in the way, the Dust Devil (" in out["steps"][0]["error"]


def test_every_arc_counts_into_it_as_positive():
    rules, st = game({"check_deployment": False})
    me = st.vehicles[10].footprint(Pose(500, 300, 0))
    beside = st.vehicles[20].footprint(Pose(500, 300 + 16 + 16 + 30, 0))     # 30 mm out on its left
    behind = st.vehicles[21].footprint(Pose(380, 300, 0))                     # foremost point 80 mm behind
    arcs = rules.arc_of(me, beside)
    # squarely beside, 30 mm out: its deepest part is half the Rustler's length in from the lines
    # through its front and rear edges (37.5 mm), not 0 at a corner
    assert arcs["left"].value_mm == 37.5 and arcs["left"].outcome == "in"
    assert arcs["right"].value_mm < 0 and arcs["right"].outcome == "out"
    assert "minus if outside it" in arcs["left"].what
    arcs = rules.arc_of(me, behind)
    assert arcs["rear"].value_mm == 80.0 and arcs["rear"].outcome == "in"
    assert arcs["front"].value_mm == -80.0 and arcs["front"].outcome == "out"
    assert "37.5 mm into the ground beside" in rules.judged_arc(me, beside, rules.arc_of(me, beside), ("left",))["why"]


def test_a_drop_says_why_a_car_in_range_was_passed_by():
    # The Rustler drops oil; the Gravedigger's nose is 10 mm past its centre line (front arc), the
    # Scrapjaw wholly behind.
    cars = place(SCENE["cars"], {10: (500, 300, 0), 21: (470, 255, 0), 20: (420, 300, 0), 11: (200, 600, 0)})
    out = play([{"act": "drop", "vehicle": 10, "weapon": "oil_dropper"}], [2, 2],
               options={"check_deployment": False}, cars=cars)
    step = out["steps"][0]
    assert [t["target"] for t in step["targets"]] == [20]
    assert step["left_out"][0]["vehicle"] == 21
    assert "part of it is 10.0 mm ahead of the line through the Rustler's centre" in step["left_out"][0]["why"]
    assert any(e.startswith("the Oil Dropper passes the Gravedigger by, though it is in range: part of it") for e in step["events"])
    out = play([{"act": "drop", "vehicle": 10, "weapon": "oil_dropper"}], [2, 2],
               options={"check_deployment": False, "dropper_zone": "directly_behind"}, cars=cars)
    assert "clear of the strip directly behind the Rustler" in out["steps"][0]["left_out"][0]["why"]


def test_judge_move_says_when_an_advance_or_the_boost_would_reach_the_pose():
    rules, st = game({"check_deployment": False})
    reasons = lambda inches_ahead: rules.judge_move(st, 10, Pose(450 + inches_ahead * MM, 300, 0))["reasons"]
    assert rules.judge_move(st, 10, Pose(450 + 9 * MM, 300, 0))["reasons"] == []
    r = reasons(12)                                       # a Car's 10 in; an advance's 16
    assert r[0] == "it costs 12.00 in of 10.00 in (a plain move)"
    assert r[1].startswith("declared as an advance move, the move reaches it: it costs 12.00 in of 16.00 in")
    r = reasons(18)                                       # the boost's 9 in free, then 9 of 10
    assert r[1].startswith("declared with its boost, the move reaches it: it costs 9.00 in of 10.00 in after the boost")
    assert reasons(22)[1].startswith("declared as an advance move with its boost")
    assert len(reasons(30)) == 1                          # nothing reaches it
    st.vehicles[10].boost_used = True
    assert len(reasons(18)) == 1

"""Stop The Truck!: the live ruler's fix ("not legal here: <reason> -> <fix>") and each piece's
condition after damage.

The board is the one of tests/test_stop_the_truck.py: squares of 100 mm, its corner at (50, 50),
the truck at (650, 500) facing +x, so the board's forward is +x and its left +y; column c and row
r (from 1) span x in [50 + 100 (c - 1), 50 + 100 c] and y in [50 + 100 (r - 1), 50 + 100 r].
The rulebook is /work/shared/rules/stop-the-truck.txt ("Concept and Board Layout", "Movement":
a car moves by squares relative to the truck; "Move sequence": the steps; "Gang Vehicle
Templates" and "The Truck Template": the tracks damage takes points off).

A fix is checked by doing what it says: the pose moved by the inches it names, judged again.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from companion.dice import DiceError
from companion.geometry import MM_PER_IN, Pose
from companion.rules.base import RulesError
from tests.test_stop_the_truck import Game, at

SHIFT = re.compile(r"(\d+\.\d\d) in (forward|back|left|right)")


def apply_fix(g: Game, pose: Pose, fix: str) -> Pose:
    """The pose moved as the fix's words say: inches forward/back along the board (the truck's
    heading) and left/right across it; the heading kept."""
    shifts = SHIFT.findall(fix)
    assert shifts, f"the fix names no shift in inches: {fix!r}"
    o = g.st.board_origin
    xy = pose.xy.copy()
    for inches, way in shifts:
        mm = float(inches) * MM_PER_IN
        axis = o.forward if way in ("forward", "back") else o.left
        xy = xy + (mm if way in ("forward", "left") else -mm) * axis
    return Pose(float(xy[0]), float(xy[1]), pose.heading_deg, pose.sigma_mm, pose.sigma_deg)


def bike_moving(options=None) -> Game:
    """The bike in square 3,3 picks 2:4 1L (4 forward, 1 left, blue) and the truck 2:3 (speed 3):
    "Movement": 4 - 3 = 1 square up the board and 1 left, so it is owed square 4,4, i.e.
    x in [350, 450], y in [350, 450]."""
    g = Game({10: at(3, 3), 11: at(3, 7)}, options)
    g.round()
    g.picks({10: "2:4 1L", 11: "2:3"})
    return g


# --- the fix of each illegal answer ------------------------------------------------------------

def test_a_legal_move_has_no_fix():
    g = bike_moving()
    ok = g.rules.judge_move(g.st, 10, Pose(*at(4, 4, dx=20)))
    assert ok["legal"] and ok["fix"] == [] and ok["reasons"] == []


def test_too_far_up_the_board_is_brought_back():
    """The bike put at x 470: 20 mm past the square's front edge (x 450). With no doubt the point
    must be inside by more than 0 (FIX_CLEAR_MM, 0.1 mm): back by 20.1 mm = 0.7913 in, rounded up
    to 0.80 in. Sideways it is in the middle already: nothing across."""
    g = bike_moving()
    to = Pose(470.0, 400.0, 0.0)
    bad = g.rules.judge_move(g.st, 10, to)
    assert not bad["legal"] and bad["margin_mm"] == -20.0
    assert bad["fix"] == ["move it 0.80 in back into square 4,4"]
    fixed = g.rules.judge_move(g.st, 10, apply_fix(g, to, bad["fix"][0]))
    assert fixed["legal"] and fixed["verdict"]["outcome"] == "in" and fixed["fix"] == []
    g.act(act="move", vehicle=10, to=list(map(float, (*apply_fix(g, to, bad["fix"][0]).xy, 0.0))))
    assert g.v(10).square == (3, 3)


def test_short_and_drifting_is_moved_on_both_axes():
    """Put at (330, 470) with sigma_mm 1.0 (a 95 % radius: 1.0 * 2 / 2.4477 = 0.817 mm along one
    axis): 20 mm short of the back edge (x 350) and 20 mm past the left edge (y 450). "In" needs a
    margin beyond 2 axis sigmas (1.634 mm), + 0.1 mm: forward 21.734 mm = 0.8557 in -> 0.86 in, and
    right as much -> 0.86 in. Forward alone would leave the drift: both are named."""
    g = bike_moving()
    to = Pose(330.0, 470.0, 0.0, 1.0, 0.5)
    bad = g.rules.judge_move(g.st, 10, to)
    assert not bad["legal"]
    assert bad["fix"] == ["move it 0.86 in forward and 0.86 in right into square 4,4"]
    fixed = g.rules.judge_move(g.st, 10, apply_fix(g, to, bad["fix"][0]))
    assert fixed["legal"] and fixed["verdict"]["outcome"] == "in"


def test_on_the_line_with_line_call_refuse():
    """1 mm over the left edge (y 451) with sigma_mm 1.0 (0.817 mm along an axis) is too close to
    call (within 2 axis sigmas, 1.634 mm). By default (line_call "box_square") it counts in the box's
    square: legal, no fix. With "refuse" it is illegal and the fix takes its point 1.734 mm inside:
    right 2.734 mm = 0.1077 in -> 0.11 in."""
    to = Pose(400.0, 451.0, 0.0, 1.0, 0.5)
    g = bike_moving()
    lenient = g.rules.judge_move(g.st, 10, to)
    assert lenient["legal"] and lenient["fix"] == [] and "too close to call" in lenient["reasons"][0]
    g = bike_moving({"line_call": "refuse"})
    bad = g.rules.judge_move(g.st, 10, to)
    assert not bad["legal"] and bad["fix"] == ["move it 0.11 in right into square 4,4"]
    moved = apply_fix(g, to, bad["fix"][0])
    assert g.rules.judge_move(g.st, 10, moved)["verdict"]["outcome"] == "in"
    g.act(act="move", vehicle=10, to=[float(moved.x_mm), float(moved.y_mm), 0.0])
    assert g.v(10).square == (3, 3)


def test_front_bumper_point_is_moved_not_turned():
    """Option square_point "front_bumper": the bike (60 mm long) turned to face +y with its centre
    at (400, 440) has its bumper at (400, 470), 20 mm past the square's left edge. Moving the car
    moves the bumper as much: right 20.1 mm -> 0.80 in; the heading is left as it is."""
    g = bike_moving({"square_point": "front_bumper"})
    to = Pose(400.0, 440.0, 90.0)
    bad = g.rules.judge_move(g.st, 10, to)
    assert not bad["legal"] and bad["fix"] == ["move it 0.80 in right into square 4,4"]
    assert g.rules.judge_move(g.st, 10, apply_fix(g, to, bad["fix"][0]))["legal"]


def test_a_box_off_the_board_is_legal_with_no_fix():
    """The bike in square 1,3 picks 2:2 against the truck's 2:4 (speed 4): 2 - 4 = 2 squares back,
    off the back of the board: it is out, whatever its pose."""
    g = Game({10: at(1, 3)})
    g.round()
    g.picks({10: "2:2"}, truck="2:4")
    j = g.rules.judge_move(g.st, 10, Pose(*at(1, 3)))
    assert j["legal"] and j["fix"] == []


def ram(extra=None) -> Game:
    """The wrecker (3,3, box 2:4) drives into the bike's square 4,3 (box 2:3) from behind: the bike
    came first, the wrecker is the collider ("Move sequence" 5)."""
    g = Game({10: at(4, 3), 11: at(3, 3)}, extra=extra)
    g.round()
    g.picks({10: "2:3", 11: "2:4"}, truck="2:3")
    g.act(act="move", vehicle=10, to=at(4, 3, dy=25))
    g.act(act="move", vehicle=11, to=at(4, 3, dy=-25))
    return g


def test_the_bike_avoiding_is_sent_to_the_nearest_free_square():
    """"The Bike - Can adjust one square in any direction to avoid a collision" ("Notes"). Held at
    (400, 330), in the contested square 4,3 itself, 20 mm from row 4's edge (y 350) and 70 mm or
    more from the others: into square 4,4, left 20.1 mm -> 0.80 in; the avoid then goes through."""
    g = ram()
    to = Pose(400.0, 330.0, 0.0)
    bad = g.rules.judge_move(g.st, 10, to)
    assert not bad["legal"] and bad["fix"] == ["move it 0.80 in left into square 4,4"]
    moved = apply_fix(g, to, bad["fix"][0])
    assert g.rules.judge_move(g.st, 10, moved)["legal"]
    g.act(act="avoid", vehicle=10, to=[float(moved.x_mm), float(moved.y_mm), 0.0])
    assert g.v(10).square == (3, 3)


def test_a_bumped_car_is_asked_for_in_its_square_and_any_pose_in_it_fits():
    """A roll of 6 on the wrecker's chart: 2 structure to the bike, which is bumped sideways away
    from the truck's row 5, to square 4,2 (x 350-450, y 150-250). The resolution asks for it there
    (its middle, (400, 200)), and takes it with its centre anywhere in the square, a corner too
    (the tolerance is the square's half diagonal, 70.8 mm), turned up to 45 degrees (facing the
    truck's way); left standing at (400, 300), 50 mm past the square's edge and 100 mm from its
    middle, it is refused with the distance and the reason, and nothing changes."""
    g = ram()
    g.session.placements = None                              # a table: the camera must see it there
    g.dice.faces.append(6)
    g.session.choices.choices.append("collide")
    assert g.session.act({"act": "collide", "vehicle": 11}) is None
    asked = g.session.pending
    assert (asked.marker, [asked.x_mm, asked.y_mm, asked.heading_deg]) == (10, [400.0, 200.0, 0.0])
    assert asked.why == "bumped sideways by the collision with the Plated Wrecker, into square 4,2"
    assert (asked.tolerance_mm, asked.tolerance_deg) == (70.8, 45.0)
    assert all(asked.fits(x, y, 0.0) for x in (351.0, 449.0) for y in (151.0, 249.0))      # every corner
    assert not asked.fits(400.0, 200.0, 50.0)
    with pytest.raises(DiceError, match=r"stands 100 mm and 0° from where the rules put it \(bumped sideways"):
        g.session.place(10, [400.0, 300.0, 0.0], "camera")
    assert g.session.pending is asked and g.v(10).square == (3, 1)
    out = g.session.place(10, [440.0, 160.0, -30.0, 0.4, 0.2], "camera")
    assert out["placed"][0]["pose"] == [440.0, 160.0, -30.0] and g.st.phase == "shooting"
    assert g.v(10).pose.xy.tolist() == [440.0, 160.0]


def test_the_truck_slides_into_its_new_row():
    """The truck's box 2:3 1R: "Move the truck sideways" (Move sequence 6) one square right, from
    row 5 to row 4 (y 350-450). Left at y 500 it is 50 mm out: right 50.1 mm -> 1.98 in."""
    g = Game({}, extra={1: {"gear": 2}})
    g.round()
    g.picks({}, truck="2:3 1R")
    to = Pose(650.0, 500.0, 0.0)
    bad = g.rules.judge_move(g.st, 1, to)
    assert not bad["legal"] and bad["row"] == 4
    assert bad["fix"] == ["slide it 1.98 in right into row 4"]
    moved = apply_fix(g, to, bad["fix"][0])
    ok = g.rules.judge_move(g.st, 1, moved)
    assert ok["legal"] and ok["fix"] == []
    g.act(act="truck_sideways", vehicle=1)
    assert g.v(1).square == (7, 3) and g.v(1).pose.xy.tolist() == [650.0, 400.0]


def test_every_illegal_answer_has_a_fix_and_every_legal_one_none():
    """Across the square the bike is owed and well around it, in 7 mm steps: an illegal answer
    always says what to do, and doing it is always legal; a legal one has an empty fix."""
    g = bike_moving({"line_call": "refuse"})
    for x in np.arange(250.0, 560.0, 7.0):
        for y in np.arange(250.0, 560.0, 7.0):
            to = Pose(float(x), float(y), 0.0, 0.8, 0.3)
            j = g.rules.judge_move(g.st, 10, to)
            if j["legal"]:
                assert j["fix"] == [], (x, y)
                continue
            assert len(j["fix"]) == len(j["reasons"]) == 1, (x, y)
            assert g.rules.judge_move(g.st, 10, apply_fix(g, to, j["fix"][0]))["legal"], (x, y, j["fix"])


# --- condition ------------------------------------------------------------------------------

def test_condition_before_and_after_a_ram():
    """The bike's sheet: structure 3, driver 8, shooting 6; the wrecker's: structure 12, driver 8,
    no shooting. The wrecker's chart on a 6 does 2 structure to the victim, none to itself."""
    g = ram()
    assert g.rules.condition(g.st, 10) == "structure 3 of 3 left, driver 8, shooting 6"
    assert g.rules.condition(g.st, 11) == "structure 12 of 12 left, driver 8"
    assert g.rules.condition(g.st, 99) is None
    g.act([6], choose=["collide"], act="collide", vehicle=11)
    assert g.rules.condition(g.st, 10) == "structure 1 of 3 left, driver 8, shooting 6"
    assert g.rules.condition(g.st, 11) == "structure 12 of 12 left, driver 8"     # unchanged: not hurt


def test_condition_when_wrecked():
    """The same 2 points on a bike with 1 structure left: 0, wrecked ("Structural points - ... If
    this ever drops to 0 then the vehicle is wrecked and out of the game")."""
    g = ram(extra={10: {"structure": 1}})
    assert g.rules.condition(g.st, 10) == "structure 1 of 3 left, driver 8, shooting 6"
    g.act([6], choose=["collide"], act="collide", vehicle=11)
    # Its tracks only: the outcome's event says it is out of the game, once.
    assert g.rules.condition(g.st, 10) == "structure 0 of 3 left, driver 8, shooting 6"
    assert g.v(10).out == "wrecked"


def test_condition_of_the_truck_rammed_and_a_tyre_burst():
    """The truck's sheet: structure 30, Max 8, bombers 10 and 10, the crossbowman 10. The Blue
    Slasher into square 3 (the tanker) on a 9: 3 structure to the truck, and its driving roll of 3
    against 7 bursts a tyre on that side ("Notes", The Blue Slasher)."""
    g = Game({13: at(5, 4)})
    before = "structure 30 of 30 left, Max 8, bomber 1 10, bomber 2 10, crossbowman 10"
    assert g.rules.condition(g.st, 1) == before
    g.round()
    g.picks({13: "2:4 1L"}, truck="2:3")
    g.act(act="move", vehicle=13, to=at(6, 5, dy=40))
    g.drive_rolls()
    assert g.rules.condition(g.st, 1) == before           # moving hurts nobody
    g.act([9, 3], act="collide", vehicle=13)
    assert g.rules.condition(g.st, 1) == ("structure 27 of 30 left, Max 8, bomber 1 10, bomber 2 10, "
                                          "crossbowman 10, tyres burst 0 left, 1 right")


def test_condition_of_the_gyro_counts_its_own_tracks():
    """"Car No 11 Auto-gyro": flying skill 5, dropping skill 9, structural points 5."""
    g = Game({9: at(2, 2)})
    assert g.rules.condition(g.st, 9) == "structure 5 of 5 left, flying 5, dropping 9"
    g.rules._harm(g.st, g.v(9), 1, 0, 2, [], "test")
    assert g.rules.condition(g.st, 9) == "structure 4 of 5 left, flying 5, dropping 7"


@pytest.mark.parametrize("structure, driver, shooting", [(1, 0, 0), (0, 1, 0), (0, 0, 1)])
def test_condition_changes_with_every_track(structure, driver, shooting):
    g = Game({12: at(2, 2)})
    before = g.rules.condition(g.st, 12)
    g.rules._harm(g.st, g.v(12), structure, driver, shooting, [], "test")
    assert g.rules.condition(g.st, 12) != before


def test_a_bike_boxed_in_is_told_to_stay():
    """The bike in the board's corner square 1,1, its three neighbours taken (the harpoon van in
    2,1 and the slasher in 1,2 keep their squares with 2:3 at the truck's speed 3; the jeep comes
    from 3,3 to 2,2 with 2:2 1R), the wrecker rams it from 2,2 with 2:2 1R. It may "adjust one
    square in any direction to avoid a collision" ("Notes") but no square is free: the fix is to
    leave it where it is, and the avoid is refused."""
    g = Game({10: at(1, 1), 11: at(2, 2), 12: at(2, 1), 13: at(1, 2), 15: at(3, 3)})
    g.round()
    g.picks({10: "2:3", 11: "2:2 1R", 12: "2:3", 13: "2:3", 15: "2:2 1R"})
    ends = {10: at(1, 1, dy=-20), 12: at(2, 1), 13: at(1, 2), 15: at(2, 2), 11: at(1, 1, dy=20)}
    while g.st.phase == "move":
        g.act(act="move", vehicle=g.st.active.marker, to=ends[g.st.active.marker])
    assert g.st.phase == "collisions"
    j = g.rules.judge_move(g.st, 10, Pose(*at(1, 1)))
    assert not j["legal"] and j["fix"] == ["leave it in square 1,1: there is no free square to avoid into, "
                                           "so the collision is rolled"]
    with pytest.raises(RulesError, match="taken"):
        g.act(act="avoid", vehicle=10, to=at(2, 2))

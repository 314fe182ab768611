"""Issue 23, point 5: hands are not noise-free. "Vehicles may only move forward or backward during
their activation but not both" (VEHICLES, "Vehicle Restrictions"): a car slid past its mark and
back a centimetre or two within one move was refused as driving "forwards and backwards". A move
is judged by where the car ends and the way it went: travel back up to `reverse_correction_mm`
(25 mm by default) is a correction, and it and the overshoot it undoes do not count."""

from __future__ import annotations

import pytest

from tests.test_wasteland_rally import SCENE, play

MM = 25.4


def move(path, options=None, vehicle=10):
    return play([{"act": "move", "vehicle": vehicle, "path": path}], [], options=options, cars=SCENE["cars"])


def refused(path, options=None, vehicle=10) -> str:
    out = play([{"act": "move", "vehicle": vehicle, "path": path, "expect_error": True}], [], options=options,
               cars=SCENE["cars"])
    return out["steps"][0]["error"]


def test_a_car_slid_past_its_mark_and_back_has_moved_forwards_to_where_it_ends():
    # The Rustler (450, 300) pushed 150 mm on, 15 mm too far, and back.
    out = move([[615, 300, 0], [600, 300, 0]])["steps"][0]
    assert out["result"] == "moved"
    m = out["move"]
    assert m["direction"] == "forward" and m["correction_mm"] == pytest.approx(15.0)
    assert m["distance_mm"] == pytest.approx(150.0) and m["cost_mm"] == pytest.approx(150.0)


def test_the_camera_s_steps_of_a_slip_and_correction_are_read_the_same():
    steps = [[450 + 8 * k, 300, 0] for k in range(1, 22)]             # to 618 in 8 mm steps
    steps += [[618 - 6 * k, 300, 0] for k in range(1, 4)]             # back 18 mm in 6 mm steps
    m = move(steps)["steps"][0]["move"]
    assert m["direction"] == "forward" and m["distance_mm"] == pytest.approx(150.0)


def test_a_slip_at_the_end_of_a_full_move_stays_within_the_allowance():
    # 10 in is the Rustler's whole move: pushed 20 mm past and brought back, it has moved 10 in.
    out = move([[450 + 10 * MM + 20, 300, 0], [450 + 10 * MM, 300, 0]])["steps"][0]
    assert out["result"] == "moved" and out["move"]["cost_mm"] == pytest.approx(10 * MM)


def test_a_reverse_with_a_slip_forwards_is_a_reverse():
    # The Dust Devil (320, 300) backs 2 in, slips 10 mm back too far and is pushed on again.
    out = move([[320 - 2 * MM - 10, 300, 0], [320 - 2 * MM, 300, 0]], vehicle=11)["steps"][0]
    assert out["move"]["direction"] == "backward" and out["move"]["distance_mm"] == pytest.approx(2 * MM)


def test_more_than_the_tolerance_back_is_driving_both_ways():
    why = refused([[615, 300, 0], [585, 300, 0]])
    assert "drives both forwards and backwards (6.50 in forwards, 1.18 in backwards)" in why
    assert "a hand's correction counts only up to 0.98 in back" in why and "Vehicle Restrictions" in why


def test_option_reverse_correction_mm():
    assert "drives both forwards and backwards" in refused([[615, 300, 0], [600, 300, 0]],
                                                           {"reverse_correction_mm": 0.0})
    assert move([[615, 300, 0], [585, 300, 0]], {"reverse_correction_mm": 40.0})["steps"][0]["result"] == "moved"

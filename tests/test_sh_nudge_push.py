"""Shattered Highways' Nudge as the book has it: "On a successful Nudge the attacking player
moves the defending player's vehicle based on their degree of success ... within one section
... on 3+, three sections" ("Nudge"). The push is the attacker's choice, made after the rolls:
the table asks for the pushed car to be put where the player chooses, draws where it may go,
and the rules judge where it was put (asking again, with the reason, when it is too far). A
car pushed into another is "nudged into" it: that one rolls to keep control."""

import json
from pathlib import Path

import pytest

from companion.camera_scenario import CameraRun
from companion.game import GameError

HERE = Path(__file__).resolve().parent.parent / "examples" / "scenarios"


def nudged(dice, name="11-nudge.json", poses=None):
    """The Interceptor nudges the War Rig (11-nudge) through the camera, the dice typed in one
    by one, up to the first thing that is not dice."""
    data = json.loads((HERE / name).read_text())
    if poses:
        for car in data["cars"]:
            if car["id"] in poses:
                car["x_mm"], car["y_mm"], car["heading_deg"] = poses[car["id"]]
    run = CameraRun(data, name)
    run.film.read()
    run.game.act({"act": "nudge", "vehicle": 10, "target": 20})
    faces = list(dice)
    while (p := run.game.game_json()["pending"]) is not None and p["waiting"] == "dice":
        run.game.answer_typed([faces.pop(0)])
    return run


def test_the_push_is_asked_after_the_rolls_as_the_attackers_choice_with_where_it_may_go():
    run = nudged([5, 8, 4])                       # in position; 8 against 4: three sections
    pending = run.game.game_json()["pending"]
    assert pending["waiting"] == "placement"
    p = pending["placement"]
    assert p["marker"] == 20 and p["chosen"] is True
    assert p["asked"].startswith("put the War Rig where you choose: nudged by the Interceptor: push it up to "
                                 "3 sections")
    assert p["area"] and all(len(poly[0]) >= 4 for poly in p["area"])   # the bumper's region, drawn
    run.film.read()
    assert run.game.game_json()["pending"]["waiting"] == "placement"    # not taken by the camera alone


def test_put_within_the_sections_won_the_record_keeps_where_the_player_put_it():
    run = nudged([5, 8, 4])
    run.film.slide(20, [750, 440, 0], "pushed 100 mm on")
    run.game.place(20)
    g = run.game.game_json()
    assert g["pending"] is None
    result = g["log"][0]["outcome"]
    assert "the Interceptor's player pushes the War Rig 3.9 in forwards" in result["events"]
    assert g["game"]["state"]["vehicles"]["20"]["pose"][:2] == pytest.approx([750, 440], abs=3)
    assert [pl["how"] for pl in g["log"][0]["placements"]] == ["chosen"]


def test_put_beyond_what_the_roll_won_is_asked_again_with_the_reason():
    run = nudged([5, 5, 4])                       # 5 against 4, less 1 in the dust: two sections (6 in)
    run.film.slide(20, [860, 440, 0], "pushed 210 mm on: too far")
    run.game.place(20)
    p = run.game.game_json()["pending"]
    assert p["waiting"] == "placement" and p["placement"]["marker"] == 20
    assert "not where it was put: the front bumper ends" in p["placement"]["why"]
    assert "outside the move template" in p["placement"]["why"]
    run.film.slide(20, [700, 440, 0], "back within two sections")
    run.game.place(20)
    g = run.game.game_json()
    assert g["pending"] is None
    assert g["game"]["state"]["vehicles"]["20"]["pose"][:2] == pytest.approx([700, 440], abs=3)


def test_left_where_it_stands_it_stays_and_that_is_said():
    run = nudged([5, 8, 4])
    run.game.place(20)
    g = run.game.game_json()
    assert g["pending"] is None
    assert "the Interceptor's player leaves the War Rig where it stood" in g["log"][0]["outcome"]["events"]


def test_another_piece_or_a_move_is_refused_while_the_push_waits():
    run = nudged([5, 8, 4])
    with pytest.raises(GameError, match="waiting for the War Rig"):
        run.game.place(10)
    with pytest.raises(GameError, match="waiting for put the War Rig where you choose"):
        run.game.act({"act": "move", "vehicle": 11})


def test_pushed_into_another_car_that_car_rolls_to_keep_control_and_is_knocked_by_the_pushers_player():
    """The Rust Bucket stands ahead of the War Rig; pushed up against it, the Rust Bucket's
    driver rolls a Move (2: fails), takes 1 and is moved a section by Joe, the War Rig's player
    (the vehicle that struck it), not by Max, whose Interceptor nudged ("An attacker can nudge a
    vehicle into another vehicle ... moved in a one template section by the player of the vehicle
    that struck them")."""
    run = nudged([5, 8, 4], poses={11: [900, 440, 0]})
    # The rig's front (650 + 75 = 725) pushed to touch the Rust Bucket's rear (900 - 36 = 864).
    run.film.slide(20, [789, 440, 0], "pushed into the Rust Bucket")
    run.game.place(20)
    p = run.game.game_json()["pending"]
    assert p["waiting"] == "dice" and "keep control" in p["purpose"].lower()
    run.game.answer_typed([2])
    while (p := run.game.game_json()["pending"]) is not None and p["waiting"] == "dice":
        run.game.answer_typed([1])                # its damage, if rolled
    assert p["waiting"] == "placement" and p["placement"]["marker"] == 11 and p["placement"]["chosen"]
    assert "knocked by the War Rig: Joe, the War Rig's player, moves it" in p["placement"]["why"]
    run.film.slide(11, [960, 440, 0], "knocked on")
    run.game.place(11)
    g = run.game.game_json()
    assert g["pending"] is None
    events = g["log"][0]["outcome"]["events"]
    assert "the War Rig is pushed into the Rust Bucket" in events
    assert any(e.startswith("the Rust Bucket is knocked 2.4 in forwards") for e in events), events


def test_set_down_before_the_rolls_beyond_what_they_won_the_attacker_chooses_again():
    data = json.loads((HERE / "11-nudge.json").read_text())
    run = CameraRun(data, "11-nudge.json")
    run.film.slide(20, [860, 440, 0], "set down 210 mm on before Resolve")
    run.game.act({"act": "nudge", "vehicle": 10, "target": 20})
    for face in (5, 5, 4):                        # in position; 5 against 4, less 1 in the dust: two sections
        run.game.answer_typed([face])
    p = run.game.game_json()["pending"]
    assert p["waiting"] == "placement" and p["placement"]["chosen"]
    assert p["placement"]["why"].startswith("set down beyond its 2 sections (the front bumper ends")
    run.film.slide(20, [700, 440, 0], "within one section")
    run.game.place(20)
    g = run.game.game_json()
    assert g["pending"] is None
    assert g["game"]["state"]["vehicles"]["20"]["pose"][:2] == pytest.approx([700, 440], abs=3)

"""Issue 23, point 1: every move the rules make in Wasteland Rally goes through a placement with
players' words: a car that fails its command test mid-move stops where it touched (RULEBOOK,
"Losing Control": it "immediately stop[s] moving"), and a car touching exploding terrain that
blows is put where it touched for the blast (RULEBOOK, "Exploding Terrain"). Without them the
session's safety net asked only "where its move ended"."""

from __future__ import annotations

import copy

import pytest

from companion.dice import FixedChoices, FixedDice, FixedPlacements
from companion.rules.base import rule_system
from companion.scenario import load_scenario, run_scenario
from companion.scene import parse_scene
from companion.session import GameSession
from tests.conftest import EXAMPLES
from tests.test_wasteland_rally import ROSTERS, SCENE, place, play

EXAMPLES_WR = EXAMPLES / "scenarios"


def placements(out: dict, event: int) -> list[dict]:
    return out["log"][event].get("placements", [])


def test_a_car_stopped_against_wreckage_is_put_where_it_touched_with_the_reason():
    cars = place(SCENE["cars"], {21: (1150, 400, 90)})
    out = play([{"act": "move", "vehicle": 21, "path": [[1150, 600, 90]]}], [2, 10],
               options={"check_deployment": False}, cars=cars)
    asked = placements(out, 0)
    assert asked, "no placement asked"
    first = asked[0]
    assert first["why"].startswith("it failed its command test against the wreckage burnt-out bus: its movement "
                                   "ends there")
    assert 429 <= first["asked"][1] <= 431                     # its front at the bus's edge, 470
    assert "Losing Control" in first["why"] and "_" not in first["why"]


def test_a_car_failing_to_drive_over_another_is_put_where_it_touched_it():
    # The Dust Devil (buggy) drives at the Rustler and fails its own command test.
    cars = place(SCENE["cars"], {11: (260, 300, 0), 10: (400, 300, 0)})
    out = play([{"act": "move", "vehicle": 11, "path": [[480, 300, 0]]}], [2, 9, 10],
               options={"check_deployment": False}, cars=cars)
    assert out["steps"][0]["result"] == "lost control"
    why = [p["why"] for p in placements(out, 0)]
    assert why and why[0].startswith("it failed its command test driving over the Rustler and stops where it "
                                     "touched it")
    x = out["state"]["vehicles"]["11"]["pose"][0]
    assert x == pytest.approx(400 - 75 / 2 - 70 / 2, abs=1.5)   # its front against the Rustler's rear


def test_exploding_terrain_puts_the_car_where_it_touched_for_the_blast_then_where_its_path_ends():
    path = EXAMPLES_WR / "wr-03-exploding-terrain.json"
    out = run_scenario(load_scenario(path), str(path))
    move = next(k for k, e in enumerate(out["log"]) if e.get("detail", {}).get("act") == "move")
    why = [p["why"] for p in placements(out, move)]
    assert why[0].startswith("where it touched the exploding fuel drums, which explodes (10 on the d12): the blast "
                             "is measured with it there; it then drives on")
    assert why[1] == "the rest of its move after the blast: where its path ends"


def test_the_stop_is_where_the_camera_saw_the_car_put_not_where_it_was_asked():
    # On a table the car is put by hand: the game takes the camera's pose (4 mm short here),
    # and its next move starts there.
    scene = copy.deepcopy(SCENE)
    scene["cars"] = place(SCENE["cars"], {21: (1150, 400, 90)})
    rules = rule_system("wasteland_rally", {"check_deployment": False})
    st = rules.new_game(copy.deepcopy(ROSTERS), parse_scene(scene))
    sess = GameSession(rules, st, FixedDice([2, 10], "test"), FixedChoices(),
                       placements=FixedPlacements([{"marker": 21, "placed": [1150, 426, 90, 0.5, 0.3],
                                                    "how": "camera"}]))
    out = sess.act({"act": "move", "vehicle": 21, "path": [[1150, 600, 90]]})
    assert out["result"] == "lost control"
    assert st.vehicles[21].stood.y_mm == pytest.approx(426)
    assert st.pending[0]["from"][:2] == [1150.0, 426.0]         # the reposition is judged from there

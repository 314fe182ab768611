"""Shattered Highways: the turn as the book has it (issue 23, point 2). "A Combat Round": a
play order has a number for each vehicle of the largest army, the smaller side skipping
numbers; every vehicle in the fight gets one, no vehicle two; a round is complete when the
last vehicle has played. "Within a Round": a warrior acts only in his vehicle's turn, so once
every vehicle has played no one shoots, unjams or does anything else until the next round."""

from __future__ import annotations

import copy
import json
from importlib import resources
from pathlib import Path

import pytest

from companion.dice import FixedDice
from companion.rules.base import RulesError, rule_system
from companion.scenario import load_scenario
from companion.scene import parse_scene
from companion.session import GameSession

HERE = Path(__file__).resolve().parents[1] / "examples" / "scenarios"
BASE = load_scenario(HERE / "01-move.json")
QUOTE = "using numbers starting at one in each vehicle's columns"


def session(dice=(), rosters=None, cars=None):
    data = copy.deepcopy(BASE)
    if cars is not None:
        data["cars"] = cars
    rules = rule_system("shattered_highways")
    state = rules.new_game(rosters or data["rosters"], parse_scene(data))
    return GameSession(rules, state, FixedDice(list(dice)))


def demo_rosters():
    return json.loads(resources.files("companion").joinpath("data/demo_rosters.json").read_text(encoding="utf-8"))


DEMO_CARS = [{"id": m, "name": n, "x_mm": x, "y_mm": y, "heading_deg": 0.0, "length_mm": 75.0, "width_mm": 32.0}
             for m, n, x, y in ((10, "Interceptor", 600, 300), (11, "Rust Bucket", 600, 360), (12, "War Rig", 600, 420),
                                (13, "Buggy", 600, 480), (14, "Hearse", 600, 540))]


def play_round_through(s):
    """End every activation of the round under way."""
    while s.rules.active_marker(s.state) is not None:
        assert s.end_turn() is not None


def test_once_every_vehicle_has_played_no_warrior_shoots_or_unjams_until_the_next_round():
    """Round 1 (Max 5, Joe 2): the Interceptor's gunner shoots at the Rust Bucket ahead and
    rolls a 1: the gun jams. Once the last vehicle has played he tries again, the hero and the
    gunner try to clear the gun, a warrior of Joe's passes: all refused, the book's words
    quoted, nothing rolled. In round 2, in the Interceptor's turn, the hero clears it."""
    s = session([5, 2, 1, 4, 1])
    s.start_round({"Max": [10, 11], "Joe": [21, 20]})
    out = s.act({"act": "shoot", "warrior": "Max:10:W1", "target": 11})
    assert out["result"] == "jammed"
    play_round_through(s)
    assert s.state.round == 1 and s.rules.active_marker(s.state) is None
    for act in ({"act": "shoot", "warrior": "Max:10:W1", "target": 11},
                {"act": "unjam", "warrior": "Max:10:D", "weapon": "front"},
                {"act": "unjam", "warrior": "Max:10:W1", "weapon": "front"},
                {"act": "pass", "warrior": "Joe:20:W1"}):
        with pytest.raises(RulesError, match="round 1 is over: every vehicle has played") as exc:
            s.act(act)
        assert "any unused warriors actions are lost once play moves to another vehicle" in str(exc.value)
    assert s.state.vehicles[10].weapons[0].jammed and s.dice.remaining == 2
    s.start_round({"Max": [10, 11], "Joe": [21, 20]})
    assert s.act({"act": "unjam", "warrior": "Max:10:D", "weapon": "front"})["result"] == "unjammed"


def test_the_smaller_fleet_gets_a_blank_for_each_number_it_skips():
    """The demo's fleets: Max three vehicles, Furiosa two. "The total number of order positions
    is equal to the number of vehicles in the largest army fielded": three places each, one of
    Furiosa's a blank, which she may put where she likes."""
    s = session([3, 5], rosters=demo_rosters(), cars=DEMO_CARS)
    asked = s.rules.round_orders(s.state)
    assert [c["value"] for c in asked["Max"]] == [10, 13, 14]
    assert [c["value"] for c in asked["Furiosa"]] == [12, 11, None]
    assert asked["Furiosa"][2]["label"] == "a number skipped (no vehicle)"
    out = s.start_round({"Max": [10, 13, 14], "Furiosa": [None, 12, 11]})
    # Furiosa rolls higher and goes first, but has no #1: Max's #1 plays, then #2 alternately.
    assert out["first"] == "Furiosa"
    assert [o["vehicle"] for o in out["order"]] == [10, 12, 13, 11, 14]


def test_a_wrecked_vehicle_still_counts_for_the_number_of_places():
    """ "For all subsequent rounds that stat card is counted only to keep the play order
    intact": with the Hearse wrecked Max still fields three, Furiosa still gets three places."""
    s = session(rosters=demo_rosters(), cars=DEMO_CARS)
    s.state.vehicles[14].destroyed = True
    asked = s.rules.round_orders(s.state)
    assert [c["value"] for c in asked["Max"]] == [10, 13, None]
    assert len(asked["Furiosa"]) == 3


@pytest.mark.parametrize("orders, said", [
    ({"Max": [10], "Joe": [21, 20]}, "Max's play order leaves out the Rust Bucket"),
    ({"Max": [10, None], "Joe": [21, 20]}, "Max's play order leaves out the Rust Bucket"),
    ({"Max": [10, 10], "Joe": [21, 20]}, "Max's play order names the Interceptor twice"),
    ({"Max": [10, 11, None], "Joe": [21, 20]}, "Max's play order has 3 numbers; the largest army has 2 vehicles"),
    ({"Max": [10, 11]}, "no play order from Joe"),
])
def test_an_order_that_leaves_out_a_vehicle_or_names_one_twice_is_refused_quoting_the_rule(orders, said):
    s = session([5, 2])
    with pytest.raises(RulesError) as exc:
        s.start_round(orders)
    assert said in str(exc.value) and QUOTE in str(exc.value)
    assert s.state.round == 0 and s.log == [] and s.dice.remaining == 2 and s.pending is None


def test_an_order_from_someone_not_playing_is_refused():
    s = session([5, 2])
    with pytest.raises(RulesError, match="a play order from Furiosa, who is not playing"):
        s.start_round({"Max": [10, 11], "Joe": [21, 20], "Furiosa": [12]})


def test_a_round_under_way_is_not_started_again():
    """ "Continue back and forth until the second player plays their final vehicle. This
    constitutes one complete round": a new round waits for the last vehicle to play."""
    s = session([5, 2, 4, 1])
    s.start_round({"Max": [10, 11], "Joe": [21, 20]})
    s.end_turn()
    with pytest.raises(RulesError) as exc:
        s.start_round({"Max": [11, 10], "Joe": [20, 21]})
    assert str(exc.value).startswith("round 1 is not over: the Buggy's turn is under way, then the Rust Bucket, "
                                     "then the War Rig")
    assert "This constitutes one complete round" in str(exc.value)
    assert s.state.round == 1 and s.rules.active_marker(s.state) == 21 and s.dice.remaining == 2
    play_round_through(s)
    assert s.start_round({"Max": [11, 10], "Joe": [20, 21]})["round"] == 2


def test_the_pages_orders_as_offered_start_the_round():
    """What the page sends back from `round_orders` as offered (blanks as None) is a valid order."""
    s = session([4, 4, 6, 1], rosters=demo_rosters(), cars=DEMO_CARS)
    asked = s.rules.round_orders(s.state)
    out = s.start_round({p: [c["value"] for c in own] for p, own in asked.items()})
    assert out["first"] == "Max" and [o["vehicle"] for o in out["order"]] == [10, 12, 13, 11, 14]

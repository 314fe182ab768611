"""Shattered Highways: every move the rules make goes through a placement, said in the
players' words (issue 23, point 1): Lost Control's veer, an unmanned car's drop-back, a
nudge's push and the daisy chain (each knocked car set down before the next is judged), a
move the dice refuse put back, the front edge's shift, a buggy coming out of a rig."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from companion.dice import FixedDice, PlacementRequest
from companion.rules.base import RulesError, rule_system
from companion.scenario import load_scenario, run_scenario
from companion.scene import parse_scene
from companion.session import GameSession

HERE = Path(__file__).resolve().parents[1] / "examples" / "scenarios"
BASE = load_scenario(HERE / "01-move.json")
CHAIN = load_scenario(HERE / "29-nudge-daisy-chain.json")
#: Table coordinates said to players, as the old Lost Control said them: "veering to (622, 440)".
COORDINATES = re.compile(r"\(\s*-?\d+(?:\.\d+)?\s*,\s*-?\d+(?:\.\d+)?\s*\)")


def play(steps, dice, base=BASE, **changes):
    data = copy.deepcopy(base)
    data.update(steps=steps, dice=dice, **changes)
    return run_scenario(data)


def placements(out, step=-1):
    """The placements the log's event for a step asked for: [(marker, why), ...]."""
    return [(p["marker"], p["why"]) for p in out["log"][step].get("placements", [])]


def test_lost_control_is_a_placement_said_in_inches_not_coordinates():
    """A Move rolled 1: the template centred on the Interceptor, box 1 (front right, the far
    corner: 4.5 in ahead, 2 in right of its centre; "Lost Control")."""
    out = play([{"act": "move", "vehicle": 10, "to": [680, 430, 0]}], [1, 1])
    assert placements(out) == [(10, "Lost Control: veers 4.5 in forward and 2.0 in right (box 1)")]
    events = out["steps"][0]["events"]
    assert "the Interceptor loses control: box 1, veering 4.5 in forward and 2.0 in right" in events
    assert not any(COORDINATES.search(e) for e in events), events


def test_lost_control_into_another_car_is_set_down_against_it_before_the_ram():
    """Box 3 (rear right) runs the Interceptor back into the Buggy behind it: it is set down
    up against it, then rams it at -1 ("If it encounters another vehicle on the way, it Rams
    it at a -1")."""
    out = play([{"act": "move", "vehicle": 10, "to": [680, 430, 0]}], [1, 3, 5, 2, 3])
    (marker, why), = placements(out)
    assert marker == 10 and why.startswith("Lost Control: veers") and why.endswith("(box 3), up against the Buggy")
    rolls = out["steps"][0]["rolls"]
    # Every die in order: the Move's 1, the box, the Ram (at -1) against the Buggy's driver, its damage.
    assert [r["face"] for r in rolls] == [1, 3, 5, 2, 3], rolls
    assert rolls[2]["asked"].startswith("1d10 Ram the Buggy")
    assert rolls[2]["modifiers"] == [{"value": -1, "reason": "ramming out of control"}]


def test_an_unmanned_car_drops_back_through_a_placement():
    """ "Unmanned": the Interceptor's hero boards the War Rig; at the turn's end the empty car
    goes back one section (3 in) in a straight line."""
    steps = [{"poses": {"20": [650, 440, 0], "21": [380, 400, 0]}},
             {"round": {"Max": [10, 11], "Joe": [20, 21]}},
             {"act": "board", "warrior": "Max:10:D", "target": 20}, {"end_turn": True}]
    out = play(steps, [5, 2, 6, 5])
    assert placements(out) == [(10, "unmanned: drops back 3.0 in")]
    assert out["state"]["vehicles"]["10"]["pose"] == pytest.approx([523.8, 400.0, 0.0])


def test_a_rig_dragging_its_dead_trailer_is_said_and_dropped_back_as_the_rig():
    """37's War Rig, its trailer shot to nothing and not cut loose, at the end of its own turn:
    unmanned ("Destroyed!"), said as players say it ("the War Rig drags ...", found playing a
    whole game on the demo page: the sentence began with the bare name), then dropped back."""
    shots = [{"act": "shoot", "warrior": "Max:10:W1", "target": 20, "at": "trailer"}] * 4
    steps = shots + [{"round": {"Max": [10, 11], "Joe": [20, 21]}}, {"end_turn": True}]
    data = load_scenario(HERE / "37-decoupled-trailer-falls-back.json")
    out = play(steps, [5, 6] * 4 + [2, 6, 5], base=data)
    assert out["state"]["vehicles"]["20"]["hp"]["trailer"] <= 0
    events = out["steps"][-1]["events"]
    assert events[0] == "the War Rig drags its dead trailer: unmanned until it decouples", events
    assert placements(out) == [(20, "unmanned: drops back 3.0 in")]


def test_a_nudge_sets_the_pushed_car_down_with_the_nudgers_name():
    out = play([{"act": "nudge", "vehicle": 21, "target": 10, "push_to": [686, 400, 0]}], [4, 6, 2],
               cars=CHAIN["cars"])
    assert placements(out) == [(10, "pushed by the Buggy's nudge (up to 3 sections)")]


def test_a_nudge_that_fails_puts_the_car_set_down_back_where_it_stood():
    """The Buggy's driver rolls 2 to get in position: the nudge ends there ("must make a
    successful Move roll to get in position"). The Interceptor, set down where it was to be
    pushed, goes back; so does the Buggy, driven on for the rest of its Move."""
    out = play([{"act": "nudge", "vehicle": 21, "target": 10, "push_to": [686, 400, 0],
                 "then_to": [560, 400, 0]}], [2], cars=CHAIN["cars"])
    assert out["steps"][0]["result"] == "could not get in position"
    assert placements(out) == [(10, "the nudger could not get in position: back where it stood"),
                               (21, "the nudger could not get in position: back where it stood")]


def test_the_daisy_chain_places_each_knocked_car_before_the_next_is_judged():
    """29's chain as a table plays it: the Interceptor is asked for where the nudge put it
    before the Rust Bucket rolls to keep control; the Rust Bucket is asked for where it was
    knocked before the War Rig rolls."""
    rules = rule_system("shattered_highways")
    state = rules.new_game(CHAIN["rosters"], parse_scene(CHAIN))
    session = GameSession(rules, state, FixedDice(list(CHAIN["dice"])), placements=None)
    asked = []
    out = session.act(CHAIN["steps"][0])
    while out is None:
        p = session.pending
        assert isinstance(p, PlacementRequest), session.waiting_for()
        asked.append((p.marker, p.why, session.dice.remaining))
        out = session.place(p.marker, [p.x_mm, p.y_mm, p.heading_deg, 0.3, 0.2], "camera")
    # Dice left when each was asked: the Rust Bucket's keep-control roll (2) and the War Rig's
    # (2) were still to come when the Interceptor was put down.
    assert asked == [(10, "pushed by the Buggy's nudge (up to 3 sections)", 2),
                     (11, "knocked a section by the Interceptor", 1),
                     (20, "knocked a section by the Rust Bucket", 0)]
    assert out["result"] == "nudged"


def test_the_chain_reads_where_the_knocked_car_was_really_put():
    """The Interceptor is put down 9 mm short of where it was pushed (inside the placement's
    10 mm), so it stands 9.5 mm clear of the Rust Bucket: the chain stops there, and the Rust
    Bucket and the War Rig, set down further on by hand, go back where they stood."""
    rules = rule_system("shattered_highways")
    state = rules.new_game(CHAIN["rosters"], parse_scene(CHAIN))
    session = GameSession(rules, state, FixedDice([4, 6, 2]), placements=None)
    out = session.act(CHAIN["steps"][0])
    p = session.pending
    assert (p.marker, p.x_mm) == (10, 686.0)
    out = session.place(10, [677.0, 400.0, 0.0, 0.3, 0.2], "camera")
    asked = []
    while out is None:
        p = session.pending
        asked.append((p.marker, p.why))
        out = session.place(p.marker, [p.x_mm, p.y_mm, p.heading_deg, 0.3, 0.2], "camera")
    assert "the Interceptor was put down 0.37 in clear of the Rust Bucket: the chain stops there" in out["events"]
    assert asked == [(11, "not moved by the nudge: back where it stood"),
                     (20, "not moved by the nudge: back where it stood")]
    assert session.state.vehicles[11].pose.x_mm == 760.0 and session.state.vehicles[11].hp["body"] == 25


def test_a_failed_move_puts_the_driven_car_back():
    """ "On 2 they fail and stay where they were": the car driven on the table goes back."""
    out = play([{"act": "move", "vehicle": 10, "to": [680, 430, 0]}], [2])
    assert out["steps"][0]["result"] == "failed: stays where it was"
    assert placements(out) == [(10, "the Move failed: back where it stood")]


def test_a_ram_that_cannot_get_in_position_puts_the_rammer_back():
    out = play([{"act": "ram", "vehicle": 10, "target": 11, "to": [686, 400, 0]}], [2])
    assert out["steps"][0]["result"] == "could not get in position"
    assert placements(out) == [(10, "it could not get in position to ram: back where it stood")]


def test_the_front_edge_moves_every_car_back_through_placements():
    """24: the Interceptor drives to the front edge; every vehicle moves back 8.9 in."""
    data = load_scenario(HERE / "24-front-edge.json")
    out = run_scenario(data)
    asked = placements(out)
    assert [m for m, _ in asked] == [10, 11, 20, 21]
    assert {why for _, why in asked} == {"a vehicle reached the front edge: every vehicle moves back 8.9 in"}


def test_a_buggy_driven_out_of_a_rig_is_placed_behind_it():
    """ "Hidden Buggy": deployed by its driver's roll; with no place given on the table it
    comes out just behind the rig."""
    data = copy.deepcopy(load_scenario(HERE / "27-hidden-buggy-in-a-wreck.json"))
    data.update(steps=[{"act": "deploy", "vehicle": 20}], dice=[4])
    out = run_scenario(data)
    assert out["steps"][0]["result"] == "deployed"
    assert placements(out) == [(24, "bursts out of the War Rig: just behind it")]
    assert out["state"]["vehicles"]["24"]["pose"] == pytest.approx([581.0, 520.0, 0.0])


def test_a_bad_deploy_pose_is_refused_before_the_dice():
    data = copy.deepcopy(load_scenario(HERE / "27-hidden-buggy-in-a-wreck.json"))
    rules = rule_system("shattered_highways")
    session = GameSession(rules, rules.new_game(data["rosters"], parse_scene(data)), FixedDice([]))
    with pytest.raises(RulesError, match=r"deploy: to must be a pose \[x_mm, y_mm, heading_deg\]"):
        session.act({"act": "deploy", "vehicle": 20, "to": ["here", 1, 0]})
    assert session.log == [] and session.pending is None

"""Issue 23, point 2: Wasteland Rally's round form. Open Fire has no play orders (CORE,
"Activating Units": in turn each player "choose[s] one unit that has not yet been activated"),
so the orders the Round tab sends are optional slot by slot: a cleared slot (None) is the
player's choice at the table, a car may be left out; a car named twice is refused, quoting
the rule, and nothing changes (no die is asked)."""

from __future__ import annotations

import copy

import pytest

from companion.rules.base import RulesError
from companion.session import GameSession
from tests.test_wasteland_rally import ScriptedDice, game


def session():
    # A refused action puts the session's state back as it was (a copy): read sess.state after one.
    rules, st = game()
    return rules, st, GameSession(rules, st, ScriptedDice())


def test_a_round_starts_with_every_slot_cleared_as_the_form_sends_them():
    rules, st, sess = session()
    out = sess.start_round({"Max": [None, None], "Joe": [None, None]})
    assert out["round"] == 1 and st.up == "Max"
    assert rules.turn_info(st)["order"] == []              # nothing planned: chosen at the table
    # Max chooses either car; Joe is asked which car passes (two left, no order says).
    sess.act({"act": "hold", "vehicle": 11})
    assert sess.end_turn()["vehicle"] == 11 and st.up == "Joe"
    assert sess.end_turn() is None and [o["value"] for o in sess.pending.options] == [20, 21]


def test_a_blank_slot_is_a_free_choice_and_a_named_one_holds_its_place():
    rules, st, sess = session()
    sess.start_round({"Max": [None, 10], "Joe": [21]})
    # Max's first slot is blank, but the Rustler is planned second: the Dust Devil goes first.
    with pytest.raises(RulesError, match="Max's order activates the Rustler 2nd; this is their 1st activation"):
        sess.act({"act": "hold", "vehicle": 10})
    sess.act({"act": "hold", "vehicle": 11})
    sess.end_turn()
    with pytest.raises(RulesError, match="Joe's order activates the Gravedigger next, not the Scrapjaw"):
        sess.act({"act": "hold", "vehicle": 20})
    sess.act({"act": "hold", "vehicle": 21})
    sess.end_turn()
    assert sess.end_turn()["vehicle"] == 10               # Max's pass: his order's second car
    assert rules.turn_info(sess.state)["order"][:3] == [{"player": "Max", "vehicle": 11}, {"player": "Joe", "vehicle": 21},
                                               {"player": "Max", "vehicle": 10}]


def test_a_car_named_twice_is_refused_quoting_the_rule_and_nothing_changes():
    rules, st, sess = session()
    before = copy.deepcopy(st.to_json())
    with pytest.raises(RulesError) as err:
        sess.start_round({"Max": [10, None, 10]})
    assert "Max's play order names the Rustler twice: a car activates once a round" in str(err.value)
    assert '"Activating Units"' in str(err.value) and "one unit that has not yet been activated" in str(err.value)
    assert st.to_json() == before and sess.dice.asked == [] and sess.log == []


@pytest.mark.parametrize("orders, words", [
    ({"Max": [20]}, "Max's order names the Scrapjaw, which Joe owns"),
    ({"Max": ["Rustler"]}, "Max's play order: 'Rustler' is not a car's marker"),
    ({"Max": 10}, "Max's play order: a list of their cars"),
    ({"Zed": []}, "an order from Zed, who is not playing"),
])
def test_bad_orders_are_refused_before_any_die(orders, words):
    rules, st, sess = session()
    with pytest.raises(RulesError, match=words):
        sess.start_round(orders)
    assert st.round == 0 and sess.dice.asked == []


def test_a_named_car_that_left_the_game_lets_the_next_move_up():
    rules, st, sess = session()
    sess.start_round({"Max": [11, 10]})
    st.vehicles[11].destroyed = True
    with pytest.raises(RulesError, match="the Dust Devil is destroyed"):
        sess.act({"act": "hold", "vehicle": 11})
    sess.act({"act": "hold", "vehicle": 10})                # a refused action leaves a fresh state
    assert sess.state.active_marker == 10


def test_the_turn_prompt_the_look_ahead_and_the_round_form_follow_the_orders_played():
    """A newcomers' pass: the prompt offered every car yet to act ("Max activates a car
    (Rustler, Dust Devil)") while the order being played allowed one, the look-ahead listed
    a player's cars together instead of in turns, and the Round tab offered the cars as they
    stand, not in the order being played."""
    rules, st, sess = session()
    sess.start_round({"Max": [11, 10], "Joe": [None, 20]})
    assert rules.turn_text(st) == "round 1: Max activates the Dust Devil (next in their play order), or passes"
    with pytest.raises(RulesError, match="Max's order activates the Dust Devil next, not the Rustler"):
        sess.act({"act": "hold", "vehicle": 10})
    st = sess.state                  # a refusal puts back a copy
    # In turns (CORE, "Activating Units"); Joe's blank first slot names no car but is his turn.
    assert [(o["player"], o["vehicle"]) for o in rules.turn_info(st)["order"]] == [("Max", 11), ("Max", 10), ("Joe", 20)]
    assert [c["value"] for c in rules.round_orders(st)["Max"]] == [11, 10]
    sess.act({"act": "hold", "vehicle": 11})
    assert rules.turn_info(st)["turn"] == 0
    sess.end_turn()
    st = sess.state
    # Joe's first slot is blank, but his second names the Scrapjaw: the Gravedigger is his choice.
    assert rules.turn_text(st) == "round 1: Joe activates a car (Gravedigger), or passes"

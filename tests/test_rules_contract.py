"""The written contract between the rule systems and the table, checked on every system's demo
game: what the page reads of a target row, of an action spec, of where the turn stands, is
there in each system's answers, whatever the system."""

from __future__ import annotations

import re

import pytest

from companion.geometry import Footprint, Pose
from companion.rules.actions import FIELD_KINDS
from companion.race import gates_from_posts
from companion.rules.base import SYSTEM_MODULES, rule_system
from companion.scene import Scene

VERDICT_OUTCOMES = {"in", "out", "too close to call"}


def demo_game(name: str, demo_table):
    """The system's game with its starter rosters, its cars where its demo layout puts them."""
    rules = rule_system(name)
    cars = [(c.id, c.name, c.length_mm, c.width_mm) for c in demo_table.cars]
    layout = rules.demo_layout(cars, (demo_table.width_mm, demo_table.depth_mm))
    feet = tuple(Footprint(c.id, Pose(*layout[c.id], 0.3, 0.2), c.length_mm, c.width_mm, c.name)
                 for c in demo_table.cars)
    scene = Scene(name, demo_table.width_mm, demo_table.depth_mm, feet, (), "the demo table",
                  gates_from_posts(demo_table.gates))
    state = rules.new_game(rules.starter_rosters([(c.id, c.name) for c in demo_table.cars]), scene)
    return rules, state


@pytest.mark.parametrize("name", SYSTEM_MODULES)
def test_every_target_row_has_what_the_page_reads(name, demo_table):
    rules, state = demo_game(name, demo_table)
    rows = [t for m in rules.pieces(state) for t in rules.targets(state, m)]
    assert rows, f"{name}'s demo game has no targets to check"
    for t in rows:
        assert isinstance(t["marker"], int) and t.get("name"), t
        if "distance_mm" in t:
            assert t["sigma_mm"] >= 0 and len(t["line"]) == 2, t
        if "range" in t:
            assert t["range"]["outcome"] in VERDICT_OUTCOMES and "margin_mm" in t["range"], t
        if "arcs" in t:
            assert isinstance(t["arcs"], list), t
            for a in t["arcs"]:
                assert a["outcome"] in VERDICT_OUTCOMES and "margin_mm" in a and "sigma_mm" in a, a
        if "sight" in t and "clear" in t["sight"]:
            assert isinstance(t["sight"]["clear"], bool) and isinstance(t["sight"].get("blocked_by", []), list), t


@pytest.mark.parametrize("name", SYSTEM_MODULES)
def test_every_action_spec_and_the_turn_are_in_the_contracts_shape(name, demo_table):
    rules, state = demo_game(name, demo_table)
    for m in rules.pieces(state):
        for spec in rules.action_specs(state, m):
            out = spec.to_json()
            assert out["act"] in rules.handlers, (name, out["act"])
            assert all(f["kind"] in FIELD_KINDS for f in out["fields"]), out
    turn = rules.turn_info(state)
    assert {"round", "players", "order", "turn", "active", "up"} <= set(turn), turn


@pytest.mark.parametrize("name", SYSTEM_MODULES)
def test_every_piece_says_what_it_has_left_in_a_few_words(name, demo_table):
    """The result headline's "body 9 of 13 left": every system answers for each of its pieces
    (short words, no internal ids) and None for a marker that is no piece."""
    rules, state = demo_game(name, demo_table)
    for m in rules.pieces(state):
        text = rules.condition(state, m)
        assert isinstance(text, str) and 0 < len(text) <= 160, (m, text)
        assert "{" not in text and not re.search(r"\w+:\d+:\w+", text), (m, text)      # no internal ids
        assert rules.condition(state, m) == text                  # the same state, the same words
    assert rules.condition(state, 987654) is None


@pytest.mark.parametrize("name", SYSTEM_MODULES)
def test_every_action_declares_its_fields(name):
    """What the page, a scenario and a record send is checked against the action's own
    declaration (issue 25): an action without one would take any field silently."""
    rules = rule_system(name)
    undeclared = sorted(set(rules.handlers) - set(rules.action_fields))
    assert undeclared == [], f"{name}: actions without declared fields: {undeclared}"


@pytest.mark.parametrize("name", SYSTEM_MODULES)
def test_every_offered_field_is_declared_by_its_action(name, demo_table):
    """The page's form and the rules' declaration are one: every field of every action a car's
    card offers in the demo game is among its action's declared fields."""
    rules, state = demo_game(name, demo_table)
    for m in rules.pieces(state):
        for spec in rules.action_specs(state, m):      # refuses an undeclared field itself
            declared = rules.action_fields.get(spec.act)
            assert declared is not None, f"{name}: {spec.act} is offered but declares no fields"
            assert {f.name for f in spec.fields} <= set(declared), spec.act


@pytest.mark.parametrize("name", SYSTEM_MODULES)
def test_a_state_block_with_an_unknown_field_is_refused_by_name(name, demo_table):
    from companion.rules.base import RulesError
    rules, state = demo_game(name, demo_table)
    with pytest.raises(RulesError, match="no_such_thing"):
        rules.start_part_way(state, {"no_such_thing": 1})

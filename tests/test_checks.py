"""What the page offers and greys is the rules' own answer (issue 23, "one judgement"): for a
selected car, every action tried as it would be resolved, with every option of its choices
(companion/checks.py, `POST /api/checks`), not one guessed body per action.

The demo table's cars are put where each test needs them and seen by the camera (rendered
frames, tracked), as on the page."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from companion.checks import check_action, dry_run, option_order, owners
from companion.rules.actions import ActionSpec, Field
from companion.game import GameError, TableGame
from companion.live import LiveTable
from tests.test_game_page import make_client
from vision.render import CarTruth
from vision.sources import SyntheticSource

INTERCEPTOR, RUST_BUCKET, WAR_RIG, BUGGY, HEARSE = 10, 11, 12, 13, 14

#: The Rust Bucket (Furiosa's) 1 mm from the Interceptor's (Max's) front bumper; everything
#: else far off.
TOUCHING = (CarTruth(INTERCEPTOR, 300.0, 200.0, 0.0), CarTruth(RUST_BUCKET, 374.5, 200.0, 0.0),
            CarTruth(WAR_RIG, 900.0, 650.0, 0.0), CarTruth(BUGGY, 700.0, 520.0, 0.0),
            CarTruth(HEARSE, 1000.0, 200.0, 0.0))
#: Max's Buggy nearer the Interceptor's gun than Furiosa's Rust Bucket, both in range and arc;
#: the Hearse and the War Rig out of range.
BOTH_IN_RANGE = (CarTruth(INTERCEPTOR, 300.0, 200.0, 0.0), CarTruth(BUGGY, 400.0, 160.0, 0.0),
                 CarTruth(RUST_BUCKET, 430.0, 250.0, 0.0), CarTruth(WAR_RIG, 900.0, 650.0, 0.0),
                 CarTruth(HEARSE, 1000.0, 200.0, 0.0))


def table_game(demo_table, renderer, poses, rules="shattered_highways") -> TableGame:
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    live.process(renderer.render(poses, np.random.default_rng(3)).image, 0, 0.0)
    game = TableGame(live, seed=7)
    game.start(rules, None, game.starter_rosters(rules))
    return game


@pytest.fixture(scope="module")
def touching(demo_table, renderer):
    return table_game(demo_table, renderer, TOUCHING)


@pytest.fixture(scope="module")
def both_in_range(demo_table, renderer):
    return table_game(demo_table, renderer, BOTH_IN_RANGE)


def by_act(answer: dict) -> dict:
    return {c["act"]: c for c in answer["checks"]}


def option(check: dict, field: str, value) -> dict:
    return next(o for o in check["options"][field] if o["value"] == value)


def test_the_touching_car_is_offered_and_taken_to_board_and_attack(touching):
    board = by_act(touching.checks(INTERCEPTOR))["board"]
    assert board["ok"] and board["why"] is None
    assert option(board, "target", RUST_BUCKET)["ok"]
    assert board["first_ok"]["target"] == RUST_BUCKET
    # Whatever else the rules list is refused, in their words ("... is 17.23 in away; Board reaches 1 in").
    for o in board["options"]["target"]:
        assert o["ok"] == (o["value"] == RUST_BUCKET), o
        assert o["ok"] or "in away" in o["why"], o
    assert all(o["ok"] for o in board["options"]["warrior"])      # every warrior aboard may try it
    attack = by_act(touching.checks(INTERCEPTOR))["attack"]
    assert attack["ok"] and attack["first_ok"]["target"].split(":")[1] == str(RUST_BUCKET)
    for o in attack["options"]["target"]:
        assert o["ok"] == (o["value"].split(":")[1] == str(RUST_BUCKET)), o
    # The hero's pistol reaches them; cannon fodder fight hand to hand aboard only.
    warriors = {o["value"]: o for o in attack["options"]["warrior"]}
    assert warriors["Max:10:D"]["ok"]
    assert all(not o["ok"] and "hand to hand" in o["why"] for w, o in warriors.items() if w != "Max:10:D")


def test_an_option_after_refused_ones_is_offered_and_is_the_forms_first():
    """Whatever the rules list first: every combination of the choices is tried (the issue's
    Board greyed because the first car in the list was 2.47 in away)."""
    spec = ActionSpec("board", "Board", (
        Field("warrior", "choice", "who", choices=({"value": "W1", "label": "a"}, {"value": "W2", "label": "b"})),
        Field("target", "choice", "board", choices=tuple({"value": m, "label": str(m)} for m in (13, 14, 11))),
        Field("seat", "choice", "seat", optional=True, choices=({"value": "P1", "label": "p"},))))
    tried = []

    def verdict(spec, body):
        tried.append(dict(body))
        if body["target"] != 11:
            return {"ok": False, "why": f"car {body['target']} is too far"}
        return {"ok": True} if body["warrior"] == "W2" else {"ok": False, "why": "W1 cannot"}

    out = check_action(spec, lambda value: 0, verdict)
    assert out["ok"] and out["why"] is None and out["first_ok"] == {"warrior": "W2", "target": 11}
    assert {o["value"]: (o["ok"], o["why"]) for o in out["options"]["target"]} == {
        13: (False, "car 13 is too far"), 14: (False, "car 14 is too far"), 11: (True, None)}
    assert {o["value"]: (o["ok"], o["why"]) for o in out["options"]["warrior"]} == {
        "W1": (False, "car 13 is too far"), "W2": (True, None)}
    assert all("seat" not in b for b in tried) and len(tried) == 6        # optional choices left empty
    # Refused whichever is chosen: the first combination's reason is the action's.
    out = check_action(spec, lambda value: 0, lambda spec, body: {"ok": False, "why": f"no {body['target']}"})
    assert not out["ok"] and out["why"] == "no 13" and out["first_ok"] is None
    # Other sides' pieces are tried first (a rank of 0), then the rest as the rules list them.
    out = check_action(spec, lambda value: 0 if value == 14 else 1, lambda spec, body: {"ok": True})
    assert [o["value"] for o in out["options"]["target"]] == [14, 13, 11] and out["first_ok"]["target"] == 14
    # A point to pick first: asked once it is picked, not guessed.
    point = ActionSpec("walk", "Walk", (Field("to", "table_point", "to"),))
    assert check_action(point, lambda value: 0, verdict)["unchecked"]


def test_an_action_that_needs_one_of_its_optional_choices_is_offered_with_the_one_that_works():
    """Alpha Destructicus' Ram names a vehicle or a piece of terrain, neither required alone:
    tried with neither it is refused ("ram what?"), which greyed Ram against a car in contact
    in a whole game on the demo page. Each optional choice is tried in turn."""
    spec = ActionSpec("ram", "Ram", (
        Field("target", "choice", "vehicle", optional=True, choices=tuple({"value": m, "label": str(m)} for m in (12, 11))),
        Field("terrain", "choice", "terrain", optional=True, choices=({"value": "wall", "label": "wall"},))))

    def verdict(spec, body):
        if "target" not in body and "terrain" not in body:
            return {"ok": False, "why": "ram what? say 'target' or 'terrain'"}
        if body.get("target") == 11:
            return {"ok": True}
        return {"ok": False, "why": f"not against {body.get('target') or body.get('terrain')}"}

    out = check_action(spec, lambda value: 0, verdict)
    assert out["ok"] and out["first_ok"] == {"target": 11}
    assert {o["value"]: o["ok"] for o in out["options"]["target"]} == {12: False, 11: True}
    # Nothing in contact: refused for the first vehicle's own reason, not for "ram what?".
    out = check_action(spec, lambda value: 0, lambda spec, body: verdict(spec, {**body, "target": 12})
                       if "target" in body else verdict(spec, body))
    assert not out["ok"] and out["why"] == "not against 12"


def test_too_many_combinations_are_cut_and_said_untried(monkeypatch):
    import companion.checks as checks
    monkeypatch.setattr(checks, "MAX_TRIES_PER_ACTION", 3)
    spec = ActionSpec("attack", "Attack", (
        Field("warrior", "choice", "who", choices=tuple({"value": w, "label": w} for w in "ABC")),
        Field("target", "choice", "whom", choices=tuple({"value": w, "label": w} for w in "XYZ"))))
    out = check_action(spec, lambda value: 0, lambda spec, body: {"ok": False, "why": "no"})
    assert out["tries_cut"] and not out["ok"]
    assert [o["why"] for o in out["options"]["warrior"]] == ["no", checks.NOT_TRIED, checks.NOT_TRIED]


def test_the_other_sides_car_is_the_first_target_though_its_own_is_nearer(both_in_range):
    game = both_in_range
    rules, state = game.session.rules, game.session.state
    assert owners(rules, state)[BUGGY] == "Max" and owners(rules, state)[RUST_BUCKET] == "Furiosa"
    rank = option_order(rules, state, INTERCEPTOR)
    assert rank(RUST_BUCKET) < rank(BUGGY) and rank(RUST_BUCKET) < rank("Max:10:W1") < rank(BUGGY)
    shoot = by_act(game.checks(INTERCEPTOR))["shoot"]
    assert option(shoot, "target", BUGGY)["ok"] and option(shoot, "target", RUST_BUCKET)["ok"]
    assert shoot["first_ok"] == {"warrior": "Max:10:W1", "target": RUST_BUCKET}
    order = [o["value"] for o in shoot["options"]["target"]]
    assert order.index(RUST_BUCKET) < order.index(WAR_RIG) < order.index(BUGGY)   # its own side's last


def test_a_refused_action_or_option_says_the_rules_own_words(both_in_range):
    game = both_in_range
    answer = by_act(game.checks(INTERCEPTOR))
    ram = answer["ram"]                        # against nothing yet: refused, in the rules' words
    assert not ram["ok"]
    body = {"act": "ram", "vehicle": INTERCEPTOR, "target": ram["options"]["target"][0]["value"]}
    preview = game.preview(body)
    assert not preview["ok"] and ram["why"] == preview["why"]
    rules = game.session.rules
    spec = next(s for s in rules.action_specs(game.session.state, INTERCEPTOR) if s.act == "ram")
    state = copy.deepcopy(game.session.state)
    game._judging_poses(rules, state, spec.camera_cars(spec.fill(body, game)))
    assert dry_run(rules, state, spec.fill(body, game)) == {"ok": False, "why": ram["why"]}
    # An option refused while the action goes ahead: the Hearse out of the gun's range.
    far = option(answer["shoot"], "target", HEARSE)
    preview = game.preview({"act": "shoot", "warrior": "Max:10:W1", "target": HEARSE})
    assert not far["ok"] and far["why"] == preview["why"] and "in away" in far["why"]


def test_checks_change_nothing_and_answer_again_from_the_cache(both_in_range):
    game = both_in_range
    before, version = game.session.rules.state_json(game.session.state), game.version
    first = game.checks(INTERCEPTOR)
    assert game.checks(INTERCEPTOR) is first                 # the same game and camera: not tried again
    assert game.session.rules.state_json(game.session.state) == before and game.version == version
    game.note("something happened")                          # a new game version: tried again
    again = game.checks(INTERCEPTOR)
    assert again is not first and again["checks"] == first["checks"]


def test_an_unknown_car_or_no_game_is_refused(both_in_range, demo_table, renderer):
    with pytest.raises(GameError, match="no vehicle|not a vehicle|marker 99|99"):
        both_in_range.checks(99)
    source = SyntheticSource(demo_table, paced=False)
    with pytest.raises(GameError, match="no game yet"):
        TableGame(LiveTable(source, demo_table, source.camera)).checks(INTERCEPTOR)


def test_a_book_that_forbids_premeasuring_has_only_its_forms_checked(demo_table, renderer):
    game = table_game(demo_table, renderer, BOTH_IN_RANGE, rules="car_cult")
    assert not game.session.rules.may_premeasure()
    answer = game.checks(INTERCEPTOR)
    assert answer["premeasure"] is False
    for c in answer["checks"]:
        preview = game.preview({"act": c["act"], **(c["first_ok"] or {})}) if c["ok"] and not c.get("unchecked") else None
        assert c["ok"] or c.get("unchecked"), c
        assert preview is None or preview.get("premeasure") is False


def test_the_api_takes_a_marker_with_the_pages_token(both_in_range):
    c, h = make_client(both_in_range)
    r = c.post("/api/checks", json={"marker": INTERCEPTOR}, headers=h)
    assert r.status_code == 200
    got = r.get_json()
    assert got["marker"] == INTERCEPTOR and {x["act"] for x in got["checks"]} >= {"move", "shoot", "ram"}
    assert c.post("/api/checks", json={"marker": INTERCEPTOR}).status_code in (400, 403)   # no token
    bad = c.post("/api/checks", json={"marker": "ten"}, headers=h)
    assert bad.status_code == 400 and "marker must be a whole number" in bad.get_json()["error"]
    assert c.post("/api/checks", json={"marker": 99}, headers=h).status_code == 409

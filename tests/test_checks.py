"""What the page offers and greys is the rules' own answer (issue 23, "one judgement"): for a
selected car, every action tried as it would be resolved, with every option of its choices
(companion/checks.py, `POST /api/checks`), not one guessed body per action.

The demo table's cars are put where each test needs them and seen by the camera (rendered
frames, tracked), as on the page."""

from __future__ import annotations

import numpy as np
import pytest

from companion.checks import car_checks, dry_run, owners
from companion.game import GameError, TableGame
from companion.live import LiveTable
from tests.test_game_page import make_client
from vision.render import CarTruth
from vision.sources import SyntheticSource

INTERCEPTOR, RUST_BUCKET, WAR_RIG, BUGGY, HEARSE = 10, 11, 12, 13, 14

#: The Rust Bucket (Furiosa's) 1 mm from the Interceptor's (Max's) front bumper; everything
#: else far off. The Interceptor's Board targets list Max's own Buggy first, the War Rig's
#: warriors come first among those it could Attack.
TOUCHING = (CarTruth(INTERCEPTOR, 300.0, 200.0, 0.0), CarTruth(RUST_BUCKET, 374.5, 200.0, 0.0),
            CarTruth(WAR_RIG, 900.0, 650.0, 0.0), CarTruth(BUGGY, 700.0, 520.0, 0.0),
            CarTruth(HEARSE, 1000.0, 200.0, 0.0))
#: Max's Buggy nearer the Interceptor's gun than Furiosa's Rust Bucket, both in range and arc.
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


def choices(game: TableGame, marker: int, act: str, field: str) -> list:
    spec = next(s for s in game.session.rules.action_specs(game.session.state, marker) if s.act == act)
    return [c["value"] for c in spec.field(field).choices]


def test_the_touching_car_is_offered_to_board_though_another_is_first_in_the_list(touching):
    first = choices(touching, INTERCEPTOR, "board", "target")[0]
    assert first != RUST_BUCKET            # the form's first target is not the car it touches
    board = by_act(touching.checks(INTERCEPTOR))["board"]
    assert board["ok"] and board["why"] is None
    assert option(board, "target", RUST_BUCKET)["ok"]
    assert board["first_ok"]["target"] == RUST_BUCKET
    # The first of the list, far off, is refused with the rules' own words for it.
    far = option(board, "target", first)
    assert not far["ok"] and "in away; Board reaches 1 in" in far["why"]
    # Every warrior aboard may try it: each is offered.
    assert all(o["ok"] for o in board["options"]["warrior"])


def test_hand_to_hand_attack_is_offered_on_the_touching_cars_warriors(touching):
    victims = choices(touching, INTERCEPTOR, "attack", "target")
    assert victims[0].split(":")[1] == str(WAR_RIG)        # the War Rig's warriors first in the list
    attack = by_act(touching.checks(INTERCEPTOR))["attack"]
    assert attack["ok"]
    assert attack["first_ok"]["target"].split(":")[1] == str(RUST_BUCKET)
    for o in attack["options"]["target"]:
        aboard = o["value"].split(":")[1]
        assert o["ok"] == (aboard == str(RUST_BUCKET)), o
    # The hero's pistol reaches them; cannon fodder fight hand to hand aboard only: each warrior
    # says so, in the rules' words.
    warriors = {o["value"]: o for o in attack["options"]["warrior"]}
    assert warriors["Max:10:D"]["ok"]
    assert not warriors["Max:10:W1"]["ok"] and "fights hand to hand" in warriors["Max:10:W1"]["why"]


def test_the_other_sides_car_is_the_first_target_though_its_own_is_nearer_and_first_in_the_list(both_in_range):
    game = both_in_range
    assert choices(game, INTERCEPTOR, "shoot", "target")[0] == BUGGY
    assert owners(game.session.rules, game.session.state)[BUGGY] == "Max"
    shoot = by_act(game.checks(INTERCEPTOR))["shoot"]
    assert option(shoot, "target", BUGGY)["ok"] and option(shoot, "target", RUST_BUCKET)["ok"]
    assert shoot["first_ok"] == {"warrior": "Max:10:W1", "target": RUST_BUCKET}
    order = [o["value"] for o in shoot["options"]["target"]]
    assert order.index(RUST_BUCKET) < order.index(BUGGY)
    assert order[-1] == BUGGY or order.index(BUGGY) > order.index(WAR_RIG)   # its own side's last


def test_a_refused_action_says_the_rules_own_words(both_in_range):
    game = both_in_range
    board = by_act(game.checks(INTERCEPTOR))["board"]
    assert not board["ok"]
    # The same words the preview of that exact action gives, and the rules' resolution raises.
    body = {"act": "board", **{k: board["options"][k][0]["value"] for k in ("warrior", "target")}}
    preview = game.preview(body)
    assert not preview["ok"] and board["why"] == preview["why"]
    assert board["why"] == option(board, "target", body["target"])["why"]
    rules = game.session.rules
    import copy
    spec = next(s for s in rules.action_specs(game.session.state, INTERCEPTOR) if s.act == "board")
    state = copy.deepcopy(game.session.state)
    assert dry_run(rules, state, spec.fill(body, game)) == {"ok": False, "why": board["why"]}


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
    assert got["marker"] == INTERCEPTOR and {x["act"] for x in got["checks"]} >= {"move", "shoot", "board"}
    assert c.post("/api/checks", json={"marker": INTERCEPTOR}).status_code in (400, 403)   # no token
    bad = c.post("/api/checks", json={"marker": "ten"}, headers=h)
    assert bad.status_code == 400 and "marker must be a whole number" in bad.get_json()["error"]
    assert c.post("/api/checks", json={"marker": 99}, headers=h).status_code == 409

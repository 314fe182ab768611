"""The game behind the page, through its JSON API (Flask's test client): setting up,
a car's card, region and targets, an action's conditions with numbers, dice typed
in or rolled, undo, the round, the ruler, the camera's pictures; and who may
change anything (page token, origin, the table's PIN), with every bad input named."""

from __future__ import annotations

import numpy as np
import pytest

from companion.game import TableGame
from companion.live import LiveTable
from companion.web import create_app
from vision.render import CarTruth
from vision.sources import SyntheticSource

#: The Interceptor with the Rust Bucket 46.5 mm ahead (in its gun's 6 in), the War Rig
#: far off to the side, the Buggy behind the burnt-out bus, the Hearse at the far end.
POSES = (CarTruth(10, 300.0, 200.0, 0.0), CarTruth(11, 420.0, 200.0, 0.0), CarTruth(12, 900.0, 650.0, 0.0),
         CarTruth(13, 700.0, 520.0, 0.0), CarTruth(14, 1000.0, 200.0, 0.0))


@pytest.fixture
def table_game(demo_table, renderer):
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    frame = renderer.render(POSES, np.random.default_rng(3))
    live.process(frame.image, 0, 0.0)
    game = TableGame(live, seed=7)
    game.frame = frame
    return game


def make_client(game, **config):
    app = create_app(game, {"TESTING": True, **config})
    client = app.test_client()
    token = client.get("/api/session").get_json()["csrf"]
    return client, {"X-CSRF-Token": token}


@pytest.fixture
def client(table_game):
    return make_client(table_game)


@pytest.fixture
def playing(client):
    c, h = client
    rosters = c.get("/api/rosters/starter").get_json()
    r = c.post("/api/game", json={"rules": "shattered_highways", "rosters": rosters}, headers=h)
    assert r.status_code == 200, r.get_json()
    return c, h


SHOT = {"act": "shoot", "warrior": "Max:10:W1", "target": 11, "at": "vehicle"}


def test_a_car_shows_its_card_move_region_and_targets_with_margin_and_doubt(playing):
    c, _ = playing
    car = c.get("/api/car/10").get_json()
    card = car["card"]
    assert card["name"] == "Interceptor" and card["class"] == "car" and card["owner"] == "Max"
    assert card["hp"] == [{"part": "body", "now": 25, "max": 25}]
    assert [s["seat"] for s in card["seats"]] == ["D", "W1", "P1"] and card["seats"][0]["label"].startswith("Max's hero")
    assert card["weapons"] == [{"mount": "front", "seat": "W1", "jammed": False, "range_in": 6}]
    regions = {r["name"]: r for r in car["overlays"]["move_regions"]}
    assert set(regions) == {"forwards", "backwards"} and regions["forwards"]["area_mm2"] > 1000
    assert [a["mount"] for a in car["overlays"]["arcs"]] == ["front"]
    targets = {t["name"]: t for t in car["targets"]}
    rust = targets["Rust Bucket"]
    # 120 mm between centres, less half of each car (75 and 72 mm long): 46.5 mm.
    assert rust["distance_mm"] == pytest.approx(46.5, abs=1.0)
    assert rust["range"]["outcome"] == "in" and rust["range"]["margin_mm"] == pytest.approx(152.4 - 46.5, abs=1.0)
    assert 0 < rust["sigma_mm"] < 1 and rust["shootable"]
    (x0, y0), (x1, y1) = rust["line"]
    assert x1 - x0 == pytest.approx(46.5, abs=1.0) and y0 == pytest.approx(200, abs=16)
    assert rust["arcs"][0]["outcome"] == "in"
    assert targets["Hearse"]["range"]["outcome"] == "out" and not targets["Hearse"]["shootable"]
    assert not targets["Buggy"]["sight"]["clear"] and targets["Buggy"]["sight"]["blocked_by"] == ["Burnt-out bus"]
    # Board is offered only with a vehicle within its reach: the nearest is 1.83 in away.
    assert {a["act"] for a in car["actions"]} >= {"move", "shoot", "ram", "nudge", "pass"}


def test_an_actions_conditions_are_shown_with_their_numbers_before_it_is_resolved(playing):
    c, h = playing
    ok = c.post("/api/preview", json=SHOT, headers=h).get_json()
    assert ok["ok"] and ok["needs"].startswith("1d6 Shoot at the Rust Bucket")
    assert ok["measured"]["range_text"].startswith("in: range 1.83 in")
    far = c.post("/api/preview", json={**SHOT, "target": 14}, headers=h).get_json()
    assert not far["ok"] and "the Hearse is" in far["why"] and "(range 6 in)" in far["why"]
    assert far["measured"]["range"]["outcome"] == "out"
    wrong = c.post("/api/preview", json={**SHOT, "at": "Joe:99:D"}, headers=h).get_json()
    assert not wrong["ok"] and "not a choice for aim at" in wrong["why"]


def test_a_shot_with_typed_dice_step_by_step_then_undone(playing, table_game):
    c, h = playing
    g = c.post("/api/act", json=SHOT, headers=h).get_json()
    assert g["pending"]["asked"].startswith("1d6 Shoot at the Rust Bucket") and g["pending"]["dice"] == ["d6"]
    bad = c.post("/api/dice/typed", json={"faces": [7]}, headers=h)
    assert bad.status_code == 409 and bad.get_json()["error"] == "a d6 cannot show 7"
    bad = c.post("/api/dice/typed", json={"faces": [3, 4]}, headers=h)
    assert bad.status_code == 409 and "type 1 face(s), not 2" in bad.get_json()["error"]
    g = c.post("/api/dice/typed", json={"faces": [5]}, headers=h).get_json()
    assert g["pending"]["asked"] == "1d6 machine gun damage to the Rust Bucket"
    assert g["pending"]["so_far"][0]["faces"] == [5]
    g = c.post("/api/dice/typed", json={"faces": [4]}, headers=h).get_json()
    assert g["pending"] is None
    outcome = g["last_outcome"]["event"]["outcome"]
    assert outcome["result"] == "hit" and outcome["rolls"][0]["face"] == 5
    hp = g["game"]["state"]["vehicles"]["11"]["hp"]["body"]
    assert hp < 25 and g["can_undo"]
    # What the shot left its target, for the headline: only the car it hurt.
    assert g["last_outcome"]["left"] == [{"marker": 11, "name": "Rust Bucket", "left": f"body {hp} of 25 left"}]
    g = c.post("/api/undo", headers=h).get_json()
    assert g["game"]["state"]["vehicles"]["11"]["hp"]["body"] == 25
    assert g["log"][0]["kind"] == "undo" and g["log"][1]["undone"] is True
    # A shot that misses hurts nobody: nothing is said to be left.
    c.post("/api/act", json=SHOT, headers=h)
    g = c.post("/api/dice/typed", json={"faces": [2]}, headers=h).get_json()
    assert g["last_outcome"]["event"]["outcome"]["result"] == "missed" and g["last_outcome"]["left"] == []


def test_a_virtual_roll_answers_the_same_request_and_is_recorded(playing):
    c, h = playing
    c.post("/api/act", json=SHOT, headers=h)
    while (g := c.post("/api/dice/virtual", headers=h).get_json())["pending"] is not None:
        pass
    dice = g["log"][0]["dice"]
    assert dice[0]["source"] == "virtual" and dice[0]["seed"] == 7


def test_a_round_rolls_initiative_and_holds_the_active_car_where_its_turn_began(playing, table_game, renderer):
    c, h = playing
    g = c.post("/api/round", json={"orders": {"Max": [10, 13, 14], "Furiosa": [12, 11]}}, headers=h).get_json()
    assert g["pending"]["purpose"] == "initiative"
    g = c.post("/api/dice/typed", json={"faces": [6]}, headers=h).get_json()
    g = c.post("/api/dice/typed", json={"faces": [2]}, headers=h).get_json()
    assert g["game"]["state"]["active"] == 10 and g["held"] == [10]
    assert g["game"]["order"][0] == {"player": "Max", "vehicle": 10}
    # The Interceptor is lifted and put down 60 mm back: the game keeps where it started,
    # and a Move takes where it stands now from the camera.
    moved = [CarTruth(10, 240.0, 200.0, 0.0), *POSES[1:]]
    frame = renderer.render(moved, np.random.default_rng(4))
    for k in range(1, 17):          # a car put down elsewhere is found by the next full scan
        table_game.live.process(frame.image, k, k / 15)
    assert c.get("/api/game").get_json()["game"]["state"]["vehicles"]["10"]["pose"][0] == pytest.approx(300, abs=1)
    pv = c.post("/api/preview", json={"act": "move", "vehicle": 10}, headers=h).get_json()
    assert pv["ok"] and pv["action"]["to"][0] == pytest.approx(240, abs=1) and pv["judged"]["legal"], pv
    bad = c.post("/api/round", json={"orders": {"Max": "10, 13"}}, headers=h)
    assert bad.status_code == 409 and "must be a list" in bad.get_json()["error"]


def test_bad_requests_are_named_and_change_nothing(playing):
    c, h = playing
    before = c.get("/api/game").get_json()["game"]["state"]
    r = c.post("/api/act", data="shoot!", headers={**h, "Content-Type": "text/plain"})
    assert r.status_code == 400 and "JSON object" in r.get_json()["error"]
    r = c.post("/api/act", json={"act": "teleport", "vehicle": 10}, headers=h)
    assert r.status_code == 409 and "cannot teleport now (it can: move, ram" in r.get_json()["error"]
    r = c.post("/api/act", json={"act": "shoot", "warrior": "Max:10:W1"}, headers=h)
    assert r.status_code == 409 and "choose at ('target')" in r.get_json()["error"]
    r = c.get("/api/car/banana")
    assert r.status_code == 400 and "whole number" in r.get_json()["error"]
    r = c.get("/api/car/99")
    assert r.status_code == 409 and "there is no vehicle 99" in r.get_json()["error"]
    r = c.post("/api/game", json={"rules": "chess", "rosters": []}, headers=h)
    assert r.status_code == 409 and "no rule system 'chess'" in r.get_json()["error"]
    r = c.post("/api/dice/virtual", headers=h)
    assert r.status_code == 409 and "no dice are awaited" in r.get_json()["error"]
    assert c.get("/api/game").get_json()["game"]["state"] == before


def test_the_ruler_and_the_cameras_pictures(playing):
    c, _ = playing
    m = c.get("/api/measure?a=10&b=11").get_json()
    assert m["distance_mm"] == pytest.approx(46.5, abs=1.0) and m["in_front_arc"]["outcome"] == "in"
    assert m["line_of_sight"]["clear"] and m["names"] == ["Interceptor", "Rust Bucket"]
    assert c.get("/api/measure?a=10&b=10").status_code == 409
    for path in ("/api/camera.jpg", "/api/rectified.jpg"):
        r = c.get(path)
        assert r.status_code == 200 and r.mimetype == "image/jpeg" and r.data[:2] == b"\xff\xd8"


def test_a_table_file_is_checked_before_it_is_used(playing, table_game):
    c, h = playing
    r = c.post("/api/table", json={"text": "[table]\nwidth_mm = 1000\ndepth_mm = -5\n"}, headers=h)
    assert r.status_code == 400 and "the table file:3" in r.get_json()["error"] and "depth_mm" in r.get_json()["error"]
    assert table_game.session is not None                   # nothing changed
    text = open("examples/table.toml").read()
    before = c.get("/api/game").get_json()
    r = c.post("/api/table", json={"text": text}, headers=h)   # a game is being played: refused, kept
    assert r.status_code == 409 and "a game is being played" in r.get_json()["error"]
    assert c.get("/api/game").get_json()["game"] == before["game"] and table_game.live.table.car(15) is None


def test_a_table_file_is_loaded_when_no_game_is_being_played(client, table_game):
    c, h = client
    r = c.post("/api/table", json={"text": open("examples/table.toml").read()}, headers=h)
    assert r.status_code == 200 and "Pickup" in r.get_json()["table"]["cars"]
    assert table_game.live.table.car(15).name == "Pickup"


# --- who may change the game ------------------------------------------------------------

def test_changes_need_the_pages_token_and_this_sites_origin(table_game):
    c, h = make_client(table_game)
    assert c.post("/api/undo").status_code == 403
    r = c.post("/api/undo", headers={"X-CSRF-Token": "guessed"})
    assert r.status_code == 403 and "token" in r.get_json()["error"]
    r = c.post("/api/undo", headers={**h, "Origin": "http://evil.example"})
    assert r.status_code == 403 and "another site" in r.get_json()["error"]
    r = c.post("/api/undo", headers={**h, "Origin": "http://localhost"})
    assert r.status_code == 409                             # through: no game to undo
    assert c.get("/api/game").status_code == 200           # reading is open


def test_with_a_pin_visitors_watch_and_players_join(table_game):
    c, h = make_client(table_game, PIN="482913", PIN_TRIES=3)
    r = c.post("/api/game", json={"rules": "shattered_highways", "rosters": []}, headers=h)
    assert r.status_code == 403 and "PIN" in r.get_json()["error"]
    assert c.get("/api/session").get_json() == {"csrf": h["X-CSRF-Token"], "can_change": False, "pin_needed": True}
    assert c.get("/api/state").status_code == 200 and c.get("/").status_code == 200
    for _ in range(3):
        assert c.post("/api/login", json={"pin": "000000"}, headers=h).status_code == 403
    r = c.post("/api/login", json={"pin": "482913"}, headers=h)
    assert r.status_code == 429 and "wait" in r.get_json()["error"]     # too many wrong tries
    other, oh = make_client(table_game, PIN="482913")
    assert other.post("/api/login", json={"pin": "482913"}, headers=oh).get_json() == {"can_change": True}
    rosters = other.get("/api/rosters/starter").get_json()
    assert other.post("/api/game", json={"rules": "shattered_highways", "rosters": rosters},
                      headers=oh).status_code == 200


def test_the_trays_throw_answers_the_page_by_itself(demo_table, renderer):
    from hardware.emulator import TrayEmulator
    from hardware.link import TrayLink
    from companion.tray import TrayDice
    from tests.conftest import wait_until

    emu = TrayEmulator(seed=2).start()
    link = TrayLink(emu.path).start()
    try:
        assert wait_until(lambda: link.boot is not None)
        source = SyntheticSource(demo_table, paced=False)
        live = LiveTable(source, demo_table, source.camera)
        live.process(renderer.render(POSES, np.random.default_rng(3)).image, 0, 0.0)
        game = TableGame(live, tray=TrayDice(link))
        c, h = make_client(game)
        c.post("/api/game", json={"rules": "shattered_highways", "rosters": c.get("/api/rosters/starter").get_json()},
               headers=h)
        g = c.post("/api/act", json=SHOT, headers=h).get_json()
        assert g["pending"]["tray"] is True
        assert wait_until(lambda: any(cmd.startswith("EXPECT") for cmd in emu.commands))
        emu.throw(("d6",), (5,))                   # the Shoot roll: a 5 hits
        assert wait_until(lambda: (game.game_json()["pending"] or {}).get("purpose", "").startswith("machine gun"))
        emu.throw(("d6", "d6"), (1, 1))             # two dice for a one-die roll: shown, not used
        assert wait_until(lambda: len(game.tray.unmatched) == 1)
        assert game.game_json()["pending"]["purpose"].startswith("machine gun")
        emu.throw(("d6",), (3,))
        assert wait_until(lambda: game.game_json()["pending"] is None)
        event = game.game_json()["log"][0]
        assert [d["source"] for d in event["dice"]] == ["tray", "tray"] and event["outcome"]["result"] == "hit"
        # The page shows what the tray's throw led to, as it does after dice typed in.
        last = game.game_json()["last_outcome"]
        assert last and last["event"]["n"] == event["n"] and last["event"]["outcome"]["result"] == "hit"
    finally:
        link.stop()
        emu.stop()


def test_a_gate_placed_on_the_page_counts_at_once_and_is_checked(client, table_game):
    c, h = client
    r = c.post("/api/gates", json={"name": "Bus stop", "a": [500, 300], "b": [500, 150], "role": "checkpoint"},
               headers=h).get_json()
    assert r["gate"]["width_mm"] == 150.0 and 'name = "Bus stop"' in r["table_file"] and "a_mm = [500.0, 300.0]" in r["table_file"]
    snap = c.get("/api/state").get_json()
    assert {"name": "Bus stop", "a": [500.0, 300.0], "b": [500.0, 150.0], "role": "checkpoint"}.items() <= \
        next(g for g in snap["gates"] if g["name"] == "Bus stop").items()
    assert [g.name for g in table_game.live.gates()][-1] == "Bus stop"
    for bad, why in [({"name": "Bus stop", "a": [10, 10], "b": [10, 300]}, "already a gate named"),
                     ({"name": "Tiny", "a": [10, 10], "b": [10, 40]}, "too narrow"),
                     ({"name": "Off", "a": [10, 10], "b": [5000, 10]}, "off the"),
                     ({"name": "", "a": [10, 10], "b": [10, 300]}, "name the gate"),
                     ({"name": "Odd", "a": "here", "b": [10, 300]}, "post A must be a point")]:
        r = c.post("/api/gates", json=bad, headers=h)
        assert r.status_code == 409 and why in r.get_json()["error"], (bad, r.get_json())
    assert c.post("/api/gates/remove", json={"name": "Bus stop"}, headers=h).status_code == 200
    assert all(g["name"] != "Bus stop" for g in c.get("/api/state").get_json()["gates"])

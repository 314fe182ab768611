"""The server on a hostile LAN (issue 18): names it answers to, bodies it takes, PIN
guessing from many addresses, streams that cannot take every thread, strict types.

Flask's test client for the rules; a real `companion demo` under waitress for what only
the real server does (the body limit before spooling, streams holding threads)."""

from __future__ import annotations

import http.client
import json
import re
import socket
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from companion.game import TableGame
from companion.live import LiveTable
from companion.store import GameStore
from companion.web import create_app
from companion.web.security import LOCAL_HOSTS, lan_hosts
from vision.render import CarTruth
from vision.sources import SyntheticSource

POSES = (CarTruth(10, 300.0, 200.0, 0.0), CarTruth(11, 420.0, 200.0, 0.0), CarTruth(12, 900.0, 650.0, 0.0),
         CarTruth(13, 700.0, 520.0, 0.0), CarTruth(14, 1000.0, 200.0, 0.0))
SHOT = {"act": "shoot", "warrior": "Max:10:W1", "target": 11, "at": "vehicle"}


@pytest.fixture
def table_game(demo_table, renderer):
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    live.process(renderer.render(POSES, np.random.default_rng(3)).image, 0, 0.0)
    return TableGame(live, seed=7)


def make_client(game, remote_addr="127.0.0.1", **config):
    app = create_app(game, {"TESTING": True, **config})
    client = app.test_client()
    client.environ_base["REMOTE_ADDR"] = remote_addr
    token = client.get("/api/session").get_json()["csrf"]
    return app, client, {"X-CSRF-Token": token}


def waiting_for_dice(game):
    _, c, h = make_client(game)
    c.post("/api/game", json={"rules": "shattered_highways", "rosters": c.get("/api/rosters/starter").get_json()},
           headers=h)
    g = c.post("/api/act", json=SHOT, headers=h).get_json()
    assert g["pending"]["dice"]
    return c, h


# --- the names the server answers to ------------------------------------------------------

def test_only_this_machines_names_are_answered(table_game):
    _, c, h = make_client(table_game)
    for host in ("localhost", "127.0.0.1:8765", "[::1]:8765", "LOCALHOST."):
        assert c.get("/api/state", headers={"Host": host}).status_code == 200, host
    # A rebinding page's own name, pointed at 127.0.0.1: refused, reading included.
    r = c.get("/api/state", headers={"Host": "evil.example:8765"})
    assert r.status_code == 421 and "evil.example" in r.get_json()["error"]
    r = c.post("/api/undo", headers={**h, "Host": "evil.example", "Origin": "http://evil.example"})
    assert r.status_code == 421
    assert c.get("/", headers={"Host": "attacker.test"}).status_code == 421


def test_with_lan_the_machines_own_addresses_are_answered_and_others_not(table_game):
    names = lan_hosts(["table.example"])
    assert LOCAL_HOSTS <= names and "table.example" in names
    lan_address = next(n for n in names if re.fullmatch(r"\d+\.\d+\.\d+\.\d+", n))
    _, c, _ = make_client(table_game, ALLOWED_HOSTS=names)
    assert c.get("/api/state", headers={"Host": f"{lan_address}:8765"}).status_code == 200
    assert c.get("/api/state", headers={"Host": "table.example"}).status_code == 200
    assert c.get("/api/state", headers={"Host": "evil.example"}).status_code == 421


# --- strict input -------------------------------------------------------------------------

def test_malformed_json_is_a_400_naming_the_problem(table_game):
    c, h = waiting_for_dice(table_game)
    before = c.get("/api/game").get_json()
    post = lambda path, raw: c.post(path, data=raw, headers={**h, "Content-Type": "application/json"})
    cases = [
        ("nested", "[" * 100_000 + "]" * 100_000),
        ("nested", '{"faces": ' + "[" * 100_000 + "]" * 100_000 + "}"),
        ("nested", '{"faces": ' + "[" * 40 + "]" * 40 + "}"),
        ("finite", '{"faces": [Infinity]}'),
        ("finite number", '{"faces": [-Infinity]}'),
        ("finite number", '{"faces": [NaN]}'),
        ("too large", '{"faces": [1e400]}'),
        ("too large", '{"faces": [1' + "0" * 30 + "]}"),
        ("not valid JSON", '{"faces": [4'),
        ("broken character", '{"faces": [4], "x": "\\ud800"}'),
    ]
    for said, raw in cases:
        r = post("/api/dice/typed", raw)
        assert r.status_code == 400 and said.strip() in r.get_json()["error"], (said, r.get_json())
    for raw in ('{"vehicle": 10, "x_mm": Infinity, "y_mm": 1, "heading_deg": 0}',
                '{"vehicle": 10, "x_mm": 1e400, "y_mm": 1, "heading_deg": 0}',
                '{"vehicle": 10, "x_mm": 5, "y_mm": NaN, "heading_deg": 0}'):
        assert post("/api/demo/move", raw).status_code == 400
    r = c.post("/api/dice/typed", data=b'{"faces": [4]}\xff', headers={**h, "Content-Type": "application/json"})
    assert r.status_code == 400
    assert c.get("/api/game").get_json() == before


@pytest.mark.parametrize("face", [4.9, "4", True, None, [4], {"face": 4}])
def test_a_dies_face_is_a_whole_number_and_nothing_else(table_game, face):
    c, h = waiting_for_dice(table_game)
    before = c.get("/api/game").get_json()
    r = c.post("/api/dice/typed", json={"faces": [face]}, headers=h)
    assert r.status_code == 400 and "whole number" in r.get_json()["error"]
    assert c.get("/api/game").get_json() == before           # still waiting for the same roll
    r = c.post("/api/dice/typed", json={"faces": [5]}, headers=h)
    assert r.status_code == 200 and r.get_json()["version"] != before["version"]


def test_held_is_true_or_false(table_game):
    c, h = waiting_for_dice(table_game)
    r = c.post("/api/hold", json={"vehicle": 10, "held": "false"}, headers=h)
    assert r.status_code == 400 and "true or false" in r.get_json()["error"]
    assert c.post("/api/hold", json={"vehicle": 10.5, "held": True}, headers=h).status_code == 400


def test_non_ascii_token_and_pin_are_400s_not_crashes(table_game):
    _, c, h = make_client(table_game, PIN="482913")
    r = c.post("/api/login", json={"pin": "482913"}, headers={"X-CSRF-Token": "tökén"})
    assert r.status_code == 400 and "ASCII" in r.get_json()["error"]
    r = c.post("/api/login", json={"pin": "４８２９１３"}, headers=h)          # full-width digits
    assert r.status_code == 400 and "ASCII" in r.get_json()["error"]
    r = c.post("/api/login", json={"pin": 482913}, headers=h)
    assert r.status_code == 400 and "text" in r.get_json()["error"]
    assert c.post("/api/login", json={"pin": "482913"}, headers=h).get_json() == {"can_change": True}


def test_gate_names_are_bounded_and_cannot_write_other_table_file_lines(table_game):
    _, c, h = make_client(table_game)
    post = lambda **b: c.post("/api/gates", json={"a": [500, 300], "b": [500, 150], **b}, headers=h)
    for bad in ('x"\n[[car]]\nid = 99\nname = "evil', "A" * 41, "gate\\", "", "  ", "\x00gate", "[[gate]]"):
        r = post(name=bad)
        assert r.status_code == 409 and "gate" in r.get_json()["error"], bad
    r = post(name="Bus", role='checkpoint"\n[table]')
    assert r.status_code == 409 and "role" in r.get_json()["error"]
    assert c.get("/api/state").get_json()["gates"] == table_game.live.snapshot()["gates"]
    name = "Tom's Bridge (Nº 2) - ügy"
    r = post(name=name, role="checkpoint")
    assert r.status_code == 200, r.get_json()
    snippet = tomllib.loads(r.get_json()["table_file"])
    assert snippet["gate"] == [{"name": name, "role": "checkpoint", "a_mm": [500.0, 300.0], "b_mm": [500.0, 150.0]}]


# --- PIN guessing from many addresses -----------------------------------------------------

def test_pin_guessing_is_limited_across_all_addresses_and_the_host_is_told(table_game):
    app, player, ph = make_client(table_game, remote_addr="192.168.1.20", PIN="482913",
                                  PIN_TOTAL_TRIES=20, PIN_TOTAL_WINDOW_S=600)
    told = []
    app.extensions["host_alarms"].append(told.append)
    assert player.post("/api/login", json={"pin": "482913"}, headers=ph).status_code == 200
    guesses = 0
    for k in range(60):                        # one guess from each of 60 addresses
        c = app.test_client()
        c.environ_base["REMOTE_ADDR"] = f"192.168.1.{100 + k}"
        h = {"X-CSRF-Token": c.get("/api/session").get_json()["csrf"]}
        r = c.post("/api/login", json={"pin": f"{k:06d}"}, headers=h)
        if r.status_code == 403:
            guesses += 1
        else:
            assert r.status_code == 429 and "someone is guessing the table PIN" in r.get_json()["error"]
            assert int(r.headers["Retry-After"]) > 0
    assert guesses == 20
    # No PIN is tried now, the right one included, from a new address; the player already in
    # plays on, and the host is told the join code new players use instead.
    c = app.test_client()
    c.environ_base["REMOTE_ADDR"] = "192.168.1.250"
    h = {"X-CSRF-Token": c.get("/api/session").get_json()["csrf"]}
    r = c.post("/api/login", json={"pin": "482913"}, headers=h)
    assert r.status_code == 429 and r.get_json()["code_needed"] and "join code" in r.get_json()["error"]
    assert player.post("/api/undo", headers=ph).status_code == 409          # through the PIN: no game yet
    assert len(told) == 1 and "guessing the table PIN" in told[0]
    code = app.extensions["seats"].join_code
    assert f"{code[:4]}-{code[4:]}" in told[0]
    assert any("guessing the table PIN" in n["text"] for n in table_game.game_json()["notes"])


def test_per_address_lockout_still_holds(table_game):
    _, c, h = make_client(table_game, remote_addr="10.0.0.5", PIN="482913", PIN_TRIES=3)
    for _ in range(3):
        assert c.post("/api/login", json={"pin": "000000"}, headers=h).status_code == 403
    r = c.post("/api/login", json={"pin": "482913"}, headers=h)
    assert r.status_code == 429 and "Retry-After" in r.headers



def login_from(app, addr, **body):
    c = app.test_client()
    c.environ_base["REMOTE_ADDR"] = addr
    h = {"X-CSRF-Token": c.get("/api/session").get_json()["csrf"]}
    return c, h, c.post("/api/login", json=body, headers=h)


def test_the_right_player_joins_with_the_join_code_while_the_pin_is_guessed(table_game):
    app, host, hh = make_client(table_game, PIN="482913", PIN_TOTAL_TRIES=20, PIN_TOTAL_WINDOW_S=600)
    shown = host.get("/api/seats").get_json()["join_code"]            # the host's own page shows it
    assert re.fullmatch(r"[A-Z2-9]{4}-[A-Z2-9]{4}", shown)
    for k in range(25):                                               # a siege from 25 addresses
        login_from(app, f"10.1.0.{k}", pin=f"{k:06d}")
    guard = app.extensions["pin_guard"]
    assert len(guard.recent) == 20                                    # guessing bounded: 20 tried
    # Wrong join codes lock only their own address out, and never spend the PIN budget, so
    # guessing them cannot keep the right player out either.
    c, h, _ = login_from(app, "10.2.0.1", code="AAAA-AAAA")
    for _ in range(4):
        assert c.post("/api/login", json={"code": "BBBBBBBB"}, headers=h).status_code == 403
    r = c.post("/api/login", json={"code": shown}, headers=h)
    assert r.status_code == 429 and "this address" in r.get_json()["error"]
    assert len(guard.recent) == 20
    # The right player, from an address that is not guessing, gets in at once, typed any way.
    c, h, r = login_from(app, "10.3.0.7", code=shown.lower().replace("-", " "))
    assert r.status_code == 200 and r.get_json() == {"can_change": True}
    assert c.get("/api/session").get_json()["can_change"]
    # The visitor does not see the code, nor who holds which seat.
    v = app.test_client()
    v.environ_base["REMOTE_ADDR"] = "10.4.0.1"
    assert "join_code" not in v.get("/api/seats").get_json()


def test_the_first_device_is_the_host_only_with_no_page_on_the_machine(table_game):
    app = create_app(table_game, {"TESTING": True, "PIN": "482913"})
    c1, h1, r = login_from(app, "192.168.1.20", pin="482913")
    assert r.status_code == 200 and c1.get("/api/seats").get_json()["host"] is True
    c2, h2, r = login_from(app, "192.168.1.21", pin="482913")
    assert r.status_code == 200 and c2.get("/api/seats").get_json()["host"] is False
    app, _, _ = make_client(table_game, PIN="482913")                 # the machine's own page opened first
    c1, _, r = login_from(app, "192.168.1.20", pin="482913")
    assert r.status_code == 200 and c1.get("/api/seats").get_json()["host"] is False


@pytest.fixture
def chip_draw(demo_table, renderer):
    """An Alpha Destructicus game whose first round waits for a chip drawn from the bag:
    a choice the rules ask of one named player; the app with a PIN."""
    from companion.rules.base import rule_system
    layout = rule_system("alpha_destructicus").demo_layout(
        [(c.id, c.name, c.length_mm, c.width_mm) for c in demo_table.cars], (demo_table.width_mm, demo_table.depth_mm))
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    image = renderer.render([CarTruth(m, *p) for m, p in dict(layout).items()], np.random.default_rng(5)).image
    for k in range(16):
        live.process(image, k + 1, (k + 1) / 30.0)
    game = TableGame(live, seed=3)
    app, host, hh = make_client(game, PIN="482913")
    assert host.post("/api/login", json={"pin": "482913"}, headers=hh).status_code == 200
    host.post("/api/game", json={"rules": "alpha_destructicus",
                                 "rosters": host.get("/api/rosters/starter?rules=alpha_destructicus").get_json()},
              headers=hh)
    g = host.post("/api/round", json={"orders": {}}, headers=hh).get_json()
    assert g["pending"]["waiting"] == "choice"
    return app, host, hh, g["pending"]["player"]


def test_a_choice_is_answered_only_from_the_device_holding_that_seat(chip_draw):
    app, host, hh, asked = chip_draw
    assert asked == "Player 1"
    alice, ah, _ = login_from(app, "192.168.1.20", pin="482913")
    mallory, mh, _ = login_from(app, "192.168.1.66", pin="482913")
    # Alice takes her seat; anyone else with the PIN answering for her is refused, nothing changes.
    seats = alice.post("/api/seats", json={"player": "Player 1", "to": "me"}, headers=ah).get_json()
    assert seats["mine"] == ["Player 1"] and seats["host"] is False
    before = host.get("/api/game").get_json()
    r = mallory.post("/api/choice", json={"player": "Player 1", "value": "Player 2"}, headers=mh)
    assert r.status_code == 403 and "held by another device" in r.get_json()["error"]
    r = mallory.post("/api/seats", json={"player": "Player 1", "to": "me"}, headers=mh)
    assert r.status_code == 403
    assert host.post("/api/choice", json={"player": "Player 1", "value": "Player 2"}, headers=hh).status_code == 403
    assert host.get("/api/game").get_json() == before
    # Alice answers her own choice.
    g = alice.post("/api/choice", json={"player": "Player 1", "value": "Player 2"}, headers=ah).get_json()
    assert g["game"]["up"] == "Player 2"
    # The host sees who holds it, and moves the seat to itself (a phone gone flat).
    view = host.get("/api/seats").get_json()
    row = next(p for p in view["players"] if p["player"] == "Player 1")
    assert row["held"] == "another device" and "192.168.1.20" in row["device_label"]
    assert next(p for p in view["players"] if p["player"] == "Player 2")["held"] == "free"
    host.post("/api/seats", json={"player": "Player 1", "to": "me"}, headers=hh)
    assert alice.get("/api/seats").get_json()["mine"] == []
    # A seat the host frees is anyone's again.
    host.post("/api/seats", json={"player": "Player 1", "to": "free"}, headers=hh)
    assert mallory.post("/api/seats", json={"player": "Player 1", "to": "me"}, headers=mh).status_code == 200
    r = mallory.post("/api/seats", json={"player": "Nobody", "to": "me"}, headers=mh)
    assert r.status_code == 409 and "no player" in r.get_json()["error"]


def test_a_free_seat_is_taken_by_the_device_answering_its_choice_and_the_host_plays_every_side(chip_draw):
    app, host, hh, asked = chip_draw
    bob, bh, _ = login_from(app, "192.168.1.30", pin="482913")
    # A refused answer takes no seat.
    r = bob.post("/api/choice", json={"player": "Player 2", "value": "Player 1"}, headers=bh)
    assert r.status_code == 409 and bob.get("/api/seats").get_json()["mine"] == []
    # The host answers for a free seat and leaves it free (one laptop plays every side).
    g = host.post("/api/choice", json={"player": asked, "value": "Player 1"}, headers=hh).get_json()
    assert g["game"]["up"] == "Player 1"
    assert host.get("/api/seats").get_json()["mine"] == []
    assert all(p["held"] == "free" for p in host.get("/api/seats").get_json()["players"])


def test_a_mid_game_table_file_from_a_player_waits_for_the_host_and_is_recorded(tmp_path, demo_table, renderer):
    from importlib import resources

    from companion.audit import timeline
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    live.process(renderer.render(POSES, np.random.default_rng(3)).image, 0, 0.0)
    store = GameStore(tmp_path / "g.db")
    game = TableGame(live, store=store, seed=3)
    app, host, hh = make_client(game, PIN="482913")
    assert host.post("/api/login", json={"pin": "482913"}, headers=hh).status_code == 200
    host.post("/api/game", json={"rules": "shattered_highways", "rosters": host.get("/api/rosters/starter").get_json()},
              headers=hh)
    text = resources.files("vision").joinpath("data/demo_table.toml").read_text(encoding="utf-8")
    shifted = text.replace('name = "Interceptor"\n', 'name = "Interceptor"\noffset_mm = [20.0, 0.0]\n', 1)
    assert shifted != text
    player, ph, _ = login_from(app, "192.168.1.20", pin="482913")
    events = len(store.events())
    r = player.post("/api/table", json={"text": shifted}, headers=ph)
    assert r.status_code == 403 and "host" in r.get_json()["error"]
    assert len(store.events()) == events and live.table.car(10).offset_mm == (0.0, 0.0)
    r = player.post("/api/gates", json={"name": "Bus", "a": [500, 300], "b": [500, 150]}, headers=ph)
    assert r.status_code == 403 and "Bus" not in [g["name"] for g in live.snapshot()["gates"]]
    held = host.get("/api/seats").get_json()["held"]
    assert [h["what"] for h in held] == ["load a table file", "place a gate"] and "192.168.1.20" in held[0]["from"]
    # Only the host confirms.
    assert player.post("/api/held", json={"id": held[0]["id"], "take": True}, headers=ph).status_code == 409
    assert host.post("/api/held", json={"id": held[0]["id"], "take": True}, headers=hh).get_json()["taken"]
    assert host.post("/api/held", json={"id": held[1]["id"], "take": False}, headers=hh).get_json() == {"taken": False}
    assert live.table.car(10).offset_mm == (20.0, 0.0) and "Bus" not in [g["name"] for g in live.snapshot()["gates"]]
    e = store.events()[-1]
    assert e.kind == "table" and "192.168.1.20" in e.body["confirmed_by"]
    line = timeline(store)[-1]
    assert line["kind"] == "table" and "Interceptor" in line["text"] and "offset" in line["text"]
    assert host.get("/api/seats").get_json()["held"] == []
    store.close()


def test_every_response_carries_the_security_headers(table_game, tmp_path):
    _, c, h = make_client(table_game)
    for r in (c.get("/"), c.get("/api/state"), c.get("/api/nothing"), c.get("/static/table.js"),
              c.post("/api/undo", headers=h), c.get("/audit"), c.get("/api/state", headers={"Host": "evil.example"})):
        assert r.headers["X-Content-Type-Options"] == "nosniff", r
        assert r.headers["X-Frame-Options"] == "DENY"
        csp = r.headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in csp and "script-src 'self'" in csp and "unsafe-inline" not in csp.split("style-src")[0]
    # The page has no inline script (JSON data only), so it runs under the policy.
    page = c.get("/").get_data(as_text=True)
    assert not re.search(r"<script(?![^>]*(src=|application/json))", page)


def _a_shot_recorded(tmp_path, demo_table, renderer) -> TableGame:
    """A recorded game whose event 2 is a shot resolved (5 to hit, 4 damage)."""
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    live.process(renderer.render(POSES, np.random.default_rng(3)).image, 0, 0.0)
    game = TableGame(live, store=GameStore(tmp_path / "g.db"), seed=3)
    game.start("shattered_highways", {}, game.starter_rosters())
    game.act(SHOT)
    game.answer_typed([5])
    game.answer_typed([4])
    return game


def test_the_verdict_pages_own_script_carries_the_policys_nonce(tmp_path, demo_table, renderer):
    game = _a_shot_recorded(tmp_path, demo_table, renderer)
    _, c, _ = make_client(game)
    r = c.get("/audit/2")
    assert r.status_code == 200
    nonce = re.search(r"'nonce-([^']+)'", r.headers["Content-Security-Policy"]).group(1)
    assert f'<script nonce="{nonce}">' in r.get_data(as_text=True)
    assert nonce not in c.get("/audit/2").headers["Content-Security-Policy"]        # one per response
    game.store.close()


def test_a_table_file_of_nested_inline_tables_is_a_400(table_game):
    _, c, h = make_client(table_game)
    for text in ("x = " + "{a = " * 500 + "1" + "}" * 500, "x = " + "[" * 2000 + "]" * 2000):
        r = c.post("/api/table", json={"text": text}, headers=h)
        assert r.status_code == 400 and "table file" in r.get_json()["error"], r.get_json()

# --- streams ------------------------------------------------------------------------------

def test_streams_are_bounded_per_address_and_in_all(table_game):
    app, _, _ = make_client(table_game, STREAM_MAX_PER_CLIENT=2, STREAM_MAX_TOTAL=5)
    open_streams = []

    def stream_from(addr):
        c = app.test_client()
        c.environ_base["REMOTE_ADDR"] = addr
        r = c.get("/api/stream", buffered=False)
        if r.status_code == 200:
            open_streams.append(r)
        return r

    assert stream_from("10.0.0.1").status_code == 200 and stream_from("10.0.0.1").status_code == 200
    r = stream_from("10.0.0.1")
    assert r.status_code == 429 and "10.0.0.1" in r.get_json()["error"] and int(r.headers["Retry-After"]) > 0
    assert [stream_from(a).status_code for a in ("10.0.0.2", "10.0.0.2", "10.0.0.3")] == [200, 200, 200]
    r = stream_from("10.0.0.4")
    assert r.status_code == 503 and "polls /api/state" in r.get_json()["error"] and "Retry-After" in r.headers
    # Everything else is answered meanwhile.
    assert app.test_client().get("/api/state").status_code == 200
    # A page going away gives its slot back.
    open_streams.pop().close()
    assert stream_from("10.0.0.4").status_code == 200
    assert app.extensions["stream_slots"].count() == 5
    for r in open_streams:
        r.close()
    assert app.extensions["stream_slots"].count() == 0


def test_the_hosts_own_browser_is_bounded_by_the_total_only(table_game):
    app, _, _ = make_client(table_game, STREAM_MAX_PER_CLIENT=1, STREAM_MAX_TOTAL=3)
    c = app.test_client()
    got = [c.get("/api/stream", buffered=False) for _ in range(4)]
    assert [r.status_code for r in got] == [200, 200, 200, 503]
    for r in got:
        r.close()


def test_visitors_without_the_pin_cannot_take_every_stream_slot(table_game):
    app, _, _ = make_client(table_game, PIN="482913", STREAM_MAX_PER_CLIENT=4, STREAM_MAX_TOTAL=24,
                            STREAM_MAX_VISITORS=8)
    got = []

    def stream_from(addr, pin=False):
        c = app.test_client()
        c.environ_base["REMOTE_ADDR"] = addr
        if pin:
            h = {"X-CSRF-Token": c.get("/api/session").get_json()["csrf"]}
            assert c.post("/api/login", json={"pin": "482913"}, headers=h).status_code == 200
        r = c.get("/api/stream", buffered=False)
        if r.status_code == 200:
            got.append(r)
        return r

    try:
        # Six addresses, four each, without the PIN: eight are taken, then they poll.
        statuses = [stream_from(f"10.9.0.{k // 4}").status_code for k in range(24)]
        assert statuses.count(200) == 8 and set(statuses[8:]) == {503}
        r = stream_from("10.9.0.99")
        assert r.status_code == 503 and "without the table's PIN" in r.get_json()["error"]
        # The players still stream: 16 slots are theirs.
        assert [stream_from(f"10.8.0.{k}", pin=True).status_code for k in range(16)] == [200] * 16
        assert stream_from("10.8.0.50", pin=True).status_code == 503
    finally:
        for r in got:
            r.close()
    assert app.extensions["stream_slots"].count() == 0 and app.extensions["stream_slots"].watching == 0


def test_a_stream_ends_after_its_lifetime_and_gives_its_slot_back(table_game):
    app, c, _ = make_client(table_game, STREAM_MAX_S=0.3, STREAM_KEEPALIVE_S=0.05)
    body = c.get("/api/stream").get_data(as_text=True)         # returns only because the stream ended
    assert body.startswith("retry: 1000\ndata: ")
    assert app.extensions["stream_slots"].count() == 0


def test_the_page_polls_when_its_stream_is_refused():
    js = (REPO_STATIC / "table.js").read_text()
    connect = js[js.index("function connectStream"):]
    assert "EventSource.CLOSED" in connect and "pollState" in connect and "setTimeout(connectStream" in connect


# --- export.html is not replayed on every request -----------------------------------------

def test_the_export_is_made_once_per_head(tmp_path, demo_table, renderer):
    game = _a_shot_recorded(tmp_path, demo_table, renderer)
    app, c, _ = make_client(game)
    first = c.get("/api/audit/2/export.html")
    assert first.status_code == 200 and b"data:image/jpeg" in first.data
    assert c.get("/api/audit/2/export.html").data == first.data
    cache = app.extensions["audit_cache"]
    assert cache.made == 1
    game.act({"act": "pass", "warrior": "Max:10:P1"})             # a new event: a new head
    assert c.get("/api/audit/2/export.html").status_code == 200 and cache.made == 2
    assert c.get(f"/api/audit/{2 ** 40}/export.html").status_code == 404
    assert c.get("/api/audit/99/export.html").status_code == 404
    game.store.close()


# --- the real server ----------------------------------------------------------------------

REPO_STATIC = Path(__file__).resolve().parents[1] / "companion" / "web" / "static"


@pytest.fixture(scope="module")
def served():
    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--scripted", "--port", "0", "--no-game"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert match, f"no address printed: {line!r}"
        yield int(match.group(1))
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def raw_request(port: int, head: bytes, body: bytes = b"", source: str = "127.0.0.1") -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=20, source_address=(source, 0)) as s:
        s.sendall(head + body)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        return data


def test_a_huge_body_is_refused_before_it_is_sent(served):
    # Only the headers go: the 413 comes back without waiting for (or spooling) 300 MB.
    head = (b"POST /api/table HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 300000000\r\n\r\n")
    assert raw_request(served, head).startswith(b"HTTP/1.1 413")
    # Chunked, with no length said: cut off once past the limit.
    chunk = b"x" * 65536
    body = b"".join(b"%x\r\n%s\r\n" % (len(chunk), chunk) for _ in range(20))
    head = (b"POST /api/table HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n")
    assert raw_request(served, head, body).startswith(b"HTTP/1.1 413")


def test_the_real_server_refuses_other_names(served):
    reply = raw_request(served, b"GET /api/state HTTP/1.1\r\nHost: rebound.example:80\r\n\r\n")
    assert reply.startswith(b"HTTP/1.1 421")


def test_streams_cannot_take_every_thread_of_the_real_server(served):
    streams = []

    def open_stream(source):
        conn = http.client.HTTPConnection("127.0.0.1", served, timeout=20, source_address=(source, 0))
        conn.request("GET", "/api/stream")
        r = conn.getresponse()
        if r.status == 200:
            assert r.readline().startswith(b"retry:")
            streams.append(conn)
        else:
            json.loads(r.read())
            conn.close()
        return r.status

    try:
        # Four from one visitor's address, then that address is refused.
        assert [open_stream("127.0.0.2") for _ in range(5)] == [200, 200, 200, 200, 429]
        # From many addresses: taken up to the total (24), then refused.
        statuses = [open_stream(f"127.0.0.{3 + k // 4}") for k in range(40)]
        assert statuses.count(200) == 20 and set(statuses[20:]) == {503}
        # Every other request is answered while the streams are open.
        for _ in range(20):
            conn = http.client.HTTPConnection("127.0.0.1", served, timeout=20)
            conn.request("GET", "/api/state")
            r = conn.getresponse()
            assert r.status == 200 and "cars" in json.loads(r.read())
            conn.close()
    finally:
        for conn in streams:
            conn.close()


# --- the page when its stream is refused --------------------------------------------------

@pytest.mark.browser
def test_a_page_refused_a_stream_polls_and_follows_the_table(chromium, demo_table, renderer):
    import threading

    from waitress import create_server

    sync_api = pytest.importorskip("playwright.sync_api")
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    live.process(renderer.render([CarTruth(10, 300.0, 250.0, 0.0)]).image, 0, 0.0)
    app = create_app(live, {"STREAM_MAX_TOTAL": 0})          # every stream refused
    server = create_server(app, host="127.0.0.1", port=0, threads=4)
    threading.Thread(target=server.run, daemon=True).start()
    try:
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(bypass_csp=True)     # Playwright's waits need eval
            refused = []
            page.on("response", lambda r: refused.append(r.status) if r.url.endswith("/api/stream") else None)
            page.goto(f"http://127.0.0.1:{server.effective_port}/")
            page.wait_for_function("window.companion.last && window.companion.last.frame === 0", timeout=20000)
            live.process(renderer.render([CarTruth(10, 400.0, 250.0, 0.0)]).image, 1, 0.1)
            live.process(renderer.render([CarTruth(10, 400.0, 250.0, 0.0)]).image, 2, 0.2)
            # No stream: the page's polls bring the new frame.
            page.wait_for_function("window.companion.last.frame === 2", timeout=20000)
            x = page.evaluate("window.companion.last.cars[0].x_mm")
            assert x == pytest.approx(400.0, abs=1.0)
            assert refused and set(refused) == {503}
            browser.close()
    finally:
        server.close()

"""Every endpoint with random JSON bodies, random query strings and random path parts
(property-based, Hypothesis, through Flask's test client): never a 5xx, and a refused
request leaves the game exactly as it was (its JSON, its events, the roll it waits for)."""

from __future__ import annotations

import json
import string
from urllib.parse import quote

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from companion.game import TableGame
from companion.live import LiveTable
from companion.web import create_app
from vision.render import CarTruth
from vision.sources import SyntheticSource

POSES = (CarTruth(10, 300.0, 200.0, 0.0), CarTruth(11, 420.0, 200.0, 0.0), CarTruth(12, 900.0, 650.0, 0.0),
         CarTruth(13, 700.0, 520.0, 0.0), CarTruth(14, 1000.0, 200.0, 0.0))
SHOT = {"act": "shoot", "warrior": "Max:10:W1", "target": 11, "at": "vehicle"}
PIN = "482913"

#: Keys the endpoints read, so random bodies reach past "send a JSON object".
KEYS = ["rules", "options", "rosters", "text", "act", "vehicle", "warrior", "target", "at", "orders", "faces",
        "player", "value", "held", "name", "a", "b", "role", "pin", "x_mm", "y_mm", "heading_deg", "path", "to",
        "code", "id", "take", "stay", "marker"]

scalars = (st.none() | st.booleans() | st.integers(-2 ** 64, 2 ** 64)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=20)
           | st.sampled_from([10, 11, 6, "10", "Max", "Max:10:W1", "shoot", "move", "vehicle", [500, 300], [5],
                              "shattered_highways", "checkpoint", 4.9, True, "4", "Player 1", "me", "free",
                              # table files the parser must refuse with a 400, never a traceback
                              "x = " + "{a = " * 500 + "1" + "}" * 500, "x = " + "[" * 3000 + "]" * 3000,
                              "[table]\nwidth_mm = 1e400\ndepth_mm = 800"]))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), inner, max_size=4),
                           max_leaves=12)
bodies = st.dictionaries(st.sampled_from(KEYS), json_values, max_size=5) | json_values
raw_bodies = st.binary(max_size=64) | st.sampled_from([
    b'{"faces": [NaN]}', b'{"faces": [1e400]}', b"[" * 5000, b'{"name": "\\ud800"}', b'{"x_mm": -Infinity}',
    b'{"faces": [' + b"9" * 5000 + b"]}", b"\xff\xfe{}", b"null", b'""'])
query_text = st.text(alphabet=string.printable + "éü€\u0000", max_size=12)
queries = st.dictionaries(st.sampled_from(["a", "b", "rules", "zoom", "t"]), query_text, max_size=3)


@pytest.fixture(scope="module")
def frame(demo_table, renderer):
    return renderer.render(POSES, np.random.default_rng(3)).image


class Table:
    """A table with a game in a given state, and a logged-in player's client."""

    def __init__(self, demo_table, frame, state: str) -> None:
        self.demo_table, self.frame, self.state = demo_table, frame, state
        self.fresh()

    def fresh(self) -> None:
        source = SyntheticSource(self.demo_table, paced=False)
        live = LiveTable(source, self.demo_table, source.camera)
        live.process(self.frame, 0, 0.0)
        self.game = TableGame(live, seed=7)
        if self.state != "no game":
            self.game.start("shattered_highways", {}, self.game.starter_rosters())
        if self.state == "waiting for dice":
            self.game.act(SHOT)
        self.app = create_app(self.game, {"TESTING": True, "PIN": PIN, "PIN_TOTAL_TRIES": 10 ** 6,
                                          "STREAM_MAX_S": 0.05})
        self.client = self.app.test_client()
        token = self.client.get("/api/session").get_json()["csrf"]
        self.headers = {"X-CSRF-Token": token}
        assert self.client.post("/api/login", json={"pin": PIN}, headers=self.headers).status_code == 200

    def in_state(self) -> bool:
        session = self.game.session
        return {"no game": session is None,
                "playing": session is not None and session.pending is None,
                "waiting for dice": session is not None and session.pending is not None}[self.state]

    def seen(self):
        """The game as far as a request could change it."""
        g = self.game.game_json()
        g.pop("rule_systems")
        session = self.game.session
        return (json.dumps(g, sort_keys=True), len(session.log) if session else 0,
                repr(session.pending) if session else None, json.dumps(self.game.live.snapshot()["gates"]))


def endpoints():
    source = SyntheticSource(paced=False)
    app = create_app(LiveTable(source, source.table, source.camera), {"TESTING": True})
    out = []
    for rule in app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue
        for method in sorted(rule.methods - {"HEAD", "OPTIONS"}):
            out.append((method, rule.rule))
    return out


ENDPOINTS = endpoints()
PATH_PARTS = {"<marker>": st.text(max_size=12) | st.integers(-10, 100).map(str),
              "<int(max=2147483648):seq>": st.integers(0, 2 ** 70).map(str)}


def fill(rule: str, parts: dict) -> str:
    for name, value in parts.items():
        rule = rule.replace(name, quote(value, safe="") or "x")
    return rule


def check(table: Table, method: str, path: str, send: dict) -> None:
    before = table.seen()
    if method == "GET":
        r = table.client.get(path, **send)
    else:
        r = table.client.post(path, headers=table.headers, **send)
    if path == "/api/stream" and r.status_code == 200:
        r.get_data()                            # the stream ends (STREAM_MAX_S) and gives its slot back
    assert r.status_code < 500, (method, path, str(send)[:300], r.status_code, r.get_data(as_text=True)[:300])
    if r.status_code >= 400:
        if path.startswith("/api/"):            # the API says why in JSON; pages in HTML
            assert r.is_json and r.get_json()["error"], (path, r.get_data(as_text=True)[:200])
        assert table.seen() == before, f"{method} {path} {str(send)[:300]} was refused ({r.status_code}) but changed the game"
    # A request taken changed the game as it should; the next examples go on from there.


def test_every_endpoint_is_fuzzed():
    """The list is read from the app itself: a new endpoint is fuzzed without a word here."""
    assert ("POST", "/api/dice/typed") in ENDPOINTS and ("GET", "/api/measure") in ENDPOINTS
    assert ("POST", "/api/login") in ENDPOINTS and len(ENDPOINTS) >= 25
    assert {("GET", "/api/stream"), ("POST", "/api/seats"), ("POST", "/api/held")} <= set(ENDPOINTS)
    assert all("<" not in p or any(k in p for k in PATH_PARTS) for _, p in ENDPOINTS)


@pytest.fixture(scope="module")
def tables(demo_table, frame):
    """One table per state, made again for a test when a taken request left its state;
    within a test, examples go on from wherever the last taken request left the game."""
    made = {}

    def table(state):
        if state not in made or not made[state].in_state():
            made[state] = Table(demo_table, frame, state)
        return made[state]
    return table


STATES = ["waiting for dice", "playing", "no game"]
#: Reading changes nothing in any state: GETs are fuzzed on the richest one only.
CASES = [(state, m, r) for m, r in ENDPOINTS for state in (STATES if m == "POST" else STATES[:1])]


@pytest.mark.parametrize("state,method,rule", CASES, ids=[f"{m} {r} ({s})" for s, m, r in CASES])
def test_no_5xx_and_a_refused_request_changes_nothing(tables, state, method, rule):
    table = tables(state)
    wants_parts = [k for k in PATH_PARTS if k in rule]

    @settings(max_examples=25, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(parts=st.fixed_dictionaries({k: PATH_PARTS[k] for k in wants_parts}), query=queries,
           body=bodies, raw=raw_bodies, use_raw=st.booleans())
    def run(parts, query, body, raw, use_raw):
        path = fill(rule, parts)
        if method == "GET":
            check(table, method, path, {"query_string": query})
        elif use_raw:
            check(table, method, path, {"data": raw, "content_type": "application/json", "query_string": query})
        else:
            check(table, method, path, {"json": body, "query_string": query})

    run()


#: Bodies every parser must refuse with a 4xx: broken JSON, JSON too deep or too large, and
#: the texts inside it (a table file) too deep for their own parser.
BAD_BODIES = [b'{"faces": [NaN]}', b"[" * 5000, b'{"name": "\\ud800"}', b'{"faces": [' + b"9" * 5000 + b"]}",
              b"\xff\xfe{}", b'{"a": ' * 40 + b"1" + b"}" * 40,
              json.dumps({"text": "x = " + "{a = " * 500 + "1" + "}" * 500}).encode(),
              json.dumps({"text": "x = " + "[" * 3000 + "]" * 3000}).encode(),
              json.dumps({"text": "[table]\nwidth_mm = 1e400\ndepth_mm = 800\n"}).encode(),
              json.dumps({"player": ["Player 1"], "to": {"me": 1}, "id": 2 ** 80, "take": "yes"}).encode()]


@pytest.mark.parametrize("state", STATES)
def test_every_parse_error_on_every_endpoint_is_a_4xx(tables, state):
    table = tables(state)
    for method, rule in ENDPOINTS:
        path = fill(rule, {k: "10" for k in PATH_PARTS if k in rule})
        for raw in BAD_BODIES:
            check(table, method, path, {"data": raw, "content_type": "application/json"})

"""The players' tools through the JSON API (Flask's test client, frames rendered by the
synthetic camera): every system's templates, the free ruler with its doubt, and "put it
back" after an undo or a knocked car; every bad input named."""

from __future__ import annotations

import math

import numpy as np
import pytest

from companion.game import TableGame
from companion.geometry.pose import MM_PER_IN
from companion.live import LiveTable
from companion.rules.base import TEMPLATE_SHAPES, RulesError, rule_systems, template
from companion.web import create_app
from companion.web.tools_api import guidance
from vision.render import CarTruth
from vision.sources import SyntheticSource

POSES = (CarTruth(10, 300.0, 200.0, 0.0), CarTruth(11, 420.0, 200.0, 0.0), CarTruth(12, 900.0, 650.0, 0.0),
         CarTruth(13, 700.0, 520.0, 0.0), CarTruth(14, 1000.0, 200.0, 0.0))


@pytest.fixture
def table_game(demo_table, renderer):
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    live.process(renderer.render(POSES, np.random.default_rng(3)).image, 0, 0.0)
    return TableGame(live, seed=7)


@pytest.fixture
def client(table_game):
    app = create_app(table_game, {"TESTING": True})
    c = app.test_client()
    return c, {"X-CSRF-Token": c.get("/api/session").get_json()["csrf"]}


def start(client, rules="shattered_highways"):
    c, h = client
    rosters = c.get(f"/api/rosters/starter?rules={rules}").get_json()
    r = c.post("/api/game", json={"rules": rules, "rosters": rosters}, headers=h)
    assert r.status_code == 200, r.get_json()


def show(live, renderer, poses, n):
    """A few frames of the cars at `poses` (the tracker settles on a pose over frames)."""
    for k in range(4):
        live.process(renderer.render(poses, np.random.default_rng(10 * n + k)).image, 10 * n + k, 0.1 * (10 * n + k))


# --- templates: the contract ------------------------------------------------------------------

@pytest.mark.parametrize("cls", rule_systems(), ids=lambda c: c.name)
def test_every_system_names_its_templates_with_size_and_rule(cls):
    system = cls()
    found = system.templates()
    assert found, f"{cls.name} names no templates"
    names = [t["name"] for t in found]
    assert len(names) == len(set(names))
    for t in found:
        assert t["shape"] in TEMPLATE_SHAPES
        assert t["rule"].startswith(cls.rulebook) and '"' in t["rule"], t      # file, "section"
        assert t["quote"].strip() and t["use"].strip()
        sizes = t["size_mm"]
        assert sizes and all(math.isfinite(v) and v > 0 for v in sizes.values())
        for key, inches in t["size_in"].items():
            assert sizes[f"{key}_mm"] == pytest.approx(inches * MM_PER_IN, abs=0.01)
        longest = max(sizes.values())
        assert all(0 < m < longest for m in t["marks_mm"])


def test_the_books_sizes_come_through():
    by = {c.name: {t["name"]: t for t in c().templates()} for c in rule_systems()}
    sh = by["shattered_highways"]["Move template"]
    assert sh["shape"] == "rect" and sh["size_in"] == {"length": 9.0, "width": 4.0}
    assert sh["marks_mm"] == [76.2, 152.4]
    assert by["shattered_highways"]["Boarding range"]["size_mm"] == {"length_mm": 25.4}
    assert by["wasteland_rally"]["Explosion"]["size_in"] == {"radius": 4.0}
    assert by["alpha_destructicus"]["Spectacular explosion"]["size_in"] == {"radius": 6.0}
    # Stop The Truck's squares follow its square_mm option.
    st = [c for c in rule_systems() if c.name == "stop_the_truck"][0]
    sq = {t["name"]: t for t in st({"square_mm": 50.0}).templates()}["One square"]
    assert sq["size_mm"] == {"length_mm": 50.0, "width_mm": 50.0}


@pytest.mark.parametrize("kwargs, says", [
    ({"shape": "teardrop", "length_in": 8}, "shape 'teardrop' is not one of circle, rect, gauge"),
    ({"shape": "circle"}, "a circle needs radius_in"),
    ({"shape": "rect", "length_in": 9}, "a rect needs width_in"),
    ({"shape": "gauge", "length_in": -1}, "a gauge needs length_in as a positive number"),
    ({"shape": "gauge", "length_in": 6, "radius_in": 2}, "a gauge has no radius_in"),
])
def test_a_bad_template_is_refused_naming_the_problem(kwargs, says):
    with pytest.raises(RulesError, match=says):
        template("T", rule='book, "Section"', quote="words", use="a use", **kwargs)


def test_templates_endpoint_serves_the_system_in_play(client):
    c, _ = client
    before = c.get("/api/templates").get_json()
    assert before["rules"] == "shattered_highways" and before["premeasure"] is True
    assert before["table_sigma_mm"] is not None and before["table_sigma_mm"] < 2.0
    cc = c.get("/api/templates?rules=car_cult").get_json()
    assert cc["rules"] == "car_cult" and "Mine trigger" in [t["name"] for t in cc["templates"]]
    bad = c.get("/api/templates?rules=chess")
    assert bad.status_code == 400 and "no rule system 'chess'" in bad.get_json()["error"]
    start(client, "alpha_destructicus")
    now = c.get("/api/templates").get_json()
    assert now["rules"] == "alpha_destructicus" and "Kablooie!" in [t["name"] for t in now["templates"]]


# --- the ruler -----------------------------------------------------------------------------------

def test_ruler_between_two_points(client):
    c, h = client
    r = c.post("/api/ruler", json={"from": {"point": [100, 100]}, "to": {"point": [400, 500]}}, headers=h).get_json()
    assert r["distance_mm"] == pytest.approx(500.0, abs=0.01)
    assert r["distance_in"] == pytest.approx(500.0 / 25.4, abs=0.001)
    assert 0 < r["sigma_mm"] < 3.0 and r["line"] == [[100.0, 100.0], [400.0, 500.0]]
    # The same by a query string (a watcher without the PIN may measure too).
    q = c.get("/api/ruler?from=100,100&to=400,500").get_json()
    assert q["distance_mm"] == r["distance_mm"]


def test_ruler_from_a_car_to_a_point_measures_from_its_nearest_edge(client):
    c, _ = client
    # The Interceptor (75 mm long) stands at x=300 facing +x: its front edge is at 337.5.
    r = c.get("/api/ruler?from=car:10&to=400,200").get_json()
    assert r["distance_mm"] == pytest.approx(62.5, abs=1.5)
    assert r["from"] == {"car": 10, "label": "Interceptor"} and r["sigma_mm"] > 0
    assert r["line"][0][0] == pytest.approx(337.5, abs=1.5)
    # A point under the car is 0 away.
    assert c.get("/api/ruler?from=300,200&to=car:10").get_json()["distance_mm"] == 0.0


def test_ruler_between_two_cars_is_the_closest_distance(client):
    c, _ = client
    r = c.get("/api/ruler?from=car:10&to=car:11").get_json()
    m = c.get("/api/measure?a=10&b=11").get_json()
    assert r["distance_mm"] == m["distance_mm"] and r["sigma_mm"] == m["sigma_mm"]
    assert r["distance_mm"] == pytest.approx(45.0, abs=1.5)


@pytest.mark.parametrize("query, status, says", [
    ("from=car:10", 400, "to: say a car as car:MARKER or a point as x_mm,y_mm"),
    ("from=car:99&to=1,1", 400, "no car with marker 99"),
    ("from=5000,10&to=1,1", 400, "from: (5000, 10) mm is off the"),
    ("from=a,b&to=1,1", 400, "from: say a car as car:MARKER"),
])
def test_ruler_names_a_bad_request(client, query, status, says):
    c, _ = client
    r = c.get(f"/api/ruler?{query}")
    assert r.status_code == status and says in r.get_json()["error"]


def test_ruler_body_is_checked(client):
    c, h = client
    r = c.post("/api/ruler", json={"from": {"point": [1, True]}, "to": {"car": 10}}, headers=h)
    assert r.status_code == 400 and "a point is [x_mm, y_mm]" in r.get_json()["error"]
    r = c.post("/api/ruler", json={"from": {"car": "10"}, "to": {"car": 11}}, headers=h)
    assert r.status_code == 400 and "a car is its marker" in r.get_json()["error"]


def test_ruler_is_off_where_the_book_forbids_premeasuring(client):
    c, _ = client
    start(client, "car_cult")
    r = c.get("/api/ruler?from=100,100&to=200,100")
    assert r.status_code == 409 and "forbids measuring before an action is declared" in r.get_json()["error"]
    assert c.get("/api/templates").get_json()["premeasure"] is False


def test_ruler_sees_a_car_lost_from_view(client, table_game, renderer):
    c, _ = client
    table_game.live.process(renderer.render([p for p in POSES if p.id != 11]).image, 50, 9.0)
    r = c.get("/api/ruler?from=car:11&to=100,100")
    assert r.status_code == 409 and "lost sight of the Rust Bucket" in r.get_json()["error"]


# --- put it back ---------------------------------------------------------------------------------

def test_guidance_is_in_the_cars_own_frame():
    # Facing +y, the target 12 mm along +x is to the car's right; 5 degrees more is a left turn.
    g = guidance((100.0, 100.0, 90.0), (112.0, 100.0, 95.0))
    assert g["left_mm"] == pytest.approx(-12.0) and g["forward_mm"] == pytest.approx(0.0, abs=1e-9)
    assert g["text"] == "12 mm to its right, turn 5° left (anticlockwise)"
    g = guidance((100.0, 100.0, 0.0), (92.0, 103.0, -3.0))
    assert g["text"] == "8 mm back, 3 mm to its left, turn 3° right (clockwise)"
    assert guidance((1.0, 1.0, 10.0), (1.2, 1.0, 10.1))["text"] == "as it is"


def test_put_back_a_knocked_car(client, table_game, renderer):
    c, h = client
    assert c.get("/api/putback").get_json() == {"active": False, "cars": []}
    start(client)
    knocked = [p if p.id != 11 else CarTruth(11, 432.0, 195.0, 6.0) for p in POSES]
    show(table_game.live, renderer, knocked, 1)
    out = c.post("/api/putback", json={"from": "activation"}, headers=h).get_json()
    assert out["active"] and out["source"] == "activation"
    rows = {r["marker"]: r for r in out["cars"]}
    assert set(rows) == {10, 11, 12, 13, 14}
    rust = rows[11]
    assert not rust["in_place"] and not out["done"]
    assert rust["target"][0] == pytest.approx(420.0, abs=1.5) and rust["target"][1] == pytest.approx(200.0, abs=1.5)
    assert rust["distance_mm"] == pytest.approx(13.0, abs=2.0)
    assert rust["turn_deg"] == pytest.approx(-6.0, abs=1.5) and "right (clockwise)" in rust["text"]
    assert "back" in rust["text"] and all(rows[m]["in_place"] for m in (10, 12, 13, 14))
    # Put back by hand: the camera sees it there, and it is ticked off.
    show(table_game.live, renderer, POSES, 2)
    now = c.get("/api/putback").get_json()
    assert now["done"] and {r["marker"]: r["text"] for r in now["cars"]}[11] == "in place"
    assert c.post("/api/putback/clear", headers=h).get_json()["active"] is False


def test_put_back_after_an_undo_uses_where_the_undone_action_judged_the_cars(client, table_game, renderer):
    c, h = client
    r = c.post("/api/putback", json={"from": "undo"}, headers=h)
    assert r.status_code == 409 and "no game yet" in r.get_json()["error"]
    start(client)
    r = c.post("/api/putback", json={"from": "undo"}, headers=h)
    assert r.status_code == 409 and "nothing has been undone" in r.get_json()["error"]
    c.post("/api/act", json={"act": "shoot", "warrior": "Max:10:W1", "target": 11, "at": "vehicle"}, headers=h)
    while (g := c.post("/api/dice/virtual", headers=h).get_json())["pending"] is not None:
        pass
    # The Rust Bucket is shoved after the shot; the shot is undone: it goes back where it was shot at.
    show(table_game.live, renderer, [p if p.id != 11 else CarTruth(11, 470.0, 230.0, 20.0) for p in POSES], 3)
    assert c.post("/api/undo", headers=h).status_code == 200
    out = c.post("/api/putback", json={"from": "undo"}, headers=h).get_json()
    assert "the undo of event 1" in out["why"]
    rust = {r["marker"]: r for r in out["cars"]}[11]
    assert rust["target"][:2] == pytest.approx([420.0, 200.0], abs=1.5) and not rust["in_place"]
    assert rust["distance_mm"] == pytest.approx(math.hypot(50, 30), abs=2.0)


def test_put_back_from_the_record_needs_a_game_file(client):
    c, h = client
    start(client)
    r = c.post("/api/putback", json={"from": "record"}, headers=h)
    assert r.status_code == 409 and "not kept in a game file" in r.get_json()["error"]
    r = c.post("/api/putback", json={"from": "yesterday"}, headers=h)
    assert r.status_code == 400 and "put back from 'undo', 'activation' or 'record'" in r.get_json()["error"]


def test_put_back_from_the_record_after_a_resume(demo_table, renderer, tmp_path):
    """A game kept in a file, resumed on a table whose cars were cleared away and put down
    roughly: the record says where each stood, and the list says how far each is off."""
    from companion.store import GameStore
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    show(live, renderer, POSES, 0)
    table_game = TableGame(live, seed=7, store=GameStore(tmp_path / "game.db"))
    app = create_app(table_game, {"TESTING": True})
    c = app.test_client()
    h = {"X-CSRF-Token": c.get("/api/session").get_json()["csrf"]}
    start((c, h))
    c.post("/api/act", json={"act": "shoot", "warrior": "Max:10:W1", "target": 11, "at": "vehicle"}, headers=h)
    while c.post("/api/dice/virtual", headers=h).get_json()["pending"] is not None:
        pass
    # The evening ends; next time the cars go down again roughly where they were.
    roughly = [CarTruth(p.id, p.x_mm + 8.0, p.y_mm - 5.0, p.heading_deg + 4.0) for p in POSES]
    show(live, renderer, roughly, 1)
    assert c.post("/api/putback", json={"from": "record"}, headers=h).status_code == 200
    out = c.get("/api/putback").get_json()
    assert out["source"] == "record" and "the game file" in out["why"]
    rows = {r["marker"]: r for r in out["cars"]}
    assert set(rows) == {10, 11, 12, 13, 14}
    for p in POSES:
        r = rows[p.id]
        assert r["target"][:2] == pytest.approx([p.x_mm, p.y_mm], abs=1.5) and not r["in_place"]
        assert r["distance_mm"] == pytest.approx(math.hypot(8.0, 5.0), abs=1.5)
        assert r["turn_deg"] == pytest.approx(-4.0, abs=1.0) and "turn 4° right (clockwise)" in r["text"]
    show(live, renderer, POSES, 2)
    assert c.get("/api/putback").get_json()["done"]

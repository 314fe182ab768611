"""The page and /api/state through Flask's test client."""

from __future__ import annotations

import json
import threading
import time

import pytest

from companion.live import LiveTable
from companion.web import create_app
from vision.render import CarTruth
from vision.sources import SyntheticSource


@pytest.fixture
def live(demo_table):
    source = SyntheticSource(demo_table, paced=False)
    return LiveTable(source, demo_table, source.camera)


@pytest.fixture
def client(live):
    app = create_app(live, {"TESTING": True, "STREAM_MAX_S": 0.5, "STREAM_KEEPALIVE_S": 0.1})
    return app.test_client()


def test_state_before_any_frame(client):
    state = client.get("/api/state").get_json()
    assert state["cars"] == [] and state["missing"] == [10, 11, 12, 13, 14]
    assert state["source"]["status"] == "starting"


def test_state_after_a_frame_has_every_car_at_its_pose(client, live, renderer):
    truth = renderer.render([CarTruth(10, 300.0, 250.0, 30.0), CarTruth(13, 800.0, 500.0, -90.0)])
    live.process(truth.image, 0, 0.0)
    state = client.get("/api/state").get_json()
    cars = {c["id"]: c for c in state["cars"]}
    assert set(cars) == {10, 13} and state["missing"] == [11, 12, 14]
    assert cars[10]["name"] == "Interceptor"
    assert cars[10]["x_mm"] == pytest.approx(300.0, abs=1.0) and cars[10]["y_mm"] == pytest.approx(250.0, abs=1.0)
    assert cars[13]["heading_deg"] == pytest.approx(-90.0, abs=1.5)
    assert {"sigma_mm", "sigma_deg", "length_mm", "width_mm", "stale", "age_s"} <= set(cars[10])
    assert state["camera"]["calibrated"] is True and state["anchors"] == [0, 1, 2, 3, 4, 5]


def test_a_car_not_seen_keeps_its_pose_marked_stale(client, live, renderer):
    live.process(renderer.render([CarTruth(10, 300.0, 250.0, 30.0)]).image, 0, 0.0)
    live.process(renderer.render([]).image, 1, 2.5)          # lifted off the table
    car = client.get("/api/state").get_json()["cars"][0]
    assert car["stale"] is True and car["age_s"] == pytest.approx(2.5)
    assert car["x_mm"] == pytest.approx(300.0, abs=1.0)


def test_page_draws_each_car_with_its_id_and_name(client, live, renderer):
    live.process(renderer.render([CarTruth(11, 500.0, 400.0, 0.0), CarTruth(12, 900.0, 300.0, 90.0)]).image, 0, 0.0)
    html = client.get("/").get_data(as_text=True)
    assert 'data-car-id="11"' in html and 'data-car-id="12"' in html
    assert "Rust Bucket" in html and "War Rig" in html
    assert 'data-anchor-id="5"' in html
    assert "api/stream" in client.get("/static/table.js").get_data(as_text=True)


def test_stream_pushes_each_new_snapshot(live, renderer):
    # A stream long enough for two frames to be tracked on a busy machine (the shared
    # fixture's half second was not: the test failed under load, the car still at 300).
    client = create_app(live, {"TESTING": True, "STREAM_MAX_S": 6.0, "STREAM_KEEPALIVE_S": 0.1}).test_client()
    live.process(renderer.render([CarTruth(10, 300.0, 250.0, 0.0)]).image, 0, 0.0)
    moved = renderer.render([CarTruth(10, 400.0, 250.0, 0.0)]).image

    def move_while_watching():
        time.sleep(0.15)
        # Lifted and put down 100 mm on: the first frame looks only where it
        # was (and marks it stale), the next scans the whole table and finds it.
        live.process(moved, 1, 0.1)
        live.process(moved, 2, 0.2)

    mover = threading.Thread(target=move_while_watching)
    mover.start()
    response = client.get("/api/stream")
    mover.join()
    assert response.mimetype == "text/event-stream"
    body = response.get_data(as_text=True)
    events = [json.loads(line[len("data: "):]) for line in body.splitlines() if line.startswith("data: ")]
    xs = [e["cars"][0]["x_mm"] for e in events]
    assert xs[0] == pytest.approx(300.0, abs=1.0) and xs[-1] == pytest.approx(400.0, abs=1.0)

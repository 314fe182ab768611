"""The playable demo: cars that stand until a player moves them, driven there in rendered
frames at a hand's pace and read back by the tracker; the page's move request; and
`companion demo --rules NAME` starting each system's game with the cars where its
demo layout puts them."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from http.cookiejar import CookieJar

import pytest

from companion.game import TableGame
from companion.live import LiveTable
from companion.rules.base import rule_system
from companion.web import create_app
from vision.playable import MAX_STEP_MM, MAX_TURN_DEG, PlayableCars
from vision.sources import SyntheticSource

SYSTEMS = ("shattered_highways", "car_cult", "stop_the_truck", "wasteland_rally", "alpha_destructicus")
START = {10: (300.0, 300.0, 0.0), 11: (600.0, 300.0, 0.0), 12: (900.0, 300.0, 90.0),
         13: (300.0, 550.0, 180.0), 14: (800.0, 600.0, -90.0)}


def turn_deg(a: float, b: float) -> float:
    d = (b - a) % 360.0
    return d - 360.0 if d > 180.0 else d


def drive(cars: PlayableCars, frames: int, t0: int = 0) -> list[dict[int, tuple[float, float, float]]]:
    """The cars' poses in `frames` consecutive frames (one a fifteenth of a second apart)."""
    return [{c.id: (c.x_mm, c.y_mm, c.heading_deg) for c in cars.poses_at((t0 + k) / 15)} for k in range(frames)]


def steps_within_a_hand(poses: list[tuple[float, float, float]]) -> None:
    for a, b in zip(poses, poses[1:]):
        assert math.hypot(b[0] - a[0], b[1] - a[1]) <= MAX_STEP_MM + 1e-9, (a, b)
        assert abs(turn_deg(a[2], b[2])) <= MAX_TURN_DEG + 1e-9, (a, b)


# --- the cars the synthetic camera renders ------------------------------------------------

def test_a_moved_car_drives_to_its_pose_in_steps_a_hand_makes_and_the_others_stand():
    cars = PlayableCars(START)
    drive(cars, 3)
    cars.move(10, 420.0, 350.0, 100.0)
    frames = drive(cars, 60, t0=3)
    path = [START[10], *(f[10] for f in frames)]
    steps_within_a_hand(path)
    # 130 mm is 26 steps of 5 mm, 100 degrees 34 turns of 3: the turn sets the pace, and the
    # car goes straight and turns evenly, so it arrives in the 34th frame, not before.
    arrived = next(k for k, p in enumerate(path) if p == (420.0, 350.0, 100.0))
    assert arrived == 34
    assert path[17][0] == pytest.approx(300.0 + 120.0 * 17 / (100 / 3))
    assert all(p == (420.0, 350.0, 100.0) for p in path[arrived:])
    assert all(f[m] == START[m] for f in frames for m in (11, 12, 13, 14))
    assert not cars.moving()


def test_poses_sent_along_a_drag_are_driven_in_turn_not_cut_across():
    cars = PlayableCars(START)
    cars.poses_at(0.0)
    # Up the table, then right: the corner is driven through.
    for x, y in ((300.0, 340.0), (300.0, 380.0), (340.0, 380.0), (380.0, 380.0)):
        cars.move(10, x, y, 0.0)
    path = [START[10], *(f[10] for f in drive(cars, 40, t0=1))]
    steps_within_a_hand(path)
    assert any(p == pytest.approx((300.0, 380.0, 0.0)) for p in path) and path[-1] == (380.0, 380.0, 0.0)
    assert path.index((380.0, 380.0, 0.0)) == 32              # 160 mm at 5 mm a frame
    # Every pose on the way lies on the two legs, none on the chord between them.
    assert all(abs(x - 300.0) < 1e-9 or abs(y - 380.0) < 1e-9 for x, y, _ in path)


def test_a_turn_goes_the_short_way_round_and_the_same_frame_asked_twice_does_not_move_it():
    cars = PlayableCars({10: (300.0, 300.0, 170.0)})
    cars.poses_at(0.0)
    cars.move(10, 300.0, 300.0, -170.0)              # 20 degrees through 180, not 340 back
    first = cars.poses_at(1 / 15)[0]
    assert cars.poses_at(1 / 15)[0] == first          # a frame rendered again is the same frame
    path = [f[10] for f in drive(cars, 10, t0=2)]
    steps_within_a_hand([(first.x_mm, first.y_mm, first.heading_deg), *path])
    assert first.heading_deg == pytest.approx(173.0)
    assert path[-1] == (300.0, 300.0, -170.0)


def test_a_car_put_down_at_once_forgets_where_it_was_going_and_an_unknown_car_is_named():
    cars = PlayableCars(START)
    cars.move(10, 700.0, 700.0, 0.0)
    cars.place(10, 500.0, 200.0, 45.0)
    assert not cars.moving(10) and cars.pose(10) == (500.0, 200.0, 45.0)
    with pytest.raises(KeyError, match="no car with marker 42"):
        cars.move(42, 1.0, 1.0, 0.0)


# --- through the real vision path: rendered, detected, tracked ----------------------------

def test_the_tracker_follows_a_car_moved_on_the_demo_table_and_reads_it_where_it_was_sent(demo_table):
    cars = PlayableCars(START)
    source = SyntheticSource(demo_table, paced=False, script=cars)
    live = LiveTable(source, demo_table, source.camera)
    game = TableGame(live)
    game.demo_mover = cars.move

    def frame():
        f = source.read()
        tracked = live.process(f.image, f.index, f.time_s)
        return f.truth.cars[10], {c.id: c for c in tracked.cars}[10]

    for _ in range(3):
        frame()
    game.move_demo_car(10, 380.0, 260.0, 20.0)           # 89 mm and 20 degrees: 18 frames
    truths, seen = [], []
    while cars.moving(10):
        truth, car = frame()
        truths.append((truth.x_mm, truth.y_mm, truth.heading_deg))
        seen.append(car)
    assert 17 <= len(truths) <= 19
    steps_within_a_hand(truths)
    # Followed at once, frame by frame (a move is never averaged away): the path it drove.
    for (x, y, h), car in zip(truths, seen):
        assert math.hypot(car.x_mm - x, car.y_mm - y) < 1.0 and abs(turn_deg(car.heading_deg, h)) < 1.0
    for _ in range(4):                                  # standing: averaged again
        _, car = frame()
    assert math.hypot(car.x_mm - 380.0, car.y_mm - 260.0) < 1.0
    assert abs(turn_deg(car.heading_deg, 20.0)) < 0.5
    assert not car.stale


# --- the page's request ---------------------------------------------------------------------

def _client(demo_table, playable: bool):
    cars = PlayableCars(START)
    source = SyntheticSource(demo_table, paced=False, script=cars if playable else None)
    live = LiveTable(source, demo_table, source.camera)
    game = TableGame(live)
    if playable:
        game.demo_mover = cars.move
    client = create_app(game, {"TESTING": True}).test_client()
    token = client.get("/api/session").get_json()["csrf"]
    return client, {"X-CSRF-Token": token}, cars


def test_moving_a_car_from_the_page_is_refused_on_a_real_table(demo_table):
    client, headers, _ = _client(demo_table, playable=False)
    r = client.post("/api/demo/move", json={"vehicle": 10, "x_mm": 400, "y_mm": 300, "heading_deg": 0},
                    headers=headers)
    assert r.status_code == 409
    assert "moved by hand on a real table" in r.get_json()["error"]
    assert 'data-demo="false"' in client.get("/").get_data(as_text=True)


@pytest.mark.parametrize("body, status, says", [
    ({"vehicle": 10, "x_mm": "far", "y_mm": 300, "heading_deg": 0}, 400, "x_mm must be a number"),
    ({"vehicle": 10, "x_mm": 400, "y_mm": 300}, 400, "heading_deg must be a number"),
    ({"vehicle": True, "x_mm": 400, "y_mm": 300, "heading_deg": 0}, 400, "vehicle must be a whole number"),
    ({"vehicle": 10, "x_mm": 400, "y_mm": False, "heading_deg": 0}, 400, "y_mm must be a number"),
    ({"vehicle": 42, "x_mm": 400, "y_mm": 300, "heading_deg": 0}, 409, "no car with marker 42"),
    ({"vehicle": 10, "x_mm": 4000, "y_mm": 300, "heading_deg": 0}, 409, "off the 1219.2 x 812.8 mm table"),
])
def test_a_bad_demo_move_is_refused_with_what_is_wrong(demo_table, body, status, says):
    client, headers, cars = _client(demo_table, playable=True)
    r = client.post("/api/demo/move", json=body, headers=headers)
    assert r.status_code == status and says in r.get_json()["error"], r.get_json()
    assert not cars.moving()


def test_a_demo_move_from_the_page_sends_the_car_and_the_page_knows_it_is_a_demo(demo_table):
    client, headers, cars = _client(demo_table, playable=True)
    assert 'data-demo="true"' in client.get("/").get_data(as_text=True)
    r = client.post("/api/demo/move", json={"vehicle": 11, "x_mm": 650.5, "y_mm": 320, "heading_deg": -15},
                    headers=headers)
    assert r.status_code == 200 and r.get_json() == {"moved": 11, "to": [650.5, 320.0, -15.0]}
    assert cars.moving(11) and not cars.moving(10)
    assert client.post("/api/demo/move", json={"vehicle": 11, "x_mm": 650.5, "y_mm": 320, "heading_deg": 0}
                       ).status_code == 403               # no page token: not from the page


# --- companion demo --rules NAME ------------------------------------------------------------

def test_a_wrong_rule_system_name_is_said_with_the_names_and_nothing_starts():
    r = subprocess.run([sys.executable, "-m", "companion", "demo", "--port", "0", "--rules", "deathrace"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "no rule system 'deathrace'" in r.stderr and all(name in r.stderr for name in SYSTEMS), r.stderr
    assert "Traceback" not in r.stderr and r.stdout == ""


class Player:
    """A browser's worth of HTTP: the page token in a cookie, JSON in and out."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        self.token = self.get("api/session")["csrf"]

    def get(self, path):
        with self.opener.open(self.base + path, timeout=10) as r:
            return json.load(r)

    def post(self, path, body):
        req = urllib.request.Request(self.base + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "X-CSRF-Token": self.token})
        try:
            with self.opener.open(req, timeout=10) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as exc:
            return exc.code, json.load(exc)


def _start(*args: str):
    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--port", "0", "--fps", "8", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    said = []
    for _ in range(5):                  # a game that did not start is said before the address
        said.append(proc.stdout.readline())
        if match := re.search(r"(http://127\.0\.0\.1:\d+/)", said[-1]):
            return proc, match.group(1), said[:-1]
    proc.kill()
    pytest.fail(f"the demo did not say its address: {said!r} {proc.communicate(timeout=10)[1]}")


def _stop(proc) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.mark.parametrize("rules", SYSTEMS)
def test_demo_rules_starts_that_game_with_its_cars_where_its_demo_layout_puts_them(demo_table, rules):
    layout = rule_system(rules).demo_layout([(c.id, c.name, c.length_mm, c.width_mm) for c in demo_table.cars],
                                            (demo_table.width_mm, demo_table.depth_mm))
    proc, base, said = _start("--rules", rules)
    try:
        assert not said, said                    # nothing to say before the address: the game started
        p = Player(base)
        g = p.get("api/game")                    # the game starts before the address is printed
        assert g["game"] is not None and g["game"]["rules"]["name"] == rules, g["notes"]
        assert g["game"]["setup"]["rosters"] == p.get(f"api/rosters/starter?rules={rules}")
        assert not [n for n in g["notes"] if n["kind"] == "warn"], g["notes"]
        # Where the camera sees them, and where the game has them: where the layout put them.
        seen = {c["id"]: c for c in p.get("api/state")["cars"]}
        assert set(seen) == set(layout)
        for marker, (x, y, h) in layout.items():
            c = seen[marker]
            assert math.hypot(c["x_mm"] - x, c["y_mm"] - y) < 1.0, (marker, c, layout[marker])
            assert abs(turn_deg(c["heading_deg"], h)) < 1.0, (marker, c, layout[marker])
        placed = {int(m): v for m, v in g["game"]["state"]["vehicles"].items() if v.get("pose")}
        assert placed, g["game"]["state"]["vehicles"]
        for marker, v in placed.items():
            x, y, h = layout[marker]
            assert math.hypot(v["pose"][0] - x, v["pose"][1] - y) < 1.0, v
        # They stand: a second later, the camera has them where they were.
        time.sleep(1.0)
        again = {c["id"]: c for c in p.get("api/state")["cars"]}
        assert all(math.hypot(again[m]["x_mm"] - seen[m]["x_mm"], again[m]["y_mm"] - seen[m]["y_mm"]) < 0.5
                   for m in layout)
    finally:
        _stop(proc)


def test_the_scripted_demo_has_no_cars_to_move_from_the_page():
    proc, base, _ = _start("--scripted", "--no-game")
    try:
        p = Player(base)
        status, answer = p.post("api/demo/move", {"vehicle": 10, "x_mm": 400, "y_mm": 300, "heading_deg": 0})
        assert status == 409 and "moved by hand" in answer["error"]
        with p.opener.open(base, timeout=10) as r:
            assert 'data-demo="false"' in r.read().decode()
    finally:
        _stop(proc)


def _car(p: Player, marker: int) -> dict:
    return next(c for c in p.get("api/state")["cars"] if c["id"] == marker)


def test_a_demo_game_resumed_from_its_file_has_its_cars_where_the_game_left_them(tmp_path, demo_table):
    import signal
    game_file = str(tmp_path / "demo.db")
    proc, base, said = _start("--game", game_file)
    try:
        p = Player(base)
        assert p.post("api/demo/move", {"vehicle": 10, "x_mm": 450.0, "y_mm": 160.0, "heading_deg": 10.0})[0] == 200
        deadline = time.monotonic() + 30
        while math.hypot(_car(p, 10)["x_mm"] - 450.0, _car(p, 10)["y_mm"] - 160.0) > 1.0:
            assert time.monotonic() < deadline, _car(p, 10)
            time.sleep(0.2)
        status, g = p.post("api/act", {"act": "pass", "warrior": "Max:10:P1"})      # an event: the game's poses
        assert status == 200, g
        recorded = p.get("api/game")["game"]["state"]["vehicles"]["10"]["pose"]
        assert math.hypot(recorded[0] - 450.0, recorded[1] - 160.0) < 1.0
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        proc, base, said = _start("--game", game_file)
        p = Player(base)
        # Where the game left it (the camera's frames then follow it, to within their jitter).
        resumed = p.get("api/game")["game"]["state"]["vehicles"]["10"]["pose"]
        assert math.hypot(resumed[0] - recorded[0], resumed[1] - recorded[1]) < 0.5, (resumed, recorded)
        assert abs(turn_deg(resumed[2], recorded[2])) < 0.5
        # The synthetic camera renders the car where the game had it, not where the game began.
        deadline = time.monotonic() + 20
        while not any(c["id"] == 10 for c in p.get("api/state")["cars"]):   # a resumed game waits for no frame
            assert time.monotonic() < deadline, "the camera never saw the Interceptor"
            time.sleep(0.1)
        car = _car(p, 10)
        assert math.hypot(car["x_mm"] - recorded[0], car["y_mm"] - recorded[1]) < 1.0, (car, recorded)
        assert abs(turn_deg(car["heading_deg"], recorded[2])) < 1.0
    finally:
        _stop(proc)

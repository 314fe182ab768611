"""The evidence trail: a game file's hash chain catches every kind of tampering, a game
killed mid-play resumes with every committed event, a stored verdict measured again
from its frame's marker corners equals the original, and the audit page and commands."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import urllib.request
from http.cookiejar import CookieJar

import numpy as np
import pytest

from companion.game import TableGame
from companion.live import LiveTable
from companion.record import remeasure, resume
from companion.scenario import load_scenario, run_scenario, state_json
from companion.store import GameStore, verify
from companion.web import create_app
from vision.render import CarTruth
from vision.sources import SyntheticSource

from tests.conftest import EXAMPLES
from tests.test_game_page import POSES, SHOT


@pytest.fixture(scope="module")
def played(tmp_path_factory, demo_table, renderer):
    """A game on the rendered table, recorded: a shot, a round, a move, an undo."""
    path = tmp_path_factory.mktemp("game") / "game.db"
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    live.process(renderer.render(POSES, np.random.default_rng(3)).image, 0, 0.0)
    game = TableGame(live, store=GameStore(path), seed=3)
    game.start("shattered_highways", {}, game.starter_rosters())
    game.act(SHOT)
    game.answer_typed([5])
    game.answer_typed([4])
    game.start_round({"Max": [10, 13, 14], "Furiosa": [12, 11]})
    game.answer_typed([6])
    game.answer_typed([2])
    moved = [CarTruth(10, 250.0, 200.0, 0.0), *POSES[1:]]
    for k in range(1, 17):                              # the Interceptor put down 50 mm back
        live.process(renderer.render(moved, np.random.default_rng(10 + k)).image, k, k / 15)
    game.act({"act": "move", "vehicle": 10})
    game.answer_typed([5])
    game.act({"act": "pass", "warrior": "Max:10:P1"})
    game.undo()
    game.store.close()
    return path, game


def kinds(path):
    return [(e.seq, e.kind) for e in GameStore(path, create=False).events()]


def test_every_event_is_recorded_in_order_and_the_chain_holds(played):
    path, game = played
    assert kinds(path) == [(1, "setup"), (2, "resolution"), (3, "resolution"), (4, "hold"), (5, "resolution"),
                           (6, "resolution"), (7, "undo")]
    ok, message, n = verify(path)
    assert ok and n == 7, message
    store = GameStore(path, create=False)
    shot = store.event(2).body
    assert shot["detail"] == SHOT and [d["source"] for d in shot["dice"]] == ["typed", "typed"]
    assert shot["outcome"]["range"]["threshold_mm"] == 152.4 and "margin_mm" in shot["outcome"]["range"]
    assert shot["options"]["arc_edge"] == "centre_line" and shot["calibration"] and shot["companion"]
    assert set(shot["poses"]) == {"10", "11", "12", "13", "14"} and len(shot["poses"]["10"]) == 5   # with sigmas
    ev = store.evidence(shot["evidence"][0]["ref"]["id"])
    assert ev["jpeg"][:2] == b"\xff\xd8" and {d["id"] for d in ev["detections"]} >= {0, 1, 2, 3, 10, 11}
    assert store.event(7).body["undid"] == 4          # the pass: the session's fourth resolution


def test_a_stored_verdict_measured_again_from_its_evidence_equals_the_original(played):
    path, _ = played
    store = GameStore(path, create=False)
    for seq in (2, 5):                                   # the shot (range, arc) and the move (judged)
        again = remeasure(store, seq)
        assert again["same"], again
        assert again["verdicts"] and all(v["again"] == v["stored"] for v in again["verdicts"])
        assert all(p["difference_mm"] == 0.0 for p in again["poses"])
    move = remeasure(store, 5)
    interceptor = next(p for p in move["poses"] if p["vehicle"] == 10)
    assert "held where its turn began" in interceptor["from"]        # judged from where it started
    assert move["verdicts"][0]["stored"]["legal"] is True
    # After the move, in the same activation, the Interceptor is held where the move put it:
    # the camera's reading once it was put there (no frame keeps it), not located again from
    # any frame (where its turn began is 50 mm away; the move's frame a hand's width off).
    after = remeasure(store, 6)
    interceptor = next(p for p in after["poses"] if p["vehicle"] == 10)
    assert interceptor["from"].startswith("where it was put at event 5 (")
    assert interceptor["again"] is None and after["same"], after


def test_a_game_resumes_exactly_where_its_last_event_left_it(played):
    path, game = played
    replayed = resume(GameStore(path, create=False))
    assert state_json(replayed.session.state) == state_json(game.session.state)
    assert [e.kind for e in replayed.session.log] == [e.kind for e in game.session.log]
    assert replayed.session.log[3].undone


def _tampered(path, tmp_path, name, *sql):
    copy = tmp_path / f"{name}.db"
    shutil.copy(path, copy)
    db = sqlite3.connect(copy)
    db.executescript("DROP TRIGGER events_append_only_u; DROP TRIGGER events_append_only_d; "
                     "DROP TRIGGER evidence_append_only_u; DROP TRIGGER evidence_append_only_d;")
    for statement in sql:
        db.execute(statement)
    db.commit()
    db.close()
    return copy


@pytest.mark.parametrize("name, sql, first", [
    ("edit", ["UPDATE events SET body = replace(body, '\"faces\":[5]', '\"faces\":[6]') WHERE seq = 2"],
     "event 2 (resolution): changed"),
    ("edit-time", ["UPDATE events SET t = t + 60 WHERE seq = 5"], "event 5 (resolution): changed"),
    ("delete", ["DELETE FROM events WHERE seq = 3"], "event 3: missing"),
    ("reorder", ["UPDATE events SET seq = -1 WHERE seq = 5", "UPDATE events SET seq = 5 WHERE seq = 6",
                 "UPDATE events SET seq = 6 WHERE seq = -1"], "event 5 (resolution): does not follow"),
    ("truncate", ["DELETE FROM events WHERE seq >= 6"], "event 6: missing"),
    ("evidence", ["UPDATE evidence SET jpeg = substr(jpeg, 1, length(jpeg) - 10) WHERE id = 1"],
     "event 2 (resolution): its evidence 1 was changed"),
])
def test_every_kind_of_tampering_is_caught_naming_the_first_event(played, tmp_path, name, sql, first):
    path, _ = played
    bad = _tampered(path, tmp_path, name, *sql)
    ok, message, _ = verify(bad)
    assert not ok and first in message, message
    result = subprocess.run([sys.executable, "-m", "companion", "audit", "verify", str(bad)],
                            capture_output=True, text=True)
    assert result.returncode == 1 and first in result.stderr


def test_a_file_cut_short_on_disk_and_a_kept_head_are_caught(played, tmp_path):
    path, _ = played
    ok, message, _ = verify(path)
    head = GameStore(path, create=False).head()
    assert verify(path, head)[0]
    cut = tmp_path / "cut.db"
    data = path.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    assert not verify(cut)[0]
    # Cut off the end, and the file's own head rewritten to match: only a head kept elsewhere shows it.
    sneaky = _tampered(path, tmp_path, "sneaky", "DELETE FROM events WHERE seq = 7",
                       "UPDATE meta SET value = (SELECT '6:' || hash FROM events WHERE seq = 6) WHERE key = 'head'")
    assert verify(sneaky)[0]
    ok, message, _ = verify(sneaky, head)
    assert not ok and "the head you kept" in message


def test_the_audit_commands(played, tmp_path):
    path, _ = played
    run = lambda *a: subprocess.run([sys.executable, "-m", "companion", "audit", *a], capture_output=True, text=True)
    ok = run("verify", str(path))
    assert ok.returncode == 0 and "7 events, chain intact" in ok.stdout
    lines = [json.loads(x) for x in run("show", str(path)).stdout.splitlines()]
    assert [x["kind"] for x in lines][:3] == ["setup", "resolution", "resolution"]
    again = run("remeasure", str(path), "2")
    assert again.returncode == 0 and json.loads(again.stdout)["same"] is True
    assert "is a hold, not a resolution" in run("remeasure", str(path), "4").stderr
    out = tmp_path / "verdict.html"
    assert run("export", str(path), "2", "--out", str(out)).returncode == 0
    page = out.read_text()
    assert page.count("data:image/jpeg;base64,") == 2 and "range" in page and "same" in page
    assert "no such game file" in run("verify", str(tmp_path / "nothing.db")).stderr


def test_the_audit_page(played, demo_table):
    path, _ = played
    source = SyntheticSource(demo_table, paced=False)
    game = TableGame(LiveTable(source, demo_table, source.camera), store=GameStore(path, create=False))
    client = create_app(game, {"TESTING": True}).test_client()
    page = client.get("/audit").get_data(as_text=True)
    assert 'data-seq="2"' in page and "shoot" in page and "range: in" in page
    page = client.get("/audit/2").get_data(as_text=True)
    assert "Measure again" in page and 'data-what="range"' in page
    assert client.get("/api/audit/2/frame.jpg").data[:2] == b"\xff\xd8"
    assert client.get("/api/audit/2/remeasure").get_json()["same"] is True
    r = client.get("/api/audit/2/export.html")
    assert "attachment" in r.headers["Content-Disposition"] and b"data:image/jpeg" in r.data
    assert client.get("/api/audit/4/remeasure").status_code == 404


def test_the_evidence_says_why_a_car_is_drawn_where_the_frame_shows_none(played, demo_table):
    """The move was judged from where the Interceptor's turn began (its hold), not from the
    move's frame, which shows it where it ended: the outline there is dashed and the page,
    the picture's label and the export say why."""
    from companion.audit import drawing
    path, _ = played
    store = GameStore(path, create=False)
    shapes, info = drawing(store, 5)
    held = next(sh for sh in shapes if sh["label"].startswith("Interceptor"))
    assert held["dashed"] and held["label"] == "Interceptor, where its turn began"
    assert not any(sh.get("dashed") for sh in shapes if sh is not held)
    assert [sh for sh in drawing(store, 2)[0] if sh.get("dashed")] == []       # the shot: every car in its frame
    source = SyntheticSource(demo_table, paced=False)
    game = TableGame(LiveTable(source, demo_table, source.camera), store=store)
    client = create_app(game, {"TESTING": True}).test_client()
    page = client.get("/audit/5").get_data(as_text=True)
    assert "The Interceptor is drawn dashed where its turn began (held at event 4)" in page
    assert "The Interceptor is drawn dashed" in client.get("/api/audit/5/export.html").get_data(as_text=True)
    assert "drawn dashed" not in client.get("/audit/2").get_data(as_text=True)
    # The pass after the move: the Interceptor dashed where the move put it, said so.
    shapes, _ = drawing(store, 6)
    assert next(sh for sh in shapes if sh["label"].startswith("Interceptor"))["label"] == "Interceptor, where event 5 put it"
    assert "The Interceptor is drawn dashed where it was put at event 5 (" in client.get("/audit/6").get_data(as_text=True)


@pytest.mark.parametrize("seq", [2, 5])
def test_the_close_up_labels_each_shape_once_inside_the_picture_and_none_over_another(played, seq):
    from companion.audit import drawing
    from vision.evidence import decode_jpeg
    from vision.overlay import draw_table_shapes
    path, _ = played
    store = GameStore(path, create=False)
    e = store.event(seq)
    ev = store.evidence(e.body["evidence"][0]["ref"]["id"])
    shapes, _ = drawing(store, seq)
    for focus in (False, True):
        boxes = []
        out = draw_table_shapes(decode_jpeg(ev["jpeg"]), ev["table_pose"], shapes, focus=focus, label_boxes=boxes)
        h, w = out.shape[:2]
        assert {t for t, _ in boxes} >= {"Interceptor" if seq == 2 else "Interceptor, where its turn began"}
        for i, (text, (x0, y0, x1, y1)) in enumerate(boxes):
            assert 0 <= x0 < x1 <= w and 0 <= y0 < y1 <= h, text
            for other, (a0, b0, a1, b1) in boxes[i + 1:]:
                assert x1 <= a0 or a1 <= x0 or y1 <= b0 or b1 <= y0, f"{text!r} over {other!r}"
        if focus:
            assert w >= 600        # enlarged: the labels drawn at that size stay readable


def test_labels_of_shapes_on_top_of_each_other_are_placed_apart():
    from vision.overlay import place_labels
    square = np.array([[300.0, 200.0], [340.0, 200.0], [340.0, 230.0], [300.0, 230.0]])
    names = ["Interceptor", "arc edge", "46.4 mm", "Rust Bucket", "reach", "where it ended", "War Rig"]
    boxes = place_labels([(n, square + k) for k, n in enumerate(names)], (480, 640))
    assert [t for t, _ in boxes] == names
    for i, (_, (x0, y0, x1, y1)) in enumerate(boxes):
        assert 0 <= x0 and x1 <= 640 and 0 <= y0 and y1 <= 480
        assert all(x1 <= a0 or a1 <= x0 or y1 <= b0 or b1 <= y0 for _, (a0, b0, a1, b1) in boxes[i + 1:])
    # The first (the car it is about) sits right beside its shape.
    x0, y0, x1, y1 = boxes[0][1]
    assert y1 <= 200 and 200 - y1 < 10 and x0 < 340 and x1 > 300


def test_a_scenario_records_into_a_game_file_and_plays_back(tmp_path):
    path = tmp_path / "scenario.db"
    data = load_scenario(EXAMPLES / "scenarios" / "12-board-and-fight.json")
    outcome = run_scenario(data, "12", GameStore(path))
    assert verify(path)[0]
    replayed = resume(GameStore(path, create=False))
    assert state_json(replayed.session.state) == outcome["state"]
    result = subprocess.run([sys.executable, "-m", "companion", "scenario", "run",
                             str(EXAMPLES / "scenarios" / "05-shoot-hit.json"), "--game", str(path)],
                            capture_output=True, text=True)
    assert result.returncode == 2 and "already holds a game" in result.stderr


# --- killed mid-play, resumed --------------------------------------------------------------

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
                return json.load(r)
        except urllib.error.HTTPError as exc:
            return json.load(exc)


def start_demo(game_file):
    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--port", "0", "--game", str(game_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    match = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
    assert match, line + (proc.stderr.read() if proc.poll() is not None else "")
    return proc, match.group(1)


def test_a_game_killed_mid_play_resumes_with_every_committed_event(tmp_path):
    game_file = tmp_path / "killed.db"
    proc, base = start_demo(game_file)
    try:
        p = Player(base)
        deadline = time.monotonic() + 30
        while p.get("api/game")["game"] is None and time.monotonic() < deadline:
            time.sleep(0.2)
        committed = []
        for warrior in ("Max:10:P1", "Max:13:D", "Furiosa:12:P1", "Furiosa:11:P1"):
            g = p.post("api/act", {"act": "pass", "warrior": warrior})
            assert "error" not in g, g
            committed.append(g["log"][0]["n"])
        g = p.post("api/round", {"orders": {"Max": [10, 13, 14], "Furiosa": [12, 11]}})
        g = p.post("api/dice/typed", {"faces": [3]})
        assert g["pending"]["purpose"] == "initiative"           # one die in: mid-resolution
        before = p.get("api/game")
        proc.send_signal(signal.SIGKILL)                         # no goodbye, no flush
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert verify(game_file)[0]
    proc, base = start_demo(game_file)
    try:
        resumed = Player(base).get("api/game")

        def without_poses(state):           # the poses follow the camera again at once
            return {**state, "vehicles": {m: {k: v for k, v in car.items() if k != "pose"}
                                          for m, car in state["vehicles"].items()}}
        # The round half-rolled is not there; everything committed is.
        assert without_poses(resumed["game"]["state"]) == without_poses(before["game"]["state"])
        assert resumed["game"]["state"]["round"] == 0
        assert [e["n"] for e in resumed["log"]] == [e["n"] for e in before["log"]] and len(resumed["log"]) == 4
        assert resumed["pending"] is None
        assert "resumed from" in resumed["notes"][-1]["text"]
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("margin_mm, word", [(5.0, "yes"), (-5.0, "no"), (0.1, "too close to call")])
def test_the_export_says_each_call_the_judge_makes_in_words(margin_mm, word):
    """A range the camera could not call (inside its doubt) is exported as "too close to call",
    like a clear one as yes or no: the export's verdict table reads every outcome `judge` gives
    (a too-close call once stopped the export)."""
    from companion.audit import _verdict_text
    from companion.geometry.verdict import judge
    v = judge("range", 152.4 - margin_mm, 152.4, 0.2).to_json()
    assert _verdict_text(v).startswith(f"{word}: "), _verdict_text(v)

"""The game file read while it is written (issue 24): readers on other threads never make
an append fail, a request whose event was committed is answered as committed, a retried
request (the same Idempotency-Key) is answered once and never applied twice, and a copy of
the .db taken mid-checkpoint is told apart from tampering where the file can tell."""

from __future__ import annotations

import shutil
import sqlite3
import threading

import pytest

from companion.store import GameStore, verify
from tests.test_game_page import SHOT, make_client, table_game  # noqa: F401  (fixture)


def test_threads_reading_while_another_appends_never_fail_and_every_append_is_committed(tmp_path):
    store = GameStore(tmp_path / "game.db")
    store.append("setup", {"n": 0})
    stop = threading.Event()
    failures, seen = [], []

    def read():
        last = 0
        try:
            while not stop.is_set():
                events = store.events()
                head = store.head()
                n = len(store)
                assert n >= len(events) >= last       # never goes back
                assert int(head.split(":")[0]) >= len(events)
                store.event(1)
                last = len(events)
            seen.append(last)
        except BaseException as exc:                  # noqa: BLE001 (any failure is the finding)
            failures.append(exc)

    readers = [threading.Thread(target=read) for _ in range(4)]
    for t in readers:
        t.start()
    appended = []
    try:
        for k in range(1, 201):
            appended.append(store.append("resolution", {"n": k}).seq)
    finally:
        stop.set()
        for t in readers:
            t.join()
    assert failures == [] and len(seen) == 4
    assert appended == list(range(2, 202)) and len(store) == 201
    assert [e.body["n"] for e in store.events()] == list(range(201))
    store.close()
    ok, message, n = verify(tmp_path / "game.db")
    assert ok and n == 201, message


def test_a_failing_checkpoint_never_turns_a_committed_append_into_an_error(tmp_path, monkeypatch):
    store = GameStore(tmp_path / "game.db")

    class Locked:
        """The writer's connection, its checkpoint refused as a reader's statement refused it."""
        def __init__(self, db):
            self.db = db

        def execute(self, sql, *args):
            if "wal_checkpoint" in sql:
                raise sqlite3.OperationalError("database table is locked")
            return self.db.execute(sql, *args)

        def __getattr__(self, name):
            return getattr(self.db, name)

    monkeypatch.setattr(store, "_db", Locked(store._db))
    e = store.append("setup", {"n": 1})
    assert e.seq == 1 and [x.seq for x in store.events()] == [1] and store.head() == f"1:{e.hash}"


@pytest.fixture
def recorded(table_game, tmp_path):  # noqa: F811
    """A game through the API, recorded in a game file: a missed shot, then a round begun."""
    table_game.store = GameStore(tmp_path / "game.db")
    table_game.evidence.store = table_game.store
    c, h = make_client(table_game)
    rosters = c.get("/api/rosters/starter").get_json()
    assert c.post("/api/game", json={"rules": "shattered_highways", "rosters": rosters}, headers=h).status_code == 200
    c.post("/api/act", json=SHOT, headers=h)
    g = c.post("/api/dice/typed", json={"faces": [2]}, headers=h).get_json()
    assert g["last_outcome"]["event"]["outcome"]["result"] == "missed"
    c.post("/api/round", json={"orders": {"Max": [10, 13, 14], "Furiosa": [12, 11]}}, headers=h)
    c.post("/api/dice/typed", json={"faces": [6]}, headers=h)
    g = c.post("/api/dice/typed", json={"faces": [2]}, headers=h).get_json()
    assert g["pending"] is None and g["last_outcome"]["event"]["kind"] == "round", g
    assert [e.kind for e in table_game.store.events()] == ["setup", "resolution", "resolution", "hold"]
    return c, h, table_game


def undos(game):
    """The game's events each recorded undo took back (by the game's own numbering: 1 the shot, 2 the round)."""
    return [e.body["undid"] for e in game.store.events() if e.kind == "undo"]


def test_an_undo_sent_again_with_the_same_key_undoes_one_event(recorded):
    c, h, game = recorded
    key = {**h, "Idempotency-Key": "a1b2c3d4e5f6a7b8"}
    first = c.post("/api/undo", headers=key)
    again = c.post("/api/undo", headers=key)
    assert first.status_code == again.status_code == 200
    assert again.headers.get("Idempotent-Replayed") == "true" and "Idempotent-Replayed" not in first.headers
    assert again.get_json() == first.get_json()
    assert undos(game) == [2]                        # the round only; the shot stands
    assert sum(e.kind == "undo" for e in game.session.log) == 1
    # A new press is a new key: it undoes the next one.
    r = c.post("/api/undo", headers={**h, "Idempotency-Key": "ffffeeeeddddcccc"})
    assert r.status_code == 200 and undos(game) == [2, 1]
    # The same key with another request can only be a mix-up: refused, nothing done.
    r = c.post("/api/undo", json={"event": 2}, headers=key)
    assert r.status_code == 422 and "another request" in r.get_json()["error"]
    assert undos(game) == [2, 1]


def test_the_same_undo_sent_at_once_from_several_threads_is_applied_once(recorded):
    c, h, game = recorded
    key = {**h, "Idempotency-Key": "0123456789abcdef"}
    answers = []

    def send():
        answers.append(c.post("/api/undo", headers=key))

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status_code for r in answers] == [200] * 4
    assert sum(r.headers.get("Idempotent-Replayed") == "true" for r in answers) == 3
    assert len({r.get_data() for r in answers}) == 1 and undos(game) == [2]


def test_a_bad_key_is_refused_and_changes_nothing(recorded):
    c, h, game = recorded
    r = c.post("/api/undo", headers={**h, "Idempotency-Key": "not a key!"})
    assert r.status_code == 400 and "Idempotency-Key" in r.get_json()["error"] and undos(game) == []


def test_audit_readers_never_make_a_players_post_fail(recorded):
    """The issue's finding at test scale: visitors reading the audit (timeline, re-measure)
    in a loop while a player acts; every POST answers 200 and is recorded exactly once."""
    c, h, game = recorded
    app = c.application
    stop = threading.Event()
    failures = []

    def audit(path):
        reader = app.test_client()
        while not stop.is_set():
            r = reader.get(path)
            if r.status_code >= 500:
                failures.append((path, r.status_code, r.get_data()[:200]))

    readers = [threading.Thread(target=audit, args=(p,)) for p in ("/audit", "/api/audit/2/remeasure")]
    for t in readers:
        t.start()
    codes = []
    try:
        for _ in range(6):
            codes.append(c.post("/api/undo", headers=h).status_code)
    finally:
        stop.set()
        for t in readers:
            t.join()
    assert failures == []
    assert codes[:2] == [200, 200] and set(codes[2:]) == {409}        # two to undo, then nothing
    assert undos(game) == [2, 1]


def _torn_copy(tmp_path):
    """The .db of a game as a copy taken mid-checkpoint finds it: the head's pages (meta and
    its index, written first: pages go in page order) already hold event 5, the events' not yet."""
    path = tmp_path / "game.db"
    store = GameStore(path)
    for k in range(4):
        store.append("resolution" if k else "setup", {"n": k})
    before = path.read_bytes()                      # whole as of event 4 (checkpointed)
    store.append("resolution", {"n": 4})
    after = path.read_bytes()
    store.close()
    db = sqlite3.connect(path)
    size = db.execute("PRAGMA page_size").fetchone()[0]
    meta_page = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'meta'").fetchone()[0]
    events_page = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    db.close()
    assert meta_page < events_page
    at, upto = (meta_page - 1) * size, (events_page - 1) * size      # the head and its index, not yet the events
    torn = tmp_path / "copy.db"
    torn.write_bytes(before[:at] + after[at:upto] + before[upto:])
    return path, torn


def test_a_copy_taken_mid_checkpoint_says_so_and_a_cut_file_still_fails(tmp_path):
    path, torn = _torn_copy(tmp_path)
    assert verify(path)[0]
    ok, message, n = verify(torn)
    assert not ok and n == 4
    assert message.startswith("event 5: missing: the file's head says the game reached event 5, the events stop at 4")
    assert "Events 1 to 4 are intact" in message and "without its -wal file" in message
    assert "?" not in message                     # no hint of tampering as the likely story
    # Events really removed (the guards taken out to do it) are still called cut off.
    cut = tmp_path / "cut.db"
    shutil.copy(path, cut)
    db = sqlite3.connect(cut)
    db.executescript("DROP TRIGGER events_append_only_d; DELETE FROM events WHERE seq = 5;")
    db.close()
    ok, message, _ = verify(cut)
    assert not ok and message.startswith("event 5: missing") and "cut off the end (the file's guards" in message

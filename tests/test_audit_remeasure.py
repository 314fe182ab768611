"""Measure again, exactly (issue 24): every resolution of an untouched game file, recorded
through the camera (held cars, placements, undos), measures again exactly as recorded, each
car located again from the frame its recorded pose came from; a frame or a pose that is not
the one recorded is said so, not reported as a difference of measurement.

The game files in tests/data/games were recorded by `python -m bench.remeasure record` (a
scenario played through the camera, an action undone and made again every few) and cut to
their first events by `python -m bench.remeasure cut`."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from companion.audit import _Frames, measure_again, pose_sources
from companion.cli import main
from companion.dice import FixedDice
from companion.record import remeasure, replay
from companion.session import GameSession
from companion.store import GameStore, verify

GAMES = sorted((Path(__file__).resolve().parent / "data" / "games").glob("*.db"))


def measured(path) -> tuple[list[dict], GameStore]:
    """Every resolution with a frame measured again, on a copy of the game just before it."""
    store = GameStore(path, readonly=True)
    events = store.events()
    frames = _Frames(store, events)
    out = []

    def each(session, e):
        if e.kind == "resolution" and e.body.get("evidence"):
            trial = GameSession(session.rules, copy.deepcopy(session.state), FixedDice([]))
            out.append(measure_again(store, events, e, trial, frames))
    replay(events, before_each=each)
    return out, store


def test_there_are_two_recorded_games_of_two_rule_systems():
    assert len(GAMES) >= 2
    systems = {GameStore(p, readonly=True).events()[0].body["rules"] for p in GAMES}
    assert len(systems) >= 2, systems


@pytest.mark.parametrize("path", GAMES, ids=[p.stem for p in GAMES])
def test_every_event_of_an_untouched_game_measures_again_exactly(path):
    assert verify(path)[0]
    results, store = measured(path)
    events = store.events()
    assert results, "no resolution with a frame"
    assert [r["event"] for r in results if not r["same"]] == []
    for r in results:
        assert r["changed"] == [] and all(v["same"] for v in r["verdicts"])
        assert all(p["difference_mm"] in (None, 0.0) for p in r["poses"])
    # The game is one a table plays: held cars, pieces put where the rules asked, undos; and
    # a held car is measured from the frame that shows it where the game had it.
    assert any(e.kind == "undo" for e in events)
    assert any(e.kind == "resolution" and e.body.get("placements") for e in events)
    kinds = {s["kind"] for e in events if e.kind == "resolution" and e.body.get("evidence")
             for s in pose_sources(store, events, e).values()}
    assert "frame" in kinds and kinds & {"hold", "carried", "placed"}, kinds


def test_a_held_car_is_located_from_the_frame_that_shows_it_where_the_game_had_it():
    path = next(p for p in GAMES if p.stem.startswith("sh-"))
    store = GameStore(path, readonly=True)
    events = store.events()
    held = [(e, m, s) for e in events if e.kind == "resolution" and e.body.get("evidence")
            for m, s in pose_sources(store, events, e).items() if s["kind"] in ("hold", "carried")]
    assert held
    for e, m, s in held:
        # The frame named shows the car exactly at the pose the resolution was judged on.
        assert s["changed"] is None and s["location"] is not None
        assert [s["location"].x_mm, s["location"].y_mm] == e.body["poses"][str(m)][:2]
        assert s["event"] < e.seq and f"event {s['event']}" in s["from"]


def test_the_command_says_exact_for_every_event(capsys):
    path = GAMES[0]
    store = GameStore(path, readonly=True)
    seqs = [e.seq for e in store.events() if e.kind == "resolution" and e.body.get("evidence")]
    for seq in seqs[:3]:
        assert main(["audit", "remeasure", str(path), str(seq)]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["same"] and out["changed"] == []


def _rewritten(path, tmp_path, *, pose=None, frame=None) -> Path:
    """A copy of the game file written whole by the store itself (the chain holds), with one
    recorded pose moved (`pose`: (event, car, mm)) or one stored frame's marker corners moved
    (`frame`: (evidence id, px)), as someone rewriting the file would."""
    src = GameStore(path, readonly=True)
    out = tmp_path / f"rewritten-{path.name}"
    dst = GameStore(out)
    n = src._db.execute("SELECT COUNT(*) FROM evidence").fetchone()[0]
    for i in range(1, n + 1):
        ev = src.evidence(i)
        dets = json.loads(json.dumps(ev["detections"]))
        if frame is not None and frame[0] == i:
            for d in dets:
                d["corners_px"] = [[x + frame[1], y] for x, y in d["corners_px"]]
        dst.add_evidence(ev["jpeg"], dets, ev["table_pose"])
    for e in src.events():
        body = json.loads(json.dumps(e.body))
        if pose is not None and e.seq == pose[0]:
            body["poses"][str(pose[1])][0] += pose[2]
        dst.append(e.kind, body, e.t)
    dst.close()
    return out


def _own_frame_car(path):
    """A resolution, a car its own frame gave the pose of, and that frame's evidence id."""
    store = GameStore(path, readonly=True)
    events = store.events()
    for e in events:
        if e.kind == "resolution" and e.body.get("evidence"):
            for m, s in pose_sources(store, events, e).items():
                if s["kind"] == "frame":
                    return e.seq, m, s["evidence"]
    raise AssertionError("no pose from a resolution's own frame")


def test_a_changed_pose_is_reported_as_changed_not_as_a_measurement(tmp_path, capsys):
    path = GAMES[0]
    seq, car, _ = _own_frame_car(path)
    bad = _rewritten(path, tmp_path, pose=(seq, car, 2.0))
    assert verify(bad)[0]                          # rewritten whole: the chain alone holds
    again = remeasure(GameStore(bad, readonly=True), seq)
    assert not again["same"]
    assert any(f"the frame of event {seq} is not the one recorded" in c and "2.00 mm" in c for c in again["changed"])
    row = next(p for p in again["poses"] if p["vehicle"] == car)
    assert "not the one recorded" in row["changed"]
    assert main(["audit", "remeasure", str(bad), str(seq)]) == 2
    assert f"the frame of event {seq} is not the one recorded" in capsys.readouterr().err
    # The untouched file, the same event: exact.
    assert remeasure(GameStore(path, readonly=True), seq)["same"]


def test_a_changed_frame_is_reported_as_changed(tmp_path):
    path = GAMES[0]
    seq, car, evidence = _own_frame_car(path)
    bad = _rewritten(path, tmp_path, frame=(evidence, 3.0))
    again = remeasure(GameStore(bad, readonly=True), seq)
    assert not again["same"]
    assert any(c.startswith(f"the frame of event {seq} is not the one recorded") and "was changed" in c
               for c in again["changed"]), again["changed"]


def test_an_event_changed_after_it_was_written_is_reported(tmp_path):
    """The body edited in place (its hash no longer matches): said before anything is measured."""
    import shutil
    import sqlite3
    path = GAMES[0]
    seq, car, _ = _own_frame_car(path)
    bad = tmp_path / "edited.db"
    shutil.copy(path, bad)
    db = sqlite3.connect(bad)
    triggers = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")]
    for t in triggers:
        db.execute(f"DROP TRIGGER {t}")
    body = json.loads(db.execute("SELECT body FROM events WHERE seq = ?", (seq,)).fetchone()[0])
    body["poses"][str(car)][1] += 1.0
    db.execute("UPDATE events SET body = ? WHERE seq = ?", (json.dumps(body), seq))
    db.commit()
    db.close()
    again = remeasure(GameStore(bad, readonly=True), seq)
    assert not again["same"]
    assert f"event {seq} (resolution) is not the one recorded: changed after it was written" in again["changed"]

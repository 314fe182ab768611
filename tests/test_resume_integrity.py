"""Nothing lost, nothing forged (issue 18): a refused request changes nothing, poses
enter the game only under the lock that orders resolutions, a recorded game always
resumes and `audit verify` plays it back to say so, a kept head means "this event had
this hash", a table file loaded mid-game is recorded (or refused with the reason),
and a game file is whole, or an error, on its own."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sqlite3
import subprocess
import sys
import threading

import numpy as np
import pytest

from companion.game import GameError, TableGame
from companion.live import LiveTable
from companion.record import resume
from companion.scenario import state_json
from companion.store import GameStore, verify
from vision.render import CarTruth
from vision.sources import SyntheticSource

from tests.conftest import wait_until
from tests.test_game_page import POSES, SHOT

ORDERS = {"Max": [10, 13, 14], "Furiosa": [12, 11]}


def without_poses(state):
    """A game's state but for where its cars stand (the game's poses follow the camera
    between events)."""
    return {**state, "vehicles": {m: {k: v for k, v in car.items() if k != "pose"}
                                  for m, car in state["vehicles"].items()}}


def resumes_as_played(path, game):
    """The game file resumes (every event played back and checked against its record),
    to the game as it is being played, and audit verify says it is whole."""
    replayed = resume(GameStore(path, create=False))
    assert without_poses(state_json(replayed.session.state)) == without_poses(state_json(game.session.state))
    played = lambda log: [(e.n, e.kind, e.detail, e.outcome, [d["faces"] for d in e.dice], e.undone) for e in log]
    assert played(replayed.session.log) == played(game.session.log)
    checked = audit("verify", path)
    assert checked.returncode == 0, checked.stderr


def audit(*args):
    return subprocess.run([sys.executable, "-m", "companion", "audit", *map(str, args)],
                          capture_output=True, text=True, timeout=300)


def frames_with_the_war_rig_moving(renderer, n=4):
    """Frames in which the War Rig (not held, so the game's pose follows it) stands a
    little elsewhere in each: every frame the camera gives moves it in the game."""
    out = []
    for k in range(n):
        poses = [p if p.id != 12 else CarTruth(12, 900.0 + 15.0 * k, 650.0 - 10.0 * k, 5.0 * k) for p in POSES]
        out.append(renderer.render(poses, np.random.default_rng(40 + k)).image)
    return out


def new_game(demo_table, renderer, path, tray=None):
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    live.process(renderer.render(POSES, np.random.default_rng(3)).image, 0, 0.0)
    game = TableGame(live, store=GameStore(path), seed=3, tray=tray)
    game.start("shattered_highways", {}, game.starter_rosters())
    return game


class Camera(threading.Thread):
    """The camera running: frames tracked one after the other on their own thread, as
    `companion serve` tracks them."""

    def __init__(self, live, frames):
        super().__init__(daemon=True)
        self.live, self.frames, self.n = live, frames, 0
        self.halt = threading.Event()

    def run(self):
        while not self.halt.is_set():
            self.n += 1
            self.live.process(self.frames[self.n % len(self.frames)], self.n, self.n / 15)

    def stop(self):
        self.halt.set()
        self.join(30)


def test_a_refused_end_turn_moves_no_car_inside_the_waiting_round_and_the_game_resumes(
        demo_table, renderer, tmp_path):
    """The reported sequence: a round waiting for its dice, an end of turn refused while
    the camera sees a car elsewhere, two virtual dice, a restart."""
    path = tmp_path / "refused.db"
    game = new_game(demo_table, renderer, path)
    moved = frames_with_the_war_rig_moving(renderer, 2)
    game.start_round(ORDERS)
    assert game.session.pending is not None
    state_before = state_json(game.session.state)
    live = game.live
    for k, frame in enumerate(moved):
        live.process(frame, 1 + k, (1 + k) / 15)              # the War Rig moved on the table
        with pytest.raises(GameError, match="waiting for dice"):
            game.end_turn()
        with pytest.raises(GameError, match="waiting for dice"):
            game.act({"act": "pass", "warrior": "Max:10:P1"})
        with pytest.raises(GameError, match="waiting for dice"):
            game.start_round(ORDERS)
        assert state_json(game.session.state) == state_before       # refused: nothing changed
    game.answer_virtual()
    game.answer_virtual()
    assert game.session.pending is None
    game.store.close()
    resumes_as_played(path, game)


@pytest.mark.parametrize("recorded", [True, False])
def test_a_refused_new_game_leaves_the_waiting_roll_where_it_was(demo_table, renderer, tmp_path, recorded):
    game = new_game(demo_table, renderer, tmp_path / "start.db")
    if not recorded:                                   # a game played without a game file
        game.store = game.evidence.store = None
        game.start("shattered_highways", {}, game.starter_rosters())
    game.act(SHOT)
    waiting = game.game_json()["pending"]
    assert waiting["waiting"] == "dice"
    refusals = [("no_such_rules", {}, [], "no_such_rules"),
                ("shattered_highways", {}, "Max", "rosters must be a list"),
                ("shattered_highways", {"arc_edge": "sideways"}, game.starter_rosters(), "arc_edge"),
                ("shattered_highways", {}, [{"player": "Max", "vehicles": [{"marker": 99}]}], "two rosters")]
    if recorded:              # a game file holds one game: a start that would do is refused too
        refusals = [(r, o, ro, None) for r, o, ro, _ in refusals]
        refusals.append(("shattered_highways", {}, game.starter_rosters(), "already holds a game"))
    for rules, options, rosters, says in refusals:
        with pytest.raises(ValueError, match=says):
            game.start(rules, options, rosters)
        assert game.game_json()["pending"] == waiting, (rules, options, rosters)
        assert game.dice.pending is not None                  # the roll is still awaited
    game.answer_typed([5])
    game.answer_typed([4])
    assert game.session.log[-1].outcome["result"] == "hit"


def test_poses_from_the_camera_never_land_inside_a_resolution_answered_by_the_tray(
        demo_table, renderer, tmp_path):
    """The tray answers on its own thread while the camera tracks frames on another:
    every resolution's recorded state is the one its recorded poses and dice give, so
    the game resumes, and audit verify (which plays it back) says so."""
    from hardware.emulator import TrayEmulator
    from hardware.link import TrayLink

    from companion.tray import TrayDice

    emu = TrayEmulator(seed=5).start()
    link = TrayLink(emu.path).start()
    camera = None
    try:
        assert wait_until(lambda: link.boot is not None)
        path = tmp_path / "race.db"
        game = new_game(demo_table, renderer, path, tray=TrayDice(link))
        camera = Camera(game.live, frames_with_the_war_rig_moving(renderer))
        camera.start()
        expects = lambda: sum(c.startswith("EXPECT") for c in list(emu.commands))
        for _ in range(8):
            asked = expects()
            game.act(SHOT)
            for k, faces in enumerate(((5,), (3,))):          # to hit, then the machine gun's damage
                assert wait_until(lambda: expects() > asked + k, 20)
                emu.throw(("d6",), faces)
            assert wait_until(lambda: game.session.pending is None, 20)
            assert game.session.log[-1].dice[-1]["source"] == "tray"
            game.undo()
        camera.stop()
        assert camera.n > 8                                      # the camera ran through it all
        game.store.close()
        resumes_as_played(path, game)
    finally:
        if camera is not None:
            camera.stop()
        link.stop()
        emu.stop()


# --- the game file on its own ------------------------------------------------------------

@pytest.fixture(scope="module")
def recorded(tmp_path_factory, demo_table, renderer):
    """A game recorded into its file and still being played (the store open, as during
    a game): a shot, a round, a pass. The head after each event."""
    path = tmp_path_factory.mktemp("whole") / "game.db"
    game = new_game(demo_table, renderer, path)
    heads = {len(game.store): game.store.head()}
    for step in (lambda: game.act(SHOT), lambda: game.answer_typed([5]), lambda: game.answer_typed([4]),
                 lambda: game.start_round(ORDERS), lambda: game.answer_typed([6]), lambda: game.answer_typed([2]),
                 lambda: game.act({"act": "pass", "warrior": "Max:10:P1"})):
        step()
        heads[len(game.store)] = game.store.head()
    return path, game, heads


def test_a_copy_of_the_db_alone_made_mid_game_is_the_whole_game(recorded, tmp_path):
    path, game, heads = recorded
    assert path.with_name(path.name + "-wal").exists()          # WAL mode, the game still open
    copy = tmp_path / "copy.db"
    shutil.copy(path, copy)                                      # the .db only, as a person copies it
    ok, message, n = verify(copy)
    assert ok and n == len(game.store), message
    replayed = resume(GameStore(copy, create=False))
    assert without_poses(state_json(replayed.session.state)) == without_poses(state_json(game.session.state))


def test_a_kept_head_means_this_event_had_this_hash(recorded, tmp_path):
    path, game, heads = recorded
    last = len(game.store)
    for n, head in heads.items():                                # kept mid-game; the game went on
        ok, message, _ = verify(path, head)
        assert ok, (n, message)
        result = audit("verify", path, "--head", head)
        assert result.returncode == 0 and f"event {n} as kept" in result.stdout, result.stderr
    k = sorted(heads)[1]                                         # a head kept early in the game
    assert k < last
    digest = heads[k].split(":")[1]
    ok, message, _ = verify(path, f"{k}:{'0' * 64}")
    assert not ok and message.startswith(f"event {k}: its hash is not the one you kept"), message
    ok, message, _ = verify(path, f"{last + 5}:{digest}")
    assert not ok and f"the head you kept says the game reached event {last + 5}" in message, message
    for bad in (str(k), "three:abc", f"{k}:{digest[:10]}", f"{k}:{'g' * 64}"):
        result = audit("verify", path, "--head", bad)
        assert result.returncode == 1 and "a head is an event's number and its hash" in result.stderr, bad
    # The chain rewritten from event k on (the triggers dropped, every hash made again): the
    # file alone looks whole; a head kept before the rewrite shows it.
    from companion.store import event_hash
    forged = tmp_path / "forged.db"
    shutil.copy(path, forged)
    db = sqlite3.connect(forged)
    db.executescript("DROP TRIGGER events_append_only_u; DROP TRIGGER events_append_only_d;")
    rows = db.execute("SELECT seq, t, kind, body FROM events ORDER BY seq").fetchall()
    prev = db.execute("SELECT hash FROM events WHERE seq = ?", (k - 1,)).fetchone()[0]
    for seq, t, kind, body in rows[k - 1:]:
        t = t + 0.5 if seq == k else t                           # the time of event k "corrected"
        digest = event_hash(prev, seq, t, kind, body)
        db.execute("UPDATE events SET t = ?, prev = ?, hash = ? WHERE seq = ?", (t, prev, digest, seq))
        prev = digest
    db.execute("UPDATE meta SET value = ? WHERE key = 'head'", (f"{len(rows)}:{prev}",))
    db.commit()
    db.close()
    assert verify(forged)[0]
    ok, message, _ = verify(forged, heads[k])
    assert not ok and f"event {k}: its hash is not the one you kept" in message, message
    assert verify(forged, heads[k - 1])[0]                       # before the rewrite: as kept


def test_a_file_that_cannot_be_read_is_an_error_never_empty_output(recorded, tmp_path):
    path, _, _ = recorded
    data = path.read_bytes()
    half = tmp_path / "half.db"
    half.write_bytes(data[: len(data) // 2])
    page = tmp_path / "page.db"
    page.write_bytes(data[:4096])                                # the first page only
    empty = tmp_path / "empty.db"
    GameStore(empty).close()                                    # a game file no game was started in
    text = tmp_path / "notes.db"
    text.write_text("not a database at all\n" * 400)
    for bad, says in [(half, "game file"), (page, "game file"), (text, "not a readable game file"),
                      (empty, "holds no events"), (tmp_path / "none.db", "no such game file")]:
        before = bad.read_bytes() if bad.exists() else None
        for command in ("show", "verify"):
            result = audit(command, bad)
            assert result.returncode != 0 and result.stdout == "", (bad.name, command, result)
            assert says in result.stderr and "Traceback" not in result.stderr, (bad.name, command, result.stderr)
        result = audit("remeasure", bad, 2)
        assert result.returncode != 0 and says in result.stderr and "Traceback" not in result.stderr
        assert (bad.read_bytes() if bad.exists() else None) == before     # reading never writes


def test_audit_verify_plays_the_game_back_and_names_an_event_that_would_not_resume(recorded, tmp_path):
    """A chain written whole by the store itself, but one resolution's recorded state is
    not what its poses and dice give (what a pose landing inside a resolution made): the
    chain alone says intact, verify says the game would not resume, and from where."""
    path, _, _ = recorded
    source = GameStore(path, create=False)
    events = source.events()
    k = next(e.seq for e in events if e.kind == "resolution" and e.body["kind"] == "round")
    broken = tmp_path / "broken.db"
    store = GameStore(broken)
    n_frames = source._db.execute("SELECT COUNT(*) FROM evidence").fetchone()[0]
    for i in range(1, n_frames + 1):                             # the same frames, the same ids
        ev = source.evidence(i)
        assert store.add_evidence(ev["jpeg"], ev["detections"], ev["table_pose"])["id"] == i
    for e in events:
        body = json.loads(json.dumps(e.body))
        if e.seq == k:
            body["state"]["vehicles"]["12"]["pose"][0] += 3.0   # the War Rig 3 mm off in the state
        store.append(e.kind, body, e.t)
    store.close()
    assert verify(broken)[0]                                     # the chain holds
    result = audit("verify", broken)
    assert result.returncode == 1
    assert f"event {k} (resolution): playing it back gives a different state" in result.stderr
    assert "would not resume" in result.stderr
    good = audit("verify", path)
    assert good.returncode == 0 and "plays back to its last event" in good.stdout
    assert "resolutions measured again" in good.stdout


# --- a table file loaded mid-game ---------------------------------------------------------

def test_a_table_file_loaded_mid_game_is_recorded_when_it_keeps_the_game_and_refused_otherwise(
        demo_table, renderer, tmp_path):
    path = tmp_path / "table.db"
    game = new_game(demo_table, renderer, path)
    game.act(SHOT)
    with pytest.raises(GameError, match="waiting for dice"):
        game.load_table(demo_table)                           # a resolution measured on the old one waits
    game.answer_typed([5])
    game.answer_typed([4])
    n = len(game.store)
    # What would change the game's table is refused, saying what, and nothing changes.
    interceptor = demo_table.car(10)
    refused = [
        (dataclasses.replace(demo_table, width_mm=1500.0), "is 1500 x 812.8 mm"),
        (dataclasses.replace(demo_table, terrain=demo_table.terrain[1:]), "other terrain"),
        (dataclasses.replace(demo_table, gates=()), "other gates"),
        (dataclasses.replace(demo_table, cars=tuple(c for c in demo_table.cars if c.id != 12)),
         "no car with marker 12"),
        (dataclasses.replace(demo_table, cars=tuple(dataclasses.replace(c, length_mm=90.0) if c.id == 10 else c
                                                    for c in demo_table.cars)), "(marker 10) 90 x"),
    ]
    assert demo_table.terrain and demo_table.gates and interceptor is not None
    for table, says in refused:
        with pytest.raises(GameError, match=r"a game is being played.*" + says.replace("(", r"\(").replace(")", r"\)")):
            game.load_table(table)
        assert game.table is demo_table and len(game.store) == n
    # Anchors measured again and the Interceptor's marker put right: taken, and recorded.
    anchors = tuple(dataclasses.replace(a, x_mm=a.x_mm + 0.5) for a in demo_table.anchors)
    cars = tuple(dataclasses.replace(c, roof_mm=c.roof_mm + 1.0) if c.id == 10 else c for c in demo_table.cars)
    fixed = dataclasses.replace(demo_table, anchors=anchors, cars=cars)
    game.load_table(fixed)
    assert game.table is fixed and len(game.store) == n + 1
    loaded = game.store.event(n + 1)
    assert loaded.kind == "table" and loaded.body["table_file"]["cars"][0]["roof_mm"] == interceptor.roof_mm + 1.0
    assert any("anchors" in c for c in loaded.body["changes"]) and any("Interceptor" in c
                                                                        for c in loaded.body["changes"])
    assert "recorded" in game.notes[-1]["text"]
    # The game goes on: a round, an undo; then it resumes and verifies.
    for k in range(1, 5):
        game.live.process(renderer.render(POSES, np.random.default_rng(60 + k)).image, k, k / 15)
    game.start_round(ORDERS)
    game.answer_typed([6])
    game.answer_typed([2])
    game.undo()
    game.start_round(ORDERS)
    game.answer_typed([3])
    game.answer_typed([4])
    game.store.close()
    resumes_as_played(path, game)
    lines = [json.loads(x) for x in audit("show", path).stdout.splitlines()]
    assert [x["kind"] for x in lines].count("table") == 1
    # Resumed on the table file given on the command line: the game's own is remembered.
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    again = TableGame(live, store=GameStore(path, create=False))
    again.resume()
    assert "not the game's last one" in again.notes[-1]["text"]
    kept = len(again.store)
    again.load_table(fixed)
    assert len(again.store) == kept and "nothing the game or the camera uses changed" in again.notes[-1]["text"]
    again.store.close()


def test_a_resolution_measured_after_a_table_change_is_measured_again_on_that_table(
        demo_table, renderer, tmp_path):
    """remeasure locates the cars with the table file in force at the event: a marker's
    roof put right mid-game moves where its car is read from the same corners."""
    from companion.record import remeasure
    path = tmp_path / "remeasure.db"
    game = new_game(demo_table, renderer, path)
    cars = tuple(dataclasses.replace(c, roof_mm=c.roof_mm + 4.0) if c.id in (10, 11) else c for c in demo_table.cars)
    game.load_table(dataclasses.replace(demo_table, cars=cars))
    for k in range(1, 12):                                   # the camera reads the cars with their new roofs
        game.live.process(renderer.render(POSES, np.random.default_rng(80 + k)).image, k, k / 15)
    game.act(SHOT)
    game.answer_typed([5])
    game.answer_typed([4])
    shot = len(game.store)
    assert game.store.event(shot).body["detail"]["act"] == "shoot"
    again = remeasure(GameStore(path, create=False), shot)
    assert again["same"], again
    assert audit("verify", path).returncode == 0


def test_an_action_the_rules_refuse_leaves_every_car_where_the_game_had_it(demo_table, renderer, tmp_path):
    """Refused by the rules themselves (not this car's turn), after the cars were set where
    a resolution would judge them from: the game is as it was, poses and all."""
    game = new_game(demo_table, renderer, tmp_path / "refused-act.db")
    game.start_round(ORDERS)
    game.answer_typed([2])
    game.answer_typed([5])                                   # Furiosa first: the War Rig is up
    for k, frame in enumerate(frames_with_the_war_rig_moving(renderer, 3)):
        # Every car seen elsewhere by the latest frame, the Interceptor's pose unsynced yet.
        game.live.process(frame, 10 + k, (10 + k) / 15)
    before = state_json(game.session.state)
    n = len(game.store)
    with pytest.raises(GameError):
        game.act({"act": "pass", "warrior": "Max:10:P1"})    # not the Interceptor's turn
    assert state_json(game.session.state) == before and len(game.store) == n
    assert game.session.pending is None

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
                ("shattered_highways", {}, [{"player": "Max", "vehicles": [{"marker": 99}]}], "")]
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

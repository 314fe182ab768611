"""Car Cult's whole game again, every position taken from what a webcam saw.

The game of `tests.test_car_cult` (its rosters, arena, fixed dice and moves) is played on a
rendered table, filmed by one webcam that keeps running all game and tracked by one pipeline.
Each move the players plan is driven by a car on the rendered table; the path the camera saw
(not the planned one) is what the `move` action gets, so distances, drift, turns, rough ground
and contact are the camera's. Before every action the cars standing on the table take the
poses the camera tracked for them (the page's "sync from the frame"; the car taking its
activation stays where its move left it, as the page holds it), so ranges, line of sight and
blast radii are measured on tracked poses too. The same game played on the planned poses says
what should come of it.
"""

from __future__ import annotations

import json
import math
import re
import time

import numpy as np
import pytest

from calibration.tablefile import AnchorSpec, CarSpec, TableSpec
from companion.geometry import Pose
from companion.race import PathRecorder
from companion.scenario import state_json
from tests.test_car_cult import GAME_SCENE, Table, play_the_game
# Cut a drive into frames as the Wasteland Rally race is (a frame every 12 mm or 5 degrees).
from tests.test_wasteland_rally_video import distance_to_path
from tests.test_wasteland_rally_video import keyframes_to_poses as frames_along
from vision.pipeline import TablePipeline
from vision.render import CarTruth, RenderOptions, TableRenderer

#: Still frames before a drive and after it.
STILL_BEFORE, STILL_AFTER = 2, 4
ROOF_MM, MARKER_MM = 30.0, 20.0


def arena_table() -> TableSpec:
    """The arena as a table file: six flat anchors near the edges (ids 0-5) and the four cars
    with 20 mm roof markers."""
    t = GAME_SCENE["table"]
    w, d = t["width_mm"], t["depth_mm"]
    spots = [(50, 50), (w - 50, 50), (w - 50, d - 50), (50, d - 50), (w / 2, 40), (w / 2, d - 40)]
    anchors = tuple(AnchorSpec(i, float(x), float(y), 60.0) for i, (x, y) in enumerate(spots))
    cars = tuple(CarSpec(c["id"], c["name"], float(c["length_mm"]), float(c["width_mm"]), ROOF_MM, MARKER_MM)
                 for c in GAME_SCENE["cars"])
    return TableSpec(float(w), float(d), "DICT_4X4_50", anchors, cars, source="the car cult arena")


class Camera:
    """The webcam over the arena for the whole game. `truth` is where each car really stands
    (a drive leaves it where its player stopped it; an exploded car is taken off the table);
    `seen` the last pose the camera tracked for each, with its doubt."""

    def __init__(self, width: int = 1920, height: int = 1080, supersample: int = 2) -> None:
        self.table = arena_table()
        self.renderer = TableRenderer.overhead(self.table, options=RenderOptions(supersample=supersample),
                                               seed=11, width=width, height=height)
        self.pipeline = TablePipeline(self.table, self.renderer.camera)
        self.recorder = PathRecorder()
        self.rng = np.random.default_rng(23)
        self.truth = {c["id"]: (float(c["x_mm"]), float(c["y_mm"]), float(c["heading_deg"]))
                      for c in GAME_SCENE["cars"]}
        self.seen: dict[int, Pose] = {}
        self.frame = 0
        self.unseen = 0

    def film(self, moving: int | None = None, pose=None) -> None:
        cars = {**self.truth, **({moving: pose} if moving is not None else {})}
        image = self.renderer.render([CarTruth(m, *p) for m, p in cars.items()], self.rng).image
        tracked = self.pipeline.process(image, self.frame, self.frame / 30.0)
        self.frame += 1
        self.recorder.update(tracked.cars)
        for c in tracked.cars:
            if not c.stale:
                self.seen[c.id] = Pose(c.x_mm, c.y_mm, c.heading_deg, c.sigma_mm, c.sigma_deg)
        if moving is not None and not any(c.id == moving and not c.stale for c in tracked.cars):
            self.unseen += 1

    def still(self, frames: int = 2) -> None:
        for _ in range(frames):
            self.film()

    def drive(self, marker: int, keys: list[list[float]]) -> list[list[float]]:
        """The car drives from where it stands through the keyframes; the path the camera saw."""
        poses = frames_along([list(self.truth[marker]), *keys])
        self.recorder.clear(marker)
        for p in [poses[0]] * STILL_BEFORE + poses[1:] + [poses[-1]] * STILL_AFTER:
            self.film(marker, p)
        self.truth[marker] = tuple(poses[-1])
        return self.recorder.path(marker)

    def take_off(self, markers) -> None:
        for m in markers:
            self.truth.pop(m, None)


class VideoTable(Table):
    """The test's game, but the cars' poses are the camera's: a move gets the tracked path,
    and before every action the standing cars take their tracked poses."""

    def __init__(self, camera: Camera | None) -> None:
        super().__init__()
        self.camera = camera
        self.moves: list[dict] = []
        if camera is not None:
            camera.still(4)
            self.sync()

    def sync(self) -> None:
        """The cars standing on the table where the camera sees them (not the active car: it
        is held where its move left it)."""
        if self.camera is None:
            return
        st = self.state
        gone = [m for m, v in st.vehicles.items() if not v.in_play]
        self.camera.take_off(gone)
        use = {m: p for m, p in self.camera.seen.items()
               if m in st.vehicles and st.vehicles[m].in_play and m != st.active_marker}
        self.rules.update_poses(st, use)

    def act(self, **action):
        self.sync()
        return super().act(**action)

    def round(self):
        if self.camera is not None:
            self.camera.still(2)
        self.sync()
        return super().round()

    def end(self):
        self.sync()
        return super().end()

    def drive(self, marker: int, keys: list[list[float]], **extra):
        tracked = keys
        if self.camera is not None:
            tracked = self.camera.drive(marker, keys)
        out = self.act(act="move", vehicle=marker, path=tracked, **extra)
        self.moves.append({"marker": marker, "planned": keys, "tracked": tracked, "move": out["move"],
                           "result": out["result"], "moved_mm": out["moved_mm"]})
        return out


def normalised(events: list[str]) -> list[str]:
    """Events without their numbers, and without the notes a measurement's doubt adds
    ("too close to call"): the camera's poses carry doubt, the planned ones none."""
    out = []
    for e in events:
        if e.startswith("too close to call"):
            continue
        e = e.replace(" (too close to call; it counts)", "")
        out.append(re.sub(r"-?\d+(\.\d+)?", "#", e))
    return out


def test_a_whole_game_from_rendered_video():
    planned = VideoTable(None)
    play_the_game(planned)

    began = time.perf_counter()
    camera = Camera()
    game = VideoTable(camera)
    play_the_game(game)
    seconds = time.perf_counter() - began
    st = game.state

    # It plays to its end, as planned: Joe's two cars explode, Max wins in round 6.
    assert st.over and st.winner == "Max" and st.round == planned.state.round == 6
    assert [v.status() for v in st.vehicles.values()] == [v.status() for v in planned.state.vehicles.values()]
    assert game.kinds == {"activate", "allocate", "move", "attack", "fix"}
    # Decision for decision the same game (only the measured numbers differ), the same dice
    # asked for in the same order, and every car's tracks the same tokens.
    assert normalised(game.events) == normalised(planned.events)
    assert game.dice.asked == planned.dice.asked
    assert {m: v.to_json()["components"] for m, v in st.vehicles.items()} == \
        {m: v.to_json()["components"] for m, v in planned.state.vehicles.items()}

    # Every pose the rules judged came from the camera: the standing cars' poses carry the
    # tracker's doubt, and none is exactly where the plan put it (the Dust Devil's, planned, is
    # where the rules halted it on touching, within contact_mm of the Scrapjaw; filmed, where
    # the hand stopped it, against it).
    for m, v in st.vehicles.items():
        if v.in_play:
            assert v.pose.sigma_mm > 0, m
            p = planned.state.vehicles[m].pose
            assert 0 < math.hypot(v.pose.x_mm - p.x_mm, v.pose.y_mm - p.y_mm) < 3.0, m

    # The paths came from the camera: none is the planned one, each follows it to a mm or two,
    # ends within a mm or two of where the car stopped, and reads as the planned path does.
    assert camera.unseen <= camera.frame / 50
    assert len(game.moves) == len(planned.moves) == 8
    worst = 0.0
    for mv, pl in zip(game.moves, planned.moves):
        assert mv["marker"] == pl["marker"] and mv["result"] == pl["result"], mv
        tracked = mv["tracked"]
        assert tracked != mv["planned"]
        start = tracked[0]
        off = max(distance_to_path(p, [start, *mv["planned"]]) for p in tracked)
        worst = max(worst, off)
        assert off < 2.5, mv
        end, goal = tracked[-1], mv["planned"][-1]
        assert math.hypot(end[0] - goal[0], end[1] - goal[1]) < 2.0, mv
        got, want = mv["move"], pl["move"]
        assert got["turns"] == want["turns"], mv
        assert got["distance_mm"] == pytest.approx(want["distance_mm"], abs=4.0), mv
        assert got["drift_left_mm"] == pytest.approx(want["drift_left_mm"], abs=4.0), mv
        assert got["drift_right_mm"] == pytest.approx(want["drift_right_mm"], abs=4.0), mv
        assert mv["moved_mm"] == pytest.approx(pl["moved_mm"], abs=4.0), mv
    assert worst > 0.05                      # measured, not copied
    print(f"\n{len(game.moves)} moves, {camera.frame} frames ({camera.unseen} without the moving car) in "
          f"{seconds:.0f} s; tracked paths within {worst:.2f} mm of the planned ones")
    json.dumps(state_json(st))

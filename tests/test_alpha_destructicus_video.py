"""Alpha Destructicus's whole game again, but every drive's path is what a webcam saw.

The game of tests/test_alpha_destructicus.py (six rounds, every die fixed, every
action kind), played on a rendered table: for each drive the car is rendered
driving the path its player meant, the other cars standing where the game has
them, and the frames go through one tracking pipeline that runs the whole game.
The path the camera recorded, not the one the test wrote, is what the `drive`
action gets, so the rules take distance, turns and gate crossings from video.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from calibration.tablefile import AnchorSpec, CarSpec, TableSpec
from companion.geometry import Pose, closest_distance
from companion.race import PathRecorder
from companion.rules.alpha_destructicus import ACTIONS
from companion.rules.base import RulesError
from tests.test_alpha_destructicus import SCENE, Table, opening
from vision.pipeline import TablePipeline
from vision.render import CarTruth, RenderOptions, TableRenderer

#: A car moves at most this far, and turns at most this much, between two frames
#: (a brisk 360 mm/s and a turn on the spot of 120 deg/s at 30 frames a second).
STEP_MM = 12.0
TURN_DEG = 4.0
#: Frames of the table standing still before a drive (the camera settles on where
#: the game's own moves put cars) and after it (the car is seen standing at its end).
STILL_BEFORE, STILL_AFTER = 4, 4
#: The camera's path as the page records it: a pose each 5 mm moved or 2 deg turned,
#: so a turn on the spot arrives as many small steps, which the rules sum into one turn.
RECORD_STEP_MM, RECORD_TURN_DEG = 5.0, 2.0
WIDTH, HEIGHT = 1920, 1080
#: Roof markers: 20 mm on the cars; the Horse (a 20 mm wide bike) carries 15 mm, so
#: the marker's white margin fits on its back.
ROOF_MM, MARKER_MM, NARROW_MARKER_MM = 30.0, 20.0, 15.0


def _wrap(deg: float) -> float:
    return ((deg + 540.0) % 360.0) - 180.0


def table_for(scene: dict) -> TableSpec:
    """The rendered table: the scene's mat, six flat anchors round its edge
    (ids the cars do not use) and the scene's vehicles as cars with roof markers."""
    w, d = scene["table"]["width_mm"], scene["table"]["depth_mm"]
    anchors = (AnchorSpec(0, 50.0, 50.0, 60.0), AnchorSpec(1, w - 50.0, 50.0, 60.0),
               AnchorSpec(2, w - 50.0, d - 50.0, 60.0), AnchorSpec(3, 50.0, d - 50.0, 60.0),
               AnchorSpec(4, w / 2, 40.0, 50.0), AnchorSpec(5, w / 2, d - 40.0, 50.0))
    cars = tuple(CarSpec(c["id"], c["name"], c["length_mm"], c["width_mm"], ROOF_MM,
                         MARKER_MM if c["width_mm"] >= 26.0 else NARROW_MARKER_MM) for c in scene["cars"])
    assert not {a.id for a in anchors} & {c.id for c in cars}
    return TableSpec(w, d, anchors=anchors, cars=cars, source="alpha destructicus arena")


def frames_along(keys, step_mm: float = STEP_MM, turn_deg: float = TURN_DEG) -> list[tuple[float, float, float]]:
    """The poses of a car driving through keyframes [x, y, heading]: straight between
    them, turning on the spot where only the heading changes (the short way)."""
    poses = [tuple(map(float, keys[0]))]
    for (x0, y0, h0), (x1, y1, h1) in zip(keys, keys[1:]):
        dh = _wrap(h1 - h0)
        n = max(1, math.ceil(math.hypot(x1 - x0, y1 - y0) / step_mm), math.ceil(abs(dh) / turn_deg))
        poses += [(x0 + (x1 - x0) * k / n, y0 + (y1 - y0) * k / n, h0 + dh * k / n) for k in range(1, n + 1)]
    return poses


class Webcam:
    """The camera over the arena for the whole game: one renderer, one pipeline,
    frame numbers running on from drive to drive."""

    def __init__(self, scene: dict) -> None:
        self.table = table_for(scene)
        self.renderer = TableRenderer.overhead(self.table, options=RenderOptions(), seed=7,
                                               width=WIDTH, height=HEIGHT)
        self.pipeline = TablePipeline(self.table, self.renderer.camera)
        self.rng = np.random.default_rng(2024)
        self.recorder = PathRecorder(RECORD_STEP_MM, RECORD_TURN_DEG)
        self.frame = 0

    def show(self, cars: dict[int, tuple[float, float, float]]):
        image = self.renderer.render([CarTruth(i, *p) for i, p in cars.items()], self.rng).image
        tracked = self.pipeline.process(image, self.frame, self.frame / 30.0)
        self.frame += 1
        return tracked

    def film_drive(self, car: int, poses, standing: dict[int, tuple[float, float, float]]):
        """Render the car driving through `poses` among the standing cars; return the
        path the camera recorded for it, and how many of its frames it went unseen."""
        for _ in range(STILL_BEFORE - 1):
            self.show({**standing, car: poses[0]})
        self.recorder.clear(car)
        unseen = 0
        script = [poses[0]] + list(poses) + [poses[-1]] * STILL_AFTER
        for pose in script:
            tracked = self.show({**standing, car: pose})
            self.recorder.update(tracked.cars)
            seen = {c.id: c for c in tracked.cars if not c.stale}
            unseen += car not in seen
        return self.recorder.path(car), unseen


class VideoTable(Table):
    """The whole-game `Table`, with every drive's path taken from the webcam.

    `placed` is where each model really stands: a drive leaves it where its
    player meant to stop; a move the game makes (a forced move, a jump, a spin, a
    rollover) has the player put it where the companion says."""

    def __init__(self) -> None:
        super().__init__()
        self.cam = Webcam(SCENE)
        self.placed = {c["id"]: (float(c["x_mm"]), float(c["y_mm"]), float(c["heading_deg"])) for c in SCENE["cars"]}
        self.drives: list[dict] = []

    def _game_poses(self) -> dict[int, tuple[float, float, float]]:
        return {m: (v.pose.x_mm, v.pose.y_mm, v.pose.heading_deg) for m, v in self.st.vehicles.items() if v.on_table}

    def act(self, dice=(), choices=(), **action):
        before = self._game_poses()
        if action["act"] != "drive":
            out = super().act(dice, choices, **action)
            for m, pose in self._game_poses().items():
                if before.get(m) != pose:
                    self.placed[m] = pose
            return out
        car = action["vehicle"]
        meant = [list(map(float, p)) for p in action["path"]]
        start = self.placed[car]
        # The player's path starts where the model stands (to a few mm: the game's
        # own moves were measured from what the camera saw).
        assert math.dist(meant[0][:2], start[:2]) < 3.0 and abs(_wrap(meant[0][2] - start[2])) < 1.0, (meant, start)
        keys = [list(start)] + meant[1:]
        standing = {m: self.placed[m] for m in before if m != car}
        path, unseen = self.cam.film_drive(car, frames_along(keys), standing)
        out = super().act(dice, choices, **{**action, "path": path})
        self.placed[car] = tuple(keys[-1])
        if out.get("jump"):            # it reached a ramp and flew: the player puts it where it lands
            self.placed[car] = self._game_poses()[car]
        self.drives.append({"car": car, "meant": keys, "seen": path, "unseen": unseen, "out": out,
                            "round": self.st.round})
        return out


def _gate(state, name):
    return next(g for g in state.gates if g.name == name)


def _crossings(state, car: int, path, gate_name: str) -> list[int]:
    """The crossings (+1 forwards, -1 back) of a gate along a path, by the vehicle's footprint."""
    v, gate = state.vehicles[car], _gate(state, gate_name)
    feet = [v.footprint(Pose(*p)) for p in path]
    return [c for c in (gate.crossing(a, b) for a, b in zip(feet, feet[1:])) if c]


def _off_path_mm(drive) -> tuple[float, float]:
    """How far the camera's poses stray from the path meant: the worst distance to
    it, and the worst heading error against the meant poses within 2 mm."""
    meant = np.array(frames_along(drive["meant"], 0.25, 0.25))
    worst_mm = worst_deg = 0.0
    for x, y, h in drive["seen"]:
        d = np.hypot(meant[:, 0] - x, meant[:, 1] - y)
        near = d < 2.0
        worst_mm = max(worst_mm, float(d.min()))
        if near.any():
            worst_deg = max(worst_deg, float(np.abs((meant[near, 2] - h + 540.0) % 360.0 - 180.0).min()))
        else:
            worst_deg = 180.0
    return worst_mm, worst_deg


def test_a_whole_game_with_every_drive_seen_by_the_webcam():
    """Six rounds between Ann and Bob, every die fixed and every action kind used,
    each drive's path the one the camera recorded: the gates score as the players
    drove (one crossed backwards for nothing, one crossed again for nothing), the
    forced moves and rams happen where the tracked cars stand, and the game ends
    as the hand-entered game does."""
    t = VideoTable()
    opening(t)
    # Badly shaken: 6 in straight ahead, into the Rhinocerator where the camera left both
    # (the surge stops where it touches: the gap between them, to the 2-place inches it says).
    king, tank = t.st.vehicles[12], t.st.vehicles[10]
    gap_mm = closest_distance(king.footprint(), tank.footprint()).distance_mm
    assert 58.0 < gap_mm < 62.0
    o = t.act([2, 5, 1], act="forced", freak="Grub", vehicle=12)
    (into,) = [e for e in o["events"] if e.startswith("the King Rhino runs into the Rhinocerator after")]
    moved_in = float(re.search(r"after ([0-9.]+) in: a ram", into).group(1))
    assert abs(moved_in * 25.4 - gap_mm) <= 0.2 and t.st.stopped      # 0.2: the 2-place inches
    t.end(next="Ann")
    t.act([4], act="stunt", freak="Mo", stunt="push_it")
    t.act(act="drive", freak="Mo", vehicle=11, path=[[450, 400, 0], [675, 400, 0]])
    o = t.act([6, 1, 5, 3], ["flamethrower"], act="ram", freak="Mo", vehicle=11, target=13)    # Bob's pick
    assert o["result"] == "won" and t.st.vehicles[13].component("flamethrower").status == "destroyed"
    t.end(next="Bob")
    t.act(act="leave", freak="Pox", to=[750, 440])
    t.act(act="walk", freak="Pox", to=[750, 500])
    t.end(next="Ann")
    # The drive reaches the Hump's foot and jumps ("Jumping"): Ann states 5 in.
    o = t.act([3], [5.0], act="drive", freak="Ix", vehicle=14, path=[[300, 650, 0], [455, 650, 0]])
    assert o["jump"]["distance_in"] == 5.0 and t.st.scores["Ann"] == 2            # through Sky in the air
    assert "the Horse drives through Sky: 1 point to Ann (2 now)" in o["events"]
    t.end(next="Bob")
    t.act(act="walk", freak="Kez", to=[705, 505])
    t.end()
    # Round 3
    t.round("Ann")
    t.act(act="drive", freak="Zed", vehicle=10, reverse=True, path=[[610, 150, 0], [500, 150, 0]])
    t.end(next="Bob")
    o = t.act([3, 2], act="defend", freak="Pox", building="Bank", target=11)
    assert o["result"] == "penetrating" and t.st.vehicles[11].burning        # top armour 0: fire (2)
    t.end(next="Ann")
    o = t.act([2, 3, 5, 2, 4], [45], act="forced", freak="Mo", vehicle=11)     # Bob spins it 45 deg
    assert t.st.vehicles[13].destroyed and t.st.vehicles[11].pending == 4     # spinout waits
    t.end([6, 6, 6], next="Bob")
    t.act(act="walk", freak="Kez", to=[656.6, 418.4])
    o = t.act([5, 2, 1], act="jack", freak="Kez", vehicle=11)
    assert o["result"] == "jacked" and o["rolls"][1]["total"] == 2           # 2 + 1 - 1 (burning)
    t.end([6, 6, 6], next="Ann")
    t.act(act="drive", freak="Ix", vehicle=14,
          path=[[582, 650, 0], [650, 650, 0], [650, 650, 90], [650, 700, 90], [650, 700, 0], [700, 700, 0]])
    o = t.out[-1]
    assert o["turning_in"] == 0.0 and [round(d / 5) * 5 for d in o["turns_deg"]] == [90, -90]   # a bike turns free
    t.end(next="Bob")
    o = t.act(act="drive", freak="Grub", vehicle=12, path=[[692, 150, 180], [600, 150, 180]])
    assert o["left_in"] + o["moved_in"] == pytest.approx(6.0, abs=0.011)    # slightly shaken: 6 in, not 12
    t.end()
    # Round 4
    t.round("Ann")
    o = t.act(act="activate", freak="Mo")
    assert o["events"] == ["Mo moves for Ann", "Mo gets up"]
    t.end(next="Bob")
    o = t.act([3, 2, 5, 1, 1], act="forced", freak="Kez", vehicle=11)   # 5: the Bank it hits does not catch fire
    assert "Pox takes a wound (Bank coming down): 2 left; he falls down until his next turn" in o["events"]
    o = t.act([4], act="grab", freak="Mo", vehicle=11)
    assert o["result"] == "clinging" and t.st.freaks["Mo"].seat == "clinging"
    t.end([6, 6, 6], next="Ann")
    t.act(act="drive", freak="Zed", vehicle=10, path=[[500, 150, 0], [520, 150, 0]])
    o = t.act([5, 1, 6, 4, 4], ["left"], act="ram", freak="Zed", vehicle=10, target=12)     # Bob: left
    assert o["result"] == "won" and t.st.vehicles[12].pose.heading_deg == pytest.approx(-90, abs=1)  # rolled over
    t.end(next="Bob")
    # Rollover: 2 in "in its last direction of movement" (180 deg, not where it faces now), back
    # into the Rhinocerator: a ram it loses (1 +1 -1 +2 = 3 against 4), a glancing 1 each.
    o = t.act([1, 1, 1, 4, 1, 1], act="forced", freak="Grub", vehicle=12)
    assert o["result"] == "stopped" and o["distance_in"] == 2 and o["hit"] == 10
    t.end(next="Ann")
    # Back out through Sky the wrong way: a crossing back, no point.
    o = t.act(act="drive", freak="Ix", vehicle=14,
              path=[[700, 700, 0], [700, 700, -90], [700, 650, -90], [700, 650, 180], [560, 650, 180]])
    assert o["scored"] == [] and not any("Sky" in e for e in o["events"])
    assert _crossings(t.st, 14, t.drives[-1]["seen"], "Sky") == [-1]
    t.end(next="Bob")
    o = t.act(act="activate", freak="Pox")
    assert "Pox gets up" in o["events"]
    t.act(act="walk", freak="Pox", to=[878, 578])
    t.act(act="board", freak="Pox", vehicle=15, seat="driver")
    t.end()
    # Round 5
    t.round("Bob")
    t.act(act="drive", freak="Pox", vehicle=15,
          path=[[1000, 700, 180], [1000, 700, -90], [1000, 440, -90], [1000, 440, 180]])
    t.end(next="Ann")
    o = t.act([1], act="shoot", freak="Zed", weapon="machine guns", target=12)
    assert o["result"] == "missed"
    t.end(next="Bob")
    o = t.act(act="drive", freak="Grub", vehicle=12, path=[[578, 150, -90], [578, 80, -90], [578, 80, 0], [580, 80, 0]])
    assert o["turning_in"] == 3.0 and len(o["turns_deg"]) == 1 and o["turns_deg"][0] == pytest.approx(90, abs=2)
    t.end(next="Ann")
    t.act(act="leave", freak="Mo", to=[700, 420])
    t.act(act="walk", freak="Mo", to=[650, 380])
    t.end(next="Bob")
    t.act(act="activate", freak="Kez")
    t.end([6, 6, 6], next="Ann")
    o = t.act(act="drive", freak="Ix", vehicle=14, path=[[560, 650, 180], [560, 650, 135], [515, 695, 135], [515, 695, 180],
                                                          [400, 695, 180]])
    assert o["scored"] == [] and _crossings(t.st, 14, t.drives[-1]["seen"], "Sky") == []   # already back
    t.end()
    # Round 6
    t.round("Bob")
    o = t.act(act="drive", freak="Pox", vehicle=15, path=[[1000, 440, 180], [1000, 440, -135], [930, 370, -135],
                                                                    [930, 370, 180], [765, 360, 180]])   # round the Dragster
    assert o["scored"] == [{"gate": "West", "player": "Bob"}]
    t.end(next="Ann")
    # A tank turns 45 deg for 3 in: Zed turns a little less than that, so a camera's
    # tenth of a degree over cannot make it two turns.
    turn = math.radians(40.0)
    o = t.act(act="drive", freak="Zed", vehicle=10,
              path=[[520, 150, 0], [520, 150, 40], [520 + 56.57 * math.cos(turn), 150 + 56.57 * math.sin(turn), 40]])
    assert o["turning_in"] == 3.0 and o["turns_deg"][0] == pytest.approx(40, abs=2)
    t.end(next="Bob")
    t.act(act="activate", freak="Grub")
    t.end(next="Ann")
    t.act(act="walk", freak="Mo", to=[600, 380])
    t.end(next="Bob")
    t.act(act="activate", freak="Kez")
    t.end([6, 6, 6], next="Ann")
    t.act(act="activate", freak="Ix")
    # The Horse scored on Sky last (the jump): through it again, forwards, is no point.
    assert t.st.vehicles[14].last_gate == "Sky"
    o = t.act(act="drive", freak="Ix", vehicle=14, path=[[400, 695, 180], [400, 695, 0], [580, 695, 0]])
    assert _crossings(t.st, 14, t.drives[-1]["seen"], "Sky") == [1]
    assert o["scored"] == [] and \
        "the Horse crosses Sky again: no point until it scores on another gate (alpha-destructicus.txt, " \
        "\"Winning\")" in o["events"]
    o = t.end()

    st = t.st
    assert st.over and st.round == 6 and st.winner == "Ann"
    assert st.scores == {"Ann": 2, "Bob": 2} and st.destroyed_by == {"Ann": 1, "Bob": 0}
    every = {"activate", "walk", "board", "leave", "drive", "forced", "stunt", "grab", "jump", "jack", "shoot",
             "repair", "ram", "defend"}
    assert every == t.kinds == set(ACTIONS)
    scored = [(s["gate"], s["player"]) for o in t.out for s in o.get("scored", [])]
    assert scored == [("East", "Ann"), ("West", "Bob"), ("West", "Bob")]
    assert st.vehicles[13].destroyed and st.terrain["Bank"].breached == [0]
    assert st.freaks["Mo"].wounds == 2 and st.vehicles[11].burning and st.vehicles[11].last_team == "Bob"
    assert "the game ends (6 rounds played): Ann wins with 2 points (tied on points; 1 vehicles destroyed)" \
        in t.s.log[-1].outcome["events"]
    with pytest.raises(RulesError, match="the game is over"):
        t.s.start_round({})

    # Every drive's path came from the camera: seen throughout, not the path meant
    # (more poses, none exactly on it), but within a few mm and degrees of it.
    assert len(t.drives) == 18 and {d["car"] for d in t.drives} == {10, 11, 12, 13, 14, 15}
    for d in t.drives:
        where = (d["round"], d["car"])
        assert d["unseen"] == 0, where
        assert d["seen"] != d["meant"] and len(d["seen"]) > len(d["meant"]), where
        off_mm, off_deg = _off_path_mm(d)
        assert 0.0 < off_mm < 2.0 and off_deg < 3.0, (where, off_mm, off_deg)
        assert math.dist(d["seen"][0][:2], d["meant"][0][:2]) < 1.0, where
        assert math.dist(d["seen"][-1][:2], d["meant"][-1][:2]) < 1.0, where
        assert abs(_wrap(d["seen"][-1][2] - d["meant"][-1][2])) < 1.0, where
    # The gates scored from video: each scoring drive's camera path crosses its gate forwards once.
    for d in t.drives:
        for s in d["out"]["scored"]:
            assert _crossings(st, d["car"], d["seen"], s["gate"]) == [1], (d["round"], d["car"], s)

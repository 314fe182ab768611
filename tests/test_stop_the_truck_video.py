"""Stop The Truck!'s whole game again, every position taken from a rendered video.

The game of `tests.test_stop_the_truck` (four turns, every die fixed, every action kind) is
played on a rendered table: whenever a player puts a model down (a move, an avoid, a car put
where the rules say, the truck's slide, a replacement coming on), the table is rendered with
every model where it stands, one tracking pipeline running all game sees it, and the pose the
camera reports (with its doubt) is what the rules get; the square a car is in, the truck's row
and every shooting arc come from those tracked poses.
"""

from __future__ import annotations

import numpy as np

from calibration.tablefile import AnchorSpec, CarSpec, TableSpec
from companion.geometry import Pose
from companion.rules.stop_the_truck import ACTIONS
from tests.test_stop_the_truck import CARS, WHOLE_TABLE, Play, play_whole_game
from vision.pipeline import TablePipeline
from vision.render import CarTruth, RenderOptions, TableRenderer

#: Frames of the table standing still after a model is put down: the tracker settles on it.
STILL = 3
WIDTH, HEIGHT = 1600, 1280
ROOF_MM, MARKER_MM, NARROW_MARKER_MM, TRUCK_MARKER_MM = 30.0, 20.0, 15.0, 30.0


def table() -> TableSpec:
    """The game's table: six flat anchors round its edge, off the board, and the seven models."""
    w, d = WHOLE_TABLE
    spots = [(60, 60), (w - 60, 60), (w - 60, d - 60), (60, d - 60), (w / 2, 50), (w / 2, d - 50)]
    anchors = tuple(AnchorSpec(i, float(x), float(y), 60.0) for i, (x, y) in enumerate(spots))
    cars = []
    for m, (name, _, length, width, _) in sorted(CARS.items()):
        marker = TRUCK_MARKER_MM if m == 1 else MARKER_MM if width >= 26 else NARROW_MARKER_MM
        cars.append(CarSpec(m, name, float(length), float(width), ROOF_MM, marker))
    return TableSpec(float(w), float(d), "DICT_4X4_50", anchors, tuple(cars), source="stop the truck table")


class Webcam:
    def __init__(self) -> None:
        self.table = table()
        self.renderer = TableRenderer.overhead(self.table, options=RenderOptions(supersample=2), seed=11,
                                               width=WIDTH, height=HEIGHT)
        self.pipeline = TablePipeline(self.table, self.renderer.camera)
        self.rng = np.random.default_rng(31)
        self.frame = 0

    def look(self, standing: dict) -> dict:
        """The table with every model where it stands, filmed for a few frames; the tracked
        poses (x, y, heading, sigma_mm, sigma_deg) of the models it sees."""
        tracked = None
        cars = [CarTruth(m, p[0], p[1], p[2]) for m, p in standing.items()]
        for _ in range(STILL):
            image = self.renderer.render(cars, self.rng).image
            tracked = self.pipeline.process(image, self.frame, self.frame / 30.0)
            self.frame += 1
        return {c.id: [c.x_mm, c.y_mm, c.heading_deg, c.sigma_mm, c.sigma_deg] for c in tracked.cars if not c.stale}


class VideoPlay(Play):
    """The whole game's table with a webcam over it: every pose the rules get is the camera's."""

    def __init__(self) -> None:
        super().__init__()
        self.cam = Webcam()
        self.errors: list[float] = []
        seen = self.cam.look(self.placed)
        assert set(seen) == set(self.placed), f"the camera misses {set(self.placed) - set(seen)} at the start"
        self._sync(seen, skip=None)

    def _sync(self, seen: dict, skip: int | None) -> None:
        """The other models' poses follow the camera, as the page's do."""
        self.game.rules.update_poses(self.game.st, {m: Pose(*p) for m, p in seen.items() if m != skip})

    def see(self, marker: int, standing: dict) -> list[float]:
        seen = self.cam.look(standing)
        assert marker in seen, f"the camera does not see car {marker}"
        got = seen[marker]
        meant = standing[marker]
        self.errors.append(float(np.hypot(got[0] - meant[0], got[1] - meant[1])))
        self._sync(seen, skip=marker)
        return got


def test_a_whole_game_with_every_position_from_the_webcam():
    """The game plays to the same end, each square the camera's: no car's tracked centre strays
    enough to change its square, the shooting arcs are judged on tracked poses, and every action
    kind is used."""
    p = VideoPlay()
    play_whole_game(p)
    st = p.game.st
    assert st.over and st.winner == "truck" and st.distance == 12
    used = {e.detail.get("act") for e in p.game.session.log if e.kind == "action"}
    assert used == set(ACTIONS)
    # Positions came from the camera: a few millimetres from where the models were put, not exact.
    assert p.errors and max(p.errors) < 2.0 and sum(p.errors) > 0.0
    shots = [e for e in p.game.session.log if e.kind == "action" and e.detail.get("act") == "shoot"]
    arcs = [e.outcome["arc"] for e in shots if e.outcome.get("arc")]
    assert arcs and all(a["outcome"] == "in" for a in arcs) and all(a["sigma_mm"] > 0 for a in arcs)
    moves = [e.outcome for e in p.game.session.log if e.kind == "action" and e.detail.get("act") == "move"
             and e.outcome.get("square_verdict")]
    assert moves and all(m["square_verdict"]["outcome"] == "in" and m["square_verdict"]["sigma_mm"] > 0 for m in moves)

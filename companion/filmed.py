"""A filmed synthetic table: a scene's cars on a rendered table, moved as a hand moves
them, filmed frame by frame and tracked by a live table, with the truth kept beside it.

The table is the scene's size with flat anchor markers near its edges (ids no car uses)
and a roof marker on each car. A car is moved only in rendered frames, at most
`MAX_STEP_MM` and `MAX_TURN_DEG` from one frame to the next (vision.playable's pace of
a hand): a pose alone is reached by a straight slide, a path is driven through its
points. Each move ends with a few still frames so the tracker settles where the car
stands. Every frame goes through `LiveTable.process`, as the camera thread's would (its
thread is never started), so a TableGame built on `live` sees exactly what it would see
at a table.

The error the rules could have been handed is measured against the truth: `read()` at
the moment the game is asked something (every car, the tracker's pose and the latest
frame's own), and every frame of a drive for the driving car (its path is read).

Resolution: 1920 x 1080 with 3 x 3 supersampling. Measured on 30 random slides of a
75 x 32 mm car with a 20 mm marker over a 1828.8 x 914.4 mm table, settled 4 frames:
positions within 0.11 mm, headings within 0.55 degree (2 x 2 supersampling: 0.85 degree,
too near the 1 degree a scenario's poses are checked to; 1280 x 720: a tracked pose lagged
5 mm behind a slide).
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from calibration.tablefile import AnchorSpec, CarSpec, GateSpec, TableSpec, TerrainSpec
from vision.playable import MAX_STEP_MM, MAX_TURN_DEG, PlayableCars
from vision.render import RenderOptions, TableRenderer

from .live import LiveTable

WIDTH_PX, HEIGHT_PX, SUPERSAMPLE = 1920, 1080, 3
FPS = 30.0
#: Still frames after every move (and at the start): the tracker averages a standing car.
SETTLE_FRAMES = 4
ROOF_MM = 30.0
MARKER_MM = 20.0
ANCHOR_MM = 60.0
#: A roof marker needs a white margin of one cell (a 4x4 marker has 6 cells a side with its
#: border) inside the roof: a narrow car (a 20 mm bike) carries a smaller marker.
MARGIN_FRACTION = 1.0 / 6.0
#: Marker ids in DICT_4X4_50.
DICTIONARY_IDS = 50
#: The most frames one move may take (a typo sending a car across the room stops here).
MAX_MOVE_FRAMES = 3000


class FilmError(ValueError):
    """A move the filmed table cannot make; the message names the car and why."""


def scene_table(scene, reserved_ids: Iterable[int] = (), roof_mm: float = ROOF_MM,
                marker_mm: float = MARKER_MM) -> TableSpec:
    """A table file for a scene: its size, terrain and gates, six flat anchors near the
    edges (ids from the top of the dictionary, none a car's or a reserved one) and its cars
    with roof markers."""
    w, d = float(scene.width_mm), float(scene.depth_mm)
    used = {c.id for c in scene.cars} | {int(i) for i in reserved_ids}
    free = [i for i in range(DICTIONARY_IDS - 1, -1, -1) if i not in used]
    spots = [(50, 50), (w - 50, 50), (w - 50, d - 50), (50, d - 50), (w / 2, 40), (w / 2, d - 40)]
    if len(free) < len(spots):
        raise FilmError(f"the scene's cars use {len(used)} marker ids: fewer than {len(spots)} are left "
                        f"for the table's anchors")
    anchors = tuple(AnchorSpec(free[k], float(x), float(y), ANCHOR_MM) for k, (x, y) in enumerate(spots))
    cars = []
    for c in scene.cars:
        side = min(marker_mm, c.width_mm / (1 + 2 * MARGIN_FRACTION), c.length_mm / (1 + 2 * MARGIN_FRACTION))
        cars.append(CarSpec(c.id, c.name or f"car {c.id}", float(c.length_mm), float(c.width_mm), roof_mm,
                            round(side, 2)))
    terrain = tuple(TerrainSpec(t.name, t.kind, tuple((float(x), float(y)) for x, y in t.polygon.exterior.coords[:-1]))
                    for t in scene.terrain)
    gates = tuple(GateSpec(g.name, g.role, tuple(map(float, g.a)), tuple(map(float, g.b))) for g in scene.gates)
    return TableSpec(w, d, "DICT_4X4_50", anchors, tuple(cars), source=f"{scene.source} (filmed)",
                     terrain=terrain, gates=gates)


def _turn(a: float, b: float) -> float:
    return (b - a + 180.0) % 360.0 - 180.0


class FilmedTable:
    """A scene's table, rendered and tracked frame by frame: `live` is the LiveTable a
    TableGame is built on; `slide`, `drive` and `settle` make frames; `read` measures what
    the tracker gives against the truth."""

    def __init__(self, scene, *, reserved_ids: Iterable[int] = (), width_px: int = WIDTH_PX,
                 height_px: int = HEIGHT_PX, supersample: int = SUPERSAMPLE, seed: int = 0) -> None:
        self.table = scene_table(scene, reserved_ids)
        self.renderer = TableRenderer.overhead(self.table, options=RenderOptions(supersample=supersample),
                                               seed=seed, width=width_px, height=height_px)
        self.cars = PlayableCars({c.id: (c.pose.x_mm, c.pose.y_mm, c.pose.heading_deg) for c in scene.cars},
                                 MAX_STEP_MM, MAX_TURN_DEG)
        # The synthetic camera is known exactly, as a calibration file would give it. No frame
        # source: frames are handed to `process` here, and the live table's thread never runs.
        self.live = LiveTable(_no_source, self.table, self.renderer.camera)
        self.live.description = "the filmed scenario table"
        self.rng = np.random.default_rng(seed + 1)
        self.frames = 0
        self.max_error_mm = 0.0
        self.max_error_deg = 0.0
        self._truth: dict[int, tuple[float, float, float]] = {}
        self._tracked = None

    # --- frames -------------------------------------------------------------------------

    def film(self, frames: int = 1, watch: int | None = None) -> None:
        """Render and track `frames` frames, every car a frame's step further on its way;
        with `watch`, that car's tracked pose is read in every frame (its path is)."""
        for _ in range(frames):
            t = self.frames / FPS
            truths = self.cars.poses_at(t)
            image = self.renderer.render(truths, self.rng).image
            self._tracked = self.live.process(image, self.frames, t)
            self._truth = {c.id: (c.x_mm, c.y_mm, c.heading_deg) for c in truths}
            self.frames += 1
            if watch is not None:
                self._compare(self._tracked.cars, only=watch)

    def settle(self, frames: int = SETTLE_FRAMES) -> None:
        self.film(frames)

    def _go(self, watch: int | None) -> None:
        for _ in range(MAX_MOVE_FRAMES):
            if not self.cars.moving():
                break
            self.film(1, watch)
        else:
            raise FilmError(f"a move took more than {MAX_MOVE_FRAMES} frames")
        self.settle()

    def _check(self, marker: int, pose, what: str) -> tuple[float, float, float]:
        if self.table.car(marker) is None:
            raise FilmError(f"{what}: there is no car with marker {marker} on the table "
                            f"(the scene's cars: {', '.join(str(i) for i in self.table.car_ids)})")
        try:
            x, y, h = (float(v) for v in list(pose)[:3])
        except (TypeError, ValueError):
            raise FilmError(f"{what}: a pose is [x_mm, y_mm, heading_deg], not {pose!r}") from None
        if not all(math.isfinite(v) for v in (x, y, h)):
            raise FilmError(f"{what}: a pose must be finite numbers, not {pose!r}")
        return x, y, h

    def slide(self, marker: int, pose, what: str = "a slide") -> None:
        """Slide a car straight to a pose (turning evenly on the way), then let it stand."""
        self.cars.move(marker, *self._check(marker, pose, what))
        self._go(None)

    def drive(self, marker: int, path, what: str = "a drive") -> None:
        """Drive a car from where it stands through each pose of a path, then let it stand;
        its tracked pose is read in every frame of the drive."""
        if not isinstance(path, (list, tuple)) or not path:
            raise FilmError(f"{what}: a path is a list of poses [x_mm, y_mm, heading_deg], not {path!r}")
        for p in path:
            self.cars.move(marker, *self._check(marker, p, what))
        self._go(marker)

    def pose(self, marker: int) -> tuple[float, float, float]:
        """Where a car truly stands now."""
        return self.cars.pose(marker)

    # --- the truth against the tracker --------------------------------------------------

    def read(self) -> None:
        """The game is about to read the table: every car's tracked pose, and the latest
        frame's own (a resolution measures from it), against where it truly stands."""
        if self._tracked is None:
            return
        self._compare(self._tracked.cars)
        self._compare(self._tracked.located.cars)

    def _compare(self, cars, only: int | None = None) -> None:
        for c in cars:
            if only is not None and c.id != only:
                continue
            if getattr(c, "stale", False) or c.id not in self._truth:
                continue            # a car not seen in this frame gives the rules nothing new
            x, y, h = self._truth[c.id]
            self.max_error_mm = max(self.max_error_mm, math.hypot(c.x_mm - x, c.y_mm - y))
            self.max_error_deg = max(self.max_error_deg, abs(_turn(h, c.heading_deg)))

    def to_json(self) -> dict:
        return {"frames": self.frames, "max_pose_error_mm": round(self.max_error_mm, 3),
                "max_heading_error_deg": round(self.max_error_deg, 3)}


def _no_source():
    raise FilmError("the filmed table has no frame source: its frames are handed to LiveTable.process")

"""The demo's scripted game: a convoy of cars taking turns to drive round a track.

Like a real activation sequence, one car moves at a time while the others
stand: it pauses, drives a template's length (accelerating and braking), stops,
and the next car goes, from the front of the convoy to its back, so that no car
drives into the one ahead.  The cars run close (a gun's reach apart), as a
rolling-road game's pack does, so there is always something to shoot at.  The track is a stadium (two straights, two bends), so
the cars turn as well as drive straight.  The script is a pure function of
time, so any frame can be rendered again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources

from calibration.tablefile import TableSpec, parse_table

from .render import CarTruth

#: How far each car drives on its turn, round after round (mm).
STEPS_MM = (180.0, 120.0, 240.0, 150.0, 210.0, 90.0)
SPEED_MM_S = 260.0
PAUSE_BEFORE_S = 0.35
PAUSE_AFTER_S = 0.25
#: Centre to centre along the track: with 70-95 mm cars, 2-3 in between bumpers.
CONVOY_SPACING_MM = 165.0


def demo_table() -> TableSpec:
    """The built-in demo table (a 4 ft x 2 ft 8 in mat, six anchors, five cars)."""
    text = resources.files("vision").joinpath("data/demo_table.toml").read_text(encoding="utf-8")
    return parse_table(text, "<built-in demo table>")


@dataclass(frozen=True)
class Stadium:
    """A closed track: straights along x joined by half-circle bends, driven anticlockwise."""

    cx: float
    cy: float
    half_straight: float
    radius: float

    @property
    def length(self) -> float:
        return 4 * self.half_straight + 2 * math.pi * self.radius

    def pose_at(self, s: float) -> tuple[float, float, float]:
        """(x, y, heading_deg) at arc length s from the start of the near straight."""
        s %= self.length
        straight = 2 * self.half_straight
        bend = math.pi * self.radius
        if s < straight:                                    # near straight, driving +x
            return self.cx - self.half_straight + s, self.cy - self.radius, 0.0
        s -= straight
        if s < bend:                                        # right-hand bend
            a = -math.pi / 2 + s / self.radius
            return (self.cx + self.half_straight + self.radius * math.cos(a),
                    self.cy + self.radius * math.sin(a), _deg(a + math.pi / 2))
        s -= bend
        if s < straight:                                    # far straight, driving -x
            return self.cx + self.half_straight - s, self.cy + self.radius, 180.0
        s -= straight
        a = math.pi / 2 + s / self.radius                   # left-hand bend
        return (self.cx - self.half_straight + self.radius * math.cos(a),
                self.cy + self.radius * math.sin(a), _deg(a + math.pi / 2))


def _deg(rad: float) -> float:
    d = math.degrees(rad) % 360.0
    return d - 360.0 if d > 180.0 else d


class DemoScript:
    """Poses of the table's cars at any time, taking turns round a stadium."""

    def __init__(self, table: TableSpec) -> None:
        self.car_ids = table.car_ids
        self.track = Stadium(table.width_mm / 2, table.depth_mm / 2,
                             0.25 * table.width_mm, 0.30 * table.depth_mm)
        n = max(len(self.car_ids), 1)
        # The front car goes first, so a car never closes on one still to move.
        self._steps = STEPS_MM
        self._turns = [(PAUSE_BEFORE_S, step / SPEED_MM_S * 1.5, PAUSE_AFTER_S) for step in self._steps]
        self._round_s = [n * sum(t) for t in self._turns]
        self._cycle_s = sum(self._round_s)

    def progress_mm(self, index: int, t: float) -> float:
        """How far car number `index` has driven along the track by time t."""
        n = len(self.car_ids)
        cycles, t = divmod(max(t, 0.0), self._cycle_s)
        done = cycles * sum(self._steps)
        for step, turn, round_s in zip(self._steps, self._turns, self._round_s):
            if t >= round_s:
                done += step
                t -= round_s
                continue
            per_car = sum(turn)
            active, t_in = divmod(t, per_car)
            slot = n - 1 - index                              # the front car (last index) goes first
            if slot < active:
                done += step
            elif slot == active:
                pause, drive, _ = turn
                u = min(max((t_in - pause) / drive, 0.0), 1.0)
                done += step * u * u * (3 - 2 * u)          # smoothstep: accelerate, brake
            break
        return done + index * CONVOY_SPACING_MM

    def poses_at(self, t: float) -> list[CarTruth]:
        out = []
        for i, car_id in enumerate(self.car_ids):
            x, y, heading = self.track.pose_at(self.progress_mm(i, t))
            out.append(CarTruth(car_id, x, y, heading))
        return out


#: The demo's table as players' big tables are (issue 26): 6 x 4 ft, under two cameras.
BIG_DEMO_MM = (1828.8, 1219.2)
#: Roof markers on the big demo table (mm).
BIG_DEMO_MARKER_MM = 24.0


def big_demo_table() -> TableSpec:
    """The demo table at 6 x 4 ft: the same cars and terrain kinds, eight anchors (the
    corners and the middle of each edge), so each of two cameras over part of it sees
    at least five.  Its roof markers are 24 mm, as `doctor` advises for a table this
    big: two 1080p cameras over strips of it see about a millimetre a pixel, and a
    20 mm marker (18 px) is marginal there; 24 mm with its margin fits a 32 mm roof."""
    import dataclasses

    from calibration.tablefile import AnchorSpec
    table = demo_table()
    w, d = BIG_DEMO_MM
    spots = [(50, 50), (w - 50, 50), (w - 50, d - 50), (50, d - 50),
             (w / 2, 45), (w / 2, d - 45), (45, d / 2), (w - 45, d / 2)]
    anchors = tuple(AnchorSpec(i, float(x), float(y), 60.0) for i, (x, y) in enumerate(spots))
    sx, sy = w / table.width_mm, d / table.depth_mm
    terrain = tuple(dataclasses.replace(t, points=tuple((x * sx, y * sy) for x, y in t.points))
                    for t in table.terrain)
    cars = tuple(dataclasses.replace(c, marker_mm=max(c.marker_mm, BIG_DEMO_MARKER_MM)) for c in table.cars)
    return dataclasses.replace(table, width_mm=w, depth_mm=d, anchors=anchors, terrain=terrain, cars=cars,
                               gates=(), source="<built-in demo table, 6 x 4 ft>")


def demo_camera_regions(table: TableSpec, n: int) -> list[tuple[float, float, float, float]]:
    """The parts of the table (x0, y0, x1, y1 mm) `n` demo cameras look at: strips across
    the table from the near edge to the far one, each 60 % deeper than an even share,
    overlapping their neighbours."""
    d = table.depth_mm
    share = d / n
    grow = 0.2 * share if n > 1 else 0.0
    return [(0.0, max(i * share - grow, 0.0), table.width_mm, min((i + 1) * share + grow, d)) for i in range(n)]

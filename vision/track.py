"""The tracker: one frame's car poses turned into steady, honest table poses.

- A car standing still is averaged over the frames it stands (its sigma shrinks,
  down to the part that no number of frames removes: table pose, roof height).
- A car that moves is followed at once: a clean measurement outside the
  still-standing gate replaces the average.
- A car not seen keeps its last pose, marked stale with its age; nothing moves
  a car but seeing it.
- A poor measurement (an outline that would not refine: blurred, a thin margin,
  half under a hand) may refine a standing car's pose a little, but cannot move
  it: a move it reports waits for the next frame to agree.  A car's first
  sighting is taken even when poor (with the larger sigma it carries): a car
  seen is never left out.
- A frame whose table pose could not be checked (too few anchors in view)
  believes no car: every car is stale, and its sigma grows with the time since
  the pose was last checked (a knocked camera moves every car at once).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from calibration.tablefile import TableSpec

from .locate import CarLocation, FrameLocation, normalize_deg


@dataclass(frozen=True)
class TrackerSettings:
    """How the tracker weighs what it sees."""

    #: A measurement within this many sigmas of the average is the car standing still.
    gate_sigmas: float = 3.0
    #: Below this distance a measurement is never called a move (noise, not a nudge).
    still_mm: float = 0.15
    still_deg: float = 0.3
    #: The running average forgets beyond this many frames, so a slow creep still shows.
    max_frames: int = 60
    #: An outline noisier than this (pixels of edge scatter) is poor: it cannot move a car alone.
    poor_edge_sigma_px: float = 0.3
    #: How fast a car's doubt grows while the table's pose cannot be checked.
    unchecked_mm_per_s: float = 10.0
    unchecked_deg_per_s: float = 2.0


@dataclass(frozen=True)
class TrackedCar:
    """A car's tracked pose."""

    id: int
    name: str
    x_mm: float
    y_mm: float
    heading_deg: float
    sigma_mm: float
    sigma_deg: float
    seen: bool           # found (and believed) in the latest frame
    age_s: float         # since it was last believed
    frames: int          # frames in its current average (1 after a move)
    #: Why it is stale: "" when seen; "not seen", "table pose unchecked", "poor outline".
    why_stale: str = ""

    @property
    def stale(self) -> bool:
        return not self.seen

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name, "x_mm": round(self.x_mm, 2),
                "y_mm": round(self.y_mm, 2), "heading_deg": round(self.heading_deg, 2),
                "sigma_mm": round(self.sigma_mm, 3), "sigma_deg": round(self.sigma_deg, 3),
                "stale": self.stale, "age_s": round(self.age_s, 2), "frames": self.frames,
                **({"why_stale": self.why_stale} if self.why_stale else {})}


@dataclass
class _Track:
    name: str
    x: float
    y: float
    heading: float
    random_var: float       # (sigma_mm of the random part)^2 of the average
    fixed_var: float        # (sigma_mm)^2 that averaging does not remove
    heading_var: float          # (sigma_deg)^2 of the random part of the average
    fixed_heading_var: float    # (sigma_deg)^2 that averaging does not remove
    frames: int
    seen_s: float
    pending: CarLocation | None = None

    @classmethod
    def start(cls, m: CarLocation, t: float) -> "_Track":
        random_var = m.random_sigma_mm ** 2
        heading_var = _random_deg(m) ** 2
        return cls(m.name, m.x_mm, m.y_mm, m.heading_deg, random_var,
                   max(m.sigma_mm ** 2 - random_var, 0.0), heading_var,
                   max(m.sigma_deg ** 2 - heading_var, 0.0), 1, t)

    @property
    def sigma_mm(self) -> float:
        return math.sqrt(self.random_var + self.fixed_var)

    @property
    def sigma_deg(self) -> float:
        return math.sqrt(self.heading_var + self.fixed_heading_var)


def _random_deg(m: CarLocation) -> float:
    return m.sigma_deg if m.random_sigma_deg is None else m.random_sigma_deg


def _heading_gap(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


class Tracker:
    """Turns each frame's located cars into tracked cars."""

    def __init__(self, table: TableSpec, settings: TrackerSettings = TrackerSettings()) -> None:
        self.table = table
        self.settings = settings
        self._tracks: dict[int, _Track] = {}
        self._checked_s: float | None = None

    def update(self, located: FrameLocation, time_s: float) -> tuple[TrackedCar, ...]:
        believed, poor = set(), set()
        if located.pose_checked:
            self._checked_s = time_s
            for m in located.cars:
                if self._take(m, time_s):
                    believed.add(m.id)
                else:
                    poor.add(m.id)
        checked_s = time_s if self._checked_s is None else self._checked_s
        unchecked = max(time_s - checked_s, 0.0) if not located.pose_checked else 0.0
        s = self.settings
        out = []
        for spec in self.table.cars:
            track = self._tracks.get(spec.id)
            if track is None:
                continue
            seen = spec.id in believed
            why = ("" if seen else "table pose unchecked" if not located.pose_checked
                   else "poor outline" if spec.id in poor else "not seen")
            # While the pose cannot be checked every car may be off by the view's
            # move: the doubt grows from the last frame that checked it.
            sigma_mm = track.sigma_mm + s.unchecked_mm_per_s * unchecked
            sigma_deg = track.sigma_deg + s.unchecked_deg_per_s * unchecked
            out.append(TrackedCar(spec.id, track.name, track.x, track.y, track.heading,
                                  sigma_mm, sigma_deg, seen, max(time_s - track.seen_s, 0.0),
                                  track.frames, why))
        return tuple(out)

    def _poor(self, m: CarLocation) -> bool:
        return m.edge_sigma_px is None or m.edge_sigma_px > self.settings.poor_edge_sigma_px

    def _still(self, x: float, y: float, heading: float, m: CarLocation,
               sigma_mm: float, sigma_deg: float) -> bool:
        """Is `m` the same pose as (x, y, heading), within the gate?"""
        s = self.settings
        return (math.hypot(m.x_mm - x, m.y_mm - y) <= max(s.gate_sigmas * sigma_mm, s.still_mm)
                and _heading_gap(m.heading_deg, heading) <= max(s.gate_sigmas * sigma_deg, s.still_deg))

    def _take(self, m: CarLocation, t: float) -> bool:
        """Fold a measurement into its car's track; True if the car is believed seen."""
        track = self._tracks.get(m.id)
        if track is None:
            # Even a poor first sighting: its sigma says how poor, and a car
            # seen but left out of the snapshot would be silently lost.
            self._tracks[m.id] = _Track.start(m, t)
            return True
        gate_mm = math.hypot(track.sigma_mm, m.sigma_mm)
        gate_deg = math.hypot(track.sigma_deg, m.sigma_deg)
        if self._still(track.x, track.y, track.heading, m, gate_mm, gate_deg):
            self._average(track, m, t)
            return True
        # It moved, or the measurement is wrong.
        if self._poor(m):
            pending, track.pending = track.pending, m
            if pending is not None and self._still(pending.x_mm, pending.y_mm, pending.heading_deg, m,
                                                   math.hypot(pending.sigma_mm, m.sigma_mm),
                                                   math.hypot(pending.sigma_deg, m.sigma_deg)):
                self._tracks[m.id] = _Track.start(m, t)     # two frames agree: it did move
                return True
            return False
        self._tracks[m.id] = _Track.start(m, t)             # a clean sighting elsewhere: follow at once
        return True

    def _average(self, track: _Track, m: CarLocation, t: float) -> None:
        """Inverse-variance average of the random part; the fixed part stays."""
        m_random = max(m.random_sigma_mm, 1e-4) ** 2
        # Forget beyond max_frames: the average weighs at most that many frames' worth.
        floor = m_random / self.settings.max_frames
        track_random = max(track.random_var, floor)
        w_track, w_m = 1.0 / track_random, 1.0 / m_random
        k = w_m / (w_track + w_m)
        track.x += k * (m.x_mm - track.x)
        track.y += k * (m.y_mm - track.y)
        m_heading_var = max(_random_deg(m), 1e-4) ** 2
        track_heading_var = max(track.heading_var, m_heading_var / self.settings.max_frames)
        kh = (1 / m_heading_var) / (1 / track_heading_var + 1 / m_heading_var)
        delta = (m.heading_deg - track.heading + 180.0) % 360.0 - 180.0
        track.heading = normalize_deg(track.heading + kh * delta)
        track.random_var = 1.0 / (w_track + w_m)
        track.heading_var = 1.0 / (1 / track_heading_var + 1 / m_heading_var)
        track.fixed_var = max(m.sigma_mm ** 2 - m.random_sigma_mm ** 2, 0.0)
        track.fixed_heading_var = max(m.sigma_deg ** 2 - _random_deg(m) ** 2, 0.0)
        track.frames = min(track.frames + 1, self.settings.max_frames)
        track.seen_s = t
        track.pending = None

"""The playable demo table: cars that stand still until a player moves them from the page.

A move is a pose to drive to.  The car does not jump there: in each rendered frame it
goes at most `MAX_STEP_MM` and turns at most `MAX_TURN_DEG` towards it, as a hand
pushing a car would, so the tracker follows it frame by frame and records the path it
drove (the rule systems that read a move from the path driven need one).  Poses given
while the car is still on its way queue up behind each other, so a car dragged along a
curve drives that curve, not the chord.

No OpenCV here: the synthetic source renders what `poses_at` says.
"""

from __future__ import annotations

import math
import threading
from collections import deque

from .render import CarTruth

#: The most a car goes in one frame: small enough that the tracker follows it as a
#: move (and every system's path reading sees each step), slow enough to look like a hand.
MAX_STEP_MM = 5.0
MAX_TURN_DEG = 3.0
#: Poses a car may have queued; a longer drag keeps its latest poses (the older ones
#: were on the way and are skipped straight through).
MAX_QUEUED = 400


def _turn(from_deg: float, to_deg: float) -> float:
    """The short way round from one heading to another, in (-180, 180]."""
    d = (to_deg - from_deg) % 360.0
    return d - 360.0 if d > 180.0 else d


def _heading(deg: float) -> float:
    d = deg % 360.0
    return d - 360.0 if d > 180.0 else d


class PlayableCars:
    """Where each car of the demo table stands, frame by frame, and where players sent it.

    `move(marker, x_mm, y_mm, heading_deg)` may be called from any thread (the page's
    requests); `poses_at(t)` from the frame source's, once per frame: each new `t`
    advances every moving car by one frame's step.
    """

    def __init__(self, poses: dict[int, tuple[float, float, float]],
                 max_step_mm: float = MAX_STEP_MM, max_turn_deg: float = MAX_TURN_DEG) -> None:
        if max_step_mm <= 0 or max_turn_deg <= 0:
            raise ValueError("a car's step and turn per frame must be positive")
        self.max_step_mm = max_step_mm
        self.max_turn_deg = max_turn_deg
        self._lock = threading.Lock()
        self._pose = {int(m): (float(x), float(y), _heading(float(h))) for m, (x, y, h) in poses.items()}
        self._queue: dict[int, deque] = {m: deque(maxlen=MAX_QUEUED) for m in self._pose}
        self._t: float | None = None

    @property
    def car_ids(self) -> list[int]:
        return sorted(self._pose)

    def pose(self, marker: int) -> tuple[float, float, float]:
        """Where the car stands in the latest frame (x_mm, y_mm, heading_deg)."""
        with self._lock:
            return self._pose[marker]

    def moving(self, marker: int | None = None) -> bool:
        """Whether a car (any car, without `marker`) still has somewhere to go."""
        with self._lock:
            if marker is None:
                return any(self._queue.values())
            return bool(self._queue[marker])

    def move(self, marker: int, x_mm: float, y_mm: float, heading_deg: float) -> None:
        """Send a car towards a pose: it drives there in the frames that follow, after
        any pose it was already on its way to."""
        with self._lock:
            if marker not in self._pose:
                raise KeyError(f"there is no car with marker {marker} on the demo table")
            self._queue[marker].append((float(x_mm), float(y_mm), _heading(float(heading_deg))))

    def place(self, marker: int, x_mm: float, y_mm: float, heading_deg: float) -> None:
        """Put a car there at once, forgetting where it was going (a game resumed from its
        file, before the camera has seen anything: no move to follow)."""
        with self._lock:
            if marker not in self._pose:
                raise KeyError(f"there is no car with marker {marker} on the demo table")
            self._pose[marker] = (float(x_mm), float(y_mm), _heading(float(heading_deg)))
            self._queue[marker].clear()

    def poses_at(self, t: float) -> list[CarTruth]:
        """Every car's pose in the frame at time t (a later t than the last call: one
        frame's step further)."""
        with self._lock:
            if self._t is None or t > self._t:
                if self._t is not None:
                    for marker in self._pose:
                        self._step(marker)
                self._t = t
            return [CarTruth(m, *self._pose[m]) for m in sorted(self._pose)]

    def _step(self, marker: int) -> None:
        """One frame of a car's drive: its share of the way to each queued pose in turn,
        straight and turning evenly, at most max_step_mm and max_turn_deg in all."""
        queue = self._queue[marker]
        x, y, h = self._pose[marker]
        budget = 1.0                                  # of this frame's step, in [0, 1]
        while queue and budget > 1e-9:
            tx, ty, th = queue[0]
            dist = math.hypot(tx - x, ty - y)
            turn = _turn(h, th)
            cost = max(dist / self.max_step_mm, abs(turn) / self.max_turn_deg)
            if cost <= budget:                        # it gets there this frame
                x, y, h = tx, ty, th
                budget -= cost
                queue.popleft()
                continue
            k = budget / cost
            x, y, h = x + (tx - x) * k, y + (ty - y) * k, _heading(h + turn * k)
            budget = 0.0
        self._pose[marker] = (x, y, h)

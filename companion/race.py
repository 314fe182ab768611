"""Races: tracked car poses folded, frame by frame, into gate crossings, laps and
a finishing order.

A car crosses a gate when its whole footprint goes from not past the line to
wholly past it between the posts, with post A on the driver's left
(`companion.geometry.gates.Gate.crossing`); crossing back undoes it.  Only cars
seen in a frame count: a stale car keeps its last seen pose, so it can neither
cross nor uncross a gate until it is seen again (and then the crossing is
judged from where it was last seen to where it is now).  A gate whose posts
move (a marker gate nudged) is judged at its newest place for both poses, so
moving a gate over a standing car never counts as the car crossing it.

Pure: poses in, crossings out; no OpenCV, so rule systems can use it on
recorded paths as well as on the live table.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .geometry import Footprint, Gate, Pose

#: The gate role whose crossings count laps (the table file's `role`).
START_FINISH = "start_finish"
FINISH = "finish"
#: Depths this close to the line are left to the gate's own judgement (rounding).
_TIE_MM = 1e-6


@dataclass(frozen=True)
class Crossing:
    """One car crossing one gate, forwards (+1) or back (-1)."""

    car_id: int
    gate: str
    direction: int
    frame: int
    time_s: float
    #: How far the whole car stood past the line at the frame that decided it
    #: (its rearmost point; negative after a crossing back).  Against `sigma_mm`
    #: it says how close the call was.
    margin_mm: float
    sigma_mm: float = 0.0
    #: The frame of the car's pose before (frame - 1 when it was seen throughout;
    #: earlier when it went unseen, and the crossing is judged across the gap).
    from_frame: int = -1

    @property
    def seen_throughout(self) -> bool:
        return self.from_frame == self.frame - 1

    def to_json(self) -> dict:
        return {"car": self.car_id, "gate": self.gate, "direction": self.direction, "frame": self.frame,
                "time_s": round(self.time_s, 3), "margin_mm": round(self.margin_mm, 2),
                "sigma_mm": round(self.sigma_mm, 3), "from_frame": self.from_frame}


def gates_from_posts(posts: Iterable[Any]) -> tuple[Gate, ...]:
    """Geometry gates from anything with `name`, `role`, `a_mm`, `b_mm` (a table
    file's measured `GateSpec`, or `vision.gates.GatePosts`); gates whose posts
    are not known yet are left out."""
    return tuple(Gate(tuple(p.a_mm), tuple(p.b_mm), p.name, p.role) for p in posts
                 if p.a_mm is not None and p.b_mm is not None)


def _field(car: Any, key: str, default: Any = None) -> Any:
    if isinstance(car, Mapping):
        return car.get(key, default)
    return getattr(car, key, default)


class RaceTracker:
    """Crossings per car per gate from tracked poses; laps at the start/finish gate.

    `cars` are the table's cars (anything with `id`, `length_mm`, `width_mm`:
    the table file's `CarSpec`); their footprints are what must cross.
    `start_finish` names the gate that counts laps (default: the one gate whose
    role is "start_finish", if there is exactly one).  With `start_behind_line`
    (the default) the cars start on the grid short of that line, so their first
    crossing starts lap 1 and each later one completes a lap; otherwise every
    crossing completes one.  With `laps`, a car finishes when it completes that
    many; without, a car finishes when it first crosses a gate whose role is
    "finish".
    """

    def __init__(self, gates: Iterable[Gate], cars: Iterable[Any], *, start_finish: str | None = None,
                 laps: int | None = None, start_behind_line: bool = True) -> None:
        self.gates: dict[str, Gate] = {}
        for g in gates:
            if g.name in self.gates:
                raise ValueError(f"two gates are named '{g.name}'")
            self.gates[g.name] = g
        self.sizes: dict[int, tuple[float, float, str]] = {
            int(c.id): (float(c.length_mm), float(c.width_mm), str(getattr(c, "name", ""))) for c in cars}
        if start_finish is None:
            named = [g.name for g in self.gates.values() if g.role == START_FINISH]
            start_finish = named[0] if len(named) == 1 else None
        elif start_finish not in self.gates:
            raise ValueError(f"no gate named '{start_finish}' (gates: {', '.join(self.gates) or 'none'})")
        self.start_finish = start_finish
        self.laps_to_finish = laps
        self.start_behind_line = start_behind_line
        #: Every crossing, forwards and back, in the order they happened.
        self.crossings: list[Crossing] = []
        self._net: dict[tuple[int, str], int] = {}
        self._last: dict[int, tuple[Footprint, int]] = {}      # car -> last seen footprint, its frame
        self._finished: dict[int, Crossing] = {}
        self._gate_key: tuple[Gate, ...] = ()
        self._gate_list: list[Gate] = []
        self._posts_a = np.zeros((0, 2))
        self._normals = np.zeros((0, 2))

    @classmethod
    def for_table(cls, table: Any, **kwargs: Any) -> "RaceTracker":
        """A tracker for a table file's cars and measured gates (marker gates join
        when `update` is given their posts)."""
        return cls(gates_from_posts(table.gates), table.cars, **kwargs)

    # --- folding in frames -----------------------------------------------------------

    def update(self, frame: int, time_s: float, cars: Iterable[Any],
               gates: Iterable[Gate] | None = None) -> list[Crossing]:
        """Fold in one frame's tracked cars; return the crossings it made.

        `cars`: `TrackedCar`s or snapshot dicts (`id`, `x_mm`, `y_mm`,
        `heading_deg`, `stale`, `sigma_mm`).  `gates`: the gates' current places
        (a marker gate's posts as last seen), replacing those of the same name;
        a gate named here for the first time joins."""
        if gates is not None:
            for g in gates:
                self.gates[g.name] = g
            if self.start_finish is None:
                named = [g.name for g in self.gates.values() if g.role == START_FINISH]
                self.start_finish = named[0] if len(named) == 1 else None
        self._stack_gates()
        made: list[Crossing] = []
        for car in cars:
            car_id = int(_field(car, "id"))
            size = self.sizes.get(car_id)
            if size is None or _field(car, "stale", False):
                continue                      # not ours, or not seen this frame: nothing moved
            length, width, name = size
            after = Footprint(car_id, Pose(float(_field(car, "x_mm")), float(_field(car, "y_mm")),
                                           float(_field(car, "heading_deg")), float(_field(car, "sigma_mm", 0.0) or 0.0)),
                              length, width, name)
            last = self._last.get(car_id)
            self._last[car_id] = (after, frame)
            if last is None:
                continue
            before, before_frame = last
            # Cheap first, every gate at once: only a change of "wholly past" (the
            # rearmost corner's depth past the line changing sign) can be a crossing;
            # the gate itself judges the few that might be.
            rear_before, rear_after = self._rear_depths(before), self._rear_depths(after)
            maybe = ((rear_before > 0) != (rear_after > 0)) | (np.abs(rear_before) < _TIE_MM) \
                | (np.abs(rear_after) < _TIE_MM)
            for k in np.flatnonzero(maybe):
                gate = self._gate_list[k]
                direction = gate.crossing(before, after)
                if direction:
                    made.append(self._record(Crossing(car_id, gate.name, direction, frame, time_s,
                                                      gate.distance_past(after, "rear"), after.pose.sigma_mm,
                                                      before_frame)))
        return made

    def _stack_gates(self) -> None:
        key = tuple(self.gates.values())
        if key != self._gate_key:                  # gates added or moved: stack them again
            self._gate_key = key
            self._gate_list = list(key)
            self._posts_a = np.array([g.a for g in key], float).reshape(-1, 2)
            self._normals = np.array([g.normal for g in key], float).reshape(-1, 2)

    def _rear_depths(self, car: Footprint) -> np.ndarray:
        """Each gate's rearmost-corner depth of the car past its line (G,)."""
        rel = car.corners[None, :, :] - self._posts_a[:, None, :]           # (G, 4, 2)
        return np.einsum("gkc,gc->gk", rel, self._normals).min(axis=1)

    def _record(self, c: Crossing) -> Crossing:
        self.crossings.append(c)
        key = (c.car_id, c.gate)
        self._net[key] = self._net.get(key, 0) + c.direction
        if self._finishes_now(c.car_id):
            self._finished.setdefault(c.car_id, c)
        else:
            self._finished.pop(c.car_id, None)      # a crossing back over the line unfinishes
        return c

    # --- reading ---------------------------------------------------------------------

    def net(self, car_id: int, gate: str) -> int:
        """Forward crossings less crossings back."""
        return self._net.get((car_id, gate), 0)

    def laps(self, car_id: int) -> int:
        """Laps completed at the start/finish gate (0 without one)."""
        if self.start_finish is None:
            return 0
        n = self.net(car_id, self.start_finish) - (1 if self.start_behind_line else 0)
        return max(n, 0)

    def _finishes_now(self, car_id: int) -> bool:
        if self.laps_to_finish is not None:
            return self.laps(car_id) >= self.laps_to_finish
        return any(self.net(car_id, g.name) > 0 for g in self.gates.values() if g.role == FINISH)

    @property
    def finish_order(self) -> list[int]:
        """Cars that have finished, first first.  Two finishing in the same frame
        are told apart by how far past the line each already was."""
        done = sorted(self._finished.values(), key=lambda c: (c.frame, -c.margin_mm))
        return [c.car_id for c in done]

    def finish(self, car_id: int) -> Crossing | None:
        """The crossing with which a car finished (None if it has not)."""
        return self._finished.get(car_id)

    def to_json(self) -> dict:
        cars = sorted(self.sizes)
        return {"gates": [{"name": g.name, "role": g.role, "a": list(g.a), "b": list(g.b)}
                          for g in self.gates.values()],
                "start_finish": self.start_finish,
                "cars": [{"id": i, "laps": self.laps(i),
                          "net": {g: self.net(i, g) for g in self.gates if self.net(i, g)}} for i in cars],
                "finish_order": self.finish_order,
                "crossings": [c.to_json() for c in self.crossings]}


class PathRecorder:
    """Each car's path as the camera saw it, for a rule system's move action
    (`"path": [[x_mm, y_mm, heading_deg], ...]`).

    A pose is kept when the car has moved `min_step_mm` or turned `min_turn_deg`
    since the last one kept, so a car standing still adds nothing but its
    tracker's jitter is not mistaken for a path; the newest pose always ends the
    path.  Stale cars add nothing: a path is only what was seen."""

    def __init__(self, min_step_mm: float = 5.0, min_turn_deg: float = 2.0) -> None:
        self.min_step_mm = min_step_mm
        self.min_turn_deg = min_turn_deg
        self._kept: dict[int, list[tuple[float, float, float]]] = {}
        self._newest: dict[int, tuple[float, float, float]] = {}

    def update(self, cars: Iterable[Any]) -> None:
        for car in cars:
            if _field(car, "stale", False):
                continue
            car_id = int(_field(car, "id"))
            pose = (float(_field(car, "x_mm")), float(_field(car, "y_mm")), float(_field(car, "heading_deg")))
            kept = self._kept.setdefault(car_id, [pose])
            x, y, h = kept[-1]
            turned = abs(((pose[2] - h + 540.0) % 360.0) - 180.0)
            if math.hypot(pose[0] - x, pose[1] - y) >= self.min_step_mm or turned >= self.min_turn_deg:
                kept.append(pose)
            self._newest[car_id] = pose

    def path(self, car_id: int) -> list[list[float]]:
        kept = list(self._kept.get(car_id, []))
        newest = self._newest.get(car_id)
        if newest is not None and kept and kept[-1] != newest:
            kept.append(newest)
        return [[round(x, 2), round(y, 2), round(h, 2)] for x, y, h in kept]

    def paths(self) -> dict[int, list[list[float]]]:
        return {car_id: self.path(car_id) for car_id in self._kept}

    def clear(self, car_id: int | None = None) -> None:
        """Start afresh (one car's path, after its move is resolved; or every car's)."""
        for store in (self._kept, self._newest):
            if car_id is None:
                store.clear()
            else:
                store.pop(car_id, None)

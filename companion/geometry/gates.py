"""Gates: directed segments that cars drive through.

A gate runs from post A to post B; it is crossed in the direction that has A on
the driver's left and B on the right (the left-hand normal of A -> B).  A car
has crossed when its whole footprint has gone from not past the line to wholly
past it, passing between the posts.  Crossing back undoes it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from .pose import Footprint


@dataclass(frozen=True)
class Gate:
    a: tuple[float, float]
    b: tuple[float, float]
    name: str = ""
    #: What the game makes of it ("start", "finish", "checkpoint", ...): the rule system's to say.
    role: str = ""

    @property
    def normal(self) -> np.ndarray:
        """Unit vector in the direction of travel through the gate."""
        d = np.asarray(self.b, float) - np.asarray(self.a, float)
        n = np.array([-d[1], d[0]])
        return n / np.linalg.norm(n)

    @property
    def width_mm(self) -> float:
        return float(np.linalg.norm(np.asarray(self.b, float) - np.asarray(self.a, float)))

    def signed_depths(self, car: Footprint) -> np.ndarray:
        """Each corner's distance past the gate's line (positive: past)."""
        return (car.corners - np.asarray(self.a, float)) @ self.normal

    def distance_past(self, car: Footprint, part: str = "rear") -> float:
        """How far past the line a car is: its rearmost point ("rear", the whole car
        past when positive) or its foremost ("front")."""
        d = self.signed_depths(car)
        return float(d.min() if part == "rear" else d.max())

    def wholly_past(self, car: Footprint) -> bool:
        return bool(self.signed_depths(car).min() > 0)

    def wholly_before(self, car: Footprint) -> bool:
        return bool(self.signed_depths(car).max() < 0)

    def crossing(self, before: Footprint, after: Footprint) -> int:
        """+1 if the car crossed forwards between two poses, -1 if backwards, else 0.

        Forwards: not wholly past before, wholly past after, and its path met
        the segment between the posts (not round the end of the line)."""
        segment = shapely.linestrings([self.a, self.b])
        path = shapely.convex_hull(shapely.union(before.polygon, after.polygon))
        through = bool(shapely.intersects(path, segment))
        if not through:
            return 0
        if not self.wholly_past(before) and self.wholly_past(after):
            return 1
        if self.wholly_past(before) and not self.wholly_past(after):
            return -1
        return 0


class GateCounter:
    """Counts a car's net crossings of a gate over a sequence of poses."""

    def __init__(self, gate: Gate) -> None:
        self.gate = gate
        self.crossings: dict[int, int] = {}
        self._last: dict[int, Footprint] = {}

    def update(self, car: Footprint) -> int:
        """Fold in the car's newest footprint; return its net crossings so far."""
        prev = self._last.get(car.id)
        if prev is not None:
            self.crossings[car.id] = self.crossings.get(car.id, 0) + self.gate.crossing(prev, car)
        self._last[car.id] = car
        return self.crossings.get(car.id, 0)

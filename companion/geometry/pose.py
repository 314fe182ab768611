"""Poses and footprints: where a car stands and the rectangle it covers.

Table millimetres and degrees, headings anticlockwise from +x (DESIGN.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import shapely
from shapely.geometry import Polygon

MM_PER_IN = 25.4


def inches(value_in: float) -> float:
    """Millimetres in `value_in` inches (rulebooks measure in inches)."""
    return value_in * MM_PER_IN


def to_inches(value_mm: float) -> float:
    return value_mm / MM_PER_IN


def normalize_deg(angle: float) -> float:
    """An angle in (-180, 180]."""
    a = math.fmod(angle, 360.0)
    if a <= -180.0:
        a += 360.0
    elif a > 180.0:
        a -= 360.0
    return a


@dataclass(frozen=True)
class Pose:
    """A position and heading on the table, with its doubt.

    `sigma_mm` and `sigma_deg` are as the tracker reports them: about 95 % of
    errors fall within twice them.
    """

    x_mm: float
    y_mm: float
    heading_deg: float
    sigma_mm: float = 0.0
    sigma_deg: float = 0.0

    @property
    def xy(self) -> np.ndarray:
        return np.array([self.x_mm, self.y_mm])

    @property
    def forward(self) -> np.ndarray:
        t = math.radians(self.heading_deg)
        return np.array([math.cos(t), math.sin(t)])

    @property
    def left(self) -> np.ndarray:
        t = math.radians(self.heading_deg)
        return np.array([-math.sin(t), math.cos(t)])

    def to_table(self, forward_mm: float, left_mm: float) -> np.ndarray:
        """A point given in this pose's frame (forward, left), in table mm."""
        return self.xy + forward_mm * self.forward + left_mm * self.left

    def to_local(self, point_xy) -> tuple[float, float]:
        """A table point in this pose's frame: (forward, left)."""
        d = np.asarray(point_xy, dtype=float) - self.xy
        return float(d @ self.forward), float(d @ self.left)

    def moved(self, forward_mm: float = 0.0, left_mm: float = 0.0, turn_deg: float = 0.0) -> "Pose":
        """This pose moved in its own frame, then turned."""
        x, y = self.to_table(forward_mm, left_mm)
        return Pose(float(x), float(y), normalize_deg(self.heading_deg + turn_deg), self.sigma_mm, self.sigma_deg)

    @property
    def axis_sigma_mm(self) -> float:
        """One-sigma error along any one direction (sigma_mm is 95 % radius / 2)."""
        return self.sigma_mm * 2.0 / 2.4477

    @property
    def heading_sigma_rad(self) -> float:
        return math.radians(self.sigma_deg) * 2.0 / 1.96


@dataclass(frozen=True)
class Footprint:
    """The rectangle a car covers on the table, with its name and named points.

    `points` names points on the car in its own frame (forward, left) in mm: a
    weapon mount, say. "front_bumper", "rear_bumper" and "centre" are always there.
    """

    id: int
    pose: Pose
    length_mm: float
    width_mm: float
    name: str = ""
    points: tuple[tuple[str, float, float], ...] = ()

    def __post_init__(self) -> None:
        if not (self.length_mm > 0 and self.width_mm > 0):
            raise ValueError(f"car {self.name or self.id}: a footprint needs a positive length and width "
                             f"(got {self.length_mm:g} x {self.width_mm:g} mm)")

    @cached_property
    def corners(self) -> np.ndarray:
        """(4, 2): front-left, front-right, rear-right, rear-left."""
        a, b = self.length_mm / 2, self.width_mm / 2
        t = math.radians(self.pose.heading_deg)
        c, s = math.cos(t), math.sin(t)
        local = np.array([[a, b], [a, -b], [-a, -b], [-a, b]])
        return local @ np.array([[c, s], [-s, c]]) + (self.pose.x_mm, self.pose.y_mm)

    @cached_property
    def polygon(self) -> Polygon:
        return Polygon(self.corners)

    @property
    def centre(self) -> np.ndarray:
        return self.pose.xy

    def point(self, name: str) -> np.ndarray:
        """A named point of the car, in table mm."""
        a = self.length_mm / 2
        if name == "centre":
            return self.pose.xy
        if name == "front_bumper":
            return self.pose.to_table(a, 0.0)
        if name == "rear_bumper":
            return self.pose.to_table(-a, 0.0)
        for n, f, l in self.points:
            if n == name:
                return self.pose.to_table(f, l)
        known = ", ".join(["centre", "front_bumper", "rear_bumper"] + [n for n, _, _ in self.points])
        raise KeyError(f"car {self.name or self.id} has no point '{name}' (it has {known})")

    def at(self, pose: Pose) -> "Footprint":
        """The same car at another pose."""
        return Footprint(self.id, pose, self.length_mm, self.width_mm, self.name, self.points)


@dataclass(frozen=True)
class Articulated:
    """A rig: a tractor and a trailer, each with its own marker and footprint,
    hitched at a point behind the tractor and ahead of the trailer.

    The rig as a whole is the union of the two; `hitch_gap_mm` says how far the
    two hitch points stand apart (a trailer whose marker was mistaken shows a gap).
    """

    tractor: Footprint
    trailer: Footprint
    #: The hitch in each part's own frame (forward, left), mm.
    tractor_hitch: tuple[float, float] = (0.0, 0.0)
    trailer_hitch: tuple[float, float] = (0.0, 0.0)
    parts: tuple[Footprint, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "parts", (self.tractor, self.trailer))

    @property
    def polygon(self):
        return shapely.union(self.tractor.polygon, self.trailer.polygon)

    @property
    def hitch_gap_mm(self) -> float:
        a = self.tractor.pose.to_table(*self.tractor_hitch)
        b = self.trailer.pose.to_table(*self.trailer_hitch)
        return float(np.linalg.norm(a - b))

    @property
    def articulation_deg(self) -> float:
        """The trailer's angle to the tractor (0 when straight)."""
        return normalize_deg(self.trailer.pose.heading_deg - self.tractor.pose.heading_deg)


TERRAIN_KINDS = ("blocking", "rough", "wreckage", "building", "exploding", "impassable", "slow")


@dataclass(frozen=True)
class Terrain:
    """A piece of terrain: a polygon and what it does.

    `blocks_sight` is True for blocking terrain and buildings by default;
    rough ground and wreckage slow cars but do not hide them.
    """

    polygon: Polygon
    kind: str = "blocking"
    name: str = ""
    blocks_sight: bool | None = None

    def __post_init__(self) -> None:
        if self.kind not in TERRAIN_KINDS:
            raise ValueError(f"terrain {self.name or ''}: unknown kind '{self.kind}' "
                             f"(one of {', '.join(TERRAIN_KINDS)})")
        if self.blocks_sight is None:
            object.__setattr__(self, "blocks_sight", self.kind in ("blocking", "building"))
        shapely.prepare(self.polygon)

    @classmethod
    def from_points(cls, points, kind: str = "blocking", name: str = "") -> "Terrain":
        return cls(Polygon(points), kind, name)

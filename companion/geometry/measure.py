"""Distances and arcs between footprints, with the doubt that the poses carry.

Closest distance: between the two rectangles, 0 when they touch or overlap,
with the two closest points (the page draws the measured line between them).
Arcs: the half-planes of DESIGN.md (front: ahead of the line through the centre
square to the heading), side half-planes, and sectors of any angle about any
point, each tested as "any part of the target inside" or "its centre inside".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import Polygon

from .pose import Footprint, Pose, normalize_deg
from .verdict import Verdict, judge


@dataclass(frozen=True)
class Distance:
    """The closest distance between two footprints and where it runs."""

    distance_mm: float
    from_point: tuple[float, float]
    to_point: tuple[float, float]
    sigma_mm: float

    def within(self, threshold_mm: float, what: str = "distance") -> Verdict:
        return judge(what, self.distance_mm, threshold_mm, self.sigma_mm)


def _rotation_lever(pose: Pose, point: np.ndarray, direction: np.ndarray) -> float:
    """How much a point on a car moves along `direction` per radian the car turns."""
    r = point - pose.xy
    return float(np.array([-r[1], r[0]]) @ direction)


def _distance_sigma(a: Footprint, b: Footprint, pa: np.ndarray, pb: np.ndarray, d: float) -> float:
    """First-order doubt of a point-to-point distance from both poses' doubts."""
    if d > 1e-9:
        u = (pb - pa) / d
    else:
        u = None
    total = 0.0
    for fp, p, sign in ((a, pa, -1.0), (b, pb, 1.0)):
        s_xy, s_th = fp.pose.axis_sigma_mm, fp.pose.heading_sigma_rad
        total += s_xy ** 2
        if u is not None:
            total += (_rotation_lever(fp.pose, p, u) * s_th) ** 2
        else:
            # Touching: any rotation opens or closes the gap by up to the lever arm.
            total += (float(np.linalg.norm(p - fp.pose.xy)) * s_th) ** 2
    return math.sqrt(total)


def closest_distance(a: Footprint, b: Footprint) -> Distance:
    """The closest distance between two footprints (0 when they touch or overlap)."""
    line = shapely.shortest_line(a.polygon, b.polygon)
    (x0, y0), (x1, y1) = line.coords
    pa, pb = np.array([x0, y0]), np.array([x1, y1])
    d = float(np.hypot(x1 - x0, y1 - y0))
    if shapely.intersects(a.polygon, b.polygon):
        d = 0.0
    return Distance(d, (float(x0), float(y0)), (float(x1), float(y1)), _distance_sigma(a, b, pa, pb, d))


def centre_distance(a: Footprint, b: Footprint) -> Distance:
    """Centre to centre."""
    return point_distance(a, "centre", b, "centre")


def point_distance(a: Footprint, a_point: str, b: Footprint, b_point: str | None = None) -> Distance:
    """From a named point of one car (a weapon mount, the front bumper) to a named
    point of another, or (b_point None) to the nearest part of its footprint."""
    pa = a.point(a_point)
    if b_point is None:
        if shapely.contains_xy(b.polygon, pa[0], pa[1]):
            return Distance(0.0, (float(pa[0]), float(pa[1])), (float(pa[0]), float(pa[1])),
                            _distance_sigma(a, b, pa, pa, 0.0))
        line = shapely.shortest_line(shapely.points(pa), b.polygon)
        pb = np.array(line.coords[1])
    else:
        pb = b.point(b_point)
    d = float(np.linalg.norm(pb - pa))
    return Distance(d, (float(pa[0]), float(pa[1])), (float(pb[0]), float(pb[1])), _distance_sigma(a, b, pa, pb, d))


# --- arcs --------------------------------------------------------------------------

FRONT, REAR, LEFT, RIGHT = "front", "rear", "left", "right"


@dataclass(frozen=True)
class ArcTest:
    """Whether a target is in an arc, as a verdict: the margin is how far the
    target's deepest point (or its centre) lies inside the arc's edge, in mm."""

    verdict: Verdict

    @property
    def inside(self) -> bool | None:
        return self.verdict.passes


def _half_plane_depth(shooter: Pose, direction: np.ndarray, target: Footprint, mode: str) -> tuple[float, np.ndarray]:
    """How far the target reaches past the line through the shooter's centre, along `direction`."""
    pts = target.corners if mode == "any" else target.centre[None, :]
    depths = (pts - shooter.xy) @ direction
    k = int(np.argmax(depths))
    return float(depths[k]), pts[k]


def in_half_plane_arc(shooter: Footprint, target: Footprint, side: str = FRONT, mode: str = "any") -> ArcTest:
    """Is the target in the shooter's front, rear, left or right half-plane arc?

    Front: ahead of the line through the shooter's footprint centre square to
    its heading (DESIGN.md); rear, behind it; left and right: beyond the line
    through the centre along the heading.  `mode` "any": any part of the target
    over the line; "centre": the target's centre.
    """
    p = shooter.pose
    direction = {FRONT: p.forward, REAR: -p.forward, LEFT: p.left, RIGHT: -p.left}[side]
    depth, point = _half_plane_depth(p, direction, target, mode)
    # Doubt of the depth: both positions along `direction`, the shooter's turning
    # (swinging its line about its centre) and the target's turning (its corner).
    r = point - p.xy
    lever = float(np.array([-direction[1], direction[0]]) @ r)
    sigma = math.sqrt(p.axis_sigma_mm ** 2 + target.pose.axis_sigma_mm ** 2
                      + (lever * p.heading_sigma_rad) ** 2
                      + (_rotation_lever(target.pose, point, direction) * target.pose.heading_sigma_rad) ** 2)
    what = f"{target.name or target.id} in {shooter.name or shooter.id}'s {side} arc ({mode})"
    return ArcTest(judge(what, depth, 0.0, sigma, at_most=False))


@dataclass(frozen=True)
class Sector:
    """A wedge: from `apex`, centred on `direction_deg`, `width_deg` wide in all,
    out to `radius_mm` (None: the whole table). 360 degrees is a full circle."""

    apex: tuple[float, float]
    direction_deg: float
    width_deg: float
    radius_mm: float | None = None
    #: The doubt of the apex (per axis, mm) and of the direction (radians, one sigma).
    apex_sigma_mm: float = 0.0
    direction_sigma_rad: float = 0.0

    def polygon(self, reach_mm: float = 5000.0) -> Polygon:
        r = self.radius_mm if self.radius_mm is not None else reach_mm
        ax, ay = self.apex
        if self.width_deg >= 360.0:
            return shapely.Point(ax, ay).buffer(r, quad_segs=32)
        half = self.width_deg / 2
        angles = np.radians(np.linspace(self.direction_deg - half, self.direction_deg + half,
                                        max(int(self.width_deg / 3), 2) + 1))
        arc = np.column_stack([ax + r * np.cos(angles), ay + r * np.sin(angles)])
        return Polygon(np.vstack([[ax, ay], arc]))

    @classmethod
    def of(cls, pose: Pose, facing_deg: float, width_deg: float, radius_mm: float | None = None,
           at: tuple[float, float] | None = None) -> "Sector":
        """A sector facing `facing_deg` from the car's heading (0 forward, 180
        backwards), from the car's centre or a point `at` (forward, left) on it."""
        apex = pose.to_table(*at) if at is not None else pose.xy
        return cls((float(apex[0]), float(apex[1])), normalize_deg(pose.heading_deg + facing_deg),
                   width_deg, radius_mm, pose.axis_sigma_mm, pose.heading_sigma_rad)


def in_sector(sector: Sector, target: Footprint, mode: str = "any") -> ArcTest:
    """Is the target (any part, or its centre) inside the sector?

    The margin is the angle by which the target's best point lies inside the
    wedge's edge, turned into millimetres at that point's distance."""
    apex = np.asarray(sector.apex)
    if mode == "any":
        poly = target.polygon
        pts = np.vstack([target.corners, _densify(target.corners)])
    else:
        poly = None
        pts = target.centre[None, :]
    rel = pts - apex
    dist = np.hypot(rel[:, 0], rel[:, 1])
    if sector.width_deg >= 360.0:
        ang_margin = np.full(len(pts), math.pi)
    else:
        bearing = np.degrees(np.arctan2(rel[:, 1], rel[:, 0]))
        off = np.abs((bearing - sector.direction_deg + 180.0) % 360.0 - 180.0)
        ang_margin = np.radians(sector.width_deg / 2 - off)
    margin_mm = np.where(ang_margin < math.pi / 2, dist * np.sin(np.clip(ang_margin, -math.pi / 2, math.pi / 2)),
                         dist)
    if sector.radius_mm is not None:
        margin_mm = np.minimum(margin_mm, sector.radius_mm - dist)
    best = int(np.argmax(margin_mm))
    margin = float(margin_mm[best])
    if poly is not None and sector.width_deg >= 360.0 and sector.radius_mm is not None:
        # A full circle: the margin is exact, from the target's nearest point.
        margin = sector.radius_mm - float(shapely.distance(shapely.points(apex), poly))
    if poly is not None:
        # Sampled points give the margin; the exact overlap decides the side.
        touching = bool(shapely.intersects(sector.polygon(max(float(dist.max()) * 2, 10.0)), poly))
        margin = max(margin, 0.0) if touching else min(margin, -1e-9)
    sigma = math.sqrt(target.pose.axis_sigma_mm ** 2 + sector.apex_sigma_mm ** 2
                      + (dist[best] * sector.direction_sigma_rad) ** 2)
    what = f"{target.name or target.id} in the arc ({'any part' if mode == 'any' else 'its centre'})"
    return ArcTest(judge(what, margin, 0.0, sigma, at_most=False))


def _densify(corners: np.ndarray, per_edge: int = 4) -> np.ndarray:
    """Points along a polygon's edges (a wedge's edge may cut an edge between corners)."""
    out = []
    for k in range(len(corners)):
        a, b = corners[k], corners[(k + 1) % len(corners)]
        for t in np.linspace(0, 1, per_edge + 2)[1:-1]:
            out.append(a + t * (b - a))
    return np.array(out)

"""Move templates, move regions, swept paths, strips and zones.

The Shattered Highways move template (shattered-highways-0.3.8.txt, "Move
Template"): a 4" x 9" rectangle, its long sides split into three 3" sections
and its short sides into two 2" halves, the six boxes numbered 1 to 6
clockwise from the upper right, and a 1" boarding mark in from each end of the
short sides.  It lies with its long sides along the car's heading.  Here
"upper" is the template's forward end (towards the car's front) and "right"
the car's right, so box 1 is front-right, 2 middle-right, 3 rear-right, 4
rear-left, 5 middle-left, 6 front-left.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import Polygon

from .pose import Footprint, Pose, inches
from .verdict import Verdict, judge

TEMPLATE_LENGTH_MM = inches(9.0)
TEMPLATE_WIDTH_MM = inches(4.0)
SECTION_MM = inches(3.0)
BOARDING_MARK_MM = inches(1.0)
RIG_TEMPLATE_LENGTH_MM = inches(6.0)


@dataclass(frozen=True)
class MoveTemplate:
    """A move template on the table: its centre pose (heading along its length) and size."""

    pose: Pose
    length_mm: float = TEMPLATE_LENGTH_MM
    width_mm: float = TEMPLATE_WIDTH_MM

    @classmethod
    def at_front_bumper(cls, car: Footprint, forwards: bool = True,
                        length_mm: float = TEMPLATE_LENGTH_MM) -> "MoveTemplate":
        """Held over the car with its front bumper at the template's rear edge
        (`forwards`: the template reaches ahead) or at its front edge (it reaches back)."""
        bumper = car.point("front_bumper")
        p = car.pose
        shift = length_mm / 2 if forwards else -length_mm / 2
        centre = bumper + shift * p.forward
        return cls(Pose(float(centre[0]), float(centre[1]), p.heading_deg), length_mm)

    @classmethod
    def centred_on(cls, car: Footprint, length_mm: float = TEMPLATE_LENGTH_MM) -> "MoveTemplate":
        """Centred over the car (Lost Control)."""
        p = car.pose
        return cls(Pose(p.x_mm, p.y_mm, p.heading_deg), length_mm)

    def _rect(self, f0: float, f1: float, l0: float, l1: float) -> Polygon:
        p = self.pose
        return Polygon([p.to_table(f1, l1), p.to_table(f1, l0), p.to_table(f0, l0), p.to_table(f0, l1)])

    @property
    def polygon(self) -> Polygon:
        a, b = self.length_mm / 2, self.width_mm / 2
        return self._rect(-a, a, -b, b)

    @property
    def sections(self) -> int:
        return int(round(self.length_mm / SECTION_MM))

    def section(self, k: int) -> Polygon:
        """Template section k (1 = the forward end): a whole-width 3" slice."""
        if not 1 <= k <= self.sections:
            raise ValueError(f"a {self.length_mm / 25.4:g} in template has sections 1 to {self.sections}")
        front = self.length_mm / 2 - (k - 1) * SECTION_MM
        return self._rect(front - SECTION_MM, front, -self.width_mm / 2, self.width_mm / 2)

    def box(self, n: int) -> Polygon:
        """Box n (1-6 on a 9" template), numbered clockwise from the front-right."""
        rows = self.sections
        if not 1 <= n <= 2 * rows:
            raise ValueError(f"this template has boxes 1 to {2 * rows}")
        if n <= rows:                       # down the right-hand column
            row, left0, left1 = n, -self.width_mm / 2, 0.0
        else:                               # back up the left-hand column
            row, left0, left1 = 2 * rows + 1 - n, 0.0, self.width_mm / 2
        front = self.length_mm / 2 - (row - 1) * SECTION_MM
        return self._rect(front - SECTION_MM, front, left0, left1)

    def boarding_marks(self) -> list[np.ndarray]:
        """The four 1" marks, on the short sides, 1" in from each long side."""
        a, b = self.length_mm / 2, self.width_mm / 2 - BOARDING_MARK_MM
        p = self.pose
        return [p.to_table(a, b), p.to_table(a, -b), p.to_table(-a, -b), p.to_table(-a, b)]


# --- where a front bumper may end ---------------------------------------------------

def _minkowski_obstacle(other: Polygon, car_relative_to_bumper: np.ndarray) -> Polygon:
    """Bumper positions at which the car (same heading) would overlap `other`:
    other (+) (-car), the convex hull of the pairwise differences."""
    o = np.asarray(other.exterior.coords)[:-1]
    diffs = (o[:, None, :] - car_relative_to_bumper[None, :, :]).reshape(-1, 2)
    return shapely.convex_hull(shapely.multipoints(diffs))


@dataclass(frozen=True)
class MoveRegion:
    """Where the moving car's front bumper may end: inside the template, the car
    overlapping no other vehicle there or on the way (it keeps its heading)."""

    template: MoveTemplate
    polygon: Polygon
    start: tuple[float, float]
    #: One-sigma doubt of the region's edges: the moving car's own position and
    #: that of the nearest car it was carved around.
    sigma_mm: float = 0.0

    def allows(self, bumper_xy, what: str = "front bumper in the move region") -> Verdict:
        """A verdict: how far inside the region (margin, mm) the bumper would end."""
        pt = shapely.points(np.asarray(bumper_xy, dtype=float))
        inside = bool(shapely.covers(self.polygon, pt)) if not self.polygon.is_empty else False
        d = float(shapely.distance(self.polygon.boundary, pt)) if not self.polygon.is_empty else float("inf")
        margin = d if inside else -d
        return judge(what, margin, 0.0, self.sigma_mm, at_most=False)


def move_region(car: Footprint, template: MoveTemplate, others: list[Footprint] | tuple = (),
                blocking: list[Polygon] | tuple = (), whole_bumper: bool = False) -> MoveRegion:
    """The region where the middle of `car`'s front bumper may end, moving inside `template` with
    all of its bumper.

    Other vehicles (and blocking terrain polygons) are carved out as the bumper
    positions that would make the car overlap them; of what is left, only the
    part the bumper can reach from where it starts without leaving the template
    counts (a clear path).  Touching is not overlapping.
    """
    bumper = car.point("front_bumper")
    rel = car.corners - bumper
    # "So long as the front bumper does not move outside the full template": the whole bumper,
    # not its middle, so its middle keeps half the car's width from the template's long sides.
    half = min(car.width_mm / 2, template.width_mm / 2) if whole_bumper else 0.0
    area = template._rect(-template.length_mm / 2, template.length_mm / 2,
                          -template.width_mm / 2 + half, template.width_mm / 2 - half)
    reach = template.polygon.buffer(np.hypot(car.length_mm, car.width_mm))
    near_cars = [o for o in others if o.id != car.id and shapely.intersects(reach, o.polygon)]
    near = [o.polygon for o in near_cars] + [s for s in blocking if shapely.intersects(reach, s)]
    if near:
        carved = shapely.union_all([_minkowski_obstacle(s, rel).buffer(-1e-6) for s in near])
        free = shapely.difference(area, carved)
    else:
        free = area
    start = shapely.points(bumper)
    parts = list(getattr(free, "geoms", [free]))
    reachable = [g for g in parts if not g.is_empty and shapely.distance(g, start) < 1e-6]
    poly = shapely.union_all(reachable) if reachable else Polygon()
    others_sigma = max((o.pose.axis_sigma_mm for o in near_cars), default=0.0)
    return MoveRegion(template, poly, (float(bumper[0]), float(bumper[1])),
                      float(np.hypot(car.pose.axis_sigma_mm, others_sigma)))


# --- swept paths ----------------------------------------------------------------------

def swept_path(car: Footprint, poses: list[Pose]) -> Polygon:
    """The ground a car covers moving through `poses` in turn (straight between them)."""
    feet = [car.at(p).polygon for p in poses]
    pieces = [shapely.convex_hull(shapely.union(a, b)) for a, b in zip(feet, feet[1:])] or feet
    return shapely.union_all(pieces)


def straight(pose: Pose, distance_mm: float, drift_mm: float = 0.0) -> list[Pose]:
    """A straight move `distance_mm` ahead (negative: back), drifting `drift_mm` to the left."""
    return [pose, pose.moved(distance_mm, drift_mm)]


def turning(pose: Pose, angle_deg: float, radius_mm: float, steps: int | None = None) -> list[Pose]:
    """A turn of `angle_deg` (positive: left) on a circle of `radius_mm` about a point beside the car."""
    steps = steps or max(int(abs(angle_deg) / 5), 1)
    sign = 1.0 if angle_deg >= 0 else -1.0
    centre = pose.to_table(0.0, sign * radius_mm)
    out = [pose]
    for k in range(1, steps + 1):
        a = np.radians(angle_deg * k / steps)
        r = pose.xy - centre
        rot = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        xy = centre + rot @ r
        out.append(Pose(float(xy[0]), float(xy[1]), pose.heading_deg + angle_deg * k / steps,
                        pose.sigma_mm, pose.sigma_deg))
    return out


# --- strips and zones ------------------------------------------------------------------

def directly_behind(car: Footprint, length_mm: float, width_mm: float | None = None) -> Polygon:
    """The strip directly behind a car: from its rear bumper back `length_mm`,
    as wide as the car (or `width_mm`)."""
    w = (width_mm if width_mm is not None else car.width_mm) / 2
    a = car.length_mm / 2
    p = car.pose
    return Polygon([p.to_table(-a, w), p.to_table(-a, -w), p.to_table(-a - length_mm, -w),
                    p.to_table(-a - length_mm, w)])


def circle(centre_xy, radius_mm: float) -> Polygon:
    return shapely.Point(float(centre_xy[0]), float(centre_xy[1])).buffer(radius_mm, quad_segs=32)


def around(car: Footprint, radius_mm: float) -> Polygon:
    """Everything within `radius_mm` of any part of the car."""
    return car.polygon.buffer(radius_mm, quad_segs=16)


def overlaps(zone: Polygon, target: Footprint, what: str = "overlaps the zone") -> Verdict:
    """Does any part of the target lie in the zone? The margin is how deep the
    overlap is (the radius of the largest disc that fits in it) or, when apart,
    how far the target stays out (negative), in mm."""
    if shapely.intersects(zone, target.polygon):
        # How deep in: the radius of the largest disc inside the overlap (0 when they only touch).
        inside = shapely.intersection(zone, target.polygon)
        margin = 0.0 if inside.area <= 0 else float(shapely.maximum_inscribed_circle(inside).length)
    else:
        margin = -float(shapely.distance(zone, target.polygon))
    return judge(what, margin, 0.0, target.pose.axis_sigma_mm, at_most=False)


def within_radius(centre_xy, radius_mm: float, target: Footprint, what: str = "within the radius") -> Verdict:
    """Is any part of the target within `radius_mm` of a point (an explosion)?"""
    d = float(shapely.distance(shapely.points(np.asarray(centre_xy, dtype=float)), target.polygon))
    return judge(what, d, radius_mm, target.pose.axis_sigma_mm)

"""The locator: one frame's markers turned into car poses in table millimetres.

Each roof marker's corners are traced back through the lens to the plane of
that car's roof (its `roof_mm` above the table), not to the table: seen from
1.1 m, a 30 mm roof at the table's edge would otherwise land 20 mm too far out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from calibration.camera import CameraModel
from calibration.table_pose import MIN_ANCHORS, TablePose, TablePoseError, solve_table_pose
from calibration.tablefile import CarSpec, TableSpec

from .detect import MarkerDetection, MarkerDetector

#: One-sigma doubt of a car's configured roof height: a ruler against a diecast roof.
ROOF_SIGMA_MM = 0.5
#: Floor on the corner noise assumed for a car marker, in pixels.
MIN_CORNER_SIGMA_PX = 0.25
#: Radial 2-D error: per-axis sigma times this is the radius holding 95 % at 2 sigma_mm.
_RADIAL_95_OVER_2 = math.sqrt(-2 * math.log(0.05)) / 2


@dataclass(frozen=True)
class CarLocation:
    """A car's pose from one frame, with its doubt."""

    id: int
    name: str
    x_mm: float
    y_mm: float
    heading_deg: float
    sigma_mm: float     # about 95 % of position errors fall within 2 sigma_mm
    sigma_deg: float    # about 95 % of heading errors fall within 2 sigma_deg

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name, "x_mm": round(self.x_mm, 2),
                "y_mm": round(self.y_mm, 2), "heading_deg": round(self.heading_deg, 2),
                "sigma_mm": round(self.sigma_mm, 2), "sigma_deg": round(self.sigma_deg, 2)}


@dataclass(frozen=True, eq=False)
class FrameLocation:
    """What one frame says: the cars found, the cars missing, the anchors seen."""

    frame: int
    cars: tuple[CarLocation, ...]
    missing: tuple[int, ...]
    anchors: tuple[int, ...]
    table_pose: TablePose | None
    unknown_ids: tuple[int, ...] = ()
    duplicate_ids: tuple[int, ...] = ()
    detections: tuple[MarkerDetection, ...] = field(default=(), repr=False)
    error: str | None = None

    def to_json(self) -> dict:
        out: dict = {"frame": self.frame, "cars": [c.to_json() for c in self.cars],
                     "missing": list(self.missing), "anchors": list(self.anchors)}
        if self.table_pose is not None:
            cam = self.table_pose.camera
            out["table"] = {"reprojection_px": round(self.table_pose.reprojection_px, 3),
                            "reprojection_mm": round(self.table_pose.reprojection_mm, 3),
                            "camera": "estimated" if cam.estimated else "calibrated",
                            "camera_source": cam.source,
                            "focal_px": round(cam.focal_px, 1)}
        if self.unknown_ids:
            out["unknown"] = list(self.unknown_ids)
        if self.duplicate_ids:
            out["duplicates"] = list(self.duplicate_ids)
        if self.error:
            out["error"] = self.error
        return out


def heading_from_corners(corners_xy: np.ndarray) -> float:
    """The direction the marker's top edge faces, from all four corners, in degrees.

    The marker's "up" is averaged from both of its axes: bottom edge to top edge,
    and the left-to-right edge direction turned a quarter left.  Using the whole
    marker, not one edge, halves the noise.
    """
    c = np.asarray(corners_xy, dtype=np.float64)
    up = (c[0] + c[1]) - (c[3] + c[2])
    right = (c[1] + c[2]) - (c[0] + c[3])
    v = up + np.array([-right[1], right[0]])
    return math.degrees(math.atan2(v[1], v[0]))


def normalize_deg(angle: float) -> float:
    """An angle in (-180, 180]."""
    a = math.fmod(angle, 360.0)
    if a <= -180.0:
        a += 360.0
    elif a > 180.0:
        a -= 360.0
    return a


class Locator:
    """Finds the table and every car in a frame.

    With no camera file, the camera is estimated from the anchors of the first
    frame that shows enough of them, and kept: the camera does not change.  The
    table's pose is solved again every frame that shows enough anchors, and the
    last good pose is kept through frames where a hand covers some.
    """

    def __init__(self, table: TableSpec, camera: CameraModel | None = None,
                 detector: MarkerDetector | None = None) -> None:
        self.table = table
        self.camera = camera
        self.detector = detector or MarkerDetector(table.dictionary)
        self.table_pose: TablePose | None = None

    def locate(self, image: np.ndarray, frame: int = 0) -> FrameLocation:
        h, w = image.shape[:2]
        if self.camera is not None:
            self.camera.check_frame(image)
        detections = self.detector.detect(image)
        by_id: dict[int, list[MarkerDetection]] = {}
        for d in detections:
            by_id.setdefault(d.id, []).append(d)
        # A marker seen twice is a mistake somewhere (a reflection, a spare car): trust neither.
        duplicates = tuple(sorted(i for i, ds in by_id.items() if len(ds) > 1))
        single = {i: ds[0] for i, ds in by_id.items() if len(ds) == 1}
        anchors_seen = tuple(sorted(i for i in single if self.table.anchor(i) is not None))
        unknown = tuple(sorted(i for i in by_id if self.table.anchor(i) is None
                               and self.table.car(i) is None))
        error = None
        # An anchor whose outline would not refine is partly covered or smudged:
        # leave it out while enough clean ones remain.
        clean = [i for i in anchors_seen if single[i].edge_sigma_px is not None]
        use = clean if len(clean) >= MIN_ANCHORS else list(anchors_seen)
        try:
            pose = solve_table_pose({i: single[i].corners_px for i in use}, self.table,
                                    self.camera, image_size=(w, h))
            if self.camera is None:
                self.camera = pose.camera
            self.table_pose = pose
        except TablePoseError as exc:
            if self.table_pose is None:
                return FrameLocation(frame, (), self.table.car_ids, anchors_seen, None, unknown,
                                     duplicates, tuple(detections), str(exc))
            error = f"{exc}; using the table's last known pose"
        pose = self.table_pose
        cars = []
        for spec in self.table.cars:
            det = single.get(spec.id)
            if det is not None:
                cars.append(locate_car(spec, det.corners_px, pose))
        found = {c.id for c in cars}
        missing = tuple(i for i in self.table.car_ids if i not in found)
        return FrameLocation(frame, tuple(cars), missing, anchors_seen, pose, unknown, duplicates,
                             tuple(detections), error)


def locate_car(spec: CarSpec, corners_px: np.ndarray, pose: TablePose) -> CarLocation:
    """A car's footprint centre and heading from its roof marker's corners."""
    corners_mm = pose.table_from_image(corners_px, spec.roof_mm)
    marker_centre = corners_mm.mean(axis=0)
    heading = heading_from_corners(corners_mm)
    t = math.radians(heading)
    fwd = np.array([math.cos(t), math.sin(t)])
    left = np.array([-fwd[1], fwd[0]])
    centre = marker_centre + spec.forward_offset_mm * fwd + spec.left_offset_mm * left
    sigma_mm, sigma_deg = _car_sigma(spec, corners_px, marker_centre, pose)
    return CarLocation(spec.id, spec.name, float(centre[0]), float(centre[1]),
                       normalize_deg(heading), sigma_mm, sigma_deg)


def _car_sigma(spec: CarSpec, corners_px: np.ndarray, marker_centre: np.ndarray,
               pose: TablePose) -> tuple[float, float]:
    """First-order doubt of one frame's pose.

    Sources: corner noise (the anchors' residual, floored), the roof height's
    doubt and the focal length's doubt, both of which move a roof point along
    the ray from the camera's nadir.
    """
    corner_px = max(pose.reprojection_px, MIN_CORNER_SIGMA_PX)
    mm_per_px = pose.mm_per_px(marker_centre[0], marker_centre[1], spec.roof_mm)
    per_axis = corner_px * mm_per_px / 2.0          # the mean of four corners
    cam = pose.camera_centre_mm
    radius = float(np.hypot(marker_centre[0] - cam[0], marker_centre[1] - cam[1]))
    height = max(cam[2] - spec.roof_mm, 1.0)
    roof_term = radius * ROOF_SIGMA_MM / height
    # A wrong focal length scales the camera's height, so a roof point's parallax.
    focal_term = radius * spec.roof_mm / height * pose.camera.focal_rel_sigma
    sigma_mm = math.sqrt((per_axis * _RADIAL_95_OVER_2) ** 2 + roof_term ** 2 + focal_term ** 2)
    side_px = float(np.mean(np.linalg.norm(corners_px - np.roll(corners_px, -1, axis=0), axis=1)))
    sigma_deg = math.degrees(corner_px / max(side_px, 1.0) / math.sqrt(2))
    return sigma_mm, sigma_deg

"""The locator: one frame's markers turned into car poses in table millimetres.

Each roof marker's corners are traced back through the lens to the plane of
that car's roof (its `roof_mm` above the table), not to the table: seen from
1.1 m, a 30 mm roof at the table's edge would otherwise land 20 mm too far out.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field

import numpy as np

from calibration.camera import CameraModel
from calibration.dictionaries import probe_dictionaries
from calibration.table_pose import MIN_ANCHORS, TablePose, TablePoseError, solve_table_pose
from calibration.tablefile import CarSpec, TableSpec

from .detect import MarkerDetection, MarkerDetector, to_gray



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
    #: The part of sigma_mm that changes from frame to frame (the marker's own
    #: noise); the rest (table pose, roof height, lens) is the same every frame
    #: and does not average away.
    random_sigma_mm: float = 0.0
    #: The marker outline's edge scatter in pixels (None: not refined, e.g. blurred
    #: or partly covered); the tracker does not let a poor outline move a car alone.
    edge_sigma_px: float | None = None

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


def region_around(corners_px: np.ndarray, margin_px: float | None = None) -> tuple[float, float, float, float]:
    """A box (x0, y0, x1, y1) around a marker's corners, a side (at least 30 px) wider."""
    side = float(np.linalg.norm(corners_px[0] - corners_px[1]))
    margin = max(side, 30.0) if margin_px is None else margin_px
    x0, y0 = corners_px.min(axis=0) - margin
    x1, y1 = corners_px.max(axis=0) + margin
    return (x0, y0, x1, y1)


def merge_regions(regions: list[tuple[float, float, float, float]]) -> list[tuple[int, int, int, int]]:
    """Overlapping boxes joined, so no marker is cut by a box's edge or searched twice."""
    boxes = [list(r) for r in regions]
    merged = True
    while merged:
        merged = False
        for i in range(len(boxes)):
            for j in range(i + 1, len(boxes)):
                a, b = boxes[i], boxes[j]
                if a[0] <= b[2] and b[0] <= a[2] and a[1] <= b[3] and b[1] <= a[3]:
                    boxes[i] = [min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3])]
                    del boxes[j]
                    merged = True
                    break
            if merged:
                break
    return [(int(np.floor(x0)), int(np.floor(y0)), int(np.ceil(x1)), int(np.ceil(y1)))
            for x0, y0, x1, y1 in boxes]


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
        self._probes_left = 3
        self._hint = ""

    def locate(self, image: np.ndarray, frame: int = 0,
               look_again: dict[int, tuple[float, float, float, float]] | None = None) -> FrameLocation:
        """Find the table and every car in a whole frame.

        OpenCV keeps one of several candidates that lie close together (the
        outer square, an inner outline, at three thresholds) and, now and then,
        one that will not decode: a clean anchor is lost to a frame's noise.
        So every anchor missed is looked for again in a small region around
        where this frame's pose puts it, as is every marker in `look_again`
        (id to a region x0, y0, x1, y1 where it was last seen): there the
        candidates differ and it is found."""
        h, w = image.shape[:2]
        if self.camera is not None:
            self.camera.check_frame(image)
        detections = self.detector.detect(image)
        located = self.locate_detections(detections, (w, h), frame)
        if located.table_pose is None and not detections:
            return dataclasses.replace(located, error=f"{located.error}{self._dictionary_hint(image)}")
        found = {d.id for d in detections}
        regions = {i: r for i, r in (look_again or {}).items() if i not in found}
        pose = self.table_pose
        if pose is not None:
            for anchor in self.table.anchors:
                if anchor.id not in found:
                    corners = pose.image_from_table(np.array([(x, y, 0.0) for x, y in anchor.corners_mm()]))
                    regions[anchor.id] = region_around(corners)
        if not regions:
            return located
        extra, taken = [], set()
        for d in self.detector.detect_regions(image, merge_regions(list(regions.values()))):
            if d.id in regions and d.id not in taken:
                extra.append(d)
                taken.add(d.id)
        return self.locate_detections(detections + extra, (w, h), frame) if extra else located

    def _dictionary_hint(self, image: np.ndarray) -> str:
        """When a frame shows no marker of the table's dictionary, which it does show.

        Probing every dictionary costs a few detections, so it is done for the
        first few such frames only, and the answer kept."""
        if self._probes_left > 0:
            self._probes_left -= 1
            guess = probe_dictionaries([to_gray(image)], self.table.dictionary)
            if guess is not None:
                self._hint = (f"; the frame shows no {self.table.dictionary} markers but {guess.markers} "
                              f"{guess.family} markers (ids up to {guess.top_id}): is the table file's "
                              f"dictionary {guess.which}?")
        return self._hint

    def locate_detections(self, detections: list[MarkerDetection], image_size: tuple[int, int],
                          frame: int = 0, solve_pose: bool = True) -> FrameLocation:
        """Table and cars from markers already found.  With `solve_pose` False
        (the frame was searched only where cars were), the last pose is kept."""
        by_id: dict[int, list[MarkerDetection]] = {}
        for d in detections:
            by_id.setdefault(d.id, []).append(d)
        # A marker seen twice is a mistake somewhere (a reflection, a spare car): trust neither.
        duplicates = tuple(sorted(i for i, ds in by_id.items() if len(ds) > 1))
        single = {i: ds[0] for i, ds in by_id.items() if len(ds) == 1}
        anchors_seen = tuple(sorted(i for i in single if self.table.anchor(i) is not None))
        gate_posts = set(self.table.gate_marker_ids)
        unknown = tuple(sorted(i for i in by_id if self.table.anchor(i) is None
                               and self.table.car(i) is None and i not in gate_posts))
        error = None
        if solve_pose or self.table_pose is None:
            # An anchor whose outline would not refine is partly covered or smudged:
            # leave it out while enough clean ones remain.
            clean = [i for i in anchors_seen if single[i].edge_sigma_px is not None]
            use = clean if len(clean) >= MIN_ANCHORS else list(anchors_seen)
            try:
                pose = solve_table_pose({i: single[i].corners_px for i in use}, self.table,
                                        self.camera, image_size=image_size)
                if self.camera is None:
                    self.camera = pose.camera
                self.table_pose = pose
            except TablePoseError as exc:
                if self.table_pose is None:
                    return FrameLocation(frame, (), self.table.car_ids, anchors_seen, None, unknown,
                                         duplicates, tuple(detections), str(exc))
                error = f"{exc}; using the table's last known pose"
        pose = self.table_pose
        seen = [spec for spec in self.table.cars if spec.id in single]
        cars = locate_cars(seen, [single[spec.id] for spec in seen], pose, self.table.roof_sigma_mm)
        found = {c.id for c in cars}
        missing = tuple(i for i in self.table.car_ids if i not in found)
        return FrameLocation(frame, tuple(cars), missing, anchors_seen, pose, unknown, duplicates,
                             tuple(detections), error)


#: Centre error per axis, in units of the marker's edge scatter (measured on
#: rendered tables: see docs/benchmarks.md, "two-sigma coverage").
CENTRE_PER_EDGE_SIGMA = 0.42
#: Heading error (radians), in units of edge scatter over the marker's side.
HEADING_PER_EDGE_SIGMA = 0.95
#: Corner noise assumed when a marker's outline could not be refined.
UNREFINED_CENTRE_SIGMA_PX = 0.3
UNREFINED_HEADING_SIGMA_RAD = math.radians(1.0)
#: Floors: no single frame knows a pose better than this.
MIN_SIGMA_MM = 0.01
MIN_SIGMA_DEG = 0.02


def locate_cars(specs: list[CarSpec], detections: list[MarkerDetection], pose: TablePose,
                roof_sigma_mm: float = 0.5) -> list[CarLocation]:
    """Each car's footprint centre and heading from its roof marker, with its doubt.

    The doubt is a 2 x 2 covariance per car, summed from where it comes from:
    the marker's own outline (its edge scatter), the table's pose (the anchors'
    residuals, propagated), the roof height's doubt and, for an estimated
    camera, the focal length's (both move a roof point along the line from
    the camera's nadir).  `sigma_mm` is half the radius that holds 95 % of it.
    """
    if not specs:
        return []
    n = len(specs)
    corners_px = np.array([d.corners_px for d in detections])                 # (N, 4, 2)
    roofs = np.array([s.roof_mm for s in specs])
    corners_mm = pose.table_from_image(corners_px.reshape(-1, 2), np.repeat(roofs, 4)).reshape(n, 4, 2)
    centres_px = corners_px.mean(axis=1)
    marker_centres = corners_mm.mean(axis=1)
    pose_cov = pose.table_covariance(centres_px, roofs)
    cam = pose.camera_centre_mm
    out = []
    for i, (spec, det) in enumerate(zip(specs, detections)):
        heading = heading_from_corners(corners_mm[i])
        t = math.radians(heading)
        fwd = np.array([math.cos(t), math.sin(t)])
        left = np.array([-fwd[1], fwd[0]])
        centre = marker_centres[i] + spec.forward_offset_mm * fwd + spec.left_offset_mm * left
        side_px = float(np.mean(np.linalg.norm(corners_px[i] - np.roll(corners_px[i], -1, axis=0), axis=1)))
        if det.edge_sigma_px is not None:
            centre_px = CENTRE_PER_EDGE_SIGMA * det.edge_sigma_px
            heading_rad = HEADING_PER_EDGE_SIGMA * det.edge_sigma_px / max(side_px, 1.0)
        else:
            centre_px, heading_rad = UNREFINED_CENTRE_SIGMA_PX, UNREFINED_HEADING_SIGMA_RAD
        mm_per_px = pose.mm_per_px(marker_centres[i][0], marker_centres[i][1], spec.roof_mm)
        offset_mm = math.hypot(*spec.offset_mm)
        random_cov = np.eye(2) * ((centre_px * mm_per_px) ** 2 + (offset_mm * heading_rad) ** 2)
        cov = random_cov + pose_cov[i]
        radial = marker_centres[i] - cam[:2]
        radius = float(np.linalg.norm(radial))
        if radius > 1e-6:
            u = radial / radius
            height = max(cam[2] - spec.roof_mm, 1.0)
            along = (radius * roof_sigma_mm / height) ** 2
            along += (radius * spec.roof_mm / height * pose.camera.focal_rel_sigma) ** 2
            cov = cov + along * np.outer(u, u)
        sigma_mm = max(_radius_95(cov) / 2, MIN_SIGMA_MM)
        sigma_deg = max(math.degrees(heading_rad), MIN_SIGMA_DEG)
        out.append(CarLocation(spec.id, spec.name, float(centre[0]), float(centre[1]),
                               normalize_deg(heading), sigma_mm, sigma_deg,
                               min(_radius_95(random_cov) / 2, sigma_mm), det.edge_sigma_px))
    return out


def _radius_95(cov: np.ndarray) -> float:
    """Radius of the circle holding 95 % of a 2-D Gaussian with this covariance.

    1.96 sigma for a line-like spread, 2.448 sigma for a round one; between the
    two, interpolated on the ratio of the axes (within a few per cent)."""
    evals = np.linalg.eigvalsh(cov)
    major = math.sqrt(max(evals[1], 0.0))
    minor = math.sqrt(max(evals[0], 0.0))
    if major == 0:
        return 0.0
    return major * (1.96 + 0.488 * minor / major)

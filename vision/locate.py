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
from calibration.table_pose import (MIN_ANCHORS, TablePose, TablePoseError, pose_disagreement_px,
                                   pose_shift_px, solve_table_pose)
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
    #: The part of sigma_deg that changes from frame to frame (None: all of it).
    random_sigma_deg: float | None = None

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
    #: The table's pose was solved or verified from this frame's own anchors.  When
    #: False the last pose was used unchecked: the cars may be off by a knocked
    #: camera's shift, and the tracker marks them stale.
    pose_checked: bool = True
    #: This frame's anchors put the table somewhere else than the last frame's
    #: (the camera or the table was moved).
    table_moved: bool = False
    #: The detection each car in `cars` came from, in the same order.
    car_detections: tuple[MarkerDetection, ...] = field(default=(), repr=False)

    def to_json(self) -> dict:
        out: dict = {"frame": self.frame, "cars": [c.to_json() for c in self.cars],
                     "missing": list(self.missing), "anchors": list(self.anchors),
                     "pose_checked": self.pose_checked, "table_moved": self.table_moved}
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
        #: Where the last pose puts each anchor (centre, how near counts), kept per pose.
        self._anchors_at: tuple[TablePose | None, dict] = (None, {})

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
        if not extra:
            return located
        again = self.locate_detections(detections + extra, (w, h), frame)
        # Moved is against the pose before this frame, which the first pass replaced.
        return dataclasses.replace(again, table_moved=again.table_moved or located.table_moved)

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
        anchor_det, car_det = self._sort_out(by_id)
        duplicates = tuple(sorted(i for i, ds in by_id.items() if len(ds) > 1
                                  and not (i in anchor_det and (i in car_det or len(ds) == 1))))
        anchors_seen = tuple(sorted(anchor_det))
        gate_posts = set(self.table.gate_marker_ids)
        unknown = tuple(sorted(i for i in by_id if self.table.anchor(i) is None
                               and self.table.car(i) is None and i not in gate_posts))
        error = None
        checked, moved = True, False
        if solve_pose or self.table_pose is None:
            # An anchor whose outline would not refine is partly covered or smudged:
            # leave it out while enough clean ones remain.
            clean = [i for i in anchors_seen if anchor_det[i].edge_sigma_px is not None]
            use = clean if len(clean) >= MIN_ANCHORS else list(anchors_seen)
            last = self.table_pose
            try:
                pose = solve_table_pose({i: anchor_det[i].corners_px for i in use}, self.table,
                                        self.camera, image_size=image_size)
                if self.camera is None:
                    self.camera = pose.camera
                moved = last is not None and pose_shift_px(last, pose, self.table) > _moved_px(last, pose)
                self.table_pose = pose
            except TablePoseError as exc:
                if last is None:
                    return FrameLocation(frame, (), self.table.car_ids, anchors_seen, None, unknown,
                                         duplicates, tuple(detections), str(exc), pose_checked=False)
                checked, moved, pose = self._check_with_few(last, {i: anchor_det[i].corners_px
                                                                   for i in anchors_seen})
                if pose is not None:
                    self.table_pose = pose
                else:
                    error = f"{exc}; using the table's last known pose, unchecked"
        pose = self.table_pose
        if any(self.table.anchor(i) is not None for i in duplicates):
            # The pose just solved (without them) tells an anchor from its namesake.
            anchor_det, car_det = self._sort_out(by_id)
            duplicates = tuple(i for i in duplicates if not (i in anchor_det and i in car_det))
        seen = [spec for spec in self.table.cars if spec.id in car_det]
        used = [anchor_det[i] for i in pose.anchors_used if i in anchor_det]
        contrasts = [d.contrast for d in used if d.contrast]
        cars = locate_cars(seen, [car_det[spec.id] for spec in seen], pose, self.table.roof_sigma_mm,
                           model_noise_px(pose, used), self.detector.cells,
                           float(np.median(contrasts)) if contrasts else None)
        found = {c.id for c in cars}
        missing = tuple(i for i in self.table.car_ids if i not in found)
        return FrameLocation(frame, tuple(cars), missing, anchors_seen, pose, unknown, duplicates,
                             tuple(detections), error, checked, moved,
                             tuple(car_det[spec.id] for spec in seen))

    def _sort_out(self, by_id: dict[int, list[MarkerDetection]]
                  ) -> tuple[dict[int, MarkerDetection], dict[int, MarkerDetection]]:
        """Which detection is each anchor, which each car.

        A marker seen twice is a mistake somewhere (a reflection, a spare car):
        trust neither, unless the table's last pose tells them apart: the one
        where an anchor lies is that anchor (a spare copy elsewhere, or a car
        given an anchor's id, cannot drag the table's pose away; region scans
        see only one of the two and would never know)."""
        anchors, cars = {}, {}
        last = self.table_pose
        for i, ds in by_id.items():
            anchor, car = self.table.anchor(i), self.table.car(i)
            at_anchor = ([d for d in ds if self._where_anchor_is(last, anchor, d)]
                         if anchor is not None and last is not None else [])
            if len(ds) == 1 and (last is None or anchor is None or car is None):
                if anchor is not None:
                    anchors[i] = ds[0]
                if car is not None:
                    cars[i] = ds[0]
            elif len(at_anchor) == 1:
                anchors[i] = at_anchor[0]
                rest = [d for d in ds if d is not at_anchor[0]]
                if car is not None and len(rest) == 1:
                    cars[i] = rest[0]
            elif len(ds) == 1 and car is not None and not at_anchor:
                cars[i] = ds[0]
        return anchors, cars


    def _where_anchor_is(self, pose: TablePose, anchor, d: MarkerDetection) -> bool:
        """_where_anchor_is, each anchor projected once per pose (asked for every
        marker with an anchor's id, every frame)."""
        if self._anchors_at[0] is not pose:
            # Every anchor in one projection (one call per anchor cost more than the rest).
            anchors = self.table.anchors
            corners = pose.image_from_table(np.array(
                [(x, y, 0.0) for a in anchors for x, y in a.corners_mm()])).reshape(-1, 4, 2)
            near = np.maximum(0.75 * np.linalg.norm(corners[:, 0] - corners[:, 1], axis=1), 20.0)
            self._anchors_at = (pose, {a.id: (c.mean(axis=0), float(r))
                                       for a, c, r in zip(anchors, corners, near)})
        centre, near = self._anchors_at[1][anchor.id]
        return float(np.linalg.norm(centre - d.centre_px)) < near

    def _check_with_few(self, last: TablePose, anchors: dict[int, np.ndarray]
                        ) -> tuple[bool, bool, TablePose | None]:
        """Too few anchors to solve the table alone: (checked, moved, pose to use or None).

        The anchors in view still check the last pose: if they sit where it puts
        them, the view has not moved (the pose is kept, its corner noise raised to
        what they show).  If they do not, and the camera is calibrated, two
        anchors solve the table well enough (their residuals give its doubt).
        Otherwise the pose cannot be checked."""
        if not anchors:
            return False, False, None
        off = pose_disagreement_px(last, anchors, self.table)
        if off <= _moved_px(last, last):
            return True, False, dataclasses.replace(last, corner_noise_px=max(last.corner_noise_px, off))
        if len(anchors) >= 2 and not last.camera.estimated:
            try:
                return True, True, solve_table_pose(anchors, self.table, last.camera, min_anchors=2)
            except TablePoseError:
                pass
        return False, True, None


def _where_anchor_is(pose: TablePose, anchor, d: MarkerDetection) -> bool:
    """Is detection `d` where `pose` puts `anchor` (within most of a side: a knock moves it less)?"""
    corners = pose.image_from_table(np.array([(x, y, 0.0) for x, y in anchor.corners_mm()]))
    side = float(np.linalg.norm(corners[0] - corners[1]))
    return float(np.linalg.norm(corners.mean(axis=0) - d.centre_px)) < max(0.75 * side, 20.0)


#: The view has moved when the anchors' corners move by more than this many
#: times their corner noise, and by at least MOVED_MIN_PX.
MOVED_NOISE = 5.0
MOVED_MIN_PX = 1.0


def _moved_px(a: TablePose, b: TablePose) -> float:
    return max(MOVED_NOISE * max(a.corner_noise_px, b.corner_noise_px), MOVED_MIN_PX)


#: Centre error per axis, in units of the marker's edge scatter: the anchors'
#: corner noise model (model_noise_px) and gates count outlines this way.
CENTRE_PER_EDGE_SIGMA = 0.42
#: Heading error (radians), in units of edge scatter over the marker's side.
HEADING_PER_EDGE_SIGMA = 0.95
#: A refined outline's own doubt, earned from what is measured on it: its edge
#: scatter (px) over its cell's size in pixels, the cell's size alone, and how
#: far it is from a square (opposite sides' lengths on the roof's plane, where
#: perspective is undone, in px).  A small marker's cells are few pixels across:
#: blur bleeds its inner cells into the black border and the sticker's edge or
#: the roof into the white margin, shifting whole edges by more than their
#: scatter shows (on 16 px markers, 20 mm at 1080p over a 4 x 4 ft or 6 x 4 ft
#: table, corners are off 0.3-1.4 px while the scatter says 0.05-0.1); an
#: edge shifted alone leaves the outline no longer square.  Fitted (maximum
#: likelihood) on rendered tables of every size, 1080p and 4K, one-cell, 2 mm
#: and 1 mm margins, webcam and hard renderings, seeds 100-110 (bench/sigma.py);
#: checked on seeds 500 on.  Heading (radians) = hypot(HEADING_EDGE * scatter /
#: cell, HEADING_CELL / cell^2, HEADING_SKEW * skew) / side; centre per axis
#: (px) = hypot(CENTRE_EDGE * scatter / cell, CENTRE_CELL / cell^2).  The tails
#: are heavier than a Gaussian's (a whole edge shifted): HEADING_TAIL and
#: CENTRE_TAIL widen them so that none lies beyond 4 sigma (the centre's fit
#: is the poorer: on thin margins under dim, JPEG'd light its errors run twice
#: what it predicts).
HEADING_EDGE = 2.62
HEADING_CELL = 0.28
HEADING_SKEW = 0.113
CENTRE_EDGE = 0.95
CENTRE_CELL = 0.135
HEADING_TAIL = 1.2
CENTRE_TAIL = 1.6
#: A thin or dim white margin: the roof beyond it (or blur from the inner cells)
#: bleeds into the margin where the edge is found, and shifts and turns whole
#: edges by what the pattern and the roof's colour there make of it, which the
#: edge scatter does not show.  It shows as the border-to-margin contrast
#: (refine's RefinedOutlines.contrast) well below the anchors' in the same frame
#: (their margins are wide): on 6 x 4 ft, 1080p, blur 1.1 px, 2 mm margins a roof
#: marker shows 0.55 of the anchors' contrast, one-cell margins 0.8-0.95.  Below
#: MARGIN_FULL_RATIO, each 0.1 of the ratio missing is taken as a whole edge's
#: shift of CENTRE_BLEED_PX / 10 (centre, per axis) and a turn of HEADING_BLEED_PX
#: / 10 across the side (heading), added to the cell's terms under the tails.
#: Fitted as the other outline constants (seeds 100-110, bench/sigma.py).
MARGIN_FULL_RATIO = 0.75
CENTRE_BLEED_PX = 0.015
HEADING_BLEED_PX = 0.04
#: Corner noise assumed when a marker's outline could not be refined (OpenCV's
#: own corners: a thin margin, blur, a hand over part of it).  On small markers
#: OpenCV's corners turn the heading by more than a degree: on the renders of
#: seeds 100-110, unrefined outlines of 14-24 px showed heading errors of 0.54 px
#: (RMS, 1.45 px at most) over their side, so the heading's doubt is the larger
#: of UNREFINED_HEADING_SIGMA_RAD and UNREFINED_HEADING_PX / side.
UNREFINED_CENTRE_SIGMA_PX = 0.3
UNREFINED_HEADING_SIGMA_RAD = math.radians(1.0)
UNREFINED_HEADING_PX = 0.6
#: Beyond its own outline's noise, a marker's corners are off by what the
#: anchors' corners show on this frame (TablePose.corner_noise_px): a real lens
#: is not quite its model, a sheet not quite flat.  Errors shared between
#: neighbouring corners do not average over a marker's four: measured on real
#: footage (bench/realvideo.py), the centre is off by 0.7 of the anchors' corner
#: noise, the heading by 0.7 of it over the marker's side (radians); independent
#: corners would give 0.5 and 0.5.
MODEL_CENTRE_PER_CORNER_NOISE = 0.7
MODEL_HEADING_PER_CORNER_NOISE = 0.7
#: The share of the outline's heading noise that changes from frame to frame.
#: The rest stays with the marker (blur and perspective bend its edges the same
#: way each frame): on rendered tables a car tracked still for ten frames has
#: heading errors (p95) 2.4 times the one frame's sigma, as large as one
#: frame's own, so averaging frames must not shrink the heading's sigma.
HEADING_RANDOM_SHARE = 0.3
#: Floors: no single frame knows a pose better than this.
MIN_SIGMA_MM = 0.01
MIN_SIGMA_DEG = 0.02


def headings_from_corners(corners_xy: np.ndarray) -> np.ndarray:
    """heading_from_corners for (N, 4, 2) corners at once, in degrees."""
    c = np.asarray(corners_xy, dtype=np.float64)
    up = (c[:, 0] + c[:, 1]) - (c[:, 3] + c[:, 2])
    right = (c[:, 1] + c[:, 2]) - (c[:, 0] + c[:, 3])
    v = up + np.stack([-right[:, 1], right[:, 0]], axis=-1)
    return np.degrees(np.arctan2(v[:, 1], v[:, 0]))


def _pose_heading_variance(pose: TablePose, corners_px: np.ndarray, roofs: np.ndarray) -> np.ndarray:
    """(N,) variance (rad^2) of each marker's heading that comes from the table pose's doubt."""
    n = len(corners_px)
    if pose.covariance is None or n == 0:
        return np.zeros(n)
    flat, heights = corners_px.reshape(-1, 2), np.repeat(roofs, 4)
    return _heading_variance(pose, *pose.table_jacobian(flat, heights))


def _heading_variance(pose: TablePose, corners_mm: np.ndarray, corners_jac: np.ndarray) -> np.ndarray:
    """_pose_heading_variance from the corners on the table (4N, 2) and their
    derivative by the pose (4N, 2, 6), already worked out."""
    n = len(corners_mm) // 4
    base = headings_from_corners(corners_mm.reshape(n, 4, 2))
    jac = np.empty((n, 6))
    for k in range(6):
        step = 1e-6 if k < 3 else 1e-3
        h = headings_from_corners((corners_mm + step * corners_jac[:, :, k]).reshape(n, 4, 2))
        jac[:, k] = np.radians((h - base + 180.0) % 360.0 - 180.0) / step
    return np.einsum("ni,ij,nj->n", jac, pose.covariance, jac)


#: Anchor corner noise that the cars' own sigmas already cover: rendered tables,
#: whose geometry is perfect, show up to 0.12 px (hard) and their sigmas held
#: 95 % without this term; real footage shows 1-3 px (bench/realvideo.py).
ANCHOR_NOISE_EXPLAINED_PX = 0.2
#: A corner's own noise (px, RMS over both axes) per pixel of its outline's edge
#: scatter: twice the centre's, as a centre averages four corners.
CORNER_PER_EDGE_SIGMA = 2 * CENTRE_PER_EDGE_SIGMA


def model_noise_px(pose: TablePose, anchors: list[MarkerDetection]) -> float:
    """The anchors' corner noise beyond what their own outlines explain.

    On a rendered table the anchors' residuals are their outline noise, which
    each car's own edge scatter already counts; on a real one they are mostly
    the lens and the layout, which the car's edge scatter does not see."""
    own = [CORNER_PER_EDGE_SIGMA * d.edge_sigma_px if d.edge_sigma_px is not None
           else 2 * UNREFINED_CENTRE_SIGMA_PX for d in anchors]
    expected = math.sqrt(float(np.mean(np.square(own)))) if own else 0.0
    return math.sqrt(max(pose.corner_noise_px ** 2 - expected ** 2 - ANCHOR_NOISE_EXPLAINED_PX ** 2, 0.0))


def outline_doubt(edge_sigma_px: float | None, side_px: float, cells: int = 6,
                  skew_px: float = 0.0, contrast_ratio: float | None = None) -> tuple[float, float, float]:
    """A marker outline's own doubt: (centre px per axis that changes frame to
    frame, centre px per axis that stays, heading radians).  `cells` is the
    marker's grid with its border (6 for 4x4 markers); `skew_px` how far the
    outline is from a square (its opposite sides' difference, on the roof's plane);
    `contrast_ratio` its border-to-margin contrast over the anchors' (None: unknown)."""
    side_px = max(side_px, 1.0)
    cell = side_px / cells
    skew = HEADING_SKEW * skew_px
    thin = 0.0 if contrast_ratio is None else max(MARGIN_FULL_RATIO - contrast_ratio, 0.0) * 10.0
    if edge_sigma_px is None:
        return (UNREFINED_CENTRE_SIGMA_PX, 0.0,
                max(UNREFINED_HEADING_SIGMA_RAD, math.hypot(UNREFINED_HEADING_PX, skew) / side_px))
    # Never below the scatter's own share (CENTRE_PER_EDGE_SIGMA, HEADING_PER_EDGE_SIGMA):
    # the fit saw markers of 15-35 px; big ones (real footage, 60-100 px) keep what they had.
    centre_random = max(CENTRE_TAIL * CENTRE_EDGE * edge_sigma_px / cell, CENTRE_PER_EDGE_SIGMA * edge_sigma_px)
    centre_fixed = CENTRE_TAIL * math.hypot(CENTRE_CELL / cell ** 2, CENTRE_BLEED_PX * thin)
    heading = max(HEADING_TAIL * math.sqrt((HEADING_EDGE * edge_sigma_px / cell) ** 2
                                           + (HEADING_CELL / cell ** 2) ** 2 + skew ** 2
                                           + (HEADING_BLEED_PX * thin) ** 2),
                  HEADING_PER_EDGE_SIGMA * edge_sigma_px) / side_px
    return centre_random, centre_fixed, heading


def locate_cars(specs: list[CarSpec], detections: list[MarkerDetection], pose: TablePose,
                roof_sigma_mm: float = 0.5, model_px: float | None = None,
                cells: int = 6, anchor_contrast: float | None = None) -> list[CarLocation]:
    """Each car's footprint centre and heading from its roof marker, with its doubt.

    The doubt is a 2 x 2 covariance per car, summed from where it comes from:
    the marker's own outline (its edge scatter), the corner noise the anchors
    show on this frame, the table's pose (the anchors' residuals, propagated),
    the roof height's doubt and, for an estimated camera, the focal length's
    (both move a roof point along the line from the camera's nadir).
    `sigma_mm` is half the radius that holds 95 % of it.  The heading's doubt
    is summed the same way (outline, corner noise, pose).  The outline's
    doubt is earned from its edge scatter and its cells' size in pixels
    (outline_doubt); `cells` is the markers' grid with its border;
    `anchor_contrast` the anchors' border-to-margin contrast on this frame, which
    a roof marker's own is measured against (None: not known, not used).
    """
    if not specs:
        return []
    n = len(specs)
    corners_px = np.array([d.corners_px for d in detections], dtype=np.float64)   # (N, 4, 2)
    roofs = np.array([s.roof_mm for s in specs], dtype=np.float64)
    flat, heights = corners_px.reshape(-1, 2), np.repeat(roofs, 4)
    centres_px = corners_px.mean(axis=1)
    if pose.covariance is None:
        corners_mm = pose.table_from_image(flat, heights).reshape(n, 4, 2)
        pose_cov, pose_heading_var = np.zeros((n, 2, 2)), np.zeros(n)
    else:
        # The corners and the centres through the pose and its derivative in one
        # pass (pose.table_covariance and _pose_heading_variance, each point as alone).
        on_table, jac = pose.table_jacobian(np.concatenate([flat, centres_px]), np.concatenate([heights, roofs]))
        corners_mm = on_table[:4 * n].reshape(n, 4, 2)
        centre_jac = jac[4 * n:]
        pose_cov = centre_jac @ pose.covariance @ centre_jac.transpose(0, 2, 1)
        pose_heading_var = _heading_variance(pose, on_table[:4 * n], jac[:4 * n])
    marker_centres = corners_mm.mean(axis=1)
    cam = pose.camera_centre_mm
    noise_px = pose.corner_noise_px if model_px is None else model_px
    # Every car at once (numpy over N): a frame of 16 cars cost 5 ms of a core one by one.
    headings = headings_from_corners(corners_mm)
    t = np.radians(headings)
    fwd = np.stack([np.cos(t), np.sin(t)], axis=-1)
    left = np.stack([-fwd[:, 1], fwd[:, 0]], axis=-1)
    offsets = np.array([(s.forward_offset_mm, s.left_offset_mm) for s in specs], dtype=np.float64)
    centres = marker_centres + offsets[:, :1] * fwd + offsets[:, 1:] * left
    sides_px = np.maximum(np.linalg.norm(corners_px - np.roll(corners_px, -1, axis=1), axis=2).mean(axis=1), 1.0)
    # pose.mm_per_px at each marker's centre on its roof's plane.
    on_roof = np.column_stack([marker_centres, roofs])
    mm_per_px = ((on_roof @ pose.rotation.T)[:, 2] + float(np.asarray(pose.tvec).reshape(3)[2])) / pose.camera.focal_px
    sides_mm = np.linalg.norm(corners_mm - np.roll(corners_mm, -1, axis=1), axis=2)
    skews_px = np.hypot(sides_mm[:, 0] - sides_mm[:, 2], sides_mm[:, 1] - sides_mm[:, 3]) / np.maximum(mm_per_px, 1e-9)
    ratios = [d.contrast / anchor_contrast if d.contrast is not None and anchor_contrast else None
              for d in detections]
    doubts = np.array([outline_doubt(d.edge_sigma_px, float(s), cells, float(k), r)
                       for d, s, k, r in zip(detections, sides_px, skews_px, ratios)])  # (N, 3)
    centre_px, centre_fixed_px, heading_rad = doubts[:, 0], doubts[:, 1], doubts[:, 2]
    model_heading_rad = MODEL_HEADING_PER_CORNER_NOISE * noise_px / sides_px
    fixed_heading_var = (model_heading_rad ** 2 + pose_heading_var
                         + (1 - HEADING_RANDOM_SHARE ** 2) * heading_rad ** 2)
    heading_rad = heading_rad * HEADING_RANDOM_SHARE
    heading_sd = np.sqrt(heading_rad ** 2 + fixed_heading_var)
    offset_mm = np.hypot(offsets[:, 0], offsets[:, 1])
    random_var = (centre_px * mm_per_px) ** 2 + (offset_mm * heading_rad) ** 2
    model_var = ((MODEL_CENTRE_PER_CORNER_NOISE * noise_px * mm_per_px) ** 2
                 + (centre_fixed_px * mm_per_px) ** 2 + offset_mm ** 2 * fixed_heading_var)
    cov = np.asarray(pose_cov, dtype=np.float64) + (random_var + model_var)[:, None, None] * np.eye(2)
    radial = marker_centres - cam[:2]
    radius = np.linalg.norm(radial, axis=1)
    away = radius > 1e-6
    if away.any():
        u = radial[away] / radius[away, None]
        height = np.maximum(cam[2] - roofs[away], 1.0)
        along = (radius[away] * roof_sigma_mm / height) ** 2
        along = along + (radius[away] * roofs[away] / height * pose.camera.focal_rel_sigma) ** 2
        cov[away] = cov[away] + along[:, None, None] * (u[:, :, None] * u[:, None, :])
    sigma_mm = np.maximum(_radii_95(cov) / 2, MIN_SIGMA_MM)
    random_mm = np.minimum(_radii_95(random_var[:, None, None] * np.eye(2)) / 2, sigma_mm)
    sigma_deg = np.maximum(np.degrees(heading_sd), MIN_SIGMA_DEG)
    random_deg = np.minimum(np.degrees(heading_rad), sigma_deg)
    return [CarLocation(spec.id, spec.name, float(centres[i, 0]), float(centres[i, 1]),
                        normalize_deg(float(headings[i])), float(sigma_mm[i]), float(sigma_deg[i]),
                        float(random_mm[i]), det.edge_sigma_px, float(random_deg[i]))
            for i, (spec, det) in enumerate(zip(specs, detections))]


#: Per-axis sigmas in the 95 % radius of a line-like and of a round 2-D Gaussian.
LINE_95 = 1.96
ROUND_95 = 2.448


def _radii_95(cov: np.ndarray) -> np.ndarray:
    """radius_95 for (N, 2, 2) covariances at once."""
    a, b, d = cov[:, 0, 0], cov[:, 0, 1], cov[:, 1, 1]
    half_trace, root = (a + d) / 2, np.hypot((a - d) / 2, b)
    major = np.sqrt(np.maximum(half_trace + root, 0.0))
    minor = np.sqrt(np.maximum(half_trace - root, 0.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = major * (LINE_95 + (ROUND_95 - LINE_95) * minor / major)
    return np.where(major == 0, 0.0, r)


def radius_95(cov: np.ndarray) -> float:
    """Radius of the circle holding 95 % of a 2-D Gaussian with this covariance.

    1.96 sigma for a line-like spread, 2.448 sigma for a round one; between the
    two, interpolated on the ratio of the axes (within a few per cent)."""
    a, b, d = float(cov[0, 0]), float(cov[0, 1]), float(cov[1, 1])
    # The eigenvalues of a symmetric 2 x 2, in closed form (eigvalsh costs more per call).
    half_trace, root = (a + d) / 2, math.hypot((a - d) / 2, b)
    major = math.sqrt(max(half_trace + root, 0.0))
    minor = math.sqrt(max(half_trace - root, 0.0))
    if major == 0:
        return 0.0
    return major * (LINE_95 + (ROUND_95 - LINE_95) * minor / major)


# --- setup checks: the table file and the camera file against what is seen -------------

#: An anchor is named when it is seen more than this far (mm) from where the
#: table file puts it, by the pose fitted to the other anchors.  Measured on
#: rendered tables (the demo's six anchors, noise 2, JPEG 85, blur 0.6-1.5 px) a
#: correct file leaves every anchor within 0.2 mm (0.1 mm with the camera
#: file); a sheet laid by hand is within a millimetre or two; 5 mm is a mistake
#: in the file or a marker moved.
ANCHOR_OFF_MM = 5.0
#: The camera file does not fit when the anchors' corners reproject with its
#: intrinsics this many times worse than with intrinsics estimated from the
#: same corners, and by more than CAMERA_MISFIT_MIN_PX.  Measured on the demo
#: table rendered (blur 0.6 and 1.5 px): the right file gives 0.9 times the
#: estimate's residual (0.16 against 0.18 px); a file with the focal 1.3 times
#: too long, 14 times (2.5 px); k1 -0.3 where the lens has -0.05, 96 times.
CAMERA_MISFIT_RATIO = 3.0
CAMERA_MISFIT_MIN_PX = 0.5


@dataclass(frozen=True)
class AnchorCheck:
    """Where one anchor is seen (table mm, by the pose fitted to the other anchors)."""

    id: int
    seen_x_mm: float
    seen_y_mm: float
    file_x_mm: float
    file_y_mm: float

    @property
    def off_mm(self) -> float:
        return math.hypot(self.seen_x_mm - self.file_x_mm, self.seen_y_mm - self.file_y_mm)

    def to_json(self) -> dict:
        return {"id": self.id, "off_mm": round(self.off_mm, 1), "seen_mm": [round(self.seen_x_mm, 1),
                round(self.seen_y_mm, 1)], "file_mm": [self.file_x_mm, self.file_y_mm]}


@dataclass(frozen=True)
class SetupCheck:
    """What the anchors say about the table file and the camera file."""

    anchors: tuple[AnchorCheck, ...] = ()
    #: Anchors' corner residual (px RMS) with the camera file, and with intrinsics
    #: estimated from the same corners (None: no camera file, or too few anchors).
    camera_file_px: float | None = None
    camera_estimated_px: float | None = None
    warnings: tuple[str, ...] = ()

    def to_json(self) -> dict:
        out: dict = {"anchors": [a.to_json() for a in self.anchors], "warnings": list(self.warnings)}
        if self.camera_file_px is not None:
            out["camera_fit"] = {"file_px": round(self.camera_file_px, 2),
                                 "estimated_px": round(self.camera_estimated_px, 2)}
        return out


def check_setup(located: FrameLocation, table: TableSpec, camera_file: CameraModel | None) -> SetupCheck:
    """Each anchor seen, placed by the pose the OTHER anchors give (leave one out),
    against the table file; and whether the camera file fits the anchors' corners.

    One wrong anchor bends every pose it takes part in, so the culprit is the
    anchor whose leaving out makes the others agree best; it is named when it
    is off by more than ANCHOR_OFF_MM, left out, and the search repeated on the
    rest while enough remain.  The camera file is judged first: a wrong lens
    moves every anchor a little, which is no anchor's fault."""
    dets = {d.id: d for d in located.detections if table.anchor(d.id) is not None}
    ids = sorted(i for i in dets if i in located.anchors)
    pose = located.table_pose
    if pose is None or len(ids) < MIN_ANCHORS:
        return SetupCheck()
    corners = {i: dets[i].corners_px for i in ids}
    size = pose.camera.image_size
    camera: CameraModel | None = pose.camera if not pose.camera.estimated else None
    warnings: list[str] = []
    file_px = est_px = None
    if camera_file is not None and camera is not None and size is not None:
        try:
            estimated = solve_table_pose(corners, table, None, image_size=size)
            fitted = solve_table_pose(corners, table, camera)
            file_px = pose_disagreement_px(fitted, corners, table)
            est_px = pose_disagreement_px(estimated, corners, table)
        except (TablePoseError, ValueError):
            pass
        if file_px is not None and file_px > max(CAMERA_MISFIT_RATIO * est_px, CAMERA_MISFIT_MIN_PX):
            warnings.append(
                f"the camera file ({camera.source}) does not fit this camera: the anchors' corners are "
                f"{file_px:.1f} px off with it, {est_px:.1f} px with the lens estimated from the anchors "
                f"alone; is it another camera's file, or were the zoom or focus changed? Calibrate again "
                f"(companion calibrate) or leave --camera out")
            camera = None            # judge the anchors with the lens that fits them
    clean, named = list(ids), []
    trials: dict[int, tuple[np.ndarray, float]] = {}
    while len(clean) > MIN_ANCHORS:
        trials = _leave_one_out(clean, corners, table, camera, size)
        if not trials:
            break
        culprit = min(trials, key=lambda i: trials[i][1])
        if _off_mm(table, culprit, trials[culprit][0]) <= ANCHOR_OFF_MM:
            break
        named.append((culprit, trials[culprit][0]))
        clean.remove(culprit)
        trials = {}
    if len(clean) > MIN_ANCHORS and not trials:
        trials = _leave_one_out(clean, corners, table, camera, size)
    checks = [_anchor_check(table, i, seen) for i, (seen, _) in trials.items()]
    checks += [_anchor_check(table, i, seen) for i, seen in named]
    checks.sort(key=lambda c: -c.off_mm)
    warnings += [_anchor_warning(c) for c in checks if c.id in {i for i, _ in named}]
    return SetupCheck(tuple(checks), file_px, est_px, tuple(warnings))


def _leave_one_out(ids: list[int], corners: dict[int, np.ndarray], table: TableSpec,
                   camera: CameraModel | None, size) -> dict[int, tuple[np.ndarray, float]]:
    """Per anchor: where the pose fitted to the others puts it (table mm), and how well
    the others agree with that pose (px RMS)."""
    out = {}
    for i in ids:
        others = {j: corners[j] for j in ids if j != i}
        try:
            alone = solve_table_pose(others, table, camera, image_size=size)
        except (TablePoseError, ValueError):
            continue
        seen = alone.table_from_image(np.asarray(corners[i], np.float64).reshape(4, 2), 0.0).mean(axis=0)
        out[i] = (seen, pose_disagreement_px(alone, others, table))
    return out


def _off_mm(table: TableSpec, anchor_id: int, seen: np.ndarray) -> float:
    a = table.anchor(anchor_id)
    return math.hypot(float(seen[0]) - a.x_mm, float(seen[1]) - a.y_mm)


def _anchor_check(table: TableSpec, anchor_id: int, seen: np.ndarray) -> AnchorCheck:
    a = table.anchor(anchor_id)
    return AnchorCheck(anchor_id, float(seen[0]), float(seen[1]), a.x_mm, a.y_mm)


def _anchor_warning(c: AnchorCheck) -> str:
    return (f"anchor {c.id} is seen {c.off_mm:.0f} mm from where the table file puts it "
            f"(file x={c.file_x_mm:g}, y={c.file_y_mm:g}; seen at x={c.seen_x_mm:.0f}, y={c.seen_y_mm:.0f}): "
            f"measure it again or fix the table file")


def expected_roof_side_px(pose: TablePose | None, table: TableSpec) -> float | None:
    """How many pixels across the smallest roof marker looks where the camera sees
    it smallest (the table's far corners): the size check's yardstick when no roof
    marker is found."""
    if pose is None or not table.cars:
        return None
    spec = min(table.cars, key=lambda c: c.marker_mm)
    corners = [(0.0, 0.0), (table.width_mm, 0.0), (table.width_mm, table.depth_mm), (0.0, table.depth_mm),
               (table.width_mm / 2, table.depth_mm / 2)]
    return min(spec.marker_mm / pose.mm_per_px(x, y, spec.roof_mm) for x, y in corners)


def frame_checks(image: np.ndarray, located: FrameLocation, table: TableSpec,
                 camera_file: CameraModel | None) -> tuple[dict, dict | None]:
    """One frame's marker size and sharpness check ("quality", vision.quality) and
    setup check ("setup": the anchors against the table file, the camera file
    against the anchors; None without a table pose), as JSON.  They cost 10-25 ms:
    made on single images, and now and then on a video or a live camera."""
    from .detect import dictionary
    from .quality import assess

    cells = dictionary(table.dictionary).markerSize + 2
    quality = assess(to_gray(image), located.detections, cells, table.car_ids,
                     expected_roof_side_px(located.table_pose, table)).to_json()
    setup = None if located.table_pose is None else check_setup(located, table, camera_file).to_json()
    return quality, setup

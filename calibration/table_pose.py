"""Where the table is, seen from the camera.

The anchors lie flat on the table at known places (the table file), so their
corners in the image give the table's pose: a rotation and translation from the
table frame (origin at the near-left corner, +x right, +y away, +z up) to the
camera.  With the pose, any pixel maps to a point on the table, or on a plane a
given height above it, such as a car's roof.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import cv2
import numpy as np

from .camera import CameraModel
from .tablefile import TableSpec

#: A typical webcam's horizontal field of view, used when the anchors cannot
#: tell the focal length (a camera looking straight down sees no perspective).
FALLBACK_HORIZONTAL_FOV_DEG = 65.0
#: Fewer anchors than this and the table's pose is a guess, not a measurement.
MIN_ANCHORS = 3
#: An anchor is only dropped as an outlier when it is off by more than this (px RMS).
OUTLIER_FLOOR_PX = 0.6


class TablePoseError(ValueError):
    """The table could not be found in a frame; the message says which anchors are missing."""


@dataclass(frozen=True, eq=False)
class TablePose:
    """The table's pose in the camera: x_camera = R @ x_table + t."""

    camera: CameraModel
    rvec: np.ndarray
    tvec: np.ndarray
    anchors_used: tuple[int, ...]
    reprojection_px: float   # RMS over the anchor corners
    reprojection_mm: float   # the same residuals, measured on the table
    anchors_rejected: tuple[int, ...] = ()   # seen, but disagreeing with the rest
    #: Covariance (6 x 6) of (rvec, tvec) from the anchors' residuals, or None.
    covariance: np.ndarray | None = None
    #: The anchors' corner noise (px, RMS over both axes), corrected for the six
    #: degrees of freedom the fit takes: on a real table (a lens not quite its
    #: model, anchors not quite where the file says) every marker's corners are
    #: this far off, cars' too.
    corner_noise_px: float = 0.0

    @cached_property
    def rotation(self) -> np.ndarray:
        r, _ = cv2.Rodrigues(np.asarray(self.rvec, dtype=np.float64))
        return r

    @cached_property
    def camera_centre_mm(self) -> np.ndarray:
        """The camera's optical centre in table coordinates (x, y, z)."""
        return -self.rotation.T @ np.asarray(self.tvec, dtype=np.float64).reshape(3)

    def table_from_image(self, points_px: np.ndarray, height_mm: float | np.ndarray = 0.0) -> np.ndarray:
        """Table (x, y) in mm of pixels seen on the plane `height_mm` above the table.

        Each pixel's ray leaves the camera centre; where it meets the plane
        z = height is the point.  `height_mm` may be one value or one per point.
        """
        return self.table_from_rays(self.camera.rays_from_pixels(points_px), height_mm)

    def table_from_rays(self, rays: np.ndarray, height_mm: float | np.ndarray = 0.0) -> np.ndarray:
        """`table_from_image` for rays already undistorted (CameraModel.rays_from_pixels):
        the lens's part does not depend on the pose, so it is done once for many poses."""
        dirs = np.column_stack([rays, np.ones(len(rays))]) @ self.rotation  # = (R.T @ d).T
        centre = self.camera_centre_mm
        heights = np.broadcast_to(np.asarray(height_mm, dtype=np.float64), (len(rays),))
        with np.errstate(divide="ignore", invalid="ignore"):
            lam = (heights - centre[2]) / dirs[:, 2]
        return centre[:2] + lam[:, None] * dirs[:, :2]

    def table_jacobian(self, points_px: np.ndarray, height_mm: float | np.ndarray = 0.0
                       ) -> tuple[np.ndarray, np.ndarray]:
        """`table_from_image` (N, 2) and its derivative (N, 2, 6) by the pose's
        (rvec, tvec), by finite steps."""
        rays = self.camera.rays_from_pixels(points_px)
        base = self.table_from_rays(rays, height_mm)
        jac = np.empty((len(rays), 2, 6))
        params = np.concatenate([np.ravel(self.rvec), np.ravel(self.tvec)])
        for k in range(6):
            step = 1e-6 if k < 3 else 1e-3           # radians, millimetres
            p = params.copy()
            p[k] += step
            moved = TablePose(self.camera, p[:3], p[3:], self.anchors_used, 0.0, 0.0)
            jac[:, :, k] = (moved.table_from_rays(rays, height_mm) - base) / step
        return base, jac

    def table_covariance(self, points_px: np.ndarray, height_mm: np.ndarray) -> np.ndarray:
        """Covariance (N, 2, 2) of `table_from_image` that comes from the pose's own doubt."""
        n = len(points_px)
        if self.covariance is None or n == 0:
            return np.zeros((n, 2, 2))
        _, jac = self.table_jacobian(points_px, height_mm)
        return jac @ self.covariance @ jac.transpose(0, 2, 1)

    def image_from_table(self, points_xyz: np.ndarray) -> np.ndarray:
        """Pixels of table points (x, y, z) in mm."""
        return self.camera.project(points_xyz, self.rvec, self.tvec)

    def mm_per_px(self, x_mm: float, y_mm: float, height_mm: float = 0.0) -> float:
        """How many millimetres one pixel spans at a table point (along the image axes)."""
        p = self.rotation @ np.array([x_mm, y_mm, height_mm]) + np.asarray(self.tvec).reshape(3)
        return float(p[2] / self.camera.focal_px)

    @property
    def camera_height_mm(self) -> float:
        return float(self.camera_centre_mm[2])


def anchor_object_points(table: TableSpec, ids: list[int]) -> np.ndarray:
    """The table-frame corners (N*4, 3) of the anchors named, in OpenCV's corner order."""
    pts = []
    for marker_id in ids:
        anchor = table.anchor(marker_id)
        assert anchor is not None
        pts.extend((x, y, 0.0) for x, y in anchor.corners_mm())
    return np.array(pts, dtype=np.float64)


def solve_table_pose(anchor_corners: Mapping[int, np.ndarray], table: TableSpec,
                     camera: CameraModel | None, *, min_anchors: int = MIN_ANCHORS,
                     image_size: tuple[int, int] | None = None) -> TablePose:
    """The table's pose from every anchor corner in view.

    `anchor_corners` maps an anchor's id to its four corners in pixels.  Without
    a camera, the intrinsics are estimated from the same corners
    (:func:`estimate_camera`); `image_size` is then needed.
    """
    ids = sorted(i for i in anchor_corners if table.anchor(i) is not None)
    if len(ids) < min_anchors:
        missing = [a for a in table.anchor_ids if a not in ids]
        seen = ", ".join(map(str, ids)) or "none"
        raise TablePoseError(
            f"too few anchors in view to find the table: saw {seen}; missing "
            f"{', '.join(map(str, missing))} (need at least {min_anchors} of "
            f"{len(table.anchors)})")
    obj = anchor_object_points(table, ids)
    img = np.concatenate([np.asarray(anchor_corners[i], dtype=np.float64).reshape(4, 2) for i in ids])
    if camera is None:
        if image_size is None:
            raise ValueError("image_size is needed to estimate the camera")
        camera = estimate_camera(obj[:, :2], img, image_size)

    rejected: list[int] = []
    while True:
        pose, per_anchor = _solve(obj, img, ids, camera)
        worst = int(np.argmax(per_anchor))
        # A car or a hand over part of an anchor bends one corner; the others
        # agree. Drop the anchor that stands out, while enough remain.
        limit = max(3.0 * float(np.median(per_anchor)), OUTLIER_FLOOR_PX)
        if per_anchor[worst] <= limit or len(ids) <= min_anchors:
            break
        rejected.append(ids[worst])
        keep = [k for k in range(len(ids)) if k != worst]
        ids = [ids[k] for k in keep]
        obj = obj.reshape(-1, 4, 3)[keep].reshape(-1, 3)
        img = img.reshape(-1, 4, 2)[keep].reshape(-1, 2)
    residual_px = pose.image_from_table(obj) - img
    residual_mm = pose.table_from_image(img) - obj[:, :2]
    dof = max(residual_px.size - 6, 1)
    return TablePose(camera, pose.rvec, pose.tvec, tuple(ids),
                     float(np.sqrt(np.mean(np.sum(residual_px ** 2, axis=1)))),
                     float(np.sqrt(np.mean(np.sum(residual_mm ** 2, axis=1)))),
                     tuple(sorted(rejected)), _pose_covariance(obj, residual_px, pose),
                     float(np.sqrt(2 * np.sum(residual_px ** 2) / dof)))


def pose_disagreement_px(pose: TablePose, anchor_corners: Mapping[int, np.ndarray], table: TableSpec) -> float:
    """RMS distance (px) between anchors' corners as seen and where `pose` puts them."""
    ids = sorted(i for i in anchor_corners if table.anchor(i) is not None)
    if not ids:
        return float("nan")
    img = np.concatenate([np.asarray(anchor_corners[i], dtype=np.float64).reshape(4, 2) for i in ids])
    return float(np.sqrt(np.mean(np.sum((pose.image_from_table(anchor_object_points(table, ids)) - img) ** 2,
                                        axis=1))))


def pose_shift_px(a: TablePose, b: TablePose, table: TableSpec) -> float:
    """Largest distance (px) between where two poses put any anchor corner: how far the view moved."""
    obj = anchor_object_points(table, list(table.anchor_ids))
    if len(obj) == 0:
        return 0.0
    return float(np.max(np.linalg.norm(a.image_from_table(obj) - b.image_from_table(obj), axis=1)))


#: Floor on the anchors' corner noise when judging the pose's doubt: a handful
#: of anchors that happen to agree perfectly do not make the pose perfect.
MIN_ANCHOR_NOISE_PX = 0.05


def _pose_covariance(obj: np.ndarray, residual_px: np.ndarray, pose: TablePose) -> np.ndarray | None:
    """Gauss-Newton covariance of (rvec, tvec): sigma^2 (J^T J)^-1."""
    _, jac = cv2.projectPoints(obj.reshape(-1, 1, 3), pose.rvec, pose.tvec,
                               pose.camera.camera_matrix, pose.camera.dist_coeffs)
    j = jac[:, :6]
    dof = residual_px.size - 6
    if dof <= 0:
        return None
    noise = max(float(np.sum(residual_px ** 2) / dof), MIN_ANCHOR_NOISE_PX ** 2)
    try:
        return noise * np.linalg.inv(j.T @ j)
    except np.linalg.LinAlgError:
        return None


def _solve(obj: np.ndarray, img: np.ndarray, ids: list[int],
           camera: CameraModel) -> tuple[TablePose, np.ndarray]:
    """The pose from these corners, and each anchor's RMS residual in pixels."""
    ok, rvec, tvec = cv2.solvePnP(obj, img, camera.camera_matrix, camera.dist_coeffs,
                                  flags=cv2.SOLVEPNP_IPPE)
    if not ok:
        raise TablePoseError("the anchors' corners do not fit any pose of the table; "
                             "are the anchors where the table file says?")
    rvec, tvec = cv2.solvePnPRefineLM(obj, img, camera.camera_matrix, camera.dist_coeffs, rvec, tvec)
    pose = TablePose(camera, rvec.reshape(3), tvec.reshape(3), tuple(ids), 0.0, 0.0)
    if pose.camera_centre_mm[2] <= 0:
        raise TablePoseError("the anchors put the camera below the table; check the anchors' "
                             "positions and that the table file's ids match the printed markers")
    residual = np.sum((pose.image_from_table(obj) - img) ** 2, axis=1).reshape(-1, 4)
    return pose, np.sqrt(residual.mean(axis=1))


def estimate_camera(object_xy: np.ndarray, image_px: np.ndarray,
                    image_size: tuple[int, int]) -> CameraModel:
    """Guess a camera's intrinsics from one view of points on the table.

    Assumes square pixels, a centred principal point and a radial lens (k1);
    the focal length comes from the view's perspective.  When the camera looks
    too squarely down for the perspective to tell, a typical webcam's field of
    view is assumed and the doubt said to be large.  The result is marked
    `estimated`: a calibrated camera file is always better.
    """
    width, height = image_size
    centre = np.array([(width - 1) / 2, (height - 1) / 2])
    fallback_f = (width / 2) / math.tan(math.radians(FALLBACK_HORIZONTAL_FOV_DEG) / 2)
    f0 = _focal_from_homography(object_xy, image_px - centre)
    perspective_tells = f0 is not None and 0.3 * width < f0 < 5.0 * width

    obj = [np.column_stack([object_xy, np.zeros(len(object_xy))]).astype(np.float32)]
    img = [np.asarray(image_px, dtype=np.float32).reshape(-1, 1, 2)]
    flags = (cv2.CALIB_USE_INTRINSIC_GUESS | cv2.CALIB_FIX_PRINCIPAL_POINT
             | cv2.CALIB_FIX_ASPECT_RATIO | cv2.CALIB_ZERO_TANGENT_DIST
             | cv2.CALIB_FIX_K2 | cv2.CALIB_FIX_K3)
    if not perspective_tells:
        flags |= cv2.CALIB_FIX_FOCAL_LENGTH
    f_start = f0 if perspective_tells else fallback_f
    k0 = np.array([[f_start, 0, centre[0]], [0, f_start, centre[1]], [0, 0, 1]], dtype=np.float64)
    try:
        _, k, d, _, _, std_intr, _, _ = cv2.calibrateCameraExtended(
            obj, img, (width, height), k0, np.zeros(5), flags=flags)
        f = float(k[0, 0])
        f_sigma = float(std_intr.reshape(-1)[0]) if perspective_tells else 0.0
    except cv2.error:
        k, d, f, f_sigma = k0, np.zeros(5), f_start, 0.0
    if perspective_tells and not (0.3 * width < f < 5.0 * width and abs(d.reshape(-1)[0]) < 1.0):
        perspective_tells = False
        k, d, f = k0.copy(), np.zeros(5), fallback_f
        k[0, 0] = k[1, 1] = f
    if perspective_tells:
        # The statistical sigma ignores model error (a real lens is not pure k1); floor it.
        rel = max(f_sigma / f, 0.02)
    else:
        rel = 0.25
    return CameraModel(np.asarray(k), np.asarray(d).reshape(-1), (int(width), int(height)),
                       estimated=True, focal_rel_sigma=rel,
                       source="estimated from the anchors" if perspective_tells
                       else f"assumed ({FALLBACK_HORIZONTAL_FOV_DEG:g} degree webcam)")


def _focal_from_homography(object_xy: np.ndarray, centred_px: np.ndarray) -> float | None:
    """Zhang's two constraints on one plane's homography, with K = diag(f, f, 1)."""
    h, _ = cv2.findHomography(np.asarray(object_xy, np.float64), np.asarray(centred_px, np.float64))
    if h is None:
        return None
    h = h / np.linalg.norm(h[:, 0])
    h1, h2 = h[:, 0], h[:, 1]
    a = np.array([h1[0] * h2[0] + h1[1] * h2[1],
                  h1[0] ** 2 + h1[1] ** 2 - h2[0] ** 2 - h2[1] ** 2])
    b = np.array([-h1[2] * h2[2], -(h1[2] ** 2 - h2[2] ** 2)])
    denom = float(a @ a)
    if denom <= 0:
        return None
    w = float(a @ b) / denom
    if not w > 0:
        return None
    return 1.0 / math.sqrt(w)

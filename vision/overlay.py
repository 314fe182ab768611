"""Pictures for the calibration view: the camera's frame with what was found drawn
on it, and the frame rectified onto the table (seen from straight above, in
table millimetres) to lie under the page's top-down view.
"""

from __future__ import annotations

import cv2
import numpy as np

from calibration.tablefile import TableSpec
from calibration.table_pose import TablePose

_ANCHOR = (90, 220, 90)       # BGR
_CAR = (40, 170, 255)
_STALE = (150, 150, 150)
_UNKNOWN = (80, 80, 255)
_TABLE = (255, 255, 255)
_TERRAIN = (60, 220, 240)


def _poly(img, pts, colour, thickness=2, closed=True) -> None:
    cv2.polylines(img, [np.round(pts).astype(np.int32).reshape(-1, 1, 2)], closed, colour, thickness, cv2.LINE_AA)


def _text(img, text, at, colour) -> None:
    x, y = int(at[0]), int(at[1])
    cv2.putText(img, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (0, 0, 0), 4, cv2.LINE_AA)
    cv2.putText(img, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, 0.55, colour, 1, cv2.LINE_AA)


def annotate(image: np.ndarray, tracked, table: TableSpec) -> np.ndarray:
    """The frame with anchors (green) and car markers (orange) outlined as detected,
    the table's edge and terrain projected from the table's pose (white, yellow),
    and each car's footprint where the tracker puts it (grey when stale)."""
    out = image.copy() if image.ndim == 3 else cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)
    located = tracked.located
    anchor_ids, car_ids = set(table.anchor_ids), set(table.car_ids)
    for det in located.detections:
        colour = _ANCHOR if det.id in anchor_ids else _CAR if det.id in car_ids else _UNKNOWN
        _poly(out, det.corners_px, colour, 2)
        _text(out, str(det.id), det.corners_px[0] + (0, -6), colour)
    pose: TablePose | None = located.table_pose
    if pose is None:
        _text(out, "table not found: " + (located.error or "anchors not seen"), (12, 28), _UNKNOWN)
        return out
    w, d = table.width_mm, table.depth_mm
    edge = np.array([[x, y, 0.0] for x, y in _outline(w, d)])
    _poly(out, pose.image_from_table(edge), _TABLE, 2)
    for t in table.terrain:
        pts = np.array([[x, y, 0.0] for x, y in t.points])
        _poly(out, pose.image_from_table(pts), _TERRAIN, 2)
    for car in tracked.cars:
        spec = table.car(car.id)
        if spec is None:
            continue
        a, b = spec.length_mm / 2, spec.width_mm / 2
        t = np.radians(car.heading_deg)
        c, s = np.cos(t), np.sin(t)
        local = np.array([[a, b], [a, -b], [-a, -b], [-a, b]])
        xy = local @ np.array([[c, s], [-s, c]]) + (car.x_mm, car.y_mm)
        pts = np.column_stack([xy, np.zeros(4)])
        colour = _STALE if car.stale else _CAR
        _poly(out, pose.image_from_table(pts), colour, 1)
        centre = pose.image_from_table(np.array([[car.x_mm, car.y_mm, spec.roof_mm]]))[0]
        _text(out, spec.name, centre + (8, -8), colour)
    cam = pose.camera
    _text(out, f"anchors {len(pose.anchors_used)}: reprojection {pose.reprojection_px:.2f} px = "
               f"{pose.reprojection_mm:.2f} mm; camera {'estimated' if cam.estimated else 'calibrated'}",
          (12, 28), _TABLE)
    return out


def _outline(w: float, d: float, step: float = 50.0) -> list[tuple[float, float]]:
    """The table's edge as many points, so lens distortion bends it as it does the picture."""
    pts = []
    for (x0, y0), (x1, y1) in (((0, 0), (w, 0)), ((w, 0), (w, d)), ((w, d), (0, d)), ((0, d), (0, 0))):
        n = max(int(np.hypot(x1 - x0, y1 - y0) / step), 1)
        pts += [(x0 + (x1 - x0) * k / n, y0 + (y1 - y0) * k / n) for k in range(n)]
    return pts


class Rectifier:
    """Maps a frame onto the table plane, far edge at the top (as the page draws it).
    The maps are computed once per table pose and reused while it holds."""

    def __init__(self, table: TableSpec, px_per_mm: float = 0.5) -> None:
        self.table = table
        self.px_per_mm = px_per_mm
        self._key = None
        self._maps = None

    def __call__(self, image: np.ndarray, pose: TablePose) -> np.ndarray:
        key = (id(pose.camera), tuple(np.round(np.ravel(pose.rvec), 4)), tuple(np.round(np.ravel(pose.tvec), 1)))
        if key != self._key:
            w = int(round(self.table.width_mm * self.px_per_mm))
            h = int(round(self.table.depth_mm * self.px_per_mm))
            xs = (np.arange(w) + 0.5) / self.px_per_mm
            ys = self.table.depth_mm - (np.arange(h) + 0.5) / self.px_per_mm
            gx, gy = np.meshgrid(xs, ys)
            pts = np.column_stack([gx.ravel(), gy.ravel(), np.zeros(gx.size)])
            px = pose.image_from_table(pts).astype(np.float32)
            self._maps = (px[:, 0].reshape(h, w), px[:, 1].reshape(h, w))
            self._key = key
        return cv2.remap(image, self._maps[0], self._maps[1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)


def draw_table_shapes(image: np.ndarray, table_pose: dict, shapes: list[dict]) -> np.ndarray:
    """Draw shapes given in table mm (on the table's surface) onto a frame, through the
    table pose the frame was measured with (as stored: vision.evidence.pose_to_json)."""
    from .evidence import pose_from_json
    pose = pose_from_json(table_pose)
    out = image.copy()
    for shape in shapes:
        pts = np.asarray(shape["points"], dtype=float)
        if shape["kind"] == "line":        # many points, so the lens bends it as it bends the picture
            pts = np.linspace(pts[0], pts[-1], 24)
        xyz = np.column_stack([pts, np.zeros(len(pts))])
        px = pose.image_from_table(xyz)
        _poly(out, px, tuple(shape["colour"]), int(shape.get("width", 2)), closed=shape["kind"] == "polygon")
        if shape.get("label"):
            _text(out, shape["label"], px.mean(axis=0) + (6, -6), tuple(shape["colour"]))
    return out

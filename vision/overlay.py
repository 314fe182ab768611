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
    # The dark outline is the thin text drawn shifted round, not thick text: OpenCV spaces thick
    # glyphs wider, so a thick outline runs past the text ("calibrated" then a stray dark "ted").
    for dx, dy in ((-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1),
                   (-2, 0), (2, 0), (0, -2), (0, 2)):
        cv2.putText(img, text, (x + dx, y + dy), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (0, 0, 0), 1, cv2.LINE_AA)
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


_FONT = cv2.FONT_HERSHEY_SIMPLEX


def _dashed(img, pts, colour, thickness, closed=True, dash_px=12.0) -> None:
    """A dashed outline: where the rules put a car the frame does not show there."""
    pts = np.asarray(pts, dtype=float)
    ring = np.vstack([pts, pts[:1]]) if closed else pts
    for a, b in zip(ring[:-1], ring[1:]):
        n = max(int(np.hypot(*(b - a)) / dash_px), 1)
        for k in range(0, n, 2):
            p0, p1 = a + (b - a) * k / n, a + (b - a) * min(k + 1, n) / n
            cv2.line(img, tuple(np.round(p0).astype(int)), tuple(np.round(p1).astype(int)), colour, thickness, cv2.LINE_AA)


def place_labels(wanted: list[tuple[str, np.ndarray]], size: tuple[int, int], scale: float = 0.6
                 ) -> list[tuple[str, tuple[int, int, int, int]]]:
    """Where each label goes, (text, (x0, y0, x1, y1)) in pixels: beside its shape (above,
    below, right, left of its outline, then further out), inside the picture and clear of
    every label placed before it, so no two are drawn over each other. `wanted`: each label
    with its shape's points in pixels, most important first."""
    h, w = size
    placed: list[tuple[str, tuple[int, int, int, int]]] = []

    def clear(box):
        x0, y0, x1, y1 = box
        if x0 < 0 or y0 < 0 or x1 > w or y1 > h:
            return False
        return all(x1 + 3 <= b[0] or b[2] + 3 <= x0 or y1 + 3 <= b[1] or b[3] + 3 <= y0 for _, b in placed)

    for text, pts in wanted:
        (tw, th), base = cv2.getTextSize(text, _FONT, scale, 2)
        th += base + 4
        tw += 6
        (sx0, sy0), (sx1, sy1) = pts.min(axis=0), pts.max(axis=0)
        cx = (sx0 + sx1) / 2
        best = None
        for step in range(0, 8):
            gap = 4 + step * th
            for x, y in ((cx - tw / 2, sy0 - gap - th), (cx - tw / 2, sy1 + gap), (sx1 + gap, (sy0 + sy1) / 2 - th / 2),
                         (sx0 - gap - tw, (sy0 + sy1) / 2 - th / 2), (sx1 + gap, sy0 - gap - th), (sx0 - gap - tw, sy1 + gap)):
                box = (int(round(x)), int(round(y)), int(round(x + tw)), int(round(y + th)))
                if clear(box):
                    best = box
                    break
            if best is not None:
                break
        if best is None:            # nowhere clear: kept inside the picture, above its shape
            x = int(np.clip(cx - tw / 2, 0, max(w - tw, 0)))
            y = int(np.clip(sy0 - th - 4, 0, max(h - th, 0)))
            best = (x, y, x + tw, y + th)
        placed.append((text, best))
    return placed


def draw_table_shapes(image: np.ndarray, table_pose: dict, shapes: list[dict], *, focus: bool = False,
                      label_boxes: list | None = None) -> np.ndarray:
    """Draw shapes given in table mm (on the table's surface) onto a frame, through the
    table pose the frame was measured with (as stored: vision.evidence.pose_to_json).
    `focus`: only the part around the shapes drawn widest (the cars it is about), enlarged,
    with the lines and labels drawn at the enlarged size so they stay sharp. Labels sit
    beside their shapes, never over each other; a shape with `"dashed": True` is dashed.
    `label_boxes`, if given, receives each label's (text, box) as drawn."""
    from .evidence import pose_from_json
    pose = pose_from_json(table_pose)
    out = image.copy()
    projected = []
    for shape in shapes:
        pts = np.asarray(shape["points"], dtype=float)
        if shape["kind"] == "line":        # many points, so the lens bends it as it bends the picture
            pts = np.linspace(pts[0], pts[-1], 24)
        projected.append(pose.image_from_table(np.column_stack([pts, np.zeros(len(pts))])))
    if focus:
        about = [px for sh, px in zip(shapes, projected) if sh.get("width", 1) >= 3]
        if about:
            allpx = np.vstack(about)
            (x0, y0), (x1, y1) = allpx.min(axis=0) - 80, allpx.max(axis=0) + 80
            h, w = out.shape[:2]
            x0, y0, x1, y1 = max(int(x0), 0), max(int(y0), 0), min(int(x1), w), min(int(y1), h)
            if x1 - x0 > 10 and y1 - y0 > 10:
                scale = min(3.0, 1200 / (x1 - x0))
                out = cv2.resize(out[y0:y1, x0:x1], None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
                projected = [(px - (x0, y0)) * scale for px in projected]
    for shape, px in zip(shapes, projected):
        colour, width = tuple(shape["colour"]), int(shape.get("width", 2))
        if shape.get("dashed"):
            _dashed(out, px, colour, width, closed=shape["kind"] == "polygon")
        else:
            _poly(out, px, colour, width, closed=shape["kind"] == "polygon")
    # Labels last, the shapes drawn widest first, so theirs get the places nearest them.
    h, w = out.shape[:2]
    inside = [bool(((px[:, 0] >= 0) & (px[:, 0] < w) & (px[:, 1] >= 0) & (px[:, 1] < h)).any()) for px in projected]
    order = sorted((i for i, sh in enumerate(shapes) if sh.get("label") and inside[i]),   # a shape cropped off: no label
                   key=lambda i: -int(shapes[i].get("width", 2)))
    boxes = place_labels([(shapes[i]["label"], projected[i]) for i in order], out.shape[:2])
    for i, (text, (bx0, by0, bx1, by1)) in zip(order, boxes):
        cv2.rectangle(out, (bx0, by0), (bx1, by1), (20, 20, 20), -1)
        text_h = cv2.getTextSize(text, _FONT, 0.6, 2)[0][1]
        cv2.putText(out, text, (bx0 + 3, by0 + 2 + text_h), _FONT, 0.6, tuple(shapes[i]["colour"]), 2, cv2.LINE_AA)
    if label_boxes is not None:
        label_boxes.extend(boxes)
    return out

"""A synthetic projector: the light a real one would throw on the synthetic table.

A projector is a camera run backwards: a pinhole with a lens (OpenCV's model) and a
pose over the table, whose image pixels send light out along their rays.  Where that
light lands is where `cv2.projectPoints` of the lit point says, so the renderer asks,
for each camera pixel, which table point it sees and which projector pixel lights it.
The demo's projector hangs off-centre and tilted, with its lens shifted (as real ones
are: the image rises above the lens) and a little barrel distortion, so a calibration
that assumed a square-on, perfect projector would be caught out.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.tablefile import TableSpec

from .render import look_at


@dataclass(frozen=True, eq=False)
class SyntheticProjector:
    """A projector's lens and pose over the table (table -> projector, as a camera's)."""

    lens: CameraModel            # intrinsics, distortion and image size of the projector
    rvec: np.ndarray
    tvec: np.ndarray
    #: Light on white at full brightness, as a share of the room's light on it (1: as bright).
    gain: float = 0.9
    #: What a projector's "black" still throws, as a share of its white.
    black_level: float = 0.03
    #: Its focus: the blur of a thrown edge, in projector pixels.
    blur_px: float = 0.7

    @property
    def size_px(self) -> tuple[int, int]:
        return self.lens.image_size

    def project(self, points_xyz: np.ndarray) -> np.ndarray:
        """Projector pixels (N, 2) of table points (N, 3) in mm."""
        return self.lens.project(points_xyz, self.rvec, self.tvec)

    def table_to_projector(self, xy_mm: np.ndarray, z_mm: float = 0.0) -> np.ndarray:
        xy = np.atleast_2d(np.asarray(xy_mm, float))
        return self.project(np.column_stack([xy, np.full(len(xy), z_mm)]))


def demo_projector(table: TableSpec, width: int = 1280, height: int = 800,
                   spill: float = 1.06) -> SyntheticProjector:
    """A 1280 x 800 projector hung off to the left and behind the near edge, tilted to
    the table, its lens shifted, with a little barrel distortion; zoomed so the table
    sits inside its image with `spill` to spare."""
    w, d = table.width_mm, table.depth_mm
    # Off-centre and tilted: 1.4 m up, a fifth of the table to the left of its middle and
    # a third of a table behind the near edge, aimed beyond the middle, so the table lies
    # off its axis and the lens is shifted (up) to bring the image onto it.
    # Turned across so the table sits square about its axis left to right (its lens shifts
    # only up and down), whose aim is found by bisection.
    corners = np.array([[0, 0, 0], [w, 0, 0], [w, d, 0], [0, d, 0]], float)

    def view(aim_x: float):
        rvec, tvec = look_at((0.3 * w, -0.35 * d, 1400.0), (aim_x, 0.8 * d, 0.0))
        cam = corners @ cv2.Rodrigues(rvec)[0].T + tvec
        return rvec, tvec, cam[:, 0] / cam[:, 2], cam[:, 1] / cam[:, 2]

    lo, hi = 0.0, w
    for _ in range(40):
        mid = (lo + hi) / 2
        _, _, xn, _ = view(mid)
        lo, hi = (mid, hi) if xn.max() + xn.min() > 0 else (lo, mid)
    rvec, tvec, xn, yn = view((lo + hi) / 2)
    # The lens shifted up or down only, as nearly every projector's is (the calibration's
    # estimate of where the lens stands assumes it): its centre at the image's middle across.
    f = min(width / (2 * spill * np.abs(xn).max()), height / (spill * np.ptp(yn)))
    cx = width / 2
    cy = height / 2 - f * (yn.max() + yn.min()) / 2
    k = np.array([[f, 0, cx], [0, f, cy], [0, 0, 1.0]])
    lens = CameraModel(k, np.array([-0.04, 0.01, 0.0, 0.0, 0.0]), (width, height),
                       source="synthetic projector")
    return SyntheticProjector(lens, np.asarray(rvec, float).reshape(3), np.asarray(tvec, float).reshape(3))


class LightMaps:
    """For one camera and one projector: which projector pixel lights what each camera
    pixel sees, on the table and on a car's roof (computed once, per height)."""

    def __init__(self, renderer, projector: SyntheticProjector) -> None:
        self.renderer = renderer
        self.projector = projector
        self._maps: dict[float, tuple[np.ndarray, np.ndarray]] = {}
        self.at_height(0.0)

    def at_height(self, z_mm: float, window: tuple[int, int, int, int] | None = None
                  ) -> tuple[np.ndarray, np.ndarray]:
        """remap's maps (x, y): the projector pixel lighting what each camera pixel sees on
        the plane `z_mm` up. The table's (z 0, whole view) is kept; a roof's is worked out
        for its window (y0, y1, x0, x1) only, each frame (a few thousand pixels)."""
        key = round(float(z_mm), 1)
        if window is None and key in self._maps:
            return self._maps[key]
        r = self.renderer
        rays = r._rays                                        # (H, W, 2) undistorted camera rays
        if window is not None:
            y0, y1, x0, x1 = window
            rays = rays[y0:y1, x0:x1]
        h, w = rays.shape[:2]
        dirs = np.concatenate([rays.reshape(-1, 2), np.ones((h * w, 1), np.float32)], axis=1) @ r._rotation
        centre = r._centre
        with np.errstate(divide="ignore", invalid="ignore"):
            s = (key - centre[2]) / dirs[:, 2]
        pts = centre + s[:, None] * dirs
        pts[:, 2] = key
        px = self.projector.project(pts.astype(np.float64)).astype(np.float32)
        bad = ~np.isfinite(px).all(axis=1) | (s <= 0)
        px[bad] = -1e4
        maps = (px[:, 0].reshape(h, w).copy(), px[:, 1].reshape(h, w).copy())
        if window is None:
            self._maps[key] = maps
        return maps

    def light(self, projector_image: np.ndarray, regions=()) -> np.ndarray:
        """The projector's light in the camera's view (H, W, 3) float32, as a gain on what
        the room's light shows: 0 where it throws nothing (or black's own glow)."""
        p = self.projector
        img = projector_image.astype(np.float32) / 255.0
        if p.blur_px > 0:
            img = cv2.GaussianBlur(img, (0, 0), p.blur_px)
        img = p.black_level + (1.0 - p.black_level) * img
        mx, my = self.at_height(0.0)
        out = cv2.remap(img, mx, my, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
        # A car's roof stands above the table: the light that lands on it left the
        # projector through other pixels (parallax), so each car's part of the view is
        # looked up again at its roof's height.
        for (y0, y1, x0, x1), z_mm in regions:
            rx, ry = self.at_height(z_mm, (y0, y1, x0, x1))
            out[y0:y1, x0:x1] = cv2.remap(img, rx, ry, cv2.INTER_LINEAR,
                                          borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0))
        return out * p.gain


def rasterize(shapes, size_px: tuple[int, int]) -> np.ndarray:
    """The projector's image (H, W, 3) BGR uint8 for the shapes the display gives
    (companion.projector.ProjectorShape, or their JSON), drawn as the /projector page
    draws them: filled or stroked, anti-aliased, masks black over everything."""
    w, h = size_px
    img = np.zeros((h, w, 3), np.uint8)
    for s in shapes:
        s = s.to_json() if hasattr(s, "to_json") else s
        pts = np.asarray(s["points"], float).reshape(-1, 2)
        if len(pts) == 0:
            continue
        colour = _bgr(s["colour"]) if s["role"] != "mask" else (0, 0, 0)
        fixed = np.round(pts * 16).astype(np.int32)
        if s["filled"] and len(pts) >= 3:
            cv2.fillPoly(img, [fixed], colour, cv2.LINE_AA, shift=4)
        if not s["filled"] or s["role"] == "mask":
            thickness = max(1, int(round(s["width"])))
            if len(pts) == 1:
                cv2.circle(img, tuple(fixed[0]), max(1, int(round(s["width"] * 8))), colour, -1, cv2.LINE_AA, shift=4)
            else:
                cv2.polylines(img, [fixed], bool(s["closed"]), colour, thickness, cv2.LINE_AA, shift=4)
    return img


def _bgr(colour: str) -> tuple[int, int, int]:
    c = colour.lstrip("#")
    if len(c) == 3:
        c = "".join(ch * 2 for ch in c)
    r, g, b = (int(c[i:i + 2], 16) for i in (0, 2, 4))
    return (b, g, r)

"""A synthetic table: what a webcam above a real table would see, with the truth.

The renderer traces each pixel's ray back through the lens (OpenCV's distortion
model, inverted exactly) to the table or a car's roof, so the markers it draws
land where `cv2.projectPoints` says they should, to a small fraction of a pixel.
Edges are anti-aliased by supersampling; blur, sensor noise, uneven light and
JPEG artefacts are options.  Tests and the demo use it; the ground truth comes
back with every frame.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.tablefile import CarSpec, TableSpec

from .detect import dictionary

#: White margin around every printed marker, in cells of the marker's grid.
MARGIN_CELLS = 1.0

_FLOOR_BGR = np.array([38, 40, 44], np.float32)
_TABLE_BGR = np.array([88, 122, 96], np.float32)      # a green-grey mat
_WHITE = np.array([235, 238, 238], np.float32)
_BLACK = np.array([22, 22, 24], np.float32)
_CAR_COLOURS = [(40, 40, 170), (170, 90, 30), (40, 150, 200), (120, 60, 130), (60, 140, 60),
                (30, 100, 210), (150, 150, 40), (90, 90, 90)]


@dataclass(frozen=True)
class CarTruth:
    """Where a car really is: its footprint centre and heading on the table."""

    id: int
    x_mm: float
    y_mm: float
    heading_deg: float


@dataclass(frozen=True)
class RenderOptions:
    """How hard the frame is on the detector."""

    noise_sigma: float = 2.0        # grey levels, per pixel
    blur_sigma: float = 0.6         # pixels (lens and motion)
    light_gradient: float = 0.0     # 0.3 = one side 30 % darker than the other
    jpeg_quality: int | None = None
    supersample: int = 3            # samples per pixel along each axis
    table_texture: float = 0.04     # relative brightness variation of the mat
    #: White margin round each roof marker, in mm (None: one cell of its grid, as the
    #: sheets print it); players trim stickers to the car's roof, some to 2 mm.
    roof_margin_mm: float | None = None


@dataclass(frozen=True, eq=False)
class RenderedFrame:
    """A rendered image with the truth behind it."""

    image: np.ndarray
    cars: dict[int, CarTruth]
    car_corners_px: dict[int, np.ndarray]      # roof marker corners, OpenCV order
    anchor_corners_px: dict[int, np.ndarray]
    visible_cars: tuple[int, ...] = field(default=())


def look_at(camera_xyz_mm: Iterable[float], target_xyz_mm: Iterable[float]) -> tuple[np.ndarray, np.ndarray]:
    """rvec, tvec (table to camera) of a camera at one point looking at another.

    The image's x axis runs along the table's +x, so the near edge is at the
    bottom of the image, as a player on the near side expects.
    """
    c = np.asarray(list(camera_xyz_mm), dtype=np.float64)
    z = np.asarray(list(target_xyz_mm), dtype=np.float64) - c
    z /= np.linalg.norm(z)
    hint = np.array([1.0, 0.0, 0.0])
    x = hint - (hint @ z) * z
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    r = np.vstack([x, y, z])
    rvec, _ = cv2.Rodrigues(r)
    return rvec.reshape(3), -r @ c


def overhead_camera(table: TableSpec, width: int = 1920, height: int = 1080,
                    height_mm: float = 1100.0, behind_mm: float = 150.0,
                    dist_coeffs: Iterable[float] = (-0.05, 0.012, 0.0, 0.0, 0.0),
                    fill: float = 0.94) -> tuple[CameraModel, np.ndarray, np.ndarray]:
    """A webcam on a boom about `height_mm` above the table, a little towards the
    near side and tilted to look at the table's centre, zoomed so the table fills
    `fill` of the frame.  Returns the camera and its pose (rvec, tvec)."""
    target = (table.width_mm / 2, table.depth_mm / 2, 0.0)
    rvec, tvec = look_at((table.width_mm / 2, table.depth_mm / 2 - behind_mm, height_mm), target)
    r, _ = cv2.Rodrigues(rvec)
    corners = np.array([[0, 0, 0], [table.width_mm, 0, 0], [table.width_mm, table.depth_mm, 0],
                        [0, table.depth_mm, 0]], dtype=np.float64)
    cam = corners @ r.T + tvec
    xn, yn = np.abs(cam[:, 0] / cam[:, 2]), np.abs(cam[:, 1] / cam[:, 2])
    f = min(fill * (width / 2) / xn.max(), fill * (height / 2) / yn.max())
    k = np.array([[f, 0, (width - 1) / 2], [0, f, (height - 1) / 2], [0, 0, 1]])
    camera = CameraModel(k, np.asarray(list(dist_coeffs), np.float64), (width, height),
                         source="synthetic overhead webcam")
    return camera, rvec, tvec


def region_camera(table: TableSpec, region_mm: tuple[float, float, float, float],
                  width: int = 1920, height: int = 1080, height_mm: float = 1100.0,
                  behind_mm: float = 100.0,
                  dist_coeffs: Iterable[float] = (-0.05, 0.012, 0.0, 0.0, 0.0),
                  fill: float = 0.96, source: str = "synthetic webcam over part of the table"
                  ) -> tuple[CameraModel, np.ndarray, np.ndarray]:
    """A webcam `height_mm` above the middle of a part of the table (x0, y0, x1, y1 in
    table mm), a little towards the near side, zoomed so that part fills `fill` of the
    frame: one of several cameras over a big table.  Returns the camera and its pose."""
    x0, y0, x1, y1 = region_mm
    cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
    rvec, tvec = look_at((cx, cy - behind_mm, height_mm), (cx, cy, 0.0))
    r, _ = cv2.Rodrigues(rvec)
    corners = np.array([[x0, y0, 0], [x1, y0, 0], [x1, y1, 0], [x0, y1, 0]], dtype=np.float64)
    cam = corners @ r.T + tvec
    xn, yn = np.abs(cam[:, 0] / cam[:, 2]), np.abs(cam[:, 1] / cam[:, 2])
    f = min(fill * (width / 2) / xn.max(), fill * (height / 2) / yn.max())
    k = np.array([[f, 0, (width - 1) / 2], [0, f, (height - 1) / 2], [0, 0, 1]])
    camera = CameraModel(k, np.asarray(list(dist_coeffs), np.float64), (width, height), source=source)
    return camera, rvec, tvec


class _Sticker:
    """A printed marker with its white margin, lying in a horizontal plane."""

    def __init__(self, bits: np.ndarray, side_mm: float, margin_mm: float | None = None) -> None:
        self.bits = bits                  # (cells, cells) booleans, True = white
        self.side_mm = side_mm
        self.cells = bits.shape[0]
        self.margin_mm = side_mm / self.cells * MARGIN_CELLS if margin_mm is None else margin_mm

    def colour(self, f_mm: np.ndarray, l_mm: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Colours at points given forward/left of the marker centre (marker top faces forward).

        Returns (colours (N, 3), inside-the-sticker mask)."""
        half = self.side_mm / 2
        inside = (np.abs(f_mm) <= half + self.margin_mm) & (np.abs(l_mm) <= half + self.margin_mm)
        # Marker image coordinates: u right along the top edge, v down from it.
        u = (half - l_mm) / self.side_mm * self.cells
        v = (half - f_mm) / self.side_mm * self.cells
        in_marker = (u >= 0) & (u < self.cells) & (v >= 0) & (v < self.cells)
        ui = np.clip(u.astype(np.int32), 0, self.cells - 1)
        vi = np.clip(v.astype(np.int32), 0, self.cells - 1)
        white = ~in_marker | self.bits[vi, ui]
        return np.where(white[:, None], _WHITE, _BLACK), inside


class TableRenderer:
    """Draws a table, its anchors and cars as a given camera sees them."""

    def __init__(self, table: TableSpec, camera: CameraModel, rvec: np.ndarray, tvec: np.ndarray,
                 options: RenderOptions = RenderOptions(), seed: int = 0) -> None:
        self.table = table
        self.camera = camera
        self.rvec = np.asarray(rvec, np.float64).reshape(3)
        self.tvec = np.asarray(tvec, np.float64).reshape(3)
        self.options = options
        self._rotation, _ = cv2.Rodrigues(self.rvec)
        self._centre = -self._rotation.T @ self.tvec
        self._dict = dictionary(table.dictionary)
        self._stickers: dict[tuple[int, float], _Sticker] = {}
        self._rng = np.random.default_rng(seed)
        self._rays = _ray_map(camera)
        self._gain = self._light_field() if options.light_gradient else None
        # The table and its anchors do not move: draw, light and blur them once.
        self._sharp = self._draw_background()
        if self._gain is not None:
            self._sharp *= self._gain
        self._blurred = _to_u8(self._blur(self._sharp))
        h, w = self._sharp.shape[:2]
        self._noise = None
        if options.noise_sigma > 0:
            # A bank of sensor noise read at a random offset each frame: a fresh
            # draw per frame costs ten times as much, and no test can tell.
            self._noise = np.empty((h + _NOISE_PAD, w + _NOISE_PAD, 3), np.int16)
            cv2.setRNGSeed(int(self._rng.integers(2 ** 31)))
            sigma = float(options.noise_sigma)
            cv2.randn(self._noise, (0, 0, 0), (sigma, sigma, sigma))

    @classmethod
    def overhead(cls, table: TableSpec, options: RenderOptions = RenderOptions(), seed: int = 0,
                 **camera_kwargs) -> "TableRenderer":
        camera, rvec, tvec = overhead_camera(table, **camera_kwargs)
        return cls(table, camera, rvec, tvec, options, seed)

    # --- the scene -----------------------------------------------------------------

    def sticker(self, marker_id: int, side_mm: float, margin_mm: float | None = None) -> _Sticker:
        key = (marker_id, side_mm, margin_mm)
        if key not in self._stickers:
            cells = self._dict.markerSize + 2
            img = cv2.aruco.generateImageMarker(self._dict, marker_id, cells, borderBits=1)
            self._stickers[key] = _Sticker(img > 127, side_mm, margin_mm)
        return self._stickers[key]

    def project(self, points_xyz: np.ndarray) -> np.ndarray:
        return self.camera.project(points_xyz, self.rvec, self.tvec)

    def anchor_corners_px(self) -> dict[int, np.ndarray]:
        return {a.id: self.project(np.array([(x, y, 0.0) for x, y in a.corners_mm()]))
                for a in self.table.anchors}

    def car_marker_corners_mm(self, spec: CarSpec, truth: CarTruth) -> np.ndarray:
        """The roof marker's corners (4, 3) in table mm, OpenCV's order."""
        fwd, left = _axes(truth.heading_deg)
        centre = np.array([truth.x_mm, truth.y_mm]) - spec.forward_offset_mm * fwd - spec.left_offset_mm * left
        h = spec.marker_mm / 2
        pts = [centre + h * fwd + h * left, centre + h * fwd - h * left,
               centre - h * fwd - h * left, centre - h * fwd + h * left]
        return np.array([(p[0], p[1], spec.roof_mm) for p in pts])

    def render(self, cars: Iterable[CarTruth], rng: np.random.Generator | None = None,
               projected=None) -> RenderedFrame:
        """Draw the cars at their poses over the table; add blur, light, noise and JPEG.

        `projected`: (vision.projector_sim.LightMaps, the projector's image) to light the
        table (and the cars' roofs) as a projector above it would."""
        rng = rng or self._rng
        cars = list(cars)
        sharp = self._sharp.copy()
        image = self._blurred.copy()
        by_distance = sorted(cars, key=lambda c: -np.hypot(c.x_mm - self._centre[0], c.y_mm - self._centre[1]))
        corners: dict[int, np.ndarray] = {}
        visible = []
        regions = []
        roofs = []
        for truth in by_distance:
            spec = self.table.car(truth.id)
            if spec is None:
                raise ValueError(f"car {truth.id} is not in the table file")
            region = self._draw_car(sharp, spec, truth)
            if region is not None:
                visible.append(truth.id)
                regions.append(region)
                roofs.append((region, spec.roof_mm))
            corners[truth.id] = self.project(self.car_marker_corners_mm(spec, truth))
        # Blur only where cars changed the picture (blur is local), then noise and JPEG.
        pad = int(math.ceil(3 * self.options.blur_sigma)) + 1
        h, w = image.shape[:2]
        for y0, y1, x0, x1 in regions:
            ys, xs = slice(max(y0 - 2 * pad, 0), min(y1 + 2 * pad, h)), slice(max(x0 - 2 * pad, 0), min(x1 + 2 * pad, w))
            blurred = self._blur(sharp[ys, xs])
            iy = slice(max(y0 - pad, 0) - ys.start, min(y1 + pad, h) - ys.start)
            ix = slice(max(x0 - pad, 0) - xs.start, min(x1 + pad, w) - xs.start)
            image[ys, xs][iy, ix] = _to_u8(blurred[iy, ix])
        if projected is not None:
            # Light adds to the room's: what the table reflects grows by the projector's share.
            maps, thrown = projected
            image = _to_u8(image.astype(np.float32) * (1.0 + maps.light(thrown, roofs)))
        image = self._finish(image, rng)
        return RenderedFrame(image, {c.id: c for c in cars}, corners, self.anchor_corners_px(),
                             tuple(sorted(visible)))

    # --- drawing ---------------------------------------------------------------------

    def _draw_background(self) -> np.ndarray:
        w, h = self.camera.image_size
        canvas = np.empty((h, w, 3), np.float32)
        canvas[:] = _FLOOR_BGR
        # The table's edge, sampled densely so the lens bends it as it should.
        t = self.table
        edge = []
        for (x0, y0), (x1, y1) in [((0, 0), (t.width_mm, 0)), ((t.width_mm, 0), (t.width_mm, t.depth_mm)),
                                   ((t.width_mm, t.depth_mm), (0, t.depth_mm)), ((0, t.depth_mm), (0, 0))]:
            s = np.linspace(0, 1, 64, endpoint=False)
            edge.extend(zip(x0 + (x1 - x0) * s, y0 + (y1 - y0) * s, np.zeros_like(s)))
        poly = self.project(np.array(edge))
        in_view = self._in_front(np.array(edge))
        if in_view.all():
            mat = np.zeros((h, w), np.uint8)
            cv2.fillPoly(mat, [np.round(poly * 16).astype(np.int32)], 255, cv2.LINE_AA, shift=4)
            alpha = (mat.astype(np.float32) / 255)[..., None]
            texture = self._mat_texture(w, h)
            canvas = canvas * (1 - alpha) + (_TABLE_BGR * texture[..., None]) * alpha
        for anchor in t.anchors:
            sticker = self.sticker(anchor.id, anchor.size_mm)
            self._draw_plane_rect(canvas, 0.0, (anchor.x_mm, anchor.y_mm), 90.0 + anchor.rotation_deg,
                                  sticker.side_mm / 2 + sticker.margin_mm,
                                  sticker.side_mm / 2 + sticker.margin_mm,
                                  lambda f, l, s=sticker: s.colour(f, l))
        return canvas

    def _mat_texture(self, w: int, h: int) -> np.ndarray:
        amp = self.options.table_texture
        if amp <= 0:
            return np.ones((h, w), np.float32)
        coarse = self._rng.normal(0.0, 1.0, (h // 24 + 2, w // 24 + 2)).astype(np.float32)
        smooth = cv2.resize(coarse, (w, h), interpolation=cv2.INTER_CUBIC)
        fine = self._rng.normal(0.0, 0.5, (h, w)).astype(np.float32)
        return 1.0 + amp * (smooth + fine) / 1.5

    def _light_field(self) -> np.ndarray:
        w, h = self.camera.image_size
        g = self.options.light_gradient
        x = np.linspace(-1, 1, w, dtype=np.float32)[None, :]
        y = np.linspace(-1, 1, h, dtype=np.float32)[:, None]
        gain = 1.0 - g * (0.5 + 0.35 * x + 0.15 * y) - 0.25 * g * (x ** 2 + y ** 2)
        return np.clip(gain, 0.2, 1.2)[..., None]

    def _in_front(self, points_xyz: np.ndarray) -> np.ndarray:
        return (points_xyz @ self._rotation.T + self.tvec)[:, 2] > 1.0

    def _draw_car(self, canvas: np.ndarray, spec: CarSpec, truth: CarTruth) -> tuple[int, int, int, int] | None:
        """Draw a car's body and roof; return the pixel region (y0, y1, x0, x1) it touched."""
        fwd, left = _axes(truth.heading_deg)
        c = np.array([truth.x_mm, truth.y_mm])
        a, b = spec.length_mm / 2, spec.width_mm / 2
        box = []
        for z in (0.0, spec.roof_mm):
            for sf, sl in ((1, 1), (1, -1), (-1, -1), (-1, 1)):
                p = c + sf * a * fwd + sl * b * left
                box.append((p[0], p[1], z))
        box = np.array(box)
        if not self._in_front(box).all():
            return None
        colour = np.array(_CAR_COLOURS[spec.id % len(_CAR_COLOURS)], np.float32)
        hull = cv2.convexHull(np.round(self.project(box) * 16).astype(np.int32))
        body = np.zeros(canvas.shape[:2], np.uint8)
        x0, y0, bw, bh = cv2.boundingRect(hull // 16)
        cv2.fillConvexPoly(body, hull, 255, cv2.LINE_AA, shift=4)
        h, w = canvas.shape[:2]
        region = (max(y0 - 2, 0), min(y0 + bh + 3, h), max(x0 - 2, 0), min(x0 + bw + 3, w))
        if region[1] <= region[0] or region[3] <= region[2]:
            return None
        roi = (slice(region[0], region[1]), slice(region[2], region[3]))
        alpha = (body[roi].astype(np.float32) / 255)[..., None]
        shade_gain = self._gain[roi] if self._gain is not None else 1.0
        canvas[roi] = canvas[roi] * (1 - alpha) + colour * 0.55 * shade_gain * alpha
        sticker = self.sticker(spec.id, spec.marker_mm, self.options.roof_margin_mm)
        off_f, off_l = spec.forward_offset_mm, spec.left_offset_mm

        def roof(f: np.ndarray, l: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            colours, on_sticker = sticker.colour(f + off_f, l + off_l)
            return np.where(on_sticker[:, None], colours, colour), np.ones(len(f), bool)

        self._draw_plane_rect(canvas, spec.roof_mm, (truth.x_mm, truth.y_mm), truth.heading_deg,
                              a, b, roof, lit=True)
        return region

    def _draw_plane_rect(self, canvas: np.ndarray, z_mm: float, centre_mm: tuple[float, float],
                         heading_deg: float, half_forward_mm: float, half_left_mm: float,
                         shade, lit: bool = False) -> bool:
        """Ray-trace a rectangle lying at height z: `shade(f, l)` gives colours at
        points forward/left of its centre.  Supersampled; blends into the canvas."""
        fwd, left = _axes(heading_deg)
        c = np.asarray(centre_mm, np.float64)
        outline = np.array([(*(c + sf * half_forward_mm * fwd + sl * half_left_mm * left), z_mm)
                            for sf, sl in ((1, 1), (1, -1), (-1, -1), (-1, 1))])
        if not self._in_front(outline).all():
            return False
        px = self.project(outline)
        h, w = canvas.shape[:2]
        x0, y0 = np.floor(px.min(axis=0)).astype(int) - 2
        x1, y1 = np.ceil(px.max(axis=0)).astype(int) + 3
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
        if x1 <= x0 or y1 <= y0:
            return False
        ss = self.options.supersample
        rays = self._rays_at_grid(x0, x1, y0, y1, ss)
        dirs = np.column_stack([rays, np.ones(len(rays))]) @ self._rotation
        lam = (z_mm - self._centre[2]) / dirs[:, 2]
        pts = self._centre[:2] + lam[:, None] * dirs[:, :2] - c
        f = pts @ fwd
        l = pts @ left
        colours, mask = shade(f, l)
        inside = mask & (np.abs(f) <= half_forward_mm) & (np.abs(l) <= half_left_mm) & (lam > 0)
        rh, rw = y1 - y0, x1 - x0
        under = np.repeat(np.repeat(canvas[y0:y1, x0:x1], ss, axis=0), ss, axis=1).reshape(-1, 3)
        if lit and self._gain is not None:
            colours = colours * np.repeat(np.repeat(self._gain[y0:y1, x0:x1], ss, axis=0), ss, axis=1).reshape(-1, 1)
        samples = np.where(inside[:, None], colours, under).reshape(rh, ss, rw, ss, 3)
        canvas[y0:y1, x0:x1] = samples.mean(axis=(1, 3))
        return bool(inside.any())

    def _rays_at_grid(self, x0: int, x1: int, y0: int, y1: int, ss: int) -> np.ndarray:
        """Undistorted rays at the ss x ss sub-pixel samples of pixels [y0:y1, x0:x1].

        Interpolated bilinearly from the per-pixel map (cv2.resize by ss puts its
        samples exactly at the sub-pixel centres); the lens's field is so smooth
        that this is exact to about 1e-4 pixel."""
        h, w = self._rays.shape[:2]
        ys = np.clip(np.arange(y0 - 1, y1 + 1), 0, h - 1)
        xs = np.clip(np.arange(x0 - 1, x1 + 1), 0, w - 1)
        patch = self._rays[ys[:, None], xs[None, :]]
        up = cv2.resize(patch, (len(xs) * ss, len(ys) * ss), interpolation=cv2.INTER_LINEAR)
        return up[ss:-ss, ss:-ss].reshape(-1, 2).astype(np.float64)

    def _blur(self, img: np.ndarray) -> np.ndarray:
        s = self.options.blur_sigma
        return cv2.GaussianBlur(img, (0, 0), s) if s > 0 else img

    def _finish(self, image: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        o = self.options
        if self._noise is not None:
            h, w = image.shape[:2]
            dy, dx = rng.integers(0, _NOISE_PAD, 2)
            image = cv2.add(image, self._noise[dy:dy + h, dx:dx + w], dtype=cv2.CV_8U)
        if o.jpeg_quality is not None:
            ok, buf = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, int(o.jpeg_quality)])
            image = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        return image


_NOISE_PAD = 128
_RAY_MAPS: dict[bytes, np.ndarray] = {}


def _ray_map(camera: CameraModel) -> np.ndarray:
    """Every pixel's undistorted ray (H, W, 2), computed once per camera."""
    key = camera.camera_matrix.tobytes() + camera.dist_coeffs.tobytes() + bytes(str(camera.image_size), "ascii")
    if key not in _RAY_MAPS:
        w, h = camera.image_size
        gx, gy = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
        rays = camera.rays_from_pixels(np.column_stack([gx.ravel(), gy.ravel()]))
        if len(_RAY_MAPS) > 8:
            _RAY_MAPS.clear()
        _RAY_MAPS[key] = rays.reshape(h, w, 2).astype(np.float32)
    return _RAY_MAPS[key]


def _to_u8(img: np.ndarray) -> np.ndarray:
    return np.clip(img + 0.5, 0, 255).astype(np.uint8)


def _axes(heading_deg: float) -> tuple[np.ndarray, np.ndarray]:
    """Unit vectors forward and to the left of a heading (counter-clockwise from +x)."""
    t = math.radians(heading_deg)
    return np.array([math.cos(t), math.sin(t)]), np.array([-math.sin(t), math.cos(t)])

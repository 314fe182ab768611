"""The camera model: intrinsics and lens distortion.

Read from and written to OpenCV's own calibration YAML (`camera_matrix`,
`distortion_coefficients`, `image_width`, `image_height`), as OpenCV's
calibration samples write it, so a file made by any OpenCV tool works here.
"""

from __future__ import annotations

import math
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

# Undistortion is iterative; the default 5 iterations leave up to a pixel of
# error at a webcam's corners, far more than a millimetre on the table.
_UNDISTORT_CRITERIA = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-12)


class CameraFileError(ValueError):
    """A camera file that cannot be read, or that does not fit the frames."""


@dataclass(frozen=True, eq=False)
class CameraModel:
    """A pinhole camera with OpenCV's lens distortion model.

    `estimated` is True when the intrinsics were guessed (from the anchors, or a
    typical webcam's field of view) instead of calibrated; `focal_rel_sigma` is
    the relative one-sigma doubt of the focal length, which the locator carries
    into each car's sigma.
    """

    camera_matrix: np.ndarray
    dist_coeffs: np.ndarray
    #: (width, height) in pixels; None for a file that does not say (OpenCV's
    #: ArUco tutorial writes none), when any frame its principal point fits is taken.
    image_size: tuple[int, int] | None
    estimated: bool = False
    focal_rel_sigma: float = 0.002
    source: str = "<camera>"

    def __post_init__(self) -> None:
        k = np.asarray(self.camera_matrix, dtype=np.float64).reshape(3, 3)
        d = np.asarray(self.dist_coeffs, dtype=np.float64).reshape(-1)
        k.setflags(write=False)
        d.setflags(write=False)
        object.__setattr__(self, "camera_matrix", k)
        object.__setattr__(self, "dist_coeffs", d)

    @property
    def focal_px(self) -> float:
        return float((self.camera_matrix[0, 0] + self.camera_matrix[1, 1]) / 2)

    @property
    def principal_point_px(self) -> tuple[float, float]:
        return float(self.camera_matrix[0, 2]), float(self.camera_matrix[1, 2])

    @classmethod
    def from_fov(cls, width: int, height: int, horizontal_fov_deg: float,
                 dist_coeffs: np.ndarray | None = None, **kwargs) -> "CameraModel":
        """A camera with square pixels and a centred principal point."""
        f = (width / 2) / math.tan(math.radians(horizontal_fov_deg) / 2)
        k = np.array([[f, 0, (width - 1) / 2], [0, f, (height - 1) / 2], [0, 0, 1]])
        d = np.zeros(5) if dist_coeffs is None else np.asarray(dist_coeffs, dtype=np.float64)
        return cls(k, d, (int(width), int(height)), **kwargs)

    # --- files -----------------------------------------------------------------

    @classmethod
    def from_yaml(cls, path: str | Path) -> "CameraModel":
        """Read OpenCV's calibration YAML (or XML/JSON, which FileStorage also reads)."""
        p = Path(path)
        if not p.is_file():
            raise CameraFileError(f"{p}: no such camera file")
        try:
            fs = cv2.FileStorage(str(p), cv2.FILE_STORAGE_READ)
        # OpenCV's parser reports bad syntax as cv2.error, or (OpenCV 5) as a
        # SystemError from its binding.
        except (cv2.error, SystemError) as exc:
            raise CameraFileError(f"{p}: not a readable OpenCV calibration file "
                                  f"({_first_line(exc)})") from None
        try:
            if not fs.isOpened():
                raise CameraFileError(f"{p}: not a readable OpenCV calibration file")
            k = _read_matrix(fs, "camera_matrix", p)
            d = _read_matrix(fs, "distortion_coefficients", p)
            has_size = not fs.getNode("image_width").empty() or not fs.getNode("image_height").empty()
            width = _read_int(fs, "image_width", p) if has_size else None
            height = _read_int(fs, "image_height", p) if has_size else None
        finally:
            fs.release()
        if k.shape != (3, 3):
            raise CameraFileError(f"{p}: camera_matrix must be 3 x 3, not {k.shape[0]} x "
                                  f"{k.shape[1] if k.ndim > 1 else 1}")
        if d.size not in (4, 5, 8, 12, 14):
            raise CameraFileError(f"{p}: distortion_coefficients must hold 4, 5, 8, 12 or 14 "
                                  f"numbers, not {d.size}")
        if not np.all(np.isfinite(k)) or k[0, 0] <= 0 or k[1, 1] <= 0:
            raise CameraFileError(f"{p}: camera_matrix has no positive focal length")
        if has_size and (width <= 0 or height <= 0):
            raise CameraFileError(f"{p}: image_width and image_height must be positive")
        return cls(k, d.reshape(-1), (width, height) if has_size else None, source=str(p))

    def to_yaml(self, path: str | Path, **extra: float) -> None:
        """Write OpenCV's calibration YAML, atomically (a crash leaves the old file)."""
        p = Path(path)
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(suffix=".yml", dir=p.parent)
        os.close(fd)
        try:
            fs = cv2.FileStorage(tmp, cv2.FILE_STORAGE_WRITE)
            if self.image_size is not None:
                fs.write("image_width", int(self.image_size[0]))
                fs.write("image_height", int(self.image_size[1]))
            fs.write("camera_matrix", np.asarray(self.camera_matrix))
            fs.write("distortion_coefficients", np.asarray(self.dist_coeffs).reshape(1, -1))
            for key, value in extra.items():
                fs.write(key, float(value))
            fs.release()
            os.replace(tmp, p)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    # --- fitting the frames -----------------------------------------------------

    def scaled_to(self, size: tuple[int, int]) -> "CameraModel":
        """The same camera at another resolution of the same field of view: focal
        lengths and principal point scale with the frame (pixel centres kept:
        OpenCV's pixel (0, 0) is the centre of the first pixel); the lens
        distortion, in normalised coordinates, is unchanged."""
        if self.image_size is None:
            raise CameraFileError(f"{self.source}: the file gives no image size to scale from")
        w0, h0 = self.image_size
        w, h = int(size[0]), int(size[1])
        sx, sy = w / w0, h / h0
        k = np.array(self.camera_matrix, dtype=np.float64)
        k[0, 0] *= sx
        k[0, 1] *= sx
        k[1, 1] *= sy
        k[0, 2] = (k[0, 2] + 0.5) * sx - 0.5
        k[1, 2] = (k[1, 2] + 0.5) * sy - 0.5
        return CameraModel(k, self.dist_coeffs, (w, h), estimated=self.estimated,
                           focal_rel_sigma=self.focal_rel_sigma,
                           source=f"{self.source} (scaled from {w0} x {h0} to {w} x {h})")

    def fitted_to(self, size: tuple[int, int], where: str = "frame") -> tuple["CameraModel", str | None]:
        """This camera for frames of `size` (width, height), and a warning to show
        when it had to be changed to fit them (None when it fits as it is).

        A file calibrated at another resolution of the same aspect ratio is
        scaled, and the warning says so: most webcams scale the whole sensor
        between such modes, but some crop, and then only a calibration at this
        resolution is right. A file of another aspect ratio cannot be scaled (the
        camera crops its sensor differently) and is refused with a
        CameraFileError; so is a file without a size whose principal point is far
        from the middle of the frames."""
        w, h = int(size[0]), int(size[1])
        if self.image_size is None:
            self.check_frame(np.zeros((h, w), np.uint8), where)
            return self, None
        w0, h0 = self.image_size
        if (w, h) == (w0, h0):
            return self, None
        if abs((w / h) / (w0 / h0) - 1.0) > 0.01:
            raise CameraFileError(
                f"{self.source}: calibrated for {w0} x {h0} pixels, but the {where} is {w} x {h}, "
                f"another shape ({_aspect(w0, h0)} against {_aspect(w, h)}): another shape of frame is "
                f"another crop of the sensor, so the file cannot be scaled to it; calibrate the camera "
                f"at {w} x {h} (companion calibrate camera) or set the camera to {w0} x {h0}")
        scaled = self.scaled_to((w, h))
        note = (f"camera file {self.source} was calibrated at {w0} x {h0} pixels but the {where} is "
                f"{w} x {h}: its focal length and centre are scaled by {w / w0:.3g} to fit (same "
                f"aspect ratio); if the camera crops at this resolution, positions will be off, so "
                f"calibrate at {w} x {h} to be sure")
        return scaled, note

    # --- use -------------------------------------------------------------------

    def check_frame(self, image: np.ndarray, where: str = "frame") -> None:
        """Refuse a frame whose size is not the size this camera was calibrated at."""
        h, w = image.shape[:2]
        if self.image_size is None:
            # No size in the file: the principal point must at least lie well inside the frame.
            cx, cy = self.principal_point_px
            if not (0.25 * w < cx < 0.75 * w and 0.25 * h < cy < 0.75 * h):
                raise CameraFileError(
                    f"{self.source}: the file gives no image size, and its principal point "
                    f"({cx:.0f}, {cy:.0f}) is far from the middle of the {where}'s {w} x {h} "
                    f"pixels: it was calibrated at another resolution")
            return
        if (w, h) != tuple(self.image_size):
            raise CameraFileError(
                f"{self.source}: calibrated for {self.image_size[0]} x {self.image_size[1]} "
                f"pixels, but the {where} is {w} x {h}; calibrate at this resolution or set the "
                f"camera to {self.image_size[0]} x {self.image_size[1]}")

    def rays_from_pixels(self, points_px: np.ndarray) -> np.ndarray:
        """Undistorted normalized rays (x, y) for pixel points, shape (N, 2)."""
        pts = np.asarray(points_px, dtype=np.float64).reshape(-1, 1, 2)
        out = cv2.undistortPoints(pts, self.camera_matrix, self.dist_coeffs,
                                  criteria=_UNDISTORT_CRITERIA)
        return out.reshape(-1, 2)

    def project(self, points_xyz: np.ndarray, rvec: np.ndarray, tvec: np.ndarray) -> np.ndarray:
        """Pixels of 3-D points, shape (N, 2), with the lens distortion applied."""
        pts = np.asarray(points_xyz, dtype=np.float64).reshape(-1, 1, 3)
        out, _ = cv2.projectPoints(pts, np.asarray(rvec, np.float64), np.asarray(tvec, np.float64),
                                   self.camera_matrix, self.dist_coeffs)
        return out.reshape(-1, 2)


def _aspect(w: int, h: int) -> str:
    g = math.gcd(int(w), int(h))
    a, b = w // g, h // g
    return f"{a}:{b}" if a < 100 else f"{w / h:.3f}:1"


def _first_line(exc: Exception) -> str:
    text = str(exc).strip().splitlines()
    return text[-1].strip() if text else type(exc).__name__


def _read_matrix(fs: cv2.FileStorage, key: str, path: Path) -> np.ndarray:
    node = fs.getNode(key)
    if node.empty():
        raise CameraFileError(f"{path}: missing '{key}'")
    mat = node.mat()
    if mat is None:
        raise CameraFileError(f"{path}: '{key}' is not an OpenCV matrix")
    return np.asarray(mat, dtype=np.float64)


def _read_int(fs: cv2.FileStorage, key: str, path: Path) -> int:
    node = fs.getNode(key)
    if node.empty() or not node.isInt() and not node.isReal():
        raise CameraFileError(f"{path}: missing '{key}' (the image size the camera was "
                              f"calibrated at)")
    return int(node.real())

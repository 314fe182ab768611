"""Marker detection: image in, marker ids with their four corners in pixels out."""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .refine import refine_outlines


class DetectionError(ValueError):
    """An image the detector cannot read."""


@dataclass(frozen=True, eq=False)
class MarkerDetection:
    """One marker found in a frame: its id and corners (4, 2) in OpenCV's order.

    `edge_sigma_px` is the RMS scatter of its outline's edge points about the
    fitted edge lines (None when the outline could not be refined and the
    corners are OpenCV's own)."""

    id: int
    corners_px: np.ndarray
    edge_sigma_px: float | None = None

    @property
    def centre_px(self) -> np.ndarray:
        return self.corners_px.mean(axis=0)

    @property
    def side_px(self) -> float:
        c = self.corners_px
        return float(np.mean(np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1)))


def dictionary(name: str) -> cv2.aruco.Dictionary:
    """OpenCV's predefined ArUco dictionary of that name (e.g. "DICT_4X4_50")."""
    code = getattr(cv2.aruco, name, None)
    if not isinstance(code, int):
        raise DetectionError(f"unknown ArUco dictionary '{name}'")
    return cv2.aruco.getPredefinedDictionary(code)


def detector_parameters() -> cv2.aruco.DetectorParameters:
    """Parameters for small roof markers on a whole-table frame.

    Sub-pixel corner refinement is what makes millimetres possible: without it
    corners snap to whole pixels (about 0.8 mm on the table).
    """
    p = cv2.aruco.DetectorParameters()
    p.cornerRefinementMethod = cv2.aruco.CORNER_REFINE_SUBPIX
    # OpenCV caps the refinement window at a fraction of a marker cell; its
    # default (0.3) leaves a 24 px roof marker about a one-pixel window, and
    # corners off by a pixel.  Half a cell, at most 2 px, keeps the window on
    # the corner's two edges and off the next cell (corner p95 1.1 -> 0.4 px
    # on rendered roofs; larger windows reach the inner cells and get worse).
    p.relativeCornerRefinmentWinSize = 0.5
    p.cornerRefinementWinSize = 2
    p.cornerRefinementMaxIterations = 50
    p.cornerRefinementMinAccuracy = 0.01
    # A 20 mm roof marker is about 25 px on a 1080p table view; the default
    # lower bound (3% of the image's larger side) would drop markers under 15 px.
    p.minMarkerPerimeterRate = 0.015
    # Blurred, noisy, JPEG'd roofs under uneven light: reading the bits from
    # the middle 40 % of each cell at 8 px per cell, and thresholding at three
    # scales (5, 15, 25 px) instead of three larger ones, lifts detection on
    # the hard benchmark tables from 95.2 % to 100 % and costs less time.
    p.perspectiveRemoveIgnoredMarginPerCell = 0.3
    p.perspectiveRemovePixelPerCell = 8
    p.adaptiveThreshWinSizeMin = 5
    p.adaptiveThreshWinSizeMax = 25
    p.adaptiveThreshWinSizeStep = 10
    return p


class MarkerDetector:
    """Finds the markers of one dictionary in a frame."""

    def __init__(self, dictionary_name: str = "DICT_4X4_50",
                 parameters: cv2.aruco.DetectorParameters | None = None, refine: bool = True) -> None:
        self.dictionary_name = dictionary_name
        d = dictionary(dictionary_name)
        self.cells = d.markerSize + 2
        self.refine = refine
        self._detector = cv2.aruco.ArucoDetector(d, parameters or detector_parameters())

    def detect(self, image: np.ndarray, offset_px: tuple[int, int] = (0, 0)) -> list[MarkerDetection]:
        """Markers in a frame (or a crop of one: `offset_px` is the crop's top-left
        corner in the frame, added to every corner)."""
        gray = to_gray(image)
        corners, ids, _ = self._detector.detectMarkers(gray)
        if ids is None:
            return []
        corners = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
        ids = ids.reshape(-1)
        sigmas: list[float | None] = [None] * len(ids)
        if self.refine:
            outlines = refine_outlines(gray, corners, self.cells)
            corners = outlines.corners_px
            sigmas = [float(s) if ok else None for s, ok in zip(outlines.edge_sigma_px, outlines.ok)]
        corners = corners + np.asarray(offset_px, dtype=np.float64)
        return [MarkerDetection(int(i), c, s) for i, c, s in zip(ids, corners, sigmas)]


def to_gray(image: np.ndarray) -> np.ndarray:
    """The frame as 8-bit grey, or a DetectionError for a frame that is not an image."""
    if image is None or not isinstance(image, np.ndarray) or image.size == 0:
        raise DetectionError("the frame is empty or could not be decoded")
    if image.ndim == 2:
        return image if image.dtype == np.uint8 else np.clip(image, 0, 255).astype(np.uint8)
    if image.ndim == 3 and image.shape[2] in (3, 4):
        code = cv2.COLOR_BGR2GRAY if image.shape[2] == 3 else cv2.COLOR_BGRA2GRAY
        return cv2.cvtColor(image, code)
    raise DetectionError(f"the frame has an unexpected shape {image.shape}; expected a colour or grey image")

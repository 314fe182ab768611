"""Calibration patterns besides ChArUco: OpenCV's chessboard and circle grids.

Most people who have calibrated a camera before have OpenCV's 9 x 6 chessboard
(or its circle grid) on a sheet already. These specs say what was printed and
find it in a frame, giving the same :class:`~calibration.charuco.BoardDetection`
the ChArUco board gives, so :class:`~calibration.charuco.ViewCollector` takes
views of any of them, with the same coverage and quality reporting.

Unlike a ChArUco board, a chessboard or a circle grid is found whole or not at
all: every view must show the whole pattern. Sizes follow OpenCV's calibration
sample: `cols` x `rows` counts a chessboard's *inner* corners (squares minus
one each way) and a grid's circles.

OpenCV and NumPy only, like the rest of `calibration`.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from .dictionaries import probe_dictionaries

#: The pattern names `companion calibrate camera --pattern` takes.
PATTERNS = ("charuco", "chessboard", "circles", "asymmetric-circles")


class PatternError(ValueError):
    """A pattern that cannot be: the message says why."""


def _detection(corners_px: np.ndarray | None, object_mm: np.ndarray):
    from .charuco import BoardDetection   # charuco imports this module

    empty = np.zeros(0, np.int32)
    if corners_px is None:
        return BoardDetection(empty, empty, np.zeros((0, 2)), np.zeros((0, 3)))
    ids = np.arange(len(object_mm), dtype=np.int32)
    return BoardDetection(empty, ids, np.asarray(corners_px, np.float64).reshape(-1, 2), object_mm)


def _gray(image: np.ndarray) -> np.ndarray:
    return image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)


@dataclass(frozen=True)
class ChessboardSpec:
    """OpenCV's chessboard: `cols` x `rows` inner corners (a board of 10 x 7
    squares has 9 x 6), each square `square_mm` on a side as measured on the print."""

    cols: int
    rows: int
    square_mm: float

    kind = "chessboard"
    dictionary = None
    marker_count = 0
    corner_word = "chessboard"

    def __post_init__(self) -> None:
        if self.cols < 3 or self.rows < 3:
            raise PatternError(f"a chessboard needs at least 3 x 3 inner corners, not {self.cols} x {self.rows} "
                               f"(--cols and --rows count the inner corners: squares minus one)")
        if self.cols == self.rows:
            raise PatternError(f"a square {self.cols} x {self.rows} chessboard is found the same way turned a "
                               f"quarter: its corners cannot be told apart; use one with more corners one way")
        if not self.square_mm > 0:
            raise PatternError("the square size must be a positive number of millimetres")

    @property
    def corner_count(self) -> int:
        return self.cols * self.rows

    def describe(self) -> str:
        return (f"{self.cols} x {self.rows} chessboard (inner corners; {self.cols + 1} x {self.rows + 1} squares "
                f"of {self.square_mm:g} mm)")

    def not_found(self) -> str:
        return f"no whole {self.cols} x {self.rows} chessboard"

    def object_points_mm(self) -> np.ndarray:
        """The corners on the board, row by row, as findChessboardCorners orders them."""
        grid = np.mgrid[0:self.cols, 0:self.rows].T.reshape(-1, 2).astype(np.float64)
        return np.column_stack([grid * self.square_mm, np.zeros(len(grid))])

    def finder(self) -> "ChessboardFinder":
        return ChessboardFinder(self)


class ChessboardFinder:
    """Finds a whole chessboard and places its corners to a fraction of a pixel
    (findChessboardCorners, then cornerSubPix with a window that fits the squares)."""

    _FLAGS = cv2.CALIB_CB_ADAPTIVE_THRESH | cv2.CALIB_CB_NORMALIZE_IMAGE | cv2.CALIB_CB_FAST_CHECK

    def __init__(self, spec: ChessboardSpec) -> None:
        self.spec = spec
        self._object = spec.object_points_mm()

    def find(self, image: np.ndarray):
        gray = _gray(image)
        size = (self.spec.cols, self.spec.rows)
        ok, corners = cv2.findChessboardCorners(gray, size, flags=self._FLAGS)
        if not ok or corners is None:
            return _detection(None, self._object)
        pts = corners.reshape(-1, 2).astype(np.float64)
        grid = pts.reshape(self.spec.rows, self.spec.cols, 2)
        step = min(float(np.min(np.linalg.norm(np.diff(grid, axis=1), axis=2))),
                   float(np.min(np.linalg.norm(np.diff(grid, axis=0), axis=2))))
        half = int(max(2, min(11, step * 0.4)))
        criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, 50, 0.001)
        refined = cv2.cornerSubPix(gray, corners.astype(np.float32), (half, half), (-1, -1), criteria)
        return _detection(refined, self._object)


@dataclass(frozen=True)
class CircleGridSpec:
    """OpenCV's circle grid: `cols` x `rows` circles, `spacing_mm` between
    neighbouring centres. An asymmetric grid (OpenCV's acircles pattern, rows
    offset by half a step) counts `cols` circles per row, and `spacing_mm` is, as
    in OpenCV's sample, half the distance between neighbours along a row."""

    cols: int
    rows: int
    spacing_mm: float
    asymmetric: bool = False

    dictionary = None
    marker_count = 0
    corner_word = "circle"

    def __post_init__(self) -> None:
        if self.cols < 3 or self.rows < 3:
            raise PatternError(f"a circle grid needs at least 3 x 3 circles, not {self.cols} x {self.rows}")
        if not self.spacing_mm > 0:
            raise PatternError("the circle spacing must be a positive number of millimetres")

    @property
    def kind(self) -> str:
        return "asymmetric-circles" if self.asymmetric else "circles"

    @property
    def corner_count(self) -> int:
        return self.cols * self.rows

    def describe(self) -> str:
        return (f"{self.cols} x {self.rows} {'asymmetric ' if self.asymmetric else ''}circle grid "
                f"({self.spacing_mm:g} mm spacing)")

    def not_found(self) -> str:
        return f"no whole {self.cols} x {self.rows} {'asymmetric ' if self.asymmetric else ''}circle grid"

    def object_points_mm(self) -> np.ndarray:
        pts = []
        for i in range(self.rows):
            for j in range(self.cols):
                x = (2 * j + i % 2) if self.asymmetric else j
                pts.append((x * self.spacing_mm, i * self.spacing_mm, 0.0))
        return np.array(pts, np.float64)

    def finder(self) -> "CircleGridFinder":
        return CircleGridFinder(self)


class CircleGridFinder:
    """Finds a whole circle grid (findCirclesGrid, dark circles on white, with a
    blob detector that takes circles of any size a frame can show)."""

    def __init__(self, spec: CircleGridSpec) -> None:
        self.spec = spec
        self._object = spec.object_points_mm()

    def find(self, image: np.ndarray):
        gray = _gray(image)
        params = cv2.SimpleBlobDetector_Params()
        params.minArea = 9
        params.maxArea = 0.05 * gray.shape[0] * gray.shape[1]
        blobs = cv2.SimpleBlobDetector_create(params)
        flags = cv2.CALIB_CB_ASYMMETRIC_GRID if self.spec.asymmetric else cv2.CALIB_CB_SYMMETRIC_GRID
        ok, centres = cv2.findCirclesGrid(gray, (self.spec.cols, self.spec.rows), flags=flags, blobDetector=blobs)
        return _detection(centres if ok else None, self._object)


# --- telling one pattern from another -------------------------------------------------------


def probe_chessboard(images: list[np.ndarray]) -> tuple[int, int] | None:
    """The inner corners (larger x smaller) of a chessboard any image shows, of
    whatever size, or None. A ChArUco board shows one too: ask about markers first."""
    for image in images:
        gray = _gray(image)
        scale = min(1.0, 1280.0 / max(gray.shape))
        if scale < 1.0:
            gray = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        try:
            ok, _, meta = cv2.findChessboardCornersSBWithMeta(
                gray, (3, 3), cv2.CALIB_CB_LARGER | cv2.CALIB_CB_NORMALIZE_IMAGE)
        except cv2.error:
            continue
        if ok and meta is not None:
            a, b = meta.shape[:2]
            return max(a, b), min(a, b)
    return None


def pattern_hint(spec, images: list[np.ndarray]) -> str:
    """Why no view of `spec` was found in frames that showed none, as the rest of a
    sentence: which pattern the frames do show, and the option that takes it."""
    markers = probe_dictionaries(images, exclude=spec.dictionary or "")
    if spec.kind == "charuco":
        chess = probe_chessboard(images)
        # A ChArUco board in another dictionary shows a chessboard and many markers;
        # a chessboard shows no marker, or a stray false one or two.
        if chess is not None and (markers is None or markers.markers < 4):
            return (f"no {spec.dictionary} markers: this looks like a chessboard: use --pattern chessboard "
                    f"--cols {chess[0]} --rows {chess[1]} --square-mm SIDE ({chess[0]} x {chess[1]} inner "
                    f"corners were seen; count them on the print if part of it was out of view)")
        if markers is not None:
            return (f"no {spec.dictionary} markers, but the frames show {markers.family} markers (ids up to "
                    f"{markers.top_id}): is the board's dictionary {markers.which}?")
        return (f"no {spec.dictionary} markers (nor of any other predefined dictionary); is the board in "
                f"view, lit and in focus?")
    if markers is not None and markers.markers >= 4:
        return (f"the frames show {markers.family} markers (ids up to {markers.top_id}): this looks like a "
                f"ChArUco board: use --pattern charuco --dictionary {markers.which.split(' ')[0]}")
    if spec.kind == "chessboard":
        chess = probe_chessboard(images)
        if chess is not None and chess != (max(spec.cols, spec.rows), min(spec.cols, spec.rows)):
            return (f"the frames show a chessboard of {chess[0]} x {chess[1]} inner corners (if that is "
                    f"all of it): use --cols {chess[0]} --rows {chess[1]}")
        return ("is the whole board in view, lit and in focus? --cols and --rows count the inner "
                "corners (squares minus one each way)")
    return "is the whole grid in view, lit and in focus, dark circles on white? --cols and --rows count circles"

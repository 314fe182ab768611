"""Camera calibration from a ChArUco board.

A ChArUco board is a chessboard whose white squares carry ArUco markers: the
markers say which chessboard corner is which, so a partly hidden or partly
out-of-frame board still gives corners with known board positions, and the
chessboard corners themselves are located to a fraction of a pixel.

The flow: a :class:`CharucoBoardSpec` says what was printed; a
:class:`ViewCollector` is offered frames one by one and keeps the views that add
something (new parts of the frame covered, or a new orientation of the board); then
:func:`calibrate` (or :meth:`ViewCollector.calibrate`, which first explains why
there may be nothing to calibrate from) fits OpenCV's camera model and returns a
:class:`CalibrationResult` whose camera is written with
:meth:`CalibrationResult.write` in OpenCV's calibration YAML.

OpenCV and NumPy only, like the rest of `calibration`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from .camera import CameraModel
from .patterns import pattern_hint

#: Names of the standard deviations calibrateCameraExtended returns, in its order.
INTRINSIC_NAMES = ("fx", "fy", "cx", "cy", "k1", "k2", "p1", "p2", "k3", "k4", "k5", "k6",
                   "s1", "s2", "s3", "s4", "tau_x", "tau_y")

#: Predefined dictionaries tried when the board's own dictionary finds nothing,
#: to tell the user which one the board was printed with.  Each family's largest
#: member holds the smaller ones as its first ids.


#: The board `companion markers board` prints by default (calibration/sheets.py):
#: 5 x 7 squares of 30 mm fit A4 and US Letter.  Its dictionary differs from the
#: table's DICT_4X4_50, so cars and anchors left in view are never taken for
#: board squares.
DEFAULT_SQUARES = (5, 7)
DEFAULT_SQUARE_MM = 30.0
DEFAULT_MARKER_MM = 22.0
DEFAULT_DICTIONARY = "DICT_5X5_100"

#: ViewCollector's `new_angle_deg` for photos: each was taken on purpose, so a
#: smaller change of orientation counts as new (the four views of OpenCV's
#: tutorial differ by 8 degrees at the least).
STILLS_NEW_ANGLE_DEG = 5.0


class CalibrationError(ValueError):
    """Calibration cannot go on; the message names the problem and what to do."""


# --- the board ------------------------------------------------------------------


@dataclass(frozen=True)
class CharucoBoardSpec:
    """What was printed: squares across (x) and down (y), the side of a chessboard
    square and of a marker in millimetres, and the ArUco dictionary.

    `legacy` selects the layout OpenCV drew before 4.6.0: it differs only for
    boards with an even number of rows (squares_y), whose top-left square was
    then white.  The tutorial photos' 5 x 7 board looks the same either way.

    Corners and poses come out in millimetres, because the board is built in them.
    """

    squares_x: int
    squares_y: int
    square_mm: float
    marker_mm: float
    dictionary: str = DEFAULT_DICTIONARY
    legacy: bool = False

    kind = "charuco"
    corner_word = "ChArUco"

    def __post_init__(self) -> None:
        if self.squares_x < 2 or self.squares_y < 2:
            raise CalibrationError(f"a ChArUco board needs at least 2 x 2 squares, not "
                                   f"{self.squares_x} x {self.squares_y}")
        if not (self.square_mm > 0 and self.marker_mm > 0):
            raise CalibrationError("the square and marker sizes must be positive millimetres")
        if self.marker_mm >= self.square_mm:
            raise CalibrationError(f"the marker ({self.marker_mm:g} mm) must be smaller than the "
                                   f"square ({self.square_mm:g} mm) it sits in")
        size = len(_dictionary(self.dictionary).bytesList)
        if self.marker_count > size:
            raise CalibrationError(f"a {self.squares_x} x {self.squares_y} board carries "
                                   f"{self.marker_count} markers, but {self.dictionary} holds "
                                   f"only {size}")

    @property
    def marker_count(self) -> int:
        return self.squares_x * self.squares_y // 2

    @property
    def corner_count(self) -> int:
        return (self.squares_x - 1) * (self.squares_y - 1)

    def describe(self) -> str:
        return (f"{self.squares_x} x {self.squares_y} ChArUco board of {self.dictionary} "
                f"({self.square_mm:g} mm squares, {self.marker_mm:g} mm markers"
                f"{', legacy layout' if self.legacy else ''})")

    def not_found(self) -> str:
        return f"no {self.dictionary} markers"

    def finder(self) -> "BoardFinder":
        return BoardFinder(self)

    def build(self) -> cv2.aruco.CharucoBoard:
        """OpenCV's board, in millimetres."""
        board = cv2.aruco.CharucoBoard((self.squares_x, self.squares_y), float(self.square_mm),
                                       float(self.marker_mm), _dictionary(self.dictionary))
        board.setLegacyPattern(bool(self.legacy))
        return board


def _dictionary(name: str) -> cv2.aruco.Dictionary:
    code = getattr(cv2.aruco, name, None) if name.startswith("DICT_") else None
    if not isinstance(code, int):
        raise CalibrationError(f"unknown ArUco dictionary '{name}' (OpenCV's predefined ones are "
                               f"named like DICT_4X4_50, DICT_6X6_250, DICT_APRILTAG_36h11)")
    return cv2.aruco.getPredefinedDictionary(code)


# --- finding the board ------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class BoardDetection:
    """The board in one frame: the ids of the markers found, and the ChArUco
    corners found between them (ids (N,), pixels (N, 2), board mm (N, 3))."""

    marker_ids: np.ndarray
    corner_ids: np.ndarray
    corners_px: np.ndarray
    object_points_mm: np.ndarray


class BoardFinder:
    """Finds one board's markers and ChArUco corners in a frame.

    OpenCV's CharucoDetector places each chessboard corner with cornerSubPix,
    so corners come out to a fraction of a pixel without further refinement.
    """

    def __init__(self, spec: CharucoBoardSpec) -> None:
        self.spec = spec
        self.board = spec.build()
        self._corners_mm = np.asarray(self.board.getChessboardCorners(), np.float64).reshape(-1, 3)
        self._detector = cv2.aruco.CharucoDetector(self.board)

    def find(self, image: np.ndarray) -> BoardDetection:
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        corners, ids, _marker_corners, marker_ids = self._detector.detectBoard(gray)
        marker_ids = (np.zeros(0, np.int32) if marker_ids is None
                      else marker_ids.reshape(-1).astype(np.int32))
        if ids is None or len(ids) == 0:
            return BoardDetection(marker_ids, np.zeros(0, np.int32), np.zeros((0, 2)), np.zeros((0, 3)))
        corner_ids = ids.reshape(-1).astype(np.int32)
        return BoardDetection(marker_ids, corner_ids, corners.reshape(-1, 2).astype(np.float64),
                              self._corners_mm[corner_ids])


# --- views ----------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class BoardView:
    """One view to calibrate from: the ChArUco corners found, with their board
    positions.

    `corners_px` (N, 2) and `object_points_mm` (N, 3) pair up row by row, and
    `corner_ids` are the board's corner numbers.  `rough_rotation` is the
    board's orientation, estimated with a guessed focal length: it only steers
    which views are kept, and `tilt_deg` (the board's tilt away from facing the
    camera) is shown as progress.
    """

    index: int
    name: str
    image_size: tuple[int, int]  # (width, height) in pixels
    corner_ids: np.ndarray
    corners_px: np.ndarray
    object_points_mm: np.ndarray
    rough_rotation: np.ndarray = field(default_factory=lambda: np.eye(3))

    @property
    def corner_count(self) -> int:
        return int(len(self.corner_ids))

    @property
    def tilt_deg(self) -> float:
        return math.degrees(math.acos(min(1.0, abs(float(self.rough_rotation[2, 2])))))


@dataclass(frozen=True, eq=False)
class ViewDecision:
    """What the collector made of one frame."""

    kept: bool
    reason: str  # why it was kept ("new coverage", "new orientation") or skipped
    corner_count: int
    view: BoardView | None = None
    new_cells: int = 0


@dataclass
class _Tally:
    frames: int = 0
    with_markers: int = 0
    with_corners: int = 0
    few_corners: int = 0
    collinear: int = 0
    duplicates: int = 0
    nothing_new: int = 0
    foreign_ids: set[int] = field(default_factory=set)


class ViewCollector:
    """Takes frames one by one and keeps the views worth calibrating from.

    A view needs at least `min_corners` ChArUco corners that do not lie on one
    line.  It is kept when it puts corners into cells of the frame's coverage
    grid not reached before, or shows the board turned or tilted at least
    `new_angle_deg` away from every kept view; coverage (corners out to the
    frame's edges) pins down the lens distortion, varied orientations the focal
    length.  A near-duplicate of a kept view is never kept: about the same
    orientation, mostly the same corners, within `duplicate_px` of where they
    were (by median; by default 2 % of the frame's diagonal).

    `new_angle_deg` defaults to 10 degrees, for a camera or a video, where a
    board held in the hand gives a new small turn every frame;
    STILLS_NEW_ANGLE_DEG suits photos, each taken on purpose.

    The first frame fixes the image size; a frame of another size is refused
    with a CalibrationError, since one camera model fits one resolution.
    """

    def __init__(self, spec, *, grid: tuple[int, int] = (8, 6),
                 min_corners: int = 6, duplicate_px: float | None = None,
                 new_angle_deg: float = 10.0, max_views: int | None = None) -> None:
        if min_corners < 4:
            # The rough pose that judges orientation needs four points.
            raise CalibrationError("a view needs at least 4 corners")
        #: What was printed: a CharucoBoardSpec, or a chessboard or circle grid
        #: (calibration.patterns), each found whole or not at all.
        self.spec = spec
        self.finder = spec.finder()
        self.grid = (int(grid[0]), int(grid[1]))  # cells across, down
        self.min_corners = int(min_corners)
        self.duplicate_px = duplicate_px
        self.new_angle_deg = float(new_angle_deg)
        self.max_views = max_views
        self.views: list[BoardView] = []
        self.image_size: tuple[int, int] | None = None
        self.covered = np.zeros((self.grid[1], self.grid[0]), dtype=bool)
        self.tally = _Tally()
        # Frames without a single marker of the board's dictionary, kept to find
        # out which dictionary they do show if nothing is ever found.
        self._blank_samples: list[np.ndarray] = []

    # progress ---------------------------------------------------------------

    @property
    def coverage_percent(self) -> float:
        """Share of the coverage grid's cells holding a corner of some kept view."""
        return 100.0 * float(self.covered.mean())

    @property
    def full(self) -> bool:
        return self.max_views is not None and len(self.views) >= self.max_views

    # frames -----------------------------------------------------------------

    def add(self, image: np.ndarray, name: str | None = None, index: int | None = None) -> ViewDecision:
        """Look at one frame (BGR or grey); keep its view if it adds something."""
        if image is None or not isinstance(image, np.ndarray) or image.size == 0:
            raise CalibrationError(f"{name or 'frame'}: the frame is empty")
        index = self.tally.frames if index is None else int(index)
        name = name or f"frame {index}"
        h, w = image.shape[:2]
        if self.image_size is None:
            self.image_size = (w, h)
        elif (w, h) != self.image_size:
            raise CalibrationError(
                f"{name}: {w} x {h} pixels, but the first frame was {self.image_size[0]} x "
                f"{self.image_size[1]}; a calibration holds for one resolution, so give frames "
                f"of one size")
        self.tally.frames += 1
        if self.full:
            return ViewDecision(False, f"already {len(self.views)} views", 0)

        found = self.finder.find(image)
        if len(found.marker_ids) == 0 and len(found.corner_ids) == 0:
            self._keep_blank_sample(image)
            return ViewDecision(False, self.spec.not_found(), 0)
        self.tally.with_markers += 1
        self.tally.foreign_ids.update(int(i) for i in found.marker_ids if i >= self.spec.marker_count)
        n = len(found.corner_ids)
        if n:
            self.tally.with_corners += 1
        if n < self.min_corners:
            self.tally.few_corners += 1
            return ViewDecision(False, f"{n} {self.spec.corner_word} corners (at least {self.min_corners} needed)", n)
        if _collinear(found.object_points_mm[:, :2]):
            self.tally.collinear += 1
            return ViewDecision(False, "the corners seen lie on one line", n)

        view = BoardView(index, name, self.image_size, found.corner_ids, found.corners_px,
                         found.object_points_mm,
                         _rough_rotation(found.object_points_mm, found.corners_px, self.image_size))
        cells = self._cells(view.corners_px)
        new_cells = int(np.count_nonzero(cells & ~self.covered))
        angles_deg = [_rotation_angle_deg(view.rough_rotation, v.rough_rotation) for v in self.views]
        new_angle = all(a >= self.new_angle_deg for a in angles_deg)
        # A repeat is refused even when jitter carries a corner over a cell line.
        duplicate_of = self._duplicate_of(view, angles_deg)
        if duplicate_of is not None:
            self.tally.duplicates += 1
            return ViewDecision(False, f"near-duplicate of view {duplicate_of + 1} "
                                       f"({self.views[duplicate_of].name})", n)
        if not new_cells and not new_angle:
            self.tally.nothing_new += 1
            return ViewDecision(False, "adds no new coverage or orientation", n)
        self.covered |= cells
        self.views.append(view)
        if len(self.views) == 1:
            reason = "first view"
        else:
            reason = " and ".join(r for r, new in (("new coverage", new_cells), ("new orientation", new_angle)) if new)
        return ViewDecision(True, reason, n, view, new_cells)

    def _keep_blank_sample(self, image: np.ndarray) -> None:
        # The first blank frame and the latest one: a camera's first frames are
        # often dark, while a folder's first image is as good as any.
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
        if len(self._blank_samples) < 2:
            self._blank_samples.append(gray)
        else:
            self._blank_samples[1] = gray

    def _cells(self, corners_px: np.ndarray) -> np.ndarray:
        w, h = self.image_size
        gx, gy = self.grid
        cx = np.clip((corners_px[:, 0] / w * gx).astype(int), 0, gx - 1)
        cy = np.clip((corners_px[:, 1] / h * gy).astype(int), 0, gy - 1)
        cells = np.zeros((gy, gx), dtype=bool)
        cells[cy, cx] = True
        return cells

    def _duplicate_limit_px(self) -> float:
        if self.duplicate_px is not None:
            return float(self.duplicate_px)
        w, h = self.image_size
        return 0.02 * math.hypot(w, h)  # about 29 px on a 1280 x 720 frame

    def _duplicate_of(self, view: BoardView, angles_deg: list[float]) -> int | None:
        """The kept view this one repeats: about the same orientation, mostly the
        same corners, hardly moved."""
        limit = self._duplicate_limit_px()
        for k, (kept, angle_deg) in enumerate(zip(self.views, angles_deg)):
            if angle_deg >= self.new_angle_deg:
                continue
            common, a, b = np.intersect1d(view.corner_ids, kept.corner_ids, return_indices=True)
            if len(common) < 0.8 * max(view.corner_count, kept.corner_count):
                continue
            shift_px = np.linalg.norm(view.corners_px[a] - kept.corners_px[b], axis=1)
            if float(np.median(shift_px)) < limit:
                return k
        return None

    # result -----------------------------------------------------------------

    def calibrate(self, min_views: int = 3, flags: int = 0) -> "CalibrationResult":
        """Calibrate from the kept views, or say why there is nothing to calibrate from."""
        self.check(min_views)
        return calibrate(self.views, min_views=min_views, flags=flags)

    def check(self, min_views: int) -> None:
        """Raise a CalibrationError naming the problem when there are too few views."""
        t = self.tally
        what = f"{t.frames} frame{'s' if t.frames != 1 else ''}"
        if t.frames == 0:
            raise CalibrationError("the source gave no frames")
        if t.with_markers == 0:
            board = "ChArUco board" if self.spec.kind == "charuco" else self.spec.describe()
            raise CalibrationError(f"no {board} found in any of {what}: "
                                   f"{self._dictionary_hint()}")
        if t.with_corners == 0:
            hint = (f"markers with ids up to {max(t.foreign_ids)} were seen, but a "
                    f"{self.spec.squares_x} x {self.spec.squares_y} board has ids 0 to "
                    f"{self.spec.marker_count - 1}; " if t.foreign_ids else "")
            legacy = (" or the legacy layout (boards drawn by OpenCV before 4.6 with an even "
                      "number of rows)" if self.spec.squares_y % 2 == 0 else "")
            raise CalibrationError(
                f"{self.spec.dictionary} markers were found in {t.with_markers} of {what}, but no "
                f"ChArUco corners between them: {hint}check the board's squares "
                f"({self.spec.squares_x} x {self.spec.squares_y}), its square and marker "
                f"sizes{legacy}")
        if len(self.views) < min_views:
            skipped = [(t.frames - t.with_markers, "without the board"),
                       (t.few_corners, "with too few corners"),
                       (t.collinear, "with corners on one line"),
                       (t.duplicates, "near-duplicates"),
                       (t.nothing_new, "adding no new coverage or orientation")]
            detail = ", ".join(f"{n} {why}" for n, why in skipped if n)
            raise CalibrationError(
                f"too few views: {len(self.views)} taken from {what}"
                f"{' (skipped: ' + detail + ')' if detail else ''}, but at least {min_views} are "
                f"needed; show the board in more places and at more tilts")

    def _dictionary_hint(self) -> str:
        """Which pattern the frames show instead (another dictionary, a chessboard
        shown to the ChArUco calibrator, a ChArUco board shown to the chessboard's)."""
        return pattern_hint(self.spec, self._blank_samples)


def view_from_image(spec: CharucoBoardSpec, image: np.ndarray, name: str = "image",
                    index: int = 0, min_corners: int = 6) -> BoardView:
    """The board's view in one image, without the collector's judgement of
    whether it adds anything; a CalibrationError when the board is not there."""
    found = spec.finder().find(image)
    n = len(found.corner_ids)
    if n < min_corners:
        if spec.kind != "charuco":
            raise CalibrationError(f"{name}: {spec.not_found()}")
        markers = (f"{len(found.marker_ids)} {spec.dictionary} markers" if len(found.marker_ids)
                   else f"no {spec.dictionary} markers")
        raise CalibrationError(f"{name}: {n} ChArUco corners ({markers}); at least {min_corners} "
                               f"are needed")
    h, w = image.shape[:2]
    return BoardView(index, name, (w, h), found.corner_ids, found.corners_px, found.object_points_mm,
                     _rough_rotation(found.object_points_mm, found.corners_px, (w, h)))


def _rough_rotation(object_mm: np.ndarray, corners_px: np.ndarray,
                    image_size: tuple[int, int]) -> np.ndarray:
    """The board's rotation, seen by a guessed camera (focal length = the frame's
    larger side, about a 53 degree view): good enough to tell orientations apart."""
    w, h = image_size
    f = float(max(w, h))
    k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    ok, rvec, _ = cv2.solvePnP(object_mm, corners_px, k, None, flags=cv2.SOLVEPNP_IPPE)
    return cv2.Rodrigues(rvec)[0] if ok else np.eye(3)


def _rotation_angle_deg(a: np.ndarray, b: np.ndarray) -> float:
    cos = (float(np.trace(a.T @ b)) - 1.0) / 2.0
    return math.degrees(math.acos(min(1.0, max(-1.0, cos))))


def _collinear(points_mm: np.ndarray) -> bool:
    centred = points_mm - points_mm.mean(axis=0)
    s = np.linalg.svd(centred, compute_uv=False)
    # On a board's grid, points on one line have an exactly zero second spread.
    return bool(s[0] == 0 or s[1] / s[0] < 0.05)


# --- calibration ----------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class CalibrationResult:
    """A calibrated camera and how well it fits its views.

    `rms_px` is the root-mean-square reprojection error over all corners;
    `view_errors_px[i]` the same over view i's corners; `intrinsics_std` the
    one-sigma doubt of each estimated intrinsic (fx, fy, cx, cy in pixels, then
    the distortion coefficients), from calibrateCameraExtended.
    """

    camera: CameraModel
    rms_px: float
    views: tuple[BoardView, ...]
    view_errors_px: tuple[float, ...]
    intrinsics_std: dict[str, float]
    rvecs: tuple[np.ndarray, ...] = ()
    tvecs_mm: tuple[np.ndarray, ...] = ()

    def worst_views(self, n: int = 3) -> list[tuple[str, float]]:
        """The n views the camera fits worst, as (name, RMS error in pixels), worst first."""
        order = np.argsort(self.view_errors_px)[::-1][:n]
        return [(self.views[i].name, float(self.view_errors_px[i])) for i in order]

    def write(self, path: str | Path) -> Path:
        """Write the camera in OpenCV's calibration YAML, with the RMS error as
        `avg_reprojection_error` (the key OpenCV's calibration sample uses)."""
        self.camera.to_yaml(path, avg_reprojection_error=self.rms_px,
                            focal_rel_sigma=self.camera.focal_rel_sigma)
        return Path(path)


def calibrate(views: list[BoardView] | tuple[BoardView, ...], *, min_views: int = 3,
              flags: int = 0) -> CalibrationResult:
    """Fit OpenCV's pinhole camera with lens distortion to the views.

    `flags` are cv2.CALIB_* flags; the default 0 estimates fx, fy, cx, cy and the
    five coefficients k1, k2, p1, p2, k3, as OpenCV's calibration tools do.
    Three views of a flat board are the least that determine the intrinsics.
    """
    views = tuple(views)
    if not views:
        raise CalibrationError("no views of the board to calibrate from")
    if len(views) < min_views:
        raise CalibrationError(f"too few views: {len(views)} found, but at least {min_views} "
                               f"are needed")
    size = views[0].image_size
    for v in views[1:]:
        if v.image_size != size:
            raise CalibrationError(f"{v.name}: {v.image_size[0]} x {v.image_size[1]} pixels, but "
                                   f"{views[0].name} is {size[0]} x {size[1]}; a calibration holds "
                                   f"for one resolution")
    object_points = [v.object_points_mm.astype(np.float32).reshape(-1, 1, 3) for v in views]
    image_points = [v.corners_px.astype(np.float32).reshape(-1, 1, 2) for v in views]
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 100, 1e-10)
    try:
        (rms, k, dist, rvecs, tvecs, std_intr, _std_extr,
         per_view) = cv2.calibrateCameraExtended(object_points, image_points, size, None, None,
                                                 flags=flags, criteria=criteria)
    except cv2.error as exc:
        lines = str(exc).strip().splitlines()
        raise CalibrationError(f"OpenCV could not calibrate from these {len(views)} views "
                               f"({lines[-1].strip() if lines else 'cv2.error'})") from None
    k = np.asarray(k, np.float64)
    dist = np.asarray(dist, np.float64).reshape(-1)
    if not (np.isfinite(rms) and np.all(np.isfinite(k)) and np.all(np.isfinite(dist))
            and k[0, 0] > 0 and k[1, 1] > 0):
        raise CalibrationError("the calibration diverged; take views with the board tilted in "
                               "several directions and reaching the frame's edges")
    std = np.asarray(std_intr, np.float64).reshape(-1)
    n_std = 4 + len(dist)
    intrinsics_std = {name: float(s) for name, s in zip(INTRINSIC_NAMES[:n_std], std[:n_std])}
    focal_rel_sigma = float(np.mean([intrinsics_std["fx"] / k[0, 0], intrinsics_std["fy"] / k[1, 1]]))
    camera = CameraModel(k, dist, (int(size[0]), int(size[1])), estimated=False,
                         focal_rel_sigma=focal_rel_sigma,
                         source=f"<calibration from {len(views)} views>")
    return CalibrationResult(camera, float(rms), views,
                             tuple(float(e) for e in np.asarray(per_view).reshape(-1)),
                             intrinsics_std, tuple(rvecs), tuple(tvecs))

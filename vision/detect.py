"""Marker detection: image in, marker ids with their four corners in pixels out."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import cv2
import numpy as np

from .refine import sample_bilinear, refine_outlines


class DetectionError(ValueError):
    """An image the detector cannot read."""


@dataclass(frozen=True, eq=False)
class MarkerDetection:
    """One marker found in a frame: its id and corners (4, 2) in OpenCV's order.

    `edge_sigma_px` is the RMS scatter of its outline's edge points about the
    fitted edge lines (None when the outline could not be refined and the
    corners are OpenCV's own).  `contrast` is the grey levels between its black
    border and its white margin where the outline was fitted (None: not refined);
    a thin or dim margin fits edges that scatter little yet lie off."""

    id: int
    corners_px: np.ndarray
    edge_sigma_px: float | None = None
    contrast: float | None = None

    # Kept once worked out: asked for many times a frame (regions, sorting, plans).
    @property
    def centre_px(self) -> np.ndarray:
        cached = self.__dict__.get("_centre")
        if cached is None:
            cached = self.__dict__["_centre"] = self.corners_px.mean(axis=0)
        return cached

    @property
    def side_px(self) -> float:
        cached = self.__dict__.get("_side")
        if cached is None:
            c = self.corners_px
            d = c[_NEXT_CORNER] - c
            cached = self.__dict__["_side"] = float(np.sqrt((d * d).sum(axis=1)).mean())
        return cached


#: Each corner's next, round the outline.
_NEXT_CORNER = [1, 2, 3, 0]


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
    # The lower bound on a marker's size is set per image (MIN_PERIMETER_PX):
    # OpenCV states it relative to the image, and a fixed rate on a small crop
    # lets every speck of noise in as a candidate.
    # Blurred, noisy, JPEG'd roofs under uneven light: reading the bits from
    # the middle 40 % of each cell at 8 px per cell lifts detection on the hard
    # benchmark tables from 95.2 % to 100 %.
    p.perspectiveRemoveIgnoredMarginPerCell = 0.3
    p.perspectiveRemovePixelPerCell = 8
    # Threshold windows 3, 10, 17, 24 px.  The smallest is OpenCV's own: a
    # smallest window of 5 px (tuned on renders alone) lost real markers that
    # touch at their corners (8.3 a frame found against OpenCV's 13.5, issue
    # 17).  OpenCV's own three (3, 13, 23), or 3, 14, 25, miss 2 of 960 dim
    # roofs on the hard benchmark tables; a fourth window finds them all.
    p.adaptiveThreshWinSizeMin = 3
    p.adaptiveThreshWinSizeMax = 24
    p.adaptiveThreshWinSizeStep = 7
    return p


#: Smallest marker outline looked at, in pixels (a side of 7 px). A 20 mm roof
#: marker is about 25 px across on a 1080p table view; OpenCV's default lower
#: bound (3 % of the image's larger side, 58 px at 1080p) would drop markers
#: under 15 px, and the same rate on a 130 px crop would be 4 px.
MIN_PERIMETER_PX = 28.0
#: A quad whose shortest side is under this fraction of its longest, or whose
#: area is under this fraction of a square of its mean side, is no marker seen
#: from above (a sliver of a real edge decoded as an id): refused.
MIN_SIDE_RATIO = 0.25
MIN_AREA_RATIO = 0.2
#: Shortest side (px) a marker's quad may have.
MIN_SIDE_PX = 5.0


#: Smallest marker side (px, on the full frame) a reduced search is trusted with:
#: 14 px on a half-size frame, twice OpenCV's least (MIN_PERIMETER_PX).
MIN_REDUCED_SIDE_PX = 28.0

#: A followed marker whose refitted outline moved more than this (px) from
#: last frame's is moving: it is left to the region search, which finds it afresh.
FOLLOW_MAX_SHIFT_PX = 1.5
#: Least grey levels between a followed marker's black and white cells.
FOLLOW_MIN_CONTRAST = 20.0
#: Each cell's mean must lie this fraction of the black-white contrast beyond
#: the middle, on its own side (a cell half covered or misread sits near it).
FOLLOW_CELL_MARGIN = 0.15


def plausible_quads(corners: np.ndarray) -> np.ndarray:
    """(N,) bool: which (N, 4, 2) quads could be a square marker seen by a table camera."""
    c = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
    nxt = c[:, _NEXT_CORNER]
    sides = np.linalg.norm(nxt - c, axis=-1)                                 # (N, 4)
    x, y = c[..., 0], c[..., 1]
    area = 0.5 * np.abs((x * nxt[..., 1] - nxt[..., 0] * y).sum(axis=1))
    mean = sides.mean(axis=1)
    return ((sides.min(axis=1) >= np.maximum(MIN_SIDE_RATIO * sides.max(axis=1), MIN_SIDE_PX))
            & (area >= MIN_AREA_RATIO * mean ** 2))


class MarkerDetector:
    """Finds the markers of one dictionary in a frame."""

    def __init__(self, dictionary_name: str = "DICT_4X4_50",
                 parameters: cv2.aruco.DetectorParameters | None = None, refine: bool = True) -> None:
        self.dictionary_name = dictionary_name
        d = dictionary(dictionary_name)
        self.cells = d.markerSize + 2
        self.refine = refine
        self._parameters = parameters or detector_parameters()
        self._detector = cv2.aruco.ArucoDetector(d, self._parameters)
        self._sized_for = 0
        #: Whole frames are searched at 1/`search_reduce` of their size (1: full
        #: size); the outlines found are then refined on the full frame.  Set by
        #: the pipeline when the markers it sees are large enough (a 4K frame).
        self.search_reduce = 1

    def detect(self, image: np.ndarray, reduce: int | None = None) -> list[MarkerDetection]:
        """Every marker in the frame.

        With `reduce` (default `search_reduce`) above 1, OpenCV searches the frame
        shrunk that many times (a quarter of the pixels at 2: on a 4K frame most
        of the search's time), and each outline found is then fitted again to
        the full frame's edges, so the corners are as exact as a full search's.
        A marker must be about MIN_REDUCED_SIDE_PX across for that."""
        gray = to_gray(image)
        reduce = max(int(self.search_reduce if reduce is None else reduce), 1)
        if reduce == 1:
            corners, ids = self._raw(gray)
            return self._finish(gray, corners, ids)
        h, w = gray.shape
        small = cv2.resize(gray, (w // reduce, h // reduce), interpolation=cv2.INTER_AREA)
        corners, ids = self._raw(small)
        # Pixel centres: small pixel i covers full pixels reduce*i .. reduce*i + reduce-1.
        corners = (corners + 0.5) * reduce - 0.5
        return self._refit_or_again(gray, self._finish(gray, corners, ids, iterations=3))

    def detect_band(self, image: np.ndarray, rows: tuple[int, int], reduce: int | None = None,
                    known: Sequence[MarkerDetection] = ()) -> list[MarkerDetection]:
        """`detect` for the rows y0:y1 of the frame only (a whole frame's search
        spread over several frames, a band each), the outlines refitted on the
        whole frame: a marker near the band's edge is fitted as a whole frame's
        search fits it.  A full-width band keeps the frame's longest side, so
        OpenCV's size limits are the whole frame's.  `known`: markers this frame
        has found already; OpenCV's outline of one of them (the same id within
        half a side) is left out before refining (most of a band's markers, and
        most of its cost, on a table where the cars are tracked)."""
        gray = to_gray(image)
        return self.finish_band(gray, self.band_outlines(gray, rows, reduce), known)

    def band_outlines(self, image: np.ndarray, rows: tuple[int, int], reduce: int | None = None
                      ) -> tuple[np.ndarray, np.ndarray, int]:
        """The first half of `detect_band`, OpenCV's search alone: its outlines
        (N, 4, 2) in the whole frame's pixels, their ids and the reduction used.
        Nothing of this detector's but its own OpenCV detector is touched, so a
        `twin` may run it on another thread while this one works."""
        gray = to_gray(image)
        h, w = gray.shape
        y0, y1 = max(int(rows[0]), 0), min(int(rows[1]), h)
        reduce = max(int(self.search_reduce if reduce is None else reduce), 1)
        if y1 - y0 < 8:
            return np.zeros((0, 4, 2)), np.zeros(0, dtype=int), reduce
        band = gray[y0:y1]
        if reduce == 1:
            corners, ids = self._raw(band)
            return corners + np.array([0.0, y0]), ids, reduce
        band = band[:(y1 - y0) // reduce * reduce]       # whole small rows (the bands overlap)
        small = cv2.resize(band, (w // reduce, len(band) // reduce), interpolation=cv2.INTER_AREA)
        corners, ids = self._raw(small)
        # Pixel centres, as `detect`.
        return (corners + 0.5) * reduce - 0.5 + np.array([0.0, y0]), ids, reduce

    def finish_band(self, gray: np.ndarray, outlines: tuple[np.ndarray, np.ndarray, int],
                    known: Sequence[MarkerDetection] = ()) -> list[MarkerDetection]:
        """The second half of `detect_band`: the outlines not `known` refitted on the whole frame."""
        corners, ids, reduce = outlines
        corners, ids = _not_known(corners, ids, known)
        if not len(ids):
            return []
        if reduce == 1:
            return self._finish(gray, corners, ids, known=known)
        return self._refit_or_again(gray, self._finish(gray, corners, ids, iterations=3, known=known))

    def twin(self) -> MarkerDetector:
        """A detector of its own with the same settings, for another thread (OpenCV's
        detector and its parameters are changed per image size, so never shared)."""
        params = cv2.aruco.DetectorParameters()
        for name in dir(self._parameters):
            value = getattr(self._parameters, name)
            if not name.startswith("_") and not callable(value):
                setattr(params, name, value)
        other = MarkerDetector(self.dictionary_name, params, refine=self.refine)
        other.search_reduce = self.search_reduce
        return other

    def _refit_or_again(self, gray: np.ndarray, found: list[MarkerDetection]) -> list[MarkerDetection]:
        """An outline found on a reduced image that would not refit from its corners
        (they can be off by more than the refit allows) searched for again, full
        size, round where it was: its corners are then OpenCV's full-size ones at worst."""
        if not self.refine:
            return found
        for k, d in enumerate(found):
            if d.edge_sigma_px is None:
                pad = max(d.side_px, 30.0)
                (x0, y0), (x1, y1) = d.corners_px.min(axis=0) - pad, d.corners_px.max(axis=0) + pad
                again = [a for a in self.detect_regions(gray, [(x0, y0, x1, y1)])
                         if a.id == d.id and np.linalg.norm(a.centre_px - d.centre_px) < 0.5 * d.side_px]
                if len(again) == 1:
                    found[k] = again[0]
        return found

    def detect_regions(self, image: np.ndarray, regions: list[tuple[int, int, int, int]]) -> list[MarkerDetection]:
        """Markers inside the given regions (x0, y0, x1, y1) only: where cars were.

        Each region is searched alone (a few hundred pixels, not two million),
        at full size: shrinking a region costs more than it saves (measured on
        a 4K frame's driving cars); the outlines are then refined together on
        the whole frame."""
        gray = to_gray(image)
        h, w = gray.shape
        all_corners, all_ids = [], []
        for x0, y0, x1, y1 in regions:
            x0, y0, x1, y1 = max(int(x0), 0), max(int(y0), 0), min(int(x1), w), min(int(y1), h)
            if x1 - x0 < 8 or y1 - y0 < 8:
                continue
            corners, ids = self._raw(gray[y0:y1, x0:x1])
            if len(ids):
                all_corners.append(corners + np.array([x0, y0], dtype=np.float64))
                all_ids.append(ids)
        if not all_ids:
            return []
        return self._finish(gray, np.concatenate(all_corners), np.concatenate(all_ids))

    def follow(self, image: np.ndarray, expected: list[tuple[int, np.ndarray]]
               ) -> tuple[list[MarkerDetection | None], np.ndarray]:
        """Markers that stayed where they were last frame, found without a search.

        Most markers on a table stand still from one frame to the next (the
        anchors always, most cars most of the time).  For each (id, corners) in
        `expected`, the outline is fitted again to the edges around where it
        was, and then every cell of the marker, its black border too, is read
        where the fitted outline puts it and must match that id's pattern: a
        moved, lifted, covered or swapped marker fails one or the other and is
        left to the region search.  Returns one detection (or None) per entry
        and the grey frame."""
        gray = to_gray(image)
        n = len(expected)
        out: list[MarkerDetection | None] = [None] * n
        if n == 0:
            return out, gray
        seeds = np.array([c for _, c in expected], dtype=np.float64).reshape(n, 4, 2)
        # One refit: the seeds are last frame's refitted outlines, so a marker that
        # stood still is already where one pass puts it (a second moves it by
        # hundredths of a pixel, and costs as much as the first).
        outlines = refine_outlines(gray, seeds, self.cells, iterations=1)
        ok = outlines.ok & (np.linalg.norm(outlines.corners_px - seeds, axis=-1).max(axis=1) < FOLLOW_MAX_SHIFT_PX)
        if ok.any():
            idx = np.flatnonzero(ok)
            ids = np.array([expected[i][0] for i in idx])
            ok[idx] = self._cells_match(gray, outlines.corners_px[idx], ids)
        for i in np.flatnonzero(ok):
            out[i] = MarkerDetection(int(expected[i][0]), outlines.corners_px[i], float(outlines.edge_sigma_px[i]),
                                     float(outlines.contrast[i]))
        return out, gray

    def _pattern(self, marker_id: int) -> np.ndarray | None:
        """The (cells, cells) bits of a marker id with its black border, white = 1."""
        cache = self.__dict__.setdefault("_patterns", {})
        if marker_id not in cache:
            d = dictionary(self.dictionary_name)
            if not 0 <= marker_id < len(d.bytesList):
                cache[marker_id] = None
            else:
                bits = cv2.aruco.Dictionary.getBitsFromByteList(d.bytesList[marker_id:marker_id + 1], d.markerSize)
                pattern = np.zeros((self.cells, self.cells), bool)
                pattern[1:-1, 1:-1] = bits.astype(bool)
                cache[marker_id] = pattern
        return cache[marker_id]

    def _cells_match(self, gray: np.ndarray, corners: np.ndarray, ids: np.ndarray) -> np.ndarray:
        """(N,) bool: does each outline hold its id's cells, every one of them, clearly?"""
        k = self.cells
        patterns = [self._pattern(int(i)) for i in ids]
        good = np.array([p is not None for p in patterns])
        if not good.any():
            return good
        # Cell-centre samples (3 x 3 in the middle of each cell) in marker units.
        sub = np.array([0.3, 0.5, 0.7])
        u = (np.arange(k)[:, None] + sub[None, :]).ravel()                  # (3k,)
        uu, vv = np.meshgrid(u, u)                                           # row = v (y), col = u (x)
        unit = np.stack([uu.ravel(), vv.ravel(), np.ones(uu.size)], axis=0)  # (3, 9k^2)
        square = np.array([[0, 0], [k, 0], [k, k], [0, k]], dtype=np.float32)
        idx = np.flatnonzero(good)
        hs = np.array([cv2.getPerspectiveTransform(square, corners[j].astype(np.float32)) for j in idx])
        p = hs @ unit                                                         # (M, 3, 9k^2)
        xy = np.moveaxis(p[:, :2] / p[:, 2:3], 1, -1)                         # (M, 9k^2, 2)
        v = sample_bilinear(gray, xy).reshape(len(idx), k, 3, k, 3).mean(axis=(2, 4))   # cell means
        pattern = np.array([patterns[j] for j in idx])                        # (M, k, k)
        n_light = pattern.sum(axis=(1, 2))
        light = (v * pattern).sum(axis=(1, 2)) / np.maximum(n_light, 1)
        dark = (v * ~pattern).sum(axis=(1, 2)) / (k * k - n_light)
        contrast = light - dark
        # Every cell on its own side of the middle, by a clear margin.
        score = (v - ((light + dark) / 2)[:, None, None]) / np.maximum(contrast, 1e-6)[:, None, None]
        clear = np.all(np.where(pattern, score, -score) > FOLLOW_CELL_MARGIN, axis=(1, 2))
        result = np.zeros(len(ids), bool)
        result[idx] = clear & (contrast > FOLLOW_MIN_CONTRAST)
        return result

    def _raw(self, gray: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        size = max(gray.shape[:2])
        if size != self._sized_for:
            self._parameters.minMarkerPerimeterRate = MIN_PERIMETER_PX / size
            self._detector.setDetectorParameters(self._parameters)
            self._sized_for = size
        corners, ids, _ = self._detector.detectMarkers(gray)
        if ids is None:
            return np.zeros((0, 4, 2)), np.zeros(0, dtype=int)
        corners = np.asarray(corners, dtype=np.float64).reshape(-1, 4, 2)
        keep = plausible_quads(corners) if len(corners) else np.zeros(0, bool)
        return corners[keep], ids.reshape(-1)[keep]

    def _finish(self, gray: np.ndarray, corners: np.ndarray, ids: np.ndarray,
                iterations: int = 2, known: Sequence[MarkerDetection] = ()) -> list[MarkerDetection]:
        sigmas: list[float | None] = [None] * len(ids)
        contrasts: list[float | None] = [None] * len(ids)
        if self.refine and len(ids):
            outlines = refine_outlines(gray, corners, self.cells, iterations=iterations)
            corners = outlines.corners_px
            sigmas = [float(s) if ok else None for s, ok in zip(outlines.edge_sigma_px, outlines.ok)]
            contrasts = [float(c) if ok else None for c, ok in zip(outlines.contrast, outlines.ok)]
        found = [MarkerDetection(int(i), c, s, k) for i, c, s, k in zip(ids, corners, sigmas, contrasts)]
        return _drop_overlapped(found, known) if self.refine else found


def _not_known(corners: np.ndarray, ids: np.ndarray, known: Sequence[MarkerDetection]
               ) -> tuple[np.ndarray, np.ndarray]:
    """OpenCV's outlines without those of markers already found: the same id with its
    centre within half the found one's side."""
    if not len(ids) or not known:
        return corners, ids
    centres = corners.mean(axis=1)
    keep = np.array([not any(k.id == i and math.dist(k.centre_px, c) < 0.5 * k.side_px for k in known)
                     for i, c in zip(ids.tolist(), centres)], bool)
    return corners[keep], ids[keep]


def _drop_overlapped(found: list[MarkerDetection], known: Sequence[MarkerDetection] = ()
                     ) -> list[MarkerDetection]:
    """Without an outline that would not refit and lies on another marker that did
    (or on one found already, `known`).

    Two markers cannot lie on one another: a part of one marker's cells read as
    another id (OpenCV does, now and then, on a noisy frame) would otherwise
    make that id seen twice, and its car untrusted."""
    good = [d for d in found if d.edge_sigma_px is not None] + list(known)
    if all(d.edge_sigma_px is not None for d in found) or not good:
        return found
    return [d for d in found if d.edge_sigma_px is not None
            or not any(g.id != d.id and math.dist(g.centre_px, d.centre_px) < 0.5 * g.side_px for g in good)]


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

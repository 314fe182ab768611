"""Which ArUco dictionary a picture's markers come from, when it is not the one expected.

A table file or a board that names the wrong dictionary finds no markers at
all; saying "no markers" helps nobody, saying "these are DICT_6X6 markers"
does.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

_PROBE_FAMILIES = (
    ("DICT_4X4", (50, 100, 250, 1000)),
    ("DICT_5X5", (50, 100, 250, 1000)),
    ("DICT_6X6", (50, 100, 250, 1000)),
    ("DICT_7X7", (50, 100, 250, 1000)),
    ("DICT_ARUCO_ORIGINAL", ()),
    ("DICT_ARUCO_MIP_36h12", ()),
    ("DICT_APRILTAG_16h5", ()),
    ("DICT_APRILTAG_25h9", ()),
    ("DICT_APRILTAG_36h10", ()),
    ("DICT_APRILTAG_36h11", ()),
)


@dataclass(frozen=True)
class DictionaryGuess:
    """The family the markers seem to be from, the highest id read, and the
    smallest dictionary of that family that holds it (`which`, said as a phrase)."""

    family: str
    top_id: int
    markers: int
    which: str


def probe_dictionaries(images: list[np.ndarray], exclude: str) -> DictionaryGuess | None:
    """The predefined dictionary whose markers the images show most of, if any
    other than `exclude`.  Needs two markers: one false detection in clutter is
    not a verdict."""
    best: DictionaryGuess | None = None
    params = cv2.aruco.DetectorParameters()
    for family, sizes in _PROBE_FAMILIES:
        name = f"{family}_{sizes[-1]}" if sizes else family
        detector = cv2.aruco.ArucoDetector(
            cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, name.upper())), params)
        for image in images:
            _, ids, _ = detector.detectMarkers(image)
            if ids is None or len(ids) < 2:
                continue
            top = int(ids.max())
            # The smallest member of the family reading every id seen.
            fit = next((f"{family}_{n}" for n in sizes if top < n), name)
            if fit == exclude:
                continue
            which = fit if fit == name else f"{fit} or a larger {family} one"
            if best is None or len(ids) > best.markers:
                best = DictionaryGuess(family, top, len(ids), which)
    return best

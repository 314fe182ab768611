"""What the projector throws: shapes in table millimetres, drawn in projector pixels.

The table's scene (templates, arcs, squares, placements, the ruler; built by
companion/projector_scene.py from what the page is given) is a list of `TableShape`s
in table mm. The display maps them through the projector's calibration
(calibration/projector.py) into `ProjectorShape`s in projector pixels, which the
/projector page draws and the demo's synthetic projector rasterises (one mapping, in
Python, for both). Markers are masked: every "mask" shape is drawn last, in black, so
no roof or anchor is ever lit. While the projector is being calibrated or checked the
display throws that pattern instead of the scene.

Pure: no OpenCV, no Flask; the page and the demo read `frame()`.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from calibration.projector import ProjectorModel, table_fingerprint

#: What the projector may show, chosen on the page.
MODES = ("everything", "placements", "nothing")
MODE_WORDS = {"everything": "everything the page draws on the board",
              "placements": "only where the rules ask for a piece to be put",
              "nothing": "nothing (the projector throws black)"}
#: Roles a shape may have. "mask" is black over a marker; "pattern" and "check" are the
#: calibration's dots; the rest are the scene's.
ROLES = ("template", "region", "arc", "reach", "ruler", "square", "gate", "placement", "blast",
         "mask", "pattern", "check")
#: Shapes that "placements" mode keeps (and masks, always).
PLACEMENT_ROLES = ("placement", "mask")
#: A table edge is cut into pieces this long before it is mapped, so a straight edge
#: bent by the projector's lens is drawn bent as the light will be (mm).
DENSIFY_MM = 5.0


@dataclass(frozen=True)
class TableShape:
    """A shape on the table in mm: a polyline, or a polygon when `closed`."""

    role: str
    points_mm: tuple[tuple[float, float], ...]
    closed: bool = True
    filled: bool = False
    width_mm: float = 2.0           # the stroke, on the table
    colour: str = "#ffffff"
    label: str = ""                 # what it is, for people and tests ("Buggy's move template")
    #: How high above the table it lies (a roof marker's mask: the car's roof height). The
    #: projector's light toward a roof leaves through other pixels than toward the table
    #: under it (parallax), so such a mask covers both.
    z_mm: float = 0.0

    def __post_init__(self) -> None:
        if self.role not in ROLES:
            raise ValueError(f"a projector shape's role must be one of {', '.join(ROLES)}, not {self.role!r}")


@dataclass(frozen=True)
class ProjectorShape:
    """A shape in projector pixels, ready to draw."""

    role: str
    points_px: tuple[tuple[float, float], ...]
    closed: bool
    filled: bool
    width_px: float
    colour: str
    label: str = ""

    def to_json(self) -> dict:
        return self._json

    @cached_property
    def _json(self) -> dict:
        # Made once per shape: a still board of squares is answered again and again.
        return {"role": self.role, "points": np.round(np.asarray(self.points_px, float).reshape(-1, 2), 2).tolist(),
                "closed": self.closed, "filled": self.filled, "width": round(self.width_px, 2),
                "colour": self.colour, "label": self.label}


def densify(points: np.ndarray, closed: bool, step_mm: float = DENSIFY_MM) -> np.ndarray:
    """The points with each edge cut into pieces no longer than `step_mm`."""
    pts = np.asarray(points, float).reshape(-1, 2)
    if len(pts) < 2:
        return pts
    ends = np.vstack([pts, pts[:1]]) if closed else pts
    out = []
    for a, b in zip(ends[:-1], ends[1:]):
        n = max(1, int(math.ceil(np.hypot(*(b - a)) / step_mm)))
        t = np.arange(n)[:, None] / n
        out.append(a + t * (b - a))
    if not closed:
        out.append(pts[-1:])
    return np.vstack(out)


class ProjectorDisplay:
    """The projector's state in a running companion: its calibration (or none yet), what
    it is to show, and a pattern that takes over while it is calibrated or checked."""

    def __init__(self, model: ProjectorModel | None = None, mode: str = "everything") -> None:
        self._lock = threading.Lock()
        self.model = model
        self.mode = self._checked_mode(mode)
        self.version = 0
        self._pattern: tuple[ProjectorShape, ...] | None = None
        self.pattern_why = ""
        #: The last check's words ("projection within 1.2 mm"), or why it failed.
        self.check_text = ""
        #: The projector page's own size in its pixels, as it said when it opened (None until
        #: then): the size a calibration pattern is drawn in when nothing else fixes it.
        self.screen_px: tuple[int, int] | None = None
        # Shapes already mapped through the calibration: a board of squares takes a tenth
        # of a second to map, and only the cars' masks and the ruler move while a car does.
        self._mapped: dict = {}

    @staticmethod
    def _checked_mode(mode: str) -> str:
        if mode not in MODES:
            raise ValueError(f"the projector can show {', '.join(MODES)}, not {mode!r}")
        return mode

    def set_mode(self, mode: str) -> None:
        with self._lock:
            self.mode = self._checked_mode(mode)
            self.version += 1

    def set_model(self, model: ProjectorModel | None) -> None:
        with self._lock:
            self.model = model
            self._mapped = {}
            self.version += 1

    def for_table(self, table) -> None:
        """Drop a calibration made on another table (a new table file was loaded): what it
        would draw would land in the wrong places. Says so on the check's line."""
        model = self.model
        if model is not None and model.table_fingerprint and model.table_fingerprint != table_fingerprint(table):
            self.set_model(None)
            self.check_text = ("the projector's calibration was made on another table (this table file's "
                               "anchors or size differ): calibrate the projector again on this table")

    def show_pattern(self, shapes, why: str) -> None:
        """Throw these shapes (projector px) instead of the scene, until cleared."""
        with self._lock:
            self._pattern = tuple(shapes)
            self.pattern_why = why
            self.version += 1

    def clear_pattern(self) -> None:
        with self._lock:
            self._pattern = None
            self.pattern_why = ""
            self.version += 1

    @property
    def showing_pattern(self) -> bool:
        return self._pattern is not None

    def shapes_px(self, scene: list[TableShape]) -> list[ProjectorShape]:
        """The scene as the projector draws it now: the pattern while one is shown; else the
        scene's shapes the mode keeps, through the calibration, masks last."""
        with self._lock:
            if self._pattern is not None:
                return list(self._pattern)
            model, mode = self.model, self.mode
        if model is None or mode == "nothing":
            return []
        keep = [s for s in scene if mode == "everything" or s.role in PLACEMENT_ROLES]
        if not any(s.role != "mask" for s in keep):
            return []
        keep.sort(key=lambda s: s.role == "mask")
        mapped = self._mapped
        if len(mapped) > 4000:
            mapped.clear()
        out = []
        for s in keep:
            key = (id(model), s)
            if key in mapped:
                out.append(mapped[key])
                continue
            pts = np.asarray(s.points_mm, float).reshape(-1, 2)
            if s.z_mm > 0 and len(pts):
                up = model.lifted(pts, s.z_mm)
                pts = _hull(np.vstack([pts, up])) if s.role == "mask" else up
            pts = densify(pts, s.closed)
            if len(pts) == 0:
                continue
            px = model.table_to_projector(pts)
            scale = model.px_per_mm(pts.mean(axis=0))
            mapped[key] = ProjectorShape(s.role, tuple(map(tuple, px.tolist())), s.closed, s.filled,
                                         s.width_mm * scale, s.colour, s.label)
            out.append(mapped[key])
        return out

    def frame(self, scene: list[TableShape]) -> dict:
        """What /api/projector/frame answers: the shapes to draw and what the page needs
        to say about them."""
        shapes = self.shapes_px(scene)
        model = self.model
        return {"version": self.version, "calibrated": model is not None,
                "size_px": list(model.size_px) if model is not None else None,
                "mode": self.mode, "pattern": self.pattern_why or None, "check": self.check_text or None,
                "shapes": [s.to_json() for s in shapes]}


def _hull(points: np.ndarray) -> np.ndarray:
    """The convex hull of points (N, 2), anticlockwise (Andrew's monotone chain)."""
    pts = sorted(set(map(tuple, np.round(points, 6).tolist())))
    if len(pts) < 3:
        return np.asarray(pts, float)

    def cross(o, a, b):
        return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])

    lower, upper = [], []
    for p in pts:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    for p in reversed(pts):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return np.asarray(lower[:-1] + upper[:-1], float)

"""A projector over the table: where a point of the table lands in the projector's image.

A projector throws its image onto the table, a plane, so table millimetres map to
projector pixels by a homography (the projector's pose, throw and keystone), bent a
little by its lens.  The model is that homography followed by a smooth cubic
correction in the projector's own pixels (the lens: barrel or pincushion, and a lens
shift that puts its centre off the image's).  It is fitted from pairs the camera
measured, (table mm, projector px): dots thrown by the projector, found on the table
by the camera (companion/projector_cal.py).

Pure numpy: the geometry stays free of OpenCV, so the rules and the page share it.
A calibration is kept as JSON beside the table's files, with a fingerprint of the
table it was made on: one from another table is refused by name.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np

#: Pairs needed before the lens's cubic correction is fitted; fewer fit the homography alone.
MIN_POINTS_FOR_LENS = 30
#: Least pairs for a homography that means anything (4 fix it exactly, with no check).
MIN_POINTS = 8
FORMAT = "table-companion projector calibration 1"


class ProjectorFileError(ValueError):
    """A projector calibration that cannot be used: `problem` names the file and what is
    wrong with it, `todo` what to do; the message says both."""

    def __init__(self, problem: str, todo: str = "") -> None:
        super().__init__(f"{problem}; {todo}" if todo else problem)
        self.problem, self.todo = problem, todo


def calibrate_command(path, table=None, source: str | None = None) -> str:
    """The command that writes a new calibration to `path`: for the demo's synthetic camera
    (`source` "demo", or the built-in table), else with the camera and the table file."""
    table_file = str(table.source) if table is not None else ""
    is_file = bool(table_file) and not table_file.startswith("<")
    if (source or "").strip() == "demo" or (table is not None and not is_file):
        where = f" --table {table_file}" if is_file else ""
        return f"companion calibrate projector --demo{where} --out {path}"
    return (f"companion calibrate projector --source {source or '<camera>'} "
            f"--table {table_file if is_file else '<table file>'} --out {path}")


def calibrate_again(path, table=None) -> str:
    """What to do about an unusable calibration file, in words."""
    return (f"calibrate the projector again: `{calibrate_command(path, table)}`, or press "
            f"Setup → Calibrate projector in a running companion")


def table_fingerprint(table) -> str:
    """What makes a table the same table for a projector: its size and its anchors'
    places. Cars and terrain come and go; a moved anchor is another table."""
    anchors = sorted((a.id, round(a.x_mm, 1), round(a.y_mm, 1), round(a.size_mm, 1), round(a.rotation_deg, 1))
                     for a in table.anchors)
    text = json.dumps([round(table.width_mm, 1), round(table.depth_mm, 1), anchors])
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def _cubic_terms(u: np.ndarray) -> np.ndarray:
    """The cubic monomials of normalised projector coordinates (N, 2) -> (N, 10)."""
    x, y = u[:, 0], u[:, 1]
    return np.column_stack([np.ones_like(x), x, y, x * x, x * y, y * y, x ** 3, x * x * y, x * y * y, y ** 3])


def _apply_h(h: np.ndarray, xy: np.ndarray) -> np.ndarray:
    p = np.column_stack([xy, np.ones(len(xy))]) @ h.T
    return p[:, :2] / p[:, 2:3]


def _normalising(pts: np.ndarray) -> np.ndarray:
    """Hartley's normalisation: centred, mean distance sqrt(2)."""
    c = pts.mean(axis=0)
    d = np.mean(np.hypot(*(pts - c).T)) or 1.0
    s = math.sqrt(2) / d
    return np.array([[s, 0, -s * c[0]], [0, s, -s * c[1]], [0, 0, 1.0]])


def fit_homography(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """The homography taking src (N, 2) to dst (N, 2), least squares (normalised DLT)."""
    src, dst = np.asarray(src, float), np.asarray(dst, float)
    ts, td = _normalising(src), _normalising(dst)
    s, d = _apply_h(ts, src), _apply_h(td, dst)
    rows = []
    for (x, y), (u, v) in zip(s, d):
        rows.append([-x, -y, -1, 0, 0, 0, u * x, u * y, u])
        rows.append([0, 0, 0, -x, -y, -1, v * x, v * y, v])
    _, _, vt = np.linalg.svd(np.asarray(rows))
    hn = vt[-1].reshape(3, 3)
    h = np.linalg.inv(td) @ hn @ ts
    return h / h[2, 2]


@dataclass(frozen=True, eq=False)
class Coverage:
    """How much of the table the projector's image covers."""

    share: float                        # of the table's area, 0..1
    missed: tuple[str, ...]             # the parts of the table it leaves dark, in words

    def words(self) -> str:
        if not self.missed:
            return f"the projector covers the whole table ({self.share:.0%})"
        if self.share == 0:
            return "the projector's image does not reach the table at all"
        return f"the projector covers {self.share:.0%} of the table; it leaves out {', '.join(self.missed)}"


@dataclass(frozen=True, eq=False)
class ProjectorModel:
    """Table millimetres to projector pixels, and back."""

    size_px: tuple[int, int]                 # the projector's image, width x height
    homography: np.ndarray                   # table mm -> projector px, before the lens
    lens: np.ndarray = field(default_factory=lambda: np.zeros((10, 2)))   # cubic correction, px
    table_fingerprint: str = ""
    #: How well the fit explains its own points: RMS in projector px and in table mm, how many.
    rms_px: float = 0.0
    rms_mm: float = 0.0
    points: int = 0

    # --- the mapping -------------------------------------------------------------------

    def _norm(self, px: np.ndarray) -> np.ndarray:
        w, h = self.size_px
        return (px - (w / 2, h / 2)) / (max(w, h) / 2)

    def table_to_projector(self, xy_mm) -> np.ndarray:
        """Projector pixels (N, 2) where table points (N, 2) in mm land."""
        xy = np.atleast_2d(np.asarray(xy_mm, float))
        ideal = _apply_h(self.homography, xy)
        return ideal + _cubic_terms(self._norm(ideal)) @ self.lens

    def projector_to_table(self, px) -> np.ndarray:
        """Table mm (N, 2) lit by projector pixels (N, 2): the lens undone by Newton's
        method, then the homography's inverse."""
        target = np.atleast_2d(np.asarray(px, float))
        ideal = target.copy()
        eps = 1e-3
        for _ in range(20):
            got = ideal + _cubic_terms(self._norm(ideal)) @ self.lens
            err = got - target
            if np.max(np.abs(err)) < 1e-6:
                break
            jx = (ideal + (eps, 0) + _cubic_terms(self._norm(ideal + (eps, 0))) @ self.lens - got) / eps
            jy = (ideal + (0, eps) + _cubic_terms(self._norm(ideal + (0, eps))) @ self.lens - got) / eps
            det = jx[:, 0] * jy[:, 1] - jy[:, 0] * jx[:, 1]
            det = np.where(np.abs(det) < 1e-12, 1e-12, det)
            ideal = ideal - np.column_stack([(jy[:, 1] * err[:, 0] - jy[:, 0] * err[:, 1]) / det,
                                             (-jx[:, 1] * err[:, 0] + jx[:, 0] * err[:, 1]) / det])
        return _apply_h(np.linalg.inv(self.homography), ideal)

    def centre_mm(self) -> np.ndarray | None:
        """Where the projector's lens stands over the table (x, y, z mm), from its
        homography, or None when the homography is no projector's. A plane's homography
        alone leaves the lens's focal length and centre open; this assumes square pixels
        and a lens shifted only up or down (as nearly every projector's is), which fixes
        them. Good to a few centimetres: enough to know where light aimed at a car's roof
        comes from (`lifted`)."""
        return self._centre

    @cached_property
    def _centre(self) -> np.ndarray | None:
        return _centre_from_homography(self.homography, self.size_px)      # worked out once

    def lifted(self, xy_mm, z_mm: float) -> np.ndarray:
        """The table points (N, 2) whose light, on its way down, passes through the points
        `z_mm` above xy_mm: where the projector must draw to light (or keep dark) a car's
        roof. Without a known centre, the points themselves."""
        xy = np.atleast_2d(np.asarray(xy_mm, float))
        c = self.centre_mm()
        if c is None or z_mm <= 0 or z_mm >= c[2]:
            return xy
        return c[:2] + (xy - c[:2]) * (c[2] / (c[2] - z_mm))

    def px_per_mm(self, xy_mm) -> float:
        """How many projector pixels a millimetre of table is, at a point (the mean of both axes)."""
        p = np.asarray(xy_mm, float).reshape(1, 2)
        d = self.table_to_projector(np.vstack([p, p + (1, 0), p + (0, 1)]))
        return float((np.hypot(*(d[1] - d[0])) + np.hypot(*(d[2] - d[0]))) / 2)

    def inside(self, px: np.ndarray) -> np.ndarray:
        w, h = self.size_px
        px = np.atleast_2d(px)
        return (px[:, 0] >= 0) & (px[:, 0] <= w) & (px[:, 1] >= 0) & (px[:, 1] <= h)

    def coverage(self, width_mm: float, depth_mm: float, step_mm: float = 10.0) -> Coverage:
        """How much of a table the image covers, and which parts it leaves dark."""
        xs = np.arange(step_mm / 2, width_mm, step_mm)
        ys = np.arange(step_mm / 2, depth_mm, step_mm)
        gx, gy = np.meshgrid(xs, ys)
        pts = np.column_stack([gx.ravel(), gy.ravel()])
        lit = self.inside(self.table_to_projector(pts)) & self._in_front(pts)
        missed = []
        # The table in thirds each way: a part is named when a quarter of it or more is dark.
        names_x = ("left", "middle", "right")
        names_y = ("near", "middle", "far")
        for j, ny in enumerate(names_y):
            for i, nx in enumerate(names_x):
                part = ((pts[:, 0] >= i * width_mm / 3) & (pts[:, 0] < (i + 1) * width_mm / 3)
                        & (pts[:, 1] >= j * depth_mm / 3) & (pts[:, 1] < (j + 1) * depth_mm / 3))
                if part.any() and np.mean(~lit[part]) >= 0.25:
                    if nx == "middle" and ny == "middle":
                        missed.append("the middle")
                    elif nx == "middle" or ny == "middle":
                        missed.append(f"the {ny if nx == 'middle' else nx} edge")
                    else:
                        missed.append(f"the {ny}-{nx} corner")
        return Coverage(float(np.mean(lit)), tuple(missed))

    def _in_front(self, xy_mm: np.ndarray) -> np.ndarray:
        """Points on the side of the projector's horizon that it lights (w > 0)."""
        p = np.column_stack([xy_mm, np.ones(len(xy_mm))]) @ self.homography.T
        return p[:, 2] > 0

    # --- the file -----------------------------------------------------------------------

    def to_json(self) -> dict:
        return {"format": FORMAT, "size_px": list(self.size_px), "homography": self.homography.tolist(),
                "lens": self.lens.tolist(), "table_fingerprint": self.table_fingerprint,
                "rms_px": self.rms_px, "rms_mm": self.rms_mm, "points": self.points}

    def save(self, path) -> Path:
        """Written whole to a temporary file and moved into place: a calibration that was
        there is never left half-written."""
        path = Path(path)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")
        tmp.replace(path)
        return path

    @classmethod
    def from_json(cls, data: dict, where: str = "<projector>", table=None) -> "ProjectorModel":
        """The model a calibration's JSON describes; ProjectorFileError naming `where` and
        what is wrong with it (never the parser's own words) when it is not a usable one."""
        todo = calibrate_again(where, table)
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ProjectorFileError(f"{where} is not a projector calibration (its format line should say "
                                     f"{FORMAT!r})", todo)

        def damaged(what: str) -> ProjectorFileError:
            return ProjectorFileError(f"{where} is damaged: it is not a projector calibration that can be used "
                                      f"({what})", todo)
        try:
            w, h = (int(v) for v in data["size_px"])
        except (KeyError, TypeError, ValueError, OverflowError):
            raise damaged("its size_px is missing or not two whole numbers of pixels") from None
        try:
            hom = np.asarray(data["homography"], float).reshape(3, 3)
        except (KeyError, TypeError, ValueError):
            raise damaged("its homography is missing or not 3 x 3 numbers") from None
        try:
            lens = np.asarray(data.get("lens", np.zeros((10, 2))), float).reshape(10, 2)
        except (TypeError, ValueError):
            raise damaged("its lens is not 10 x 2 numbers") from None
        try:
            rms_px, rms_mm = float(data.get("rms_px", 0.0)), float(data.get("rms_mm", 0.0))
            points = int(data.get("points", 0))
        except (TypeError, ValueError, OverflowError):
            raise damaged("its rms_px, rms_mm or points is not a number") from None
        if w <= 0 or h <= 0 or not np.all(np.isfinite(hom)) or abs(np.linalg.det(hom)) < 1e-12 \
                or not np.all(np.isfinite(lens)):
            raise damaged("its size or mapping is not a projector's")
        return cls((w, h), hom, lens, str(data.get("table_fingerprint", "")), rms_px, rms_mm, points)

    @classmethod
    def load(cls, path, table=None) -> "ProjectorModel":
        """Read a calibration; with `table`, refuse one made on another table. Every way it
        can fail is a ProjectorFileError naming the file, what is wrong and what to do."""
        path = Path(path)
        todo = calibrate_again(path, table)
        try:
            text = path.read_bytes()
        except FileNotFoundError:
            raise ProjectorFileError(f"{path}: no projector calibration there",
                                     f"make one with `{calibrate_command(path, table)}`") from None
        except OSError as exc:
            raise ProjectorFileError(f"{path} cannot be read ({exc.strerror or type(exc).__name__})",
                                     "check the file is there and may be read, or " + todo) from None
        try:
            data = json.loads(text.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            # The parser's own words ("Expecting value: line 1 column 1") tell a player nothing.
            raise ProjectorFileError(f"{path} is damaged: it cannot be read as a projector calibration "
                                     f"(it is not the JSON text a calibration is saved as: cut short, "
                                     f"written over, or another kind of file)", todo) from None
        model = cls.from_json(data, str(path), table)
        if table is not None and model.table_fingerprint != table_fingerprint(table):
            raise ProjectorFileError(
                f"{path} was made on another table (its anchors or size differ from {table.source})",
                f"calibrate the projector again on this table: `{calibrate_command(path, table)}`")
        return model


def fit_projector(table_mm, projector_px, size_px: tuple[int, int], fingerprint: str = "",
                  lens: bool | None = None) -> ProjectorModel:
    """The model that best takes table points (N, 2, mm) to where the camera saw them lit
    in the projector's image (N, 2, px). With enough points spread over the image the
    lens's cubic correction is fitted too (`lens=None`: when there are
    MIN_POINTS_FOR_LENS or more)."""
    src = np.asarray(table_mm, float).reshape(-1, 2)
    dst = np.asarray(projector_px, float).reshape(-1, 2)
    if len(src) != len(dst):
        raise ValueError(f"{len(src)} table points but {len(dst)} projector points")
    if len(src) < MIN_POINTS:
        raise ValueError(f"{len(src)} points are too few to place the projector: at least {MIN_POINTS} are needed")
    hom = fit_homography(src, dst)
    model = ProjectorModel(tuple(int(v) for v in size_px), hom, np.zeros((10, 2)), fingerprint)
    use_lens = len(src) >= MIN_POINTS_FOR_LENS if lens is None else lens
    if use_lens:
        # The homography and the lens's correction fitted in turn: each pass refits the
        # homography to the points with the lens's bend taken out, then the bend to what is left.
        for _ in range(4):
            ideal = _apply_h(hom, src)
            terms = _cubic_terms(model._norm(ideal))
            coef, *_ = np.linalg.lstsq(terms, dst - ideal, rcond=None)
            model = ProjectorModel(model.size_px, hom, coef, fingerprint)
            straightened = dst - _cubic_terms(model._norm(ideal)) @ coef
            hom = fit_homography(src, straightened)
        model = ProjectorModel(model.size_px, hom, coef, fingerprint)
    residual_px = model.table_to_projector(src) - dst
    residual_mm = model.projector_to_table(dst) - src
    return ProjectorModel(model.size_px, model.homography, model.lens, fingerprint,
                          float(np.sqrt(np.mean(np.sum(residual_px ** 2, axis=1)))),
                          float(np.sqrt(np.mean(np.sum(residual_mm ** 2, axis=1)))), len(src))


def _centre_from_homography(hom: np.ndarray, size_px: tuple[int, int]) -> np.ndarray | None:
    """The lens's place from H = K [r1 r2 t], K with one focal length f and its centre at
    (width / 2, cy): r1 and r2 orthogonal and of one length give f and cy (cy found by
    bisection over a generous range), then C = -R^T t."""
    cx = size_px[0] / 2
    h1, h2, h3 = hom[:, 0], hom[:, 1], hom[:, 2]

    def f2_and_gap(cy: float) -> tuple[float, float]:
        u1, u2 = h1[0] - cx * h1[2], h2[0] - cx * h2[2]
        v1, v2 = h1[1] - cy * h1[2], h2[1] - cy * h2[2]
        if abs(h1[2] * h2[2]) < 1e-18:
            return math.nan, math.nan
        f2 = -(u1 * u2 + v1 * v2) / (h1[2] * h2[2])
        if not f2 > 0:
            return math.nan, math.nan
        return f2, (u1 * u1 + v1 * v1 - u2 * u2 - v2 * v2) / f2 + h1[2] ** 2 - h2[2] ** 2

    h = size_px[1]
    cys = np.linspace(-4 * h, 5 * h, 1801)
    gaps = np.array([f2_and_gap(c)[1] for c in cys])
    best = None
    for i in np.where(np.isfinite(gaps[:-1]) & np.isfinite(gaps[1:]) & (np.sign(gaps[:-1]) != np.sign(gaps[1:])))[0]:
        a, b = cys[i], cys[i + 1]
        for _ in range(60):
            m = (a + b) / 2
            if np.sign(f2_and_gap(m)[1]) == np.sign(f2_and_gap(a)[1]):
                a = m
            else:
                b = m
        cy = (a + b) / 2
        f2, _ = f2_and_gap(cy)
        if not f2 > 0:
            continue
        k = np.array([[math.sqrt(f2), 0, cx], [0, math.sqrt(f2), cy], [0, 0, 1.0]])
        m3 = np.linalg.inv(k) @ hom
        lam = 1 / np.linalg.norm(m3[:, 0])
        r1, r2, t = lam * m3[:, 0], lam * m3[:, 1], lam * m3[:, 2]
        if t[2] < 0:
            r1, r2, t = -r1, -r2, -t
        rot = np.column_stack([r1, r2, np.cross(r1, r2)])
        c = -rot.T @ t
        # The lens stands above the table; of two answers, the one nearer the image's middle.
        if c[2] > 0 and (best is None or abs(cy - h / 2) < abs(best[0] - h / 2)):
            best = (cy, c)
    return None if best is None else best[1]

"""What a camera's view covers of the table, and how big a car's roof marker looks there.

From a camera's table pose (calibration.table_pose.TablePose) alone, with no frame:
the part of the table (or of a plane some height above it, a roof's) the image
shows, a marker's side in pixels at any table point, where on the table a car's
marker looks smallest, which anchors a camera sees whole, and for several
cameras their overlap, the share of the table they cover together and the parts
no camera covers, named as players name them ("the far-right corner").

The view's outline is traced from the image border through the lens (sampled
densely, so a barrel lens bends it as it should), each border ray cut where it
meets the plane; rays that run above the horizon never meet it, so the border
is cut first to the rays that do.  Polygon arithmetic (clipping, overlap,
union) is shapely's, already the geometry's.  No OpenCV drawing: `doctor` and
the page both use this.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import MultiPolygon, Point, Polygon, box
from shapely.ops import unary_union

from calibration.table_pose import TablePose
from calibration.tablefile import CarSpec, TableSpec

#: Samples along each side of the image border: a webcam's lens bends a border
#: line by a few millimetres on the table; 64 straight pieces per side follow it
#: to well under a millimetre.
BORDER_SAMPLES = 64
#: A border ray counts as meeting the plane while it points down by at least this
#: (the z of its direction per unit forward): a ray nearer the horizon meets the
#: plane kilometres away, beyond any table, so cutting there loses nothing.
HORIZON_EPS = 1e-3
#: Uncovered patches smaller than this (mm^2, about 3 x 3 cm) are not worth naming.
MIN_GAP_MM2 = 900.0


def _table_size(table) -> tuple[float, float]:
    if table is None:
        return (math.inf, math.inf)
    if isinstance(table, TableSpec):
        return float(table.width_mm), float(table.depth_mm)
    w, d = table
    return float(w), float(d)


def _image_size(pose: TablePose, image_size) -> tuple[int, int]:
    size = image_size if image_size is not None else pose.camera.image_size
    if size is None:
        raise ValueError("the camera gives no image size; pass image_size")
    return int(size[0]), int(size[1])


def _border_px(width: int, height: int, n: int = BORDER_SAMPLES) -> np.ndarray:
    """The image's outer edge (pixel centres run 0..w-1, so the edge is at -0.5 and
    w-0.5), clockwise from the top-left, `n` pieces a side."""
    x0, y0, x1, y1 = -0.5, -0.5, width - 0.5, height - 0.5
    t = np.linspace(0.0, 1.0, n, endpoint=False)
    top = np.column_stack([x0 + t * (x1 - x0), np.full(n, y0)])
    right = np.column_stack([np.full(n, x1), y0 + t * (y1 - y0)])
    bottom = np.column_stack([x1 - t * (x1 - x0), np.full(n, y1)])
    left = np.column_stack([np.full(n, x0), y1 - t * (y1 - y0)])
    return np.vstack([top, right, bottom, left])


def _clip_halfplane(poly: np.ndarray, a: np.ndarray, c: float) -> np.ndarray:
    """Sutherland-Hodgman: the part of polygon `poly` (N, 2) where a . p + c <= 0.
    The set is convex, so a non-convex polygon is still cut right."""
    if len(poly) == 0:
        return poly
    out: list[np.ndarray] = []
    vals = poly @ a + c
    for i in range(len(poly)):
        p, q = poly[i], poly[(i + 1) % len(poly)]
        vp, vq = vals[i], vals[(i + 1) % len(poly)]
        if vp <= 0:
            out.append(p)
        if (vp <= 0) != (vq <= 0):
            s = vp / (vp - vq)
            out.append(p + s * (q - p))
    return np.array(out, dtype=np.float64).reshape(-1, 2)


def view_outline_mm(pose: TablePose, image_size=None, height_mm: float = 0.0) -> np.ndarray:
    """The image border traced onto the plane `height_mm` above the table, (N, 2) mm,
    not clipped to the table (empty when the plane is at or above the camera)."""
    w, h = _image_size(pose, image_size)
    centre = pose.camera_centre_mm
    if centre[2] - height_mm <= 0:
        return np.zeros((0, 2))
    rays = pose.camera.rays_from_pixels(_border_px(w, h))
    # A ray (x, y, 1) in the camera points down the table's z by R[:, 2] . (x, y, 1):
    # keep the border where that is below -HORIZON_EPS.
    r3 = pose.rotation[:, 2]
    rays = _clip_halfplane(rays, r3[:2], float(r3[2]) + HORIZON_EPS)
    if len(rays) < 3:
        return np.zeros((0, 2))
    return pose.table_from_rays(rays, height_mm)


def view_polygon_mm(pose: TablePose, image_size=None, height_mm: float = 0.0,
                    table: TableSpec | tuple[float, float] | None = None) -> list[tuple[float, float]]:
    """The part of the plane `height_mm` above the table that the image shows, as
    (x_mm, y_mm) points, clipped to the table's rectangle when `table` is given
    (a TableSpec or (width_mm, depth_mm)).  Empty when the camera shows none of it;
    if the clipped view falls apart in pieces, the biggest."""
    geom = view_geometry(pose, image_size, height_mm, table)
    if geom.is_empty:
        return []
    if isinstance(geom, MultiPolygon):
        geom = max(geom.geoms, key=lambda g: g.area)
    if not isinstance(geom, Polygon):
        return []
    return [(float(x), float(y)) for x, y in list(geom.exterior.coords)[:-1]]


def view_geometry(pose: TablePose, image_size=None, height_mm: float = 0.0,
                  table: TableSpec | tuple[float, float] | None = None):
    """`view_polygon_mm` as a shapely geometry (possibly empty or in pieces)."""
    outline = view_outline_mm(pose, image_size, height_mm)
    if len(outline) < 3:
        return Polygon()
    geom = Polygon(outline)
    if not geom.is_valid:
        geom = geom.buffer(0)
    if table is not None:
        w, d = _table_size(table)
        geom = geom.intersection(box(0.0, 0.0, w, d))
    return geom


def marker_side_px(pose: TablePose, x_mm: float, y_mm: float, roof_mm: float, marker_mm: float,
                   heading_deg: float = 0.0) -> float:
    """A square marker's side in pixels (the mean of its four edges, as
    vision.quality measures a detection) lying flat `roof_mm` above the table,
    centred at (x_mm, y_mm), turned by `heading_deg`."""
    return float(_marker_sides_px(pose, np.array([[x_mm, y_mm]]), roof_mm, marker_mm, heading_deg)[0])


def _marker_sides_px(pose: TablePose, xy: np.ndarray, roof_mm: float, marker_mm: float,
                     heading_deg: float = 0.0) -> np.ndarray:
    h = marker_mm / 2.0
    a = math.radians(heading_deg)
    c, s = math.cos(a), math.sin(a)
    offs = np.array([[-h, h], [h, h], [h, -h], [-h, -h]]) @ np.array([[c, s], [-s, c]])
    pts = (xy[:, None, :] + offs[None, :, :]).reshape(-1, 2)
    px = pose.image_from_table(np.column_stack([pts, np.full(len(pts), float(roof_mm))])).reshape(-1, 4, 2)
    return np.linalg.norm(px - np.roll(px, -1, axis=1), axis=-1).mean(axis=1)


@dataclass(frozen=True)
class MarkerSpot:
    """Where on the table a car's roof marker looks smallest to a camera, and how small."""

    x_mm: float
    y_mm: float
    side_px: float
    place: str            # in players' words: "the far-right corner"


def smallest_marker_px(pose: TablePose | Sequence[TablePose], table: TableSpec, car: CarSpec,
                       image_size=None) -> MarkerSpot | None:
    """Where, of the table this camera sees at the car's roof height, its roof marker
    looks smallest, and how small: the outline's points (corners and edges, where
    the view is farthest and the lens squeezes most) and a grid inside it (a lens
    that magnifies its edges has its smallest elsewhere), the marker square to the
    table or turned 45 degrees.  Points are kept three quarters of a marker inside
    the view, where a whole marker still shows.

    With several cameras (a sequence of poses, and of image sizes or None), each
    point counts at its biggest in any camera that sees it: the worst place on the
    table the cameras cover together.  None when no camera sees the table at that
    height."""
    poses = [pose] if isinstance(pose, TablePose) else list(pose)
    sizes = ([image_size] * len(poses) if image_size is None or isinstance(image_size[0], (int, np.integer))
             else list(image_size))
    inners = []
    for p, size in zip(poses, sizes):
        geom = view_geometry(p, size, car.roof_mm, table)
        inner = geom.buffer(-car.marker_mm * 0.75) if not geom.is_empty else geom
        inners.append(inner if not inner.is_empty else geom)
    union = unary_union(inners)
    if union.is_empty:
        return None
    pts = []
    for inner in inners:
        for g in getattr(inner, "geoms", [inner]):
            if isinstance(g, Polygon) and not g.is_empty:
                ring = np.asarray(g.exterior.coords)[:-1]
                pts.extend([ring, (ring + np.roll(ring, -1, axis=0)) / 2])
    x0, y0, x1, y1 = union.bounds
    gx, gy = np.meshgrid(np.linspace(x0, x1, 24), np.linspace(y0, y1, 16))
    grid = np.column_stack([gx.ravel(), gy.ravel()])
    pts.append(grid[shapely.contains_xy(union, grid[:, 0], grid[:, 1])])
    xy = np.vstack(pts)
    best = np.full(len(xy), -np.inf)
    for p, inner in zip(poses, inners):
        # Points on the view's own edge count as in it (intersects, not contains).
        inside = shapely.intersects_xy(inner.buffer(0.01), xy[:, 0], xy[:, 1])
        if not inside.any():
            continue
        sides = np.minimum(_marker_sides_px(p, xy[inside], car.roof_mm, car.marker_mm, 0.0),
                           _marker_sides_px(p, xy[inside], car.roof_mm, car.marker_mm, 45.0))
        best[inside] = np.maximum(best[inside], sides)
    ok = np.isfinite(best)
    if not ok.any():
        return None
    k = int(np.flatnonzero(ok)[np.argmin(best[ok])])
    x, y = float(xy[k, 0]), float(xy[k, 1])
    return MarkerSpot(x, y, float(best[k]), place_name(table, x, y))


def place_name(table: TableSpec | tuple[float, float], x_mm: float, y_mm: float) -> str:
    """A table point in players' words, seen from the near side: the table in thirds
    each way, "the far-right corner", "the near edge", "the middle"."""
    w, d = _table_size(table)
    col = 0 if x_mm < w / 3 else 2 if x_mm > 2 * w / 3 else 1
    row = 0 if y_mm < d / 3 else 2 if y_mm > 2 * d / 3 else 1
    side = ("left", "", "right")[col]
    end = ("near", "", "far")[row]
    if side and end:
        return f"the {end}-{side} corner"
    if side or end:
        return f"the {side or end} edge"
    return "the middle"


def anchors_in_view(pose: TablePose, table: TableSpec, image_size=None) -> tuple[int, ...]:
    """The anchors whose four corners all lie inside the view (seen whole), by id."""
    geom = view_geometry(pose, image_size, 0.0, None)
    if geom.is_empty:
        return ()
    seen = []
    for a in table.anchors:
        if all(geom.contains(Point(x, y)) for x, y in a.corners_mm()):
            seen.append(a.id)
    return tuple(seen)


def overlap_mm2(pose_a: TablePose, pose_b: TablePose, table: TableSpec, image_size_a=None,
                image_size_b=None, height_mm: float = 0.0) -> float:
    """The area of the table (mm^2) both cameras see."""
    a = view_geometry(pose_a, image_size_a, height_mm, table)
    b = view_geometry(pose_b, image_size_b, height_mm, table)
    return float(a.intersection(b).area)


@dataclass(frozen=True)
class CameraView:
    """One camera's share of the table."""

    polygon_mm: tuple[tuple[float, float], ...]
    area_mm2: float
    share: float                      # of the table's area
    anchors: tuple[int, ...]          # seen whole


@dataclass(frozen=True)
class Gap:
    """A part of the table no camera covers."""

    place: str                        # "the far-right corner"
    area_mm2: float
    bounds_mm: tuple[float, float, float, float]   # x0, y0, x1, y1


@dataclass(frozen=True)
class Coverage:
    """What several cameras cover of one table."""

    views: tuple[CameraView, ...]
    union_share: float                # of the table seen by at least one camera
    overlap_mm2: float                # seen by two or more
    overlap_share: float
    anchors_shared: tuple[int, ...]   # seen by every camera
    gaps: tuple[Gap, ...]             # biggest first


def coverage(poses: Sequence[TablePose], table: TableSpec, image_sizes: Sequence | None = None,
             height_mm: float = 0.0) -> Coverage:
    """Each camera's view of the table, their union, the area two or more see, the
    anchors all see, and the parts none sees (each named, biggest first)."""
    sizes = list(image_sizes) if image_sizes is not None else [None] * len(poses)
    if len(sizes) != len(poses):
        raise ValueError("one image size per camera")
    rect = box(0.0, 0.0, table.width_mm, table.depth_mm)
    geoms = [view_geometry(p, s, height_mm, table) for p, s in zip(poses, sizes)]
    views = []
    for p, s, g in zip(poses, sizes, geoms):
        poly = view_polygon_mm(p, s, height_mm, table)
        views.append(CameraView(tuple(poly), float(g.area), float(g.area / rect.area),
                                anchors_in_view(p, table, s)))
    union = unary_union(geoms) if geoms else Polygon()
    pairs = [geoms[i].intersection(geoms[j]) for i in range(len(geoms)) for j in range(i + 1, len(geoms))]
    multi = unary_union(pairs) if pairs else Polygon()
    shared = set(views[0].anchors) if views else set()
    for v in views[1:]:
        shared &= set(v.anchors)
    return Coverage(tuple(views), float(union.area / rect.area), float(multi.area),
                    float(multi.area / rect.area), tuple(sorted(shared)),
                    tuple(uncovered(union, table)))


def uncovered(seen, table: TableSpec) -> list[Gap]:
    """The parts of the table outside `seen` (a shapely geometry), each named by the
    third of the table it lies in, biggest first; slivers under MIN_GAP_MM2 left out."""
    rect = box(0.0, 0.0, table.width_mm, table.depth_mm)
    rest = rect.difference(seen)
    w, d = table.width_mm, table.depth_mm
    gaps: dict[str, list] = {}
    for piece in getattr(rest, "geoms", [rest]):
        if piece.is_empty or piece.area < 1e-6:
            continue
        # Name a long strip by each third it runs through (a far edge missed all along).
        for i in range(3):
            for j in range(3):
                cell = box(i * w / 3, j * d / 3, (i + 1) * w / 3, (j + 1) * d / 3)
                part = piece.intersection(cell)
                if part.area >= MIN_GAP_MM2:
                    name = place_name(table, (i + 0.5) * w / 3, (j + 0.5) * d / 3)
                    gaps.setdefault(name, []).append(part)
    out = []
    for name, parts in gaps.items():
        g = unary_union(parts)
        out.append(Gap(name, float(g.area), tuple(float(v) for v in g.bounds)))
    out.sort(key=lambda g: -g.area_mm2)
    return out

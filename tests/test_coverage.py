"""vision.coverage: a camera's view of the table, a marker's size in pixels, the anchors in
view and two cameras' overlap, against hand-computed values for cameras whose poses are
exact (vision.render.look_at / overhead_camera), and against projecting points one by one."""

from __future__ import annotations

import math

import numpy as np
import pytest
from shapely.geometry import Point, Polygon

from calibration.camera import CameraModel
from calibration.table_pose import TablePose
from calibration.tablefile import AnchorSpec, CarSpec, TableSpec
from vision.coverage import (anchors_in_view, coverage, marker_side_px, overlap_mm2, place_name,
                             smallest_marker_px, view_polygon_mm)
from vision.render import look_at, overhead_camera

W, D = 1828.8, 1219.2


def table(anchors=None, cars=()) -> TableSpec:
    spots = anchors or [(50, 50), (W - 50, 50), (W - 50, D - 50), (50, D - 50),
                        (W / 2, 45), (W / 2, D - 45), (45, D / 2), (W - 45, D / 2)]
    return TableSpec(W, D, "DICT_4X4_50", tuple(AnchorSpec(i, x, y, 60.0) for i, (x, y) in enumerate(spots)),
                     tuple(cars), source="<test table>")


def down_camera(x, y, height, f=1000.0, size=(1920, 1080), dist=None) -> TablePose:
    """A pinhole camera at (x, y, height) looking straight down, image x along table +x."""
    w, h = size
    k = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]])
    cam = CameraModel(k, np.zeros(5) if dist is None else np.asarray(dist, float), size)
    rvec, tvec = look_at((x, y, height), (x, y, 0.0))
    return TablePose(cam, rvec, tvec, (), 0.0, 0.0)


def area(points) -> float:
    return Polygon(points).area


def test_a_camera_looking_straight_down_sees_the_rectangle_its_field_of_view_cuts():
    pose = down_camera(900, 600, 1500.0)
    poly = np.array(view_polygon_mm(pose, height_mm=0.0))      # no table: not clipped
    # Half the image is 960 px (to the border's outer edge at -0.5 and 1919.5): 960 / 1000 * 1500 mm.
    assert poly[:, 0].min() == pytest.approx(900 - 1440, abs=1e-6)
    assert poly[:, 0].max() == pytest.approx(900 + 1440, abs=1e-6)
    assert poly[:, 1].min() == pytest.approx(600 - 810, abs=1e-6)
    assert poly[:, 1].max() == pytest.approx(600 + 810, abs=1e-6)
    assert area(poly) == pytest.approx(2880 * 1620, rel=1e-9)
    # A plane 40 mm up (a roof) is 40 mm nearer: the view shrinks by 1460/1500.
    roof = np.array(view_polygon_mm(pose, height_mm=40.0))
    assert roof[:, 0].max() == pytest.approx(900 + 960 / 1000 * 1460, abs=1e-6)
    # Moved 200 mm nearer and clipped to the 6 x 4 ft table: it sees [0, 1828.8] x [0, 1210].
    clipped = np.array(view_polygon_mm(down_camera(900, 400, 1500.0), table=table()))
    assert clipped[:, 0].min() == pytest.approx(0) and clipped[:, 0].max() == pytest.approx(W)
    assert clipped[:, 1].min() == pytest.approx(0) and clipped[:, 1].max() == pytest.approx(1410 - 200, abs=1e-6)
    assert area(clipped) == pytest.approx(W * 1210, rel=1e-9)


def test_a_marker_straight_below_is_its_size_times_focal_over_distance():
    pose = down_camera(900, 600, 1500.0)
    # 20 mm, 30 mm up: 20 * 1000 / 1470 px, wherever it stands (no lens distortion, no tilt).
    for x, y in [(900, 600), (100, 300), (1500, 1000)]:
        assert marker_side_px(pose, x, y, 30.0, 20.0) == pytest.approx(20_000 / 1470, rel=1e-9)
    assert marker_side_px(pose, 900, 600, 30.0, 24.0) == pytest.approx(24_000 / 1470, rel=1e-9)


def test_the_smallest_marker_is_at_the_far_corner_of_a_tilted_view_and_no_point_is_smaller():
    camera, rvec, tvec = overhead_camera(table(), 1920, 1080, height_mm=1700.0, behind_mm=150.0)
    pose = TablePose(camera, rvec, tvec, (), 0.0, 0.0)
    car = CarSpec(10, "Buggy", 75, 32, 30.0, 20.0)
    spot = smallest_marker_px(pose, table(), car)
    assert spot is not None
    assert spot.place in ("the far-left corner", "the far-right corner")
    assert spot.side_px == pytest.approx(min(marker_side_px(pose, spot.x_mm, spot.y_mm, 30.0, 20.0),
                                             marker_side_px(pose, spot.x_mm, spot.y_mm, 30.0, 20.0, 45.0)))
    # A 1080p camera 1.7 m over 6 x 4 ft: about 17 px (the figure), and smaller
    # than anywhere in the middle.
    assert 15.0 < spot.side_px < 19.0
    assert spot.side_px < marker_side_px(pose, W / 2, D / 2, 30.0, 20.0)
    # Brute force over the table: no point the camera sees (half a marker in) is smaller.
    view = Polygon(view_polygon_mm(pose, height_mm=30.0, table=table())).buffer(-15.0)
    xs, ys = np.meshgrid(np.linspace(0, W, 40), np.linspace(0, D, 30))
    for x, y in zip(xs.ravel(), ys.ravel()):
        if view.contains(Point(x, y)):
            assert marker_side_px(pose, x, y, 30.0, 20.0) >= spot.side_px - 0.05
    # The same camera at 4K: twice the pixels.
    cam4k = camera.scaled_to((3840, 2160))
    spot4k = smallest_marker_px(TablePose(cam4k, rvec, tvec, (), 0.0, 0.0), table(), car)
    assert spot4k.side_px == pytest.approx(2 * spot.side_px, rel=0.02)


def test_the_outline_agrees_with_projecting_points_through_a_barrel_lens_and_past_the_horizon():
    """A steep camera low at the near edge, with a webcam's barrel lens: the top of its
    image looks above the horizon. Each table point lies inside the outline exactly when
    it projects into the image in front of the camera."""
    k1 = -0.12
    cam = CameraModel.from_fov(1920, 1080, 70.0, np.array([k1, -0.2 * k1, 0, 0, 0]))
    rvec, tvec = look_at((W / 2, -400.0, 350.0), (W / 2, 600.0, 150.0))
    pose = TablePose(cam, rvec, tvec, (), 0.0, 0.0)
    poly = view_polygon_mm(pose, table=(20_000.0, 20_000.0))
    assert poly and all(math.isfinite(x) and math.isfinite(y) for x, y in poly)
    view = Polygon(poly)
    rng = np.random.default_rng(3)
    pts = np.column_stack([rng.uniform(0, 6000, 3000), rng.uniform(0, 8000, 3000), np.zeros(3000)])
    r = pose.rotation
    depth = (pts @ r.T + tvec)[:, 2]
    px = pose.image_from_table(pts)
    # Only points well inside the lens's field (the projection folds back far outside it).
    ray = (pts @ r.T + tvec)
    radius = np.hypot(ray[:, 0], ray[:, 1]) / np.maximum(ray[:, 2], 1e-9)
    inside_img = (depth > 0) & (px[:, 0] > -0.5) & (px[:, 0] < 1919.5) & (px[:, 1] > -0.5) & (px[:, 1] < 1079.5)
    near_border = np.zeros(len(pts), bool)
    checked = 0
    for i, p in enumerate(pts):
        if depth[i] <= 0 or radius[i] > 1.2:
            continue
        d = view.exterior.distance(Point(p[0], p[1]))
        if d < 3.0:                                # on the outline itself: either answer is right
            near_border[i] = True
            continue
        assert view.contains(Point(p[0], p[1])) == bool(inside_img[i]), (p, px[i])
        checked += 1
    assert checked > 500


def test_the_anchors_in_view_are_those_projected_whole_into_the_image():
    # A camera over the left half, low enough to miss the right anchors.
    camera, rvec, tvec = overhead_camera(table(), 1920, 1080, height_mm=1700.0, behind_mm=150.0)
    rvec, tvec = look_at((W / 4, D / 2 - 150, 1200.0), (W / 4, D / 2, 0.0))
    pose = TablePose(camera, rvec, tvec, (), 0.0, 0.0)
    seen = anchors_in_view(pose, table())
    expected = []
    for a in table().anchors:
        px = pose.image_from_table(np.array([(x, y, 0.0) for x, y in a.corners_mm()]))
        if np.all((px >= -0.5) & (px <= [1919.5, 1079.5])):
            expected.append(a.id)
    assert seen == tuple(expected)
    assert 6 in seen and not {1, 2, 7} & set(seen)


def test_two_cameras_over_the_halves_overlap_where_their_rectangles_meet():
    tab = table()
    # Each sees 1440 x 810 mm... at 1500 mm with f = 1000: 2880 x 1620 is too big; at 900 mm,
    # half-widths 864 x 486 mm, centred over each half's middle.
    left = down_camera(W / 4 + 100, D / 2, 900.0)
    right = down_camera(3 * W / 4 - 100, D / 2, 900.0)
    # Left covers x in [W/4+100-864, W/4+100+864], right [3W/4-100-864, ...]; y in [D/2-486, D/2+486].
    ox0, ox1 = 3 * W / 4 - 100 - 864, W / 4 + 100 + 864
    expected_overlap = (ox1 - ox0) * 972
    assert overlap_mm2(left, right, tab) == pytest.approx(expected_overlap, rel=1e-9)
    cov = coverage([left, right], tab)
    assert cov.overlap_mm2 == pytest.approx(expected_overlap, rel=1e-9)
    lx0 = max(0.0, W / 4 + 100 - 864)
    rx1 = min(W, 3 * W / 4 - 100 + 864)
    assert cov.union_share == pytest.approx((rx1 - lx0) * 972 / (W * D), rel=1e-9)
    # The anchors at the middle of the long edges are 45 mm from them: out of a view that
    # stops 123.6 mm short; the side ones (x = 45, y = D/2) are in the left view only.
    assert 6 in cov.views[0].anchors and 6 not in cov.views[1].anchors
    assert 7 in cov.views[1].anchors and 7 not in cov.views[0].anchors
    assert cov.anchors_shared == ()
    # The strips along the near and far edges are what no camera sees, named as players would.
    names = {g.place for g in cov.gaps}
    assert {"the near edge", "the far edge", "the near-left corner", "the far-right corner"} <= names
    assert "the middle" not in names
    assert sum(g.area_mm2 for g in cov.gaps) == pytest.approx(W * D * (1 - cov.union_share), rel=1e-6)


def test_places_are_named_in_thirds_from_the_near_side():
    assert place_name((W, D), W - 10, D - 10) == "the far-right corner"
    assert place_name((W, D), 10, 10) == "the near-left corner"
    assert place_name((W, D), W / 2, 10) == "the near edge"
    assert place_name((W, D), 10, D / 2) == "the left edge"
    assert place_name((W, D), W / 2, D / 2) == "the middle"


def test_a_camera_below_the_roofs_plane_sees_none_of_it():
    pose = down_camera(900, 600, 30.0)
    assert view_polygon_mm(pose, height_mm=40.0, table=table()) == []
    assert smallest_marker_px(pose, table(), CarSpec(10, "Buggy", 75, 32, 40.0, 20.0)) is None

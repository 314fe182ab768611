"""The locator on rendered frames: every car where it really is, at its roof height."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from calibration.camera import CameraFileError, CameraModel
from calibration.table_pose import TablePoseError
from vision.locate import Locator, heading_from_corners
from vision.render import CarTruth
from tests.conftest import SPREAD_POSES


def _errors(located, truth):
    out = {}
    for car in located.cars:
        t = truth.cars[car.id]
        d = math.hypot(car.x_mm - t.x_mm, car.y_mm - t.y_mm)
        h = (car.heading_deg - t.heading_deg + 180) % 360 - 180
        out[car.id] = (d, h)
    return out


def test_every_car_within_a_millimetre_with_the_camera_file(demo_table, renderer, spread_frame, camera_file):
    located = Locator(demo_table, CameraModel.from_yaml(camera_file)).locate(spread_frame.image)
    errors = _errors(located, spread_frame)
    assert set(errors) == {10, 11, 12, 13, 14} and located.missing == ()
    for car_id, (d_mm, h_deg) in errors.items():
        assert d_mm < 1.0, f"car {car_id} off by {d_mm:.2f} mm"
        assert abs(h_deg) < 1.5, f"car {car_id} heading off by {h_deg:.2f} degrees"
    assert located.anchors == (0, 1, 2, 3, 4, 5)
    assert located.table_pose.reprojection_px < 0.6


def test_every_car_within_a_few_millimetres_without_a_camera_file(demo_table, spread_frame):
    """The camera estimated from the anchors alone (square pixels, centred principal point)."""
    located = Locator(demo_table, None).locate(spread_frame.image)
    camera = located.table_pose.camera
    assert camera.estimated and camera.source == "estimated from the anchors"
    for car_id, (d_mm, h_deg) in _errors(located, spread_frame).items():
        assert d_mm < 3.0, f"car {car_id} off by {d_mm:.2f} mm"
        assert abs(h_deg) < 2.0
    assert len(located.cars) == 5


def test_roof_height_matters_at_the_table_edge(demo_table, spread_frame, camera_file):
    """Placing cars on the table plane instead of their roofs is off by far more than a few mm."""
    flat = dataclasses.replace(demo_table, cars=tuple(dataclasses.replace(c, roof_mm=0.0)
                                                       for c in demo_table.cars))
    located = Locator(flat, CameraModel.from_yaml(camera_file)).locate(spread_frame.image)
    worst = max(d for d, _ in _errors(located, spread_frame).values())
    assert worst > 10.0


def test_marker_offset_puts_the_footprint_centre_where_the_car_is(demo_table, renderer):
    """The War Rig's marker sits 12 mm behind its centre; the pose is the footprint's centre."""
    truth = renderer.render([CarTruth(12, 600.0, 400.0, 90.0)])
    car = Locator(demo_table, renderer.camera).locate(truth.image).cars[0]
    assert car.name == "War Rig"
    assert abs(car.x_mm - 600.0) < 0.5 and abs(car.y_mm - 400.0) < 0.5
    assert abs(car.heading_deg - 90.0) < 1.0


def test_sigmas_are_reported_and_positive(demo_table, renderer, spread_frame):
    located = Locator(demo_table, renderer.camera).locate(spread_frame.image)
    for car in located.cars:
        assert 0 < car.sigma_mm < 2 and 0 < car.sigma_deg < 3
    estimated = Locator(demo_table, None).locate(spread_frame.image)
    # An estimated camera is said plainly, with more doubt at the edges.
    assert max(c.sigma_mm for c in estimated.cars) > max(c.sigma_mm for c in located.cars)


def test_json_has_the_design_contract_keys(demo_table, renderer, spread_frame):
    out = Locator(demo_table, renderer.camera).locate(spread_frame.image, frame=7).to_json()
    assert out["frame"] == 7 and out["missing"] == [] and out["anchors"] == [0, 1, 2, 3, 4, 5]
    assert set(out["cars"][0]) >= {"id", "name", "x_mm", "y_mm", "heading_deg", "sigma_mm", "sigma_deg"}


def _cover(image, corners_px, value=90):
    """Paint over markers, as a hand or a mug would."""
    import cv2
    out = image.copy()
    for c in corners_px:
        centre = c.mean(axis=0)
        cv2.fillConvexPoly(out, np.round(centre + 1.6 * (c - centre)).astype(np.int32), (value, value, value))
    return out


def test_too_few_anchors_names_the_missing_ones(demo_table, renderer, spread_frame):
    hidden = _cover(spread_frame.image, [spread_frame.anchor_corners_px[i] for i in (0, 1, 2, 4)])
    located = Locator(demo_table, renderer.camera).locate(hidden)
    assert located.table_pose is None and located.cars == ()
    assert "missing 0, 1, 2, 4" in located.error and "saw 3, 5" in located.error


def test_a_covered_anchor_or_two_still_finds_the_table(demo_table, renderer, spread_frame):
    hidden = _cover(spread_frame.image, [spread_frame.anchor_corners_px[i] for i in (0, 2)])
    located = Locator(demo_table, renderer.camera).locate(hidden)
    assert located.anchors == (1, 3, 4, 5)
    assert max(d for d, _ in _errors(located, spread_frame).values()) < 1.0


def test_the_last_table_pose_is_kept_when_anchors_are_covered(demo_table, renderer, spread_frame):
    locator = Locator(demo_table, renderer.camera)
    locator.locate(spread_frame.image)
    hidden = _cover(spread_frame.image, list(spread_frame.anchor_corners_px.values()))
    located = locator.locate(hidden)
    assert "using the table's last known pose" in located.error
    assert len(located.cars) == 5


def test_a_marker_seen_twice_is_trusted_nowhere(demo_table, renderer):
    frame = renderer.render([CarTruth(10, 300.0, 300.0, 0.0)])
    image = frame.image.copy()
    c = frame.car_corners_px[10]
    x0, y0 = np.floor(c.min(axis=0)).astype(int) - 8
    x1, y1 = np.ceil(c.max(axis=0)).astype(int) + 8
    image[y0 + 300:y1 + 300, x0 + 200:x1 + 200] = image[y0:y1, x0:x1]   # a second copy of the roof
    located = Locator(demo_table, renderer.camera).locate(image)
    assert located.duplicate_ids == (10,)
    assert located.cars == () and 10 in located.missing


def test_a_camera_file_of_the_wrong_size_is_refused(demo_table, renderer, spread_frame):
    k = renderer.camera.camera_matrix / 2
    k[2, 2] = 1
    small = CameraModel(k, renderer.camera.dist_coeffs, (960, 540), source="half.yml")
    with pytest.raises(CameraFileError, match="half.yml: calibrated for 960 x 540 pixels, but the frame is 1920 x 1080"):
        Locator(demo_table, small).locate(spread_frame.image)


def test_heading_uses_the_whole_marker():
    square = np.array([[-1, 1], [1, 1], [1, -1], [-1, -1]], float)
    assert heading_from_corners(square) == pytest.approx(90.0)
    rotated = square @ np.array([[0, 1], [-1, 0]]).T      # turned a quarter right
    assert heading_from_corners(rotated) == pytest.approx(0.0)
    # Noise on one edge is halved by the other axis.
    nudged = square.copy()
    nudged[0] += [0, 0.1]
    assert abs(heading_from_corners(nudged) - 90.0) < math.degrees(math.atan(0.1 / 2)) / 1.5


def test_no_anchors_at_all_is_a_clear_error(demo_table):
    from calibration.table_pose import solve_table_pose
    with pytest.raises(TablePoseError, match="saw none; missing 0, 1, 2, 3, 4, 5"):
        solve_table_pose({}, demo_table, None, image_size=(1920, 1080))


def test_a_table_file_with_the_wrong_dictionary_says_which_one_the_frame_shows(demo_table, renderer, spread_frame):
    wrong = dataclasses.replace(demo_table, dictionary="DICT_6X6_50")
    located = Locator(wrong, renderer.camera).locate(spread_frame.image)
    assert located.table_pose is None and located.cars == ()
    assert "shows no DICT_6X6_50 markers but 11 DICT_4X4 markers" in located.error
    assert "DICT_4X4_50" in located.error


def test_an_unreadable_frame_is_a_clear_error(demo_table):
    from vision.detect import DetectionError
    with pytest.raises(DetectionError, match="empty or could not be decoded"):
        Locator(demo_table).locate(np.zeros((0, 0, 3), np.uint8))

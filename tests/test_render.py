"""The synthetic table against OpenCV's own projection: what it draws is where
cv2.projectPoints says it is, so rendered frames can judge the locator."""

from __future__ import annotations

import math

import numpy as np
import pytest

from vision.detect import MarkerDetector
from vision.render import CarTruth, RenderOptions, TableRenderer
from tests.conftest import SPREAD_POSES


@pytest.fixture(scope="module")
def clean(renderer, demo_table):
    """The same camera with no blur and no noise: every pixel is the scene's own."""
    r = TableRenderer(demo_table, renderer.camera, renderer.rvec, renderer.tvec,
                      RenderOptions(noise_sigma=0, blur_sigma=0, table_texture=0, supersample=4))
    return r, r.render(SPREAD_POSES)


def _cell_centres_mm(corners_xyz: np.ndarray, cells: int) -> np.ndarray:
    """Centres of a marker's cells (row-major, from corner 0), by bilinear interpolation."""
    c0, c1, c2, c3 = corners_xyz
    out = []
    for row in range(cells):
        v = (row + 0.5) / cells
        for col in range(cells):
            u = (col + 0.5) / cells
            out.append((1 - v) * ((1 - u) * c0 + u * c1) + v * ((1 - u) * c3 + u * c2))
    return np.array(out)


def test_every_cell_of_every_marker_is_drawn_where_opencv_projects_it(clean, demo_table):
    r, frame = clean
    gray = frame.image.mean(axis=2)
    cells = r.sticker(0, 1.0).cells
    checked = 0
    markers = [(a.id, a.size_mm, np.array([(x, y, 0.0) for x, y in a.corners_mm()])) for a in demo_table.anchors]
    markers += [(t.id, demo_table.car(t.id).marker_mm, r.car_marker_corners_mm(demo_table.car(t.id), t))
                for t in SPREAD_POSES]
    for marker_id, side_mm, corners in markers:
        bits = r.sticker(marker_id, side_mm).bits.reshape(-1)
        px = r.project(_cell_centres_mm(corners, cells))
        values = gray[np.round(px[:, 1]).astype(int), np.round(px[:, 0]).astype(int)]
        # Cell centres are several pixels from any edge: clearly black or white.
        assert np.all(values[bits] > 200), f"marker {marker_id}: a white cell drawn dark"
        assert np.all(values[~bits] < 60), f"marker {marker_id}: a black cell drawn light"
        checked += len(bits)
    assert checked == 11 * 36


def test_marker_outlines_land_on_the_projected_corners(clean, demo_table):
    """Just inside each projected edge is black, just outside (the white margin) is white."""
    r, frame = clean
    gray = frame.image.mean(axis=2)
    for truth in SPREAD_POSES:
        spec = demo_table.car(truth.id)
        corners = r.car_marker_corners_mm(spec, truth)
        centre = corners.mean(axis=0)
        for k in range(4):
            mid = (corners[k] + corners[(k + 1) % 4]) / 2
            outward = (mid - centre) / np.linalg.norm(mid - centre)
            # 1.2 px either side of the edge (pixels are sampled by rounding, so
            # at least 0.7 px clear of it), converted to mm at this point.
            step_mm = 1.2 * 1100 / r.camera.focal_px
            inside, outside = r.project(np.array([mid - step_mm * outward, mid + step_mm * outward]))
            assert gray[int(round(inside[1])), int(round(inside[0]))] < 110
            assert gray[int(round(outside[1])), int(round(outside[0]))] > 150


def test_detected_marker_centres_match_the_ground_truth(spread_frame):
    """OpenCV's own detector on a noisy, blurred frame finds every marker, and the
    centre of its corners sits where projectPoints puts the true corners."""
    truth = {**spread_frame.anchor_corners_px, **spread_frame.car_corners_px}
    found = {d.id: d.corners_px for d in MarkerDetector().detect(spread_frame.image)}
    assert set(found) == set(truth)
    for marker_id, corners in found.items():
        offset = np.linalg.norm(corners.mean(axis=0) - truth[marker_id].mean(axis=0))
        assert offset < 0.25, f"marker {marker_id} centre off by {offset:.2f} px"
        assert np.max(np.linalg.norm(corners - truth[marker_id], axis=1)) < 0.8


def test_roof_markers_stand_at_roof_height(renderer, demo_table):
    """The same car drawn at the table's edge: its marker's image is displaced
    outwards from the camera's nadir by the roof's parallax, as projection says."""
    spec = demo_table.car(12)
    truth = CarTruth(12, 1100.0, 700.0, 0.0)
    at_roof = renderer.project(renderer.car_marker_corners_mm(spec, truth)).mean(axis=0)
    on_table = renderer.project(renderer.car_marker_corners_mm(spec, truth) * [1, 1, 0]).mean(axis=0)
    detected = {d.id: d for d in MarkerDetector().detect(renderer.render([truth]).image)}[12]
    assert np.linalg.norm(detected.centre_px - at_roof) < 0.35
    assert np.linalg.norm(at_roof - on_table) > 15     # pixels: parallax is large here


def test_ground_truth_comes_back_with_the_frame(spread_frame):
    assert set(spread_frame.cars) == {10, 11, 12, 13, 14}
    assert spread_frame.visible_cars == (10, 11, 12, 13, 14)
    assert spread_frame.image.shape == (1080, 1920, 3)
    assert spread_frame.image.dtype == np.uint8


def test_noise_blur_light_and_jpeg_change_the_pixels_not_the_truth(demo_table, renderer):
    hard = TableRenderer(demo_table, renderer.camera, renderer.rvec, renderer.tvec,
                         RenderOptions(noise_sigma=4, blur_sigma=1.2, light_gradient=0.4, jpeg_quality=70))
    a, b = hard.render(SPREAD_POSES), renderer.render(SPREAD_POSES)
    assert np.abs(a.image.astype(int) - b.image.astype(int)).mean() > 5
    for k in a.car_corners_px:
        assert np.allclose(a.car_corners_px[k], b.car_corners_px[k])
    assert len(MarkerDetector().detect(a.image)) == 11


def test_turned_anchors_are_rendered_turned_and_the_table_is_found_from_them(demo_table):
    """A table file's `rotation_deg` turns an anchor on the rendered table as on a real one: the
    pipeline finds the table from the turned anchors and puts a car where it stands; the same
    frame read with the anchors said to be upright does not fit."""
    import dataclasses

    from vision.pipeline import TablePipeline
    from vision.render import CarTruth, RenderOptions, TableRenderer

    turns = (30.0, -45.0, 90.0, 10.0)
    anchors = tuple(dataclasses.replace(a, rotation_deg=turns[k % len(turns)])
                    for k, a in enumerate(demo_table.anchors))
    turned = dataclasses.replace(demo_table, anchors=anchors)
    renderer = TableRenderer.overhead(turned, options=RenderOptions(), seed=5)
    car = demo_table.cars[0]
    frame = renderer.render((CarTruth(car.id, 400.0, 300.0, 20.0),), np.random.default_rng(5)).image
    located = TablePipeline(turned, renderer.camera).process(frame, 0, 0.0)
    seen = {c.id: c for c in located.cars if not c.stale}
    assert car.id in seen, located
    assert math.hypot(seen[car.id].x_mm - 400.0, seen[car.id].y_mm - 300.0) < 1.0
    upright = TablePipeline(demo_table, renderer.camera).process(frame, 0, 0.0)
    wrong = {c.id: c for c in upright.cars if not c.stale}
    assert car.id not in wrong or math.hypot(wrong[car.id].x_mm - 400.0, wrong[car.id].y_mm - 300.0) > 1.0

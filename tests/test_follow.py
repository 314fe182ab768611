"""Following still markers without a search (MarkerDetector.follow): a marker is
followed only where it still stands, whole, with its own id; anything else is
left to the search, so following can make the pipeline faster but never wrong."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from vision.detect import MarkerDetector, to_gray
from vision.pipeline import TablePipeline
from vision.render import CarTruth

CARS = [CarTruth(10, 300.0, 250.0, 20.0), CarTruth(11, 700.0, 400.0, -75.0), CarTruth(12, 1000.0, 250.0, 170.0)]


@pytest.fixture
def seen(renderer):
    """A frame of three cars and the detector's own reading of it."""
    image = renderer.render(CARS, np.random.default_rng(3)).image
    detector = MarkerDetector()
    return detector, image, {d.id: d for d in detector.detect(image)}


def test_a_still_marker_is_followed_where_the_search_finds_it(seen, renderer):
    detector, _, first = seen
    # The next frame: the same table, fresh sensor noise.
    image = renderer.render(CARS, np.random.default_rng(4)).image
    searched = {d.id: d for d in detector.detect(image)}
    ids = sorted(first)
    followed, _ = detector.follow(image, [(i, first[i].corners_px) for i in ids])
    assert all(f is not None for f in followed), "every still marker and anchor is followed"
    for i, f in zip(ids, followed):
        assert f.id == i
        assert np.abs(f.corners_px - searched[i].corners_px).max() < 0.1
        assert f.edge_sigma_px is not None


def test_a_marker_swapped_for_another_in_the_same_place_is_not_followed(seen, renderer):
    detector, _, first = seen
    swapped = [CarTruth(11, 300.0, 250.0, 20.0)]          # car 11 set down where car 10 stood
    image = renderer.render(swapped, np.random.default_rng(5)).image
    followed, _ = detector.follow(image, [(10, first[10].corners_px)])
    assert followed == [None]


def test_a_marker_moved_a_few_pixels_is_left_to_the_search(seen, renderer):
    detector, _, first = seen
    moved = [CarTruth(10, 306.0, 250.0, 20.0)]             # 6 mm: several pixels
    image = renderer.render(moved, np.random.default_rng(6)).image
    followed, _ = detector.follow(image, [(10, first[10].corners_px)])
    assert followed == [None]


def test_a_marker_half_covered_is_not_followed(seen):
    detector, image, first = seen
    covered = image.copy()
    c = first[10].corners_px
    centre = c.mean(axis=0)
    # A fingertip over half the marker: a skin-toned blob from its centre outwards.
    cv2.circle(covered, tuple(int(v) for v in (c[1] + centre) / 2), int(first[10].side_px * 0.45),
               (120, 150, 200), -1)
    followed, _ = detector.follow(covered, [(10, c)])
    assert followed == [None]


def test_an_id_the_dictionary_lacks_is_never_followed(seen):
    detector, image, first = seen
    followed, _ = detector.follow(image, [(4000, first[10].corners_px)])
    assert followed == [None]


def test_the_pipeline_follows_still_cars_and_gives_the_poses_a_full_scan_gives(demo_table, renderer):
    followed = TablePipeline(demo_table, renderer.camera, full_scan_every=50)
    scanned = TablePipeline(demo_table, renderer.camera, full_scan_every=1)
    rng = np.random.default_rng(9)
    for i in range(8):
        image = renderer.render(CARS, rng).image
        a = {c.id: c for c in followed.process(image, i, i / 30).cars}
        b = {c.id: c for c in scanned.process(image, i, i / 30).cars}
    assert sorted(a) == sorted(b) == [10, 11, 12]
    for i in a:
        assert math.hypot(a[i].x_mm - b[i].x_mm, a[i].y_mm - b[i].y_mm) < 0.02
        assert abs(a[i].heading_deg - b[i].heading_deg) < 0.05
        assert a[i].seen and not a[i].stale


def test_a_car_swapped_under_the_camera_is_seen_as_the_new_car_at_once(demo_table, renderer):
    pipeline = TablePipeline(demo_table, renderer.camera, full_scan_every=50)
    rng = np.random.default_rng(10)
    for i in range(4):
        pipeline.process(renderer.render(CARS, rng).image, i, i / 30)
    # Car 10 lifted away and car 13 put down in its place, between two frames.
    swapped = [CarTruth(13, 300.0, 250.0, 20.0)] + CARS[1:]
    tracked = pipeline.process(renderer.render(swapped, rng).image, 4, 4 / 30)
    assert not tracked.full_scan
    cars = {c.id: c for c in tracked.cars}
    assert 13 in cars and cars[13].seen
    assert math.hypot(cars[13].x_mm - 300.0, cars[13].y_mm - 250.0) < 0.5
    assert 10 not in cars or not cars[10].seen


def test_following_uses_the_grey_frame_given(seen, renderer):
    detector, image, first = seen
    gray = to_gray(image)
    a, _ = detector.follow(image, [(10, first[10].corners_px)])
    b, _ = detector.follow(gray, [(10, first[10].corners_px)])
    assert np.array_equal(a[0].corners_px, b[0].corners_px)


def test_an_outline_holding_another_ids_cells_is_not_followed(seen):
    detector, image, first = seen
    # The same outline, the same image: only the cells can tell 10 from 11 or
    # from marker 10 turned a quarter (its corners listed from the next one).
    c = first[10].corners_px
    followed, _ = detector.follow(image, [(11, c), (10, np.roll(c, 1, axis=0)), (10, c)])
    assert followed[0] is None and followed[1] is None
    assert followed[2] is not None and followed[2].id == 10

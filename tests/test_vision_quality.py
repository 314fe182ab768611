"""The marker size and sharpness check (vision/quality.py): a sharp rendered table is
ok; a blurred one is called soft with focus advice; small roof markers are called
small with bigger-marker / lower-camera advice; no markers at all on a soft frame
is put down to the blur; a real photograph gets a sane verdict; `companion locate`
carries the check and says it on stderr."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.detect import MarkerDetector, to_gray
from vision.locate import Locator, expected_roof_side_px
from vision.quality import (BLUR_OK_PER_CELL, SIDE_OK_PX, assess, edge_blur_px, global_blur_px)
from vision.render import CarTruth, RenderOptions, TableRenderer

REPO = Path(__file__).resolve().parents[1]
REAL_BOARD = REPO / "tests" / "data" / "realdata" / "aruco-testdata" / "board_image-test.png"
POSES = (CarTruth(10, 300.0, 250.0, 20.0), CarTruth(11, 700.0, 300.0, 100.0),
         CarTruth(12, 950.0, 600.0, -60.0), CarTruth(13, 400.0, 600.0, 170.0))


def _judge(table, blur_sigma: float, seed: int = 0):
    r = TableRenderer.overhead(table, RenderOptions(blur_sigma=blur_sigma, jpeg_quality=85), seed=1)
    frame = r.render(POSES, np.random.default_rng(seed))
    located = Locator(table, r.camera).locate(frame.image)
    q = assess(to_gray(frame.image), located.detections, 6, table.car_ids,
               expected_roof_side_px(located.table_pose, table))
    return q, frame, located


def test_a_sharp_table_is_ok_and_its_blur_is_measured(demo_table):
    q, _, located = _judge(demo_table, 0.6)
    assert len(located.cars) == 4
    out = q.to_json()
    assert out["verdict"] == "ok" and out["advice"] == []
    # The renderer's blur is 0.6 px; the estimate is within 0.15 px of it.
    assert out["edge_blur_px"] == pytest.approx(0.6, abs=0.15)
    assert 19 < out["marker_side_px"]["min"] < 27        # 20 mm roofs at 1080p


@pytest.mark.parametrize("blur", [1.0, 2.0])
def test_edge_blur_follows_the_true_blur(demo_table, blur):
    r = TableRenderer.overhead(demo_table, RenderOptions(blur_sigma=blur), seed=1)
    frame = r.render([], np.random.default_rng(0))
    corners = np.array(list(frame.anchor_corners_px.values()))
    est = edge_blur_px(to_gray(frame.image), corners, 6)
    assert np.nanmedian(est) == pytest.approx(blur, rel=0.15)


def test_a_blurred_table_is_soft_and_the_advice_is_to_focus(demo_table):
    q, _, located = _judge(demo_table, 2.0)
    out = q.to_json()
    assert out["verdict"] == "poor", out
    assert out["edge_blur_px"] == pytest.approx(2.0, rel=0.15)
    soft = [a for a in out["advice"] if "soft" in a]
    assert soft and "focus the camera" in soft[0]
    # No size complaint: the roofs are big enough, only soft.
    assert not any("bigger" in a for a in out["advice"])


def test_small_roof_markers_are_named_with_bigger_or_lower_advice(demo_table):
    small = dataclasses.replace(demo_table, cars=tuple(dataclasses.replace(c, marker_mm=13.0)
                                                       for c in demo_table.cars))
    q, _, located = _judge(small, 0.6)
    out = q.to_json()
    assert located.cars, "13 mm roofs are still found on a sharp frame"
    assert out["verdict"] in ("marginal", "poor")
    assert out["marker_side_px"]["min"] < SIDE_OK_PX
    size = [a for a in out["advice"] if "px across" in a]
    assert size and "bigger" in size[0] and "lower the camera" in size[0]
    assert size[0].startswith("Roof markers are ")


def test_no_roof_found_on_a_soft_frame_judges_the_roofs_from_the_table_file(demo_table):
    q, _, located = _judge(demo_table, 2.5)
    assert not located.cars and located.table_pose is not None   # only the big anchors survive
    out = q.to_json()
    assert out["verdict"] == "poor"
    assert out["expected_car_side_px"] == pytest.approx(21, abs=3)
    assert any("soft" in a for a in out["advice"])


def test_no_marker_at_all_on_a_very_soft_frame_is_put_down_to_the_blur(demo_table):
    r = TableRenderer.overhead(demo_table, RenderOptions(blur_sigma=0.6), seed=1)
    sharp = to_gray(r.render([], np.random.default_rng(0)).image)
    soft = cv2.GaussianBlur(sharp, (0, 0), 7.0)   # even the 60 mm anchors are lost
    assert MarkerDetector(demo_table.dictionary).detect(soft) == []
    out = assess(soft, [], 6).to_json()
    assert out["verdict"] == "poor" and "too soft" in out["advice"][0]
    # The same frame sharp, with its markers hidden from the check, is not called soft.
    assert global_blur_px(sharp) < 1.2
    assert assess(sharp, [], 6).to_json()["verdict"] == "unknown"


def test_a_real_photograph_gets_a_sane_verdict():
    image = cv2.imread(str(REAL_BOARD))
    detector = MarkerDetector("DICT_ARUCO_ORIGINAL")
    found = detector.detect(image)
    assert len(found) == 24
    out = assess(to_gray(image), found, detector.cells).to_json()
    # 39-50 px markers, edges about 0.9 px soft: reads well.
    assert out["verdict"] == "ok", out
    assert 0.4 < out["edge_blur_px"] < 1.4
    # The same photo at a third of its size: 13-17 px markers, blur a third of a cell.
    small = cv2.resize(image, None, fx=1 / 3, fy=1 / 3, interpolation=cv2.INTER_AREA)
    found = detector.detect(small)
    out = assess(to_gray(small), found, detector.cells).to_json()
    assert found and out["verdict"] in ("marginal", "poor")
    assert any("bigger" in a for a in out["advice"])


def test_locate_reports_the_check_and_warns_on_stderr(demo_table, tmp_path):
    table_file = REPO / "vision" / "data" / "demo_table.toml"
    _, frame, _ = _judge(demo_table, 2.0)
    path = tmp_path / "soft.png"
    cv2.imwrite(str(path), frame.image)
    run = subprocess.run([sys.executable, "-m", "companion", "locate", str(path), "--table", str(table_file)],
                         capture_output=True, text=True, cwd=REPO, timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["quality"]["verdict"] == "poor"
    assert "focus the camera" in run.stderr
    assert BLUR_OK_PER_CELL < out["quality"]["edge_blur_px"] / out["quality"]["cell_px"]

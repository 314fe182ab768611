"""The setup check (vision.locate.check_setup): an anchor whose table-file position
is 83 mm off is named with its distance, by the pose the other anchors give; a
correct file says nothing; a camera file from another camera of the same size
(focal 1.3 times, or strong wrong distortion) is said not to fit.  `companion
locate` keeps exit 0 and its JSON contract, adds "setup", and warns on stderr."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from vision.locate import ANCHOR_OFF_MM, Locator, check_setup
from vision.render import CarTruth

REPO = Path(__file__).resolve().parents[1]
TABLE_FILE = REPO / "vision" / "data" / "demo_table.toml"
POSES = (CarTruth(10, 300.0, 250.0, 20.0), CarTruth(11, 700.0, 300.0, 100.0))


@pytest.fixture(scope="module")
def frame(renderer):
    return renderer.render(POSES, np.random.default_rng(5))


def moved_anchor(table, anchor_id: int, dx_mm: float):
    return dataclasses.replace(table, anchors=tuple(
        dataclasses.replace(a, x_mm=a.x_mm + dx_mm) if a.id == anchor_id else a for a in table.anchors))


@pytest.mark.parametrize("with_camera_file", [True, False])
def test_an_anchor_83_mm_off_in_the_table_file_is_named_with_its_distance(demo_table, renderer, frame,
                                                                          with_camera_file):
    table = moved_anchor(demo_table, 3, 83.0)
    camera = renderer.camera if with_camera_file else None
    located = Locator(table, camera).locate(frame.image)
    check = check_setup(located, table, camera)
    by_id = {a.id: a for a in check.anchors}
    assert by_id[3].off_mm == pytest.approx(83.0, abs=2.0)
    # Seen where it really lies (x = 50), not where the file says (133).
    assert by_id[3].seen_x_mm == pytest.approx(50.0, abs=2.0)
    assert all(a.off_mm < ANCHOR_OFF_MM for a in check.anchors if a.id != 3)
    assert len(check.warnings) == 1
    assert check.warnings[0].startswith("anchor 3 is seen 83 mm from where the table file puts it")
    assert "measure it again or fix the table file" in check.warnings[0]


def test_a_correct_table_file_and_camera_file_give_no_warning(demo_table, renderer, frame):
    located = Locator(demo_table, renderer.camera).locate(frame.image)
    check = check_setup(located, demo_table, renderer.camera)
    assert check.warnings == ()
    assert len(check.anchors) == 6 and max(a.off_mm for a in check.anchors) < 0.5
    assert check.camera_file_px < 2 * check.camera_estimated_px


def _other_camera(cam: CameraModel, how: str) -> CameraModel:
    if how == "focal":
        k = cam.camera_matrix.copy()
        k[0, 0] *= 1.3
        k[1, 1] *= 1.3
        return CameraModel(k, cam.dist_coeffs, cam.image_size, source="another webcam's file")
    return CameraModel(cam.camera_matrix, np.array([-0.3, 0.1, 0.0, 0.0, 0.0]), cam.image_size,
                       source="another webcam's file")


@pytest.mark.parametrize("how", ["focal", "distortion"])
def test_a_camera_file_from_another_camera_of_the_same_size_is_said_not_to_fit(demo_table, renderer,
                                                                               frame, how):
    camera = _other_camera(renderer.camera, how)
    located = Locator(demo_table, camera).locate(frame.image)
    check = check_setup(located, demo_table, camera)
    assert len(check.warnings) == 1, check.warnings
    assert "camera file (another webcam's file) does not fit this camera" in check.warnings[0]
    # It is the lens, not the anchors: none is named.
    assert not any(w.startswith("anchor ") for w in check.warnings)
    assert check.camera_file_px > 5 * check.camera_estimated_px


def test_too_few_anchors_for_a_check_say_nothing(demo_table, renderer, frame):
    located = Locator(demo_table, renderer.camera).locate(frame.image)
    few = dataclasses.replace(located, anchors=located.anchors[:3])
    assert check_setup(few, demo_table, renderer.camera).anchors == ()


def _locate(path, table, *more):
    return subprocess.run([sys.executable, "-m", "companion", "locate", str(path), "--table", str(table), *more],
                          capture_output=True, text=True, cwd=REPO, timeout=120)


def test_locate_names_the_anchor_exits_0_and_keeps_its_contract(frame, tmp_path, camera_file):
    image = tmp_path / "table.png"
    cv2.imwrite(str(image), frame.image)
    text = TABLE_FILE.read_text(encoding="utf-8").replace("id = 3\nx_mm = 50.0", "id = 3\nx_mm = 133.0")
    assert "x_mm = 133.0" in text
    table = tmp_path / "moved.toml"
    table.write_text(text, encoding="utf-8")
    run = _locate(image, table, "--camera", str(camera_file))
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert {"frame", "cars", "missing", "anchors"} <= set(out)
    assert [a["id"] for a in out["setup"]["anchors"]][0] == 3
    assert out["setup"]["anchors"][0]["off_mm"] == pytest.approx(83, abs=2)
    assert "warning: anchor 3 is seen 83 mm from where the table file puts it" in run.stderr
    # The right file: no warning at all.
    run = _locate(image, TABLE_FILE, "--camera", str(camera_file))
    assert run.returncode == 0 and "warning" not in run.stderr, run.stderr
    assert json.loads(run.stdout)["setup"]["warnings"] == []

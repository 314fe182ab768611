"""The camera file: OpenCV's calibration YAML, read and written, with clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from calibration.camera import CameraFileError, CameraModel

OPENCV_SAMPLE = """%YAML:1.0
---
calibration_time: "Sat 21 Nov 2026"
image_width: 1280
image_height: 720
flags: 0
camera_matrix: !!opencv-matrix
   rows: 3
   cols: 3
   dt: d
   data: [ 912.5, 0., 639.5, 0., 913.1, 359.5, 0., 0., 1. ]
distortion_coefficients: !!opencv-matrix
   rows: 5
   cols: 1
   dt: d
   data: [ -0.21, 0.07, 0.0005, -0.0003, -0.01 ]
avg_reprojection_error: 0.31
"""


def test_reads_yaml_as_opencv_samples_write_it(tmp_path):
    path = tmp_path / "cam.yml"
    path.write_text(OPENCV_SAMPLE)
    cam = CameraModel.from_yaml(path)
    assert cam.image_size == (1280, 720)
    assert cam.camera_matrix[0, 0] == 912.5 and cam.camera_matrix[1, 2] == 359.5
    assert cam.dist_coeffs.tolist() == [-0.21, 0.07, 0.0005, -0.0003, -0.01]
    assert not cam.estimated


def test_round_trip(tmp_path, renderer):
    path = tmp_path / "out" / "cam.yml"
    renderer.camera.to_yaml(path, avg_reprojection_error=0.25)
    back = CameraModel.from_yaml(path)
    assert np.allclose(back.camera_matrix, renderer.camera.camera_matrix)
    assert np.allclose(back.dist_coeffs, renderer.camera.dist_coeffs)
    assert back.image_size == renderer.camera.image_size
    assert path.read_text().startswith("%YAML")   # OpenCV 4 writes %YAML:1.0, OpenCV 5 %YAML 1.2


@pytest.mark.parametrize("text, message", [
    ("%YAML:1.0\n---\nimage_width: 10\n", "missing 'camera_matrix'"),
    (OPENCV_SAMPLE.replace("image_width: 1280\n", ""), "missing 'image_width'"),
    (OPENCV_SAMPLE.replace("rows: 5", "rows: 3").replace("-0.21, 0.07, 0.0005, -0.0003, -0.01", "1, 2, 3"),
     "must hold 4, 5, 8, 12 or 14 numbers, not 3"),
    (OPENCV_SAMPLE.replace("data: [ 912.5", "data: [ -912.5"), "no positive focal length"),
    ("%YAML:1.0\n---\ncamera_matrix: [1, 2\n", "not a readable OpenCV calibration file"),
    ("this is not yaml at all: [", "not a readable OpenCV calibration file"),
])
def test_bad_camera_files_are_named(tmp_path, text, message):
    path = tmp_path / "bad.yml"
    path.write_text(text)
    with pytest.raises(CameraFileError) as caught:
        CameraModel.from_yaml(path)
    assert str(path) in str(caught.value) and message in str(caught.value)


def test_missing_camera_file(tmp_path):
    with pytest.raises(CameraFileError, match="no such camera file"):
        CameraModel.from_yaml(tmp_path / "none.yml")

"""Detection and calibration on real photographs from OpenCV's ArUco tutorials,
checked against what their authors published (realdata/opencv-tutorials/expected.json).

Corner order: the published corners are in OpenCV's own order, which is the
marker's order, not the image's: corner 0 is the marker's top-left as the
marker reads, then clockwise around the marker.  On a turned marker corner 0
is wherever that corner went: marker 62 lies upside down in the photo, so its
corner 0 is the image's bottom-right one, and marker 124 is turned a quarter,
so its corner 0 is the image's top-right one.

Tolerance: the published corners are whole pixels from OpenCV's detector
without corner refinement, which reproduces them within OpenCV's own 1 px.
The project's detector refines corners to sub-pixel, so against those
rounded corners it gets 1 px plus their half-pixel rounding.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from bench.realdata import contour_convention
from calibration.camera import CameraFileError, CameraModel
from calibration.charuco import STILLS_NEW_ANGLE_DEG, BoardFinder, CharucoBoardSpec, ViewCollector
from vision.detect import MarkerDetector

REALDATA = Path(__file__).resolve().parents[1].parent / "shared" / "realdata"
TUTORIALS = REALDATA / "opencv-tutorials"

pytestmark = pytest.mark.skipif(
    not TUTORIALS.is_dir(),
    reason=f"the real photographs are not here ({TUTORIALS} is absent); they live in the shared "
           f"folder beside the repository")


@pytest.fixture(scope="module")
def expected() -> dict:
    return json.loads((TUTORIALS / "expected.json").read_text())


def image(name: str) -> np.ndarray:
    img = cv2.imread(str(TUTORIALS / name), cv2.IMREAD_COLOR)
    assert img is not None, f"{name} is not readable"
    return img


def board_spec(published: dict, dictionary: str) -> CharucoBoardSpec:
    # The tutorial gives the board in metres; the project works in millimetres.
    return CharucoBoardSpec(published["squares_x"], published["squares_y"],
                            published["square_m"] * 1000.0, published["marker_m"] * 1000.0,
                            dictionary)


# --- single markers ---------------------------------------------------------------


def unrefined_detector(dictionary: str) -> cv2.aruco.ArucoDetector:
    """OpenCV's defaults, without corner refinement: how the published corners were made."""
    return cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary)),
                                   cv2.aruco.DetectorParameters())


def test_published_single_marker_corners_reproduced_as_opencv_made_them(expected):
    truth = expected["singlemarkersoriginal.jpg"]
    corners, ids, _ = unrefined_detector(truth["dictionary"]).detectMarkers(
        image("singlemarkersoriginal.jpg"))
    found = {int(i): c.reshape(4, 2) for c, i in zip(corners, ids.ravel())}
    assert sorted(found) == sorted(int(i) for i in truth["corners"])
    for marker_id, published in truth["corners"].items():
        # Per coordinate, 1 px, as OpenCV's test_aruco_tutorial.cpp checks them.
        error_px = np.abs(found[int(marker_id)] - np.asarray(published, float)).max()
        assert error_px <= 1.0, f"marker {marker_id}: a corner is {error_px:.2f} px off"


def test_project_detector_finds_every_published_marker_at_its_corners(expected):
    truth = expected["singlemarkersoriginal.jpg"]
    found = {d.id: d.corners_px for d in MarkerDetector(truth["dictionary"]).detect(
        image("singlemarkersoriginal.jpg"))}
    assert sorted(found) == sorted(int(i) for i in truth["corners"])
    errors_px = np.vstack([found[int(i)] - np.asarray(c, float) for i, c in truth["corners"].items()])
    # Our corners are sub-pixel, the published ones whole pixels: OpenCV's 1 px
    # plus the published corners' own rounding (half a pixel) bounds each one.
    worst_px = np.abs(errors_px).max()
    assert worst_px <= 1.5, f"a corner is {worst_px:.2f} px from the published one"
    rms_px = float(np.sqrt((errors_px ** 2).sum(axis=1).mean()))
    assert rms_px <= 0.75, f"corners are {rms_px:.2f} px RMS from the published ones"


def test_project_corners_within_1px_in_the_published_convention(expected):
    """The published corners come from unrefined contours, which run through the
    centres of the outermost black pixels: half a pixel inside the edges. Ours
    sit on the edges themselves (the half-way crossing), 1.0003 px at worst from
    the published ones as they stand. Moved half a pixel in along both edge
    normals, as a contour would be, every corner is within OpenCV's own 1 px."""
    truth = expected["singlemarkersoriginal.jpg"]
    found = {d.id: d.corners_px for d in MarkerDetector(truth["dictionary"]).detect(
        image("singlemarkersoriginal.jpg"))}
    for marker_id, published in truth["corners"].items():
        shifted = contour_convention(found[int(marker_id)])
        error_px = np.abs(shifted - np.asarray(published, float)).max()
        assert error_px <= 1.0, f"marker {marker_id}: a corner is {error_px:.2f} px off"


def test_published_corner_order_is_opencvs_not_the_images(expected):
    truth = expected["singlemarkersoriginal.jpg"]
    found = {d.id: d.corners_px for d in MarkerDetector(truth["dictionary"]).detect(
        image("singlemarkersoriginal.jpg"))}
    for marker_id, corners in truth["corners"].items():
        published = np.asarray(corners, float)
        # Starting from any other corner puts every corner a marker's side away.
        for shift in (1, 2, 3):
            off_px = np.abs(np.roll(found[int(marker_id)], shift, axis=0) - published).max()
            assert off_px > 10.0, f"marker {marker_id} also matches when turned by {shift}"

    def corner0_side(marker_id: str) -> tuple[bool, bool]:
        c = np.asarray(truth["corners"][marker_id], float)
        right, below = c[0] > c.mean(axis=0)
        return bool(right), bool(below)

    # Upside down: corner 0 is the image's bottom-right; a quarter turn: top-right.
    assert corner0_side("62") == (True, True)
    assert corner0_side("124") == (True, False)
    assert corner0_side("40") == (False, False)  # upright: the usual top-left


# --- ChArUco ------------------------------------------------------------------------


def test_charuco_board_ids_and_corners_found(expected):
    truth = expected["choriginal.jpg"]
    spec = board_spec(truth["charuco_board"], truth["dictionary"])
    found = BoardFinder(spec).find(image("choriginal.jpg"))
    assert sorted(found.marker_ids.tolist()) == truth["ids"]
    assert len(found.corner_ids) == truth["charuco_corners"] == spec.corner_count


def test_occluded_charuco_board_published_ids_found(expected):
    board = expected["choriginal.jpg"]["charuco_board"]
    truth = expected["chocclusion_original.jpg"]
    found = BoardFinder(board_spec(board, truth["dictionary"])).find(image("chocclusion_original.jpg"))
    assert sorted(found.marker_ids.tolist()) == truth["ids"]
    # The mouse hides part of the board, yet the rest still gives corners.
    assert 6 <= len(found.corner_ids) < expected["choriginal.jpg"]["charuco_corners"]


def test_tutorial_board_looks_the_same_in_the_legacy_layout(expected):
    # The legacy layout differs only with an even number of rows; this board has 7.
    truth = expected["calibration_views"]
    board = truth["charuco_board"]
    for legacy in (False, True):
        spec = CharucoBoardSpec(board["squares_x"], board["squares_y"], board["square_m"] * 1000,
                                board["marker_m"] * 1000, board["dictionary"], legacy=legacy)
        assert len(BoardFinder(spec).find(image("img_00.jpg")).corner_ids) == spec.corner_count


# --- calibration ----------------------------------------------------------------------


def test_four_tutorial_views_calibrate_near_the_published_camera(expected):
    truth = expected["calibration_views"]
    spec = board_spec(truth["charuco_board"], truth["charuco_board"]["dictionary"])
    # As `companion calibrate camera` takes a folder of photos.
    collector = ViewCollector(spec, new_angle_deg=STILLS_NEW_ANGLE_DEG)
    for name in truth["images"]:
        assert collector.add(image(name), name).kept, f"{name} was not taken as a view"
    result = collector.calibrate(min_views=len(truth["images"]))

    published = CameraModel.from_yaml(TUTORIALS / truth["camera"])
    k, k_pub = result.camera.camera_matrix, published.camera_matrix
    for axis in (0, 1):
        rel_error = abs(k[axis, axis] - k_pub[axis, axis]) / k_pub[axis, axis]
        assert rel_error < 0.06, f"focal length {'xy'[axis]}: {k[axis, axis]:.1f} px against " \
                                 f"the published {k_pub[axis, axis]:.1f} px"
    assert result.camera.image_size == published.image_size == (640, 480)
    # The published file says 0.18 px; real corners on paper fit well below a pixel.
    assert result.rms_px < 0.5
    assert len(result.view_errors_px) == 4
    assert {name for name, _ in result.worst_views(4)} == set(truth["images"])


# --- the published camera files ---------------------------------------------------------


def test_published_charuco_camera_file_reads():
    cam = CameraModel.from_yaml(TUTORIALS / "tutorial_camera_charuco.yml")
    assert cam.image_size == (640, 480)
    assert cam.camera_matrix[0, 0] == pytest.approx(452.51072219637672)
    assert cam.camera_matrix[1, 1] == pytest.approx(456.76707935146891)
    assert cam.principal_point_px == pytest.approx((317.70297317353277, 277.75155919135995))
    assert cam.dist_coeffs.shape == (5,)
    assert cam.dist_coeffs[0] == pytest.approx(0.12136925618707872)


def test_published_camera_file_without_an_image_size_is_read_and_checked_by_its_principal_point():
    # tutorial_camera_params.yml carries camera_matrix and distortion_coefficients
    # but no image_width/image_height. It is read; a frame is taken when the
    # principal point lies well inside it, and refused when it cannot belong.
    path = TUTORIALS / "tutorial_camera_params.yml"
    cam = CameraModel.from_yaml(path)
    assert cam.image_size is None
    assert cam.camera_matrix[0, 0] == pytest.approx(628.158, abs=1e-3)
    photo = image("gboriginal.png")
    cam.check_frame(photo)                      # the photo it was published with
    with pytest.raises(CameraFileError, match="gives no image size") as info:
        cam.check_frame(np.zeros((2160, 3840), np.uint8))
    assert "tutorial_camera_params.yml" in str(info.value)

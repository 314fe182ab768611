"""Issue 17: camera calibration from OpenCV's chessboard and circle grid as well
as ChArUco, and each calibrator saying which pattern it was shown instead.

The views are rendered exactly, as tests/test_calibrate.py renders ChArUco
views: every frame pixel's undistorted ray of a known camera (with barrel
distortion) is met with the printed sheet in a known pose. The calibration must
give that camera back."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from calibration.charuco import CalibrationError, ViewCollector, view_from_image
from calibration.patterns import ChessboardSpec, CircleGridSpec, PatternError, probe_chessboard
from companion.cli import main
from tests.test_calibrate import (
    FRAME_SIZE,
    POSES,
    SHEET_MARGIN_MM,
    SHEET_PX_PER_MM,
    SPEC as CHARUCO,
    TRUE_DIST,
    TRUE_K,
    board_sheet,
    pixel_rays,
    render_view,
)

CHESS = ChessboardSpec(9, 6, 20.0)          # OpenCV's sample board: 10 x 7 squares
CIRCLES = CircleGridSpec(4, 11, 10.0, asymmetric=True)   # OpenCV's acircles pattern


def chessboard_sheet(spec: ChessboardSpec) -> tuple[np.ndarray, np.ndarray]:
    """The printed chessboard at SHEET_PX_PER_MM with a white margin, and where its
    first inner corner lies in sheet millimetres (from the margin's inner edge)."""
    sq = spec.square_mm
    w_mm, h_mm = (spec.cols + 1) * sq, (spec.rows + 1) * sq
    px = SHEET_PX_PER_MM
    sheet = np.full((round((h_mm + 2 * SHEET_MARGIN_MM) * px), round((w_mm + 2 * SHEET_MARGIN_MM) * px)),
                    255, np.uint8)
    m = round(SHEET_MARGIN_MM * px)
    for r in range(spec.rows + 1):
        for c in range(spec.cols + 1):
            if (r + c) % 2 == 0:
                sheet[m + round(r * sq * px):m + round((r + 1) * sq * px),
                      m + round(c * sq * px):m + round((c + 1) * sq * px)] = 0
    return cv2.GaussianBlur(sheet, (0, 0), 1.0), np.array([sq, sq, 0.0])


def circles_sheet(spec: CircleGridSpec) -> tuple[np.ndarray, np.ndarray]:
    """The printed circle grid (circles of 0.7 x the spacing across) and where its
    first circle's centre lies in sheet millimetres."""
    pts = spec.object_points_mm()
    r_mm = 0.35 * spec.spacing_mm * (2 if not spec.asymmetric else 1.4)
    pad = 1.5 * r_mm
    w_mm, h_mm = pts[:, 0].max() + 2 * pad, pts[:, 1].max() + 2 * pad
    px = SHEET_PX_PER_MM
    sheet = np.full((round((h_mm + 2 * SHEET_MARGIN_MM) * px), round((w_mm + 2 * SHEET_MARGIN_MM) * px)),
                    255, np.uint8)
    shift = 4
    for x, y, _ in pts:
        centre = ((x + pad + SHEET_MARGIN_MM) * px - 0.5, (y + pad + SHEET_MARGIN_MM) * px - 0.5)
        cv2.circle(sheet, (round(centre[0] * 2 ** shift), round(centre[1] * 2 ** shift)),
                   round(r_mm * px * 2 ** shift), 0, -1, cv2.LINE_AA, shift)
    return cv2.GaussianBlur(sheet, (0, 0), 1.0), np.array([pad, pad, 0.0])


def pose_of(object_mm: np.ndarray, origin_on_sheet_mm: np.ndarray, pose) -> tuple[np.ndarray, np.ndarray]:
    """Rotation and translation taking *sheet* millimetres to the camera's, for a
    pattern whose centre is seen where `pose` says (as tests/test_calibrate.POSES)."""
    x_frac, y_frac, tilt_x_deg, tilt_y_deg, turn_deg, distance_mm = pose
    rot = (cv2.Rodrigues(np.array([0.0, 0.0, math.radians(turn_deg)]))[0]
           @ cv2.Rodrigues(np.array([0.0, math.radians(tilt_y_deg), 0.0]))[0]
           @ cv2.Rodrigues(np.array([math.radians(tilt_x_deg), 0.0, 0.0]))[0])
    ray = np.array([(x_frac * FRAME_SIZE[0] - TRUE_K[0, 2]) / TRUE_K[0, 0],
                    (y_frac * FRAME_SIZE[1] - TRUE_K[1, 2]) / TRUE_K[1, 1], 1.0])
    centre_sheet_mm = origin_on_sheet_mm + (object_mm.max(axis=0) + object_mm.min(axis=0)) / 2
    return rot, ray / np.linalg.norm(ray) * distance_mm - rot @ centre_sheet_mm


@pytest.fixture(scope="module")
def rays():
    return pixel_rays()


@pytest.fixture(scope="module")
def chess_views(rays):
    sheet, origin = chessboard_sheet(CHESS)
    rng = np.random.default_rng(11)
    return [(f"chess{i:02d}.png", render_view(sheet, rays, *pose_of(CHESS.object_points_mm(), origin, pose), rng))
            for i, pose in enumerate(POSES)]


@pytest.fixture(scope="module")
def chess_folder(chess_views, tmp_path_factory):
    folder = tmp_path_factory.mktemp("chess-views")
    for name, image in chess_views:
        assert cv2.imwrite(str(folder / name), image)
    return folder


# --- the patterns ----------------------------------------------------------------------------


def test_the_chessboard_is_found_where_the_true_camera_puts_its_corners(rays, chess_views):
    sheet, origin = chessboard_sheet(CHESS)
    rot, t = pose_of(CHESS.object_points_mm(), origin, POSES[0])
    truth, _ = cv2.projectPoints(CHESS.object_points_mm() + origin, cv2.Rodrigues(rot)[0], t, TRUE_K, TRUE_DIST)
    view = view_from_image(CHESS, chess_views[0][1], "chess00.png")
    assert view.corner_count == 54
    err = np.linalg.norm(view.corners_px - truth.reshape(-1, 2), axis=1)
    # findChessboardCorners may start from either end of a 9 x 6 board: compare with the nearer order.
    err_flipped = np.linalg.norm(view.corners_px[::-1] - truth.reshape(-1, 2), axis=1)
    assert min(float(np.median(err)), float(np.median(err_flipped))) < 0.15


def test_chessboard_calibration_gives_the_true_camera_back(chess_views):
    collector = ViewCollector(CHESS)
    for name, image in chess_views:
        collector.add(image, name)
    assert len(collector.views) >= 10
    assert collector.coverage_percent > 50
    result = collector.calibrate(min_views=8)
    cam = result.camera
    assert result.rms_px < 0.3
    assert abs(cam.focal_px - TRUE_K[0, 0]) / TRUE_K[0, 0] < 0.01
    assert cam.principal_point_px == pytest.approx((TRUE_K[0, 2], TRUE_K[1, 2]), abs=8.0)
    assert cam.dist_coeffs[0] == pytest.approx(TRUE_DIST[0], abs=0.02)


def test_a_circle_grid_calibrates_too(rays):
    sheet, origin = circles_sheet(CIRCLES)
    rng = np.random.default_rng(5)
    collector = ViewCollector(CIRCLES, new_angle_deg=5.0)
    for i, pose in enumerate(POSES):
        image = render_view(sheet, rays, *pose_of(CIRCLES.object_points_mm(), origin, pose), rng)
        collector.add(image, f"circles{i:02d}.png")
    assert len(collector.views) >= 8
    cam = collector.calibrate(min_views=8).camera
    assert abs(cam.focal_px - TRUE_K[0, 0]) / TRUE_K[0, 0] < 0.015
    assert cam.dist_coeffs[0] == pytest.approx(TRUE_DIST[0], abs=0.03)


@pytest.mark.parametrize("make, message", [
    (lambda: ChessboardSpec(2, 6, 25.0), "at least 3 x 3 inner corners"),
    (lambda: ChessboardSpec(7, 7, 25.0), "cannot be told apart"),
    (lambda: ChessboardSpec(9, 6, 0.0), "positive number of millimetres"),
    (lambda: CircleGridSpec(4, 2, 10.0), "at least 3 x 3 circles"),
])
def test_impossible_patterns_are_named(make, message):
    with pytest.raises(PatternError, match=message):
        make()


# --- shown the wrong pattern ------------------------------------------------------------------


def test_the_charuco_calibrator_shown_a_chessboard_says_so(chess_views):
    collector = ViewCollector(CHARUCO)
    for name, image in chess_views[:3]:
        collector.add(image, name)
    with pytest.raises(CalibrationError) as caught:
        collector.calibrate()
    message = str(caught.value)
    assert "no ChArUco board found in any of 3 frames" in message
    assert "this looks like a chessboard" in message and "use --pattern chessboard --cols 9 --rows 6" in message
    assert "dictionary" not in message.split(":", 1)[1].replace("DICT_5X5_100 markers", "")


def test_the_charuco_calibrator_shown_another_dictionary_still_names_it(rays):
    """A ChArUco board shows a chessboard too: its markers come first."""
    from calibration.charuco import CharucoBoardSpec

    spec = CharucoBoardSpec(5, 7, 30.0, 22.0, "DICT_4X4_50")
    rng = np.random.default_rng(2)
    from tests.test_calibrate import board_pose
    image = render_view(board_sheet(CHARUCO), rays, *board_pose(CHARUCO, POSES[0]), rng)
    collector = ViewCollector(spec)
    collector.add(image, "a.png")
    with pytest.raises(CalibrationError, match="but the frames show DICT_5X5 markers"):
        collector.calibrate()


def test_the_chessboard_calibrator_shown_a_charuco_board_says_so(rays):
    from tests.test_calibrate import board_pose
    rng = np.random.default_rng(4)
    image = render_view(board_sheet(CHARUCO), rays, *board_pose(CHARUCO, POSES[0]), rng)
    collector = ViewCollector(CHESS)
    collector.add(image, "charuco.png")
    with pytest.raises(CalibrationError) as caught:
        collector.calibrate()
    message = str(caught.value)
    assert message.startswith("no 9 x 6 chessboard (inner corners; 10 x 7 squares of 20 mm) found in any of 1 frame")
    assert "this looks like a ChArUco board: use --pattern charuco --dictionary DICT_5X5_" in message


def test_a_chessboard_of_another_size_is_named(chess_views):
    collector = ViewCollector(ChessboardSpec(7, 5, 20.0))
    collector.add(chess_views[0][1], "chess00.png")
    with pytest.raises(CalibrationError, match="a chessboard of 9 x 6 inner corners .*use --cols 9 --rows 6"):
        collector.calibrate()
    assert probe_chessboard([np.full((480, 640), 128, np.uint8)]) is None


# --- the command -------------------------------------------------------------------------------


def test_cli_calibrates_from_a_folder_of_chessboard_photos(chess_folder, tmp_path, capsys):
    out = tmp_path / "webcam.yml"
    status = main(["calibrate", "camera", "--source", str(chess_folder), "--out", str(out),
                   "--pattern", "chessboard", "--cols", "9", "--rows", "6", "--square-mm", "20",
                   "--min-views", "8"])
    text = capsys.readouterr().out
    assert status == 0, text
    assert text.startswith("looking for a 9 x 6 chessboard (inner corners; 10 x 7 squares of 20 mm)")
    taken = [line for line in text.splitlines() if line.startswith("view ")]
    assert len(taken) >= 10 and taken[0].startswith("view 1 (chess00.png): 54 corners, coverage ")
    assert "RMS reprojection error" in text and "each view's error, worst first:" in text
    camera = CameraModel.from_yaml(out)
    assert camera.image_size == FRAME_SIZE
    assert abs(camera.focal_px - TRUE_K[0, 0]) / TRUE_K[0, 0] < 0.01


def test_cli_charuco_shown_a_chessboard_says_use_pattern_chessboard(chess_views, tmp_path, capsys):
    for name, image in chess_views[:2]:
        cv2.imwrite(str(tmp_path / name), image)
    status = main(["calibrate", "camera", "--source", str(tmp_path), "--out", str(tmp_path / "c.yml")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert "this looks like a chessboard: use --pattern chessboard --cols 9 --rows 6" in err


@pytest.mark.parametrize("argv, message", [
    (["--pattern", "chessboard"], "--pattern chessboard needs --cols and --rows (--cols 9 --rows 6"),
    (["--pattern", "chessboard", "--cols", "7", "--rows", "7"], "cannot be told apart"),
    (["--cols", "9", "--rows", "6"], "a ChArUco board takes --squares XxY (or give --pattern chessboard)"),
    (["--pattern", "asymmetric-circles", "--cols", "4"], "needs --cols and --rows"),
])
def test_cli_pattern_mistakes_are_one_line(tmp_path, capsys, argv, message):
    status = main(["calibrate", "camera", "--source", str(tmp_path), "--out", str(tmp_path / "c.yml"), *argv])
    err = capsys.readouterr().err
    assert status == 2 and message in err and err.count("\n") == 1


def test_a_real_charuco_photo_shown_to_the_chessboard_calibrator_says_use_charuco():
    """OpenCV's tutorial photo of its 5 x 7 DICT_6X6 ChArUco board (tests/data/setup)."""
    from pathlib import Path

    photo = cv2.imread(str(Path(__file__).parent / "data" / "setup" / "choriginal.jpg"))
    assert photo is not None
    collector = ViewCollector(CHESS)
    collector.add(photo, "choriginal.jpg")
    with pytest.raises(CalibrationError, match="DICT_6X6 markers .*this looks like a ChArUco board: "
                                               "use --pattern charuco --dictionary DICT_6X6_50"):
        collector.calibrate()

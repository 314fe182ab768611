"""Camera calibration from a ChArUco board, on views rendered by a known camera.

The views are rendered exactly: for every pixel of the frame, the camera's
undistorted ray (cv2.undistortPoints) is met with the board's plane in its
known pose, and the board image is sampled there (cv2.remap).  So each view
shows what a camera with that lens distortion sees, and the calibration must
give that camera back.
"""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from calibration.charuco import (
    CalibrationError,
    CharucoBoardSpec,
    ViewCollector,
    calibrate,
    view_from_image,
)
from companion.cli import main

FRAME_SIZE = (1280, 720)  # (width, height) in pixels
TRUE_K = np.array([[1000.0, 0.0, 652.0], [0.0, 1000.0, 356.0], [0.0, 0.0, 1.0]])
TRUE_DIST = np.array([-0.28, 0.09, 0.0, 0.0, 0.0])  # barrel distortion, as webcams have
SPEC = CharucoBoardSpec(5, 7, 30.0, 22.0, "DICT_5X5_100")
BOARD_ARGS = ["--squares", "5x7", "--square-mm", "30", "--marker-mm", "22",
              "--dictionary", "DICT_5X5_100"]

SHEET_PX_PER_MM = 6.0
SHEET_MARGIN_MM = 15.0  # white paper around the board

#: Where the board's centre is seen (fractions of the frame), its tilt about the
#: camera's x and y axes and its turn about the view axis (degrees), and its
#: distance (mm): every part of the frame, tilted every way.
POSES = (
    (0.50, 0.50, 0, 0, 0, 520),
    (0.50, 0.50, 35, 0, 10, 480),
    (0.50, 0.50, -35, 0, -10, 480),
    (0.50, 0.50, 0, 35, 90, 500),
    (0.50, 0.50, 0, -35, 80, 500),
    (0.22, 0.28, 25, 25, 15, 450),
    (0.78, 0.28, 25, -25, -15, 450),
    (0.22, 0.72, -25, 25, -5, 450),
    (0.78, 0.72, -25, -25, 5, 450),
    (0.15, 0.50, 0, 40, 90, 430),
    (0.85, 0.50, 0, -40, 90, 430),
    (0.50, 0.20, 40, 0, 90, 430),
    (0.50, 0.80, -40, 0, 90, 430),
    (0.30, 0.50, 20, -30, 30, 400),
    (0.70, 0.50, -20, 30, -30, 400),
    (0.12, 0.15, 15, 15, 45, 420),
    (0.88, 0.85, -15, -15, 45, 420),
)


# --- rendering -----------------------------------------------------------------------


def board_sheet(spec: CharucoBoardSpec) -> np.ndarray:
    """The printed sheet at SHEET_PX_PER_MM, pre-blurred so that sampling it
    at a coarser pitch does not alias."""
    width_mm = spec.squares_x * spec.square_mm + 2 * SHEET_MARGIN_MM
    height_mm = spec.squares_y * spec.square_mm + 2 * SHEET_MARGIN_MM
    image = spec.build().generateImage(
        (round(width_mm * SHEET_PX_PER_MM), round(height_mm * SHEET_PX_PER_MM)),
        marginSize=round(SHEET_MARGIN_MM * SHEET_PX_PER_MM), borderBits=1)
    return cv2.GaussianBlur(image, (0, 0), 1.0)


def pixel_rays() -> np.ndarray:
    """The undistorted ray (x, y, 1 in camera coordinates) of every frame pixel, (h, w, 2)."""
    w, h = FRAME_SIZE
    xs, ys = np.meshgrid(np.arange(w, dtype=np.float64), np.arange(h, dtype=np.float64))
    pixels = np.stack([xs.ravel(), ys.ravel()], axis=1).reshape(-1, 1, 2)
    criteria = (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 40, 1e-12)
    return cv2.undistortPoints(pixels, TRUE_K, TRUE_DIST, criteria=criteria).reshape(h, w, 2)


def board_pose(spec: CharucoBoardSpec, pose) -> tuple[np.ndarray, np.ndarray]:
    """Rotation and translation (mm) taking board coordinates to the camera's."""
    x_frac, y_frac, tilt_x_deg, tilt_y_deg, turn_deg, distance_mm = pose
    rot = (cv2.Rodrigues(np.array([0.0, 0.0, math.radians(turn_deg)]))[0]
           @ cv2.Rodrigues(np.array([0.0, math.radians(tilt_y_deg), 0.0]))[0]
           @ cv2.Rodrigues(np.array([math.radians(tilt_x_deg), 0.0, 0.0]))[0])
    ray = np.array([(x_frac * FRAME_SIZE[0] - TRUE_K[0, 2]) / TRUE_K[0, 0],
                    (y_frac * FRAME_SIZE[1] - TRUE_K[1, 2]) / TRUE_K[1, 1], 1.0])
    centre_cam_mm = ray / np.linalg.norm(ray) * distance_mm
    centre_board_mm = np.array([spec.squares_x * spec.square_mm / 2,
                                spec.squares_y * spec.square_mm / 2, 0.0])
    return rot, centre_cam_mm - rot @ centre_board_mm


def render_view(sheet: np.ndarray, rays: np.ndarray, rot: np.ndarray, t_mm: np.ndarray,
                rng: np.random.Generator) -> np.ndarray:
    """The frame the true camera takes of the sheet in that pose (grey, 8 bit)."""
    # Board plane z = 0: a ray (x, y, 1) meets it at H^-1 (x, y, 1), H = [r1 r2 t].
    h_inv = np.linalg.inv(np.column_stack([rot[:, 0], rot[:, 1], t_mm]))
    x, y = rays[..., 0], rays[..., 1]
    u = h_inv[0, 0] * x + h_inv[0, 1] * y + h_inv[0, 2]
    v = h_inv[1, 0] * x + h_inv[1, 1] * y + h_inv[1, 2]
    s = h_inv[2, 0] * x + h_inv[2, 1] * y + h_inv[2, 2]
    # Board mm to sheet pixels; pixel centres sit half a pixel in.
    map_x = ((u / s + SHEET_MARGIN_MM) * SHEET_PX_PER_MM - 0.5).astype(np.float32)
    map_y = ((v / s + SHEET_MARGIN_MM) * SHEET_PX_PER_MM - 0.5).astype(np.float32)
    map_x[s <= 0] = -1.0e6  # behind the camera
    paper = cv2.remap(sheet, map_x, map_y, cv2.INTER_LINEAR).astype(np.float32)
    on_sheet = ((map_x >= 0) & (map_y >= 0) & (map_x <= sheet.shape[1] - 1)
                & (map_y <= sheet.shape[0] - 1))
    h, w = rays.shape[:2]
    # A mottled table top behind the sheet, so the sheet's edge is not the only edge.
    table = cv2.resize(rng.normal(100.0, 25.0, (h // 24 + 1, w // 24 + 1)), (w, h),
                       interpolation=cv2.INTER_CUBIC)
    frame = np.where(on_sheet, 20.0 + 0.8 * paper, table)  # ink is not black, paper not white
    frame = cv2.GaussianBlur(frame, (0, 0), 0.7) + rng.normal(0.0, 2.0, frame.shape)
    return np.clip(frame, 0, 255).astype(np.uint8)


@pytest.fixture(scope="module")
def rays() -> np.ndarray:
    return pixel_rays()


@pytest.fixture(scope="module")
def sheet() -> np.ndarray:
    return board_sheet(SPEC)


@pytest.fixture(scope="module")
def views(rays, sheet) -> list[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(7)
    return [(f"view{i:02d}.png", render_view(sheet, rays, *board_pose(SPEC, pose), rng))
            for i, pose in enumerate(POSES)]


@pytest.fixture(scope="module")
def view_folder(views, tmp_path_factory):
    folder = tmp_path_factory.mktemp("board-views")
    for name, image in views:
        assert cv2.imwrite(str(folder / name), image)
    return folder


# --- the renderer is honest --------------------------------------------------------------


def test_rendered_corners_are_where_the_true_camera_puts_them(views):
    errors_px = []
    for (name, image), pose in zip(views, POSES):
        view = view_from_image(SPEC, image, name)
        rot, t_mm = board_pose(SPEC, pose)
        truth_px, _ = cv2.projectPoints(view.object_points_mm, cv2.Rodrigues(rot)[0], t_mm,
                                        TRUE_K, TRUE_DIST)
        errors_px.append(view.corners_px - truth_px.reshape(-1, 2))
    errors_px = np.vstack(errors_px)
    assert float(np.sqrt((errors_px ** 2).sum(axis=1).mean())) < 0.2
    assert np.abs(errors_px.mean(axis=0)).max() < 0.05  # no half-pixel shift anywhere


# --- calibration -------------------------------------------------------------------------


def test_calibration_gives_the_true_camera_back(views):
    collector = ViewCollector(SPEC)
    for name, image in views:
        collector.add(image, name)
    assert len(collector.views) >= 15
    assert collector.coverage_percent >= 70.0
    result = collector.calibrate(min_views=12)

    k = result.camera.camera_matrix
    assert abs(k[0, 0] - TRUE_K[0, 0]) / TRUE_K[0, 0] < 0.01
    assert abs(k[1, 1] - TRUE_K[1, 1]) / TRUE_K[1, 1] < 0.01
    assert abs(k[0, 2] - TRUE_K[0, 2]) < 3.0 and abs(k[1, 2] - TRUE_K[1, 2]) < 3.0
    assert result.camera.dist_coeffs[0] == pytest.approx(TRUE_DIST[0], abs=0.02)
    assert result.camera.image_size == FRAME_SIZE
    # Rendered corners are good to about 0.1 px; so must the fit be.
    assert result.rms_px < 0.3
    assert len(result.view_errors_px) == len(result.views) == len(collector.views)
    assert max(result.view_errors_px) < 0.6
    worst = result.worst_views(3)
    assert [e for _, e in worst] == sorted(result.view_errors_px, reverse=True)[:3]
    assert all(name.startswith("view") for name, _ in worst)
    # The stated doubt of the focal length is small and honest about the truth.
    assert 0 < result.intrinsics_std["fx"] < 5.0
    assert abs(k[0, 0] - TRUE_K[0, 0]) < 5 * result.intrinsics_std["fx"] + 1.0


def test_calibration_written_and_read_back(views, tmp_path):
    result = calibrate([view_from_image(SPEC, image, name) for name, image in views], min_views=12)
    path = result.write(tmp_path / "camera.yml")
    again = CameraModel.from_yaml(path)
    assert np.allclose(again.camera_matrix, result.camera.camera_matrix)
    assert np.allclose(again.dist_coeffs, result.camera.dist_coeffs)
    assert again.image_size == FRAME_SIZE
    fs = cv2.FileStorage(str(path), cv2.FILE_STORAGE_READ)
    assert fs.getNode("avg_reprojection_error").real() == pytest.approx(result.rms_px)
    fs.release()


# --- the collector ------------------------------------------------------------------------


def test_collector_refuses_near_duplicates(views, rays, sheet):
    collector = ViewCollector(SPEC)
    first = collector.add(views[0][1], views[0][0])
    assert first.kept and first.corner_count == SPEC.corner_count
    assert collector.coverage_percent > 0

    # The same pose again, a few pixels over and with fresh sensor noise.
    x_frac, y_frac, *rest = POSES[0]
    nudged = (x_frac + 4 / FRAME_SIZE[0], y_frac + 3 / FRAME_SIZE[1], *rest)
    again = render_view(sheet, rays, *board_pose(SPEC, nudged), np.random.default_rng(99))
    decision = collector.add(again, "nudged.png")
    assert not decision.kept
    assert decision.reason.startswith("near-duplicate of view 1 (view00.png)")
    assert len(collector.views) == 1

    tilted = collector.add(views[1][1], views[1][0])
    assert tilted.kept and len(collector.views) == 2


def test_collector_stops_at_max_views(views):
    collector = ViewCollector(SPEC, max_views=3)
    for name, image in views[:6]:
        collector.add(image, name)
    assert len(collector.views) == 3 and collector.full


def test_frames_of_another_size_refused(views):
    collector = ViewCollector(SPEC)
    collector.add(views[0][1], views[0][0])
    smaller = cv2.resize(views[1][1], (960, 540), interpolation=cv2.INTER_AREA)
    with pytest.raises(CalibrationError, match=r"small\.png: 960 x 540 pixels, but the first "
                                               r"frame was 1280 x 720"):
        collector.add(smaller, "small.png")


def test_calibrate_refuses_views_of_mixed_sizes(views):
    big = [view_from_image(SPEC, image, name) for name, image in views[:3]]
    small_image = cv2.resize(views[3][1], (960, 540), interpolation=cv2.INTER_AREA)
    small = view_from_image(SPEC, small_image, "small.png")
    with pytest.raises(CalibrationError, match=r"small\.png: 960 x 540 pixels, but view00\.png "
                                               r"is 1280 x 720"):
        calibrate([*big, small])


def test_too_few_views_says_how_many(views):
    collector = ViewCollector(SPEC)
    for name, image in views[:3]:
        collector.add(image, name)
    with pytest.raises(CalibrationError, match=r"too few views: 3 taken from 3 frames, but at "
                                               r"least 10 are needed"):
        collector.calibrate(min_views=10)


def test_no_board_said_so():
    collector = ViewCollector(SPEC)
    rng = np.random.default_rng(3)
    for i in range(2):
        collector.add(rng.integers(0, 255, (720, 1280), dtype=np.uint8), f"noise{i}.png")
    with pytest.raises(CalibrationError, match="no ChArUco board found in any of 2 frames: no "
                                               "DICT_5X5_100 markers"):
        collector.calibrate()


@pytest.mark.parametrize("kwargs, message", [
    (dict(marker_mm=30.0), "must be smaller than the square"),
    (dict(dictionary="DICT_5X5_1001"), "unknown ArUco dictionary 'DICT_5X5_1001'"),
    (dict(squares_x=11, squares_y=11, dictionary="DICT_5X5_50"), "60 markers, but DICT_5X5_50 holds only 50"),
    (dict(squares_x=1), "at least 2 x 2 squares"),
])
def test_board_spec_refuses_impossible_boards(kwargs, message):
    fields = dict(squares_x=5, squares_y=7, square_mm=30.0, marker_mm=22.0, dictionary="DICT_5X5_100")
    with pytest.raises(CalibrationError, match=message):
        CharucoBoardSpec(**{**fields, **kwargs})


# --- the command ------------------------------------------------------------------------


def test_cli_calibrates_a_folder_of_views(view_folder, tmp_path, capsys):
    out = tmp_path / "cams" / "webcam.yml"
    status = main(["calibrate", "camera", "--source", str(view_folder), "--out", str(out),
                   *BOARD_ARGS, "--min-views", "12", "--max-views", "20"])
    text = capsys.readouterr().out
    assert status == 0, text
    taken = [line for line in text.splitlines() if line.startswith("view ")]
    assert len(taken) >= 15
    assert taken[0].startswith("view 1 (view00.png): 24 corners, coverage ")
    assert "RMS reprojection error" in text and "each view's error, worst first: view" in text
    assert text.rstrip().endswith(f"wrote {out}")

    camera = CameraModel.from_yaml(out)
    assert camera.image_size == FRAME_SIZE
    assert abs(camera.focal_px - TRUE_K[0, 0]) / TRUE_K[0, 0] < 0.01
    assert camera.dist_coeffs[0] == pytest.approx(TRUE_DIST[0], abs=0.02)


def test_cli_folder_without_a_board(tmp_path, capsys):
    rng = np.random.default_rng(5)
    for i in range(3):
        cv2.imwrite(str(tmp_path / f"empty{i}.png"),
                    cv2.GaussianBlur(rng.integers(0, 255, (480, 640), dtype=np.uint8), (0, 0), 2.0))
    out = tmp_path / "camera.yml"
    status = main(["calibrate", "camera", "--source", str(tmp_path), "--out", str(out), *BOARD_ARGS])
    err = capsys.readouterr().err
    assert status == 2
    assert "no ChArUco board found in any of 3 frames" in err
    assert len(err.strip().splitlines()) == 1
    assert not out.exists()


def test_cli_wrong_dictionary_names_the_one_seen(views, tmp_path, capsys):
    for name, image in views[:2]:
        cv2.imwrite(str(tmp_path / name), image)
    out = tmp_path / "camera.yml"
    status = main(["calibrate", "camera", "--source", str(tmp_path), "--out", str(out),
                   "--squares", "5x7", "--square-mm", "30", "--marker-mm", "22",
                   "--dictionary", "DICT_4X4_50"])
    err = capsys.readouterr().err
    assert status == 2
    assert "no DICT_4X4_50 markers" in err
    assert "DICT_5X5 markers" in err and "DICT_5X5_50 or a larger DICT_5X5 one" in err
    assert not out.exists()


def test_cli_too_few_views(views, tmp_path, capsys):
    for name, image in views[:3]:
        cv2.imwrite(str(tmp_path / name), image)
    status = main(["calibrate", "camera", "--source", str(tmp_path), "--out",
                   str(tmp_path / "camera.yml"), *BOARD_ARGS, "--min-views", "10"])
    err = capsys.readouterr().err
    assert status == 2
    assert "too few views: 3 taken from 3 frames, but at least 10 are needed" in err


def test_cli_refuses_a_board_that_cannot_be(tmp_path, capsys):
    status = main(["calibrate", "camera", "--source", str(tmp_path), "--out",
                   str(tmp_path / "camera.yml"), "--square-mm", "20", "--marker-mm", "25"])
    assert status == 2
    assert "must be smaller than the square" in capsys.readouterr().err


def test_cli_squares_must_read_as_x_by_y(tmp_path, capsys):
    with pytest.raises(SystemExit) as info:
        main(["calibrate", "camera", "--source", str(tmp_path), "--out", "c.yml", "--squares", "5by7"])
    assert info.value.code == 2
    assert "'5by7' is not squares across x down" in capsys.readouterr().err

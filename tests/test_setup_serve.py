"""Issue 17: `serve` plays a video or a folder once unless told --loop, and a
camera file made at another resolution is scaled (and said) or refused."""

from __future__ import annotations

import argparse
import json
import time

import cv2
import numpy as np
import pytest

from calibration.camera import CameraFileError, CameraModel
from companion.cli import main
from companion.commands.serve import live_for_serving
from tests.test_cli import rendered  # noqa: F401 (a fixture: one rendered frame, its camera file and truth)
from vision.sources import ImageFolderSource, LoopingSource, PeekedSource, open_source

TABLE = "vision/data/demo_table.toml"


@pytest.fixture(scope="module")
def short_video(tmp_path_factory):
    """Three frames at 10 fps: 0.3 s of video."""
    video = tmp_path_factory.mktemp("video") / "game.avi"
    assert main(["render", str(video), "--seconds", "0.3", "--fps", "10"]) == 0
    cap = cv2.VideoCapture(str(video))
    assert int(cap.get(cv2.CAP_PROP_FRAME_COUNT)) == 3
    cap.release()
    return video


def _folder(tmp_path, n=3):
    for k in range(n):
        image = np.full((60, 80, 3), 40 * k, np.uint8)
        cv2.imwrite(str(tmp_path / f"shot{k}.png"), image)
    return tmp_path


# --- sources ----------------------------------------------------------------------------


def test_a_looped_folder_goes_on_with_rising_frame_numbers_and_times(tmp_path):
    folder = _folder(tmp_path)
    looped = LoopingSource(open_source(str(folder)), lambda: open_source(str(folder)))
    frames = [looped.read() for _ in range(7)]
    assert [f.index for f in frames] == list(range(7))
    assert [f.name for f in frames] == ["shot0.png", "shot1.png", "shot2.png"] * 2 + ["shot0.png"]
    times = [f.time_s for f in frames]
    assert all(b > a for a, b in zip(times, times[1:]))
    assert looped.loops == 2
    looped.close()
    assert looped.read() is None


def test_a_peeked_source_still_gives_its_first_frame_first(tmp_path):
    folder = _folder(tmp_path)
    peeked = PeekedSource(open_source(str(folder)))
    assert peeked.frame_size == (80, 60)
    assert [f.name for f in peeked] == ["shot0.png", "shot1.png", "shot2.png"]


# --- serve: once, or --loop -------------------------------------------------------------


def _args(source, *, loop=False, camera=None):
    return argparse.Namespace(source=str(source), table=TABLE, camera=camera, loop=loop)


def _wait(live, until, timeout_s=60.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if until(live.snapshot()):
            return live.snapshot()
        time.sleep(0.05)
    raise AssertionError(f"timed out; last snapshot source {live.snapshot()['source']}")


def test_serve_plays_a_video_once_then_says_it_ended(short_video):
    live, warnings = live_for_serving(_args(short_video))
    assert warnings == ()
    frames = []
    live.add_frame_listener(lambda tracked: frames.append(tracked))
    live.start()
    try:
        snap = _wait(live, lambda s: s["source"]["status"] == "ended")
        time.sleep(0.5)          # and it stays ended: nothing opens it again
        snap = live.snapshot()
    finally:
        live.stop()
    assert snap["source"]["status"] == "ended" and snap["source"]["reopened"] == 0
    assert "no more frames" in snap["error"]
    assert len(frames) == 3
    assert len(snap["cars"]) == 5                     # the cars stay where they were last seen


def test_serve_with_loop_plays_the_video_again(short_video):
    live, _ = live_for_serving(_args(short_video, loop=True))
    frames = []
    live.add_frame_listener(lambda tracked: frames.append(tracked.located.frame))
    live.start()
    try:
        _wait(live, lambda s: len(frames) >= 7)
        snap = live.snapshot()
    finally:
        live.stop()
    assert snap["source"]["status"] == "running" and snap["source"]["reopened"] == 0
    assert "looped" in snap["source"]["description"]
    assert frames[:7] == list(range(7))               # one stream, frame numbers going on


def test_serve_plays_a_folder_once_and_loops_it_when_told(tmp_path, rendered):
    image, _, _ = rendered
    folder = tmp_path / "shots"
    folder.mkdir()
    (folder / "a.png").write_bytes(image.read_bytes())
    live, _ = live_for_serving(_args(folder))
    assert isinstance(live.source.inner, ImageFolderSource)     # read ahead on a thread
    live.start()
    try:
        snap = _wait(live, lambda s: s["source"]["status"] == "ended")
    finally:
        live.stop()
    assert snap["source"]["reopened"] == 0
    live, _ = live_for_serving(_args(folder, loop=True))
    frames = []
    live.add_frame_listener(lambda tracked: frames.append(tracked.located.frame))
    live.start()
    try:
        _wait(live, lambda s: len(frames) >= 2)     # a folder plays a frame a second
        snap = live.snapshot()
    finally:
        live.stop()
    assert snap["source"]["status"] == "running" and frames[:2] == [0, 1]


def test_the_demo_source_is_not_played_once():
    from vision.sources import SyntheticSource

    live, _ = live_for_serving(_args("demo"))
    assert live.source is None and live._open is not None      # opened, and reopened if it stops
    source = live._open()
    assert isinstance(source, SyntheticSource)
    source.close()


def test_serve_help_names_loop(capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "--loop" in capsys.readouterr().out


# --- a camera file for another resolution ---------------------------------------------------


def test_scaling_a_camera_keeps_its_field_of_view_and_lens():
    cam = CameraModel.from_fov(1920, 1080, 70.0, dist_coeffs=np.array([-0.1, 0.02, 0, 0, 0]), source="cam.yml")
    half = cam.scaled_to((960, 540))
    assert half.image_size == (960, 540)
    assert half.focal_px == pytest.approx(cam.focal_px / 2)
    assert half.principal_point_px == pytest.approx(((960 - 1) / 2, (540 - 1) / 2))
    assert np.array_equal(half.dist_coeffs, cam.dist_coeffs)
    # The same ray through the same place of the picture.
    px = np.array([[100.0, 900.0], [1800.0, 50.0]])
    assert np.allclose(cam.rays_from_pixels(px), half.rays_from_pixels((px + 0.5) / 2 - 0.5), atol=1e-9)
    fitted, note = cam.fitted_to((1280, 720))
    assert fitted.image_size == (1280, 720)
    assert "calibrated at 1920 x 1080 pixels but the frame is 1280 x 720" in note and "scaled" in note
    assert cam.fitted_to((1920, 1080)) == (cam, None)


def test_a_camera_file_of_another_shape_is_refused_naming_both():
    cam = CameraModel.from_fov(1920, 1080, 70.0, source="cam.yml")
    with pytest.raises(CameraFileError) as caught:
        cam.fitted_to((1440, 1080))
    message = str(caught.value)
    assert message.startswith("cam.yml: calibrated for 1920 x 1080 pixels, but the frame is 1440 x 1080")
    assert "16:9 against 4:3" in message and "calibrate the camera at 1440 x 1080" in message


def test_locate_scales_a_camera_file_of_another_resolution_and_warns(capsys, rendered, tmp_path):
    image, camera, truth = rendered
    small = tmp_path / "small.png"
    cv2.imwrite(str(small), cv2.resize(cv2.imread(str(image)), (1280, 720), interpolation=cv2.INTER_AREA))
    code = main(["locate", str(small), "--table", TABLE, "--camera", str(camera)])
    out, err = capsys.readouterr()
    assert code == 0
    assert err.startswith("warning: camera file ") and "1920 x 1080" in err and "1280 x 720" in err
    found = json.loads(out)
    assert found["table"]["camera"] == "calibrated"
    expected = {c["id"]: c for c in truth["cars"]}
    assert {c["id"] for c in found["cars"]} == set(expected)
    for car in found["cars"]:
        t = expected[car["id"]]
        assert abs(car["x_mm"] - t["x_mm"]) < 3.0 and abs(car["y_mm"] - t["y_mm"]) < 3.0


def test_locate_refuses_a_camera_file_of_another_shape_in_one_line(capsys, rendered, tmp_path):
    image, camera, _ = rendered
    cropped = tmp_path / "cropped.png"
    cv2.imwrite(str(cropped), cv2.imread(str(image))[:, 240:1680])
    code = main(["locate", str(cropped), "--table", TABLE, "--camera", str(camera)])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "calibrated for 1920 x 1080 pixels, but the frame is 1440 x 1080" in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_serve_says_a_scaled_camera_file_on_the_page(rendered, tmp_path):
    image, camera, _ = rendered
    folder = tmp_path / "small"
    folder.mkdir()
    cv2.imwrite(str(folder / "a.png"), cv2.resize(cv2.imread(str(image)), (960, 540), interpolation=cv2.INTER_AREA))
    live, warnings = live_for_serving(_args(folder, camera=str(camera)))
    (note,) = warnings
    assert "scaled" in note and "960 x 540" in note
    assert live.camera_file.image_size == (960, 540)
    # The page's notes get it.
    from companion.commands.serve import note_warnings
    from companion.game import TableGame
    game = TableGame(live)
    note_warnings(game, warnings)
    assert game.notes[-1]["kind"] == "warn" and game.notes[-1]["text"] == note
    live.source.close()

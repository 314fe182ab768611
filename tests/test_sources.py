"""Frame sources behind one interface: a video, a folder, an image, the synthetic table."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.sources import (CameraSource, Frame, FrameSource, ImageFolderSource, ImageSource, PrefetchSource,
                            SourceError, SyntheticSource, VideoSource, open_source)
from tests.conftest import SPREAD_POSES


@pytest.fixture(scope="module")
def frames(renderer):
    """Three rendered frames of cars driving forward."""
    out = []
    for k in range(3):
        poses = [type(p)(p.id, p.x_mm + 20 * k, p.y_mm, p.heading_deg) for p in SPREAD_POSES]
        out.append(renderer.render(poses).image)
    return out


def test_video_written_by_the_test_is_read_frame_by_frame(tmp_path, frames):
    path = tmp_path / "game.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (1920, 1080))
    assert writer.isOpened()
    for f in frames:
        writer.write(f)
    writer.release()
    source = open_source(str(path))
    assert isinstance(source, VideoSource) and source.fps == pytest.approx(10.0)
    with source:
        got = list(source)
    assert [f.index for f in got] == [0, 1, 2]
    assert [f.time_s for f in got] == pytest.approx([0.0, 0.1, 0.2])
    for read, written in zip(got, frames):
        assert read.image.shape == written.shape
        assert np.abs(read.image.astype(int) - written.astype(int)).mean() < 4   # MJPEG is lossy
    assert source.read() is None


def test_folder_of_images_in_name_order(tmp_path, frames):
    for name, img in zip(["b.png", "a.png", "c.jpg"], frames):
        cv2.imwrite(str(tmp_path / name), img)
    (tmp_path / "notes.txt").write_text("not an image")
    source = open_source(str(tmp_path))
    assert isinstance(source, ImageFolderSource)
    got = list(source)
    assert [f.name for f in got] == ["a.png", "b.png", "c.jpg"]
    assert np.array_equal(got[0].image, frames[1])


def test_single_image(tmp_path, frames):
    path = tmp_path / "shot.png"
    cv2.imwrite(str(path), frames[0])
    source = open_source(str(path))
    assert isinstance(source, ImageSource)
    assert len(list(source)) == 1


def test_unreadable_image_is_named(tmp_path):
    (tmp_path / "broken.png").write_bytes(b"\x89PNG not really")
    with pytest.raises(SourceError, match="broken.png: not an image OpenCV can read"):
        list(open_source(str(tmp_path)))


@pytest.mark.parametrize("spec, message", [
    ("missing.mp4", "no such file, folder or camera"),
    ("empty_dir", "no images in the folder"),
    ("not_video.avi", "not a video OpenCV can read"),
])
def test_sources_that_cannot_open_say_why(tmp_path, monkeypatch, spec, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty_dir").mkdir()
    (tmp_path / "not_video.avi").write_text("plain text")
    with pytest.raises(SourceError, match=message):
        open_source(spec)


def test_a_camera_that_is_not_there(monkeypatch):
    monkeypatch.setenv("OPENCV_LOG_LEVEL", "OFF")
    with pytest.raises(SourceError, match="camera 97: cannot be opened"):
        CameraSource(97)


def test_synthetic_table_gives_frames_with_their_truth(demo_table):
    source = open_source("demo", paced=False, fps=10.0, duration_s=0.25)
    assert isinstance(source, SyntheticSource)
    frames = list(source)
    assert [f.index for f in frames] == [0, 1, 2]
    for f in frames:
        assert f.truth is not None and set(f.truth.cars) == set(demo_table.car_ids)
        assert f.image.shape == (1080, 1920, 3)


def test_reading_ahead_leaves_the_reader_a_core_and_gives_it_back(tmp_path, frames):
    """While frames are read ahead on their own thread, OpenCV's pool keeps off the reader's
    core (on two cores its second worker slowed locating a 1080p frame by a third); once the
    last reader is closed the pool is as it was, as bare OpenCV in the same process expects."""
    path = tmp_path / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 15.0, (frames[0].shape[1], frames[0].shape[0]))
    for f in frames:
        writer.write(f)
    writer.release()
    before = cv2.getNumThreads()
    cores = cv2.getNumberOfCPUs()
    try:
        cv2.setNumThreads(cores)
        first = PrefetchSource(VideoSource(path))
        second = PrefetchSource(VideoSource(path))
        assert cv2.getNumThreads() == max(1, cores - 1)
        first.close()
        first.close()                          # closed twice: given back once
        assert cv2.getNumThreads() == max(1, cores - 1)
        assert second.read() is not None
        second.close()
        assert cv2.getNumThreads() == cores
    finally:
        cv2.setNumThreads(before)


class _FastCamera(FrameSource):
    """A live camera whose frames come faster than they are taken: `count` of them."""

    live = True

    def __init__(self, count: int, image: np.ndarray) -> None:
        super().__init__("a fast camera")
        self.count, self.image, self.sent = count, image, 0

    def read(self):
        if self.sent == self.count:
            return None
        self.sent += 1
        return Frame(self.sent - 1, self.image, float(self.sent - 1), "")


def test_a_live_camera_is_read_one_frame_ahead_and_a_file_three(frames):
    """A camera's frame taken by the table was read from it after the one before was taken, so
    it is never older than one decode (the driver keeps the newest); a file is read further
    ahead, every frame in order."""
    camera = _FastCamera(6, frames[0])
    with PrefetchSource(camera) as ahead:
        assert ahead.depth == 1
        taken = []
        for frame in ahead:
            # At most the frame taken, one decoded ahead and one in the reader's hands.
            assert camera.sent <= frame.index + 3
            taken.append(frame.index)
        assert taken == list(range(6))

    class _File(_FastCamera):
        live = False

    with PrefetchSource(_File(10, frames[0])) as ahead:
        assert ahead.depth == 3
        assert [f.index for f in ahead] == list(range(10))

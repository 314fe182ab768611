"""The live table keeps going when its source stops: reported, reopened with back-off."""

from __future__ import annotations

import time

import cv2
import pytest

from companion.live import LiveTable
from vision.render import CarTruth
from tests.conftest import wait_until
from vision.sources import ImageFolderSource, PrefetchSource, SourceError, VideoSource, open_source


@pytest.fixture(scope="module")
def short_video(tmp_path_factory, renderer):
    path = tmp_path_factory.mktemp("video") / "three.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (1920, 1080))
    for x in (300.0, 302.0, 304.0):
        writer.write(renderer.render([CarTruth(10, x, 300.0, 0.0)]).image)
    writer.release()
    return path


def test_a_source_that_ends_is_reported_and_reopened(short_video, demo_table, renderer):
    statuses = []
    live = LiveTable(lambda: VideoSource(short_video), demo_table, renderer.camera,
                     backoff_s=(0.05,), on_frame=lambda t: statuses.append(t.frame))
    live.start()
    try:
        assert wait_until(lambda: live.snapshot()["source"]["reopened"] >= 2)
        snap = live.snapshot()
        assert snap["cars"][0]["name"] == "Interceptor"
        assert statuses.count(0) >= 2          # the file played again from its start
    finally:
        live.stop()


def test_a_missing_camera_is_tried_again_until_it_appears(tmp_path, short_video, demo_table, renderer):
    target = tmp_path / "game.avi"
    live = LiveTable(lambda: open_source(str(target)), demo_table, renderer.camera, backoff_s=(0.05, 0.1))
    live.start()
    try:
        assert wait_until(lambda: live.snapshot()["source"]["status"] == "reopening")
        snap = live.snapshot()
        assert "game.avi: no such file" in snap["error"] and "trying again in" in snap["error"]
        assert snap["cars"] == []                         # nothing invented meanwhile
        target.write_bytes(short_video.read_bytes())      # plugged in
        assert wait_until(lambda: len(live.snapshot()["cars"]) == 1)
    finally:
        live.stop()


def test_a_source_given_open_plays_once_and_says_it_ended(short_video, demo_table, renderer):
    live = LiveTable(VideoSource(short_video), demo_table, renderer.camera).start()
    try:
        assert wait_until(lambda: live.snapshot()["source"]["status"] == "ended")
        assert "no more frames" in live.snapshot()["error"]
    finally:
        live.stop()


def test_prefetch_gives_the_same_frames_in_order(tmp_path, renderer):
    for i, x in enumerate((300.0, 320.0, 340.0)):
        cv2.imwrite(str(tmp_path / f"{i}.png"), renderer.render([CarTruth(10, x, 300.0, 0.0)]).image)
    plain = [f.image for f in ImageFolderSource(tmp_path)]
    with PrefetchSource(ImageFolderSource(tmp_path)) as ahead:
        read = [f.image for f in ahead]
    assert len(read) == 3 and all((a == b).all() for a, b in zip(plain, read))


def test_prefetch_hands_on_the_sources_error(tmp_path, renderer):
    cv2.imwrite(str(tmp_path / "0.png"), renderer.render([]).image)
    (tmp_path / "1.png").write_bytes(b"not a png")
    with PrefetchSource(ImageFolderSource(tmp_path)) as ahead:
        assert ahead.read() is not None
        with pytest.raises(SourceError, match="1.png: not an image"):
            ahead.read()

"""A webcam's Motion-JPEG frames decoded straight to grey, their colour only when asked.

What `serve` reads a camera or a video with (vision.sources.JpegGray): the tracker gets the
grey it reads, the Camera tab and the evidence still get the camera's colour, a frame a USB
hiccup cut short is skipped rather than taken for the end, and a stream that never decodes
is named."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from companion.commands.serve import open_source_for_serving
from companion.live import LiveTable
from companion.web import create_app
from vision.evidence import frame_evidence
from vision.render import CarTruth
from vision.sources import JpegGray, PrefetchSource, SourceError, VideoSource, in_colour

POSES = (CarTruth(10, 300.0, 200.0, 20.0), CarTruth(11, 420.0, 260.0, 0.0), CarTruth(12, 900.0, 650.0, 90.0),
         CarTruth(13, 700.0, 520.0, 180.0), CarTruth(14, 1000.0, 200.0, 300.0))


def _write(path, images, fourcc="MJPG"):
    h, w = images[0].shape[:2]
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*fourcc), 15.0, (w, h))
    assert writer.isOpened()
    for image in images:
        writer.write(image)
    writer.release()
    return path


@pytest.fixture(scope="module")
def table_video(tmp_path_factory, renderer):
    """Three frames of the demo table, as a webcam's Motion-JPEG."""
    rng = np.random.default_rng(4)
    images = [renderer.render(POSES, rng).image for _ in range(3)]
    return _write(tmp_path_factory.mktemp("lazy") / "table.avi", images)


def _spoil_jpegs(path, which):
    """The file with the JPEG start marker of each frame in `which` (counted from 0) broken."""
    data = bytearray(path.read_bytes())
    starts = [i for i in range(len(data) - 2) if data[i:i + 3] == b"\xff\xd8\xff"]
    for k in which:
        data[starts[k]:starts[k] + 2] = b"\x00\x00"
    path.write_bytes(bytes(data))


def test_frames_come_grey_with_the_cameras_jpeg_for_colour(table_video):
    with VideoSource(table_video) as colour, VideoSource(table_video, lazy_colour=True) as lazy:
        pairs = list(zip(colour, lazy))
    assert len(pairs) == 3
    for c, g in pairs:
        assert isinstance(g.image, JpegGray) and g.image.ndim == 2 and g.image.jpeg[:2] == b"\xff\xd8"
        # The tracker's grey is a plain array over the same pixels.
        assert type(g.gray) is np.ndarray and np.shares_memory(g.gray, g.image)
        # The JPEG's own luma against a conversion of its decoded colour: a level or so apart.
        diff = np.abs(g.gray.astype(int) - cv2.cvtColor(c.image, cv2.COLOR_BGR2GRAY))
        assert diff.mean() < 1.0 and diff.max() <= 6
        # Colour when asked: the same picture the colour source gives (two decoders of one JPEG).
        back = in_colour(g.image)
        assert back.shape == c.image.shape and np.abs(back.astype(int) - c.image).mean() < 1.5
        assert in_colour(g.image) is back                   # decoded once, however many pages ask
        # A crop is not the whole frame's JPEG: it stays grey.
        crop = g.image[100:200, 100:300]
        assert crop.jpeg is None and in_colour(crop) is crop


def test_the_cars_are_located_the_same_from_grey(table_video, demo_table, renderer):
    def poses(source):
        live = LiveTable(source, demo_table, renderer.camera)
        last = None
        for frame in source:
            last = live.process(frame.image, frame.index, frame.time_s, gray=frame.gray)
        return {c.id: (c.x_mm, c.y_mm, c.heading_deg) for c in last.located.cars}

    colour, grey = poses(VideoSource(table_video)), poses(VideoSource(table_video, lazy_colour=True))
    assert set(colour) == set(grey) == {t.id for t in POSES}
    for m in colour:
        assert np.hypot(colour[m][0] - grey[m][0], colour[m][1] - grey[m][1]) < 0.05
        assert abs(colour[m][2] - grey[m][2]) < 0.1


def test_a_frame_cut_short_is_skipped_not_taken_for_the_end(table_video, tmp_path):
    spoilt = tmp_path / "hiccup.avi"
    spoilt.write_bytes(table_video.read_bytes())
    _spoil_jpegs(spoilt, [1])
    with VideoSource(spoilt, lazy_colour=True) as source:
        frames = list(source)
        assert [f.index for f in frames] == [0, 2] and source.skipped == 1


def test_a_stream_that_never_decodes_is_named(tmp_path):
    images = [np.full((48, 64, 3), k, np.uint8) for k in range(VideoSource.BAD_FRAMES_IN_A_ROW + 2)]
    path = _write(tmp_path / "noise.avi", images)
    _spoil_jpegs(path, range(len(images)))
    with VideoSource(path, lazy_colour=True) as source, pytest.raises(SourceError) as err:
        source.read()
    assert "noise.avi" in str(err.value) and "frames in a row are not JPEG pictures" in str(err.value)


def test_a_video_that_is_not_motion_jpeg_still_comes_in_colour(tmp_path, renderer):
    rng = np.random.default_rng(5)
    path = _write(tmp_path / "table.mp4", [renderer.render(POSES, rng).image for _ in range(2)], "mp4v")
    with VideoSource(path, lazy_colour=True) as source:
        frame = source.read()
    assert frame.image.ndim == 3 and not isinstance(frame.image, JpegGray)


def test_the_camera_tab_and_the_evidence_get_the_cameras_colour(table_video, demo_table, renderer):
    source = PrefetchSource(open_source_for_serving(str(table_video), demo_table))
    live = LiveTable(source, demo_table, renderer.camera)
    try:
        frame = source.read()
        live.process(frame.image, frame.index, frame.time_s, gray=frame.gray)
    finally:
        source.close()
    image, tracked = live.last_image()
    assert isinstance(image, JpegGray)          # what serve keeps: grey, with the camera's JPEG
    client = create_app(live, {"TESTING": True}).test_client()
    for path in ("/api/camera.jpg", "/api/rectified.jpg"):
        r = client.get(path)
        assert r.status_code == 200 and r.mimetype == "image/jpeg"
        shown = cv2.imdecode(np.frombuffer(r.data, np.uint8), cv2.IMREAD_UNCHANGED)
        # In colour: the table's print and the cars are not grey.
        assert shown.ndim == 3 and np.abs(shown[..., 2].astype(int) - shown[..., 0]).max() > 40, path
    # The evidence keeps the camera's own JPEG, byte for byte.
    jpeg, detections, pose = frame_evidence(image, tracked.located)
    assert jpeg == image.jpeg and len(detections) == len(tracked.located.detections)

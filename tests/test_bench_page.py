"""bench.page_server's webcam stand-in for the 4K latency bench: frames sent in order or
newest first, decoded in colour or grey, and a reader that keeps only the newest frame.
Checked on what the frames are (their numbers, their pixels), never on how long anything took."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from bench.page_server import NewestPrefetch, WebcamVideo
from vision.sources import Frame, FrameSource

FRAMES = 6


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    """A tiny MJPEG video whose frame k is filled with grey level 40 * k."""
    path = tmp_path_factory.mktemp("webcam") / "tiny.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (64, 48))
    assert writer.isOpened()
    for k in range(FRAMES):
        writer.write(np.full((48, 64, 3), 40 * k, np.uint8))
    writer.release()
    return path


def test_in_order_every_frame_in_turn_in_colour(video):
    camera = WebcamVideo(video, fps=1000.0)
    frames = [camera.read() for _ in range(FRAMES + 2)]
    assert [f.index for f in frames] == list(range(FRAMES + 2))
    assert camera.dropped == 0
    assert frames[0].image.shape == (48, 64, 3) and frames[0].gray is None
    # The frames loop: frame FRAMES is the first frame again.
    assert abs(int(frames[3].image.mean()) - 120) <= 3
    assert abs(int(frames[FRAMES].image.mean()) - 0) <= 3
    times = [f.captured_at for f in frames]
    assert times == sorted(times)


def test_newest_first_counts_what_it_skips_and_decodes_grey(video):
    camera = WebcamVideo(video, fps=1000.0, newest=True, gray=True)
    frames = []
    for _ in range(5):
        frames.append(camera.read())
        np.linalg.svd(np.ones((200, 200)))          # some work between reads, as locating is
    numbers = [f.index for f in frames]
    assert numbers == sorted(set(numbers))            # never the same frame twice, never back
    assert camera.dropped == numbers[-1] - (len(numbers) - 1)
    f = frames[-1]
    # Decoded as serve decodes a camera's JPEG: grey, the JPEG kept for colour on demand.
    assert f.image.ndim == 2 and np.shares_memory(f.gray, f.image) and f.image.jpeg[:2] == b"\xff\xd8"
    assert abs(int(f.image.mean()) - 40 * (f.index % FRAMES)) <= 3


class _Counted(FrameSource):
    """`n` frames numbered 0 to n-1, then the end."""

    def __init__(self, n: int) -> None:
        super().__init__("counted")
        self.n, self.k = n, 0

    def read(self):
        if self.k == self.n:
            return None
        self.k += 1
        return Frame(self.k - 1, np.zeros((4, 4), np.uint8), 0.0)


def test_newest_prefetch_never_goes_back_and_delivers_the_end():
    source = NewestPrefetch(_Counted(200))
    try:
        numbers = []
        while (frame := source.read()) is not None:
            numbers.append(frame.index)
            np.linalg.svd(np.ones((60, 60)))         # a slow reader: frames are replaced meanwhile
    finally:
        source.close()
    assert numbers == sorted(set(numbers))
    assert numbers[-1] == 199                        # the last frame is never the one dropped
    assert len(numbers) + source.replaced == 200

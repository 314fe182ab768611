"""The companion's server over a steady frame source: the demo's table, filmed once and
decoded again and again, for `bench.page`'s fan-out.

    python -m bench.page_server --video /tmp/demo-table.avi [--seconds 12] [--fps 0] [--port 0]

The synthetic demo renders every frame as it goes, and what a frame costs to render
depends on where the cars are, so its flat-out rate wanders by several per cent as its
script plays: too much to judge a 10 % drop from. Here the demo's first `--seconds` are
rendered once into a Motion-JPEG video (what a USB webcam sends), and the companion then
decodes that video in a loop, as it would a webcam's stream: the same frames, the same
work, lap after lap. The frame numbers run on across laps (the page and the benchmark
follow them), and each frame's capture time is the moment it was decoded.

Everything else is the product's own: `LiveTable`, the demo's game, the Flask app under
waitress (`companion.commands.serve._serve`). `--fps 0` plays the video flat out (the
pipeline's throughput); a number paces it like a camera.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import cv2

from companion.commands.serve import DEMO_RULES, _serve
from companion.live import LiveTable
from vision.sources import Frame, FrameSource, PrefetchSource, SourceError, SyntheticSource

RECORD_FPS = 15.0


def record(path: Path, seconds: float) -> None:
    """The demo's first `seconds`, rendered at the demo's 15 frames a second, as MJPG."""
    source = SyntheticSource(fps=RECORD_FPS, paced=False, duration_s=seconds)
    writer = None
    tmp = path.with_suffix(".part.avi")
    try:
        for frame in source:
            if writer is None:
                h, w = frame.image.shape[:2]
                writer = cv2.VideoWriter(str(tmp), cv2.VideoWriter_fourcc(*"MJPG"), RECORD_FPS, (w, h))
                if not writer.isOpened():
                    raise SystemExit(f"cannot write a video to {tmp}")
            writer.write(frame.image)
    finally:
        if writer is not None:
            writer.release()
    os.replace(tmp, path)


class LoopedVideo(FrameSource):
    """A video file decoded in a loop, its frame numbers running on across laps."""

    def __init__(self, path: Path, fps: float) -> None:
        super().__init__(f"{path.name}, looped")
        self.capture = cv2.VideoCapture(str(path))
        if not self.capture.isOpened():
            raise SourceError(f"cannot open the video {path}")
        self.fps = fps or None
        self._index = 0
        self._paced = 0                 # frames since the pace was last set
        self._start = time.monotonic()

    def read(self) -> Frame | None:
        if self.fps:
            due = self._start + self._paced / self.fps
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elif delay < -1.0 / self.fps:
                # Behind by more than a frame: a camera does not send the frames it made
                # meanwhile in a burst (its driver drops them), so go on from now.
                self._start, self._paced = time.monotonic(), 0
            self._paced += 1
        ok, image = self.capture.read()
        if not ok:                              # the end of a lap: back to its first frame
            self.capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, image = self.capture.read()
            if not ok:
                raise SourceError("the video gives no frames")
        frame = Frame(self._index, image, self._index / RECORD_FPS, f"lap frame {self._index}")
        self._index += 1
        return frame

    def close(self) -> None:
        self.capture.release()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--video", type=Path, required=True, help="the recording (made first if it is not there)")
    ap.add_argument("--seconds", type=float, default=12.0, help="seconds of the demo to record")
    ap.add_argument("--fps", type=float, default=0.0, help="frames a second to play at (0: flat out)")
    ap.add_argument("--port", type=int, default=0)
    args = ap.parse_args()
    if not args.video.exists():
        record(args.video, args.seconds)
    synthetic = SyntheticSource(paced=False)             # for its table and camera only
    live = LiveTable(PrefetchSource(LoopedVideo(args.video, args.fps)), synthetic.table, synthetic.camera)
    raise SystemExit(_serve(live, args.port, demo_rules=DEMO_RULES))


if __name__ == "__main__":
    main()

"""The companion's server over a steady frame source: the demo's table, filmed once and
decoded again and again, for `bench.page`'s fan-out.

    python -m bench.page_server --video /tmp/demo-table.avi [--seconds 12] [--fps 0] [--port 0]
    python -m bench.page_server --video 4k [--frames 300] [--fps 30]

`--video 4k`: instead of the demo, issue 26's big table (a 6 x 4 ft table, 16 cars, a
third of them driving, under a 3840 x 2160 webcam: `bench.speed4k`'s video, MJPEG q80 with
webcam noise, rendered once and cached), with its own table and camera file.

The synthetic demo renders every frame as it goes, and what a frame costs to render
depends on where the cars are, so its flat-out rate wanders by several per cent as its
script plays: too much to judge a 10 % drop from. Here the demo's first `--seconds` are
rendered once into a Motion-JPEG video (what a USB webcam sends), and the companion then
decodes that video in a loop, as it would a webcam's stream: the same frames, the same
work, lap after lap. The frame numbers run on across laps (the page and the benchmark
follow them), and each frame's capture time is the moment the camera would have sent it:
before its JPEG is decoded, since a webcam's frames reach the companion as JPEG and
decoding them is the companion's work (at 4K, 20-30 ms of a core).

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

    def __init__(self, path: Path, fps: float, record_fps: float = RECORD_FPS) -> None:
        super().__init__(f"{path.name}, looped")
        self.capture = cv2.VideoCapture(str(path))
        if not self.capture.isOpened():
            raise SourceError(f"cannot open the video {path}")
        self.fps = fps or None
        self.record_fps = record_fps
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
        captured = time.time()                  # sent by the camera now; decoding is ours
        ok, image = self.capture.read()
        if not ok:                              # the end of a lap: back to its first frame
            self.capture.set(cv2.CAP_PROP_POS_FRAMES, 0)
            ok, image = self.capture.read()
            if not ok:
                raise SourceError("the video gives no frames")
        frame = Frame(self._index, image, self._index / self.record_fps, f"lap frame {self._index}",
                      captured_at=captured)
        self._index += 1
        return frame

    def close(self) -> None:
        self.capture.release()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--video", required=True,
                    help="the recording (made first if it is not there), or 4k: bench.speed4k's 4K table video")
    ap.add_argument("--seconds", type=float, default=12.0, help="seconds of the demo to record")
    ap.add_argument("--fps", type=float, default=0.0, help="frames a second to play at (0: flat out)")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--frames", type=int, default=300, help="--video 4k: frames in the video (30 a second)")
    ap.add_argument("--cache", type=Path, default=Path("/tmp/bench-speed4k"),
                    help="--video 4k: where bench.speed4k keeps its rendered videos")
    args = ap.parse_args()
    if args.video == "4k":
        from bench.speed4k import FPS, make_scene, video
        from calibration.camera import CameraModel
        path = video("4k", args.frames, args.cache)
        table = make_scene("4k")[0]
        live = LiveTable(PrefetchSource(LoopedVideo(path, args.fps, FPS)), table,
                         CameraModel.from_yaml(path.with_suffix(".yml")))
        raise SystemExit(_serve(live, args.port, demo_rules=DEMO_RULES))
    path = Path(args.video)
    if not path.exists():
        record(path, args.seconds)
    synthetic = SyntheticSource(paced=False)             # for its table and camera only
    live = LiveTable(PrefetchSource(LoopedVideo(path, args.fps)), synthetic.table, synthetic.camera)
    raise SystemExit(_serve(live, args.port, demo_rules=DEMO_RULES))


if __name__ == "__main__":
    main()

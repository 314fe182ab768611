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
import json
import os
import queue
import time
from pathlib import Path

import cv2
import numpy as np

from companion.commands.serve import DEMO_RULES, _serve
from companion.live import LiveTable
from vision.sources import Frame, FrameSource, PrefetchSource, SourceError, SyntheticSource, gray_from_jpeg

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


class WebcamVideo(FrameSource):
    """A video's JPEG frames (read into memory once, undecoded) sent at `fps` as a webcam
    sends them over USB, whether or not the companion keeps up, decoded by the companion.

    `newest` False: as OpenCV hands a webcam's frames over today, in order; a reader that
    falls behind is given the next frame in turn (what the camera sent meanwhile waits in
    its buffers), so a frame's wait grows with the backlog. True: the newest frame sent,
    those sent meanwhile dropped undecoded (counted in `dropped`). `gray`: decoded straight
    to grey, the JPEG kept for colour on demand, as `serve` reads a camera's Motion-JPEG
    (vision.sources.gray_from_jpeg; a webcam's JPEG in grey costs two thirds of colour).
    A frame's capture time is when it was sent, before it is decoded."""

    live = True

    def __init__(self, path: Path, fps: float, newest: bool = False, gray: bool = False) -> None:
        super().__init__(f"{path.name}, sent as a webcam sends it")
        capture = cv2.VideoCapture(str(path))
        if not capture.isOpened() or not capture.set(cv2.CAP_PROP_FORMAT, -1):
            raise SourceError(f"cannot read the JPEG frames of {path}")
        self.packets = []
        while True:
            ok, packet = capture.read()
            if not ok:
                break
            self.packets.append(packet.reshape(-1).copy())
        capture.release()
        if not self.packets:
            raise SourceError("the video gives no frames")
        self.fps, self.newest, self.gray = fps, newest, gray
        self._sent = -1                     # the number of the last frame handed over
        self._start = time.monotonic()
        self._wall = time.time() - self._start      # monotonic to wall clock
        self.dropped = 0
        self.decode_s: dict[int, float] = {}
        self.decode_cpu_s: dict[int, float] = {}

    def read(self) -> Frame | None:
        now = time.monotonic()
        if self.newest:
            k = max(int((now - self._start) * self.fps), self._sent + 1)
        else:
            k = self._sent + 1
            if now - (self._start + k / self.fps) > 1.0 / self.fps:
                # Behind by more than a frame: go on from now, as LoopedVideo does.
                self._start = now - k / self.fps
        due = self._start + k / self.fps
        if due > now:
            time.sleep(due - now)
        self.dropped += k - self._sent - 1
        self._sent = k
        t0, c0 = time.perf_counter(), time.thread_time()
        packet = self.packets[k % len(self.packets)]
        # Grey: the product's own decode (what CameraSource does with a V4L2 camera's JPEG).
        image = gray_from_jpeg(packet) if self.gray else cv2.imdecode(packet, cv2.IMREAD_COLOR)
        self.decode_s[k], self.decode_cpu_s[k] = time.perf_counter() - t0, time.thread_time() - c0
        return Frame(k, image, k / self.fps, f"frame {k}", captured_at=self._wall + due,
                     gray=np.asarray(image) if self.gray else None)


class NewestPrefetch(PrefetchSource):
    """PrefetchSource keeping one decoded frame, the newest: a frame decoded while the
    locating thread is busy replaces the one waiting, instead of the reader waiting with it
    (a waiting frame only grows older). What a live camera's reader would do."""

    def __init__(self, inner: FrameSource) -> None:
        self.replaced = 0
        super().__init__(inner, depth=1)

    def _put(self, item) -> None:
        if not isinstance(item, Frame):         # the end, or an error: after the last frame, not instead
            super()._put(item)
            return
        while not self._stop.is_set():
            try:
                self._queue.put_nowait(item)
                return
            except queue.Full:
                try:
                    self._queue.get_nowait()      # only frames wait there: the end is put last
                    self.replaced += 1
                except queue.Empty:
                    pass


class TimedLiveTable(LiveTable):
    """LiveTable, each frame's steps timed (for `--profile`)."""

    def __init__(self, *args, **kwargs) -> None:
        self.times: list[dict] = []
        self._building = 0.0
        super().__init__(*args, **kwargs)

    def _build_snapshot(self) -> dict:
        t0 = time.perf_counter()
        snap = super()._build_snapshot()
        self._building = time.perf_counter() - t0
        return snap

    def process(self, image, frame_index, time_s, captured_at=None, gray=None):
        start = time.time()
        t0, c0 = time.perf_counter(), time.thread_time()
        tracked = super().process(image, frame_index, time_s, captured_at, gray=gray)
        t1, c1 = time.perf_counter(), time.thread_time()
        text = json.dumps(self.snapshot())
        self.times.append({"frame": frame_index, "waited": start - (captured_at or start),
                           "process": t1 - t0, "process_cpu": c1 - c0, "snapshot": self._building,
                           "json": time.perf_counter() - t1, "json_bytes": len(text),
                           "published": start + (t1 - t0) - (captured_at or start)})
        return tracked


def profile(live: TimedLiveTable, source: WebcamVideo, seconds: float) -> dict:
    """The companion alone (no server, no page) for `seconds`: where a frame's time goes."""
    live.start()
    time.sleep(2.0)                       # past the first frames' full scans
    n0, d0, t0 = len(live.times), source.dropped, time.monotonic()
    time.sleep(seconds)
    rows, dt = live.times[n0:], time.monotonic() - t0
    live.stop()
    ms = lambda key: {"median": round(1000 * float(np.median([r[key] for r in rows])), 1),  # noqa: E731
                      "p95": round(1000 * float(np.percentile([r[key] for r in rows], 95)), 1)}
    decode = [source.decode_s[r["frame"]] for r in rows if r["frame"] in source.decode_s]
    decode_cpu = [source.decode_cpu_s[r["frame"]] for r in rows if r["frame"] in source.decode_cpu_s]
    # Wall time grows with whatever else the machine runs; the thread's own CPU time much
    # less (OpenCV's pool workers, when it uses them, are not in it).
    return {"frames": len(rows), "fps": round(len(rows) / dt, 1), "dropped": source.dropped - d0,
            "decode_ms": {"median": round(1000 * float(np.median(decode)), 1),
                          "p95": round(1000 * float(np.percentile(decode, 95)), 1)},
            "decode_cpu_ms": {"median": round(1000 * float(np.median(decode_cpu)), 1),
                              "p95": round(1000 * float(np.percentile(decode_cpu, 95)), 1)},
            "capture_to_process_start_ms": ms("waited"), "process_ms": ms("process"),
            "process_cpu_ms": ms("process_cpu"),
            "snapshot_build_ms": ms("snapshot"), "json_ms": ms("json"),
            "json_bytes": int(np.median([r["json_bytes"] for r in rows])),
            "capture_to_published_ms": ms("published")}


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
    ap.add_argument("--newest", action="store_true", help="--video 4k: the newest frame sent, not the next")
    ap.add_argument("--gray", action="store_true", help="--video 4k: decoded straight to grey")
    ap.add_argument("--prefetch", type=int, default=3,
                    help="--video 4k: frames decoded ahead on a reader thread (PrefetchSource; 0: none; "
                         "-1: one, the newest decoded, NewestPrefetch)")
    ap.add_argument("--profile", type=float, default=0.0,
                    help="--video 4k: no server; the companion alone for this many seconds, each step timed")
    args = ap.parse_args()
    if args.video == "4k":
        from bench.speed4k import make_scene, video
        from calibration.camera import CameraModel
        path = video("4k", args.frames, args.cache)
        table = make_scene("4k")[0]
        camera = WebcamVideo(path, args.fps or 30.0, args.newest, args.gray)
        source = (NewestPrefetch(camera) if args.prefetch < 0 else
                  PrefetchSource(camera, args.prefetch) if args.prefetch else camera)
        kind = TimedLiveTable if args.profile else LiveTable
        live = kind(source, table, CameraModel.from_yaml(path.with_suffix(".yml")))
        if args.profile:
            print(json.dumps({"newest": args.newest, "gray": args.gray, "prefetch": args.prefetch,
                              **profile(live, camera, args.profile)}), flush=True)
            return
        raise SystemExit(_serve(live, args.port, demo_rules=DEMO_RULES))
    path = Path(args.video)
    if not path.exists():
        record(path, args.seconds)
    synthetic = SyntheticSource(paced=False)             # for its table and camera only
    live = LiveTable(PrefetchSource(LoopedVideo(path, args.fps)), synthetic.table, synthetic.camera)
    raise SystemExit(_serve(live, args.port, demo_rules=DEMO_RULES))


if __name__ == "__main__":
    main()

"""Speed of the whole pipeline over a 1080p video, against a bare detectMarkers loop.

    python -m bench.speed [--frames 600] [--cars 12] [--codec MJPG]

Renders a 1080p video of the demo game on a table of `--cars` cars (MJPEG, as a
webcam sends 1080p), then times, over the same frames in the same run:

- bare: decode + grey + OpenCV's detectMarkers with default parameters;
- pipeline: decode (on a reader thread, as `companion serve` does) + detect +
  refine + locate + track, every car's pose out.

Prints frames per second for both and the process's peak memory.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from calibration.camera import CameraModel
from vision.demo import DemoScript
from vision.pipeline import TablePipeline
from vision.render import TableRenderer
from vision.sources import PrefetchSource, VideoSource

from vision.render import RenderOptions

from .scenes import bench_table

#: A webcam's picture: sensor noise of a few grey levels, fresh every frame (the
#: renderer reads it from a noise bank at a random offset), a little blur and
#: light falling off across the table; then the video writer's JPEG at a
#: webcam's quality (WEBCAM_JPEG_QUALITY) for every frame of the MJPEG stream.
WEBCAM = RenderOptions(noise_sigma=4.0, blur_sigma=0.8, light_gradient=0.25, jpeg_quality=None)
WEBCAM_JPEG_QUALITY = 80


def write_video(path: Path, frames: int, cars: int, codec: str, fps: float = 30.0):
    table = bench_table(cars, np.random.default_rng(7))
    renderer = TableRenderer.overhead(table, options=WEBCAM, seed=7)
    script = DemoScript(table)
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*codec), fps, renderer.camera.image_size)
    if not writer.isOpened():
        raise SystemExit(f"cannot write {codec} video here")
    writer.set(cv2.VIDEOWRITER_PROP_QUALITY, WEBCAM_JPEG_QUALITY)
    for i in range(frames):
        writer.write(renderer.render(script.poses_at(i / fps)).image)
    writer.release()
    return table, renderer.camera


def bare_loop(path: Path) -> tuple[float, int]:
    cap = cv2.VideoCapture(str(path))
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50),
                                       cv2.aruco.DetectorParameters())
    n, found = 0, 0
    start = time.perf_counter()
    while True:
        ok, frame = cap.read()
        if not ok:
            break
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        _, ids, _ = detector.detectMarkers(gray)
        found += 0 if ids is None else len(ids)
        n += 1
    elapsed = time.perf_counter() - start
    cap.release()
    return n / elapsed, found


def pipeline_loop(path: Path, table, camera) -> tuple[float, int, int]:
    pipeline = TablePipeline(table, camera)
    n, full, cars_seen = 0, 0, 0
    start = time.perf_counter()
    with PrefetchSource(VideoSource(path)) as source:
        for frame in source:
            tracked = pipeline.process(frame.image, frame.index, frame.time_s, gray=frame.gray)
            n += 1
            full += tracked.full_scan
            cars_seen += sum(c.seen for c in tracked.cars)
    elapsed = time.perf_counter() - start
    return n / elapsed, full, cars_seen


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=600)
    ap.add_argument("--cars", type=int, default=12)
    ap.add_argument("--codec", default="MJPG")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each loop; the best is kept")
    ap.add_argument("--write-only", metavar="PATH", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write_only:
        table, camera = write_video(Path(args.write_only), args.frames, args.cars, args.codec)
        camera.to_yaml(Path(args.write_only).with_suffix(".yml"))
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "table.avi"
        # Rendered in a child process, so the peak memory below is the pipeline's alone.
        subprocess.run([sys.executable, "-m", "bench.speed", "--write-only", str(path), "--frames",
                        str(args.frames), "--cars", str(args.cars), "--codec", args.codec], check=True)
        table = bench_table(args.cars, np.random.default_rng(7))
        camera = CameraModel.from_yaml(path.with_suffix(".yml"))
        bare, pipe = [], []
        for _ in range(args.repeat):          # interleaved, so both see the same machine
            bare.append(bare_loop(path))
            pipe.append(pipeline_loop(path, table, camera))
        best_bare = max(bare)
        best_pipe = max(pipe)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({
        "frames": args.frames, "cars": args.cars, "codec": args.codec,
        "bare_detect_fps": round(best_bare[0], 1),
        "pipeline_fps": round(best_pipe[0], 1),
        "pipeline_full_scans": best_pipe[1],
        "car_sightings_per_frame": round(best_pipe[2] / args.frames, 2),
        "peak_rss_mb": round(rss_mb, 1),
    }))


if __name__ == "__main__":
    main()

"""Speed on the tables people play on, with cars moving: our pipeline against bare
detectMarkers over the same frames in the same run (issue 26).

    python -m bench.speed4k [--only 4k|1080p] [--frames 300] [--repeat 2] [--cache DIR]

Two videos are rendered once (in a child process, MJPEG at a webcam's quality 80,
webcam noise) and cached in a temp dir (`--cache`, default /tmp/bench-speed4k):

- 4k: a 6 x 4 ft table under a 3840 x 2160 webcam 1.7 m up (bench.scenes.big_scene),
  16 cars with 20 mm roof markers;
- 1080p: the 4 ft x 2 ft 8 in bench table (bench.scenes.bench_table) under a 1080p
  webcam, 12 cars.

In both a third of the cars drive all the time at a hand's pace, 2 mm a frame
(60 mm/s at 30 fps), nose to tail round a stadium, so they turn on its bends as
well; the rest stand where they were put.  Then, alternating `--repeat` times:

- bare: decode + grey + OpenCV's detectMarkers with default parameters;
- ours: decode on the reader thread (PrefetchSource) + detect + refine + locate +
  track, every car's pose out.

For each: frames per second, per-frame time p50/p95 (ours: from the frame coming
off the reader's queue to its poses; bare: decode + detect), cars found per frame
against the cars in view; for ours, position and heading errors against the truth
(p50/p95/max over every car of every frame).  Prints one JSON line per video.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.tablefile import TableSpec
from vision.demo import Stadium
from vision.pipeline import TablePipeline
from vision.render import CarTruth, RenderOptions, TableRenderer
from vision.sources import PrefetchSource, VideoSource

from .scenes import big_scene, bench_table

#: The picture before the video writer's own JPEG (quality JPEG_QUALITY).
WEBCAM = RenderOptions(noise_sigma=4.0, blur_sigma=0.8, light_gradient=0.25, jpeg_quality=None)
JPEG_QUALITY = 80
FPS = 30.0
#: A hand's pace: 2 mm a frame at 30 frames a second.
STEP_MM = 2.0
#: Bumper to bumper along the track for the drivers.
SPACING_MM = 150.0

SETUPS = {
    "4k": {"cars": 16, "seed": 26},
    "1080p": {"cars": 12, "seed": 7},
}


def make_scene(kind: str) -> tuple[TableSpec, TableRenderer]:
    setup = SETUPS[kind]
    if kind == "4k":
        scene = big_scene(setup["seed"], n_cars=setup["cars"], options=WEBCAM)
        return scene.table, scene.renderer
    table = bench_table(setup["cars"], np.random.default_rng(setup["seed"]))
    return table, TableRenderer.overhead(table, options=WEBCAM, seed=setup["seed"])


class Motion:
    """A third of the cars (at least) drive nose to tail round a stadium at STEP_MM a
    frame; the others stand at random spots clear of its lane and of the anchors."""

    def __init__(self, table: TableSpec, seed: int) -> None:
        w, d = table.width_mm, table.depth_mm
        radius = 0.5 * d - 190.0
        self.track = Stadium(w / 2, d / 2, max(0.5 * w - 190.0 - radius, 0.0), radius)
        ids = list(table.car_ids)
        n_moving = math.ceil(len(ids) / 3)
        self.moving = ids[:n_moving]
        rng = np.random.default_rng(seed)
        lane = np.array([self.track.pose_at(s)[:2] for s in np.arange(0, self.track.length, 10.0)])
        self.standing: list[CarTruth] = []
        for car_id in ids[n_moving:]:
            for _ in range(5000):
                x, y = rng.uniform(90, w - 90), rng.uniform(110, d - 110)
                if (np.min(np.hypot(lane[:, 0] - x, lane[:, 1] - y)) > 105
                        and all(math.hypot(x - p.x_mm, y - p.y_mm) > 95 for p in self.standing)):
                    self.standing.append(CarTruth(car_id, float(x), float(y), float(rng.uniform(-180, 180))))
                    break
            else:
                raise SystemExit(f"no room for car {car_id} off the drivers' lane")

    def poses_at(self, frame: int) -> list[CarTruth]:
        out = list(self.standing)
        for k, car_id in enumerate(self.moving):
            x, y, heading = self.track.pose_at(frame * STEP_MM + k * SPACING_MM)
            out.append(CarTruth(car_id, x, y, heading))
        return out


def write_video(kind: str, frames: int, path: Path) -> None:
    table, renderer = make_scene(kind)
    motion = Motion(table, SETUPS[kind]["seed"])
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), FPS, renderer.camera.image_size)
    if not writer.isOpened():
        raise SystemExit("cannot write MJPEG video here")
    writer.set(cv2.VIDEOWRITER_PROP_QUALITY, JPEG_QUALITY)
    truth = []
    for i in range(frames):
        rendered = renderer.render(motion.poses_at(i))
        writer.write(rendered.image)
        truth.append({"visible": list(rendered.visible_cars),
                      "cars": {str(c.id): [c.x_mm, c.y_mm, c.heading_deg] for c in rendered.cars.values()}})
    writer.release()
    renderer.camera.to_yaml(path.with_suffix(".yml"))
    path.with_suffix(".json").write_text(json.dumps(truth))


def video(kind: str, frames: int, cache: Path) -> Path:
    """The cached video (rendered in a child process the first time)."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / f"{kind}-{frames}.avi"
    if not path.with_suffix(".json").is_file():
        subprocess.run([sys.executable, "-m", "bench.speed4k", "--write-only", str(path),
                        "--only", kind, "--frames", str(frames)], check=True)
    return path


def bare_loop(path: Path, car_ids: set[int]) -> dict:
    cap = cv2.VideoCapture(str(path))
    detector = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50),
                                       cv2.aruco.DetectorParameters())
    times, found = [], []
    start = time.perf_counter()
    while True:
        t0 = time.perf_counter()
        ok, frame = cap.read()
        if not ok:
            break
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        _, ids, _ = detector.detectMarkers(gray)
        times.append(time.perf_counter() - t0)
        found.append(0 if ids is None else len(set(ids.reshape(-1).tolist()) & car_ids))
    elapsed = time.perf_counter() - start
    cap.release()
    return {"fps": len(times) / elapsed, "times": times, "found": found}


def pipeline_loop(path: Path, table: TableSpec, camera: CameraModel) -> dict:
    pipeline = TablePipeline(table, camera)
    times, found, poses, full = [], [], [], 0
    start = time.perf_counter()
    with PrefetchSource(VideoSource(path, gray=True)) as source:
        while True:
            t0 = time.perf_counter()
            frame = source.read()
            if frame is None:
                break
            t1 = time.perf_counter()
            tracked = pipeline.process(frame.image, frame.index, frame.time_s, gray=frame.gray)
            times.append(time.perf_counter() - t1)
            full += tracked.full_scan
            seen = [c for c in tracked.cars if c.seen]
            found.append(len(seen))
            poses.append({c.id: (c.x_mm, c.y_mm, c.heading_deg) for c in seen})
    elapsed = time.perf_counter() - start
    return {"fps": len(times) / elapsed, "times": times, "found": found, "poses": poses, "full": full}


def _pct(values, q) -> float:
    return float(np.percentile(values, q)) if len(values) else float("nan")


def run(kind: str, frames: int, repeat: int, cache: Path) -> dict:
    path = video(kind, frames, cache)
    table, _ = make_scene(kind)
    camera = CameraModel.from_yaml(path.with_suffix(".yml"))
    truth = json.loads(path.with_suffix(".json").read_text())
    car_ids = set(table.car_ids)
    bare, ours = [], []
    for _ in range(repeat):                   # alternating, so both see the same machine
        bare.append(bare_loop(path, car_ids))
        ours.append(pipeline_loop(path, table, camera))
    b = max(bare, key=lambda r: r["fps"])
    o = max(ours, key=lambda r: r["fps"])
    visible = [len(t["visible"]) for t in truth]
    moving = set(Motion(table, SETUPS[kind]["seed"]).moving)
    pos_err, head_err, pos_err_moving = [], [], []
    for poses, t in zip(o["poses"], truth):
        for car_id, (x, y, h) in poses.items():
            tx, ty, th = t["cars"][str(car_id)]
            e = math.hypot(x - tx, y - ty)
            pos_err.append(e)
            (pos_err_moving if car_id in moving else []).append(e)
            head_err.append(abs((h - th + 180.0) % 360.0 - 180.0))
    ms = lambda v, q: round(1000 * _pct(v, q), 1)  # noqa: E731
    return {
        "video": kind, "frames": len(truth), "cars": len(car_ids), "moving": len(moving),
        "size": list(camera.image_size),
        "bare_fps": round(b["fps"], 1), "ours_fps": round(o["fps"], 1),
        "ratio": round(o["fps"] / b["fps"], 2),
        "bare_frame_ms_p50_p95": [ms(b["times"], 50), ms(b["times"], 95)],
        "ours_frame_ms_p50_p95": [ms(o["times"], 50), ms(o["times"], 95)],
        "ours_full_scans": o["full"],
        "cars_in_view_per_frame": round(float(np.mean(visible)), 2),
        "bare_cars_per_frame": round(float(np.mean(b["found"])), 2),
        "ours_cars_per_frame": round(float(np.mean(o["found"])), 2),
        "ours_frames_missing_a_car": int(sum(f < v for f, v in zip(o["found"], visible))),
        "ours_pos_err_mm_p50_p95_max": [round(_pct(pos_err, 50), 2), round(_pct(pos_err, 95), 2),
                                        round(max(pos_err, default=float("nan")), 2)],
        "ours_moving_pos_err_mm_p95": round(_pct(pos_err_moving, 95), 2),
        "ours_heading_err_deg_p50_p95_max": [round(_pct(head_err, 50), 2), round(_pct(head_err, 95), 2),
                                             round(max(head_err, default=float("nan")), 2)],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", choices=sorted(SETUPS), action="append")
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=2, help="runs of each loop, alternating; the best is kept")
    ap.add_argument("--cache", default="/tmp/bench-speed4k", help="where the rendered videos are kept")
    ap.add_argument("--write-only", metavar="PATH", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.write_only:
        write_video(args.only[0], args.frames, Path(args.write_only))
        return
    for kind in args.only or ["4k", "1080p"]:
        print(json.dumps(run(kind, args.frames, args.repeat, Path(args.cache))), flush=True)


if __name__ == "__main__":
    main()

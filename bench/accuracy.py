"""Accuracy of car poses on rendered 1080p tables, easy and hard.

    python -m bench.accuracy [--scenes 8] [--frames 10] [--cars 12]

For each level, `--scenes` tables (random cars with roofs 25-40 mm, a webcam
1.0-1.2 m up at a random offset, its own lens), each rendered `--frames` times
with the cars at random poses. Every frame is located alone (no tracking), as
`companion locate` does a single image. Then, for the still-car figure, each
scene's cars stand for 10 frames of fresh sensor noise and go through the
tracker.

Reported per level:
- position and heading error, median and p95, single frames;
- detection rate: cars found over cars in view;
- two-sigma coverage: the share of errors within 2 sigma, with the locator
  given roof heights measured to +-0.5 mm (as the table file's roof_sigma_mm
  says) and, separately, exact roofs with roof_sigma_mm = 0;
- heading p95 of a car standing still 10 frames, after tracking;
- the same single-frame errors without a camera file (camera estimated).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math

import numpy as np

from vision.locate import Locator
from vision.pipeline import TablePipeline

from .scenes import LEVELS, random_poses, random_scene


def _heading_error(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)


def _p(values, q):
    return round(float(np.percentile(values, q)), 3) if len(values) else None


def measure_level(level: str, scenes: int, frames: int, cars: int, seed0: int) -> dict:
    pos, head, pos_est, head_est, cover_est = [], [], [], [], []
    found = in_view = 0
    cover_measured, cover_exact = [], []
    still_head, still_pos = [], []
    for k in range(scenes):
        seed = seed0 + k
        scene = random_scene(level, cars, seed)
        rng = np.random.default_rng(seed)
        table = scene.table
        measured = dataclasses.replace(table, roof_sigma_mm=0.5, cars=tuple(
            dataclasses.replace(c, roof_mm=c.roof_mm + float(rng.normal(0.0, 0.5))) for c in table.cars))
        exact = dataclasses.replace(table, roof_sigma_mm=0.0)
        calibrated = Locator(exact, scene.renderer.camera)
        with_measured_roofs = Locator(measured, scene.renderer.camera)
        estimated = Locator(exact, None)
        for _ in range(frames):
            frame = scene.renderer.render(random_poses(table, rng), rng)
            visible = set(frame.visible_cars)
            located = calibrated.locate(frame.image)
            in_view += len(visible)
            found += len(visible & {c.id for c in located.cars})
            for car in located.cars:
                t = frame.cars[car.id]
                d = math.hypot(car.x_mm - t.x_mm, car.y_mm - t.y_mm)
                h = _heading_error(car.heading_deg, t.heading_deg)
                pos.append(d)
                head.append(h)
                cover_exact.append((d <= 2 * car.sigma_mm, h <= 2 * car.sigma_deg))
            for car in with_measured_roofs.locate(frame.image).cars:
                t = frame.cars[car.id]
                cover_measured.append((math.hypot(car.x_mm - t.x_mm, car.y_mm - t.y_mm) <= 2 * car.sigma_mm,
                                       _heading_error(car.heading_deg, t.heading_deg) <= 2 * car.sigma_deg))
            for car in estimated.locate(frame.image).cars:
                t = frame.cars[car.id]
                pos_est.append(math.hypot(car.x_mm - t.x_mm, car.y_mm - t.y_mm))
                head_est.append(_heading_error(car.heading_deg, t.heading_deg))
                cover_est.append(pos_est[-1] <= 2 * car.sigma_mm)
        # Cars standing still for 10 frames, through the tracker.
        pipeline = TablePipeline(exact, scene.renderer.camera)
        poses = random_poses(table, rng)
        for i in range(10):
            tracked = pipeline.process(scene.renderer.render(poses, rng).image, i, i / 30)
        truth = {p.id: p for p in poses}
        for car in tracked.cars:
            if car.seen:
                still_head.append(_heading_error(car.heading_deg, truth[car.id].heading_deg))
                still_pos.append(math.hypot(car.x_mm - truth[car.id].x_mm, car.y_mm - truth[car.id].y_mm))
    cm, ce = np.array(cover_measured), np.array(cover_exact)
    return {
        "level": level, "options": dataclasses.asdict(LEVELS[level]),
        "cars_measured": len(pos),
        "position_mm": {"median": _p(pos, 50), "p95": _p(pos, 95)},
        "heading_deg": {"median": _p(head, 50), "p95": _p(head, 95)},
        "detection_rate": round(found / in_view, 5),
        "two_sigma_coverage_roofs_measured": {"position": round(float(cm[:, 0].mean()), 3),
                                              "heading": round(float(cm[:, 1].mean()), 3)},
        "two_sigma_coverage_exact_roofs": {"position": round(float(ce[:, 0].mean()), 3),
                                           "heading": round(float(ce[:, 1].mean()), 3)},
        "still_10_frames": {"heading_p95_deg": _p(still_head, 95), "position_p95_mm": _p(still_pos, 95),
                            "cars": len(still_head)},
        "no_camera_file": {"position_mm": {"median": _p(pos_est, 50), "p95": _p(pos_est, 95)},
                           "heading_deg": {"median": _p(head_est, 50), "p95": _p(head_est, 95)},
                           "two_sigma_coverage_position": round(float(np.mean(cover_est)), 3)},
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scenes", type=int, default=8)
    ap.add_argument("--frames", type=int, default=10)
    ap.add_argument("--cars", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1000, help="first scene's seed (tuning used 0-99)")
    args = ap.parse_args()
    for level in ("easy", "hard"):
        print(json.dumps(measure_level(level, args.scenes, args.frames, args.cars, args.seed)), flush=True)


if __name__ == "__main__":
    main()

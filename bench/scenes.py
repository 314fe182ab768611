"""Rendered benchmark tables: many cars at random poses and roof heights, cameras
about 1.1 m up at random offsets, in an easy and a hard rendering."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from calibration.tablefile import AnchorSpec, CarSpec, TableSpec
from vision.render import CarTruth, RenderOptions, TableRenderer, overhead_camera

EASY = RenderOptions(noise_sigma=2.0, blur_sigma=0.6, light_gradient=0.0, jpeg_quality=None)
HARD = RenderOptions(noise_sigma=5.0, blur_sigma=1.1, light_gradient=0.45, jpeg_quality=75)
LEVELS = {"easy": EASY, "hard": HARD}


def bench_table(n_cars: int, rng: np.random.Generator) -> TableSpec:
    """A 4 ft x 2 ft 8 in table, six anchors, `n_cars` 1:64 cars with roofs 25-40 mm high."""
    w, d = 1219.2, 812.8
    anchors = tuple(AnchorSpec(i, x, y, 60.0) for i, (x, y) in enumerate(
        [(50, 50), (w - 50, 50), (w - 50, d - 50), (50, d - 50), (w / 2, 45), (w / 2, d - 45)]))
    cars = []
    for k in range(n_cars):
        length = float(rng.uniform(68, 82))
        cars.append(CarSpec(10 + k, f"car {10 + k}", length, float(rng.uniform(29, 34)),
                            float(rng.uniform(25, 40)), 20.0, (float(rng.uniform(-6, 6)), 0.0)))
    return TableSpec(w, d, "DICT_4X4_50", anchors, tuple(cars), source="<bench table>")


def random_poses(table: TableSpec, rng: np.random.Generator) -> list[CarTruth]:
    """Non-overlapping poses anywhere on the table clear of the anchors."""
    placed: list[CarTruth] = []
    for spec in table.cars:
        for _ in range(500):
            x = rng.uniform(90, table.width_mm - 90)
            y = rng.uniform(100, table.depth_mm - 100)
            if all(math.hypot(x - p.x_mm, y - p.y_mm) > 95 for p in placed):
                placed.append(CarTruth(spec.id, float(x), float(y), float(rng.uniform(-180, 180))))
                break
    return placed


@dataclass
class Scene:
    table: TableSpec
    renderer: TableRenderer


def random_scene(level: str, n_cars: int, seed: int) -> Scene:
    """A table and a webcam 1.0-1.2 m up, off-centre by up to 10 cm, with its own lens."""
    rng = np.random.default_rng(seed)
    table = bench_table(n_cars, rng)
    k1 = float(rng.uniform(-0.12, -0.02))
    camera, rvec, tvec = overhead_camera(
        table, height_mm=float(rng.uniform(1000, 1200)), behind_mm=float(rng.uniform(50, 250)),
        dist_coeffs=(k1, -0.2 * k1, 0.0, 0.0, 0.0), fill=float(rng.uniform(0.9, 0.97)))
    return Scene(table, TableRenderer(table, camera, rvec, tvec, LEVELS[level], seed=seed))

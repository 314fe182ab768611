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


#: The tables people play on (issue 26): Open Fire's common largest, 6 x 4 ft.
SIX_BY_FOUR_MM = (1828.8, 1219.2)
#: A webcam's picture of a big table: fresh sensor noise, a little blur, light
#: falling off across the table, and the MJPEG stream's JPEG.
WEBCAM_BIG = RenderOptions(noise_sigma=4.0, blur_sigma=0.8, light_gradient=0.25, jpeg_quality=80)


def big_table(width_mm: float, depth_mm: float, n_cars: int, rng: np.random.Generator,
              marker_mm: float = 20.0) -> TableSpec:
    """A `width_mm` x `depth_mm` table with eight 60 mm anchors (the corners and the
    middle of each edge) and `n_cars` 1:64 cars, roofs 25-40 mm high."""
    w, d = width_mm, depth_mm
    spots = [(50, 50), (w - 50, 50), (w - 50, d - 50), (50, d - 50),
             (w / 2, 45), (w / 2, d - 45), (45, d / 2), (w - 45, d / 2)]
    anchors = tuple(AnchorSpec(i, float(x), float(y), 60.0) for i, (x, y) in enumerate(spots))
    cars = []
    for k in range(n_cars):
        cars.append(CarSpec(10 + k, f"car {10 + k}", float(rng.uniform(68, 82)), float(rng.uniform(29, 34)),
                            float(rng.uniform(25, 40)), marker_mm, (float(rng.uniform(-6, 6)), 0.0)))
    return TableSpec(w, d, "DICT_4X4_50", anchors, tuple(cars), source="<big bench table>")


def big_scene(seed: int, size_mm: tuple[float, float] = SIX_BY_FOUR_MM, n_cars: int = 16,
              resolution: tuple[int, int] = (3840, 2160), height_mm: float = 1700.0,
              options: RenderOptions = WEBCAM_BIG, marker_mm: float = 20.0) -> Scene:
    """A big table under one webcam `height_mm` up (1.7 m for 6 x 4 ft), off-centre
    by up to 15 cm, with its own lens, at `resolution`."""
    rng = np.random.default_rng(seed)
    table = big_table(size_mm[0], size_mm[1], n_cars, rng, marker_mm)
    k1 = float(rng.uniform(-0.12, -0.02))
    camera, rvec, tvec = overhead_camera(
        table, width=resolution[0], height=resolution[1], height_mm=height_mm,
        behind_mm=float(rng.uniform(50, 150)), dist_coeffs=(k1, -0.2 * k1, 0.0, 0.0, 0.0),
        fill=float(rng.uniform(0.92, 0.97)))
    return Scene(table, TableRenderer(table, camera, rvec, tvec, options, seed=seed))

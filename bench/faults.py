"""The pipeline against rendered faults: a knocked camera, anchors covered, thin
margins round the roof markers, a marker half covered.

    python -m bench.faults            # --seed 1000 --frames 24

Each fault runs a rendered 1080p table (12 cars standing still, easy
rendering) through the pipeline (tracking, region scans between full scans) and
reports, over the frames after the fault:

- `confident_wrong`: car-frames reported fresh (not stale) with a position or
  heading error beyond 2 sigma; `wrong_frames`: frames where more than a
  quarter of the fresh cars are (the whole table off: a pose gone wrong, not
  one car's noise);
- `stale`: car-frames marked stale; `vanished`: car-frames of a configured car
  in neither `cars` nor `missing`;
- what the snapshot said (`table_moved` frames, `pose_checked` false frames).
"""

from __future__ import annotations

import argparse
import json
import math

import cv2
import numpy as np

from bench.scenes import EASY, HARD, bench_table, random_poses
from vision.pipeline import TablePipeline
from vision.render import TableRenderer, overhead_camera


def knocked(rvec: np.ndarray, tvec: np.ndarray, degrees: float, shift_mm: float) -> tuple[np.ndarray, np.ndarray]:
    """The camera turned `degrees` about its own x axis and moved `shift_mm` sideways."""
    r, _ = cv2.Rodrigues(rvec)
    turn, _ = cv2.Rodrigues(np.array([math.radians(degrees), 0.0, 0.0]))
    r2 = turn @ r
    centre = -r.T @ tvec + np.array([shift_mm, 0.0, 0.0])
    rv, _ = cv2.Rodrigues(r2)
    return rv.reshape(3), -r2 @ centre


def _cover_anchors(image: np.ndarray, renderer: TableRenderer) -> np.ndarray:
    out = image.copy()
    for corners in renderer.anchor_corners_px().values():
        c = corners.mean(axis=0)
        big = c + 1.6 * (corners - c)        # the white margin too: a hand or a book over it
        cv2.fillConvexPoly(out, np.round(big).astype(np.int32), (120, 130, 120))
    return out


def _cover_half(image: np.ndarray, corners: np.ndarray) -> np.ndarray:
    """Grey over the marker's front half (corners 0, 1 and half way down), as a finger."""
    out = image.copy()
    c = corners
    poly = np.array([c[0] + 0.3 * (c[0] - c[3]), c[1] + 0.3 * (c[1] - c[2]),
                     (c[1] + c[2]) / 2, (c[0] + c[3]) / 2])
    cv2.fillConvexPoly(out, np.round(poly).astype(np.int32), (90, 110, 160))
    return out


def _score(tracked, truth, report: dict, table) -> None:
    fresh = [c for c in tracked.cars if not c.stale]
    wrong = 0
    for c in fresh:
        t = truth[c.id]
        dp = math.hypot(c.x_mm - t.x_mm, c.y_mm - t.y_mm)
        dh = abs((c.heading_deg - t.heading_deg + 180) % 360 - 180)
        report["errors"].append((dp, c.sigma_mm, dh, c.sigma_deg))
        if dp > 2 * c.sigma_mm or dh > 2 * c.sigma_deg:
            wrong += 1
    report["confident_wrong"] += wrong
    report["wrong_frames"] += int(fresh != [] and wrong > len(fresh) / 4)
    report["stale"] += len(tracked.cars) - len(fresh)
    listed = {c.id for c in tracked.cars} | set(tracked.missing)
    report["vanished"] += sum(i not in listed for i in table.car_ids)
    report["table_moved_frames"] += int(getattr(tracked.located, "table_moved", False))
    report["pose_unchecked_frames"] += int(not getattr(tracked.located, "pose_checked", True))


def run(seed: int = 1000, frames: int = 24) -> dict:
    rng = np.random.default_rng(seed)
    table = bench_table(12, rng)
    camera, rvec, tvec = overhead_camera(table)
    base = TableRenderer(table, camera, rvec, tvec, EASY, seed=seed)
    rv2, tv2 = knocked(rvec, tvec, 0.3, 3.0)
    moved = TableRenderer(table, camera, rv2, tv2, EASY, seed=seed)
    shift = float(np.median(np.linalg.norm(
        np.concatenate(list(moved.anchor_corners_px().values()))
        - np.concatenate(list(base.anchor_corners_px().values())), axis=1)))
    truth = {c.id: c for c in random_poses(table, rng)}
    cars = list(truth.values())
    out: dict = {"knock_shift_px": round(shift, 1)}
    fault_at = frames // 3

    def new_report() -> dict:
        return {"confident_wrong": 0, "wrong_frames": 0, "stale": 0, "vanished": 0,
                "table_moved_frames": 0, "pose_unchecked_frames": 0, "errors": []}

    scenarios = {
        # The camera knocked: every frame after it seen from the new place.
        "knocked_camera": lambda k: (moved if k >= fault_at else base).render(cars, rng).image,
        # Every anchor covered for a third of the run, the camera knocked while they are.
        "anchors_covered_then_knocked": lambda k: (
            _cover_anchors((moved if k >= fault_at + 2 else base).render(cars, rng).image, base)
            if fault_at <= k < 2 * fault_at else (moved if k >= fault_at + 2 else base).render(cars, rng).image),
    }
    for name, make in scenarios.items():
        pipe = TablePipeline(table, camera)
        rep = new_report()
        for k in range(frames):
            tracked = pipe.process(make(k), k, k / 30)
            if k >= fault_at:
                _score(tracked, truth, rep, table)
        out[name] = _summarise(rep)
    # A finger over half of one car's marker from the start (a first sighting half covered).
    pipe = TablePipeline(table, camera)
    rep = new_report()
    victim = cars[0]
    for k in range(frames // 2):
        frame = base.render(cars, rng)
        image = _cover_half(frame.image, frame.car_corners_px[victim.id])
        _score(pipe.process(image, k, k / 30), truth, rep, table)
    out["marker_half_covered"] = _summarise(rep)
    # Thin margins: 2 mm of white round each 20 mm roof marker (under a cell) on
    # the easy rendering, and 0.5 mm on the hard one (blur, noise, JPEG).
    opencv = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_4X4_50),
                                     cv2.aruco.DetectorParameters())
    for name, options, margin in (("thin_margins_2mm", EASY, 2.0), ("thin_margins_0.5mm_hard", HARD, 0.5)):
        thin = TableRenderer(table, camera, rvec, tvec, options, seed=seed)
        for spec in table.cars:
            thin.sticker(spec.id, spec.marker_mm).margin_mm = margin
        pipe = TablePipeline(table, camera)
        rep = new_report()
        found_cv, listed = [], []
        for k in range(frames // 2):
            image = thin.render(cars, rng).image
            _, ids, _ = opencv.detectMarkers(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY))
            found_cv.append(0 if ids is None else len(set(ids.ravel()) & set(truth)))
            tracked = pipe.process(image, k, k / 30)
            listed.append(len(tracked.cars))
            _score(tracked, truth, rep, table)
        out[name] = _summarise(rep)
        out[name]["cars_a_frame"] = round(float(np.mean(listed)), 2)
        out[name]["opencv_defaults_cars_a_frame"] = round(float(np.mean(found_cv)), 2)
    return out


def _summarise(rep: dict) -> dict:
    e = np.array(rep.pop("errors")) if rep["errors"] else np.zeros((0, 4))
    if len(e):
        rep["position_error_max_mm"] = round(float(e[:, 0].max()), 2)
        rep["sigma_mm_median"] = round(float(np.median(e[:, 1])), 3)
        rep["within_2_sigma_position"] = round(float(np.mean(e[:, 0] <= 2 * e[:, 1])), 3)
        rep["within_2_sigma_heading"] = round(float(np.mean(e[:, 2] <= 2 * e[:, 3])), 3)
    rep["fresh_car_frames"] = len(e)
    return rep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("--frames", type=int, default=24)
    args = ap.parse_args()
    print(json.dumps(run(args.seed, args.frames), indent=1))


if __name__ == "__main__":
    main()

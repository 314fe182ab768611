"""The locator and the pipeline on real webcam footage: aruco-testdata's single_video.avi.

    python -m bench.realvideo

145 frames (640 x 480) of a hand-held sheet of six 50 mm DICT_ARUCO_ORIGINAL
markers; camera and sheet both move.  The sheet stands in for a table: three of
its markers are anchors, three are "cars" with flat roofs (roof_mm = 0).  The
sheet's layout is fitted once from every frame with all six markers (a small
bundle adjustment on OpenCV's default corners), so each car's true pose on the
sheet is known to a fraction of a millimetre, and every frame's error is
measured against it.

Reports: markers found a frame (ours against OpenCV's default parameters, and
any false ids), each car's error and 2-sigma coverage (position, heading), for
frames located one by one and through the pipeline (tracking, region scans),
and the pipeline's jitter (frame-to-frame scatter of the located pose on the
sheet, which does not move on the sheet).
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.tablefile import AnchorSpec, CarSpec, TableSpec
from vision.detect import MarkerDetector
from vision.locate import Locator
from vision.pipeline import TablePipeline

HERE = Path(__file__).resolve().parents[1]
DATA = HERE / "tests" / "data" / "realdata" / "aruco-testdata"
IDS = (101, 601, 701, 801, 901, 1001)
SIDE_MM = 50.0
ANCHORS = (101, 901, 801)
CARS = (601, 701, 1001)


def read_frames(path: Path = DATA / "single_video.avi") -> list[np.ndarray]:
    cap = cv2.VideoCapture(str(path))
    frames = []
    while True:
        ok, f = cap.read()
        if not ok:
            break
        frames.append(f)
    return frames


def opencv_default_detections(frames: list[np.ndarray]) -> list[dict[int, np.ndarray]]:
    det = cv2.aruco.ArucoDetector(cv2.aruco.getPredefinedDictionary(cv2.aruco.DICT_ARUCO_ORIGINAL),
                                  cv2.aruco.DetectorParameters())
    out = []
    for f in frames:
        c, ids, _ = det.detectMarkers(cv2.cvtColor(f, cv2.COLOR_BGR2GRAY))
        out.append({} if ids is None else {int(i): np.asarray(cc, float).reshape(4, 2)
                                           for i, cc in zip(ids.ravel(), c)})
    return out


def _square(cx: float, cy: float, theta: float) -> np.ndarray:
    """A marker's corners (4, 3) on the sheet, OpenCV's order, top edge facing its +y turned by theta."""
    h = SIDE_MM / 2
    local = np.array([(-h, h), (h, h), (h, -h), (-h, -h)])
    r = np.array([[math.cos(theta), -math.sin(theta)], [math.sin(theta), math.cos(theta)]])
    p = local @ r.T + (cx, cy)
    return np.column_stack([p, np.zeros(4)])


def fit_layout(detections: list[dict[int, np.ndarray]], camera: CameraModel,
               rounds: int = 8) -> dict[int, tuple[float, float, float]]:
    """Each marker's (x_mm, y_mm, theta_rad) on the sheet, marker 101 at the origin.

    Alternates: each frame's pose from all markers, then each marker's place
    from its corners traced back to the sheet in every frame (rigid fit)."""
    full = [d for d in detections if all(i in d for i in IDS)]
    k, dist = camera.camera_matrix, camera.dist_coeffs
    obj1 = _square(0, 0, 0)
    layout = {}
    # Start: each marker's pose relative to 101's, from one-marker poses, median over frames.
    rel = {i: [] for i in IDS}
    for d in full:
        ok, r0, t0 = cv2.solvePnP(obj1, d[101], k, dist, flags=cv2.SOLVEPNP_IPPE_SQUARE)
        r0m, _ = cv2.Rodrigues(r0)
        for i in IDS:
            ok, r, t = cv2.solvePnP(obj1, d[i], k, dist, flags=cv2.SOLVEPNP_IPPE_SQUARE)
            rm, _ = cv2.Rodrigues(r)
            p = r0m.T @ (t - t0).reshape(3)
            rot = r0m.T @ rm
            rel[i].append((p[0], p[1], math.atan2(rot[1, 0], rot[0, 0])))
    for i in IDS:
        layout[i] = tuple(np.median(np.array(rel[i]), axis=0))
    for _ in range(rounds):
        pts = {i: [] for i in IDS}
        for d in full:
            obj = np.concatenate([_square(*layout[i]) for i in IDS])
            img = np.concatenate([d[i] for i in IDS])
            ok, r, t = cv2.solvePnP(obj, img, k, dist, flags=cv2.SOLVEPNP_IPPE)
            r, t = cv2.solvePnPRefineLM(obj, img, k, dist, r, t)
            rm, _ = cv2.Rodrigues(r)
            centre = -rm.T @ t.reshape(3)
            for i in IDS:
                rays = cv2.undistortPoints(d[i].reshape(-1, 1, 2), k, dist).reshape(-1, 2)
                dirs = np.column_stack([rays, np.ones(4)]) @ rm
                lam = -centre[2] / dirs[:, 2]
                pts[i].append(centre[:2] + lam[:, None] * dirs[:, :2])
        new = {}
        for i in IDS:
            mean = np.mean(pts[i], axis=0)                      # (4, 2)
            c = mean.mean(axis=0)
            up = (mean[0] + mean[1]) - (mean[3] + mean[2])
            right = (mean[1] + mean[2]) - (mean[0] + mean[3])
            v = up + np.array([-right[1], right[0]])
            new[i] = (c[0], c[1], math.atan2(v[1], v[0]) - math.pi / 2)
        # Gauge: marker 101 at the origin, upright.
        x0, y0, t0 = new[101]
        r = np.array([[math.cos(-t0), -math.sin(-t0)], [math.sin(-t0), math.cos(-t0)]])
        layout = {i: (*(r @ (np.array(new[i][:2]) - (x0, y0))), new[i][2] - t0) for i in IDS}
    return layout


def sheet_table(layout: dict[int, tuple[float, float, float]]) -> tuple[TableSpec, dict[int, tuple[float, float, float]]]:
    """The sheet as a table: three anchors, three flat "cars"; and each car's true (x, y, heading)."""
    # Shift so every marker sits inside the "table"; anchors must lie upright,
    # so the layout is turned to make the anchors' mean angle zero.
    mean_t = float(np.mean([layout[i][2] for i in ANCHORS]))
    r = np.array([[math.cos(-mean_t), -math.sin(-mean_t)], [math.sin(-mean_t), math.cos(-mean_t)]])
    turned = {i: (*(r @ np.array(layout[i][:2])), layout[i][2] - mean_t) for i in IDS}
    xs = [p[0] for p in turned.values()]
    ys = [p[1] for p in turned.values()]
    dx, dy = 60 - min(xs), 60 - min(ys)
    placed = {i: (p[0] + dx, p[1] + dy, p[2]) for i, p in turned.items()}
    anchors = tuple(AnchorSpec(i, placed[i][0], placed[i][1], SIDE_MM) for i in ANCHORS)
    cars = tuple(CarSpec(i, f"m{i}", 75.0, 32.0, 0.0, SIDE_MM) for i in CARS)
    table = TableSpec(max(xs) + dx + 60, max(ys) + dy + 60, "DICT_ARUCO_ORIGINAL", anchors, cars,
                      source="<single_video sheet>", roof_sigma_mm=0.0)
    truth = {i: (placed[i][0], placed[i][1], math.degrees(placed[i][2]) + 90.0) for i in CARS}
    return table, truth


def _errors(cars, truth) -> list[tuple[float, float, float, float]]:
    """(position error mm, sigma_mm, heading error deg, sigma_deg) of each car given."""
    out = []
    for c in cars:
        tx, ty, th = truth[c.id]
        dh = abs((c.heading_deg - th + 180) % 360 - 180)
        out.append((math.hypot(c.x_mm - tx, c.y_mm - ty), c.sigma_mm, dh, c.sigma_deg))
    return out


def summary(errs: list[tuple[float, float, float, float]]) -> dict:
    if not errs:
        return {"n": 0}
    e = np.array(errs)
    return {"n": len(e),
            "position_median_p95_max_mm": [round(float(np.median(e[:, 0])), 2),
                                           round(float(np.percentile(e[:, 0], 95)), 2),
                                           round(float(e[:, 0].max()), 2)],
            "heading_median_p95_max_deg": [round(float(np.median(e[:, 2])), 2),
                                           round(float(np.percentile(e[:, 2], 95)), 2),
                                           round(float(e[:, 2].max()), 2)],
            "sigma_mm_median": round(float(np.median(e[:, 1])), 2),
            "sigma_deg_median": round(float(np.median(e[:, 3])), 2),
            "within_2_sigma_position": round(float(np.mean(e[:, 0] <= 2 * e[:, 1])), 3),
            "within_2_sigma_heading": round(float(np.mean(e[:, 2] <= 2 * e[:, 3])), 3),
            "beyond_4_sigma_position": int(np.sum(e[:, 0] > 4 * e[:, 1])),
            "beyond_4_sigma_heading": int(np.sum(e[:, 2] > 4 * e[:, 3])),
            "wrong_by_more_than_2_sigma_and_5mm": int(np.sum((e[:, 0] > 2 * e[:, 1]) & (e[:, 0] > 5)))}


def run(frames: list[np.ndarray] | None = None) -> dict:
    frames = frames if frames is not None else read_frames()
    camera = CameraModel.from_yaml(DATA / "single_intrinsics.yml")
    cv_dets = opencv_default_detections(frames)
    layout = fit_layout(cv_dets, camera)
    table, truth = sheet_table(layout)
    ours = MarkerDetector("DICT_ARUCO_ORIGINAL")
    found, false_ids = [], 0
    for f in frames:
        ds = ours.detect(f)
        found.append(len({d.id for d in ds if d.id in IDS}))
        false_ids += sum(d.id not in IDS for d in ds)
    report: dict = {"frames": len(frames),
                    "markers_a_frame_ours": round(float(np.mean(found)), 2),
                    "markers_a_frame_opencv_defaults": round(float(np.mean([len(d) for d in cv_dets])), 2),
                    "false_ids_ours": false_ids,
                    "false_ids_opencv_defaults": sum(i not in IDS for d in cv_dets for i in d)}
    # One by one: a fresh locator each frame (as `locate` does an image).
    alone = []
    for f in frames:
        loc = Locator(table, camera).locate(f)
        if loc.table_pose is not None:
            alone += _errors(loc.cars, truth)
    report["alone"] = summary(alone)
    # Through the pipeline: only fresh cars count as claims; stale ones must say so.
    pipe = TablePipeline(table, camera)
    fresh, stale, by_car = [], 0, {i: [] for i in CARS}
    for k, f in enumerate(frames):
        out = pipe.process(f, k, k / 30.0)
        cars = [c for c in out.cars if not c.stale]
        stale += len(out.cars) - len(cars)
        fresh += _errors(cars, truth)
        for c in cars:
            by_car[c.id].append((c.x_mm, c.y_mm, c.heading_deg))
    report["pipeline"] = summary(fresh)
    report["pipeline"]["stale_car_frames"] = stale
    jit = [np.std(np.diff(np.array(v), axis=0), axis=0) / math.sqrt(2) for v in by_car.values() if len(v) > 2]
    report["pipeline"]["jitter_rms_mm_deg"] = [round(float(np.mean([math.hypot(j[0], j[1]) for j in jit])), 2),
                                               round(float(np.mean([j[2] for j in jit])), 2)]
    return report


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print(json.dumps(run(), indent=1))


if __name__ == "__main__":
    main()

"""Doubt on a second real table: aruco-testdata's printed board photographed by a webcam.

    python -m bench.realboard

`board_image-test.png` (640 x 480, a real webcam, the ArUco library's test data)
shows a printed board of 24 DICT_ARUCO_ORIGINAL markers whose layout is
published (`board_board_meters.yml`) and whose camera is calibrated
(`board_intrinsics.yml`).  The board stands in for a table: its four corner
markers are the anchors, the other twenty are flat "cars" (roof 0 mm).  A
printed layout is exact, so, unlike the hand-held sheet of bench/realvideo.py
(whose layout had to be fitted from the same footage the sigma constants were
measured on), this checks the stated doubt against truth it never saw.

Reports each car's position and heading error against the published layout and
the share within two stated sigmas, with our detector and the locator as
`companion locate` runs on one image.
"""

from __future__ import annotations

import argparse
import json
import math
import re
from pathlib import Path

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.tablefile import AnchorSpec, CarSpec, TableSpec
from vision.locate import Locator

HERE = Path(__file__).resolve().parents[1]
DATA = HERE / "tests" / "data" / "realdata" / "aruco-testdata"
MARGIN_MM = 40.0


def board_layout(path: Path = DATA / "board_board_meters.yml") -> dict[int, np.ndarray]:
    """Each marker's four corners (mm) on the board, OpenCV's order, as published.

    The file is OpenCV 2.2 YAML with `id:985` written without a space, which
    OpenCV's own reader does not take; the numbers are read directly."""
    text = path.read_text(encoding="utf-8")
    out = {}
    for m in re.finditer(r"id:\s*(\d+),\s*corners:\s*\[(.*?)\]\s*\}", text, re.S):
        nums = [float(v) for v in re.findall(r"[-+]?\d+\.\d+(?:[eE][-+]?\d+)?|[-+]?\d+\.", m.group(2))]
        xyz = np.array(nums, dtype=np.float64).reshape(4, 3)
        out[int(m.group(1))] = xyz[:, :2] * 1000.0
    return out


def board_table(layout: dict[int, np.ndarray]) -> tuple[TableSpec, dict[int, tuple[float, float, float]]]:
    """The board as a table (y turned to point up the table, so the board's
    y, which runs down the printed page, is flipped), anchors at its four
    corners, every other marker a flat car; and each car's true pose."""
    flipped = {i: np.column_stack([c[:, 0], -c[:, 1]]) for i, c in layout.items()}
    lo = np.min([c.min(axis=0) for c in flipped.values()], axis=0) - MARGIN_MM
    hi = np.max([c.max(axis=0) for c in flipped.values()], axis=0) + MARGIN_MM
    placed = {i: c - lo for i, c in flipped.items()}
    centres = {i: c.mean(axis=0) for i, c in placed.items()}
    middle = np.mean(list(centres.values()), axis=0)
    # The four markers furthest from the middle, one in each quadrant: the corners.
    corners = []
    for sx in (-1, 1):
        for sy in (-1, 1):
            quad = [i for i, p in centres.items() if np.sign(p[0] - middle[0]) == sx
                    and np.sign(p[1] - middle[1]) == sy]
            corners.append(max(quad, key=lambda i: np.linalg.norm(centres[i] - middle)))
    side = {i: float(np.mean(np.linalg.norm(c - np.roll(c, -1, axis=0), axis=1))) for i, c in placed.items()}
    anchors = tuple(AnchorSpec(i, float(centres[i][0]), float(centres[i][1]), side[i]) for i in corners)
    cars = tuple(CarSpec(i, f"m{i}", 60.0, 30.0, 0.0, side[i]) for i in sorted(placed) if i not in corners)
    size = hi - lo
    table = TableSpec(float(size[0]), float(size[1]), "DICT_ARUCO_ORIGINAL", anchors, cars,
                      source="<aruco-testdata board>", roof_sigma_mm=0.0)
    truth = {}
    for car in cars:
        c = placed[car.id]
        up = (c[0] + c[1]) - (c[3] + c[2])
        truth[car.id] = (float(centres[car.id][0]), float(centres[car.id][1]),
                         math.degrees(math.atan2(up[1], up[0])))
    return table, truth


def run() -> dict:
    image = cv2.imread(str(DATA / "board_image-test.png"))
    camera = CameraModel.from_yaml(DATA / "board_intrinsics.yml")
    table, truth = board_table(board_layout())
    located = Locator(table, camera).locate(image)
    if located.table_pose is None:
        return {"error": located.error}
    errs = []
    for c in located.cars:
        tx, ty, th = truth[c.id]
        dh = abs((c.heading_deg - th + 180) % 360 - 180)
        errs.append((math.hypot(c.x_mm - tx, c.y_mm - ty), c.sigma_mm, dh, c.sigma_deg))
    e = np.array(errs)
    return {
        "cars_found": f"{len(located.cars)} of {len(table.cars)}",
        "anchor_reprojection_px": round(located.table_pose.reprojection_px, 3),
        "position_median_max_mm": [round(float(np.median(e[:, 0])), 2), round(float(e[:, 0].max()), 2)],
        "heading_median_max_deg": [round(float(np.median(e[:, 2])), 2), round(float(e[:, 2].max()), 2)],
        "sigma_mm_median": round(float(np.median(e[:, 1])), 2),
        "sigma_deg_median": round(float(np.median(e[:, 3])), 2),
        "within_2_sigma_position": round(float(np.mean(e[:, 0] <= 2 * e[:, 1])), 3),
        "within_2_sigma_heading": round(float(np.mean(e[:, 2] <= 2 * e[:, 3])), 3),
        "beyond_3_sigma": int(np.sum((e[:, 0] > 3 * e[:, 1]) | (e[:, 2] > 3 * e[:, 3]))),
    }


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    print(json.dumps(run(), indent=1))


if __name__ == "__main__":
    main()

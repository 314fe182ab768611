"""Detection and calibration on the real photographs in ../shared/realdata.

    python -m bench.realdata

- singlemarkersoriginal.jpg: every published id found; our corners against the
  published ones, as they stand and in the published corners' own convention
  (unrefined contours, half a pixel inside the edges; see tests/test_realdata.py);
- the ChArUco photos: published ids found;
- the four calibration views: focal length against the published camera file.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.charuco import CharucoBoardSpec, ViewCollector
from vision.detect import MarkerDetector

REALDATA = Path(__file__).resolve().parents[1].parent / "shared" / "realdata" / "opencv-tutorials"


def contour_convention(c: np.ndarray) -> np.ndarray:
    """Corners moved half a pixel in along both edge normals, where a contour through pixel centres runs."""
    centre = c.mean(axis=0)
    out = []
    for k in range(4):
        inward = np.zeros(2)
        for a, b in ((c[k - 1], c[k]), (c[k], c[(k + 1) % 4])):
            t = (b - a) / np.linalg.norm(b - a)
            n = np.array([-t[1], t[0]])
            inward += n if n @ (centre - (a + b) / 2) > 0 else -n
        out.append(c[k] + 0.5 * inward)
    return np.array(out)


def main() -> None:
    expected = json.loads((REALDATA / "expected.json").read_text())
    truth = expected["singlemarkersoriginal.jpg"]
    found = {d.id: d.corners_px for d in MarkerDetector(truth["dictionary"]).detect(
        cv2.imread(str(REALDATA / "singlemarkersoriginal.jpg")))}
    published = {int(i): np.asarray(c, float) for i, c in truth["corners"].items()}
    raw = np.vstack([found[i] - published[i] for i in published if i in found])
    conv = np.vstack([contour_convention(found[i]) - published[i] for i in published if i in found])
    report = {"singlemarkers": {
        "ids_found": f"{len(set(found) & set(published))}/{len(published)}",
        "corner_max_px_as_published": round(float(np.abs(raw).max()), 3),
        "corner_rms_px_as_published": round(float(np.sqrt((raw ** 2).sum(axis=1).mean())), 3),
        "corner_max_px_contour_convention": round(float(np.abs(conv).max()), 3)}}
    for name in ("choriginal.jpg", "chocclusion_original.jpg"):
        want = set(expected[name]["ids"])
        got = {d.id for d in MarkerDetector(expected[name]["dictionary"]).detect(cv2.imread(str(REALDATA / name)))}
        report[name] = f"{len(want & got)}/{len(want)} published ids found"
    views = expected["calibration_views"]
    b = views["charuco_board"]
    spec = CharucoBoardSpec(b["squares_x"], b["squares_y"], b["square_m"] * 1000, b["marker_m"] * 1000,
                            b["dictionary"])
    collector = ViewCollector(spec, new_angle_deg=5.0)
    for name in views["images"]:
        collector.add(cv2.imread(str(REALDATA / name)), name)
    result = collector.calibrate(min_views=len(views["images"]))
    k, k_pub = result.camera.camera_matrix, CameraModel.from_yaml(REALDATA / views["camera"]).camera_matrix
    report["calibration_four_views"] = {
        "views": len(collector.views), "rms_px": round(result.rms_px, 3),
        "fx_px": round(float(k[0, 0]), 1), "fx_published_px": round(float(k_pub[0, 0]), 1),
        "fx_error_percent": round(100 * float(k[0, 0] / k_pub[0, 0] - 1), 2),
        "fy_error_percent": round(100 * float(k[1, 1] / k_pub[1, 1] - 1), 2)}
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()

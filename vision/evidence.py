"""Evidence from a frame: the picture, the marker corners found in it and the table's
pose, as plain JSON; and the cars located again from them, by the same code, so a
stored measurement can be made again and come out the same.
"""

from __future__ import annotations

import hashlib

import cv2
import numpy as np

from calibration.camera import CameraModel
from calibration.table_pose import TablePose
from calibration.tablefile import TableSpec

from .detect import MarkerDetection, dictionary
from .locate import CarLocation, locate_cars

JPEG_QUALITY = 85


def camera_fingerprint(camera: CameraModel | None) -> str | None:
    """A short hash of the camera's intrinsics: which calibration a measurement used."""
    if camera is None:
        return None
    h = hashlib.sha256(np.ascontiguousarray(camera.camera_matrix).tobytes()
                       + np.ascontiguousarray(camera.dist_coeffs).tobytes()
                       + repr((camera.image_size, camera.estimated)).encode())
    return h.hexdigest()[:16]


def pose_to_json(pose: TablePose) -> dict:
    cam = pose.camera
    return {
        "camera": {"camera_matrix": cam.camera_matrix.tolist(), "dist_coeffs": cam.dist_coeffs.tolist(),
                   "image_size": list(cam.image_size) if cam.image_size else None, "estimated": cam.estimated,
                   "focal_rel_sigma": cam.focal_rel_sigma, "source": cam.source,
                   "fingerprint": camera_fingerprint(cam)},
        "rvec": np.asarray(pose.rvec, dtype=float).reshape(-1).tolist(),
        "tvec": np.asarray(pose.tvec, dtype=float).reshape(-1).tolist(),
        "anchors_used": list(pose.anchors_used), "anchors_rejected": list(pose.anchors_rejected),
        "reprojection_px": pose.reprojection_px, "reprojection_mm": pose.reprojection_mm,
        "covariance": None if pose.covariance is None else np.asarray(pose.covariance).tolist(),
    }


def pose_from_json(data: dict) -> TablePose:
    c = data["camera"]
    camera = CameraModel(np.array(c["camera_matrix"]), np.array(c["dist_coeffs"]),
                         tuple(c["image_size"]) if c["image_size"] else None, c["estimated"],
                         c["focal_rel_sigma"], c["source"])
    return TablePose(camera, np.array(data["rvec"]).reshape(3, 1), np.array(data["tvec"]).reshape(3, 1),
                     tuple(data["anchors_used"]), data["reprojection_px"], data["reprojection_mm"],
                     tuple(data["anchors_rejected"]),
                     None if data["covariance"] is None else np.array(data["covariance"]))


def detections_to_json(detections) -> list[dict]:
    return [{"id": int(d.id), "corners_px": np.asarray(d.corners_px, dtype=float).tolist(),
             "edge_sigma_px": None if d.edge_sigma_px is None else float(d.edge_sigma_px),
             "contrast": None if d.contrast is None else float(d.contrast)} for d in detections]


def detections_from_json(data: list[dict]) -> list[MarkerDetection]:
    # Records kept before the contrast was stored have none: their doubts as then.
    return [MarkerDetection(d["id"], np.array(d["corners_px"], dtype=float), d["edge_sigma_px"], d.get("contrast"))
            for d in data]


def frame_evidence(image: np.ndarray | None, located) -> tuple[bytes | None, list[dict], dict]:
    """(JPEG, detections, table pose) of a located frame, ready to store: a frame that came
    as the camera's own JPEG (JpegGray) is stored as those very bytes, in colour."""
    from .sources import JpegGray
    jpeg = None
    if isinstance(image, JpegGray) and image.jpeg:
        jpeg = image.jpeg
    elif image is not None:
        ok, data = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        jpeg = data.tobytes() if ok else None
    return jpeg, detections_to_json(located.detections), pose_to_json(located.table_pose)


def relocate(detections: list[dict], table_pose: dict, table: TableSpec) -> dict[int, CarLocation]:
    """The cars located again from stored corners and the stored table pose."""
    dets = detections_from_json(detections)
    pose = pose_from_json(table_pose)
    by_id: dict[int, list[MarkerDetection]] = {}
    for d in dets:
        by_id.setdefault(d.id, []).append(d)
    specs = [s for s in table.cars if len(by_id.get(s.id, [])) == 1]
    # The outline's doubt is read in cells, as the live locator reads it (its detector's cells).
    cells = dictionary(table.dictionary).markerSize + 2
    # A roof marker's contrast is read against the anchors', as the live locator reads it.
    contrasts = [d.contrast for d in dets if d.id in pose.anchors_used and d.contrast]
    cars = locate_cars(specs, [by_id[s.id][0] for s in specs], pose, table.roof_sigma_mm, cells=cells,
                       anchor_contrast=float(np.median(contrasts)) if contrasts else None)
    return {c.id: c for c in cars}


def decode_jpeg(data: bytes) -> np.ndarray | None:
    if not data:
        return None
    return cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)

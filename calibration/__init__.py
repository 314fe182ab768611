"""Calibration: the camera model, the table file and the table's pose from its anchors.

Depends on OpenCV and NumPy only.
"""

from .camera import CameraFileError, CameraModel
from .table_pose import TablePose, TablePoseError, estimate_camera, solve_table_pose
from .tablefile import AnchorSpec, CarSpec, TableFileError, TableSpec, load_table, parse_table

__all__ = [
    "AnchorSpec", "CameraFileError", "CameraModel", "CarSpec", "TableFileError", "TablePose",
    "TablePoseError", "TableSpec", "estimate_camera", "load_table", "parse_table",
    "solve_table_pose",
]

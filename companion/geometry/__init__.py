"""The table's ruler, protractor and templates.

Rule systems ask in rulebook terms; the answers are in table millimetres, with
the margin against the rule's threshold and the doubt from the poses
(`Verdict`: in, out, or too close to call).  Pure Python over Shapely and
NumPy: no OpenCV, serial or web code here.
"""

from .gates import Gate, GateCounter
from .grid import SquareGrid
from .measure import (FRONT, LEFT, REAR, RIGHT, ArcTest, Distance, Sector, centre_distance,
                      closest_distance, in_half_plane_arc, in_sector, point_distance)
from .pose import MM_PER_IN, TERRAIN_KINDS, Articulated, Footprint, Pose, Terrain, inches, normalize_deg, to_inches
from .sight import ANY, CENTRE, Obstacles, Sight, line_of_sight
from .templates import (BOARDING_MARK_MM, RIG_TEMPLATE_LENGTH_MM, SECTION_MM, TEMPLATE_LENGTH_MM,
                        TEMPLATE_WIDTH_MM, MoveRegion, MoveTemplate, around, circle, directly_behind,
                        move_region, overlaps, straight, swept_path, turning, within_radius)
from .verdict import IN, OUT, TOO_CLOSE, Verdict, judge

__all__ = [
    "ANY", "BOARDING_MARK_MM", "CENTRE", "FRONT", "IN", "LEFT", "MM_PER_IN", "OUT", "REAR", "RIGHT",
    "RIG_TEMPLATE_LENGTH_MM", "SECTION_MM", "TEMPLATE_LENGTH_MM", "TEMPLATE_WIDTH_MM", "TERRAIN_KINDS",
    "TOO_CLOSE", "ArcTest", "Articulated", "Distance", "Footprint", "Gate", "GateCounter", "MoveRegion",
    "MoveTemplate", "Obstacles", "Pose", "Sector", "Sight", "SquareGrid", "Terrain", "Verdict", "around",
    "centre_distance", "circle", "closest_distance", "directly_behind", "in_half_plane_arc", "in_sector",
    "inches", "judge", "line_of_sight", "move_region", "normalize_deg", "overlaps", "point_distance",
    "straight", "swept_path", "to_inches", "turning", "within_radius",
]

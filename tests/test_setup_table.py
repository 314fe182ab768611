"""Issue 17, the table file on a real table: anchors stuck on turned, flat tokens
(roof_mm = 0) and dictionary names as OpenCV spells them."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from calibration.camera import CameraModel
from calibration.tablefile import (
    AnchorSpec,
    TableFileError,
    load_table,
    parse_table,
    table_from_json,
    table_to_json,
)
from tests.conftest import EXAMPLES

BASE = """\
[table]
width_mm = 800
depth_mm = 600
{dictionary}

[[anchor]]
id = 0
x_mm = 80
y_mm = 80
size_mm = 60
rotation_deg = 30

[[anchor]]
id = 1
x_mm = 720
y_mm = 80
size_mm = 60
rotation_deg = -90

[[anchor]]
id = 2
x_mm = 720
y_mm = 520
size_mm = 60
rotation_deg = 180

[[anchor]]
id = 3
x_mm = 80
y_mm = 520
size_mm = 60

[[car]]
id = 10
name = "Token"
length_mm = 40
width_mm = 40
roof_mm = 0
marker_mm = 30
"""


def _table(dictionary: str = "") -> str:
    return BASE.format(dictionary=dictionary)


# --- anchor rotation -------------------------------------------------------------


def test_a_turned_anchors_corners_turn_about_its_centre():
    upright = AnchorSpec(0, 100.0, 100.0, 60.0)
    quarter = AnchorSpec(0, 100.0, 100.0, 60.0, rotation_deg=90.0)
    # Turned a quarter anticlockwise, the top edge (corner 0 to 1) faces -x.
    assert np.allclose(quarter.corners_mm(), [(70, 70), (70, 130), (130, 130), (130, 70)])
    assert np.allclose(AnchorSpec(0, 100.0, 100.0, 60.0, 360.0).corners_mm(), upright.corners_mm())
    c = np.array(AnchorSpec(0, 0.0, 0.0, 60.0, 30.0).corners_mm())
    top = c[1] - c[0]
    assert math.degrees(math.atan2(top[1], top[0])) == pytest.approx(30.0)   # the top edge turned 30 deg
    assert np.allclose(np.linalg.norm(c, axis=1), 30.0 * math.sqrt(2))    # same square, same centre


def test_rotation_deg_is_read_defaults_to_0_and_survives_a_game_file():
    table = parse_table(_table())
    assert [a.rotation_deg for a in table.anchors] == [30.0, -90.0, 180.0, 0.0]
    again = table_from_json(table_to_json(table))
    assert again.anchors == table.anchors
    old = table_to_json(table)
    for a in old["anchors"]:
        del a["rotation_deg"]                 # a game file written before anchors could turn
    assert all(a.rotation_deg == 0.0 for a in table_from_json(old).anchors)


def test_the_example_table_explains_rotation_and_flat_tokens():
    text = (EXAMPLES / "table.toml").read_text()
    assert "rotation_deg" in text and "roof_mm = 0" in text
    load_table(EXAMPLES / "table.toml")


@pytest.mark.parametrize("old, new, expected", [
    ("rotation_deg = 30", 'rotation_deg = "a bit"', ["[[anchor]] #1 (id 0) rotation_deg", "number of degrees"]),
    ("rotation_deg = 30", "rotation_deg = 400", ["rotation_deg", "more than a whole turn"]),
    ("rotation_deg = 30", "rotation = 30", ["unknown key 'rotation'", "did you mean 'rotation_deg'"]),
    # Upright it would fit (its corners 35 mm from the centre), turned 45 deg they reach 42.4 mm: off the table.
    ("x_mm = 80\ny_mm = 80\nsize_mm = 60\nrotation_deg = 30", "x_mm = 35\ny_mm = 80\nsize_mm = 60\nrotation_deg = 45",
     ["[[anchor]] #1 (id 0)", "turned 45 deg", "does not lie wholly on"]),
    # Side by side upright they miss each other by 2 mm; turned, their corners overlap.
    ("id = 3\nx_mm = 80\ny_mm = 520\nsize_mm = 60", "id = 3\nx_mm = 142\ny_mm = 80\nsize_mm = 60",
     ["[[anchor]] #4 (id 3)", "overlaps anchor 0"]),
])
def test_rotation_mistakes_are_named_with_their_line(tmp_path, old, new, expected):
    text = _table()
    assert old in text
    path = tmp_path / "table.toml"
    path.write_text(text.replace(old, new, 1))
    with pytest.raises(TableFileError) as caught:
        load_table(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:")
    for part in expected:
        assert part in message, f"{part!r} not in {message!r}"


def test_upright_anchors_that_miss_each_other_do_not_overlap():
    text = _table().replace("id = 3\nx_mm = 80\ny_mm = 520\nsize_mm = 60", "id = 3\nx_mm = 80\ny_mm = 142\nsize_mm = 60")
    text = text.replace("rotation_deg = 30", "rotation_deg = 0")
    assert parse_table(text).anchor(3).corners_mm()[2] == (110.0, 112.0)


# --- flat tokens -------------------------------------------------------------------


def test_a_flat_token_has_roof_0_and_a_negative_roof_is_named(tmp_path):
    assert parse_table(_table()).car(10).roof_mm == 0.0
    path = tmp_path / "t.toml"
    path.write_text(_table().replace("roof_mm = 0", "roof_mm = -3"))
    line = path.read_text().splitlines().index("roof_mm = -3") + 1
    with pytest.raises(TableFileError, match=rf"t.toml:{line}: \[\[car\]\] #1 \(Token\) roof_mm: must be 0 mm"):
        load_table(path)


# --- dictionaries ---------------------------------------------------------------------


@pytest.mark.parametrize("written, canonical", [
    ("DICT_APRILTAG_36h11", "DICT_APRILTAG_36H11"),     # OpenCV's own spelling
    ("DICT_APRILTAG_36H11", "DICT_APRILTAG_36H11"),     # the spelling accepted before
    ("DICT_ARUCO_MIP_36h12", "DICT_ARUCO_MIP_36H12"),
    ("dict_6x6_250", "DICT_6X6_250"),
    ("DICT_4X4_50", "DICT_4X4_50"),
])
def test_dictionaries_are_taken_as_opencv_spells_them(written, canonical):
    table = parse_table(_table(f'dictionary = "{written}"'))
    assert table.dictionary == canonical
    # The name is one OpenCV itself knows, so detection, rendering and sheets can use it.
    assert isinstance(getattr(cv2.aruco, table.dictionary), int)


def test_an_unknown_dictionary_lists_the_accepted_ones(tmp_path):
    path = tmp_path / "t.toml"
    path.write_text(_table('dictionary = "DICT_APRILTAG_36h12"'))
    with pytest.raises(TableFileError) as caught:
        load_table(path)
    message = str(caught.value)
    assert f"{path}:4: [table] dictionary: unknown ArUco dictionary 'DICT_APRILTAG_36h12'" in message
    assert "did you mean 'DICT_APRILTAG_36h11'" in message or "did you mean 'DICT_APRILTAG_36h10'" in message
    for name in ("DICT_4X4_50", "DICT_7X7_1000", "DICT_ARUCO_ORIGINAL", "DICT_APRILTAG_36h11", "DICT_ARUCO_MIP_36h12"):
        assert name in message


def test_marker_ids_are_checked_against_an_apriltag_dictionary():
    with pytest.raises(TableFileError, match="marker id 40 is not in DICT_APRILTAG_16H5 \\(ids 0 to 29\\)"):
        parse_table(_table('dictionary = "DICT_APRILTAG_16h5"').replace("id = 10", "id = 40"))


# --- through the camera: turned anchors and a flat token, seen by the real detector ------


PX_PER_MM = 2.0


def _paste_marker(canvas: np.ndarray, dictionary, marker_id: int, centre_mm, side_mm: float,
                  turn_deg: float, depth_mm: float) -> None:
    """Draw a marker flat on a top-down canvas of the table (y up), turned
    anticlockwise by `turn_deg` as seen from above, drawn independently of
    AnchorSpec.corners_mm (which is what is under test)."""
    side_px = int(round(side_mm * PX_PER_MM))
    marker = cv2.aruco.generateImageMarker(dictionary, marker_id, side_px)
    pad = side_px                          # a white margin round it, turned with it
    tile = np.full((side_px + 2 * pad, side_px + 2 * pad), 255, np.uint8)
    tile[pad:pad + side_px, pad:pad + side_px] = marker
    u = centre_mm[0] * PX_PER_MM
    v = (depth_mm - centre_mm[1]) * PX_PER_MM
    rot = cv2.getRotationMatrix2D((tile.shape[1] / 2, tile.shape[0] / 2), turn_deg, 1.0)
    rot[0, 2] += u - tile.shape[1] / 2
    rot[1, 2] += v - tile.shape[0] / 2
    mask = cv2.warpAffine(np.full_like(tile, 255), rot, canvas.shape[::-1], flags=cv2.INTER_NEAREST)
    drawn = cv2.warpAffine(tile, rot, canvas.shape[::-1], flags=cv2.INTER_AREA)
    canvas[mask > 0] = drawn[mask > 0]


def _camera_view(table, token_at, token_turn_deg, dictionary_name="DICT_4X4_50"):
    """A 1280 x 960 camera's view of the flat table: every marker lies on z = 0, so
    a homography from the top-down canvas is the exact perspective view."""
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, dictionary_name))
    w_mm, d_mm = table.width_mm, table.depth_mm
    canvas = np.full((int(d_mm * PX_PER_MM), int(w_mm * PX_PER_MM)), 200, np.uint8)
    for a in table.anchors:
        _paste_marker(canvas, dictionary, a.id, (a.x_mm, a.y_mm), a.size_mm, a.rotation_deg, d_mm)
    car = table.cars[0]
    _paste_marker(canvas, dictionary, car.id, token_at, car.marker_mm, token_turn_deg, d_mm)
    camera = CameraModel.from_fov(1280, 960, 60.0)
    # The camera 900 mm above a point near the middle, tilted a little.
    rvec = np.array([math.pi + 0.12, 0.08, 0.05])
    r = cv2.Rodrigues(rvec)[0]
    centre = np.array([w_mm / 2 - 20, d_mm / 2 + 30, 900.0])
    t = -r @ centre
    table_to_px = camera.camera_matrix @ np.column_stack([r[:, 0], r[:, 1], t])
    canvas_to_table = np.array([[1 / PX_PER_MM, 0, 0], [0, -1 / PX_PER_MM, d_mm], [0, 0, 1]])
    image = cv2.warpPerspective(canvas, table_to_px @ canvas_to_table, (1280, 960),
                                flags=cv2.INTER_AREA, borderValue=120)
    return image, camera


def test_turned_anchors_and_a_flat_token_are_found_where_they_lie():
    from vision.locate import Locator

    table = parse_table(_table())
    image, camera = _camera_view(table, (400.0, 300.0), 25.0)
    located = Locator(table, camera).locate(image)
    assert located.table_pose is not None, located.error
    assert set(located.anchors) == {0, 1, 2, 3}
    assert located.table_pose.anchors_rejected == ()
    assert located.table_pose.reprojection_px < 1.0
    (token,) = located.cars
    assert token.x_mm == pytest.approx(400.0, abs=1.0)
    assert token.y_mm == pytest.approx(300.0, abs=1.0)
    # Upright, a marker's top edge faces +y (heading 90); turned 25 deg anticlockwise: 115.
    assert token.heading_deg == pytest.approx(115.0, abs=1.0)


def test_the_same_view_with_the_rotations_left_out_of_the_file_does_not_fit():
    """Without rotation_deg the turned anchors' corners are taken for upright ones:
    the table is not found, or found with its anchors' corners metres of pixels out."""
    from vision.locate import Locator

    turned = parse_table(_table())
    image, camera = _camera_view(turned, (400.0, 300.0), 25.0)
    upright = parse_table(_table().replace("rotation_deg = 30", "rotation_deg = 0")
                          .replace("rotation_deg = -90", "rotation_deg = 0")
                          .replace("rotation_deg = 180", "rotation_deg = 0"))
    good = Locator(turned, camera).locate(image).table_pose
    bad = Locator(upright, camera).locate(image).table_pose
    assert good is not None
    assert good.reprojection_px < 1.0
    assert bad is None or bad.reprojection_px > 5.0 or len(bad.anchors_used) < 4


def test_anchor_sheets_say_which_way_a_turned_anchor_faces():
    from calibration.sheets import anchor_sheets

    pages = "".join(anchor_sheets(parse_table(_table())))
    assert "top: far side turned 30 deg left" in pages        # rotation_deg = 30 (anticlockwise)
    assert "top: far side turned 90 deg right" in pages       # rotation_deg = -90
    assert "top: near side (turned 180 deg)" in pages
    assert "top: far side (+y)" in pages                      # the upright one

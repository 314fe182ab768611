"""The table file: a ready example loads; every mistake is named with its file, entry and line."""

from __future__ import annotations

import pytest

from calibration.tablefile import TableFileError, load_table, parse_table
from tests.conftest import EXAMPLES

GOOD = """\
[table]
width_mm = 1000
depth_mm = 800

[[anchor]]
id = 0
x_mm = 50
y_mm = 50
size_mm = 60

[[anchor]]
id = 1
x_mm = 950
y_mm = 50
size_mm = 60

[[anchor]]
id = 2
x_mm = 950
y_mm = 750
size_mm = 60

[[car]]
id = 10
name = "Interceptor"
length_mm = 75
width_mm = 32
roof_mm = 30
marker_mm = 20
"""


def test_example_table_loads_into_typed_objects():
    table = load_table(EXAMPLES / "table.toml")
    assert (table.width_mm, table.depth_mm) == (1219.2, 1219.2)
    assert table.dictionary == "DICT_4X4_50"
    assert table.anchor_ids == (0, 1, 2, 3, 4, 5)
    war_rig = table.car(12)
    assert war_rig.name == "War Rig"
    assert (war_rig.length_mm, war_rig.width_mm, war_rig.roof_mm, war_rig.marker_mm) == (95.0, 36.0, 38.0, 22.0)
    assert war_rig.offset_mm == (12.0, 0.0)
    assert table.car(13).offset_mm == (0.0, 0.0)     # optional, defaults to the marker centre
    assert table.car(99) is None


def test_anchor_corners_follow_opencv_order_with_top_edge_to_far_side():
    anchor = parse_table(GOOD).anchor(0)
    c = anchor.corners_mm()
    assert c[0] == (20.0, 80.0) and c[1] == (80.0, 80.0)   # top edge, facing +y
    assert c[2] == (80.0, 20.0) and c[3] == (20.0, 20.0)


def _with(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new, 1)


@pytest.mark.parametrize("text, expected", [
    (_with("roof_mm = 30", "roof_height = 30"),
     ["table.toml:", "[[car]] #1 (Interceptor)", "unknown key 'roof_height'", "did you mean 'roof_mm'"]),
    (_with("marker_mm = 20\n", ""), ["[[car]] #1 (Interceptor)", "missing value 'marker_mm'"]),
    (_with("width_mm = 1000", "width_mm = -5"), ["[table] width_mm", "must be more than 0 mm"]),
    (_with("depth_mm = 800", "depth_mm = 80000"), ["[table] depth_mm", "impossible"]),
    (_with("width_mm = 1000", 'width_mm = "wide"'), ["[table] width_mm", "must be a number"]),
    (_with("roof_mm = 30", "roof_mm = -2"), ["[[car]] #1", "roof_mm", "must be 0 mm (a marker lying on the table) or more"]),
    (_with("marker_mm = 20", "marker_mm = 40"), ["[[car]] #1", "marker_mm", "impossible"]),
    (_with("x_mm = 950\ny_mm = 750", "x_mm = 990\ny_mm = 750"), ["[[anchor]] #3 (id 2)", "does not lie wholly on"]),
    (_with("id = 1\n", "id = 0\n"), ["[[anchor]] #2", "appears twice"]),
    (_with("id = 10", "id = 2"), ["[[car]] #1", "already used by anchor #3"]),
    (_with("id = 10", "id = 50"), ["[[car]] #1", "marker id 50 is not in DICT_4X4_50"]),
    (_with("width_mm = 1000", 'width_mm = 1000\ndictionary = "DICT_4X4_55"'),
     ["unknown ArUco dictionary 'DICT_4X4_55'", "did you mean"]),
    (_with("[[car]]", "[cars]\n[[car]]"), ["unknown section 'cars'", "did you mean 'car'"]),
    ("[table]\nwidth_mm = 1000\n", ["missing value 'depth_mm'"]),
    (GOOD.split("[[anchor]]")[0] + "[[anchor]]" + GOOD.split("[[anchor]]")[1],
     ["at least 3 [[anchor]]", "has 1"]),
    ("[table\nwidth_mm = 1", ["not valid TOML", "line 1"]),
    (_with("name = \"Interceptor\"", "name = \"Interceptor\"\noffset_mm = [60.0, 0.0]"),
     ["offset_mm", "off the 75 x 32 mm car"]),
])
def test_mistakes_are_named(tmp_path, text, expected):
    path = tmp_path / "table.toml"
    path.write_text(text)
    with pytest.raises(TableFileError) as caught:
        load_table(path)
    message = str(caught.value)
    assert str(path) in message
    for part in expected:
        assert part in message, f"{part!r} not in {message!r}"


def test_error_gives_the_line_of_the_key(tmp_path):
    path = tmp_path / "table.toml"
    text = _with("roof_mm = 30", "roof_mm = -1")
    path.write_text(text)
    line = text.splitlines().index("roof_mm = -1") + 1
    with pytest.raises(TableFileError, match=rf"table.toml:{line}: \[\[car\]\] #1 \(Interceptor\) roof_mm"):
        load_table(path)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(TableFileError, match="no such table file"):
        load_table(tmp_path / "nope.toml")


def test_roof_sigma_defaults_to_half_a_millimetre_and_can_be_set(tmp_path):
    assert parse_table(GOOD).roof_sigma_mm == 0.5
    assert parse_table(_with("depth_mm = 800", "depth_mm = 800\nroof_sigma_mm = 0.2")).roof_sigma_mm == 0.2
    with pytest.raises(TableFileError, match="roof_sigma_mm: must be 0 mm or more"):
        parse_table(_with("depth_mm = 800", "depth_mm = 800\nroof_sigma_mm = -1"))

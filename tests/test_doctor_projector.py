"""`companion doctor`'s projector check: the calibration there and this table's, what it
covers, and on the demo its check marks thrown by the synthetic projector and measured;
one made on another table (found beside the table file) FAILs saying so; a table
with no projector gets no projector line."""

from __future__ import annotations

from pathlib import Path

import pytest

from companion.cli import main

from tests.test_doctor import doctor

REPO = Path(__file__).resolve().parents[1]
DEMO_TABLE = REPO / "vision" / "data" / "demo_table.toml"


@pytest.fixture(scope="module")
def demo_calibration(tmp_path_factory):
    out = tmp_path_factory.mktemp("projector") / "projector.json"
    assert main(["calibrate", "projector", "--demo", "--out", str(out), "--size", "960x540"]) == 0
    return out


def test_the_demo_projector_is_calibrated_covers_the_table_and_its_marks_land_in_place(capsys, demo_calibration):
    capsys.readouterr()
    code, checks, out = doctor(capsys, "--source", "demo", "--frames", "1", "--projector", str(demo_calibration))
    assert code == 0, out
    (status, said), = checks["projector"]
    assert status == "OK" and said.startswith(f"calibrated ({demo_calibration}: ")
    assert said.endswith("the projector covers the whole table (100%)")
    (status, said), = checks["projector check"]
    assert status == "OK" and said.startswith("the demo's synthetic projector: projection within ")
    assert float(said.split("within ")[1].split(" mm")[0]) < 1.0


def test_a_calibration_from_another_table_beside_the_table_file_fails_saying_so(capsys, demo_calibration,
                                                                               tmp_path):
    # The demo's table with one anchor moved 30 mm: another table for the projector.
    text = DEMO_TABLE.read_text(encoding="utf-8").replace("x_mm = 609.6\ny_mm = 40.0", "x_mm = 639.6\ny_mm = 40.0", 1)
    assert "639.6" in text
    table = tmp_path / "table.toml"
    table.write_text(text, encoding="utf-8")
    (tmp_path / "projector.json").write_bytes(demo_calibration.read_bytes())
    capsys.readouterr()
    code, checks, out = doctor(capsys, "--source", "demo", "--frames", "1", "--table", str(table))
    assert code == 1
    (status, said), = checks["projector"]
    assert status == "FAIL" and "was made on another table" in said
    assert "fix: calibrate it: `companion calibrate projector" in out
    assert "projector check" not in checks
    assert (tmp_path / "projector.json").read_bytes() == demo_calibration.read_bytes()     # left as it was


def test_a_table_with_no_projector_gets_no_projector_line(capsys, tmp_path):
    table = tmp_path / "table.toml"
    table.write_text(DEMO_TABLE.read_text(encoding="utf-8"), encoding="utf-8")
    code, checks, out = doctor(capsys, "--source", "demo", "--frames", "1", "--table", str(table))
    assert code == 0, out
    assert "projector" not in checks and "projector check" not in checks


def test_a_projector_file_given_that_is_not_there_fails(capsys, tmp_path):
    code, checks, out = doctor(capsys, "--source", "demo", "--frames", "1", "--projector",
                               str(tmp_path / "none.json"))
    assert code == 1
    (status, said), = checks["projector"]
    assert status == "FAIL" and "no projector calibration there" in said

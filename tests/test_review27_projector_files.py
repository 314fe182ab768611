"""`companion doctor --projector FILE` with a damaged or stale calibration file (review of
issue 27, bad input): a file that is not JSON, JSON that is not a calibration, a mapping that
is not a projector's, and a good calibration of a projector since moved. Each FAILs naming
the file and what to do, with no traceback; the file is left as it was."""

from __future__ import annotations

import json

import pytest

from companion.cli import main

from tests.test_doctor import doctor


@pytest.fixture(scope="module")
def calibration(tmp_path_factory):
    out = tmp_path_factory.mktemp("projector") / "projector.json"
    assert main(["calibrate", "projector", "--demo", "--out", str(out), "--size", "960x540"]) == 0
    return json.loads(out.read_text(encoding="utf-8"))


def _fails(capsys, path, text: str) -> tuple[str, dict, str]:
    path.write_text(text, encoding="utf-8")
    capsys.readouterr()
    code, checks, out = doctor(capsys, "--source", "demo", "--frames", "1", "--projector", str(path))
    assert code == 1, out
    assert "Traceback" not in out
    assert path.read_text(encoding="utf-8") == text                 # left as it was
    return checks, out


@pytest.mark.parametrize("name, damage, words", [
    ("not_json.json", lambda cal: "garbage", "cannot be read as a projector calibration"),
    ("not_a_calibration.json", lambda cal: json.dumps({"bad": 1}), "is not a projector calibration"),
    ("singular.json", lambda cal: json.dumps(cal | {"homography": [[0, 0, 0]] * 3}),
     "its size or mapping is not a projector's"),
])
def test_a_damaged_calibration_fails_naming_the_file(capsys, tmp_path, calibration, name, damage, words):
    path = tmp_path / name
    checks, out = _fails(capsys, path, damage(calibration))
    (status, said), = checks["projector"]
    assert status == "FAIL" and said.startswith(str(path)) and words in said, said
    assert "fix: calibrate it: `companion calibrate projector" in out
    assert "projector check" not in checks


def test_a_moved_projector_is_caught_by_its_check_marks(capsys, tmp_path, calibration):
    # The same calibration with the image shifted 150 projector pixels: the projector moved.
    h = [row[:] for row in calibration["homography"]]
    h[0][2] += 150.0 * h[2][2]
    checks, out = _fails(capsys, tmp_path / "moved.json", json.dumps(calibration | {"homography": h}))
    (status, said), = checks["projector"]
    assert status == "OK"                                            # the file itself is sound
    (status, said), = checks["projector check"]
    assert status == "FAIL" and "the projector has moved since it was calibrated" in said, said
    assert "calibrate it again" in out

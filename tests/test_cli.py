"""The `companion` command as people and scripts use it."""

from __future__ import annotations

import json
import subprocess
import sys

import cv2
import pytest

from companion.cli import main
from tests.conftest import EXAMPLES


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_help_lists_every_command_with_a_line():
    out = subprocess.run([sys.executable, "-m", "companion", "--help"], capture_output=True, text=True, check=True).stdout
    for command in ("demo", "serve", "locate", "render"):
        line = next((l for l in out.splitlines() if l.strip().startswith(command + " ")), None)
        assert line is not None and len(line.split()) > 3, f"{command} has no line in --help"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    folder = tmp_path_factory.mktemp("render")
    image, camera, truth = folder / "table.png", folder / "webcam.yml", folder / "truth.jsonl"
    assert main(["render", str(image), "--start", "4.0", "--camera-out", str(camera), "--truth", str(truth)]) == 0
    return image, camera, json.loads(truth.read_text().splitlines()[0])


@pytest.mark.parametrize("with_camera", [True, False])
def test_locate_an_image_prints_one_object_close_to_the_truth(capsys, rendered, with_camera):
    image, camera, truth = rendered
    argv = ["locate", str(image), "--table", "vision/data/demo_table.toml"]
    if with_camera:
        argv += ["--camera", str(camera)]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    lines = out.strip().splitlines()
    assert len(lines) == 1
    found = json.loads(lines[0])
    assert found["frame"] == 0 and found["missing"] == [] and found["anchors"] == [0, 1, 2, 3, 4, 5]
    expected = {c["id"]: c for c in truth["cars"]}
    assert {c["id"] for c in found["cars"]} == set(expected)
    for car in found["cars"]:
        t = expected[car["id"]]
        assert abs(car["x_mm"] - t["x_mm"]) < 2.0 and abs(car["y_mm"] - t["y_mm"]) < 2.0
        assert {"name", "heading_deg", "sigma_mm", "sigma_deg"} <= set(car)
    assert found["table"]["camera"] == ("calibrated" if with_camera else "estimated")


def test_locate_a_video_prints_one_object_per_frame(capsys, tmp_path):
    video = tmp_path / "game.avi"
    assert main(["render", str(video), "--seconds", "0.6", "--fps", "5"]) == 0
    capsys.readouterr()
    code, out, _ = run(capsys, "locate", str(video), "--table", "vision/data/demo_table.toml")
    assert code == 0
    objects = [json.loads(line) for line in out.strip().splitlines()]
    assert [o["frame"] for o in objects] == [0, 1, 2]
    assert all(len(o["cars"]) == 5 for o in objects)


def test_locate_with_too_few_anchors_is_an_error_not_a_pose(capsys, rendered, tmp_path):
    image, camera, _ = rendered
    img = cv2.imread(str(image))
    img[:, :] = img[540, 960]            # nothing but mat left
    blank = tmp_path / "blank.png"
    cv2.imwrite(str(blank), img)
    code, out, err = run(capsys, "locate", str(blank), "--table", "vision/data/demo_table.toml")
    assert code == 2 and out == ""
    assert "too few anchors in view" in err and "missing 0, 1, 2, 3, 4, 5" in err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["locate", "nope.png", "--table", "vision/data/demo_table.toml"], "nope.png: no such file"),
    (["locate", "x.png", "--table", "nope.toml"], "nope.toml: no such table file"),
    (["serve", "--source", "demo", "--table", str(EXAMPLES / "table.toml"), "--camera", "missing.yml"],
     "missing.yml: no such camera file"),
])
def test_user_errors_are_one_line(capsys, argv, message):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith("companion: error: ") and message in err and err.count("\n") == 1


def test_locate_with_a_camera_file_for_another_resolution(capsys, rendered, tmp_path):
    image, camera, _ = rendered
    text = camera.read_text().replace("image_width: 1920", "image_width: 1280")
    wrong = tmp_path / "wrong.yml"
    wrong.write_text(text)
    code, _, err = run(capsys, "locate", str(image), "--table", "vision/data/demo_table.toml", "--camera", str(wrong))
    assert code == 2 and "calibrated for 1280 x 1080 pixels, but the frame is 1920 x 1080" in err
    assert "another shape" in err

"""The README's commands, run as written (`./dev ARGS` is `companion ARGS` once the
virtual environment is made): every one that needs no camera, tray or browser, from a
folder holding the repository's examples. The render-then-locate example must find
every car of the frame it rendered, where the truth file puts it."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"

#: Subcommands that end by themselves and need nothing but files.
RUNNABLE = {"render", "locate", "doctor", "rules", "markers", "scenario", "measure"}
#: Files the README names as the reader's own (a photo, a calibration they made, their shots).
THEIRS = {"photo.jpg", "camera.yml", "shots/", "0"}


def readme_commands() -> list[list[str]]:
    """Each `./dev ...` line of the README's sh blocks, split as the shell splits it."""
    out = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), re.S):
        for line in block.splitlines():
            words = shlex.split(line, comments=True)
            if words[:1] == ["./dev"] and len(words) > 1:
                out.append(words[1:])
    return out


def runnable(args: list[str]) -> bool:
    return args[0] in RUNNABLE and not THEIRS.intersection(args)


def test_the_readme_has_the_commands_this_test_runs():
    commands = readme_commands()
    assert ["render", "frame.png", "--table", "examples/table.toml", "--camera-out", "cam.yml",
            "--truth", "truth.jsonl"] in commands
    assert ["locate", "frame.png", "--table", "examples/table.toml", "--camera", "cam.yml"] in commands
    assert any(c[:3] == ["doctor", "--source", "demo"] for c in commands) or \
        "./dev doctor --source demo" in README.read_text(encoding="utf-8")
    assert sum(runnable(c) for c in commands) >= 6


@pytest.fixture(scope="module")
def ran(tmp_path_factory) -> dict[str, subprocess.CompletedProcess]:
    """Every runnable README command, in order, in a folder with the repository's examples."""
    here = tmp_path_factory.mktemp("readme")
    (here / "examples").symlink_to(REPO / "examples")
    results = {}
    for args in filter(runnable, readme_commands()):
        results[" ".join(args)] = subprocess.run([sys.executable, "-m", "companion", *args], cwd=here,
                                                 capture_output=True, text=True, timeout=600)
    results["doctor --source demo"] = subprocess.run(
        [sys.executable, "-m", "companion", "doctor", "--source", "demo", "--frames", "3"], cwd=here,
        capture_output=True, text=True, timeout=600)
    return {"folder": here, **results}


def test_every_runnable_readme_command_succeeds(ran):
    for line, done in ran.items():
        if line == "folder":
            continue
        assert done.returncode == 0, f"./dev {line}\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        assert "Traceback" not in done.stderr, line


def test_render_then_locate_finds_every_car_where_it_was_rendered(ran):
    done = ran["locate frame.png --table examples/table.toml --camera cam.yml"]
    found = json.loads(done.stdout.strip().splitlines()[0])
    truth = json.loads((ran["folder"] / "truth.jsonl").read_text().splitlines()[0])
    assert found["missing"] == [] and len(found["anchors"]) >= 4
    seen = {c["id"]: c for c in found["cars"]}
    assert set(seen) == {c["id"] for c in truth["cars"]}
    for t in truth["cars"]:
        c = seen[t["id"]]
        assert abs(c["x_mm"] - t["x_mm"]) < 3.0 and abs(c["y_mm"] - t["y_mm"]) < 3.0, (c, t)


def test_the_demo_doctor_says_nothing_failed(ran):
    assert ran["doctor --source demo"].stdout.rstrip().endswith("doctor: nothing failed")

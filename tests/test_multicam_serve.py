"""`serve` with several cameras, through the command line: what it renders can be served, and a
refusal found after the cameras opened leaves with its message only (exit 2), every reader
thread closed (one left running aborted the process: "terminate called", exit 134)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from calibration.tablefile import load_table


def run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "companion", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """`render --cameras 2`: one frame each, in a folder of its own, and their camera files."""
    root = tmp_path_factory.mktemp("two")
    done = run("render", root / "r" / "f.png", "--cameras", "2", "--camera-out", root / "r" / "cam.yml")
    assert done.returncode == 0, done.stderr
    for i in (1, 2):
        (root / f"cam{i}").mkdir()
        shutil.copy(root / "r" / f"f-camera{i}.png", root / f"cam{i}" / "frame.png")
    return root


def test_render_writes_the_table_it_rendered(rendered):
    from vision.demo import big_demo_table
    table = load_table(rendered / "r" / "f-table.toml")
    big = big_demo_table()
    assert (table.width_mm, table.depth_mm) == (big.width_mm, big.depth_mm)
    assert table.anchors == big.anchors and table.cars == big.cars


def refused(done, *words):
    assert done.returncode == 2, (done.returncode, done.stderr)
    for word in words:
        assert word in done.stderr
    assert "terminate" not in done.stderr and "Traceback" not in done.stderr and "FATAL" not in done.stderr


def test_a_copied_camera_file_is_refused_cleanly(rendered):
    r = rendered / "r"
    shutil.copy(r / "cam-camera1.yml", rendered / "copy.yml")
    done = run("serve", "--table", r / "f-table.toml", "--port", "0",
               "--source", rendered / "cam1", "--camera", r / "cam-camera1.yml",
               "--source", rendered / "cam2", "--camera", rendered / "copy.yml")
    refused(done, "camera 1 and camera 2", "identical camera files")


def test_a_4_by_3_camera_file_for_a_16_by_9_camera_2_is_refused_cleanly(rendered):
    r = rendered / "r"
    text = (r / "cam-camera2.yml").read_text()
    assert "image_width: 1920" in text
    (rendered / "four3.yml").write_text(text.replace("image_width: 1920", "image_width: 1440"))
    done = run("serve", "--table", r / "f-table.toml", "--port", "0",
               "--source", rendered / "cam1", "--camera", r / "cam-camera1.yml",
               "--source", rendered / "cam2", "--camera", rendered / "four3.yml")
    refused(done, "camera 2", "4:3 against 16:9")


def serving(rendered, **extra):
    import argparse

    from companion.commands.serve import live_for_serving
    r = rendered / "r"
    args = argparse.Namespace(source=[str(rendered / "cam1"), str(rendered / "cam2")],
                              camera=[str(r / "cam-camera1.yml"), str(r / "cam-camera2.yml")],
                              table=str(r / "f-table.toml"), loop=False, **extra)
    return live_for_serving(args)


def test_when_every_camera_ended_the_page_says_so_and_holds_the_cars_honestly(rendered):
    from conftest import wait_until
    live, _ = serving(rendered)
    live.start()
    try:
        assert wait_until(lambda: all(c["status"] == "ended" for c in live.snapshot()["cameras"]), 120)
        snap = live.snapshot()
        # Each camera's end names the camera as players know it, not its folder.
        assert [c["detail"] for c in snap["cameras"]] == ["camera 1 stopped: no more frames",
                                                           "camera 2 stopped: no more frames"]
        assert snap["source"]["status"] == "ended" and "camera 2 stopped: no more frames" in snap["error"]
        # No "too few anchors in view": the last frames checked the table.
        assert snap["pose_checked"] is True
        held = [c for c in snap["cars"] if c["stale"]]
        assert held, "the cars of cameras that ended are held"
        later = live.wait_for(snap["version"], 30)
        assert later["version"] > snap["version"]
        ages = {c["id"]: c["age_s"] for c in held}
        assert all(c["age_s"] > ages[c["id"]] for c in later["cars"] if c["id"] in ages)
    finally:
        live.stop()


def test_cameras_that_share_no_anchor_are_warned_about(rendered, tmp_path):
    import argparse
    import dataclasses

    from companion.commands.render import table_toml
    from companion.commands.serve import live_for_serving
    r = rendered / "r"
    table = load_table(r / "f-table.toml")
    # Anchors 6 and 7 (the side edges' middles) are the ones both cameras see.
    apart = dataclasses.replace(table, anchors=tuple(a for a in table.anchors if a.id not in (6, 7)))
    (tmp_path / "apart.toml").write_text(table_toml(apart))
    args = argparse.Namespace(source=[str(rendered / "cam1"), str(rendered / "cam2")],
                              camera=[str(r / "cam-camera1.yml"), str(r / "cam-camera2.yml")],
                              table=str(tmp_path / "apart.toml"), loop=False)
    live, warnings = live_for_serving(args)
    live.stop()
    said = [w for w in warnings if "share no anchor" in w]
    assert len(said) == 1
    assert "camera 1 and camera 2" in said[0] and "lay an anchor where the cameras' views overlap" in said[0]
    assert "camera 1 sees anchors 0, 1, 4" in said[0] and "camera 2 sees anchors 2, 3, 5" in said[0]
    # With the anchors both see, nothing is said.
    live, warnings = serving(rendered)
    live.stop()
    assert not any("share no anchor" in w for w in warnings)

"""`serve` with several cameras, through the command line: what it renders can be served, and a
refusal found after the cameras opened leaves with its message only (exit 2), every reader
thread closed (one left running aborted the process: "terminate called", exit 134)."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from calibration.tablefile import load_table
from tests.test_browser import browser  # noqa: F401 (a fixture)


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
    assert live.anchor_watch.said == (0, 1)       # said at start: the live table says only a change
    # With the anchors both see, nothing is said.
    live, warnings = serving(rendered)
    live.stop()
    assert not any("share no anchor" in w for w in warnings) and live.anchor_watch.said == ()


@pytest.mark.browser
def test_the_page_names_the_cameras_that_see_each_car_and_the_picked_cameras_figures(browser):  # noqa: F811
    import threading

    import numpy as np
    from waitress import create_server

    from bench.scenes import WEBCAM_BIG, big_table
    from companion.live import MultiLiveTable
    from companion.web import create_app
    from tests.test_multicam import D, W, ListSource
    from vision.multicam import demo_renderers
    from vision.render import CarTruth

    table = big_table(W, D, 3, np.random.default_rng(5))
    renderers = demo_renderers(table, 2, WEBCAM_BIG)
    poses = [CarTruth(c.id, x, y, 0.0) for c, (x, y) in zip(table.cars, [(400, 200), (900, 600), (1400, 1000)])]
    images = [r.render(poses).image for r in renderers]
    live = MultiLiveTable([ListSource([images[0]], "near"), ListSource([images[1]], "far")], table,
                          [r.camera for r in renderers])
    for i in range(2):
        live.process_camera(i, images[i], 0, 0.0)
    snap = live.snapshot()
    used = [c["anchors_used"] for c in snap["cameras"]]
    assert used[0] and used[1] and used[0] != used[1]
    from companion.game import TableGame
    from companion.rules.base import DEFAULT_SYSTEM
    game = TableGame(live)
    game.start(DEFAULT_SYSTEM, {}, game.starter_rosters(DEFAULT_SYSTEM))     # a car's card needs a game
    server = create_server(create_app(game, {"STREAM_MAX_S": 60.0}), host="127.0.0.1", port=0, threads=8)
    threading.Thread(target=server.run, daemon=True).start()
    page = browser.new_page(viewport={"width": 390, "height": 844})      # a phone
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"http://127.0.0.1:{server.effective_port}/")
        page.wait_for_function("document.querySelectorAll('#car-rows tr td:nth-child(7)').length === 3",
                               timeout=20000)
        assert "seen by" in page.eval_on_selector_all("#car-rows", "t => t[0].parentNode.querySelector('thead').textContent")
        seen = page.eval_on_selector_all("#car-rows tr td:nth-child(7)", "tds => tds.map(td => td.textContent)")
        by_id = {c["id"]: c["cameras"] for c in snap["cars"]}
        assert sorted(seen) == sorted(" and ".join(v) for v in by_id.values())
        # The car's card says which cameras see it.
        first = snap["cars"][0]
        page.dispatch_event(f'#cars [data-car-id="{first["id"]}"]', "click")
        page.wait_for_function("document.getElementById('car-seen-by')", timeout=20000)
        assert page.text_content("#car-seen-by") == "seen by " + " and ".join(first["cameras"])
        # The coverage names are legible on a phone: at least 14 screen pixels high.
        heights = page.eval_on_selector_all("#coverage text", "ts => ts.map(t => t.getBoundingClientRect().height)")
        assert len(heights) == 2 and min(heights) >= 14
        # Camera 2 picked: its own anchors and error, not camera 1's.
        page.wait_for_selector("#camera-pick", state="attached", timeout=20000)
        page.click('#tabs [data-tab="calibration"]')
        page.select_option("#camera-pick", "2")
        page.wait_for_function("document.getElementById('calib-figures').textContent.startsWith('camera 2')",
                               timeout=20000)
        text = page.text_content("#calib-figures")
        assert f"anchors {', '.join(map(str, used[1]))}." in text or f"anchors {', '.join(map(str, used[1]))} (" in text
        assert f"{snap['cameras'][1]['reprojection_mm']:.2f} mm" in text
        page.select_option("#camera-pick", "1")
        page.wait_for_function("document.getElementById('calib-figures').textContent.startsWith('camera 1')",
                               timeout=20000)
        assert not errors
    finally:
        page.close()
        server.close()
        live.stop()


def test_a_caption_on_the_camera_picture_has_no_stray_outline_beyond_it():
    """The picture's captions have a dark outline; drawn as thick text it ran past the light text
    (OpenCV spaces thick glyphs wider): "...camera calibrated" then a stray dark "ted"."""
    import numpy as np

    from vision.overlay import _text
    image = np.full((60, 900, 3), 120, np.uint8)
    _text(image, "anchors 5: reprojection 0.09 px = 0.09 mm; camera calibrated", (12, 28), (255, 255, 255))
    light = np.nonzero((image > 200).all(axis=2).any(axis=0))[0]
    dark = np.nonzero((image < 40).all(axis=2).any(axis=0))[0]
    assert len(light) and len(dark)
    assert dark.max() <= light.max() + 3 and dark.min() >= light.min() - 3

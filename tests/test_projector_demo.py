"""`companion demo --projector` and `serve --projector FILE`: the synthetic projector's
light in the demo's frames, calibrated through the camera at start, and a saved
calibration loaded (or refused, saying why) when serving a table."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bench import projector as bp
from calibration.projector import table_fingerprint
from companion.commands.serve import DemoLight, served_projector
from companion.game import TableGame
from companion.live import LiveTable
from vision.sources import SyntheticSource


@pytest.fixture(scope="module")
def demo(demo_table):
    source = SyntheticSource(demo_table, paced=False, seed=2)
    light = source.projected = DemoLight(source.renderer, demo_table)
    return source, light


def test_the_demo_frames_carry_the_projectors_light_and_its_image_is_drawn_only_when_it_changes(demo, demo_table):
    source, light = demo
    light.display.set_model(bp.exact_model(demo_table, light.projector))
    template = bp.template(400.0, 300.0, 0.0, length=200.0, width=60.0)
    light._scene = lambda: [template]
    try:
        lit = source.read()
        drawn = light.drawn
        again = source.read()
        assert light.drawn == drawn                  # the same scene: the image is not drawn again
        # The template's edge is lit in the camera's frame; the middle of the template is not.
        camera = source.renderer
        edge, inside = np.array([[500.0, 270.0, 0.0]]), np.array([[500.0, 300.0, 0.0]])
        (ex, ey), (ix, iy) = (np.round(camera.project(p)[0]).astype(int) for p in (edge, inside))
        grey = lit.image.astype(float).mean(axis=2)
        assert grey[ey, ex] > grey[iy, ix] + 40
        assert abs(float(again.image.astype(float).mean(axis=2)[ey, ex]) - grey[ey, ex]) < 15
        light.display.set_mode("nothing")            # chosen on the page: the projector throws nothing
        assert light() is None
        dark = source.read().image.astype(float).mean(axis=2)
        assert dark[ey, ex] < grey[ey, ex] - 40
    finally:
        light.display.set_mode("everything")
        light.display.set_model(None)
        light._scene = lambda: []


def test_the_demo_projector_is_calibrated_through_the_camera_at_start(demo_table):
    source = SyntheticSource(demo_table, paced=False, seed=4)
    light = source.projected = DemoLight(source.renderer, demo_table)
    live = LiveTable(lambda: source, demo_table, source.camera)
    game = TableGame(live)
    light.follow(game)
    live.start()
    try:
        thread = light.calibrate_in_background(game, settle_frames=2, settle_s=0.0)
        thread.join(120)
        assert not thread.is_alive()
    finally:
        live.stop()
    said = [n["text"] for n in game.notes]
    assert light.display.model is not None, said
    assert any("calibrated through the camera" in t and "whole table" in t for t in said), said
    assert not light.display.showing_pattern
    # Against the synthetic projector itself: where the model puts table points, to a pixel.
    pts = np.random.default_rng(1).uniform((0, 0), (demo_table.width_mm, demo_table.depth_mm), (300, 2))
    off = np.hypot(*(light.display.model.table_to_projector(pts) - light.projector.table_to_projector(pts)).T)
    assert off.max() < 1.0


def test_serve_loads_a_saved_calibration_and_refuses_another_tables_saying_why(demo_table, tmp_path):
    from vision.projector_sim import demo_projector

    model = bp.exact_model(demo_table, demo_projector(demo_table))
    path = model.save(tmp_path / "projector.json")
    display, said = served_projector(str(path), demo_table)
    assert display.model is not None and said == ()
    assert display.model.table_fingerprint == table_fingerprint(demo_table)
    moved = dataclasses.replace(demo_table, anchors=(dataclasses.replace(demo_table.anchors[0], x_mm=60.0),
                                                     *demo_table.anchors[1:]))
    display, said = served_projector(str(path), moved)
    assert display.model is None
    assert len(said) == 1 and "the projector is off" in said[0] and "another table" in said[0]
    display, said = served_projector(str(tmp_path / "missing.json"), demo_table)
    assert display.model is None and "no projector calibration there" in said[0]
    # No --projector and none kept beside the table file: no projector, nothing to say.
    display, said = served_projector(None, demo_table)
    assert display.model is None and said == ()


def test_demo_projector_with_several_cameras_is_refused():
    import argparse

    from companion.commands import CommandError
    from companion.commands.serve import _demo_cameras

    args = argparse.Namespace(projector=True, cameras=2, scripted=True, fps=15.0, port=0, lan=False, pin=None,
                              no_game=True, game=None, host_name=[])
    with pytest.raises(CommandError, match="one camera"):
        _demo_cameras(args, None)

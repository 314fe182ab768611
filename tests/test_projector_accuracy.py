"""Issue 27's "done when": on the demo's synthetic table, with the projector tilted and
off-centre (vision/projector_sim.py demo_projector), calibrated from dots the camera
sees, the camera finds every projected template edge, arc and square within 2 mm of
where the rules put it, over the whole table; and a car's roof marker under its mask
is still found with the projection on."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bench import projector as bp
from companion.projector import ProjectorDisplay
from companion.projector_cal import SyntheticRig, calibrate
from tests.conftest import SPREAD_POSES
from vision.locate import Locator
from vision.projector_sim import demo_projector

#: The issue's bound: every sampled point of a thrown edge within this of where the rules put it.
WITHIN_MM = 2.0


@pytest.fixture(scope="module")
def rig(demo_table, renderer):
    """The demo's webcam and projector, the table's pose as the camera locates it, the
    unlit frame and the projector calibrated through the camera."""
    projector = demo_projector(demo_table)
    # The companion's own calibration (companion/projector_cal.py): numbered dots thrown,
    # found by the camera, put on the table through the anchors' pose.
    synthetic = SyntheticRig(renderer, projector, seed=5)
    result = calibrate(demo_table, synthetic.throw, synthetic.grab, projector.size_px, camera=renderer.camera)
    unlit = renderer.render([], np.random.default_rng(3))
    pose = Locator(demo_table, renderer.camera).locate(unlit.image).table_pose
    return {"table": demo_table, "renderer": renderer, "projector": projector, "maps": synthetic.maps,
            "pose": pose, "model": result.model, "unlit": bp.grey(unlit.image)}


def _scene(table):
    """Where the rules put things: a move template, a weapon arc, a grid of squares over the table."""
    return ([bp.template(300.0, 250.0, 25.0, label="move template"),
             bp.arc(700.0, 450.0, 60.0, reach=300.0, label="weapon arc")]
            + bp.squares(table.width_mm, table.depth_mm, table.anchors))


def _measured(rig, model, scene):
    display = ProjectorDisplay(model)
    lit, _ = bp.lit_frame(rig["renderer"], rig["maps"], display, scene, [], seed=8)
    return bp.edge_errors(bp.grey(lit.image) - rig["unlit"], rig["pose"], scene)


def test_the_projector_is_calibrated_from_what_the_camera_sees_and_covers_the_table(rig):
    model, table = rig["model"], rig["table"]
    assert model.points >= 60
    assert model.coverage(table.width_mm, table.depth_mm).missed == ()
    # Not a fit to itself only: against the synthetic projector's own mapping, anywhere on the table.
    pts = np.random.default_rng(0).uniform((0, 0), (table.width_mm, table.depth_mm), (400, 2))
    off_px = np.hypot(*(model.table_to_projector(pts) - rig["projector"].table_to_projector(pts)).T)
    assert off_px.max() < 1.5


def test_every_projected_edge_is_seen_within_2_mm_of_where_the_rules_put_it_over_the_whole_table(rig):
    table = rig["table"]
    scene = _scene(table)
    errors = _measured(rig, rig["model"], scene)
    unseen = [(label, p.round(1).tolist()) for label, p, e in errors if e is None]
    assert unseen == [], f"the camera saw no light at {unseen[:5]}"
    off = [(label, p.round(1).tolist(), round(e, 2)) for label, p, e in errors if abs(e) > WITHIN_MM]
    assert off == [], f"{len(off)} points more than {WITHIN_MM} mm off: {off[:5]}"
    labels = {label for label, _, _ in errors}
    assert {"move template", "weapon arc", "square"} <= labels
    # Over the whole table: measured points near each of its four corners, and along the far edge too.
    where = np.array([p for _, p, _ in errors])
    for cx, cy in ((0, 0), (table.width_mm, 0), (table.width_mm, table.depth_mm), (0, table.depth_mm)):
        assert np.hypot(where[:, 0] - cx, where[:, 1] - cy).min() < 150, f"nothing measured near ({cx}, {cy})"
    assert len(errors) > 500


def test_a_projector_knocked_3_mm_after_its_calibration_is_seen_3_mm_off(rig):
    """The measure can fail, and says which way: the same scene thrown through a model
    3 mm off along the table's x (a projector knocked after it was calibrated) is seen
    3 mm off across the edges that run along y, and not across those along x."""
    from calibration.projector import fit_projector

    table, model = rig["table"], rig["model"]
    xs, ys = np.meshgrid(np.linspace(0, table.width_mm, 12), np.linspace(0, table.depth_mm, 8))
    pts = np.column_stack([xs.ravel(), ys.ravel()])
    knocked = fit_projector(pts, model.table_to_projector(pts - (3.0, 0.0)), model.size_px)
    squares = bp.squares(table.width_mm, table.depth_mm, table.anchors)
    errors = _measured(rig, knocked, squares)
    seen = [e for _, _, e in errors if e is not None]
    assert len(seen) == len(errors) and max(abs(e) for e in seen) > WITHIN_MM
    off = [abs(e) for e in seen if abs(e) > 1.5]
    # Half the squares' edges run along y (their normal along x): those, and only those, are seen 3 mm off.
    assert len(off) == pytest.approx(len(seen) / 2, rel=0.1)
    assert np.median(off) == pytest.approx(3.0, abs=0.4)


def test_roof_markers_under_their_masks_are_found_with_a_busy_projection_on(rig):
    """Templates, arcs and squares thrown all over the table, every car's roof and every
    anchor masked: the locator finds every car as well as without the light."""
    table, renderer = rig["table"], rig["renderer"]
    display = ProjectorDisplay(rig["model"])
    scene = bp.busy_scene(table, SPREAD_POSES, with_masks=True, arcs_every=1)
    lit, _ = bp.lit_frame(renderer, rig["maps"], display, scene, SPREAD_POSES, seed=11)
    located = Locator(table, renderer.camera).locate(lit.image)
    assert {c.id for c in located.cars} == {p.id for p in SPREAD_POSES} and located.missing == ()
    assert located.anchors == (0, 1, 2, 3, 4, 5)
    for car in located.cars:
        t = lit.cars[car.id]
        assert math.hypot(car.x_mm - t.x_mm, car.y_mm - t.y_mm) < 1.0, car
        assert abs((car.heading_deg - t.heading_deg + 180) % 360 - 180) < 1.5, car

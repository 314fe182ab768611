"""Issue 27: "a moved projector is noticed as a knocked camera is", without throwing marks
over the game. On the demo's synthetic table, the projector calibrated through the camera,
the watch (companion/projector_watch.py) reads the game's lines in ordinary lit frames:
a projector knocked after its calibration is flagged after watches in a row, an unmoved
one never (with noise and JPEG, cars standing on the lines, a hand over the table), and a
scene with too few lines says nothing."""

from __future__ import annotations

from types import SimpleNamespace

import cv2
import numpy as np
import pytest

from bench import projector as bp
from companion.projector import ProjectorDisplay
from companion.projector_cal import SyntheticRig, calibrate
from companion.projector_watch import IN_A_ROW, MOVED_MM, ProjectorWatch, measure, stroke_samples
from vision.locate import Locator
from vision.projector_sim import LightMaps, SyntheticProjector, demo_projector
from vision.render import CarTruth


def _turned(projector: SyntheticProjector, axis, deg: float) -> SyntheticProjector:
    """The projector turned `deg` about an axis of its own (a knock), its lens where it was."""
    d = cv2.Rodrigues(np.radians(deg) * np.asarray(axis, float))[0]
    r = cv2.Rodrigues(projector.rvec)[0]
    return SyntheticProjector(projector.lens, cv2.Rodrigues(d @ r)[0].ravel(), d @ projector.tvec)


@pytest.fixture(scope="module")
def rig(demo_table, renderer):
    projector = demo_projector(demo_table)
    synthetic = SyntheticRig(renderer, projector, seed=5)
    model = calibrate(demo_table, synthetic.throw, synthetic.grab, projector.size_px, camera=renderer.camera).model
    unlit = renderer.render([], np.random.default_rng(3))
    pose = Locator(demo_table, renderer.camera).locate(unlit.image).table_pose
    knocked = _turned(projector, (0.3, 0.2, 1.0), 0.45)
    return {"table": demo_table, "renderer": renderer, "projector": projector, "model": model, "pose": pose,
            "maps": synthetic.maps, "knocked": knocked, "knocked_maps": LightMaps(renderer, knocked)}


def _scene(table):
    return ([bp.template(300.0, 250.0, 25.0, label="move template"),
             bp.arc(700.0, 450.0, 60.0, reach=300.0, label="weapon arc")]
            + bp.squares(table.width_mm, table.depth_mm, table.anchors))


def _frame(rig, scene, cars=(), knocked=False, seed=8, rough=False, hand=False):
    maps = rig["knocked_maps"] if knocked else rig["maps"]
    lit, _ = bp.lit_frame(rig["renderer"], maps, ProjectorDisplay(rig["model"]), scene, list(cars), seed)
    image = lit.image.copy()
    rng = np.random.default_rng(seed)
    if hand:
        # A hand and forearm reaching over the table: skin, lit by the projector's lines as it passes.
        pose = rig["pose"]
        palm = np.array([[760, 260], [860, 240], [900, 300], [850, 360], [760, 350]], float)
        arm = np.array([[780, 300], [840, 300], [880, -40], [800, -40]], float)
        for poly in (palm, arm):
            px = pose.image_from_table(np.column_stack([poly, np.zeros(len(poly))]))
            cv2.fillPoly(image, [np.round(px).astype(np.int32)], (120, 150, 200), cv2.LINE_AA)
    if rough:
        image = np.clip(image + rng.normal(0, 5, image.shape), 0, 255).astype(np.uint8)
        ok, jpg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 70])
        image = cv2.imdecode(jpg, cv2.IMREAD_COLOR)
    return image


def _true_off(rig, points):
    """How far the knocked projector's light lands from where the calibration draws it (mm)."""
    model = rig["model"]
    landed = model.projector_to_table(rig["knocked"].table_to_projector(points))
    return np.hypot(*(landed - points).T)


def _watch(rig, notes):
    display = ProjectorDisplay(rig["model"])
    display.check_text = "projection within 0.6 mm"
    live = SimpleNamespace(table=rig["table"])
    return ProjectorWatch(display, live, scene=lambda: [], note=lambda text, kind: notes.append((text, kind)))


def test_a_projector_knocked_after_its_calibration_is_flagged_after_watches_in_a_row_and_cleared_when_back(rig):
    table, pose = rig["table"], rig["pose"]
    scene = _scene(table)
    notes = []
    watch = _watch(rig, notes)
    pts = stroke_samples(scene)[0]
    truth = float(np.median(_true_off(rig, pts)))
    assert 3.0 < truth < 8.0                      # the knock moves the lines a few mm
    for k in range(IN_A_ROW):
        reading = watch.observe(_frame(rig, scene, knocked=True, seed=20 + k, rough=k == 1), pose, [], scene)
        assert reading.off_mm is not None and reading.off_mm == pytest.approx(truth, abs=1.0), reading
        assert reading.found >= 0.8 * reading.sampled
        if k < IN_A_ROW - 1:
            assert watch.display.check_text == "projection within 0.6 mm" and notes == []
    text = watch.display.check_text
    assert text.startswith("the projector's lines land ") and "it may have moved; Setup → Check projector" in text
    assert f"{reading.off_mm:.0f} mm" in text
    assert notes == [(text, "warn")]
    # Still knocked: said once, not again every watch.
    watch.observe(_frame(rig, scene, knocked=True, seed=30), pose, [], scene)
    assert len(notes) == 1 and watch.warned
    # Put back (or recalibrated): cleared after as many watches in a row, the check's words restored.
    for k in range(IN_A_ROW):
        assert watch.warned
        reading = watch.observe(_frame(rig, scene, seed=40 + k), pose, [], scene)
        assert reading.off_mm < 1.0
    assert not watch.warned and watch.display.check_text == "projection within 0.6 mm"
    assert len(notes) == 2 and notes[1][1] == "info"
    # Knocked again, then calibrated again: the warning goes with the old calibration, unsaid.
    knocked = _frame(rig, scene, knocked=True, seed=31)
    for _ in range(IN_A_ROW):
        watch.observe(knocked, pose, [], scene)
    assert watch.warned and len(notes) == 3
    watch.display.set_model(bp.exact_model(table, rig["knocked"]))
    watch.observe(knocked, pose, [], scene)       # (a frame of the old drawing: one watch is no streak)
    assert not watch.warned
    assert watch.display.check_text == "projection within 0.6 mm" and len(notes) == 3


def test_an_unmoved_projector_is_never_flagged_with_noise_jpeg_cars_on_the_lines_and_a_hand(rig):
    table, pose = rig["table"], rig["pose"]
    # Cars standing on the template, the arc's rim and squares' sides; their masks thrown too.
    cars = [CarTruth(10, 360.0, 280.0, 25.0), CarTruth(11, 940.0, 600.0, 90.0),
            CarTruth(12, 520.0, 128.0, 0.0), CarTruth(13, 150.0, 600.0, -45.0)]
    scene = _scene(table) + bp.masks(table, cars)
    notes = []
    watch = _watch(rig, notes)
    for k, (rough, hand) in enumerate([(True, False), (False, True), (True, True), (True, True), (True, False)]):
        frame = _frame(rig, scene, cars, seed=50 + k, rough=rough, hand=hand)
        reading = watch.observe(frame, pose, cars, scene)
        assert reading.off_mm is not None and reading.off_mm < 1.2, reading
    assert not watch.warned and notes == [] and watch.display.check_text == "projection within 0.6 mm"
    # The same frames through a model of the knocked projector's light would be said off: the watch can fail.
    knocked_scene = scene
    reading = measure(_frame(rig, knocked_scene, cars, knocked=True, seed=60, rough=True, hand=True), pose,
                      knocked_scene, table, cars, rig["model"])
    assert reading.off_mm is not None and reading.off_mm > MOVED_MM


def test_a_scene_with_too_few_lines_says_nothing(rig):
    table, pose = rig["table"], rig["pose"]
    notes = []
    watch = _watch(rig, notes)
    # One move template: four strokes of one shape, however far the knocked projector throws them.
    scene = [bp.template(400.0, 300.0, 10.0, label="move template")]
    for k in range(IN_A_ROW + 1):
        reading = watch.observe(_frame(rig, scene, knocked=True, seed=70 + k), pose, [], scene)
        assert reading.off_mm is None and reading.why == "the projector draws too few lines to watch", reading
    assert not watch.warned and notes == [] and watch.readings == 0
    # Nothing drawn at all, and only masks: nothing said either.
    assert measure(np.zeros((1080, 1920, 3), np.uint8), pose, [], table).off_mm is None
    only_masks = bp.masks(table, [CarTruth(10, 600.0, 400.0, 0.0)])
    assert measure(np.zeros((1080, 1920, 3), np.uint8), pose, only_masks, table).off_mm is None


def test_a_watch_from_the_live_table_waits_for_the_scene_to_hold_still_and_skips_while_a_pattern_is_thrown(rig):
    table, pose = rig["table"], rig["pose"]
    scene = _scene(table)
    frame = _frame(rig, scene, knocked=True, seed=80)
    located = SimpleNamespace(table_pose=pose, pose_checked=True, table_moved=False, cars=[])
    live = SimpleNamespace(table=table, last_image=lambda: (frame, SimpleNamespace(located=located)))
    shown = {"scene": scene}
    display = ProjectorDisplay(rig["model"])
    watch = ProjectorWatch(display, live, scene=lambda: shown["scene"])
    assert watch.tick() is None                   # the scene just seen: its light may not be on the table yet
    reading = watch.tick()
    assert reading is not None and reading.off_mm > MOVED_MM
    shown["scene"] = scene[:-1]                   # it changed: wait again
    assert watch.tick() is None
    display.show_pattern([], "checking the projector")
    assert watch.tick() is None and watch.tick() is None
    display.clear_pattern()
    display.set_mode("nothing")
    assert watch.tick() is None and watch.tick() is None


def test_serve_s_watch_reads_the_live_tables_frames_and_says_a_knock_on_the_check_line_and_the_notes(rig):
    """As `serve` wires it (projector_cal_api.watch_lines): the live table's own frames and
    pose, the game's notes, Setup's status."""
    from companion.live import LiveTable
    from companion.web import create_app
    from companion.web.projector_cal_api import watch_lines
    from vision.sources import SyntheticSource

    table = rig["table"]
    live = LiveTable(SyntheticSource(table, paced=False), table, rig["renderer"].camera)
    display = ProjectorDisplay(rig["model"])
    app = create_app(live, {"PROJECTOR": display, "TESTING": True})
    watch = watch_lines(app)
    watch.stop()                                  # its thread's ticks: driven here instead, one per frame
    assert watch_lines(app) is watch and watch.display is display
    assert isinstance(watch.scene(), list)        # the game's own scene (nothing going on yet)
    scene = _scene(table)
    watch.scene = lambda: scene
    game = app.extensions["table_game"]
    for k in range(IN_A_ROW + 1):
        live.process(_frame(rig, scene, knocked=True, seed=90 + k), k, k / 15.0)
        watch.tick()
    warned = [n for n in game.notes if n["text"].startswith("the projector's lines land ")]
    assert len(warned) == 1 and warned[0]["kind"] == "warn", game.notes
    status = app.test_client().get("/api/projector/status").get_json()
    assert status["check"] == warned[0]["text"]

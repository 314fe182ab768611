"""The projector calibrated with the camera (companion/projector_cal.py), no tape measure:
on the demo table with the demo's synthetic projector (tilted, off-centre, lens-shifted,
barrel) seen by a small synthetic camera, the fitted model lands within 1 mm of the
projector's truth over the table; its check marks say how near; a projector moved
after it was calibrated is caught; a pattern the camera cannot see, a projector
covering half the table and another table's file each get a message saying what the
camera saw and what to do, with nothing calibrated lost; the CLI and the page's
routes run the same flow."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from calibration.projector import ProjectorFileError, ProjectorModel
from companion.cli import main
from companion.projector import ProjectorDisplay
from companion.projector_cal import (CHECK_OK_MM, ProjectorCalError, ProjectorService, SyntheticRig,
                                     calibrate, check_marks, locate_table, save_calibration)
from vision.demo import DemoScript, demo_table as _demo_table
from vision.projector_sim import LightMaps, SyntheticProjector, demo_projector, rasterize
from vision.render import RenderOptions, TableRenderer, look_at
from vision.sources import Frame, FrameSource

from tests.conftest import wait_until

SIZE = (960, 540)


@pytest.fixture(scope="module")
def table():
    return _demo_table()


@pytest.fixture(scope="module")
def renderer(table):
    return TableRenderer.overhead(table, RenderOptions(supersample=2), seed=3, width=SIZE[0], height=SIZE[1])


@pytest.fixture(scope="module")
def cars(table):
    # The demo's cars where its script starts: dots landing on them must be left out.
    return DemoScript(table).poses_at(0.0)


@pytest.fixture(scope="module")
def projector(table):
    return demo_projector(table)


@pytest.fixture(scope="module")
def rig(renderer, projector, cars):
    return SyntheticRig(renderer, projector, cars, seed=4)


@pytest.fixture(scope="module")
def calibrated(table, renderer, rig, projector):
    return calibrate(table, rig.throw, rig.grab, projector.size_px, camera=renderer.camera)


def _table_grid(table, step=10.0, inset=2.0):
    xs = np.arange(inset, table.width_mm - inset + 1e-9, step)
    ys = np.arange(inset, table.depth_mm - inset + 1e-9, step)
    gx, gy = np.meshgrid(xs, ys)
    return np.column_stack([gx.ravel(), gy.ravel()])


def _moved(projector: SyntheticProjector, degrees: float) -> SyntheticProjector:
    """The same projector turned a little about its own vertical axis (knocked on its mount)."""
    r, _ = cv2.Rodrigues(projector.rvec)
    turn, _ = cv2.Rodrigues(np.array([0.0, np.radians(degrees), 0.0]))
    rvec, _ = cv2.Rodrigues(turn @ r)
    return dataclasses.replace(projector, rvec=rvec.reshape(3), tvec=turn @ projector.tvec)


# --- calibrating ------------------------------------------------------------------------------

def test_the_model_lands_within_a_millimetre_of_the_projectors_truth_over_the_whole_table(calibrated, table,
                                                                                         projector):
    model = calibrated.model
    pts = _table_grid(table)
    truth = projector.table_to_projector(pts)
    got = model.table_to_projector(pts)
    scale = np.array([model.px_per_mm(p) for p in pts])
    err_mm = np.hypot(*(got - truth).T) / scale
    assert model.inside(truth).all()                 # the whole table is lit: the whole table is compared
    assert err_mm.max() < 1.0, f"worst {err_mm.max():.2f} mm"
    assert np.median(err_mm) < 0.6
    # Its own points fit to a fraction of a millimetre, over enough dots for the lens.
    assert model.rms_mm < 0.4
    assert calibrated.dots_used >= 40
    assert calibrated.dots_seen > calibrated.dots_used       # some missed the table or lay on a car
    assert calibrated.coverage.share > 0.99 and not calibrated.coverage.missed
    assert "covers the whole table" in calibrated.words()


def test_the_calibration_checks_itself_in_millimetres(calibrated):
    check = calibrated.check
    assert check is not None and check.ok
    assert check.seen == check.marks >= 5
    assert check.max_mm < 1.0
    assert check.words == f"projection within {check.max_mm:.1f} mm"


def test_dots_landing_on_cars_are_left_out(table, renderer, rig, calibrated, cars):
    """No dot measured on the table lies where a car stands (its light lands on the car's body)."""
    model = calibrated.model
    # Every car's footprint centre maps back to a table point the model agrees with: the fit
    # was not pulled by the cars' roofs 30 mm up.
    pts = np.array([(c.x_mm, c.y_mm) for c in cars])
    truth = rig.projector.table_to_projector(pts)
    err = np.hypot(*(model.table_to_projector(pts) - truth).T) / model.px_per_mm(pts.mean(axis=0))
    assert err.max() < 1.0


# --- checking -------------------------------------------------------------------------------------

def test_a_projector_moved_after_its_calibration_is_caught_by_the_check(table, renderer, projector, cars,
                                                                          calibrated):
    moved = SyntheticRig(renderer, _moved(projector, 0.4), cars, seed=5)
    pose = locate_table(table, renderer.camera, moved.grab()).table_pose
    result = check_marks(table, calibrated.model, moved.throw, moved.grab, pose, cars)
    assert not result.ok
    assert result.max_mm is not None and result.max_mm > CHECK_OK_MM
    assert "has moved since it was calibrated" in result.words and "calibrate it again" in result.words
    # The same model, the projector where it was: in place.
    in_place = SyntheticRig(renderer, projector, cars, seed=6)
    still = check_marks(table, calibrated.model, in_place.throw, in_place.grab, pose, cars)
    assert still.ok and still.max_mm < 1.0


# --- bad input -------------------------------------------------------------------------------------

def test_a_pattern_the_camera_cannot_see_is_said_in_its_words(table, renderer, projector, cars):
    dark = SyntheticRig(renderer, dataclasses.replace(projector, gain=0.0), cars, seed=7)
    with pytest.raises(ProjectorCalError) as info:
        calibrate(table, dark.throw, dark.grab, projector.size_px, camera=renderer.camera)
    text = str(info.value)
    assert text.startswith("the camera saw no change on the table when the projector threw its calibration dots")
    assert "projector is on" in text and "points at the table" in text


def test_a_dark_projector_under_a_noisy_camera_is_said_as_dark_not_as_the_room_light(table, projector, cars):
    """A webcam's noise and JPEG make a few specks change between two frames of a dark
    table: that is no pattern, and the player is sent to the projector, not the room's light."""
    from vision.render import RenderOptions, TableRenderer
    noisy = TableRenderer.overhead(table, RenderOptions(noise_sigma=7.0, jpeg_quality=60, supersample=1),
                                   seed=4, width=960, height=540)
    dark = SyntheticRig(noisy, dataclasses.replace(projector, gain=0.0), cars, seed=9)
    with pytest.raises(ProjectorCalError) as info:
        calibrate(table, dark.throw, dark.grab, projector.size_px, camera=noisy.camera)
    text = str(info.value)
    assert text.startswith(("the camera saw no change on the table", "the camera saw none of the projector's "
                                                                      "calibration dots")), text
    assert "projector is on" in text and "room" not in text


def test_a_projector_pointed_off_the_table_is_said(table, renderer, projector, cars):
    rvec, tvec = look_at((0.3 * table.width_mm, -0.35 * table.depth_mm, 1400.0),
                         (-3000.0, -2500.0, 0.0))             # aimed at the floor well away from the table
    away = SyntheticRig(renderer, dataclasses.replace(projector, rvec=np.asarray(rvec), tvec=np.asarray(tvec)),
                        cars, seed=8)
    with pytest.raises(ProjectorCalError) as info:
        calibrate(table, away.throw, away.grab, projector.size_px, camera=renderer.camera)
    assert "the camera saw no change on the table" in str(info.value)


def test_a_projector_covering_half_the_table_names_the_part_it_misses(table, renderer, projector, cars):
    # The demo's projector hung 0.65 of the table further left: it lights the left half.
    r, _ = cv2.Rodrigues(projector.rvec)
    left = dataclasses.replace(projector, tvec=projector.tvec + r @ np.array([0.65 * table.width_mm, 0, 0]))
    rig = SyntheticRig(renderer, left, cars, seed=9)
    result = calibrate(table, rig.throw, rig.grab, left.size_px, camera=renderer.camera)
    cov = result.coverage
    pts = _table_grid(table, inset=5.0)
    truth = np.mean(result.model.inside(left.table_to_projector(pts)))
    assert 0.4 < truth < 0.6 and abs(cov.share - truth) < 0.03
    assert "the right edge" in cov.missed and not any("left" in m for m in cov.missed)
    assert "it leaves out" in result.words() and "right edge" in result.words()
    assert result.check is not None and result.check.ok       # where it does light, it is right


def test_a_projector_lighting_a_sliver_of_the_table_is_refused_with_what_it_covers(table, renderer, projector,
                                                                                   cars):
    r, _ = cv2.Rodrigues(projector.rvec)
    away = dataclasses.replace(projector, tvec=projector.tvec + r @ np.array([1.0 * table.width_mm, 0, 0]))
    rig = SyntheticRig(renderer, away, cars, seed=13)
    with pytest.raises(ProjectorCalError) as info:
        calibrate(table, rig.throw, rig.grab, away.size_px, camera=renderer.camera)
    text = str(info.value)
    assert text.startswith("the projector lights too little of the table to use: the projector covers ")
    assert "it leaves out" in text and "aim and zoom the projector" in text and "Nothing was saved" in text


def test_the_hard_rendering_still_calibrates_within_a_millimetre(table, projector, cars):
    """Sensor noise 5, blur, a light gradient across the table and JPEG at 75: the light's
    ratio still finds every dot, and a car the camera misses is left out by the fit."""
    hard = TableRenderer.overhead(table, RenderOptions(noise_sigma=5, blur_sigma=1.0, light_gradient=0.3,
                                                       jpeg_quality=75, supersample=2),
                                  seed=2, width=SIZE[0], height=SIZE[1])
    rig = SyntheticRig(hard, projector, cars, seed=14)
    result = calibrate(table, rig.throw, rig.grab, projector.size_px, camera=hard.camera)
    pts = _table_grid(table)
    model = result.model
    scale = np.array([model.px_per_mm(p) for p in pts])
    err = np.hypot(*(model.table_to_projector(pts) - projector.table_to_projector(pts)).T) / scale
    assert err.max() < 1.0 and result.check.ok and result.check.max_mm < 1.0


def test_the_table_not_found_is_said_with_the_anchors_seen(table, renderer, projector):
    """A camera that does not see the anchors (covered) cannot put the dots on the table."""
    class Covered(SyntheticRig):
        def grab(self):
            image = super().grab()
            image[:, :] = cv2.blur(image, (41, 41))          # a camera far out of focus: no marker reads
            return image
    rig = Covered(renderer, projector, (), seed=10)
    with pytest.raises(ProjectorCalError) as info:
        calibrate(table, rig.throw, rig.grab, projector.size_px, camera=renderer.camera)
    assert "the camera cannot find the table" in str(info.value) and "anchors" in str(info.value)


def test_another_tables_calibration_is_refused_and_nothing_calibrated_is_lost(table, calibrated, tmp_path):
    path = tmp_path / "projector.json"
    save_calibration(calibrated.model, path, table)
    good = path.read_bytes()
    anchors = list(table.anchors)
    anchors[0] = dataclasses.replace(anchors[0], x_mm=anchors[0].x_mm + 40)
    other = dataclasses.replace(table, anchors=tuple(anchors), source=str(tmp_path / "other.toml"))
    with pytest.raises(ProjectorFileError, match="was made on another table"):
        ProjectorModel.load(path, other)
    assert path.read_bytes() == good
    # Calibrating the other table there keeps the first file beside it, whole.
    said = save_calibration(calibrated.model, path, other)
    assert "kept as" in said and "another table" in said
    assert (tmp_path / "projector.json.old").read_bytes() == good
    assert ProjectorModel.load(tmp_path / "projector.json.old", table).points == calibrated.model.points


def test_the_page_is_told_of_another_tables_calibration_beside_the_table_file(table, calibrated, tmp_path):
    anchors = list(table.anchors)
    anchors[1] = dataclasses.replace(anchors[1], y_mm=anchors[1].y_mm + 25)
    other = dataclasses.replace(table, anchors=tuple(anchors), source=str(tmp_path / "table.toml"))
    save_calibration(calibrated.model, tmp_path / "projector.json", table)

    class Live:                      # what the status reads of the live table
        pass
    live = Live()
    live.table = other
    st = ProjectorService(ProjectorDisplay(), live).status()
    assert not st["calibrated"] and "was made on another table" in st["error"]
    assert "calibrate the projector again on this table" in st["error"]


def test_a_knocked_camera_has_the_projector_checked_again_at_most_once_a_minute(table, calibrated):
    from types import SimpleNamespace

    listeners = []
    live = SimpleNamespace(table=table, add_frame_listener=listeners.append)
    svc = ProjectorService(ProjectorDisplay(calibrated.model), live)
    started = []
    svc.start = started.append                       # what would run in the background
    svc.watch_camera()
    frame = lambda moved: SimpleNamespace(located=SimpleNamespace(table_moved=moved))  # noqa: E731
    listeners[0](frame(False))
    assert started == []
    listeners[0](frame(True))
    assert started == ["check"]
    listeners[0](frame(True))                         # the same knock seen on the next frame
    assert started == ["check"]
    svc.display.set_model(None)
    svc._checked_at = -float("inf")
    listeners[0](frame(True))                         # nothing calibrated: nothing to check
    assert started == ["check"]


# --- a running companion ------------------------------------------------------------------------------

class _ProjectedSource(FrameSource):
    """A live camera over the demo table lit by the synthetic projector, which throws what
    the companion's projector display shows (as the /projector page would)."""

    live = True

    def __init__(self, renderer, projector, display: ProjectorDisplay, cars=()) -> None:
        super().__init__("synthetic camera under the synthetic projector")
        self.renderer, self.projector, self.display = renderer, projector, display
        self.maps = LightMaps(renderer, projector)
        self.cars = list(cars)
        self.index = 0
        self.rng = np.random.default_rng(12)

    def read(self):
        shapes = self.display.frame([])["shapes"]
        thrown = rasterize(shapes, self.projector.size_px)
        image = self.renderer.render(self.cars, self.rng, projected=(self.maps, thrown))
        time.sleep(0.01)
        self.index += 1
        return Frame(self.index - 1, image.image, self.index / 15.0)


def _wait_idle(client, timeout=60.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        st = client.get("/api/projector/status").get_json()
        if not st["busy"]:
            return st
        time.sleep(0.1)
    raise AssertionError("the projector stayed busy")


def test_the_page_calibrates_and_checks_the_projector_through_the_live_camera(table, renderer, projector,
                                                                              tmp_path):
    from companion.live import LiveTable
    from companion.web import create_app
    from companion.web.projector_cal_api import check_at_start

    display = ProjectorDisplay()
    live = LiveTable(_ProjectedSource(renderer, projector, display), table, renderer.camera).start()
    path = tmp_path / "projector.json"
    app = create_app(live, {"PROJECTOR": display, "PROJECTOR_FILE": str(path), "PROJECTOR_SETTLE_S": 0.0,
                            "PROJECTOR_SETTLE_FRAMES": 2})
    try:
        c = app.test_client()
        st = c.get("/api/projector/status").get_json()
        assert st == {"calibrated": False, "busy": False, "step": None, "rms_mm": None, "coverage": None,
                      "check": None, "error": None, "file": str(path), "saved": None}
        # Protected as every change is: no page token, no calibration.
        assert c.post("/api/projector/calibrate").status_code == 403
        h = {"X-CSRF-Token": c.get("/api/session").get_json()["csrf"]}
        r = c.post("/api/projector/check", headers=h)
        assert r.status_code == 409 and "not calibrated yet" in r.get_json()["error"]
        # The page has not said its size yet: the calibration says to open it.
        assert c.post("/api/projector/calibrate", headers=h).status_code == 202
        st = _wait_idle(c)
        assert not st["calibrated"] and "open /projector full-screen" in st["error"]
        display.screen_px = projector.size_px           # the projector page's hello
        r = c.post("/api/projector/calibrate", headers=h)
        assert r.status_code == 202 and r.get_json() == {"started": True}
        st = _wait_idle(c)
        assert st["error"] is None, st
        assert st["calibrated"] and st["rms_mm"] < 0.5
        assert st["coverage"].startswith("the projector covers the whole table")
        assert st["check"].startswith("projection within ")
        assert not display.showing_pattern                # the scene is given back
        assert ProjectorModel.load(path, table).points == display.model.points
        assert st["file"] == str(path) and st["saved"] == f"saved to {path}"
        # A check at start (what serve calls), then one asked for.
        assert check_at_start(app)
        st = _wait_idle(c)
        assert st["check"].startswith("projection within ") and st["error"] is None
        assert c.post("/api/projector/check", headers=h).status_code == 202
        assert _wait_idle(c)["check"].startswith("projection within ")
    finally:
        live.stop()


def test_a_failed_calibration_on_the_page_keeps_the_saved_one(table, renderer, projector, calibrated, tmp_path):
    from companion.live import LiveTable

    path = tmp_path / "projector.json"
    save_calibration(calibrated.model, path, table)
    good = path.read_bytes()
    display = ProjectorDisplay(calibrated.model)
    dark = dataclasses.replace(projector, gain=0.0)            # the projector switched off
    live = LiveTable(_ProjectedSource(renderer, dark, display), table, renderer.camera).start()
    try:
        svc = ProjectorService(display, live, path, settle_frames=2, settle_s=0.0)
        with pytest.raises(ProjectorCalError, match="the camera saw no change on the table"):
            svc.calibrate_now()
        assert path.read_bytes() == good and display.model is calibrated.model
        result = svc.check_now()
        assert not result.ok and "saw no change on the table" in result.words
        assert display.check_text == result.words
    finally:
        live.stop()


# --- the command ------------------------------------------------------------------------------------------

def test_calibrate_projector_demo_writes_a_file_that_loads(tmp_path, capsys, table):
    out = tmp_path / "projector.json"
    assert main(["calibrate", "projector", "--demo", "--out", str(out), "--size", "960x540"]) == 0
    said = capsys.readouterr().out
    model = ProjectorModel.load(out, table)
    assert model.points >= 40 and model.rms_mm < 0.5
    assert f"{model.rms_mm:.2f} mm RMS" in said
    assert "the projector covers the whole table" in said
    assert "check: projection within" in said and f"saved to {out}" in said
    assert json.loads(out.read_text())["table_fingerprint"] == model.table_fingerprint


def test_calibrate_projector_to_a_folder_that_does_not_exist_says_so_without_a_traceback(tmp_path, capsys):
    out = tmp_path / "no such folder" / "projector.json"
    assert main(["calibrate", "projector", "--demo", "--out", str(out), "--size", "960x540"]) != 0
    err = capsys.readouterr().err
    assert f"cannot be saved to {out}" in err and "Traceback" not in err
    assert not out.parent.exists()


def test_calibrate_projector_needs_a_camera_or_the_demo(capsys):
    assert main(["calibrate", "projector"]) != 0
    assert "--source 0), or --demo" in capsys.readouterr().err


def test_calibrate_projector_with_a_camera_serves_the_page_and_calibrates_once_it_is_open(
        monkeypatch, tmp_path, capsys, table, renderer, projector):
    """The real-camera path, with the synthetic camera and projector standing in: the
    command serves the projector page, waits for it to say its size, then calibrates."""
    import threading

    import companion.web as web
    import vision.sources

    made = {}
    real_create_app = web.create_app

    def create_app(live, config=None):
        app = real_create_app(live, config)
        made["display"] = app.config["PROJECTOR"]
        return app

    class Source(_ProjectedSource):
        def read(self):
            self.display = made.get("display") or ProjectorDisplay()
            return super().read()

    monkeypatch.setattr(web, "create_app", create_app)
    monkeypatch.setattr(vision.sources, "open_source",
                        lambda spec, table=None: Source(renderer, projector, ProjectorDisplay()))

    def hello():                                    # the projector page opened on the projector
        assert wait_until(lambda: "display" in made, 30)
        made["display"].screen_px = projector.size_px
    threading.Thread(target=hello, daemon=True).start()
    table_file = tmp_path / "table.toml"
    table_file.write_text((Path(__file__).resolve().parents[1] / "vision" / "data" / "demo_table.toml")
                          .read_text(encoding="utf-8"), encoding="utf-8")
    camera = tmp_path / "webcam.yml"
    renderer.camera.to_yaml(camera)
    assert main(["calibrate", "projector", "--source", "0", "--table", str(table_file), "--camera", str(camera),
                 "--port", "0", "--wait", "30"]) == 0
    said = capsys.readouterr().out
    assert "/projector full-screen in a browser on the projector" in said
    assert "check: projection within" in said
    saved = tmp_path / "projector.json"                # beside the table file
    assert f"saved to {saved}" in said
    assert ProjectorModel.load(saved, table).rms_mm < 0.5

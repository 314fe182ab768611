"""The page says what the camera knows about itself, in a real Chromium: a car never
seen, with why; the camera knocked ("moved: cars are being re-checked"); anchors
covered (the pose not checked, each held car with why it is stale); a soft picture
(focus advice); an anchor the table file puts 83 mm off (named in the header).
Frames are rendered and fed to a live table served by waitress, as `serve` does."""

from __future__ import annotations

import dataclasses
import threading

import numpy as np
import pytest

import companion.live as live_module
from companion.live import LiveTable
from companion.web import create_app
from tests.test_browser import browser, snap  # noqa: F401 (browser is a fixture)
from vision.render import CarTruth, RenderOptions, TableRenderer
from vision.sources import SyntheticSource

pytestmark = pytest.mark.browser

#: The Buggy (13) is never on the table.
POSES = (CarTruth(10, 300.0, 250.0, 20.0), CarTruth(11, 700.0, 300.0, 100.0),
         CarTruth(12, 950.0, 600.0, -60.0), CarTruth(14, 500.0, 550.0, 170.0))


def _serve(live):
    from waitress import create_server
    server = create_server(create_app(live, {"STREAM_MAX_S": 60.0}), host="127.0.0.1", port=0, threads=8)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    return server, f"http://127.0.0.1:{server.effective_port}/"


def _status(page) -> str:
    return page.inner_text("#vision-status") if page.is_visible("#vision-status") else ""


def _wait_status(page, text: str, timeout: float = 20000) -> None:
    page.wait_for_function("t => (document.getElementById('vision-status').innerText || '').includes(t)",
                           arg=text, timeout=timeout)


def _covered(image, frame, renderer):
    """The frame with every anchor covered (a sheet of paper over each)."""
    import cv2
    out = image.copy()
    for corners in frame.anchor_corners_px.values():
        c = corners.mean(axis=0)
        hull = (c + 1.6 * (corners - c)).astype(np.int32)
        cv2.fillConvexPoly(out, hull, (90, 120, 95))
    return out


@pytest.fixture
def every_frame_checked(monkeypatch):
    # The size and setup checks run about once a second; here every frame, so a
    # test's frame is judged the moment it is fed.
    monkeypatch.setattr(live_module, "CHECK_EVERY_S", 0.0)


def test_the_page_says_why_cars_are_missing_stale_moved_or_soft(demo_table, renderer, browser,
                                                                 every_frame_checked):
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, renderer.camera)
    rng = np.random.default_rng(4)
    for i in range(3):
        live.process(renderer.render(POSES, rng).image, i, i / 15)
    server, url = _serve(live)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(url)
        page.wait_for_function("document.querySelectorAll('#cars [data-car-id]').length === 4", timeout=20000)
        # The Buggy was never seen: named, with why.
        page.wait_for_function("document.getElementById('missing').innerText.includes('Buggy (not seen)')",
                               timeout=20000)
        assert _status(page) == ""          # nothing wrong to say yet

        # The camera is knocked: 8 mm sideways.
        knocked = TableRenderer(demo_table, renderer.camera, renderer.rvec, renderer.tvec + [8.0, 0.0, 0.0],
                                renderer.options, seed=1)
        live.process(knocked.render(POSES, rng).image, 3, 3 / 15)
        _wait_status(page, "The camera or table moved: cars are being re-checked")
        snap(page, "vision-status-moved")

        # Every anchor covered: the pose cannot be checked; the cars are held, stale, with why.
        k = knocked.render(POSES, rng)
        for i in range(4, 6):
            live.process(_covered(k.image, k, knocked), i, i / 15 + 5.0)
        _wait_status(page, "The table's position could not be checked on this frame")
        _wait_status(page, "Held, not seen now: Interceptor (the table's position could not be checked")
        snap(page, "vision-status-unchecked")

        # A soft picture: the advice is to focus.
        soft = TableRenderer(demo_table, renderer.camera, knocked.rvec, knocked.tvec,
                             RenderOptions(blur_sigma=2.0), seed=1)
        for i in range(6, 9):
            live.process(soft.render(POSES, rng).image, i, i / 15 + 10.0)
        _wait_status(page, "Camera picture poor: The picture is soft")
        _wait_status(page, "focus the camera")
        assert "moved" not in _status(page)          # 10 s ago now, and the camera stayed put
        snap(page, "vision-status-soft")
        assert errors == []
    finally:
        page.close()
        server.close()
        live.stop()


def test_the_header_names_an_anchor_the_table_file_puts_83_mm_off(demo_table, renderer, browser,
                                                                   every_frame_checked):
    table = dataclasses.replace(demo_table, anchors=tuple(
        dataclasses.replace(a, x_mm=a.x_mm + 83.0) if a.id == 3 else a for a in demo_table.anchors))
    live = LiveTable(SyntheticSource(demo_table, paced=False), table, renderer.camera)
    rng = np.random.default_rng(6)
    live.process(renderer.render(POSES, rng).image, 0, 0.0)
    server, url = _serve(live)
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        page.goto(url)
        _wait_status(page, "Setup: anchor 3 is seen 83 mm from where the table file puts it")
        assert "measure it again or fix the table file" in _status(page)
        # In the header, above the board.
        assert page.locator("header #vision-status").is_visible()
        snap(page, "vision-status-setup")
    finally:
        page.close()
        server.close()
        live.stop()

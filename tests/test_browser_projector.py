"""The projector's page in a real Chromium: it draws the frame the companion makes, each shape at
its own projector pixels (the SVG's user units are the projector's pixels, and full screen one
is one screen pixel), masks last; it follows the game; it says only, before a calibration, to
calibrate, and when its window is not the calibrated size, to go full screen. The Setup tab's
choice of what the projector shows changes what the frame carries.

A Shattered Highways game on the demo table, its Interceptor acting, served by waitress as
`serve` does, with a display calibrated to the demo's synthetic projector."""

from __future__ import annotations

import math

import numpy as np
import pytest

from calibration.projector import fit_projector
from companion.game import TableGame
from companion.live import LiveTable
from companion.projector import ProjectorDisplay
from companion.web import create_app
from tests.conftest import served_app
from tests.test_browser import browser, snap  # noqa: F401 (browser is a fixture)
from vision.projector_sim import demo_projector
from vision.render import CarTruth
from vision.sources import SyntheticSource

pytestmark = pytest.mark.browser

WAIT_MS = 30000
POSES = (CarTruth(10, 300.0, 200.0, 0.0), CarTruth(11, 420.0, 200.0, 0.0), CarTruth(12, 900.0, 650.0, 0.0),
         CarTruth(13, 700.0, 520.0, 0.0), CarTruth(14, 1000.0, 200.0, 0.0))


@pytest.fixture(scope="module")
def served(demo_table, renderer):
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    live.process(renderer.render(POSES, np.random.default_rng(3)).image, 0, 0.0)
    game = TableGame(live, seed=7)
    game.start("shattered_highways", {}, game.starter_rosters("shattered_highways"))
    game.start_round({"Max": [10, 13, 14], "Furiosa": [12, 11]})
    game.answer_typed([6])
    assert game.answer_typed([2])["game"]["state"]["active"] == 10
    proj = demo_projector(demo_table)
    xs, ys = np.meshgrid(np.linspace(0, demo_table.width_mm, 9), np.linspace(0, demo_table.depth_mm, 6))
    mm = np.c_[xs.ravel(), ys.ravel()]
    display = ProjectorDisplay(fit_projector(mm, proj.table_to_projector(mm), proj.size_px))
    with served_app(create_app(game, {"PROJECTOR": display, "STREAM_MAX_S": 60.0})) as url:
        yield url, display


def _frame(page) -> dict:
    return page.evaluate("fetch('api/projector/frame').then(r => r.json())")


def _drawn_same(page, frame: dict) -> None:
    """The page has drawn exactly this frame's shapes."""
    page.wait_for_function("v => window.projector.frame && window.projector.frame.version === v.version "
                           "&& window.projector.shapes.length === v.n",
                           arg={"version": frame["version"], "n": len(frame["shapes"])}, timeout=WAIT_MS)


def test_the_projector_page_draws_the_frame_at_the_projectors_pixels(served, browser):
    url, display = served
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(url + "projector")
        page.wait_for_function("window.projector.frames >= 1 && window.projector.shapes.length > 0", timeout=WAIT_MS)
        frame = _frame(page)
        roles = [s["role"] for s in frame["shapes"]]
        assert {"template", "region", "arc", "gate", "mask"} <= set(roles)
        _drawn_same(page, frame)
        assert page.get_attribute("#throw", "viewBox") == "0 0 1280 800"
        drawn = page.evaluate("""() => [...document.querySelectorAll('#shapes > *')].map(n => ({
            tag: n.tagName, role: n.dataset.role, fill: n.getAttribute('fill'), stroke: n.getAttribute('stroke'),
            points: [...Array(n.points.numberOfItems).keys()].map(i => [n.points.getItem(i).x, n.points.getItem(i).y]),
            box: (({left, top, right, bottom}) => [left, top, right, bottom])(n.getBoundingClientRect()) }))""")
        assert len(drawn) == len(frame["shapes"])
        # Masks last, black and filled; everything else an outline.
        n_masks = roles.count("mask")
        assert all(d["role"] == "mask" and d["fill"] == "#000000" for d in drawn[-n_masks:])
        assert all(d["fill"] == "none" and d["stroke"] not in (None, "none") for d in drawn[:-n_masks])
        by_role = {}
        for s, d in zip(frame["shapes"], drawn):
            assert d["role"] == s["role"] and d["tag"] == ("polygon" if s["closed"] else "polyline")
            by_role.setdefault(s["role"], []).append((s, d))
        for role in ("template", "region", "arc", "mask", "gate"):
            s, d = by_role[role][0]
            assert np.allclose(d["points"], s["points"], atol=0.01), role
        # Full screen at the calibrated size, a projector pixel is a screen pixel: a mask's
        # corners are where the browser lays the polygon.
        s, d = by_role["mask"][0]
        pts = np.asarray(s["points"])
        assert np.allclose(d["box"], [pts[:, 0].min(), pts[:, 1].min(), pts[:, 0].max(), pts[:, 1].max()], atol=1.0)
        snap(page, "projector-page")
        # Nothing is said on the table: no hint, no note.
        assert page.is_hidden("#hint") and page.is_hidden("#note")
        # The page told the companion its size.
        page.wait_for_function("(window.projector.frame.screen_px || []).join('x') === '1280x800'", timeout=WAIT_MS)
        assert display.screen_px == (1280, 800)

        # Without a calibration: nothing drawn, and a dim hint to calibrate.
        model = display.model
        display.set_model(None)
        try:
            page.wait_for_function("window.projector.frame && !window.projector.frame.calibrated", timeout=WAIT_MS)
            assert page.is_visible("#hint") and "Calibrate projector" in page.inner_text("#hint")
            assert page.evaluate("document.querySelectorAll('#shapes > *').length") == 0
        finally:
            display.set_model(model)
        page.wait_for_function("window.projector.frame.calibrated && window.projector.shapes.length > 0", timeout=WAIT_MS)
        assert errors == []
    finally:
        page.close()


def test_a_window_not_the_calibrated_size_says_to_go_full_screen(served, browser):
    url, display = served
    page = browser.new_page(viewport={"width": 1000, "height": 700})
    try:
        page.goto(url + "projector")
        page.wait_for_function("window.projector.frames >= 1", timeout=WAIT_MS)
        page.wait_for_selector("#note:not([hidden])", timeout=WAIT_MS)
        assert "full screen" in page.inner_text("#note") and "1280 × 800" in page.inner_text("#note")
        # Still the projector's pixels: the shapes stretch with the window, never re-measured.
        assert page.get_attribute("#throw", "viewBox") == "0 0 1280 800"
        page.wait_for_function("(window.projector.frame.screen_px || []).join('x') === '1000x700'", timeout=WAIT_MS)
        assert display.screen_px == (1000, 700)
    finally:
        page.close()


def _choose(page, mode: str) -> None:
    """Choose on the Setup tab what the projector shows, and wait for the companion's answer."""
    with page.expect_response(lambda r: r.url.endswith("/api/projector/mode"), timeout=WAIT_MS) as answer:
        page.select_option("#projector-mode", mode)
    assert answer.value.ok, answer.value.text()


def test_the_setup_tab_chooses_what_the_projector_shows(served, browser):
    url, display = served
    main = browser.new_page(viewport={"width": 1400, "height": 900})
    projector = browser.new_page(viewport={"width": 1280, "height": 800})
    try:
        projector.goto(url + "projector")
        projector.wait_for_function("window.projector.shapes.length > 0", timeout=WAIT_MS)
        main.goto(url)
        main.wait_for_function("window.companion.csrf && window.companion.game", timeout=WAIT_MS)
        main.click('#tabs button[data-tab="setup"]')
        main.wait_for_selector("#projector-box", state="visible", timeout=WAIT_MS)
        assert main.get_attribute("#projector-open", "href") == "projector"
        assert main.get_attribute("#projector-open", "target") == "_blank"
        # The calibration's state in words (or, if it cannot be read, why).
        main.wait_for_function("(document.getElementById('projector-status').textContent || "
                               "document.getElementById('projector-error').textContent).length > 0", timeout=WAIT_MS)
        main.locator("#projector-box").scroll_into_view_if_needed()
        snap(main, "projector-setup")

        _choose(main, "placements")
        frame = _frame(main)
        # No piece is waited for: only placements and masks are kept, so nothing at all is thrown.
        assert frame["mode"] == "placements" and frame["shapes"] == []
        projector.wait_for_function("window.projector.frame.mode === 'placements' && "
                                    "document.querySelectorAll('#shapes > *').length === 0", timeout=WAIT_MS)

        _choose(main, "nothing")
        assert _frame(main)["shapes"] == []

        _choose(main, "everything")
        frame = _frame(main)
        assert {"template", "region", "mask"} <= {s["role"] for s in frame["shapes"]}
        projector.wait_for_function("window.projector.frame.mode === 'everything' && window.projector.shapes.length > 0",
                                    timeout=WAIT_MS)
        assert display.mode == "everything"
        # A page opened afresh shows the mode chosen.
        main.reload()
        main.wait_for_function("window.companion.csrf && window.companion.game", timeout=WAIT_MS)
        main.wait_for_function("document.getElementById('projector-mode').value === 'everything'", timeout=WAIT_MS)
    finally:
        display.set_mode("everything")
        main.close()
        projector.close()


def test_the_projector_page_draws_under_its_own_security_policy(served, browser):
    """As a browser has it, the Content-Security-Policy enforced (the other tests bypass it for
    Playwright's waits): no directive violated, no script error, the frame drawn."""
    url, _ = served
    page = browser.browser.new_page(viewport={"width": 1280, "height": 800})
    page.add_init_script("window.__violations = []; document.addEventListener('securitypolicyviolation', "
                         "(e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));")
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        response = page.goto(url + "projector")
        assert "script-src 'self'" in response.headers["content-security-policy"]
        page.wait_for_selector('#shapes > polygon[data-role="mask"]', state="attached", timeout=WAIT_MS)
        assert page.locator('#shapes > [data-role="template"]').count() >= 1
        assert page.evaluate("window.__violations") == [] and errors == []
    finally:
        page.close()


def test_a_template_placed_on_the_table_page_is_thrown_by_the_projector(served, browser):
    """The players' tools reach the projector: a template placed with the table page's tools is
    in the frame (a "blast" shape, through the calibration, named as the page names it) and on
    the projector page; turned, it is thrown turned; removed, it is gone."""
    from tests.test_browser_demo import screen_point
    url, display = served
    main = browser.new_page(viewport={"width": 1400, "height": 900})
    projector = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = []
    main.on("pageerror", lambda e: errors.append(str(e)))
    name = 'Move template (9" x 4")'
    thrown = f"window.projector.shapes.filter(s => s.role === 'blast' && s.label === {name!r})"
    try:
        projector.goto(url + "projector")
        projector.wait_for_function("window.projector.frames >= 1", timeout=WAIT_MS)
        main.goto(url)
        main.wait_for_function("window.companion.csrf && window.companion.game && window.companion.canChange",
                               timeout=WAIT_MS)
        main.wait_for_function("document.querySelectorAll('#template-choice option').length > 0", timeout=WAIT_MS)
        main.evaluate("document.getElementById('board').scrollIntoView()")
        main.select_option("#template-choice", label=name)
        main.click("#template-place")
        main.mouse.click(*screen_point(main, 250.0, 600.0))
        main.wait_for_function("window.companionTools.placed.length === 1", timeout=WAIT_MS)
        (placed,) = main.evaluate("window.companionTools.placed")
        # The projector page draws it once the page has sent it and the frame carries it.
        projector.wait_for_function(f"{thrown}.length === 1", timeout=WAIT_MS)
        assert projector.locator(f'#shapes > polygon[data-role="blast"][data-label={name!r}]').count() == 1
        frame = _frame(projector)
        (shape,) = [s for s in frame["shapes"] if s["role"] == "blast" and s["label"] == name]
        assert shape["closed"] and not shape["filled"]
        # Its first corner (rear right, 9 in by 4 in about where it was put) at the calibration's pixel.
        corner = np.array([[placed["x"] - 114.3, placed["y"] - 50.8]])
        assert np.allclose(shape["points"][0], display.model.table_to_projector(corner)[0], atol=0.5)
        assert main.evaluate("window.companionTools.projector.error") is None
        # Turned 15 degrees: thrown turned (its first corner moves), still one.
        first = shape["points"][0]
        main.locator("#template-list li").first.locator("[data-turn=left]").click()
        projector.wait_for_function(f"(f => f.length === 1 && (Math.abs(f[0].points[0][0] - {first[0]}) > 1 "
                                    f"|| Math.abs(f[0].points[0][1] - {first[1]}) > 1))({thrown})", timeout=WAIT_MS)
        (turned,) = main.evaluate("window.companionTools.placed")
        h = math.radians(turned["heading"])
        assert turned["heading"] == 15
        corner = np.array([[turned["x"] - 114.3 * math.cos(h) + 50.8 * math.sin(h),
                            turned["y"] - 114.3 * math.sin(h) - 50.8 * math.cos(h)]])
        projector.wait_for_function(f"(f => f.length === 1 && Math.abs(f[0].points[0][0] - "
                                    f"{display.model.table_to_projector(corner)[0][0]}) < 0.5)({thrown})", timeout=WAIT_MS)
        (shape,) = [s for s in _frame(projector)["shapes"] if s["role"] == "blast" and s["label"] == name]
        assert np.allclose(shape["points"][0], display.model.table_to_projector(corner)[0], atol=0.5)
        # Removed: gone from the frame and the projector page.
        main.locator("#template-list li").first.locator("[data-remove]").click()
        projector.wait_for_function(f"{thrown}.length === 0", timeout=WAIT_MS)
        assert not any(s["role"] == "blast" for s in _frame(projector)["shapes"])
        # Placed again, then the page reloaded: the old page's template leaves the table with it.
        main.select_option("#template-choice", label=name)
        main.click("#template-place")
        main.mouse.click(*screen_point(main, 400.0, 500.0))
        projector.wait_for_function(f"{thrown}.length === 1", timeout=WAIT_MS)
        main.reload()
        projector.wait_for_function(f"{thrown}.length === 0", timeout=WAIT_MS)
        assert errors == []
    finally:
        main.close()
        projector.close()


def test_the_projector_goes_dark_when_the_companion_stops_answering(served, browser):
    """A template or "put it here" left lit after the companion stopped would be believed:
    the page throws black and says it waits, whether its requests fail at once (the
    companion gone) or hang (the network lost), and draws again once it answers."""
    url, _ = served
    for how in ("fail", "hang"):
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        try:
            page.goto(url + "projector")
            page.wait_for_function("window.projector.shapes.length > 0", timeout=WAIT_MS)
            assert page.is_hidden("#hint")
            held = []
            page.route("**/api/projector/frame",
                       (lambda route: route.abort()) if how == "fail" else (lambda route: held.append(route)))
            page.wait_for_function("window.projector.shapes.length === 0 && "
                                   "document.querySelectorAll('#shapes > *').length === 0", timeout=WAIT_MS)
            assert "does not answer" in page.inner_text("#hint"), how
            page.unroute("**/api/projector/frame")
            page.wait_for_function("window.projector.shapes.length > 0", timeout=WAIT_MS)
            assert page.is_hidden("#hint"), how
        finally:
            page.close()

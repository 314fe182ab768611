"""The page in a real Chromium (Debian's, driven by Playwright): cars drawn, named,
moving; a car selected with its move region and targets; a shot resolved with dice
typed in, then undone; a phone in portrait; a visitor without the table's PIN.
Each step's screenshot is saved in test-artifacts/ (or $COMPANION_ARTIFACTS)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

ARTIFACTS = Path(os.environ.get("COMPANION_ARTIFACTS", Path(__file__).resolve().parents[1] / "test-artifacts"))


def snap(page, name: str, panel_top: bool = False) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    if panel_top:            # the dice and the outcome sit at the top of the side panel
        page.evaluate("document.getElementById('panel').scrollTop = 0")
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def _demo(*more: str, scripted: bool = True):
    """`companion demo` on a free port (with `more` arguments); yields its address. These
    tests watch the scripted convoy (cars that move by themselves, into range of each other);
    `scripted=False` gives the playable table, whose cars move only when a player moves them."""
    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--port", "0",
                             *(["--scripted"] if scripted else []), *more],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        line = proc.stdout.readline()
        url = re.search(r"(http://127\.0\.0\.1:\d+/)", line).group(1)
        yield url
    finally:
        # Closed early (a script's `break`, a failed fixture), the demo is still stopped.
        proc.terminate()
        proc.wait(10)


@pytest.fixture(scope="module")
def server():
    yield from _demo()


class _TestBrowser:
    """The browser for the page tests, its pages opened with `bypass_csp`: Playwright's
    `wait_for_function` builds its predicate with `new Function`, which the server's
    Content-Security-Policy (no 'unsafe-eval', rightly) refuses. The page itself is checked
    under the policy, with no bypass, by `test_the_page_plays_under_its_own_security_policy`."""

    def __init__(self, browser) -> None:
        self.browser = browser

    def new_page(self, **kw):
        return self.browser.new_page(**{"bypass_csp": True, **kw})

    def new_context(self, **kw):
        return self.browser.new_context(**{"bypass_csp": True, **kw})

    def close(self) -> None:
        self.browser.close()


@pytest.fixture(scope="module")
def browser(chromium):
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        yield _TestBrowser(b)
        b.close()


def _transform(page, car_id):
    return page.get_attribute(f'#cars [data-car-id="{car_id}"]', "transform")


def test_page_shows_every_car_moving_without_a_reload(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(server)
    page.wait_for_function("document.querySelectorAll('#cars [data-car-id]').length === 5", timeout=20000)
    labels = page.locator("#labels text").all_text_contents()
    assert sorted(labels) == ["Buggy", "Hearse", "Interceptor", "Rust Bucket", "War Rig"]
    before = {i: _transform(page, i) for i in range(10, 15)}
    page.wait_for_function("window.companion.updates >= 10", timeout=20000)
    page.wait_for_timeout(1500)
    after = {i: _transform(page, i) for i in range(10, 15)}
    assert any(before[i] != after[i] for i in before), "no car moved on the page"
    # Pushed updates, not reloads: the same document counted them.
    assert page.evaluate("window.companion.updates") >= 10
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
    page.close()


def test_the_page_plays_under_its_own_security_policy(server, browser):
    """The page as a player's browser has it, its Content-Security-Policy enforced (the other
    tests bypass it for Playwright's own waits): no directive violated, no script error, and
    the page does its work: every car drawn and following the table, a car's card opened."""
    page = browser.browser.new_page(viewport={"width": 1280, "height": 800})
    page.add_init_script("window.__violations = []; document.addEventListener('securitypolicyviolation', "
                         "(e) => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));")
    errors, said = [], []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("console", lambda m: said.append(m.text) if "Content Security Policy" in m.text else None)
    response = page.goto(server)
    assert "script-src 'self'" in response.headers["content-security-policy"]
    page.wait_for_selector('#cars [data-car-id="14"]', timeout=20000)
    assert page.locator("#cars [data-car-id]").count() == 5
    before = _transform(page, 10)
    for _ in range(200):                           # the scripted convoy moves: the stream is followed
        page.wait_for_timeout(100)
        if _transform(page, 10) != before:
            break
    assert _transform(page, 10) != before, "the page did not follow the table"
    page.click('#cars [data-car-id="10"] .body', force=True)
    page.wait_for_selector('#car-sheet[data-car="10"]', timeout=20000)
    page.click('#tabs [data-tab="round"]')
    assert page.evaluate("window.__violations") == [] and said == [], (page.evaluate("window.__violations"), said)
    assert errors == [], errors
    page.close()


def test_page_fits_a_phone_held_in_portrait(server, browser):
    page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
    page.goto(server)
    page.wait_for_function("document.querySelectorAll('#cars [data-car-id]').length === 5", timeout=20000)
    board = page.locator("#board").bounding_box()
    assert board["width"] <= 390 and board["width"] > 300
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.wait_for_function("window.companion.game && window.companion.game.game", timeout=20000)
    page.click('#cars [data-car-id="10"]')
    page.wait_for_selector('#car-sheet[data-car="10"]')
    page.click('button[data-act="shoot"]')
    page.wait_for_selector("#conditions")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    for selector in ("#car-sheet", "#action-form", "#resolve"):
        page.wait_for_selector(selector, state="visible")     # redrawn as the convoy moves
        box = page.locator(selector).bounding_box() or page.locator(selector).bounding_box(timeout=2000)
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390, selector
    snap(page, "8-phone-portrait")
    page.close()


def test_select_a_car_resolve_a_shot_with_typed_dice_and_undo_it(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server)
    page.wait_for_function("document.querySelectorAll('#cars [data-car-id]').length === 5", timeout=20000)
    page.wait_for_function("window.companion.game && window.companion.game.game && window.companion.csrf",
                           timeout=20000)
    snap(page, "1-demo-table")

    # Select the Interceptor: its card, where its front bumper may end, its targets.
    page.click('#cars [data-car-id="10"]')
    page.wait_for_selector('#car-sheet[data-car="10"]')
    assert "Interceptor" in page.inner_text("#car-sheet") and "body 25/25" in page.inner_text("#car-sheet")
    regions = page.locator("#overlays .move-region")
    assert regions.count() == 2 and len(regions.first.get_attribute("d")) > 20
    assert page.locator("#overlays .arc").count() == 1
    rows = page.locator("#car-targets tbody tr")
    assert rows.count() == 4
    first = rows.first.inner_text()
    assert re.search(r"\d+\.\d\d in ± (<0\.01|\d+\.\d\d) in", first), first      # one unit a line
    snap(page, "2-car-selected")

    # Shoot at the Rust Bucket ahead: the page says whether the conditions hold, with numbers.
    hp_before = page.evaluate("window.companion.game.game.state.vehicles['11'].hp.body")
    # Shoot is greyed, with the reason, while no target is in range: the convoy brings one.
    shoot = 'button[data-act="shoot"]:not([disabled])'
    try:
        page.wait_for_selector(shoot, timeout=60000)
    except Exception:
        pytest.fail("Shoot stayed greyed for 60 s: " + page.inner_html("#car-actions")
                    + " | game: " + str(page.evaluate("JSON.stringify(window.companion.game.game.activation || null)")))
    page.click(shoot)
    page.select_option('#action-form select[name="target"]', "11")
    for attempt in range(4):
        # The convoy moves: wait for the Rust Bucket to be within 6 in (the preview follows).
        page.wait_for_selector("#conditions.holds", timeout=30000)
        assert "Range: in: range" in page.inner_text("#preview")
        snap(page, "3-shot-conditions")
        page.click("#resolve")
        try:
            page.wait_for_selector("#dice:not([hidden])", timeout=5000)
            break
        except Exception:
            # Out of range again between the preview and the press: the page said why.
            assert page.inner_text("#action-error") or page.is_visible("#conditions.fails")
            page.wait_for_selector(shoot, timeout=60000)
            page.click(shoot)
            page.select_option('#action-form select[name="target"]', "11")
    assert page.inner_text("#dice-asked").startswith("1d6 Shoot at the Rust Bucket")
    page.fill("#dice-inputs input", "5")
    snap(page, "4-dice-typed", panel_top=True)
    page.click("#dice-use")
    page.wait_for_function("document.getElementById('dice-asked').textContent.includes('damage')")
    page.fill("#dice-inputs input", "4")
    page.click("#dice-use")
    # The damage die taken: nothing more is asked (and if something is, the failure says what).
    page.wait_for_function("document.getElementById('dice').hidden || "
                           "!document.getElementById('dice-asked').textContent.includes('damage')")
    assert page.locator("#dice[hidden]").count() == 1, page.inner_text("#dice")
    page.wait_for_selector("#outcome:not([hidden])")
    outcome = page.inner_text("#outcome")
    assert "SHOOT: hit" in outcome and "rolled 5" in outcome and "the Rust Bucket takes" in outcome
    hp_after = page.evaluate("window.companion.game.game.state.vehicles['11'].hp.body")
    assert hp_after < hp_before
    snap(page, "5-shot-resolved", panel_top=True)

    page.click("#undo")
    page.wait_for_function("window.companion.game.last_outcome && window.companion.game.last_outcome.undone")
    assert "Undone" in page.inner_text("#outcome")
    assert page.evaluate("window.companion.game.game.state.vehicles['11'].hp.body") == hp_before
    snap(page, "6-undone", panel_top=True)
    assert not errors, errors
    page.close()


def test_a_visitor_without_the_pin_watches_and_a_player_with_it_plays(browser):
    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--scripted", "--port", "0", "--lan",
                             "--pin", "4711"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        lines = [proc.stdout.readline() for _ in range(4)]
        port = re.search(r"http://[\d.]+:(\d+)/", lines[0]).group(1)
        assert any("table PIN 4711" in line for line in lines), lines
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_function("window.companion.csrf && window.companion.game && window.companion.game.game",
                               timeout=20000)
        assert page.is_visible("#login")
        page.click('#cars [data-car-id="10"]')
        page.wait_for_selector('#car-sheet[data-car="10"]')
        assert not page.is_visible('button[data-act="shoot"]')          # watching only
        status = page.evaluate("""fetch('api/undo', {method: 'POST', headers: {'X-CSRF-Token': window.companion.csrf}})
                                  .then(r => r.status)""")
        assert status == 403
        snap(page, "7-watching-without-the-pin")
        page.fill("#pin", "4711")
        page.click("#login button")
        page.wait_for_selector("#login", state="hidden")
        page.click('#cars [data-car-id="10"]')
        page.wait_for_selector('button[data-act="shoot"]:visible')
        page.close()
    finally:
        proc.terminate()
        proc.wait(10)


def test_the_camera_view_the_ruler_and_a_new_game_with_another_reading(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server)
    page.wait_for_function("window.companion.csrf && window.companion.game && window.companion.game.game",
                           timeout=20000)
    page.click('#tabs [data-tab="calibration"]')
    page.wait_for_function("document.getElementById('camera-view').naturalWidth > 1000", timeout=10000)
    assert "Reprojection error" in page.inner_text("#calib-figures")
    page.select_option("#measure-a", "10")
    page.select_option("#measure-b", "11")
    page.click("#measure-go")
    page.wait_for_selector("#measured")
    text = page.inner_text("#measured")
    assert re.search(r"Interceptor to Rust Bucket: \d+\.\d\d in ± (<0\.01|\d+\.\d\d) in", text), text
    assert page.locator("#lines .ruler").count() == 1
    page.check("#show-rectified")
    # The picture under the moving convoy is renewed several times a second, not every few
    # seconds (a moving car would show twice: where it is and where it was).
    page.wait_for_function("document.getElementById('rectified').dataset.shownAt", timeout=10000)
    shown = set()
    for _ in range(30):
        shown.add(page.get_attribute("#rectified", "data-shown-at"))
        page.wait_for_timeout(100)
    assert len(shown) >= 6, f"{len(shown)} pictures in 3 s"
    snap(page, "9-camera-and-ruler")
    # Setup: another reading of the arcs' edge, and a new game.
    page.click('#tabs [data-tab="setup"]')
    page.select_option('#setup-options [data-option="arc_edge"]', '"bumper_line"')
    assert "arc" in page.inner_text("#setup-options") and "Shoot" in page.inner_text("#setup-options")
    # The page shows the Car tab when the POST that starts the game has answered (the stream
    # may bring the new game first), so wait for that answer before looking at the tab.
    with page.expect_response(lambda r: r.url.endswith("/api/game") and r.request.method == "POST") as started:
        page.click("#setup-start")
        page.click("#confirm-end-yes")          # the game in progress ends: the page asks first
    assert started.value.ok
    page.wait_for_function("""window.companion.game.game.rules.options
                              .find(o => o.name === 'arc_edge').value === 'bumper_line'""")
    page.wait_for_selector("#tab-car", state="visible", timeout=5000)
    page.close()


def test_a_gate_is_placed_by_tapping_its_posts_on_the_table(server, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    page.goto(server)
    page.wait_for_function("window.companion.csrf && window.companion.game && window.companion.game.game",
                           timeout=20000)
    page.click('#tabs [data-tab="calibration"]')
    page.fill("#gate-name", "Infield")
    page.select_option("#gate-role", "checkpoint")
    page.click("#gate-place")
    assert page.is_visible("#pick-hint")

    def tap(x_mm, y_mm):
        # Where a table point is on the screen, through the board's own transform.
        xy = page.evaluate("""([x, y]) => {
            const b = document.getElementById('board'), p = b.createSVGPoint();
            p.x = x; p.y = Number(b.dataset.depthMm) - y;
            const s = p.matrixTransform(b.getScreenCTM());
            return [s.x, s.y]; }""", [x_mm, y_mm])
        page.mouse.click(*xy)

    tap(400.0, 600.0)
    tap(400.0, 450.0)
    page.wait_for_selector('#gates [data-gate="Infield"]', timeout=10000)
    gate = page.evaluate("window.companion.last.gates.find(g => g.name === 'Infield')")
    assert gate["role"] == "checkpoint"
    assert gate["a"] == pytest.approx([400.0, 600.0], abs=3) and gate["b"] == pytest.approx([400.0, 450.0], abs=3)
    assert "add to the table file" in page.inner_text("#gate-result") and "[[gate]]" in page.inner_text("#gate-result")
    snap(page, "10-gate-placed")
    page.close()


@pytest.fixture(scope="module")
def bare_server():
    """A demo table with no game yet: the players set one up in Setup."""
    yield from _demo("--no-game")


def _open_bare(browser, url: str):
    """The page on the bare demo table, every car seen; page errors collected."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_function("window.companion.csrf && window.companion.game && window.companion.last", timeout=20000)
    page.wait_for_function("document.querySelectorAll('#cars [data-car-id]').length === 5", timeout=20000)
    return page, errors


def _set_up(page, rules: str, roster_word: str) -> None:
    """Setup: choose the rule system, take its starter rosters for the table's cars, start."""
    page.click('#tabs [data-tab="setup"]')
    page.select_option("#setup-rules", rules)
    page.wait_for_function(f"document.getElementById('setup-rosters').value.includes('{roster_word}')",
                           timeout=10000)
    page.click("#setup-start")
    if page.is_visible("#confirm-end"):            # another test's game is in progress: end it
        page.click("#confirm-end-yes")
    page.wait_for_function(f"window.companion.game.game && window.companion.game.game.rules.name === '{rules}'",
                           timeout=10000)


def test_stop_the_truck_shows_its_board_and_where_a_car_may_go(bare_server, browser):
    page, errors = _open_bare(browser, bare_server)
    _set_up(page, "stop_the_truck", "the_truck")
    # The 12 x 9 board over the table, the truck's column of four (cab, Max's square, tanker 3-4),
    # labelled short enough to read on a phone.
    page.wait_for_function("document.querySelectorAll('#board-cells polygon[data-kind=\"square\"]').length === 108")
    truck = page.locator('#board-cells polygon[data-kind="truck"]')
    assert truck.count() == 4
    labels = page.locator("#board-cells text.truck").all_text_contents()
    assert labels == ["cab", "Max", "3", "4"], labels
    # A turn: the snakes (none yet), then every vehicle picks its box in secret.
    page.click('#tabs [data-tab="round"]')
    page.click("#start-round")
    page.wait_for_function("window.companion.game.game.state.phase === 'select'", timeout=10000)
    assert "picking boxes in secret" in page.inner_text("#turn")
    # The Rust Bucket (a gang car): its template card and the squares it may reach.
    page.click('#cars [data-car-id="11"]')
    page.wait_for_selector('#car-sheet[data-car="11"]')
    sheet = page.inner_text("#car-sheet")
    assert "Rust Bucket" in sheet and "gear" in sheet, sheet
    page.wait_for_function("document.querySelectorAll('#overlays polygon.cell').length > 0")
    reach = page.locator("#overlays polygon.cell")
    kinds = {reach.nth(i).get_attribute("data-kind") for i in range(reach.count())}
    assert kinds <= {"reach", "red", "blue"} and "reach" in kinds, kinds
    assert page.locator('button[data-act="select"]').count() == 1
    snap(page, "11-stop-the-truck-board")
    # Its pick, made on the page, is not shown to the others: the log says only that it picked.
    page.click('button[data-act="select"]')
    page.wait_for_selector('#action-form select[name="box"]')
    page.wait_for_selector("#conditions.holds", timeout=10000)
    page.click("#resolve")
    page.wait_for_function("window.companion.game.game.state.vehicles['11'].selected === true", timeout=10000)
    logged = page.evaluate("window.companion.game.log.find(e => e.detail.act === 'select')")
    assert logged["detail"]["box"] == "(secret)", logged
    assert page.evaluate("window.companion.game.game.state.vehicles['11'].box") is None
    assert errors == [], errors
    page.close()


def test_car_cult_shows_its_tracks_move_band_and_targets(bare_server, browser):
    page, errors = _open_bare(browser, bare_server)
    _set_up(page, "car_cult", "engine")
    page.click('#cars [data-car-id="10"]')
    page.wait_for_selector('#car-sheet[data-car="10"]')
    # The card's action-zone tracks: the engine's zones with their speeds, tokens on them.
    engine = page.locator('#car-sheet .track[data-track="engine"] .zone')
    assert engine.count() >= 4
    assert page.locator("#car-sheet .track .zone.st").count() >= 1
    # The draft forbids measuring before declaring ("Core", "No pre-measuring"): no move band
    # before its move is declared, no weapon reach, and its targets with no distance.
    assert page.locator("#overlays .move-region").count() == 0
    assert page.locator("#overlays .arc").count() == 0
    rows = page.locator("#car-targets tbody tr")
    assert rows.count() == 2
    assert not re.search(r"\d+\.\d\d in", rows.first.inner_text()), rows.first.inner_text()
    assert "forbids measuring before an action is declared" in page.inner_text("#no-premeasure")
    assert "round 1" in page.inner_text("#turn").lower() or "start round 1" in page.inner_text("#turn").lower()
    snap(page, "12-car-cult-card")
    assert errors == [], errors
    page.close()


def test_alpha_destructicus_cards_show_on_the_page(bare_server, browser):
    """A card not shaped like Shattered Highways' (Alpha Destructicus: armour by facing, the
    driver, components) is shown field by field, with its move region and targets."""
    page, errors = _open_bare(browser, bare_server)
    _set_up(page, "alpha_destructicus", "sample")
    page.click('#cars [data-car-id="12"]')
    page.wait_for_selector('#car-sheet[data-car="12"]')
    sheet = page.inner_text("#car-sheet")
    assert errors == [], errors
    assert "armour back 2 · front 2 · side 2" in sheet and "components" in sheet, sheet
    assert page.locator("#overlays .move-region").count() >= 1
    assert page.locator("#car-targets tbody tr").count() >= 1
    assert errors == [], errors
    page.close()

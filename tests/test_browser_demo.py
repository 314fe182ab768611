"""The playable demo in a real Chromium: a player drags a car on the board and turns it, and
the car the camera tracks follows; a tap still selects a car; a phone turns one with its
buttons; the scripted demo's cars cannot be dragged.

`drag_car_to(page, car, x_mm, y_mm, heading_deg)` is how a browser test moves a car on the
demo table (the way a player does it: mouse down, move, up on the board), then waits for the
camera to see it there; tests that play a system's activations build on it."""

from __future__ import annotations

import math
import warnings

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)

pytestmark = pytest.mark.browser

#: How close the camera's pose must come to where a car was dragged (the drag's own pointer
#: maths is to a tenth of a millimetre; the tracker's pose is good to a few tenths).
ARRIVE_MM = 1.5
ARRIVE_DEG = 1.0


@pytest.fixture(scope="module")
def server():
    yield from _demo(scripted=False)


def open_demo(browser, url: str, **page_args):
    """The demo page with every car seen, its game loaded and its page token; errors collected."""
    page = browser.new_page(**({"viewport": {"width": 1400, "height": 900}} | page_args))
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_function("window.companion.csrf && window.companion.game && window.companion.last", timeout=20000)
    page.wait_for_function("document.querySelectorAll('#cars [data-car-id]').length === 5", timeout=20000)
    return page, errors


def tracked(page, car: int) -> dict:
    """The car as the camera sees it now (the page's latest snapshot)."""
    return page.evaluate(f"window.companion.last.cars.find(c => c.id === {car})")


def _turn(a: float, b: float) -> float:
    d = (b - a) % 360.0
    return d - 360.0 if d > 180.0 else d


def screen_point(page, x_mm: float, y_mm: float) -> tuple[float, float]:
    """Where a table point is on the screen, through the board's own transform."""
    return tuple(page.evaluate("""([x, y]) => {
        const b = document.getElementById('board'), p = b.createSVGPoint();
        p.x = x; p.y = Number(b.dataset.depthMm) - y;
        const s = p.matrixTransform(b.getScreenCTM());
        return [s.x, s.y]; }""", [x_mm, y_mm]))


def table_point(page, sx: float, sy: float) -> tuple[float, float]:
    return tuple(page.evaluate("""([x, y]) => {
        const b = document.getElementById('board'), p = b.createSVGPoint();
        p.x = x; p.y = y;
        const t = p.matrixTransform(b.getScreenCTM().inverse());
        return [t.x, Number(b.dataset.depthMm) - t.y]; }""", [sx, sy]))


def wait_until_seen_at(page, car: int, x_mm: float, y_mm: float, heading_deg: float | None,
                       timeout_ms: float = 60000) -> dict:
    """Wait for the camera to see the car there (it drives at a hand's pace, slower on a busy
    machine: a minute is allowed, as the test checks where it arrives, not when); its pose."""
    try:
        page.wait_for_function("""([id, x, y, h, mm, deg]) => {
            const c = window.companion.last.cars.find(c => c.id === id);
            if (!c || c.stale || Math.hypot(c.x_mm - x, c.y_mm - y) > mm) return false;
            if (h === null) return true;
            const d = ((c.heading_deg - h) % 360 + 540) % 360 - 180;
            return Math.abs(d) <= deg; }""", arg=[car, x_mm, y_mm, heading_deg, ARRIVE_MM, ARRIVE_DEG],
                               timeout=timeout_ms)
    except Exception as exc:
        # Say where the car and the others were seen, and where the page sent it: a failure
        # on a busy CI machine is then read from its log.
        cars = page.evaluate("window.companion.last.cars.map(c => [c.id, Math.round(c.x_mm), Math.round(c.y_mm), "
                             "Math.round(c.heading_deg), !!c.stale])")
        goal = page.evaluate(f"window.companion.demo && window.companion.demo.goal({car})")
        raise AssertionError(f"car {car} was not seen at ({x_mm:.0f}, {y_mm:.0f}, {heading_deg}) in "
                             f"{timeout_ms / 1000:.0f} s; cars seen [id, x, y, heading, stale]: {cars}; "
                             f"the page's goal for it: {goal}") from exc
    return tracked(page, car)


def record_agrees_with_camera(page, g: dict, when: str) -> None:
    """In the game `g` (api/game): nothing waits, nothing is out of place, and every vehicle the
    state calls "in play" stands where the page's latest snapshot sees it, within its doubt."""
    assert g["pending"] is None, (when, g["pending"])
    assert g["out_of_place"] == [], (when, g["out_of_place"])
    for marker, v in g["game"]["state"]["vehicles"].items():
        if v["status"] != "in play":
            continue
        seen = tracked(page, int(marker))
        assert seen is not None and not seen["stale"], (when, v["name"], seen)
        off_mm = math.hypot(seen["x_mm"] - v["pose"][0], seen["y_mm"] - v["pose"][1])
        off_deg = abs((seen["heading_deg"] - v["pose"][2] + 180) % 360 - 180)
        doubt_mm = max(3.0, 3 * seen["sigma_mm"])
        assert off_mm <= doubt_mm and off_deg <= 3.0, (when, v["name"], v["pose"], seen, off_mm, off_deg)


def demo_move(page, car: int, x_mm: float, y_mm: float, heading_deg: float) -> dict:
    """A hand putting a car there without dragging it on the board (the demo's move API: on a
    phone a finger would grab a neighbour); waits until the camera sees it there."""
    status = page.evaluate("""async ([id, x, y, h]) => (await fetch('api/demo/move', {method: 'POST',
        headers: {'Content-Type': 'application/json', 'X-CSRF-Token': window.companion.csrf},
        body: JSON.stringify({vehicle: id, x_mm: x, y_mm: y, heading_deg: h})})).status""", [car, x_mm, y_mm, heading_deg])
    assert status == 200
    return wait_until_seen_at(page, car, x_mm, y_mm, heading_deg)


def open_action(page, act: str, timeout_ms: float = 30000) -> None:
    """Press the selected car's action button and wait for that action's form. A press that
    lands while the rows are redrawn for the car's fresh measurements (several times a second
    while the camera sees cars settle) can be lost, as a player's tap can; the player presses
    again, and so does this, once, with a warning naming what the page showed instead."""
    button = f'#car-actions button[data-act="{act}"]:not([disabled])'
    form = f'#action-form[data-act="{act}"]:not([hidden]) #preview'
    page.click(button, timeout=timeout_ms)
    try:
        page.wait_for_selector(form, timeout=5000)
    except Exception:  # playwright's TimeoutError: the press was lost
        shown = page.evaluate("""() => { const f = document.getElementById('action-form');
            return {form: f.hidden ? 'closed' : f.dataset.act,
                    rows: [...document.querySelectorAll('#car-actions button[data-act]')].map(b => b.dataset.act + (b.disabled ? ' (greyed)' : ''))}; }""")
        warnings.warn(f"pressing {act} did not open its form (the page showed {shown}); pressed again")
        page.click(button, timeout=timeout_ms)
        page.wait_for_selector(form, timeout=timeout_ms)


def drag_car_to(page, car: int, x_mm: float, y_mm: float, heading_deg: float | None = None, *,
                steps: int = 12, wait: bool = True, timeout_ms: float = 60000) -> dict:
    """Drag a car of the demo table to (x_mm, y_mm) and, with `heading_deg`, turn it there by its
    handle, as a player does with a mouse; then wait for the camera to see it there and return
    its tracked pose. The car is grabbed where it is drawn; a turn selects it first by a tap
    (only if it is not the selected car already, so an open action form stays open)."""
    start = tracked(page, car)
    # By its body: the group's box takes in its halo and turn handle, off centre on a phone.
    box = page.locator(f'#cars [data-car-id="{car}"] .body').bounding_box()
    grab = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    # The page moves the car by the pointer's way over the table, from where the car stands.
    at = table_point(page, *grab)
    end = screen_point(page, at[0] + x_mm - start["x_mm"], at[1] + y_mm - start["y_mm"])
    page.mouse.move(*grab)
    page.mouse.down()
    page.mouse.move(*end, steps=steps)
    page.mouse.up()
    if heading_deg is not None:
        turn_car_to(page, car, heading_deg, steps=steps)
    if not wait:
        return tracked(page, car)
    return wait_until_seen_at(page, car, x_mm, y_mm, heading_deg, timeout_ms)


def turn_car_to(page, car: int, heading_deg: float, steps: int = 12) -> None:
    """Turn a car by dragging its handle round to a heading (whole degrees)."""
    if page.evaluate("window.companion.selected") != car:
        page.click(f'#cars [data-car-id="{car}"]')
    grip = page.locator(f'#demo-layer .demo-handle[data-handle-for="{car}"] circle')
    grip.wait_for(state="visible", timeout=5000)
    # The handle stands on the car's way to where it was sent: turn about that point.
    goal = page.evaluate(f"""(() => {{ const l = document.querySelector('#demo-layer .demo-handle line');
        return [+l.getAttribute('x1'), Number(document.getElementById('board').dataset.depthMm) - l.getAttribute('y1')]; }})()""")
    box = grip.bounding_box()
    a = math.radians(heading_deg)
    end = screen_point(page, goal[0] + 120 * math.cos(a), goal[1] + 120 * math.sin(a))
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.down()
    page.mouse.move(*end, steps=steps)
    page.mouse.up()


def test_a_tap_selects_a_car_and_moves_nothing(server, browser):
    page, errors = open_demo(browser, server)
    assert page.is_visible("#demo-bar")
    before = tracked(page, 12)
    page.click('#cars [data-car-id="12"]')
    page.wait_for_selector('#car-sheet[data-car="12"]')
    assert page.evaluate("window.companion.selected") == 12
    page.wait_for_selector('#demo-layer .demo-handle[data-handle-for="12"]', state="visible")
    assert page.evaluate("window.companion.demo.moves") == 0
    page.wait_for_timeout(500)
    after = tracked(page, 12)
    assert math.hypot(after["x_mm"] - before["x_mm"], after["y_mm"] - before["y_mm"]) < 0.5
    # Dragging another car is no tap on it: the selected car stays selected.
    other = tracked(page, 13)
    drag_car_to(page, 13, other["x_mm"], other["y_mm"] + 40.0)
    assert page.evaluate("window.companion.selected") == 12
    assert page.is_visible('#car-sheet[data-car="12"]')
    assert errors == [], errors
    page.close()


def test_dragging_a_car_moves_the_tracked_car_there_and_its_handle_turns_it(server, browser):
    page, errors = open_demo(browser, server)
    page.click('#cars [data-car-id="10"]')              # selected: its card, reach and handle
    page.wait_for_selector('#car-sheet[data-car="10"]')
    page.wait_for_selector("#overlays .move-region")
    start = tracked(page, 10)
    target = (start["x_mm"] + 260.0, start["y_mm"] - 30.0)
    # Mid-drag: the dashed outline is where the car is being put; the drawn car is the camera's.
    box = page.locator('#cars [data-car-id="10"]').bounding_box()
    grab = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    at = table_point(page, *grab)
    page.mouse.move(*grab)
    page.mouse.down()
    page.mouse.move(*screen_point(page, at[0] + 260.0, at[1] - 30.0), steps=15)
    page.wait_for_selector('#demo-layer .demo-ghost[data-ghost-for="10"]')
    page.wait_for_function(f"""(() => {{ const c = window.companion.last.cars.find(c => c.id === 10);
        return Math.hypot(c.x_mm - {start['x_mm']}, c.y_mm - {start['y_mm']}) > 120; }})()""", timeout=10000)
    snap(page, "demo-1-dragging-a-car")
    page.mouse.up()
    seen = wait_until_seen_at(page, 10, *target, start["heading_deg"])
    # The camera's own pose: where it was dragged, facing as it did (a drag slides, not turns).
    assert seen["x_mm"] == pytest.approx(target[0], abs=ARRIVE_MM)
    assert seen["y_mm"] == pytest.approx(target[1], abs=ARRIVE_MM)
    assert abs(_turn(seen["heading_deg"], start["heading_deg"])) < ARRIVE_DEG
    assert page.evaluate("window.companion.demo.moves") >= 2       # sent along the way, not only at the end
    assert page.evaluate("window.companion.demo.errors") == 0
    # The car stays selected, its card and measurements from where the camera now sees it.
    assert page.evaluate("window.companion.selected") == 10
    page.wait_for_selector('#demo-layer .demo-handle[data-handle-for="10"]', state="visible")
    # The ghost goes once the camera sees the car where it was sent.
    page.wait_for_selector('#demo-layer .demo-ghost[data-ghost-for="10"]', state="detached", timeout=5000)

    # Turned by its handle, where it stands.
    turned = drag_car_to(page, 10, *target, heading_deg=35.0)
    assert abs(_turn(turned["heading_deg"], 35.0)) < ARRIVE_DEG
    assert math.hypot(turned["x_mm"] - target[0], turned["y_mm"] - target[1]) < ARRIVE_MM
    assert page.evaluate("window.companion.selected") == 10
    snap(page, "demo-2-turned")
    # And by the buttons and keys: 15 degrees each.
    page.click("#demo-turn-left")
    wait_until_seen_at(page, 10, *target, 50.0)
    page.keyboard.press("e")
    page.keyboard.press("e")
    seen = wait_until_seen_at(page, 10, *target, 20.0)
    assert abs(_turn(seen["heading_deg"], 20.0)) < ARRIVE_DEG
    assert errors == [], errors
    page.close()


def test_the_drag_helper_puts_a_car_where_a_test_asks(server, browser):
    page, errors = open_demo(browser, server)
    seen = drag_car_to(page, 14, 900.0, 650.0, heading_deg=-120.0)
    assert seen["x_mm"] == pytest.approx(900.0, abs=ARRIVE_MM) and seen["y_mm"] == pytest.approx(650.0, abs=ARRIVE_MM)
    assert abs(_turn(seen["heading_deg"], -120.0)) < ARRIVE_DEG
    # The game follows the camera: its card and measurements are from there.
    g = page.evaluate("fetch('api/game').then(r => r.json())")
    pose = g["game"]["state"]["vehicles"]["14"]["pose"]
    assert math.hypot(pose[0] - 900.0, pose[1] - 650.0) < ARRIVE_MM + 0.5
    assert errors == [], errors
    page.close()


def free_places(page, car: int, candidates, n: int, clear_mm: float = 130.0) -> list:
    """The first `n` of `candidates` (table mm) no other car stands within `clear_mm` of."""
    others = [(c["x_mm"], c["y_mm"]) for c in page.evaluate("window.companion.last.cars") if c["id"] != car]
    free = [p for p in candidates if all(math.hypot(p[0] - x, p[1] - y) > clear_mm for x, y in others)]
    assert len(free) >= n, f"the other cars ({others}) leave fewer than {n} of {candidates} free"
    return free[:n]


def test_a_car_moved_by_another_hand_is_dragged_from_where_it_stands(server, browser):
    """A player drags the Buggy; another page (or a hand) puts it elsewhere. This page's dashed
    "sent here" outline goes once the camera sees the car standing still away from it, and the
    next drag moves the car from where it stands, not from where this page last sent it."""
    page, errors = open_demo(browser, server)
    # Places clear of the other cars, wherever the module's earlier tests left them: a car put
    # down on another hides its roof marker from the camera, and is never seen arriving.
    (ax, ay), (bx, by), (cx, cy) = free_places(page, 13, [(300.0, 250.0), (900.0, 250.0), (300.0, 560.0),
                                                          (900.0, 560.0), (600.0, 120.0), (600.0, 690.0)], 3)
    drag_car_to(page, 13, ax, ay, 0.0)
    demo_move(page, 13, bx, by, 0.0)                    # as another player's page does
    # The page takes the car to be where the camera sees it, standing still.
    page.wait_for_function("([x, y]) => { const g = window.companion.demo.goal(13);"
                           " return Math.hypot(g.x - x, g.y - y) < 2; }", arg=[bx, by], timeout=30000)
    assert page.locator('#demo-layer .demo-ghost[data-ghost-for="13"]').count() == 0
    seen = drag_car_to(page, 13, cx, cy)
    assert math.hypot(seen["x_mm"] - cx, seen["y_mm"] - cy) < ARRIVE_MM, seen
    assert errors == [], errors
    page.close()


def test_a_phone_turns_the_selected_car_with_its_buttons(server, browser):
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2,
                                  has_touch=True, is_mobile=True)
    page = context.new_page()
    page.goto(server)
    page.wait_for_function("window.companion.csrf && window.companion.last && "
                           "document.querySelectorAll('#cars [data-car-id]').length === 5", timeout=20000)
    start = tracked(page, 11)
    page.tap('#cars [data-car-id="11"]')
    page.wait_for_selector('#car-sheet[data-car="11"]')
    for button in ("#demo-turn-left", "#demo-turn-right"):
        box = page.locator(button).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= 390 and box["height"] >= 30, (button, box)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.tap("#demo-turn-right")
    seen = wait_until_seen_at(page, 11, start["x_mm"], start["y_mm"], start["heading_deg"] - 15.0)
    assert abs(_turn(seen["heading_deg"], start["heading_deg"] - 15.0)) < ARRIVE_DEG
    # A finger drags a car too (touch events, as a phone's screen sends them): the page does
    # not scroll instead, and the car goes where the finger took it.
    box = page.locator('#cars [data-car-id="11"]').bounding_box()
    grab = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    at = table_point(page, *grab)
    end = screen_point(page, at[0] + 100.0, at[1] - 50.0)
    scroll = page.evaluate("window.scrollY")
    cdp = context.new_cdp_session(page)
    touch = lambda kind, xy: cdp.send("Input.dispatchTouchEvent", {    # noqa: E731
        "type": kind, "touchPoints": [] if kind == "touchEnd" else [{"x": xy[0], "y": xy[1]}]})
    touch("touchStart", grab)
    for k in range(1, 11):
        touch("touchMove", (grab[0] + (end[0] - grab[0]) * k / 10, grab[1] + (end[1] - grab[1]) * k / 10))
    touch("touchEnd", end)
    seen = wait_until_seen_at(page, 11, start["x_mm"] + 100.0, start["y_mm"] - 50.0, None)
    assert page.evaluate("window.scrollY") == scroll
    snap(page, "demo-3-phone")
    context.close()


def test_on_the_scripted_demo_a_drag_moves_nothing(browser):
    for url in _demo("--no-game"):
        page, errors = open_demo(browser, url)
        assert not page.query_selector("#demo-bar") and page.evaluate("window.companion.demo") is None
        posts = []
        page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
        box = page.locator('#cars [data-car-id="10"]').bounding_box()
        page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        page.mouse.down()
        page.mouse.move(box["x"] + 200, box["y"] + 80, steps=8)
        page.mouse.up()
        page.wait_for_timeout(300)
        assert not [u for u in posts if "demo/move" in u], posts
        assert errors == [], errors
        page.close()


@pytest.fixture
def fresh_server():
    """A demo of its own, its cars where the game begins (the module's server's have moved)."""
    yield from _demo(scripted=False)


def test_a_first_activation_is_played_by_dragging_the_active_car(fresh_server, browser):
    """Shattered Highways on the demo page: the round begins, the car whose turn it is is
    driven forward by a drag with its Move form open, the page judges the move from the
    camera, and it is resolved."""
    page, errors = open_demo(browser, fresh_server)
    # The round starts with each player's cars in marker order (the play-order form is not
    # what this test is about); the initiative dice are typed in on the page.
    status = page.evaluate("""() => {
        const orders = {};
        for (const [m, v] of Object.entries(window.companion.game.game.state.vehicles))
            (orders[v.controller || v.owner] ||= []).push(Number(m));
        return fetch('api/round', {method: 'POST', body: JSON.stringify({orders}),
            headers: {'Content-Type': 'application/json', 'X-CSRF-Token': window.companion.csrf}}).then(r => r.status); }""")
    assert status == 200
    for face in ("4", "2"):                              # each player's initiative die, no tie
        page.wait_for_selector("#dice:not([hidden])", timeout=10000)
        asked = page.inner_text("#dice-asked")
        assert "initiative" in asked, asked
        page.fill("#dice-inputs input", face)
        page.click("#dice-use")
        page.wait_for_function(f"!window.companion.game.pending || window.companion.game.pending.asked !== {asked!r}")
    page.wait_for_function("window.companion.game.game.state.active !== null", timeout=10000)
    active = page.evaluate("window.companion.game.game.state.active")
    assert active is not None, page.evaluate("window.companion.game.game.turn_text")
    page.click(f'#cars [data-car-id="{active}"]')
    page.wait_for_selector(f'#car-sheet[data-car="{active}"]')
    page.click('button[data-act="move"]')
    page.wait_for_selector("#conditions")
    start = tracked(page, active)
    a = math.radians(start["heading_deg"])
    to = (start["x_mm"] + 120.0 * math.cos(a), start["y_mm"] + 120.0 * math.sin(a))
    drag_car_to(page, active, *to)
    # The form stayed open and judges the move from where the camera now sees the car.
    page.wait_for_function("document.getElementById('preview').textContent.includes('Move: legal')", timeout=10000)
    page.wait_for_selector("#conditions.holds")
    page.click("#resolve")
    page.wait_for_selector("#dice:not([hidden])", timeout=10000)
    assert " Move for " in page.inner_text("#dice-asked")
    page.fill("#dice-inputs input", "6")
    page.click("#dice-use")
    page.wait_for_function("window.companion.game.log.some(e => e.detail && e.detail.act === 'move')", timeout=10000)
    pose = page.evaluate(f"window.companion.game.game.state.vehicles['{active}'].pose")
    assert math.hypot(pose[0] - to[0], pose[1] - to[1]) < ARRIVE_MM + 0.5, (pose, to)
    snap(page, "demo-4-first-move", panel_top=True)
    assert errors == [], errors
    page.close()


def test_a_visitor_without_the_pin_cannot_drag_a_car_and_a_player_with_it_can(browser):
    """On a demo shared over the network, moving a car is a change like any other: a visitor
    watching without the table's PIN drags nothing; once the PIN is in, the drag moves it."""
    import re
    import subprocess
    import sys
    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--port", "0", "--lan", "--pin", "2468"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = re.search(r"http://[\d.]+:(\d+)/", proc.stdout.readline()).group(1)
        page, errors = open_demo(browser, f"http://127.0.0.1:{port}/")
        assert page.is_visible("#login") and not page.is_visible("#demo-bar")
        posts = []
        page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)
        start = tracked(page, 12)
        drag_car_to(page, 12, start["x_mm"] + 80.0, start["y_mm"], wait=False)
        page.wait_for_timeout(800)
        assert not [u for u in posts if "demo/move" in u], posts
        now = tracked(page, 12)
        assert math.hypot(now["x_mm"] - start["x_mm"], now["y_mm"] - start["y_mm"]) < 0.5
        page.fill("#pin", "2468")
        page.click("#login button")
        page.wait_for_selector("#login", state="hidden")
        assert page.is_visible("#demo-bar")
        seen = drag_car_to(page, 12, start["x_mm"] + 80.0, start["y_mm"])
        assert seen["x_mm"] == pytest.approx(start["x_mm"] + 80.0, abs=ARRIVE_MM)
        assert errors == [], errors
        page.close()
    finally:
        proc.terminate()
        proc.wait(10)

"""The players' tools on the playable demo, in a real Chromium at a desktop's and a 390 px
phone's width: the free ruler between two taps shows a distance with its doubt (and follows
a car), a template is placed, dragged and turned, and "put it back" ticks a car off once the
camera sees it back where it stood."""

from __future__ import annotations

import math

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import demo_move, drag_car_to, open_demo, screen_point, tracked

pytestmark = pytest.mark.browser

VIEWPORTS = {"desktop": {"width": 1400, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def server():
    yield from _demo(scripted=False)


@pytest.fixture(params=sorted(VIEWPORTS))
def page(request, server, browser):
    page, errors = open_demo(browser, server, viewport=VIEWPORTS[request.param])
    page.evaluate("document.getElementById('board').scrollIntoView()")
    page.name = request.param
    yield page
    assert errors == []
    page.close()


def small_targets(page, within: str) -> list[str]:
    """Every visible button, menu, input and fold in `within` smaller than a fingertip (44 px)."""
    return page.evaluate("""(sel) => [...document.querySelectorAll(`${sel} :is(button, select, a, summary, input)`)]
        .filter((e) => e.offsetParent !== null && getComputedStyle(e).visibility !== 'hidden')
        .map((e) => [e.id || e.textContent.trim().slice(0, 20) || e.tagName, e.getBoundingClientRect()])
        .filter(([, r]) => r.width > 0 && (r.height < 43.5 || r.width < 43.5))
        .map(([n, r]) => `${n}: ${r.width.toFixed(0)} x ${r.height.toFixed(0)}`)""", within)


def move_car(page, car: int, x_mm: float, y_mm: float, heading_deg: float) -> None:
    """A knock or a hand putting the car back: dragged on the desktop; on the phone, where the
    cars are a few pixels long and a finger would grab a neighbour, by the demo's move API."""
    if page.name == "desktop":
        drag_car_to(page, car, x_mm, y_mm, heading_deg if abs(heading_deg - tracked(page, car)["heading_deg"]) > 0.5 else None)
        return
    demo_move(page, car, x_mm, y_mm, heading_deg)


def tap_table(page, x_mm: float, y_mm: float) -> None:
    page.mouse.click(*screen_point(page, x_mm, y_mm))


def test_ruler_between_two_taps_shows_the_distance_with_its_doubt(page):
    page.click("#ruler-go")
    tap_table(page, 100.0, 100.0)
    tap_table(page, 400.0, 500.0)
    page.wait_for_function("window.companionTools.ruler !== null", timeout=10000)
    r = page.evaluate("window.companionTools.ruler")
    (x0, y0), (x1, y1) = r["line"]
    # The taps land within a screen pixel of the points meant (a phone's pixel is ~3.5 mm).
    assert math.hypot(x0 - 100, y0 - 100) < 5 and math.hypot(x1 - 400, y1 - 500) < 5
    assert r["distance_mm"] == pytest.approx(math.hypot(x1 - x0, y1 - y0), abs=0.02)
    assert 0 < r["sigma_mm"] < 2
    text = page.inner_text("#free-ruler-text")
    assert f"{r['distance_mm'] / 25.4:.2f} in ±" in text and text.endswith(" in")
    label = page.text_content("#free-ruler-layer .free-ruler-label")
    assert label.startswith(f"{r['distance_mm'] / 25.4:.2f} in ± ")
    # In millimetres, one unit on the line.
    page.select_option("#units", "mm")
    assert f"{r['distance_mm']:.1f} mm ± " in page.inner_text("#free-ruler-text")
    assert " in" not in page.inner_text("#free-ruler-text")
    page.select_option("#units", "in")
    snap(page, f"tools-ruler-{page.name}")


def test_ruler_from_a_car_follows_its_nearest_edge(page):
    car = tracked(page, 10)
    page.click("#ruler-go")
    tap_table(page, car["x_mm"], car["y_mm"])          # on the Interceptor
    tap_table(page, car["x_mm"] + 200.0, car["y_mm"])  # a point 200 mm to its right
    page.wait_for_function("window.companionTools.ruler !== null", timeout=10000)
    r = page.evaluate("window.companionTools.ruler")
    assert r["from"] == {"car": 10, "label": "Interceptor"}
    # Facing +x, the car's front edge is half its length from its centre.
    assert r["distance_mm"] == pytest.approx(200.0 - car["length_mm"] / 2, abs=6.0)
    assert "From the Interceptor" in page.inner_text("#free-ruler-text")
    page.click("#ruler-clear")
    assert page.is_hidden("#free-ruler-text")


def test_a_template_is_placed_dragged_and_turned(page):
    page.select_option("#template-choice", label='Move template (9" x 4")')
    page.click("#template-place")
    tap_table(page, 250.0, 600.0)
    shape = page.locator('#template-layer [data-template="Move template"]')
    shape.wait_for(timeout=5000)
    placed = page.evaluate("window.companionTools.placed")
    assert len(placed) == 1 and placed[0]["heading"] == 0
    assert math.hypot(placed[0]["x"] - 250, placed[0]["y"] - 600) < 5
    # Its size is the book's: 9 in along, 4 in across.
    body = page.locator('#template-layer [data-template="Move template"] .template-body rect')
    assert float(body.get_attribute("width")) == pytest.approx(228.6) and float(body.get_attribute("height")) == pytest.approx(101.6)
    # Dragged 100 mm to the right, by the pointer.
    start = screen_point(page, placed[0]["x"], placed[0]["y"])
    end = screen_point(page, placed[0]["x"] + 100, placed[0]["y"])
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(*end, steps=8)
    page.mouse.up()
    moved = page.evaluate("window.companionTools.placed")[0]
    assert moved["x"] == pytest.approx(placed[0]["x"] + 100, abs=5) and moved["y"] == pytest.approx(placed[0]["y"], abs=5)
    # Turned 15 degrees anticlockwise, twice, then once back.
    row = page.locator("#template-list li").first
    row.locator("[data-turn=left]").click()
    row = page.locator("#template-list li").first
    row.locator("[data-turn=left]").click()
    page.locator("#template-list li").first.locator("[data-turn=right]").click()
    assert page.evaluate("window.companionTools.placed")[0]["heading"] == 15
    assert "rotate(-15)" in shape.get_attribute("transform")
    assert 'shattered-highways-0.3.8.txt' in page.inner_text("#template-list")
    snap(page, f"tools-template-{page.name}")
    assert small_targets(page, "#tools-bar") == [] and small_targets(page, "#template-list") == []
    page.locator("#template-list li").first.locator("[data-remove]").click()
    assert page.evaluate("window.companionTools.placed") == []


def test_put_it_back_ticks_a_knocked_car_off_when_it_is_back(page):
    page.click("#putback-knocked")
    page.wait_for_selector("#putback:not([hidden])", timeout=5000)
    page.evaluate("document.getElementById('board').scrollIntoView()")
    if page.name == "phone":       # the list is under the board, in view with it
        card, board = page.locator("#putback").bounding_box(), page.locator("#board").bounding_box()
        assert card["y"] > board["y"] + board["height"] - 1
    page.wait_for_selector('#putback-list [data-putback="11"]', timeout=5000)
    before = page.evaluate("""(async () => (await (await fetch('api/putback')).json()))()""")
    target = {r["marker"]: r for r in before["cars"]}[11]["target"]
    assert page.get_attribute('#putback-list [data-putback="11"]', "class") == "in-place"
    # Knocked 30 mm towards the far edge: the page says where it must go.
    move_car(page, 11, target[0], target[1] + 30.0, target[2])
    # Facing +x, the far edge is on the car's left: 30 mm back to its right (the list follows
    # the camera a poll behind it).
    page.wait_for_function("""() => {
        const t = document.querySelector('#putback-list [data-putback="11"] .putback-text');
        const m = t && /^([0-9]+) mm to its right/.exec(t.textContent);
        return m && Math.abs(Number(m[1]) - 30) <= 2; }""", timeout=10000)
    assert page.get_attribute('#putback-list [data-putback="11"]', "class") == "to-move"
    assert page.locator('#putback-layer [data-target-for="11"]').count() == 1
    snap(page, f"tools-putback-{page.name}", panel_top=True)
    assert small_targets(page, "#putback") == []
    # Put back where it stood: ticked off.
    move_car(page, 11, target[0], target[1], target[2])
    page.wait_for_selector('#putback-list [data-putback="11"].in-place', timeout=10000)
    assert page.inner_text('#putback-list [data-putback="11"] .putback-text') == "in place"
    page.click("#putback-done")
    page.wait_for_selector("#putback", state="hidden", timeout=5000)


def test_an_undo_leaves_putting_back_to_the_game_not_a_second_list(page):
    """An undo's cars are asked back by the game (a placement for each piece the undone event
    moved, tests/test_browser_placement.py); the tools' "Put the cars back" card, which used to
    open on every undo with every car, no longer says it a second time."""
    def post(path, body):
        return page.evaluate("""async ([path, body]) => { const r = await fetch('api/' + path, {method: 'POST',
            headers: {'Content-Type': 'application/json', 'X-CSRF-Token': window.companion.csrf},
            body: JSON.stringify(body)}); return [r.status, await r.json()]; }""", [path, body])
    asks = page.evaluate("(async () => (await (await fetch('api/game')).json()).game.round_orders)()") or {}
    status, g = post("round", {"orders": {who: [o["value"] for o in cars] for who, cars in asks.items()}})
    assert status == 200, g
    while g["pending"] is not None:
        status, g = post("dice/virtual", {})
        assert status == 200, g
    status, g = post("undo", {})
    assert status == 200, g
    undone = g["log"][0]["outcome"]["undid"]
    # No list of every car opens beside what the game asks.
    page.wait_for_function(f"window.companion.game.log.some(e => e.kind === 'undo' && e.outcome.undid === {undone})",
                           timeout=10000)
    page.wait_for_timeout(1500)
    assert page.locator("#putback").is_hidden()
    # The card is still there for a car knocked mid-turn.
    page.click("#putback-knocked")
    page.wait_for_selector("#putback:not([hidden])", timeout=5000)
    page.click("#putback-done")
    page.wait_for_selector("#putback", state="hidden", timeout=5000)


def test_done_is_not_undone_by_a_poll_still_in_flight(page):
    """On a busy machine a "where are the cars" poll sent just before "Done" can come back after
    it: the card must stay closed (it came back open, and stayed so, in CI)."""
    page.click("#putback-knocked")
    page.wait_for_selector("#putback:not([hidden])", timeout=5000)
    held = []

    def hold(route):
        if route.request.method == "GET":
            held.append((route, route.fetch()))   # the server's answer now, given only after Done
        else:
            route.continue_()
    page.route("**/api/putback", hold)
    for _ in range(50):
        if held:
            break
        page.wait_for_timeout(100)
    assert held, "no poll went out while the card was open"
    page.click("#putback-done")
    page.wait_for_selector("#putback", state="hidden", timeout=5000)
    for route, answer in held:
        route.fulfill(response=answer)
    page.unroute("**/api/putback")
    page.wait_for_timeout(700)       # the late answers are in, and a poll would have come
    assert page.locator("#putback").is_hidden()

"""A newcomer's first action on a phone, in a real Chromium on the playable demo (issue 19's
usability pass, played as the note tells it): from the first load, only what the page shows
is tapped: the header's "start round 1", Start round, the dice (typed in), the car whose
turn it is, Move; the car is dragged on the board (the demo's stand-in for a hand on the
table), the move resolved with a typed die; the result leads the card and every action that
cannot be taken now says why. Screenshots of each step go to test-artifacts/newcomer-*."""

from __future__ import annotations

import math

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import drag_car_to, tracked
from tests.test_browser_phone import PHONE, in_view

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server():
    yield from _demo(scripted=False)


def test_a_newcomer_plays_a_first_move_on_a_phone_from_what_the_page_shows(server, browser):
    page = browser.new_page(**PHONE)
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(server)
    page.wait_for_function("window.companion.game && window.companion.game.game && window.companion.last", timeout=20000)
    # The header says what to do first; a tap on it opens the Round tab.
    page.wait_for_function("document.getElementById('turn').textContent === 'start round 1'")
    snap(page, "newcomer-1-first-load")
    page.tap("#turn")
    page.wait_for_selector('#tabs [data-tab="round"][aria-selected="true"]')
    page.wait_for_function("(() => { const r = document.getElementById('start-round').getBoundingClientRect();"
                           " return r.top >= 0 && r.bottom <= innerHeight; })()", timeout=5000)
    snap(page, "newcomer-2-round-tab")
    page.tap("#start-round")
    # Initiative: each die asked in view and typed in (Max 6, Furiosa 1: the Interceptor leads).
    for _ in range(2):
        page.wait_for_selector("#dice:not([hidden])")
        assert in_view(page, "#dice")
        asked = page.inner_text("#dice-asked")
        assert asked.startswith("1d6 initiative for ")
        snap(page, "newcomer-3-dice")
        page.fill("#dice-inputs input", "6" if "Max" in asked else "1")
        page.get_by_role("button", name="Use these dice").tap()
        page.wait_for_function("(a) => document.getElementById('dice').hidden || "
                               "document.getElementById('dice-asked').textContent !== a", arg=asked)
    page.wait_for_function("window.companion.game.game.active !== null && !window.companion.game.pending")
    acting = page.evaluate("window.companion.game.game.active")
    name = page.evaluate(f"window.companion.last.cars.find(c => c.id === {acting}).name")
    assert page.inner_text("#turn").startswith(f"round 1: the {name}'s turn")
    assert "acting" in page.get_attribute(f'#cars [data-car-id="{acting}"]', "class")
    # The ringed car tapped: its card, with Move offered.
    page.evaluate("window.scrollTo(0, 0)")
    body = page.locator(f'#cars [data-car-id="{acting}"] .body').bounding_box()
    page.touchscreen.tap(body["x"] + body["width"] / 2, body["y"] + body["height"] / 2)
    page.wait_for_selector(f'#car-sheet[data-car="{acting}"]')
    page.wait_for_selector('#car-actions button[data-act="move"]:not([disabled])')
    snap(page, "newcomer-4-car")
    page.get_by_role("button", name="Move", exact=True).tap()
    page.wait_for_selector("#conditions")
    # Back up to the board; the car dragged 80 mm (3.15 in) ahead: the ruler says it may stop there.
    page.evaluate("document.getElementById('board').scrollIntoView()")
    start = tracked(page, acting)
    a = math.radians(start["heading_deg"])
    drag_car_to(page, acting, start["x_mm"] + 80 * math.cos(a), start["y_mm"] + 80 * math.sin(a))
    page.wait_for_function("document.getElementById('ruler-text').textContent.includes('it may stop here')", timeout=20000)
    assert f"{name}: moved 3.1" in page.inner_text("#ruler-text") and in_view(page, "#ruler-text")
    snap(page, "newcomer-5-moved")
    page.wait_for_selector("#conditions.holds", timeout=20000)
    page.locator("#resolve").scroll_into_view_if_needed()
    page.tap("#resolve")
    page.wait_for_selector("#dice:not([hidden])")
    assert in_view(page, "#dice") and page.inner_text("#dice-asked").startswith("1d10 Move")
    page.fill("#dice-inputs input", "9")          # a good Move roll (1 is a fumble)
    page.get_by_role("button", name="Use these dice").tap()
    page.wait_for_function("(h) => (document.getElementById('outcome-headline') || {}).textContent === h",
                           arg=f"MOVED: the {name}", timeout=20000)
    # After acting: the driver's actions are greyed with the reason (moving the car again would
    # not help, so not "not yet").
    page.wait_for_function("(() => { const w = document.getElementById('why-move');"
                           " return w && w.textContent.includes('already acted this round') && !w.textContent.startsWith('not yet'); })()",
                           timeout=20000)
    assert page.locator('#car-actions button[data-act="move"]').is_disabled()
    # The card says the car is now held where the move put it, not where its turn began.
    page.wait_for_function("document.getElementById('car-sheet').textContent.includes('held where its last move put it')",
                           timeout=20000)
    page.evaluate("document.getElementById('outcome').scrollIntoView()")
    snap(page, "newcomer-6-result")
    assert errors == [], errors
    page.close()

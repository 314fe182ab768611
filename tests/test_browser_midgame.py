"""The page mid-game (issue 23), in a real Chromium on the playable demo table: what the game
waits for (dice, a choice, a piece to put in place) and the open action's Resolve are always in
view, at the top of the side panel on a desktop however far it is scrolled, in a bar at the
bottom of a phone's screen that leaves the board's cars uncovered; on a phone the selected car's
actions sit right under the board, and the board zooms on the acting car and what it may act
against; the table-side view starts the next round and shows a waiting placement in large type."""

from __future__ import annotations

import re

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import demo_move, open_action, open_demo, tracked
from tests.test_browser_placement import get_game, lose_control, post
from tests.test_browser_play_view import INTERCEPTOR, WAR_RIG, new_game, play_round, type_dice

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server():
    yield from _demo(scripted=False)

WAIT_MS = 60000
DESKTOP = {"width": 1400, "height": 900}
PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "has_touch": True}
#: A phone's car actions start at most this far below the board (a thumb's reach).
ACTIONS_BELOW_BOARD_PX = 300


def in_viewport(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    vp = page.viewport_size
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= vp["height"] \
        and box["x"] >= 0 and box["x"] + box["width"] <= vp["width"]


def scrolled_everywhere(page, selector: str) -> None:
    """The element is in view with the page and the side panel scrolled to their tops and bottoms."""
    for where in ("0", "1e6"):
        page.evaluate(f"window.scrollTo(0, {where}); document.getElementById('panel').scrollTop = {where}")
        page.wait_for_function("""(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
            return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight; }""", arg=selector, timeout=WAIT_MS)
        assert in_viewport(page, selector), (selector, where)


def open_shoot_at_the_war_rig(page) -> None:
    page.click(f'#cars [data-car-id="{INTERCEPTOR}"]')
    page.wait_for_selector(f'#car-sheet[data-car="{INTERCEPTOR}"]')
    open_action(page, "shoot", WAIT_MS)
    page.select_option('#action-form select[name="target"]', str(WAR_RIG))
    page.wait_for_selector("#conditions.holds", timeout=WAIT_MS)


def test_on_a_desktop_what_waits_stays_at_the_top_of_the_panel_however_it_is_scrolled(server, browser):
    page, errors = open_demo(browser, server, viewport=DESKTOP)
    new_game(page)
    page.click('#tabs [data-tab="round"]')
    page.click("#start-round")
    page.wait_for_selector("#dice:not([hidden])")
    scrolled_everywhere(page, "#dice")
    for _ in range(2):
        type_dice(page, 6 if "Max" in page.inner_text("#dice-asked") else 1)
    page.wait_for_function("window.companion.game.game.active !== null && !window.companion.game.pending")
    # An action's Resolve: in view whatever the panel shows below it (the targets, the form).
    open_shoot_at_the_war_rig(page)
    scrolled_everywhere(page, "#resolve")
    assert page.is_enabled("#resolve") and "ready to resolve" in page.inner_text("#resolve-what")
    page.evaluate("document.getElementById('panel').scrollTop = 1e6")
    snap(page, "midgame-desktop-resolve")
    # A 6 to hit (the most) asks the gunner's player whether to take a bonus: in view too.
    page.click("#resolve")
    type_dice(page, 6)
    type_dice(page, 1)                                   # the damage
    page.wait_for_selector("#choice:not([hidden])", timeout=WAIT_MS)
    scrolled_everywhere(page, "#choice")
    scrolled_everywhere(page, "#choice-options button[data-choice=\"no\"]")
    # Nothing of the board is covered: the box is in the side panel, beside it.
    board = page.locator("#board").bounding_box()
    choice = page.locator("#choice").bounding_box()
    assert choice["x"] >= board["x"] + board["width"]
    snap(page, "midgame-desktop-choice")
    page.click("#choice-cancel")
    page.wait_for_selector("#choice", state="hidden")
    assert errors == [], errors
    page.close()


def test_on_a_phone_the_actions_sit_under_the_board_and_what_waits_stays_in_view(server, browser):
    page, errors = open_demo(browser, server, **PHONE)
    new_game(page)
    assert page.evaluate("window.companion.view.w") == pytest.approx(
        float(page.get_attribute("#board", "data-width-mm")) + 60)          # no car acts: the whole table
    assert play_round(page, max_first=True) == INTERCEPTOR
    # The board zooms on the acting car, where it may go and the cars it may act against.
    page.wait_for_function("window.companion.view.w < Number(document.getElementById('board').dataset.widthMm)",
                           timeout=WAIT_MS)
    page.evaluate("window.scrollTo(0, 0)")
    board = page.locator("#board").bounding_box()
    for car in (INTERCEPTOR, WAR_RIG):                   # the War Rig is in range of its gun
        body = page.locator(f'#cars [data-car-id="{car}"] .body').bounding_box()
        assert board["x"] <= body["x"] and body["x"] + body["width"] <= board["x"] + board["width"], car
        assert board["y"] <= body["y"] and body["y"] + body["height"] <= board["y"] + board["height"], car
    # The selected car's actions: right under the board, within a thumb's reach.
    page.locator(f'#cars [data-car-id="{INTERCEPTOR}"] .body').tap(force=True)
    page.wait_for_selector(f'#car-sheet[data-car="{INTERCEPTOR}"]')
    page.wait_for_selector('#car-actions button[data-act="move"]')
    board = page.locator("#board").bounding_box()
    first = page.locator("#car-actions button[data-act]").first.bounding_box()
    below = first["y"] - (board["y"] + board["height"])
    assert 0 <= below <= ACTIONS_BELOW_BOARD_PX, below
    snap(page, "midgame-phone-actions")
    # An action's Resolve: in the bar at the bottom, wherever the page is scrolled.
    open_action(page, "shoot", WAIT_MS)
    page.select_option('#action-form select[name="target"]', str(WAR_RIG))
    page.wait_for_selector("#conditions.holds", timeout=WAIT_MS)
    scrolled_everywhere(page, "#resolve")
    page.evaluate("window.scrollTo(0, 0)")
    snap(page, "midgame-phone-resolve")
    page.click("#resolve")
    page.wait_for_selector("#dice:not([hidden])", timeout=WAIT_MS)
    scrolled_everywhere(page, "#dice-use")
    type_dice(page, 6)                                   # a 6 to hit, the most: a bonus is offered
    type_dice(page, 1)                                   # the damage
    page.wait_for_selector("#choice:not([hidden])", timeout=WAIT_MS)
    scrolled_everywhere(page, "#choice-options button[data-choice=\"no\"]")
    # The bar leaves the board's cars uncovered (the page scrolled to the board).
    page.evaluate("window.scrollTo(0, 0)")
    bar = page.locator("#waiting").bounding_box()
    for car in (INTERCEPTOR, WAR_RIG):
        body = page.locator(f'#cars [data-car-id="{car}"] .body').bounding_box()
        assert body["y"] + body["height"] <= bar["y"], car
    snap(page, "midgame-phone-choice")
    page.click("#choice-cancel")
    page.wait_for_selector("#choice", state="hidden")
    assert errors == [], errors
    page.close()


def test_on_a_phone_a_placement_is_in_view_with_the_board_on_it(server, browser):
    page, errors = open_demo(browser, server, **PHONE)
    p = lose_control(page)
    scrolled_everywhere(page, "#placement")
    scrolled_everywhere(page, "#placement-demo")
    # The board shows the outline and the car, both above the bar.
    page.evaluate("window.scrollTo(0, 0)")
    page.wait_for_selector(f'#placement-layer [data-place-for="{INTERCEPTOR}"]')
    board = page.locator("#board").bounding_box()
    bar = page.locator("#waiting").bounding_box()
    for sel in (f'#placement-layer [data-place-for="{INTERCEPTOR}"] .place-outline', f'#cars [data-car-id="{INTERCEPTOR}"] .body'):
        box = page.locator(sel).bounding_box()
        assert board["x"] <= box["x"] and box["x"] + box["width"] <= board["x"] + board["width"], sel
        assert board["y"] <= box["y"] and box["y"] + box["height"] <= min(board["y"] + board["height"], bar["y"]), sel
    assert page.inner_text("#ruler-text").startswith("Put the Interceptor here")
    snap(page, "midgame-phone-placement")
    page.locator("#placement-demo").tap()
    page.wait_for_function("window.companion.placed.length === 1", timeout=WAIT_MS)
    assert get_game(page)["pending"] is None
    assert p["marker"] == INTERCEPTOR
    assert errors == [], errors
    page.close()


def test_the_table_side_view_starts_the_next_round_and_says_a_placement_in_large_type(server, browser):
    page, errors = open_demo(browser, server.rstrip("/") + "/?view=table", viewport=DESKTOP)
    new_game(page)
    # Round 1 from the table-side view.
    page.wait_for_selector("#ts-start-round", state="visible", timeout=WAIT_MS)
    assert page.inner_text("#ts-start-round") == "Start round 1"
    page.click("#ts-start-round")
    for _ in range(2):
        page.wait_for_selector("#dice:not([hidden])", timeout=WAIT_MS)
        type_dice(page, 6 if "Max" in page.inner_text("#dice-asked") else 1)
    page.wait_for_function("window.companion.game.game.active === 10 && !window.companion.game.pending", timeout=WAIT_MS)
    assert page.is_hidden("#ts-next")                    # a car acts: no round to start
    # The Interceptor loses control: what is wanted is the placement, in large type.
    assert post(page, "act", {"act": "move", "vehicle": INTERCEPTOR})["status"] == 200
    type_dice(page, 1)
    type_dice(page, 2)
    page.wait_for_function("document.getElementById('ts-wanted').dataset.kind === 'placement'", timeout=WAIT_MS)
    wanted = page.inner_text("#ts-wanted")
    assert re.fullmatch(r"Put the Interceptor here: .+: [\d.]+ in and \d+° to go", wanted), wanted
    size = float(page.evaluate("parseFloat(getComputedStyle(document.getElementById('ts-wanted')).fontSize)"))
    assert size >= 28
    assert page.is_visible("#placement") and page.is_visible("#placement-demo")
    assert page.is_hidden("#ts-next")
    snap(page, "midgame-tableside-placement")
    page.click("#placement-demo")
    page.wait_for_function("window.companion.placed.length === 1 && !window.companion.game.pending", timeout=WAIT_MS)
    page.wait_for_function("document.getElementById('ts-wanted').dataset.kind !== 'placement'")
    # Every car's turn ended: the round is over, and the next one starts from here.
    for _ in range(6):
        if page.evaluate("window.companion.game.game.active") is None:
            break
        r = post(page, "end_turn", {})
        assert r["status"] == 200, r
        page.wait_for_function(f"window.companion.game.version >= {r['body']['version']}")
    assert get_game(page)["game"]["active"] is None
    page.wait_for_selector("#ts-start-round", state="visible", timeout=WAIT_MS)
    assert page.inner_text("#ts-start-round") == "Start round 2"
    snap(page, "midgame-tableside-next-round")
    page.click("#ts-start-round")
    page.wait_for_selector("#dice:not([hidden])", timeout=WAIT_MS)
    assert "initiative" in page.inner_text("#dice-asked")
    assert page.is_hidden("#ts-next")
    for _ in range(2):
        type_dice(page, 6 if "Max" in page.inner_text("#dice-asked") else 1)
    page.wait_for_function("window.companion.game.game.round === 2", timeout=WAIT_MS)
    assert page.inner_text("#ts-round-error") == ""
    assert tracked(page, INTERCEPTOR) is not None
    assert errors == [], errors
    page.close()




#: What a car's name covers on the screen, of what it must not (an empty list when nothing).
LABELS_OVER = """() => {
    const rect = (e) => e.getBoundingClientRect();
    const apart = (a, b) => a.right <= b.left + 0.5 || b.right <= a.left + 0.5 || a.bottom <= b.top + 0.5 || b.bottom <= a.top + 0.5;
    const others = [...document.querySelectorAll('#cars .car .body')].map((b) => ['car ' + b.parentNode.dataset.carId, rect(b)])
      .concat([...document.querySelectorAll('#terrain text, .gate-name')].map((t) => [t.textContent, rect(t)]))
      .concat([...document.querySelectorAll('#demo-layer .demo-handle')].filter((h) => h.style.display !== 'none')
        .map((h) => ['the turning handle', rect(h.querySelector('circle'))]));
    const out = [];
    for (const l of document.querySelectorAll('#labels text')) {
      if (l.style.display === 'none') continue;
      for (const [what, r] of others) {
        if (what === 'car ' + l.dataset.labelFor) continue;
        if (!apart(rect(l), r)) out.push(`${l.textContent} over ${what}`);
      }
    }
    return out; }"""


def names_clear(page) -> None:
    """Wait until no car's name covers what it must not (they are placed as the cars glide)."""
    try:
        page.wait_for_function(f"({LABELS_OVER})().length === 0", timeout=WAIT_MS)
    except Exception:
        assert page.evaluate(LABELS_OVER) == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE["viewport"]], ids=["desktop", "phone"])
def test_car_names_keep_off_cars_the_turning_handle_and_terrain_and_gate_names(server, browser, viewport):
    page, errors = open_demo(browser, server, viewport=viewport)
    new_game(page)
    page.locator(f'#cars [data-car-id="{INTERCEPTOR}"] .body').click(force=True)
    page.wait_for_selector(f'#demo-layer .demo-handle[data-handle-for="{INTERCEPTOR}"]', state="visible")
    names_clear(page)
    start = tracked(page, INTERCEPTOR)
    try:
        # Turned to face the far edge (turned where it stands: no drive across a busy machine's
        # slow table), its handle stands where its name was, above it: the name goes elsewhere.
        demo_move(page, INTERCEPTOR, start["x_mm"], start["y_mm"], 90.0)
        page.wait_for_selector(f'#demo-layer .demo-handle[data-handle-for="{INTERCEPTOR}"]', state="visible")
        names_clear(page)
        shown = page.evaluate("[...document.querySelectorAll('#labels text')].filter((l) => l.style.display !== 'none').length")
        assert shown >= 4
        snap(page, f"midgame-labels-{'phone' if viewport['width'] < 500 else 'desktop'}")
    finally:
        demo_move(page, INTERCEPTOR, start["x_mm"], start["y_mm"], start["heading_deg"])
    assert errors == [], errors
    page.close()

"""Car Cult's first activation played on the demo page in a real Chromium, as a player does:
the round is started from the Round tab (the tokens on the engines set the order, the tied cars'
d20s typed in), the car up next is activated and its speed tokens allocated in its forms, it is
driven by a drag on the board with its Move form open (nothing measured before the move is
declared: the preview only says it is ready), the move is read from the camera's path, and the
turn is ended with the Round tab's button."""

from __future__ import annotations

import math

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import ARRIVE_MM, drag_car_to, open_demo, tracked

pytestmark = pytest.mark.browser

#: The four starter cars with 2 ST on their engines tie; each rolls a d20, typed in on the page.
TIE_DICE = {"Interceptor": "5", "War Rig": "20", "Rust Bucket": "10", "Buggy": "15"}
#: 4 in: between the Straight Five's minimum (3 in) and maximum (6 in) with 2 ST on it.
DRIVE_MM = 4 * 25.4


@pytest.fixture
def car_cult_demo():
    """A playable demo of its own, Car Cult's starter cars where its game begins."""
    yield from _demo("--rules", "car_cult", scripted=False)


def _wait_game(page, condition: str, timeout: float = 30000) -> None:
    page.wait_for_function(f"(() => {{ const g = window.companion.game; return !!(g && g.game && ({condition})); }})()",
                           timeout=timeout)


def test_car_cult_first_activation_is_played_by_dragging_the_car_up_next(car_cult_demo, browser):
    page, errors = open_demo(browser, car_cult_demo)
    assert page.evaluate("window.companion.game.game.rules.name") == "car_cult"
    assert page.evaluate("window.companion.game.game.premeasure") is False

    # The round: started with the Round tab's button (no play order to set: the tokens decide).
    page.click('#tabs button[data-tab="round"]')
    page.click("#start-round")
    # Four cars have 2 ST on their engines: each rolls a d20, asked one by one, typed in.
    for _ in TIE_DICE:
        page.wait_for_selector("#dice:not([hidden])", timeout=30000)
        asked = page.inner_text("#dice-asked")
        assert asked.startswith("1d20 activation tie-break for "), asked
        car_name = asked.removeprefix("1d20 activation tie-break for ").strip()
        assert car_name in TIE_DICE, asked
        page.fill("#dice-inputs input", TIE_DICE[car_name])
        page.click("#dice-use")
        page.wait_for_function(f"!window.companion.game.pending || window.companion.game.pending.asked !== {asked!r}",
                               timeout=30000)
    _wait_game(page, "g.game.order.length === 5 && !g.pending")
    game = page.evaluate("window.companion.game.game")
    # Descending d20s among the tied (20, 15, 10, 5), then the Hearse with its single ST.
    assert [o["vehicle"] for o in game["order"]] == [12, 13, 11, 10, 14], game["order"]
    assert game["up"] == "Player 1" and game["active"] is None, game["turn_text"]
    assert "the War Rig (Player 1) activates next" in game["turn_text"]
    up = 12

    # The War Rig: its card shows its engine's band; only "activate" is offered, nothing measured.
    page.click(f'#cars [data-car-id="{up}"]')
    page.wait_for_selector(f'#car-sheet[data-car="{up}"]', timeout=30000)
    assert "Move template 3-6 in." in page.inner_text("#car-sheet")
    page.wait_for_selector('#car-actions button[data-act="activate"]', timeout=30000)
    assert page.locator("#car-actions button[data-act]").evaluate_all("bs => bs.map(b => b.dataset.act)") == ["activate"]
    assert page.is_visible("#no-premeasure")
    assert page.locator("#overlays .move-region").count() == 0 and page.locator("#overlays .arc").count() == 0

    # Activate (no down shift): its turn begins and the table holds it where it stands.
    page.click('button[data-act="activate"]')
    page.wait_for_selector("#conditions.holds", timeout=30000)
    assert "Ready to declare" in page.inner_text("#conditions")
    page.click("#resolve:not([disabled])")
    _wait_game(page, f"g.game.active === {up} && (g.held || []).includes({up})")
    start = tracked(page, up)
    stood = page.evaluate(f"window.companion.game.game.state.vehicles['{up}'].pose")
    assert math.hypot(stood[0] - start["x_mm"], stood[1] - start["y_mm"]) < ARRIVE_MM

    # Allocate: the 4 ST generated go on the machine gun (its number field); the engine keeps 2.
    page.click('button[data-act="allocate"]')
    field = page.locator('#action-form input[name="st_machine_gun"]')
    field.wait_for(timeout=30000)
    field.fill("2")
    page.wait_for_selector("#conditions.holds", timeout=30000)
    page.click("#resolve:not([disabled])")
    _wait_game(page, "g.log.some(e => e.detail && e.detail.act === 'allocate')")
    components = page.evaluate(f"window.companion.game.game.state.vehicles['{up}'].components")
    assert components["machine_gun"] == "SS" and components["engine"] == "SS...", components

    # Its move is declared now: the band (the tape along the move) is drawn, 3-6 in.
    page.wait_for_selector("#overlays .move-region", timeout=30000)
    regions = page.locator("#overlays .move-region").evaluate_all("ps => ps.map(p => p.dataset.region)")
    assert regions == ["move", "brake"], regions

    # The Move form open, the car is driven 4 in straight ahead by a drag on the board.
    page.click('button[data-act="move"]')
    page.wait_for_selector("#conditions", timeout=30000)
    a = math.radians(start["heading_deg"])
    to = (start["x_mm"] + DRIVE_MM * math.cos(a), start["y_mm"] + DRIVE_MM * math.sin(a))
    seen = drag_car_to(page, up, *to)
    assert math.hypot(seen["x_mm"] - to[0], seen["y_mm"] - to[1]) <= ARRIVE_MM
    # The form stayed open; with no pre-measuring it judges nothing before the move is declared.
    assert page.evaluate("window.companion.selected") == up
    page.wait_for_function("(() => { const c = document.getElementById('conditions');"
                           " return c && c.classList.contains('holds') && c.textContent.includes('Ready to declare'); })()",
                           timeout=30000)
    assert "Move:" not in page.inner_text("#preview")
    # Held: the game still has it where its turn began until the move is resolved.
    held = page.evaluate(f"window.companion.game.game.state.vehicles['{up}'].pose")
    assert math.hypot(held[0] - stood[0], held[1] - stood[1]) < 0.5, (held, stood)
    snap(page, "cc-demo-1-dragged")
    page.click("#resolve:not([disabled])")
    _wait_game(page, "g.log.some(e => e.detail && e.detail.act === 'move')")

    # The move, read from the path the camera followed since the activation began.
    last = page.evaluate("window.companion.game.last_outcome")
    out = last["event"]["outcome"]
    assert last["event"]["detail"]["vehicle"] == up and len(last["event"]["detail"]["path"]) >= 2
    assert out["result"] == "moved", out
    assert out["move"]["distance_in"] == pytest.approx(4.0, abs=0.1), out["move"]
    assert out["move"]["turns"] == 0 and out["move"]["min_in"] == 3 and out["move"]["max_in"] == 6
    assert out["move"]["minimum"]["outcome"] == "in" and out["move"]["maximum"]["outcome"] == "in"
    assert last["event"]["dice"] == []                     # within the band: no brake roll
    pose = page.evaluate(f"window.companion.game.game.state.vehicles['{up}'].pose")
    assert math.hypot(pose[0] - to[0], pose[1] - to[1]) < ARRIVE_MM + 0.5, (pose, to)
    snap(page, "cc-demo-2-moved", panel_top=True)

    # The turn ends with the Round tab's button: the Buggy (Player 2) is up next.
    page.click('#tabs button[data-tab="round"]')
    page.wait_for_selector("#end-turn:has-text('End this turn')", timeout=30000)
    page.click("#end-turn")
    _wait_game(page, f"g.game.active === null && g.game.state.activated.includes({up})")
    game = page.evaluate("window.companion.game")
    assert game["game"]["state"]["activated"] == [up]
    assert game["game"]["up"] == "Player 2" and game["held"] == [], game["game"]["turn_text"]
    assert "the Buggy (Player 2) activates next" in game["game"]["turn_text"]
    assert errors == [], errors
    page.close()

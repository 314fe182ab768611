"""Wasteland Rally's first activation played on the demo page in a real Chromium, as players
play it: the round is started from the Round tab (its play-order slots left empty, as Open
Fire has no play orders; the initiative roll-off's d12s typed in), a car of the winner's is
selected, its Move form opened, the car dragged straight ahead on the board, the move read
from the camera's path and resolved; then the Round tab's button ends the activation and the
other player chooses a car (docs/actions/wasteland-rally.md, "The round, an activation,
and where a car stood")."""

from __future__ import annotations

import math

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import ARRIVE_DEG, ARRIVE_MM, drag_car_to, open_demo, tracked

pytestmark = pytest.mark.browser

MM_PER_IN = 25.4
#: How far the first car drives: 4 in, well within a Car's 10 in move (RULEBOOK "Vehicle Types").
DRIVE_MM = 4 * MM_PER_IN
WAIT_MS = 30000


@pytest.fixture
def wr_server():
    """A playable demo of Wasteland Rally of its own: its cars on the starting grid behind
    the start/finish gate, where the game begins."""
    yield from _demo("--rules", "wasteland_rally", scripted=False)


def _game(page) -> dict:
    return page.evaluate("window.companion.game.game")


def _select(page, car: int) -> None:
    """Tap a car on the board and wait for its card (or for the error the Car tab shows instead)."""
    page.click(f'#cars [data-car-id="{car}"]')
    page.wait_for_selector(f'#car-sheet[data-car="{car}"], #car-card .error', timeout=WAIT_MS)
    # A card the page cannot draw is shown as an error in its place (no page error is thrown).
    assert page.query_selector("#car-card .error") is None, page.inner_text("#car-card")


def test_wasteland_rally_first_activation_is_played_by_dragging_the_first_car(wr_server, browser):
    page, errors = open_demo(browser, wr_server)
    page.wait_for_function("window.companion.game.game && window.companion.game.game.rules.name === 'wasteland_rally'",
                           timeout=WAIT_MS)
    g = _game(page)
    assert g["round"] == 0 and g["turn_text"] == "before the first round: start a round (the initiative roll-off)"

    # Start round 1 from the Round tab: the play-order slots as the form offers them (empty:
    # cars chosen at the table), then the initiative roll-off, a d12 each typed in on the page.
    page.click('#tabs [data-tab="round"]')
    page.wait_for_selector("#start-round:not([disabled])", timeout=WAIT_MS)
    assert page.inner_text("#start-round") == "Start round 1"
    page.click("#start-round")
    faces = {"Player 1": "9", "Player 2": "3"}          # no tie: Player 1 goes first
    for _ in faces:
        page.wait_for_selector("#dice:not([hidden])", timeout=WAIT_MS)
        page.wait_for_function("window.companion.game.pending && window.companion.game.pending.purpose === "
                               "'initiative roll-off'", timeout=WAIT_MS)
        asked = page.inner_text("#dice-asked")
        who = page.evaluate("window.companion.game.pending.who")
        assert asked.startswith(f"1d12 initiative roll-off for {who}"), asked
        page.fill("#dice-inputs input", faces[who])
        page.click("#dice-use")
        page.wait_for_function(f"!window.companion.game.pending || window.companion.game.pending.asked !== {asked!r}",
                               timeout=WAIT_MS)
    page.wait_for_function("!window.companion.game.pending && window.companion.game.game.up === 'Player 1'",
                           timeout=WAIT_MS)
    g = _game(page)
    assert g["round"] == 1 and g["active"] is None, g["turn_text"]
    assert g["turn_text"] == "round 1: Player 1 activates a car (Interceptor, War Rig, Hearse), or passes"
    # Open Fire has no play orders: the form's slots start empty, so no order was sent, and
    # each player chooses a car when their turn comes.
    assert g["order"] == [], g["order"]
    first = 10                                          # Player 1 chooses the Interceptor
    stood = g["state"]["vehicles"][str(first)]["stood"]

    # The Interceptor's card offers what it may do now; its Move form is opened.
    _select(page, first)
    page.wait_for_selector('button[data-act="move"]:not([disabled])', timeout=WAIT_MS)
    offered = page.eval_on_selector_all("#car-actions button[data-act]", "bs => bs.map(b => b.dataset.act)")
    assert offered == ["hold", "move", "attack"], offered
    page.click('button[data-act="move"]')
    page.wait_for_selector("#action-form #conditions", timeout=WAIT_MS)

    # Driven 4 in straight ahead by a drag on the board; the camera follows the car there.
    start = tracked(page, first)
    assert math.hypot(start["x_mm"] - stood[0], start["y_mm"] - stood[1]) < ARRIVE_MM + 0.5, (start, stood)
    a = math.radians(start["heading_deg"])
    to = (start["x_mm"] + DRIVE_MM * math.cos(a), start["y_mm"] + DRIVE_MM * math.sin(a))
    seen = drag_car_to(page, first, *to, timeout_ms=WAIT_MS)
    assert math.hypot(seen["x_mm"] - to[0], seen["y_mm"] - to[1]) <= ARRIVE_MM
    # The form stayed open; its preview (the move played on a copy with the camera's path) holds.
    page.wait_for_selector("#action-form #conditions.holds", timeout=WAIT_MS)
    assert "It needs no dice" in page.inner_text("#preview")
    page.wait_for_selector("#resolve:not([disabled])", timeout=WAIT_MS)
    page.click("#resolve")

    # Resolved from the camera's path: no dice asked (no car, terrain or wreckage on the way).
    page.wait_for_function("window.companion.game.log.some(e => e.detail && e.detail.act === 'move')",
                           timeout=WAIT_MS)
    entry = page.evaluate("window.companion.game.log.find(e => e.detail && e.detail.act === 'move')")
    out = entry["outcome"]
    assert out["result"] == "moved", out
    assert out["move"]["distance_mm"] == pytest.approx(DRIVE_MM, abs=3), out["move"]
    assert out["move"]["manoeuvres"] == 0, out["move"]
    assert any("crosses gate 1 of 5 (Start/finish)" in e for e in out["events"]), out["events"]
    assert page.evaluate("window.companion.game.pending") is None
    page.wait_for_selector("#outcome:not([hidden])", timeout=WAIT_MS)
    assert "MOVE: moved" in page.inner_text("#outcome")
    g = _game(page)
    assert g["active"] == first and g["up"] == "Player 1"
    assert g["turn_text"] == "round 1: the Interceptor's activation (Player 1)"
    # The game's record of the car: it stands, and now stood, where the drag put it.
    car = g["state"]["vehicles"][str(first)]
    for pose in (car["pose"], car["stood"]):
        assert math.hypot(pose[0] - to[0], pose[1] - to[1]) < ARRIVE_MM + 0.5, (pose, to)
        assert abs((pose[2] - start["heading_deg"] + 180) % 360 - 180) < ARRIVE_DEG + 0.5, (pose, start)
    assert car["progress"] == 1                         # the start/finish gate, gate 1 of 5
    snap(page, "demo-wr-1-first-move", panel_top=True)

    # The Round tab's button ends the Interceptor's activation: Player 2's first car is up.
    page.click('#tabs [data-tab="round"]')
    page.wait_for_selector("#end-turn", state="visible", timeout=WAIT_MS)
    assert page.inner_text("#end-turn") == "End this turn"
    page.click("#end-turn")
    page.wait_for_function("window.companion.game.game.up === 'Player 2' && window.companion.game.game.active === null",
                           timeout=WAIT_MS)
    g = _game(page)
    assert g["state"]["activated"] == [first], g["state"]["activated"]
    assert g["turn_text"] == "round 1: Player 2 activates a car (Rust Bucket, Buggy), or passes"
    page.wait_for_function("document.getElementById('turn').textContent.includes('Player 2 activates a car')",
                           timeout=WAIT_MS)
    up_next = 11                                        # Player 2 chooses the Rust Bucket
    _select(page, up_next)
    page.wait_for_selector('button[data-act="move"]:not([disabled])', timeout=WAIT_MS)
    # The Interceptor has had its activation: its card offers nothing more this round.
    _select(page, first)
    page.wait_for_function("!document.querySelector('#car-actions button[data-act]')", timeout=WAIT_MS)
    assert page.evaluate("window.companion.demo.errors") == 0
    assert errors == [], errors
    page.close()

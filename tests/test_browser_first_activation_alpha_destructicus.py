"""Alpha Destructicus's first activation played on the playable demo page, as players would:
the round starts from the Round tab and the players say whose chip came out of the bag; the drawn
player's freak repairs his truck's engine (every engine starts broken), then drives it by a
drag on the board, the drive read from the camera's path; his turn ends and the next chip is
drawn (docs/actions/alpha-destructicus.md, "The Turn"; alpha-destructicus.txt, "The Turn",
"Vehicle Components", "Vehicles")."""

from __future__ import annotations

import math

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import ARRIVE_MM, drag_car_to, open_demo, tracked

pytestmark = pytest.mark.browser

#: Generous: the machine is small and other tests run beside this one.
WAIT_MS = 30000

#: The War Rig (marker 12, the sample Sarge): Player 1's truck, driven by Freak 1.2, standing on the
#: arena's far end facing +y with nothing ahead of it for well over 6 in.
CAR, FREAK, PLAYER = 12, "Freak 1.2", "Player 1"
#: How far it drives: more than 6 in (Speed Freak), well within its 12 in.
DRIVE_MM = 160.0


@pytest.fixture
def ad_server():
    """A demo of its own: Alpha Destructicus's game, its cars where that game begins."""
    yield from _demo("--rules", "alpha_destructicus", scripted=False)


def _game(page, expr: str):
    return page.evaluate(f"window.companion.game.game.state.{expr}")


def _type_die(page, face: str, asked_has: str) -> str:
    """Answer the dice box's request (which must mention `asked_has`) with a typed face; wait
    until the page no longer asks it."""
    page.wait_for_selector("#dice:not([hidden])", timeout=WAIT_MS)
    asked = page.inner_text("#dice-asked")
    assert asked_has in asked, asked
    page.fill("#dice-inputs input", face)
    page.click("#dice-use")
    page.wait_for_function("([asked]) => !window.companion.game.pending || "
                           "window.companion.game.pending.asked !== asked", arg=[asked], timeout=WAIT_MS)
    return asked


def _draw_chip(page, player: str, asked_has: str) -> None:
    """Say whose chip came out of the bag (a blind pick by hand, asked as a choice); the header
    says a chip is being drawn meanwhile."""
    page.wait_for_selector("#choice:not([hidden])", timeout=WAIT_MS)
    asked = page.inner_text("#choice-asked")
    assert "whose chip came out of the bag" in asked and asked_has in asked, asked
    assert "draw a chip from the bag" in page.inner_text("#turn"), page.inner_text("#turn")
    page.click(f'#choice-options button[data-choice="{player}"]')
    page.wait_for_function("() => !window.companion.game.pending", timeout=WAIT_MS)


def _open_action(page, car: int, act: str) -> None:
    """Select the car (its card) and open one of its actions' forms."""
    page.click('#tabs [data-tab="car"]')
    if page.evaluate("window.companion.selected") != car:
        page.click(f'#cars [data-car-id="{car}"]')
    page.wait_for_selector(f'#car-sheet[data-car="{car}"]', timeout=WAIT_MS)
    page.wait_for_selector(f'button[data-act="{act}"]:not([disabled])', timeout=WAIT_MS)
    page.click(f'button[data-act="{act}"]')
    page.wait_for_selector("#conditions", timeout=WAIT_MS)


def test_a_first_alpha_destructicus_activation_is_played_by_dragging_the_car(ad_server, browser):
    page, errors = open_demo(browser, ad_server)
    assert page.evaluate("window.companion.game.game.rules.name") == "alpha_destructicus"
    assert _game(page, "round") == 0
    assert _game(page, f"vehicles['{CAR}'].components[0]") == {"kind": "engine", "name": "engine",
                                                               "status": "damaged"}

    # The round starts from the Round tab: a chip for every freak goes in the bag, one is drawn
    # by hand and the page asks whose it is (Player 1's).
    page.click('#tabs [data-tab="round"]')
    page.wait_for_selector("#start-round:not([disabled])", timeout=WAIT_MS)
    page.click("#start-round")
    _draw_chip(page, PLAYER, "6 chips in it")
    page.wait_for_function(f"window.companion.game.game.state.chip === {PLAYER!r}", timeout=WAIT_MS)
    assert "Player 1's chip is drawn" in page.inner_text("#turn")

    # His truck's engine is broken: no drive on its card yet. He repairs it (a skill roll, 3 or
    # better): that first action puts the chip on him.
    _open_action(page, CAR, "repair")
    assert page.locator('button[data-act="drive"]').count() == 0
    assert page.input_value('#action-form select[name="freak"]') == FREAK
    assert page.input_value('#action-form select[name="component"]') == "engine"
    page.wait_for_selector("#conditions.holds", timeout=WAIT_MS)
    assert "It needs 1d6" in page.inner_text("#conditions"), page.inner_text("#conditions")
    page.click("#resolve")
    _type_die(page, "5", "repair the War Rig's engine")
    page.wait_for_function(f"window.companion.game.game.state.vehicles['{CAR}'].components[0].status "
                           "=== 'working'", timeout=WAIT_MS)
    assert _game(page, "acting") == FREAK
    assert page.evaluate("window.companion.game.game.active") == CAR

    # Now he drives: the Drive form open, the truck dragged straight ahead on the board. The
    # form judges the way the camera saw it go since his activation began.
    _open_action(page, CAR, "drive")
    start = tracked(page, CAR)
    a = math.radians(start["heading_deg"])
    to = (start["x_mm"] + DRIVE_MM * math.cos(a), start["y_mm"] + DRIVE_MM * math.sin(a))
    drag_car_to(page, CAR, *to)
    page.wait_for_selector("#conditions.holds", timeout=WAIT_MS)
    snap(page, "ad-1-first-drive-dragged")
    page.click("#resolve")
    page.wait_for_function("window.companion.game.log.some(e => e.detail && e.detail.act === 'drive')",
                           timeout=WAIT_MS)
    drive = page.evaluate("window.companion.game.log.find(e => e.detail && e.detail.act === 'drive')")
    assert drive["outcome"]["result"] == "moved", drive["outcome"]
    # Its path is the camera's: many poses along the way, not just the two ends.
    assert len(drive["detail"]["path"]) >= 5, drive["detail"]["path"]
    assert drive["outcome"]["moved_in"] == pytest.approx(DRIVE_MM / 25.4, abs=0.15), drive["outcome"]
    assert drive["outcome"]["turning_in"] == 0.0
    pose = _game(page, f"vehicles['{CAR}'].pose")
    assert math.hypot(pose[0] - to[0], pose[1] - to[1]) < ARRIVE_MM + 0.5, (pose, to)
    moved = _game(page, "activation")
    assert moved["moved_in"] == pytest.approx(DRIVE_MM / 25.4, abs=0.15), moved
    snap(page, "ad-2-first-drive-resolved", panel_top=True)

    # His move ends from the Round tab (he drove over 6 in: no Speed Freak reminder); the next
    # chip is drawn from the five left (Player 2's).
    page.click('#tabs [data-tab="round"]')
    page.wait_for_selector("#end-turn:not([disabled])", timeout=WAIT_MS)
    assert page.inner_text("#end-turn") == "End this turn"
    page.click("#end-turn")
    _draw_chip(page, "Player 2", "5 chips in it")
    page.wait_for_function("window.companion.game.game.state.chip === 'Player 2'", timeout=WAIT_MS)
    assert _game(page, f"freaks['{FREAK}'].moved") is True
    assert _game(page, "acting") is None
    ended = page.evaluate("window.companion.game.log.filter(e => e.kind === 'end_turn').pop()")
    assert not any("Speed Freak" in e for e in ended["outcome"]["events"]), ended["outcome"]
    # The truck stays where it was driven.
    pose = _game(page, f"vehicles['{CAR}'].pose")
    assert math.hypot(pose[0] - to[0], pose[1] - to[1]) < ARRIVE_MM + 0.5, (pose, to)
    assert errors == [], errors
    page.close()

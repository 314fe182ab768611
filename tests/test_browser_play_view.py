"""The page as players use it (issue 19), in a real Chromium on the playable demo table: the
acting car's halo and the ghost where its turn began; the live ruler while the car is dragged
(how far, how much to spare, legal here or what would make it so), before anything is
committed; actions that cannot be taken now, greyed with the reason beside them; the result
card's one headline with the details folded below (each die once); the table-side view in
large type, with its beep when dice are wanted.

`play_round(page, first)` starts round 1 with typed initiative dice, so the tests know which
car acts: Max's first car (the Interceptor) when Max rolls higher."""

from __future__ import annotations

import math
import re

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import (demo_move, drag_car_to, open_action, open_demo, tracked, turn_car_to,
                                     wait_until_seen_at)

pytestmark = pytest.mark.browser

INTERCEPTOR, RUST_BUCKET, WAR_RIG = 10, 11, 12


@pytest.fixture(scope="module")
def server():
    yield from _demo(scripted=False)


def new_game(page) -> None:
    """A fresh Shattered Highways game on the demo's starter rosters (the cars stay put)."""
    page.evaluate("""async () => {
        const rosters = await (await fetch('api/rosters/starter?rules=shattered_highways')).json();
        const r = await fetch('api/game', { method: 'POST', body: JSON.stringify({ rules: 'shattered_highways', rosters }),
          headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': window.companion.csrf } });
        if (!r.ok) throw new Error(await r.text()); }""")
    page.wait_for_function("window.companion.game.game && window.companion.game.game.round === 0 "
                           "&& !window.companion.game.pending", timeout=10000)


def type_dice(page, face: int) -> None:
    page.wait_for_selector("#dice:not([hidden])")
    asked = page.inner_text("#dice-asked")
    page.fill("#dice-inputs input", str(face))
    page.click("#dice-use")
    page.wait_for_function("([a]) => document.getElementById('dice').hidden || "
                           "document.getElementById('dice-asked').textContent !== a", arg=[asked])


def play_round(page, max_first: bool = True) -> int:
    """Round 1 with typed initiative (Max 6 and Furiosa 1, or the other way); the acting car."""
    page.click('#tabs [data-tab="round"]')
    page.click("#start-round")
    for _ in range(2):
        page.wait_for_selector("#dice:not([hidden])")
        who = page.inner_text("#dice-asked")
        type_dice(page, 6 if ("Max" in who) == max_first else 1)
    page.wait_for_function("window.companion.game.game.active !== null && !window.companion.game.pending")
    return page.evaluate("window.companion.game.game.active")


def ghost_translate(page, car: int) -> tuple[float, float]:
    t = page.get_attribute(f'#ghosts [data-ghost-for="{car}"]', "transform")
    x, y = re.match(r"translate\(([-\d.]+) ([-\d.]+)\)", t).groups()
    return float(x), float(y)


def test_the_acting_car_is_ringed_and_its_ghost_and_ruler_follow_a_drag(server, browser):
    page, errors = open_demo(browser, server)
    new_game(page)
    acting = play_round(page, max_first=True)
    assert acting == INTERCEPTOR
    # The halo is on the acting car only.
    page.wait_for_selector(f'#cars [data-car-id="{acting}"].acting .halo', state="visible")
    assert page.locator("#cars .car.acting").count() == 1
    # Its ghost stands where its turn began (the activation's start), drawn before it moves.
    start = page.evaluate(f"window.companion.game.activation.start['{acting}']")
    depth = float(page.get_attribute("#board", "data-depth-mm"))
    page.wait_for_selector(f'#ghosts [data-ghost-for="{acting}"]')
    gx, gy = ghost_translate(page, acting)
    assert gx == pytest.approx(start[0], abs=0.01) and gy == pytest.approx(depth - start[1], abs=0.01)
    page.click(f'#cars [data-car-id="{acting}"]')
    page.wait_for_selector('#car-sheet[data-car="10"]')
    page.wait_for_function("document.getElementById('ruler-text').textContent.includes('not moved yet')")

    # Forwards a little, inside the 9 in template: it may stop here, with room to spare.
    drag_car_to(page, acting, start[0] + 70.0, start[1] + 10.0, None)
    page.wait_for_function("document.getElementById('ruler-text').textContent.includes('may stop here')", timeout=10000)
    near = page.inner_text("#ruler-text")
    m = re.search(r"moved (\d+\.\d\d) in", near)
    assert m and float(m.group(1)) == pytest.approx(70.7 / 25.4, abs=0.1), near
    assert re.search(r"(\d+\.\d\d) in to spare", near), near
    assert "legal" in page.get_attribute("#ruler-text", "class")
    # The ghost has not moved with the car; the ruler's line runs from it to the car.
    assert ghost_translate(page, acting) == (gx, gy)
    assert page.locator("#move-ruler line.move-line").count() == 1
    snap(page, "play-ruler-legal")

    # Far beyond the template: not legal here, and what would make it so, while it is dragged.
    drag_car_to(page, acting, start[0] + 420.0, start[1] + 10.0, None)
    page.wait_for_function("document.getElementById('ruler-text').textContent.includes('not legal here')", timeout=10000)
    far = page.inner_text("#ruler-text")
    assert far != near
    fix = re.search(r"bring its front bumper (\d+\.\d\d) in back into the template", far)
    assert fix, far
    # The bumper is about 420 - 9 in (228.6 mm) beyond where the template ends.
    assert 4.0 < float(fix.group(1)) < 9.0, far
    assert "illegal" in page.get_attribute("#ruler-text", "class")
    snap(page, "play-ruler-illegal")

    # Turned off the pack's heading: which way to turn back, and by how much.
    drag_car_to(page, acting, start[0] + 60.0, start[1], None)
    turn_car_to(page, acting, 20.0)
    # As it turns the ruler says so (a few degrees off: "turn it 1° right"); once it stands at 20:
    page.wait_for_function("document.getElementById('ruler-text').textContent.includes('turn it')", timeout=30000)
    wait_until_seen_at(page, acting, start[0] + 60.0, start[1], 20.0)
    page.wait_for_function("/turn it 1[3-7]° right/.test(document.getElementById('ruler-text').textContent)", timeout=10000)
    turned = page.inner_text("#ruler-text")
    t = re.search(r"turn it (\d+)° right", turned)
    assert t and 13 <= int(t.group(1)) <= 17, turned          # 20 degrees, 5 allowed
    # A still car asks the rules nothing more.
    page.wait_for_function("window.companion.ruler.previews > 0")
    page.wait_for_timeout(600)
    asked = page.evaluate("window.companion.ruler.previews")
    page.wait_for_timeout(1500)
    assert page.evaluate("window.companion.ruler.previews") == asked
    # Nothing was committed by any of it.
    assert page.evaluate("window.companion.game.log.filter(e => e.kind === 'action').length") == 0
    # Put back where the turn began, for the tests after this one.
    drag_car_to(page, acting, start[0], start[1], start[2])
    assert errors == [], errors
    page.close()


def test_actions_that_cannot_be_taken_now_are_greyed_with_the_reason_beside_them(server, browser):
    page, errors = open_demo(browser, server)
    new_game(page)
    acting = play_round(page, max_first=True)
    # Furiosa's Rust Bucket while the Interceptor acts: every action refused, and why, before choosing.
    page.click(f'#cars [data-car-id="{RUST_BUCKET}"]')
    page.wait_for_selector('#car-sheet[data-car="11"]')
    page.wait_for_selector("#actions-why", state="visible", timeout=10000)
    why = page.inner_text("#actions-why")
    assert "Interceptor's turn" in why, why
    buttons = page.locator("#car-actions button[data-act]")
    assert buttons.count() >= 5
    assert all(buttons.nth(i).is_disabled() for i in range(buttons.count()))
    # The reason sits beside the buttons, in view with them.
    box, btn = page.locator("#actions-why").bounding_box(), buttons.first.bounding_box()
    assert abs(box["y"] - btn["y"]) < 200
    snap(page, "play-refused-actions")
    # The acting car: Move is offered; an action no choice of it allows is greyed with its own reason.
    page.click(f'#cars [data-car-id="{acting}"]')
    page.wait_for_selector('#car-sheet[data-car="10"]')
    page.wait_for_function("document.querySelectorAll('#car-actions .action-row').length >= 5 && "
                           "!document.getElementById('actions-why')")
    assert page.locator('#car-actions button[data-act="move"]').is_enabled()
    # Ram: no car lies where the Interceptor stands against it yet. A move the rules read from
    # the table keeps its button (drive it into contact, then ram), with the rules' own reason.
    page.wait_for_selector('#why-ram', timeout=20000)
    assert page.locator('#car-actions button[data-act="ram"]').is_enabled()
    assert page.inner_text("#why-ram").startswith("not yet: ") and "Interceptor" in page.inner_text("#why-ram")
    # Every row greyed says why, in more than a word; every row with no reason can be pressed.
    rows = page.locator("#car-actions .action-row")
    for i in range(rows.count()):
        row = rows.nth(i)
        if "refused" in (row.get_attribute("class") or ""):
            assert row.locator("button").is_disabled()
            assert len(row.locator(".why-not").inner_text()) > 10
        elif not row.locator(".why-not").count():
            assert row.locator("button").is_enabled()
    # While the dice are asked for, every action waits, and says so.
    open_action(page, "move")
    page.wait_for_selector("#conditions.holds")
    page.click("#resolve")
    page.wait_for_selector("#dice:not([hidden])")
    page.wait_for_function("(document.getElementById('actions-why') || {}).textContent?.startsWith('Waiting for the dice')")
    assert all(page.locator("#car-actions button[data-act]").nth(i).is_disabled()
               for i in range(page.locator("#car-actions button[data-act]").count()))
    page.click("#dice-cancel")
    page.wait_for_selector("#dice", state="hidden")
    assert errors == [], errors
    page.close()


def test_a_target_driven_into_range_turns_shoot_on_and_out_of_range_off(server, browser):
    """The reasons beside the buttons follow the cars, not only the game: a car moved into range
    turns Shoot on with no other change, and moved away greys it again with the new distance."""
    page, errors = open_demo(browser, server)
    new_game(page)
    assert play_round(page, max_first=True) == INTERCEPTOR
    version = page.evaluate("window.companion.game.version")
    rig, bucket = tracked(page, WAR_RIG), tracked(page, RUST_BUCKET)  # the War Rig: in range and arc
    page.click(f'#cars [data-car-id="{INTERCEPTOR}"]')
    page.wait_for_selector(f'#car-sheet[data-car="{INTERCEPTOR}"]')
    shoot = '#car-actions button[data-act="shoot"]'
    page.wait_for_selector(f"{shoot}:not([disabled])", timeout=20000)
    # Furiosa's two cars taken far away (about 17 in): greyed, with the reason beside it.
    demo_move(page, RUST_BUCKET, 250.0, 279.0, 0.0)
    demo_move(page, WAR_RIG, 250.0, 406.0, 0.0)
    page.wait_for_selector(f"{shoot}[disabled]", timeout=20000)
    assert "cannot shoot" in page.inner_text("#why-shoot") and "in away" in page.inner_text("#why-shoot")
    # The War Rig driven back: Shoot on, nothing else done.
    demo_move(page, WAR_RIG, rig["x_mm"], rig["y_mm"], rig["heading_deg"])
    page.wait_for_selector(f"{shoot}:not([disabled])", timeout=20000)
    # And away again: greyed once more.
    demo_move(page, WAR_RIG, 250.0, 406.0, 0.0)
    page.wait_for_selector(f"{shoot}[disabled]", timeout=20000)
    assert page.evaluate("window.companion.game.version") == version     # the game itself never changed
    # Both put back where they stood, for the tests after this one.
    demo_move(page, WAR_RIG, rig["x_mm"], rig["y_mm"], rig["heading_deg"])
    demo_move(page, RUST_BUCKET, bucket["x_mm"], bucket["y_mm"], bucket["heading_deg"])
    assert errors == [], errors
    page.close()


def test_the_result_card_leads_with_one_headline_and_lists_each_die_once(server, browser):
    page, errors = open_demo(browser, server)
    new_game(page)
    acting = play_round(page, max_first=True)
    page.click(f'#cars [data-car-id="{acting}"]')
    page.wait_for_selector('#car-sheet[data-car="10"]')
    # The War Rig is a rig: its tractor and trailer count their points apart.
    hp_of = "Object.values(window.companion.game.game.state.vehicles['12'].hp).reduce((a, b) => a + b, 0)"
    hp_before = page.evaluate(hp_of)
    open_action(page, "shoot")
    page.select_option('#action-form select[name="target"]', str(WAR_RIG))
    page.wait_for_selector("#conditions.holds", timeout=10000)
    page.click("#resolve")
    type_dice(page, 5)                      # to hit (a 6 would ask the defender a choice)
    type_dice(page, 4)                      # damage
    page.wait_for_function("window.companion.game.last_outcome.event.kind === 'action'")
    page.wait_for_selector("#outcome:not([hidden]) #outcome-headline")
    headline = page.inner_text("#outcome-headline")
    # A rig's damage is split as the book splits it: "takes 6 (3 tractor, 3 trailer)".
    took = re.fullmatch(r"HIT: the War Rig takes (\d+)(?: \(\d+ tractor, \d+ trailer\))?, tractor (\d+) of (\d+) left, "
                        r"trailer (\d+) of (\d+) left", headline)
    assert took, headline
    # The numbers are the War Rig's loss in the game (the damage die 4 and its modifiers) and
    # what its tractor and trailer have left of their points.
    hp = page.evaluate(hp_of)
    assert hp_before - hp == int(took.group(1)) >= 4 and int(took.group(2)) + int(took.group(4)) == hp
    assert int(took.group(3)) + int(took.group(5)) >= hp_before
    # The headline is the card's first line; the working is folded below it (open on a desktop).
    first = page.evaluate("document.getElementById('outcome').firstElementChild.id")
    assert first == "outcome-headline"
    details = page.inner_text("#outcome-details")
    assert "SHOOT: hit" in details and "rolled 5" in details
    # Each typed die once: two dice thrown, two lines saying so, no internal ids.
    assert details.count("(typed in)") == 2, details
    assert details.count("rolled 5") == 1 and details.count("rolled 4") == 1, details
    assert not re.search(r"\w+:\d+:\w+", details), details
    snap(page, "play-headline", panel_top=True)
    assert errors == [], errors
    page.close()


def test_the_table_side_view_in_large_type_with_a_beep_when_dice_are_wanted(server, browser):
    page, errors = open_demo(browser, server.rstrip("/") + "/?view=table")
    assert page.evaluate("document.body.classList.contains('tableside')")
    page.wait_for_selector("#tableside", state="visible")
    assert not page.is_visible("#tabs")
    # Readable from 1.5 m: the acting car's line at least 36 px, what is wanted at least 28 px.
    size = lambda sel: float(page.evaluate(f"parseFloat(getComputedStyle(document.querySelector('{sel}')).fontSize)"))
    assert size("#ts-acting") >= 36 and size("#ts-headline") >= 30 and size("#ts-wanted") >= 28
    # Sound is on by default; the page may beep only after a gesture: the first tap unlocks it.
    assert page.get_attribute("#sound-toggle", "aria-pressed") == "true"
    page.mouse.click(5, 5)
    new_game(page)
    wanted = page.evaluate("window.companion.sound.wanted")
    # Round 1 as its form would start it (each player's cars in the order offered).
    page.evaluate("""() => {
        const orders = {};
        for (const [p, own] of Object.entries(window.companion.game.game.round_orders || {})) orders[p] = own.map(c => c.value);
        return fetch('api/round', { method: 'POST', body: JSON.stringify({ orders }),
          headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': window.companion.csrf } }); }""")
    page.wait_for_function("document.getElementById('ts-wanted').textContent.startsWith('Dice, please')")
    assert "initiative" in page.inner_text("#ts-wanted")
    page.wait_for_function(f"window.companion.sound.wanted > {wanted}")
    assert page.evaluate("window.companion.sound.ctx && window.companion.sound.ctx.state") == "running"
    assert page.evaluate("window.companion.sound.beeps") >= 1
    # The dice can be typed right there, in large type.
    assert page.is_visible("#dice-inputs input")
    type_dice(page, 6)
    type_dice(page, 1)
    page.wait_for_function("document.getElementById('ts-headline').textContent.includes('goes first')")
    assert page.inner_text("#ts-acting").endswith("'s turn")
    assert page.inner_text("#ts-wanted").startswith("Move the ")
    snap(page, "play-tableside")
    # Muted: the next request is wanted but not sounded; the toggle goes back to the full page.
    page.click("#sound-toggle")
    assert page.get_attribute("#sound-toggle", "aria-pressed") == "false"
    page.click("#view-toggle")
    assert not page.evaluate("document.body.classList.contains('tableside')")
    assert "view=table" not in page.url and page.is_visible("#tabs")
    page.evaluate("localStorage.removeItem('companion.sound')")
    assert errors == [], errors
    page.close()


def test_the_action_buttons_stay_the_same_buttons_while_a_roll_is_asked_and_answered(server, browser):
    """When only the reason changes (a roll asked: every action waits; the roll cancelled: they
    are offered again), the buttons are updated where they stand, never swapped for copies: a
    press whose button is replaced between its down and its up makes no click, and a Shoot
    pressed just as the initiative's roll was cleared once opened nothing."""
    page, errors = open_demo(browser, server)
    new_game(page)
    acting = play_round(page, max_first=True)
    page.click(f'#cars [data-car-id="{acting}"]')
    page.wait_for_selector(f'#car-sheet[data-car="{acting}"]')
    page.wait_for_selector('#car-actions button[data-act="shoot"]:not([disabled])', timeout=20000)
    page.evaluate("""document.querySelector('#car-actions button[data-act="shoot"]').dataset.marked = 'yes'""")
    open_action(page, "move")
    page.wait_for_selector("#conditions.holds")
    page.click("#resolve")
    page.wait_for_selector("#dice:not([hidden])")
    page.wait_for_selector("#actions-why")
    assert page.is_disabled('#car-actions button[data-act="shoot"]')
    page.click("#dice-cancel")
    page.wait_for_selector("#dice", state="hidden")
    page.wait_for_function("!document.getElementById('actions-why')")
    page.wait_for_selector('#car-actions button[data-act="shoot"]:not([disabled])', timeout=20000)
    assert page.get_attribute('#car-actions button[data-act="shoot"]', "data-marked") == "yes"
    assert errors == [], errors
    page.close()

"""A piece the rules moved, put where they say (issue 23), in a real Chromium on the playable
demo table: the Interceptor loses control on its Move (typed dice: 1, then box 2), and the game
waits until it stands where the rules put it. The page draws its outline there (its front
marked), an arrow from where the camera sees it and a label; the headline says where and how far
to go; every other action waits and says so. Dragged there (or sent there by the demo's button)
it is ticked off, and the record keeps the camera's pose. Confirming another piece, or sending a
move while it waits, is refused with the reason and changes nothing; undone, the car is asked
back where it stood the same way. A held car the camera sees away from where the game has it is
drawn and said as a warning."""

from __future__ import annotations

import re

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import demo_move, drag_car_to, open_demo, tracked
from tests.test_browser_play_view import INTERCEPTOR, RUST_BUCKET, new_game, play_round, type_dice

pytestmark = pytest.mark.browser

WAIT_MS = 60000


@pytest.fixture(scope="module")
def server():
    yield from _demo(scripted=False)


def post(page, path: str, body: dict) -> dict:
    """The page's own POST (its session and token): {"status", "body"}."""
    return page.evaluate("""async ([path, body]) => {
        const r = await fetch('api/' + path, { method: 'POST', body: JSON.stringify(body),
          headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': window.companion.csrf } });
        return { status: r.status, body: await r.json() }; }""", [path, body])


def get_game(page) -> dict:
    return page.evaluate("async () => (await fetch('api/game')).json()")


def lose_control(page) -> dict:
    """A fresh game, round 1 with the Interceptor first; its Move resolved with a 1 (Lost Control)
    and then box 2 on the d6. The placement the game then waits for."""
    new_game(page)
    assert play_round(page, max_first=True) == INTERCEPTOR
    page.click(f'#cars [data-car-id="{INTERCEPTOR}"]')
    page.wait_for_selector(f'#car-sheet[data-car="{INTERCEPTOR}"]')
    page.click('#car-actions button[data-act="move"]:not([disabled])', timeout=WAIT_MS)
    page.wait_for_selector("#conditions.holds", timeout=WAIT_MS)
    page.click("#resolve:not([disabled])", timeout=WAIT_MS)
    page.wait_for_selector("#dice:not([hidden])", timeout=WAIT_MS)
    assert " Move for " in page.inner_text("#dice-asked")
    type_dice(page, 1)                                   # Lost Control
    page.wait_for_selector("#dice:not([hidden])", timeout=WAIT_MS)
    assert "Lost Control" in page.inner_text("#dice-asked")
    type_dice(page, 2)                                   # box 2: the box on the car's right
    page.wait_for_function("window.companion.game.pending && window.companion.game.pending.waiting === 'placement'",
                           timeout=WAIT_MS)
    return page.evaluate("window.companion.game.pending.placement")


def outline_pose(page, marker: int) -> tuple[float, float, float]:
    """The drawn outline's pose in table mm (its transform, y flipped back)."""
    t = page.get_attribute(f'#placement-layer .place-target[data-place-for="{marker}"]', "transform")
    x, y, r = (float(v) for v in re.match(r"translate\(([-\d.]+) ([-\d.]+)\) rotate\(([-\d.]+)\)", t).groups())
    depth = float(page.get_attribute("#board", "data-depth-mm"))
    return x, depth - y, -r


def test_a_placement_is_drawn_said_and_ticked_off_once_the_car_is_dragged_there(server, browser):
    page, errors = open_demo(browser, server)
    start = tracked(page, INTERCEPTOR)
    p = lose_control(page)
    # Where the rules put it: Lost Control's box 2 is the section beside the car on its right;
    # the car's centre goes to the box's far edge, 2 in to its right, facing as it faced
    # (docs/actions/shattered-highways.md, "Lost Control"; examples/scenarios/04-lost-control.json).
    assert p["marker"] == INTERCEPTOR and p["name"] == "Interceptor"
    assert p["to"][0] == pytest.approx(start["x_mm"], abs=1.0)
    assert p["to"][1] == pytest.approx(start["y_mm"] - 50.8, abs=1.0)
    assert abs(p["to"][2] - start["heading_deg"]) < 1.0
    assert p["may_stay"] is False

    # Drawn there: the car's footprint, its front marked, an arrow from where the camera sees it.
    page.wait_for_selector(f'#placement-layer .place-target[data-place-for="{INTERCEPTOR}"]')
    x, y, h = outline_pose(page, INTERCEPTOR)
    assert (x, y) == (pytest.approx(p["to"][0], abs=0.01), pytest.approx(p["to"][1], abs=0.01))
    assert h == pytest.approx(p["to"][2], abs=0.01)
    rect = page.locator(f'#placement-layer [data-place-for="{INTERCEPTOR}"] .place-outline')
    assert float(rect.get_attribute("width")) == pytest.approx(start["length_mm"])
    assert float(rect.get_attribute("height")) == pytest.approx(start["width_mm"])
    assert page.locator(f'#placement-layer [data-place-for="{INTERCEPTOR}"] .place-nose').count() == 1
    arrow = page.locator(f'#placement-layer .place-arrow[data-arrow-for="{INTERCEPTOR}"]')
    assert float(arrow.get_attribute("x1")) == pytest.approx(start["x_mm"], abs=1.0)
    assert float(arrow.get_attribute("x2")) == pytest.approx(p["to"][0], abs=0.01)
    label = page.text_content(f'#placement-layer [data-label-for-place="{INTERCEPTOR}"]')
    assert label == "Put the Interceptor here"

    # Said in the headline, with how far it has to go; the rules' reason in players' words.
    headline = page.inner_text("#placement-asked")
    assert headline.startswith("Put the Interceptor here: ") and p["why"] in headline, headline
    # In the page's units (inches unless set to mm), to a tenth: what a hand needs.
    togo = re.fullmatch(r"([\d.]+) in and (\d+)° to go", page.inner_text("#placement-togo"))
    assert togo and float(togo.group(1)) == pytest.approx(2.0, abs=0.1) and int(togo.group(2)) <= 1
    assert headline in page.inner_text("#ruler-text")
    assert page.is_visible("#placement-demo")               # the demo's own button
    assert not page.is_visible("#placement-stay")           # the book does not let it stay
    # Every other action waits for it, and says so.
    page.wait_for_function("(document.getElementById('actions-why') || {}).textContent?.startsWith("
                           "'Waiting for the Interceptor to be put in place first')", timeout=WAIT_MS)
    assert page.locator("#car-actions button[data-act]:not([disabled])").count() == 0
    # In view on the desktop however the panel is scrolled.
    page.evaluate("document.getElementById('panel').scrollTop = 1e6")
    box = page.locator("#placement").bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= 900
    snap(page, "placement-waiting")

    # Put there by hand (dragged): taken by itself, ticked off.
    version = page.evaluate("window.companion.game.version")
    drag_car_to(page, INTERCEPTOR, p["to"][0], p["to"][1], None)
    page.wait_for_function("!window.companion.game.pending", timeout=WAIT_MS)
    page.wait_for_function("window.companion.placed.length === 1", timeout=WAIT_MS)
    assert page.evaluate("window.companion.placed[0].marker") == INTERCEPTOR
    assert page.text_content("#placed-note").startswith("✓ The Interceptor is in place")
    assert page.locator("#placement-layer .place-target").count() == 0
    assert page.is_hidden("#placement")
    assert page.evaluate("window.companion.game.version") > version
    snap(page, "placement-ticked")

    # The record keeps the camera's pose: nothing waits, and the game has the car where the
    # camera sees it, within the camera's doubt.
    game = get_game(page)
    assert game["pending"] is None
    pose = game["game"]["state"]["vehicles"][str(INTERCEPTOR)]["pose"]
    seen = tracked(page, INTERCEPTOR)
    doubt_mm = max(0.5, 3 * seen["sigma_mm"])
    doubt_deg = max(0.5, 3 * seen["sigma_deg"])
    assert abs(pose[0] - seen["x_mm"]) <= doubt_mm and abs(pose[1] - seen["y_mm"]) <= doubt_mm, (pose, seen)
    assert abs(pose[2] - seen["heading_deg"]) <= doubt_deg, (pose, seen)
    assert abs(pose[0] - p["to"][0]) <= p["tolerance_mm"] and abs(pose[1] - p["to"][1]) <= p["tolerance_mm"]
    event = next(e for e in game["log"] if e["kind"] == "action")
    assert [q["marker"] for q in event["placements"]] == [INTERCEPTOR]
    assert event["placements"][0]["how"] == "camera"
    assert errors == [], errors
    page.close()


def test_the_wrong_piece_or_a_move_while_a_placement_waits_is_refused_and_changes_nothing(server, browser):
    page, errors = open_demo(browser, server)
    start = tracked(page, INTERCEPTOR)
    p = lose_control(page)
    before = get_game(page)
    # Another piece confirmed: refused, naming the piece the game waits for.
    r = post(page, "place", {"marker": RUST_BUCKET, "stay": False})
    assert r["status"] == 409, r
    assert "Interceptor" in r["body"]["error"] and "Rust Bucket" in r["body"]["error"], r
    # The right piece before it is there: refused, saying how far it still is.
    r = post(page, "place", {"marker": INTERCEPTOR, "stay": False})
    assert r["status"] == 409 and re.search(r"stands \d+ mm", r["body"]["error"]), r
    # Left where it stands, where the book does not allow it: refused.
    r = post(page, "place", {"marker": INTERCEPTOR, "stay": True})
    assert r["status"] == 409 and "stay" in r["body"]["error"], r
    # A move sent meanwhile: refused, with what the game waits for.
    r = post(page, "act", {"act": "move", "vehicle": INTERCEPTOR})
    assert r["status"] == 409 and r["body"]["error"].startswith("cannot act now") and "Interceptor" in r["body"]["error"], r
    after = get_game(page)
    assert after["version"] == before["version"]
    assert after["pending"]["placement"]["to"] == p["to"]
    assert after["game"]["state"] == before["game"]["state"]
    assert len(after["log"]) == len(before["log"])

    # The demo's own button sends it there; the camera sees it arrive and the game takes it.
    page.click("#placement-demo")
    page.wait_for_function("!window.companion.game.pending", timeout=WAIT_MS)
    page.wait_for_function("window.companion.placed.length === 1", timeout=WAIT_MS)
    assert page.text_content("#placed-note").startswith("✓ The Interceptor is in place")
    # The move's outcome: lost control, and the Interceptor's turn goes on.
    game = get_game(page)
    event = next(e for e in game["log"] if e["kind"] == "action")
    assert event["outcome"]["result"] == "lost control"
    assert page.locator("#car-actions button[data-act]:not([disabled])").count() >= 1

    # Undone: the Interceptor goes back where it stood, asked the same way (nothing to call off).
    page.click("#undo")
    page.wait_for_function("window.companion.game.pending && window.companion.game.pending.placement "
                           "&& window.companion.game.pending.placement.put_back", timeout=WAIT_MS)
    back = page.evaluate("window.companion.game.pending.placement")
    assert back["marker"] == INTERCEPTOR
    assert back["to"][0] == pytest.approx(start["x_mm"], abs=1.0) and back["to"][1] == pytest.approx(start["y_mm"], abs=1.0)
    page.wait_for_function("document.getElementById('placement-asked').textContent.startsWith('Put the Interceptor back ')")
    assert page.text_content(f'#placement-layer [data-label-for-place="{INTERCEPTOR}"]') == "Put the Interceptor back here"
    assert page.is_hidden("#placement-cancel")
    page.click("#placement-demo")
    page.wait_for_function("window.companion.placed.length === 2 && !window.companion.game.pending", timeout=WAIT_MS)
    assert page.text_content("#placed-note").startswith("✓ The Interceptor is in place")
    assert errors == [], errors
    page.close()


def test_a_held_car_away_from_where_the_game_has_it_is_drawn_and_said(server, browser):
    page, errors = open_demo(browser, server)
    new_game(page)
    bucket = tracked(page, RUST_BUCKET)
    # Held (the game keeps its pose), then moved on the table: the game and the table disagree.
    assert post(page, "hold", {"vehicle": RUST_BUCKET, "held": True})["status"] == 200
    page.wait_for_function(f"window.companion.game.held.includes({RUST_BUCKET})", timeout=WAIT_MS)
    demo_move(page, RUST_BUCKET, bucket["x_mm"] - 40.0, bucket["y_mm"], bucket["heading_deg"])
    page.wait_for_selector(f'#out-of-place [data-away="{RUST_BUCKET}"]', timeout=WAIT_MS)
    line = page.inner_text(f'#out-of-place [data-away="{RUST_BUCKET}"] .away-text')
    m = re.fullmatch(r"⚠ The Rust Bucket stands ([\d.]+) in from where the game has it", line)
    assert m and float(m.group(1)) == pytest.approx(40 / 25.4, abs=0.1), line
    x, y, _ = outline_pose(page, RUST_BUCKET)
    assert x == pytest.approx(bucket["x_mm"], abs=1.0) and y == pytest.approx(bucket["y_mm"], abs=1.0)
    assert "away" in page.get_attribute(f'#placement-layer [data-place-for="{RUST_BUCKET}"]', "class")
    snap(page, "placement-out-of-place")
    # Put back (the demo's button): the warning goes.
    page.click(f'#out-of-place [data-away-back="{RUST_BUCKET}"]')
    page.wait_for_selector("#out-of-place", state="hidden", timeout=WAIT_MS)
    # The table's notes are their own list under their own heading, not the log's oldest lines.
    page.click('[data-tab="round"]')
    page.wait_for_selector("#notes-head", state="visible", timeout=WAIT_MS)
    assert page.text_content("#notes-head") == "Notes from the table (newest first)"
    assert page.locator("#notes li").count() >= 1
    page.click('[data-tab="car"]')
    assert post(page, "hold", {"vehicle": RUST_BUCKET, "held": False})["status"] == 200
    assert errors == [], errors
    page.close()

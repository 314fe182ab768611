"""The page on a phone held in portrait (390 x 844 CSS px, as an iPhone 12-15 shows it), in a
real Chromium on the playable demo table (issue 19): car and terrain labels readable on the
board (at least 11 px high on the screen however small the table is drawn), every control a
44 px tap target (cars too), the dice request in view wherever the page is scrolled, the last
outcome folded so the car's card follows it closely, the rule-system menu inside the screen,
and the live ruler and refused actions as on the desktop."""

from __future__ import annotations

import time

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import open_demo
from tests.test_browser_play_view import INTERCEPTOR, new_game, play_round, type_dice

pytestmark = pytest.mark.browser

PHONE = {"viewport": {"width": 390, "height": 844}, "device_scale_factor": 2, "has_touch": True}
TAP_PX = 44
LABEL_PX = 11


@pytest.fixture(scope="module")
def server():
    yield from _demo(scripted=False)


def in_view(page, selector: str) -> bool:
    box = page.locator(selector).bounding_box()
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 844 and box["x"] >= 0 \
        and box["x"] + box["width"] <= 390


def small_targets(page) -> list[str]:
    """Every visible button, menu and link the player taps, smaller than 44 x 44 px."""
    return page.evaluate("""(min) => [...document.querySelectorAll('button, select, a, summary, input')]
        .filter((e) => e.offsetParent !== null && getComputedStyle(e).visibility !== 'hidden')
        .map((e) => [e.id || e.dataset.act || e.textContent.trim().slice(0, 20) || e.tagName, e.getBoundingClientRect()])
        .filter(([, r]) => r.width > 0 && (r.height < min || r.width < min))
        .map(([n, r]) => `${n}: ${r.width.toFixed(0)} x ${r.height.toFixed(0)}`)""", TAP_PX)


def test_labels_are_readable_and_every_target_is_a_fingertip_wide(server, browser):
    page, errors = open_demo(browser, server, **PHONE)
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    # Board text at least 11 px high on the screen (the board is drawn at about 0.28 px per mm).
    heights = page.evaluate("""[...document.querySelectorAll('#labels text, #terrain text, .gate-name')]
        .map((t) => [t.textContent, t.getBoundingClientRect().height])""")
    assert len(heights) >= 7
    assert all(h >= LABEL_PX for _, h in heights), heights
    scale = page.evaluate("document.getElementById('board').getScreenCTM().a")
    assert scale < 0.4                                   # a phone's board, not a desktop's
    # Cars: each one's tap area at least 44 px square on the screen, though the car is ~21 px long.
    for car in range(10, 15):
        hit = page.locator(f'#car-hits [data-hit-for="{car}"]').bounding_box()
        assert hit["width"] >= TAP_PX - 0.5 and hit["height"] >= TAP_PX - 0.5, (car, hit)
    # A tap beside a car (off its body, in its tap area) takes the car nearest the finger.
    body = page.locator(f'#cars [data-car-id="{INTERCEPTOR}"] .body').bounding_box()
    assert body["height"] < 20
    page.touchscreen.tap(body["x"] + body["width"] / 2, body["y"] + body["height"] + 8)
    page.wait_for_selector('#car-sheet[data-car="10"]')
    assert small_targets(page) == []
    page.click('#tabs [data-tab="setup"]')
    # The rule-system menu stays inside the screen.
    menu = page.locator("#setup-rules").bounding_box()
    assert menu["x"] >= 0 and menu["x"] + menu["width"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert small_targets(page) == []
    page.click('#tabs [data-tab="car"]')
    assert errors == [], errors
    page.close()


def label_rects(page) -> dict:
    return page.evaluate("""Object.fromEntries([...document.querySelectorAll('#labels text')]
        .map((t) => [t.dataset.labelFor, t.style.display === 'none' ? null : [t.textContent, t.getBoundingClientRect().toJSON()]]))""")


def settled_labels(page, timeout_s: float = 30.0) -> tuple[dict, dict]:
    """The names and the cars' bodies once the board has settled (the same on two looks a tenth
    of a second apart): after a tap the panel opens, the board may refit and the names are
    placed again on the next animation frame, later on a busy machine."""
    def look():
        return label_rects(page), {c: page.locator(f'#cars [data-car-id="{c}"] .body').bounding_box() for c in range(10, 15)}
    before, deadline = look(), time.monotonic() + timeout_s
    while True:
        page.wait_for_timeout(100)
        now = look()
        if now == before or time.monotonic() > deadline:
            return now
        before = now


def overlap(a: dict, b: dict, slack: float = 0.5) -> bool:
    return not (a["right"] <= b["left"] + slack or b["right"] <= a["left"] + slack
                or a["bottom"] <= b["top"] + slack or b["bottom"] <= a["top"] + slack)


def test_car_names_never_cover_each_other_or_a_neighbouring_car(server, browser):
    """The demo's cars stand 2 in apart: on a phone a name is wider than the gap. Each name is
    placed beside its car where it is free, shortened to initials where it is not, and none
    covers another name or another car's body; the selected car keeps its full name."""
    page, errors = open_demo(browser, server, **PHONE)
    page.wait_for_function("[...document.querySelectorAll('#labels text')].every((t) => t.dataset.box !== undefined)")
    for selected in (None, INTERCEPTOR):
        if selected is not None:
            page.touchscreen.tap(*center(page.locator(f'#cars [data-car-id="{selected}"] .body').bounding_box()))
            page.wait_for_selector(f'#car-sheet[data-car="{selected}"]')
        rects, bodies = settled_labels(page)
        shown = {c: v for c, v in rects.items() if v is not None}
        assert len(shown) >= 4, rects                    # at most one name left out, here
        names = list(shown.items())
        for i, (a, (ta, ra)) in enumerate(names):
            assert ra["height"] >= LABEL_PX, (ta, ra)
            for b, (tb, rb) in names[i + 1:]:
                assert not overlap(ra, rb), f"{ta!r} over {tb!r}"
            for car, body in bodies.items():
                if str(car) != a:
                    box = {"left": body["x"], "top": body["y"], "right": body["x"] + body["width"],
                           "bottom": body["y"] + body["height"]}
                    assert not overlap(ra, box), f"{ta!r} over car {car}"
        if selected is not None:
            assert shown[str(selected)][0] == "Interceptor"
    snap(page, "phone-labels")
    assert errors == [], errors
    page.close()


def center(box: dict) -> tuple[float, float]:
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def test_the_dice_request_stays_in_view_and_the_outcome_does_not_push_the_card_away(server, browser):
    page, errors = open_demo(browser, server, **PHONE)
    new_game(page)
    page.click('#tabs [data-tab="round"]')
    page.click("#start-round")
    page.wait_for_selector("#dice:not([hidden])")
    # Asked for at the top of the page, and after scrolling to its very bottom: in view both times.
    page.evaluate("window.scrollTo(0, 0)")
    assert in_view(page, "#dice") and in_view(page, "#dice-use") and in_view(page, "#dice-inputs input")
    page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    page.wait_for_timeout(100)
    assert in_view(page, "#dice") and in_view(page, "#dice-use")
    assert small_targets(page) == []
    snap(page, "phone-dice-in-view")
    # Typed on the phone; nothing of the page hides behind the request (it leaves room below).
    page.evaluate("window.scrollTo(0, 0)")
    for _ in range(2):
        who = page.inner_text("#dice-asked")
        type_dice(page, 6 if "Max" in who else 1)
    page.wait_for_selector("#dice", state="hidden")
    acting = page.evaluate("window.companion.game.game.active")
    assert acting == INTERCEPTOR
    page.locator(f'#cars [data-car-id="{acting}"] .body').tap(force=True)
    page.wait_for_selector('#car-sheet[data-car="10"]')
    # The last outcome: one headline, its working folded, so the car's card follows it closely.
    page.wait_for_selector("#outcome-headline")
    assert page.inner_text("#outcome-headline") == "Round 1: Max goes first"
    assert not page.evaluate("document.getElementById('outcome-details').open")
    outcome = page.locator("#outcome").bounding_box()
    card = page.locator("#car-sheet").bounding_box()
    assert outcome["height"] < 170, outcome
    assert card["y"] - (outcome["y"] + outcome["height"]) < 30
    # Scrolled to the panel, the headline and the card's top are on the screen together.
    page.locator("#outcome").scroll_into_view_if_needed()
    page.evaluate("document.getElementById('outcome').scrollIntoView({ block: 'start' })")
    assert in_view(page, "#outcome-headline")
    assert page.locator("#car-sheet").bounding_box()["y"] < 844 - 120
    # Its actions, with the ruler above the board, as on a desktop.
    assert page.locator('#car-actions button[data-act="move"]').is_enabled()
    page.evaluate("window.scrollTo(0, 0)")
    assert in_view(page, "#ruler-text") and "not moved yet" in page.inner_text("#ruler-text")
    snap(page, "phone-card-after-outcome")
    assert errors == [], errors
    page.close()


def test_the_rulers_words_never_cover_the_table_on_a_phone(server, browser):
    """A car selected before its turn (no car acts yet) shows the ruler's "not moved yet": on a
    phone its words sit under the board, not over the table's lower third."""
    page, errors = open_demo(browser, server, **PHONE)
    new_game(page)
    page.locator(f'#cars [data-car-id="{INTERCEPTOR}"] .body').tap(force=True)
    page.wait_for_selector('#car-sheet[data-car="10"]')
    page.wait_for_selector("#ruler-text:not([hidden])")
    page.evaluate("window.scrollTo(0, 0)")
    board = page.locator("#board").bounding_box()
    words = page.locator("#ruler-text").bounding_box()
    assert words["y"] >= board["y"] + board["height"] - 1, (board, words)
    assert errors == [], errors
    page.close()


def test_a_phone_sees_why_an_action_cannot_be_taken(server, browser):
    page, errors = open_demo(browser, server, **PHONE)
    new_game(page)
    play_round(page, max_first=False)                    # Furiosa first: the Interceptor waits
    page.locator(f'#cars [data-car-id="{INTERCEPTOR}"] .body').tap(force=True)
    page.wait_for_selector('#car-sheet[data-car="10"]')
    page.wait_for_selector("#actions-why", state="visible", timeout=10000)
    assert "turn" in page.inner_text("#actions-why")
    page.locator("#car-actions").scroll_into_view_if_needed()
    assert in_view(page, "#actions-why")
    buttons = page.locator("#car-actions button[data-act]")
    assert all(buttons.nth(i).is_disabled() for i in range(buttons.count()))
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert errors == [], errors
    page.close()

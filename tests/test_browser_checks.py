"""The page asks the rules which actions a car can take once per car and game change (issue 23,
"one judgement"): one `POST api/checks` for the selected car, not a preview per action, and the
actions show greyed with the rules' reasons from it. In a real Chromium on the playable demo
table, counting the page's requests with Playwright's request events."""

from __future__ import annotations

import json

import pytest

from tests.test_browser import _demo, browser  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import open_action, open_demo
from tests.test_browser_play_view import INTERCEPTOR, RUST_BUCKET, new_game, play_round

pytestmark = pytest.mark.browser

#: Snapshots the page is given to ask more, after it has shown its answer: the demo's camera
#: sends several a second, so this is a few seconds of a page left alone (more on a busy machine).
QUIET_SNAPSHOTS = 15


@pytest.fixture(scope="module")
def server():
    yield from _demo(scripted=False)


def quiet(page) -> int:
    """Let the page run for QUIET_SNAPSHOTS more snapshots (nothing moving); the game version
    it ends on."""
    n = page.evaluate("window.companion.updates")
    page.wait_for_function(f"window.companion.updates >= {n + QUIET_SNAPSHOTS}", timeout=120000)
    return page.evaluate("window.companion.gameVersion")


def ask_checks(page, marker: int) -> dict:
    """The checks the page would be given for a car (asked from the test, not counted: the
    request events are only watched for the page's own)."""
    return page.evaluate(f"""async () => (await (await fetch('api/checks', {{ method: 'POST',
        headers: {{ 'Content-Type': 'application/json', 'X-CSRF-Token': window.companion.csrf,
                    'X-Asked-By': 'the test' }},
        body: JSON.stringify({{ marker: {marker} }}) }})).json())""")


def test_one_checks_request_per_car_and_game_change_and_the_reasons_from_it(server, browser):
    page, errors = open_demo(browser, server)
    asked: list[tuple[str, dict]] = []

    def seen(request):
        path = request.url.split("?")[0]
        if request.headers.get("x-asked-by"):
            return                                  # the test's own question, not the page's
        if path.endswith("/api/checks") or path.endswith("/api/preview"):
            asked.append((path.rsplit("/", 1)[-1], json.loads(request.post_data or "{}")))

    new_game(page)
    assert play_round(page, max_first=True) == INTERCEPTOR
    page.on("request", seen)
    checks = lambda m: [b for kind, b in asked if kind == "checks" and b.get("marker") == m]  # noqa: E731

    # Furiosa's Rust Bucket while the Interceptor acts: every action refused, one reason said once.
    version = page.evaluate("window.companion.gameVersion")
    page.click(f'#cars [data-car-id="{RUST_BUCKET}"]')
    page.wait_for_selector(f'#car-sheet[data-car="{RUST_BUCKET}"]')
    page.wait_for_selector("#actions-why", state="visible", timeout=10000)
    assert "Interceptor's turn" in page.inner_text("#actions-why")
    buttons = page.locator("#car-actions button[data-act]")
    assert buttons.count() >= 5 and all(buttons.nth(i).is_disabled() for i in range(buttons.count()))
    assert quiet(page) == version
    assert len(checks(RUST_BUCKET)) == 1, asked
    assert not [b for kind, b in asked if kind == "preview"], asked      # no preview per action any more

    # The acting Interceptor, the Rust Bucket 0.76 in beside it: Move and Board offered (Board was
    # greyed when the page guessed the first car of the list); Ram read from the table, "not
    # yet" in the rules' words, its button kept; anything greyed says why.
    page.click(f'#cars [data-car-id="{INTERCEPTOR}"]')
    page.wait_for_selector(f'#car-sheet[data-car="{INTERCEPTOR}"]')
    page.wait_for_function("document.querySelectorAll('#car-actions .action-row').length >= 5 && "
                           "!document.getElementById('actions-why')", timeout=10000)
    page.wait_for_selector("#why-ram", timeout=10000)
    ram = next(c for c in ask_checks(page, INTERCEPTOR)["checks"] if c["act"] == "ram")
    assert not ram["ok"] and page.inner_text("#why-ram") == f"not yet: {ram['why']}"
    for act in ("move", "board", "ram"):
        assert page.locator(f'#car-actions button[data-act="{act}"]').is_enabled(), act
    refused = page.locator("#car-actions .action-row.refused")
    for i in range(refused.count()):
        assert refused.nth(i).locator("button").is_disabled()
        assert len(refused.nth(i).locator(".why-not").inner_text()) > 10
    assert quiet(page) == version
    assert len(checks(INTERCEPTOR)) == 1, asked
    assert len(checks(RUST_BUCKET)) == 1, asked          # the car no longer shown is not asked again

    # A game change (the Buggy held): the shown car is asked once more, and only once.
    page.evaluate("""async () => { const r = await fetch('api/hold', { method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': window.companion.csrf },
        body: JSON.stringify({ vehicle: 13, held: true }) }); if (!r.ok) throw new Error(await r.text()); }""")
    page.wait_for_function(f"window.companion.gameVersion > {version}", timeout=10000)
    version = page.evaluate("window.companion.gameVersion")
    page.wait_for_function(f"document.querySelectorAll('#car-actions .action-row').length >= 5", timeout=10000)
    assert quiet(page) == version
    assert len(checks(INTERCEPTOR)) == 2, asked
    assert len(checks(RUST_BUCKET)) == 1, asked
    assert not [b for kind, b in asked if kind == "preview"], asked

    # Its form starts on the other side's car the rules take: the Shoot form's target.
    open_action(page, "shoot", 10000)
    page.wait_for_selector('#action-form select[name="target"]')
    target = int(page.input_value('#action-form select[name="target"]'))
    shoot = next(c for c in ask_checks(page, INTERCEPTOR)["checks"] if c["act"] == "shoot")
    assert shoot["ok"] and target == shoot["first_ok"]["target"]
    owner = page.evaluate(f"window.companion.game.game.order.find(o => o.vehicle === {target}).player")
    assert owner == "Furiosa"
    page.wait_for_selector("#conditions.holds", timeout=10000)
    assert errors == [], errors
    page.close()

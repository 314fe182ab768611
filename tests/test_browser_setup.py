"""Setup as players use it, in a real Chromium at a desktop's and a 390 px phone's width: the
rosters built in a form from the table's cars (the JSON only an export), options in words
with the rule each reads, and a confirmation before anything that ends or changes the game
in progress, where "Keep playing" keeps it."""

from __future__ import annotations

import pytest

from tests.test_browser import _demo, browser, snap  # noqa: F401 (browser is a fixture)

pytestmark = pytest.mark.browser

VIEWPORTS = {"desktop": {"width": 1400, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(scope="module")
def server():
    # No game at first: the first test sets one up in the form.
    yield from _demo("--no-game", scripted=False)


def open_page(browser, url, name):
    page = browser.new_page(viewport=VIEWPORTS[name])
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_function("window.companion.csrf && window.companion.game && window.companion.last", timeout=20000)
    # On a busy machine the phone's page may still be laying itself out (the actions move under
    # the board as the scripts finish), and a click aimed at the tab can land elsewhere: the tab
    # is asked for until it shows (CI once waited 10 s on a Setup tab that never opened).
    for _ in range(5):
        page.click("#tabs button[data-tab=setup]")
        try:
            page.wait_for_selector("#tab-setup:not([hidden])", timeout=2000)
            break
        except Exception:
            continue
    page.wait_for_selector("#roster-form fieldset.roster", timeout=10000)
    return page, errors


def small_targets(page, within: str) -> list[str]:
    """Every visible button, menu, input and fold in `within` smaller than a fingertip (44 px)."""
    return page.evaluate("""(sel) => [...document.querySelectorAll(`${sel} :is(button, select, a, summary, input)`)]
        .filter((e) => e.offsetParent !== null && getComputedStyle(e).visibility !== 'hidden')
        .map((e) => [e.id || e.textContent.trim().slice(0, 20) || e.tagName, e.getBoundingClientRect()])
        .filter(([, r]) => r.width > 0 && (r.height < 43.5 || r.width < 43.5))
        .map(([n, r]) => `${n}: ${r.width.toFixed(0)} x ${r.height.toFixed(0)}`)""", within)


def game(page) -> dict:
    return page.evaluate("(async () => (await (await fetch('api/game')).json()))()")


@pytest.mark.parametrize("name", sorted(VIEWPORTS))
def test_options_are_in_words_with_the_rule_they_read(server, browser, name):
    page, errors = open_page(browser, server, name)
    page.select_option("#setup-rules", "wasteland_rally")
    box = page.locator('#setup-options [data-option-box="arc_layout"]')
    box.wait_for(timeout=5000)
    text = box.inner_text()
    assert "Arc layout:" in text and "The rule it reads: wasteland-rally.txt" in text
    assert "arc_layout" not in text                            # no raw ids in players' text
    # The choices read as words, the default marked.
    options = box.locator("select option").all_inner_texts()
    assert any(o.endswith("(the default)") for o in options) and not any("_" in o for o in options)
    page.select_option("#setup-rules", "shattered_highways")
    assert errors == []
    page.close()


@pytest.mark.parametrize("name", sorted(VIEWPORTS))
def test_the_roster_form_starts_a_game_without_touching_json(server, browser, name):
    page, errors = open_page(browser, server, name)
    if page.input_value("#setup-rules") != "shattered_highways":
        page.select_option("#setup-rules", "shattered_highways")
        # The form fills with that system's starter rosters for this table's cars.
        page.wait_for_function("window.companionSetup.rosters.length && window.companionSetup.rosters[0].player === 'Max'",
                               timeout=10000)
    page.wait_for_selector('#roster-form fieldset.roster[data-roster="1"]', timeout=10000)
    first = page.locator('#roster-form fieldset.roster[data-roster="0"]')
    first.locator('[data-roster-key="player"]').first.fill(f"Alice {name}")
    # The first player's first car becomes the Hearse, picked from the table's cars by name;
    # its name follows the car picked.
    cars = first.locator('[data-roster-list="vehicles"] .roster-item')
    cars.first.locator('select[data-roster-key="marker"]').select_option(label="Hearse (marker 14)")
    assert cars.first.locator('input[data-roster-key="name"]').input_value() == "Hearse"
    # The Hearse would then be in the game twice: remove it where it was.
    items = page.locator('#roster-form [data-roster-list="vehicles"] .roster-item')
    for k in range(1, items.count()):
        if items.nth(k).locator('select[data-roster-key="marker"]').input_value() == "14":
            items.nth(k).locator("button", has_text="Remove this one").click()
            break
    # The hero rode the first car, now the Hearse.
    hero = first.locator('select[data-roster-key="vehicle"]')
    if hero.count():
        hero.first.select_option("14")
    assert page.is_hidden("#setup-rosters")                    # the JSON is folded away
    assert small_targets(page, "#tab-setup") == []
    exported = page.input_value("#setup-rosters")
    assert f'"player": "Alice {name}"' in exported
    page.click("#setup-start")
    if page.is_visible("#confirm-end"):             # the other width's game is in progress: end it
        page.click("#confirm-end-yes")
    page.wait_for_function("""(who) => { const g = window.companion.game.game;
        return (g && g.setup.rosters[0].player === who) || document.getElementById('setup-error').textContent; }""",
                           arg=f"Alice {name}", timeout=10000)
    assert page.inner_text("#setup-error") == ""
    g = game(page)
    assert g["game"]["rules"]["name"] == "shattered_highways"
    roster = g["game"]["setup"]["rosters"][0]
    assert roster["player"] == f"Alice {name}" and roster["vehicles"][0]["marker"] == 14
    assert page.inner_text("#setup-start") == "Start a new game (this one ends)"
    snap(page, f"setup-form-{name}")
    assert errors == []
    page.close()


@pytest.mark.parametrize("name", sorted(VIEWPORTS))
def test_ending_a_game_asks_first_and_cancelling_keeps_it(server, browser, name, tmp_path):
    page, errors = open_page(browser, server, name)
    before = game(page)
    assert before["game"] is not None
    page.click("#setup-start")
    confirm = page.locator("#confirm-end")
    confirm.wait_for(state="visible", timeout=5000)
    assert "ends the Shattered Highways" in confirm.inner_text() and "game in progress" in confirm.inner_text()
    # In view, beside the button that asked it.
    box = confirm.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= VIEWPORTS[name]["width"] + 1
    assert box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORTS[name]["height"] + 1
    snap(page, f"setup-confirm-{name}")
    assert small_targets(page, "#confirm-end") == []
    page.click("#confirm-end-no")
    assert confirm.is_hidden()
    page.wait_for_timeout(500)
    after = game(page)
    assert after["game"]["setup"] == before["game"]["setup"] and after["version"] == before["version"]
    # Loading a table file asks too; cancelling leaves the table and the game as they were.
    toml = tmp_path / "other.toml"
    toml.write_text('[table]\nwidth_mm = 900.0\ndepth_mm = 600.0\n')
    page.set_input_files("#setup-table-file", str(toml))
    confirm.wait_for(state="visible", timeout=5000)
    box = confirm.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= VIEWPORTS[name]["height"] + 1
    assert "Loading other.toml changes the table the camera reads" in confirm.inner_text()
    page.click("#confirm-end-no")
    assert page.inner_text("#setup-table-result") == "Not loaded: the game goes on."
    assert game(page)["version"] == before["version"]
    assert page.evaluate("window.companion.last.table.width_mm") == pytest.approx(1219.2)
    assert errors == []
    page.close()

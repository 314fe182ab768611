"""The demo started with a game of some rules whose game then fails to start: the page's
Setup offers those rules first (not the first system of the list), so players start the
game the demo was meant to show; and the served game's wiring (setup warnings and a
camera's later anchor notes on the page's notes)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from companion.commands.serve import _ready_game, _start_demo_game
from companion.game import TableGame
from companion.live import MultiLiveTable
from companion.rules.base import RulesError, rule_systems
from tests.test_multicam import ListSource
from tests.test_multicam_evidence import POSES, two_views

RULES = "car_cult"


@pytest.fixture
def failed_demo(demo_table, monkeypatch):
    """A table game served as the demo with car_cult, whose game failed to start."""
    renderers = two_views(demo_table)
    live = MultiLiveTable([ListSource([], "left"), ListSource([], "right")], demo_table,
                          [r.camera for r in renderers])
    for i, r in enumerate(renderers):
        live.process_camera(i, r.render(POSES, np.random.default_rng(5)).image, 0, 0.0)
    game = TableGame(live, seed=1)
    _ready_game(game, live, ("camera 2: its camera file was scaled to fit",), RULES)

    def refuse(*_a, **_k):
        raise RulesError("the starter rosters name a car the table does not have")
    monkeypatch.setattr(game, "start", refuse)
    _start_demo_game(game, RULES)
    return game, live


def test_the_page_is_given_the_demos_rules_when_its_game_did_not_start(failed_demo):
    game, live = failed_demo
    assert rule_systems()[0]().name != RULES            # else the check below proves nothing
    g = game.game_json()
    assert g["game"] is None and g["demo_rules"] == RULES
    texts = [n["text"] for n in g["notes"]]
    assert "camera 2: its camera file was scaled to fit" in texts
    assert any(t.startswith("the demo game did not start: the starter rosters name a car") for t in texts)
    # A camera's later anchor note goes to the page's notes.
    live.on_note("camera 2 shares no anchor with another camera", "warn")
    assert game.notes[-1]["text"] == "camera 2 shares no anchor with another camera"
    # Not the demo: no rules to offer first.
    plain = TableGame(live, seed=1)
    _ready_game(plain, live, (), None)
    assert plain.game_json()["demo_rules"] is None


@pytest.mark.browser
def test_setup_preselects_the_demos_rules(failed_demo, browser):  # noqa: F811
    from waitress import create_server

    from companion.web import create_app
    game, _ = failed_demo
    server = create_server(create_app(game, {"STREAM_MAX_S": 60.0}), host="127.0.0.1", port=0, threads=8)
    threading.Thread(target=server.run, daemon=True).start()
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"http://127.0.0.1:{server.effective_port}/")
        page.wait_for_function("window.companion.game", timeout=20000)
        page.click('#tabs [data-tab="setup"]')
        page.wait_for_function("document.getElementById('setup-rules').options.length > 1", timeout=10000)
        assert page.input_value("#setup-rules") == RULES
        # Its starter rosters fill the form, and its options are the ones shown.
        page.wait_for_function("window.companionSetup.rosters.length > 0", timeout=10000)
        assert not errors, errors
    finally:
        page.close()
        server.close()


from tests.test_browser import browser  # noqa: E402,F401 (a fixture)

"""Seats on the page (issue 24): one line under the header says which players this device
answers for (folded, so a phone's board stays near the top); opened, a free seat is taken with
its button and freed again, and the page says so at once."""

from __future__ import annotations

import pytest

from tests.test_browser import _demo, browser  # noqa: F401 (browser is a fixture)
from tests.test_browser_demo import open_demo
from tests.test_browser_play_view import new_game

pytestmark = pytest.mark.browser

WAIT_MS = 60000


@pytest.fixture(scope="module")
def server():
    yield from _demo(scripted=False)


def test_a_device_takes_a_free_seat_and_frees_it(server, browser):
    page, errors = open_demo(browser, server)
    new_game(page)
    page.wait_for_selector("#seats:not([hidden])", timeout=WAIT_MS)
    assert page.inner_text("#seats-mine").startswith("This device is the host: it may answer for any free seat")
    assert not page.evaluate("document.getElementById('seats').open")       # one line, folded
    page.click("#seats-mine")
    page.click('#seats-list [data-seat="Max"] button:text("Take Max\'s seat")', timeout=WAIT_MS)
    page.wait_for_selector('#seats-mine:text("answers for Max")', timeout=WAIT_MS)
    assert "Max: yours" in page.inner_text('#seats-list [data-seat="Max"]')
    assert "Furiosa: free" in page.inner_text('#seats-list [data-seat="Furiosa"]')
    page.click('#seats-list [data-seat="Max"] button:text("Free")', timeout=WAIT_MS)
    page.wait_for_selector('#seats-mine:text("any free seat")', timeout=WAIT_MS)
    assert "Max: free" in page.inner_text('#seats-list [data-seat="Max"]')
    assert page.inner_text("#seats-error") == ""
    assert errors == [], errors
    page.close()

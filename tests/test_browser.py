"""The page in a real Chromium (Debian's, driven by Playwright): cars drawn, named, moving."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def server():
    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    url = re.search(r"(http://127\.0\.0\.1:\d+/)", line).group(1)
    yield url
    proc.terminate()
    proc.wait(10)


@pytest.fixture(scope="module")
def browser(chromium):
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run"])
        yield b
        b.close()


def _transform(page, car_id):
    return page.get_attribute(f'#cars [data-car-id="{car_id}"]', "transform")


def test_page_shows_every_car_moving_without_a_reload(server, browser):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(server)
    page.wait_for_function("document.querySelectorAll('#cars [data-car-id]').length === 5", timeout=20000)
    labels = page.locator("#labels text").all_text_contents()
    assert sorted(labels) == ["Buggy", "Hearse", "Interceptor", "Rust Bucket", "War Rig"]
    before = {i: _transform(page, i) for i in range(10, 15)}
    page.wait_for_function("window.companion.updates >= 10", timeout=20000)
    page.wait_for_timeout(1500)
    after = {i: _transform(page, i) for i in range(10, 15)}
    assert any(before[i] != after[i] for i in before), "no car moved on the page"
    # Pushed updates, not reloads: the same document counted them.
    assert page.evaluate("window.companion.updates") >= 10
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
    page.close()


def test_page_fits_a_phone_held_in_portrait(server, browser):
    page = browser.new_page(viewport={"width": 390, "height": 844}, device_scale_factor=2)
    page.goto(server)
    page.wait_for_function("document.querySelectorAll('#cars [data-car-id]').length === 5", timeout=20000)
    board = page.locator("#board").bounding_box()
    assert board["width"] <= 390 and board["width"] > 300
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.close()

"""The page draws what each of two cameras covers of the table, in a real Chromium
(the snapshot's "cameras" list, vision.multicam through companion.live.MultiLiveTable)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from bench.scenes import WEBCAM_BIG, big_table
from companion.live import MultiLiveTable
from companion.web import create_app
from tests.test_browser import browser  # noqa: F401 (a fixture)
from tests.test_multicam import D, W, ListSource
from vision.multicam import demo_renderers
from vision.render import CarTruth

pytestmark = pytest.mark.browser


def test_the_board_shows_each_cameras_coverage(browser):  # noqa: F811
    from waitress import create_server
    table = big_table(W, D, 3, np.random.default_rng(5))
    renderers = demo_renderers(table, 2, WEBCAM_BIG)
    poses = [CarTruth(c.id, x, y, 0.0) for c, (x, y) in zip(table.cars, [(400, 200), (900, 600), (1400, 1000)])]
    images = [r.render(poses).image for r in renderers]
    live = MultiLiveTable([ListSource([images[0]], "near"), ListSource([images[1]], "far")], table,
                          [r.camera for r in renderers])
    for i in range(2):
        live.process_camera(i, images[i], 0, 0.0)
    server = create_server(create_app(live, {"STREAM_MAX_S": 60.0}), host="127.0.0.1", port=0, threads=8)
    threading.Thread(target=server.run, daemon=True).start()
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"http://127.0.0.1:{server.effective_port}/")
        page.wait_for_function("document.querySelectorAll('#coverage .camera-coverage polygon').length === 2",
                               timeout=20000)
        names = page.eval_on_selector_all("#coverage .camera-coverage", "gs => gs.map(g => g.dataset.camera)")
        assert names == ["camera 1", "camera 2"]
        # Drawn under the terrain, so it never hides a car or a label.
        assert page.evaluate("document.getElementById('coverage').nextElementSibling.id") == "terrain"
        # The near camera's strip reaches the near edge (the bottom of the board), the far one's the far edge.
        ys = page.eval_on_selector_all("#coverage polygon", """ps => ps.map(p => {
            const b = p.getBBox(); return [b.y, b.y + b.height]; })""")
        assert ys[0][1] > D - 2 and ys[1][0] < 2
        page.wait_for_function("document.querySelectorAll('#cars [data-car-id]').length === 3", timeout=20000)
        assert not errors
    finally:
        page.close()
        server.close()

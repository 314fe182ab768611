"""Shared fixtures: the demo table, a rendered camera and frames with known poses."""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest

from vision.demo import demo_table as _demo_table
from vision.render import CarTruth, RenderOptions, TableRenderer

try:
    from hypothesis import settings as _hypothesis_settings
except ImportError:             # the test extras not installed: the property tests skip themselves
    _hypothesis_settings = None
if _hypothesis_settings is not None:
    # Tests check correctness, never time: hypothesis's default 200 ms deadline per example
    # failed a tray property test on a busy CI machine (a slow example is no wrong answer).
    _hypothesis_settings.register_profile("companion", deadline=None)
    _hypothesis_settings.load_profile("companion")

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


@pytest.fixture(scope="session")
def demo_table():
    return _demo_table()


@pytest.fixture(scope="session")
def renderer(demo_table):
    """The demo's webcam: 1080p, 1.1 m up, tilted a little, with barrel distortion."""
    return TableRenderer.overhead(demo_table, options=RenderOptions(), seed=1)


#: Poses that reach every part of the table: near and far edges, corners, all headings.
SPREAD_POSES = (
    CarTruth(10, 160.0, 150.0, 30.0),
    CarTruth(11, 1060.0, 160.0, 135.0),
    CarTruth(12, 1080.0, 660.0, -100.0),
    CarTruth(13, 150.0, 670.0, -45.0),
    CarTruth(14, 610.0, 400.0, 179.0),
)


@pytest.fixture(scope="session")
def spread_frame(renderer):
    # Its own noise seed: the frame must not depend on what other tests rendered first.
    return renderer.render(SPREAD_POSES, np.random.default_rng(11))


@pytest.fixture(scope="session")
def camera_file(renderer, tmp_path_factory):
    path = tmp_path_factory.mktemp("camera") / "webcam.yml"
    renderer.camera.to_yaml(path)
    return path


def wait_until(predicate, timeout: float = 10.0) -> bool:
    """Poll until `predicate()` holds (threads, ports, servers), or give up after `timeout`."""
    import time
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def chromium_path() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


@pytest.fixture(scope="session")
def chromium():
    path = chromium_path()
    if path is None:
        if os.environ.get("CI"):
            pytest.fail("Chromium is not installed, and CI must run the browser tests "
                        "(.ci/run installs it with apt-get)")
        pytest.skip("Chromium is not installed (apt-get install chromium); CI runs these tests")
    return path


def pytest_addoption(parser):
    parser.addoption("--through-camera", action="store_true", default=False,
                     help="also play every example scenario through the camera (rendered frames, "
                          "tracked): about 5 minutes; CI runs it as its second step")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--through-camera"):
        return
    skip = pytest.mark.skip(reason="through the camera: run with --through-camera (CI's second step)")
    for item in items:
        if "through_camera" in item.keywords:
            item.add_marker(skip)


def filmer(live, renderer, standing: dict, seed: int = 5):
    """A camera filming cars where `standing` has them (marker -> [x, y, heading], changed by
    the caller as the game moves them): each call feeds the live table three frames."""
    rng = np.random.default_rng(seed)
    frames = iter(range(10_000))

    def film():
        for _ in range(3):
            n = next(frames)
            live.process(renderer.render([CarTruth(m, *p) for m, p in standing.items()], rng).image, n, n / 30)
    return film


@contextlib.contextmanager
def served_app(app, threads: int = 8):
    """The Flask app under a real waitress server on a free port, on a thread: its base URL
    (closed when the block ends)."""
    from waitress import create_server

    server = create_server(app, host="127.0.0.1", port=0, threads=threads)
    threading.Thread(target=server.run, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.effective_port}/"
    finally:
        server.close()

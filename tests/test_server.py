"""`companion demo` as a player starts it: a real waitress server in its own process."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
import urllib.request

import pytest


@pytest.fixture(scope="module")
def demo_server():
    # The scripted convoy: these tests watch cars move by themselves.
    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--scripted", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert match, f"no address printed: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}"
        yield match.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


def get_json(url):
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


def test_demo_prints_its_address_and_serves_moving_cars(demo_server):
    deadline = time.monotonic() + 30
    state = get_json(demo_server + "api/state")
    while len(state["cars"]) < 5 and time.monotonic() < deadline:
        time.sleep(0.2)
        state = get_json(demo_server + "api/state")
    assert {c["name"] for c in state["cars"]} == {"Interceptor", "Rust Bucket", "War Rig", "Buggy", "Hearse"}
    first = {c["id"]: (c["x_mm"], c["y_mm"]) for c in state["cars"]}
    moved = False
    while not moved and time.monotonic() < deadline:
        time.sleep(0.3)
        now = {c["id"]: (c["x_mm"], c["y_mm"]) for c in get_json(demo_server + "api/state")["cars"]}
        moved = any(abs(now[i][0] - first[i][0]) + abs(now[i][1] - first[i][1]) > 5 for i in first)
    assert moved, "no car moved in the demo"


def test_stream_sends_events_over_the_real_server(demo_server):
    with urllib.request.urlopen(demo_server + "api/stream", timeout=10) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        frames = set()
        while len(frames) < 4:
            line = r.readline().decode()
            if line.startswith("data: "):
                frames.add(json.loads(line[6:])["frame"])
    assert len(frames) == 4


def test_page_is_served(demo_server):
    with urllib.request.urlopen(demo_server, timeout=10) as r:
        html = r.read().decode()
    assert "<svg" in html and 'id="board"' in html

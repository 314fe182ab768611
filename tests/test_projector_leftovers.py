"""What the projector's review left undone (issue 27):

1. The calibration's file is the one actually used, and named so: `serve --projector FILE`'s
   (a calibration made from Setup is saved there too), else the one beside the table file;
   the status API carries it and Setup's Projector box says it.
2. While the rules wait for a piece to be put somewhere, the page dims the acting car's
   overlays and lines (and draws no move ruler): the projector's scene does the same, from
   the same game the page is given, the placement's outline kept at full light.
3. A page's tools leave the table within seconds of the page going silent (it died without
   a word): the page says them again every few seconds, as the companion's answer tells it,
   and the companion forgets a page not heard from for a few of those (a clock the test turns).
4. A damaged calibration file is named with what is wrong and what to do (the command),
   never the JSON parser's own words nor a traceback: by the loader, `doctor` and `serve`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from calibration.projector import ProjectorFileError, ProjectorModel, fit_projector
from companion.game import TableGame
from companion.live import LiveTable
from companion.projector import ProjectorDisplay
from companion.projector_scene import (COLOURS, PLACING_LIGHT, TOOLS_FORGET_S, TOOLS_RESEND_S, PlayersTools,
                                       build_scene)
from companion.web import create_app
from tests.conftest import served_app
from tests.test_browser import browser  # noqa: F401 (a fixture)
from tests.test_doctor import doctor
from vision.render import CarTruth
from vision.sources import SyntheticSource

WEB = Path(__file__).resolve().parent.parent / "companion" / "web"
POSES = (CarTruth(10, 300.0, 200.0, 0.0), CarTruth(11, 420.0, 200.0, 0.0), CarTruth(12, 900.0, 650.0, 0.0),
         CarTruth(13, 700.0, 520.0, 0.0), CarTruth(14, 1000.0, 200.0, 0.0))


def _display(table) -> ProjectorDisplay:
    xs, ys = np.meshgrid(np.linspace(0, table.width_mm, 5), np.linspace(0, table.depth_mm, 4))
    mm = np.c_[xs.ravel(), ys.ravel()]
    px = mm @ np.array([[0.95, 0.05], [-0.04, 0.9]]) + (60.0, 40.0)
    return ProjectorDisplay(fit_projector(mm, px, (1280, 800), lens=False))


def _game(table, renderer=None) -> TableGame:
    source = SyntheticSource(table, paced=False)
    live = LiveTable(source, table, source.camera)
    if renderer is not None:
        live.process(renderer.render(POSES, np.random.default_rng(3)).image, 0, 0.0)
    return TableGame(live, seed=7)


def _client(app):
    c = app.test_client()
    c.headers = {"X-CSRF-Token": c.get("/api/session").get_json()["csrf"]}
    return c


# --- 1. the calibration's file, named as used -------------------------------------------------------

def test_the_status_names_the_file_serve_was_given_not_projector_json(demo_table, tmp_path):
    given = tmp_path / "rig" / "overhead-projector.json"
    table = dataclasses.replace(demo_table, source=str(tmp_path / "table.toml"))
    app = create_app(_game(table), {"TESTING": True, "PROJECTOR": ProjectorDisplay(), "PROJECTOR_FILE": str(given)})
    st = app.test_client().get("/api/projector/status").get_json()
    assert st["file"] == str(given) and st["saved"] is None
    # Without one given: the one beside the table file; a table with no file keeps it in memory.
    app = create_app(_game(table), {"TESTING": True, "PROJECTOR": ProjectorDisplay()})
    assert app.test_client().get("/api/projector/status").get_json()["file"] == str(tmp_path / "projector.json")
    app = create_app(_game(demo_table), {"TESTING": True, "PROJECTOR": ProjectorDisplay()})
    assert app.test_client().get("/api/projector/status").get_json()["file"] is None


def test_serve_saves_a_calibration_made_from_setup_in_the_file_it_was_given(demo_table, tmp_path, monkeypatch):
    """Even when the file given cannot be used (damaged, another table's): it is the file named,
    and a calibration made from Setup replaces it (the old one kept beside it as FILE.old)."""
    from companion.commands import serve
    given = tmp_path / "overhead.json"
    given.write_text("{", encoding="utf-8")
    table = dataclasses.replace(demo_table, source=str(tmp_path / "table.toml"))
    live = argparse.Namespace(table=table)
    monkeypatch.setattr(serve, "live_for_serving", lambda args: (live, ()))
    seen = {}
    monkeypatch.setattr(serve, "_serve", lambda live, port, **kw: seen.update(kw) or 0)
    args = argparse.Namespace(projector=str(given), port=0, lan=False, pin=None, game=None, host_name=[])
    assert serve.cmd_serve(args) == 0
    assert seen["projector_file"] == str(given) and seen["projector"].model is None
    (said,) = seen["warnings"]
    assert said.startswith(f"the projector is off: {given} is damaged")


# --- 2. a placement waited for: the acting car's shapes dimmed as the page dims them ---------------

def test_the_scenes_dim_is_the_pages():
    css = (WEB / "static" / "table.css").read_text(encoding="utf-8")
    m = re.search(r"body\.placing #overlays, body\.placing #lines \{ opacity: ([0-9.]+); \}", css)
    assert m, "table.css no longer dims #overlays and #lines while placing: the scene follows the page"
    assert float(m.group(1)) == PLACING_LIGHT
    js = (WEB / "static" / "table.js").read_text(encoding="utf-8")
    # The page's placement is the game's pending placement, as placement_waited reads it.
    assert 'g.pending.waiting === "placement" ? g.pending.placement : null' in js


def _light(colour: str) -> float:
    c = colour.lstrip("#")
    return max(int(c[i:i + 2], 16) for i in (0, 2, 4))


@pytest.fixture(scope="module")
def moving(demo_table, renderer):
    """Shattered Highways on the demo table, the Interceptor (10) acting and moved 60 mm from
    where its move began: what the page is given (game_json, car, the camera's snapshot)."""
    game = _game(demo_table, renderer)
    game.start("shattered_highways", {}, game.starter_rosters("shattered_highways"))
    game.start_round({"Max": [10, 13, 14], "Furiosa": [12, 11]})
    game.answer_typed([6])
    assert game.answer_typed([2])["game"]["state"]["active"] == 10
    view, car = game.game_json(), game.car(10)
    live = game.live.snapshot()
    live = {**live, "cars": [{**c, "x_mm": c["x_mm"] - 60.0} if c["id"] == 10 else c for c in live["cars"]]}
    return view, car, live


def test_a_placement_waited_for_dims_the_acting_cars_shapes_and_keeps_its_outline_bright(moving, demo_table):
    view, car, live = moving
    acting = ("template", "region", "arc", "reach")
    plain = build_scene(view, car, live, demo_table)
    assert {s.role for s in plain} >= set(acting) | {"ruler"}
    assert all(s.colour in COLOURS.values() for s in plain if s.role in acting)      # the page's own colours
    # The rules now ask for the Rust Bucket (11) to be put back: the page's "placing".
    asked = {"marker": 11, "name": "Rust Bucket", "to": [500.0, 300.0, 90.0], "tolerance_mm": 10,
             "tolerance_deg": 5, "why": "a test", "asked": "put the Rust Bucket here"}
    placing = build_scene({**view, "pending": {"waiting": "placement", "placement": asked}}, car, live, demo_table)
    dimmed = [s for s in placing if s.role in acting]
    # The same shapes, a quarter of their light, as the page's opacity over a dark table.
    assert [dataclasses.replace(s, colour="") for s in dimmed] == \
        [dataclasses.replace(s, colour="") for s in plain if s.role in acting]
    for was, now in zip([s for s in plain if s.role in acting], dimmed):
        assert _light(now.colour) == round(_light(was.colour) * PLACING_LIGHT), now.label
    outline = [s for s in placing if s.role == "placement"]
    assert outline and all(s.colour == COLOURS["placement"] for s in outline)
    # As the page's followRuler, the placement's words replace the move ruler meanwhile.
    assert [s.label for s in plain if s.role == "ruler" and not s.closed] == ["the live ruler: moved so far"]
    assert not [s for s in placing if s.role == "ruler" and not s.closed]
    # The board, gates and masks are as they were.
    keep = lambda scene: [s for s in scene if s.role in ("square", "gate", "mask")]     # noqa: E731
    assert keep(placing) == keep(plain)
    # Thrown so: the display maps the dimmed colours as they are.
    frame = _display(demo_table).frame(placing)["shapes"]
    assert {s["colour"] for s in frame if s["role"] == "template"} == {"#404040"}
    assert {s["colour"] for s in frame if s["role"] == "placement"} == {COLOURS["placement"]}


# --- 3. a dead page's tools leave the table within seconds -----------------------------------------

BLAST = {"kind": "template", "name": "Blast template", "closed": True,
         "points": [[500.0, 400.0], [560.0, 400.0], [560.0, 460.0], [500.0, 460.0]]}


def test_a_silent_pages_tools_leave_the_table_within_seconds(demo_table):
    now = [100.0]
    app = create_app(_game(demo_table), {"TESTING": True, "PROJECTOR": _display(demo_table)})
    app.extensions["projector_tools"] = PlayersTools(clock=lambda: now[0])
    c = _client(app)
    thrown = lambda: [s["label"] for s in c.get("/api/projector/frame").get_json()["shapes"] if s["role"] == "blast"]  # noqa: E731
    r = c.post("/api/projector/tools", json={"page": "alive", "shapes": [BLAST]}, headers=c.headers)
    assert r.get_json() == {"shapes": 1, "pages": 1, "resend_s": TOOLS_RESEND_S, "forget_s": TOOLS_FORGET_S}
    assert TOOLS_FORGET_S <= 20.0 and TOOLS_RESEND_S * 2 < TOOLS_FORGET_S
    # A page that keeps saying them (every resend_s) keeps them for as long as it lives.
    for _ in range(12):
        now[0] += TOOLS_RESEND_S
        c.post("/api/projector/tools", json={"page": "alive", "shapes": [BLAST]}, headers=c.headers)
        assert thrown() == ["Blast template"]
    # Then it dies without a word: still there just before forget_s, gone just after.
    now[0] += TOOLS_FORGET_S - 0.5
    assert thrown() == ["Blast template"]
    now[0] += 1.0
    assert thrown() == []
    assert app.extensions["projector_tools"].pages() == 0


def test_a_resend_that_could_not_keep_a_page_is_refused():
    with pytest.raises(ValueError, match="under half"):
        PlayersTools(forget_s=15.0, resend_s=8.0)


# --- 4. a damaged calibration file: named, what is wrong, what to do --------------------------------

DAMAGED = [
    ("empty.json", b"", "is damaged"),
    ("cut.json", b'{"format": "table-companion projector calibration 1", "size_px": [1280', "is damaged"),
    ("binary.json", b"\xff\xfe\x00garbage", "is damaged"),
    ("deep.json", b"[" * 100000, "is damaged"),
    ("a_list.json", b"[1, 2, 3]", "is not a projector calibration"),
    ("bad_numbers.json", json.dumps({"format": "table-companion projector calibration 1", "size_px": [1280, 800],
                                     "homography": [[1, 0, 0], [0, 1, 0], [0, 0, 1]], "rms_px": "low"}).encode(),
     "its rms_px, rms_mm or points is not a number"),
    ("bad_size.json", json.dumps({"format": "table-companion projector calibration 1", "size_px": "big",
                                  "homography": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}).encode(),
     "its size_px is missing"),
]


@pytest.mark.parametrize("name, data, words", DAMAGED, ids=[d[0] for d in DAMAGED])
def test_a_damaged_file_is_named_with_what_to_do_not_the_parsers_words(demo_table, tmp_path, name, data, words):
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(ProjectorFileError) as info:
        ProjectorModel.load(path, demo_table)
    said = str(info.value)
    assert said.startswith(str(path)) and words in said, said
    assert f"calibrate the projector again: `companion calibrate projector --demo --out {path}`" in said
    for parser_words in ("Expecting", "line 1 column", "char 0", "codec", "KeyError", "ValueError", "recursion"):
        assert parser_words not in said, said


def test_any_json_is_a_calibration_or_a_projector_file_error(demo_table):
    """Whatever a file holds, loading it says ProjectorFileError or gives a model: never
    another exception (which `serve` would show as a traceback)."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    scalars = st.none() | st.booleans() | st.integers(-10 ** 30, 10 ** 30) | st.floats() | st.text(max_size=5)
    values = st.recursive(scalars, lambda v: st.lists(v, max_size=4) | st.dictionaries(st.text(max_size=3), v, max_size=3),
                          max_leaves=12)
    # A sound calibration with one to three of its fields changed or left out.
    sound = {"format": "table-companion projector calibration 1", "size_px": [1280, 800],
             "homography": [[1.0, 0.0, 5.0], [0.0, 1.0, 3.0], [0.0, 0.0, 1.0]], "lens": [[0.0, 0.0]] * 10,
             "table_fingerprint": "abc", "rms_px": 0.5, "rms_mm": 0.4, "points": 60}
    field = st.sampled_from([k for k in sound if k != "format"])
    changes = st.dictionaries(field, values | st.just(None) | st.just("left out"), min_size=1, max_size=3)

    @settings(max_examples=400, deadline=None, database=None)
    @given(change=changes)
    def run(change):
        data = {k: v for k, v in {**sound, **change}.items() if v != "left out"}
        try:
            ProjectorModel.from_json(data, "p.json")
        except ProjectorFileError as exc:
            assert str(exc).startswith("p.json")
    ProjectorModel.from_json(sound, "p.json")
    run()


def test_doctor_names_the_damaged_file_and_the_command(capsys, tmp_path):
    path = tmp_path / "projector.json"
    path.write_text("", encoding="utf-8")
    code, checks, out = doctor(capsys, "--source", "demo", "--frames", "1", "--projector", str(path))
    assert code == 1 and "Traceback" not in out
    (status, said), = checks["projector"]
    assert status == "FAIL" and said.startswith(f"{path} is damaged") and "Expecting value" not in out, said
    assert f"fix: calibrate it: `companion calibrate projector --demo --out {path}`" in out


def test_serve_with_a_damaged_file_says_so_and_runs_without_the_projector(demo_table, tmp_path):
    from companion.commands.serve import served_projector
    path = tmp_path / "projector.json"
    path.write_text("not json at all", encoding="utf-8")
    display, said = served_projector(str(path), demo_table)
    assert display.model is None
    (text,) = said
    assert text.startswith(f"the projector is off: {path} is damaged") and "Expecting" not in text
    assert "companion calibrate projector" in text


# --- in a browser: Setup names the file; a page with tools keeps saying them -----------------------



@pytest.fixture(scope="module")
def served(demo_table, renderer, tmp_path_factory):
    given = tmp_path_factory.mktemp("rig") / "overhead-projector.json"
    game = _game(demo_table, renderer)
    game.start("shattered_highways", {}, game.starter_rosters("shattered_highways"))
    display = _display(demo_table)
    app = create_app(game, {"PROJECTOR": display, "PROJECTOR_FILE": str(given), "STREAM_MAX_S": 60.0})
    with served_app(app) as url:
        yield url, given


WAIT_MS = 30000


@pytest.mark.browser
def test_setups_projector_box_names_the_file_in_use(served, browser):
    from tests.test_browser import snap
    url, given = served
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(url)
        page.wait_for_function("window.companion.csrf && window.companion.game", timeout=WAIT_MS)
        page.click('#tabs button[data-tab="setup"]')
        page.wait_for_function("(document.getElementById('projector-file') || {}).textContent", timeout=WAIT_MS)
        said = page.inner_text("#projector-file")
        assert said == f"Calibration file: {given}", said
        box = page.inner_text("#projector-box")
        assert "projector.json" not in box.replace(given.name, "")
        page.locator("#projector-box").scroll_into_view_if_needed()
        snap(page, "projector-setup-file")
    finally:
        page.close()


@pytest.mark.browser
def test_a_page_with_tools_says_them_again_as_the_companion_asks(served, browser):
    """The page's clock is the test's (Playwright's): turned past the companion's resend_s, a page
    with a template out has said it again; with none out it says nothing."""
    from tests.test_browser_demo import screen_point
    url, _ = served
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    posts = []
    page.on("request", lambda r: posts.append(r.post_data) if r.url.endswith("/api/projector/tools") else None)
    try:
        page.clock.install()
        page.goto(url)
        page.wait_for_function("window.companion.csrf && window.companion.game && window.companion.canChange",
                               timeout=WAIT_MS)
        page.wait_for_function("document.querySelectorAll('#template-choice option').length > 0", timeout=WAIT_MS)
        page.evaluate("document.getElementById('board').scrollIntoView()")
        page.select_option("#template-choice", index=0)
        page.click("#template-place")
        page.mouse.click(*screen_point(page, 300.0, 500.0))
        page.wait_for_function("window.companionTools.projector.sends >= 1", timeout=WAIT_MS)
        assert page.evaluate("window.companionTools.projector.resendMs") == TOOLS_RESEND_S * 1000
        for _ in range(3):
            sends = page.evaluate("window.companionTools.projector.sends")
            page.clock.fast_forward(int(TOOLS_RESEND_S * 1000) + 100)
            page.wait_for_function(f"window.companionTools.projector.sends > {sends}", timeout=WAIT_MS)
        assert json.loads(posts[-1])["shapes"], "the template itself is said again"
        # Taken off: an empty list once, and no re-send waiting (nothing more is said).
        page.locator("#template-list li").first.locator("[data-remove]").click()
        page.wait_for_function("window.companionTools.projector.sent.length === 0 && "
                               "!window.companionTools.projector.resending", timeout=WAIT_MS)
        assert json.loads(posts[-1])["shapes"] == []
    finally:
        page.close()

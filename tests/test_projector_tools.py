"""The players' tools on the projector: the templates and the ruler a table page shows are sent
to `POST /api/projector/tools` in table mm, kept per page (two pages, or two browsers, never
erase each other's; an empty list clears a page's; a page silent too long is forgotten),
bounded and checked (a bad body refused with a 400 naming the problem, nothing kept changing),
and drawn by the projector as "blast" (templates) and "ruler" shapes labelled with the page's
names, through the calibration, only when the mode shows everything."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from calibration.projector import fit_projector
from companion.game import TableGame
from companion.live import LiveTable
from companion.projector import ProjectorDisplay
from companion.projector_scene import (MAX_TOOL_POINTS, MAX_TOOL_SHAPES, TOOL_MARGIN_MM, PlayersTools,
                                       read_tool_shapes)
from companion.web import create_app
from vision.sources import SyntheticSource

PIN = "482913"


def _circle(cx, cy, r, n=48):
    return [[round(cx + r * math.cos(2 * math.pi * k / n), 1), round(cy + r * math.sin(2 * math.pi * k / n), 1)]
            for k in range(n)]


BLAST = {"kind": "template", "name": 'Blast template (3" radius)', "points": _circle(500.0, 400.0, 76.2), "closed": True}
RULER = {"kind": "ruler", "name": "ruler: 5.00 in", "points": [[100.0, 100.0], [227.0, 100.0]], "closed": False}


def _display(table) -> ProjectorDisplay:
    xs, ys = np.meshgrid(np.linspace(0, table.width_mm, 5), np.linspace(0, table.depth_mm, 4))
    mm = np.c_[xs.ravel(), ys.ravel()]
    px = mm @ np.array([[0.95, 0.05], [-0.04, 0.9]]) + (60.0, 40.0)
    return ProjectorDisplay(fit_projector(mm, px, (1280, 800), lens=False))


@pytest.fixture
def app(demo_table):
    source = SyntheticSource(demo_table, paced=False)
    game = TableGame(LiveTable(source, demo_table, source.camera), seed=7)
    return create_app(game, {"TESTING": True, "PROJECTOR": _display(demo_table)})


def _client(app):
    c = app.test_client()
    c.headers = {"X-CSRF-Token": c.get("/api/session").get_json()["csrf"]}
    return c


def _send(c, shapes, page="p1", **extra):
    return c.post("/api/projector/tools", json={"page": page, "shapes": shapes, **extra}, headers=c.headers)


def _kept(app):
    tools = app.extensions.get("projector_tools")
    return tools.shapes() if tools is not None else ()


def _frame(c):
    return c.get("/api/projector/frame").get_json()


def test_a_pages_template_and_ruler_are_kept_and_thrown(app, demo_table):
    c = _client(app)
    r = _send(c, [BLAST, RULER])
    assert r.status_code == 200, r.get_json()
    assert r.get_json() == {"shapes": 2, "pages": 1, "resend_s": 5.0, "forget_s": 15.0}
    blast, ruler = _kept(app)
    assert (blast.role, blast.closed, blast.filled, blast.label) == ("blast", True, False, 'Blast template (3" radius)')
    assert blast.points_mm == tuple(tuple(p) for p in BLAST["points"])
    assert (ruler.role, ruler.closed, ruler.label) == ("ruler", False, "ruler: 5.00 in")
    # In the frame: through the calibration, at the projector's pixels, with the page's names.
    model = app.config["PROJECTOR"].model
    shapes = {s["label"]: s for s in _frame(c)["shapes"] if s["role"] in ("blast", "ruler")}
    assert set(shapes) == {'Blast template (3" radius)', "ruler: 5.00 in"}
    drawn = shapes['Blast template (3" radius)']
    assert drawn["role"] == "blast" and drawn["closed"] and not drawn["filled"]
    want = model.table_to_projector(np.asarray([BLAST["points"][0]], float))[0]
    assert np.allclose(drawn["points"][0], want, atol=0.01)
    assert shapes["ruler: 5.00 in"]["role"] == "ruler" and not shapes["ruler: 5.00 in"]["closed"]
    # Sent again (a drag): the new place replaces the old, nothing is added.
    moved = {**BLAST, "points": _circle(600.0, 400.0, 76.2)}
    assert _send(c, [moved]).status_code == 200
    (blast,) = _kept(app)
    assert blast.points_mm[0] == (676.2, 400.0)
    labels = [s["label"] for s in _frame(c)["shapes"] if s["role"] == "blast"]
    assert labels == ['Blast template (3" radius)']


def test_an_empty_list_clears_a_page_and_two_pages_are_kept_apart(app):
    a, b = _client(app), _client(app)                       # two browsers: two devices
    assert _send(a, [BLAST], page="tab1").status_code == 200
    assert _send(a, [RULER], page="tab2").status_code == 200     # a second tab of the same browser
    other = {**BLAST, "name": "Flame template", "points": [[800.0, 300.0], [900.0, 260.0], [900.0, 340.0]]}
    r = _send(b, [other], page="tab1")                      # the same page id from another browser
    assert r.status_code == 200 and r.get_json()["pages"] == 3
    assert sorted(s.label for s in _kept(app)) == ['Blast template (3" radius)', "Flame template", "ruler: 5.00 in"]
    # One page's empty list clears its own, no one else's.
    r = _send(a, [], page="tab1")
    assert r.status_code == 200 and r.get_json()["shapes"] == 0 and r.get_json()["pages"] == 2
    assert sorted(s.label for s in _kept(app)) == ["Flame template", "ruler: 5.00 in"]
    assert {s["label"] for s in _frame(a)["shapes"] if s["role"] in ("blast", "ruler")} == {"Flame template",
                                                                                            "ruler: 5.00 in"}
    _send(b, [], page="tab1")
    _send(a, [], page="tab2")
    assert _kept(app) == ()
    assert not any(s["role"] in ("blast", "ruler") for s in _frame(a)["shapes"])


BAD = [
    ({"page": "p1"}, '"shapes"'),
    ({"page": "p1", "shapes": {"kind": "template"}}, '"shapes"'),
    ({"page": "p 1!", "shapes": []}, "page must be"),
    ({"page": "x" * 41, "shapes": []}, "page must be"),
    ({"page": "p1", "shapes": [BLAST] * (MAX_TOOL_SHAPES + 1)}, f"at most {MAX_TOOL_SHAPES} shapes"),
    ({"page": "p1", "shapes": [{**BLAST, "points": _circle(500, 400, 50, MAX_TOOL_POINTS + 1)}]},
     f"3 to {MAX_TOOL_POINTS}"),
    ({"page": "p1", "shapes": [{**BLAST, "points": [[0, 0], [10, 0]]}]}, "3 to"),
    ({"page": "p1", "shapes": [{**RULER, "points": [[0, 0]]}]}, "2 to"),
    ({"page": "p1", "shapes": [{**BLAST, "kind": "laser"}]}, "kind must be"),
    ({"page": "p1", "shapes": [RULER, "a circle"]}, "shape 2 must be an object"),
    ({"page": "p1", "shapes": [{**BLAST, "name": 7}]}, "name must be text"),
    ({"page": "p1", "shapes": [{**BLAST, "name": "n" * 81}]}, "at most 80 characters"),
    ({"page": "p1", "shapes": [{**BLAST, "closed": "yes"}]}, "closed must be true or false"),
    ({"page": "p1", "shapes": [{**RULER, "points": [[0, 0], [1, "2"]]}]}, "two numbers"),
    ({"page": "p1", "shapes": [{**RULER, "points": [[0, 0], [1, True]]}]}, "two numbers"),
    ({"page": "p1", "shapes": [{**RULER, "points": [[0, 0], [1, 2, 3]]}]}, "two numbers"),
    ({"page": "p1", "shapes": [{**RULER, "points": [[0, 0], [-TOOL_MARGIN_MM - 1, 0]]}]}, "mm off the"),
    ({"page": "p1", "shapes": [{**RULER, "points": [[0, 0], [0, 1e12]]}]}, "mm off the"),
]


@pytest.mark.parametrize("sent,why", BAD, ids=[w for _, w in BAD])
def test_bad_tools_are_refused_naming_the_problem_and_nothing_kept_changes(app, sent, why):
    c = _client(app)
    assert _send(c, [BLAST], page="p1").status_code == 200
    before = _kept(app)
    r = c.post("/api/projector/tools", json=sent, headers=c.headers)
    assert r.status_code == 400 and why in r.get_json()["error"], r.get_json()
    assert _kept(app) == before


def test_numbers_json_does_not_allow_are_refused(app):
    c = _client(app)
    for raw in (b'{"shapes": [{"kind": "ruler", "points": [[0, 0], [NaN, 1]]}]}',
                b'{"shapes": [{"kind": "ruler", "points": [[0, 0], [1e400, 1]]}]}'):
        r = c.post("/api/projector/tools", data=raw, content_type="application/json", headers=c.headers)
        assert r.status_code == 400 and r.get_json()["error"]
    assert _kept(app) == ()


def test_a_watcher_without_the_pin_may_not_send_tools(demo_table):
    source = SyntheticSource(demo_table, paced=False)
    game = TableGame(LiveTable(source, demo_table, source.camera), seed=7)
    app = create_app(game, {"TESTING": True, "PIN": PIN, "PROJECTOR": _display(demo_table)})
    c = _client(app)
    r = _send(c, [BLAST])
    assert r.status_code == 403 and "PIN" in r.get_json()["error"]
    assert _kept(app) == ()
    assert c.post("/api/login", json={"pin": PIN}, headers=c.headers).status_code == 200
    assert _send(c, [BLAST]).status_code == 200 and len(_kept(app)) == 1


def test_only_everything_throws_the_tools(app):
    c = _client(app)
    _send(c, [BLAST, RULER])
    display = app.config["PROJECTOR"]
    display.set_mode("placements")
    assert not any(s["role"] in ("blast", "ruler") for s in _frame(c)["shapes"])
    display.set_mode("nothing")
    assert _frame(c)["shapes"] == []
    display.set_mode("everything")
    assert {"blast", "ruler"} <= {s["role"] for s in _frame(c)["shapes"]}


def test_a_silent_page_is_forgotten_and_the_pages_kept_are_bounded():
    now = [0.0]
    tools = PlayersTools(forget_s=600.0, max_pages=3, clock=lambda: now[0])
    blast = read_tool_shapes([BLAST], 1200.0, 800.0)
    ruler = read_tool_shapes([RULER], 1200.0, 800.0)
    tools.put("a", blast)
    now[0] = 300.0
    tools.put("b", ruler)
    now[0] = 599.0
    assert tools.shapes() == blast + ruler
    tools.put("a", blast)                              # "a" says them again: kept, in its place
    now[0] = 901.0                                     # "b" silent for 601 s
    assert tools.shapes() == blast and tools.pages() == 1
    now[0] = 1199.0
    assert tools.shapes() == blast                     # "a" heard from 600 s ago: still there
    now[0] = 1199.5
    assert tools.shapes() == ()
    # At most max_pages: the one heard from longest ago goes first.
    for k, page in enumerate("pqrs"):
        now[0] = 2000.0 + k
        tools.put(page, read_tool_shapes([{**RULER, "name": page}], 1200.0, 800.0))
    assert [s.label for s in tools.shapes()] == ["q", "r", "s"]


def test_the_scene_shapes_are_the_pages_outlines():
    (s,) = read_tool_shapes([{"kind": "template", "name": "  Small blast ", "points": [[0, 0], [10, 0], [5, 8.66]]}],
                            1200.0, 800.0)
    assert (s.role, s.closed, s.label, s.points_mm) == ("blast", True, "Small blast", ((0.0, 0.0), (10.0, 0.0), (5.0, 8.7)))
    (r,) = read_tool_shapes([{"kind": "ruler", "points": [[1, 2], [3, 4]]}], 1200.0, 800.0)
    assert (r.role, r.closed, r.label) == ("ruler", False, "the players' ruler")
    # A template hanging over the table's edge is taken; one across the room is not.
    assert read_tool_shapes([{**RULER, "points": [[-50, 0], [1250, 850]]}], 1200.0, 800.0)
    with pytest.raises(ValueError, match="off the 1200 x 800 mm table"):
        read_tool_shapes([{**RULER, "points": [[0, 0], [1200 + TOOL_MARGIN_MM + 1, 0]]}], 1200.0, 800.0)
    assert json.dumps(read_tool_shapes([], 1200.0, 800.0)) == "[]"


def test_random_bodies_are_taken_or_refused_with_a_reason_never_a_failure(app):
    """Random shapes (Hypothesis): a 200 keeps exactly what was sent, anything else is a 400
    saying why and leaves what is kept as it was."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    c = _client(app)
    numbers = st.integers(-2000, 3000) | st.floats(allow_nan=False, allow_infinity=False, width=32)
    point = st.lists(numbers, min_size=1, max_size=3) | numbers | st.none()
    shape = st.fixed_dictionaries({"kind": st.sampled_from(["template", "ruler", "blast"]),
                                   "points": st.lists(point, max_size=6)},
                                  optional={"name": st.text(max_size=90) | st.integers(), "closed": st.booleans() | st.none()})
    body = st.fixed_dictionaries({"shapes": st.lists(shape, max_size=4) | st.none()},
                                 optional={"page": st.sampled_from(["a", "b", "", "a b"])})

    @settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(sent=body)
    def run(sent):
        before = _kept(app)
        r = c.post("/api/projector/tools", json=sent, headers=c.headers)
        assert r.status_code in (200, 400), (sent, r.status_code)
        if r.status_code == 400:
            assert r.get_json()["error"] and _kept(app) == before
        else:
            assert r.get_json()["shapes"] == len(sent["shapes"])
    run()

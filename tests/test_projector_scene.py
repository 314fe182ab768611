"""The projector's scene, made from what the table page is given: real games on the demo table,
seen by the synthetic camera (no projector needed): the acting car's move templates and legal
regions are the rules' overlays ring for ring, Stop The Truck's squares are the board's, the
squares a car may reach and its arcs are its overlays', the live ruler runs from where its move
began to where the camera sees it, a placement the rules ask for is outlined where they put the
car; every roof marker and anchor is under a black mask; and what the display keeps follows the
mode chosen (only placements and masks; nothing)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from calibration.projector import fit_projector
from companion.game import TableGame
from companion.live import LiveTable
from companion.projector import ProjectorDisplay
from companion.projector_scene import MASK_MARGIN_MM, SceneSource, build_scene
from companion.rules.base import rule_system
from vision.render import CarTruth
from vision.sources import SyntheticSource
from tests.conftest import filmer


def _ring(points) -> tuple:
    pts = [(round(float(x), 3), round(float(y), 3)) for x, y in points]
    if len(pts) > 1 and pts[0] == pts[-1]:
        pts = pts[:-1]
    return tuple(pts)


def _rings(polygons) -> list[tuple]:
    return sorted(_ring(r) for poly in polygons for r in poly)


def _shapes(scene, role, closed=None) -> list[tuple]:
    return sorted(_ring(s.points_mm) for s in scene if s.role == role and closed in (None, s.closed))


def _inside_by(poly, p) -> float:
    """How far p lies inside a convex polygon (negative: outside), mm."""
    pts = np.asarray(poly, float)
    cross = lambda u, v: u[0] * v[1] - u[1] * v[0]          # noqa: E731
    sign = np.sign(cross(pts[1] - pts[0], pts[2] - pts[1]))
    best = math.inf
    for a, b in zip(pts, np.roll(pts, -1, axis=0)):
        edge = b - a
        best = min(best, sign * cross(edge, np.asarray(p) - a) / np.hypot(*edge))
    return best


def _covered_by(masks, corners) -> float:
    """How deep every corner lies inside one mask (the best mask), mm."""
    return max(min(_inside_by(m.points_mm, c) for c in corners) for m in masks)


def _display(table) -> ProjectorDisplay:
    """A calibrated display: a projector that sees the table a little turned and shrunk."""
    xs, ys = np.meshgrid(np.linspace(0, table.width_mm, 5), np.linspace(0, table.depth_mm, 4))
    mm = np.c_[xs.ravel(), ys.ravel()]
    px = mm @ np.array([[0.95, 0.05], [-0.04, 0.9]]) + (60.0, 40.0)
    return ProjectorDisplay(fit_projector(mm, px, (1280, 800), lens=False))


def _live(demo_table):
    source = SyntheticSource(demo_table, paced=False)
    return LiveTable(source, demo_table, source.camera)


# --- Shattered Highways: a move template and its legal region, arcs, the live ruler ------------

SH_POSES = (CarTruth(10, 300.0, 200.0, 0.0), CarTruth(11, 420.0, 200.0, 0.0), CarTruth(12, 900.0, 650.0, 0.0),
            CarTruth(13, 700.0, 520.0, 0.0), CarTruth(14, 1000.0, 200.0, 0.0))


@pytest.fixture(scope="module")
def highways(demo_table, renderer):
    live = _live(demo_table)
    live.process(renderer.render(SH_POSES, np.random.default_rng(3)).image, 0, 0.0)
    game = TableGame(live, seed=7)
    game.start("shattered_highways", {}, game.starter_rosters("shattered_highways"))
    game.start_round({"Max": [10, 13, 14], "Furiosa": [12, 11]})
    game.answer_typed([6])
    g = game.answer_typed([2])                     # initiative: Max's Interceptor acts first
    assert g["game"]["state"]["active"] == 10
    return game


def test_the_acting_cars_templates_regions_and_arcs_are_the_rules_overlays(highways, renderer):
    game = highways
    scene = SceneSource(game).scene()
    with game._lock:
        expected = game.session.rules.overlays(game.session.state, 10)
    regions = expected["move_regions"]
    assert regions and any(r.get("template") for r in regions) and expected["arcs"]
    assert _shapes(scene, "template") == _rings([ring for r in regions if r.get("template") for ring in r["template"]])
    assert _shapes(scene, "region") == _rings([poly for r in regions for poly in r["polygons"]])
    assert _shapes(scene, "arc") == _rings([poly for a in expected["arcs"] for poly in a["polygons"]])
    # Outlines, never a flood of light: only the masks are filled.
    assert {s.role for s in scene if s.filled} == {"mask"}
    # The line to each target in its weapons' reach, as the page draws it: the Rust Bucket's.
    targets = game.car(10)["targets"]
    lines = [t["line"] for t in targets if t.get("line") and t["range"]["outcome"] != "out"]
    assert [t["name"] for t in targets if t.get("line") and t["range"]["outcome"] != "out"] == ["Rust Bucket"]
    assert _shapes(scene, "reach", closed=False) == sorted(_ring(line) for line in lines)
    # No car has moved: no ruler yet; no board in this system.
    assert not _shapes(scene, "ruler") and not _shapes(scene, "square")
    # The gates, as the page draws them: the line between the posts of each.
    lines = {(s.points_mm[0], s.points_mm[1]) for s in scene if s.role == "gate" and not s.closed}
    for g in game.live.snapshot()["gates"]:
        assert (tuple(g["a"]), tuple(g["b"])) in lines


def test_every_roof_marker_and_anchor_is_masked(highways, renderer, demo_table):
    scene = SceneSource(highways).scene()
    masks = [s for s in scene if s.role == "mask"]
    assert all(s.filled and s.colour == "#000000" for s in masks)
    for truth in SH_POSES:
        spec = demo_table.car(truth.id)
        corners = renderer.car_marker_corners_mm(spec, truth)[:, :2]
        # The margin, less the camera's error and the scene's half millimetre.
        assert _covered_by(masks, corners) >= MASK_MARGIN_MM - 2.0, spec.name
    for a in demo_table.anchors:
        assert _covered_by(masks, a.corners_mm()) >= MASK_MARGIN_MM - 0.01, f"anchor {a.id}"
    assert len(masks) == len(SH_POSES) + len(demo_table.anchors)


def test_the_live_ruler_runs_from_where_the_move_began_to_where_the_car_stands(highways, renderer):
    game = highways
    start = game.game_json()["activation"]["move_from"]["10"]
    moved = [CarTruth(10, 240.0, 200.0, 0.0), *SH_POSES[1:]]
    frame = renderer.render(moved, np.random.default_rng(4))
    for k in range(1, 17):          # a car put down elsewhere is found by the next full scan
        game.live.process(frame.image, k, k / 15)
    seen = next(c for c in game.live.snapshot()["cars"] if c["id"] == 10)
    assert abs(seen["x_mm"] - 240.0) < 2
    scene = SceneSource(game).scene()
    ruler = [s for s in scene if s.role == "ruler" and not s.closed]
    assert len(ruler) == 1
    (x0, y0), (x1, y1) = ruler[0].points_mm
    assert math.hypot(x0 - start[0], y0 - start[1]) < 0.01
    assert math.hypot(x1 - seen["x_mm"], y1 - seen["y_mm"]) <= 0.5
    # And, as the page's ghost, the outline where it stood (the moved car alone: the others stand still).
    ghosts = [s for s in scene if s.role == "ruler" and s.closed]
    assert [s.label for s in ghosts] == ["where Interceptor stood when this activation began"]
    xs, ys = zip(*ghosts[0].points_mm)
    assert ((max(xs) + min(xs)) / 2, (max(ys) + min(ys)) / 2) == pytest.approx(start[:2], abs=0.01)
    assert max(xs) - min(xs) == pytest.approx(75.0, abs=0.5)


# --- Stop The Truck: squares, reach, a placement; the modes ------------------------------------

@pytest.fixture(scope="module")
def truck(demo_table, renderer):
    """The demo's Stop The Truck game played to the collision that bumps the Rust Bucket into
    square 4,2 (as tests/test_stop_the_truck.py's whole turn does): the scenes on the way."""
    live = _live(demo_table)
    layout = rule_system("stop_the_truck").demo_layout(
        [(c.id, c.name, c.length_mm, c.width_mm) for c in demo_table.cars], (demo_table.width_mm, demo_table.depth_mm))
    standing = {m: list(p) for m, p in layout.items()}
    film = filmer(live, renderer, standing)
    film()
    game = TableGame(live, seed=7)
    source = SceneSource(game)
    out = {"game": game, "source": source}
    game.start("stop_the_truck", {}, game.starter_rosters("stop_the_truck"))
    out["before_round"] = source.scene()
    game.start_round({})
    for m, box in ((10, "2:3"), (11, "2:4"), (12, "2:3"), (13, "2:3"), (14, "2:3 1L")):
        game.act({"act": "select", "vehicle": m, "box": box})
    g = game.act({"act": "declare", "vehicle": 10})
    assert g["game"]["active"] == 11
    with game._lock:
        out["overlays_11"] = game.session.rules.overlays(game.session.state, 11)
    out["board"] = game.game_json()["game"]["board"]
    out["moving"] = source.scene()
    for m, square in ((11, [4, 3]), (12, [3, 7]), (13, [2, 5]), (14, [4, 3])):
        spec = next(a for a in game.car(m)["actions"] if a["act"] == "move")
        standing[m] = spec["place"][0]["pose"]
        film()
        game.act({"act": "move", "vehicle": m})
        film()
    game.act({"act": "collide", "vehicle": 14})
    game.answer_choice("Gang 4", "collide")
    g = game.answer_typed([6])
    out["asked"] = g["pending"]["placement"]
    out["placing"] = source.scene()
    return out


def test_stop_the_trucks_squares_and_the_acting_cars_reach_are_the_boards(truck):
    scene = truck["moving"]
    board = truck["board"]
    assert sum(c["kind"] == "square" for c in board["cells"]) >= 100
    assert _shapes(scene, "square") == sorted(_ring(c["polygon"]) for c in board["cells"])
    cells = truck["overlays_11"]["cells"]
    assert cells and _shapes(scene, "reach", closed=True) == sorted(_ring(c["polygon"]) for c in cells)
    # Before a round no car acts: the board, gates and masks, nothing car-specific.
    assert {s.role for s in truck["before_round"]} == {"square", "gate", "mask"}


def test_a_placement_the_rules_ask_for_is_outlined_where_they_put_the_car(truck, demo_table):
    asked = truck["asked"]
    assert asked["marker"] == 11 and asked["to"] == [419.1, 177.8, 0.0]
    outline = [s for s in truck["placing"] if s.role == "placement" and s.closed and len(s.points_mm) == 4]
    assert len(outline) == 1
    spec = demo_table.car(11)
    xs = [p[0] for p in outline[0].points_mm]
    ys = [p[1] for p in outline[0].points_mm]
    # Heading 0: the footprint's length along x, its width along y, about the asked middle.
    assert max(xs) - min(xs) == pytest.approx(spec.length_mm) and max(ys) - min(ys) == pytest.approx(spec.width_mm)
    assert (max(xs) + min(xs)) / 2 == pytest.approx(419.1) and (max(ys) + min(ys)) / 2 == pytest.approx(177.8)
    # Its front is marked at the +x end (the car faces +x).
    fronts = [s for s in truck["placing"] if s.role == "placement" and s is not outline[0]]
    assert fronts and all(min(p[0] for p in s.points_mm) >= 419.1 + spec.length_mm / 2 - 0.01 for s in fronts)


def test_the_mode_keeps_only_placements_and_masks_or_nothing(truck, demo_table):
    display = _display(demo_table)
    everything = display.frame(truck["placing"])["shapes"]
    assert {"square", "placement", "mask"} <= {s["role"] for s in everything}
    display.set_mode("placements")
    kept = display.frame(truck["placing"])["shapes"]
    assert {s["role"] for s in kept} == {"placement", "mask"}
    assert [s["role"] for s in kept][-1] == "mask"                 # masks drawn last
    # With no placement asked for, "only placements" throws nothing at all.
    assert display.frame(truck["moving"])["shapes"] == []
    display.set_mode("nothing")
    assert display.frame(truck["placing"])["shapes"] == []


def test_without_a_game_only_gates_and_masks(demo_table, renderer):
    live = _live(demo_table)
    live.process(renderer.render(SH_POSES, np.random.default_rng(3)).image, 0, 0.0)
    scene = build_scene(TableGame(live).game_json(), None, live.snapshot(), demo_table)
    assert scene == build_scene(None, None, live.snapshot(), demo_table)
    assert {s.role for s in scene} == {"gate", "mask"}


# --- a book that forbids measuring before declaring: no arcs --------------------------------------

def test_no_arcs_where_the_book_forbids_measuring_before_declaring(highways, monkeypatch):
    """Where the rules forbid measuring before an action is declared (as Car Cult's draft does),
    the page gets no arcs for the acting car (TableGame.car), and neither does the table; its
    move template and region stay."""
    game = highways
    with game._lock:
        raw = game.session.rules.overlays(game.session.state, 10)
    assert raw["arcs"]
    monkeypatch.setattr(game.session.rules, "may_premeasure", lambda: False)
    scene = SceneSource(game).scene()
    assert not [s for s in scene if s.role in ("arc", "reach")]
    assert _shapes(scene, "region") == _rings([p for r in raw["move_regions"] for p in r["polygons"]])

"""Alpha Destructicus's demo table carries its own arena (`demo_scenery`): four gates round the
track, scored the way the demo's cars drive, and the terrain the book has (buildings, a ramp, a
forest, lava, a normal barrier), each reaching the rules as its own kind."""

from __future__ import annotations

import numpy as np
import shapely

from calibration.tablefile import TERRAIN_KINDS
from companion.commands.serve import with_scenery
from companion.dice import FixedChoices, FixedDice
from companion.geometry import Footprint, Pose
from companion.race import gates_from_posts
from companion.rules.base import rule_system
from companion.scene import Scene
from companion.session import GameSession
from companion.table_layout import TableLayout


def arena(demo_table):
    """The demo table with the arena applied, and a game of the starter rosters on it, the cars
    where the demo layout puts them: what `./dev demo --rules alpha_destructicus` plays."""
    rules = rule_system("alpha_destructicus")
    table = with_scenery(demo_table, rules)
    cars = [(c.id, c.name, c.length_mm, c.width_mm) for c in table.cars]
    layout = rules.demo_layout(cars, (table.width_mm, table.depth_mm))
    feet = tuple(Footprint(c.id, Pose(*layout[c.id]), c.length_mm, c.width_mm, c.name) for c in table.cars)
    terrain = TableLayout._terrain(table)
    scene = Scene("alpha_destructicus", table.width_mm, table.depth_mm, feet, terrain, "the demo table",
                  gates_from_posts(table.gates))
    state = rules.new_game(rules.starter_rosters([(c.id, c.name) for c in table.cars]), scene)
    return rules, table, state


def test_the_demo_arena_has_the_books_terrain_and_four_gates_round_the_track(demo_table):
    rules, table, state = arena(demo_table)
    assert all(t.kind in TERRAIN_KINDS for t in table.terrain)         # the table file takes it
    kinds = sorted(t.kind for t in state.terrain.values())           # the rules read their own kinds
    assert kinds == ["barrier", "building", "building", "forest", "lava", "ramp"]
    assert len(state.gates) == 4 and {g.role for g in state.gates} == {"score"}
    for g in state.gates:                                              # "a 4-5 inches wide"
        width = float(shapely.distance(shapely.points(g.a), shapely.points(g.b)))
        assert 4 * 25.4 <= width <= 5 * 25.4, (g.name, width)
    # Nothing stands where a car starts or over an anchor the camera finds the table by.
    cars = [v.footprint().polygon for v in state.vehicles.values()]
    anchors = [shapely.Point(a.x_mm, a.y_mm).buffer(a.size_mm) for a in table.anchors]
    for t in state.terrain.values():
        assert not any(t.polygon.intersects(c) for c in cars + anchors), t.name
    for g in state.gates:
        post_line = shapely.LineString([g.a, g.b])
        assert not any(post_line.intersects(c) for c in cars + anchors), g.name
    # Every freak on foot stands clear of the terrain.
    for f in state.freaks.values():
        if f.pos is not None:
            assert not any(t.polygon.contains(shapely.Point(f.pos)) for t in state.terrain.values()), f.id


def _drive_alone(demo_table, marker, start, inches_on, choices=()):
    """The starter game on the arena with only car `marker` left on the table, put at `start`, its
    engine working; its driver drives it straight on: the drive's outcome."""
    rules, _, st = arena(demo_table)
    for m, v in st.vehicles.items():
        v.removed = m != marker
    v, driver = st.vehicles[marker], st.driver(marker)
    v.pose = Pose(*start)
    if v.engine is not None:
        v.engine.status = "working"
    s = GameSession(rules, st, FixedDice([]), FixedChoices([driver.player]))
    s.start_round({})
    s.dice, s.choices = FixedDice([6, 6]), FixedChoices(list(choices))
    to = v.pose.moved(inches_on * 25.4)
    return s.act({"act": "drive", "freak": driver.id, "vehicle": marker, "to": [to.x_mm, to.y_mm, to.heading_deg]})


def test_the_gates_score_the_way_the_track_runs_and_the_ramp_is_met_from_the_track(demo_table):
    """The track runs anticlockwise round the table (the demo layout's cars drive it that way): each
    gate scores a truck driven 8 in through it along the track, and a truck driven along the near
    straight reaches the ramp's foot and jumps ("Jumping")."""
    _, table, state = arena(demo_table)
    way = {"Near gate": 0.0, "East gate": 90.0, "Far gate": 180.0, "West gate": -90.0}
    assert {g.name for g in state.gates} == set(way)
    starts = {m: state.vehicles[m].pose for m in state.vehicles}
    assert sorted(round(p.heading_deg) for p in starts.values()) == [-90, 0, 0, 90, 180]      # the track's way
    for g in state.gates:
        mid = (np.asarray(g.a) + np.asarray(g.b)) / 2
        h = way[g.name]
        back = Pose(float(mid[0]), float(mid[1]), h).moved(-4 * 25.4)
        out = _drive_alone(demo_table, 12, (back.x_mm, back.y_mm, h), 8)
        assert [x["gate"] for x in out["scored"]] == [g.name], (g.name, out["events"])
    ramp = state.terrain["ramp: Jump"]
    foot = ramp.polygon.bounds
    start = (foot[0] - 5 * 25.4, (foot[1] + foot[3]) / 2, 0.0)
    out = _drive_alone(demo_table, 12, start, 6, choices=[3.0])
    assert out["result"] == "jumped" and out["jump"]["ramp"] == "ramp: Jump", out["events"]


def test_the_arena_scales_with_the_table():
    rules = rule_system("alpha_destructicus")
    big = rules.demo_scenery((1828.8, 1219.2))
    for t in big["terrain"]:
        assert all(0 < x < 1828.8 and 0 < y < 1219.2 for x, y in t["points"]), t
    near = next(g for g in big["gates"] if g["name"] == "Near gate")
    assert near["a_mm"][0] == 914.4

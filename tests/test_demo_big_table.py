"""The demo's game starts on every table it is served on: `companion demo --rules NAME` (one
synthetic camera over the normal demo table) and `--cameras 2` (two over the 6 x 4 ft table,
vision.demo.big_demo_table). Set up as the demo sets it up (companion/commands/serve.py:
the system's demo scenery, its cars on its `demo_layout`, rendered and tracked through the
demo's cameras), then started as `_start_demo_game` starts it, with the starter rosters.
Wasteland Rally's grid once broke its own deployment rule on the big table: its 12 in start
gate left room nearer the gate (wasteland-rally.txt, "Deployment Areas": "as close as
possible to the starting gate"), so the demo game was refused."""

from __future__ import annotations

import pytest

from companion.commands.serve import _demo_cars, with_scenery
from companion.game import TableGame
from companion.live import LiveTable, MultiLiveTable
from companion.rules.base import rule_system, rule_systems
from vision.demo import big_demo_table, demo_table
from vision.multicam import demo_renderers, view_source
from vision.sources import SyntheticSource

FRAMES = 4          # a few frames: each car seen and standing


def _one_camera(system):
    table = with_scenery(demo_table(), system)
    cars = _demo_cars(system, table)
    source = SyntheticSource(table, paced=False, script=cars)
    live = LiveTable(source, table, source.camera)
    for _ in range(FRAMES):
        f = source.read()
        live.process(f.image, f.index, f.time_s)
    return live, cars


def _two_cameras(system):
    table = with_scenery(big_demo_table(), system)
    cars = _demo_cars(system, table)
    renderers = demo_renderers(table, 2)
    sources = [view_source(r, cars, paced=False, name=f"demo camera {i + 1}", seed=i)
               for i, r in enumerate(renderers)]
    live = MultiLiveTable([lambda s=s: s for s in sources], table, [r.camera for r in renderers])
    for _ in range(FRAMES):
        for i, s in enumerate(sources):
            f = s.read()
            live.process_camera(i, f.image, f.index, f.time_s)
    return live, cars


@pytest.mark.parametrize("serve", [_one_camera, _two_cameras], ids=["demo table", "6 x 4 ft table"])
@pytest.mark.parametrize("name", [cls.name for cls in rule_systems()])
def test_the_demo_game_starts(name, serve):
    system = rule_system(name)
    live, cars = serve(system)
    game = TableGame(live)
    seen = {c["id"]: c for c in live.snapshot()["cars"] if not c["stale"]}
    assert set(seen) == {c.id for c in game.table.cars}, "the demo's cameras see every car"
    game.start(name, {}, game.starter_rosters(name))        # raises, naming the fault, if refused
    assert game.session is not None and game.setup["rules"] == name
    placed = {int(m): p.pose for m, p in game.session.rules.pieces(game.session.state).items() if p.pose}
    for marker, pose in placed.items():                     # the game took the cars where the demo put them
        x, y, _ = cars.pose(marker)
        assert abs(pose.x_mm - x) < 3.0 and abs(pose.y_mm - y) < 3.0, marker


def test_wasteland_rallys_grid_fills_the_big_tables_start_gate():
    """On the 6 x 4 ft table the start gate is 12 in: three cars abreast (the widest 36 mm, 2 in
    apart), not two; the fourth and fifth behind."""
    system = rule_system("wasteland_rally")
    table = with_scenery(big_demo_table(), system)
    layout = system.demo_layout([(c.id, c.name, c.length_mm, c.width_mm) for c in table.cars],
                                (table.width_mm, table.depth_mm))
    gate = next(g for g in table.gates if g.role == "start_finish")
    front = sorted(m for m, (x, _, _) in layout.items()
                   if x + next(c.length_mm for c in table.cars if c.id == m) / 2 > gate.a_mm[0] - 5.0)
    assert len(front) == 3
    assert all(x < gate.a_mm[0] for x, _, _ in layout.values())


def test_a_demo_game_that_does_not_start_says_why_on_the_page():
    """Cars that are not on the demo's grid (the scripted convoy): Wasteland Rally refuses the
    game, and the page's notes say why, as the console does."""
    from companion.commands.serve import _start_demo_game
    table = with_scenery(demo_table(), rule_system("wasteland_rally"))
    source = SyntheticSource(table, paced=False)
    live = LiveTable(source, table, source.camera)
    for _ in range(FRAMES):
        f = source.read()
        live.process(f.image, f.index, f.time_s)
    game = TableGame(live)
    _start_demo_game(game, "wasteland_rally")
    assert game.session is None
    said = [n for n in game.game_json()["notes"] if n["kind"] == "warn"]
    assert len(said) == 1 and said[0]["text"].startswith("the demo game did not start: ")
    assert "Deployment Areas" in said[0]["text"] or "start gate" in said[0]["text"]

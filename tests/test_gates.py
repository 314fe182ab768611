"""Gates on the real table: [[gate]] entries in the table file, post markers found
by the camera, and crossings counted from rendered video exactly as the true
poses say (whole car across, the right way, between the posts)."""

from __future__ import annotations

import dataclasses
import math

from importlib import resources

import numpy as np
import pytest

from calibration.tablefile import (AnchorSpec, TableFileError, parse_table, table_from_json,
                                   table_to_json)
from companion.geometry import Gate
from companion.race import Crossing, PathRecorder, RaceTracker, gates_from_posts
from tests.conftest import EXAMPLES
from tests.test_tablefile import GOOD
from vision.gates import GateLocator, track_with_gates
from vision.pipeline import TablePipeline
from vision.render import CarTruth, RenderOptions, TableRenderer

# --- the table file ---------------------------------------------------------------------------

# The table file's own tests' small table, with gates added below.
BASE = GOOD

GATES = BASE + """
[[gate]]
name = "Start"
role = "start_finish"
a_mm = [500, 300]
b_mm = [500, 150]

[[gate]]
name = "Ramp"
role = "checkpoint"
markers = [20, 21]
marker_mm = 40
"""


def test_gates_load_as_measured_posts_or_post_markers():
    table = parse_table(GATES, "race.toml")
    start, ramp = table.gates
    assert (start.name, start.role, start.a_mm, start.b_mm, start.fixed) == (
        "Start", "start_finish", (500.0, 300.0), (500.0, 150.0), True)
    assert (ramp.markers, ramp.marker_mm, ramp.a_mm, ramp.fixed) == ((20, 21), 40.0, None, False)
    assert table.gate("Ramp") is ramp and table.gate("Finish") is None
    assert table.gate_marker_ids == (20, 21)
    # A game file keeps them; one written before gates existed has none.
    assert table_from_json(table_to_json(table)).gates == table.gates
    old = table_to_json(table)
    del old["gates"]
    assert table_from_json(old).gates == ()


def test_the_example_and_demo_tables_have_gates_driven_the_way_their_track_goes():
    from vision.demo import DemoScript, demo_table
    example = parse_table((EXAMPLES / "table.toml").read_text(), "table.toml")
    assert [g.name for g in example.gates] == ["Start/finish"]
    demo = demo_table()
    script = DemoScript(demo)
    for gate in gates_from_posts(demo.gates):
        # Where the convoy's track meets the gate, its heading is the gate's way through.
        s = min(np.linspace(0, script.track.length, 4000),
                key=lambda s: math.dist(script.track.pose_at(s)[:2], np.add(gate.a, gate.b) / 2))
        heading = math.radians(script.track.pose_at(s)[2])
        assert np.dot(gate.normal, [math.cos(heading), math.sin(heading)]) > 0.99, gate.name


def _gate_with(body: str) -> str:
    return BASE + "\n[[gate]]\n" + body


def _at(k: int) -> str:
    """The place of the gate body's k-th line (the [[gate]] header is line 31)."""
    assert BASE.count("\n") + 2 == 31
    return f"race.toml:{31 + k}:"


@pytest.mark.parametrize("body, expected", [
    ('name = "Start"\na_mm = [500, 300]\nb_mm = [500, 280]\n',
     [_at(3), "[[gate]] #1 (Start) b_mm", "20 mm apart", "too narrow"]),
    ('name = "Start"\na_mm = [500, 300]\nb_mm = [1200, 300]\n',
     [_at(3), "[[gate]] #1 (Start) b_mm", "off the 1000 x 800 mm table"]),
    ('name = "Start"\na_mm = [500, 300]\n', ["[[gate]] #1 (Start)", "missing value 'b_mm'"]),
    ('name = "Start"\na_mm = [500]\nb_mm = [500, 100]\n', [_at(2), "a_mm", "[x_mm, y_mm]"]),
    ('name = "Start"\n', [_at(0), "[[gate]] #1 (Start)", "needs its posts"]),
    ('a_mm = [500, 300]\nb_mm = [500, 100]\n', ["[[gate]] #1", "missing value 'name'"]),
    ('name = "Start"\na_mm = [500, 300]\nb_mm = [500, 100]\nmarkers = [20, 21]\nmarker_mm = 40\n',
     [_at(4), "markers", "either measured", "not both"]),
    ('name = "Ramp"\nmarkers = [20, 1]\nmarker_mm = 40\n',
     [_at(2), "[[gate]] #1 (Ramp) markers", "marker id 1 is already used by anchor #2"]),
    ('name = "Ramp"\nmarkers = [10, 21]\nmarker_mm = 40\n', ["markers", "already used by car #1 (Interceptor)"]),
    ('name = "Ramp"\nmarkers = [20, 20]\nmarker_mm = 40\n', ["markers", "each post needs its own"]),
    ('name = "Ramp"\nmarkers = [20, 60]\nmarker_mm = 40\n', ["markers", "marker id 60 is not in DICT_4X4_50"]),
    ('name = "Ramp"\nmarkers = [20, 21]\n', ["[[gate]] #1 (Ramp)", "missing value 'marker_mm'"]),
    ('name = "Ramp"\nmarkers = [20, 21]\nmarker_mm = -4\n', [_at(3), "marker_mm", "more than 0"]),
    ('name = "Ramp"\nmarkers = "20, 21"\nmarker_mm = 40\n', ["markers", "two marker ids"]),
    ('name = "Ramp"\nmarkers = [20, 21]\nmarkermm = 40\n',
     [_at(3), "unknown key 'markermm'", "did you mean 'marker_mm'"]),
    ('name = "Start"\nrole = 3\na_mm = [500, 300]\nb_mm = [500, 100]\n', [_at(2), "role", "must be text"]),
])
def test_gate_mistakes_name_the_line_the_entry_and_the_key(body, expected):
    with pytest.raises(TableFileError) as err:
        parse_table(_gate_with(body), "race.toml")
    for part in expected:
        assert part in str(err.value)


def test_two_gates_may_not_share_a_name_or_a_post_marker():
    two = GATES + '\n[[gate]]\nname = "Start"\na_mm = [100, 300]\nb_mm = [100, 150]\n'
    with pytest.raises(TableFileError, match=r"\[\[gate\]\] #3 \(Start\) name: two gates are named 'Start'"):
        parse_table(two, "race.toml")
    shared = GATES + '\n[[gate]]\nname = "Exit"\nmarkers = [21, 22]\nmarker_mm = 40\n'
    with pytest.raises(TableFileError, match=r"marker id 21 is already used by gate #2 \(Ramp\)"):
        parse_table(shared, "race.toml")


# --- rendered video ---------------------------------------------------------------------------

#: The demo table's own gates (start/finish across the near straight, driven +x;
#: a checkpoint across the far straight, driven -x) and a marker gate, driven +x,
#: whose posts lie on the table as markers 20 (post A) and 21 (post B).
RAMP_A, RAMP_B = (300.0, 580.0), (300.0, 380.0)
POST_MM = 40.0
RACE_TOML = resources.files("vision").joinpath("data/demo_table.toml").read_text() + """
[[gate]]
name = "Ramp"
role = "checkpoint"
markers = [20, 21]
marker_mm = 40.0
"""

STEP_MM = 8.0      # a brisk 240 mm/s at 30 frames a second


@pytest.fixture(scope="module")
def race_table():
    return parse_table(RACE_TOML, "race table")


def _posts_drawn(table, a_mm, b_mm):
    """The table as the renderer draws it: the post markers lie flat like anchors
    (the pipeline is given the real table, where they are gate posts)."""
    posts = (AnchorSpec(20, a_mm[0], a_mm[1], POST_MM), AnchorSpec(21, b_mm[0], b_mm[1], POST_MM))
    return dataclasses.replace(table, anchors=table.anchors + posts)


@pytest.fixture(scope="module")
def race_renderer(race_table, renderer):
    # The demo's own webcam, so the camera file is the same one other tests use.
    return TableRenderer(_posts_drawn(race_table, RAMP_A, RAMP_B), renderer.camera, renderer.rvec,
                         renderer.tvec, RenderOptions(), seed=4)


def _line(x0, y0, x1, y1, heading_deg):
    """Keyframes along a straight, the car pointing `heading_deg` (reversing when it points the other way)."""
    return [(x0, y0, heading_deg), (x1, y1, heading_deg)]


def _arc(cx, cy, r, from_deg, to_deg):
    """Keyframes round a circle (centre, radius), the car pointing along its way."""
    out = []
    sign = 1.0 if to_deg > from_deg else -1.0
    for a in np.linspace(from_deg, to_deg, 37):
        t = math.radians(a)
        heading = math.degrees(math.atan2(sign * math.cos(t), -sign * math.sin(t)))
        out.append((cx + r * math.cos(t), cy + r * math.sin(t), heading))
    return out


def _sample(keys, step_mm):
    """Poses every `step_mm` along the keyframes' path (heading interpolated the short way)."""
    poses = [keys[0]]
    carry = 0.0
    for (x0, y0, h0), (x1, y1, h1) in zip(keys, keys[1:]):
        seg = math.hypot(x1 - x0, y1 - y0)
        dh = ((h1 - h0 + 540.0) % 360.0) - 180.0
        s = step_mm - carry
        while s <= seg + 1e-9:
            u = s / seg
            poses.append((x0 + u * (x1 - x0), y0 + u * (y1 - y0), h0 + u * dh))
            s += step_mm
        carry = seg - (s - step_mm)
    if math.dist(poses[-1][:2], keys[-1][:2]) > 1e-6:
        poses.append(keys[-1])
    return poses


def _script(paths, still_before=3, still_after=6):
    """Frames of CarTruth: every car standing, then each driving its path, then standing."""
    sampled = {car: _sample(keys, STEP_MM) for car, keys in paths.items()}
    n = still_before + max(len(p) for p in sampled.values()) + still_after
    frames = []
    for i in range(n):
        k = i - still_before
        frames.append([CarTruth(car, *p[min(max(k, 0), len(p) - 1)]) for car, p in sampled.items()])
    return frames


#: One video, five cars, each its own scenario (lanes apart, so none hides another):
SCRIPT = {
    # Straight through the start/finish line, the right way.
    10: _line(470.0, 125.0, 750.0, 125.0, 0.0),
    # Round the end of the far checkpoint: a U-turn about post A from its near
    # side to its far side, ending past the line between the posts' ends without
    # ever passing between them.
    11: _line(679.6, 660.0, 679.6, 580.2, -90.0) + _arc(609.6, 580.2, 70.0, 0.0, -180.0)
        + _line(539.6, 580.2, 539.6, 650.0, 90.0),
    # Backwards through the marker gate (driving -x through a gate driven +x).
    12: _line(430.0, 430.0, 170.0, 430.0, 180.0),
    # Up to the start/finish line and stopping half-way across it.
    13: _line(470.0, 200.0, 612.0, 200.0, 0.0),
    # Through the marker gate, reversing back out of it, and through again.
    # (Ends off the 8 mm sampling grid, so no true pose has its rear exactly on the line.)
    14: _line(180.0, 530.0, 423.0, 530.0, 0.0) + _line(423.0, 530.0, 250.0, 530.0, 0.0)[1:]
        + _line(250.0, 530.0, 420.0, 530.0, 0.0)[1:],
}

EXPECTED = {            # what a referee watching would say: (gate, direction) per car, in order
    10: [("Start/finish", +1)],
    11: [],
    12: [("Ramp", -1)],
    13: [],
    14: [("Ramp", +1), ("Ramp", -1), ("Ramp", +1)],
}


def _truth_gates(table):
    measured = gates_from_posts(g for g in table.gates if g.fixed)
    return measured + (Gate(RAMP_A, RAMP_B, "Ramp", "checkpoint"),)


def _by_car(crossings):
    out = {}
    for c in crossings:
        out.setdefault(c.car_id, []).append(c)
    return out


@pytest.fixture(scope="module")
def race_run(race_table, race_renderer):
    """The scripted video through the real pipeline, the camera's gates and the race tracker."""
    frames = _script(SCRIPT)
    seen = RaceTracker.for_table(race_table, laps=1)
    truth = RaceTracker(_truth_gates(race_table), race_table.cars, laps=1)
    paths = PathRecorder()
    rng = np.random.default_rng(21)
    video = (race_renderer.render(cars, rng).image for cars in frames)
    located_posts = []
    for (tracked, gates), cars in zip(track_with_gates(video, race_table, race_renderer.camera), frames):
        located_posts.append(gates)
        seen.update(tracked.frame, tracked.time_s, tracked.cars, gates_from_posts(gates))
        paths.update(tracked.cars)
        truth.update(tracked.frame, tracked.time_s, cars)
    return {"frames": frames, "seen": seen, "truth": truth, "posts": located_posts, "paths": paths,
            "tracked_last": tracked}


def test_the_script_itself_is_what_a_referee_would_call(race_run):
    truth = _by_car(race_run["truth"].crossings)
    assert {car: [(c.gate, c.direction) for c in truth.get(car, [])] for car in SCRIPT} == EXPECTED
    # Car 11 did end up wholly past the far checkpoint's line (only round its end), and
    # car 13 did stop straddling the start/finish line: not counting them is the point.
    from companion.geometry import Footprint, Pose
    last = {c.id: c for c in race_run["frames"][-1]}
    gates = {g.name: g for g in _truth_gates(parse_table(RACE_TOML))}
    u_turn = Footprint(11, Pose(last[11].x_mm, last[11].y_mm, last[11].heading_deg), 72.0, 31.0)
    assert gates["Far checkpoint"].wholly_past(u_turn)
    half = Footprint(13, Pose(last[13].x_mm, last[13].y_mm, last[13].heading_deg), 68.0, 30.0)
    assert not gates["Start/finish"].wholly_past(half) and not gates["Start/finish"].wholly_before(half)


def test_crossings_from_video_are_the_crossings_of_the_true_poses(race_run):
    truth = _by_car(race_run["truth"].crossings)
    seen = _by_car(race_run["seen"].crossings)
    for car in SCRIPT:
        got = seen.get(car, [])
        want = truth.get(car, [])
        assert [(c.gate, c.direction) for c in got] == [(c.gate, c.direction) for c in want], car
        for g, w in zip(got, want):
            # The camera may call the frame one early or late when the rear is within noise of the line.
            assert abs(g.frame - w.frame) <= 1, (car, g, w)
            assert g.seen_throughout
    assert race_run["seen"].net(14, "Ramp") == 1 and race_run["seen"].net(12, "Ramp") == -1
    # Only the car that crossed the start/finish line has started its lap; none has finished one.
    assert [race_run["seen"].net(c, "Start/finish") for c in SCRIPT] == [1, 0, 0, 0, 0]
    assert race_run["seen"].finish_order == []


def test_the_car_stopped_half_way_across_is_really_across_the_line(race_run):
    """Car 13's stop straddles the start/finish line (so not counting it is the point)."""
    last = {c.id: c for c in race_run["tracked_last"].cars}[13]
    gate = race_run["seen"].gates["Start/finish"]
    from companion.geometry import Footprint, Pose
    car = Footprint(13, Pose(last.x_mm, last.y_mm, last.heading_deg), 68.0, 30.0)
    assert gate.distance_past(car, "front") > 20 and gate.distance_past(car, "rear") < -20


def test_marker_gate_posts_are_found_where_they_lie(race_run):
    ramp = {g.name: g for g in race_run["posts"][-1]}["Ramp"]
    assert ramp.placed and ramp.markers == (20, 21)
    assert math.dist(ramp.a_mm, RAMP_A) < 0.5 and math.dist(ramp.b_mm, RAMP_B) < 0.5
    # Its doubt is honest: the true posts lie within twice it (plus rendering's own error).
    assert max(math.dist(ramp.a_mm, RAMP_A), math.dist(ramp.b_mm, RAMP_B)) < 2 * ramp.sigma_mm + 0.1
    start = {g.name: g for g in race_run["posts"][-1]}["Start/finish"]
    assert (start.a_mm, start.b_mm, start.markers) == ((609.6, 232.6), (609.6, 92.6), None)


def test_paths_from_video_follow_the_true_paths(race_run):
    paths = race_run["paths"].paths()
    for car, keys in SCRIPT.items():
        path = paths[car]
        true = _sample(keys, 1.0)
        # Every recorded pose lies on the true path, pointing its way.
        for x, y, h in path:
            nearest = min(true, key=lambda p: math.dist(p[:2], (x, y)))
            assert math.dist(nearest[:2], (x, y)) < 1.5, car
            assert abs(((h - nearest[2] + 540) % 360) - 180) < 3.0, car
        assert math.dist(path[0][:2], keys[0][:2]) < 1.0 and math.dist(path[-1][:2], keys[-1][:2]) < 1.0


def test_a_marker_gate_follows_its_posts_and_moving_it_over_a_standing_car_is_no_crossing(
        race_table, race_renderer, renderer):
    """Someone picks up the ramp's posts and puts them down on the far side of a
    parked car: the gate moves with them, and the car has not crossed it."""
    moved_a, moved_b = (520.0, 580.0), (520.0, 380.0)
    moved = TableRenderer(_posts_drawn(race_table, moved_a, moved_b), renderer.camera, renderer.rvec,
                          renderer.tvec, RenderOptions(), seed=5)
    parked = [CarTruth(14, 420.0, 480.0, 0.0)]           # past the ramp's first place, short of its second
    pipeline = TablePipeline(race_table, renderer.camera, full_scan_every=5)
    posts = GateLocator(race_table)
    race = RaceTracker.for_table(race_table)
    rng = np.random.default_rng(8)
    for i in range(16):
        drawer = race_renderer if i < 6 else moved
        tracked = pipeline.process(drawer.render(parked, rng).image, i, i / 30)
        ramp = {g.name: g for g in posts.update(tracked.located)}["Ramp"]
        race.update(i, i / 30, tracked.cars, gates_from_posts([ramp]))
        if i == 5:
            assert math.dist(ramp.a_mm, RAMP_A) < 0.5
    assert math.dist(ramp.a_mm, moved_a) < 0.5 and math.dist(ramp.b_mm, moved_b) < 0.5
    assert race.gates["Ramp"].a == ramp.a_mm
    assert race.crossings == []


def test_a_post_marker_that_is_not_the_size_the_file_says_is_not_trusted(race_table, renderer):
    """A 60 mm print where the file says 40 mm (or a marker held up off the table)
    would put the post in the wrong place: it is refused, and said why."""
    posts = (AnchorSpec(20, *RAMP_A, 60.0), AnchorSpec(21, *RAMP_B, 60.0))
    wrong = TableRenderer(dataclasses.replace(race_table, anchors=race_table.anchors + posts), renderer.camera,
                          renderer.rvec, renderer.tvec, RenderOptions(), seed=6)
    locator = GateLocator(race_table)
    tracked, gates = next(track_with_gates([wrong.render([]).image], race_table, renderer.camera))
    assert {d.id for d in tracked.located.detections} >= {20, 21}          # the camera did see them
    ramp = {g.name: g for g in gates}["Ramp"]
    assert not ramp.placed and ramp.to_json()["a"] is None
    locator.update(tracked.located)
    assert any("post marker 20 measures 60 mm, not its 40 mm" in p for p in locator.problems)


def test_a_car_unseen_while_it_crosses_is_counted_when_seen_again_and_says_so(race_table, race_renderer):
    """A hand over the car as it drives through: nothing is counted while it is
    unseen (stale), and the crossing is judged, once it is seen again, from where
    it was last seen; the crossing says it was not watched throughout."""
    path = _sample(_line(470.0, 125.0, 750.0, 125.0, 0.0), STEP_MM)
    pipeline = TablePipeline(race_table, race_renderer.camera)
    race = RaceTracker.for_table(race_table)
    rng = np.random.default_rng(9)
    hidden = range(14, 24)                               # the car's rear passes the line in here
    stale_frames = []
    for i, p in enumerate(path):
        truth = CarTruth(10, *p)
        tracked = pipeline.process(race_renderer.render([] if i in hidden else [truth], rng).image, i, i / 30)
        made = race.update(i, i / 30, tracked.cars)
        if i in hidden:
            assert made == []
            stale_frames.append(any(c.stale for c in tracked.cars))
    assert all(stale_frames)
    (crossing,) = race.crossings
    assert (crossing.gate, crossing.direction, crossing.frame) == ("Start/finish", 1, hidden.stop)
    assert crossing.from_frame == hidden.start - 1 and not crossing.seen_throughout


# --- the race tracker alone: laps, finishing order, stale cars, cost -------------------------

class _Car:
    def __init__(self, id, length_mm=75.0, width_mm=32.0):
        self.id, self.length_mm, self.width_mm = id, length_mm, width_mm


LINE = Gate((500.0, 300.0), (500.0, 100.0), "Line", "start_finish")


def _pose(car, x, y=200.0, heading=0.0, stale=False):
    return {"id": car, "x_mm": x, "y_mm": y, "heading_deg": heading, "stale": stale, "sigma_mm": 0.2}


def test_laps_count_at_the_start_finish_gate_and_the_finish_order_is_who_crossed_first():
    race = RaceTracker([LINE], [_Car(1), _Car(2)], laps=2)
    frame = 0

    def step(poses):
        nonlocal frame
        race.update(frame, frame / 30, poses)
        frame += 1

    def through(start1, start2):
        """Both cars drive through the line, car 1 at y 250, car 2 at y 150."""
        for k in range(20):
            step([_pose(1, start1 + 10 * k, 250), _pose(2, start2 + 10 * k, 150)])

    def round_the_end():
        """Both cars drive back to the grid round the outside of post A (y > 300): no crossing."""
        for x in np.arange(600, 410, -10.0):
            step([_pose(1, x, 400, 180), _pose(2, x - 5, 450, 180)])

    through(420, 410)                          # the start: their first crossing begins lap 1
    assert (race.laps(1), race.laps(2)) == (0, 0)
    round_the_end()
    assert [c.direction for c in race.crossings] == [1, 1]
    through(420, 430)
    assert (race.laps(1), race.laps(2)) == (1, 1)
    round_the_end()
    through(420, 440)                          # car 2 a little ahead: it finishes first
    assert (race.laps(1), race.laps(2)) == (2, 2)
    assert race.finish_order == [2, 1]
    assert race.finish(2).frame < race.finish(1).frame
    # Car 1 backs over the line: it has not finished after all.
    for x in np.arange(600, 500, -10.0):
        step([_pose(1, x, 250), _pose(2, 640, 150)])
    assert race.laps(1) == 1 and race.finish_order == [2]


def test_two_cars_finishing_in_one_frame_are_ordered_by_how_far_past_they_are():
    race = RaceTracker([Gate((500.0, 300.0), (500.0, 100.0), "Flag", "finish")], [_Car(1), _Car(2)])
    race.update(0, 0.0, [_pose(1, 460, 250), _pose(2, 460, 150)])
    race.update(1, 0.1, [_pose(1, 545, 250), _pose(2, 560, 150)])
    assert race.finish_order == [2, 1]
    assert race.finish(1).margin_mm == pytest.approx(545 - 37.5 - 500)


def test_a_stale_pose_never_crosses_a_gate():
    race = RaceTracker([LINE], [_Car(1)])
    race.update(0, 0.0, [_pose(1, 440)])
    # The tracker marks a car stale when it was not seen; even a stale pose on the far side is not a move.
    race.update(1, 0.03, [_pose(1, 600, stale=True)])
    race.update(2, 0.07, [_pose(1, 440)])
    assert race.crossings == []
    race.update(3, 0.1, [_pose(1, 600)])
    assert [(c.frame, c.direction) for c in race.crossings] == [(3, 1)]


def test_cars_not_in_the_race_and_unknown_gates_are_refused_or_ignored():
    race = RaceTracker([LINE], [_Car(1)])
    race.update(0, 0.0, [_pose(99, 440)])
    race.update(1, 0.1, [_pose(99, 600)])
    assert race.crossings == []
    with pytest.raises(ValueError, match="no gate named 'Finish'"):
        RaceTracker([LINE], [_Car(1)], start_finish="Finish")
    with pytest.raises(ValueError, match="two gates are named 'Line'"):
        RaceTracker([LINE, LINE], [_Car(1)])


def test_a_pack_driving_through_four_gates_crosses_each_gate_it_reaches_once():
    """Five cars, four gates, 30 frames a second (what a frame costs is bench/gates.py's to say)."""
    gates = [Gate((x, 300.0), (x, 100.0), f"g{x:.0f}") for x in (200.0, 400.0, 600.0, 800.0)]
    race = RaceTracker(gates, [_Car(i) for i in range(5)])
    frames = 300
    for f in range(frames):
        race.update(f, f / 30, [_pose(i, 100 + 2.5 * f + 7 * i, 130 + 30 * i) for i in range(5)])
    # Every car went through every gate it reached, once.
    assert len(race.crossings) == sum(1 for i in range(5) for g in gates
                                      if 100 + 2.5 * (frames - 1) + 7 * i - 37.5 > g.a[0])


def test_crossings_say_themselves_as_json():
    c = Crossing(10, "Start/finish", 1, 42, 1.4, 3.21234, 0.2, 41)
    assert c.to_json() == {"car": 10, "gate": "Start/finish", "direction": 1, "frame": 42, "time_s": 1.4,
                           "margin_mm": 3.21, "sigma_mm": 0.2, "from_frame": 41}


# --- the live table and the page --------------------------------------------------------------

def test_the_live_snapshot_carries_the_gates_with_their_posts_as_last_seen(race_table, race_renderer):
    from companion.live import LiveTable
    from companion.web import create_app
    live = LiveTable(lambda: None, race_table, race_renderer.camera)
    before = {g["name"]: g for g in live.snapshot()["gates"]}
    assert before["Start/finish"]["a"] == [609.6, 232.6] and before["Start/finish"]["role"] == "start_finish"
    assert before["Ramp"]["a"] is None and before["Ramp"]["source"] == "markers"   # not seen yet
    assert [g.name for g in live.gates()] == ["Start/finish", "Far checkpoint"]
    live.process(race_renderer.render([CarTruth(10, 400.0, 200.0, 0.0)]).image, 0, 0.0)
    after = {g["name"]: g for g in live.snapshot()["gates"]}
    assert math.dist(after["Ramp"]["a"], RAMP_A) < 0.5 and math.dist(after["Ramp"]["b"], RAMP_B) < 0.5
    assert after["Ramp"]["frame_seen"] == 0 and after["Ramp"]["sigma_mm"] < 0.5
    ramp = next(g for g in live.gates() if g.name == "Ramp")
    assert ramp.role == "checkpoint" and ramp.normal @ [1.0, 0.0] > 0.999          # driven +x, as laid
    # The snapshot's gates are a scene file's gates, so a rule system can read them as such.
    from companion.scene import parse_scene
    scene = parse_scene({"rules": "wasteland_rally", "table": {"width_mm": 1219.2, "depth_mm": 812.8},
                         "cars": [], "gates": [g for g in live.snapshot()["gates"] if g["a"]]})
    assert [g.name for g in scene.gates] == ["Start/finish", "Far checkpoint", "Ramp"]
    state = create_app(live, {"TESTING": True}).test_client().get("/api/state").get_json()
    assert [g["name"] for g in state["gates"]] == ["Start/finish", "Far checkpoint", "Ramp"]


@pytest.mark.browser
def test_the_page_draws_each_gate_with_its_posts_name_and_the_way_through(chromium):
    """Wasteland Rally's demo gates on the page (the demo of a system without gates shows
    none): a line between the posts where its demo scenery puts them, and the arrow
    pointing the way the cars drive through."""
    import re
    import subprocess
    import sys
    sync_api = pytest.importorskip("playwright.sync_api")
    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--rules", "wasteland_rally", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        url = None
        for _ in range(20):                   # the server may say other things before its address
            found = re.search(r"(http://127\.0\.0\.1:\d+/)", proc.stdout.readline())
            if found:
                url = found.group(1)
                break
        assert url, "the demo server did not say where it listens"
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url)
            page.wait_for_selector('#gates [data-gate="Far checkpoint"]', timeout=20000)
            drawn = page.evaluate("""() => [...document.querySelectorAll('#gates .gate')].map(g => ({
                name: g.dataset.gate, role: g.dataset.role,
                label: g.querySelector('text').textContent,
                line: ['x1', 'y1', 'x2', 'y2'].map(k => +g.querySelector('line').getAttribute(k)),
                arrow: g.querySelector('.gate-arrow').getAttribute('d').match(/-?[0-9.]+/g).map(Number)}))""")
            from pathlib import Path
            from tests.test_browser import ARTIFACTS
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(Path(ARTIFACTS) / "gates.png"))
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
    depth = 812.8
    gates = {g["name"]: g for g in drawn}
    assert set(gates) == {"Start/finish", "Far checkpoint"}
    assert gates["Start/finish"]["role"] == "start_finish" and gates["Start/finish"]["label"] == "Start/finish"
    # Posts where the table file puts them (the page's y runs down from the far edge).
    from companion.rules.base import rule_system
    posts = {g["name"]: g for g in rule_system("wasteland_rally").demo_scenery((1219.2, depth))["gates"]}
    a, b = posts["Start/finish"]["a_mm"], posts["Start/finish"]["b_mm"]
    assert gates["Start/finish"]["line"] == pytest.approx([a[0], depth - a[1], b[0], depth - b[1]])
    for name, way in (("Start/finish", (1.0, 0.0)), ("Far checkpoint", (-1.0, 0.0))):
        tail_x, tail_y, tip_x, tip_y = gates[name]["arrow"][:4]
        along = np.array([tip_x - tail_x, -(tip_y - tail_y)])       # back to the table frame
        assert along @ way / np.linalg.norm(along) > 0.99, name

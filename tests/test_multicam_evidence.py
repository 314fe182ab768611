"""A verdict on a table under two cameras is measured from the latest frame set's own poses
(each camera's latest frame's located cars, a car both see combined by inverse covariance as
vision.multicam combines cameras, without the tracker's fade), every camera frame that gave a
judged car's pose is kept in the game file naming its camera, and the audit measures it again
from those stored frames to the same poses and verdicts."""

from __future__ import annotations

import math
import numpy as np
import pytest

from companion.audit import drawing, drawn_frame, pose_sources
from companion.game import TableGame
from companion.live import MultiLiveTable
from companion.record import remeasure
from companion.store import GameStore, verify
from vision.evidence import decode_jpeg
from vision.multicam import combine_frames, position_variance
from vision.render import CarTruth, RenderOptions, TableRenderer, region_camera

from tests.test_multicam import ListSource

#: The Interceptor (10) in the middle, where both cameras see it; the Rust Bucket (11) just
#: ahead of it, in its gun's 6 in, where only camera 2 (the right half) sees it; the Buggy
#: (13) only in camera 1's view.
POSES = (CarTruth(10, 640.0, 300.0, 0.0), CarTruth(11, 790.0, 300.0, 0.0), CarTruth(12, 900.0, 650.0, 0.0),
         CarTruth(13, 200.0, 520.0, 0.0), CarTruth(14, 1000.0, 200.0, 0.0))
SHOT = {"act": "shoot", "warrior": "Max:10:W1", "target": 11, "at": "vehicle"}


def two_views(table):
    """Square 1080 px webcams over the left 60 % and the right 60 % of the demo table (each
    sees four anchors: two corners and the middle of the near and far edges); a little
    different heights, as two calibrated cameras never match exactly."""
    out = []
    w, d = table.width_mm, table.depth_mm
    for i, (region, height) in enumerate([((0, 0, 0.6 * w, d), 1000.0), ((0.4 * w, 0, w, d), 1050.0)]):
        camera, rvec, tvec = region_camera(table, region, width=1080, height=1080, height_mm=height,
                                           source=f"synthetic camera {i + 1}")
        out.append(TableRenderer(table, camera, rvec, tvec, RenderOptions(), seed=i))
    return out


def _game_through_two_cameras(demo_table, poses, path):
    """The demo's two cameras, each given the cars at `poses` twice, and a Shattered Highways
    game started on them, recorded at `path`."""
    renderers = two_views(demo_table)
    live = MultiLiveTable([ListSource([], "left"), ListSource([], "right")], demo_table,
                          [r.camera for r in renderers])
    rng = np.random.default_rng(5)
    frames = [r.render(poses, rng) for r in renderers]
    for k in range(2):
        for i, frame in enumerate(frames):
            live.process_camera(i, frame.image, k, k / 15)
    game = TableGame(live, store=GameStore(path), seed=3)
    game.start("shattered_highways", {}, game.starter_rosters())
    return live, game


@pytest.fixture(scope="module")
def played(tmp_path_factory, demo_table):
    """A game through two cameras, recorded: a shot from the Interceptor at the Rust Bucket;
    a round (the Interceptor, first, held where its activation began, from both cameras'
    frames); the same shot again."""
    path = tmp_path_factory.mktemp("multicam") / "game.db"
    live, game = _game_through_two_cameras(demo_table, POSES, path)
    views = live.frame_set()
    game.act(SHOT)
    game.answer_typed([5])
    game.answer_typed([4])
    game.start_round({"Max": [10, 13, 14], "Furiosa": [12, 11]})
    game.answer_typed([6])
    game.answer_typed([2])
    game.act(SHOT)                 # again, the Interceptor now held where its activation began
    game.answer_typed([5])
    game.answer_typed([4])
    game.store.close()
    return path, views, live


def test_the_frame_sets_poses_combine_each_cameras_own_poses(played):
    _, views, _ = played
    assert [name for name, _, _ in views] == ["camera 1", "camera 2"]
    per = [{c.id: c for c in t.located.cars} for _, _, t in views]
    assert 10 in per[0] and 10 in per[1] and 11 in per[1] and 11 not in per[0] and 13 not in per[1]
    poses, given = combine_frames(per)
    assert given[10] == (0, 1) and given[11] == (1,) and given[13] == (0,)
    # A car one camera sees keeps that frame's numbers exactly; one both see is tighter than either.
    c = per[1][11]
    assert poses[11] == (c.x_mm, c.y_mm, c.heading_deg, c.sigma_mm, c.sigma_deg)
    a, b = per[0][10], per[1][10]
    assert poses[10][3] < min(a.sigma_mm, b.sigma_mm)
    w = [1 / position_variance(a.sigma_mm), 1 / position_variance(b.sigma_mm)]
    assert poses[10][0] == pytest.approx((w[0] * a.x_mm + w[1] * b.x_mm) / sum(w), abs=1e-9)
    assert min(a.x_mm, b.x_mm) <= poses[10][0] <= max(a.x_mm, b.x_mm)


def test_the_record_keeps_every_cameras_frame_that_gave_a_judged_pose(played):
    path, views, _ = played
    assert verify(path)[0]
    store = GameStore(path, create=False)
    events = store.events()
    shot = next(e for e in events if e.kind == "resolution" and e.body["detail"] == SHOT)
    items = shot.body["evidence"]
    # Both frames, in camera order, each with the cars it gave a pose and its camera.
    assert [i["camera"] for i in items] == ["camera 1", "camera 2"]
    by_camera = {i["camera"]: set(i["cars"]) for i in items}
    assert 10 in by_camera["camera 1"] and {10, 11} <= by_camera["camera 2"]
    assert 11 not in by_camera["camera 1"]
    for item, (name, _, tracked) in zip(items, views):
        ev = store.evidence(item["ref"]["id"])
        assert ev["jpeg"][:2] == b"\xff\xd8"
        # Its own detections and table pose, with its own camera's fingerprint.
        assert {d["id"] for d in ev["detections"]} == {d.id for d in tracked.located.detections}
        assert ev["table_pose"]["camera"]["source"] == f"synthetic {name}"
    fingerprints = {store.evidence(i["ref"]["id"])["table_pose"]["camera"]["fingerprint"] for i in items}
    assert len(fingerprints) == 2
    assert "camera 1 " in shot.body["calibration"] and "camera 2 " in shot.body["calibration"]
    # The car only camera 2 sees has a frame pose: camera 2's, exactly.
    cam2 = next(t for n, _, t in views if n == "camera 2")
    rust = next(c for c in cam2.located.cars if c.id == 11)
    assert shot.body["poses"]["11"][:3] == [rust.x_mm, rust.y_mm, rust.heading_deg]
    # The held Interceptor: both cameras' frames, at the combined pose.
    hold = next(e for e in events if e.kind == "hold" and e.body["vehicle"] == 10)
    assert [i["camera"] for i in hold.body["evidence"]] == ["camera 1", "camera 2"]


@pytest.mark.parametrize("which, kind", [(0, "frame"), (1, "hold")])
def test_measured_again_from_the_stored_frames_gives_the_same_poses_and_verdicts(played, which, kind):
    path, _, _ = played
    store = GameStore(path, create=False)
    events = store.events()
    shot = [e for e in events if e.kind == "resolution" and e.body["detail"] == SHOT][which]
    again = remeasure(store, shot.seq)
    assert again["same"] and again["changed"] == [], again
    assert again["verdicts"] and all(v["same"] for v in again["verdicts"])
    assert {v["what"] for v in again["verdicts"]} == {"range", "arc"}
    rows = {p["vehicle"]: p for p in again["poses"]}
    assert all(p["difference_mm"] in (None, 0.0) for p in rows.values())
    # The Rust Bucket, only camera 2 sees, located again from camera 2's frame.
    assert rows[11]["again"] is not None and rows[11]["from"] == f"the frame of event {shot.seq} from camera 2"
    sources = pose_sources(store, events, shot)
    # The Interceptor (the shot's own frames, or those it was held from where its activation
    # began): both cameras' frames located again and combined to the recorded pose, to the
    # last bit the frames give.
    src = sources[10]
    assert src["kind"] == kind and isinstance(src["evidence"], list) and len(src["evidence"]) == 2
    assert "camera 1 and camera 2" in src["from"] and src["changed"] is None
    assert abs(src["location"].x_mm - shot.body["poses"]["10"][0]) <= 1e-6
    assert abs(src["location"].y_mm - shot.body["poses"]["10"][1]) <= 1e-6
    # The whole file verifies and measures again (audit verify's playback).
    from companion.record import check_playback
    ok, text, counts = check_playback(store)
    assert ok and counts["measured_again"] >= 1 and counts["differ"] == [], text


def test_a_changed_camera_2_frame_is_said_changed(played, tmp_path):
    """The record names camera 2's frame for the Rust Bucket: a frame there that is not the
    one recorded is found, not measured as if it were."""
    import shutil
    import sqlite3
    path, _, _ = played
    copy = tmp_path / "changed.db"
    shutil.copy(path, copy)
    store = GameStore(copy, create=False)
    shot = next(e for e in store.events() if e.kind == "resolution" and e.body["detail"] == SHOT)
    cam2 = next(i for i in shot.body["evidence"] if i["camera"] == "camera 2")["ref"]["id"]
    store.close()
    db = sqlite3.connect(copy)
    db.executescript("DROP TRIGGER IF EXISTS evidence_append_only_u;")
    db.execute("UPDATE evidence SET jpeg = substr(jpeg, 1, length(jpeg) - 10) WHERE id = ?", (cam2,))
    db.commit()
    db.close()
    again = remeasure(GameStore(copy, create=False), shot.seq)
    assert not again["same"] and any(f"evidence {cam2} was changed" in c for c in again["changed"]), again


def test_the_audit_draws_each_cameras_frame_named(played):
    """The audit picture of a verdict from two cameras: each camera's frame with the
    measurement drawn on its own table pose, one above the other."""
    path, views, _ = played
    store = GameStore(path, create=False)
    shot = next(e for e in store.events() if e.kind == "resolution" and e.body["detail"] == SHOT)
    shapes, _ = drawing(store, shot.seq)
    assert shapes
    whole = decode_jpeg(drawn_frame(store, shot.seq))
    h, w = views[0][1].shape[:2]
    assert whole.shape[1] == w and whole.shape[0] == 2 * h
    # Each half is its camera's frame drawn on (the measurement changed pixels there).
    for k, (name, image, _) in enumerate(views):
        half = whole[k * h:(k + 1) * h].astype(int)
        assert np.abs(half - image.astype(int)).mean() > 0.5, name
    near = decode_jpeg(drawn_frame(store, shot.seq, zoom=True))
    assert near is not None and near.shape[0] > near.shape[1] / 2


def test_the_camera_picture_of_each_camera(played, demo_table):
    """/api/camera.jpg?camera=N: camera N's latest frame, drawn on; the first by default; a
    camera the table does not have is refused by its number."""
    from companion.web import create_app
    live = played[2]
    client = create_app(TableGame(live, seed=1), {"TESTING": True}).test_client()
    pictures = {}
    for query in ("", "?camera=1", "?camera=2"):
        r = client.get(f"/api/camera.jpg{query}")
        assert r.status_code == 200 and r.mimetype == "image/jpeg", query
        pictures[query] = decode_jpeg(r.data)
    assert np.abs(pictures[""].astype(int) - pictures["?camera=1"].astype(int)).mean() < 1.0
    assert np.abs(pictures["?camera=2"].astype(int) - pictures["?camera=1"].astype(int)).mean() > 5.0
    image, _ = live.camera_image(2)
    assert np.abs(pictures["?camera=2"].astype(int) - image.astype(int)).mean() < 8.0
    r = client.get("/api/camera.jpg?camera=3")
    assert r.status_code == 404 and "there is no camera 3" in r.get_json()["error"]
    assert client.get("/api/camera.jpg?camera=two").status_code == 400


def test_the_picture_note_is_the_worst_cameras_named(played):
    """The page's one note on the camera picture, with several cameras: the worst camera's
    verdict, each camera's advice led by its name."""
    from companion.live import _worst_quality
    snap = played[2].snapshot()
    assert set(snap["quality"]["cameras"]) == {"camera 1", "camera 2"}
    assert snap["quality"]["verdict"] in ("ok", "marginal", "poor")
    cams = [{"name": "camera 1", "quality": {"verdict": "ok", "advice": [], "markers": 4}},
            {"name": "camera 2", "quality": {"verdict": "poor", "advice": ["the markers are 9 px across"],
                                             "markers": 3}}]
    note = _worst_quality(cams)
    assert note["verdict"] == "poor" and note["advice"] == ["camera 2: the markers are 9 px across"]
    assert _worst_quality(cams[:1]) is None                 # one camera: its own note, as before


def test_the_rectified_view_shows_what_every_camera_sees(played):
    """The picture under the table: camera 1's frame mapped onto the table, camera 2's filling
    the part of the table camera 1 does not see (the right edge)."""
    from vision.overlay import Rectifier
    live = played[2]
    image, tracked = live.last_image()
    alone = Rectifier(live.table)(image, tracked.located.table_pose)
    both = live.rectify(image, tracked.located.table_pose)
    assert both.shape == alone.shape
    right = slice(int(alone.shape[1] * 0.92), alone.shape[1])
    assert alone[:, right].mean() < 5 and both[:, right].mean() > 40            # camera 2 fills it
    left = slice(0, int(alone.shape[1] * 0.3))
    assert np.array_equal(both[:, left], alone[:, left])                      # camera 1's own, untouched


#: The Interceptor at the left edge of camera 2's view (a marker within one of its own sides
#: of the image's border), where camera 1 sees it whole: the live fusion takes camera 1's
#: pose alone (vision.multicam EDGE_SIDES); the Rust Bucket ahead of it in the overlap.
EDGE_POSES = (CarTruth(10, 450.0, 300.0, 0.0), CarTruth(11, 600.0, 300.0, 0.0)) + POSES[2:]


@pytest.fixture(scope="module")
def at_the_edge(tmp_path_factory, demo_table):
    """A shot from the Interceptor, at camera 2's view edge, recorded."""
    path = tmp_path_factory.mktemp("multicam-edge") / "game.db"
    live, game = _game_through_two_cameras(demo_table, EDGE_POSES, path)
    from companion.game_evidence import EvidenceTrail
    evidence = EvidenceTrail(live).frame_poses()
    game.act(SHOT)
    game.answer_typed([5])
    game.answer_typed([4])
    game.store.close()
    return path, live, evidence


def test_a_sighting_at_a_views_edge_is_left_out_of_the_evidence_as_the_live_pose_leaves_it(at_the_edge):
    """The reviewer's 9 mm step back in the overlap: the verdict's pose mixed in camera 2's
    sighting at its view's edge, which the live pose never lets join. The evidence now takes
    the frames the live fusion trusts: camera 1's alone, to the live pose's numbers."""
    _, live, (poses, frame_set) = at_the_edge
    fused = live.multi.last
    cam1, cam2 = live.multi.cameras
    assert 10 in cam2.at_edge() and 10 not in cam1.at_edge()
    assert 10 in {c.id for c in cam2.last.located.cars}           # camera 2 does see it
    assert fused.seen_by[10] == ("camera 1",)
    assert frame_set.given[10] == (0,)
    own = next(c for c in cam1.last.located.cars if c.id == 10)
    assert (poses[10].x_mm, poses[10].y_mm, poses[10].heading_deg) == (own.x_mm, own.y_mm, own.heading_deg)
    # The live pose is camera 1's tracker's (its frames averaged): the same sighting, a hair apart.
    live_pose = fused.car(10)
    assert math.hypot(poses[10].x_mm - live_pose.x_mm, poses[10].y_mm - live_pose.y_mm) < 0.05
    # The Rust Bucket, clear of both views' edges, is still combined from both.
    assert frame_set.given[11] == (0, 1) and fused.seen_by[11] == ("camera 1", "camera 2")


def test_the_edge_cars_record_names_only_the_trusted_frame_and_measures_again_the_same(at_the_edge):
    path, _, _ = at_the_edge
    store = GameStore(path, create=False)
    shot = next(e for e in store.events() if e.kind == "resolution" and e.body["detail"] == SHOT)
    by_camera = {i["camera"]: set(i["cars"]) for i in shot.body["evidence"]}
    assert 10 in by_camera["camera 1"] and 10 not in by_camera["camera 2"] and 11 in by_camera["camera 2"]
    again = remeasure(store, shot.seq)
    assert again["same"] and again["changed"] == [], again
    assert again["verdicts"] and all(v["same"] for v in again["verdicts"])
    rows = {p["vehicle"]: p for p in again["poses"]}
    assert rows[10]["from"] == f"the frame of event {shot.seq} from camera 1"
    assert all(p["difference_mm"] in (None, 0.0) for p in rows.values())


def test_combine_frames_keeps_to_the_trusted_frames():
    """`trusted` leaves out a car's other frames; a car it does not name (or names no frame
    that sees it) takes every frame; one camera's numbers stay untouched."""
    from types import SimpleNamespace as Car
    a = Car(x_mm=100.0, y_mm=50.0, heading_deg=10.0, sigma_mm=0.5, sigma_deg=0.5)
    b = Car(x_mm=109.0, y_mm=50.0, heading_deg=12.0, sigma_mm=0.2, sigma_deg=0.2)
    frames = [{1: a, 2: a}, {1: b, 2: b}]
    poses, given = combine_frames(frames, {1: (0,), 2: (5,)})
    assert given == {1: (0,), 2: (0, 1)}
    assert poses[1] == (100.0, 50.0, 10.0, 0.5, 0.5)
    assert 100.0 < poses[2][0] < 109.0
    assert combine_frames(frames) == combine_frames(frames, {})


def test_a_verdicts_frames_are_each_cameras_nearest_in_capture_time(demo_table):
    """The Interceptor driven 12 mm between camera 2's two latest frames: camera 1's latest
    frame (the older of the cameras' latest) sets the instant, and camera 2 gives its frame
    captured nearest it, 10 ms before, not its latest, 60 ms after; so both frames show the
    car where it stood at that instant, and the verdict's pose is not half-way between."""
    renderers = two_views(demo_table)
    live = MultiLiveTable([ListSource([], "left"), ListSource([], "right")], demo_table,
                          [r.camera for r in renderers])
    rng = np.random.default_rng(5)
    moved = (CarTruth(10, 652.0, 300.0, 0.0),) + POSES[1:]
    still = [r.render(POSES, rng).image for r in renderers]
    later = renderers[1].render(moved, rng).image
    for k in range(3):                  # both cameras join the Interceptor's fusion
        live.process_camera(1, still[1], k, k / 10, captured_at=9.69 + k / 10)
        live.process_camera(0, still[0], k, k / 10, captured_at=9.70 + k / 10)
    live.process_camera(1, still[1], 3, 0.3, captured_at=9.99)
    live.process_camera(0, still[0], 3, 0.3, captured_at=10.00)
    live.process_camera(1, later, 4, 0.4, captured_at=10.06)
    views, trusted = live.fused_frame_set()
    assert [(name, t.frame) for name, _, t in views] == [("camera 1", 3), ("camera 2", 3)]
    assert trusted[10] == (0, 1)
    poses, given = combine_frames([{c.id: c for c in t.located.cars} for _, _, t in views], trusted)
    assert given[10] == (0, 1) and abs(poses[10][0] - 640.0) < 1.0
    # Each camera's latest frame (what the verdict was measured from before) mixes the two instants.
    latest = live.frame_set()
    assert [t.frame for _, _, t in latest] == [3, 4]
    mixed, _ = combine_frames([{c.id: c for c in t.located.cars} for _, _, t in latest], trusted)
    assert abs(mixed[10][0] - 640.0) > 3.0
    # The evidence trail measures from the paired frames.
    from companion.game_evidence import EvidenceTrail
    frame_poses, frame_set = EvidenceTrail(live).frame_poses()
    assert frame_poses[10].x_mm == poses[10][0] and frame_set.frames[1][2] is views[1][2].located

"""Cameras that share no anchor, followed: the warning is not only the first frames' (serve's
check at start) but follows each camera's latest anchors, so a camera that later loses its
shared anchors (turned, an anchor taken away) is warned about on the page's notes, and one
that gains one again is said fixed; a hand over an anchor for a moment says nothing."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from companion.live import MultiLiveTable
from vision.multicam import SharedAnchorWatch, unshared_anchors
from vision.render import CarTruth, RenderOptions, TableRenderer, region_camera

from tests.test_multicam import ListSource

POSES = (CarTruth(10, 640.0, 300.0, 0.0), CarTruth(11, 900.0, 650.0, 0.0), CarTruth(13, 200.0, 520.0, 0.0))


def test_the_watch_says_a_change_once_it_holds():
    watch = SharedAnchorWatch(["camera 1", "camera 2"], hold_sets=3)
    shared, apart = [[0, 3, 4], [1, 2, 4]], [[0, 3, 7], [1, 2, 6]]
    assert [watch.update(shared) for _ in range(5)] == [None] * 5
    # A moment apart (a hand over anchor 4) says nothing, nor does a camera not known now.
    assert watch.update(apart) is None and watch.update(apart) is None and watch.update(shared) is None
    assert [watch.update(apart) for _ in range(2)] == [None, None]
    assert watch.update([[0, 3, 7], None]) is None
    said = [watch.update(apart) for _ in range(3)]
    assert said[:2] == [None, None] and said[2][1] == "warn"
    assert said[2][0].startswith("camera 1 and camera 2 share no anchor with another camera (camera 1 sees "
                                 "anchors 0, 3, 7; camera 2 sees anchors 1, 2, 6)")
    assert watch.update(apart) is None                                   # said once
    back = [watch.update(shared) for _ in range(3)]
    assert back[2] == ("camera 1 and camera 2 now share an anchor with another camera: their positions agree "
                       "where a car crosses from one view to the other", "info")


def test_one_camera_of_three_alone_is_named_alone():
    alone, text = unshared_anchors(["camera 1", "camera 2", "camera 3"], [[0, 4], [4, 5], [8, 9]])
    assert alone == (2,) and text.startswith("camera 3 shares no anchor with another camera (camera 3 sees "
                                             "anchors 8, 9)")
    # A camera that sees no anchor at all is not named (it cannot find the table: said on its own).
    alone, text = unshared_anchors(["camera 1", "camera 2"], [[0, 4], []])
    assert alone == (0,) and "camera 2" not in text
    watch = SharedAnchorWatch(["camera 1", "camera 2", "camera 3"], hold_sets=1, said=(2,))
    assert watch.update([[0, 4], [4, 5], [8, 9]]) is None                    # already said (serve, at start)
    assert watch.update([[0, 4], [4, 5], [5, 9]])[0].startswith("camera 3 now shares an anchor")


@pytest.fixture(scope="module")
def setups(demo_table):
    """The demo table with an anchor more in each camera's own half (7 on the left, 6 on the
    right), through two cameras over its left and right 60 %: both see anchors 4 and 5 (the
    near and far edges' middles), and frames where anchors 4 and 5 are gone (taken away):
    each camera still finds the table from three of its own."""
    a = demo_table.anchors[0]
    table = dataclasses.replace(demo_table, anchors=demo_table.anchors + (
        dataclasses.replace(a, id=6, x_mm=1000.0, y_mm=420.0), dataclasses.replace(a, id=7, x_mm=220.0, y_mm=420.0)))
    without = dataclasses.replace(table, anchors=tuple(x for x in table.anchors if x.id not in (4, 5)))
    w, d = table.width_mm, table.depth_mm
    frames = {"shared": [], "apart": []}
    cameras = []
    for i, region in enumerate([(0, 0, 0.6 * w, d), (0.4 * w, 0, w, d)]):
        camera, rvec, tvec = region_camera(table, region, width=1080, height=1080, height_mm=1000.0 + 50 * i,
                                           source=f"synthetic camera {i + 1}")
        cameras.append(camera)
        for key, t in (("shared", table), ("apart", without)):
            frames[key].append(TableRenderer(t, camera, rvec, tvec, RenderOptions(), seed=i).render(POSES).image)
    return table, cameras, frames


def test_a_live_camera_pair_that_loses_and_regains_its_shared_anchors_is_said_on_the_notes(setups):
    table, cameras, frames = setups
    live = MultiLiveTable([ListSource([], "left"), ListSource([], "right")], table, cameras)
    live.anchor_watch.hold_sets = 5        # frames, not sets: each camera's frame is a fuse
    notes = []
    live.on_note = lambda text, kind: notes.append((kind, text))
    k = 0

    def play(key, sets):
        nonlocal k
        for _ in range(sets):
            for i, image in enumerate(frames[key][:2]):
                live.process_camera(i, image, k, k / 15)
            k += 1

    play("shared", 3)
    assert notes == []
    assert [c.anchors for c in live.multi.last.cameras] == [(0, 3, 4, 5, 7), (1, 2, 4, 5, 6)]
    play("apart", 1)                    # anchors 4 and 5 covered for a moment
    play("shared", 2)
    assert notes == []
    play("apart", 3)
    assert all(v.located.table_pose is not None for v in live.multi.last.views)   # each still finds the table
    assert len(notes) == 1 and notes[0][0] == "warn"
    assert notes[0][1].startswith("camera 1 and camera 2 share no anchor with another camera (camera 1 sees "
                                  "anchors 0, 3, 7; camera 2 sees anchors 1, 2, 6): lay an anchor")
    play("apart", 3)
    assert len(notes) == 1
    play("shared", 3)
    assert len(notes) == 2 and notes[1][0] == "info" and notes[1][1].startswith("camera 1 and camera 2 now share")

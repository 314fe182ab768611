"""The demo's scripted game: cars take turns, drive, stop and turn, and never collide."""

from __future__ import annotations

import math

from vision.demo import DemoScript


def test_one_car_moves_at_a_time_and_the_rest_stand(demo_table):
    script = DemoScript(demo_table)
    moving_counts = set()
    for k in range(400):
        t = k * 0.1
        a, b = script.poses_at(t), script.poses_at(t + 0.05)
        moving = [p.id for p, q in zip(a, b) if math.hypot(p.x_mm - q.x_mm, p.y_mm - q.y_mm) > 1e-6]
        moving_counts.add(len(moving))
    assert moving_counts == {0, 1}       # pauses between turns, and one car at a time


def test_cars_turn_and_stay_on_the_table_and_apart(demo_table):
    script = DemoScript(demo_table)
    headings = set()
    for k in range(600):
        poses = script.poses_at(k * 0.2)
        for p in poses:
            assert 60 < p.x_mm < demo_table.width_mm - 60 and 100 < p.y_mm < demo_table.depth_mm - 100
            headings.add(round(p.heading_deg / 45))
        for i, p in enumerate(poses):
            for q in poses[i + 1:]:
                assert math.hypot(p.x_mm - q.x_mm, p.y_mm - q.y_mm) > 150
    assert len(headings) >= 8            # every direction, by way of the bends

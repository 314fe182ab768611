"""A stored frame's cars located again (the audit's measure-again) read each outline's
doubt as the live locator does: in the cells of the table's own dictionary."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from bench.scenes import EASY, bench_table, random_poses
from vision.evidence import frame_evidence, relocate
from vision.locate import Locator
from vision.render import TableRenderer, overhead_camera


@pytest.mark.parametrize("dictionary", ["DICT_4X4_50", "DICT_5X5_50"])
def test_relocated_cars_carry_the_live_poses_and_doubts(dictionary):
    rng = np.random.default_rng(26)
    table = dataclasses.replace(bench_table(4, rng), dictionary=dictionary)
    camera, rvec, tvec = overhead_camera(table)
    frame = TableRenderer(table, camera, rvec, tvec, EASY, seed=26).render(random_poses(table, rng))
    located = Locator(table, camera).locate(frame.image)
    assert len(located.cars) == 4
    _, detections, pose = frame_evidence(frame.image, located)
    again = relocate(detections, pose, table)
    for car in located.cars:
        other = again[car.id]
        assert other.x_mm == pytest.approx(car.x_mm, abs=1e-6)
        assert other.heading_deg == pytest.approx(car.heading_deg, abs=1e-6)
        # The outline's share of the heading's doubt is the same cells' reading (a 5 x 5
        # marker read as 4 x 4 cells would be 7/6 off); the rest differs only by the
        # anchors' model noise, which the stored pose keeps whole.
        assert other.random_sigma_deg == pytest.approx(car.random_sigma_deg, rel=0.02)

"""Issue 26, "a sigma that never lies": on rendered tables of several sizes and
sticker margins, and on the real footage, at least 90 % of position and heading
errors lie within 2 sigma and none beyond 4 (bench/sigma.py measures the same
at length; these renders use seeds 900-901, which the sigma model was not
fitted on: it was fitted on 100-110)."""

from __future__ import annotations

import numpy as np
import pytest

from bench import realvideo, sigma
from bench.scenes import random_poses
from vision.locate import Locator, locate_cars, outline_doubt

#: (configuration in bench.sigma.CONFIGS, seeds, frames each): 104 car sightings.
RENDERS = (("4x4ft 1080p webcam, 2 mm margin", (900, 901), 2),
           ("6x4ft 1080p webcam", (900,), 2),
           ("bench 4x2.7ft 1080p hard, 2 mm margin", (900,), 2))


@pytest.fixture(scope="module")
def rendered():
    """Per frame sightings by configuration, and the tracked ones (first configuration)."""
    per_frame, tracked = {}, []
    for k, (name, seeds, frames) in enumerate(RENDERS):
        res = sigma.measure(name, sigma.CONFIGS[name], list(seeds), frames,
                            track=k == 0, bare_opencv=False)
        per_frame[name] = res["_sightings"]
        tracked += res["_still"] + res["_moved"]
    return per_frame, tracked


def _check(sightings, least: int):
    s = sigma.summary(sightings)
    assert s["n"] >= least
    within_position, within_heading = s["within_2_sigma"]
    assert within_position >= 0.9, s
    assert within_heading >= 0.9, s
    assert s["beyond_4_sigma"] == [0, 0], s
    return s


def test_single_frames_on_thin_margins_and_a_six_by_four_table(rendered):
    per_frame, _ = rendered
    s = _check([x for v in per_frame.values() for x in v], 100)
    # Honest, not huge: a heading sigma under a degree (bare OpenCV's errors reach 2-3).
    assert s["median_sigma_mm_deg"][1] < 1.0


@pytest.mark.parametrize("name", [r[0] for r in RENDERS])
def test_each_table_on_its_own(rendered, name):
    """No table hides behind the others' good figures."""
    per_frame, _ = rendered
    _check(per_frame[name], 20)


def test_tracked_cars_standing_and_just_moved(rendered):
    _, tracked = rendered
    _check(tracked, 15)


@pytest.fixture(scope="module")
def real():
    return realvideo.run()


def test_real_footage_keeps_its_sigmas_honest(real):
    for key in ("alone", "pipeline"):
        s = real[key]
        assert s["within_2_sigma_position"] >= 0.9 and s["within_2_sigma_heading"] >= 0.9, s
        assert s["beyond_4_sigma_position"] == 0 and s["beyond_4_sigma_heading"] == 0, s


def test_a_thin_margin_earns_its_doubt():
    """A roof marker whose border-to-margin contrast is well below the anchors'
    (a thin margin, the roof bleeding into it) has edges shifted by more than
    their scatter shows: its doubt grows; at the anchors' contrast, or unknown, not."""
    full = outline_doubt(0.08, 16.0, 6, 0.0, 0.95)
    assert full == outline_doubt(0.08, 16.0, 6, 0.0, None)
    thin = outline_doubt(0.08, 16.0, 6, 0.0, 0.55)
    assert thin[0] == full[0]                   # the scatter's share, frame to frame, is the same
    assert thin[1] > 1.5 * full[1] and thin[2] > 1.15 * full[2]


def test_the_locator_measures_roof_markers_against_its_anchors():
    """On 6 x 4 ft at 1080p with 2 mm margins under hard light (the table whose
    sigmas lied before the contrast was carried), every refined roof marker
    carries its contrast, and the cars' sigmas are those earned with the anchors'."""
    scene = sigma.CONFIGS["6x4ft 1080p hard, 2 mm margin"](900)
    rng = np.random.default_rng(907)
    frame = scene.renderer.render(random_poses(scene.table, rng), rng)
    located = Locator(scene.table, scene.renderer.camera).locate(frame.image)
    anchors = [d.contrast for d in located.detections if d.id in located.anchors]
    assert located.car_detections and all(c is not None for c in anchors)
    assert all(d.contrast is not None for d in located.car_detections if d.edge_sigma_px is not None)
    pose = located.table_pose
    specs = [scene.table.car(c.id) for c in located.cars]
    unknown = locate_cars(specs, list(located.car_detections), pose, scene.table.roof_sigma_mm,
                          pose.corner_noise_px, 6, None)
    known = locate_cars(specs, list(located.car_detections), pose, scene.table.roof_sigma_mm,
                        pose.corner_noise_px, 6, float(np.median(anchors)))
    grew = [k.sigma_deg > u.sigma_deg for k, u in zip(known, unknown)]
    assert sum(grew) >= len(grew) // 2, (grew, np.median(anchors))

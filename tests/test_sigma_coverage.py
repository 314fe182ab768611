"""Issue 26, "a sigma that never lies": on rendered tables of several sizes and
sticker margins, and on the real footage, at least 90 % of position and heading
errors lie within 2 sigma and none beyond 4 (bench/sigma.py measures the same
at length; these renders use seeds 900-901, which the sigma model was not
fitted on: it was fitted on 100-110)."""

from __future__ import annotations

import pytest

from bench import realvideo, sigma

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

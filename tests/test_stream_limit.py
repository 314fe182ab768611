"""The page's stream sends each snapshot the moment it is published, within a cap per page
(companion.web.api.SendLimit), on a clock the test turns: no frame held for a tick of a
clock of its own, and never more than the cap however fast the camera runs."""

from __future__ import annotations

import numpy as np

from companion.web.api import SendLimit


def play(limit: SendLimit, publishes: list[float]) -> list[tuple[float, float]]:
    """Each snapshot published at those times, sent when the limit lets it: (published, sent)."""
    out, clock = [], 0.0
    for t in publishes:
        clock = max(clock, t)               # a stream busy sending the last one sees it then
        clock += limit.hold(clock)
        limit.sent(clock)
        out.append((t, clock))
    return out


def test_a_webcams_frames_are_sent_as_they_come_jitter_and_all():
    rng = np.random.default_rng(1)
    times = np.arange(600) / 30.0 + rng.uniform(-0.005, 0.005, 600)     # 20 s of a 30 Hz camera
    waits = [sent - t for t, sent in play(SendLimit(30.0), sorted(times))]
    # A tick of a 30 Hz clock at a phase of its own held every frame 0 to 33 ms.
    assert np.median(waits) == 0.0 and np.percentile(waits, 95) < 0.002 and max(waits) < 0.012


def test_a_pipeline_faster_than_the_page_needs_is_capped_per_second():
    sends = [sent for _, sent in play(SendLimit(30.0), list(np.arange(500) / 100.0))]   # 100 a second
    for k, t in enumerate(sends):
        in_second = sum(1 for u in sends[k:] if u < t + 1.0)
        assert in_second <= 30 + 3, (t, in_second)        # the rate, and the bucket's few at the start
    # Over the whole run the page got 30 a second (each snapshot queued here: a real stream
    # sends the newest instead), not 100.
    assert (len(sends) - 3) / (sends[-1] - sends[0]) <= 30.0 + 1e-9


def test_two_snapshots_close_together_are_spaced_by_half_a_gap():
    limit = SendLimit(30.0)
    (_, first), (_, second) = play(limit, [1.0, 1.002])
    assert first == 1.0 and abs(second - (1.0 + 0.5 / 30.0)) < 1e-9

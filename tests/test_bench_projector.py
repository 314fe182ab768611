"""bench/projector.py runs: one small table, one frame, every variant measured."""

from __future__ import annotations

from bench import projector as bp


def test_the_projector_bench_measures_every_variant_on_one_frame():
    res = bp.measure("easy", [500], frames=1, cars=4)
    assert set(bp.VARIANTS) <= set(res)
    for v in bp.VARIANTS:
        row = res[v]
        assert row["cars_found"] == "4 of 4", (v, row)
        assert row["position_p95_mm"] < 1.0 and row["heading_p95_deg"] < 2.0, (v, row)
        assert all(0.0 <= share <= 1.0 for share in row["within_2_sigma"])
    # The same noise and poses for every variant: the light is the only difference, and with
    # the companion's masks the cars are where they were without it.
    off, masked = res["off"], res["on, masked"]
    assert abs(off["position_p95_mm"] - masked["position_p95_mm"]) < 0.05

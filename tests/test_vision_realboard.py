"""The stated doubt on a second real table: a printed board with a published
layout, photographed by a real webcam (bench/realboard.py).  Its truth is
exact and was never used to set any constant."""

from __future__ import annotations

from bench.realboard import board_layout, board_table, run


def test_the_board_layout_is_read_as_published():
    layout = board_layout()
    assert len(layout) == 24
    # Markers 39 mm across, 7.8 mm apart, as the file says in metres.
    sides = {round(float(abs(c[1, 0] - c[0, 0])), 1) for c in layout.values()}
    assert sides == {39.0}
    table, truth = board_table(layout)
    assert len(table.anchors) == 4 and len(table.cars) == 20 and set(truth) == {c.id for c in table.cars}


def test_every_car_on_the_real_board_is_found_within_its_stated_doubt():
    report = run()
    assert report["cars_found"] == "20 of 20"
    assert report["within_2_sigma_position"] >= 0.9
    assert report["within_2_sigma_heading"] >= 0.9
    assert report["beyond_3_sigma"] == 0
    # And the doubt is not so wide as to say nothing: millimetres, a degree or so.
    assert report["sigma_mm_median"] < 2.0 and report["sigma_deg_median"] < 2.0

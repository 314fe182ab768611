"""Properties of the table's geometry that must hold for every scene (Hypothesis)."""

from __future__ import annotations

import math

import numpy as np
import shapely
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from companion.geometry import (FRONT, REAR, Footprint, Gate, GateCounter, Pose, closest_distance,
                                in_half_plane_arc)

coord = st.floats(-600, 600, allow_nan=False)
heading = st.floats(-179.99, 180.0, allow_nan=False)
size = st.tuples(st.floats(20, 120), st.floats(10, 50))


@st.composite
def footprints(draw, car_id=1):
    length, width = draw(size)
    return Footprint(car_id, Pose(draw(coord), draw(coord), draw(heading)), length, width)


def moved_and_turned(fp: Footprint, dx: float, dy: float, turn_deg: float) -> Footprint:
    """The whole scene turned about the origin by `turn_deg`, then moved."""
    t = math.radians(turn_deg)
    x = fp.pose.x_mm * math.cos(t) - fp.pose.y_mm * math.sin(t) + dx
    y = fp.pose.x_mm * math.sin(t) + fp.pose.y_mm * math.cos(t) + dy
    return fp.at(Pose(x, y, fp.pose.heading_deg + turn_deg))


@settings(max_examples=300, deadline=None)
@given(footprints(1), footprints(2))
def test_distance_is_symmetric(a, b):
    assert closest_distance(a, b).distance_mm == closest_distance(b, a).distance_mm or \
        math.isclose(closest_distance(a, b).distance_mm, closest_distance(b, a).distance_mm, abs_tol=1e-9)


@settings(max_examples=300, deadline=None)
@given(footprints(1), footprints(2), coord, coord, st.floats(-180, 180))
def test_distance_unchanged_when_the_scene_moves_or_turns(a, b, dx, dy, turn):
    before = closest_distance(a, b).distance_mm
    after = closest_distance(moved_and_turned(a, dx, dy, turn), moved_and_turned(b, dx, dy, turn)).distance_mm
    assert math.isclose(before, after, abs_tol=1e-6)


@settings(max_examples=300, deadline=None)
@given(footprints(1), footprints(2))
def test_distance_is_zero_exactly_when_the_footprints_meet(a, b):
    d = closest_distance(a, b)
    meet = shapely.intersects(a.polygon, b.polygon)
    assert (d.distance_mm == 0.0) == meet
    assert d.distance_mm >= 0


@settings(max_examples=300, deadline=None)
@given(footprints(1), st.floats(-600, 600), st.floats(-600, 600), heading, size)
def test_in_front_and_not_in_rear_only_when_wholly_ahead(shooter, x, y, h, dims):
    target = Footprint(2, Pose(x, y, h), *dims)
    ahead = (target.corners - shooter.centre) @ shooter.pose.forward
    assume(np.all(np.abs(ahead) > 1e-6))          # not exactly on the line
    front = in_half_plane_arc(shooter, target, FRONT).verdict.margin_mm > 0
    rear = in_half_plane_arc(shooter, target, REAR).verdict.margin_mm > 0
    assert (front and not rear) == bool(np.all(ahead > 0))
    assert front or rear                          # every target is in one of the two


@settings(max_examples=200, deadline=None)
@given(st.floats(-300, 300), st.floats(-300, 300), st.floats(-180, 180), st.floats(60, 300),
       st.floats(-40, 40), size)
def test_a_gate_crossed_forwards_and_back_again_is_not_crossed(gx, gy, gate_heading, gate_width, offset, dims):
    t = math.radians(gate_heading)
    along = np.array([math.cos(t), math.sin(t)])        # post A to post B
    through = np.array([-along[1], along[0]])           # the direction of travel
    a = np.array([gx, gy]) - along * gate_width / 2
    b = np.array([gx, gy]) + along * gate_width / 2
    gate = Gate(tuple(a), tuple(b))
    drive = math.degrees(math.atan2(through[1], through[0]))
    length, width = dims
    assume(width + 2 * abs(offset) < gate_width)
    lateral = along * offset
    before = Footprint(1, Pose(*(np.array([gx, gy]) + lateral - through * (length + 30)), drive), length, width)
    after = before.at(Pose(*(np.array([gx, gy]) + lateral + through * (length + 30)), drive))
    counter = GateCounter(gate)
    counter.update(before)
    assert counter.update(after) == 1                   # through it forwards
    assert counter.update(before) == 0                  # and back again: not crossed
    assert gate.crossing(after, before) == -1


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(["any", "centre"]), st.booleans())
def test_the_whole_table_at_once_gives_the_single_pair_answers(seed, mode, grazing):
    from bench.geometry import random_table
    from companion.geometry import Obstacles, line_of_sight
    from companion.geometry.batch import measure_all

    feet, pieces = random_table(np.random.default_rng(seed), cars=8, terrain=6)
    obstacles = Obstacles(pieces, grazing_blocks=grazing)
    table = measure_all(feet, obstacles, sight_mode=mode)
    for (i, j), d, clear in zip(table.pairs, table.distance_mm, table.sight_clear):
        a, b = feet[i], feet[j]
        single = closest_distance(a, b)
        assert math.isclose(d, single.distance_mm, abs_tol=1e-9)
        assert math.isclose(table.front_depth[i, j], in_half_plane_arc(a, b, FRONT).verdict.margin_mm, abs_tol=1e-9)
        assert math.isclose(table.rear_depth[j, i], in_half_plane_arc(b, a, REAR).verdict.margin_mm, abs_tol=1e-9)
        assert clear == line_of_sight(a, b, pieces, mode=mode, grazing_blocks=grazing).clear

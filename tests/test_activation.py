"""Paths as hands make them: a car that drives through its own start keeps its way; one put
back where its move began and let go starts afresh; "redo this move" needs no exact
re-placement."""

import math

from companion.activation import Activations


def drive(acts, marker, poses, hold=1):
    """Feed the camera's poses, each seen `hold` frames (a hand letting go: several)."""
    for p in poses:
        for _ in range(hold):
            acts.seen(marker, [p[0], p[1], p[2], 0.3, 0.2])


def loop_through_start(r=80.0, steps=72):
    """A circle that starts and ends past its own start: through it once, on the way."""
    out = []
    for k in range(1, steps + 8):
        a = 2 * math.pi * k / steps
        out.append((300 + r * math.sin(a), 300 - r * math.cos(a) + r, math.degrees(a)))
    return out


def path_length(path):
    return sum(math.hypot(b[0] - a[0], b[1] - a[1]) for a, b in zip(path, path[1:]))


def test_a_drive_through_its_own_start_keeps_its_path():
    acts = Activations()
    acts.begin({10: [300.0, 300.0, 0.0, 0.3, 0.2]}, 10)
    drive(acts, 10, loop_through_start())
    path = acts.path(10, list(loop_through_start()[-1]) + [0.3, 0.2])
    # Once round a circle of 80 mm radius and a little more: about 550 mm, not the last bit.
    assert path_length(path) > 480


def test_a_car_put_back_where_its_move_began_and_let_go_starts_afresh():
    acts = Activations()
    acts.begin({10: [300.0, 300.0, 0.0, 0.3, 0.2]}, 10)
    drive(acts, 10, [(300 + 10 * k, 300, 0) for k in range(1, 11)])
    drive(acts, 10, [(300 + 10 * k, 300, 0) for k in range(9, 0, -1)])
    drive(acts, 10, [(301.0, 300.5, 1.0)], hold=4)          # set down by its start, let go
    assert acts.stood(10)[:3] == [300.0, 300.0, 0.0]
    assert len(acts.paths[10]) == 1


def test_redo_starts_the_move_again_from_the_recorded_pose_without_an_exact_replacement():
    acts = Activations()
    acts.begin({10: [300.0, 300.0, 0.0, 0.3, 0.2]}, 10)
    drive(acts, 10, [(300 + 10 * k, 300 + 3 * k, 5 * k) for k in range(1, 11)], hold=2)
    assert acts.redo_move(10)[:3] == [300.0, 300.0, 0.0]
    # Carried back by hand and put down 18 mm and 9 degrees off its ghost: close enough.
    drive(acts, 10, [(380, 320, 30), (340, 310, 15)])
    assert len(acts.paths[10]) > 1                     # still on its way back: not yet
    drive(acts, 10, [(315.0, 310.0, 9.0)], hold=4)
    # The way it went is forgotten: the move starts from its recorded pose, by way of where
    # the hand put it down.
    assert acts.paths[10][0] == [300.0, 300.0, 0.0, 0.3, 0.2]
    assert [p[:3] for p in acts.paths[10][1:]] in ([], [[315.0, 310.0, 9.0]])
    assert 10 not in acts.redo
    drive(acts, 10, [(315 + 10 * k, 310, 9) for k in range(1, 6)])
    assert acts.path(10, [365.0, 310.0, 9.0, 0.3, 0.2])[0][:3] == [300.0, 300.0, 0.0]


def test_redo_without_a_move_under_way_is_nothing_to_redo():
    assert Activations().redo_move(10) is None

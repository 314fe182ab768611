"""Car Cult, issue 23: one judgement. A move's verdict before it resolves (`judge_move`, and
`judge_action` that the page's preview and live ruler read) comes from the very code its
resolution runs before any dice (`_plan_move`), so it takes, refuses and halts exactly the moves
the resolution does; the allocation's and the Fanatical Fixer's refusals are the resolution's
word for word, in a dry run (up to the first request) and in `judge_action` alike; a car halted
at contact is put there by a placement with players' words ("halted where it touched the
Rustler"); and a hand that slides a car past its mark and back is not charged the slide back as
drift (option drift_correction_mm).

Worked from car-cult-2016-draft.txt, "Car Movement/Engines" and "Down Shift" (terrain: "Cars
must halt their movement when they touch Blocking terrain ... treat all other models as Blocking
terrain") and "Building a Car Cult" (Fanatical Fixer)."""

from __future__ import annotations

import copy

import pytest

from companion.dice import ChoiceRequest, DiceRequest, DiceThrow, FixedChoices, Placed, PlacementRequest
from companion.geometry import Pose
from companion.rules.base import RulesError, rule_system
from companion.scene import parse_scene
from companion.session import GameSession

from test_car_cult import ROSTERS, SCENE, TIE, _Faces, place, rosters, solo

MM = 25.4


def activation(car: int, allocation: dict, roster_list, options=None, cars=None):
    """A game at `car`'s activation (it alone fastest; the three others tie and roll TIE), its
    ST allocated as the page's form sends them."""
    scene = copy.deepcopy(SCENE)
    if cars is not None:
        scene["cars"] = cars
    rules = rule_system("car_cult", options)
    state = rules.new_game(copy.deepcopy(roster_list), parse_scene(scene))
    session = GameSession(rules, state, _Faces(TIE), FixedChoices([]))
    session.start_round({})
    session.act({"act": "activate", "vehicle": car})
    session.act({"act": "allocate", "vehicle": car, **{f"st_{k}": n for k, n in allocation.items()}})
    return rules, session


def resolved(rules, state, action, face=15):
    """The action resolved on `state` to its end: every die shows `face`, every choice its first
    option, every placement made as asked. Returns (outcome, placements asked) or the refusal."""
    gen = rules.resolve(state, action)
    answer, asked = None, []
    try:
        while True:
            request = gen.send(answer)
            if isinstance(request, DiceRequest):
                answer = DiceThrow(tuple(face for _ in request.dice), request.dice, "fixed")
            elif isinstance(request, ChoiceRequest):
                answer = request.options[0]["value"]
            elif isinstance(request, PlacementRequest):
                asked.append(request)
                answer = Placed((request.x_mm, request.y_mm, request.heading_deg), "as asked")
    except StopIteration as stop:
        return stop.value, asked
    except RulesError as exc:
        return str(exc), asked


def dry_run(rules, state, action):
    """The action played on a copy up to its first request: the refusal, or None."""
    try:
        next(rules.resolve(copy.deepcopy(state), action))
    except StopIteration:
        return None
    except RulesError as exc:
        return str(exc)
    return None


# --- a move: judge_move and the resolution agree ------------------------------------------

# The Scrapjaw (V6, 3 ST + 1: 8-11 in, drift 2 in, 2 free turns) stands at (900, 300) facing -x.
SCRAPJAW = dict(car=20, allocation={"engine": 1}, roster_list=solo(20))


@pytest.mark.parametrize("to, taken, result", [
    (Pose(900 - 9 * MM, 300, 180), True, "moved"),                      # within 8-11 in
    (Pose(900 - 6 * MM, 300, 180), True, "braked"),                     # short of 8 in: a brake roll
    (Pose(900 - 11.5 * MM, 300, 180), False, "its maximum is 11 in"),   # too far
    (Pose(900 - 9 * MM, 300 - 3 * MM, 180), False, "at most 2 in"),     # drifts 3 in
])
def test_judge_move_takes_and_refuses_what_the_resolution_does(to, taken, result):
    rules, session = activation(**SCRAPJAW)
    judged = rules.judge_move(session.state, 20, to)
    out, _ = resolved(rules, copy.deepcopy(session.state), {"act": "move", "vehicle": 20, "path": [_pose_list(to)]})
    assert judged["legal"] is taken
    if taken:
        assert out["result"] == result and "halts" not in judged
    else:
        assert isinstance(out, str) and result in out
        assert judged["reasons"] == [out]                   # the resolution's refusal, word for word


def _pose_list(p: Pose) -> list[float]:
    return [p.x_mm, p.y_mm, p.heading_deg]


def test_a_move_into_a_car_is_judged_halted_where_the_resolution_puts_it():
    # The Rustler stands at (650, 300): the Scrapjaw's front (862.5) touches the Rustler's (687.5)
    # after 175 mm (6.89 in) of the 200 mm it was driven; it halts there, its centre at 650 + 75 +
    # 2 (within contact_mm: the camera's "touching"; the draft's "treat all other models as
    # Blocking terrain"). judge_move said "legal" of this before, as if it stopped at 700.
    rules, session = activation(**SCRAPJAW, cars=place({10: [650, 300, 0]}))
    to = Pose(700, 300, 180)
    judged = rules.judge_move(session.state, 20, to)
    state = copy.deepcopy(session.state)
    out, asked = resolved(rules, state, {"act": "move", "vehicle": 20, "path": [_pose_list(to)]})
    assert judged["legal"] and out["result"] == "halted"
    assert judged["halts"].startswith("it halts where it touches the Rustler, after 6.89 in"), judged["halts"]
    # The resolution asks for the car to be put where it touched, in players' words, at the pose
    # judge_move named, and it then stands there.
    assert len(asked) == 1 and asked[0].marker == 20
    assert asked[0].describe() == "put the Scrapjaw here: halted where it touched the Rustler"
    assert [asked[0].x_mm, asked[0].y_mm, asked[0].heading_deg] == pytest.approx(judged["halt_at"], abs=0.01)
    assert _pose_list(state.vehicle(20).pose) == pytest.approx(judged["halt_at"], abs=0.01)
    assert state.vehicle(20).pose.x_mm == pytest.approx(650 + 75 + 2, abs=1.5)


def test_a_halt_at_blocking_terrain_is_a_placement_in_players_words():
    # The Dust Devil (4 ST: 12-16 in) drives at the wall (x 580-620): it touches after 9.57 in.
    rules, session = activation(11, {"engine": 1}, solo(11))
    session.placements = None                # a table: the piece must be seen put there
    session.act({"act": "move", "vehicle": 11, "path": [[700, 600, 0]]})
    p = session.pending
    assert isinstance(p, PlacementRequest) and p.marker == 11
    assert p.describe() == "put the Dust Devil here: halted where it touched the wall"
    assert p.x_mm == pytest.approx(580 - 2 - 35, abs=1.5) and p.heading_deg == pytest.approx(0)
    assert rules.judge_move(session.state, 11, Pose(700, 600, 0))["halt_at"][0] == pytest.approx(p.x_mm, abs=0.01)


def test_a_path_off_the_table_is_refused_by_judge_move_as_by_the_move():
    # The Scrapjaw 60 mm from the west edge, facing it: 9 in ahead leaves the table. The old
    # judge_move read only distance, drift and turns, and called it legal.
    rules, session = activation(**SCRAPJAW, cars=place({20: [60 + 75 / 2, 300, 180]}))
    to = Pose(60 + 75 / 2 - 9 * MM, 300, 180)
    judged = rules.judge_move(session.state, 20, to)
    out, _ = resolved(rules, copy.deepcopy(session.state), {"act": "move", "vehicle": 20, "path": [_pose_list(to)]})
    assert out == "the Scrapjaw's path leaves the table"
    assert not judged["legal"] and judged["reasons"] == [out]


def test_judge_action_reads_the_whole_path_as_the_move_does():
    # A path that turns left 45, then right 45, then left 45 again: three turns, the V6 with 4 ST
    # has 2 free AZ. Its end alone (judge_move) is a straight move; judge_action reads the path.
    rules, session = activation(**SCRAPJAW)
    x, y = 900.0, 300.0
    path = [[x - 40, y, 180], [x - 40, y, 225], [x - 80, y - 40, 225], [x - 80, y - 40, 180],
            [x - 120, y - 40, 180], [x - 120, y - 40, 225], [x - 150, y - 70, 225]]
    action = {"act": "move", "vehicle": 20, "path": path}
    out, _ = resolved(rules, copy.deepcopy(session.state), action)
    said = rules.judge_action(session.state, action)
    assert isinstance(out, str) and "makes 3 turns" in out
    assert said["move"] and not said["legal"] and said["reasons"] == [out]
    # a legal path: taken, and without pre-measuring nothing more is said (no margin to spare);
    # where the table measures freely it is judged legal, with its margin
    fine = {"act": "move", "vehicle": 20, "path": [[900 - 9 * MM, 300, 180]]}
    assert rules.judge_action(session.state, fine) is None
    rules.settings["premeasure"] = True
    said = rules.judge_action(session.state, fine)
    assert said["legal"] and said["margin_mm"] == pytest.approx(2 * MM, abs=0.01)


def test_judge_action_judges_no_move_before_it_is_declared():
    # "No pre-measuring": before its ST are allocated the move is not declared and its band is not
    # drawn: nothing is judged (None), only what measures nothing is refused (not its turn).
    rules = rule_system("car_cult")
    state = rules.new_game(copy.deepcopy(solo(20)), parse_scene(SCENE))
    session = GameSession(rules, state, _Faces(TIE), FixedChoices([]))
    session.start_round({})
    session.act({"act": "activate", "vehicle": 20})
    too_far = {"act": "move", "vehicle": 20, "path": [[900 - 15 * MM, 300, 180]]}
    assert rules.judge_action(session.state, too_far) is None
    other = rules.judge_action(session.state, {"act": "move", "vehicle": 10, "path": [[400, 300, 0]]})
    assert not other["legal"] and "it is the Scrapjaw's activation" in other["reasons"][0]
    # with the table measuring freely (premeasure), it is judged
    rules = rule_system("car_cult", {"premeasure": True})
    state = rules.new_game(copy.deepcopy(solo(20)), parse_scene(SCENE))
    session = GameSession(rules, state, _Faces(TIE), FixedChoices([]))
    session.start_round({})
    session.act({"act": "activate", "vehicle": 20})
    assert not rules.judge_action(session.state, too_far)["legal"]


# --- allocations and Fixer swaps: the dry run refuses what Resolve refuses -------------------

def _fresh_activation(car, roster_list, options=None):
    scene = copy.deepcopy(SCENE)
    rules = rule_system("car_cult", options)
    state = rules.new_game(copy.deepcopy(roster_list), parse_scene(scene))
    session = GameSession(rules, state, _Faces(TIE), FixedChoices([]))
    session.start_round({})
    session.act({"act": "activate", "vehicle": car})
    return rules, session


@pytest.mark.parametrize("fields, words", [
    ({"st_engine": 2, "st_machine_gun": 2, "st_dangerous_driver": 2, "st_gutsy_gunner": 2}, "allocates 8 ST but"),
    ({"st_engine": 3}, "takes at most 2 more ST"),
    ({"st_armour": 1}, "armour takes no ST"),
    ({"st_machine_gun": 3}, "has 2 empty AZ"),
    ({"st_engine": 1, "st_machine_gun": 2}, None),
])
def test_an_allocations_refusal_is_the_resolutions(fields, words):
    # The Rustler (Straight Five, 2 ST, Spark Plug 2) generates 4 ST.
    rules, session = _fresh_activation(10, solo(10, engine_st=2))
    action = {"act": "allocate", "vehicle": 10, **fields}
    ahead = dry_run(rules, session.state, action)
    said = rules.judge_action(session.state, action)
    try:
        session.act(action)
        refused = None
    except RulesError as exc:
        refused = str(exc)
    assert ahead == refused and (said is None if refused is None else said["reasons"] == [refused])
    if words is None:
        assert refused is None
    else:
        assert words in refused


@pytest.mark.parametrize("a, b, words", [
    ("engine:1", "engine:2", "changes nothing"),
    ("engine:3", "mines:4", "holds no token"),
    ("fanatical_fixer:1", "engine:3", "not on the fixer"),
    ("engine:1", "engine:4", None),           # S S S D -> D S S S: the engine's ST still from the left
])
def test_a_fixer_swaps_refusal_is_the_resolutions(a, b, words):
    # The Dust Devil's engine: S S S D (3 ST, a DT on zone 4); the fixer gets 2 ST, the mines 1.
    rules, session = activation(11, {"fanatical_fixer": 2, "mines": 1}, solo(11, engine_st=3, dt={"engine": 1}))
    action = {"act": "fix", "vehicle": 11, "a": a, "b": b}
    before = copy.deepcopy(session.state.to_json())
    ahead = dry_run(rules, session.state, action)
    said = rules.judge_action(session.state, action)
    assert session.state.to_json() == before                # judging changed nothing
    try:
        session.act(action)
        refused = None
    except RulesError as exc:
        refused = str(exc)
    assert ahead == refused and (said is None if refused is None else said["reasons"] == [refused])
    assert (refused is None) if words is None else (words in refused)


def test_a_fixer_swap_past_the_spark_plug_is_refused_alike():
    # A Straight Five (Spark Plug 2) with 1 ST and a DT on zone 5 puts 2 on the engine (S S S . D);
    # with token_or_empty, a swap bringing a third added ST onto it is refused.
    roster = [{"player": "Max", "cars": [{"marker": 10, "name": "Grease Monkey", "engine": "straight_five",
                                          "engine_st": 1, "crew": ["dangerous_driver", "fanatical_fixer"],
                                          "weapons": ["machine_gun", "cannon"], "dt": {"engine": 1}}]},
              {"player": "Joe", "cars": [{"marker": 20, "name": "Bonecrusher", "engine": "four_banger",
                                          "crew": ["dangerous_driver"], "weapons": ["machine_gun"]}]}]
    rules, session = _fresh_activation(10, roster, {"fixer_swap": "token_or_empty"})
    session.act({"act": "allocate", "vehicle": 10, "st_engine": 2, "st_fanatical_fixer": 1, "st_machine_gun": 1})
    action = {"act": "fix", "vehicle": 10, "a": "machine_gun:1", "b": "engine:4"}
    ahead = dry_run(rules, session.state, action)
    said = rules.judge_action(session.state, action)
    with pytest.raises(RulesError) as exc:
        session.act(action)
    assert "Spark Plug" in str(exc.value) and ahead == str(exc.value) and said["reasons"] == [str(exc.value)]


# --- a hand's correction is not drift -------------------------------------------------------

def _slid(path, options=None):
    rules, session = activation(**SCRAPJAW, options=options)
    out, _ = resolved(rules, copy.deepcopy(session.state), {"act": "move", "vehicle": 20, "path": path})
    return out


def test_a_car_slid_past_its_mark_and_back_is_not_charged_the_way_back():
    # 9 in ahead with 2 in of drift to its left (-y: it faces -x), the most it may (a quarter of 8,
    # rounded down); the hand overshoots by 15 mm and brings it back. Read as drift both ways that is
    # 2 in + 15 mm left and 15 mm right: 3.18 in, over the 2 in.
    x, y = 900.0, 300.0
    path = [[x - 4 * MM, y - 2 * MM - 15, 180], [x - 5 * MM, y - 2 * MM, 180], [x - 9 * MM, y - 2 * MM, 180]]
    out = _slid(path)
    assert out["result"] == "moved", out
    assert out["move"]["drift_left_mm"] == pytest.approx(2 * MM, abs=0.01)
    assert out["move"]["drift_right_mm"] == 0 and out["move"]["drift_corrected_mm"] == pytest.approx(15, abs=0.01)
    # With the option at 0 every slide counts, as before: refused.
    refused = _slid(path, {"drift_correction_mm": 0})
    assert isinstance(refused, str) and "drifts 2.59 in left and 0.59 in right; at most 2 in" in refused


def test_a_slide_back_longer_than_the_tolerance_is_drift():
    # 25 mm out and 25 mm back is two slides: over 20 mm, the way back is drift the other way
    # (50 mm in all, within the 2 in); with the option at 30 it is a correction.
    x, y = 900.0, 300.0
    path = [[x - 3 * MM, y - 25, 180], [x - 5 * MM, y, 180], [x - 9 * MM, y, 180]]
    out = _slid(path)
    assert out["move"]["drift_left_mm"] == pytest.approx(25, abs=0.01)
    assert out["move"]["drift_right_mm"] == pytest.approx(25, abs=0.01)
    assert out["move"]["drift_corrected_mm"] == 0
    assert _slid(path, {"drift_correction_mm": 30})["move"]["drift_right_mm"] == 0


def test_the_drift_correction_option_reads_the_draft():
    rules = rule_system("car_cult")
    opt = next(o for o in rules.options if o.name == "drift_correction_mm")
    assert opt.default == 20.0 and "Car Movement/Engines" in opt.rule and "left and/or right" in opt.doc
    with pytest.raises(RulesError, match="not a number"):
        rule_system("car_cult", {"drift_correction_mm": "lots"})

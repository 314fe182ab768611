"""Issue 23, point 6: every check of a Wasteland Rally action that does not depend on the dice is
made before the resolution's first request (the page's preview plays an action on a copy up to
its first dice, so a refusal that came later would be missed by the preview and come only after
dice were rolled). For every action kind (and the round's start and a pass): each refusal comes
before any request; and played through with every die a 1, every die a 12, and the two in turn,
a legal action is never refused part way."""

from __future__ import annotations

import copy
import itertools

import pytest

from companion.dice import ChoiceRequest, DiceRequest, DiceThrow, Placed, PlacementRequest
from companion.rules.base import RulesError
from tests.test_wasteland_rally import SCENE, game, place


def setup(moves=None, **options):
    options = {"check_deployment": False, **options}
    rules, st = game(options, cars=place(SCENE["cars"], moves or {}))
    return rules, st


def first_request(rules, st, action):
    """The first request of the action's resolution on a copy (None: it resolves without one),
    or the refusal (a RulesError) it makes before it."""
    gen = rules.resolve(copy.deepcopy(st), action)
    try:
        return next(gen)
    except StopIteration:
        return None


def play_through(run, faces):
    """Drive a resolution with dice from `faces` (cycled), the first option of each choice, and
    every placement as asked; a RulesError after the first request fails the test."""
    gen = run()
    dice = itertools.cycle(faces)
    answer, asked = None, 0
    while True:
        try:
            request = gen.send(answer)
        except StopIteration:
            return asked
        except RulesError as exc:
            if asked:
                pytest.fail(f"refused after {asked} request(s), with dice {faces}: {exc}")
            raise
        asked += 1
        if isinstance(request, DiceRequest):
            answer = DiceThrow(tuple(next(dice) for _ in request.dice), request.dice, "test")
        elif isinstance(request, ChoiceRequest):
            answer = request.options[0]["value"]
        elif isinstance(request, PlacementRequest):
            answer = Placed((request.x_mm, request.y_mm, request.heading_deg, 0.0, 0.0), "as asked")


# --- refusals come before any request ----------------------------------------------------------

def stressed():
    rules, st = setup()
    st.vehicles[10].stress = 2
    return rules, st


REFUSED = {
    "hold: another player's turn": (lambda: _round_started(), {"act": "hold", "vehicle": 20}, "Max's turn"),
    "hold: pushed since it stood": (lambda: _pushed(), {"act": "hold", "vehicle": 10}, "it moves only in a move"),
    "recover: no stress": (setup, {"act": "recover", "vehicle": 10}, "no stress to recover"),
    "move: too far": (setup, {"act": "move", "vehicle": 10, "path": [[800, 300, 0]]}, "but the Rustler may move"),
    "move: through the infield": (lambda: setup({20: (600, 300, 90)}),
                                  {"act": "move", "vehicle": 20, "path": [[600, 420, 90]]}, "drives through infield"),
    "move: ends on a car": (setup, {"act": "move", "vehicle": 11, "path": [[440, 300, 0]]}, "completely pass"),
    "move: both ways": (setup, {"act": "move", "vehicle": 10, "path": [[615, 300, 0], [560, 300, 0]]},
                        "both forwards and backwards"),
    "move: off the table": (lambda: setup({10: (1300, 300, 0)}),
                            {"act": "move", "vehicle": 10, "path": [[1390, 300, 0]]}, "leaves the table"),
    "move: a boost it has used": (lambda: _boost_used(), {"act": "move", "vehicle": 10, "boost": True,
                                                          "path": [[450 + 9 * 25.4, 300, 0]]}, "used its boost"),
    "attack: out of range": (setup, {"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 21},
                             None),
    "attack: a dropper": (setup, {"act": "attack", "vehicle": 10, "weapon": "oil_dropper", "target": 20},
                          "use the 'drop' action"),
    "attack: a car and terrain": (setup, {"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun",
                                          "target": 20, "terrain": "exploding barrels"}, "not both"),
    "attack: nothing named": (setup, {"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun"}, "say what"),
    "attack: terrain that does not explode": (setup, {"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun",
                                                      "terrain": "infield"}, "no exploding terrain"),
    "drop: not a dropper": (setup, {"act": "drop", "vehicle": 10, "weapon": "heavy_machine_gun"}, "not a dropper"),
    "reposition: none owed": (setup, {"act": "reposition", "vehicle": 10, "by": "Max", "to": [450, 300, 0]},
                              "has not lost control"),
    "upgrade stage: the game goes on": (setup, {"act": "upgrade_stage"}, "after the game is over"),
    "campaign mission: round 0": (lambda: _over(), {"act": "campaign_mission", "campaign_round": 0},
                                  "a whole number from 1"),
    "campaign mission: an unknown previous": (lambda: _over(), {"act": "campaign_mission", "campaign_round": 3,
                                                                "previous": "demolition"}, 'not "demolition"'),
}


def _round_started():
    rules, st = setup()
    st.round, st.up, st.initiative = 1, "Max", ["Max", "Joe"]
    return rules, st


def _pushed():
    from companion.geometry import Pose
    rules, st = setup()
    st.vehicles[10].pose = Pose(480, 300, 0)
    return rules, st


def _boost_used():
    rules, st = setup()
    st.vehicles[10].boost_used = True
    return rules, st


def _over():
    rules, st = setup()
    st.over = True
    return rules, st


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_refusal_comes_before_any_request(name):
    make, action, words = REFUSED[name]
    rules, st = make()
    with pytest.raises(RulesError) as err:
        first_request(rules, st, action)
    if words:
        assert words in str(err.value)


def test_a_bad_play_order_is_refused_before_the_roll_off():
    rules, st = setup()
    with pytest.raises(RulesError, match="names the Rustler twice"):
        next(rules.start_round(copy.deepcopy(st), {"Max": [10, 10]}))


# --- a legal action, whatever the dice, is never refused part way ---------------------------------

def _upgrade():
    rules, st = setup()
    st.over, st.winner = True, "Max"
    st.vehicles[11].destroyed, st.vehicles[11].hp = True, 0
    st.vehicles[20].hp, st.vehicles[20].ever_damaged = 6, True
    st.pools = {"Max": 20, "Joe": 20}
    return rules, st


LEGAL = {
    "drive over a car": (lambda: setup({11: (260, 300, 0), 10: (400, 300, 0)}),
                         {"act": "move", "vehicle": 11, "path": [[480, 300, 0]]}),
    "scrape impassable terrain": (lambda: setup({20: (600, 353.5, 0)}),
                                  {"act": "move", "vehicle": 20, "path": [[700, 353.5, 0]]}),
    "hit wreckage": (lambda: setup({21: (1150, 400, 90)}), {"act": "move", "vehicle": 21, "path": [[1150, 600, 90]]}),
    "touch exploding terrain": (lambda: setup({20: (500, 186.5, 0)}),
                                {"act": "move", "vehicle": 20, "path": [[700, 186.5, 0]]}),
    "attack a car": (lambda: setup({20: (800, 250, 0), 10: (600, 300, 0)}),
                     {"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun", "target": 20}),
    "attack exploding terrain": (lambda: setup({10: (400, 155, 0)}),
                                 {"act": "attack", "vehicle": 10, "weapon": "heavy_machine_gun",
                                  "terrain": "exploding barrels"}),
    "drop": (lambda: setup({20: (800, 250, 0), 10: (700, 250, 0)}),
             {"act": "drop", "vehicle": 20, "weapon": "spike_dropper"}),
    "recover": (stressed, {"act": "recover", "vehicle": 10}),
    "upgrade stage": (_upgrade, {"act": "upgrade_stage"}),
    "campaign mission": (lambda: _over(), {"act": "campaign_mission", "campaign_round": 3,
                                           "previous": "arena_race"}),
}


@pytest.mark.parametrize("faces", [(1,), (12,), (1, 12), (12, 1), (6, 9, 3)], ids=str)
@pytest.mark.parametrize("name", sorted(LEGAL))
def test_a_legal_action_is_not_refused_after_its_first_request(name, faces):
    make, action = LEGAL[name]
    rules, st = make()
    asked = play_through(lambda: rules.resolve(copy.deepcopy(st), action), faces)
    assert asked >= 1                                   # it asks for dice: there is a "part way"


@pytest.mark.parametrize("faces", [(1, 12), (12, 1)], ids=str)
def test_a_round_and_a_pass_are_not_refused_part_way(faces):
    rules, st = setup()
    st2 = copy.deepcopy(st)
    play_through(lambda: rules.start_round(st2, {"Max": [None, 11]}), faces)
    play_through(lambda: rules.end_activation(st2), faces)

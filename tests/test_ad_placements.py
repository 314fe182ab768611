"""Alpha Destructicus: every move the rules make is asked of the players, in their words, at the
moment the rules make it (`RuleSystem.place`): a car stopped where its path struck something, a
spin, a rollover, a panic turn, a jump's landing, a bail-out's runaway car, a forced move, a
burning wreck's scatter. The table must see each car put there (no camera here: the tests put
it, as a hand would, near enough)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from companion.dice import FixedChoices, FixedDice, PlacementRequest
from companion.geometry import Pose
from companion.rules.base import rule_system
from companion.scene import parse_scene
from companion.session import GameSession

BASE = json.loads((Path(__file__).resolve().parents[1] / "examples" / "scenarios" /
                   "ad-01-gate-scoring.json").read_text(encoding="utf-8"))


def table(prep=None, dice=(), choices=(), options=None, **changes):
    """The first worked scenario's game, Ann's chip drawn, on a table that must see every car the
    rules move put in place (no placement is taken as asked)."""
    data = copy.deepcopy(BASE)
    data.update(changes)
    rules = rule_system("alpha_destructicus", options)
    state = rules.new_game(data["rosters"], parse_scene(data))
    if prep:
        prep(state)
    s = GameSession(rules, state, FixedDice([]), FixedChoices(["Ann"]), placements=None)
    s.start_round({})
    s.dice, s.choices = FixedDice(list(dice)), FixedChoices(list(choices))
    return s


def stand(**poses):
    """Put cars (by marker) where a test needs them, their engines working."""
    def prep(state):
        for m, pose in poses.items():
            v = state.vehicles[int(m[1:])]
            v.pose = Pose(*pose)
            if v.engine is not None:
                v.engine.status = "working"
    return prep


def asked(s) -> PlacementRequest:
    assert isinstance(s.pending, PlacementRequest), s.pending
    return s.pending


def put(s, dx=0.0, dy=0.0, dh=0.0):
    """A hand puts the asked car near where it was asked (the camera's reading of it)."""
    p = asked(s)
    return s.place(p.marker, [p.x_mm + dx, p.y_mm + dy, p.heading_deg + dh, 0.5, 0.3], "camera")


def test_a_path_that_runs_into_a_car_has_it_put_back_where_it_struck_before_the_ram():
    """The issue's case: the drive's path ran on 7 in past the King Rhino; the rules stop the
    Rhinocerator where it struck and ram. The players are asked to put it there before the ram's
    dice, and a hand that leaves it 4 mm short (more than contact_mm) still rams: the rules, not
    the hand, stopped it at the contact."""
    s = table(stand(v10=(200, 200, 0), v12=(400, 200, 90)), dice=[4, 2, 1])
    out = s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "path": [[200, 200, 0], [560, 200, 0]]})
    assert out is None
    p = asked(s)
    assert p.marker == 10 and p.why == "it stopped where it struck the King Rhino, and rams it"
    assert p.describe() == "put the Rhinocerator here: it stopped where it struck the King Rhino, and rams it"
    assert 335 < p.x_mm < 345 and p.y_mm == pytest.approx(200) and s.dice.remaining == 3   # no ram die yet
    out = put(s, dx=-4.0, dh=2.0)
    assert out["result"] == "rammed" and out["ram"] == "won" and s.dice.remaining == 0
    tank = s.state.vehicles[10]
    assert tank.pose.x_mm == pytest.approx(p.x_mm - 4.0) and tank.pose.heading_deg == pytest.approx(2.0)
    placements = s.log[-1].placements
    assert [q["why"] for q in placements] == ["it stopped where it struck the King Rhino, and rams it"]


def test_a_hand_too_far_from_where_the_rules_put_the_car_is_refused():
    s = table(stand(v10=(200, 200, 0), v12=(400, 200, 90)), dice=[4, 2, 1])
    s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "path": [[200, 200, 0], [560, 200, 0]]})
    with pytest.raises(Exception, match="from where the rules put it"):
        put(s, dx=200.0)
    assert isinstance(s.pending, PlacementRequest)


CASES = {
    # name: (prep, action, dice, choices, words, heading asked)
    "rollover": (stand(v12=(500, 400, 0), v10=(500, 470, 0)),
                 {"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12}, [4, 6, 5, 5], ["left"],
                 "it rolled over to its left, turned 90 deg", 90.0),
    "spinout": (stand(v12=(500, 400, 0), v10=(500, 470, 0)),
                {"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12}, [4, 4], [-30],
                "Spinout: it spun 30 deg clockwise", -30.0),
    "panic turn": (stand(v10=(200, 200, 0)), {"act": "stunt", "freak": "Zed", "stunt": "panic_turn", "turn_deg": 45},
                   [5], [], "Panic Turn: it snapped round 45 deg anticlockwise", 45.0),
    "jump": (stand(v10=(540, 320, 0)), {"act": "drive", "freak": "Zed", "vehicle": 10,
                                        "path": [[540, 320, 0], [840, 320, 0]], "jump_in": 10}, [4], [],
             "it jumped off ramp: Big Ramp and landed 10.00 in on", 0.0),
    "forced": (lambda st: (stand(v10=(200, 200, 0))(st), setattr(st.vehicles[10], "pending", 2),
                           setattr(st.vehicles[10], "pending_table", "glancing")),
               {"act": "forced", "freak": "Zed", "vehicle": 10}, [], [],
               "badly shaken: it moved 6 in straight ahead", 0.0),
    "burning wreck": (stand(v12=(500, 400, 0), v10=(500, 470, 0), v13=(700, 700, 0)),
                      {"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12}, [6, 5, 2, 3, 1, 1],
                      [], "Burning Wreck: it scattered 5 in, direction 1 (1 straight ahead, each face 60 deg "
                          "anticlockwise), its facing kept", 0.0),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_every_move_the_rules_make_asks_for_the_car_in_players_words(case):
    prep, action, dice, choices, words, heading = CASES[case]
    s = table(prep, dice=dice, choices=choices)
    assert s.act(action) is None
    p = asked(s)
    assert p.why == words and p.heading_deg == pytest.approx(heading)
    out = put(s)
    while out is None and isinstance(s.pending, PlacementRequest):     # any later one, as asked
        out = put(s)
    assert out is not None and s.dice.remaining == 0, (out, s.pending)
    assert s.log[-1].placements[0]["why"] == words


def test_a_rollover_is_put_in_place_before_its_components_roll():
    """The placement comes when the rules turn the car, not at the end: the components' survival
    dice are still to come."""
    prep, action, dice, choices, words, _ = CASES["rollover"]
    s = table(prep, dice=dice, choices=choices)
    s.act(action)
    assert asked(s).why == words and s.dice.remaining == 2            # engine and horns still to roll


def test_a_surge_into_a_car_says_where_it_struck_and_rams_from_where_it_was_put():
    """Badly shaken: 6 in straight ahead; the King Rhino is 2.8 in ahead, so the tank stops where it
    strikes it (and the players are told so) and rams it, even put a hair short."""
    def prep(state):
        stand(v10=(200, 200, 0), v12=(330, 200, 90))(state)
        state.vehicles[10].pending, state.vehicles[10].pending_table = 2, "glancing"
    s = table(prep, dice=[4, 2, 1])
    s.act({"act": "forced", "freak": "Zed", "vehicle": 10})
    p = asked(s)
    assert p.why.startswith("badly shaken: it moved 6 in straight ahead, and stopped where it struck the King Rhino "
                            "after ") and s.dice.remaining == 3
    out = put(s, dx=-3.0)
    assert out["hit"] == 12 and s.dice.remaining == 0


def test_a_bail_out_asks_for_the_runaway_car_where_its_move_ends():
    s = table(stand(v10=(200, 200, 0)), dice=[5])
    s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "path": [[200, 200, 0], [300, 200, 0]]})
    put(s)                                            # where its drive ended: the camera sees it there
    assert s.act({"act": "stunt", "freak": "Zed", "stunt": "bail_out", "to": [300, 250]}) is None
    p = asked(s)
    assert p.why == "Zed bailed out: it carried on 8.06 in straight ahead"
    assert p.x_mm == pytest.approx(300 + 304.8 - 100) and p.heading_deg == pytest.approx(0.0)
    assert put(s)["result"] == "success"

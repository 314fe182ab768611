"""Alpha Destructicus: whatever refuses an action without depending on the dice refuses it before
the first die is asked for. The page's preview plays an action on a copy up to its first request
and offers it if nothing refused it by then: a refusal that came after a die was an action the
page offered, the players rolled for, and then lost."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from companion.dice import DiceRequest, FixedChoices, FixedDice
from companion.geometry import Pose
from companion.rules.base import RulesError, rule_system
from companion.scene import parse_scene
from companion.session import GameSession

BASE = json.loads((Path(__file__).resolve().parents[1] / "examples" / "scenarios" /
                   "ad-01-gate-scoring.json").read_text(encoding="utf-8"))
#: A wood across the near lane the Rhinocerator drives along (y 200): 100 mm of it on the way.
WOOD = {"kind": "rough", "name": "forest: Thicket", "points": [[300, 150], [400, 150], [400, 250], [300, 250]]}


def game(prep=None, options=None, terrain=()):
    data = copy.deepcopy(BASE)
    data["terrain"] = data["terrain"] + list(terrain)
    rules = rule_system("alpha_destructicus", options)
    state = rules.new_game(data["rosters"], parse_scene(data))
    if prep:
        prep(state)
    s = GameSession(rules, state, FixedDice([]), FixedChoices(["Ann"]))
    s.start_round({})
    return s


def preview(s, action):
    """What the page's preview does: the action played on a copy up to its first request."""
    return next(s.rules.resolve(copy.deepcopy(s.state), action))


def working(*markers):
    def prep(state):
        for m in markers:
            if state.vehicles[m].engine is not None:
                state.vehicles[m].engine.status = "working"
    return prep


def test_a_drive_too_long_even_without_rubble_is_refused_before_the_rubble_roll():
    """12.6 in through the wood: over the 12 in whatever the wood's skill roll gives; refused before
    it (it was refused after the roll)."""
    s = game(working(10), terrain=[WOOD])
    drive = {"act": "drive", "freak": "Zed", "vehicle": 10, "path": [[200, 200, 0], [520, 200, 0]]}
    with pytest.raises(RulesError, match=r"it spends 12.60 in \(12.60 in driven, 0.00 in turning\) but has 12.00 in"):
        preview(s, drive)
    # Within 12 in but for the wood, the roll decides: the preview asks for it.
    drive["path"] = [[200, 200, 0], [480, 200, 0]]
    asked = preview(s, drive)
    assert isinstance(asked, DiceRequest) and "driving through the forest forest: Thicket" in asked.purpose


def test_a_declared_jump_out_of_reach_is_refused_before_any_roll_on_the_way():
    """A drive through a wood to the ramp's foot, declaring 2 in of a jump whose reach is 13.4 in:
    refused before the wood's roll (it was refused after it)."""
    wood = {"kind": "rough", "name": "forest: Thicket", "points": [[640, 280], [700, 280], [700, 360], [640, 360]]}

    def prep(state):
        working(10)(state)
        state.vehicles[10].pose = Pose(540, 320, 0)
    s = game(prep, terrain=[wood])
    drive = {"act": "drive", "freak": "Zed", "vehicle": 10, "path": [[540, 320, 0], [840, 320, 0]], "jump_in": 2}
    with pytest.raises(RulesError, match="declare between 5.91 in and 11.81 in"):
        preview(s, drive)
    drive["jump_in"] = 8
    assert "driving through the forest" in preview(s, drive).purpose


def test_a_stunt_waits_for_the_forced_move_bailing_out_excepted():
    """Badly shaken: "must move 6\" straight ahead at the beginning of the driver's next turn"; a
    panic turn first would choose where the forced move goes. Refused before the skill roll; the
    bail-out ("the only way off") is not."""
    def prep(state):
        working(10)(state)
        state.vehicles[10].pending, state.vehicles[10].pending_table = 2, "glancing"
    s = game(prep)
    with pytest.raises(RulesError, match=r"must first make its forced move \(badly shaken\)"):
        preview(s, {"act": "stunt", "freak": "Zed", "stunt": "panic_turn", "turn_deg": 90})
    with pytest.raises(RulesError, match=r"must first make its forced move"):
        preview(s, {"act": "stunt", "freak": "Zed", "stunt": "push_it"})
    assert isinstance(preview(s, {"act": "stunt", "freak": "Zed", "stunt": "bail_out", "to": [200, 250]}),
                      DiceRequest)


def test_ending_a_turn_short_of_speed_freak_is_refused_before_a_failed_push_is_rolled():
    """speed_freak=refuse: Ix rides the Horse 3 in after a failed push. The cavalry's failed push rolls
    on the hit table at the end of the move; the Speed Freak refusal comes first (it came after)."""
    def prep(state):
        ix = state.freaks["Ix"]
        ix.aboard, ix.seat, ix.pos = 14, "driver", None
        state.vehicles[14].pose = Pose(450, 500, 0)
    s = game(prep, {"speed_freak": "refuse"})
    s.dice = FixedDice([1])                                      # push it: 1 + 1 (cavalry) fails
    assert s.act({"act": "stunt", "freak": "Ix", "stunt": "push_it"})["result"] == "failure"
    s.act({"act": "drive", "freak": "Ix", "vehicle": 14, "path": [[450, 500, 0], [526.2, 500, 0]]})
    with pytest.raises(RulesError, match="Speed Freak: Ix drove the Horse only 3.00 in"):
        next(s.rules.end_activation(copy.deepcopy(s.state)))
    # Said "blocked", his turn ends, and the failed push is rolled.
    state = copy.deepcopy(s.state)
    state.blocked = True
    assert next(s.rules.end_activation(state)).purpose == "bike hit table for the Horse"

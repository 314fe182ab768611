"""Alpha Destructicus: the worked scenarios, every option's readings, rosters, the
geometry the rules read (facings, paths, gates, grabs), the hit tables, and the session."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import numpy as np
import pytest

from companion.cli import main
from companion.dice import ChoiceRequest, DiceError, FixedChoices, FixedDice
from companion.geometry import Pose
from companion.rules.base import RulesError, rule_system
from companion.scenario import ScenarioError, check_expectations, load_scenario, run_scenario
from companion.scene import parse_scene
from companion.rules.alpha_destructicus import ACTIONS
from companion.session import GameSession

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "examples" / "scenarios").glob("ad-*.json"))
BASE = {k: v for k, v in load_scenario(SCENARIOS[0]).items()
        if k not in ("steps", "dice", "choices", "expect", "about")}


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_worked_scenario(path):
    data = load_scenario(path)
    assert data["rules"] == "alpha_destructicus" and data.get("expect")
    assert check_expectations(data, run_scenario(data, str(path))) == []


def test_at_least_four_worked_scenarios_and_the_command_checks_them(capsys):
    assert len(SCENARIOS) >= 4
    for path in SCENARIOS:
        assert main(["scenario", "run", str(path), "--check"]) == 0
    out = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert out["rules"] == "alpha_destructicus"


def play(steps, dice, options=None, choices=("Ann",), **changes):
    """The steps played on the first scenario's table; `choices` in the order they are asked,
    the chip draws among them (by default only the first round's first draw: Ann's chip)."""
    data = copy.deepcopy(BASE)
    data.update(changes)
    data.update(steps=steps, dice=dice, options=options or {}, choices=list(choices))
    return run_scenario(data)


def session(options=None, dice=(), prep=None, choices=(), chip="Ann", **changes):
    """A game with its first round begun (`chip`'s chip drawn from the bag), for acting on
    directly; `choices` are those asked after that draw."""
    data = copy.deepcopy(BASE)
    data.update(changes)
    rules = rule_system("alpha_destructicus", options)
    state = rules.new_game(data["rosters"], parse_scene(data))
    if prep:
        prep(state)
    s = GameSession(rules, state, FixedDice([]), FixedChoices([chip]))
    s.start_round({})
    assert s.state.chip == (None if s.rules.option("chip_draw") == "declared" else chip)
    s.dice, s.choices = FixedDice(list(dice)), FixedChoices(list(choices))
    return s


def renamed(marker, name):
    """The first scenario's cars with one called otherwise on the table (a roster that puts another
    vehicle on that marker: the game calls a car by the table's name)."""
    cars = copy.deepcopy(BASE["cars"])
    next(c for c in cars if c["id"] == marker)["name"] = name
    return cars


def working(*markers):
    def prep(state):
        for m in markers:
            state.vehicles[m].engine.status = "working"
    return prep


# --- every option, both ways ------------------------------------------------------

def test_option_chip_draw():
    """ "All the chips are placed in a bag. Chips are drawn out one at a time" ("The Turn"): a blind
    pick by hand, not a roll (the book's dice are six-sided: there is no d5). "drawn": the page asks
    whose chip came out, offering the chips still in the bag, and says a chip is being drawn."""
    s = session(chip="Bob")
    assert s.state.chip == "Bob" and sorted(s.state.bag) == ["Ann", "Ann", "Ann", "Bob", "Bob"]
    with pytest.raises(RulesError, match="Bob's chip was drawn; Zed is Ann's"):
        s.act({"act": "activate", "freak": "Zed"})
    rules = rule_system("alpha_destructicus")
    state = rules.new_game(BASE["rosters"], parse_scene(BASE))
    s = GameSession(rules, state, FixedDice([]), FixedChoices([]))
    assert s.start_round({}) is None
    asked = s.pending
    assert isinstance(asked, ChoiceRequest) and asked.player == "Ann"
    assert [(o["value"], o["label"]) for o in asked.options] == [("Ann", "Ann's chip (3 of 6)"),
                                                                 ("Bob", "Bob's chip (3 of 6)")]
    assert "whose chip came out of the bag" in asked.purpose and "6 chips in it: Ann 3, Bob 3" in asked.purpose
    # While it is drawn, the header says so (not that the round is over).
    assert rules.turn_text(s.state) == "round 1 of 6: draw a chip from the bag (6 in it) and say whose it is"
    assert rules.turn_info(s.state)["round"] == 1
    with pytest.raises(DiceError, match="not an option"):
        s.choose("Ann", "Cy")
    assert s.choose("Ann", "Bob")["chip"] == "Bob"
    # "declared": nothing is asked; the first freak to act says whose chip came out of the real bag.
    out = play([{"round": {}}, {"act": "activate", "freak": "Grub"}], [], {"chip_draw": "declared"}, choices=[])
    assert out["state"]["chip"] == "Bob" and out["state"]["bag"] == ["Ann", "Ann", "Ann", "Bob", "Bob"]


def test_chips_all_of_one_player_are_not_asked_and_no_draw_rolls_a_die():
    """Once every chip left in the bag is one player's, the draw is his without asking; and no chip
    draw anywhere asks for dice (the whole worked game's dice are all d6s)."""
    s = session(chip="Bob")
    s.state.bag = ["Ann", "Ann"]
    s.act({"act": "activate", "freak": "Grub"})
    out = s.end_turn()
    assert out["chip"] == "Ann" and s.pending is None and s.state.bag == ["Ann"]
    path = next(p for p in SCENARIOS if p.name == "ad-game-whole.json")
    log = run_scenario(load_scenario(path), str(path))["log"]
    asked = [d for e in log for d in e["dice"]]
    assert asked and all(set(d["dice"]) == {"d6"} for d in asked), {tuple(d["dice"]) for d in asked}
    draws = [c for e in log for c in e.get("choices", []) if "whose chip came out" in c["asked"]]
    assert len(draws) >= 20


def _shoot_king(options, tank_pose, dice=(4,), king=(500, 400, 0)):
    steps = [{"poses": {"12": list(king), "10": list(tank_pose)}}, {"round": {}},
             {"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12}]
    return play(steps, [*dice], options)["steps"][2]


def test_option_facing_from():
    """The Rhinocerator stands up and to the left of the King Rhino's nose, pointing across it: its
    centre is in the King's side wedge, but its nearest corner is in the front wedge."""
    shot = _shoot_king({}, (570, 445, 90))
    assert shot["facing"]["facing"] == "side"
    shot = _shoot_king({"facing_from": "closest_point"}, (570, 445, 90))
    assert shot["facing"]["facing"] == "front"


def test_option_close_facing():
    """The shooter's centre on the King Rhino's front-left diagonal (f 100, l 42.5 for a 80 x 34 car),
    both poses +/- 2 mm: too close to call between front (armour 3) and side (2)."""
    tank = (600, 442.5, 0, 2.0, 0.5)
    king = (500, 400, 0, 2.0, 0.5)
    shot = _shoot_king({}, tank, king=king)
    assert shot["facing"]["outcome"] == "too close to call" and shot["facing"]["facing"] == "front"
    assert any("too close to call between front and side" in e for e in shot["events"])
    shot = _shoot_king({"close_facing": "attacker"}, tank, king=king)
    assert shot["facing"]["facing"] == "side"


def test_option_shot_compare():
    # Side armour 2; a 2 on the die + strength 1 = 3.
    assert _shoot_king({}, (500, 470, 0), dice=(2,))["result"] == "glancing"
    assert _shoot_king({"shot_compare": "die"}, (500, 470, 0), dice=(2,))["result"] == "armour"


def test_option_natural_six_strips_armour():
    for reading, side in ((False, 2), (True, 1)):
        s = session({"natural_six_strips_armour": reading}, [6, 2], working(12))
        s.state.vehicles[12].pose = s.state.vehicles[12].pose.__class__(500, 400, 0)
        s.state.vehicles[10].pose = s.state.vehicles[10].pose.__class__(500, 470, 0)
        out = s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12})
        assert out["result"] == "penetrating" and s.state.vehicles[12].burning        # table: 2, Fire!
        assert s.state.vehicles[12].armour["side"] == side


def _ram_after(path, king, options=None, dice=(4, 2)):
    steps = [{"poses": {"10": path[0], "12": king}}, {"round": {}},
             {"act": "repair", "freak": "Zed", "component": "engine"},
             {"act": "drive", "freak": "Zed", "vehicle": 10, "path": path},
             {"act": "ram", "freak": "Zed", "vehicle": 10, "target": 12}]
    return play(steps, [5, *dice], options)["steps"][4]


def test_option_ram_distance():
    """3.94 in driven and a 45 degree turn (3 in): 6.94 in spent, but 3.94 in on the ground."""
    path = [[100, 200, 0], [200, 200, 0], [200, 200, 45]]
    king = [256.57, 256.57, 45]            # nose to tail, straight ahead of the turned tank
    reasons = [m["reason"] for m in _ram_after(path, king)["rolls"][0]["modifiers"]]
    assert not any("less than 6" in r for r in reasons)
    reasons = [m["reason"] for m in _ram_after(path, king, {"ram_distance": "ground"})["rolls"][0]["modifiers"]]
    assert "moved 3.94 in, less than 6 in" in reasons


def test_option_contact_mm():
    path = [[100, 200, 0], [200, 200, 0]]
    with pytest.raises(ScenarioError, match="a ram needs contact"):
        _ram_after(path, [262, 200, 90])                      # a 5 mm gap
    assert _ram_after(path, [262, 200, 90], {"contact_mm": 6.0})["contact"]["value_mm"] == pytest.approx(5.0)


def test_option_barrier_armour():
    terrain = BASE["terrain"] + [{"kind": "blocking", "name": "barrier: crates",
                                  "points": [[240, 150], [260, 150], [260, 250], [240, 250]]}]
    steps = [{"poses": {"10": [100, 200, 0]}}, {"round": {}},
             {"act": "repair", "freak": "Zed", "component": "engine"},
             {"act": "drive", "freak": "Zed", "vehicle": 10, "path": [[100, 200, 0], [200, 200, 0]]},
             {"act": "ram", "freak": "Zed", "vehicle": 10, "terrain": "barrier: crates"}]
    out = play(steps, [5, 4, 2, 3], terrain=terrain, choices=["Ann", 0])     # Ann knocks it straight on
    ram = out["steps"][4]
    assert ram["result"] == "won" and any("more armour" in m["reason"] for m in ram["rolls"][0]["modifiers"])
    assert out["state"]["terrain"]["barrier: crates"]["offset_mm"] == [76.2, 0.0]      # knocked 3 in away
    out = play(steps, [5, 2, 5, 1], {"barrier_armour": 5}, terrain=terrain)
    ram = out["steps"][4]
    assert ram["result"] == "lost" and any("more armour" in m["reason"] for m in ram["rolls"][1]["modifiers"])


def test_option_turn_tolerance_deg():
    path = [[200, 200, 0], [250, 200, 4], [300, 200, 0]]
    steps = [{"round": {}}, {"act": "repair", "freak": "Zed", "component": "engine"},
             {"act": "drive", "freak": "Zed", "vehicle": 10, "path": path}]
    assert play(steps, [5])["steps"][2]["turning_in"] == 0.0
    assert play(steps, [5], {"turn_tolerance_deg": 2.0})["steps"][2]["turning_in"] == 6.0    # two 4-deg turns


def test_option_speed_freak():
    steps = [{"round": {}}, {"act": "repair", "freak": "Zed", "component": "engine"},
             {"act": "drive", "freak": "Zed", "vehicle": 10, "path": [[200, 200, 0], [300, 200, 0]]},
             {"end_turn": True}]
    # The book's reading (the default): refused, unless the drive said the way was blocked.
    with pytest.raises(ScenarioError, match="drive on, or say the way was blocked"):
        play(steps, [5], choices=["Ann", "Ann"])
    out = play(steps, [5], {"speed_freak": "remind"}, choices=["Ann", "Ann"])
    assert any("Speed Freak: Zed drove the Rhinocerator only 3.94 in" in e for e in out["steps"][3]["events"])
    steps[2]["blocked"] = True
    assert play(steps, [5], choices=["Ann", "Ann"])["steps"][3]["chip"] == "Ann"


def test_speed_freak_holds_only_where_6_inches_were_possible():
    """ "if possible" ("Characters"): a car whose movement left cannot make up the 6 in, a driver who
    spends his turn getting up, and a car whose engine does not work are not held to it."""
    def down(state):
        working(10)(state)
        state.freaks["Zed"].down = True
    for options, prep, first in (({}, working(10), {"act": "drive", "freak": "Zed", "vehicle": 10, "to": [300, 200, 0]}),
                                 ({"down_gets_up": "spends_turn"}, down, {"act": "activate", "freak": "Zed"}),
                                 ({}, None, {"act": "activate", "freak": "Zed"})):   # his engine is still broken
        s = session({**options, "chip_draw": "declared"}, [], prep)
        s.act(first)
        if first["act"] == "drive":                               # 3.94 in driven; (rubble paid) 1.57 in left
            s.state.spent_mm = s.state.budget_mm - 40.0
        out = s.end_turn()
        assert not any("Speed Freak" in e for e in out["events"]) and s.state.freaks["Zed"].moved


def test_speed_freak_gives_the_camera_its_doubt():
    """A reverse's whole move is 6 in ("Vehicles in reverse have a base movement of 6""): a car backed
    its 6 in and measured 0.1 mm short, within the camera's doubt (its poses' 0.2 mm: 0.46 mm), has
    gone its 6 in, as a drive as far over its limit stands; 1 mm short is clearly short, and held."""
    for short_mm, held in ((0.1, False), (1.0, True)):
        s = session({"chip_draw": "declared"}, [], working(10))
        s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "reverse": True, "to": [200 - 152.4 + short_mm, 200, 0]})
        s.state.vehicles[10].pose = Pose(200 - 152.4 + short_mm, 200, 0, 0.2, 0.5)
        if held:
            with pytest.raises(RulesError, match="Speed Freak: Zed drove the Rhinocerator only 5.96 in"):
                s.end_turn()
        else:
            s.end_turn()
            assert s.state.freaks["Zed"].moved


def test_option_down_gets_up():
    def down(state):
        state.freaks["Zed"].down = True
    s = session({}, [5], down)
    assert s.act({"act": "repair", "freak": "Zed", "component": "engine"})["result"] == "repaired"
    assert not s.state.freaks["Zed"].down
    s = session({"down_gets_up": "spends_turn"}, [5], down)
    with pytest.raises(RulesError, match="getting up is all he does this turn"):
        s.act({"act": "repair", "freak": "Zed", "component": "engine"})
    assert "gets up: that is all he does" in " ".join(s.act({"act": "activate", "freak": "Zed"})["events"])
    with pytest.raises(RulesError, match="spends this turn getting up"):
        s.act({"act": "repair", "freak": "Zed", "component": "engine"})


def test_option_obsession_free():
    """Ix walks 3 in towards the Horse and back (6 in walked), then dashes 5.51 in to it."""
    steps = [{"round": {}}, {"act": "walk", "freak": "Ix", "to": [376.2, 600]},
             {"act": "walk", "freak": "Ix", "to": [300, 600]},
             {"act": "board", "freak": "Ix", "vehicle": 14, "seat": "driver"}]
    out = play(steps, [])
    assert out["steps"][3]["result"] == "boarded" and out["state"]["freaks"]["Ix"]["aboard"] == 14
    with pytest.raises(ScenarioError, match="the Horse is 5.51 in from Ix; he reaches 0.00 in"):
        play(steps, [], {"obsession_free": False})


def _kez(spot):
    rosters = copy.deepcopy(BASE["rosters"])
    rosters[1]["freaks"][2] = {"name": "Kez", **spot}
    return rosters


def test_option_jack_reach():
    steps = [{"round": {}}, {"act": "jack", "freak": "Kez", "vehicle": 10}]
    out = play(steps, [5, 2, 1], rosters=_kez({"at": [200, 230]}), choices=["Bob"])      # 12 mm from the tank's side
    assert out["steps"][1]["result"] == "jacked" and out["state"]["vehicles"]["10"]["driver"] == "Kez"
    with pytest.raises(ScenarioError, match="must be aboard the Rhinocerator to jack it"):
        play(steps, [], {"jack_reach": "aboard_only"}, rosters=_kez({"at": [200, 230]}), choices=["Bob"])


def test_option_jack_tie():
    """Kez clinging to the Rhinocerator: 3 against 2 + 1, a tie; the tank surges 6 in ahead."""
    steps = [{"round": {}}, {"act": "jack", "freak": "Kez", "vehicle": 10}]
    out = play(steps, [3, 2], rosters=_kez({"aboard": 10, "seat": "clinging"}), choices=["Bob"])
    assert out["steps"][1]["result"] == "tie: surged"
    assert out["state"]["vehicles"]["10"]["pose"] == [352.4, 200.0, 0.0]
    assert out["state"]["freaks"]["Kez"]["seat"] == "clinging"
    out = play(steps, [3, 2], {"jack_tie": "falls_off"}, rosters=_kez({"aboard": 10, "seat": "clinging"}),
               choices=["Bob"])
    assert out["state"]["freaks"]["Kez"]["pos"] == [200.0, 200.0] and out["state"]["freaks"]["Kez"]["aboard"] is None


def test_option_two_wheels_failure():
    steps = [{"round": {}}, {"act": "stunt", "freak": "Mo", "stunt": "two_wheels"}]
    out = play(steps, [2])
    assert out["steps"][1]["result"] == "failure" and out["state"]["vehicles"]["11"]["pose"][2] == 0.0
    out = play(steps, [2, 5], {"two_wheels_failure": "rollover"}, choices=["Ann", "left"])  # the booster survives (5)
    assert out["state"]["vehicles"]["11"]["pose"][2] == 90.0
    assert out["state"]["vehicles"]["11"]["pending"] == "rollover"


def test_option_flamer_ignites():
    """Sarge's flamethrower (S2, 6 in) at the Rhinocerator's front (armour 4): 1 + ... a 2 + 2 = 4, no more
    than the armour: a point of armour, not a damaging hit."""
    steps = [{"poses": {"13": [330, 200, 180]}}, {"round": {}},
             {"act": "shoot", "freak": "Pox", "weapon": "flamethrower", "target": 10}]
    out = play(steps, [2], choices=["Bob"])
    assert out["steps"][2]["result"] == "armour" and out["state"]["vehicles"]["10"]["burning"]
    assert out["state"]["vehicles"]["10"]["armour"]["front"] == 3
    out = play(steps, [2], {"flamer_ignites": "damaging_hit"}, choices=["Bob"])
    assert not out["state"]["vehicles"]["10"]["burning"]


def test_option_burning_wreck_destroys():
    for reading in (True, False):
        # Penetrating 5: the King Rhino scatters 2 + 3 in, direction 1 (straight ahead, +x).
        s = session({"burning_wreck_destroys": reading}, [6, 5, 2, 3, 1, 1], working(12))
        s.state.vehicles[13].pose = s.state.vehicles[13].pose.__class__(700, 700, 0)   # Sarge out of the way
        s.state.vehicles[10].pose = s.state.vehicles[10].pose.__class__(500, 470, 0)
        s.state.vehicles[12].pose = s.state.vehicles[12].pose.__class__(500, 400, 0)
        s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12})
        king = s.state.vehicles[12]
        assert king.burning and king.destroyed is reading and king.pose.x_mm == pytest.approx(500 + 5 * 25.4)
        assert all(c.status != "working" for c in king.components)


def test_option_gate_reset():
    def prep(state):
        h = state.vehicles[14]
        h.last_gate, h.last_team, h.last_driver = "Gate 1", "Ann", "Zed"
    steps = [{"act": "board", "freak": "Ix", "vehicle": 14, "seat": "driver"}]
    s = session({}, [], prep)
    s.act(*steps)
    assert s.state.vehicles[14].last_gate == "Gate 1"               # still Ann's team
    s = session({"gate_reset": "any_new_driver"}, [], prep)
    s.act(*steps)
    assert s.state.vehicles[14].last_gate is None
    # "If the driver abandons the vehicle and acquires another, the new vehicle may also score on any
    # gate": Mo (Ann) leaves the Dragster he drove for the Horse, which Ann's team last scored with.
    s = session({}, [], prep)
    s.act({"act": "leave", "freak": "Mo", "to": [260, 420]})
    s.state.freaks["Mo"].pos = (380.0, 600.0)                 # (walked over: within 6 in of the Horse)
    out = s.act({"act": "board", "freak": "Mo", "vehicle": 14, "seat": "driver"})
    assert s.state.vehicles[14].last_gate is None and "may score on any gate again" in " ".join(out["events"])


def _jump(options):
    gates = BASE["gates"] + [{"name": "Gate 3", "a": [1000, 380], "b": [1000, 260]}]
    steps = [{"poses": {"10": [540, 320, 0]}}, {"round": {}},
             {"act": "repair", "freak": "Zed", "component": "engine"},
             {"act": "drive", "freak": "Zed", "vehicle": 10, "path": [[540, 320, 0], [840, 320, 0]]}]
    # The drive reaches the ramp's foot and jumps ("Jumping"); Ann states 10 in of the 11.81 possible.
    return play(steps, [5, 4], options, gates=gates, choices=["Ann", 10.0])


def test_option_airborne_scores():
    out = _jump({})
    assert out["steps"][3]["jump"]["distance_in"] == 10.0 and out["state"]["scores"]["Ann"] == 1
    assert out["state"]["vehicles"]["10"]["pose"] == [1094.0, 320.0, 0.0]
    out = _jump({"airborne_scores": False})
    assert out["state"]["scores"]["Ann"] == 0 and out["state"]["vehicles"]["10"]["last_gate"] is None


def test_option_waldo_armour():
    """The appendix prints no armour for Waldo: 0 as printed, or 1 all around; a roster's own stands."""
    rosters = copy.deepcopy(BASE["rosters"])
    rosters[0]["vehicles"][2] = {"marker": 14, "sample": "waldo"}
    for reading, armour in ((0, 0), (1, 1)):
        s = session({"waldo_armour": reading}, rosters=rosters)
        assert s.state.vehicles[14].armour == {f: armour for f in ("front", "side", "back", "top")}
    assert rule_system("alpha_destructicus").option("waldo_armour") == 0
    rosters[0]["vehicles"][2] = {"marker": 14, "sample": "waldo", "armour": {"all": 2}}
    assert session({"waldo_armour": 1}, rosters=rosters).state.vehicles[14].armour["top"] == 2


def test_option_forced_six_counts():
    """Badly shaken: 6 in straight ahead first; then 6 in of its 12 are left, or all 12 ("extra")."""
    def prep(state):
        working(10)(state)
        state.vehicles[10].pending, state.vehicles[10].pending_table = 2, "glancing"
    for reading, left in (("part_of_move", 6.0), ("extra", 12.0)):
        s = session({"forced_six_counts": reading}, [], prep)
        s.act({"act": "forced", "freak": "Zed", "vehicle": 10})
        out = s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [400, 200, 0]})   # 47.6 mm more
        assert out["left_in"] == pytest.approx(left - 47.6 / 25.4, abs=0.01)


def test_option_after_jump():
    """The landing ends the move ("stops"), or it drives what it had left ("drive_on")."""
    for reading, stopped in (("stops", True), ("drive_on", False)):
        out = _jump({"after_jump": reading})
        assert out["state"]["activation"]["stopped"] is stopped


def test_option_landing_on_vehicle():
    """A jump that comes down on the King Rhino rams it from above either way; "against_it" sets
    the jumper down on its flight line touching the King's flank (a car left on top hides the
    King's roof marker from the camera), "on_top" leaves it where it landed."""
    data = load_scenario(next(p for p in SCENARIOS if p.name.startswith("ad-13-")))
    king = data["cars"][1]
    for reading in ("against_it", "on_top"):
        out = run_scenario({**data, "options": {**data["options"], "landing_on_vehicle": reading}})
        assert out["steps"][2]["jump"]["rammed"] == 12
        x = out["state"]["vehicles"]["10"]["pose"][0]
        nose = x + 40.0                                           # the Rhinocerator is 80 mm long
        flank = king["x_mm"] - king["width_mm"] / 2               # the King stands across its path
        if reading == "against_it":
            assert flank - 1e-6 <= nose <= flank
        else:
            # The nose (at 640) reaches the ramp's foot (x 880) after 240 mm, then 7 in of flight.
            assert x == pytest.approx(600 + 240 + 7 * 25.4, abs=0.01)


def test_a_drive_that_reaches_a_ramp_asks_its_driver_how_far_to_jump():
    """ "the driver must state how many inches, up to the maximum possible jump" ("Jumping"): asked of
    Ann (Zed's player), from half of what it drove (5.91 in, the half itself rounded up to the
    hundredth) to all of it: the path runs on over the ramp, so the car stops at its foot, its nose
    (at 580) touching it (x 880): 300 mm (11.81 in) on. Her answer 7 is the option 7.0."""
    def prep(state):
        working(10)(state)
        state.vehicles[10].pose = Pose(540, 320, 0)
    s = session({}, [4], prep)
    s.choices = None
    assert s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "path": [[540, 320, 0], [900, 320, 0]]}) is None
    assert s.pending.player == "Ann" and [o["value"] for o in s.pending.options] == [5.91, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 11.81]
    s.choose("Ann", 7)
    out = s.log[-1].outcome
    assert out["result"] == "jumped" and out["jump"]["distance_in"] == 7.0 and out["moved_in"] == 11.81
    assert s.state.vehicles[10].pose.x_mm == pytest.approx(840 + 7 * 25.4)


def test_option_other_chooser():
    """Ann's machine guns spin out Bob's King Rhino (glancing 4) in a three-player game: "culprit" asks
    Ann, who caused it; "next_player" asks Cy, next round the table after Bob."""
    cy = {"player": "Cy", "freaks": [{"name": n, "at": [1100, 700 - 40 * k]} for k, n in enumerate(("Q", "R", "S"))]}
    rosters = copy.deepcopy(BASE["rosters"]) + [cy]
    for option, asked in (("culprit", "Ann"), ("next_player", "Cy")):
        s = session({"other_chooser": option}, [4, 4], working(12), rosters=rosters)
        s.state.vehicles[12].pose, s.state.vehicles[10].pose = Pose(500, 400, 0), Pose(500, 470, 0)
        s.choices = None
        s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12})
        assert s.pending.player == asked and "spins out" in s.pending.purpose


def test_option_sight():
    """The Bank stands between the Rhinocerator and the King Rhino (9.45 in apart)."""
    steps = [{"poses": {"10": [300, 705, 0], "12": [620, 705, 0]}}, {"round": {}},
             {"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12}]
    with pytest.raises(ScenarioError, match="no line of sight to the King Rhino: Bank in the way"):
        play(steps, [3])
    shot = play(steps, [3], {"sight": "forest_only"})["steps"][2]
    assert shot["result"] == "glancing" and shot["facing"]["facing"] == "back"


def test_every_option_quotes_its_rule_and_has_a_test():
    rules = rule_system("alpha_destructicus")
    tested = {name[len("test_option_"):] for name in globals() if name.startswith("test_option_")}
    for option in rules.options:
        assert option.rule.startswith("alpha-destructicus.txt, \"") and len(option.doc) > 40
        assert option.name in tested, f"{option.name} has no test_option_ test"


# --- rosters -------------------------------------------------------------------

@pytest.mark.parametrize("change, message", [
    (lambda r: r[0]["freaks"].pop(), "roster of Ann: needs exactly 3 'freaks'"),
    (lambda r: r[0]["vehicles"][0].update(sample="batmobile"), "no sample vehicle 'batmobile'"),
    (lambda r: r[0]["vehicles"][0].update(type="hovercraft"), "type must be one of truck, tank"),
    (lambda r: r[0]["vehicles"][0].update(armour={"roof": 2}), "armour facings are front, side, back, top"),
    (lambda r: r[0]["vehicles"][0].update(components=["engine", "engine"]), "two components share a name"),
    (lambda r: r[0]["vehicles"][0].update(components=[{"weapon": "gun", "strength": 1}]), "needs a 'range_in'"),
    (lambda r: r[1]["vehicles"][0].update(marker=10), "marker 10 is already another vehicle's"),
    (lambda r: r[0]["freaks"][2].update(aboard=10, seat="driver"), "the Rhinocerator already has a driver"),
    (lambda r: r[0]["vehicles"][2].update(armour={"all": 1}), "cavalry have no armour"),
    (lambda r: r[0]["freaks"][2].pop("at"), "needs 'aboard' (a vehicle's marker) or 'at'"),
])
def test_roster_mistakes_are_named(change, message):
    data = copy.deepcopy(BASE)
    change(data["rosters"])
    with pytest.raises(RulesError, match=message.replace("(", r"\(").replace(")", r"\)")):
        rule_system("alpha_destructicus").new_game(data["rosters"], parse_scene(data))


def test_a_game_starts_with_broken_engines_and_the_appendix_numbers():
    s = session()
    tank, horse = s.state.vehicles[10], s.state.vehicles[14]
    assert tank.armour == {"front": 4, "side": 3, "back": 1, "top": 1}
    assert tank.engine.status == "damaged" and not tank.functional
    assert horse.functional and horse.armour == {"front": 0, "side": 0, "back": 0, "top": 0}
    assert s.state.freaks["Zed"].wounds == 3 and s.state.bag == ["Ann", "Ann", "Bob", "Bob", "Bob"]
    copy.deepcopy(s.state)
    assert json.dumps(s.state.to_json()) == json.dumps(copy.deepcopy(s.state).to_json())
    with pytest.raises(RulesError, match="engine is not working: repair it first"):
        s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [300, 200, 0]})


# --- moving: the tracked path ----------------------------------------------------

def test_trucks_turn_up_to_90_and_go_3_inches_between_turns():
    s = session({}, [], working(11))
    with pytest.raises(RulesError, match=r"it turns again after 1.95 in; a truck must move 3 in"):
        s.act({"act": "drive", "freak": "Mo", "vehicle": 11,
               "path": [[200, 400, 0], [250, 400, 0], [250, 400, 45], [285, 435, 45], [285, 435, 90]]})
    with pytest.raises(RulesError, match="it turns 120 deg at once; a truck turns up to 90"):
        s.act({"act": "drive", "freak": "Mo", "vehicle": 11, "path": [[200, 400, 0], [200, 400, 120]]})
    out = s.act({"act": "drive", "freak": "Mo", "vehicle": 11,
                 "path": [[200, 400, 0], [250, 400, 0], [250, 400, 45], [310, 460, 45], [310, 460, 90]]})
    assert out["turning_in"] == 6.0 and out["turns_deg"] == [45.0, 45.0]


def test_reverse_is_6_inches_and_never_mixed_with_forward():
    s = session({}, [], working(10))
    with pytest.raises(RulesError, match="but has 6.00 in this turn"):
        s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "reverse": True, "to": [40, 200, 0]})
    with pytest.raises(RulesError, match="moves forwards in a reverse move"):
        s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "reverse": True, "to": [260, 200, 0]})
    s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "reverse": True, "to": [100, 200, 0]})
    with pytest.raises(RulesError, match="may not move both forward and in reverse"):
        s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [120, 200, 0]})


def test_push_it_adds_6_inches_and_a_failure_breaks_the_engine_after_the_move():
    def prep(state):
        working(10)(state)
        state.vehicles[12].pose = state.vehicles[12].pose.__class__(700, 300, 180)   # out of the tank's way
    s = session({}, [2, 5], prep)
    s.act({"act": "stunt", "freak": "Zed", "stunt": "push_it"})
    out = s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [650, 200, 0]})     # 17.72 in of 18
    assert out["left_in"] == 0.28 and s.state.vehicles[10].engine.status == "working"
    s.choices = FixedChoices(["Bob"])                         # the next chip out of the bag: Bob's
    end = s.end_turn()
    assert s.state.vehicles[10].engine.status == "damaged"
    assert any("failed push wrecks the Rhinocerator's engine" in e for e in end["events"])


# --- which facing: the geometry ------------------------------------------------------

@pytest.mark.parametrize("where, facing", [
    ((600, 400), "front"), ((400, 400), "back"), ((500, 480), "side"), ((500, 320), "side"),
    ((560, 450), "side"), ((600, 430), "front")])
def test_the_facing_struck_is_the_wedge_between_the_diagonals(where, facing):
    s = session()
    king = s.state.vehicles[12]
    king.pose = king.pose.__class__(500, 400, 0)
    got, verdict, _ = s.rules._facing(s.state, king, where, 0.0, "a test")
    assert got == facing and verdict.outcome == "in"


# --- clinging, grabbing, jacking --------------------------------------------------------

def test_a_freak_grabs_a_passing_car_out_of_turn_within_1_inch():
    rosters = _kez({"at": [400, 240]})            # 22 mm off the tank's path, not its final spot
    s = session({}, [5, 4], working(10), rosters=rosters)
    s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [490, 200, 0]})
    out = s.act({"act": "grab", "freak": "Kez", "vehicle": 10})
    assert out["result"] == "clinging" and out["range"]["value_mm"] == pytest.approx(22.0)
    assert s.state.freaks["Kez"].seat == "clinging" and s.state.acting == "Zed"
    rosters = _kez({"at": [400, 260]})            # 42 mm: too far
    s = session({}, [5, 4], working(10), rosters=rosters)
    s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [490, 200, 0]})
    with pytest.raises(RulesError, match="came no closer than 1.65 in to Kez; grabbing reaches 1 in"):
        s.act({"act": "grab", "freak": "Kez", "vehicle": 10})


def test_clinging_riders_roll_when_their_car_stunts_and_fall_off_on_a_failure():
    s = session({}, [5, 1], working(10), rosters=_kez({"aboard": 10, "seat": "clinging"}))
    out = s.act({"act": "stunt", "freak": "Zed", "stunt": "panic_turn", "turn_deg": 90})
    assert s.state.vehicles[10].pose.heading_deg == 90 and s.state.freaks["Kez"].aboard is None
    assert "Kez falls off the Rhinocerator" in out["events"]


# --- the hit tables -----------------------------------------------------------------

def test_a_higher_glancing_result_supersedes_a_lower_one_and_not_the_other_way():
    s = session({}, [4, 6, 4, 5], working(12), choices=["left"])       # Bob rolls it to the left
    s.state.vehicles[10].pose = s.state.vehicles[10].pose.__class__(500, 470, 0)
    s.state.vehicles[12].pose = s.state.vehicles[12].pose.__class__(500, 400, 0)
    s.state.vehicles[12].pending, s.state.vehicles[12].pending_table = 1, "glancing"
    shoot = {"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12}
    s.act(shoot)              # 4 + 1 > side 2: glancing 6 (rollover) over 1; engine (4) and horns (5) survive
    king = s.state.vehicles[12]
    assert king.pending == 6 and king.pose.heading_deg == 90
    s.state.exclusive = None                                 # (a second shot, as if from another freak)
    s.dice = FixedDice([5, 2])
    s.act(shoot)                                             # now at its front: 5 + 1 > 3, glancing 2
    assert king.pending == 6 and "the pending rollover is higher and stands" in s.log[-1].outcome["events"]


def test_a_badly_shaken_car_makes_its_forced_move_first():
    def prep(state):
        working(10)(state)
        state.vehicles[10].pending, state.vehicles[10].pending_table = 2, "glancing"
    s = session({}, [], prep)
    with pytest.raises(RulesError, match=r"must first make its forced move \(badly shaken\)"):
        s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [300, 200, 0]})
    out = s.act({"act": "forced", "freak": "Zed", "vehicle": 10})
    assert out["distance_in"] == 6 and s.state.vehicles[10].pose.x_mm == pytest.approx(352.4)
    out = s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [500, 200, 0]})
    assert out["left_in"] == pytest.approx(0.19, abs=0.01)       # 6 forced + 5.81 of 12


def test_a_forced_move_comes_first_and_is_made_even_if_the_turn_ends_without_it():
    """ "must move 6\" straight ahead at the beginning of the driver's next turn": nothing else of the
    driver's first (he may bail out); a turn ended without it makes it then."""
    def prep(state):
        working(10)(state)
        state.vehicles[10].pending, state.vehicles[10].pending_table = 2, "glancing"
    s = session({}, [], prep)
    with pytest.raises(RulesError, match=r"must first make its forced move \(badly shaken\)"):
        s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12})
    s.act({"act": "activate", "freak": "Zed"})
    s.choices = FixedChoices(["Ann"])                         # the next chip out of the bag: Ann's
    end = s.end_turn()
    assert "the Rhinocerator's forced move (badly shaken) was not made: it is made now" in end["events"]
    assert s.state.vehicles[10].pose.x_mm == pytest.approx(200 + 152.4) and not s.state.vehicles[10].pending


def test_a_pass_is_the_drivers_turn_too():
    """The chip put on a driver who does nothing is his turn: a slightly shaken waiting for it is spent."""
    def prep(state):
        state.vehicles[12].pending, state.vehicles[12].pending_table = 1, "glancing"
    s = session({}, [], prep, choices=["Zed", "Bob", "Grub", "Ann"])
    s.end_turn()                                              # Ann passes (Zed); Bob's chip is drawn
    end = s.end_turn()                                        # Bob passes: the chip on Grub
    assert any("slightly shaken is over" in e for e in end["events"]) and not s.state.vehicles[12].pending


def test_no_turn_is_ended_before_round_1_or_once_the_round_is_over():
    """With no chip drawn and nobody moving there is no turn to end: before the first round, and
    once every chip of a round is out (the page's End turn / Pass stays on the Round tab between
    rounds; it was taken, logging "round 0 is over", or the round's end a second time)."""
    data = copy.deepcopy(BASE)
    rules = rule_system("alpha_destructicus")
    s = GameSession(rules, rules.new_game(data["rosters"], parse_scene(data)), FixedDice([]), FixedChoices([]))
    with pytest.raises(RulesError, match="there is no turn to end: start round 1 first"):
        s.end_turn()
    assert not s.log and s.state.round == 0
    s.choices = FixedChoices(["Ann", "Zed", "Bob", "Grub", "Ann", "Mo", "Bob", "Pox", "Ann"])
    s.start_round({})
    for _ in range(6):                                        # six passes: every chip out of the bag
        end = s.end_turn()
    assert end["events"][-1] == "round 1 is over" and s.state.bag == []
    logged = len(s.log)
    with pytest.raises(RulesError, match="there is no turn to end: round 1 is over, start the next round"):
        s.end_turn()
    assert len(s.log) == logged and s.state.round == 1
    s.choices = FixedChoices(["Bob"])
    s.start_round({})                                         # the next round starts as ever
    assert s.state.round == 2 and s.state.chip == "Bob"


def test_fire_burns_at_the_end_of_the_drivers_turn():
    def prep(state):
        working(10)(state)
        state.vehicles[10].burning = True
        state.vehicles[10].component("machine guns").status = "damaged"
    # (speed_freak: remind: Zed does not drive the working tank; the fire is the point here)
    s = session({"speed_freak": "remind"}, [3, 5, 1], prep, choices=["Bob"])   # repair at -1: 3 - 1 = 2 fails
    out = s.act({"act": "repair", "freak": "Zed", "component": "machine guns"})
    assert out["result"] == "failed" and out["rolls"][0]["modifiers"][0]["value"] == -1
    end = s.end_turn()                                       # Zed rolls 5: unhurt; the engine 1: damaged
    tank = s.state.vehicles[10]
    assert tank.engine.status == "damaged" and tank.destroyed
    assert "the Rhinocerator is destroyed (burnt out: every component damaged)" in end["events"]
    assert end["chip"] == "Bob"


def test_lava_gives_two_penetrating_hits_and_fire():
    terrain = BASE["terrain"] + [{"kind": "blocking", "name": "lava: the pit",
                                  "points": [[420, 180], [460, 180], [460, 220], [420, 220]]}]
    s = session({}, [3, 2, 1], working(10), terrain=terrain)   # table 3 (engine 2: broken), then 2
    out = s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [480, 200, 0]})
    tank = s.state.vehicles[10]
    assert tank.burning and "the Rhinocerator touches the lava of lava: the pit" in out["events"]
    assert "penetrating hit 3: internal explosion" in out["events"]


def test_a_building_rammed_twice_is_rubble():
    def prep(state):
        working(10)(state)
        state.vehicles[10].pose = state.vehicles[10].pose.__class__(460, 560, 90)   # 50 mm short of the Bank
    s = session({}, [5, 1], prep)
    s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [460, 608, 90]})        # nose on its wall
    out = s.act({"act": "ram", "freak": "Zed", "vehicle": 10, "terrain": "Bank"})
    assert out["result"] == "won" and s.state.terrain["Bank"].breached == [0]
    # The breached wall is open now: nothing there to ram again; the walls still standing are not touched.
    with pytest.raises(RulesError, match="from the walls of Bank still standing: a ram needs contact"):
        s.act({"act": "ram", "freak": "Zed", "vehicle": 10, "terrain": "Bank"})
    # Another wall breached later: a second breach makes it rubble.
    s = session({}, [5, 1], prep)
    s.state.terrain["Bank"].breached.append(2)
    assert s.state.terrain["Bank"].kind == "building"
    s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [460, 608, 90]})
    s.act({"act": "ram", "freak": "Zed", "vehicle": 10, "terrain": "Bank"})
    assert s.state.terrain["Bank"].kind == "rubble"


# --- the end of the game ---------------------------------------------------------------

def test_six_rounds_end_the_game_with_the_most_points_winning():
    s = session({"chip_draw": "declared"})
    s.state.scores = {"Ann": 1, "Bob": 2}
    for rnd in range(6):
        if rnd:
            s.start_round({})
        for fid in ("Zed", "Grub", "Mo", "Pox", "Ix", "Kez"):
            s.act({"act": "activate", "freak": fid})
            s.end_turn()
    assert s.state.over and s.state.winner == "Bob" and s.state.round == 6
    with pytest.raises(RulesError, match="the game is over \\(Bob won\\)"):
        s.start_round({})


def test_page_hooks_show_the_card_targets_and_actions():
    s = session({}, [], working(10))
    card = s.rules.card(s.state, 10)
    assert card["driver"] == "Zed" and card["status"] == "working" and card["armour"]["front"] == 4
    targets = {t["marker"]: t for t in s.rules.targets(s.state, 10)}
    assert targets[12]["facing"]["facing"] in ("front", "side") and "weapons" in targets[12]
    # Before Ann says who moves, any of her freaks' actions is offered: the first makes him the one who moves.
    acts = {a.act: a for a in s.rules.action_specs(s.state, 10)}
    assert {"activate", "shoot", "drive"} <= set(acts)
    assert all(a.actor == "freak" and a.field("freak").kind == "choice" for a in acts.values())
    s.act({"act": "activate", "freak": "Zed"})
    acts = {a.act: a for a in s.rules.action_specs(s.state, 10)}
    assert {"drive", "stunt", "shoot", "ram", "leave"} <= set(acts) and "activate" not in acts
    drive = acts["drive"]
    assert drive.field("path").kind == "table_path" and drive.field("path").of == 10
    assert {f.name: f.kind for f in drive.fields if f.kind == "flag"} == {
        "reverse": "flag", "concentrate": "flag", "blocked": "flag"}
    assert s.rules.overlays(s.state, 10)["arcs"][0]["range_in"] == 12
    info = s.rules.turn_info(s.state)
    assert info["up"] == "Ann" and info["active"] == 10 and info["turn"] == 0
    assert s.rules.turn_text(s.state) == ("round 1 of 6: Ann's chip; Zed moves (driver of the Rhinocerator); "
                                          "Speed Freak: Zed must drive the Rhinocerator at least 6 in this turn "
                                          "if possible (0.0 in so far)")


# --- a whole game -------------------------------------------------------------------

SCENE = {
    "rules": "alpha_destructicus",
    "table": {"width_mm": 1219.2, "depth_mm": 812.8},
    "cars": [
        {"id": 10, "name": "Rhinocerator", "x_mm": 150, "y_mm": 150, "heading_deg": 0, "length_mm": 80, "width_mm": 36},
        {"id": 11, "name": "Dragster", "x_mm": 150, "y_mm": 400, "heading_deg": 0, "length_mm": 75, "width_mm": 32},
        {"id": 14, "name": "Horse", "x_mm": 300, "y_mm": 650, "heading_deg": 0, "length_mm": 50, "width_mm": 20},
        {"id": 12, "name": "King Rhino", "x_mm": 1050, "y_mm": 150, "heading_deg": 180, "length_mm": 80, "width_mm": 34},
        {"id": 13, "name": "Sarge", "x_mm": 1050, "y_mm": 400, "heading_deg": 180, "length_mm": 75, "width_mm": 32},
        {"id": 15, "name": "Waldo", "x_mm": 1000, "y_mm": 700, "heading_deg": 180, "length_mm": 60, "width_mm": 30},
    ],
    "terrain": [
        {"kind": "building", "name": "Bank", "points": [[700, 480], [800, 480], [800, 580], [700, 580]]},
        {"kind": "blocking", "name": "ramp: Hump", "points": [[480, 630], [480, 670], [520, 670], [520, 630]]},
    ],
    "gates": [
        {"name": "East", "a": [400, 460], "b": [400, 340]},
        {"name": "West", "a": [800, 340], "b": [800, 460]},
        {"name": "Sky", "a": [540, 700], "b": [540, 600]},
    ],
}
ROSTERS = [
    {"player": "Ann", "freaks": [{"name": "Zed", "aboard": 10, "seat": "driver"},
                                 {"name": "Mo", "aboard": 11, "seat": "driver"}, {"name": "Ix", "at": [250, 650]}],
     "vehicles": [{"marker": 10, "sample": "rhinocerator"}, {"marker": 11, "sample": "dragster"},
                  {"marker": 14, "sample": "horse"}]},
    {"player": "Bob", "freaks": [{"name": "Grub", "aboard": 12, "seat": "driver"},
                                 {"name": "Pox", "aboard": 13, "seat": "driver"}, {"name": "Kez", "at": [960, 650]}],
     "vehicles": [{"marker": 12, "sample": "king_rhino"}, {"marker": 13, "sample": "sarge"},
                  {"marker": 15, "sample": "waldo"}]},
]


class Table:
    """Plays a game through the session; each step's dice and choices are fixed and must all be
    used; a chip draw is the choice of the player named next, asked while the bag holds more than
    one player's chips."""

    def __init__(self):
        # Drivers here end turns short of 6 in where the game's point is elsewhere: Speed Freak reminds.
        rules = rule_system("alpha_destructicus", {"speed_freak": "remind"})
        self.s = GameSession(rules, rules.new_game(copy.deepcopy(ROSTERS), parse_scene(SCENE)), None)
        self.kinds = set()
        self.out = []

    @property
    def st(self):
        return self.s.state

    def _chip(self, bag, player):
        return [player] if len(set(bag)) > 1 else []

    def round(self, first):
        bag = [p for p in self.st.players for _ in self.st.alive(p)]
        self.s.dice = FixedDice([])
        self.s.choices = FixedChoices(self._chip(bag, first))
        out = self.s.start_round({})
        assert self.s.choices.remaining == 0 and out["chip"] == first, out
        return out

    def act(self, dice=(), choices=(), **action):
        self.s.dice = FixedDice(list(dice))
        self.s.choices = FixedChoices(list(choices))
        out = self.s.act(action)
        assert self.s.dice.remaining == 0 and self.s.choices.remaining == 0, (action, self.s.dice.remaining, out)
        self.kinds.add(action["act"])
        if isinstance(out, dict) and out.get("jump"):        # a drive that reached a ramp jumped
            self.kinds.add("jump")
        self.out.append(out)
        return out

    def end(self, dice=(), next=None, choices=()):
        bag = self.st.bag
        self.s.dice = FixedDice(list(dice))
        self.s.choices = FixedChoices(list(choices) + ([] if next is None else self._chip(bag, next)))
        out = self.s.end_turn()
        assert self.s.dice.remaining == 0 and self.s.choices.remaining == 0, (out, self.s.dice.remaining)
        if next is not None:
            assert out["chip"] == next, out
        return out


def opening(t) -> None:
    """The whole game's first round and the start of the second, the same whether the drives
    are entered by hand or seen by the webcam: engines repaired, gates scored (East by Ann,
    West by Bob), a freak boards, and Zed's machine guns badly shake the King Rhino."""
    # Round 1
    t.round("Ann")
    t.act([5], act="repair", freak="Zed", component="engine")
    t.act(act="drive", freak="Zed", vehicle=10, path=[[150, 150, 0], [450, 150, 0]])
    t.end(next="Bob")
    t.act([5], act="repair", freak="Grub", component="engine")
    t.act(act="drive", freak="Grub", vehicle=12, path=[[1050, 150, 180], [750, 150, 180]])
    t.end(next="Ann")
    t.act([5], act="repair", freak="Mo", component="engine")
    o = t.act(act="drive", freak="Mo", vehicle=11, path=[[150, 400, 0], [450, 400, 0]])
    assert o["scored"] == [{"gate": "East", "player": "Ann"}]
    t.end(next="Bob")
    t.act([5], act="repair", freak="Pox", component="engine")
    o = t.act(act="drive", freak="Pox", vehicle=13, path=[[1050, 400, 180], [750, 400, 180]])
    assert o["scored"] == [{"gate": "West", "player": "Bob"}]
    t.end(next="Ann")
    t.act(act="activate", freak="Ix")
    t.act(act="walk", freak="Ix", to=[265, 650])
    t.act(act="board", freak="Ix", vehicle=14, seat="driver")
    t.end(next="Bob")
    t.act(act="walk", freak="Kez", to=[820, 600])
    t.end()
    # Round 2
    t.round("Ann")
    o = t.act([4, 2], act="shoot", freak="Zed", weapon="machine guns", target=12)
    assert o["result"] == "glancing" and o["facing"]["facing"] == "front"          # 4 + 1 > 3: badly shaken
    t.act(act="drive", freak="Zed", vehicle=10, path=[[450, 150, 0], [610, 150, 0]])
    t.end(next="Bob")


def test_a_whole_game_six_rounds_every_action_kind_and_gate_scoring():
    """Six rounds between Ann and Bob, every die fixed: gates scored (and one not: backwards), a
    ram won and one lost in a forced move, a jump through a gate, a jacking, a grab as a car passes,
    a building breached, fire, and the tie on points broken by vehicles destroyed."""
    t = Table()
    opening(t)
    o = t.act([2, 5, 1], act="forced", freak="Grub", vehicle=12)
    assert "the King Rhino runs into the Rhinocerator after 2.36 in: a ram" in o["events"] and t.st.stopped
    t.end(next="Ann")
    t.act([4], act="stunt", freak="Mo", stunt="push_it")
    t.act(act="drive", freak="Mo", vehicle=11, path=[[450, 400, 0], [675, 400, 0]])
    # Glancing 5 on Sarge: its driver's player (Bob) picks the component lost.
    o = t.act([6, 1, 5, 3], ["flamethrower"], act="ram", freak="Mo", vehicle=11, target=13)
    assert o["result"] == "won" and t.st.vehicles[13].component("flamethrower").status == "destroyed"
    t.end(next="Bob")
    t.act(act="leave", freak="Pox", to=[750, 440])
    t.act(act="walk", freak="Pox", to=[750, 500])
    t.end(next="Ann")
    # The drive reaches the Hump's foot and jumps ("Jumping"): Ann states 5 in.
    o = t.act([3], [5.0], act="drive", freak="Ix", vehicle=14, path=[[300, 650, 0], [455, 650, 0]])
    assert o["jump"]["distance_in"] == 5.0 and t.st.scores["Ann"] == 2
    t.end(next="Bob")
    t.act(act="walk", freak="Kez", to=[705, 505])
    t.end()

    # Round 3
    t.round("Ann")
    t.act(act="drive", freak="Zed", vehicle=10, reverse=True, path=[[610, 150, 0], [500, 150, 0]])
    t.end(next="Bob")
    o = t.act([3, 2], act="defend", freak="Pox", building="Bank", target=11)
    assert o["result"] == "penetrating" and t.st.vehicles[11].burning        # top armour 0: fire (2)
    t.end(next="Ann")
    # Spinout: a player other than the driver (Bob) turns the Dragster, 45 deg anticlockwise.
    o = t.act([2, 3, 5, 2, 4], [45], act="forced", freak="Mo", vehicle=11)
    assert t.st.vehicles[13].destroyed and t.st.vehicles[11].pending == 4     # spinout waits
    t.end([6, 6, 6], next="Bob")
    t.act(act="walk", freak="Kez", to=[656.6, 418.4])
    o = t.act([5, 2, 1], act="jack", freak="Kez", vehicle=11)
    assert o["result"] == "jacked" and o["rolls"][1]["total"] == 2           # 2 + 1 - 1 (burning)
    t.end([6, 6, 6], next="Ann")
    t.act(act="drive", freak="Ix", vehicle=14, path=[[582, 650, 0], [650, 650, 0], [650, 650, 90], [650, 700, 90], [650, 700, 0], [700, 700, 0]])
    t.end(next="Bob")
    # From where its surge stopped it, touching the Rhinocerator (x 690): 90 mm of its 6 in.
    o = t.act(act="drive", freak="Grub", vehicle=12, path=[[690, 150, 180], [600, 150, 180]])
    assert o["left_in"] == 2.46                                              # slightly shaken: 6 in
    t.end()
    # Round 4
    t.round("Ann")
    o = t.act(act="activate", freak="Mo")
    assert o["events"] == ["Mo moves for Ann", "Mo gets up"]
    t.end(next="Bob")
    o = t.act([3, 2, 5, 1, 1], act="forced", freak="Kez", vehicle=11)       # 5: the Bank does not catch fire
    assert "Pox takes a wound (Bank coming down): 2 left; he falls down until his next turn" in o["events"]
    assert "Bank does not catch fire" in o["events"] and not t.st.terrain["Bank"].burning
    o = t.act([4], act="grab", freak="Mo", vehicle=11)
    assert o["result"] == "clinging" and t.st.freaks["Mo"].seat == "clinging"
    t.end([6, 6, 6], next="Ann")
    t.act(act="drive", freak="Zed", vehicle=10, path=[[500, 150, 0], [520, 150, 0]])
    # Rollover: the King Rhino's driver's player (Bob) turns it to the left.
    o = t.act([5, 1, 6, 4, 4], ["left"], act="ram", freak="Zed", vehicle=10, target=12)
    assert o["result"] == "won" and t.st.vehicles[12].pose.heading_deg == -90  # rolled over
    t.end(next="Bob")
    # Rollover: 2 in "in its last direction of movement" (180 deg, not where it faces now), back
    # into the Rhinocerator: a ram it loses (1 +1 -1 +2 = 3 against 4), a glancing 1 each.
    o = t.act([1, 1, 1, 4, 1, 1], act="forced", freak="Grub", vehicle=12)
    assert o["result"] == "stopped" and o["distance_in"] == 2 and o["hit"] == 10
    t.end(next="Ann")
    t.act(act="drive", freak="Ix", vehicle=14, path=[[700, 700, 0], [700, 700, -90], [700, 650, -90], [700, 650, 180], [560, 650, 180]])
    t.end(next="Bob")
    o = t.act(act="activate", freak="Pox")
    assert "Pox gets up" in o["events"]
    t.act(act="walk", freak="Pox", to=[878, 578])
    t.act(act="board", freak="Pox", vehicle=15, seat="driver")
    t.end()
    # Round 5
    t.round("Bob")
    t.act(act="drive", freak="Pox", vehicle=15, path=[[1000, 700, 180], [1000, 700, -90], [1000, 440, -90], [1000, 440, 180]])
    t.end(next="Ann")
    o = t.act([1], act="shoot", freak="Zed", weapon="machine guns", target=12)
    assert o["result"] == "missed"
    t.end(next="Bob")
    o = t.act(act="drive", freak="Grub", vehicle=12, path=[[578, 150, -90], [578, 80, -90], [578, 80, 0], [580, 80, 0]])
    assert o["turning_in"] == 3.0
    t.end(next="Ann")
    t.act(act="leave", freak="Mo", to=[700, 420])
    t.act(act="walk", freak="Mo", to=[650, 380])
    t.end(next="Bob")
    t.act(act="activate", freak="Kez")
    t.end([6, 6, 6], next="Ann")
    t.act(act="drive", freak="Ix", vehicle=14, path=[[560, 650, 180], [560, 650, 135], [515, 695, 135], [515, 695, 180],
                                                          [400, 695, 180]])
    t.end()
    # Round 6
    t.round("Bob")
    # Round the burning Dragster (at 716, 441 since its spinout), not through it.
    o = t.act(act="drive", freak="Pox", vehicle=15,
              path=[[1000, 440, 180], [1000, 440, -135], [930, 370, -135], [930, 370, 180], [765, 360, 180]])
    assert o["scored"] == [{"gate": "West", "player": "Bob"}] and o["touching"] == []
    t.end(next="Ann")
    t.act(act="drive", freak="Zed", vehicle=10, path=[[520, 150, 0], [520, 150, 45], [560, 190, 45]])
    t.end(next="Bob")
    t.act(act="activate", freak="Grub")
    t.end(next="Ann")
    t.act(act="walk", freak="Mo", to=[600, 380])
    t.end(next="Bob")
    t.act(act="activate", freak="Kez")
    t.end([6, 6, 6], next="Ann")
    t.act(act="activate", freak="Ix")
    o = t.end()
    st = t.st
    assert st.over and st.round == 6 and st.winner == "Ann"
    assert st.scores == {"Ann": 2, "Bob": 2} and st.destroyed_by == {"Ann": 1, "Bob": 0}
    every = {"activate", "walk", "board", "leave", "drive", "forced", "stunt", "grab", "jump", "jack", "shoot",
             "repair", "ram", "defend"}
    assert every == t.kinds == set(ACTIONS)
    scored = [(s["gate"], s["player"]) for o in t.out for s in o.get("scored", [])]
    assert scored == [("East", "Ann"), ("West", "Bob"), ("West", "Bob")]
    assert any("the Horse drives through Sky: 1 point to Ann" in e for o in t.out for e in o["events"])
    assert st.vehicles[13].destroyed and st.terrain["Bank"].breached == [0]
    assert st.freaks["Mo"].wounds == 2 and st.vehicles[11].burning and st.vehicles[11].last_team == "Bob"
    assert "the game ends (6 rounds played): Ann wins with 2 points (tied on points; 1 vehicles destroyed)" \
        in t.s.log[-1].outcome["events"]
    assert json.loads(json.dumps(st.to_json())) == st.to_json()
    with pytest.raises(RulesError, match="the game is over"):
        t.s.start_round({})


# --- more of the tables and the terrain ----------------------------------------------

def test_a_spectacular_explosion_hits_everything_within_6_inches():
    def prep(state):
        working(12, 10)(state)
        state.vehicles[12].pose = state.vehicles[12].pose.__class__(500, 400, 0)
        state.vehicles[10].pose = state.vehicles[10].pose.__class__(500, 470, 0)
        state.vehicles[13].pose = state.vehicles[13].pose.__class__(760, 400, 180)   # 7.2 in from the King: clear
    # A natural 6, penetrating 6; Grub aboard rolls 1 (wounded); the blast's S2 on the tank's side (armour 3):
    # 2 + 2 = 4, a point of armour and a glancing hit (1, slightly shaken).
    s = session({}, [6, 6, 1, 2, 1], prep)
    out = s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12})
    king, tank = s.state.vehicles[12], s.state.vehicles[10]
    assert king.destroyed and king.removed and s.state.freaks["Grub"].aboard is None
    assert s.state.freaks["Grub"].wounds == 2 and s.state.destroyed_by["Ann"] == 1
    assert "the blast reaches the Rhinocerator" in out["events"] and tank.armour["side"] == 2
    assert tank.pending == 1 and s.dice.remaining == 0


def test_option_blast_from():
    """"Within 6 in of the vehicle": the Sarge's back is 4.8 in from the King Rhino's nose, 6.4 in from
    its centre. By default (from the vehicle) the blast reaches it; "centre" spares it (a hand-worked
    review found the blast measured from the centre, sparing what stood nearer than 6 in)."""
    def prep(state):
        working(12, 10)(state)
        state.vehicles[12].pose = state.vehicles[12].pose.__class__(500, 400, 0)
        state.vehicles[10].pose = state.vehicles[10].pose.__class__(500, 470, 0)
        state.vehicles[13].pose = state.vehicles[13].pose.__class__(700, 400, 180)
    dice = [6, 6, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1]
    shot = {"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12}
    edge = session({}, dice, prep).act(shot)
    centre = session({"blast_from": "centre"}, dice, prep).act(shot)
    assert "the blast reaches the Sarge" in edge["events"], edge["events"]
    assert "the blast reaches the Sarge" not in centre["events"], centre["events"]
    assert "the blast reaches the Rhinocerator" in centre["events"]


def test_penetrating_side_blown_off_and_rollover_wreck_ask_the_driver():
    """Penetrating 1 on back armour 1: "one component (chosen by driver) is destroyed"; penetrating 4:
    turned 90 deg (driver's choice), 2d6 in its last direction next turn, 1-3 breaks, freaks injured."""
    def prep(state):
        working(12)(state)
        state.vehicles[12].pose = Pose(500, 400, 0)
        state.vehicles[10].pose = Pose(400, 400, 0)             # behind it: the back, armour 1
    s = session({}, [6, 1], prep, choices=["horns"])          # a natural 6; table 1; Bob picks the horns
    out = s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12})
    king = s.state.vehicles[12]
    assert "penetrating hit 1: side blown off" in out["events"] and king.armour["back"] == 0
    assert king.component("horns").status == "destroyed" and king.engine.status == "working"
    assert s.log[-1].choices[0]["player"] == "Bob"
    s = session({}, [6, 4, 5, 2, 1], prep, choices=["left"])  # table 4; engine 5 holds, horns 2 breaks; Grub 1
    out = s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12})
    king = s.state.vehicles[12]
    assert (king.pending, king.pending_table) == (4, "penetrating") and king.pose.heading_deg == 90
    assert king.pending_heading == 0 and king.component("horns").status == "damaged"
    assert s.state.freaks["Grub"].down and s.state.freaks["Grub"].wounds == 2


def test_bike_table_rattled_is_turned_by_another_player_and_a_riderless_horse_goes():
    def prep(state):
        state.vehicles[14].pose = Pose(300, 200, 0)
    rosters = copy.deepcopy(BASE["rosters"])
    rosters[0]["freaks"][2] = {"name": "Ix", "aboard": 14, "seat": "driver"}
    s = session({}, [6, 2], prep, choices=[30], rosters=rosters)   # Zed shoots his own team's Horse
    out = s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 14})
    horse = s.state.vehicles[14]
    assert "bike hit 2: rattled" in out["events"] and (horse.pending, horse.pending_table) == (2, "bike")
    assert horse.pose.heading_deg == 30 and s.log[-1].choices[0]["player"] == "Bob"   # not the driver's player
    s = session({}, [4], prep)                                      # nobody on the Horse: 4 + 1 > 0
    out = s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 14})
    assert s.state.vehicles[14].removed and "the Horse is destroyed (a hit with nobody aboard)" in " ".join(out["events"])


def test_a_bailed_out_cars_lost_component_is_chosen_by_the_other_side():
    """The empty tank runs into the King Rhino and loses: the King's 6 + 2 = 8 > front 4, a glancing hit on
    an unoccupied car: "One component, chosen by a player other than a current occupant". Nobody is in
    it; the hit came from Bob's roll, so Bob chooses, not Ann whose freak bailed out."""
    def prep(state):
        working(10)(state)
        state.vehicles[12].pose = Pose(420, 200, 90)              # its side 163 mm beyond the tank's nose
    s = session({}, [4, 1, 6], prep, choices=["machine guns"])
    out = s.act({"act": "stunt", "freak": "Zed", "vehicle": 10, "stunt": "bail_out", "to": [200, 260]})
    tank = s.state.vehicles[10]
    assert out["rolls"][1]["total"] == 1 + 1 + 1 - 1 and out["rolls"][2]["total"] == 8     # turn, armour, empty
    assert tank.component("machine guns").status == "destroyed" and s.log[-1].choices[0]["player"] == "Bob"


def test_kablooie_wounds_the_driver_once():
    """ "The driver is wounded and everyone within 3\" takes a S0 hit" ("Bike and Cavalry Hit Table"):
    the thrown rider rolls once (1: a wound), not again for the blast he is in."""
    rosters = copy.deepcopy(BASE["rosters"])
    rosters[0]["vehicles"][2] = {"marker": 14, "name": "Zoom", "type": "bike", "armour": {"all": 1},
                                 "components": ["engine"]}
    rosters[0]["freaks"][2] = {"name": "Ix", "aboard": 14, "seat": "driver"}

    def prep(state):
        state.vehicles[14].engine.status = "working"
        state.vehicles[14].pose = Pose(420, 200, 0)          # 6.5 in from the tank, clear of the 3 in blast
    # A natural 6; the bike table 6; Ix rolls 1.
    s = session({}, [6, 6, 1], prep, rosters=rosters, cars=renamed(14, "Zoom"))
    out = s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 14})
    assert "bike hit 6: kablooie" in out["events"] and s.state.freaks["Ix"].wounds == 2
    assert s.state.vehicles[14].removed and s.dice.remaining == 0


def test_a_bike_hit_throws_the_rider_and_the_horse_surges_on():
    def prep(state):
        state.vehicles[14].pose = state.vehicles[14].pose.__class__(200, 300, 0)
        state.freaks["Ix"].aboard, state.freaks["Ix"].seat, state.freaks["Ix"].pos = 14, "driver", None
    # 3 + 1 against no armour: a hit on the bike and cavalry table, 3 (Ditched); Ix's resilience 2.
    s = session({}, [3, 3, 2], prep)
    out = s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 14})
    assert out["result"] == "penetrating" and "bike hit 3: ditched" in out["events"]
    assert s.state.freaks["Ix"].aboard is None and s.state.freaks["Ix"].wounds == 2
    assert s.state.vehicles[14].pose.x_mm == pytest.approx(200 + 6 * 25.4)


def test_rubble_costs_double_on_a_failed_skill_check():
    terrain = BASE["terrain"] + [{"kind": "rough", "name": "rubble: yard",
                                  "points": [[300, 150], [350, 150], [350, 250], [300, 250]]}]
    s = session({}, [2], working(10), terrain=terrain)
    out = s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [400, 200, 0]})
    assert out["spent"]["value_mm"] == pytest.approx(250.0)         # 200 driven + 50 in rubble paid twice
    s = session({}, [2], working(10), terrain=terrain)
    with pytest.raises(RulesError, match=r"it spends 13.78 in \(11.81 in driven, 0.00 in turning, 1.97 in extra"):
        s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [500, 200, 0]})


def test_a_jump_declared_under_half_its_reach_is_refused_and_a_failed_roll_halves_it():
    gates = BASE["gates"]
    steps = [{"poses": {"10": [540, 320, 0]}}, {"round": {}},
             {"act": "repair", "freak": "Zed", "component": "engine"},
             {"act": "drive", "freak": "Zed", "vehicle": 10, "path": [[540, 320, 0], [840, 320, 0]], "jump_in": 5,
              "expect_error": True},
             {"act": "drive", "freak": "Zed", "vehicle": 10, "path": [[540, 320, 0], [840, 320, 0]]}]
    out = play(steps, [5, 2], gates=gates, choices=["Ann", 10.0])
    assert "declare between 5.91 in and 11.81 in" in out["steps"][3]["error"]
    assert out["steps"][4]["jump"]["distance_in"] == 5.0 and out["state"]["vehicles"]["10"]["pose"][0] == 967.0


def test_a_recorded_game_file_plays_back_to_the_same_state(tmp_path):
    from companion.record import resume
    from companion.store import GameStore
    path = SCENARIOS[2]                                  # the ram: dice, poses, a drive and a ram
    store = GameStore(tmp_path / "game.db")
    outcome = run_scenario(load_scenario(path), str(path), store)
    replayed = resume(store)
    assert replayed.session.state.to_json() == outcome["state"]
    assert replayed.session.state.vehicles[12].armour["side"] == 1
    store.close()


def test_a_turn_on_the_spot_seen_as_many_small_steps_costs_as_one_turn():
    """The camera follows a truck turning 90 degrees on the spot as thirty steps of 3: each
    less than the turn tolerance, together one turn of 3 in ("Vehicles")."""
    from companion.rules.alpha_destructicus import _turn_runs
    from companion.geometry import Pose
    steps = [Pose(300.0, 300.0, 3.0 * k) for k in range(31)] + [Pose(300.0, 300.0 + 50.0, 90.0)]
    runs = _turn_runs(steps)
    assert [round(b.heading_deg - a.heading_deg) for a, b, _ in runs] == [90, 0]
    assert runs[1][2] == pytest.approx(50.0)
    straight = [Pose(300.0 + 10 * k, 300.0, 0.3 * (-1) ** k) for k in range(10)]     # jitter, not a turn
    assert all(abs(b.heading_deg - a.heading_deg) < 1 for a, b, _ in _turn_runs(straight))


# --- the path runs into things (the swept footprint) ------------------------------------

def _king_at(x, y, h):
    def prep(state):
        working(10)(state)
        state.vehicles[12].pose = state.vehicles[12].pose.__class__(x, y, h)
    return prep


def test_option_path_contact():
    """The King Rhino (80 mm long, at x 500 heading back towards the tank) stands in the
    Rhinocerator's way: its front at x 460; the tank's nose (40 mm ahead of its centre at x 200) meets it 220 mm (8.66 in) on."""
    # "ram": the tank stops where it touches (short by CONTACT_FIND_MM at most) and rams the King there.
    s = session({}, [5, 1, 1], _king_at(500, 200, 180))
    out = s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [560, 200, 0]})
    assert out["result"] == "rammed" and out["contact"]["with"] == 12 and out["contact"]["after_in"] == 8.66
    assert out["moved_in"] == 8.66 and s.state.vehicles[10].pose.x_mm == pytest.approx(420.0)
    # The ram's reading is in the drive's outcome: each front struck, with the armour compared.
    assert out["contact"]["kind"] == "vehicle" and out["moved"]["moved_in"] == 8.66
    assert (out["facing"]["facing"], out["facing"]["armour"]) == ("front", 3)
    assert (out["rammer_facing"]["facing"], out["rammer_facing"]["armour"]) == ("front", 4)
    assert out["ram"] == "won" and "ram: the Rhinocerator 7 against the King Rhino 3: the rammer wins" in out["events"]
    assert out["events"][0].startswith("the Rhinocerator's path runs into the King Rhino at (18.2, 7.9) in, "
                                       "after 8.66 in: it stops there and rams it")
    # "refuse": nothing moves; the message says where and with what, in the book's inches.
    s = session({"path_contact": "refuse"}, [], _king_at(500, 200, 180))
    with pytest.raises(RulesError, match=r"path runs into the King Rhino at \(18.2, 7.9\) in, after 8.66 in"
                                         r": that is a ram"):
        s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [560, 200, 0]})
    assert s.state.vehicles[10].pose.x_mm == 200


@pytest.mark.parametrize("gap_mm, concentrate, word", [(152.4, False, None), (151.4, False, "less than 6 in"),
                                                      (304.8, True, None), (305.8, True, "more than 12 in")])
def test_a_path_ram_counts_the_distance_to_the_touch_exactly_at_6_and_12_in(gap_mm, concentrate, word):
    """ "If the ramming vehicle moved more than 12" before ramming, it adds 1. If it moved less than 6"
    before ramming, it subtracts 1" ("Ramming"): the distance is to where the car touches, found
    between the path's 2 mm steps by halving (CONTACT_FIND_MM). The tank's nose (x 240) meets the King
    Rhino's front exactly 6 in (12 in) on: it moved exactly that, neither modifier; 1 mm less than 6 in
    is -1, 1 mm more than 12 in is +1. On 2 mm steps alone it stopped up to 2 mm short, and 6 in
    counted "less than 6", 12 in and 1 mm not "more than 12"."""
    s = session({}, [5, 1, 1], _king_at(240 + gap_mm + 40, 200, 180))
    out = s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [700, 200, 0], "concentrate": concentrate})
    assert out["result"] == "rammed" and out["contact"]["with"] == 12
    moved = [m["reason"] for m in out["rolls"][0]["modifiers"] if m["reason"].startswith("moved")]
    assert moved == ([] if word is None else [f"moved {gap_mm / 25.4:.2f} in, {word}"])
    assert out["moved_in"] == round(gap_mm / 25.4, 2) and out["contact"]["after_in"] == round(gap_mm / 25.4, 2)
    # Stopped touching: short of the King by CONTACT_FIND_MM at most.
    assert 200 + gap_mm - 1e-6 <= s.state.vehicles[10].pose.x_mm <= 200 + gap_mm


def test_a_path_through_a_building_stops_at_its_wall_and_rams_it():
    def prep(state):
        working(10)(state)
        state.vehicles[10].pose = state.vehicles[10].pose.__class__(490, 560, 90)    # 50 mm below the Bank
    with pytest.raises(RulesError, match=r"path runs into Bank at \(19.3, 25.7\) in, after 1.97 in:"):
        session({"path_contact": "refuse"}, [], prep).act(
            {"act": "drive", "freak": "Zed", "vehicle": 10, "to": [490, 700, 90]})
    s = session({}, [1, 4], prep)           # the tank 1 - 1 (slow) + 1 (turn) + 1 (armour) = 2; the Bank 4 - 1 = 3
    out = s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [490, 700, 90]})
    assert out["contact"]["with"] == "Bank" and out["ram"] == "lost" and s.state.stopped
    # A name, not a marker: terrain, which has no facings; the wall struck is its edge nearest the car.
    assert out["contact"]["kind"] == "building" and out["facing"] == {
        "facing": "wall 0", "why": "the wall of Bank nearest the Rhinocerator", "armour": 2}
    assert (out["rammer_facing"]["facing"], out["rammer_facing"]["armour"]) == ("front", 4)
    assert s.state.vehicles[10].pose.y_mm == pytest.approx(610.0) and s.state.terrain["Bank"].breached == []
    with pytest.raises(RulesError, match="has stopped"):
        s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [490, 620, 90]})
    # A breached building lets it "continue through".
    def breached(state):
        prep(state)
        state.terrain["Bank"].breached.append(0)
    out = session({}, [], breached).act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [490, 700, 90]})
    assert out["result"] == "moved" and "contact" not in out


def _waldo(at, dice=(), options=None):
    """Ix drives the Waldo (a small skimmer) where the Horse stands."""
    rosters = copy.deepcopy(BASE["rosters"])
    rosters[0]["vehicles"][2] = {"marker": 14, "sample": "waldo"}
    rosters[0]["freaks"][2] = {"name": "Ix", "aboard": 14, "seat": "driver"}

    def prep(state):
        state.vehicles[14].pose = state.vehicles[14].pose.__class__(*at)
    return session({"waldo_armour": 1, **(options or {})}, dice, prep, rosters=rosters,
                   cars=renamed(14, "Waldo"))


def test_a_skimmer_flies_over_a_building_but_rams_what_it_ends_touching():
    s = _waldo((490, 560, 90))
    out = s.act({"act": "drive", "freak": "Ix", "vehicle": 14, "to": [490, 800, 90]})     # over the Bank
    assert out["result"] == "moved" and out["touching"] == [] and not s.state.stopped
    s = _waldo((490, 560, 90), dice=[6, 1])
    out = s.act({"act": "drive", "freak": "Ix", "vehicle": 14, "to": [490, 625, 90]})     # nose on the wall
    assert out["touching"] == ["Bank"] and out["result"] == "rammed" and out["rams"] == {"Bank": "won"}
    assert "the Waldo breaches Bank's wall where it struck and may drive through" in out["events"]
    assert s.state.terrain["Bank"].breached == [0] and s.state.stopped       # its move ended there
    with pytest.raises(RulesError, match="has stopped"):
        s.act({"act": "drive", "freak": "Ix", "vehicle": 14, "to": [490, 640, 90]})
    # A vehicle is no terrain: the skimmer's path stops at it and rams it.
    s = _waldo((400, 200, 0), dice=[6, 1, 6], options={})
    s.state.vehicles[10].pose = s.state.vehicles[10].pose.__class__(500, 200, 0)
    out = s.act({"act": "drive", "freak": "Ix", "vehicle": 14, "to": [560, 200, 0]})
    assert out["contact"]["with"] == 10 and out["result"] == "rammed"


# --- push it: straight ahead ------------------------------------------------------------

def test_the_pushed_6_inches_are_straight_ahead():
    # The Dragster pushes it (18 in): 7.87 in straight, a 90 deg turn (3 in), 6.30 in: a straight 6 in is there.
    s = session({}, [5], working(11))
    s.act({"act": "stunt", "freak": "Mo", "stunt": "push_it"})
    out = s.act({"act": "drive", "freak": "Mo", "vehicle": 11,
                 "path": [[200, 400, 0], [400, 400, 0], [400, 400, 90], [400, 560, 90]]})
    assert out["left_in"] == 0.83
    # A zig-zag of 3.94 in legs and two turns (17.77 in of 18): no straight 6 in for the push.
    s = session({}, [5], working(11))
    s.act({"act": "stunt", "freak": "Mo", "stunt": "push_it"})
    with pytest.raises(RulesError, match=r"the pushed 6 in must be straight ahead: its straightest run is 3.94 in, "
                                         r"so it spends 13.83 in of the 12.00 in it has besides the push"):
        s.act({"act": "drive", "freak": "Mo", "vehicle": 11,
               "path": [[200, 400, 0], [300, 400, 0], [300, 400, 45], [370, 470, 45], [370, 470, 0],
                        [470, 470, 0]]})
    # Without the push the same path is simply too long (17.77 in of 12).
    s = session({}, [], working(11))
    with pytest.raises(RulesError, match="but has 12.00 in this turn"):
        s.act({"act": "drive", "freak": "Mo", "vehicle": 11,
               "path": [[200, 400, 0], [300, 400, 0], [300, 400, 45], [370, 470, 45], [370, 470, 0],
                        [470, 470, 0]]})


def _horse(options=None, dice=(), terrain=None):
    rosters = copy.deepcopy(BASE["rosters"])
    rosters[0]["freaks"][2] = {"name": "Ix", "aboard": 14, "seat": "driver"}
    changes = {"rosters": rosters}
    if terrain:
        changes["terrain"] = BASE["terrain"] + terrain

    def prep(state):
        state.vehicles[14].pose = state.vehicles[14].pose.__class__(450, 600, 0)
    return session(options, dice, prep, **changes)


def test_option_bike_push_turns():
    turn = {"act": "drive", "freak": "Ix", "vehicle": 14, "path": [[450, 600, 0], [450, 600, 30], [550, 658, 30]]}
    # "none": cavalry (treated like bikes) pushing it may not turn at all ...
    s = _horse({}, [5])
    s.act({"act": "stunt", "freak": "Ix", "stunt": "push_it"})
    with pytest.raises(RulesError, match="it turns 30 deg while pushing it; a cavalry may not turn when pushing it"):
        s.act(turn)
    # ... nor push it after turning this move.
    s = _horse({}, [5])
    s.act({"act": "drive", "freak": "Ix", "vehicle": 14, "path": [[450, 600, 0], [450, 600, -30]]})
    with pytest.raises(RulesError, match="the Horse has turned this move: a cavalry may not turn when pushing it"):
        s.act({"act": "stunt", "freak": "Ix", "stunt": "push_it"})
    # "pushed_part": only the pushed 6 in are straight.
    s = _horse({"bike_push_turns": "pushed_part"}, [5])
    s.act({"act": "stunt", "freak": "Ix", "stunt": "push_it"})
    assert s.act(turn)["turns_deg"] == [30.0]
    # Without pushing it the horse turns freely.
    assert _horse().act(turn)["turns_deg"] == [30.0]


# --- cavalry leap a normal barrier ----------------------------------------------------------

CRATES = [{"kind": "blocking", "name": "barrier: crates", "points": [[540, 570], [560, 570], [560, 630], [540, 630]]}]


def test_cavalry_leap_a_normal_barrier_if_they_clear_it_this_turn():
    path = {"act": "drive", "freak": "Ix", "vehicle": 14, "path": [[450, 600, 0], [650, 600, 0]]}
    # Without leaping, the horse runs into the crates (its nose at 475 stops touching 540, 65 mm on) and rams.
    out = _horse({}, [1, 1], CRATES).act(path)
    assert out["contact"]["with"] == "barrier: crates" and out["contact"]["after_in"] == 2.56
    # Leaping: over, no dice.
    s = _horse({}, [], CRATES)
    out = s.act({**path, "leap": "barrier: crates"})
    assert out["leapt"] == "barrier: crates" and "contact" not in out and out["moved_in"] == 7.87
    assert s.state.vehicles[14].pose.x_mm == 650
    assert "the Horse leaps over barrier: crates (alpha-destructicus.txt, \"Terrain\")" in out["events"]
    drive = next(a for a in s.rules.action_specs(s.state, 14) if a.act == "drive")
    assert drive.field("leap").choices[0]["value"] == "barrier: crates" and drive.field("leap").optional
    # It must clear the barrier this turn: landing on it is refused, and so is a leap it has no movement for.
    s = _horse({}, [], CRATES)
    with pytest.raises(RulesError, match="the Horse would land on barrier: crates: a leap must clear the barrier "
                                         "this turn"):
        s.act({**path, "path": [[450, 600, 0], [560, 600, 0]], "leap": "barrier: crates"})
    with pytest.raises(RulesError, match="but has 12.00 in this turn"):
        s.act({**path, "path": [[450, 600, 0], [450, 600, 90], [450, 600, 0], [770, 600, 0]],
               "leap": "barrier: crates"})
    # Only cavalry, and only over a normal barrier.
    with pytest.raises(RulesError, match="Bank is a building, not a normal barrier"):
        s.act({**path, "leap": "Bank"})
    t = session({}, [], working(10), terrain=BASE["terrain"] + CRATES)
    with pytest.raises(RulesError, match="only cavalry leap barriers; the Rhinocerator is a tank"):
        t.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [300, 200, 0], "leap": "barrier: crates"})


# --- buildings catch fire ----------------------------------------------------------------------

def test_a_burning_vehicle_sets_a_building_it_touches_on_fire_on_1_2():
    def prep(state):
        working(10)(state)
        state.vehicles[10].pose = state.vehicles[10].pose.__class__(490, 560, 90)
        state.vehicles[10].burning = True
    # It drives up to the Bank's wall (2 mm off: touching) and stops: 2, the Bank catches fire.
    s = session({}, [2], prep)
    out = s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [490, 608, 90]})
    assert out["touching"] == ["Bank"] and "Bank catches fire (alpha-destructicus.txt, \"Fire!\")" in out["events"]
    assert s.state.terrain["Bank"].burning and s.state.to_json()["terrain"]["Bank"]["burning"] is True
    # A ram touches it too: tank 5, Bank 1, then 3: no fire.
    s = session({}, [2, 5, 1, 3], prep)                 # 2: touching at the wall, the Bank catches fire
    s.state.terrain["Bank"].burning = False
    s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [490, 608, 90]})
    s.state.terrain["Bank"].burning = False                # (put out, to see the ram's own roll)
    out = s.act({"act": "ram", "freak": "Zed", "vehicle": 10, "terrain": "Bank"})
    assert "Bank does not catch fire" in out["events"] and not s.state.terrain["Bank"].burning
    # Not burning: no roll.
    s = session({}, [], working(10))
    s.state.vehicles[10].pose = s.state.vehicles[10].pose.__class__(490, 560, 90)
    assert s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [490, 608, 90]})["touching"] == ["Bank"]
    # Touching is mutual: the tank drives up to a burning King Rhino (2 mm off) and catches fire on a 1.
    s = session({}, [1], _king_at(500, 200, 180))
    s.state.vehicles[12].burning = True
    out = s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [418, 200, 0]})
    assert out["touching"] == [12] and "the Rhinocerator catches fire" in out["events"]
    assert s.state.vehicles[10].burning


# --- the page's way in: specs, choices, passes, later drives --------------------------------

WHOLE = Path(__file__).resolve().parents[1] / "examples" / "scenarios" / "ad-game-whole.json"


class StepTable:
    """The table as an action's fields read it (rules.actions.TableReader), answering from a
    scenario step: the path the camera would have followed is the step's own."""

    def __init__(self, step, state):
        self.step, self.state = step, state

    def pose_of(self, marker):
        p = self.state.vehicles[marker].pose
        return [p.x_mm, p.y_mm, p.heading_deg, 0.5, 0.3]

    def path_of(self, marker):
        return self.step["path"]

    def point(self, value, what):
        return float(value[0]), float(value[1])


def test_the_whole_game_goes_through_the_pages_specs_and_uses_every_action():
    """Every action of the whole-game scenario is one the page offers at that moment, on the
    card actor_marker names, sent as the page sends it (no camera field, nothing outside the
    spec) and filled by the spec; the game then ends as the scenario expects."""
    data = load_scenario(WHOLE)
    rules = rule_system("alpha_destructicus", data.get("options"))
    s = GameSession(rules, rules.new_game(data["rosters"], parse_scene(data)), FixedDice(data["dice"]),
                    FixedChoices(data["choices"], "scenario"))
    used = set()
    for n, step in enumerate(data["steps"], start=1):
        if "act" in step:
            marker = rules.actor_marker(s.state, step)
            specs = {a.act: a for a in rules.action_specs(s.state, marker)}
            assert step["act"] in specs, (n, step, marker, sorted(specs))
            spec = specs[step["act"]]
            assert spec.actor == "freak" and spec.rule.startswith("alpha-destructicus.txt")
            sent = {k: v for k, v in step.items() if spec.field(k) is None or spec.field(k).kind != "table_path"}
            filled = spec.fill(sent, StepTable(step, s.state))
            extra = {k: v for k, v in filled.items() if k not in step}
            assert {k: filled[k] for k in step} == step and all(spec.field(k).kind == "fixed" for k in extra), \
                (n, filled, step)
            out = s.act(filled)
            assert out is not None, n
            used.add(step["act"])
            if out.get("jump"):                  # a drive that reached a ramp's foot jumped ("Jumping")
                used.add("jump")
        elif "round" in step:
            s.start_round({})
        elif step.get("end_turn"):
            s.end_turn()
        else:
            rules.update_poses(s.state, {int(k): Pose(*v) for k, v in step["poses"].items()})
    assert used == set(ACTIONS) and s.state.round >= 2 and s.state.over and s.state.winner == "Ann"
    assert s.dice.remaining == 0 and s.choices.remaining == 0
    assert check_expectations(data, run_scenario(data, str(WHOLE))) == []


def test_hit_choices_are_asked_of_the_player_the_book_gives_them_to():
    """Spinout: "turns up to 45 degrees ... chosen by a player other than the driver" (Bob's
    King Rhino, shot by Ann: Ann chooses); Rollover: "left or right, driver's choice" (Bob);
    Component Damage: "chosen by driver". The wrong player's answer is refused, nothing changes."""
    s = session({}, [4, 4], working(12))
    king = s.state.vehicles[12]
    king.pose, s.state.vehicles[10].pose = Pose(500, 400, 0), Pose(500, 470, 0)
    s.choices = None
    assert s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12}) is None
    asked = s.pending
    assert isinstance(asked, ChoiceRequest) and asked.player == "Ann" and "spins out" in asked.purpose
    assert [o["value"] for o in asked.options] == [-45, -30, -15, 0, 15, 30, 45]
    with pytest.raises(DiceError, match="this choice is Ann's to make"):
        s.choose("Bob", 30)
    assert king.pose.heading_deg == 0 and s.pending is asked
    out = s.choose("Ann", 30)
    assert out["result"] == "glancing" and king.pose.heading_deg == 30 and king.pending == 4
    # Rollover (6) on the King Rhino: Bob, its driver's player, picks the side.
    s = session({}, [4, 6, 5, 5], working(12))
    s.state.vehicles[12].pose, s.state.vehicles[10].pose = Pose(500, 400, 0), Pose(500, 470, 0)
    s.choices = None
    s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12})
    assert s.pending.player == "Bob" and [o["value"] for o in s.pending.options] == ["left", "right"]
    s.choose("Bob", "right")
    assert s.state.vehicles[12].pose.heading_deg == -90
    # Component Damage (5) with two working components: the driver's player chooses; with one, nobody is asked.
    s = session({}, [4, 5], working(12))
    s.state.vehicles[12].pose, s.state.vehicles[10].pose = Pose(500, 400, 0), Pose(500, 470, 0)
    s.choices = None
    s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12})
    assert s.pending.player == "Bob" and {o["value"] for o in s.pending.options} == {"engine", "horns"}
    s.choose("Bob", "horns")
    assert s.state.vehicles[12].component("horns").status == "destroyed"


def test_a_player_who_passes_puts_the_chip_on_the_freak_he_chooses():
    """ "he may move one ... He must then place the chip on the character" ("The Turn"): ending the
    turn with nobody chosen asks the player which freak's chip it is; that freak has moved."""
    s = session({})
    s.choices = None
    assert s.end_turn() is None
    assert s.pending.player == "Ann" and {o["value"] for o in s.pending.options} == {"Zed", "Mo", "Ix"}
    assert s.choose("Ann", "Ix") is None
    assert "whose chip came out of the bag" in s.pending.purpose       # then the next chip is drawn
    out = s.choose("Ann", "Bob")
    assert s.state.freaks["Ix"].moved and not s.state.freaks["Zed"].moved and out["chip"] == "Bob"
    assert any("Ann passes: the chip goes on Ix" in e for e in out["events"])


def test_a_second_drive_in_a_turn_reads_only_its_own_path():
    """The table may send the way since the turn began: the second drive is read from where the first
    ended, so the first stretch is not driven (or paid for) twice."""
    s = session({}, [], working(10))
    s.act({"act": "activate", "freak": "Zed"})
    first = [[200, 200, 0], [300, 200, 0]]
    assert s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "path": first})["moved_in"] == 3.94
    whole = first + [[303, 201, 0.5], [400, 200, 0]]           # the camera's way since the turn began
    out = s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "path": whole})
    assert out["moved_in"] == 3.94 and s.state.spent_mm == pytest.approx(200.0)
    assert s.state.vehicles[10].pose.x_mm == 400


def test_walk_through_the_teleporter_and_fire_a_buildings_guns_from_a_freaks_card():
    """A freak on foot's actions are on the card of the vehicle nearest him (he has no marker of his
    own): walk (through one building's door and out of another's) and the building's guns."""
    terrain = BASE["terrain"] + [{"kind": "building", "name": "Mill", "points": [[900, 100], [980, 100],
                                                                               [980, 180], [900, 180]]}]
    s = session({}, [5], terrain=terrain)
    st, rules = s.state, s.rules
    st.freaks["Ix"].pos = (380.0, 700.0)                      # outside the Bank's west wall (x 400)
    home = rules.actor_marker(st, {"act": "walk", "freak": "Ix"})
    assert home == 14                                          # the Horse is the nearest car
    walk = next(a for a in rules.action_specs(st, home) if a.act == "walk")
    assert walk.field("to").kind == "table_point" and walk.field("teleport_in").optional
    out = s.act(walk.fill({"act": "walk", "freak": "Ix", "to": [940, 200], "teleport_in": "Bank",
                           "teleport_out": "Mill"}, StepTable({}, st)))
    assert out["walked"]["value_mm"] == pytest.approx(20 + 20) and st.freaks["Ix"].pos == (940.0, 200.0)
    with pytest.raises(RulesError, match="would walk"):
        s.act({"act": "walk", "freak": "Ix", "to": [940, 400]})
    # In the Mill, the guns: S1, 12 in, on the King Rhino's top armour 2 (5 + 1 = 6 > 2: glancing).
    st = s.state                        # (a refused action leaves the state as it was before it)
    st.freaks["Ix"].pos = (940.0, 140.0)
    home = rules.actor_marker(st, {"act": "defend", "freak": "Ix"})
    defend = next(a for a in rules.action_specs(st, home) if a.act == "defend")
    assert {c["value"] for c in defend.field("building").choices} == {"Bank", "Mill"}
    s.dice = FixedDice([5, 1])
    out = s.act(defend.fill({"act": "defend", "freak": "Ix", "building": "Mill", "target": 12}, StepTable({}, st)))
    assert out["facing"]["facing"] == "top" and out["result"] == "glancing"


def test_a_barrier_knocked_away_goes_the_way_the_rammer_chooses():
    """ "knocked 1d6 inches away from the ramming vehicle in a direction chosen by the rammer": Ann,
    whose Rhinocerator won the ram, is asked; 30 deg left of straight on."""
    terrain = BASE["terrain"] + [{"kind": "blocking", "name": "barrier: crates",
                                  "points": [[240, 150], [260, 150], [260, 250], [240, 250]]}]
    s = session({}, [5, 2, 2], working(10), terrain=terrain)
    s.choices = None
    s.act({"act": "activate", "freak": "Zed"})
    s.state.vehicles[10].pose = Pose(150, 200, 0)
    s.act({"act": "drive", "freak": "Zed", "vehicle": 10, "to": [199, 200, 0]})    # up to the crates
    spec = next(a for a in s.rules.action_specs(s.state, 10) if a.act == "ram")
    assert "barrier: crates" in [c["value"] for c in spec.field("terrain").choices] and spec.field("target").optional
    assert s.act({"act": "ram", "freak": "Zed", "vehicle": 10, "terrain": "barrier: crates"}) is None
    assert s.pending.player == "Ann" and 30 in [o["value"] for o in s.pending.options]
    s.choose("Ann", 30)
    dx, dy = s.state.terrain["barrier: crates"].offset_mm
    assert math.hypot(dx, dy) == pytest.approx(50.8) and math.degrees(math.atan2(dy, dx)) == pytest.approx(30)


def test_moves_are_judged_from_where_the_car_stood_and_evidence_and_the_demo_layout():
    s = session({}, [], working(10))
    assert s.rules.judge_move(s.state, 10, Pose(400, 200, 0)) is None          # nobody is moving it yet
    s.act({"act": "activate", "freak": "Zed"})
    ok = s.rules.judge_move(s.state, 10, Pose(400, 200, 0))
    assert ok["legal"] and ok["moved_in"] == 7.87 and ok["margin_mm"] == pytest.approx(304.8 - 200)
    far = s.rules.judge_move(s.state, 10, Pose(300, 400, 90))                  # a tank: 90 deg costs 6 in
    assert not far["legal"] and far["turning_in"] == 6.0 and "but has 12.00 in" in far["reasons"][0]
    shapes = s.rules.evidence(s.state, {"act": "shoot", "target": 12}, 10, 12)
    assert [sh["role"] for sh in shapes] == ["measure", "arc", "arc"]
    drove = s.rules.evidence(s.state, {"act": "drive", "path": [[200, 200, 0], [300, 200, 0]]}, 10, None)
    assert drove[-1]["label"] == "path driven"
    cars = [(m, f"car {m}", 75.0, 32.0) for m in range(10, 15)]
    layout = s.rules.demo_layout(cars, (1219.2, 812.8))
    assert len({(round(x), round(y)) for x, y, _ in layout.values()}) == 5
    assert all(60 < x < 1160 and 60 < y < 760 for x, y, _ in layout.values())


# --- an activation through the table game, as the page plays it -------------------------------

def test_an_activation_through_the_table_game_with_the_pages_requests(demo_table, renderer):
    """The demo table, the starter rosters, the arena layout: the page's own requests (the
    Flask API) start a round, draw a chip, repair the Dragster's engine, drive it twice as the
    camera follows it (the second drive read from where the first ended), and end the turn.
    A freak on foot is reached from the card of the car nearest him."""
    from companion.game import TableGame
    from companion.live import LiveTable
    from companion.web import create_app
    from vision.render import CarTruth
    from vision.sources import SyntheticSource

    rules = rule_system("alpha_destructicus")
    layout = rules.demo_layout([(c.id, c.name, c.length_mm, c.width_mm) for c in demo_table.cars],
                               (demo_table.width_mm, demo_table.depth_mm))
    where = dict(layout)
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    rng = np.random.default_rng(5)
    frame_no = [0]

    def show(poses, times=1):
        image = renderer.render([CarTruth(m, *p) for m, p in poses.items()], rng).image
        for _ in range(times):
            frame_no[0] += 1
            live.process(image, frame_no[0], frame_no[0] / 30.0)

    show(where, 16)
    game = TableGame(live, seed=3)
    client = create_app(game, {"TESTING": True}).test_client()
    h = {"X-CSRF-Token": client.get("/api/session").get_json()["csrf"]}

    def post(url, payload):
        r = client.post(url, json=payload, headers=h)
        assert r.status_code == 200, r.get_json()
        return r.get_json()

    rosters = client.get("/api/rosters/starter?rules=alpha_destructicus").get_json()
    post("/api/game", {"rules": "alpha_destructicus", "rosters": rosters})
    g = post("/api/round", {"orders": {}})
    # A chip is drawn from the bag by hand: the page asks whose came out (no die), and its
    # header says a chip is being drawn, not that the round is over.
    assert g["pending"]["waiting"] == "choice" and g["pending"]["dice"] == []
    assert [o["value"] for o in g["pending"]["options"]] == ["Player 1", "Player 2"]
    assert g["game"]["turn_text"] == "round 1 of 6: draw a chip from the bag (6 in it) and say whose it is"
    g = post("/api/choice", {"player": g["pending"]["player"], "value": "Player 1"})
    assert g["game"]["up"] == "Player 1"
    car = client.get("/api/car/10").get_json()
    acts = {a["act"]: a for a in car["actions"]}
    assert {"activate", "repair"} <= set(acts) and "drive" not in acts and acts["repair"]["actor"] == "freak"
    # (no drive: the Dragster's engine starts broken, "Vehicle Components")
    # Repair the engine (a skill roll of 5): his move has begun, and the Dragster is held where it stands.
    driver = next(f for f in rosters[0]["freaks"] if f.get("aboard") == 10)["name"]
    post("/api/act", {"act": "repair", "freak": driver, "component": "engine"})
    g = post("/api/dice/typed", {"faces": [5]})
    assert g["game"]["active"] == 10 and 10 in g["held"]
    # A drive the page sends without its path: the camera's way is the path.
    x0, y0, h0 = where[10]
    for k in range(1, 21):                                    # 100 mm in 5 mm frames
        show({**where, 10: (x0 + 5.0 * k, y0, h0)})
    show({**where, 10: (x0 + 100.0, y0, h0)}, 3)
    g = post("/api/act", {"act": "drive", "freak": driver, "vehicle": 10})
    first = g["last_outcome"]["event"]["outcome"]
    assert first["moved_in"] == pytest.approx(100 / 25.4, abs=0.1) and first["turning_in"] == 0
    for k in range(1, 11):                                    # 50 mm more (short of the Waldo ahead)
        show({**where, 10: (x0 + 100.0 + 5.0 * k, y0, h0)})
    show({**where, 10: (x0 + 150.0, y0, h0)}, 3)
    # 5.91 in in all: the Waldo ahead blocks the way (Speed Freak's "if possible", said by the drive).
    g = post("/api/act", {"act": "drive", "freak": driver, "vehicle": 10, "blocked": True})
    second = g["last_outcome"]["event"]["outcome"]
    assert second["moved_in"] == pytest.approx(50 / 25.4, abs=0.1)
    assert g["game"]["state"]["activation"]["spent_in"] == pytest.approx(150 / 25.4, abs=0.15)
    assert g["game"]["state"]["vehicles"]["10"]["pose"][0] == pytest.approx(x0 + 150, abs=1.5)
    # A field the spec does not have is refused, naming it; nothing changes.
    r = client.post("/api/act", json={"act": "drive", "freak": driver, "vehicle": 10, "path": [[0, 0, 0]]}, headers=h)
    assert r.status_code == 409 and "read from the table by the camera" in r.get_json()["error"]
    g = post("/api/end_turn", {})
    assert g["pending"]["waiting"] == "choice" and "5 chips in it" in g["pending"]["purpose"]
    assert g["game"]["turn_text"] == "round 1 of 6: draw a chip from the bag (5 in it) and say whose it is"
    g = post("/api/choice", {"player": g["pending"]["player"], "value": "Player 2"})
    assert g["game"]["up"] == "Player 2" and g["game"]["active"] is None and g["held"] == []
    # Freak 2.3 is on foot: his walk is on the card of the car nearest him, and goes where he is sent.
    on_foot = next(f for f in rosters[1]["freaks"] if "at" in f)["name"]
    home = rules.actor_marker(game.session.state, {"act": "walk", "freak": on_foot})
    walk = next(a for a in client.get(f"/api/car/{home}").get_json()["actions"] if a["act"] == "walk")
    assert walk["actor"] == "freak" and {f["name"]: f["kind"] for f in walk["fields"]}["to"] == "table_point"
    g = post("/api/act", {"act": "walk", "freak": on_foot, "to": [450.0, 360.0]})
    assert g["game"]["state"]["freaks"][on_foot]["pos"] == [450.0, 360.0]


def test_a_freak_in_a_wreck_can_still_get_out_and_walk():
    s = session({}, [])
    s.state.vehicles[10].destroyed = True
    acts = {a.act for a in s.rules.action_specs(s.state, 10)}
    assert acts == {"activate", "leave"}
    s.act({"act": "leave", "freak": "Zed", "to": [200, 240]})
    assert s.state.freaks["Zed"].on_foot and s.state.acting == "Zed"
    home = s.rules.actor_marker(s.state, {"act": "walk", "freak": "Zed"})
    assert "walk" in {a.act for a in s.rules.action_specs(s.state, home)}


def test_condition_says_what_a_hit_left_the_vehicle():
    """For the result headline: components working out of all, the hurt ones by name, burning;
    a penetrating hit that sets the King Rhino on fire changes it ("Damage" tables)."""
    s = session({}, [6, 2], working(12))
    s.state.vehicles[12].pose = s.state.vehicles[12].pose.__class__(500, 400, 0)
    s.state.vehicles[10].pose = s.state.vehicles[10].pose.__class__(500, 470, 0)
    assert s.rules.condition(s.state, 12) == "2 of 2 components working"          # engine, horns
    s.act({"act": "shoot", "freak": "Zed", "weapon": "machine guns", "target": 12})
    assert s.rules.condition(s.state, 12) == "2 of 2 components working, burning"
    s.state.vehicles[12].components[1].status = "damaged"
    assert s.rules.condition(s.state, 12) == "1 of 2 components working (horns damaged), burning"
    assert s.rules.condition(s.state, 999) is None
    s.state.vehicles[12].destroyed = True
    assert s.rules.condition(s.state, 12).startswith("destroyed")

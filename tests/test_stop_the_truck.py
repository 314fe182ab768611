"""Stop The Truck!: the vehicle templates, the board over the table and the squares the camera
puts cars in, the turn's steps in order (secret picks, lightest first, driving rolls,
collisions by the charts, the truck's push, petrol bombs, the auto-gyro and its snakes,
shooting in arcs), every table both ways where the rulebook has two, every option's
readings, the page hooks, the worked scenarios and a whole game with fixed dice."""

from __future__ import annotations

import copy
import math
import re
from pathlib import Path

import pytest

from companion.dice import ChoiceRequest, DiceError, FixedChoices, FixedDice
from companion.rules import st_data as D
from companion.rules.base import RulesError, rule_system
from companion.rules.st_state import template, template_keys, templates
from companion.scenario import check_expectations, load_scenario, run_scenario
from companion.scene import parse_scene
from companion.session import GameSession
from vision.render import CarTruth
from tests.conftest import filmer

SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "examples" / "scenarios").glob("st-*.json"))

#: Squares of 100 mm; the truck stands at (650, 500) heading +x, so the board's corner is at
#: (50, 50): column c, row r (from 1) has its centre at (c - 0.5) * 100 + 50, (r - 0.5) * 100 + 50.
S = 100.0
X0 = Y0 = 50.0
TRUCK = (650.0, 500.0, 0.0)
CARS = {1: ("The Truck", "the_truck", 380, 60, "Max"), 9: ("Auto-Gyro", "auto_gyro", 70, 40, "Max"),
        10: ("Bike", "bike", 60, 20, "Ann"), 11: ("Plated Wrecker", "plated_wrecker", 75, 32, "Bob"),
        12: ("Harpoon Van", "harpoon_van", 75, 34, "Cat"), 13: ("Blue Slasher", "blue_slasher", 75, 32, "Dan"),
        14: ("Light Trike", "light_trike", 60, 30, "Eve"), 15: ("Jeep", "jeep", 75, 34, "Max")}


def at(c: int, r: int, h: float = 0.0, dx: float = 0.0, dy: float = 0.0) -> list[float]:
    """A pose in the middle of square (column, row) counted from 1, shifted by dx, dy."""
    return [X0 + (c - 0.5) * S + dx, Y0 + (r - 0.5) * S + dy, h]


def scene(places: dict, table=(1300.0, 1000.0)) -> dict:
    cars = []
    for m, pose in places.items():
        name, _, length, width, _ = CARS[m]
        cars.append({"id": m, "name": name, "x_mm": pose[0], "y_mm": pose[1], "heading_deg": pose[2],
                     "length_mm": length, "width_mm": width, **({"sigma_mm": pose[3]} if len(pose) > 3 else {})})
    return {"rules": "stop_the_truck", "table": {"width_mm": table[0], "depth_mm": table[1]}, "cars": cars}


def rosters(markers, extra: dict | None = None) -> list[dict]:
    extra = extra or {}
    out: dict[str, list] = {}
    for m in markers:
        name, key, _, _, player = CARS[m]
        out.setdefault(player, []).append({"marker": m, "template": key, **extra.get(m, {})})
    return [{"player": p, "vehicles": vs} for p, vs in out.items()]


def specs(g, marker: int) -> list[dict]:
    """The actions the page is offered for a car, as the page gets them (the specs' JSON)."""
    return [spec.to_json() for spec in g.rules.action_specs(g.st, marker)]


def bomb_fields(bombs) -> dict:
    """The truck's petrol bomb squares as its select action's fields: bomb1, bomb2."""
    return {f"bomb{i + 1}": sq for i, sq in enumerate(bombs or []) if sq is not None}


class Game:
    """A game on the test table, every die given where it is thrown."""

    def __init__(self, places: dict, options=None, extra=None, truck=TRUCK, table=(1300.0, 1000.0)) -> None:
        places = {1: list(truck), **places}
        self.rules = rule_system("stop_the_truck", {"square_mm": S, **(options or {})})
        state = self.rules.new_game(rosters(places, extra), parse_scene(scene(places, table)))
        self.dice = FixedDice([])
        self.session = GameSession(self.rules, state, self.dice, FixedChoices([]))

    @property
    def st(self):
        return self.session.state

    def v(self, m):
        return self.st.vehicles[m]

    def _run(self, dice, call, choose=()):
        self.dice.faces.extend(dice)
        if choose:
            self.session.choices = self.session.choices or FixedChoices([])
            self.session.choices.choices.extend(choose)
        out = call()
        assert out is not None, f"waiting for dice: {self.session.pending.describe()}"
        assert self.dice.remaining == 0, f"{self.dice.remaining} dice not used"
        return out

    def act(self, dice=(), choose=(), **action):
        """An action; `choose`: the answers to the choices it asks a player, in order (a bike's
        or trike's player whether it avoids: "collide" or "avoid")."""
        return self._run(dice, lambda: self.session.act(action), choose)

    def round(self, dice=()):
        return self._run(dice, lambda: self.session.start_round({}))

    def placements(self) -> list[dict]:
        """Where the last event asked for cars to be put (the rules' own moves), and why."""
        return [{"marker": p["marker"], "asked": p["asked"], "why": p["why"]} for p in self.session.log[-1].placements]

    def end(self, dice=()):
        return self._run(dice, self.session.end_turn)

    def drive_rolls(self):
        """Every driving roll owed, made with a 1."""
        for m, v in sorted(self.st.vehicles.items()):
            if v.roll_needed:
                self.act([1], act="drive_roll", vehicle=m)

    def picks(self, boxes: dict, bombs=None, truck="2:3"):
        """Every vehicle's box in secret, then the truck declares."""
        self.act(act="select", vehicle=1, box=truck, **bomb_fields(bombs))
        for m, b in boxes.items():
            self.act(act="select", vehicle=m, box=b)
        return self.act(act="declare", vehicle=1)


# --- the worked scenarios -------------------------------------------------------------

@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_worked_scenario(path):
    data = load_scenario(path)
    assert data["rules"] == "stop_the_truck" and data.get("expect")
    assert check_expectations(data, run_scenario(data, str(path))) == []


def test_there_are_worked_scenarios():
    assert len(SCENARIOS) >= 4


# --- the templates ---------------------------------------------------------------------

def test_every_vehicle_the_rulebook_names_has_a_template():
    keys = set(template_keys())
    assert keys == set(D.MOVE_ORDER) | {"the_truck"}
    assert [template(k).order for k in D.MOVE_ORDER] == list(range(1, 13))
    assert template("green_stopper").aka == "Brown Stopper"
    for t in templates().values():
        assert t.source and t.gears and all(t.gears)
        assert t.chart in D.CHARTS and t.arc in D.ARCS
        # Every number not on a legible sheet says it is reconstructed.
        assert "reconstructed" in t.source.lower()


def test_templates_carry_the_rulebooks_numbers():
    w = template("plated_wrecker")
    assert (w.driver_skill, w.shooting_skill, w.structure, w.chart) == (8, 0, 12, "heavy")
    assert w.ram == {"front": 0, "side": 0, "rear": -1}
    assert w.source.startswith("rulebook:")
    g = template("auto_gyro")
    assert (g.driver_skill, g.dropping_skill, g.structure, g.top_gear, g.side, g.flying) == (5, 9, 5, 1, "truck", True)
    assert sorted(b.side for b in g.boxes(1)) == [-3, -2, -1, 0, 1, 2, 3] and {b.forward for b in g.boxes(1)} == {6}
    t = template("the_truck")
    assert (t.driver_skill, t.bombers, t.gunner) == (8, 10, 10)
    assert template("bike").gear_change == 2 and template("bike").avoid == "any"
    assert template("light_trike").avoid == "sideways" and template("harpoon_van").arc == "all_round"
    assert template("blue_slasher").tyre_slasher
    # The two collision charts: 5 and 4 are no damage, -2 and 12 their ends.
    assert D.CHARTS["standard"][5] == (None, 0, 0) and D.CHARTS["heavy"][4] == (None, 0, 0)
    assert D.CHARTS["standard"][12] == ("victim", 6, 2) and D.CHARTS["heavy"][-2] == ("self", 6, 2)


# --- the board -------------------------------------------------------------------------

def test_board_lies_from_the_truck_and_maps_cars_to_squares():
    g = Game({10: at(3, 4), 11: at(12, 9)})
    assert g.st.board_origin.x_mm == pytest.approx(50) and g.st.board_origin.y_mm == pytest.approx(50)
    assert g.v(1).square == (7, 4)                         # cab square 1 in column 8, row 5 (from 1)
    assert g.rules.truck_squares(g.st) == [(7, 4), (6, 4), (5, 4), (4, 4)]
    assert g.v(10).square == (2, 3) and g.v(11).square == (11, 8)
    board = g.rules.board(g.st)
    kinds = [c["kind"] for c in board["cells"]]
    assert kinds.count("square") == 108 and kinds.count("truck") == 4
    truck = [c for c in board["cells"] if c["kind"] == "truck"]
    assert [c["label"] for c in truck] == ["cab", "Max", "3", "4"]
    assert truck[0]["polygon"][0] == [750.0, 450.0]


def test_the_boards_labels_are_short_and_one_a_square():
    """Issue #23: every label short enough to read in its square ("4,3"; the truck's squares in
    players' words), and one label a square: the truck's four and a revealed bomb square are
    labelled by what holds them, not printed over the square's own "column,row"."""
    g = bomb_setup()
    cells = g.rules.board(g.st)["cells"]
    by_square: dict[tuple, list[str]] = {}
    for c in cells:
        xs, ys = [p[0] for p in c["polygon"]], [p[1] for p in c["polygon"]]
        by_square.setdefault((round(min(xs)), round(min(ys))), []).append(c["label"])
    assert len(by_square) == 108
    assert all(len([w for w in words if w]) == 1 for words in by_square.values()), by_square
    assert all(len(c["label"]) <= 8 for c in cells)
    plain = {c["label"] for c in cells if c["kind"] == "square" and c["label"]}
    assert "4,3" not in plain and "9,7" not in plain and "8,5" not in plain and "1,1" in plain
    assert [c["label"] for c in cells if c["kind"] == "bomb"] == ["bomb 1", "bomb 2"]
    assert [c["label"] for c in cells if c["kind"] == "truck"] == ["cab", "Max", "3", "4"]
    assert {c["kind"] for c in cells} == {"square", "truck", "bomb"}


def test_a_car_off_the_board_waits_to_come_on_and_cars_may_not_share():
    g = Game({10: [20.0, 20.0, 0.0]})
    assert g.v(10).square is None and g.v(10).status() == "waiting to come on"
    assert g.st.notes == ["the Bike stands off the board: it comes on later"]
    g.round()
    assert [a["act"] for a in specs(g, 10)] == ["enter"]
    g.act(act="enter", vehicle=10, template="bike", to=at(1, 5))
    assert g.v(10).square == (0, 4) and g.st.wrecks == []
    with pytest.raises(RulesError, match="both start in square 3,4"):
        Game({10: at(3, 4, dy=-20), 11: at(3, 4, dy=20)})


def test_option_board_anchor():
    truck = (650.0, 600.0, 0.0)
    g = Game({}, truck=truck)
    assert (g.st.board_origin.y_mm, g.v(1).square) == (150.0, (7, 4))
    g = Game({}, {"board_anchor": "table_centre"}, truck=truck)
    assert (g.st.board_origin.y_mm, g.v(1).square) == (50.0, (7, 5))


def test_option_square_point():
    car = at(4, 3, dx=40)                      # its centre in 4,3; its front bumper (37.5 ahead) in 5,3
    assert Game({11: car}).v(11).square == (3, 2)
    assert Game({11: car}, {"square_point": "front_bumper"}).v(11).square == (4, 2)


def test_option_line_call():
    """A car whose centre is on a square's edge, within the camera's doubt, is too close to call."""
    def setup(option):
        g = Game({11: at(3, 3)}, {"line_call": option})
        g.round()
        g.picks({11: "2:4"})
        return g
    on_line = [450.0, 300.0, 0.0, 1.0, 0.5]             # between 4,3 and 5,3
    g = setup("box_square")
    out = g.act(act="move", vehicle=11, to=on_line)
    assert g.v(11).square == (3, 2) and "too close to call" in " ".join(out["events"])
    g = setup("refuse")
    with pytest.raises(RulesError, match="too close to call between square 4,3, square 5,3"):
        g.act(act="move", vehicle=11, to=on_line)
    g.act(act="move", vehicle=11, to=at(4, 3))


def test_the_square_must_be_the_one_the_box_reaches():
    g = Game({11: at(3, 3)})
    g.round()
    g.picks({11: "2:4 1L"})
    with pytest.raises(RulesError, match="goes to square 4,4, but the camera puts it in square 4,3"):
        g.act(act="move", vehicle=11, to=at(4, 3))
    out = g.act(act="move", vehicle=11, to=at(4, 4))
    assert out["to_square"] == [4, 4] and out["square_verdict"]["outcome"] == "in"


# --- picking boxes, declaring, moving --------------------------------------------------

def test_picks_are_secret_until_the_truck_declares():
    g = Game({10: at(3, 4), 11: at(3, 7)})
    g.round()
    g.act(act="select", vehicle=1, box="2:3", bomb1=[4, 3])
    g.act(act="select", vehicle=10, box="2:4")
    j = g.st.to_json()
    assert j["vehicles"]["10"]["box"] is None and j["vehicles"]["10"]["selected"]
    assert j["truck"]["bomb_squares"] == "hidden"
    assert g.rules.card(g.st, 10)["box"] is None
    with pytest.raises(RulesError, match="still to pick a box: Plated Wrecker"):
        g.act(act="declare", vehicle=1)
    g.act(act="select", vehicle=11, box="2:3")
    out = g.act(act="declare", vehicle=1)
    assert out["picks"] == {"1": "2:3", "10": "2:4", "11": "2:3"} and g.st.distance == 3
    assert g.st.to_json()["vehicles"]["10"]["box"] == "2:4"
    assert g.st.to_json()["truck"]["bomb_squares"] == "hidden"        # until step 7


def test_gear_changes_one_a_turn_the_bike_two():
    g = Game({10: at(3, 4), 11: at(3, 7)}, extra={10: {"gear": 1}, 11: {"gear": 1}})
    g.round()
    with pytest.raises(RulesError, match="gear 3 is out of reach from gear 1"):
        g.act(act="select", vehicle=11, box="3:3")
    g.act(act="select", vehicle=11, box="2:3")
    g.act(act="select", vehicle=10, box="3:5")            # the bike: two gears
    with pytest.raises(RulesError, match="the Bike has no box .3:9. on its sheet"):
        g.act(act="select", vehicle=10, box="3:9")


def test_lightest_first_and_relative_movement():
    g = Game({10: at(3, 4), 11: at(3, 7)})
    g.round()
    g.picks({10: "2:4", 11: "2:2"}, truck="2:3")
    with pytest.raises(RulesError, match="it is the Bike's move, not the Plated Wrecker's"):
        g.act(act="move", vehicle=11, to=at(2, 7))
    g.act(act="move", vehicle=10, to=at(4, 4))           # 4 forward against the truck's 3: one up
    assert g.st.active.marker == 11
    g.act(act="move", vehicle=11, to=at(2, 7))           # 2 against 3: one back
    assert g.st.phase == "shooting"


def test_driving_off_the_board_is_out():
    g = Game({11: at(1, 7)})
    g.round()
    out = g.picks({11: "2:2"}, truck="2:3")
    out = g.act(act="move", vehicle=11)
    assert out["result"] == "off the board" and g.v(11).out == "drove off the board"


def test_emergency_stop_no_shooting_and_first_gear_next():
    g = Game({12: at(10, 3)}, extra={12: {"gear": 3}})
    g.round()
    g.picks({12: "ES"}, truck="2:3")
    g.act(act="move", vehicle=12, to=at(7, 3))            # stops dead: the truck's 3 squares back
    assert g.rules._can_shoot(g.st, g.v(12), "") == "emergency stop"
    g.end()
    g.round()
    boxes, why = g.rules.allowed_boxes(g.st, g.v(12))
    assert {b.gear for b in boxes if b.key != "ES"} == {1} and "first gear" in why[0]


def es_open(g, m) -> bool:
    return "ES" in {b.key for b in g.rules.allowed_boxes(g.st, g.v(m))[0]}


def test_option_es_colour_limit():
    """"Steering problem, do only yellow actions" (RED 4), the snake's "must pick RED action": the
    emergency stop is no box of that colour, so by default it is closed ("refused"), and open under
    "allowed"; a straight-only limit leaves it open either way (ES goes no squares sideways)."""
    for option, open_ in (("refused", False), ("allowed", True)):
        g = Game({15: at(3, 3)}, {"es_colour_limit": option}, extra={15: {"gear": 3}})
        g.v(15).conditions["only_yellow"] = True
        g.round()
        assert es_open(g, 15) == open_
        assert {b.colour for b in g.rules.allowed_boxes(g.st, g.v(15))[0] if b.key != "ES"} == {"yellow"}
        if not open_:
            with pytest.raises(RulesError, match=r"cannot pick its emergency stop: only yellow boxes \(a steering "
                                                 r"problem, RED table\), and the emergency stop is no yellow box"):
                g.act(act="select", vehicle=15, box="ES")
        g.v(15).conditions.pop("only_yellow")
        g.v(15).turn_rules = ["must_red"]
        assert es_open(g, 15) == open_
        g.v(15).turn_rules = ["straight"]
        assert es_open(g, 15)
        g.v(15).turn_rules = []
        assert es_open(g, 15)


def test_option_es_stuck_clutch_and_no_two_gear_jump():
    """"Clutch failure, stuck in current gear for rest of game" (RED 6) against "ES ... start again
    next turn in first gear": refused by default; under "restarts_in_stuck_gear" the car may stop
    and starts again in its stuck gear. Either way it is never in gear 1 the turn after gear 3."""
    g = Game({15: at(8, 2)}, extra={15: {"gear": 3}})
    g.v(15).conditions["stuck_gear"] = 3
    g.round()
    with pytest.raises(RulesError, match=r"stuck in gear 3 for the rest of the game, and an emergency stop would "
                                         r"start it again in first gear"):
        g.act(act="select", vehicle=15, box="ES")
    g = Game({15: at(8, 2)}, {"es_stuck_clutch": "restarts_in_stuck_gear"}, extra={15: {"gear": 3}})
    g.v(15).conditions["stuck_gear"] = 3
    g.round()
    assert es_open(g, 15) and {b.gear for b in g.rules.allowed_boxes(g.st, g.v(15))[0]} == {3}
    g.picks({15: "ES"}, truck="2:3")
    g.act(act="move", vehicle=15, to=at(5, 2))          # stops dead: the truck's 3 squares back
    g.end()
    g.round()
    boxes, why = g.rules.allowed_boxes(g.st, g.v(15))
    assert {b.gear for b in boxes} == {3} and "stuck in gear 3" in why[0]


def test_a_clutch_failing_in_the_emergency_stop_turn_keeps_its_gear():
    """A car that picked ES in gear 3 and then fails a RED roll with a clutch failure the same turn
    (a shot's "make RED driving roll now") is stuck in gear 3: the clutch leads the restart, so it
    never goes 3, 1, 3."""
    g = Game({15: at(10, 3)}, extra={15: {"gear": 3}})
    g.round()
    g.picks({15: "ES"}, truck="2:3")
    g.act(act="move", vehicle=15, to=at(7, 3))
    g.v(15).conditions["stuck_gear"] = g.v(15).gear      # as RED 6 leaves it
    g.end()
    g.round()
    boxes, why = g.rules.allowed_boxes(g.st, g.v(15))
    assert {b.gear for b in boxes} == {3} and "stuck in gear 3" in why[0]


def test_top_gear_after_four_turns_costs_the_truck_two():
    g = Game({10: at(3, 4)}, extra={1: {"gear": 4}, 10: {"gear": 4}})
    for turn in range(1, 6):
        g.round()
        g.picks({10: "4:5"}, truck="4:5")
        g.act(act="move", vehicle=10, to=at(3, 4))
        g.end()
        assert g.v(1).structure == (30 if turn < 5 else 28)
    assert g.st.truck.top_gear_turns == 5 and g.st.distance == 25


# --- driving rolls, the RED and BLUE tables ---------------------------------------------

def red_setup(option):
    g = Game({11: at(2, 2)}, {"tables": option}, extra={11: {"gear": 4}})
    g.round()
    g.picks({11: "4:6"}, truck="2:3")
    g.act(act="move", vehicle=11, to=at(5, 2))
    assert g.st.phase == "driving" and g.v(11).roll_needed == "red"
    return g


def test_option_tables_red():
    g = red_setup("typed")
    out = g.act([9, 3], act="drive_roll", vehicle=11)
    assert not out["passed"] and g.v(11).conditions["no_top_gear"] is True
    assert "binding brakes" in " ".join(out["events"])
    g = red_setup("sheet")
    g.act([9, 3], act="drive_roll", vehicle=11)
    assert g.v(11).driver == 7 and "no_top_gear" not in g.v(11).conditions


def test_red_roll_made_and_red_means_no_shooting():
    g = red_setup("typed")
    out = g.act([8], act="drive_roll", vehicle=11)
    assert out["passed"] and "a RED action" in g.v(11).no_shooting


def test_red_table_roll_twice_and_engine_fire():
    g = red_setup("typed")
    g.act([10, 9, 5, 6, 1], act="drive_roll", vehicle=11)     # fail, roll twice: fire (6 -> 3), pothole
    assert g.v(11).structure == 12 - 3 - 1


def test_a_kangaroos_points_are_split_by_the_vehicles_player():
    """RED 7: "These may come off any combination of skills or structure points": Bob (the wrecker's
    player) is asked, not the roller; the wrecker has no shooting, so the rest comes off its driver."""
    g = red_setup("typed")
    g.dice.faces.extend([9, 7, 6])                   # fail, RED 7: a kangaroo of 6 points
    assert g.session.act({"act": "drive_roll", "vehicle": 11}) is None
    asked = g.session.pending
    assert isinstance(asked, ChoiceRequest) and asked.player == "Bob"
    assert [o["value"] for o in asked.options] == [0, 1, 2, 3, 4, 5, 6]
    with pytest.raises(DiceError, match="Bob's to make"):
        g.session.choose("Max", 4)
    with pytest.raises(DiceError, match="not an option"):
        g.session.choose("Bob", 7)
    out = g.session.choose("Bob", 4)
    assert (g.v(11).structure, g.v(11).driver) == (12 - 4, 8 - 2)
    assert "Bob splits the kangaroo's 6 points: 4 structure, 2 driver, 0 shooting" in out["events"]
    assert g.session.log[-1].choices[0]["player"] == "Bob"


def test_a_kangaroo_never_puts_points_on_a_track_past_zero():
    """A driver of 2 and no shooting: at least 4 of 6 points must come off structure."""
    g = Game({11: at(2, 2)}, extra={11: {"gear": 4, "driver_skill": 2}})
    g.round()
    g.picks({11: "4:6"}, truck="2:3")
    g.act(act="move", vehicle=11, to=at(5, 2))
    g.session.choices = FixedChoices([{"player": "Bob", "value": 6}])
    g.dice.faces.extend([9, 7, 6])
    assert [o["value"] for o in _asked(g, {"act": "drive_roll", "vehicle": 11}).options] == [4, 5, 6]


def test_option_kangaroo_points():
    """"any": the wrecker's player may put all 6 points on its shooting skill, which is 0 already
    (the exploit the default, "capped", does not allow: there the rest must come off its driver)."""
    g = Game({11: at(2, 2)}, {"kangaroo_points": "any"}, extra={11: {"gear": 4}})
    g.round()
    g.picks({11: "4:6"}, truck="2:3")
    g.act(act="move", vehicle=11, to=at(5, 2))
    g.dice.faces.extend([9, 7, 6])
    asked = _asked(g, {"act": "drive_roll", "vehicle": 11})
    assert [o["value"] for o in asked.options] == [0, 1, 2, 3, 4, 5, 6]
    g.session.choose("Bob", 0)
    asked = g.session.pending
    assert [o["value"] for o in asked.options] == [0, 1, 2, 3, 4, 5, 6]
    g.session.choose("Bob", 0)
    assert (g.v(11).structure, g.v(11).driver, g.v(11).shooting) == (12, 8, 0)


def _asked(g, action) -> ChoiceRequest:
    g.session.choices = None
    assert g.session.act(action) is None
    return g.session.pending


def test_losing_a_gear_is_the_players_choice():
    """RED 8: "Loose a gear, player's choice": Bob picks gear 3; next turn the wrecker, in its top
    gear 4, may stay in 4 but not go down to 3."""
    g = red_setup("typed")
    g.dice.faces.extend([9, 8])
    asked = _asked(g, {"act": "drive_roll", "vehicle": 11})
    assert asked.player == "Bob" and [o["value"] for o in asked.options] == [1, 2, 3, 4]
    out = g.session.choose("Bob", 3)
    assert g.v(11).conditions["lost_gears"] == [3] and "loses gear 3 (Bob's choice)" in " ".join(out["events"])
    g.end()
    g.round()
    boxes, why = g.rules.allowed_boxes(g.st, g.v(11))
    assert {b.gear for b in boxes if b.colour != "es"} == {4} and "lost gear(s) 3" in why


def test_blue_box_fails_on_twice_the_skill_and_understeers():
    g = Game({10: at(3, 4)}, extra={10: {"driver_skill": 3}})
    g.round()
    g.picks({10: "2:4 1L"}, truck="2:3")
    g.act(act="move", vehicle=10, to=at(4, 5))
    out = g.act([7, 3], act="drive_roll", vehicle=10)        # 7 against 6: BLUE table 3, under steer
    # "Go one square away from straight": its box went left, so one more left, into 4,6; the
    # resolution asked for the bike to be put there before it ended.
    assert g.v(10).square == (3, 5) and "under steer" in " ".join(out["events"])
    assert g.placements() == [{"marker": 10, "asked": at(4, 6),
                               "why": "under steer (BLUE table), into square 4,6"}]
    assert out["placed"][0]["square"] == [4, 6] and g.v(10).pose.xy.tolist() == at(4, 6)[:2]


def test_the_truck_understeers_in_its_sideways_move():
    """BLUE 3 on the truck, "go one square away from straight": the truck steers by its sideways
    move (step 6), so its slide is one square more, not a car's shift set down by hand."""
    g = Game({}, extra={1: {"driver_skill": 3}})
    g.round()
    g.picks({}, truck="2:4 1L")                           # a blue box: a roll against twice Max's 3
    out = g.act([7, 3], act="drive_roll", vehicle=1)        # 7 against 6: BLUE table 3, under steer
    assert "under steers" in " ".join(out["events"]) and "placed" not in out
    assert g.st.phase == "truck" and g.rules.truck_sideways_squares(g.st) == 2
    g.act(act="truck_sideways", vehicle=1)
    assert g.v(1).square[1] == 6
    assert g.placements() == [{"marker": 1, "asked": [650.0, 700.0, 0.0], "why": "slides 2 squares left, into row 7"}]


# --- collisions -----------------------------------------------------------------------------

def ram_setup(options=None):
    """The wrecker drives into the bike's square from behind."""
    g = Game({10: at(4, 3), 11: at(3, 3)}, options)
    g.round()
    g.picks({10: "2:3", 11: "2:4"}, truck="2:3")
    g.act(act="move", vehicle=10, to=at(4, 3, dy=25))
    g.act(act="move", vehicle=11, to=at(4, 3, dy=-25))
    assert g.st.phase == "collisions"
    return g


def test_collision_by_the_colliders_chart_and_the_bump():
    g = ram_setup()
    assert [a["act"] for a in specs(g, 11)] == ["collide"]
    assert [a["act"] for a in specs(g, 10)] == ["avoid"]
    out = g.act([6], choose=["collide"], act="collide", vehicle=11)
    assert (out["collider"], out["victim"], out["facings"], out["score"]) == (11, 10, ["front", "rear"], 6)
    assert g.v(10).structure == 1 and out["bumped"] == 10
    # It was put in square 4,2's middle (column 4 of 100 mm from x 50, row 2); the outcome says so.
    why = "bumped sideways by the collision with the Plated Wrecker, into square 4,2"
    assert out["placed"] == [{"vehicle": 10, "name": "Bike", "square": [4, 2], "pose": [400.0, 200.0, 0.0],
                              "why": why}]
    assert g.placements() == [{"marker": 10, "asked": [400.0, 200.0, 0.0], "why": why}]
    assert g.st.phase == "shooting" and g.v(10).collided and g.v(11).collided


def test_option_victim_bonus():
    out = ram_setup({"victim_bonus": "all"}).act([6], choose=["collide"], act="collide", vehicle=11)
    assert out["score"] == 7 and out["rolls"][0]["modifiers"][0]["value"] == 1


def test_option_collision_facing():
    def setup(option):
        g = Game({10: at(4, 3), 13: at(3, 3)}, {"collision_facing": option})
        g.round()
        g.picks({10: "2:3", 13: "2:4"}, truck="2:3")
        g.act(act="move", vehicle=10, to=at(4, 3, dy=25))
        g.act(act="move", vehicle=13, to=at(4, 3, dy=-25))
        return g
    out = setup("by_move").act([5], choose=["collide"], act="collide", vehicle=13)
    assert out["facings"] == ["front", "rear"] and out["score"] == 6 and out["damaged"] == 10
    out = setup("by_poses").act([5], choose=["collide"], act="collide", vehicle=13)
    assert out["facings"] == ["side", "side"] and out["score"] == 5 and out["damaged"] is None
    assert out["bumped"] == 13           # no damage: the victim keeps the square


def test_option_bump_side():
    def setup(option):
        g = Game({10: at(4, 3), 11: at(3, 2)}, {"bump_side": option})
        g.round()
        g.picks({10: "2:3", 11: "2:4 1L"}, truck="2:3")
        g.act(act="move", vehicle=10, to=at(4, 3, dy=25))
        g.act(act="move", vehicle=11, to=at(4, 3, dy=-25))
        g.drive_rolls()
        return g
    g = setup("away_from_truck")
    assert g.act([6], choose=["collide"], act="collide", vehicle=11)["placed"][0]["square"] == [4, 2]
    g = setup("collider_direction")
    assert g.act([6], choose=["collide"], act="collide", vehicle=11)["placed"][0]["square"] == [4, 4]


def test_the_bike_avoids_and_may_not_shoot():
    g = ram_setup()
    with pytest.raises(RulesError, match="square 5,4 is taken|may move one square"):
        g.act(act="avoid", vehicle=10, to=at(6, 3))
    g.act(act="avoid", vehicle=10, to=at(5, 2))
    assert g.v(10).square == (4, 1) and "avoided a collision" in g.v(10).no_shooting
    assert g.st.phase == "shooting"


def test_the_trike_avoids_only_sideways():
    g = Game({14: at(4, 3), 11: at(3, 3)})
    g.round()
    g.picks({14: "2:3", 11: "2:4"}, truck="2:3")
    g.act(act="move", vehicle=14, to=at(4, 3, dy=25))
    g.act(act="move", vehicle=11, to=at(4, 3, dy=-25))
    with pytest.raises(RulesError, match="one square sideways"):
        g.act(act="avoid", vehicle=14, to=at(5, 3))
    g.act(act="avoid", vehicle=14, to=at(4, 2))


def test_ramming_the_truck_max_ignores_driver_loss_and_the_cab():
    g = Game({11: at(6, 4)})
    g.round()
    g.picks({11: "2:4 1L"}, truck="2:3")                 # into the truck's square 2 (cab, Max)
    g.act(act="move", vehicle=11, to=at(7, 5, dy=40))
    g.drive_rolls()
    out = g.act([10], act="collide", vehicle=11)           # 10 - 1 (truck's side +1) = 9: 5 and -1 driver
    assert out["victim"] == 1 and out["score"] == 9
    assert g.v(1).structure == 25 and g.v(1).driver == 8
    assert g.st.truck.cab_hit and out["bumped"] == 11      # the truck is too big to be moved
    # Bumped back out on the side it came in from (row 4), not through the truck to row 6.
    assert out["placed"][0]["square"] == [7, 4] and g.v(11).square == (6, 3)
    assert g.rules._can_shoot(g.st, g.v(1), "max") == "the cab was in a collision this turn"


def test_blue_slasher_bursts_a_tyre():
    g = Game({13: at(5, 4)})
    g.round()
    g.picks({13: "2:4 1L"}, truck="2:3")                 # into square 3, the tanker
    g.act(act="move", vehicle=13, to=at(6, 5, dy=40))
    g.drive_rolls()
    out = g.act([9, 3], act="collide", vehicle=13)
    assert g.v(1).structure == 27 and g.st.truck.tyres_burst == {"left": 0, "right": 1}
    assert out["rolls"][1]["target"] == 7


def test_the_slash_side_is_read_before_any_die():
    """The Blue Slasher straight into the truck's tanker 4 from behind: the side a slash would burst
    is the side of the truck's centre line it stands on, read from the poses before the collision's
    die, so with no pose of the truck the collide is refused with nothing rolled (it rolled the
    collision first, then refused), and the page's dry run says so."""
    from companion.checks import dry_run
    g = Game({13: at(4, 5, dy=10)})
    g.round()
    g.picks({13: "2:4"}, truck="2:3")                   # one square up: into 5,5, the truck's square 4
    g.act(act="move", vehicle=13, to=at(5, 5, dy=-40))
    assert g.st.phase == "collisions"
    g.v(1).pose = None
    said = dry_run(g.rules, copy.deepcopy(g.st), {"act": "collide", "vehicle": 13})
    assert not said["ok"] and "which side of the truck the Blue Slasher is on" in said["why"]
    with pytest.raises(RulesError, match="which side of the truck"):
        g.session.act({"act": "collide", "vehicle": 13})          # no die given: none asked for
    assert g.dice.used == 0 and g.st.phase == "collisions" and not g.v(13).collided


def _refused_before_any_request(g, action: dict, why: str) -> None:
    """The page's dry run (up to the first request) refuses `action` with the words the whole
    resolution refuses it with, and no die, choice or placement was asked for first."""
    from companion.checks import dry_run
    said = dry_run(g.rules, copy.deepcopy(g.st), action)
    assert not said["ok"] and why in said["why"], (action, said)
    before = g.st.to_json()
    with pytest.raises(RulesError, match=re.escape(why)):
        g.session.act(dict(action))
    assert g.session.pending is None and g.st.to_json() == before


def test_every_refusal_of_an_action_with_dice_comes_before_its_first_request():
    """Issue #23, one judgement: every check of an action that does not depend on the dice is made
    before its first request, so the page's preview (a dry run up to it) refuses what the
    resolution refuses, for every kind of action that rolls: driving rolls, collisions, the
    truck's slide, the petrol bombs, the auto-gyro's drop, shooting, and a turn's start."""
    g = Game({10: at(3, 3), 11: at(3, 7)})
    g.round()
    g.picks({10: "2:4 1L", 11: "2:3"})                    # the bike's blue box: a driving roll
    g.act(act="move", vehicle=10, to=at(4, 4))
    g.act(act="move", vehicle=11, to=at(3, 7))
    _refused_before_any_request(g, {"act": "drive_roll", "vehicle": 11}, "owes no driving roll")
    g = ram_setup()
    _refused_before_any_request(g, {"act": "drive_roll", "vehicle": 11}, "is for driving rolls")
    _refused_before_any_request(g, {"act": "truck_sideways", "vehicle": 1}, "for the truck's sideways move")
    _refused_before_any_request(g, {"act": "bombs", "vehicle": 1}, "is for petrol bombs")
    g.act(act="avoid", vehicle=10, to=at(5, 2))
    _refused_before_any_request(g, {"act": "collide", "vehicle": 11}, "is for collisions")
    g = Game({12: at(6, 6), 11: at(6, 4)})
    g.round()
    g.picks({11: "2:3", 12: "2:3"}, truck="2:3 1L")
    g.act(act="move", vehicle=12, to=at(6, 6))
    g.act(act="move", vehicle=11, to=at(6, 4))
    _refused_before_any_request(g, {"act": "truck_sideways", "vehicle": 12}, "only the truck moves in this step")
    _refused_before_any_request(g, {"act": "collide", "vehicle": 12}, "is for collisions")
    g.act([4], act="truck_sideways", vehicle=1)
    _refused_before_any_request(g, {"act": "bombs", "vehicle": 12}, "is for petrol bombs")
    g = gyro_setup()
    _refused_before_any_request(g, {"act": "drop", "vehicle": 9, "payload": "mines", "target": 11},
                                'drop: payload must be one of bomb, snake, not "mines"')
    _refused_before_any_request(g, {"act": "drop", "vehicle": 9, "payload": "bomb", "target": 1},
                                "can drop on: Plated Wrecker")
    _refused_before_any_request(g, {"act": "drop", "vehicle": 11, "payload": "bomb", "target": 11},
                                "only the auto-gyro drops")
    g = shoot_setup({12: at(6, 3), 11: at(3, 5)})
    # Targets default to the other side: a gang car's form offers the truck first, Max's the gang.
    gang = next(a for a in specs(g, 12) if a["act"] == "shoot")
    assert [c["value"] for c in gang["fields"][1]["choices"]][:2] == ["max", "bomber1"]
    truck = next(a for a in specs(g, 1) if a["act"] == "shoot")
    target = next(f for f in truck["fields"] if f["name"] == "target")
    assert {c["value"] for cs in target["choices_by"].values() for c in cs} <= {11, 12}
    _refused_before_any_request(g, {"act": "shoot", "vehicle": 12, "at": "tyre_left"}, "cannot see the left tyres")
    _refused_before_any_request(g, {"act": "shoot", "vehicle": 12, "at": "vehicle", "target": 11},
                                "is in the gang")
    _refused_before_any_request(g, {"act": "shoot", "vehicle": 1, "shooter": "gunner", "target": 12},
                                "the nearest vehicle in the rear 180 degrees: the Plated Wrecker")
    _refused_before_any_request(g, {"act": "shoot", "vehicle": 1, "shooter": "driver", "target": 12},
                                'shoot: shooter must be one of max, gunner, not "driver"')
    g.act([10], act="shoot", vehicle=12, at="gunner")       # a miss
    _refused_before_any_request(g, {"act": "shoot", "vehicle": 12, "at": "max"}, "it has shot this turn")
    g.end()
    with pytest.raises(RulesError, match="no play order is given"):
        g.session.start_round({"Cat": [12]})
    assert g.dice.remaining == 0 and g.st.phase == "turn_over"


# --- the truck sideways -------------------------------------------------------------------

def test_truck_pushes_a_chain_and_off_the_board():
    g = Game({11: at(6, 6), 10: at(6, 7), 12: at(7, 8)}, extra={1: {"gear": 2}})
    g.round()
    g.picks({10: "2:3", 11: "2:3", 12: "2:3 1L"}, truck="2:3 1L")
    g.act(act="move", vehicle=10, to=at(6, 7))
    g.act(act="move", vehicle=12, to=at(7, 9))
    g.act(act="move", vehicle=11, to=at(6, 6))
    assert g.st.phase == "truck"
    out = g.act([4, 4], choose=["collide"], act="truck_sideways", vehicle=1)
    # The truck into the wrecker (+1 its side ram: 5, 1 point), the wrecker into the bike (4: none).
    assert out["row"] == 6 and out["pushed"] == [11, 10]
    assert g.v(11).structure == 11 and g.v(10).structure == 3
    # Put down end of the chain first (the bike out of the wrecker's way), then the truck.
    assert g.placements() == [
        {"marker": 10, "asked": at(6, 8), "why": "pushed sideways by the Plated Wrecker, into square 6,8"},
        {"marker": 11, "asked": at(6, 7), "why": "pushed sideways by The Truck, into square 6,7"},
        {"marker": 1, "asked": [650.0, 600.0, 0.0], "why": "slides 1 square left, into row 6"}]
    assert g.st.phase == "shooting"


def test_pushed_off_the_board_is_lost():
    g = Game({10: at(6, 9)}, {"board_anchor": "table_centre"}, truck=(650.0, 800.0, 0.0))
    assert g.v(1).square == (7, 7)
    g.round()
    g.picks({10: "2:3"}, truck="2:3 1L")
    g.act(act="move", vehicle=10, to=at(6, 9))
    out = g.act([4], choose=["collide"], act="truck_sideways", vehicle=1)
    assert g.v(10).out == "pushed off the board by the truck" and out["pushed"] == [10]
    assert g.st.phase == "shooting"


def test_the_truck_must_stand_in_its_new_row():
    """"Move the truck sideways" (Move sequence 6): the resolution asks for the truck in its new
    row, as far along the board as it stands; left where it stood (a row off) it is refused and
    nothing changes; anywhere with its centre in the row and half a square from there, it is put."""
    g = Game({}, extra={1: {"gear": 2}})
    g.round()
    g.picks({}, truck="2:3 1R")
    g.session.placements = None                          # a table: the camera must see it there
    assert g.session.act({"act": "truck_sideways", "vehicle": 1}) is None
    asked = g.session.pending
    assert (asked.marker, [asked.x_mm, asked.y_mm, asked.heading_deg]) == (1, [650.0, 400.0, 0.0])
    assert asked.why == "slides 1 square right, into row 4" and asked.tolerance_mm == S / 2
    with pytest.raises(DiceError, match="stands 100 mm and 0° from where the rules put it"):
        g.session.place(1, list(TRUCK), "camera")
    assert g.session.pending is asked
    out = g.session.place(1, [650.0 + 30.0, 400.0 - 20.0, 10.0, 0.5, 0.3], "camera")
    assert g.v(1).square == (7, 3) and out["placed"][0]["pose"] == [680.0, 380.0, 10.0]


def test_option_tyre_pull():
    for option, pull in (("per_two", 1), ("per_three", 0)):
        g = Game({}, {"tyre_pull": option})
        g.st.truck.tyres_burst = {"left": 2, "right": 0}
        assert g.rules.truck_sideways_squares(g.st) == pull
    g = Game({}, {"tyre_pull": "per_three"})
    g.st.truck.tyres_burst = {"left": 0, "right": 3}
    assert g.rules.truck_sideways_squares(g.st) == -1


def test_option_sequence():
    for option, first in (("typed", "driving"), ("sheet", "truck")):
        g = Game({11: at(2, 2)}, {"sequence": option}, extra={11: {"gear": 4}})
        g.round()
        g.picks({11: "4:6"}, truck="2:3 1L")
        g.act(act="move", vehicle=11, to=at(5, 2))
        assert g.st.phase == first


# --- petrol bombs ---------------------------------------------------------------------------

def bomb_setup(options=None, truck_box="2:3"):
    g = Game({11: at(4, 3)}, options)
    g.round()
    g.picks({11: "2:3"}, bombs=[[4, 3], [9, 7]], truck=truck_box)
    g.act(act="move", vehicle=11, to=at(4, 3))
    return g


def test_bombs_revealed_at_step_seven_and_hit():
    g = bomb_setup()
    assert g.st.phase == "bombs" and g.st.to_json()["truck"]["bomb_squares"] == [[4, 3], [9, 7]]
    assert [c["label"] for c in g.rules.board(g.st)["cells"] if c["kind"] == "bomb"] == ["bomb 1", "bomb 2"]
    out = g.act([5], act="bombs", vehicle=1)
    assert out["hit"] == [11] and (g.v(11).structure, g.v(11).driver) == (9, 7)
    assert g.rules._can_shoot(g.st, g.v(11), "") is not None


def test_option_tables_bomb_and_the_bomb_in_hand():
    g = bomb_setup({"tables": "sheet"})
    g.act([5], act="bombs", vehicle=1)
    assert (g.v(11).structure, g.v(11).driver, g.v(11).shooting) == (9, 5, 0)
    g = bomb_setup()
    g.act([1, 7], act="bombs", vehicle=1)
    assert g.st.truck.bombers == [6, 10] and g.v(11).structure == 12


def test_bomb_squares_are_checked():
    g = Game({11: at(4, 3)})
    g.round()
    with pytest.raises(RulesError, match="4 squares from the truck"):
        g.act(act="select", vehicle=1, box="2:3", bomb1=[4, 1])
    with pytest.raises(RulesError, match="the truck's own"):
        g.act(act="select", vehicle=1, box="2:3", bomb1=[6, 5])


def test_option_bomb_squares_follow_truck():
    g = bomb_setup(truck_box="2:3 1L")
    g.act(act="truck_sideways", vehicle=1)
    assert g.st.truck.bomb_squares[0] == (3, 3) and g.st.phase == "shooting"     # it moved up with the truck
    g = bomb_setup({"bomb_squares_follow_truck": False}, truck_box="2:3 1L")
    g.act(act="truck_sideways", vehicle=1)
    assert g.st.truck.bomb_squares[0] == (3, 2) and g.st.phase == "bombs"


# --- the auto-gyro and its snakes ------------------------------------------------------------

def gyro_setup(options=None):
    g = Game({9: at(1, 2), 11: at(4, 3)}, options)
    g.round()
    g.picks({9: "1:6 1L", 11: "2:3"}, truck="2:3")
    g.act(act="move", vehicle=9, to=at(4, 3, dy=-30))      # flies over: no collision
    g.act(act="move", vehicle=11, to=at(4, 3, dy=20))
    assert g.st.phase == "gyro"
    return g


def test_gyro_drops_a_snake_and_it_rolls_next_turn():
    g = gyro_setup()
    out = g.act([9], act="drop", vehicle=9, target=11, payload="snake")    # 9 against 9 (same square: 0)
    assert out["result"] == "hit" and g.v(11).snake is not None
    g.end()
    out = g.round([4])
    assert "straight" in g.v(11).turn_rules
    boxes, _ = g.rules.allowed_boxes(g.st, g.v(11))
    assert {b.side for b in boxes} == {0}


def test_option_snake_table():
    g = gyro_setup({"snake_table": "sheet"})
    g.act([9], act="drop", vehicle=9, target=11, payload="snake")
    g.end()
    g.round([6])
    assert g.rules.allowed_boxes(g.st, g.v(11))[1] == ["must blue"]
    # Two turns active, then asleep; waking on a 1 (the turns between skipped here).
    assert g.v(11).snake == {"active": 1, "asleep": False}
    g.st.phase = "turn_over"
    g.round([1])
    assert g.v(11).snake == {"active": 0, "asleep": True}
    g.st.phase = "turn_over"
    g.round([5])
    assert g.v(11).snake["asleep"]
    g.st.phase = "turn_over"
    g.round([1, 10, 3])                     # wakes, and bites: 2 off the driver and a red roll
    assert g.v(11).driver == 6


def test_gyro_bomb_and_pass():
    g = gyro_setup()
    out = g.act([10], act="drop", vehicle=9, target=11, payload="bomb")
    assert out["result"] == "missed" and g.st.phase == "shooting"
    g = gyro_setup()
    g.act(act="pass", vehicle=9)
    assert g.st.phase == "shooting"


def test_shooting_the_snake():
    g2 = Game({12: at(3, 3), 11: at(4, 3)})
    g2.round()
    g2.picks({11: "2:3", 12: "2:3"})
    g2.act(act="move", vehicle=12, to=at(3, 3))
    g2.act(act="move", vehicle=11, to=at(4, 3))
    g2.v(11).snake = {"active": 2}
    out = g2.act([7, 2], act="shoot", vehicle=12, at="snake", target=11)
    assert out["result"] == "missed the snake" and g2.v(11).structure == 11 and g2.v(11).snake is not None


# --- shooting -----------------------------------------------------------------------------------

def shoot_setup(places, options=None, boxes=None):
    g = Game(places, options)
    g.round()
    g.picks(boxes or {m: "2:3" for m in places})
    for m in sorted(places, key=lambda m: (template(CARS[m][1]).order, m)):
        g.act(act="move", vehicle=m, to=places[m])
    assert g.st.phase == "shooting"
    return g


def test_gang_shoots_the_crossbowman_both_tables():
    for option, left in (("typed", 9), ("sheet", 10)):
        g = shoot_setup({12: at(3, 5)}, {"tables": option})
        out = g.act([4, 1], act="shoot", vehicle=12, at="gunner")
        assert out["result"] == "hit" and g.st.truck.gunner == left
    with pytest.raises(RulesError, match="has shot this turn"):
        g.act([4, 5], act="shoot", vehicle=12, at="gunner")


def test_tyres_by_side_and_table():
    g = shoot_setup({12: at(6, 3)})
    with pytest.raises(RulesError, match="on the truck's right: it cannot see the left tyres"):
        g.act(act="shoot", vehicle=12, at="tyre_left")
    g.act([2, 8], act="shoot", vehicle=12, at="tyre_right")          # 8, +1 harpoon = 9
    assert g.st.truck.tyres_burst["right"] == 1 and g.v(1).structure == 29
    g = shoot_setup({12: at(6, 3)}, {"tables": "sheet"})
    g.act([2, 7], act="shoot", vehicle=12, at="tyre_right")          # 8 on the sheet: burst, no damage
    assert g.st.truck.tyres_burst["right"] == 1 and g.v(1).structure == 30


def test_arcs_front_180_and_the_harpoon_all_round():
    # The slasher ahead of the truck faces away from it: the truck is behind it, out of its arc.
    g = shoot_setup({13: at(11, 5), 12: at(11, 7)})
    with pytest.raises(RulesError, match="out of the Blue Slasher's arc"):
        g.act(act="shoot", vehicle=13, at="max")
    out = g.act([3, 1], act="shoot", vehicle=12, at="max")
    assert out["arc"]["outcome"] == "in"


def test_harpoon_reloads_a_full_turn():
    g = shoot_setup({12: at(3, 5)})
    g.act([3, 1], act="shoot", vehicle=12, at="gunner")
    g.end()
    g.round()
    g.picks({12: "2:3"})
    g.act(act="move", vehicle=12, to=at(3, 5))
    assert g.rules._can_shoot(g.st, g.v(12), "") == "the harpoon is reloading (a full turn)"
    g.end()
    g.round()
    g.picks({12: "2:3"})
    g.act(act="move", vehicle=12, to=at(3, 5))
    assert g.rules._can_shoot(g.st, g.v(12), "") is None


def test_the_truck_shooter_is_named_and_a_dead_harpoonist_is_said():
    """The crossbowman's miss names him (not "The Truck misses"); the effect die is rolled by Max's
    player and its damage is "shot by Max"; a van whose harpoonist is dead says so when refused."""
    g = shoot_setup({12: at(3, 5)})
    g.st.truck.gunner = 5                                  # his 10 would never miss a car
    out = g.act([6], act="shoot", vehicle=1, shooter="gunner", target=12)
    assert out["result"] == "missed" and out["events"] == ["the crossbowman misses the Harpoon Van"]
    g = shoot_setup({12: at(10, 4)})
    out = g.act([4, 9], act="shoot", vehicle=1, shooter="max", target=12, at="harpoonist")
    assert out["rolls"][1]["asked"].endswith("for Max") and g.v(12).shooting == 0
    with pytest.raises(RulesError, match=r"^the Harpoon Van may not shoot: its harpoonist is dead$"):
        g.act(act="shoot", vehicle=12, at="max")
    g = shoot_setup({12: at(10, 4), 13: at(10, 6)})
    g.act([4, 5], act="shoot", vehicle=1, shooter="max", target=13)
    assert "(shot by Max)" in g.session.log[-1].outcome["events"][-1]
    g.v(12).shooting = 0                                   # worn down, not killed
    assert g.rules._can_shoot(g.st, g.v(12), "") == "its harpoonist is out (his shooting skill is 0)"
    g.v(13).shooting = 0
    assert g.rules._can_shoot(g.st, g.v(13), "") == "its shooting skill is 0"


def test_option_bike_arc():
    g = shoot_setup({10: at(10, 5)}, {"bike_arc": "270"})
    assert [s.width_deg for s in g.rules.shooter_sectors(g.st, g.v(10))] == [270.0]
    with pytest.raises(RulesError, match="out of the Bike's arc"):
        g.act(act="shoot", vehicle=10, at="max")                # straight behind it
    g = shoot_setup({10: at(10, 5)}, {"bike_arc": "front_and_rear_45"})
    assert [s.width_deg for s in g.rules.shooter_sectors(g.st, g.v(10))] == [180.0, 45.0]
    assert g.act([2, 1], act="shoot", vehicle=10, at="max")["arc"]["outcome"] == "in"


def test_max_shoots_with_plus_two_and_option_bike_target_penalty():
    g = shoot_setup({10: at(10, 4)})
    out = g.act([3, 5], act="shoot", vehicle=1, shooter="max", target=10)
    # The bike's 1 off the skill is the hit roll's +1 modifier, with its reason, against Max's 8.
    hit = out["rolls"][0]
    assert hit["target"] == 8 and hit["total"] == 4 and out["rolls"][1]["total"] == 7
    assert hit["modifiers"] == [{"value": 1, "reason": "shooting at the bike: 1 off the shooting skill"}]
    assert g.v(10).out == "wrecked"                            # bike table 7: 4 structure
    g = shoot_setup({10: at(10, 4)})
    out = g.act([8], act="shoot", vehicle=1, shooter="max", target=10)
    assert out["result"] == "missed" and out["rolls"][0]["total"] == 9   # 8 would hit any other car
    assert out["events"] == ["Max misses the Bike"]
    g = shoot_setup({10: at(10, 4)}, {"bike_target_penalty": 0})
    out = g.act([8, 1], act="shoot", vehicle=1, shooter="max", target=10)
    assert out["rolls"][0]["target"] == 8 and out["rolls"][0]["modifiers"] == [] and out["result"] == "hit"


def test_max_roll_twice_on_the_vehicle_table():
    g = shoot_setup({11: at(10, 4)})
    g.act([1, 9, 2, 1], act="shoot", vehicle=1, shooter="max", target=11)   # 11: roll twice: 4 and 3
    assert g.v(11).structure == 10 and g.v(11).driver == 7


def test_the_crossbowman_shoots_the_nearest_behind():
    g = shoot_setup({11: at(3, 5), 12: at(1, 6)})
    with pytest.raises(RulesError, match="nearest vehicle in the rear 180 degrees: the Plated Wrecker"):
        g.act(act="shoot", vehicle=1, shooter="gunner", target=12)
    g.act([2, 2], act="shoot", vehicle=1, shooter="gunner", target=11)
    assert g.v(11).structure == 11


def test_a_shot_names_what_it_aims_at_in_players_words():
    """The die a shot asks for says what is aimed at as a sentence names it: "the crossbowman
    shoots at the Plated Wrecker", not "at Plated Wrecker" (found playing the demo's whole game
    in the browser); a part of the truck by its own words."""
    g = shoot_setup({11: at(3, 5), 12: at(6, 3)})
    g.session.dice = None                      # nothing thrown: the request is read as asked
    g.session.act({"act": "shoot", "vehicle": 1, "shooter": "gunner", "target": 11})
    assert g.session.pending.purpose == "the crossbowman shoots at the Plated Wrecker (needs 10 or less)"
    g.session.cancel()
    g.session.act({"act": "shoot", "vehicle": 12, "at": "tyre_right"})
    assert g.session.pending.purpose == "the Harpoon Van shoots at the truck's right tyres (needs 6 or less)"


def test_no_shooting_for_max_after_a_red_action():
    g = Game({11: at(5, 3)}, extra={1: {"gear": 4}})
    g.round()
    g.picks({11: "2:3"}, truck="4:6")
    g.act(act="move", vehicle=11, to=at(2, 3))
    assert g.st.phase == "driving"
    g.act([2], act="drive_roll", vehicle=1)
    assert g.rules._can_shoot(g.st, g.v(1), "max") == "Max did a RED action this turn"


# --- the end of the game, replacements, the optional rule ----------------------------------------

def test_the_truck_wins_at_the_distance():
    g = Game({11: at(3, 3)}, {"distance_squares": 6})
    for turn in (1, 2):
        g.round()
        g.picks({11: "2:3"})
        g.act(act="move", vehicle=11, to=at(3, 3))
        out = g.end()
    assert out["over"] and g.st.winner == "truck" and g.st.distance == 6
    with pytest.raises(RulesError, match="the game is over"):
        g.round()


def test_the_gang_wins_when_the_truck_is_stopped():
    g = Game({11: at(6, 4)}, extra={1: {"structure": 4}})
    g.round()
    g.picks({11: "2:4 1L"})
    g.act(act="move", vehicle=11, to=at(7, 5, dy=40))
    g.drive_rolls()
    out = g.act([10], choose=["collide"], act="collide", vehicle=11)
    assert out["over"] and out["winner"] == "gang" and g.st.why_over == "the truck is stopped: its structure is 0"


def test_replacement_comes_on_next_turn_and_option_replacement_enters():
    for option, ok in (("back_edge", False), ("any_edge", True)):
        g = Game({11: at(1, 7)}, {"replacement_enters": option})
        g.round()
        g.picks({11: "2:2"})
        g.act(act="move", vehicle=11)
        with pytest.raises(RulesError, match="between turns"):
            g.act(act="enter", vehicle=11, template="jeep", to=at(1, 3))
        g.end()
        if ok:
            g.act(act="enter", vehicle=11, template="jeep", to=at(3, 1))
        else:
            with pytest.raises(RulesError, match="back row"):
                g.act(act="enter", vehicle=11, template="jeep", to=at(3, 1))
            g.act(act="enter", vehicle=11, template="jeep", to=at(1, 3))
        assert g.v(11).template_key == "jeep" and g.st.wrecks[0]["template"] == "plated_wrecker"


def test_option_regain_on_elimination():
    for option, structure in ((False, 20), (True, 22)):
        g = Game({11: at(1, 7)}, {"regain_on_elimination": option}, extra={1: {"structure": 20}})
        g.round()
        g.picks({11: "2:2"})
        g.act(act="move", vehicle=11)
        assert g.v(1).structure == structure and g.st.eliminated == 1


def test_option_start_gear():
    assert Game({11: at(1, 7)}, {"start_gear": 3}).v(11).gear == 3
    assert Game({11: at(1, 7)}).v(11).gear == 2


# --- the page's hooks -----------------------------------------------------------------------------

def test_overlays_show_the_squares_it_may_reach():
    g = Game({11: at(3, 3)}, extra={11: {"gear": 4}})
    g.round()
    o = g.rules.overlays(g.st, 11)
    kinds = {c["kind"] for c in o["cells"]}
    assert kinds == {"reach", "red", "blue"} and "last speed 0" in o["about"]
    red = next(c for c in o["cells"] if c["kind"] == "red")
    assert red["boxes"] == ["4:6"] and red["square"] == [9, 3]
    # Unlabelled while it may pick any: a label a square ran into the next on a phone.
    assert {c["label"] for c in o["cells"]} == {""}
    # Its blue boxes ask for a (blue) driving roll too, and are shown so.
    blue = sorted(b for c in o["cells"] if c["kind"] == "blue" for b in c["boxes"])
    assert blue == ["4:6 1L", "4:6 1R"]
    # Labelled at the square's top, clear of the square's own "column,row" (usability pass).
    assert {c["label_at"] for c in o["cells"]} == {"top"}
    assert o["arcs"] == []                                 # the wrecker has no shooting
    g.picks({11: "4:4"})
    o = g.rules.overlays(g.st, 11)
    assert [c["square"] for c in o["cells"]] == [[4, 3]]
    assert [c["label"] for c in o["cells"]] == ["gear 4"]             # the box picked, by its gear
    g.act(act="move", vehicle=11, to=at(4, 3))
    assert g.rules.overlays(g.st, 11)["cells"] == []


def test_actions_and_targets_for_the_page():
    g = shoot_setup({12: at(3, 5)})
    acts = specs(g, 12)
    assert [a["act"] for a in acts] == ["shoot"]
    assert {c["value"] for c in acts[0]["fields"][1]["choices"]} == {"max", "bomber1", "bomber2", "gunner", "tyre_right"}
    rows = g.rules.targets(g.st, 12)
    assert all(r["shootable"] for r in rows)
    truck_rows = g.rules.targets(g.st, 1)
    assert {(r["shooter"], r["shootable"]) for r in truck_rows} == {("max", False), ("gunner", True)}
    # The same car in a row per shooter: each row's arc says whose arc it is.
    assert {(r["shooter"], r["arc"]["mount"]) for r in truck_rows} == {("max", "Max"), ("gunner", "the crossbowman")}
    card = g.rules.card(g.st, 1)
    assert card["skills"] == {"max": 8, "gunner": 10, "bomber1": 10, "bomber2": 10}
    assert [s["part"] for s in card["truck"]["squares"]] == ["cab", "cab", "tanker", "tanker"]


def test_actions_follow_the_steps():
    g = Game({11: at(3, 3)})
    assert specs(g, 11) == []
    g.round()
    assert [a["act"] for a in specs(g, 1)] == ["select"]
    g.act(act="select", vehicle=1, box="2:3")
    g.act(act="select", vehicle=11, box="2:3")
    assert [a["act"] for a in specs(g, 1)] == ["select", "declare"]
    g.act(act="declare", vehicle=1)
    assert [a["act"] for a in specs(g, 11)] == ["move"]


def test_page_fields_fill_through_the_game_server():
    """The select action's bomb choices are [column, row] lists the page's form sends back."""
    g = Game({11: at(3, 3)})
    g.round()
    spec = next(a for a in specs(g, 1) if a["act"] == "select")
    bomb = next(f for f in spec["fields"] if f["name"] == "bomb1")
    assert [4, 3] in [c["value"] for c in bomb["choices"]] and bomb["optional"]
    g.act(act="select", vehicle=1, box="2:3", bomb1=[4, 3])
    assert g.st.truck.bomb_squares == [(3, 2), None]


def test_starter_rosters_play():
    rules = rule_system("stop_the_truck", {"square_mm": S})
    r = rules.starter_rosters([(1, "Tanker"), (10, "Red"), (11, "Blue")])
    assert r[0]["vehicles"][0]["template"] == "the_truck" and r[1]["vehicles"][0]["template"] == "open_dirt_buggy"
    places = {1: list(TRUCK), 10: at(3, 3), 11: at(3, 7)}
    sc = scene(places)
    st = rules.new_game(r, parse_scene(sc))
    assert len(st.vehicles) == 3


def test_undo_restores_the_secret_pick():
    g = Game({11: at(3, 3)})
    g.round()
    g.act(act="select", vehicle=11, box="2:3")
    g.session.undo()
    assert g.st.vehicles[11].choice is None


# --- a whole game ---------------------------------------------------------------------------------

#: The whole game's table: 1500 x 1200 mm, the truck at (750, 600), so the board's corner is at
#: (150, 150) and the anchors round the table's edge stay off the board.
WHOLE_TABLE = (1500.0, 1200.0)
WHOLE_TRUCK = (750.0, 600.0, 0.0)


def sq(c: int, r: int, dx: float = 0.0, dy: float = 0.0, h: float = 0.0) -> list[float]:
    """The middle of square (column, row), from 1, on the whole game's board."""
    return [150.0 + (c - 0.5) * S + dx, 150.0 + (r - 0.5) * S + dy, h]


WHOLE_START = {9: sq(1, 8), 10: sq(3, 3), 11: sq(2, 6), 12: sq(4, 7), 13: sq(4, 2), 14: sq(3, 6)}


class Camera:
    """The table as an action's fields read it (rules.actions.TableReader): the poses seen."""

    def __init__(self, seen: dict) -> None:
        self.seen = seen

    def pose_of(self, marker: int) -> list[float]:
        assert marker in self.seen, f"the action reads car {marker}'s pose, but it was not put anywhere"
        return list(self.seen[marker])

    def path_of(self, marker: int):
        raise AssertionError("Stop The Truck reads squares, never a path")

    def point(self, value, what: str):
        return tuple(value)


class Play:
    """The whole game at the table: the game, and where each model really stands. An action that
    puts a car somewhere (`to`) is given the pose `see` reports for it: here the pose meant, in
    the video test the webcam's. A car the rules move is asked for by the resolution: the hand
    puts it where asked, and the pose `see` reports is where it was put."""

    def __init__(self) -> None:
        self.game = Game(WHOLE_START, {"distance_squares": 12}, truck=WHOLE_TRUCK, table=WHOLE_TABLE)
        self.game.session.placements = None                # each placement is seen, as on a table
        self.placed = {1: list(WHOLE_TRUCK), **copy.deepcopy(WHOLE_START)}

    def see(self, marker: int, standing: dict) -> list[float]:
        return list(standing[marker])

    def _placing(self, out):
        """Every car the resolution waits for, put where it is asked and seen there."""
        from companion.dice import PlacementRequest
        s = self.game.session
        while out is None and isinstance(s.pending, PlacementRequest):
            p = s.pending
            self.placed[p.marker] = [p.x_mm, p.y_mm, p.heading_deg]
            out = s.place(p.marker, self.see(p.marker, self.placed), "camera")
        return out

    def act(self, dice=(), choose=(), **action):
        """The action as the page sends it (no pose: the camera's is filled in), checked and filled
        by the car's own spec, as the table game does."""
        seen = {}
        if "to" in action:
            standing = {**self.placed, action["vehicle"]: action.pop("to")}
            seen[action["vehicle"]] = self.see(action["vehicle"], standing)
            self.placed = standing
        specs = {s.act: s for s in self.game.rules.action_specs(self.game.st, action["vehicle"])}
        assert action["act"] in specs, f"the page does not offer {action['act']} now (it offers {', '.join(specs)})"
        filled = specs[action["act"]].fill(action, Camera(seen))
        out = self.game._run(dice, lambda: self._placing(self.game.session.act(filled)), choose)
        for m, v in self.game.st.vehicles.items():
            if not v.in_play:
                self.placed.pop(m, None)           # taken off the table
        return out

    def round(self, dice=()):
        return self.game.round(dice)

    def end(self, dice=()):
        return self.game.end(dice)

    def picks(self, boxes: dict, truck: str, bombs=None):
        self.act(act="select", vehicle=1, box=truck, **bomb_fields(bombs))
        for m, b in boxes.items():
            self.act(act="select", vehicle=m, box=b)
        return self.act(act="declare", vehicle=1)


def play_whole_game(p: Play) -> None:
    """Four turns, the truck's speed 3 each, to a distance of 12: every action kind, every die fixed."""
    g = p.game
    # Turn 1: the wrecker rams where the trike is, the trike slips aside; a petrol bomb on the van.
    p.round()
    out = p.picks({10: "2:4 1L", 14: "2:3", 12: "2:3", 13: "2:3 1L", 9: "1:6 1R", 11: "2:4"}, truck="2:3",
                  bombs=[[4, 7]])
    assert out["distance"] == 3 and g.st.to_json()["truck"]["bomb_squares"] == "hidden"
    p.act(act="move", vehicle=10, to=sq(4, 4))
    p.act(act="move", vehicle=14, to=sq(3, 6, dy=25))
    p.act(act="move", vehicle=12, to=sq(4, 7, dy=26))
    p.act(act="move", vehicle=13, to=sq(4, 3))
    p.act(act="move", vehicle=9, to=sq(4, 7, dy=-26))        # the auto-gyro flies over the van
    p.act(act="move", vehicle=11, to=sq(3, 6, dy=-25))
    assert g.st.phase == "driving"
    assert p.act([5], act="drive_roll", vehicle=10)["passed"]
    assert g.st.phase == "collisions"
    p.act(act="avoid", vehicle=14, to=sq(3, 5))
    assert g.st.phase == "bombs" and g.st.to_json()["truck"]["bomb_squares"] == [[4, 7], None]
    p.act([4], act="bombs", vehicle=1)
    assert (g.v(12).structure, g.v(12).driver, g.v(12).shooting) == (7, 5, 5)
    assert g.st.phase == "gyro"
    p.act(act="pass", vehicle=9)
    assert g.st.phase == "shooting"
    p.act([3, 9], act="shoot", vehicle=10, at="tyre_right")
    assert g.st.truck.tyres_burst == {"left": 0, "right": 1} and g.v(1).structure == 29
    p.act([2, 10], act="shoot", vehicle=13, at="bomber1")
    assert g.st.truck.bombers == [5, 10]
    with pytest.raises(RulesError, match="avoided a collision"):
        g.act(act="shoot", vehicle=14, at="gunner")
    with pytest.raises(RulesError, match="petrol bomb"):
        g.act(act="shoot", vehicle=12, at="gunner")
    out = p.act([4, 8], act="shoot", vehicle=1, shooter="gunner", target=10)
    assert g.v(10).out == "dead (shot by the crossbowman)" and g.st.eliminated == 1
    p.end()
    # Between turns Ann's dead biker comes back in an open dirt buggy, on the back row.
    p.act(act="enter", vehicle=10, template="open_dirt_buggy", to=sq(1, 4))
    # Turn 2: the wrecker side-swipes the trike; the truck pulls left, pushing the van; a snake.
    p.round()
    p.picks({10: "2:4", 14: "2:3", 12: "3:5 1R", 13: "2:3", 9: "1:6", 11: "2:3 1R"}, truck="2:3 1L")
    p.act(act="move", vehicle=10, to=sq(2, 4))
    p.act(act="move", vehicle=14, to=sq(3, 5, dy=25))
    p.act(act="move", vehicle=12, to=sq(6, 6))
    p.act(act="move", vehicle=13, to=sq(4, 3))
    p.act(act="move", vehicle=9, to=sq(7, 7))
    p.act(act="move", vehicle=11, to=sq(3, 5, dy=-25))
    p.act([2], act="drive_roll", vehicle=12)
    out = p.act([6], choose=["collide"], act="collide", vehicle=11)
    assert out["facings"] == ["side", "side"] and g.v(14).structure == 2 and out["bumped"] == 14
    # Put in the middle of its new square before the collide ended (within the camera's doubt of the board).
    assert out["placed"][0]["square"] == [3, 6] and math.dist(p.placed[14][:2], sq(3, 6)[:2]) < 1
    assert g.st.phase == "truck"
    out = p.act([3], act="truck_sideways", vehicle=1)
    assert out["row"] == 6 and out["pushed"] == [12]
    # The van it pushed is put in its new square first, then the truck in its new row.
    assert [(q["vehicle"], q.get("square"), q.get("row")) for q in out["placed"]] == [(12, [6, 7], None),
                                                                                      (1, None, 6)]
    assert math.dist(p.placed[12][:2], sq(6, 7)[:2]) < 1 and math.dist(p.placed[1][:2], (750.0, 700.0)) < 1
    assert g.st.phase == "gyro"
    assert p.act([5], act="drop", vehicle=9, target=12, payload="snake")["result"] == "hit"
    p.act([5, 6], act="shoot", vehicle=10, at="gunner")
    p.act([1, 4], act="shoot", vehicle=13, at="max")
    assert (g.v(1).structure, g.v(1).driver, g.st.truck.gunner) == (28, 7, 8)
    out = p.act([9], act="shoot", vehicle=1, shooter="gunner", target=14)
    assert out["result"] == "missed"
    p.end()
    # Turn 3: the snake makes the van go straight; the buggy shoots the snake dead.
    p.round([4])
    assert g.v(12).turn_rules == ["straight"]
    p.picks({10: "2:3", 14: "2:3", 12: "2:3", 13: "3:5", 9: "1:6", 11: "2:3"}, truck="2:3")
    p.act(act="move", vehicle=10, to=sq(2, 4))
    p.act(act="move", vehicle=14, to=sq(3, 6))
    p.act(act="move", vehicle=12, to=sq(6, 7))
    p.act(act="move", vehicle=13, to=sq(6, 3))
    p.act(act="move", vehicle=9, to=sq(10, 7))
    p.act(act="move", vehicle=11, to=sq(3, 5))
    assert g.st.phase == "shooting"
    p.act([3], act="shoot", vehicle=10, at="snake", target=12)
    assert g.v(12).snake is None
    p.act([2, 3], act="shoot", vehicle=12, at="bomber2")
    p.act([6, 2], act="shoot", vehicle=14, at="gunner")
    assert (g.st.truck.bombers, g.st.truck.gunner) == ([5, 9], 7)
    p.end()
    # Turn 4: the slasher races ahead into Max's shotgun; the auto-gyro flies off the board.
    p.round()
    p.picks({10: "2:3", 14: "2:3", 12: "2:3", 13: "4:6", 9: "1:6", 11: "2:3"}, truck="2:3")
    p.act(act="move", vehicle=10, to=sq(2, 4))
    p.act(act="move", vehicle=14, to=sq(3, 6))
    p.act(act="move", vehicle=12, to=sq(6, 7))
    p.act(act="move", vehicle=13, to=sq(9, 3))
    assert p.act(act="move", vehicle=9)["result"] == "off the board"
    p.act(act="move", vehicle=11, to=sq(3, 5))
    assert g.rules._can_shoot(g.st, g.v(12), "") == "the harpoon is reloading (a full turn)"
    p.act([2, 9, 3, 1], act="shoot", vehicle=1, shooter="max", target=13)
    assert (g.v(13).structure, g.v(13).driver) == (7, 6)
    out = p.end()
    assert out["over"] and out["winner"] == "truck" and g.st.distance == 12


def test_a_whole_game_with_fixed_dice():
    from companion.rules.stop_the_truck import ACTIONS
    p = Play()
    play_whole_game(p)
    assert p.game.st.over and p.game.st.winner == "truck"
    used = {e.detail.get("act") for e in p.game.session.log if e.kind == "action"}
    assert used == set(ACTIONS) == set(p.game.rules.handlers)      # every action, each offered by its spec
    assert {e.kind for e in p.game.session.log} == {"round", "end_turn", "action"}


def test_max_shoots_the_harpoonist_not_the_gyro():
    g = Game({12: at(10, 3), 11: at(10, 6), 9: at(1, 8)})
    g.round()
    g.picks({12: "2:3", 11: "2:3", 9: "1:6"})
    g.act(act="move", vehicle=12, to=at(10, 3))
    g.act(act="move", vehicle=9, to=at(4, 8))
    g.act(act="move", vehicle=11, to=at(10, 6))
    assert g.st.phase == "shooting"                  # nobody under the gyro: its step passes
    with pytest.raises(RulesError, match="on the truck's side"):
        g.act(act="shoot", vehicle=1, shooter="max", target=9)
    with pytest.raises(RulesError, match="has no harpoonist"):
        g.act(act="shoot", vehicle=1, shooter="max", target=11, at="harpoonist")
    out = g.act([2, 6], act="shoot", vehicle=1, shooter="max", target=12, at="harpoonist")   # 6 + 2: 3 points
    assert g.v(12).shooting == 3 and out["result"] == "hit"


# --- through the page's game server ----------------------------------------------------------------

PAGE_POSES = (CarTruth(10, 400.0, 400.0, 0.0), CarTruth(11, 250.0, 265.0, 0.0), CarTruth(12, 1000.0, 200.0, 0.0),
              CarTruth(13, 1000.0, 500.0, 0.0), CarTruth(14, 1100.0, 700.0, 0.0))


def test_a_turn_through_the_page(demo_table, renderer):
    """The page's game server: the starter rosters (the first car the truck), the board over the
    table, the squares a car may reach, and a turn played through the actions' own fields, the
    move's pose taken from the camera."""
    import numpy as np

    from companion.game import TableGame
    from companion.live import LiveTable
    from vision.sources import SyntheticSource
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    live.process(renderer.render(PAGE_POSES, np.random.default_rng(3)).image, 0, 0.0)
    game = TableGame(live, seed=7)
    rosters = game.starter_rosters("stop_the_truck")
    assert rosters[0]["vehicles"][0] == {"marker": 10, "template": "the_truck", "name": "Interceptor"}
    g = game.start("stop_the_truck", {"square_mm": 60}, rosters)
    board = g["game"]["board"]
    assert sum(c["kind"] == "square" for c in board["cells"]) == 108
    state = g["game"]["state"]
    assert state["vehicles"]["11"]["square"] == [4, 3] and state["vehicles"]["12"]["square"] is None
    game.start_round({})
    car = game.car(11)
    assert car["card"]["type"] == "Open Dirt Buggy" and car["overlays"]["cells"]
    assert {c["kind"] for c in car["overlays"]["cells"]} <= {"reach", "red", "blue"}
    game.act({"act": "select", "vehicle": 10, "box": "2:3", "bomb1": [4, 3]})
    game.act({"act": "select", "vehicle": 11, "box": "2:3"})
    assert game.game_json()["game"]["state"]["truck"]["bomb_squares"] == "hidden"
    g = game.act({"act": "declare", "vehicle": 10})
    assert g["game"]["state"]["phase"] == "move"
    g = game.act({"act": "move", "vehicle": 11})            # "to" from the camera: it has not moved
    assert g["game"]["state"]["vehicles"]["11"]["square"] == [4, 3]
    assert g["game"]["state"]["phase"] == "bombs"
    assert [c["label"] for c in g["game"]["board"]["cells"] if c["kind"] == "bomb"] == ["bomb 1"]
    g = game.act({"act": "bombs", "vehicle": 10})
    assert g["pending"]["dice"] == ["d10"]


def test_scenarios_record_and_play_back(tmp_path):
    """Every worked scenario recorded in a game file plays back to the same states (the secret
    picks, the pending placings and the board included)."""
    from companion.record import resume
    from companion.store import GameStore
    for n, path in enumerate(SCENARIOS):
        store = GameStore(tmp_path / f"{n}.sqlite")
        run_scenario(load_scenario(path), str(path), store=store)
        assert len(resume(store).events) == len(store.events()) > 2


def test_option_bomb_reach():
    g = Game({11: at(4, 3)}, {"bomb_reach": 4})
    g.round()
    g.act(act="select", vehicle=1, box="2:3", bomb1=[4, 1])            # 4 squares off: in reach now
    assert g.st.truck.bomb_squares == [(3, 0), None]
    g = Game({11: at(4, 3)}, {"bomb_reach": 1})
    g.round()
    with pytest.raises(RulesError, match="2 squares from the truck; a petrol bomber reaches 1"):
        g.act(act="select", vehicle=1, box="2:3", bomb1=[4, 3])


def test_option_square_mm():
    rules = rule_system("stop_the_truck")
    assert rules.option("square_mm") == pytest.approx(76.2)
    places = {1: list(TRUCK), 11: at(3, 3)}           # (300, 300): 3 in squares from (192.8, 157.1)
    st = rules.new_game(rosters(places), parse_scene(scene(places)))
    assert st.board_origin.x_mm == pytest.approx(650 - 6 * 76.2) and st.vehicles[11].square == (1, 1)
    with pytest.raises(RulesError, match="not a square size"):
        rule_system("stop_the_truck", {"square_mm": 0}).new_game(rosters(places), parse_scene(scene(places)))


def test_a_car_on_a_line_at_the_start_is_settled_by_its_roster():
    on_line = [450.0, 300.0, 0.0, 1.0, 0.5]
    with pytest.raises(RulesError, match="too close to call between square 4,3, square 5,3"):
        Game({11: on_line})
    g = Game({11: on_line}, extra={11: {"square": [5, 3]}})
    assert g.v(11).square == (4, 2) and "taken as square 5,3" in g.st.notes[0]


def test_blue_tyre_problem_steers_every_move():
    g = Game({10: at(3, 4)}, extra={10: {"driver_skill": 3}})
    g.round()
    g.picks({10: "2:4 1L"}, truck="2:3")
    g.act(act="move", vehicle=10, to=at(4, 5))
    g.act([9, 7], act="drive_roll", vehicle=10)              # BLUE 7: always 1 square left of desired
    assert g.v(10).conditions["pull"] == 1
    g.end()
    g.round()
    g.picks({10: "2:3"})
    with pytest.raises(RulesError, match="goes to square 4,6"):
        g.act(act="move", vehicle=10, to=at(4, 5))
    g.act(act="move", vehicle=10, to=at(4, 6))


def test_a_gang_vehicle_on_the_trucks_side():
    """A vehicle on Max's roster rides for the truck: it shoots the gang's vehicles, the truck
    does not shoot it, and losing it gives the optional rule nothing."""
    g = Game({15: at(10, 3), 11: at(11, 4)}, {"regain_on_elimination": True}, extra={1: {"structure": 20}})
    g.round()
    g.picks({15: "2:3", 11: "2:3"})
    g.act(act="move", vehicle=15, to=at(10, 3))
    g.act(act="move", vehicle=11, to=at(11, 4))
    assert [t["marker"] for t in g.rules.targets(g.st, 15)] == [11]
    assert [a["fields"][1]["choices"] for a in specs(g, 15)] == [[{"value": 11, "label": "Plated Wrecker (Bob)"}]]
    with pytest.raises(RulesError, match="on the truck's side: it shoots at a gang vehicle"):
        g.act(act="shoot", vehicle=15, at="gunner")
    with pytest.raises(RulesError, match="the Jeep is on the truck's side"):
        g.act(act="shoot", vehicle=1, shooter="max", target=15)
    g.act([3, 2], act="shoot", vehicle=15, target=11)
    assert g.v(11).structure == 11
    g.rules._eliminate(g.st, g.v(15), "wrecked", [])
    assert g.st.eliminated == 0 and g.v(1).structure == 20


# --- review fixes ---------------------------------------------------------------------------

def test_a_car_shoved_into_another_meets_it_side_to_side():
    """The slasher drove forward (its front ram +1), but the truck shoves it sideways into the
    bike: that second collision is side to side (side ram 0), not a front ram."""
    g = Game({13: at(5, 6), 10: at(6, 7)}, extra={1: {"gear": 2}})
    g.round()
    g.picks({10: "2:3", 13: "2:4"}, truck="2:3 1L")
    g.act(act="move", vehicle=10, to=at(6, 7))
    g.act(act="move", vehicle=13, to=at(6, 6))
    out = g.act([4, 4], choose=["collide"], act="truck_sideways", vehicle=1)
    assert out["pushed"] == [13, 10]
    chain = out["rolls"][1]
    assert chain["modifiers"] == [] and chain["total"] == 4        # standard chart 4: 1 to self
    assert g.v(13).structure == 10 - 1 - 1


def test_a_truck_stopped_while_pushing_rolls_no_more():
    g = Game({11: at(6, 6), 10: at(5, 6)}, extra={1: {"gear": 2, "structure": 1}})
    g.round()
    g.picks({10: "2:3", 11: "2:3"}, truck="2:3 1L")
    g.act(act="move", vehicle=10, to=at(5, 6))
    g.act(act="move", vehicle=11, to=at(6, 6))
    out = g.act([2], act="truck_sideways", vehicle=1)   # 2 + 1 = 3 on heavy: 1 to self
    assert out["over"] and out["winner"] == "gang" and len(out["rolls"]) == 1
    assert g.st.phase == "over"


def test_top_gear_damage_that_stops_the_truck_ends_the_game_at_once():
    g = Game({10: at(3, 4)}, extra={1: {"gear": 4, "structure": 2}, 10: {"gear": 4}})
    g.st.truck.top_gear_turns = D.TOP_GEAR_FREE_TURNS
    g.round()
    out = g.picks({10: "4:5"}, truck="4:5")
    assert out["over"] and out["winner"] == "gang" and g.st.phase == "over"
    with pytest.raises(RulesError, match="the game is over"):
        g.act(act="move", vehicle=10, to=at(3, 4))


def test_sheet_snake_eight_is_a_red_manoeuvre_without_a_shooting_ban():
    """The sheet's snake 8 ("8/ " " " red " "") is 6 with red for blue; 7 adds "no shooting", 8 does not."""
    g = gyro_setup({"snake_table": "sheet"})
    g.act([9], act="drop", vehicle=9, target=11, payload="snake")
    g.end()
    g.round([8])
    assert g.v(11).turn_rules == ["must_red"] and g.v(11).no_shooting == []
    g.st.phase = "turn_over"
    g.round([7])
    assert g.rules.allowed_boxes(g.st, g.v(11))[1] == ["must blue"] and g.v(11).no_shooting == ["the snake"]


def test_option_gyro_drop_skill():
    """A 7 in the same square (modifier 0): under the dropping skill (9) a hit, under the flying
    skill (5) a miss."""
    for option, result in (("dropping", "hit"), ("flying", "missed")):
        g = gyro_setup({"gyro_drop_skill": option})
        out = g.act([7], act="drop", vehicle=9, target=11, payload="snake")
        assert out["result"] == result and out["rolls"][0]["target"] == (9 if option == "dropping" else 5)


def test_option_cracked_top_green():
    """The sheet's RED 4, cracked chassis: "ALL TOP GREEN AS BLUE"."""
    for option, box, need in (("top_gear", "4:4", "blue"), ("top_gear", "3:5", None),
                              ("fastest_green", "4:4", None), ("fastest_green", "3:5", "blue")):
        g = Game({11: at(2, 2)}, {"tables": "sheet", "cracked_top_green": option}, extra={11: {"gear": 4}})
        g.v(11).conditions["cracked_chassis"] = True
        g.round()
        g.picks({11: box})
        assert g.v(11).roll_needed == need, (option, box)
    # A blue box with a cracked chassis rolls as red; red boxes are not offered.
    g = Game({11: at(2, 2)}, {"tables": "sheet"}, extra={11: {"gear": 4}})
    g.v(11).conditions["cracked_chassis"] = True
    g.round()
    assert "4:6" not in {b.key for b in g.rules.allowed_boxes(g.st, g.v(11))[0]}
    g.picks({11: "4:6 1L"})
    assert g.v(11).roll_needed == "red"


def test_option_tables_on_the_vehicle_and_bike_tables():
    """Max's 2 + 2 = 4: "At vehicles" takes 1 off structure, driving and shooting, the sheet's
    "AT CARS" 1 off the driver only; "At the bike" 2 structure and 1 off the skills, the sheet's
    "AT BIKE" 3 structure."""
    for option, after in (("typed", (9, 5, 5)), ("sheet", (9, 5, 6))):
        g = shoot_setup({12: at(10, 4)}, {"tables": option})
        g.act([1, 2], act="shoot", vehicle=1, shooter="max", target=12)
        assert (g.v(12).structure, g.v(12).driver, g.v(12).shooting) == after, option
    for option, out in (("typed", None), ("sheet", "wrecked")):
        g = shoot_setup({10: at(10, 4)}, {"tables": option})
        g.act([1, 2], act="shoot", vehicle=1, shooter="max", target=10)
        assert g.v(10).out == out, option
        if out is None:
            assert (g.v(10).structure, g.v(10).driver, g.v(10).shooting) == (1, 7, 5)


def test_table_spot_checks_against_the_rulebook_text():
    """A few entries read off stop-the-truck.txt by hand."""
    assert D.CHARTS["standard"][12] == ("victim", 6, 2) and D.CHARTS["standard"][5] == (None, 0, 0)
    assert D.CHARTS["standard"][-2] == ("self", 7, 2) and D.CHARTS["heavy"][4] == (None, 0, 0)
    assert D.CHARTS["heavy"][12] == ("victim", 8, 2) and D.CHARTS["heavy"][1] == ("self", 3, 1)
    assert (D.VEHICLE_TYPED[9].structure, D.VEHICLE_TYPED[9].driver, D.VEHICLE_TYPED[9].red_roll) == (2, 2, True)
    assert D.MAX_TABLE[9].structure == 1 and D.MAX_TABLE[10].weapon_lost and D.MAX_TABLE[11].roll_twice
    assert D.CREW_TYPED[2].crew == 1 and D.CREW_SHEET[2].crew == 0 and D.CREW_TYPED[11].dead
    assert D.TYRES_TYPED[8].structure == 1 and D.TYRES_SHEET[8].structure == 0 and D.TYRES_TYPED[11].structure == 2
    assert D.BIKE_TYPED[8].dead and not D.BIKE_SHEET[8].dead and D.BIKE_SHEET[8].structure == 7
    assert (D.BOMB_TYPED[9].structure, D.BOMB_TYPED[9].driver) == (6, 2)
    assert (D.BOMB_SHEET[8].structure, D.BOMB_SHEET[8].driver) == (6, 5) and D.BOMB_TYPED[10].structure == 0
    assert D.RED_TYPED[7].special == "kangaroo" and D.RED_SHEET[1].special == "red_plus_2"
    assert D.BLUE_TABLE[10].special == "red_table" and D.SNAKE_TYPED[10].special == "snake_gone"


def test_blue_slasher_from_straight_behind_slashes_the_side_it_stands_on():
    """Straight in from behind (no sideways move), the tyre is on the side of the truck's centre
    line the slasher's tracked pose is on (it used to be the right always)."""
    for dy, side in ((30.0, "left"), (-30.0, "right")):
        g = Game({13: at(4, 5)})
        g.round()
        g.picks({13: "2:4"}, truck="2:3")                     # into square 4, the tanker's back
        g.act(act="move", vehicle=13, to=at(5, 5, dy=dy))
        out = g.act([9, 3], act="collide", vehicle=13)        # 9 + 1 front ram = 10: 5 to the truck
        assert out["facings"] == ["front", "rear"] and g.v(1).structure == 25
        assert g.st.truck.tyres_burst[side] == 1, side


def test_option_halves():
    """A 7 on "1d10/2" for the bomb in the bomber's hand: 4 rounded up, 3 down; an engine fire
    (typed RED 5) the same."""
    for option, left in (("up", 6), ("down", 7)):
        g = bomb_setup({"halves": option})
        g.act([1, 7], act="bombs", vehicle=1)
        assert g.st.truck.bombers == [left, 10], option
    for option, structure in (("up", 12 - 4), ("down", 12 - 3)):
        g = Game({11: at(2, 2)}, {"halves": option}, extra={11: {"gear": 4}})
        g.round()
        g.picks({11: "4:6"}, truck="2:3")
        g.act(act="move", vehicle=11, to=at(5, 2))
        g.act([9, 5, 7], act="drive_roll", vehicle=11)    # failed; RED 5, engine fire: 7 halved
        assert g.v(11).structure == structure, option


def test_a_gang_player_cannot_come_back_as_the_auto_gyro():
    """The auto-gyro "Comes on The Truck's side": a gang player's replacement may not be one."""
    g = Game({11: at(1, 7)})
    g.round()
    g.picks({11: "2:2"})
    g.act(act="move", vehicle=11)                              # off the back of the board
    g.end()
    with pytest.raises(RulesError, match="comes on on the truck's side"):
        g.act(act="enter", vehicle=11, template="auto_gyro", to=at(1, 3))
    g.act(act="enter", vehicle=11, template="jeep", to=at(1, 3))
    assert g.v(11).template_key == "jeep"


def test_the_crossbowmans_nearest_too_close_to_call_allows_either():
    """Two cars behind the truck at distances within the poses' doubt of each other: either is
    "the nearest"; with exact poses only the nearer one is."""
    # Both in the rear arc, about half a millimetre apart in distance from the crossbowman.
    for sigma, allowed in ((0.0, {11}), (2.0, {11, 12})):
        places = {11: at(3, 5, dx=-8.0) + [sigma], 12: at(3, 6, dy=-40.0) + [sigma]}
        g = shoot_setup(places)
        near = {o.marker for o in g.rules._nearest_behind_all(g.st)}
        assert near == allowed, sigma
        rows = {r["marker"]: r["nearest"] for r in g.rules.targets(g.st, 1) if r["shooter"] == "gunner"}
        assert {m for m, n in rows.items() if n} == allowed


# --- the hooks the table calls ---------------------------------------------------------------------

def test_turn_info_gives_the_move_order_and_whose_player_is_up():
    g = Game({10: at(3, 3), 11: at(3, 7)})
    g.round()
    info = g.rules.turn_info(g.st)
    assert (info["order"], info["turn"], info["active"], info["up"]) == ([], -1, None, None)   # secret picks: all
    g.picks({10: "2:3", 11: "2:3 1L"})
    info = g.rules.turn_info(g.st)
    assert info["order"] == [{"player": "Ann", "vehicle": 10}, {"player": "Bob", "vehicle": 11}]
    assert (info["turn"], info["active"], info["up"]) == (0, 10, "Ann")
    g.act(act="move", vehicle=10, to=at(3, 3))
    info = g.rules.turn_info(g.st)
    assert (info["turn"], info["active"], info["up"]) == (1, 11, "Bob")


def test_judge_move_against_the_square_owed():
    """The bike's box 2:4 1L with the truck at 3: one square up the board, one left: square 4,4. A
    pose in it is legal by its margin to the nearest edge; one in the square beside it is not, by
    how far it is outside; 1 mm over the line with 1 mm of doubt is too close to call, and counts
    in the box's square (option line_call)."""
    g = Game({10: at(3, 3), 11: at(3, 7)})
    g.round()
    g.picks({10: "2:4 1L", 11: "2:3"})
    from companion.geometry import Pose
    ok = g.rules.judge_move(g.st, 10, Pose(*at(4, 4, dx=20)))
    assert ok["legal"] and ok["margin_mm"] == 30.0 and ok["square"] == [4, 4]
    bad = g.rules.judge_move(g.st, 10, Pose(*at(4, 5, dy=10)))
    assert not bad["legal"] and bad["margin_mm"] == -60.0 and "moves 4 1L blue to square 4,4" in bad["reasons"][0]
    line = g.rules.judge_move(g.st, 10, Pose(*at(4, 4, dy=51), 1.0, 0.5))
    assert line["legal"] and "too close to call" in line["reasons"][0] and "line_call" in line["reasons"][0]
    assert g.rules.judge_move(g.st, 11, Pose(*at(3, 7))) is None          # not its move yet


def test_end_turn_passes_the_gyro_and_is_refused_where_the_step_is_compulsory():
    g = gyro_setup()
    out = g.end()
    assert out["result"] == "passed" and g.st.phase == "shooting" and g.st.gyro_done
    g = Game({10: at(3, 3)})
    g.round()
    g.picks({10: "2:3"})
    with pytest.raises(RulesError, match=r'the turn ends after shooting, its last step \(stop-the-truck.txt, "Move '
                                         r'sequence" 8: "All vehicles .* may shoot"\); it is at moves, lightest first '
                                         r'.*"Move all vehicles in order, lightest first to heaviest"\), which nobody '
                                         r'may pass: waiting for the Bike to move'):
        g.end()


def test_the_book_sets_the_order_of_play_and_the_turn_ends_only_after_shooting():
    """"Move all vehicles in order, lightest first to heaviest" ("Move sequence" 3): no player
    gives a play order (round_orders is None), and a turn started with one, a car named twice or
    one, is refused, quoting the rule, with nothing changed; no turn can be ended before one
    begins, nor a new one begun before the last has had its shooting ("Move sequence" 8)."""
    g = Game({10: at(3, 3), 11: at(3, 7)})
    assert g.rules.round_orders(g.st) is None
    before = g.st.to_json()
    for orders in ({"Ann": [10, 10]}, {"Ann": [10], "Bob": [11]}, {"Bob": [None, 11]}):
        with pytest.raises(RulesError, match='no play order is given in Stop The Truck!: the book sets it .*"Move '
                                             'all vehicles in order, lightest first to heaviest"'):
            g.session.start_round(orders)
    with pytest.raises(RulesError, match=r"no turn is under way to end: start turn 1 .*TURN SEQUENCE 1"):
        g.session.end_turn()
    assert g.st.to_json() == before and g.session.log == []
    assert g.session.start_round({"Ann": [], "Bob": [None]})["turn"] == 1        # blanks: no order given
    with pytest.raises(RulesError, match=r"turn 1 is not over: it is at picking boxes in secret .*"
                                         r"\"All players select movement \(a coloured box\)\"\), waiting for The Truck, Bike, "
                                         r"Plated Wrecker; the turn ends after shooting"):
        g.session.start_round({})
    with pytest.raises(RulesError, match=r"a collision is for collisions \(.*\"After all vehicles have moved do "
                                         r"any collision rolls\"\); the game is at: picking boxes in secret"):
        g.session.act({"act": "collide", "vehicle": 10})


def demo_cars():
    from vision.demo import demo_table
    return [(c.id, c.name, c.length_mm, c.width_mm) for c in demo_table().cars]


def test_demo_layout_lays_the_board_on_the_demo_table():
    """The truck in the middle of the 1219 x 813 mm table: the 914 x 686 mm board fits, and each gang
    car starts in the middle of its own square behind or beside the truck."""
    rules = rule_system("stop_the_truck")
    layout = rules.demo_layout(demo_cars(), (1219.2, 812.8))
    assert layout[10] == (609.6, 406.4, 0.0)
    cars = [{"id": m, "name": n, "x_mm": layout[m][0], "y_mm": layout[m][1], "heading_deg": layout[m][2],
             "length_mm": length, "width_mm": width} for m, n, length, width in demo_cars()]
    sc = parse_scene({"rules": "stop_the_truck", "table": {"width_mm": 1219.2, "depth_mm": 812.8}, "cars": cars})
    st = rules.new_game(rules.starter_rosters([(c["id"], c["name"]) for c in cars]), sc)
    assert [st.vehicles[m].square for m in (11, 12, 13, 14)] == [(2, 2), (2, 6), (1, 4), (3, 1)]
    corners = [rules.grid(st).polygon(c, r).exterior.coords for c in (0, 11) for r in (0, 8)]
    assert all(0 < x < 1219.2 and 0 < y < 812.8 for ring in corners for x, y in ring)
    with pytest.raises(RulesError, match="does not fit the 1219 x 813 mm table"):
        rule_system("stop_the_truck", {"square_mm": 100}).demo_layout(demo_cars(), (1219.2, 812.8))


def test_the_demo_table_carries_no_other_systems_gates_or_terrain():
    """The book's table is the board alone ("Concept and Board Layout"): the demo for Stop The
    Truck! carries no gates and no terrain (the demo table's own are another system's)."""
    from companion.commands.serve import with_scenery
    from vision.demo import demo_table
    rules = rule_system("stop_the_truck")
    assert rules.demo_scenery((1219.2, 812.8)) == {"terrain": [], "gates": []}
    table = demo_table()
    assert table.terrain or table.gates                    # the plain demo table has some
    shown = with_scenery(table, rules)
    assert shown.terrain == () and shown.gates == () and shown.cars == table.cars


def test_evidence_shows_the_square_owed_and_the_shooters_arc():
    g = ram_setup()
    shapes = g.rules.evidence(g.st, {"act": "collide", "vehicle": 11}, 11, None)
    assert [s["label"] for s in shapes] == ["contested 4,3"]
    g = Game({10: at(3, 3), 11: at(3, 7)})
    g.round()
    g.picks({10: "2:4 1L", 11: "2:3"})
    shapes = g.rules.evidence(g.st, {"act": "move", "vehicle": 10, "to": at(4, 4)}, 10, None)
    assert [s["label"] for s in shapes] == ["put here", "box 2:4 1L: 4,4"]
    g = shoot_setup({12: at(3, 5)})
    shapes = g.rules.evidence(g.st, {"act": "shoot", "vehicle": 12, "at": "gunner"}, 12, None)
    assert {s["role"] for s in shapes} == {"arc", "target"} and shapes[-1]["label"] == "gunner"


def test_a_game_from_a_scene_alone():
    rules = rule_system("stop_the_truck", {"square_mm": S})
    sc = scene({1: list(TRUCK), 10: at(3, 3)})
    sc["cars"][0]["template"], sc["cars"][1]["template"] = "the_truck", "bike"
    st = rules.game_from_scene(parse_scene(sc), sc["cars"])
    assert st.vehicles[10].square == (2, 2) and st.vehicles[1].owner == "Max"
    with pytest.raises(RulesError, match="say its vehicle"):
        rules.game_from_scene(parse_scene(scene({1: list(TRUCK)})), scene({1: list(TRUCK)})["cars"])


def test_a_turn_on_the_demo_table_through_the_page(demo_table, renderer):
    """The demo's start (demo_layout) filmed by the synthetic camera, then a turn through the table
    game with the page's own request shapes: secret picks, the truck's declaration, each car moved
    by hand to the pose its move's spec names and read back by the camera (no pose sent), a
    collision that waits for the bumped car to be put in its new square (any pose in the square
    fits: the camera sees it there off the middle and the game goes on), and the turn ended."""
    import numpy as np

    from companion.game import TableGame
    from companion.live import LiveTable
    from vision.sources import SyntheticSource
    source = SyntheticSource(demo_table, paced=False)
    live = LiveTable(source, demo_table, source.camera)
    layout = rule_system("stop_the_truck").demo_layout(demo_cars(), (demo_table.width_mm, demo_table.depth_mm))
    standing = {m: list(p) for m, p in layout.items()}
    film = filmer(live, renderer, standing)
    film()
    game = TableGame(live, seed=7)
    g = game.start("stop_the_truck", {}, game.starter_rosters("stop_the_truck"))
    squares = {m: v["square"] for m, v in g["game"]["state"]["vehicles"].items()}
    assert squares == {"10": [8, 5], "11": [3, 3], "12": [3, 7], "13": [2, 5], "14": [4, 2]}
    game.start_round({})
    for m, box in ((10, "2:3"), (11, "2:4"), (12, "2:3"), (13, "2:3"), (14, "2:3 1L")):
        g = game.act({"act": "select", "vehicle": m, "box": box})
    assert g["log"][0]["detail"]["box"] == "(secret)"
    g = game.act({"act": "declare", "vehicle": 10})
    assert (g["game"]["up"], g["game"]["active"]) == ("Gang 1", 11)
    for m, square in ((11, [4, 3]), (12, [3, 7]), (13, [2, 5]), (14, [4, 3])):
        spec = next(a for a in game.car(m)["actions"] if a["act"] == "move")
        assert spec["place"][0]["square"] == square and [f["kind"] for f in spec["fields"]] == ["fixed", "table_pose"]
        standing[m] = spec["place"][0]["pose"]
        film()
        assert game.preview({"act": "move", "vehicle": m})["judged"]["legal"]
        game.act({"act": "move", "vehicle": m})
        film()              # the camera sees it stand still where its move ended: the move is taken
        g = game.game_json()
        assert g["game"]["state"]["vehicles"][str(m)]["square"] == square
    assert g["game"]["state"]["phase"] == "collisions" and g["game"]["up"] == "Gang 4"
    g = game.act({"act": "collide", "vehicle": 14})
    # The trike's player is asked first whether it avoids ("Notes", The Trike): no.
    g = game.answer_choice("Gang 4", "collide")
    assert g["pending"]["dice"] == ["d10"] and g["pending"]["who"] == "Gang 4"
    g = game.answer_typed([6])           # the standard chart's 6: 1 point to the victim, bumped away from the truck
    # The resolution waits for the Rust Bucket in square 4,2 (its middle drawn; any pose in it fits).
    asked = g["pending"]["placement"]
    why = "bumped sideways by the collision with the Hearse, into square 4,2"
    assert (asked["marker"], asked["to"], asked["why"]) == (11, [419.1, 177.8, 0.0], why)
    # A 76.2 mm square's half diagonal, 53.9 mm (the board laid from the camera's truck pose).
    assert abs(asked["tolerance_mm"] - 53.9) <= 0.2 and asked["tolerance_deg"] == 45.0
    from companion.game import GameError
    with pytest.raises(GameError, match="waiting for put the Rust Bucket here: " + why):
        game.end_turn()
    standing[11] = [419.1 - 30.0, 177.8 + 25.0, 8.0]     # off the middle, still inside the square
    film()
    film()              # standing still there: taken
    g = game.game_json()
    assert g["pending"] is None, g["pending"]
    out = g["log"][0]["outcome"]                       # the log, newest first
    assert out["bumped"] == 11 and out["placed"][0]["square"] == [4, 2]
    assert g["game"]["state"]["vehicles"]["11"]["square"] == [4, 2] and g["game"]["state"]["phase"] == "shooting"
    assert abs(g["game"]["state"]["vehicles"]["11"]["pose"][0] - 389.1) < 2
    g = game.end_turn()
    assert g["game"]["state"]["phase"] == "turn_over" and g["game"]["state"]["distance"] == 3


def test_a_car_moving_into_an_occupied_square_is_put_beside_the_other():
    """Two models cannot stand on one spot: the bike's box takes it into the wrecker's square (a
    collision to come), so its form puts it beside the wrecker, 10 mm inside the square's edge on
    the side it comes from; into the truck's square, beside the truck on its own side."""
    g = Game({10: at(3, 3), 11: at(4, 2)})
    g.round()
    g.picks({10: "2:4 1R", 11: "2:3"})
    move = next(a for a in specs(g, 10) if a["act"] == "move")
    assert move["place"][0]["square"] == [4, 2] and move["place"][0]["pose"] == at(4, 2, dy=40)
    g.act(act="move", vehicle=10, to=move["place"][0]["pose"])
    assert g.v(10).square == (3, 1)
    g = Game({11: at(6, 4)})
    g.round()
    g.picks({11: "2:4 1L"})
    move = next(a for a in specs(g, 11) if a["act"] == "move")
    assert move["place"][0]["square"] == [7, 5] and move["place"][0]["pose"] == at(7, 5, dy=-40)


@pytest.mark.parametrize("path", SCENARIOS, ids=[p.stem for p in SCENARIOS])
def test_every_scenario_step_goes_through_the_pages_spec(path):
    """Each worked scenario played as the page sends it: an action without its camera fields,
    checked and filled by the acting car's spec (the scenario's `to` standing in for the camera's
    pose), so no scenario relies on a field the page cannot send; a step expected to be refused is
    refused, by the spec or by the rules; the outcome is the plain run's."""
    from companion.geometry import Pose
    from companion.rules.actions import ActionError
    data = load_scenario(path)
    rules = rule_system(data["rules"], data.get("options"))
    state = rules.new_game(data["rosters"], parse_scene(data, str(path)))
    if data.get("state"):
        rules.start_part_way(state, data["state"])
    dice = FixedDice(data.get("dice", []))
    session = GameSession(rules, state, dice, FixedChoices(data.get("choices", [])))
    for n, step in enumerate(data["steps"]):
        if "round" in step:
            assert session.start_round(step["round"]) is not None
        elif step.get("end_turn"):
            assert session.end_turn() is not None
        elif "poses" in step:
            rules.update_poses(session.state, {int(k): Pose(*v) for k, v in step["poses"].items()})
        else:
            sent = {k: v for k, v in step.items() if k not in ("to", "expect_error")}
            seen = {step["vehicle"]: step["to"]} if "to" in step else {}
            try:
                spec = {s.act: s for s in rules.action_specs(session.state, step["vehicle"])}[step["act"]]
                out = session.act(spec.fill(sent, Camera(seen)))
            except (KeyError, ActionError, RulesError):
                assert step.get("expect_error"), f"step {n + 1} ({step['act']}) was refused"
                continue
            assert not step.get("expect_error"), f"step {n + 1} ({step['act']}) should have been refused"
            assert out is not None, f"step {n + 1}: waiting for {session.waiting_for()}"
    plain = run_scenario(data, str(path))
    assert rules.state_json(session.state) == plain["state"] and dice.remaining == plain["dice_left"]


def test_option_bomb_victims_spares_max_side_only_when_chosen():
    """Step 7, "any vehicles ... in a square selected as a petrol bomb location": by default Max's
    own jeep in a bomb square is bombed (st-11); option bomb_victims gang_only spares it."""
    path = next(p for p in SCENARIOS if p.stem.startswith("st-11"))
    data = load_scenario(path)
    data["options"]["bomb_victims"] = "gang_only"
    slide = next(i for i, s in enumerate(data["steps"]) if s.get("act") == "truck_sideways")
    data["dice"], data["steps"] = [], data["steps"][:slide + 1]
    out = run_scenario(data, str(path))
    assert out["state"]["phase"] == "shooting" and out["state"]["vehicles"]["7"]["structure"] == 9


def test_the_page_offers_the_gang_a_vehicle_on_max_side():
    """The auto-gyro and a vehicle on Max's side are targets the gang's shoot form offers (st-09)."""
    path = next(p for p in SCENARIOS if p.stem.startswith("st-09"))
    data = load_scenario(path)
    data["dice"], data["steps"] = [], data["steps"][:11]
    rules = rule_system(data["rules"], data.get("options"))
    state = rules.new_game(data["rosters"], parse_scene(data, str(path)))
    session = GameSession(rules, state, FixedDice([]), FixedChoices([]))
    for step in data["steps"]:
        if "round" in step:
            session.start_round({})
        else:
            session.act({k: v for k, v in step.items() if k != "expect_error"})
    shoot = next(s.to_json() for s in rules.action_specs(state, 3) if s.act == "shoot")
    at = next(f for f in shoot["fields"] if f["name"] == "at")
    assert "vehicle" in [c["value"] for c in at["choices"]]
    target = next(f for f in shoot["fields"] if f["name"] == "target")
    # The gyro ahead, and Max's jeep level with it (its front half in the Stock Car's forward 180).
    assert [c["value"] for c in target["choices_by"]["vehicle"]] == [9, 7]


# --- issue 25: refusals lead with their reason; the truck's shooting is Max's track ----------------

def test_a_refusal_under_binding_brakes_leads_with_the_brakes():
    """RED 3 "Binding brakes, no top gear": from gear 4 the Stock Car's top gear 5 is within the
    gear change, so the brakes are the reason, and the refusal says them first; a gear out of reach
    is refused for the gear change alone; both together say the brakes first."""
    g = Game({11: at(2, 2)}, extra={11: {"gear": 4}})
    g.v(11).template_key = "stock_car"
    g.v(11).conditions["no_top_gear"] = True
    g.round()
    with pytest.raises(RulesError) as e:
        g.act(act="select", vehicle=11, box="5:5")
    assert str(e.value).startswith("the Plated Wrecker cannot pick 5:5 (gear 5: 5 squares forward, green): "
                                   "binding brakes (RED table): no top gear; it may pick: 3:3")
    with pytest.raises(RulesError, match=r"cannot pick 2:2 \(gear 2: 2 squares forward, green\): gear 2 is out of "
                                         r"reach from gear 4 \(up or down 1 gear a turn\); it may"):
        g.act(act="select", vehicle=11, box="2:2")
    g.v(11).gear = 3
    with pytest.raises(RulesError, match=r"cannot pick 5:5 .*: binding brakes \(RED table\): no top gear; gear 5 is "
                                         r"out of reach from gear 3"):
        g.act(act="select", vehicle=11, box="5:5")
    with pytest.raises(RulesError, match="say which box the Plated Wrecker picks"):
        g.act(act="select", vehicle=11)


def test_each_narrowing_rule_leads_its_refusal():
    """Every rule that takes a box out is the refusal's reason, in players' words."""
    g = Game({11: at(2, 2)}, extra={11: {"gear": 2}})
    g.round()
    cases = [({"lost_gears": [3]}, "3:3", "gear 3 is lost (RED table: lose a gear)"),
             ({"stuck_gear": 2}, "1:1", "clutch failure (RED table): stuck in gear 2 for the rest of the game"),
             ({"no_top_speed": True}, "2:4", "a fuel blockage (BLUE roll 9): no top square speed in any gear"),
             ({"only_yellow": True}, "2:3", "only yellow boxes (a steering problem, RED table)"),
             ({"no_brakes": True}, "ES", "cannot pick its emergency stop: no brakes (RED roll 5): no emergency stop")]
    for cond, key, words in cases:
        g.v(11).conditions = dict(cond)
        with pytest.raises(RulesError) as e:
            g.act(act="select", vehicle=11, box=key)
        assert words in str(e.value) and str(e.value).index(words) < str(e.value).index("it may pick"), str(e.value)
    with pytest.raises(RulesError, match=r"The Truck cannot pick its emergency stop: The Truck has no emergency stop"):
        g.act(act="select", vehicle=1, box="ES")
    g.v(11).conditions = {}
    g.v(11).turn_rules = ["straight"]
    with pytest.raises(RulesError, match=r"cannot pick 2:3 1L .*: only straight boxes \(the snake, this turn\)"):
        g.act(act="select", vehicle=11, box="2:3 1L")


def test_the_trucks_shooting_is_max_track_and_none_without_the_shotgun():
    """The truck sheet's "Max's Shoot/Drive" is one track: the state's shooting follows Max's
    points ("At Max" 4), and is 0 once the shotgun is destroyed ("At Max" 10)."""
    g = Game({13: at(5, 3)})
    assert g.st.to_json()["vehicles"]["1"]["shooting"] == 8
    g.round()
    g.picks({13: "2:3"}, truck="2:3")
    g.act(act="move", vehicle=13, to=at(5, 3))
    g.act([1, 4], act="shoot", vehicle=13, at="max")
    j = g.st.to_json()
    assert (j["truck"]["max"], j["vehicles"]["1"]["driver"], j["vehicles"]["1"]["shooting"]) == (7, 7, 7)
    g.end()
    g.round()
    g.picks({13: "2:3"}, truck="2:3")
    g.act(act="move", vehicle=13, to=at(5, 3))
    g.act([1, 10], act="shoot", vehicle=13, at="max")
    j = g.st.to_json()
    assert (j["truck"]["max"], j["vehicles"]["1"]["shooting"], j["vehicles"]["1"]["weapon_lost"]) == (4, 0, True)
    with pytest.raises(RulesError, match="Max's shotgun is destroyed"):
        g.act(act="shoot", vehicle=1, shooter="max", target=13)


def test_a_roster_gives_max_one_track():
    with pytest.raises(RulesError, match="Max has one track for shooting and driving"):
        Game({}, extra={1: {"driver_skill": 6, "shooting_skill": 8}})
    g = Game({}, extra={1: {"driver_skill": 6}})
    assert (g.v(1).driver, g.v(1).shooting) == (6, 6)

"""Stop The Truck!: a game begun part way through (`start_part_way`, a scenario's "state"
block, issue 25): every field set as play would have left it, the truck's row laying the board,
the turn's step with the boxes picked and the cars moved (whose move is next), and every wrong
field refused by name with its path, nothing changed."""

from __future__ import annotations

import copy

import pytest

from companion.dice import FixedChoices, FixedDice
from companion.rules.base import RulesError, rule_system
from companion.scene import parse_scene
from companion.session import GameSession

S = 100.0


def centre(c: int, r: int, row0: int = 5) -> list[float]:
    """The middle of square (column, row) from 1, the truck (at 650, 500 facing +x) in row `row0`."""
    return [50.0 + (c - 0.5) * S, 500.0 - (row0 - 0.5) * S + (r - 0.5) * S, 0.0]


CARS = {1: ("The Truck", "the_truck", 380, 60, "Max"), 2: ("Open Dirt Buggy", "open_dirt_buggy", 70, 32, "Ann"),
        3: ("Stock Car", "stock_car", 75, 32, "Bob"), 9: ("Auto-Gyro", "auto_gyro", 70, 40, "Max"),
        11: ("Plated Wrecker", "plated_wrecker", 75, 32, "Cat"), 12: ("Harpoon Van", "harpoon_van", 75, 34, "Dan")}


def game(places: dict, options=None):
    places = {1: [650.0, 500.0, 0.0], **places}
    cars = [{"id": m, "name": CARS[m][0], "x_mm": p[0], "y_mm": p[1], "heading_deg": p[2], "length_mm": CARS[m][2],
             "width_mm": CARS[m][3]} for m, p in places.items()]
    rosters: dict[str, list] = {}
    for m in places:
        rosters.setdefault(CARS[m][4], []).append({"marker": m, "template": CARS[m][1]})
    rules = rule_system("stop_the_truck", {"square_mm": S, **(options or {})})
    scene = parse_scene({"rules": "stop_the_truck", "table": {"width_mm": 1300, "depth_mm": 1000}, "cars": cars})
    state = rules.new_game([{"player": p, "vehicles": vs} for p, vs in rosters.items()], scene)
    return rules, state


def session(rules, state, dice=()):
    return GameSession(rules, state, FixedDice(list(dice)), FixedChoices([]))


def test_every_track_is_set_as_play_leaves_it():
    rules, st = game({3: centre(9, 2), 9: centre(3, 8), 12: centre(2, 3)})
    rules.start_part_way(st, {
        "turn": 6, "distance": 40, "last_speed": 5, "eliminated": 2,
        "truck": {"gear": 4, "structure": 21, "max": 5, "shotgun_destroyed": True, "bombers": [0, 7], "gunner": 3,
                  "tyres_burst": {"left": 1, "right": 3}, "top_gear_turns": 4,
                  "effects": {"clutch_failure": True, "steering_trouble": 2}},
        "vehicles": {"3": {"gear": 3, "structure": 4, "driver": 6, "shooting": 2,
                           "snake": {"active": 1, "asleep": False},
                           "effects": {"lost_gears": [5], "pulls": "right", "engine_fire": 1, "missed_gear": True}},
                     "9": {"structure": 3, "driver": 4, "dropping": 6},
                     "12": {"hand_weapon_destroyed": True, "effects": {"harpoon_reloading": True}}}})
    j = st.to_json()
    assert (j["turn"], j["phase"], j["distance"], j["eliminated"], st.truck.last_speed) == (6, "turn_over", 40, 2, 5)
    t = j["truck"]
    assert (t["structure"], t["max"], t["bombers"], t["gunner"], t["tyres_burst"], t["top_gear_turns"]) == \
        (21, 5, [0, 7], 3, {"left": 1, "right": 3}, 4)
    assert (j["vehicles"]["1"]["gear"], j["vehicles"]["1"]["shooting"], j["vehicles"]["1"]["weapon_lost"]) == (4, 0, True)
    assert st.vehicles[1].conditions == {"stuck_gear": 4, "red_plus": 2}
    car = j["vehicles"]["3"]
    assert (car["gear"], car["structure"], car["driver"], car["shooting"], car["snake"]) == \
        (3, 4, 6, 2, {"active": 1, "asleep": False})
    assert st.vehicles[3].conditions == {"lost_gears": [5], "pull": -1, "only_green": 1, "gear_down_next": True}
    assert (j["vehicles"]["9"]["structure"], j["vehicles"]["9"]["driver"], j["vehicles"]["9"]["dropping"]) == (3, 4, 6)
    assert j["vehicles"]["12"]["shooting"] == 0 and st.vehicles[12].reload
    assert rules.condition(st, 1).startswith("structure 21 of 30 left, Max 5, shotgun destroyed, bomber 1 out, bomber 2 7")


def test_the_next_turn_plays_from_the_state():
    """Between turns: the snake rolls at the turn's start, a missed gear takes the car one gear
    down, the engine fire allows only green and goes out, the harpoon reloads."""
    rules, st = game({3: centre(9, 2), 12: centre(2, 3)})
    rules.start_part_way(st, {"turn": 2, "vehicles": {
        "3": {"gear": 3, "snake": True, "effects": {"missed_gear": True, "engine_fire": 2}},
        "12": {"effects": {"harpoon_reloading": True}}}})
    s = session(rules, st, [1])                       # the snake does nothing
    out = s.start_round({})
    assert out["turn"] == 3 and "snake in the Stock Car: snake does nothing" in out["events"][0]
    boxes, why = rules.allowed_boxes(s.state, s.state.vehicles[3])
    assert {b.gear for b in boxes if b.key != "ES"} == {2} and {b.colour for b in boxes if b.key != "ES"} == {"green"}
    assert rules._can_shoot(s.state, s.state.vehicles[12], "") == "the harpoon is reloading (a full turn)"


def test_the_trucks_row_lays_the_board_and_the_cars_are_read_again():
    # The Stock Car at y 300 is in row 3 with the truck in row 5; with the truck in row 3 it is in row 1.
    rules, st = game({3: centre(9, 3)})
    assert st.vehicles[3].square == (8, 2)
    rules.start_part_way(st, {"truck": {"row": 3}})
    assert st.vehicles[1].square == (7, 2) and st.vehicles[3].square == (8, 0)
    assert st.to_json()["truck"]["row"] == 3 and st.board_origin.y_mm == pytest.approx(250.0)
    rules, st = game({3: centre(9, 3)}, {"board_anchor": "table_centre"})
    with pytest.raises(RulesError, match="state.truck.row: the board is centred on the table"):
        rules.start_part_way(st, {"truck": {"row": 3}})


def test_part_way_through_the_pick_and_the_moves():
    rules, st = game({2: centre(3, 2), 3: centre(4, 1), 11: centre(2, 8)})
    rules.start_part_way(st, {"turn": 1, "step": "select", "truck": {"box": "2:3", "bomb1": [9, 4]},
                              "vehicles": {"2": {"box": "2:4"}}})
    assert st.phase == "select" and st.vehicles[2].choice.key == "2:4" and st.vehicles[3].choice is None
    assert st.truck.bomb_squares == [(8, 3), None] and st.to_json()["truck"]["bomb_squares"] == "hidden"
    s = session(rules, st)
    with pytest.raises(RulesError, match="still to pick a box: Stock Car, Plated Wrecker"):
        s.act({"act": "declare", "vehicle": 1})
    # The move step: the Buggy (first) has moved to 4,2; the Stock Car is next, then the Wrecker.
    rules, st = game({2: centre(4, 2), 3: centre(4, 1), 11: centre(2, 8)})
    rules.start_part_way(st, {"turn": 3, "step": "move", "distance": 9, "truck": {"box": "2:3"},
                              "vehicles": {"2": {"box": "2:4", "moved": True}, "3": {"box": "2:3 1L"},
                                           "11": {"box": "2:4 1R"}}})
    assert st.phase == "move" and st.active.marker == 3 and rules.turn_info(st)["up"] == "Bob"
    assert st.vehicles[2].moved and st.vehicles[2].from_square == (2, 1) and st.truck.speed == 3
    assert st.vehicles[11].roll_needed == "blue" and st.vehicles[11].gear == 2
    with pytest.raises(RulesError, match="vehicles move lightest first, and the Stock Car moves before the Plated"):
        rules2, st2 = game({2: centre(3, 2), 3: centre(4, 1), 11: centre(2, 8)})
        rules2.start_part_way(st2, {"turn": 3, "step": "move", "truck": {"box": "2:3"},
                                    "vehicles": {"2": {"box": "2:4", "moved": True}, "3": {"box": "2:3"},
                                                 "11": {"box": "2:3", "moved": True}}})


def test_a_vehicle_out_may_come_back_on():
    rules, st = game({3: centre(9, 2)})
    rules.start_part_way(st, {"turn": 4, "eliminated": 1, "vehicles": {"3": {"out": "wrecked"}}})
    assert st.vehicles[3].out == "wrecked" and not st.vehicles[3].on_board
    s = session(rules, st)
    out = s.act({"act": "enter", "vehicle": 3, "template": "jeep", "to": centre(1, 2)})
    assert out["result"] == "entered" and s.state.wrecks[0]["template"] == "stock_car"


@pytest.mark.parametrize("block, words", [
    ({"hp_body": 3}, "state: no field 'hp_body' (its fields: turn, step, distance, last_speed, eliminated, truck, "
                     "vehicles)"),
    ({"vehicles": {"3": {"hp_body": 3}}}, "state.vehicles.3: no field 'hp_body' (its fields: gear, structure,"),
    ({"vehicles": {"99": {}}}, "state.vehicles: no field '99' (its fields: 3, 12)"),
    ({"vehicles": {"1": {"gear": 2}}}, "state.vehicles.1: the truck's tracks, gear and row go under state.truck"),
    ({"truck": {"shooting": 5}}, "state.truck: no field 'shooting' (its fields: gear, structure, max,"),
    ({"truck": {"tyres_burst": {"front": 1}}}, "state.truck.tyres_burst: no field 'front' (its fields: left, right)"),
    ({"truck": {"tyres_burst": {"left": 9}}}, "state.truck.tyres_burst.left: 9 is not burst tyres on a side"),
    ({"truck": {"bombers": [10]}}, "state.truck.bombers: the two petrol bombers' points"),
    ({"truck": {"max": 0}}, "state.truck.max: 0 is not points on Max's track (0 has stopped the truck) (1 to 8)"),
    ({"truck": {"gear": 5}}, "state.truck.gear: 5 is not a gear of The Truck (1 to 4)"),
    ({"truck": {"effects": {"binding_brake": True}}}, "state.truck.effects: no field 'binding_brake'"),
    ({"truck": {"effects": {"emergency_stop": True}}}, "state.truck.effects.emergency_stop: The Truck has no"),
    ({"vehicles": {"3": {"gear": "3"}}}, "state.vehicles.3: gear must be a whole number, not \"3\""),
    ({"vehicles": {"3": {"structure": 0}}}, "state.vehicles.3.structure: 0 is not structure left (at 0 it is "
                                            "wrecked: say \"out\")"),
    ({"vehicles": {"3": {"snake": {"awake": True}}}}, "state.vehicles.3.snake: no field 'awake' (its fields: active, "
                                                      "asleep)"),
    ({"vehicles": {"3": {"dropping": 2}}}, "state.vehicles.3.dropping: only the auto-gyro drops"),
    ({"vehicles": {"3": {"effects": {"lost_gears": [1, 2, 3, 4, 5]}}}}, "state.vehicles.3.effects.lost_gears: a "
                                                                       "vehicle keeps one gear at least"),
    ({"vehicles": {"3": {"effects": {"harpoon_reloading": True}}}}, "state.vehicles.3.effects.harpoon_reloading: only "
                                                                   "the harpoon van reloads"),
    ({"vehicles": {"3": {"out": "wrecked", "gear": 2}}}, "state.vehicles.3: a vehicle out of the game has no gear"),
    ({"vehicles": {"3": {"out": "exploded"}}}, "state.vehicles.3: out must be one of wrecked, driver out, off the"),
    ({"step": "shooting"}, "state: step must be one of between_turns, select, move"),
    ({"step": "select"}, "state.step: select is part of a turn: say which turn (state.turn, from 1)"),
    ({"turn": 2, "step": "move", "truck": {"box": "2:3"}}, "state.vehicles.3.box: in the move step every vehicle"),
    ({"turn": 2, "step": "select", "truck": {"box": "4:5"}}, "state.truck.box: The Truck cannot pick 4:5"),
    ({"turn": 2, "vehicles": {"3": {"box": "2:3"}}}, "state.vehicles.3.box: boxes are picked in a turn"),
    ({"turn": 2, "step": "select", "truck": {"bomb2": [12, 9]}}, "state.truck.bomb2: bomb square 2 (square 12,9) is"),
    ({"turn": 2, "vehicles": {"3": {"moved": True}}}, "state.vehicles.3.moved: cars move in the move step"),
    ({"turn": 1, "step": "select", "vehicles": {"3": {"effects": {"dust_in_eyes": True}}}},
     "state.vehicles.3.effects.dust_in_eyes: it acts on the next turn's pick: set it between turns"),
    ({"distance": 100}, "state.distance: 100 squares; the truck wins at 100"),
    ({"truck": {"top_gear_turns": 3}}, "state.truck.top_gear_turns: 3 is not turns in top gear, at most the turns "
                                       "played (0 to 0)"),
    ({"vehicles": []}, "state: vehicles must be an object, not []"),
])
def test_a_wrong_field_is_refused_by_its_path_and_nothing_changes(block, words):
    rules, st = game({3: centre(9, 2), 12: centre(2, 3)})
    before = copy.deepcopy(st.to_json())
    with pytest.raises(RulesError) as e:
        rules.start_part_way(st, block)
    assert str(e.value).startswith(words), str(e.value)
    assert st.to_json() == before and st.vehicles[1].square == (7, 4)


def test_a_roster_refuses_what_it_does_not_know():
    """Rosters are as strict as the state block: a misspelt field is refused by name."""
    rules = rule_system("stop_the_truck", {"square_mm": S})
    scene = parse_scene({"rules": "stop_the_truck", "table": {"width_mm": 1300, "depth_mm": 1000},
                         "cars": [{"id": 1, "name": "The Truck", "x_mm": 650, "y_mm": 500, "heading_deg": 0,
                                   "length_mm": 380, "width_mm": 60}]})
    truck = {"marker": 1, "template": "the_truck"}
    for rosters, words in [([{"player": "Max", "vehicles": [{**truck, "driver_skil": 6}]}],
                            "roster of Max, vehicle 1: no field 'driver_skil' (its fields: marker, template"),
                           ([{"player": "Max", "vehicles": [truck], "points": 50}],
                            "roster of Max: no field 'points' (its fields: player, vehicles)"),
                           ([{"player": "Max", "vehicles": [{**truck, "gear": "2"}]}],
                            "roster of Max, vehicle 1: gear must be a whole number"),
                           (["Max"], "a roster is an object (player, vehicles)")]:
        with pytest.raises(RulesError) as e:
            rules.new_game(rosters, scene)
        assert str(e.value).startswith(words), str(e.value)

"""Stop The Truck!'s numbers and tables, each with the part of the rulebook it comes from.

The rulebook (stop-the-truck.txt) is typed rules followed by OCR of hand-written
sheets.  Several tables are in both, with different numbers: the typed text's
version is `TYPED`, the sheet's `SHEET`, and the option `tables` picks one.  The
vehicles' own numbers (skills, structure, gear boxes, ram modifiers, collision
charts) live in the data files `data/stop_the_truck/*.toml`, one per vehicle,
each saying which numbers are the rulebook's and which are reconstructed.
"""

from __future__ import annotations

import re


def part_words(part: str) -> str:
    """A part of the truck as players say it: "bomber1" is "petrol bomber 1", "tyre_left" "the
    truck's left tyres", "gunner" "the crossbowman", "max" "Max"."""
    if part.startswith("bomber"):
        return f"petrol bomber {part[len('bomber'):]}"
    if part.startswith("tyre_"):
        return f"the truck's {part[len('tyre_'):]} tyres"
    return {"gunner": "the crossbowman", "max": "Max"}.get(part, re.sub(r"(?<=[a-z])(?=\d)", " ", part.replace("_", " ")))

from dataclasses import dataclass

RULEBOOK = "stop-the-truck.txt"
DIE = "d10"

# "Concept and Board Layout": "a board of 12 squares long by 9 squares wide"; "The truck
# begins the game occupying the central 4 squares of the board."
BOARD_COLUMNS = 12            # along the direction of travel
BOARD_ROWS = 9                # across it
TRUCK_SQUARES = 4             # "The truck as a column of four squares"
TRUCK_FRONT_COLUMN = 7        # columns 4-7 (0-based) are the central four of twelve; the cab's square 1 is 7
TRUCK_START_ROW = 4           # the central row of nine
CAB_SQUARES = (1, 2)          # "the cab part of the truck (the front two squares)"
TANKER_SQUARES = (3, 4)       # the Blue Slasher note: "the tanker section (squares 3 and 4)"
MAX_SQUARE = 2                # "Max - Occupies the second square of the truck"
DISTANCE_SQUARES = 100        # "the allotted distance, usually 100 squares"
TOP_GEAR_FREE_TURNS = 4       # "Moves in top gear - These are limited to four turns"
TOP_GEAR_DAMAGE = 2           # "the truck takes two points of structural damage"
ELIMINATION_REGAIN = 2        # "Optional rule ... the truck regains two structural points"
MAX_DAMAGE_BONUS = 2          # "Max - Adds +2 to damage rolls when hits from shooting (shotgun)"
HARPOON_DAMAGE_BONUS = 1      # "The Harpoon Van - ... Harpoon adds +1 to damage dice roll."
BLUE_SKILL_FACTOR = 2         # truck sheet: "BLUE ACTION roll equal or less than twice drivers skill"
CHART_LOW, CHART_HIGH = -2, 12   # the collision charts' rows
TABLE_HIGH = 11               # the damage tables' "11" row (rolls of 11 and more, the sheet's "11+")

# "Concept and Board Layout" and the move sequences' box colours: green and yellow boxes
# need no roll; "Some boxes are coloured RED and these require a driving roll"; blue boxes
# a roll against twice the skill (truck sheet).
COLOURS = {"G": "green", "Y": "yellow", "B": "blue", "R": "red"}

#: "TURN SEQUENCE", step 4, "Move cars in order" (lightest first): each template's `order`.
MOVE_ORDER = ("open_dirt_buggy", "bike", "stock_car", "light_trike", "green_mesh_buggy", "green_stopper", "jeep",
              "harpoon_van", "blue_slasher", "auto_gyro", "plated_wrecker", "the_wagon")


@dataclass(frozen=True)
class Row:
    """One line of a damage or effect table: what it takes off, and what else it does."""

    text: str
    structure: int = 0          # structural points off the vehicle (the truck's, for crew and tyre tables)
    driver: int = 0             # off the driver skill (Max's track for the Max table)
    shooting: int = 0           # off the shooting skill
    crew: int = 0               # off a crew member's track (bomber, gunner, harpoonist)
    red_roll: bool = False      # "make RED driving roll now"
    weapon_lost: bool = False   # "Hand weapon destroyed (no shooting)" / "Shotgun destroyed"
    burst: bool = False         # a tyre bursts
    dead: bool = False          # the crew member (or the bike's rider) is dead
    roll_twice: bool = False
    special: str = ""           # a named effect the rules apply (the RED, BLUE and snake tables)


def _both(s: int, k: int, text: str, **kw) -> Row:
    return Row(text, structure=s, driver=k, shooting=k, **kw)


# "Damage / shooting tables", "At vehicles" (typed) and the sheet's "AT CARS" column.
VEHICLE_TYPED = {
    1: Row("hit vehicle, no effect"),
    2: _both(1, 0, "1 point of structural damage"),
    3: _both(1, 0, "1 point of structural damage"),
    4: _both(1, 1, "1 point of structural damage, 1 point off driving and shooting skills"),
    5: _both(2, 1, "2 points of structural damage, 1 point off driving and shooting skills"),
    6: _both(3, 1, "3 points of structural damage, 1 point off driving and shooting skills"),
    7: _both(4, 2, "4 points of structural damage, 2 points off driving and shooting skills"),
    8: _both(1, 1, "1 point of structural damage, 1 point off driving and shooting skills, RED driving roll now",
             red_roll=True),
    9: _both(2, 2, "2 points of structural damage, 2 points off driving and shooting skills, RED driving roll now",
             red_roll=True),
    10: Row("hand weapon destroyed (no shooting), 3 points off driving and shooting skills", driver=3, shooting=3,
            weapon_lost=True),
    11: Row("roll twice", roll_twice=True),
}
# The sheet's "AT CARS" takes the points off the driver ("+1 to Driver"), not both skills.
VEHICLE_SHEET = {
    1: Row("no effect"),
    2: Row("1 point structure", structure=1),
    3: Row("1 point structure", structure=1),
    4: Row("1 point structure, 1 point to driver", structure=1, driver=1),
    5: Row("2 points structure, 1 point to driver", structure=2, driver=1),
    6: Row("3 points structure, 1 point to driver", structure=3, driver=1),
    7: Row("4 points structure, 2 points to driver", structure=4, driver=2),
    8: Row("1 point structure, 1 point to driver, red driving roll", structure=1, driver=1, red_roll=True),
    9: Row("2 points structure, 2 points to driver, red driving roll", structure=2, driver=2, red_roll=True),
    10: Row("hand weapon destroyed, 3 points to driver", driver=3, weapon_lost=True),
    11: Row("roll twice", roll_twice=True),
}

# "At petrol bombers / crossbowman / harpoon van harpoonist" (typed) and the sheet's
# "AT PETROL BOMBER OR GUNNER" column (its 2 is "hit truck, no effect" too).
CREW_TYPED = {1: Row("hit truck, no effect"), 2: Row("1 point of damage", crew=1), 3: Row("1 point of damage", crew=1),
              4: Row("1 point of damage", crew=1), 5: Row("2 points of damage", crew=2),
              6: Row("2 points of damage", crew=2), 7: Row("2 points of damage", crew=2),
              8: Row("3 points of damage", crew=3), 9: Row("4 points of damage", crew=4),
              10: Row("5 points of damage", crew=5), 11: Row("dead", dead=True)}
CREW_SHEET = {1: Row("hit truck etc."), 2: Row("hit truck etc., no effect"), 3: Row("1 point of damage", crew=1),
              4: Row("1 point of damage", crew=1), 5: Row("1 point of damage", crew=1),
              6: Row("2 points of damage", crew=2), 7: Row("2 points of damage", crew=2),
              8: Row("3 points of damage", crew=3), 9: Row("4 points of damage", crew=4),
              10: Row("5 points of damage", crew=5), 11: Row("dead", dead=True)}

# "At tyres" (typed) and the sheet's "AT TYRES" column: the truck's structure takes the points.
TYRES_TYPED = {**{f: Row("no effect") for f in range(1, 6)}, 6: Row("burst", burst=True), 7: Row("burst", burst=True),
               8: Row("burst, +1 structural damage to truck", burst=True, structure=1),
               9: Row("burst, +1 structural damage to truck", burst=True, structure=1),
               10: Row("burst, +1 structural damage to truck", burst=True, structure=1),
               11: Row("burst, +2 structural damage to truck", burst=True, structure=2)}
TYRES_SHEET = {**{f: Row("no effect") for f in range(1, 6)}, 6: Row("burst", burst=True), 7: Row("burst", burst=True),
               8: Row("burst", burst=True),
               9: Row("burst, +1 structural damage", burst=True, structure=1),
               10: Row("burst, +1 structural damage", burst=True, structure=1),
               11: Row("burst, +2 structural damage", burst=True, structure=2)}

# "At Max" (typed; the sheet's "AT MAX" column says the same): structure is the truck's,
# the `driver` points come off Max's track.
MAX_TABLE = {
    1: Row("hit truck, no effect"),
    2: Row("1 point of structural damage", structure=1),
    3: Row("1 point of structural damage", structure=1),
    4: Row("1 point of structural damage, 1 point off Max", structure=1, driver=1),
    5: Row("2 points of structural damage, 1 point off Max", structure=2, driver=1),
    6: Row("3 points of structural damage, 1 point off Max", structure=3, driver=1),
    7: Row("4 points of structural damage, 2 points off Max", structure=4, driver=2),
    8: Row("1 point of structural damage, 1 point off Max, RED driving roll now", structure=1, driver=1, red_roll=True),
    9: Row("1 point of structural damage, 1 point off Max, RED driving roll now", structure=1, driver=1, red_roll=True),
    10: Row("shotgun destroyed (no shooting), 3 points off Max", driver=3, weapon_lost=True),
    11: Row("roll twice", roll_twice=True),
}

# "At the bike" (typed) and the sheet's "AT BIKE" column.
BIKE_TYPED = {
    1: Row("1 point structural damage", structure=1), 2: Row("1 point of structural damage", structure=1),
    3: Row("2 points of structural damage", structure=2),
    4: _both(2, 1, "2 points of structural damage, 1 off driving and shooting skills"),
    5: _both(2, 2, "2 points of structural damage, 2 off driving and shooting skills"),
    6: _both(3, 2, "3 points of structural damage, 2 off driving and shooting skills, RED driving roll", red_roll=True),
    7: _both(4, 2, "4 points of structural damage, 2 off driving and shooting skills, RED driving roll", red_roll=True),
    8: Row("dead", dead=True), 9: Row("dead", dead=True), 10: Row("dead", dead=True), 11: Row("dead", dead=True),
}
BIKE_SHEET = {
    1: Row("1 point damage", structure=1), 2: Row("1 point damage", structure=1), 3: Row("2 points damage", structure=2),
    4: Row("3 points damage", structure=3), 5: Row("4 points damage", structure=4), 6: Row("5 points damage", structure=5),
    7: Row("6 points damage, red roll", structure=6, red_roll=True),
    8: Row("7 points damage, red roll", structure=7, red_roll=True),
    9: Row("dead", dead=True), 10: Row("dead", dead=True), 11: Row("dead", dead=True),
}

# "Petrol bomb hit effects" (typed) and the sheet's "PETROL BOMB CHART" (points to the driver only).
BOMB_TYPED = {
    1: Row("goes off in hand, 1d10/2 to the petrol bomber", special="in_hand"),
    2: Row("1 point of structural damage", structure=1),
    3: Row("2 points of structural damage", structure=2),
    4: _both(3, 1, "3 points of structural damage, 1 point off driving and shooting skills"),
    5: _both(3, 1, "3 points of structural damage, 1 point off driving and shooting skills"),
    6: _both(4, 1, "4 points of structural damage, 1 point off driving and shooting skills"),
    7: _both(4, 1, "4 points of structural damage, 1 point off driving and shooting skills"),
    8: _both(5, 2, "5 points of structural damage, 2 points off driving and shooting skills"),
    9: _both(6, 2, "6 points of structural damage, 2 points off driving and shooting skills"),
    10: Row("no explosion"),
}
BOMB_SHEET = {
    # The sheet's number reads "196 ple to bomber" in the OCR: the companion takes the typed 1d10/2.
    1: Row("early explosion, points to the bomber (the sheet's number is not legible: the typed 1d10/2)",
           special="in_hand"),
    2: Row("1 point structure, 1 point to driver", structure=1, driver=1),
    3: Row("2 points structure, 2 points to driver", structure=2, driver=2),
    4: Row("3 points structure, 2 points to driver", structure=3, driver=2),
    5: Row("3 points structure, 3 points to driver", structure=3, driver=3),
    6: Row("4 points structure, 3 points to driver", structure=4, driver=3),
    7: Row("4 points structure, 4 points to driver", structure=4, driver=4),
    8: Row("6 points structure, 5 points to driver", structure=6, driver=5),
    9: Row("6 points structure, 6 points to driver", structure=6, driver=6),
    10: Row("no explosion"),
}

# "Failing a RED driving roll" (typed) and the sheet's "RED ROLL".
RED_TYPED = {
    1: Row("hit pothole, 1 point of structural damage", structure=1),
    2: _both(0, 1, "driver hit by stone, 1 point off driving and shooting skills"),
    3: Row("binding brakes, no top gear", special="no_top_gear"),
    4: Row("steering problem, do only yellow actions", special="only_yellow"),
    5: Row("engine fire, take 1d10/2 structural damage", special="fire_d10_half"),
    6: Row("clutch failure, stuck in current gear for rest of game", special="stuck_gear"),
    7: Row("hit kangaroo, take 1d10 damage points", special="kangaroo"),
    8: Row("lose a gear", special="lose_gear"),
    9: Row("roll twice on this table", roll_twice=True),
    10: Row("big accident: roll driver skill or less to come out of the wreck alive", special="big_accident"),
}
RED_SHEET = {
    1: Row("steering problems, add 2 to die rolls on red actions", special="red_plus_2"),
    2: Row("hit pothole, 1 point structural damage to car", structure=1),
    3: Row("hit by stone, 1 point damage to driver", driver=1),
    4: Row("cracked chassis: no red, blue counts as red, top green as blue", special="cracked_chassis"),
    5: Row("no brakes, no emergency stop", special="no_brakes"),
    6: Row("clutch failure, stuck in present gear for rest of game", special="stuck_gear"),
    7: Row("binding brakes, no top gear", special="no_top_gear"),
    8: Row("engine fire, do only green, goes out in 2 goes", special="fire_green"),
    9: Row("roll twice on this table", roll_twice=True),
    10: Row("blown it: roll less than the driver's skill to come out of the wreck", special="blown_it"),
}

# The sheet's "BLUE ROLL" (the typed rules have no blue table).
BLUE_TABLE = {
    1: Row("miss gear: one gear lower next go", special="gear_down_next"),
    2: Row("dust in eyes: straight next go, no shooting", special="dust"),
    3: Row("under steer: one square away from straight", special="understeer"),
    4: Row("over steer: one square towards straight", special="oversteer"),
    5: Row("steering link problem: add one to die rolls on red actions", special="red_plus_1"),
    6: Row("loss of one gear (may jump past)", special="lose_gear"),
    7: Row("tyre problem: always steers 1 square left of desired", special="pull_left"),
    8: Row("tyre problem: always steers 1 square right of desired", special="pull_right"),
    9: Row("fuel blockage: no top square speed in any gear", special="no_top_speed"),
    10: Row("roll on the red table", special="red_table"),
}

# "The AutoGyro" (typed snake table) and "Snakes:-" (the sheet's, with its waking and sleeping).
SNAKE_TYPED = {
    1: Row("snake does nothing"),
    2: Row("driver distracted, pick yellow move this turn", special="only_yellow_turn"),
    3: Row("driver distracted, pick yellow this turn, no shooting", special="only_yellow_turn,no_shooting"),
    4: Row("driver distracted, pick straight action this turn", special="straight_turn"),
    5: Row("driver distracted, pick straight action this turn, no shooting", special="straight_turn,no_shooting"),
    6: _both(0, 1, "snake bites driver, 1 point off driving and shooting skills"),
    7: _both(0, 1, "snake bites driver, 1 point off driving and shooting skills, must pick RED action",
             special="must_red"),
    8: _both(0, 2, "snake bites driver, 2 points off driving and shooting skills, no shooting this turn",
             special="no_shooting"),
    9: _both(0, 2, "snake bites driver, 2 points off driving and shooting skills"),
    10: Row("snake falls out of vehicle, snake threat over", special="snake_gone"),
}
SNAKE_SHEET = {
    1: Row("snake does nothing"),
    2: Row("snake distracts driver, must do green this turn", special="only_green_turn"),
    3: Row("snake distracts driver, must do green, no shooting this turn", special="only_green_turn,no_shooting"),
    4: Row("do straight this go", special="straight_turn"),
    5: Row("do straight this go, no shooting", special="straight_turn,no_shooting"),
    6: Row("driver startled, must do a blue manoeuvre this go", special="must_blue"),
    7: Row("driver startled, must do a blue manoeuvre this go, no shooting", special="must_blue,no_shooting"),
    # 8 is 6 with "red" for "blue" (its ditto marks); unlike 7 it writes no "no shooting".
    8: Row("driver startled, must do a red manoeuvre this go", special="must_red"),
    9: Row("snake does nothing this go but stays active for two more turns", special="snake_two_more"),
    10: Row("snake bites driver, 2 points of damage, red driving roll at the new ability", driver=2, red_roll=True),
}
# "Snakes:-": "roll on following table for two turns ... After two turns ... goes to sleep if
# not destroyed or ejected. It will wake up on a roll of 1 on a d10 ... and then be active for
# two turns."
SNAKE_ACTIVE_TURNS = 2
SNAKE_WAKES_ON = 1

TABLES = {
    "typed": {"vehicle": VEHICLE_TYPED, "crew": CREW_TYPED, "tyres": TYRES_TYPED, "max": MAX_TABLE,
              "bike": BIKE_TYPED, "bomb": BOMB_TYPED, "red": RED_TYPED},
    "sheet": {"vehicle": VEHICLE_SHEET, "crew": CREW_SHEET, "tyres": TYRES_SHEET, "max": MAX_TABLE,
              "bike": BIKE_SHEET, "bomb": BOMB_SHEET, "red": RED_SHEET},
}
TABLE_SECTIONS = {
    "typed": {"vehicle": "At vehicles", "crew": "At petrol bombers / crossbowman / harpoon van harpoonist",
              "tyres": "At tyres", "max": "At Max", "bike": "At the bike", "bomb": "Petrol bomb hit effects",
              "red": "Failing a RED driving roll"},
    "sheet": {"vehicle": "sheet, AT CARS", "crew": "sheet, AT PETROL BOMBER OR GUNNER", "tyres": "sheet, AT TYRES",
              "max": "sheet, AT MAX", "bike": "sheet, AT BIKE", "bomb": "sheet, PETROL BOMB CHART",
              "red": "sheet, RED ROLL"},
}

# The collision charts (the sheets after "Rules and Turn Sequence"): the final score's row
# gives (whose damage, structural points, driver skill off).  "Any red value is damage to
# self, and green value is damage to the victim."  Scores below -2 read as -2, above 12 as 12.
CHARTS = {
    # The chart on the sheet before "Car No 11 Auto-gyro" (with "Front ram +1 Side ram +0
    # Rear ram +0"): 5 is no damage.
    "standard": {12: ("victim", 6, 2), 11: ("victim", 5, 1), 10: ("victim", 5, 1), 9: ("victim", 4, 1),
                 8: ("victim", 3, 1), 7: ("victim", 2, 0), 6: ("victim", 1, 0), 5: (None, 0, 0),
                 4: ("self", 1, 0), 3: ("self", 2, 0), 2: ("self", 3, 1), 1: ("self", 4, 1), 0: ("self", 5, 1),
                 -1: ("self", 6, 2), -2: ("self", 7, 2)},
    # The chart on "Car No.12 Plated wrecker" (and the sheet after it): 4 is no damage.
    "heavy": {12: ("victim", 8, 2), 11: ("victim", 7, 2), 10: ("victim", 6, 2), 9: ("victim", 5, 1),
              8: ("victim", 4, 1), 7: ("victim", 3, 1), 6: ("victim", 2, 0), 5: ("victim", 1, 0), 4: (None, 0, 0),
              3: ("self", 1, 0), 2: ("self", 2, 0), 1: ("self", 3, 1), 0: ("self", 4, 1), -1: ("self", 5, 1),
              -2: ("self", 6, 2)},
}

ARCS = {
    # "Most vehicles can only shoot out of the forward 180deg arc (bike and trike can shoot
    # 45deg backwards, harpoon van 360deg)"; the truck's crossbowman shoots "in the rear 180deg arc".
    "front": "the forward 180 degrees",
    "front_back_45": "the forward 180 degrees and 45 degrees backwards",
    "all_round": "360 degrees",
    "rear": "the rear 180 degrees",
    "none": "no shooting",
}

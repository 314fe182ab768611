"""Shattered Highways v0.3.8: every number of its vehicles, weapons, add-ons,
warriors and actions, once, with the section of
`shattered-highways-0.3.8.txt` it comes from."""

from __future__ import annotations

from dataclasses import dataclass

RULEBOOK = "shattered-highways-0.3.8.txt"

# --- "Move Template" -------------------------------------------------------------
SECTION_IN = 3.0                 # "three 3" sections"
TEMPLATE_LENGTH_IN = 9.0         # "a 4"x 9" rectangle"
RIG_TEMPLATE_LENGTH_IN = 6.0     # "Move": rigs "4" W x 6" L"
BOARD_RANGE_IN = 1.0             # "Board": "within 1" of their vehicle"


@dataclass(frozen=True)
class VehicleClass:
    """A class from "Vehicles": creation points, hit points per part, seats, weapons,
    and its ram damage bonus (+) or penalty (-) against other classes."""

    name: str
    creation_points: int
    hit_points: dict[str, int]
    seats: int
    weapons: int
    max_weapons: int
    free_addons: int
    ram_bonus: dict[str, int]
    template_length_in: float = TEMPLATE_LENGTH_IN


# "Vehicles": Buggies, Cars, Trucks, Rigs.
CLASSES: dict[str, VehicleClass] = {
    "buggy": VehicleClass("buggy", 15, {"body": 15}, 2, 0, 1, 0, {"truck": -1, "rig": -1}),
    "car": VehicleClass("car", 25, {"body": 25}, 3, 1, 1, 0, {}),
    # "Mounted Weapons 1 (upgradable to 2 weapons) + 1 addon"
    "truck": VehicleClass("truck", 35, {"body": 35}, 4, 1, 2, 1, {"car": 1, "buggy": 1}),
    # "Hit Points: 25 cab / 25 chassis", "Seating Positions: 6 (2 on Tractor, 4 on Trailer)"
    "rig": VehicleClass("rig", 50, {"tractor": 25, "trailer": 25}, 6, 2, 4, 0, {"car": 1, "buggy": 1},
                        RIG_TEMPLATE_LENGTH_IN),
}
RIG_TRACTOR_SEATS = 2

# --- "Vehicle Weapons" ------------------------------------------------------------
WEAPON_CP = 5                    # "Default mounted weapon cost: 5 creation points."
MACHINE_GUN_RANGE_IN = 2 * SECTION_IN   # "2 template sections length range(6") from edge of vehicle"
MACHINE_GUN_DAMAGE = ("d6", 2)   # "1d6 +2 damage"

# --- "Vehicle Add-ons" ---------------------------------------------------------------
ARMOR_CP_PER_SECTION = 1         # "Armor 1CP per section"
ARMOR_REDUCTION = 1              # "reduces damage by 1 point"
DRAG_CHAINS_CP = 1               # "Drag Chains 1CP"
DRAG_CHAINS_LENGTH_IN = SECTION_IN   # "overlaps a 1 template section directly behind"
DRAG_CHAINS_WIDTH_IN = 4.0           # a "template section" is "a 3"x4" box" ("Terms")
DRAG_CHAINS_PENALTY = -1
HIDDEN_BUGGY_CP = 15             # "Hidden Buggy 15CP" (rig only)
REINFORCEMENTS_CP = 4            # "Reinforcements: 4CP: 4 spare cannon fodder"
REINFORCEMENTS = 4
ADDON_COSTS = {"armor": ARMOR_CP_PER_SECTION, "drag_chains": DRAG_CHAINS_CP,
               "hidden_buggy": HIDDEN_BUGGY_CP, "reinforcements": REINFORCEMENTS_CP}
RIG_ONLY_ADDONS = {"hidden_buggy", "reinforcements"}
ARMOR_SECTIONS = ("front", "rear", "left", "right")

# --- "Warriors" ------------------------------------------------------------------------
FODDER_SKILL = "d6"              # "Cannon Fodder": "Skill: 1d6"
FODDER_TENACITY = 4              # "Tenacity: 4"
FODDER_MELEE = ("d6", 0)         # "Melee Weapon ... 1d6 damage"
HERO_SKILL = "d10"               # "Heroes": "Skill: 1d10"
HERO_TENACITY_DICE = ("d6", "d6")   # "Tenacity: 2d6"
HERO_RANGED = ("d6", 1)          # "1d6+1 damage"
HERO_RANGE_IN = SECTION_IN       # "1 template length(3") range"

# --- the actions' rolls --------------------------------------------------------------
FUMBLE = 1                       # a natural 1: Lost Control ("Move", "Nudge", "Ram"), a jam ("Shoot", "Attack"),
                                 # a fall ("Board", "Cling")
HOLD_ON = 2                      # "On 2-3": stay put ("Board"), hang on without acting ("Cling")
SIX_OR_MORE = 6                  # "Vehicle Weapons": "on a 6+ Shoot roll, it targets both"
MOVE_SUCCESS = 3                 # "Move": "On 3+ the Move succeeds", "On 2 they fail", "On a 1 ... Lost Control"
BOARD_SUCCESS = 4                # "Board": "On 4+", "On 2-3 they stay", "On 1 they fall"
CLING_SUCCESS = 4                # "Cling": "On 4+ ... act at a -1", "On 2-3 ... hang on", "On 1 they fall off"
CLING_ACTION_PENALTY = -1
CHANGE_PENALTY = -1              # "Change": "another action at a -1"; also "Driver Actions": a warrior
                                 # who Changes into the driver's seat takes over "at a -1" (the same -1)
SHOOT_HIT = 4                    # "Shoot": "On 4+ they hit", "On 2-3 they miss", "On 1 their weapon jams"
SHOOT_RIG_PART_PENALTY = -1      # "target the tractor or trailer ... at a -1 to hit"
SHOOT_WARRIOR_BONUS_VEHICLE = ("d6", -1)   # Aiming at Warriors: "also do 1d6-1 bonus damage to the vehicle"
SHOOT_VEHICLE_BONUS_WARRIOR = ("d6", 0)    # Aiming at a Vehicle: "a bonus 1d6 damage to one warrior"
NUDGE_DAMAGE = 1                 # "Nudge": "Both vehicles take 1 damage point"
NUDGE_MAX_SECTIONS = 3           # "on 3+, three sections"
NUDGED_INTO_DAMAGE = 1           # "If they fail they take 1 damage and are moved in a one template section"
RAM_DAMAGE_DIE = "d6"            # "Ram": "The Defender takes 1d6 of damage. On a 6, reroll once and add"
RAM_REROLL_ON = 6
RAM_ATTACKER_MAX = 3             # "half of dice damage rounded down, to a maximum of 3"
RAM_AUTO_DAMAGE = 25             # "the Attacker does 25 points of damage automatically & takes 3"
RAM_AUTO_ATTACKER_DAMAGE = 3
LOST_CONTROL_RAM_PENALTY = -1    # "Lost Control": "If it encounters another vehicle, it Rams it at a -1"
UNMANNED_BACK_IN = SECTION_IN    # "moves back 1 template section length in a straight line"
UNMANNED_RAM_PENALTY = -1        # "that vehicle Rams the unoccupied vehicle at a -1"
UNMANNED_LOST_CONTROL_MAX = 3    # "on 1-3 the unmanned vehicle has Lost Control"
DESTROYED_BOARD_PENALTY = -1     # "Destroyed!": "a Board roll at -1"
WRECK_DAMAGE_DIE = "d6"          # "Vehicles that fail the Move take 1d6 hit points"
HIDDEN_BUGGY_DESTROYED_PENALTY = -1   # "the buggy driver can attempt to deploy it at a -1"


# --- the templates and gauges players lay on the table (RuleSystem.templates) -------------
TEMPLATES = (
    dict(name="Move template", shape="rect", length_in=TEMPLATE_LENGTH_IN, width_in=4.0,
         marks_in=(SECTION_IN, 2 * SECTION_IN), rule=f'{RULEBOOK}, "Things you will need to make or modify"',
         quote='a 4"x 9" rectangle ... three 3" sections', use="held over a car for every move"),
    dict(name="Rig move box", shape="rect", length_in=RIG_TEMPLATE_LENGTH_IN, width_in=4.0,
         marks_in=(SECTION_IN,), rule=f'{RULEBOOK}, "Move"', quote='a 2x2 template section box (4" W x 6" L)',
         use="where a rig's front bumper may end its move"),
    dict(name="Machine gun range", shape="gauge", length_in=MACHINE_GUN_RANGE_IN, marks_in=(SECTION_IN,),
         rule=f'{RULEBOOK}, "Vehicle Weapons"', quote='2 template sections length range(6") from edge of vehicle',
         use="a mounted weapon's reach, from the shooter's edge"),
    dict(name="Hero's ranged weapon", shape="gauge", length_in=HERO_RANGE_IN, rule=f'{RULEBOOK}, "Heroes"',
         quote='1 template length(3") range from edge of vehicle', use="a hero's pistol or crossbow, from the edge"),
    dict(name="Boarding range", shape="gauge", length_in=BOARD_RANGE_IN, rule=f'{RULEBOOK}, "Board"',
         quote='within 1" of their vehicle', use="how near a vehicle must be to board it"),
    dict(name="Drag chains strip", shape="rect", length_in=DRAG_CHAINS_LENGTH_IN, width_in=DRAG_CHAINS_WIDTH_IN,
         rule=f'{RULEBOOK}, "Vehicle Add-ons"', quote='overlaps a 1 template section directly behind',
         use="the section behind a car with drag chains"),
)

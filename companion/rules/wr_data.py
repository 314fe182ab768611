"""Wasteland Rally's numbers, each with the section it comes from.

Wasteland Rally (wasteland-rally.txt) is a module for Open Fire v0.3
(open-fire-0.3-core-rules.md) with its vehicles expansion
(open-fire-0.3-expansion-vehicles.md).  Distances are in inches here, as the
books give them; the rules turn them into millimetres.
"""

from __future__ import annotations

from dataclasses import dataclass

RULEBOOK = "wasteland-rally.txt"
CORE = "open-fire-0.3-core-rules.md"
VEHICLES = "open-fire-0.3-expansion-vehicles.md"

DIE = "d12"                                  # CORE, "Dice"
AUTO_FAIL, AUTO_PASS = 1, 12                 # CORE, "Attribute Rolls"


@dataclass(frozen=True)
class VehicleType:
    name: str
    move_in: int
    skill: int
    defence: int
    command: int
    hit_points: int
    special: tuple[str, ...]
    points: int


# RULEBOOK, "Vehicle Types"
VEHICLE_TYPES = {
    "car": VehicleType("Car", 10, 9, 5, 6, 10, (), 10),
    "hotrod": VehicleType("Hotrod", 11, 9, 5, 6, 10, ("Fast",), 11),
    "sports_car": VehicleType("Sports Car", 12, 9, 5, 6, 9, ("Fast",), 11),
    "buggy": VehicleType("Buggy", 9, 8, 6, 6, 8, ("Rugged",), 9),
    "truck": VehicleType("Truck", 9, 9, 4, 6, 12, ("Rugged",), 13),
}


@dataclass(frozen=True)
class WeaponType:
    name: str
    category: str                 # "ranged", "melee", "dropped"
    range_in: int
    attacks: int
    damage: int | None            # None: "-" (no damage; droppers that only obstruct)
    piercing: int | None
    special: tuple[str, ...]
    points: int
    section: str


def _w(name, cat, rng, att, dmg, prc, special, pts, section):
    return WeaponType(name, cat, rng, att, dmg, prc, tuple(special), pts, section)


# RULEBOOK, "Weapon Upgrades": the ranged, melee and dropped weapon tables.
WEAPONS = {
    "light_machine_gun": _w("Light Machine Gun", "ranged", 12, 2, 1, 0, (), 1, "Ranged Weapons"),
    "twin_light_machine_guns": _w("Twin Light Machine Guns", "ranged", 12, 3, 1, 0, ("Rapid Fire",), 2, "Ranged Weapons"),
    "heavy_machine_gun": _w("Heavy Machine Gun", "ranged", 16, 2, 2, 1, (), 2, "Ranged Weapons"),
    "twin_heavy_machine_guns": _w("Twin Heavy Machine Guns", "ranged", 16, 3, 2, 1, ("Rapid Fire",), 3, "Ranged Weapons"),
    "minigun": _w("Minigun", "ranged", 18, 4, 2, 1, ("Torrent",), 4, "Ranged Weapons"),
    "rocket_launcher": _w("Rocket Launcher", "ranged", 18, 3, 3, 2, ("Suppression", "Blast"), 6, "Ranged Weapons"),
    "flamethrower": _w("Flamethrower", "ranged", 8, 8, 1, 0, ("Torrent",), 3, "Ranged Weapons"),
    "driver_pistol": _w("Driver Pistol", "melee", 6, 2, 1, 0, ("Melee",), 1, "Melee Weapons"),
    "spiked_ram": _w("Spiked Ram", "melee", 1, 2, 2, 2, ("Melee",), 2, "Melee Weapons"),
    "spiked_wheels": _w("Spiked Wheels", "melee", 1, 2, 1, 1, ("Melee", "Side Arc"), 2, "Melee Weapons"),
    "wrecker_arm": _w("Wrecker Arm", "melee", 1, 2, 3, 2, ("Melee", "Unwieldy", "Obstructing"), 3, "Melee Weapons"),
    "smoke_dropper": _w("Smoke Dropper", "dropped", 5, 1, None, None, ("Dropper", "Obstructing"), 1, "Dropped Weapons"),
    "oil_dropper": _w("Oil Dropper", "dropped", 3, 2, None, None, ("Dropper", "Obstructing"), 1, "Dropped Weapons"),
    "spike_dropper": _w("Spike Dropper", "dropped", 3, 2, 1, 0, ("Dropper", "Obstructing"), 2, "Dropped Weapons"),
}

# RULEBOOK, "Weapon Modifications"
MODIFICATIONS = {
    "improved_sights": 2,     # gains Accurate and Rending (1)
    "inferno_ammo": 2,        # damage +1, not for a flamethrower
    "armour_piercing": 2,     # piercing +1, not for a flamethrower
    "stabilised": 1,          # range +6"
    "turret_mount": 1,        # other arcs, -1 to the skill roll there
}
NOT_FOR_FLAMETHROWER = ("inferno_ammo", "armour_piercing")
#: "weapons which cost 4 or more points pay an additional point to be modified"
COSTLY_WEAPON_POINTS = 4
COSTLY_MODIFICATION_SURCHARGE = 1
STABILISED_RANGE_IN = 6
TURRET_OFF_FRONT_PENALTY = -1

# RULEBOOK, "Vehicle Upgrades" (at most 4 points of them on a vehicle)
VEHICLE_UPGRADES = {"tank_tracks": 3, "reinforced_armour": 2, "boost": 2, "sturdy": 2}
VEHICLE_UPGRADE_CAP = 4
TANK_TRACKS_MOVE_IN = -2
BOOST_IN = 9
STURDY_HP = 2

# RULEBOOK, "Driver Upgrades" (one per vehicle)
DRIVER_UPGRADES = {"marksman": 2, "skilled_driver": 1, "reckless": 1}
MARKSMAN_SKILL = 7
SKILLED_DRIVER_COMMAND = 4
RECKLESS_PENALTY = -3

# RULEBOOK, "One-Off Game"
GAME_SIZES = {"small": ((3, 5), 50), "medium": ((6, 8), 100), "large": ((8, 10), 150)}

# VEHICLES, "Vehicle Movement" and "Vehicle Restrictions"; CORE, "Advance Moves"
MANOEUVRE_DEG = 45.0
EXTRA_MANOEUVRE_IN = 2
ADVANCE_IN, FAST_ADVANCE_IN = 6, 9
ADVANCE_SKILL_PENALTY = -4
ADVANCE_MAX_MANOEUVRES = 1
DAMAGED_MOVE_PENALTY_IN = -2          # lost more than half its hit points
DAMAGED_ROLL_PENALTY = -1

# CORE, "Assault Range", "Assault Weapons", "Stress"; weapon special rules
ASSAULT_RANGE_IN = 1
ASSAULT_PENALTY = -4
ACCURATE_BONUS = 2
UNWIELDY_PENALTY = -2
OBSCURED_DEFENCE_BONUS = 4
MAX_STRESS = 3
DEFAULT_ROUNDS = 6                   # CORE, "Ending the Game"

# CORE, "Barrier": the cost of moving across one
BARRIER_IN = 1

# RULEBOOK, "Losing Control", "Exploding Terrain"
LOSE_CONTROL_MOVE_IN = 1
LOSE_CONTROL_TURN_DEG = 45.0
LOSE_CONTROL_DAMAGE = 1
EXPLODE_ON = 9
EXPLOSION_RADIUS_IN = 4
EXPLOSION_DAMAGE = 3
TOUCHING_EXPLOSION_TESTS = 2

# RULEBOOK, "Objective Gates", mission deployment
GATE_WIDTH_IN = (8, 10)
DEPLOY_SPACING_IN = 2

# RULEBOOK, "Campaigns"
CAMPAIGN_VEHICLES = (8, 10)
CAMPAIGN_POINTS = 100
CAMPAIGN_POOL_KEEP = 10
DESTROYED_RECOVERED_ON = 10          # 1-9 scrap for the roll, 10-12 recovered
DAMAGED_SAVE_ON = 10                 # 1-9 repair for the roll, 10-12 save for 5 or scrap for 5
DAMAGED_SAVE_COST = 5
CAMPAIGN_MISSIONS = ((1, 3, "two_lap_race"), (4, 6, "arena_race"), (7, 9, "elimination_race"),
                     (10, 12, "battle_royale"))

MISSIONS = ("two_lap_race", "arena_race", "elimination_race", "battle_royale", "scavengers", "outrun")


# --- the templates and gauges players lay on the table (RuleSystem.templates) -------------
TEMPLATES = (
    dict(name="Explosion", shape="circle", radius_in=4.0, rule=f'{RULEBOOK}, "Exploding Terrain"',
         quote="every vehicle within 4 inches must take a defence test", use="what exploding terrain hits"),
    dict(name="Losing control", shape="circle", radius_in=1.0, rule=f'{RULEBOOK}, "Losing Control"',
         quote="rotated up to 45 degrees in any direction and moved up to 1 inch",
         use="where a car that lost control may be put"),
    dict(name="Deployment spacing", shape="gauge", length_in=2.0, rule=f'{RULEBOOK}, "Deployment Areas"',
         quote="at least 2 inches away from other vehicles", use="the gap between cars at deployment"),
    dict(name="Boost", shape="gauge", length_in=9.0, rule=f'{RULEBOOK}, "Vehicle Upgrades"',
         quote="moves directly forward 9 inches", use="a boost's move"),
    dict(name="Flamethrower range", shape="gauge", length_in=8.0, rule=f'{RULEBOOK}, "Weapon Upgrades"',
         quote="Flamethrower: range 8", use="a weapon's reach"),
    dict(name="Minigun / rocket launcher range", shape="gauge", length_in=18.0, rule=f'{RULEBOOK}, "Weapon Upgrades"',
         quote="Minigun, Rocket Launcher: range 18", use="a weapon's reach"),
)


# --- the demo table (RuleSystem.demo_scenery), on vision/data/demo_table.toml's 1219.2 x 812.8 mm ---
# A two lap race round the table's middle (RULEBOOK, "Two Lap Race": a closed loop "roughly 60-80
# inches long", the start/finish gate and "a second gate at the furthest point on the track"):
# the loop runs anticlockwise round an island (the bus, a barrier, exploding fuel drums), about
# 82 in along its middle, the start/finish gate across the near straight (driving +x), the far
# checkpoint across the far straight (driving -x), each 8 in wide ("Objective Gates": "roughly
# 8-10 inches"). Slow ground in the east turn, wreckage in the west turn. The gates clear the
# anchors at the middle of the long edges (vision/data/demo_table.toml). Scaled to other tables.
DEMO_TABLE_MM = (1219.2, 812.8)
DEMO_GATES = (
    dict(name="Start/finish", role="start_finish", a_mm=(609.6, 295.8), b_mm=(609.6, 92.6)),
    dict(name="Far checkpoint", role="checkpoint", a_mm=(609.6, 517.0), b_mm=(609.6, 720.2)),
)
#: Kinds as the table file takes them (calibration/tablefile.py TERRAIN_KINDS); a name starting
#: "Barrier" is read as a barrier (the barrier_terrain option), the table file having no such kind.
DEMO_TERRAIN = (
    dict(name="Burnt-out bus", kind="blocking", points=((520.0, 380.0), (700.0, 380.0), (700.0, 435.0), (520.0, 435.0))),
    dict(name="Barrier: concrete blocks", kind="impassable",
         points=((720.0, 398.0), (820.0, 398.0), (820.0, 417.0), (720.0, 417.0))),
    dict(name="Fuel dump", kind="exploding", points=((440.0, 385.0), (485.0, 385.0), (485.0, 430.0), (440.0, 430.0))),
    dict(name="Scrap heap", kind="rough",
         points=((1000.0, 360.0), (1080.0, 350.0), (1100.0, 440.0), (1010.0, 455.0))),
    dict(name="Rusted van", kind="wreckage", points=((140.0, 380.0), (200.0, 380.0), (200.0, 430.0), (140.0, 430.0))),
)

"""Alpha Destructicus: every number of its freaks, vehicles, stunts, hits and
terrain, once, with the section of `alpha-destructicus.txt` it comes from."""

from __future__ import annotations

from dataclasses import dataclass

RULEBOOK = "alpha-destructicus.txt"


def sec(name: str) -> str:
    """A citation: the rulebook and a section."""
    return f'{RULEBOOK}, "{name}"'


# --- "Characters" -------------------------------------------------------------------
FREAKS_PER_PLAYER = 3            # "Each player begins the game with three characters"
SKILL = 3                        # "Skill: 3 (roll this or better ...)"
WALK_IN = 6.0                    # "Movement: 6"
RESILIENCE = 6                   # "Resilience: 6 (... negate a wound by rolling this on D6)"
WOUNDS = 3                       # "Wounds: 3"
OBSESSION_IN = 6.0               # "Vehicle Obsession: ... within 6" of a vehicle"
SPEED_FREAK_IN = 6.0             # "Speed Freak: ... at least 6""
# "Freaks may be represented by any reasonably sized model": no size is given. The board draws a
# freak on foot as a 1 in base round the point his distances are measured from.
FREAK_DRAWN_IN = 1.0

# --- "Vehicles" ------------------------------------------------------------------------
BASE_MOVE_IN = 12.0              # "All vehicles except walkers have a base movement of 12""
REVERSE_IN = 6.0                 # "Vehicles in reverse have a base movement of 6""
WALKER_MOVE_IN = 6.0             # "Walkers have a base movement of 6""
CONCENTRATE_IN = 6.0             # "The Turn": "Concentrate on driving (... extra 6")"
PUSH_IT_IN = 6.0                 # "Stunts": "Push it: adds an extra 6""
BOOSTER_IN = 6.0                 # "Appendix 1": the Dragster's booster, "an extra 6""
TANK_TURN_DEG = 45.0             # "Tanks": "turn up to 45 degrees ... at the cost of 3""
TRUCK_TURN_DEG = 90.0            # "Trucks": "turn up to 90 degrees at the cost of 3""
TURN_COST_IN = 3.0
TRUCK_STRAIGHT_IN = 3.0          # "must move at least 3" after a turn before it may turn again"
#: "Stunts" done at the wheel (Grab Hold is its own action, "grab": it is done on foot).
STUNTS = ("push_it", "panic_turn", "two_wheels", "bail_out")
PANIC_TURN_DEG = 90.0            # "Panic Turn": "up to 90 degrees"
CAVALRY_STUNT_BONUS = 1          # "Cavalry give their rider +1 to all stunt rolls"
BURNING_PENALTY = -1             # "Fire!": "All dice rolls made by the occupants ... are at -1"

ARMOUR_FACINGS = ("front", "side", "back", "top")

#: A pose within this of where the last move left a car is "where it stood" (the camera's doubt,
#: and the table keeping a path pose every 5 mm or 3 deg): a later drive's path is read from there.
SAME_SPOT_MM = 6.0
SAME_SPOT_DEG = 4.0


@dataclass(frozen=True)
class VehicleType:
    """A type from "Vehicles": how it moves and turns, what hit table it uses."""

    name: str
    base_move_in: float
    turn: str                    # "tank" (45 deg for 3"), "truck" (90 deg for 3", 3" between), "free"
    hit_table: str               # "car" (glancing / penetrating) or "bike"
    flies: bool                  # ignores terrain ("Skimmers may also fly over terrain")
    one_armour: bool             # "only 1 armor value all around"
    needs_engine: bool           # jetpacks and cavalry "do not need to be repaired in order to move"
    seats: int | None            # None: as many as fit; bikes are "single occupant"
    ram_penalty: int = 0         # "A bike or cavalry subtracts 2 from its roll"
    stunt_bonus: int = 0


TYPES: dict[str, VehicleType] = {
    "truck": VehicleType("truck", BASE_MOVE_IN, "truck", "car", False, False, True, None),
    "tank": VehicleType("tank", BASE_MOVE_IN, "tank", "car", False, False, True, None),
    "bike": VehicleType("bike", BASE_MOVE_IN, "free", "bike", False, True, True, 1, ram_penalty=-2),
    "small_skimmer": VehicleType("small_skimmer", BASE_MOVE_IN, "free", "bike", True, True, True, None),
    "large_skimmer": VehicleType("large_skimmer", BASE_MOVE_IN, "truck", "car", True, False, True, None),
    "walker": VehicleType("walker", WALKER_MOVE_IN, "free", "car", False, False, True, None),
    "jetpack": VehicleType("jetpack", BASE_MOVE_IN, "free", "bike", True, True, False, 1),
    "cavalry": VehicleType("cavalry", BASE_MOVE_IN, "free", "bike", False, True, False, 1, ram_penalty=-2,
                           stunt_bonus=CAVALRY_STUNT_BONUS),
}

# Appendix 1: Sample Vehicles.  Components: "engine", weapons (strength, range), specials.
SAMPLES: dict[str, dict] = {
    "rhinocerator": {"name": "Rhinocerator", "type": "tank",
                     "armour": {"front": 4, "side": 3, "back": 1, "top": 1},
                     "components": ["engine", {"weapon": "machine guns", "strength": 1, "range_in": 12}]},
    "dragster": {"name": "Dragster", "type": "truck", "armour": {"front": 1, "side": 1, "back": 1, "top": 0},
                 "components": ["engine", "booster"]},
    "king_rhino": {"name": "King Rhino", "type": "truck", "armour": {"front": 3, "side": 2, "back": 1, "top": 2},
                   "components": ["engine", "horns"]},
    "velociraptor": {"name": "Velociraptor", "type": "cavalry", "armour": {},
                     "components": [{"weapon": "claws", "strength": 2, "range_in": 2}]},
    # The appendix prints no armour for Waldo (a small skimmer has "only 1 armor value all around":
    # one value, not given): the option waldo_armour sets it (0 as printed, or 1).
    "waldo": {"name": "Waldo", "type": "small_skimmer", "armour": {},
              "components": [{"weapon": "strafe-o-matic", "strength": 1, "range_in": 12}]},
    "sarge": {"name": "Sarge", "type": "truck", "armour": {"front": 2, "side": 2, "back": 2, "top": 0},
              "components": ["engine", {"weapon": "flamethrower", "strength": 2, "range_in": 6, "ignites": True}]},
    "mister": {"name": "That's MISTER to You", "type": "walker",
               "armour": {"front": 3, "side": 3, "back": 2, "top": 2},
               "components": ["engine", {"weapon": "mister plasma", "strength": 2, "range_in": 12},
                              {"weapon": "mister claw", "strength": 4, "range_in": 2}]},
    "horse": {"name": "Horse", "type": "cavalry", "armour": {}, "components": []},
}
SPECIALS = ("engine", "booster", "horns")
HORNS_RAM_BONUS = 2              # King Rhino: "this vehicle always rolls +2 for winning rams"

# --- "Shooting" ------------------------------------------------------------------------
MISS_FACE = 1                    # "On a natural 1, the shot is a miss."
PENETRATE_FACE = 6               # "On a natural 6, the shot always scores a penetrating hit."

# --- "Ramming" -------------------------------------------------------------------------
RAM_TURN_BONUS = 1               # "The vehicle whose turn it is adds 1."
RAM_ARMOUR_BONUS = 1             # "more armor on the affected side, add 1"
RAM_FAST_IN = 12.0               # "moved more than 12" before ramming, it adds 1"
RAM_FAST_BONUS = 1
RAM_SLOW_IN = 6.0                # "moved less than 6" before ramming, it subtracts 1"
RAM_SLOW_PENALTY = -1
RAM_INERT_PENALTY = -1           # "A piece of terrain or unoccupied vehicle subtracts 1"

# --- "Jacking" -------------------------------------------------------------------------
JACK_HOLDER_BONUS = 1            # "The freak who currently controls the vehicle adds 1"
SURGE_IN = 6.0                   # a tie: "the vehicle surges 6" straight ahead"; bike hits 3-5 too

# --- "Clinging to a Vehicle", "Grab Hold" --------------------------------------------
GRAB_IN = 1.0                    # "within 1""

# --- "Terrain" ---------------------------------------------------------------------------
BUILDING_ARMOUR = 2              # "All buildings have 2 points of armor on every side"
BREACH_HIT_STRENGTH = 2          # "Any vehicles inside at this time take a strength two hit"
BUILDING_GUN_RANGE_IN = 12.0     # "Building Defenses": "range 12", strength 1"
BUILDING_GUN_STRENGTH = 1
RUBBLE_AFTER_BREACHES = 2        # "If more than 1 wall of the building is breached ... rubble"
RUBBLE_COST_FACTOR = 2.0         # "pay 2 inches for every inch it moves in rubble"
LAVA_PENETRATING_HITS = 2        # "Lava": "two penetrating hits and catches fire"
TERRAIN_KINDS = ("building", "rubble", "forest", "lava", "barrier", "fixed", "ramp")
# What a drive's path may not pass through on the ground ("Ramming": "moves into contact with
# another vehicle or a barrier"; a breached building lets it "continue through").
PATH_OBSTACLES = ("building", "barrier", "fixed")
PATH_STEP_MM = 2.0               # a path is checked for contact every 2 mm ...
PATH_STEP_DEG = 2.0              # ... and every 2 degrees of turning
# ... and between the last step clear and the first touching, the contact is found by halving
# until no point of the car moves more than this: the car stops this much short of touching at
# most (far inside contact_mm, so it rams), and the distance it drove is the distance to the
# contact to under a millionth of a millimetre, which a verdict counts as exactly there (a ram
# at exactly 6" has moved 6", not "less than 6"").
CONTACT_FIND_MM = 1e-7
# "Small Skimmer – ... move like bikes"; "Cavalry are treated like bikes".
MOVES_LIKE_BIKE = ("bike", "small_skimmer", "cavalry")

# --- "Fire!" ------------------------------------------------------------------------------
FIRE_DAMAGE_MAX = 2              # "On a 1 or a 2, the component becomes damaged"
FIRE_SPREAD_MAX = 2              # "will also catch fire in a roll of 1-2"

# --- the hit tables -------------------------------------------------------------------
ROLL_OVER_DAMAGE_MAX = 3         # "Each working component is damaged on a 1d6 roll of 1-3"
SPINOUT_DEG = 45.0               # "Spinout" / "Rattled": "up to 45 degrees"
ROLLOVER_DEG = 90.0              # "Rollover": "Turn the vehicle 90 degrees"
CHOSEN_TURN_STEP_DEG = 15        # a player's "up to 45 degrees" is offered in these steps
#: "Normal Barrier": knocked "away from the ramming vehicle in a direction chosen by the rammer":
#: the directions offered, from the rammer's heading (away from it, within 60 deg of straight on).
KNOCK_TURNS_DEG = (-60, -30, 0, 30, 60)
SHAKEN_LOSS_IN = 6.0             # "Slightly Shaken": "loses 6" of its base movement"
FORCED_AHEAD_IN = 6.0            # "must move 6" straight ahead"
BURNING_WRECK_STRENGTH = 4       # "a strength 4 hit to anything it lands on"
EXPLOSION_IN = 6.0               # "Spectacular Explosion": "Everything within 6""
EXPLOSION_STRENGTH = 2
KABLOOIE_IN = 3.0                # "Kablooie!": "everyone within 3" takes a S0 hit"
KABLOOIE_STRENGTH = 0
GLANCING = {1: "slightly shaken", 2: "badly shaken", 3: "severely shaken", 4: "spinout",
            5: "component damage", 6: "rollover"}
PENETRATING = {1: "side blown off", 2: "fire", 3: "internal explosion", 4: "rollover wreck",
               5: "burning wreck", 6: "spectacular explosion"}
BIKE = {1: "component hit", 2: "rattled", 3: "ditched", 4: "crashed", 5: "rollover", 6: "kablooie"}
# Glancing results that wait for the driver's next turn ("place a dice on the vehicle"; "Higher
# results on the table supercede lower results").
PENDING_GLANCING = (1, 2, 3, 4, 6)

# --- "Winning" --------------------------------------------------------------------------------
ROUNDS = 6                       # "The game lasts 6 rounds"
GATE_POINTS = 1


# --- the templates and gauges players lay on the table (RuleSystem.templates) -------------
TEMPLATES = (
    dict(name="Spectacular explosion", shape="circle", radius_in=6.0, rule=f'{RULEBOOK}, "Penetrating Hit Table"',
         quote='Everything within 6" of the vehicle takes a strength 2 hit', use="what a vehicle's explosion hits"),
    dict(name="Kablooie!", shape="circle", radius_in=3.0, rule=f'{RULEBOOK}, "Bike and Cavalry Hit Table"',
         quote='everyone within 3” takes a S0 hit', use="what an exploding bike hits"),
    dict(name="Move", shape="gauge", length_in=BASE_MOVE_IN, marks_in=(3.0, 6.0, 9.0), rule=f'{RULEBOOK}, "Vehicles"',
         quote='a base movement of 12"', use="a vehicle's move (6\" in reverse)"),
    dict(name="Grab / cling range", shape="gauge", length_in=GRAB_IN, rule=f'{RULEBOOK}, "Stunts"',
         quote='grabs a moving vehicle within 1"', use="how near a freak must be to grab or cling"),
    dict(name="Flamethrower range", shape="gauge", length_in=6.0, rule=f'{RULEBOOK}, "Appendix 1: Sample Vehicles"',
         quote='Flamethrower: strength 2, range 6"', use="a weapon's reach"),
)


# --- the demo table (RuleSystem.demo_scenery), on vision/data/demo_table.toml's 1219.2 x 812.8 mm ---
# "The Arena" has no design rules, only what an arena should have: a "Track" ("an open path going
# around your arena"), "about four gates along the track so that drivers can go through them one
# after the other", "some buildings scattered around", and "Other Terrain ... Ramps are cool". The
# track runs anticlockwise round the table (the demo layout's cars: the near side driving +x, the
# east end +y, the far side -x, the west end -y); a gate across each side, 4.5 in wide ("Gate":
# "They should be a 4-5 inches wide"), post A on the driver's left; a ramp on the near straight
# (its first two points its bottom edge, met driving +x); two buildings (the teleporter needs two),
# a forest, a lava pit and a normal barrier in and round the infield. The gates and terrain clear
# the table's anchors and the cars' starting places. Scaled to other tables.
DEMO_TABLE_MM = (1219.2, 812.8)
GATE_WIDTH_IN = 4.5
DEMO_GATES = (
    dict(name="Near gate", role="score", a_mm=(609.6, 219.6), b_mm=(609.6, 105.3)),
    dict(name="East gate", role="score", a_mm=(1039.9, 520.0), b_mm=(1154.2, 520.0)),
    dict(name="Far gate", role="score", a_mm=(760.0, 592.9), b_mm=(760.0, 707.2)),
    dict(name="West gate", role="score", a_mm=(179.2, 290.0), b_mm=(64.9, 290.0)),
)
#: Kinds as the table file takes them (calibration/tablefile.py TERRAIN_KINDS, which has no ramp,
#: lava, forest or barrier): the Alpha Destructicus kind is the name's "kind:" prefix (ad_state).
DEMO_TERRAIN = (
    dict(name="Bank", kind="building", points=((300.0, 300.0), (420.0, 300.0), (420.0, 400.0), (300.0, 400.0))),
    dict(name="Saloon", kind="building", points=((800.0, 430.0), (920.0, 430.0), (920.0, 530.0), (800.0, 530.0))),
    dict(name="ramp: Jump", kind="blocking", points=((880.0, 190.0), (880.0, 135.0), (940.0, 135.0), (940.0, 190.0))),
    dict(name="lava: Lava pit", kind="exploding",
         points=((520.0, 450.0), (640.0, 450.0), (640.0, 530.0), (520.0, 530.0))),
    dict(name="forest: Pines", kind="rough", points=((560.0, 300.0), (700.0, 290.0), (720.0, 380.0), (580.0, 395.0))),
    dict(name="barrier: Tyre stack", kind="impassable",
         points=((230.0, 560.0), (330.0, 560.0), (330.0, 580.0), (230.0, 580.0))),
)

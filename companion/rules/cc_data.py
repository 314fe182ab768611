"""Car Cult's numbers, with where each comes from.

The rulebook is a blog draft (car-cult-2016-draft.txt, "Creating a Car Game", 25 November
2016): it gives the core mechanics, the crew, armour and six weapons with their numbers, but
no engine cards (only "Engines will vary between 4 - 7 AZ (with varying Spark Plug scores to
represent small fast vehicles and large slow ones)") and no card art, so it never says which
zones show a +ST symbol. Those are RECONSTRUCTED here, marked so, and kept as data the table
can change; nothing reconstructed is passed off as the draft's.

Words of the draft used throughout: ST (speed token), DT (damage token), AZ (action zone),
Re/Bt/De/Ss (a weapon's Range, Blast, Damage and Shots).
"""

from __future__ import annotations

from dataclasses import dataclass

RULEBOOK = "car-cult-2016-draft.txt"

#: "D20 rolls 10+ as base roll" ("Core Mechanics").
DIE = "d20"
BASE_TARGET = 10
#: "Unmodified rolls of 20 are Crack Shots and auto hit ... Unmodified rolls of 1 are Crap
#: Shots and auto miss" ("Attacking opponents", stage 4).
CRACK_SHOT = 20
CRAP_SHOT = 1

#: "30 AZ will be the standard size for a 4'x4' game" ("Building a Car Cult").
STANDARD_BUILD_LIMIT = 30
#: "Engines will vary between 4 - 7 AZ" ("Building a Car Cult").
ENGINE_AZ = (4, 7)
#: "Armour - 1 to 4 AZ" ("Building a Car Cult").
ARMOUR_AZ = (1, 4)
#: Crew: "All have 2 AZ" ("Building a Car Cult").
CREW_AZ = 2
#: Dangerous Driver: "applies a -2 to enemy Attack rolls per ST allocated".
DANGEROUS_DRIVER_PER_ST = -2
#: Down Shift: "One ST may be removed from the Engine each time a Car is activated."
FREE_DOWNSHIFTS = 1
#: A 45-degree turn per free AZ ("Car Movement/Engines").
TURN_DEG = 45.0
#: Drift: "divide the cars minimum movement by four and round down".
DRIFT_DIVISOR = 4

ST, DT = "ST", "DT"

#: Mine markers a move's form lets a player pick on the table (`mine_1` ... `mine_8`): two
#: Mines' worth of ST; markers beyond them, like any not picked, are asked for as the car moves.
MOST_MINE_POINTS = 8

#: The most of one component a car may carry (a second rifle is "rifle_2", ...): what the
#: standard build limit holds on the smallest engine, (30 - 4) // 2 AZ. Not the draft's limit
#: (it has none beyond the build limit): the companion's, so that every field an allocation
#: may carry ("st_rifle_2") is declared; only a raised build_limit can reach it.
MOST_OF_ONE = (STANDARD_BUILD_LIMIT - ENGINE_AZ[0]) // CREW_AZ


@dataclass(frozen=True)
class EngineType:
    """An engine card. `speeds_in[k]` is the number above zone k+1; `spark_plug` the
    Acceleration (the most ST added to it in one activation); `st_symbols` the zones
    (1 = leftmost) that show a +ST symbol."""

    key: str
    name: str
    speeds_in: tuple[int, ...]
    spark_plug: int
    st_symbols: tuple[int, ...]

    @property
    def az(self) -> int:
        return len(self.speeds_in)


#: RECONSTRUCTED: the draft has no engine cards. Four engines, one of each size the draft
#: allows (4-7 AZ), small ones fast to accelerate and large ones slow ("varying Spark Plug
#: scores to represent small fast vehicles and large slow ones"). Speeds climb to about 15"
#: (the draft's examples: a minimum of 11" and 12", a 9" target). The +ST symbols sit on the
#: two rightmost zones: ST "covered by ST" in "Car Activation" can only be the engine's (every
#: other ST is removed before ST are generated), so an engine run flat out covers its own
#: symbols and generates less.
ENGINES: dict[str, EngineType] = {e.key: e for e in (
    EngineType("four_banger", "Four-Banger", (4, 8, 12, 16), 3, (3, 4)),
    EngineType("straight_five", "Straight Five", (3, 6, 9, 12, 15), 2, (4, 5)),
    EngineType("v6", "V6", (2, 5, 8, 11, 14, 16), 2, (5, 6)),
    EngineType("big_block", "Big Block V8", (2, 4, 6, 8, 10, 12, 14), 1, (6, 7)),
)}


@dataclass(frozen=True)
class CrewType:
    key: str
    name: str
    st_symbols: tuple[int, ...]
    does: str


#: The crew are the draft's ("Building a Car Cult"); how many ST each generates ("with varying
#: amounts of ST generated") is RECONSTRUCTED: the driver two, the others one (on zone 2).
CREW: dict[str, CrewType] = {c.key: c for c in (
    CrewType("dangerous_driver", "Dangerous Driver", (1, 2), "-2 to enemy attack rolls per ST allocated"),
    CrewType("gutsy_gunner", "Gutsy Gunner", (2,), "reroll one attack roll per ST allocated"),
    CrewType("fanatical_fixer", "Fanatical Fixer", (2,),
             "swap the positions of any two tokens not on the fixer per ST allocated"),
)}


@dataclass(frozen=True)
class WeaponType:
    """A weapon upgrade: AZ, Range (in), Blast, Damage (None: "*", the ST on the engine), Shots."""

    key: str
    name: str
    az: int
    range_in: int
    blast: int
    damage: int | None
    shots: int
    needs_st: bool = True
    special: str = ""


#: All from the draft, "Building a Car Cult".
WEAPONS: dict[str, WeaponType] = {w.key: w for w in (
    WeaponType("machine_gun", "Machine Gun", 2, 12, 1, 1, 3),
    WeaponType("cannon", "Cannon", 2, 24, 6, 2, 1),
    WeaponType("flamethrower", "Flamethrower", 3, 6, 8, 1, 1),
    WeaponType("rifle", "Rifle", 2, 18, 3, 1, 2),
    WeaponType("mines", "Mines", 4, 4, 10, 2, 1, special="mines"),
    WeaponType("reinforced_ram", "Reinforced Ram", 2, 0, 10, None, 1, needs_st=False, special="ram"),
)}

ARMOUR_NAME = "Armour"


# --- the templates and gauges players lay on the table (RuleSystem.templates) -------------
#: "Exploding Cars": the radius is the engine's AZ in inches; the engines' sizes go from 2 to 6 AZ,
#: so the page offers the common ones.
TEMPLATES = (
    *(dict(name=f"Explosion, {n} AZ engine", shape="circle", radius_in=float(n), rule=f'{RULEBOOK}, "Exploding Cars"',
           quote="each model within a number of inches equal to the number of AZ in the cars Engine",
           use="what an exploding car hits (measured from the car)") for n in (2, 3, 4, 5)),
    dict(name="Mine trigger", shape="circle", radius_in=4.0, rule=f'{RULEBOOK}, "Mines"',
         quote='trigger when any model moves within Range ... Range – 4"', use="how near a car sets a mine off"),
    dict(name="Machine gun range", shape="gauge", length_in=12.0, rule=f'{RULEBOOK}, "Machine Gun"',
         quote='Range – 12"', use="a weapon's reach"),
    dict(name="Cannon range", shape="gauge", length_in=24.0, rule=f'{RULEBOOK}, "Cannon"',
         quote='Range – 24"', use="a weapon's reach"),
    dict(name="Flamethrower range", shape="gauge", length_in=6.0, rule=f'{RULEBOOK}, "Flamethrower"',
         quote='Range – 6"', use="a weapon's reach"),
    dict(name="Rifle range", shape="gauge", length_in=18.0, rule=f'{RULEBOOK}, "Rifle"',
         quote='Range – 18"', use="a weapon's reach"),
)

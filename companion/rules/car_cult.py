"""Car Cult: the untitled 2016 draft (car-cult-2016-draft.txt), speed and damage tokens.

Each car is a card of components (engine, crew, weapons, armour), each a track of action
zones (AZ). A round activates every car once, in the order of the ST on their engines
("Car Activation"); a car's activation is:

1. `activate`: every ST but the engine's is removed, the engine may Down Shift, and the car
   generates an ST for each +ST symbol still visible (not covered by an ST or DT);
2. `allocate`: the ST go onto tracks, filling each from the left; the engine takes at most
   its Spark Plug (Acceleration) more; what is not allocated is wasted;
3. `move` (required unless its minimum is 0): the path the camera saw is read as a straight
   move with drift and 45-degree turns, checked against the engine's minimum and maximum;
   short of the minimum it brakes; blocking terrain and other models halt it; rough terrain
   and mines along the way are rolled for; mines allocated are laid along the route;
4. `attack` with each weapon that has ST (a Reinforced Ram needs none), `fix` with the
   Fanatical Fixer's swaps, in any order after allocating;
5. `end_turn`: the next car in the order (a car may not pass its activation).

Each action is an `@action` method declaring the fields it may carry (`ACTIVATE_FIELDS` ...: anything
else is refused by name before it resolves); the page's form for each is `cc_views.actions`. The
choices the draft gives a player once the dice have fallen are asked of that player as the
resolution reaches them (`ChoiceRequest`): where each DT of a hit goes (the target's owner the
first, the attacker the others), a failed brake's DT (the opponent, who "may"), which miss a
Gutsy Gunner rerolls (the attacker). Nothing is measured before an action is declared ("No
pre-measuring") unless the `premeasure` option allows it; a declared attack records what it
measured.

DT go "bottom right to top left", armour first; a car full of DT explodes, and every model
within as many inches as its engine has AZ takes 1 DT. Every die is a d20, asked for through
the resolution (tray, typed or virtual dice alike). Numbers live in `cc_data` (the draft's,
and those it leaves out, marked reconstructed); rosters and state in `cc_state`.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import shapely

from ..dice import ChoiceRequest, DiceRequest, Modifier, Roll
from ..geometry import (TOO_CLOSE, Distance, Footprint, Obstacles, Pose, closest_distance, inches, judge,
                        normalize_deg)
from ..geometry.pose import MM_PER_IN
from . import cc_data as D
from .actions import ListOf
from .base import RuleOption, RulesError, RuleSystem, action, check_block, piece_named, register
from .poses import interpolate, parse_pose
from .cc_state import ARMOUR, CREW, ENGINE, WEAPON, Car, Component, GameState, Mine, build_cult
from .cc_views import CarCultViews

R = D.RULEBOOK
OPTIONS = (
    RuleOption("build_limit", D.STANDARD_BUILD_LIMIT, None, f'{R}, "Building a Car Cult"',
               '"Players choose a number of AZ to be their Build Limit, 30 AZ will be the standard size for a '
               '4\'x4\' game": the most AZ a player\'s cars may total.'),
    RuleOption("activation_order", "most_first", ("most_first", "fewest_first"), f'{R}, "Car Activation"',
               '"The cars activate based on the number of Speed Tokens ... allocated to their engine" without '
               'saying which way. "most_first": the fastest car first; "fewest_first": the slowest first. '
               'Ties: "roll a D20 for each and then activate in descending numerical order" (equal rolls are '
               'rolled again).'),
    RuleOption("activation_timing", "round_start", ("round_start", "each_activation"), f'{R}, "Car Activation"',
               '"The cars activate based on the number of Speed Tokens (referred to as ST from now on) that is '
               'currently allocated to their engine." "round_start": the order is made from the engines\' ST when '
               'the round starts and kept for the round (ties rolled then); "each_activation": "currently" read as '
               'at each activation: after every activation the cars still to activate are ranked again by the ST '
               'on their engines now (an attack that knocked ST off an engine moves that car), a new tie rolled '
               'for (cars already ranked together at that count keep their ranking). A car exploding during its '
               'own activation re-ranks without dice (new ties keep their order).'),
    RuleOption("st_cover", "st_or_dt", ("st_or_dt", "dt_only"), f'{R}, "Car Activation"',
               '"one ST for each +ST symbol visible on their car, some will have been covered by ST or Damage '
               'Tokens". "st_or_dt": a symbol under an ST (the engine\'s, the only ST left then) or a DT does '
               'not generate; "dt_only": only DT cover symbols.'),
    RuleOption("one_st_minimum", "zero", ("zero", "its_speed"), f'{R}, "Car Movement/Engines"',
               '"The minimum and maximum movement for each car is determined by the comparing the numbers above '
               'the two filled AZ farthest to the right on the Engine": with a single ST there is only one. '
               '"zero": no minimum (the maximum is the number above that ST; the car need not move); '
               '"its_speed": the minimum is that number too (it must move exactly that far, or brake).'),
    RuleOption("turn_zones", "engine", ("engine", "car"), f'{R}, "Car Movement/Engines"',
               '"A car may perform one 45 degree turn for each AZ that has not been allocated any ST." '
               '"engine": the empty AZ of the engine\'s track; "car": every empty AZ on the car. (A zone '
               'holding a DT: option turn_dt.)'),
    RuleOption("turn_dt", "free", ("free", "not_free"), f'{R}, "Car Movement/Engines"',
               '"A car may perform one 45 degree turn for each AZ that has not been allocated any ST": is a zone '
               'holding a DT such an AZ? "free": yes, as written: no ST was allocated to it (a V6 with 4 ST and a '
               'DT has 2 turns); "not_free": no, only empty zones give turns (a DT zone can take no ST, so it is '
               'not spare room on the track: the same V6 has 1).'),
    RuleOption("drift", "total", ("total", "per_side"), f'{R}, "Car Movement/Engines"',
               '"Cars may Drift a number of inches left and/or right ... divide the cars minimum movement by four '
               'and round down". "total": the drift left and right together is at most that; "per_side": each '
               'way may be up to it.'),
    RuleOption("brake_rounding", "down", ("down", "up", "exact"), f'{R}, "Car Movement/Engines"',
               'Braking: "Roll a D20 and subtract the number of inches the Car the player has chosen not to move". '
               '"down": whole inches short, rounded down (as blocking terrain rounds); "up": rounded up; '
               '"exact": the measured inches, to a hundredth.'),
    RuleOption("downshift_rolls", "every_st", ("every_st", "beyond_first"), f'{R}, "Down Shift"',
               '"One ST may be removed from the Engine each time a Car is activated. If a player wishes to remove '
               'more they must roll one D20 for each ST being removed that turn." "every_st": as written, one ST '
               'comes off free, but removing more, every ST being removed that turn rolls, the first too (3 off: '
               '3 dice); "beyond_first": the first ST stays free and only each one beyond it rolls (3 off: 2 dice).'),
    RuleOption("blocking_damage", "dt", ("dt", "st_penalty"), f'{R}, "Down Shift" (terrain)',
               'At blocking terrain "the car suffers 1 ST for each inch of movement the car has failed to move '
               'up to the minimum"; the example that follows says "resulting in the car suffering 2 DT". "dt": '
               'read it as DT; "st_penalty": as written, the car generates that many fewer ST at its next '
               'activation.'),
    RuleOption("rough_measure", "deepest_point", ("deepest_point", "any_part", "centre_path"),
               f'{R}, "Down Shift" (terrain)',
               '"subtract the number of inches of Rough terrain the car has moved through". "deepest_point": the '
               'longest way any point of the car (its outline, its centre) went over the piece: a 2.5 in strip '
               'driven straight across is 2.5 in, and a corner clipping a piece counts what the corner crossed; '
               '"any_part": the distance the car moved while any part of it was over the piece (the strip and the '
               'car\'s own length: 2.5 in reads 5.5 for a 3 in car); "centre_path": the length of its centre\'s '
               'path over the piece (a car that clips a piece with its side crosses none).'),
    RuleOption("rough_rounding", "down", ("down", "exact"), f'{R}, "Down Shift" (terrain)',
               '"subtract the number of inches of Rough terrain": the draft rounds braking down but says nothing '
               'here. "down": whole inches, rounded down (2.5 in subtracts 2), as braking; "exact": the inches '
               'as measured (2.5 in subtracts 2.5, so a 12 fails).'),
    RuleOption("dt_allocation", "owner_first", ("owner_first", "card_order"), f'{R}, "Attacking opponents", 6',
               '"The owner of the Target model applies the first DT from each hit and the Attacking player '
               'applies any others. DT are always applied bottom right to top left on any AZ tracks." '
               '"owner_first": as each DT of a hit is placed, the target\'s owner is asked which track takes the '
               'first, the attacking player which takes the others (a mine\'s: its layer\'s owner); each track '
               'fills from the right; "card_order": every DT goes bottom right to top left over the whole card '
               '(armour first), nobody is asked. Armour always fills first ("DT must be applied here before any '
               'other AZ"), so while it has room nobody is asked. DT that are not an attack\'s (rough or blocking '
               'terrain, a collision, an explosion) go by card order under either reading: the draft names nobody '
               'to place them; a failed down shift\'s goes on the engine ("causes one DT to the Engine").'),
    RuleOption("dt_over_st", "displace", ("displace", "empty_first"), f'{R}, "Attacking opponents", 6',
               'Where a DT goes on a track that holds ST. "displace": on the rightmost zone without a DT, '
               'knocking off an ST there; "empty_first": on the rightmost empty zone, an ST knocked off only when '
               'no zone is empty.'),
    RuleOption("mine_trigger", "enters", ("enters", "moves_within"), f'{R}, "Building a Car Cult" (Mines)',
               '"Mines automatically trigger when any model moves within Range" (4"). "enters": when a moving '
               'model comes within 4" of the marker (one already within it sets it off only by leaving and coming '
               'back); "moves_within": any model that moves while within 4" of it. Mines a car lays in a move '
               'never trigger on that move.'),
    RuleOption("driver_penalty", "enemy_attacks", ("enemy_attacks", "every_attack"),
               f'{R}, "Building a Car Cult" (Dangerous Driver)',
               '"Dangerous Driver – applies a -2 to enemy Attack rolls per ST allocated". "enemy_attacks": '
               'against another player\'s attacks only: a weapon\'s, a ram\'s, a mine another player\'s car '
               'laid; a mine its own side laid is no enemy\'s, so no -2; "every_attack": against every attack '
               'roll at the car, its own side\'s mines too (the driver swerves whoever laid the mine).'),
    RuleOption("mine_targets", "any_model", ("any_model", "enemies"), f'{R}, "Building a Car Cult" (Mines)',
               '"when any model moves within Range". "any_model": the layer\'s own cars too; "enemies": only the '
               'other players\' cars.'),
    RuleOption("mine_placement", "on_route", ("on_route", "anywhere"), f'{R}, "Building a Car Cult" (Mines)',
               '"Place one Mine marker along the Cars route per ST allocated". "on_route": each marker on ground '
               'the car covered this move (its footprint along the path); "anywhere": where the player puts it. '
               'Markers not placed by hand are spread evenly along the centre of the route.'),
    RuleOption("explosion_measure", "closest_points", ("closest_points", "centre"), f'{R}, "Exploding Cars"',
               '"each model within a number of inches equal to the number of AZ in the cars Engine will take '
               '1 DT". "closest_points": closest parts of the two ("Core Mechanics": distances are measured '
               'between the closest visible parts); "centre": from the exploding car\'s centre.'),
    RuleOption("explosion_hits", "every_model", ("every_model", "other_players"), f'{R}, "Exploding Cars"',
               '"each model within" the radius. "every_model": every car, its owner\'s too (the attacker as '
               'well); "other_players": only cars of the other players.'),
    RuleOption("ram_collision", "no_halt", ("no_halt", "target_takes_dt"), f'{R}, "Building a Car Cult" (Reinforced Ram)',
               'A car with a Reinforced Ram "Does not suffer DT when moving into other models" (others are '
               '"Blocking terrain" otherwise, "apply DT to both models"). "no_halt": it stops against the model '
               'but it is not a blocking halt: its engine keeps its ST (its ram\'s Damage), neither takes DT from '
               'the collision; "target_takes_dt": it halts as at blocking terrain, takes no DT, the other model '
               'takes the DT.'),
    RuleOption("out_of_range", "wasted", ("wasted", "refused"), f'{R}, "Attacking opponents", 1 and 3',
               '"Players are not permitted to pre-measure distances ... selecting the target of an attack is a '
               'judgement call"; out of range or sight "no attack may be made". "wasted": the declared attack is '
               'lost (the weapon has fired); "refused": the companion refuses it and the player may choose again.'),
    RuleOption("premeasure", False, (False, True), f'{R}, "Core Mechanics" and "Attacking opponents", 1',
               '"No pre-measuring" ("Core Mechanics"); "Players are not permitted to pre-measure distances during '
               'the game so selecting the target of an attack is a judgement call" (stage 1). False: before an '
               'action is declared the page shows no distance, range, line of sight, roll needed or weapon reach, '
               'lists targets by marker (not nearest first), draws no mine\'s 4 in reach, and draws the move band '
               'only for the car moving now, once its ST are allocated (its move is then declared: "with the '
               'exception of the Engines, a player is not required to carry out an action"); an attack is measured '
               'once declared and its outcome records the measurement. True: a table that agrees to measure '
               'freely sees every measurement at any time.'),
    RuleOption("move_band", "declared_move", ("declared_move", "never"), f'{R}, "Core Mechanics" and "Car Movement/Engines"',
               'With premeasure False: is the band a car may end its move in (minimum to maximum, drift, turns) a '
               'pre-measurement? "No pre-measuring", yet "the minimum distance you must move in your turn without '
               'Braking" must be measured to be kept. "declared_move": drawn only for the car moving now, from its '
               'allocation (its move is then declared: the engine\'s action is compulsory) until it has moved: the '
               'tape laid along a move being made; "never": not drawn at all, the move judged only once resolved. '
               'With premeasure True every car\'s band is drawn.'),
    RuleOption("brake_opponent", "next_in_order", ("next_in_order", "roster_order"), f'{R}, "Car Movement/Engines"',
               'Braking: "if it is lower then their opponent may allocate one DT to the Car performing the Braking '
               'action". With two players that is the other; with more the draft does not say which. '
               '"next_in_order": the owner of the next car in this round\'s order that is not the braking '
               'player\'s (else the first other player in the rosters); "roster_order": the first other player in '
               'the rosters.'),
    RuleOption("range_measure", "closest_visible", ("closest_visible", "closest_points"),
               f'{R}, "Core Mechanics" and "Attacking opponents", 3',
               '"Distances are measured between the closest visible parts of the two objects"; stage 3: "measure '
               'the shortest uninterrupted line between the two, if this is equal to or less than the weapons '
               'Range". "closest_points": the closest parts of the two, line of sight judged on its own (any '
               'line); "closest_visible": the shortest line between them that nothing interrupts (the closest '
               'points when that line is clear; else found among points every 2 mm round both outlines, so at '
               'most about 2 mm long).'),
    RuleOption("fixer_swap", "two_tokens", ("two_tokens", "token_or_empty"), f'{R}, "Building a Car Cult"',
               'Fanatical Fixer: "Swap the positions of any two tokens not on the fixer per ST allocated". '
               '"two_tokens": both zones must hold a token (an ST and a DT: the draft names two tokens); '
               '"token_or_empty": a token may swap with an empty zone (it moves there; this lets an ST already '
               'spent move on to a second weapon). Under either, the swap must leave the tokens where the rules '
               'let them be: no ST on armour or the ram, the engine\'s ST from the left (no empty engine zone '
               'left of an ST: its speeds are read from its rightmost ST), and the engine at most its Spark Plug more ST this activation (allocated and swapped '
               'together) than it had after down shifting.'),
    RuleOption("cars_block_sight", True, (True, False), f'{R}, "Core Mechanics"',
               '"LoS is determined by drawing an uninterrupted line between any parts of the two objects". True: '
               'other cars interrupt a line as blocking terrain does; False: only terrain does.'),
    RuleOption("round_limit", None, None, f'{R}, "Game rounds and turns"',
               'The draft gives no end of game (it says how a round ends, never how a game does). None: the '
               'game ends when one player (or none) has cars left, that player the winner; a number: also after '
               'that many rounds, won by the player whose cars in play have the most AZ free of DT.'),
    RuleOption("contact_mm", 2.0, None, f'{R}, "Down Shift" (terrain)',
               '"Cars must halt their movement when they touch Blocking terrain": how close (mm) counts as '
               'touching; the camera cannot see a gap of zero. A Reinforced Ram\'s Range 0" is this too.'),
    RuleOption("path_tolerance_mm", 3.0, None, f'{R}, "Car Movement/Engines"',
               '"Cars must move in straight lines": how far (mm) a path may wander sideways (the camera, a hand) '
               'before it counts as drift.'),
    RuleOption("drift_correction_mm", 20.0, None, f'{R}, "Car Movement/Engines"',
               '"Cars must move in straight lines with the exception that they may Drift ... Cars may Drift a number '
               'of inches left and/or right whist they move." A hand is not noise-free: a car slid past its mark and '
               'back is one slide corrected, not drift both ways. How far (mm) a slide back, right after a slide the '
               'other way within one move, may go and still be that correction: the two count as their net (where '
               'the car ends up across its line). 20: a careful hand that overshoots by up to 2 cm and brings the car '
               'back is not charged for it; a longer slide back is drift the other way; 0: every slide back counts '
               '(the strict reading of "left and/or right" with drift "total").'),
    RuleOption("turn_tolerance_deg", 4.0, None, f'{R}, "Car Movement/Engines"',
               'How much a straight run may change heading (degrees) before it counts as a turn; a turn of up to '
               '45 degrees more than this is one turn ("may be combined together but may not be split").'),
)

#: Scene kinds read as the draft's two terrain types ("There are two types of terrain, Rough
#: and Blocking"); anything else blocks.
ROUGH_KINDS = ("rough", "slow")
#: range_measure "closest_visible": the outlines are sampled this finely (mm) when the closest
#: points are hidden.
_OUTLINE_STEP_MM = 2.0


def _int(value, what: str, lo: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value or value < lo:
        raise RulesError(f"{what} must be a whole number of at least {lo}, not {value!r}")
    return int(value)


#: How far apart the points round a car's outline are that rough terrain is measured by (mm).
_ROUGH_POINT_STEP_MM = 4.0


def _outline_points(v, dense) -> np.ndarray:
    """Points round the car's outline every few millimetres, and its centre, at each pose of its
    route: an array (poses, points, 2) in the table frame."""
    corners = np.array([v.footprint(p).corners for p in dense], dtype=float)      # (n, 4, 2)
    edges = []
    for a in range(4):
        b = (a + 1) % 4
        length = float(np.hypot(*(corners[0, b] - corners[0, a])))
        f = np.linspace(0.0, 1.0, max(int(math.ceil(length / _ROUGH_POINT_STEP_MM)), 1), endpoint=False)
        edges.append(corners[:, a, None, :] + f[None, :, None] * (corners[:, b] - corners[:, a])[:, None, :])
    centre = np.array([[p.x_mm, p.y_mm] for p in dense], dtype=float)[:, None, :]
    return np.concatenate([*edges, centre], axis=1)


def _inside_fraction(polygon, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """How much of each straight step from `starts` to `ends` (arrays (..., 2)) lies over the
    polygon, 0 to 1: exact, where counting a whole step by its end over-reads a piece by up to a
    step (a 3.00 in strip read 3.03)."""
    shape = starts.shape[:-1]
    a, b = starts.reshape(-1, 2), ends.reshape(-1, 2)
    length = np.hypot(*(b - a).T)
    frac = shapely.contains_xy(polygon, b[:, 0], b[:, 1]).astype(float)   # a step of no length
    moving = length > 1e-9
    if moving.any():
        segs = shapely.linestrings(np.stack([a[moving], b[moving]], axis=1))
        frac[moving] = np.clip(shapely.length(shapely.intersection(segs, polygon)) / length[moving], 0.0, 1.0)
    return frac.reshape(shape)


def _inches_text(x: float) -> str:
    """Inches to a hundredth, or a thousandth where a hundredth would round up past a whole
    inch (2.995 in, rounded down to 2, is not shown as 3.00)."""
    text = f"{x:.2f}"
    if math.floor(float(text)) != math.floor(x + 1e-9):
        text = f"{math.floor(x * 1000) / 1000:.3f}"
    return text


def _route_outline(polys) -> tuple[tuple[float, float], ...]:
    """The outline of the ground a car's footprints covered along a route, to a millimetre
    (its corners, [x_mm, y_mm]): one polygon (the largest part, should a route come apart)."""
    if len(polys) == 0:
        return ()
    ground = shapely.union_all(polys).buffer(0.5).simplify(1.0)
    if ground.geom_type != "Polygon":
        ground = max(getattr(ground, "geoms", []), key=lambda g: g.area, default=None)
        if ground is None or ground.is_empty:
            return ()
    return tuple((round(float(x), 1), round(float(y), 1)) for x, y in list(ground.exterior.coords)[:-1])


def _track_ids() -> tuple[str, ...]:
    """Every id a car's track may have (`cc_state`): the engine, the armour, each crew and
    weapon, and a second or later of one ("rifle_2", up to `MOST_OF_ONE`)."""
    keys = (*D.CREW, *D.WEAPONS)
    return ("engine", "armour", *keys, *(f"{k}_{n}" for k in keys for n in range(2, D.MOST_OF_ONE + 1)))


#: Each action's fields and shapes (`@action(..., fields=)`): what the page's spec offers and
#: what a scenario or a record may send; anything else is refused by name before the rules see it.
#: allocate: an `st_<track>` per track (a track the car lacks, the armour and the ram are refused
#: by the rules with the reason); move: the camera's path and a point per mine marker.
_CAR = {"vehicle": "marker"}
ACTIVATE_FIELDS = {**_CAR, "downshift": "whole"}
ALLOCATE_FIELDS = {**_CAR, **{f"st_{t}": "whole" for t in _track_ids()}}
MOVE_FIELDS = {**_CAR, "path": "path", **{f"mine_{k}": "point" for k in range(1, D.MOST_MINE_POINTS + 1)}}
ATTACK_FIELDS = {**_CAR, "weapon": "text", "target": "marker"}
#: A zone as the page names it: "component:zone" ("engine:4").
FIX_FIELDS = {**_CAR, "a": "text", "b": "text"}


#: A game taken up part way (`start_part_way`): the scenario's `state` block and its objects.
PART_WAY_FIELDS = {"round": "whole", "order": ListOf("marker"), "activated": ListOf("marker"), "vehicles": "object",
                   "mines": ListOf("object")}
PART_WAY_CAR = {"tracks": "object", "st_penalty": "whole"}
PART_WAY_MINE = {"layer": "marker", "at": "point", "round": "whole"}




def _tie_rolls(history: list[dict]) -> list[dict]:
    """The tie-break dice as a step's rolls: one row a die, in the order thrown (each entry of
    `history` one throw of the tied cars, {name: face})."""
    return [{"asked": f"activation tie-break ({name})", "face": face, "total": face, "modifiers": [],
             "note": "highest activates first"} for throw in history for name, face in throw.items()]


def _turns(n: int) -> str:
    """"1 turn", "2 turns": the count of 45-degree turns as players say it."""
    return f"{n} turn{'' if n == 1 else 's'}"


@register
class CarCult(CarCultViews, RuleSystem):
    name = "car_cult"
    title = "Car Cult (2016 draft: speed and damage tokens)"
    rulebook = D.RULEBOOK
    options = OPTIONS

    # --- setting up ---------------------------------------------------------------------


    def templates(self) -> list[dict]:
        """The templates and gauges of this book (see the data module's TEMPLATES)."""
        from .base import template as table_template
        return [table_template(**t) for t in D.TEMPLATES]
    def starter_rosters(self, cars: list[tuple[int, str]]) -> list[dict]:
        """The table's cars in two cults, alternately, built so that a game from them can use
        every part "Building a Car Cult" gives. Each cult's first two cars are 11 AZ on a Straight
        Five: the first player's a rammer (a Gutsy Gunner, a Fanatical Fixer, a Reinforced Ram)
        then a gunship (a Dangerous Driver, a Machine Gun, 2 AZ of armour), the second player's a
        mine-layer (a Dangerous Driver, Mines) then a gunship. A third is a lighter 8 AZ (a
        Four-Banger, a Dangerous Driver, a Machine Gun): 30 AZ, the standard build limit. Cars
        that do not fit the build limit are left out, so the rosters play as they are."""
        gunship = {"crew": ["dangerous_driver"], "weapons": ["machine_gun"], "armour": 2}
        builds = (({"crew": ["gutsy_gunner", "fanatical_fixer"], "weapons": ["reinforced_ram"]}, gunship),
                  ({"crew": ["dangerous_driver"], "weapons": ["mines"]}, gunship))
        rosters = [{"player": p, "cars": []} for p in ("Player 1", "Player 2")]
        for n, (marker, name) in enumerate(cars):
            cult = rosters[n % 2]["cars"]
            if len(cult) < 2:
                cult.append({"marker": marker, "name": name, "engine": "straight_five", "engine_st": 2,
                             **builds[n % 2][len(cult)]})
            else:
                cult.append({"marker": marker, "name": name, "engine": "four_banger", "engine_st": 1,
                             "crew": ["dangerous_driver"], "weapons": ["machine_gun"]})
        limit = int(self.option("build_limit"))
        for r in rosters:
            # Heavier builds first; drop lighter cars past the build limit, so the roster plays.
            total, keep = 0, []
            for c in r["cars"]:
                az = _roster_az(c)
                if total + az <= limit:
                    keep.append(c)
                    total += az
            r["cars"] = keep
        return [r for r in rosters if r["cars"]]

    def generation(self, car: Car, covered: bool = True) -> int:
        """ST generated: one per +ST symbol visible ("Car Activation"). `covered` False: as if
        nothing covered any (the most it can generate)."""
        n = 0
        for c in car.components:
            for z in c.st_symbols:
                token = c.zones[z - 1]
                if covered and token is not None and (token == D.DT or self.option("st_cover") == "st_or_dt"):
                    continue
                n += 1
        return n

    def new_game(self, rosters: list[dict], scene) -> GameState:
        if len(rosters) < 2:
            raise RulesError("a game needs at least two rosters")
        cars = {c.id: c for c in scene.cars} if scene is not None else {}
        sizes = {m: (c.length_mm, c.width_mm) for m, c in cars.items()}
        vehicles, players, taken = {}, [], set()
        limit = self.option("build_limit")
        for roster in rosters:
            if not isinstance(roster, dict):
                raise RulesError("a roster is an object with 'player' and 'cars'")
            cult = build_cult(roster, int(limit), taken, sizes, lambda c: self.generation(c, covered=False))
            if roster["player"] in players:
                raise RulesError(f"two rosters for {roster['player']}")
            players.append(roster["player"])
            for v in cult:
                v.one_st_minimum = str(self.option("one_st_minimum"))
                if v.marker in cars:
                    v.pose = cars[v.marker].pose
                vehicles[v.marker] = v
        table = (scene.width_mm, scene.depth_mm) if scene is not None else (1219.2, 1219.2)
        return GameState(players, vehicles, table, list(scene.terrain) if scene is not None else [])

    def start_part_way(self, state: GameState, block: dict) -> None:
        """A game taken up part way, between two activations (docs/rules/car-cult.md, "Starting
        part way through a game"): the tokens on each car's tracks (its ST and DT: a car whose
        every AZ holds a DT is a casualty), an ST penalty from blocking terrain, the mine markers
        on the table, the round and this round's order with the cars that have activated. Each
        object's fields are checked by name and shape; a value the rules could not have reached
        (an ST on armour, an engine's ST right of an empty zone, an exploded car in the order) is
        refused saying why. Nothing is changed unless the whole block is taken."""
        if not isinstance(block, dict):
            raise RulesError(f"state: an object of {', '.join(PART_WAY_FIELDS)}, not {block!r}")
        check_block("state", PART_WAY_FIELDS, block)
        new = copy.deepcopy(state)
        for key, spec in (block.get("vehicles") or {}).items():
            self._part_way_car(new, key, spec)
        rnd = block.get("round", 0) or 0
        if rnd < 0:
            raise RulesError(f"state.round: a round number (0: before the first round), not {rnd}")
        new.round = int(rnd)
        self._part_way_order(new, block)
        for k, spec in enumerate(block.get("mines") or []):
            self._part_way_mine(new, f"state.mines.{k}", spec)
        self._check_end(new)
        state.__dict__.update(new.__dict__)

    def _part_way_car(self, state: GameState, key: str, spec) -> None:
        where = f"state.vehicles.{key}"
        v = piece_named(state.vehicles, key, where, "car")
        check_block(where, PART_WAY_CAR, spec)
        tracks = spec.get("tracks") or {}
        check_block(f"{where}.tracks", {c.id: "text" for c in v.components}, tracks)
        tokens = {"S": D.ST, "D": D.DT, ".": None}
        for cid, text in tracks.items():
            comp, at = v.component(cid), f"{where}.tracks.{cid}"
            if len(text) != comp.az or any(ch not in tokens for ch in text):
                raise RulesError(f"{at}: the {v.name}'s {comp.name} is {comp.az} zones, each S (an ST), D (a DT) or "
                                 f". (empty), left to right, as the state shows them; not {text!r}")
            zones = [tokens[ch] for ch in text]
            if D.ST in zones and (comp.kind == ARMOUR or (comp.kind == WEAPON and not comp.weapon.needs_st)):
                raise RulesError(f"{at}: the {v.name}'s {comp.name} takes no ST ({R}, \"Building a Car Cult\")")
            last_st = max((i for i, z in enumerate(zones) if z == D.ST), default=-1)
            if comp.kind == ENGINE and None in zones[:max(last_st, 0)]:
                raise RulesError(f"{at}: {text!r} has an ST right of an empty zone; the engine's ST fill it from the "
                                 f"left ({R}, \"Car Movement/Engines\": \"you always start at the left and fill up "
                                 f"towards the right\")")
            comp.zones = zones
        penalty = spec.get("st_penalty")
        if penalty is not None:
            if self.option("blocking_damage") != "st_penalty":
                raise RulesError(f"{where}.st_penalty: only blocking_damage 'st_penalty' makes blocking terrain cost "
                                 f"ST; as set, it costs DT (put them on the tracks)")
            if penalty < 0:
                raise RulesError(f"{where}.st_penalty: a number of ST, not {penalty}")
            v.st_penalty = int(penalty)
        # "Any car which has every AZ filled with DT explodes and is removed as a Casualty".
        v.exploded = v.wrecked

    def _part_way_order(self, state: GameState, block: dict) -> None:
        """This round's order and the cars that have activated in it (its first ones)."""
        order, done = block.get("order"), block.get("activated") or []
        if order is None:
            if done:
                raise RulesError("state.activated: give the round's 'order' too (the cars that have activated are "
                                 "its first ones)")
            # A round number alone: that round is over and the next is started with a round step.
            state.order, state.turn = [], 0 if state.round else -1
            return
        if state.round < 1:
            raise RulesError("state.order: a round's order needs its 'round' (1 or more)")
        cars = {v.marker: v for v in state.vehicles.values() if v.in_play and v.pose is not None}
        for m in order:
            v = state.vehicles.get(m)
            if v is None:
                raise RulesError(f"state.order: no car with marker {m} in this game")
            if not v.in_play:
                raise RulesError(f"state.order: the {v.name} ({m}) has exploded; a casualty is removed and "
                                 f"activates no more ({R}, \"Attacking opponents\", 6)")
            if v.pose is None:
                raise RulesError(f"state.order: the {v.name} ({m}) is not on the table")
        if len(set(order)) != len(order) or set(order) != set(cars):
            missing = [cars[m].name for m in cars if m not in order]
            raise RulesError(f"state.order: every car in play once each (\"each car model may only activate "
                             f"once\")" + (f"; missing: {', '.join(missing)}" if missing else "; one is listed twice"))
        if list(done) != list(order[:len(done)]):
            raise RulesError(f"state.activated: the cars that have activated are the order's first ones, in its "
                             f"order ({', '.join(str(m) for m in order[:len(done)])}), not {list(done)}")
        state.order = [(state.vehicles[m].owner, m) for m in order]
        state.activated = list(done)
        state.turn = len(done)
        state.active_marker = None

    def _part_way_mine(self, state: GameState, where: str, spec) -> None:
        if not isinstance(spec, dict):
            raise RulesError(f"{where}: an object of {', '.join(PART_WAY_MINE)}, not {spec!r}")
        check_block(where, PART_WAY_MINE, spec)
        for need in ("layer", "at"):
            if spec.get(need) is None:
                raise RulesError(f"{where}: needs '{need}' (a mine marker: the car that laid it and where it lies)")
        layer = state.vehicles.get(spec["layer"])
        if layer is None:
            raise RulesError(f"{where}.layer: no car with marker {spec['layer']} in this game")
        if not any(c.kind == WEAPON and c.weapon.special == "mines" for c in layer.components):
            raise RulesError(f"{where}.layer: the {layer.name} has no Mines to have laid it")
        x, y = map(float, spec["at"])
        w, d = state.table_mm
        if not (0 <= x <= w and 0 <= y <= d):
            raise RulesError(f"{where}.at: [{x:g}, {y:g}] is off the table ({w:g} x {d:g} mm)")
        laid = state.round if spec.get("round") is None else spec["round"]
        if not 0 <= laid <= state.round:
            raise RulesError(f"{where}.round: laid in round {laid}, but the game is at round {state.round}")
        state.mines.append(Mine(state.next_mine, layer.marker, layer.owner, x, y, int(laid)))
        state.next_mine += 1

    # --- rounds -------------------------------------------------------------------------

    def active_marker(self, state: GameState) -> int | None:
        return state.active_marker

    def turn_info(self, state: GameState) -> dict:
        """The round's order; `turn` the index of the activation under way (-1 between
        activations); `up` the player whose car is active, or activates next."""
        up = state.active or (self.up_next(state) if state.round > 0 and not state.over else None)
        return {"round": state.round, "players": list(state.players),
                "turn": state.turn if state.active_marker is not None else -1,
                "order": [{"player": p, "vehicle": m} for p, m in state.order],
                "active": state.active_marker, "up": up.owner if up is not None else None}

    def may_premeasure(self) -> bool:
        """The draft forbids it ("No pre-measuring"), unless the table's `premeasure` option allows it."""
        return bool(self.option("premeasure"))

    def start_round(self, state: GameState, orders: dict | None = None):
        """The activation order: by ST on the engines, ties by a d20 each, descending, equal
        rolls rolled again ("Car Activation"). `orders` is not used: the tokens decide."""
        if state.over:
            raise RulesError(f"the game is over ({state.winner or 'no one'} won)")
        if state.round > 0 and state.turn < len(state.order):
            left = [state.vehicles[m].name for _, m in state.order[state.turn:] if state.vehicles[m].in_play]
            if left:
                raise RulesError(f"round {state.round} is not over: {', '.join(left)} still to activate")
        cars = [v for v in state.in_play()]
        if not cars:
            raise RulesError("no car is on the table")
        sign = -1 if self.option("activation_order") == "most_first" else 1
        history: list[dict] = []

        def rank(group: list[Car]):
            return (yield from self._tie_break(state, group, history))

        order: list[Car] = []
        groups = []
        for st in sorted({v.engine.st for v in cars}, key=lambda n: sign * n):
            group = [v for v in cars if v.engine.st == st]
            if len(group) > 1:
                group = yield from rank(group)
                groups.append((st, tuple(v.marker for v in group)))
            order += group
        state.tie_groups = groups
        state.round += 1
        state.order = [(v.owner, v.marker) for v in order]
        state.turn = 0
        state.activated = []
        state.active_marker = None
        state.tie_rolls = history
        events = [f"round {state.round}: " + ", ".join(f"{v.name} ({v.engine.st} ST)" for v in order)]
        return {"round": state.round, "order": [v.marker for v in order], "ties": history,
                "rolls": _tie_rolls(history), "events": events}

    def _tie_break(self, state: GameState, group: list[Car], history: list[dict]):
        """Tied cars ranked: "roll a D20 for each and then activate in descending numerical
        order" ("Car Activation"); equal rolls are rolled again."""
        faces = {}
        for v in group:
            faces[v.marker] = (yield DiceRequest((D.DIE,), "activation tie-break", v.name)).faces[0]
        history.append({state.vehicles[m].name: f for m, f in faces.items()})
        out = []
        for face in sorted(set(faces.values()), reverse=True):
            tied = [v for v in group if faces[v.marker] == face]
            out += (yield from self._tie_break(state, tied, history)) if len(tied) > 1 else tied
        return out

    def _rerank(self, state: GameState, dice: bool = True):
        """activation_timing "each_activation": the cars still to activate ranked again by the ST
        on their engines now ("currently allocated to their engine"); a new tie rolls (when `dice`),
        a tie among cars already ranked together at that count keeps that ranking. Returns events."""
        rest = state.order[state.turn:]
        live = [state.vehicles[m] for _, m in rest if state.vehicles[m].in_play]
        if len(live) < 2:
            return []
        sign = -1 if self.option("activation_order") == "most_first" else 1
        history: list[dict] = []
        order: list[Car] = []
        for st in sorted({v.engine.st for v in live}, key=lambda n: sign * n):
            group = [v for v in live if v.engine.st == st]
            if len(group) > 1:
                members = {v.marker for v in group}
                known = next((ranked for n, ranked in state.tie_groups if n == st and members <= set(ranked)), None)
                if known is not None:
                    group = [state.vehicles[m] for m in known if m in members]
                elif dice:
                    group = yield from self._tie_break(state, group, history)
                    state.tie_groups.append((st, tuple(v.marker for v in group)))
            order += group
        before = [m for _, m in rest if state.vehicles[m].in_play]
        state.order = state.order[:state.turn] + [(v.owner, v.marker) for v in order]
        state.tie_rolls += history
        if [v.marker for v in order] == before and not history:
            return []
        return [f"the order ranked again by the ST on the engines now: "
                + ", ".join(f"{v.name} ({v.engine.st} ST)" for v in order)
                + (f" (tie rolled: {'; '.join(', '.join(f'{k} {f}' for k, f in h.items()) for h in history)})"
                   if history else "")]

    def turn_text(self, state: GameState) -> str:
        if state.over:
            return f"{state.winner} won" if state.winner else "the game is over"
        if state.round == 0:
            return "start round 1 (Round tab): the tokens on the engines set the order"
        v = state.active
        if v is not None:
            return f"round {state.round}: the {v.name}'s activation ({v.owner})"
        nxt = self.up_next(state)
        if nxt is None:
            return f"round {state.round} is over: start the next (Round tab)"
        return f"round {state.round}: the {nxt.name} ({nxt.owner}) activates next"

    def _up(self, state: GameState) -> Car | None:
        """The car whose turn it is (or is next). Casualties leave the order as they explode
        (`_leave_order`); a car not in play found here is stepped past all the same."""
        while 0 <= state.turn < len(state.order):
            v = state.vehicles[state.order[state.turn][1]]
            if v.in_play:
                return v
            state.turn += 1
        return None

    def up_next(self, state: GameState) -> Car | None:
        """As `_up`, but only looking (the page's views change nothing)."""
        for _, m in state.order[max(state.turn, 0):]:
            if state.vehicles[m].in_play:
                return state.vehicles[m]
        return None

    def end_activation(self, state: GameState):
        """The active car's activation ends (once it has moved, if its minimum is above 0).
        With no car active there is nothing to pass: every car activates once a round ("Game
        rounds and turns"), and the car up next can always activate, move (standing still is a
        brake) and end, so a round always ends."""
        v = state.active
        if v is None:
            if state.over:
                raise RulesError(f"the game is over ({state.winner or 'no one'} won)")
            if state.round == 0:
                raise RulesError("no round has started: start round 1 (the ST on the engines set the order)")
            up = self.up_next(state)
            if up is None:
                raise RulesError(f"round {state.round} is over: start the next round")
            raise RulesError(f"no car is taking its activation: the {up.name} ({up.owner}) activates next, and "
                             f"a car may not pass its activation (\"each car model may only activate once\" and "
                             f"a round ends \"once all players cars on the board have been activated\"; {R}, "
                             f"\"Game rounds and turns\"): 'activate' it, then end its turn")
        if not v.moved and v.in_play:
            lo, _ = v.speeds_in()
            if lo > 0:
                raise RulesError(f"the {v.name} must move (at least its minimum {lo} in, or less and brake) before "
                                 f"its activation ends ({R}, \"Car Movement/Engines\")")
        events = self._close_activation(state, v)
        rolled = len(state.tie_rolls)
        if self.option("activation_timing") == "each_activation":
            events += yield from self._rerank(state)
        events += self._next_up(state)
        up = self.up_next(state)
        return {"events": events, "next": state.active_marker, "up": up.marker if up is not None else None,
                "order": [m for _, m in state.order], "rolls": _tie_rolls(state.tie_rolls[rolled:])}

    def _finish_activation(self, state: GameState, v: Car) -> list[str]:
        """An activation ends without dice (a car that exploded in its own activation)."""
        events = self._close_activation(state, v)
        if self.option("activation_timing") == "each_activation":
            gen = self._rerank(state, dice=False)
            try:
                while True:
                    next(gen)
            except StopIteration as stop:
                events += stop.value or []
        return events + self._next_up(state)

    def _close_activation(self, state: GameState, v: Car) -> list[str]:
        state.activated.append(v.marker)
        state.active_marker = None
        if v.in_play:
            state.turn += 1                      # a casualty has left the order: `turn` is at the next car
        return [f"the {v.name}'s activation ends"]

    def _next_up(self, state: GameState) -> list[str]:
        events = []
        nxt = self._up(state)
        if nxt is None:
            events.append(f"round {state.round} is over")
            events += self._check_end(state, round_over=True)
        else:
            events.append(f"the {nxt.name} ({nxt.owner}) activates next")
        return events

    def _check_end(self, state: GameState, round_over: bool = False) -> list[str]:
        if state.over:
            return []
        standing = {v.owner for v in state.vehicles.values() if v.in_play}
        if len(standing) <= 1:
            state.over = True
            state.winner = next(iter(standing)) if standing else None
            who = f"{state.winner} is the last player with cars" if state.winner else "no cars are left"
            return [f"the game is over: {who}"]
        limit = self.option("round_limit")
        if round_over and limit is not None and state.round >= limit:
            state.over = True
            free = {p: sum(z != D.DT for v in state.vehicles.values() if v.in_play and v.owner == p
                           for c in v.components for z in c.zones) for p in state.players}
            best = max(free.values())
            top = [p for p, n in free.items() if n == best]
            state.winner = top[0] if len(top) == 1 else None
            return [f"the game is over after round {state.round}: "
                    + (f"{state.winner} wins with {best} AZ free of damage" if state.winner else "a draw")]
        return []

    # --- tokens -------------------------------------------------------------------------

    def _dt_zone(self, comp: Component) -> int | None:
        """Where a DT goes on a track: "bottom right to top left", by dt_over_st."""
        if self.option("dt_over_st") == "empty_first":
            empty = [i for i, z in enumerate(comp.zones) if z is None]
            if empty:
                return empty[-1]
        open_ = [i for i, z in enumerate(comp.zones) if z != D.DT]
        return open_[-1] if open_ else None

    def _card_order(self, car: Car) -> list[Component]:
        """Tracks in the order DT fill them: armour first, then bottom right to top left
        (the card's last component first)."""
        armour = [c for c in car.components if c.kind == ARMOUR]
        return armour + [c for c in reversed(car.components) if c.kind != ARMOUR]

    def _place_dt(self, car: Car, pick: str | None, who: str, forced: bool = False) -> tuple[Component, str]:
        """One DT on the car, on the picked track if armour allows, else by card order;
        `forced`: on the picked track whatever (a failed down shift "causes one DT to the Engine")."""
        note = ""
        armour = next((c for c in car.components if c.kind == ARMOUR and c.dt < c.az), None)
        comp = None
        if forced and car.component(pick).dt < car.component(pick).az:
            comp = car.component(pick)
        elif pick is not None:
            chosen = car.component(pick)
            if armour is not None and chosen is not armour:
                note = f" (armour first: {who} picked the {chosen.name})"
                comp = armour
            elif chosen.dt == chosen.az:
                note = f" (the {chosen.name} is full of DT; by card order)"
            else:
                comp = chosen
        if comp is None:
            comp = next(c for c in self._card_order(car) if c.dt < c.az)
        i = self._dt_zone(comp)
        knocked = comp.zones[i] == D.ST
        comp.zones[i] = D.DT
        return comp, note + (" knocking off an ST" if knocked else "")

    def _damage(self, state: GameState, car: Car, n: int, why: str, events: list, picks=(), pick_by: str = "",
                forced: bool = False):
        """n DT on the car; then an explosion if it is full of DT. `picks` the tracks named
        for each DT in turn (None: by card order)."""
        picks = list(picks)
        for k in range(n):
            if not car.in_play:
                return
            if car.wrecked:
                break
            pick = picks[k] if k < len(picks) else None
            comp, note = self._place_dt(car, pick, pick_by, forced)
            events.append(f"the {car.name} takes 1 DT on its {comp.name} ({why}){note}")
        if car.in_play and car.wrecked:
            self._explode(state, car, events)

    def _dt_tracks(self, car: Car) -> list[Component]:
        """The tracks a DT may be put on now: the armour while it has room ("DT must be applied
        here before any other AZ"), else every track with room (owner_first); with card_order
        only the next by card order."""
        if self.option("dt_allocation") == "card_order":
            return [c for c in self._card_order(car) if c.dt < c.az][:1]
        armour = [c for c in car.components if c.kind == ARMOUR and c.dt < c.az]
        return armour or [c for c in car.components if c.dt < c.az]

    def _dt_by(self, state: GameState, car: Car, player: str, why: str, events: list, may_decline: bool = False):
        """One DT on `car` that `player` places (the book's choice: a hit's first DT its owner's,
        the others the attacker's; a failed brake's the opponent's, who "may" place it): the
        player is asked which track when there is more than one (each fills from the right).
        Returns whether a DT was placed."""
        if not car.in_play or car.wrecked:
            return False
        tracks = self._dt_tracks(car)
        pick = tracks[0].id if tracks else None
        if len(tracks) > 1 or may_decline:
            options = tuple({"value": c.id, "label": f"the {c.name} ({c.dt} of {c.az} AZ hold DT)"} for c in tracks)
            if may_decline:
                options += ({"value": "none", "label": "no DT (the book says the opponent 'may')"},)
            pick = yield ChoiceRequest(player, f"where 1 DT goes ({why})", options, f"the {car.name}")
            if pick == "none":
                events.append(f"{player} puts no DT on the {car.name} ({why})")
                return False
            why = f"{why}; {player}'s pick"
        self._damage(state, car, 1, why, events, [pick], pick_by=player)
        return True

    def _opponent(self, state: GameState, v: Car) -> str:
        """Who places a failed brake's DT ("their opponent"; option brake_opponent)."""
        others = [p for p in state.players if p != v.owner]
        if self.option("brake_opponent") == "next_in_order":
            for _, m in state.order[max(state.turn, 0) + 1:]:
                o = state.vehicles[m]
                if o.in_play and o.owner != v.owner:
                    return o.owner
        return others[0]

    @staticmethod
    def _leave_order(state: GameState, car: Car) -> None:
        """A casualty is "removed" ("Attacking opponents", 6): it leaves the round's order, so
        nothing lists it or offers it an activation. `turn` keeps pointing at the same car (one
        before it leaving moves it back one); the active car leaving leaves it at the car after
        it, which its activation's end then does not step past (`_close_activation`)."""
        for k, (_, m) in enumerate(state.order):
            if m == car.marker:
                del state.order[k]
                if k < state.turn:
                    state.turn -= 1
                return

    def _explode(self, state: GameState, car: Car, events: list) -> None:
        """"Any car which has every AZ filled with DT explodes and is removed as a Casualty";
        "each model within a number of inches equal to the number of AZ in the cars Engine will
        take 1 DT" ("Exploding Cars")."""
        car.exploded = True
        self._leave_order(state, car)
        radius_in = car.engine.az
        events.append(f"the {car.name} explodes and is removed: every model within {radius_in} in takes 1 DT "
                      f"({R}, \"Exploding Cars\")")
        fp = car.footprint()
        for o in list(state.in_play()):
            if o.marker == car.marker or not o.in_play:
                continue
            if self.option("explosion_hits") == "other_players" and o.owner == car.owner:
                continue
            ofp = o.footprint()
            if self.option("explosion_measure") == "centre":
                d = float(shapely.distance(shapely.points(fp.centre), ofp.polygon))
            else:
                d = closest_distance(fp, ofp).distance_mm
            verdict = judge(f"the {o.name} from the blast", d, inches(radius_in),
                            math.hypot(fp.pose.axis_sigma_mm, ofp.pose.axis_sigma_mm))
            if verdict.outcome == "out":
                continue
            doubt = " (too close to call; it counts)" if verdict.outcome == TOO_CLOSE else ""
            events.append(f"the {o.name} is {d / MM_PER_IN:.2f} in from the blast{doubt}")
            self._damage(state, o, 1, f"the {car.name} exploding", events)

    # --- actions ------------------------------------------------------------------------

    def before_action(self, state: GameState, action: dict) -> None:
        if state.over:
            raise RulesError(f"the game is over ({state.winner or 'no one'} won)")

    def after_action(self, state: GameState, action: dict, result: dict) -> dict:
        """A car that exploded during its own activation ends it; then the game may be over."""
        result.setdefault("events", [])
        v = state.active
        if v is not None and not v.in_play:
            result["events"] += self._finish_activation(state, v)
        result["events"] += self._check_end(state)
        return result

    def _acting(self, state: GameState, action: dict, step: str) -> Car:
        v = state.vehicle(action.get("vehicle"))
        if not v.in_play:
            raise RulesError(f"the {v.name} has exploded")
        if v.pose is None:
            raise RulesError(f"the {v.name} is not on the table")
        if state.round == 0:
            raise RulesError("start a round first: the order comes from the engines' ST")
        if state.active_marker is None:
            up = self._up(state)
            if up is None:
                raise RulesError(f"round {state.round} is over; start the next round")
            if step != "activate":
                raise RulesError(f"the {up.name} activates next; its first action is 'activate'"
                                 + ("" if up is v else f" (not the {v.name})"))
            if up is not v:
                raise RulesError(f"it is the {up.name}'s turn ({up.owner}), not the {v.name}'s: cars activate "
                                 f"by the ST on their engines ({R}, \"Car Activation\")")
        elif state.active_marker != v.marker:
            raise RulesError(f"it is the {state.active.name}'s activation; end it before the {v.name} acts")
        elif step == "activate":
            raise RulesError(f"the {v.name} has already activated this round")
        return v

    def _check_activate(self, state: GameState, action: dict) -> tuple[Car, int]:
        """The activation's checks: the car up next, a down shift it can make."""
        v = self._acting(state, action, "activate")
        down = _int(action.get("downshift", 0) or 0, f"the {v.name}'s downshift")
        if down > v.engine.st:
            raise RulesError(f"the {v.name} has {v.engine.st} ST on its engine; it cannot down shift {down}")
        return v, down

    @action("activate", fields=ACTIVATE_FIELDS)
    def _act_activate(self, state: GameState, action: dict):
        """"remove all ST from their car except for those on their engine" (Down Shifting those if
        the player wishes), then one ST per visible +ST symbol ("Car Activation", "Down Shift")."""
        v, down = self._check_activate(state, action)
        engine = v.engine
        events, rolls = [], []
        state.active_marker = v.marker
        v.generated, v.allocated, v.moved, v.fired = None, False, False, []
        v.rerolls_left = v.swaps_left = 0
        cleared = 0
        for c in v.components:
            if c.kind != ENGINE:
                cleared += c.st
                c.zones = [None if z == D.ST else z for z in c.zones]
        if cleared:
            events.append(f"{cleared} ST removed from the {v.name}'s tracks (all but the engine's)")
        for k in range(down):
            i = max(i for i, z in enumerate(engine.zones) if z == D.ST)
            engine.zones[i] = None
        if down:
            free = D.FREE_DOWNSHIFTS if self.option("downshift_rolls") == "beyond_first" or down == 1 else 0
            events.append(f"the {v.name} down shifts {down} ST ({free} free)")
        extra = max(down - D.FREE_DOWNSHIFTS, 0)
        if extra and self.option("downshift_rolls") == "every_st":
            extra = down
        if extra:
            throw = yield DiceRequest((D.DIE,) * extra, f"down shift ({extra} rolled of {down}, 10+ each)", v.name)
            for face in throw.faces:
                ok = face >= D.BASE_TARGET
                rolls.append({"asked": "down shift", "face": face, "total": face, "modifiers": [],
                              "target": D.BASE_TARGET, "passed": ok})
                if not ok:
                    self._damage(state, v, 1, "a failed down shift", events, picks=["engine"], forced=True)
        if not v.in_play:
            return {"result": "exploded", "rolls": rolls, "events": events}
        v.engine_base = engine.st
        made = self.generation(v)
        if v.st_penalty:
            events.append(f"the {v.name} generates {v.st_penalty} ST fewer (blocking terrain last move)")
            made = max(made - v.st_penalty, 0)
            v.st_penalty = 0
        v.generated = made
        lo, hi = v.speeds_in()
        room, why = self._engine_room(v)
        events.append(f"the {v.name} activates: {made} ST generated, {engine.st} on its engine ({lo}-{hi} in); "
                      + (f"{'up to ' if room > 1 else ''}{room} more may go on its engine ({why})" if room
                         else f"none may go on its engine ({why})"))
        return {"result": "activated", "generated": made, "engine_st": engine.st, "engine_room": room,
                "rolls": rolls, "events": events}

    def _engine_room(self, v: Car) -> tuple[int, str]:
        """How many of the ST just generated may go on the engine, and what limits it: its Spark
        Plug ("the maximum number of ST that may be added to your Engine during it's activation"),
        its empty AZ (ST fill zones; a zone holding a token takes none) and the ST generated, the
        smallest of the three ("Car Movement/Engines")."""
        spark, empty, made = v.engine_type.spark_plug, v.engine.empty, v.generated or 0
        room = min(spark, empty, made)
        if room == empty and empty < spark:
            why = f"{empty} empty AZ left on it" if empty else "no empty AZ left on it"
        elif room == made and made < spark:
            why = f"{made} ST generated; its Spark Plug would take {spark}"
        else:
            why = f"its Spark Plug {spark}"
        return room, why

    def _allocation(self, v: Car, action: dict) -> dict[str, int]:
        """The ST the action puts on each track: its `st_<component>` fields (the page's form)."""
        raw = {}
        for key, value in action.items():
            if key.startswith("st_") and value not in (None, ""):
                raw[key[3:]] = value
        out = {}
        for cid, n in raw.items():
            comp = v.component(cid)
            out[comp.id] = _int(n, f"ST for the {v.name}'s {comp.name}")
        return out

    def _check_allocate(self, state: GameState, action: dict) -> tuple[Car, dict[str, int], int]:
        """The allocation's checks (nothing measured, nothing rolled): the car, ST per track, the total."""
        v = self._acting(state, action, "allocate")
        if v.generated is None:
            raise RulesError(f"the {v.name} has not generated its ST yet")
        if v.allocated:
            raise RulesError(f"the {v.name} has allocated its ST this activation (the rest were wasted)")
        alloc = self._allocation(v, action)
        total = sum(alloc.values())
        if total > v.generated:
            raise RulesError(f"the {v.name} allocates {total} ST but generated {v.generated}")
        spark = v.engine_type.spark_plug
        if alloc.get("engine", 0) > spark:
            raise RulesError(f"the {v.name}'s engine takes at most {spark} more ST this activation (its Spark Plug; "
                             f"{R}, \"Car Movement/Engines\"), not {alloc['engine']}")
        for cid, n in alloc.items():
            comp = v.component(cid)
            if n > comp.empty:
                raise RulesError(f"the {v.name}'s {comp.name} has {comp.empty} empty AZ; {n} ST do not fit")
            if comp.kind == ARMOUR and n:
                raise RulesError(f"the {v.name}'s armour takes no ST (it only soaks DT)")
            if comp.kind == WEAPON and not comp.weapon.needs_st and n:
                raise RulesError(f"the {v.name}'s {comp.name} does not use ST ({R}, \"Building a Car Cult\")")
        return v, alloc, total

    @action("allocate", fields=ALLOCATE_FIELDS)
    def _act_allocate(self, state: GameState, action: dict):
        """"allocates their ST to the required Action Zones tracks ... filling them top left to
        bottom right"; the engine takes at most its Spark Plug more; the rest is wasted."""
        v, alloc, total = self._check_allocate(state, action)
        events = []
        for comp in v.components:                # card order, whatever order the fields came in
            n = alloc.get(comp.id, 0)
            for i in [i for i, z in enumerate(comp.zones) if z is None][:n]:
                comp.zones[i] = D.ST
            if n:
                events.append(f"{n} ST on the {v.name}'s {comp.name}")
        v.allocated = True
        v.rerolls_left = v.crew_st("gutsy_gunner")
        v.swaps_left = v.crew_st("fanatical_fixer")
        wasted = v.generated - total
        if wasted:
            events.append(f"{wasted} ST not allocated: wasted")
        lo, hi = v.speeds_in()
        if v.immobile:
            events.append(f"the {v.name}'s engine is full of DT: it may no longer move ({R}, \"Attacking "
                          f"opponents\", 6)")
        elif hi == 0:
            events.append(f"the {v.name} has no ST on its engine: it does not move")
        else:
            events.append(f"the {v.name} must move {lo}-{hi} in (drift up to {lo // D.DRIFT_DIVISOR} in, "
                          f"{_turns(self.free_turns(v))} of 45 degrees)")
        return {"result": "allocated", "allocated": alloc, "wasted": wasted, "speeds_in": [lo, hi],
                "rolls": [], "events": events}
        yield

    def _ready(self, v: Car, what: str) -> None:
        if v.generated is None:
            raise RulesError(f"the {v.name} must activate (and allocate its ST) before it can {what}")

    # --- move ---------------------------------------------------------------------------

    def free_turns(self, v: Car) -> int:
        """One 45-degree turn per AZ "that has not been allocated any ST" (turn_zones, turn_dt)."""
        tracks = [v.engine] if self.option("turn_zones") == "engine" else v.components
        if self.option("turn_dt") == "free":
            return sum(c.az - c.st for c in tracks)
        return sum(c.empty for c in tracks)

    def check_path(self, state: GameState, v: Car, path: list[Pose]) -> dict:
        """Read a path (poses after the start) as the draft's move: straight ahead, with drift
        left and right and 45-degree turns ("Car Movement/Engines"). Returns the distance moved
        ahead, the drift each way and the turns, each judged; raises RulesError when the path
        cannot be a move at all (backwards)."""
        tol_mm = float(self.option("path_tolerance_mm"))
        tol_deg = float(self.option("turn_tolerance_deg"))
        poses = [v.pose, *path]
        along = offset = anchor = 0.0
        slides: list[float] = []                 # sideways movement counted, in order: + left, - right
        runs: list[float] = []
        cur = back = 0.0
        for a, b in zip(poses, poses[1:]):
            d = b.xy - a.xy
            signed = normalize_deg(b.heading_deg - a.heading_deg)
            # Turning summed into runs one way (a counter-turn within the tolerance is jitter).
            if cur == 0.0 or signed * cur >= 0:
                cur += signed + back
                back = 0.0
            else:
                back += signed
                if abs(back) > tol_deg:
                    runs.append(cur)
                    cur, back = back, 0.0
            # Each step read in the car's own frame (its heading half way through the step):
            # ahead, and sideways (drift). A car turning as it drives is turning, not drifting.
            mid = math.radians(a.heading_deg + signed / 2)
            fwd = np.array([math.cos(mid), math.sin(mid)])
            along += float(d @ fwd)
            offset += float(d @ np.array([-fwd[1], fwd[0]]))
            # Sideways movement counted in steps of more than the tolerance (hysteresis): a hand's
            # wobble or the camera's jitter is not drift, a deliberate slide is.
            if abs(offset - anchor) > tol_mm:
                slides.append(offset - anchor)
                anchor = offset
        runs.append(cur)
        # What is left over at the end finishes a slide already under way (or is one itself).
        rest = offset - anchor
        if rest > 0 and (any(x > 0 for x in slides) or rest > tol_mm):
            slides.append(rest)
        elif rest < 0 and (any(x < 0 for x in slides) or -rest > tol_mm):
            slides.append(rest)
        left, right, corrected = self._drift_ways(slides)
        if along < -tol_mm:
            raise RulesError(f"the {v.name}'s path goes {-along / MM_PER_IN:.2f} in backwards; cars move ahead in "
                             f"straight lines ({R}, \"Car Movement/Engines\")")
        turns = sum(int(math.ceil((abs(r) - tol_deg) / D.TURN_DEG - 1e-9)) for r in runs if abs(r) > tol_deg)
        lo, hi = v.speeds_in()
        drift_in = lo // D.DRIFT_DIVISOR
        sigma = math.hypot(v.pose.axis_sigma_mm, poses[-1].axis_sigma_mm)
        dist = max(along, 0.0)
        drift_total = left + right if self.option("drift") == "total" else max(left, right)
        return {"distance_mm": round(dist, 2), "distance_in": round(dist / MM_PER_IN, 3),
                "drift_left_mm": round(left, 2), "drift_right_mm": round(right, 2),
                "drift_corrected_mm": round(corrected, 2), "turns": turns, "turn_runs_deg": [round(r, 1) for r in runs if abs(r) > tol_deg],
                "free_turns": self.free_turns(v), "min_in": lo, "max_in": hi, "max_drift_in": drift_in,
                "maximum": judge("distance moved", dist, inches(hi), sigma),
                "minimum": judge("distance moved", dist, inches(lo), sigma, at_most=False),
                "drift": judge(f"drift ({self.option('drift').replace('_', ' ')})", drift_total, inches(drift_in),
                               sigma)}

    def _drift_ways(self, slides: list[float]) -> tuple[float, float, float]:
        """The drift left and right of a move's sideways slides (in order, + left, - right), and
        how much of them was a hand's correction: a slide back of at most drift_correction_mm
        right after one the other way is the hand bringing the car back to its mark, so the two
        count as their net (where the car ended up sideways), not as drift both ways."""
        ways: list[float] = []
        for x in slides:                          # a run of slides one way is one slide
            if ways and (ways[-1] > 0) == (x > 0):
                ways[-1] += x
            else:
                ways.append(x)
        most = float(self.option("drift_correction_mm"))
        net: list[float] = []
        corrected = 0.0
        for x in ways:
            if net and (net[-1] > 0) != (x > 0) and abs(x) <= most + 1e-9:
                corrected += min(abs(x), abs(net[-1]))
                merged = net.pop() + x
                if abs(merged) > 1e-9:
                    if net and (net[-1] > 0) == (merged > 0):
                        net[-1] += merged
                    else:
                        net.append(merged)
            else:
                net.append(x)
        return sum(x for x in net if x > 0), -sum(x for x in net if x < 0), corrected

    def judge_action(self, state: GameState, action: dict) -> dict | None:
        """The rules' answer on an action before it is resolved, from the checks its resolution
        makes before its first request (`_check_activate`, `_check_allocate`, `_check_fix`,
        `_check_attack`, `_check_move` and the move's `_plan_move`): the same code, so a refusal
        here is the resolution's word for word. Nothing is rolled, and nothing measured that the
        draft keeps unmeasured ("No pre-measuring"): an attack's range and sight are measured
        once it is declared, and a move is judged only while the page may draw its band
        (`_may_judge_move`); without pre-measuring a move taken as driven is not judged further
        (no margin to spare is told), only one refused or halted. None where they take it and
        have nothing to add. Changes nothing."""
        if not isinstance(action, dict):
            return None
        act = action.get("act")
        state = copy.deepcopy(state)             # the checks change nothing; a copy makes sure
        try:
            self.before_action(state, action)
            if act == "move":
                v, path = self._check_move(state, action)
                if not self._may_judge_move(state, v):
                    return None
                judged = self._judged_move(state, v, path, action)
                if judged["legal"] and "halts" not in judged and not self.may_premeasure():
                    return None                  # taken as driven: no margin is told without pre-measuring
                return judged
            check = {"activate": self._check_activate, "allocate": self._check_allocate, "fix": self._check_fix,
                     "attack": self._check_attack}.get(act)
            if check is not None:
                check(state, action)
        except RulesError as exc:
            return {"legal": False, "reasons": [str(exc)], **({"move": True} if act == "move" else {})}
        except (KeyError, TypeError):
            return None                          # a malformed action: its resolution says what is missing
        return None

    def judge_move(self, state: GameState, marker: int, to: Pose) -> dict:
        """Would a straight move (with drift and turns) from where the car stands to `to` be
        taken, and where would it end? Judged by the move's own plan (`_plan_move`, the code its
        resolution runs before any dice): `legal` is whether the resolution takes it, `reasons`
        why not (with `fix`: what makes it legal), `brakes` a brake roll short of the minimum,
        and `halts` (with `halt_at`) where it would stop against blocking terrain or another
        model. Changes nothing."""
        return self._judged_move(state, state.vehicle(marker), [to], {})

    def _move_fixes(self, state: GameState, v: Car, to: Pose) -> list[str]:
        """What a player does with the car in hand to make the move to `to` legal, in order
        (the page joins them with "and"): first turn it back within its free turns, then bring
        it forward (it went backwards) or back (past its maximum) along its line, then slide it
        sideways toward that line (drift). Each is computed on the pose the ones before leave,
        so doing them all is enough; each goes to the limit itself (margin 0, not the camera's
        doubt band), distances rounded up to 0.01 in, angles up to whole degrees.

        A one-step move is read as `check_path` reads it: ahead and sideways in the car's frame
        half way through its turn, so moving it along that frame's axes changes one and not the
        other. Braking short of the minimum is legal (a brake roll, "Car Movement/Engines") and
        blocking terrain halts a move rather than forbidding it, so neither needs a fix."""
        tol_mm = float(self.option("path_tolerance_mm"))
        tol_deg = float(self.option("turn_tolerance_deg"))
        start = v.pose
        fixes: list[str] = []
        pose = to

        def frame(p: Pose):
            turned = normalize_deg(p.heading_deg - start.heading_deg)
            mid = Pose(0.0, 0.0, start.heading_deg + turned / 2)
            d = p.xy - start.xy
            return turned, mid.forward, mid.left, float(d @ mid.forward), float(d @ mid.left)

        def moved(p: Pose, by_mm) -> Pose:
            return Pose(p.x_mm + float(by_mm[0]), p.y_mm + float(by_mm[1]), p.heading_deg, p.sigma_mm, p.sigma_deg)

        # Turns: one 45-degree turn per free AZ, a turn within the tolerance is none
        # (car-cult-2016-draft.txt, "Car Movement/Engines"); check_path counts ceil((|turned| - tol) / 45).
        turned = frame(pose)[0]
        allowed_deg = self.free_turns(v) * D.TURN_DEG + tol_deg
        if abs(turned) > allowed_deg + 1e-9:
            back_deg = math.ceil(abs(turned) - allowed_deg - 1e-9)
            side = "right" if turned > 0 else "left"      # headings count counter-clockwise: + is left
            fixes.append(f"turn it {back_deg}° {side}")
            pose = Pose(pose.x_mm, pose.y_mm, normalize_deg(pose.heading_deg - math.copysign(back_deg, turned)),
                        pose.sigma_mm, pose.sigma_deg)
        _, fwd, left, along, offset = frame(pose)
        # Straight ahead only: no reversing; at most the maximum ("Car Movement/Engines").
        _, hi = v.speeds_in()
        if along < -tol_mm:
            step_in = _up_in(-along - tol_mm + _STRICT_MM)     # "backwards" is strictly past it
            fixes.append(f"bring it {step_in:.2f} in forward (cars do not reverse)")
            pose = moved(pose, fwd * step_in * MM_PER_IN)
        elif along > inches(hi):
            step_in = _up_in(along - inches(hi))
            fixes.append(f"bring it {step_in:.2f} in back" + (f" (its maximum is {hi} in)" if hi else
                                                               " (it may not move)"))
            pose = moved(pose, -fwd * step_in * MM_PER_IN)
        # Drift: sideways movement past the tolerance counts whole; at most a quarter of the minimum,
        # rounded down ("Car Movement/Engines"). One step drifts one way, so "total" and "per_side"
        # read it alike.
        lo, _ = v.speeds_in()
        drift_mm = inches(lo // D.DRIFT_DIVISOR)
        limit_mm = max(drift_mm, tol_mm)
        if abs(offset) > limit_mm:
            # Within the tolerance it is no drift at all (a strict bound); past it, judged to the limit.
            step_in = _up_in(abs(offset) - limit_mm + (_STRICT_MM if drift_mm < tol_mm else 0.0))
            side = "right" if offset > 0 else "left"
            fixes.append(f"slide it {step_in:.2f} in {side}, toward its line")
            pose = moved(pose, -math.copysign(1.0, offset) * left * step_in * MM_PER_IN)
        return fixes

    def _move_faults(self, v: Car, m: dict) -> list[str]:
        faults = []
        if m["maximum"].outcome == "out":
            faults.append(f"the {v.name} moves {m['distance_in']:.2f} in; its maximum is {m['max_in']} in "
                          f"({R}, \"Car Movement/Engines\")")
        if m["drift"].outcome == "out":
            faults.append(f"the {v.name} drifts {m['drift_left_mm'] / MM_PER_IN:.2f} in left and "
                          f"{m['drift_right_mm'] / MM_PER_IN:.2f} in right; at most {m['max_drift_in']} in "
                          f"({self.option('drift').replace('_', ' ')}; a quarter of its {m['min_in']} in minimum, "
                          f"rounded down; {R}, \"Car Movement/Engines\")")
        if m["turns"] > m["free_turns"]:
            faults.append(f"the {v.name} makes {_turns(m['turns'])} of up to 45 degrees "
                          f"({', '.join(f'{r:+.0f}' for r in m['turn_runs_deg'])} deg); it has {m['free_turns']} "
                          f"AZ free of ST ({self.option('turn_zones')}; {R}, \"Car Movement/Engines\")")
        return faults

    def _on_table(self, state: GameState, fp: Footprint) -> bool:
        w, d = state.table_mm
        c = fp.corners
        return bool((c[:, 0] >= -1e-6).all() and (c[:, 1] >= -1e-6).all() and (c[:, 0] <= w + 1e-6).all()
                    and (c[:, 1] <= d + 1e-6).all())

    def _has_ram(self, v: Car) -> bool:
        return any(c.kind == WEAPON and c.key == "reinforced_ram" and c.dt < c.az for c in v.components)

    def _halt(self, state: GameState, v: Car, polys, inner) -> tuple[int, str, object] | None:
        """The first touch of blocking terrain or another model along the route (index into the
        dense poses, kind, what). A piece touched from the start counts once the car drives into it."""
        contact = float(self.option("contact_mm"))
        found = []
        things = [(t, "terrain", t.polygon) for t in state.terrain if t.kind not in ROUGH_KINDS]
        things += [(o, "car", o.footprint().polygon) for o in state.in_play() if o.marker != v.marker]
        for what, kind, poly in things:
            touching = shapely.distance(polys, poly) <= contact
            if not touching.any():
                continue
            if touching[0]:
                into = np.flatnonzero(shapely.intersects(inner, poly))
                if len(into):
                    found.append((int(into[0]), kind, what))
                continue
            found.append((int(np.flatnonzero(touching)[0]), kind, what))
        return min(found, key=lambda f: f[0]) if found else None

    @staticmethod
    def _touch_mm(dense, polys, ahead, stop: int, poly) -> float:
        """How far the car had moved when it touched `poly`: from its halt (the first pose
        within contact_mm), the gap still left added, or where the path went on into it, if
        sooner."""
        touch = ahead[stop] + float(shapely.distance(polys[stop], poly))
        into = np.flatnonzero(shapely.intersects(polys[stop:], poly))
        return min(touch, ahead[stop + int(into[0])]) if len(into) else touch

    def _check_move(self, state: GameState, action: dict) -> tuple[Car, list[Pose]]:
        """The move's checks that measure nothing: its turn, its ST generated, not moved yet, an
        engine that still runs; the path read (standing still: no path)."""
        v = self._acting(state, action, "move")
        self._ready(v, "move")
        if v.moved:
            raise RulesError(f"the {v.name} has already moved this activation")
        if v.immobile:
            raise RulesError(f"the {v.name}'s engine is full of DT; it may no longer move ({R}, "
                             f"\"Attacking opponents\", 6)")
        path = [parse_pose(p, f"move of the {v.name}, path pose {k + 1}") for k, p in enumerate(action.get("path") or [])]
        return v, path or [v.pose]               # standing still: a brake for the whole minimum

    def _plan_move(self, state: GameState, v: Car, path: list[Pose], action: dict) -> dict:
        """Everything the move's resolution works out before its first request, the dice aside:
        the path read as the draft's move (`check_path`), what refuses it (too far, too much
        drift or turning, off the table, a mine marker off the route: `refusal`, None when it is
        taken), and where it ends: the first touch of blocking terrain or another model halts it
        (`halt`: the index into the dense poses, kind, what). The move's resolution and
        `judge_move` both read this, so they cannot disagree. Changes nothing."""
        m = self.check_path(state, v, path)
        plan = {"m": m, "refusal": None, "halt": None, "stop": None, "dense": None, "spots": [], "unplaced": 0}
        faults = self._move_faults(v, m)
        if faults:
            plan["refusal"] = "; ".join(faults)
            return plan
        dense = [v.pose]
        for a, b in zip([v.pose, *path], path):
            dense += interpolate(a, b, 1.0, 1.0)
        if any(not self._on_table(state, v.footprint(p)) for p in dense):
            plan["refusal"] = f"the {v.name}'s path leaves the table"
            return plan
        # Ground covered ahead up to each dense pose (for a halt's shortfall, rough terrain).
        ahead = [0.0]
        for a, b in zip(dense, dense[1:]):
            mid = normalize_deg(a.heading_deg + normalize_deg(b.heading_deg - a.heading_deg) / 2)
            ahead.append(ahead[-1] + max(float((b.xy - a.xy) @ Pose(0, 0, mid).forward), 0.0))
        scale = m["distance_mm"] / ahead[-1] if ahead[-1] > 1e-6 else 1.0
        ahead = [x * scale for x in ahead]       # the move's own measure of its length
        polys = shapely.polygons([v.footprint(p).corners for p in dense])
        contact = float(self.option("contact_mm"))
        inner = shapely.buffer(polys, -contact, join_style="mitre")
        halt = self._halt(state, v, polys, inner)
        stop = len(dense) - 1 if halt is None else halt[0]
        plan.update(dense=dense, ahead=ahead, polys=polys, halt=halt, stop=stop)
        try:
            plan["spots"] = self._mine_spots(state, v, action, dense[:stop + 1], polys[:stop + 1], ahead[:stop + 1])
            plan["unplaced"] = sum(c.st for c in v.components if c.kind == WEAPON and c.key == "mines") - len(plan["spots"])
        except RulesError as exc:
            plan["refusal"] = str(exc)
        return plan

    def _halt_words(self, state: GameState, v: Car, plan: dict) -> dict | None:
        """A planned halt as players say it: what it touches, after how far, where it stands."""
        if plan.get("halt") is None:
            return None
        index, kind, what = plan["halt"]
        dense, polys, ahead, stop = plan["dense"], plan["polys"], plan["ahead"], plan["stop"]
        touch_mm = self._touch_mm(dense, polys, ahead, stop,
                                  what.footprint().polygon if kind == "car" else what.polygon)
        name = f"the {what.name}" if kind == "car" or what.name else "blocking terrain"
        at = dense[stop]
        return {"kind": kind, "touches": name, "touch_mm": touch_mm, "at": at,
                "rammed": kind == "car" and self._has_ram(v) and self.option("ram_collision") == "no_halt",
                "why": f"halted where it touched {name}"}

    def _may_judge_move(self, state: GameState, v: Car) -> bool:
        """May the page judge this car's move before it is resolved? Where the table measures
        freely, always; without pre-measuring only while its move band is drawn (the tape laid
        along a move being made; `move_band`)."""
        return self.may_premeasure() or self._band_shown(state, v)

    def _judged_move(self, state: GameState, v: Car, path: list[Pose], action: dict) -> dict:
        """A move judged by its plan, as `judge_move` and `judge_action` give it."""
        fix_to = path[-1]
        try:
            plan = self._plan_move(state, v, path, action)
        except RulesError as exc:
            return {"legal": False, "reasons": [str(exc)], "fix": self._move_fixes(state, v, fix_to), "move": True}
        m = plan["m"]
        out = {k: (x.to_json() if hasattr(x, "to_json") else x) for k, x in m.items()}
        if plan["refusal"] is not None:
            return {"legal": False, "reasons": [plan["refusal"]], "fix": self._move_fixes(state, v, fix_to),
                    "brakes": m["minimum"].outcome == "out", "move": True, **out}
        close = any(m[k].outcome == TOO_CLOSE for k in ("maximum", "drift", "minimum"))
        judged = {"legal": True, "reasons": [], "fix": [], "brakes": m["minimum"].outcome == "out", "move": True,
                  "verdict": TOO_CLOSE if close else "in", "margin_mm": round(m["maximum"].margin_mm, 2), **out}
        halt = self._halt_words(state, v, plan)
        if halt is not None:
            at = halt["at"]
            judged.update(brakes=False, halt_at=[round(at.x_mm, 2), round(at.y_mm, 2), round(at.heading_deg, 2)],
                          halts=f"it halts where it touches {halt['touches']}, after "
                                f"{halt['touch_mm'] / MM_PER_IN:.2f} in" +
                                ("" if halt["rammed"] else f" ({R}, \"Down Shift\": \"Cars must halt their movement "
                                                           f"when they touch Blocking terrain\")"))
        return judged

    @action("move", fields=MOVE_FIELDS)
    def _act_move(self, state: GameState, action: dict):
        """The move: the camera's path checked (distance, drift, turns), mines laid along the route,
        then what it met in order: mines it came within 4" of, rough terrain, a blocking halt (or a
        brake short of the minimum). Everything that can refuse it comes first (`_plan_move`),
        before any request."""
        v, path = self._check_move(state, action)
        plan = self._plan_move(state, v, path, action)
        if plan["refusal"] is not None:
            raise RulesError(plan["refusal"])
        m, dense, polys, ahead = plan["m"], plan["dense"], plan["polys"], plan["ahead"]
        halt, stop = plan["halt"], plan["stop"]
        v.allocated = True                       # ST not allocated by now are wasted
        events, rolls = [], []
        for key in ("maximum", "drift"):
            if m[key].outcome == TOO_CLOSE:
                events.append(f"{m[key].describe()}: too close to call, so the move stands")
        ram = self._has_ram(v)
        # Mines it came within range of, in path order; rough terrain crossed (both on the route
        # driven up to a halt).
        triggered = self._mine_triggers(state, v, dense[:stop + 1], [])
        rough = self._rough(state, v, dense[:stop + 1], polys[:stop + 1], ahead[:stop + 1])
        v.moved = True
        words = self._halt_words(state, v, plan)
        if words is not None:
            # "Cars must halt their movement when they touch Blocking terrain": the car is put where
            # it touched, before anything that reads where it stands (its mines, an explosion).
            yield from self.place(state, v, dense[stop], words["why"])
        else:
            v.pose = dense[stop]
        # Mines allocated: laid along the route actually driven, then their ST become DT.
        spots = list(plan["spots"])
        for k in range(plan["unplaced"]):
            spots.append((yield from self._ask_mine_spot(state, v, state.next_mine + len(spots),
                                                          dense[:stop + 1], ahead[:stop + 1])))
        route = shapely.union_all(polys[:stop + 1]).buffer(float(self.option("contact_mm")))
        where = [self._mine_words(p, dense[:stop + 1], ahead[:stop + 1], route) for p in spots]
        laid = self._lay_mines(state, v, spots, events, _route_outline(polys[:stop + 1]), where)
        for index, mine in triggered:
            if not v.in_play:
                break
            yield from self._mine_attack(state, mine, v, events, rolls)
        crossed = []
        for piece, inches_through in rough:
            if not v.in_play:
                break
            whole = (int(math.floor(inches_through + 1e-9)) if self.option("rough_rounding") == "down"
                     else round(inches_through, 2))
            # What was measured, to a hundredth of a millimetre: the roll's words round it.
            crossed.append({"piece": piece.name or "rough terrain", "through_mm": round(inches_through * MM_PER_IN, 2),
                            "through_in": round(inches_through, 4), "subtracted": whole})
            face = (yield DiceRequest((D.DIE,), f"rough terrain {piece.name or ''} (10+, -{whole})".replace("  ", " "),
                                      v.name)).faces[0]
            ok = face - whole >= D.BASE_TARGET
            rolls.append({"asked": f"rough terrain {piece.name}", "face": face, "total": face - whole,
                          "modifiers": [{"value": -whole, "reason": f"{_inches_text(inches_through)} in of rough terrain"}],
                          "target": D.BASE_TARGET, "passed": ok})
            if ok:
                events.append(f"the {v.name} crosses {piece.name or 'rough terrain'} unharmed")
            else:
                self._damage(state, v, 1, f"rough terrain {piece.name}", events)
        result = "moved"
        moved_mm = ahead[stop]
        lo = m["min_in"]
        if v.in_play and halt is not None:
            _, kind, what = halt
            # Counted to the touch itself: the halt is the first pose within contact_mm (the
            # camera's "touching"), up to that much short of it, and a whole inch short is
            # counted from the touch, not from a hair before it.
            touch_mm = words["touch_mm"]
            short = max(int(math.floor(_whole_within((inches(lo) - touch_mm) / MM_PER_IN,
                                                      _doubt_in(m["minimum"])))), 0)
            name = what.name if kind == "car" else (what.name or "blocking terrain")
            events.append(f"the {v.name} touches {words['touches']} after {touch_mm / MM_PER_IN:.2f} in and halts "
                          f"there")
            if kind == "car" and ram and self.option("ram_collision") == "no_halt":
                result = "rammed"
                events.append(f"the {v.name}'s Reinforced Ram: no DT from the collision and its engine keeps its "
                              f"ST ({R}, \"Building a Car Cult\")")
            else:
                result = "halted"
                dropped = v.engine.st
                v.engine.zones = [None if z == D.ST else z for z in v.engine.zones]
                events.append(f"all {dropped} ST removed from the {v.name}'s engine; {short} in short of its "
                              f"{lo} in minimum")
                if self.option("blocking_damage") == "st_penalty":
                    if short and not (kind == "car" and ram):
                        v.st_penalty += short
                        events.append(f"the {v.name} will generate {short} ST fewer next activation")
                    if kind == "car" and short:
                        what.st_penalty += short
                        events.append(f"the {what.name} will generate {short} ST fewer next activation")
                else:
                    if kind == "car" and short:
                        # "treat all other models as Blocking terrain and apply DT to both models"
                        self._damage(state, what, short, f"the {v.name} driving into it", events)
                    if short and not (kind == "car" and ram):
                        self._damage(state, v, short, f"halted by {name}", events)
        elif v.in_play and m["minimum"].outcome == "out":
            result = "braked"
            short_in = (inches(lo) - moved_mm) / MM_PER_IN
            rounding = self.option("brake_rounding")
            whole = _whole_within(short_in, _doubt_in(m["minimum"]))
            minus = {"down": math.floor(whole), "up": math.ceil(whole)}.get(rounding)
            minus = round(short_in, 2) if minus is None else int(minus)
            face = (yield DiceRequest((D.DIE,), f"braking (10+, -{minus})", v.name)).faces[0]
            total = face - minus
            ok = total >= D.BASE_TARGET
            rolls.append({"asked": "braking", "face": face, "total": total, "target": D.BASE_TARGET, "passed": ok,
                          "modifiers": [{"value": -minus, "reason": f"{short_in:.2f} in short of the {lo} in minimum"}]})
            events.append(f"the {v.name} brakes {short_in:.2f} in short of its {lo} in minimum: {face} - {minus} = "
                          f"{total:g}")
            if not ok:
                yield from self._dt_by(state, v, self._opponent(state, v), "braking", events, may_decline=True)
        elif v.in_play and m["minimum"].outcome == TOO_CLOSE:
            events.append(f"{m['minimum'].describe()}: too close to call, so no brake")
        out = {k: (x.to_json() if hasattr(x, "to_json") else x) for k, x in m.items()}
        events.insert(0, f"the {v.name} moves {moved_mm / MM_PER_IN:.2f} in from where it stood "
                         f"({_turns(m['turns'])}, drift {m['drift_left_mm'] / MM_PER_IN:.2f} in left "
                         f"{m['drift_right_mm'] / MM_PER_IN:.2f} in right)")
        return {"result": result, "move": out, "moved_mm": round(moved_mm, 2), "mines_laid": [mn.id for mn in laid],
                "mines_triggered": [mn.id for _, mn in triggered], "rough": crossed, "rolls": rolls, "events": events}

    def _mine_spots(self, state: GameState, v: Car, action: dict, dense, polys, ahead) -> list[tuple[float, float]]:
        """Where the mines allocated go that the player picked a point for (each on the route
        driven, by mine_placement); the rest are asked for as the move resolves
        (`_ask_mine_spot`). A RulesError names a marker that may not be where it was put.
        Changes nothing."""
        comps = [c for c in v.components if c.kind == WEAPON and c.key == "mines" and c.st]
        n = sum(c.st for c in comps)
        given = []
        for k in range(1, D.MOST_MINE_POINTS + 1):
            if action.get(f"mine_{k}") is not None:
                given.append(action[f"mine_{k}"])
        if len(given) > n:
            raise RulesError(f"{len(given)} mine markers placed but the {v.name} has {n} ST on mines "
                             f"(one marker per ST; {R}, \"Building a Car Cult\")")
        if not n:
            return []
        route = shapely.union_all(polys).buffer(float(self.option("contact_mm")))
        spots = []
        for k, p in enumerate(given):
            if (not isinstance(p, (list, tuple)) or len(p) != 2
                    or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in p)):
                raise RulesError(f"mine {k + 1}: a point [x_mm, y_mm], not {p!r}")
            if self.option("mine_placement") == "on_route" and not shapely.contains_xy(route, p[0], p[1]):
                gap = float(shapely.distance(route, shapely.points(p)))
                raise RulesError(f"mine {k + 1}, where it was picked, is {gap / MM_PER_IN:.2f} in off the {v.name}'s route; "
                                 f"mines go \"along the Cars route\" ({R}, \"Building a Car Cult\")")
            spots.append((float(p[0]), float(p[1])))
        return spots

    def _ask_mine_spot(self, state: GameState, v: Car, mine_id: int, dense, ahead):
        """Where a mine no point was picked for goes: its layer's owner is asked (the book's
        "Place one Mine marker along the Cars route" is the player's act, never the rules'),
        among points on the centre of the route driven, every whole inch back from where the
        car stopped, and where it started. A route with one point (a car that stood still)
        leaves no choice. Returns the (x_mm, y_mm) chosen."""
        total_in = ahead[-1] / MM_PER_IN
        backs = list(range(int(math.floor(total_in + 1e-9)) + 1))
        if total_in - backs[-1] > 0.05:
            backs.append(round(total_in, 2))

        def label(d):
            if d == 0:
                return "where it stopped"
            return f"{d:g} in back along its route" + (": where it started" if d == backs[-1] else "")
        pick = backs[0]
        if len(backs) > 1:
            pick = yield ChoiceRequest(v.owner, f"where the {v.name}'s mine {mine_id} goes along its route",
                                       tuple({"value": d, "label": label(d)} for d in backs))
        want = ahead[-1] - pick * MM_PER_IN
        i = min(range(len(ahead)), key=lambda j: abs(ahead[j] - want))
        return float(dense[i].x_mm), float(dense[i].y_mm)

    def _mine_words(self, spot, dense, ahead, route) -> str:
        """Where a mine was laid, as a player finds it: how far back along the route from where
        the car stopped (or how far off the route, where `mine_placement` lets it be)."""
        gap = float(shapely.distance(route, shapely.points(spot))) if route is not None else 0.0
        if gap > 1e-6:
            return f"{gap / MM_PER_IN:.1f} in off its route, where its player put it"
        d = np.hypot(np.array([p.x_mm for p in dense]) - spot[0], np.array([p.y_mm for p in dense]) - spot[1])
        back = (ahead[-1] - ahead[int(np.argmin(d))]) / MM_PER_IN
        return "on its route, where it stopped" if back < 0.05 else f"on its route, {back:.1f} in back from where it stopped"

    def _lay_mines(self, state: GameState, v: Car, spots, events: list, route=(), where=()) -> list[Mine]:
        """The markers laid where the player put them (each knowing the route it was laid
        along, for the board; `where` says each in words); then the mines' ST become DT."""
        comps = [c for c in v.components if c.kind == WEAPON and c.key == "mines" and c.st]
        if not comps:
            return []
        laid = []
        for k, (x, y) in enumerate(spots):
            mine = Mine(state.next_mine, v.marker, v.owner, x, y, state.round, route)
            state.next_mine += 1
            state.mines.append(mine)
            laid.append(mine)
            events.append(f"the {v.name} lays mine {mine.id} {where[k] if k < len(where) else 'on its route'} "
                          f"(drawn on the board)")
        for c in comps:
            k = c.st
            c.zones = [D.DT if z == D.ST else z for z in c.zones]
            events.append(f"the {c.name}' {k} ST become DT (\"then replace ST with DT\")")
        if v.wrecked:
            self._explode(state, v, events)
        return laid

    def _mine_triggers(self, state: GameState, v: Car, dense, laid) -> list[tuple[int, Mine]]:
        if len(dense) < 2:
            return []
        reach = inches(D.WEAPONS["mines"].range_in)
        out = []
        pts = None
        for mine in state.mines:
            if mine in laid:
                continue
            if self.option("mine_targets") == "enemies" and mine.owner == v.owner:
                continue
            if pts is None:
                pts = shapely.polygons([v.footprint(p).corners for p in dense])
            # "Within" 4 in: exactly 4 in is within, floating point's last digits aside (as judge()).
            near = shapely.distance(pts, shapely.points((mine.x_mm, mine.y_mm))) <= reach + 1e-6
            if not near.any():
                continue
            if self.option("mine_trigger") == "enters":
                entering = np.flatnonzero(near[1:] & ~near[:-1])
                if len(entering):
                    out.append((int(entering[0]) + 1, mine))
            else:
                out.append((int(np.flatnonzero(near)[0]), mine))
        return sorted(out, key=lambda t: t[0])

    def _mine_attack(self, state: GameState, mine: Mine, v: Car, events: list, rolls: list):
        """A mine's attack: Blast 10, Damage 2, 1 shot, at the car that set it off; the marker is
        removed after it ("Mines")."""
        w = D.WEAPONS["mines"]
        events.append(f"the {v.name} comes within {w.range_in} in of mine {mine.id}: it goes off")
        mods = self._attack_mods(v, w.blast, mine.owner)
        if v.crew_st("dangerous_driver") and not self._driver_counts(v, mine.owner):
            events.append(f"the {v.name}'s Dangerous Driver does not count against its own side's mine "
                          f"(\"a -2 to enemy Attack rolls\")")
        throw = yield DiceRequest((D.DIE,), f"mine {mine.id} attack (10+)", state.vehicles[mine.layer].name)
        hit, row = self._hit(throw.faces[0], mods, f"mine {mine.id} at the {v.name}")
        rolls.append(row)
        state.mines.remove(mine)
        if hit:
            # An attack's DT: the target's owner places the first, the layer's owner (the
            # attacking player) the other ("Attacking opponents", 6).
            for k in range(w.damage):
                who = v.owner if k == 0 else mine.owner
                yield from self._dt_by(state, v, who, f"mine {mine.id}" + (", the hit's first DT" if k == 0 else ""),
                                       events)
        else:
            events.append(f"mine {mine.id} misses the {v.name}")
        events.append(f"mine {mine.id} is removed")

    def _rough(self, state, v: Car, dense, polys, ahead) -> list[tuple[object, float]]:
        """Each time the car moves through rough terrain: the piece and the inches moved through it."""
        out = []
        how = self.option("rough_measure")
        step = np.diff(np.asarray(ahead, dtype=float), prepend=0.0)     # ground covered into each pose
        points = None
        for t in state.terrain:
            if t.kind not in ROUGH_KINDS:
                continue
            if how == "centre_path":
                on = shapely.contains_xy(t.polygon, [p.x_mm for p in dense], [p.y_mm for p in dense])
            else:
                on = shapely.intersects(polys, t.polygon)
            if on.any() and points is None:
                points = _outline_points(v, dense)                      # (poses, points, 2)
            k = 0
            while k < len(dense):
                if not on[k]:
                    k += 1
                    continue
                j = k
                while j + 1 < len(dense) and on[j + 1]:
                    j += 1
                # The steps of this pass: into its first pose (from outside) to out of its last.
                lo, hi = max(k, 1), min(j + 1, len(dense) - 1)
                if how == "centre_path":
                    frac = _inside_fraction(t.polygon, points[lo - 1:hi, -1:], points[lo:hi + 1, -1:])[:, 0]
                    through = float((step[lo:hi + 1] * frac).sum())
                elif how == "deepest_point":
                    # Each point's ground over the piece on this pass, to the part of a step it
                    # was over it (whole steps over-read a strip by up to a step); the deepest one's.
                    frac = _inside_fraction(t.polygon, points[lo - 1:hi], points[lo:hi + 1])
                    through = float((step[lo:hi + 1, None] * frac).sum(axis=0).max())
                else:
                    # Any part over it: every step of the pass but the first and the one leaving,
                    # those to the part of the step some point of the car was over it.
                    frac = _inside_fraction(t.polygon, points[lo - 1:hi], points[lo:hi + 1]).max(axis=1)
                    frac[(np.arange(lo, hi + 1) > k) & (np.arange(lo, hi + 1) <= j)] = 1.0
                    through = float((step[lo:hi + 1] * frac).sum())
                through /= MM_PER_IN
                if through > 1e-6:
                    out.append((t, through))
                k = j + 1
        return out

    # --- attacks ------------------------------------------------------------------------

    def _driver_counts(self, target: Car, attacker_owner: str) -> bool:
        """Does the target's Dangerous Driver count against this attack? "applies a -2 to enemy
        Attack rolls" (`driver_penalty`): by default only against another player's."""
        return self.option("driver_penalty") == "every_attack" or attacker_owner != target.owner

    def _attack_mods(self, target: Car, blast: int, attacker_owner: str) -> list[Modifier]:
        lo, _ = target.speeds_in()
        mods = [Modifier(blast, "Blast")]
        if lo:
            mods.append(Modifier(-lo, f"the {target.name}'s minimum speed {lo} in"))
        driver = target.crew_st("dangerous_driver")
        if driver and self._driver_counts(target, attacker_owner):
            mods.append(Modifier(D.DANGEROUS_DRIVER_PER_ST * driver, f"the {target.name}'s Dangerous Driver, {driver} ST"))
        return mods

    def _hit(self, face: int, mods: list[Modifier], what: str) -> tuple[bool, dict]:
        roll = Roll(DiceRequest((D.DIE,), what), face, tuple(mods))
        if face == D.CRACK_SHOT:
            hit, note = True, "Crack Shot"
        elif face == D.CRAP_SHOT:
            hit, note = False, "Crap Shot"
        else:
            hit, note = roll.total >= D.BASE_TARGET, ""
        return hit, {**roll.to_json(), "target": D.BASE_TARGET, "passed": hit, **({"note": note} if note else {})}

    def _obstacles(self, state: GameState, me: Footprint, them: Footprint) -> Obstacles:
        terrain = [t for t in state.terrain if t.blocks_sight]
        cars = [o.footprint() for o in state.in_play() if o.marker not in (me.id, them.id)] \
            if self.option("cars_block_sight") else []
        return Obstacles(terrain, cars)

    def sight(self, state: GameState, me: Footprint, them: Footprint):
        return self._obstacles(state, me, them).line_of_sight(me, them)

    def range_distance(self, state: GameState, me: Footprint, them: Footprint) -> Distance:
        """The distance a weapon's range is judged on (range_measure): the closest points, or the
        shortest line between the two that nothing interrupts."""
        dist = closest_distance(me, them)
        if self.option("range_measure") == "closest_points" or dist.distance_mm <= 0.0:
            return dist
        obstacles = self._obstacles(state, me, them)
        if obstacles.empty:
            return dist
        one = np.array([me.id]), np.array([them.id])
        if not obstacles.hits(np.array([dist.from_point]), np.array([dist.to_point]), *one).any():
            return dist
        pa = np.asarray(shapely.segmentize(me.polygon, _OUTLINE_STEP_MM).exterior.coords)[:-1]
        pb = np.asarray(shapely.segmentize(them.polygon, _OUTLINE_STEP_MM).exterior.coords)[:-1]
        starts, ends = np.repeat(pa, len(pb), axis=0), np.tile(pb, (len(pa), 1))
        n = len(starts)
        clear = ~obstacles.hits(starts, ends, np.full(n, me.id), np.full(n, them.id)).any(axis=1)
        if not clear.any():
            return dist                          # no line of sight: no attack whatever the range
        length = np.hypot(*(ends - starts).T)
        k = int(np.flatnonzero(clear)[np.argmin(length[clear])])
        return Distance(float(length[k]), (float(starts[k, 0]), float(starts[k, 1])),
                        (float(ends[k, 0]), float(ends[k, 1])), dist.sigma_mm)

    def reach(self, state: GameState, v: Car, comp: Component, target: Car) -> dict:
        """Range by closest points and line of sight between any parts (stage 3)."""
        w = comp.weapon
        me, them = v.footprint(), target.footprint()
        dist = self.range_distance(state, me, them)
        limit = inches(w.range_in) if w.range_in else float(self.option("contact_mm"))
        rng = dist.within(limit, f"range of the {w.name}")
        seen = self.sight(state, me, them)
        return {"distance": dist, "range": rng, "sight": seen}

    def _check_attack(self, state: GameState, action: dict):
        """The attack's checks as it is declared, nothing measured (stages 1 and 2 of "Attacking
        opponents"): the car, the weapon, its shots, the target."""
        v = self._acting(state, action, "attack")
        self._ready(v, "attack")
        comp = v.component(str(action.get("weapon")))
        w = comp.weapon
        if w is None:
            raise RulesError(f"the {v.name}'s {comp.name} is not a weapon")
        if w.special == "mines":
            raise RulesError(f"mines are laid along the route as the {v.name} moves, not fired")
        if comp.id in v.fired:
            raise RulesError(f"the {v.name}'s {comp.name} has attacked this activation")
        if w.needs_st:
            if not comp.st:
                raise RulesError(f"the {v.name}'s {comp.name} has no ST: \"When an ST is applied to a weapon upgrade "
                                 f"the player may perform an Attack action\" ({R}, \"Attacking opponents\", 2)")
            shots = w.shots * comp.st
        else:
            if comp.dt == comp.az:
                raise RulesError(f"the {v.name}'s {comp.name} is full of DT")
            shots = w.shots
        target = state.vehicle(action.get("target"))
        if not target.in_play or target.pose is None:
            raise RulesError(f"the {target.name} is not in play")
        if target.owner == v.owner:
            raise RulesError(f"the {target.name} is {v.owner}'s own car; attacks target an opposing model")
        return v, comp, w, shots, target

    @action("attack", fields=ATTACK_FIELDS)
    def _act_attack(self, state: GameState, action: dict):
        """Stages 1-6 of "Attacking opponents": target, ST on the weapon, range and sight, the
        dice (Crack and Crap Shots, rerolls), Blast and speed modifiers, damage."""
        v, comp, w, shots, target = self._check_attack(state, action)
        v.allocated = True
        # Stage 3, once the attack is declared: the measurement, recorded in the outcome.
        m = self.reach(state, v, comp, target)
        rng, seen, dist = m["range"], m["sight"], m["distance"]
        events, rolls = [], []
        measured = {"range": rng.to_json(), "range_text": rng.describe(),
                    "distance_mm": round(dist.distance_mm, 2), "distance_in": round(dist.distance_mm / MM_PER_IN, 3),
                    "range_in": w.range_in, "range_line": [list(map(float, dist.from_point)),
                                                            list(map(float, dist.to_point))],
                    "line_of_sight": seen.clear, "blocked_by": list(seen.blocked_by),
                    "line": [list(seen.line[0]), list(seen.line[1])]}
        if rng.outcome == "out" or not seen.clear:
            why = (rng.describe() if rng.outcome == "out" else
                   f"no line of sight (blocked by {', '.join(seen.blocked_by)})")
            if self.option("out_of_range") == "refused":
                raise RulesError(f"the {v.name}'s {w.name} cannot attack the {target.name}: {why}")
            v.fired.append(comp.id)
            events.append(f"the {v.name}'s {w.name} at the {target.name}: {why}; the attack is lost")
            return {"result": "no attack", **measured, "rolls": [], "events": events}
        if rng.outcome == TOO_CLOSE:
            events.append(f"{rng.describe()}: too close to call, so the attack goes ahead")
        v.fired.append(comp.id)
        mods = self._attack_mods(target, w.blast, v.owner)
        throw = yield DiceRequest((D.DIE,) * shots, f"{w.name} attack (10+)", v.name)
        faces = list(throw.faces)
        results = [self._hit(f, mods, f"{w.name} at the {target.name}") for f in faces]
        rolls = [row for _, row in results]
        rerolled = 0
        # Stage 4: "A die may be rerolled as many times as permitted by the number of rerolls a
        # player has to spend": the attacker sees the dice and says which miss to reroll, or stops
        # (rerolls left over stay for this activation's other attacks).
        while v.rerolls_left:
            misses = [k for k, (hit, _) in enumerate(results) if not hit]
            if not misses:
                break
            options = tuple({"value": k + 1, "label": f"die {k + 1}: {results[k][1]['face']} (a miss)"}
                            for k in misses)
            options += ({"value": 0, "label": f"no reroll (keep {v.rerolls_left} for later)"},)
            pick = yield ChoiceRequest(v.owner, f"a die to reroll (Gutsy Gunner, {v.rerolls_left} left)", options,
                                       f"the {v.name}'s {w.name}")
            if pick == 0:
                break
            k = pick - 1
            face = (yield DiceRequest((D.DIE,), f"{w.name} reroll (Gutsy Gunner)", v.name)).faces[0]
            was = results[k][1]
            results[k] = self._hit(face, mods, f"{w.name} at the {target.name} (die {k + 1} rerolled)")
            # Every die thrown stays in the record, once each, in the order thrown: the one
            # replaced says so, the reroll which die it replaced.
            was["rerolled"] = True
            results[k][1]["reroll_of"] = k + 1
            rolls.append(results[k][1])
            rerolled += 1
            v.rerolls_left -= 1
        hits = sum(1 for hit, _ in results if hit)
        damage = v.engine.st if w.damage is None else w.damage
        events.append(f"the {v.name}'s {w.name} attacks the {target.name} with {shots} dice: {hits} hit"
                      f"{'s' if hits != 1 else ''}" + (f" ({rerolled} rerolled)" if rerolled else ""))
        # Stage 6: the target's owner places each hit's first DT, the attacker the others.
        for n in range(hits):
            for k in range(damage):
                if not target.in_play:
                    break
                first = k == 0
                yield from self._dt_by(state, target, target.owner if first else v.owner,
                                       f"{w.name}, hit {n + 1}" + (", its first DT" if first else ""), events)
        return {"result": "hit" if hits else "missed", "hits": hits, "shots": shots, "damage_each": damage,
                "rerolled": rerolled, **measured, "rolls": rolls, "events": events}

    # --- fixer --------------------------------------------------------------------------

    def _zone_ref(self, v: Car, raw: str, what: str) -> tuple[Component, int]:
        """A zone as the page names it, "component:zone" ("engine:4")."""
        if ":" not in raw:
            raise RulesError(f"{what}: a zone is 'component:zone' (as 'engine:4'), not {raw!r}")
        cid, _, number = raw.rpartition(":")
        comp = v.component(cid)
        try:
            z = int(number)
        except ValueError:
            raise RulesError(f"{what}: zone {number!r} is not a number") from None
        if not 1 <= z <= comp.az:
            raise RulesError(f"{what}: the {comp.name} has zones 1-{comp.az}, not {z}")
        if comp.kind == CREW and comp.key == "fanatical_fixer":
            raise RulesError(f"{what}: tokens on the fixer cannot be swapped (\"any two tokens not on the fixer\")")
        return comp, z - 1

    def _swap_fault(self, v: Car, *tracks: Component) -> str | None:
        """Why a swap (already made on `tracks`) may not stand, or None. A swap moves tokens; it
        does not lift the rules that say where an ST may be ("Car Movement/Engines"): no ST on a
        track that takes none (armour, the ram); the engine's ST from the left ("When allocating
        St to any AZ track you always start at the left and fill up towards the right": its
        speeds are read from its two rightmost ST, so no empty engine zone may sit left of an
        ST); and the engine at most its Spark Plug more ST this activation than it had once it
        down shifted ("the maximum number of ST that may be added to your Engine during it's
        activation"), ST a swap brings counted with those allocated."""
        for c in tracks:
            if c.st and (c.kind == ARMOUR or (c.kind == WEAPON and not c.weapon.needs_st)):
                return (f"the swap puts an ST on the {v.name}'s {c.name}, which takes none "
                        f"({R}, \"Building a Car Cult\")")
            st = [i for i, z in enumerate(c.zones) if z == D.ST]
            if c.kind == ENGINE and st and any(c.zones[i] is None for i in range(st[-1])):
                shown = ''.join({D.ST: 'S', D.DT: 'D', None: '.'}[z] for z in c.zones)
                return (f"the swap leaves the {v.name}'s {c.name} as {shown}: an ST with an empty zone to its left; "
                        f"ST fill a track from the left ({R}, \"Car Movement/Engines\": \"you always start at the "
                        f"left and fill up towards the right\")")
        engine = v.engine
        spark = v.engine_type.spark_plug
        if any(c is engine for c in tracks) and engine.st > v.engine_base + spark:
            return (f"the swap would bring the {v.name}'s engine to {engine.st} ST; it had {v.engine_base} at this "
                    f"activation and its Spark Plug lets at most {spark} more be added, by allocation or by a swap "
                    f"({R}, \"Car Movement/Engines\")")
        return None

    def _check_fix(self, state: GameState, action: dict):
        """The swap's checks (nothing measured, nothing rolled): the car, the two zones, and that
        the tokens would end where the rules let them be (`_swap_fault`). Changes nothing."""
        v = self._acting(state, action, "fix")
        self._ready(v, "fix")
        if v.swaps_left <= 0:
            raise RulesError(f"the {v.name} has no Fanatical Fixer swaps left (one per ST on the fixer)")
        if action.get("a") is None or action.get("b") is None:
            raise RulesError("a swap names two zones: 'a' and 'b' ('component:zone', as 'engine:4')")
        (ca, za), (cb, zb) = self._zone_ref(v, action["a"], "swap"), self._zone_ref(v, action["b"], "swap")
        if self.option("fixer_swap") == "two_tokens" and (ca.zones[za] is None or cb.zones[zb] is None):
            empty = f"the {ca.name} zone {za + 1}" if ca.zones[za] is None else f"the {cb.name} zone {zb + 1}"
            raise RulesError(f"{empty} holds no token; the fixer swaps two tokens (fixer_swap 'two_tokens'; "
                             f"{R}, \"Building a Car Cult\")")
        if ca.zones[za] == cb.zones[zb]:
            raise RulesError(f"the {ca.name} zone {za + 1} and the {cb.name} zone {zb + 1} hold the same "
                             f"({ca.zones[za] or 'nothing'}); swapping them changes nothing")
        ca.zones[za], cb.zones[zb] = cb.zones[zb], ca.zones[za]          # tried, then put back
        try:
            fault = self._swap_fault(v, ca, cb)
        finally:
            ca.zones[za], cb.zones[zb] = cb.zones[zb], ca.zones[za]
        if fault:
            raise RulesError(fault)
        return v, ca, za, cb, zb

    @action("fix", fields=FIX_FIELDS)
    def _act_fix(self, state: GameState, action: dict):
        """Fanatical Fixer: "Swap the positions of any two tokens not on the fixer per ST
        allocated": two tokens (fixer_swap "two_tokens"), or a token and an empty zone
        ("token_or_empty"); either way the tokens must end where the rules let them be
        (`_swap_fault`: fill from the left, the Spark Plug, no ST on armour or the ram)."""
        v, ca, za, cb, zb = self._check_fix(state, action)
        ca.zones[za], cb.zones[zb] = cb.zones[zb], ca.zones[za]
        v.swaps_left -= 1
        v.allocated = True
        events = [f"the {v.name}'s fixer swaps the {ca.name} zone {za + 1} ({cb.zones[zb] or 'empty'}) with the "
                  f"{cb.name} zone {zb + 1} ({ca.zones[za] or 'empty'}); {v.swaps_left} swaps left"]
        return {"result": "fixed", "rolls": [], "events": events}
        yield


def _roster_az(spec: dict) -> int:
    return (D.ENGINES[spec["engine"]].az + D.CREW_AZ * len(spec.get("crew", []))
            + sum(D.WEAPONS[w].az for w in spec.get("weapons", [])) + int(spec.get("armour", 0) or 0))


def _doubt_in(verdict) -> float:
    """A measured distance's doubt in inches (twice its sigma; at least a hundredth)."""
    return max(0.01, 2 * verdict.sigma_mm / MM_PER_IN)


#: A bound checked strictly (not by `judge`, which forgives a micrometre) is aimed this far inside.
_STRICT_MM = 1e-6


def _up_in(mm: float) -> float:
    """A distance in inches rounded up to the hundredth, so that moving a car by it is enough
    (within 3e-7 mm: floating point's last digits, which `judge` forgives)."""
    return math.ceil(mm / MM_PER_IN * 100 - 1e-6) / 100


def _whole_within(inches_: float, doubt_in: float) -> float:
    """Inches counted whole (a brake's or a halt's inches short): a reading within its doubt
    of a whole inch is that inch, as a tape would say, not the next one down or up."""
    near = round(inches_)
    return float(near) if abs(inches_ - near) <= doubt_in else inches_

"""Wasteland Rally (wasteland-rally.txt), an Open Fire v0.3 module: car-combat races.

Open Fire's core (open-fire-0.3-core-rules.md) gives the round (initiative
roll-off, alternating activations, stress), D12 attribute rolls (roll + modifiers
at least the attribute; a natural 1 fails, a 12 passes) and attacks; its vehicles
expansion (open-fire-0.3-expansion-vehicles.md) gives movement by manoeuvres.
Wasteland Rally adds gates, losing control, terrain collisions and the team
tables.  Every action is a resolution (a generator of dice requests); numbers
live in `wr_data` with their sections; rosters and state in `wr_state`.

Rounds ("orders"): `start_round(state, orders)` rolls the initiative roll-off
(CORE, "Initiative"), then players take turns activating one vehicle each, in
the order of their rolls. `orders` maps each player to a list of their vehicles
in the order they mean to activate them, slot by slot; a slot may be blank (None),
a list short or empty, and then the player chooses at the table: the first action
of an unactivated vehicle of the player whose turn it is activates it. `end_activation` ends that vehicle's
activation and passes the turn; when nobody has a vehicle left to activate the
round ends (finishers ranked, the elimination gate checked, stress taken).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import shapely
import shapely.ops

from ..dice import ChoiceRequest, DiceRequest, Modifier, Roll
from ..geometry import (ANY, CENTRE, FRONT, LEFT, REAR, RIGHT, Footprint, Obstacles, Pose, Sector, closest_distance,
                        TOO_CLOSE, directly_behind, in_half_plane_arc, in_sector, inches, judge, normalize_deg,
                        overlaps)
from ..geometry.pose import MM_PER_IN
from ..geometry.sight import sample_points
from . import wr_data as D
from .actions import ListOf, OneOf, json_text
from .base import RuleOption, RulesError, RuleSystem, action, check_block, register
from .poses import interpolate, parse_pose
from .wr_state import GameState, Vehicle, build_team
from .wr_views import WastelandRallyViews

R = D.RULEBOOK


def _exploding(name: str) -> str:
    """A piece of exploding terrain in a sentence, "exploding" said once: "the exploding fuel
    drums", not "the exploding exploding fuel drums" when its name says it already."""
    return f"the {name}" if "exploding" in name.lower() else f"the exploding {name}"


def _whose(name: str) -> str:
    """A piece's possessive: "the fuel drums' blast", "the tanker's blast"."""
    return f"the {name}'" if name.endswith("s") else f"the {name}'s"


OPTIONS = (
    RuleOption("mission", "two_lap_race", D.MISSIONS, f'{R}, "Missions"',
               'Not an ambiguity: the mission the table plays. It decides how the scene\'s gates are read '
               '(two_lap_race, elimination_race: a start/finish gate and a far gate; arena_race: two gates; '
               'outrun, scavengers: one gate; battle_royale: one start gate per player) and how the game ends.'),
    RuleOption("scavengers_reading", "exit_for_points", ("exit_for_points", "not_supported"), f'{R}, "Scavengers"',
               'The book\'s Scavengers stops mid-sentence in its deployment ("at least 6 inches from the"): it gives '
               'the terrain, one gate on a table edge "facing off the battlefield", and the lowest team\'s 12 in / '
               'the others\' 6 in set-up strips, but no objective, scoring or length. "exit_for_points": the '
               'companion\'s reading: the gate is an exit; a car that crosses it leaves the game, ranked at the '
               'round\'s end and scored by finishing_points; the game lasts Open Fire\'s 6 rounds (CORE, "Ending the '
               'Game") and the most points wins; deployment is taken as the table has it (not checked); '
               '"not_supported": the mission is refused as unplayable from the text.'),
    RuleOption("outrun_reading", "race_to_gate", ("race_to_gate", "not_supported"), f'{R}, "Outrun"',
               'The book\'s Outrun stops after its terrain (a track of 60 in or more, one gate at its end on a table '
               'edge): no deployment, objective, scoring or length. "race_to_gate": the companion\'s reading: a '
               'race to that gate, finishers ranked at each round\'s end as in "Final Finishing Positions" and '
               'scored by finishing_points; it ends when every car has finished or is out (or at race_round_limit); '
               'the most points wins (race_tie on a tie); deployment is taken as the table has it (not checked); '
               '"not_supported": the mission is refused as unplayable from the text.'),
    RuleOption("start_gate_counts", True, (True, False), f'{R}, "Elimination Gates" and "Two Lap Race"',
               'Cars deploy "as close as possible to the starting gate without placing any part of the vehicle '
               'over the gate itself". True: they deploy behind it and crossing the start gate is gate 1 of the '
               'sequence (so a two-lap race is start, far, start, far, finish); False: they deploy past it and '
               'the far gate is gate 1.'),
    RuleOption("critical_success", "natural_12", ("natural_12", "total_12"), f'{R}, "Critical Hits"',
               '"hits with a critical success" is not defined. "natural_12": the die shows 12 (the roll that '
               'always succeeds, CORE "Attribute Rolls", and Rending\'s "skill roll is a 12"); "total_12": the '
               'roll with its modifiers comes to 12 or more.'),
    RuleOption("critical_tests", "once_per_weapon", ("once_per_weapon", "per_critical"), f'{R}, "Critical Hits"',
               '"When ... the attacking player hits with a critical success the vehicle must take a command test". '
               '"once_per_weapon": one test per weapon\'s attack however many 12s; "per_critical": a test per 12.'),
    RuleOption("reinforced_armour", "improves", ("improves", "literal"), f'{R}, "Vehicle Upgrades"',
               '"increases its defence by 1", but a defence roll succeeds at or over the attribute (CORE, '
               '"Attribute Rolls"), so a higher number is worse. "improves": the armour helps, defence 5 becomes '
               '4; "literal": the number goes up by 1 (5 becomes 6).'),
    RuleOption("second_weapon", "any_category", ("any_category", "not_ranged"), f'{R}, "Weapon Upgrades"',
               '"one ranged weapon and one other weapon from any category". "any_category": the other may be a '
               'second ranged weapon; "not_ranged": it must be melee or dropped.'),
    RuleOption("costly_modification", "per_modification", ("per_modification", "once_per_weapon"),
               f'{R}, "Weapon Modifications"',
               '"weapons which cost 4 or more points pay an additional point to be modified". "per_modification": '
               'a point more for each modification; "once_per_weapon": one point more however many it takes.'),
    RuleOption("arc_layout", "half_planes", ("half_planes", "quarters"), f'{R}, "Vehicle Weapons"',
               'The module names front, side and rear arcs without drawing them; Open Fire\'s are halves split '
               'at the line through the centre (CORE, "Facing and Arcs"). "half_planes": front and rear are '
               'those halves (any part of the target over the line), the side arcs the left and right halves; '
               '"quarters": four 90-degree sectors from the centre, front, left, rear and right.'),
    RuleOption("side_arc", "flank", ("flank", "half_plane"), f'{R}, "Vehicle Weapons" (and Spiked Wheels, "Side Arc")',
               'The module names a "side arc" (the Spiked Wheels\' only arc) without drawing it; Open Fire draws only '
               'front and rear halves. With arc_layout half_planes: "flank": a side arc is the ground beside the car, '
               'beyond its left (right) side and between the lines through its front and rear edges (any part of '
               'the target in it), so a car dead ahead or dead astern is in neither; "half_plane": the whole half '
               'left (right) of the car\'s centre line, which a car straddling that line, dead ahead, is in.'),
    RuleOption("dropper_zone", "rear_arc", ("rear_arc", "directly_behind"), f'{R}, "Dropper"',
               '"every vehicle in the rear arc and within range". "rear_arc": the rear arc as arc_layout draws '
               'it; "directly_behind": only the strip as wide as the car behind it, out to the range.'),
    RuleOption("reposition_measure", "centre", ("centre", "any_point"), f'{R}, "Losing Control"',
               '"moved up to 1 inch in any direction". "centre": the car\'s centre moves at most 1"; "any_point": '
               'no part of it moves more than 1" (CORE, "Measuring": "no part of the model moves more than the '
               'distance"), so a turn uses some of the inch.'),
    RuleOption("reposition_terrain", "new_ground", ("new_ground", "own_terrain_free"), f'{R}, "Losing Control"',
               '"this move cannot cause the vehicle to move over the base of another vehicle, ... or over any '
               'terrain". The book does not say what happens to a car that lost control on terrain (rough ground, '
               'or touching wreckage). "new_ground": the ground the reposition newly covers must be clear of '
               'terrain and cars, so a car on rough ground may always be left where it stands (or moved only '
               'where it covers no more terrain); "own_terrain_free": the piece(s) it already stands on do not '
               'count, it may move within or off them, not onto others.'),
    RuleOption("finish_distance_from", "rear", ("rear", "front"), f'{R}, "Final Finishing Positions"',
               '"ranked by their distance from the finish line". "rear": from the line to the car\'s nearest point '
               '(CORE, "Measuring": closest point), "front": to its foremost point.'),
    RuleOption("elimination_closest", "segment", ("segment", "line"), f'{R}, "Elimination Gates"',
               '"the vehicle that is closest to the elimination gate". "segment": edge-to-edge distance to the '
               'gate between its posts; "line": distance past the gate\'s line, extended.'),
    RuleOption("melee_is_assault", True, (True, False), f'{R}, "Melee Weapons"',
               'The module gives its melee weapons the special rule "Melee", which neither book defines. True: '
               'Melee weapons count as Assault (CORE, "Assault Weapons": no -4 in assault range); False: Melee '
               'means nothing and they take the -4 like any other weapon.'),
    RuleOption("backward_cost", "half_rate", ("half_rate", "double_distance"), f'{D.VEHICLES}, "Vehicle Restrictions"',
               '"Vehicles count their movement rate as half when moving backward." "half_rate": the allowance is '
               'halved and extra manoeuvres cost 2" of it; "double_distance": each inch driven backwards costs 2, '
               'extra manoeuvres 2" of the full allowance.'),
    RuleOption("boost_counts", False, (False, True), f'{R}, "Vehicle Upgrades" (Boost)',
               '"This unit immediately moves directly forward 9 inches". False: the 9" comes on top of the move; '
               'True: it is part of the move\'s allowance.'),
    RuleOption("contact_mm", 1.0, None, f'{R}, "Colliding With Terrain" and "Moving Over Other Vehicles"',
               'How close (mm) a car must come to terrain or a car to count as "touching" / "in contact": the '
               'camera cannot see a gap of zero.'),
    RuleOption("path_tolerance_mm", 5.0, None, f'{D.CORE}, "Action: Movement"',
               'A model "is always moved forward in a straight line"; vehicles turn "on the spot" (VEHICLES, '
               '"Vehicle Movement"). How far (mm) a path may stray sideways on a straight, or shift during a '
               'turn, and still count as straight / on the spot.'),
    RuleOption("path_reading", "driven", ("driven", "on_the_spot"), f'{D.VEHICLES}, "Vehicle Movement"',
               'Vehicles turn "up to 45 degrees on the spot". "driven": a path as the camera follows a car pushed '
               'by hand may turn while it moves; its turning, summed in each direction, counts as manoeuvres of '
               'up to 45 degrees, its length as the distance; "on_the_spot": every turn must be made standing '
               '(a step that turns more than the tolerance may not also move).'),
    RuleOption("turn_break_mm", 25.4, None, f'{D.VEHICLES}, "Vehicle Movement"',
               'Each manoeuvre is a turn "up to 45 degrees on the spot", so two turns with a straight run between '
               'them are two manoeuvres, however small. How far (mm) a car must drive straight (its heading within '
               'turn_tolerance_deg) between two turns the same way for them to count apart; closer together '
               '(a curve the camera followed a hand along) their turning is summed (path_reading "driven").'),
    RuleOption("move_doubt", "poses", ("poses", "strict"), f'{D.CORE}, "Measuring" and "Resolving Issues"',
               'A move may be "up to its movement rate"; the camera measures the path to a mm or so. "poses": the '
               'cost is judged against the allowance with the doubt the poses carry (the car\'s pose and the '
               'path\'s last, as [x, y, heading, sigma_mm, sigma_deg]; none given, none counted): a hair over within '
               'the doubt is too close to call and the move stands, said so (CORE, "Resolving Issues": keep '
               'playing on a simple resolution); "strict": the measured cost alone, a hair over is refused.'),
    RuleOption("reverse_correction_mm", 25.0, None, f'{D.VEHICLES}, "Vehicle Restrictions"',
               '"Vehicles may only move forward or backward during their activation but not both on the same '
               'activation." A hand pushing a car slides it past its mark and back: a move is judged by where the '
               'car ends and the way it went. Travel against the way the path mostly went, up to this many mm in '
               'all in one move, is a correction, not a reverse: the move counts as the way it mostly went, and '
               'the correction and the overshoot it undoes (slow ground too) do not count against the allowance; '
               'more is driving both ways, refused. 0: any travel back is refused. Steps the camera sees too short '
               'to tell their way (path_tolerance_mm) are ground covered, as before.'),
    RuleOption("slow_measure", "any_part", ("any_part", "each_part", "centre"), f'{D.CORE}, "Slow" and "Measuring"',
               '"All movement through slow terrain counts as double the distance actually travelled", and when '
               'moving "no part of the model moves more than the distance you have measured". "any_part": the '
               'car\'s movement while any part of it is over slow ground counts double (a nose in the sand, a flank '
               'along a sand strip; a 75 mm car driven right through 100 mm of sand pays 175 mm more); '
               '"each_part": the most any one part of it drives over slow ground counts double (through 100 mm of '
               'sand, 100 mm more; a nose 30 mm in or a flank along a strip as any_part); "centre": only the '
               'ground its centre crosses (a car with its nose in the sand, or half its width along a strip, pays '
               'nothing).'),
    RuleOption("turn_tolerance_deg", 3.0, None, f'{D.VEHICLES}, "Vehicle Movement"',
               'How much a straight run may change heading (degrees) before it counts as a manoeuvre; a turn\'s '
               'manoeuvres are its angle less this, in 45-degree steps.'),
    RuleOption("exploding_terrain", (), None, f'{R}, "Exploding Terrain"',
               'Which terrain pieces (by name) are exploding, besides those the scene gives the kind "exploding": '
               'a piece is exploding if named here or if its name starts with "exploding" (whatever its kind). '
               'It is impassable too.'),
    RuleOption("barrier_terrain", (), None, f'{D.CORE}, "Barrier"',
               'Which terrain pieces (by name) are barriers (the scene format has no "barrier" kind): named here '
               'or with a name starting "barrier". A vehicle may drive across one at 1 in of its allowance more '
               'each time, but may not end its move on it; Wasteland Rally names no collision with them. Its '
               'kind then says only whether it blocks line of sight: "impassable" hides nothing, "blocking" '
               'hides what is behind it.'),
    RuleOption("explosion_removes", True, (True, False), f'{R}, "Exploding Terrain"',
               'The rule does not say what is left after the blast. True: the exploded piece is gone; False: it '
               'stays (and can explode again).'),
    RuleOption("cars_block_sight", True, (True, False), f'{D.CORE}, "Line of Sight"',
               'Open Fire: a target "partially obscured by a friendly unit" is blocked, one obscured by another '
               'enemy unit is obstructed; the vehicles expansion counts a vehicle obscured only when more than '
               'half of it is hidden "behind terrain". True: cars in the way count (a friendly car hiding any '
               'part blocks the shot, enemy cars hide like terrain); False: only terrain blocks sight.'),
    RuleOption("sight_from", "any_part", ("any_part", "centre"), f'{D.CORE}, "Line of Sight"',
               'Line of sight is checked "from the perspective of that model (i.e. by bending down and looking '
               'through the model)", and range from the closest point of its footprint (CORE, "Measuring"). '
               '"any_part": a target point is seen if a line from any part of the shooter (its centre, corners or '
               'edge middles) reaches it unblocked; "centre": only lines from the shooter\'s centre count (a '
               'model\'s eye at the middle of the car).'),
    RuleOption("use_stress", True, (True, False), f'{D.CORE}, "Stress"',
               'Wasteland Rally does not mention stress. True: Open Fire\'s stress applies (a vehicle damaged in '
               'a round takes a stress token, at most 3, each -1 to movement and skill; Recover removes them); '
               'False: no stress.'),
    RuleOption("recover", "success_removes_one", ("success_removes_one", "twelve_only"), f'{D.CORE}, "Action: Recover"',
               '"making a command roll for each stress marker ... In the event of rolling a 12 you may remove all". '
               '"success_removes_one": each passed roll removes one marker, a 12 all; "twelve_only": only a 12 '
               'removes any (all of them).'),
    RuleOption("royale_scoring", "per_attack", ("per_attack", "per_hit_point"), f'{R}, "Battle Royale"',
               '"points awarded for each time an opponent is damaged". "per_attack": a point for each opponent\'s '
               'vehicle an attack damages (with what the attack sets off: a critical\'s or Obstructing\'s loss of '
               'control, a blast from a shot); "per_hit_point": a point for each hit point so taken off them. '
               'Damage no player\'s attack caused (a car that hits a wall) scores for no one.'),
    RuleOption("suppression", "no_effect", ("no_effect",), f'{R}, "Ranged Weapons" (Rocket Launcher)',
               'The Rocket Launcher has the special rule "Suppression", which neither Wasteland Rally nor Open Fire '
               'v0.3 defines. "no_effect": the only reading the books allow; the rule is shown on the weapon and '
               'does nothing.'),
    RuleOption("finishing_points", (3, 2, 1), None, f'{R}, "Two Lap Race"',
               '"points awarded for finishing positions" with no numbers given: the points for 1st, 2nd, ...'),
    RuleOption("race_tie", "draw", ("draw", "best_finisher"), f'{R}, "Two Lap Race"; {D.CORE}, "Ending the Game"',
               'A race is won on points ("points awarded for finishing positions"; "the player with the most victory '
               'points is declared the winner"), and neither book breaks a tie. "draw": a tie on points is a draw; '
               '"best_finisher": the tied player whose car finished highest wins.'),
    RuleOption("race_round_limit", None, None, f'{D.CORE}, "Ending the Game"',
               'A race lasts until every vehicle has finished or is out (None); a number ends it after that many '
               'rounds (Open Fire\'s default is 6). Arena race, battle royale and scavengers last 6 rounds.'),
    RuleOption("check_deploy_closest", True, (True, False), f'{R}, "Deployment Areas"',
               'Cars are placed "as close as possible to the starting gate without placing any part of the vehicle '
               'over the gate itself". True: at the start (with check_deployment), a car that had a free spot '
               'nearer the gate (by deploy_zone, more than deploy_slack_mm nearer) is refused, naming the spot; '
               'False: not checked.'),
    RuleOption("deploy_zone", "gate_lane", ("gate_lane", "behind_line"), f'{R}, "Deployment Areas"',
               '"as close as possible to the starting gate": where the closer spots may be. "gate_lane": the car '
               'wholly on the deploying side of the gate\'s line and wholly between the lines through its posts '
               '(a starting grid, lined up to drive through); "behind_line": anywhere wholly on that side of the '
               'line, extended (beside a post counts).'),
    RuleOption("deploy_slack_mm", 12.7, None, f'{R}, "Deployment Areas"',
               '"as close as possible" is placed by hand: how much nearer (mm) a free spot must be before a car '
               'counts as not deployed as close as it could (half an inch by default).'),
    RuleOption("check_deployment", True, (True, False), f'{R}, "Deployment Areas"',
               'True: at the start, cars must stand at least 2" apart and none over the start gate; False: the '
               'table is taken as it is (a situation part way through a game).'),
)


#: Scene kinds that are Wasteland Rally's own keywords, read as they are.
_KEYWORD_KINDS = ("exploding", "impassable", "slow", "wreckage")


def _terrain_kind(rules: "WastelandRally", t) -> str:
    """How Wasteland Rally reads a scene's terrain kind (CORE, "Terrain"; RULEBOOK, "Terrain"):
    a piece named in (or, by its name's start, read as) exploding_terrain or barrier_terrain is
    that; else a scene kind that is a keyword (exploding, impassable, slow, wreckage) is itself;
    blocking ground and buildings are impassable, rough ground slow."""
    name = t.name.lower()
    if t.name in set(rules.option("exploding_terrain") or ()) or name.startswith("exploding"):
        return "exploding"
    if t.name in set(rules.option("barrier_terrain") or ()) or name.startswith("barrier"):
        return "barrier"
    if t.kind in _KEYWORD_KINDS:
        return t.kind
    return {"blocking": "impassable", "building": "impassable", "rough": "slow"}.get(t.kind, "impassable")


def _minkowski(points: np.ndarray, shape: np.ndarray):
    """A convex set (its points) grown by a car's shape about its centre: where the car's centre
    may not go if the car is not to meet it."""
    pts = np.asarray(points, float)[:, None, :] + np.asarray(shape, float)[None, :, :]
    return shapely.convex_hull(shapely.multipoints(pts.reshape(-1, 2)))


def _convex_pieces(polygon) -> list[np.ndarray]:
    """A terrain polygon as convex pieces (a non-convex one as triangles), each its points."""
    if abs(polygon.area - polygon.convex_hull.area) <= 1e-9 * max(polygon.area, 1.0) and not polygon.interiors:
        return [np.asarray(polygon.exterior.coords)]
    return [np.asarray(t.exterior.coords) for t in shapely.constrained_delaunay_triangles(polygon).geoms]


def _path_to(start: Pose, to: Pose) -> list[Pose]:
    """Only where the car ended (the page's move): read as the simplest legal shape, a turn on
    the spot to face the end, a straight run (forwards, or backwards if the end is behind), a
    turn to the final heading."""
    d = to.xy - start.xy
    if float(np.hypot(*d)) < 1e-6:
        return [to]
    bearing = math.degrees(math.atan2(d[1], d[0]))
    if abs(normalize_deg(bearing - start.heading_deg)) > 90:
        bearing = normalize_deg(bearing + 180)            # backing up
    out = []
    if abs(normalize_deg(bearing - start.heading_deg)) > 1e-6:
        out.append(Pose(start.x_mm, start.y_mm, bearing, start.sigma_mm, start.sigma_deg))
    out.append(Pose(to.x_mm, to.y_mm, bearing, to.sigma_mm, to.sigma_deg))
    if abs(normalize_deg(to.heading_deg - bearing)) > 1e-6:
        out.append(to)
    return out


@register
class WastelandRally(WastelandRallyViews, RuleSystem):
    name = "wasteland_rally"
    title = "Wasteland Rally (Open Fire v0.3 module)"
    rulebook = D.RULEBOOK
    options = OPTIONS


    def templates(self) -> list[dict]:
        """The templates and gauges of this book (see the data module's TEMPLATES)."""
        from .base import template as table_template
        return [table_template(**t) for t in D.TEMPLATES]
    def terrain_kind(self, t) -> str:
        """How this game reads a terrain piece: exploding, barrier, impassable, slow, wreckage."""
        return _terrain_kind(self, t)

    # --- setting up ---------------------------------------------------------------------

    def starter_rosters(self, cars: list[tuple[int, str]]) -> list[dict]:
        """Two teams of the table's cars, each a car with a heavy machine gun ("Team
        Building"), well inside a 50-point game, for the players to build on. Player 1's
        first car has a boost and Player 2's first an oil dropper ("Vehicle Upgrades",
        "Dropped Weapons"), so that a game from these rosters can take every action."""
        rosters = [{"player": p, "points": 50, "vehicles": []} for p in ("Player 1", "Player 2")]
        for n, (marker, name) in enumerate(cars):
            car = {"marker": marker, "name": name, "type": "car", "weapons": ["heavy_machine_gun"]}
            if n == 0:
                car["upgrades"] = ["boost"]
            elif n == 1:
                car["weapons"].append("oil_dropper")
            rosters[n % 2]["vehicles"].append(car)
        return [r for r in rosters if r["vehicles"]]

    def demo_scenery(self, table_mm: tuple[float, float]) -> dict:
        """The demo table's race (wr_data.DEMO_GATES, DEMO_TERRAIN, scaled from the 1219.2 x 812.8 mm
        demo table to the one given): a two lap race round an island, the start/finish gate and
        the far checkpoint 8 in wide (RULEBOOK, "Objective Gates", "Two Lap Race"), and the terrain
        the book uses: impassable (a bus, blocking sight), a barrier (CORE, "Barrier"), exploding
        fuel drums (RULEBOOK, "Exploding Terrain"), slow ground and wreckage."""
        sx, sy = table_mm[0] / D.DEMO_TABLE_MM[0], table_mm[1] / D.DEMO_TABLE_MM[1]
        at = lambda p: [round(p[0] * sx, 1), round(p[1] * sy, 1)]
        return {"terrain": [{"name": t["name"], "kind": t["kind"], "points": [at(p) for p in t["points"]]}
                            for t in D.DEMO_TERRAIN],
                "gates": [{"name": g["name"], "role": g["role"], "a_mm": at(g["a_mm"]), "b_mm": at(g["b_mm"])}
                          for g in D.DEMO_GATES]}

    def demo_layout(self, cars, table_mm):
        """A starting grid behind the demo's start/finish gate (`demo_scenery`), facing +x to drive
        through it, derived from the gate's length so that it is legal on any table: as many
        abreast as fit inside the gate's lane with 2 in and a hair between them ("Deployment
        Areas"), the room left over shared evenly between the cars and the posts, so that no
        further car fits beside or between them; the rest in the rows behind, each car behind the
        column whose last car ends nearest the gate. None could have stood closer (the
        check_deploy_closest check passes on it)."""
        start = next(g for g in self.demo_scenery(table_mm)["gates"] if g["role"] == "start_finish")
        gate_x = start["a_mm"][0]
        lane = sorted((start["a_mm"][1], start["b_mm"][1]))
        hair_mm = 3.0                                   # clear of the line, a post's lane and each other
        gap_mm = inches(D.DEPLOY_SPACING_IN) + hair_mm
        widest = max((w for *_, w in cars), default=32.0)
        room = lane[1] - lane[0] - 2 * hair_mm
        full = max(1, int((room + gap_mm) // (widest + gap_mm)))     # columns: a full row abreast
        extra = max(0.0, room - full * widest - (full - 1) * gap_mm) / (full + 1)
        centres = [lane[0] + hair_mm + extra + widest / 2 + c * (widest + gap_mm + extra) for c in range(full)]
        fronts = [gate_x - hair_mm] * full              # how far forward each column's next car may reach
        out = {}
        for k, (marker, _name, length_mm, _width_mm) in enumerate(cars):
            col = k if k < full else max(range(full), key=lambda c: fronts[c])
            out[marker] = (round(fronts[col] - length_mm / 2, 1), round(centres[col], 1), 0.0)
            fronts[col] -= length_mm + gap_mm
        return out

    def may_premeasure(self) -> bool:
        """Open Fire lets players measure "anything at any time so long as doing so does not
        interfere with something your opponent is doing" (CORE, "Measuring"): the page shows
        distances and ranges before anything is declared."""
        return True

    def game_from_scene(self, scene, cars: list[dict]) -> GameState:
        """A game from a scene alone, to judge a move on it: each car a vehicle of its scene
        `type` (a car by default) with the scene's `weapons` and `upgrades` if given, owned by
        its `owner` or, without one, by Player 1 and Player 2 in turn; deployment not checked
        (a scene is a moment of a game)."""
        owners: dict[str, list[dict]] = {}
        for n, c in enumerate(cars):
            owner = c.get("owner") or f"Player {n % 2 + 1}"
            owners.setdefault(str(owner), []).append({
                "marker": c["id"], "name": c.get("name") or f"car {c['id']}", "type": c.get("type", "car"),
                "weapons": c.get("weapons", []), "upgrades": c.get("upgrades", [])})
        if len(owners) < 2:
            raise RulesError("a Wasteland Rally game needs cars of two players: give the scene's cars an 'owner' "
                             "(or two cars, taken as Player 1's and Player 2's)")
        system = type(self)({**self.settings, "check_deployment": False})
        return system.new_game([{"player": p, "vehicles": vs} for p, vs in owners.items()], scene)

    def new_game(self, rosters: list[dict], scene) -> GameState:
        """Teams from rosters, placed at the scene's poses, the mission's gates read from the scene."""
        if len(rosters) < 2:
            raise RulesError("a game needs at least two rosters")
        cars = {c.id: c for c in scene.cars} if scene is not None else {}
        sizes = {m: (c.length_mm, c.width_mm) for m, c in cars.items()}
        vehicles, players, taken = {}, [], set()
        for roster in rosters:
            team = build_team(roster, self.option("second_weapon"), taken, sizes, self.option("costly_modification"))
            if roster["player"] in players:
                raise RulesError(f"two rosters for {roster['player']}")
            players.append(roster["player"])
            for v in team:
                if v.marker in cars:
                    v.pose = v.stood = cars[v.marker].pose
                vehicles[v.marker] = v
        table = (scene.width_mm, scene.depth_mm) if scene is not None else (1828.8, 1219.2)
        gates = {g.name: g for g in (scene.gates if scene is not None else ())}
        mission = self.option("mission")
        sequence, notes = self._mission_setup(mission, gates, players, table, len(vehicles))
        state = GameState(players, vehicles, table, list(scene.terrain) if scene is not None else [], gates,
                          mission, sequence, scores={p: 0 for p in players},
                          pools={r["player"]: int(r.get("pool", 0)) for r in rosters})
        state.setup_notes = notes
        if mission == "elimination_race":
            state.elimination_index = 1     # "When the game starts the second gate is designated"
        if self.option("check_deployment"):
            self._check_deployment(state)
            if self.option("check_deploy_closest"):
                self._closest_deployment(state)
        return state

    #: A game part way through (`start_part_way`): the state block's fields, and each car's.
    STATE_FIELDS = {"round": "whole", "initiative": ListOf("text"), "activated": ListOf("marker"),
                    "scores": "object", "pools": "object", "vehicles": "object", "finish_order": ListOf("marker"),
                    "elimination_gate": "whole", "first_across": "object", "removed_terrain": ListOf("text")}
    VEHICLE_STATE_FIELDS = {"hp": "whole", "stress": "whole",
                            "status": OneOf("racing", "destroyed", "eliminated", "finished"),
                            "boost_used": "flag", "gates_crossed": "whole", "damaged_this_round": "flag"}

    def start_part_way(self, state: GameState, block: dict) -> None:
        """A game part way through (docs/rules/wasteland-rally.md, "Starting part way through a
        game"): what play reaches, set on the new game. Each car's hit points, stress, status
        (racing, destroyed, eliminated, finished), boost used, gates crossed and damage this round;
        the finishing order; scores and pools; the elimination gate; the arena race's first
        across each gate; terrain gone (wreckage smashed, exploded pieces); the rounds played, or
        the round under way (its initiative and the cars that have activated). Everything is
        checked before anything is set: an unknown field is refused by name with its path, a
        wrong value saying what it must be. Wasteland Rally leaves no tokens on the table (a
        dropper's attack is resolved at once: RULEBOOK, "Dropper"), so there are none to set."""
        def whole(where: str, value, lo: int, hi: int | None, what: str) -> None:
            if value < lo or (hi is not None and value > hi):
                span = f"{lo} or more" if hi is None else f"from {lo} to {hi}" if hi > lo else f"{lo}"
                raise RulesError(f"{where} must be {span} ({what}), not {json_text(value)}")

        check_block("state", self.STATE_FIELDS, block)
        cars = ", ".join(str(m) for m in sorted(state.vehicles))
        n_gates = len(state.sequence)
        racing_missions = ("two_lap_race", "outrun", "scavengers", "elimination_race")
        under_way = block.get("initiative") is not None
        plan: dict[int, dict] = {}
        for key, spec in (block.get("vehicles") or {}).items():
            where = f"state.vehicles.{key}"
            if not (isinstance(key, str) and key.isdigit() and int(key) in state.vehicles):
                raise RulesError(f"{where}: no such car (the cars: {cars})")
            v = state.vehicles[int(key)]
            check_block(where, self.VEHICLE_STATE_FIELDS, spec)
            out = dict(spec)
            status = spec.get("status") or "racing"
            if spec.get("hp") is not None:
                whole(f"{where}.hp", spec["hp"], 0, v.max_hp, f"the {v.name}'s hit points")
                if spec["hp"] == 0 and status != "destroyed":
                    raise RulesError(f"{where}: 0 hit points is destroyed (RULEBOOK, \"Vehicle Types\"): say "
                                     f"status \"destroyed\", or give it hit points")
            if status == "destroyed" and spec.get("hp", 0) != 0:
                raise RulesError(f"{where}: a destroyed car has 0 hit points, not {spec['hp']} (leave hp out)")
            if spec.get("stress") is not None:
                whole(f"{where}.stress", spec["stress"], 0, D.MAX_STRESS, f"stress tokens, at most {D.MAX_STRESS}: "
                      f"{D.CORE}, \"Stress\"")
                if spec["stress"] and not self.option("use_stress"):
                    raise RulesError(f"{where}: stress {spec['stress']}, but this game plays no stress "
                                     f"(use_stress is off)")
            if spec.get("boost_used") and "boost" not in v.upgrades:
                raise RulesError(f"{where}: the {v.name} has no boost to have used ({R}, \"Vehicle Upgrades\")")
            if spec.get("gates_crossed") is not None:
                whole(f"{where}.gates_crossed", spec["gates_crossed"], 0, n_gates,
                      f"the {state.mission.replace('_', ' ')}'s sequence has {n_gates} gate{'s' if n_gates != 1 else ''}")
                if (spec["gates_crossed"] == n_gates and n_gates and status == "racing"
                        and state.mission in racing_missions and not under_way):
                    raise RulesError(f"{where}: the {v.name} has crossed every gate, so it was ranked at the end of "
                                     f"that round ({R}, \"Final Finishing Positions\"): say status \"finished\" "
                                     f"and give it its place in finish_order, or start with the round under way "
                                     f"(initiative)")
            if spec.get("damaged_this_round") and not under_way:
                raise RulesError(f"{where}: damaged_this_round is for a round under way (give its initiative); "
                                 f"between rounds the stress it brings is taken (stress)")
            out["status"] = status
            plan[v.marker] = out
        order = list(block.get("finish_order") or [])
        for k, m in enumerate(order):
            where = f"state.finish_order.{k}"
            if m not in state.vehicles:
                raise RulesError(f"{where}: no car {m} (the cars: {cars})")
            if order.index(m) != k:
                raise RulesError(f"{where}: the {state.vehicles[m].name} is in finish_order twice")
            said = ((block.get("vehicles") or {}).get(str(m)) or {}).get("status")
            if said not in (None, "finished"):
                raise RulesError(f"{where}: the {state.vehicles[m].name} is in finish_order but its status is {said}")
            crossed = plan.get(m, {}).get("gates_crossed")
            if crossed is not None and crossed != n_gates:
                raise RulesError(f"{where}: the {state.vehicles[m].name} finished, so it crossed all {n_gates} gates, "
                                 f"not {crossed} (leave gates_crossed out)")
            plan.setdefault(m, {})["status"] = "finished"
            plan[m]["gates_crossed"] = n_gates
        for m, spec in plan.items():
            if spec.get("status") == "finished" and m not in order:
                raise RulesError(f"state.vehicles.{m}: the {state.vehicles[m].name} has finished: give its place "
                                 f"in finish_order")
        players = ", ".join(state.players)
        tallies = {}
        for name in ("scores", "pools"):
            for p, value in (block.get(name) or {}).items():
                if p not in state.players:
                    raise RulesError(f"state.{name}: no player {p!r} (the players: {players})")
                if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
                    raise RulesError(f"state.{name}.{p} must be a whole number, not {json_text(value)}")
                whole(f"state.{name}.{p}", value, 0, None, "points")
            tallies[name] = {p: int(v) for p, v in (block.get(name) or {}).items()}
        gone = list(block.get("removed_terrain") or [])
        names = [t.name for t in state.terrain]
        for k, name in enumerate(gone):
            if name not in names:
                raise RulesError(f"state.removed_terrain.{k}: no terrain {name!r} on the table (its pieces: "
                                 f"{', '.join(names) or 'none'})")
            if gone.index(name) != k:
                raise RulesError(f"state.removed_terrain.{k}: {name!r} twice")
        elim = block.get("elimination_gate")
        if elim is not None:
            if state.mission != "elimination_race":
                raise RulesError(f"state.elimination_gate: the {state.mission.replace('_', ' ')} has no elimination "
                                 f"gate (only the elimination race: {R}, \"Elimination Gates\")")
            whole("state.elimination_gate", elim, 2, n_gates, "its place in the gate sequence; the second gate is "
                  "the first elimination gate")
        firsts = {}
        for key, m in (block.get("first_across") or {}).items():
            where = f"state.first_across.{key}"
            if state.mission != "arena_race":
                raise RulesError(f"state.first_across: only the arena race scores the first across each gate "
                                 f"({R}, \"Arena Race\")")
            if not (isinstance(key, str) and key.isdigit() and 1 <= int(key) <= n_gates):
                raise RulesError(f"{where}: a gate's place in the sequence, 1 to {n_gates}")
            if isinstance(m, bool) or not isinstance(m, int) or m not in state.vehicles:
                raise RulesError(f"{where}: no car {json_text(m)} (the cars: {cars})")
            crossed = plan.get(m, {}).get("gates_crossed", state.vehicles[m].progress)
            if crossed < int(key):
                raise RulesError(f"{where}: the {state.vehicles[m].name} has crossed {crossed} gate"
                                 f"{'s' if crossed != 1 else ''}, not gate {key}")
            firsts[int(key) - 1] = m
        rnd = block.get("round")
        if rnd is not None:
            whole("state.round", rnd, 0, None, "rounds played, or the one under way")
        initiative = block.get("initiative")
        activated = list(block.get("activated") or [])
        if activated and not under_way:
            raise RulesError("state.activated: cars that have activated in the round under way: give its "
                             "initiative too")
        if under_way:
            if not rnd:
                raise RulesError("state.initiative: a round under way needs its number (state.round, 1 or more)")
            if sorted(initiative) != sorted(state.players):
                raise RulesError(f"state.initiative: every player once, in the round's order (the players: "
                                 f"{players}), not {json_text(initiative)}")
            for k, m in enumerate(activated):
                if m not in state.vehicles:
                    raise RulesError(f"state.activated.{k}: no car {m} (the cars: {cars})")
                if activated.index(m) != k:
                    raise RulesError(f"state.activated.{k}: the {state.vehicles[m].name} twice (a car activates "
                                     f"once a round)")
            left = [m for m, v in state.vehicles.items() if plan.get(m, {}).get("status", "racing") == "racing"
                    and not v.destroyed and not v.eliminated and v.finished is None and v.pose is not None
                    and m not in activated]
            if not left:
                raise RulesError(f"state.activated: every car in play has activated, so round {rnd} is over: "
                                 f"leave out initiative and activated (the next round step starts round {rnd + 1})")
        # Checked: set it.
        for m, spec in plan.items():
            v = state.vehicles[m]
            status = spec["status"]
            if "hp" in spec:
                v.hp = int(spec["hp"])
                v.destroyed = False         # the block's word over a roster's hp 0
            if status == "destroyed":
                v.hp, v.destroyed = 0, True
            v.ever_damaged = v.ever_damaged or v.hp < v.max_hp
            if "stress" in spec:
                v.stress = int(spec["stress"])
            if "boost_used" in spec:
                v.boost_used = bool(spec["boost_used"])
            if "gates_crossed" in spec:
                v.progress = int(spec["gates_crossed"])
            if spec.get("damaged_this_round"):
                v.damaged_this_round = v.ever_damaged = True
            if status == "eliminated":
                v.eliminated = True
                state.eliminated_order.append(m)
        for k, m in enumerate(order):
            state.vehicles[m].finished = k + 1
        state.finish_order = order
        state.crossed_finish = [v.marker for v in state.in_play() if n_gates and v.progress == n_gates
                                and state.mission in racing_missions]
        for name, values in tallies.items():
            getattr(state, name).update(values)
        state.removed_terrain = gone
        if elim is not None:
            state.elimination_index = int(elim) - 1
        state.gate_firsts.update(firsts)
        if rnd is not None:
            state.round = int(rnd)
        if under_way:
            state.initiative = list(initiative)
            state.orders = {p: [] for p in state.players}
            state.activated = activated
            last = state.vehicles[activated[-1]].owner if activated else None
            state.up = self._next_player(state, last)

    def _start_gate(self, gates: dict, mission: str):
        starts = [g for g in gates.values() if g.role in ("start_finish", "start", "finish")]
        if len(starts) != 1:
            raise RulesError(f"the {mission.replace('_', ' ')} needs one gate with role 'start_finish' "
                             f"(the scene has {len(starts)}; {R}, \"Missions\")")
        return starts[0]

    def _mission_setup(self, mission: str, gates: dict, players: list[str], table, n_vehicles: int):
        """The gate sequence for the mission, and notes on how the table departs from its setup."""
        notes: list[str] = []
        lo, hi = D.GATE_WIDTH_IN
        for g in gates.values():
            w = g.width_mm / MM_PER_IN
            if not lo - 0.5 <= w <= hi + 0.5 and mission != "battle_royale":
                notes.append(f"gate {g.name} is {w:.1f} in wide; gates are roughly {lo}-{hi} in "
                             f"({R}, \"Objective Gates\")")
        first = [] if not self.option("start_gate_counts") else None
        if mission in ("two_lap_race", "elimination_race", "arena_race"):
            s = self._start_gate(gates, mission)
            others = [g for g in gates.values() if g is not s]
            if len(others) != 1:
                raise RulesError(f"the {mission.replace('_', ' ')} needs a start/finish gate and one other gate "
                                 f"(the scene has {len(gates)} gates; {R}, \"{mission.replace('_', ' ').title()}\")")
            o = others[0]
            lead = [s.name] if first is None else []
            if mission == "two_lap_race":
                return lead + [o.name, s.name] * 2, notes
            if mission == "elimination_race":
                laps = max(2, n_vehicles)           # enough gates for an elimination at each
                return lead + [o.name, s.name] * laps, notes
            apart = float(np.linalg.norm((np.add(s.a, s.b) - np.add(o.a, o.b)) / 2)) / MM_PER_IN
            if apart < 36:
                notes.append(f"the arena race's gates are {apart:.1f} in apart; at least 36 in "
                             f"({R}, \"Arena Race\")")
            return lead + [o.name, s.name] * 6, notes
        if mission in ("outrun", "scavengers"):
            if self.option(f"{mission}_reading") == "not_supported":
                raise RulesError(f"the {mission} mission stops mid-text in the book ({R}, \"{mission.title()}\"): "
                                 f"with {mission}_reading 'not_supported' it is not played; choose its reading "
                                 f"on Setup to play it")
            if len(gates) != 1:
                raise RulesError(f"the {mission} needs one gate (the scene has {len(gates)}; {R}, "
                                 f"\"{mission.title()}\")")
            g = next(iter(gates.values()))
            mid = (np.asarray(g.a) + np.asarray(g.b)) / 2
            edge_gap = min(mid[0], mid[1], table[0] - mid[0], table[1] - mid[1]) / MM_PER_IN
            if edge_gap > 1.0:
                notes.append(f"gate {g.name} is {edge_gap:.1f} in from the table edge; it should be on an edge "
                             f"({R}, \"{mission.title()}\"); a car crosses it on the table")
            return [g.name], notes
        # battle royale: a gate per player, facing the centre, 16" from it
        if len(gates) != len(players):
            raise RulesError(f"the battle royale needs a gate per player ({len(players)}), the scene has "
                             f"{len(gates)} ({R}, \"Battle Royale\")")
        centre = np.array(table) / 2
        for g in gates.values():
            mid = (np.asarray(g.a) + np.asarray(g.b)) / 2
            dist = float(np.linalg.norm(centre - mid)) / MM_PER_IN
            if abs(dist - 16) > 1:
                notes.append(f"gate {g.name} is {dist:.1f} in from the centre; 16 in ({R}, \"Battle Royale\")")
            if float(g.normal @ (centre - mid)) <= 0:
                notes.append(f"gate {g.name} does not face the centre of the table ({R}, \"Battle Royale\")")
        return [], notes

    def _check_deployment(self, state: GameState) -> None:
        """2" between cars; no part over the start gate ("Deployment Areas")."""
        placed = state.in_play()
        gap = inches(D.DEPLOY_SPACING_IN)
        for i, a in enumerate(placed):
            for b in placed[i + 1:]:
                d = closest_distance(a.footprint(), b.footprint())
                if d.distance_mm < gap - 0.01:
                    raise RulesError(f"the {a.name} and the {b.name} are deployed {d.distance_mm / MM_PER_IN:.2f} in "
                                     f"apart; at least {D.DEPLOY_SPACING_IN} in ({R}, \"Deployment Areas\")")
        if state.sequence:
            start = state.gates[state.sequence[0]] if self.option("start_gate_counts") else None
            if start is None:
                return
            seg = shapely.linestrings([start.a, start.b])
            for v in placed:
                if v.progress == 0 and shapely.intersects(v.footprint().polygon, seg):
                    raise RulesError(f"the {v.name} is deployed over the start gate {start.name}; no part of a "
                                     f"vehicle may be over it ({R}, \"Deployment Areas\")")

    def _closest_deployment(self, state: GameState) -> None:
        """Each car "as close as possible to the starting gate" ("Deployment Areas"): with every
        other car where it stands, is there a free spot (on the table, on no terrain but slow
        ground, not over the gate, at least 2" from every car, wholly on the deploying side of the
        gate's line and, by deploy_zone, between its posts) nearer the gate than where the car is?
        Spots already free when the last car went down were free when this one did, so a car
        with one could have deployed closer. Its own heading and the gate's are tried."""
        if state.mission not in ("two_lap_race", "elimination_race", "arena_race"):
            return
        start = self._start_gate(state.gates, state.mission)
        seg = shapely.linestrings([start.a, start.b])
        behind = bool(self.option("start_gate_counts"))
        slack = float(self.option("deploy_slack_mm"))
        placed = state.in_play()
        n = start.normal
        along = (np.asarray(start.b, float) - np.asarray(start.a, float)) / start.width_mm
        a0 = np.asarray(start.a, float)
        w, d = state.table_mm
        far = 2.0 * (w + d)
        faults = []
        for v in placed:
            if v.progress != 0:
                continue
            here = float(shapely.distance(v.footprint().polygon, seg))
            best = None
            for heading in {round(v.pose.heading_deg, 6),
                            round(math.degrees(math.atan2(*(n if behind else -n)[::-1])), 6)}:
                shape = v.footprint(Pose(0.0, 0.0, heading)).corners
                hx, hy = np.abs(shape).max(axis=0)
                if 2 * hx > w or 2 * hy > d:
                    continue
                free = shapely.box(hx, hy, w - hx, d - hy)
                # the deploying side of the gate's line, the whole car on it
                reach = float((shape @ n).max() if behind else -(shape @ n).min())
                side = -1.0 if behind else 1.0
                base = a0 + side * n * reach
                half = shapely.Polygon([base - along * far, base + along * far,
                                        base + along * far + side * n * far, base - along * far + side * n * far])
                free = shapely.intersection(free, half)
                if self.option("deploy_zone") == "gate_lane":
                    lo, hi = float(-(shape @ along).min()), start.width_mm - float((shape @ along).max())
                    if hi < lo:
                        continue
                    lane = shapely.Polygon([a0 + along * lo - n * far, a0 + along * lo + n * far,
                                            a0 + along * hi + n * far, a0 + along * hi - n * far])
                    free = shapely.intersection(free, lane)
                blocked = [_minkowski(np.array([start.a, start.b], float), shape)]
                for t in state.live_terrain():
                    if _terrain_kind(self, t) != "slow":
                        blocked += [_minkowski(piece, shape) for piece in _convex_pieces(t.polygon)]
                for o in placed:
                    if o.marker != v.marker:
                        blocked.append(shapely.buffer(_minkowski(o.footprint().corners, shape),
                                                      inches(D.DEPLOY_SPACING_IN) - 0.01))
                free = shapely.difference(free, shapely.union_all(blocked))
                if free.is_empty:
                    continue
                target = _minkowski(np.array([start.a, start.b], float), shape)
                gap = float(shapely.distance(free, target))
                if best is None or gap < best[0]:
                    spot = shapely.ops.nearest_points(free, target)[0]
                    best = (gap, spot.x, spot.y, heading)
            if best is not None and best[0] < here - slack:
                gap, x, y, heading = best
                faults.append(f"the {v.name} could have deployed {(here - gap) / MM_PER_IN:.2f} in closer to the "
                              f"start gate {start.name}: it stands {here / MM_PER_IN:.2f} in from it, and a spot at "
                              f"({x / MM_PER_IN:.1f}, {y / MM_PER_IN:.1f}) in, heading {heading:.0f}°, is free "
                              f"{gap / MM_PER_IN:.2f} in from it")
        if faults:
            raise RulesError("; ".join(faults) + f" (cars deploy \"as close as possible to the starting gate\"; "
                             f"{R}, \"Deployment Areas\")")

    def update_poses(self, state: GameState, poses: dict) -> None:
        """The table's latest poses (camera or scenario), as the base sets them; a car seen for
        the first time also stands there (its next move starts there). Gate crossings are
        counted from move paths and repositions, not from these."""
        super().update_poses(state, poses)
        for marker in poses:
            v = state.vehicles.get(marker)
            if v is not None and v.stood is None:
                v.stood = v.pose

    # --- rounds -------------------------------------------------------------------------

    def active_marker(self, state: GameState) -> int | None:
        return state.active_marker

    def turn_info(self, state: GameState) -> dict:
        """The round's activations: those made (in order), the one under way, then the cars the
        players' orders name next, in the order play will reach them (the players in turn from
        the initiative, as `end_activation` passes it on: CORE, "Activating Units"). A blank
        slot is the player's choice at the table, so it names no car, but it still spends that
        player's turn. `turn` is the one under way, `up` whose turn it is."""
        order = [{"player": state.vehicles[m].owner, "vehicle": m} for m in state.activated]
        turn = -1
        done = list(state.activated)
        if state.active_marker is not None:
            turn = len(order)
            order.append({"player": state.vehicles[state.active_marker].owner, "vehicle": state.active_marker})
            done.append(state.active_marker)
        if state.round > 0:
            player = (state.up if state.active_marker is None
                      else self._next_player(state, state.vehicles[state.active_marker].owner, done))
            while player is not None:
                due, free = self._order_now(state, player, done)
                if due is not None:
                    order.append({"player": player, "vehicle": due})
                # A blank slot's car is unknown, but any of the free ones leaves the later slots
                # (and who comes next) the same.
                pick = due if due is not None else (free[0] if free else None)
                if pick is None:
                    break
                done.append(pick)
                player = self._next_player(state, player, done)
        return {"round": state.round, "players": list(state.players), "order": order, "turn": turn,
                "active": state.active_marker, "up": state.up}

    def round_orders(self, state: GameState) -> dict[str, list[dict]]:
        """The order each player plans for their own cars in play: optional, slot by slot. Open
        Fire has no play orders (CORE, "Activating Units": in turn, each player "choose[s] one
        unit that has not yet been activated"), so any slot may be left blank (chosen at the table
        when it comes) and a car may be left out; a car named twice is refused."""
        out = {}
        for p in state.players:
            # The order this round is played in first (what the turn prompt follows), so the
            # form offers it again; cars it leaves out after, as they stand.
            slots = state.orders.get(p, [])
            own = sorted((v for v in state.in_play() if v.owner == p),
                         key=lambda v: slots.index(v.marker) if v.marker in slots else len(slots))
            # A slot this round's order named is offered again; the rest start empty, chosen at
            # the table as Open Fire has it (filled, the page would have set an order unasked).
            out[p] = [{"value": v.marker, "label": v.name, **({} if v.marker in slots else {"open": True})}
                      for v in own]
        return out

    def _check_orders(self, state: GameState, orders) -> dict[str, list[int | None]]:
        """The players' play orders, checked: {player: slots}, a slot a car's marker or None (blank)."""
        if orders is None:
            return {}
        if not isinstance(orders, dict):
            raise RulesError("play orders: for each player, a list of their cars in the order they will "
                             "activate them (blank where they choose at the table)")
        clean: dict[str, list[int | None]] = {}
        for player, order in orders.items():
            if player not in state.players:
                raise RulesError(f"an order from {player}, who is not playing")
            if order is None:
                order = []
            if not isinstance(order, (list, tuple)):
                raise RulesError(f"{player}'s play order: a list of their cars in the order they will activate "
                                 f"them, not {order!r}")
            seen: set[int] = set()
            for m in order:
                if m is None:
                    continue                # a blank slot: chosen at the table when it comes
                if isinstance(m, bool) or not isinstance(m, int):
                    raise RulesError(f"{player}'s play order: {m!r} is not a car's marker")
                v = state.vehicle(m)
                if m in seen:
                    raise RulesError(f"{player}'s play order names the {v.name} twice: a car activates once a "
                                     f"round ({D.CORE}, \"Activating Units\": each player in turn chooses \"one "
                                     f"unit that has not yet been activated\")")
                seen.add(m)
                if v.owner != player:
                    raise RulesError(f"{player}'s order names the {v.name}, which {v.owner} owns")
                if not v.in_play:
                    raise RulesError(f"{player}'s order names the {v.name}, which is {v.status()}")
            clean[player] = list(order)
        return clean

    def _order_now(self, state: GameState, player: str, activated=None) -> tuple[int | None, list[int]]:
        """Whom the player's play order lets activate next: (the car it names for this activation,
        or None; the cars they may choose from). Their k-th activation this round takes slot k; a
        slot naming a car that left the game before activating drops out (the rest move up). A
        blank slot (or none left) is a free choice among their cars yet to act, but for those a
        later slot names (unless only those are left). `activated`: the cars that have
        activated this round (default the state's; `turn_info` looks ahead with more)."""
        activated = state.activated if activated is None else activated
        left = [c.marker for c in state.vehicles.values() if c.owner == player and c.in_play
                and c.pose is not None and c.marker not in activated]
        slots = [m for m in state.orders.get(player, []) if m is None or m in activated
                 or state.vehicles[m].in_play]
        k = sum(1 for m in activated if state.vehicles[m].owner == player)
        if k < len(slots) and slots[k] in left:
            return slots[k], [slots[k]]
        later = [m for m in slots[k:] if m is not None and m in left]
        free = [m for m in left if m not in later]
        if not free and later:
            return later[0], [later[0]]
        return None, free

    def _order_refusal(self, state: GameState, v: Vehicle) -> str | None:
        """Why the player's play order does not let this car activate now (None: it may)."""
        due, free = self._order_now(state, v.owner)
        if v.marker in free:
            return None
        if due is not None:
            return f"{v.owner}'s order activates the {state.vehicles[due].name} next, not the {v.name}"
        slot = state.orders.get(v.owner, []).index(v.marker) if v.marker in state.orders.get(v.owner, []) else None
        if slot is not None:
            return (f"{v.owner}'s order activates the {v.name} {_ordinal(slot + 1)}; this is their "
                    f"{_ordinal(sum(1 for m in state.activated if state.vehicles[m].owner == v.owner) + 1)} "
                    f"activation this round")
        return f"the {v.name} cannot activate now"

    def start_round(self, state: GameState, orders: dict):
        """The initiative roll-off (D12 each, ties re-rolled) and the players' planned orders
        (optional; see `round_orders`). Every check comes before the first die."""
        if state.over:
            raise RulesError(f"the game is over ({state.winner or 'no one'} won)")
        if state.round > 0 and (state.up is not None or state.active_marker is not None):
            left = [v.name for v in state.in_play() if v.marker not in state.activated]
            raise RulesError(f"round {state.round} is not over: {', '.join(left)} still to activate")
        if state.pending:
            raise RulesError(self._pending_text(state))
        orders = self._check_orders(state, orders)
        history: list[dict] = []

        def rank(group: list[str]):
            faces = {}
            for p in group:
                faces[p] = (yield DiceRequest((D.DIE,), "initiative roll-off", p)).faces[0]
            history.append(dict(faces))
            out = []
            for face in sorted(set(faces.values()), reverse=True):
                tied = [p for p in group if faces[p] == face]
                out += (yield from rank(tied)) if len(tied) > 1 else tied
            return out

        order = yield from rank(list(state.players))
        state.round += 1
        state.initiative = order
        state.orders = {p: list(orders.get(p, [])) for p in state.players}      # blanks kept: slots
        state.activated = []
        state.active_marker = None
        state.up = self._next_player(state, None)
        events = [f"round {state.round}: {order[0]} wins the initiative roll-off"]
        if state.up is None:
            events += self._end_round(state)
        # Every die of the step in its rolls (docs/scenarios.md), the roll-off's re-rolls included.
        rolls = [{"asked": f"initiative roll-off for {p}", "face": f, "total": f, "modifiers": []}
                 for faces in history for p, f in faces.items()]
        return {"round": state.round, "initiative": history,
                "order": order, "up": state.up, "rolls": rolls, "events": events}

    def _can_activate(self, state: GameState, player: str, activated=None) -> bool:
        activated = state.activated if activated is None else activated
        return any(v.owner == player and v.in_play and v.pose is not None and v.marker not in activated
                   for v in state.vehicles.values())

    def _next_player(self, state: GameState, after: str | None, activated=None) -> str | None:
        order = state.initiative
        if not order:
            return None
        start = 0 if after is None else (order.index(after) + 1)
        for k in range(len(order)):
            p = order[(start + k) % len(order)]
            if self._can_activate(state, p, activated):
                return p
        return None

    def end_activation(self, state: GameState):
        """The active vehicle's activation ends (CORE, "Activating Units": a marker goes by it);
        the next player's turn, or the round's end.

        With no car active, the player whose turn it is passes. Open Fire has no pass (each
        player in turn "choose[s] one unit that has not yet been activated"), but every action
        of an activation is one the unit "may perform", so passing is activating a car that does
        nothing. Which car is that player's choice: their play order's next car, else their
        only car left, else they are asked (a ChoiceRequest). So a round always ends, even with
        a car that cannot or will not act."""
        if state.pending:
            raise RulesError(self._pending_text(state))
        if state.over:
            raise RulesError(f"the game is over ({state.winner or 'no one'} won)")
        v = state.active
        events = []
        if v is None:
            if state.round == 0:
                raise RulesError("no vehicle is taking its activation, and no round has begun: start a round "
                                 "(the initiative roll-off) or act with a car")
            if state.up is None:
                raise RulesError(f"round {state.round} is over: start the next round")
            due, free = self._order_now(state, state.up)
            if due is not None:
                pick = due
            elif len(free) == 1:
                pick = free[0]
            else:
                pick = yield ChoiceRequest(state.up, "which car activates and does nothing (a pass)",
                                           tuple({"value": m, "label": state.vehicles[m].name} for m in free))
            v = state.vehicles[pick]
            v.recovered, v.moved, v.advanced, v.attacked = False, None, False, []
            events.append(f"{state.up} passes: the {v.name} activates and does nothing")
        events.append(f"the {v.name}'s activation ends")
        state.activated.append(v.marker)
        state.active_marker = None
        if state.round > 0:
            state.up = self._next_player(state, v.owner)
            if state.up is None:
                events += self._end_round(state)
            else:
                events.append(f"{state.up} activates a vehicle next")
        return {"events": events, "up": state.up, "vehicle": v.marker, "rolls": []}

    def _end_round(self, state: GameState) -> list[str]:
        """End of round: finishers ranked, the elimination gate's first trigger, stress, the game's end."""
        events = []
        if state.crossed_finish:
            gate = state.gates[state.sequence[-1]]
            part = self.option("finish_distance_from")
            past = {m: gate.distance_past(state.vehicles[m].footprint(), part) for m in state.crossed_finish}
            for m in sorted(state.crossed_finish, key=lambda m: -past[m]):
                v = state.vehicles[m]
                state.finish_order.append(m)
                v.finished = len(state.finish_order)
                pts = list(self.option("finishing_points") or ())
                gain = pts[v.finished - 1] if v.finished <= len(pts) else 0
                state.scores[v.owner] = state.scores.get(v.owner, 0) + gain
                events.append(f"the {v.name} finishes {_ordinal(v.finished)} ({past[m] / MM_PER_IN:.2f} in past "
                              f"the line), {gain} points to {v.owner}")
            state.crossed_finish = []
        if state.elimination_index is not None:
            events += self._elimination_at_round_end(state)
        if self.option("use_stress"):
            for v in state.vehicles.values():
                if v.damaged_this_round and v.in_play and v.stress < D.MAX_STRESS:
                    v.stress += 1
                    events.append(f"the {v.name} took damage this round: stress {v.stress} "
                                  f"({D.CORE}, \"Stress\")")
        for v in state.vehicles.values():
            v.damaged_this_round = False
        state.up, state.active_marker, state.activated = None, None, []
        events += self._check_end(state, round_over=True)
        return events

    def _race_winner(self, state: GameState) -> str:
        """A race's winner: the player with the most points (RULEBOOK, "Two Lap Race": "points
        awarded for finishing positions"; CORE, "Ending the Game": "the player with the most victory
        points is declared the winner"). A tie is a draw (race_tie "draw"), or goes to the owner of
        the best-placed finisher among the tied (race_tie "best_finisher")."""
        if not state.finish_order and not any(state.scores.values()):
            state.winner = None
            return "no vehicle finished: no one wins"
        best = max(state.scores.values(), default=0)
        top = [p for p, sc in state.scores.items() if sc == best]
        if len(top) == 1:
            state.winner = top[0]
            return f"{state.winner} wins with {best} points"
        if self.option("race_tie") == "best_finisher":
            first = next((state.vehicles[m] for m in state.finish_order if state.vehicles[m].owner in top), None)
            state.winner = first.owner if first is not None else None
            if state.winner:
                return (f"{' and '.join(top)} tie on {best} points; the {first.name} finished "
                        f"{_ordinal(first.finished)}: {state.winner} wins (race_tie best_finisher)")
        state.winner = None
        return f"{' and '.join(top)} tie on {best} points: a draw"

    def _racers(self, state: GameState) -> list[Vehicle]:
        return [v for v in state.in_play() if v.marker not in state.crossed_finish]

    def _eliminate(self, state: GameState, v: Vehicle, why: str) -> str:
        v.eliminated = True
        state.eliminated_order.append(v.marker)
        return f"the {v.name} is eliminated: {why}"

    def _elimination_at_round_end(self, state: GameState) -> list[str]:
        """"The first time a round ends where all, or all but one, vehicles have crossed the current
        elimination gate, one vehicle will be eliminated" (RULEBOOK, "Elimination Gates")."""
        k = state.elimination_index
        racers = self._racers(state)
        if k >= len(state.sequence) or len(racers) < 2:
            return []
        behind = [v for v in racers if v.progress <= k]
        if len(behind) > 1:
            return []
        gate = state.gates[state.sequence[k]]
        if behind:
            out = self._eliminate(state, behind[0], f"the only vehicle not across elimination gate {k + 1} "
                                  f"({gate.name}) at the round's end")
        else:
            def near(v):
                fp = v.footprint()
                if self.option("elimination_closest") == "line":
                    depths = gate.signed_depths(fp)
                    return 0.0 if depths.min() < 0 < depths.max() else float(abs(depths).min())
                return float(shapely.distance(fp.polygon, shapely.linestrings([gate.a, gate.b])))
            last = min(racers, key=near)
            out = self._eliminate(state, last, f"everyone is across elimination gate {k + 1} ({gate.name}) and "
                                  f"it is closest to it, {near(last) / MM_PER_IN:.2f} in")
        state.elimination_index = k + 1
        return [out, f"gate {k + 2} of the sequence is now the elimination gate"]

    def _check_end(self, state: GameState, round_over: bool = False) -> list[str]:
        if state.over:
            return []
        m = state.mission
        racers = self._racers(state)
        limit = self.option("race_round_limit")
        if m in ("two_lap_race", "outrun", "elimination_race"):
            done = (not racers and not state.crossed_finish) or (m == "elimination_race" and len(racers) <= 1
                                                                  and not state.crossed_finish)
            if m == "elimination_race" and len(racers) == 1 and not state.finish_order:
                state.over, state.winner = True, racers[0].owner
                return [f"the {racers[0].name} is the last vehicle in the race: {racers[0].owner} wins"]
            if done or (round_over and limit is not None and state.round >= limit):
                state.over = True
                return ["the race is over: " + self._race_winner(state)]
            return []
        standing = {v.owner for v in racers}
        if round_over and len(standing) < len(state.players):
            # CORE, "Ending the Game": a player with no units on the battlefield forfeits
            state.over = True
            state.winner = next(iter(standing)) if len(standing) == 1 else None
            gone = [p for p in state.players if p not in standing]
            return [f"{', '.join(gone)} {'has' if len(gone) == 1 else 'have'} no vehicles left and "
                    f"forfeit{'s' if len(gone) == 1 else ''}" + (f": {state.winner} wins" if state.winner else "")]
        if (round_over and state.round >= D.DEFAULT_ROUNDS) or not racers:
            state.over = True
            best = max(state.scores.values(), default=0)
            top = [p for p, s in state.scores.items() if s == best]
            state.winner = top[0] if len(top) == 1 else None
            return [f"the game is over after round {state.round}: "
                    + (f"{state.winner} wins with {best} points" if state.winner else "a draw")]
        return []

    # --- rolling ------------------------------------------------------------------------

    def _attribute(self, v: Vehicle, attr: str) -> int:
        k = v.kind
        if attr == "skill":
            return D.MARKSMAN_SKILL if v.driver == "marksman" else k.skill
        if attr == "command":
            return D.SKILLED_DRIVER_COMMAND if v.driver == "skilled_driver" else k.command
        base = k.defence
        if "reinforced_armour" in v.upgrades:
            base += -1 if self.option("reinforced_armour") == "improves" else 1
        return base

    def _test(self, v: Vehicle, attr: str, purpose: str, mods: list[Modifier] | tuple = (), n: int = 1):
        """n attribute rolls on a D12 (CORE, "Attribute Rolls"): each a (Roll, passed) pair."""
        mods = list(mods)
        if v.badly_damaged:
            mods.append(Modifier(D.DAMAGED_ROLL_PENALTY, "lost more than half its hit points"))
        target = self._attribute(v, attr)
        req = DiceRequest((D.DIE,) * n, f"{attr} test: {purpose} (needs {target}+)", v.name)
        throw = yield req
        out = []
        for face in throw.faces:
            roll = Roll(DiceRequest((D.DIE,), req.purpose, req.who), face, tuple(mods))
            passed = face == D.AUTO_PASS or (face != D.AUTO_FAIL and roll.total >= target)
            out.append((roll, passed))
        return out

    def _roll_json(self, roll: Roll, passed: bool, target: int, **extra) -> dict:
        return {**roll.to_json(), "target": target, "passed": passed, **extra}

    def _command_test(self, state, v: Vehicle, why: str, events: list, rolls: list, mods=()):
        """A command test; failing it, the vehicle loses control (RULEBOOK, "Losing Control")."""
        (roll, passed), = yield from self._test(v, "command", why, mods)
        rolls.append(self._roll_json(roll, passed, self._attribute(v, "command")))
        if passed:
            events.append(f"the {v.name} keeps control ({why})")
            return True
        events.append(f"the {v.name} fails its command test ({why}) and loses control")
        return False

    def _lose_control(self, state: GameState, v: Vehicle, events: list, rolls: list):
        """Losing control: a defence test (1 damage on a failure), and the nearest other player's
        reposition owed (RULEBOOK, "Losing Control")."""
        (roll, passed), = yield from self._test(v, "defence", "losing control")
        rolls.append(self._roll_json(roll, passed, self._attribute(v, "defence")))
        if not passed:
            yield from self._damage(state, v, D.LOSE_CONTROL_DAMAGE, None, events, "losing control")
        if v.in_play and not any(p["vehicle"] == v.marker for p in state.pending):
            by, note = self._repositioner(state, v)
            # Where it lost control: the reposition is judged from here, whatever the camera
            # shows by then (the car is lifted and put down).
            state.pending.append({"vehicle": v.marker, "by": by, "from": [
                round(v.pose.x_mm, 2), round(v.pose.y_mm, 2), round(v.pose.heading_deg, 2),
                round(v.pose.sigma_mm, 3), round(v.pose.sigma_deg, 3)]})
            events.append(f"{' or '.join(by)} may turn the {v.name} up to 45 degrees and move it up to 1 in "
                          f"({note})")

    def _repositioner(self, state: GameState, v: Vehicle) -> tuple[list[str], str]:
        """"the player with the nearest vehicle to their own": nearest edge to edge; when the
        nearest two are too close to call apart, either of their owners."""
        me = v.footprint()
        others = [(closest_distance(me, o.footprint()), o) for o in state.in_play() if o.marker != v.marker]
        if not others:
            return [v.owner], "no other vehicle on the table"
        others.sort(key=lambda t: t[0].distance_mm)
        d0, o0 = others[0]
        who = [o0.owner]
        for d, o in others[1:]:
            sigma = math.hypot(d.sigma_mm, d0.sigma_mm)
            if d.distance_mm - d0.distance_mm <= 2 * sigma and o.owner not in who:
                who.append(o.owner)
        return who, f"the {o0.name} is nearest, {d0.distance_mm / MM_PER_IN:.2f} in"

    def _damage(self, state: GameState, v: Vehicle, amount: int, attacker: Vehicle | None, events: list, why: str):
        if amount <= 0 or not v.in_play:
            return
        v.hp -= amount
        v.damaged_this_round = v.ever_damaged = True
        events.append(f"the {v.name} takes {amount} damage ({why}): {max(v.hp, 0)}/{v.max_hp} hit points")
        if v.hp <= 0:
            v.hp = 0
            v.destroyed = True
            state.pending = [p for p in state.pending if p["vehicle"] != v.marker]
            if v.marker in state.crossed_finish:
                state.crossed_finish.remove(v.marker)
            events.append(f"the {v.name} is destroyed")
        return
        yield

    def _royale_score(self, state: GameState, attacker: Vehicle, hp_before: dict[int, int], events: list) -> None:
        """Battle Royale: "points awarded for each time an opponent is damaged" (RULEBOOK, "Battle
        Royale"), scored for an attack once it is over: the damage it dealt and what it set off
        (a critical's or Obstructing's loss of control, a blast it caused). royale_scoring
        per_attack: a point for each opponent's vehicle it damaged; per_hit_point: a point a hit
        point."""
        if state.mission != "battle_royale":
            return
        for m, before in hp_before.items():
            o = state.vehicles[m]
            lost = before - max(o.hp, 0)
            if o.owner == attacker.owner or lost <= 0:
                continue
            gain = 1 if self.option("royale_scoring") == "per_attack" else lost
            state.scores[attacker.owner] = state.scores.get(attacker.owner, 0) + gain
            events.append(f"the {o.name} is damaged: {gain} point{'s' if gain != 1 else ''} to {attacker.owner} "
                          f"({R}, \"Battle Royale\")")

    def _pending_text(self, state: GameState) -> str:
        p = state.pending[0]
        v = state.vehicles[p["vehicle"]]
        return (f"the {v.name} lost control: {' or '.join(p['by'])} must reposition it first "
                f"(act 'reposition')")

    # --- actions ------------------------------------------------------------------------

    def before_action(self, state: GameState, action: dict) -> None:
        """Nothing happens while the game is over (but the campaign's after-game steps), or while
        a car that lost control waits to be repositioned (RULEBOOK, "Losing Control": it happens
        at once)."""
        if action.get("act") in ("upgrade_stage", "campaign_mission"):
            return
        if state.over:
            raise RulesError(f"the game is over ({state.winner or 'no one'} won)")
        if state.pending and action.get("act") != "reposition":
            raise RulesError(self._pending_text(state))

    def after_action(self, state: GameState, action: dict, result: dict) -> dict:
        """Has the game ended with this action (the last racer out or finished)?"""
        result.setdefault("events", [])
        result["events"] += self._check_end(state)
        return result

    def actor_marker(self, state: GameState, action: dict) -> int:
        """The car an action is taken with; the campaign's after-game steps belong to no car,
        and are taken from any car's card."""
        if isinstance(action, dict) and action.get("act") in ("upgrade_stage", "campaign_mission") \
                and action.get("vehicle") is None and state.vehicles:
            return min(state.vehicles)
        return super().actor_marker(state, action)

    def _activate(self, state: GameState, action: dict, step: str) -> Vehicle:
        """The vehicle acting, checked against whose turn it is and the order of actions
        (CORE, "Activating Units": recover, move, attack, in that order)."""
        marker = action.get("vehicle")
        v = state.vehicle(marker)
        if not v.in_play:
            raise RulesError(f"the {v.name} is {v.status()}")
        if v.pose is None:
            raise RulesError(f"the {v.name} is not on the table")
        if state.active_marker is None:
            if state.round > 0:
                if state.up is None:
                    raise RulesError(f"round {state.round} is over; start the next round")
                if v.owner != state.up:
                    raise RulesError(f"it is {state.up}'s turn to activate a vehicle, and the {v.name} is "
                                     f"{v.owner}'s")
                if v.marker in state.activated:
                    raise RulesError(f"the {v.name} has already activated this round")
                refusal = self._order_refusal(state, v)
                if refusal:
                    raise RulesError(refusal)
            if step != "move":
                self._check_stands_where_it_stood(v, step)
            state.active_marker = v.marker
            v.recovered, v.moved, v.advanced, v.attacked = False, None, False, []
        elif state.active_marker != v.marker:
            raise RulesError(f"it is the {state.active.name}'s activation; end it before the {v.name} acts")
        if step == "recover" and (v.recovered or v.moved or v.attacked):
            raise RulesError(f"the {v.name} can only recover at the start of its activation "
                             f"({D.CORE}, \"Activating Units\")")
        if step == "move":
            if v.moved:
                raise RulesError(f"the {v.name} has already moved this activation")
            if v.attacked:
                raise RulesError(f"the {v.name} has attacked; it moves before attacking "
                                 f"({D.CORE}, \"Activating Units\")")
        return v

    @action("hold", fields={"vehicle": "marker"})
    def _act_hold(self, state: GameState, action: dict):
        """Activate the vehicle and do nothing (every action of an activation is optional:
        CORE, "Activating Units" says it "may perform")."""
        v = self._activate(state, action, "hold")
        return {"result": "holds", "rolls": [], "events": [f"the {v.name} holds its position"]}
        yield

    # --- recover ------------------------------------------------------------------------

    @action("recover", fields={"vehicle": "marker"})
    def _act_recover(self, state: GameState, action: dict):
        """CORE, "Action: Recover": a command roll per stress marker."""
        v = self._activate(state, action, "recover")
        if not v.stress:
            raise RulesError(f"the {v.name} has no stress to recover from")
        events, rolls = [], []
        results = yield from self._test(v, "command", f"recover from {v.stress} stress", n=v.stress)
        target = self._attribute(v, "command")
        removed = 0
        for roll, passed in results:
            rolls.append(self._roll_json(roll, passed, target))
        if any(r.face == D.AUTO_PASS for r, _ in results):
            removed = v.stress
        elif self.option("recover") == "success_removes_one":
            removed = sum(1 for _, p in results if p)
        v.stress -= removed
        v.recovered = True
        events.append(f"the {v.name} sheds {removed} stress ({v.stress} left)")
        return {"result": "recovered" if removed else "no change", "removed": removed, "rolls": rolls,
                "events": events}

    # --- move ---------------------------------------------------------------------------

    def allowance_in(self, v: Vehicle, advance: bool) -> tuple[float, list[str]]:
        """The movement rate this activation, in inches, and why."""
        why = [f"{v.kind.name} {v.kind.move_in}"]
        mov = float(v.kind.move_in)
        if "tank_tracks" in v.upgrades:
            mov += D.TANK_TRACKS_MOVE_IN
            why.append(f"tank tracks {D.TANK_TRACKS_MOVE_IN}")
        if v.badly_damaged:
            mov += D.DAMAGED_MOVE_PENALTY_IN
            why.append(f"badly damaged {D.DAMAGED_MOVE_PENALTY_IN}")
        if self.option("use_stress") and v.stress:
            mov -= v.stress
            why.append(f"stress -{v.stress}")
        if advance:
            extra = D.FAST_ADVANCE_IN if "Fast" in v.kind.special else D.ADVANCE_IN
            mov += extra
            why.append(f"advance +{extra}")
        return max(mov, 0.0), why

    def move_start(self, v: Vehicle) -> Pose | None:
        """Where a move of the car begins: where the rules last put it (deployed, or where its
        last move or reposition ended), not where the camera sees it now: a car pushed by hand
        before its move is declared, or between activations, has moved, and the path counts it.
        (Taking "where it stands when its activation could begin" instead would let a car pushed
        during another's activation start its move from there, a free move: not the reading.)"""
        return v.stood if v.stood is not None else v.pose

    def _check_stands_where_it_stood(self, v: Vehicle, step: str) -> None:
        """An activation that begins with anything but a move: the car must stand where the rules
        last put it (within the path tolerances and the camera's doubt), else it has moved
        without a movement action (CORE, "Activating Units": it moves only in its Move)."""
        if v.stood is None or v.pose is None:
            return
        gap_mm = float(np.hypot(*(v.pose.xy - v.stood.xy)))
        turn = abs(normalize_deg(v.pose.heading_deg - v.stood.heading_deg))
        sigma = math.hypot(v.pose.axis_sigma_mm, v.stood.axis_sigma_mm)
        moved = judge("moved since it stood", gap_mm, float(self.option("path_tolerance_mm")), sigma)
        turned = judge("turned since it stood", turn, float(self.option("turn_tolerance_deg")),
                       math.hypot(v.pose.sigma_deg, v.stood.sigma_deg))
        if moved.outcome == "out" or turned.outcome == "out":
            s = v.stood
            raise RulesError(f"the {v.name} stands {gap_mm:.0f} mm and {turn:.0f} degrees from where it stood "
                             f"(its dashed outline on the page): it moves only in a move; "
                             f"resolve its move first, or put it back before it does anything else "
                             f"({D.CORE}, \"Activating Units\")")

    def check_path(self, state: GameState, v: Vehicle, path: list[Pose], *, backward: bool | None = None,
                   advance: bool = False, boost: bool = False, start: Pose | None = None) -> dict:
        """Measure a move from `start` (by default where the car stood) through `path`: its
        straights and turns, its cost against the allowance (VEHICLES, "Vehicle Movement"). The
        path is the poses after the start (a scenario's), or the camera's, which begins where the
        car stood: a first step within the tolerance is no distance. Raises RulesError when it
        breaks a rule of movement; terrain and cars on the way are the resolution's."""
        start = start or self.move_start(v)
        tol_mm = float(self.option("path_tolerance_mm"))
        tol_deg = float(self.option("turn_tolerance_deg"))
        if not path:
            raise RulesError("a move needs a 'path' of at least one pose")
        poses = [start, *path]
        if boost:
            poses = _boost_first(poses, inches(D.BOOST_IN), tol_mm, tol_deg)
        dist_mm = boost_mm = slow_mm = 0.0
        travel = {"forward": 0.0, "backward": 0.0}       # ground driven each way, and slow ground of it
        slow_way = {"forward": 0.0, "backward": 0.0}
        slow = [t for t in state.live_terrain() if _terrain_kind(self, t) == "slow"]
        grown: dict = {}            # slow ground grown by the car's shape, by heading (_slow_on)
        on_the_spot = self.option("path_reading") == "on_the_spot"
        # Turning is summed into runs in one direction (a counter-turn within the tolerance is
        # camera jitter, absorbed); each run of up to 45 degrees is a manoeuvre.
        # A straight run of turn_break_mm or more (heading within the tolerance of where it began)
        # ends a run: the next turn is another manoeuvre (VEHICLES, "Vehicle Movement": each is a
        # turn on the spot).
        runs: list[float] = []
        cur = back = 0.0
        break_mm = float(self.option("turn_break_mm"))
        anchor, straight_mm = poses[0].heading_deg, 0.0
        for k, (a, b) in enumerate(zip(poses, poses[1:])):
            d = b.xy - a.xy
            run = float(np.hypot(*d))
            signed = normalize_deg(b.heading_deg - a.heading_deg)
            turn = abs(signed)
            if abs(normalize_deg(b.heading_deg - anchor)) > tol_deg:
                anchor, straight_mm = b.heading_deg, 0.0
            else:
                straight_mm += run
                if straight_mm >= break_mm and abs(cur + back) > tol_deg:
                    runs.append(cur + back)
                    cur = back = 0.0
            if cur == 0.0 or signed * cur >= 0:
                cur += signed + back
                back = 0.0
            else:
                back += signed
                if abs(back) > tol_deg:
                    runs.append(cur)
                    cur, back = back, 0.0
            if turn > tol_deg and run > tol_mm and on_the_spot:
                raise RulesError(f"step {k + 1} of the path turns {turn:.0f} degrees while moving "
                                 f"{run / MM_PER_IN:.2f} in; vehicles turn on the spot, then drive straight "
                                 f"({D.VEHICLES}, \"Vehicle Movement\")")
            if run <= tol_mm:
                # Too short to tell its direction (the camera's steps are a few mm), but it is
                # ground covered all the same, slow ground included.
                dist_mm += run
                slow_mm += self._slow_on(v, slow, a, b, grown)
                continue
            mid = Pose(a.x_mm, a.y_mm, a.heading_deg + signed / 2)
            along = float(d @ mid.forward)
            lateral = abs(float(d @ mid.left))
            if lateral > tol_mm:
                since = (f" from where the {v.name} stood (its dashed outline on the page: was it "
                         f"moved by hand since? put it back there and drive again)" if k == 0 else "")
                raise RulesError(f"step {k + 1} of the path slides {lateral:.1f} mm sideways{since}; a vehicle moves "
                                 f"straight forwards or backwards ({D.CORE}, \"Action: Movement\")")
            if boost and k == 0:
                if along < 0 or abs(run - inches(D.BOOST_IN)) > tol_mm:
                    raise RulesError(f"a boost moves directly forward {D.BOOST_IN} in; the path's first step moves "
                                     f"{run / MM_PER_IN:.2f} in {'back' if along < 0 else 'forward'} "
                                     f"({R}, \"Vehicle Upgrades\")")
                boost_mm = run
                if not self.option("boost_counts"):
                    continue
            way = "forward" if along > 0 else "backward"
            on_slow = self._slow_on(v, slow, a, b, grown)
            travel[way] += run
            slow_way[way] += on_slow
            dist_mm += run
            slow_mm += on_slow
        if boost and not boost_mm:
            turned = abs(normalize_deg(poses[1].heading_deg - poses[0].heading_deg)) if len(poses) > 1 else 0.0
            first = (f"this path turns {turned:.0f} degrees before it" if turned > tol_deg
                     else "this path starts with no straight step")
            raise RulesError(f"a boost moves directly forward {D.BOOST_IN} in at the start of the move, before any "
                             f"turn; {first} ({R}, \"Vehicle Upgrades\")")
        correction_mm = 0.0
        if travel["forward"] and travel["backward"]:
            # A move is judged by where the car ends and the way it went: a hand that slides a car
            # past its mark and back has not reversed, up to reverse_correction_mm of travel back.
            going = "forward" if travel["forward"] >= travel["backward"] else "backward"
            other = "backward" if going == "forward" else "forward"
            correction_mm, limit = travel[other], float(self.option("reverse_correction_mm"))
            if correction_mm > limit:
                raise RulesError(f"the path drives both forwards and backwards ({travel['forward'] / MM_PER_IN:.2f} in "
                                 f"forwards, {travel['backward'] / MM_PER_IN:.2f} in backwards); a vehicle moves one "
                                 f"way in an activation ({D.VEHICLES}, \"Vehicle Restrictions\"), and a hand's "
                                 f"correction counts only up to {limit / MM_PER_IN:.2f} in back")
            # The correction undoes as much of the overshoot: neither counts against the allowance.
            dist_mm = max(dist_mm - 2 * correction_mm, 0.0)
            slow_mm = np.maximum(slow_mm - 2 * slow_way[other], 0.0)
        else:
            going = ("forward" if travel["forward"] else "backward" if travel["backward"]
                     else ("backward" if backward else "forward"))
        # slow_measure each_part: each part's own slow ground, summed along the path; the most any
        # one part drove over it is the charge.
        slow_mm = float(np.max(slow_mm))
        if backward is not None and (going == "backward") != bool(backward):
            raise RulesError(f"the path drives {going}s, but the move says backward={bool(backward)}")
        if boost and going == "backward":
            raise RulesError(f"a boost drives forward; the rest of the move cannot be backwards "
                             f"({D.VEHICLES}, \"Vehicle Restrictions\")")
        runs.append(cur)
        barrier_mm, crossed = self._barriers(state, v, poses)
        manoeuvres = sum(int(math.ceil((abs(r) - tol_deg) / D.MANOEUVRE_DEG - 1e-9)) for r in runs if abs(r) > tol_deg)
        free = 2 if "tank_tracks" in v.upgrades else 1
        if advance:
            # VEHICLES, "Vehicle Movement": an advance move "may not make more than 1 manoeuvre",
            # and Tank Tracks' "2nd free manoeuvre" does not lift that (unlike Manoeuvrable (X),
            # "including when making an advance move"): one manoeuvre, and it is the free one.
            free = min(free, D.ADVANCE_MAX_MANOEUVRES)
        if advance and manoeuvres > D.ADVANCE_MAX_MANOEUVRES:
            tracks = (", Tank Tracks' second free manoeuvre included" if "tank_tracks" in v.upgrades else "")
            raise RulesError(f"an advance move makes at most {D.ADVANCE_MAX_MANOEUVRES} manoeuvre{tracks}; this path "
                             f"makes {manoeuvres} ({D.VEHICLES}, \"Vehicle Movement\")")
        extra = max(manoeuvres - free, 0)
        allowance_in, why = self.allowance_in(v, advance)
        cost_mm = dist_mm + slow_mm + inches(D.EXTRA_MANOEUVRE_IN) * extra + barrier_mm
        allowance_mm = inches(allowance_in)
        if going == "backward":
            if self.option("backward_cost") == "half_rate":
                allowance_mm /= 2
                why.append("backwards: half")
            else:
                cost_mm += dist_mm + slow_mm
                why.append("backwards: each inch counts 2")
        # Along a path the camera followed, each step's error along the way cancels the next's: the
        # doubt in its length is the doubt in where it started and where it ended.
        sigma = math.hypot(start.axis_sigma_mm, path[-1].axis_sigma_mm) if self.option("move_doubt") == "poses" else 0.0
        verdict = judge("distance moved", cost_mm, allowance_mm, sigma)
        return {"distance_mm": round(dist_mm, 2), "boost_mm": round(boost_mm, 2), "slow_extra_mm": round(slow_mm, 2),
                "correction_mm": round(correction_mm, 2),
                "barrier_extra_mm": round(barrier_mm, 2),
                "manoeuvres": manoeuvres, "free_manoeuvres": free, "extra_manoeuvres": extra,
                "direction": going, "cost_mm": round(cost_mm, 2), "allowance_mm": round(allowance_mm, 2),
                "allowance": ", ".join(why), "barriers_crossed": crossed, "verdict": verdict}

    def _slow_on(self, v: Vehicle, slow: list, a: Pose, b: Pose, cache: dict | None = None) -> float:
        """How much of a step's ground is driven through slow terrain: counted again (CORE,
        "Slow": "All movement through slow terrain counts as double the distance actually
        travelled"), unless the car is Rugged. slow_measure "any_part" (CORE, "Measuring": "no
        part of the model moves more than the distance you have measured"): the distance the car
        goes while any part of it is over the slow ground, a nose in the sand or a flank along
        it; "centre": only the ground its centre's line crosses.

        Exactly, for a straight run: the car (its shape at its heading) overlaps a convex piece
        while its centre is inside the piece grown by that shape (`_minkowski`), so the charge is
        the length of the centre's line inside those grown pieces. A step that turns is cut into
        1-degree slices, each taken straight at its middle heading. `cache` (one per path) keeps
        the grown pieces by heading, to a quarter degree (under 0.1 mm at a car's corner)."""
        if "Rugged" in v.kind.special or not slow:
            return 0.0
        if self.option("slow_measure") == "centre":
            seg = shapely.linestrings([a.xy, b.xy])
            return sum(float(shapely.length(shapely.intersection(seg, t.polygon))) for t in slow)
        if self.option("slow_measure") == "each_part":
            return self._slow_each_part(v, slow, a, b)
        reach = math.hypot(v.length_mm, v.width_mm) / 2
        # A hair in from the edges: a car flush against the sand, touching it, is not in it.
        half_l, half_w = v.length_mm / 2 - 1e-3, v.width_mm / 2 - 1e-3
        total = 0.0
        slices = [a, *interpolate(a, b, 1e9, 1.0)]
        for p, q in zip(slices, slices[1:]):
            seg = shapely.linestrings([p.xy, q.xy])
            if float(np.hypot(*(q.xy - p.xy))) < 1e-9:
                continue                # a turn on the spot: no ground driven
            near = [t for t in slow if float(shapely.distance(seg, t.polygon)) < reach]
            if not near:
                continue
            heading = round(normalize_deg(p.heading_deg + normalize_deg(q.heading_deg - p.heading_deg) / 2) * 4) / 4
            key = (heading, tuple(id(t) for t in near))
            grown = None if cache is None else cache.get(key)
            if grown is None:
                mid = Pose(0.0, 0.0, heading)
                f, l = mid.forward, mid.left
                shape = np.array([f * half_l + l * half_w, f * half_l - l * half_w,
                                  -f * half_l - l * half_w, -f * half_l + l * half_w])
                grown = shapely.union_all([_minkowski(piece, shape) for t in near
                                           for piece in _convex_pieces(t.polygon)])
                shapely.prepare(grown)
                if cache is not None:
                    cache[key] = grown
            total += float(shapely.length(shapely.intersection(seg, grown)))
        return total

    #: slow_measure each_part: the car's parts as a grid of points this far apart at most (mm).
    EACH_PART_GRID_MM = 2.5

    def _slow_each_part(self, v: Vehicle, slow: list, a: Pose, b: Pose):
        """slow_measure "each_part": how far each part of the car (a grid of points over its
        footprint, edges included, at most EACH_PART_GRID_MM apart) drives over slow ground in this
        step, as an array the path sums point by point (`check_path` charges the most any one
        point drove). Each point's run is measured exactly on a straight step; a turning step is
        cut into 1-degree slices, each point's run in one taken straight."""
        n_l = max(2, math.ceil(v.length_mm / self.EACH_PART_GRID_MM) + 1)
        n_w = max(2, math.ceil(v.width_mm / self.EACH_PART_GRID_MM) + 1)
        gl, gw = np.meshgrid(np.linspace(-v.length_mm / 2, v.length_mm / 2, n_l),
                             np.linspace(-v.width_mm / 2, v.width_mm / 2, n_w))
        gl, gw = gl.ravel(), gw.ravel()
        out = np.zeros(gl.size)
        if "Rugged" in v.kind.special or not slow:
            return out
        reach = math.hypot(v.length_mm, v.width_mm) / 2
        seg = shapely.linestrings([a.xy, b.xy])
        near = [t.polygon for t in slow if float(shapely.distance(seg, t.polygon)) < reach]
        if not near:
            return out
        ground = shapely.union_all(near)
        shapely.prepare(ground)
        slices = [a, *interpolate(a, b, 1e9, 1.0)]
        for p, q in zip(slices, slices[1:]):
            if float(np.hypot(*(q.xy - p.xy))) < 1e-9:
                continue                # a turn on the spot: no ground driven
            ends = []
            for pose in (p, q):
                f, l = pose.forward, pose.left
                ends.append(np.column_stack([pose.x_mm + gl * f[0] + gw * l[0], pose.y_mm + gl * f[1] + gw * l[1]]))
            # Each point's own run in this slice, and how much of it lies on the slow ground.
            runs = shapely.linestrings(np.stack(ends, axis=1))
            out += shapely.length(shapely.intersection(runs, ground))
        return out

    def _barriers(self, state: GameState, v: Vehicle, poses: list[Pose]) -> tuple[float, list[str]]:
        """Barriers the path drives across: 1 in of the allowance for each time the car goes onto
        one; it may not end on one (CORE, "Barrier")."""
        pieces = [t for t in state.live_terrain() if _terrain_kind(self, t) == "barrier"]
        if not pieces:
            return 0.0, []
        contact = float(self.option("contact_mm"))
        dense = [poses[0]]
        for a, b in zip(poses, poses[1:]):
            dense += interpolate(a, b, 2.0, 2.0)
        inner = shapely.buffer(shapely.polygons([v.footprint(p).corners for p in dense]), -contact,
                               join_style="mitre")
        extra, crossed = 0.0, []
        for t in pieces:
            on = shapely.intersects(inner, t.polygon)
            if on[-1]:
                raise RulesError(f"the {v.name} would end its move on the {t.name or 'terrain'} (a barrier); a model may move "
                                 f"across a barrier but not finish on it ({D.CORE}, \"Barrier\")")
            times = int(np.count_nonzero(on[1:] & ~on[:-1]))
            if times:
                extra += inches(D.BARRIER_IN) * times
                crossed += [t.name] * times
        return extra, crossed

    def judge_move(self, state: GameState, marker: int, to: Pose) -> dict:
        """Would the car standing at `to` be legal? A car that owes a reposition: judged as one,
        against where it lost control (RULEBOOK, "Losing Control"). Else a move from where it
        stood, read as the simplest shape that ends there (turn, straight, turn): the move itself
        is judged on the path the camera saw. An illegal answer's "fix" says, in players' words
        and with numbers, what to do with the car in hand to make it legal (all of it together);
        a legal one's is empty."""
        out = self._judge_here(state, marker, to)
        out["fix"] = [] if out["legal"] else self._fixes(state, marker, to)
        return out

    def _judge_here(self, state: GameState, marker: int, to: Pose) -> dict:
        v = state.vehicle(marker)
        p = next((p for p in state.pending if p["vehicle"] == marker), None)
        if p is not None:
            try:
                r = self._judge_reposition(state, v, p, to)
            except RulesError as exc:
                return {"legal": False, "reasons": [str(exc)], "reposition": True}
            return {"legal": True, "reasons": [], "reposition": True, "turn": r["turn"].to_json(),
                    "moved": r["moved"].to_json()}
        start = self.move_start(v)
        if start is None:
            return {"legal": False, "reasons": [f"the {v.name} is not on the table"]}
        try:
            m = self.check_path(state, v, _path_to(start, to), start=start)
        except RulesError as exc:
            return {"legal": False, "reasons": [str(exc)]}
        verdict = m.pop("verdict")
        reasons = []
        if verdict.outcome == "out":
            reasons.append(f"it costs {m['cost_mm'] / MM_PER_IN:.2f} in of {m['allowance_mm'] / MM_PER_IN:.2f} in "
                           f"(a plain move)")
            reach = self._reached_otherwise(state, v, start, to)
            if reach:
                reasons.append(reach)
        return {"legal": verdict.outcome != "out", "reasons": reasons, **m, "verdict": verdict.to_json()}

    def _reached_otherwise(self, state: GameState, v: Vehicle, start: Pose, to: Pose) -> str | None:
        """A pose too far for a plain move may be one an advance move (CORE, "Advance Moves") or the
        car's unused boost (RULEBOOK, "Vehicle Upgrades": 9 in straight ahead first) reaches: the
        judgement takes neither (a move declares them), so say which would, the least first."""
        boost_ok = "boost" in v.upgrades and not v.boost_used
        ahead = Pose(*(start.xy + start.forward * inches(D.BOOST_IN)), start.heading_deg)
        ways = [(True, False), *([(False, True), (True, True)] if boost_ok else [])]
        for advance, boost in ways:
            path = [ahead, *_path_to(ahead, to)] if boost else _path_to(start, to)
            try:
                m = self.check_path(state, v, path, advance=advance, boost=boost, start=start)
            except RulesError:
                continue
            if m["verdict"].outcome == "out":
                continue
            how = " with its boost" if boost and not advance else (
                " as an advance move with its boost" if boost else " as an advance move")
            then = (f'; it then takes {D.ADVANCE_SKILL_PENALTY} to skill rolls this activation ({D.CORE}, '
                    f'"Advance Moves")' if advance else "")
            used = (f'; the boost drives {D.BOOST_IN} in straight ahead first and is spent ({R}, "Vehicle Upgrades")'
                    if boost else "")
            after = " after the boost" if boost and not self.option("boost_counts") else ""
            return (f"declared{how}, the move reaches it: it costs {m['cost_mm'] / MM_PER_IN:.2f} in of "
                    f"{m['allowance_mm'] / MM_PER_IN:.2f} in{after}{then}{used}")
        return None

    # --- fixes: what the player does with the car in hand to make a position legal ------------
    #
    # Each is found by asking the same judgement again at the changed pose, strictly (the
    # measured value within the limit, not merely too close to call), so that doing what it says
    # is enough; inches are rounded up to 2 decimals, degrees up to whole ones.

    def _fixes(self, state: GameState, marker: int, to: Pose) -> list[str]:
        v = state.vehicle(marker)
        p = next((p for p in state.pending if p["vehicle"] == marker), None)
        if p is not None:
            return self._reposition_fixes(state, v, p, to)
        start = self.move_start(v)
        if start is None:
            return [f"put the {v.name} on the table, where the camera sees it"]
        return self._move_fixes(state, v, start, to)

    def _move_ok(self, state: GameState, v: Vehicle, start: Pose, to: Pose) -> bool:
        """The move ending at `to` is legal with no doubt counted: it breaks no rule of movement
        and its cost is within the allowance (VEHICLES, "Vehicle Movement")."""
        try:
            m = self.check_path(state, v, _path_to(start, to), start=start)
        except RulesError:
            return False
        return m["cost_mm"] <= m["allowance_mm"] + 1e-6

    def _move_fixes(self, state: GameState, v: Vehicle, start: Pose, to: Pose) -> list[str]:
        """A move too long (distance, slow ground, barriers and manoeuvres past the free ones
        against the allowance: VEHICLES, "Vehicle Movement" and "Vehicle Restrictions"; CORE,
        "Slow", "Barrier") or ending on a barrier (CORE, "Barrier"): bringing the car back along
        its path, towards where it stood, shortens the run and keeps its turns (the bearing is the
        same); when the turns are what costs, turning it where it stands may be enough instead.
        Both are offered when each alone is ("... , or turn it 4° left")."""
        ok = lambda pose: self._move_ok(state, v, start, pose)
        barrier = self._barrier_under(state, v, to)
        # Without barriers on the table the cost only falls as the car comes back: halving
        # finds the point at once; a barrier is left only past its far edge, so scan for it.
        scan = any(_terrain_kind(self, t) == "barrier" for t in state.live_terrain())
        back = self._back_along(start, to, ok, scan=scan)
        try:
            turns_cost = self.check_path(state, v, _path_to(start, to), start=start)["extra_manoeuvres"] > 0
        except RulesError:
            turns_cost = True
        # A turn where it stands changes only its last manoeuvres: worth trying only if they cost.
        turn = self._turn_to_fix(to, ok) if turns_cost else None
        off = f", off the {barrier}" if barrier else ""
        if back is not None and turn is not None and not barrier:
            return [f"{_back_words(back[0])}, or {_turn_words(turn[0])}"]
        if barrier:
            # Off a barrier the other way too, if the allowance reaches: on past its far side
            # (CORE, "Barrier": across one costs 1 in more, ending on it is what is refused).
            beyond = Pose(*(to.xy + (to.xy - start.xy) / max(float(np.hypot(*(to.xy - start.xy))), 1e-9)
                            * inches(4)), to.heading_deg)
            on = self._back_along(beyond, to, ok)
            if on is not None and (back is None or on[0] < back[0]):
                return [f"push it {on[0]:.2f} in on along its path{off}"]
        if back is not None:
            return [f"{_back_words(back[0])}{off}"]
        if turn is not None:
            return [_turn_words(turn[0])]
        # The turns alone cost more than the car may drive even where it stood: turn it first
        # (the fewest manoeuvres that will do), then bring it back as far as that needs.
        for k in range(1, 181):
            for side in (1, -1):
                turned = Pose(to.x_mm, to.y_mm, normalize_deg(to.heading_deg + side * k))
                again = self._back_along(start, turned, ok, scan=scan)
                if again is not None:
                    return [_turn_words(side * k), f"{_back_words(again[0])}{off}"]
        return ["put it back where it stood (its dashed outline on the page)"]

    def _barrier_under(self, state: GameState, v: Vehicle, to: Pose) -> str | None:
        contact = float(self.option("contact_mm"))
        inner = v.footprint(to).polygon.buffer(-contact, join_style="mitre")
        for t in state.live_terrain():
            if _terrain_kind(self, t) == "barrier" and shapely.intersects(inner, t.polygon):
                return t.name or "barrier"
        return None

    @staticmethod
    def _back_along(start: Pose, to: Pose, ok, scan: bool = True) -> tuple[float, Pose] | None:
        """The least distance (inches, rounded up to 0.01) to bring the car from `to` back along the
        straight from where it stood, heading kept, for `ok`; None if even all the way is not."""
        d = start.xy - to.xy
        length_mm = float(np.hypot(*d))
        if length_mm < 1e-6:
            return None
        unit = d / length_mm

        def at(back_mm: float) -> Pose:
            xy = to.xy + unit * min(back_mm, length_mm)
            return Pose(float(xy[0]), float(xy[1]), to.heading_deg)
        # `ok` holds from some distance on when it only gets easier as the car comes back (less
        # ground, no more slow ground); where it may not (a barrier to clear), scan, then halve.
        step_mm = 2.0 if scan else length_mm
        lo, hi = 0.0, None
        b = step_mm
        while b < length_mm + step_mm:
            if ok(at(b)):
                hi = min(b, length_mm)
                break
            lo = b
            b += step_mm
        if hi is None:
            return None
        for _ in range(20):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if ok(at(mid)) else (mid, hi)
        back_in = math.ceil(hi / MM_PER_IN * 100 - 1e-3) / 100
        while not ok(at(back_in * MM_PER_IN)) and back_in * MM_PER_IN < length_mm:
            back_in += 0.01         # rounding's last hundredth
        return round(back_in, 2), at(back_in * MM_PER_IN)

    @staticmethod
    def _turn_to_fix(to: Pose, ok, most_deg: int = 90) -> tuple[int, Pose] | None:
        """The least whole-degree turn where the car stands (signed: + left, headings grow
        anticlockwise) for `ok`, either way; None if none up to `most_deg`."""
        for k in range(1, most_deg + 1):
            for side in (1, -1):
                pose = Pose(to.x_mm, to.y_mm, normalize_deg(to.heading_deg + side * k))
                if ok(pose):
                    return side * k, pose
        return None

    def _reposition_fixes(self, state: GameState, v: Vehicle, p: dict, to: Pose) -> list[str]:
        """A reposition (RULEBOOK, "Losing Control": up to 45 degrees, up to 1 in, not over a car,
        terrain or off the table), fixed limit by limit in the order they are judged: turned too
        far, turn it back by the excess; moved too far, bring it back towards where it lost
        control; over something, the least shift (in the car's own directions, or back towards
        where it lost control) that clears it within the limits. Each next fix starts from the
        pose the last one leaves."""
        was = parse_pose(p["from"], f"where the {v.name} lost control")
        limit_mm = inches(D.LOSE_CONTROL_MOVE_IN)
        centre = self.option("reposition_measure") == "centre"

        def moved_mm(pose: Pose) -> float:
            if centre:
                return float(np.hypot(*(pose.xy - was.xy)))
            return float(np.max(np.hypot(*(v.footprint(pose).corners - v.footprint(was).corners).T)))

        def ok(pose: Pose) -> bool:
            try:
                r = self._judge_reposition(state, v, p, pose)
            except RulesError:
                return False
            return r["turn_deg"] <= D.LOSE_CONTROL_TURN_DEG + 1e-9 and r["moved_mm"] <= limit_mm + 1e-6

        fixes, pose, turned_deg = [], Pose(to.x_mm, to.y_mm, to.heading_deg), 0
        turn = normalize_deg(pose.heading_deg - was.heading_deg)
        if abs(turn) > D.LOSE_CONTROL_TURN_DEG:
            k = math.ceil(abs(turn) - D.LOSE_CONTROL_TURN_DEG - 1e-9)
            turned_deg = -k if turn > 0 else k
            pose = Pose(pose.x_mm, pose.y_mm, normalize_deg(pose.heading_deg + turned_deg))
        if moved_mm(pose) > limit_mm + 1e-6:
            within = lambda q: moved_mm(q) <= limit_mm + 1e-6
            back = self._back_along(was, pose, within)
            if back is None:
                # Its corners swing more than an inch on the turn alone (reposition_measure
                # any_point): turn it further back towards how it stood, then bring it back.
                at_was = Pose(was.x_mm, was.y_mm, pose.heading_deg)
                rest = normalize_deg(at_was.heading_deg - was.heading_deg)
                for k in range(1, math.ceil(abs(rest)) + 1):
                    signed = -k if rest > 0 else k
                    turned = Pose(pose.x_mm, pose.y_mm, normalize_deg(pose.heading_deg + signed))
                    back = self._back_along(was, turned, within) if not within(turned) else (None, turned)
                    if back is not None:
                        turned_deg += signed        # the same way as any turn back above
                        break
            if back is None:
                return [_put_back(was)]
            if back[0] is not None:
                fixes.append(f"bring it {back[0]:.2f} in back towards where it lost control")
            pose = back[1]
        if turned_deg:
            fixes.insert(0, _turn_words(turned_deg))
        if ok(pose):
            return fixes
        try:
            self._judge_reposition(state, v, p, pose)
            what = "where it is"            # only a hair over a limit: the shift below settles it
        except RulesError as exc:
            text = str(exc)
            what = ("the table's edge" if "off the table" in text else
                    text.split(" over ", 1)[1].split(" (")[0] if " over " in text else "where it is")
        shift = self._least_shift(v, was, pose, ok)
        if shift is None:
            return fixes + [_put_back(was)]
        fixes.append(f"move it {shift[0]:.2f} in {shift[1]}, off {what}" if what != "where it is"
                     else f"move it {shift[0]:.2f} in {shift[1]}")
        return fixes

    @staticmethod
    def _least_shift(v: Vehicle, was: Pose, pose: Pose, ok) -> tuple[float, str] | None:
        """The least shift (inches, rounded up to 0.01) in one of the car's own eight directions,
        or straight back towards where it lost control, that makes `ok`: scanned in 1 mm steps
        out to 2 in (a reposition moves at most 1), then halved down to a hundredth of an inch."""
        f, l = pose.forward, pose.left
        ways = {"forward": f, "back": -f, "left": l, "right": -l, "forward and left": (f + l) / math.sqrt(2),
                "forward and right": (f - l) / math.sqrt(2), "back and left": (-f + l) / math.sqrt(2),
                "back and right": (-f - l) / math.sqrt(2)}
        home = was.xy - pose.xy
        if float(np.hypot(*home)) > 1e-6:
            ways["back towards where it lost control"] = home / float(np.hypot(*home))

        def at(unit, d_mm):
            return Pose(float(pose.x_mm + unit[0] * d_mm), float(pose.y_mm + unit[1] * d_mm), pose.heading_deg)
        best = None
        for words, unit in ways.items():
            lo = 0.0
            for step in range(1, 52):
                d = float(step)
                if best is not None and d > best[0] * MM_PER_IN + 1.0:
                    break
                if ok(at(unit, d)):
                    hi = d
                    for _ in range(12):
                        mid = (lo + hi) / 2
                        lo, hi = (lo, mid) if ok(at(unit, mid)) else (mid, hi)
                    d_in = math.ceil(hi / MM_PER_IN * 100 - 1e-3) / 100
                    while not ok(at(unit, d_in * MM_PER_IN)) and d_in < 2.0:
                        d_in = round(d_in + 0.01, 2)
                    if ok(at(unit, d_in * MM_PER_IN)) and (best is None or d_in < best[0]):
                        best = (round(d_in, 2), words)
                    break
                lo = d
        return best

    def _on_table(self, state: GameState, fp: Footprint) -> bool:
        w, d = state.table_mm
        c = fp.corners
        return bool((c[:, 0] >= -1e-6).all() and (c[:, 1] >= -1e-6).all() and (c[:, 0] <= w + 1e-6).all()
                    and (c[:, 1] <= d + 1e-6).all())

    def _leaves_by_exit(self, state: GameState, v: Vehicle, fp: Footprint) -> bool:
        """Scavengers and Outrun put their one gate on a table edge ("facing off the battlefield";
        "along an edge of the battlefield"), where a car can wholly cross it only by leaving the
        table: a car whose next gate is that last one may drive off the table through it, every
        part of it off the table being past the gate's line and between its posts (the
        companion's reading, scavengers_reading / outrun_reading)."""
        if state.mission not in ("outrun", "scavengers") or v.progress != len(state.sequence) - 1:
            return False
        gate = state.gates[state.sequence[-1]]
        w, d = state.table_mm
        off = shapely.difference(fp.polygon, shapely.box(0.0, 0.0, w, d))
        if off.is_empty:
            return True
        a = np.asarray(gate.a, float)
        along = (np.asarray(gate.b, float) - a) / gate.width_mm
        lane = shapely.Polygon([a, a + gate.normal * 1e4, a + along * gate.width_mm + gate.normal * 1e4,
                                a + along * gate.width_mm])
        return bool(shapely.difference(off, lane.buffer(1e-6)).area <= 1e-6)

    def _contacts(self, state: GameState, v: Vehicle, dense: list[Pose]) -> list[tuple[int, str, object]]:
        """Along the path's ground, the first contact with each obstacle, in path order:
        (index into dense, kind, the terrain piece or vehicle). Driving into impassable or
        exploding terrain, or ending on a car, is refused here."""
        contact = float(self.option("contact_mm"))
        feet = [v.footprint(p) for p in dense]
        polys = shapely.polygons([fp.corners for fp in feet])
        inner = shapely.buffer(polys, -contact, join_style="mitre")
        xy = np.array([p.xy for p in dense])
        travelled = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(xy, axis=0).T))])
        tol_mm = float(self.option("path_tolerance_mm"))
        found = []
        for t in state.live_terrain():
            kind = _terrain_kind(self, t)
            if kind in ("slow", "barrier"):
                continue
            gaps = shapely.distance(polys, t.polygon)
            # "moves so that it is touching": coming into contact, or driving on (more than the
            # path tolerance) still touching what it touched at the start. A car that stopped
            # against terrain and drives away from it takes no test.
            first = None
            for i in range(1, len(gaps)):
                if gaps[i] > contact:
                    continue
                if gaps[i - 1] > contact:
                    first = i               # comes into contact
                    break
                if (gaps[:i + 1] <= contact).all() and travelled[i] > tol_mm:
                    first = i               # touching from the start, and still touching as it drives on
                    break
            into = np.flatnonzero(shapely.intersects(inner, t.polygon)) if kind == "wreckage" else ()
            if len(into) and (gaps[:into[0] + 1] <= contact).all():
                first = 0           # already against the wreckage, and driving on into it
            if kind in ("impassable", "exploding"):
                through = shapely.intersects(inner, t.polygon)
                if through.any():
                    raise RulesError(f"the path drives through {t.name or 'terrain'} ({kind}); a vehicle cannot "
                                     f"move through it ({D.CORE}, \"Terrain\"; {R}, \"Terrain\")")
            if first is not None:
                found.append((first, kind, t))
        for o in state.in_play():
            if o.marker == v.marker:
                continue
            ofp = o.footprint()
            over = np.flatnonzero(shapely.intersects(inner, ofp.polygon))
            if not len(over):
                continue
            if over[-1] == len(feet) - 1:
                raise RulesError(f"the {v.name} would end its move on the {o.name}; a vehicle moving over another "
                                 f"must completely pass to the other side ({R}, \"Moving Over Other Vehicles\")")
            first = int(np.flatnonzero(shapely.distance(polys, ofp.polygon) <= contact)[0])
            found.append((first, "vehicle", o))
        return sorted(found, key=lambda f: (f[0], f[1]))

    @action("move", fields={"vehicle": "marker", "path": "path", "advance": "flag", "boost": "flag",
                           "backward": "flag"})
    def _act_move(self, state: GameState, action: dict):
        """A movement action: the path checked against the allowance and manoeuvres, then what it
        met on the way in order (cars driven over, impassable, wreckage and exploding terrain),
        then the gates it crossed."""
        v = self._activate(state, action, "move")
        path = [parse_pose(p, f"move of the {v.name}, path pose {k + 1}") for k, p in enumerate(action.get("path") or [])]
        start = self.move_start(v)
        advance, boost = bool(action.get("advance")), bool(action.get("boost"))
        if boost:
            if "boost" not in v.upgrades:
                raise RulesError(f"the {v.name} has no boost ({R}, \"Vehicle Upgrades\")")
            if v.boost_used:
                raise RulesError(f"the {v.name} has used its boost (one use only; {R}, \"Vehicle Upgrades\")")
        m = self.check_path(state, v, path, backward=action.get("backward"), advance=advance, boost=boost,
                            start=start)
        verdict = m.pop("verdict")
        if verdict.outcome == "out":
            crossed = " and the ".join(m["barriers_crossed"])
            more = "".join(f", {m[k] / MM_PER_IN:.2f} in more {what}" for k, what in (
                ("slow_extra_mm", "on slow ground"),
                ("barrier_extra_mm", f"for crossing the {crossed} ({D.BARRIER_IN} in each time)")) if m[k])
            raise RulesError(f"the move costs {m['cost_mm'] / MM_PER_IN:.2f} in ({m['distance_mm'] / MM_PER_IN:.2f} in "
                             f"driven{more}, {m['manoeuvres']} manoeuvres, {m['extra_manoeuvres']} beyond the free "
                             f"{m['free_manoeuvres']} at {D.EXTRA_MANOEUVRE_IN} in each) but the {v.name} may "
                             f"move {m['allowance_mm'] / MM_PER_IN:.2f} in ({m['allowance']}; "
                             f"{D.VEHICLES}, \"Vehicle Movement\")")
        if verdict.outcome == TOO_CLOSE:
            events_doubt = [f"the move costs {m['cost_mm'] / MM_PER_IN:.2f} in of the {v.name}'s "
                            f"{m['allowance_mm'] / MM_PER_IN:.2f} in: too close to call ({verdict.margin_mm:+.1f} mm, "
                            f"the camera's doubt {verdict.sigma_mm:.1f} mm), so it stands"]
        else:
            events_doubt = []
        dense = [start]
        breaks = [0]
        for a, b in zip([start, *path], path):
            dense += interpolate(a, b, 1.0, 1.0)     # 1 mm / 1 degree: where a car stops at contact
            breaks.append(len(dense) - 1)
        for i, p in enumerate(dense):
            fp = v.footprint(p)
            if not self._on_table(state, fp) and not self._leaves_by_exit(state, v, fp):
                raise RulesError(f"the path leaves the table; a model may not move off the board "
                                 f"({D.CORE}, \"Action: Movement\")")
        contacts = self._contacts(state, v, dense)
        events, rolls, later = events_doubt, [], []
        v.moved = m["direction"]
        v.advanced = advance
        if boost:
            v.boost_used = True
            events.append(f"the {v.name} boosts {D.BOOST_IN} in forward")
        stop_at = len(dense) - 1
        lost = False
        stopped = ""            # why the car stops short of its path's end, in players' words
        placed_at = None        # where the rules had it put mid-move (pose, index along the path)
        for index, kind, what in contacts:
            if index > stop_at:
                break
            if kind == "vehicle":
                o = what
                events.append(f"the {v.name} drives over the {o.name}: both take command tests")
                ok = yield from self._command_test(state, v, f"driving over the {o.name}", events, rolls)
                mods = [Modifier(D.RECKLESS_PENALTY, f"the {v.name}'s reckless driver")] if v.driver == "reckless" else []
                theirs = yield from self._command_test(state, o, f"the {v.name} drives over it", events, rolls, mods)
                if not theirs:
                    later.append(o)
                if not ok:
                    stop_at, lost = index, True
                    stopped = f"it failed its command test driving over the {o.name} and stops where it touched it"
                    break
            elif kind == "impassable":
                ok = yield from self._command_test(state, v, f"touching {what.name or 'impassable terrain'}",
                                                   events, rolls)
                if not ok:
                    stop_at, lost = index, True
                    stopped = (f"it failed its command test touching {what.name or 'impassable terrain'} and stops "
                               f"where it touched")
                    break
            elif kind == "wreckage":
                ok = yield from self._command_test(state, v, f"hitting the wreckage {what.name}", events, rolls)
                if ok:
                    state.removed_terrain.append(what.name)
                    events.append(f"the {v.name} smashes through the wreckage {what.name}: remove it")
                else:
                    stop_at, lost = index, True
                    stopped = f"it failed its command test against the wreckage {what.name}: its movement ends there"
                    break
            elif kind == "exploding":
                ok = yield from self._command_test(state, v, f"touching {_exploding(what.name)}", events, rolls)
                face = (yield DiceRequest((D.DIE,), f"does the {what.name} explode? (9+)", v.owner)).faces[0]
                rolls.append({"asked": f"does the {what.name} explode? (9+)", "face": face, "total": face,
                              "modifiers": [], "target": D.EXPLODE_ON, "passed": face >= D.EXPLODE_ON})
                if not ok:
                    stop_at, lost = index, True
                    stopped = (f"it failed its command test touching {_exploding(what.name)} and stops where "
                               f"it touched")
                if face >= D.EXPLODE_ON:
                    # The blast reads where every car stands: the mover touching the piece, where it met it.
                    touch = "and stops there" if lost else "then drives on"
                    at = yield from self.place(
                        state, v, dense[index], f"where it touched the {what.name}, which explodes ({face} on "
                        f"the d12): the blast is measured with it there; it {touch}")
                    placed_at = (at, index)
                    yield from self._explode(state, what, events, rolls)
                if lost or not v.in_play:
                    break
        end = dense[stop_at]
        if stop_at < len(dense) - 1:
            events.append(f"the {v.name} stops {(stop_at / max(1, len(dense) - 1)) * 100:.0f}% of the way along "
                          f"its path, short of where it was driven: put it where the page shows")
        if v.in_play:
            if placed_at is not None and placed_at[1] == stop_at:
                end = placed_at[0]          # already put there for the blast
            elif stopped:
                # A rule-made stop: the car is put where it touched ("Losing Control": it "immediately
                # stop[s] moving").
                end = yield from self.place(state, v, end, f"{stopped} ({R}, \"Losing Control\")")
            elif placed_at is not None:
                end = yield from self.place(state, v, end, "the rest of its move after the blast: where its "
                                                           "path ends")
            v.pose = v.stood = end
            self._cross(state, v, [start] + [dense[i] for i in breaks[1:] if i < stop_at] + [end], events)
            if lost:
                yield from self._lose_control(state, v, events, rolls)
        for o in later:
            if o.in_play:
                yield from self._lose_control(state, o, events, rolls)
        return {"result": "lost control" if lost else "moved", "move": m, "movement": verdict.to_json(),
                "contacts": [{"at": i, "kind": k, "what": getattr(w, "name", "")} for i, k, w in contacts],
                "rolls": rolls, "events": events}

    def _explode(self, state: GameState, terrain, events: list, rolls: list):
        """Every vehicle within 4" takes a defence test (two if touching), 3 damage per failure
        (RULEBOOK, "Exploding Terrain")."""
        events.append(f"the {terrain.name} explodes!")
        radius = inches(D.EXPLOSION_RADIUS_IN)
        contact = float(self.option("contact_mm"))
        for o in list(state.in_play()):
            fp = o.footprint()
            gap = float(shapely.distance(fp.polygon, terrain.polygon))
            verdict = judge(f"{o.name} within {D.EXPLOSION_RADIUS_IN} in of the blast", gap, radius, fp.pose.axis_sigma_mm)
            if verdict.outcome == "out":
                continue
            n = D.TOUCHING_EXPLOSION_TESTS if gap <= contact else 1
            results = yield from self._test(o, "defence", f"caught in {_whose(terrain.name)} blast", n=n)
            for roll, passed in results:
                rolls.append(self._roll_json(roll, passed, self._attribute(o, "defence"), range=verdict.to_json()))
                if not passed:
                    yield from self._damage(state, o, D.EXPLOSION_DAMAGE, None, events, f"{_whose(terrain.name)} blast")
        if self.option("explosion_removes") and terrain.name not in state.removed_terrain:
            state.removed_terrain.append(terrain.name)

    def _cross(self, state: GameState, v: Vehicle, poses: list[Pose], events: list) -> None:
        """Gate crossings along the poses, in the mission's sequence; the elimination gate's
        immediate trigger; finishers noted for the round's end."""
        for a, b in zip(poses, poses[1:]):
            before, after = v.footprint(a), v.footprint(b)
            if v.progress > 0:
                back = state.gates[state.sequence[v.progress - 1]]
                if back.crossing(before, after) == -1:
                    v.progress -= 1
                    events.append(f"the {v.name} backs over gate {v.progress + 1} ({back.name}): it must cross "
                                  f"it again")
                    if v.marker in state.crossed_finish:
                        state.crossed_finish.remove(v.marker)
                    continue
            if v.progress >= len(state.sequence):
                continue
            gate = state.gates[state.sequence[v.progress]]
            if gate.crossing(before, after) != 1:
                continue
            v.progress += 1
            k = v.progress - 1
            events.append(f"the {v.name} crosses gate {k + 1} of {len(state.sequence)} ({gate.name})")
            if state.mission == "arena_race" and k not in state.gate_firsts:
                state.gate_firsts[k] = v.marker
                state.scores[v.owner] = state.scores.get(v.owner, 0) + 1
                events.append(f"first across: a point to {v.owner}")
            if v.progress == len(state.sequence) and state.mission in ("two_lap_race", "outrun", "scavengers",
                                                                       "elimination_race"):
                state.crossed_finish.append(v.marker)
                events.append(f"the {v.name} has crossed the finish: ranked at the round's end")
            e = state.elimination_index
            if e is not None and e < len(state.sequence) and k >= e + 2:
                behind = [o for o in self._racers(state) if o.progress <= e]
                for o in behind:
                    events.append(self._eliminate(state, o, f"the {v.name} crossed gate {k + 1}, two ahead of "
                                                            f"elimination gate {e + 1}, before it crossed"))
                state.elimination_index = e + 1
                events.append(f"gate {e + 2} of the sequence is now the elimination gate")

    # --- reposition (losing control) ----------------------------------------------------------

    def _judge_reposition(self, state: GameState, v: Vehicle, p: dict, to: Pose) -> dict:
        """A reposition to `to`, judged against where the car lost control (`p["from"]`): turned at
        most 45 degrees, moved at most 1 in, not over a car, terrain or the table's edge (RULEBOOK,
        "Losing Control"). The verdicts, or a RulesError naming the limit broken."""
        was = parse_pose(p["from"], f"where the {v.name} lost control")
        fp0, fp1 = v.footprint(was), v.footprint(to)
        turn = abs(normalize_deg(to.heading_deg - was.heading_deg))
        sigma = math.hypot(was.axis_sigma_mm, to.axis_sigma_mm)
        turn_v = judge("turn", turn, D.LOSE_CONTROL_TURN_DEG, math.hypot(was.sigma_deg, to.sigma_deg))
        if self.option("reposition_measure") == "centre":
            moved = float(np.hypot(*(to.xy - was.xy)))
        else:
            moved = float(np.max(np.hypot(*(fp1.corners - fp0.corners).T)))
        move_v = judge("moved", moved, inches(D.LOSE_CONTROL_MOVE_IN), sigma)
        where = "from where it lost control (its dashed outline on the page)"
        if turn_v.outcome == "out":
            raise RulesError(f"the {v.name} is turned {turn:.1f} degrees {where}; at most "
                             f"{D.LOSE_CONTROL_TURN_DEG:g} ({R}, \"Losing Control\")")
        if move_v.outcome == "out":
            raise RulesError(f"the {v.name} is moved {moved / MM_PER_IN:.2f} in "
                             f"({'its centre' if self.option('reposition_measure') == 'centre' else 'its farthest corner'}) "
                             f"{where}; at most {D.LOSE_CONTROL_MOVE_IN} in ({R}, \"Losing Control\")")
        if not self._on_table(state, fp1):
            raise RulesError(f"the reposition puts the {v.name} off the table ({R}, \"Losing Control\")")
        contact = float(self.option("contact_mm"))
        # The ground the reposition sweeps beyond where the car already stood: only that is
        # "moved over". Left where it stands it sweeps nothing, so a car that lost control on
        # (or against) terrain may always be left there.
        swept = shapely.union_all([v.footprint(x).polygon.buffer(-contact, join_style="mitre")
                                   for x in [was, *interpolate(was, to, 4.0, 3.0)]])
        new = shapely.difference(swept, fp0.polygon)

        def meets(poly) -> bool:
            return (not new.is_empty) and shapely.intersection(new, poly).area > 1e-3
        for o in state.in_play():
            if o.marker != v.marker and meets(o.footprint().polygon):
                raise RulesError(f"the reposition moves the {v.name} over the {o.name} ({R}, \"Losing Control\")")
        own = self.option("reposition_terrain") == "own_terrain_free"
        for t in state.live_terrain():
            if own and shapely.intersects(fp0.polygon.buffer(-contact, join_style="mitre"), t.polygon):
                continue
            if meets(t.polygon):
                raise RulesError(f"the reposition moves the {v.name} over {t.name or 'terrain'} "
                                 f"({R}, \"Losing Control\")")
        return {"was": was, "turn_deg": turn, "moved_mm": moved, "turn": turn_v, "moved": move_v}

    @action("reposition", fields={"vehicle": "marker", "by": "text", "to": "pose"})
    def _act_reposition(self, state: GameState, action: dict):
        """The nearest player turns the car up to 45 degrees and moves it up to 1 inch from where it
        lost control (the camera reads where it stands now); not over a car, off the table or
        over terrain; no command tests (RULEBOOK, "Losing Control")."""
        marker = action.get("vehicle")
        p = next((p for p in state.pending if p["vehicle"] == marker), None)
        if p is None:
            raise RulesError(f"the {state.vehicle(marker).name} has not lost control; nothing to reposition")
        who = action.get("by")
        if who not in p["by"]:
            raise RulesError(f"{who} may not reposition the {state.vehicles[marker].name}: the player with the "
                             f"nearest vehicle does ({' or '.join(p['by'])}; {R}, \"Losing Control\")")
        v = state.vehicles[marker]
        to = parse_pose(action.get("to"), "reposition, to")
        r = self._judge_reposition(state, v, p, to)
        events = [f"{who} repositions the {v.name}: turned {r['turn_deg']:.1f} degrees, moved "
                  f"{r['moved_mm'] / MM_PER_IN:.2f} in from where it lost control"]
        v.pose = v.stood = to
        state.pending.remove(p)
        self._cross(state, v, [r["was"], to], events)
        return {"result": "repositioned", "turn": r["turn"].to_json(), "moved": r["moved"].to_json(), "rolls": [],
                "events": events}
        yield

    # --- attacks ------------------------------------------------------------------------

    def arc_of(self, me: Footprint, them: Footprint) -> dict[str, object]:
        """Which of the shooter's arcs the target is in: verdicts for front, rear, left, right."""
        if self.option("arc_layout") == "half_planes":
            out = {s: in_half_plane_arc(me, them, s).verdict for s in (FRONT, LEFT, RIGHT)}
            # CORE, "Facing and Arcs": "within another model's front arc if any part of it's base is
            # within that area, otherwise it is in the rear arc": the rear arc is what is not in the
            # front, a car wholly behind the line; one with its nose past it is in the front arc only.
            # Every arc's value_mm is how far into the arc the target reaches (positive: in; negative:
            # how far outside), so the rear's is the front's turned round: how far behind the line
            # the target's foremost point is.
            ahead = out[FRONT] = dataclasses.replace(
                out[FRONT], what=f"{them.name or them.id} in {me.name or me.id}'s front arc (how far its foremost "
                                 f"part is ahead of the line through the centre, minus if behind it)")
            out[REAR] = judge(f"{them.name or them.id} in {me.name or me.id}'s rear arc (wholly behind the line "
                              f"through its centre: how far behind it the foremost part is, minus if ahead of it)",
                              -ahead.value_mm, 0.0, ahead.sigma_mm, at_most=False)
            if self.option("side_arc") == "flank":
                out[LEFT] = self._in_flank(me, them, LEFT)
                out[RIGHT] = self._in_flank(me, them, RIGHT)
            return out
        facing = {FRONT: 0.0, LEFT: 90.0, REAR: 180.0, RIGHT: -90.0}
        return {s: in_sector(Sector.of(me.pose, f, 90.0), them).verdict for s, f in facing.items()}

    def judged_arc(self, me: Footprint, them: Footprint, arcs: dict, allowed: tuple[str, ...]) -> dict:
        """Which of the weapon's arcs the target is judged in, and why, as evidence says it: the
        front arc whenever any part of the target is in it (CORE, "Facing and Arcs"; a turret
        then takes no -1), else the allowed arc it is deepest in (or nearest, if in none). The
        verdict's numbers with `arc` (front, rear, left, right) and `why` in players' words."""
        if FRONT in allowed and arcs[FRONT].outcome != "out":
            side = FRONT
        else:
            side = max(allowed, key=lambda a: arcs[a].margin_mm)
        v = arcs[side]
        mine, theirs = me.name or f"car {me.id}", them.name or f"car {them.id}"
        depth = abs(v.margin_mm)
        if self.option("arc_layout") == "quarters":
            where = f"part of the {theirs} is in the {mine}'s 90-degree {side} quarter" if v.outcome != "out" else \
                f"the {theirs} is {depth:.1f} mm outside the {mine}'s 90-degree {side} quarter"
            rule = f'{R}, "Vehicle Weapons"; option arc_layout quarters'
        elif side == FRONT:
            where = (f"part of the {theirs} is {depth:.1f} mm ahead of the line through the {mine}'s centre, "
                     f"square to its heading" if v.outcome != "out" else
                     f"all of the {theirs} is behind the line through the {mine}'s centre (its foremost point "
                     f"{depth:.1f} mm behind)")
            rule = f'{D.CORE}, "Facing and Arcs": in the front arc "if any part" is in front'
        elif side == REAR:
            where = (f"all of the {theirs} is behind the line through the {mine}'s centre (its foremost point "
                     f"{depth:.1f} mm behind)" if v.outcome != "out" else
                     f"part of the {theirs} is {depth:.1f} mm ahead of the line through the {mine}'s centre, so it "
                     f"is in the front arc")
            rule = f'{D.CORE}, "Facing and Arcs": "otherwise it is in the rear arc"'
        elif self.option("side_arc") == "flank":
            where = (f"part of the {theirs} is {depth:.1f} mm into the ground beside the {mine}'s {side} side, "
                     f"between the lines through its front and rear edges" if v.outcome != "out" else
                     f"the {theirs} is {depth:.1f} mm from the ground beside the {mine}'s {side} side")
            rule = f'{R}, "Vehicle Weapons"; option side_arc flank'
        else:
            where = (f"part of the {theirs} is {depth:.1f} mm {side} of the line along the {mine}'s centre"
                     if v.outcome != "out" else f"all of the {theirs} is on the other side of the line along the "
                     f"{mine}'s centre, {depth:.1f} mm from it")
            rule = f'{R}, "Vehicle Weapons"; option side_arc half_plane'
        judged = {"in": "in", "out": "not in", TOO_CLOSE: "too close to call for"}[v.outcome]
        return {**v.to_json(), "arc": side,
                "why": f"{judged} the {mine}'s {side} arc: {where} ({rule})"}

    def flank_zone(self, fp: Footprint, side: str, far_mm: float = 10000.0):
        """The ground beside a car (side_arc "flank"): beyond its left (right) side, between the
        lines through its front and rear edges."""
        p = fp.pose
        out = p.left if side == LEFT else -p.left
        half_l, half_w = fp.length_mm / 2, fp.width_mm / 2
        base = p.xy + out * half_w
        return shapely.Polygon([base + p.forward * half_l, base + p.forward * half_l + out * far_mm,
                                base - p.forward * half_l + out * far_mm, base - p.forward * half_l])

    def _in_flank(self, me: Footprint, them, side: str, what: str | None = None):
        """Is any part of `them` (a footprint or a polygon) in the shooter's left (right) flank?
        A verdict on how deep its deepest part reaches in (or how far it is outside)."""
        zone = self.flank_zone(me, side)
        poly = them.polygon if isinstance(them, Footprint) else them
        inside = shapely.intersection(zone, poly)
        p = me.pose
        out = p.left if side == LEFT else -p.left
        # As for every arc: the value is how deep the target reaches in (positive), or minus how
        # far it is outside (negative).
        if inside.is_empty or inside.area <= 1e-9:
            value = -float(shapely.distance(zone, poly))
        else:
            # The deepest part: the point of the overlap farthest from the zone's edges (beyond the
            # side, short of the front and rear lines). That distance is the least of three linear
            # ones, so along each edge of the overlap it peaks at an end or where two of them meet
            # (not only at corners: a car squarely beside reaches half the length in, not 0).
            rings = [inside] if hasattr(inside, "exterior") else list(inside.geoms)
            half_l, half_w = me.length_mm / 2, me.width_mm / 2

            def parts(q):
                rel = q - p.xy
                return np.stack([rel @ out - half_w, half_l - rel @ p.forward, half_l + rel @ p.forward], axis=-1)

            best = -math.inf
            for g in rings:
                ring = np.asarray(g.exterior.coords)
                for q0, q1 in zip(ring[:-1], ring[1:]):
                    g0, g1 = parts(q0), parts(q1)
                    ts = [0.0, 1.0]
                    for i in range(3):
                        for j in range(i + 1, 3):
                            den = (g1[i] - g0[i]) - (g1[j] - g0[j])
                            if abs(den) > 1e-12:
                                t = (g0[j] - g0[i]) / den
                                if 0.0 < t < 1.0:
                                    ts.append(float(t))
                    best = max(best, max(float((g0 + t * (g1 - g0)).min()) for t in ts))
            value = best
        sigma = math.hypot(p.axis_sigma_mm, them.pose.axis_sigma_mm if isinstance(them, Footprint) else 0.0,
                           me.length_mm / 2 * p.heading_sigma_rad)
        name = what or (them.name or str(them.id) if isinstance(them, Footprint) else "it")
        return judge(f"{name} in {me.name or me.id}'s {side} side arc (beside it: how far into that ground it "
                     f"reaches, minus if outside it)", value, 0.0, sigma, at_most=False)

    def weapon_arcs(self, w) -> tuple[str, ...]:
        if "Turret Mount" in w.special:
            return (FRONT, LEFT, RIGHT, REAR)
        if "Side Arc" in w.special:
            return (LEFT, RIGHT)
        return (FRONT,)

    def sight(self, state: GameState, me: Footprint, them: Footprint) -> tuple[str, float]:
        """Line of sight (CORE, "Line of Sight"), judged on lines to nine points of the target
        (centre, corners, edge middles) from any part of the shooter (its nine points likewise;
        geometry's ANY) or, with sight_from "centre", from its centre only. A target point is
        seen when some line to it is clear; hidden by a friend when the only lines to it that
        terrain and enemies leave open cross a car of the shooter's side. "blocked" when no point
        is seen, or (with the cars_block_sight option) a friend hides any point; "obscured" when
        terrain (or an enemy car) hides more than half (VEHICLES, "Attacking a Vehicle"); else
        "clear". With the fraction hidden."""
        seen, frac, _ = self._sight(state, me, them)
        return seen, frac

    def _sight(self, state: GameState, me: Footprint, them: Footprint) -> tuple[str, float, list[str]]:
        """`sight`, with the names of the shooter's own cars in the way when they block it."""
        terrain = [t for t in state.live_terrain() if t.blocks_sight]
        shooter = state.vehicles.get(me.id)
        friends, enemies, friend_names = [], [], []
        if self.option("cars_block_sight") and shooter is not None:
            for o in state.in_play():
                if o.marker in (me.id, them.id):
                    continue
                (friends if o.owner == shooter.owner else enemies).append(o.footprint())
                if o.owner == shooter.owner:
                    friend_names.append(o.name)
        hiders = Obstacles(terrain, enemies)
        mode = CENTRE if self.option("sight_from") == "centre" else ANY
        src = sample_points(me)[:1] if mode == CENTRE else sample_points(me)
        dst = sample_points(them)
        starts = np.repeat(src[None, :, :], len(dst), axis=0).reshape(-1, 2)      # (target point, shooter point)
        ends = np.repeat(dst, len(src), axis=0)
        ids_a = np.full(len(starts), me.id)
        ids_b = np.full(len(starts), them.id)
        by_hiders = hiders.blocked(starts, ends, ids_a, ids_b).reshape(len(dst), len(src))
        if friends:
            by_friends = Obstacles((), friends).blocked(starts, ends, ids_a, ids_b).reshape(len(dst), len(src))
        else:
            by_friends = np.zeros_like(by_hiders)
        seen = (~by_hiders & ~by_friends).any(axis=1)
        friend_only = ~seen & (~by_hiders).any(axis=1)
        hidden, by_friend = int((~seen & ~friend_only).sum()), int(friend_only.sum())
        frac = (hidden + by_friend) / len(dst)
        if by_friend:
            # Which of them: each one that stands across a line terrain and enemies leave open
            # to a point only friends hide (the refusal names them).
            open_lines = (~by_hiders)[friend_only].reshape(-1)
            names = [name for f, name in zip(friends, friend_names)
                     if (Obstacles((), [f]).blocked(starts, ends, ids_a, ids_b).reshape(len(dst), len(src))
                         [friend_only].reshape(-1) & open_lines).any()]
            return "blocked by a friendly car", frac, names
        if hidden == len(dst):
            return "blocked", frac, []
        return ("obscured" if frac > 0.5 else "clear"), frac, []

    def _enemies_in_assault(self, state: GameState, v: Vehicle) -> list[Vehicle]:
        me = v.footprint()
        return [o for o in state.in_play() if o.owner != v.owner
                and closest_distance(me, o.footprint()).distance_mm <= inches(D.ASSAULT_RANGE_IN)]

    def _skill_mods(self, v: Vehicle, w, in_assault: bool, off_front: bool) -> list[Modifier]:
        mods = []
        if self.option("use_stress") and v.stress:
            mods.append(Modifier(-v.stress, f"{v.stress} stress"))
        if v.advanced:
            mods.append(Modifier(D.ADVANCE_SKILL_PENALTY, "made an advance move"))
        assault = "Assault" in w.special or (self.option("melee_is_assault") and "Melee" in w.special)
        if in_assault and not assault:
            mods.append(Modifier(D.ASSAULT_PENALTY, "not an assault weapon, in assault range"))
        if "Accurate" in w.special:
            mods.append(Modifier(D.ACCURATE_BONUS, "Accurate (improved sights)"))
        if "Unwieldy" in w.special:
            mods.append(Modifier(D.UNWIELDY_PENALTY, "Unwieldy"))
        if off_front and "Turret Mount" in w.special:
            mods.append(Modifier(D.TURRET_OFF_FRONT_PENALTY, "turret firing outside the front arc"))
        return mods

    def _critical(self, roll: Roll) -> bool:
        if self.option("critical_success") == "natural_12":
            return roll.face == D.AUTO_PASS
        return roll.total >= D.AUTO_PASS

    def _attack_one(self, state: GameState, v: Vehicle, w, o: Vehicle, *, in_assault: bool, off_front: bool,
                    obscured: bool, events: list, rolls: list, dist_mm: float) -> dict:
        """One weapon's attack on one vehicle: skill rolls, criticals, defence rolls, damage,
        then the command tests of criticals and Obstructing (CORE, "Attack Procedure")."""
        attacks = w.kind.attacks
        if "Rapid Fire" in w.special and dist_mm <= inches(w.range_in) / 2:
            attacks += 1
            events.append("Rapid Fire: +1 attack within half range")
        mods = self._skill_mods(v, w, in_assault, off_front)
        results = yield from self._test(v, "skill", f"{w.name} at the {o.name}", mods, n=attacks)
        target = self._attribute(v, "skill")
        hits = crits = rending = 0
        for roll, passed in results:
            if "Torrent" in w.special:
                passed = roll.face != D.AUTO_FAIL
            crit = passed and self._critical(roll)
            rolls.append(self._roll_json(roll, passed, target, critical=crit))
            hits += passed
            crits += crit
            if passed and roll.face == D.AUTO_PASS and "Rending (1)" in w.special:
                rending += 1
        events.append(f"the {v.name}'s {w.name}: {hits} hit{'s' if hits != 1 else ''} of {attacks} on the {o.name}"
                      + (f", {crits} critical" if crits else ""))
        damage = 0
        if hits and w.damage:
            dmods = []
            if w.piercing:
                dmods.append(Modifier(-w.piercing, f"piercing {w.piercing}"))
            if obscured and "Blast" not in w.special:
                dmods.append(Modifier(D.OBSCURED_DEFENCE_BONUS, "obscured line of sight"))
            saves = yield from self._test(o, "defence", f"against the {w.name}", dmods, n=hits * w.damage)
            dt = self._attribute(o, "defence")
            for roll, passed in saves:
                rolls.append(self._roll_json(roll, passed, dt))
            damage = sum(1 for _, p in saves if not p) + rending
            if rending:
                events.append(f"Rending: {rending} more damage for the 12s")
            yield from self._damage(state, o, damage, v, events, f"the {v.name}'s {w.name}")
        tests = 0
        if crits and o.in_play:
            tests += crits if self.option("critical_tests") == "per_critical" else 1
        for _ in range(tests):
            if not o.in_play:
                break
            if not (yield from self._command_test(state, o, "a critical hit", events, rolls)):
                yield from self._lose_control(state, o, events, rolls)
        if hits and "Obstructing" in w.special and o.in_play:
            if not (yield from self._command_test(state, o, f"hit by the obstructing {w.name}", events, rolls)):
                yield from self._lose_control(state, o, events, rolls)
        return {"target": o.marker, "hits": hits, "criticals": crits, "damage": damage}

    @action("attack", fields={"vehicle": "marker", "weapon": OneOf(*D.WEAPONS), "target": "marker|text",
                             "terrain": "text"})
    def _act_attack(self, state: GameState, action: dict):
        """An attack with one weapon at a vehicle (or exploding terrain): range edge to edge,
        the weapon's arcs, line of sight, valid targets (CORE, "Action: Attack")."""
        v = self._activate(state, action, "attack")
        w = v.weapon(action.get("weapon", ""))
        if "Dropper" in w.special:
            raise RulesError(f"the {w.name} is a dropper: use the 'drop' action (it attacks everything behind)")
        if w.key in v.attacked:
            raise RulesError(f"the {v.name} has already attacked with its {w.name} this activation")
        me = v.footprint()
        events, rolls = [], []
        if action.get("terrain") is not None:
            if action.get("target") is not None:
                raise RulesError(f"the {w.name} attacks one thing: a car ('target') or exploding terrain ('terrain'), "
                                 f"not both")
            return (yield from self._attack_terrain(state, v, w, me, action["terrain"], events, rolls))
        if isinstance(action.get("target"), str):
            # The page's one choice of target names a piece of exploding terrain by its name.
            return (yield from self._attack_terrain(state, v, w, me, action["target"], events, rolls))
        if action.get("target") is None:
            raise RulesError(f"say what the {w.name} attacks: a car ('target') or exploding terrain ('terrain')")
        o = state.vehicle(action.get("target"))
        if o.marker == v.marker or not o.in_play or o.pose is None:
            raise RulesError(f"the {o.name} cannot be attacked ({o.status()})")
        if o.owner == v.owner:
            # Checked before anything is measured: other refusals (a friend in assault range of
            # the target, which is the target itself) named the wrong reason.
            raise RulesError(f"the {o.name} is {v.owner}'s own car: weapons \"may only target enemy units\" "
                             f"({R}, \"Vehicle Weapons\"; {D.CORE}, \"Friendly and Enemy\")")
        them = o.footprint()
        dist = closest_distance(me, them)
        rng = dist.within(inches(w.range_in), f"range of the {w.name}")
        if rng.outcome == "out":
            raise RulesError(f"the {o.name} is {dist.distance_mm / MM_PER_IN:.2f} in away; the {w.name} reaches "
                             f"{w.range_in} in ({D.CORE}, \"Check Range\")")
        arcs = self.arc_of(me, them)
        allowed = self.weapon_arcs(w)
        best = self.judged_arc(me, them, arcs, allowed)
        if best["outcome"] == "out":
            raise RulesError(f"the {o.name} is not in the {w.name}'s {' or '.join(allowed)} arc "
                             f"({-best['margin_mm'] / MM_PER_IN:.2f} in outside; {R}, \"Vehicle Weapons\")")
        off_front = arcs[FRONT].outcome == "out"
        seen, hidden, friends = self._sight(state, me, them)
        if seen.startswith("blocked"):
            in_way = " and the ".join(friends)
            raise RulesError(f"the {v.name} cannot see the {o.name}: " + (
                f"a car of its own side is in the way, the {in_way}" if seen != "blocked"
                else "terrain blocks every line") + f" ({D.CORE}, \"Line of Sight\")")
        close = self._enemies_in_assault(state, v)
        if close and o not in close:
            raise RulesError(f"the {v.name} is in assault range of the {', '.join(c.name for c in close)}; it may only "
                             f"attack {'it' if len(close) == 1 else 'them'} ({D.CORE}, \"Valid Targets\")")
        in_assault = dist.distance_mm <= inches(D.ASSAULT_RANGE_IN)
        if not in_assault:
            friends = [f for f in state.in_play() if f.owner == v.owner and f.marker != v.marker
                       and closest_distance(f.footprint(), them).distance_mm <= inches(D.ASSAULT_RANGE_IN)]
            if friends:
                raise RulesError(f"the {o.name} is in assault range of {v.owner}'s {friends[0].name}; only a "
                                 f"vehicle also in its assault range may attack it ({D.CORE}, \"Valid Targets\")")
        if in_assault and "Torrent" in w.special:
            raise RulesError(f"the {w.name} (Torrent) may not be used within assault range, "
                             f"{D.ASSAULT_RANGE_IN} in ({D.CORE}, \"Torrent\")")
        v.attacked.append(w.key)
        hp_before = {c.marker: c.hp for c in state.in_play()}
        res = yield from self._attack_one(state, v, w, o, in_assault=in_assault, off_front=off_front,
                                          obscured=seen == "obscured", events=events, rolls=rolls,
                                          dist_mm=dist.distance_mm)
        self._royale_score(state, v, hp_before, events)
        return {"result": "hit" if res["hits"] else "miss", **res, "range": rng.to_json(), "arc": best,
                "sight": {"line": seen, "hidden_fraction": round(hidden, 3)}, "rolls": rolls, "events": events}

    def _attack_terrain(self, state, v, w, me, name, events, rolls):
        """Shooting exploding terrain: a critical success on a skill roll sets it off
        (RULEBOOK, "Exploding Terrain")."""
        t = next((t for t in state.live_terrain() if t.name == name), None)
        if t is None or _terrain_kind(self, t) != "exploding":
            raise RulesError(f"there is no exploding terrain named {name!r} to shoot at")
        gap = float(shapely.distance(me.polygon, t.polygon))
        rng = judge(f"range of the {w.name}", gap, inches(w.range_in), me.pose.axis_sigma_mm)
        if rng.outcome == "out":
            raise RulesError(f"the {name} is {gap / MM_PER_IN:.2f} in away; the {w.name} reaches {w.range_in} in")
        allowed = self.weapon_arcs(w)
        dirs = {FRONT: me.pose.forward, REAR: -me.pose.forward, LEFT: me.pose.left, RIGHT: -me.pose.left}
        pts = np.asarray(t.polygon.exterior.coords)

        def in_arc(a):
            if a in (LEFT, RIGHT) and self.option("arc_layout") == "half_planes" \
                    and self.option("side_arc") == "flank":
                return self._in_flank(me, t.polygon, a, name).outcome != "out"
            if self.option("arc_layout") == "quarters":
                facing = {FRONT: 0.0, LEFT: 90.0, REAR: 180.0, RIGHT: -90.0}[a]
                return shapely.intersects(Sector.of(me.pose, facing, 90.0).polygon(10000.0), t.polygon)
            return float(((pts - me.centre) @ dirs[a]).max()) > 0
        if not any(in_arc(a) for a in allowed):
            raise RulesError(f"the {name} is not in the {w.name}'s {' or '.join(allowed)} arc")
        v.attacked.append(w.key)
        mods = self._skill_mods(v, w, gap <= inches(D.ASSAULT_RANGE_IN), FRONT not in allowed)
        results = yield from self._test(v, "skill", f"{w.name} at the {name}", mods, n=w.kind.attacks)
        crit = False
        for roll, passed in results:
            c = passed and self._critical(roll)
            crit = crit or c
            rolls.append(self._roll_json(roll, passed, self._attribute(v, "skill"), critical=c))
        if crit:
            hp_before = {c.marker: c.hp for c in state.in_play()}
            yield from self._explode(state, t, events, rolls)
            self._royale_score(state, v, hp_before, events)
        else:
            events.append(f"no critical success: the {name} does not explode")
        return {"result": "exploded" if crit else "no effect", "range": rng.to_json(), "rolls": rolls,
                "events": events}

    def dropper_targets(self, state: GameState, v: Vehicle, w) -> tuple[list[tuple[Vehicle, object]], list[dict]]:
        """Every other vehicle, friend or foe, behind the car and within the dropper's range; and
        each car in range it leaves out, with why (its outcome says so, not only whom it hit)."""
        me = v.footprint()
        out, left_out = [], []
        for o in state.in_play():
            if o.marker == v.marker:
                continue
            them = o.footprint()
            dist = closest_distance(me, them)
            if dist.within(inches(w.range_in)).outcome == "out":
                continue
            if self.option("dropper_zone") == "directly_behind":
                zone = overlaps(directly_behind(me, inches(w.range_in)), them, "directly behind")
                why = (f"it is {-zone.margin_mm:.1f} mm clear of the strip directly behind the {v.name}, as wide "
                       f"as it ({R}, \"Dropper\"; option dropper_zone directly_behind)")
            else:
                # With half_planes, the rear arc is Open Fire's "otherwise": wholly behind (arc_of).
                zone = self.arc_of(me, them)[REAR]
                depth = -zone.margin_mm
                why = (f"it is {depth:.1f} mm outside the {v.name}'s 90-degree rear quarter ({R}, \"Dropper\"; "
                       f"option arc_layout quarters)" if self.option("arc_layout") == "quarters" else
                       f"part of it is {depth:.1f} mm ahead of the line through the {v.name}'s centre, so it is in "
                       f"the front arc, not the rear ({D.CORE}, \"Facing and Arcs\"; {R}, \"Dropper\")")
            if zone.outcome != "out":
                out.append((o, dist))
            else:
                left_out.append({"vehicle": o.marker, "name": o.name, "why": why})
        return out, left_out

    @action("drop", fields={"vehicle": "marker", "weapon": OneOf(*D.WEAPONS)})
    def _act_drop(self, state: GameState, action: dict):
        """A dropper: an attack with the full profile against every vehicle in the rear arc and
        in range (RULEBOOK, "Dropper")."""
        v = self._activate(state, action, "attack")
        droppers = [w for w in v.weapons if "Dropper" in w.special]
        key = action.get("weapon") or (droppers[0].key if droppers else "")
        w = v.weapon(key)
        if "Dropper" not in w.special:
            raise RulesError(f"the {w.name} is not a dropper")
        if w.key in v.attacked:
            raise RulesError(f"the {v.name} has already used its {w.name} this activation")
        v.attacked.append(w.key)
        events, rolls, results = [], [], []
        victims, left_out = self.dropper_targets(state, v, w)
        if not victims:
            events.append(f"nothing behind the {v.name} within {w.range_in} in")
        for o in left_out:
            events.append(f"the {w.name} passes the {o['name']} by, though it is in range: {o['why']}")
        for o, dist in victims:
            if not o.in_play:
                continue
            hp_before = {o.marker: o.hp}
            res = yield from self._attack_one(state, v, w, o, in_assault=dist.distance_mm <= inches(D.ASSAULT_RANGE_IN),
                                              off_front=True, obscured=False, events=events, rolls=rolls,
                                              dist_mm=dist.distance_mm)
            self._royale_score(state, v, hp_before, events)
            results.append(res)
        return {"result": "dropped", "targets": results, "left_out": left_out, "rolls": rolls, "events": events}

    # --- the campaign -------------------------------------------------------------------

    @action("upgrade_stage", fields={"vehicle": "marker"})
    def _act_upgrade_stage(self, state: GameState, action: dict):
        """After the game (RULEBOOK, "Upgrade Stage"): mission points into the pools, a D12 for
        each destroyed and each damaged vehicle, the winner's campaign point. A damaged car's
        owner is asked, when the die allows and their pool can pay, whether to repair it (1-9:
        "can be repaired at a cost equal to the dice roll") or save it (10-12: "can be saved at
        the cost of 5 points, otherwise it is destroyed but you gain 5 points")."""
        if not state.over:
            raise RulesError("the upgrade stage comes after the game is over")
        if state.upgrade_stage_done:
            raise RulesError("the upgrade stage has been played for this game")
        events, rolls, outcome = [], [], {}
        for p, pts in state.scores.items():
            if pts:
                state.pools[p] = state.pools.get(p, 0) + pts
                events.append(f"{p} earns {pts} points into the pool ({state.pools[p]})")
        for m, v in sorted(state.vehicles.items()):
            if v.destroyed:
                face = (yield DiceRequest((D.DIE,), f"the destroyed {v.name}: scrap or recovered", v.owner)).faces[0]
                rolls.append({"asked": f"destroyed {v.name}", "face": face, "total": face, "modifiers": []})
                if face >= D.DESTROYED_RECOVERED_ON:
                    outcome[str(m)] = "recovered"
                    events.append(f"the {v.name} is recovered ({face}) and races next time")
                else:
                    state.pools[v.owner] = state.pools.get(v.owner, 0) + face
                    outcome[str(m)] = f"scrapped for {face}"
                    events.append(f"the {v.name} is scrap ({face}): {face} points to {v.owner}'s pool")
            elif v.ever_damaged or v.hp < v.max_hp:
                face = (yield DiceRequest((D.DIE,), f"the damaged {v.name}: repair or save", v.owner)).faces[0]
                rolls.append({"asked": f"damaged {v.name}", "face": face, "total": face, "modifiers": []})
                pool = state.pools.get(v.owner, 0)
                if face < D.DAMAGED_SAVE_ON:
                    pay = False
                    if pool >= face:
                        # The car is named once, in the question (a `who` added "for Scrapjaw" again).
                        pay = yield ChoiceRequest(v.owner, f"whether to repair the {v.name} now for {face} points "
                                                           f"(pool {pool})",
                                                  ({"value": True, "label": f"repair for {face}"},
                                                   {"value": False, "label": "not now (it may not race until repaired)"}))
                    if pay:
                        state.pools[v.owner] = pool - face
                        outcome[str(m)] = f"repaired for {face}"
                        events.append(f"{v.owner} repairs the {v.name} for {face}")
                    else:
                        outcome[str(m)] = f"needs repair: {face}"
                        events.append(f"the {v.name} needs {face} points of repair before it races again")
                else:
                    save = False
                    if pool >= D.DAMAGED_SAVE_COST:
                        save = yield ChoiceRequest(v.owner, f"whether to save the {v.name} for {D.DAMAGED_SAVE_COST} "
                                                            f"points or scrap it for {D.DAMAGED_SAVE_COST} (pool {pool})",
                                                   ({"value": True, "label": f"save for {D.DAMAGED_SAVE_COST}"},
                                                    {"value": False, "label": f"scrap for +{D.DAMAGED_SAVE_COST}"}))
                    if save:
                        state.pools[v.owner] = pool - D.DAMAGED_SAVE_COST
                        outcome[str(m)] = f"saved for {D.DAMAGED_SAVE_COST}"
                        events.append(f"{v.owner} saves the {v.name} for {D.DAMAGED_SAVE_COST} ({face})")
                    else:
                        state.pools[v.owner] = pool + D.DAMAGED_SAVE_COST
                        outcome[str(m)] = f"scrapped for {D.DAMAGED_SAVE_COST}"
                        events.append(f"the {v.name} is scrapped ({face}): {D.DAMAGED_SAVE_COST} points to {v.owner}")
        state.upgrade_stage_done = True
        campaign = {state.winner: 1} if state.winner else {}
        return {"result": "upgrade stage", "vehicles": outcome, "pools": dict(sorted(state.pools.items())),
                "campaign_points": campaign, "rolls": rolls, "events": events}

    @action("campaign_mission", fields={"vehicle": "marker", "campaign_round": "whole",
                                       "previous": OneOf(*(m for _, _, m in D.CAMPAIGN_MISSIONS)),
                                       "final": "flag"})
    def _act_campaign_mission(self, state: GameState, action: dict):
        """The next campaign round's mission (RULEBOOK, "Campaign Structure"): the first is the two
        lap race, the final outrun, others a D12, moving on down the list if it repeats the last."""
        n = action.get("campaign_round", 2)
        if isinstance(n, bool) or not isinstance(n, (int, float)) or n != int(n) or n < 1:
            raise RulesError(f"the campaign round is a whole number from 1, not {n!r} ({R}, \"Campaign Structure\")")
        n = int(n)
        previous = action.get("previous")
        if previous is not None and previous not in [m for _, _, m in D.CAMPAIGN_MISSIONS]:
            raise RulesError(f"last round's mission is one of "
                             f"{', '.join(m.replace('_', ' ') for _, _, m in D.CAMPAIGN_MISSIONS)}, not {previous!r} "
                             f"({R}, \"Campaign Structure\")")
        if n == 1:
            return {"result": "two lap race", "mission": "two_lap_race", "rolls": [],
                    "events": ["the first round is a two lap race"]}
        if action.get("final"):
            return {"result": "outrun", "mission": "outrun", "rolls": [], "events": ["the final round is outrun"]}
        face = (yield DiceRequest((D.DIE,), "campaign mission")).faces[0]
        names = [m for _, _, m in D.CAMPAIGN_MISSIONS]
        pick = next(m for lo, hi, m in D.CAMPAIGN_MISSIONS if lo <= face <= hi)
        events = [f"rolled {face}: {pick.replace('_', ' ')}"]
        if pick == action.get("previous"):
            pick = names[(names.index(pick) + 1) % len(names)]
            events.append(f"the same as last round: the next in the list, {pick.replace('_', ' ')}")
        # The result in players' words (the page heads the outcome with it), the mission's key beside it.
        return {"result": pick.replace("_", " "), "mission": pick, "rolls": [{"asked": "campaign mission", "face": face, "total": face,
                                           "modifiers": []}], "events": events}


def _back_words(back_in: float) -> str:
    return f"bring it {back_in:.2f} in back along its path"


def _turn_words(signed_deg: int) -> str:
    """A turn in players' words; headings grow anticlockwise, so + is to the car's left."""
    return f"turn it {abs(signed_deg)}° {'left' if signed_deg > 0 else 'right'}"


def _put_back(was: Pose) -> str:
    return "put it back where it lost control (its dashed outline on the page)"


def _ordinal(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


def _boost_first(poses: list, boost_mm: float, tol_mm: float, tol_deg: float) -> list:
    """A boost is the move's first 9 in, straight ahead. A path the camera followed comes
    in steps of a few mm: the poses along that straight are taken as one step, ending at
    the pose nearest 9 in out, so the boost can be judged as the rule reads it."""
    start = poses[0]
    best = None
    for i in range(1, len(poses)):
        if abs(normalize_deg(poses[i].heading_deg - start.heading_deg)) > tol_deg:
            break
        along = float((poses[i].xy - start.xy) @ start.forward)
        if best is None or abs(along - boost_mm) < abs(best[1] - boost_mm):
            best = (i, along)
    if best is None or best[0] == 1 or abs(best[1] - boost_mm) > tol_mm:
        return poses
    return [start, *poses[best[0]:]]

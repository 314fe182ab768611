"""Shattered Highways v0.3.8 (shattered-highways-0.3.8.txt): a "rolling road" game.

All vehicles face the pack's direction; the 4" x 9" move template measures
everything.  Each action is a resolution (a generator): it checks the action's
geometry on the table, asks for dice, applies modifiers with their reasons, and
returns what happened.  Numbers live in `sh_data`, each with its section.
"""

from __future__ import annotations

import json
import math
from importlib import resources

import numpy as np
import shapely

from ..dice import ChoiceRequest, DiceRequest, Modifier, Roll
from ..geometry import (FRONT, LEFT, REAR, RIGHT, Footprint, MoveTemplate, Pose, closest_distance,
                        directly_behind, in_half_plane_arc, inches, move_region, normalize_deg, overlaps)
from ..geometry.pose import MM_PER_IN
from ..geometry.verdict import CALL_SIGMAS, OUT, TOO_CLOSE, judge
from . import sh_data as D
from .actions import ListOf, OneOf
from .base import RuleOption, RulesError, RuleSystem, action, polygon_rings, register
from .sh_state import GameState, Vehicle, Warrior, apply_part_way, build_fleet, seat_words
from .sh_views import ShatteredHighwaysViews

OPTIONS = (
    RuleOption("arc_edge", "centre_line", ("centre_line", "bumper_line"), f'{D.RULEBOOK}, "Shoot"',
               'The rule: "any vehicle in the 180 degree arc Forward or Backwards". "centre_line": the arcs '
               'split at the line through the shooter\'s centre square to its heading (the companion\'s reading); '
               '"bumper_line": the forward arc starts at the front bumper, the rear arc at the rear bumper, '
               'and a target level with the car is in neither.'),
    RuleOption("template_keeps", "front_bumper", ("front_bumper", "bumper_middle", "whole_car"), f'{D.RULEBOOK}, "Move"',
               'The rule: "move ... anywhere in the move template that has a clear path ... so long as the '
               'front bumper does not move outside the full template". "front_bumper": the whole bumper, corner '
               'to corner, must stay inside it (a 32 mm car ends at most 34.8 mm either side of the template\'s '
               'middle); "bumper_middle": only the middle of the bumper (up to half a car\'s width more reach '
               'sideways); "whole_car": the car\'s whole footprint must end inside it.'),
    RuleOption("drag_chains_zone", "section", ("section", "car_width"), f'{D.RULEBOOK}, "Vehicle Add-ons"',
               'The rule: drag chains put "any vehicle that overlaps a 1 template section directly behind them at a '
               '-1", and "Terms": a template section "is a 3\"x4\" box". "section": a 3 in x 4 in box centred behind '
               'the car; "car_width": a strip 3 in long only as wide as the car itself (a narrower dust zone).'),
    RuleOption("pack_heading_tolerance_deg", 5.0, None, f'{D.RULEBOOK}, "Play Setup"',
               'The rule: vehicles "end every Move/Nudge/Ram or Lost Control pointing in the same direction". '
               'How far (degrees) a car placed by hand may point from the pack and still count as the same.'),
    RuleOption("board_touching", "in_range", ("in_range", "in_contact_only"), f'{D.RULEBOOK}, "Board"',
               'The rule: "Board any vehicle within 1" of their vehicle". "in_range": the 1" is the gap '
               'between the two footprints, touching (0") within it; "in_contact_only": only vehicles '
               'touching (within the measurement\'s doubt) can be boarded, the 1" being the template mark '
               'laid between them.'),
    RuleOption("lost_control_destination", "far_point", ("far_point", "outer_edge_middle", "box_centre"),
               f'{D.RULEBOOK}, "Lost Control"',
               'The rule: "the car moves to the furthest edge of the corresponding sector". "far_point": the '
               'car\'s centre ends at the point of the box farthest from the car (a corner box\'s outer '
               'corner, a middle box\'s outer edge\'s middle); "outer_edge_middle": the middle of the box\'s '
               'outer side; "box_centre": the box\'s centre.'),
    RuleOption("box_one", "front_right", ("front_right", "rear_right"), f'{D.RULEBOOK}, "Move Template"',
               'The rule: boxes "labeled 1-6 starting in the upper right corner and progressing clockwise". '
               '"front_right": "upper" is the end towards the car\'s front; "rear_right": the other end.'),
    RuleOption("machine_gun_both_on", "maximum", ("maximum", "six_or_more"),
               f'{D.RULEBOOK}, "Vehicle Weapons" and "Shoot"',
               '"Vehicle Weapons" says a machine gun hits vehicle and warriors "on a 6+ Shoot roll"; "Shoot" '
               'gives the bonus "If a Gunner rolls the maximum on their die (6 or 10)". "maximum": the Shoot '
               'section\'s reading; "six_or_more": a 6 or more on any die.'),
    RuleOption("weapons_included", False, (False, True), f'{D.RULEBOOK}, "Vehicle Weapons"',
               '"Default mounted weapon cost: 5 creation points." False: every mounted weapon costs 5 on top '
               'of the class; True: the class\'s default weapons are in its cost, extra ones cost 5.'),
    RuleOption("fleet_points", None, None, f'{D.RULEBOOK}, "Fleet Construction"',
               'The rulebook leaves fleet size open ("HOW TO ASSEMBLE FLEETS ... GOES HERE"). None: each '
               'roster\'s own "points" is its limit; a number: every fleet must cost at most that.'),
    RuleOption("rig_damage_split", "tractor_first", ("tractor_first", "trailer_first"), f'{D.RULEBOOK}, "Shoot"',
               'The rule: "Otherwise Rig damage is split between tractor & trailer." Split in halves; the odd '
               'point goes to the tractor ("tractor_first") or the trailer.'),
    RuleOption("decouple_success", 4, None, f'{D.RULEBOOK}, "Destroyed!"',
               'The rule: "the player can roll a uncontested skill roll to decouple the trailer" with no '
               'target given; the other uncontested rolls (Board, Cling, Shoot) succeed on 4+.'),
    RuleOption("ram_damage_needs_win", True, (True, False), f'{D.RULEBOOK}, "Ram"',
               'The rule lists "The higher roll wins" then "The Defender takes 1d6 of damage". True: damage '
               'only when the rammer wins; False: on every Ram.'),
    RuleOption("wreck_leap_window", "this_activation", ("this_activation", "any_time"),
               f'{D.RULEBOOK}, "Destroyed!"',
               'The rule: warriors on a destroyed vehicle "can make a Board roll at -1 to make a desperate '
               'leap", then "the destroyed vehicle is then removed from the play space", without saying '
               'when. "this_activation": they may leap until the activation in which it was wrecked ends '
               '(a wreck made as an activation ends, through the next one); whoever is still aboard then is '
               'gone with the wreck. "any_time": they wait on the wreck, out of reach of every gun, and leap '
               'whenever they like (the wreck never goes).'),
    RuleOption("wreck_veer_fumble", "clip_and_lose_control", ("clip_and_lose_control", "clip_only"),
               f'{D.RULEBOOK}, "Move" and "Destroyed!"',
               '"Move": a vehicle veering round a wreck in front of it rolls "as per above" (where "On a 1 they '
               'have Lost Control"); "Destroyed!": "Vehicles that fail the Move take 1d6 hit points as they clip '
               'the wreck, then move to one side". "clip_and_lose_control": a 1 clips the wreck (1d6) and then '
               'loses control; "clip_only": a 1 is only a failure, 1d6 and aside.'),
    RuleOption("corner_contact", "attacker_declares", ("attacker_declares", "either_armoured", "bearing"),
               f'{D.RULEBOOK}, "Ram", "Nudge" and "Vehicle Add-ons"',
               'The rules: the attacker must "declare how they are Ramming them, such as \'I\'m going to ram the '
               'rear of their car with the front of mine\'" (the Nudge likewise), and armour "reduces damage by 1 '
               'point for impact to the armored section". The section struck is the face the two cars meet along; '
               'where they meet only at a corner (less than 3 mm of the faces side by side) and nothing was '
               'declared: "attacker_declares": the attacker\'s player is asked which of the corner\'s two faces '
               '(only when one of them is armoured and the other not: otherwise the numbers are the same); '
               '"either_armoured": a corner is part of both sections, so armour on either face counts; '
               '"bearing": the face towards the other car\'s centre (the companion\'s reading before issue 25).'),
    RuleOption("game_end", "last_fleet_running", ("last_fleet_running", "table_decides"),
               f'{D.RULEBOOK}, "How to Play"',
               'The book gives no end of the game (no turn limit, no victory condition). '
               '"last_fleet_running": the companion calls the game won when only one player still controls a '
               'vehicle in the fight (not destroyed, not dropped off the back edge); "table_decides": it never '
               'calls a winner, the players stop when they agree (a scenario\'s own goal).'),
)


#: A car set down within this of where it stood was left there (the camera always reads a pose).
NO_MOVE_MM = 3.0
NO_MOVE_DEG = 2.0
#: How near a car pushed "into" another must end to meet it: a quarter inch, a hand's care.
CONTACT_MM = 6.35
#: The demo's pack: one car to a lane, the book's lanes ("Play Space": "2" wide lanes work well"):
#: a car beside another is within a Board's 1 in of it.
DEMO_LANE_IN = 2.0
#: The demo's cars from the near lane to the far one: the War Rig in the middle with one of
#: Max's cars on either side, so a rig's sideswipe and multi-nudge ("Rigs can Ram/Nudge multiple
#: vehicles from the side") can be played from the first round; the Interceptor on the near
#: lane, the Rust Bucket on the far one.
DEMO_LANES = ("Interceptor", "Buggy", "War Rig", "Hearse", "Rust Bucket")
#: The demo's highway: this many lanes, with the roadside beyond on either side ("Make sure to leave
#: room on either side for vehicles that get Nudged off the highway").
DEMO_HIGHWAY_LANES = 8
#: The roadside strips keep this far from the table's edges (the demo table's anchors lie there).
DEMO_EDGE_MM = 90.0


def _heading_gap(a: float, b: float) -> float:
    return abs(normalize_deg(a - b))


def _shift_words(start: Pose, end: Pose) -> str:
    """How far a car went, in its own frame and the players' words ("2.4 in forward and 1.6 in
    left"), never table coordinates."""
    f, l = start.to_local(end.xy)
    parts = [f"{abs(d) / MM_PER_IN:.1f} in {word}" for d, word in
             ((f, "forward" if f > 0 else "back"), (l, "left" if l > 0 else "right")) if abs(d) >= 0.05 * MM_PER_IN]
    return " and ".join(parts) if parts else "no distance"


def _pack_heading(vehicles) -> float:
    """The pack's direction: the mean of the vehicles' headings ("Play Setup": all placed
    facing the same way)."""
    headings = np.radians([v.pose.heading_deg for v in vehicles if v.pose is not None])
    if len(headings) == 0:
        return 0.0
    return float(np.degrees(np.arctan2(np.mean(np.sin(headings)), np.mean(np.cos(headings)))))


#: Two faces meet along at least this much, side by side or end to end, for that face to be the
#: one struck; less, and the cars meet at a corner (3 mm: within a hand's care and the camera's doubt).
CORNER_MM = 3.0

#: A corner's two faces in players' words ("its front-left corner").
def _corner_words(faces) -> str:
    ends = [f for f in ("front", "rear") if f in faces]
    sides = [f for f in ("left", "right") if f in faces]
    return f"{ends[0]}-{sides[0]} corner" if ends and sides else " or ".join(sorted(faces))


def _face_contact(fp: Footprint, other: Footprint) -> dict[str, float]:
    """For each face of `fp` that `other` lies against (or across from: beyond the face's line,
    pressed in by at most CONTACT_MM, the camera's doubt or a careful hand), the length of that
    face the other car's body lies alongside: where their extents along the face overlap. Read
    from the other's corners in fp's own frame, so a car a few degrees off still lies along it.
    Side by side (a rig along a car's flank) only the flank has length; the car's nose, level
    with the rig's end, touches it at a corner only and has none."""
    half_l, half_w = fp.length_mm / 2, fp.width_mm / 2
    pts = np.array([fp.pose.to_local(c) for c in other.corners], dtype=float)
    f, l = pts[:, 0], pts[:, 1]

    def overlap(lo: float, hi: float, a: float, b: float) -> float:
        return max(0.0, min(hi, b) - max(lo, a))

    out = {}
    if f.min() >= half_l - CONTACT_MM:
        out["front"] = overlap(l.min(), l.max(), -half_w, half_w)
    if f.max() <= -half_l + CONTACT_MM:
        out["rear"] = overlap(l.min(), l.max(), -half_w, half_w)
    if l.min() >= half_w - CONTACT_MM:
        out["left"] = overlap(f.min(), f.max(), -half_l, half_l)
    if l.max() <= -half_w + CONTACT_MM:
        out["right"] = overlap(f.min(), f.max(), -half_l, half_l)
    return out


def _contact_faces(fp: Footprint, other: Footprint) -> tuple[str, ...]:
    """The section of `fp` that meets `other`: the face along which they meet (the longest shared
    stretch, at least CORNER_MM), one name; where they meet only at a corner, that corner's two
    faces (the choice is then the option corner_contact's). Two cars pressed well into each other
    (no face to read) give the face towards the other's centre."""
    contact = _face_contact(fp, other)
    if not contact:
        return (_section_of(fp, other.pose.xy),)
    best = max(contact, key=lambda k: contact[k])
    if contact[best] >= CORNER_MM:
        return (best,)
    return tuple(sorted(contact, key=("front", "rear", "left", "right").index))


def _section_of(fp: Footprint, point) -> str:
    """Which section (front, rear, left, right) of a car a point on or near it is at."""
    f, l = fp.pose.to_local(point)
    if abs(f) / (fp.length_mm / 2) >= abs(l) / (fp.width_mm / 2):
        return "front" if f > 0 else "rear"
    return "left" if l > 0 else "right"


#: The fields every action may carry and their shapes (RuleSystem.check_action). A warrior is
#: named by id (PLAYER:MARKER:SEAT); a driver's action may name the vehicle instead.
_SECTION = OneOf(*D.ARMOR_SECTIONS)
_DRIVER = {"vehicle": "marker", "warrior": "text"}
_STRIKE = {**_DRIVER, "target": "marker", "second_target": "marker", "third_target": "marker",
           "targets": ListOf("marker"), "with": _SECTION, "at": _SECTION, "with_2": _SECTION, "at_2": _SECTION,
           "with_3": _SECTION, "at_3": _SECTION}
FIELDS = {
    "pass": {"warrior": "text"},
    "move": {**_DRIVER, "to": "pose"},
    "ram": {**_STRIKE, "to": "pose"},
    "nudge": {**_STRIKE, "push_to": "pose", "push_to_2": "pose", "push_to_3": "pose",
              "into": "marker", "chain_to": "pose", "into_2": "marker", "chain_to_2": "pose",
              "into_3": "marker", "chain_to_3": "pose", "then_to": "pose"},
    "shoot": {"warrior": "text", "target": "marker", "at": "text"},
    "board": {"warrior": "text", "target": "marker", "seat": "text", "desperate": "flag"},
    "change": {"warrior": "text", "seat": "text"},
    "attack": {"warrior": "text", "target": "text"},
    "unjam": {"warrior": "text", "weapon": OneOf(*D.ARMOR_SECTIONS, "pistol")},
    "decouple": dict(_DRIVER),
    "deploy": {"vehicle": "marker", "to": "pose"},
}


@register
class ShatteredHighways(ShatteredHighwaysViews, RuleSystem):
    name = "shattered_highways"
    title = "Shattered Highways v0.3.8"
    rulebook = D.RULEBOOK
    options = OPTIONS

    # --- the game -----------------------------------------------------------------


    def templates(self) -> list[dict]:
        """The templates and gauges of this book (see the data module's TEMPLATES)."""
        from .base import template as table_template
        return [table_template(**t) for t in D.TEMPLATES]
    def new_game(self, rosters: list[dict], scene) -> GameState:
        """Fleets from rosters, placed at the scene's poses (cars not in the scene wait off the table)."""
        if len(rosters) < 2:
            raise RulesError("a game needs at least two rosters")
        poses = {c.id: c for c in scene.cars} if scene is not None else {}
        sizes = {c.id: (c.length_mm, c.width_mm) for c in poses.values()}
        vehicles, warriors, players, taken = {}, {}, [], set()
        for roster in rosters:
            vs, ws = build_fleet(roster, self.option("weapons_included"), self.option("fleet_points"), taken, sizes)
            if roster["player"] in players:
                raise RulesError(f"two rosters for {roster['player']}")
            players.append(roster["player"])
            for v in vs:
                if v.marker in poses and v.hidden_in is None:
                    v.pose = poses[v.marker].pose
                vehicles[v.marker] = v
            warriors.update({w.id: w for w in ws})
        table = (scene.width_mm, scene.depth_mm) if scene is not None else (1219.2, 812.8)
        state = GameState(players, vehicles, warriors, table, _pack_heading(vehicles.values()))
        state.scene_poses = {m: poses[m].pose for m, v in vehicles.items() if v.hidden_in is not None and m in poses}
        state.record_placed()
        return state

    def start_part_way(self, state: GameState, block: dict) -> None:
        """A game taken up part way (docs/rules/shattered-highways.md, "Starting part way through a
        game"): the rounds played and this round's order with whose turn it is, each vehicle's hit
        points, wreck, guns jammed, controller, dead trailer cut loose, hidden buggy out, rams in
        position; each warrior out, moved, clinging, his pistol jammed, having acted or leapt.
        Checked by name and shape; nothing changes unless the whole block is taken."""
        import copy
        new = copy.deepcopy(state)
        apply_part_way(new, block)
        if new.order:
            self._begin_activation(new)
        self._check_winner(new, [])
        state.__dict__.update(new.__dict__)

    def starter_rosters(self, cars: list[tuple[int, str]]) -> list[dict]:
        """The demo's two fleets (companion/data/demo_rosters.json) when the table's cars are the
        demo's (matched by name, whatever their markers); otherwise the cars shared between two
        players in turn, each a car with a front gun, each player's hero driving their first."""
        demo = json.loads(resources.files("companion").joinpath("data/demo_rosters.json").read_text(encoding="utf-8"))
        by_name = {name: marker for marker, name in cars}
        names = {v["name"] for r in demo for v in r["vehicles"]}
        if names == set(by_name) and len(by_name) == len(cars):
            for r in demo:
                old = {v["marker"]: by_name[v["name"]] for v in r["vehicles"]}
                for v in r["vehicles"]:
                    v["marker"] = old[v["marker"]]
                if r.get("hero"):
                    r["hero"]["vehicle"] = old[r["hero"]["vehicle"]]
            return demo
        rosters = [{"player": p, "points": 200, "vehicles": []} for p in ("Player 1", "Player 2")]
        for n, (marker, name) in enumerate(cars):
            r = rosters[n % 2]
            r.setdefault("hero", {"vehicle": marker, "seat": "D"})
            r["vehicles"].append({"marker": marker, "name": name, "class": "car", "weapons": ["front"], "addons": []})
        return [r for r in rosters if r["vehicles"]]

    def demo_layout(self, cars: list[tuple[int, str, float, float]], table_mm: tuple[float, float]
                    ) -> dict[int, tuple[float, float, float]]:
        """A pack ("Play Setup": "Vehicles are all placed facing in the same direction"): every car
        heading +x, one to a lane (lanes DEMO_LANE_IN apart, the demo's cars in DEMO_LANES'
        order: the War Rig between two of Max's cars), staggered front to back, the
        leaders at least a template's length (9 in) from the front edge; neighbours are within
        a gun's 6 in and a Move's reach of each other, so every action can be tried at once."""
        width_mm, depth_mm = table_mm
        lane = inches(DEMO_LANE_IN)
        n = len(cars)
        y0 = depth_mm / 2 - lane * (n - 1) / 2
        longest = max((length for _, _, length, _ in cars), default=75.0)
        front_x = min(width_mm / 2 + inches(3.0), width_mm - inches(D.TEMPLATE_LENGTH_IN) - longest / 2)
        # The demo's own cars (by name) in DEMO_LANES' order; any others as given, after them.
        rank = {name: k for k, name in enumerate(DEMO_LANES)}
        cars = sorted(cars, key=lambda c: rank.get(c[1], len(DEMO_LANES)))
        out = {}
        for k, (marker, _, length, _) in enumerate(cars):
            # Alternate lanes lead and trail by 2 in: a pack, not a starting grid.
            x = front_x - (inches(2.0) if k % 2 else 0.0) - (length - longest) / 2
            out[marker] = (round(x, 1), round(y0 + k * lane, 1), 0.0)
        return out

    def demo_scenery(self, table_mm: tuple[float, float]) -> dict:
        """The book's play space: a highway running along the pack's way (+x), the roadside
        beyond it on either side as rough ground, room "for vehicles that get Nudged off the
        highway" ("Play Space"). No gates (the book has none) and nothing standing still in the
        road: "static elements like bridges, walls & buildings will look out of place". The book
        has no rule for terrain, so the rules read none of it; it is the table's look."""
        width_mm, depth_mm = table_mm
        half = inches(DEMO_HIGHWAY_LANES * 2.0) / 2
        near_edge, far_edge = depth_mm / 2 - half, depth_mm / 2 + half
        x0, x1 = DEMO_EDGE_MM, width_mm - DEMO_EDGE_MM
        terrain = []
        for name, y0, y1 in (("Roadside (near side)", DEMO_EDGE_MM, near_edge),
                             ("Roadside (far side)", far_edge, depth_mm - DEMO_EDGE_MM)):
            if y1 - y0 > 10.0:
                terrain.append({"name": name, "kind": "rough",
                                "points": [[x0, round(y0, 1)], [x1, round(y0, 1)], [x1, round(y1, 1)],
                                           [x0, round(y1, 1)]]})
        return {"terrain": terrain, "gates": []}

    def game_from_scene(self, scene, cars: list[dict]) -> GameState:
        """Each car's `class` (buggy, car, truck, rig) from the scene, for judging a Move."""
        classes = {c["id"]: c.get("class") for c in cars}
        missing = [str(i) for i, k in classes.items() if not k]
        if missing:
            raise RulesError(f"car{'s' if len(missing) > 1 else ''} {', '.join(missing)} "
                             f"need a 'class' (buggy, car, truck, rig)")
        return self.table_from_scene(scene, classes)

    def table_from_scene(self, scene, classes: dict[int, str]) -> GameState:
        """Just the vehicles on a scene's table, by class, no crews: enough to judge a Move."""
        vehicles = {}
        for car in scene.cars:
            cls = classes.get(car.id)
            if cls not in D.CLASSES:
                raise RulesError(f"car {car.name or car.id}: class must be one of {', '.join(D.CLASSES)}, not {cls!r}")
            vehicles[car.id] = Vehicle(car.id, car.name or str(car.id), cls, "table", "table",
                                       dict(D.CLASSES[cls].hit_points), [], [], [], car.length_mm, car.width_mm,
                                       car.pose)
        return GameState(["table"], vehicles, {}, (scene.width_mm, scene.depth_mm), _pack_heading(vehicles.values()))

    def active_marker(self, state: GameState) -> int | None:
        return state.active.marker if state.active is not None else None

    def may_premeasure(self) -> bool:
        """The book measures everything with the template laid down before a Move is declared
        ("Move": "the driver places the template ..., declares where they want to move") and
        forbids no measuring: ranges and arcs may be checked before declaring."""
        return True

    def actor_marker(self, state: GameState, action: dict) -> int:
        """A warrior acts from the vehicle he rides (or clings to); a vehicle's own actions
        name it."""
        if isinstance(action.get("warrior"), str):
            w = state.warrior(action["warrior"])
            if w.vehicle is None:
                raise RulesError(f"{w.label()} is on no vehicle")
            return w.vehicle
        return super().actor_marker(state, action)

    def turn_info(self, state: GameState) -> dict:
        """`up`: whose warriors act now aboard the active vehicle (the player with fewer markers
        aboard first, "Within a Round"), else the one who controls it; None between rounds."""
        v = state.active
        up = None
        if v is not None:
            first = self._goes_first(state, v)
            waiting = [w for w in state.crew(v.marker) if w.player == first and not w.acted]
            up = first if waiting else v.controller
        return {"round": state.round, "players": list(state.players), "turn": state.turn,
                "order": [{"player": p, "vehicle": m} for p, m in state.order],
                "active": self.active_marker(state), "up": up}

    #: "A Combat Round", the book's words for the play order, quoted by every refusal of one.
    ORDER_RULE = (f'{D.RULEBOOK}, "A Combat Round": "each player writes the order they want to play their '
                  f'vehicles in, using numbers starting at one in each vehicle\'s columns. The total number of '
                  f'order positions is equal to the number of vehicles in the largest army fielded. Only one '
                  f'vehicle can be played per number. If a player has less vehicles, they can choose which play '
                  f'numbers to skip."')

    @staticmethod
    def _order_places(state: GameState) -> int:
        """ "The total number of order positions is equal to the number of vehicles in the largest
        army fielded": a wreck's card still counts ("counted only to keep the play order intact",
        "Destroyed!"); a buggy still hidden in its rig is not on the table yet."""
        return max((sum(1 for v in state.vehicles.values() if v.owner == p and v.hidden_in is None)
                    for p in state.players), default=0)

    @staticmethod
    def _to_order(state: GameState, player: str) -> list[Vehicle]:
        """The vehicles a player must give a number: every one they own still in the fight (a
        captured one too: "the original owner continues to chose its play order")."""
        return [v for v in state.vehicles.values() if v.owner == player and v.in_play]

    def round_orders(self, state: GameState) -> dict[str, list[dict]]:
        """Each player's play order, one place for each of the largest army's vehicles ("A Combat
        Round"): their own vehicles in the fight first, then blanks (value None) for the numbers
        a smaller fleet skips. A boarded vehicle's original owner "continues to chose its play
        order" ("Within a Round")."""
        places = self._order_places(state)
        out = {}
        for p in state.players:
            own = [{"value": v.marker, "label": v.name} for v in self._to_order(state, p)]
            out[p] = own + [{"value": None, "label": "a number skipped (no vehicle)"}] * (places - len(own))
        return out

    def start_round(self, state: GameState, orders: dict[str, list[int | None]]):
        """Secret play orders revealed, the initiative rolled, activations set (resolution).
        Refused, nothing rolled, while a round is under way, or for an order that leaves out a
        vehicle that must play, names one twice, or has more numbers than the largest army."""
        if state.winner:
            raise RulesError(f"the game is over: {state.winner} won")
        if state.active is not None:
            later = [f"the {state.vehicles[m].name}" for _, m in state.order[state.turn + 1:]
                     if state.vehicles[m].in_play]
            raise RulesError(f"round {state.round} is not over: the {state.active.name}'s turn is under way"
                             + (f", then {', then '.join(later)}" if later else "") + f' ("Continue back and forth until the second player plays their final '
                             f'vehicle. This constitutes one complete round.", {D.RULEBOOK}, "A Combat Round")')
        if not isinstance(orders, dict):
            raise RulesError("play orders: each player's name with their list of vehicles")
        for player in orders:
            if player not in state.players:
                raise RulesError(f"a play order from {player}, who is not playing "
                                 f"(the players: {', '.join(state.players)})")
        largest = self._order_places(state)
        for player in state.players:
            order = orders.get(player)
            if order is None:
                raise RulesError(f"no play order from {player} ({self.ORDER_RULE})")
            if not isinstance(order, (list, tuple)):
                raise RulesError(f"{player}'s play order is a list of vehicles, a blank for a number skipped")
            if len(order) > largest:
                raise RulesError(f"{player}'s play order has {len(order)} numbers; the largest army has "
                                 f"{largest} vehicles ({self.ORDER_RULE})")
            named = [m for m in order if m is not None]
            for m in named:
                v = state.vehicle(m)
                if v.owner != player:
                    raise RulesError(f"{player}'s play order names {v.name}, which {v.owner} owns "
                                     f"(the original owner chooses its order)")
                if v.hidden_in is not None:
                    raise RulesError(f"{player}'s play order names the {v.name}, still hidden in the "
                                     f"{state.vehicles[v.hidden_in].name}: it is played once it is deployed")
            twice = sorted({state.vehicles[m].name for m in named if named.count(m) > 1})
            if twice:
                raise RulesError(f"{player}'s play order names the {' and the '.join(twice)} twice: each vehicle "
                                 f"has one number ({self.ORDER_RULE})")
            missing = [v.name for v in self._to_order(state, player) if v.marker not in named]
            if missing:
                raise RulesError(f"{player}'s play order leaves out the {' and the '.join(missing)}: every "
                                 f"vehicle in the fight plays each round, only the numbers a smaller fleet has "
                                 f"no vehicle for are skipped ({self.ORDER_RULE})")
        rolls = {}
        state.thrown = []
        while True:
            for player in state.players:
                roll = yield from self._throw(state, "d6", "initiative", player)
                rolls[player] = roll.face
            best = max(rolls.values())
            leaders = [p for p in state.players if rolls[p] == best]
            if len(leaders) == 1:
                break
        first = leaders[0]
        turn_order = [first] + [p for p in state.players if p != first]
        state.order = []
        for slot in range(largest):
            for player in turn_order:
                order = orders[player]
                if slot < len(order) and order[slot] is not None and state.vehicles[order[slot]].in_play:
                    state.order.append((player, order[slot]))
        state.round += 1
        state.turn = 0
        # "All Warrior Actions": one action a round (a Change or a successful Cling gives a
        # second); a warrior who boards another vehicle does not act again at its turn.
        for w in state.warriors.values():
            w.acted, w.extra_action, w.penalty = False, False, 0
        self._begin_activation(state)
        return {"round": state.round, "initiative": rolls, "rolls": state.thrown, "first": first,
                "order": [{"player": p, "vehicle": m} for p, m in state.order]}

    def _begin_activation(self, state: GameState) -> None:
        while state.active is not None and not state.active.in_play:
            state.turn += 1
        state.record_placed()         # where every car stood as this activation began
        # "any unused warriors actions are lost once play moves to another vehicle": a second
        # action (after a Change or a Cling) is for the activation it was won in.
        for w in state.warriors.values():
            w.extra_action, w.penalty = False, 0

    def end_activation(self, state: GameState):
        """The active vehicle's turn ends: unmanned, control, the play space's edges (resolution)."""
        v = state.active
        if v is None:
            raise RulesError("no vehicle is taking its turn: " + (
                "start the first round with the players' play orders" if state.round == 0 else
                f"round {state.round} is over; start the next with the players' play orders") +
                f' ({D.RULEBOOK}, "A Combat Round")')
        events: list[str] = []
        rolls = state.thrown = []
        state.actor = None              # the rolls here are nobody's chosen action
        self._clear_wrecks(state, events)
        if v.in_play:
            if v.cls == "rig" and v.hp["trailer"] <= 0 < v.hp["tractor"] and not v.decoupled:
                events.append(f"the {v.name} drags its dead trailer: unmanned until it decouples")
                yield from self._unmanned(state, v, events)
            elif state.in_seat(v.marker, "D") is None:
                yield from self._unmanned(state, v, events)
            players_aboard = {w.player for w in state.crew(v.marker)}
            if players_aboard and v.controller not in players_aboard:
                new = sorted(players_aboard)[0]
                events.append(f"{new} now controls the {v.name}")
                v.controller = new
        yield from self._edges(state, events)
        state.turn += 1
        self._begin_activation(state)
        self._check_winner(state, events)
        return {"events": events, "rolls": rolls, "next": state.active.marker if state.active else None}

    # --- geometry -------------------------------------------------------------------

    @staticmethod
    def _not_in_play(state: GameState, v: Vehicle) -> str:
        """Why a vehicle cannot be aimed at, rammed or boarded, in players' words."""
        if v.hidden_in is not None:
            return (f"the {v.name} is not in play: it is hidden in the {state.vehicles[v.hidden_in].name}, "
                    f'protected until it is deployed ({D.RULEBOOK}, "Rig-only Add-ons")')
        if v.destroyed:
            return f'the {v.name} is not in play: a wreck is removed from the play space ({D.RULEBOOK}, "Destroyed!")'
        return (f"the {v.name} is not in play: it dropped off the back edge, out of the fight "
                f'({D.RULEBOOK}, "Move")')

    def _others(self, state: GameState, *exclude: int) -> list[Footprint]:
        return [v.footprint() for v in state.vehicles.values()
                if v.in_play and v.pose is not None and v.marker not in exclude]

    def move_regions(self, state: GameState, marker: int, sections: int | None = None,
                     ignore: tuple[int, ...] = ()) -> dict[str, object]:
        """Where a vehicle's front bumper may end: the template at its front bumper,
        forwards and backwards (rigs 6", a Nudge's 1-3 sections)."""
        v = state.vehicle(marker)
        start = state.placed_pose(marker)             # where it stood, as judge_move judges it
        fp = v.footprint() if start is None else v.footprint().at(start)
        length = inches(sections * D.SECTION_IN if sections else v.klass.template_length_in)
        others = self._others(state, marker, *ignore)
        return {place: move_region(fp, MoveTemplate.at_front_bumper(fp, place == "forwards", length), others,
                                   whole_bumper=self._whole_bumper())
                for place in ("forwards", "backwards")}

    def _whole_bumper(self) -> bool:
        """Must the whole front bumper stay in the template, or its middle only (template_keeps)?"""
        return self.option("template_keeps") != "bumper_middle"

    def judge_move(self, state: GameState, marker: int, to: Pose, sections: int | None = None,
                   ignore: tuple[int, ...] = ()) -> dict:
        """Is a move from the vehicle's pose to `to` legal? If not, why and by how much."""
        v = state.vehicle(marker)
        # From where it stood (the activation's start, or where the rules last put it), not
        # where the camera may see it already: a car moved by hand is judged from there.
        fp = v.footprint()
        start = state.placed_pose(marker)
        if start is not None:
            fp = fp.at(start)
        dest = fp.at(to)
        reasons = []
        fixes = []          # what would make it legal, in players' words ("turn it 5° left")
        tol = float(self.option("pack_heading_tolerance_deg"))
        turn = _heading_gap(to.heading_deg, state.pack_heading_deg)
        if turn > tol:
            reasons.append(f"it ends pointing {turn:.1f} degrees from the pack's direction "
                           f"(at most {tol:g}; {D.RULEBOOK}, \"Play Setup\")")
            # Headings grow anticlockwise: a car pointing left of the pack turns right.
            side = "right" if normalize_deg(to.heading_deg - state.pack_heading_deg) > 0 else "left"
            fixes.append(f"turn it {math.ceil(turn - tol)}° {side}")
        bumper = dest.point("front_bumper")
        best = None
        for place, region in self.move_regions(state, marker, sections, ignore).items():
            verdict = region.allows(bumper)
            if self.option("template_keeps") == "whole_car":
                # How far the car's furthest corner lies outside the template (0 when all inside).
                outside = float(shapely.distance(region.template.polygon, shapely.points(dest.corners)).max())
                verdict_margin = min(verdict.margin_mm, -outside) if outside > 1e-6 else verdict.margin_mm
            else:
                verdict_margin = verdict.margin_mm
            if best is None or verdict_margin > best[1]:
                best = (place, verdict_margin, region, verdict)
        place, margin, region, verdict = best
        # A car set down against another (or at the template's edge) is read by the camera within
        # its doubt: an overlap or a step over the line inside that doubt is too close to call,
        # and a move is refused only when it is clearly out.
        sigma_mm = math.hypot(region.sigma_mm, to.sigma_mm)
        close = margin < 0 and -margin <= CALL_SIGMAS * sigma_mm
        if margin < 0 and not close:
            template = region.template.polygon
            # The whole bumper, corner to corner, must stay in the template ("Move").
            a, b = dest.length_mm / 2, dest.width_mm / 2
            edge = np.array([bumper, to.to_table(a, b), to.to_table(a, -b)] if self._whole_bumper() else [bumper],
                            dtype=float)
            outside = float(shapely.distance(template, shapely.points(edge)).max())
            if outside > 1e-6:
                reasons.append(f"the front bumper ends {outside / MM_PER_IN:.2f} in outside "
                               f"the move template")
                fixes.append(f"bring its front bumper {outside / MM_PER_IN:.2f} in back into the template")
            else:
                hit = [o.name for o in self._others(state, marker, *ignore) if shapely.intersects(o.polygon, dest.polygon)]
                if hit:
                    reasons.append(f"it would overlap the {', '.join(hit)}")
                    fixes.append(f"move it off the {', '.join(hit)}")
                elif self.option("template_keeps") == "whole_car":
                    reasons.append(f"part of the car ends {-margin / MM_PER_IN:.2f} in outside the move template")
                    fixes.append(f"bring it {-margin / MM_PER_IN:.2f} in back into the template")
                else:
                    reasons.append("there is no clear path to it inside the template (another vehicle is in the way)")
        return {"legal": not reasons, "reasons": reasons, "fix": fixes, "template": place,
                "margin_mm": round(margin, 2), "sigma_mm": round(sigma_mm, 3),
                "verdict": "out" if reasons else TOO_CLOSE if close else verdict.outcome}

    # --- rolling --------------------------------------------------------------------

    def _modifiers(self, state: GameState, w: Warrior) -> list[Modifier]:
        mods = []
        if w.penalty and w.id == state.actor:
            mods.append(Modifier(w.penalty, "acting again after a Change or a Cling"))
        v = state.vehicles.get(w.vehicle)
        if v is not None and v.pose is not None and v.in_play:
            me = v.footprint()
            for other in state.vehicles.values():
                if other.marker != v.marker and other.in_play and other.pose is not None and "drag_chains" in other.addons:
                    # "A 1 template section directly behind": a 3 in x 4 in box ("Terms"), centred
                    # behind the car, whatever the car's own width.
                    strip = directly_behind(other.footprint(), inches(D.DRAG_CHAINS_LENGTH_IN),
                                            inches(D.DRAG_CHAINS_WIDTH_IN) if self.option("drag_chains_zone") == "section"
                                            else None)
                    if overlaps(strip, me).margin_mm > 0:
                        mods.append(Modifier(D.DRAG_CHAINS_PENALTY, f"in the {other.name}'s drag chains' dust"))
        return mods

    def _skill(self, state: GameState, w: Warrior, purpose: str, extra: tuple[Modifier, ...] = ()):
        v = state.vehicles.get(w.vehicle)
        req = DiceRequest((w.skill_die,), purpose, f"{w.label()}" + (f" on the {v.name}" if v else ""))
        throw = yield req
        roll = Roll(req, throw.faces[0], tuple(self._modifiers(state, w)) + tuple(extra))
        state.thrown.append(roll.to_json())       # every die of the step in its rolls, in order
        return roll

    def _throw(self, state: GameState, die: str, purpose: str, who: str = "", extra: tuple[Modifier, ...] = ()):
        """One die the rules throw (damage, a box, a driverless car's roll): a Roll, in the step's
        rolls with its modifiers."""
        req = DiceRequest((die,), purpose, who)
        throw = yield req
        roll = Roll(req, throw.faces[0], tuple(extra))
        state.thrown.append(roll.to_json())
        return roll

    def _d(self, state: GameState, die: str, purpose: str, who: str = "", plus: int = 0, why: str = ""):
        """A die's total (damage "1d6+2": `plus` 2, `why` said in the step's rolls)."""
        roll = yield from self._throw(state, die, purpose, who, (Modifier(plus, why),) if plus else ())
        return roll.total

    # --- damage --------------------------------------------------------------------

    def _hurt_vehicle(self, state: GameState, v: Vehicle, amount: int, part: str | None, events: list):
        amount = max(int(amount), 0)
        if amount == 0 or v.destroyed:
            return
        if v.cls == "rig" and v.decoupled:
            part = "tractor"            # the trailer is gone: the rig is its tractor
        if v.cls == "rig" and part is None:
            big, small = (amount + 1) // 2, amount // 2
            first = "tractor" if self.option("rig_damage_split") == "tractor_first" else "trailer"
            second = "trailer" if first == "tractor" else "tractor"
            v.hp[first] -= big
            v.hp[second] -= small
            events.append(f"the {v.name} takes {amount} ({big} {first}, {small} {second})")
        else:
            key = part or "body"
            v.hp[key] -= amount
            events.append(f"the {v.name} takes {amount}" + (f" to its {key}" if part else ""))
        dead = (v.hp["tractor"] <= 0) if v.cls == "rig" else v.hp["body"] <= 0
        if v.cls == "rig" and v.hp["tractor"] <= 0 and v.hp["trailer"] <= 0:
            dead = True
        if dead:
            yield from self._destroyed(state, v, events)

    def _wound(self, state: GameState, w: Warrior, damage: int, events: list):
        """Damage against Tenacity: more than it puts the warrior out ("Warriors")."""
        if w.out:
            return
        if w.kind == "hero":
            tenacity = 0
            for k, die in enumerate(D.HERO_TENACITY_DICE, start=1):
                tenacity += yield from self._d(state, die, f"tenacity ({k} of {len(D.HERO_TENACITY_DICE)})", w.label())
        else:
            tenacity = D.FODDER_TENACITY
        if damage > tenacity:
            w.out = True
            events.append(f"{w.label()} takes {damage} against tenacity {tenacity}: out of the fight")
        else:
            events.append(f"{w.label()} shrugs off {damage} (tenacity {tenacity})")

    def _destroyed(self, state: GameState, v: Vehicle, events: list):
        """ "Destroyed!": the wreck; vehicles in line behind veer; the hidden buggy."""
        if v.destroyed:
            return
        v.destroyed = True
        state.wrecks.append(v.marker)
        events.append(f"the {v.name} is destroyed")
        if v.pose is not None:
            yield from self._veer_behind(state, v.footprint(), v.name, (v.marker,), events)
        if v.hidden_buggy is not None:
            yield from self._hidden_buggy_escapes(state, v, events)

    def _veer_behind(self, state: GameState, wreck: Footprint, name: str, exclude: tuple[int, ...],
                     events: list):
        """ "The Drivers of any vehicles overlapping a direct line behind the destroyed vehicle need
        to make a quick Move roll ... Vehicles that fail the Move take 1d6 hit points"."""
        strip = directly_behind(wreck, 10_000.0)
        for other in list(state.vehicles.values()):
            if other.marker in exclude or not other.in_play or other.pose is None:
                continue
            if overlaps(strip, other.footprint()).margin_mm > 0:
                driver = state.in_seat(other.marker, "D")
                if driver is None:
                    continue
                roll = yield from self._skill(state, driver, f"Move to veer round the {name}'s wreck")
                if roll.total < D.MOVE_SUCCESS:
                    dmg = yield from self._d(state, D.WRECK_DAMAGE_DIE, f"damage clipping the {name}'s wreck", other.name)
                    events.append(f"the {other.name} clips the wreck")
                    yield from self._hurt_vehicle(state, other, dmg, None, events)
                    if roll.face == D.FUMBLE and other.in_play and \
                            self.option("wreck_veer_fumble") == "clip_and_lose_control":
                        yield from self._lost_control(state, other, events)
                else:
                    events.append(f"the {other.name} veers clear of the wreck")

    def _hidden_buggy_escapes(self, state: GameState, v: Vehicle, events: list):
        """ "If the Rig is destroyed the buggy driver can attempt to deploy it at a -1, otherwise
        it is destroyed with the rig" (the trailer that hides it falling back wrecked, too)."""
        buggy = state.vehicles[v.hidden_buggy]
        driver = state.in_seat(buggy.marker, "D")
        deployed = False
        if driver is not None:
            roll = yield from self._skill(state, driver, f"drive the {buggy.name} out of the wreck",
                                          (Modifier(D.HIDDEN_BUGGY_DESTROYED_PENALTY, "the rig is wrecked"),))
            deployed = roll.total >= D.MOVE_SUCCESS
        v.hidden_buggy = None
        buggy.hidden_in = None
        if deployed:
            events.append(f"the {buggy.name} bursts out of the wrecked {v.name} behind it")
            if v.pose is not None:
                # The book says only that it deploys: it comes out of the trailer's back doors.
                yield from self.place(state, buggy, self._behind(v, buggy),
                                      f"bursts out of the wrecked {v.name}: behind the wreck")
        else:
            buggy.destroyed = True
            for w in state.crew(buggy.marker):
                w.out = True
            events.append(f"the {buggy.name} goes down with the {v.name}")

    # --- the actions ------------------------------------------------------------------

    def before_action(self, state: GameState, action: dict) -> None:
        if state.winner:
            raise RulesError(f"the game is over: {state.winner} won")
        state.actor = None
        state.thrown = []
        state.poses_before = {m: v.pose for m, v in state.vehicles.items()}

    def after_action(self, state: GameState, action: dict, result: dict) -> dict:
        """The winner checked; a car the resolution moved (driven, set down by a nudge, veering
        out of control) stands, for what is judged next, where it was put. A car moved by hand
        meanwhile does not: it is judged from where the rules last left it."""
        self._check_winner(state, result.setdefault("events", []))
        for m, v in state.vehicles.items():
            if v.pose is not None and v.pose != state.poses_before.get(m):
                state.placed[m] = v.pose
        state.poses_before = {}
        state.actor = None
        return result

    def _acting(self, state: GameState, action: dict, default_seat: str | None = None) -> Warrior:
        """The warrior doing it, checked against the turn."""
        wid = action.get("warrior")
        if wid is None and default_seat is not None:
            marker = action.get("vehicle")
            w = state.in_seat(marker, default_seat) if marker is not None else None
            if w is None:
                raise RulesError(f"the {state.vehicle(marker).name if marker is not None else '?'} has no one "
                                 f"in {seat_words(default_seat)}")
        else:
            w = state.warrior(wid)
        if w.out:
            raise RulesError(f"{w.label()} is out of the fight")
        active = state.active
        if active is None and state.round > 0 and not action.get("desperate"):
            # Every vehicle has played: a warrior acts only in his vehicle's turn, and what he
            # did not use is lost (the desperate leap is "regardless of if they have acted").
            raise RulesError(f"round {state.round} is over: every vehicle has played, and a warrior acts only in "
                             f"his vehicle's turn (\"any unused warriors actions are lost once play moves to another "
                             f"vehicle\", {D.RULEBOOK}, \"Within a Round\"); start round {state.round + 1} with "
                             f"the play orders")
        if active is not None and w.vehicle != active.marker and not action.get("desperate"):
            raise RulesError(f"it is the {active.name}'s turn; {w.label()} is not aboard it")
        if w.acted and not w.extra_action and not action.get("desperate") and active is not None:
            raise RulesError(f"{w.label()} has already acted this round (one action a round; a Change or a "
                             f"successful Cling gives one more, {D.RULEBOOK}, \"All Warrior Actions\")")
        here = state.vehicles.get(w.vehicle)
        if here is not None and here.destroyed and not action.get("desperate"):
            raise RulesError(f"{w.label()} is on the {here.name}'s wreck: only a desperate leap (at -1) is left "
                             f'({D.RULEBOOK}, "Destroyed!")')
        state.actor = w.id
        if active is not None and not action.get("desperate"):
            first = self._goes_first(state, active)
            waiting = [x for x in state.crew(active.marker) if x.player == first and not x.acted]
            if w.player != first and waiting:
                raise RulesError(f"{first}'s warriors aboard the {active.name} act first (fewer markers aboard; "
                                 f"{D.RULEBOOK}, \"Within a Round\"): {', '.join(x.label() for x in waiting)} "
                                 f"still to act or pass")
        v = state.vehicles.get(w.vehicle)
        if v is not None and v.at_back_edge and action.get("act") != "move":
            raise RulesError(f"the {v.name} cannot {action.get('act')} now: it is at the back edge, and its only "
                             f"action is a Move to rejoin")
        return w

    def _goes_first(self, state: GameState, v: Vehicle) -> str:
        """ "If two players have markers on the same vehicle, the player with less markers on
        the vehicle goes first ... (ties go to the player that owns the vehicle)"."""
        counts: dict[str, int] = {}
        for w in state.crew(v.marker):
            counts[w.player] = counts.get(w.player, 0) + 1
        if len(counts) < 2:
            return v.controller
        least = min(counts.values())
        fewest = [p for p, n in counts.items() if n == least]
        return v.owner if v.owner in fewest else sorted(fewest)[0]

    @action("pass", fields=FIELDS["pass"])
    def _act_pass(self, state: GameState, action: dict):
        """A warrior skips their action ("a warrior can be skipped if the player chooses")."""
        w = self._acting(state, action)
        self._done(w)
        return {"act": "pass", "warrior": w.id, "rolls": [], "events": [f"{w.label()} does nothing"],
                "result": "passed"}

    def _done(self, w: Warrior, change: bool = False) -> None:
        """The warrior's action is taken. A Change (as their action) leaves one more at -1 that
        turn; the one more, whatever it is (a second Change too), leaves none: Changes do not
        chain ("All Warrior Actions": "A Change & a successful Cling are the only actions where
        a second action is allowed the same round")."""
        if w.acted and w.extra_action:
            w.extra_action = False
            return
        w.acted = True
        if change:
            w.extra_action, w.penalty = True, D.CHANGE_PENALTY

    def _clingers(self, state: GameState, v: Vehicle, why: str, events: list):
        """ "Cling": warriors beyond the seats roll when the vehicle swerves or is struck."""
        for w in [w for w in state.crew(v.marker) if w.seat is None]:
            if w.cling_exempt_on == v.marker:
                continue
            roll = yield from self._skill(state, w, f"Cling ({why})")
            if roll.total >= D.CLING_SUCCESS:
                if state.active is v:
                    # The Cling was their action; one more at -1, in this turn of their vehicle's
                    # (a warrior acts only in their vehicle's turn, "Within a Round").
                    w.acted, w.extra_action, w.penalty = True, True, D.CLING_ACTION_PENALTY
                    events.append(f"{w.label()} clings on and may act again at -1")
                else:
                    events.append(f"{w.label()} clings on")
            elif roll.total >= D.HOLD_ON:
                w.acted, w.extra_action = True, False
                events.append(f"{w.label()} hangs on tight")
            else:
                w.out = True
                events.append(f"{w.label()} falls off the {v.name}")

    @action("move", fields=FIELDS["move"])
    def _act_move(self, state: GameState, action: dict):
        w = self._acting(state, action, "D")
        v = state.vehicle(w.vehicle)
        if w.seat != "D":
            raise RulesError(f"{w.label()} is not driving (Change into the driver's seat first)")
        to = self._pose(action["to"]) if action.get("to") is not None else None
        if to is not None and not v.at_back_edge and not self._moved(v.pose, to):
            to = None                   # left where it stood: a Move roll, and nowhere to judge
        judged = self.judge_move(state, v.marker, to) if to is not None else None
        if judged is not None and not judged["legal"] and not v.at_back_edge:
            raise RulesError(f"the {v.name} cannot move there: {'; '.join(judged['reasons'])}")
        events, rolls = [], state.thrown
        roll = yield from self._skill(state, w, "Move")
        self._done(w)
        result = {"act": "move", "vehicle": v.marker, "rolls": rolls, "events": events, "judged": judged}
        if v.at_back_edge:
            if roll.total >= D.MOVE_SUCCESS:
                v.at_back_edge = False
                if to is not None:
                    yield from self.place(state, v, to, "where it was driven back into the fight")
                events.append(f"the {v.name} claws its way back into the fight")
                result["result"] = "rejoined"
            else:
                v.out_of_play = True
                events.append(f"the {v.name} drops too far back and is out of the fight")
                result["result"] = "left behind"
            return result
        if roll.face == D.FUMBLE:
            result["result"] = "lost control"
            yield from self._lost_control(state, v, events)
        elif roll.total >= D.MOVE_SUCCESS:
            if to is not None:
                yield from self.place(state, v, to, "where it was driven")
            self._forget_rams(state, v)
            result["result"] = "moved"
            yield from self._clingers(state, v, "the vehicle moves", events)
        else:
            result["result"] = "failed: stays where it was"
            if to is not None:
                yield from self._put_back_on_table(state, v, "the Move failed")
        return result

    def _contested(self, state, attacker: Warrior, defender: Warrior, what: str, extra=()):
        a = yield from self._skill(state, attacker, f"{what} (attacker)", tuple(extra))
        d = yield from self._skill(state, defender, f"{what} (defender)")
        return a, d, a.total > d.total          # ties go to the defender

    #: The fields naming a rig's further targets ("Rigs can Ram/Nudge multiple vehicles from the
    #: side"), each with the field where a nudge sets it down.
    MORE_TARGETS = (("second_target", "push_to_2"), ("third_target", "push_to_3"))

    #: A nudge's chain: the vehicle the target is pushed into, and where it is knocked; then the
    #: vehicle that one is knocked into, and so on ("daisy-chaining a bunch of nudges is possible").
    CHAIN_LINKS = (("into", "chain_to"), ("into_2", "chain_to_2"), ("into_3", "chain_to_3"))

    def _spread_targets(self, action: dict) -> dict:
        """A scenario's or the CLI's `targets` list (docs/scenarios.md) as the page's fields:
        `target`, `second_target`, `third_target`."""
        if action.get("targets") is None:
            return action
        listed = action["targets"]
        if not isinstance(listed, list) or not 1 <= len(listed) <= 1 + len(self.MORE_TARGETS):
            raise RulesError(f"targets: a list of one to {1 + len(self.MORE_TARGETS)} vehicles")
        if action.get("target") is not None and action["target"] != listed[0]:
            raise RulesError("name the first target once: 'target' or the first of 'targets'")
        out = {k: v for k, v in action.items() if k != "targets"}
        out["target"] = listed[0]
        for (name, _), marker in zip(self.MORE_TARGETS, listed[1:]):
            if out.get(name) not in (None, marker):
                raise RulesError(f"'{name}' and 'targets' name different vehicles")
            out[name] = marker
        return out

    def _targets(self, state: GameState, v: Vehicle, action: dict, at: Pose | None = None) -> list[Vehicle]:
        """One target, or several for a rig's side: "Rigs can Ram/Nudge multiple vehicles from
        the side due to their length ... with one roll" ("Nudge", "Ram"). With `at` (where a
        rammer stands against them) each must lie along its side."""
        if action.get("target") is None:
            raise RulesError("name the vehicle to strike: 'target' (and a rig's 'second_target', 'third_target')")
        targets = [state.vehicle(action["target"])]
        for name, _ in self.MORE_TARGETS:
            if action.get(name) is not None:
                targets.append(state.vehicle(action[name]))
        markers = [t.marker for t in targets]
        if len(set(markers)) != len(markers) or v.marker in markers:
            raise RulesError("name each target once, and not the vehicle itself")
        if len(targets) > 1 and v.cls != "rig":
            raise RulesError(f"only a rig can sideswipe several vehicles at once; the {v.name} is a {v.cls}")
        for n, (mine, theirs) in enumerate(self.DECLARED[1:], start=1):
            said = [f for f in (mine, theirs) if action.get(f) is not None]
            if said and len(targets) <= n:
                nth = ("second", "third")[n - 1]
                raise RulesError(f"sections are declared against a {nth} target, but there is none: name the "
                                 f"{nth} target too, or leave its sections out")
        for t in targets:
            if not t.in_play:
                raise RulesError(self._not_in_play(state, t))
        if len(targets) > 1 and at is not None:
            fp = v.footprint().at(at)
            for t in targets:
                # Along its side: the target reaches somewhere between the rig's bumpers, and
                # lies to one side of it (the side meets it).
                along = [fp.pose.to_local(c)[0] for c in t.footprint().corners]
                beside = max(along) > -fp.length_mm / 2 and min(along) < fp.length_mm / 2
                if not beside or not ({"left", "right"} & set(_contact_faces(fp, t.footprint()))):
                    raise RulesError(f"the {t.name} is not beside the {v.name}: a sideswipe takes vehicles along its side")
        return targets

    @staticmethod
    def _pose(value) -> Pose:
        """A pose field ([x_mm, y_mm, heading_deg], with the camera's doubt when it read it)."""
        return Pose(*[float(x) for x in value[:5]])

    @staticmethod
    def _moved(start: Pose | None, to: Pose) -> bool:
        """Was the car put somewhere else? Within NO_MOVE_MM and NO_MOVE_DEG (or three times
        the camera's doubt) it was left where it stood: a camera pose field is always filled."""
        if start is None:
            return True
        slack_mm = max(NO_MOVE_MM, 3 * (start.sigma_mm + to.sigma_mm))
        slack_deg = max(NO_MOVE_DEG, 3 * (start.sigma_deg + to.sigma_deg))
        return (math.hypot(to.x_mm - start.x_mm, to.y_mm - start.y_mm) > slack_mm
                or _heading_gap(to.heading_deg, start.heading_deg) > slack_deg)

    def _put_back_on_table(self, state: GameState, v: Vehicle, why: str):
        """A car already set down by hand where the action would take it, which the dice do not
        let go there: put back where the rules last left it ("On 2 they fail and stay where they
        were")."""
        stood = state.placed_pose(v.marker)
        if stood is not None and v.in_play:
            yield from self.place(state, v, stood, f"{why}: back where it stood")

    def _put_back(self, state: GameState, v: Vehicle) -> None:
        """Where the rules last left it: a car set down before its nudge resolves is judged
        from where it stood."""
        pose = state.placed_pose(v.marker)
        if pose is not None:
            v.pose = pose

    @staticmethod
    def _behind(rig: Vehicle, buggy: Vehicle) -> Pose:
        """Where a buggy driven out of a rig's trailer stands: just behind the rig, in its lane
        (a finger's width, 10 mm, between them)."""
        return rig.pose.moved(-(rig.length_mm + buggy.length_mm) / 2 - 10.0)

    @staticmethod
    def _forget_rams(state: GameState, v: Vehicle) -> None:
        """ "If a ram has occurred between two vehicles and neither has made a Move since": once
        either is moved (driven, nudged, knocked, veering out of control, dropping back), the
        two are no longer in position, for either of them."""
        for other in v.rammed_with:
            if other in state.vehicles:
                state.vehicles[other].rammed_with.discard(v.marker)
        v.rammed_with.clear()

    @action("ram", fields=FIELDS["ram"])
    def _act_ram(self, state: GameState, action: dict):
        """ "Ram": "they Move up until they are against the target vehicle and perform the Ram".
        Before any dice: `to` (where the rammer was driven) must be a legal Move, the rammer must
        end against every target, and a declared section must be one that meets it there."""
        action = self._spread_targets(action)
        w = self._acting(state, action, "D")
        v = state.vehicle(w.vehicle)
        if w.seat != "D":
            raise RulesError(f"{w.label()} is not driving (Change into the driver's seat first)")
        at = self._pose(action["to"]) if action.get("to") is not None else None
        if at is not None and not self._moved(v.pose, at):
            at = None                   # left where it stood
        targets = self._targets(state, v, action, at if at is not None else v.pose)
        # "If a ram has occurred between two vehicles and neither has made a Move since, either can
        # initiate a Ram ... without having to make a Move roll": only when it does not move.
        needs_move = at is not None or any(t.marker not in v.rammed_with for t in targets)
        if needs_move:
            for t in targets:
                self._within_reach(state, v, t, "ram")
        judged = None
        if at is not None:
            judged = self.judge_move(state, v.marker, at)
            if not judged["legal"]:
                raise RulesError(f"the {v.name} cannot move there to ram: {'; '.join(judged['reasons'])}")
        where = v.footprint() if at is None else v.footprint().at(at)
        for n, t in enumerate(targets):
            self._check_against(where, t, self._declared(action, n), n)
        events, rolls = [], state.thrown
        result = {"act": "ram", "vehicle": v.marker, "target": targets[0].marker,
                  "targets": [t.marker for t in targets], "rolls": rolls, "events": events, "judged": judged}
        if needs_move:
            # "a driver must make a successful Move roll to get in position"
            move = yield from self._skill(state, w, f"Move into position to ram the {', '.join(t.name for t in targets)}")
            if move.face == D.FUMBLE:
                self._done(w)
                result["result"] = "lost control getting in position"
                yield from self._lost_control(state, v, events)
                return result
            if move.total < D.MOVE_SUCCESS:
                self._done(w)
                result["result"] = "could not get in position"
                if at is not None:
                    events.append(f"the {v.name} stays where it stood; put it back")
                    yield from self._put_back_on_table(state, v, "it could not get in position to ram")
                return result
            if at is not None:
                yield from self.place(state, v, at, f"driven up against the {', '.join(t.name for t in targets)} to ram")
                self._forget_rams(state, v)
        self._done(w)
        # "declare how they are Ramming them ... then make a Contested skill roll": each target's
        # sections, declared or measured where they meet, before the roll.
        sections = []
        for n, t in enumerate(targets):
            sections.append((yield from self._sections(state, v, t, self._declared(action, n), "ram")))
        result["sections"] = [{"target": t.marker, "with": s[0], "at": s[1], "how": s[2]}
                              for t, s in zip(targets, sections)]
        shared = None
        if len(targets) > 1:
            shared = yield from self._skill(state, w, f"Ram (sideswiping {len(targets)} vehicles)")
        fumbled = []
        for n, t in enumerate(targets):
            if t.in_play and v.in_play:
                a_roll, d_roll = yield from self._ram(state, v, t, 0, events, sections[n],
                                                     shared, lose_control=shared is None)
                if d_roll.face == D.FUMBLE:
                    fumbled.append(t)
        if shared is not None:
            # "Lost control action happens after Ram resolves": after the one roll's every ram,
            # and the rig loses control once for its one roll of 1, not once a target.
            for veh in ([v] if shared.face == D.FUMBLE else []) + fumbled:
                if veh.in_play:
                    yield from self._lost_control(state, veh, events)
        result["result"] = "rammed"
        return result

    def _check_against(self, fp: Footprint, target: Vehicle, declared: dict | None, n: int = 0) -> None:
        """The rammer, where it stands to ram, is against the target (within CONTACT_MM, or
        touching within the camera's doubt), and the sections declared (for the n-th target) are
        ones that meet: the face they meet along, or either face of the corner they meet at."""
        aim = target.footprint()
        gap = closest_distance(fp, aim)
        if gap.within(CONTACT_MM, "contact").outcome == "out":
            raise RulesError(f"the {fp.name or 'rammer'} must end against the {target.name} to ram it (\"Move up until "
                             f"they are against the target vehicle\"); it stands {gap.distance_mm / MM_PER_IN:.2f} in "
                             f"from it")
        declared = declared or {}
        for key, mine, other in (("with", fp, aim), ("at", aim, fp)):
            said = declared.get(key)
            if said is None:
                continue
            meeting = _contact_faces(mine, other)
            if said not in meeting:
                whose = "its" if key == "with" else f"the {target.name}'s"
                raise RulesError(f"{whose} {said} does not meet the other car where they stand: "
                                 f"{' or '.join(meeting)} does"
                                 + (f" (as declared for the {('second', 'third')[n - 1]} target)" if n else ""))

    #: The fields declaring each target's sections ("I'm going to ram the rear of their car with
    #: the front of mine"): the attacker's section and the target's, for the first target, the
    #: second (a rig's sideswipe) and the third.
    DECLARED = (("with", "at"), ("with_2", "at_2"), ("with_3", "at_3"))

    @classmethod
    def _declared(cls, action: dict, n: int) -> dict:
        """The sections declared against the n-th target; what is not declared is measured."""
        mine, theirs = cls.DECLARED[n]
        return {key: action[f] for key, f in (("with", mine), ("at", theirs)) if action.get(f) is not None}

    @staticmethod
    def in_reach(attacker: Vehicle, target: Vehicle) -> bool:
        """Does any part of the target lie in the attacker's move template, forwards or backwards
        (or touch it)? What a Ram or a Nudge needs ("Move up until they are against the target")."""
        if attacker.pose is None or target.pose is None:
            return False
        fp, aim = attacker.footprint(), target.footprint()
        if closest_distance(fp, aim).distance_mm <= 0.0:
            return True
        length = inches(attacker.klass.template_length_in)
        return any(shapely.intersects(MoveTemplate.at_front_bumper(fp, forwards, length).polygon, aim.polygon)
                   for forwards in (True, False))

    def _within_reach(self, state: GameState, attacker: Vehicle, target: Vehicle, what: str) -> None:
        """ "they Move up until they are against the target": the target must lie within the
        attacker's move template (forwards or backwards), or already touch it."""
        if attacker.pose is None or target.pose is None:
            raise RulesError(f"the {attacker.name} and the {target.name} must both be on the table to {what}")
        if self.in_reach(attacker, target):
            return
        raise RulesError(f"the {target.name} is out of the {attacker.name}'s reach: no part of it lies in "
                         f"the move template, forwards or backwards ({D.RULEBOOK}, \"Move\")")

    def _sections(self, state: GameState, attacker: Vehicle, defender: Vehicle, declared: dict | None,
                  what: str):
        """The sections that meet in a Ram or a Nudge (resolution): (the attacker's, the
        defender's, how each was had). Declared, they stand; else the face in contact ("impact to
        the armored section", "Vehicle Add-ons"): the face the two cars meet along. Where they
        meet only at a corner, option corner_contact: by default the attacker's player says which
        face, as the book has the attacker "declare how they are Ramming them", asked only when
        one face is armoured and the other not (otherwise the numbers are the same)."""
        declared = declared or {}
        if attacker.pose is None or defender.pose is None:
            return declared.get("with", "front"), declared.get("at", "rear"), {"with": "declared", "at": "declared"}
        a_fp, d_fp = attacker.footprint(), defender.footprint()
        out, how = {}, {}
        for key, car, mine, other in (("with", attacker, a_fp, d_fp), ("at", defender, d_fp, a_fp)):
            if declared.get(key) is not None:
                out[key], how[key] = declared[key], "declared"
                continue
            faces = _contact_faces(mine, other)
            if len(faces) == 1:
                out[key], how[key] = faces[0], "where they meet"
                continue
            corner = f"the {car.name}'s {_corner_words(faces)}"
            toward = _section_of(mine, other.pose.xy)
            toward = toward if toward in faces else faces[0]
            armoured = [f for f in faces if car.armour(f)]
            mode = self.option("corner_contact")
            if not armoured or len(armoured) == len(faces):
                out[key], how[key] = toward, f"{corner} (the same armour either way)"
            elif mode == "either_armoured":
                out[key], how[key] = armoured[0], f"{corner}: armour on either face counts"
            elif mode == "bearing":
                out[key], how[key] = toward, f"{corner}: the face towards the other car"
            else:
                asked = (f"which section of the {attacker.name} {what}s the {defender.name}" if key == "with" else
                         f"which section of the {defender.name} the {attacker.name}'s {what} strikes")
                picked = yield ChoiceRequest(
                    attacker.controller, f"{asked}: they meet only at {corner}",
                    tuple({"value": f, "label": f"the {car.name}'s {f}" + (" (armoured)" if car.armour(f) else "")}
                          for f in faces), attacker.name)
                out[key], how[key] = picked, f"{corner}: declared by {attacker.controller}"
        return out["with"], out["at"], how

    def _ram(self, state: GameState, attacker: Vehicle, defender: Vehicle, attacker_mod: int,
             events: list, sections: tuple | None = None, a_roll: Roll | None = None,
             lose_control: bool = True, mod_reason: str = "ramming out of control"):
        """ "Ram": the sections that meet (`sections`, else measured before the rolls), contested
        drivers; 1d6 (a 6 rerolled once and added), the rammer half to at most 3, class bonuses on
        the defender's damage, armour off the final numbers; the automatic 25."""
        if sections is None:
            sections = yield from self._sections(state, attacker, defender, None, "ram")
        hit_with, hit_at, how = sections
        a_driver = state.in_seat(attacker.marker, "D")
        d_driver = state.in_seat(defender.marker, "D")
        extra = (Modifier(attacker_mod, mod_reason),) if attacker_mod else ()
        shared = a_roll is not None                # a rig's sideswipe: one roll against every vehicle
        if shared:
            pass
        elif a_driver is None:
            a_roll = yield from self._throw(state, "d6", f"Ram (the driverless {attacker.name})", extra=extra)
        else:
            a_roll = yield from self._skill(state, a_driver, f"Ram the {defender.name}", extra)
        if d_driver is None:
            d_roll = yield from self._throw(state, "d6", f"Ram defence (the driverless {defender.name})")
        else:
            d_roll = yield from self._skill(state, d_driver, f"resist the {attacker.name}'s Ram")
        attacker.rammed_with.add(defender.marker)
        defender.rammed_with.add(attacker.marker)
        if a_roll.natural_max and d_roll.face == D.FUMBLE:
            events.append(f"a perfect ram: the {defender.name} takes {D.RAM_AUTO_DAMAGE}, "
                          f"the {attacker.name} {D.RAM_AUTO_ATTACKER_DAMAGE}")
            yield from self._hurt_vehicle(state, defender, D.RAM_AUTO_DAMAGE, None, events)
            yield from self._hurt_vehicle(state, attacker, D.RAM_AUTO_ATTACKER_DAMAGE, None, events)
        elif a_roll.total > d_roll.total or not self.option("ram_damage_needs_win"):
            first = yield from self._d(state, D.RAM_DAMAGE_DIE, f"Ram damage to the {defender.name}")
            dice = first
            if first == D.RAM_REROLL_ON:
                dice += yield from self._d(state, D.RAM_DAMAGE_DIE, "Ram damage (a 6: rolled again and added)")
            bonus = attacker.klass.ram_bonus.get(defender.cls, 0)
            to_defender = max(dice + bonus - defender.armour(hit_at), 0)
            to_attacker = max(min(dice // 2, D.RAM_ATTACKER_MAX) - attacker.armour(hit_with), 0)
            events.append(f"the {attacker.name} rams the {defender.name}'s {hit_at} with its {hit_with}"
                          + self._how_words(how) + f": {dice} on the dice"
                          + (f" {bonus:+d} ({attacker.cls} against {defender.cls})" if bonus else "")
                          + (f" -1 ({hit_at} armour)" if defender.armour(hit_at) else "")
                          + (f"; the {attacker.name}'s {hit_with} armour takes 1 off its own"
                             if attacker.armour(hit_with) else ""))
            yield from self._hurt_vehicle(state, defender, to_defender, None, events)
            yield from self._hurt_vehicle(state, attacker, to_attacker, None, events)
            yield from self._clingers(state, defender, "rammed", events)
        else:
            events.append(f"the {defender.name} rides out the {attacker.name}'s ram")
        if attacker.in_play:
            yield from self._clingers(state, attacker, "ramming", events)
        if lose_control:
            for veh, roll in ((attacker, a_roll), (defender, d_roll)):
                if roll.face == D.FUMBLE and veh.in_play:
                    yield from self._lost_control(state, veh, events)
        return a_roll, d_roll

    @staticmethod
    def _how_words(how: dict) -> str:
        """A corner said in an event ("(they meet at the Buggy's rear-left corner: declared by
        Max)"); sections declared or met face to face need no words."""
        said = [h for h in how.values() if h not in ("declared", "where they meet")]
        return f" ({'; '.join(said)})" if said else ""

    @action("nudge", fields=FIELDS["nudge"])
    def _act_nudge(self, state: GameState, action: dict):
        """ "Nudge": a Move roll to get in position, one contested roll against each driver (a
        rig's side takes several with one roll), 1 damage to both less armour; each nudged car
        set down by the attacker within the sections won (`push_to`...), a car it is pushed
        `into` rolls to keep control or is knocked a section (`chain_to`), and on a success the
        attacker may finish its Move (`then_to`). The cars are set down on the table before the
        action is sent; the rules judge them from where they stood."""
        action = self._spread_targets(action)
        w = self._acting(state, action, "D")
        v = state.vehicle(w.vehicle)
        if w.seat != "D":
            raise RulesError(f"{w.label()} is not driving (Change into the driver's seat first)")
        targets = self._targets(state, v, action)
        fields = ["push_to"] + [push for _, push in self.MORE_TARGETS]
        pushes = {t.marker: (self._pose(action[f]) if action.get(f) is not None else None)
                  for t, f in zip(targets, fields)}
        chain = self._chain(state, action)
        then_to = self._pose(action["then_to"]) if action.get("then_to") is not None else None
        # Everyone judged from where the rules last left them, not where they were set down.
        for t in targets + [c for c, _ in chain]:
            self._put_back(state, t)
        for t in targets:
            self._within_reach(state, v, t, "nudge")
            push = pushes[t.marker]
            if push is not None and not self._moved(t.pose, push):
                pushes[t.marker] = None
        first = targets[0]
        if chain:
            self._check_chain(state, v, targets, first, pushes[first.marker], chain)
        for t in targets:
            push = pushes[t.marker]
            if push is not None:
                judged = self.judge_move(state, t.marker, push, D.NUDGE_MAX_SECTIONS, ignore=(v.marker,))
                if not judged["legal"]:
                    raise RulesError(f"the {t.name} cannot be nudged there even with three sections: "
                                     f"{'; '.join(judged['reasons'])}")
        events, rolls = [], state.thrown
        result = {"act": "nudge", "vehicle": v.marker, "target": first.marker,
                  "targets": [t.marker for t in targets], "rolls": rolls, "events": events}
        # The cars the players set down before sending (the targets where they pushed them, the
        # cars of the chain where they knocked them, the nudger where it carried on): each is
        # either taken there by the rules (placed) or put back where it stood at the end.
        set_down = {t.marker: pushes[t.marker] for t in targets}
        set_down.update({c.marker: at for c, at in chain if at is not None and self._moved(c.pose, at)})
        if then_to is not None and self._moved(v.pose, then_to):
            set_down[v.marker] = then_to
        taken: set[int] = set()
        move = yield from self._skill(state, w, f"Move into position to nudge the {', '.join(t.name for t in targets)}")
        self._done(w)
        if move.face == D.FUMBLE:
            result["result"] = "lost control getting in position"
            yield from self._lost_control(state, v, events)
            taken.add(v.marker)         # put where it veered, not back
            yield from self._nudge_leftovers(state, set_down, taken, "the nudger lost control getting in position")
            return result
        if move.total < D.MOVE_SUCCESS:
            result["result"] = "could not get in position"
            yield from self._nudge_leftovers(state, set_down, taken, "the nudger could not get in position")
            return result
        # "declare how they are Nudging them ... then make a Contested skill roll": each target's
        # sections, declared (the attacker is not moved for a Nudge, so a declaration is taken as
        # said) or measured from where the cars stand, before the rolls.
        met = []
        for n, t in enumerate(targets):
            met.append((yield from self._sections(state, v, t, self._declared(action, n), "nudge")))
        result["sections"] = [{"target": t.marker, "with": m[0], "at": m[1], "how": m[2]}
                              for t, m in zip(targets, met)]
        contests = []                       # (target, attacker's roll, defender's roll)
        shared = None
        if len(targets) > 1:
            shared = yield from self._skill(state, w, f"Nudge (sideswiping {len(targets)} vehicles)")
        for t in targets:
            d_driver = state.in_seat(t.marker, "D")
            if d_driver is None:
                d_roll = yield from self._throw(state, "d6", f"resist the nudge (the driverless {t.name})")
                a_roll = shared or (yield from self._skill(state, w, f"Nudge the {t.name}"))
            elif shared is not None:
                a_roll, d_roll = shared, (yield from self._skill(state, d_driver, f"Nudge the {t.name} (defender)"))
            else:
                a_roll, d_roll, _ = yield from self._contested(state, w, d_driver, f"Nudge the {t.name}")
            contests.append((t, a_roll, d_roll))
        nudged = []
        touching: dict[int, set[int]] = {}     # what a target pushed after the rolls touched before
        for n, (t, a_roll, d_roll) in enumerate(contests):
            hit_with, hit_at, how = met[n]
            events.append(f"the {v.name}'s {hit_with} meets the {t.name}'s {hit_at}" + self._how_words(how)
                          + "".join(f"; the {car.name}'s {face} armour takes the 1 off" for car, face in
                                    ((v, hit_with), (t, hit_at)) if car.armour(face)))
            # "Both vehicles take 1 damage point (less any relevant armor)"
            yield from self._hurt_vehicle(state, v, D.NUDGE_DAMAGE - v.armour(hit_with), None, events)
            yield from self._hurt_vehicle(state, t, D.NUDGE_DAMAGE - t.armour(hit_at), None, events)
            margin = a_roll.total - d_roll.total
            if margin <= 0 or not t.in_play:
                events.append(f"the {t.name} holds its line")
                continue
            sections = min(margin, D.NUDGE_MAX_SECTIONS)
            nudged.append(t)
            # The margin won, per target; `sections` stays the faces that met (as for a Ram).
            result.setdefault("sections_won", {})[str(t.marker)] = sections
            said = f"{sections} section{'s' if sections > 1 else ''}"
            events.append(f"the {t.name} is nudged up to {said}")
            push = pushes[t.marker]
            beyond = None
            if push is not None:
                judged = self.judge_move(state, t.marker, push, sections, ignore=(v.marker,))
                if judged["legal"]:
                    # Set down now: a car it was pushed into is judged against where it stands.
                    yield from self.place(state, t, push, f"pushed by the {v.name}'s nudge (up to {said})")
                    taken.add(t.marker)
                    self._forget_rams(state, t)
                else:
                    # Set down before the rolls beyond what they won: the attacker chooses again.
                    beyond = f"set down beyond its {said} ({'; '.join(judged['reasons'])})"
                    events.append(f"the {t.name} was {beyond}")
                    pushes[t.marker] = push = None
            if push is None:
                # "On a successful Nudge the attacking player moves the defending player's vehicle
                # based on their degree of success" ("Nudge"): after the rolls, where they choose
                # within the sections won (a push set down before Resolve, and within them, is taken above).
                stood = t.pose
                touching[t.marker] = self._touching(state, t, v)
                regions = self.move_regions(state, t.marker, sections, ignore=(v.marker,))
                area = [poly for r in regions.values() for poly in polygon_rings(r.polygon)]

                def judge(pose: Pose, t=t, sections=sections, stood=stood) -> str | None:
                    if not self._moved(stood, pose):
                        return None                 # pushed nowhere: it stays
                    judged = self.judge_move(state, t.marker, pose, sections, ignore=(v.marker,))
                    return None if judged["legal"] else "; ".join(judged["reasons"])

                now = yield from self.place_chosen(
                    state, t, (f"{beyond}; " if beyond else "")
                    + f"nudged by the {v.name}: push it up to {said}, its front bumper in the shaded area "
                      f"and pointing the pack's way (or leave it where it stands)", judge, area=area)
                if self._moved(stood, now):
                    taken.add(t.marker)
                    self._forget_rams(state, t)
                    pushes[t.marker] = now
                    events.append(f"the {v.name}'s player pushes the {t.name} {self._moved_words(stood, now)}")
                else:
                    events.append(f"the {v.name}'s player leaves the {t.name} where it stood")
            yield from self._clingers(state, t, "nudged", events)
        if chain and first in nudged and pushes[first.marker] is not None:
            striker = first
            for struck, knocked_to in chain:
                # Each link only once the one before was knocked on into it, and as it stands now
                # it was put there (the camera's pose): against the car it strikes.
                gap = closest_distance(striker.footprint(), struck.footprint())
                if gap.within(CONTACT_MM, "contact").outcome == "out":
                    events.append(f"the {striker.name} was put down {gap.distance_mm / MM_PER_IN:.2f} in clear of "
                                  f"the {struck.name}: the chain stops there")
                    break
                if not (yield from self._nudged_into(state, striker, struck, knocked_to, events)):
                    break
                taken.add(struck.marker)
                striker = struck
        elif not chain and first in nudged and first.marker in touching and pushes[first.marker] is not None:
            # Pushed after the rolls against a vehicle it did not touch before: "An attacker can
            # nudge a vehicle into another vehicle", each struck in turn ("daisy-chaining").
            striker, before, seen = first, touching[first.marker], {v.marker, first.marker}
            while True:
                struck = next((state.vehicle(m) for m in sorted(self._touching(state, striker, v) - before - seen)), None)
                if struck is None:
                    break
                seen.add(struck.marker)
                before = self._touching(state, struck, v)
                events.append(f"the {striker.name} is pushed into the {struck.name}")
                if not (yield from self._nudged_into(state, striker, struck, None, events)):
                    break
                taken.add(struck.marker)
                striker = struck
        result["result"] = "nudged" if nudged else "the nudge fails"
        if v.in_play:
            yield from self._clingers(state, v, "nudging", events)
        if then_to is not None and v.in_play and self._moved(v.pose, then_to):
            # "if successful, continue to move in the original template" ("Move")
            judged = self.judge_move(state, v.marker, then_to) if nudged else None
            if judged is not None and judged["legal"]:
                yield from self.place(state, v, then_to, "carries on its Move after the nudge")
                taken.add(v.marker)
                self._forget_rams(state, v)
                events.append(f"the {v.name} carries on its Move")
            else:
                events.append(f"the {v.name} stays where it stood: "
                              + ("its Move goes on only after a successful nudge" if judged is None
                                 else "; ".join(judged["reasons"])) + "; put it back")
            result["then"] = judged
        yield from self._nudge_leftovers(state, set_down, taken, "not moved by the nudge")
        for veh, roll in [(v, contests[0][1])] + [(t, d) for t, _, d in contests]:
            if roll.face == D.FUMBLE and veh.in_play:
                yield from self._lost_control(state, veh, events)
        return result

    def _touching(self, state: GameState, v: Vehicle, *besides: Vehicle) -> set[int]:
        """The vehicles in play `v` touches now (within contact), other than `besides`."""
        fp, skip = v.footprint(), {v.marker, *(b.marker for b in besides)}
        return {o.marker for o in state.vehicles.values()
                if o.in_play and o.pose is not None and o.marker not in skip
                and closest_distance(fp, o.footprint()).within(CONTACT_MM, "contact").outcome != "out"}

    @staticmethod
    def _moved_words(stood: Pose, now: Pose) -> str:
        """A push in players' words: "2.4 in forwards" (along the car as it stood)."""
        dx, dy = now.x_mm - stood.x_mm, now.y_mm - stood.y_mm
        h = math.radians(stood.heading_deg)
        along = dx * math.cos(h) + dy * math.sin(h)
        return f"{math.hypot(dx, dy) / MM_PER_IN:.1f} in {'forwards' if along >= 0 else 'back'}"

    def _nudge_leftovers(self, state: GameState, set_down: dict, taken: set, why: str):
        """Every car set down by hand for a nudge that the dice did not take there: put back where
        it stood (a nudged car beyond its sections, a car of the chain that kept control or was
        never reached, the nudger's Move after a failed nudge)."""
        for marker, at in set_down.items():
            if at is not None and marker not in taken:
                yield from self._put_back_on_table(state, state.vehicles[marker], why)

    def _chain(self, state: GameState, action: dict) -> list[tuple[Vehicle, Pose | None]]:
        """The nudge's chain as sent: each vehicle struck in turn, with where it was knocked to
        (None: left where it stood). A link needs the one before it knocked somewhere."""
        chain: list[tuple[Vehicle, Pose | None]] = []
        for k, (name, pose_field) in enumerate(self.CHAIN_LINKS):
            if action.get(name) is None:
                continue
            if k and (len(chain) < k or chain[-1][1] is None):
                before = self.CHAIN_LINKS[k - 1]
                raise RulesError(f"{name}: a vehicle is knocked on into another only after the one before it "
                                 f"('{before[0]}') is knocked somewhere ('{before[1]}')")
            struck = state.vehicle(action[name])
            at = self._pose(action[pose_field]) if action.get(pose_field) is not None else None
            chain.append((struck, at))
        return chain

    def _check_chain(self, state: GameState, v: Vehicle, targets: list, first: Vehicle, first_to: Pose | None,
                     chain: list) -> None:
        """Checked before any dice: every vehicle in the chain is another vehicle in play, and each
        striker is set down against the vehicle it strikes ("An attacker can nudge a vehicle into
        another vehicle"; a knocked vehicle may strike the next)."""
        seen = {v.marker, *(t.marker for t in targets)}
        striker, at = first, first_to
        for struck, knocked_to in chain:
            if struck.marker in seen or not struck.in_play:
                raise RulesError("a nudge is pushed into another vehicle in play, not the nudger, a target "
                                 "or a vehicle already in the chain")
            seen.add(struck.marker)
            if at is not None and not self._moved(striker.pose, at):
                at = None
            gap = None if at is None else closest_distance(striker.footprint().at(at), struck.footprint())
            if gap is None or gap.within(CONTACT_MM, "contact").outcome == "out":
                verb = "push" if striker is first else "knock"
                raise RulesError(f"to {verb} the {striker.name} into the {struck.name}, set the {striker.name} "
                                 f"down against it" + ("" if gap is None else
                                                       f" (it is {gap.distance_mm / MM_PER_IN:.2f} in from it)"))
            striker, at = struck, knocked_to

    def _nudged_into(self, state, attacker: Vehicle, struck: Vehicle, chain_to: Pose | None, events: list):
        """ "An attacker can nudge a vehicle into another vehicle": it rolls a Move to keep control;
        failing, it takes 1 and is moved a section "by the player of the vehicle that struck them":
        the striker's player, the pushed car's (not the nudger's, unless they are one player)
        (`chain_to`, where that player set it down). True when it was knocked and set down there (it may strike
        the next vehicle of the chain)."""
        driver = state.in_seat(struck.marker, "D")
        if driver is None:
            face = yield from self._d(state, "d6", f"keep control (the driverless {struck.name})")
            ok = face >= D.MOVE_SUCCESS
        else:
            roll = yield from self._skill(state, driver, "Move to keep control after being struck")
            ok = roll.total >= D.MOVE_SUCCESS
        if ok:
            events.append(f"the {struck.name} keeps control")
            return False
        events.append(f"the {struck.name} is knocked a section aside, to be moved by {attacker.controller} "
                      f"(the {attacker.name}'s player: the vehicle that struck it)")
        yield from self._hurt_vehicle(state, struck, D.NUDGED_INTO_DAMAGE, None, events)
        if chain_to is None and struck.in_play:
            # "moved in a one template section by the player of the vehicle that struck them"
            stood = struck.pose
            regions = self.move_regions(state, struck.marker, 1, ignore=(attacker.marker,))

            def judge(pose: Pose) -> str | None:
                if not self._moved(stood, pose):
                    return None
                judged = self.judge_move(state, struck.marker, pose, 1, ignore=(attacker.marker,))
                return None if judged["legal"] else "; ".join(judged["reasons"])

            now = yield from self.place_chosen(
                state, struck, f"knocked by the {attacker.name}: {attacker.controller}, the {attacker.name}'s "
                               f"player, moves it up to one section, its front bumper in the shaded area (or leaves "
                               f"it where it stands)",
                judge, area=[poly for r in regions.values() for poly in polygon_rings(r.polygon)])
            if self._moved(stood, now):
                self._forget_rams(state, struck)
                events.append(f"the {struck.name} is knocked {self._moved_words(stood, now)}")
                return True
            return False
        if chain_to is not None and struck.in_play and self._moved(struck.pose, chain_to):
            judged = self.judge_move(state, struck.marker, chain_to, 1, ignore=(attacker.marker,))
            if judged["legal"]:
                # Set down before the next link: the car it strikes is judged from where it stands.
                yield from self.place(state, struck, chain_to, f"knocked a section by the {attacker.name}")
                self._forget_rams(state, struck)
                return True
            events.append(f"the {struck.name} was set down beyond one section ({'; '.join(judged['reasons'])}): "
                          f"it stays where it stood; put it back")
        return False

    def lost_control_destination(self, state: GameState, v: Vehicle, box: int) -> np.ndarray:
        fp = v.footprint()
        # "place the move template centered over the vehicle and roll a 1d6": the whole
        # 9" template with its six boxes, whatever the class (a rig's 6" is its Move's limit).
        template = MoveTemplate.centred_on(fp, inches(D.TEMPLATE_LENGTH_IN))
        n = box if self.option("box_one") == "front_right" else {1: 3, 2: 2, 3: 1, 4: 6, 5: 5, 6: 4}[box]
        poly = template.box(n)
        pts = np.asarray(poly.exterior.coords)[:-1]
        mode = self.option("lost_control_destination")
        if mode == "box_centre":
            return np.asarray(poly.centroid.coords[0])
        if mode == "outer_edge_middle":
            lefts = [fp.pose.to_local(p)[1] for p in pts]
            side = max(lefts) if n > 3 else min(lefts)
            outer = [p for p, l in zip(pts, lefts) if abs(l - side) < 1e-6]
            return np.mean(outer, axis=0)
        dist = np.linalg.norm(pts - fp.centre, axis=1)
        far = pts[dist > dist.max() - 1e-6]
        return far.mean(axis=0)

    def _lost_control(self, state: GameState, v: Vehicle, events: list):
        """ "Lost Control": the template centred over the car, a d6 for the box, the car to its
        furthest edge; a vehicle in the way is rammed at -1."""
        if v.pose is None or not v.in_play:
            return
        box = yield from self._d(state, "d6", f"Lost Control: which way the {v.name} veers", v.name)
        target_xy = self.lost_control_destination(state, v, box)
        start = v.pose
        shift = target_xy - start.xy
        end = Pose(float(target_xy[0]), float(target_xy[1]), state.pack_heading_deg, start.sigma_mm, start.sigma_deg)
        fp = v.footprint()
        hit_vehicle, t_hit = None, 1.0
        for other in self._others(state, v.marker):
            for k in range(1, 41):       # the first point along the way where it meets another vehicle
                t = k / 40
                moved = fp.at(Pose(start.x_mm + shift[0] * t, start.y_mm + shift[1] * t, start.heading_deg))
                if shapely.intersects(moved.polygon, other.polygon):
                    if t < t_hit:
                        hit_vehicle, t_hit = other, (k - 1) / 40
                    break
        if hit_vehicle is not None:
            end = Pose(start.x_mm + shift[0] * t_hit, start.y_mm + shift[1] * t_hit, state.pack_heading_deg,
                       start.sigma_mm, start.sigma_deg)
        way = _shift_words(start, end)
        stopped = f", up against the {hit_vehicle.name}" if hit_vehicle is not None else ""
        if way == "no distance":        # it meets a car it already touches before it can veer
            way = "straight into it" if hit_vehicle is not None else "no distance"
        events.append(f"the {v.name} loses control: box {box}, veering {way}{stopped}")
        # Set down before any Ram it makes: the Ram reads where the two cars meet.
        yield from self.place(state, v, end, f"Lost Control: veers {way} (box {box}){stopped}")
        self._forget_rams(state, v)
        if hit_vehicle is not None:
            events.append(f"the {v.name} slews into the {hit_vehicle.name}")
            yield from self._ram(state, v, state.vehicles[hit_vehicle.id], D.LOST_CONTROL_RAM_PENALTY, events)

    def _unmanned(self, state: GameState, v: Vehicle, events: list):
        """ "Unmanned": back 1 section in a straight line; a vehicle met rams it at -1; 1-3 loses control.
        A vehicle is met only if the straight line back runs into it: one merely touching it (alongside,
        or ahead) is slid past, as a Move slides past a touching car (touching is not overlapping),
        and a graze within the camera's doubt is too close to call a meeting."""
        fp = v.footprint()
        back = inches(D.UNMANNED_BACK_IN)
        path = shapely.convex_hull(shapely.union(fp.polygon, fp.at(v.pose.moved(-back)).polygon))
        hit = None
        for other in self._others(state, v.marker):
            if not shapely.intersects(path, other.polygon):
                continue
            inside = shapely.intersection(path, other.polygon)
            depth = 0.0 if inside.area <= 0 else float(shapely.maximum_inscribed_circle(inside).length)
            doubt = CALL_SIGMAS * math.hypot(fp.pose.axis_sigma_mm, other.pose.axis_sigma_mm)
            if depth > max(doubt, 1e-6):
                d = closest_distance(fp, other)
                if hit is None or d.distance_mm < hit[1]:
                    hit = (other, d.distance_mm)
        travel = back if hit is None else max(hit[1] - 0.5, 0.0)
        met = f", up against the {hit[0].name}" if hit is not None else ""
        events.append(f"the unmanned {v.name} drops back {travel / MM_PER_IN:.1f} in{met}")
        if travel > 0:
            yield from self.place(state, v, v.pose.moved(-travel),
                                  f"unmanned: drops back {travel / MM_PER_IN:.1f} in{met}")
            self._forget_rams(state, v)
        if hit is not None:
            other = state.vehicles[hit[0].id]
            if other.in_play and v.in_play:
                yield from self._ram(state, other, v, D.UNMANNED_RAM_PENALTY, events,
                                     mod_reason=f"ramming the unmanned {v.name}")
        if v.in_play:
            asked = f"does the unmanned {v.name} lose control (1-{D.UNMANNED_LOST_CONTROL_MAX}: it does)"
            face = yield from self._d(state, "d6", asked, v.name)
            lost = face <= D.UNMANNED_LOST_CONTROL_MAX
            events.append(f"the unmanned {v.name} {'loses control' if lost else 'keeps its line'} "
                          f"(a {face}; 1-{D.UNMANNED_LOST_CONTROL_MAX} loses it)")
            if lost:
                yield from self._lost_control(state, v, events)

    @action("shoot", fields=FIELDS["shoot"])
    def _act_shoot(self, state: GameState, action: dict):
        w = self._acting(state, action)
        v = state.vehicle(w.vehicle)
        weapon = next((x for x in v.weapons if x.seat == w.seat), None)
        if weapon is None:
            raise RulesError(f"{w.label()} is not in a gunner's seat")
        if weapon.jammed:
            raise RulesError(f"the {v.name}'s {weapon.mount} gun is jammed")
        target = state.vehicle(action["target"])
        if not target.in_play:
            raise RulesError(self._not_in_play(state, target))
        shooter, aimed = v.footprint(), target.footprint()
        # "within 2 template sections (6") of their vehicle", "in the 180 degree arc"
        dist = closest_distance(shooter, aimed)
        in_range = dist.within(inches(D.MACHINE_GUN_RANGE_IN), "range")
        arc = self._in_arc(shooter, aimed, weapon.mount)
        problems = []
        if in_range.outcome == "out":
            problems.append(f"the {target.name} is {dist.distance_mm / MM_PER_IN:.2f} in away (range 6 in)")
        if arc.outcome == "out":
            problems.append(f"the {target.name} is not in the {weapon.mount} gun's arc")
        if problems:
            raise RulesError(f"{w.label()} cannot shoot: {'; '.join(problems)}")
        # What is aimed at, checked with the rest before the gunner's action is spent or a die asked.
        aim = action.get("at", "vehicle")
        if aim in ("vehicle", "tractor", "trailer"):
            if aim != "vehicle" and target.cls != "rig":
                raise RulesError(f"the {target.name} is not a rig; aim at the vehicle")
            if aim != "vehicle" and target.decoupled:
                raise RulesError(f"the {target.name} has cut its trailer loose: it is all tractor; aim at the vehicle")
        else:
            victim = state.warrior(aim)
            if victim.vehicle != target.marker or victim.out:
                raise RulesError(f"{victim.label()} is not aboard the {target.name}")
        events, rolls = [], state.thrown
        result = {"act": "shoot", "vehicle": v.marker, "target": target.marker, "rolls": rolls, "events": events,
                  "range": in_range.to_json(), "arc": arc.to_json()}
        self._done(w)
        if aim in ("vehicle", "tractor", "trailer"):
            extra = (Modifier(D.SHOOT_RIG_PART_PENALTY, f"aiming at the {aim}"),) if aim != "vehicle" else ()
            roll = yield from self._skill(state, w, f"Shoot at the {target.name}", extra)
            if roll.face == D.FUMBLE:
                weapon.jammed = True
                result["result"] = "jammed"
                events.append(f"the {v.name}'s {weapon.mount} gun jams")
                return result
            if roll.total < D.SHOOT_HIT:
                result["result"] = "missed"
                return result
            die, plus = D.MACHINE_GUN_DAMAGE
            dmg = yield from self._d(state, die, f"machine gun damage to the {target.name}", plus=plus,
                                     why="a machine gun's 1d6+2")
            result["result"] = "hit"
            yield from self._hurt_vehicle(state, target, dmg, None if aim == "vehicle" else aim, events)
            crew = state.crew(target.marker)
            if self._bonus(roll) and crew and (yield from self._take_bonus(
                    w, f"a bonus 1d6 to one warrior inside the {target.name} (its side picks who)")):
                # "they can choose to do a bonus 1d6 damage to one warrior inside (defender chooses who)"
                picked = yield ChoiceRequest(
                    target.controller, f"who inside the {target.name} takes the bonus 1d6 (bullets and shrapnel)",
                    tuple({"value": c.id, "label": c.label() + (f", in {seat_words(c.seat)}" if c.seat else ", clinging on")}
                          for c in crew), target.name)
                chosen = state.warrior(picked)
                result["bonus_to"] = chosen.id
                die, plus = D.SHOOT_VEHICLE_BONUS_WARRIOR
                bonus = yield from self._d(state, die, "bonus damage inside the vehicle", chosen.label(), plus,
                                           "the bonus 1d6")
                yield from self._wound(state, chosen, bonus, events)
            return result
        a, d, won = yield from self._contested(state, w, victim, f"Shoot at {victim.label()}")
        if a.face == D.FUMBLE:
            weapon.jammed = True
            result["result"] = "jammed"
            events.append(f"the {v.name}'s {weapon.mount} gun jams")
            return result
        if won:
            die, plus = D.MACHINE_GUN_DAMAGE
            dmg = yield from self._d(state, die, f"machine gun damage to {victim.label()}", plus=plus,
                                     why="a machine gun's 1d6+2")
            yield from self._wound(state, victim, dmg, events)
            result["result"] = "hit"
            if self._bonus(a) and (yield from self._take_bonus(w, f"also 1d6-1 bonus damage to the {target.name}")):
                die, plus = D.SHOOT_WARRIOR_BONUS_VEHICLE
                extra = yield from self._d(state, die, f"bonus damage to the {target.name}", plus=plus,
                                           why="the bonus is 1d6-1")
                if extra <= 0:
                    # "1d6-1 bonus damage": a 1 comes to 0, and that is said, not left out.
                    events.append(f"the bonus to the {target.name} comes to 0 (a 1 on the die, -1): no damage")
                yield from self._hurt_vehicle(state, target, extra, None, events)
        else:
            result["result"] = "missed"
        return result

    def _take_bonus(self, gunner: Warrior, what: str):
        """ "If a Gunner rolls the maximum ... they can choose to": the gunner's player says."""
        said = yield ChoiceRequest(gunner.player, f"whether to do {what}",
                                   ({"value": "yes", "label": f"yes: {what}"}, {"value": "no", "label": "no"}),
                                   gunner.label())
        return said == "yes"

    def _bonus(self, roll: Roll) -> bool:
        if self.option("machine_gun_both_on") == "six_or_more":
            return roll.face >= D.SIX_OR_MORE
        return roll.natural_max

    def _in_arc(self, shooter: Footprint, target: Footprint, mount: str):
        side = {"front": FRONT, "rear": REAR, "left": LEFT, "right": RIGHT}[mount]
        verdict = in_half_plane_arc(shooter, target, side).verdict
        if self.option("arc_edge") == "bumper_line" and side in (FRONT, REAR):
            from ..geometry import judge
            offset = shooter.length_mm / 2
            return judge(verdict.what, verdict.value_mm - offset, 0.0, verdict.sigma_mm, at_most=False)
        return verdict

    def board_gap(self, a: Footprint, b: Footprint):
        """ "A warrior can Board any vehicle within 1" of their vehicle" (option board_touching):
        the gap between the two footprints and its verdict against the reach. The Board, the
        leap from a falling trailer and the page's list of vehicles to board all ask here."""
        d = closest_distance(a, b)
        reach = 0.0 if self.option("board_touching") == "in_contact_only" else inches(D.BOARD_RANGE_IN)
        return d, d.within(reach, "gap")

    def attack_refusal(self, state: GameState, w: Warrior, victim: Warrior) -> str | None:
        """Why `w` cannot Attack `victim` where they stand ("Attack"), or None: the Attack and the
        page's list of whom each warrior can attack both ask here. A hero's pistol reaches any
        vehicle within 3 in; fodder (or a hero whose pistol is jammed) fight hand to hand, on
        the same vehicle only, and not between a rig's tractor and trailer."""
        if victim.out:
            return f"{victim.label()} is already out of the fight"
        if victim.player == w.player:
            return f"{victim.label()} is on {w.player}'s own side"
        if victim.vehicle is None or not state.vehicle(victim.vehicle).in_play:
            return (f"{victim.label()} is on a vehicle out of play (a wreck is removed from the play "
                    f'space, {D.RULEBOOK}, "Destroyed!")')
        if w.kind == "hero" and not w.jammed:
            if victim.vehicle != w.vehicle:
                d = closest_distance(state.vehicle(w.vehicle).footprint(), state.vehicle(victim.vehicle).footprint())
                if d.within(inches(D.HERO_RANGE_IN), "pistol range").outcome == "out":
                    return f"{victim.label()} is {d.distance_mm / MM_PER_IN:.2f} in away (pistol range 3 in)"
            return None
        if victim.vehicle != w.vehicle:
            return f"{w.label()} fights hand to hand: {victim.label()} is on another vehicle"
        here = state.vehicle(w.vehicle)
        parts = dict(here.seats)
        if here.cls == "rig" and w.seat in parts and victim.seat in parts and parts[w.seat] != parts[victim.seat]:
            # "Moving between a Rig's tractor and trailer requires a Board roll": they are apart.
            return (f"{w.label()} fights hand to hand: {victim.label()} is on the rig's "
                    f"{parts[victim.seat]}, he on its {parts[w.seat]}")
        return None

    @action("board", fields=FIELDS["board"])
    def _act_board(self, state: GameState, action: dict):
        w = self._acting(state, action)
        source = state.vehicle(w.vehicle)
        target = state.vehicle(action["target"])
        desperate = bool(action.get("desperate"))
        if desperate and not source.destroyed:
            raise RulesError("a desperate Board is for warriors on a destroyed vehicle")
        if source.destroyed and not desperate:
            raise RulesError(f"{w.label()} is on the {source.name}'s wreck: only a desperate leap (at -1) is left")
        if desperate and source.marker not in state.wrecks and self.option("wreck_leap_window") != "any_time":
            raise RulesError(f"the {source.name}'s wreck is gone from the play space; the time to leap has passed "
                             f'({D.RULEBOOK}, "Destroyed!"; option wreck_leap_window)')
        if desperate and w.leapt:
            # "Any Warriors on it can make a Board roll at -1 to make a desperate leap": one roll.
            raise RulesError(f"{w.label()} has made their desperate leap from the {source.name}'s wreck already; "
                             f'it failed, and there is no second ({D.RULEBOOK}, "Destroyed!")')
        if not target.in_play:
            raise RulesError(self._not_in_play(state, target))
        events, rolls = [], state.thrown
        result = {"act": "board", "warrior": w.id, "target": target.marker, "rolls": rolls, "events": events}
        moving_within_rig = target.marker == source.marker
        if not moving_within_rig:
            d, verdict = self.board_gap(source.footprint(), target.footprint())
            result["range"] = verdict.to_json()
            if verdict.outcome == "out":
                raise RulesError(f"the {target.name} is {d.distance_mm / MM_PER_IN:.2f} in away; Board reaches 1 in")
        elif source.cls != "rig" or desperate or source.decoupled:
            raise RulesError("boarding your own vehicle is only for moving between a rig's tractor and trailer"
                             + (" (this one's trailer is gone)" if source.decoupled else ""))
        seat = action.get("seat")
        if seat is not None and (seat not in [s for s, _ in target.seats] or state.in_seat(target.marker, seat) is not None):
            raise RulesError(f"{seat_words(seat)} on the {target.name} is not free")
        if moving_within_rig and seat is not None and w.seat is not None \
                and dict(target.seats)[seat] == dict(target.seats)[w.seat]:
            raise RulesError(f"{seat_words(seat)} is on the {dict(target.seats)[seat]} with {w.label()}: that is a Change")
        extra = (Modifier(D.DESTROYED_BOARD_PENALTY, "a desperate leap from the wreck"),) if desperate else ()
        roll = yield from self._skill(state, w, f"Board the {target.name}", extra)
        if desperate:
            # Allowed "regardless of if the warriors have acted this round"; one who had not
            # has now used their action on it (no second action aboard the new vehicle).
            w.leapt, w.acted = True, True
        else:
            self._done(w)
        if roll.total >= D.BOARD_SUCCESS:
            w.vehicle, w.seat = target.marker, seat
            events.append(f"{w.label()} boards the {target.name}" + (f" into {seat_words(seat)}" if seat else ", clinging on"))
            result["result"] = "boarded"
        elif roll.total >= D.HOLD_ON:
            events.append(f"{w.label()} stays aboard the {source.name}")
            result["result"] = "stayed"
        else:
            w.out = True
            events.append(f"{w.label()} falls between the vehicles")
            result["result"] = "fell"
        return result

    @action("change", fields=FIELDS["change"])
    def _act_change(self, state: GameState, action: dict):
        w = self._acting(state, action)
        seat = action["seat"]
        v = state.vehicle(w.vehicle)
        if seat not in [s for s, _ in v.seats]:
            raise RulesError(f"the {v.name} has no {seat_words(seat)} (its seats: {', '.join(seat_words(s) for s, _ in v.seats)})")
        if state.in_seat(v.marker, seat) is not None:
            raise RulesError(f"{seat_words(seat)} on the {v.name} is taken")
        if v.cls == "rig" and w.seat is not None:
            parts = dict(v.seats)
            if parts[seat] != parts[w.seat]:
                raise RulesError("moving between a rig's tractor and trailer needs a Board roll")
        w.seat = seat
        self._done(w, change=True)
        return {"act": "change", "warrior": w.id, "seat": seat, "rolls": [],
                "events": [f"{w.label()} changes to {seat_words(seat)}; one more action at -1"], "result": "changed"}

    @action("attack", fields=FIELDS["attack"])
    def _act_attack(self, state: GameState, action: dict):
        w = self._acting(state, action)
        victim = state.warrior(action["target"])
        refusal = self.attack_refusal(state, w, victim)
        if refusal is not None:
            raise RulesError(refusal)
        events, rolls = [], state.thrown
        ranged = w.kind == "hero" and not w.jammed
        a, d, won = yield from self._contested(state, w, victim, f"Attack {victim.label()}")
        self._done(w)
        result = {"act": "attack", "warrior": w.id, "target": victim.id, "rolls": rolls, "events": events}
        if ranged and a.face == D.FUMBLE:
            w.jammed = True
            events.append(f"{w.label()}'s pistol jams")
            result["result"] = "jammed"
            return result
        if won:
            die, plus = D.HERO_RANGED if ranged else D.FODDER_MELEE
            dmg = yield from self._d(state, die, f"damage to {victim.label()}", plus=plus,
                                     why="a pistol's 1d6+1" if plus else "")
            yield from self._wound(state, victim, dmg, events)
            result["result"] = "hit"
        else:
            result["result"] = "parried"
        return result

    @action("unjam", fields=FIELDS["unjam"])
    def _act_unjam(self, state: GameState, action: dict):
        w = self._acting(state, action)
        v = state.vehicle(w.vehicle)
        if w.acted and state.active is not None:
            # "spend a turn doing nothing but unjamming it" ("Attack"); "anyone in the vehicle who
            # has not yet acted can perform the unjam action" ("Shoot"): not a second action.
            raise RulesError(f"{w.label()} has acted this turn already: unjamming takes a warrior's whole turn")
        what = action.get("weapon", "pistol")
        if what == "pistol":
            if not w.jammed:
                raise RulesError(f"{w.label()}'s pistol is not jammed")
            w.jammed = False
        else:
            gun = next((g for g in v.weapons if g.mount == what), None)
            if gun is None or not gun.jammed:
                raise RulesError(f"the {v.name} has no jammed {what} gun")
            gun.jammed = False
        self._done(w)
        return {"act": "unjam", "rolls": [], "events": [f"{w.label()} clears the jam"], "result": "unjammed"}

    @action("decouple", fields=FIELDS["decouple"])
    def _act_decouple(self, state: GameState, action: dict):
        """ "Destroyed!": the driver's uncontested roll; on a success "the tractor continues on and
        the trailer falls back using the standard Destroyed rules above": its guns and seats go
        with it, each warrior on it may make one desperate leap (a Board at -1) to a vehicle
        close enough (the tractor too) or is gone with it, the drivers in line behind veer, and a
        buggy hidden in it tries to get out at -1. From then on the rig is its tractor."""
        w = self._acting(state, action, "D")
        v = state.vehicle(w.vehicle)
        if v.cls != "rig" or v.hp["trailer"] > 0 or v.decoupled:
            raise RulesError(f"the {v.name} has no dead trailer to decouple")
        roll = yield from self._skill(state, w, "decouple the trailer")
        self._done(w)
        events, rolls = [], state.thrown
        ok = roll.total >= int(self.option("decouple_success"))
        result = {"act": "decouple", "rolls": rolls, "events": events, "result": "decoupled" if ok else "still hitched"}
        if not ok:
            return result
        v.decoupled = True
        trailer = {s for s, part in v.seats if part == "trailer"}
        lost = [g.mount for g in v.weapons if g.seat in trailer]
        riders = [x for x in state.crew(v.marker) if x.seat in trailer]
        v.weapons = [g for g in v.weapons if g.seat not in trailer]
        v.seats = [(s, part) for s, part in v.seats if part != "trailer"]
        events.append(f"the {v.name} cuts its trailer loose; the trailer falls back as a wreck"
                      + (f" with its {', '.join(lost)} gun{'s' if len(lost) > 1 else ''}" if lost else ""))
        fp = v.footprint() if v.pose is not None else None
        for x in riders:
            yield from self._leap_from_trailer(state, v, fp, x, events)
        if fp is not None:
            yield from self._veer_behind(state, fp, f"{v.name}'s trailer", (v.marker,), events)
        if v.hidden_buggy is not None:
            yield from self._hidden_buggy_escapes(state, v, events)
        return result

    def _leap_from_trailer(self, state: GameState, rig: Vehicle, fp: Footprint | None, x: Warrior,
                           events: list):
        """A warrior on the falling trailer: their player chooses a vehicle within 1 in of it (the
        rig's own tractor among them) or to stay; a Board roll at -1."""
        near = []
        if fp is not None:
            for o in state.vehicles.values():
                if not o.in_play or o.pose is None:
                    continue
                if o.marker == rig.marker:
                    near.append({"value": o.marker, "label": f"the {o.name}'s tractor"})
                    continue
                if self.board_gap(fp, o.footprint())[1].outcome != "out":
                    near.append({"value": o.marker, "label": f"the {o.name}"})
        picked = yield ChoiceRequest(
            x.player, f"where {x.label()} leaps from the falling trailer (a Board at -1), or to stay on it",
            tuple(near) + ({"value": "stay", "label": "stays on the trailer: out of the fight"},), rig.name)
        x.leapt, x.acted = True, True
        if picked == "stay":
            x.out = True
            events.append(f"{x.label()} goes down with the trailer")
            return
        target = state.vehicle(picked)
        extra = (Modifier(D.DESTROYED_BOARD_PENALTY, "a desperate leap from the wreck"),)
        roll = yield from self._skill(state, x, f"leap from the trailer to the {target.name}", extra)
        if roll.total >= D.BOARD_SUCCESS:
            x.vehicle, x.seat = target.marker, None
            events.append(f"{x.label()} leaps onto the {target.name}, clinging on")
        else:
            x.out = True
            events.append(f"{x.label()} " + ("stays on the trailer and is left behind with it"
                                              if roll.total >= D.HOLD_ON else "falls between the vehicles"))

    @action("deploy", fields=FIELDS["deploy"])
    def _act_deploy(self, state: GameState, action: dict):
        rig = state.vehicle(action["vehicle"])
        if rig.hidden_buggy is None:
            raise RulesError(f"the {rig.name} hides no buggy")
        buggy = state.vehicles[rig.hidden_buggy]
        driver = state.in_seat(buggy.marker, "D")
        if driver is None:
            raise RulesError(f"the {buggy.name} has no driver to drive it out")
        if driver.acted and state.round > 0:
            # "can be deployed ... at any time", by its driver's Drive roll: one try a round (the
            # driver's action), not a roll again and again until it comes out.
            raise RulesError(f"the {buggy.name}'s driver has tried (or acted) this round already; "
                             f"the next try is next round")
        # Where it comes out (read before the dice: a bad pose is refused with nothing rolled):
        # where the players put it on the table, else just behind the rig.
        to = self._pose(action["to"]) if action.get("to") is not None else None
        if to is None and rig.pose is None:
            raise RulesError(f"the {rig.name} is not on the table: put the {buggy.name} where it comes out")
        extra = (Modifier(D.HIDDEN_BUGGY_DESTROYED_PENALTY, "the rig is wrecked"),) if rig.destroyed else ()
        roll = yield from self._skill(state, driver, "Drive the hidden buggy out", extra)
        driver.acted = True
        events = []
        if roll.total >= D.MOVE_SUCCESS:
            buggy.hidden_in = None
            rig.hidden_buggy = None
            events.append(f"the {buggy.name} bursts out of the {rig.name}")
            yield from self.place(state, buggy, to if to is not None else self._behind(rig, buggy),
                                  f"bursts out of the {rig.name}" + ("" if to is not None else ": just behind it"))
            result = "deployed"
        elif rig.destroyed:
            buggy.destroyed, buggy.hidden_in = True, None
            rig.hidden_buggy = None
            for w in state.crew(buggy.marker):
                w.out = True
            events.append(f"the {buggy.name} goes down with the {rig.name}")
            result = "destroyed with the rig"
        else:
            result = "still hidden"
            if to is not None:
                events.append(f"the {buggy.name} stays hidden in the {rig.name}: take it off the table")
        return {"act": "deploy", "rolls": state.thrown, "events": events, "result": result}

    # --- the play space --------------------------------------------------------------

    def _edges(self, state: GameState, events: list):
        """ "Move": at the front edge, everything moves back to centre the play; at the back edge,
        a vehicle waits there, its next turn a Move to rejoin."""
        w, h = state.table_mm
        t = math.radians(state.pack_heading_deg)
        ahead = np.array([math.cos(t), math.sin(t)])
        centre = np.array([w / 2, h / 2])
        reach = abs(ahead[0]) * w / 2 + abs(ahead[1]) * h / 2
        cars = [v for v in state.vehicles.values() if v.in_play and v.pose is not None]
        front = max((float((v.footprint().corners - centre).dot(ahead).max()) for v in cars), default=-1e9)
        if front >= reach:
            # Centre the pack along the direction of travel.
            along = [float((v.pose.xy - centre) @ ahead) for v in cars]
            shift = (max(along) + min(along)) / 2
            said = f"a vehicle reached the front edge: every vehicle moves back {shift / MM_PER_IN:.1f} in"
            events.append(f"a vehicle reached the front edge: move every vehicle back {shift / MM_PER_IN:.1f} in")
            for v in cars:
                xy = v.pose.xy - shift * ahead
                yield from self.place(state, v, Pose(float(xy[0]), float(xy[1]), v.pose.heading_deg, v.pose.sigma_mm,
                                                     v.pose.sigma_deg), said)
            state.shifts_mm += shift
        for v in cars:
            if v.at_back_edge:
                continue
            # "Reaches" the back edge includes touching it (the one place a real car can stand
            # there): the rear within CONTACT_MM of the edge, as touching in Moves and Rams,
            # and within the camera's doubt of that.
            rear = float((v.footprint().corners - centre).dot(ahead).min())
            half_diag = math.hypot(v.footprint().length_mm, v.footprint().width_mm) / 2
            sigma = math.hypot(v.pose.axis_sigma_mm, half_diag * v.pose.heading_sigma_rad)
            if judge("from the back edge", rear + reach, CONTACT_MM, sigma).outcome != OUT:
                v.at_back_edge = True
                events.append(f"the {v.name} is at the back edge: next turn it must Move to rejoin")

    def _clear_wrecks(self, state: GameState, events: list) -> None:
        """ "Destroyed!": the wreck is removed from the play space; warriors who did not leap
        go with it (option wreck_leap_window)."""
        if self.option("wreck_leap_window") == "any_time":
            return
        for m in state.wrecks:
            for w in state.crew(m):
                w.out = True
                events.append(f"{w.label()} is left in the {state.vehicles[m].name}'s wreck: out of the fight")
        state.wrecks = []

    def _check_winner(self, state: GameState, events: list) -> None:
        """The book has no end of the game (option game_end): by default, the last player still
        controlling a vehicle in the fight (a captured vehicle fights for its new controller,
        "Within a Round"; a hidden buggy not yet deployed still counts)."""
        if self.option("game_end") == "table_decides":
            return
        alive = {v.controller for v in state.vehicles.values()
                 if not v.destroyed and not v.out_of_play}
        if len(alive) == 1 and not state.winner:
            state.winner = alive.pop()
            events.append(f"{state.winner} wins: the others have no vehicle left in the fight "
                          f"(option game_end)")


ACTIONS = sorted(ShatteredHighways.handlers)

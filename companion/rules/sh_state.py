"""Shattered Highways: rosters, and the game's state (vehicles, warriors, rounds).

A roster (JSON) is one player's fleet:

    {"player": "Immortan", "points": 100,
     "hero": {"vehicle": 10, "seat": "D"},
     "vehicles": [{"marker": 10, "name": "Interceptor", "class": "car",
                   "weapons": ["front"], "addons": ["armor:front", "drag_chains"]}]}

Every seat starts with a cannon fodder ("Fleet Construction": "By default every
vehicle starts with a warrior in each seating position"); the hero takes the
seat named.  Seats: "D" the driver, "W1".. a gunner per weapon, "P1".. the rest;
on a rig "D" and "W1" ride the tractor, the rest the trailer.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..geometry import Footprint, Pose
from . import sh_data as D
from .actions import ListOf, OneOf
from .base import RulesError, check_block, piece_named


@dataclass
class Warrior:
    id: str
    player: str
    kind: str                       # "hero" or "fodder"
    vehicle: int | None
    seat: str | None                # None: clinging
    out: bool = False
    jammed: bool = False            # a hero's pistol
    acted: bool = False             # has taken their action this round ("All Warrior Actions")
    extra_action: bool = False      # after a Change or a successful Cling, one more at -1 this activation
    penalty: int = 0                # that one more action's penalty (Change, Cling)
    leapt: bool = False             # has made their one desperate leap from a wreck ("Destroyed!")
    cling_exempt_on: int | None = None   # reinforcements: no Cling rolls on the rig they started on
    #: Where they started, in words ("the Interceptor's gunner 1"): players tell fodder apart
    #: by it, never by the id (player:marker:seat), which is for the game's own records.
    origin: str = ""

    @property
    def skill_die(self) -> str:
        return D.HERO_SKILL if self.kind == "hero" else D.FODDER_SKILL

    def label(self) -> str:
        if self.kind == "hero":
            return f"{self.player}'s hero"      # one a fleet: the name is enough
        return f"{self.player}'s cannon fodder" + (f" ({self.origin})" if self.origin else "")


def seat_words(seat: str | None) -> str:
    """A seat as players say it: "the driver's seat", "gunner seat 1", "passenger seat 2"."""
    if seat is None:
        return "no seat (clinging on)"
    if seat == "D":
        return "the driver's seat"
    kind = {"W": "gunner", "P": "passenger", "R": "reinforcement"}.get(seat[:1])
    return f"{kind} seat {seat[1:]}" if kind and seat[1:].isdigit() else f"seat {seat}"


def _origin(vehicle: str, seat: str) -> str:
    """Where a cannon fodder started, for their label: "the Interceptor's gunner 1"."""
    role = "driver" if seat == "D" else seat_words(seat).replace(" seat", "")
    return f"the {vehicle}'s {role}"


@dataclass
class Weapon:
    mount: str                      # front, rear (left, right on rigs)
    seat: str                       # the gunner's seat
    jammed: bool = False


@dataclass
class Vehicle:
    marker: int
    name: str
    cls: str
    owner: str
    controller: str
    hp: dict[str, int]
    weapons: list[Weapon]
    addons: list[str]
    seats: list[tuple[str, str]]    # (seat, part)
    length_mm: float
    width_mm: float
    pose: Pose | None = None
    destroyed: bool = False
    out_of_play: bool = False       # dropped off the back of the play space
    at_back_edge: bool = False
    hidden_buggy: int | None = None # the marker of a buggy in the trailer, not yet deployed
    hidden_in: int | None = None    # for a hidden buggy: the rig it rides in
    decoupled: bool = False
    rammed_with: set[int] = field(default_factory=set)   # rammed and neither has moved since

    @property
    def klass(self) -> D.VehicleClass:
        return D.CLASSES[self.cls]

    @property
    def in_play(self) -> bool:
        return not (self.destroyed or self.out_of_play or self.hidden_in is not None)

    @property
    def total_hp(self) -> int:
        return sum(max(v, 0) for v in self.hp.values())

    def armour(self, section: str) -> int:
        return D.ARMOR_REDUCTION if f"armor:{section}" in self.addons else 0

    def footprint(self) -> Footprint:
        if self.pose is None:
            raise RulesError(f"{self.name} is not on the table")
        return Footprint(self.marker, self.pose, self.length_mm, self.width_mm, self.name)


@dataclass
class GameState:
    players: list[str]
    vehicles: dict[int, Vehicle]
    warriors: dict[str, Warrior]
    table_mm: tuple[float, float]
    pack_heading_deg: float
    round: int = 0
    order: list[tuple[str, int]] = field(default_factory=list)   # (player, marker) in play
    turn: int = -1
    winner: str | None = None
    shifts_mm: float = 0.0
    #: Where each car stood as the rules last left it: at the start of the activation under way
    #: (or of the game), or where a resolution since put it. A car the camera sees moved by hand
    #: since (a nudged car set down before its nudge resolves) is judged from here.
    placed: dict[int, Pose] = field(default_factory=dict)
    #: The poses as the resolution under way began (to see which cars it moved).
    poses_before: dict[int, Pose] = field(default_factory=dict)
    #: The wrecks of this activation: warriors still aboard may leap from them until it ends.
    wrecks: list[int] = field(default_factory=list)
    #: The warrior whose action is being resolved: only their own rolls take a Change's or a
    #: Cling's -1 ("perform another action at a -1"), not a defence or a Cling roll.
    actor: str | None = None
    #: Every die the resolution under way has thrown, in order, each with its modifiers: the
    #: step's `rolls` (damage, boxes and tenacity included), begun afresh by each resolution.
    thrown: list[dict] = field(default_factory=list)
    #: Where the scene puts each hidden buggy: where it stands once it is out (a game begun part way).
    scene_poses: dict[int, Pose] = field(default_factory=dict)

    def record_placed(self) -> None:
        self.placed = {m: v.pose for m, v in self.vehicles.items() if v.pose is not None}

    def placed_pose(self, marker: int) -> Pose | None:
        return self.placed.get(marker, self.vehicles[marker].pose)

    def vehicle(self, marker: int) -> Vehicle:
        if marker not in self.vehicles:
            raise RulesError(f"there is no vehicle {marker}")
        return self.vehicles[marker]

    def warrior(self, wid: str) -> Warrior:
        if wid not in self.warriors:
            raise RulesError(f"there is no warrior {wid}")
        return self.warriors[wid]

    def crew(self, marker: int) -> list[Warrior]:
        return [w for w in self.warriors.values() if w.vehicle == marker and not w.out]

    def in_seat(self, marker: int, seat: str) -> Warrior | None:
        return next((w for w in self.crew(marker) if w.seat == seat), None)

    @property
    def active(self) -> Vehicle | None:
        if 0 <= self.turn < len(self.order):
            return self.vehicles[self.order[self.turn][1]]
        return None

    def to_json(self) -> dict:
        """The state as plain JSON (what a scenario's "expect" looks into, what a game file keeps)."""
        return {
            "round": self.round,
            "winner": self.winner,
            "active": self.active.marker if self.active else None,
            "vehicles": {str(v.marker): {
                "name": v.name, "class": v.cls, "controller": v.controller, "hp": dict(v.hp),
                "destroyed": v.destroyed, "out_of_play": v.out_of_play, "at_back_edge": v.at_back_edge,
                "hidden": v.hidden_in is not None,
                "pose": None if v.pose is None else [round(v.pose.x_mm, 2), round(v.pose.y_mm, 2),
                                                     round(v.pose.heading_deg, 2)],
                "jammed": [w.mount for w in v.weapons if w.jammed],
                "crew": sorted(w.id for w in self.crew(v.marker)),
            } for v in self.vehicles.values()},
            "warriors_out": sorted(w.id for w in self.warriors.values() if w.out),
        }


# --- rosters ------------------------------------------------------------------------

def seats_for(cls: str, weapons: int) -> list[tuple[str, str]]:
    k = D.CLASSES[cls]
    names = ["D"] + [f"W{i + 1}" for i in range(weapons)]
    names += [f"P{i + 1}" for i in range(k.seats - len(names))]
    if cls == "rig":
        return [(n, "tractor" if i < D.RIG_TRACTOR_SEATS else "trailer") for i, n in enumerate(names)]
    return [(n, "body") for n in names]


def vehicle_cost(spec: dict, weapons_included: bool) -> int:
    k = D.CLASSES[spec["class"]]
    weapons = len(spec.get("weapons", []))
    paid_weapons = max(weapons - k.weapons, 0) if weapons_included else weapons
    addons = [a.split(":")[0] for a in spec.get("addons", [])]
    addon_cp = sum(D.ADDON_COSTS[a] for a in addons)
    # "Trucks ... + 1 addon": the truck's first add-on comes with it.
    free = sorted((D.ADDON_COSTS[a] for a in addons), reverse=True)[:k.free_addons]
    return k.creation_points + paid_weapons * D.WEAPON_CP + addon_cp - sum(free)


def build_fleet(roster: dict, weapons_included: bool, fleet_points: int | None,
                markers_taken: set[int], sizes: dict[int, tuple[float, float]]) -> tuple[list[Vehicle], list[Warrior]]:
    """A player's vehicles and warriors from their roster; every mistake named."""
    player = roster.get("player")
    if not isinstance(player, str) or not player:
        raise RulesError("a roster needs a 'player' name")
    where = f"roster of {player}"
    specs = roster.get("vehicles")
    if not isinstance(specs, list) or not specs:
        raise RulesError(f"{where}: no 'vehicles'")
    vehicles, warriors, total = [], [], 0
    for n, spec in enumerate(specs):
        name = spec.get("name") or f"vehicle #{n + 1}"
        w = f"{where}, {name}"
        cls = spec.get("class")
        if cls not in D.CLASSES:
            raise RulesError(f"{w}: class must be one of {', '.join(D.CLASSES)}, not {cls!r}")
        k = D.CLASSES[cls]
        marker = spec.get("marker")
        if not isinstance(marker, int) or isinstance(marker, bool):
            raise RulesError(f"{w}: needs its roof 'marker' id")
        if marker in markers_taken:
            raise RulesError(f"{w}: marker {marker} is already another vehicle's")
        markers_taken.add(marker)
        mounts = spec.get("weapons", ["front"] * k.weapons)
        allowed_mounts = ("front", "rear", "left", "right") if cls == "rig" else ("front", "rear")
        for m in mounts:
            if m not in allowed_mounts:
                raise RulesError(f"{w}: a weapon mounted '{m}'; a {cls} mounts weapons {', '.join(allowed_mounts)} "
                                 f"({D.RULEBOOK}, \"Vehicle Weapons\")")
        if len(mounts) > k.max_weapons:
            raise RulesError(f"{w}: {len(mounts)} weapons, but a {cls} carries at most {k.max_weapons} "
                             f"({D.RULEBOOK}, \"Vehicles\")")
        if len(mounts) + 1 > k.seats:
            raise RulesError(f"{w}: {len(mounts)} weapons need {len(mounts)} gunners and a driver, "
                             f"but a {cls} seats {k.seats}")
        addons = spec.get("addons", [])
        for a in addons:
            base, _, section = a.partition(":")
            if base not in D.ADDON_COSTS:
                raise RulesError(f"{w}: unknown add-on '{a}' (armor:SECTION, drag_chains, hidden_buggy, reinforcements)")
            if base == "armor" and section not in D.ARMOR_SECTIONS:
                raise RulesError(f"{w}: armour goes on the {', '.join(D.ARMOR_SECTIONS)}, not '{section}'")
            if base in D.RIG_ONLY_ADDONS and cls != "rig":
                raise RulesError(f"{w}: {base} is a rig-only add-on ({D.RULEBOOK}, \"Rig-only Add-ons\")")
        if len(set(addons)) != len(addons):
            raise RulesError(f"{w}: an add-on listed twice")
        cost = vehicle_cost({**spec, "weapons": mounts}, weapons_included)
        total += cost
        length, width = sizes.get(marker, (spec.get("length_mm", 75.0), spec.get("width_mm", 32.0)))
        seats = seats_for(cls, len(mounts))
        v = Vehicle(marker, name, cls, player, player, dict(k.hit_points),
                    [Weapon(m, f"W{i + 1}") for i, m in enumerate(mounts)], list(addons), seats,
                    float(length), float(width))
        vehicles.append(v)
        for seat, _ in seats:
            warriors.append(Warrior(f"{player}:{marker}:{seat}", player, "fodder", marker, seat,
                                    origin=_origin(name, seat)))
        if "reinforcements" in addons:
            for i in range(D.REINFORCEMENTS):
                warriors.append(Warrior(f"{player}:{marker}:R{i + 1}", player, "fodder", marker, None,
                                        cling_exempt_on=marker, origin=_origin(name, f"R{i + 1}")))
        if "hidden_buggy" in addons:
            hb = spec.get("hidden_buggy", {})
            hb_marker = hb.get("marker")
            if not isinstance(hb_marker, int) or hb_marker in markers_taken:
                raise RulesError(f"{w}: the hidden buggy needs a marker of its own ('hidden_buggy': {{'marker': ID}})")
            markers_taken.add(hb_marker)
            buggy = Vehicle(hb_marker, hb.get("name", f"{name}'s buggy"), "buggy", player, player,
                            dict(D.CLASSES["buggy"].hit_points), [], [], seats_for("buggy", 0),
                            *sizes.get(hb_marker, (68.0, 30.0)), hidden_in=marker)
            v.hidden_buggy = hb_marker
            vehicles.append(buggy)
            for seat, _ in buggy.seats:
                warriors.append(Warrior(f"{player}:{hb_marker}:{seat}", player, "fodder", hb_marker, seat,
                                        origin=_origin(buggy.name, seat)))
    limit = fleet_points if fleet_points is not None else roster.get("points")
    if limit is not None and total > limit:
        raise RulesError(f"{where}: the fleet costs {total} creation points, over its {limit}")
    hero = roster.get("hero")
    if hero is not None:
        wid = f"{player}:{hero.get('vehicle')}:{hero.get('seat', 'D')}"
        match = next((x for x in warriors if x.id == wid), None)
        if match is None:
            raise RulesError(f"{where}: the hero's seat {hero!r} is not a seat in the fleet")
        match.kind = "hero"
    return vehicles, warriors


# --- a game taken up part way (RuleSystem.start_part_way) ----------------------------------

#: The `state` block's fields, and those of each vehicle and warrior in it (docs/rules/
#: shattered-highways.md, "Starting part way through a game").
PART_WAY_FIELDS = {"round": "whole", "order": ListOf("marker"), "turn": "whole", "vehicles": "object",
                   "warriors": "object"}
PART_WAY_VEHICLE = {"hp": "object", "destroyed": "flag", "out_of_play": "flag", "at_back_edge": "flag",
                    "jammed": ListOf(OneOf(*D.ARMOR_SECTIONS)), "controller": "text", "decoupled": "flag",
                    "deployed": "flag", "rammed_with": ListOf("marker")}
PART_WAY_WARRIOR = {"out": "flag", "vehicle": "marker", "seat": "text", "clinging": "flag", "jammed": "flag",
                    "acted": "flag", "leapt": "flag"}




def apply_part_way(state: GameState, block: dict) -> None:
    """Set on `state` what play had reached, from a scenario's `state` block: the round and this
    round's order with whose turn it is, each vehicle's hit points and what befell it, each
    warrior's place and what befell him. Everything is checked by name and shape, and a value
    play could not have reached is refused saying why (RulesError); the caller works on a copy."""
    check_block("state", PART_WAY_FIELDS, block)
    for key, spec in (block.get("vehicles") or {}).items():
        _part_way_vehicle(state, key, spec)
    for wid, spec in (block.get("warriors") or {}).items():
        _part_way_warrior(state, wid, spec)
    # Who went down with a wreck or a trailer cut loose (unless the block put them elsewhere).
    for w in state.warriors.values():
        v = state.vehicles.get(w.vehicle) if w.vehicle is not None else None
        if w.out or v is None:
            continue
        if v.destroyed or (v.decoupled and w.seat is not None and w.seat not in dict(v.seats)):
            w.out = True
    seated: dict[tuple[int, str], str] = {}
    for w in state.warriors.values():
        if not w.out and w.seat is not None:
            if (w.vehicle, w.seat) in seated:
                raise RulesError(f"state.warriors: {seated[(w.vehicle, w.seat)]} and {w.id} are both in "
                                 f"{seat_words(w.seat)} of the {state.vehicles[w.vehicle].name}")
            seated[(w.vehicle, w.seat)] = w.id
    rnd = block.get("round", 0)
    if rnd < 0:
        raise RulesError(f"state.round: the rounds played so far (0: before the first), not {rnd}")
    state.round = int(rnd)
    order, turn = block.get("order"), block.get("turn")
    if order is None:
        if turn is not None:
            raise RulesError("state.turn: give the round's 'order' too (the turn is a place in it)")
        return              # between rounds: the next round step starts round `round` + 1
    if state.round < 1:
        raise RulesError("state.order: a round's order needs its 'round' (1 or more)")
    for m in order:
        if m not in state.vehicles:
            raise RulesError(f"state.order: no vehicle {m} in this game")
    twice = sorted({state.vehicles[m].name for m in order if order.count(m) > 1})
    if twice:
        raise RulesError(f"state.order names the {' and the '.join(twice)} twice: each vehicle plays once a round")
    missing = [v.name for v in state.vehicles.values() if v.in_play and v.marker not in order]
    if missing:
        raise RulesError(f"state.order leaves out the {' and the '.join(missing)}: every vehicle in the fight "
                         f"plays each round")
    turn = 0 if turn is None else int(turn)
    if not 0 <= turn < len(order):
        raise RulesError(f"state.turn: the place in the order of the vehicle whose turn it is, 0 to "
                         f"{len(order) - 1}, not {turn}")
    state.order = [(state.vehicles[m].owner, m) for m in order]
    state.turn = turn


def _part_way_vehicle(state: GameState, key: str, spec) -> None:
    where = f"state.vehicles.{key}"
    v = piece_named(state.vehicles, key, where)
    check_block(where, PART_WAY_VEHICLE, spec)
    hp = spec.get("hp") or {}
    check_block(f"{where}.hp", {part: "whole" for part in v.hp}, hp)
    for part, now in hp.items():
        most = v.klass.hit_points[part]
        if now > most:
            raise RulesError(f"{where}.hp.{part}: the {v.name}'s {part} has {most} hit points at most, not {now}")
        v.hp[part] = int(now)
    v.destroyed = bool(spec.get("destroyed", False))
    vital = "tractor" if v.cls == "rig" else "body"
    if v.hp[vital] <= 0 and not v.destroyed:
        raise RulesError(f"{where}: its {vital} at {v.hp[vital]} leaves the {v.name} destroyed (\"Destroyed!\"): "
                         f"say \"destroyed\": true")
    v.out_of_play = bool(spec.get("out_of_play", False))
    v.at_back_edge = bool(spec.get("at_back_edge", False))
    mounts = [g.mount for g in v.weapons]
    for mount in spec.get("jammed") or []:
        if mount not in mounts:
            raise RulesError(f"{where}.jammed: the {v.name} has no {mount} gun (its guns: {', '.join(mounts) or 'none'})")
    for g in v.weapons:
        g.jammed = g.mount in (spec.get("jammed") or [])
    if spec.get("controller") is not None:
        if spec["controller"] not in state.players:
            raise RulesError(f"{where}.controller: {spec['controller']!r} is not playing "
                             f"(the players: {', '.join(state.players)})")
        v.controller = spec["controller"]
    if spec.get("decoupled"):
        if v.cls != "rig" or v.hp["trailer"] > 0:
            raise RulesError(f"{where}.decoupled: only a rig whose trailer is at 0 cuts it loose (\"Destroyed!\")")
        # As the Decouple leaves it: the trailer's guns and seats are gone, the rig is its tractor.
        trailer = {s for s, part in v.seats if part == "trailer"}
        v.decoupled = True
        v.weapons = [g for g in v.weapons if g.seat not in trailer]
        v.seats = [(s, part) for s, part in v.seats if part != "trailer"]
    if spec.get("deployed"):
        if v.hidden_in is None:
            raise RulesError(f"{where}.deployed: the {v.name} is no hidden buggy")
        pose = state.scene_poses.get(v.marker)
        if pose is None:
            raise RulesError(f"{where}.deployed: put the {v.name} on the table (the scene's cars) where it stands")
        state.vehicles[v.hidden_in].hidden_buggy = None
        v.hidden_in, v.pose = None, pose
    for other in spec.get("rammed_with") or []:
        if other not in state.vehicles or other == v.marker:
            raise RulesError(f"{where}.rammed_with: {other} is not another vehicle in this game")
        v.rammed_with.add(other)
        state.vehicles[other].rammed_with.add(v.marker)
    if v.destroyed and v.hidden_buggy is not None:
        # "otherwise it is destroyed with the rig": a buggy still hidden in a wreck is gone too.
        buggy = state.vehicles[v.hidden_buggy]
        buggy.destroyed, buggy.hidden_in, v.hidden_buggy = True, None, None


def _part_way_warrior(state: GameState, wid: str, spec) -> None:
    where = f"state.warriors.{wid}"
    if wid not in state.warriors:
        raise RulesError(f"{where}: no warrior {wid!r} in this game (warriors are PLAYER:MARKER:SEAT as they "
                         f"started, e.g. {next(iter(state.warriors), 'Max:10:D')})")
    w = state.warriors[wid]
    check_block(where, PART_WAY_WARRIOR, spec)
    w.out = bool(spec.get("out", False))
    if spec.get("vehicle") is not None or spec.get("seat") is not None or spec.get("clinging"):
        marker = spec.get("vehicle", w.vehicle)
        if marker not in state.vehicles:
            raise RulesError(f"{where}.vehicle: no vehicle {marker} in this game")
        v = state.vehicles[marker]
        seat = spec.get("seat")
        if spec.get("clinging"):
            if seat is not None:
                raise RulesError(f"{where}: a warrior clinging on has no seat; give 'seat' or 'clinging', not both")
        elif seat is None:
            raise RulesError(f"{where}: say where aboard the {v.name}: a 'seat', or 'clinging': true")
        elif seat not in dict(v.seats):
            raise RulesError(f"{where}.seat: the {v.name} has no {seat_words(seat)} "
                             f"(its seats: {', '.join(s for s, _ in v.seats)})")
        w.vehicle, w.seat = marker, seat
    if spec.get("jammed"):
        if w.kind != "hero":
            raise RulesError(f"{where}.jammed: only a hero carries a pistol to jam (\"Heroes\")")
        w.jammed = True
    w.acted = bool(spec.get("acted", False))
    w.leapt = bool(spec.get("leapt", False))

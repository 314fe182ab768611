"""Alpha Destructicus: rosters, and the game's state (freaks, vehicles, terrain, chips, gates).

A roster (JSON) is one player's three freaks and the vehicles that player brought
to the arena (vehicles belong to nobody: whoever drives one controls it):

    {"player": "Ann",
     "freaks": [{"name": "Zed", "aboard": 10, "seat": "driver"},
                {"name": "Mo", "at": [300, 200]}, {"name": "Ix", "at": [320, 200]}],
     "vehicles": [{"marker": 10, "sample": "rhinocerator"},
                  {"marker": 11, "name": "Hotrod", "type": "truck",
                   "armour": {"front": 2, "side": 1, "back": 1, "top": 0},
                   "components": ["engine", {"weapon": "gun", "strength": 1, "range_in": 12}]}]}

A vehicle takes the table's name for its car (the page labels it so; `sample` gives its type,
armour and components): a roster that names it otherwise is refused.

Terrain comes from the scene: a piece's Alpha Destructicus kind is its scene kind
("building"; "rough" and "wreckage" are rubble) unless its name starts with one of
`ad_data.TERRAIN_KINDS` and a colon ("lava: the pit", "ramp: big one", "barrier: crates",
"fixed: wall", "forest: pines").  A ramp's first two points are its bottom edge.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import shapely
from shapely.geometry import Polygon

from ..geometry import Footprint, Gate, Pose
from . import ad_data as D
from .base import RulesError, check_block


@dataclass
class Freak:
    id: str
    player: str
    wounds: int = D.WOUNDS
    aboard: int | None = None           # a vehicle's marker
    seat: str | None = None             # "driver", "passenger", "clinging"
    pos: tuple[float, float] | None = None   # on foot: where he stands (table mm)
    down: bool = False                  # "Don't know when to quit": lies still, cannot be harmed
    moved: bool = False                 # his chip is on him this round
    out: bool = False
    drove_before: int | None = None     # the vehicle he last drove ("Winning": a driver who acquires another)

    @property
    def on_foot(self) -> bool:
        return self.aboard is None and not self.out


@dataclass
class Component:
    name: str
    kind: str                           # "engine", "weapon", "booster", "horns", "other"
    status: str = "working"             # "working", "damaged" (repairable), "destroyed"
    strength: int = 0
    range_in: float = 0.0
    ignites: bool = False

    def to_json(self) -> dict:
        out = {"name": self.name, "kind": self.kind, "status": self.status}
        if self.kind == "weapon":
            out.update(strength=self.strength, range_in=self.range_in)
        return out


@dataclass
class Vehicle:
    marker: int
    name: str
    type: str
    armour: dict[str, int]
    components: list[Component]
    length_mm: float
    width_mm: float
    pose: Pose | None = None
    destroyed: bool = False
    removed: bool = False               # off the table (exploded, cavalry gone)
    burning: bool = False
    pending: int = 0                    # a glancing result waiting for the driver's next turn
    pending_table: str = ""             # which table it came from
    # The activation in which the pending result was taken: it waits for "the driver's next turn",
    # the first activation after that one in which the vehicle's driver moves ("Glancing Hit Table").
    pending_since: int = 0
    # Rollover / Rollover Wreck: the car moves "in its last direction of movement", not where it
    # faces after the 90 degree turn: the heading it travelled along before it rolled.
    pending_heading: float | None = None
    last_gate: str | None = None        # the gate it last scored on
    last_team: str | None = None        # the player whose freak last drove it
    last_driver: str | None = None

    @property
    def kind(self) -> D.VehicleType:
        return D.TYPES[self.type]

    @property
    def in_play(self) -> bool:
        return not (self.destroyed or self.removed)

    @property
    def on_table(self) -> bool:
        return not self.removed and self.pose is not None

    def armour_of(self, facing: str) -> int:
        return self.armour.get(facing, 0)

    def component(self, name: str) -> Component:
        for c in self.components:
            if c.name == name:
                return c
        raise RulesError(f"the {self.name} has no component '{name}' "
                         f"(it has: {', '.join(c.name for c in self.components) or 'none'})")

    @property
    def engine(self) -> Component | None:
        return next((c for c in self.components if c.kind == "engine"), None)

    @property
    def functional(self) -> bool:
        """It can move: its engine works ("Vehicle Components": "Most vehicles have an engine"; one
        listed without, like the appendix's Waldo, has none to break; jetpacks and cavalry need none)."""
        if not self.in_play:
            return False
        if not self.kind.needs_engine:
            return True
        e = self.engine
        return e is None or e.status == "working"

    def footprint(self, pose: Pose | None = None) -> Footprint:
        if self.pose is None and pose is None:
            raise RulesError(f"the {self.name} is not on the table")
        return Footprint(self.marker, pose or self.pose, self.length_mm, self.width_mm, self.name)


@dataclass
class Feature:
    """A piece of terrain as Alpha Destructicus sees it."""

    name: str
    kind: str                           # ad_data.TERRAIN_KINDS
    points: list[tuple[float, float]]
    breached: list[int] = field(default_factory=list)    # walls (edge numbers) breached
    wall_armour: dict[int, int] = field(default_factory=dict)
    offset_mm: tuple[float, float] = (0.0, 0.0)           # a normal barrier knocked away
    burning: bool = False               # "Fire!": "Any building ... touched by a burning vehicle"

    @property
    def polygon(self) -> Polygon:
        return Polygon([(x + self.offset_mm[0], y + self.offset_mm[1]) for x, y in self.points])

    def walls(self) -> list[tuple[int, object]]:
        """Its walls: (number, the edge as a line), numbered as `wall_near` numbers them."""
        pts = list(self.polygon.exterior.coords)
        return [(k, shapely.linestrings([pts[k], pts[k + 1]])) for k in range(len(pts) - 1)]

    @property
    def solid(self):
        """What a vehicle runs into: the whole piece, or, once a building has a wall breached, its
        walls still standing ("By winning a ram against the building, a vehicle may breach the
        building and continue through": through the breach, not through another wall, which must be
        breached in its turn: "If more than 1 wall of the building is breached, it is reduced to
        rubble")."""
        if self.kind == "building" and self.breached:
            return shapely.multilinestrings([line for k, line in self.walls() if k not in self.breached])
        return self.polygon

    def armour(self, wall: int) -> int:
        if self.kind == "building":
            return self.wall_armour.get(wall, D.BUILDING_ARMOUR)
        return self.wall_armour.get(wall, 0)

    def wall_near(self, xy) -> int:
        """The number of the polygon's edge nearest a point (a wall of a building)."""
        pts = np.asarray(self.polygon.exterior.coords)
        p = shapely.points(np.asarray(xy, float))
        d = [shapely.distance(shapely.linestrings([pts[k], pts[k + 1]]), p) for k in range(len(pts) - 1)]
        return int(np.argmin(d))


@dataclass
class GameState:
    players: list[str]
    vehicles: dict[int, Vehicle]
    freaks: dict[str, Freak]
    terrain: dict[str, Feature]
    gates: list[Gate]
    table_mm: tuple[float, float]
    round: int = 0
    bag: list[str] = field(default_factory=list)          # chips still in the bag
    chip: str | None = None             # the player whose chip was drawn
    acting: str | None = None           # the freak he is moving
    drawer: str | None = None           # the player whose freak moved last: he draws the next chip
    activation: int = 0                 # activations begun this game (a pending result's clock)
    drove_at_start: int | None = None   # the vehicle the acting freak was driving when his turn began
    # This activation: what the acting freak has done.
    walked_mm: float = 0.0
    drove: int | None = None
    exclusive: str | None = None        # repair, fire or concentrate ("ONLY ONE of the following")
    stunt: str | None = None
    jacked: bool = False
    direction: str | None = None        # "forward" or "reverse"
    budget_mm: float = 0.0              # movement allowed this activation
    spent_mm: float = 0.0               # movement spent (distance, turns, rubble)
    ground_mm: float = 0.0              # distance the vehicle's centre travelled
    pushing: bool = False
    push_failed: bool = False
    stopped: bool = False               # lost a ram, forced stop
    since_turn_mm: float | None = None  # trucks: distance since the last turn
    two_wheels: bool = False
    turn_cost_mm: float = 0.0
    blocked: bool = False               # a drive said it could go no further (Speed Freak)
    getting_up: bool = False            # down_gets_up="spends_turn": this turn is spent standing up
    paths: dict = field(default_factory=dict)              # marker -> poses driven this activation
    # What the driven vehicle may not ram again now: what it has rammed this turn, until it has moved
    # out of contact ("Ramming": a ram is a vehicle moving INTO contact; one contact, one ram).
    no_ram: list = field(default_factory=list)
    scores: dict[str, int] = field(default_factory=dict)
    destroyed_by: dict[str, int] = field(default_factory=dict)
    over: bool = False
    winner: str | None = None

    # --- look-ups ---------------------------------------------------------------------

    def vehicle(self, marker) -> Vehicle:
        try:
            marker = int(marker)
        except (TypeError, ValueError):
            raise RulesError(f"{marker!r} is not a vehicle's marker number") from None
        if marker not in self.vehicles:
            raise RulesError(f"there is no vehicle {marker}")
        return self.vehicles[marker]

    def freak(self, fid: str) -> Freak:
        if fid not in self.freaks:
            raise RulesError(f"there is no freak '{fid}' (freaks: {', '.join(self.freaks)})")
        return self.freaks[fid]

    def feature(self, name: str) -> Feature:
        if name not in self.terrain:
            raise RulesError(f"there is no terrain '{name}' (there is: {', '.join(self.terrain) or 'none'})")
        return self.terrain[name]

    def aboard(self, marker: int, seat: str | None = None) -> list[Freak]:
        return [f for f in self.freaks.values()
                if f.aboard == marker and not f.out and (seat is None or f.seat == seat)]

    def inside(self, marker: int) -> list[Freak]:
        """Freaks in the vehicle (not clinging to it)."""
        return [f for f in self.aboard(marker) if f.seat in ("driver", "passenger")]

    def driver(self, marker: int) -> Freak | None:
        return next(iter(self.aboard(marker, "driver")), None)

    def where(self, f: Freak) -> np.ndarray | None:
        """Where a freak is: his spot on foot, or the vehicle he is on."""
        if f.aboard is not None:
            v = self.vehicles[f.aboard]
            return v.pose.xy if v.pose is not None else None
        return None if f.pos is None else np.asarray(f.pos, float)

    @property
    def active(self) -> Vehicle | None:
        """The vehicle whose turn it is: the one the acting freak drives or rides."""
        if self.acting is None:
            return None
        f = self.freaks[self.acting]
        marker = self.drove if self.drove is not None else f.aboard
        return self.vehicles.get(marker) if marker is not None else None

    def alive(self, player: str) -> list[Freak]:
        return [f for f in self.freaks.values() if f.player == player and not f.out]

    # --- the record ---------------------------------------------------------------------

    def to_json(self) -> dict:
        return {
            "round": self.round, "over": self.over, "winner": self.winner,
            "chip": self.chip, "acting": self.acting, "bag": sorted(self.bag),
            "active": self.active.marker if self.active else None,
            "scores": dict(sorted(self.scores.items())),
            "destroyed_by": dict(sorted(self.destroyed_by.items())),
            "activation": {"walked_in": round(self.walked_mm / 25.4, 2), "drove": self.drove,
                           "exclusive": self.exclusive, "stunt": self.stunt, "direction": self.direction,
                           "budget_in": round(self.budget_mm / 25.4, 2), "spent_in": round(self.spent_mm / 25.4, 2),
                           "moved_in": round(self.ground_mm / 25.4, 2), "stopped": self.stopped},
            "vehicles": {str(m): {
                "name": v.name, "type": v.type, "armour": dict(v.armour),
                "components": [c.to_json() for c in v.components],
                "destroyed": v.destroyed, "removed": v.removed, "burning": v.burning,
                "pending": D.GLANCING.get(v.pending) if v.pending_table == "glancing" else
                (None if not v.pending else f"{v.pending_table} {v.pending}"),
                "last_gate": v.last_gate,
                "pose": None if v.pose is None else [round(v.pose.x_mm, 2), round(v.pose.y_mm, 2),
                                                     round(v.pose.heading_deg, 2)],
                "driver": (self.driver(m).id if self.driver(m) else None),
                "aboard": sorted(f.id for f in self.aboard(m)),
            } for m, v in sorted(self.vehicles.items())},
            "freaks": {fid: {"player": f.player, "wounds": f.wounds, "aboard": f.aboard, "seat": f.seat,
                             "pos": None if f.pos is None else [round(f.pos[0], 2), round(f.pos[1], 2)],
                             "down": f.down, "moved": f.moved, "out": f.out}
                       for fid, f in sorted(self.freaks.items())},
            "terrain": {n: {"kind": t.kind, "breached": list(t.breached), "burning": t.burning,
                            "offset_mm": [round(t.offset_mm[0], 2), round(t.offset_mm[1], 2)]}
                        for n, t in sorted(self.terrain.items())},
        }


# --- rosters ---------------------------------------------------------------------------

def _components(spec: list, where: str) -> list[Component]:
    out = []
    for c in spec:
        if isinstance(c, str):
            if c not in D.SPECIALS:
                raise RulesError(f"{where}: unknown component '{c}' (engine, booster, horns, or a weapon "
                                 f"{{'weapon': name, 'strength': S, 'range_in': R}})")
            out.append(Component(c, c))
        elif isinstance(c, dict) and "weapon" in c:
            s, r = c.get("strength"), c.get("range_in")
            if not isinstance(s, int) or isinstance(s, bool) or s < 0:
                raise RulesError(f"{where}: weapon '{c['weapon']}' needs a whole 'strength' of 0 or more")
            if not isinstance(r, (int, float)) or isinstance(r, bool) or r <= 0:
                raise RulesError(f"{where}: weapon '{c['weapon']}' needs a 'range_in' above 0")
            out.append(Component(str(c["weapon"]), "weapon", strength=s, range_in=float(r),
                                 ignites=bool(c.get("ignites"))))
        else:
            raise RulesError(f"{where}: a component is a name or a weapon object, not {c!r}")
    names = [c.name for c in out]
    if len(set(names)) != len(names):
        raise RulesError(f"{where}: two components share a name")
    return out


def build_vehicle(spec: dict, where: str, sizes: dict, taken: set, waldo_armour: int = 0,
                  table_names: dict | None = None) -> Vehicle:
    """A roster's vehicle. `table_names`: the table's name for each car it knows (marker to name):
    the page labels the car with it, so the game calls the car by it too (one name everywhere); a
    roster that names the car otherwise is refused, saying both names."""
    marker = spec.get("marker")
    if not isinstance(marker, int) or isinstance(marker, bool):
        raise RulesError(f"{where}: a vehicle needs its roof 'marker' id")
    if marker in taken:
        raise RulesError(f"{where}: marker {marker} is already another vehicle's")
    taken.add(marker)
    base = {}
    if "sample" in spec:
        if spec["sample"] not in D.SAMPLES:
            raise RulesError(f"{where}: no sample vehicle '{spec['sample']}' "
                             f"(samples: {', '.join(D.SAMPLES)}; {D.sec('Appendix 1: Sample Vehicles')})")
        base = D.SAMPLES[spec["sample"]]
    full = {**base, **{k: v for k, v in spec.items() if k != "sample"}}
    on_table = (table_names or {}).get(marker)
    if on_table:
        if spec.get("name") not in (None, "", on_table):
            raise RulesError(f"{where}: the table calls marker {marker} '{on_table}' and the roster calls it "
                             f"'{spec['name']}'; a car has one name everywhere: name it '{on_table}' in the "
                             f"roster, or leave its name out")
        full["name"] = on_table
    if spec.get("sample") == "waldo" and "armour" not in spec:
        # The appendix prints no armour for Waldo: the table's reading (option waldo_armour).
        full["armour"] = {"all": int(waldo_armour)}
    name = str(full.get("name") or f"vehicle {marker}")
    w = f"{where}, {name}"
    vtype = full.get("type")
    if vtype not in D.TYPES:
        raise RulesError(f"{w}: type must be one of {', '.join(D.TYPES)}, not {vtype!r} ({D.sec('Vehicles')})")
    kind = D.TYPES[vtype]
    raw = dict(full.get("armour", {}))
    for k, val in raw.items():
        if k not in (*D.ARMOUR_FACINGS, "all"):
            raise RulesError(f"{w}: armour facings are {', '.join(D.ARMOUR_FACINGS)} (or 'all'), not '{k}'")
        if not isinstance(val, int) or isinstance(val, bool) or val < 0:
            raise RulesError(f"{w}: armour {k} must be a whole number of 0 or more, not {val!r}")
    if vtype in ("jetpack", "cavalry") and any(raw.values()):
        raise RulesError(f"{w}: {vtype} have no armour ({D.sec('Vehicles')})")
    if kind.one_armour:
        values = set(raw.values())
        if len(values) > 1:
            raise RulesError(f"{w}: a {vtype} has only 1 armour value all around ({D.sec('Vehicles')})")
        one = values.pop() if values else 0
        armour = {f: one for f in D.ARMOUR_FACINGS}
    else:
        armour = {f: raw.get(f, raw.get("all", 0)) for f in D.ARMOUR_FACINGS}
    comps = _components(full.get("components", []), w)
    for c in comps:
        # "The engine of each vehicle starts broken at the beginning of the game."
        if c.kind == "engine":
            c.status = "damaged"
    length, width = sizes.get(marker, (spec.get("length_mm", 75.0), spec.get("width_mm", 32.0)))
    return Vehicle(marker, name, vtype, armour, comps, float(length), float(width))


def build_game(rosters: list[dict], scene, waldo_armour: int = 0) -> GameState:
    if len(rosters) < 2:
        raise RulesError("a game needs at least two rosters")
    cars = {c.id: c for c in scene.cars} if scene is not None else {}
    sizes = {m: (c.length_mm, c.width_mm) for m, c in cars.items()}
    names = {m: c.name for m, c in cars.items() if c.name}
    players, vehicles, freaks, taken = [], {}, {}, set()
    for roster in rosters:
        player = roster.get("player")
        if not isinstance(player, str) or not player:
            raise RulesError("a roster needs a 'player' name")
        if player in players:
            raise RulesError(f"two rosters for {player}")
        players.append(player)
        for n, spec in enumerate(roster.get("vehicles", []) or []):
            v = build_vehicle(spec, f"roster of {player}, vehicle #{n + 1}", sizes, taken, waldo_armour, names)
            if v.marker in cars:
                v.pose = cars[v.marker].pose
            vehicles[v.marker] = v
    for roster in rosters:
        player = roster["player"]
        where = f"roster of {player}"
        specs = roster.get("freaks")
        if not isinstance(specs, list) or len(specs) != D.FREAKS_PER_PLAYER:
            raise RulesError(f"{where}: needs exactly {D.FREAKS_PER_PLAYER} 'freaks' "
                             f"({D.sec('Characters')}), not {len(specs) if isinstance(specs, list) else 0}")
        for n, fs in enumerate(specs):
            fid = str(fs.get("name") or f"{player} {n + 1}")
            w = f"{where}, freak {fid}"
            if fid in freaks:
                raise RulesError(f"{w}: two freaks named '{fid}'")
            f = Freak(fid, player)
            if "aboard" in fs:
                if fs["aboard"] not in vehicles:
                    raise RulesError(f"{w}: aboard {fs['aboard']!r}, which is no vehicle in the rosters")
                seat = fs.get("seat", "passenger")
                if seat not in ("driver", "passenger", "clinging"):
                    raise RulesError(f"{w}: seat must be driver, passenger or clinging, not {seat!r}")
                v = vehicles[fs["aboard"]]
                if seat == "driver" and any(o.aboard == v.marker and o.seat == "driver" for o in freaks.values()):
                    raise RulesError(f"{w}: the {v.name} already has a driver")
                cap = v.kind.seats
                if seat != "clinging" and cap is not None and \
                        sum(1 for o in freaks.values() if o.aboard == v.marker and o.seat != "clinging") >= cap:
                    raise RulesError(f"{w}: the {v.name} is a single-occupant {v.type}")
                f.aboard, f.seat = v.marker, seat
                if seat == "driver":
                    v.last_team = player
                    v.last_driver = fid
                    f.drove_before = v.marker
            else:
                at = fs.get("at")
                if not (isinstance(at, list) and len(at) == 2 and all(isinstance(x, (int, float)) for x in at)):
                    raise RulesError(f"{w}: needs 'aboard' (a vehicle's marker) or 'at' ([x_mm, y_mm] on foot)")
                f.pos = (float(at[0]), float(at[1]))
            freaks[fid] = f
    terrain = {}
    for n, t in enumerate(scene.terrain if scene is not None else ()):
        name = t.name or f"terrain {n + 1}"
        kind, _, rest = name.partition(":")
        if rest and kind.strip() in D.TERRAIN_KINDS:
            kind = kind.strip()
        else:
            kind = {"building": "building", "rough": "rubble", "wreckage": "rubble"}.get(t.kind, "fixed")
        coords = [tuple(map(float, p)) for p in list(t.polygon.exterior.coords)[:-1]]
        terrain[name] = Feature(name, kind, coords)
    gates = list(scene.gates) if scene is not None else []
    table = (scene.width_mm, scene.depth_mm) if scene is not None else (1219.2, 812.8)
    return GameState(players, vehicles, freaks, terrain, gates, table,
                     scores={p: 0 for p in players}, destroyed_by={p: 0 for p in players})


# --- a game part way through ------------------------------------------------------------
#
# A scenario's "state" block (docs/rules/alpha-destructicus.md, "Starting part way through a
# game"): what play would have reached, set on a new game, checked as strictly as rosters.

STATE_FIELDS = {"round": "whole", "chip": "text", "scores": "object", "destroyed_by": "object",
                "vehicles": "object", "freaks": "object", "terrain": "object"}
VEHICLE_FIELDS = {"armour": "object", "components": "object", "burning": "flag", "destroyed": "flag",
                  "removed": "flag", "pending": "object", "last_gate": "text", "last_driver": "text"}
PENDING_FIELDS = {"table": "text", "result": "whole", "heading_deg": "number"}
FREAK_FIELDS = {"wounds": "whole", "out": "flag", "down": "flag", "moved": "flag", "aboard": "marker",
                "seat": "text", "at": "point", "drove_before": "marker"}
TERRAIN_FIELDS = {"breached": "any", "wall_armour": "object", "burning": "flag", "offset_mm": "point"}
#: The hit tables' results that wait for the driver's next turn (a pending hit).
WAITING = {"glancing": D.PENDING_GLANCING, "penetrating": (4,), "bike": (2,)}
#: Those that slide "in its last direction of movement", which the block must give.
SLIDES = {("glancing", 6), ("penetrating", 4)}




def _whole(where: str, value, low: int, high: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < low or (high is not None and value > high):
        span = f"from {low} to {high}" if high is not None else f"of {low} or more"
        raise RulesError(f"{where} must be a whole number {span}, not {value!r}")
    return value


def start_part_way(state: GameState, block: dict, chips_declared: bool) -> None:
    """Set what play reached: damage, fire, hits waiting, wounds, who is where, last gates,
    breaches, scores, the round and the chips. Raises RulesError naming the first thing wrong,
    with its path in the block (nothing is half set: the caller builds the game anew)."""
    check_block("state", STATE_FIELDS, block)
    gates = {g.name for g in state.gates}
    for key, spec in (block.get("vehicles") or {}).items():
        where = f"state.vehicles.{key}"
        if not str(key).lstrip("-").isdigit() or int(key) not in state.vehicles:
            raise RulesError(f"{where}: no vehicle with marker {key} (vehicles: "
                             f"{', '.join(str(m) for m in state.vehicles)})")
        v = state.vehicles[int(key)]
        check_block(where, VEHICLE_FIELDS, spec)
        for facing, value in (spec.get("armour") or {}).items():
            w = f"{where}.armour.{facing}"
            if facing not in D.ARMOUR_FACINGS:
                raise RulesError(f"{w}: armour facings are {', '.join(D.ARMOUR_FACINGS)}")
            if v.kind.hit_table == "bike" and value != v.armour_of(facing):
                raise RulesError(f"{w}: a {v.type} never loses armour ({D.sec('Vehicles')}); it has "
                                 f"{v.armour_of(facing)}")
            v.armour[facing] = _whole(w, value, 0, v.armour_of(facing))
        for name, status in (spec.get("components") or {}).items():
            w = f"{where}.components.{name}"
            c = next((c for c in v.components if c.name == name), None)
            if c is None:
                raise RulesError(f"{w}: the {v.name} has no component '{name}' (it has: "
                                 f"{', '.join(c.name for c in v.components) or 'none'})")
            if status not in ("working", "damaged", "destroyed"):
                raise RulesError(f"{w} must be working, damaged or destroyed, not {status!r}")
            c.status = status
        for flag in ("burning", "destroyed", "removed"):
            if spec.get(flag) is not None:
                setattr(v, flag, spec[flag])
        if v.removed:
            v.destroyed = True              # removed from play: a wreck gone from the table
        if "pending" in spec:
            p = spec["pending"]
            v.pending, v.pending_table, v.pending_heading, v.pending_since = 0, "", None, state.activation
            if p is not None:
                w = f"{where}.pending"
                check_block(w, PENDING_FIELDS, p)
                table, n = p.get("table"), p.get("result")
                if table not in WAITING:
                    raise RulesError(f"{w}.table must be one of {', '.join(WAITING)}, not {table!r}")
                if (table == "bike") != (v.kind.hit_table == "bike"):
                    raise RulesError(f"{w}.table: the {v.name} ({v.type}) takes "
                                     + ("bike" if v.kind.hit_table == "bike" else "glancing and penetrating") + " hits")
                if n not in WAITING[table]:
                    raise RulesError(f"{w}.result: of the {table} table only {', '.join(map(str, WAITING[table]))} wait "
                                     f"for the driver's next turn, not {n!r}")
                if ((table, n) in SLIDES) != (p.get("heading_deg") is not None):
                    raise RulesError(f"{w}.heading_deg: " + (
                        "a rollover moves \"in its last direction of movement\": give the heading it travelled "
                        "before it rolled" if (table, n) in SLIDES else "only a rollover has one"))
                v.pending, v.pending_table = n, table
                v.pending_heading = None if p.get("heading_deg") is None else float(p["heading_deg"])
        if "last_gate" in spec:
            if spec["last_gate"] is not None and spec["last_gate"] not in gates:
                raise RulesError(f"{where}.last_gate: no gate '{spec['last_gate']}' (gates: "
                                 f"{', '.join(sorted(gates)) or 'none'})")
            v.last_gate = spec["last_gate"]
        if spec.get("last_driver") is not None:
            if spec["last_driver"] not in state.freaks:
                raise RulesError(f"{where}.last_driver: no freak '{spec['last_driver']}'")
            f = state.freaks[spec["last_driver"]]
            v.last_driver, v.last_team = f.id, f.player
    for name, spec in (block.get("terrain") or {}).items():
        where = f"state.terrain.{name}"
        if name not in state.terrain:
            raise RulesError(f"{where}: no terrain '{name}' (there is: {', '.join(state.terrain) or 'none'})")
        t = state.terrain[name]
        check_block(where, TERRAIN_FIELDS, spec)
        walls = len(t.points)
        for key in ("breached", "wall_armour", "burning"):
            if spec.get(key) is not None and t.kind != "building":
                raise RulesError(f"{where}.{key}: {name} is {t.kind}, not a building")
        if spec.get("offset_mm") is not None:
            if t.kind != "barrier":
                raise RulesError(f"{where}.offset_mm: only a normal barrier is knocked away; {name} is {t.kind}")
            t.offset_mm = (float(spec["offset_mm"][0]), float(spec["offset_mm"][1]))
        for k, value in (spec.get("wall_armour") or {}).items():
            w = f"{where}.wall_armour.{k}"
            if not str(k).isdigit() or int(k) >= walls:
                raise RulesError(f"{w}: {name}'s walls are numbered 0 to {walls - 1}")
            t.wall_armour[int(k)] = _whole(w, value, 0, D.BUILDING_ARMOUR)
        if spec.get("burning") is not None:
            t.burning = spec["burning"]
        if spec.get("breached") is not None:
            b = spec["breached"]
            if not isinstance(b, list) or len(set(map(repr, b))) != len(b):
                raise RulesError(f"{where}.breached must be a list of different wall numbers, not {b!r}")
            t.breached = [_whole(f"{where}.breached", k, 0, walls - 1) for k in b]
            if len(t.breached) >= D.RUBBLE_AFTER_BREACHES:
                # "If more than 1 wall of the building is breached, it is reduced to rubble".
                t.kind = "rubble"
    for name, spec in (block.get("freaks") or {}).items():
        where = f"state.freaks.{name}"
        if name not in state.freaks:
            raise RulesError(f"{where}: no freak '{name}' (freaks: {', '.join(state.freaks)})")
        f = state.freaks[name]
        check_block(where, FREAK_FIELDS, spec)
        if spec.get("aboard") is not None and spec.get("at") is not None:
            raise RulesError(f"{where}: aboard a vehicle or 'at' a spot on foot, not both")
        if spec.get("seat") is not None and spec.get("aboard") is None:
            raise RulesError(f"{where}.seat: a seat is in a vehicle: say which ('aboard')")
        if spec.get("aboard") is not None:
            if spec["aboard"] not in state.vehicles:
                raise RulesError(f"{where}.aboard: no vehicle with marker {spec['aboard']}")
            seat = spec.get("seat", "passenger")
            if seat not in ("driver", "passenger", "clinging"):
                raise RulesError(f"{where}.seat must be driver, passenger or clinging, not {seat!r}")
            f.aboard, f.seat, f.pos = spec["aboard"], seat, None
        elif spec.get("at") is not None:
            f.aboard, f.seat, f.pos = None, None, (float(spec["at"][0]), float(spec["at"][1]))
        if spec.get("wounds") is not None:
            f.wounds = _whole(f"{where}.wounds", spec["wounds"], 1, D.WOUNDS)
        if spec.get("out"):
            if spec.get("wounds") is not None or spec.get("aboard") is not None or spec.get("at") is not None:
                raise RulesError(f"{where}: a freak out of the game has no wounds left and is nowhere: "
                                 f"give 'out' alone")
            f.out, f.wounds, f.aboard, f.seat, f.pos = True, 0, None, None, None
        if spec.get("down") is not None:
            f.down = spec["down"]
        if spec.get("moved") is not None:
            f.moved = spec["moved"]
        if spec.get("drove_before") is not None:
            if spec["drove_before"] not in state.vehicles:
                raise RulesError(f"{where}.drove_before: no vehicle with marker {spec['drove_before']}")
            f.drove_before = spec["drove_before"]
    # Who sits where, once everybody is placed: one driver a vehicle, a bike's single seat.
    for v in state.vehicles.values():
        drivers = state.aboard(v.marker, "driver")
        if len(drivers) > 1:
            raise RulesError(f"state.freaks: the {v.name} has two drivers ({', '.join(f.id for f in drivers)})")
        if v.kind.seats is not None and len(state.inside(v.marker)) > v.kind.seats:
            raise RulesError(f"state.freaks: the {v.name} is a single-occupant {v.type}")
        if drivers and not (block.get("vehicles") or {}).get(str(v.marker), {}).get("last_driver"):
            v.last_team, v.last_driver = drivers[0].player, drivers[0].id
            drivers[0].drove_before = v.marker
    if block.get("round") is not None:
        state.round = _whole("state.round", block["round"], 0, D.ROUNDS)
    for key in ("scores", "destroyed_by"):
        for player, value in (block.get(key) or {}).items():
            if player not in state.players:
                raise RulesError(f"state.{key}.{player}: no player '{player}' (players: {', '.join(state.players)})")
            getattr(state, key)[player] = _whole(f"state.{key}.{player}", value, 0)
    # The round under way: the chips of the freaks who have not moved are still in the bag.
    moved = [f for f in state.freaks.values() if f.moved]
    if (moved or block.get("chip") is not None) and state.round == 0:
        raise RulesError("state.round: a freak has moved (or a chip is drawn) in round 0; say which round it is")
    for f in moved:
        if f.out:
            raise RulesError(f"state.freaks.{f.id}.moved: he is out of the game")
    if moved or block.get("chip") is not None:
        state.bag = [f.player for p in state.players for f in state.alive(p) if not f.moved]
        chip = block.get("chip")
        if chip is not None:
            if chips_declared:
                raise RulesError("state.chip: with chips declared (option chip_draw) no chip waits drawn: the "
                                 "first action of a freak names it")
            if chip not in state.bag:
                raise RulesError(f"state.chip: {chip} has no freak left to move this round")
            state.bag.remove(chip)
            state.chip = chip
        elif not chips_declared and state.bag:
            raise RulesError("state.chip: the round is under way and chips are drawn by hand (option chip_draw): "
                             "say whose chip is out of the bag now")

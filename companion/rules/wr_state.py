"""Wasteland Rally: teams (rosters) and the game's state.

A roster (JSON) is one player's team (wasteland-rally.txt, "Building Your Team"):

    {"player": "Max", "points": 50,            # or "size": "small" | "medium" | "large"
     "pool": 4,                                 # campaign only: the points pool
     "vehicles": [
       {"marker": 10, "name": "Rustler", "type": "car",
        "weapons": [{"weapon": "heavy_machine_gun", "mods": ["stabilised"]}, "spiked_ram"],
        "upgrades": ["boost"], "driver": "marksman"}]}

Weapons are keys of `wr_data.WEAPONS` (a bare string or `{"weapon", "mods"}`);
upgrades of `VEHICLE_UPGRADES`; the driver upgrade of `DRIVER_UPGRADES`.
Every mistake is a RulesError naming the roster, the vehicle and the rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..geometry import Footprint, Gate, Pose, Terrain
from . import wr_data as D
from .base import RulesError


@dataclass
class Weapon:
    key: str
    mods: list[str] = field(default_factory=list)

    @property
    def kind(self) -> D.WeaponType:
        return D.WEAPONS[self.key]

    @property
    def name(self) -> str:
        return self.kind.name

    @property
    def special(self) -> tuple[str, ...]:
        s = list(self.kind.special)
        if "improved_sights" in self.mods:
            s += ["Accurate", "Rending (1)"]
        if "turret_mount" in self.mods:
            s.append("Turret Mount")
        return tuple(s)

    @property
    def range_in(self) -> int:
        return self.kind.range_in + (D.STABILISED_RANGE_IN if "stabilised" in self.mods else 0)

    @property
    def damage(self) -> int | None:
        d = self.kind.damage
        return None if d is None else d + (1 if "inferno_ammo" in self.mods else 0)

    @property
    def piercing(self) -> int:
        p = self.kind.piercing or 0
        return p + (1 if "armour_piercing" in self.mods else 0)

    def cost(self, surcharge: str = "per_modification") -> int:
        """Its points with its modifications; a weapon of 4 or more points pays 1 more for each
        modification ("per_modification") or once for being modified ("once_per_weapon")."""
        base = self.kind.points
        costly = base >= D.COSTLY_WEAPON_POINTS and self.mods
        extra = 0
        if costly:
            extra = D.COSTLY_MODIFICATION_SURCHARGE * (len(self.mods) if surcharge == "per_modification" else 1)
        return base + sum(D.MODIFICATIONS[m] for m in self.mods) + extra

    def to_json(self) -> dict:
        return {"weapon": self.key, "mods": list(self.mods)}


@dataclass
class Vehicle:
    marker: int
    name: str
    owner: str
    type: str
    weapons: list[Weapon]
    upgrades: list[str]
    driver: str | None
    length_mm: float
    width_mm: float
    hp: int = 0
    max_hp: int = 0
    pose: Pose | None = None
    #: Where it stood when its activation could begin (the round's start, the last activation's end,
    #: its last move or reposition): a move is judged from here, not from where the camera sees it now.
    stood: Pose | None = None
    destroyed: bool = False
    eliminated: bool = False
    finished: int | None = None          # finishing position, 1 first
    stress: int = 0
    damaged_this_round: bool = False
    ever_damaged: bool = False
    boost_used: bool = False
    progress: int = 0                     # how many gates of the sequence it has crossed
    # this activation
    recovered: bool = False
    moved: str | None = None              # "forward" / "backward"
    advanced: bool = False
    attacked: list[str] = field(default_factory=list)

    @property
    def kind(self) -> D.VehicleType:
        return D.VEHICLE_TYPES[self.type]

    @property
    def in_play(self) -> bool:
        return not (self.destroyed or self.eliminated or self.finished is not None)

    @property
    def badly_damaged(self) -> bool:
        """Lost more than half its original hit points (VEHICLES, "Vehicle Restrictions")."""
        return (self.max_hp - self.hp) * 2 > self.max_hp

    def footprint(self, pose: Pose | None = None) -> Footprint:
        p = pose or self.pose
        if p is None:
            raise RulesError(f"the {self.name} is not on the table")
        return Footprint(self.marker, p, self.length_mm, self.width_mm, self.name)

    def weapon(self, key: str) -> Weapon:
        for w in self.weapons:
            if w.key == key:
                return w
        raise RulesError(f"the {self.name} has no {key.replace('_', ' ')} "
                         f"(it carries: {', '.join(w.name for w in self.weapons) or 'no weapons'})")

    def status(self) -> str:
        if self.destroyed:
            return "destroyed"
        if self.eliminated:
            return "eliminated"
        if self.finished is not None:
            return f"finished {self.finished}"
        return "in play"


@dataclass
class GameState:
    players: list[str]
    vehicles: dict[int, Vehicle]
    table_mm: tuple[float, float]
    terrain: list[Terrain]
    gates: dict[str, Gate]
    mission: str
    sequence: list[str]                       # gate names, in the order they must be crossed
    round: int = 0
    orders: dict[str, list[int | None]] = field(default_factory=dict)   # play order slots; None: blank
    initiative: list[str] = field(default_factory=list)   # players, in the round's turn order
    up: str | None = None                    # the player whose turn it is to activate
    active_marker: int | None = None
    activated: list[int] = field(default_factory=list)
    elimination_index: int | None = None     # index into `sequence` of the elimination gate
    finish_order: list[int] = field(default_factory=list)
    crossed_finish: list[int] = field(default_factory=list)   # this round, not yet ranked
    eliminated_order: list[int] = field(default_factory=list)
    pending: list[dict] = field(default_factory=list)          # lost control: repositions owed
    scores: dict[str, int] = field(default_factory=dict)
    pools: dict[str, int] = field(default_factory=dict)
    gate_firsts: dict[int, int] = field(default_factory=dict)  # arena race: sequence index -> marker
    removed_terrain: list[str] = field(default_factory=list)
    over: bool = False
    winner: str | None = None
    upgrade_stage_done: bool = False
    setup_notes: list[str] = field(default_factory=list)

    def vehicle(self, marker: int) -> Vehicle:
        if marker not in self.vehicles:
            raise RulesError(f"there is no vehicle {marker}")
        return self.vehicles[marker]

    @property
    def active(self) -> Vehicle | None:
        return self.vehicles.get(self.active_marker) if self.active_marker is not None else None

    def live_terrain(self) -> list[Terrain]:
        return [t for t in self.terrain if t.name not in self.removed_terrain]

    def in_play(self) -> list[Vehicle]:
        return [v for v in self.vehicles.values() if v.in_play and v.pose is not None]

    def to_json(self) -> dict:
        return {
            "mission": self.mission, "round": self.round, "up": self.up,
            "active": self.active_marker, "activated": sorted(self.activated),
            "initiative": list(self.initiative),
            "orders": {p: list(o) for p, o in self.orders.items()},
            "sequence": list(self.sequence),
            "elimination_gate": (None if self.elimination_index is None or self.elimination_index >= len(self.sequence)
                                 else {"index": self.elimination_index + 1,
                                       "gate": self.sequence[self.elimination_index]}),
            "finish_order": list(self.finish_order), "eliminated": list(self.eliminated_order),
            "pending": [dict(p) for p in self.pending],
            "scores": dict(sorted(self.scores.items())), "pools": dict(sorted(self.pools.items())),
            "removed_terrain": list(self.removed_terrain),
            "first_across": {str(k + 1): m for k, m in sorted(self.gate_firsts.items())},
            "crossed_finish": list(self.crossed_finish),
            "over": self.over, "winner": self.winner, "setup_notes": list(self.setup_notes),
            "vehicles": {str(m): {
                "name": v.name, "owner": v.owner, "type": v.type, "hp": v.hp, "max_hp": v.max_hp,
                "status": v.status(), "stress": v.stress, "progress": v.progress, "finished": v.finished,
                "boost_used": v.boost_used,
                "pose": None if v.pose is None else [round(v.pose.x_mm, 2), round(v.pose.y_mm, 2),
                                                     round(v.pose.heading_deg, 2)],
                "stood": None if v.stood is None else [round(v.stood.x_mm, 2), round(v.stood.y_mm, 2),
                                                       round(v.stood.heading_deg, 2)],
            } for m, v in sorted(self.vehicles.items())},
        }


# --- rosters ------------------------------------------------------------------------

def _weapon(spec, where: str) -> Weapon:
    if isinstance(spec, str):
        spec = {"weapon": spec}
    if not isinstance(spec, dict) or spec.get("weapon") not in D.WEAPONS:
        got = spec.get("weapon") if isinstance(spec, dict) else spec
        raise RulesError(f"{where}: unknown weapon {got!r} (one of {', '.join(D.WEAPONS)}; "
                         f"{D.RULEBOOK}, \"Weapon Upgrades\")")
    w = Weapon(spec["weapon"], list(spec.get("mods", [])))
    for m in w.mods:
        if m not in D.MODIFICATIONS:
            raise RulesError(f"{where}: unknown modification {m!r} for the {w.name} (one of "
                             f"{', '.join(D.MODIFICATIONS)}; {D.RULEBOOK}, \"Weapon Modifications\")")
    if w.mods and w.kind.category != "ranged":
        raise RulesError(f"{where}: the {w.name} is a {w.kind.category} weapon; only ranged weapons may be "
                         f"modified ({D.RULEBOOK}, \"Weapon Modifications\")")
    if len(set(w.mods)) != len(w.mods):
        raise RulesError(f"{where}: a modification is listed twice on the {w.name}")
    for m in w.mods:
        if m in D.NOT_FOR_FLAMETHROWER and w.key == "flamethrower":
            raise RulesError(f"{where}: {m.replace('_', ' ')} cannot be taken for a flamethrower "
                             f"({D.RULEBOOK}, \"Weapon Modifications\")")
    return w


def vehicle_cost(v: Vehicle, surcharge: str = "per_modification") -> int:
    return (v.kind.points + sum(w.cost(surcharge) for w in v.weapons) + sum(D.VEHICLE_UPGRADES[u] for u in v.upgrades)
            + (D.DRIVER_UPGRADES[v.driver] if v.driver else 0))


def build_team(roster: dict, second_weapon: str, markers_taken: set[int],
               sizes: dict[int, tuple[float, float]], surcharge: str = "per_modification") -> list[Vehicle]:
    """A player's vehicles from their roster; every broken rule named, with its numbers."""
    player = roster.get("player")
    if not isinstance(player, str) or not player:
        raise RulesError("a roster needs a 'player' name")
    where = f"roster of {player}"
    specs = roster.get("vehicles")
    if not isinstance(specs, list) or not specs:
        raise RulesError(f"{where}: no 'vehicles'")
    team: list[Vehicle] = []
    for n, spec in enumerate(specs):
        name = spec.get("name") or f"vehicle #{n + 1}"
        w = f"{where}, {name}"
        vtype = spec.get("type")
        if vtype not in D.VEHICLE_TYPES:
            raise RulesError(f"{w}: type must be one of {', '.join(D.VEHICLE_TYPES)}, not {vtype!r} "
                             f"({D.RULEBOOK}, \"Vehicle Types\")")
        marker = spec.get("marker")
        if not isinstance(marker, int) or isinstance(marker, bool):
            raise RulesError(f"{w}: needs its roof 'marker' id")
        if marker in markers_taken:
            raise RulesError(f"{w}: marker {marker} is already another vehicle's")
        markers_taken.add(marker)
        weapons = [_weapon(x, w) for x in spec.get("weapons", [])]
        if len(weapons) > 2:
            raise RulesError(f"{w}: {len(weapons)} weapons; a vehicle carries one ranged weapon and one other "
                             f"({D.RULEBOOK}, \"Weapon Upgrades\")")
        ranged = [x for x in weapons if x.kind.category == "ranged"]
        if len(weapons) == 2:
            if not ranged:
                raise RulesError(f"{w}: two weapons but no ranged one ({weapons[0].name}, {weapons[1].name}); "
                                 f"a vehicle takes one ranged weapon and one other ({D.RULEBOOK}, "
                                 f"\"Weapon Upgrades\")")
            if len(ranged) == 2 and second_weapon == "not_ranged":
                raise RulesError(f"{w}: two ranged weapons; with second_weapon 'not_ranged' the other weapon "
                                 f"must be melee or dropped ({D.RULEBOOK}, \"Weapon Upgrades\")")
        if len({x.key for x in weapons}) != len(weapons):
            raise RulesError(f"{w}: the same weapon twice ({D.RULEBOOK}, \"Weapon Upgrades\")")
        upgrades = list(spec.get("upgrades", []))
        for u in upgrades:
            if u not in D.VEHICLE_UPGRADES:
                raise RulesError(f"{w}: unknown vehicle upgrade {u!r} (one of {', '.join(D.VEHICLE_UPGRADES)}; "
                                 f"{D.RULEBOOK}, \"Vehicle Upgrades\")")
        if len(set(upgrades)) != len(upgrades):
            raise RulesError(f"{w}: a vehicle upgrade is listed twice")
        up_points = sum(D.VEHICLE_UPGRADES[u] for u in upgrades)
        if up_points > D.VEHICLE_UPGRADE_CAP:
            raise RulesError(f"{w}: vehicle upgrades total {up_points} points "
                             f"({', '.join(f'{u} {D.VEHICLE_UPGRADES[u]}' for u in upgrades)}); at most "
                             f"{D.VEHICLE_UPGRADE_CAP} are allowed ({D.RULEBOOK}, \"Vehicle Upgrades\")")
        driver = spec.get("driver")
        if isinstance(driver, list):
            if len(driver) > 1:
                raise RulesError(f"{w}: {len(driver)} driver upgrades; each vehicle is permitted one "
                                 f"({D.RULEBOOK}, \"Driver Upgrades\")")
            driver = driver[0] if driver else None
        if driver is not None and driver not in D.DRIVER_UPGRADES:
            raise RulesError(f"{w}: unknown driver upgrade {driver!r} (one of {', '.join(D.DRIVER_UPGRADES)}; "
                             f"{D.RULEBOOK}, \"Driver Upgrades\")")
        length, width = sizes.get(marker, (spec.get("length_mm", 75.0), spec.get("width_mm", 32.0)))
        v = Vehicle(marker, name, player, vtype, weapons, upgrades, driver, float(length), float(width))
        v.max_hp = v.kind.hit_points + (D.STURDY_HP if "sturdy" in upgrades else 0)
        v.hp = int(spec.get("hp", v.max_hp))
        if not 0 <= v.hp <= v.max_hp:
            raise RulesError(f"{w}: hp {v.hp} is not between 0 and its {v.max_hp}")
        v.destroyed = v.hp == 0           # a game taken up part way: a wreck
        v.ever_damaged = v.hp < v.max_hp
        v.progress = int(spec.get("gates_crossed", 0))
        v.boost_used = bool(spec.get("boost_used", False))
        team.append(v)
    total = sum(vehicle_cost(v, surcharge) for v in team)
    size = roster.get("size")
    limit = roster.get("points")
    if size is not None:
        if size not in D.GAME_SIZES:
            raise RulesError(f"{where}: size must be one of {', '.join(D.GAME_SIZES)}, not {size!r}")
        (lo, hi), limit = D.GAME_SIZES[size]
        if not lo <= len(team) <= hi:
            raise RulesError(f"{where}: {len(team)} vehicles; a {size} game has {lo}-{hi} "
                             f"({D.RULEBOOK}, \"One-Off Game\")")
    if limit is not None and total > limit:
        parts = ", ".join(f"{v.name} {vehicle_cost(v, surcharge)}" for v in team)
        raise RulesError(f"{where}: the team costs {total} points ({parts}), over its {limit} "
                         f"({D.RULEBOOK}, \"Building Your Team\")")
    return team


def campaign_roster(roster: dict) -> dict:
    """A campaign roster checked ("Creating a Roster"): 8-10 vehicles, at most 100 points,
    one weapon upgrade each and no other upgrades; up to 10 unspent points go to the pool."""
    player = roster.get("player", "?")
    where = f"campaign roster of {player}"
    team = build_team({**roster, "points": None, "size": None}, "any_category", set(), {})
    lo, hi = D.CAMPAIGN_VEHICLES
    if not lo <= len(team) <= hi:
        raise RulesError(f"{where}: {len(team)} vehicles; a campaign roster has {lo}-{hi} "
                         f"({D.RULEBOOK}, \"Creating a Roster\")")
    for v in team:
        if len(v.weapons) > 1 or any(w.mods for w in v.weapons) or v.upgrades or v.driver:
            raise RulesError(f"{where}, {v.name}: a campaign vehicle starts with one weapon upgrade and no "
                             f"other upgrades ({D.RULEBOOK}, \"Creating a Roster\")")
    spent = sum(vehicle_cost(v) for v in team)
    if spent > D.CAMPAIGN_POINTS:
        raise RulesError(f"{where}: the roster costs {spent} points, over {D.CAMPAIGN_POINTS} "
                         f"({D.RULEBOOK}, \"Creating a Roster\")")
    return {"player": player, "vehicles": len(team), "spent": spent,
            "pool": min(D.CAMPAIGN_POINTS - spent, D.CAMPAIGN_POOL_KEEP)}

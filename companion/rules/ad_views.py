"""Alpha Destructicus as the page shows it: a vehicle's card, what to draw for it
(how far it may still go, its weapons' reach), the targets it could shoot with
their measurements (range, facing, sight), and the actions of the freaks aboard
or near it, with their fields.  Read only: it changes nothing.
"""

from __future__ import annotations

import math

import shapely

from ..geometry import around, closest_distance, inches
from ..geometry.pose import MM_PER_IN
from . import ad_data as D
from .actions import ActionSpec, Field
from .base import RulesError, polygon_rings


def _jump_span(most_mm: float) -> tuple[float, float]:
    """The least and the most a driver may state for a jump whose most is `most_mm` ("Jumping": "up
    to the maximum possible jump", "not ... less than ½ the maximum"), in the hundredths of an inch
    the page shows: half rounded up, the most rounded down (an offer rounded up past the most, 11.31
    for 11.307, was then refused as over it)."""
    most_in = math.floor(most_mm / MM_PER_IN * 100 + 1e-6) / 100
    least_in = math.ceil(most_mm / 2 / MM_PER_IN * 100 - 1e-6) / 100
    return min(least_in, most_in), most_in


def _point(xy):
    return shapely.Point(float(xy[0]), float(xy[1]))


class AlphaDestructicusViews:
    """Mixed into AlphaDestructicus: the hooks the page calls."""

    def condition(self, state, marker: int) -> str | None:
        """A vehicle's damage as the book keeps it, on its components ("Damage"): how many
        still work, which are damaged or destroyed, and whether it burns; or that it is gone."""
        v = state.vehicles.get(marker)
        if v is None:
            return None
        if v.removed:
            # The book's words: "Remove the wreck from play after the explosion"; cavalry and
            # jetpacks "are removed from play".
            return "removed from play" if v.type in ("cavalry", "jetpack") else "wreck removed from play"
        if v.destroyed:
            return "destroyed" + (", burning" if v.burning else "")
        working = sum(c.status == "working" for c in v.components)
        hurt = [f"{c.name} {c.status}" for c in v.components if c.status != "working"]
        return (f"{working} of {len(v.components)} components working" + (f" ({', '.join(hurt)})" if hurt else "")
                + (", burning" if v.burning else ""))

    def card(self, state, marker: int) -> dict:
        v = state.vehicle(marker)
        driver = state.driver(marker)
        status = "removed" if v.removed else "destroyed" if v.destroyed else \
            "working" if v.functional else "not working (engine)"
        return {
            "marker": v.marker, "name": v.name, "type": v.type, "status": status, "burning": v.burning,
            "active": state.active is v, "controller": driver.player if driver else None,
            "armour": dict(v.armour), "components": [c.to_json() for c in v.components],
            "driver": driver.id if driver else None,
            "aboard": [{"freak": f.id, "player": f.player, "seat": f.seat, "wounds": f.wounds, "down": f.down}
                       for f in state.aboard(marker)],
            "pending": self._pending_words(v) if v.pending else None,
            "last_gate": v.last_gate, "base_move_in": v.kind.base_move_in, "turning": v.kind.turn,
            "scores": dict(state.scores), "round": state.round, "chip": state.chip, "acting": state.acting,
            # Where the driver deciding how far to go sees it, not only in the log after his turn.
            "speed_freak": self._speed_freak_reminder(state, v),
            "rule": D.sec("Vehicles"),
        }

    def _speed_freak_reminder(self, state, v, cite: bool = True) -> str | None:
        """ "Speed Freak: A Freak who is in a vehicle must ALWAYS move at least 6\" in that vehicle if
        possible" ("Characters"), while the freak acting drives this vehicle and it still falls short:
        the same test the end of his turn makes (`_speed_freak_short`). None otherwise."""
        if state.acting is None or state.active is not v:
            return None
        f = state.freaks[state.acting]
        if not self._speed_freak_short(state, f):
            return None
        return (f"{f.id} must drive the {v.name} at least 6 in this turn if possible "
                f"({state.ground_mm / MM_PER_IN:.1f} in so far" + (f"; {D.sec('Characters')})" if cite else ")"))

    def overlays(self, state, marker: int) -> dict:
        """How far the vehicle may still drive this turn (a ring round it), and each weapon's reach."""
        v = state.vehicle(marker)
        if not v.on_table or not v.in_play:
            return {"move_regions": [], "arcs": []}
        fp = v.footprint()
        regions = []
        name = "reach this turn"
        if state.active is v and state.drove == v.marker:
            left = 0.0 if state.stopped else max(state.budget_mm - state.spent_mm, 0.0)
        else:
            left = inches(v.kind.base_move_in)
        if not v.functional:
            # A drive is refused until the engine works ("If the engine of a vehicle is not repaired,
            # the vehicle may not move"): a destroyed engine never will; a broken one only after a
            # repair, which a freak aboard may still try this turn ("walk 6", climb into a vehicle,
            # repair the engine, and start driving all in the same turn").
            e = v.engine
            can_fix = e is not None and e.status == "damaged" and \
                (state.active is not v or (state.exclusive is None and state.drove is None))
            left, name = (left, "reach once the engine is repaired") if can_fix else (0.0, name)
        if left > 0:
            regions.append({"name": name, "polygons": polygon_rings(around(fp, left)),
                            "sigma_mm": round(fp.pose.axis_sigma_mm, 3), "left_in": round(left / MM_PER_IN, 2)})
        arcs = [{"mount": c.name, "jammed": c.status != "working", "range_in": c.range_in,
                 "polygons": polygon_rings(around(fp, inches(c.range_in)))}
                for c in v.components if c.kind == "weapon"]
        return {"move_regions": regions, "arcs": arcs}

    def targets(self, state, marker: int, terrain=()) -> list[dict]:
        """Every other vehicle on the table: edge-to-edge distance against each weapon's range,
        the facing a shot would strike, and line of sight (forests, buildings)."""
        v = state.vehicle(marker)
        if not v.on_table or not v.in_play:
            return []
        me = v.footprint()
        out = []
        for o in state.vehicles.values():
            if o.marker == marker or not o.on_table or not o.in_play:
                continue
            them = o.footprint()
            dist = closest_distance(me, them)
            facing, verdict, note = self._facing(state, o, self._attack_point(me, None, o), me.pose.axis_sigma_mm,
                                                 f"the {v.name}")
            sight = self._sight(state, me, them)
            weapons, best = [], None
            for c in v.components:
                if c.kind == "weapon":
                    r = dist.within(inches(c.range_in), f"range of the {c.name}")
                    weapons.append({"weapon": c.name, "working": c.status == "working", **r.to_json()})
                    if c.status == "working" and (best is None or r.margin_mm > best.margin_mm):
                        best = r
            out.append({
                "marker": o.marker, "name": o.name, "label": o.name,
                "distance_mm": round(dist.distance_mm, 2), "distance_in": round(dist.distance_mm / MM_PER_IN, 3),
                "sigma_mm": round(dist.sigma_mm, 3),
                "line": [list(map(float, dist.from_point)), list(map(float, dist.to_point))],
                "facing": {"facing": facing, "armour": o.armour_of(facing), **verdict.to_json(), "note": note},
                "weapons": weapons, "arcs": [],
                **({"range": best.to_json(), "range_text": best.describe()} if best is not None else {}),
                "sight": {"clear": sight.clear, "blocked_by": list(sight.blocked_by),
                          "line": [list(sight.line[0]), list(sight.line[1])], "needed": True},
                "shootable": sight.clear and any(w["outcome"] != "out" and w["working"] for w in weapons),
            })
        return sorted(out, key=lambda t: t["distance_mm"])

    def board(self, state) -> dict | None:
        """Every freak on foot, drawn where he stands: his walk, a climb in, a grab and a jacking are
        measured from that point, so players see it (an octagon a base across, kind "freak", his
        name on it; "down" while he lies there). Freaks aboard ride on their car's marker. None when
        nobody is on foot."""
        import math
        r = inches(D.FREAK_DRAWN_IN) / 2
        cells = []
        for f in state.freaks.values():
            if not f.on_foot or f.pos is None:
                continue
            x, y = f.pos
            ring = [[round(x + r * math.cos(math.radians(22.5 + 45 * k)), 2),
                     round(y + r * math.sin(math.radians(22.5 + 45 * k)), 2)] for k in range(8)]
            home = self.home_marker(state, f)
            cells.append({"polygon": ring, "label": f.id + (" (down)" if f.down else ""), "kind": "freak",
                          **({"select": home} if home is not None else {})})
        if not cells:
            return None
        return {"cells": cells, "about": "freaks on foot, each where his walk, climbing in, grabbing hold and "
                                         f"jacking are measured from ({D.sec('Characters')})"}

    def evidence(self, state, detail: dict, actor: int | None, target: int | None) -> list[dict]:
        """Besides the closest line to a target: the target's diagonals, which split it into the
        facings a shot or ram strikes ("Shooting"; option facing_from), labelled with the facing
        struck; and a drive's path as the camera followed it."""
        shapes = super().evidence(state, detail, actor, target)
        t = state.vehicles.get(target) if isinstance(target, int) else None
        if t is not None and t.pose is not None and detail.get("act") in ("shoot", "ram", "defend"):
            c = t.footprint().corners.tolist()
            for a, b in ((0, 2), (1, 3)):
                shapes.append({"kind": "line", "points": [c[a], c[b]], "role": "arc",
                               "label": "facing edge"})
        path = detail.get("path")
        if detail.get("act") == "drive" and isinstance(path, list) and len(path) >= 2:
            shapes.append({"kind": "line", "points": [[float(p[0]), float(p[1])] for p in path],
                           "role": "actor", "label": "path driven"})
        return shapes

    def demo_scenery(self, table_mm) -> dict:
        """The demo table's arena (ad_data.DEMO_GATES, DEMO_TERRAIN, scaled from the 1219.2 x 812.8 mm
        demo table to the one given): four gates round the track, one on each side, scored the way
        the cars drive ("The Arena"; "Gate": 4-5 in wide), and the terrain the book has: two
        buildings, a ramp on the track, a forest, a lava pit and a normal barrier ("Terrain")."""
        sx, sy = table_mm[0] / D.DEMO_TABLE_MM[0], table_mm[1] / D.DEMO_TABLE_MM[1]

        def at(p):
            return [round(p[0] * sx, 1), round(p[1] * sy, 1)]
        return {"terrain": [{"name": t["name"], "kind": t["kind"], "points": [at(p) for p in t["points"]]}
                            for t in D.DEMO_TERRAIN],
                "gates": [{"name": g["name"], "role": g["role"], "a_mm": at(g["a_mm"]), "b_mm": at(g["b_mm"])}
                          for g in D.DEMO_GATES]}

    def demo_layout(self, cars, table_mm) -> dict[int, tuple[float, float, float]]:
        """An arena's track round the middle of the table ("The Arena": "an open path going around
        your arena"): cars spread round it anticlockwise, the near side driving +x, the far side -x
        (the way the demo's gates score), one at each end turning."""
        width_mm, depth_mm = table_mm
        spots = [(0.25, 0.2, 0.0), (0.75, 0.8, 180.0), (0.9, 0.5, 90.0), (0.1, 0.5, -90.0), (0.45, 0.2, 0.0),
                 (0.55, 0.8, 180.0), (0.35, 0.8, 180.0), (0.65, 0.2, 0.0)]
        out = {}
        for k, (m, _name, _l, _w) in enumerate(cars):
            fx, fy, h = spots[k % len(spots)]
            lap = k // len(spots)
            out[m] = (fx * width_mm + 40.0 * lap, fy * depth_mm, h)
        return out

    # --- who acts, and from which card ---------------------------------------------------

    def home_marker(self, state, f) -> int | None:
        """The card a freak's actions are listed on: the vehicle he is aboard, or, on foot, the
        vehicle nearest him on the table (a freak has no marker of his own; the page reaches
        him through the car he is in or nearest to)."""
        if f.aboard is not None:
            return f.aboard
        if f.pos is None:
            return None
        near = [(self._dist_to(state, f, v), v.marker) for v in state.vehicles.values() if v.on_table]
        return min(near)[1] if near else None

    def actor_marker(self, state, action: dict) -> int:
        """The car an action is checked against: the one it names (`vehicle`: the car driven,
        boarded, grabbed or jacked), else the acting freak's own card (his car, or the car nearest
        him on foot)."""
        if not isinstance(action, dict):
            raise RulesError("an action is an object with 'act' and its fields")
        marker = action.get("vehicle")
        if isinstance(marker, int) and not isinstance(marker, bool):
            return marker
        if isinstance(marker, str) and marker.strip().lstrip("-").isdigit():
            return int(marker)
        fid = action.get("freak") or state.acting
        if fid is None:
            raise RulesError("say which freak acts ('freak')")
        home = self.home_marker(state, state.freak(str(fid)))
        if home is None:
            raise RulesError(f"{fid} is nowhere on the table")
        return home

    def _movers(self, state) -> list:
        """The freaks who may act now: the acting one, or before anyone is chosen, those of the
        player whose chip was drawn (any player with a chip left, when the table draws real chips)."""
        if state.over or state.round == 0:
            return []
        if state.acting is not None:
            return [state.freaks[state.acting]]
        if self.option("chip_draw") == "declared":
            players = set(state.bag)
        else:
            players = {state.chip} if state.chip is not None else set()
        return [f for f in state.freaks.values() if not f.out and not f.moved and f.player in players]

    def actions(self, state, marker: int) -> list[ActionSpec]:
        """The actions freaks can take now with this vehicle, or, for a freak on foot, from the
        card of the vehicle nearest him. Every action of the rulebook is here when it applies
        (a first action of the drawn player's freak makes him the one who moves)."""
        v = state.vehicle(marker)
        if state.over or not v.on_table:
            return []
        movers = self._movers(state)
        acting = state.freaks[state.acting] if state.acting is not None else None
        specs: list[ActionSpec] = []
        fixed = Field("vehicle", "fixed", "vehicle", value=marker)

        def who(fs, label="freak"):
            return Field("freak", "choice", label, choices=tuple(
                {"value": f.id, "label": f"{f.id} ({f.player}, {f.seat or 'on foot'})"} for f in fs))

        others = tuple({"value": o.marker, "label": o.name} for o in state.vehicles.values()
                       if o.marker != marker and o.on_table and o.in_play)
        home = [f for f in movers if self.home_marker(state, f) == marker]
        on_foot_home = [f for f in home if f.on_foot]
        if state.acting is None and home:
            specs.append(ActionSpec("activate", "Move this freak", (who(home),), "freak", D.sec("The Turn"),
                                    "The drawn chip goes on him: he is the one who moves this turn (and gets up, "
                                    "if he was down)."))
        buildings = tuple({"value": t.name, "label": t.name} for t in state.terrain.values() if t.kind == "building")
        if on_foot_home:
            fields = [who(on_foot_home), Field("to", "table_point", "where he walks to")]
            if len(buildings) >= 2:
                fields += [Field("teleport_in", "choice", "in through a door of", choices=buildings, optional=True),
                           Field("teleport_out", "choice", "and out of a door of", choices=buildings, optional=True)]
            specs.append(ActionSpec("walk", "Walk", tuple(fields), "freak", D.sec("Characters"),
                                    "Up to 6 in on foot; through one building's door and out of another's "
                                    f"(Building Teleporter, {D.sec('Terrain')})."))
            inside = [f for f in on_foot_home if f.pos is not None and any(
                t.kind == "building" and t.polygon.contains(_point(f.pos)) for t in state.terrain.values())]
            if inside and buildings:
                targets = tuple({"value": o.marker, "label": o.name} for o in state.vehicles.values()
                                if o.on_table and o.in_play)
                specs.append(ActionSpec("defend", "Building guns", (
                    who(inside), Field("building", "choice", "the building he is in", choices=buildings),
                    Field("target", "choice", "at", choices=targets)), "freak", D.sec("Terrain"),
                    "Building Defenses: 12 in, strength 1, on the target's top armour."))
        # Getting out (of a wreck too); "A clinging freak may let go at any time without penalty".
        leavers = [f for f in state.aboard(marker) if f in movers or f.seat == "clinging"]
        if leavers:
            specs.append(ActionSpec("leave", "Get out / let go", (
                who(leavers), Field("to", "table_point", "the spot he steps to", optional=True)),
                "freak", D.sec("The Turn"), "A clinging freak may let go at any time."))
        if not v.in_play:
            return specs
        # Climbing in, grabbing hold, jacking: freaks near this vehicle, whatever card is theirs.
        reach = inches(D.OBSESSION_IN)
        boarders = [f for f in movers if (f.on_foot and f.pos is not None and self._dist_to(state, f, v) <= reach)
                    or (f.aboard == marker and f.seat == "clinging")]
        if boarders:
            specs.append(ActionSpec("board", "Climb in", (who(boarders), fixed, Field(
                "seat", "choice", "seat", choices=({"value": "driver", "label": "driver"},
                                                   {"value": "passenger", "label": "passenger"}))),
                "freak", D.sec("Characters"), "Vehicle Obsession: a freak on foot within 6 in moves to it."))
        # "This stunt may be attempted even if it's not the freak's turn": any freak on foot.
        grabbers = [f for f in state.freaks.values() if f.on_foot and not f.down and f.pos is not None
                    and not state.over and state.round > 0
                    and self._grab_gap(state, f, v) <= inches(D.GRAB_IN) + 5.0]
        if grabbers:
            specs.append(ActionSpec("grab", "Grab hold", (who(grabbers), fixed), "freak",
                                    D.sec("Clinging to a Vehicle"),
                                    "A freak on foot within 1 in of the car or of where it drove this turn; "
                                    "even out of his turn."))
        driver = state.driver(marker)
        if driver is not None:
            jackers = [f for f in movers if f.player != driver.player and
                       (f.aboard == marker or (f.on_foot and f.pos is not None
                                               and self._dist_to(state, f, v) <= inches(D.GRAB_IN) + 5.0))]
            if jackers:
                specs.append(ActionSpec("jack", "Jack", (who(jackers), fixed), "freak", D.sec("Jacking"),
                                        "Both roll a die, the driver +1; the winner drives."))
        inside = [f for f in home if f.aboard == marker and f.seat in ("driver", "passenger")]
        weapons = tuple({"value": c.name, "label": f"{c.name} (S{c.strength}, {c.range_in:g} in)"}
                        for c in v.components if c.kind == "weapon" and c.status == "working")
        if inside and weapons and others:
            specs.append(ActionSpec("shoot", "Fire", (who(inside), Field("weapon", "choice", "weapon", choices=weapons),
                                                      Field("target", "choice", "at", choices=others)),
                                    "freak", D.sec("Shooting"), "1d6 + strength against the facing struck."))
        broken = tuple({"value": c.name, "label": c.name} for c in v.components if c.status == "damaged")
        if inside and broken:
            specs.append(ActionSpec("repair", "Repair", (who(inside), Field("component", "choice", "component",
                                                                            choices=broken)),
                                    "freak", D.sec("Vehicle Components"), "A skill roll: 3 or better."))
        drivers = [f for f in inside if f.seat == "driver"]
        if drivers:
            specs += self._driver_specs(state, v, who(drivers), fixed, others)
        return specs

    def _driver_specs(self, state, v, pick: Field, fixed: Field, others: tuple) -> list[ActionSpec]:
        """What the driver (the acting one, or one of the drawn player's) can do with his vehicle."""
        specs = []
        marker = v.marker
        if self._forced_due(state, v):
            specs.append(ActionSpec("forced", f"Forced move ({self._pending_words(v)})", (pick, fixed), "freak",
                                    D.sec("Glancing Hit Table"), "The companion says where the car goes: "
                                    "put it there."))
            return specs
        if not v.functional:
            return specs
        drive = [pick, fixed, Field("path", "table_path", "the way it went, as the camera followed it", of=marker),
                 Field("reverse", "flag", "in reverse (6 in)", optional=True)]
        if state.exclusive is None:
            drive.append(Field("concentrate", "flag", "concentrate on driving (+6 in)", optional=True))
        if any(c.kind == "booster" and c.status == "working" for c in v.components):
            drive.append(Field("booster", "flag", "fire the booster (+6 in, then it is gone)", optional=True))
        drive.append(Field("blocked", "flag", "it could go no further (Speed Freak)", optional=True))
        barriers = tuple({"value": t.name, "label": t.name} for t in state.terrain.values() if t.kind == "barrier")
        if v.type == "cavalry" and barriers:
            # "Cavalry may elect to leap over a normal barrier rather than ramming it" ("Terrain").
            drive.append(Field("leap", "choice", "leap over", choices=barriers, optional=True))
        specs.append(ActionSpec("drive", "Drive", tuple(drive), "freak", D.sec("Vehicles"),
                                "Drive the car on the table, then resolve: the camera's path gives the distance, "
                                "the turns, the gates and what it ran into."))
        stunts = tuple({"value": s, "label": s.replace("_", " ")}
                       for s in D.STUNTS)
        specs.append(ActionSpec("stunt", "Stunt", (
            pick, fixed, Field("stunt", "choice", "stunt", choices=stunts),
            Field("turn_deg", "choice", "panic turn", optional=True,
                  choices=tuple({"value": d, "label": f"{d:+d} deg"} for d in (-90, -60, -45, -30, 30, 45, 60, 90))),
            Field("to", "table_point", "where he lands (bail out)", optional=True)),
            "freak", D.sec("Stunts"), "One stunt a turn; grab hold is its own action."))
        ramps = tuple({"value": t.name, "label": t.name} for t in state.terrain.values() if t.kind == "ramp")
        if ramps and not v.kind.flies:
            # The span the rules take ("Jumping": from half the most to the most, in the hundredths
            # they judge it in), once the car has moved this turn; before that it cannot jump at all.
            lo, hi, step = 0.0, 60.0, 0.1
            if state.drove == marker and state.active is v:
                most = state.ground_mm + state.turn_cost_mm + (inches(D.PUSH_IT_IN) if state.pushing else 0.0)
                if most > 0:
                    lo, hi = _jump_span(most)
                    step = 0.01
            specs.append(ActionSpec("jump", "Jump", (
                pick, fixed, Field("ramp", "choice", "off the ramp", choices=ramps),
                Field("distance_in", "number", "declared distance (in)", minimum=lo, maximum=hi, step=step,
                      optional=True)),
                "freak", D.sec("Jumping"), "A drive that reaches a ramp's foot jumps by itself; this is for a car "
                                           "standing at the foot. Declare at least half of what it may jump "
                                           "(left empty, the driver's player is asked)."))
        walls = tuple({"value": t.name, "label": t.name} for t in self._blocking(state))
        if others or walls:
            fields = [pick, fixed]
            if others:
                fields.append(Field("target", "choice", "ram the vehicle", choices=others, optional=True))
            if walls:
                fields.append(Field("terrain", "choice", "or ram the terrain", choices=walls, optional=True))
            specs.append(ActionSpec("ram", "Ram", tuple(fields), "freak", D.sec("Ramming"),
                                    "Drive into contact first (a drive whose path runs into something rams it by "
                                    "itself)."))
        return specs

"""Car Cult as the page shows it: a car's card (its tracks with the ST and DT on each zone,
the engine's speeds, what it generates), what to draw for it (where its move may end, from
its minimum to its maximum with drift and turns, and each weapon's range), the cars it could
attack with their measurements, the actions it can take now with their fields, and the mines on
the table.

Read only: everything comes from the state and the rules' own checks. The card keeps the
keys the page's generic card reads (`hp`, `weapons` with `mount`, `seats`, `addons`, ...)
next to Car Cult's own (`tracks`, `speeds_in`, ...).
"""

from __future__ import annotations

import numpy as np
import shapely

from ..geometry import Pose, around, circle, inches
from ..geometry.pose import MM_PER_IN
from . import cc_data as D
from .actions import ActionSpec, Field
from .base import polygon_rings

_MINE_MARKER_MM = 12.0       # a mine marker's radius as drawn (the draft gives no size)


def _label(v) -> str:
    return f"{v.name} ({v.owner})"


def _part(c) -> str:
    """A component as players call it: "engine", "armour", "Rifle", a second rifle "Rifle 2"."""
    if c.kind in ("engine", "armour"):
        return c.kind
    return c.name if c.id == c.key else f"{c.name} {c.id.rsplit('_', 1)[-1]}"


class CarCultViews:
    """Mixed into CarCult: the hooks the page calls."""

    def condition(self, state, marker: int) -> str | None:
        """What the car has left in the draft's terms: its AZ not yet filled with DT, where the DT
        lie (a Fanatical Fixer's swap moves them, and the engine's decide whether it may still
        move), and an ST penalty from blocking terrain; "exploded" once every AZ holds a DT
        (car-cult-2016-draft.txt, "Attacking opponents", stage 6, and "Exploding Cars"). E.g.
        "14 of 17 AZ free of DT (1 DT on engine, 2 on armour)". Read from the tracks alone, so it
        changes exactly when a DT is placed, removed or moved, never when ST are."""
        v = state.vehicles.get(marker)
        if v is None:
            return None
        if v.exploded:
            return "exploded, a casualty"
        hurt = [c for c in v.components if c.dt]
        text = f"{v.az - sum(c.dt for c in hurt)} of {v.az} AZ free of DT"
        if hurt:
            where = [f"{c.dt}{' DT' if k == 0 else ''} on {_part(c)}" for k, c in enumerate(hurt)]
            text += f" ({', '.join(where)})"
        if v.immobile:
            text += ", engine full: may no longer move"
        if v.st_penalty:
            text += f", {v.st_penalty} ST fewer at its next activation"
        return text

    def card(self, state, marker: int) -> dict:
        v = state.vehicle(marker)
        lo, hi = v.speeds_in()
        e = v.engine_type
        tracks = []
        for c in v.components:
            zones = []
            for i, z in enumerate(c.zones):
                zone = {"zone": i + 1, "token": z or "", "st_symbol": (i + 1) in c.st_symbols}
                if c.kind == "engine":
                    zone["speed_in"] = e.speeds_in[i]
                zones.append(zone)
            row = {"id": c.id, "name": c.name, "kind": c.kind, "az": c.az, "st": c.st, "dt": c.dt, "zones": zones}
            if c.weapon is not None:
                w = c.weapon
                row.update(range_in=w.range_in, blast=w.blast, damage="*" if w.damage is None else w.damage,
                           shots=w.shots, needs_st=w.needs_st, fired=c.id in v.fired)
            if c.kind == "crew":
                row["does"] = D.CREW[c.key].does
            tracks.append(row)
        weapons = [c for c in v.components if c.weapon is not None]
        return {
            "marker": v.marker, "name": v.name, "owner": v.owner, "controller": v.owner, "class": f"{v.az} AZ car",
            "type": e.name, "status": v.status(), "active": state.active_marker == v.marker,
            "hp": [{"part": c.name, "now": c.az - c.dt, "max": c.az} for c in v.components],
            "tracks": tracks,
            # What a player reads on the card, in words (the state's own numbers are in state_json).
            "engine": (f"{e.name}: spark plug {e.spark_plug}, speeds {', '.join(str(x) for x in e.speeds_in)} in "
                       f"(engine cards reconstructed)"),
            "speed": (f"{lo} to {hi} in now, drifting up to {lo // D.DRIFT_DIVISOR} in, "
                      f"{self.free_turns(v)} free 45° turn{'s' if self.free_turns(v) != 1 else ''}"),
            "this activation": "; ".join(x for x in (
                f"{self.generation(v)} ST to generate" + (f" ({v.generated} generated)" if v.generated else ""),
                "ST allocated" if v.allocated else "",
                "moved" if v.moved else "",
                f"{v.rerolls_left} reroll{'s' if v.rerolls_left != 1 else ''} left" if v.rerolls_left else "",
                f"{v.swaps_left} Fixer swap{'s' if v.swaps_left != 1 else ''} left" if v.swaps_left else "",
                f"{v.st_penalty} ST less (damage)" if v.st_penalty else "") if x),
            "weapons": [{"mount": c.name, "seat": f"{c.st} ST", "jammed": False, "id": c.id} for c in weapons],
            "seats": [{"seat": c.name, "part": "crew", "label": f"{c.st} ST", "acted": False}
                      for c in v.components if c.kind == "crew"],
            "addons": [f"armour {c.az} AZ ({c.dt} DT)" for c in v.components if c.kind == "armour"],
            "clinging": [], "template_in": f"{lo}-{hi}",
            "rule": f'{D.RULEBOOK}, "Car Activation", "Car Movement/Engines" (engine cards reconstructed)',
        }

    #: How finely the drawn move region samples where the turn is taken (points along the move)
    #: and how far it turns (degrees a step at most).
    _TURN_POINTS = 8
    _TURN_STEP_DEG = 15.0

    def _band(self, v, start: Pose, lo_in: float, hi_in: float, drift_in: float):
        """The corners of the car's footprint at the four corners of the band lo..hi inches
        straight ahead of `start` with up to drift_in sideways (16 points; their hull is where
        the car may stand)."""
        return np.concatenate([v.footprint(Pose(*start.to_table(inches(f), inches(s)), start.heading_deg)).corners
                               for f in (lo_in, hi_in) for s in (-drift_in, drift_in)])

    def _move_zone(self, v, lo_in: float, hi_in: float, drift_in: float, turns: int = 0):
        """Where the car may stand after moving lo..hi inches with up to drift_in of drift and
        `turns` free 45-degree turns ("Car Movement/Engines").

        An approximation, drawn, not judged (the move itself is judged from the camera's path):
        all the turns taken together as one turn of up to turns x 45 degrees (at most 180),
        either way, at any point along the move (sampled every 1/_TURN_POINTS of the maximum and
        every _TURN_STEP_DEG degrees at most), the drift sideways to the heading the car ends
        on. Turns taken one way at several points end at a spot inside this region (a combined
        turn at one point sweeps the same ground; the car's heading there may differ); a zig-zag
        (left, then right) can end nearer than the region's near edge, but inside the move and
        brake regions together (they cover the whole fan the turns allow, out to the maximum)."""
        p = v.pose
        bands = [self._band(v, p, lo_in, hi_in, drift_in)]
        most = min(turns * D.TURN_DEG, 180.0)
        if most > 0 and hi_in > 0:
            steps = max(1, int(-(-most // self._TURN_STEP_DEG)))
            angles = [most * k / steps for k in range(-steps, steps + 1) if k]
            for k in range(self._TURN_POINTS + 1):
                at_in = hi_in * k / self._TURN_POINTS
                at = p.moved(inches(at_in))
                for a in angles:
                    turned = Pose(at.x_mm, at.y_mm, p.heading_deg + a)
                    bands.append(self._band(v, turned, max(lo_in - at_in, 0.0), hi_in - at_in, drift_in))
        return shapely.union_all(shapely.convex_hull(shapely.multipoints(np.array(bands))))

    def _band_shown(self, state, v) -> bool:
        """Without pre-measuring, the band is a tape laid along a declared move: only for the car
        moving now, once its ST are allocated (the engine's action is compulsory), until it has
        moved (option move_band)."""
        return (state.active_marker == v.marker and v.allocated and not v.moved
                and self.option("move_band") == "declared_move")

    def overlays(self, state, marker: int) -> dict:
        """Where the move may end (minimum to maximum with drift and the free 45-degree turns;
        short of the minimum it brakes), and each weapon's range round the car."""
        v = state.vehicle(marker)
        if v.pose is None or not v.in_play:
            return {"move_regions": [], "arcs": []}
        lo, hi = v.speeds_in()
        drift = lo // D.DRIFT_DIVISOR
        turns = self.free_turns(v)
        regions = []
        premeasure = self.may_premeasure()
        if hi > 0 and (premeasure or self._band_shown(state, v)):
            regions.append({"name": "move", "polygons": polygon_rings(self._move_zone(v, lo, hi, drift, turns)),
                            "min_in": lo, "max_in": hi, "drift_in": drift, "turns": turns,
                            "about": f"{lo}-{hi} in, drift up to {drift} in, {turns} turn{'' if turns == 1 else 's'} of 45 degrees (drawn "
                                     f"as one combined turn of up to {int(min(turns * D.TURN_DEG, 180))} degrees "
                                     f"anywhere along the move: an approximation)"})
            if lo > 0:
                regions.append({"name": "brake", "polygons": polygon_rings(self._move_zone(v, 0, lo, drift, turns)),
                                "min_in": 0, "max_in": lo, "drift_in": drift, "turns": turns,
                                "about": f"short of {lo} in: a braking roll"})
        fp = v.footprint()
        arcs = []
        if not premeasure:
            return {"move_regions": regions, "arcs": arcs}
        for c in v.components:
            w = c.weapon
            if w is None or w.special == "mines":
                continue
            reach = max(inches(w.range_in), float(self.option("contact_mm")))
            arcs.append({"mount": c.name, "id": c.id, "range_in": w.range_in, "jammed": False,
                         "polygons": polygon_rings(around(fp, reach))})
        return {"move_regions": regions, "arcs": arcs}

    def board(self, state) -> dict | None:
        """The mines on the table (kind "mine", "mine 1"), the route each was laid along (kind
        "hazard": the ground the layer's car covered on that move, "Dust Devil's mines") and,
        where measuring is allowed, the 4 in each one reaches (kind "hazard")."""
        if not state.mines:
            return None
        reach = inches(D.WEAPONS["mines"].range_in)
        cells, routes = [], []
        for m in state.mines:
            # Drawn under the markers, once however many mines were laid along it.
            if len(m.route) >= 3 and (m.layer, m.round, m.route) not in routes:
                routes.append((m.layer, m.round, m.route))
                cells.append({"polygon": [list(p) for p in m.route], "kind": "hazard",
                              "label": f"{state.vehicles[m.layer].name}'s mines", "layer": state.vehicles[m.layer].name,
                              "owner": m.owner})
        for m in state.mines:
            layer = state.vehicles[m.layer].name
            if self.may_premeasure():       # the 4 in a mine reaches is a measurement too
                cells.append({"polygon": polygon_rings(circle((m.x_mm, m.y_mm), reach))[0][0],
                              "label": "", "kind": "hazard"})
            cells.append({"polygon": polygon_rings(circle((m.x_mm, m.y_mm), _MINE_MARKER_MM))[0][0],
                          "label": f"mine {m.id}", "kind": "mine", "layer": layer, "owner": m.owner})
        return {"cells": cells, "about": f"mines, and the routes they were laid along: they go off when a model moves within "
                                         f"{D.WEAPONS['mines'].range_in} in ({D.RULEBOOK}, \"Building a Car Cult\")"
                                         + ("" if self.may_premeasure() else "; their reach is not drawn (no "
                                                                             "pre-measuring)")}

    def targets(self, state, marker: int, terrain=()) -> list[dict]:
        """Every opposing car in play: the closest-point distance (with its line), each weapon's
        range and line of sight between any parts, with margins and doubt, and the attack's
        modifier (Blast less the target's minimum speed, its Dangerous Driver)."""
        v = state.vehicle(marker)
        if v.pose is None or not v.in_play:
            return []
        if not self.may_premeasure():
            # "Players are not permitted to pre-measure distances": who may be attacked, by marker,
            # with nothing measured and none suggested.
            return [{"marker": o.marker, "name": o.name, "label": _label(o), "owner": o.owner}
                    for o in sorted(state.in_play(), key=lambda o: o.marker) if o.owner != v.owner]
        me = v.footprint()
        out = []
        for o in state.in_play():
            if o.owner == v.owner:
                continue
            them = o.footprint()
            dist = self.range_distance(state, me, them)
            seen = self.sight(state, me, them)
            weapons, arcs = [], []
            for c in v.components:
                w = c.weapon
                if w is None or w.special == "mines":
                    continue
                limit = inches(w.range_in) if w.range_in else float(self.option("contact_mm"))
                rng = dist.within(limit, f"range of the {w.name}")
                mod = sum(m.value for m in self._attack_mods(o, w.blast, v.owner))
                ready = (c.st > 0) if w.needs_st else c.dt < c.az
                weapons.append({"weapon": c.id, "name": w.name, "range": rng.to_json(), "range_text": rng.describe(),
                                "modifier": mod, "needs": max(D.BASE_TARGET - mod, 2), "has_st": ready,
                                "usable": rng.outcome != "out" and seen.clear})
                arcs.append({"mount": f"{w.name} {w.range_in} in", **rng.to_json()})
            best = max(weapons, key=lambda w: w["range"]["margin_mm"], default=None)
            lo, _ = o.speeds_in()
            out.append({"marker": o.marker, "name": o.name, "label": _label(o), "owner": o.owner,
                        "distance_mm": round(dist.distance_mm, 2), "distance_in": round(dist.distance_mm / MM_PER_IN, 3),
                        "sigma_mm": round(dist.sigma_mm, 3),
                        "line": [list(map(float, dist.from_point)), list(map(float, dist.to_point))],
                        "range": best["range"] if best else {"outcome": "out", "margin_mm": 0.0},
                        "arcs": arcs,
                        "sight": {"clear": seen.clear, "blocked_by": list(seen.blocked_by),
                                  "line": [list(seen.line[0]), list(seen.line[1])]},
                        "min_speed_in": lo, "weapons": weapons,
                        "shootable": any(w["usable"] and w["has_st"] for w in weapons)})
        return sorted(out, key=lambda t: t["distance_mm"])

    def evidence(self, state, detail: dict, actor: int | None, target: int | None) -> list[dict]:
        """An attack: the line its range was judged on (range_measure) with the weapon's range, and
        the line of sight if it runs elsewhere ("Attacking opponents", 3). A move: the path the
        camera saw from where the activation began, and the band from the minimum to the maximum
        (with drift) straight ahead of that start ("Car Movement/Engines")."""
        v = state.vehicles.get(actor) if actor is not None else None
        if v is None or v.pose is None:
            return []
        act = detail.get("act")
        if act == "attack" and target in state.vehicles and state.vehicles[target].pose is not None:
            me, them = v.footprint(), state.vehicles[target].footprint()
            d = self.range_distance(state, me, them)
            comp = next((c for c in v.components if c.id == detail.get("weapon")), None)
            rng = f" (range {comp.weapon.range_in} in)" if comp is not None and comp.weapon is not None else ""
            shapes = [{"kind": "line", "points": [list(map(float, d.from_point)), list(map(float, d.to_point))],
                       "role": "measure", "label": f"{d.distance_mm / MM_PER_IN:.2f} in{rng}"}]
            seen = self.sight(state, me, them)
            line = [list(map(float, seen.line[0])), list(map(float, seen.line[1]))]
            if line != shapes[0]["points"]:
                shapes.append({"kind": "line", "points": line, "role": "arc",
                               "label": "line of sight" if seen.clear else "no line of sight"})
            return shapes
        if act == "move":
            lo, hi = v.speeds_in()
            drift = lo // D.DRIFT_DIVISOR
            shapes = []
            if hi > 0:
                band = shapely.convex_hull(shapely.multipoints(self._band(v, v.pose, lo, hi, drift)))
                shapes.append({"kind": "polygon", "points": [list(p) for p in list(band.exterior.coords)[:-1]],
                               "role": "template", "label": f"{lo}-{hi} in, drift {drift} in"})
            path = [p[:2] for p in detail.get("path") or [] if isinstance(p, (list, tuple)) and len(p) >= 2]
            if path:
                shapes.append({"kind": "line", "points": [[v.pose.x_mm, v.pose.y_mm], *path], "role": "actor",
                               "label": "the path driven"})
            return shapes
        return super().evidence(state, detail, actor, target)

    def demo_layout(self, cars, table_mm) -> dict[int, tuple[float, float, float]]:
        """The two cults face each other across the table, as the starter rosters share the cars
        out (alternately): the first player's on the left facing +x, the second's on the right
        facing -x, 8 in in from the short edges, spread over the middle of the depth. About 26 in
        apart: out of every weapon's reach but the cannon's, a round or two of driving to close."""
        width_mm, depth_mm = table_mm
        sides = [cars[0::2], cars[1::2]]
        out = {}
        for k, side in enumerate(sides):
            x = inches(8) if k == 0 else width_mm - inches(8)
            heading = 0.0 if k == 0 else 180.0
            gap = depth_mm / (len(side) + 1)
            for n, (m, _, _, _) in enumerate(side):
                out[m] = (x, gap * (n + 1), heading)
        return out

    def demo_scenery(self, table_mm) -> dict:
        """The draft's two kinds of terrain between the cults ("There are two types of terrain,
        Rough and Blocking", "Down Shift"), in the middle of the table clear of where the cars
        start and of their first moves (`demo_layout`: 8 in from the short edges; a first move of
        at most 6 in ends short of a third of the way across): a wrecked bus and a concrete wall
        (blocking, which also blocks sight), a scrap field and a patch of soft sand (rough, read
        by kind "rough"). No gates: the draft has none. Scaled to the table given."""
        w, d = table_mm
        cx, cy = w / 2, d / 2

        def box(x0, y0, x1, y1):
            return [[round(x, 1), round(y, 1)] for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]

        return {"terrain": [
            {"name": "Wrecked bus", "kind": "blocking", "points": box(cx - 28, cy - 0.10 * d, cx + 28, cy + 0.10 * d)},
            {"name": "Concrete wall", "kind": "blocking",
             "points": box(cx + 0.10 * w, cy + 0.17 * d, cx + 0.10 * w + 15, cy + 0.36 * d)},
            {"name": "Scrap field", "kind": "rough",
             "points": [[round(cx - 0.11 * w, 1), round(cy + 0.20 * d, 1)], [round(cx - 0.01 * w, 1), round(cy + 0.17 * d, 1)],
                        [round(cx + 0.02 * w, 1), round(cy + 0.33 * d, 1)], [round(cx - 0.09 * w, 1), round(cy + 0.36 * d, 1)]]},
            {"name": "Soft sand", "kind": "rough", "points": box(cx - 0.05 * w, cy - 0.36 * d, cx + 0.09 * w, cy - 0.20 * d)},
        ], "gates": []}

    def actions(self, state, marker: int) -> list[ActionSpec]:
        """What the car can do now, as typed specs: every field an action's resolution reads.
        Choices the book gives a player after the dice (where each DT goes, which die a Gutsy
        Gunner rerolls, the braking DT) are not fields: the resolution asks that player."""
        v = state.vehicle(marker)
        if state.over or not v.in_play or state.round == 0:
            return []
        me = Field("vehicle", "fixed", "the car", value=marker)
        R = D.RULEBOOK
        if state.active_marker is None:
            if self.up_next(state) is not v:
                return []
            return [ActionSpec(
                "activate", "Activate", (me, Field(
                    "downshift", "choice", "down shift", optional=True,
                    choices=tuple({"value": n, "label": f"{n} ST"} for n in range(v.engine.st + 1)),
                    about=("ST taken off the engine now: one is free; more, and every one rolls a d20 (under 10: "
                           "a DT on the engine)" if self.option("downshift_rolls") == "every_st" else
                           "ST taken off the engine now: one is free, a d20 each beyond it (under 10: a DT on "
                           "the engine)"))),
                rule=f'{R}, "Car Activation", "Down Shift"',
                about=f"Remove every ST but the engine's, down shift if you wish, then generate "
                      f"{self.generation(v)} ST (one per visible +ST symbol).")]
        if state.active_marker != marker:
            return []
        acts = []
        if not v.allocated and v.generated is not None:
            fields = [me]
            for c in v.components:
                if c.kind == "armour" or (c.weapon is not None and not c.weapon.needs_st):
                    continue
                most = min(c.empty, v.generated, v.engine_type.spark_plug if c.kind == "engine" else c.empty)
                if most <= 0:
                    continue
                fields.append(Field(f"st_{c.id}", "number", f"ST on the {c.name}", minimum=0, maximum=most,
                                    optional=True))
            acts.append(ActionSpec("allocate", f"Allocate {v.generated} ST", tuple(fields),
                                   rule=f'{R}, "Car Activation", "Car Movement/Engines"',
                                   about="Each track fills from the left; the engine takes at most its Spark Plug "
                                         "more; armour takes none; what is not allocated is wasted."))
        if not v.moved and not v.immobile and v.generated is not None:
            lo, hi = v.speeds_in()
            mines = sum(c.st for c in v.components if c.weapon is not None and c.key == "mines")
            fields = [me, Field("path", "table_path", "the way the car drove this activation, as the camera saw it",
                                of=marker)]
            fields += [Field(f"mine_{k}", "table_point", f"mine {k}", optional=True,
                             about="a point on the route; for a mine not placed here, its player is asked after the "
                                   "move how far back along the route it goes")
                       for k in range(1, min(mines, D.MOST_MINE_POINTS) + 1)]
            acts.append(ActionSpec(
                "move", f"Move {lo}-{hi} in", tuple(fields), rule=f'{R}, "Car Movement/Engines", "Down Shift"',
                about="Drive the car, then resolve: the camera's path gives the distance, drift and turns; short "
                      "of the minimum it brakes (the opponent is asked where a failed brake's DT goes)."))
        if v.generated is not None:
            enemies = [o for o in state.in_play() if o.owner != v.owner]
            guns = [c for c in v.components if c.weapon is not None and c.weapon.special != "mines"
                    and c.id not in v.fired and ((c.st > 0) if c.weapon.needs_st else c.dt < c.az)]
            if guns and enemies:
                # Targets by marker, never nearest first: choosing one is "a judgement call".
                acts.append(ActionSpec(
                    "attack", "Attack", (
                        me,
                        Field("weapon", "choice", "with",
                              choices=tuple({"value": c.id, "label": f"{c.name} ({c.st} ST)"} for c in guns)),
                        Field("target", "choice", "at",
                              choices=tuple({"value": o.marker, "label": _label(o)}
                                            for o in sorted(enemies, key=lambda o: o.marker)))),
                    rule=f'{R}, "Attacking opponents"',
                    about="Declare the weapon and target; then range and line of sight are measured (out of "
                          "either, the attack is lost), the dice rolled; the Gutsy Gunner's rerolls and where "
                          "each DT goes are asked of the players they belong to."))
            if v.swaps_left:
                zones = tuple({"value": f"{c.id}:{i + 1}", "label": f"{c.name} {i + 1} ({z or 'empty'})"}
                              for c in v.components if c.key != "fanatical_fixer" for i, z in enumerate(c.zones))
                acts.append(ActionSpec(
                    "fix", f"Fix ({v.swaps_left} swaps)",
                    (me, Field("a", "choice", "swap", choices=zones), Field("b", "choice", "with", choices=zones)),
                    rule=f'{R}, "Building a Car Cult" (Fanatical Fixer)',
                    about="Swap the tokens of two zones not on the fixer, one swap per ST on the fixer."))
        return acts

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
from .base import polygon_rings

_MINE_MARKER_MM = 12.0       # a mine marker's radius as drawn (the draft gives no size)


def _label(v) -> str:
    return f"{v.name} ({v.owner})"


class CarCultViews:
    """Mixed into CarCult: the hooks the page calls."""

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
            "engine": {"name": e.name, "spark_plug": e.spark_plug, "speeds_in": list(e.speeds_in),
                       "st": v.engine.st, "reconstructed": True},
            "speeds_in": [lo, hi], "drift_in": lo // D.DRIFT_DIVISOR, "free_turns": self.free_turns(v),
            "generates": self.generation(v), "generated": v.generated, "allocated": v.allocated, "moved": v.moved,
            "fired": list(v.fired), "rerolls_left": v.rerolls_left, "swaps_left": v.swaps_left,
            "st_penalty": v.st_penalty, "az": v.az,
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
        if hi > 0:
            regions.append({"name": "move", "polygons": polygon_rings(self._move_zone(v, lo, hi, drift, turns)),
                            "min_in": lo, "max_in": hi, "drift_in": drift, "turns": turns,
                            "about": f"{lo}-{hi} in, drift up to {drift} in, {turns} turns of 45 degrees (drawn "
                                     f"as one combined turn of up to {int(min(turns * D.TURN_DEG, 180))} degrees "
                                     f"anywhere along the move: an approximation)"})
            if lo > 0:
                regions.append({"name": "brake", "polygons": polygon_rings(self._move_zone(v, 0, lo, drift, turns)),
                                "min_in": 0, "max_in": lo, "drift_in": drift, "turns": turns,
                                "about": f"short of {lo} in: a braking roll"})
        fp = v.footprint()
        arcs = []
        for c in v.components:
            w = c.weapon
            if w is None or w.special == "mines":
                continue
            reach = max(inches(w.range_in), float(self.option("contact_mm")))
            arcs.append({"mount": c.name, "id": c.id, "range_in": w.range_in, "jammed": False,
                         "polygons": polygon_rings(around(fp, reach))})
        return {"move_regions": regions, "arcs": arcs}

    def board(self, state) -> dict | None:
        """The mines on the table (kind "mine") and the 4 in each one reaches (kind "hazard")."""
        if not state.mines:
            return None
        reach = inches(D.WEAPONS["mines"].range_in)
        cells = []
        for m in state.mines:
            layer = state.vehicles[m.layer].name
            cells.append({"polygon": polygon_rings(circle((m.x_mm, m.y_mm), reach))[0][0],
                          "label": "", "kind": "hazard"})
            cells.append({"polygon": polygon_rings(circle((m.x_mm, m.y_mm), _MINE_MARKER_MM))[0][0],
                          "label": f"mine {m.id}", "kind": "mine", "layer": layer, "owner": m.owner})
        return {"cells": cells, "about": f"mines: they go off when a model moves within "
                                         f"{D.WEAPONS['mines'].range_in} in ({D.RULEBOOK}, \"Building a Car Cult\")"}

    def targets(self, state, marker: int, terrain=()) -> list[dict]:
        """Every opposing car in play: the closest-point distance (with its line), each weapon's
        range and line of sight between any parts, with margins and doubt, and the attack's
        modifier (Blast less the target's minimum speed, its Dangerous Driver)."""
        v = state.vehicle(marker)
        if v.pose is None or not v.in_play:
            return []
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
                mod = sum(m.value for m in self._attack_mods(o, w.blast))
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

    def actions(self, state, marker: int) -> list[dict]:
        """What the car can do now, each with the fields the page's form builds."""
        v = state.vehicle(marker)
        if state.over or not v.in_play or state.round == 0:
            return []
        fixed = {"name": "vehicle", "kind": "fixed", "value": marker}
        R = D.RULEBOOK
        if state.active_marker is None:
            up = self.up_next(state)
            if up is not v:
                return []
            return [{"act": "activate", "label": "Activate", "rule": f'{R}, "Car Activation", "Down Shift"',
                     "about": f"Remove every ST but the engine's, down shift if you wish (1 free, a d20 each beyond), "
                              f"then generate {self.generation(v)} ST.",
                     "fields": [fixed, {"name": "downshift", "kind": "choice", "label": "down shift", "optional": True,
                                        "choices": [{"value": n, "label": f"{n} ST"} for n in range(v.engine.st + 1)]}]}]
        if state.active_marker != marker:
            return []
        acts = []
        if not v.allocated and v.generated is not None:
            fields = [fixed]
            for c in v.components:
                if c.kind == "armour" or (c.weapon is not None and not c.weapon.needs_st):
                    continue
                most = min(c.empty, v.generated, v.engine_type.spark_plug if c.kind == "engine" else c.empty)
                if most <= 0:
                    continue
                fields.append({"name": f"st_{c.id}", "kind": "choice", "label": f"ST on the {c.name}", "optional": True,
                               "choices": [{"value": n, "label": str(n)} for n in range(most + 1)]})
            acts.append({"act": "allocate", "label": f"Allocate {v.generated} ST", "rule": f'{R}, "Car Activation"',
                         "about": "Tracks fill from the left; the engine takes at most its Spark Plug more; the rest "
                                  "is wasted.", "fields": fields})
        if not v.moved and not v.immobile and v.generated is not None:
            lo, hi = v.speeds_in()
            mines = sum(c.st for c in v.components if c.weapon is not None and c.key == "mines")
            acts.append({"act": "move", "label": f"Move {lo}-{hi} in", "rule": f'{R}, "Car Movement/Engines"',
                         "about": "Drive the car, then resolve: the camera's path gives the distance, drift and turns; "
                                  "short of the minimum it brakes.",
                         "fields": [fixed, {"name": "path", "kind": "table_path", "of": marker,
                                            "label": "the way the car went this activation, as the camera saw it"},
                                    *[{"name": f"mine_{k}", "kind": "table_point", "optional": True,
                                       "label": f"mine {k} (on the route; else spread along it)"}
                                      for k in range(1, min(mines, 8) + 1)],
                                    *([{"name": "brake_pick", "kind": "choice", "optional": True,
                                        "label": "if it brakes and fails, the opponent puts the DT on",
                                        "choices": [{"value": c.id, "label": c.name} for c in v.components]}]
                                      if lo > 0 else [])]})
        if v.generated is not None:
            enemies = [o for o in state.in_play() if o.owner != v.owner]
            guns = [c for c in v.components if c.weapon is not None and c.weapon.special != "mines"
                    and c.id not in v.fired and ((c.st > 0) if c.weapon.needs_st else c.dt < c.az)]
            if guns and enemies:
                picks = {str(o.marker): [{"value": c.id, "label": c.name} for c in o.components] for o in enemies}
                fields = [fixed,
                          {"name": "weapon", "kind": "choice", "label": "with",
                           "choices": [{"value": c.id, "label": f"{c.name} ({c.st} ST)"} for c in guns]},
                          {"name": "target", "kind": "choice", "label": "at",
                           "choices": [{"value": o.marker, "label": _label(o)} for o in enemies]}]
                if v.rerolls_left:
                    fields.append({"name": "rerolls", "kind": "choice", "label": "rerolls (Gutsy Gunner)",
                                   "optional": True,
                                   "choices": [{"value": n, "label": str(n)} for n in range(v.rerolls_left + 1)]})
                if self.option("dt_allocation") == "owner_first":
                    fields += [{"name": "owner_pick", "kind": "choice", "optional": True, "depends_on": "target",
                                "label": "the target's owner puts each hit's first DT on", "choices_by": picks},
                               {"name": "attacker_pick", "kind": "choice", "optional": True, "depends_on": "target",
                                "label": "the attacker puts the other DT on", "choices_by": picks}]
                acts.append({"act": "attack", "label": "Attack", "rule": f'{R}, "Attacking opponents"',
                             "fields": fields})
            if v.swaps_left:
                zones = [{"value": f"{c.id}:{i + 1}", "label": f"{c.name} {i + 1} ({z or 'empty'})"}
                         for c in v.components if c.key != "fanatical_fixer" for i, z in enumerate(c.zones)]
                acts.append({"act": "fix", "label": f"Fix ({v.swaps_left} swaps)", "rule": f'{R}, "Building a Car Cult"',
                             "fields": [fixed, {"name": "a", "kind": "choice", "label": "swap", "choices": zones},
                                        {"name": "b", "kind": "choice", "label": "with", "choices": zones}]})
        return acts

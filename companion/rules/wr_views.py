"""Wasteland Rally as the page shows it: a vehicle's card, what to draw for it (how far
it can drive, each weapon's reach in its arcs), the targets it could attack with
their measurements, and the actions it can take now with their fields.

Read only: everything comes from the state and the rules' own checks.
"""

from __future__ import annotations

import numpy as np
import shapely
from shapely.geometry import Polygon

from ..geometry import FRONT, LEFT, REAR, RIGHT, Sector, around, closest_distance, inches
from ..geometry.pose import MM_PER_IN
from . import wr_data as D
from .base import polygon_rings

_FAR_MM = 5000.0


def _label(v) -> str:
    return f"{v.name} ({v.owner})"


class WastelandRallyViews:
    """Mixed into WastelandRally: the hooks the page calls."""

    def card(self, state, marker: int) -> dict:
        v = state.vehicle(marker)
        return {
            "marker": v.marker, "name": v.name, "type": v.kind.name, "owner": v.owner, "status": v.status(),
            "active": state.active_marker == v.marker,
            "hp": [{"part": "body", "now": v.hp, "max": v.max_hp}],
            "attributes": {"move_in": v.kind.move_in, "skill": self._attribute(v, "skill"),
                           "defence": self._attribute(v, "defence"), "command": self._attribute(v, "command")},
            "stress": v.stress, "special": list(v.kind.special),
            "weapons": [{"weapon": w.key, "name": w.name, "range_in": w.range_in, "attacks": w.kind.attacks,
                         "damage": w.damage, "piercing": w.piercing, "special": list(w.special),
                         "mods": list(w.mods), "arcs": list(self.weapon_arcs(w))} for w in v.weapons],
            "upgrades": list(v.upgrades), "driver": v.driver, "boost_used": v.boost_used,
            "gates": {"crossed": v.progress, "of": len(state.sequence),
                      "next": state.sequence[v.progress] if v.progress < len(state.sequence) else None},
            "rule": f'{D.RULEBOOK}, "Vehicle Types"',
        }

    def _half(self, pose, side: str) -> Polygon:
        direction = {FRONT: pose.forward, REAR: -pose.forward, LEFT: pose.left, RIGHT: -pose.left}[side]
        across = np.array([-direction[1], direction[0]])
        s = pose.xy
        return Polygon([s + across * _FAR_MM, s + across * _FAR_MM + direction * _FAR_MM,
                        s - across * _FAR_MM + direction * _FAR_MM, s - across * _FAR_MM])

    def _arc_zone(self, pose, side: str):
        if self.option("arc_layout") == "half_planes":
            return self._half(pose, side)
        facing = {FRONT: 0.0, LEFT: 90.0, REAR: 180.0, RIGHT: -90.0}[side]
        return Sector.of(pose, facing, 90.0).polygon(_FAR_MM)

    def overlays(self, state, marker: int) -> dict:
        """How far it may drive straight ahead (a ring of its allowance around it), and each
        weapon's reach within its arcs."""
        v = state.vehicle(marker)
        if v.pose is None or not v.in_play:
            return {"move_regions": [], "arcs": []}
        fp = v.footprint()
        allowance_in, why = self.allowance_in(v, False)
        reach = shapely.intersection(around(fp, inches(allowance_in)), self._half(fp.pose, FRONT))
        regions = [{"name": "forwards", "polygons": polygon_rings(reach), "allowance_in": allowance_in,
                    "about": " ".join(why)}]
        arcs = []
        for w in v.weapons:
            zone = around(fp, inches(w.range_in))
            if "Dropper" in w.special:
                arc = self._arc_zone(fp.pose, REAR)
            else:
                arc = shapely.union_all([self._arc_zone(fp.pose, s) for s in self.weapon_arcs(w)])
            arcs.append({"mount": w.name, "range_in": w.range_in,
                         "polygons": polygon_rings(shapely.intersection(zone, arc))})
        return {"move_regions": regions, "arcs": arcs}

    def targets(self, state, marker: int, terrain=()) -> list[dict]:
        """Every other vehicle in play: edge-to-edge distance, each weapon's range and arc, and
        line of sight, with margins and doubt."""
        v = state.vehicle(marker)
        if v.pose is None or not v.in_play:
            return []
        me = v.footprint()
        out = []
        for o in state.in_play():
            if o.marker == marker:
                continue
            them = o.footprint()
            dist = closest_distance(me, them)
            arcs = self.arc_of(me, them)
            seen, hidden = self.sight(state, me, them)
            weapons = []
            for w in v.weapons:
                rng = dist.within(inches(w.range_in), f"range of the {w.name}")
                allowed = ((REAR,) if "Dropper" in w.special else self.weapon_arcs(w))
                arc = max((arcs[a] for a in allowed), key=lambda x: x.margin_mm)
                weapons.append({"weapon": w.key, "name": w.name, "range": rng.to_json(),
                                "range_text": rng.describe(), "arc": arc.to_json(),
                                "usable": rng.outcome != "out" and arc.outcome != "out" and not seen.startswith("blocked")})
            out.append({"marker": o.marker, "name": o.name, "label": _label(o), "owner": o.owner,
                        "distance_mm": round(dist.distance_mm, 2), "distance_in": round(dist.distance_mm / MM_PER_IN, 3),
                        "sigma_mm": round(dist.sigma_mm, 3),
                        "line": [list(map(float, dist.from_point)), list(map(float, dist.to_point))],
                        "arcs": {s: a.outcome for s, a in arcs.items()},
                        "sight": {"line": seen, "hidden_fraction": round(hidden, 3)},
                        "weapons": weapons, "shootable": any(w["usable"] for w in weapons)})
        return sorted(out, key=lambda t: t["distance_mm"])

    def actions(self, state, marker: int) -> list[dict]:
        """What the vehicle can do now, with each action's fields."""
        v = state.vehicle(marker)
        acts = []
        fixed = {"name": "vehicle", "kind": "fixed", "value": marker}
        pending = next((p for p in state.pending if p["vehicle"] == marker), None)
        if pending is not None:
            return [{"act": "reposition", "label": "Reposition (lost control)", "rule": f'{D.RULEBOOK}, "Losing Control"',
                     "about": "Turn the car up to 45 degrees and move it up to 1 inch, then resolve.",
                     "fields": [fixed, {"name": "by", "kind": "choice", "label": "by",
                                        "choices": [{"value": p, "label": p} for p in pending["by"]]},
                                {"name": "to", "kind": "table_pose", "of": marker,
                                 "label": "where the car stands now"}]}]
        if not v.in_play or state.over or state.pending:
            return []
        if state.active_marker not in (None, marker):
            return []
        if state.active_marker is None and state.round > 0 and (v.owner != state.up or marker in state.activated):
            return []
        fresh = state.active_marker is None          # its flags are from an earlier activation
        if v.stress and (fresh or not (v.moved or v.attacked or v.recovered)):
            acts.append({"act": "recover", "label": f"Recover ({v.stress} stress)", "rule": f'{D.CORE}, "Action: Recover"',
                         "fields": [fixed]})
        if fresh or not v.moved:
            acts.append({"act": "move", "label": "Move", "rule": f'{D.VEHICLES}, "Vehicle Movement"',
                         "about": "Drive the car, then resolve: the camera's path gives the distance and the turns.",
                         "fields": [fixed, {"name": "path", "kind": "table_path", "of": marker,
                                            "label": "the way the car went this activation, as the camera saw it"},
                                    {"name": "advance", "kind": "choice", "label": "advance move",
                                     "choices": [{"value": False, "label": "no"}, {"value": True, "label": "yes (-4 skill)"}]},
                                    *([{"name": "boost", "kind": "choice", "label": "boost 9 in first",
                                        "choices": [{"value": False, "label": "no"}, {"value": True, "label": "yes"}]}]
                                      if "boost" in v.upgrades and not v.boost_used else [])]})
        others = [{"value": o.marker, "label": _label(o)} for o in state.in_play() if o.marker != marker]
        fired = set(v.attacked) if state.active_marker == marker else set()
        guns = [{"value": w.key, "label": w.name} for w in v.weapons if "Dropper" not in w.special and w.key not in fired]
        if guns and others:
            acts.append({"act": "attack", "label": "Attack", "rule": f'{D.CORE}, "Action: Attack"',
                         "fields": [fixed, {"name": "weapon", "kind": "choice", "label": "with", "choices": guns},
                                    {"name": "target", "kind": "choice", "label": "at", "choices": others}]})
        drops = [{"value": w.key, "label": w.name} for w in v.weapons if "Dropper" in w.special and w.key not in fired]
        if drops:
            acts.append({"act": "drop", "label": "Drop", "rule": f'{D.RULEBOOK}, "Dropper"',
                         "fields": [fixed, {"name": "weapon", "kind": "choice", "label": "drop", "choices": drops}]})
        return acts

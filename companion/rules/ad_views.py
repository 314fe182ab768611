"""Alpha Destructicus as the page shows it: a vehicle's card, what to draw for it
(how far it may still go, its weapons' reach), the targets it could shoot with
their measurements (range, facing, sight), and the actions of the freaks aboard
or near it, with their fields.  Read only: it changes nothing.
"""

from __future__ import annotations

from ..geometry import around, closest_distance, inches
from ..geometry.pose import MM_PER_IN
from . import ad_data as D
from .base import polygon_rings


class AlphaDestructicusViews:
    """Mixed into AlphaDestructicus: the hooks the page calls."""

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
            "rule": D.sec("Vehicles"),
        }

    def overlays(self, state, marker: int) -> dict:
        """How far the vehicle may still drive this turn (a ring round it), and each weapon's reach."""
        v = state.vehicle(marker)
        if not v.on_table or not v.in_play:
            return {"move_regions": [], "arcs": []}
        fp = v.footprint()
        regions = []
        if state.active is v and state.drove == v.marker:
            left = max(state.budget_mm - state.spent_mm, 0.0)
        else:
            left = inches(v.kind.base_move_in)
        if left > 0:
            regions.append({"name": "reach this turn", "polygons": polygon_rings(around(fp, left)),
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
            weapons = []
            for c in v.components:
                if c.kind == "weapon":
                    r = dist.within(inches(c.range_in), "range")
                    weapons.append({"weapon": c.name, "working": c.status == "working", **r.to_json()})
            out.append({
                "marker": o.marker, "name": o.name, "label": o.name,
                "distance_mm": round(dist.distance_mm, 2), "distance_in": round(dist.distance_mm / MM_PER_IN, 3),
                "sigma_mm": round(dist.sigma_mm, 3),
                "line": [list(map(float, dist.from_point)), list(map(float, dist.to_point))],
                "facing": {"facing": facing, "armour": o.armour_of(facing), **verdict.to_json(), "note": note},
                "weapons": weapons, "arcs": [],
                "sight": {"clear": sight.clear, "blocked_by": list(sight.blocked_by),
                          "line": [list(sight.line[0]), list(sight.line[1])], "needed": True},
                "shootable": sight.clear and any(w["outcome"] != "out" and w["working"] for w in weapons),
            })
        return sorted(out, key=lambda t: t["distance_mm"])

    def actions(self, state, marker: int) -> list[dict]:
        """The acting freak's actions with this vehicle (or, before anyone is chosen, those of the
        drawn player's freaks aboard or near it)."""
        v = state.vehicle(marker)
        if state.over or not v.on_table:
            return []
        if state.acting is not None:
            freaks = [state.freaks[state.acting]]
        else:
            freaks = [f for f in state.freaks.values() if not f.out and not f.moved and f.player == state.chip]
        near = []
        for f in freaks:
            if f.aboard == marker:
                near.append(f)
            elif f.on_foot and f.pos is not None and self._dist_to(state, f, v) <= inches(D.OBSESSION_IN):
                near.append(f)
        if not near:
            return []
        who = [{"value": f.id, "label": f"{f.id} ({f.player}, {f.seat or 'on foot'})"} for f in near]
        pick = {"name": "freak", "kind": "choice", "label": "freak", "choices": who}
        fixed = {"name": "vehicle", "kind": "fixed", "value": marker}
        others = [{"value": o.marker, "label": o.name} for o in state.vehicles.values()
                  if o.marker != marker and o.on_table and o.in_play]
        acts = []
        inside = [f for f in near if f.aboard == marker and f.seat in ("driver", "passenger")]
        drivers = [f for f in near if f.aboard == marker and f.seat == "driver"]
        if drivers and v.functional:
            acts.append({"act": "drive", "label": "Drive", "rule": D.sec("Vehicles"),
                         "about": "Drive the car on the table, then resolve: where it stands is where it went "
                                  "(a path of poses gives turns and gates more exactly).",
                         "fields": [pick, fixed, {"name": "path", "kind": "table_path", "of": marker,
                                                  "label": "the way it went, as the camera followed it"}]})
            barriers = [{"value": t.name, "label": t.name} for t in state.terrain.values() if t.kind == "barrier"]
            if v.type == "cavalry" and barriers:
                # "Cavalry may elect to leap over a normal barrier rather than ramming it" ("Terrain").
                acts[-1]["fields"].append({"name": "leap", "kind": "choice", "label": "leap over", "optional": True,
                                           "choices": barriers})
            acts.append({"act": "stunt", "label": "Stunt", "rule": D.sec("Stunts"),
                         "fields": [pick, {"name": "stunt", "kind": "choice", "label": "stunt", "choices": [
                             {"value": s, "label": s.replace("_", " ")}
                             for s in ("push_it", "panic_turn", "two_wheels", "bail_out")]},
                                   {"name": "turn_deg", "kind": "choice", "label": "panic turn", "optional": True,
                                    "choices": [{"value": d, "label": f"{d:+d} deg"} for d in (-90, -45, 45, 90)]}]})
            if others:
                acts.append({"act": "ram", "label": "Ram", "rule": D.sec("Ramming"),
                             "fields": [pick, fixed, {"name": "target", "kind": "choice", "label": "ram",
                                                      "choices": others}]})
        if drivers and v.pending:
            acts.append({"act": "forced", "label": f"Forced move ({self._pending_words(v)})",
                         "rule": D.sec("Glancing Hit Table"), "fields": [pick, fixed]})
        weapons = [{"value": c.name, "label": f"{c.name} (S{c.strength}, {c.range_in:g} in)"}
                   for c in v.components if c.kind == "weapon" and c.status == "working"]
        if inside and weapons and others:
            acts.append({"act": "shoot", "label": "Fire", "rule": D.sec("Shooting"),
                         "fields": [pick, {"name": "weapon", "kind": "choice", "label": "weapon", "choices": weapons},
                                    {"name": "target", "kind": "choice", "label": "at", "choices": others}]})
        broken = [{"value": c.name, "label": c.name} for c in v.components if c.status == "damaged"]
        if inside and broken:
            acts.append({"act": "repair", "label": "Repair", "rule": D.sec("Vehicle Components"),
                         "fields": [pick, {"name": "component", "kind": "choice", "label": "component",
                                           "choices": broken}]})
        on_foot = [f for f in near if f.on_foot]
        if on_foot:
            acts.append({"act": "board", "label": "Climb in", "rule": D.sec("Characters"),
                         "fields": [pick, fixed, {"name": "seat", "kind": "choice", "label": "seat", "choices": [
                             {"value": "driver", "label": "driver"}, {"value": "passenger", "label": "passenger"}]}]})
            acts.append({"act": "grab", "label": "Grab hold", "rule": D.sec("Clinging to a Vehicle"),
                         "fields": [pick, fixed]})
        driver = state.driver(marker)
        if driver is not None and any(f.player != driver.player for f in near):
            acts.append({"act": "jack", "label": "Jack", "rule": D.sec("Jacking"), "fields": [pick, fixed]})
        if any(f.aboard == marker for f in near):
            acts.append({"act": "leave", "label": "Get out / let go", "rule": D.sec("The Turn"),
                         "fields": [pick, {"name": "to", "kind": "table_point", "label": "the spot to step to",
                                           "optional": True}]})
        if state.acting is None:
            acts.append({"act": "activate", "label": "Move this freak", "rule": D.sec("The Turn"), "fields": [pick]})
        return acts

"""Wasteland Rally as the page shows it: a vehicle's card, what to draw for it (how far
it can drive, each weapon's reach in its arcs), the targets it could attack with
their measurements, and the actions it can take now with their fields.

Read only: everything comes from the state and the rules' own checks.
"""

from __future__ import annotations

import numpy as np
import shapely
from shapely.geometry import Polygon

from ..geometry import FRONT, LEFT, REAR, RIGHT, Pose, Sector, around, closest_distance, inches
from ..geometry.pose import MM_PER_IN
from . import wr_data as D
from .actions import ActionSpec, Field
from .base import polygon_rings

_FAR_MM = 5000.0


def _label(v) -> str:
    return f"{v.name} ({v.owner})"


class WastelandRallyViews:
    """Mixed into WastelandRally: the hooks the page calls."""

    def condition(self, state, marker: int) -> str | None:
        """What the car has left in the book's terms: hit points (CORE, "Step 3 - Apply Damage"; the team table's
        HP, RULEBOOK "Vehicle Types"), badly damaged past half of them (VEHICLES, "Vehicle
        Restrictions": -2 to movement, -1 to rolls), or what took it out of the race. Only what
        damage and the race change, so it changes exactly when they do."""
        v = state.vehicles.get(marker)
        if v is None:
            return None
        if v.destroyed:
            return "destroyed"
        if v.eliminated:
            return "out of the race (eliminated)"
        if v.finished is not None:
            n = v.finished
            suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
            return f"finished {n}{suffix}"
        text = f"{v.hp} of {v.max_hp} hit points left"
        return f"{text}, badly damaged" if v.badly_damaged else text

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

    def turn_text(self, state) -> str | None:
        """Where the game stands, in a sentence: whose turn, which car is acting, what is owed."""
        if state.over:
            return f"the game is over: {state.winner + ' wins' if state.winner else 'no winner'}"
        if state.pending:
            p = state.pending[0]
            return (f"the {state.vehicles[p['vehicle']].name} lost control: {' or '.join(p['by'])} "
                    f"repositions it")
        if state.round == 0:
            return "before the first round: start a round (the initiative roll-off)"
        if state.active is not None:
            return f"round {state.round}: the {state.active.name}'s activation ({state.active.owner})"
        if state.up is None:
            return f"round {state.round} is over: start the next round"
        # The cars the rules let act now (`_order_now`, what an activation is checked against),
        # not every car yet to act: a play order that names the next car leaves no choice.
        due, free = self._order_now(state, state.up)
        if due is not None:
            return (f"round {state.round}: {state.up} activates the {state.vehicles[due].name} (next in their "
                    f"play order), or passes")
        left = [state.vehicles[m].name for m in free]
        return f"round {state.round}: {state.up} activates a car ({', '.join(left)}), or passes"

    def evidence(self, state, detail: dict, actor: int | None, target: int | None) -> list[dict]:
        """Besides the closest line to a target: a move's path as the camera gave it, from where
        the car stood (its footprint there); a reposition's footprint where the car lost control."""
        shapes = super().evidence(state, detail, actor, target)
        v = state.vehicles.get(actor) if actor is not None else None
        if v is None:
            return shapes
        act = detail.get("act")
        if act == "move" and v.stood is not None:
            pts = [[v.stood.x_mm, v.stood.y_mm]] + [[float(p[0]), float(p[1])] for p in detail.get("path") or []
                                                   if isinstance(p, (list, tuple)) and len(p) >= 2]
            shapes.append({"kind": "polygon", "points": v.footprint(v.stood).corners.tolist(), "role": "actor",
                           "label": "stood"})
            if len(pts) > 1:
                shapes.append({"kind": "line", "points": pts, "role": "measure", "label": "path"})
        if act == "reposition":
            p = next((p for p in state.pending if p["vehicle"] == actor), None)
            if p is not None:
                was = Pose(*p["from"][:3])
                shapes.append({"kind": "polygon", "points": v.footprint(was).corners.tolist(), "role": "template",
                               "label": "lost control here"})
        return shapes

    def _half(self, pose, side: str) -> Polygon:
        direction = {FRONT: pose.forward, REAR: -pose.forward, LEFT: pose.left, RIGHT: -pose.left}[side]
        across = np.array([-direction[1], direction[0]])
        s = pose.xy
        return Polygon([s + across * _FAR_MM, s + across * _FAR_MM + direction * _FAR_MM,
                        s - across * _FAR_MM + direction * _FAR_MM, s - across * _FAR_MM])

    def _arc_zone(self, pose, side: str, fp=None):
        if self.option("arc_layout") == "half_planes":
            if side in (LEFT, RIGHT) and fp is not None and self.option("side_arc") == "flank":
                return self.flank_zone(fp, side, _FAR_MM)
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
                arc = shapely.union_all([self._arc_zone(fp.pose, s, fp) for s in self.weapon_arcs(w)])
            arcs.append({"mount": w.name, "range_in": w.range_in,
                         "polygons": polygon_rings(shapely.intersection(zone, arc))})
        return {"move_regions": regions, "arcs": arcs}

    def targets(self, state, marker: int, terrain=()) -> list[dict]:
        """Every enemy vehicle in play (a weapon "may only target enemy units": RULEBOOK,
        "Vehicle Weapons"): edge-to-edge distance, each weapon's range and arc, and line of
        sight, with margins and doubt."""
        v = state.vehicle(marker)
        if v.pose is None or not v.in_play:
            return []
        me = v.footprint()
        out = []
        for o in state.in_play():
            if o.owner == v.owner:
                continue
            them = o.footprint()
            dist = closest_distance(me, them)
            arcs = self.arc_of(me, them)
            seen, hidden = self.sight(state, me, them)
            weapons, best, weapon_arcs = [], None, []
            for w in v.weapons:
                rng = dist.within(inches(w.range_in), f"range of the {w.name}")
                allowed = ((REAR,) if "Dropper" in w.special else self.weapon_arcs(w))
                arc = self.judged_arc(me, them, arcs, allowed)
                weapons.append({"weapon": w.key, "name": w.name, "range": rng.to_json(),
                                "range_text": rng.describe(), "arc": arc,
                                "usable": rng.outcome != "out" and arc["outcome"] != "out" and not seen.startswith("blocked")})
                weapon_arcs.append({"mount": w.name, **arc})
                if best is None or rng.margin_mm > best.margin_mm:
                    best = rng
            out.append({"marker": o.marker, "name": o.name, "label": _label(o), "owner": o.owner,
                        "distance_mm": round(dist.distance_mm, 2), "distance_in": round(dist.distance_mm / MM_PER_IN, 3),
                        "sigma_mm": round(dist.sigma_mm, 3),
                        "line": [list(map(float, dist.from_point)), list(map(float, dist.to_point))],
                        "arcs": weapon_arcs, "arc_sides": {s: a.outcome for s, a in arcs.items()},
                        **({"range": best.to_json(), "range_text": best.describe()} if best is not None else {}),
                        "sight": {"line": seen, "hidden_fraction": round(hidden, 3),
                                  "clear": not seen.startswith("blocked"),
                                  "blocked_by": [] if not seen.startswith("blocked") else [seen]},
                        "weapons": weapons, "shootable": any(w["usable"] for w in weapons)})
        return sorted(out, key=lambda t: t["distance_mm"])

    def actions(self, state, marker: int) -> list[ActionSpec]:
        """What the vehicle's side can do with it now, each with the fields it needs: the way it
        drove and where it stands are read by the camera (table_path, table_pose)."""
        v = state.vehicle(marker)
        me = Field("vehicle", "fixed", "vehicle", value=marker)
        pending = next((p for p in state.pending if p["vehicle"] == marker), None)
        if pending is not None:
            was = pending["from"]
            return [ActionSpec(
                "reposition", "Reposition (lost control)", (
                    me, Field("by", "choice", "repositioned by", choices=tuple(
                        {"value": p, "label": p} for p in pending["by"])),
                    Field("to", "table_pose", "where the car stands now", of=marker)),
                rule=f'{D.RULEBOOK}, "Losing Control"',
                about=(f"The player with the nearest car turns it up to 45 degrees and moves it up to 1 in from "
                       f"where it lost control (its dashed outline), then resolves: the "
                       f"camera reads where it stands."))]
        if state.over:
            return self._after_game_actions(state)
        if not v.in_play or v.pose is None or state.pending:
            return []
        if state.active_marker not in (None, marker):
            return []
        if state.active_marker is None and state.round > 0 and (v.owner != state.up or marker in state.activated):
            return []
        fresh = state.active_marker is None          # its flags are from an earlier activation
        acts: list[ActionSpec] = []
        if fresh:
            acts.append(ActionSpec("hold", "Activate and do nothing", (me,), rule=f'{D.CORE}, "Activating Units"',
                                   about="Every action of an activation is optional: the car activates and "
                                         "holds; end the activation next."))
        if v.stress and (fresh or not (v.moved or v.attacked or v.recovered)):
            acts.append(ActionSpec("recover", f"Recover ({v.stress} stress)", (me,), rule=f'{D.CORE}, "Action: Recover"',
                                   about="A command roll for each stress token, first in the activation."))
        if fresh or not (v.moved or v.attacked):
            boost = "boost" in v.upgrades and not v.boost_used
            acts.append(ActionSpec(
                "move", "Move", (
                    me, Field("path", "table_path", "the way the car drove, as the camera saw it", of=marker),
                    Field("advance", "flag", "advance move (+6 in, +9 if Fast; -4 skill)", optional=True),
                    *((Field("boost", "flag", "boost: 9 in straight ahead first (once a game)", optional=True),)
                      if boost else ()),
                    Field("backward", "flag", "driving backwards (at half rate)", optional=True,
                          about="The path says which way it went; this only checks it.")),
                rule=f'{D.VEHICLES}, "Vehicle Movement"',
                about="Drive the car from where it stood, then resolve: the camera's path gives the distance and "
                      "the turns (manoeuvres)."))
        # Enemies only: a weapon "may only target enemy units" (RULEBOOK, "Vehicle Weapons").
        others = tuple({"value": o.marker, "label": _label(o)} for o in state.in_play() if o.owner != v.owner)
        fired = set(v.attacked) if state.active_marker == marker else set()
        guns = tuple({"value": w.key, "label": w.name} for w in v.weapons
                     if "Dropper" not in w.special and w.key not in fired)
        drums = tuple({"value": t.name, "label": f"{t.name} (exploding terrain)"} for t in state.live_terrain()
                      if self.terrain_kind(t) == "exploding")
        if guns and (others or drums):
            # One choice of what it shoots at, the cars and the exploding terrain together: an
            # attack has exactly one target, so neither may be left out (two optional fields, a
            # car or terrain, left the page's checks nothing required to try: Attack was greyed
            # on every table with exploding terrain).
            fields = [me, Field("weapon", "choice", "with", choices=guns),
                      Field("target", "choice", "at", choices=others + drums)]
            acts.append(ActionSpec("attack", "Attack", tuple(fields), rule=f'{D.CORE}, "Action: Attack"',
                                   about="One weapon at one car (or at exploding terrain: a critical success sets "
                                         "it off); each weapon once an activation."))
        drops = tuple({"value": w.key, "label": w.name} for w in v.weapons
                      if "Dropper" in w.special and w.key not in fired)
        if drops:
            acts.append(ActionSpec("drop", "Drop", (me, Field("weapon", "choice", "drop", choices=drops)),
                                   rule=f'{D.RULEBOOK}, "Dropper"',
                                   about="An attack on every car, friend or foe, in the rear arc and in range."))
        return acts

    def _after_game_actions(self, state) -> list[ActionSpec]:
        """The campaign's steps after a game (RULEBOOK, "Upgrade Stage" and "Campaign Structure"),
        offered on every car's card: they belong to no car."""
        acts = []
        if not state.upgrade_stage_done:
            acts.append(ActionSpec("upgrade_stage", "Upgrade stage", (), actor="player",
                                   rule=f'{D.RULEBOOK}, "Upgrade Stage"',
                                   about="Mission points into the pools; a D12 for each destroyed and damaged car; "
                                         "each owner is asked whether to pay for a repair or a save."))
        missions = tuple({"value": m, "label": m.replace("_", " ")} for _, _, m in D.CAMPAIGN_MISSIONS)
        acts.append(ActionSpec("campaign_mission", "Next campaign mission", (
            Field("campaign_round", "number", "campaign round", minimum=1, maximum=99),
            Field("previous", "choice", "last round's mission", choices=missions, optional=True),
            Field("final", "flag", "the final round", optional=True)), actor="player",
            rule=f'{D.RULEBOOK}, "Campaign Structure"',
            about="The first round is a two lap race, the final outrun, the others a D12."))
        return acts

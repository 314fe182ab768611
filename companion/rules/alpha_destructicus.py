"""Alpha Destructicus (alpha-destructicus.txt): an arena demolition derby.

Freaks (three a player) are drawn by chip to move one at a time; they walk,
climb into vehicles, drive them through gates for points, shoot, ram, stunt,
jump ramps and jack each other's cars.  Every action is a resolution (a
generator): it checks the table's geometry (distances moved along the tracked
path, which facing a hit strikes, 1" grabs, gate crossings), asks for dice,
applies modifiers with their reasons, and returns what happened.  Numbers live
in `ad_data`, each with its section.
"""

from __future__ import annotations

import math

import numpy as np
import shapely

from ..dice import ChoiceRequest, DiceRequest, Modifier, Roll
from ..geometry import (Footprint, Obstacles, Pose, Terrain, around, closest_distance, inches, judge,
                        normalize_deg, swept_path)
from ..geometry.pose import MM_PER_IN
from . import ad_data as D
from .ad_state import Freak, GameState, Vehicle, build_game
from .ad_state import start_part_way as part_way
from .ad_views import AlphaDestructicusViews, _jump_span
from .actions import OneOf
from .base import RuleOption, RulesError, RuleSystem, action, register

sec = D.sec

OPTIONS = (
    RuleOption("blast_from", "vehicle", ("vehicle", "centre"), sec("Penetrating Hit Table"),
               '"Everything within 6\" of the vehicle takes a strength 2 hit" (6, Spectacular explosion; the '
               'bike\'s Kablooie: "everyone within 3\""). "vehicle": measured from the exploding vehicle itself, its '
               'nearest edge, as every other distance (range, grab hold, jacking); "centre": from its centre, '
               'which spares things up to half its length nearer.'),
    RuleOption("chip_draw", "drawn", ("drawn", "declared"), sec("The Turn"),
               'The rule: "All the chips are placed in a bag. Chips are drawn out one at a time" (and "What you '
               'need": poker chips "or other easily mixable object"; the only dice are six-sided). A draw is a '
               'blind pick from the bag by hand, not a roll. "drawn": at each draw the page asks whose chip came '
               'out (the chips still in the bag are offered; nothing is asked when they are all one player\'s; '
               'the book does not say who draws: it is asked of the player whose freak moved last); '
               '"declared": nothing is asked, and the first action of a freak says whose chip came up.'),
    RuleOption("facing_from", "attacker_centre", ("attacker_centre", "closest_point"), sec("Shooting"),
               'Which facing a shot or ram strikes ("the armor rating on the targeted vehicle\'s facing side"). '
               'The target is split by its diagonals into front, back and two sides. "attacker_centre": the '
               'facing whose wedge holds the attacker\'s centre; "closest_point": the wedge holding the '
               'attacker\'s point nearest the target (for a ram, where they touch).'),
    RuleOption("close_facing", "defender", ("defender", "attacker"), sec("Shooting"),
               'When the facing is too close to call (the attacker within the measuring doubt of a corner '
               'diagonal), "defender": the better armoured of the two facings counts; "attacker": the weaker.'),
    RuleOption("shot_compare", "total", ("total", "die"), sec("Shooting"),
               'The rule: "rolling 1d6 and adding the strength", then "If the number rolled is equal to or '
               'less than the armor rating". "total": the die plus strength is compared with the armour; '
               '"die": the natural die alone.'),
    RuleOption("natural_six_strips_armour", False, (False, True), sec("Shooting"),
               '"On a natural 6, the shot always scores a penetrating hit." False: that is all it does; '
               'True: it also destroys 1 point of armour on the facing, as every other hit does.'),
    RuleOption("ram_distance", "spent", ("spent", "ground"), sec("Ramming"),
               'The rule: "If the ramming vehicle moved more than 12" ... less than 6" before ramming". '
               '"spent": movement spent this activation, turning costs included (as "Jumping" counts it); '
               '"ground": only the distance its centre travelled along the tracked path.'),
    RuleOption("contact_mm", 3.0, None, sec("Ramming"),
               'A ram needs the vehicles "in contact". The camera measures gaps to a millimetre or two; a gap '
               'of up to this many millimetres (edge to edge) counts as touching.'),
    RuleOption("barrier_armour", 0, None, sec("Terrain"),
               'The rules give buildings 2 armour but no figure for a normal barrier. The armour a normal '
               'barrier (and a fixed one, or a ramp\'s wrong side) has on every side for ram rolls.'),
    RuleOption("turn_tolerance_deg", 5.0, None, sec("Vehicles"),
               'A tracked path wobbles. A heading change smaller than this (degrees) between two poses of a '
               'path is not a turn (it costs nothing and does not restart a truck\'s 3").'),
    RuleOption("speed_freak", "refuse", ("refuse", "remind"), sec("Characters"),
               '"Speed Freak: A Freak who is in a vehicle must ALWAYS move at least 6" in that vehicle if '
               'possible". "refuse" (as written): his turn cannot end while he drives a working vehicle that '
               'moved less than 6" and could have gone on; a drive says "blocked" when the way was not open (a '
               'car stopped by a ram, a forced stop or a landing, or one whose movement left cannot make up the '
               '6", is not held to it); "remind": the end of his turn only says so.'),
    RuleOption("down_gets_up", "acts", ("acts", "spends_turn"), sec("Characters"),
               '"A freak who is wounded falls down and lies still until his next turn." "acts": at his next '
               'turn he gets up and acts as usual; "spends_turn": getting up is all he does that turn.'),
    RuleOption("obsession_free", True, (True, False), sec("Characters"),
               '"Vehicle Obsession: ... within 6" of a vehicle, he may immediately move to that vehicle." '
               'True: the dash to the vehicle is free (within 6" whatever he walked); False: it comes out of '
               'his 6" on foot.'),
    RuleOption("jack_reach", "aboard_or_within_1in", ("aboard_or_within_1in", "aboard_only"), sec("Jacking"),
               'The rule does not say where a jacker must be. "aboard_or_within_1in": aboard (clinging or '
               'inside) or on foot within 1" (the grab reach); "aboard_only": clinging or inside.'),
    RuleOption("jack_tie", "stays_on", ("stays_on", "falls_off"), sec("Jacking"),
               'On a tie "the vehicle surges 6" straight ahead and the original owner maintains control"; the '
               'jacker\'s fate is not given. "stays_on": he stays where he was (aboard, or on foot); '
               '"falls_off": a jacker aboard falls off where the surge began, unhurt.'),
    RuleOption("two_wheels_failure", "nothing", ("nothing", "rollover"), sec("Stunts"),
               'The rule gives no failure for "Two Wheels". "nothing": it simply stays on four wheels; '
               '"rollover": it rolls as the glancing hit table\'s Rollover (6).'),
    RuleOption("flamer_ignites", "any_hit", ("any_hit", "damaging_hit"), sec("Appendix 1: Sample Vehicles"),
               'Sarge\'s flamethrower "sets target on fire". "any_hit": every shot that is not a miss; '
               '"damaging_hit": only a glancing or penetrating (or bike) hit.'),
    RuleOption("burning_wreck_destroys", True, (True, False), sec("Penetrating Hit Table"),
               '"Burning Wreck – The vehicle wrecks and explodes". True: the vehicle is destroyed (a burning '
               'hulk); False: it is only broken and burning, and can be repaired.'),
    RuleOption("gate_reset", "other_player", ("other_player", "any_new_driver"), sec("Winning"),
               '"If the vehicle is abandoned and then taken by another player, it may once again score on any '
               'gate. If the driver abandons the vehicle and acquires another, the new vehicle may also score on any '
               'gate." "other_player": a freak of another player resets it, and so does a driver who left another '
               'vehicle for it; "any_new_driver": any other freak taking the wheel does.'),
    RuleOption("airborne_scores", True, (True, False), sec("Winning"),
               'A gate "moves complete across ... in the correct direction". True: a jump that carries the '
               'vehicle through a gate scores; False: only driving through does.'),
    RuleOption("path_contact", "ram", ("ram", "refuse"), sec("Ramming"),
               '"A ram is initiated when a vehicle moves into contact with another vehicle or a barrier". A '
               'drive\'s path (the car\'s swept footprint) that runs into a vehicle, a building or a barrier: '
               '"ram": the car stops at the contact and rams what it met there; "refuse": the path is refused, '
               'saying where and with what, for the table to drive it again to the contact and \'ram\'.'),
    RuleOption("bike_push_turns", "none", ("none", "pushed_part"), sec("Vehicles"),
               '"Bikes may change direction as often as they like, except when pushing it." "none": a bike '
               '(or a small skimmer or cavalry, which move like bikes) that pushes it may not turn at all in '
               'that move; "pushed_part": only the pushed 6" is straight, as for every vehicle.'),
    RuleOption("other_chooser", "culprit", ("culprit", "next_player"), sec("Glancing Hit Table"),
               'Spinout: "chosen by a player other than the driver (typically the player who caused the glancing '
               'hit)"; an unoccupied vehicle\'s lost component is "chosen by a player other than a current '
               'occupant". "culprit": the player whose freak is acting, unless he is the one excluded or the hit is on '
               'the vehicle his own freak is moving (an empty car he bailed out of: the other side\'s roll caused '
               'it), else the next player round the table after the driver\'s; "next_player": always the next player round the '
               'table (the rosters\' order) after the driver\'s who is not excluded.'),
    RuleOption("waldo_armour", 0, (0, 1), sec("Appendix 1: Sample Vehicles"),
               'The appendix lists Waldo (small skimmer) with only its "Strafe-o-matic": no armour is printed, '
               'and "A small skimmer has only 1 armor value all around" says it has one value, not which. '
               '0: as printed, none; 1: one point all around. A roster that gives Waldo an "armour" keeps it.'),
    RuleOption("forced_six_counts", "part_of_move", ("part_of_move", "extra"), sec("Glancing Hit Table"),
               'Badly Shaken "must move 6\" straight ahead at the beginning of the driver\'s next turn" (so do Spinout '
               'and Rattled); the book does not say whether the car may still make its own move. "part_of_move": the '
               'forced 6" are the first 6" of its move (6" of its 12" are left); "extra": they come on top of it.'),
    RuleOption("after_jump", "stops", ("stops", "drive_on"), sec("Jumping"),
               'The book does not say whether a vehicle moves on after landing. "stops": the landing ends its move '
               '(the flight already reaches as far as it had moved, or 6" more when pushing it); "drive_on": it may '
               'drive what it had left before the ramp.'),
    RuleOption("landing_on_vehicle", "against_it", ("against_it", "on_top"), sec("Jumping"),
               '"If the vehicle lands on another vehicle, this is a ram from above, committed against the top '
               'armor of the rammed vehicle"; the book does not say where the jumper then stands. "against_it": '
               'the ram is from above, and the jumper is set down on its flight line where it first touches the '
               'vehicle it came down on (as a ram stops at its contact; a car balanced on another hides the '
               'roof marker of the car under it from the camera); "on_top": it is left where it landed, on top.'),
    RuleOption("sight", "forest_and_buildings", ("forest_and_buildings", "forest_only"), sec("Terrain"),
               'Only "Forest" is said to block line of sight. "forest_and_buildings": forests and buildings '
               'block a shot; "forest_only": only forests do.'),
)

_FAR = 1e9


def _fmt_in(mm: float) -> str:
    return f"{mm / MM_PER_IN:.2f} in"


@register
class AlphaDestructicus(AlphaDestructicusViews, RuleSystem):
    name = "alpha_destructicus"
    title = "Alpha Destructicus!"
    rulebook = D.RULEBOOK
    options = OPTIONS

    # --- the game -----------------------------------------------------------------


    def templates(self) -> list[dict]:
        """The templates and gauges of this book (see the data module's TEMPLATES)."""
        from .base import template as table_template
        return [table_template(**t) for t in D.TEMPLATES]
    def starter_rosters(self, cars: list[tuple[int, str]]) -> list[dict]:
        """Two players, the table's cars shared out as the appendix's sample vehicles, three
        freaks each ("Freaks"): one driving each of their vehicles, the rest on foot. Each car keeps
        the table's name (the page labels it so): the sample gives its type, armour and components."""
        samples = ("dragster", "king_rhino", "sarge", "rhinocerator", "waldo", "velociraptor")
        rosters = [{"player": p, "freaks": [], "vehicles": []} for p in ("Player 1", "Player 2")]
        for n, (marker, name) in enumerate(cars):
            rosters[n % 2]["vehicles"].append({"marker": marker, "sample": samples[n % len(samples)],
                                               **({"name": name} if name else {})})
        for k, r in enumerate(rosters):
            for i in range(3):
                if i < len(r["vehicles"]):
                    r["freaks"].append({"name": f"Freak {k + 1}.{i + 1}", "aboard": r["vehicles"][i]["marker"],
                                        "seat": "driver"})
                else:
                    r["freaks"].append({"name": f"Freak {k + 1}.{i + 1}", "at": [150.0 + 300 * k, 150.0 + 60 * i]})
        return [r for r in rosters if r["vehicles"]]

    def new_game(self, rosters: list[dict], scene) -> GameState:
        """Freaks and vehicles from rosters, placed at the scene's poses; terrain and gates from the scene."""
        return build_game(rosters, scene, int(self.option("waldo_armour")))

    def start_part_way(self, state: GameState, block: dict) -> None:
        """A game part way through (a scenario's `state` block): damage, fire, hits waiting, wounds,
        who is where, last gates, breaches, scores, the round and its chips (`ad_state.start_part_way`;
        docs/rules/alpha-destructicus.md, "Starting part way through a game")."""
        if block:
            part_way(state, block, self.option("chip_draw") == "declared")

    def update_poses(self, state: GameState, poses: dict) -> None:
        """As the base's, but a destroyed vehicle's hulk follows the camera too: a wreck stays on
        the field ("the hulk remains on the field", "Penetrating Hit Table") where cars ram it."""
        for marker, pose in poses.items():
            v = state.vehicles.get(marker)
            if v is not None and not v.removed:
                v.pose = pose

    def active_marker(self, state: GameState) -> int | None:
        return state.active.marker if state.active is not None else None

    def turn_info(self, state: GameState) -> dict:
        """No play order is known ahead (chips are drawn from a bag, "The Turn"): `order` is empty,
        `turn` counts the freaks who have moved this round while one is moving (-1 between), and
        `up` is the player whose chip was drawn."""
        moved = sum(1 for f in state.freaks.values() if f.moved)
        return {"round": state.round, "players": list(state.players), "order": [],
                "turn": moved if state.acting is not None else -1,
                "active": self.active_marker(state), "up": state.chip}

    def turn_text(self, state: GameState) -> str | None:
        """ "round 2 of 6: Ann's chip; Zed moves (driving the Rhinocerator)"."""
        if state.over:
            return f"the game is over: {self._final_words(state)}"
        if state.round == 0:
            return "start round 1: a chip for every freak goes in the bag"
        head = f"round {state.round} of {D.ROUNDS}"
        if state.acting is not None:
            f = state.freaks[state.acting]
            where = f" ({f.seat} of the {state.vehicles[f.aboard].name})" if f.aboard is not None else " (on foot)"
            active = state.active
            must = self._speed_freak_reminder(state, active, cite=False) if active is not None else None
            return f"{head}: {f.player}'s chip; {f.id} moves{where}" + (f"; Speed Freak: {must}" if must else "")
        if state.chip is not None:
            return f"{head}: {state.chip}'s chip is drawn: choose the freak who moves (or pass)"
        if self.option("chip_draw") == "declared" and state.bag:
            return f"{head}: draw a chip; its freak's first action names it ({len(state.bag)} in the bag)"
        if state.bag:
            # A draw under way: the chips are still in the bag, none is out yet.
            return f"{head}: draw a chip from the bag ({len(state.bag)} in it) and say whose it is"
        return f"{head} is over: start the next round"

    def start_round(self, state: GameState, orders: dict | None = None):
        """A new round: every freak in play puts a chip in the bag ("The Turn"); the first is drawn."""
        if state.over:
            raise RulesError(f"the game is over ({self._final_words(state)})")
        if state.round and (state.bag or state.chip or state.acting):
            raise RulesError(f"round {state.round} is still being played: {len(state.bag)} chips in the bag"
                             + (f", {state.acting} is moving" if state.acting else ""))
        state.round += 1
        for f in state.freaks.values():
            f.moved = False
        state.bag = [p for p in state.players for _ in state.alive(p)]
        # The log heads the line with "round N" already: the event says only what is new.
        events: list[str] = [f"{len(state.bag)} chips in the bag, one for each freak in play"
                             + (" (the last round)" if state.round == D.ROUNDS else "")]
        drawn = yield from self._draw(state, events)
        return {"round": state.round, "chip": drawn, "bag": sorted(state.bag), "events": events, "rolls": []}

    def _movable(self, state: GameState, player: str) -> list[Freak]:
        return [f for f in state.alive(player) if not f.moved]

    def _draw(self, state: GameState, events: list):
        """Draw chips until one names a player with a freak still to move ("The Turn")."""
        state.chip = None
        if self.option("chip_draw") == "declared":
            # Chips of freaks taken out this round stay in the real bag; they are drawn and put aside.
            keep = []
            for p in state.bag:
                if keep.count(p) < len(self._movable(state, p)):
                    keep.append(p)
            state.bag = keep
            return None
        while state.bag:
            player = yield from self._which_chip(state)
            state.bag.remove(player)
            if self._movable(state, player):
                state.chip = player
                events.append(f"{player}'s chip is drawn: {player} moves one freak")
                return player
            events.append(f"{player}'s chip is drawn, but {player} has no freak left to move")
        return None

    def _which_chip(self, state: GameState):
        """Whose chip came out of the bag: a blind pick by hand ("Chips are drawn out one at a time",
        "The Turn"), so the page asks which it was, offering the chips still in the bag. The book
        does not say who draws: the question is put to the first player round the table (the
        rosters' order), for whoever holds the bag to answer."""
        left = sorted(set(state.bag), key=state.players.index)
        if len(left) == 1:
            return left[0]                 # every chip left is one player's: nothing to draw blind
        n = len(state.bag)
        counts = ", ".join(f"{p} {state.bag.count(p)}" for p in left)
        return (yield ChoiceRequest(self._drawer(state), f"whose chip came out of the bag (draw one without "
                                    f"looking; {n} chips in it: {counts})",
                                    tuple({"value": p, "label": f"{p}'s chip ({state.bag.count(p)} of {n})"}
                                          for p in left)))

    @staticmethod
    def _drawer(state: GameState) -> str:
        """Who draws the next chip: the book does not say, so the bag goes to the player whose freak
        moved last (he has just put his chip down), and before anyone has moved to the first player
        round the table. Asking the same player every draw named him as choosing every time."""
        return state.drawer if state.drawer in state.players else state.players[0]

    def end_activation(self, state: GameState):
        """The acting freak's move ends: a failed push, Speed Freak, fire; the next chip is drawn."""
        if state.over:
            raise RulesError(f"the game is over ({self._final_words(state)})")
        if state.acting is None and state.chip is None and not (self.option("chip_draw") == "declared" and state.bag):
            # No chip drawn and nobody moving: before round 1, or once every chip of the round is
            # out. There is no turn to end (it was taken, and logged "round N is over" again).
            raise RulesError("there is no turn to end: " + ("start round 1 first" if state.round == 0 else
                                                            f"round {state.round} is over, start the next round"))
        events: list[str] = []
        rolls: list[dict] = []
        if state.acting is None:
            if state.chip is not None and self._movable(state, state.chip):
                # He "may move one ... He must then place the chip on the character" ("The Turn"): a
                # player who passes still puts the chip on one of his freaks, who does nothing.
                movable = self._movable(state, state.chip)
                fid = movable[0].id
                if len(movable) > 1:
                    fid = yield ChoiceRequest(state.chip, "which freak takes the chip and does nothing this round",
                                              tuple({"value": m.id, "label": m.id} for m in movable))
                state.freaks[fid].moved = True
                events.append(f"{state.chip} passes: the chip goes on {fid}, who does nothing this round "
                              f"({sec('The Turn')})")
                # It was his turn all the same: what waited for it is done or spent now.
                state.acting = fid
                state.activation += 1
                f = state.freaks[fid]
                state.drove_at_start = f.aboard if f.seat == "driver" else None
                yield from self._drivers_turn_ends(state, state.freaks[fid], events, rolls)
            elif self.option("chip_draw") == "declared" and state.bag:
                raise RulesError("no freak has moved: the player whose chip came up names the freak who moves "
                                 "(his first action, or 'activate')")
        else:
            f = state.freaks[state.acting]
            f.moved = True
            mine = state.vehicles.get(f.aboard) if f.aboard is not None and f.seat == "driver" else None
            forced_now = mine is not None and mine.in_play and f.aboard in (state.drove_at_start, state.drove) \
                and self._forced_due(state, mine)
            if self.option("speed_freak") == "refuse" and not forced_now:
                # Judged before any die (a failed push's, the fire's): only a forced move still to be
                # made now can change how far he drove.
                short = self._speed_freak_short(state, f)
                if short:
                    raise RulesError(short + "; drive on, or say the way was blocked")
            yield from self._drivers_turn_ends(state, f, events, rolls)
            v = state.vehicles.get(state.drove) if state.drove is not None else None
            if v is not None and state.push_failed and v.in_play:
                if v.type == "cavalry":
                    events.append(f"the failed push: the {v.name} rolls on the cavalry hit table")
                    yield from self._bike_hit(state, v, events, rolls, {}, "the failed push")
                elif v.engine is not None and v.engine.status == "working":
                    v.engine.status = "damaged"
                    events.append(f"the failed push wrecks the {v.name}'s engine after its move "
                                  f"({sec('Stunts')})")
            driving = state.drove if state.drove is not None else (f.aboard if f.seat == "driver" else None)
            dv = state.vehicles.get(driving) if driving is not None else None
            short = self._speed_freak_short(state, f)
            if short:
                if self.option("speed_freak") == "refuse":
                    raise RulesError(short + "; drive on, or say the way was blocked")
                events.append(short)
            if dv is not None and dv.burning and dv.in_play:
                yield from self._fire(state, dv, events, rolls)
        for v in state.vehicles.values():
            if v.burning and v.in_play and not state.inside(v.marker):
                self._destroy(state, v, events, None, "abandoned while burning: the crew lets it burn")
        if state.acting is not None:
            state.drawer = state.freaks[state.acting].player
        self._reset_activation(state)
        if not self._check_end(state, events):
            yield from self._draw(state, events)
            if not state.bag and state.chip is None:
                events.append(f"round {state.round} is over")
                if state.round >= D.ROUNDS:
                    self._finish(state, events, f"{D.ROUNDS} rounds played")
        return {"events": events, "rolls": rolls, "chip": state.chip, "round": state.round,
                "scores": dict(state.scores)}

    def _speed_freak_short(self, state: GameState, f: Freak) -> str | None:
        """ "Speed Freak: A Freak who is in a vehicle must ALWAYS move at least 6" in that vehicle if
        possible" ("Characters"): what falls short this turn, in words, or None."""
        driving = state.drove if state.drove is not None else (f.aboard if f.seat == "driver" else None)
        dv = state.vehicles.get(driving) if driving is not None else None
        if dv is None or f.aboard != dv.marker or f.seat != "driver" or not dv.functional or state.stopped \
                or state.blocked or state.getting_up:
            return None
        # How far it drove is a camera measurement: held only when clearly short of 6 in, not within
        # the doubt of where it started and ended (as the limit a drive may not pass is judged), or a
        # reverse, whose whole move is 6 in, could not be driven to it.
        sigma = math.sqrt(2.0) * dv.pose.axis_sigma_mm if dv.pose is not None else 0.0
        if judge("driven this turn", state.ground_mm, inches(D.SPEED_FREAK_IN), sigma, at_most=False).outcome != "out":
            return None
        # "if possible": the movement it has left this turn must still make up the 6 in.
        if state.drove == dv.marker:
            left = state.budget_mm - state.spent_mm
        else:
            left = inches(dv.kind.base_move_in) - (inches(D.SHAKEN_LOSS_IN) if self._shaken_due(state, dv) else 0.0)
        if state.ground_mm + left < inches(D.SPEED_FREAK_IN) - 1e-6:
            return None
        return (f"Speed Freak: {f.id} drove the {dv.name} only {_fmt_in(state.ground_mm)} "
                f"(at least 6 in if possible; {sec('Characters')})")

    def _reset_activation(self, state: GameState) -> None:
        state.acting, state.chip = None, None
        state.walked_mm = 0.0
        state.drove, state.exclusive, state.stunt, state.jacked = None, None, None, False
        state.direction, state.budget_mm, state.spent_mm, state.ground_mm = None, 0.0, 0.0, 0.0
        state.turn_cost_mm = 0.0
        state.pushing = state.push_failed = state.stopped = state.two_wheels = False
        state.since_turn_mm = None
        state.blocked = state.getting_up = False
        state.paths = {}
        state.no_ram = []
        state.drove_at_start = None

    # --- the end of the game ------------------------------------------------------------

    def _check_end(self, state: GameState, events: list) -> bool:
        if state.over:
            return True
        if not any(v.in_play and v.on_table for v in state.vehicles.values()):
            self._finish(state, events, "no undestroyed vehicle is left on the board")
            return True
        return False

    def _finish(self, state: GameState, events: list, why: str) -> None:
        """ "Winning": most points among teams with a surviving freak; ties by vehicles destroyed."""
        state.over = True
        state.bag, state.chip = [], None
        alive = [p for p in state.players if state.alive(p)]
        if not alive:
            events.append(f"the game ends ({why}): no team has a surviving freak, so nobody wins")
            return
        best = max(state.scores[p] for p in alive)
        top = [p for p in alive if state.scores[p] == best]
        tie_break = ""
        if len(top) > 1:
            most = max(state.destroyed_by[p] for p in top)
            tie_break = f" (tied on points; {most} vehicles destroyed)"
            top = [p for p in top if state.destroyed_by[p] == most]
        if len(top) == 1:
            state.winner = top[0]
            events.append(f"the game ends ({why}): {top[0]} wins with {best} points{tie_break}")
        else:
            events.append(f"the game ends ({why}): a draw between {', '.join(top)} ({best} points each)")

    def _final_words(self, state: GameState) -> str:
        return f"{state.winner} won" if state.winner else "it ended without a single winner"

    # --- who acts -----------------------------------------------------------------------

    def _acting(self, state: GameState, action: dict, *, out_of_turn: bool = False,
                getting_up_ok: bool = False) -> Freak:
        """The freak doing it, checked against the chip drawn; the first action picks him; a driver
        whose vehicle must make a forced move makes it first ("at the beginning of the driver's next
        turn", the hit tables), or bails out (the only way off, "Stunts")."""
        f = self._acting_freak(state, action, out_of_turn=out_of_turn, getting_up_ok=getting_up_ok)
        if f.id == state.acting and f.seat == "driver" and f.aboard == state.drove_at_start \
                and action.get("act") not in ("forced", "activate", "stunt"):
            v = state.vehicles[f.aboard]
            if self._forced_due(state, v):
                raise RulesError(f"the {v.name} must first make its forced move ({self._pending_words(v)}): "
                                 f"act 'forced'")
        return f

    def _acting_freak(self, state: GameState, action: dict, *, out_of_turn: bool = False,
                      getting_up_ok: bool = False) -> Freak:
        if state.over:
            raise RulesError(f"the game is over ({self._final_words(state)})")
        fid = action.get("freak") or state.acting
        if fid is None:
            raise RulesError("say which freak acts ('freak')")
        f = state.freak(fid)
        if f.out:
            raise RulesError(f"{f.id} is out of the game (no wounds left)")
        if out_of_turn and fid != state.acting:
            return f
        if state.round == 0:
            raise RulesError("start the round first: the chips are not in the bag yet")
        if state.acting is not None:
            if fid != state.acting:
                raise RulesError(f"it is {state.acting}'s move; {f.id} waits for his own chip")
            if state.getting_up and not getting_up_ok:
                raise RulesError(f"{f.id} spends this turn getting up ({sec('Characters')})")
            return f
        if self.option("chip_draw") == "declared":
            if f.player not in state.bag:
                raise RulesError(f"{f.player} has no chip left in the bag this round")
        elif state.chip is None:
            raise RulesError("no chip has been drawn: the round is over, start the next one")
        elif f.player != state.chip:
            raise RulesError(f"{state.chip}'s chip was drawn; {f.id} is {f.player}'s")
        if f.moved:
            raise RulesError(f"{f.id} has already moved this round (his chip is on him)")
        if f.down and self.option("down_gets_up") == "spends_turn" and not getting_up_ok:
            raise RulesError(f"{f.id} is down: getting up is all he does this turn ('activate' him; "
                             f"{sec('Characters')})")
        if self.option("chip_draw") == "declared":
            state.bag.remove(f.player)
            state.chip = f.player
        state.acting = f.id
        state.activation += 1
        state.drove_at_start = f.aboard if f.seat == "driver" else None
        if f.down:
            f.down = False
            state.getting_up = self.option("down_gets_up") == "spends_turn"
        return f

    @action("activate", fields={"freak": "text"})
    def _act_activate(self, state: GameState, action: dict):
        """Put the drawn chip on a freak: he is the one who moves (and gets up, if he was down)."""
        fid = action.get("freak") or state.acting
        was_down = fid is not None and fid in state.freaks and state.freaks[fid].down
        f = self._acting(state, action, getting_up_ok=True)
        events = [f"{f.id} moves for {f.player}"]
        if was_down:
            events.append(f"{f.id} gets up" + (": that is all he does this turn" if state.getting_up else ""))
        return {"act": "activate", "freak": f.id, "result": "activated", "events": events, "rolls": []}

    # --- rolling --------------------------------------------------------------------

    def _burning_mods(self, state: GameState, f: Freak | None) -> tuple[Modifier, ...]:
        if f is not None and f.aboard is not None and state.vehicles[f.aboard].burning and f.seat != "clinging":
            return (Modifier(D.BURNING_PENALTY, f"aboard the burning {state.vehicles[f.aboard].name}"),)
        return ()

    def _skill(self, state: GameState, f: Freak, purpose: str, stunt_on: Vehicle | None = None, extra=()):
        """A skill roll: 1d6, 3 or better ("Characters")."""
        mods = list(self._burning_mods(state, f)) + list(extra)
        if stunt_on is not None and stunt_on.kind.stunt_bonus:
            mods.append(Modifier(stunt_on.kind.stunt_bonus, f"riding the {stunt_on.name} (cavalry)"))
        req = DiceRequest(("d6",), f"skill: {purpose} (needs {D.SKILL}+)", f.id)
        throw = yield req
        return Roll(req, throw.faces[0], tuple(mods))

    def _d6(self, purpose: str, who: str = ""):
        throw = yield DiceRequest(("d6",), purpose, who)
        return throw.faces[0]

    def _2d6(self, purpose: str, who: str, rolls: list):
        """2d6 (the hit tables' moves, a wreck's scatter): their sum; both faces go in `rolls`."""
        throw = yield DiceRequest(("d6", "d6"), purpose, who)
        faces = [int(x) for x in throw.faces]
        rolls.append({"asked": purpose, "faces": faces, "face": sum(faces), "total": sum(faces), "modifiers": []})
        return sum(faces)

    # --- harm to freaks ------------------------------------------------------------------

    def _wound(self, state: GameState, f: Freak, events: list, rolls: list, why: str):
        """A wound, unless he is down ("no known power in the universe can cause him further harm")
        or rolls his Resilience (6 on a d6)."""
        if f.out:
            return
        if f.down:
            events.append(f"{f.id} is down: {why} cannot harm him")
            return
        req = DiceRequest(("d6",), f"resilience against {why} (needs {D.RESILIENCE})", f.id)
        throw = yield req
        roll = Roll(req, throw.faces[0], self._burning_mods(state, f))
        rolls.append(roll.to_json())
        if roll.total >= D.RESILIENCE:
            events.append(f"{f.id} shrugs off {why}")
            return
        f.wounds -= 1
        if f.wounds <= 0:
            self._put_on_foot(state, f)
            f.out = True
            events.append(f"{f.id} takes a wound ({why}) and is out of the game")
        else:
            f.down = True
            events.append(f"{f.id} takes a wound ({why}): {f.wounds} left; he falls down until his next turn")

    def _put_on_foot(self, state: GameState, f: Freak, at=None) -> None:
        if f.aboard is not None:
            v = state.vehicles[f.aboard]
            if at is None and v.pose is not None:
                at = v.pose.to_table(0.0, v.width_mm / 2 + 15.0)
            f.aboard, f.seat = None, None
        if at is not None:
            f.pos = (float(at[0]), float(at[1]))

    # --- geometry --------------------------------------------------------------------

    def _facing(self, state: GameState, target: Vehicle, attacker_point, attacker_sigma_mm: float, who: str):
        """Which facing of the target the attack strikes: the wedge (cut by the target's diagonals)
        holding the attacker's point; a verdict on how far the point is from the nearest diagonal."""
        fp = target.footprint()
        f_mm, l_mm = fp.pose.to_local(attacker_point)
        a, b = fp.length_mm / 2, fp.width_mm / 2
        s = (abs(f_mm) * b - abs(l_mm) * a) / math.hypot(a, b)
        lengthwise = "front" if f_mm >= 0 else "back"
        facing, other = (lengthwise, "side") if s >= 0 else ("side", lengthwise)
        r = math.hypot(f_mm, l_mm)
        sigma = math.sqrt(fp.pose.axis_sigma_mm ** 2 + attacker_sigma_mm ** 2 + (r * fp.pose.heading_sigma_rad) ** 2)
        verdict = judge(f"the {target.name}'s {facing}, struck by {who} (distance from the corner's diagonal)",
                        abs(s), 0.0, sigma, at_most=False)
        if verdict.outcome == "too close to call":
            pick = max if self.option("close_facing") == "defender" else min
            chosen = pick((facing, other), key=lambda x: (target.armour_of(x), x == facing))
            return chosen, verdict, f"too close to call between {facing} and {other}: the {chosen} counts " \
                                    f"(close_facing={self.option('close_facing')})"
        return facing, verdict, None

    def _attack_point(self, attacker_fp: Footprint | None, attacker_xy, target: Vehicle):
        if attacker_fp is not None and self.option("facing_from") == "closest_point":
            return np.asarray(closest_distance(attacker_fp, target.footprint()).from_point)
        return np.asarray(attacker_xy if attacker_xy is not None else attacker_fp.centre, float)

    def _others(self, state: GameState, *exclude: int) -> list[Vehicle]:
        return [v for v in state.vehicles.values() if v.on_table and v.marker not in exclude]

    def _blocking(self, state: GameState) -> list:
        return [t for t in state.terrain.values() if t.kind in ("building", "barrier", "fixed")]

    def _path_obstacles(self, state: GameState, v: Vehicle, leap: str | None = None) -> list:
        """What a drive may run into: other vehicles on the table (wrecks too) and, for a vehicle on the
        ground, buildings, barriers, fixed barriers and ramps; (thing, its name, its shape), thing a
        vehicle's marker or a terrain piece's name. A building with a wall breached is open there (a
        vehicle "may breach the building and continue through"), but its other walls still stand: a
        car inside meets them as any car meets a wall (before, a breached building let it out through
        any wall, so none was ever breached twice and no building fell to rubble)."""
        out = [(o.marker, f"the {o.name}", o.footprint().polygon) for o in self._others(state, v.marker)]
        if not v.kind.flies:
            out += [(t.name, f"an unbreached wall of {t.name}" if t.kind == "building" and t.breached else t.name,
                     t.solid) for t in state.terrain.values()
                    if (t.kind in D.PATH_OBSTACLES or t.kind == "ramp") and t.name != leap]
        return out

    def _path_contact(self, state: GameState, v: Vehicle, poses: list[Pose], leap: str | None = None):
        """The first contact along a path: the car's footprint swept along it ("Ramming": a vehicle
        "moves into contact") against the other vehicles and the terrain in the way.  Contact is the
        footprint reaching more than contact_mm into something it was not already into at the start
        (the camera's doubt); the car stops just short of touching it: the path is walked in steps
        (PATH_STEP_MM, PATH_STEP_DEG), and between the last step clear and the next, which touches,
        the touch is found by halving to CONTACT_FIND_MM (a 2 mm step alone stopped it up to 2 mm
        short, and a ram at 6" counted "less than 6"").  None if the way is clear, else a dict: the
        thing, its name, where (mm, on the table), how far along (mm), and the path cut short at the
        stop."""
        if len(poses) < 2:
            return None
        tol = float(self.option("contact_mm"))
        start = v.footprint(poses[0]).polygon.buffer(-tol)
        swept = swept_path(v.footprint(poses[0]), poses).buffer(-tol)
        things = [(k, n, poly) for k, n, poly in self._path_obstacles(state, v, leap)
                  if shapely.intersects(swept, poly) and not shapely.intersects(start, poly)]
        if not things:
            return None
        # How far the car's furthest corner is from the point its pose turns about: a turn of a
        # radian moves that corner this far.
        corners = np.asarray(v.footprint(poses[0]).polygon.exterior.coords) - poses[0].xy
        reach = float(np.max(np.hypot(corners[:, 0], corners[:, 1])))

        def pose_at(a: Pose, b: Pose, dh: float, u: float) -> Pose:
            return Pose(a.x_mm + (b.x_mm - a.x_mm) * u, a.y_mm + (b.y_mm - a.y_mm) * u, a.heading_deg + dh * u,
                        b.sigma_mm, b.sigma_deg)

        def clear(p: Pose) -> bool:
            poly = v.footprint(p).polygon
            return not any(shapely.intersects(poly, other) for _, _, other in things)

        along = 0.0
        stop = (0, None, 0.0)          # the last step clear of everything: segment, pose, mm along
        was_clear = clear(poses[0])
        edge = None                    # the step after the stop, which touches: segment, u clear, u touching
        for i, (a, b) in enumerate(zip(poses, poses[1:])):
            d = float(np.linalg.norm(b.xy - a.xy))
            dh = normalize_deg(b.heading_deg - a.heading_deg)
            n = max(1, math.ceil(d / D.PATH_STEP_MM), math.ceil(abs(dh) / D.PATH_STEP_DEG))
            for k in range(1, n + 1):
                u = k / n
                p = pose_at(a, b, dh, u)
                now_clear = clear(p)
                if now_clear:
                    stop = (i, p, along + d * u)
                elif was_clear:
                    edge = (i, (k - 1) / n, u)
                was_clear = now_clear
                if now_clear:
                    continue
                poly = v.footprint(p).polygon
                deep = poly.buffer(-tol)
                for thing, name, other in things:
                    if shapely.intersects(deep, other):
                        where = shapely.intersection(poly, other).centroid
                        j, q, at = stop
                        cut = poses[:j + 1] + ([q] if q is not None else [])
                        if edge is not None:
                            # Halve between the last clear step and the touching one after it.
                            j, lo, hi = edge
                            ea, eb = poses[j], poses[j + 1]
                            ed = float(np.linalg.norm(eb.xy - ea.xy))
                            edh = normalize_deg(eb.heading_deg - ea.heading_deg)
                            scale = ed + reach * math.radians(abs(edh))
                            while (hi - lo) * scale > D.CONTACT_FIND_MM:
                                mid = (lo + hi) / 2
                                lo, hi = (mid, hi) if clear(pose_at(ea, eb, edh, mid)) else (lo, mid)
                            at = sum(float(np.linalg.norm(y.xy - x.xy)) for x, y in zip(poses[:j], poses[1:j + 1])) \
                                + ed * lo
                            cut = poses[:j + 1] + ([pose_at(ea, eb, edh, lo)] if lo > 0 else [])
                        return {"thing": thing, "name": name, "at_mm": [round(where.x, 1), round(where.y, 1)],
                                "after_mm": at, "poses": cut}
            along += d
        return None

    # --- moving --------------------------------------------------------------------------

    def _set_down_against(self, state: GameState, v: Vehicle, start: Pose, dist: float) -> Pose:
        """Where a jumper that came down on a vehicle is set down (option landing_on_vehicle,
        "against_it"): the furthest point of its flight, to CONTACT_FIND_MM, where it stands clear
        of every other vehicle in play: touching the one it came down on."""
        others = [o.footprint().polygon for o in self._others(state, v.marker) if o.in_play]

        def clear(t: float) -> bool:
            poly = v.footprint(start.moved(t)).polygon
            return not any(shapely.intersects(poly, o) for o in others)
        lo, hi = 0.0, dist                  # clear at lo (it left the ramp there), not at hi
        if not clear(lo):
            return start
        while hi - lo > D.CONTACT_FIND_MM:
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if clear(mid) else (lo, mid)
        return start.moved(lo)

    def _put(self, state: GameState, v: Vehicle, to: Pose, why: str):
        """The rules moved the vehicle (stopped at a contact, spun, rolled, surged, landed): the
        players put it there, told why in their words (`RuleSystem.place`); a car that already
        stands there (a spin of no degrees) is not asked for."""
        if v.pose is not None and float(np.linalg.norm(to.xy - v.pose.xy)) <= 0.05 \
                and abs(normalize_deg(to.heading_deg - v.pose.heading_deg)) <= 0.05:
            v.pose = to
            return to
        return (yield from self.place(state, v, to, why))

    @staticmethod
    def _turn_words(deg: float) -> str:
        """A turn as players say it: "30 deg anticlockwise" (a positive turn is to the left)."""
        return f"{abs(deg):g} deg {'anticlockwise' if deg > 0 else 'clockwise'}"

    def _path_poses(self, state: GameState, v: Vehicle, action: dict) -> list[Pose]:
        """The poses a drive went through, from where the car stands in the game.

        A later drive in the same activation reads only its own way: if the path handed in runs
        through where the last move left the car, it is taken from there (a table that sends the way
        since the activation began, rather than since the last move, would otherwise have the car
        drive its first stretch twice)."""
        raw = action.get("path")
        if raw is None:
            raw = [action["to"]] if "to" in action else []
        if not raw:
            raise RulesError(f"the {v.name}'s drive needs the way it went ('path')")
        poses = [Pose(*p) for p in raw]
        start = v.pose

        def at_start(p: Pose) -> bool:
            return float(np.linalg.norm(p.xy - start.xy)) <= D.SAME_SPOT_MM and \
                abs(normalize_deg(p.heading_deg - start.heading_deg)) <= D.SAME_SPOT_DEG

        if state.paths.get(v.marker):
            k = max((i for i, p in enumerate(poses) if at_start(p)), default=None)
            if k is not None:
                poses = poses[k + 1:]
        if not poses or np.linalg.norm(poses[0].xy - start.xy) > 1.0 or \
                abs(normalize_deg(poses[0].heading_deg - start.heading_deg)) > 0.5:
            poses = [start] + poses
        return poses

    def _cost(self, state: GameState, v: Vehicle, poses: list[Pose], reverse: bool):
        """Distance and turning along a path ("Vehicles": tanks 45 deg for 3", trucks 90 deg for 3" and 3"
        between turns, the rest free); what is wrong with it, in words."""
        tol = float(self.option("turn_tolerance_deg"))
        turn = v.kind.turn
        ground = cost = 0.0
        problems, turns = [], []
        since = state.since_turn_mm
        for a, b, d in _turn_runs(poses):
            seg = b.xy - a.xy
            dh = normalize_deg(b.heading_deg - a.heading_deg)
            if abs(dh) > tol:
                if state.two_wheels:
                    problems.append(f"it turns {abs(dh):.0f} deg while on two wheels ({sec('Stunts')})")
                if turn == "tank":
                    # Paid by the 45 degrees started; a turn the camera reads within its doubt of
                    # a whole step (90.4 for 90) is that step, not one more.
                    slack = max(TURN_STEP_SLACK_DEG, 2 * math.hypot(a.sigma_deg, b.sigma_deg))
                    n = max(1, math.ceil((abs(dh) - slack) / D.TANK_TURN_DEG))
                    cost += n * inches(D.TURN_COST_IN)
                    turns.append(round(dh, 1))
                elif turn == "truck":
                    if abs(dh) > D.TRUCK_TURN_DEG + tol:
                        problems.append(f"it turns {abs(dh):.0f} deg at once; a {v.type} turns up to 90 "
                                        f"({sec('Vehicles')})")
                    if since is not None and since < inches(D.TRUCK_STRAIGHT_IN):
                        problems.append(f"it turns again after {_fmt_in(since)}; a {v.type} must move 3 in "
                                        f"after a turn first ({sec('Vehicles')})")
                    cost += inches(D.TURN_COST_IN)
                    turns.append(round(dh, 1))
                    since = 0.0
                else:
                    turns.append(round(dh, 1))
            if d > 1.0:
                mid = Pose(a.x_mm, a.y_mm, a.heading_deg + dh / 2)
                along = float(seg @ mid.forward) / d
                if reverse and along > 0.5:
                    problems.append(f"it moves forwards in a reverse move ({sec('Vehicles')})")
                elif not reverse and along < -0.5:
                    problems.append(f"it moves backwards in a forward move; reverse is a move of its own "
                                    f"({sec('Vehicles')})")
            ground += d
            if since is not None:
                since += d
        return ground, cost, sorted(set(problems), key=problems.index), turns, since

    def _crossings(self, state: GameState, v: Vehicle, poses: list[Pose], events: list, airborne=False) -> list:
        """Gates the vehicle crossed along its poses, scored in the order the path crosses them (by how
        far along it each crossing is, not the order the scene lists the gates), and the points they
        score ("Winning": not the same gate again "until it has scored on at least one other gate", so
        which came first decides; the last one crossed is the one it last scored on)."""
        scored = []
        driver = state.driver(v.marker)
        feet = [v.footprint(p) for p in poses]
        crossed = []                    # (mm along the path, the scene's order, gate)
        along = 0.0
        for i, (a, b) in enumerate(zip(feet, feet[1:])):
            d = float(np.linalg.norm(poses[i + 1].xy - poses[i].xy))
            for k, gate in enumerate(state.gates):
                if gate.role != "none" and gate.crossing(a, b) == 1:
                    crossed.append((along + d * self._crossed_at(v, gate, poses[i], poses[i + 1]), i, k, gate))
            along += d
        crossed.sort(key=lambda c: c[:3])
        for _at, _i, _k, gate in crossed:
            if airborne and not self.option("airborne_scores"):
                events.append(f"the {v.name} flies through {gate.name}: no point in the air "
                              f"(airborne_scores=False)")
            elif driver is None:
                events.append(f"the {v.name} crosses {gate.name} with nobody driving: no point")
            elif v.last_gate == gate.name:
                events.append(f"the {v.name} crosses {gate.name} again: no point until it scores on another "
                              f"gate ({sec('Winning')})")
            else:
                state.scores[driver.player] += D.GATE_POINTS
                v.last_gate = gate.name
                scored.append({"gate": gate.name, "player": driver.player})
                events.append(f"the {v.name} drives through {gate.name}: 1 point to {driver.player} "
                              f"({state.scores[driver.player]} now)")
        return scored

    def _crossed_at(self, v: Vehicle, gate, a: Pose, b: Pose) -> float:
        """Where between two poses (0 to 1) the vehicle came wholly past the gate's line: the point
        along the path its crossing is scored at (to a thousandth of a millimetre on a 30 cm step)."""
        dh = normalize_deg(b.heading_deg - a.heading_deg)

        def at(u: float) -> Pose:
            return Pose(a.x_mm + (b.x_mm - a.x_mm) * u, a.y_mm + (b.y_mm - a.y_mm) * u, a.heading_deg + dh * u)
        lo, hi = 0.0, 1.0               # not wholly past at lo, wholly past at hi
        for _ in range(20):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if gate.wholly_past(v.footprint(at(mid))) else (mid, hi)
        return hi

    def _terrain_on_path(self, state: GameState, v: Vehicle, poses: list[Pose]):
        """Rubble/forest crossed (length of the centre line in it) and lava touched."""
        line = shapely.linestrings([p.xy for p in poses]) if len(poses) > 1 else None
        swept = shapely.union_all([v.footprint(p).polygon for p in poses])
        rough, lava = [], []
        for t in state.terrain.values():
            if t.kind in ("rubble", "forest") and line is not None:
                inside = float(shapely.intersection(line, t.polygon).length)
                if inside > 0.5:
                    rough.append((t, inside))
            elif t.kind == "lava" and shapely.intersects(swept, t.polygon):
                lava.append(t)
        return rough, lava

    def _start_driving(self, state: GameState, f: Freak, v: Vehicle, reverse: bool) -> None:
        if state.drove is not None and state.drove != v.marker:
            raise RulesError(f"{f.id} already drove the {state.vehicles[state.drove].name} this turn; a freak "
                             f"drives one vehicle a turn ({sec('The Turn')})")
        direction = "reverse" if reverse else "forward"
        if state.direction is not None and state.direction != direction:
            raise RulesError(f"the {v.name} already moved {state.direction} this turn; it may not move both "
                             f"forward and in reverse ({sec('Vehicles')})")
        if state.drove is None:
            state.drove = v.marker
            state.direction = direction
            base = inches(D.REVERSE_IN if reverse else v.kind.base_move_in)
            state.budget_mm += base
            if self._shaken_due(state, v):
                # "If the vehicle moves on the driver's next turn, it loses 6" of its base movement."
                state.budget_mm -= inches(D.SHAKEN_LOSS_IN)
                v.pending, v.pending_table = 0, ""
            v.last_team = f.player
            state.no_ram = []

    def _check_driver(self, state: GameState, f: Freak, v: Vehicle) -> None:
        if f.aboard != v.marker or f.seat != "driver":
            raise RulesError(f"{f.id} is not driving the {v.name}")
        if not v.in_play:
            raise RulesError(f"the {v.name} is destroyed")
        if not v.functional:
            raise RulesError(f"the {v.name}'s engine is not working: repair it first "
                             f"({sec('Vehicle Components')})")
        if state.stopped and state.drove == v.marker:
            raise RulesError(f"the {v.name} has stopped and may not move any more this turn")
        if self._forced_due(state, v):
            raise RulesError(f"the {v.name} must first make its forced move ({self._pending_words(v)}): "
                             f"act 'forced'")

    # --- results waiting for the driver's next turn ----------------------------------------

    def _set_pending(self, state: GameState, v: Vehicle, n: int, table: str) -> None:
        """A hit table's result that waits for "the driver's next turn": taken now, it acts in the
        first activation after this one in which the vehicle's driver moves (a hit taken during its
        own driver's turn does not stop that move; "Glancing Hit Table")."""
        v.pending, v.pending_table, v.pending_since = n, table, state.activation
        v.pending_heading = None

    def _due(self, state: GameState, v: Vehicle) -> bool:
        """Its pending result acts now: it was taken before this activation began."""
        return bool(v.pending) and v.pending_since < state.activation

    def _forced_due(self, state: GameState, v: Vehicle) -> bool:
        return self._due(state, v) and not (v.pending_table == "glancing" and v.pending == 1)

    def _shaken_due(self, state: GameState, v: Vehicle) -> bool:
        return self._due(state, v) and v.pending_table == "glancing" and v.pending == 1

    def _drivers_turn_ends(self, state: GameState, f: Freak, events: list, rolls: list):
        """The driver's turn is over (he moved, or his chip went on him as a pass): a forced move not
        yet made is made now (it is not optional), and a Slightly Shaken that was waiting for this
        turn is spent, whether the vehicle moved or not ("If the vehicle moves on the driver's next
        turn, it loses 6\"")."""
        if f.aboard is None or f.seat != "driver" or f.aboard not in (state.drove_at_start, state.drove):
            return
        v = state.vehicles[f.aboard]
        if not v.in_play or not self._due(state, v):
            return
        if self._forced_due(state, v):
            events.append(f"the {v.name}'s forced move ({self._pending_words(v)}) was not made: it is made now")
            out = yield from self._forced_move(state, v, events, rolls)
            return out
        v.pending, v.pending_table = 0, ""
        events.append(f"the {v.name}'s slightly shaken is over: it was for this turn of its driver "
                      f"({sec('Glancing Hit Table')})")

    def _pending_words(self, v: Vehicle) -> str:
        if v.pending_table == "glancing":
            return D.GLANCING[v.pending]
        if v.pending_table == "penetrating":
            return D.PENETRATING[v.pending]
        return D.BIKE.get(v.pending, "")

    def judge_move(self, state: GameState, marker: int, to) -> dict | None:
        """Would the acting driver's car, driven straight from where it stands in the game to `to`
        (a turn where it starts, if any), be within its movement this turn ("Vehicles": turning
        costs, trucks' 90 deg, reverse 6 in)? None when no freak of the car is moving it now: a
        drive is judged from the camera's path as it resolves."""
        v = state.vehicle(marker)
        f = state.driver(marker)
        if v.pose is None or not v.in_play or f is None or state.acting != f.id:
            return None
        reverse = state.direction == "reverse"
        start = v.pose
        poses = [start, Pose(start.x_mm, start.y_mm, to.heading_deg, start.sigma_mm, start.sigma_deg), to]
        ground, cost, problems, turns, _ = self._cost(state, v, poses, reverse)
        if state.drove == marker:
            budget = state.budget_mm
        else:
            budget = inches(D.REVERSE_IN if reverse else v.kind.base_move_in)
            if self._shaken_due(state, v):
                budget -= inches(D.SHAKEN_LOSS_IN)
        spent = state.spent_mm + ground + cost
        verdict = judge("movement spent", spent, budget, math.hypot(start.axis_sigma_mm, to.axis_sigma_mm))
        reasons = list(problems)
        fixes = []
        if verdict.outcome == "out":
            reasons.append(f"it spends {_fmt_in(spent)} ({_fmt_in(ground)} driven, {_fmt_in(cost)} turning) but has "
                           f"{_fmt_in(budget)} this turn")
            fixes.append(f"bring it {_fmt_in(spent - budget)} back")
        return {"legal": not problems and verdict.outcome != "out", "reasons": reasons, "fix": fixes,
                "margin_mm": round(verdict.margin_mm, 2), "spent": verdict.to_json(),
                "moved_in": round(ground / MM_PER_IN, 2), "turning_in": round(cost / MM_PER_IN, 2),
                "turns_deg": turns}

    @action("drive", fields={"freak": "text", "vehicle": "marker", "path": "path", "to": "pose", "reverse": "flag",
                             "concentrate": "flag", "booster": "flag", "blocked": "flag", "leap": "text",
                             "jump_in": "number"})
    def _act_drive(self, state: GameState, action: dict):
        """Drive along a path (the poses the car went through); cost, turns, terrain and gates from it."""
        f = self._acting(state, action)
        v = state.vehicle(action.get("vehicle", f.aboard if f.aboard is not None else -1))
        self._check_driver(state, f, v)
        reverse = bool(action.get("reverse"))
        poses = self._path_poses(state, v, action)
        events, rolls = [], []
        self._start_driving(state, f, v, reverse)
        if action.get("concentrate"):
            if state.exclusive is not None:
                raise RulesError(f"{f.id} already chose to {state.exclusive} this turn; only one of repair, "
                                 f"fire or concentrate ({sec('The Turn')})")
            state.exclusive = "concentrate"
            state.budget_mm += inches(D.CONCENTRATE_IN)
            events.append(f"{f.id} concentrates on driving: +6 in")
        if action.get("booster"):
            c = next((c for c in v.components if c.kind == "booster"), None)
            if c is None or c.status != "working":
                raise RulesError(f"the {v.name} has no working booster")
            c.status = "destroyed"
            state.budget_mm += inches(D.BOOSTER_IN)
            events.append(f"the {v.name}'s booster fires: +6 in, and it is gone")
        leap = action.get("leap")
        if leap is not None:
            self._check_leap(state, v, poses, str(leap))
        driven = poses
        contact = self._path_contact(state, v, poses, None if leap is None else str(leap))
        jump_off = None
        start_ramps = [t.name for t in state.terrain.values() if t.kind == "ramp"
                       and float(shapely.distance(v.footprint(poses[0]).polygon, t.polygon)) <= float(self.option("contact_mm"))]
        if contact is not None and isinstance(contact["thing"], str) and state.terrain[contact["thing"]].kind == "ramp" \
                and self._at_ramp_foot(state, v, state.terrain[contact["thing"]], contact["poses"][-1]):
            # "A non-flying vehicle that reaches the bottom of a ramp will jump into the air" ("Jumping").
            jump_off = state.terrain[contact["thing"]]
            poses = contact["poses"]
            contact = None
        if contact is not None:
            x, y = contact["at_mm"]
            # Where, as a tape from the table's near-left corner reads it, in the book's inches.
            met = (f"the {v.name}'s path runs into {contact['name']} at ({x / MM_PER_IN:.1f}, "
                   f"{y / MM_PER_IN:.1f}) in, after {_fmt_in(contact['after_mm'])}")
            if self.option("path_contact") == "refuse":
                raise RulesError(f"{met}: that is a ram; drive to the contact and 'ram' it ({sec('Ramming')})")
            poses = contact["poses"]
        if jump_off is None and contact is None and not v.kind.flies:
            # A drive that ends at the foot of a ramp (touching, not into it) has reached it too.
            jump_off = next((t for t in state.terrain.values() if t.kind == "ramp" and t.name not in start_ramps
                             and self._at_ramp_foot(state, v, t, poses[-1])), None)
        ground, turn_cost, problems, turns, since = self._cost(state, v, poses, reverse)
        problems += self._push_problems(state, v, poses)
        if problems:
            raise RulesError(f"the {v.name} cannot drive that path: {'; '.join(problems)}")
        rough, lava = ([], []) if v.kind.flies else self._terrain_on_path(state, v, poses)
        sigma = math.hypot(v.pose.axis_sigma_mm, poses[-1].axis_sigma_mm)

        def over_budget(rubble_mm: float) -> None:
            spent = state.spent_mm + ground + turn_cost + rubble_mm
            verdict = judge("movement spent", spent, state.budget_mm, sigma)
            if verdict.outcome == "out":
                raise RulesError(f"the {v.name} cannot drive that path: it spends {_fmt_in(spent)} "
                                 f"({_fmt_in(ground)} driven, {_fmt_in(turn_cost)} turning"
                                 + (f", {_fmt_in(rubble_mm)} extra in rubble" if rubble_mm else "")
                                 + (f", {_fmt_in(state.spent_mm)} before" if state.spent_mm else "")
                                 + f") but has {_fmt_in(state.budget_mm)} this turn")
            return spent, verdict

        # Everything the dice cannot change is judged before the first of them (the page's preview
        # plays an action up to its first request): the movement without any rubble, and a jump's
        # declared distance.
        over_budget(0.0)
        if jump_off is not None:
            self._check_jump(state, v, state.ground_mm + ground, state.turn_cost_mm + turn_cost,
                             action.get("jump_in"))
        rubble_mm = 0.0
        for t, inside in rough:
            roll = yield from self._skill(state, f, f"driving through the {t.kind} {t.name}")
            rolls.append(roll.to_json())
            if roll.total < D.SKILL:
                rubble_mm += inside * (D.RUBBLE_COST_FACTOR - 1.0)
                events.append(f"the {v.name} bogs down in {t.name}: {_fmt_in(inside)} in it cost double")
        spent, verdict = over_budget(rubble_mm)
        state.spent_mm = spent
        state.ground_mm += ground
        state.turn_cost_mm = state.turn_cost_mm + turn_cost
        state.since_turn_mm = since
        state.paths.setdefault(v.marker, []).extend([[p.x_mm, p.y_mm, p.heading_deg] for p in poses])
        if action.get("blocked"):
            state.blocked = True
        end = poses[-1]
        cut = float(np.linalg.norm(end.xy - driven[-1].xy)) > 1.0 or \
            abs(normalize_deg(end.heading_deg - driven[-1].heading_deg)) > 1.0
        if contact is not None and cut:
            # The path ran on past the contact on the table: the car goes back to where it struck.
            yield from self._put(state, v, end, f"it stopped where it struck {contact['name']}, and rams it")
        else:
            v.pose = end
        scored = self._crossings(state, v, poses, events)
        result = {"act": "drive", "vehicle": v.marker, "result": "moved", "rolls": rolls, "events": events,
                  "moved_in": round(ground / MM_PER_IN, 2), "turning_in": round(turn_cost / MM_PER_IN, 2),
                  "turns_deg": turns, "spent": verdict.to_json(),
                  "left_in": round((state.budget_mm - state.spent_mm) / MM_PER_IN, 2), "scored": scored}
        for t in lava:
            events.append(f"the {v.name} touches the lava of {t.name}")
            yield from self._lava(state, v, events, rolls, action)
        if leap is not None:
            events.append(f"the {v.name} leaps over {leap} ({sec('Terrain')})")
            result["leapt"] = str(leap)
        if jump_off is not None and v.in_play:
            result["result"] = "jumped"
            declared = action.get("jump_in")
            result["jump"] = yield from self._jump(state, f, v, jump_off, None if declared is None else float(declared),
                                                   events, rolls, action)
        elif jump_off is not None and cut:
            yield from self._put(state, v, end, f"it reached the foot of {jump_off.name}")
        rammed = []
        if contact is not None:
            events.append(f"{met}: it stops there and rams it ({sec('Ramming')})")
            result["result"] = "rammed"
            # `with`: a vehicle's marker (a number) or a terrain piece's name; `kind` says which.
            result["contact"] = {"with": contact["thing"], "at_mm": contact["at_mm"],
                                 "kind": "vehicle" if isinstance(contact["thing"], int)
                                 else state.terrain[contact["thing"]].kind,
                                 "after_in": round(contact["after_mm"] / MM_PER_IN, 2)}
            state.blocked = True
            rammed.append(contact["thing"])
            # The ram's own reading (the facing each struck, with its armour; the distance it counts)
            # goes in the outcome beside the path's `contact` (the ram's gap is not asked: it stopped there).
            ram = {}
            result["ram"] = yield from self._ram(state, v, contact["thing"], events, rolls, known_contact=True,
                                                 result=ram)
            result.update({k: ram[k] for k in ("facing", "rammer_facing", "moved")})
        result["touching"] = self._touching(state, v) if v.in_play else []
        self._keep_no_ram(state, v, result["touching"], rammed)
        if contact is None and result["touching"] and v.kind.flies and v.in_play:
            # "A skimmer that ends its move in contact with an obstacle rams that obstacle": the drive
            # that ends touching ends its move; it rams each thing it touches, then stops.
            events.append(f"the {v.name} ends its move in contact: a skimmer rams what it touches "
                          f"({sec('Vehicles')})")
            result["result"] = "rammed"
            result["rams"] = {}
            for thing in result["touching"]:
                if not v.in_play:
                    break
                if self._ram_key(state, v, thing) in state.no_ram:   # rammed already, not moved off since
                    continue
                rammed.append(thing)
                result["rams"][str(thing)] = yield from self._ram(state, v, thing, events, rolls)
            state.stopped = True
            state.blocked = True
        if v.in_play:
            for thing in result["touching"]:
                if thing not in rammed:
                    yield from self._touch_fire(state, v, thing, events, rolls)
        return result

    def _check_leap(self, state: GameState, v: Vehicle, poses: list[Pose], name: str) -> None:
        """ "Cavalry may elect to leap over a normal barrier rather than ramming it, so long as the
        cavalry has enough movement to clear the barrier this turn" ("Terrain"): the path must cross the
        barrier and end clear of it (the movement it has is checked as for any drive)."""
        t = state.feature(name)
        if v.type != "cavalry":
            raise RulesError(f"only cavalry leap barriers; the {v.name} is a {v.type} ({sec('Terrain')})")
        if t.kind != "barrier":
            raise RulesError(f"{t.name} is a {t.kind}, not a normal barrier: cavalry leap only normal "
                             f"barriers ({sec('Terrain')})")
        if not shapely.intersects(swept_path(v.footprint(poses[0]), poses), t.polygon):
            raise RulesError(f"the {v.name}'s path does not cross {t.name}: nothing to leap")
        end = float(shapely.distance(v.footprint(poses[-1]).polygon, t.polygon))
        if end <= 0.0:
            left = max(state.budget_mm - state.spent_mm, 0.0)
            raise RulesError(f"the {v.name} would land on {t.name}: a leap must clear the barrier this turn "
                             f"(it has {_fmt_in(left)} left; {sec('Terrain')}); ram it instead")

    def _push_problems(self, state: GameState, v: Vehicle, poses: list[Pose]) -> list[str]:
        """Push it: "an extra 6" movement which must be taken straight ahead" ("Stunts"): some straight
        run of the turn's path covers the pushed 6" (the rest fits the movement without it); and
        "Bikes may change direction as often as they like, except when pushing it" ("Vehicles")."""
        if not state.pushing:
            return []
        done = [Pose(*p) for p in state.paths.get(v.marker, [])]
        whole = done + poses
        tol = float(self.option("turn_tolerance_deg"))
        problems = []
        if v.type in D.MOVES_LIKE_BIKE and self.option("bike_push_turns") == "none":
            turns = [dh for a, b, _ in _turn_runs(whole)
                     if abs(dh := normalize_deg(b.heading_deg - a.heading_deg)) > tol]
            if turns:
                problems.append(f"it turns {abs(turns[0]):.0f} deg while pushing it; a {v.type} may not turn "
                                f"when pushing it ({sec('Vehicles')})")
        ground, cost, *_ = self._cost(state, v, poses, state.direction == "reverse")
        spent = state.spent_mm + ground + cost
        straight = min(_straight_run_mm(whole, tol), inches(D.PUSH_IT_IN))
        without = state.budget_mm - inches(D.PUSH_IT_IN)
        sigma = math.hypot(v.pose.axis_sigma_mm, poses[-1].axis_sigma_mm)
        if judge("movement besides the push", spent - straight, without, sigma).outcome == "out":
            problems.append(f"the pushed 6 in must be straight ahead: its straightest run is {_fmt_in(straight)}"
                            f", so it spends {_fmt_in(spent - straight)} of the {_fmt_in(without)} it has "
                            f"besides the push ({sec('Stunts')})")
        return problems

    def _touch_fire(self, state: GameState, v: Vehicle, thing, events, rolls):
        """ "Any building or vehicle touched by a burning vehicle will also catch fire in a roll of 1-2"
        ("Fire!"): a building when the vehicle burns; a vehicle either way (touching is mutual)."""
        if isinstance(thing, int):
            yield from self._spread_fire(state, v, state.vehicles[thing], events, rolls)
            return
        t = state.terrain.get(thing)
        if t is None or t.kind != "building" or t.burning or not v.burning:
            return
        face = yield from self._d6(f"does the fire spread from the {v.name} to {t.name}? (1-2)")
        rolls.append({"asked": f"fire spreads to {t.name}", "face": face, "total": face, "modifiers": []})
        if face <= D.FIRE_SPREAD_MAX:
            t.burning = True
            events.append(f"{t.name} catches fire ({sec('Fire!')})")
        else:
            events.append(f"{t.name} does not catch fire")

    def _touching(self, state: GameState, v: Vehicle) -> list:
        fp = v.footprint()
        out = []
        for o in self._others(state, v.marker):
            if closest_distance(fp, o.footprint()).distance_mm <= float(self.option("contact_mm")):
                out.append(o.marker)
        for t in self._blocking(state):
            if float(shapely.distance(fp.polygon, t.solid)) <= float(self.option("contact_mm")):
                out.append(t.name)
        return out

    @action("forced", fields={"freak": "text", "vehicle": "marker"})
    def _act_forced(self, state: GameState, action: dict):
        """A forced move at the start of the driver's turn (the hit tables): straight ahead, the
        companion says where the car goes."""
        f = self._acting(state, action)
        v = state.vehicle(action.get("vehicle", f.aboard if f.aboard is not None else -1))
        if f.aboard != v.marker or f.seat != "driver":
            raise RulesError(f"{f.id} is not driving the {v.name}")
        if v.pending and not self._due(state, v):
            raise RulesError(f"the {v.name}'s {self._pending_words(v)} waits for its driver's next turn "
                             f"({sec('Glancing Hit Table')})")
        if not self._forced_due(state, v):
            raise RulesError(f"the {v.name} has no forced move waiting")
        events, rolls = [], []
        out = yield from self._forced_move(state, v, events, rolls)
        return {"act": "forced", "vehicle": v.marker, **out, "rolls": rolls, "events": events}

    def _forced_move(self, state: GameState, v: Vehicle, events: list, rolls: list):
        """The move a hit table forces: 6" straight ahead (Badly Shaken, Spinout, Rattled), or 2d6"
        and stop (Severely Shaken; Rollover and Rollover Wreck "in its last direction of movement",
        the way it travelled before it was turned 90 degrees)."""
        what = self._pending_words(v)
        stop = (v.pending_table == "glancing" and v.pending in (3, 6)) or v.pending_table == "penetrating"
        if stop:
            dist_in = yield from self._2d6(f"{what}: inches it moves", v.name, rolls)
        else:
            dist_in = D.FORCED_AHEAD_IN
        heading = v.pending_heading
        v.pending, v.pending_table, v.pending_heading = 0, "", None
        if state.drove is None:
            state.drove, state.direction = v.marker, "forward"
            state.no_ram = []
        state.budget_mm = max(state.budget_mm, inches(v.kind.base_move_in))
        if not stop and self.option("forced_six_counts") == "extra":
            state.budget_mm += inches(dist_in)
        way = "straight ahead" if heading is None else f"sideways, the way it was travelling ({heading:g} deg)"
        events.append(f"{what}: the {v.name} moves {dist_in:g} in {way}" + (" and stops" if stop else ""))
        hit = yield from self._surge(state, v, inches(dist_in), events, rolls, rams=True, heading_deg=heading,
                                     why=f"{what}: it moved {dist_in:g} in {way}")
        state.spent_mm += inches(dist_in)
        if stop:
            state.stopped = True
        return {"result": "stopped" if stop else "moved", "distance_in": dist_in, "hit": hit}

    def _surge(self, state: GameState, v: Vehicle, dist_mm: float, events: list, rolls: list, rams: bool = True,
               reverse: bool = False, heading_deg: float | None = None, why: str = ""):
        """Straight ahead (or along `heading_deg`, its facing kept) until the distance is gone or
        something is in the way, which it rams: the ram counts all the vehicle moved this turn. The
        players put it where it ends, told `why` (and what stopped it)."""
        start = v.pose
        step = 2.0
        moved = 0.0
        hit = None
        # Moved before the surge, this turn ("If the ramming vehicle moved more than 12" before ramming").
        before = 0.0
        if state.drove == v.marker:
            before = state.spent_mm if self.option("ram_distance") == "spent" else state.ground_mm
        others = [o for o in self._others(state, v.marker) if o.in_play]
        walls = [] if v.kind.flies else self._blocking(state)
        sign = -1.0 if reverse else 1.0

        def at(d: float) -> Pose:
            if heading_deg is None:
                return start.moved(sign * d)
            t = math.radians(heading_deg)
            return Pose(start.x_mm + d * math.cos(t), start.y_mm + d * math.sin(t), start.heading_deg,
                        start.sigma_mm, start.sigma_deg)

        while moved < dist_mm:
            nxt = min(moved + step, dist_mm)
            fp = v.footprint(at(nxt))
            o = next((o for o in others if shapely.intersects(fp.polygon, o.footprint().polygon)), None)
            t = next((t for t in walls if shapely.intersects(fp.polygon, t.solid)), None)
            if o is not None or t is not None:
                hit = o.marker if o is not None else t.name
                # The touch, between the last step clear and this one (as a path finds it).
                lo, hi = moved, nxt
                while hi - lo > D.CONTACT_FIND_MM:
                    mid = (lo + hi) / 2
                    poly = v.footprint(at(mid)).polygon
                    if any(shapely.intersects(poly, o.footprint().polygon) for o in others) \
                            or any(shapely.intersects(poly, t.solid) for t in walls):
                        hi = mid
                    else:
                        lo = mid
                moved = lo
                break
            moved = nxt
        end = at(moved)
        self._crossings(state, v, [start, end], events)
        words = why or f"it surged {_fmt_in(dist_mm)}"
        if hit is not None:
            words += f", and stopped where it struck the {state.vehicles[hit].name if isinstance(hit, int) else hit}" \
                     f" after {_fmt_in(moved)}"
        yield from self._put(state, v, end, words)
        if state.drove == v.marker:
            self._keep_no_ram(state, v, self._touching(state, v))
        # Where it went, for a freak grabbing hold as it passes.
        state.paths.setdefault(v.marker, []).extend([[p.x_mm, p.y_mm, p.heading_deg] for p in (start, end)])
        state.ground_mm += moved if state.drove == v.marker else 0.0
        if hit is not None:
            name = state.vehicles[hit].name if isinstance(hit, int) else hit
            if v.type == "cavalry":
                events.append(f"the {v.name} stops at the {name} after {_fmt_in(moved)}")
            elif rams:
                events.append(f"the {v.name} runs into the {name} after {_fmt_in(moved)}: a ram")
                yield from self._ram(state, v, hit, events, rolls, moved_mm=before + moved, known_contact=True)
        return hit

    # --- on foot -------------------------------------------------------------------------

    @action("walk", fields={"freak": "text", "to": "point", "teleport_in": "text", "teleport_out": "text"})
    def _act_walk(self, state: GameState, action: dict):
        """Up to 6" on foot; through a door of one building and out of another's ("Building Teleporter")."""
        f = self._acting(state, action)
        if f.aboard is not None:
            raise RulesError(f"{f.id} is aboard the {state.vehicles[f.aboard].name}: 'leave' it first")
        to = np.asarray(action["to"][:2], float)
        start = np.asarray(f.pos, float)
        via = None
        if action.get("teleport_in") is not None or action.get("teleport_out") is not None:
            if action.get("teleport_in") is None or action.get("teleport_out") is None:
                raise RulesError("the teleporter takes him in through one building's door and out of another's: "
                                 "name both ('teleport_in', 'teleport_out')")
            via = (str(action["teleport_in"]), str(action["teleport_out"]))
            a, b = (state.feature(n) for n in via)
            if a.kind != "building" or b.kind != "building":
                raise RulesError(f"the teleporters are in buildings; {a.name if a.kind != 'building' else b.name} "
                                 f"is {a.kind if a.kind != 'building' else b.kind} ({sec('Terrain')})")
            if a.name == b.name:
                raise RulesError(f"the teleporter goes to another building, not back out of {a.name}")
            dist = float(shapely.distance(shapely.points(start), a.polygon)) + \
                float(shapely.distance(b.polygon, shapely.points(to)))
        else:
            dist = float(np.linalg.norm(to - start))
        left = inches(D.WALK_IN) - state.walked_mm
        verdict = judge("walked", state.walked_mm + dist, inches(D.WALK_IN), 0.0)
        if verdict.outcome == "out":
            raise RulesError(f"{f.id} would walk {_fmt_in(dist)} but has {_fmt_in(left)} of his 6 in left "
                             f"({sec('Characters')})")
        state.walked_mm += dist
        f.pos = (float(to[0]), float(to[1]))
        return {"act": "walk", "freak": f.id, "result": "walked", "walked": verdict.to_json(),
                "events": [f"{f.id} walks {_fmt_in(dist)}" + (f" through {via[0]} and out of {via[1]}" if via else "")],
                "rolls": []}

    def _grab_gap(self, state: GameState, f: Freak, v: Vehicle) -> float:
        """How close the vehicle came to a freak on foot: to where it drove this turn (its swept
        path, "a moving vehicle within 1\"") or where it stands."""
        point = shapely.points(np.asarray(f.pos, float))
        path = state.paths.get(v.marker)
        ground = swept_path(v.footprint(), [Pose(*p) for p in path]) if path else v.footprint().polygon
        return float(shapely.distance(point, ground))

    def _dist_to(self, state: GameState, f: Freak, v: Vehicle) -> float:
        return float(shapely.distance(shapely.points(np.asarray(f.pos, float)), v.footprint().polygon))

    @action("board", fields={"freak": "text", "vehicle": "marker", "seat": OneOf("driver", "passenger")})
    def _act_board(self, state: GameState, action: dict):
        """Climb into a vehicle (Vehicle Obsession: a dash to one within 6")."""
        f = self._acting(state, action)
        v = state.vehicle(action["vehicle"])
        seat = action.get("seat", "driver")
        if seat not in ("driver", "passenger"):
            raise RulesError("seat is driver or passenger")
        if not v.in_play:
            raise RulesError(f"the {v.name} is a wreck")
        result = {"act": "board", "freak": f.id, "vehicle": v.marker, "rolls": [], "events": []}
        if f.aboard == v.marker and f.seat == "clinging":
            pass
        elif f.aboard is not None:
            raise RulesError(f"{f.id} is aboard the {state.vehicles[f.aboard].name}: 'leave' it first")
        else:
            d = self._dist_to(state, f, v)
            reach = inches(D.OBSESSION_IN) if self.option("obsession_free") else inches(D.WALK_IN) - state.walked_mm
            verdict = judge("distance to the vehicle", d, reach, v.pose.axis_sigma_mm)
            result["range"] = verdict.to_json()
            if verdict.outcome == "out":
                raise RulesError(f"the {v.name} is {_fmt_in(d)} from {f.id}; he reaches {_fmt_in(reach)} "
                                 f"({sec('Characters')}, Vehicle Obsession)")
            if not self.option("obsession_free"):
                state.walked_mm += d
        if seat == "driver" and state.driver(v.marker) is not None:
            raise RulesError(f"{state.driver(v.marker).id} drives the {v.name}: jack it ({sec('Jacking')})")
        cap = v.kind.seats
        if cap is not None and len(state.inside(v.marker)) >= cap:
            raise RulesError(f"the {v.name} is a single-occupant {v.type}")
        f.aboard, f.seat, f.pos = v.marker, seat, None
        if seat == "driver":
            self._new_driver(state, v, f, result["events"])
        result["events"].append(f"{f.id} climbs into the {v.name} as its {seat}")
        result["result"] = "boarded"
        return result

    def _new_driver(self, state: GameState, v: Vehicle, f: Freak, events: list) -> None:
        """ "Winning": "If the vehicle is abandoned and then taken by another player, it may once again score
        on any gate. If the driver abandons the vehicle and acquires another, the new vehicle may also score
        on any gate": a vehicle taken by another player, or by a driver who left another vehicle for it (or,
        option any_new_driver, by any other freak) may score on any gate again."""
        switched = f.drove_before is not None and f.drove_before != v.marker
        if self.option("gate_reset") == "other_player":
            reset = v.last_team != f.player or switched
        else:
            reset = v.last_driver != f.id
        if reset and v.last_gate is not None:
            events.append(f"the {v.name} has a new driver: it may score on any gate again ({sec('Winning')})")
            v.last_gate = None
        v.last_team = f.player
        v.last_driver = f.id
        f.drove_before = v.marker

    @action("leave", fields={"freak": "text", "to": "point"})
    def _act_leave(self, state: GameState, action: dict):
        """Get out (or let go, if clinging: "without penalty") and step to a spot."""
        clinging = state.freak(action.get("freak") or state.acting or "").seat == "clinging" \
            if (action.get("freak") or state.acting) else False
        # "A clinging freak may let go at any time without penalty"; getting out is part of his move.
        f = self._acting(state, action, out_of_turn=clinging)
        if f.aboard is None:
            raise RulesError(f"{f.id} is not aboard anything")
        v = state.vehicles[f.aboard]
        if f.seat == "driver" and self._forced_due(state, v):
            raise RulesError(f"the {v.name} must make its forced move; bailing out is the only way off "
                             f"({sec('Stunts')})")
        events = []
        at = action.get("to")
        if at is not None and f.id == state.acting:
            d = float(shapely.distance(v.footprint().polygon, shapely.points(np.asarray(at[:2], float))))
            if state.walked_mm + d > inches(D.WALK_IN) + 1e-6:
                raise RulesError(f"that spot is {_fmt_in(d)} from the {v.name}; {f.id} has "
                                 f"{_fmt_in(inches(D.WALK_IN) - state.walked_mm)} on foot")
            state.walked_mm += d
        was = f.seat
        self._put_on_foot(state, f, None if at is None else at[:2])
        events.append(f"{f.id} {'lets go of' if was == 'clinging' else 'gets out of'} the {v.name}")
        return {"act": "leave", "freak": f.id, "result": "on foot", "events": events, "rolls": []}

    # --- stunts ----------------------------------------------------------------------------

    def _clingers(self, state: GameState, v: Vehicle, why: str, events: list, rolls: list, wound: bool = False):
        """Clinging riders roll when the vehicle stunts, rams or is rammed (fall off) or is hit (wounded)."""
        for c in state.aboard(v.marker, "clinging"):
            roll = yield from self._skill(state, c, f"hold on to the {v.name} ({why})")
            rolls.append(roll.to_json())
            if roll.total >= D.SKILL:
                events.append(f"{c.id} holds on")
            elif wound:
                events.append(f"{c.id} is caught by the shot")
                yield from self._wound(state, c, events, rolls, f"the shot at the {v.name}")
            else:
                self._put_on_foot(state, c, v.pose.xy if v.pose else None)
                events.append(f"{c.id} falls off the {v.name}")

    def _use_stunt(self, state: GameState, f: Freak, name: str) -> None:
        if state.stunt is not None:
            raise RulesError(f"{f.id} already did a stunt this turn ({str(state.stunt).replace('_', ' ')}); one a turn ({sec('The Turn')})")
        state.stunt = name

    @action("stunt", fields={"freak": "text", "vehicle": "marker", "stunt": OneOf(*D.STUNTS), "turn_deg": "number",
                             "to": "point"})
    def _act_stunt(self, state: GameState, action: dict):
        """Push it, Panic Turn, Two Wheels, Bail Out ("Stunts"); Grab Hold is 'grab'."""
        f = self._acting(state, action)
        kind = action.get("stunt")
        if kind not in D.STUNTS:
            raise RulesError(f"stunt must be push_it, panic_turn, two_wheels or bail_out, not {kind!r} "
                             f"(Grab Hold is the 'grab' action)")
        if f.seat != "driver":
            raise RulesError(f"{f.id} is not driving anything")
        v = state.vehicles[f.aboard]
        if action.get("vehicle") is not None and state.vehicle(action["vehicle"]) is not v:
            raise RulesError(f"{f.id} drives the {v.name}, not the {state.vehicle(action['vehicle']).name}: "
                             f"a stunt is done with the vehicle he drives")
        if kind != "bail_out" and f.aboard == state.drove_at_start and self._forced_due(state, v):
            # "at the beginning of the driver's next turn": bailing out is the only way off first.
            raise RulesError(f"the {v.name} must first make its forced move ({self._pending_words(v)}): act "
                             f"'forced' (or bail out; {sec('Stunts')})")
        if kind in ("push_it", "panic_turn") and not v.functional:
            raise RulesError(f"the {v.name} cannot move (its engine is not working)")
        if kind == "two_wheels" and v.type not in ("truck", "bike"):
            raise RulesError(f"a {v.type} has no wheels to tip onto")
        turn_deg = float(action.get("turn_deg", 0.0))
        if kind == "panic_turn" and not 0 < abs(turn_deg) <= D.PANIC_TURN_DEG:
            raise RulesError(f"a panic turn changes facing by up to 90 deg; say 'turn_deg' (not {turn_deg:g})")
        if kind == "push_it" and v.type in D.MOVES_LIKE_BIKE and self.option("bike_push_turns") == "none":
            tol = float(self.option("turn_tolerance_deg"))
            done = [Pose(*p) for p in state.paths.get(v.marker, [])]
            if any(abs(normalize_deg(b.heading_deg - a.heading_deg)) > tol for a, b, _ in _turn_runs(done)):
                raise RulesError(f"the {v.name} has turned this move: a {v.type} may not turn when pushing it "
                                 f"({sec('Vehicles')})")
        self._use_stunt(state, f, kind)
        events, rolls = [], []
        roll = yield from self._skill(state, f, kind.replace("_", " "), stunt_on=v)
        rolls.append(roll.to_json())
        ok = roll.total >= D.SKILL
        result = {"act": "stunt", "stunt": kind, "freak": f.id, "vehicle": v.marker,
                  "result": "success" if ok else "failure", "rolls": rolls, "events": events}
        yield from self._clingers(state, v, f"the {kind.replace('_', ' ')}", events, rolls)
        if kind == "push_it":
            self._start_driving(state, f, v, False) if state.drove is None else None
            state.budget_mm += inches(D.PUSH_IT_IN)
            state.pushing = True
            state.push_failed = not ok
            events.append(f"the {v.name} pushes it: +6 in straight ahead"
                          + ("" if ok else "; the engine will be damaged after the move"))
        elif kind == "panic_turn":
            if ok:
                yield from self._put(state, v, v.pose.moved(turn_deg=turn_deg),
                                     f"Panic Turn: it snapped round {self._turn_words(turn_deg)}")
                events.append(f"the {v.name} snaps round {turn_deg:+g} deg")
        elif kind == "two_wheels":
            if ok:
                state.two_wheels = True
                events.append(f"the {v.name} drives on two wheels: no turning")
            elif self.option("two_wheels_failure") == "rollover":
                events.append(f"the {v.name} tips too far and rolls over")
                yield from self._glancing_effect(state, v, 6, events, rolls, action)
        else:
            yield from self._bail_out(state, f, v, ok, events, rolls, action)
        return result

    def _bail_out(self, state: GameState, f: Freak, v: Vehicle, ok: bool, events, rolls, action):
        """ "At some point during movement, the driver ... leaps out ... The vehicle continues to move
        straight ahead for the remainder of its movement" ("Stunts"): it is still the vehicle moving this
        turn (its ram counts all it moved, and it rams unoccupied)."""
        if state.drove is None and v.functional:
            self._start_driving(state, f, v, False)
        at = action.get("to")
        self._put_on_foot(state, f, None if at is None else at[:2])
        events.append(f"{f.id} jumps out of the {v.name}")
        if not ok:
            yield from self._wound(state, f, events, rolls, "a bad landing")
        left = max(state.budget_mm - state.spent_mm, 0.0) if state.drove == v.marker and v.functional else 0.0
        if left > 0:
            events.append(f"the {v.name} carries on {_fmt_in(left)} straight ahead")
            yield from self._surge(state, v, left, events, rolls, rams=True,
                                   why=f"{f.id} bailed out: it carried on {_fmt_in(left)} straight ahead")
            state.spent_mm = state.budget_mm

    @action("grab", fields={"freak": "text", "vehicle": "marker"})
    def _act_grab(self, state: GameState, action: dict):
        """Grab Hold / Clinging: a freak on foot within 1" of a (moving) vehicle, even out of turn."""
        f = self._acting(state, action, out_of_turn=True)
        v = state.vehicle(action["vehicle"])
        if f.aboard is not None:
            raise RulesError(f"{f.id} is already aboard the {state.vehicles[f.aboard].name}")
        if f.down:
            raise RulesError(f"{f.id} is down until his next turn")
        if not v.on_table:
            raise RulesError(f"the {v.name} is not on the table")
        d = self._grab_gap(state, f, v)
        verdict = judge("distance to the vehicle's path", d, inches(D.GRAB_IN), v.pose.axis_sigma_mm)
        if verdict.outcome == "out":
            raise RulesError(f"the {v.name} came no closer than {_fmt_in(d)} to {f.id}; grabbing reaches 1 in "
                             f"({sec('Clinging to a Vehicle')})")
        if f.id == state.acting:
            self._use_stunt(state, f, "grab_hold")
        events, rolls = [], []
        roll = yield from self._skill(state, f, f"grab hold of the {v.name}", extra=())
        rolls.append(roll.to_json())
        result = {"act": "grab", "freak": f.id, "vehicle": v.marker, "range": verdict.to_json(),
                  "rolls": rolls, "events": events}
        if roll.total >= D.SKILL:
            f.aboard, f.seat, f.pos = v.marker, "clinging", None
            events.append(f"{f.id} grabs hold of the {v.name}")
            result["result"] = "clinging"
        else:
            events.append(f"{f.id} misses the {v.name} and falls")
            yield from self._wound(state, f, events, rolls, "a failed grab")
            result["result"] = "fell"
        return result

    # --- jumping --------------------------------------------------------------------------

    def _ramp_into(self, ramp) -> np.ndarray:
        """The way a vehicle drives up the ramp: across its bottom edge (its first two points), into it."""
        (ax, ay), (bx, by) = ramp.points[0], ramp.points[1]
        into = np.array([-(by - ay), bx - ax], float)
        centre = np.asarray(ramp.polygon.centroid.coords[0])
        if (centre - np.array([ax, ay])) @ into < 0:
            into = -into
        return into / np.linalg.norm(into)

    def _at_ramp_foot(self, state: GameState, v: Vehicle, ramp, pose: Pose) -> bool:
        """The vehicle at `pose` has reached the bottom of the ramp: it touches the ramp (within
        contact_mm), the ramp's nearest edge to it is the bottom edge, and it is heading up the ramp
        (from any other side the ramp "is considered a fixed barrier", "Terrain")."""
        poly = v.footprint(pose).polygon
        if float(shapely.distance(poly, ramp.polygon)) > float(self.option("contact_mm")):
            return False
        near = np.asarray(shapely.shortest_line(ramp.polygon, poly).coords[0])
        if poly.intersects(ramp.polygon):
            near = np.asarray(shapely.intersection(poly, ramp.polygon).centroid.coords[0])
        return ramp.wall_near(near) == 0 and float(pose.forward @ self._ramp_into(ramp)) > 0

    @action("jump", fields={"freak": "text", "vehicle": "marker", "ramp": "text", "distance_in": "number"})
    def _act_jump(self, state: GameState, action: dict):
        """Off a ramp: up to the distance moved so far (+6" if pushing it); at least half of that
        declared; half the declared on a failed stunt roll ("Jumping").  A drive that reaches a ramp's
        bottom jumps by itself; this is for a vehicle that stands at the bottom of one."""
        f = self._acting(state, action)
        v = state.vehicle(action.get("vehicle", f.aboard if f.aboard is not None else -1))
        self._check_driver(state, f, v)
        if v.kind.flies:
            raise RulesError(f"the {v.name} flies; ramps are for vehicles on the ground")
        ramp = state.feature(action["ramp"])
        if ramp.kind != "ramp":
            raise RulesError(f"{ramp.name} is not a ramp")
        fp = v.footprint()
        if float(shapely.distance(fp.polygon, ramp.polygon)) > float(self.option("contact_mm")):
            raise RulesError(f"the {v.name} is {_fmt_in(float(shapely.distance(fp.polygon, ramp.polygon)))} "
                             f"from {ramp.name}; it must reach the ramp")
        if float(v.pose.forward @ self._ramp_into(ramp)) <= 0:
            raise RulesError(f"the {v.name} meets {ramp.name} from the wrong side: that is a fixed barrier "
                             f"({sec('Terrain')})")
        events, rolls = [], []
        declared = action.get("distance_in")
        out = yield from self._jump(state, f, v, ramp, None if declared is None else float(declared),
                                    events, rolls, action)
        return {"act": "jump", "vehicle": v.marker, **out, "rolls": rolls, "events": events}

    def _check_jump(self, state: GameState, v: Vehicle, ground_mm: float, turn_mm: float, declared_in) -> tuple:
        """How far a jump may go ("Jumping": what it moved this turn, turning included, +6" when pushing
        it), and a declared distance checked against it (at least half of that, at most all of it):
        (moved, most) in mm, or a refusal."""
        moved = ground_mm + turn_mm
        most = moved + (inches(D.PUSH_IT_IN) if state.pushing else 0.0)
        if most <= 0:
            raise RulesError(f"the {v.name} has not moved this turn: it cannot jump")
        if declared_in is not None:
            least_in, most_in = _jump_span(most)
            try:
                declared = float(declared_in)
            except (TypeError, ValueError):
                raise RulesError(f"a jump's declared distance is a number of inches, not {declared_in!r}") from None
            # Judged in the hundredths the page offers and shows ("up to the maximum possible jump",
            # "not ... less than ½ the maximum"): every offer is taken, nothing beyond them is.
            if not (least_in - 1e-9 <= declared <= most_in + 1e-9):
                raise RulesError(f"a jump of {declared:g} in cannot be stated: declare between {least_in:.2f} in "
                                 f"and {most_in:.2f} in (it moved {_fmt_in(moved)}"
                                 + (" and is pushing it" if state.pushing else "") + f"; {sec('Jumping')})")
        return moved, most

    def _jump_choices(self, most_mm: float) -> list[float]:
        """What the driver may state ("Jumping"): half the most (to the hundredth, rounded up so it is
        at least half), the whole inches between, and the most (rounded down, so it is no more than
        the most): every one of them is a jump `_check_jump` takes."""
        least_in, most_in = _jump_span(most_mm)
        return sorted({least_in, most_in} | {float(k) for k in range(math.ceil(least_in), math.floor(most_in) + 1)})

    def _jump(self, state: GameState, f: Freak, v: Vehicle, ramp, declared_in: float | None, events, rolls, action):
        """The flight ("Jumping"): the most is what it moved this turn before the ramp, turning included
        (+6" when pushing it); the driver states a distance from half the most to the most (asked of
        his player when not given); a failed stunt roll flies half of it."""
        moved, most = self._check_jump(state, v, state.ground_mm, state.turn_cost_mm, declared_in)
        if declared_in is None:
            picks = self._jump_choices(most)
            lo, hi = _jump_span(most)
            declared_in = picks[0] if len(picks) == 1 else (yield ChoiceRequest(
                f.player, f"how far the {v.name} jumps off {ramp.name} (from {lo:.2f} to {hi:.2f} in)",
                tuple({"value": d, "label": f"{d:g} in"} for d in picks), v.name))
            declared_in = float(declared_in)
        self._check_jump(state, v, state.ground_mm, state.turn_cost_mm, declared_in)
        declared = inches(declared_in)
        events.append(f"the {v.name} reaches the bottom of {ramp.name} and jumps: {f.id} states {declared_in:g} in "
                      f"(most {_jump_span(most)[1]:.2f} in; {sec('Jumping')})")
        roll = yield from self._skill(state, f, f"the jump off {ramp.name}", stunt_on=v)
        rolls.append(roll.to_json())
        yield from self._clingers(state, v, "the jump", events, rolls)
        dist = declared if roll.total >= D.SKILL else declared / 2
        start = v.pose
        land = start.moved(dist)
        steps = [start.moved(dist * k / 8) for k in range(9)]
        self._crossings(state, v, steps, events, airborne=True)
        # What it comes down on is where the rules land it, whatever a hand then makes of the stack.
        under = next((o for o in self._others(state, v.marker)
                      if o.in_play and shapely.intersects(v.footprint(land).polygon, o.footprint().polygon)), None)
        if under is not None and self.option("landing_on_vehicle") == "against_it":
            set_down = self._set_down_against(state, v, start, dist)
            yield from self._put(state, v, set_down,
                                 f"it jumped off {ramp.name} {_fmt_in(dist)}"
                                 + ("" if roll.total >= D.SKILL else " (half: the stunt roll failed)")
                                 + f" and came down on the {under.name}: set it down against the {under.name}, "
                                 f"on its flight line (option landing_on_vehicle)")
        else:
            yield from self._put(state, v, land, f"it jumped off {ramp.name} and landed {_fmt_in(dist)} on"
                                 + ("" if roll.total >= D.SKILL else " (half: the stunt roll failed)")
                                 + (f", on top of the {under.name}" if under is not None else ""))
        state.ground_mm += dist
        state.paths.setdefault(v.marker, []).extend([[p.x_mm, p.y_mm, p.heading_deg] for p in steps])
        events.append(f"the {v.name} flies {_fmt_in(dist)}" + ("" if roll.total >= D.SKILL else
                                                                 " (half: the stunt roll failed)"))
        result = {"result": "landed", "ramp": ramp.name, "declared_in": round(declared_in, 2),
                  "distance_in": round(dist / MM_PER_IN, 2), "max_in": _jump_span(most)[1]}
        if under is not None:
            events.append(f"the {v.name} lands on the {under.name}: a ram from above, on its top armour")
            result["rammed"] = under.marker
            yield from self._ram(state, v, under.marker, events, rolls, moved_mm=state.ground_mm, from_above=True)
        for t in state.terrain.values():
            if t.kind == "lava" and shapely.intersects(v.footprint().polygon, t.polygon):
                events.append(f"the {v.name} lands in the lava of {t.name}")
                yield from self._lava(state, v, events, rolls, action)
        if state.drove == v.marker:
            self._keep_no_ram(state, v, self._touching(state, v))
            if self.option("after_jump") == "stops" and v.in_play:
                state.stopped = state.blocked = True
                events.append(f"the {v.name} lands: its move is over (option after_jump: stops)")
        return result

    # --- jacking ---------------------------------------------------------------------------

    @action("jack", fields={"freak": "text", "vehicle": "marker"})
    def _act_jack(self, state: GameState, action: dict):
        """Both roll a d6, the driver +1; the winner drives, the loser is tossed out with a wound; a tie
        surges the vehicle 6" ahead ("Jacking")."""
        f = self._acting(state, action)
        v = state.vehicle(action["vehicle"])
        holder = state.driver(v.marker)
        if holder is None:
            raise RulesError(f"nobody drives the {v.name}: just climb in (act 'board')")
        if holder.player == f.player:
            raise RulesError(f"{holder.id} is on {f.id}'s own team")
        if state.jacked:
            raise RulesError(f"{f.id} already tried a jacking this turn")
        result = {"act": "jack", "freak": f.id, "vehicle": v.marker}
        if f.aboard != v.marker:
            if self.option("jack_reach") == "aboard_only" or f.aboard is not None:
                raise RulesError(f"{f.id} must be aboard the {v.name} to jack it (jack_reach="
                                 f"{self.option('jack_reach')})")
            d = self._dist_to(state, f, v)
            verdict = judge("distance to the vehicle", d, inches(D.GRAB_IN), v.pose.axis_sigma_mm)
            result["range"] = verdict.to_json()
            if verdict.outcome == "out":
                raise RulesError(f"the {v.name} is {_fmt_in(d)} from {f.id}; a jacker must be aboard or within 1 in")
        state.jacked = True
        events, rolls = [], []
        req = DiceRequest(("d6",), f"jacking the {v.name} (jacker)", f.id)
        a = Roll(req, (yield req).faces[0], self._burning_mods(state, f))
        req2 = DiceRequest(("d6",), f"jacking the {v.name} (driver, +1)", holder.id)
        b = Roll(req2, (yield req2).faces[0],
                 (Modifier(D.JACK_HOLDER_BONUS, "controls the vehicle"),) + self._burning_mods(state, holder))
        rolls += [a.to_json(), b.to_json()]
        result.update(rolls=rolls, events=events)
        if a.total > b.total:
            self._put_on_foot(state, holder)
            f.aboard, f.seat, f.pos = v.marker, "driver", None
            self._new_driver(state, v, f, events)
            events.append(f"{f.id} throws {holder.id} out and takes the wheel of the {v.name}")
            yield from self._wound(state, holder, events, rolls, "being thrown out")
            result["result"] = "jacked"
        elif a.total < b.total:
            self._put_on_foot(state, f, None if f.aboard is not None else f.pos)
            events.append(f"{holder.id} keeps the {v.name}; {f.id} is tossed out")
            yield from self._wound(state, f, events, rolls, "being tossed out")
            result["result"] = "repelled"
        else:
            events.append(f"a tie: the {v.name} surges 6 in straight ahead; {holder.id} keeps control")
            if f.aboard == v.marker and self.option("jack_tie") == "falls_off":
                self._put_on_foot(state, f, v.pose.xy)
                events.append(f"{f.id} falls off where the surge began")
            yield from self._surge(state, v, inches(D.SURGE_IN), events, rolls, rams=True,
                                   why="a tie in the jacking: it surged 6 in straight ahead")
            result["result"] = "tie: surged"
        return result

    # --- shooting ------------------------------------------------------------------------

    def _sight(self, state: GameState, a: Footprint, b: Footprint, exclude: str | None = None):
        kinds = ("forest", "building") if self.option("sight") == "forest_and_buildings" else ("forest",)
        blockers = [Terrain(t.polygon, "blocking", t.name) for t in state.terrain.values()
                    if t.kind in kinds and t.name != exclude]
        return Obstacles(blockers, []).line_of_sight(a, b)

    @action("shoot", fields={"freak": "text", "weapon": "text", "target": "marker"})
    def _act_shoot(self, state: GameState, action: dict):
        """1d6 + strength against the armour of the facing hit ("Shooting")."""
        f = self._acting(state, action)
        if f.aboard is None or f.seat == "clinging":
            raise RulesError(f"{f.id} must be inside a vehicle to fire its weapon ({sec('Clinging to a Vehicle')})")
        v = state.vehicles[f.aboard]
        weapon = v.component(action["weapon"])
        if weapon.kind != "weapon":
            raise RulesError(f"the {weapon.name} is not a weapon")
        if weapon.status != "working":
            raise RulesError(f"the {v.name}'s {weapon.name} is {weapon.status}")
        target = state.vehicle(action["target"])
        if not target.in_play or not target.on_table:
            raise RulesError(f"the {target.name} is a wreck")
        if target.marker == v.marker:
            raise RulesError("a vehicle cannot shoot itself")
        self._exclusive(state, f, "fire")
        me, them = v.footprint(), target.footprint()
        dist = closest_distance(me, them)
        in_range = dist.within(inches(weapon.range_in), "range")
        if in_range.outcome == "out":
            state.exclusive = None
            raise RulesError(f"the {target.name} is {_fmt_in(dist.distance_mm)} away; the {weapon.name} reaches "
                             f"{weapon.range_in:g} in")
        sight = self._sight(state, me, them)
        if not sight.clear:
            state.exclusive = None
            raise RulesError(f"no line of sight to the {target.name}: {', '.join(sight.blocked_by)} in the way")
        events, rolls = [], []
        point = self._attack_point(me, None, target)
        result = {"act": "shoot", "freak": f.id, "vehicle": v.marker, "weapon": weapon.name,
                  "target": target.marker, "range": in_range.to_json(), "rolls": rolls, "events": events}
        out = yield from self._hit(state, target, weapon.strength, None, events, rolls, action,
                                   who=f"{f.id}'s {weapon.name}", shooter=f, point=point,
                                   sigma=me.pose.axis_sigma_mm, ignites=weapon.ignites, result=result)
        result["result"] = out
        return result

    def _exclusive(self, state: GameState, f: Freak, what: str) -> None:
        if state.exclusive is not None:
            raise RulesError(f"{f.id} already chose to {state.exclusive} this turn; only one of repair, fire or "
                             f"concentrate ({sec('The Turn')})")
        state.exclusive = what

    def _hit(self, state: GameState, target: Vehicle, strength: int, facing: str | None, events, rolls, action,
             who: str, shooter: Freak | None = None, point=None, sigma: float = 0.0, ignites: bool = False,
             result: dict | None = None):
        """A strength-S hit: natural 1 misses, natural 6 penetrates, else the total against the facing's armour."""
        if facing is None:
            facing, verdict, note = self._facing(state, target, point, sigma, who)
            if result is not None:
                result["facing"] = {**verdict.to_json(), "facing": facing}
            if note:
                events.append(note)
        req = DiceRequest(("d6",), f"{who}: strength {strength} at the {target.name}'s {facing} "
                                   f"(armour {target.armour_of(facing)})", shooter.id if shooter else "")
        face = (yield req).faces[0]
        mods = (Modifier(strength, f"strength {strength}"),) + self._burning_mods(state, shooter)
        roll = Roll(req, face, mods)
        rolls.append(roll.to_json())
        if result is not None:
            result.setdefault("facing", {"facing": facing})
        armour = target.armour_of(facing)
        bike = target.kind.hit_table == "bike"
        if face == D.MISS_FACE:
            events.append(f"{who} misses the {target.name} (a natural 1)")
            return "missed"
        if face == D.PENETRATE_FACE:
            kind = "penetrating"
            if self.option("natural_six_strips_armour") and not bike:
                self._strip(target, facing, events)
            events.append(f"a natural 6: {who} scores a penetrating hit on the {target.name}")
        else:
            compared = roll.total if self.option("shot_compare") == "total" else face
            if compared <= armour:
                kind = "armour"
                if not bike:
                    self._strip(target, facing, events)
                events.append(f"{who}: {compared} against armour {armour}: "
                              + ("no effect on a bike" if bike else "1 point of armour destroyed"))
            else:
                kind = "glancing" if armour > 0 else "penetrating"
                if not bike:
                    self._strip(target, facing, events)
                events.append(f"{who}: {compared} against armour {armour}: a {kind} hit"
                              + ("" if armour > 0 else " (no armour on that side)"))
        yield from self._clingers(state, target, f"{who} hits", events, rolls, wound=True)
        if ignites and target.in_play and (self.option("flamer_ignites") == "any_hit" or kind != "armour"):
            if not target.burning:
                target.burning = True
                events.append(f"the {target.name} is set on fire")
        if kind == "armour":
            return "armour"
        if bike:
            yield from self._bike_hit(state, target, events, rolls, action, who)
        elif kind == "glancing":
            yield from self._glancing(state, target, events, rolls, action)
        else:
            yield from self._penetrating(state, target, facing, events, rolls, action, had=armour)
        return kind

    def _strip(self, v: Vehicle, facing: str, events: list) -> None:
        if v.armour.get(facing, 0) > 0:
            v.armour[facing] -= 1

    # --- the hit tables ------------------------------------------------------------------

    def _occupied_functional(self, state: GameState, v: Vehicle) -> bool:
        return bool(state.inside(v.marker)) and v.functional

    def _why_not_working(self, state: GameState, v: Vehicle) -> str:
        """Why a hit table's "unoccupied or non-functional" case applies, in one word."""
        return "unoccupied" if not state.inside(v.marker) else "non-functional"

    # --- choices the hit tables give a player ----------------------------------------------

    def _driver_player(self, state: GameState, v: Vehicle) -> str:
        """Whose "driver's choice" it is: the driver's player (else an occupant's)."""
        f = state.driver(v.marker) or next(iter(state.inside(v.marker)), None)
        return f.player if f is not None else (self._culprit(state) or state.players[0])

    def _other_player(self, state: GameState, v: Vehicle, occupants: bool = False) -> str:
        """ "A player other than the driver (typically the player who caused the glancing hit)", or
        "other than a current occupant": the acting player when he is not the one excluded, else the
        first player who is not."""
        excluded = {f.player for f in (state.inside(v.marker) if occupants else state.aboard(v.marker, "driver"))}
        culprit = self._culprit(state)
        # The acting player did not cause a hit on a vehicle his own team is moving (an empty car he bailed
        # out of, his own car hurt by the other's ram roll): the other side did.
        own = v.last_team == culprit and state.drove == v.marker and len(state.players) > 1
        if self.option("other_chooser") == "culprit" and culprit is not None and culprit not in excluded \
                and not own:
            return culprit
        # The next player round the table (the rosters' order) after the driver's.
        first = self._driver_player(state, v)
        k = state.players.index(first) if first in state.players else -1
        ring = state.players[k + 1:] + state.players[:k + 1]
        return next((p for p in ring if p not in excluded), culprit or state.players[0])

    def _choose_component(self, state: GameState, v: Vehicle, player: str, purpose: str, undamaged_first: bool):
        """The component a player picks (a ChoiceRequest of that player, asked only when there is a
        choice): an undamaged one if any ("This must be an undamaged component if any are
        available"), else, where the table allows it (`undamaged_first`), a damaged one. None: none left."""
        pool = [c for c in v.components if c.status == "working"]
        if not pool and undamaged_first:
            pool = [c for c in v.components if c.status == "damaged"]
        if len(pool) <= 1:
            return pool[0] if pool else None
        value = yield ChoiceRequest(player, f"which component of the {v.name} {purpose}",
                                    tuple({"value": c.name, "label": f"{c.name} ({c.status})"} for c in pool), v.name)
        return next(c for c in pool if c.name == value)

    def _choose_turn(self, state: GameState, v: Vehicle, player: str, purpose: str):
        """Up to 45 degrees either way, chosen by `player` (Spinout, Rattled): the new heading."""
        # The page offers the turn in steps (15 deg): a hand turning a car is no finer than that.
        most = int(D.SPINOUT_DEG)
        options = tuple({"value": d, "label": "no turn" if d == 0 else
                         f"{abs(d)} deg {'anticlockwise' if d > 0 else 'clockwise'}"}
                        for d in range(-most, most + 1, D.CHOSEN_TURN_STEP_DEG))
        return (yield ChoiceRequest(player, f"how far the {v.name} {purpose} (up to 45 deg either way)",
                                    options, v.name))

    def _glancing(self, state: GameState, v: Vehicle, events, rolls, action):
        if not v.in_play:
            return
        if not self._occupied_functional(state, v):
            c = yield from self._choose_component(state, v, self._other_player(state, v, occupants=True),
                                                  "is destroyed by the glancing hit", undamaged_first=True)
            left = [x for x in v.components if x.status != "destroyed"]
            if c is None or len(left) <= 1:
                if c is not None:
                    c.status = "destroyed"
                self._destroy(state, v, events, self._culprit(state), "a glancing hit on its last component")
            else:
                c.status = "destroyed"
                events.append(f"glancing hit on the {self._why_not_working(state, v)} {v.name}: its {c.name} "
                              f"{_is(c.name)} destroyed")
            return
        n = yield from self._d6(f"glancing hit table for the {v.name}", v.name)
        rolls.append({"asked": f"glancing hit table for the {v.name}", "face": n, "total": n, "modifiers": []})
        yield from self._glancing_effect(state, v, n, events, rolls, action)

    def _glancing_effect(self, state: GameState, v: Vehicle, n: int, events, rolls, action):
        events.append(f"glancing hit {n}: {D.GLANCING[n]}")
        if n in D.PENDING_GLANCING:
            if v.pending_table in ("", "glancing") and n >= v.pending:
                if v.pending:
                    events.append(f"it supersedes the pending {D.GLANCING[v.pending]}")
                self._set_pending(state, v, n, "glancing")
            elif v.pending_table == "glancing":
                events.append(f"the pending {D.GLANCING[v.pending]} is higher and stands")
        if n == 4:
            spin = yield from self._choose_turn(state, v, self._other_player(state, v), "spins out")
            yield from self._put(state, v, v.pose.moved(turn_deg=spin), f"Spinout: it spun {self._turn_words(spin)}")
            events.append(f"the {v.name} spins {spin:+g} deg")
        elif n == 5:
            c = yield from self._choose_component(state, v, self._driver_player(state, v),
                                                  "is destroyed (Component Damage)", undamaged_first=False)
            if c is None:
                self._destroy(state, v, events, self._culprit(state), "no undamaged component left to lose")
            else:
                c.status = "destroyed"
                events.append(f"the {v.name}'s {c.name} {_is(c.name)} destroyed")
        elif n == 6:
            yield from self._roll_over(state, v, events, rolls, action, wound=False)

    def _roll_over(self, state: GameState, v: Vehicle, events, rolls, action, wound: bool):
        # It will move "in its last direction of movement": the way it travelled before the turn.
        travel = v.pose.heading_deg + (180.0 if state.drove == v.marker and state.direction == "reverse" else 0.0)
        if (v.pending_table, v.pending) in (("glancing", 6), ("penetrating", 4)) and v.pending_since == state.activation:
            v.pending_heading = normalize_deg(travel)
        side = yield ChoiceRequest(self._driver_player(state, v), f"which way the {v.name} rolls over "
                                   f"(90 deg to its direction of travel)",
                                   ({"value": "left", "label": "to the left"}, {"value": "right", "label": "to the right"}),
                                   v.name)
        yield from self._put(state, v, v.pose.moved(turn_deg=D.ROLLOVER_DEG if side == "left" else -D.ROLLOVER_DEG),
                             f"it rolled over to its {side}, turned 90 deg")
        events.append(f"the {v.name} rolls over, turned 90 deg to the {side}")
        for c in [c for c in v.components if c.status == "working"]:
            face = yield from self._d6(f"does the {v.name}'s {c.name} survive the roll? (1-3 breaks it)", v.name)
            rolls.append({"asked": f"{v.name}'s {c.name} in the rollover", "face": face, "total": face,
                          "modifiers": []})
            if face <= D.ROLL_OVER_DAMAGE_MAX:
                c.status = "damaged"
                events.append(f"the {v.name}'s {c.name} is damaged")
        if wound:
            for f in state.inside(v.marker):
                yield from self._wound(state, f, events, rolls, f"the {v.name}'s wreck")

    def _penetrating(self, state: GameState, v: Vehicle, facing: str, events, rolls, action,
                     had: int | None = None):
        """ "Penetrating Hit Table". `had`: the facing's armour before this hit took its point (a
        natural six under natural_six_strips_armour): "no armor on this side to begin with" and
        "already 1 or 0" are read from it."""
        if not v.in_play:
            return
        had = v.armour_of(facing) if had is None else had
        if not self._occupied_functional(state, v):
            if had == 0:
                self._destroy(state, v, events, self._culprit(state),
                              f"a penetrating hit on its bare {facing}, "
                              + ("unoccupied" if not state.inside(v.marker) else "its engine not working")
                              + f": the table's first line, {sec('Penetrating Hit Table')}")
            else:
                v.armour[facing] = 0
                v.burning = True
                events.append(f"penetrating hit on the {self._why_not_working(state, v)} {v.name}: its {facing} "
                              f"armour is gone and it burns")
            return
        n = yield from self._d6(f"penetrating hit table for the {v.name}", v.name)
        rolls.append({"asked": f"penetrating hit table for the {v.name}", "face": n, "total": n, "modifiers": []})
        events.append(f"penetrating hit {n}: {D.PENETRATING[n]}")
        if n == 1:
            if had <= 1:
                c = yield from self._choose_component(state, v, self._driver_player(state, v),
                                                      "is destroyed (Side blown off)", undamaged_first=False)
                if c is None:
                    self._destroy(state, v, events, self._culprit(state), "no undamaged component left")
                else:
                    c.status = "destroyed"
                    events.append(f"the {v.name}'s {c.name} {_is(c.name)} destroyed")
            v.armour[facing] = 0
        elif n == 2:
            v.burning = True
            events.append(f"the {v.name} is on fire")
        elif n == 3:
            working = [c for c in v.components if c.status == "working"]
            if not working:
                self._destroy(state, v, events, self._culprit(state), "an internal explosion with nothing working")
            for c in working:
                face = yield from self._d6(f"internal explosion: the {v.name}'s {c.name} (1-3 breaks it)", v.name)
                rolls.append({"asked": f"{v.name}'s {c.name} in the explosion", "face": face, "total": face,
                              "modifiers": []})
                if face <= D.ROLL_OVER_DAMAGE_MAX:
                    c.status = "damaged"
                    events.append(f"the {v.name}'s {c.name} is broken")
        elif n == 4:
            self._set_pending(state, v, 4, "penetrating")
            yield from self._roll_over(state, v, events, rolls, action, wound=True)
        elif n == 5:
            yield from self._burning_wreck(state, v, events, rolls, action)
        else:
            yield from self._explode(state, v, inches(D.EXPLOSION_IN), D.EXPLOSION_STRENGTH, events, rolls, action)

    def _burning_wreck(self, state: GameState, v: Vehicle, events, rolls, action):
        dist_in = yield from self._2d6(f"burning wreck: inches the {v.name} scatters", v.name, rolls)
        way = yield from self._d6("burning wreck: direction (1 = straight ahead, each face 60 deg anticlockwise)",
                                  v.name)
        rolls.append({"asked": f"burning wreck: the {v.name}'s direction", "face": way, "total": way,
                      "modifiers": []})
        turned = v.pose.moved(turn_deg=(way - 1) * 60.0)
        xy = turned.moved(inches(dist_in)).xy
        yield from self._put(state, v, Pose(float(xy[0]), float(xy[1]), v.pose.heading_deg, v.pose.sigma_mm,
                                            v.pose.sigma_deg),
                             f"Burning Wreck: it scattered {dist_in} in, direction {way} (1 straight ahead, each "
                             f"face 60 deg anticlockwise), its facing kept")
        events.append(f"the {v.name} scatters {dist_in} in (direction {way}): put it there")
        for c in v.components:
            if c.status == "working":
                c.status = "damaged"
        # "all freaks inside take a hit, and the vehicle is set on fire": the hit comes first (their
        # resilience is not yet at the burning vehicle's -1).
        for f in state.inside(v.marker):
            yield from self._wound(state, f, events, rolls, f"the {v.name}'s wreck")
        v.burning = True
        for o in self._others(state, v.marker):
            if o.in_play and shapely.intersects(v.footprint().polygon, o.footprint().polygon):
                events.append(f"the {v.name} lands on the {o.name}: a strength 4 hit")
                yield from self._hit(state, o, D.BURNING_WRECK_STRENGTH, "top", events, rolls, {}, f"the {v.name}'s wreck")
        if self.option("burning_wreck_destroys"):
            self._destroy(state, v, events, self._culprit(state), "a burning wreck")

    def _explode(self, state: GameState, v: Vehicle, radius_mm: float, strength: int, events, rolls, action,
                 remove: bool = True, spare: tuple = ()):
        """Everything within the radius takes a hit; freaks inside take one (that one only: thrown out
        into the blast, they are not hit again by it); the wreck goes."""
        centre = v.pose.xy
        # "Within 6 in of the vehicle": from its edge (blast_from), as every other distance.
        zone = (around(v.footprint(), radius_mm) if self.option("blast_from") == "vehicle"
                else shapely.Point(*centre).buffer(radius_mm, quad_segs=32))
        inside = state.aboard(v.marker)
        spare = tuple(spare) + tuple(f.id for f in inside)
        for f in inside:
            yield from self._wound(state, f, events, rolls, f"the {v.name}'s explosion")
            self._put_on_foot(state, f, centre)
        self._destroy(state, v, events, self._culprit(state), "it explodes")
        if remove:
            v.removed = True
        for o in self._others(state, v.marker):
            if o.in_play and shapely.intersects(zone, o.footprint().polygon):
                events.append(f"the blast reaches the {o.name}")
                yield from self._hit(state, o, strength, None, events, rolls, {}, f"the {v.name}'s blast",
                                     point=centre)
        for f in list(state.freaks.values()):
            if f.on_foot and f.pos is not None and f.id not in spare and \
                    shapely.intersects(zone, shapely.points(np.asarray(f.pos))):
                yield from self._wound(state, f, events, rolls, f"the {v.name}'s blast")

    def _bike_hit(self, state: GameState, v: Vehicle, events, rolls, action, who: str):
        """ "Bike and Cavalry Hit Table" (small skimmers and jetpacks too)."""
        if not v.in_play:
            return
        if not self._occupied_functional(state, v):
            if v.type in ("jetpack", "cavalry"):
                self._destroy(state, v, events, self._culprit(state), "a hit with nobody aboard")
                v.removed = True
                return
            if not any(c.status == "working" for c in v.components):
                self._destroy(state, v, events, self._culprit(state), "a hit with nothing left working")
            for c in v.components:
                c.status = "damaged" if c.status == "working" else c.status
            events.append(f"every component of the unoccupied {v.name} is damaged")
            return
        n = yield from self._d6(f"bike hit table for the {v.name}", v.name)
        rolls.append({"asked": f"bike hit table for the {v.name}", "face": n, "total": n, "modifiers": []})
        events.append(f"bike hit {n}: {D.BIKE[n]}")
        driver = state.driver(v.marker)
        animal = v.type in ("cavalry", "jetpack")
        if n == 1:
            c = yield from self._choose_component(state, v, self._driver_player(state, v),
                                                  "is damaged (Component Hit)", undamaged_first=False)
            if c is None:
                self._destroy(state, v, events, self._culprit(state), "nothing left working")
            else:
                c.status = "damaged"
                events.append(f"the {v.name}'s {c.name} is damaged")
        elif n == 2:
            spin = yield from self._choose_turn(state, v, self._other_player(state, v), "is turned (Rattled)")
            yield from self._put(state, v, v.pose.moved(turn_deg=spin), f"Rattled: it was turned {self._turn_words(spin)}")
            self._set_pending(state, v, 2, "bike")
            events.append(f"the {v.name} is turned {spin:+g} deg and must move 6 in straight ahead next")
        else:
            if driver is not None:
                self._put_on_foot(state, driver, v.pose.xy)
                events.append(f"{driver.id} is thrown")
                yield from self._wound(state, driver, events, rolls, f"being thrown from the {v.name}")
            if n == 6:
                riders = state.aboard(v.marker)
                for f in riders:
                    yield from self._wound(state, f, events, rolls, f"the {v.name}'s end")
                    self._put_on_foot(state, f, v.pose.xy)
                if v.type == "cavalry":
                    self._destroy(state, v, events, self._culprit(state), "removed from play")
                    v.removed = True
                else:
                    # "The driver is wounded and everyone within 3" takes a S0 hit": the driver once.
                    yield from self._explode(state, v, inches(D.KABLOOIE_IN), D.KABLOOIE_STRENGTH, events, rolls,
                                             action, spare=((driver.id,) if driver is not None else ())
                                             + tuple(f.id for f in riders))
                return
            if n == 3 and v.type == "jetpack":
                self._destroy(state, v, events, self._culprit(state), "the jetpack is ditched")
                return
            if n in (4, 5) and animal:
                self._destroy(state, v, events, self._culprit(state), "removed from play")
                v.removed = True
                return
            yield from self._surge(state, v, inches(D.SURGE_IN), events, rolls, rams=(n == 5 or v.type != "cavalry"),
                                   why=f"{D.BIKE[n]}: it surged 6 in straight ahead")
            if n == 4:
                if not any(c.status == "working" for c in v.components):
                    self._destroy(state, v, events, self._culprit(state), "crashed with nothing left working")
                for c in v.components:
                    c.status = "damaged" if c.status == "working" else c.status
            if n == 5:
                for f in state.aboard(v.marker):
                    yield from self._wound(state, f, events, rolls, f"the {v.name}'s rollover")
                    self._put_on_foot(state, f, v.pose.xy)
                self._destroy(state, v, events, self._culprit(state), "rolled over")

    def _culprit(self, state: GameState) -> str | None:
        return state.freaks[state.acting].player if state.acting else None

    def _destroy(self, state: GameState, v: Vehicle, events, by: str | None, why: str) -> None:
        if v.destroyed:
            return
        v.destroyed = True
        if by is not None:
            state.destroyed_by[by] = state.destroyed_by.get(by, 0) + 1
        events.append(f"the {v.name} is destroyed ({why})" + (f", credited to {by}" if by else ""))

    # --- fire and lava ---------------------------------------------------------------------

    def _fire(self, state: GameState, v: Vehicle, events, rolls):
        """ "Fire!": for each passenger and component, 1-2 damages or wounds."""
        events.append(f"the {v.name} burns")
        for f in state.inside(v.marker):          # passengers: clinging riders are not in it
            face = yield from self._d6(f"fire: {f.id} aboard the burning {v.name} (1-2 wounds)", f.id)
            rolls.append({"asked": f"fire: {f.id}", "face": face, "total": face, "modifiers": []})
            if face <= D.FIRE_DAMAGE_MAX:
                yield from self._wound(state, f, events, rolls, "the flames")
        for c in v.components:
            if c.status != "working":
                continue
            face = yield from self._d6(f"fire: the {v.name}'s {c.name} (1-2 damages it)", v.name)
            rolls.append({"asked": f"fire: {c.name}", "face": face, "total": face, "modifiers": []})
            if face <= D.FIRE_DAMAGE_MAX:
                c.status = "damaged"
                events.append(f"the fire damages the {v.name}'s {c.name}")
        if v.components and all(c.status != "working" for c in v.components):
            self._destroy(state, v, events, None, "burnt out: every component damaged")

    def _lava(self, state: GameState, v: Vehicle, events, rolls, action):
        """ "Lava": two penetrating hits and it catches fire."""
        v.burning = True
        for _ in range(D.LAVA_PENETRATING_HITS):
            if v.kind.hit_table == "bike":
                yield from self._bike_hit(state, v, events, rolls, action, "the lava")
            else:
                yield from self._penetrating(state, v, "top", events, rolls, action)

    # --- ramming -----------------------------------------------------------------------------

    @action("ram", fields={"freak": "text", "vehicle": "marker", "target": "marker", "terrain": "text"})
    def _act_ram(self, state: GameState, action: dict):
        """A ram: the vehicle has driven into contact with a vehicle or a piece of terrain ("Ramming")."""
        f = self._acting(state, action)
        v = state.vehicle(action.get("vehicle", f.aboard if f.aboard is not None else -1))
        if f.aboard != v.marker or f.seat != "driver":
            raise RulesError(f"{f.id} is not driving the {v.name}")
        if state.stopped and state.drove == v.marker:
            raise RulesError(f"the {v.name} has stopped and may not move any more this turn")
        # "A ram is initiated when a vehicle moves into contact with another vehicle or a barrier":
        # the vehicle must be moving this turn, and the contact must be one its move made.
        if not v.functional and v.in_play:
            raise RulesError(f"the {v.name} cannot move (its engine is not working), so it cannot ram "
                             f"({sec('Ramming')})")
        if state.drove != v.marker or state.ground_mm <= 0.5:
            raise RulesError(f"the {v.name} has not moved this turn: a ram is a vehicle moving into contact "
                             f"({sec('Ramming')}); drive it into what it rams")
        target = action.get("target")
        if target is not None and action.get("terrain") is not None:
            raise RulesError("ram one thing: a vehicle ('target') or a piece of terrain ('terrain'), not both")
        if target is None and action.get("terrain") is not None:
            target = str(action["terrain"])
            state.feature(target)
        elif target is None:
            raise RulesError("ram what? say 'target' (a vehicle) or 'terrain' (a piece's name)")
        else:
            target = state.vehicle(target).marker
        if self._ram_key(state, v, target) in state.no_ram:
            what = state.vehicles[target].name if isinstance(target, int) else target
            raise RulesError(f"the {v.name} has not moved into contact with {what}: it has rammed it already and "
                             f"has not moved out of contact since ({sec('Ramming')})")
        events, rolls = [], []
        result = {"act": "ram", "vehicle": v.marker, "target": target, "rolls": rolls, "events": events}
        out = yield from self._ram(state, v, target, events, rolls, result=result)
        result["result"] = out
        return result

    def _ram(self, state: GameState, v: Vehicle, target, events, rolls, moved_mm: float | None = None,
             from_above: bool = False, result: dict | None = None, known_contact: bool = False):
        """Both roll a d6 with the modifiers of "Ramming"; each damages the other's facing; the loser
        stops short (or, terrain, is breached or knocked away). `known_contact`: the rules stopped the
        car where it struck (a path, a surge), so it is in contact whatever gap the hand that put it
        back there left."""
        result = result if result is not None else {}
        fp = v.footprint()
        contact = float(self.option("contact_mm"))
        is_vehicle = isinstance(target, int)
        if is_vehicle:
            t = state.vehicles[target]
            if not t.on_table:
                raise RulesError(f"the {t.name} is not on the table")
            tfp = t.footprint()
            d = closest_distance(fp, tfp)
            gap = judge("gap between the vehicles", d.distance_mm, contact, d.sigma_mm)
            tname = t.name
        else:
            t = state.feature(target)
            gap_mm = float(shapely.distance(fp.polygon, t.solid))
            gap = judge("gap to the terrain", gap_mm, contact, fp.pose.axis_sigma_mm)
            tname = t.name
        result["contact"] = gap.to_json()
        if gap.outcome == "out" and not from_above and not known_contact:
            if not is_vehicle and t.kind == "building" and t.breached:
                raise RulesError(f"the {v.name} is {_fmt_in(gap.value_mm)} from the walls of {tname} still "
                                 f"standing: a ram needs contact (within {contact:g} mm); its breached wall is "
                                 f"open, to drive through ({sec('Terrain')})")
            raise RulesError(f"the {v.name} is {_fmt_in(gap.value_mm)} from the {tname}: a ram needs contact "
                             f"(within {contact:g} mm)")
        # Facings: where each strikes the other.
        if is_vehicle:
            if from_above:
                t_face, v_face = "top", "front"
                result["facing"] = {"facing": "top", "why": "a ram from above (Jumping)"}
                result["rammer_facing"] = {"facing": "front", "why": "a ram from above (Jumping)"}
            else:
                t_face, verdict, note = self._facing(state, t, self._attack_point(fp, None, t), fp.pose.axis_sigma_mm,
                                                     f"the {v.name}")
                v_face, v_verdict, v_note = self._facing(state, v, self._attack_point(tfp, None, v),
                                                         tfp.pose.axis_sigma_mm, f"the {t.name}")
                result["facing"] = {**verdict.to_json(), "facing": t_face}
                result["rammer_facing"] = {**v_verdict.to_json(), "facing": v_face}
                for n in (note, v_note):
                    if n:
                        events.append(n)
            t_armour = t.armour_of(t_face)
        else:
            wall = self._wall_struck(t, fp)
            if t.kind == "building" and t.breached:
                near = np.asarray(shapely.shortest_line(dict(t.walls())[wall], fp.polygon).coords[0])
            else:
                near = np.asarray(shapely.shortest_line(t.polygon, fp.polygon).coords[0])
            v_face, v_verdict, _ = self._facing(state, v, near, 0.0, tname)
            result["rammer_facing"] = {**v_verdict.to_json(), "facing": v_face}
            t_armour = t.armour(wall) if t.kind == "building" else int(self.option("barrier_armour"))
            t_face = f"wall {wall}"
            # Terrain has no facings: the wall struck (its edges numbered from 0), the one nearest the car.
            result["facing"] = {"facing": t_face, "why": f"the wall of {tname} nearest the {v.name}"}
        v_armour = v.armour_of(v_face)
        # The armour each side brings where they meet (the +1 for more armour compares these).
        result["facing"]["armour"], result["rammer_facing"]["armour"] = t_armour, v_armour
        active = state.active
        if moved_mm is None:
            moved_mm = (state.spent_mm if self.option("ram_distance") == "spent" else state.ground_mm) \
                if state.drove == v.marker else 0.0
        fast = judge("moved before the ram", moved_mm, inches(D.RAM_FAST_IN), 0.0, at_most=False)
        slow = judge("moved before the ram", moved_mm, inches(D.RAM_SLOW_IN), 0.0, at_most=False)
        result["moved"] = {**judge("moved before the ram", moved_mm, inches(D.RAM_FAST_IN), 0.0).to_json(),
                           "moved_in": round(moved_mm / MM_PER_IN, 2)}
        vm = []
        if active is v:
            vm.append(Modifier(D.RAM_TURN_BONUS, "its turn"))
        if v_armour > t_armour:
            vm.append(Modifier(D.RAM_ARMOUR_BONUS, f"more armour where they meet ({v_armour} against {t_armour})"))
        if fast.margin_mm > 0:
            vm.append(Modifier(D.RAM_FAST_BONUS, f"moved {_fmt_in(moved_mm)}, more than 12 in"))
        elif slow.margin_mm < 0:
            vm.append(Modifier(D.RAM_SLOW_PENALTY, f"moved {_fmt_in(moved_mm)}, less than 6 in"))
        if not state.inside(v.marker):
            vm.append(Modifier(D.RAM_INERT_PENALTY, "unoccupied"))
        vm += self._ram_own_mods(state, v)
        tm = []
        if is_vehicle:
            if active is t:
                tm.append(Modifier(D.RAM_TURN_BONUS, "its turn"))
            if t_armour > v_armour:
                tm.append(Modifier(D.RAM_ARMOUR_BONUS, f"more armour where they meet ({t_armour} against {v_armour})"))
            if not state.inside(t.marker):
                tm.append(Modifier(D.RAM_INERT_PENALTY, "unoccupied"))
            tm += self._ram_own_mods(state, t)
        else:
            if t_armour > v_armour:
                tm.append(Modifier(D.RAM_ARMOUR_BONUS, f"more armour where they meet ({t_armour} against {v_armour})"))
            tm.append(Modifier(D.RAM_INERT_PENALTY, "a piece of terrain"))
        key = (target, wall) if not is_vehicle and t.kind == "building" else target
        if state.drove == v.marker and key not in state.no_ram:
            state.no_ram.append(key)
        req = DiceRequest(("d6",), "ram roll (the rammer)", v.name)
        vr = Roll(req, (yield req).faces[0], tuple(vm))
        req2 = DiceRequest(("d6",), "ram roll (the one rammed)", tname)
        tr = Roll(req2, (yield req2).faces[0], tuple(tm))
        rolls += [vr.to_json(), tr.to_json()]
        fixed = not is_vehicle and t.kind in ("fixed", "ramp")
        won = vr.total >= tr.total and not fixed
        events.append(f"ram: the {v.name} {vr.total} against the {tname} {tr.total}: "
                      + ("the rammer wins" if won else f"the {tname} wins" + (" (a fixed barrier always does)"
                                                                               if fixed else "")))
        # Damage, both ways, against the other's facing.
        if is_vehicle:
            yield from self._ram_damage(state, t, t_face, vr.total, f"the {v.name}'s ram", events, rolls)
        elif t.kind == "building":
            # "If the number is equal to or less than the armor rating, the other ... loses one point of
            # armor. If it is higher, ... in addition to losing one point of armor": a point either way.
            t.wall_armour[int(t_face.split()[1])] = max(t_armour - 1, 0)
            if v.burning:
                yield from self._touch_fire(state, v, t.name, events, rolls)
        yield from self._ram_damage(state, v, v_face, tr.total, f"the {tname}", events, rolls)
        yield from self._clingers(state, v, "the ram", events, rolls)
        if is_vehicle:
            yield from self._clingers(state, t, "the ram", events, rolls)
            yield from self._spread_fire(state, v, t, events, rolls)
        if won and not v.in_play:
            # "he may now spin the losing vehicle out of its way and continue his movement"; "By
            # winning a ram against the building, a vehicle may breach the building and continue
            # through": a wreck (or one removed from play) continues nowhere, so it breaches nothing.
            if state.drove == v.marker:
                state.stopped = True
            events.append(f"the {v.name} won the ram but is " + ("gone" if v.removed else "wrecked")
                          + f": it goes no further" + ("" if is_vehicle else f" and {tname} stands"))
        elif won:
            if is_vehicle:
                events.append(f"the {v.name} may spin the {tname} out of its way and drive on")
            else:
                yield from self._terrain_loses(state, v, t, int(t_face.split()[1]), events, rolls)
        else:
            if state.drove == v.marker:
                state.stopped = True
            events.append(f"the {v.name} stops short and may not move any more this turn")
        return "won" if won else "lost"

    @staticmethod
    def _wall_struck(t, fp: Footprint) -> int:
        """The wall of a piece of terrain a vehicle there strikes: the edge nearest it; inside (or at)
        a breached building, the nearest wall still standing (the breach is open)."""
        if t.kind == "building" and t.breached:
            return min((k for k, _ in t.walls() if k not in t.breached),
                       key=lambda k: float(shapely.distance(fp.polygon, dict(t.walls())[k])))
        return t.wall_near(np.asarray(shapely.shortest_line(fp.polygon, t.polygon).coords[1]))

    def _ram_key(self, state: GameState, v: Vehicle, target):
        """What a ram is against, for "one contact, one ram": a vehicle, a piece of terrain, or a
        building's wall (a wall still standing is a new contact, though the car rammed another)."""
        if isinstance(target, str) and target in state.terrain and state.terrain[target].kind == "building" \
                and v.on_table:
            return target, self._wall_struck(state.terrain[target], v.footprint())
        return target

    def _keep_no_ram(self, state: GameState, v: Vehicle, touching: list, rammed: tuple = ()) -> None:
        """What stays rammed-and-not-left after a move: what it still touches (a building's wall: that
        wall), and what it rammed in this very move."""
        tol = float(self.option("contact_mm"))
        keep = []
        for x in state.no_ram:
            if isinstance(x, tuple):
                t = state.terrain.get(x[0])
                line = dict(t.walls()).get(x[1]) if t is not None else None
                if x[0] in rammed or (line is not None and x[0] in touching
                                      and float(shapely.distance(v.footprint().polygon, line)) <= tol):
                    keep.append(x)
            elif x in touching or x in rammed:
                keep.append(x)
        state.no_ram = keep

    def _ram_own_mods(self, state: GameState, v: Vehicle) -> list[Modifier]:
        mods = []
        if v.kind.ram_penalty:
            mods.append(Modifier(v.kind.ram_penalty, f"a {v.type}"))
        if any(c.kind == "horns" and c.status == "working" for c in v.components):
            mods.append(Modifier(D.HORNS_RAM_BONUS, "horns"))
        if v.burning and state.inside(v.marker):
            mods.append(Modifier(D.BURNING_PENALTY, "its crew is on fire"))
        return mods

    def _ram_damage(self, state: GameState, v: Vehicle, facing: str, roll: int, by: str, events, rolls):
        if not v.in_play:
            return
        armour = v.armour_of(facing)
        bike = v.kind.hit_table == "bike"
        if roll <= armour:
            if not bike:
                self._strip(v, facing, events)
                events.append(f"{by}: {roll} against the {v.name}'s {facing} armour {armour}: 1 point lost")
            return
        if not bike:
            self._strip(v, facing, events)
        events.append(f"{by}: {roll} against the {v.name}'s {facing} armour {armour}: a glancing hit")
        if bike:
            yield from self._bike_hit(state, v, events, rolls, {}, by)
        else:
            yield from self._glancing(state, v, events, rolls, {})

    def _spread_fire(self, state: GameState, a: Vehicle, b: Vehicle, events, rolls):
        for src, dst in ((a, b), (b, a)):
            if src.burning and not dst.burning and dst.in_play:
                face = yield from self._d6(f"does the fire spread from the {src.name} to the {dst.name}? (1-2)")
                rolls.append({"asked": f"fire spreads to the {dst.name}", "face": face, "total": face, "modifiers": []})
                if face <= D.FIRE_SPREAD_MAX:
                    dst.burning = True
                    events.append(f"the {dst.name} catches fire")

    def _terrain_loses(self, state: GameState, v: Vehicle, t, wall: int, events, rolls):
        if t.kind == "building":
            if wall not in t.breached:
                t.breached.append(wall)
            events.append(f"the {v.name} breaches {t.name}'s wall where it struck and may drive through")
            poly = t.polygon
            tol = float(self.option("contact_mm"))
            # "Any vehicles inside at this time": the rammer too, when it breaches a wall from inside
            # (through an earlier breach); one that stopped against the wall from outside is not in.
            for o in [o for o in state.vehicles.values() if o.on_table]:
                body = o.footprint().polygon if o is not v else o.footprint().polygon.buffer(-tol)
                if o.in_play and shapely.intersects(poly, body):
                    yield from self._hit(state, o, D.BREACH_HIT_STRENGTH, "top", events, rolls, {},
                                         f"{t.name}'s falling walls")
            for f in list(state.freaks.values()):
                if f.on_foot and f.pos is not None and shapely.contains_xy(poly, *f.pos):
                    yield from self._wound(state, f, events, rolls, f"{t.name} coming down")
            if len(t.breached) >= D.RUBBLE_AFTER_BREACHES:
                t.kind = "rubble"
                events.append(f"{t.name} is reduced to rubble")
        elif t.kind == "barrier":
            dist_in = yield from self._d6(f"how far {t.name} is knocked (inches)")
            rolls.append({"asked": f"{t.name} knocked", "face": dist_in, "total": dist_in, "modifiers": []})
            # "knocked 1d6 inches away from the ramming vehicle in a direction chosen by the rammer".
            turn = yield ChoiceRequest(self._driver_player(state, v), f"which way {t.name} is knocked "
                                       f"({dist_in} in away from the {v.name})",
                                       tuple({"value": d, "label": "straight on" if d == 0 else
                                              f"{abs(d)} deg to the {'left' if d > 0 else 'right'} of straight on"}
                                             for d in D.KNOCK_TURNS_DEG), t.name)
            way = math.radians(float(v.pose.heading_deg + turn))
            dx, dy = inches(dist_in) * math.cos(way), inches(dist_in) * math.sin(way)
            t.offset_mm = (t.offset_mm[0] + dx, t.offset_mm[1] + dy)
            events.append(f"{t.name} is knocked {dist_in} in away: move it there")

    # --- repairs and the buildings' guns -------------------------------------------------

    @action("repair", fields={"freak": "text", "component": "text"})
    def _act_repair(self, state: GameState, action: dict):
        """Repair a damaged component: a skill roll ("Vehicle Components"; "The Turn")."""
        f = self._acting(state, action)
        if f.aboard is None or f.seat == "clinging":
            raise RulesError(f"{f.id} must be inside a vehicle to repair it ({sec('Clinging to a Vehicle')})")
        v = state.vehicles[f.aboard]
        c = v.component(action.get("component", "engine"))
        if c.status == "working":
            raise RulesError(f"the {v.name}'s {c.name} works already")
        if c.status == "destroyed":
            raise RulesError(f"the {v.name}'s {c.name} is destroyed; it cannot be repaired")
        self._exclusive(state, f, "repair")
        roll = yield from self._skill(state, f, f"repair the {v.name}'s {c.name}")
        events = []
        ok = roll.total >= D.SKILL
        if ok:
            c.status = "working"
            events.append(f"{f.id} gets the {v.name}'s {c.name} working")
        else:
            events.append(f"{f.id} fails to fix the {c.name}")
        return {"act": "repair", "freak": f.id, "vehicle": v.marker, "component": c.name,
                "result": "repaired" if ok else "failed", "rolls": [roll.to_json()], "events": events}

    @action("defend", fields={"freak": "text", "building": "text", "target": "marker"})
    def _act_defend(self, state: GameState, action: dict):
        """Building Defenses: a freak inside fires the point-defence guns, 12", S1, on top armour."""
        f = self._acting(state, action)
        b = state.feature(action["building"])
        if b.kind != "building":
            raise RulesError(f"{b.name} is not a building (it is {b.kind})")
        if not f.on_foot or f.pos is None or not shapely.contains_xy(b.polygon, *f.pos):
            raise RulesError(f"{f.id} must be inside {b.name} to work its guns")
        target = state.vehicle(action["target"])
        if not target.in_play or not target.on_table:
            raise RulesError(f"the {target.name} is a wreck")
        self._exclusive(state, f, "fire")
        d = float(shapely.distance(b.polygon, target.footprint().polygon))
        verdict = judge("range from the building's wall", d, inches(D.BUILDING_GUN_RANGE_IN),
                        target.pose.axis_sigma_mm)
        if verdict.outcome == "out":
            state.exclusive = None
            raise RulesError(f"the {target.name} is {_fmt_in(d)} from {b.name}; its guns reach 12 in")
        events, rolls = [], []
        result = {"act": "defend", "freak": f.id, "building": b.name, "target": target.marker,
                  "range": verdict.to_json(), "rolls": rolls, "events": events}
        result["result"] = yield from self._hit(state, target, D.BUILDING_GUN_STRENGTH, "top", events, rolls, action,
                                                f"{b.name}'s guns", shooter=f, result=result)
        return result

    # --- around every action ---------------------------------------------------------------

    def before_action(self, state: GameState, action: dict) -> None:
        if state.over:
            raise RulesError(f"the game is over ({self._final_words(state)})")

    def after_action(self, state: GameState, action: dict, result: dict) -> dict:
        """Every action ends by checking the game's end ("Winning": no undestroyed vehicle left)."""
        events = result.setdefault("events", [])
        self._check_end(state, events)
        result.setdefault("rolls", [])
        return result


ACTIONS = sorted(AlphaDestructicus.handlers)


#: A step of a path turning less than this is driving straight (the camera's jitter).
TURN_STEP_DEG = 0.5
#: A tank's turn read within this of a whole 45 degrees (at least; twice the poses' doubt
#: where that is more) is paid as that many steps: the camera's reading, not a new step.
TURN_STEP_SLACK_DEG = 1.0


def _turn_runs(poses: list[Pose]) -> list[tuple[Pose, Pose, float]]:
    """The path's steps (from, to, ground covered in mm), with each run of steps turning
    the same way taken as one turn.

    The camera follows a car turning on the spot as many small steps, each less
    than the turn tolerance; "Vehicles" costs a turn by its whole angle, so the
    angle is summed over the run before it is judged."""
    steps, i = [], 1
    while i < len(poses):
        dh = normalize_deg(poses[i].heading_deg - poses[i - 1].heading_deg)
        j = i
        if abs(dh) > TURN_STEP_DEG:
            sign = 1.0 if dh > 0 else -1.0
            while j + 1 < len(poses) and \
                    sign * normalize_deg(poses[j + 1].heading_deg - poses[j].heading_deg) > TURN_STEP_DEG:
                j += 1
        ground = sum(float(np.linalg.norm(poses[k].xy - poses[k - 1].xy)) for k in range(i, j + 1))
        steps.append((poses[i - 1], poses[j], ground))
        i = j + 1
    return steps


def _straight_run_mm(poses: list[Pose], tol_deg: float) -> float:
    """The longest stretch of a path driven straight ahead: from a pose, every later pose keeps its
    heading (within the tolerance) and lies ahead of it, off its line by no more than the tolerance's
    angle allows (and 2 mm, the camera's jitter)."""
    best = 0.0
    slope = math.tan(math.radians(tol_deg))
    for i, a in enumerate(poses):
        for b in poses[i + 1:]:
            if abs(normalize_deg(b.heading_deg - a.heading_deg)) > tol_deg:
                break
            off = b.xy - a.xy
            ahead = float(off @ a.forward)
            if ahead < -1.0 or abs(float(off @ a.left)) > max(2.0, ahead * slope):
                break
            best = max(best, ahead)
    return best


def _is(name: str) -> str:
    """"is" or "are" for a component's name: "the horns are", "the engine is"."""
    last = name.split()[-1] if name.split() else name
    return "are" if last.endswith("s") and not last.endswith("ss") else "is"

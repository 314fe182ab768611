"""The game session: one game's state, its rule system, its dice and its log.

Resolutions are generators that ask for dice, for a choice the book gives a
player (a `ChoiceRequest`), or for a piece the rules moved to be put where they
say (a `PlacementRequest`); the session drives them.  Choices are answered by that
player (`choose`), or, when a scenario or a record already holds them, from its
`choices` in order.  With a
dice source that answers at once (virtual, a scenario's fixed dice) an action
resolves in one call; with one that must wait (the tray, dice typed on the
page), the session keeps the request pending and `answer()` resumes it.

Every resolution is logged with its dice, and can be undone: the state before
it is kept, and an undo is an event of its own (nothing is rewritten).
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass, field
from typing import Any

import threading

from .dice import (ChoiceRequest, DiceError, DiceRequest, DiceSource, DiceThrow, FixedChoices, FixedPlacements,
                   Placed, PlacementRequest, WaitingDiceSource)
from .rules.base import RulesError, RuleSystem


@dataclass
class Event:
    n: int
    kind: str                       # "action", "round", "end_turn", "undo"
    detail: dict
    outcome: dict | None = None
    dice: list[dict] = field(default_factory=list)
    #: The choices players made while it resolved: {"asked", "player", "value"}.
    choices: list[dict] = field(default_factory=list)
    undone: bool = False
    #: The poses the resolution was judged on (vehicle marker to Pose), for the record.
    poses: dict | None = field(default=None, repr=False, compare=False)
    #: The pieces the rules moved and where each was put: {"marker", "name", "asked" (the
    #: rules' [x_mm, y_mm, heading_deg]), "why", "placed" (the pose it was put at, with its
    #: doubt), "how" ("camera", "stayed", "as asked", "record")}.
    placements: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        out = {"n": self.n, "kind": self.kind, "detail": self.detail, "outcome": self.outcome,
               "dice": self.dice, "undone": self.undone}
        if self.choices:
            out["choices"] = self.choices
        if self.placements:
            out["placements"] = self.placements
        return out


#: A piece whose pose a resolution changed by more than this, without a placement of its own,
#: is asked for before the resolution is committed.
MOVED_MM = 0.05
MOVED_DEG = 0.05


class GameSession:
    def __init__(self, rules: RuleSystem, state: Any, dice: DiceSource | None = None,
                 choices: FixedChoices | None = None, lock=None,
                 placements: FixedPlacements | None | str = "as asked") -> None:
        self.rules = rules
        self.state = state
        self.dice = dice
        #: Choices already made (a scenario's, a record's), taken in order before a player is asked.
        self.choices = choices
        #: Placements already made (a record's), or "as asked" (no camera: each piece put exactly
        #: where the rules say, the default); None: the table must see each piece put there (`place`).
        self.placements = (FixedPlacements(source="as asked", as_asked=True) if placements == "as asked"
                           else placements)
        self.log: list[Event] = []
        self._undo: list[tuple[int, Any]] = []      # (event number, state before it)
        self._running = None                        # (generator, event, state before)
        #: What the running resolution waits for: dice, a player's choice, or a piece put in place.
        self.pending: DiceRequest | ChoiceRequest | PlacementRequest | None = None
        #: Told of every event as it is committed (a resolution finished, an undo):
        #: the game store records it there.
        self.on_commit = None
        #: Orders everything that changes the game: a waiting source (the tray) delivers from
        #: its own thread. The table game shares its own lock here, so the camera's poses
        #: enter the state under the same lock and never land inside a resolution.
        self.lock = lock if lock is not None else threading.RLock()

    # --- doing things -------------------------------------------------------------------

    def act(self, action: dict) -> dict | None:
        """Resolve an action; the outcome, or None while dice are awaited."""
        return self._start("action", action, lambda st: self.rules.resolve(st, action))

    def start_round(self, orders: dict[str, list[int | None]]) -> dict | None:
        return self._start("round", {"orders": orders}, lambda st: self.rules.start_round(st, orders))

    def end_turn(self) -> dict | None:
        return self._start("end_turn", {}, lambda st: self.rules.end_activation(st))

    def _start(self, kind: str, detail: dict, make) -> dict | None:
        with self.lock:
            return self._start_locked(kind, detail, make)

    def _start_locked(self, kind: str, detail: dict, make) -> dict | None:
        if self._running is not None:
            raise RulesError(f"waiting for {self.waiting_for()}: finish or call off that first")
        before = copy.deepcopy(self.state)
        event = Event(len(self.log) + 1, kind, detail, poses=self.rules.poses_of(self.state))
        try:
            gen = self._settled(make(self.state), self.state, event)
            request = next(gen)
        except StopIteration as stop:            # resolved without dice
            return self._finish(event, before, stop.value)
        except Exception:
            self.state = before
            raise
        self._running = (gen, event, before)
        self.pending = request
        return self._drive()

    def waiting_for(self) -> str:
        """What the running resolution waits for, in words ("dice: 1d6 to hit", "Joe to choose ...")."""
        if self.pending is None:
            return "nothing"
        if isinstance(self.pending, (ChoiceRequest, PlacementRequest)):
            return self.pending.describe()
        return f"dice: {self.pending.describe()}"

    def answer(self, throw: DiceThrow) -> dict | None:
        """Hand the awaited request a throw (the tray's, typed in, or virtual)."""
        with self.lock:
            if self._running is None:
                raise RulesError("no dice are awaited")
            if not isinstance(self.pending, DiceRequest):
                raise DiceError(f"no dice are awaited: waiting for {self.pending.describe()}")
            throw.check(self.pending)
            result = self._send(throw)
            if result is None and self._running is not None:
                return self._drive()
            return result

    def choose(self, player: str, value: Any) -> dict | None:
        """The awaited choice, made by `player`; refused (nothing changes) if the choice is
        another player's, or not one of its options."""
        with self.lock:
            if self._running is None or not isinstance(self.pending, ChoiceRequest):
                raise DiceError("no choice is awaited" + (f": waiting for {self.waiting_for()}"
                                                          if self._running is not None else ""))
            value = self.pending.check(player, value)
            result = self._send_choice(player, value, "player")
            if result is None and self._running is not None:
                return self._drive()
            return result

    def place(self, marker: int, pose, how: str) -> dict | None:
        """The awaited placement made: piece `marker` stands at `pose` ([x_mm, y_mm,
        heading_deg, sigma_mm, sigma_deg]), seen there by the camera (`how` "camera"), or left
        where it stands where the book allows it ("stayed"), or put where a player chose, where
        the book gives them the choice ("chosen"). Refused, with nothing changed, for another
        piece, a pose not close enough, or staying where the book does not allow it."""
        with self.lock:
            p = self.pending
            if self._running is None or not isinstance(p, PlacementRequest):
                raise DiceError("no piece is waiting to be put in place" + (
                    f": waiting for {self.waiting_for()}" if self._running is not None else ""))
            if int(marker) != p.marker:
                raise DiceError(f"waiting for {p.who} (marker {p.marker}) to be put in place "
                                f"({p.why}), not marker {marker}")
            pose = [float(v) for v in pose]
            if p.chosen:
                how = "chosen"            # where the players put it; the rules judge it when they receive it
            elif how == "stayed":
                if not p.may_stay:
                    raise DiceError(f"{p.who} must be put where the rules say ({p.why}): "
                                    f"the book does not let it stay where it stands")
            elif not p.fits(*pose[:3]):
                d_mm, d_deg = p.off_by(*pose[:3])
                raise DiceError(f"{p.who} stands {d_mm:.0f} mm and {d_deg:.0f}° from where the rules "
                                f"put it ({p.why}); it must be within {p.tolerance_mm:.0f} mm and "
                                f"{p.tolerance_deg:.0f}°")
            result = self._send_placed(Placed(tuple(pose), how))
            if result is None and self._running is not None:
                return self._drive()
            return result

    def _send_placed(self, placed: Placed) -> dict | None:
        gen, event, before = self._running
        p = self.pending
        event.placements.append({"marker": p.marker, "name": p.name, "asked": [p.x_mm, p.y_mm, p.heading_deg],
                                 "why": p.why, "placed": [round(v, 4) for v in placed.pose], "how": placed.how})
        return self._resume(gen, event, before, placed)

    def _settled(self, gen, state, event: Event):
        """The resolution, then a placement for every piece it moved without asking for one
        (so no rule-made move goes unseen on the table): each such piece is asked for where the
        rules left it, the camera confirming it there (a car driven by hand already is)."""
        placed: dict[int, Any] = {}
        answer, asked = None, None
        while True:
            try:
                request = gen.send(answer)
            except StopIteration as stop:
                result = stop.value
                break
            finally:
                # Where the placement just answered put the piece: the resolution sets its pose as
                # the answer goes in, not before (read earlier, every placed piece was asked again).
                if asked is not None:
                    placed[asked] = self.rules.pieces(state)[asked].pose \
                        if asked in self.rules.pieces(state) else None
                    asked = None
            answer = yield request
            if isinstance(request, PlacementRequest):
                asked = request.marker
        before = event.poses or {}
        what = event.detail.get("act") if event.kind == "action" else {"round": "the round began",
                                                                        "end_turn": "the turn ended"}.get(event.kind)
        for m, piece in sorted(self.rules.pieces(state).items()):
            now = piece.pose
            if now is None or not piece.in_play:
                continue
            if m in placed and placed[m] is now:
                continue
            was = before.get(m)
            if was is not None and math.hypot(now.x_mm - was.x_mm, now.y_mm - was.y_mm) <= MOVED_MM \
                    and abs((now.heading_deg - was.heading_deg + 180) % 360 - 180) <= MOVED_DEG:
                continue
            words = str(what).replace("_", " ") if what else "the action"
            why = f"where its {words} ended" if m == self._actor(state, event) else f"where the rules put it ({words})"
            yield from self.rules.place(state, piece, now, why)
        return result

    def _actor(self, state, event: Event) -> int | None:
        if event.kind != "action":
            return None
        try:
            return int(self.rules.actor_marker(state, event.detail))
        except (RulesError, KeyError, TypeError, ValueError):
            return None

    def _send_choice(self, player: str, value: Any, source: str) -> dict | None:
        gen, event, before = self._running
        event.choices.append({"asked": self.pending.describe(), "player": player, "value": value,
                              "source": source})
        return self._resume(gen, event, before, value)

    def _drive(self) -> dict | None:
        while self._running is not None:
            if isinstance(self.pending, PlacementRequest):
                made = self.placements.take(self.pending) if self.placements is not None else None
                if made is None:
                    return None                   # the table waits to see the piece put there
                pose, how = made
                result = self._send_placed(Placed(tuple(float(v) for v in pose), how if how == "as asked"
                                                  else self.placements.source))
                if result is not None:
                    return result
                continue
            if isinstance(self.pending, ChoiceRequest):
                made = self.choices.take(self.pending) if self.choices is not None else None
                if made is None:
                    return None                   # the player is asked on the page
                player, value = made
                result = self._send_choice(player, self.pending.check(player, value), self.choices.source)
                if result is not None:
                    return result
                continue
            if self.dice is None:
                return None
            if isinstance(self.dice, WaitingDiceSource):
                self.dice.request(self.pending, self.answer)
                return None
            throw = self.dice.throw(self.pending)
            if throw is None:
                return None                       # the source will answer later
            result = self._send(throw.check(self.pending))
            if result is not None:
                return result
        return None

    def _send(self, throw: DiceThrow) -> dict | None:
        gen, event, before = self._running
        event.dice.append({"asked": self.pending.describe(), **throw.to_json()})
        return self._resume(gen, event, before, throw)

    def _resume(self, gen, event: Event, before: Any, answer: Any) -> dict | None:
        try:
            self.pending = gen.send(answer)
            return None
        except StopIteration as stop:
            self._running, self.pending = None, None
            return self._finish(event, before, stop.value)
        except Exception:
            self._running, self.pending = None, None
            self.state = before
            raise

    def _finish(self, event: Event, before: Any, outcome: dict) -> dict:
        event.outcome = outcome
        self.log.append(event)
        self._undo.append((event.n, before))
        if self.on_commit is not None:
            self.on_commit(event)
        return outcome

    def cancel(self) -> None:
        """Abandon a resolution waiting for dice; nothing it did stays."""
        with self.lock:
            if self._running is not None:
                self.state = self._running[2]
                asked_dice = isinstance(self.pending, DiceRequest)
                self._running, self.pending = None, None
                if asked_dice and isinstance(self.dice, WaitingDiceSource):
                    self.dice.cancel()

    def void(self, throw: DiceThrow) -> dict | None:
        """A throw turned out void (the tray says a die was moved after it settled): the
        resolution that used it is taken back and played again, asking for dice anew."""
        with self.lock:
            def used_in(event: Event) -> bool:
                return any(d.get("seq") == throw.detail.get("seq") and d.get("boot") == throw.detail.get("boot")
                           and d.get("source") == throw.source for d in event.dice)
            if self._running is not None and used_in(self._running[1]):
                event = self._running[1]
                self.cancel()
            elif self._undo and self.log and used_in(self.log[-1]) and not self.log[-1].undone:
                event = self.log[-1]
                self.undo()
            else:
                return None          # an older throw: too late to take back; the log shows it
            if event.kind == "action":
                return self.act(event.detail)
            if event.kind == "round":
                return self.start_round(event.detail["orders"])
            return self.end_turn()

    def undo(self) -> dict:
        """Undo the last resolution: its state is restored, and the undo logged."""
        with self.lock:
            return self._undo_locked()

    def _undo_locked(self) -> dict:
        if self._running is not None:
            raise RulesError("finish or cancel the resolution waiting for dice first")
        if not self._undo:
            raise RulesError("nothing to undo")
        n, before = self._undo.pop()
        self.state = before
        undone = next(e for e in self.log if e.n == n)
        undone.undone = True
        event = Event(len(self.log) + 1, "undo", {"event": n})
        event.outcome = {"undid": n, "kind": undone.kind}
        self.log.append(event)
        if self.on_commit is not None:
            self.on_commit(event)
        return event.outcome

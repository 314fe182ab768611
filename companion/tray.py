"""The dice tray as a dice source for the session.

A throw from the tray is matched to the roll the rules are waiting for by its
dice: a request for 2d6 is met by a ROLL with exactly two d6 (the faces taken
in the request's order of dice, the tray's order within each kind).  A ROLL
that matches nothing waiting is kept to be shown, never used.  A MOVED voids
the ROLL before it: if that ROLL was used, `on_voided` is told (the session
then takes the resolution back and asks again); a CROOKED throw is shown.  A
number the link heard as two different lines (a dispute: one of them was not
the tray's) is shown, and a throw already used under that number is voided the
same way: neither line counts.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from hardware.link import TrayEvent, TrayLink

from .dice import DiceRequest, DiceThrow, WaitingDiceSource


def match(request: DiceRequest, dice: tuple[tuple[str, int], ...]) -> tuple[int, ...] | None:
    """The faces answering the request, if the throw's dice are exactly the request's."""
    if sorted(d for d, _ in dice) != sorted(request.dice):
        return None
    pools: dict[str, list[int]] = {}
    for die, face in dice:
        pools.setdefault(die, []).append(face)
    return tuple(pools[d].pop(0) for d in request.dice)


def _after(previous, then):
    """A link callback that calls the one already set (if any), then `then`."""
    def call(event: TrayEvent) -> None:
        if previous is not None:
            previous(event)
        then(event)
    return call


class TrayDice(WaitingDiceSource):
    name = "tray"

    def __init__(self, link: TrayLink, *, on_voided: Callable[[DiceThrow], None] | None = None,
                 on_note: Callable[[str, TrayEvent], None] | None = None) -> None:
        self.link = link
        self.on_voided = on_voided
        self.on_note = on_note
        self.unmatched: list[TrayEvent] = []
        self.used: dict[tuple[str, int], DiceThrow] = {}
        self._pending: tuple[DiceRequest, object, str] | None = None
        self._count = 0
        self._lock = threading.Lock()
        link.on_event = _after(link.on_event, self.take)
        link.on_dispute = _after(link.on_dispute, self.disputed)

    def request(self, request: DiceRequest, deliver) -> None:
        with self._lock:
            self._count += 1
            req_id = f"r{self._count}"
            self._pending = (request, deliver, req_id)
        self.link.expect(req_id, request.dice)

    def cancel(self) -> None:
        with self._lock:
            pending, self._pending = self._pending, None
        if pending is not None:
            self.link.cancel(pending[2])

    def take(self, event: TrayEvent) -> None:
        """An event from the link, in order."""
        if event.kind == "roll":
            with self._lock:
                pending = self._pending
                faces = match(pending[0], event.message.dice) if pending else None
                if faces is not None:
                    self._pending = None
            if faces is None:
                self.unmatched.append(event)
                if self.on_note is not None:
                    self.on_note("a throw that matches no roll awaited (shown, not used)", event)
                return
            request, deliver, _ = pending
            throw = DiceThrow(faces, request.dice, "tray", {"seq": event.seq, "boot": event.boot})
            self.used[(event.boot, event.seq)] = throw
            deliver(throw)
        elif event.kind == "moved":
            key = (event.boot, event.seq - 1)
            self.unmatched = [e for e in self.unmatched if (e.boot, e.seq) != key]
            voided = self.used.pop(key, None)
            if voided is not None and self.on_voided is not None:
                self.on_voided(voided)
        elif event.kind == "crooked" and self.on_note is not None:
            self.on_note(f"die {event.message.die} came to rest cocked: throw again", event)

    def disputed(self, event: TrayEvent) -> None:
        """The tray's event numbered `event.seq` came as two different lines: neither counts."""
        key = (event.boot, event.seq)
        self.unmatched = [e for e in self.unmatched if (e.boot, e.seq) != key]
        voided = self.used.pop(key, None)
        if self.on_note is not None:
            self.on_note("this throw came from the tray as two different lines, so neither counts: "
                         "throw again", event)
        if voided is not None and self.on_voided is not None:
            self.on_voided(voided)

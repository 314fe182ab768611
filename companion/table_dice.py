"""Dice at the table: every way dice reach the game, answering one waiting request.

The tray (if there is one) is told a throw is awaited and answers by itself; dice
typed in on the page and a virtual roll answer the same request. Choices the rules
ask of a player wait in the session itself (`GameSession.choose`).
"""

from __future__ import annotations

import threading
from typing import Any

from .dice import DiceError, DiceRequest, DiceThrow, VirtualDice, WaitingDiceSource


class TableDice(WaitingDiceSource):
    """Every way dice reach the game at once: the tray (if there is one) is told a
    throw is awaited and answers by itself; typed-in dice and a virtual roll answer
    the same request from the page. Whichever comes first is used."""

    name = "table"

    def __init__(self, virtual: VirtualDice, tray=None, on_change=None, on_tray_outcome=None) -> None:
        self.virtual = virtual
        self.tray = tray
        self.on_change = on_change
        #: Called with what a tray's throw led to (the page's own answers see theirs returned).
        self.on_tray_outcome = on_tray_outcome
        self.pending: tuple[DiceRequest, Any] | None = None
        self._lock = threading.RLock()

    def request(self, request: DiceRequest, deliver) -> None:
        with self._lock:
            self.pending = (request, deliver)
        if self.tray is not None:
            self.tray.request(request, self._from_tray)
        if self.on_change is not None:
            self.on_change()

    def _take(self, throw: DiceThrow):
        with self._lock:
            if self.pending is None:
                raise DiceError("no dice are awaited")
            request, deliver = self.pending
            throw.check(request)
            self.pending = None
        if throw.source != "tray" and self.tray is not None:
            self.tray.cancel()
        return deliver(throw)

    def _from_tray(self, throw: DiceThrow) -> None:
        try:
            outcome = self._take(throw)
            if self.on_tray_outcome is not None:
                self.on_tray_outcome(outcome)
        finally:
            if self.on_change is not None:
                self.on_change()

    def typed(self, faces) -> Any:
        with self._lock:
            if self.pending is None:
                raise DiceError("no dice are awaited")
            request = self.pending[0]
        try:
            values = tuple(int(f) for f in faces)
        except (TypeError, ValueError):
            raise DiceError(f"faces must be whole numbers, not {faces!r}") from None
        if len(values) != len(request.dice):
            raise DiceError(f"{request.describe()}: type {len(request.dice)} face(s), not {len(values)}")
        return self._take(DiceThrow(values, request.dice, "typed"))

    def roll(self) -> Any:
        with self._lock:
            if self.pending is None:
                raise DiceError("no dice are awaited")
            request = self.pending[0]
        return self._take(self.virtual.throw(request))

    def cancel(self) -> None:
        with self._lock:
            self.pending = None
        if self.tray is not None:
            self.tray.cancel()

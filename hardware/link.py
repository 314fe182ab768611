"""The serial link to a dice tray: any pyserial URL, a reader thread, every
event once and in order, and a port that comes back by itself.

- Duplicates (an event number not above the last taken) are dropped; a gap is
  answered with `RESEND from=<first missing>` and later events wait until it
  fills, so events are handed on in order.
- A HELLO with a new `boot` is a tray restart: numbering starts again (and any
  events it has numbered meanwhile are asked for). The same `boot` with a `last`
  beyond what the link holds means events were missed: they are asked for.
- When the port goes (cable pulled, device reset), the link says so, reopens it
  with growing pauses, sends `HELLO?` and recovers what was thrown meanwhile.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import serial

from .protocol import (EVENTS, Batt, Crooked, Hello, LineParser, Moved, Rejection, Reply, Roll, cmd_ack,
                       cmd_cancel, cmd_expect, cmd_hello, cmd_resend)

#: Pauses before reopening a lost port, in seconds; the last repeats.
REOPEN_BACKOFF_S = (0.05, 0.1, 0.2, 0.4, 0.8)
#: Ask again for missing events when nothing fills the gap for this long.
RESEND_AGAIN_S = 0.3
#: Give a gap up (the tray no longer holds the events) after asking this many times
#: and this long without progress.
GAP_GIVE_UP_ASKS = 3
GAP_GIVE_UP_S = 1.5
#: Acknowledge what is held at most this often (or every ACK_EVERY events), so that
#: a fast stream is not answered line for line.
ACK_INTERVAL_S = 0.05
ACK_EVERY = 256


@dataclass(frozen=True)
class TrayEvent:
    """A numbered event taken from the tray, in order, once."""

    kind: str                 # "roll", "crooked", "moved"
    seq: int
    boot: str
    message: Roll | Crooked | Moved
    received_s: float         # time.monotonic() when its line was read

    def to_json(self) -> dict:
        if isinstance(self.message, Roll):
            return self.message.to_json()
        out = {"seq": self.seq, "event": self.kind}
        if isinstance(self.message, Crooked):
            out["die"] = self.message.die
        return out


@dataclass
class LinkStats:
    lines: int = 0
    rolls: int = 0
    crooked: int = 0
    moved: int = 0
    duplicates: int = 0
    resends: int = 0
    reopens: int = 0
    hellos: int = 0
    restarts: int = 0
    lost: int = 0                   # events the tray no longer held when asked again
    rejected: Counter = field(default_factory=Counter)
    log: list[tuple[str, bytes]] = field(default_factory=list)    # recent rejections with their lines

    def to_json(self) -> dict:
        return {"lines": self.lines, "rolls": self.rolls, "crooked": self.crooked, "moved": self.moved,
                "duplicates": self.duplicates, "resends": self.resends, "reopens": self.reopens, "lost": self.lost,
                "restarts": self.restarts, "rejected_lines": sum(self.rejected.values()),
                "rejected_by_reason": dict(self.rejected)}


class TrayLink:
    """Reads a tray on a port (a pyserial URL) and hands on its events."""

    def __init__(self, url: str, baud: int = 115200, *,
                 on_event: Callable[[TrayEvent], None] | None = None,
                 on_status: Callable[[str, str], None] | None = None,
                 on_line: Callable[[bytes, object], None] | None = None,
                 backoff_s: tuple[float, ...] = REOPEN_BACKOFF_S, port: serial.SerialBase | None = None) -> None:
        self.url = url
        self.baud = baud
        self.on_event = on_event
        self.on_status = on_status
        self.on_line = on_line
        self.backoff_s = backoff_s
        self.stats = LinkStats()
        self.status = "closed"
        self.boot: str | None = None
        self.tray: str | None = None
        self.last_taken = 0
        self._waiting: dict[int, TrayEvent] = {}
        self._asked_from: int | None = None     # the first missing event of the last RESEND
        self._asked_seen = 0                    # the highest event seen when it was sent
        self._asked_at = 0.0
        self._asks = 0                          # RESENDs since the events last moved on
        self._progress_at = 0.0                 # when an event was last handed on
        self._max_seen = 0
        self._port = port
        self._given_port = port is not None
        self._parser = LineParser()
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._acked = 0
        self._acked_at = 0.0
        self.opened_at: float | None = None
        self.lost_at: float | None = None

    # --- running ------------------------------------------------------------------

    def start(self) -> "TrayLink":
        self._thread = threading.Thread(target=self._run, name="tray-link", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 2.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self._close()

    def _set_status(self, status: str, detail: str = "") -> None:
        self.status = status
        if self.on_status is not None:
            self.on_status(status, detail)

    def _open(self) -> bool:
        if self._port is not None:
            return True
        try:
            # A write must never hold up the reading: a tray that stops reading (its buffer
            # full, itself busy writing to us) would otherwise stop us reading too.
            self._port = serial.serial_for_url(self.url, baudrate=self.baud, timeout=0.02, write_timeout=0.05)
        except (serial.SerialException, OSError, ValueError) as exc:
            self._set_status("waiting", f"{self.url}: {exc}")
            return False
        self._parser = LineParser()            # a half line from before is noise now
        self.opened_at = time.monotonic()
        self._set_status("open", self.url)
        self.send(cmd_hello())
        return True

    def _close(self) -> None:
        port, self._port = self._port, None
        if port is not None and not self._given_port:
            try:
                port.close()
            except Exception:
                pass

    def _run(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            if not self._open():
                self._stop.wait(self.backoff_s[min(attempt, len(self.backoff_s) - 1)])
                attempt += 1
                continue
            attempt = 0
            try:
                while not self._stop.is_set():
                    data = self._port.read(max(self._port.in_waiting, 1))
                    now = time.monotonic()
                    if data:
                        for item in self._parser.feed(data):
                            self._handle(item, now)
                    self._maintain(now)
            except (serial.SerialException, OSError, TypeError, AttributeError) as exc:
                # TypeError/AttributeError: pyserial's posix port after the device vanished.
                if self._stop.is_set():
                    break
                self.lost_at = time.monotonic()
                self._close()
                self.stats.reopens += 1
                self._set_status("lost", f"{self.url}: {exc}; reopening")
                if self._given_port:
                    break

    # --- writing ------------------------------------------------------------------

    def send(self, data: bytes) -> bool:
        with self._write_lock:
            port = self._port
            if port is None:
                return False
            try:
                port.write(data)
                return True
            except serial.SerialTimeoutException:
                return False          # an ACK or a RESEND not sent now is sent again later
            except (serial.SerialException, OSError):
                return False

    def expect(self, req: str, dice: tuple[str, ...]) -> bool:
        """Tell the tray a throw is awaited (it may light up or beep)."""
        return self.send(cmd_expect(req, dice))

    def cancel(self, req: str) -> bool:
        return self.send(cmd_cancel(req))

    # --- reading ------------------------------------------------------------------

    def _handle(self, item, now: float) -> None:
        self.stats.lines += 1
        if self.on_line is not None:
            self.on_line(getattr(item, "line", b""), item)
        if isinstance(item, Rejection):
            self.stats.rejected[item.code] += 1
            self.stats.log.append((item.reason, item.line[:60]))
            del self.stats.log[:-200]
            return
        if isinstance(item, Hello):
            self._hello(item)
        elif isinstance(item, EVENTS):
            self._event(item, now)
        elif isinstance(item, (Batt, Reply)):
            pass

    def _hello(self, hello: Hello) -> None:
        self.stats.hellos += 1
        self.tray = hello.tray
        if self.boot is None:
            # First contact: what was thrown before anyone listened is not this game's.
            self.boot, self.last_taken = hello.boot, hello.last
            self._max_seen = self._acked = hello.last
            self._waiting.clear()
            return
        if hello.boot != self.boot:
            # The tray restarted: numbering starts again; ask for what it numbered meanwhile.
            self.stats.restarts += 1
            self.boot, self.last_taken = hello.boot, 0
            self._waiting.clear()
            self._asked_from = None
            self._max_seen = self._acked = 0
        if hello.last > self.last_taken:
            self._max_seen = max(self._max_seen, hello.last)
            self._ask(self.last_taken + 1)

    def _event(self, msg, now: float) -> None:
        if self.boot is None:
            # Events before any HELLO: ask who it is first; RESEND recovers them.
            self.send(cmd_hello())
            return
        if msg.seq <= self.last_taken or msg.seq in self._waiting:
            self.stats.duplicates += 1
            return
        self._max_seen = max(self._max_seen, msg.seq)
        kind = {Roll: "roll", Crooked: "crooked", Moved: "moved"}[type(msg)]
        self._waiting[msg.seq] = TrayEvent(kind, msg.seq, self.boot, msg, now)
        self._flush(now)
        if not self._waiting:
            return
        # "RESEND from=<n>" brings back everything from n the tray holds, up to the newest
        # it had when it read the request, which is at least the newest seen when asking.
        # A gap inside that is on its way; ask only for one before it or beyond it.
        first = self.last_taken + 1
        if self._asked_from is None or first < self._asked_from or first > self._asked_seen:
            self._ask(first)

    def _flush(self, now: float) -> None:
        while self.last_taken + 1 in self._waiting:
            event = self._waiting.pop(self.last_taken + 1)
            self.last_taken = event.seq
            self._progress_at = now
            self._asks = 0
            if event.kind == "roll":
                self.stats.rolls += 1
            elif event.kind == "crooked":
                self.stats.crooked += 1
            else:
                self.stats.moved += 1
            if self.on_event is not None:
                self.on_event(event)
        if not self._waiting:
            self._asked_from = None

    def _ask(self, first: int) -> None:
        if self.send(cmd_resend(first)):
            self.stats.resends += 1
            self._asked_from, self._asked_seen = first, self._max_seen
            self._asked_at = time.monotonic()
            self._asks += 1

    def _maintain(self, now: float) -> None:
        if self._waiting:
            if (self._asks >= GAP_GIVE_UP_ASKS and now - self._progress_at > GAP_GIVE_UP_S
                    and now - self._asked_at > RESEND_AGAIN_S):
                # Asked again and again, and the tray no longer holds them: say so, and go on.
                first_waiting = min(self._waiting)
                self.stats.lost += first_waiting - self.last_taken - 1
                if self.on_status is not None:
                    first, last = self.last_taken + 1, first_waiting - 1
                    which = f"event {first} is" if first == last else f"events {first} to {last} are"
                    self.on_status("gap", f"{which} lost: the tray no longer holds {'it' if first == last else 'them'}")
                self.last_taken = first_waiting - 1
                self._asked_from = None
                self._flush(now)
            elif now - self._asked_at > RESEND_AGAIN_S and now - self._progress_at > RESEND_AGAIN_S:
                # Nothing moved since asking: the request or its answer was lost; ask again.
                self._ask(self.last_taken + 1)
        if self.last_taken > self._acked and (now - self._acked_at > ACK_INTERVAL_S
                                              or self.last_taken - self._acked >= ACK_EVERY):
            if self.send(cmd_ack(self.last_taken)):
                self._acked, self._acked_at = self.last_taken, now

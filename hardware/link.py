"""The serial link to a dice tray: any pyserial URL, a reader thread, every
event once and in order, and a port that comes back by itself (protocol version
2, reading version 1 trays too; ../shared/dicetray-protocol.md).

- An event is known by its boot and its seq. The link remembers every boot it has
  heard with the last event it took in it, so nothing is taken twice, whatever
  HELLO came before (a version 2 event says its boot; a version 1 event belongs
  to the boot the tray last said). An event of another boot heard before is
  judged under that boot, never taken as the current one's; once the tray has
  thrown in a later boot, the earlier ones are over (a boot is chosen anew at
  every power-up): their new-looking events are stale and HELLOs naming them stray.
- A throw is taken only in its own sequence: an event is handed on only when it
  arrives numbered one past the last taken in its boot. A line that jumps ahead
  (2 to 64 past) is never taken itself: it is held, the link asks
  `RESEND from=<first missing>` and `HELLO?`, and the tray's own lines bring the
  events again in sequence. A held line is kept only to be compared: the tray's
  next HELLO dropping it when its `last` is below it (the tray had not issued it:
  a forged line), and the tray's own line with that number judged against it.
  Two different lines with the same boot and number (both with a right check)
  are a dispute: neither is used, and it is reported (`on_dispute`; a throw
  already handed on is then voided). Duplicates that agree are dropped.
- A line far ahead (more than KEEP past anything believed in its boot) is not
  believed: the link asks `HELLO?`, and the tray's `last` and a RESEND bring the
  real events (the far line itself is never used, so a forged one is harmless).
- A HELLO that changes the boot (a restart, or a stray line) is believed only
  when the tray says it again in answer to `HELLO?` (a new event of the boot
  followed refutes it: a tray sends in order); events that cannot be placed
  until then wait. A restart numbers from 1 again; what it numbered meanwhile is
  asked for. The same boot with a `last` beyond what the link holds: asked for.
- A gap the tray does not fill after three asks is checked with `HELLO?` before
  anything is called lost: events past the tray's `last` never existed (they are
  dropped as forged); missing ones at or below it are lost and said so.
- A restart (a new boot the tray confirms) ends the boot before it: a tray's
  memory goes with its power, so whatever that boot issued that was not taken
  (held lines, or a `last` its HELLO said) is reported lost, with how many
  (status "gap", `stats.lost_reports`), never silently skipped.
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
#: Check a gap with HELLO? (lost, or forged) after asking this many times and this
#: long without progress.
GAP_GIVE_UP_ASKS = 3
GAP_GIVE_UP_S = 1.5
#: Ask HELLO? again when the answer awaited has not come for this long.
HELLO_AGAIN_S = 0.3
#: Acknowledge what is held at most this often (or every ACK_EVERY events), so that
#: a fast stream is not answered line for line.
ACK_INTERVAL_S = 0.05
ACK_EVERY = 256
#: "A tray keeps at least its last 64 events": a jump past this is not believed from one line.
KEEP = 64
#: Events held while the boot they belong to is being confirmed (beyond: RESEND brings them).
HOLD_MAX = 1024
#: Taken events remembered per boot, to judge a later line with the same number.
TAKEN_KEPT = 512
#: What a number that came as two different lines is remembered as.
_DISPUTED = object()


def say_event(msg) -> str:
    """An event line in players' words (for a dispute's report)."""
    if isinstance(msg, Roll):
        return "a throw of " + ", ".join(f"{d} showing {f}" for d, f in msg.dice)
    if isinstance(msg, Crooked):
        return f"die {msg.die} cocked"
    return "the dice moved"


@dataclass(frozen=True)
class TrayEvent:
    """A numbered event taken from the tray, in order, once."""

    kind: str                 # "roll", "crooked", "moved"
    seq: int
    boot: str
    message: Roll | Crooked | Moved
    received_s: float         # time.monotonic() when its line was read

    def to_json(self) -> dict:
        out = self.message.to_json() if isinstance(self.message, Roll) else {"seq": self.seq, "event": self.kind}
        if isinstance(self.message, Crooked):
            out["die"] = self.message.die
        out["boot"] = self.boot
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
    lost: int = 0                   # events the tray issued but no longer held when asked again
    far: int = 0                    # lines too far ahead to believe (a HELLO? and RESEND fetch the real ones)
    forged: int = 0                 # events past the tray's own `last`: they never existed
    stray_hellos: int = 0           # HELLOs changing the boot that the tray did not confirm
    stale: int = 0                  # events of a boot the tray has left, newer than what was taken there
    disputed: int = 0               # numbers with two different lines (a right check on both): neither used
    #: Every gap reported lost: (boot, first, last), so each missing throw can be accounted for.
    lost_reports: list[tuple[str, int, int]] = field(default_factory=list)
    rejected: Counter = field(default_factory=Counter)
    log: list[tuple[str, bytes]] = field(default_factory=list)    # recent rejections with their lines

    def to_json(self) -> dict:
        return {"lines": self.lines, "rolls": self.rolls, "crooked": self.crooked, "moved": self.moved,
                "duplicates": self.duplicates, "resends": self.resends, "reopens": self.reopens, "lost": self.lost,
                "restarts": self.restarts, "far": self.far, "forged": self.forged,
                "stray_hellos": self.stray_hellos, "stale": self.stale, "disputed": self.disputed,
                "rejected_lines": sum(self.rejected.values()),
                "rejected_by_reason": dict(self.rejected)}


@dataclass
class BootState:
    """What the link knows of one boot of the tray."""

    last_taken: int = 0
    hello_last: int = 0                     # the highest `last` its HELLOs said
    #: Lines that jumped ahead, held to be compared (never taken themselves: the tray's
    #: lines bring those events again in sequence).
    waiting: dict[int, TrayEvent] = field(default_factory=dict)
    #: What was taken, by number (the recent ones), to judge a later line with the same number.
    taken: dict[int, object] = field(default_factory=dict)

    @property
    def believed(self) -> int:
        """The highest event number believed in this boot."""
        return max(self.last_taken, self.hello_last, max(self.waiting, default=0))


class TrayLink:
    """Reads a tray on a port (a pyserial URL) and hands on its events.

    `allow_unchecked`: take a version 1 tray's lines that carry no check at all (a
    person typing at a terminal); never from a version 2 tray."""

    def __init__(self, url: str, baud: int = 115200, *,
                 on_event: Callable[[TrayEvent], None] | None = None,
                 on_status: Callable[[str, str], None] | None = None,
                 on_line: Callable[[bytes, object], None] | None = None,
                 on_dispute: Callable[[TrayEvent], None] | None = None,
                 backoff_s: tuple[float, ...] = REOPEN_BACKOFF_S, port: serial.SerialBase | None = None,
                 allow_unchecked: bool = False) -> None:
        self.url = url
        self.baud = baud
        self.on_event = on_event
        self.on_status = on_status
        self.on_line = on_line
        self.on_dispute = on_dispute
        self.backoff_s = backoff_s
        self.allow_unchecked = allow_unchecked
        self.stats = LinkStats()
        self.status = "closed"
        self.boot: str | None = None            # the boot the tray is in, as it last confirmed
        self.boots: dict[str, BootState] = {}   # every boot heard in this game
        #: Boots the tray has left for good: a boot is chosen anew at every power-up, so once
        #: the tray has thrown in a later boot it never sends a new event of an earlier one.
        self.retired: set[str] = set()
        self._retire_others = False             # on the next event taken in the current boot
        self.tray: str | None = None
        self._proposed: Hello | None = None     # a HELLO changing the boot, until the tray says it again
        self._proposed_at = 0.0
        self._held: list = []                   # events waiting for that answer
        self._want_hello = False
        self._hello_asked_at = 0.0
        self._gap_check = False                 # a HELLO? was sent to judge a gap not filled
        self._last_check = False                # a HELLO? was sent to check a `last` nothing came for
        self._reopened = False                  # the port was (re)opened and no HELLO came since
        self._refused_since_hello = False       # a line was refused since the last HELLO? (it may have been an event)
        self._asked_from: int | None = None     # the first missing event of the last RESEND
        self._asked_seen = 0                    # the highest event believed when it was sent
        self._asked_at = 0.0
        self._asks = 0                          # RESENDs since the events last moved on
        self._progress_at = 0.0                 # when an event was last handed on
        self._port = port
        self._given_port = port is not None
        self._parser = LineParser(allow_unchecked=allow_unchecked)
        self._write_lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._acked = 0
        self._acked_at = 0.0
        self.opened_at: float | None = None
        self.lost_at: float | None = None

    @property
    def last_taken(self) -> int:
        """The last event taken in the current boot (0 before any)."""
        return self.boots[self.boot].last_taken if self.boot in self.boots else 0

    @property
    def proto(self) -> int | None:
        """The protocol version the tray's HELLO said (None before one)."""
        return self._parser.proto

    # --- running ------------------------------------------------------------------

    def start(self) -> "TrayLink":
        if self._port is not None:
            self.send(cmd_hello(self.proto))
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
        # A half line from before is noise now; the tray's version is kept until its HELLO says again.
        self._parser = LineParser(proto=self._parser.proto, allow_unchecked=self.allow_unchecked)
        self.opened_at = time.monotonic()
        self._reopened = True
        self._set_status("open", self.url)
        self._ask_hello(time.monotonic())
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

    def _cmd_proto(self) -> int:
        # Commands carry the check the tray reads: XOR for a version 1 tray, CRC-16 otherwise.
        return 1 if self.proto == 1 else 2

    def expect(self, req: str, dice: tuple[str, ...]) -> bool:
        """Tell the tray a throw is awaited (it may light up or beep)."""
        return self.send(cmd_expect(req, dice, self._cmd_proto()))

    def cancel(self, req: str) -> bool:
        return self.send(cmd_cancel(req, self._cmd_proto()))

    def _ask_hello(self, now: float) -> None:
        self._want_hello = True
        if self.send(cmd_hello(self.proto)):
            self._hello_asked_at = now

    def _need_hello(self, now: float) -> None:
        """Ask HELLO? unless an answer is already on its way (a flood of lines is not
        answered line for line)."""
        if not self._want_hello or now - self._hello_asked_at > HELLO_AGAIN_S:
            self._ask_hello(now)

    # --- reading ------------------------------------------------------------------

    def _handle(self, item, now: float) -> None:
        self.stats.lines += 1
        if self.on_line is not None:
            self.on_line(getattr(item, "line", b""), item)
        if isinstance(item, Rejection):
            self.stats.rejected[item.code] += 1
            self.stats.log.append((item.reason, item.line[:60]))
            del self.stats.log[:-200]
            # A refused line may have been an event (cut short, a bit flipped): the tray's
            # `last` says, and RESEND brings it whole. Once per HELLO_AGAIN_S, not per line.
            self._refused_since_hello = True
            return
        if isinstance(item, Hello):
            self._hello(item, now)
        elif isinstance(item, EVENTS):
            self._event(item, now)
        elif isinstance(item, (Batt, Reply)):
            pass

    def _hello(self, hello: Hello, now: float) -> None:
        self.stats.hellos += 1
        switched = False
        if hello.boot in self.retired:
            self.stats.stray_hellos += 1        # an old line: that boot is over
            return
        if hello.boot != self.boot:
            proposed = self._proposed
            if proposed is None or proposed.boot != hello.boot or self._hello_asked_at < self._proposed_at:
                # A HELLO changing the boot, from one line: a restart, or a stray (an old line,
                # noise with a right check, a forgery). Believed when the tray says it again.
                if proposed is not None and proposed.boot != hello.boot:
                    self.stats.stray_hellos += 1
                self._proposed, self._proposed_at = hello, now
                self._ask_hello(now)
                return
            self._switch(hello, now)
            switched = True
        elif self._proposed is not None:
            # The tray says it is still in the boot it was: the other HELLO was stray.
            self.stats.stray_hellos += 1
            self._proposed = None
        self.tray = hello.tray
        self._want_hello = False
        st = self.boots[self.boot]
        # Every line held was on the wire before this HELLO: one numbered past its `last`
        # is not the tray's (it had not issued that number when it spoke). Dropped unused.
        for seq in [s for s in st.waiting if s > hello.last]:
            del st.waiting[seq]
            self.stats.forged += 1
        if self._last_check:
            self._last_check = False
            self._asks = 0
            if hello.last < st.hello_last:
                st.hello_last = max(hello.last, st.last_taken)   # the higher `last` was not the tray's
        st.hello_last = max(st.hello_last, hello.last)
        if self._gap_check:
            self._judge_gap(st, hello.last, now)
        held, self._held = self._held, []
        for msg, at in held:
            self._event(msg, at)
        if st.waiting:
            self._gap(st)
        elif hello.last > st.last_taken and (switched or self._reopened):
            # Back after a restart or a reopen: nothing is on its way, so ask at once. (Other
            # HELLOs, e.g. after a refused line, leave it to _maintain: at full speed what the
            # tray counts is mostly still in the line, and asking for it again only doubles it.)
            self._ask(st.last_taken + 1)
        self._reopened = False

    def _switch(self, hello: Hello, now: float) -> None:
        """The tray confirmed a boot other than the one the link was following."""
        first_contact = self.boot is None
        known = hello.boot in self.boots
        proposed, self._proposed = self._proposed, None
        if not known and not first_contact:
            # A restart the tray confirmed: the boot before is over, and the tray's memory
            # of it went with the power. Whatever it issued that was not taken is lost.
            self._boot_over(self.boot, now)
        if not known:
            # First contact: what was thrown before anyone listened is not this game's.
            # A later new boot is a restart: numbering starts again at 1.
            start = proposed.last if first_contact else 0
            self.boots[hello.boot] = BootState(last_taken=start, hello_last=start)
            if not first_contact:
                self.stats.restarts += 1
        self._retire_others = self.boot is not None
        self.boot = hello.boot
        self._asked_from = None
        self._asks = 0
        self._gap_check = False
        self._acked = self.boots[hello.boot].last_taken
        self._progress_at = now

    def _event(self, msg, now: float) -> None:
        boot = msg.boot
        if boot is not None and boot == self.boot and self._proposed is not None:
            # A new event of the boot the link follows, after a HELLO naming another: the tray
            # sends in order, so after a real restart none would come. The HELLO was stray.
            st = self.boots[boot]
            if msg.seq > st.last_taken and msg.seq not in st.waiting and msg.seq <= st.believed + KEEP:
                self.stats.stray_hellos += 1
                self._proposed = None
        if boot is None:
            boot = self.boot                    # a version 1 event: the boot its tray last said
            if self._proposed is not None or boot is None:
                self._hold(msg, now)            # which boot it is in is being asked
                return
        st = self.boots.get(boot)
        if st is None:
            self._hold(msg, now)                # a boot not (yet) confirmed: the HELLO will say
            return
        if msg.seq <= st.last_taken:
            self.stats.duplicates += 1
            before = st.taken.get(msg.seq)
            if before is not None and before is not _DISPUTED and before != msg:
                # The same number with other content after it was taken: one of the two was
                # not the tray's. Reported, and what was handed on is voided.
                self._dispute(st, boot, msg.seq, before, msg, now)
            return
        if boot in self.retired:
            self.stats.stale += 1               # never taken: a replayed, garbled or forged line
            return
        if msg.seq > st.believed + KEEP:
            # Beyond what a tray can hold: not believed from one line. The tray's HELLO
            # and a RESEND bring what really is there; this line is not used.
            self.stats.far += 1
            self._need_hello(now)
            return
        kind = {Roll: "roll", Crooked: "crooked", Moved: "moved"}[type(msg)]
        if msg.seq == st.last_taken + 1:
            held = st.waiting.pop(msg.seq, None)
            if held is not None and (held.kind == "disputed" or held.message != msg):
                self._dispute(st, boot, msg.seq, held.message, msg, now)
            else:
                if held is not None:
                    self.stats.duplicates += 1  # the line held was the tray's own: now in sequence
                self._take(st, TrayEvent(kind, msg.seq, boot, msg, now), now)
        else:
            # A jump ahead: held to be compared, never taken from this line. The tray's own
            # lines bring it again in sequence (RESEND), and its HELLO drops it if the tray
            # had not issued that number.
            held = st.waiting.get(msg.seq)
            if held is None:
                st.waiting[msg.seq] = TrayEvent(kind, msg.seq, boot, msg, now)
            elif held.kind != "disputed" and held.message != msg:
                st.waiting[msg.seq] = TrayEvent("disputed", msg.seq, boot, held.message, held.received_s)
            else:
                self.stats.duplicates += 1
            self._need_hello(now)
        if boot != self.boot:
            # An event of another boot the link has heard: judged under its own boot, never
            # as the current one's. The tray's HELLO says which boot it is in now (two stray
            # HELLOs in a row may have moved the link off it; nothing is acknowledged for a
            # boot until an event of it is taken, so that cannot make the tray forget).
            self._need_hello(now)
            return
        self._gap(st)

    def _hold(self, msg, now: float) -> None:
        if len(self._held) < HOLD_MAX:
            self._held.append((msg, now))
        self._need_hello(now)

    def _gap(self, st: BootState) -> None:
        if not st.waiting:
            return
        # "RESEND from=<n>" brings back everything from n the tray holds, up to the newest
        # it had when it read the request, which is at least the newest seen when asking.
        # A gap inside that is on its way; ask only for one before it or beyond it.
        first = st.last_taken + 1
        if self._asked_from is None or first < self._asked_from or first > self._asked_seen:
            self._ask(first)

    def _take(self, st: BootState, event: TrayEvent, now: float) -> None:
        """Hand on the event numbered one past the last taken in its boot."""
        st.last_taken = event.seq
        st.taken[event.seq] = event.message
        st.taken.pop(event.seq - TAKEN_KEPT, None)
        if event.boot == self.boot:
            self._progress_at = now
            self._asks = 0
            if self._retire_others:
                # The tray threw in this boot after the switch: the boots before are over.
                self.retired |= set(self.boots) - {self.boot}
                self._retire_others = False
        if event.kind == "roll":
            self.stats.rolls += 1
        elif event.kind == "crooked":
            self.stats.crooked += 1
        else:
            self.stats.moved += 1
        if self.on_event is not None:
            self.on_event(event)
        if not st.waiting and st is self.boots.get(self.boot):
            self._asked_from = None

    def _dispute(self, st: BootState, boot: str, seq: int, first, second, now: float) -> None:
        """Two different lines with one boot and number, each with a right check: one is
        not the tray's, and which cannot be told from the lines. Neither is used; said so."""
        self.stats.disputed += 1
        self.stats.log.append((f"event {seq} came as two different lines", b""))
        del self.stats.log[:-200]
        if seq > st.last_taken:
            st.last_taken = seq                 # the number is spent: later events go on
            if boot == self.boot:
                self._progress_at = now
                self._asks = 0
        st.taken[seq] = _DISPUTED
        if self.on_status is not None:
            self.on_status("disputed", f"event {seq} came as two different lines ({say_event(first)}; "
                                       f"{say_event(second)}): neither is used, throw again")
        if self.on_dispute is not None:
            self.on_dispute(TrayEvent("disputed", seq, boot, second, now))
        if not st.waiting and st is self.boots.get(self.boot):
            self._asked_from = None

    def _report_lost(self, boot: str, first: int, end: int, why: str) -> None:
        self.stats.lost += end - first + 1
        self.stats.lost_reports.append((boot, first, end))
        if self.on_status is not None:
            which = f"event {first} is" if first == end else f"events {first} to {end} ({end - first + 1}) are"
            self.on_status("gap", f"{which} lost: {why}")

    def _boot_over(self, boot: str | None, now: float) -> None:
        """A boot the tray has left by restarting: what it issued and was not taken is lost."""
        st = self.boots.get(boot) if boot is not None else None
        if st is None:
            return
        end = max(st.hello_last, max(st.waiting, default=0))
        if end > st.last_taken:
            self._report_lost(boot, st.last_taken + 1, end,
                              "the tray restarted before sending them again (a restart wipes its memory)")
            st.last_taken = end
        st.waiting.clear()

    def _judge_gap(self, st: BootState, last: int, now: float) -> None:
        """The tray's `last` after a gap was asked for again and again: what lies beyond
        it never existed; what is missing at or below it is lost."""
        self._gap_check = False
        for seq in [s for s in st.waiting if s > last]:
            del st.waiting[seq]
            self.stats.forged += 1
        if st.waiting and self._asks >= GAP_GIVE_UP_ASKS:
            first_waiting = min(st.waiting)
            first, end = st.last_taken + 1, first_waiting - 1
            if end >= first:
                self._report_lost(self.boot, first, end, "the tray no longer holds "
                                  + ("it" if first == end else "them"))
                st.last_taken = end
            # The held line itself is not taken: the tray still holds it, so ask for it in sequence.
            self._asked_from = None
            self._ask(first_waiting)
        self._asks = 0
        self._progress_at = now

    def _ask(self, first: int) -> None:
        if self.send(cmd_resend(first, self._cmd_proto())):
            self.stats.resends += 1
            st = self.boots.get(self.boot)
            self._asked_from, self._asked_seen = first, st.believed if st else first
            self._asked_at = time.monotonic()
            self._asks += 1

    def _maintain(self, now: float) -> None:
        if self._refused_since_hello and self.boot is not None and now - self._hello_asked_at > HELLO_AGAIN_S:
            if self.send(cmd_hello(self.proto)):
                self._hello_asked_at = now
                self._refused_since_hello = False
        if self._want_hello and now - self._hello_asked_at > HELLO_AGAIN_S:
            self._ask_hello(now)            # the answer (or the question) was lost: ask again
        st = self.boots.get(self.boot)
        if st is None:
            return
        if st.waiting and not self._gap_check:
            if (self._asks >= GAP_GIVE_UP_ASKS and now - self._progress_at > GAP_GIVE_UP_S
                    and now - self._asked_at > RESEND_AGAIN_S):
                # Asked again and again: lost (the tray no longer holds them) or never there
                # (a forged number)? The tray's `last` tells; until then nothing is called lost.
                self._gap_check = True
                self._ask_hello(now)
            elif now - self._asked_at > RESEND_AGAIN_S and now - self._progress_at > RESEND_AGAIN_S:
                # Nothing moved since asking: the request or its answer was lost; ask again.
                self._ask(st.last_taken + 1)
        elif (not st.waiting and st.hello_last > st.last_taken and now - self._asked_at > RESEND_AGAIN_S
              and now - self._progress_at > RESEND_AGAIN_S and not self._last_check):
            if self._asks >= GAP_GIVE_UP_ASKS:
                # Asked and asked, and nothing came: was that `last` the tray's own (a stray
                # HELLO may have claimed more)? Its answer to HELLO? is taken as it stands.
                self._last_check = True
                self._ask_hello(now)
            else:
                # The tray said it issued more than has come, and nothing is coming: ask for it.
                self._ask(st.last_taken + 1)
        if self._proposed is None and st.last_taken > self._acked and (
                now - self._acked_at > ACK_INTERVAL_S or st.last_taken - self._acked >= ACK_EVERY):
            if self.send(cmd_ack(st.last_taken, self._cmd_proto())):
                self._acked, self._acked_at = st.last_taken, now

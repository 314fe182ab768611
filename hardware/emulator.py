"""A dice tray played on a real pseudo-terminal, with faults on demand.

The tray's port is a symlink to the pty's device (`path`), so it stays the same
across a cable pull: the pull closes the pty (the host's reads fail), and the
plug-in makes a new one behind the same name.  It throws dice when asked or on
a timer, answers HELLO?, RESEND, ACK, EXPECT and CANCEL, keeps its last 64
events for RESEND, and injects: noise, binary bytes, over-long lines, bad
checksums, duplicates, lost lines, a cable pull, a power cycle, crooked dice, a
die nudged after settling, and what a line can be forged or confused with: a
far-future `seq` (`forged_far`), one 2 to 5 past the tray's newest with
other dice (`forged_near`: the tray's own line with that number comes later), a stray HELLO naming a new boot or an old one
(`stray_hello_new`, `stray_hello_old`), a line cut short that keeps its `\n`
(`cut_line`) and the same bit flipped in two bytes (`double_flip`, which an XOR
check misses).  It speaks protocol version 2 (a CRC-16 on every line, `boot=` on
every event), or version 1 with `proto=1` (an XOR check, no `boot=` on events).
The tests and the demo use it, through the real link, as a tray builder's
terminal would.
"""

from __future__ import annotations

import os
import random
import select
import tempfile
import threading
import time
import tty
from collections import deque
from pathlib import Path

from .protocol import DICE_SIDES, crc16, with_checksum, xor_check

FAULTS = ("noise", "binary", "overlong", "bad_checksum", "duplicate", "lose", "pull", "power_cycle",
          "crooked", "nudge", "forged_far", "forged_near", "stray_hello_new", "stray_hello_old", "cut_line",
          "double_flip")
#: Faults that damage the next event's line on the wire (the tray keeps it whole for RESEND).
DAMAGE = ("cut_line", "double_flip")


class TrayEmulator:
    def __init__(self, path: str | Path | None = None, *, tray: str = "emulator", fw: str = "1.0",
                 seed: int | None = None, keep: int = 64, baud: int | None = None, proto: int = 2) -> None:
        self._dir = None
        if path is None:
            self._dir = tempfile.mkdtemp(prefix="tray-")
            path = Path(self._dir) / "tray"
        self.path = str(path)
        self.tray, self.fw = tray, fw
        if proto not in (1, 2):
            raise ValueError(f"protocol version {proto} is not one this emulator speaks (1 or 2)")
        self.proto = proto
        self.rng = random.Random(seed)
        self.boot = self._new_boot()
        #: Boots before this one, with the last event number issued in each.
        self.old_boots: list[tuple[str, int]] = []
        self.seq = 0
        self.keep = keep
        #: Pace the bytes as a serial line at this rate would (10 bits a byte); None: as
        #: fast as the pseudo-terminal takes them, which no real serial line does.
        self.baud = baud
        self._wire_free_at = 0.0
        self.events: deque[tuple[int, bytes]] = deque(maxlen=keep)
        self._master: int | None = None
        self._slave: int | None = None
        self._lock = threading.RLock()          # the tray's state and which pty is in use
        self._resent = threading.Condition(self._lock)   # a RESEND has been answered in full
        self._write_lock = threading.Lock()     # one line at a time on the wire
        #: The next event number to send again, while a RESEND is being answered. One
        #: cursor, as a tray's firmware would have: a second RESEND moves it rather than
        #: starting a second stream, and commands are read between the lines it sends.
        self._resend_next: int | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lose_next = 0
        self.fault_log: list[str] = []          # every fault injected, in order
        self._damage_next: list[str] = []       # DAMAGE faults waiting for the next event
        #: Every line damaged on the wire: (fault, the line as sent, the whole line).
        self.damaged: list[tuple[str, bytes, bytes]] = []
        #: Every ROLL issued: boot, seq, dice, when it was written, whether a MOVED voided it,
        #: and whether its line went on the wire whole when issued (not lost, not damaged).
        self.sent: list[dict] = []
        #: Every HELLO this tray wrote: (boot, last). With `sent`, what a host could know was issued.
        self.hellos: list[tuple[str, int]] = []
        #: Every `forged_near` line written: (boot, seq).
        self.forged: list[tuple[str, int]] = []
        self._cmd_buf = b""
        self.commands: list[str] = []
        self.plugged = False

    def _new_boot(self) -> str:
        return f"{self.rng.randrange(1, 10 ** 9)}"

    # --- the port ---------------------------------------------------------------------

    def start(self) -> "TrayEmulator":
        self._plug()
        self._thread = threading.Thread(target=self._serve, name="tray-emulator", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._unplug()
        if self._thread is not None:
            self._thread.join(2.0)
        if self._dir is not None:
            try:
                os.rmdir(self._dir)
            except OSError:
                pass

    def _plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)                       # no echo, no line discipline: bytes as they are
        os.set_blocking(master, False)          # a host that stops reading never wedges the tray
        tmp = f"{self.path}.{os.getpid()}.tmp"
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(os.ttyname(slave), tmp)
        os.replace(tmp, self.path)
        with self._lock:
            self._master, self._slave = master, slave
            self.plugged = True

    def _unplug(self) -> None:
        with self._lock:
            master, slave = self._master, self._slave
            self._master = self._slave = None
            self.plugged = False
            self._resend_next = None                # what was being resent went with the cable
            self._resent.notify_all()
        for fd in (master, slave):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        try:
            os.unlink(self.path)
        except FileNotFoundError:
            pass

    def _write(self, data: bytes) -> float | None:
        """Write bytes to the host; the time the last one went, or None when the port
        went away first (a pulled cable: the bytes are lost, as on a real one)."""
        with self._write_lock:
            if self.baud:
                # A line arrives when its last bit has crossed the wire: hold it until then.
                done = max(time.monotonic(), self._wire_free_at) + len(data) * 10 / self.baud
                self._wire_free_at = done
                while (left := done - time.monotonic()) > 0:
                    time.sleep(left)
            view = memoryview(data)
            while view:
                fd = self._master
                if fd is None or self._stop.is_set():
                    return None
                try:
                    _, ready, _ = select.select([], [fd], [], 0.1)
                    if ready:
                        view = view[os.write(fd, view):]
                except (OSError, ValueError):
                    return None
            return time.monotonic()

    def _serve(self) -> None:
        while not self._stop.is_set():
            fd = self._master
            if fd is None:
                time.sleep(0.01)
                continue
            try:
                ready, _, _ = select.select([fd], [], [], 0 if self._resend_next is not None else 0.05)
                data = os.read(fd, 4096) if ready else b""
            except (OSError, ValueError):
                time.sleep(0.01)
                continue
            for item in self._commands(data):
                self._answer(item)
            self._resend_one()

    def _resend_one(self) -> None:
        """Send the next held event a RESEND asked for, if any."""
        with self._lock:
            first = self._resend_next
            if first is None:
                return
            # Held events are numbered one by one, so the one asked for is found by its offset.
            index = max(0, first - self.events[0][0]) if self.events else 0
            line = self.events[index] if index < len(self.events) else None
            self._resend_next = None if line is None else line[0] + 1
            if line is None:
                self._resent.notify_all()
        if line is not None and self._write(line[1]) is None:
            with self._lock:                        # the port went: so did the rest of the answer
                self._resend_next = None
                self._resent.notify_all()

    def _commands(self, data: bytes) -> list[str]:
        """Host command lines completed by these bytes (a bad checksum: ignored, as a tray would)."""
        out = []
        buf = self._cmd_buf + data
        *lines, rest = buf.split(b"\n")
        self._cmd_buf = rest
        for raw in lines:
            text = raw.rstrip(b"\r").decode("ascii", "replace")
            if "*" in text:
                # The check this tray's firmware reads: CRC-16 (version 2) or XOR (version 1).
                body, _, given = text.rpartition("*")
                want = crc16(body) if self.proto == 2 else xor_check(body)
                if given.upper() != want:
                    continue
                text = body
            elif self.proto == 2:
                continue
            if text:
                out.append(text)
        return out

    def _answer(self, text: str) -> None:
        self.commands.append(text)
        words = text.split(" ")
        fields = dict(w.split("=", 1) for w in words[1:] if "=" in w)
        if words[0] == "HELLO?":
            self.hello()
        elif words[0] == "RESEND":
            try:
                first = int(fields.get("from", "1"))
            except ValueError:
                self._write(self._line("ERR cmd=RESEND code=bad_from"))
                return
            with self._lock:
                self._resend_next = first if self._resend_next is None else min(first, self._resend_next)
        elif words[0] == "ACK":
            pass
        elif words[0] in ("EXPECT", "CANCEL"):
            self._write(self._line(f"OK cmd={words[0]}"))
        else:
            self._write(self._line(f"ERR cmd={words[0][:12]} code=unknown"))

    # --- being a tray -----------------------------------------------------------------

    def _line(self, body: str) -> bytes:
        return with_checksum(body, self.proto)

    def _hello_line(self, boot: str, last: int) -> bytes:
        return self._line(f"HELLO proto={self.proto} tray={self.tray} fw={self.fw} boot={boot} last={last}")

    def hello(self) -> None:
        with self._lock:
            boot, last = self.boot, self.seq
        if self._write(self._hello_line(boot, last)) is not None:
            self.hellos.append((boot, last))

    def _event(self, body: str) -> tuple[int, float | None]:
        with self._lock:
            # Events are sent in order: a new one waits until a RESEND being answered
            # has caught up (as a tray's firmware sending from its one event log would).
            while self._resend_next is not None and self.plugged and not self._stop.is_set():
                self._resent.wait(0.05)
            self.seq += 1
            seq = self.seq
            text = body.format(seq=seq, t=int(time.monotonic() * 1000) % 10 ** 9)
            if self.proto == 2:
                # "A version 2 tray also puts boot=<id> on every ROLL, CROOKED and MOVED."
                kind, _, rest = text.partition(" ")
                text = f"{kind} boot={self.boot} {rest}"
            line = self._line(text)
            self.events.append((seq, line))
            if self._lose_next:
                self._lose_next -= 1
                return seq, None                    # kept for RESEND, never sent
            if self._damage_next:
                kind = self._damage_next.pop(0)
                damaged = self._damage(kind, line)
                self.damaged.append((kind, damaged, line))
                self._write(damaged)
                return seq, None                    # kept whole for RESEND; what went was damaged
            return seq, self._write(line)

    def _damage(self, kind: str, line: bytes) -> bytes:
        """The line as a bad wire delivers it. Version 2: never a right line again.
        Version 1: a cut line has no check left, but a double flip keeps its XOR (why
        version 2 has a CRC)."""
        star = line.rindex(b"*")
        if kind == "cut_line":
            # Cut anywhere from the middle of the text to inside the check: the '\n' stays.
            return line[:self.rng.randint(len(line) // 3, len(line) - 2)] + b"\n"
        # The same bit flipped in two bytes before the check: their XOR stays the same.
        body = bytearray(line[:star])
        while True:
            bit = 1 << self.rng.randrange(7)
            i, j = sorted(self.rng.sample(range(len(body)), 2))
            a, b = body[i] ^ bit, body[j] ^ bit
            if all(32 <= c < 127 and c != ord("*") for c in (a, b)):
                body[i], body[j] = a, b
                return bytes(body) + line[star:]

    def throw(self, dice: tuple[str, ...] = ("d6", "d6"), faces: tuple[int, ...] | None = None) -> int:
        """A settled throw: a ROLL. Returns its number."""
        if faces is None:
            faces = tuple(self.rng.randint(1, DICE_SIDES[d]) for d in dice)
        text = ",".join(f"{d}:{f}" for d, f in zip(dice, faces))
        seq, at = self._event(f"ROLL seq={{seq}} t={{t}} dice={text}")
        self.sent.append({"boot": self.boot, "seq": seq, "dice": tuple(zip(dice, faces)),
                          "at": at if at is not None else time.monotonic(), "voided": False,
                          "whole": at is not None})
        return seq

    def fault(self, kind: str, seconds: float = 0.3) -> None:
        """Inject a fault (one of FAULTS)."""
        if kind in FAULTS:
            self.fault_log.append(kind)
        if kind == "noise":
            self._write(bytes(self.rng.choice(b"abcXYZ 0123=:*,") for _ in range(self.rng.randint(3, 40))) + b"\n")
        elif kind == "binary":
            self._write(bytes(self.rng.randrange(256) for _ in range(self.rng.randint(5, 60))) + b"\n")
        elif kind == "overlong":
            self._write(b"ROLL seq=99999 t=1 dice=" + b"d6:1," * 60 + b"d6:1\n")
        elif kind == "bad_checksum":
            body = f"ROLL seq={self.seq + 1} t=1 dice=d6:6"
            good = self._line(body)
            star = good.rindex(b"*")
            wrong = int(good[star + 1:-1], 16) ^ 0x5A
            self._write(good[:star + 1] + f"{wrong:0{len(good) - star - 2}X}\n".encode())
        elif kind == "duplicate":
            if self.events:
                self._write(self.events[-1][1])
        elif kind == "lose":
            self._lose_next += 1
        elif kind == "pull":
            self._unplug()
            time.sleep(seconds)
            self._plug()
        elif kind == "power_cycle":
            with self._lock:
                self._resend_next = None            # powered off mid-stream: the rest is gone
                self.old_boots.append((self.boot, self.seq))
                self.boot = self._new_boot()
                self.seq = 0
                self.events.clear()
            self.hello()
        elif kind == "crooked":
            self._event(f"CROOKED seq={{seq}} t={{t}} die={self.rng.randint(1, 2)}")
        elif kind == "nudge":
            # A settled throw, then disturbed: its ROLL no longer stands.
            self.throw()
            self.sent[-1]["voided"] = True
            self._event("MOVED seq={seq} t={t}")
        elif kind == "forged_far":
            # A right line (its check and all) numbered far beyond anything the tray issued.
            far = self.seq + self.rng.randint(65, 1_000_000)
            boot = f" boot={self.boot}" if self.proto == 2 else ""
            self._write(self._line(f"ROLL seq={far} t=1{boot} dice=d20:20"))
        elif kind == "forged_near":
            # A right line numbered 2 to 5 past the tray's newest, with dice of its own: the
            # tray's own event with that number comes later and must be the one that counts.
            near = self.seq + self.rng.randint(2, 5)
            boot = f" boot={self.boot}" if self.proto == 2 else ""
            faces = ",".join(f"d6:{self.rng.randint(1, 6)}" for _ in range(2))
            self.forged.append((self.boot, near))
            self._write(self._line(f"ROLL seq={near} t=1{boot} dice={faces}"))
        elif kind == "stray_hello_new":
            # A HELLO naming a boot this tray never had (an old line, another tray's, a forgery).
            self._write(self._hello_line(self._new_boot(), self.seq))
        elif kind == "stray_hello_old":
            # A HELLO from the past: a boot before the last power cycle, or this boot's earlier `last`.
            if self.old_boots:
                boot, last = self.rng.choice(self.old_boots)
            else:
                boot, last = self.boot, max(0, self.seq - self.rng.randint(1, 20))
            self._write(self._hello_line(boot, last))
        elif kind in DAMAGE:
            self._damage_next.append(kind)
        else:
            raise ValueError(f"unknown fault '{kind}' (one of {', '.join(FAULTS)})")

    @property
    def standing(self) -> list[tuple[str, int, tuple[tuple[str, int], ...]]]:
        """Every ROLL issued that a MOVED did not void, in order: (boot, seq, dice)."""
        return [(r["boot"], r["seq"], r["dice"]) for r in self.sent if not r["voided"]]

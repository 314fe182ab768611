"""A dice tray played on a real pseudo-terminal, with faults on demand.

The tray's port is a symlink to the pty's device (`path`), so it stays the same
across a cable pull: the pull closes the pty (the host's reads fail), and the
plug-in makes a new one behind the same name.  It throws dice when asked or on
a timer, answers HELLO?, RESEND, ACK, EXPECT and CANCEL, keeps its last 64
events for RESEND, and injects: noise, binary bytes, over-long lines, bad
checksums, duplicates, lost lines, a cable pull, a power cycle, crooked dice and
a die nudged after settling.  The tests and the demo use it, through the real
link, as a tray builder's terminal would.
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

from .protocol import DICE_SIDES, checksum, with_checksum

FAULTS = ("noise", "binary", "overlong", "bad_checksum", "duplicate", "lose", "pull", "power_cycle",
          "crooked", "nudge")


class TrayEmulator:
    def __init__(self, path: str | Path | None = None, *, tray: str = "emulator", fw: str = "1.0",
                 seed: int | None = None, keep: int = 64) -> None:
        self._dir = None
        if path is None:
            self._dir = tempfile.mkdtemp(prefix="tray-")
            path = Path(self._dir) / "tray"
        self.path = str(path)
        self.tray, self.fw = tray, fw
        self.rng = random.Random(seed)
        self.boot = self._new_boot()
        self.seq = 0
        self.keep = keep
        self.events: deque[tuple[int, bytes]] = deque(maxlen=keep)
        self._master: int | None = None
        self._slave: int | None = None
        self._lock = threading.RLock()          # the tray's state and which pty is in use
        self._write_lock = threading.Lock()     # one line at a time on the wire
        self._generation = 0                    # a power cycle ends whatever was being resent
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lose_next = 0
        #: Every ROLL issued: boot, seq, dice, when it was written, whether a MOVED voided it.
        self.sent: list[dict] = []
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
                ready, _, _ = select.select([fd], [], [], 0.05)
                if not ready:
                    continue
                data = os.read(fd, 4096)
            except (OSError, ValueError):
                time.sleep(0.01)
                continue
            for item in self._commands(data):
                self._answer(item)

    def _commands(self, data: bytes) -> list[str]:
        """Host command lines completed by these bytes (a bad checksum: ignored, as a tray would)."""
        out = []
        buf = self._cmd_buf + data
        *lines, rest = buf.split(b"\n")
        self._cmd_buf = rest
        for raw in lines:
            text = raw.rstrip(b"\r").decode("ascii", "replace")
            if "*" in text:
                body, _, given = text.rpartition("*")
                if given.upper() != checksum(body):
                    continue
                text = body
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
                self._write(with_checksum("ERR cmd=RESEND code=bad_from"))
                return
            generation = self._generation
            for seq, line in list(self.events):
                if self._generation != generation:
                    break                           # powered off mid-stream: the rest is gone
                if seq >= first:
                    self._write(line)
        elif words[0] == "ACK":
            pass
        elif words[0] in ("EXPECT", "CANCEL"):
            self._write(with_checksum(f"OK cmd={words[0]}"))
        else:
            self._write(with_checksum(f"ERR cmd={words[0][:12]} code=unknown"))

    # --- being a tray -----------------------------------------------------------------

    def hello(self) -> None:
        self._write(with_checksum(f"HELLO proto=1 tray={self.tray} fw={self.fw} boot={self.boot} last={self.seq}"))

    def _event(self, body: str) -> tuple[int, float | None]:
        with self._lock:
            self.seq += 1
            seq = self.seq
            line = with_checksum(body.format(seq=seq, t=int(time.monotonic() * 1000) % 10 ** 9))
            self.events.append((seq, line))
            if self._lose_next:
                self._lose_next -= 1
                return seq, None                    # kept for RESEND, never sent
            return seq, self._write(line)

    def throw(self, dice: tuple[str, ...] = ("d6", "d6"), faces: tuple[int, ...] | None = None) -> int:
        """A settled throw: a ROLL. Returns its number."""
        if faces is None:
            faces = tuple(self.rng.randint(1, DICE_SIDES[d]) for d in dice)
        text = ",".join(f"{d}:{f}" for d, f in zip(dice, faces))
        seq, at = self._event(f"ROLL seq={{seq}} t={{t}} dice={text}")
        self.sent.append({"boot": self.boot, "seq": seq, "dice": tuple(zip(dice, faces)),
                          "at": at if at is not None else time.monotonic(), "voided": False})
        return seq

    def fault(self, kind: str, seconds: float = 0.3) -> None:
        """Inject a fault (one of FAULTS)."""
        if kind == "noise":
            self._write(bytes(self.rng.choice(b"abcXYZ 0123=:*,") for _ in range(self.rng.randint(3, 40))) + b"\n")
        elif kind == "binary":
            self._write(bytes(self.rng.randrange(256) for _ in range(self.rng.randint(5, 60))) + b"\n")
        elif kind == "overlong":
            self._write(b"ROLL seq=99999 t=1 dice=" + b"d6:1," * 60 + b"d6:1\n")
        elif kind == "bad_checksum":
            body = f"ROLL seq={self.seq + 1} t=1 dice=d6:6"
            self._write(f"{body}*{(int(checksum(body), 16) ^ 0x5A):02X}\n".encode())
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
                self._generation += 1
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
        else:
            raise ValueError(f"unknown fault '{kind}' (one of {', '.join(FAULTS)})")

    @property
    def standing(self) -> list[tuple[str, int, tuple[tuple[str, int], ...]]]:
        """Every ROLL issued that a MOVED did not void, in order: (boot, seq, dice)."""
        return [(r["boot"], r["seq"], r["dice"]) for r in self.sent if not r["voided"]]

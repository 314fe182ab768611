"""The dice tray's line protocol, version 1 (../shared/dicetray-protocol.md; docs/dicetray.md).

A pure parser: bytes in, messages and counted, reasoned rejections out.  It
never raises on input and never invents a message: noise, binary bytes, cut-off
or over-long lines, wrong checksums, unknown types and malformed fields are
each rejected with a reason and counted.  Framing is kept apart from any port,
so it is tested byte by byte without one (as pyserial's `threaded` protocols do).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

#: "A line holds at most 200 bytes before its end."
MAX_LINE = 200
#: Dice a tray may report, with their sides ("ROLL").
DICE_SIDES = {"d4": 4, "d6": 6, "d8": 8, "d10": 10, "d12": 12, "d20": 20, "d100": 100}
_INT = re.compile(r"^(0|[1-9][0-9]{0,9})$")
_WORD = re.compile(r"^[A-Za-z0-9_.:,?=-]+$")


def checksum(body: str) -> str:
    """NMEA-style: the XOR of every byte, as two upper-case hex digits."""
    x = 0
    for b in body.encode("ascii"):
        x ^= b
    return f"{x:02X}"


def with_checksum(body: str) -> bytes:
    return f"{body}*{checksum(body)}\n".encode("ascii")


# --- messages, tray to host ---------------------------------------------------------

@dataclass(frozen=True)
class Hello:
    proto: int
    tray: str
    fw: str
    boot: str
    last: int


@dataclass(frozen=True)
class Roll:
    seq: int
    t_ms: int
    dice: tuple[tuple[str, int], ...]      # (die, face) in the tray's reading order

    def to_json(self) -> dict:
        return {"seq": self.seq, "dice": [{"die": d, "face": f} for d, f in self.dice]}


@dataclass(frozen=True)
class Crooked:
    seq: int
    t_ms: int
    die: int


@dataclass(frozen=True)
class Moved:
    seq: int
    t_ms: int


@dataclass(frozen=True)
class Batt:
    pct: int
    charging: bool


@dataclass(frozen=True)
class Reply:
    ok: bool
    cmd: str
    code: str = ""


Message = Hello | Roll | Crooked | Moved | Batt | Reply
EVENTS = (Roll, Crooked, Moved)             # the numbered ones


@dataclass(frozen=True)
class Rejection:
    """A line not taken: `code` for counting (one of REJECTION_CODES), `reason` for people."""

    code: str
    reason: str
    line: bytes


REJECTION_CODES = ("empty", "binary", "control", "checksum", "spacing", "field", "unknown_type", "overlong")


class FieldError(ValueError):
    pass


def _fields(words: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for w in words:
        if "=" not in w:
            raise FieldError(f"'{w[:20]}' is not key=value")
        k, v = w.split("=", 1)
        if not k or not v:
            raise FieldError(f"'{w[:20]}' has an empty key or value")
        if k in out:
            raise FieldError(f"'{k}' given twice")
        out[k] = v
    return out


def _int(f: dict[str, str], key: str, *, low: int = 0, high: int | None = None) -> int:
    if key not in f:
        raise FieldError(f"missing {key}")
    if not _INT.match(f[key]):
        raise FieldError(f"{key}={f[key][:12]} is not a whole number")
    v = int(f[key])
    if v < low or (high is not None and v > high):
        raise FieldError(f"{key}={v} is out of range")
    return v


def _dice(text: str) -> tuple[tuple[str, int], ...]:
    out = []
    for part in text.split(","):
        die, sep, face = part.partition(":")
        if not sep:
            raise FieldError(f"'{part[:12]}' is not die:face")
        if die not in DICE_SIDES:
            raise FieldError(f"unknown die '{die[:8]}'")
        if not _INT.match(face):
            raise FieldError(f"'{face[:8]}' is not a face")
        n = int(face)
        if not 1 <= n <= DICE_SIDES[die]:
            raise FieldError(f"a {die} cannot show {n}")
        out.append((die, n))
    if not out:
        raise FieldError("no dice")
    return tuple(out)


def parse_line(raw: bytes) -> Message | Rejection:
    """One line (without its '\\n') to a message, or a rejection saying why."""
    line = raw[:-1] if raw.endswith(b"\r") else raw
    if not line:
        return Rejection("empty", "empty line", raw)
    try:
        text = line.decode("ascii")
    except UnicodeDecodeError:
        return Rejection("binary", "not ASCII (binary bytes or noise)", raw)
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        return Rejection("control", "control characters in the line", raw)
    if "*" in text:
        body, _, given = text.rpartition("*")
        if len(given) != 2 or any(c not in "0123456789ABCDEFabcdef" for c in given):
            return Rejection("checksum", "malformed checksum", raw)
        if given.upper() != checksum(body):
            return Rejection("checksum", f"wrong checksum (*{given.upper()}, the line gives *{checksum(body)})", raw)
        text = body
    words = text.split(" ")
    if any(w == "" for w in words):
        return Rejection("spacing", "words not separated by single spaces", raw)
    kind = words[0]
    try:
        f = _fields(words[1:])
        if kind == "ROLL":
            return Roll(_int(f, "seq", low=1), _int(f, "t"), _dice(f.get("dice", "")) if "dice" in f
                        else _raise("missing dice"))
        if kind == "CROOKED":
            return Crooked(_int(f, "seq", low=1), _int(f, "t"), _int(f, "die", low=1, high=64))
        if kind == "MOVED":
            return Moved(_int(f, "seq", low=1), _int(f, "t"))
        if kind == "HELLO":
            for key in ("tray", "fw", "boot"):
                if key not in f:
                    raise FieldError(f"missing {key}")
                if not _WORD.match(f[key]):
                    raise FieldError(f"{key} has odd characters")
            return Hello(_int(f, "proto", low=1), f["tray"], f["fw"], f["boot"], _int(f, "last"))
        if kind == "BATT":
            charging = f.get("charging")
            if charging not in ("0", "1"):
                raise FieldError("charging must be 0 or 1")
            return Batt(_int(f, "pct", high=100), charging == "1")
        if kind in ("OK", "ERR"):
            if "cmd" not in f:
                raise FieldError("missing cmd")
            return Reply(kind == "OK", f["cmd"], f.get("code", ""))
    except FieldError as exc:
        return Rejection("field", f"{kind}: {exc}", raw)
    return Rejection("unknown_type", f"unknown message type '{kind[:16]}'", raw)


def _raise(msg: str):
    raise FieldError(msg)


@dataclass
class LineParser:
    """Frames a byte stream into lines and parses them; counts every rejection by reason.

    `feed(data)` returns the messages and rejections completed by these bytes.
    A line longer than MAX_LINE is discarded up to its end and counted once.
    """

    counts: Counter = field(default_factory=Counter)
    _buf: bytearray = field(default_factory=bytearray)
    _overlong: bool = False

    def feed(self, data: bytes) -> list[Message | Rejection]:
        out: list[Message | Rejection] = []
        start = 0
        while True:
            nl = data.find(b"\n", start)
            if nl < 0:
                self._append(data[start:])
                break
            self._append(data[start:nl])
            line = bytes(self._buf[:-1] if self._buf.endswith(b"\r") else self._buf)
            if self._overlong or len(line) > MAX_LINE:
                out.append(self._count(Rejection("overlong", f"over-long line (more than {MAX_LINE} bytes)", line[:40])))
            else:
                out.append(self._count(parse_line(line)))
            self._buf.clear()
            self._overlong = False
            start = nl + 1
        return out

    def _append(self, data: bytes) -> None:
        # Past the limit (and a '\r'), the rest of the line is dropped unread;
        # the first bytes are kept to say what the line was.
        if self._overlong:
            return
        if len(self._buf) + len(data) > MAX_LINE + 1:
            self._overlong = True
            self._buf.extend(data[:max(40 - len(self._buf), 0)])
            return
        self._buf.extend(data)

    def _count(self, item: Message | Rejection) -> Message | Rejection:
        if isinstance(item, Rejection):
            self.counts[item.code] += 1
        return item

    @property
    def rejected(self) -> int:
        return sum(self.counts.values())


# --- host to tray ------------------------------------------------------------------

def cmd_hello() -> bytes:
    return with_checksum("HELLO?")


def cmd_ack(seq: int) -> bytes:
    return with_checksum(f"ACK seq={seq}")


def cmd_resend(first: int) -> bytes:
    return with_checksum(f"RESEND from={first}")


def cmd_expect(req: str, dice: tuple[str, ...]) -> bytes:
    counts: dict[str, int] = {}
    for d in dice:
        counts[d] = counts.get(d, 0) + 1
    spec = ",".join(f"{n}{d}" for d, n in counts.items())
    return with_checksum(f"EXPECT req={req} dice={spec}")


def cmd_cancel(req: str) -> bytes:
    return with_checksum(f"CANCEL req={req}")

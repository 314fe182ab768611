"""The dice tray's line protocol, version 2, reading version 1 trays too
(../shared/dicetray-protocol.md; docs/dicetray.md).

A pure parser: bytes in, messages and counted, reasoned rejections out.  It
never raises on input and never invents a message: noise, binary bytes, cut-off
or over-long lines, wrong checks, unknown types and malformed fields are each
rejected with a reason and counted.  Framing is kept apart from any port, so it
is tested byte by byte without one (as pyserial's `threaded` protocols do).

Checks: a version 2 line ends `*HHHH`, the CRC-16/CCITT-FALSE of the bytes
before the `*`.  A version 1 line ends `*HH` (an XOR, which misses the same bit
flipped in two bytes) or has no check; such a line is taken only from a tray
whose HELLO said `proto=1` (`LineParser` follows the HELLOs), and an unchecked
one only when the table allows it (a person typing at a terminal).  A line cut
short keeps its `\n` but loses its check, so from a version 2 tray it is never
taken.
"""

from __future__ import annotations

import binascii
import re
from collections import Counter
from dataclasses import dataclass, field

#: "A line holds at most 200 bytes before its end."
MAX_LINE = 200
#: Dice a tray may report, with their sides ("ROLL").
DICE_SIDES = {"d4": 4, "d6": 6, "d8": 8, "d10": 10, "d12": 12, "d20": 20, "d100": 100}
_INT = re.compile(r"^(0|[1-9][0-9]{0,9})$")
_WORD = re.compile(r"^[A-Za-z0-9_.:,?=-]+$")


_HEX = frozenset("0123456789ABCDEFabcdef")


def crc16(body: str | bytes) -> str:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR) as
    four upper-case hex digits: '123456789' gives '29B1'."""
    data = body.encode("ascii") if isinstance(body, str) else body
    return f"{binascii.crc_hqx(data, 0xFFFF):04X}"


def xor_check(body: str | bytes) -> str:
    """Version 1's NMEA-style check: the XOR of every byte, as two upper-case hex digits."""
    data = body.encode("ascii") if isinstance(body, str) else body
    x = 0
    for b in data:
        x ^= b
    return f"{x:02X}"


def with_checksum(body: str, proto: int = 2) -> bytes:
    """A whole line: the body, its check (CRC-16 for version 2, XOR for 1) and '\n'."""
    check = crc16(body) if proto >= 2 else xor_check(body)
    return f"{body}*{check}\n".encode("ascii")


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
    boot: str | None = None                # version 2 events say their boot; version 1 ones do not

    def to_json(self) -> dict:
        return {"seq": self.seq, "dice": [{"die": d, "face": f} for d, f in self.dice]}


@dataclass(frozen=True)
class Crooked:
    seq: int
    t_ms: int
    die: int
    boot: str | None = None


@dataclass(frozen=True)
class Moved:
    seq: int
    t_ms: int
    boot: str | None = None


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


REJECTION_CODES = ("empty", "binary", "control", "checksum", "unchecked", "spacing", "field", "unknown_type",
                   "overlong")


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


def _check(text: str) -> tuple[str, str, str]:
    """Split off a line's check: (body, kind, problem). kind is 'crc', 'xor' or 'none';
    problem is '' when the check is right, else why it is not."""
    if "*" not in text:
        return text, "none", ""
    body, _, given = text.rpartition("*")
    if len(given) not in (2, 4) or any(c not in _HEX for c in given):
        return body, "bad", f"malformed check '*{given[:8]}' (a CRC-16 is '*' and four hex digits)"
    if len(given) == 4:
        want = crc16(body)
        return body, "crc", "" if given.upper() == want else f"wrong CRC-16 (*{given.upper()}, the line gives *{want})"
    want = xor_check(body)
    return body, "xor", "" if given.upper() == want else f"wrong checksum (*{given.upper()}, the line gives *{want})"


def parse_line(raw: bytes, *, proto: int | None = None, allow_unchecked: bool = False) -> Message | Rejection:
    """One line (without its '\n') to a message, or a rejection saying why.

    `proto` is what the tray's HELLO in this boot said: 2 (or None, not heard yet)
    takes only lines with a right CRC-16; 1 also takes a right XOR check, and a line
    without a check when `allow_unchecked`.  Before any HELLO, a version 1 check is
    taken on a HELLO saying proto=1 only (that HELLO is what makes the tray version 1)."""
    line = raw[:-1] if raw.endswith(b"\r") else raw
    if not line:
        return Rejection("empty", "empty line", raw)
    try:
        text = line.decode("ascii")
    except UnicodeDecodeError:
        return Rejection("binary", "not ASCII (binary bytes or noise)", raw)
    if any(ord(c) < 32 or ord(c) == 127 for c in text):
        return Rejection("control", "control characters in the line", raw)
    text, kind_of_check, problem = _check(text)
    if problem:
        return Rejection("checksum", problem, raw)
    out = _parse_body(text, raw)
    if kind_of_check == "crc":
        return out
    # A version 1 check, or none: only from a version 1 tray (or its own HELLO).
    v1 = proto == 1 or (proto is None and isinstance(out, Hello) and out.proto == 1)
    if v1 and isinstance(out, Rejection):
        return out
    if not v1:
        said = "said proto=2" if proto is not None and proto >= 2 else "has not said proto=1"
        what = "no check" if kind_of_check == "none" else "a version 1 XOR check"
        return Rejection("unchecked", f"{what}, and the tray {said}: a line needs its CRC-16 "
                                      f"(a line cut short loses it)", raw)
    if kind_of_check == "none" and not allow_unchecked:
        return Rejection("unchecked", "no check on the line (unchecked lines are not allowed here)", raw)
    if getattr(out, "boot", None) is not None and not isinstance(out, Hello):
        return Rejection("unchecked", "an event saying its boot (version 2) without its CRC-16", raw)
    return out


def _parse_body(text: str, raw: bytes) -> Message | Rejection:
    words = text.split(" ")
    if any(w == "" for w in words):
        return Rejection("spacing", "words not separated by single spaces", raw)
    kind = words[0]
    try:
        f = _fields(words[1:])
        boot = _word(f, "boot") if kind in ("ROLL", "CROOKED", "MOVED") and "boot" in f else None
        if kind == "ROLL":
            return Roll(_int(f, "seq", low=1), _int(f, "t"), _dice(f.get("dice", "")) if "dice" in f
                        else _raise("missing dice"), boot)
        if kind == "CROOKED":
            return Crooked(_int(f, "seq", low=1), _int(f, "t"), _int(f, "die", low=1, high=64), boot)
        if kind == "MOVED":
            return Moved(_int(f, "seq", low=1), _int(f, "t"), boot)
        if kind == "HELLO":
            return Hello(_int(f, "proto", low=1), _word(f, "tray"), _word(f, "fw"), _word(f, "boot"), _int(f, "last"))
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


def _word(f: dict[str, str], key: str) -> str:
    if key not in f:
        raise FieldError(f"missing {key}")
    if not _WORD.match(f[key]) or len(f[key]) > 40:
        raise FieldError(f"{key} has odd characters")
    return f[key]


def _raise(msg: str):
    raise FieldError(msg)


@dataclass
class LineParser:
    """Frames a byte stream into lines and parses them; counts every rejection by reason.

    `feed(data)` returns the messages and rejections completed by these bytes.
    A line longer than MAX_LINE is discarded up to its end and counted once.
    `proto` follows the tray's HELLOs (it decides which checks are taken, see
    `parse_line`); `allow_unchecked` lets a version 1 tray's unchecked lines in.
    """

    proto: int | None = None
    allow_unchecked: bool = False
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
                item = parse_line(line, proto=self.proto, allow_unchecked=self.allow_unchecked)
                if isinstance(item, Hello):
                    self.proto = item.proto
                out.append(self._count(item))
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

def cmd_hello(proto: int | None = 2) -> bytes:
    """HELLO?; to a tray not yet heard (proto None), with both checks, so that a
    version 1 tray (which drops a CRC it cannot read) answers as well as a version 2 one."""
    if proto is None:
        return with_checksum("HELLO?", 1) + with_checksum("HELLO?", 2)
    return with_checksum("HELLO?", proto)


def cmd_ack(seq: int, proto: int = 2) -> bytes:
    return with_checksum(f"ACK seq={seq}", proto)


def cmd_resend(first: int, proto: int = 2) -> bytes:
    return with_checksum(f"RESEND from={first}", proto)


def cmd_expect(req: str, dice: tuple[str, ...], proto: int = 2) -> bytes:
    counts: dict[str, int] = {}
    for d in dice:
        counts[d] = counts.get(d, 0) + 1
    spec = ",".join(f"{n}{d}" for d, n in counts.items())
    return with_checksum(f"EXPECT req={req} dice={spec}", proto)


def cmd_cancel(req: str, proto: int = 2) -> bytes:
    return with_checksum(f"CANCEL req={req}", proto)

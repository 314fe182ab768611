"""The dice tray: the parser byte by byte, the real link against the emulator on a
pseudo-terminal with every fault switched on and against loop://, the tray as the
session's dice source, and the commands."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest
import serial

from calibration.tablefile import TableFileError, parse_table
from companion.dice import DiceRequest, TypedDice
from companion.tray import TrayDice, match
from hardware.emulator import FAULTS, TrayEmulator
from hardware.link import TrayLink
from tests.conftest import wait_until
from hardware.protocol import (Batt, Crooked, Hello, LineParser, Moved, Rejection, Reply, Roll, crc16,
                               parse_line, with_checksum, xor_check)


# --- the parser ----------------------------------------------------------------------
# These lines are a version 1 tray's, typed at a terminal (no check, or an XOR one);
# version 2's checks are in test_tray_v2.py.

@pytest.mark.parametrize("line, expected", [
    (b"ROLL seq=1 t=100 dice=d6:4,d6:3", Roll(1, 100, (("d6", 4), ("d6", 3)))),
    (b"ROLL seq=7 t=5 dice=d10:10,d20:1 future=yes", Roll(7, 5, (("d10", 10), ("d20", 1)))),   # unknown keys ignored
    (with_checksum("MOVED seq=3 t=9", 1)[:-1], Moved(3, 9)),
    (with_checksum("MOVED seq=3 t=9", 2)[:-1], Moved(3, 9)),
    (b"CROOKED seq=4 t=10 die=2\r", Crooked(4, 10, 2)),
    (b"HELLO proto=1 tray=t1 fw=1.2 boot=77 last=12", Hello(1, "t1", "1.2", "77", 12)),
    (b"BATT pct=55 charging=0", Batt(55, False)),
    (b"OK cmd=EXPECT", Reply(True, "EXPECT")),
    (b"ERR cmd=RESEND code=bad_from", Reply(False, "RESEND", "bad_from")),
])
def test_messages_are_parsed(line, expected):
    assert parse_line(line, proto=1, allow_unchecked=True) == expected


@pytest.mark.parametrize("line, code, words", [
    (b"ROLL seq=2 t=5 dice=d6:7", "field", "a d6 cannot show 7"),
    (b"ROLL seq=2 t=5 dice=d10:0", "field", "a d10 cannot show 0"),
    (b"ROLL seq=2 t=5 dice=d7:3", "field", "unknown die"),
    (b"ROLL seq=0 t=5 dice=d6:3", "field", "seq=0 is out of range"),
    (b"ROLL t=5 dice=d6:3", "field", "missing seq"),
    (b"ROLL seq=2 t=5", "field", "missing dice"),
    (b"ROLL seq=x t=5 dice=d6:3", "field", "not a whole number"),
    (b"ROLL seq=2 seq=3 t=5 dice=d6:3", "field", "given twice"),
    (b"ROLL  seq=2 t=5 dice=d6:3", "spacing", "single spaces"),
    (b"ROLL seq=2 t=5 dice=d6:3*00", "checksum", "wrong checksum"),
    (b"ROLL seq=2 t=5 dice=d6:3*G1", "checksum", "malformed check"),
    (b"ROLL seq=2 t=5 dice=d6:3*ABC", "checksum", "malformed check"),
    (b"ROLL seq=2 t=5 dice=d6:3*0000", "checksum", "wrong CRC-16"),
    (b"\xff\xfe\x00ROLL", "binary", "not ASCII"),
    (b"ROLL seq=2\x07 t=5", "control", "control characters"),
    (b"WHAT is=this", "unknown_type", "unknown message type 'WHAT'"),
    (b"HELLO proto=1 tray=t fw=1 last=0", "field", "missing boot"),
    (b"BATT pct=101 charging=1", "field", "out of range"),
    (b"", "empty", "empty line"),
])
def test_bad_lines_are_rejected_with_a_reason(line, code, words):
    out = parse_line(line, proto=1, allow_unchecked=True)
    assert isinstance(out, Rejection) and out.code == code and words in out.reason


def test_framing_across_reads_and_over_long_lines():
    p = LineParser(proto=1, allow_unchecked=True)
    line = with_checksum("ROLL seq=1 t=1 dice=d6:2")
    assert p.feed(line[:7]) == []
    assert p.feed(line[7:] + b"ROLL seq=2 ") == [Roll(1, 1, (("d6", 2),))]
    assert p.feed(b"t=2 dice=d6:3\r\n") == [Roll(2, 2, (("d6", 3),))]
    out = p.feed(b"X" * 150 + b"Y" * 150 + b"\n" + b"MOVED seq=3 t=3\n")
    assert [type(o) for o in out] == [Rejection, Moved] and out[0].code == "overlong"
    exact = b"ROLL seq=4 t=4 dice=" + b"d6:1," * 35 + b"d6:1"
    assert len(exact) <= 200 and isinstance(p.feed(exact + b"\r\n")[0], Roll)
    assert p.counts == {"overlong": 1}


def test_the_checks_are_version_1s_xor_and_version_2s_crc16():
    assert xor_check("HELLO?") == f"{0x48 ^ 0x45 ^ 0x4C ^ 0x4C ^ 0x4F ^ 0x3F:02X}"
    assert crc16("123456789") == "29B1"                     # CRC-16/CCITT-FALSE's check value


# --- the real link against the emulator on a pseudo-terminal -------------------------------

@pytest.fixture
def tray():
    emu = TrayEmulator(seed=11).start()
    taken = []
    statuses = []
    link = TrayLink(emu.path, on_event=taken.append, on_status=lambda s, d: statuses.append(s)).start()
    assert wait_until(lambda: link.boot is not None)
    yield emu, link, taken, statuses
    link.stop()
    emu.stop()


def rolls_taken(taken):
    return [(e.boot, e.seq, e.message.dice) for e in taken if e.kind == "roll"]


def test_every_valid_throw_is_taken_once_in_order_with_every_fault(tray):
    emu, link, taken, statuses = tray
    for round_ in range(3):
        for fault in FAULTS:
            if fault == "forged_near":
                continue      # tests/test_tray_sequence.py: back to back it meets the tray's own line
            emu.throw(("d6", "d6", "d10"))
            opened = statuses.count("open")
            if fault == "power_cycle":
                # Switched off idle, as a tray is: a power cycle wipes its memory, so a throw
                # not yet recovered after the cable pull before it would be the tray's loss.
                assert wait_until(lambda: len(rolls_taken(taken)) == len(emu.sent)), "before the power cycle"
            emu.fault(fault, 0.4)
            if fault == "pull":
                # Lines written while no one has the port open are gone (pyserial flushes
                # the input on opening); ROLLs come back through HELLO and RESEND anyway.
                assert wait_until(lambda: statuses.count("open") > opened), fault
            emu.throw(("d20",))
            if fault == "power_cycle":
                assert wait_until(lambda: link.boot == emu.boot), fault
    assert wait_until(lambda: len(rolls_taken(taken)) == len(emu.sent))
    time.sleep(0.3)
    sent = [(r["boot"], r["seq"], r["dice"]) for r in emu.sent]
    assert rolls_taken(taken) == sent                     # each once, in order, none invented
    moved = [e for e in taken if e.kind == "moved"]
    assert len(moved) == 3 and all(any(r["voided"] and r["seq"] == m.seq - 1 for r in emu.sent) for m in moved)
    s = link.stats
    counts = s.to_json()
    assert s.duplicates >= 3 and s.resends >= 1, counts
    assert s.reopens == 3 and s.restarts == 3, counts
    # Every kind of bad line was seen and refused with its reason. (Not exact counts:
    # noise may fail as a bad checksum too, and a line written while the port is being
    # reopened is flushed by pyserial's open, unseen; the ROLLs come back by RESEND.)
    assert s.rejected["checksum"] >= 1 and s.rejected["overlong"] >= 1 and s.rejected["binary"] >= 1, counts
    assert statuses.count("lost") == 3


def test_a_pulled_cable_loses_nothing_thrown_meanwhile(tray):
    emu, link, taken, _ = tray
    emu.throw()
    emu._unplug()                                   # pulled...
    assert wait_until(lambda: link.status in ("lost", "waiting"))
    for _ in range(4):
        emu.throw()                                 # ...and thrown while nobody listens
    emu._plug()                                     # plugged back in
    assert wait_until(lambda: len(rolls_taken(taken)) == 5)
    assert [seq for _, seq, _ in rolls_taken(taken)] == [1, 2, 3, 4, 5]


def test_a_stream_faster_than_the_reader_with_lost_lines_comes_through_in_order():
    """Thousands of lines as fast as the pty takes them, a lost line every ~20: each
    RESEND is answered while newer throws wait, so nothing falls out of the tray's memory."""
    emu = TrayEmulator(seed=3, keep=4096).start()
    taken = []
    link = TrayLink(emu.path, on_event=taken.append).start()
    try:
        assert wait_until(lambda: link.boot is not None)
        for i in range(3000):
            if i % 20 == 7:
                emu.fault("lose")
            elif i % 50 == 11:
                emu.fault("bad_checksum")
            elif i % 50 == 13:
                emu.fault("duplicate")
            else:
                emu.throw()
        assert wait_until(lambda: len(rolls_taken(taken)) == len(emu.sent), timeout=30)
        assert rolls_taken(taken) == [(r["boot"], r["seq"], r["dice"]) for r in emu.sent]
        assert link.stats.resends >= 1 and link.stats.lost == 0
    finally:
        link.stop()
        emu.stop()


def test_events_the_tray_no_longer_holds_are_reported_lost_and_the_rest_go_on():
    emu = TrayEmulator(seed=4, keep=2).start()          # a tray that forgets after two events
    taken, statuses = [], []
    link = TrayLink(emu.path, on_event=taken.append, on_status=lambda s, d: statuses.append((s, d))).start()
    try:
        assert wait_until(lambda: link.boot is not None)
        emu.throw()
        assert wait_until(lambda: len(taken) == 1)
        emu._unplug()                                   # three throws while nobody listens...
        for _ in range(3):
            emu.throw()
        emu._plug()                                     # ...of which the tray holds the last two
        assert wait_until(lambda: link.stats.lost == 1, timeout=5)
        assert ("gap", "event 2 is lost: the tray no longer holds it") in statuses
        # the gap is named as soon as the tray says it forgot event 2; the two it kept
        # are sent after that answer, so they are waited for, not read at once
        assert wait_until(lambda: len(rolls_taken(taken)) >= 3, timeout=5)
        assert [seq for _, seq, _ in rolls_taken(taken)] == [1, 3, 4]
        assert link.stats.lost == 1
    finally:
        link.stop()
        emu.stop()


def test_the_emulator_can_pace_its_lines_as_a_serial_line_would():
    emu = TrayEmulator(seed=5, baud=9600).start()
    taken = []
    link = TrayLink(emu.path, on_event=taken.append).start()
    try:
        assert wait_until(lambda: link.boot is not None)
        start = time.monotonic()
        for _ in range(10):
            emu.throw()
        took = time.monotonic() - start
        wire = sum(len(line) for _, line in emu.events) * 10 / 9600
        assert took >= wire * 0.95
        assert wait_until(lambda: len(taken) == 10)
    finally:
        link.stop()
        emu.stop()


def test_expect_and_cancel_reach_the_tray(tray):
    emu, link, _, _ = tray
    assert link.expect("r1", ("d6", "d6", "d10"))
    assert link.cancel("r1")
    assert wait_until(lambda: "CANCEL req=r1" in emu.commands)
    assert "EXPECT req=r1 dice=2d6,1d10" in emu.commands


def test_the_link_against_loop():
    """pyserial's loop:// hands back what is written: tray lines written by the test,
    and the link's own commands, which it counts as lines that are not the tray's."""
    port = serial.serial_for_url("loop://", timeout=0.02)
    taken = []
    # A version 1 tray typed at a terminal: no checks, which only a table allowing them takes.
    link = TrayLink("loop://", on_event=taken.append, port=port, allow_unchecked=True).start()
    port.write(b"HELLO proto=1 tray=loop fw=1 boot=5 last=0\n")
    assert wait_until(lambda: link.stats.hellos == 1)
    assert link.boot is None                  # a boot is believed when the tray says it again...
    port.write(b"HELLO proto=1 tray=loop fw=1 boot=5 last=0\n")     # ...in answer to HELLO?
    assert wait_until(lambda: link.boot == "5")
    port.write(with_checksum("ROLL seq=1 t=1 dice=d6:3") + b"ROLL seq=1 t=1 dice=d6:3\n"   # a duplicate
               + b"ROLL seq=3 t=3 dice=d6:5\n")                                          # a gap...
    assert wait_until(lambda: link.stats.resends >= 1)
    # ...filled by the tray's answer to RESEND: 2, and 3 again (the line ahead is never taken
    # itself: only in sequence, from the tray's own lines).
    port.write(b"ROLL seq=2 t=2 dice=d6:4\n")
    assert not wait_until(lambda: len(taken) == 3, timeout=0.5)
    port.write(b"ROLL seq=3 t=3 dice=d6:5\n")
    assert wait_until(lambda: len(taken) == 3)
    link.stop()
    assert [e.message.dice[0][1] for e in taken] == [3, 4, 5]
    assert link.stats.duplicates == 2 and link.stats.rejected["unknown_type"] >= 1      # its own HELLO?/RESEND


# --- the tray as a dice source --------------------------------------------------------

def test_a_throw_is_matched_to_the_roll_awaited_by_its_dice():
    req = DiceRequest(("d10", "d6"), "Ram")
    assert match(req, (("d6", 4), ("d10", 9))) == (9, 4)
    assert match(req, (("d6", 4), ("d6", 2))) is None
    assert match(req, (("d6", 4), ("d10", 9), ("d6", 1))) is None


def test_the_session_takes_tray_throws_and_a_moved_die_asks_again(tray):
    from companion.rules.base import rule_system
    from companion.scenario import load_scenario
    from companion.scene import parse_scene
    from companion.session import GameSession
    from tests.test_shattered_highways import SCENARIOS

    emu, link, _, _ = tray
    data = load_scenario(SCENARIOS[0])
    rules = rule_system("shattered_highways")
    session = GameSession(rules, rules.new_game(data["rosters"], parse_scene(data)))
    notes = []
    source = TrayDice(link, on_voided=session.void, on_note=lambda text, ev: notes.append(text))
    session.dice = source
    assert session.act({"act": "move", "vehicle": 10, "to": [680, 430, 0]}) is None   # waiting for a d10
    emu.throw(("d6", "d6"), (3, 3))               # the wrong dice: shown, not used
    assert wait_until(lambda: notes)
    assert session.pending is not None and "matches no roll" in notes[0]
    emu.throw(("d10",), (8,))
    assert wait_until(lambda: session.pending is None and session.log)
    assert session.state.vehicles[10].pose.x_mm == 680
    assert session.log[-1].dice[0]["source"] == "tray"
    # A die nudged after it settled: the Move is taken back and the dice asked for again.
    emu._event("MOVED seq={seq} t={t}")
    assert wait_until(lambda: session.pending is not None)
    assert session.state.vehicles[10].pose.x_mm == 600 and session.log[0].undone
    emu.throw(("d10",), (2,))                      # thrown again: a 2 fails
    assert wait_until(lambda: session.pending is None and len(session.log) == 3)
    assert session.state.vehicles[10].pose.x_mm == 600 and session.log[-1].outcome["result"].startswith("failed")


def test_typed_dice_answer_the_same_way():
    from companion.rules.base import rule_system
    from companion.scenario import load_scenario
    from companion.scene import parse_scene
    from companion.session import GameSession
    from tests.test_shattered_highways import SCENARIOS
    from companion.dice import DiceError

    data = load_scenario(SCENARIOS[0])
    rules = rule_system("shattered_highways")
    typed = TypedDice()
    session = GameSession(rules, rules.new_game(data["rosters"], parse_scene(data)), typed)
    session.act({"act": "move", "vehicle": 10, "to": [680, 430, 0]})
    with pytest.raises(DiceError, match="a d10 cannot show 12"):
        typed.submit([12])
    out = typed.submit([9])
    assert out["result"] == "moved" and session.log[-1].dice[0]["source"] == "typed"


# --- the table file's [dice] and the commands ------------------------------------------



def test_dice_section():
    from tests.test_tablefile import GOOD as TABLE

    spec = parse_table(TABLE + '[dice]\nsource = "tray"\nport = "socket://tray:7000"\nbaud = 9600\n').dice
    assert (spec.source, spec.port, spec.baud) == ("tray", "socket://tray:7000", 9600)
    assert parse_table(TABLE).dice.source == "virtual"
    for text, message in (('[dice]\nsource = "tray"\n', "the tray needs its port"),
                          ('[dice]\nsource = "abacus"\n', "'abacus' is not a dice source"),
                          ('[dice]\nbaud = 12345\n', "12345 is not a serial speed"),
                          ('[dice]\nspeed = 1\n', "unknown key 'speed'")):
        with pytest.raises(TableFileError, match=message):
            parse_table(TABLE + text, "t.toml")


def test_tray_emulate_and_listen_commands():
    emu = subprocess.Popen([sys.executable, "-m", "companion", "tray", "emulate", "--every", "0.05",
                            "--faults", "noise,duplicate,lose,bad_checksum", "--seconds", "8", "--seed", "2"],
                           stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        port = emu.stdout.readline().strip()
        out = subprocess.run([sys.executable, "-m", "companion", "tray", "listen", port, "--count", "6",
                              "--seconds", "6"], capture_output=True, text=True, timeout=20)
    finally:
        emu.terminate()
        emu.wait(5)
    lines = [json.loads(line) for line in out.stdout.strip().splitlines()]
    throws, summary = lines[:-1], lines[-1]["summary"]
    assert len(throws) == 6
    seqs = [t["seq"] for t in throws]
    assert seqs == list(range(seqs[0], seqs[0] + 6))             # in order, none lost
    assert all(t["dice"][0]["die"] == "d6" and 1 <= t["dice"][0]["face"] <= 6 for t in throws)
    assert summary["rolls"] == 6 and "rejected_lines" in summary

"""Issue 24, the tray line: a throw is taken only from the tray's own sequence. A line
numbered a few past the tray's newest (a right CRC and all) is never taken over the
tray's own line with that number; two different lines with one number are reported
and neither counts; throws a power cycle wiped are reported lost, with how many.
The emulator on a real pseudo-terminal, read by the real link."""

from __future__ import annotations

import random
import time

import pytest

from companion.dice import DiceRequest
from companion.tray import TrayDice
from hardware.emulator import TrayEmulator
from hardware.link import TrayLink
from hardware.protocol import with_checksum
from tests.conftest import wait_until
from tests.test_tray_v2 import all_sent, rolls


@pytest.fixture
def tray():
    emu = TrayEmulator(seed=24).start()
    taken, statuses, disputes = [], [], []
    link = TrayLink(emu.path, on_event=taken.append, on_status=lambda s, d: statuses.append((s, d)),
                    on_dispute=disputes.append).start()
    assert wait_until(lambda: link.boot == emu.boot)
    yield emu, link, taken, statuses, disputes
    link.stop()
    emu.stop()


def test_a_forged_line_ahead_is_dropped_and_the_genuine_throw_taken(tray):
    """The review's attack: a ROLL 3 past the tray's newest with a right CRC. The tray's
    HELLO says it had not issued that number: the line is dropped, and the tray's own
    throw with that number, when it comes, is the one taken."""
    emu, link, taken, statuses, disputes = tray
    emu.throw()
    emu._write(with_checksum(f"ROLL seq={emu.seq + 3} t=1 boot={emu.boot} dice=d20:20"))
    assert wait_until(lambda: link.stats.forged == 1)
    for _ in range(5):
        emu.throw()
    assert wait_until(lambda: len(rolls(taken)) == 6)
    time.sleep(0.3)
    assert rolls(taken) == all_sent(emu)
    assert all(d != (("d20", 20),) for _, _, d in rolls(taken))
    assert link.stats.disputed == 0 and not disputes and link.stats.lost == 0


@pytest.mark.parametrize("ahead", [2, 3, 4, 5])
def test_every_forged_line_ahead_at_a_steady_pace(tray, ahead):
    """A forged line after every throw (2 to 5 ahead), the throws coming at a steady pace:
    every throw taken with the tray's dice, none of the forged ones."""
    emu, link, taken, _, _ = tray
    for _ in range(8):
        emu.throw()
        emu._write(with_checksum(f"ROLL seq={emu.seq + ahead} t=1 boot={emu.boot} dice=d20:20"))
        assert wait_until(lambda: link.stats.forged >= emu.seq)       # the tray's HELLO dropped it
    emu.throw()
    assert wait_until(lambda: len(rolls(taken)) == 9)
    assert rolls(taken) == all_sent(emu) and link.stats.disputed == 0


def test_a_forged_line_for_a_number_the_tray_issued_is_a_dispute_neither_taken(tray):
    """The tray's own lines for 1 to 3 lost on the wire; a forged 3 arrives; the tray's HELLO
    says it issued 3, and its answer to RESEND brings its own 3, which disagrees: neither
    line is taken, it is reported, and the throws after it go on."""
    emu, link, taken, statuses, disputes = tray
    emu._lose_next = 3
    for _ in range(3):
        emu.throw(("d6", "d6"), (1, 2))
    emu._write(with_checksum(f"ROLL seq=3 t=1 boot={emu.boot} dice=d6:6,d6:6"))
    assert wait_until(lambda: link.stats.disputed == 1)
    emu.throw()
    assert wait_until(lambda: link.last_taken == 4)
    assert rolls(taken) == [s for s in all_sent(emu) if s[1] != 3]
    assert [(e.seq, e.kind) for e in disputes] == [(3, "disputed")]
    assert any(s == "disputed" and "event 3 came as two different lines" in d for s, d in statuses)


def test_a_forged_next_line_used_as_a_throw_is_voided_when_the_trays_own_disagrees(tray):
    """A forged line numbered just next cannot be told from the tray's own when it arrives;
    the tray's line with that number then disagrees: the throw it gave is voided (the
    session takes the resolution back and asks again) and players are told."""
    emu, link, taken, statuses, disputes = tray
    voided, notes, got = [], [], []
    dice = TrayDice(link, on_voided=voided.append, on_note=lambda text, e: notes.append(text))
    dice.request(DiceRequest(("d6", "d6"), "Ram"), got.append)
    emu._write(with_checksum(f"ROLL seq={emu.seq + 1} t=1 boot={emu.boot} dice=d6:6,d6:6"))
    assert wait_until(lambda: len(got) == 1) and got[0].faces == (6, 6)
    emu.throw(("d6", "d6"), (1, 1))                       # the tray's own event with that number
    assert wait_until(lambda: voided == got)
    assert link.stats.disputed == 1 and [e.seq for e in disputes] == [1]
    assert any("two different lines" in n and "throw again" in n for n in notes)


def test_throws_a_power_cycle_wiped_are_reported_lost_with_how_many(tray):
    """Two throws' lines lost on the wire, a later one arrives, and the tray restarts
    before it can send them again: the two it no longer holds, and the one that came ahead
    of them (never taken from one line), are reported lost: 3, by number."""
    emu, link, taken, statuses, _ = tray
    emu.throw()
    assert wait_until(lambda: link.last_taken == 1)
    old = emu.boot
    with emu._lock:                                       # the tray answers nothing meanwhile
        emu._lose_next = 2
        emu.throw()
        emu.throw()
        emu.throw()                                       # 4 goes whole: the host sees 2 and 3 missing
        emu.fault("power_cycle")
    assert wait_until(lambda: link.boot == emu.boot)
    emu.throw()
    assert wait_until(lambda: len(rolls(taken)) == 2)
    assert link.stats.lost_reports == [(old, 2, 4)] and link.stats.lost == 3
    assert any(s == "gap" and "events 2 to 4 (3) are lost" in d and "restarted" in d for s, d in statuses)


def test_power_cycles_every_second_every_throw_taken_or_reported_lost(tray):
    """Power cycles about every second with throws between, lines lost before a tenth of
    them and forged lines after a third: every throw the host could know of is taken or
    reported lost, and none taken has dice the tray did not throw."""
    emu, link, taken, _, disputes = tray
    rng = random.Random(7)
    cycle_at = time.monotonic() + 1.0
    for _ in range(60):
        if rng.random() < 0.1:
            emu.fault("lose")
        emu.throw()
        if rng.random() < 1 / 3:
            emu.fault("forged_near")
        time.sleep(0.05)
        if time.monotonic() >= cycle_at:
            emu.fault("power_cycle")
            cycle_at = time.monotonic() + rng.uniform(0.8, 1.2)
    emu.throw()
    assert wait_until(lambda: link.boot == emu.boot and link.last_taken >= emu.seq, timeout=15)
    issued = {(r["boot"], r["seq"]): r["dice"] for r in emu.sent}
    got = {(b, s): d for b, s, d in rolls(taken)}
    assert len(got) == len(rolls(taken))                                      # none twice
    assert all(issued.get(k) == d for k, d in got.items())                    # none wrong
    reported = {(b, s) for b, first, end in link.stats.lost_reports for s in range(first, end + 1)}
    disputed = {(e.boot, e.seq) for e in disputes}
    assert not set(got) & reported
    for boot, seq in issued:
        if (boot, seq) in got or (boot, seq) in reported or (boot, seq) in disputed:
            continue
        # Only a throw whose line and every later one of its boot were lost can go unseen.
        later = [r for r in emu.sent if r["boot"] == boot and r["seq"] > seq and r["whole"]]
        said = [last for b, last in emu.hellos if b == boot and last >= seq]
        assert not later and not said, (boot, seq)
    assert emu.fault_log.count("power_cycle") >= 2

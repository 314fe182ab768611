"""Protocol version 2 of the dice tray's line (../shared/dicetray-protocol.md): a
CRC-16 on every line, events known by boot and seq, far jumps confirmed; and the
faults found in review, each switched on in the emulator on a real
pseudo-terminal and read by the real link: none becomes a wrong, repeated,
invented or lost throw."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hardware.emulator import FAULTS, TrayEmulator
from hardware.link import KEEP, TrayLink
from hardware.protocol import (DICE_SIDES, Hello, LineParser, Rejection, Roll, crc16, parse_line, with_checksum,
                               xor_check)
from tests.conftest import wait_until

# --- the checks -----------------------------------------------------------------------


def test_crc16_is_ccitt_false():
    assert crc16("123456789") == "29B1"
    assert with_checksum("HELLO?") == b"HELLO?*" + crc16("HELLO?").encode() + b"\n"
    assert with_checksum("HELLO?", 1) == b"HELLO?*" + xor_check("HELLO?").encode() + b"\n"


def test_a_version_2_event_says_its_boot():
    line = with_checksum("ROLL boot=77 seq=3 t=10 dice=d20:17,d6:1")[:-1]
    assert parse_line(line) == Roll(3, 10, (("d20", 17), ("d6", 1)), "77")


def test_the_reviews_cut_line_is_not_a_d20_showing_1():
    """'d20:17' cut short keeping its '\\n' became a 1 under version 1 (no check needed)."""
    whole = with_checksum("ROLL seq=5 t=100 boot=9 dice=d20:17")
    cut = whole[:whole.index(b"17") + 1] + b"\n"
    assert cut == b"ROLL seq=5 t=100 boot=9 dice=d20:1\n"
    for proto in (None, 2):
        out = LineParser(proto=proto).feed(cut)[0]
        assert isinstance(out, Rejection) and out.code == "unchecked" and "CRC-16" in out.reason
    # Even a table that lets a version 1 tray's unchecked lines in never takes them from version 2.
    p = LineParser(allow_unchecked=True)
    assert isinstance(p.feed(with_checksum("HELLO proto=2 tray=t fw=1 boot=9 last=4"))[0], Hello)
    assert p.feed(cut)[0].code == "unchecked"


line_bodies = st.builds(
    lambda seq, t, boot, dice: f"ROLL seq={seq} t={t} boot={boot} dice=" + ",".join(f"{d}:{f}" for d, f in dice),
    st.integers(1, 10 ** 6), st.integers(0, 10 ** 9), st.integers(1, 10 ** 9),
    st.lists(st.sampled_from(sorted(DICE_SIDES)).flatmap(lambda d: st.tuples(st.just(d), st.integers(1, DICE_SIDES[d]))),
             min_size=1, max_size=6))


@given(line_bodies, st.data())
@settings(max_examples=300)
def test_a_line_cut_anywhere_is_never_taken(body, data):
    whole = with_checksum(body)
    cut = data.draw(st.integers(1, len(whole) - 2))
    for proto in (None, 2):
        out = LineParser(proto=proto, allow_unchecked=True).feed(whole[:cut] + b"\n")
        assert len(out) == 1 and isinstance(out[0], Rejection), (whole[:cut], out)


@given(line_bodies, st.data())
@settings(max_examples=500)
def test_the_same_bit_flipped_in_two_bytes_is_caught(body, data):
    """XOR misses it (shown); the CRC-16 never does: the line is refused, or (a hex
    letter's case flipped in the check) it is the same line."""
    whole = with_checksum(body)[:-1]
    bit = 1 << data.draw(st.integers(0, 6))
    i, j = data.draw(st.lists(st.integers(0, len(whole) - 1), min_size=2, max_size=2, unique=True))
    flipped = bytearray(whole)
    flipped[i] ^= bit
    flipped[j] ^= bit
    star = whole.rindex(b"*")
    if i < star and j < star:
        assert xor_check(bytes(flipped[:star])) == xor_check(whole[:star])     # what version 1 missed
    out = LineParser(proto=2).feed(bytes(flipped) + b"\n")
    assert all(o == parse_line(whole) or isinstance(o, Rejection) for o in out), (bytes(flipped), out)


def test_a_version_1_check_is_taken_only_from_a_tray_that_said_proto_1():
    v1_roll = with_checksum("ROLL seq=1 t=1 dice=d6:4", 1)
    p = LineParser()
    assert p.feed(v1_roll)[0].code == "unchecked"                      # not heard yet: CRC only
    assert isinstance(p.feed(with_checksum("HELLO proto=1 tray=t fw=1 boot=3 last=0", 1))[0], Hello)
    assert p.feed(v1_roll) == [Roll(1, 1, (("d6", 4),))]
    assert p.feed(b"ROLL seq=2 t=1 dice=d6:4\n")[0].code == "unchecked"  # unchecked: only where allowed
    assert p.feed(with_checksum("ROLL seq=2 t=1 boot=3 dice=d6:4", 1))[0].code == "unchecked"  # v2 event, v1 check
    assert isinstance(p.feed(with_checksum("HELLO proto=2 tray=t fw=2 boot=4 last=0"))[0], Hello)
    out = p.feed(with_checksum("ROLL seq=1 t=1 dice=d6:4", 1))[0]
    assert out.code == "unchecked" and "said proto=2" in out.reason
    # A HELLO saying proto=2 needs its CRC-16 too: no downgrade from a weaker line.
    assert LineParser().feed(with_checksum("HELLO proto=2 tray=t fw=2 boot=4 last=0", 1))[0].code == "unchecked"


# --- the link against the emulator on a pseudo-terminal -------------------------------


@pytest.fixture
def tray(request):
    proto = getattr(request, "param", 2)
    emu = TrayEmulator(seed=21, proto=proto).start()
    taken, statuses = [], []
    link = TrayLink(emu.path, on_event=taken.append, on_status=lambda s, d: statuses.append((s, d))).start()
    assert wait_until(lambda: link.boot == emu.boot)
    yield emu, link, taken, statuses
    link.stop()
    emu.stop()


def rolls(taken):
    return [(e.boot, e.seq, e.message.dice) for e in taken if e.kind == "roll"]


def all_sent(emu):
    return [(r["boot"], r["seq"], r["dice"]) for r in emu.sent]


def settled(emu, link, taken, timeout=15.0):
    """Every throw the tray issued taken, and then nothing more for a moment."""
    assert wait_until(lambda: len(rolls(taken)) >= len(emu.sent), timeout), (len(rolls(taken)), len(emu.sent))
    time.sleep(0.4)
    return rolls(taken)


def test_a_far_future_seq_is_not_believed_and_nothing_is_lost_or_held_back(tray):
    """The review's line: one ROLL numbered 99,949 past the tray made the link declare
    99,949 events lost, hand on the invented throw and drop every genuine one after it."""
    emu, link, taken, statuses = tray
    for _ in range(3):
        emu.throw()
    emu._write(with_checksum(f"ROLL seq={emu.seq + 99_950} t=1 boot={emu.boot} dice=d20:20"))
    for _ in range(20):
        emu.throw()
    assert settled(emu, link, taken) == all_sent(emu)
    assert link.stats.far == 1 and link.stats.lost == 0 and not [s for s in statuses if s[0] == "gap"]
    assert link.last_taken == 23


def test_a_stray_hello_with_a_new_boot_does_not_bring_old_throws_back(tray):
    """The review's case: a HELLO naming a new boot made the link take 20 old throws again."""
    emu, link, taken, _ = tray
    for _ in range(20):
        emu.throw()
    assert wait_until(lambda: len(rolls(taken)) == 20)
    emu.fault("stray_hello_new")
    emu.throw()
    assert settled(emu, link, taken) == all_sent(emu)
    assert link.boot == emu.boot and link.stats.restarts == 0 and link.stats.stray_hellos == 1


def test_a_stray_hello_from_an_old_boot_does_not_bring_its_throws_back(tray):
    emu, link, taken, _ = tray
    for _ in range(5):
        emu.throw()
    assert wait_until(lambda: len(rolls(taken)) == 5)
    emu.fault("power_cycle")
    assert wait_until(lambda: link.boot == emu.boot)
    for _ in range(3):
        emu.throw()
    emu.fault("stray_hello_old")                     # the boot before the power cycle, its last 5
    emu.fault("stray_hello_old")
    for _ in range(3):
        emu.throw()
    assert settled(emu, link, taken) == all_sent(emu)
    assert link.boot == emu.boot and link.stats.restarts == 1


@pytest.mark.parametrize("fault", ["cut_line", "double_flip"])
def test_a_damaged_line_is_refused_and_the_throw_comes_again_whole(tray, fault):
    emu, link, taken, _ = tray
    for _ in range(10):
        emu.fault(fault)
        emu.throw(("d20", "d6"))
    assert settled(emu, link, taken) == all_sent(emu)
    assert len(emu.damaged) == 10 and link.stats.resends >= 1
    assert sum(link.stats.rejected.values()) >= 10


def test_a_gap_is_called_lost_only_when_the_tray_issued_those_events():
    """A number within reach but never issued: asked for, then the tray's HELLO shows it
    never existed; it is dropped, nothing is called lost, and later throws go on."""
    emu = TrayEmulator(seed=5).start()
    taken, statuses = [], []
    link = TrayLink(emu.path, on_event=taken.append, on_status=lambda s, d: statuses.append((s, d))).start()
    try:
        assert wait_until(lambda: link.boot == emu.boot)
        emu.throw()
        emu._write(with_checksum(f"ROLL seq={emu.seq + 3} t=1 boot={emu.boot} dice=d6:6"))
        assert wait_until(lambda: link.stats.forged == 1, timeout=15)
        emu.throw()
        emu.throw()
        assert settled(emu, link, taken) == all_sent(emu)
        assert link.stats.lost == 0 and not [s for s in statuses if s[0] == "gap"]
    finally:
        link.stop()
        emu.stop()


def test_far_is_measured_from_what_the_tray_confirmed():
    """After a long time away the tray's HELLO says how far it got: the events it still
    holds come back though they are far past the last taken."""
    emu = TrayEmulator(seed=6).start()
    taken = []
    link = TrayLink(emu.path, on_event=taken.append).start()
    try:
        assert wait_until(lambda: link.boot == emu.boot)
        emu._unplug()
        for _ in range(KEEP + 30):
            emu.throw()
        emu._plug()
        assert wait_until(lambda: link.stats.lost == 30, timeout=15)
        # The lines held after the gap are not taken themselves: asked for again, in sequence.
        assert wait_until(lambda: len(rolls(taken)) == KEEP, timeout=10)
        assert rolls(taken) == all_sent(emu)[30:]
    finally:
        link.stop()
        emu.stop()


@pytest.mark.parametrize("tray", [1], indirect=True)
def test_a_version_1_tray_is_still_read_with_its_faults(tray):
    emu, link, taken, _ = tray
    assert link.proto == 1
    for fault in FAULTS:
        if fault in ("double_flip", "forged_near"):
            continue          # version 1's XOR misses a double flip by design; forged_near: test_tray_sequence.py
        emu.throw()
        if fault == "power_cycle":
            assert wait_until(lambda: len(rolls(taken)) == len(emu.sent))
        emu.fault(fault, 0.3)
        emu.throw(("d20",))
    assert settled(emu, link, taken) == all_sent(emu)
    assert link.stats.lost == 0


@pytest.mark.parametrize("tray", [1], indirect=True)
def test_a_version_1_tray_and_a_stray_hello(tray):
    """Version 1 events do not say their boot; while a HELLO changing the boot is being
    confirmed they wait, and then belong to the boot the tray confirms."""
    emu, link, taken, _ = tray
    for _ in range(20):
        emu.throw()
    assert wait_until(lambda: len(rolls(taken)) == 20)
    emu.fault("stray_hello_new")
    for _ in range(5):
        emu.throw()
    assert settled(emu, link, taken) == all_sent(emu)


# forged_near is left out here: back to back, its line can meet the tray's own with that
# number, and both are then refused as a dispute (tests/test_tray_sequence.py).
@given(st.lists(st.sampled_from(tuple(f for f in FAULTS if f != "forged_near") + ("throw",) * 4),
                min_size=5, max_size=25))
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_any_mix_of_faults_gives_every_throw_once_in_order(actions):
    emu = TrayEmulator(seed=len(actions)).start()
    taken = []
    link = TrayLink(emu.path, on_event=taken.append).start()
    try:
        assert wait_until(lambda: link.boot == emu.boot)
        for action in actions:
            if action == "throw":
                emu.throw(("d6", "d20"))
            else:
                if action == "power_cycle":
                    # Switched off idle: a power cycle wipes the tray's memory, so what it has
                    # not yet delivered would be its own loss, not the link's.
                    # A lost or damaged line is noticed by a whole one after it.
                    while emu._lose_next or emu._damage_next:
                        emu.throw()
                    emu.throw()
                    assert wait_until(lambda: len(rolls(taken)) == len(emu.sent))
                emu.fault(action, 0.2)
        emu.throw()                                    # a damaged or lost last line is noticed by the next
        assert settled(emu, link, taken, timeout=20) == all_sent(emu)
        assert link.stats.lost == 0
    finally:
        link.stop()
        emu.stop()


# --- the command ------------------------------------------------------------------------


def test_tray_emulate_takes_the_new_faults_and_listen_gets_every_throw():
    emu = subprocess.Popen([sys.executable, "-m", "companion", "tray", "emulate", "--every", "0.05",
                            "--faults", "forged_far,stray_hello_new,cut_line,double_flip,stray_hello_old",
                            "--seconds", "10", "--seed", "3"],
                           stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        port = emu.stdout.readline().strip()
        out = subprocess.run([sys.executable, "-m", "companion", "tray", "listen", port, "--count", "8",
                              "--seconds", "8"], capture_output=True, text=True, timeout=30)
    finally:
        emu.terminate()
        emu.wait(5)
    lines = [json.loads(line) for line in out.stdout.strip().splitlines()]
    throws, summary = lines[:-1], lines[-1]["summary"]
    seqs = [t["seq"] for t in throws]
    assert len(throws) == 8 and seqs == list(range(seqs[0], seqs[0] + 8)), out
    assert len({t["boot"] for t in throws}) == 1 and summary["lost"] == 0


def test_tray_emulate_names_an_unknown_fault():
    out = subprocess.run([sys.executable, "-m", "companion", "tray", "emulate", "--faults", "gremlins",
                          "--seconds", "1"], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert out.returncode != 0 and "unknown fault 'gremlins'" in out.stderr and "Traceback" not in out.stderr


def test_a_stray_hello_claiming_more_than_the_tray_issued_is_outlived(tray):
    """A HELLO of this boot with a `last` the tray never reached: asked for, then the
    tray's own answer is believed; nothing is lost, and later throws and far lines
    are judged as before."""
    emu, link, taken, statuses = tray
    emu.throw()
    emu._write(emu._hello_line(emu.boot, emu.seq + 40))
    assert wait_until(lambda: link.boots[emu.boot].hello_last == emu.seq + 40)
    assert wait_until(lambda: link.boots[emu.boot].hello_last == emu.seq, timeout=15)
    emu._write(with_checksum(f"ROLL seq={emu.seq + 70} t=1 boot={emu.boot} dice=d20:20"))
    emu.throw()
    assert settled(emu, link, taken) == all_sent(emu)
    assert link.stats.lost == 0 and link.stats.far == 1 and not [s for s in statuses if s[0] == "gap"]


def test_a_line_of_an_earlier_boot_is_judged_under_that_boot(tray):
    """After a power cycle, lines naming the boot before it (an old line replayed, a
    forged one) are never taken as new throws, whatever their number."""
    emu, link, taken, _ = tray
    for _ in range(4):
        emu.throw()
    assert wait_until(lambda: len(rolls(taken)) == 4)
    old_boot, old_lines = emu.boot, [line for _, line in emu.events]
    emu.fault("power_cycle")
    assert wait_until(lambda: link.boot == emu.boot)
    emu.throw()
    for line in old_lines:                                                  # replayed: duplicates
        emu._write(line)
    emu._write(with_checksum(f"ROLL seq=5 t=1 boot={old_boot} dice=d6:6"))   # never issued in that boot
    emu.throw()
    assert settled(emu, link, taken) == all_sent(emu)
    assert link.stats.stale == 1 and link.stats.duplicates >= 4

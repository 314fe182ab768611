"""`companion tray emulate|listen|monitor`: the dice tray, for players and tray builders."""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
import time


def register(sub) -> None:
    p = sub.add_parser("tray", help="the electronic dice tray: emulate one, listen to one, monitor its line",
                       description="The dice tray's protocol: docs/dicetray.md.")
    kinds = p.add_subparsers(dest="tray_command", metavar="WHAT", required=True)

    e = kinds.add_parser("emulate", help="play a dice tray on a pseudo-terminal (prints its port)",
                         description="Prints the port's path, then throws dice on a timer (--every) and "
                                     "reads commands on standard input: 'throw [2d6]', 'fault NAME' "
                                     "(one of the faults below), 'quit'.")
    e.add_argument("--path", help="the port's path (a symlink to the pty; default: a new temporary one)")
    e.add_argument("--every", type=float, default=0.0, help="throw every S seconds (0: only when asked)")
    e.add_argument("--dice", default="2d6", help="what a timed throw holds (default 2d6)")
    from hardware.emulator import FAULTS
    e.add_argument("--faults", default="", help="faults to mix into timed throws, comma-separated, of: "
                                                + ", ".join(FAULTS))
    e.add_argument("--proto", type=int, default=2, choices=(1, 2),
                   help="the protocol version to speak (default 2: a CRC-16 on every line, the boot on "
                        "every event; 1: an XOR check, as older trays)")
    e.add_argument("--seconds", type=float, default=0.0, help="stop after S seconds (0: at 'quit' or end of input)")
    e.add_argument("--seed", type=int, help="seed for the dice")
    e.set_defaults(func=cmd_emulate)

    for name, helptext in (("listen", "print each throw taken as a JSON line, and a summary"),
                           ("monitor", "a live, readable view of the line and its counters")):
        q = kinds.add_parser(name, help=helptext)
        q.add_argument("port", metavar="PORT", help="a device path or pyserial URL (socket://, rfc2217://, loop://)")
        q.add_argument("--baud", type=int, default=115200)
        q.add_argument("--seconds", type=float, default=0.0, help="stop after S seconds")
        q.add_argument("--unchecked", action="store_true",
                       help="take a version 1 tray's lines that carry no check (typed at a terminal); "
                            "never a version 2 tray's")
        if name == "listen":
            q.add_argument("--count", type=int, default=0, help="stop after N throws")
        q.set_defaults(func=cmd_listen if name == "listen" else cmd_monitor)


def parse_dice(text: str) -> tuple[str, ...]:
    """'2d6,d20' -> ('d6', 'd6', 'd20')."""
    out: list[str] = []
    for part in text.split(","):
        m = re.fullmatch(r"(\d*)(d\d+)", part.strip())
        if not m:
            raise ValueError(f"'{part}' is not dice (2d6, d20, ...)")
        out += [m.group(2)] * int(m.group(1) or 1)
    return tuple(out)


def cmd_emulate(args: argparse.Namespace) -> int:
    from hardware.emulator import FAULTS, TrayEmulator

    from . import CommandError

    try:
        dice = parse_dice(args.dice)
        faults = [f for f in args.faults.split(",") if f]
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    for f in faults:
        if f not in FAULTS:
            raise CommandError(f"unknown fault '{f}' (one of {', '.join(FAULTS)})")
    emu = TrayEmulator(args.path, seed=args.seed, proto=args.proto).start()
    print(emu.path, flush=True)
    stop = threading.Event()

    def timed() -> None:
        k = 0
        while not stop.wait(args.every):
            if faults:
                emu.fault(faults[k % len(faults)])
                k += 1
            emu.throw(dice)

    if args.every > 0:
        threading.Thread(target=timed, daemon=True).start()
    start = time.monotonic()
    try:
        if args.seconds > 0 and (sys.stdin is None or sys.stdin.isatty() is False and args.every > 0):
            stop.wait(args.seconds)
        else:
            for line in sys.stdin:
                words = line.split()
                if not words:
                    continue
                if words[0] == "quit":
                    break
                try:
                    if words[0] == "throw":
                        print(f"threw seq={emu.throw(parse_dice(words[1]) if len(words) > 1 else dice)}", flush=True)
                    elif words[0] == "fault" and len(words) > 1:
                        emu.fault(words[1])
                        print(f"fault {words[1]}", flush=True)
                    else:
                        print("commands: throw [2d6], fault NAME, quit", flush=True)
                except ValueError as exc:
                    print(f"error: {exc}", flush=True)
                if args.seconds and time.monotonic() - start > args.seconds:
                    break
            else:
                if args.every > 0 and args.seconds > 0:
                    stop.wait(max(args.seconds - (time.monotonic() - start), 0))
    except KeyboardInterrupt:
        pass
    stop.set()
    emu.stop()
    return 0


def cmd_listen(args: argparse.Namespace) -> int:
    from hardware.link import TrayLink

    done = threading.Event()
    taken = [0]
    voided: list[int] = []

    def on_event(event) -> None:
        if done.is_set():
            return                                # the count is reached: no more lines
        if event.kind == "roll":
            print(json.dumps(event.to_json()), flush=True)
            taken[0] += 1
            if args.count and taken[0] >= args.count:
                done.set()
        elif event.kind == "moved":
            voided.append(event.seq - 1)

    link = TrayLink(args.port, args.baud, on_event=on_event, allow_unchecked=args.unchecked,
                    on_status=lambda s, d: print(f"tray: {s}: {d}", file=sys.stderr, flush=True)).start()
    try:
        done.wait(args.seconds if args.seconds > 0 else None)
    except KeyboardInterrupt:
        pass
    link.stop()
    summary = link.stats.to_json()
    summary["rolls"] = taken[0]            # the throws printed above (the link may have taken one more)
    summary["voided"] = voided
    print(json.dumps({"summary": summary}), flush=True)
    return 0


def cmd_monitor(args: argparse.Namespace) -> int:
    from hardware.link import TrayLink
    from hardware.protocol import Rejection

    def on_line(raw: bytes, item) -> None:
        if isinstance(item, Rejection):
            print(f"  rejected  {item.reason}: {item.line[:60]!r}", flush=True)
        else:
            print(f"  line      {say_message(item)}", flush=True)

    def on_event(event) -> None:
        print(f"  taken     {say_message(event.message)} (boot {event.boot})", flush=True)

    link = TrayLink(args.port, args.baud, on_event=on_event, on_line=on_line, allow_unchecked=args.unchecked,
                    on_status=lambda s, d: print(f"[{s}] {d}", flush=True)).start()
    start = time.monotonic()
    try:
        while args.seconds <= 0 or time.monotonic() - start < args.seconds:
            time.sleep(min(2.0, args.seconds or 2.0))
            s = link.stats
            print(f"tray {link.tray or '?'} boot {link.boot or '?'} last {link.last_taken}: {s.lines} lines, "
                  f"{s.rolls} rolls, {sum(s.rejected.values())} rejected{_reasons(s.rejected)}, "
                  f"{s.duplicates} duplicates, {s.resends} resends, {s.reopens} reopens", flush=True)
    except KeyboardInterrupt:
        pass
    link.stop()
    return 0


def say_message(item) -> str:
    """A tray's line in plain words, for people watching the monitor (never a Python repr)."""
    from hardware.protocol import Batt, Crooked, Hello, Moved, Reply, Roll

    if isinstance(item, Hello):
        return (f"HELLO from tray '{item.tray}' (firmware {item.fw}, protocol {item.proto}), boot {item.boot}, "
                f"last event {item.last}")
    if isinstance(item, Roll):
        return f"throw {item.seq}: " + ", ".join(f"{face} on a {die}" for die, face in item.dice)
    if isinstance(item, Crooked):
        return f"event {item.seq}: die {item.die} is crooked (throw it again)"
    if isinstance(item, Moved):
        return f"event {item.seq}: a die was moved after it settled (the throw is taken back)"
    if isinstance(item, Batt):
        return f"battery {item.pct} %" + (", charging" if item.charging else "")
    if isinstance(item, Reply):
        return f"{item.cmd}: " + ("done" if item.ok else f"refused ({item.code or 'no reason given'})")
    return type(item).__name__


def _reasons(rejected) -> str:
    """Rejected lines by reason, in words: " (2 checksum, 1 noise)", or nothing."""
    return f" ({', '.join(f'{n} {why}' for why, n in sorted(rejected.items()))})" if rejected else ""

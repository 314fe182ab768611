"""The command line's rough edges (issue 19): a port already taken ends `serve` and `demo`
with one line naming it and what to do, never a traceback; `tray monitor` says a tray's
lines in plain words, never Python objects; `scenario run --check` says it passed."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from pathlib import Path

from hardware.emulator import TrayEmulator

REPO = Path(__file__).resolve().parents[1]


def companion(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "companion", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def test_a_port_already_taken_is_said_in_one_line_with_what_to_do():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        for args in (("serve", "--source", "demo", "--table", "vision/data/demo_table.toml", "--port", port),
                     ("demo", "--no-game", "--port", port)):
            done = companion(*args)
            assert done.returncode != 0, args
            assert "Traceback" not in done.stderr
            lines = [line for line in done.stderr.splitlines() if line.startswith("companion:")]
            assert lines == [f"companion: error: port {port} on 127.0.0.1 is already in use (another companion "
                             f"or program listens there); stop that program, or choose another port with "
                             f"--port N (--port 0 picks a free one)"], done.stderr


def test_tray_monitor_says_the_trays_lines_in_words():
    emu = TrayEmulator(tray="monitor-test", seed=5).start()
    try:
        mon = subprocess.Popen([sys.executable, "-m", "companion", "tray", "monitor", emu.path, "--seconds", "10"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO)
        # Throw once the monitor has heard the tray (its HELLO comes first), however long it took to start.
        before = []
        for line in mon.stdout:
            before.append(line)
            if "HELLO from" in line:
                break
        emu.throw(("d6", "d8"), (4, 7))
        out, err = mon.communicate(timeout=60)
        out = "".join(before) + out
    finally:
        emu.stop()
    assert mon.returncode == 0, err
    assert "HELLO from tray 'monitor-test' (firmware" in out, out
    assert re.search(r"taken     throw \d+: 4 on a d6, 7 on a d8 \(boot \w+\)", out), out
    # No Python object's repr: no ClassName(field=...), no dict braces.
    assert not re.search(r"\b(Hello|Roll|Reply|Batt|Moved|Crooked)\(", out) and "{'" not in out, out


def test_scenario_run_check_says_it_passed():
    done = companion("scenario", "run", "examples/scenarios/01-move.json", "--check")
    assert done.returncode == 0, done.stderr
    assert re.search(r"passed: (\d+) of \1 expectations held", done.stdout + done.stderr), done.stdout[-500:]


def test_no_help_text_cites_a_file_users_do_not_have():
    """DESIGN.md is the developers' (outside the repository): help says what it means instead."""
    import argparse

    from companion.cli import build_parser

    def helps(parser: argparse.ArgumentParser):
        yield parser.format_help()
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    yield from helps(sub)

    texts = list(helps(build_parser()))
    assert len(texts) > 15
    assert not [t.splitlines()[0] for t in texts if "DESIGN.md" in t]

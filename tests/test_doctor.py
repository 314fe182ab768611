"""`companion doctor`: each check said as OK, WARN or FAIL with what to fix, on the demo,
on a rendered frame against a table file with a moved anchor, without a camera, and with
a dice tray that is there (the emulator on a real pseudo-terminal) or is not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from companion.cli import main
from hardware.emulator import TrayEmulator

REPO = Path(__file__).resolve().parents[1]
DEMO_TABLE = REPO / "vision" / "data" / "demo_table.toml"
LINE = re.compile(r"^(OK|WARN|FAIL)\s+([^:]+): (.+)$")


def doctor(capsys, *argv: str) -> tuple[int, dict[str, list[tuple[str, str]]], str]:
    """The exit status, each check's (status, what it said) by what it checks, and the output."""
    code = main(["doctor", *argv])
    out = capsys.readouterr().out
    checks: dict[str, list[tuple[str, str]]] = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            checks.setdefault(m.group(2), []).append((m.group(1), m.group(3)))
    return code, checks, out


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """A frame of the demo table as its webcam sees it, with that camera's file."""
    folder = tmp_path_factory.mktemp("doctor")
    image, camera = folder / "table.png", folder / "webcam.yml"
    assert main(["render", str(image), "--camera-out", str(camera)]) == 0
    return image, camera


def test_the_demo_passes_every_check(capsys):
    code, checks, out = doctor(capsys, "--source", "demo", "--frames", "4")
    assert code == 0, out
    for what in ("table file", "camera", "camera file", "anchors", "setup", "marker size and sharpness", "dice"):
        assert checks.get(what) and all(s == "OK" for s, _ in checks[what]), (what, out)
    cars = {w: v for w, v in checks.items() if w.startswith("car ")}
    assert set(cars) == {"car 10 (Interceptor)", "car 11 (Rust Bucket)", "car 12 (War Rig)", "car 13 (Buggy)",
                         "car 14 (Hearse)"}
    assert all(v[0][0] == "OK" and v[0][1].startswith("seen at (") for v in cars.values())
    assert checks["anchors"][0][1] == "6 of 6 seen"
    assert out.rstrip().endswith("doctor: nothing failed")


def test_a_camera_that_is_not_there_fails_with_the_reason_and_what_to_do(capsys):
    code, checks, out = doctor(capsys, "--source", "57", "--table", str(DEMO_TABLE))
    assert code == 1
    (status, said), = checks["camera"]
    assert status == "FAIL" and said.startswith("camera 57: cannot be opened")
    assert "fix: plug the camera in" in out and "--source 58" in out
    assert "anchors" not in checks                  # nothing to look at: not judged
    assert checks["dice"][0][0] == "OK"             # the dice are still checked
    assert "Traceback" not in out


def test_a_table_file_with_a_moved_anchor_warns_naming_it(capsys, rendered, tmp_path):
    image, camera = rendered
    text = DEMO_TABLE.read_text(encoding="utf-8")
    moved = text.replace("id = 1\nx_mm = 1169.2\n", "id = 1\nx_mm = 1139.2\n", 1)
    assert moved != text
    table = tmp_path / "moved.toml"
    table.write_text(moved, encoding="utf-8")
    code, checks, out = doctor(capsys, "--source", str(image), "--table", str(table), "--camera", str(camera))
    assert code == 0, out                           # a warning, not a failure: the table is still found
    (status, said), = checks["setup"]
    assert status == "WARN" and said.startswith("anchor 1 is seen 30 mm from where the table file puts it"), out
    # The same frame against the right file: no warning.
    code, checks, out = doctor(capsys, "--source", str(image), "--table", str(DEMO_TABLE), "--camera", str(camera))
    assert code == 0 and [s for s, _ in checks["setup"]] == ["OK"], out


def test_a_serial_port_that_does_not_exist_fails_naming_it(capsys, tmp_path):
    port = str(tmp_path / "ttyACM9")
    code, checks, out = doctor(capsys, "--source", "demo", "--frames", "1", "--dice", port)
    assert code == 1
    (status, said), = checks["dice tray"]
    assert status == "FAIL" and said.startswith(f"{port} does not open"), out
    assert "fix: plug the tray in" in out


def test_a_tray_on_its_port_says_hello(capsys):
    emu = TrayEmulator(tray="doctor-test", seed=2).start()
    try:
        code, checks, out = doctor(capsys, "--source", "demo", "--frames", "1", "--dice", emu.path,
                                   "--hello-seconds", "20")
    finally:
        emu.stop()
    assert code == 0, out
    (status, said), = checks["dice tray"]
    assert status == "OK" and said == f"{emu.path}: HELLO from 'doctor-test' (protocol 2)", out


def test_a_port_that_opens_but_never_says_hello_fails(capsys):
    """loop:// opens and echoes what is sent (a HELLO? back, never a tray's HELLO)."""
    code, checks, out = doctor(capsys, "--source", "demo", "--frames", "1", "--dice", "loop://",
                               "--hello-seconds", "0.5")
    assert code == 1
    (status, said), = checks["dice tray"]
    assert status == "FAIL" and said == "loop:// opens but no HELLO came in 0.5 s", out


def test_a_table_file_that_does_not_parse_fails_and_stops_there(capsys, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[table]\nwidth_mm = 'wide'\n", encoding="utf-8")
    code, checks, out = doctor(capsys, "--source", "demo", "--table", str(bad))
    assert code == 1
    (status, said), = checks["table file"]
    assert status == "FAIL" and str(bad) in said
    assert set(checks) == {"table file"}

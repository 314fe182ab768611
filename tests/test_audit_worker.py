"""The audit's worker process ends with its server: a server killed outright (a crash, a
pulled plug, `kill -9`) never shuts its pool down, and its worker was left running, one more
for every restart (found after a kill soak: four orphans, one at a full core)."""

import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from tests.conftest import wait_until

ROOT = Path(__file__).resolve().parents[1]


def test_a_killed_servers_audit_worker_ends_too(tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--port", "0", "--game",
                             str(tmp_path / "game.db")], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        url = re.search(r"(http://127\.0\.0\.1:\d+/)", proc.stdout.readline()).group(1)
        assert urllib.request.urlopen(url + "audit", timeout=120).status == 200     # the worker starts
        kids = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        assert kids, "the audit page was made without a worker process"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    assert wait_until(lambda: not any(Path(f"/proc/{k}").exists() for k in kids), timeout=30), kids

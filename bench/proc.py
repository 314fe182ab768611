"""What the benches share about the servers they start."""

from __future__ import annotations

import subprocess


def stop_server(proc: subprocess.Popen) -> None:
    """Stop a server the bench started: asked to end, then killed if it will not."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)

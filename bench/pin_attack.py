"""The right player joins while the table PIN is guessed (issue 24).

    python -m bench.pin_attack [--guessers 6] [--seconds 60] [--join-every 3]

Starts `companion demo --scripted --lan --pin ...` as a host does (waitress, the demo's
game), then from this process, over loopback:

- `--guessers` addresses (127.0.0.2, 127.0.0.3, ...: as many devices on a LAN) guess the
  PIN as fast as the server answers, each guess from a fresh session (a new page token, as a
  script would), honouring nothing: a refused guess (429) is simply tried again;
- every `--join-every` seconds the right player opens the page from a new address that is
  not guessing (127.0.1.N) and joins as the page lets them: the PIN first; if the companion
  says no PIN is tried now, the join code the host's screen shows (read here from the host's
  own page, 127.0.0.1, as a player reads it off the screen).

Prints PIN guesses actually tried (answered "not the table's PIN") per second overall,
guesses refused unread (429), and the right player's joins: how many got in, how (PIN or
join code), and the time from opening the page to being in (median, max). JSON on stdout,
a markdown table on stderr.
"""

from __future__ import annotations

import argparse
import http.client
import json
import re
import subprocess
import sys
import threading
import time

import numpy as np
from bench.proc import stop_server

PIN = "482913"
TIMEOUT_S = 10.0


class Client:
    """One browser: a keep-alive connection from one source address, with its cookie."""

    def __init__(self, port: int, source: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_S, source_address=(source, 0))
        self.cookie = ""
        self.token = ""

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        headers = {"Host": "127.0.0.1", "Cookie": self.cookie}
        data = None
        if body is not None:
            data = json.dumps(body)
            headers.update({"Content-Type": "application/json", "X-CSRF-Token": self.token})
        self.conn.request(method, path, body=data, headers=headers)
        r = self.conn.getresponse()
        got = r.read()
        cookie = r.getheader("Set-Cookie")
        if cookie:
            self.cookie = cookie.split(";", 1)[0]
        return r.status, (json.loads(got) if got else {})

    def open_page(self) -> None:
        self.token = self.call("GET", "/api/session")[1]["csrf"]

    def close(self) -> None:
        self.conn.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--guessers", type=int, default=6)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--join-every", type=float, default=3.0)
    args = ap.parse_args(argv)

    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--scripted", "--lan", "--pin", PIN,
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = None
        while port is None:
            line = proc.stdout.readline()
            if not line:
                raise SystemExit("the companion did not start")
            m = re.search(r"http://[^/\s]+:(\d+)/", line)
            port = int(m.group(1)) if m else None
        threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()   # keep its pipe drained
        host = Client(port, "127.0.0.1")
        host.open_page()

        lock = threading.Lock()
        counts = {"tried": 0, "refused": 0, "errors": 0, "got_in": 0}
        stop = time.monotonic() + args.seconds

        def guess(k: int) -> None:
            rng = np.random.default_rng(k)
            c = Client(port, f"127.0.0.{2 + k}")
            while time.monotonic() < stop:
                try:
                    c.open_page()
                    status, body = c.call("POST", "/api/login", {"pin": f"{int(rng.integers(10 ** 6)):06d}"})
                except (OSError, http.client.HTTPException, ValueError):
                    c.close()
                    c = Client(port, f"127.0.0.{2 + k}")
                    with lock:
                        counts["errors"] += 1
                    continue
                with lock:
                    if status == 403:
                        counts["tried"] += 1
                    elif status == 429:
                        counts["refused"] += 1
                    elif status == 200:
                        counts["got_in"] += 1           # a lucky guess (1 in a million a try)
                    else:
                        counts["errors"] += 1
            c.close()

        threads = [threading.Thread(target=guess, args=(k,), daemon=True) for k in range(args.guessers)]
        started = time.monotonic()
        for t in threads:
            t.start()
        joins: list[dict] = []
        n = 0
        time.sleep(min(5.0, args.seconds / 4))           # let the siege begin
        while time.monotonic() < stop - 1:
            n += 1
            t0 = time.monotonic()
            player = Client(port, f"127.0.1.{n % 250 + 1}")
            how, ok = "PIN", False
            try:
                player.open_page()
                status, body = player.call("POST", "/api/login", {"pin": PIN})
                if status == 429 and body.get("code_needed"):
                    how = "join code"
                    code = host.call("GET", "/api/seats")[1]["join_code"]
                    status, body = player.call("POST", "/api/login", {"code": code})
                ok = status == 200 and player.call("GET", "/api/session")[1]["can_change"]
            except (OSError, http.client.HTTPException, ValueError) as exc:
                how = f"failed: {exc}"
            joins.append({"ok": bool(ok), "how": how, "ms": (time.monotonic() - t0) * 1000})
            player.close()
            time.sleep(max(0.0, args.join_every - (time.monotonic() - t0)))
        for t in threads:
            t.join(TIMEOUT_S * 2)
        elapsed = time.monotonic() - started
    finally:
        stop_server(proc)

    ms = np.array([j["ms"] for j in joins if j["ok"]]) if joins else np.array([])
    out = {"guessers": args.guessers, "seconds": round(elapsed, 1),
           "pins_tried": counts["tried"], "pins_tried_per_s": round(counts["tried"] / elapsed, 3),
           "guesses_refused_unread": counts["refused"], "guesses_refused_per_s": round(counts["refused"] / elapsed, 1),
           "guessers_in": counts["got_in"], "errors": counts["errors"],
           "joins": len(joins), "joined": int(sum(j["ok"] for j in joins)),
           "joined_by": {h: sum(1 for j in joins if j["how"] == h) for h in sorted({j["how"] for j in joins})},
           "join_ms_median": round(float(np.median(ms)), 1) if ms.size else None,
           "join_ms_max": round(float(ms.max()), 1) if ms.size else None}
    print(json.dumps(out))
    print("| guessers | seconds | PINs tried (/s) | guesses refused (/s) | right player: joined | by | join median / max |\n"
          "|---|---|---|---|---|---|---|\n"
          f"| {out['guessers']} | {out['seconds']} | {out['pins_tried']} ({out['pins_tried_per_s']}) | "
          f"{out['guesses_refused_unread']} ({out['guesses_refused_per_s']}) | {out['joined']}/{out['joins']} | "
          f"{', '.join(f'{h} {k}' for h, k in out['joined_by'].items())} | "
          f"{out['join_ms_median']} / {out['join_ms_max']} ms |", file=sys.stderr)
    return 0 if out["joined"] == out["joins"] and out["guessers_in"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""Streams and pollers against a real `companion demo` (issue 18): can open event
streams starve the API?

    python -m bench.streams [--streams 200] [--pollers 50] [--seconds 60] [--addresses 50]

Starts `companion demo --scripted` as a player does (waitress, the synthetic camera at
15 frames a second, the demo's game), then from this process, over loopback:

- `--streams` clients ask for `/api/stream`, spread over `--addresses` loopback source
  addresses (127.0.0.2, 127.0.0.3, ...: as many devices on a LAN). A stream taken is read
  to its end; a refused one (429/503) does what the page does: polls `/api/state` each
  second and asks for a stream again after the answer's Retry-After;
- `--pollers` clients poll `/api/state` and `/api/game` in turn every 0.5 s, each on its
  own keep-alive connection, from 127.0.0.1;
- one player sends a POST (`/api/undo`, with the page's token) every 2 s.

Prints the API's latency (pollers, refused streams' polls, the player's POSTs: median, p95,
max), requests that timed out (5 s) or failed, streams taken and refused, events the
streams received, and the server's resident memory (VmRSS) at the start, every 10 s,
and at the end. JSON on stdout, a markdown table on stderr.
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

TIMEOUT_S = 5.0


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency_ms: dict[str, list[float]] = {"poll": [], "fallback poll": [], "player POST": []}
        self.timeouts: dict[str, int] = {k: 0 for k in self.latency_ms}
        self.failures: dict[str, int] = {k: 0 for k in self.latency_ms}
        self.statuses: dict[str, dict[int, int]] = {k: {} for k in self.latency_ms}
        self.streams_taken = 0
        self.streams_refused: dict[int, int] = {}
        self.stream_events = 0
        self.stream_errors = 0

    def add(self, kind: str, ms: float, status: int) -> None:
        with self.lock:
            self.latency_ms[kind].append(ms)
            self.statuses[kind][status] = self.statuses[kind].get(status, 0) + 1

    def failed(self, kind: str, exc: Exception) -> None:
        with self.lock:
            if isinstance(exc, TimeoutError):
                self.timeouts[kind] += 1
            else:
                self.failures[kind] += 1


def timed_get(conn_box: list, port: int, source: str, path: str, stats: Stats, kind: str,
              headers: dict | None = None, method: str = "GET") -> http.client.HTTPResponse | None:
    """One request on a kept-alive connection (made again after a failure)."""
    t0 = time.monotonic()
    try:
        if conn_box[0] is None:
            conn_box[0] = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_S, source_address=(source, 0))
        conn = conn_box[0]
        conn.request(method, path, body=b"{}" if method == "POST" else None, headers=headers or {})
        r = conn.getresponse()
        data = r.read()
        stats.add(kind, (time.monotonic() - t0) * 1000, r.status)
        if r.status == 200 and kind != "player POST":
            json.loads(data)
        return r
    except (OSError, http.client.HTTPException) as exc:
        stats.failed(kind, exc)
        if conn_box[0] is not None:
            conn_box[0].close()
        conn_box[0] = None
        return None


def poller(port: int, stop: threading.Event, stats: Stats, offset_s: float) -> None:
    box = [None]
    time.sleep(offset_s)
    paths = ["/api/state", "/api/game"]
    k = 0
    while not stop.is_set():
        t0 = time.monotonic()
        timed_get(box, port, "127.0.0.1", paths[k % 2], stats, "poll")
        k += 1
        stop.wait(max(0.0, 0.5 - (time.monotonic() - t0)))
    if box[0] is not None:
        box[0].close()


def player(port: int, stop: threading.Event, stats: Stats) -> None:
    box = [None]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_S)
    conn.request("GET", "/api/session")
    r = conn.getresponse()
    token = json.loads(r.read())["csrf"]
    cookie = r.getheader("Set-Cookie").split(";")[0]
    conn.close()
    headers = {"X-CSRF-Token": token, "Cookie": cookie, "Content-Type": "application/json"}
    while not stop.is_set():
        timed_get(box, port, "127.0.0.1", "/api/undo", stats, "player POST", headers, "POST")
        stop.wait(2.0)


def streamer(port: int, source: str, stop: threading.Event, stats: Stats, offset_s: float) -> None:
    time.sleep(offset_s)
    poll_box = [None]
    while not stop.is_set():
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT_S * 2, source_address=(source, 0))
        try:
            conn.request("GET", "/api/stream")
            r = conn.getresponse()
            if r.status == 200:
                with stats.lock:
                    stats.streams_taken += 1
                while not stop.is_set():           # a line at least every 5 s (keep-alive)
                    line = r.readline()
                    if not line:
                        break                           # the stream's lifetime ended: ask again
                    if line.startswith(b"data: "):
                        with stats.lock:
                            stats.stream_events += 1
                continue
            r.read()
            wait_s = float(r.getheader("Retry-After") or 20)
            with stats.lock:
                stats.streams_refused[r.status] = stats.streams_refused.get(r.status, 0) + 1
        except (OSError, http.client.HTTPException):
            with stats.lock:
                stats.stream_errors += 1
            wait_s = 1.0
        finally:
            conn.close()
        # Refused: poll each second, as the page does, until it may ask again.
        until = time.monotonic() + wait_s
        while not stop.is_set() and time.monotonic() < until:
            t0 = time.monotonic()
            timed_get(poll_box, port, source, "/api/state", stats, "fallback poll")
            stop.wait(max(0.0, 1.0 - (time.monotonic() - t0)))
    if poll_box[0] is not None:
        poll_box[0].close()


def summary(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    a = np.asarray(values)
    return {"n": int(a.size), "median_ms": round(float(np.median(a)), 1),
            "p95_ms": round(float(np.percentile(a, 95)), 1), "max_ms": round(float(a.max()), 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--streams", type=int, default=200)
    ap.add_argument("--pollers", type=int, default=50)
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--addresses", type=int, default=50, help="loopback source addresses the streams come from")
    args = ap.parse_args()

    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--scripted", "--port", "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not match:
            raise SystemExit(f"the demo printed no address: {line!r}")
        port = int(match.group(1))
        threading.Thread(target=proc.stdout.read, daemon=True).start()
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        time.sleep(3.0)                                    # the demo's game starts, its first frames
        rss = [(0.0, rss_mib(proc.pid))]
        stats, stop = Stats(), threading.Event()
        threads = [threading.Thread(target=poller, args=(port, stop, stats, 0.5 * i / max(1, args.pollers)))
                   for i in range(args.pollers)]
        threads += [threading.Thread(target=streamer, args=(port, f"127.0.0.{2 + i % args.addresses}", stop, stats,
                                                            2.0 * i / max(1, args.streams)))
                    for i in range(args.streams)]
        threads.append(threading.Thread(target=player, args=(port, stop, stats)))
        t0 = time.monotonic()
        for t in threads:
            t.daemon = True
            t.start()
        while time.monotonic() - t0 < args.seconds:
            time.sleep(min(10.0, args.seconds - (time.monotonic() - t0)))
            rss.append((round(time.monotonic() - t0, 1), rss_mib(proc.pid)))
        stop.set()
        for t in threads:
            t.join(15)
        alive = proc.poll() is None
    finally:
        stop_server(proc)

    out = {
        "streams": args.streams, "pollers": args.pollers, "seconds": args.seconds, "addresses": args.addresses,
        "latency": {k: summary(v) for k, v in stats.latency_ms.items()},
        "statuses": stats.statuses,
        "timeouts": stats.timeouts, "failures": stats.failures,
        "streams_taken": stats.streams_taken, "streams_refused": stats.streams_refused,
        "stream_events": stats.stream_events, "stream_errors": stats.stream_errors,
        "server_rss_mib": [(t, round(m, 1)) for t, m in rss], "server_alive_at_end": alive,
    }
    print(json.dumps(out, indent=1))
    rows = ["| requests | n | median ms | p95 ms | max ms | timed out | failed |", "|---|---|---|---|---|---|---|"]
    for k, s in out["latency"].items():
        rows.append(f"| {k} | {s.get('n', 0)} | {s.get('median_ms', '-')} | {s.get('p95_ms', '-')} | "
                    f"{s.get('max_ms', '-')} | {stats.timeouts[k]} | {stats.failures[k]} |")
    print("\n".join(rows), file=sys.stderr)


if __name__ == "__main__":
    main()

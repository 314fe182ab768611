"""Audit readers at full speed while a game is played: no write fails, none is doubled.

    python -m bench.audit_soak [--seconds 60] [--readers 2] [--reader-pause 0] [--repeat 0.3] [--seed 1]

A real `companion demo --game FILE` server (synthetic camera, the game recorded into
FILE) is played over HTTP as in bench/killsoak.py (rounds, actions from the cars'
specs, dice, undos, cars moved), each POST with its own Idempotency-Key as the page
sends it. Meanwhile `--readers` visitors loop the audit at full speed (or with
`--reader-pause` seconds between reads): the timeline (GET /audit), then "measure
again" of one of its last resolutions (GET /api/audit/N/remeasure). Counted:

- failed writes: players' POSTs answered 5xx (or not answered), and of those how many
  had been committed anyway (the file has more events after it than before);
- doubled writes: after a POST that changed the game, the same request sent again with
  the same key (its answer "lost"; every undo, a `--repeat` share of the rest) must be
  answered with the first answer and change nothing: a repeat that adds an event to the
  file is a doubled write;
- the file afterwards: chain intact, every acknowledged event in it (killsoak's check);
- the players' latency (p50/p95, ms), first alone for `--seconds`/3 as the baseline,
  then with the readers; and how many audit reads were answered, and how (status).

The figures are printed as JSON; the exit status is 1 when a write failed or doubled.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

from bench.killsoak import Driver, Player, check_file, start_server

#: The POSTs that change the game (a repeat of these must change nothing).
CHANGES = ("api/act", "api/round", "api/end_turn", "api/undo", "api/dice/virtual", "api/dice/typed",
           "api/choice", "api/cancel", "api/place", "api/demo/move")


class KeyedPlayer(Player):
    """killsoak's player, each POST timed and sent with a fresh Idempotency-Key; after one
    that changed the game, sometimes sent again with the same key (its answer 'lost')."""

    def __init__(self, base: str, game_file: Path, rng: random.Random, repeat: float) -> None:
        from companion.store import GameStore
        self.file = GameStore(game_file, readonly=True)      # the bench's own reader of the file
        self.rng, self.repeat = rng, repeat
        self.ms: list[float] = []
        self.counts = Counter()
        self.answers = Counter()                              # by path and status
        self.failures: list[str] = []
        super().__init__(base)

    def get(self, path):
        t = time.perf_counter()
        try:
            return super().get(path)
        finally:
            self.ms.append((time.perf_counter() - t) * 1000)

    def _send(self, path, body, key):
        req = urllib.request.Request(self.base + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "X-CSRF-Token": self.token,
                                              "Idempotency-Key": key})
        t = time.perf_counter()
        try:
            with self.opener.open(req, timeout=self.timeout_s) as r:
                out = r.status, r.read(), r.headers.get("Idempotent-Replayed")
        except urllib.error.HTTPError as exc:
            out = exc.code, exc.read(), exc.headers.get("Idempotent-Replayed")
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            out = 599, json.dumps({"error": f"no answer: {exc}"}).encode(), None
        self.ms.append((time.perf_counter() - t) * 1000)
        return out

    def post(self, path, body):
        key = "%032x" % self.rng.getrandbits(128)
        before = len(self.file)
        status, data, _ = self._send(path, body, key)
        self.counts["posts"] += 1
        self.answers[f"{path} {status}"] += 1
        if status >= 500:
            after = len(self.file)
            self.counts["failed_writes"] += 1
            self.counts["failed_but_committed"] += after > before
            self.failures.append(f"{path}: {status} {data[:200]!r} (file {before} -> {after} events)")
        elif path in CHANGES and status == 200 and (path == "api/undo" or self.rng.random() < self.repeat):
            now = len(self.file)
            again, data2, replayed = self._send(path, body, key)
            self.counts["repeats"] += 1
            if len(self.file) != now:
                self.counts["doubled_writes"] += 1
                self.failures.append(f"{path}: its repeat changed the file ({now} -> {len(self.file)} events)")
            elif again != status or data2 != data or replayed != "true":
                self.counts["repeats_not_answered_as_first"] += 1
                self.failures.append(f"{path}: its repeat answered {again} (replayed: {replayed})")
        try:
            return status, json.loads(data)
        except ValueError:
            return status, {}


class AuditReader(threading.Thread):
    """A visitor reading the audit in a loop: the timeline, then one of its last resolutions measured again."""

    def __init__(self, base: str, rng: random.Random, pause_s: float) -> None:
        super().__init__(daemon=True)
        self.base, self.rng, self.pause_s = base, rng, pause_s
        self.halt = threading.Event()
        self.codes = Counter()
        self.ms: list[float] = []

    def _get(self, path: str) -> bytes:
        t = time.perf_counter()
        try:
            with urllib.request.urlopen(self.base + path, timeout=120) as r:
                data = r.read()
                self.codes[f"{path.split('/')[0] or 'audit'} {r.status}"] += 1
                return data
        except urllib.error.HTTPError as exc:
            self.codes[f"{path.split('/')[0]} {exc.code}"] += 1
            return b""
        except Exception:                 # noqa: BLE001 - counted, and the visitor goes on
            self.codes["no answer"] += 1
            return b""
        finally:
            self.ms.append((time.perf_counter() - t) * 1000)

    def run(self) -> None:
        while not self.halt.is_set():
            page = self._get("audit").decode(errors="replace")
            seqs = [int(s) for s in re.findall(r'href="[^"]*audit/(\d+)"', page)]
            if self.halt.wait(self.pause_s):
                return
            if seqs:
                self._get(f"api/audit/{self.rng.choice(seqs[-3:])}/remeasure")
            if self.halt.wait(self.pause_s):
                return


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    v = sorted(values)
    return round(v[min(len(v) - 1, int(q * len(v)))], 1)


class Placer(Driver):
    """killsoak's driver, and a piece the rules move (or an undo takes back) is put where it is
    asked, as a player puts it: driven there on the demo's table, then confirmed; called off
    now and then."""

    def step(self) -> None:
        g = self.p.get("api/game")
        pending = g.get("pending") if g.get("game") is not None else None
        if pending is None or pending.get("waiting") != "placement":
            return super().step()
        place = pending["placement"]
        if place.get("may_stay") and self.rng.random() < 0.5:
            self._ack(*self.p.post("api/place", {"marker": place["marker"], "stay": True}))
            return
        if not place.get("put_back") and self.rng.random() < 0.1:
            self._ack(*self.p.post("api/cancel", {}))
            return
        x, y, heading = place["to"]
        self._ack(*self.p.post("api/demo/move", {"vehicle": place["marker"], "x_mm": x, "y_mm": y, "heading_deg": heading}))
        time.sleep(0.4)                   # the camera sees it there and still
        if (self.p.get("api/game").get("pending") or {}).get("waiting") == "placement":
            self._ack(*self.p.post("api/place", {"marker": place["marker"], "stay": False}))


def play(player: KeyedPlayer, seconds: float, rng: random.Random) -> Driver:
    driver = Placer(player, random.Random(rng.random()))
    driver.start()
    time.sleep(seconds)
    driver.halt.set()
    driver.join(120)
    return driver


def soak(seconds: float, readers: int, pause_s: float, repeat: float, seed: int, workdir: Path) -> dict:
    rng = random.Random(seed)
    game_file = workdir / "audit-soak.db"
    proc, base, _ = start_server(game_file)
    try:
        player = KeyedPlayer(base, game_file, random.Random(rng.random()), repeat)
        deadline = time.monotonic() + 60
        while player.get("api/game")["game"] is None:
            if time.monotonic() > deadline:
                raise RuntimeError("the demo's game never started")
            time.sleep(0.1)
        # The baseline: the players alone.
        player.ms.clear()
        d0 = play(player, seconds / 3, rng)
        alone = list(player.ms)
        player.ms.clear()
        visitors = [AuditReader(base, random.Random(rng.random()), pause_s) for _ in range(readers)]
        for v in visitors:
            v.start()
        d1 = play(player, seconds, rng)
        for v in visitors:
            v.halt.set()
        for v in visitors:
            v.join(180)
        with_readers = list(player.ms)
        acked = {**d0.acked, **d1.acked}
        problems = check_file(game_file, acked) + player.failures
        reads = sum((v.codes for v in visitors), Counter())
        audit_ms = [m for v in visitors for m in v.ms]
        figures = {
            "seconds": seconds, "readers": readers, "reader_pause_s": pause_s,
            "player_posts": player.counts["posts"], "acknowledged_events": len(acked),
            "events_in_file": len(player.file),
            "failed_writes": player.counts["failed_writes"],
            "failed_but_committed": player.counts["failed_but_committed"],
            "repeats_sent": player.counts["repeats"], "doubled_writes": player.counts["doubled_writes"],
            "repeats_not_answered_as_first": player.counts["repeats_not_answered_as_first"],
            "file_problems": len(problems) - len(player.failures),
            "player_ms_alone": {"p50": pct(alone, 0.5), "p95": pct(alone, 0.95), "n": len(alone)},
            "player_ms_with_readers": {"p50": pct(with_readers, 0.5), "p95": pct(with_readers, 0.95),
                                       "n": len(with_readers)},
            "player_answers": dict(player.answers), "audit_reads": dict(reads), "audit_read_ms": {"p50": pct(audit_ms, 0.5), "p95": pct(audit_ms, 0.95)},
        }
        player.file.close()
        return {"figures": figures, "problems": problems[:20], "game_file": str(game_file)}
    finally:
        proc.kill()
        proc.wait(30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="play with the readers (the baseline plays a third of it)")
    ap.add_argument("--readers", type=int, default=2)
    ap.add_argument("--reader-pause", type=float, default=0.0, help="seconds between a reader's reads (0: full speed)")
    ap.add_argument("--repeat", type=float, default=0.3, help="share of game-changing POSTs sent again with their key")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", help="where the game file goes (default: a new temporary folder)")
    args = ap.parse_args()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="audit-soak-"))
    workdir.mkdir(parents=True, exist_ok=True)
    out = soak(args.seconds, args.readers, args.reader_pause, args.repeat, args.seed, workdir)
    print(json.dumps(out, indent=1))
    f = out["figures"]
    sys.exit(1 if f["failed_writes"] or f["doubled_writes"] or f["file_problems"] else 0)


if __name__ == "__main__":
    main()

"""Killed at random moments: every acknowledged event kept, and the game resumes every time.

    python -m bench.killsoak [--kills 50] [--seed 1] [--min-s 0.3] [--max-s 4] [--commits 200]

A real `companion demo --game FILE` server (the synthetic camera rendering and
tracking its frames, the game recorded into FILE) is played over HTTP as players
play it: rounds, actions from the cars' own action specs, ends of turn, undos,
dice rolled virtually or typed in (and now and then called off), cars moved on the
table, and two pages' event streams open all along. At a random moment the server
gets SIGKILL (no goodbye, no flush), mid-request as often as not. Then:

- the file's chain is whole (`store.verify`), and it plays back to its last event
  and measures every resolution again (`record.check_playback`, what `audit verify`
  adds): it resumes;
- every event a player's request was answered with (acknowledged) is in the file,
  the same event (number, kind, what was asked, its dice);
- the server started again on the same file resumes it (its page says so, its log
  is the file's), and play goes on in the same file for the next kill.

`--commits N` also measures what keeping the .db whole costs: N resolutions' worth
of events (a real resolution's body and frame) appended with the WAL checkpointed
after each commit (what the store does), without it, and in rollback-journal mode.

The figures are printed as JSON; `tests/test_killsoak.py` runs the same with 5 kills.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from http.cookiejar import CookieJar
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


class Player:
    """A browser's worth of HTTP: the page token in a cookie, JSON in and out."""

    def __init__(self, base: str, timeout_s: float = 30.0) -> None:
        self.base = base
        self.timeout_s = timeout_s
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        self.token = self.get("api/session")["csrf"]

    def get(self, path):
        with self.opener.open(self.base + path, timeout=self.timeout_s) as r:
            return json.load(r)

    def post(self, path, body):
        req = urllib.request.Request(self.base + path, data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json", "X-CSRF-Token": self.token})
        try:
            with self.opener.open(req, timeout=self.timeout_s) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as exc:
            try:
                return exc.code, json.load(exc)
            except ValueError:
                return exc.code, {}


def start_server(game_file: Path, fps: float = 8.0, timeout_s: float = 120.0):
    """`companion demo` on a free port recording into `game_file`: (process, base URL, what it said)."""
    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--port", "0", "--fps", str(fps),
                             "--game", str(game_file)], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    said: list[str] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        said.append(line)
        if match := re.search(r"(http://127\.0\.0\.1:\d+/)", line):
            # What it says of the game file (recording, or resumed at event N) follows at once.
            for _ in range(6):
                said.append(proc.stdout.readline())
                if "game file" in said[-1] or not said[-1]:
                    break
            threading.Thread(target=_drain, args=(proc.stdout,), daemon=True).start()
            threading.Thread(target=_drain, args=(proc.stderr,), daemon=True).start()
            return proc, match.group(1), "".join(said)
    proc.kill()
    out, err = proc.communicate(timeout=30)
    raise RuntimeError(f"the server did not say its address: {''.join(said)}{out}{err}")


def _drain(pipe) -> None:
    for _ in iter(pipe.readline, ""):
        pass


class Streams(threading.Thread):
    """An open page's event stream, read as a browser reads it, opened again when it ends."""

    def __init__(self, base: str) -> None:
        super().__init__(daemon=True)
        self.base, self.halt, self.events = base, threading.Event(), 0

    def run(self) -> None:
        while not self.halt.is_set():
            try:
                with urllib.request.urlopen(self.base + "api/stream", timeout=5) as r:
                    for line in r:
                        if self.halt.is_set():
                            return
                        if line.startswith(b"data:"):
                            self.events += 1
            except Exception:             # noqa: BLE001 - killed server, a refusal, a timeout: try again
                if self.halt.wait(0.3):
                    return


class Driver(threading.Thread):
    """Plays the demo's game at random until told to stop (or the server dies). Every
    answered request's log is kept: those events were acknowledged to a player."""

    def __init__(self, player: Player, rng: random.Random) -> None:
        super().__init__(daemon=True)
        self.p, self.rng = player, rng
        self.halt = threading.Event()
        self.acked: dict[int, dict] = {}
        self.requests = 0
        self.refused = 0
        self.errors: list[str] = []

    def _ack(self, status: int, answer: dict) -> None:
        self.requests += 1
        if status == 200 and isinstance(answer, dict) and "log" in answer:
            for e in answer["log"]:
                self.acked[e["n"]] = {"n": e["n"], "kind": e["kind"], "detail": e["detail"],
                                      "faces": [d["faces"] for d in e.get("dice", [])]}
        elif status >= 500:
            self.errors.append(f"{status}: {answer}")
        elif status != 200:
            self.refused += 1

    def run(self) -> None:
        try:
            while not self.halt.is_set():
                self.step()
        except Exception:                 # noqa: BLE001 - the server was killed under it
            pass

    def step(self) -> None:
        rng, p = self.rng, self.p
        g = p.get("api/game")
        game = g["game"]
        if game is None:
            time.sleep(0.1)
            return
        pending = g.get("pending")
        if pending is not None:
            if pending.get("waiting") == "choice":
                options = pending.get("options") or []
                value = rng.choice(options)["value"] if options and isinstance(options[0], dict) else \
                    (rng.choice(options) if options else None)
                self._ack(*p.post("api/choice", {"player": pending.get("player"), "value": value}))
                return
            r = rng.random()
            if r < 0.6:
                self._ack(*p.post("api/dice/virtual", {}))
            elif r < 0.92:
                faces = [rng.randint(1, int(d[1:])) for d in pending["dice"]]
                self._ack(*p.post("api/dice/typed", {"faces": faces}))
            else:
                self._ack(*p.post("api/cancel", {}))
            return
        active = game.get("active")
        r = rng.random()
        if active is None or r < 0.08:
            orders = {player: [o["value"] for o in opts] for player, opts in (game.get("round_orders") or {}).items()}
            self._ack(*p.post("api/round", {"orders": orders}))
        elif r < 0.16:
            self._ack(*p.post("api/end_turn", {}))
        elif r < 0.22 and g.get("can_undo"):
            self._ack(*p.post("api/undo", {}))
        elif r < 0.40:
            car = next((c for c in p.get("api/state")["cars"] if c["id"] == active), None)
            if car is not None:               # the active car driven a little on the table
                x = min(max(car["x_mm"] + rng.uniform(-40, 40), 100.0), 1100.0)
                y = min(max(car["y_mm"] + rng.uniform(-40, 40), 100.0), 700.0)
                self._ack(*p.post("api/demo/move", {"vehicle": active, "x_mm": x, "y_mm": y,
                                                    "heading_deg": car["heading_deg"] + rng.uniform(-15, 15)}))
                time.sleep(rng.uniform(0.0, 0.4))
        else:
            self.act(active)

    def act(self, marker: int) -> None:
        """One of the car's actions, its choices picked at random; the camera fills poses."""
        specs = self.p.get(f"api/car/{marker}").get("actions", [])
        usable = []
        for spec in specs:
            action, ok = {"act": spec["act"]}, True
            for f in spec["fields"]:
                if f["kind"] == "fixed":
                    action[f["name"]] = f["value"]
                elif f.get("optional") or f["kind"] in ("table_pose", "table_path"):
                    continue
                elif f["kind"] == "choice" and f.get("choices"):
                    action[f["name"]] = self.rng.choice(f["choices"])["value"]
                elif f["kind"] == "flag":
                    action[f["name"]] = False
                else:
                    ok = False
            if ok:
                usable.append(action)
        if usable:
            self._ack(*self.p.post("api/act", self.rng.choice(usable)))


def stored_session_events(game_file: Path) -> dict[int, dict]:
    """The session's events as the game file holds them (resolutions and undos), by number."""
    from companion.store import GameStore
    store = GameStore(game_file, readonly=True)
    try:
        out = {}
        for e in store.events():
            if e.kind == "resolution":
                out[e.body["n"]] = {"n": e.body["n"], "kind": e.body["kind"], "detail": e.body["detail"],
                                    "faces": [d["faces"] for d in e.body["dice"]]}
            elif e.kind == "undo":
                out[e.body["n"]] = {"n": e.body["n"], "kind": "undo", "detail": {"event": e.body["undid"]},
                                    "faces": []}
        return out
    finally:
        store.close()


def check_file(game_file: Path, acked: dict[int, dict]) -> list[str]:
    """What is wrong with the file after a kill (nothing, if all is well)."""
    from companion.record import check_playback
    from companion.store import GameStore, verify
    problems = []
    ok, message, _ = verify(game_file)
    if not ok:
        return [f"verify: {message}"]
    store = GameStore(game_file, readonly=True)
    try:
        played, said, _ = check_playback(store)
    finally:
        store.close()
    if not played:
        problems.append(f"playback: {said}")
    stored = stored_session_events(game_file)
    for n, e in sorted(acked.items()):
        if stored.get(n) != e:
            problems.append(f"acknowledged event {n} ({e['kind']}) {'differs' if n in stored else 'lost'}: "
                            f"{stored.get(n)} != {e}")
    return problems


def soak(kills: int, seed: int = 1, workdir: Path | None = None, min_s: float = 0.3, max_s: float = 4.0,
         say=print) -> dict:
    """Kill the server `kills` times at random moments of one game; the figures and any problems."""
    rng = random.Random(seed)
    workdir = Path(workdir or tempfile.mkdtemp(prefix="killsoak-"))
    game_file = workdir / "soak.db"
    acked: dict[int, dict] = {}
    problems: list[str] = []
    restarts_s: list[float] = []
    figures = {"kills": 0, "requests": 0, "refused": 0, "server_errors": 0, "stream_events": 0,
               "acknowledged": 0, "lost": 0, "resumed": 0, "not_resumed": 0}
    for k in range(kills + 1):
        t0 = time.monotonic()
        proc, base, said = start_server(game_file)
        try:
            player = Player(base)
            deadline = time.monotonic() + 60
            while (g := player.get("api/game"))["game"] is None:
                if time.monotonic() > deadline:
                    raise RuntimeError("the demo's game never started")
                time.sleep(0.1)
            restarts_s.append(time.monotonic() - t0)
            if k > 0:
                # Resumed: said so, and its log is the file's (every acknowledged event in it).
                resumed = "resumed at event" in said and any("resumed from" in n["text"] for n in g["notes"])
                stored = stored_session_events(game_file)
                shown = {e["n"]: e for e in g["log"]}
                same = all(stored.get(n, {}).get("kind") == e["kind"] for n, e in shown.items()) and \
                    (not stored or max(stored) == max(shown, default=0))
                if resumed and same and g["pending"] is None:
                    figures["resumed"] += 1
                else:
                    figures["not_resumed"] += 1
                    problems.append(f"kill {k}: not resumed as the file says ({said.strip()!r})")
            if k == kills:
                break
            streams = [Streams(base) for _ in range(2)]
            driver = Driver(player, random.Random(rng.random()))
            for s in streams:
                s.start()
            driver.start()
            # The moment is random from the first answered request on (a loaded machine may
            # take a while to answer the first).
            deadline = time.monotonic() + 60
            while driver.requests == 0 and driver.is_alive() and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(rng.uniform(min_s, max_s))
            proc.send_signal(signal.SIGKILL)             # no goodbye, no flush: mid-request as often as not
            proc.wait(30)
            figures["kills"] += 1
            driver.halt.set()
            for s in streams:
                s.halt.set()
            driver.join(60)
            for s in streams:
                s.join(10)
                figures["stream_events"] += s.events
            acked.update(driver.acked)
            figures["requests"] += driver.requests
            figures["refused"] += driver.refused
            figures["server_errors"] += len(driver.errors)
            problems += [f"kill {k + 1}: server error {e}" for e in driver.errors]
            found = check_file(game_file, acked)
            figures["lost"] += sum("lost" in f for f in found)
            problems += [f"kill {k + 1}: {f}" for f in found]
            say(f"kill {k + 1}/{kills}: {len(acked)} events acknowledged so far, "
                f"{len(stored_session_events(game_file))} in the file, {len(found)} problems")
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(30)
    from companion.store import GameStore
    store = GameStore(game_file, readonly=True)
    figures.update(acknowledged=len(acked), events_in_file=len(store),
                   session_events=len(stored_session_events(game_file)),
                   restart_s_median=round(statistics.median(restarts_s), 2), restart_s_max=round(max(restarts_s), 2),
                   file_bytes=game_file.stat().st_size)
    store.close()
    return {"figures": figures, "problems": problems, "game_file": str(game_file)}


def commit_cost(n: int, workdir: Path) -> dict:
    """Milliseconds per event appended (a real resolution's body and its frame), synced,
    three ways: the WAL checkpointed after each commit (what the store does), the WAL
    alone, and a rollback journal; and whether a copy of the .db alone is whole."""
    import shutil

    import numpy as np

    from companion.game import TableGame
    from companion.live import LiveTable
    from companion.store import GameStore, verify
    from vision.demo import demo_table
    from vision.render import CarTruth, RenderOptions, TableRenderer
    from vision.sources import SyntheticSource

    table = demo_table()
    renderer = TableRenderer.overhead(table, options=RenderOptions(), seed=1)
    poses = (CarTruth(10, 300.0, 200.0, 0.0), CarTruth(11, 420.0, 200.0, 0.0), CarTruth(12, 900.0, 650.0, 0.0),
             CarTruth(13, 700.0, 520.0, 0.0), CarTruth(14, 1000.0, 200.0, 0.0))
    source = SyntheticSource(table, paced=False)
    live = LiveTable(source, table, source.camera)
    live.process(renderer.render(poses, np.random.default_rng(3)).image, 0, 0.0)
    sample = workdir / "sample.db"
    game = TableGame(live, store=GameStore(sample), seed=3)
    game.start("shattered_highways", {}, game.starter_rosters())
    game.act({"act": "shoot", "warrior": "Max:10:W1", "target": 11, "at": "vehicle"})
    game.answer_typed([5])
    game.answer_typed([4])
    shot = game.store.events()[-1]
    ref = shot.body["evidence"][0]["ref"]
    frame = game.store.evidence(ref["id"])
    game.store.close()
    out = {}
    for mode in ("wal+checkpoint", "wal", "rollback journal"):
        path = workdir / f"cost-{mode.replace(' ', '-').replace('+', '-')}.db"
        store = GameStore(path)
        if mode == "wal":
            store._checkpoint = lambda: None                       # what the store did before
        elif mode == "rollback journal":
            store._db.execute("PRAGMA journal_mode=DELETE")
            store._checkpoint = lambda: None
        times = []
        for i in range(n):
            t = time.perf_counter()
            # A new frame each time (the same picture would be stored once).
            new = store.add_evidence(frame["jpeg"] + i.to_bytes(4, "big"), frame["detections"], frame["table_pose"])
            body = {**shot.body, "n": i + 1, "evidence": [{"ref": new, "cars": shot.body["evidence"][0]["cars"]}]}
            store.append("resolution", body)
            times.append((time.perf_counter() - t) * 1000)
        copy = workdir / "copy.db"
        shutil.copy(path, copy)                                     # the .db alone, the game still open
        ok, _, events = verify(copy)
        store.close()
        times.sort()
        out[mode] = {"ms_median": round(statistics.median(times), 2), "ms_p95": round(times[int(0.95 * n) - 1], 2),
                     "copy_of_db_alone": f"{events} of {n} events" if ok else "not readable"}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kills", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--min-s", type=float, default=0.3, help="shortest play before a kill (s)")
    ap.add_argument("--max-s", type=float, default=4.0, help="longest play before a kill (s)")
    ap.add_argument("--commits", type=int, default=200, help="events appended to measure a commit's cost (0: skip)")
    ap.add_argument("--workdir", help="where the game files go (default: a new temporary folder)")
    args = ap.parse_args()
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="killsoak-"))
    workdir.mkdir(parents=True, exist_ok=True)
    out = {}
    if args.commits:
        out["commit_cost"] = commit_cost(args.commits, workdir)
        print(json.dumps(out["commit_cost"]), flush=True)
    result = soak(args.kills, args.seed, workdir, args.min_s, args.max_s,
                  say=lambda text: print(text, file=sys.stderr, flush=True))
    out.update(result)
    print(json.dumps(out, indent=1))
    sys.exit(1 if result["problems"] else 0)


if __name__ == "__main__":
    main()

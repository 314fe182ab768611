"""Measure again, exactly (issue 24): every event of recorded games re-measured, and the
players' API while visitors replay audit exports.

    python -m bench.remeasure record [--dir DIR]        record the 10 games (about 10 min)
    python -m bench.remeasure exact [--dir DIR]         remeasure every resolution of them
    python -m bench.remeasure load GAME.db [--visitors 8] [--seconds 40]
    python -m bench.remeasure cut GAME.db OUT.db N      its first N events as a game file

`record` plays scenarios through the camera (companion.camera_scenario: rendered frames,
tracked, every step sent through the table game as the page sends it), each into a game
file as a table's game is recorded: the five whole games (one a rule system) and five
shorter ones. Every few actions the action just resolved is undone (its moved pieces put
back where the game has them, as the page asks) and made again with the same dice, so
the files hold undos, held cars and placements.

`exact` plays each file back and measures every resolution that has a camera frame
again (`audit.measure_again`, what `audit remeasure` and `audit verify` do): events exact
/ total, and every one that is not, with why.

`load` serves GAME.db's game (`companion demo --game`, resumed on the demo's table) and, for
`--seconds`, one player polls `/api/state` and `/api/game` every 0.25 s and sends an undo
every 2 s (each answered 409 or 200: the game is one the file already finished or not,
the latency is what counts) while `--visitors` visitors loop over the audit exports of
the file's resolutions (`/api/audit/N/export.html`, each a full replay when not cached).
Prints the players' p95 and the exports served. JSON on stdout.
"""

from __future__ import annotations

import argparse
import copy
import http.client
import json
import sys
import threading
import time
from pathlib import Path
from bench.proc import stop_server

ROOT = Path(__file__).resolve().parents[1]
SCENARIOS = ROOT / "examples" / "scenarios"
DEFAULT_DIR = ROOT / "bench" / "out" / "remeasure"

#: (scenario, undo every Nth action that went ahead): the five whole games and five shorter
#: ones, every rule system twice.
GAMES = [
    ("sh-game-whole", 4),
    ("ad-game-whole", 6),
    ("st-game-whole", 4),
    ("wr-game-whole", 4),
    ("cc-game-whole", 4),
    ("16-undo", 1),
    ("29-nudge-daisy-chain", 1),
    ("cc-05-mines-along-the-route", 2),
    ("st-03-the-truck-pushes-a-chain", 2),
    ("wr-07-two-turns-two-manoeuvres", 2),
]


def record_game(scenario: Path, out: Path, undo_every: int) -> dict:
    """Play a scenario through the camera into the game file `out`, undoing and redoing
    every `undo_every`th action that went ahead. What was played, in counts."""
    from companion.camera_scenario import CameraRun
    from companion.scenario import load_scenario
    from companion.store import GameStore
    for p in (out, out.with_name(out.name + "-wal"), out.with_name(out.name + "-shm")):
        p.unlink(missing_ok=True)
    data = load_scenario(scenario)
    store = GameStore(out)
    run = CameraRun(data, str(scenario), store=store)
    acts = undos = 0
    for n, step in enumerate(data.get("steps", [])):
        where = f"{scenario.name}: steps.{n}"
        mark = (run.dice_used, run.choices_used)
        got = run.step(step, where)
        if "act" not in step or step.get("expect_error") or (isinstance(got, dict) and "error" in got):
            continue
        acts += 1
        if acts % undo_every:
            continue
        # Taken back and made again: the pieces it moved are put back where the game has them.
        run.film.read()
        run.game.undo()
        for request, _ in list(run.game.putbacks):
            run.film.slide(request.marker, [request.x_mm, request.y_mm, request.heading_deg],
                           f"{where}: putting the {request.name} back after the undo")
        run.film.read()
        run.dice_used, run.choices_used = mark
        run.step(copy.deepcopy(step), where)
        undos += 1
    kinds: dict[str, int] = {}
    for e in store.events():
        kinds[e.kind] = kinds.get(e.kind, 0) + 1
    placements = sum(len(e.body.get("placements") or []) for e in store.events() if e.kind == "resolution")
    store.close()
    return {"game": out.name, "rules": data["rules"], "events": kinds, "undos": undos, "placements": placements,
            "size_kib": round(out.stat().st_size / 1024)}


def exactness(paths: list[Path]) -> dict:
    """Every resolution with a frame in each file, measured again on a copy of the game
    just before it: exact / total, and the ones that are not."""
    from companion.audit import _Frames, measure_again
    from companion.dice import FixedDice
    from companion.record import replay
    from companion.session import GameSession
    from companion.store import GameStore
    out = {"games": [], "exact": 0, "total": 0}
    for path in paths:
        store = GameStore(path, readonly=True)
        events = store.events()
        frames = _Frames(store, events)
        results = []
        sources: dict[str, int] = {}

        def each(session, e):
            if e.kind != "resolution" or not e.body.get("evidence"):
                return
            trial = GameSession(session.rules, copy.deepcopy(session.state), FixedDice([]))
            results.append(measure_again(store, events, e, trial, frames))

        replay(events, before_each=each)
        from companion.audit import pose_sources
        for e in events:
            if e.kind == "resolution" and e.body.get("evidence"):
                for s in pose_sources(store, events, e, frames).values():
                    sources[s["kind"]] = sources.get(s["kind"], 0) + 1
        bad = [{"event": r["event"], "changed": r["changed"],
                "poses": [(p["vehicle"], p["from"], p["difference_mm"]) for p in r["poses"] if p["difference_mm"]],
                "verdicts": [v["what"] for v in r["verdicts"] if not v["same"]]} for r in results if not r["same"]]
        n = len(results)
        out["games"].append({"game": path.name, "exact": n - len(bad), "total": n, "not_exact": bad,
                             "pose_sources": sources,
                             "undos": sum(1 for e in events if e.kind == "undo"),
                             "holds": sum(1 for e in events if e.kind == "hold")})
        out["exact"] += n - len(bad)
        out["total"] += n
        store.close()
    return out


def cut(source: Path, out: Path, upto: int) -> dict:
    """The first `upto` events of a game file, with the frames they refer to, as a game file
    of its own (a game's start is a whole game file: the tests' small recorded games)."""
    from companion.store import GameStore
    src = GameStore(source, readonly=True)
    events = [e for e in src.events() if e.seq <= upto]

    def refs(x):
        if isinstance(x, dict):
            if "sha256" in x and "id" in x:
                yield x["id"]
            for v in x.values():
                yield from refs(v)
        elif isinstance(x, list):
            for v in x:
                yield from refs(v)
    last = max((i for e in events for i in refs(e.body)), default=0)
    out.unlink(missing_ok=True)
    dst = GameStore(out)
    for i in range(1, last + 1):                   # the same frames under the same ids
        ev = src.evidence(i)
        assert dst.add_evidence(ev["jpeg"], ev["detections"], ev["table_pose"])["id"] == i
    for e in events:
        dst.append(e.kind, e.body, e.t)
    dst.close()
    src.close()
    return {"game": out.name, "events": len(events), "frames": last, "size_kib": round(out.stat().st_size / 1024)}


# --- the players' API while visitors replay exports ---------------------------------------

def _get(conn_box, host, port, path, method="GET", body=None, headers=None):
    """A request on a kept-alive connection (made again if it broke): (status, ms)."""
    t0 = time.perf_counter()
    for attempt in range(2):
        try:
            if conn_box[0] is None:
                conn_box[0] = http.client.HTTPConnection(host, port, timeout=30)
            conn_box[0].request(method, path, body=body, headers=headers or {})
            r = conn_box[0].getresponse()
            r.read()
            return r.status, (time.perf_counter() - t0) * 1000
        except (OSError, http.client.HTTPException):
            conn_box[0] = None
            if attempt:
                return 0, (time.perf_counter() - t0) * 1000
    return 0, 0.0


def load(game: Path, visitors: int, seconds: float, port: int = 8765) -> dict:
    import shutil
    import subprocess
    import tempfile

    import numpy as np

    from companion.store import GameStore
    work = Path(tempfile.mkdtemp(prefix="remeasure-load-"))
    copy_of = work / game.name
    shutil.copy(game, copy_of)
    store = GameStore(copy_of, readonly=True)
    seqs = [e.seq for e in store.events() if e.kind == "resolution" and e.body.get("evidence")]
    store.close()
    cmd = [sys.executable, "-m", "companion", "demo", "--game", str(copy_of), "--port", str(port)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    host = "127.0.0.1"
    try:
        deadline = time.time() + 120
        box = [None]
        while time.time() < deadline:
            status, _ = _get(box, host, port, "/api/state")
            if status == 200:
                break
            if proc.poll() is not None:
                raise SystemExit(f"the server stopped: {proc.stdout.read()[-2000:]}")
            time.sleep(0.5)
        else:
            raise SystemExit("the server did not answer in 120 s")
        lock = threading.Lock()
        player_ms: list[float] = []
        player_fail = [0]
        exports = {"served": 0, "failed": 0, "ms": []}
        stop = time.time() + seconds

        def player():
            box = [None]
            k = 0
            while time.time() < stop:
                path = "/api/state" if k % 2 == 0 else "/api/game"
                status, ms = _get(box, host, port, path)
                with lock:
                    player_ms.append(ms)
                    player_fail[0] += status != 200
                k += 1
                time.sleep(0.25)

        def visitor(i):
            box = [None]
            k = i
            while time.time() < stop:
                seq = seqs[k % len(seqs)]
                status, ms = _get(box, host, port, f"/api/audit/{seq}/export.html")
                with lock:
                    exports["served" if status == 200 else "failed"] += 1
                    exports["ms"].append(ms)
                k += 1

        threads = [threading.Thread(target=player)] + [threading.Thread(target=visitor, args=(i * 7,))
                                                     for i in range(visitors)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        pm = np.array(player_ms)
        em = np.array(exports["ms"]) if exports["ms"] else np.array([0.0])
        return {"game": game.name, "visitors": visitors, "seconds": seconds,
                "player_requests": len(pm), "player_failed": player_fail[0],
                "player_p50_ms": round(float(np.percentile(pm, 50)), 1),
                "player_p95_ms": round(float(np.percentile(pm, 95)), 1),
                "player_max_ms": round(float(pm.max()), 1),
                "exports_served": exports["served"], "exports_refused_or_failed": exports["failed"],
                "export_p50_ms": round(float(np.percentile(em, 50)), 1)}
    finally:
        stop_server(proc)
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("record")
    r.add_argument("--dir", default=str(DEFAULT_DIR))
    r.add_argument("--only", nargs="*", help="scenario names (default: all ten)")
    x = sub.add_parser("exact")
    x.add_argument("--dir", default=str(DEFAULT_DIR))
    x.add_argument("files", nargs="*")
    c = sub.add_parser("cut")
    c.add_argument("source")
    c.add_argument("out")
    c.add_argument("upto", type=int)
    lo = sub.add_parser("load")
    lo.add_argument("game")
    lo.add_argument("--visitors", type=int, default=8)
    lo.add_argument("--seconds", type=float, default=40.0)
    lo.add_argument("--port", type=int, default=8765)
    args = ap.parse_args()
    if args.what == "record":
        d = Path(args.dir)
        d.mkdir(parents=True, exist_ok=True)
        for name, every in GAMES:
            if args.only and name not in args.only:
                continue
            t0 = time.time()
            got = record_game(SCENARIOS / f"{name}.json", d / f"{name}.db", every)
            got["seconds"] = round(time.time() - t0, 1)
            print(json.dumps(got), flush=True)
    elif args.what == "cut":
        print(json.dumps(cut(Path(args.source), Path(args.out), args.upto)))
    elif args.what == "exact":
        files = [Path(f) for f in args.files] or sorted(Path(args.dir).glob("*.db"))
        out = exactness(files)
        for g in out["games"]:
            print(f"| {g['game']} | {g['exact']}/{g['total']} | {g['undos']} | {g['holds']} | {g['pose_sources']} |",
                  file=sys.stderr)
        print(f"exact: {out['exact']}/{out['total']}", file=sys.stderr)
        print(json.dumps(out))
    else:
        print(json.dumps(load(Path(args.game), args.visitors, args.seconds, args.port)))


if __name__ == "__main__":
    main()

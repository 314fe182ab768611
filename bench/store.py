"""How big a game file gets: a two-hour game at 30 frames a second, simulated.

    python -m bench.store [--hours 2] [--fps 30] [--resolutions-per-minute 4]

The demo's synthetic 1080p webcam films the demo's convoy; the live table tracks
every frame of the sample it is shown, and the game resolves actions through
the table game exactly as the page does (a Shoot when the target is in range,
else a Pass; a round now and then, with its initiative and a car held where its
turn began). Frames are stored only where a resolution is made, so the file
grows with the resolutions, not with the frames: the benchmark makes as many
resolutions as a game of that length would (4 a minute: about one every 15 s,
a brisk table) and reports the file's size, what the frames take, and the
figure scaled to the game's length. Also: how long a resolution takes to
commit (the SQLite write, synced, with its frame encoded).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np

from companion.game import TableGame
from companion.live import LiveTable
from companion.store import GameStore, verify
from vision.sources import SyntheticSource


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--hours", type=float, default=2.0)
    ap.add_argument("--fps", type=float, default=30.0)
    ap.add_argument("--resolutions-per-minute", type=float, default=4.0)
    ap.add_argument("--sample", type=int, default=0,
                    help="resolutions actually made (default: all of them); the size is scaled to the game")
    args = ap.parse_args()
    total = int(round(args.hours * 60 * args.resolutions_per_minute))
    made = args.sample or total
    frames_between = int(args.fps * 60 / args.resolutions_per_minute)
    source = SyntheticSource(fps=args.fps, paced=False)
    live = LiveTable(source, source.table, source.camera)
    path = os.path.join(tempfile.mkdtemp(prefix="game-"), "game.db")
    store = GameStore(path)
    game = TableGame(live, store=store, seed=1)
    frame_no = 0

    def film(n: int) -> None:
        # The camera runs between resolutions; a few frames of it are tracked (the rest
        # would change nothing the file keeps: frames are stored only with a verdict).
        nonlocal frame_no
        source._index = frame_no
        for _ in range(n):
            f = source.read()
            live.process(f.image, f.index, f.time_s, f.captured_at)
        frame_no += frames_between

    film(20)
    game.start("shattered_highways", {}, game.starter_rosters())
    warriors = sorted(game.session.state.warriors)
    commit_ms, shots = [], 0
    k = 0
    while k < made:
        film(3)
        g = game.game_json()
        state = game.session.state
        if k % 12 == 0 and state.active is None:
            orders = {p: [v.marker for v in state.vehicles.values() if v.controller == p and v.in_play]
                      for p in state.players}
            t0 = time.perf_counter()
            game.start_round(orders)
            while game.game_json()["pending"]:
                game.answer_virtual()
            commit_ms.append((time.perf_counter() - t0) * 1000)
            k += 1
            continue
        active = state.active
        t0 = time.perf_counter()
        if active is not None:
            crew = [w for w in state.crew(active.marker) if not w.acted]
            gunner = next((w for w in crew if w.seat and w.seat.startswith("W")), None)
            target = None
            if gunner is not None:
                rows = [t for t in game.session.rules.targets(state, active.marker) if t["shootable"]]
                target = rows[0]["marker"] if rows else None
            if gunner is not None and target is not None:
                try:
                    game.act({"act": "shoot", "warrior": gunner.id, "target": target, "at": "vehicle"})
                    shots += 1
                except Exception:
                    game.act({"act": "pass", "warrior": gunner.id})
            elif crew:
                game.act({"act": "pass", "warrior": crew[0].id})
            else:
                game.end_turn()
        else:
            game.act({"act": "pass", "warrior": warriors[k % len(warriors)]})
        while game.game_json()["pending"]:
            game.answer_virtual()
        commit_ms.append((time.perf_counter() - t0) * 1000)
        k += 1
        if g["game"]["state"]["winner"]:
            break
    store.close()
    size = os.path.getsize(path) + sum(os.path.getsize(path + s) for s in ("-wal", "-shm") if os.path.exists(path + s))
    s = GameStore(path, create=False)
    events = s.events()
    frames = s._db.execute("SELECT COUNT(*), SUM(LENGTH(jpeg)) FROM evidence").fetchone()
    s.close()
    ok, message, _ = verify(path)
    scale = total / made
    print(json.dumps({
        "game_hours": args.hours, "camera_fps": args.fps, "frames_in_game": int(args.hours * 3600 * args.fps),
        "resolutions_in_game": total, "resolutions_made": made, "shots": shots, "events": len(events),
        "frames_stored": frames[0], "jpeg_mb": round((frames[1] or 0) / 1e6, 2),
        "jpeg_kb_per_frame": round((frames[1] or 0) / max(frames[0], 1) / 1e3, 1),
        "file_mb": round(size / 1e6, 2), "file_mb_scaled_to_game": round(size * scale / 1e6, 1),
        "commit_ms": {"median": round(float(np.median(commit_ms)), 1),
                      "p95": round(float(np.percentile(commit_ms, 95)), 1)},
        "verify": message,
    }))


if __name__ == "__main__":
    main()

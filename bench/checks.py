"""The page's "which actions can this car take now": one batched `api/checks` per car and game
change (issue 23), answered over HTTP by the running demo, for every rule system.

    python -m bench.checks [--samples 12] [--systems shattered_highways,car_cult,...]

For each system: `companion demo --rules NAME` (its real waitress server, its synthetic camera
at the demo's 15 frames per second, its starter game), as a player opens it. Then for each car,
`--samples` times: another car is nudged 3 mm on the demo table (the camera must see it move,
so the answer the server keeps for the last poses no longer holds: a real recheck, as when a
car has moved on the table), and `api/checks` for the car is timed from request to answer
(cache miss); asked again at once, the answer kept is timed too (cache hit: a second page, a
reload). Before any round and after the first round is started where its orders can be given
as the game offers them.

Set beside it, in the same run, on the same server: the way the page asked before issue 23,
one `api/preview` per action the car offers (its spec filled with its first choices), the
sum per car.

Figures: median, p95 and max in milliseconds, per system and overall, and the number of
actions each answer covers.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time

from bench.killsoak import REPO, Player

SYSTEMS = ("shattered_highways", "car_cult", "alpha_destructicus", "wasteland_rally", "stop_the_truck")


def start(rules: str):
    proc = subprocess.Popen([sys.executable, "-m", "companion", "demo", "--rules", rules, "--port", "0"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if m := re.search(r"(http://127\.0\.0\.1:\d+/)", line):
            return proc, m.group(1)
        if not line:
            break
    proc.terminate()
    raise SystemExit(f"the {rules} demo did not say its address")


def seen(player: Player, car: int) -> dict | None:
    return next((c for c in player.get("api/state")["cars"] if c["id"] == car and not c["stale"]), None)


def nudge(player: Player, car: int, home: dict, k: int) -> None:
    """Move `car` 3 mm off its place (alternately either side) and wait until the camera sees it."""
    x = home["x_mm"] + (3.0 if k % 2 == 0 else -3.0)
    status, _ = player.post("api/demo/move", {"vehicle": car, "x_mm": x, "y_mm": home["y_mm"],
                                          "heading_deg": home["heading_deg"]})
    if status != 200:
        raise SystemExit(f"the demo refused to move car {car}: {status}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        c = seen(player, car)
        if c and abs(c["x_mm"] - x) < 1.0:
            return
        time.sleep(0.05)
    raise SystemExit(f"car {car} was not seen at {x:.1f} mm within 30 s")


def timed(fn) -> tuple[float, object]:
    t0 = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t0) * 1000.0, out


def start_round(player: Player) -> bool:
    g = player.get("api/game")["game"]
    orders = g.get("round_orders") or {}
    body = {"orders": {who: [o["value"] for o in cars] for who, cars in orders.items()}}
    status, out = player.post("api/round", body)
    for _ in range(50):                 # initiative dice, tie-break choices (each's first option)
        p = out.get("pending") if status == 200 else None
        if not p:
            break
        if p.get("waiting") == "dice":
            status, out = player.post("api/dice/virtual", {})
        elif p.get("waiting") == "choice" and p.get("options"):
            status, out = player.post("api/choice", {"player": p["player"], "value": p["options"][0]["value"]})
        else:
            break
    return status == 200 and not out.get("pending")


def first_body(spec: dict) -> dict:
    """An action filled as the old page's preview filled it: each required choice's first option."""
    body = {"act": spec["act"]}
    for f in spec.get("fields", []):
        if f["kind"] == "fixed":
            body[f["name"]] = f["value"]
        elif f.get("optional"):
            continue
        elif f["kind"] == "choice" and (f.get("choices") or f.get("choices_by")):
            choices = f.get("choices") or next(iter(f["choices_by"].values()), [])
            if choices:
                body[f["name"]] = choices[0]["value"]
        elif f["kind"] == "number":
            body[f["name"]] = f.get("minimum") or 0
        elif f["kind"] == "flag":
            body[f["name"]] = False
    return body


def measure(rules: str, samples: int) -> dict:
    proc, base = start(rules)
    try:
        player = Player(base)
        deadline = time.monotonic() + 60
        while not player.get("api/game").get("game") and time.monotonic() < deadline:
            time.sleep(0.2)
        cars = [c["id"] for c in player.get("api/state")["cars"]]
        while len(cars) < 2 or any(seen(player, c) is None for c in cars):
            time.sleep(0.2)
            cars = [c["id"] for c in player.get("api/state")["cars"]]
        out = {"miss": [], "hit": [], "preview_sum": [], "actions": []}
        for phase in ("before the first round", "round 1"):
            if phase == "round 1" and not start_round(player):
                break
            for car in cars:
                other = next(c for c in cars if c != car)
                home = seen(player, other)
                for k in range(samples):
                    nudge(player, other, home, k)
                    ms, (status, answer) = timed(lambda: player.post("api/checks", {"marker": car}))
                    if status != 200:
                        break                       # a piece the rules do not act with (a truck's cab)
                    out["miss"].append(ms)
                    out["actions"].append(len(answer["checks"]))
                    out["hit"].append(timed(lambda: player.post("api/checks", {"marker": car}))[0])
                    if k < 3:
                        card = player.get(f"api/car/{car}")
                        total = 0.0
                        for spec in card.get("actions", []):
                            total += timed(lambda: player.post("api/preview", first_body(spec)))[0]
                        out["preview_sum"].append(total)
                nudge(player, other, home, 1)       # near where it stood
        return out
    finally:
        proc.terminate()
        proc.wait(10)


def summary(xs: list[float]) -> str:
    if not xs:
        return "none"
    xs = sorted(xs)
    p95 = xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]
    return f"median {statistics.median(xs):.0f} ms, p95 {p95:.0f} ms, max {xs[-1]:.0f} ms (n={len(xs)})"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--samples", type=int, default=12)
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    args = ap.parse_args(argv)
    every = {"miss": [], "hit": [], "preview_sum": []}
    for rules in args.systems.split(","):
        got = measure(rules, args.samples)
        for k in every:
            every[k] += got[k]
        acts = f"{min(got['actions'])}-{max(got['actions'])}" if got["actions"] else "0"
        print(f"{rules}: checks after a car moved: {summary(got['miss'])}; asked again: {summary(got['hit'])}; "
              f"{acts} actions an answer; one preview per action, summed: {summary(got['preview_sum'])}", flush=True)
    print(f"all systems: checks after a car moved: {summary(every['miss'])}; asked again: {summary(every['hit'])}; "
          f"one preview per action, summed: {summary(every['preview_sum'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The page: a frame's capture to the page drawing it, measured in the browser,
and the pipeline's frames per second with many browsers open.

    python -m bench.page [--seconds 30] [--window 15] [--rounds 2] [--pages 10] [--flat-fps 100]
                         [--camera-fps 30] [--source video|synthetic] [--only latency|fanout|page-cost]
    python -m bench.page --only latency --video 4k --pages 1 --seconds 20

`--video 4k` (latency): instead of the synthetic demo, issue 26's big table, a 6 x 4 ft
table with 16 cars (a third of them driving) under a 3840 x 2160 webcam, from
`bench.speed4k`'s MJPEG video (quality 80, webcam noise) decoded in a loop by
`bench.page_server` at a webcam's 30 frames a second; a frame's capture is when the camera
would have sent it, before the companion decodes it. `--pages 1`: the one-page case only.
`--server-args="--newest --gray --prefetch 0"`: how page_server reads that webcam's frames
(see its --help), to compare the ways against the way `serve` reads one today (the default).

Starts `companion demo` as a player does (a real waitress server in its own
process, the synthetic camera, the demo's game) and opens the page in Debian's
Chromium, headless, driven by Playwright.

1. Latency, the demo at its default 15 frames per second, one page open, then
   `--pages` pages open (measured on the first): for every frame received, the
   time from the frame's capture (`captured_at`, the wall clock when the
   synthetic camera made the image) to the first animation frame of the page
   that set that frame's cars on screen (the page's own `window.companion.drawn`),
   median, p95 and max. Beside it, from a script added to the page here (no
   change to the page): when the snapshot arrived (its event stream's message,
   before the page handles it), when the frame was certainly painted (the start
   of the next animation frame), and how far behind the true motion a moving
   car is drawn, glide included (the delay that best lines up the cars' drawn
   positions with their positions in the frames, over the frames' capture times).
2. Fan-out: the pipeline's frames per second with no page, with `--pages` plain
   event-stream clients (threads here, no browser: the server's own cost), with
   `--pages` Chromium pages (each its own browser context, each page's stream checked
   to be delivering), and with none again, alternating, `--rounds` times. The frames
   come from the demo recorded once and decoded in a loop (`bench.page_server`,
   `--source video`): the synthetic demo's own rendering costs more than the
   pipeline and wanders with the script, which hides a 10 % effect. Two rates:
   - camera-paced, `--camera-fps` (30, a webcam's): the rate the pipeline keeps
     while players follow the page, which is what the players feel;
   - flat out (`--flat-fps` 100 or more): the pipeline's throughput, so the headroom
     the pages take shows even where the camera-paced rate does not move.

3. Page cost (`--only page-cost`): one page following the camera at `--camera-fps`, the
   companion on the first core and the browser on the others: the browser's CPU per
   second and per update, and the page's main thread by Chromium's Performance metrics.

Latency and fan-out are done twice: with everything sharing every core, and with the companion
on the first core and the browsers (and this script) on the others, as when the
browsers are the players' phones and laptops.

CPU time is read from /proc for each phase: the companion's, the browsers' (and
this script's), and everything else on the machine, so a busy neighbour shows.
Prints a JSON summary.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import threading
import time
import urllib.request
from contextlib import contextmanager

import numpy as np
from bench.proc import stop_server

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]
VIEWPORT = {"width": 1280, "height": 800}
#: Cars on the demo's table, and on the 4K table (bench.speed4k).
DEMO_CARS, BIG_CARS = 5, 16


def cars_drawn(n: int) -> str:
    return f"document.querySelectorAll('#cars [data-car-id]').length === {n}"


# Added to every page before its own script: when each snapshot arrives, and at
# every animation frame the frame on screen and where each car is drawn. Our
# animation frame callback is asked for before the page's, so in each animation
# frame it runs first: it sees the snapshot the page is about to draw, and the
# cars where the page drew them in the animation frame before (painted by now).
PROBE = r"""
(() => {
  const b = window.__bench = { received: [], frames: [], shown: [], rafs: 0 };
  const ES = window.EventSource;
  window.EventSource = class extends ES {
    constructor(url, opts) {
      super(url, opts);
      this.addEventListener("message", (e) => {
        const now = Date.now() / 1000;
        const f = /"frame": (-?\d+)/.exec(e.data), c = /"captured_at": ([\d.]+)/.exec(e.data);
        if (f && c) b.received.push([+f[1], +c[1], now]);
      });
    }
  };
  let seen = -2, depth = null;
  function tick() {
    const now = Date.now() / 1000;
    b.rafs += 1;
    const c = window.companion;
    if (c && c.last) {
      if (depth === null) depth = parseFloat(document.getElementById("board").dataset.depthMm);
      const shown = [];
      for (const g of document.querySelectorAll("#cars [data-car-id]")) {
        const m = /translate\(([-\d.e]+)[ ,]+([-\d.e]+)\)/.exec(g.getAttribute("transform") || "");
        if (m) shown.push([+g.dataset.carId, +m[1], depth - +m[2]]);
      }
      // Drawn in the animation frame before this one: on screen now.
      b.shown.push([now, b.lastFrame === undefined ? -1 : b.lastFrame, shown]);
      b.lastFrame = c.last.frame;
      if (c.last.frame !== seen) {
        seen = c.last.frame;
        b.frames.push([seen, c.last.captured_at, now,
                       c.last.cars.filter((car) => !car.stale).map((car) => [car.id, car.x_mm, car.y_mm])]);
      }
    }
    requestAnimationFrame(tick);
  }
  requestAnimationFrame(tick);
})();
"""

# Everything gathered since the last call (the page's own list is trimmed, so
# this runs every second).
TAKE = """(since) => {
  const b = window.__bench, c = window.companion;
  const out = { drawn: c.drawn.filter((d) => d.drawn_at > since), received: b.received.splice(0),
                frames: b.frames.splice(0), shown: b.shown.splice(0), updates: c.updates, rafs: b.rafs };
  return out;
}"""

COUNTERS = "() => ({ updates: window.companion.updates, rafs: window.__bench.rafs, now: Date.now() / 1000 })"


def say(text: str) -> None:
    """Progress, on stderr (the summary alone goes to stdout)."""
    print(f"[{time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


# --- the companion, in its own process -----------------------------------------------

@contextmanager
def demo(fps: float, cpus: set[int] | None = None, video: str | None = None, cars: int = DEMO_CARS,
         server_args: str = ""):
    """`companion demo` on a free port (or, with `video`, the companion over that recording
    of the demo, decoded in a loop: `bench.page_server`; `video` "4k": the 4K table's, with
    its `cars`); yields its address and process id."""
    if video:
        cmd = [sys.executable, "-m", "bench.page_server", "--video", video, "--port", "0",
               "--fps", "0" if fps >= 100 else str(fps), *shlex.split(server_args)]
    else:
        cmd = [sys.executable, "-m", "companion", "demo", "--scripted", "--port", "0", "--fps", str(fps)]
    pre = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            preexec_fn=pre)
    try:
        said = []
        while not (m := re.search(r"(http://127\.0\.0\.1:\d+/)", said[-1] if said else "")):
            said.append(proc.stdout.readline())
            if not said[-1] or len(said) > 20:
                raise SystemExit(f"the demo did not say its address: {''.join(said)!r}")
        url = m.group(1)
        threading.Thread(target=proc.stdout.read, daemon=True).start()    # keep its pipe from filling
        if len(said) > 1:
            print("the demo said:", "".join(said[:-1]).strip(), file=sys.stderr)
        deadline = time.monotonic() + 60
        while len(get_json(url + "api/state")["cars"]) < cars:
            if time.monotonic() > deadline:
                raise SystemExit("the demo's cars never all showed")
            time.sleep(0.2)
        yield url, proc.pid
    finally:
        stop_server(proc)


def get_json(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


# --- CPU time from /proc ------------------------------------------------------------------

TICK = os.sysconf("SC_CLK_TCK")


def _proc_table() -> dict[int, tuple[int, float]]:
    """pid -> (parent pid, CPU seconds so far) for every process."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2:].split()
        table[int(name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK)
    return table


def _tree(table, root: int) -> set[int]:
    pids, grew = {root}, True
    while grew:
        more = {pid for pid, (ppid, _) in table.items() if ppid in pids} - pids
        grew, pids = bool(more), pids | more
    return pids


def _machine_busy() -> float:
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / TICK          # all but idle and iowait


class CpuMeter:
    """CPU used over a phase by the companion, by this script with its browsers,
    and by everything else, in cores (1.0 = one core busy the whole time).

    Processes that end within the phase drop out of the counts (their time
    shows as 'others'); the browsers here stay open through a phase."""

    def __init__(self, companion_pid: int) -> None:
        self.companion = companion_pid

    def _read(self):
        table = _proc_table()
        companion = _tree(table, self.companion)
        comp = sum(table[p][1] for p in companion)
        mine = sum(table[p][1] for p in _tree(table, os.getpid()) - companion)
        return time.monotonic(), comp, mine, _machine_busy()

    def start(self) -> None:
        self._start = self._read()

    def stop(self) -> dict:
        t1, c1, m1, b1 = self._read()
        t0, c0, m0, b0 = self._start
        dt = t1 - t0
        comp, mine, busy = (c1 - c0) / dt, (m1 - m0) / dt, (b1 - b0) / dt
        return {"companion_cores": round(comp, 2), "bench_and_browsers_cores": round(mine, 2),
                "others_cores": round(max(busy - comp - mine, 0.0), 2), "machine_busy_cores": round(busy, 2)}

    def measure(self, fn, limit: float, tries: int, wait_s: float):
        """`fn()` with this meter running, once the rest of the machine is quiet
        (under `limit` cores for 2 s, waiting up to `wait_s`), again up to `tries`
        times in all if something else took more than `limit` meanwhile.
        Returns fn's result, the CPU figures and the tries taken."""
        for attempt in range(1, tries + 1):
            end = time.monotonic() + wait_s
            while time.monotonic() < end:
                self.start()
                time.sleep(2.0)
                if self.stop()["others_cores"] < limit:
                    break
            self.start()
            result = fn()
            cpu = self.stop()
            if cpu["others_cores"] < limit:
                break
        cpu["tries"] = attempt
        return result, cpu


# --- the pipeline's rate ------------------------------------------------------------------

def pipeline_rate(url: str, seconds: float) -> dict:
    """Frames tracked per second over `seconds` (from the frame numbers), and the
    median of the companion's own one-second figure (`source.fps`) read each second."""
    s0, t0 = get_json(url + "api/state"), time.monotonic()
    samples = []
    while time.monotonic() - t0 < seconds:
        time.sleep(1.0)
        s = get_json(url + "api/state")
        samples.append(s["source"]["fps"])
    s1, t1 = get_json(url + "api/state"), time.monotonic()
    return {"fps": round((s1["frame"] - s0["frame"]) / (t1 - t0), 2),
            "fps_reported_median": round(float(np.median(samples)), 1),
            "frames": s1["frame"] - s0["frame"], "seconds": round(t1 - t0, 1)}


class StreamClients:
    """`n` plain event-stream readers on threads of their own (no browser)."""

    def __init__(self, url: str, n: int) -> None:
        self.counts = [0] * n
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._read, args=(url, i), daemon=True) for i in range(n)]
        for t in self._threads:
            t.start()

    def _read(self, url: str, i: int) -> None:
        with urllib.request.urlopen(url + "api/stream", timeout=15) as r:
            while not self._stop.is_set():
                line = r.readline()
                if not line:
                    return
                if line.startswith(b"data:"):
                    self.counts[i] += 1

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(5)


# --- pages --------------------------------------------------------------------------------

@contextmanager
def chromium(cpus: set[int] | None = None):
    """Chromium, headless; with `cpus`, it (and this script) run on those cores only."""
    from playwright.sync_api import sync_playwright
    before = os.sched_getaffinity(0)
    if cpus:
        os.sched_setaffinity(0, cpus)             # the driver and Chromium inherit it
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                yield browser
            finally:
                browser.close()
    finally:
        os.sched_setaffinity(0, before)


def open_pages(browser, url: str, n: int, cars: int = DEMO_CARS) -> list:
    pages = []
    for _ in range(n):
        context = browser.new_context(viewport=VIEWPORT, bypass_csp=True)
        context.add_init_script(PROBE)
        page = context.new_page()
        page.goto(url)
        page.wait_for_function(cars_drawn(cars), timeout=30000)
        pages.append(page)
    return pages


# The demo's starter rosters cost more than their 200 points with 16 cars, so the demo's own
# start is refused on the 4K table: started here as a player would from Setup, each roster's
# limit raised to what its fleet costs (a roster's "points" is its limit).
START_GAME = """async (rules) => {
  const s = await (await fetch("api/session")).json();
  const rosters = await (await fetch("api/rosters/starter?rules=" + rules)).json();
  for (const r of rosters) r.points = 1000;
  const r = await fetch("api/game", { method: "POST", body: JSON.stringify({ rules, options: {}, rosters }),
    headers: { "Content-Type": "application/json", "X-CSRF-Token": s.csrf, "Idempotency-Key": "bench-" + Date.now() } });
  return [r.status, (await r.text()).slice(0, 300)];
}"""


def start_game(page) -> None:
    from companion.commands.serve import DEMO_RULES
    status, text = page.evaluate(START_GAME, DEMO_RULES)
    if status != 200:
        raise SystemExit(f"the 4K table's game did not start ({status}): {text}")
    say(f"game of {DEMO_RULES} started on the 4K table")


def close_pages(pages) -> None:
    for page in pages:
        page.context.close()


def page_rates(pages, seconds: float) -> dict:
    """Snapshots received and animation frames per second on each page, over `seconds`."""
    a = [p.evaluate(COUNTERS) for p in pages]
    time.sleep(seconds)
    b = [p.evaluate(COUNTERS) for p in pages]
    ups = [(y["updates"] - x["updates"]) / (y["now"] - x["now"]) for x, y in zip(a, b)]
    rafs = [(y["rafs"] - x["rafs"]) / (y["now"] - x["now"]) for x, y in zip(a, b)]
    return {"updates_per_s_min": round(min(ups), 1), "updates_per_s_median": round(float(np.median(ups)), 1),
            "animation_frames_per_s_min": round(min(rafs), 1),
            "animation_frames_per_s_median": round(float(np.median(rafs)), 1)}


# --- latency --------------------------------------------------------------------------------

def stats_ms(values) -> dict:
    v = np.asarray(values, float) * 1000
    if not len(v):
        return {"n": 0}
    return {"median_ms": round(float(np.median(v)), 1), "p95_ms": round(float(np.percentile(v, 95)), 1),
            "max_ms": round(float(v.max()), 1), "n": int(len(v))}


def collect(page, seconds: float) -> dict:
    """Everything the page and the probe saw over `seconds`, for frames first received now."""
    page.evaluate("() => { const b = window.__bench; b.received.length = b.frames.length = b.shown.length = 0; }")
    start_frame = page.evaluate("() => window.companion.last.frame")
    since = page.evaluate("() => Date.now() / 1000")
    drawn, received, frames, shown = {}, {}, {}, []
    t0 = time.monotonic()
    c0 = page.evaluate(COUNTERS)
    while time.monotonic() - t0 < seconds:
        time.sleep(1.0)
        got = page.evaluate(TAKE, since)
        for d in got["drawn"]:
            drawn.setdefault(d["frame"], (d["captured_at"], d["drawn_at"]))
            since = max(since, d["drawn_at"])
        for f, captured, at in got["received"]:
            received.setdefault(f, (captured, at))
        for f, captured, at, cars in got["frames"]:
            frames.setdefault(f, (captured, at, cars))
        shown.extend(got["shown"])
    c1 = page.evaluate(COUNTERS)
    keep = [f for f in received if f > start_frame]
    return {"start_frame": start_frame, "drawn": drawn, "received": received, "frames": frames, "shown": shown,
            "keep": keep, "updates_per_s": (c1["updates"] - c0["updates"]) / (c1["now"] - c0["now"]),
            "animation_frames_per_s": (c1["rafs"] - c0["rafs"]) / (c1["now"] - c0["now"])}


def glide_delay(frames: dict, shown: list, start_frame: int) -> dict:
    """The delay d that best lines up where the page draws each car at time t with
    where the frames saw it at t - d (positions between frames interpolated over
    their capture times), over the moments the car was moving: how far behind the
    table a moving car is drawn, everything included (stream, drawing, glide)."""
    fs = sorted((f, v) for f, v in frames.items() if f > start_frame)
    if len(fs) < 10:
        return {"n": 0}
    times = np.array([v[0] for _, v in fs])
    track: dict[int, list] = {}
    for i, (_, (_, _, cars)) in enumerate(fs):
        for cid, x, y in cars:
            track.setdefault(cid, []).append((times[i], x, y))
    delays = np.arange(0.0, 0.5, 0.001)
    err = np.zeros_like(delays)
    count = 0
    for cid, pts in track.items():
        pts = np.array(pts)
        if len(pts) < 10:
            continue
        samples = np.array([(t, x, y) for t, _, cars in shown for c, x, y in cars if c == cid])
        if not len(samples):
            continue
        ts = samples[:, 0]
        inside = (ts - 0.5 > pts[0, 0]) & (ts < pts[-1, 0])
        # moving: the car's true position changed by over 5 mm in the last half second
        speed = np.hypot(np.interp(ts, pts[:, 0], pts[:, 1]) - np.interp(ts - 0.5, pts[:, 0], pts[:, 1]),
                         np.interp(ts, pts[:, 0], pts[:, 2]) - np.interp(ts - 0.5, pts[:, 0], pts[:, 2]))
        use = inside & (speed > 5.0)
        if not use.any():
            continue
        ts, sx, sy = ts[use], samples[use, 1], samples[use, 2]
        for k, d in enumerate(delays):
            err[k] += np.sum(np.hypot(np.interp(ts - d, pts[:, 0], pts[:, 1]) - sx,
                                      np.interp(ts - d, pts[:, 0], pts[:, 2]) - sy))
        count += int(use.sum())
    if not count:
        return {"n": 0}
    best = int(np.argmin(err))
    return {"delay_ms": round(delays[best] * 1000, 1), "mean_error_mm": round(err[best] / count, 2),
            "error_at_zero_delay_mm": round(err[0] / count, 2), "samples": count}


def latency(c: dict) -> dict:
    keep = c["keep"]
    drawn = [c["drawn"][f][1] - c["drawn"][f][0] for f in keep if f in c["drawn"]]
    frames = c["frames"]
    received = [c["received"][f][1] - c["received"][f][0] for f in keep]
    # painted by the next animation frame: the first 'shown' entry carrying the frame
    painted_at = {}
    for t, f, _ in c["shown"]:
        painted_at.setdefault(f, t)
    painted = [painted_at[f] - frames[f][0] for f in keep if f in frames and f in painted_at]
    return {
        "capture_to_drawn": stats_ms(drawn),
        "capture_to_received": stats_ms(received),
        "capture_to_painted": stats_ms(painted),
        "moving_car_drawn_behind": glide_delay(frames, c["shown"], c["start_frame"]),
        "frames_received": len(keep), "frames_drawn": len(drawn),
        "updates_per_s": round(c["updates_per_s"], 1),
        "animation_frames_per_s": round(c["animation_frames_per_s"], 1),
    }


# --- the runs --------------------------------------------------------------------------------

def split_cpus(pinned: bool):
    """(the companion's cores, the browsers' cores): the first core and the rest
    when pinned, else None (every core) for both."""
    cpus = sorted(os.sched_getaffinity(0))
    return ({cpus[0]}, set(cpus[1:])) if pinned else (None, None)


def latency_run(args, pinned: bool) -> dict:
    companion_cpus, browser_cpus = split_cpus(pinned)
    big = args.video == "4k"
    fps, cars = (args.camera_fps, BIG_CARS) if big else (15, DEMO_CARS)
    out = {"demo_fps": fps, "companion_cpus": sorted(companion_cpus or os.sched_getaffinity(0)),
           "browser_cpus": sorted(browser_cpus or os.sched_getaffinity(0))}
    if big:
        out["frame_source"] = "bench.speed4k's 4K table video (3840 x 2160, 16 cars), decoded in a loop"
    cases = [("one_page", 0)] + ([(f"{args.pages}_pages", args.pages - 1)] if args.pages > 1 else [])
    if big and args.server_args:
        out["server_args"] = args.server_args
    with (demo(fps, companion_cpus, "4k" if big else None, cars, args.server_args if big else "") as (url, pid),
          chromium(browser_cpus) as browser):
        meter = CpuMeter(pid)
        pages = open_pages(browser, url, 1, cars)
        if big:
            start_game(pages[0])
        for name, more in cases:
            pages += open_pages(browser, url, more, cars)
            time.sleep(args.settle)

            def run():
                s0, t0 = get_json(url + "api/state"), time.monotonic()
                c = collect(pages[0], args.seconds)
                s1, t1 = get_json(url + "api/state"), time.monotonic()
                return c, s0, t0, s1, t1

            (c, s0, t0, s1, t1), cpu = meter.measure(run, args.quiet, args.tries, args.wait)
            say(f"latency{' (companion on its own core)' if pinned else ''}, {name}: "
                f"{len(c['keep'])} frames, cpu {cpu}")
            out[name] = latency(c)
            out[name]["pipeline_fps"] = round((s1["frame"] - s0["frame"]) / (t1 - t0), 2)
            out[name]["cpu"] = cpu
            if more:
                out[name]["other_pages"] = page_rates(pages[1:], 5.0)
        close_pages(pages)
    return out


def fanout_run(args, pinned: bool, fps: float) -> dict:
    """No page, `--pages` stream clients, `--pages` browser pages, in turn, `--rounds`
    times, with a no-page phase between each (the demo's own rate wanders by
    several per cent as its script plays, so each case is set against the
    no-page phases on either side of it)."""
    cpus = sorted(os.sched_getaffinity(0))
    companion_cpus, others = split_cpus(pinned)
    out = {"demo_fps_asked": fps,
           "companion_cpus": sorted(companion_cpus) if pinned else cpus,
           "browser_cpus": sorted(others) if pinned else cpus, "phases": []}
    video = None if args.source == "synthetic" else args.video
    out["frame_source"] = ("the synthetic demo, rendered as it plays" if video is None else
                           f"the demo recorded once to {video} (MJPG) and decoded in a loop")
    with demo(fps, companion_cpus, video) as (url, pid), chromium(others) as browser:
        meter = CpuMeter(pid)
        time.sleep(args.settle)

        def phase(name, counted=()) -> dict:
            def run():
                a = [c() for c in counted]
                r = pipeline_rate(url, args.window)
                return r, a, [c() for c in counted]

            (r, a, b), cpu = meter.measure(run, args.quiet, args.tries, args.wait)
            r.update(case=name, cpu=cpu)
            say(f"fan-out at {fps:g} fps asked{' (companion on its own core)' if pinned else ''}: {name}: "
                f"{r['fps']} fps, cpu {cpu}")
            out["phases"].append(r)
            return r, a, b

        phase("no_page")
        for _ in range(args.rounds):
            clients = StreamClients(url, args.pages)    # on the browsers' cores when pinned, as this thread is
            time.sleep(args.settle)
            r, a, b = phase("stream_clients", [lambda: (time.monotonic(), list(clients.counts))])
            (t0, c0), (t1, c1) = a[0], b[0]
            r["events_per_client_per_s_min"] = round(min(y - x for x, y in zip(c0, c1)) / (t1 - t0), 1)
            clients.close()
            time.sleep(args.settle)
            phase("no_page")
            pages = open_pages(browser, url, args.pages)
            time.sleep(args.settle)
            r, a, b = phase("browser_pages", [lambda p=p: p.evaluate(COUNTERS) for p in pages])
            ups = [(y["updates"] - x["updates"]) / (y["now"] - x["now"]) for x, y in zip(a, b)]
            rafs = [(y["rafs"] - x["rafs"]) / (y["now"] - x["now"]) for x, y in zip(a, b)]
            r.update({"updates_per_page_per_s_min": round(min(ups), 1),
                      "updates_per_page_per_s_median": round(float(np.median(ups)), 1),
                      "animation_frames_per_page_per_s_median": round(float(np.median(rafs)), 1)})
            close_pages(pages)
            time.sleep(args.settle)
            phase("no_page")
    ph = out["phases"]
    base = [p["fps"] for p in ph if p["case"] == "no_page"]
    out["no_page_fps"] = {"mean": round(float(np.mean(base)), 2), "min": min(base), "max": max(base)}
    for case in ("stream_clients", "browser_pages"):
        drops = []
        for i, p in enumerate(ph):
            if p["case"] == case:
                around = (ph[i - 1]["fps"] + ph[i + 1]["fps"]) / 2      # the no-page phases either side
                drops.append(100 * (1 - p["fps"] / around))
        fps = [p["fps"] for p in ph if p["case"] == case]
        out[case] = {"fps_mean": round(float(np.mean(fps)), 2),
                     "drop_percent_each": [round(d, 1) for d in drops],
                     "drop_percent_mean": round(float(np.mean(drops)), 1)}
    return out


def page_cost_run(args) -> dict:
    """What one page costs its browser while it follows a camera at `--camera-fps`: the
    browser's CPU (all its processes) per second and per update, and the page's main thread
    (Chromium's own Performance metrics). The companion is on the first core, the browser on
    the others, so neither's figure holds the other's work."""
    companion_cpus, others = split_cpus(True)
    out = {"camera_fps": args.camera_fps, "seconds": args.window}
    with demo(args.camera_fps, companion_cpus, args.video) as (url, pid), chromium(others) as browser:
        page = browser.new_page(viewport=VIEWPORT, bypass_csp=True)
        page.goto(url)
        page.wait_for_function(cars_drawn(BIG_CARS if args.video == "4k" else DEMO_CARS), timeout=60000)
        cdp = page.context.new_cdp_session(page)
        cdp.send("Performance.enable")
        time.sleep(args.settle)
        me = os.getpid()

        def browser_cpu() -> float:
            table = _proc_table()
            return sum(table[p][1] for p in _tree(table, me) - {me} - _tree(table, pid) if p in table)

        def metrics() -> dict:
            return {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}

        m0, c0, u0, t0 = metrics(), browser_cpu(), page.evaluate("window.companion.updates"), time.monotonic()
        time.sleep(args.window)
        m1, c1, u1, t1 = metrics(), browser_cpu(), page.evaluate("window.companion.updates"), time.monotonic()
        secs, updates = t1 - t0, u1 - u0
        out.update(updates_per_s=round(updates / secs, 1),
                   browser_cores=round((c1 - c0) / secs, 3),
                   browser_ms_per_update=round(1000 * (c1 - c0) / max(updates, 1), 2),
                   main_thread_s_per_s={k: round((m1[k] - m0[k]) / secs, 3)
                                        for k in ("TaskDuration", "ScriptDuration", "LayoutDuration",
                                                  "RecalcStyleDuration")},
                   layouts_per_s=round((m1["LayoutCount"] - m0["LayoutCount"]) / secs, 1))
        page.close()
    say(f"page cost: {out}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=30, help="latency: seconds collected per case")
    ap.add_argument("--window", type=float, default=15, help="fan-out: seconds per phase")
    ap.add_argument("--pages", type=int, default=10, help="browsers open at once")
    ap.add_argument("--flat-fps", type=float, default=100,
                    help="fan-out: frames per second asked for the flat-out case (100 or more: as fast as it goes; 0: left out)")
    ap.add_argument("--camera-fps", type=float, default=30,
                    help="fan-out: frames per second of the camera-paced case (a webcam's rate)")
    ap.add_argument("--rounds", type=int, default=2, help="fan-out: times each case is run")
    ap.add_argument("--source", choices=("video", "synthetic"), default="video",
                    help="fan-out: the demo decoded from a recording in a loop (steady), or rendered as it plays")
    ap.add_argument("--video", default="/tmp/companion-bench-demo.avi",
                    help="fan-out: the recording of the demo (made first if it is not there); "
                         "latency: 4k for the 4K table's video at --camera-fps instead of the synthetic demo")
    ap.add_argument("--server-args", default="",
                    help="latency with --video 4k: options for bench.page_server (e.g. \"--newest --gray --prefetch 0\")")
    ap.add_argument("--settle", type=float, default=4, help="seconds to let things settle before measuring")
    ap.add_argument("--quiet", type=float, default=0.15,
                    help="the most CPU (in cores) other processes may take while measuring")
    ap.add_argument("--tries", type=int, default=2, help="times to measure a phase other processes disturbed")
    ap.add_argument("--wait", type=float, default=60, help="seconds to wait for a quiet machine before a phase")
    ap.add_argument("--only", choices=("latency", "fanout", "page-cost"), help="run one part only")
    args = ap.parse_args()
    result = {"cpu_count": os.cpu_count(), "load_average_at_start": os.getloadavg()}
    split = len(os.sched_getaffinity(0)) > 1
    if args.only in (None, "latency"):
        result["latency_shared_cores"] = latency_run(args, pinned=False)
        say(json.dumps(result["latency_shared_cores"]))
        if split:
            result["latency_companion_on_its_own_core"] = latency_run(args, pinned=True)
            say(json.dumps(result["latency_companion_on_its_own_core"]))
    if args.only in (None, "page-cost") and split:
        result["page_cost"] = page_cost_run(args)
    if args.only in (None, "fanout"):
        for fps in (args.camera_fps, args.flat_fps):
            if not fps:                 # 0: that case is left out
                continue
            rate = "flat_out" if fps >= 100 else f"camera_{fps:g}fps"
            result[f"fanout_{rate}_shared_cores"] = fanout_run(args, False, fps)
            say(json.dumps(result[f"fanout_{rate}_shared_cores"]))
            if split:
                result[f"fanout_{rate}_companion_on_its_own_core"] = fanout_run(args, True, fps)
                say(json.dumps(result[f"fanout_{rate}_companion_on_its_own_core"]))
    result["load_average_at_end"] = os.getloadavg()
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

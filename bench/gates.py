"""What the race tracker costs a frame: a pack of cars driving through gates.

    python -m bench.gates [--cars 5] [--gates 4] [--frames 3000]

The tracker runs on every camera frame, so it must leave the frame's time to the
camera: the target is well under 1 ms a frame for five cars and four gates. Prints
the median and 95th percentile over the frames, and the crossings counted.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from companion.geometry import Gate
from companion.race import RaceTracker


class _Car:
    def __init__(self, id: int) -> None:
        self.id, self.length_mm, self.width_mm, self.name = id, 75.0, 32.0, f"car {id}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cars", type=int, default=5)
    p.add_argument("--gates", type=int, default=4)
    p.add_argument("--frames", type=int, default=3000)
    args = p.parse_args(argv)
    gates = [Gate((200.0 + 200 * k, 300.0 + 40 * args.cars), (200.0 + 200 * k, 100.0), f"g{k}")
             for k in range(args.gates)]
    race = RaceTracker(gates, [_Car(i) for i in range(args.cars)])
    times_ms = []
    for f in range(args.frames):
        x = 100 + (200 * args.gates + 200) * f / args.frames
        poses = [{"id": i, "x_mm": x + 7 * i, "y_mm": 130 + 30 * i, "heading_deg": 0.0, "stale": False,
                  "sigma_mm": 0.2} for i in range(args.cars)]
        t0 = time.perf_counter()
        race.update(f, f / 30, poses)
        times_ms.append((time.perf_counter() - t0) * 1000)
    times_ms.sort()
    print(json.dumps({"cars": args.cars, "gates": args.gates, "frames": args.frames,
                      "median_ms": round(statistics.median(times_ms), 4),
                      "p95_ms": round(times_ms[int(0.95 * len(times_ms))], 4),
                      "crossings": len(race.crossings)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Time the quick-start study (``planner study``: embedded DL 2019 passage, nDCG@10) end to end.

Run by hand (not by pytest)::

    /work/venv/bin/python benchmarks/bench_study.py [--repeats 3] [--jobs 1]

Each repeat runs ``planner study -o <tmp> --quiet`` in a fresh interpreter (so imports
count, as for a user) and prints wall-clock and CPU seconds; the requirement is under
30 s wall on a 2-core machine. It also times the study without writing the report
(in-process) to show how the time splits between computing and writing.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LIMIT = 30.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    walls = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeats):
            out = Path(tmp) / f"r{i}"
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "planner", "study", "-o", str(out), "--quiet",
                                   "--jobs", str(args.jobs)], capture_output=True, text=True)
            wall = time.perf_counter() - t0
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            if proc.returncode != 0:
                print(proc.stderr, file=sys.stderr)
                return 1
            walls.append(wall)
            print(f"run {i + 1}: wall {wall:6.2f} s   cpu {cpu:6.2f} s   "
                  f"({'OK' if wall < LIMIT else 'OVER'} the {LIMIT:.0f} s limit)")
    from planner.study import run_study

    t0 = time.perf_counter()
    run_study(None, write=False, quiet=True)
    compute = time.perf_counter() - t0
    walls.sort()
    print(f"quick start, {args.repeats} runs, jobs={args.jobs}: median wall {walls[len(walls) // 2]:.2f} s, "
          f"best {walls[0]:.2f} s; in-process compute without the report {compute:.2f} s; "
          f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}")
    med = walls[len(walls) // 2]
    print(f"median wall {med:.2f} s: ratio to goal {med / LIMIT:.2f} (goal {LIMIT:.0f} s: <= 1)")
    return 0 if walls[len(walls) // 2] < LIMIT else 1


if __name__ == "__main__":
    raise SystemExit(main())

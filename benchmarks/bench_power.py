"""Benchmark of the noncentral-t power of the analytic and predictive engines (issue 24).

    /work/venv/bin/python benchmarks/bench_power.py [--systems 100] [--counts 20] [--repeats 5]

1. Accuracy: the largest absolute difference between
   :func:`planner.simulate.analytic.t_power` and the exact noncentral t
   (``scipy.stats.nct`` through :func:`planner.plan.power.t_power_exact`) over df 1-9,999
   and noncentrality 0-150.
2. Time: the power (at ``min_diff``) and the discriminative power (at each pair's
   ``|dbar|``) of every pair of an S-system matrix (TREC-7 ad hoc AP, first S runs;
   synthetic when the shared data is absent) at 20 topic counts 10-200, CPU time with a
   cold cache (the splines rebuilt), best of ``--repeats``; then the whole
   ``predict(method="analytic")`` call. Goal: the power under 0.1 s at 100 systems.

The last line prints the time against its goal.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner import simulate
from planner.plan.power import t_power_exact
from planner.simulate import analytic

DATA = Path(os.environ.get("PLANNER_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
GOAL = 0.1


def matrix(S: int) -> np.ndarray:
    f = DATA / "trec-adhoc" / "adhoc7_ap.csv"
    if f.exists():
        import pandas as pd

        x = pd.read_csv(f).to_numpy(dtype=float).T
        if x.shape[0] >= S:
            return x[:S]
    rng = np.random.default_rng(0)
    return np.clip(rng.beta(2, 5, (S, 1)) * 0.6 + rng.normal(0, 0.12, (1, 50)) + rng.normal(0, 0.1, (S, 50)), 0, 1)


def max_error() -> float:
    nc = np.concatenate([np.linspace(0, 12, 2401), np.random.default_rng(1).uniform(0, 150, 5000)])
    worst = 0.0
    for df in (1, 2, 3, 4, 5, 7, 10, 19, 29, 49, 99, 199, 499, 999, 9999):
        crit = stats.t.ppf(0.975, df)
        worst = max(worst, float(np.abs(analytic.t_power(nc, df, crit) - t_power_exact(df, nc, 0.05)).max()))
    return worst


def power_time(x: np.ndarray, counts: np.ndarray, min_diff: float = 0.05) -> float:
    a, b = simulate.pair_index(x.shape[0])
    d = x[a] - x[b]
    dbar, s2 = d.mean(axis=1), d.var(axis=1, ddof=1)
    analytic._power_spline.cache_clear()
    t0 = time.process_time()
    for n in counts:
        crit = stats.t.ppf(0.975, n - 1)
        se = np.sqrt(s2 / n)
        with np.errstate(divide="ignore", invalid="ignore"):
            analytic.t_power(min_diff / se, n - 1, crit)
            analytic.t_power(np.abs(dbar) / se, n - 1, crit)
    return time.process_time() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", type=int, default=100)
    ap.add_argument("--counts", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    err = max_error()
    print(f"max |spline - exact noncentral t| over df 1-9,999, nc 0-150: {err:.1e} (goal <= 1e-6)")
    x = matrix(args.systems)
    counts = np.linspace(10, 200, args.counts).astype(int)
    P = x.shape[0] * (x.shape[0] - 1) // 2
    best = min(power_time(x, counts) for _ in range(args.repeats))
    cpu = []
    for _ in range(args.repeats):
        analytic._power_spline.cache_clear()
        t0 = time.process_time()
        simulate.predict(x, topics=list(counts), method="analytic")
        cpu.append(time.process_time() - t0)
    print(f"predict(method='analytic'), {P} pairs x {len(counts)} counts: {min(cpu):.3f} s CPU "
          f"(best of {args.repeats})")
    print(f"power + discriminative power, {P} pairs x {len(counts)} counts, cold cache: {best:.3f} s CPU; "
          f"ratio to goal {best / GOAL:.2f} (goal {GOAL} s: ratio <= 1), max error {err:.1e} (goal 1e-6)")
    return 0 if best <= GOAL and err <= 1e-6 else 1


if __name__ == "__main__":
    sys.exit(main())

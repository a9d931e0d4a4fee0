"""Pilot-based prediction against held-out topics on TREC 2006 Terabyte (149 topics).

For AP and nDCG: ``planner.pilot.validate`` with 25-topic pilots, topic counts
25, 50 and 62 (62 = half of the 124 held-out topics), ``--repeats`` random
splits (default 100) and 500 random pairs of disjoint held-out subsets per
repeat and n. Prints, per method and n, the mean predicted and observed mean
swap rate (and reversal rate), the median relative error over repeats and the
bootstrap standard error of that median (over repeats), then checks the
issue-4 goal: median relative error of the predicted mean swap rate at most
10% at every n, and smaller than the plug-in (``analytic``) model's.

Run by hand (not by pytest):

    /work/venv/bin/python benchmarks/bench_validate.py [--repeats 100] [--seed 2026]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from planner.collection import load_scores
from planner.pilot import validate

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-terabyte"


def _median_se(x: np.ndarray, rng: np.random.Generator, b: int = 2000) -> float:
    """Bootstrap standard error of the median of ``x`` (over repeats)."""
    idx = rng.integers(0, x.size, size=(b, x.size))
    return float(np.std(np.median(x[idx], axis=1), ddof=1))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--subsets", type=int, default=500)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--methods", default="predictive,predictive-pooled,predictive-pair,analytic")
    ap.add_argument("--data", default=str(DATA))
    args = ap.parse_args(argv)
    methods = tuple(args.methods.split(","))
    topics = (25, 50, 62)
    ok_all = True
    for name in ("terabyte2006_ap.csv", "terabyte2006_ndcg.csv"):
        scores = load_scores(Path(args.data) / name)
        t0 = time.perf_counter()
        v = validate(scores, pilot=25, topics=topics, repeats=args.repeats, rng=args.seed,
                     methods=methods, subsets=args.subsets)
        secs = time.perf_counter() - t0
        print(f"\n{name}: {v.n_systems} systems x {v.n_topics} topics, pilot 25, {v.repeats} repeats, "
              f"{v.subsets} subset pairs, seed {args.seed}: {secs:.1f} s")
        se_rng = np.random.default_rng(0)
        for stat in ("swap_rate", "reversal_rate"):
            rel = v.rel_error(stat)
            print(f"  {stat}: method, n, predicted mean, observed mean, median rel. error (+- bootstrap se), p90")
            for m in methods:
                for j, n in enumerate(topics):
                    row = next(r for r in v.rows if r["statistic"] == stat and r["method"] == m
                               and r["n_topics"] == n)
                    print(f"    {m:>18} {n:>3}  {row['predicted_mean']:.4f}  {row['observed_mean']:.4f}  "
                          f"{row['rel_error_median']:.3f} +- {_median_se(rel[m][:, j], se_rng):.3f}  "
                          f"{row['rel_error_p90']:.3f}")
        med = {m: [next(r["rel_error_median"] for r in v.rows if r["statistic"] == "swap_rate"
                        and r["method"] == m and r["n_topics"] == n) for n in topics] for m in methods}
        if "predictive" in med and "analytic" in med:
            goal = all(p <= 0.10 for p in med["predictive"])
            better = all(p < q for p, q in zip(med["predictive"], med["analytic"]))
            ok_all &= goal and better
            print(f"  goal (predictive swap median rel. error <= 10% at 25, 50, 62): {'met' if goal else 'NOT met'}; "
                  f"smaller than analytic at every n: {'yes' if better else 'NO'}")
    return 0 if ok_all else 1


if __name__ == "__main__":
    sys.exit(main())

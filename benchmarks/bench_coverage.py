"""Coverage of the 95% interval on n of ``size_for_target`` (not run by pytest).

    /work/venv/bin/python benchmarks/bench_coverage.py [--data CSV] [--topics 43] [--trials 200]
        [--method analytic] [--target swap_rate:0.05] [--resamples 200] [--seed 777]

The population is a whole collection's topics (default TREC 2006 Terabyte AP, 149 topics);
its "true" count is what ``size_for_target`` answers on all of them. Each trial draws a
smaller collection of ``--topics`` topics from it with replacement (default 43, TREC DL
2019's size), answers the same target on it with a topic-resampling interval on n
(``resamples``, seed = the trial's index), and records whether the interval holds the true
count, or misses it above or below. Printed: the true count, the median point count, the
interval's coverage and the shares of misses on each side. docs/planning.md ("Interval on
n") quotes the figures of the default run with ``--method analytic`` and ``predictive``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

from planner import plan
from planner.collection import load_scores

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(DATA / "trec-terabyte" / "terabyte2006_ap.csv"))
    ap.add_argument("--topics", type=int, default=43)
    ap.add_argument("--trials", type=int, default=200)
    ap.add_argument("--method", default="analytic")
    ap.add_argument("--target", default="swap_rate:0.05")
    ap.add_argument("--resamples", type=int, default=200)
    ap.add_argument("--seed", type=int, default=777)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    target, value = args.target.split(":")
    value = float(value)
    m = load_scores(args.data)
    x = m.topic_scores()
    kw = dict(target=target, value=value, method=args.method, variance="pair")
    truth = plan.size_for_target(x, n_resamples=0, **kw).n_topics
    print(f"{args.data}: {x.shape[0]} systems x {x.shape[1]} topics; {target} {value:g} with {args.method}: "
          f"{truth} topics on all of them (the true count here)")
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    points, covered, above, below, unbounded = [], 0, 0, 0, 0
    for k in range(args.trials):
        sample = x[:, rng.integers(0, x.shape[1], args.topics)]
        r = plan.size_for_target(sample, n_resamples=args.resamples, rng=k, **kw)
        if r.n_topics is None:
            unbounded += 1
            continue
        points.append(r.n_topics)
        lo = 0 if r.lower is None else r.lower
        hi = np.inf if r.upper is None else r.upper
        covered += lo <= truth <= hi
        above += truth > hi
        below += truth < lo
    done = len(points)
    print(f"{args.trials} samples of {args.topics} topics ({time.perf_counter() - t0:.0f} s): median count "
          f"{np.median(points):.0f} (true {truth}); the 95% interval on n holds the true count in "
          f"{covered / done:.0%} of them; the true count lies above the interval in {above / done:.0%}, "
          f"below it in {below / done:.0%}" + (f"; {unbounded} samples reached no count" if unbounded else ""))


if __name__ == "__main__":
    main()

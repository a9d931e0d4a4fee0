"""Coverage of the 95% interval on n of a stack of collections (stacked strata; not run by pytest).

    /work/venv/bin/python benchmarks/bench_stack_coverage.py [--draws 40] [--resamples 100] [--seed 1]
        [--jobs 2] [--draw-small 20] [--draw-large 43]

Each stack is two collections of ../shared/data with their own systems (TREC-5 + TREC-6 AP,
TREC-6 + TREC-7 P@10, Web 2010 + 2011 nDCG@20, TREC 2006 Terabyte AP + Web 2010 AP), planned as
``planner.plan.StackedStrata``: the width 0.05 and power 0.8 (``min_diff`` 0.05) of a pair's
stratified mean difference, Erho2 0.95 and Phi 0.9. The whole stack's count is the truth; each draw
takes, without replacement, 20 topics of every 50-topic stratum and 43 of Terabyte's 149 (by
default), and
answers with two 95% intervals on n: the stratified jackknife (``jackknife_intervals``, what a
study reports) and the topic resamples drawn within each stratum (``resampled_n``, moved onto the
count by ``count_interval``: what a study reported before). Printed per row: the coverage of each
(its Clopper-Pearson 95% interval over the draws in brackets), the jackknife interval's coverage of the
population's count that it implies (``bench_coverage.population_coverage``, the draws' share of the
stack's topics), the median ratio of the draw count
to the whole stack's, and the median width of the jackknife interval over the resamples'. Draw
``d`` of stack ``i`` takes its topics from ``default_rng([seed, i, d, k])`` (stratum ``k``) and
its resamples from ``default_rng([seed, i, d])``, so results do not depend on ``--jobs``.
"""

from __future__ import annotations

import argparse
import os
import warnings
from pathlib import Path

import numpy as np
from bench_coverage import covers, load, population_coverage, run_jobs, topic_count, width  # (beside this)
from scipy import stats

STACKS = (("trec-adhoc/adhoc5_ap.csv", "trec-adhoc/adhoc6_ap.csv"),
          ("trec-adhoc/adhoc6_p10.csv", "trec-adhoc/adhoc7_p10.csv"),
          ("trec-web/web2010_ndcg20.csv", "trec-web/web2011_ndcg20.csv"),
          ("trec-terabyte/terabyte2006_ap.csv", "trec-web/web2010_ap.csv"))
TARGETS = (("ci_width", 0.05), ("power", 0.8), ("erho2", 0.95), ("phi", 0.9))
#: strata of this many topics or fewer are "small" (the 50-topic ones; Terabyte's 149 is large)
SMALL = 60


def draw_size(topics: int, args: argparse.Namespace) -> int:
    """How many topics a draw takes from a stratum of ``topics`` topics (``--draw-small`` or ``--draw-large``)."""
    return args.draw_small if topics <= SMALL else args.draw_large


def _answers(mats: list[np.ndarray], rng: np.random.Generator | None, resamples: int) -> list[tuple]:
    """Per target: (n, jackknife low, high, resampled low, high); ends None where unbounded."""
    from planner.plan import StackedStrata, count_interval, jackknife_intervals, resampled_n
    st = StackedStrata.from_components([(0.0, 0.0, 0.0)] * len(mats), [x.shape[1] for x in mats]).refit(mats)
    ns = [st.smallest_n(t, v) for t, v in TARGETS]
    if rng is None:
        return [(n,) for n in ns]
    jk = jackknife_intervals(st, mats, TARGETS, 0.95)
    rs = resampled_n(st, mats, TARGETS, rng, resamples)
    out = []
    for n, iv, r in zip(ns, jk, rs):
        lo, hi = count_interval(r, n, 0.95) if n is not None else (None, None)
        out.append((n, iv.low, iv.high, lo, hi))
    return out


def _task(job: tuple) -> tuple:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    warnings.simplefilter("ignore")
    i, d, args = job
    mats = [load(p) for p in STACKS[i]]
    if d < 0:
        return (i, d), _answers(mats, None, 0)
    drawn = []
    for k, x in enumerate(mats):
        n0 = draw_size(x.shape[1], args)
        drawn.append(x[:, np.sort(np.random.default_rng([args.seed, i, d, k]).permutation(x.shape[1])[:n0])])
    return (i, d), _answers(drawn, np.random.default_rng([args.seed, i, d]), args.resamples)


def _row(i: int, k: int, full: list, draws: list, share: float) -> str:
    """One row; ``share``: the draws' share of the stack's topics (for the population's count)."""
    truth = full[k][0]
    held = [sum(covers(a[k][lo], a[k][lo + 1], truth) for a in draws) for lo in (1, 3)]
    ci = [stats.binomtest(h, len(draws)).proportion_ci(0.95) for h in held]
    ratio = np.median([np.inf if a[k][0] is None or not truth else a[k][0] / truth for a in draws])
    wr = np.median([width(a[k][1], a[k][2]) / max(width(a[k][3], a[k][4]), 1.0) for a in draws])
    name = " + ".join(Path(p).stem for p in STACKS[i]) + f" {TARGETS[k][0]}:{TARGETS[k][1]:g}"
    cov = [f"{h / len(draws):4.0%} [{c.low:.2f}, {c.high:.2f}]" for h, c in zip(held, ci)]
    pop = population_coverage([a[k][:3] for a in draws], truth, share)
    return f"{name:52s} {truth!s:>6s} {cov[0]:>18s} {pop:10.1%} {cov[1]:>18s} {ratio:8.2f} {wr:8.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    ap.add_argument("--draws", type=int, default=40, help="draws per stack (default 40)")
    ap.add_argument("--resamples", type=int, default=100, help="topic resamples of the old interval (default 100)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2, help="worker processes (results do not depend on it)")
    ap.add_argument("--draw-small", type=int, default=20, help="topics drawn from a 50-topic stratum (default 20)")
    ap.add_argument("--draw-large", type=int, default=43, help="topics drawn from Terabyte's 149 (default 43)")
    args = ap.parse_args()
    res = run_jobs(_task, [(i, d, args) for i in range(len(STACKS)) for d in range(-1, args.draws)], args.jobs)
    print(f"{args.draws} draws per stack without replacement ({args.draw_small} topics of a 50-topic stratum, "
          f"{args.draw_large} of a larger one), {args.resamples} resamples, seed {args.seed}")
    print(f"{'stack, target':52s} {'full n':>6s} {'jackknife':>18s} {'population':>10s} {'resamples':>18s} "
          f"{'draw/full':>8s} {'width':>8s}")
    for i in range(len(STACKS)):
        sizes = [topic_count(p) for p in STACKS[i]]
        share = sum(draw_size(T, args) for T in sizes) / sum(sizes)
        for k in range(len(TARGETS)):
            print(_row(i, k, res[(i, -1)], [res[(i, d)] for d in range(args.draws)], share))


if __name__ == "__main__":
    main()

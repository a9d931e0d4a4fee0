"""How far one collection's median draw count may lie from its own count by chance (not run by pytest).

    /work/venv/bin/python benchmarks/bench_median_noise.py [--collections 60] [--draws 100] [--size 50]
        [--n0 20] [--seed 1] [--jobs 2] [--targets swap_rate,power] [--rows 200] [FILE ...]

Issue 27's median goal reads, for each ~50-topic collection, the median over draws of 20 of its
topics of the count, over the count of the whole collection. A collection is one set of topics: a
method whose counts are right on average over collections still meets the goal on one collection
only up to that collection's luck. This measures that luck where it can be seen: on a collection
with many more topics (FILE, relative to ../shared/data; default the two TREC 2006 Terabyte
matrices, 149 topics), ``--collections`` sub-collections of ``--size`` topics are drawn without
replacement, and from each ``--draws`` draws of ``--n0`` of its topics, as bench_coverage.py draws
from a 50-topic collection. For each target (``swap_rate`` 0.05 with the default method and the
pair variance; ``power`` 0.8 as a study solves it, the paired t-test at ``min_diff`` 0.05 on the
median pair's variance), it prints the median over sub-collections of the ratio of median draw
count to sub-collection count with its 5-95% range and the share outside 0.90-1.10; the
ratio's log-sd split into the draws' noise (2,000 resamples of each sub-collection's draws) and
the sub-collection's own (the rest; over ``sqrt(1 - size / T)`` for independent collections, since
the sub-collections share FILE's ``T`` topics, as means drawn without replacement do); the share of
~50-topic rows a benchmark of ``--rows`` draws would find outside 0.90-1.10 from both (normal in the
log, about the observed centre); and the
medians of the sub-collection count and of the draw count over the whole FILE's count (how the
count moves with the topics it is learnt from). Sub-collection ``c`` of FILE ``i`` is
``default_rng([seed, i, c])``'s permutation's first ``--size`` topics, its draws the same
generator's next permutations, so results do not depend on ``--jobs``.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
# (a script beside this one)
from bench_coverage import DATA, TARGETS, answers, load, resampled_medians, run_jobs, topic_count

FILES = ("trec-terabyte/terabyte2006_ap.csv", "trec-terabyte/terabyte2006_ndcg.csv")
#: the band the median goal asks each row's median draw count to lie in, over the whole collection's
BAND = (0.90, 1.10)


def counts(x: np.ndarray, targets: list[str]) -> list[float]:
    """The count of each target on the (S, T) matrix ``x``, as bench_coverage.py answers it with
    ``--resamples 0 --design pair`` (inf where none suffices)."""
    from planner import methods
    how = argparse.Namespace(targets=targets, design="pair", resamples=0, method=methods.DEFAULT_METHOD)
    # (nothing is drawn without resamples: the generator is never used)
    return [np.inf if a[0] is None else float(a[0]) for a in answers(x, np.random.default_rng(0), how)
            if a is not None]


def _task(job: tuple) -> tuple:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    warnings.simplefilter("ignore")
    i, c, path, args = job
    x = load(path)
    if c < 0:       # the whole file
        return (i, c), (counts(x, args.targets), [])
    g = np.random.default_rng([args.seed, i, c])
    sub = x[:, np.sort(g.permutation(x.shape[1])[:args.size])]
    draws = [counts(sub[:, np.sort(g.permutation(args.size)[:args.n0])], args.targets) for _ in range(args.draws)]
    return (i, c), (counts(sub, args.targets), draws)


def draws_noise(r: np.ndarray, seed: int) -> float:
    """The variance of the log median of the draw ratios ``r`` from 2,000 resamples of the draws."""
    return float(np.var(np.log(resampled_medians(r, seed, 4))))


def share_outside(centre: float, sd: float) -> float:
    """The share of a normal log ratio of ``centre`` and ``sd`` outside :data:`BAND`."""
    lo, hi = np.log(BAND)
    return float(stats.norm.cdf((lo - centre) / sd) + stats.norm.sf((hi - centre) / sd))


def summary(path: str, k: int, target: str, full: float, subs: list[tuple], args: argparse.Namespace) -> str:
    """Two lines: target ``k`` of FILE ``path`` over its sub-collections ``subs`` ((count, draws) each)."""
    logs, noise, whole, drawn = [], [], [], []
    for own, draws in subs:
        r = np.array([d[k] for d in draws]) / own[k]
        logs.append(np.log(np.median(r)))
        noise.append(draws_noise(r, args.seed))
        whole.append(own[k] / full)
        drawn.append(np.median([d[k] for d in draws]) / full)
    lr = np.array(logs)
    centre = float(np.median(lr))
    total, own_noise = float(np.var(lr, ddof=1)), float(np.mean(noise))
    coll = np.sqrt(max(total - own_noise, 0.0))
    # sub-collections of one file share its topics: independent collections vary more, as means do
    indep = coll / np.sqrt(1.0 - args.size / args.topics[path])
    rows = [share_outside(centre, np.sqrt(c ** 2 + own_noise * args.draws / args.rows)) for c in (coll, indep)]
    ratio = np.exp(lr)
    p5, p95 = np.percentile(ratio, [5, 95])
    out = np.mean((ratio < BAND[0]) | (ratio > BAND[1]))
    return (f"{Path(path).stem} {target}: whole {full:g}; median draw/sub-collection {np.exp(centre):.3f} "
            f"(5-95% {p5:.3f}-{p95:.3f}), outside {BAND[0]:g}-{BAND[1]:g} {out:.0%}; sub-collection/whole "
            f"{np.median(whole):.3f}, median draw/whole {np.median(drawn):.3f}\n"
            f"    log-sd {np.sqrt(total):.3f}: the draws' noise {np.sqrt(own_noise):.3f}, the sub-collection's "
            f"{coll:.3f} ({indep:.3f} for independent collections); rows of {args.rows} draws outside "
            f"{BAND[0]:g}-{BAND[1]:g}: {rows[0]:.0%} ({rows[1]:.0%})")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("files", nargs="*", default=list(FILES), help="relative to ../shared/data")
    ap.add_argument("--collections", type=int, default=60)
    ap.add_argument("--draws", type=int, default=100)
    ap.add_argument("--size", type=int, default=50, help="topics of each sub-collection")
    ap.add_argument("--n0", type=int, default=20, help="topics of each draw from a sub-collection")
    ap.add_argument("--rows", type=int, default=200, help="draws per row of the benchmark the shares are for")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--targets", default="swap_rate,power", help="of swap_rate, kendall_tau, power, ci_width")
    args = ap.parse_args(argv)
    args.targets = args.targets.split(",")
    known = [t for t, _ in TARGETS]
    if bad := [t for t in args.targets if t not in known]:
        ap.error(f"--targets: unknown {', '.join(bad)}; expected some of {', '.join(known)}")
    if not 2 <= args.n0 < args.size:
        ap.error(f"--n0 must be at least 2 and below --size ({args.size})")
    args.topics = {}        # each file's topic count, read once
    for f in args.files:
        if not (DATA / f).is_file():
            ap.error(f"{f}: no such file under {DATA}")
        args.topics[f] = topic_count(f)
        if args.size >= args.topics[f]:
            ap.error(f"--size must be below the {args.topics[f]} topics of {f}")
    return args


def main() -> None:
    args = parse_args()
    jobs = [(i, c, p, args) for i, p in enumerate(args.files) for c in range(-1, args.collections)]
    res = run_jobs(_task, jobs, args.jobs)
    print(f"{args.collections} sub-collections of {args.size} topics, {args.draws} draws of {args.n0} from each, "
          f"seed {args.seed}")
    for i, path in enumerate(args.files):
        full = res[(i, -1)][0]
        subs = [res[(i, c)] for c in range(args.collections)]
        for k, t in enumerate(t for t, _ in TARGETS if t in args.targets):
            print(summary(path, k, t, full[k], subs, args))


if __name__ == "__main__":
    main()

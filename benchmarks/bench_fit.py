"""Speed and memory of planner.variance (run by hand, not by pytest).

    /work/venv/bin/python benchmarks/bench_fit.py [--systems 1000] [--topics 10000]

1. ANOVA fit of a synthetic S x T matrix (default 1,000 x 10,000), then pair statistics
   and the `pair` variances of all S (S - 1) / 2 pairs (499,500). Goal: < 5 s, < 4 GiB.
2. REML (the direct engine and statsmodels MixedLM) beside ANOVA on the TREC DL 2020
   passage nDCG@10 matrix (../shared/data; skipped when absent).
3. REML on a 200 x 150 synthetic matrix with 5% of the cells missing, with BLAS on as many
   threads as it finds and on one (planner limits it to one there: planner._blas), CPU
   time in paired, interleaved runs (``--rounds``); the last line prints the ratio
   many / one threads (goal >= 1: one thread is no slower).

Peak memory is printed twice: numpy/python allocations traced by tracemalloc during each
step (beyond what existed before it), and the process's maximum resident set size.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from planner.errors import DegenerateDataWarning
from planner.scores import ScoreMatrix
from planner.variance import fit, pair_stats, pair_variance
from planner.variance.reml import RestrictedLikelihood, reml_direct

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def measure(label, fn):
    tracemalloc.start()
    tracemalloc.reset_peak()
    t0 = time.perf_counter()
    out = fn()
    dt = time.perf_counter() - t0
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{label:<46} {dt:8.3f} s   peak {peak / 2**30:6.3f} GiB")
    return out, dt


def _reml_unlimited(x: np.ndarray) -> None:
    """reml_direct's optimisation without its one-thread limit (the same calls)."""
    from scipy import optimize

    from planner.variance.anova import moment_start

    lik = RestrictedLikelihood(x)
    vs, vt, ve, _ = moment_start(lik.x)
    opts = {"ftol": 1e-14, "gtol": 1e-10, "maxiter": 500}
    optimize.minimize(lik.objective_grad, np.sqrt([vs / ve, vt / ve]), jac=True, method="L-BFGS-B", options=opts)


def reml_threads(rounds: int, seed: int) -> float:
    """CPU seconds of REML (200 x 150, 5% missing) on many BLAS threads over one, best of each."""
    rng = np.random.default_rng(seed)
    x = 0.3 + rng.normal(0, 0.07, (200, 1)) + rng.normal(0, 0.15, (1, 150)) + rng.normal(0, 0.12, (200, 150))
    x[rng.random(x.shape) < 0.05] = np.nan
    many, one = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        reml_direct(x, "warm-up")
        for _ in range(rounds):
            with threadpool_limits(limits=None):
                t0 = time.process_time()
                _reml_unlimited(x)
                many.append(time.process_time() - t0)
            t0 = time.process_time()
            reml_direct(x, "one thread")     # limits BLAS to one thread itself
            one.append(time.process_time() - t0)
    print(f"REML 200 x 150, 5% missing, CPU s over {rounds} paired rounds: "
          f"BLAS threads as found {min(many):.3f}-{max(many):.3f}, one thread {min(one):.3f}-{max(one):.3f}")
    return min(many) / min(one)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--systems", type=int, default=1000)
    ap.add_argument("--topics", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=5, help="paired REML rounds (many / one BLAS threads)")
    args = ap.parse_args(argv)
    S, T = args.systems, args.topics
    rng = np.random.default_rng(args.seed)
    x = np.clip(0.3 + rng.normal(0, 0.07, (S, 1)) + rng.normal(0, 0.15, (1, T))
                + rng.normal(0, 0.12, (S, T)), 0, 1)
    m = ScoreMatrix.build(x, [f"s{i}" for i in range(S)], [f"t{j}" for j in range(T)], warn=False)
    del x
    print(f"synthetic {S} systems x {T} topics ({S * (S - 1) // 2} pairs); numpy {np.__version__}")
    total = 0.0
    comp, dt = measure("ANOVA fit", lambda: fit(m))
    total += dt
    ps, dt = measure("pair_stats (dbar, s2_d of all pairs)", lambda: pair_stats(m))
    total += dt
    _, dt = measure("pair_variance('pair') reusing pair_stats", lambda: pair_variance(m, "pair", pairs=ps))
    total += dt
    _, dt = measure("pair_variance('percentile:95')", lambda: pair_variance(m, "percentile:95", pairs=ps))
    total += dt
    print(f"{'total':<46} {total:8.3f} s   (goal < 5 s)")
    print(f"check: mean s2_d / (2 var_e) - 1 = {ps.s2_d.mean() / (2 * comp.var_e) - 1:.2e}")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20   # kB -> GiB (Linux)
    print(f"process max RSS so far {rss:.3f} GiB (goal < 4 GiB)")

    dl = DATA / "trec-dl2020-passage" / "reference" / "matrix_official_nDCG_at_10.csv"
    if dl.is_file():
        import pandas as pd

        df = pd.read_csv(dl).set_index("topic")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            d = ScoreMatrix.from_frame(df, source=str(dl))
            a, ta = measure(f"DL 2020 nDCG@10 {d.n_systems}x{d.n_topics}: ANOVA", lambda: fit(d, method="anova"))
            # import scipy / statsmodels outside the timings
            fit(d.take(systems=range(3)), method="reml")
            fit(d.take(systems=range(3)), method="reml", reml_engine="statsmodels")
            r, tr = measure(f"DL 2020 nDCG@10 {d.n_systems}x{d.n_topics}: REML (direct)",
                            lambda: fit(d, method="reml"))
            q, tq = measure(f"DL 2020 nDCG@10 {d.n_systems}x{d.n_topics}: REML (statsmodels)",
                            lambda: fit(d, method="reml", reml_engine="statsmodels"))
        for label, e in (("ANOVA", a), ("REML direct", r), ("REML statsmodels", q)):
            print(f"  {label:<17} var_s {e.var_s:.6f}  var_t {e.var_t:.6f}  var_e {e.var_e:.6f}")
        print(f"REML time / ANOVA time: direct {tr / ta:.0f}x, statsmodels {tq / ta:.0f}x")
    else:
        print(f"({dl} not found: REML timing skipped)")
    ratio = reml_threads(args.rounds, args.seed)
    print(f"REML CPU time, BLAS threads as found / one thread: ratio {ratio:.1f}x (goal >= 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark of planner.simulate (issue 4, "Speed"). Run by hand, not by pytest:

    /work/venv/bin/python benchmarks/bench_bootstrap.py [--resamples 10000] [--loop-pairs 4]

1. Bootstrap, all pairs of a 100-system x 50-topic real matrix (TREC-7 ad hoc AP,
   first 100 runs; a realistic synthetic matrix when the shared data is absent),
   R resamples at n = 50: times ``predict(method="bootstrap")`` and the plain
   per-pair loop of the issue (draw n topic indices with replacement, average both
   systems, record the difference and whether the order flips, sort for
   percentiles) on a few pairs, scaled per pair, in the same run; prints the
   per-pair ratio (goal >= 3000) and checks that the loop's reversal rates and
   percentile intervals agree with planner's within 4 Monte Carlo standard errors.
   The timed planner call computes everything planner reports (reversal, swap,
   Kendall tau, interval width, power and discriminative power: its per-resample
   t-tests included, per-pair arrays kept), more than the loop; a second timing
   without the t-tests is printed for comparison. The machine may be shared and its
   load varies: CPU times (``time.process_time``) are compared within each of
   ``--repeats`` rounds (planner, one loop pair, planner without t-tests, back to back),
   and the ratio printed is the median of the rounds' ratios.
   Then the same problem with stratified resampling (two strata of alternate
   topics, proportional allocation), timed against the uniform bootstrap.
2. T-independence: the same bootstrap (n = 50) on 100 synthetic systems with T = 50, 100,
   200, 400, 1,000 and 5,000 topics; prints each time(T) / time(T = 50), the median of the
   rounds' ratios (each round times every size, back to back), and the largest (goal <= 1.5).
3. Memory: the peak of traced allocations (tracemalloc, numpy's included) of every
   method, with one to three strata, on the real matrix and synthetic ones from
   30 x 200 to 1,000 x 100, against the bound the module docstring of
   ``planner.simulate`` states (``memory_bound``; exit code 1 when over).
4. Analytic curves for 20 topic counts on a 1,000 x 1,000 synthetic matrix
   (499,500 pairs): goal under 5 seconds.

The last line prints the seed-recipe ratio and the T-independence ratio against their goals.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner import simulate
from planner.errors import DegenerateDataWarning
from planner.methods import Engine
from planner.methods import method as registered
from planner.scores import ScoreMatrix

DATA = Path(os.environ.get("PLANNER_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def real_matrix() -> ScoreMatrix:
    f = DATA / "trec-adhoc" / "adhoc7_ap.csv"
    if f.exists():
        import pandas as pd

        df = pd.read_csv(f)
        x = df.to_numpy(dtype=float).T[:100]
        names = list(df.columns)[:100]
        src = f"{f} (first 100 runs)"
    else:
        rng = np.random.default_rng(0)
        x = np.clip(rng.beta(2, 5, (100, 1)) * 0.6 + rng.normal(0, 0.12, (1, 50))
                    + rng.normal(0, 0.1, (100, 50)), 0, 1)
        names = [f"s{i}" for i in range(100)]
        src = "synthetic 100 x 50"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return ScoreMatrix.build(x, names, [str(i) for i in range(x.shape[1])], source=src)


def plain_loop(x, a, b, n, trials, rng, alpha=0.05):
    T = x.shape[1]
    obs = np.sign(x[a].mean() - x[b].mean())
    diffs = np.empty(trials)
    flips = 0.0
    for i in range(trials):
        idx = rng.integers(0, T, n)
        diff = x[a, idx].mean() - x[b, idx].mean()
        diffs[i] = diff
        s = np.sign(diff)
        flips += 0.5 if (s == 0 or obs == 0) else float(s != obs)
    diffs.sort()
    lo, hi = np.percentile(diffs, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return flips / trials, hi - lo, diffs.std()


def bench_bootstrap(R: int, loop_pairs: int, repeats: int, n: int = 50) -> bool:
    m = real_matrix()
    P = m.n_systems * (m.n_systems - 1) // 2
    print(f"bootstrap: {m.source}: {m.n_systems} systems, {P} pairs, n = {n}, R = {R}")
    # the machine is shared and its load varies: each round times planner (with and without
    # its t-tests) and one loop pair back to back; the ratio is the median of the rounds'
    # ratios (a load that moves between rounds moves both sides of a round alike)
    rng = np.random.default_rng(2)
    t_pl, c_pl, t_lp, c_lp, t_lean, c_lean = [], [], [], [], [], []
    res = []
    # one call first, untimed: numba's import and the load of its cached code (once a process)
    c = simulate.predict(m, topics=[n], method="bootstrap", n_resamples=R, rng=1, keep_pairs=True)
    rev = c.per_pair["reversal_rate"][:, 0]
    # loop pairs: close pairs (reversal between 2% and 45%) spread over the list
    cand = np.flatnonzero((rev > 0.02) & (rev < 0.45))
    pick = cand[np.linspace(0, cand.size - 1, loop_pairs).astype(int)]
    lean = None
    for rep in range(repeats):
        w0, p0 = time.perf_counter(), time.process_time()
        c = simulate.predict(m, topics=[n], method="bootstrap", n_resamples=R, rng=1, keep_pairs=True)
        t_pl.append(time.perf_counter() - w0)
        c_pl.append(time.process_time() - p0)
        p = pick[rep % loop_pairs]
        w0, p0 = time.perf_counter(), time.process_time()
        out = plain_loop(m.values, c.pair_a[p], c.pair_b[p], n, R, rng)
        t_lp.append(time.perf_counter() - w0)
        c_lp.append(time.process_time() - p0)
        if rep < loop_pairs:
            res.append((p, out))
        # the loop computes only the reversal rate and the percentile interval; planner
        # without its per-resample t-tests (power, discriminative power) does the same work
        w0, p0 = time.perf_counter(), time.process_time()
        lean = simulate.predict(m, topics=[n], method="bootstrap", n_resamples=R, rng=1, t_tests=False)
        t_lean.append(time.perf_counter() - w0)
        c_lean.append(time.process_time() - p0)
    for p in pick[len(res):]:
        res.append((p, plain_loop(m.values, c.pair_a[p], c.pair_b[p], n, R, rng)))
    rounds = {k: [P * lp / pl for lp, pl in zip(c_lp, v)] for k, v in (("t", c_pl), ("lean", c_lean))}
    wall = [P * lp / pl for lp, pl in zip(t_lp, t_pl)]
    print(f"  planner (best of {repeats}): {min(t_pl):.3f} s wall / {min(c_pl):.3f} s CPU for all pairs "
          f"= {1e6 * min(t_pl) / P:.1f} us wall per pair (rounds: {', '.join(f'{v:.3f}' for v in c_pl)} s CPU)")
    print(f"  plain loop, one pair a round: {', '.join(f'{v:.3f}' for v in c_lp)} s CPU "
          f"({', '.join(f'{v:.3f}' for v in t_lp)} s wall)")
    print(f"  per-pair speed ratio, median of {repeats} rounds: {np.median(wall):,.0f}x wall, "
          f"{np.median(rounds['t']):,.0f}x CPU (rounds: {', '.join(f'{v:,.0f}' for v in rounds['t'])}; "
          f"goal >= {SEED_GOAL:,}x)")
    RATIOS["seed recipe, per pair (CPU, median of rounds)"] = (float(np.median(rounds["t"])), f">= {SEED_GOAL:,}")
    assert lean is not None
    assert np.array_equal(lean.per_pair["reversal_rate"], c.per_pair["reversal_rate"])
    assert np.array_equal(lean.per_pair["ci_width"], c.per_pair["ci_width"])
    print(f"  planner with t_tests=False (only what the loop computes): {min(t_lean):.3f} s wall / "
          f"{min(c_lean):.3f} s CPU (best); ratio {np.median(rounds['lean']):,.0f}x CPU "
          f"(median of rounds: {', '.join(f'{v:,.0f}' for v in rounds['lean'])})")
    # stratified resampling (two strata: alternate topics) on the same problem, against uniform
    ms = m.with_strata({t: ("odd" if i % 2 else "even") for i, t in enumerate(m.topics)})
    t_st = []
    for _ in range(max(1, repeats // 2)):
        w0 = time.perf_counter()
        simulate.predict(ms, topics=[n], method="bootstrap", n_resamples=R, rng=1, strata="proportional")
        t_st.append(time.perf_counter() - w0)
    print(f"  stratified (2 strata, proportional), all pairs: {min(t_st):.3f} s wall, "
          f"{min(t_st) / min(t_pl):.1f}x the uniform bootstrap's {min(t_pl):.3f} s")
    ok = True
    z = stats.norm.ppf(0.975)
    rev = c.per_pair["reversal_rate"][:, 0]
    for p, (r_loop, w_loop, sd) in res:
        r_pl = rev[p]
        pbar = (r_loop + r_pl) / 2
        se = math.sqrt(2 * pbar * (1 - pbar) / R)
        se_q = math.sqrt(0.025 * 0.975 / R) / (stats.norm.pdf(z) / sd)
        w_pl = c.per_pair["ci_width"][p, 0]
        good = abs(r_pl - r_loop) <= 4 * se and abs(w_pl - w_loop) <= 4 * math.sqrt(2) * 2 * se_q
        ok &= good
        print(f"    pair {m.systems[c.pair_a[p]]}-{m.systems[c.pair_b[p]]}: reversal planner {r_pl:.4f} "
              f"loop {r_loop:.4f} (4 SE {4 * se:.4f}); CI width planner {w_pl:.4f} loop {w_loop:.4f} "
              f"(bound {4 * math.sqrt(2) * 2 * se_q:.4f}) {'ok' if good else 'DIFFERENT'}")
    return ok


MiB = 2 ** 20
SEED_GOAL = 3000
T_GOAL = 1.5
RATIOS: dict = {}  # name -> (ratio, goal), printed last


#: the collection sizes of the T-independence check (n = 50): the draw's own size, the dense
#: product's range (to 8 n before 2026-12-04: 2.9x the time at T = 50 there) and the Gram sums'
TOPIC_SIZES = (50, 100, 200, 400, 1000, 5000)


def bench_topics(R: int, repeats: int, n: int = 50) -> bool:
    """CPU time of the bootstrap at n = 50 on 100 systems x T topics (synthetic, 4 decimals),
    T in TOPIC_SIZES: the work per resample should not grow with T. The ratio is the largest over
    T of time(T) / time(T = 50), each the median of the rounds' ratios."""
    rng = np.random.default_rng(0)
    xs = {T: np.round(np.clip(rng.beta(2, 5, (100, 1)) * 0.6 + rng.normal(0, 0.12, (1, T))
                              + rng.normal(0, 0.1, (100, T)), 0, 1), 4) for T in TOPIC_SIZES}
    cpu: dict[int, list[float]] = {T: [] for T in xs}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        for _ in range(repeats + 1):  # interleaved: a shared machine's load hits every size alike
            for T, x in xs.items():
                p0 = time.process_time()
                simulate.predict(x, topics=[n], method="bootstrap", n_resamples=R, rng=1)
                cpu[T].append(time.process_time() - p0)
    cpu = {T: v[1:] for T, v in cpu.items()}  # the first round untimed (each path's first call)
    first = TOPIC_SIZES[0]
    ratios = {T: float(np.median([t / t0 for t, t0 in zip(v, cpu[first])])) for T, v in cpu.items()}
    worst = max(ratios, key=lambda T: ratios[T])
    print(f"bootstrap, 100 systems, n = {n}, R = {R}, CPU s (best of {repeats}) and median ratio to T = {first}: "
          + ", ".join(f"T = {T:,} {min(v):.3f} ({ratios[T]:.2f})" for T, v in cpu.items())
          + f"; largest at T = {worst:,} (goal <= {T_GOAL})")
    RATIOS[f"T-independence max over T of time(T) / time(T=50), R = {R}"] = (ratios[worst], f"<= {T_GOAL}")
    return ratios[worst] <= T_GOAL


def memory_bound(method: str, S: int, T: int, R: int, K: int, N: int, *, n_max: int = 100,
                 keep_pairs: bool = False, max_memory: int = 256 * MiB) -> int:
    """The peak the module docstring of planner.simulate states ("Memory"), in bytes:
    ``kept + max(pre, work)``."""
    P = S * (S - 1) // 2
    meth = registered(method)
    integrate = meth.spec is not None and meth.spec.integrate
    R_tot = 2 * R if meth.disjoint else R
    kept = 8 * P * N * ((5 if keep_pairs else 1) + 1) + 64 * P
    D = min(2_000_000, max_memory // 24)
    pre = 24 * min(P * T, max(T, D)) if P * T <= 4_000_000 else 8 * (S * S + S * T + 5 * P)
    if integrate:
        pre += 16 * P + 24 * max(T, D)
    if meth.engine is Engine.RESAMPLING:
        if K == 1:
            work = (40 * R_tot * n_max + 12 * R_tot * min(T, 8 * n_max) + 12 * S * R_tot + 12 * 512 * R_tot
                    + 32 * S * T + 4096 * T + 4 * MiB + 64 * MiB)
        else:
            work = (8 * (2 * R_tot * T + (K + 1) * S * R_tot + S * T + 512 * R_tot * K + 512 * T) + 8 * MiB
                    + K * ((2048 + 4 * S) * R_tot + 17 * P) + 16 * S * T + 4 * MiB)
    elif meth.engine is Engine.PARAMETRIC:
        work = max(max_memory, 8 * 16 * S * (S + n_max) + 512 * 48 * R)
    else:
        per = 8 * (12 + 6 * K if meth.engine is Engine.ANALYTIC else 50 if integrate else 34)
        # (analytic with strata: each chunk's per-stratum pair pass, in blocks of B differences)
        B = max(T, max(T, D) // 2) if meth.engine is Engine.ANALYTIC and K > 1 else 0
        work = max(max_memory, 512 * per + 24 * B)
        if meth.spec is not None and meth.spec.prior != "normal":   # npmle and mixture priors
            work += 8 * 2 * 121 * min(P, 20_000) + 8 * 6 * 2_000_000
        if integrate:
            work += 16 * P
    return kept + max(pre, work)


def bench_memory(R: int, n: int = 50) -> bool:
    """Peak traced allocations (numpy's included) of predict against the stated bound, over
    methods, strata and matrix shapes (synthetic scores; the real 100 x 50 matrix first)."""
    import tracemalloc

    print("memory (tracemalloc peak against the bound of planner.simulate's docstring):")
    ok = True
    m0 = real_matrix()
    rng = np.random.default_rng(0)
    shapes = [(m0, R, n)]
    for S, T in ((30, 200), (100, 1000), (300, 40), (600, 30), (1000, 100)):
        x = np.clip(rng.beta(2, 5, (S, 1)) * 0.6 + rng.normal(0, 0.12, (1, T)) + rng.normal(0, 0.1, (S, T)), 0, 1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            shapes.append((ScoreMatrix.build(x, [f"s{i}" for i in range(S)], [f"t{i}" for i in range(T)]),
                           max(500, R // 5), min(n, 20)))
    for m, RR, nn in shapes:
        S, T = m.n_systems, m.n_topics
        cases = [("analytic", 1), ("analytic", 3), ("predictive", 1), ("predictive-integrated", 1)]
        if S <= 600:
            cases += [("bootstrap", 1), ("bootstrap", 2), ("bootstrap", 3), ("subsample", 1), ("subsample", 2),
                      ("parametric", 1), ("predictive-npmle", 1)]
        # the closed forms also under a small budget (their pair passes then use smaller blocks)
        cases = [(method, K, 64 * MiB) for method, K in cases] + \
            [(method, K, 4 * MiB) for method, K in cases if registered(method).closed_form]
        for method, K, mm in cases:
            mk = m if K == 1 else m.with_strata({t: f"s{i % K}" for i, t in enumerate(m.topics)})
            ns = [10, nn] if method != "subsample" else [10, min(nn, 2 * T // 5)]
            kw = {"n_resamples": RR if method != "parametric" else max(50, RR // 20)}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DegenerateDataWarning)
                tracemalloc.start()
                tracemalloc.reset_peak()
                simulate.predict(mk, topics=ns, method=method, rng=1, strata="uniform" if K == 1 else "proportional",
                                 keep_pairs=False, max_memory=mm, **(kw if registered(method).random else {}))
                peak = tracemalloc.get_traced_memory()[1]
                tracemalloc.stop()
            bound = memory_bound(method, S, T, kw["n_resamples"], K, len(ns), n_max=max(ns), max_memory=mm)
            good = peak <= bound
            ok &= good
            print(f"  {S:>4} x {T:<3} {method:<22} K={K} n={ns} max_memory {mm // MiB:>2} MiB: peak "
                  f"{peak / MiB:7.1f} MiB, bound "
                  f"{bound / MiB:7.1f} MiB  {'ok' if good else 'OVER'}", flush=True)
    return ok


def bench_analytic() -> float:
    rng = np.random.default_rng(0)
    S = T = 1000
    x = np.clip(rng.beta(2, 5, (S, 1)) * 0.6 + rng.normal(0, 0.12, (1, T)) + rng.normal(0, 0.1, (S, T)), 0, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        m = ScoreMatrix.build(x, [f"s{i}" for i in range(S)], [f"t{i}" for i in range(T)])
    topics = list(range(10, 201, 10))
    times, cpu = [], []
    for _ in range(2):
        t0, p0 = time.perf_counter(), time.process_time()
        c = simulate.predict(m, topics=topics, method="analytic", keep_pairs=False)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - p0)
    dt = min(times)
    print(f"analytic: {S} x {T} ({S * (S - 1) // 2} pairs), {len(topics)} topic counts: {dt:.2f} s wall, "
          f"{min(cpu):.2f} s CPU (best of 2; goal < 5 s); swap at n=50: {c.row(50)['swap_rate_mean']:.4f}")
    return dt


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--resamples", type=int, default=10_000)
    ap.add_argument("--loop-pairs", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--skip-analytic", action="store_true")
    ap.add_argument("--skip-memory", action="store_true")
    args = ap.parse_args()
    try:
        import threadpoolctl  # noqa: F401

        blas = "BLAS limited to one thread while resampling (threadpoolctl)"
    except ImportError:
        blas = "threadpoolctl absent: BLAS threads not limited (more CPU time)"
    print(f"cpus: {os.cpu_count()}, load average: {os.getloadavg()[0]:.2f}; {blas}")
    ok = bench_bootstrap(args.resamples, args.loop_pairs, max(args.repeats, 1))
    ok &= bench_topics(args.resamples, max(args.repeats, 1))
    if not args.skip_memory:
        ok &= bench_memory(args.resamples)
    if not args.skip_analytic:
        bench_analytic()
    ok &= RATIOS["seed recipe, per pair (CPU, median of rounds)"][0] >= SEED_GOAL
    print("; ".join(f"{k}: {v:,.2f} (goal {g})" for k, (v, g) in RATIOS.items()))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

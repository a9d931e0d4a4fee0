"""The small experiments behind docs/research/calibration.md (not run by pytest).

    /work/venv/bin/python benchmarks/calibration_experiments.py curve [FILE] [--target TARGET:VALUE]
    /work/venv/bin/python benchmarks/calibration_experiments.py simex [FILE] [N0] [--target TARGET:VALUE]
    /work/venv/bin/python benchmarks/calibration_experiments.py methods [FILE] [N0] [M1,M2,...]
    /work/venv/bin/python benchmarks/calibration_experiments.py variants
    /work/venv/bin/python benchmarks/calibration_experiments.py priorfit [FILE] [N0]
    /work/venv/bin/python benchmarks/calibration_experiments.py spread [FILE] [--repeats 60]
    /work/venv/bin/python benchmarks/calibration_experiments.py groups [--draws 60] [--groups 1,2,3]
        [--only NAME] [--interval] [--raise groups|pooled|low] [--select C] [--n0 N] [--reference]

FILE is relative to ../shared/data (default trec-terabyte/terabyte2006_ap.csv). ``curve``: the
plug-in count's median over 100 draws without replacement at n0 = 15 ... 149 (seed 3).
``simex``: the plug-in count, and its extrapolations from resamples of n0 and n0/2 topics
(60 each) to no noise, on 30 draws (seed 1) and on the whole collection. ``methods``: the
plain counts of the named methods on the whole collection and on 30 draws (seed 1).
``variants``: seven matrix/size cases, 30 draws each (seed 9), analytic swap 0.05 with 100
topic resamples; the correction and interval variants computed from the same resamples.
``priorfit``: the deconvolved swap-0.05 count on 20 draws (the seeds of bench_coverage.py when
FILE and N0 are one of its rows, else ``[1, 0, n0, d]``) over the whole collection's, with the
scale prior's weights fitted four ways: by EM (shipped); the whole collection's weights with the
draw's pairs; and Efron's g-modeling (weights ``softmax(Q a)``, ``Q`` Legendre polynomials of
degree 5 in log scale, log-likelihood times the number of systems over the number of pairs,
penalty ``c0 |a|``) with c0 = 1 and 0.25.
``spread``: the log-sd of the swap-0.05 count (deconvolved, and the normal prior's) over the two
disjoint halves of random splits of FILE's topics (independent topic sets), over draws of half
the topics and over draws of 100 (seeds ``[11, r]``, ``[12, r]``). ``groups``: the deconvolved
swap-0.05 count with the scale prior fitted in K groups of pairs split at the quantiles of
``r = s_d / sqrt(s_a^2 + s_b^2)`` (K = 1 is the shipped fit), on the draws of bench_coverage.py
(seed 1): the median draw/whole ratio with its 95% interval (2,000 resamples of the draws); with
``--interval`` also the coverage and median width of the interval on n (100 topic resamples,
each split by its own ``r``, moved onto the count, the near-zero raise in each group with the
pairs counted as ``S`` times the group's share; ``--raise pooled``: on one prior of all pairs;
``--raise low``: in the lowest-``r`` group alone, where the near-identical systems' pairs are);
``--select C`` splits a matrix (the whole collection and each draw on its own) only where twice
the split's log-likelihood gain, the pairs counted as ``S`` observations, is at least C; ``--n0 N``
draws N topics from each matching matrix instead; ``--reference`` adds the median width of the
normal prior's interval on the same draws (the width goal's reference).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

from planner import methods, plan
from planner.collection import load_scores
from planner.plan.pairs import PairModel
from planner.plan.resolve import ResampledModels, resolve_analytic
from planner.plan.search import smallest_n_vec
from planner.simulate import PairRates, Prior
from planner.simulate.prediction import resampled_moments
from planner.simulate.priors import (
    SCALE_GRID,
    fit_scale_weights,
    scale_bin_probs,
    scale_histogram,
    split_gain,
    standardized,
)
from planner.simulate.rates import scale_batch_rates
from planner.variance import pair_index

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_coverage import median_ci  # (a script beside this one)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
DEFAULT_FILE = "trec-terabyte/terabyte2006_ap.csv"


def counts(mats: list[np.ndarray], target: str, value: float) -> np.ndarray:
    """The plug-in (analytic, pair variance) count of each matrix."""
    ms = [PairModel(m, "pair") for m in mats]
    rs = ResampledModels(np.array([m.dbar for m in ms]), np.array([m.var for m in ms]),
                         {k: np.array([m.comp[k] for m in ms]) for k in ("var_s", "var_t", "var_e")}, None)
    return resolve_analytic(methods.TARGETS[target], value, rs, 100_000, min_diff=0.05, alpha=0.05, quantile=50.0)


def curve(x: np.ndarray, target: str, value: float) -> None:
    T = x.shape[1]
    g = np.random.default_rng(3)
    for n0 in (15, 20, 25, 35, 43, 50, 75, 100, 125, T):
        c = counts([x[:, np.sort(g.permutation(T)[:n0])] for _ in range(100)], target, value)
        print(n0, np.median(c), np.percentile(c, [10, 90]))


def simex(x: np.ndarray, n0: int, target: str, value: float) -> None:
    def one(X: np.ndarray, seed: int) -> tuple[float, ...]:
        g = np.random.default_rng(seed)
        n = X.shape[1]
        f = [counts([X], target, value)[0]]
        for lam in (1, 2):
            m = max(2, round(n / lam))
            f.append(float(np.median(counts([X[:, g.integers(0, n, m)] for _ in range(60)], target, value))))
        u = [a ** -0.5 for a in f]
        quad = 3 * u[0] - 3 * u[1] + u[2]
        return (f[0], (2 * u[0] - u[1]) ** -2, quad ** -2 if quad > 0 else np.inf,
                float(np.exp(2 * np.log(f[0]) - np.log(f[1]))))
    full = np.array(one(x, 0))
    print("whole collection: plug-in, sqrt-linear, sqrt-quadratic, log-linear", np.round(full))
    rng = np.random.default_rng(1)
    res = np.array([one(x[:, np.sort(rng.permutation(x.shape[1])[:n0])], k) for k in range(30)])
    med = np.median(res, axis=0)
    print(f"draws of {n0}: medians {np.round(med)}, ratio to the whole collection's same kind "
          f"{np.round(med / full, 2)}, to its plug-in count {np.round(med / full[0], 2)}")


def compare(x: np.ndarray, n0: int, names: list[str]) -> None:
    rng = np.random.default_rng(1)
    draws = [np.sort(rng.permutation(x.shape[1])[:n0]) for _ in range(30)]
    for m in names:
        full = plan.size_for_target(x, target="swap_rate", value=0.05, method=m, n_resamples=0).n_topics
        ns = np.array([np.inf if (a := plan.size_for_target(x[:, d], target="swap_rate", value=0.05, method=m,
                                                            n_resamples=0).n_topics) is None else a
                       for d in draws], float)
        print(f"{m}: whole {full}, median draw {np.median(ns):.0f} (ratio {np.median(ns) / full:.2f})")


VARIANT_CASES = (("trec-terabyte/terabyte2006_ap.csv", 25), ("trec-terabyte/terabyte2006_ap.csv", 43),
                 ("trec-terabyte/terabyte2006_ndcg.csv", 43), ("trec-adhoc/adhoc5_ap.csv", 20),
                 ("trec-adhoc/adhoc6_p10.csv", 20), ("trec-web/web2010_ap.csv", 20), ("trec-web/web2011_p10.csv", 20))


def _variant_task(job: tuple[int, int]) -> tuple[tuple[int, int], tuple]:
    warnings.simplefilter("ignore")
    ci, d = job
    path, n0 = VARIANT_CASES[ci]
    x = load_scores(str(DATA / path)).topic_scores()
    if d >= 0:
        x = x[:, np.sort(np.random.default_rng([9, ci, d]).permutation(x.shape[1])[:n0])]
    r = plan.size_for_target(x, target="swap_rate", value=0.05, method="analytic", n_resamples=100,
                             rng=np.random.default_rng([9, ci, d + 1, 1]))
    return job, (r.n_topics, r.resampled_n)


def _variant(n: int, ns: np.ndarray, kind: str, p: float, k: float) -> tuple[float, float, float]:
    """(count, low, high) of a correction on the scale n^-p with step k, interval basic or moved."""
    lo_n, hi_n = np.quantile(ns, [0.025, 0.975], method="inverted_cdf")
    if kind == "plain":
        return n, lo_n, hi_n
    ub = np.where(np.isfinite(ns), ns, np.inf) ** -p
    u = n ** -p
    med = np.quantile(ub, 0.5, method="inverted_cdf")
    s = k * (u - med)
    u_hi, u_lo = lo_n ** -p, (hi_n ** -p if np.isfinite(hi_n) else 0.0)
    a, b = (u + s - (u_hi - med), u + s + (med - u_lo)) if kind == "basic" else (u_lo + 2 * s, u_hi + 2 * s)

    def inv(v: float) -> float:
        return np.inf if v <= 0 else v ** (-1 / p)
    return inv(u + s), inv(b), inv(a)


def variants() -> None:
    from multiprocessing import get_context
    jobs = [(ci, d) for ci in range(len(VARIANT_CASES)) for d in range(-1, 30)]
    with get_context("spawn").Pool(2) as pool:
        out = dict(pool.map(_variant_task, jobs))
    for name, kind, p, k in (("plain", "plain", 0.5, 1), ("basic u", "basic", 0.5, 1), ("moved u", "shift", 0.5, 1),
                             ("basic 1/n", "basic", 1, 1), ("moved 1/n", "shift", 1, 1),
                             ("moved u k1.5", "shift", 0.5, 1.5), ("moved 1/n k1.5", "shift", 1, 1.5),
                             ("moved u k2", "shift", 0.5, 2)):
        cells = []
        for ci, (path, n0) in enumerate(VARIANT_CASES):
            full = _variant(*out[(ci, -1)], kind, p, k)[0]
            cov, rat, wid = [], [], []
            for d in range(30):
                n, ns = out[(ci, d)]
                c, lo, hi = _variant(n, ns, kind, p, k)
                _, plo, phi = _variant(n, ns, "plain", p, k)
                cov.append(lo <= full <= hi)
                rat.append(c / full)
                wid.append((hi - lo) / max(phi - plo, 1))
            cells.append(f"{Path(path).stem}@{n0}: {np.mean(cov):.0%} {np.median(rat):.2f} w{np.median(wid):.1f}")
        print(f"{name:15s}", " | ".join(cells))


def _gmodel_weights(h: np.ndarray, n0: int, systems: int, c0: float) -> np.ndarray:
    """Efron's penalised g-modeling of the scale prior's weights on the histogram ``h``."""
    from scipy import optimize, special
    u = np.log(SCALE_GRID)
    basis = np.polynomial.legendre.legvander((u - u.mean()) / (u.max() - u.mean()), 5)[:, 1:]
    like = scale_bin_probs(n0, SCALE_GRID)
    share = h / h.sum()

    def objective(a: np.ndarray) -> tuple[float, np.ndarray]:
        w = special.softmax(basis @ a)
        f = like @ w
        g = (share / f) @ like
        norm = float(np.sqrt(a @ a))
        grad = -(basis.T @ (systems * w * (g - w @ g))) + c0 * a / max(norm, 1e-12)
        return -systems * float(share @ np.log(f)) + c0 * norm, grad
    a = optimize.minimize(objective, np.zeros(basis.shape[1]), jac=True, method="L-BFGS-B").x
    return special.softmax(basis @ a)


def _swap_count(x: np.ndarray, w: np.ndarray) -> int:
    """The smallest n whose mean predicted swap rate under the scale prior ``w`` is <= 0.05."""
    a, b = np.triu_indices(x.shape[0], 1)
    d = x[a] - x[b]
    m, v = d.mean(1), d.var(1, ddof=1)
    rate = PairRates(m, v, x.shape[1], Prior("scale", SCALE_GRID, w, 0.0, x.shape[1], m.size), "swap_rate")
    n = plan.smallest_n(lambda k: rate(k).mean() <= 0.05, 2, 100_000)
    assert n is not None, "swap 0.05 not met up to 100,000 topics"
    return n


def priorfit(x: np.ndarray, path: str, n0: int) -> None:
    a, b = np.triu_indices(x.shape[0], 1)

    def fits(y: np.ndarray) -> dict[str, np.ndarray]:
        d = y[a] - y[b]
        h = scale_histogram(*standardized(d.mean(1), d.var(1, ddof=1), y.shape[1]))[0]
        return {"em": fit_scale_weights(h, y.shape[1])[0],
                "g c0=1": _gmodel_weights(h, y.shape[1], x.shape[0], 1.0),
                "g c0=0.25": _gmodel_weights(h, y.shape[1], x.shape[0], 0.25)}
    whole = fits(x)
    full = {k: _swap_count(x, w) for k, w in whole.items()}
    rows = _coverage_rows()
    mi = rows.index((path, n0)) if (path, n0) in rows else 0
    ratios: dict[str, list[float]] = {k: [] for k in [*whole, "em, whole collection's weights"]}
    for d in range(20):
        y = x[:, np.sort(np.random.default_rng([1, mi, n0, d]).permutation(x.shape[1])[:n0])]
        for k, w in fits(y).items():
            ratios[k].append(_swap_count(y, w) / full[k])
        ratios["em, whole collection's weights"].append(_swap_count(y, whole["em"]) / full["em"])
    for k, r in ratios.items():
        print(f"{path} n0={n0} {k}: whole {full.get(k, full['em'])}, median draw/whole {np.median(r):.2f} "
              f"[10-90%: {np.quantile(r, 0.1):.2f}-{np.quantile(r, 0.9):.2f}]")


def spread(x: np.ndarray, repeats: int) -> None:
    T = x.shape[1]
    h = T // 2
    for method in ("deconvolved", "predictive"):
        def count(cols: np.ndarray, method: str = method) -> float:
            return float(np.log(plan.size_for_target(x[:, np.sort(cols)], target="swap_rate", value=0.05,
                                                     method=method, n_resamples=0).n_topics))
        halves = np.array([[count(p[:h]), count(p[h:])]
                           for p in (np.random.default_rng([11, r]).permutation(T) for r in range(repeats))])
        d100 = np.array([count(np.random.default_rng([12, r]).permutation(T)[:100]) for r in range(repeats)])
        print(f"{method}: log-sd of the count over {h}-topic draws {halves[:, 0].std(ddof=1):.3f}, over disjoint "
              f"halves {np.std(halves[:, 0] - halves[:, 1], ddof=1) / np.sqrt(2):.3f} "
              f"(sqrt(1 - {h}/{T}) = {np.sqrt(1 - h / T):.2f}), over 100-topic draws {d100.std(ddof=1):.3f}")


def _groups_of(parts: list[np.ndarray], V: np.ndarray, k: int) -> np.ndarray:
    """``(B, P)``: the group (0..k-1) of each pair in each row, by the quantiles of its ``r``."""
    a, b = pair_index(parts[0].shape[0])
    sd2 = np.stack([v.var(axis=1, ddof=1) for v in parts])
    r = np.sqrt(np.maximum(V, 0.0)) / np.sqrt(sd2[:, a] + sd2[:, b] + 1e-300)
    ranks = np.argsort(np.argsort(r, axis=1, kind="stable"), axis=1)
    return np.minimum(ranks * k // r.shape[1], k - 1)


def _grouped_counts(D: np.ndarray, V: np.ndarray, G: np.ndarray, n0: int, k: int,
                    raise_systems: int | None = None, raised: tuple[int, ...] = ()) -> np.ndarray:
    """Each row's swap-0.05 count, the scale prior fitted in each group (with ``raise_systems``: the
    near-zero raise in the groups ``raised``, each group's pairs counted as that many systems times
    its share)."""
    parts = []
    for j in range(k):
        idx = np.stack([np.flatnonzero(row == j) for row in G])      # equal group sizes in every row
        share = idx.shape[1] / D.shape[1]
        up = None if raise_systems is None or j not in raised else (raise_systems * share, 0.95)
        parts.append((share, scale_batch_rates(np.take_along_axis(D, idx, 1), np.take_along_axis(V, idx, 1),
                                               n0, unseen=up)))
    return smallest_n_vec(lambda n: sum(sh * f(n, "swap_rate") for sh, f in parts) <= 0.05, D.shape[0], 2, 100_000)


#: ``groups --raise``: where the upper end's near-zero raise is made
RAISES = ("groups", "pooled", "low")


def _grouped_answer(x: np.ndarray, k: int, gen: np.random.Generator | None, *, raise_in: str = "groups",
                    select: float | None = None) -> tuple[float, float, float]:
    """The grouped count of ``x`` and (with ``gen``) its interval: 100 resamples, moved, raised
    (``raise_in``: in each group, on one prior of all pairs, or in the lowest-``r`` group alone).
    With ``select``: one group unless :func:`planner.simulate.priors.split_gain` is at least ``select``."""
    S, n0 = x.shape
    m = PairModel(x, "pair")
    D0, V0 = m.dbar[None], m.var[None]
    G0 = _groups_of([x], V0, k)
    if select is not None and k > 1 and split_gain(m.dbar, m.var, n0, G0[0], S) < select:
        k, G0 = 1, np.zeros_like(G0)
    point = float(_grouped_counts(D0, V0, G0, n0, k)[0])
    if gen is None:
        return point, np.nan, np.nan
    draws = [g.integers(0, n0, n0) for g in gen.spawn(100)]
    D, V = resampled_moments(x, draws)
    ns = _grouped_counts(D, V, _groups_of([x[:, t] for t in draws], V, k), n0, k)
    lo, hi = plan.count_interval(ns, point, 0.95)
    if raise_in == "pooled":
        up = float(_grouped_counts(D0, V0, np.zeros_like(G0), n0, 1, raise_systems=S, raised=(0,))[0])
    else:
        up = float(_grouped_counts(D0, V0, G0, n0, k, raise_systems=S,
                                   raised=(0,) if raise_in == "low" else tuple(range(k)))[0])
    return point, lo, np.inf if hi is None else max(hi, up)


def _reference_width(x: np.ndarray, picks: list[np.ndarray], mi: int, n0: int) -> float:
    """The normal prior's (``predictive``) interval on n, median width over the draws ``picks``
    (the same resample streams): the width goal's reference."""
    widths = []
    for d, t in enumerate(picks):
        r = plan.size_for_target(x[:, t], target="swap_rate", value=0.05, method="predictive", variance="pair",
                                 n_resamples=100, rng=np.random.default_rng([1, mi, n0, d, 1]))
        widths.append(np.inf if r.interval.high is None else r.interval.high - r.interval.low)
    return float(np.median(widths))


def groups(draws: int, ks: list[int], only: str, interval: bool, raise_in: str = "groups",
           select: float | None = None, n0_as: int | None = None, reference: bool = False) -> None:
    seen = set()
    for mi, (path, n0) in enumerate(_coverage_rows()):
        if only not in path or (n0_as is not None and path in seen):
            continue
        seen.add(path)
        n0 = n0 if n0_as is None else n0_as
        x = load_scores(str(DATA / path)).topic_scores()
        cells = []
        picks = [np.sort(np.random.default_rng([1, mi, n0, d]).permutation(x.shape[1])[:n0]) for d in range(draws)]
        for k in ks:
            kw = {"raise_in": raise_in, "select": select}
            whole = _grouped_answer(x, k, None, **kw)[0]
            ans = np.array([_grouped_answer(x[:, t], k, np.random.default_rng([1, mi, n0, d, 1]) if interval else None,
                                            **kw) for d, t in enumerate(picks)])
            r = ans[:, 0] / whole
            lo, hi = median_ci(r, 1)
            cell = f"K{k} whole {whole:.0f} median {np.median(r):.2f} [{lo:.2f}, {hi:.2f}]"
            if interval:
                cell += (f" coverage {np.mean((ans[:, 1] <= whole) & (whole <= ans[:, 2])):.0%}"
                         f" width {np.median(ans[:, 2] - ans[:, 1]):.0f}")
            cells.append(cell)
        if reference:
            cells.append(f"normal prior's width {_reference_width(x, picks, mi, n0):.0f}")
        print(f"{Path(path).stem} n0={n0}: " + "; ".join(cells), flush=True)


def _coverage_rows() -> list[tuple[str, int]]:
    from bench_coverage import matrices
    return matrices()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("variants", help="seven matrix/size cases, the correction and interval variants")
    for name, extra in (("curve", ()), ("simex", ("n0",)), ("methods", ("n0", "names")), ("priorfit", ("n0",))):
        sp = sub.add_parser(name)
        sp.add_argument("file", nargs="?", default=DEFAULT_FILE, help="relative to ../shared/data")
        if "n0" in extra:
            sp.add_argument("n0", nargs="?", type=int, default=25 if name == "priorfit" else 43)
        if "names" in extra:
            sp.add_argument("names", nargs="?", default="analytic,predictive", help="methods, comma-separated")
        if name != "priorfit":
            sp.add_argument("--target", default="swap_rate:0.05", help="TARGET:VALUE (default swap_rate:0.05)")
    sp = sub.add_parser("spread", help="the count's log-sd over independent and overlapping topic sets")
    sp.add_argument("file", nargs="?", default=DEFAULT_FILE, help="relative to ../shared/data")
    sp.add_argument("--repeats", type=int, default=60)
    gp = sub.add_parser("groups", help="the scale prior fitted in groups of pairs by r, on bench_coverage's draws")
    gp.add_argument("--draws", type=int, default=60)
    gp.add_argument("--groups", default="1,2,3", help="numbers of groups, comma-separated (1: the shipped fit)")
    gp.add_argument("--only", default="", help="rows whose file name contains this")
    gp.add_argument("--interval", action="store_true", help="also the interval's coverage and width")
    gp.add_argument("--raise", dest="raise_in", choices=RAISES, default="groups",
                    help="where the upper end's near-zero raise is made: in each group (default), on one prior "
                         "of all pairs, or in the lowest-r group alone")
    gp.add_argument("--n0", type=int, default=None, help="draw this many topics from each matching matrix")
    gp.add_argument("--reference", action="store_true",
                    help="also the median width of the normal prior's interval on the same draws")
    gp.add_argument("--select", type=float, default=None, metavar="C",
                    help="split only where twice the likelihood gain (S observations) is at least C")
    return ap.parse_args(argv)


def main() -> None:
    args = parse_args()
    warnings.simplefilter("ignore")
    if args.cmd == "variants":
        variants()
        return
    if args.cmd == "groups":
        groups(args.draws, [int(k) for k in args.groups.split(",")], args.only, args.interval, args.raise_in,
               args.select, args.n0, args.reference)
        return
    x = load_scores(str(DATA / args.file)).topic_scores()
    if args.cmd == "priorfit":
        priorfit(x, args.file, args.n0)
        return
    if args.cmd == "spread":
        spread(x, args.repeats)
        return
    target, value = args.target.split(":")[0], float(args.target.split(":")[1])
    if args.cmd == "curve":
        curve(x, target, value)
    elif args.cmd == "simex":
        simex(x, args.n0, target, value)
    else:
        compare(x, args.n0, args.names.split(","))


if __name__ == "__main__":
    main()

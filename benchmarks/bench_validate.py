"""Pilot-based prediction against held-out topics (``planner.validation.validate``).

Every suite of ``validate`` rows also checks the prediction intervals (``--prediction 0.9``,
``0`` skips them; ``--prediction-resamples 200``): the share of held-out set pairs whose
realised swap rate (and sets whose realised reversal rate) fell inside each closed-form
method's interval from the pilot ("coverage ... +- se" on each row). For ``terabyte`` the
goal is 85-95% for the 90% interval of the default method's swap rate at n = 25, 50 and 62
(issue 27): ``--methods deconvolved,analytic --repeats 300 --seed 11``.

Suites (``--suite``):

``terabyte`` (default; the issue-4 goal): TREC 2006 Terabyte (61 systems x 149
topics), AP and nDCG, 25-topic pilots, topic counts 25, 50 and 62 (62 = half of
the 124 held-out topics), ``--repeats`` random splits and ``--subsets`` random
pairs of disjoint held-out subsets per repeat and n. Prints, per method and n,
the mean predicted and observed mean swap rate (and reversal rate), the median
relative error over repeats with the bootstrap standard error of that median,
its 90th percentile, and the decomposition into bias (median of pred/obs, minus
1) and spread (sd of log(pred/obs)); then checks the goal: median relative
error of the predicted mean swap rate at most 10% at every n, and smaller than
the plug-in (``analytic``) model's.

``small``: the same table on the TREC Web 2010/2011 (AP, nDCG@20) and TREC 5-7
ad hoc (AP) matrices (48-50 topics): 20-topic pilots, n = 10 and 14 (Web 2010,
28 held out) or 10 and 15 (30 held out). A check that choices made on Terabyte
carry over; no goal is defined for it.

``bounds``: how close to 10% can any predictor built from a 25-topic pilot get
on Terabyte? Same splits and held-out observations as ``terabyte`` (same
``--seed``, ``--repeats``, ``--subsets``), and these predictors of the mean swap
rate: ``pair`` (the default predictive method, for reference); ``jackknife``
(the same, bias-corrected by the delete-one-topic jackknife over the pilot's
topics: ``n0 f(pilot) - (n0 - 1) mean_i f(pilot without topic i)``);
``oracle-variance`` (the predictive method given every pair's variance over
all 149 topics, held-out ones included); ``oracle-means`` (the plug-in model
given every pair's mean difference over all 149 topics, with the pilot's
variances); ``oracle-prior`` (the predictive method with the collection's own
distribution of pair differences over all 149 topics as its prior, symmetrised
and binned on a 601-point grid, in place of the fitted normal prior; with each
pair's pilot variance), ``oracle-prior-shrunk`` and ``oracle-prior-pooled`` (the
same with the shrunk and pooled variances of the pilot), and
``oracle-prior+variance`` (that prior and every pair's variance over all 149
topics). The oracles use information no pilot has; they bound what a better
variance model or a better prior on the differences could achieve: the
``oracle-prior`` rows are what a perfect estimate of the distribution of the
differences (the deconvolution every prior on ``delta`` attempts) would buy with
the variances a pilot has. For each predictor the table also gives the median
error after dividing out its own median bias (an oracle correction): what it
would reach with no bias at all. Then, for the default predictor, how much of
its variation between pilots two pilot-wide quantities explain (R^2 of a
regression of log predicted on their logs): the **stretch** of the pilot's
system means (slope of the pilot's centred system means on the whole
collection's) and the pilot's **residual scale** (root mean square of its
double-centred scores), with their correlations with log predicted and log
observed. The stretch is the pilot's topic sample making all systems look
further apart (or closer) than the collection does; a pilot cannot tell it from
a population that separates its systems that much, and its complement shows the
opposite stretch. Takes about 8 minutes at 300 repeats.

``synthetic``: is the held-out observation an unbiased estimate of the
population swap rate that the prediction targets? Collections of N topics are
drawn from a normal model with the system means and ``var_e`` (ANOVA residual
mean square) of a real matrix, so the population swap rate of every pair is
known exactly (``2p(1-p)``, ``p = Phi(-|delta| sqrt(n) / sqrt(2 var_e))``).
Prints the median over (collection, split) of observed/truth - 1 and of
predicted/observed - 1 for the predictive and plug-in methods.

Each matrix also gets a diagnostic that is not part of the goal: the correlation
over repeats of predicted and observed swap rate, the observed rate's
coefficient of variation, and the median error against the mean observation
over all repeats (pilot and remainder are complements within one collection,
which anti-correlates prediction and observation).

``--extra-subsets K`` (terabyte, small) also measures each repeat's observation
a second time with K fresh subset pairs, and prints the Monte Carlo sd of
log(observed) at ``--subsets`` and the median errors against the K-subset
observation (does Monte Carlo noise of the observation inflate the error?).

Run by hand (not by pytest):

    /work/venv/bin/python benchmarks/bench_validate.py [--repeats 100] [--seed 2026]
    /work/venv/bin/python benchmarks/bench_validate.py --suite small --repeats 300 --seed 11
    /work/venv/bin/python benchmarks/bench_validate.py --suite bounds --repeats 300 --seed 11
    /work/venv/bin/python benchmarks/bench_validate.py --suite synthetic
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from planner.collection import load_scores
from planner.errors import DegenerateDataWarning
from planner.methods import DEFAULT_METHOD
from planner.simulate import Prior, pair_variance_model, plugin_pair_rates, predictive_pair_rates
from planner.validation import observed_rates, validate
from planner.validation import tie_sign as _sign
from planner.variance import pair_index, pair_moments

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

SUITES = {
    "terabyte": [("trec-terabyte/terabyte2006_ap.csv", 25, (25, 50, 62)),
                 ("trec-terabyte/terabyte2006_ndcg.csv", 25, (25, 50, 62))],
    "small": [("trec-web/web2010_ap.csv", 20, (10, 14)), ("trec-web/web2010_ndcg20.csv", 20, (10, 14)),
              ("trec-web/web2011_ap.csv", 20, (10, 15)), ("trec-web/web2011_ndcg20.csv", 20, (10, 15)),
              ("trec-adhoc/adhoc5_ap.csv", 20, (10, 15)), ("trec-adhoc/adhoc6_ap.csv", 20, (10, 15)),
              ("trec-adhoc/adhoc7_ap.csv", 20, (10, 15))],
}


def _row(v, stat, m, n):
    return next(r for r in v.rows if r["statistic"] == stat and r["method"] == m and r["n_topics"] == n)


def _mc_check(scores, pilot, topics, repeats, seed, subsets, extra, v):
    """Re-observe every repeat with ``extra`` fresh subset pairs (same splits as ``validate``)."""
    from planner._random import child_streams

    x = scores.topic_scores()
    S, T = x.shape
    a, b = pair_index(S)
    t = np.asarray(topics)
    o2 = np.empty((repeats, t.size))
    for r, g in enumerate(child_streams(seed, repeats)):
        order = g.permutation(T)
        pi, hi = np.sort(order[:pilot]), np.sort(order[pilot:])
        dbar, _ = pair_moments(x[:, pi], a, b)
        o2[r] = observed_rates(x[:, hi], t, _sign(dbar), subsets=extra,
                               rng=np.random.default_rng([seed, r, 99]))["swap_rate"]
    o1 = v.observed["swap_rate"]
    # var(log o1 - log o2) = mc1^2 + mc2^2 with mc^2 proportional to 1/subsets
    mc = np.std(np.log(o1) - np.log(o2), axis=0, ddof=1) / np.sqrt(1 + subsets / extra)
    print(f"  Monte Carlo sd of log(observed swap) at {subsets} subset pairs: "
          + " / ".join(f"{s:.4f}" for s in mc))
    for m, p in v.predicted["swap_rate"].items():
        e = np.median(np.abs(p / o2 - 1), axis=0)
        print(f"    {m:>21} median rel. error against the {extra}-subset observation: "
              + " / ".join(f"{s:.3f}" for s in e))


def _coverage_cell(row) -> str:
    """The row's prediction-interval coverage (+- its standard error over repeats), if checked."""
    c = row.get("pred_coverage")
    if c is None or not np.isfinite(c):
        return ""
    return f"  coverage {c:.3f} +- {row['pred_coverage_se']:.3f}"


def run_suite(args, suite) -> bool:
    methods = tuple(args.methods.split(","))
    ok_all = True
    for name, pilot, topics in SUITES[suite]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)  # identical systems in the Web matrices
            scores = load_scores(Path(args.data) / name)
        t0 = time.perf_counter()
        v = validate(scores, pilot=pilot, topics=topics, repeats=args.repeats, rng=args.seed,
                     methods=methods, subsets=args.subsets, prediction=args.prediction or None,
                     prediction_resamples=args.prediction_resamples, jobs=args.jobs)
        secs = time.perf_counter() - t0
        print(f"\n{name}: {v.n_systems} systems x {v.n_topics} topics, pilot {pilot}, {v.repeats} repeats, "
              f"{v.subsets} subset pairs, seed {args.seed}: {secs:.1f} s")
        for stat in ("swap_rate", "reversal_rate"):
            print(f"  {stat}: method, n, predicted mean, observed mean, median rel. error (+- bootstrap se), "
                  "p90, bias (median pred/obs - 1), sd log(pred/obs)")
            for m in methods:
                for n in topics:
                    row = _row(v, stat, m, n)
                    print(f"    {m:>21} {n:>3}  {row['predicted_mean']:.4f}  {row['observed_mean']:.4f}  "
                          f"{row['rel_error_median']:.3f} +- {row['rel_error_median_se']:.3f}  "
                          f"{row['rel_error_p90']:.3f}  {row['ratio_median'] - 1:+.3f}  {row['log_ratio_sd']:.3f}"
                          + _coverage_cell(row))
        # diagnostic (not the goal): the pilot and its remainder are complements within one fixed
        # collection, so a pilot on which the systems look far apart leaves a remainder on which
        # they look closer; the error against the mean observation over all repeats (the
        # collection's own rate) has no such anti-correlation
        o = v.observed["swap_rate"]
        print("  swap: corr(pred, obs) over repeats; median |pred / mean_repeats(obs) - 1|:")
        for m in methods:
            p = v.predicted["swap_rate"][m]
            c = [np.corrcoef(p[:, j], o[:, j])[0, 1] for j in range(len(topics))]
            e = np.median(np.abs(p / o.mean(axis=0) - 1), axis=0)
            print(f"    {m:>21} corr " + " / ".join(f"{x:+.2f}" for x in c)
                  + "   error vs collection mean " + " / ".join(f"{x:.3f}" for x in e))
        print("  observed swap cv over repeats: " + " / ".join(f"{x:.3f}" for x in o.std(0) / o.mean(0)))
        if args.extra_subsets:
            _mc_check(scores, pilot, topics, args.repeats, args.seed, args.subsets, args.extra_subsets, v)
        med = {m: [_row(v, "swap_rate", m, n)["rel_error_median"] for n in topics] for m in methods}
        dm = DEFAULT_METHOD        # the goals are the default method's
        if dm in med and "analytic" in med:
            goal = all(p <= 0.10 for p in med[dm])
            better = all(p < q for p, q in zip(med[dm], med["analytic"]))
            ok_all &= goal and better
            print(f"  {dm} swap median rel. error <= 10% at every n: {'yes' if goal else 'NO'}; "
                  f"smaller than analytic at every n: {'yes' if better else 'NO'}")
        if v.prediction is not None and dm in methods:
            cov = [_row(v, "swap_rate", dm, n)["pred_coverage"] for n in topics]
            inside = all(0.85 <= c <= 0.95 for c in cov)
            print(f"  {dm} swap {v.prediction:.0%} prediction interval covers the held-out rate in "
                  + " / ".join(f"{c:.1%}" for c in cov) + f" of set pairs (goal 85-95% at every n: "
                  f"{'met' if inside else 'NOT met'})")
        rec = v.recommend("swap_rate")
        print(f"  best swap predictor here: {rec['method']} ({rec['rule']}; "
              f"{'clearly' if rec['clear'] else 'not clearly, close: ' + ', '.join(rec['close'])})")
    return ok_all


def _jackknife(xp, a, b, n0, t):
    """Delete-one-topic jackknife bias correction of the predictive mean swap rate."""
    def f(z, k):
        d, s2 = pair_moments(z, a, b)
        return predictive_pair_rates(d, s2, k, t)["swap_rate"].mean(0)
    loo = np.mean([f(np.delete(xp, i, axis=1), n0 - 1) for i in range(n0)], axis=0)
    return n0 * f(xp, n0) - (n0 - 1) * loo


def run_bounds(args) -> None:
    from planner._random import child_streams

    names = ("pair", "jackknife", "oracle-variance", "oracle-means", "oracle-prior", "oracle-prior-shrunk",
             "oracle-prior-pooled", "oracle-prior+variance")
    for name, pilot, topics in SUITES["terabyte"]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            x = load_scores(Path(args.data) / name).topic_scores()
        S, T = x.shape
        a, b = pair_index(S)
        t = np.asarray(topics)
        d_all, s2_all = pair_moments(x, a, b)
        P = {m: np.empty((args.repeats, t.size)) for m in names}
        obs_sw = np.empty((args.repeats, t.size))
        prior_all = _collection_prior(d_all, pilot)
        m_all = x.mean(1) - x.mean()
        stretch, scale = np.empty(args.repeats), np.empty(args.repeats)
        for r, g in enumerate(child_streams(args.seed, args.repeats)):  # the splits of validate()
            order = g.permutation(T)
            pi, hi = np.sort(order[:pilot]), np.sort(order[pilot:])
            g_obs, _ = g.spawn(2)
            xp = x[:, pi]
            dbar, s2 = pair_moments(xp, a, b)
            obs_sw[r] = observed_rates(x[:, hi], t, _sign(dbar), subsets=args.subsets, rng=g_obs)["swap_rate"]
            P["pair"][r] = predictive_pair_rates(dbar, s2, pilot, t)["swap_rate"].mean(0)
            P["jackknife"][r] = _jackknife(xp, a, b, pilot, t)
            P["oracle-variance"][r] = predictive_pair_rates(dbar, s2_all, pilot, t)["swap_rate"].mean(0)
            P["oracle-means"][r] = plugin_pair_rates(d_all, s2, t)["swap_rate"].mean(0)
            for m, v in (("oracle-prior", s2), ("oracle-prior-shrunk", pair_variance_model(s2, "shrunk")),
                         ("oracle-prior-pooled", pair_variance_model(s2, "pooled")),
                         ("oracle-prior+variance", s2_all)):
                P[m][r] = predictive_pair_rates(dbar, v, pilot, t, prior=prior_all)["swap_rate"].mean(0)
            m_p = xp.mean(1) - xp.mean()
            stretch[r] = (m_p @ m_all) / (m_all @ m_all)
            res = xp - xp.mean(1, keepdims=True) - xp.mean(0, keepdims=True) + xp.mean()
            scale[r] = np.sqrt((res ** 2).sum() / ((S - 1) * (pilot - 1)))
        f = lambda v: " / ".join(f"{z:.3f}" for z in v)
        print(f"\n{name}: {S} systems x {T} topics, pilot {pilot}, n = {list(topics)}, {args.repeats} repeats, "
              f"{args.subsets} subset pairs, seed {args.seed}")
        print("  swap rate: predictor, median rel. error, bias (median pred/obs - 1), median rel. error with "
              "the bias removed (pred / median(pred/obs)), sd log(pred/obs), sd log(pred), corr(pred, obs)")
        for m in names:
            ratio = P[m] / obs_sw
            med = np.median(ratio, axis=0)
            c = [np.corrcoef(P[m][:, j], obs_sw[:, j])[0, 1] for j in range(t.size)]
            print(f"    {m:>16}  {f(np.median(np.abs(ratio - 1), axis=0))}   {f(med - 1)}   "
                  f"{f(np.median(np.abs(ratio / med - 1), axis=0))}   "
                  f"{f(np.std(np.log(ratio), axis=0, ddof=1))}   {f(np.std(np.log(P[m]), axis=0, ddof=1))}   {f(c)}")
        print(f"  sd log(observed): {f(np.std(np.log(obs_sw), axis=0, ddof=1))}")
        lp, lo = np.log(P["pair"]), np.log(obs_sw)
        X = np.column_stack([np.ones(args.repeats), np.log(stretch), np.log(scale)])
        fit = np.linalg.lstsq(X, lp, rcond=None)[0]
        r2 = 1 - np.var(lp - X @ fit, axis=0) / np.var(lp, axis=0)
        cor = lambda u, v, k=t.size: [np.corrcoef(u, v[:, j])[0, 1] for j in range(k)]
        print(f"  pilot-wide quantities: sd log(stretch) {np.std(np.log(stretch), ddof=1):.3f}, "
              f"sd log(residual scale) {np.std(np.log(scale), ddof=1):.3f}; "
              f"R^2 of log(pair prediction) on both {f(r2)}")
        print(f"    corr(log stretch, log predicted) {f(cor(np.log(stretch), lp))}, "
              f"corr(log stretch, log observed) {f(cor(np.log(stretch), lo))}")
        print(f"    corr(log residual scale, log predicted) {f(cor(np.log(scale), lp))}, "
              f"corr(log residual scale, log observed) {f(cor(np.log(scale), lo))}")


def _collection_prior(d_all, n0, points: int = 601) -> Prior:
    """The collection's own pair differences (both signs) as a grid prior (linear binning)."""
    v = np.concatenate([d_all, -d_all])
    top = float(np.abs(v).max())
    g = np.linspace(-top, top, points)
    pos = (v + top) / (g[1] - g[0])
    lo = np.clip(np.floor(pos).astype(np.int64), 0, points - 2)
    fr = pos - lo
    w = np.bincount(lo, 1 - fr, points) + np.bincount(lo + 1, fr, points)
    w /= w.sum()
    return Prior("npmle", g, w, float(np.sum(w * g * g)), n0, int(d_all.size))


def run_synthetic(args) -> None:
    cases = [("trec-terabyte/terabyte2006_ap.csv", 149, 25, (25, 50, 62)),
             ("trec-web/web2010_ap.csv", 149, 25, (25, 50, 62)),
             ("trec-web/web2010_ap.csv", 48, 20, (10, 14))]
    for name, N, n0, topics in cases:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            x = load_scores(Path(args.data) / name).topic_scores()
        S, T = x.shape
        res = x - x.mean(1, keepdims=True) - x.mean(0, keepdims=True) + x.mean()
        var_e = float((res ** 2).sum() / ((S - 1) * (T - 1)))
        mu = x.mean(1)
        a, b = pair_index(S)
        t = np.asarray(topics)
        truth = plugin_pair_rates(mu[a] - mu[b], np.full(a.size, 2 * var_e), t)["swap_rate"].mean(0)
        rng = np.random.default_rng(args.seed)
        obs_truth, pred, plug = [], [], []
        collections, splits = 10, 10
        for _ in range(collections):
            xc = mu[:, None] + rng.normal(0.0, np.sqrt(var_e), (S, N))  # topic effects cancel in pairs
            for _ in range(splits):
                o = rng.permutation(N)
                pi, hi = o[:n0], o[n0:]
                dbar, s2 = pair_moments(xc[:, pi], a, b)
                ob = observed_rates(xc[:, hi], t, _sign(dbar), subsets=args.subsets, rng=rng)["swap_rate"]
                obs_truth.append(ob / truth)
                pred.append(predictive_pair_rates(dbar, s2, n0, t)["swap_rate"].mean(0) / ob)
                plug.append(plugin_pair_rates(dbar, s2, t)["swap_rate"].mean(0) / ob)
        f = lambda v: " / ".join(f"{s:+.3f}" for s in np.median(np.asarray(v), axis=0) - 1)
        print(f"\nsynthetic normal model with the system means and var_e of {name}: {S} systems, "
              f"collections of N = {N} topics, pilot {n0}, n = {list(topics)}, "
              f"{collections} collections x {splits} splits, seed {args.seed}")
        print("  population swap rate (truth): " + " / ".join(f"{s:.4f}" for s in truth))
        print(f"  observed / truth - 1 (median):        {f(obs_truth)}")
        g = lambda v: " / ".join(f"{s:.3f}" for s in np.median(np.abs(np.asarray(v) - 1), axis=0))
        print(f"  predictive / observed - 1 (median):   {f(pred)}   median |rel. error| {g(pred)}")
        print(f"  plug-in / observed - 1 (median):      {f(plug)}   median |rel. error| {g(plug)}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", choices=("terabyte", "small", "bounds", "synthetic"), default="terabyte")
    ap.add_argument("--repeats", type=int, default=100)
    ap.add_argument("--subsets", type=int, default=500)
    ap.add_argument("--extra-subsets", type=int, default=0)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--methods", default="predictive,predictive-shrunk,predictive-pooled,analytic")
    ap.add_argument("--data", default=str(DATA))
    ap.add_argument("--prediction", type=float, default=0.9,
                    help="level of the prediction intervals checked (0: none)")
    ap.add_argument("--prediction-resamples", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args(argv)
    if args.suite == "synthetic":
        run_synthetic(args)
        return 0
    if args.suite == "bounds":
        run_bounds(args)
        return 0
    ok = run_suite(args, args.suite)
    if args.suite == "terabyte" and {"predictive", "analytic"} <= set(args.methods.split(",")):
        print(f"predictive swap median rel. error <= 10% and below analytic's at every n: "
              f"{'goal met' if ok else 'goal missed'}")
    return 0 if ok or args.suite != "terabyte" else 1


if __name__ == "__main__":
    sys.exit(main())

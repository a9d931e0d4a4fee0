"""Tests of planner.simulate (predict and the scenario axes) and `planner predict`."""

from __future__ import annotations

import contextlib
import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from planner import simulate
from planner.errors import DegenerateDataWarning, ParameterError
from planner.plan.power import t_power_exact
from planner.scores import ScoreMatrix
from planner.simulate import analytic, extrapolation, kernels, pairs

Z975 = stats.norm.ppf(0.975)


def _matrix(x, strata=None, measure="AP"):
    x = np.asarray(x, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return ScoreMatrix.build(x, [f"s{i}" for i in range(x.shape[0])],
                                 [f"t{i}" for i in range(x.shape[1])], measure=measure, strata=strata)


@pytest.fixture(scope="module")
def adhoc5(shared_data):
    from planner.collection import load_scores

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return load_scores(shared_data / "trec-adhoc" / "adhoc5_ap.csv", measure="AP")


@pytest.fixture(scope="module")
def adhoc5_small(adhoc5):
    # 8 systems spread over the ranking: 28 pairs with a range of differences
    order = np.argsort(adhoc5.system_means())
    pick = order[np.linspace(10, 50, 8).astype(int)]
    return adhoc5.take(systems=np.sort(pick))     # a NumPy integer array selects positions


# ------------------------------------------------------------------ analytic, by hand
HAND = [[0.5, 0.3, 0.4, 0.6], [0.4, 0.3, 0.2, 0.5]]  # d = 0.1, 0, 0.2, 0.1


def test_analytic_matches_hand_calculation():
    c = simulate.predict(_matrix(HAND), topics=[4, 10], method="analytic", min_diff=0.05)
    # hand calculation: dbar = 0.1, s2_d = 0.02/3, se = sqrt(s2_d/n), p = Phi(-dbar/se)
    assert c.dbar[0] == pytest.approx(0.1)
    assert c.s2_d[0] == pytest.approx(0.02 / 3)
    pp = c.per_pair
    assert pp["reversal_rate"][0, 0] == pytest.approx(0.007152939217714824, rel=1e-9)
    assert pp["swap_rate"][0, 0] == pytest.approx(0.014203549356525002, rel=1e-9)  # 2p(1-p)
    assert pp["ci_width"][0, 0] == pytest.approx(0.2598456527250222, rel=1e-9)  # 2 t(.975,3) se
    assert pp["reversal_rate"][0, 1] == pytest.approx(5.375558836475012e-05, rel=1e-8)
    assert pp["ci_width"][0, 1] == pytest.approx(0.1168172935736169, rel=1e-9)  # 2 t(.975,9) se
    # statsmodels TTestPower().power(effect_size=0.05/sqrt(s2_d), nobs=n, alpha=0.05, two-sided)
    assert pp["power"][0, 0] == pytest.approx(0.14181010401957325, rel=1e-7)
    assert pp["power"][0, 1] == pytest.approx(0.4093335150587868, rel=1e-7)
    # significance probability at the observed difference (same statsmodels call, effect dbar/s_d)
    assert pp["significant"][0, 0] == pytest.approx(0.3953379726419725, rel=1e-7)
    r = c.row(4)
    assert r["kendall_tau_mean"] == pytest.approx(1 - 2 * r["swap_rate_mean"])
    assert set(r) >= {"n_topics", "swap_rate_mean", "reversal_rate_mean", "kendall_tau_mean",
                      "ci_width_median", "ci_width_p90", "power_mean", "discriminative_power",
                      "erho2", "phi"}


def test_erho2_phi_from_components(adhoc5):
    from planner.variance import fit

    c = simulate.predict(adhoc5, topics=[25, 100], method="analytic")
    vc = fit(adhoc5, method="anova")
    for n in (25, 100):
        assert c.row(n)["erho2"] == pytest.approx(float(vc.erho2(n)), rel=1e-12)
        assert c.row(n)["phi"] == pytest.approx(float(vc.phi(n)), rel=1e-12)


def test_variance_selectors_agree_with_variance_module(adhoc5):
    from planner.variance import pair_variance

    a, b = simulate.pair_index(adhoc5.n_systems)
    _, s2 = simulate.pair_moments(adhoc5.values, a, b)
    for sel in ("pair", "pooled", "within-system", "percentile:95"):
        np.testing.assert_allclose(pairs.select_variance(sel, s2, adhoc5.values),
                                   pair_variance(adhoc5, sel), rtol=1e-12)
    # identity: the mean over pairs of s2_d is exactly 2 var_e (DESIGN.md)
    assert s2.mean() == pytest.approx(pairs.select_variance("pooled", s2, adhoc5.values)[0], rel=1e-12)
    c = simulate.predict(adhoc5, topics=[50], method="analytic", variance="pooled")
    assert c.variance == "pooled"
    assert np.ptp(c.per_pair["ci_width"]) == 0  # one variance for every pair


def test_pair_moments_covariance_path_matches_direct():
    rng = np.random.default_rng(5)
    x = rng.random((30, 400))
    x[7] = x[3]  # identical systems: must give exactly 0
    a, b = simulate.pair_index(30)
    d = x[a] - x[b]
    big_a = np.repeat(a, 20)
    big_b = np.repeat(b, 20)  # P * T > 4e6 forces the covariance path
    dbar, s2 = simulate.pair_moments(x, big_a, big_b)
    np.testing.assert_allclose(dbar, np.repeat(d.mean(axis=1), 20), atol=1e-14)
    np.testing.assert_allclose(s2, np.repeat(d.var(axis=1, ddof=1), 20), rtol=1e-10, atol=1e-15)
    k = np.flatnonzero((big_a == 3) & (big_b == 7))
    assert (s2[k] == 0).all() and (dbar[k] == 0).all()


def test_power_spline_matches_exact_noncentral_t():
    # the reference: scipy.stats.nct (two tails), on a grid of df and noncentrality
    rng = np.random.default_rng(2)
    nc = np.concatenate([np.linspace(0, 12, 241), rng.uniform(0, 150, 400), [np.inf]])
    for df in (1, 2, 3, 4, 7, 19, 49, 99, 499, 9999):
        crit = stats.t.ppf(0.975, df)
        exact = t_power_exact(df, nc, 0.05)  # scipy.stats.nct, its NaN tails mended
        got = analytic.t_power(nc, df, crit)
        assert np.abs(got - exact).max() < 1e-6, df
        assert got[-1] == 1.0 and abs(got[0] - 0.05) < 1e-12


def test_power_has_no_size_cliff():
    # one computation for any number of values: a large call agrees with a small one exactly
    nc = np.random.default_rng(3).uniform(0, 20, 30_000)
    crit = stats.t.ppf(0.975, 49)
    big = analytic.t_power(nc, 49, crit)
    assert np.array_equal(big[:100], analytic.t_power(nc[:100], 49, crit))


# ------------------------------------------------------------------ bootstrap vs plain loop
def _plain_loop(x, a, b, n, trials, rng, alpha=0.05):
    """The reference of issue 4: draw n topic indices with replacement, average both systems,
    record the difference and whether the order flips, sort for percentiles."""
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
    return flips / trials, lo, hi, diffs.std()


@pytest.mark.slow
def test_bootstrap_agrees_with_plain_per_pair_loop(adhoc5_small):
    R, n = 10_000, 25
    m = adhoc5_small
    c = simulate.predict(m, topics=[n], method="bootstrap", n_resamples=R, rng=11)
    rev = c.per_pair["reversal_rate"][:, 0]
    close = np.flatnonzero((rev > 0.05) & (rev < 0.45))
    assert close.size >= 3
    x = m.values
    rng = np.random.default_rng(99)
    for p in close[:3]:
        a, b = c.pair_a[p], c.pair_b[p]
        loop_rev, lo, hi, sd = _plain_loop(x, a, b, n, R, rng)
        pbar = (loop_rev + rev[p]) / 2
        se = math.sqrt(2 * pbar * (1 - pbar) / R)  # two independent binomial estimates
        assert abs(rev[p] - loop_rev) <= 4 * se
        # percentile endpoints: se of a sample quantile sqrt(q(1-q)/R) / f(x_q), normal density
        f = stats.norm.pdf(Z975) / sd
        se_q = math.sqrt(0.025 * 0.975 / R) / f
        width = c.per_pair["ci_width"][p, 0]
        assert abs(width - (hi - lo)) <= 4 * math.sqrt(2) * 2 * se_q


def _normal_matrix(T=600, seed=3):
    rng = np.random.default_rng(seed)
    mu = np.array([0.0, 0.01, 0.02, 0.035, 0.05])[:, None]
    return _matrix(mu + rng.normal(0, 0.1, (1, T)) + rng.normal(0, 0.2, (5, T)), measure="synthetic")


def test_analytic_and_bootstrap_agree_where_normal_holds():
    m = _normal_matrix()
    R, n = 10_000, 100
    T = m.n_topics
    an = simulate.predict(m, topics=[n], method="analytic")
    bo = simulate.predict(m, topics=[n], method="bootstrap", n_resamples=R, rng=4)
    # the bootstrap's variance of a mean is s2_d (T-1)/T / n (ddof 0): exact bias, accounted for
    se_a = np.sqrt(an.s2_d / n)
    se_b = np.sqrt(an.s2_d * (T - 1) / T / n)
    p_a = an.per_pair["reversal_rate"][:, 0]
    p_b = stats.norm.cdf(-np.abs(an.dbar) / se_b)
    bias = np.abs(p_a - p_b)
    p = bo.per_pair["reversal_rate"][:, 0]
    assert np.all(np.abs(p - p_a) <= 4 * np.sqrt(p_a * (1 - p_a) / R) + bias)
    sw = bo.per_pair["swap_rate"][:, 0]
    sw_a = an.per_pair["swap_rate"][:, 0]
    assert np.all(np.abs(sw - sw_a) <= 4 * np.abs(2 * (1 - 2 * p_a)) * np.sqrt(p_a * (1 - p_a) / R)
                  + 2 * bias + 1e-12)
    # percentile interval ~ z-based; analytic is t-based: width ratio t/z, plus the ddof factor
    t = stats.t.ppf(0.975, n - 1)
    expect = an.per_pair["ci_width"][:, 0] * (Z975 / t) * (se_b / se_a)
    se_q = math.sqrt(0.025 * 0.975 / R) / (stats.norm.pdf(Z975) / se_b)
    assert np.all(np.abs(bo.per_pair["ci_width"][:, 0] - expect) <= 4 * 2 * se_q)
    pw = bo.per_pair["power"][:, 0]
    pw_a = an.per_pair["power"][:, 0]
    assert np.all(np.abs(pw - pw_a) <= 4 * np.sqrt(pw_a * (1 - pw_a) / R) + 0.002)  # + ddof effect bound


# ------------------------------------------------------------------ determinism
@pytest.mark.parametrize("method,strata", [("bootstrap", "proportional"), ("analytic", "optimal"),
                                           ("subsample", "stratified")])
def test_one_topic_stratum_is_refused(adhoc5, method, strata):
    # a 1-topic stratum has no within-stratum variance: resampling it twice added none and
    # narrowed the widths (0.176 against 0.243 without strata on TREC-5), silently
    m = adhoc5.with_strata(["tiny" if i == 0 else "big" for i in range(adhoc5.n_topics)])
    with pytest.raises(ParameterError, match=r"strata: .*at least 2 topics.*'tiny' \(1\)"):
        simulate.predict(m, topics=[10], method=method, strata=strata, n_resamples=20, rng=1)
    assert simulate.predict(m, topics=[10], method=method, n_resamples=20, rng=1).rows  # uniform: fine


def test_topic_counts_bounded_and_seed_checked(adhoc5):
    # a count beyond any search (1e23 used to crash inside scipy) and a negative seed are
    # ParameterErrors naming the argument, not tracebacks
    with pytest.raises(ParameterError, match="topics: topic counts must be at most 10,000,000"):
        simulate.predict(adhoc5, topics=[10, 10 ** 23], method="analytic")
    assert simulate.predict(adhoc5, topics=[simulate.MAX_TOPICS], method="analytic").rows[0]["n_topics"] \
        == simulate.MAX_TOPICS
    with pytest.raises(ParameterError, match="rng: a seed must be an integer >= 0"):
        simulate.predict(adhoc5, topics=[10], method="bootstrap", n_resamples=10, rng=-1)
    with pytest.raises(ParameterError, match="n_resamples: must be at most 1,000,000"):
        simulate.predict(adhoc5, topics=[10], method="bootstrap", n_resamples=10 ** 9, rng=1)


@pytest.mark.parametrize("method,R,strata", [("bootstrap", 100, "uniform"), ("subsample", 60, "uniform"),
                                             ("parametric", 20, "uniform"), ("bootstrap", 100, "proportional"),
                                             ("bootstrap", 100, "optimal"), ("subsample", 60, "proportional")])
def test_same_seed_identical_whatever_chunk_size(adhoc5, method, R, strata):
    m = adhoc5  # 1830 pairs: 4 blocks of 512
    if strata != "uniform":  # two strata of 20 and 30 topics
        m = m.with_strata(["a" if i < 20 else "b" for i in range(m.n_topics)])
    kw = dict(topics=[10, 25], method=method, n_resamples=R, rng=123, strata=strata)
    ref = simulate.predict(m, **kw)
    for chunk in (1, 1024):
        c = simulate.predict(m, chunk_pairs=chunk, **kw)
        for k in ref.per_pair:
            assert np.array_equal(ref.per_pair[k], c.per_pair[k], equal_nan=True), (method, chunk, k)
        assert c.to_dict() == ref.to_dict()
    other = simulate.predict(m, **dict(kw, rng=124))
    assert other.to_dict()["rows"] != ref.to_dict()["rows"]


@pytest.mark.parametrize("variance", ["pair", "pooled", "within-system", "percentile:95"])
def test_stratified_analytic_per_stratum_variances_and_memory(adhoc5, variance):
    # with strata, each stratum's variance comes from its own topics: the pair's own
    # s2_d there ("pair") or one value from all the stratum's pairs; the same numbers
    # whatever the memory budget (small budgets use smaller blocks in the pair passes)
    from planner.variance import pair_index, pair_moments

    m = adhoc5.with_strata(["a" if i < 20 else "b" for i in range(adhoc5.n_topics)])
    kw = dict(topics=[10, 24], method="analytic", strata="proportional", variance=variance)
    ref = simulate.predict(m, **kw)
    small = simulate.predict(m, max_memory=4096, **kw)
    for k in ref.per_pair:
        assert np.array_equal(ref.per_pair[k], small.per_pair[k], equal_nan=True), k
    assert small.to_dict() == ref.to_dict()
    # the interval width at n = 24 (n_k = 10 + 14 of 20 + 30 topics, weights 0.4 / 0.6)
    x = adhoc5.topic_scores()
    a, b = pair_index(x.shape[0])
    var = []
    for g in (slice(0, 20), slice(20, 50)):
        s2 = pair_moments(x[:, g], a, b)[1]
        var.append(s2 if variance == "pair" else pairs.select_variance(variance, s2, x[:, g]))
    se = np.sqrt(0.4 ** 2 * var[0] / 10 + 0.6 ** 2 * var[1] / 14)
    width = 2 * stats.t.ppf(0.975, 24 - 2) * se
    assert np.allclose(ref.per_pair["ci_width"][:, 1], width, rtol=1e-10, atol=1e-15)


@pytest.mark.parametrize("method", ["predictive", "analytic", "predictive-integrated", "predictive-shrunk",
                                    "predictive-pooled", "predictive-npmle", "predictive-mixture"])
def test_closed_form_methods_identical_whatever_chunk_size(adhoc5, method):
    # the predictive rates are computed per chunk of pairs (memory bound of the module
    # docstring) with one prior fitted over all pairs: the same numbers as one call over all
    # pairs of planner.simulate.predictive_pair_rates, with the prior, variance and (integrated)
    # degrees of freedom that the method's name stands for in `planner validate`
    from planner.methods import method as registered
    from planner.simulate import predictive_pair_rates, variance_df
    from planner.variance import pair_index, pair_moments

    ref = simulate.predict(adhoc5, topics=[10, 25, 50], method=method)
    # chunks of pairs, and (max_memory) the blocks of the pair-moment passes too
    for chunk, mem in ((1, None), (1024, None), (None, 4096)):
        kw = {"chunk_pairs": chunk} if mem is None else {"max_memory": mem}
        c = simulate.predict(adhoc5, topics=[10, 25, 50], method=method, **kw)
        for k in ref.per_pair:
            assert np.array_equal(ref.per_pair[k], c.per_pair[k], equal_nan=True), (method, chunk, k)
        assert c.to_dict() == ref.to_dict()
    assert ref.method == method and ref.variance == "pair" and ref.seed is None
    if method != "analytic":
        spec = registered(method).spec
        prior, variance, integrate = spec.prior, spec.variance, spec.integrate
        x = adhoc5.topic_scores()
        a, b = pair_index(x.shape[0])
        dbar, s2, kurt = pair_moments(x, a, b, kurtosis=True)
        df = variance_df(x.shape[1], kurt) if integrate else None
        whole = predictive_pair_rates(dbar, s2, x.shape[1], [10, 25, 50], prior=prior, variance=variance, df=df)
        tie = (dbar == 0) & (s2 == 0)
        for k in ("swap_rate", "reversal_rate"):
            expect = np.where(tie[:, None], 0.5, whole[k])
            assert np.allclose(ref.per_pair[k], expect, rtol=1e-12, atol=0), k
        # the other statistics are the analytic ones with each pair's own variance
        an = simulate.predict(adhoc5, topics=[10, 25, 50], method="analytic")
        for k in ("ci_width", "power", "significant"):
            assert np.array_equal(ref.per_pair[k], an.per_pair[k]), k


def test_predictive_curve_records_its_prior(adhoc5, capsys):
    # the fitted prior is part of the output: tau2 as planner.simulate.fit_prior gives it over
    # all pairs, with the variance model, and the median shrinkage tau2 / (tau2 + s2 / T)
    from planner.cli import main
    from planner.simulate import fit_prior, pair_variance_model

    for method, var in (("predictive", "pair"), ("predictive-shrunk", "shrunk")):
        c = simulate.predict(adhoc5, topics=[25], method=method)
        s2 = pair_variance_model(c.s2_d, var)
        ref = fit_prior(c.dbar, s2, adhoc5.n_topics)
        assert c.prior["kind"] == "normal" and c.prior["variance"] == var and not c.prior["integrated"]
        assert c.prior["tau2"] == ref.tau2 and c.prior["n0"] == adhoc5.n_topics
        pos = s2[s2 > 0]
        assert c.prior["shrinkage_median"] == pytest.approx(np.median(ref.tau2 / (ref.tau2 + pos / adhoc5.n_topics)))
        assert 0 < c.prior["shrinkage_median"] < 1
        assert c.to_dict()["prior"] == json.loads(json.dumps(c.to_dict()["prior"]))
    assert simulate.predict(adhoc5, topics=[25], method="predictive-integrated").prior["integrated"] is True
    assert simulate.predict(adhoc5, topics=[25], method="analytic").prior is None
    assert simulate.predict(adhoc5, topics=[25], method="analytic").to_dict()["prior"] is None
    f = adhoc5.source
    assert main(["predict", "--scores", str(f), "--topics", "25", "--method", "predictive"]) == 0
    assert "prior on pair differences: normal, variance pair, tau2" in capsys.readouterr().out
    # the default's prior: a scale mixture of standardized differences, with its sd
    c = simulate.predict(adhoc5, topics=[25])
    assert c.prior["kind"] == "scale" and c.prior["n0"] == adhoc5.n_topics
    assert main(["predict", "--scores", str(f), "--topics", "25"]) == 0
    assert f"(deconvolved), sd of the standardized true differences {c.prior['tau2'] ** 0.5:.3g}" \
        in capsys.readouterr().out


def test_predictive_variants_differ_and_take_no_other_variance(adhoc5_small):
    # each variant really changes the swap rates (a name that silently fell back to the
    # default would pass the test above only if the references were wrong too)
    base = simulate.predict(adhoc5_small, topics=[25], method="predictive").row(25)["swap_rate_mean"]
    for m in ("predictive-integrated", "predictive-shrunk", "predictive-pooled", "predictive-npmle"):
        assert simulate.predict(adhoc5_small, topics=[25], method=m).row(25)["swap_rate_mean"] != base, m
    assert simulate.predict(adhoc5_small, topics=[25], method="predictive-pair").row(25)["swap_rate_mean"] == base
    with pytest.raises(ParameterError, match="each pair's own variance") as e:
        simulate.predict(adhoc5_small, topics=[25], method="predictive-shrunk", variance="pooled")
    assert e.value.parameter == "variance"
    with pytest.raises(ParameterError, match="strata") as e:
        simulate.predict(adhoc5_small, topics=[25], method="predictive-integrated", strata="stratified")


def test_count_stream_independent_of_other_counts(adhoc5_small):
    one = simulate.predict(adhoc5_small, topics=[25], method="bootstrap", n_resamples=300, rng=8)
    two = simulate.predict(adhoc5_small, topics=[10, 25], method="bootstrap", n_resamples=300, rng=8)
    assert one.row(25) == two.row(25)
    assert np.array_equal(one.per_pair["swap_rate"][:, 0], two.per_pair["swap_rate"][:, 1])


# ------------------------------------------------------------------ other methods
def test_parametric_matches_its_normal_model(adhoc5_small):
    R, n = 4000, 25
    pa = simulate.predict(adhoc5_small, topics=[n], method="parametric", n_resamples=R, rng=5)
    an = simulate.predict(adhoc5_small, topics=[n], method="analytic", variance="pooled")
    assert pa.variance == "pooled"
    p_a = an.per_pair["reversal_rate"][:, 0]
    p = pa.per_pair["reversal_rate"][:, 0]
    assert np.all(np.abs(p - p_a) <= 4 * np.sqrt(p_a * (1 - p_a) / R) + 1e-12)
    pw_a = an.per_pair["power"][:, 0]
    assert np.all(np.abs(pa.per_pair["power"][:, 0] - pw_a) <= 4 * np.sqrt(pw_a * (1 - pw_a) / R))


def test_subsample_swap_matches_plain_disjoint_loop(adhoc5_small):
    R, n = 3000, 20
    c = simulate.predict(adhoc5_small, topics=[n], method="subsample", n_resamples=R, rng=6)
    sw = c.per_pair["swap_rate"][:, 0]
    p = int(np.argmin(np.abs(sw - 0.25)))
    a, b = c.pair_a[p], c.pair_b[p]
    x = adhoc5_small.values
    rng = np.random.default_rng(7)
    swaps = 0.0
    for _ in range(R):  # Voorhees & Buckley: two disjoint n-topic sets
        perm = rng.permutation(x.shape[1])
        da = x[a, perm[:n]].mean() - x[b, perm[:n]].mean()
        db = x[a, perm[n:2 * n]].mean() - x[b, perm[n:2 * n]].mean()
        sa, sb = np.sign(da), np.sign(db)
        swaps += 0.5 if (sa == 0 or sb == 0) else float(sa != sb)
    loop = swaps / R
    pbar = (loop + sw[p]) / 2
    assert abs(loop - sw[p]) <= 4 * math.sqrt(2 * pbar * (1 - pbar) / R)


def test_stratified_subsample_equals_plain_loop_on_the_same_draws():
    # K = 2 strata, proportional: each of the R set pairs draws, within every stratum, two
    # disjoint sets of n_k topics (stream n of the seed, stratum by stratum, the first n_k
    # and the next n_k of g_n.choice(T_k, 2 n_k, replace=False), resample by resample); swap =
    # share of set pairs whose stratified mean differences have opposite signs (ties half),
    # reversal over the 2R sets
    rng = np.random.default_rng(13)
    S, T, n, R = 4, 30, 10, 300
    x = np.round(rng.random((S, T)) * 0.6 + np.array([[0.0], [0.1], [0.2], [0.3]]), 2)
    strata = ["p"] * 12 + ["q"] * 18
    c = simulate.predict(_matrix(x, strata=strata), topics=[n], method="subsample", strata="proportional",
                         n_resamples=R, rng=3)
    assert c.rows[0]["allocation"] == {"p": 4, "q": 6}
    g_n = kernels.count_stream(np.random.default_rng(3).bit_generator.seed_seq.spawn(1)[0], n)
    groups, nk = [np.arange(12), np.arange(12, 30)], [4, 6]
    orders = [np.array([g_n.choice(g.size, 2 * k, replace=False) for _ in range(R)]) for g, k in zip(groups, nk)]
    for p_, (i, j) in enumerate(zip(c.pair_a, c.pair_b)):
        d = x[i] - x[j]
        # signs of the stratified means of set A (first n_k) and set B (next n_k), exactly:
        # sum_k W_k mean_k in hundredths times T L (L = 12, the lcm of 4 and 6) is the
        # integer sum_k (T_k L / n_k) sum_k
        q = np.rint(d * 100).astype(np.int64)
        m = {}
        for half in ("A", "B"):
            tot = np.zeros(R, dtype=np.int64)
            for g, k, o in zip(groups, nk, orders):
                idx = o[:, :k] if half == "A" else o[:, k:2 * k]
                tot += (g.size * 12 // k) * q[g][idx].sum(axis=1)
            m[half] = np.sign(tot)
        swap = np.mean(np.where((m["A"] == 0) | (m["B"] == 0), 0.5, (m["A"] != m["B"]).astype(float)))
        assert c.per_pair["swap_rate"][p_, 0] == pytest.approx(swap, abs=1e-12), (i, j)
        sg = np.sign(q.sum())
        both = np.concatenate([m["A"], m["B"]])
        rev = np.mean(np.where(both == 0, 0.5, (both != sg).astype(float)))
        assert c.per_pair["reversal_rate"][p_, 0] == pytest.approx(rev, abs=1e-12), (i, j)


def test_subsample_extrapolates_beyond_half(adhoc5):
    with pytest.warns(DegenerateDataWarning, match="does not fall with n"):  # the near-tie bin only
        c = simulate.predict(adhoc5, topics=[5, 10, 15, 25, 50, 100], method="subsample", n_resamples=200, rng=1)
    ex = c.extrapolation
    assert ex["fit_topics"] == [5, 10, 15, 25]
    for r in c.rows:
        assert r["extrapolated"] == (r["n_topics"] > 25)
    # one bin holding every pair: its fit is the all-pairs fit, and the rows follow it
    c = simulate.predict(adhoc5, topics=[5, 10, 15, 25, 50, 100], method="subsample", n_resamples=200, rng=1,
                         bins=(0.0, math.inf))
    ex = c.extrapolation
    r = c.row(100)
    assert r["swap_rate_mean"] == pytest.approx(ex["A"] * math.exp(-ex["B"] * 100))
    assert r["kendall_tau_mean"] == pytest.approx(1 - 2 * r["swap_rate_mean"])
    assert math.isnan(r["ci_width_median"])
    assert c.row(50)["swap_rate_mean"] < c.row(25)["swap_rate_mean"]  # B > 0 on real data
    assert ex["B"] > 0


def test_subsample_output_does_not_depend_on_the_order_of_topic_counts(adhoc5):
    # each count has its own random stream and the exponential fit is made in increasing n,
    # so every row (extrapolated ones included) is the same to the last bit in either order
    kw = dict(method="subsample", n_resamples=100, rng=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        up = simulate.predict(adhoc5, topics=[5, 10, 15, 25, 40, 100], **kw)
        down = simulate.predict(adhoc5, topics=[100, 40, 25, 15, 10, 5], **kw)
    assert up.extrapolation["fit_topics"] == down.extrapolation["fit_topics"] == [5, 10, 15, 25]
    assert (up.extrapolation["A"], up.extrapolation["B"]) == (down.extrapolation["A"], down.extrapolation["B"])
    for n in (5, 10, 15, 25, 40, 100):
        a, b = up.row(n), down.row(n)
        assert a.keys() == b.keys()
        for k in a:
            assert a[k] == b[k] or (a[k] != a[k] and b[k] != b[k]), (n, k, a[k], b[k])


def test_every_method_is_scale_invariant_up_to_the_largest_accepted_score():
    # scores up to MAX_ABS_SCORE run without overflow and give the same rates as on [0, 1]
    from planner.scores import MAX_ABS_SCORE

    rng = np.random.default_rng(0)
    v = rng.uniform(0, 0.6, (8, 30)) + np.arange(8)[:, None] * 0.05
    scale = MAX_ABS_SCORE / 2
    small, big = (_matrix(v * k) for k in (1.0, scale))
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        for method in ("predictive", "analytic", "bootstrap", "subsample", "parametric"):
            a = simulate.predict(small, topics=[10, 15], method=method, rng=1, n_resamples=100)
            b = simulate.predict(big, topics=[10, 15], method=method, rng=1, n_resamples=100)
            for ra, rb in zip(a.rows, b.rows):
                assert rb["swap_rate_mean"] == pytest.approx(ra["swap_rate_mean"], rel=1e-9), method
                assert rb["ci_width_median"] == pytest.approx(ra["ci_width_median"] * scale, rel=1e-6)


def test_predictive_delegates_to_pilot(adhoc5_small):
    from planner.simulate import predictive_pair_rates

    c = simulate.predict(adhoc5_small, topics=[25, 50], method="predictive")
    ref = predictive_pair_rates(c.dbar, c.s2_d, adhoc5_small.n_topics, [25, 50])
    np.testing.assert_array_equal(c.per_pair["swap_rate"], ref["swap_rate"])
    an = simulate.predict(adhoc5_small, topics=[25, 50], method="analytic")
    np.testing.assert_array_equal(c.per_pair["ci_width"], an.per_pair["ci_width"])
    assert simulate.predict(adhoc5_small, topics=[25]).method == "deconvolved"  # the default


@pytest.mark.filterwarnings("ignore:variance component of systems")
def test_identical_systems_count_as_ties():
    x = np.array([[0.2, 0.4, 0.6, 0.1], [0.2, 0.4, 0.6, 0.1], [0.5, 0.1, 0.3, 0.2]])
    m = _matrix(x)
    with pytest.warns(DegenerateDataWarning, match="identical"):
        an = simulate.predict(m, topics=[4], method="analytic")
    with pytest.warns(DegenerateDataWarning, match="identical"):
        bo = simulate.predict(m, topics=[4], method="bootstrap", n_resamples=100, rng=1)
    # pair (0, 1) is pair index 0: every resample ties, ties count half
    assert an.per_pair["reversal_rate"][0, 0] == 0.5
    assert bo.per_pair["reversal_rate"][0, 0] == 0.5
    assert bo.per_pair["swap_rate"][0, 0] == 0.5
    assert bo.per_pair["ci_width"][0, 0] == 0.0
    with pytest.warns(DegenerateDataWarning, match="identical"):
        pr = simulate.predict(m, topics=[4], method="predictive")
    assert pr.per_pair["swap_rate"][0, 0] == 0.5 and pr.per_pair["reversal_rate"][0, 0] == 0.5


# ------------------------------------------------------------------ strata
def test_allocate_counts_hand_cases():
    # proportional, largest remainder, at least 2 each: 10 * (.5, .3, .2) -> 5, 3, 2
    assert simulate.allocate_counts(10, [0.5, 0.3, 0.2]).tolist() == [5, 3, 2]
    assert simulate.allocate_counts(7, [1, 1]).sum() == 7
    assert simulate.allocate_counts(6, [0.9, 0.1]).tolist() == [4, 2]
    assert simulate.allocate_counts(10, [0.5, 0.5], maximum=[3, 10]).tolist() == [3, 7]
    with pytest.raises(ParameterError, match="topics"):
        simulate.allocate_counts(3, [1, 1])
    # quotas 2.39, 117.99, 1.15 -> 2 (the minimum), 47.47: the two topics the minimum takes come
    # out of every other stratum in proportion, and 117.99 is rounded up, not down
    assert simulate.allocate_counts(169, [2.39, 117.99, 1.15, 47.47]).tolist() == [2, 118, 2, 47]
    # a stratum at its maximum passes the rest on; weight-0 strata keep the minimum until the
    # weighted ones are full
    assert simulate.allocate_counts(12, [0.5, 0.5, 0.0], maximum=[3, 20, 20]).tolist() == [3, 7, 2]
    assert simulate.allocate_counts(14, [0.5, 0.5, 0.0], maximum=[3, 4, 20]).tolist() == [3, 4, 7]
    # a stratum that allows fewer than the minimum (subsample: half of a 3-topic stratum) gives what it has
    assert simulate.allocate_counts(5, [0.5, 0.3, 0.2], maximum=[10, 1, 10]).tolist() == [2, 1, 2]
    with pytest.raises(ParameterError, match="exceed"):
        simulate.allocate_counts(30, [1, 1], maximum=[10, 10])


@pytest.mark.slow
def test_allocate_counts_rounds_the_bounded_quotas():
    # property check against a bisection for lambda in q_k = clip(lambda w_k, 2, max_k), sum q = n:
    # every count is floor(q_k) or ceil(q_k), within its bounds, and the counts sum to n
    rng = np.random.default_rng(5)
    for _ in range(600):
        K = int(rng.integers(1, 7))
        w = rng.dirichlet(np.ones(K) * rng.uniform(0.3, 3))
        mx = rng.integers(2, 60, K) if rng.random() < 0.5 else None
        cap = np.inf if mx is None else mx
        n = int(rng.integers(2 * K, (300 if mx is None else mx.sum()) + 1))
        got = simulate.allocate_counts(n, w, maximum=mx)
        lo, hi = 0.0, 10.0 * n / w.min()
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if np.clip(mid * w, 2, cap).sum() < n else (lo, mid)
        q = np.clip(hi * w, 2, cap)
        assert got.sum() == n and (got >= 2).all() and (mx is None or (got <= mx).all())
        assert np.all(np.abs(got - q) < 1 + 1e-6), (n, w, mx, got, q)


def test_one_rounding_rule_for_every_allocation(adhoc5_small):
    # plan.allocate, the study's stacked strata and the simulator share allocate_counts
    from planner import plan
    from planner.plan import stratum_counts

    m = adhoc5_small.with_strata(["a" if i % 3 else "b" for i in range(adhoc5_small.n_topics)])
    for n in (9, 17, 40):
        al = plan.allocate(m, n=n)
        W = np.array([r["weight"] for r in al.strata])
        assert [r["n_proportional"] for r in al.strata] == simulate.allocate_counts(n, W).tolist()
        assert stratum_counts(n, W).tolist() == simulate.allocate_counts(n, W).tolist()


def test_stratified_analytic_by_hand():
    # 2 systems, strata x (t0..t3) and y (t4..t7); proportional at n = 4: n_x = n_y = 2
    x = [[0.5, 0.3, 0.4, 0.6, 0.9, 0.8, 0.7, 0.9], [0.4, 0.3, 0.2, 0.5, 0.5, 0.6, 0.6, 0.4]]
    m = _matrix(x, strata=["x"] * 4 + ["y"] * 4)
    c = simulate.predict(m, topics=[4], method="analytic", strata="proportional")
    dx = np.array([0.1, 0.0, 0.2, 0.1])
    dy = np.array([0.4, 0.2, 0.1, 0.5])
    se = math.sqrt(0.25 * dx.var(ddof=1) / 2 + 0.25 * dy.var(ddof=1) / 2)  # sum W_k^2 s2_k / n_k
    assert c.per_pair["ci_width"][0, 0] == pytest.approx(2 * stats.t.ppf(0.975, 2) * se)  # df n - K
    assert c.row(4)["allocation"] == {"x": 2, "y": 2}
    assert c.weights == {"x": 0.5, "y": 0.5}
    opt = simulate.predict(m, topics=[6], method="analytic", strata="optimal")
    assert opt.row(6)["allocation"]["y"] > opt.row(6)["allocation"]["x"]  # y varies more


@pytest.mark.filterwarnings("ignore:variance component of systems")
def test_stratified_resampling_removes_stratum_inflation():
    rng = np.random.default_rng(9)
    T = 60
    strata = ["easy"] * 30 + ["hard"] * 30
    shift = np.where(np.arange(T) < 30, 0.3, -0.3)  # a system effect that differs by stratum
    x = np.vstack([0.5 + rng.normal(0, 0.05, T), 0.5 + shift + rng.normal(0, 0.05, T)])
    m = _matrix(x, strata=strata)
    uni = simulate.predict(m, topics=[20], method="bootstrap", strata="uniform", n_resamples=2000, rng=1)
    st = simulate.predict(m, topics=[20], method="bootstrap", strata="stratified", n_resamples=2000, rng=1)
    # uniform draws mix the strata: the mean difference varies with the easy/hard share
    assert uni.per_pair["ci_width"][0, 0] > 3 * st.per_pair["ci_width"][0, 0]
    an_u = simulate.predict(m, topics=[20], method="analytic", strata="uniform")
    an_s = simulate.predict(m, topics=[20], method="analytic", strata="stratified")
    assert an_u.per_pair["ci_width"][0, 0] > 3 * an_s.per_pair["ci_width"][0, 0]


# ------------------------------------------------------------------ filtering, scenarios
def test_filter_informative_lists_removed_topics():
    x = [[0.0, 1.0, 0.50, 0.2, 0.9], [0.0, 1.0, 0.51, 0.6, 0.1], [0.0, 1.0, 0.50, 0.4, 0.5]]
    m = _matrix(x)
    f, removed = simulate.filter_informative(m)
    assert removed == ("t0", "t1")
    assert f.topics == ("t2", "t3", "t4")
    f, removed = simulate.filter_informative(m, min_spread=0.05)
    assert removed == ("t0", "t1", "t2")
    with pytest.raises(ParameterError, match="min_spread"):
        simulate.filter_informative(m, min_spread=0.95)
    # inverted bounds would drop nearly every topic (every score is <= 0.9 or >= 0.1)
    with pytest.raises(ParameterError, match="lo: the low bound must be below the high bound"):
        simulate.filter_informative(m, lo=0.9, hi=0.1)


def test_compare_measures_table(shared_data):
    from planner.collection import load_scores

    d = shared_data / "trec-terabyte"
    mats = {"AP": load_scores(d / "terabyte2006_ap.csv"), "nDCG": load_scores(d / "terabyte2006_ndcg.csv")}
    grid = [25, 50, 100, 150, 200, 250, 300]
    tab = simulate.compare_measures(mats, target="swap_rate", value=0.05, topics=grid)
    assert [r["measure"] for r in tab.rows] == ["AP", "nDCG"]
    for r in tab.rows:
        c = tab.curves[r["measure"]]
        need = r["topics_needed"]
        assert need is not None and c.row(need)["swap_rate_mean"] <= 0.05
        prev = [n for n in grid if n < need]
        if prev:
            assert c.row(prev[-1])["swap_rate_mean"] > 0.05
    assert json.loads(json.dumps(tab.to_dict()))["target"] == "swap_rate"


def test_scenarios_grid_lists_filters_and_strata(adhoc5_small):
    m = adhoc5_small.with_strata(["a" if i % 2 else "b" for i in range(adhoc5_small.n_topics)])
    tab = simulate.scenarios(m, topics=[10, 20], method="analytic", target="reversal_rate", value=0.2,
                             strata=("uniform", "optimal"), filters=(None, {"min_spread": 0.05}))
    assert len(tab.rows) == 4
    assert tab.rows[0]["scenario"] == "strata=uniform; filter=off"
    f, removed = simulate.filter_informative(m, min_spread=0.05)
    assert tab.rows[2]["removed_topics"] == list(removed)
    assert "not comparable" in tab.rows[2]["note"]
    with pytest.raises(ParameterError, match="filters"):
        simulate.scenarios(m, topics=[10], filters=({"low": 0},))


# ------------------------------------------------------------------ bad inputs
@pytest.mark.parametrize("kw,param", [
    ({"method": "magic"}, "method"),
    ({"topics": [1]}, "topics"),
    ({"topics": [10, 10]}, "topics"),
    ({"alpha": 1.5}, "alpha"),
    ({"min_diff": -0.1}, "min_diff"),
    ({"method": "bootstrap", "n_resamples": 1}, "n_resamples"),
    ({"method": "bootstrap", "variance": "pooled"}, "variance"),
    ({"method": "analytic", "variance": "percentile:120"}, "variance"),
    ({"method": "analytic", "strata": "optimal"}, "strata"),
    ({"method": "analytic", "bins": [0.1, 0.0]}, "bins"),
])
def test_bad_options_name_the_parameter(kw, param):
    args = dict(topics=[4], method="analytic")
    args.update(kw)
    with pytest.raises(ParameterError) as exc:
        simulate.predict(_matrix(HAND), **args)
    assert exc.value.parameter == param


def test_missing_cells_rejected():
    x = np.array([[0.1, np.nan, 0.3], [0.2, 0.3, 0.4]])
    m = ScoreMatrix.build(x, ["a", "b"], ["1", "2", "3"], missing="keep")
    with pytest.raises(ParameterError, match="missing"):
        simulate.predict(m, topics=[3], method="analytic")


# ------------------------------------------------------------------ CLI
def test_cli_predict_json(shared_data, capsys):
    from planner.cli import main

    f = shared_data / "trec-adhoc" / "adhoc5_ap.csv"
    rc = main(["predict", "--scores", str(f), "--topics", "25,50", "--method", "bootstrap",
               "--resamples", "50", "--seed", "3", "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "bootstrap" and out["variance"] == "empirical" and out["seed"] == 3
    assert [r["n_topics"] for r in out["rows"]] == [25, 50]
    for key in ("n_topics", "swap_rate_mean", "reversal_rate_mean", "kendall_tau_mean",
                "ci_width_median", "power_mean", "erho2", "phi"):
        assert all(isinstance(r[key], (int, float)) for r in out["rows"])
    from planner.collection import load_scores

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        ref = simulate.predict(load_scores(f), topics=[25, 50], method="bootstrap", n_resamples=50, rng=3)
    assert out["rows"] == json.loads(json.dumps(ref.to_dict()["rows"]))


def test_cli_random_commands_without_seed_draw_and_record_one(tmp_path, capsys):
    # "seed None" was printed and the run could not be repeated: a command that draws random
    # numbers without --seed now draws a seed, records it, and adds it to the provenance command
    import shlex

    from planner.cli import main

    rng = np.random.default_rng(5)
    path = tmp_path / "w.csv"
    pd.DataFrame(rng.uniform(0, 1, (30, 6)), columns=[f"s{i}" for i in range(6)]).to_csv(path, index=False)
    for argv in (["predict", "--scores", str(path), "--topics", "5,10", "--method", "bootstrap",
                  "--resamples", "30", "--json"],
                 ["validate", "--scores", str(path), "--pilot", "10", "--topics", "5", "--repeats", "3",
                  "--subsets", "20", "--json"],
                 ["size", "--target", "swap_rate:0.05", "--scores", str(path), "--resamples", "10", "--json"]):
        assert main(argv) == 0
        first = json.loads(capsys.readouterr().out)
        seed = first["seed"]
        assert isinstance(seed, int) and seed >= 0
        cmd = shlex.split(first["provenance"]["command"])
        assert cmd[-2:] == ["--seed", str(seed)]
        assert main(cmd[1:]) == 0                      # the recorded command repeats the run
        again = json.loads(capsys.readouterr().out)
        again.pop("provenance"), first.pop("provenance")
        assert again == first
    # deterministic methods draw nothing (without the prediction intervals, which draw resamples)
    assert main(["predict", "--scores", str(path), "--topics", "5", "--method", "analytic", "--prediction", "0",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["seed"] is None
    assert main(["predict", "--scores", str(path), "--topics", "5", "--method", "bootstrap", "--resamples", "30"]) == 0
    assert "(drawn; --seed repeats this run)" in capsys.readouterr().out


@pytest.mark.slow
def test_cli_variant_divisor_counts_topics_not_queries(shared_data, capsys):
    # CLEF eHealth 2016: 50 topics x 6 query variants, ids topic*1000+variant. Only fit had
    # --variant-divisor: size answered 868 "topics" that were single queries (organiser
    # walkthrough); with the divisor every command averages a topic's variants, as studies do
    from planner.cli import main
    from planner.collection import load_scores
    from planner.plan import size_for_target
    from planner.variance import stack_variants

    folder = str(shared_data / "clef-ehealth2016" / "trec_eval")
    base = ["--scores", folder, "--measure", "P_10"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        m = stack_variants(load_scores(folder, measure="P_10"), divisor=1000)
        assert m.shape == (48, 50, 6)
        want = size_for_target(m.collapse_variants(), target="swap_rate", value=0.05, method="analytic",
                               n_resamples=0).n_topics
        flat = size_for_target(load_scores(folder, measure="P_10"), target="swap_rate", value=0.05,
                               n_resamples=0).n_topics
        assert main(["size", "--target", "swap_rate:0.05", *base, "--method", "analytic", "--resamples", "0",
                     "--variant-divisor", "1000", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["n_topics"] == want and out["n_topics_observed"] == 50 and want < flat / 2
        assert main(["predict", *base, "--topics", "25,50", "--method", "analytic", "--variant-divisor", "1000",
                     "--prediction", "0", "--json"]) == 0
        rows = json.loads(capsys.readouterr().out)["rows"]
        ref = simulate.predict(m.collapse_variants(), topics=[25, 50], method="analytic").to_dict()["rows"]
        assert rows == json.loads(json.dumps(ref))
        # validate splits whole topics: the pilot and the held-out sets never share a topic's variants
        assert main(["validate", *base, "--pilot", "20", "--topics", "10", "--repeats", "2", "--subsets", "20",
                     "--seed", "1", "--variant-divisor", "1000", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["n_topics"] == 50
    assert main(["size", "--design", "paired-t", "--min-diff", "0.05", "--sigma2", "0.02",
                 "--variant-divisor", "1000"]) == 2
    assert "--variant-divisor: not used with --sigma2" in capsys.readouterr().err
    assert main(["predict", *base, "--topics", "5", "--variant-divisor", "1"]) == 2
    assert "--variant-divisor: expected an integer >= 2, got 1" in capsys.readouterr().err


def test_cli_predict_validated_variant_json(shared_data, capsys):
    # a variant that `planner validate` compared can be used for the curves themselves
    from planner.cli import main
    from planner.collection import load_scores

    f = shared_data / "trec-adhoc" / "adhoc5_ap.csv"
    assert main(["predict", "--scores", str(f), "--topics", "25,50", "--method", "predictive-integrated",
                 "--prediction", "0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "predictive-integrated" and out["variance"] == "pair" and out["seed"] is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        ref = simulate.predict(load_scores(f), topics=[25, 50], method="predictive-integrated")
    assert out["rows"] == json.loads(json.dumps(ref.to_dict()["rows"]))


def test_cli_predict_text_and_filter(shared_data, capsys):
    from planner.cli import main

    f = shared_data / "trec-adhoc" / "adhoc5_ap.csv"
    assert main(["predict", "--scores", str(f), "--topics", "25", "--method", "analytic",
                 "--filter", "0:1:0.05", "--bins"]) == 0
    out = capsys.readouterr().out
    assert "method analytic, variance pair" in out and "removed" in out and "by |difference| bin" in out


@pytest.mark.parametrize("argv,msg", [
    (["--topics", "25,x"], "--topics: expected a comma-separated list of integers"),
    (["--topics", "25", "--alpha", "2"], "--alpha: must be in [1e-10, 0.5), got 2.0"),
    (["--topics", "25", "--alpha", "0.7"], "--alpha: must be in [1e-10, 0.5), got 0.7"),
    (["--topics", "25", "--alpha", "1e-300"], "--alpha: must be in [1e-10, 0.5), got 1e-300"),
    (["--topics", "25", "--variance", "bogus"], "--variance: unknown variance selector"),
    (["--topics", "25", "--allocation", "optimal"], "--allocation: needs --strata FILE"),
    # the documented default allocation (stratified) with the default method used to fail with a
    # message that named neither way out
    (["--topics", "25", "--strata", "s.csv"], "--allocation: method 'deconvolved' (the default) draws no "
                                               "topics within strata; with --strata give --method analytic"),
    (["--topics", "25", "--strata", "s.csv", "--method", "parametric", "--allocation", "optimal"],
     "--allocation: method 'parametric' draws no topics within strata"),
    (["--topics", "25", "--method", "bootstrap", "--variance", "pooled"], "--variance:"),
    (["--topics", "25", "--filter", "0"], "--filter: expected LO:HI"),
    (["--topics", "25", "--method", "predictive-bogus"], "method: unknown method 'predictive-bogus'"),
    (["--topics", "25", "--method", "predictive-shrunk", "--variance", "pooled"], "--variance:"),
])
def test_cli_predict_bad_input_exit_2(shared_data, capsys, argv, msg):
    from planner.cli import main

    f = shared_data / "trec-adhoc" / "adhoc5_ap.csv"
    rc = main(["predict", "--scores", str(f)] + argv)
    err = capsys.readouterr().err
    assert rc == 2
    assert msg in err
    assert len(err.strip().splitlines()) == 1


def test_cli_predict_missing_file(tmp_path, capsys):
    from planner.cli import main

    rc = main(["predict", "--scores", str(tmp_path / "nope.csv"), "--topics", "25"])
    err = capsys.readouterr().err
    assert rc == 2 and "nope.csv" in err and len(err.strip().splitlines()) == 1


def test_keep_pairs_false_gives_same_rows(adhoc5_small):
    kw = dict(topics=[10, 30], method="bootstrap", n_resamples=200, rng=4)
    full = simulate.predict(adhoc5_small, **kw)
    lean = simulate.predict(adhoc5_small, keep_pairs=False, **kw)
    assert lean.per_pair is None
    assert lean.to_dict() == full.to_dict()
    no_t = simulate.predict(adhoc5_small, t_tests=False, **kw)
    np.testing.assert_array_equal(no_t.per_pair["reversal_rate"], full.per_pair["reversal_rate"])
    np.testing.assert_array_equal(no_t.per_pair["ci_width"], full.per_pair["ci_width"])
    assert math.isnan(no_t.row(10)["power_mean"])
    with pytest.raises(ParameterError, match="t_tests"):
        simulate.predict(adhoc5_small, topics=[10], t_tests="no")


def test_bins_partition_the_pairs(adhoc5):
    c = simulate.predict(adhoc5, topics=[25], method="analytic")
    bins = [b for b in c.bins if b["n_topics"] == 25]
    assert sum(b["n_pairs"] for b in bins) == c.pair_a.size
    # the bin means, weighted by pair counts, give the overall mean
    tot = sum(b["n_pairs"] * b["swap_rate_mean"] for b in bins if b["n_pairs"])
    assert tot / c.pair_a.size == pytest.approx(c.row(25)["swap_rate_mean"], rel=1e-12)
    # closer pairs swap more
    sw = [b["swap_rate_mean"] for b in bins if b["n_pairs"]]
    assert sw == sorted(sw, reverse=True)


def test_cli_predict_with_strata_file(shared_data, tmp_path, capsys):
    from planner.cli import main
    from planner.collection import load_scores

    f = shared_data / "trec-adhoc" / "adhoc5_ap.csv"
    topics = load_scores(f).topics
    meta = tmp_path / "topics.csv"
    meta.write_text("topic,stratum\n" + "".join(f"{t},{'old' if i < 25 else 'new'}\n"
                                                 for i, t in enumerate(topics)))
    rc = main(["predict", "--scores", str(f), "--strata", str(meta), "--allocation", "optimal",
               "--topics", "20", "--method", "analytic", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["strata"] == "optimal"
    assert sum(out["rows"][0]["allocation"].values()) == 20
    assert out["weights"] == {"old": 0.5, "new": 0.5}


def test_subsample_does_not_extrapolate_a_rising_swap_rate(adhoc5):
    # near-tied pairs: disjoint halves of the 50 topics order them oppositely more often as
    # n grows (about 0.57, 0.69, 0.79 at 10, 20, 25), so the exponential fit has B < 0 and
    # growing it would give "swap rates" above 1 (1.35 at 50, 4.0 at 100): left undefined
    with pytest.warns(DegenerateDataWarning, match=r"does not fall with n .*\[0, 0\.01\)"):
        c = simulate.predict(adhoc5, topics=[10, 20, 25, 50, 100], method="subsample", n_resamples=300, rng=7)
    by_bin = {b["bin_lo"]: b["fit"] for b in c.extrapolation["by_bin"]}
    assert by_bin[0.0]["B"] < 0 and by_bin[0.0]["extrapolates"] is False
    assert c.extrapolation["extrapolates"] is True and c.extrapolation["B"] > 0
    for br in c.bins:
        if br["n_topics"] > 25:
            if br["bin_lo"] == 0.0:
                assert math.isnan(br["swap_rate_mean"])
            else:
                assert math.isnan(br["swap_rate_mean"]) or 0.0 <= br["swap_rate_mean"] <= 1.0
    # the all-pairs rate above T/2 is the pair-weighted mean of the bins, so it is undefined too
    # (the single exponential through the all-pairs curve gave 0.022 at n = 100, below the
    # 0.035 the other bins alone give: CLI output audit)
    assert all(0.0 <= r["swap_rate_mean"] <= 1.0 for r in c.rows if r["n_topics"] <= 25)
    assert all(math.isnan(r["swap_rate_mean"]) for r in c.rows if r["n_topics"] > 25)


def test_subsample_all_pairs_extrapolation_is_the_pair_weighted_mean_of_the_bins(adhoc5):
    # bins that all extrapolate (the near-ties left out of none: one bin from 0.01 up, one below)
    c = simulate.predict(adhoc5, topics=[10, 20, 25, 50, 100], method="subsample", n_resamples=300, rng=7,
                         bins=(0.0, 0.05, math.inf))
    assert c.extrapolation["all_pairs"] == "pair-weighted mean of the bins"
    for n in (50, 100):
        brs = [br for br in c.bins if br["n_topics"] == n]
        if any(math.isnan(br["swap_rate_mean"]) for br in brs):
            pytest.skip("a bin does not extrapolate on this draw")
        want = sum(br["swap_rate_mean"] * br["n_pairs"] for br in brs) / sum(br["n_pairs"] for br in brs)
        assert c.row(n)["swap_rate_mean"] == pytest.approx(want, rel=1e-12)
        assert c.row(n)["kendall_tau_mean"] == pytest.approx(1 - 2 * want, rel=1e-12)
    # above every single-exponential value: pairs that decay at different rates decay slower together
    ex = c.extrapolation
    assert c.row(100)["swap_rate_mean"] > ex["A"] * math.exp(-ex["B"] * 100)


def test_observed_difference_is_exact_on_decimal_scores(shared_data):
    # TREC-6 P@10 (statistics audit): the means are multiples of 0.002, and the float mean of
    # the differences made 14 exact ties +-1e-18 (bootstrap reversal 0.478-0.528 instead of
    # the tie's 0.5) and put 31 pairs one bin low (|dbar| = 0.02 as 0.019999999999999987).
    # Reference: the same bins in exact rational arithmetic from the CSV text.
    from fractions import Fraction

    import pandas as pd

    path = shared_data / "trec-adhoc" / "adhoc6_p10.csv"
    raw = pd.read_csv(path, dtype=str)
    from planner.collection import load_scores

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        m = load_scores(path)
        c = simulate.predict(m, topics=[10], method="bootstrap", n_resamples=200, rng=1)
    tot = {sy: sum(Fraction(v) for v in raw[sy]) for sy in m.systems}
    T = m.n_topics
    edges = [Fraction(e) for e in ("0", "0.01", "0.02", "0.03", "0.05", "0.1", "0.2")]
    exact = np.zeros(7, int)
    ties = []
    for i, (a, b) in enumerate(zip(c.pair_a, c.pair_b)):
        d = (tot[m.systems[a]] - tot[m.systems[b]]) / T
        exact[max(j for j in range(7) if abs(d) >= edges[j])] += 1
        assert float(d) == c.dbar[i]               # the nearest double to the exact value
        if d == 0:
            ties.append(i)
    assert [r["n_pairs"] for r in c.bins if r["n_topics"] == 10] == exact.tolist()
    assert len(ties) == 15
    assert np.all(c.per_pair["reversal_rate"][ties, 0] == 0.5)


def test_subsample_bin_with_no_swaps_extrapolates_to_zero(adhoc5):
    # TREC-5 AP, seed 7: the pairs more than 0.2 apart never swap at 10, 20 or 25 topics; the
    # counts above T/2 were left undefined ('-') without a warning; they are 0 (the expected
    # swap rate only falls with n), and the fit says so
    c = simulate.predict(adhoc5, topics=[10, 20, 25, 50, 100], method="subsample", n_resamples=300, rng=7)
    top = [br for br in c.bins if br["bin_lo"] == 0.2]
    assert [br["swap_rate_mean"] for br in top if br["n_topics"] <= 25] == [0.0, 0.0, 0.0]
    assert [br["swap_rate_mean"] for br in top if br["n_topics"] > 25] == [0.0, 0.0]
    fit = {b["bin_lo"]: b["fit"] for b in c.extrapolation["by_bin"]}[0.2]
    assert fit["zero"] is True and fit["extrapolates"] is True
    # a lone positive rate at the largest simulated count cannot be fitted: NaN, and named
    rows = [{"n_topics": 10, "swap_rate_mean": 0.02}, {"n_topics": 20, "swap_rate_mean": 0.01},
            {"n_topics": 40, "swap_rate_mean": float("nan")}]
    bins = [dict(r, bin_lo=0.0, bin_hi=0.5, n_pairs=3) for r in rows]
    bins[0]["swap_rate_mean"] = 0.0
    with pytest.warns(DegenerateDataWarning, match=r"fewer than 2 .* in \[0, 0\.5\)"):
        fit = extrapolation.extrapolate([10, 20, 40], [True, True, False], rows, bins, 1)
    # the bin holds every pair, so the all-pairs rate (the bins' pair-weighted mean) is undefined too
    assert math.isnan(bins[2]["swap_rate_mean"]) and math.isnan(rows[2]["swap_rate_mean"])
    assert fit["B"] == pytest.approx(math.log(2) / 10)


def test_subsample_without_fit_points_warns(adhoc5_small):
    with pytest.warns(DegenerateDataWarning, match="extrapolated"):
        c = simulate.predict(adhoc5_small, topics=[30, 40], method="subsample", n_resamples=20, rng=1)
    assert all(r["extrapolated"] for r in c.rows) and math.isnan(c.row(30)["swap_rate_mean"])


def test_named_pair_lookup(adhoc5_small):
    c = simulate.predict(adhoc5_small, topics=[10, 20], method="analytic")
    names = adhoc5_small.systems
    for p in (0, 5, c.pair_a.size - 1):
        a, b = names[c.pair_a[p]], names[c.pair_b[p]]
        got = c.pair(a, b)
        assert got["ci_width"] == c.per_pair["ci_width"][p].tolist()
        assert c.pair(b, a)["dbar"] == -got["dbar"]
    with pytest.raises(ParameterError, match="unknown system"):
        c.pair("nope", names[0])


# ------------------------------------------------------------------ fast resampling path (issue 4, "Speed")
def test_linear_quantiles_are_numpys_linear_quantiles():
    rng = np.random.default_rng(0)
    for R in (2, 3, 40, 2001, 10_000):
        v = np.round(rng.normal(size=(6, R)), 2)  # rounded: many ties
        v[0] = 0.0
        v[1] = rng.exponential(size=R)  # skewed
        for dtype in (np.float64, np.float32):
            w = v.astype(dtype)
            got = kernels.linear_quantiles(w.copy(), (0.025, 0.975))
            ref = np.quantile(w.astype(np.float64), [0.025, 0.975], axis=1)
            # same order statistics; numpy interpolates b - (b - a)(1 - f) above f = 0.5
            np.testing.assert_allclose(got[0], ref[0], rtol=0, atol=1e-12)
            np.testing.assert_allclose(got[1], ref[1], rtol=0, atol=1e-12)


def test_count_rows():
    rng = np.random.default_rng(1)
    for R in (1, 254, 255, 256, 10_001):
        m = rng.random((4, R)) < 0.6
        m[0] = True
        assert np.array_equal(kernels.count_true(m), m.sum(axis=1))


def test_score_grid_sums_are_exact():
    # trec_eval-style decimals: the decimal grid, so equal decimal sums are equal
    q, unit = simulate.score_grid(np.array([[0.3, 0.5], [0.4, 0.4]]), 50)
    assert unit == 0.1 and q.tolist() == [[3.0, 5.0], [4.0, 4.0]]
    # arbitrary floats: a binary grid, scores move by at most 2^-50 n max|x|
    x = np.random.default_rng(2).random((7, 30))
    q, unit = simulate.score_grid(x, 50)
    assert math.log2(unit) == round(math.log2(unit))
    assert np.max(np.abs(q * unit - x)) <= 2.0 ** -50 * 50 * x.max()
    assert np.max(np.abs(q)) * 50 < 2.0 ** 50


@pytest.mark.filterwarnings("ignore:variance component of systems")
def test_bootstrap_ties_of_equal_decimal_sums_count_half():
    # topics t0, t1 give d = -0.1, +0.1 (in floating point: -0.10000000000000003 and
    # 0.09999999999999998, which do not cancel); t2 gives d = +0.8. With n = 2 draws
    # (9 equally likely ordered draws): {t0, t1} ties (2/9), {t0, t0} reverses (1/9),
    # the rest keep the order: reversal = 1/9 + 0.5 * 2/9 = 2/9 (hand calculation).
    m = _matrix([[0.3, 0.5, 0.9], [0.4, 0.4, 0.1]])
    R = 4000
    c = simulate.predict(m, topics=[2], method="bootstrap", n_resamples=R, rng=3)
    p = 2 / 9
    assert abs(c.per_pair["reversal_rate"][0, 0] - p) <= 4 * math.sqrt(p * (1 - p) / R)


@pytest.mark.filterwarnings("ignore:variance component of systems")
def test_identical_systems_tie_with_arbitrary_float_scores():
    # 7 systems (odd sizes take OpenBLAS's edge kernels): rows 0, 3 and 6 identical
    x = np.random.default_rng(5).random((7, 12))
    x[3] = x[0]
    x[6] = x[0]
    m = _matrix(x)
    with pytest.warns(DegenerateDataWarning, match="identical"):
        c = simulate.predict(m, topics=[6], method="bootstrap", n_resamples=3000, rng=2)
    a, b = c.pair_a, c.pair_b
    same = ((a == 0) & (b == 3)) | ((a == 0) & (b == 6)) | ((a == 3) & (b == 6))
    assert same.sum() == 3
    assert np.all(c.per_pair["swap_rate"][same, 0] == 0.5)
    assert np.all(c.per_pair["ci_width"][same, 0] == 0.0)
    assert np.all(c.per_pair["significant"][same, 0] == 0.0)


def test_fast_path_matches_general_path():
    # the one-stratum path (system sums, float32 t-test sums) against the general
    # path (per-pair float64 products) on the same draws: signs and order statistics
    # are the same; the t-test may differ only for resamples within float32 rounding
    # of the critical value (none expected here; allowed: 2 of R)
    rng = np.random.default_rng(7)
    S, T, n, R = 6, 40, 15, 3000
    x = rng.random((S, T))
    a, b = simulate.pair_index(S)
    W = rng.multinomial(n, np.full(T, 1.0 / T), size=R).astype(float)
    WT = np.ascontiguousarray(W.T)
    dbar = (x[a] - x[b]).mean(axis=1)
    crit = stats.t.ppf(0.975, n - 1)
    q, unit = simulate.score_grid(x, n)
    Msys = q @ WT
    cp = crit * crit / (n - 1)
    scale = unit / n
    d = x[a] - x[b]
    Q = ((d * d * (cp / (n * (1 + cp) * scale * scale))).astype(np.float32) @ WT.astype(np.float32))
    fast = kernels.fast_block(Msys, scale, a, b, Q, dbar, 0.05, 0.05, cp, False, np.float32)
    (s1, s2), = kernels.block_sums([WT], [d])  # float64 resampled sums of d and d^2
    mean = s1 / n
    thr = crit * crit * (s2 - s1 * s1 / n) / (n - 1) / n  # crit^2 var / n
    ref = kernels.draw_stats(mean, thr, dbar, 0.05, 0.05)
    np.testing.assert_array_equal(fast["reversal_rate"], ref["reversal_rate"])
    np.testing.assert_array_equal(fast["swap_rate"], ref["swap_rate"])
    np.testing.assert_allclose(fast["ci_width"], ref["ci_width"], rtol=1e-6)
    for k in ("power", "significant"):
        assert np.all(np.abs(fast[k] - ref[k]) <= 2 / R), k


@pytest.mark.parametrize("first,mode,decimals,exact", [(8, "proportional", 2, True), (7, "proportional", 2, True),
                                                       (5, "optimal", 2, True), (7, "proportional", None, False),
                                                       (5, "optimal", None, False)])
def test_stratified_bootstrap_equals_plain_loop_on_the_same_draws(first, mode, decimals, exact):
    # K = 2 strata: predict's path (per-stratum system sums on an exact score grid, a product
    # per block only for the t-tests) against a plain per-pair loop over the same draws
    # (the draws of topic count n come from stream n of the seed, stratum by stratum).
    # Scores with 2 decimals: integer stratum weights, exact means (exact ties, exact
    # percentiles) whatever the allocation (8 + 16 topics proportional, 4 + 8 drawn: one
    # weight; 7 + 17 proportional, 4 + 8, and 5 + 19 optimal, 2 + 10: two). Arbitrary
    # floats with two weights: float64 means rounded to float32 for the percentiles
    # (relative 6e-8)
    rng = np.random.default_rng(21)
    S, T, n, R = 5, 24, 12, 400
    x = rng.random((S, T))
    if decimals is not None:
        x = np.round(x, decimals)  # exact ties occur
    x[4] = x[3]  # identical systems
    strata = ["p"] * first + ["q"] * (T - first)
    m = _matrix(x, strata=strata)
    with pytest.warns(DegenerateDataWarning, match="identical"):
        c = simulate.predict(m, topics=[n], method="bootstrap", strata=mode, n_resamples=R, rng=5,
                             min_diff=0.05)
    base = np.random.default_rng(5).bit_generator.seed_seq.spawn(1)[0]
    g_n = kernels.count_stream(base, n)
    groups = [np.arange(first), np.arange(first, T)]
    alloc = c.rows[0]["allocation"]
    nk = [alloc["p"], alloc["q"]]
    assert sum(nk) == n and (first * nk[1] == (T - first) * nk[0]) == (first == 8)  # one weight or two
    Wk = [first / T, (T - first) / T]
    draws = [g_n.integers(0, g.size, size=(R, k)) for g, k in zip(groups, nk)]  # the drawn topics
    crit = stats.t.ppf(0.975, n - 2)
    for p_, (i, j) in enumerate(zip(c.pair_a, c.pair_b)):
        d = x[i] - x[j]
        dbar = d.mean()
        means = np.empty(R)
        sig = np.empty(R)
        pw = np.empty(R)
        for r in range(R):
            mk, se2 = 0.0, 0.0
            for g, k, w, dr in zip(groups, nk, Wk, draws):
                vals = d[g][dr[r]]
                mk += w * vals.mean()
                se2 += w * w * vals.var(ddof=1) / k
            means[r] = mk
            sig[r] = mk * mk > crit * crit * se2
            pw[r] = (mk + 0.05 - dbar) ** 2 > crit * crit * se2
        if np.all(d == 0):
            continue  # identical systems: reported as ties by predict (checked elsewhere)
        # exact ties (mean 0) count half; the loop's float sums may miss an exact 0, so compare
        # the signs of resamples whose |mean| is clearly non-zero and count the rest as ties
        tie = np.abs(means) < 1e-12
        opp = (np.sign(means) != np.sign(dbar)) & ~tie
        rev = (opp.sum() + 0.5 * tie.sum()) / R
        assert c.per_pair["reversal_rate"][p_, 0] == pytest.approx(rev, abs=1e-12), (i, j)
        lo, hi = np.quantile(means, [0.025, 0.975])
        tol = 1e-12 if exact else 2e-7 * max(abs(lo), abs(hi))
        assert c.per_pair["ci_width"][p_, 0] == pytest.approx(hi - lo, abs=tol), (i, j)
        assert abs(c.per_pair["significant"][p_, 0] - sig.mean()) <= 1 / R, (i, j)
        assert abs(c.per_pair["power"][p_, 0] - pw.mean()) <= 1 / R, (i, j)


def test_stratified_ties_across_strata_are_exact():
    # a resample whose strata cancel exactly is a tie (counts half): 7 topics where a - b =
    # +0.17 and 17 where it is -0.07 (15) or +0.05 (2); proportional at n = 12 draws 4 + 8,
    # weights 7/24 and 17/24, so the mean is 7/24 * 0.68/4 + 17/24 * S_B/8, exactly 0
    # whenever the 8 draws of stratum B are all -0.07 (probability (15/17)^8 = 0.37).
    # Reference: the same draws in exact rational arithmetic.
    from fractions import Fraction

    T, n, R = 24, 12, 3000
    base_scores = np.round(np.random.default_rng(1).random(T) * 0.5, 2)
    d = np.array([17] * 7 + [-7] * 15 + [5] * 2)  # hundredths
    x = np.vstack([base_scores + d / 100, base_scores, np.round(base_scores * 0.5, 2)])
    m = _matrix(np.round(x, 2), strata=["A"] * 7 + ["B"] * 17)
    c = simulate.predict(m, topics=[n], method="bootstrap", strata="proportional", n_resamples=R, rng=2)
    assert c.rows[0]["allocation"] == {"A": 4, "B": 8}
    g_n = kernels.count_stream(np.random.default_rng(2).bit_generator.seed_seq.spawn(1)[0], n)
    draws = [g_n.integers(0, size, size=(R, k)) for size, k in ((7, 4), (17, 8))]
    sums = [d[g][dr].sum(axis=1) for dr, g in zip(draws, (slice(0, 7), slice(7, T)))]
    means = [Fraction(7, 4) * int(sa) + Fraction(17, 8) * int(sb) for sa, sb in zip(*sums)]
    ties = sum(v == 0 for v in means)
    assert 0.3 < ties / R < 0.45
    rev = (sum(v < 0 for v in means) + 0.5 * ties) / R  # dbar > 0
    assert c.per_pair["reversal_rate"][0, 0] == rev
    pos = sum(v > 0 for v in means)
    assert c.per_pair["swap_rate"][0, 0] == pytest.approx(kernels.swap_distinct(np.array([pos]),
                                                                                   np.array([R - pos - ties]), R)[0])


def test_count_stream_independent_of_other_counts_float_scores():
    # arbitrary floats use a binary grid that depends on n: it must be n's own
    x = np.random.default_rng(9).random((5, 40))
    m = _matrix(x)
    one = simulate.predict(m, topics=[10], method="bootstrap", n_resamples=300, rng=8)
    two = simulate.predict(m, topics=[10, 40], method="bootstrap", n_resamples=300, rng=8)
    for k in one.per_pair:
        assert np.array_equal(one.per_pair[k][:, 0], two.per_pair[k][:, 0]), k


def test_bootstrap_without_threadpoolctl(adhoc5_small, monkeypatch):
    # threadpoolctl is optional: without it BLAS threads are left alone, same statistics
    import sys

    kw = dict(topics=[20], method="bootstrap", n_resamples=500, rng=6)
    ref = simulate.predict(adhoc5_small, **kw)
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import fails
    assert isinstance(kernels.one_blas_thread(), contextlib.nullcontext)
    c = simulate.predict(adhoc5_small, **kw)
    for k in ("reversal_rate", "swap_rate", "ci_width"):  # exact sums: independent of BLAS threads
        assert np.array_equal(ref.per_pair[k], c.per_pair[k]), k
    for k in ("power", "significant"):
        assert np.all(np.abs(ref.per_pair[k] - c.per_pair[k]) <= 2 / 500), k


# ------------------------------------------------------------------ API audit (F04, F10-F13, F15)
def _two_strata(m):
    return m.with_strata(["a" if i % 2 else "b" for i in range(m.n_topics)])


def test_fewer_than_two_systems_or_topics_refused_everywhere(adhoc5_small):
    # audit F04: one topic gave swap rates and power 1.0, one system an IndexError
    one_topic = adhoc5_small.take(topics=adhoc5_small.topics[:1])
    one_system = adhoc5_small.take(systems=adhoc5_small.systems[:1])
    for bad, what in ((one_topic, "topics"), (one_system, "systems")):
        for call in (lambda s: simulate.predict(s, topics=[10], method="analytic"),
                     lambda s: simulate.predict(s, topics=[10], method="bootstrap", n_resamples=20, rng=1),
                     lambda s: simulate.filter_informative(s),
                     lambda s: simulate.scenarios(s, topics=[10], method="analytic", strata="uniform"),
                     lambda s: simulate.compare_measures({"AP": s}, topics=[10])):
            with pytest.raises(ParameterError, match=f"need at least 2 {what} to simulate, got 1") as exc:
                call(bad)
            assert exc.value.parameter in ("scores", "scores_by_measure")


def test_arrays_and_frames_are_read_as_fit_reads_them(adhoc5_small):
    # audit F11: an ndarray, DataFrame or None gave a raw TypeError from pathlib
    ref = simulate.predict(adhoc5_small, topics=[10, 20], method="analytic")
    for other in (adhoc5_small.values, adhoc5_small.to_frame()):   # systems x topics; rows = topics
        c = simulate.predict(other, topics=[10, 20], method="analytic")
        assert [r["swap_rate_mean"] for r in c.rows] == [r["swap_rate_mean"] for r in ref.rows]
        assert c.n_collection_topics == adhoc5_small.n_topics
    f, removed = simulate.filter_informative(adhoc5_small.values, min_spread=0.05)
    f_ref, removed_ref = simulate.filter_informative(adhoc5_small, min_spread=0.05)
    assert len(removed) == len(removed_ref) and np.array_equal(f.values, f_ref.values)
    for bad in (None, [0.1, 0.2, 0.3], 3.5):
        with pytest.raises(ParameterError) as exc:
            simulate.predict(bad, topics=[10], method="analytic")
        assert exc.value.parameter == "scores"
    with pytest.raises(ParameterError) as exc:
        simulate.compare_measures({"AP": None})
    assert exc.value.parameter == "scores_by_measure"


def test_topic_counts_given_as_a_string_are_an_error(adhoc5_small):
    # audit F12: topics="50" was read character by character ("got '5'")
    with pytest.raises(ParameterError, match="topics: .*the string '50'"):
        simulate.predict(adhoc5_small, topics="50", method="analytic")
    assert simulate.predict(adhoc5_small, topics=50, method="analytic").topics == (50,)


def test_costs_only_with_optimal_and_only_for_known_strata(adhoc5_small):
    # audit F10: costs for an unknown stratum, or with uniform / proportional strata, were ignored
    m = _two_strata(adhoc5_small)
    for mode in ("uniform", "proportional", "stratified"):
        with pytest.raises(ParameterError, match="costs: costs apply only to strata='optimal'"):
            simulate.predict(m, topics=[20], method="analytic", strata=mode, costs={"a": 2})
    with pytest.raises(ParameterError, match=r"costs: unknown stratum 'zz' \(the strata are 'b', 'a'\)"):
        simulate.predict(m, topics=[20], method="analytic", strata="optimal", costs={"zz": 3})
    for bad in ("2", 0, -1, math.nan, math.inf, True):
        with pytest.raises(ParameterError, match="costs: cost of stratum 'a'"):
            simulate.predict(m, topics=[20], method="analytic", strata="optimal", costs={"a": bad})
    # a stratum not named costs 1 (documented)
    part = simulate.predict(m, topics=[20], method="analytic", strata="optimal", costs={"a": 4})
    full = simulate.predict(m, topics=[20], method="analytic", strata="optimal", costs={"a": 4, "b": 1})
    assert part.row(20)["allocation"] == full.row(20)["allocation"]
    assert part.row(20)["allocation"] != simulate.predict(m, topics=[20], method="analytic",
                                                          strata="optimal").row(20)["allocation"]
    # scenarios pass costs to the optimal scenarios only, and refuse them without one
    tab = simulate.scenarios(m, topics=[20], method="analytic", costs={"a": 4})
    assert [r["strata"] for r in tab.rows] == ["uniform", "proportional", "optimal"]
    assert tab.curves["strata=optimal; filter=off"].row(20)["allocation"] == full.row(20)["allocation"]
    with pytest.raises(ParameterError, match="costs: "):
        simulate.scenarios(m, topics=[20], method="analytic", strata=("uniform",), costs={"a": 4})


def test_unknown_scenario_options_name_the_option_and_the_function(adhoc5_small):
    # audit F13: "predict() got an unexpected keyword argument 'foo'" (a raw TypeError)
    with pytest.raises(ParameterError, match=r"foo: unknown option of compare_measures\(\)") as exc:
        simulate.compare_measures({"AP": adhoc5_small}, topics=[10], foo=1)
    assert exc.value.parameter == "foo"
    with pytest.raises(ParameterError, match=r"foo: unknown option of scenarios\(\)"):
        simulate.scenarios(adhoc5_small, topics=[10], method="analytic", strata="uniform", foo=1)
    with pytest.raises(ParameterError, match=r"keep_pairs: scenarios\(\) sets 'keep_pairs' itself"):
        simulate.scenarios(adhoc5_small, topics=[10], method="analytic", strata="uniform", keep_pairs=True)
    # predict's own options still pass through
    tab = simulate.compare_measures({"AP": adhoc5_small}, topics=[10], min_diff=0.1)
    assert tab.curves["AP"].min_diff == 0.1


def test_seed_recorded_when_drawn_and_in_scenario_tables(adhoc5_small):
    # audit F15: rng=None recorded seed None, so the curve could not be repeated; scenario tables
    # recorded no seed at all
    c = simulate.predict(adhoc5_small, topics=[10], method="bootstrap", n_resamples=30)
    assert isinstance(c.seed, int) and 0 <= c.seed < 2 ** 31 and c.to_dict()["seed"] == c.seed
    again = simulate.predict(adhoc5_small, topics=[10], method="bootstrap", n_resamples=30, rng=c.seed)
    assert again.rows == c.rows
    assert simulate.predict(adhoc5_small, topics=[10], method="analytic").seed is None
    assert simulate.predict(adhoc5_small, topics=[10], method="bootstrap", n_resamples=30,
                            rng=np.random.default_rng(3)).seed is None       # documented
    kw = dict(topics=[10], method="bootstrap", n_resamples=30)
    tab = simulate.compare_measures({"AP": adhoc5_small}, rng=1, **kw)
    assert tab.seed == 1 and json.loads(json.dumps(tab.to_dict()))["seed"] == 1
    tab = simulate.scenarios(adhoc5_small, strata="uniform", **kw)
    assert isinstance(tab.seed, int)
    assert simulate.scenarios(adhoc5_small, strata="uniform", rng=tab.seed, **kw).rows == tab.rows
    assert simulate.compare_measures({"AP": adhoc5_small}, topics=[10]).seed is None   # analytic


def test_cli_labels_rows_above_half_that_could_not_be_extrapolated(shared_data, capsys):
    from planner.cli import main

    f = str(shared_data / "trec-adhoc" / "adhoc5_ap.csv")
    assert main(["predict", "--scores", f, "--topics", "10,25,50", "--method", "subsample", "--seed", "7",
                 "--resamples", "50"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.split()[0] == "50" and last.endswith("(above T/2: not extrapolated, see the warning)")


def test_compare_measures_and_scenarios_streams_are_keyed_on_names():
    # positional child streams made a measure's bootstrap numbers depend on the measures
    # listed before it (reproducibility audit)
    from planner.simulate import compare_measures, scenarios

    rng = np.random.default_rng(0)
    x = rng.normal(0.4, 0.1, (6, 30))
    a = ScoreMatrix.build(x, [f"s{i}" for i in range(6)], [str(t) for t in range(30)], measure="A")
    b = ScoreMatrix.build(x * 0.5, a.systems, a.topics, measure="B")
    kw = dict(target="swap_rate", value=0.1, topics=[5, 10], method="bootstrap", n_resamples=50, rng=3)
    one = compare_measures({"A": a}, **kw)
    two = compare_measures({"B": b, "A": a}, **kw)
    assert one.curves["A"].rows == two.curves["A"].rows
    s1 = scenarios(a, strata=["uniform"], filters=[None], **kw)
    s2 = scenarios(a, strata=["uniform"], filters=[{"min_spread": 0.01}, None], **kw)
    name = "strata=uniform; filter=off"
    assert s1.curves[name].rows == s2.curves[name].rows


def _scores4(seed, S, T, spread, topic_sd):
    """Synthetic scores on 4 decimals: system levels, topic effects and noise, in [0, 1]."""
    rng = np.random.default_rng(seed)
    return np.round(np.clip(rng.random((S, 1)) * spread + rng.normal(0, topic_sd, (1, T))
                            + rng.normal(0, 0.1, (S, T)), 0, 1), 4)


def _gram_setup(x, n, R, seed=1):
    from planner.simulate.engine import Setup
    from planner.simulate.resampling import ResamplingEngine

    setup = Setup.build(x, "bootstrap", topics=(n,), resamples=R, base=np.random.SeedSequence(seed))
    engine = ResamplingEngine.prepare(setup)
    return setup, engine, engine.draws(0)


@pytest.mark.filterwarnings("ignore:variance component of systems")
def test_gram_sums_of_squares_match_float64_sums():
    # T > 8 n: the t-tests' sums of kappa d^2 over each resample's drawn topics come from
    # each resample's Gram matrix of the drawn (topic-centred, float32) scores; against the
    # float64 sums over the same draws. Pairs of nearly equal systems (one topic differs by
    # 0.0001; identical) take the sparse products: no cancellation, identical systems 0.
    from planner.simulate import resampling

    T, n, R = 300, 12, 700
    x = _scores4(4, 9, T, 0.5, 0.15)
    x[5] = x[2]
    x[7] = x[3]
    x[7, 17] += 0.0001
    setup, engine, st = _gram_setup(x, n, R)
    assert st.gram is not None and st.WTq is None  # the Gram path
    a, b = setup.a, setup.b
    near = ((a == 2) & (b == 5)) | ((a == 3) & (b == 7))
    assert np.array_equal(st.gram.exact, near)
    Q = st.thresholds(slice(0, a.size)).astype(np.float64)
    W = resampling.topic_counts(st.gram.idx, T)  # (T, R), float64
    d = x[a] - x[b]
    ref = (d * d * st.kappa) @ W
    np.testing.assert_allclose(Q[~near], ref[~near], rtol=2e-5, atol=1e-6 * ref[~near].max())
    np.testing.assert_allclose(Q[near], ref[near], rtol=1e-6)
    assert np.all(Q[(a == 2) & (b == 5)] == 0.0)


@pytest.mark.filterwarnings("ignore:variance component of systems")
def test_gram_path_t_tests_match_float64_tests():
    # the one-stratum engine with T > 8 n (Gram sums), against the t-tests of draw_stats on
    # float64 sums of the same draws: equal but for resamples within float32 rounding of the
    # critical value (at most 2 of R a pair)
    from planner.simulate import resampling

    T, n, R = 200, 10, 2000
    x = _scores4(6, 12, T, 0.3, 0.2)
    setup, engine, st = _gram_setup(x, n, R, seed=3)
    assert st.gram is not None
    P = setup.n_pairs
    got = engine.chunk(0, slice(0, P))
    WT = resampling.topic_counts(st.gram.idx, T)
    d = x[setup.a] - x[setup.b]
    (s1, s2), = kernels.block_sums([WT], [d])
    crit = stats.t.ppf(0.975, n - 1)
    ref = kernels.draw_stats(s1 / n, crit * crit * (s2 - s1 * s1 / n) / (n - 1) / n, setup.dbar, 0.05, 0.05)
    for k in ("power", "significant"):
        assert np.all(np.abs(got[k] - ref[k]) <= 2 / R), k
    assert np.any(got["significant"] > 0.2) and np.any(got["power"] < 0.8)  # not all 0 or 1


@pytest.mark.filterwarnings("ignore:variance component of systems")
@pytest.mark.filterwarnings("ignore:.*identical on every topic")
@pytest.mark.parametrize("method", ["bootstrap", "subsample"])
@pytest.mark.parametrize("grid", ["decimals", "raw"])
def test_compiled_t_tests_give_the_numpy_paths_bytes(monkeypatch, method, grid):
    # the compiled loops (planner.simulate.compiled) count the t-tests of the dense path
    # (n = 40: T <= 8 n) and of the Gram path (n = 5, 10: T > 8 n), with two identical systems
    # (their pair takes the sparse sums) and groups of one block and bands of 4 systems (a
    # group starts inside a system's row): every per-pair number is the numpy path's, bit for
    # bit, on 4 decimals and on raw floats (float64 sums)
    from planner.simulate import kernels, resampling

    assert kernels.compiled_loops()
    x = _scores4(11, 40, 200, 0.4, 0.15)  # 780 pairs: two blocks
    x[7] = x[3]
    if grid == "raw":
        x = x * (1 + 1e-3 * np.random.default_rng(2).random(x.shape)) / 1.0007
        x[7] = x[3]
    kw = {"topics": [5, 10, 40], "method": method, "n_resamples": 300, "rng": 4, "keep_pairs": True}
    monkeypatch.setattr(resampling, "COMPILED_WORK", 10 ** 18)
    ref = simulate.predict(x, **kw).per_pair
    monkeypatch.setattr(resampling, "COMPILED_WORK", 0)
    monkeypatch.setattr(resampling, "GRAM_CACHE", 16 * 512)
    monkeypatch.setattr(resampling, "GRAM_BAND", 4)
    got = simulate.predict(x, **kw).per_pair
    for k in ref:
        assert np.array_equal(got[k], ref[k], equal_nan=True), k
    sig = ref["significant"]
    assert np.any((sig > 0.05) & (sig < 0.95)) and np.any((ref["power"] > 0.05) & (ref["power"] < 0.95))


@pytest.mark.parametrize("exact", [True, False])
def test_compiled_pair_pass_matches_numpy_path(exact):
    # the one compiled pass of the compiled path (differences, their signs, the two t-test counts)
    # gives the numpy path's bytes: int32 differences of exact float32 sums, float32 differences of
    # float64 sums rounded as numpy rounds them, ties (0, -0, u^2 == Q), infinities and NaN included
    from planner.simulate import kernels

    rng = np.random.default_rng(5)
    S, R = 9, 1001
    M = np.rint(rng.normal(0, 3, (S, R)))
    if not exact:
        M = M + rng.normal(0, 1e-9, (S, R)) * (rng.random((S, R)) < 0.5)  # differences float32 rounds
        M[0, :6] = [-0.0, 0.0, np.inf, -np.inf, np.nan, 1e300]
        M[1, :6] = [0.0, -0.0, np.inf, 1.0, 2.0, -1e300]
    M = M.astype(np.float32) if exact else M
    aa, bb = np.array([0, 0, 1, 2, 3, 3, 7]), np.array([1, 2, 5, 3, 4, 8, 8])
    u = kernels.pair_diff(M, aa, bb, np.empty((aa.size, R), dtype=np.float32))
    Q = rng.choice([0.5, 2.0, 9.0, 30.0], (aa.size, R)).astype(np.float32)
    Q[:, :40] = (u[:, :40] * u[:, :40]).astype(np.float32)  # ties of the test
    Q[0, 40:43] = [np.inf, np.nan, -0.0]
    dp = rng.normal(0, 2, aa.size).astype(np.float32)
    dp[2] = np.float32(3e38)  # a shift that overflows
    g = (0.3 * dp.astype(np.float64) ** 2).astype(np.float32)
    sig, pw = kernels.test_counts(u, Q, dp, g)
    for tests in (None, (Q, dp, g)):
        out = np.empty((aa.size, R), dtype=np.int32 if exact else np.float32)
        (pos, neg), made = kernels.pair_pass(M, aa, bb, out, tests)
        assert np.array_equal(out.view(np.uint32), (u.astype(np.int32) if exact else u).view(np.uint32))
        assert np.array_equal(pos, np.count_nonzero(u > 0, axis=1))
        assert np.array_equal(neg, np.count_nonzero(u < 0, axis=1))
        assert made is None if tests is None else np.array_equal(made[0], sig) and np.array_equal(made[1], pw)
    assert np.all((pos + neg < R) & (pos > 300) & (neg > 300))  # ties present, both signs
    assert np.all((sig > 0) & (sig < R)) and np.all((pw > 0) & (pw <= R))
    if not exact:
        assert np.isnan(u[0, [2, 4]]).all() and u[0, 3] == -np.inf and np.signbit(u[0, 0]) and u[0, 5] == np.inf


@pytest.mark.filterwarnings("ignore:variance component of systems")
@pytest.mark.filterwarnings("ignore:.*identical on every topic")
@pytest.mark.parametrize("method", ["bootstrap", "subsample"])
def test_stratified_t_tests_from_gram_sums_match_the_dense_counts(monkeypatch, method):
    # a stratum of more than DENSE_TOPICS n_k topics (200 topics, n_k = 5 and 10) takes its sums of
    # squares from the Gram sums (work R n_k a pair, float32) instead of a dense product with its
    # draw counts (R T_k): the t-tests agree within rounding, every other statistic bit for bit
    # (the systems' sums are exact integers either way); two identical systems take the sparse sums
    from planner.simulate import resampling

    x = _scores4(8, 14, 400, 0.4, 0.15)
    x[9] = x[2]
    m = _matrix(x, strata=["a" if t % 2 else "b" for t in range(400)])
    R = 400
    kw = dict(topics=[10, 20], method=method, n_resamples=R, rng=3, strata="proportional", keep_pairs=True)
    served, block = [], resampling.GramSums.block
    monkeypatch.setattr(resampling.GramSums, "block", lambda self, sl: served.append(sl) or block(self, sl))
    got = simulate.predict(m, **kw).per_pair
    assert len(served) == 2 * 2 * 1      # 2 topic counts x 2 strata x one block of 91 pairs
    monkeypatch.setattr(resampling, "DENSE_TOPICS", 10 ** 6)      # every stratum's dense counts
    ref = simulate.predict(m, **kw).per_pair
    assert len(served) == 4
    for k in ref:
        if k in ("significant", "power"):
            assert np.all(np.abs(got[k] - ref[k]) <= 2 / R), k
            assert np.any((ref[k] > 0.05) & (ref[k] < 0.95)), k
        else:
            assert np.array_equal(got[k], ref[k], equal_nan=True), k


@pytest.mark.filterwarnings("ignore:variance component of systems")
def test_gram_sums_in_groups_and_bands_match_float64_sums(monkeypatch):
    # the Gram sums are computed a group of blocks at a time, in bands of systems a; with one
    # block a group and bands of 4 systems, groups start and end inside a system's row: every
    # pair's sums still match the float64 sums of the same draws, and equal (to float32
    # rounding) those of one group and one band; the engine's t-tests agree within 2 of R
    from planner.simulate import resampling

    T, n, R = 400, 10, 300
    x = _scores4(7, 40, T, 0.4, 0.15)  # 780 pairs: two blocks
    setup, engine, st = _gram_setup(x, n, R, seed=5)
    assert st.gram is not None and st.gram.group >= setup.n_pairs  # one group, one band
    whole = np.vstack([st.thresholds(slice(b0, min(setup.n_pairs, b0 + 512))) for b0 in (0, 512)])
    ref_stats = engine.chunk(0, slice(0, setup.n_pairs))
    monkeypatch.setattr(resampling, "GRAM_CACHE", 4 * 512 * R)
    monkeypatch.setattr(resampling, "GRAM_BAND", 4)
    setup, engine, st = _gram_setup(x, n, R, seed=5)
    assert st.gram.group == 512
    parts = np.vstack([st.thresholds(slice(b0, min(setup.n_pairs, b0 + 512))) for b0 in (0, 512)])
    W = resampling.topic_counts(st.gram.idx, T)
    d = x[setup.a] - x[setup.b]
    ref = (d * d * st.kappa) @ W
    for Q in (whole, parts):
        np.testing.assert_allclose(Q, ref, rtol=2e-5, atol=1e-6 * ref.max())
    np.testing.assert_allclose(parts, whole, rtol=1e-5, atol=1e-6 * ref.max())
    got = engine.chunk(0, slice(0, setup.n_pairs))
    for k in ("swap_rate", "reversal_rate", "ci_width"):
        assert np.array_equal(got[k], ref_stats[k]), k
    for k in ("power", "significant"):
        assert np.all(np.abs(got[k] - ref_stats[k]) <= 2 / R), k

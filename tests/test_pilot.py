"""Tests of the predictive engine's model (planner.simulate: priors, pair rates) and of
planner.validation (observed held-out rates, validate, CLI)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from planner.cli import main
from planner.errors import ParameterError
from planner.scores import ScoreMatrix
from planner.simulate import (
    MIN_DF,
    PairRates,
    fit_prior,
    pair_variance_model,
    plugin_pair_rates,
    predictive_pair_rates,
    variance_df,
)
from planner.simulate.rates import TIE_RATE
from planner.validation import observed_rates, validate
from planner.variance import pair_index, pair_moments


# --------------------------------------------------------------- pair rates
def test_plugin_hand_values():
    # hand calculation: dbar 0.05, s_d 0.1, n 25 -> z = 0.05*5/0.1 = 2.5, p = Phi(-2.5)
    r = plugin_pair_rates([0.05, -0.05, 0.0], [0.01, 0.01, 0.01], [25])
    p = stats.norm.cdf(-2.5)  # 0.0062097
    assert r["reversal_rate"][:, 0] == pytest.approx([p, p, 0.5])
    assert r["swap_rate"][:, 0] == pytest.approx([2 * p * (1 - p), 2 * p * (1 - p), 0.5])


def test_normal_prior_equals_bivariate_normal():
    # reference: scipy.stats.multivariate_normal; swap = 2 (P(A>0) - P(A>0, B>0)) with
    # A, B ~ N(m, v + s2/n), cov v (posterior predictive of two independent n-topic sets)
    rng = np.random.default_rng(3)
    dbar = rng.normal(0, 0.05, 40)
    s2 = rng.uniform(0.005, 0.03, 40)
    n0 = 20
    pr = fit_prior(dbar, s2, n0, prior="normal")
    r = predictive_pair_rates(dbar, s2, n0, [10, 50], prior="normal", variance="pair")
    for i in (0, 7, 23):
        se2 = s2[i] / n0
        m = dbar[i] * pr.tau2 / (pr.tau2 + se2)
        v = pr.tau2 * se2 / (pr.tau2 + se2)
        for j, n in enumerate((10, 50)):
            c = np.array([[v + s2[i] / n, v], [v, v + s2[i] / n]])
            pa = stats.norm.cdf(m / math.sqrt(c[0, 0]))
            pab = stats.multivariate_normal(mean=[0, 0], cov=c).cdf([m, m])
            assert r["swap_rate"][i, j] == pytest.approx(2 * (pa - pab), abs=2e-6)
            assert r["reversal_rate"][i, j] == pytest.approx(stats.norm.cdf(-abs(m) / math.sqrt(c[0, 0])))


def test_no_signal_gives_half():
    # tau2 = 0 (dbar no larger than noise): every pair is a coin flip -> swap 0.5, reversal 0.5
    dbar = np.array([0.0, 0.0, 0.0, 0.0])
    r = predictive_pair_rates(dbar, [0.01, 0.02, 0.01, 0.03], 10, [5, 50], prior="normal")
    assert np.allclose(r["swap_rate"], 0.5) and np.allclose(r["reversal_rate"], 0.5)


def test_zero_variance_pairs_and_shapes():
    dbar = np.array([0.0, 0.1, 0.02, -0.03])
    s2 = np.array([0.0, 0.0, 0.01, 0.02])
    for prior in ("normal", "npmle"):
        for variance in ("pooled", "pair", "shrunk"):
            r = predictive_pair_rates(dbar, s2, 25, [25, 50, 62], prior=prior, variance=variance)
            assert r["swap_rate"].shape == (4, 3) and r["reversal_rate"].shape == (4, 3)
            # identical on every topic: a tie (TIE_RATE); the same gap on every topic: never reversed
            assert np.all(r["swap_rate"][0] == TIE_RATE) and np.all(r["reversal_rate"][0] == TIE_RATE)
            assert np.all(r["swap_rate"][1] == 0) and np.all(r["reversal_rate"][1] == 0)
            assert np.all((r["swap_rate"] >= 0) & (r["swap_rate"] <= 0.5))
    for prior in ("normal", "scale"):   # PairRates, the plug-in model and the histogram path agree on the tie
        fitted = fit_prior(dbar, s2, 25, prior=prior)
        assert PairRates(dbar, s2, 25, fitted, "swap_rate")(40)[:2].tolist() == [TIE_RATE, 0.0]
    assert plugin_pair_rates(dbar, s2, [40])["reversal_rate"][:2, 0].tolist() == [TIE_RATE, 0.0]
    # pooled = mean over all pairs = 2 var_e identity; zero-variance pairs keep 0
    assert pair_variance_model(s2, "pooled").tolist() == [0.0, 0.0, 0.0075, 0.0075]
    assert pair_variance_model(s2, "shrunk").tolist() == pytest.approx([0.0, 0.0, 0.00875, 0.01375])


def test_predictive_corrects_plugin_bias_on_normal_model():
    # synthetic normal model, hand-checkable truth: true deltas known, so the true mean swap
    # rate is the plug-in formula at delta. From noisy pilots (n0 = 20) the plug-in model
    # understates it; the normal-prior predictive is closer (averaged over 5 pilots).
    rng = np.random.default_rng(11)
    P, n0, topics = 3000, 20, [20, 40, 60]
    delta = rng.normal(0, 0.03, P)
    s2 = np.full(P, 0.012)
    truth = plugin_pair_rates(delta, s2, topics)["swap_rate"].mean(axis=0)
    err_pred, err_plug = [], []
    for _ in range(5):
        dbar = delta + rng.normal(size=P) * np.sqrt(s2 / n0)
        err_pred.append(predictive_pair_rates(dbar, s2, n0, topics, variance="pair")["swap_rate"].mean(0) - truth)
        err_plug.append(plugin_pair_rates(dbar, s2, topics)["swap_rate"].mean(0) - truth)
    err_pred, err_plug = np.mean(err_pred, 0), np.mean(err_plug, 0)
    assert np.all(err_plug < 0)  # plug-in understates swaps
    assert np.all(np.abs(err_pred) < 0.25 * np.abs(err_plug))


def test_mixture_with_one_component_equals_normal_prior():
    # a scale mixture with the single component N(0, tau2) is the normal prior N(0, tau2)
    from planner.simulate import Prior

    rng = np.random.default_rng(4)
    dbar = rng.normal(0, 0.04, 60)
    s2 = rng.uniform(0.005, 0.03, 60)
    normal = fit_prior(dbar, s2, 25, prior="normal")
    one = Prior("mixture", np.array([math.sqrt(normal.tau2)]), np.array([1.0]), normal.tau2, 25, 60)
    for variance in ("pair", "shrunk"):
        a = predictive_pair_rates(dbar, s2, 25, [10, 40], prior=normal, variance=variance)
        b = predictive_pair_rates(dbar, s2, 25, [10, 40], prior=one, variance=variance)
        for k in a:
            assert np.allclose(a[k], b[k], rtol=1e-12, atol=1e-15)


def test_mixture_prior_fit():
    rng = np.random.default_rng(8)
    # half the pairs have delta exactly 0, half N(0, 0.05^2): the fitted null weight is large
    delta = np.where(rng.random(2000) < 0.5, 0.0, rng.normal(0, 0.05, 2000))
    s2 = np.full(2000, 0.01)
    dbar = delta + rng.normal(size=2000) * np.sqrt(s2 / 25)
    pr = fit_prior(dbar, s2, 25, prior="mixture")
    assert pr.weights.sum() == pytest.approx(1.0) and pr.grid[0] == 0.0
    small = pr.weights[pr.grid < 0.01].sum()
    assert 0.35 < small < 0.65  # about the 0.5 true null share (plus tiny components)
    assert pr.tau2 == pytest.approx(0.5 * 0.05 ** 2, rel=0.2)


def test_npmle_prior_symmetric_and_normalised():
    rng = np.random.default_rng(5)
    dbar = rng.normal(0, 0.04, 500)
    s2 = rng.uniform(0.005, 0.02, 500)
    pr = fit_prior(dbar, s2, 25, prior="npmle", grid=41)
    assert pr.weights.sum() == pytest.approx(1.0)
    assert np.allclose(pr.weights, pr.weights[::-1])
    assert np.allclose(pr.grid, -pr.grid[::-1])
    json.dumps(pr.to_dict())


def test_npmle_fit_equals_em_on_both_signs():
    # the fit uses dbar alone (symmetric grid and weights); it must equal the plain EM on
    # the 2 * pairs observations dbar and -dbar, iteration by iteration
    rng = np.random.default_rng(12)
    dbar = np.concatenate([rng.normal(0, 0.01, 150), rng.normal(0.08, 0.02, 50)])
    s2 = rng.uniform(0.002, 0.02, 200)
    iters = 40
    pr = fit_prior(dbar, s2, 25, prior="npmle", grid=31, max_iter=iters, tol=0.0)
    assert pr.iterations == iters
    x = np.concatenate([dbar, -dbar])
    se = np.sqrt(np.concatenate([s2, s2]) / 25)
    g = np.linspace(-np.abs(dbar).max(), np.abs(dbar).max(), 31)
    L = np.exp(-0.5 * ((x[:, None] - g[None, :]) / se[:, None]) ** 2)
    w = np.full(31, 1 / 31)
    for _ in range(iters):
        w = w * (L.T @ (1 / (L @ w))) / x.size
        w /= w.sum()
    np.testing.assert_allclose(pr.grid, g)
    np.testing.assert_allclose(pr.weights, w, rtol=1e-9, atol=1e-300)


@pytest.mark.parametrize("prior", ["normal", "mixture", "npmle"])
def test_pair_rates_equal_predictive_pair_rates(prior):
    # PairRates (posterior computed once, one statistic) gives exactly the values of
    # predictive_pair_rates at every n, including pairs with zero variance and dbar = 0
    from planner.simulate import PairRates

    rng = np.random.default_rng(3)
    dbar = rng.normal(0, 0.03, 300)
    s2 = rng.uniform(0.001, 0.02, 300)
    dbar[:3] = 0.0
    s2[5] = 0.0
    pr = fit_prior(dbar, s2, 20, prior=prior)
    ns = [5, 20, 57, 300]
    ref = predictive_pair_rates(dbar, s2, 20, ns, prior=pr)
    for stat in ("swap_rate", "reversal_rate"):
        f = PairRates(dbar, s2, 20, pr, stat)
        for j, n in enumerate(ns):
            np.testing.assert_array_equal(f(n), ref[stat][:, j])
    df = 19.0  # integrated over each pair's variance: no cache, the same call
    f = PairRates(dbar, s2, 20, pr, "swap_rate", df=df)
    np.testing.assert_array_equal(f(40), predictive_pair_rates(dbar, s2, 20, [40], prior=pr, df=df)["swap_rate"][:, 0])
    with pytest.raises(ParameterError, match="statistic"):
        PairRates(dbar, s2, 20, pr, "tau")


def test_pair_rate_bad_inputs():
    with pytest.raises(ParameterError, match="s2_d"):
        predictive_pair_rates([0.1, 0.2], [0.01], 25, [25])
    with pytest.raises(ParameterError, match="s2_d"):
        predictive_pair_rates([0.1], [-0.01], 25, [25])
    with pytest.raises(ParameterError, match="n0"):
        predictive_pair_rates([0.1], [0.01], 1, [25])
    with pytest.raises(ParameterError, match="topics"):
        predictive_pair_rates([0.1], [0.01], 25, [0])
    with pytest.raises(ParameterError, match="prior"):
        predictive_pair_rates([0.1], [0.01], 25, [25], prior="flat")
    with pytest.raises(ParameterError, match="variance"):
        predictive_pair_rates([0.1], [0.01], 25, [25], variance="within")


def test_variance_df_formula():
    # normal differences (kappa = 0): n0 - 1; Satterthwaite match of var(s2) = sigma^4 (2/(n0-1) + kappa/n0)
    assert variance_df(25).tolist() == [24.0]
    # g2 = 1 at n0 = 25 -> G2 = (26 * 1 + 6) * 24 / (23 * 22) = 768 / 506
    G2 = 768 / 506
    assert variance_df(25, [1.0, -1.5])[0] == pytest.approx(2 * 24 / (2 + 24 * G2 / 25))
    assert variance_df(25, [-1.5])[0] == pytest.approx(24.0)  # G2 = -33 * 24 / 506 < 0 -> kappa 0
    assert variance_df(25, [40.0])[0] == MIN_DF  # very heavy tails: floor keeps E[sigma^2] finite
    # the floor is never above normal theory: n0 - 1 = 2 at n0 = 3
    assert variance_df(3, [1.0])[0] == 2.0 and variance_df(3)[0] == 2.0
    with pytest.raises(ParameterError, match="n0"):
        variance_df(1)
    with pytest.raises(ParameterError, match="kurtosis"):
        variance_df(25, [np.nan])


def test_integrated_variance_equals_quadrature_over_chi2():
    # reference: scipy.integrate.quad of the plug-in-variance predictive rate over the density of
    # sigma^2 = s2 nu / X, X ~ chi2(nu), with the prior fitted once from s2 (as documented)
    from scipy import integrate

    rng = np.random.default_rng(5)
    dbar = rng.normal(0, 0.05, 30)
    s2 = rng.uniform(0.005, 0.03, 30)
    n0, nu = 20, np.linspace(3.0, 19.0, 30)
    pr = fit_prior(dbar, s2, n0)
    r = predictive_pair_rates(dbar, s2, n0, [10, 40], df=nu, quantiles=400)
    for i in (0, 11, 29):
        for j, n in enumerate((10, 40)):
            def f(x, key, i=i, n=n):
                one = predictive_pair_rates(dbar[i:i + 1], [s2[i] * nu[i] / x], n0, [n], prior=pr)
                return one[key][0, 0] * stats.chi2.pdf(x, nu[i])
            for key in ("swap_rate", "reversal_rate"):
                ref = integrate.quad(f, 0, np.inf, args=(key,), limit=200)[0]
                assert r[key][i, j] == pytest.approx(ref, rel=2e-3), (i, n, key)
    # more certain variance -> closer to the plug-in-variance rates; zero-variance pairs stay 0
    plain = predictive_pair_rates(dbar, s2, n0, [10, 40])
    big = predictive_pair_rates(dbar, s2, n0, [10, 40], df=1e7)
    assert np.allclose(big["swap_rate"], plain["swap_rate"], atol=1e-5)
    z = predictive_pair_rates([0.1, 0.02], [0.0, 0.01], n0, [10], df=[3.0, 3.0])
    assert z["swap_rate"][0, 0] == 0.0 and z["reversal_rate"][0, 0] == 0.0
    with pytest.raises(ParameterError, match="df"):
        predictive_pair_rates(dbar, s2, n0, [10], df=0.0)
    with pytest.raises(ParameterError, match="one value per pair"):
        predictive_pair_rates(dbar, s2, n0, [10], df=[5.0, 6.0])
    with pytest.raises(ParameterError, match="quantiles"):
        predictive_pair_rates(dbar, s2, n0, [10], df=5.0, quantiles=0)


# ------------------------------------------------------------ held-out rates
def test_pair_moments_match_loop():
    rng = np.random.default_rng(2)
    x = rng.random((6, 9))
    x[5] = x[4]  # identical systems -> exactly 0
    a, b = pair_index(6)
    dbar, s2 = pair_moments(x, a, b)
    for k, (i, j) in enumerate(zip(a, b)):
        d = x[i] - x[j]
        assert dbar[k] == pytest.approx(d.mean()) and s2[k] == pytest.approx(d.var(ddof=1))
    assert s2[-1] == 0.0 and dbar[-1] == 0.0
    # excess kurtosis with population moments, as scipy.stats.kurtosis(bias=True); 0 when constant
    d2, s22, kurt = pair_moments(x, a, b, kurtosis=True)
    assert np.array_equal(d2, dbar) and np.array_equal(s22, s2)
    ref = stats.kurtosis(x[a] - x[b], axis=1, bias=True)
    assert kurt[:-1] == pytest.approx(ref[:-1]) and kurt[-1] == 0.0


def test_observed_rates_equal_plain_loop():
    # plain per-pair loop over the same permutations (same generator seed): exact agreement
    rng = np.random.default_rng(9)
    x = np.round(rng.random((5, 14)), 1)  # coarse values -> ties occur
    x[4] = x[3]
    ref = np.sign(rng.normal(size=10))
    ref[0] = 0.0
    topics = np.array([3, 7])
    got = observed_rates(x, topics, ref, subsets=40, rng=np.random.default_rng(1))
    perms = np.argsort(np.random.default_rng(1).random((40, 14)), axis=1)
    a, b = pair_index(5)
    for j, n in enumerate(topics):
        sw = rv = 0.0
        for perm in perms:
            s1, s2 = perm[:n], perm[n:2 * n]
            for k, (i, h) in enumerate(zip(a, b)):
                d1 = x[i, s1].mean() - x[h, s1].mean()
                d2 = x[i, s2].mean() - x[h, s2].mean()
                # documented tie rule: |mean difference| <= 1e-12 is a tie (rounding of equal means)
                g1 = 0.0 if abs(d1) <= 1e-12 else np.sign(d1)
                g2 = 0.0 if abs(d2) <= 1e-12 else np.sign(d2)
                sw += abs(g1 - g2) / 2
                rv += (abs(g1 - ref[k]) + abs(g2 - ref[k])) / 4
        assert got["swap_rate"][j] == pytest.approx(sw / (40 * a.size), abs=1e-12)
        assert got["reversal_rate"][j] == pytest.approx(rv / (40 * a.size), abs=1e-12)


def test_disjoint_halves_of_a_collection_estimate_the_population_swap_rate():
    # Why validate() compares with no finite-population correction: if a collection of N topics
    # is a sample from the population, two disjoint n-topic subsets of it (even n = N/2, a
    # complete split) are two independent n-topic samples, so the observed swap rate is unbiased
    # for the population swap rate 2p(1-p), p = Phi(-|delta| sqrt(n) / sigma_d) (DESIGN.md).
    # Normal model with known deltas; Monte Carlo bound: 4 standard errors over collections.
    rng = np.random.default_rng(21)
    S, N, C = 6, 24, 600
    mu = np.array([0.0, 0.02, 0.05, 0.06, 0.1, 0.15])
    sd_e = 0.1  # per-system per-topic noise: sigma_d^2 = 2 sd_e^2
    a, b = pair_index(S)
    topics = np.array([6, 12])
    truth = plugin_pair_rates(mu[a] - mu[b], np.full(a.size, 2 * sd_e ** 2), topics)["swap_rate"].mean(0)
    vals = np.array([observed_rates(mu[:, None] + rng.normal(0, sd_e, (S, N)), topics, np.zeros(a.size),
                                    subsets=20, rng=rng)["swap_rate"] for _ in range(C)])
    se = vals.std(axis=0, ddof=1) / math.sqrt(C)
    assert np.all(np.abs(vals.mean(axis=0) - truth) < 4 * se), (vals.mean(axis=0), truth, se)
    # a finite-population-corrected target (variance sigma_d^2/n (1 - n/N), independent sets)
    # would be far off at n = N/2: the check above can tell the two apart
    fpc = plugin_pair_rates(mu[a] - mu[b], np.full(a.size, 2 * sd_e ** 2 * (1 - 12 / N)), [12])["swap_rate"].mean()
    assert abs(vals[:, 1].mean() - fpc) > 8 * se[1]


# ------------------------------------------------------------------ validate
def _toy(seed=0, S=8, T=40):
    rng = np.random.default_rng(seed)
    vals = np.clip(rng.normal(0.3, 0.05, (S, 1)) + rng.normal(0, 0.15, (1, T))
                   + rng.normal(0, 0.08, (S, T)), 0, 1)
    return ScoreMatrix.build(vals, [f"s{i}" for i in range(S)], [str(t) for t in range(T)], measure="AP")


def test_validate_structure_and_determinism():
    sm = _toy()
    v1 = validate(sm, pilot=10, topics=[5, 15], repeats=4, rng=7, subsets=50)
    v2 = validate(sm, pilot=10, topics=[5, 15], repeats=4, rng=7, subsets=50)
    assert v1.to_dict() == v2.to_dict()
    # repeat r uses child stream r: the first 2 of 4 repeats equal a run of 2 repeats
    v3 = validate(sm, pilot=10, topics=[5, 15], repeats=2, rng=7, subsets=50)
    for k in ("swap_rate", "reversal_rate"):
        assert np.array_equal(v1.observed[k][:2], v3.observed[k])
        assert np.array_equal(v1.predicted[k]["predictive"][:2], v3.predicted[k]["predictive"])
    assert len(v1.rows) == 2 * 3 * 2      # statistics x methods (the default, predictive, analytic) x n
    assert v1.methods == ("deconvolved", "predictive", "analytic")
    df = v1.to_frame()
    assert set(df.columns) >= {"statistic", "method", "n_topics", "predicted_mean", "observed_mean",
                               "rel_error_median"}
    row = df[(df.statistic == "swap_rate") & (df.method == "analytic") & (df.n_topics == 15)].iloc[0]
    rel = np.abs(v1.predicted["swap_rate"]["analytic"][:, 1] - v1.observed["swap_rate"][:, 1]) \
        / v1.observed["swap_rate"][:, 1]
    assert row.rel_error_median == pytest.approx(np.median(rel))
    # bias / spread decomposition: median of pred/obs and sd (ddof=1) of log(pred/obs) over repeats
    ratio = v1.predicted["swap_rate"]["analytic"][:, 1] / v1.observed["swap_rate"][:, 1]
    assert row.ratio_median == pytest.approx(np.median(ratio))
    assert row.log_ratio_sd == pytest.approx(np.std(np.log(ratio), ddof=1))
    json.dumps(v1.to_dict(), allow_nan=False)


def test_validate_integrated_method_uses_each_pilots_kurtosis():
    # predictive-integrated = predictive_pair_rates with df = variance_df(pilot, kurtosis of the
    # pilot's differences), recomputed here on the split of repeat r (child stream r of the seed)
    sm = _toy(seed=4)
    v = validate(sm, pilot=12, topics=[5, 10], repeats=3, rng=11, subsets=20,
                 methods=("predictive", "predictive-integrated"))
    x = sm.topic_scores()
    a, b = pair_index(x.shape[0])
    for r, g in enumerate(np.random.default_rng(11).spawn(3)):     # repeat r: child r of the seed
        pi = np.sort(g.permutation(x.shape[1])[:12])
        dbar, s2, kurt = pair_moments(x[:, pi], a, b, kurtosis=True)
        ref = predictive_pair_rates(dbar, s2, 12, [5, 10], df=variance_df(12, kurt))
        for k in ("swap_rate", "reversal_rate"):
            assert v.predicted[k]["predictive-integrated"][r] == pytest.approx(ref[k].mean(axis=0), rel=1e-12)
    # a less certain variance predicts more swaps here (12-topic pilots, shrinkage towards 0)
    assert np.all(v.predicted["swap_rate"]["predictive-integrated"] > v.predicted["swap_rate"]["predictive"])


def test_validate_bad_inputs():
    sm = _toy()
    with pytest.raises(ParameterError, match="topics.*half of the 30"):
        validate(sm, pilot=10, topics=[16], repeats=1)
    with pytest.raises(ParameterError, match="pilot"):
        validate(sm, pilot=39, topics=[1], repeats=1)
    with pytest.raises(ParameterError, match="pilot"):
        validate(sm, pilot=1, topics=[5], repeats=1)
    with pytest.raises(ParameterError, match="repeats"):
        validate(sm, pilot=10, topics=[5], repeats=0)
    with pytest.raises(ParameterError, match="methods.*unknown method 'magic'"):
        validate(sm, pilot=10, topics=[5], repeats=1, methods=("magic",))
    with pytest.raises(ParameterError, match="topics.*repeated"):
        validate(sm, pilot=10, topics=[5, 5], repeats=1)
    with pytest.raises(ParameterError, match="topics.*>= 2"):
        validate(sm, pilot=10, topics=[1, 5], repeats=1)
    with pytest.raises(ParameterError, match="rng.*>= 0"):
        validate(sm, pilot=10, topics=[5], repeats=1, rng=-1)
    with pytest.raises(ParameterError, match="subsets: subsets must be an integer from 1 to 100,000"):
        validate(sm, pilot=10, topics=[5], repeats=1, subsets=10 ** 8)   # used to run out of memory


def test_recommend_with_one_repeat_is_never_clear():
    # one repeat has no standard error: no method can be "clearly ahead" of another
    v = validate(_toy(), pilot=10, topics=[5, 10], repeats=1, rng=3, subsets=20)
    rec = v.recommend("swap_rate")
    assert rec["method"] is not None and not rec["clear"]
    assert set(rec["close"]) == set(v.methods) - {rec["method"]}


@pytest.mark.slow
def test_validate_terabyte_predictive_beats_plugin(shared_data):
    # issue 4: 25-topic pilots on TREC 2006 Terabyte; fast version of benchmarks/bench_validate.py
    # (few repeats): the predictive method's median relative error of the mean swap rate,
    # summed over n = 25, 50, 62, is below the plug-in (analytic) model's, for AP and nDCG.
    from planner.collection import load_scores

    for name in ("terabyte2006_ap.csv", "terabyte2006_ndcg.csv"):
        sm = load_scores(shared_data / "trec-terabyte" / name)
        v = validate(sm, pilot=25, topics=[25, 50, 62], repeats=24, rng=2026, subsets=100)
        med = {m: [r["rel_error_median"] for r in v.rows
                   if r["statistic"] == "swap_rate" and r["method"] == m] for m in v.methods}
        assert sum(med["predictive"]) < sum(med["analytic"]), (name, med)
        rev = {m: [r["rel_error_median"] for r in v.rows
                   if r["statistic"] == "reversal_rate" and r["method"] == m] for m in v.methods}
        assert all(p < q for p, q in zip(rev["predictive"], rev["analytic"])), (name, rev)
        # the plug-in model's reversal error is bias, not spread: it predicts too few reversals in
        # nearly every repeat (300-repeat runs: median pred/obs 0.48-0.67, docs/validation.md)
        ratio = {m: [r["ratio_median"] for r in v.rows
                     if r["statistic"] == "reversal_rate" and r["method"] == m] for m in v.methods}
        assert all(q < 0.8 for q in ratio["analytic"]), (name, ratio)
        assert all(p > q for p, q in zip(ratio["predictive"], ratio["analytic"])), (name, ratio)


# ----------------------------------------------------------------------- CLI
def test_cli_validate_json_and_errors(tmp_path, capsys):
    sm = _toy()
    path = tmp_path / "toy.csv"
    sm.to_csv(path)
    assert main(["validate", "--scores", str(path), "--pilot", "10", "--topics", "5,15",
                 "--repeats", "2", "--subsets", "20", "--seed", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["pilot"] == 10 and out["topics"] == [5, 15] and out["seed"] == 3
    assert {r["method"] for r in out["rows"]} == {"deconvolved", "predictive", "analytic"}
    assert main(["validate", "--scores", str(path), "--pilot", "10", "--topics", "5",
                 "--repeats", "3", "--subsets", "20", "--seed", "3"]) == 0
    assert "bias = median over repeats of pred/obs - 1" in capsys.readouterr().out

    assert main(["validate", "--scores", str(path), "--pilot", "10", "--topics", "5,16"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--topics" in err and "half of the 30" in err
    assert main(["validate", "--scores", str(path), "--pilot", "10", "--topics", "5",
                 "--methods", "predictive,nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--methods" in err
    assert main(["validate", "--scores", str(tmp_path / "missing.csv"), "--pilot", "10", "--topics", "5"]) == 2
    assert "missing.csv" in capsys.readouterr().err


def test_variance_scales_are_the_same_quadrature_as_df():
    # precomputed chi-square scales (for repeated calls on the same pairs) give the same
    # rates as the degrees of freedom, and refuse scales made for other pairs
    from planner.simulate import VarianceScales, variance_scales

    rng = np.random.default_rng(2)
    dbar = rng.normal(0, 0.05, 40)
    s2 = rng.gamma(2.0, 0.01, 40)
    nu = rng.uniform(3, 24, 40)
    ref = predictive_pair_rates(dbar, s2, 25, [10, 50], df=nu, quantiles=8)
    sc = variance_scales(nu, 8, pairs=40)
    assert isinstance(sc, VarianceScales) and sc.factors.shape == (8, 40)
    got = predictive_pair_rates(dbar, s2, 25, [10, 50], df=sc)
    for k in ref:
        np.testing.assert_array_equal(got[k], ref[k])
    # a scalar df is the same for every pair
    one = predictive_pair_rates(dbar, s2, 25, [10], df=variance_scales(7.5))
    np.testing.assert_allclose(one["swap_rate"], predictive_pair_rates(dbar, s2, 25, [10], df=7.5)["swap_rate"],
                               rtol=1e-14)
    with pytest.raises(ParameterError, match="scales are for 40 pairs"):
        predictive_pair_rates(dbar[:30], s2[:30], 25, [10], df=sc)
    with pytest.raises(ParameterError, match="one value per pair"):
        variance_scales(nu[:5], pairs=40)


def test_median_se_is_the_bootstrap_se_of_the_median():
    from planner.validation import median_se

    x = np.random.default_rng(5).normal(0.0, 1.0, 400)
    se = median_se(x)
    # large-sample SE of a normal median: sqrt(pi / 2) sigma / sqrt(n) = 0.0627
    assert se == pytest.approx(math.sqrt(math.pi / 2) / 20, rel=0.25)
    assert median_se(x) == se  # fixed seed: the same errors give the same se
    assert math.isnan(median_se(x[:1]))


def _fake_validation(med, se):
    # a Validation whose swap-rate rows carry the given median errors and standard errors
    from planner.validation import Validation

    rows = []
    for m, vals in med.items():
        for j, n in enumerate((10, 20)):
            for stat in ("swap_rate", "reversal_rate"):
                rows.append({"statistic": stat, "method": m, "n_topics": n, "rel_error_median": vals[j],
                             "rel_error_median_se": se})
    return Validation(methods=tuple(med), pilot=10, topics=(10, 20), repeats=50, subsets=10, seed=1,
                      n_systems=5, n_topics=40, measure=None, source=None, rows=tuple(rows),
                      predicted={}, observed={})


def test_recommend_rules():
    # lowest at every n, clearly (gaps of 0.05 > 2 sqrt(2) 0.01)
    r = _fake_validation({"predictive": [0.20, 0.25], "analytic": [0.10, 0.12]}, 0.01).recommend()
    assert (r["method"], r["rule"], r["clear"], r["close"]) == ("analytic", "lowest at every n", True, [])
    # the same gaps with larger standard errors: still the best, not clearly
    r = _fake_validation({"predictive": [0.20, 0.25], "analytic": [0.10, 0.12]}, 0.05).recommend()
    assert r["method"] == "analytic" and not r["clear"] and r["close"] == ["predictive"]
    # no method lowest at every n: the lowest largest median error
    r = _fake_validation({"predictive": [0.08, 0.16], "analytic": [0.12, 0.13],
                          "bootstrap": [0.30, 0.05]}, 0.001).recommend("reversal_rate")
    assert (r["method"], r["rule"]) == ("analytic", "lowest largest median error")
    assert r["median_errors"]["bootstrap"] == [0.30, 0.05]
    # a method with an undefined error is not recommended
    r = _fake_validation({"predictive": [0.05, math.nan], "analytic": [0.12, 0.13]}, 0.001).recommend()
    assert r["method"] == "analytic" and not r["clear"]
    with pytest.raises(ParameterError, match="statistic"):
        _fake_validation({"analytic": [0.1, 0.1]}, 0.01).recommend("power")


def test_validate_recommendation_and_cli_line(tmp_path, capsys):
    sm = _toy()
    v = validate(sm, pilot=10, topics=[5, 15], repeats=6, rng=7, subsets=50,
                 methods=("predictive", "predictive-shrunk", "analytic"))
    rec = v.recommend("swap_rate")
    med = {m: [r["rel_error_median"] for r in v.rows if r["statistic"] == "swap_rate" and r["method"] == m]
           for m in v.methods}
    assert rec["median_errors"] == med
    assert rec["method"] in v.methods
    if rec["rule"] == "lowest at every n":
        assert all(all(a <= b for a, b in zip(med[rec["method"]], med[o])) for o in v.methods)
    d = v.to_dict()
    assert d["recommended"]["swap_rate"] == rec
    for r in d["rows"]:
        col = v.rel_error(r["statistic"])[r["method"]][:, list(v.topics).index(r["n_topics"])]
        from planner.validation import median_se

        assert r["rel_error_median_se"] == median_se(col)
    path = tmp_path / "toy.csv"
    sm.to_csv(path)
    assert main(["validate", "--scores", str(path), "--pilot", "10", "--topics", "5,15", "--repeats", "6",
                 "--subsets", "50", "--seed", "7", "--methods", "predictive,predictive-shrunk,analytic"]) == 0
    out = capsys.readouterr().out
    assert f"best here: {rec['method']} ({rec['rule']}" in out
    assert f"planner predict --method {rec['method']}" in out
    # one line answers "how far can I trust my pilot?" with the recommended method's errors
    lo, hi = min(med[rec["method"]]), max(med[rec["method"]])
    p90 = [r["rel_error_p90"] for r in v.rows if r["statistic"] == "swap_rate" and r["method"] == rec["method"]]
    line = next(ln for ln in out.splitlines() if ln.startswith("in short:"))
    assert (f"from 10-topic pilots, {rec['method']}'s predicted mean swap rate at 5-15 topics was off by a "
            f"median {100 * lo:.0f}-{100 * hi:.0f}% (90% of repeats within {100 * min(p90):.0f}-"
            f"{100 * max(p90):.0f}%)") in line
    assert line.endswith(f"can check held-out sets of at most {(sm.n_topics - 10) // 2} topics")
    # a count beyond int64 was "must be integers >= 2" (fuzz audit 2026-11-30)
    assert main(["validate", "--scores", str(path), "--pilot", "10", "--topics", "5," + "1" + "0" * 20,
                 "--repeats", "2"]) == 2
    err = capsys.readouterr().err
    assert f"--topics: topic count 1{'0' * 20} exceeds half of the {sm.n_topics - 10} held-out topics" in err


def test_validate_takes_one_method_name_as_a_string():
    # API audit F12: methods="analytic" was read letter by letter ("repeated method in ('a', 'n', ...)")
    sm = _toy()
    one = validate(sm, pilot=10, topics=[5], repeats=2, rng=3, subsets=20, methods="analytic")
    listed = validate(sm, pilot=10, topics=[5], repeats=2, rng=3, subsets=20, methods=["analytic"])
    assert one.methods == ("analytic",) and one.to_dict() == listed.to_dict()


def test_validate_reads_arrays_and_dataframes_as_fit_does():
    # validate refused what fit, predict and size_for_target accept (API audit)
    import pandas as pd

    from planner.errors import ParameterError

    x = np.random.default_rng(0).normal(0.4, 0.1, (6, 1)) + np.random.default_rng(1).normal(0, 0.1, (6, 30))
    kw = dict(pilot=10, topics=[5], repeats=3, subsets=20, rng=2)
    a = validate(x, **kw)
    df = pd.DataFrame(x.T, columns=[f"s{i + 1}" for i in range(6)],
                      index=pd.Index([f"t{j + 1}" for j in range(30)], name="topic"))
    b = validate(df, **kw)
    assert a.to_dict()["rows"] == b.to_dict()["rows"]
    with pytest.raises(ParameterError, match="scores: expected a ScoreMatrix, DataFrame or array"):
        validate(42, **kw)


def test_validate_method_streams_do_not_depend_on_the_other_methods():
    # all random methods drew from one stream in turn: bootstrap's numbers changed when
    # parametric was listed before it (reproducibility audit)
    sm = _toy()
    kw = dict(pilot=10, topics=[5, 10], repeats=2, rng=3, subsets=30)
    alone = validate(sm, methods=["bootstrap"], **kw)
    both = validate(sm, methods=["parametric", "bootstrap"], **kw)
    rev = validate(sm, methods=["bootstrap", "parametric"], **kw)
    for k in ("swap_rate", "reversal_rate"):
        assert np.array_equal(alone.predicted[k]["bootstrap"], both.predicted[k]["bootstrap"])
        assert np.array_equal(both.predicted[k]["parametric"], rev.predicted[k]["parametric"])
    # the methods still draw different numbers from each other's streams
    assert not np.array_equal(both.predicted["swap_rate"]["bootstrap"], both.predicted["swap_rate"]["parametric"])


def test_validate_without_a_seed_records_the_one_it_drew():
    sm = _toy()
    v = validate(sm, pilot=10, topics=[5], repeats=2, subsets=30, rng=None)
    assert isinstance(v.seed, int)
    again = validate(sm, pilot=10, topics=[5], repeats=2, subsets=30, rng=v.seed)
    assert v.to_dict() == again.to_dict()

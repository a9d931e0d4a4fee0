"""Tests of planner.plan.stacked (stratified width, power and allocation over stacked collections) and
planner.plan.paired_bootstrap (the paired topic bootstrap), through their public API."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy import special, stats

from planner.plan import (
    JACKKNIFE_ARMS,
    StackedStrata,
    jackknife_intervals,
    paired_bootstrap,
    resampled_n,
    stratum_counts,
)
from planner.scores import ScoreMatrix
from planner.variance import anova_components


# ------------------------------------------------------------------ allocation
def test_allocate_hand_cases():
    # largest remainder: 100 * (43, 54) / 97 = 44.33, 55.67 -> 44, 56; at least 2 per stratum
    assert stratum_counts(100, [43 / 97, 54 / 97]).tolist() == [44, 56]
    assert stratum_counts(10, [0.95, 0.05]).tolist() == [8, 2]
    assert stratum_counts(3, [0.9, 0.1]).tolist() == [2, 2]                  # below 2 K: 2 each
    assert stratum_counts(7, np.array([1.0, 1.0, 1.0])).sum() == 7


# ------------------------------------------------------------ width and power
def test_width_and_power_by_hand():
    # W = (0.4, 0.6), sigma^2 = 2 var_e = (0.02, 0.04); n_k = (4, 6):
    # V = 0.16 * 0.02 / 4 + 0.36 * 0.04 / 6 = 0.0008 + 0.0024 = 0.0032
    st = StackedStrata.from_components([(0.001, 0.01, 0.01), (0.002, 0.02, 0.02)], [40, 60],
                                       alpha=0.05, min_diff=0.05)
    v, width, power = st.width_power(np.array([4, 6]))
    assert v == pytest.approx(0.0032, rel=1e-12)
    # t_{0.975}(10 - 2 strata) = 2.306004135 (R: qt(0.975, 8))
    assert width == pytest.approx(2 * 2.306004135 * math.sqrt(0.0032), rel=1e-8)
    z = stats.norm.ppf(0.975)
    want = special.ndtr(0.05 / math.sqrt(0.0032) - z) + special.ndtr(-0.05 / math.sqrt(0.0032) - z)
    assert power == pytest.approx(want, rel=1e-12)


def test_weighted_dstudy_and_its_closed_form_count():
    st = StackedStrata.from_components([(0.004, 0.02, 0.01), (0.002, 0.01, 0.03)], [25, 75])
    vs, vt, ve = 0.25 * 0.004 + 0.75 * 0.002, 0.25 * 0.02 + 0.75 * 0.01, 0.25 * 0.01 + 0.75 * 0.03
    assert st.weighted("var_s") == pytest.approx(vs)
    assert st.erho2(50) == pytest.approx(vs / (vs + ve / 50))
    assert st.phi(50) == pytest.approx(vs / (vs + (vt + ve) / 50))
    # Erho2(n) >= v  <=>  n >= v / (1 - v) * ve / vs: 0.85 / 0.15 * 10 = 56.7 -> 57
    assert st.smallest_n("erho2", 0.85) == 57
    # Phi: (vt + ve) / vs = 15; 0.72 / 0.28 * 15 = 38.6 -> 39
    assert st.smallest_n("phi", 0.72) == 39


@pytest.mark.parametrize("target,value", [("ci_width", 0.08), ("power", 0.8)])
def test_smallest_n_meets_the_target_and_one_less_does_not(target, value):
    st = StackedStrata.from_components([(0.001, 0.01, 0.01), (0.002, 0.02, 0.02)], [43, 54])
    n = st.smallest_n(target, value)

    def ok(k):
        _, w, p = st.width_power(stratum_counts(k, st.weights))
        return w <= value if target == "ci_width" else p >= value

    assert n is not None and ok(n) and not ok(n - 1)
    p = st.at(n)
    assert p.n_proportional.sum() == n and p.n_optimal.sum() == n
    # uniform sampling with no between-strata spread: the width of the mixed variance over n
    w_u = 2 * stats.t.ppf(0.975, n - 1) * math.sqrt((0.43 * 0.02 + 0.54 * 0.04) / 0.97 / n)
    assert p.width_uniform_lower_bound == pytest.approx(w_u)


def test_resampled_counts_follow_the_documented_draws():
    rng = np.random.default_rng(7)
    mats = [rng.normal(0.5, 0.1, (5, 20)), rng.normal(0.4, 0.15, (4, 30))]
    comps = [anova_components(x) for x in mats]
    st = StackedStrata.from_components([(c["var_s"], c["var_t"], c["var_e"]) for c in comps], [20, 30])
    targets = [("ci_width", 0.1), ("erho2", 0.8)]
    got = resampled_n(st, mats, targets, np.random.default_rng(3), 15)
    # an independent loop: child r of rng.spawn(15) draws each stratum's topics in order
    for r, g in enumerate(np.random.default_rng(3).spawn(15)):
        rs = [x[:, g.integers(0, x.shape[1], x.shape[1])] for x in mats]
        cs = [anova_components(x) for x in rs]
        sr = StackedStrata(st.weights, np.array([c["var_s"] for c in cs]), np.array([c["var_t"] for c in cs]),
                           np.array([c["var_e"] for c in cs]), alpha=st.alpha, min_diff=st.min_diff)
        for j, (t, v) in enumerate(targets):
            want = sr.smallest_n(t, v)
            assert got[j][r] == (np.inf if want is None else want)
    again = resampled_n(st, mats, targets, np.random.default_rng(3), 15)
    assert all(np.array_equal(a, b) for a, b in zip(got, again))


def test_jackknife_intervals_by_hand():
    # the stratified jackknife of log(planning ratio): stratum k's topics left out in turn (in 100
    # groups j mod 100 beyond 100 topics), that stratum's ANOVA re-fitted, the others kept;
    # se^2 = sum_k (G_k - 1) / G_k sum_i (log r_ki - mean_k)^2, t with sum_k (G_k - 1) df, and each
    # end the count with var_t and var_e scaled by exp(-a t se) and exp(b t se), (a, b) = JACKKNIFE_ARMS
    rng = np.random.default_rng(11)
    mats = [rng.normal(0.5, 0.1, (5, 30)) + rng.normal(0, 0.1, (1, 30)) + rng.normal(0, 0.2, (5, 1)),
            rng.standard_t(3, (4, 150)) * 0.1 + rng.normal(0, 0.3, (4, 1)) + rng.normal(0, 0.2, (1, 150))]
    st = StackedStrata.from_components([(0.0, 0.0, 0.0)] * 2, [30, 150]).refit(mats)
    targets = [("power", 0.8), ("erho2", 0.99), ("phi", 0.99)]
    got = jackknife_intervals(st, mats, targets, 0.9)

    def ratio(comps, t):
        c = {f: np.array([x[f] for x in comps]) for f in ("var_s", "var_t", "var_e")}
        w = st.weights
        num = np.sum(w * c["var_e"]) + (np.sum(w * c["var_t"]) if t == "phi" else 0.0)
        return num if t == "power" else num / np.sum(w * c["var_s"])

    whole = [anova_components(x) for x in mats]
    for (t, v), iv in zip(targets, got):
        logs, df = [], 0
        for k, x in enumerate(mats):
            G = min(x.shape[1], 100)
            groups = np.arange(x.shape[1]) % G
            r = [ratio([anova_components(x[:, groups != g]) if i == k else whole[i] for i in range(2)], t)
                 for g in range(G)]
            logs.append(np.log(r))
            df += G - 1
        se = np.sqrt(sum((g.size - 1) / g.size * np.sum((g - g.mean()) ** 2) for g in logs))
        half = stats.t.ppf(0.95, df) * se
        assert ratio(whole, t) == pytest.approx(st.planning(t), rel=1e-12)
        want = (st.scaled(np.exp(-JACKKNIFE_ARMS[0] * half)).smallest_n(t, v),
                st.scaled(np.exp(JACKKNIFE_ARMS[1] * half)).smallest_n(t, v))
        assert (iv.low, iv.high) == want and iv.low < st.smallest_n(t, v) < iv.high
        assert iv.level == 0.9 and "stratified jackknife" in iv.note and "130 fits" in iv.note


def test_jackknife_interval_is_unbounded_when_a_leave_out_has_no_system_variance():
    # two systems that differ on one topic of a stratum have var_s 0 there (MS_s = MS_e exactly);
    # in the other stratum they differ on two topics, and with one of them left out the system
    # variance of the whole stack is 0, Erho2's ratio has no denominator: the upper end is
    # unbounded (None), not a short one, and the lower end the least count, 1 topic
    x = np.zeros((2, 12))
    x[0, [3, 7]] = 1.0
    x += np.linspace(0, 0.2, 12)
    z = np.zeros((2, 12))
    z[0, 5] = 1.0
    z += np.linspace(0, 0.3, 12)
    st = StackedStrata.from_components([(0.0, 0.0, 0.0)] * 2, [12, 12]).refit([x, z])
    left = StackedStrata.from_components([(0.0, 0.0, 0.0)] * 2, [11, 12]).refit([np.delete(x, 3, axis=1), z])
    assert st.var_s[0] > 0 and st.var_s[1] == 0 and left.var_s.tolist() == [0.0, 0.0]
    n = st.smallest_n("erho2", 0.5)
    iv = jackknife_intervals(st, [x, z], [("erho2", 0.5)])[0]
    assert n is not None and (iv.low, iv.high) == (1, None)


# ------------------------------------------------------------ paired bootstrap
def _matrix(x):
    x = np.asarray(x, dtype=float)
    return ScoreMatrix.build(x, [f"s{i}" for i in range(x.shape[0])], [str(t) for t in range(x.shape[1])],
                             warn=False)


def test_paired_bootstrap_hand_case():
    # s0 beats s1 by 0.1 on every topic: every resample's difference is 0.1, interval [0.1, 0.1],
    # reversal 0; s2 equals s0 on every topic: skipped as the second, its tie counts half
    m = _matrix([[0.5, 0.6, 0.7, 0.8], [0.4, 0.5, 0.6, 0.7], [0.5, 0.6, 0.7, 0.8]])
    b = paired_bootstrap(m, n_resamples=100, alpha=0.05, rng=1)
    assert (b.best_system, b.second_system, b.identical_to_best) == ("s0", "s1", ("s2",))
    assert b.diff_top2 == pytest.approx(0.1) and b.diff_top2_interval.low == pytest.approx(0.1)
    assert b.reversal_top2 == 0.0 and b.reversal_mean_pairs == pytest.approx(0.5 / 3)
    assert b.pairs_reversal_over_5pct == pytest.approx(1 / 3)


def test_paired_bootstrap_against_a_plain_loop():
    rng = np.random.default_rng(11)
    x = rng.normal(0.5, 0.1, (5, 30)) + np.linspace(0, 0.04, 5)[:, None]
    m = _matrix(x)
    b = paired_bootstrap(m, n_resamples=300, alpha=0.1, rng=np.random.default_rng(4))
    idx = np.random.default_rng(4).integers(0, 30, size=(300, 30))
    means = x.mean(axis=1)
    rev = []
    for i in range(5):
        for j in range(i + 1, 5):
            d = np.array([x[i, r].mean() - x[j, r].mean() for r in idx])
            obs = np.sign(means[i] - means[j])
            rev.append(np.mean(np.sign(d) == -obs) + 0.5 * np.mean(d == 0))
    assert b.reversal_mean_pairs == pytest.approx(np.mean(rev), abs=1e-12)
    best, second = np.argsort(-means, kind="stable")[:2]
    d = np.array([x[best, r].mean() - x[second, r].mean() for r in idx])
    ivl = b.diff_top2_interval
    assert (ivl.low, ivl.high) == pytest.approx(tuple(np.quantile(d, [0.05, 0.95])), abs=1e-12)
    # the same seed gives the same numbers
    assert paired_bootstrap(m, n_resamples=300, alpha=0.1, rng=np.random.default_rng(4)) == b


WEB = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-web"


@pytest.mark.skipif(not WEB.exists(), reason="shared data not available")
@pytest.mark.filterwarnings("ignore::planner.errors.DegenerateDataWarning")
def test_stack_interval_holds_the_whole_stacks_count():
    """The defining property, on the stack where the topic resamples fell lowest (Web 2010 + 2011
    nDCG@20, 10 topics of each 50-topic stratum: 88% over 60 draws; benchmarks/bench_stack_coverage.py,
    its draws): the stratified jackknife interval of most draws holds the whole stack's power count
    (39 of these 40; the resamples' 36). A 95% interval covering 90% would hold it in 33 or more of
    40 draws with probability 0.9."""
    from planner.collection import load_scores

    mats = [load_scores(str(WEB / f"web{y}_ndcg20.csv")).topic_scores() for y in (2010, 2011)]
    st = StackedStrata.from_components([(0.0, 0.0, 0.0)] * 2, [x.shape[1] for x in mats]).refit(mats)
    full = st.smallest_n("power", 0.8)
    held = 0
    for d in range(40):
        drawn = [x[:, np.sort(np.random.default_rng([1, 2, d, k]).permutation(x.shape[1])[:10])]
                 for k, x in enumerate(mats)]
        sd = StackedStrata.from_components([(0.0, 0.0, 0.0)] * 2, [10, 10]).refit(drawn)
        iv = jackknife_intervals(sd, drawn, [("power", 0.8)])[0]
        held += iv.low <= full <= (np.inf if iv.high is None else iv.high)
    assert held >= 33

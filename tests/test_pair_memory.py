"""Pair statistics in bounded memory (issue 23): a variance shared by every pair is one value,
not one a pair, and the resampled pair models of an interval on n are refused over their limit
before any is drawn."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import planner
from planner import plan
from planner.errors import ParameterError
from planner.scores import ScoreMatrix


def _matrix(S: int, T: int, seed: int = 1) -> ScoreMatrix:
    rng = np.random.default_rng(seed)
    x = np.clip(rng.normal(0.3, 0.15, (S, T)) + rng.normal(0, 0.05, (S, 1)), 0, 1).round(3)
    return ScoreMatrix.build(x, [f"s{i}" for i in range(S)], [f"t{j}" for j in range(T)], warn=False)


@pytest.mark.parametrize("selector,design", [("pooled", "paired"), ("within-system", "independent"),
                                             ("pooled", "independent")])
def test_shared_pair_variance_takes_no_memory_per_pair(selector, design, traced_peak):
    m = _matrix(3000, 12)           # 4,498,500 pairs: np.full took 36 MB
    K = 3000 * 2999 // 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the ScoreMatrix and the array (resampling) paths
        got, peak = traced_peak(lambda: [plan.pair_variances(scores, selector, design=design)
                                         for scores in (m, m.values)])
    assert peak < K, f"{peak / 1e6:.1f} MB traced for {K:,} pairs"
    for v in got:
        assert v.shape == (K,) and np.all(v == v[0]) and v[0] > 0
    assert got[0][0] == pytest.approx(got[1][0], rel=1e-12)
    assert v[0] == pytest.approx(plan.pair_variances(m.take(systems=range(50)), selector, design=design)[0],
                                 rel=0.2)


def test_design_with_pooled_variance_over_the_pair_limit_answers():
    # 12,000 systems (72 million pairs): refused by the pair limit (and 1.6 GB before that
    # limit existed), though a pooled variance is one number
    m = _matrix(12_000, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = plan.topic_set_size(scores=m, design="paired-t", min_diff=0.05, power=0.8,
                                variance="pooled")
        var_e = planner.fit(m).var_e
    assert r.sigma2 == pytest.approx(2 * var_e, rel=1e-12)
    assert r.n_topics > 50


def test_resampled_pair_models_over_their_limit_are_refused_first():
    m = _matrix(600, 10)            # 179,700 pairs x 200 resamples x 40 bytes = 1.4 GB
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ParameterError) as e:
            plan.size_for_target(m, target="swap_rate", value=0.05, method="analytic", rng=1)
        assert e.value.parameter == "n_resamples"
        assert "200 topic resamples of 600 systems (179,700 pairs)" in str(e.value)
        assert "use at most 74 resamples" in str(e.value)
        r = plan.size_for_target(m, target="swap_rate", value=0.05, method="analytic", n_resamples=20, rng=1)
    assert r.interval.n_resamples == 20 and r.interval.low <= r.interval.high


def test_pair_variance_summary_keeps_one_value_a_pair(traced_peak):
    # fit's pair summary went through pair_stats (pair index, means, covariances: 2 GB and 44 s
    # for 9,000 systems); now each pair's s2_d alone, the same numbers
    from planner.variance import pair_stats, pair_variance_summary

    m = _matrix(2000, 15)
    K = 2000 * 1999 // 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s, peak = traced_peak(lambda: pair_variance_summary(m))
        assert s == pair_variance_summary(m, pairs=pair_stats(m))
    assert s["n_pairs"] == K
    assert peak < 30 * K, f"{peak / 1e6:.0f} MB traced for {K:,} pairs"

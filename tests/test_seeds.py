"""Training seeds: the nested (r:s) x t design against the paired t design and a direct simulation.

Every score here is SIMULATED from stated components: no public per-topic scores of several
training seeds of the same recipe were found (see docs/deep-learning.md).
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from planner.errors import ParameterError
from planner.plan import design_power
from planner.plan.seeds import SeedComponents, fit_seeds, seed_power, seed_topic_tradeoff

#: stated components (simulated data): nDCG@10-like magnitudes
COMP = SeedComponents(var_s=0.004, var_t=0.03, var_st=0.008, var_seed=0.0003, var_e=0.004, simulated=True)


def _simulate(c, rng, *, S, R, T, delta=0.0):
    """x[s, r, t] = a[s] + b[t] + ab[s,t] + seed[r:s] + e[r:s,t]; system 1 gets + delta."""
    a = rng.normal(0, np.sqrt(c.var_s), S)
    a[:2] = 0.0
    a[1] += delta
    b = rng.normal(0, np.sqrt(c.var_t), T)
    ab = rng.normal(0, np.sqrt(c.var_st), (S, T))
    seed = rng.normal(0, np.sqrt(c.var_seed), (S, R))
    e = rng.normal(0, np.sqrt(c.var_e), (S, R, T))
    return a[:, None, None] + b[None, None, :] + ab[:, None, :] + seed[:, :, None] + e


def test_reduces_to_the_paired_t_design_without_seed_variance():
    c = SeedComponents(var_st=0.008, var_seed=0.0, var_e=0.004)
    for n, m, d in [(25, 1, 0.05), (50, 3, 0.03), (100, 5, 0.02)]:
        p = seed_power(c, min_diff=d, n_topics=n, n_seeds=m)
        sigma2 = 2 * (c.var_st + c.var_e / m)          # variance of seed-averaged per-topic differences
        assert p.power == pytest.approx(float(design_power("paired-t", n, d, sigma2)), abs=1e-12)
        assert p.naive_power == pytest.approx(p.power, abs=1e-12)
        assert p.false_positive_rate == pytest.approx(0.05, abs=1e-12)


def _rejections(c, rng, *, n, m, delta, reps):
    """Direct simulation: two recipes, m seeds each, n topics; the paired t-test over topics on
    seed-averaged differences (naive), and the same statistic against the seed-aware critical value."""
    sigma_d2 = 2 * (c.var_st + c.var_e / m)
    lam = 2 * n * c.var_seed / (m * sigma_d2)
    tc = stats.t.ppf(0.975, n - 1)
    naive = aware = 0
    for _ in range(reps):
        x = _simulate(c, rng, S=2, R=m, T=n, delta=delta)
        d = x[1].mean(axis=0) - x[0].mean(axis=0)
        t = d.mean() / (d.std(ddof=1) / np.sqrt(n))
        naive += abs(t) > tc
        aware += abs(t) > tc * np.sqrt(1 + lam)
    return naive / reps, aware / reps


@pytest.mark.parametrize(("n", "m", "delta"), [(50, 1, 0.0), (30, 3, 0.04), (50, 1, 0.04)])
def test_agrees_with_a_direct_simulation(n, m, delta):
    reps = 4000
    naive, aware = _rejections(COMP, np.random.default_rng(n * 10 + m), n=n, m=m, delta=delta, reps=reps)
    p = seed_power(COMP, min_diff=delta, n_topics=n, n_seeds=m)
    want_naive = p.false_positive_rate if delta == 0 else p.naive_power
    for got, want in [(naive, want_naive), (aware, p.power)]:
        se = np.sqrt(want * (1 - want) / reps)          # binomial standard error
        assert abs(got - want) < 4 * se
    if delta == 0:
        assert p.power == pytest.approx(0.05, abs=1e-12)        # the seed-aware test has size alpha
        assert p.false_positive_rate > 0.1                       # one seed, paired t: too many "wins"


def test_fit_recovers_the_components_of_simulated_scores():
    rng = np.random.default_rng(1)
    fits = [fit_seeds(_simulate(COMP, rng, S=8, R=5, T=60), simulated=True) for _ in range(40)]
    for name in ("var_st", "var_seed", "var_e"):
        est = np.array([getattr(f, name) for f in fits])
        # the mean of 40 unbiased estimates lies within 4 standard errors of the truth
        assert abs(est.mean() - getattr(COMP, name)) < 4 * est.std(ddof=1) / np.sqrt(len(est))
    assert fits[0].simulated and "simulated" in repr(fits[0])


def test_tradeoff_needs_fewer_topics_with_more_seeds_and_costs_pick():
    t = seed_topic_tradeoff(COMP, min_diff=0.04, power=0.8, seed_cost=0.0, max_seeds=6)
    need = t.table["n_topics"].to_numpy()
    ok = need[~np.isnan(need)]
    assert (np.diff(ok) <= 0).all()
    assert t.n_seeds == 6                               # seeds are free: the most seeds
    assert t.at_max_seeds                               # ... the most tried: more may cost less
    dear = seed_topic_tradeoff(COMP, min_diff=0.04, power=0.8, seed_cost=1e6, max_seeds=6)
    assert dear.n_seeds == int(t.table.dropna().n_seeds.min()) and not dear.at_max_seeds
    p = seed_power(COMP, min_diff=0.04, n_topics=t.n_topics, n_seeds=t.n_seeds)
    assert p.power >= 0.8
    assert seed_power(COMP, min_diff=0.04, n_topics=t.n_topics - 1, n_seeds=t.n_seeds).power < 0.8


def test_one_seed_cannot_be_fitted():
    with pytest.raises(ParameterError, match=r"^scores: one seed per system"):
        fit_seeds(np.zeros((3, 1, 10)))
    with pytest.raises(ParameterError, match=r"^var_seed: expected a finite number >= 0"):
        SeedComponents(var_seed=-1.0)


def test_tidy_table_with_a_seed_column():
    import pandas as pd

    x = _simulate(COMP, np.random.default_rng(3), S=3, R=2, T=5)
    rows = [{"system": f"s{i}", "seed": f"seed{i}{r}", "topic": f"t{t}", "value": x[i, r, t]}
            for i in range(3) for r in range(2) for t in range(5)]
    a, b = fit_seeds(pd.DataFrame(rows)), fit_seeds(x)
    assert a.to_dict() == b.to_dict()
    with pytest.raises(ParameterError, match="one seed per system"):
        fit_seeds(pd.DataFrame([r for r in rows if r["seed"].endswith("0")]))

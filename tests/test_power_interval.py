"""The interval on n of the power target (the mean over pairs of each pair's power): the topic
resamples' spread stretched by ``planner.plan.POWER_SPREAD``, below and above the count.

Why the arms differ, and the coverage measured: docs/research/calibration.md, nineteenth session
(``python benchmarks/bench_coverage.py --draws 200 --resamples 200 --targets power``).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from planner import methods, plan
from planner.collection import load_scores
from planner.plan.search import count_interval, resample_spread

WEB11_AP = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-web" / "web2011_ap.csv"
needs_data = pytest.mark.skipif(not WEB11_AP.exists(), reason="shared data not available")


def test_each_target_takes_its_own_stretch():
    assert resample_spread(methods.target("power")) == plan.POWER_SPREAD == (0.9, 1.6)
    for t in ("swap_rate", "reversal_rate", "kendall_tau"):
        assert resample_spread(methods.target(t)) == (plan.RESAMPLE_SPREAD,) * 2
    ns = np.arange(50.0, 151.0)     # median 100, ends 52 and 148: 100 * 0.52 ** 0.9 = 55.5, 100 * 1.48 ** 1.6 = 187.2
    assert count_interval(ns, 100, 0.95, spread=(0.9, 1.6)) == (55, 188)
    assert count_interval(ns, 100, 0.95) == (42, 167)


@needs_data
@pytest.mark.slow
def test_the_power_interval_is_stretched_more_above():
    """60 draws of 20 of Web 2011 AP's 50 topics (the row that held the population's count least
    often: 88.1% with the symmetric stretch, 200 draws). The whole collection needs 65 topics; the
    symmetric stretch left it above the upper end in 2 draws, the shipped arms in none, and below
    the lower end in none with either."""
    x = load_scores(str(WEB11_AP)).topic_scores()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        full = plan.size_for_target(x, target="power", value=0.8, n_resamples=0).n_topics
        results = [plan.size_for_target(x[:, np.sort(np.random.default_rng([1, 27, d]).permutation(50)[:20])],
                                        target="power", value=0.8, rng=d) for d in range(60)]
    assert full == 65
    misses = {}
    for spread in ((1.3, 1.3), plan.POWER_SPREAD):
        ends = [count_interval(r.resampled_n, r.n_topics, 0.95, spread=spread) for r in results]
        misses[spread] = (sum(full > hi for _, hi in ends), sum(full < lo for lo, _ in ends))
    assert all((r.interval.low, r.interval.high) == count_interval(r.resampled_n, r.n_topics, 0.95,
                                                                   spread=plan.POWER_SPREAD) for r in results)
    assert misses == {(1.3, 1.3): (2, 0), plan.POWER_SPREAD: (0, 0)}

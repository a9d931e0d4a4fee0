"""Every public result class: a short repr, a JSON-ready to_dict() and a to_frame() DataFrame.

Each result is computed through the public API on the embedded DL 2019 data (or a small
hand-made input), then checked for the three things a user does with a result first: print it,
save it, tabulate it."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import planner
from planner import plan, simulate, study
from planner.results import Interval, IntervalMethod
from planner.scores import ScoreMatrix


@pytest.fixture(scope="module")
def dl19():
    return planner.datasets.load("dl19-passage", measure="nDCG@10")


def _variants():
    rng = np.random.default_rng(0)
    x = rng.normal(0.5, 0.1, (4, 1, 1)) + rng.normal(0, 0.05, (4, 30, 3))
    return ScoreMatrix.build(x, ["a", "b", "c", "d"], [str(t) for t in range(30)], variants=["1", "2", "3"])


def _runs_qrels():
    runs = {n: "".join(f"{q} Q0 d{(i * k + q) % 9} {i} {9 - i} {n}\n" for q in (1, 2, 3) for i in range(6))
            for n, k in (("a", 1), ("b", 2), ("c", 4))}
    qrels = "".join(f"{q} 0 d{d} {int(d % 2 == 0)}\n" for q in (1, 2, 3) for d in range(9))
    return runs, qrels


def _results(m):
    """One instance of every public result class, computed through the public API."""
    fitted = planner.fit(m)
    runs, qrels = _runs_qrels()
    depth = plan.pool_depth_study(runs, qrels, depths=[2, 4], measure="P@5", target="ci_width", value=0.5,
                                  method="analytic")
    growth = plan.judgment_growth(runs, qrels, depths=[2, 4], subsets=2, rng=1)
    res = study.run_study({"collection": {"dataset": "dl19-passage"}, "method": "analytic", "topics": [10, 50],
                           "resamples": 20, "targets": [{"target": "erho2", "value": 0.9}]},
                          quiet=True, write=False)
    st = plan.StackedStrata.from_components([(0.002, 0.02, 0.010), (0.001, 0.03, 0.020)], [40, 60])
    a = plan.size_for_target(m, target="swap_rate", value=0.05, method="analytic", n_resamples=20, rng=1)
    return {
        "Interval": a.interval,
        "Curve": planner.predict(m, topics=[10, 50], method="analytic"),
        "TargetResult": a,
        "SizeResult": plan.topic_set_size(min_diff=0.05, power=0.8, scores=m, n_resamples=20),
        "VariantTrade": plan.topics_for_variants(_variants(), target="swap_rate", value=0.05, n_variants=[1, 2]),
        "PairedDifference": plan.paired_difference(a.resampled_n, a.resampled_n + 3),
        "BudgetResult": plan.budget(topic_cost=10, judgment_cost=1, judgments=depth, topics_needed=50),
        "DepthStudy": depth,
        "GrowthCurve": growth,
        "Allocation": plan.allocate(m.with_strata(["x" if i % 2 else "y" for i in range(m.n_topics)]), n=20),
        "Validation": planner.validate(m, pilot=10, topics=[5, 10], repeats=3, rng=1),
        "VarianceComponents": fitted,
        "DStudy": fitted.dstudy([10, 50]),
        "TopicsNeeded": fitted.topics_for(erho2=0.9),
        "PairStats": planner.pair_stats(m),
        "PoolStats": planner.datasets.load_pool("dl19-passage"),
        "StudyResult": res,
        "ScenarioTable": simulate.compare_measures({"nDCG@10": m}, target="swap_rate", value=0.1, topics=[5, 10],
                                                   method="analytic"),
        "PairedBootstrap": plan.paired_bootstrap(m, n_resamples=50, rng=1),
        "StackedStrata": st,
        "StackedPoint": st.at(50),
    }


@pytest.fixture(scope="module")
def results(dl19):
    return _results(dl19)


NAMES = ["Interval", "Curve", "TargetResult", "SizeResult", "VariantTrade", "PairedDifference", "BudgetResult",
         "DepthStudy", "GrowthCurve", "Allocation", "Validation", "VarianceComponents", "DStudy", "TopicsNeeded",
         "PairStats", "PoolStats", "StudyResult", "ScenarioTable", "PairedBootstrap", "StackedStrata",
         "StackedPoint"]


@pytest.mark.parametrize("name", NAMES)
def test_every_result_has_a_short_repr_a_json_dict_and_a_frame(results, name):
    r = results[name]
    assert type(r).__name__ == name
    assert len(repr(r)) < 300, repr(r)
    json.dumps(r.to_dict(), allow_nan=True)
    assert isinstance(r.to_frame(), pd.DataFrame)


def test_the_curve_repr_is_short_but_was_38000_characters(results):
    # repr(Curve) printed every pair's arrays (38,000 characters on DL 2019; API audit)
    assert repr(results["Curve"]).startswith("Curve(method='analytic'")


def test_one_interval_type_everywhere(results):
    # every result with an interval carries the shared Interval, its method an enum, never a sentence
    for name in ("TargetResult", "SizeResult", "PairedDifference", "TopicsNeeded"):
        ivl = results[name].interval
        assert isinstance(ivl, Interval) and isinstance(ivl.how, IntervalMethod)
    assert results["TargetResult"].interval.how is IntervalMethod.TOPIC_RESAMPLING
    assert results["TopicsNeeded"].interval.how is IntervalMethod.ANALYTIC
    assert results["PairedDifference"].interval.how is IntervalMethod.PERCENTILE
    assert results["PairedDifference"].interval.n_resamples == 20
    assert results["VariantTrade"].interval_method is IntervalMethod.NONE

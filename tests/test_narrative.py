"""The answer in words (planner.study.narrative): its sentences, asserted once here.

Every other test of a study asserts the typed fields (counts, intervals, verdicts, the
``how`` of each target); the sentences built from them are checked in this one test."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from planner.study import run_study
from planner.study.narrative import pool_others


@pytest.fixture(scope="module")
def small_scores(tmp_path_factory):
    """8 DL 2019 runs x 24 topics (nDCG@10, reference matrix), as in test_study."""
    from tests.conftest import SHARED_DATA

    src = SHARED_DATA / "trec-dl2019-passage" / "reference" / "matrix_official_nDCG_at_10.csv"
    if not src.exists():
        pytest.skip("shared data not present")
    df = pd.read_csv(src, dtype={"topic": str}).set_index("topic")
    means = df.mean().sort_values()
    cols = list(means.index[:: max(1, len(means) // 8)][:8])
    out = tmp_path_factory.mktemp("scores") / "dl19_small.csv"
    df.iloc[:24][cols].to_csv(out)
    return out


def test_narrative_sentences(small_scores):
    # 1. each unsolved target gets its own reason: a bootstrap curve up to 20 topics cannot solve
    # swap 0.05, but the power target's count meets it (the answer used to say only "not reached")
    doc = {"collection": {"dataset": "dl19-passage"}, "method": "bootstrap", "topics": [10, 20], "resamples": 50,
           "seed": 3, "targets": [{"target": "swap_rate", "value": 0.05}, {"target": "power", "value": 0.8}]}
    res = run_study(doc, quiet=True, write=False)
    text = res.answer["text"]
    swap = next(t for t in res.results["scenarios"][0]["targets"] if t["target"] == "swap_rate")
    at = {int(r["n_topics"]): r for r in res.results["scenarios"][0]["at_n"]}
    n = int(next(t for t in res.results["scenarios"][0]["targets"] if t["target"] == "power")["n_topics"])
    assert f"Choose **at least {n} topics**" in text
    assert f"swap_rate 0.05 (bootstrap: {swap['how']}" in text or f"swap_rate 0.05 ({swap['how']}" in text
    assert f"at {n} topics it is {at[n]['swap_rate_mean']:.3g}, which meets it" in text

    # 2. the answer names its scenario as the grid's first, and what its power target is
    doc = {"collection": {"scores": str(small_scores)}, "method": ["analytic", "predictive"], "topics": [5, 10],
           "seed": 2, "targets": [{"target": "power", "value": 0.8}]}
    text = run_study(doc, quiet=True, write=False).answer["text"]
    assert "The answer speaks for the first scenario of the grid (analytic)" in text
    assert "because the binding target (power) is solved by the same formula whatever the method" in text
    assert ("power >= 0.8 (a paired t-test at alpha 0.05 detects a true difference of 0.05 with this "
            "probability for a pair with the planning variance of per-topic differences, pair") in text

    # 3. a count beyond the studied range is said to be
    doc = {"collection": {"scores": str(small_scores)}, "method": "analytic", "topics": [5, 10], "seed": 3,
           "targets": [{"target": "swap_rate", "value": 0.01}]}
    assert "That count is beyond the largest topic count studied (10)" in run_study(
        doc, quiet=True, write=False).answer["text"]

    # 4. the pool sentence names the other scenarios at the chosen depth: dl19-budget recommended
    # depth 10 for nDCG@10 while AP needs 141 topics there and fails tau_min (report audit); the
    # cheapest depth serving both is 20 with 106 topics
    def scen(name, rows):
        # the two fields the pool sentence reads of a ScenarioResult
        return SimpleNamespace(name=name, pool={
            "tau_min": 0.9, "choice": {"depth": 10, "n_topics_needed": rows[0][1]},
            "depths": [{"depth": d, "n_topics_needed": n, "kendall_tau_vs_full": t, "tau_ok": t >= 0.9,
                        "cost_per_topic": c} for d, n, t, c in rows]})
    s0 = scen("nDCG@10", [(10, 107, 0.985, 58.0), (20, 106, 0.99, 114.6)])
    ap = scen("AP(rel=2)", [(10, 141, 0.874, 58.0), (20, 84, 0.922, 114.6)])
    text = pool_others(s0, [s0, ap], 10)
    assert "At depth 10, AP(rel=2) needs 141 topics" in text and "0.874, below tau_min 0.9" in text
    assert "Serving every scenario at once takes depth 20 with 106 topics (cost 12148)" in text

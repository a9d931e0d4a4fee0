"""``budget`` plans with the count that suffices at 95%: the upper end of its interval on n."""

from __future__ import annotations

import json

import pytest

from planner import datasets, plan
from planner.cli import main
from planner.errors import ParameterError


def test_budget_costs_the_upper_end_of_a_target_results_interval():
    m = datasets.load("dl19-passage", measure="nDCG@10")
    r = plan.size_for_target(m, target="swap_rate", value=0.05, n_resamples=40, rng=3)
    assert r.interval.high is not None and r.interval.high > r.n_topics
    b = plan.budget(topic_cost=20, judgment_cost=1, judgments={10: 58.0, 20: 114.6}, topics_needed=r)
    row = b.rows[0]
    assert (row["n_topics_plan"], row["n_topics_needed"]) == (r.interval.high, r.n_topics)
    assert (row["n_lower"], row["n_upper"]) == (r.interval.low, r.interval.high)
    assert row["total_cost"] == pytest.approx(r.interval.high * 78.0)
    # a plain count is planned with as it is
    b0 = plan.budget(topic_cost=20, judgment_cost=1, judgments={10: 58.0}, topics_needed=50)
    assert b0.rows[0]["n_topics_plan"] == 50 and b0.rows[0]["n_upper"] is None
    with pytest.raises(ParameterError, match="integers >= 1"):
        plan.budget(topic_cost=20, judgment_cost=1, judgments={10: 58.0}, topics_needed=0.5)


def test_cli_budget_leads_with_the_count_to_plan_with(capsys):
    args = ["budget", "--dataset", "dl19-passage", "--topic-cost", "20", "--judgment-cost", "1",
            "--target", "swap_rate:0.05", "--depths", "10,20", "--resamples", "40", "--seed", "3", "--quiet"]
    assert main([*args, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    r = plan.size_for_target(datasets.load("dl19-passage", measure="nDCG@10"), target="swap_rate", value=0.05,
                             n_resamples=40, rng=3)
    cheapest = got["budget"]["cheapest"]
    assert (cheapest["n_topics_plan"], cheapest["n_topics_needed"]) == (r.interval.high, r.n_topics)
    assert cheapest["total_cost"] == pytest.approx(r.interval.high * cheapest["cost_per_topic"])
    assert got["seed"] == 3
    assert main(args) == 0
    last = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("cheapest"))
    assert f"plan with {r.interval.high} topics (count {r.n_topics}, 95% interval [{r.interval.low}, " \
           f"{r.interval.high}])" in last
    # no interval: the point count is planned with
    assert main([*args[:-5], "--resamples", "0", "--quiet", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["budget"]["rows"][0]
    assert row["n_topics_plan"] == row["n_topics_needed"] == r.n_topics and row["n_upper"] is None


def test_budget_plans_a_dstudy_interval_as_size_does(capsys):
    # budget dropped every interval not from topic resamples: Erho2 0.95 on DL 2019 was costed at
    # its point count, 24 topics, where `planner size` plans with the Feldt interval's upper end, 37
    m = datasets.load("dl19-passage", measure="nDCG@10")
    r = plan.size_for_target(m, target="erho2", value=0.95, n_resamples=0)
    assert r.interval.how.value == "analytic" and r.interval.high > r.n_topics
    row = plan.budget(topic_cost=20, judgment_cost=1, judgments={10: 58.0}, topics_needed=r).rows[0]
    assert (row["n_topics_plan"], row["n_topics_needed"]) == (r.interval.high, r.n_topics)
    assert row["n_topics_plan"] == r.interval.plan_bound(r.n_topics)
    args = ["budget", "--dataset", "dl19-passage", "--topic-cost", "20", "--judgment-cost", "1",
            "--target", "erho2:0.95", "--depths", "10", "--quiet", "--json"]
    assert main(args) == 0
    cheapest = json.loads(capsys.readouterr().out)["budget"]["cheapest"]
    assert (cheapest["n_topics_plan"], cheapest["n_lower"]) == (r.interval.high, r.interval.low)
    assert cheapest["n_interval"] == "analytic"
    # the footer says how the interval was made: no topic resamples were drawn for it
    assert main(args[:-1]) == 0
    out = capsys.readouterr().out
    assert f"plan with {r.interval.high} topics (count {r.n_topics}" in out
    assert "topic resamples, seed" not in out and "D-study's closed form" in out


def test_budget_from_a_depth_study_plans_with_the_binding_interval(shared_data):
    # a depth study kept the interval of the target with the largest point count, or none: with
    # Erho2 0.95 (24 topics, Feldt interval to 36) and a CI width of 0.16 (30, no interval) its
    # row had no interval and budget planned with 30 topics, where `planner size` plans with 36
    import warnings

    from planner.collection import read_qrels, read_runs
    from planner.errors import DegenerateDataWarning

    d = shared_data / "trec-dl2019-passage"
    runs, qrels = read_runs(d / "runs"), read_qrels(d / "qrels.txt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        ds = plan.pool_depth_study(runs, qrels, depths=[10], measure="nDCG@10", method="analytic",
                                   targets=[("erho2", 0.95), ("ci_width", 0.16)], topic_cost=5.0,
                                   judgment_cost=1.0, tau_min=0.0)
    study_row = ds.rows[0]
    by = study_row["n_by_target"]
    assert by["erho2"] < by["ci_width"] == study_row["n_topics_needed"]       # measured: 24 < 30
    # the interval is Erho2's (the D-study's, no resamples drawn): it binds the plan
    assert study_row["n_interval"] == "analytic" and ds.n_resamples == 0
    assert study_row["n_lower"] < by["erho2"] and study_row["n_upper"] > study_row["n_topics_needed"]
    row = plan.budget(topic_cost=5.0, judgment_cost=1.0, judgments=ds).rows[0]
    assert (row["n_topics_plan"], row["n_topics_needed"]) == (study_row["n_upper"], study_row["n_topics_needed"])
    assert row["total_cost"] == pytest.approx(study_row["n_upper"] * row["cost_per_topic"])


def test_cli_budget_with_two_targets_needs_the_largest_count_and_plans_with_the_binding_end(capsys):
    # DL 2019, the default method, seed 1: swap 0.05 needs 117 [78, 233], power 0.8 135 [94, 176];
    # budget reported swap's 117 as the count (the binding target's), though power needs 135
    m = datasets.load("dl19-passage", measure="nDCG@10")
    swap, power = (plan.size_for_target(m, target=t, value=v, n_resamples=60, rng=1)
                   for t, v in (("swap_rate", 0.05), ("power", 0.8)))
    assert swap.n_topics < power.n_topics and swap.interval.high > power.interval.high
    assert main(["budget", "--dataset", "dl19-passage", "--topic-cost", "20", "--depths", "10", "--target",
                 "swap_rate:0.05", "--target", "power:0.8", "--resamples", "60", "--seed", "1", "--quiet",
                 "--json"]) == 0
    cheapest = json.loads(capsys.readouterr().out)["budget"]["cheapest"]
    assert cheapest["n_topics_needed"] == power.n_topics
    assert (cheapest["n_lower"], cheapest["n_topics_plan"]) == (swap.interval.low, swap.interval.high)

"""The study in words: the answer (planner.study.narrative) and the honest statement
(planner.study.honest), their sentences asserted once here, one test per module.

Every other test of a study asserts the typed fields (counts, intervals, verdicts, the
``how`` of each target); the sentences built from them are checked in these tests."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from planner.study import run_study
from planner.study.honest import COVERAGE_FINDING
from planner.study.narrative import pool_others


def _clef_runs(tmp_path, k: int):
    """A folder with the first ``k`` CLEF eHealth 2016 trec_eval files (6 variants per topic)."""
    import shutil

    from tests.conftest import SHARED_DATA

    src = SHARED_DATA / "clef-ehealth2016" / "trec_eval"
    if not src.is_dir():
        pytest.skip("shared data not present")
    folder = tmp_path / "te"
    folder.mkdir()
    for f in sorted(src.iterdir())[:k]:
        shutil.copy(f, folder)
    return folder


def test_narrative_sentences(small_scores, tmp_path):
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
            "depths": [{"depth": d, "n_topics_needed": n, "n_topics_plan": p, "kendall_tau_vs_full": t,
                        "tau_ok": t >= 0.9, "cost_per_topic": c} for d, n, p, t, c in rows]})
    s0 = scen("nDCG@10", [(10, 107, 107, 0.985, 58.0), (20, 106, 106, 0.99, 114.6)])
    ap = scen("AP(rel=2)", [(10, 141, 141, 0.874, 58.0), (20, 84, 84, 0.922, 114.6)])
    text = pool_others(s0, [s0, ap], 10)
    assert "At depth 10, AP(rel=2) needs 141 topics" in text and "0.874, below tau_min 0.9" in text
    assert "Serving every scenario at once takes depth 20 with 106 topics to plan with (cost 12148)" in text
    # the depths are costed at the count to plan with (an interval's upper end), as budget does
    ap = scen("AP(rel=2)", [(10, 141, 141, 0.874, 58.0), (20, 84, 130, 0.922, 114.6)])
    assert "takes depth 20 with 130 topics to plan with (cost 14898)" in pool_others(s0, [s0, ap], 10)

    # 5. query variants: the count assumes the collection's variants per topic; the binding
    # target's trade of topics against variants, its intervals and costs (not included, or the
    # cheapest); a binding target without a variant model points to the table
    folder = _clef_runs(tmp_path, 5)
    doc = {"collection": {"scores": str(folder), "variant_divisor": 1000}, "measure": "map",
           "method": "analytic", "topics": [10, 50], "variants": [1, 3, 6], "resamples": 20,
           "targets": [{"target": "swap_rate", "value": 0.05}]}
    res = run_study(doc, quiet=True, write=False)
    text, first = res.answer["text"], res.tables["variant_targets"].iloc[0]
    assert "Each topic counts with its 6 query variants, averaged" in text
    assert (f"1 variant: {int(first['n_topics'])} topics [{int(first['lower'])}, {int(first['upper'])}] "
            f"({int(first['queries'])} query formulations)") in text
    assert "95% intervals on n from the scenario's topic resamples" in text
    assert "costs are not included (a topic and a variant both cost 0; give costs:" in text
    res = run_study({**doc, "costs": {"topic": 100, "variant": 10}}, quiet=True, write=False)
    vt = res.tables["variant_targets"]
    best = vt.loc[vt["cost"].idxmin()]
    assert (f"the cheapest is {int(best['n_variants'])} variant" in res.answer["text"]
            and f"{int(best['n_topics'])} topics, cost {best['cost']:.6g}" in res.answer["text"])
    res = run_study({**doc, "targets": [{"target": "swap_rate", "value": 0.4}, {"target": "power", "value": 0.95}]},
                    quiet=True, write=False)
    assert "trades topics against variants per topic for swap_rate and Erho2 and Phi" in res.answer["text"]

    # 6. a pilot-aware reversal rate levels off as n grows, and the buys say so
    doc = {"collection": {"scores": str(small_scores)}, "method": "predictive-integrated", "topics": [10, 40],
           "resamples": 20, "targets": [{"target": "swap_rate", "value": 0.1}]}
    rev = [b for b in run_study(doc, quiet=True, write=False).answer["buys"] if b.startswith("mean reversal rate")]
    assert len(rev) == 1 and "levels off as n grows" in rev[0]
    rev = [b for b in run_study({**doc, "method": "analytic"}, quiet=True, write=False).answer["buys"]
           if b.startswith("mean reversal")]
    assert len(rev) == 1 and "levels off" not in rev[0]

    # 7. an interpolated count names its bracket
    from dataclasses import replace

    from planner.study import answer

    doc = {"collection": {"scores": str(small_scores)}, "method": "analytic", "topics": [5, 10],
           "resamples": 20, "targets": [{"target": "erho2", "value": 0.9}]}
    s = run_study(doc, quiet=True, write=False).scenario_results[0]
    s = replace(s, targets=(replace(s.targets[0], bracket=(10, 50)),))
    assert "The count for erho2 0.9 is interpolated between the studied counts 10 and 50" in answer([s]).text

    # 8. no pool depth within the budget: said first, with the pool study's reason; a budget larger
    # than the targets need: what all of it would buy
    from tests.test_study import _tiny_runs

    runs, qrels = _tiny_runs(tmp_path)
    doc = {"collection": {"runs": str(runs), "qrels": str(qrels)}, "measure": "nDCG@10", "method": "analytic",
           "topics": [3, 6], "resamples": 10, "targets": [{"target": "erho2", "value": 0.5}],
           "pool": {"depths": [2, 5], "tau_min": 0.0}, "costs": {"topic": 10, "judgment": 1, "budget": 1}}
    res = run_study(doc, quiet=True, write=False)
    text = res.answer["text"]
    assert text.startswith("**No pool depth meets the targets**") and "Choose" not in text
    assert res.results["scenarios"][0]["pool"]["reason"] in text
    doc["costs"] = {"topic": 10, "judgment": 1, "budget": 10 ** 6}
    res = run_study(doc, quiet=True, write=False)
    sc = res.scenario_results[0]
    ch, nb = sc.pool["choice"], sc.pool["budget_topics"]
    assert "No pool depth" not in res.answer["text"]
    line = next(b for b in res.answer["buys"] if b.startswith("the whole budget"))
    assert f"would buy {nb} topics at depth {ch['depth']}" in line
    # what is left is after the count to plan with (Erho2's Feldt upper end, 5), which the total costs
    assert ch["n_topics_plan"] > ch["n_topics_needed"]
    assert f"({10 ** 6 - ch['total_cost']:.0f} is left after the {ch['n_topics_plan']} to plan with)" in line
    assert f"swap rate {sc.at(nb)['swap_rate_mean']:.3f}" in line

    # 9. the grid's extremes: two collections by the overlap of their intervals on n
    doc = {"collection": [{"dataset": "dl19-passage"}, {"dataset": "dl20-passage"}], "method": "analytic",
           "topics": [20, 43], "resamples": 10, "targets": [{"target": "swap_rate", "value": 0.05}]}
    res = run_study(doc, quiet=True, write=False)
    sc = {s.settings["collection"]["label"]: s.targets[0].interval for s in res.scenario_results}
    b, a = sc["dl19-passage"], sc["dl20-passage"]
    assert f"Their 95% intervals on n ([{a.low}, {a.high}] and [{b.low}, {b.high}])" in res.answer["text"]
    assert ("overlap, a rough sign" if a.high >= b.low else "do not overlap") in res.answer["text"]

    # 10. measures of the same runs: paired over the same resamples, the other measure minus this one
    from tests.test_study import _three_measures

    f = _three_measures(tmp_path, small_scores)
    doc = {"seed": 5, "collection": {"scores": str(f)}, "measure": ["C", "A", "B"], "method": "analytic",
           "topics": [5, 10, 24, 40], "targets": [{"target": "swap_rate", "value": 0.1}]}
    res = run_study(doc, quiet=True, write=False)
    text = res.answer["text"]
    assert "; paired over the same 200 topic resamples, the difference (+" in text and "overlap" not in text
    n = {s.settings["measure"]: s.targets[0].n_topics for s in res.scenario_results}
    (bc,) = [r for r in res.results["paired"] if {r["measure_fewer"], r["measure_more"]} == {"B", "C"}]
    assert (f"B {n['B']} ({n['B'] - n['C']:+d}, 95% interval "
            f"[{int(-bc['extra_upper']):+d}, {int(-bc['extra_lower']):+d}]") in text
    assert any(f"the difference (+{r['extra']}, 95% interval [{r['extra_lower']:+.0f}, {r['extra_upper']:+.0f}]) is "
               + ("larger" if r["verdict"] == "separated" else "within") in text for r in res.results["paired"])

    # 11. the range of counts: only the scenarios reaching every target, as topics to build
    doc = {"collection": {"scores": str(small_scores)}, "method": "analytic", "topics": [5, 10], "seed": 3,
           "resamples": 20, "filter": ["none", {"min_spread": 0.3}], "targets": [{"target": "swap_rate", "value": 0.1}]}
    res = run_study(doc, quiet=True, write=False)
    sc = res.tables["scenarios"]
    lo, hi = sc.loc[sc["topics_to_build"].idxmin()], sc.loc[sc["topics_to_build"].idxmax()]
    assert (f"counted as topics to create (topics_to_build), the range is {lo['topics_to_build']} "
            f"({lo['scenario']}) to {hi['topics_to_build']} ({hi['scenario']})") in res.answer["text"]
    cfg = {"seed": 5, "resamples": 100, "collection": {"dataset": "dl19-passage"},
           "measure": ["nDCG@10", "AP(rel=2)"], "method": ["analytic", "bootstrap"], "topics": [10, 20, 43, 60],
           "targets": [{"target": "swap_rate", "value": 0.05}, {"target": "power", "value": 0.8}]}
    r = run_study(cfg, write=False, quiet=True)
    reached = sum(s.need() is not None for s in r.scenario_results)
    assert (f"Across the {reached} of the 4 scenarios that reach every target the topics needed range"
            in r.answer["text"])

    # 12. the count without duplicate runs, and a far count's interval pointing to the caveat
    wide = pd.read_csv(small_scores, dtype={"topic": str}).set_index("topic")
    wide["copy_of_first"] = wide[wide.columns[0]]
    wide.to_csv(tmp_path / "dup.csv")
    doc = {"collection": {"scores": str(tmp_path / "dup.csv")}, "method": "analytic", "topics": [5, 10],
           "seed": 1, "targets": [{"target": "swap_rate", "value": 0.1}]}
    with pytest.warns(Warning):
        res = run_study(doc, quiet=True, write=False)
    d = res.scenario_results[0].targets[0].duplicates
    assert (f"the target needs {d.n_topics} topics (95% interval on n: {d.interval.low} to {d.interval.high})"
            in res.answer["text"])
    doc = {"collection": {"scores": str(small_scores)}, "method": "analytic", "topics": [5, 10], "seed": 1,
           "resamples": 20, "targets": [{"target": "swap_rate", "value": 0.05}]}
    s = run_study(doc, quiet=True, write=False)
    (t,), T = s.scenario_results[0].targets, s.scenario_results[0].data.n_topics
    assert f"a count {t.n_topics / T:.1f} times the collection's {T} topics tends to run low" in s.answer["text"]


def test_honest_sentences(small_scores, tmp_path):
    # 1. pool bias of the grid's other collections: DL 2020 has a run with 43% of its top 10 unjudged
    doc = {"collection": [{"dataset": "dl19-passage"}, {"dataset": "dl20-passage"}], "method": "analytic",
           "topics": [20, 40], "resamples": 20, "targets": [{"target": "erho2", "value": 0.9}]}
    paras = run_study(doc, quiet=True, write=False).results["honest"]["paragraphs"]
    other = [p for p in paras if p.startswith("**Pool bias on dl20-passage.**")]
    assert len(other) == 1 and "lowest 0.569 (DoRA_Large_1k)" in other[0]

    # 2. the measure is named as the scores name it
    tidy = tmp_path / "tidy.csv"
    df = pd.read_csv(small_scores, dtype={"topic": str}).melt(id_vars="topic", var_name="system")
    df["measure"] = "map"
    df[["system", "topic", "value", "measure"]].to_csv(tidy, index=False)
    res = run_study({"collection": {"scores": str(tidy)}, "method": "analytic", "topics": [5, 10],
                     "resamples": 10, "targets": [{"target": "erho2", "value": 0.9}]}, quiet=True, write=False)
    assert "(map)" in res.results["honest"]["paragraphs"][0]

    # 3. what the interval on n is: not calibrated, low far beyond the collection; beyond the
    # multiple the coverage check reached its miss rate is unmeasured; none for a D-study target
    doc = {"collection": {"scores": str(small_scores)}, "method": "analytic", "topics": [5, 10], "seed": 1,
           "resamples": 20, "targets": [{"target": "swap_rate", "value": 0.05}]}
    res = run_study(doc, quiet=True, write=False)
    s = res.scenario_results[0]
    (t,), T = s.targets, s.data.n_topics
    (cav,) = [p for p in res.results["honest"]["paragraphs"] if p.startswith("**Intervals on n.**")]
    assert "not a calibrated confidence interval" in cav
    assert f"needs {t.n_topics} topics in {s.name}, {t.n_topics / T:.1f} times" in cav
    far = run_study({**doc, "targets": [{"target": "swap_rate", "value": 0.01}]}, quiet=True, write=False)
    (cav2,) = [p for p in far.results["honest"]["paragraphs"] if p.startswith("**Intervals on n.**")]
    assert "beyond the 8.2 times that check reached" in cav2
    d = run_study({**doc, "targets": [{"target": "erho2", "value": 0.9}]}, quiet=True, write=False)
    assert not any(p.startswith("**Intervals on n.**") for p in d.results["honest"]["paragraphs"])
    # a target that does not run low (ci_width) under another method than the default: the coverage
    # check (of the default method) is not quoted for it, nor the deconvolution it did not use
    w = run_study({**doc, "targets": [{"target": "swap_rate", "value": 0.05}, {"target": "ci_width", "value": 0.2}]},
                  quiet=True, write=False)
    (cav4,) = [p for p in w.results["honest"]["paragraphs"] if p.startswith("**Intervals on n.**")]
    assert "not a calibrated confidence interval" in cav4 and "deconvolved" not in cav4
    # the default method's counts do not run low: one paragraph with the measured coverage and the
    # largest count, instead of the run-low caveat
    dec = run_study({**doc, "method": "deconvolved"}, quiet=True, write=False)
    (t,) = dec.scenario_results[0].targets
    (cav3,) = [p for p in dec.results["honest"]["paragraphs"] if p.startswith("**Intervals on n.**")]
    assert "it never lay below" not in cav3 and COVERAGE_FINDING in cav3
    assert "95% of draws" in COVERAGE_FINDING and "89.5-99.3% on each of 27" in COVERAGE_FINDING
    name = dec.scenario_results[0].name
    assert f"{t.n_topics} topics in {name}, {t.n_topics / T:.1f} times the collection's {T}" in cav3

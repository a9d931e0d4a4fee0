"""The report people read: the answer first in at most 40 words with the count to plan with,
what that count buys against the collection's own size, the honest statement as bullets, wide
tables in scrolling boxes, the what-if panel's data, and figures legible and safe for
colour-blind readers. (tests/test_browser.py renders the page in Chromium.)"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from conftest import ROOT

from planner.report import figures, write_report
from planner.results import Interval, IntervalMethod
from planner.study import run_study
from planner.study.narrative import headline
from planner.study.results import HEADLINE_WORDS, ScenarioTarget, SolveKind, plan_count, plan_target

SHIPPED = sorted(p for p in (ROOT / "reports").iterdir() if (p / "results.json").is_file())


def _words(text: str) -> int:
    return len(text.replace("**", "").split())


@pytest.fixture(scope="module")
def study(small_scores, tmp_path_factory):
    doc = {"collection": {"scores": str(small_scores)}, "method": "analytic", "topics": [5, 10, 24, 50],
           "seed": 1, "resamples": 30, "targets": [{"target": "swap_rate", "value": 0.05},
                                                   {"target": "erho2", "value": 0.9}]}
    res = run_study(doc, quiet=True, write=False)
    out = write_report(res, tmp_path_factory.mktemp("rep") / "r")
    return res, out


def test_answer_leads_with_the_count_to_plan_with(study):
    # the answer was one 146-367 word paragraph before any table (issue 25); now its first
    # block is at most 40 words and names the interval's upper end, the count to plan with
    res, out = study
    s = res.scenario_results[0]
    t = max(s.targets, key=lambda t: t.interval.high or 0)
    ans = res.answer_result
    assert ans.plan_n == int(t.interval.high) == plan_count(s.targets) and ans.n_topics == s.need()
    assert _words(ans.headline) <= HEADLINE_WORDS == 40
    assert f"Plan for **{ans.plan_n} topics**" in ans.headline
    assert f"{int(t.interval.low)} to {int(t.interval.high)}" in ans.headline and t.target in ans.headline
    md = (out / "report.md").read_text()
    first = md.split("## The answer", 1)[1].strip().splitlines()[0]
    assert first == "> " + ans.headline
    # the whole answer stays in results.json, headline first
    saved = json.loads((out / "results.json").read_text())["answer"]
    assert saved["text"].startswith(saved["headline"]) and saved["plan_n"] == ans.plan_n


def test_answer_table_is_the_curve_at_exactly_each_count(study):
    res, out = study
    s = res.scenario_results[0]
    tab = pd.read_csv(out / "tables" / "answer.csv")
    T, plan = s.data.n_topics, res.answer_result.plan_n
    assert list(tab["topics"]) == sorted({T, s.need(), plan})
    for _, row in tab.iterrows():
        exact = s.at(int(row["topics"]))       # computed at that count, not read off the curve
        for col in ("ci_width_median", "swap_rate_mean", "power_mean"):
            assert row[col] == pytest.approx(exact[col], rel=1e-9)
    assert "count to plan with" in tab.loc[tab["topics"] == plan, "which"].item()
    # more topics buy a narrower interval and fewer swaps than the collection's own
    own, more = tab.set_index("topics").loc[T], tab.set_index("topics").loc[plan]
    assert more["ci_width_median"] < own["ci_width_median"] and more["swap_rate_mean"] < own["swap_rate_mean"]


def test_honest_caveats_are_bullets_and_tables_scroll(study):
    res, out = study
    page = (out / "report.html").read_text()
    honest = page.split("id='the-honest-statement'", 1)[1]
    items = re.findall(r"<li>(.*?)</li>", honest.split("</ul>", 1)[0])
    assert len(items) == len(res.results["honest"]["paragraphs"]) >= 3
    # every table sits in a box that scrolls sideways instead of widening the page
    assert page.count("<table>") == page.count("<div class='scroll'><table>") > 3
    assert ".scroll{overflow-x:auto" in page


def test_what_if_panel_embeds_the_curves(study):
    res, out = study
    page = (out / "report.html").read_text()
    data = json.loads(re.search(r"<script type='application/json' id='whatif-data'>(.*?)</script>", page,
                                re.S).group(1))
    cv = res.tables["curves"]
    name = res.scenario_results[0].name
    assert data["scenario"] == name and data["start"] == res.answer_result.plan_n
    assert data["curves"][name]["n"] == [int(n) for n in cv["n_topics"]]
    assert data["curves"][name]["swap_rate_mean"] == pytest.approx(list(cv["swap_rate_mean"]))
    assert "id='whatif-n'" in page and "type='range'" in page
    assert "report.html` has a slider" in (out / "report.md").read_text()


def _scen(targets, name="s"):
    return SimpleNamespace(name=name, settings={"topics": [10, 50]}, targets=targets, pool=None)


def _target(n, low, high, how=IntervalMethod.TOPIC_RESAMPLING):
    return ScenarioTarget("swap_rate", 0.05, n, Interval(low, high, 0.95, how, 200), "", SolveKind.CURVE)


def test_headline_says_when_there_is_no_count_to_plan_with():
    # no finite upper end: the data support no count to plan with, and the headline says so
    s = _scen([_target(120, 80, None)])
    assert plan_count(s.targets) is None
    text = headline(s, 120, 120, None)
    assert "**at least 120 topics**" in text and "no finite upper end" in text and _words(text) <= 40
    # no interval at all: a point estimate, said to be one
    s = _scen([_target(120, None, None, IntervalMethod.NONE)])
    assert "a point estimate" in headline(s, 120, 120, None)
    # the target with the larger upper end sets the count, not the larger point estimate
    s = _scen([_target(120, 80, 150), _target(110, 60, 190)])
    assert plan_count(s.targets) == 190 and "60 to 190" in headline(s, 120, 120, None)
    # an unbounded upper end binds: no finite count suffices for that target, whatever another's
    # upper end (the headline said 'Plan for 342 topics', power's, on 5 topics of TREC-6 P@10)
    s = _scen([_target(120, 80, 342), _target(110, 60, None)])
    assert plan_target(s.targets) is s.targets[1] and plan_count(s.targets) is None
    assert "no finite upper end" in headline(s, 120, 120, None)
    # a long scenario name is left out rather than running past 40 words
    long = _scen([_target(120, 80, 150)], name=" ".join(["word"] * 30))
    assert _words(headline(long, 120, 120, None)) <= 40 and "word word" not in headline(long, 120, 120, None)


@pytest.mark.parametrize("folder", SHIPPED, ids=[p.name for p in SHIPPED])
def test_shipped_reports_lead_with_a_short_answer(folder):
    ans = json.loads((folder / "results.json").read_text())["answer"]
    assert _words(ans["headline"]) <= HEADLINE_WORDS
    assert ans["plan_n"] is not None and f"**{ans['plan_n']} topics**" in ans["headline"]
    md = (folder / "report.md").read_text()
    assert md.split("## The answer", 1)[1].strip().splitlines()[0] == "> " + ans["headline"]


# ---------------------------------------------------------------- figures
def test_palette_is_colour_blind_safe_and_owned_once():
    # matplotlib's default cycle (tab10) puts red against green; every figure draws from PALETTE
    assert figures._colors(4) == list(figures.PALETTE[:4])
    assert figures.PALETTE[:8] == ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
                                   "#F0E442", "#000000")
    tg = pd.DataFrame({"scenario": ["a", "a"], "target": ["swap_rate", "erho2"], "n_topics": [100, 20],
                       "lower": [60, 10], "upper": [180, 30]})
    fig = figures.plot_required_topics(tg)
    from matplotlib.colors import to_hex

    assert [to_hex(p.get_facecolor()) for p in fig.axes[0].patches[:2]] == [c.lower() for c in figures.PALETTE[:2]]


def test_bar_labels_clear_their_error_bars():
    # the count was written at the bar's end, where the interval's error bar struck through it
    tg = pd.DataFrame({"scenario": ["a", "b"], "target": ["swap_rate"] * 2, "n_topics": [100, 50],
                       "lower": [60, 40], "upper": [180, 70]})
    ax = figures.plot_required_topics(tg).axes[0]
    xs = {t.get_text().strip(): t.get_position()[0] for t in ax.texts}
    assert xs == {"100": 180, "50": 70}
    assert ax.get_xlim()[1] > 180


def test_panel_legends_are_legible():
    # panels drawn 1280-1920 px wide and shown at the page's 930: 'x-small' legends came out
    # about 7 px high; one shared legend below the panels at 'medium' size
    n = [10, 20, 50]
    rows = [{"scenario": f"{c}, {m}", "n_topics": k, "kendall_tau_mean": (0.5 if m == "A" else 0.4) + k / 200}
            for c in ("c1", "c2", "c3") for m in ("A", "B") for k in n]
    fig = figures.plot_panels(pd.DataFrame(rows), figures.plot_kendall_tau,
                              {f"{c}, {m}": c for c in ("c1", "c2", "c3") for m in ("A", "B")})
    assert all(ax.get_legend() is None for ax in fig.axes)
    (leg,) = fig.legends
    assert [t.get_text() for t in leg.get_texts()] == ["A", "B"]
    from matplotlib.font_manager import FontProperties

    size = leg.get_texts()[0].get_fontsize()
    shown = size / 72 * 100 * min(1.0, 930 / (fig.get_size_inches()[0] * 100))   # px at 100 dpi, scaled
    assert size >= FontProperties(size="medium").get_size_in_points() and shown >= 9
    assert np.isclose(fig.get_size_inches()[0], 2 * 5.2)      # two columns of narrower panels


def test_answer_word_count_helper_matches():
    # scripts/report_layout.py counts the rendered answer as the tests count the headline
    import importlib.util

    spec = importlib.util.spec_from_file_location("report_layout", Path(ROOT / "scripts" / "report_layout.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules["report_layout"] = mod
    spec.loader.exec_module(mod)
    text = "Plan for **163 topics**: 97 to 163 - power >= 0.8."
    assert mod.answer_words(text) == _words(text) == 11


def test_cli_study_prints_the_headline_on_its_own_line(small_scores, tmp_path, capsys):
    """``planner study`` printed the headline and the details as one paragraph (issue 25): the
    first line is now the headline alone, at most 40 words, with the count to plan with."""
    from planner.cli import main

    cfg = tmp_path / "s.yaml"
    cfg.write_text(f"collection: {{scores: {small_scores}}}\nmethod: analytic\ntopics: [5, 10, 24]\nseed: 1\n"
                   "resamples: 20\ntargets:\n  - {target: swap_rate, value: 0.05}\n")
    assert main(["study", str(cfg), "-o", str(tmp_path / "out"), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    saved = json.loads((tmp_path / "out" / "results.json").read_text())["answer"]
    assert lines[0] == saved["headline"].replace("**", "") and _words(lines[0]) <= HEADLINE_WORDS
    assert str(saved["plan_n"]) in lines[0]


def test_headline_names_the_target_of_the_point_estimate_when_another_binds_the_plan():
    """DL 2019 passage (the quick start's data): power's point count is the largest, swap's upper end
    the largest; the headline's point estimate names power, so it is not read as swap's count."""
    doc = {"collection": {"dataset": "dl19-passage"}, "measure": "nDCG@10", "method": "deconvolved",
           "topics": [43, 100, 200], "seed": 20190, "resamples": 200,
           "targets": [{"target": "swap_rate", "value": 0.05}, {"target": "power", "value": 0.8}]}
    res = run_study(doc, quiet=True, write=False)
    s = res.scenario_results[0]
    swap, power = s.targets
    assert power.n_topics > swap.n_topics and swap.interval.high > power.interval.high
    ans = res.answer_result
    assert ans.plan_n == swap.interval.high and ans.n_topics == power.n_topics
    assert f"the point estimate is {power.n_topics} (power >= 0.8)" in ans.headline
    assert _words(ans.headline) <= HEADLINE_WORDS

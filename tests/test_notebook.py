"""Notebook views: a short repr, an escaped ``_repr_html_`` holding the key numbers, and
``to_frame()`` on the score matrix, variance components, curves, size and target results and
studies (real DL 2019 nDCG@10 scores)."""

from __future__ import annotations

import html
import re

import numpy as np
import pandas as pd
import pytest

import planner

NUMPY_REPR = re.compile(r"np\.\w+\(")


@pytest.fixture(scope="module")
def scores(small_scores):
    return planner.load_scores(small_scores, measure="nDCG@10")


@pytest.fixture(scope="module")
def study(small_scores):
    cfg = {"name": "notebook", "seed": 3, "resamples": 40, "collection": {"scores": str(small_scores)},
           "measure": "nDCG@10", "method": "analytic", "topics": [10, 20, 40],
           "targets": [{"target": "swap_rate", "value": 0.1}]}
    return planner.run_study(cfg, write=False, quiet=True)


def g4(x) -> str:
    """A number as the views print it."""
    return f"{float(x):.4g}"


def check_view(obj, *numbers: str, longest: int = 160) -> str:
    """The repr is one short line without numpy reprs; the HTML holds ``numbers``; returns the HTML."""
    text = repr(obj)
    assert "\n" not in text and len(text) <= longest, text
    assert not NUMPY_REPR.search(text), text
    page = obj._repr_html_()
    assert page.startswith("<div>") and page.endswith("</div>")
    assert not NUMPY_REPR.search(page)
    for n in numbers:
        assert n in page, (n, page[:400])
    return page


def test_score_matrix(scores):
    page = check_view(scores, "8 systems x 24 topics")
    means = scores.system_means()
    best = int(np.argmax(means))
    assert scores.systems[best] in page and g4(means[best]) in page
    # best system first
    assert page.index(scores.systems[best]) < min(page.index(s) for s in scores.systems if s != scores.systems[best])
    assert scores.to_frame().shape == (24, 8)


def test_variance_components(scores):
    fit = planner.fit(scores)
    check_view(fit, g4(fit.var_s), g4(fit.var_t), g4(fit.var_e), "residual")
    frame = fit.to_frame()
    assert frame.set_index("component").loc["system", "variance"] == pytest.approx(fit.var_s)


def test_curve(scores):
    curve = planner.predict(scores, topics=np.array([10, 20]), method="analytic", rng=1)
    frame = curve.to_frame()
    assert frame["n_topics"].tolist() == [10, 20]
    swap = frame["swap_rate_mean"].to_numpy()
    assert 0 < swap[1] < swap[0] < 0.5
    page = check_view(curve, g4(swap[0]), g4(swap[1]))
    assert "topics=(10, 20)" in repr(curve)    # numpy integers shown as plain numbers
    assert "swap_rate_mean" in page


def test_size_and_target(scores):
    size = planner.topic_set_size(scores=scores, min_diff=0.05, power=0.8, n_resamples=20)
    check_view(size, str(size.n_topics), g4(size.power), str(size.interval.low), str(size.interval.high))
    assert size.to_frame().loc[0, "n_topics"] == size.n_topics
    target = planner.size_for_target(scores, target="ci_width", value=0.1, method="analytic",
                                     n_resamples=20, rng=1)
    check_view(target, str(target.n_topics), str(target.interval.low), str(target.interval.high), "ci_width")
    row = target.to_frame().loc[0]
    assert (row["n_topics"], row["interval_high"]) == (target.n_topics, target.interval.high)


def test_study_and_scenarios(study):
    n = study.answer_result.n_topics
    assert n is not None and n > 0
    assert f"n_topics={n}" in repr(study)
    words = html.escape(study.answer_result.text.replace("**", ""))
    page = check_view(study, str(n), words[:60])  # the answer in words, its Markdown emphasis dropped
    assert "**" not in page
    frame = study.to_frame()
    assert frame.loc[0, "n_topics"] == n and isinstance(frame, pd.DataFrame)
    (scenario,) = study.scenario_results
    check_view(scenario, str(n), "swap_rate")   # its repr used to dump every field (np.float64(...))
    assert scenario.to_frame().loc[0, "n_topics"] == n


def test_html_is_escaped(scores):
    odd = planner.ScoreMatrix.build(scores.values, ["<b>run&1</b>"] + list(scores.systems[1:]), scores.topics,
                                    measure="<i>nDCG</i>")
    page = odd._repr_html_()
    assert "&lt;b&gt;run&amp;1&lt;/b&gt;" in page and "<b>" not in page and "<i>" not in page
    curve = planner.predict(odd, topics=[10], method="analytic", rng=1)
    page = curve._repr_html_()
    assert "&lt;i&gt;nDCG&lt;/i&gt;" in page and "<i>" not in page

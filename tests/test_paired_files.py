"""Measures of the same runs given as one file each are compared pair by pair (issue 25: four
files of the same runs got no paired comparison)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from planner.study import run_study
from planner.study.paired import paired_measures

WEB = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-web"

pytestmark = pytest.mark.skipif(not WEB.exists(), reason="shared data not available")


def _study(files: dict[str, str]):
    doc = {"collection": [{"scores": str(WEB / f), "label": label} for label, f in files.items()],
           "method": "analytic", "resamples": 30, "seed": 3, "topics": [10, 48],
           "targets": [{"target": "swap_rate", "value": 0.05}]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return run_study(doc, quiet=True, write=False)


def test_one_file_per_measure_gets_the_paired_comparison():
    res = _study({"AP": "web2010_ap.csv", "P@10": "web2010_p10.csv", "ERR@20": "web2010_err20.csv"})
    rows = paired_measures(list(res.scenario_results))
    assert len(res.results["paired"]) == len(rows)       # what results.json and the report show
    assert len(rows) == 3                  # every two of the three files: same runs, same topics
    need = {s.settings["collection"]["label"]: s.targets[0].n_topics for s in res.scenario_results}
    for r in rows:
        assert {r.measure_fewer, r.measure_more} <= set(need)
        assert (r.n_fewer, r.n_more) == (need[r.measure_fewer], need[r.measure_more])
        assert r.n_fewer <= r.n_more and r.extra == r.n_more - r.n_fewer


def test_files_of_other_runs_are_not_paired():
    # TREC 2010 and 2011 Web: other runs (and other topics): no comparison
    res = _study({"2010 AP": "web2010_ap.csv", "2011 AP": "web2011_ap.csv"})
    assert paired_measures(list(res.scenario_results)) == []

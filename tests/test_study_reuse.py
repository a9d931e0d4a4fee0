"""Pool reusability beside the sampling error in a study's honest statement (runs + qrels)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from planner import score_runs
from planner.collection import read_qrels, read_runs
from planner.plan.reusability import leave_group_out
from planner.study import run_study
from planner.study.reuse import half_width_at


@pytest.fixture(scope="module")
def dl19(shared_data):
    return shared_data / "trec-dl2019-passage"


def _doc(dl19, **over):
    return {"collection": {"runs": str(dl19 / "runs"), "qrels": str(dl19 / "qrels.txt")}, "method": "analytic",
            "topics": [10, 43], "resamples": 30, "targets": [{"target": "swap_rate", "value": 0.05}], **over}


@pytest.mark.slow
def test_honest_statement_sets_the_bias_beside_the_sampling_error(dl19):
    res = run_study(_doc(dl19), quiet=True, write=False)
    api = leave_group_out(dl19 / "runs", dl19 / "qrels.txt", measure="nDCG@10")
    got = res.results["reuse"]
    assert got["kendall_tau"] == pytest.approx(api.kendall_tau, abs=1e-12)
    assert got["largest_drop"] == pytest.approx(api.largest_drop, abs=1e-12)
    assert got["largest_drop_run"] == api.largest_drop_run == "ICT-CKNRM_B50"
    assert res.tables["reuse"]["left_out"].tolist() == pytest.approx(api.runs["left_out"].tolist(), abs=1e-12)
    # the sampling error at n topics, computed here from the scores themselves
    m = score_runs(read_runs(dl19 / "runs"), read_qrels(dl19 / "qrels.txt"), ["nDCG@10"])["nDCG@10"]
    sd = m.topic_scores().std(axis=1, ddof=1)
    n = res.answer["n_topics"]
    direct = float(np.median(stats.t.ppf(0.975, n - 1) * sd / np.sqrt(n)))
    assert half_width_at(api, n) == pytest.approx(direct, rel=1e-9)
    assert half_width_at(api, api.n_topics) == pytest.approx(float(api.runs["ci_half_width"].median()), rel=1e-9)
    para = next(p for p in res.results["honest"]["paragraphs"] if p.startswith("**Pool reusability"))
    assert f"the largest drop is {api.largest_drop:.3f} (ICT-CKNRM_B50)" in para
    assert f"{direct:.3f} at the {n} topics the answer chooses" in para
    assert api.largest_drop > direct and f"larger than the sampling error at {n} topics" in para
    # right after the first scenario's pool-bias paragraph
    paras = res.results["honest"]["paragraphs"]
    assert paras[paras.index(para) - 1].startswith("**Pool bias.**")


@pytest.mark.slow
def test_selection_groups_are_the_teams(dl19, tmp_path):
    names = sorted(p.name.split(".")[0] for p in (dl19 / "runs").iterdir())
    teams = {n: ("odd" if i % 2 else "even") for i, n in enumerate(names)}
    res = run_study(_doc(dl19, selection={"groups": teams, "n_dev": 10, "resamples": 20}), quiet=True, write=False)
    api = leave_group_out(dl19 / "runs", dl19 / "qrels.txt", measure="nDCG@10", groups=teams)
    assert res.results["reuse"]["n_groups"] == 2
    assert res.results["reuse"]["kendall_tau"] == pytest.approx(api.kendall_tau, abs=1e-12)


def test_no_reuse_without_runs():
    res = run_study({"collection": {"dataset": "dl19-passage"}, "method": "analytic", "topics": [10],
                     "resamples": 20, "targets": [{"target": "erho2", "value": 0.9}]}, quiet=True, write=False)
    assert "reuse" not in res.results and "reuse" not in res.tables
    assert not any(p.startswith("**Pool reusability") for p in res.results["honest"]["paragraphs"])

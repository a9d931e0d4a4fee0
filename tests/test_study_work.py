"""A whole study's work estimated before its first scenario (issue 23): over the work limit
(planner.simulate.work.max_work) it is refused in one line naming the key that would bring it
under, before any output folder exists; a long one says its estimate on standard error."""

from __future__ import annotations

import json
import math
import re

import pytest

from planner.cli import main
from planner.simulate import work
from planner.study import estimate
from planner.study.config import load_config
from planner.study.estimate import DataShape, scenario_work, study_work

#: a grid of 12 scenarios (6 values of min_diff x 2 methods) on the embedded DL 2019 runs
GRID = {"collection": {"dataset": "dl19-passage"}, "measure": "nDCG@10", "method": ["analytic", "bootstrap"],
        "min_diff": [0.01, 0.02, 0.03, 0.04, 0.05, 0.06], "topics": [10, 50], "resamples": 100, "seed": 1,
        "targets": [{"target": "swap_rate", "value": 0.05}]}


def _study(tmp_path, doc) -> str:
    f = tmp_path / "s.yaml"
    f.write_text(json.dumps(doc))
    return str(f)


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_the_study_estimate_adds_up_its_scenarios():
    cfg = load_config(GRID)
    w = study_work(cfg)
    # every scenario read the same data: 37 systems x 43 topics
    d = DataShape(37, 43)
    per = [scenario_work(sc, d, 100) for sc in cfg.scenarios]
    assert w.per_scenario == tuple(per) and w.units == pytest.approx(sum(per))
    # the bootstrap's curve grows with the resamples; of the analytic scenario's work only the
    # honest statement's paired bootstrap does
    boot = next(sc for sc in cfg.scenarios if sc["method"] == "bootstrap")
    ana = next(sc for sc in cfg.scenarios if sc["method"] == "analytic")
    assert scenario_work(boot, d, 1000) > 5 * scenario_work(boot, d, 100)
    assert scenario_work(ana, d, 100) < scenario_work(ana, d, 1000) < 1.1 * scenario_work(ana, d, 100)


def test_a_study_over_the_work_limit_is_refused_naming_the_grid(tmp_path, monkeypatch, capsys):
    units = study_work(load_config(GRID)).units
    # a limit that holds 5 of the 12 scenarios (on average): the grid is named, with what fits
    limit = units * 5.5 / 12
    monkeypatch.setenv("PLANNER_MAX_WORK", repr(limit))
    out = tmp_path / "out"
    assert main(["study", _study(tmp_path, GRID), "-o", str(out), "--quiet"]) == 2
    line = _one_line(capsys)
    assert re.search(r"s\.yaml: scenarios: the study at up to 50 topics with 12 scenarios and resamples: 100 "
                     r"\(2 topic counts\) needs about [0-9.e+]+ units of work", line), line
    assert f"{units:.1e} units" in line and f"over MAX_WORK {limit:.0e}" in line, line
    assert "use at most 5 scenarios (fewer values in the grid)" in line, line
    assert f"PLANNER_MAX_WORK={units * 1.05:.1e} to run it as it is" in line, line
    assert not out.exists()
    # asked for: the same study runs
    monkeypatch.setenv("PLANNER_MAX_WORK", repr(units * 1.05))
    assert main(["study", _study(tmp_path, GRID), "-o", str(out), "--quiet"]) == 0
    assert (out / "results.json").exists()


def test_one_scenario_over_the_limit_names_its_resamples(tmp_path, monkeypatch, capsys):
    doc = {**GRID, "method": "bootstrap", "min_diff": 0.05, "resamples": 2000}
    cfg = load_config(doc)
    monkeypatch.setattr(work, "MAX_WORK", study_work(cfg, resamples=500).units * 1.001)
    assert main(["study", _study(tmp_path, doc), "-o", str(tmp_path / "out"), "--quiet"]) == 2
    line = _one_line(capsys)
    assert ": resamples: the study at up to 50 topics with resamples: 2,000" in line, line
    # the most resamples that fit: 500 (the work grows with them)
    assert "use resamples: 500," in line, line
    assert not (tmp_path / "out").exists()


def test_a_long_study_says_its_estimate_unless_quiet(tmp_path, monkeypatch, capsys):
    doc = {**GRID, "method": "analytic", "min_diff": 0.05}
    monkeypatch.setattr(estimate, "LONG_SECONDS", 0.0)
    assert main(["study", _study(tmp_path, doc), "-o", str(tmp_path / "a")]) == 0
    err = capsys.readouterr().err
    secs = study_work(load_config(doc)).seconds
    assert f"study s: about {secs:,.0f} s of CPU estimated (1 scenarios)" in err, err
    assert main(["study", _study(tmp_path, doc), "-o", str(tmp_path / "b"), "--quiet"]) == 0
    assert "estimated" not in capsys.readouterr().err
    # minutes once it is long: 1.5 minutes and more
    assert estimate.StudyWork(120e9 / work.UNIT_NS, (None,)).describe() == "about 2 min of CPU"
    assert math.isclose(estimate.StudyWork(1e9, (1e9,)).seconds, 16.0)


def test_the_pool_study_is_counted(tmp_path):
    # dl19-budget was estimated at 0.05 of its CPU: its pool study (the runs re-scored at each
    # depth) was not counted. 3 runs x 4 topics; run c ranks 7 documents on topic 4, the rest 30
    from planner.plan.pool import depth_study_work

    runs = tmp_path / "runs"
    runs.mkdir()
    for name in "abc":
        (runs / f"{name}.run").write_text("".join(
            f"{q} Q0 d{(i * 7 + ord(name)) % 40} {i + 1} {100 - i} {name}\n"
            for q in range(1, 5) for i in range(7 if (name, q) == ("c", 4) else 30)))
    (tmp_path / "qrels.txt").write_text("".join(f"{q} 0 d{d} {d % 3 == 0:d}\n" for q in range(1, 5)
                                                for d in range(40)))
    doc = {"collection": {"runs": str(runs), "qrels": str(tmp_path / "qrels.txt")}, "measure": "nDCG@10",
           "method": "analytic", "topics": [2, 4], "resamples": 10,
           "targets": [{"target": "swap_rate", "value": 0.05}, {"target": "erho2", "value": 0.9}]}
    pooled = study_work(load_config({**doc, "pool": {"depths": [10, 5]}})).units
    plain = study_work(load_config(doc)).units
    # depth 5: 12 (run, topic) x 5; depth 10: 11 x 10 + 7; the full judgments: one more scoring
    assert pooled - plain == pytest.approx(depth_study_work([60, 117, 0], 337, 3, 4, 2, 0).units)

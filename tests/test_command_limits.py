"""Whole commands bounded before their work (issue 23): pool statistics and the pool depth study
over many depths, and statsmodels' REML, refused over the work limits (planner.simulate.work) in
one line naming the option and what fits."""

from __future__ import annotations

import numpy as np
import pytest

import planner
from planner.cli import main
from planner.errors import ParameterError
from planner.scores import ScoreMatrix


def _runs(tmp_path, R: int = 4, T: int = 3, L: int = 8):
    """A folder of ``R`` seeded runs of ``L`` documents a topic, and qrels judging every other document."""
    rng = np.random.default_rng(1)
    runs = tmp_path / "runs"
    runs.mkdir()
    for i in range(R):
        (runs / f"r{i}.txt").write_text("".join(f"{t} Q0 d{d} {j + 1} {L - j} r{i}\n" for t in range(T)
                                                for j, d in enumerate(rng.permutation(2 * L)[:L])))
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{t} 0 d{d} {d % 3 == 0:d}\n" for t in range(T) for d in range(0, 2 * L, 2)))
    return str(runs), str(qrels)


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_pool_with_many_depths_is_refused_before_the_first(tmp_path, monkeypatch, capsys):
    # `pool --depth 1,...,1000` on the DL 2019 runs ran over 77 s of CPU: each depth costs at least
    # 1.6e6 units (25 ms), so 8 depths are over 1e7 units and the first 6 fit
    runs, qrels = _runs(tmp_path)
    argv = ["pool", "--runs", runs, "--qrels", qrels, "--depth", "1,2,3,4,5,6,7,8", "--quiet"]
    assert main(argv) == 0
    capsys.readouterr()
    monkeypatch.setenv("PLANNER_MAX_WORK", "1e7")
    assert main(argv) == 2
    line = _one_line(capsys)
    assert "--depth" in line and "over MAX_WORK" in line and "first 6 of these depths (up to 6)" in line, line
    assert main([*argv[:6], "1,2,3,4,5,6", "--quiet"]) == 0
    with pytest.raises(ParameterError) as e:
        planner.pool_stats(runs, qrels, depths=range(1, 9))
    assert e.value.parameter == "depths"


def test_budget_with_many_depths_is_refused_before_the_first(tmp_path, monkeypatch, capsys):
    runs, qrels = _runs(tmp_path)
    argv = ["budget", "--runs", runs, "--qrels", qrels, "--depths", "2,4,6,8", "--target", "ci_width:0.5",
            "--method", "analytic", "--resamples", "0", "--quiet"]
    assert main(argv) == 0
    capsys.readouterr()
    monkeypatch.setenv("PLANNER_MAX_WORK", "5e6")      # 2e6 units a depth and more: two fit
    assert main(argv) == 2
    line = _one_line(capsys)
    assert line.startswith("planner budget: error: --depths: "), line
    assert "over MAX_WORK" in line and "first 2 of these depths (up to 4)" in line, line


def test_budget_growth_curve_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    # `budget --project-runs` fits a growth curve at every depth (a runs x documents matrix each):
    # 2,000 runs of 100 lines (8 MB) took 18 s and 720 MB, unestimated, after the depth study.
    # Its work: 1.5e5 units a run + 85 a document (608,160 here), and 120 a document within each
    # depth (24, 48, 72, 96) + 8 a distinct one (at most as many): the first 2 depths fit 6.2e5
    runs, qrels = _runs(tmp_path)
    argv = ["budget", "--runs", runs, "--qrels", qrels, "--depths", "2,4,6,8", "--target", "ci_width:0.5",
            "--method", "analytic", "--resamples", "0", "--quiet", "--seed", "1", "--project-runs", "10"]
    assert main(argv) == 0
    capsys.readouterr()
    monkeypatch.setenv("PLANNER_MAX_WORK", "6.2e5")
    assert main(argv) == 2
    line = _one_line(capsys)
    assert line.startswith("planner budget: error: --depths: the growth curve of 4 runs at 4 depths (up to 8) "), line
    assert "over MAX_WORK" in line and "use the first 2 of these depths (up to 4), or fewer depths, or fewer runs" \
        in line, line
    # checked before the depth study (over the same limit, and checked once its full scoring is done)
    assert main(argv[:-4]) == 2
    assert "the pool depth study of 4 runs" in _one_line(capsys)
    with pytest.raises(ParameterError) as e:
        planner.judgment_growth(runs, qrels, depths=[2, 4, 6, 8], rng=1)
    assert e.value.parameter == "depths"
    planner.judgment_growth(runs, qrels, depths=[2, 4], rng=1)


def test_statsmodels_reml_is_refused_over_the_work_limit_naming_the_engine(tmp_path, monkeypatch, capsys):
    # 1,000 systems x 30 topics with missing cells (190 KB) ran for minutes in statsmodels' MixedLM;
    # its work is estimated from the shape (12.5 n (S + T)^2 units) before statsmodels is imported
    rng = np.random.default_rng(1)
    x = rng.random((10, 8)).round(3)
    x[2, 3] = np.nan
    f = tmp_path / "m.csv"
    ScoreMatrix.build(x, [f"s{i}" for i in range(10)], [f"t{j}" for j in range(8)], warn=False,
                      missing="keep").to_csv(f)
    argv = ["fit", "--scores", str(f), "--method", "reml", "--missing", "keep", "--reml-engine", "statsmodels"]
    monkeypatch.setenv("PLANNER_MAX_WORK", "1e5")      # 12.5 x 79 x 18^2 = 3.2e5 units
    assert main(argv) == 2
    line = _one_line(capsys)
    assert line.startswith("planner fit: error: --reml-engine: ") and "'direct'" in line, line
    assert main([*argv[:-1], "direct"]) == 0

"""Progress bars (planner.progress): drawn on request from Python, on a terminal from the
command line (``--quiet`` silences them), advancing inside a study's scenarios, and never
changing a number."""

from __future__ import annotations

import io
import json
import sys

import numpy as np
import pytest

import planner
from planner.cli import main
from planner.errors import ParameterError
from planner.progress import Share, bar, part


class FakeTerminal(io.StringIO):
    """A standard error that says it is a terminal (tqdm draws only there)."""

    def isatty(self) -> bool:
        return True


@pytest.fixture(scope="module")
def dl19():
    return planner.datasets.load("dl19-passage", measure="nDCG@10")


def _without_provenance(text: str) -> dict:
    out = json.loads(text)
    out.pop("provenance", None)
    return out


def test_predict_bar_on_request_changes_no_number(dl19, capsys):
    kw = dict(topics=[10, 20, 40], method="bootstrap", n_resamples=300, rng=5)
    quiet = planner.predict(dl19, **kw)
    assert capsys.readouterr().err == ""                    # off by default
    shown = planner.predict(dl19, progress=True, **kw)
    err = capsys.readouterr().err
    assert "predict (bootstrap)" in err and "chunk" in err
    assert json.dumps(shown.to_dict(), sort_keys=True) == json.dumps(quiet.to_dict(), sort_keys=True)


def test_target_interval_bar_counts_the_resamples(dl19):
    seen = []
    res = planner.plan.size_for_target(dl19, target="swap_rate", value=0.05, n_resamples=60, rng=2,
                                       progress=Share(seen.append, 1.0))
    ref = planner.plan.size_for_target(dl19, target="swap_rate", value=0.05, n_resamples=60, rng=2)
    # every resample drawn, then re-solved: the slice is filled, in more than one step
    assert len(seen) > 60 and sum(seen) == pytest.approx(1.0)
    assert res.to_dict() == ref.to_dict()
    assert list(res.resampled_n) == list(ref.resampled_n)


def test_validate_bar_counts_the_repeats(dl19):
    seen = []
    kw = dict(pilot=20, topics=[5, 10], repeats=4, subsets=40, rng=3)
    v = planner.validate(dl19, progress=Share(seen.append, 1.0), **kw)
    assert seen == [0.25] * 4
    assert v.to_dict()["rows"] == planner.validate(dl19, **kw).to_dict()["rows"]


def test_study_bar_advances_inside_each_scenario(small_scores):
    from planner.study import run_study

    doc = {"collection": {"scores": str(small_scores)}, "method": "bootstrap", "measure": "nDCG@10",
           "topics": [10, 20], "resamples": 100, "seed": 4,
           "targets": [{"target": "swap_rate", "value": 0.05}, {"target": "kendall_tau", "value": 0.9}]}
    seen: list[float] = []
    shown = run_study(doc, write=False, progress=Share(seen.append, 1.0))
    quiet = run_study(doc, write=False, quiet=True)
    n = len(shown.scenario_results)
    # one scenario here: the bar moves several times before it ends (curve chunks, each target)
    assert n == 1 and len(seen) >= 4 and max(seen) < 1.0
    assert sum(seen) == pytest.approx(1.0)
    assert json.dumps(shown.results, sort_keys=True, default=str) == json.dumps(quiet.results, sort_keys=True,
                                                                                 default=str)


def test_cli_bar_only_on_a_terminal_and_quiet_silences_it(monkeypatch, capsys):
    argv = ["predict", "dl19-passage", "--topics", "10,20", "--method", "bootstrap", "--resamples", "200",
            "--seed", "1", "--json"]
    assert main(argv) == 0                                  # captured stderr: not a terminal
    plain = capsys.readouterr()
    assert plain.err == ""
    tty = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(argv) == 0
    drawn = capsys.readouterr().out
    assert "predict (bootstrap)" in tty.getvalue()
    assert _without_provenance(drawn) == _without_provenance(plain.out)
    quiet = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    assert main([*argv, "--quiet"]) == 0
    assert quiet.getvalue() == ""
    assert _without_provenance(capsys.readouterr().out) == _without_provenance(plain.out)


def test_cli_size_target_draws_the_interval_bar(monkeypatch, capsys):
    tty = FakeTerminal()
    monkeypatch.setattr(sys, "stderr", tty)
    assert main(["size", "dl19-passage", "--target", "swap_rate:0.05", "--resamples", "40", "--seed", "1"]) == 0
    assert "interval on n" in tty.getvalue()
    assert "topics        129" in capsys.readouterr().out


def test_every_command_takes_quiet():
    from planner.cli import COMMANDS, build_parser

    parser = build_parser()
    for command in COMMANDS:
        sub = parser._subparsers._group_actions[0].choices[command.NAME]   # type: ignore[union-attr]
        assert "--quiet" in sub._option_string_actions, command.NAME


def test_bad_progress_is_named():
    with pytest.raises(ParameterError, match="progress: expected True, False, 'auto'"), bar("loud", 3, "x"):
        pass


def test_share_never_overfills():
    seen: list[float] = []
    whole = Share(seen.append, 1.0)
    half = part(whole, 0.5)
    with bar(half, 2, "x") as tick:
        tick(1)
        tick(5)          # more than was announced: clipped to the slice
    half.rest()
    assert seen == [0.25, 0.25] and whole.done == 0.5


def test_pool_depth_study_bar_counts_each_scoring():
    from planner.plan import pool_depth_study

    runs = {n: "".join(f"{q} Q0 d{(i * k + q) % 9} {i} {9 - i} {n}\n" for q in (1, 2, 3) for i in range(6))
            for n, k in (("a", 1), ("b", 2), ("c", 4))}
    qrels = "".join(f"{q} 0 d{d} {int(d % 2 == 0)}\n" for q in (1, 2, 3) for d in range(9))
    kw = dict(depths=[2, 4, 6], measure="P@5", target="ci_width", value=0.5, method="analytic")
    seen: list[float] = []
    shown = pool_depth_study(runs, qrels, progress=Share(seen.append, 1.0), **kw)
    assert seen == pytest.approx([0.25] * 4)        # the full judgments, then each depth
    assert shown.to_dict() == pool_depth_study(runs, qrels, **kw).to_dict()


def test_scoring_runs_shows_a_bar_and_changes_no_number(capsys):
    """Reading and scoring a run folder (8-15 s on DL 2020) had no bar (issue 25)."""
    from pathlib import Path

    runs = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-dl2019-passage"
    if not runs.exists():
        pytest.skip("shared data not available")
    kw = dict(select_runs=["bm25base_p", "idst_bert_p1"])
    quiet = planner.score_runs(runs / "runs", runs / "qrels.txt", "nDCG@10", **kw)["nDCG@10"]
    assert capsys.readouterr().err == ""
    shown = planner.score_runs(runs / "runs", runs / "qrels.txt", "nDCG@10", progress=True, **kw)["nDCG@10"]
    assert "runs scored" in capsys.readouterr().err
    assert np.array_equal(shown.values, quiet.values) and shown.systems == quiet.systems
    planner.pool_stats(runs / "runs", runs / "qrels.txt", depths=[10], progress=True, **kw)
    assert "runs read" in capsys.readouterr().err

"""One command-line grammar: the score input as an argument on every command that reads one
(``--scores`` kept as its alias), repeated options honoured or refused (never the last kept
silently), several targets in one call, near-miss suggestions for measures, methods, choices
and options, and one orientation rule for frames and arrays."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import planner
from planner.cli import main
from planner.errors import ParameterError


def _json(capsys) -> dict:
    out = json.loads(capsys.readouterr().out)
    out.pop("provenance", None)
    return out


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err      # one line, no traceback
    return err


@pytest.mark.parametrize("argv", [
    ["fit", "{s}"],
    ["predict", "{s}", "--topics", "10,20", "--method", "analytic", "--seed", "1"],   # the prediction band draws
    ["validate", "{s}", "--pilot", "20", "--topics", "5", "--repeats", "2", "--subsets", "20", "--seed", "1"],
    ["select", "{s}", "--n-dev", "10", "--resamples", "50", "--seed", "1"],
    ["size", "{s}", "--design", "paired-t", "--min-diff", "0.1"],
    ["size", "{s}", "--target", "erho2:0.9"],
    ["scores", "{s}"],
])
def test_scores_as_argument_and_as_option_are_the_same(argv, capsys):
    as_arg = [a.format(s="dl19-passage") for a in argv]
    i = as_arg.index("dl19-passage")
    as_opt = as_arg[:i] + ["--scores", "dl19-passage"] + as_arg[i + 1:]
    assert main([*as_arg, "--json"]) == 0
    a = _json(capsys)
    assert main([*as_opt, "--json"]) == 0
    assert _json(capsys) == a


def test_scores_given_twice_or_not_at_all(capsys):
    assert main(["fit", "dl19-passage", "--scores", "dl20-passage"]) == 2
    assert "--scores: give the scores once" in _error(capsys)
    assert main(["predict", "--topics", "10"]) == 2
    assert "SCORES: give the scores to learn from" in _error(capsys)
    assert main(["size", "dl19-passage", "--sigma2", "0.02", "--design", "paired-t", "--min-diff", "0.1"]) == 2
    assert "not both" in _error(capsys)


def test_several_targets_are_each_solved_and_the_binding_one_named(capsys):
    common = ["size", "dl19-passage", "--method", "analytic", "--resamples", "50", "--json"]
    assert main([*common, "--seed", "3", "--target", "swap_rate:0.05", "--target", "power:0.9",
                 "--target", "erho2:0.95"]) == 0
    both = _json(capsys)
    singles = []
    for t in ("swap_rate:0.05", "power:0.9", "erho2:0.95"):
        seed = [] if t.startswith("erho2") else ["--seed", "3"]     # the D-study draws nothing
        assert main([*common, *seed, "--target", t]) == 0
        singles.append(_json(capsys))
    # each target's answer is the one it gets alone (same scores, same seed)
    assert both["targets"][:2] == singles[:2]
    assert {**both["targets"][2], "seed": None} == singles[2]
    plan = [s["interval"]["high"] for s in singles]
    assert both["binding"]["plan_n"] == max(plan)
    assert both["binding"]["target"] == singles[plan.index(max(plan))]["target"]


def test_several_targets_printed_with_the_count_to_plan_with_first(capsys):
    assert main(["size", "dl19-passage", "--method", "analytic", "--resamples", "50", "--seed", "3",
                 "--target", "swap_rate:0.05", "--target", "erho2:0.95"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("2 targets; the binding one")
    assert out.count("\ntarget ") == 2 and "(binding)" in out


def test_an_option_given_twice_is_refused(capsys):
    assert main(["predict", "dl19-passage", "--topics", "10", "--seed", "1", "--seed", "2"]) == 2
    assert "--seed: given more than once (--seed 1 and --seed 2)" in _error(capsys)
    assert main(["size", "dl19-passage", "--target", "swap_rate:0.05", "--target", "swap_rate:0.05"]) == 2
    assert "--target: swap_rate:0.05 given more than once" in _error(capsys)


def test_near_miss_suggestions(capsys):
    assert main(["fit", "dl19-passage", "--methd", "reml"]) == 2
    assert "unrecognized arguments: --methd reml (did you mean --method?)" in _error(capsys)
    assert main(["fit", "dl19-passage", "--method", "REML"]) == 2
    assert "invalid choice: 'REML' (did you mean 'reml'?)" in _error(capsys)
    assert main(["sise"]) == 2
    assert "(did you mean 'size'?)" in _error(capsys)
    assert main(["predict", "dl19-passage", "--topics", "10", "--method", "bootsrap"]) == 2
    assert "(did you mean 'bootstrap'?)" in _error(capsys)


def test_measure_suggestions():
    from planner.measures import parse_measures

    with pytest.raises(ParameterError, match=r"did you mean 'nDCG@10'\?"):
        parse_measures(["ndcg@10"])
    with pytest.raises(ParameterError, match=r"did you mean 'AP\(rel=2\)'\?"):
        parse_measures(["ap(rel=2)"])


def test_measure_suggestion_in_a_tidy_table(tmp_path, capsys):
    f = tmp_path / "tidy.csv"
    rows = [f"{s},{t},nDCG@10,{v}" for s, t, v in [("a", 1, .1), ("a", 2, .4), ("b", 1, .3), ("b", 2, .2)]]
    f.write_text("system,topic,measure,value\n" + "\n".join(rows) + "\n")
    assert main(["fit", str(f), "--measure", "ndcg@10"]) == 2
    assert "(did you mean 'nDCG@10'?)" in _error(capsys)


def test_measure_suggestion_for_runs_and_trec_eval(shared_data, capsys):
    dl = shared_data / "trec-dl2019-passage"
    assert main(["scores", "--runs", str(dl / "runs"), "--qrels", str(dl / "qrels.txt"),
                 "--measure", "ndcg@10"]) == 2
    assert "(did you mean 'nDCG@10'?)" in _error(capsys)
    assert main(["fit", str(shared_data / "clef-ehealth2016" / "trec_eval"), "--measure", "MAP"]) == 2
    assert "(did you mean 'map'?)" in _error(capsys)


def test_one_orientation_rule_for_frames_and_arrays(shared_data):
    # a wide CSV as pandas reads it: one row a topic, but nothing says so
    df = pd.read_csv(shared_data / "trec-web" / "web2011_ap.csv")
    x = df.to_numpy().T                                     # systems x topics
    want = planner.fit(x).var_s
    # before: fit(df) read rows as topics and fit(df.to_numpy()) rows as systems, silently
    with pytest.raises(ParameterError, match="does not say whether its rows are topics or systems: an "
                                             "array is systems x topics"):
        planner.fit(df)
    assert planner.fit(df.rename_axis("topic")).var_s == pytest.approx(want, rel=1e-12)
    assert planner.fit(df.T.rename_axis("system")).var_s == pytest.approx(want, rel=1e-12)
    topic_col = df.rename_axis("topic").reset_index()
    assert planner.fit(topic_col).var_s == pytest.approx(want, rel=1e-12)
    # the other reading differs: the rule is not a formality
    assert abs(planner.fit(df.to_numpy()).var_s - want) > 1e-4


def test_orientation_stated_for_a_bad_array():
    with pytest.raises(ParameterError, match="an array is systems x topics"):
        planner.fit(np.zeros(5))


def test_budget_takes_several_targets_and_needs_the_largest_count(capsys):
    # seeded: the binding target is the one whose interval reaches highest, and the intervals'
    # resamples would otherwise come from a drawn seed (swap's upper end can pass power's)
    common = ["budget", "--dataset", "dl19-passage", "--topic-cost", "20", "--method", "analytic", "--json",
              "--seed", "1"]
    needed = []
    for t in ("swap_rate:0.05", "power:0.9"):
        assert main([*common, "--target", t]) == 0
        needed.append([r["n_topics_needed"] for r in _json(capsys)["budget"]["rows"]])
    assert main([*common, "--target", "swap_rate:0.05", "--target", "power:0.9"]) == 0
    both = _json(capsys)
    assert both["targets"] == [["swap_rate", 0.05], ["power", 0.9]]
    assert [r["n_topics_needed"] for r in both["budget"]["rows"]] == [max(a, b) for a, b in zip(*needed)]
    assert needed[0] != needed[1]


def test_suggestions_for_shipped_measures_and_variance_selectors(capsys):
    assert main(["fit", "dl19-passage", "--measure", "ndgc@10"]) == 2
    assert "(did you mean 'nDCG@10'?)" in _error(capsys)
    assert main(["predict", "dl19-passage", "--topics", "10", "--variance", "pairs"]) == 2
    assert "(did you mean 'pair'?)" in _error(capsys)


@pytest.mark.parametrize("argv", [
    ["size", "--target", "swap_rate:0.05", "--resamples", "0"],
    ["size", "--design", "paired-t", "--min-diff", "0.05"],
    ["predict", "--topics", "10", "--seed", "1"],
    ["fit"],
    ["validate", "--pilot", "6", "--topics", "4", "--repeats", "2", "--seed", "1", "--methods", "analytic"],
    ["select", "--n-dev", "4", "--seed", "1"],
])
def test_every_score_reading_command_takes_the_missing_policy_its_error_names(tmp_path, capsys, argv):
    """A missing cell's error says `choose a missing-cell policy: --missing zero, ...`; size, predict,
    validate and select did not take --missing (a usage error), only fit and scores did. With
    drop-topic each reads the 15 complete topics (select named the unnamed measure 'None')."""
    rng = np.random.default_rng(3)
    x = np.round(rng.uniform(0, 1, (16, 6)), 3).astype(object)
    x[2, 1] = ""
    f = tmp_path / "w.csv"
    pd.DataFrame(x, columns=[f"s{i}" for i in range(6)], index=[f"t{i}" for i in range(16)]).rename_axis(
        "topic").to_csv(f)
    assert main([argv[0], str(f), *argv[1:], "--quiet"] if argv[0] != "fit" else ["fit", str(f)]) == 2
    assert "--missing zero" in capsys.readouterr().err
    cmd = [argv[0], str(f), *argv[1:], "--missing", "drop-topic"]
    assert main(cmd if argv[0] == "fit" else [*cmd, "--quiet"]) == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    if argv[1:2] != ["--design"]:     # (a design prints the variance it read, not the matrix)
        assert ("x 15 topics" if argv[0] != "select" else "w.csv: 1 groups of candidates, 15 topics") in out


def test_no_help_prints_a_doubled_percent_sign(capsys):
    """argparse %-formats an option's help but not a description: '95%%' in reuse's description
    printed as '95%%'."""
    from planner.cli.app import COMMANDS

    for command in COMMANDS:
        assert main([command.NAME, "--help"]) == 0
        text = capsys.readouterr().out
        assert "%%" not in text and "usage: planner " + command.NAME in text


def test_size_help_names_every_target_it_solves(capsys):
    # the command list called size "a classical design" and its description listed the targets by
    # hand; both now lead with --target, and the targets come from the registry with their direction
    from planner import methods

    assert main(["--help"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.strip().startswith("size "))
    assert "--target" in line
    assert main(["size", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for d in ("<=", ">="):
        names = methods.target_names(lambda t, d=d: t.solvable and t.direction == d)
        assert len(names) >= 3 and f"{d}: {', '.join(names)}" in text

"""A study's ``selection:`` section: the same numbers as planner.plan.selection on the same seed,
its report section and figure, and its bad inputs (one line, exit 2)."""

from __future__ import annotations

import json
import shlex

import numpy as np
import pandas as pd
import pytest

from planner import cli
from planner.datasets import load
from planner.errors import ConfigError
from planner.plan.selection import plan_split, selection_bias
from planner.study import load_config, run_study

BASE = {"collection": [{"dataset": "dl19-passage"}, {"dataset": "dl20-passage"}], "method": "analytic",
        "topics": [10, 50], "resamples": 50, "seed": 7, "targets": [{"target": "erho2", "value": 0.9}]}


def _study(selection, **over):
    return run_study({**BASE, **over, "selection": selection}, quiet=True, write=False)


def test_section_equals_the_api_on_the_same_seed():
    sel = {"n_dev": [5, 20], "k": [2, 3], "margin": 0.01, "resamples": 120}
    res = _study(sel)
    table = res.tables["selection"]
    assert list(dict.fromkeys(table["collection"])) == ["dl19-passage", "dl20-passage"]
    for name in ("dl19-passage", "dl20-passage"):
        api = selection_bias(load(name), "prefix", n_dev=[5, 20], k=[2, 3], margin=0.01, n_resamples=120, rng=7)
        mine = table[table["collection"] == name].drop(columns=["collection", "measure"]).reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, api.table.reset_index(drop=True))
    d = res.results["selection"][0]
    assert d["bias"]["seed"] == 7 and d["bias"]["n_resamples"] == 120 and d["plan"] is None
    assert "selection_split" not in res.tables
    # the best of 3 is picked right less often than the best of 2 (dl19, 5 dev topics)
    a = table[(table["group"] == "all") & (table["collection"] == "dl19-passage") & (table["n_dev"] == 5)]
    two, three = a[a["k"] == 2].iloc[0], a[a["k"] == 3].iloc[0]
    assert three["pick_accuracy"] < two["pick_accuracy"] - 2 * np.hypot(two["pick_accuracy_se"],
                                                                         three["pick_accuracy_se"])


def test_split_plan_equals_plan_split():
    sel = {"accuracy": 0.6, "width": 0.25, "margin": 0.02, "budget": 40, "resamples": 100}
    res = _study(sel, collection={"dataset": "dl19-passage"})
    api = plan_split(load("dl19-passage"), "prefix", accuracy=0.6, width=0.25, margin=0.02, budget=40,
                     n_resamples=100, rng=7)
    plan = res.results["selection"][0]["plan"]
    assert api.met and plan["met"]
    assert (plan["budget"], plan["n_dev"], plan["n_test"]) == (40, api.n_dev, api.n_test)
    assert plan["pick_accuracy"] == pytest.approx(api.pick_accuracy, abs=0)
    split = res.tables["selection_split"]
    assert (split["n_dev"] + split["n_test"] == 40).all() and len(split) == 40 - 3
    chosen = split[split["chosen"]]
    assert chosen[["n_dev", "n_test"]].values.tolist() == [[api.n_dev, api.n_test]]
    # the chosen split is the feasible one with the fewest dev topics
    ok = split[(split["pick_accuracy"] >= 0.6) & (split["width"] <= 0.25)]
    assert int(ok["n_dev"].min()) == api.n_dev


def test_resolved_defaults_and_group_file_relative_to_the_study(tmp_path):
    systems = load("dl19-passage").systems
    (tmp_path / "teams.csv").write_text("system,team\n" + "".join(f"{s},{'a' if i % 2 else 'b'}\n"
                                                                  for i, s in enumerate(systems)))
    f = tmp_path / "s.yaml"
    f.write_text("collection: {dataset: dl19-passage}\nresamples: 30\nselection: {groups: teams.csv:team}\n")
    cfg = load_config(f)
    assert cfg.selection["groups"] == f"{tmp_path / 'teams.csv'}:team"
    assert cfg.selection["resamples"] == 30 and cfg.selection["margin"] == 0.0 and cfg.selection["k"] is None
    assert cfg.raw["selection"] == cfg.selection
    assert "selection" not in load_config({"collection": {"dataset": "dl19-passage"}}).raw


@pytest.mark.parametrize("sel, key, words", [
    ({"budget": 30}, "selection.budget", "has no effect without a target"),
    ({"n_dev": 1}, "selection.n_dev", "expected an integer >= 2 or a list of them"),
    ({"accuracy": 1.5}, "selection.accuracy", "strictly between 0 and 1"),
    ({"nde": 5}, "selection.nde", "unknown key 'nde' (did you mean 'n_dev'?)"),
])
def test_bad_sections_name_the_key(sel, key, words):
    with pytest.raises(ConfigError) as ei:
        load_config({"collection": {"dataset": "dl19-passage"}, "selection": sel})
    assert ei.value.key == key and words in str(ei.value)


def test_bad_groups_fail_when_run_naming_the_key():
    systems = load("dl19-passage").systems
    lone = {s: ("solo" if s == systems[0] else "rest") for s in systems}
    with pytest.raises(ConfigError, match=r"^selection\.groups: dl19-passage: group 'solo' has one system"):
        _study({"groups": lone}, collection={"dataset": "dl19-passage"})
    with pytest.raises(ConfigError, match=r"^selection\.groups: dl19-passage: names unknown system 'nope'"):
        _study({"groups": {**dict.fromkeys(systems, "g"), "nope": "g"}}, collection={"dataset": "dl19-passage"})
    with pytest.raises(ConfigError, match=r"^selection\.n_dev: dl19-passage: n_dev 42 \+ n_test 1"):
        _study({"n_dev": 42}, collection={"dataset": "dl19-passage"})


def test_a_stack_alone_has_no_selection():
    stack = {"stack": [{"dataset": "dl19-passage"}, {"dataset": "dl20-passage"}]}
    with pytest.raises(ConfigError, match=r"^selection: needs a collection that is not a stack"):
        _study({"n_dev": 5}, collection=stack, targets=[{"target": "ci_width", "value": 0.1}])


def test_cli_study_bad_group_is_one_line_exit_2(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text("collection: {dataset: dl19-passage}\nmethod: analytic\ntopics: [10]\nresamples: 20\n"
                 "targets: [{target: erho2, value: 0.9}]\nselection: {groups: {test1: solo, nope: solo}}\n")
    assert cli.main(["study", str(f), "-o", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "selection.groups" in err[0] and "unknown system 'nope'" in err[0]


@pytest.mark.slow
def test_report_has_the_section_and_its_figure(tmp_path):
    res = run_study({**BASE, "collection": {"dataset": "dl20-passage"},
                     "selection": {"n_dev": [5, 10, 20], "accuracy": 0.7, "margin": 0.02, "resamples": 60}},
                    quiet=True, out=tmp_path / "r")
    out = tmp_path / "r"
    md = (out / "report.md").read_text()
    assert "## Selection on the test topics" in md and "figures/selection.png" in md
    assert (out / "figures" / "selection.png").stat().st_size > 1000
    plan = res.results["selection"][0]["plan"]
    assert f"split **{plan['budget']} topics** into {plan['n_dev']} dev + {plan['n_test']} test" in md
    csv = pd.read_csv(out / "tables" / "selection.csv")
    api = selection_bias(load("dl20-passage"), n_dev=[5, 10, 20], margin=0.02, n_resamples=60, rng=7).table
    assert np.allclose(csv["optimism"], api["optimism"], rtol=1e-9)
    assert json.loads((out / "results.json").read_text())["selection"][0]["bias"]["seed"] == 7


def test_cli_select_unknown_system_in_group_file_is_one_line(tmp_path, capsys):
    groups = tmp_path / "g.csv"
    groups.write_text("system,group\nnope,a\n" + "".join(f"{s},a\n" for s in load("dl19-passage").systems))
    assert cli.main(["select", "--scores", "dl19-passage", "--groups", str(groups)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0] == "planner select: error: --groups: names unknown system 'nope'"


def test_cli_select_budget_without_a_target_is_one_line(capsys):
    assert cli.main(["select", "--scores", "dl19-passage", "--budget", "30"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["planner select: error: --budget: has no effect without a target: give accuracy, width or both"]


@pytest.mark.slow
def test_help_examples_run(capsys):
    """Every example of ``planner select --help`` on an embedded data set runs (fewer resamples)."""
    assert cli.main(["select", "--help"]) == 0
    text = capsys.readouterr().out
    examples = [shlex.split(line.strip())[1:] for line in text.splitlines()
                if line.strip().startswith("planner select") and "scores.csv" not in line]
    assert len(examples) >= 3
    for argv in examples:
        assert cli.main([*argv, "--n-resamples", "50"]) == 0, argv
    out = capsys.readouterr().out
    assert "groups of candidates" in out and "dev +" in out

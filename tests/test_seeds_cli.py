"""``planner seeds`` on tidy files with a seed column: the numbers of planner.plan.seeds, and its
bad inputs (one line naming the file or option, exit 2).

Every score here is SIMULATED from stated components (no public per-topic scores of several
training seeds were found: docs/deep-learning.md).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from planner import cli
from planner.collection.tables import read_seed_table
from planner.errors import InputError
from planner.plan.seeds import SeedComponents, fit_seeds, seed_power, seed_topic_tradeoff

#: stated components of the simulated scores
COMP = SeedComponents(var_s=0.004, var_t=0.03, var_st=0.008, var_seed=0.0004, var_e=0.004, simulated=True)


def _tidy(S=4, R=3, T=40, seed=5) -> pd.DataFrame:
    """Simulated scores x[s,r,t] = a[s] + b[t] + ab[s,t] + c[r:s] + e[r:s,t] as tidy rows."""
    rng = np.random.default_rng(seed)
    c = COMP
    x = (rng.normal(0, np.sqrt(c.var_s), S)[:, None, None] + rng.normal(0, np.sqrt(c.var_t), T)[None, None, :]
         + rng.normal(0, np.sqrt(c.var_st), (S, T))[:, None, :] + rng.normal(0, np.sqrt(c.var_seed), (S, R))[:, :, None]
         + rng.normal(0, np.sqrt(c.var_e), (S, R, T)))
    return pd.DataFrame([{"system": f"recipe{s}", "seed": str(100 + r), "topic": f"q{t:03d}", "value": x[s, r, t]}
                         for s in range(S) for r in range(R) for t in range(T)])


@pytest.fixture
def seeds_csv(tmp_path):
    f = tmp_path / "seeds.csv"
    _tidy().to_csv(f, index=False)
    return f


def _json(capsys, argv):
    assert cli.main(["seeds", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_equals_the_api(seeds_csv, capsys):
    d = _json(capsys, ["--scores", str(seeds_csv), "--min-diff", "0.05", "--power", "0.8", "--topic-cost", "1",
                       "--seed-cost", "20", "--max-seeds", "6"])
    c = fit_seeds(_tidy())
    assert d["components"]["var_seed"] == pytest.approx(c.var_seed, rel=1e-12)
    assert (d["components"]["n_systems"], d["components"]["n_seeds"], d["components"]["n_topics"]) == (4, 3, 40)
    assert [p["n_seeds"] for p in d["power"]] == [1, 3]
    for p in d["power"]:
        api = seed_power(c, min_diff=0.05, n_topics=40, n_seeds=p["n_seeds"])
        assert p["power"] == pytest.approx(api.power, rel=1e-12)
        assert p["false_positive_rate"] == pytest.approx(api.false_positive_rate, rel=1e-12)
    # the seed component makes the one-seed paired t-test reject a zero difference too often
    assert d["power"][0]["false_positive_rate"] > 0.1 > 0.05
    trade = seed_topic_tradeoff(c, min_diff=0.05, power=0.8, topic_cost=1, seed_cost=20, max_seeds=6)
    assert trade.n_seeds is not None and trade.n_topics is not None
    assert (d["tradeoff"]["n_seeds"], d["tradeoff"]["n_topics"]) == (trade.n_seeds, trade.n_topics)
    assert [r["n_topics"] for r in d["tradeoff"]["table"]] == [
        None if np.isnan(v) else v for v in trade.table["n_topics"]]
    assert d["tradeoff"]["cost"] == trade.n_topics + 2 * 20 * trade.n_seeds
    assert d["tradeoff"]["at_max_seeds"] == (trade.n_seeds == 6) == trade.at_max_seeds


def test_cheapest_at_the_most_seeds_tried_says_so(seeds_csv, capsys):
    """Free seeds: the cheapest design is at --max-seeds, and more seeds may cost less still."""
    args = ["seeds", "--scores", str(seeds_csv), "--min-diff", "0.05", "--power", "0.8", "--max-seeds", "4"]
    assert cli.main([*args, "--seed-cost", "0"]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("cheapest: 4 seeds") and "raise --max-seeds" in last
    assert cli.main([*args, "--seed-cost", "1000"]) == 0
    assert "raise --max-seeds" not in capsys.readouterr().out


def test_text_output_and_chosen_topics_and_seeds(seeds_csv, capsys):
    assert cli.main(["seeds", "--scores", str(seeds_csv), "--min-diff", "0.03", "--topics", "100",
                     "--seeds", "1,2,5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("4 recipes x 3 seeds x 40 topics")
    assert "100 topics" in out
    d = _json(capsys, ["--scores", str(seeds_csv), "--min-diff", "0.03", "--topics", "100", "--seeds", "1,2,5"])
    fpr = [p["false_positive_rate"] for p in d["power"]]
    assert [p["n_seeds"] for p in d["power"]] == [1, 2, 5] and fpr[0] > fpr[1] > fpr[2] > 0.05


def test_measure_column_selects_rows(tmp_path, capsys):
    a, b = _tidy().assign(measure="nDCG@10"), _tidy(seed=9).assign(measure="AP")
    f = tmp_path / "two.csv"
    pd.concat([a, b]).to_csv(f, index=False)
    d = _json(capsys, ["--scores", str(f), "--measure", "AP", "--min-diff", "0.03"])
    assert d["components"]["var_e"] == pytest.approx(fit_seeds(_tidy(seed=9)).var_e, rel=1e-12)


def _bad(tmp_path, capsys, df_or_text, extra=()):
    f = tmp_path / "bad.csv"
    if isinstance(df_or_text, str):
        f.write_text(df_or_text)
    else:
        df_or_text.to_csv(f, index=False)
    code = cli.main(["seeds", "--scores", str(f), "--min-diff", "0.03", *extra])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    return err[0].replace(str(f), "FILE")


def test_bad_inputs_are_one_line_exit_2(tmp_path, capsys):
    df = _tidy(S=3, R=2, T=6)
    one = df[df["seed"] == "100"]
    assert _bad(tmp_path, capsys, one) == ("planner seeds: error: FILE: one seed per system: the seed component "
                                           "cannot be estimated (need 2 or more)")
    uneven = df[~((df["system"] == "recipe0") & (df["seed"] == "101"))]
    assert "different numbers of seeds" in _bad(tmp_path, capsys, uneven)
    assert "no 'seed' column" in _bad(tmp_path, capsys, df.drop(columns="seed"))
    rep = pd.concat([df, df.iloc[[4]]])
    assert _bad(tmp_path, capsys, rep).startswith(
        "planner seeds: error: FILE:38: repeated cell: system 'recipe0', seed '100', topic 'q004'")
    hole = df.drop(index=[3])
    assert "missing or non-finite scores" in _bad(tmp_path, capsys, hole)
    assert _bad(tmp_path, capsys, "system,seed,topic,value\na,1,t1,NA\n").startswith(
        "planner seeds: error: FILE:2: missing value for system 'a', seed '1', topic 't1'")
    assert _bad(tmp_path, capsys, df, ["--topics", "1"]).startswith("planner seeds: error: --topics:")
    assert _bad(tmp_path, capsys, df, ["--seeds", "0"]).startswith("planner seeds: error: --seeds:")
    assert _bad(tmp_path, capsys, df, ["--power", "1.5"]).startswith("planner seeds: error: --power:")


def test_read_seed_table_keeps_labels_as_text():
    df = read_seed_table("system,seed,topic,value\na,01,t1,0.5\na,1,t1,0.25\n")
    assert df["seed"].tolist() == ["01", "1"]
    with pytest.raises(InputError, match="line 2: empty seed cell"):
        read_seed_table("system,seed,topic,value\na,,t1,0.5\n")


def test_run_folder_with_one_run_per_seed(tmp_path, capsys):
    """``planner seeds --runs``: a folder with one run per training seed, named RECIPE.seedK, is
    scored and fitted with seeds nested in recipes; the components equal planner.fit_seeds on the
    tidy table built by hand from the same runs (six real DL 2019 runs standing in for two
    recipes' seeds: a check of the plumbing, not of real seed variance)."""
    import shutil
    from pathlib import Path

    from planner import score_runs
    from planner.cli import main

    dl = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec-dl2019-passage"
    if not dl.exists():
        pytest.skip("shared data not available")
    runs = tmp_path / "runs"
    runs.mkdir()
    names = {"A": ["bm25base_p", "bm25base_ax_p", "bm25base_prf_p"], "B": ["bm25tuned_p", "bm25tuned_ax_p",
                                                                           "bm25tuned_prf_p"]}
    for recipe, group in names.items():
        for k, run in enumerate(group, 1):
            shutil.copy(dl / "runs" / f"{run}.run.gz", runs / f"{recipe}.seed{k}.run.gz")
    qrels = str(dl / "qrels.txt")
    assert main(["seeds", "--runs", str(runs), "--qrels", qrels, "--min-diff", "0.05", "--json"]) == 0
    got = json.loads(capsys.readouterr().out)["components"]
    m = score_runs(dl / "runs", qrels, "nDCG@10", select_runs=[r for g in names.values() for r in g])["nDCG@10"]
    rows = [(recipe, str(k), t, float(v)) for recipe, group in names.items() for k, run in enumerate(group, 1)
            for t, v in zip(m.topics, m.values[m.systems.index(run)])]
    ref = fit_seeds(pd.DataFrame(rows, columns=["system", "seed", "topic", "value"]))
    for k in ("var_s", "var_t", "var_st", "var_seed", "var_e"):
        assert got[k] == pytest.approx(getattr(ref, k), rel=1e-12, abs=1e-15)
    assert (got["n_systems"], got["n_seeds"], got["n_topics"]) == (2, 3, 43)
    # a run whose name says no seed, and a pattern without the groups: one line naming the option
    shutil.copy(dl / "runs" / "bm25base_p.run.gz", runs / "loose.run.gz")
    assert main(["seeds", "--runs", str(runs), "--qrels", qrels, "--min-diff", "0.05"]) == 2
    assert "--seed-pattern" in capsys.readouterr().err
    assert main(["seeds", "--runs", str(runs), "--qrels", qrels, "--min-diff", "0.05", "--seed-pattern", "(.*)"]) == 2
    assert "named groups" in capsys.readouterr().err
    assert main(["seeds", "--runs", str(runs), "--min-diff", "0.05"]) == 2
    assert "--qrels" in capsys.readouterr().err

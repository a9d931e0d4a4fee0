"""Pool reusability (leave one team out) against a by-hand re-scoring with ir_measures."""

from __future__ import annotations

import gzip
import re
from collections import defaultdict

import ir_measures
import numpy as np
import pytest
from scipy import stats

from planner.errors import ParameterError
from planner.plan.reusability import leave_group_out

#: DL 2020 runs with less than 70% of their top 10 judged: not pooled (planner/datasets pool statistics)
DL20_UNPOOLED = {"DoRA_Large", "DoRA_Large_1k", "DoRA_Med", "DoRA_Small", "small_1k", "med_1k"}


def _team(name: str) -> str:
    """Run name up to the first - or _; without either, trailing digits dropped."""
    if "-" in name or "_" in name:
        return re.split(r"[-_]", name)[0]
    return name.rstrip("0123456789") or name


def _read_run(path) -> dict[str, dict[str, float]]:
    run: dict[str, dict[str, float]] = defaultdict(dict)
    with gzip.open(path, "rt") as f:
        for line in f:
            q, _, d, _, s, *_ = line.split()
            run[q].setdefault(d, float(s))
    return run


def _read_qrels(path) -> dict[str, dict[str, int]]:
    q: dict[str, dict[str, int]] = defaultdict(dict)
    for line in path.read_text().splitlines():
        t, _, d, g = line.split()
        q[t][d] = int(g)
    return q


def _top10(run, topics):
    """trec_eval order: score descending, then document id descending."""
    out = set()
    for t, docs in run.items():
        if t in topics:
            ranked = sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)[:10]
            out |= {(t, d) for d, _ in ranked}
    return out


def _by_hand(folder, unpooled=frozenset()):
    """Every run's nDCG@10 with full qrels and with its team's depth-10 unique documents removed."""
    qrels = _read_qrels(folder / "qrels.txt")
    runs = {p.name.split(".run")[0]: _read_run(p) for p in sorted((folder / "runs").iterdir())}
    contrib = defaultdict(set)
    for name, run in runs.items():
        if name not in unpooled:
            for td in _top10(run, set(qrels)):
                contrib[td].add(_team(name))
    measure = ir_measures.parse_measure("nDCG@10")
    full, left = {}, {}
    for name, run in runs.items():
        team = _team(name)
        mine = {td for td, teams in contrib.items() if teams == {team}}
        cut = {t: {d: g for d, g in js.items() if (t, d) not in mine} for t, js in qrels.items()}
        judged_run = {t: docs for t, docs in run.items() if t in qrels}
        per_full = {m.query_id: m.value for m in measure.iter_calc(qrels, judged_run)}
        per_left = {m.query_id: m.value for m in measure.iter_calc(cut, judged_run)}
        full[name] = np.mean([per_full.get(t, 0.0) for t in qrels])      # a missing topic scores 0
        left[name] = np.mean([per_left.get(t, 0.0) for t in qrels]) if name not in unpooled else full[name]
    return full, left


@pytest.mark.slow
@pytest.mark.parametrize("collection", ["trec-dl2019-passage", "trec-dl2020-passage"])
def test_leave_team_out_agrees_with_rescoring_by_hand(shared_data, collection):
    folder = shared_data / collection
    unpooled = DL20_UNPOOLED if "2020" in collection else set()
    names = sorted(p.name.split(".run")[0] for p in (folder / "runs").iterdir())
    pool = [n for n in names if n not in unpooled]
    r = leave_group_out(folder / "runs", folder / "qrels.txt", measure="nDCG@10", depth=10, pool_runs=pool)
    full, left = _by_hand(folder, unpooled)
    got = r.runs.set_index("run")
    for name in names:
        assert got.loc[name, "full"] == pytest.approx(full[name], abs=1e-9)
        assert got.loc[name, "left_out"] == pytest.approx(left[name], abs=1e-9)
    # the whole ranking: tau-b between full and left-out scores; the largest drop
    tau = stats.kendalltau([full[n] for n in names], [left[n] for n in names]).statistic
    assert r.kendall_tau == pytest.approx(tau, abs=1e-12)
    drops = {n: full[n] - left[n] for n in names}
    assert r.largest_drop == pytest.approx(max(drops.values()), abs=1e-12)
    assert r.largest_drop_run == max(drops, key=drops.__getitem__)
    # some team loses something: the test is not vacuous
    assert r.largest_drop > 0.01 and r.kendall_tau < 1


def test_ranks_and_groups_on_a_small_pool():
    # two teams; a_1 alone found d2 (relevant) at depth 2, so without it a_1 loses d2
    runs = {"a_1": {"1": {"d1": 2.0, "d2": 1.0}, "2": {"d4": 1.0}},
            "a_2": {"1": {"d1": 2.0, "d5": 1.0}, "2": {"d4": 1.0}},
            "b_1": {"1": {"d3": 2.0, "d1": 1.0}, "2": {"d4": 1.0}}}
    qrels = {"1": {"d1": 1, "d2": 1, "d3": 0, "d5": 0}, "2": {"d4": 1}}
    r = leave_group_out(runs, qrels, measure="P@2", depth=2)
    t = r.runs.set_index("run")
    # hand: a_1 full (2/2 + 1/2)/2 = 0.75, left out d2 and d5 -> (1/2 + 1/2)/2 = 0.5
    assert t.loc["a_1", "full"] == 0.75 and t.loc["a_1", "left_out"] == 0.5
    assert t.loc["b_1", "change"] == 0.0            # b's unique d3 is not relevant
    assert t.loc["a_1", "rank_full"] == 1 and t.loc["a_1", "rank_left_out"] == 1   # ties share rank 1
    g = r.groups.set_index("group")
    assert g.loc["a", "unique_docs"] == 2 and g.loc["a", "unique_relevant"] == 1
    assert g.loc["b", "unique_docs"] == 1 and g.loc["b", "unique_relevant"] == 0
    assert r.to_dict()["largest_drop_run"] == "a_1"


def test_a_mapping_that_names_an_unknown_run_is_an_error():
    runs = {"a": {"1": {"d1": 1.0}, "2": {"d1": 1.0}}, "b": {"1": {"d1": 1.0}, "2": {"d1": 1.0}}}
    with pytest.raises(ParameterError, match=r"^groups: names unknown system 'c'"):
        leave_group_out(runs, {"1": {"d1": 1}, "2": {"d1": 1}}, groups={"a": "x", "b": "y", "c": "z"})
    with pytest.raises(ParameterError, match=r"^pool_runs: unknown run 'zz'"):
        leave_group_out(runs, {"1": {"d1": 1}, "2": {"d1": 1}}, pool_runs=["zz"])


def test_cli_reuse(tmp_path, capsys):
    import json

    from planner.cli import main

    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a_1.run").write_text("1 Q0 d1 1 2 a_1\n1 Q0 d2 2 1 a_1\n2 Q0 d4 1 1 a_1\n")
    (runs / "b_1.run").write_text("1 Q0 d3 1 2 b_1\n1 Q0 d1 2 1 b_1\n2 Q0 d4 1 1 b_1\n")
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("1 0 d1 1\n1 0 d2 1\n1 0 d3 0\n2 0 d4 1\n")
    args = ["reuse", "--runs", str(runs), "--qrels", str(qrels), "--measure", "P@2", "--depth", "2"]
    assert main(args + ["--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert {r["run"]: r["left_out"] for r in d["runs"]} == {"a_1": 0.5, "b_1": 0.5}
    assert d["largest_drop"] == 0.25 and d["largest_drop_run"] == "a_1"
    assert main(args) == 0
    assert "largest drop: 0.2500 (a_1)" in capsys.readouterr().out
    teams = tmp_path / "teams.csv"
    teams.write_text("run,team\na_1,A\nb_1,B\nc_1,C\n")
    assert main(args + ["--groups", f"{teams}:team"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["planner reuse: error: --groups: names unknown system 'c_1'"]

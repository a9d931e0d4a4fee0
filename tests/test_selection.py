"""Selection on the test topics: the API against a plain loop over random dev/test splits."""

from __future__ import annotations

import numpy as np
import pytest

from planner.datasets import load
from planner.errors import ParameterError
from planner.plan.selection import plan_split, selection_bias


def _teams(systems):
    """Run name up to the first - or _; without either, trailing digits dropped (the prefix rule)."""
    import re

    out: dict[str, list[int]] = {}
    for i, s in enumerate(systems):
        t = re.split(r"[-_]", s)[0] if ("-" in s or "_" in s) else (s.rstrip("0123456789") or s)
        out.setdefault(t, []).append(i)
    return {t: ix for t, ix in out.items() if len(ix) >= 2}


def _plain_loop(x, teams, n_dev, reps, seed, k=None):
    """Per repetition: a random permutation, dev = first n_dev, test = the rest; per team pick
    the best dev mean (first on a tie), record dev - test of the pick and whether it is the
    best on test. Returns (mean, se) of optimism and accuracy, each averaged over teams."""
    rng = np.random.default_rng(seed)
    N = x.shape[1]
    opt, acc = [], []
    for _ in range(reps):
        perm = rng.permutation(N)
        dev, test = perm[:n_dev], perm[n_dev:]
        o, a = [], []
        for ix in teams.values():
            cand = list(ix) if k is None else list(rng.choice(ix, size=k, replace=False))
            dm = [x[i, dev].mean() for i in cand]
            tm = [x[i, test].mean() for i in cand]
            j = int(np.argmax(dm))
            o.append(dm[j] - tm[j])
            a.append(tm[j] >= max(tm) - 1e-12)
        opt.append(np.mean(o))
        acc.append(np.mean(a))
    return (np.mean(opt), np.std(opt, ddof=1) / np.sqrt(reps)), (np.mean(acc), np.std(acc, ddof=1) / np.sqrt(reps))


@pytest.mark.slow
@pytest.mark.parametrize("n_dev", [10, 30])
def test_dl19_teams_agree_with_a_plain_loop(n_dev):
    m = load("dl19-passage", measure="nDCG@10")
    teams = _teams(m.systems)
    assert len(teams) == 9          # ICT, TUW19, UNH, bm25base, bm25tuned, idst, p, runid, srchvrs
    sb = selection_bias(m, n_dev=n_dev, n_resamples=4000, rng=7)
    assert sorted(sb.groups) == sorted(teams) and set(sb.skipped) == {"TUA1", "ms", "test"}
    row = sb.table[(sb.table.group == "all") & (sb.table.n_dev == n_dev)].iloc[0]
    (o, o_se), (a, a_se) = _plain_loop(m.topic_scores(), teams, n_dev, 1500, seed=123)
    # Monte Carlo bounds: 4 combined standard errors (the loop's from its own spread)
    assert abs(row.optimism - o) < 4 * np.hypot(row.optimism_se, o_se)
    assert abs(row.pick_accuracy - a) < 4 * np.hypot(row.pick_accuracy_se, a_se)
    assert row.optimism > 0         # the best of k on its own dev topics is optimistic


@pytest.mark.slow
def test_k_subsets_agree_with_a_plain_loop():
    m = load("dl19-passage", measure="nDCG@10")
    teams = _teams(m.systems)
    sb = selection_bias(m, n_dev=15, k=2, n_resamples=3000, rng=3)
    row = sb.table[(sb.table.group == "all")].iloc[0]
    assert row.k == 2
    (o, o_se), (a, a_se) = _plain_loop(m.topic_scores(), teams, 15, 1500, seed=5, k=2)
    assert abs(row.optimism - o) < 4 * np.hypot(row.optimism_se, o_se)
    assert abs(row.pick_accuracy - a) < 4 * np.hypot(row.pick_accuracy_se, a_se)


def test_same_seed_same_numbers_and_margin_helps():
    m = load("dl19-passage")
    a = selection_bias(m, n_dev=[10, 20], n_resamples=300, rng=11)
    b = selection_bias(m, n_dev=[20, 10], n_resamples=300, rng=11)
    key = ["group", "n_dev"]
    assert a.table.sort_values(key).reset_index(drop=True).equals(b.table.sort_values(key).reset_index(drop=True))
    c = selection_bias(m, n_dev=[10, 20], n_resamples=300, rng=11, margin=0.02)
    assert (c.table.pick_accuracy.to_numpy() >= a.table.pick_accuracy.to_numpy()).all()
    assert a.to_dict()["seed"] == 11 and "SelectionBias(" in repr(a)


@pytest.mark.slow
def test_plan_split_meets_the_targets_with_the_fewest_dev_topics():
    m = load("dl19-passage")
    p = plan_split(m, accuracy=0.6, width=0.25, budget=43, n_resamples=500, rng=2)
    assert p.met and p.n_dev + p.n_test == 43
    assert p.pick_accuracy >= 0.6 and p.width <= 0.25
    t = p.to_frame()
    fewer = t[t.n_dev < p.n_dev]
    assert not ((fewer.pick_accuracy >= 0.6) & (fewer.width <= 0.25)).any()
    # the smallest budget: none smaller meets the targets
    q = plan_split(m, accuracy=0.55, width=0.3, n_resamples=300, rng=2)
    assert q.met
    t = q.to_frame()
    smaller = t[t.n_dev + t.n_test < q.budget]
    assert not ((smaller.pick_accuracy >= 0.55) & (smaller.width <= 0.3)).any()
    none = plan_split(m, accuracy=0.99, budget=20, n_resamples=100, rng=2)
    assert not none.met and none.n_dev is None


def test_bad_groups():
    m = load("dl19-passage")
    lone = {s: ("solo" if s == "test1" else "rest") for s in m.systems}
    with pytest.raises(ParameterError, match=r"^groups: group 'solo' has one system \(test1\)"):
        selection_bias(m, lone, n_resamples=20, rng=1)
    with pytest.raises(ParameterError, match=r"^groups: names unknown system 'nope'"):
        selection_bias(m, {**{s: "g" for s in m.systems}, "nope": "g"}, n_resamples=20, rng=1)
    with pytest.raises(ParameterError, match=r"^n_dev: n_dev 42 \+ n_test 1"):
        selection_bias(m, n_dev=42, n_resamples=20, rng=1)


def test_cli_select(tmp_path, capsys):
    import json

    from planner.cli import main

    assert main(["select", "--scores", "dl19-passage", "--n-dev", "10,30", "--n-resamples", "200",
                 "--seed", "1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    rows = [r for r in d["selection"]["table"] if r["group"] == "all"]
    assert [r["n_dev"] for r in rows] == [10, 30]
    assert main(["select", "--scores", "dl19-passage", "--accuracy", "0.6", "--width", "0.25",
                 "--budget", "43", "--n-resamples", "200", "--seed", "1"]) == 0
    out = capsys.readouterr().out
    assert "split of 43 topics" in out
    groups = tmp_path / "g.csv"
    groups.write_text("system,group\ntest1,solo\n" + "".join(f"{s},rest\n" for s in load("dl19-passage").systems
                                                             if s != "test1"))
    assert main(["select", "--scores", "dl19-passage", "--groups", str(groups)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("planner select: error: --groups: group 'solo' has one system")

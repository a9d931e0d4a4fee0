"""Pair statistics in bounded memory (issue 23): a variance shared by every pair is one value,
not one a pair, and the resampled pair models of an interval on n are refused over their limit
before any is drawn."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import planner
from planner import plan
from planner.errors import ParameterError
from planner.scores import ScoreMatrix


def _matrix(S: int, T: int, seed: int = 1) -> ScoreMatrix:
    rng = np.random.default_rng(seed)
    x = np.clip(rng.normal(0.3, 0.15, (S, T)) + rng.normal(0, 0.05, (S, 1)), 0, 1).round(3)
    return ScoreMatrix.build(x, [f"s{i}" for i in range(S)], [f"t{j}" for j in range(T)], warn=False)


@pytest.mark.parametrize("selector,design", [("pooled", "paired"), ("within-system", "independent"),
                                             ("pooled", "independent")])
def test_shared_pair_variance_takes_no_memory_per_pair(selector, design, traced_peak):
    m = _matrix(3000, 12)           # 4,498,500 pairs: np.full took 36 MB
    K = 3000 * 2999 // 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # the ScoreMatrix and the array (resampling) paths
        got, peak = traced_peak(lambda: [plan.pair_variances(scores, selector, design=design)
                                         for scores in (m, m.values)])
    assert peak < K, f"{peak / 1e6:.1f} MB traced for {K:,} pairs"
    for v in got:
        assert v.shape == (K,) and np.all(v == v[0]) and v[0] > 0
    assert got[0][0] == pytest.approx(got[1][0], rel=1e-12)
    assert v[0] == pytest.approx(plan.pair_variances(m.take(systems=range(50)), selector, design=design)[0],
                                 rel=0.2)


def test_design_with_pooled_variance_over_the_pair_limit_answers():
    # 12,000 systems (72 million pairs): refused by the pair limit (and 1.6 GB before that
    # limit existed), though a pooled variance is one number
    m = _matrix(12_000, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = plan.topic_set_size(scores=m, design="paired-t", min_diff=0.05, power=0.8,
                                variance="pooled")
        var_e = planner.fit(m).var_e
    assert r.sigma2 == pytest.approx(2 * var_e, rel=1e-12)
    assert r.n_topics > 50


def test_resampled_pair_models_over_their_limit_are_refused_first():
    m = _matrix(600, 10)            # 179,700 pairs x 200 resamples x 40 bytes = 1.4 GB
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ParameterError) as e:
            plan.size_for_target(m, target="swap_rate", value=0.05, method="analytic", rng=1)
        assert e.value.parameter == "n_resamples"
        assert "200 topic resamples of 600 systems (179,700 pairs)" in str(e.value)
        assert "use at most 74 resamples" in str(e.value)
        r = plan.size_for_target(m, target="swap_rate", value=0.05, method="analytic", n_resamples=20, rng=1)
    assert r.interval.n_resamples == 20 and r.interval.low <= r.interval.high


def test_pair_variance_summary_keeps_one_value_a_pair(traced_peak):
    # fit's pair summary went through pair_stats (pair index, means, covariances: 2 GB and 44 s
    # for 9,000 systems); now each pair's s2_d alone, the same numbers
    from planner.variance import pair_stats, pair_variance_summary

    m = _matrix(2000, 15)
    K = 2000 * 1999 // 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s, peak = traced_peak(lambda: pair_variance_summary(m))
        assert s == pair_variance_summary(m, pairs=pair_stats(m))
    assert s["n_pairs"] == K
    assert peak < 30 * K, f"{peak / 1e6:.0f} MB traced for {K:,} pairs"


# ------------------------------------------------- --jobs workers share the pair limit
# Two validate workers on 3,200 systems took 1.4 GB (PSS of the process tree; one: 0.83 GB):
# each held its own pair statistics (benchmarks/bench_limits.py). The limit is now split.

def _share_limit(monkeypatch, S: int) -> None:
    """A MAX_PAIR_MEMORY that holds one pair computation on ``S`` systems but not two."""
    from planner.variance import pairs

    monkeypatch.setattr(pairs, "MAX_PAIR_MEMORY", pairs.pair_memory(S) * 3 // 2)


def _check_pairs(S: int) -> int:
    from planner.variance.pairs import check_pair_memory

    check_pair_memory(S)
    return S


def test_validate_runs_as_many_workers_as_the_pair_limit_holds(monkeypatch):
    from planner.errors import PlannerWarning
    from planner.variance.pairs import pair_jobs

    m = _matrix(40, 24)
    kw = dict(pilot=8, topics=[4, 8], repeats=3, subsets=20, methods="analytic", rng=3,
              prediction_resamples=10)
    serial = planner.validate(m, **kw)
    _share_limit(monkeypatch, 40)
    assert pair_jobs(40, 1) == 1
    with pytest.warns(PlannerWarning, match=r"40 systems: their pair statistics need 15 MB a process, and "
                      r"MAX_PAIR_MEMORY \(23 MB\) holds 1 of them: running 1 of --jobs 2 processes"):
        assert pair_jobs(40, 2) == 1
    with pytest.warns(PlannerWarning, match="running 1 of --jobs 2"):
        two = planner.validate(m, jobs=2, **kw)
    assert two.rows == serial.rows


def test_a_worker_over_its_share_of_the_pair_limit_is_refused(monkeypatch):
    from planner.errors import InputError
    from planner.parallel import local_workers, run_tasks

    _share_limit(monkeypatch, 40)
    assert local_workers() == 1
    assert run_tasks(_check_pairs, [40, 40], jobs=1) == [40, 40]
    with pytest.raises(InputError) as e:
        run_tasks(_check_pairs, [40, 40], jobs=2)
    assert str(e.value) == ("40 systems make 780 pairs, whose statistics need 15.29 MB in each of --jobs 2 "
                            "processes, over their share 11 MB of the limit of 23 MB (MAX_PAIR_MEMORY): "
                            "use --jobs 1 or fewer systems")
    from planner.variance import pairs

    monkeypatch.setattr(pairs, "MAX_PAIR_MEMORY", pairs.pair_memory(40) * 2)
    assert run_tasks(_check_pairs, [40, 40], jobs=2) == [40, 40]


def test_study_jobs_over_the_pair_limit_is_one_line(monkeypatch, tmp_path, capsys):
    import yaml

    from planner import cli

    f = tmp_path / "s.csv"
    _matrix(40, 30).to_csv(f)
    cfg = tmp_path / "s.yaml"
    cfg.write_text(yaml.safe_dump({"collection": {"scores": str(f)}, "method": ["analytic", "predictive"],
                                   "topics": [10, 20], "resamples": 20}))
    _share_limit(monkeypatch, 40)
    assert cli.main(["study", str(cfg), "--jobs", "2", "--quiet", "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "40 systems" in err and "use --jobs 1" in err, err
    assert not (tmp_path / "out").exists()


def test_select_over_its_draw_limit_is_refused_before_drawing(tmp_path, capsys):
    # 2,220 systems x 30 topics (0.5 MB): 1,000 splits held 2.1 GB of draws; refused in one line
    # naming the option, with the resamples that fit
    import time

    from planner.cli import main

    f = tmp_path / "big.csv"
    _matrix(2220, 30).to_csv(f)
    t0 = time.process_time()
    assert main(["select", str(f), "--groups", "regex:^(s)", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert time.process_time() - t0 < 5
    assert len(err) == 1 and "--n-resamples: " in err[0] and "at most 121 resamples" in err[0]
    assert main(["select", str(f), "--groups", "regex:^(s)", "--resamples", "121", "--n-dev", "10", "--quiet",
                 "--seed", "1", "--json"]) == 0


def test_identical_systems_warning_is_one_short_line():
    # 20,000 systems in 2 groups of identical ones listed every name (about 300 KB on one line)
    x = np.repeat(np.array([[0.1, 0.2, 0.3], [0.4, 0.5, 0.6]]), [600, 20], axis=0)
    x = np.vstack([x, np.repeat(np.arange(30)[:, None] / 100, 3, axis=1)[:, :3] + 0.01 * np.arange(3)])
    names = [f"s{i}" for i in range(x.shape[0])]
    with pytest.warns(planner.errors.DegenerateDataWarning) as rec:
        ScoreMatrix.build(x, names, ["a", "b", "c"])
    (msg,) = [str(w.message) for w in rec if "identical" in str(w.message)]
    assert len(msg) < 400 and "s0 = s1 = s2 = s3 = s4 = 595 more" in msg and "s600 = " in msg
    many = np.repeat(np.arange(24, dtype=float)[:, None] / 100, 2, axis=0) + np.zeros((48, 2))
    with pytest.warns(planner.errors.DegenerateDataWarning) as rec:
        ScoreMatrix.build(many, [f"r{i}" for i in range(48)], ["a", "b"])
    (msg,) = [str(w.message) for w in rec if "identical" in str(w.message)]
    assert msg.count(" = ") == 10 and "; and 14 more groups: each such pair counts as a tie" in msg


def test_analytic_with_strata_keeps_within_max_memory(traced_peak):
    # with strata, each chunk's per-stratum pair pass ran in blocks of max_memory / 24
    # differences beside the chunk's pairs: 4.7 MiB at max_memory 4 MiB (100 systems x 1,000
    # topics, 3 strata), over the stated bound; the pass now takes half the block, and the chunk
    # what is left (planner.simulate's docstring, "Memory")
    rng = np.random.default_rng(0)
    x = np.clip(rng.normal(0.3, 0.15, (100, 1000)) + rng.normal(0, 0.05, (100, 1)), 0, 1).round(3)
    m = ScoreMatrix.build(x, [f"s{i}" for i in range(100)], [f"t{j}" for j in range(1000)],
                          strata=[f"k{j % 3}" for j in range(1000)], warn=False)
    budget, P = 4 * 2 ** 20, 100 * 99 // 2
    kept = 8 * P * 2 * 2 + 64 * P          # two topic counts' pair results and the setup's pairs
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = lambda mm: planner.predict(m, topics=[10, 20], method="analytic", strata="proportional",
                                         max_memory=mm).to_frame()
        got, peak = traced_peak(lambda: run(budget))
        ref = run(256 * 2 ** 20)
    assert peak <= budget + kept, f"{peak / 2 ** 20:.2f} MiB traced"
    assert got.equals(ref)                 # the blocks change no number

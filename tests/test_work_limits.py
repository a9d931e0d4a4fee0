"""Work bounded before it starts (issue 23): a simulation over its work or memory limits
(planner.simulate.work) is refused in one line naming the option and what fits, and the
resampled pair models of an interval on n share their limit between --jobs workers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import planner
from planner.cli import main
from planner.errors import ParameterError
from planner.parallel import run_tasks
from planner.scores import ScoreMatrix
from planner.simulate import work


def _matrix(S: int, T: int, seed: int = 1) -> ScoreMatrix:
    rng = np.random.default_rng(seed)
    x = np.clip(rng.normal(0.3, 0.15, (S, T)) + rng.normal(0, 0.05, (S, 1)), 0, 1).round(3)
    return ScoreMatrix.build(x, [f"s{i}" for i in range(S)], [f"t{j}" for j in range(T)], warn=False)


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_bootstrap_with_a_huge_topic_count_is_refused_naming_what_fits(tmp_path, capsys):
    # a 700-byte file: `--topics 1000000 --method bootstrap` drew 10^9 topics (3.6 GB at 100,000
    # topics, hours at 10^6); the drawn topics take 40 R n bytes and more (package docstring)
    f = tmp_path / "small.csv"
    _matrix(5, 20).to_csv(f)
    assert main(["predict", str(f), "--topics", "1000000", "--method", "bootstrap", "--quiet"]) == 2
    line = _one_line(capsys)
    assert line.startswith("planner predict: error: --resamples: bootstrap at up to 1,000,000 topics with "
                           "1,000 resamples needs 38,147 MB of draws and results, over MAX_HELD 384 MB"), line
    # R_tot (40 n + 12 min(T, 8 n) + 12 S) <= MAX_HELD: 10 resamples at 10^6 topics, or n <= 10,058 at 1,000
    # (10,059 gives 402,600,060 bytes > 402,653,184 - 8 P N 2 - 64 P)
    assert "use at most 10 resamples, or topic counts up to 10,058, or fewer topic counts or systems" in line
    with pytest.raises(ParameterError) as e:
        planner.predict(f, topics=[10_059], method="bootstrap", rng=1, keep_pairs=False)
    assert e.value.parameter == "n_resamples"


@pytest.mark.parametrize("method,R", [("bootstrap", 1000), ("subsample", 1000), ("parametric", 200)])
def test_what_the_refusal_offers_fits(monkeypatch, method, R):
    # with lower limits, the resamples and the topic count the error offers are accepted
    m = _matrix(30, 40)
    monkeypatch.setattr(work, "MAX_WORK", 1e5)
    monkeypatch.setattr(work, "MAX_HELD", 256 << 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ParameterError) as e:
            planner.predict(m, topics=[10, 20], method=method, n_resamples=R, rng=1, keep_pairs=False)
        msg = str(e.value)
        most = int(msg.split("at most ")[1].split(" resamples")[0].replace(",", ""))
        assert 2 <= most < R and e.value.parameter == "n_resamples", msg
        c = planner.predict(m, topics=[10, 20], method=method, n_resamples=most, rng=1, keep_pairs=False)
        assert c.resamples == most
        with pytest.raises(ParameterError):
            planner.predict(m, topics=[10, 20], method=method, n_resamples=most + 1, rng=1, keep_pairs=False)


def test_many_topic_counts_of_a_closed_form_are_refused_naming_topics(tmp_path, capsys):
    # 300,000 topic counts (2 MB of text): the analytic method's work grows with pairs x counts
    f = tmp_path / "m.csv"
    _matrix(200, 30).to_csv(f)
    counts = ",".join(str(n) for n in range(2, 300_002))
    assert main(["predict", str(f), "--topics", counts, "--method", "analytic", "--quiet"]) == 2
    line = _one_line(capsys)
    assert line.startswith("planner predict: error: --topics: analytic with its prediction band at up to "
                           "300,001 topics with 200 resamples (300,000 topic counts) needs about"), line
    assert "over MAX_WORK 2e+10" in line and "use topic counts up to " in line and "or no prediction band" in line
    # without the band, the same: the curve alone is over the limit
    assert main(["predict", str(f), "--topics", counts, "--method", "analytic", "--prediction", "0", "--quiet"]) == 2
    line = _one_line(capsys)
    assert line.startswith("planner predict: error: --topics: analytic at up to 300,001 topics "
                           "(300,000 topic counts) needs about"), line


def test_prediction_band_resamples_are_bounded(monkeypatch):
    # the band's resamples each recompute the method's rates on every pair: bounded as the rest
    m = _matrix(60, 30)
    monkeypatch.setattr(work, "MAX_WORK", 1e8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ParameterError) as e:
            planner.predict(m, topics=[10, 20], method="analytic", prediction=0.9, prediction_resamples=50_000,
                            rng=1)
    assert e.value.parameter == "prediction_resamples"
    assert str(e.value).startswith("prediction_resamples: analytic with its prediction band at up to 20 topics "
                                   "with 50,000 resamples (2 topic counts) needs about")


def test_parametric_counts_its_draws_once_per_chunk():
    # each chunk of pairs draws its R S n normals again: with 4 chunks the work of the draws is 4 times
    from planner.simulate.parametric import ParametricEngine

    one = ParametricEngine.work(work.Shape(200, 30, (50,), 1000, max_memory=1 << 30))
    four = ParametricEngine.work(work.Shape(200, 30, (50,), 1000, max_memory=256 << 20))
    P = 200 * 199 // 2
    draws = 1000 * 200 * 50 * (1 + 200 / 16)
    assert one.units == 1000 * P + draws
    assert four.units == 1000 * P + 4 * draws


# ----------------------------------------- the resampled pair models share their limit
def _check_resampled(S: int) -> int:
    from planner.plan.pairs import check_resampled_pairs

    check_resampled_pairs(S, 20)
    return S


def test_resampled_pair_models_share_their_limit_between_jobs(monkeypatch):
    # MAX_RESAMPLED_PAIR_BYTES held for each --jobs worker: two study workers could take twice it
    from planner.plan import pairs

    K = 400 * 399 // 2
    monkeypatch.setattr(pairs, "MAX_RESAMPLED_PAIR_BYTES", pairs.RESAMPLED_PAIR_BYTES * K * 20 * 3 // 2)
    assert run_tasks(_check_resampled, [400, 400], jobs=1) == [400, 400]
    with pytest.raises(ParameterError) as e:
        run_tasks(_check_resampled, [400, 400], jobs=2)
    # the share: 1.5 x 20 resamples / 2 = 15 resamples
    assert str(e.value) == ("n_resamples: 20 topic resamples of 400 systems (79,800 pairs) need 0.1 GB for the "
                            "interval on n in each of --jobs 2 processes, over their share 46 MB of the limit of "
                            "91 MB (MAX_RESAMPLED_PAIR_BYTES): use at most 15 resamples, --jobs 1, 0 for no "
                            "interval, or fewer systems")
    monkeypatch.setattr(pairs, "MAX_RESAMPLED_PAIR_BYTES", pairs.RESAMPLED_PAIR_BYTES * K * 20 * 2)
    assert run_tasks(_check_resampled, [400, 400], jobs=2) == [400, 400]


def test_first_set_binning_resamples_are_bounded(tmp_path, capsys):
    # `--bin-by first-set` drew R permutations of the topics (16 R T bytes) for any --resamples,
    # also with a closed-form method whose curve draws nothing: 10^6 resamples (MAX_RESAMPLES), 0.6 GB
    f = tmp_path / "small.csv"
    _matrix(5, 20).to_csv(f)
    argv = ["predict", str(f), "--topics", "5", "--method", "analytic", "--bins", "--bin-by", "first-set",
            "--quiet", "--seed", "1"]
    assert main([*argv, "--resamples", "1000000"]) == 2
    line = _one_line(capsys)
    # 32 R T <= MAX_HELD (384 MB): R <= 629,145
    assert line.startswith("planner predict: error: --resamples: first-set binning at up to 5 topics with "
                           "1,000,000 resamples needs 610 MB"), line
    assert "use at most 629,145 resamples" in line

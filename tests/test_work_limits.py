"""Work bounded before it starts (issue 23): a simulation over its work or memory limits
(planner.simulate.work) is refused in one line naming the option and what fits, and the
resampled pair models of an interval on n share their limit between --jobs workers."""

from __future__ import annotations

import json
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


# ----------------------------------------- validate as a whole (planner.validation.validate_work)
def _dl19(tmp_path) -> str:
    f = tmp_path / "dl19.csv"
    planner.datasets.load("dl19-passage", measure="nDCG@10").to_csv(f)
    return str(f)


def test_validate_with_huge_repeats_is_refused_before_any_repeat(tmp_path, capsys):
    # 100,000 repeats of the default methods (each with its prediction band) on 37 systems: about
    # 0.2 s of CPU a repeat, hours in all; the results' median errors alone drew 10^8 indices a row
    f = _dl19(tmp_path)
    assert main(["validate", f, "--pilot", "20", "--topics", "5,10", "--repeats", "100000", "--quiet"]) == 2
    line = _one_line(capsys)
    assert line.startswith("planner validate: error: --repeats: validate at up to 10 topics with 100,000 repeats"), line
    assert "over MAX_WORK" in line and "use at most " in line


def test_validate_refusal_offers_repeats_and_subsets_that_fit(tmp_path, monkeypatch):
    # with a lower MAX_WORK: 20 repeats are over, the repeats offered run, one more is refused
    m = planner.datasets.load("dl19-passage", measure="nDCG@10")
    kw = {"pilot": 20, "topics": [5, 10], "methods": "analytic", "subsets": 50, "rng": 1, "prediction": None}
    monkeypatch.setattr(work, "MAX_WORK", 2e6)
    with pytest.raises(ParameterError) as e:
        planner.validate(m, repeats=20, **kw)
    assert e.value.parameter == "repeats"
    most = int(str(e.value).split("at most ")[1].split(" repeats")[0].replace(",", ""))
    assert 2 <= most < 20
    assert planner.validate(m, repeats=most, **kw).repeats == most
    with pytest.raises(ParameterError):
        planner.validate(m, repeats=most + 1, **kw)
    # subsets far above their default (500) are named first
    with pytest.raises(ParameterError) as e:
        planner.validate(m, **{**kw, "subsets": 100_000}, repeats=2)
    assert e.value.parameter == "subsets"
    assert "subset pairs" in str(e.value)


def test_validate_jobs_share_its_memory_limit(tmp_path, monkeypatch, capsys):
    # each --jobs worker holds one repeat's permutations (16 subsets N bytes): MAX_HELD is split
    # between them, so a validation that fits in one process is refused with --jobs 2
    from planner.methods import METHODS
    from planner.validation import validate_work

    f = _dl19(tmp_path)
    argv = ["validate", f, "--pilot", "20", "--topics", "5", "--methods", "analytic", "--repeats", "2",
            "--subsets", "2000", "--seed", "1", "--quiet", "--json"]
    one = validate_work(37, 43, 20, [5], [METHODS["analytic"]], repeats=2, subsets=2000, banded=1)
    two = validate_work(37, 43, 20, [5], [METHODS["analytic"]], repeats=2, subsets=2000, banded=1, jobs=2)
    assert two.held > one.held
    monkeypatch.setattr(work, "MAX_HELD", (one.held + two.held) // 2)
    assert main([*argv, "--jobs", "1"]) == 0
    capsys.readouterr()
    assert main([*argv, "--jobs", "2"]) == 2
    line = _one_line(capsys)
    assert line.startswith("planner validate: error: --subsets: ") and "MAX_HELD" in line, line
    assert line.endswith("or --jobs 1, or fewer topic counts or systems"), line


# ----------------------------------------- a study's --jobs workers share MAX_HELD
def test_study_jobs_share_the_simulation_memory_limit(tmp_path, monkeypatch, capsys):
    # a scenario's bootstrap holds R (40 n + ...) bytes of draws; in each of --jobs 2 workers it
    # may hold half of MAX_HELD (planner.parallel.over_share): the same study that runs in one
    # process is refused in two, with the --jobs that fits
    doc = {"collection": {"dataset": "dl19-passage"}, "measure": "nDCG@10", "method": "bootstrap",
           "topics": [100], "resamples": 200, "min_diff": [0.05, 0.1], "seed": 1}
    cfg = tmp_path / "s.yaml"
    cfg.write_text(json.dumps(doc))
    # the draws at 100 topics: 200 (40 x 100 + 12 x 43 + 12 x 37) = 992,000 bytes (ResamplingEngine.work)
    monkeypatch.setattr(work, "MAX_HELD", 1_500_000)
    assert main(["study", str(cfg), "-o", str(tmp_path / "one"), "--quiet", "--jobs", "1"]) == 0
    capsys.readouterr()
    assert main(["study", str(cfg), "-o", str(tmp_path / "two"), "--quiet", "--jobs", "2"]) == 2
    line = _one_line(capsys)
    assert "resamples" in line and "in each of --jobs 2 processes, over their share 1 MB of MAX_HELD" in line, line
    assert "or --jobs 1," in line, line
    assert not (tmp_path / "two").exists()


# ----------------------------------------- size --target: the search of a simulated curve
def test_size_search_is_bounded_by_the_work_limits(tmp_path, monkeypatch, capsys):
    # the deconvolved search doubles n up to n_max (100,000: 34 predict calls on every pair); under
    # a lower MAX_WORK it goes as far as its work fits: a target met within is answered as before,
    # one beyond is an error naming --target after one call at the bound (not "none up to the
    # search limit")
    m = _matrix(30, 40)
    f = tmp_path / "m.csv"
    m.to_csv(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        before = planner.plan.size_for_target(m, target="swap_rate", value=0.1, n_resamples=0).n_topics
        monkeypatch.setattr(work, "MAX_WORK", 3e6)
        after = planner.plan.size_for_target(m, target="swap_rate", value=0.1, n_resamples=0).n_topics
    assert after == before and before is not None and before < 512
    assert main(["size", "--scores", str(f), "--target", "swap_rate:0.0001", "--resamples", "0", "--quiet"]) == 2
    line = _one_line(capsys)
    assert line.startswith("planner size: error: --target: no count up to 512 meets swap_rate 0.0001"), line
    assert "over MAX_WORK" in line and "a target met within 512 topics" in line
    # found from the pairs' sums (one chunk here), not the exact rate: "at least"
    assert "on the curve of deconvolved (swap_rate at least 0." in line, line


_UNTIL = {"n": 20, "method": "analytic", "min_diff": 0.05, "alpha": 0.05, "n_resamples": 1000, "rng": 1,
          "chunk_pairs": 512}


def _until(m: ScoreMatrix, statistic: str, beyond: float):
    """``statistic``'s exact value, :func:`predict_until`'s range once it is past ``beyond`` and the
    ranges it saw, then its curve when never decided and the ranges it saw (every chunk)."""
    from planner.simulate.predict import predict_until

    exact = planner.predict(m, topics=[20], method="analytic", keep_pairs=False, rng=1).rows[0][statistic]
    seen: list[tuple[float, float]] = []

    def out(lo: float, hi: float) -> bool:
        seen.append((lo, hi))
        return lo > beyond

    span = predict_until(m, decided=out, statistic=statistic, **_UNTIL)
    every: list[tuple[float, float]] = []
    curve = predict_until(m, decided=lambda lo, hi: every.append((lo, hi)) is not None, statistic=statistic,
                          **_UNTIL)
    return exact, span, seen, curve.rows[0][statistic], every


def test_a_target_out_of_reach_is_seen_from_the_first_chunks():
    # the error at a search's bound came after a whole predict call there (15 s of CPU on 2,219
    # systems, 28-42 s for the bootstrap): each pair's swap rate is in [0, 1], so after some
    # chunks the rate over all pairs lies in a known range, which may already be past the target
    from planner.simulate.predict import predict_until

    m = _matrix(60, 40)             # 1,770 pairs: 4 chunks of 512
    exact, (lo, hi), seen, whole, every = _until(m, "swap_rate_mean", 0.001)
    assert len(seen) == 1 and lo <= exact <= hi and hi - lo == pytest.approx(1258 / 1770) and lo > 0.001
    # never decided: every chunk, and the same curve as predict's
    assert len(every) == 4 and whole == exact and every[-1] == (exact, exact)
    tau = predict_until(m, decided=lambda lo, hi: True, statistic="kendall_tau_mean", **_UNTIL)
    assert tau == pytest.approx((1 - 2 * hi, 1 - 2 * lo))


def test_a_median_width_out_of_reach_is_seen_from_the_pairs_past_half():
    # an interval-width target (the median over pairs) took the whole call at the search's bound:
    # once more than half of the pairs are known, the median lies between the same quantile with
    # the other widths at 0 and at inf
    m = _matrix(60, 40)             # 1,770 pairs: 4 chunks of 512, the median known from the second
    exact, (lo, hi), seen, whole, every = _until(m, "ci_width_median", 0.01)
    assert len(seen) == 2 and seen[0] == (0.0, np.inf) and lo <= exact <= hi < np.inf and lo > 0.01
    assert len(every) == 4 and whole == exact and every[-1] == (exact, exact)


def test_predict_until_cuts_the_pairs_into_small_chunks_by_itself():
    # predict_until took predict's chunks (as large as memory allows: one for 8,385 pairs, three
    # for 2,219 systems), so a target far out of reach was seen only after a third of the pairs
    # or all of them; now at least UNTIL_CHUNKS chunks, with the same curve when never decided
    from planner.simulate.predict import UNTIL_CHUNKS, predict_until

    m = _matrix(130, 30)            # 8,385 pairs
    kw = {k: v for k, v in _UNTIL.items() if k != "chunk_pairs"}
    seen: list[tuple[float, float]] = []
    lo, hi = predict_until(m, decided=lambda lo, hi: seen.append((lo, hi)) is None and lo > 1e-4,
                           statistic="swap_rate_mean", **kw)
    assert len(seen) == 1 and hi - lo >= 1 - 2 / UNTIL_CHUNKS
    every: list[tuple[float, float]] = []
    curve = predict_until(m, decided=lambda lo, hi: every.append((lo, hi)) is not None,
                          statistic="swap_rate_mean", **kw)
    exact = planner.predict(m, topics=[20], method="analytic", keep_pairs=False, rng=1).rows[0]["swap_rate_mean"]
    assert len(every) >= UNTIL_CHUNKS // 2 and curve.rows[0]["swap_rate_mean"] == exact


def test_subsample_counts_stopped_early_are_the_same_counts():
    # the compiled t-test counts of the resampling engine were made for every pair at the first
    # block (one group of up to 4 million pairs), so stopping after it saved nothing; now in
    # GRAM_GROUPS groups: the same numbers, stopped or not
    from planner.simulate.predict import predict_until

    m = _matrix(200, 30)            # 19,900 pairs x 2,000 resampled sets: the compiled counts
    kw = {"n": 5, "method": "subsample", "min_diff": 0.05, "alpha": 0.05, "n_resamples": 1000, "rng": 1}
    row = planner.predict(m, topics=[5], method="subsample", keep_pairs=False, rng=1).rows[0]
    lo, hi = predict_until(m, statistic="power_mean", decided=lambda lo, hi: lo > 1e-4, **kw)
    assert lo <= row["power_mean"] <= hi and hi - lo > 0.5
    curve = predict_until(m, statistic="power_mean", decided=lambda lo, hi: False, **kw)
    assert curve.rows[0]["power_mean"] == row["power_mean"]


def test_size_search_bound_is_settled_early_for_widths_and_disjoint_methods(tmp_path, monkeypatch, capsys):
    # a ci_width target (a median) on a resampling method's curve and the subsample method (bounded
    # at T // 2) ran the whole call, or the whole doubling search, before the error at the bound:
    # now the first chunks say it
    f = tmp_path / "m.csv"
    _matrix(60, 40).to_csv(f)
    monkeypatch.setattr(work, "MAX_WORK", 3e6)
    size = ["size", "--scores", str(f), "--resamples", "0", "--quiet"]
    # (a closed-form method solves the width on its planning variance, with no search to bound)
    assert main([*size, "--target", "ci_width:0.001"]) == 0
    capsys.readouterr()
    monkeypatch.setattr(work, "MAX_WORK", 2e10)
    assert main(["size", "--scores", str(f), "--quiet", "--target", "ci_width:0.001", "--method", "bootstrap",
                 "--seed", "1"]) == 2
    line = _one_line(capsys)
    assert line.startswith("planner size: error: --resamples: no count up to "), line
    assert "(ci_width at least " in line, line
    assert main(["size", "--scores", str(f), "--target", "swap_rate:0.0001", "--method", "subsample", "--seed", "1",
                 "--quiet"]) == 2
    line = _one_line(capsys)
    assert "stops at 20 topics, where swap_rate is at least 0." in line, line
    # a target met within the bound: the same answer as the whole search (monotone curve)
    r = planner.plan.size_for_target(_matrix(60, 40), target="swap_rate", value=0.3, method="subsample", rng=1,
                                     n_resamples=0)
    assert r.n_topics is not None and r.n_topics <= 20 and r.achieved <= 0.3


def test_size_search_of_a_random_method_names_its_resamples(tmp_path, monkeypatch, capsys):
    # the bootstrap's draws grow with n (52 R n bytes): its search is bounded by MAX_HELD, and the
    # error offers fewer resamples
    f = tmp_path / "m.csv"
    _matrix(30, 40).to_csv(f)
    monkeypatch.setattr(work, "MAX_HELD", 20 << 20)
    argv = ["size", "--scores", str(f), "--target", "swap_rate:0.0001", "--seed", "1", "--quiet"]
    assert main([*argv, "--method", "bootstrap"]) == 2
    line = _one_line(capsys)
    assert line.startswith("planner size: error: --resamples: no count up to "), line
    assert "over MAX_HELD 20 MB" in line and "use at most " in line
    # a search whose first steps are already over is refused before any call, naming --method
    monkeypatch.setattr(work, "MAX_WORK", 1e5)
    assert main([*argv, "--method", "parametric"]) == 2
    line = _one_line(capsys)
    assert line.startswith("planner size: error: --method: the search of parametric's curve"), line


def test_planner_max_work_sets_the_work_limit(monkeypatch):
    # runs meant to be long (benchmarks/bench_validate.py --repeats 300) set PLANNER_MAX_WORK
    m = planner.datasets.load("dl19-passage", measure="nDCG@10")
    kw = {"pilot": 20, "topics": [5, 10], "methods": "analytic", "subsets": 50, "rng": 1, "prediction": None,
          "repeats": 20}
    monkeypatch.setattr(work, "MAX_WORK", 2e6)
    with pytest.raises(ParameterError):
        planner.validate(m, **kw)
    monkeypatch.setenv("PLANNER_MAX_WORK", "1e9")
    assert planner.validate(m, **kw).repeats == 20
    monkeypatch.setenv("PLANNER_MAX_WORK", "lots")
    with pytest.raises(ParameterError) as e:
        planner.validate(m, **kw)
    assert e.value.parameter == "PLANNER_MAX_WORK"

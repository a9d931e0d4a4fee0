"""Prediction intervals of the curves (issue 27 item 4) and the batched resample moments
behind the interval on n (item 6)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest

import planner
from planner.errors import DegenerateDataWarning, ParameterError
from planner.simulate.prediction import prediction_band, resampled_moments
from planner.variance import pair_index, pair_moments


def _normal_population(rng: np.random.Generator, systems: int = 12, topics: int = 3000) -> np.ndarray:
    """Scores of a two-way normal model with spread system means, 4 decimals."""
    mu = np.linspace(0.2, 0.35, systems)
    x = mu[:, None] + rng.normal(0, 0.12, (1, topics)) + rng.normal(0, 0.1, (systems, topics))
    return x.round(4)


def _realised_swap(x: np.ndarray, a, b, sets: np.ndarray) -> float:
    m1, m2 = x[:, sets[0]].mean(axis=1), x[:, sets[1]].mean(axis=1)
    return float((0.5 * np.abs(np.sign(m1[a] - m1[b]) - np.sign(m2[a] - m2[b]))).mean())


def test_prediction_interval_covers_the_swap_of_new_topic_sets():
    # the interval's claim, checked where the truth is known: pilots of 30 topics from a large
    # population, and the realised swap rate of new pairs of 30- and 60-topic sets drawn from it
    rng = np.random.default_rng(4)
    pop = _normal_population(rng)
    S, T = pop.shape
    a, b = pair_index(S)
    inside = []
    for _ in range(12):
        pilot = pop[:, rng.choice(T, 30, replace=False)]
        band = prediction_band(pilot, (30, 60), method="predictive", level=0.9, resamples=100, rng=rng)
        for j, n in enumerate((30, 60)):
            for _ in range(25):
                s = _realised_swap(pop, a, b, rng.choice(T, (2, n), replace=False))
                inside.append(band.swap_rate_low[j] <= s <= band.swap_rate_high[j])
    assert 0.8 <= np.mean(inside) <= 0.98


def test_predict_adds_prediction_columns_reproducibly(small_scores):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        c = planner.predict(small_scores, topics=[10, 40], prediction=0.8, prediction_resamples=60, rng=5)
        again = planner.predict(small_scores, topics=[10, 40], prediction=0.8, prediction_resamples=60, rng=5)
        other = planner.predict(small_scores, topics=[10, 40], prediction=0.8, prediction_resamples=60, rng=6)
        plain = planner.predict(small_scores, topics=[10, 40])
    band = c.prediction
    assert band is not None and band.level == 0.8 and band.resamples == 60 and c.seed == 5
    for r in c.rows:
        assert r["swap_rate_pred_low"] < r["swap_rate_mean"] < r["swap_rate_pred_high"] <= 1
        assert r["reversal_rate_pred_low"] < r["reversal_rate_pred_high"]
        assert r["kendall_tau_pred_low"] == pytest.approx(1 - 2 * r["swap_rate_pred_high"])
    # same seed, same bytes; another seed, other resamples; the curve itself does not move
    assert np.array_equal(band.swap_ratio, again.prediction.swap_ratio)
    assert json.dumps(c.to_dict()) == json.dumps(again.to_dict())
    assert not np.array_equal(band.swap_ratio, other.prediction.swap_ratio)
    assert [r["swap_rate_mean"] for r in c.rows] == [r["swap_rate_mean"] for r in plain.rows]
    assert plain.prediction is None and "prediction" not in plain.to_dict()
    assert c.to_dict()["prediction"]["swap_rate"]["low"] == [r["swap_rate_pred_low"] for r in c.rows]
    # the interval narrows with n
    w = band.swap_rate_high - band.swap_rate_low
    assert w[1] < w[0]


@pytest.mark.parametrize("kwargs, why", [
    ({"method": "bootstrap", "n_resamples": 20}, "simulates its rates"),
    ({"method": "analytic", "variance": "pooled"}, "each pair's own variance"),
    ({"prediction": 1.5}, "between 0 and 1"),
    ({"prediction_resamples": 1}, "from 2 to"),
])
def test_predict_refuses_a_prediction_it_cannot_give(small_scores, kwargs, why):
    args = {"topics": [10], "prediction": 0.9, **kwargs}
    with pytest.raises(ParameterError, match=why):
        planner.predict(small_scores, **args)


def test_cli_predict_prints_prediction_intervals(small_scores, capsys):
    from planner.cli import main

    assert main(["predict", "--scores", str(small_scores), "--topics", "10,20", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "90% prediction intervals" in out and "seed 2" in out
    assert main(["predict", "--scores", str(small_scores), "--topics", "10", "--method", "bootstrap",
                 "--resamples", "20", "--seed", "2"]) == 0
    assert "prediction" not in capsys.readouterr().out     # not asked for, and the method has none
    assert main(["predict", "--scores", str(small_scores), "--topics", "10", "--method", "bootstrap",
                 "--resamples", "20", "--seed", "2", "--prediction", "0.9"]) == 0
    assert "no prediction intervals: method 'bootstrap' simulates its rates" in capsys.readouterr().out
    assert main(["predict", "--scores", str(small_scores), "--topics", "10", "--prediction", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--prediction" in err[0]
    assert main(["predict", "--scores", str(small_scores), "--topics", "10", "--seed", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["prediction"]["level"] == 0.9 and len(out["prediction"]["swap_rate"]["high"]) == 1


def test_validate_reports_coverage_beside_the_error(small_scores, capsys):
    m = planner.collection.load_scores(small_scores)
    kw = {"pilot": 12, "topics": [4, 6], "repeats": 3, "subsets": 40, "rng": 3,
          "methods": ("predictive", "analytic", "bootstrap")}
    v = planner.validate(m, prediction=0.9, prediction_resamples=50, **kw)
    off = planner.validate(m, prediction=None, **kw)
    for r in v.rows:
        if r["method"] == "bootstrap":
            assert math.isnan(r["pred_coverage"])
        else:
            assert 0 <= r["pred_coverage"] <= 1 and r["pred_coverage_se"] >= 0
    assert set(v.coverage["swap_rate"]) == {"predictive", "analytic"}
    # checking the intervals draws from its own streams: every other number is the same
    strip = [{k: x for k, x in r.items() if not k.startswith("pred_coverage")} for r in v.rows]
    assert strip == list(off.rows) and "pred_coverage" not in off.rows[0]
    assert v.to_dict()["prediction"] == 0.9
    from planner.cli import main

    assert main(["validate", "--scores", str(small_scores), "--pilot", "12", "--topics", "4", "--repeats", "2",
                 "--subsets", "20", "--seed", "1"]) == 0
    assert "covered = share of held-out set pairs" in capsys.readouterr().out


def test_resampled_moments_match_each_resample(shared_data):
    # the one product behind the interval on n gives each resample's own pair moments, and on
    # the decimal grid ties are exact (P@10: many equal means)
    import pandas as pd

    for f in ("trec-web/web2011_p10.csv", "trec-terabyte/terabyte2006_ap.csv"):
        x = pd.read_csv(shared_data / f).to_numpy(float).T
        S, T = x.shape
        a, b = pair_index(S)
        draws = [g.integers(0, T, T) for g in np.random.default_rng(0).spawn(8)]
        D, V = resampled_moments(x, draws)
        for i, t in enumerate(draws):
            d, v = pair_moments(x[:, t], a, b)
            assert np.allclose(D[i], d, rtol=0, atol=1e-15) and np.allclose(V[i], v, rtol=0, atol=1e-15)
            tot = np.rint(x[:, t] * 1e4).sum(axis=1)
            assert np.array_equal(D[i] == 0, tot[a] == tot[b])
    # off the decimal grid: centred sums; identical systems stay exact ties
    x = np.random.default_rng(1).random((5, 30)) * np.pi
    x[1] = x[0]
    D, V = resampled_moments(x, [np.arange(30), np.random.default_rng(2).integers(0, 30, 30)])
    a, b = pair_index(5)
    d, v = pair_moments(x, a, b)
    assert np.allclose(D[0], d, atol=1e-14) and np.allclose(V[0], v, atol=1e-14)
    assert V[1][(a == 0) & (b == 1)] == 0.0 and D[1][(a == 0) & (b == 1)] == 0.0


def test_search_from_a_guess_finds_the_same_counts():
    # the interval's re-solve starts at the collection's own count: same answers, and fewer
    # distinct (problem, n) evaluations (what the pilot-aware re-solve computes) when the
    # resamples' counts lie around it
    from planner.plan.search import smallest_n_vec

    rng = np.random.default_rng(3)
    spread = np.rint(180 * rng.lognormal(0, 0.15, 200))
    need = np.concatenate([spread, [2, 3, 399, 400], [10 ** 9]]).astype(float)
    asked: dict = {}

    def ok(n, key):
        asked.setdefault(key, set()).update(zip(range(n.size), n.tolist()))
        return n >= need

    plain = smallest_n_vec(lambda n: ok(n, None), need.size, 2, 400)
    assert np.array_equal(plain, np.where(need > 400, np.inf, need))
    for start in (2, 3, 180, 399, 400, 401):
        assert np.array_equal(smallest_n_vec(lambda n, s=start: ok(n, s), need.size, 2, 400, start=start), plain)
    assert len(asked[180]) < 0.75 * len(asked[None])

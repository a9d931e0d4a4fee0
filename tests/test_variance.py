"""Tests of planner.variance: G-study, D-study, REML, pair variances, strata, variants."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

from planner.errors import DegenerateDataWarning, InputError, ParameterError
from planner.scores import ScoreMatrix
from planner.variance import (
    fit,
    fit_variants,
    pair_stats,
    pair_variance,
    pair_variance_summary,
    stack_variants,
    within_system_variance,
)


# ----------------------------------------------------------------------------- helpers
def wide(path, **kw) -> ScoreMatrix:
    """A wide CSV (one row a topic, one column a system, optional first column `topic`)."""
    df = pd.read_csv(path)
    if df.columns[0] == "topic":
        df = df.set_index("topic")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return ScoreMatrix.from_frame(df, source=str(path), **kw)


def mat(x, **kw) -> ScoreMatrix:
    x = np.asarray(x, dtype=float)
    return ScoreMatrix.build(x, [f"s{i}" for i in range(x.shape[0])], [f"t{j}" for j in range(x.shape[1])],
                             warn=False, **kw)


@pytest.fixture(scope="module")
def brennan(shared_data):
    return wide(shared_data / "gt-reference" / "synthetic4.csv")


@pytest.fixture(scope="module")
def adhoc5(shared_data):
    return wide(shared_data / "trec-adhoc" / "adhoc5_ap.csv")


def dl_matrix(shared_data, year):
    """DL passage nDCG@10: the embedded data set when it exists, else the reference matrix."""
    try:
        import planner.datasets as ds
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            return ds.load(f"dl{year % 100}-passage", measure="nDCG@10")
    except Exception:
        return wide(shared_data / f"trec-dl{year}-passage" / "reference" / "matrix_official_nDCG_at_10.csv")


# ----------------------------------------------------------------------------- G-study
def test_brennan_gstudy_to_4_decimals(brennan):
    # Brennan (2001) Tables 6.2/6.5 via gt4ireval's synthetic4 (values in data README)
    f = fit(brennan)
    assert f.method == "anova" and (f.n_systems, f.n_topics) == (10, 12)
    assert round(f.var_s, 4) == 0.6258
    assert round(f.var_t, 4) == 0.8840
    assert round(f.var_e, 4) == 2.7872
    assert round(f.ms_s, 4) == 10.2963
    assert round(f.ms_t, 4) == 11.6273
    assert round(f.ms_e, 4) == 2.7872
    assert (f.df_s, f.df_t, f.df_e) == (9, 11, 99)
    assert f.truncated == ()
    # sum of squares decomposition (hand identity): SS_total = SS_s + SS_t + SS_e
    x = brennan.values
    ss_tot = ((x - x.mean()) ** 2).sum()
    assert ss_tot == pytest.approx(f.ms_s * 9 + f.ms_t * 11 + f.ms_e * 99, rel=1e-12)


def test_brennan_dstudy_intervals(brennan):
    # Brennan (2001) Table 6.5 / gt4ireval test.dstudy.R: 80% two-sided interval at 12 items
    d = fit(brennan).dstudy(alpha=0.2)
    (r,) = d.rows
    assert r["n_topics"] == 12
    for key, ref in (("erho2", 0.729), ("erho2_lower", 0.541), ("erho2_upper", 0.876),
                     ("phi", 0.672), ("phi_lower", 0.457), ("phi_upper", 0.845)):
        assert round(r[key], 3) == ref, key


def test_feldt_interval_in_its_original_form(brennan):
    # Feldt (1965) at the observed T: bounds 1 - (MS_e / MS_s) * F(p; df_s, df_e), an
    # independent algebraic form of the interval (scipy quantiles)
    from scipy import stats

    f = fit(brennan)
    r = f.dstudy(alpha=0.2).rows[0]
    lo = 1 - f.ms_e / f.ms_s * stats.f.ppf(0.9, 9, 99)
    hi = 1 - f.ms_e / f.ms_s * stats.f.ppf(0.1, 9, 99)
    assert r["erho2_lower"] == pytest.approx(lo, rel=1e-12)
    assert r["erho2_upper"] == pytest.approx(hi, rel=1e-12)
    assert r["erho2"] == pytest.approx(1 - f.ms_e / f.ms_s, rel=1e-12)


@pytest.mark.slow
def test_feldt_interval_coverage_monte_carlo():
    # under the normal model MS_s / MS_e ~ (1 + T var_s / var_e) F(df_s, df_e), so the Feldt
    # interval covers the true Erho2 with probability exactly 1 - alpha; 400 data sets,
    # bound = 4 binomial standard errors. Phi's AJF interval is approximate: printed only.
    S, T, R, alpha = 10, 20, 400, 0.2
    var_s, var_t, var_e = 0.01, 0.03, 0.02
    rng = np.random.default_rng(1965)
    true_e = var_s / (var_s + var_e / T)
    true_p = var_s / (var_s + (var_t + var_e) / T)
    cover_e = cover_p = 0
    for _ in range(R):
        x = (rng.normal(0, var_s ** 0.5, (S, 1)) + rng.normal(0, var_t ** 0.5, (1, T))
             + rng.normal(0, var_e ** 0.5, (S, T)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            r = fit(mat(x)).dstudy(alpha=alpha).rows[0]
        cover_e += r["erho2_lower"] <= true_e <= r["erho2_upper"]
        cover_p += r["phi_lower"] <= true_p <= r["phi_upper"]
    se = math.sqrt(alpha * (1 - alpha) / R)
    print(f"coverage at nominal {1 - alpha}: Erho2 {cover_e / R:.3f}, Phi {cover_p / R:.3f}")
    assert abs(cover_e / R - (1 - alpha)) < 4 * se


def test_dstudy_formulas_and_arrays(brennan):
    f = fit(brennan)
    n = np.array([1, 12, 50])
    # hand formulas of DESIGN.md
    np.testing.assert_allclose(f.erho2(n), f.var_s / (f.var_s + f.var_e / n), rtol=1e-14)
    np.testing.assert_allclose(f.phi(n), f.var_s / (f.var_s + (f.var_t + f.var_e) / n), rtol=1e-14)
    assert isinstance(f.erho2(12), float)
    d = f.dstudy([5, 12, 40], alpha=0.05)
    for r in d.rows:
        assert 0 <= r["erho2_lower"] < r["erho2"] < r["erho2_upper"] <= 1
        assert 0 <= r["phi_lower"] < r["phi"] < r["phi_upper"] <= 1
    # wider level, wider interval
    d80 = f.dstudy([12], alpha=0.2).rows[0]
    d95 = f.dstudy([12], alpha=0.05).rows[0]
    assert d95["erho2_lower"] < d80["erho2_lower"] and d95["phi_upper"] > d80["phi_upper"]
    assert list(d.to_frame().columns)[:2] == ["n_topics", "erho2"]
    json.dumps(d.to_dict())


def test_topics_for_matches_dstudy(brennan):
    f = fit(brennan)
    # hand: ceil(0.8/0.2 * 2.7872 / 0.6258) = ceil(17.82) = 18; Phi: ceil(4 * 3.6712 / 0.6258) = 24
    e = f.topics_for(erho2=0.8, alpha=0.2)
    p = f.topics_for(phi=0.8, alpha=0.2)
    assert (e.n_topics, p.n_topics) == (18, 24)
    assert f.erho2(17) < 0.8 <= f.erho2(18)
    # the interval of n inverts the D-study bounds: the upper Erho2 bound reaches the
    # target first (at e.lower), the lower bound last (at e.upper)
    for need, coef in ((e, "erho2"), (p, "phi")):
        assert need.interval.low <= need.n_topics <= need.interval.high
        lo = f.dstudy([need.interval.low - 1, need.interval.low], alpha=0.2).rows
        hi = f.dstudy([need.interval.high - 1, need.interval.high], alpha=0.2).rows
        assert lo[0][coef + "_upper"] < 0.8 <= lo[1][coef + "_upper"] + 1e-12
        assert hi[0][coef + "_lower"] < 0.8 <= hi[1][coef + "_lower"] + 1e-12
    assert e.to_dict()["coefficient"] == "erho2"
    with pytest.raises(ParameterError, match="exactly one"):
        f.topics_for(erho2=0.8, phi=0.8)
    with pytest.raises(ParameterError, match="erho2"):
        f.topics_for(erho2=1.0)


@pytest.mark.filterwarnings("ignore::planner.errors.DegenerateDataWarning")
def test_drop_as_gt4ireval_with_ties_at_cut():
    # dyadic values, so every mean is exact: system means 0.125, 0.25, 0.25, 0.375, 0.5.
    # R quantile (type 7) of the means, by hand: at 0.25 -> 0.25, at 0.3 -> 0.25, at 0.6 -> 0.3.
    # gt4ireval keeps means >= cut, so both systems tied at the cut stay.
    base = np.array([0.125, 0.25, 0.25, 0.375, 0.5])
    noise = np.array([0.0625, -0.0625, 0.03125, -0.03125])
    x = base[:, None] + noise[None, :] * np.array([1, -1, 1, -1, 1])[:, None]
    f = fit(mat(x), drop=0.25)
    assert f.dropped == ("s0",) and f.n_systems == 4 and f.drop == 0.25
    assert fit(mat(x), drop=0.3).dropped == ("s0",)
    f3 = fit(mat(x), drop=0.6)
    assert f3.dropped == ("s0", "s1", "s2") and f3.n_systems == 2
    with pytest.raises(ParameterError, match="drop"):
        fit(mat(x), drop=1.0)


# ----------------------------------------------------------------------------- REML
@pytest.mark.parametrize("rel", ["trec-adhoc/adhoc5_ap.csv", "trec-web/web2011_ndcg20.csv",
                                 "trec-web/web2010_ap.csv"])
def test_reml_direct_agrees_with_anova_on_balanced_real_data(shared_data, rel):
    # balanced data, no negative estimate: the ANOVA estimates are the REML optimum
    m = wide(shared_data / rel)
    a = fit(m, method="anova")
    r = fit(m, method="reml")
    assert r.method == "reml" and r.converged and r.n_cells == m.n_systems * m.n_topics
    for k in ("var_s", "var_t", "var_e"):
        assert abs(getattr(r, k) - getattr(a, k)) <= 1e-3 * getattr(a, k), k
    assert r.grand_mean == pytest.approx(a.grand_mean, rel=1e-9)


@pytest.mark.parametrize("rel, start", [("trec-adhoc/adhoc5_ap.csv", "moments"),
                                        ("trec-web/web2011_ndcg20.csv", "moments"),
                                        pytest.param("trec-adhoc/adhoc5_ap.csv", "default",
                                                     marks=pytest.mark.slow)])
def test_reml_statsmodels_agrees_with_anova(shared_data, rel, start):
    # statsmodels MixedLM, every 3rd system only to keep it fast (21 systems x 50 topics).
    # "moments" starts the optimiser at the ANOVA values (it must stay there: they are the
    # REML optimum); "default" is statsmodels' own start, an independent check
    m = wide(shared_data / rel)
    m = m.take(systems=np.arange(0, m.n_systems, 3))
    a = fit(m, method="anova")
    r = fit(m, method="reml", reml_engine="statsmodels", reml_start=start)
    assert r.method == "reml" and r.converged
    for k in ("var_s", "var_t", "var_e"):
        assert abs(getattr(r, k) - getattr(a, k)) <= 1e-3 * getattr(a, k), k
    assert r.grand_mean == pytest.approx(a.grand_mean, rel=1e-6)


def test_reml_with_removed_cells(adhoc5):
    m = adhoc5.take(systems=np.arange(0, adhoc5.n_systems, 3))
    x = m.values.copy()
    rng = np.random.default_rng(20261129)
    x[rng.random(x.shape) < 0.1] = np.nan
    holes = ScoreMatrix.build(x, m.systems, m.topics, missing="keep", warn=False)
    with pytest.raises(ParameterError, match="missing"):
        fit(holes, method="anova")
    full = fit(m)
    r = fit(holes)                       # auto -> REML (direct engine)
    assert r.method == "reml" and r.converged and r.n_cells == int((~np.isnan(x)).sum())
    # the same restricted likelihood maximised by statsmodels MixedLM
    sm = fit(holes, method="reml", reml_engine="statsmodels")
    for k in ("var_s", "var_t", "var_e"):
        assert abs(getattr(r, k) - getattr(sm, k)) <= 1e-3 * getattr(sm, k), k
    # how far it moves: within 4 approximate standard errors of the ANOVA estimates
    # (Var(MS) ~ 2 MS^2 / df, Satterthwaite), and printed for the record
    S, T = full.n_systems, full.n_topics
    se = {"var_s": math.sqrt(2 * (full.ms_s ** 2 / full.df_s + full.ms_e ** 2 / full.df_e)) / T,
          "var_t": math.sqrt(2 * (full.ms_t ** 2 / full.df_t + full.ms_e ** 2 / full.df_e)) / S,
          "var_e": math.sqrt(2 * full.ms_e ** 2 / full.df_e)}
    for k in se:
        moved = getattr(r, k) - getattr(full, k)
        print(f"{k}: complete {getattr(full, k):.6f}, 10% cells removed {getattr(r, k):.6f} "
              f"({moved / getattr(full, k):+.1%})")
        assert abs(moved) < 4 * se[k], k


def test_reml_boundary_component():
    # no system effect at all: REML puts var_s on the boundary (0) and says so
    rng = np.random.default_rng(11)
    x = rng.normal(0, 0.15, (1, 40)) + rng.normal(0, 0.12, (30, 40))
    x[rng.random(x.shape) < 0.05] = np.nan
    m = ScoreMatrix.build(x, [f"s{i}" for i in range(30)], [f"t{j}" for j in range(40)],
                          missing="keep", warn=False)
    with pytest.warns(DegenerateDataWarning, match="system"):
        r = fit(m)
    assert r.var_s == 0.0 and r.truncated == ("var_s",) and r.converged
    assert r.var_t > 0 and r.var_e > 0
    assert r.erho2(50) == 0.0


# ----------------------------------------------------------------------------- pairs
@pytest.mark.parametrize("rel", ["trec-adhoc/adhoc5_ap.csv", "trec-web/web2010_ap.csv",
                                 "trec-terabyte"])
def test_mean_pair_variance_is_twice_var_e(shared_data, rel):
    path = shared_data / rel
    if path.is_dir():
        path = sorted(path.glob("*.csv"))[0]
    m = wide(path)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)   # web2010 has identical systems
        ps = pair_stats(m)
    f = fit(m)
    assert ps.n_pairs == m.n_systems * (m.n_systems - 1) // 2
    # exact identity (DESIGN.md): mean over pairs of s2_d = 2 MS_e
    assert abs(ps.s2_d.mean() - 2 * f.var_e) <= 1e-12 * 2 * f.var_e


def test_pair_stats_match_direct_computation(adhoc5):
    ps = pair_stats(adhoc5)
    x = adhoc5.values
    rng = np.random.default_rng(5)
    for k in rng.choice(ps.n_pairs, 25, replace=False):
        d = x[ps.a[k]] - x[ps.b[k]]
        assert ps.a[k] < ps.b[k]
        assert ps.dbar[k] == pytest.approx(d.mean(), abs=1e-15)
        assert ps.s2_d[k] == pytest.approx(d.var(ddof=1), rel=1e-10, abs=1e-15)
    df = ps.to_frame()
    assert list(df.columns) == ["system_a", "system_b", "dbar", "s2_d"] and len(df) == ps.n_pairs


def test_pair_stats_with_missing_cells(adhoc5):
    m = adhoc5.take(systems=range(8))
    x = m.values.copy()
    x[0, :5] = np.nan
    x[3, 10:12] = np.nan
    holes = ScoreMatrix.build(x, m.systems, m.topics, missing="keep", warn=False)
    ps = pair_stats(holes)
    for k in range(ps.n_pairs):
        d = x[ps.a[k]] - x[ps.b[k]]
        d = d[~np.isnan(d)]
        assert ps.n_common[k] == d.size
        assert ps.dbar[k] == pytest.approx(d.mean(), abs=1e-14)
        assert ps.s2_d[k] == pytest.approx(d.var(ddof=1), rel=1e-9)


def test_pair_variance_selectors(adhoc5):
    f = fit(adhoc5)
    ps = pair_stats(adhoc5)
    K = ps.n_pairs
    v1 = adhoc5.values.var(axis=1, ddof=1).mean()          # V_E1 by hand (balanced)
    assert within_system_variance(adhoc5) == pytest.approx(v1, rel=1e-12)
    np.testing.assert_array_equal(pair_variance(adhoc5, "pair"), ps.s2_d)
    np.testing.assert_allclose(pair_variance(adhoc5, "pooled"), np.full(K, 2 * f.var_e), rtol=1e-14)
    np.testing.assert_allclose(pair_variance(adhoc5, "within-system"), np.full(K, 2 * v1), rtol=1e-12)
    p95 = pair_variance(adhoc5, "percentile:95")
    assert p95.shape == (K,) and p95[0] == pytest.approx(np.percentile(ps.s2_d, 95))
    assert p95[0] > 1.4 * ps.s2_d.mean()                   # DESIGN.md: p95 is 1.4-1.9 x the mean
    ind = pair_variance(adhoc5, "pair", design="independent")
    vs = adhoc5.values.var(axis=1, ddof=1)
    np.testing.assert_allclose(ind, (vs[ps.a] + vs[ps.b]) / 2, rtol=1e-10)
    assert pair_variance(adhoc5, "pooled", design="independent")[0] == pytest.approx(f.var_e)
    assert pair_variance(adhoc5, "within-system", design="independent")[0] == pytest.approx(v1)
    s = pair_variance_summary(adhoc5, pairs=ps)
    assert s["pooled"] == pytest.approx(s["pair"]["mean"], rel=1e-12)
    # percentile:100 is the largest pair variance (plan, simulate, variance and the study schema
    # share one range, 0 < q <= 100: percentile:0, the smallest, is often 0 and is refused)
    assert pair_variance(adhoc5, "percentile:100")[0] == pytest.approx(float(np.max(ps.s2_d)))
    for bad in ("median", "percentile:-1", "percentile:x", "percentile:101", "percentile:0"):
        with pytest.raises(ParameterError, match="selector"):
            pair_variance(adhoc5, bad)
    with pytest.raises(ParameterError, match="design"):
        pair_variance(adhoc5, "pair", design="crossed")


# ----------------------------------------------------------------------------- strata
def _dl_combined(shared_data):
    a, b = dl_matrix(shared_data, 2019), dl_matrix(shared_data, 2020)
    fa, fb = a.to_frame(), b.to_frame()
    fa.index = ["2019/" + t for t in fa.index]
    fb.index = ["2020/" + t for t in fb.index]
    both = pd.concat([fa, fb], axis=0)          # systems differ between years: NaN outside each block
    m = ScoreMatrix.from_frame(both, missing="keep", source="dl19+dl20")
    return a, b, m.with_strata(["2019"] * a.n_topics + ["2020"] * b.n_topics)


def test_strata_dl19_dl20_combined(shared_data):
    # the overall fit of the block-diagonal (disconnected) matrix is REML
    a, b, m = _dl_combined(shared_data)
    f = fit(m)
    assert f.method == "reml" and f.converged
    assert set(f.strata) == {"2019", "2020"}
    T = a.n_topics + b.n_topics
    assert f.weights == pytest.approx({"2019": a.n_topics / T, "2020": b.n_topics / T})
    for year, single in (("2019", a), ("2020", b)):
        own = fit(single)
        k = f.strata[year]
        assert (k.n_systems, k.n_topics, k.method) == (single.n_systems, single.n_topics, "anova")
        for c in ("var_s", "var_t", "var_e", "ms_s"):
            assert getattr(k, c) == pytest.approx(getattr(own, c), rel=1e-12)
    json.dumps(f.to_dict())


def test_strata_per_stratum_and_weights(shared_data):
    a = dl_matrix(shared_data, 2019)
    half = ["first"] * 20 + ["second"] * (a.n_topics - 20)
    m = a.with_strata(half)
    f = fit(m)
    assert f.weights == pytest.approx({"first": 20 / a.n_topics, "second": (a.n_topics - 20) / a.n_topics})
    own = fit(a.take(topics=range(20)))
    assert f.strata["first"].var_e == pytest.approx(own.var_e, rel=1e-12)
    # overall fit ignores strata
    assert f.var_s == pytest.approx(fit(a).var_s, rel=1e-12)
    g = fit(m, weights={"first": 1, "second": 3})
    assert g.weights == pytest.approx({"first": 0.25, "second": 0.75})
    with pytest.raises(ParameterError, match="weights"):
        fit(m, weights={"first": 1})
    with pytest.raises(ParameterError, match="weights"):
        fit(a, weights={"x": 1})


# ----------------------------------------------------------------------------- variants
@pytest.fixture(scope="module")
def clef(shared_data):
    df = pd.read_csv(shared_data / "clef-ehealth2016" / "query-variations" / "matrix_map.csv", index_col=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        m = ScoreMatrix.from_frame(df, measure="map")
    return stack_variants(m, divisor=1000)


def test_clef_query_variations(clef):
    assert clef.shape == (48, 50, 6) and clef.variants == tuple("123456")
    assert clef.topics[0] == "101"
    vc = fit_variants(clef)
    assert vc.nesting == "topic" and vc.truncated == ()
    # SS decomposition: the five sums of squares add up to the total (exact identity)
    x = clef.values
    ss = sum(vc.ms[k] * vc.df[k] for k in vc.ms)
    assert ss == pytest.approx(((x - x.mean()) ** 2).sum(), rel=1e-12)
    # the two-facet fit of the variant means is the three-facet D-study at V variants:
    # MS_e(means) = MS_st / V, so Erho2(n) agree exactly (hand derivation, docs/variance.md)
    two = fit(clef)
    for n in (10, 50, 200):
        assert vc.erho2(n, 6) == pytest.approx(two.erho2(n), rel=1e-12)
    # more variants per topic help, but less than more topics
    g = {(r["n_topics"], r["n_variants"]): r for r in vc.dstudy([25, 50], [1, 2, 6]).rows}
    assert g[(25, 1)]["erho2"] < g[(25, 2)]["erho2"] < g[(25, 6)]["erho2"]
    assert g[(25, 2)]["erho2"] < g[(50, 1)]["erho2"]
    assert len(vc.to_frame()) == 5
    json.dumps(vc.to_dict())


@pytest.mark.parametrize("nesting", ["topic", "system"])
def test_variants_recover_known_components(nesting):
    S, T, V = 40, 60, 5
    true = {"var_s": 0.02, "var_t": 0.03, "var_v": 0.015, "var_st": 0.012, "var_e": 0.008}
    rng = np.random.default_rng(7 if nesting == "topic" else 8)
    sd = {k: math.sqrt(v) for k, v in true.items()}
    vshape = (1, T, V) if nesting == "topic" else (S, 1, V)
    x = (rng.normal(0, sd["var_s"], (S, 1, 1)) + rng.normal(0, sd["var_t"], (1, T, 1))
         + rng.normal(0, sd["var_v"], vshape) + rng.normal(0, sd["var_st"], (S, T, 1))
         + rng.normal(0, sd["var_e"], (S, T, V)))
    m = ScoreMatrix.build(x, [f"s{i}" for i in range(S)], [f"t{j}" for j in range(T)], warn=False)
    vc = fit_variants(m, nesting=nesting)
    # expected mean squares from the true components (random-effects EMS table)
    e, st, v = true["var_e"], true["var_st"], true["var_v"]
    if nesting == "topic":
        ems = {"e": e, "st": e + V * st, "v": e + S * v, "s": e + V * st + T * V * true["var_s"],
               "t": e + V * st + S * v + S * V * true["var_t"]}
        coef = {"var_e": {"e": 1}, "var_st": {"st": 1 / V, "e": -1 / V}, "var_v": {"v": 1 / S, "e": -1 / S},
                "var_s": {"s": 1 / (T * V), "st": -1 / (T * V)},
                "var_t": {"t": 1 / (S * V), "st": -1 / (S * V), "v": -1 / (S * V), "e": 1 / (S * V)}}
    else:
        ems = {"e": e, "st": e + V * st, "v": e + T * v, "t": e + V * st + S * V * true["var_t"],
               "s": e + V * st + T * v + T * V * true["var_s"]}
        coef = {"var_e": {"e": 1}, "var_st": {"st": 1 / V, "e": -1 / V}, "var_v": {"v": 1 / T, "e": -1 / T},
                "var_t": {"t": 1 / (S * V), "st": -1 / (S * V)},
                "var_s": {"s": 1 / (T * V), "st": -1 / (T * V), "v": -1 / (T * V), "e": 1 / (T * V)}}
    for k, c in coef.items():
        # Var(MS) = 2 EMS^2 / df for independent mean squares (normal model)
        se = math.sqrt(sum(w ** 2 * 2 * ems[src] ** 2 / vc.df[src] for src, w in c.items()))
        assert abs(getattr(vc, k) - true[k]) < 4 * se, (k, getattr(vc, k), true[k], se)


def test_variants_bad_input(adhoc5):
    with pytest.raises(ParameterError, match="variant"):
        fit_variants(adhoc5)
    with pytest.raises(ParameterError, match="nesting"):
        fit_variants(adhoc5, nesting="both")
    with pytest.raises(InputError, match="not a number"):
        stack_variants(mat([[0.1, 0.2], [0.3, 0.5]]))
    ids = ScoreMatrix.build([[0.1, 0.2, 0.3], [0.3, 0.5, 0.4]], ["a", "b"], ["1001", "1002", "2001"], warn=False)
    with pytest.raises(InputError, match="topic 2 has no variant 2"):
        stack_variants(ids)
    # a divisor beyond 64 bits used to overflow numpy (OverflowError); ids are Python integers
    with pytest.raises(ParameterError, match=r"^divisor: 100000000000000000000 maps all 3 query ids to topic 0"):
        stack_variants(ids, divisor=10 ** 20)
    long = [str(10 ** 25 * t + v) for t in (1, 2) for v in (1, 2)]     # beyond float precision
    big = stack_variants(ScoreMatrix.build([[.1, .2, .3, .4], [.2, .2, .5, .1]], ["a", "b"], long, warn=False),
                         divisor=10 ** 25)
    assert big.topics == ("1", "2") and big.variants == ("1", "2") and big.values[1, 1, 0] == .5


# ----------------------------------------------------------------------------- bad input
def test_constant_matrix_is_an_error():
    with pytest.raises(InputError, match="constant"):
        fit(mat(np.full((4, 5), 0.3)))


def test_single_system_is_an_error():
    one = ScoreMatrix(np.array([[0.1, 0.2, 0.3]]), ("a",), ("t1", "t2", "t3"))
    with pytest.raises(InputError, match="2 systems"):
        fit(one)
    with pytest.raises(InputError, match="2 systems"):
        pair_stats(one)
    single_topic = ScoreMatrix(np.array([[0.1], [0.4]]), ("a", "b"), ("t1",))
    with pytest.raises(InputError, match="2 topics"):
        fit(single_topic)


def test_all_zero_topic_warns():
    x = np.array([[0.1, 0.0, 0.5, 0.3], [0.2, 0.0, 0.4, 0.1], [0.4, 0.0, 0.6, 0.2]])
    with pytest.warns(DegenerateDataWarning, match="1 topic.*all-zero.*'t1'"):
        f = fit(mat(x))
    assert np.isfinite([f.var_s, f.var_t, f.var_e]).all()


def test_identical_systems_warn_in_pair_stats():
    x = np.array([[0.1, 0.3, 0.5], [0.1, 0.3, 0.5], [0.2, 0.1, 0.6]])
    with pytest.warns(DegenerateDataWarning, match="zero variance.*'s0' vs 's1'"):
        ps = pair_stats(mat(x))
    assert ps.s2_d[0] == 0.0 and ps.dbar[0] == 0.0


@pytest.mark.filterwarnings("ignore:.*every system scores the same")
@pytest.mark.filterwarnings("ignore:.*set to 0")
def test_all_systems_identical_warns_that_erho2_is_undefined():
    x = np.array([[0.1, 0.5, 0.3], [0.1, 0.5, 0.3], [0.1, 0.5, 0.3]])
    with pytest.warns(DegenerateDataWarning, match="0/0"):
        f = fit(mat(x))
    assert f.var_s == 0 and f.var_e == 0 and f.var_t > 0
    assert math.isnan(f.erho2(10)) and f.phi(10) == 0.0


@pytest.mark.filterwarnings("ignore::planner.errors.DegenerateDataWarning")
def test_degenerate_fits_are_consistent_despite_rounding():
    # identical systems whose means differ in the last bit (0.1, 0.4, 0.2, 0.7): the rounding
    # noise of MS_s and MS_e used to give Erho2 = 1 with an interval [0, 0.98] and 2.9e32
    # topics for Phi; now var_s = var_e = 0, Erho2 and its interval are 0/0 (NaN), Phi 0
    f = fit(mat(np.tile([0.1, 0.4, 0.2, 0.7], (3, 1))))
    assert f.var_s == 0 and f.var_e == 0 and f.var_t > 0
    r = f.dstudy([4]).rows[0]
    assert math.isnan(r["erho2"]) and math.isnan(r["erho2_lower"]) and math.isnan(r["erho2_upper"])
    assert r["phi"] == r["phi_lower"] == r["phi_upper"] == 0.0
    need = f.topics_for(phi=0.8)
    assert need.n_topics == need.interval.low == need.interval.high == math.inf
    # systems 0.1 apart on every topic: no topic or residual variance, Erho2 = Phi = 1 at any
    # n, with intervals [1, 1] and one topic needed (Phi's interval used to be [0, 0])
    f = fit(mat(np.tile([[0.1], [0.2], [0.3]], (1, 4))))
    assert f.var_t == 0 and f.var_e == 0 and f.var_s > 0
    r = f.dstudy([4]).rows[0]
    assert r["erho2"] == r["erho2_lower"] == r["erho2_upper"] == 1.0
    assert r["phi"] == r["phi_lower"] == r["phi_upper"] == 1.0
    need = f.topics_for(phi=0.9)
    assert need.n_topics == need.interval.low == need.interval.high == 1


@pytest.mark.filterwarnings("ignore::planner.errors.DegenerateDataWarning")
@pytest.mark.parametrize("x", [np.tile([0.1, 0.4, 0.2, 0.7], (3, 1)), np.tile([[0.1], [0.2], [0.3]], (1, 4))])
@pytest.mark.parametrize("missing", [False, True])
def test_reml_without_residual_variance_is_an_input_error(x, missing):
    # no residual variance: the REML likelihood (relative to it) has no solution; the direct
    # engine divided by zero (a traceback), now one error naming the scores
    x = x.copy()
    if missing:
        x[0, 1] = np.nan
    m = ScoreMatrix.build(x, ["s0", "s1", "s2"], ["t0", "t1", "t2", "t3"], missing="keep", warn=False,
                          source="deg.csv")
    for engine in ("direct", "statsmodels"):   # statsmodels stopped anywhere instead of failing
        with pytest.raises(InputError, match="deg.csv: the REML fit has no solution"):
            fit(m, method="reml", reml_engine=engine)


def test_negative_component_truncated_and_topics_for_infinite():
    # system means equal and interaction large: MS_s < MS_e (hand: MS_s = 0)
    x = np.array([[0.1, 0.9, 0.5, 0.3], [0.9, 0.1, 0.3, 0.5]])
    with pytest.warns(DegenerateDataWarning, match="system"):
        f = fit(mat(x))
    assert f.var_s == 0.0 and "var_s" in f.truncated and f.raw["var_s"] < 0
    assert f.erho2(50) == 0.0
    with pytest.warns(DegenerateDataWarning, match="no number of topics"):
        need = f.topics_for(erho2=0.8)
    assert need.n_topics == math.inf and need.interval.high == math.inf
    r = f.dstudy([10]).rows[0]
    assert not any(isinstance(v, float) and math.isnan(v) for v in r.values())


def test_bad_parameters(brennan):
    with pytest.raises(ParameterError, match="method"):
        fit(brennan, method="ml")
    f = fit(brennan)
    with pytest.raises(ParameterError, match="alpha"):
        f.dstudy([10], alpha=1.5)
    # a tiny alpha gave NaN interval bounds (the quantiles overflow); the floor is 1e-10
    with pytest.raises(ParameterError, match=r"alpha: must be in \[1e-10, 0.5\), got 1e-300"):
        f.dstudy([10], alpha=1e-300)
    d = f.dstudy([10], alpha=1e-10).to_dict()["rows"][0]
    assert all(np.isfinite(d[k]) for k in ("erho2_lower", "erho2_upper", "phi_lower", "phi_upper"))
    with pytest.raises(ParameterError, match="positive"):
        f.dstudy([0])
    with pytest.raises(ParameterError, match="positive"):
        f.erho2(-1)


@pytest.mark.filterwarnings("ignore::planner.errors.DegenerateDataWarning")
def test_fit_accepts_arrays_and_is_json(brennan, shared_data):
    f = fit(brennan.values)
    assert round(f.var_s, 4) == 0.6258
    assert fit(shared_data / "gt-reference" / "synthetic4.csv").var_s == pytest.approx(f.var_s, rel=1e-12)
    d = f.to_dict()
    json.dumps(d)
    assert d["var_e"] == f.var_e and d["truncated"] == []
    assert list(f.to_frame()["component"]) == ["system", "topic", "residual"]


# ----------------------------------------------------------------------------- CLI
def test_cli_fit_json(shared_data, capsys):
    from planner.cli import main

    path = shared_data / "gt-reference" / "synthetic4.csv"
    code = main(["fit", "--scores", str(path), "--alpha", "0.2", "--topics", "12,24", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert round(out["components"]["var_s"], 4) == 0.6258
    row = out["dstudy"]["rows"][0]
    assert row["n_topics"] == 12 and round(row["phi_lower"], 3) == 0.457
    assert out["pair_variance"]["pooled"] == pytest.approx(2 * out["components"]["var_e"])
    assert {n["coefficient"] for n in out["topics_needed"]} == {"erho2", "phi"}


def test_cli_fit_strata(shared_data, tmp_path, capsys):
    from planner.cli import main

    topics = tmp_path / "topics.csv"
    topics.write_text("topic,stratum\n" + "".join(f"{t},{'A' if t <= 5 else 'B'}\n" for t in range(1, 13)))
    path = shared_data / "gt-reference" / "synthetic4.csv"
    code = main(["fit", "--scores", str(path), "--strata", str(topics), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    comp = out["components"]
    assert comp["weights"] == pytest.approx({"A": 5 / 12, "B": 7 / 12})
    own = fit(wide(path).take(topics=range(5)))       # stratum A = topics 1..5 on its own
    assert comp["strata"]["A"]["var_e"] == pytest.approx(own.var_e, rel=1e-12)
    assert comp["var_s"] == pytest.approx(0.625757575757576, rel=1e-12)   # overall fit unchanged
    code = main(["fit", "--scores", str(path), "--strata", str(topics)])
    text = capsys.readouterr().out
    assert code == 0 and "per stratum" in text


def test_cli_fit_text(shared_data, capsys):
    from planner.cli import main

    code = main(["fit", "--scores", str(shared_data / "trec-adhoc" / "adhoc5_ap.csv"), "--drop", "0.25"])
    out = capsys.readouterr().out
    assert code == 0
    for piece in ("G-study", "D-study", "Feldt", "pooled:", "within-system:", "percentile:95:",
                  "left out 15 lowest-scoring"):
        assert piece in out, piece


@pytest.mark.parametrize("argv, message", [
    (["--drop", "1.5"], "--drop"),
    (["--alpha", "0"], "--alpha"),
    (["--topics", "10,x"], "--topics"),
    (["--target", "2"], "--target"),
])
def test_cli_fit_bad_options(shared_data, capsys, argv, message):
    from planner.cli import main

    code = main(["fit", "--scores", str(shared_data / "gt-reference" / "synthetic4.csv"), *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and message in err


def test_cli_fit_bad_divisor_before_any_data_warning(tmp_path, capsys):
    # scores outside [0, 1] warn when loaded; a bad option is reported first, alone
    from planner.cli import main

    path = tmp_path / "w.csv"
    path.write_text("topic,a,b,c\n1,0.1,1.5,0.3\n2,0.2,0.4,0.9\n3,0.5,0.1,0.2\n")
    code = main(["fit", "--scores", str(path), "--variant-divisor", "0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == ["planner fit: error: --variant-divisor: expected an integer >= 2, got 0"]


def test_cli_fit_missing_file(tmp_path, capsys):
    from planner.cli import main

    code = main(["fit", "--scores", str(tmp_path / "nope.csv")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "nope.csv" in err


def test_topics_needed_to_dict_is_strict_json_and_arrays_of_text_are_parameter_errors():
    # with var_s = 0 the count is infinite: to_dict() wrote inf (not JSON); a text array raised
    # numpy's ValueError (Python API audit)
    import json

    import planner
    from planner.errors import ParameterError

    x = np.random.default_rng(0).normal(0.5, 0.1, (5, 30))
    x = x - x.mean(1, keepdims=True) + 0.5
    d = planner.fit(x).topics_for(erho2=0.9).to_dict()
    assert d["n_topics"] is None and json.dumps(d, allow_nan=False)
    with pytest.raises(ParameterError, match="expected numbers"):
        planner.fit(np.array([["a", "b"], ["c", "d"]]))


def test_pair_stats_dbar_is_exact_on_the_score_grid(shared_data):
    # pair_stats kept the float means' noise: TREC-6 P@10 has 15 pairs with equal totals, of
    # which the float mean differences leave 10 at about 1e-18 (docs audit); predict had 15
    from planner.collection import load_scores
    from planner.simulate import predict
    from planner.variance import pair_index, pair_stats

    s = load_scores(shared_data / "trec-adhoc" / "adhoc6_p10.csv")
    ps = pair_stats(s)
    x = s.topic_scores()
    a, b = pair_index(x.shape[0])
    naive = x.mean(axis=1)[a] - x.mean(axis=1)[b]
    assert int((naive == 0).sum()) < 15 and int((ps.dbar == 0).sum()) == 15     # 5 or 6, by memory order
    assert np.array_equal(ps.dbar, predict(s, topics=[25], method="analytic").pairs_frame()["dbar"].to_numpy())
    assert np.allclose(ps.dbar, naive, atol=1e-15, rtol=0)


def test_decimal_grid_is_the_score_grid_of_every_smaller_count():
    # predict makes the grid once at n_max = T; the resampling engine reads it for its count n
    from planner.variance import decimal_grid, score_grid

    rng = np.random.default_rng(3)
    x = np.round(rng.random((6, 40)), 3)
    q, unit = decimal_grid(x, 40)
    assert unit == 10.0 ** -3 and np.array_equal(q, np.rint(x * 1000))
    for n in (2, 25, 40):
        qn, un = score_grid(x, n)
        assert un == unit and np.array_equal(qn, q)
    assert decimal_grid(rng.random((6, 40)), 40) is None          # not decimal: a binary grid, per n
    q0, u0 = decimal_grid(np.zeros((3, 4)), 4)
    assert u0 == 1.0 and not q0.any()
    # 3 decimals times n_max = 10^13 pass 2^50: no decimal grid (score_grid's binary one)
    assert decimal_grid(x, 10 ** 13) is None and score_grid(x, 10 ** 13)[1] == 2.0 ** -6

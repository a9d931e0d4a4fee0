"""Tests of planner.study: strict schema (key-path errors, CLI exit 2), grid expansion,
run_study artifacts, determinism (byte-identical results.json, any --jobs), --force."""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from planner import cli
from planner.errors import ConfigError
from planner.study import SCHEMA, _from_curve, _honest, load_config, run_study, schema


# ----------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def small_scores(tmp_path_factory, request) -> Path:
    """A wide CSV of real scores: 8 DL 2019 runs x 24 topics (nDCG@10, reference matrix)."""
    from tests.conftest import SHARED_DATA

    src = SHARED_DATA / "trec-dl2019-passage" / "reference" / "matrix_official_nDCG_at_10.csv"
    if not src.exists():
        pytest.skip("shared data not present")
    df = pd.read_csv(src, dtype={"topic": str}).set_index("topic")
    # 8 runs with distinct means, the first 24 topics
    means = df.mean().sort_values()
    cols = list(means.index[:: max(1, len(means) // 8)][:8])
    out = tmp_path_factory.mktemp("scores") / "dl19_small.csv"
    df.iloc[:24][cols].to_csv(out)
    return out


def _study(path: Path, scores: Path, **extra) -> Path:
    doc = {"name": "t", "seed": 7, "resamples": 60,
           "collection": {"scores": str(scores)},
           "method": ["analytic", "bootstrap"], "topics": [5, 10, 24, 40],
           "targets": [{"target": "swap_rate", "value": 0.2}, {"target": "erho2", "value": 0.9}]}
    doc.update(extra)
    path.write_text(yaml.safe_dump(doc))
    return path


# ----------------------------------------------------------------- schema
BASE = {"collection": {"dataset": "dl19-passage"}}

ERROR_CASES = [
    # (config, key path that must be named, words in the message)
    ({**BASE, "scenarios": [{}, {}, {"topics": [1, 5]}]}, "scenarios[2].topics", "expected a list of integers >= 2"),
    ({**BASE, "scenarios": [{}, {}, {"topics": "abc"}]}, "scenarios[2].topics", "expected a list of integers >= 2"),
    ({**BASE, "topics": []}, "topics", "expected a list of integers >= 2"),
    ({**BASE, "colour": 1}, "colour", "unknown key 'colour'"),
    ({"collection": {"dataset": "dl19-passage", "bar": 2}}, "collection.bar", "unknown key 'bar'"),
    ({"collection": {"dataset": "x", "scores": "y"}}, "collection", "exactly one source"),
    ({"collection": {"runs": "x"}}, "collection", "exactly one source"),
    ({**BASE, "method": "magic"}, "method", "expected one of analytic"),
    ({**BASE, "scenarios": [{"method": ["analytic", "magic"]}]}, "scenarios[0].method", "expected one of"),
    ({**BASE, "variance": "percentile:150"}, "variance", "percentile:Q"),
    ({**BASE, "alpha": 0.7}, "alpha", "0 < alpha < 0.5"),
    ({**BASE, "seed": -1}, "seed", "integer >= 0"),
    ({**BASE, "resamples": 3}, "resamples", "integer >= 10"),
    ({**BASE, "targets": [{"target": "swap", "value": 0.1}]}, "targets[0].target", "expected one of swap_rate"),
    ({**BASE, "targets": [{"target": "swap_rate"}]}, "targets[0].value", "missing required key 'value'"),
    ({**BASE, "filter": {"lo": "a"}}, "filter.lo", "expected a number"),
    ({**BASE, "pool": {"depths": [10]}}, "pool", "runs + qrels"),
    ({**BASE, "pool": {"depths": [0]}}, "pool.depths", "integers >= 1"),
    ({**BASE, "min_diff": 0}, "min_diff", "number > 0"),
    ({"collection": {"dataset": "dl19-passage", "missing": "bad"}}, "collection.missing", "expected one of error"),
    ({"measure": "AP"}, "collection", "missing required key 'collection'"),
    ({"collection": [{"dataset": "dl19-passage"}, {"dataset": 5}]}, "collection[1].dataset", "data set name"),
    ({**BASE, "costs": {"topic": -1}}, "costs.topic", "number >= 0"),
    ({"collection": {"stack": [{"dataset": "a"}]}}, "collection.stack", "at least 2 collection"),
    ({"collection": {"stack": [{"dataset": "a"}, {"datasett": "b"}]}}, "collection.stack[1]", "exactly one source"),
    ({"collection": {"stack": [{"dataset": "a"}, {"dataset": "b"}], "x": 1}}, "collection.x", "unknown key 'x'"),
    ({"collection": {"stack": [{"dataset": "a"}, {"dataset": "b"}]}, "pool": {"depths": [10]}}, "collection",
     "a stack of collections supports no pool"),
]


@pytest.mark.parametrize("doc,key,words", ERROR_CASES, ids=[c[1] + ":" + c[2][:12] for c in ERROR_CASES])
def test_config_errors_name_the_key(doc, key, words):
    with pytest.raises(ConfigError) as ei:
        load_config(doc)
    assert ei.value.key == key
    assert words in str(ei.value)
    assert str(ei.value).startswith(key + ": ")


@pytest.mark.parametrize("doc,key,words", ERROR_CASES[:8], ids=[c[1] for c in ERROR_CASES[:8]])
def test_cli_config_errors_exit_2_with_key_path(tmp_path, capsys, doc, key, words):
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(doc))
    code = cli.main(["study", str(f), "-o", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert len(err.splitlines()) == 1
    assert err.startswith(f"planner study: error: {f}: {key}: ")
    assert words in err
    assert not (tmp_path / "out").exists()


def test_cli_yaml_syntax_error_names_file_and_line(tmp_path, capsys):
    f = tmp_path / "broken.yaml"
    f.write_text("collection:\n  dataset: dl19-passage\ntopics: [10, 20\nmethod: analytic\n")
    assert cli.main(["study", str(f), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{f}:" in err and "invalid YAML" in err


def test_cli_missing_study_file(tmp_path, capsys):
    assert cli.main(["study", str(tmp_path / "nope.yaml"), "--quiet"]) == 2
    assert "study file not found" in capsys.readouterr().err


def test_cli_bad_jobs_and_seed(tmp_path, capsys):
    assert cli.main(["study", "--jobs", "0", "--quiet"]) == 2
    assert "--jobs" in capsys.readouterr().err
    assert cli.main(["study", "--seed", "-3", "--quiet"]) == 2
    assert "--seed" in capsys.readouterr().err


def test_schema_command_prints_a_valid_json_schema(capsys):
    import jsonschema

    assert cli.main(["schema"]) == 0
    printed = json.loads(capsys.readouterr().out)
    jsonschema.Draft202012Validator.check_schema(printed)
    assert printed == SCHEMA
    assert schema() is not SCHEMA
    # the shipped configs are valid against it
    root = Path(__file__).resolve().parents[1]
    for f in sorted((root / "configs").glob("*.yaml")) + [root / "planner" / "configs" / "quickstart.yaml"]:
        jsonschema.validate(yaml.safe_load(f.read_text()), printed)


def test_embedded_quickstart_equals_configs_copy():
    root = Path(__file__).resolve().parents[1]
    assert (root / "planner" / "configs" / "quickstart.yaml").read_text() == \
        (root / "configs" / "dl19-quickstart.yaml").read_text()


# ----------------------------------------------------------------- expansion
def test_grid_expansion_and_defaults(tmp_path):
    cfg = load_config({"collection": [{"dataset": "a"}, {"dataset": "b"}],
                       "measure": ["nDCG@10", "AP(rel=2)"], "method": ["analytic", "bootstrap", "subsample"],
                       "scenarios": [{}, {"name": "fixed", "method": "analytic", "collection": {"dataset": "a"},
                                          "measure": "nDCG@10"}]})
    assert len(cfg.scenarios) == 2 * 2 * 3 + 1
    assert [s["id"] for s in cfg.scenarios[:3]] == ["s01", "s02", "s03"]
    first = cfg.scenarios[0]
    # grid order: collection, measure, method (GRID_KEYS order), last key fastest
    assert (first["collection"]["dataset"], first["measure"], first["method"]) == ("a", "nDCG@10", "analytic")
    assert cfg.scenarios[1]["method"] == "bootstrap"
    assert cfg.scenarios[3]["measure"] == "AP(rel=2)"
    assert cfg.scenarios[-1]["name"] == "fixed"
    # every default resolved
    for k, v in {"variance": "pair", "min_diff": 0.05, "alpha": 0.05, "strata": "uniform", "filter": None,
                 "pool": None, "variants": None}.items():
        assert first[k] == v
    assert first["costs"] == {"topic": 0.0, "judgment": 1.0, "budget": None}
    assert cfg.seed == 20190 and cfg.resamples == 1000
    assert cfg.raw["scenarios"][0]["topics"] == [10, 20, 30, 40, 50, 75, 100, 150, 200]
    assert load_config({"collection": {"dataset": "a"}}, seed=5).seed == 5


def test_relative_paths_resolve_against_the_study_file(tmp_path):
    sub = tmp_path / "studies"
    sub.mkdir()
    f = sub / "s.yaml"
    f.write_text(yaml.safe_dump({"collection": {"scores": "../data/x.csv"}, "filter": {"lo": 0.1}}))
    cfg = load_config(f)
    sc = cfg.scenarios[0]
    assert Path(sc["collection"]["scores"]) == tmp_path.resolve() / "data" / "x.csv"
    assert sc["filter"] == {"lo": 0.1, "hi": 1.0, "min_spread": 0.0}
    assert cfg.name == "s"


# ----------------------------------------------------------------- pieces
def test_from_curve_interpolates_and_rounds_up():
    rows = [{"n_topics": 10, "swap_rate_mean": 0.2, "power_mean": 0.3},
            {"n_topics": 20, "swap_rate_mean": 0.1, "power_mean": 0.6},
            {"n_topics": 40, "swap_rate_mean": 0.05, "power_mean": 0.9}]
    # hand calculation: swap 0.15 lies halfway between n=10 (0.2) and n=20 (0.1) -> 15
    assert _from_curve(rows, "swap_rate", 0.15)[0] == 15
    # 0.08 between 20 (0.1) and 40 (0.05): 20 + (0.02 / 0.05) * 20 = 28
    assert _from_curve(rows, "swap_rate", 0.08)[0] == 28
    # power 0.8 between 20 (0.6) and 40 (0.9): 20 + (0.2/0.3)*20 = 33.33 -> 34
    assert _from_curve(rows, "power", 0.8)[0] == 34
    assert _from_curve(rows, "swap_rate", 0.3)[0] == 10
    assert _from_curve(rows, "swap_rate", 0.01)[0] is None


def test_honest_paired_bootstrap_on_hand_made_scores():
    from planner.scores import ScoreMatrix

    # system a beats b on every topic by 0.1 -> every resampled difference is +0.1:
    # interval [0.1, 0.1], reversal rate 0; a and c are identical -> reversal counts half
    x = np.array([[0.5, 0.6, 0.7, 0.8, 0.9], [0.4, 0.5, 0.6, 0.7, 0.8], [0.5, 0.6, 0.7, 0.8, 0.9]])
    m = ScoreMatrix.build(x, ["a", "b", "c"], list("12345"), warn=False)
    h = _honest(m, np.random.default_rng(1), 200, 0.05)
    assert h["best_system"] == "a" and h["second_system"] == "c"
    assert h["reversal_top2"] == 0.5   # tie: half
    mb = m.take(systems=["a", "b"])
    h2 = _honest(mb, np.random.default_rng(1), 200, 0.05)
    assert h2["diff_top2_lo"] == pytest.approx(0.1) and h2["diff_top2_hi"] == pytest.approx(0.1)
    assert h2["reversal_top2"] == 0.0
    assert h2["n_topics"] == 5 and h2["grand_mean"] == pytest.approx(x[:2].mean())


# ----------------------------------------------------------------- run_study
class _Parse(HTMLParser):
    def __init__(self):
        super().__init__()
        self.figs, self.imgs = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "figure" and "data-figure" in a:
            self.figs.add(a["data-figure"])
        if tag == "img":
            self.imgs.append(a)


def test_study_writes_every_artifact(tmp_path, small_scores):
    cfg = _study(tmp_path / "s.yaml", small_scores, filter={"min_spread": 0.05})
    res = run_study(cfg, out=tmp_path / "rep", quiet=True)
    out = Path(res.out)
    for f in ("report.md", "report.html", "results.json", "provenance.json", "config.resolved.yaml",
              "tables/curves.csv", "tables/targets.csv", "tables/components.csv", "tables/scenarios.csv",
              "tables/honest.csv"):
        assert (out / f).is_file(), f
    figs = sorted(p.stem for p in (out / "figures").glob("*.png"))
    assert set(figs) >= {"ci_width", "swap_reversal", "kendall_tau", "power", "required_topics", "components"}
    assert sorted(p.stem for p in (out / "figures").glob("*.svg")) == figs
    # html parses and references (embeds) every figure
    p = _Parse()
    p.feed((out / "report.html").read_text())
    assert p.figs == set(figs)
    assert all(i["src"].startswith("data:image/png;base64,") for i in p.imgs)
    assert {i["alt"] for i in p.imgs} == set(figs)
    md = (out / "report.md").read_text()
    for f in figs:
        assert f"figures/{f}.png" in md
    # the answer first, the honest statement last
    heads = [ln for ln in md.splitlines() if ln.startswith("## ")]
    assert heads[0] == "## The answer" and heads[-1] == "## The honest statement"
    assert "Pool bias." in md and "paired bootstrap" in md
    from planner.report import dump_json

    assert (out / "results.json").read_text() == dump_json(res.results)
    results = json.loads((out / "results.json").read_text())
    assert results["config"]["scenarios"][0]["alpha"] == 0.05       # defaults written back
    assert results["config"]["scenarios"][0]["filter"] == {"lo": 0.0, "hi": 1.0, "min_spread": 0.05}
    assert len(results["scenarios"]) == 2
    # analytic swap-rate size: exact n (plan.size_for_target) with an interval from topic resamples
    sw = [t for t in results["scenarios"][0]["targets"] if t["target"] == "swap_rate"][0]
    from planner.collection import load_scores
    from planner.plan import size_for_target
    from planner.simulate import filter_informative

    m = filter_informative(load_scores(small_scores), min_spread=0.05)[0]
    assert sw["n_topics"] == size_for_target(m, target="swap_rate", value=0.2, resamples=0).n_topics
    assert sw["lower"] <= sw["n_topics"] <= sw["upper"]
    prov = json.loads((out / "provenance.json").read_text())
    import hashlib

    assert prov["inputs"][0]["sha256"] == hashlib.sha256(small_scores.read_bytes()).hexdigest()
    assert prov["versions"]["numpy"] == np.__version__ and prov["seed"] == 7
    # no leftovers of the temporary folder
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".rep")]


def test_same_seed_byte_identical_results_any_jobs(tmp_path, small_scores):
    from planner.report import dump_json

    # results.json is dump_json(results) (checked in test_study_writes_every_artifact), so
    # compare the runs' JSON text without rendering plots
    cfg = _study(tmp_path / "s.yaml", small_scores)
    a = dump_json(run_study(cfg, quiet=True, write=False).results)
    assert dump_json(run_study(cfg, quiet=True, write=False).results) == a
    assert dump_json(run_study(cfg, quiet=True, jobs=2, write=False).results) == a
    assert dump_json(run_study(cfg, quiet=True, seed=8, write=False).results) != a


def test_existing_report_needs_force(tmp_path, small_scores, capsys):
    cfg = _study(tmp_path / "s.yaml", small_scores, method="analytic", resamples=20)
    out = tmp_path / "rep"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert cli.main(["study", str(cfg), "-o", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "report folder exists" in err and "--force" in err
    assert (out / "keep.txt").read_text() == "mine"
    assert cli.main(["study", str(cfg), "-o", str(out), "--quiet", "--force", "--json", "--seed", "9"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["out"] == str(out) and "text" in printed["answer"]
    # provenance records the command with its options, as given
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["command"] == f"planner study {cfg} -o {out} --force --seed 9 --quiet --json"
    assert prov["seed"] == 9
    assert not (out / "keep.txt").exists() and (out / "report.md").exists()


def test_missing_input_file_is_one_line_exit_2(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump({"collection": {"scores": "nowhere.csv"}, "method": "analytic"}))
    assert cli.main(["study", str(f), "-o", str(tmp_path / "o"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "nowhere.csv" in err and "not found" in err
    assert not (tmp_path / "o").exists()


def test_allocate_largest_remainder_minimum_two():
    from planner.study import _allocate

    # hand calculations
    assert _allocate(10, np.array([0.5, 0.5])).tolist() == [5, 5]
    assert _allocate(100, np.array([43, 54]) / 97).tolist() == [44, 56]    # 44.33, 55.67 -> 44, 56
    assert _allocate(3, np.array([0.9, 0.1])).tolist() == [2, 2]            # minimum 2 per stratum
    assert _allocate(10, np.array([0.95, 0.05])).tolist() == [8, 2]


def test_stacked_strata_width_matches_hand_formula(tmp_path, small_scores):
    from scipy import stats

    from planner.collection import load_scores
    from planner.variance import fit

    # the same collection stacked twice: W = (1/2, 1/2), equal sigma_k^2 = 2 var_e, so
    # V = sum W_k^2 sigma^2 / n_k = sigma^2 / n at n_k = n/2 and width = 2 t_{.975}(n-2) sigma / sqrt(n)
    doc = {"collection": {"stack": [{"scores": str(small_scores), "label": "A"},
                                    {"scores": str(small_scores), "label": "B"}]},
           "method": "analytic", "topics": [10, 40], "resamples": 20,
           "targets": [{"target": "ci_width", "value": 0.15}, {"target": "swap_rate", "value": 0.05}]}
    res = run_study(doc, quiet=True, write=False)
    s = res.results["scenarios"][0]
    sigma2 = 2 * fit(load_scores(small_scores)).var_e
    for row in s["curve"]["rows"]:
        n = row["n_topics"]
        assert row["ci_width_median"] == pytest.approx(2 * stats.t.ppf(0.975, n - 2) * np.sqrt(sigma2 / n),
                                                       rel=1e-12)
    alloc = res.tables["allocation"]
    assert alloc["n_A_proportional"].tolist() == [5, 20] and alloc["n_A_optimal"].tolist() == [5, 20]
    t = {r["target"]: r for r in s["targets"]}
    n = t["ci_width"]["n_topics"]
    w = lambda k: 2 * stats.t.ppf(0.975, k - 2) * np.sqrt(sigma2 / k)  # noqa: E731
    assert w(n) <= 0.15 < w(n - 1) or (n % 2 == 1)   # smallest n (odd n split unevenly)
    assert t["swap_rate"]["n_topics"] is None and "common to all strata" in t["swap_rate"]["how"]
    assert set(res.tables["honest"]["scenario"]) == {f"{s['name']} / A", f"{s['name']} / B"}


def test_progress_bar_on_stderr_unless_quiet(tmp_path, small_scores, capsys):
    doc = {"collection": {"scores": str(small_scores)}, "method": "analytic", "topics": [5, 10],
           "resamples": 10, "targets": [{"target": "erho2", "value": 0.9}]}
    run_study(doc, write=False, quiet=False)
    cap = capsys.readouterr()
    assert "study study" in cap.err and "scenario" in cap.err and cap.out == ""
    run_study(doc, write=False, quiet=True)
    assert capsys.readouterr().err == ""


@pytest.mark.slow
def test_runs_and_qrels_pool_study(tmp_path, shared_data):
    # 5 real DL 2019 runs + the NIST qrels; a pool study over depths 5 and 10
    import shutil

    src = shared_data / "trec-dl2019-passage"
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("bm25base_p", "idst_bert_p1", "p_bert", "TUW19-p3-f", "ICT-BERT2"):
        shutil.copy(src / "runs" / f"{name}.run.gz", runs)
    doc = {"collection": {"runs": str(runs), "qrels": str(src / "qrels.txt")}, "measure": "nDCG@10",
           "method": "analytic", "topics": [10, 43, 100], "resamples": 50,
           "targets": [{"target": "erho2", "value": 0.9}], "pool": {"depths": [5, 10], "tau_min": 0.5},
           "costs": {"topic": 10, "judgment": 1}}
    res = run_study(doc, out=tmp_path / "rep", quiet=True)
    out = Path(res.out)
    pool = pd.read_csv(out / "tables" / "pool.csv")
    assert pool["depth"].tolist() == [5, 10]
    assert (pool["judgments_per_topic"].diff().dropna() > 0).all()       # deeper pool, more judgments
    # cost per topic = topic cost + judgments per topic x judgment cost
    assert np.allclose(pool["cost_per_topic"], 10 + pool["judgments_per_topic"])
    assert (out / "figures" / "pool_depth.png").exists() and (out / "figures" / "budget.png").exists()
    assert res.answer["depth"] in (5, 10)
    h = res.results["scenarios"][0]["honest"]["judged_share"]
    assert h["depth"] == 10 and 0 < h["min"] <= h["mean"] <= 1 and h["runs"] == 5
    assert "Pool bias." in (out / "report.md").read_text()


def test_filter_lists_dropped_topics_with_reason():
    from planner.scores import ScoreMatrix
    from planner.study import _apply_filter

    # hand-made: topic 1 all zero (<= lo), topic 2 all one (>= hi), topic 3 range 0.02
    x = np.array([[0.0, 1.0, 0.50, 0.2, 0.9], [0.0, 1.0, 0.52, 0.6, 0.1], [0.0, 1.0, 0.51, 0.4, 0.5]])
    m = ScoreMatrix.build(x, ["a", "b", "c"], ["1", "2", "3", "4", "5"], warn=False)
    f, rows = _apply_filter(m, {"lo": 0.0, "hi": 1.0, "min_spread": 0.05})
    assert f.topics == ("4", "5")
    assert [(r["topic"], r["reason"]) for r in rows] == [("1", "all <= lo"), ("2", "all >= hi"),
                                                          ("3", "spread < min_spread")]
    assert rows[2]["spread"] == pytest.approx(0.02)
    assert _apply_filter(m, None) == (m, [])


def test_query_variants_three_facet(tmp_path, shared_data):
    import shutil

    from planner.collection import load_scores
    from planner.variance import fit_variants, stack_variants

    src = shared_data / "clef-ehealth2016" / "trec_eval"
    folder = tmp_path / "te"
    folder.mkdir()
    for f in sorted(src.iterdir())[:5]:
        shutil.copy(f, folder)
    doc = {"collection": {"scores": str(folder), "variant_divisor": 1000}, "measure": "P_10",
           "method": "analytic", "topics": [10, 50], "variants": [1, 6], "resamples": 20,
           "targets": [{"target": "erho2", "value": 0.8}]}
    res = run_study(doc, quiet=True, write=False)
    s = res.results["scenarios"][0]
    assert s["data"]["n_topics"] == 50 and s["data"]["n_variants"] == 6
    vt = res.tables["variants"]
    assert vt[["n_topics", "n_variants"]].values.tolist() == [[10, 1], [10, 6], [50, 1], [50, 6]]
    direct = fit_variants(stack_variants(load_scores(folder, measure="P_10"), divisor=1000))
    assert vt["erho2"].tolist() == pytest.approx([direct.erho2(n, v) for n, v in ((10, 1), (10, 6), (50, 1), (50, 6))],
                                                 rel=1e-12)


def test_topic_strata_resampled_within_strata(tmp_path, small_scores):
    topics = pd.read_csv(small_scores, dtype={"topic": str})["topic"].tolist()
    meta = tmp_path / "topics.csv"
    meta.write_text("topic,stratum\n" + "".join(f"{t},{'A' if i < 12 else 'B'}\n" for i, t in enumerate(topics)))
    doc = {"collection": {"scores": str(small_scores), "strata": "topics.csv"}, "method": "bootstrap",
           "strata": ["uniform", "stratified"], "topics": [6, 12], "resamples": 40,
           "targets": [{"target": "erho2", "value": 0.9}]}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(doc))
    res = run_study(tmp_path / "s.yaml", quiet=True, write=False)
    assert [s["settings"]["strata"] for s in res.results["scenarios"]] == ["uniform", "stratified"]
    assert res.results["scenarios"][0]["data"]["strata"] == ["A", "B"]
    comp = res.tables["components"]
    assert any(comp["scenario"].str.endswith("stratum A")) and any(comp["scenario"].str.endswith("stratum B"))
    # stratified without strata is a config error naming the key
    with pytest.raises(ConfigError, match="stratified needs topic strata"):
        run_study({"collection": {"scores": str(small_scores)}, "strata": "stratified", "topics": [6]},
                  quiet=True, write=False)


def test_unwritable_report_folder_fails_before_running(tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert cli.main(["study", "-o", str(blocker / "rep"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "cannot create the report folder" in err and str(blocker / "rep") in err


def test_study_takes_a_validated_predictive_variant(small_scores):
    # a method name `planner validate` prints is a study method too: its curve is
    # planner.simulate.predict's, and the swap target is solved on that curve's method
    from planner.collection import load_scores
    from planner.plan import size_for_target
    from planner.simulate import predict

    doc = {"collection": {"scores": str(small_scores)}, "method": ["predictive", "predictive-integrated"],
           "topics": [10, 40], "resamples": 20, "targets": [{"target": "swap_rate", "value": 0.1}]}
    res = run_study(doc, quiet=True, write=False)
    by = {s["settings"]["method"]: s for s in res.results["scenarios"]}
    assert set(by) == {"predictive", "predictive-integrated"}
    m = load_scores(small_scores)
    ref = predict(m, topics=[10, 40], method="predictive-integrated")
    got = by["predictive-integrated"]["curve"]["rows"]
    assert [r["swap_rate_mean"] for r in got] == pytest.approx([r["swap_rate_mean"] for r in ref.rows], rel=1e-12)
    assert got[0]["swap_rate_mean"] != by["predictive"]["curve"]["rows"][0]["swap_rate_mean"]
    t = by["predictive-integrated"]["targets"][0]
    assert t["n_topics"] == size_for_target(m, target="swap_rate", value=0.1, method="predictive-integrated",
                                            resamples=0).n_topics
    assert t["how"].startswith("predictive-integrated:")
    # the interval on n re-solves every topic resample with the same pilot-aware method
    assert "predictive-integrated re-solve" in t["how"]
    assert t["lower"] is not None and t["lower"] <= t["n_topics"] <= (t["upper"] or np.inf)

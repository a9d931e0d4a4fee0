"""Scoring runs (planner.measures.score_runs), pool statistics and restricted qrels."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from planner.collection import read_run
from planner.errors import DegenerateDataWarning, InputError, ParameterError, PlannerWarning
from planner.measures import pool_stats, rank_frame, restrict_qrels, score_runs

QRELS = "1 0 a 0\n1 0 b 2\n1 0 c 1\n2 0 x 2\n2 0 y 3\n"
RUN_A = "1 Q0 a 1 3.0 A\n1 Q0 b 2 2.0 A\n1 Q0 c 3 1.0 A\n2 Q0 x 1 5 A\n2 Q0 z 2 4 A\n"
RUN_B = "1 Q0 c 1 3.0 B\n1 Q0 b 2 1.0 B\n2 Q0 z 1 9 B\n2 Q0 y 2 8 B\n2 Q0 x 3 7 B\n"

REF_FILES = {"nDCG@10": "nDCG_at_10", "AP(rel=2)": "AP_rel2", "RR(rel=2)": "RR_rel2",
             "P(rel=2)@10": "P_rel2_at_10", "RBP(rel=2,p=0.8)": "RBP_p0.8_rel2"}


def _runs():
    return {"A": read_run(RUN_A), "B": read_run(RUN_B)}


def test_small_collection_hand_values():
    res = score_runs(_runs(), QRELS, ["RR(rel=2)", "P(rel=2)@10", "AP(rel=2)", "RBP(rel=2,p=0.8)"])
    rr, p10, ap, rbp = (res[k] for k in ("RR(rel=2)", "P(rel=2)@10", "AP(rel=2)", "RBP(rel=2,p=0.8)"))
    assert rr.systems == ("A", "B") and rr.topics == ("1", "2")
    # hand calculation. A: topic 1 relevant (grade>=2) b at rank 2; topic 2 x at rank 1, y unretrieved
    # B: topic 1 b at rank 2; topic 2 y at rank 2, x at rank 3
    np.testing.assert_allclose(rr.values, [[1 / 2, 1.0], [1 / 2, 1 / 2]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(p10.values, [[0.1, 0.1], [0.1, 0.2]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(ap.values, [[0.5, 0.5], [0.5, (1 / 2 + 2 / 3) / 2]], rtol=0, atol=1e-15)
    # RBP = (1-p) sum p^(i-1) rel_i
    np.testing.assert_allclose(rbp.values, [[0.2 * 0.8, 0.2], [0.2 * 0.8, 0.2 * (0.8 + 0.64)]],
                               rtol=0, atol=1e-15)
    # RBP@k sums the first k ranks only (the cut-off used to be ignored): B's x at rank 3
    # drops out at @2, and at @1 only A's x on topic 2 is left
    cut = score_runs(_runs(), QRELS, ["RBP(rel=2,p=0.8)@2", "RBP(rel=2,p=0.8)@1"])
    np.testing.assert_allclose(cut["RBP(rel=2,p=0.8)@2"].values, [[0.2 * 0.8, 0.2], [0.2 * 0.8, 0.2 * 0.8]],
                               rtol=0, atol=1e-15)
    np.testing.assert_allclose(cut["RBP(rel=2,p=0.8)@1"].values, [[0, 0.2], [0, 0]], rtol=0, atol=1e-15)


def test_trec_eval_tie_order_for_prefix_ids():
    # two documents tied at 1.0; trec_eval (strcmp, descending) puts "6981317" before "69813"
    runs = {"A": read_run("1 Q0 69813 1 1.0 A\n1 Q0 6981317 2 1.0 A\n2 Q0 q 1 1 A\n"),
            "B": read_run("1 Q0 69813 1 2.0 B\n2 Q0 q 1 1 B\n")}
    q = "1 0 69813 2\n2 0 q 2\n"
    res = score_runs(runs, q, ["RR(rel=2)", "RBP(rel=2,p=0.8)"], warn=False)
    assert res["RR(rel=2)"].values[0, 0] == 0.5  # pytrec_eval's own tie order
    assert res["RBP(rel=2,p=0.8)"].values[0, 0] == pytest.approx(0.2 * 0.8, abs=1e-15)  # same order
    file_order = score_runs(runs, q, ["RBP(rel=2,p=0.8)"], ties="file", warn=False)
    assert file_order["RBP(rel=2,p=0.8)"].values[0, 0] == pytest.approx(0.2, abs=1e-15)


def test_rank_frame_orders_ties_by_docid_descending():
    r = read_run("1 Q0 b 1 1.0 s\n1 Q0 c 2 1.0 s\n1 Q0 a 3 2.0 s\n2 Q0 z 1 0 s\n")
    f = rank_frame(r)
    assert f["doc_id"].tolist() == ["a", "c", "b", "z"] and f["rank"].tolist() == [0, 1, 2, 0]
    assert rank_frame(r, ties="file")["doc_id"].tolist() == ["a", "b", "c", "z"]


def test_missing_and_extra_topics_reported():
    runs = {"A": read_run("1 Q0 b 1 1 A\n3 Q0 b 1 1 A\n"), "B": read_run(RUN_B)}
    with pytest.warns(PlannerWarning, match="1 \\(run, topic\\) cells scored 0"):
        m = score_runs(runs, QRELS, "RR(rel=2)")["RR(rel=2)"]
    assert m.topics == ("1", "2")  # topic 3 dropped: not judged
    assert m.values[0, 1] == 0.0  # topic 2 missing from run A: 0 (trec_eval -c)
    rep = m.meta["report"]
    assert rep["A"] == {"filled": ["2"], "dropped": ["3"], "duplicates": 0}
    assert rep["B"] == {"filled": [], "dropped": [], "duplicates": 0}
    assert m.meta["n_filled"] == 1 and m.meta["n_dropped"] == 1
    with pytest.raises(InputError, match="missing cell"):
        score_runs(runs, QRELS, "RR(rel=2)", missing_topic="error")
    with pytest.raises(InputError, match="need at least 2 topics"):
        score_runs(runs, QRELS, "RR(rel=2)", missing_topic="drop-topic")


def test_bad_measure_and_no_common_topic():
    with pytest.raises(ParameterError, match="unknown measure 'FOO@3'"):
        score_runs(_runs(), QRELS, ["FOO@3"])
    with pytest.raises(ParameterError, match="unknown measure 'AP\\(rel=2'"):
        score_runs(_runs(), QRELS, "AP(rel=2")
    # trec_eval's limits: cut-offs >= 1 (pytrec_eval aborts on @0, Judged@0 divides by 0) and
    # 32-bit integer parameters (a larger rel raised a TypeError inside pytrec_eval)
    for m, needle in (("nDCG@0", "the cut-off must be an integer >= 1, got 0"),
                      ("Judged@0", "the cut-off must be an integer >= 1, got 0"),
                      ("P@2.5", "the cut-off must be an integer >= 1, got 2.5"),
                      ("AP(rel=99999999999)", "rel=99999999999 is out of range")):
        with pytest.raises(ParameterError, match=re.escape(f"measure {m!r}: {needle}")):
            score_runs(_runs(), QRELS, [m])
    assert set(score_runs(_runs(), QRELS, ["P@1", "AP(rel=2147483647)"], missing_topic="zero")) >= {"P@1"}
    with pytest.raises(InputError, match="no topic in common"):
        score_runs(_runs(), "7 0 a 1\n8 0 b 1\n", ["AP"])
    with pytest.raises(ParameterError, match="missing_topic"):
        score_runs(_runs(), QRELS, ["AP"], missing_topic="nope")


def test_other_ir_measures_measures():
    with pytest.warns(DegenerateDataWarning, match="Judged@2: systems identical on every topic: A = B"):
        res = score_runs(_runs(), QRELS, ["Judged@2", "nDCG@3"])
    # Judged@2: share of the top 2 that is judged. A topic 2: x judged, z not -> 0.5
    assert res["Judged@2"].values[0, 1] == 0.5
    assert res["Judged@2"].values[1, 0] == 1.0


def test_pool_stats_hand_values():
    ps = pool_stats(_runs(), QRELS, depths=[1, 2])
    t = ps.topics.set_index(["depth", "topic"])
    # depth 1: topic 1 {a, c}, topic 2 {x, z}; depth 2: topic 1 {a, b, c}, topic 2 {x, z, y}
    assert t.loc[(1, "1"), "pool_size"] == 2 and t.loc[(1, "1"), "judged"] == 2
    assert t.loc[(1, "2"), "pool_size"] == 2 and t.loc[(1, "2"), "judged"] == 1
    assert t.loc[(2, "2"), "pool_size"] == 3 and t.loc[(2, "2"), "judged"] == 2
    assert t.loc[(2, "2"), "unjudged"] == 1 and t.loc[(2, "1"), "relevant"] == 2
    r = ps.runs.set_index(["depth", "run"])
    # run B depth 2: topic 1 {c, b} all judged; topic 2 {z, y}: 1 of 2 -> mean 0.75
    assert r.loc[(2, "B"), "judged_share"] == 0.75 and r.loc[(2, "B"), "judged_share_min"] == 0.5
    d = ps.to_dict()
    assert d["depths"] == [1, 2] and len(d["topics"]) == 4
    only_a = pool_stats(_runs(), QRELS, depths=2, pool_runs=["A"])
    assert only_a.runs.set_index(["depth", "run"]).loc[(2, "B"), "in_pool"] == False  # noqa: E712
    assert only_a.topics.set_index(["depth", "topic"]).loc[(2, "2"), "pool_size"] == 2
    with pytest.raises(ParameterError, match="pool_runs"):
        pool_stats(_runs(), QRELS, depths=[1], pool_runs=["C"])
    with pytest.raises(ParameterError, match="depths"):
        pool_stats(_runs(), QRELS, depths=[0])


def test_restrict_qrels():
    q = restrict_qrels(QRELS, _runs(), depth=1)
    assert q == {"1": {"a": 0, "c": 1}, "2": {"x": 2}}
    # re-scoring with the depth-1 pool: b (relevant) is now unjudged = non-relevant
    rr = score_runs(_runs(), q, "RR(rel=2)", missing_topic="zero", warn=False)["RR(rel=2)"]
    assert rr.values[0, 0] == 0.0 and rr.values[0, 1] == 1.0


# ------------------------------------------------------------ real data
def _reference(folder, measure):
    ref = pd.read_csv(folder / "reference" / f"matrix_official_{REF_FILES[measure]}.csv", index_col=0)
    ref.index = ref.index.astype(str)
    return ref


def _compare(res, folder, systems):
    diffs = {}
    for k in REF_FILES:
        ref = _reference(folder, k)[list(systems)]
        mine = res[k].to_frame().loc[ref.index, ref.columns]
        diffs[k] = np.abs(mine.to_numpy() - ref.to_numpy())
    return diffs


@pytest.mark.slow
def test_dl19_subset_matches_reference(shared_data):
    folder = shared_data / "trec-dl2019-passage"
    names = ["ICT-BERT2", "TUA1-1", "bm25base_p", "idst_bert_p1", "p_exp_rm3_bert", "runid2"]
    runs = {n: read_run(folder / "runs" / f"{n}.run.gz") for n in names}
    res = score_runs(runs, folder / "qrels.txt", list(REF_FILES), warn=False)
    for k, d in _compare(res, folder, names).items():
        assert d.max() <= 1e-9, k


def test_dl20_rbp_differences_explained(shared_data):
    """The only two RBP cells of DL 2020 that differ from the reference: topic 1051399,
    where relevant passage 69813 ties (score 1.0) with unjudged passage 6981317. trec_eval
    order puts 6981317 first; the reference has 69813 one rank earlier, so the difference
    is exactly (1-p) * p^(r-1) * (1-p) for the reference's 0-based rank r of 69813."""
    folder = shared_data / "trec-dl2020-passage"
    names = ["DoRA_Large_1k", "med_1k"]
    runs = {n: read_run(folder / "runs" / f"{n}.run.gz") for n in names}
    res = score_runs(runs, folder / "qrels.txt", list(REF_FILES), warn=False)
    diffs = _compare(res, folder, names)
    for k in ("nDCG@10", "AP(rel=2)", "RR(rel=2)", "P(rel=2)@10"):
        assert diffs[k].max() <= 1e-9, k
    ref = _reference(folder, "RBP(rel=2,p=0.8)")
    mine = res["RBP(rel=2,p=0.8)"].to_frame()
    bad = [(t, s) for t in ref.index for s in names if abs(mine.loc[t, s] - ref.loc[t, s]) > 1e-9]
    assert bad == [("1051399", "DoRA_Large_1k"), ("1051399", "med_1k")]
    for s, r in (("DoRA_Large_1k", 25), ("med_1k", 21)):
        f = rank_frame(runs[s])
        f = f[f["query_id"] == "1051399"].set_index("doc_id")
        assert f.loc["69813", "rank"] == r + 1 and f.loc["6981317", "rank"] == r
        assert ref.loc["1051399", s] - mine.loc["1051399", s] == pytest.approx(0.04 * 0.8 ** r, abs=1e-15)


@pytest.mark.slow
def test_half_of_dl20_matches_reference(shared_data):
    """Every other DL 2020 run (30 of 59) scored from the run files. All runs of both
    collections are checked through the shipped data sets (tests/test_datasets.py),
    which scripts/make_datasets.py --check rebuilds byte for byte from the runs."""
    folder = shared_data / "trec-dl2020-passage"
    files = sorted((folder / "runs").iterdir())[::2]
    runs = {f.name[: -len(".run.gz")]: read_run(f) for f in files}
    runs.setdefault("DoRA_Large_1k", read_run(folder / "runs" / "DoRA_Large_1k.run.gz"))
    res = score_runs(runs, folder / "qrels.txt", list(REF_FILES), warn=False)
    diffs = _compare(res, folder, list(runs))
    for k in ("nDCG@10", "AP(rel=2)", "RR(rel=2)", "P(rel=2)@10"):
        assert diffs[k].max() <= 1e-9, k
    bad = int((diffs["RBP(rel=2,p=0.8)"] > 1e-9).sum())
    assert bad == ("med_1k" in runs) + 1  # the explained cells of test_dl20_rbp_differences_explained


# ------------------------------------------------------------------ CLI
def _write_collection(d):
    (d / "runs").mkdir()
    (d / "runs" / "A.run").write_text(RUN_A)
    (d / "runs" / "B.run").write_text(RUN_B)
    (d / "qrels.txt").write_text(QRELS)
    return d / "runs", d / "qrels.txt"


@pytest.mark.slow
def test_trec_eval_measure_names_are_accepted(tmp_path, shared_data):
    # trec_eval users write ndcg_cut_10, map, P_10, recip_rank; with runs + qrels they were
    # "unknown measure" although the same names select trec_eval folders (organiser walkthrough)
    import warnings

    from planner.collection import read_runs
    from planner.errors import DegenerateDataWarning
    from planner.measures import parse_measures, score_runs

    assert {k: str(v) for k, v in parse_measures(["ndcg_cut_10", "map", "P_10", "recip_rank"]).items()} == \
        {"ndcg_cut_10": "nDCG@10", "map": "AP", "P_10": "P@10", "recip_rank": "RR"}
    runs = read_runs(shared_data / "trec-dl2019-passage" / "runs", pattern="bm25*")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        res = score_runs(runs, shared_data / "trec-dl2019-passage" / "qrels.txt", ["ndcg_cut_10", "nDCG@10"])
    np.testing.assert_array_equal(res["ndcg_cut_10"].values, res["nDCG@10"].values)
    assert res["ndcg_cut_10"].measure == "ndcg_cut_10"
    with pytest.raises(ParameterError, match="unknown measure 'FOO@3'"):
        parse_measures(["FOO@3"])


def test_cli_scores_from_runs(tmp_path, capsys):
    from planner.cli import main

    runs, qrels = _write_collection(tmp_path)
    assert main(["scores", "--runs", str(runs), "--qrels", str(qrels), "--measure", "RR(rel=2)"]) == 0
    assert capsys.readouterr().out.splitlines() == ["topic,A,B", "1,0.5,0.5", "2,1.0,0.5"]
    assert main(["scores", "--runs", str(runs), "--qrels", str(qrels), "--measure", "RR(rel=2)",
                 "--measure", "RBP(rel=2,p=0.8)"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "system,topic,value,measure" and len(lines) == 9
    assert main(["scores", "--runs", str(runs), "--qrels", str(qrels), "--measure", "FOO@3"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("planner scores: error: --measure: unknown measure 'FOO@3'") and err.count("\n") == 1
    # a cut-off of 0 used to abort the interpreter inside pytrec_eval (SIGABRT, no message)
    for m in ("nDCG@0", "P@0"):
        assert main(["scores", "--runs", str(runs), "--qrels", str(qrels), "--measure", m]) == 2
        err = capsys.readouterr().err
        assert err == f"planner scores: error: --measure: measure {m!r}: the cut-off must be an integer >= 1, got 0\n"


def test_cli_pool(tmp_path, capsys):
    import json

    from planner.cli import main

    runs, qrels = _write_collection(tmp_path)
    assert main(["pool", "--runs", str(runs), "--qrels", str(qrels), "--depth", "1,2"]) == 0
    out = capsys.readouterr().out
    assert "pool of 2 runs; qrels: 5 judgments" in out and "pool_size_total" in out
    assert main(["pool", "--runs", str(runs), "--qrels", str(qrels), "--depth", "2", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["depths"] == [2] and {r["topic"]: r["pool_size"] for r in d["topics"]} == {"1": 3, "2": 3}
    # --depths, as planner budget spells it, is the same option
    assert main(["pool", "--runs", str(runs), "--qrels", str(qrels), "--depths", "2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["depths"] == [2]
    assert main(["pool", "--runs", str(runs), "--qrels", str(qrels), "--depth", "2", "--per", "run"]) == 0
    assert "judged_share@2" in capsys.readouterr().out
    assert main(["pool", "--runs", str(runs), "--qrels", str(qrels), "--depth", "0"]) == 2
    assert "--depth: values must be >= 1" in capsys.readouterr().err
    (tmp_path / "runs" / "C.run").write_text("1 Q0 a 1 x C\n")
    assert main(["pool", "--runs", str(runs), "--qrels", str(qrels)]) == 2
    assert "C.run:1: non-numeric score 'x'" in capsys.readouterr().err


def test_folder_mapping_and_dict_inputs_agree(tmp_path):
    from planner.collection import read_runs

    runs_dir, qrels_path = _write_collection(tmp_path)
    ms = ["AP(rel=2)", "RBP(rel=2,p=0.8)"]
    a = score_runs(runs_dir, qrels_path, ms)
    b = score_runs(read_runs(runs_dir), {"1": {"a": 0, "b": 2, "c": 1}, "2": {"x": 2, "y": 3}}, ms)
    c = score_runs({"A": read_run(RUN_A).topics, "B": str(runs_dir / "B.run")}, QRELS, ms)
    for k in ms:
        np.testing.assert_array_equal(a[k].values, b[k].values)
        np.testing.assert_array_equal(a[k].values, c[k].values)
        assert a[k].systems == b[k].systems == c[k].systems == ("A", "B")
    assert list(read_runs(runs_dir, pattern="B*")) == ["B"]


def test_pool_summary_separates_the_pool_s_judged_share_from_the_runs_mean():
    # the summary's judged_share_mean (0.892 at DL 2019 depth 20) read as the pool's share, which
    # is 3126 / 4926 = 0.635 (CLI output audit)
    from planner import datasets

    s = datasets.load_pool("dl19-passage").summary().set_index("depth")
    assert "judged_share_mean" not in s.columns
    r = s.loc[20]
    assert r["pool_judged_share"] == pytest.approx(r["judged_total"] / r["pool_size_total"])
    assert r["pool_judged_share"] == pytest.approx(0.6346, abs=1e-4)
    assert r["run_judged_share_mean"] == pytest.approx(0.8919, abs=1e-4)

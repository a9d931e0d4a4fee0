"""Runs and qrels from the tools IR users already have (ranx, ir_measures, ir_datasets, pandas,
trectools, pytrec_eval), each through the real library: the real TREC DL 2019 runs and qrels
score exactly as the same files read by planner, whatever form they are given in."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pandas as pd
import pytest

import planner
from planner.collection.interop import native_runs, qrels_mapping
from planner.errors import InputError, ParameterError

#: three official DL 2019 passage runs of different depths (re-rankers and a full ranker)
RUNS = ("ICT-CKNRM_B", "ICT-BERT2", "srchvrs_ps_run2")
MEASURES = ["nDCG@10", "AP(rel=2)", "RBP(rel=2,p=0.8)"]
IRDS_ID = "msmarco-passage/trec-dl-2019/judged"


@pytest.fixture(scope="module")
def dl19(shared_data):
    """(run name -> path, qrels path) of the DL 2019 passage task."""
    base = shared_data / "trec-dl2019-passage"
    return {n: base / "runs" / f"{n}.run.gz" for n in RUNS}, base / "qrels.txt"


@pytest.fixture(scope="module")
def reference(dl19):
    paths, qrels = dl19
    return planner.score_runs(paths, qrels, MEASURES)


def assert_same(ref, got):
    for k in MEASURES:
        assert got[k].systems == ref[k].systems
        assert got[k].topics == ref[k].topics
        np.testing.assert_array_equal(got[k].values, ref[k].values)


def test_reference_is_not_trivial(reference):
    """The comparisons below compare real, distinct numbers."""
    m = reference["nDCG@10"]
    assert m.shape == (3, 43)
    assert len({round(float(x), 6) for x in m.system_means()}) == 3
    assert 0.3 < float(m.values.mean()) < 0.8


def test_ir_measures_records(dl19, reference):
    ir_measures = pytest.importorskip("ir_measures")
    paths, qrels = dl19
    runs = {n: ir_measures.read_trec_run(str(p)) for n, p in paths.items()}   # generators of ScoredDoc
    assert_same(reference, planner.score_runs(runs, ir_measures.read_trec_qrels(str(qrels)), MEASURES))


def test_pandas_frames(dl19, reference):
    ir_measures = pytest.importorskip("ir_measures")
    paths, qrels = dl19
    tidy = pd.concat([pd.DataFrame(ir_measures.read_trec_run(str(p))).assign(run=n) for n, p in paths.items()])
    qframe = pd.DataFrame(ir_measures.read_trec_qrels(str(qrels)))
    assert list(qframe.columns[:3]) == ["query_id", "doc_id", "relevance"]
    assert_same(reference, planner.score_runs(tidy, qframe, MEASURES))
    # PyTerrier's column names, one frame a run in a mapping
    pyterrier = {n: g.drop(columns="run").rename(columns={"query_id": "qid", "doc_id": "docno"})
                 for n, g in tidy.groupby("run", sort=False)}
    labels = qframe.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    assert_same(reference, planner.score_runs(pyterrier, labels, MEASURES))


def test_pytrec_eval_dicts(dl19, reference):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    paths, qrels = dl19
    runs = {}
    for n, p in paths.items():
        with gzip.open(p, "rt") as f:
            runs[n] = pytrec_eval.parse_run(f)
    with open(qrels) as f:
        judged = pytrec_eval.parse_qrel(f)
    assert_same(reference, planner.score_runs(runs, judged, MEASURES))
    # one pytrec_eval run on its own (a raw TypeError before): the same pool as its file
    one = planner.pool_stats(runs[RUNS[1]], judged, depths=[10, 100])
    ref = planner.pool_stats(paths[RUNS[1]], qrels, depths=[10, 100])
    pd.testing.assert_frame_equal(one.topics, ref.topics)
    assert one.runs["judged_share"].tolist() == ref.runs["judged_share"].tolist()
    assert list(native_runs(runs[RUNS[1]])) == ["run"]


@pytest.mark.filterwarnings("ignore:The inplace keyword")   # trectools' own sort on pandas 3
def test_trectools_objects(dl19, reference):
    trectools = pytest.importorskip("trectools")
    paths, qrels = dl19
    runs = [trectools.TrecRun(str(p)) for p in paths.values()]       # named by their tag column
    assert_same(reference, planner.score_runs(runs, trectools.TrecQrel(str(qrels)), MEASURES))


@pytest.mark.slow
def test_ranx_objects(dl19, reference, tmp_path):
    """ranx converts through numba: about 20 s a type on first use in a process."""
    ranx = pytest.importorskip("ranx")
    paths, qrels = dl19
    runs = []
    for n, p in paths.items():
        plain = tmp_path / f"{n}.trec"          # ranx reads uncompressed files only
        plain.write_bytes(gzip.decompress(p.read_bytes()))
        runs.append(ranx.Run.from_file(str(plain), kind="trec", name=n))
    assert_same(reference, planner.score_runs(runs, ranx.Qrels.from_file(str(qrels), kind="trec"), MEASURES))


# ------------------------------------------------------------ ir_datasets
_IRDS_SCRIPT = textwrap.dedent("""
    import json, shutil, subprocess, sys
    from pathlib import Path
    import planner
    from planner.errors import InputError
    home, qrels, runs, out = (Path(a) for a in sys.argv[1:5])
    try:                                   # nothing on disk: an error, and nothing fetched
        planner.read_qrels("irds:{id}")
    except InputError as exc:
        missing = str(exc)
    cli = subprocess.run([sys.executable, "-m", "planner", "pool", "--runs", str(runs),
                          "--qrels", "irds:{id}", "--depth", "10"], capture_output=True, text=True)
    dest = home / "msmarco-passage" / "trec-dl-2019" / "qrels"   # where ir_datasets keeps them
    dest.parent.mkdir(parents=True)
    shutil.copy(qrels, dest)
    m = planner.score_runs(runs, "irds:{id}", {measures!r})
    out.write_text(json.dumps({{"missing": missing, "cli": [cli.returncode, cli.stderr.strip()],
                               "values": {{k: v.values.tolist() for k, v in m.items()}},
                               "systems": list(m["AP(rel=2)"].systems)}}))
""")


def test_ir_datasets_id_offline(dl19, reference, tmp_path):
    """``irds:<id>`` reads ir_datasets' own copy of the qrels, and only when it is on disk: in
    a fresh ir_datasets home it is an error saying how to fetch them (nothing downloaded);
    with the NIST qrels file in place, the scores equal the reference."""
    pytest.importorskip("ir_datasets")
    paths, qrels = dl19
    runs = tmp_path / "runs"
    runs.mkdir()
    for p in paths.values():
        shutil.copy(p, runs / p.name)
    home, out = tmp_path / "irds", tmp_path / "out.json"
    script = tmp_path / "irds.py"
    script.write_text(_IRDS_SCRIPT.format(id=IRDS_ID, measures=MEASURES))
    env = dict(os.environ, IR_DATASETS_HOME=str(home), PYTHONPATH=os.pathsep.join(sys.path))
    done = subprocess.run([sys.executable, str(script), str(home), str(qrels), str(runs), str(out)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    got = json.loads(out.read_text())
    assert f"irds:{IRDS_ID}: the qrels are not on disk" in got["missing"]
    assert f"ir_datasets export {IRDS_ID} qrels" in got["missing"]
    code, stderr = got["cli"]
    assert code == 2 and len(stderr.splitlines()) == 1 and "not on disk" in stderr, stderr
    assert got["systems"] == sorted(RUNS)
    order = [reference["AP(rel=2)"].systems.index(s) for s in got["systems"]]
    for k in MEASURES:
        np.testing.assert_array_equal(np.array(got["values"][k]), reference[k].values[order])


def test_ir_datasets_id_in_user_home(dl19, reference):
    """The user's own ir_datasets copy, when it is there (never downloaded by the test)."""
    ir_datasets = pytest.importorskip("ir_datasets")
    from planner.collection.interop import on_disk

    if not on_disk(ir_datasets.load(IRDS_ID).qrels_handler()):
        pytest.skip(f"ir_datasets qrels of {IRDS_ID} are not on disk here (not downloaded by tests)")
    paths, _ = dl19
    assert_same(reference, planner.score_runs(paths, f"irds:{IRDS_ID}", MEASURES))


def test_ir_datasets_records_and_data_set():
    """ir_datasets' record types are read like ir_measures' (no data needed)."""
    ir_datasets = pytest.importorskip("ir_datasets")
    from ir_datasets.formats import GenericScoredDoc, TrecQrel

    qrels, _ = qrels_mapping([TrecQrel("1", "d1", 2, "0"), TrecQrel("1", "d2", 0, "0")])
    assert qrels == {"1": {"d1": 2, "d2": 0}}
    run = native_runs(iter([GenericScoredDoc("1", "d2", 3.0), GenericScoredDoc("1", "d1", 1.0)]))
    assert run.frame["doc_id"].tolist() == ["d2", "d1"]
    with pytest.raises(InputError, match="has no qrels"):
        planner.read_qrels(ir_datasets.load("antique"))
    with pytest.raises(ParameterError, match="knows no data set 'no/such'"):
        planner.read_qrels("irds:no/such")


# --------------------------------------------------------------- bad input
@pytest.mark.parametrize("runs, match", [
    (42, r"runs: got int; runs may be .*a ranx Run.*pytrec_eval"),
    ({"a": 42}, r"runs: run 'a': got int; runs may be"),
    ([{"1": {"d": 1.0}}, 3.5], r"runs: item 2: got float"),
    ({"a": {"1": {"d": 1.0}}, "b": {"1": 5.0}},
     r"run 'b': expected \{query: \{doc: score\}\}, found query '1' mapped to float"),
    (pd.DataFrame({"query": ["1"], "x": [1]}), r"a run frame needs columns query_id .* found query, x"),
    (pd.DataFrame({"qid": ["1"], "docno": ["d"], "score": [float("nan")]}),
     r"run 'run': score of document 'd' for query '1' must be a finite number"),
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["d", "d"], "score": [1.0, 2.0]}),
     r"document 'd' repeated for query '1' \(duplicates='first'"),
    ({"1": {"d\x00": 1.0}}, r"document id 'd\\x00' holds the control character"),
])
def test_bad_runs_name_what_was_given(runs, match):
    with pytest.raises(ParameterError, match=match):
        planner.pool_stats(runs, {"1": {"d": 1}}, depths=[1])


def test_duplicates_first_keeps_the_first():
    frame = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["a", "b", "a"], "score": [1.0, 2.0, 9.0]})
    (run,) = native_runs(frame, duplicates="first").values()
    assert run.frame["score"].tolist() == [1.0, 2.0]


@pytest.mark.parametrize("qrels, match", [
    (42, r"qrels: got int; qrels may be .*ranx Qrels.*irds:<id>"),
    ({"1": 2}, r"found a query mapped to int"),
    ({"1": {"d": 1.5}}, r"grade of document 'd' for query '1' must be an integer, got 1.5"),
    ({"1": {"d": 2 ** 40}}, r"grade 1099511627776 is out of range"),
    (pd.DataFrame({"query_id": ["1"], "doc_id": ["d"]}), r"a qrels frame needs columns .* found query_id, doc_id"),
    (pd.DataFrame({"qid": ["1", "1"], "docno": ["d", "d"], "rel": [1, 2]}),
     r"document 'd' judged twice for query '1' with different grades \(1 and 2\)"),
])
def test_bad_qrels_name_what_was_given(qrels, match):
    with pytest.raises(ParameterError, match=match):
        planner.read_qrels(qrels)

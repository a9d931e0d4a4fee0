"""Readers of planner.collection: runs, qrels, trec_eval -q, score tables, topics."""

from __future__ import annotations

import gzip
import json
import warnings

import numpy as np
import pandas as pd
import pytest

from planner.collection import (
    Qrels,
    load_scores,
    read_qrels,
    read_run,
    read_runs,
    read_topics,
    read_trec_eval,
    run_name,
)
from planner.errors import DegenerateDataWarning, InputError, ParameterError, PlannerWarning

RUN = """\
1 Q0 d1 1 3.5 sysA
1 Q0 d2 2 2.0 sysA
1 0 d3 3 1.0 sysA
2 q0 d1 1 0.5 sysA
"""


# ---------------------------------------------------------------- runs
def test_read_run_text_accepts_q0_variants():
    r = read_run(RUN)
    assert r.name == "sysA"  # from the tag column when reading a text
    assert len(r) == 4
    assert r.topics == {"1": {"d1": 3.5, "d2": 2.0, "d3": 1.0}, "2": {"d1": 0.5}}
    assert r.frame["score"].dtype == np.float64


def test_read_run_tabs_and_gzip(tmp_path):
    p = tmp_path / "sysA.run.gz"
    p.write_bytes(gzip.compress(RUN.replace(" ", "\t").encode()))
    r = read_run(p)
    assert r.name == "sysA" and r.source == str(p)
    assert r.topics["1"]["d2"] == 2.0


def test_read_run_ignores_rank_column_but_keeps_scores():
    r = read_run("1 Q0 a 7 0.25 x\n1 Q0 b 1 0.75 x\n")
    assert r.topics["1"] == {"a": 0.25, "b": 0.75}


@pytest.mark.parametrize("text,line,needle", [
    ("1 Q0 d1 1 3.5 s\n1 Q0 d2 2 2.0\n", 2, "expected 6 columns"),          # truncated line
    ("1 Q0 d1 1 3.5 s\n\n1 Q0 d2 2 abc s\n", 3, "non-numeric score 'abc'"),  # non-numeric, after a blank line
    ("1 Q0 d1 1 3.5 s\n1 X d2 2 1 s\n", 2, "second column"),
    ("1 Q0 d1 1 3.5 s\n1 Q0 d2 2 1 s extra\n", 2, "expected 6 columns"),
    ("1 Q0 d1 1 inf s\n", 1, "finite"),
])
def test_read_run_bad_lines_name_the_line(tmp_path, text, line, needle):
    p = tmp_path / "bad.run"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        read_run(p)
    assert e.value.line == line and e.value.file == str(p)
    assert needle in str(e.value)
    assert str(e.value).startswith(f"{p}:{line}: ")


def test_read_run_repeated_document(tmp_path):
    p = tmp_path / "dup.run"
    p.write_text("1 Q0 a 1 3 s\n1 Q0 b 2 2 s\n2 Q0 a 1 1 s\n1 Q0 a 3 1 s\n")
    with pytest.raises(InputError) as e:
        read_run(p)
    assert e.value.line == 4 and "'a' repeated for topic '1'" in str(e.value)
    assert "--duplicates first" in str(e.value)  # the option as typed on the command line
    r = read_run(p, duplicates="first", warn=False)
    assert r.topics["1"] == {"a": 3.0, "b": 2.0} and len(r) == 3
    with pytest.raises(ParameterError):
        read_run(p, duplicates="last")
    # two runs in one file: the advice to keep the first occurrence would drop the second run
    # silently (fuzz audit 2026-11-30); the error names both tags
    p.write_text("1 Q0 a 1 3 A\n1 Q0 b 2 2 A\n\n1 Q0 b 1 3 B\n1 Q0 a 2 2 B\n")
    with pytest.raises(InputError, match=r"dup\.run:4: document 'b' repeated for topic '1' under another tag "
                                         r"\('B'; 'A' on line 2\): the file holds 2 runs \('A', 'B'\); give each "
                                         r"run its own file"):
        read_run(p, warn=False)


def test_read_run_empty_and_missing_and_corrupt(tmp_path):
    e1 = tmp_path / "empty.run"
    e1.write_text("\n  \n")
    with pytest.raises(InputError, match="empty run file"):
        read_run(e1)
    with pytest.raises(InputError, match="no such run file"):
        read_run(tmp_path / "nope.run")
    bad = tmp_path / "x.run.gz"
    bad.write_bytes(gzip.compress(RUN.encode())[:30])  # truncated gzip stream
    with pytest.raises(InputError, match="corrupt gzip") as e:
        read_run(bad)
    assert e.value.file == str(bad)


def test_tag_disagreeing_warns(tmp_path):
    p = tmp_path / "other.run"
    p.write_text(RUN)
    with pytest.warns(PlannerWarning, match=r"disagrees with the run name .*: 'other' \(tag 'sysA'\)"):
        r = read_run(p)
    assert r.name == "other" and r.tags == ("sysA",)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_run(p, warn=False)
        (tmp_path / "sysA.txt").write_text(RUN)
        assert read_run(tmp_path / "sysA.txt").name == "sysA"  # agrees: no warning


def test_run_name_strips_known_extensions_only():
    assert run_name("a/ICT-BERT2.run.gz") == "ICT-BERT2"
    assert run_name("terrier.BM25.spam50_EN_Run1.res") == "terrier.BM25.spam50_EN_Run1"
    assert run_name("x.y.z") == "x.y.z"


def test_read_runs_folder(tmp_path):
    (tmp_path / "b.run").write_text(RUN.replace("sysA", "b"))
    (tmp_path / "a.run").write_text(RUN.replace("sysA", "a"))
    (tmp_path / ".hidden").write_text("junk")
    runs = read_runs(tmp_path)
    assert list(runs) == ["a", "b"]
    (tmp_path / "a.txt").write_text(RUN.replace("sysA", "a"))
    with pytest.raises(InputError, match="two files give run name 'a'"):
        read_runs(tmp_path)


def test_read_real_run(shared_data):
    r = read_run(shared_data / "trec-dl2019-passage" / "runs" / "ICT-BERT2.run.gz")
    assert r.name == "ICT-BERT2" and r.tags == ("ICT-BERT2",)
    # first line of the file (zcat | head -1): 19335 Q0 8412682 1 4.0694156 ICT-BERT2
    assert r.topics["19335"]["8412682"] == pytest.approx(4.0694156, abs=0)
    assert r.n_topics == 43  # the 43 judged DL 2019 queries (data README)


# ---------------------------------------------------------------- qrels
def test_read_qrels_and_errors(tmp_path):
    q = read_qrels("1 0 a 2\n1 0 b 0\n2 0 a 1\n")
    assert isinstance(q, Qrels) and q == {"1": {"a": 2, "b": 0}, "2": {"a": 1}}
    assert q.n_judgments == 3
    p = tmp_path / "q.txt"
    p.write_text("1 0 a 2\n1 0 b x\n")
    with pytest.raises(InputError) as e:
        read_qrels(p)
    assert e.value.line == 2 and "integer" in str(e.value)
    p.write_text("1 0 a 2\n1 0 a\n")
    with pytest.raises(InputError, match=":2: expected 4 columns"):
        read_qrels(p)
    p.write_text("1 0 a 2\n1 0 a 1\n")
    with pytest.raises(InputError, match="different grades"):
        read_qrels(p)
    p.write_text("")
    with pytest.raises(InputError, match="empty qrels"):
        read_qrels(p)
    # grades are at most 10^6 in absolute value: beyond 2^63 pytrec_eval crashed, and near 2^31
    # trec_eval's per-level arrays took 16.8 GB
    assert read_qrels("1 0 a 1000000\n1 0 b -1000000\n")["1"] == {"a": 10 ** 6, "b": -(10 ** 6)}
    with pytest.raises(InputError, match=r"line 1: grade 2147483647 is out of range \(at most 1000000"):
        read_qrels("1 0 a 2147483647\n")
    p.write_text("1 0 a 2\n1 0 b 9223372036854775808\n")
    with pytest.raises(InputError, match=r"q.txt:2: grade 9223372036854775808 is out of range"):
        read_qrels(p)


def test_unlistable_folder_is_an_input_error(tmp_path, monkeypatch):
    # (root can list any folder, so the permission failure is simulated)
    from pathlib import Path

    from planner.measures import score_runs

    (tmp_path / "a.run").write_text("1 Q0 d 1 1.0 a\n")
    def denied(self):
        raise PermissionError(13, "Permission denied", str(self))
    monkeypatch.setattr(Path, "iterdir", denied)
    for call in (lambda: read_runs(tmp_path), lambda: load_scores(tmp_path),
                 lambda: score_runs(tmp_path, "1 0 d 1\n", measures=["P@1"])):
        with pytest.raises(InputError, match="cannot list the folder: Permission denied"):
            call()


def test_read_real_qrels(shared_data):
    q = read_qrels(shared_data / "trec-dl2019-passage" / "qrels.txt")
    assert len(q) == 43
    # first line of qrels.txt: 19335 Q0 1017759 0
    assert q["19335"]["1017759"] == 0


# ------------------------------------------------------------ trec_eval -q
TE = "runid                 \tall\t{r}\nmap                   \t1\t0.5\nmap                   \t2\t0.25\n" \
     "P_10                  \t1\t0.3\nmap                   \tall\t0.375\n"


def test_trec_eval_folder(tmp_path):
    (tmp_path / "r1.res").write_text(TE.format(r="R1"))
    (tmp_path / "r2.res").write_text(TE.format(r="R2").replace("0.25", "5e-04"))
    with pytest.warns(PlannerWarning, match=r"skipped 1 measure: 'P_10' \(need at least 2 topics"):
        mats = read_trec_eval(tmp_path, missing="keep")
    assert set(mats) == {"map"}
    m = mats["map"]
    assert m.systems == ("r1", "r2") and m.topics == ("1", "2")
    np.testing.assert_array_equal(m.values, [[0.5, 0.25], [0.5, 5e-04]])  # 'all' row skipped
    with pytest.warns(PlannerWarning, match="skipped"):
        assert read_trec_eval(tmp_path, names="runid")["map"].systems == ("R1", "R2")
    # load_scores: several measures -> must choose
    (tmp_path / "r1.res").write_text(TE.format(r="R1") + "P_10\t2\t0.1\n")
    (tmp_path / "r2.res").write_text(TE.format(r="R2").replace("0.25", "5e-04") + "P_10\t2\t0.2\n")
    with pytest.raises(ParameterError, match="choose one"):
        load_scores(tmp_path)
    with pytest.raises(ParameterError, match="'ndcg' not in the trec_eval output"):
        load_scores(tmp_path, measure="ndcg")
    assert load_scores(tmp_path, measure="map").values[1, 1] == 5e-04


def test_trec_eval_folder_whose_measures_are_all_skipped_says_why(tmp_path):
    # it said "no measure with at least 2 systems and 2 topics" for 3 systems and 2 topics
    for r in "abc":
        (tmp_path / f"{r}.res").write_text("map\t1\t0.1\nmap\t2\t0.4\nP_10\t1\t0.2\nP_10\t2\t0.3\n")
    (tmp_path / "c.res").write_text("map\t1\t0.1\nP_10\t1\t0.2\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PlannerWarning)
        with pytest.raises(InputError, match=r"no measure could be read: all 2 were skipped \(first, 'map': "
                                             r".*c.res: no 'map' row for topic '2'"):
            load_scores(tmp_path)
        assert load_scores(tmp_path, measure="map", missing="zero").values[2, 1] == 0.0


def test_trec_eval_measure_names_differing_in_case_are_named(tmp_path):
    for r in "ab":
        (tmp_path / f"{r}.res").write_text("map\t1\t0.1\nmap\t2\t0.4\n")
    (tmp_path / "c.res").write_text("MAP\t1\t0.1\nMAP\t2\t0.2\n")
    with pytest.raises(InputError, match=r"c.res: no 'map' rows, other runs have them; it writes 'MAP': "
                                         r"the measure names differ in case"):
        load_scores(tmp_path, measure="map")


def test_trec_eval_single_file_is_one_system(tmp_path):
    f = tmp_path / "r1.res"
    f.write_text(TE.format(r="R1"))
    with pytest.raises(InputError, match="holds one system"):
        read_trec_eval(f)
    with pytest.raises(InputError, match="single trec_eval -q file holds one system"):
        load_scores(f)


def test_trec_eval_bad_value(tmp_path):
    (tmp_path / "r1.res").write_text("map\t1\t0.5\nmap\t2\tabc\n")
    with pytest.raises(InputError) as e:
        read_trec_eval(tmp_path)
    assert e.value.line == 2 and "non-numeric" in str(e.value)
    # trec_eval without -q writes only "all" rows: that was reported as an empty file
    (tmp_path / "r1.res").write_text("map\tall\t0.25\nP_10\tall\t0.4\n")
    with pytest.raises(InputError, match=r"r1.res: no per-topic rows, only summaries \(was trec_eval run with -q\?\)"):
        read_trec_eval(tmp_path)
    (tmp_path / "r1.res").write_text("\n")
    with pytest.raises(InputError, match="r1.res: empty trec_eval file"):
        read_trec_eval(tmp_path)


@pytest.mark.slow
def test_trec_eval_real_folder_matches_wide_matrix(shared_data):
    # the data README says several collections hold systems identical on every topic
    with pytest.warns(DegenerateDataWarning, match="CUNI_EN_Run1 = terrier.DirichletLM_EN_Run1"):
        m = load_scores(shared_data / "clef-ehealth2016" / "trec_eval", measure="map")
    ref = pd.read_csv(shared_data / "clef-ehealth2016" / "query-variations" / "matrix_map.csv", index_col=0)
    assert m.shape == (48, 300)
    assert list(ref.columns) == list(m.systems)
    assert list(ref.index.astype(str)) == list(m.topics)
    np.testing.assert_array_equal(m.values, ref.to_numpy().T)


# --------------------------------------------------------------- tables
def test_wide_csv_with_and_without_topic_column(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("topic,s1,s2\nt1,0.1,5e-04\nt2,0.3,0.4\n")
    m = load_scores(p, measure="AP")
    assert m.systems == ("s1", "s2") and m.topics == ("t1", "t2") and m.measure == "AP"
    assert m.values[1, 0] == 5e-04
    p.write_text("s1,s2\n0.1,0.2\n\n0.3,0.4\n")
    m = load_scores(p)
    assert m.topics == ("1", "2")
    np.testing.assert_array_equal(m.values, [[0.1, 0.3], [0.2, 0.4]])
    t = tmp_path / "w.tsv"
    t.write_text("topic\ts1\ts2\nq1\t0.1\t0.2\nq2\t0.3\t0.4\n")
    m = load_scores(t)
    assert m.systems == ("s1", "s2") and m.topics == ("q1", "q2") and m.values[1, 1] == 0.4


def test_wide_csv_topic_column_headings(tmp_path):
    # 'id', 'topic_id', 'Query-ID' ... head the topic column (it used to be read as a system
    # scoring 301..303); an unknown heading over integer ids gets a warning that says what to do
    p = tmp_path / "w.csv"
    for head in ("id", "topic_id", "Query-ID", "QID", "TopicId"):
        p.write_text(f"{head},s1,s2\n301,0.1,0.2\n302,0.3,0.4\n")
        m = load_scores(p)
        assert m.systems == ("s1", "s2") and m.topics == ("301", "302"), head
    p.write_text("num,s1,s2\n301,0.1,0.2\n302,0.3,0.4\n")
    with pytest.warns(DegenerateDataWarning, match=r"only system 'num' \(301 to 302\): if that column holds "
                                                   r"topic ids, head it 'topic'"):
        m = load_scores(p)
    assert m.systems == ("num", "s1", "s2")
    # scores merely outside [0, 1] in several systems: no topic-id hint
    p.write_text("topic,s1,s2\nt1,1.5,2\nt2,0.3,0.4\n")
    with pytest.warns(DegenerateDataWarning) as rec:
        load_scores(p)
    assert not any("topic ids" in str(w.message) for w in rec)


def test_wide_csv_errors(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("s1,s2\n0.1,0.2\n0.3,x\n")
    with pytest.raises(InputError) as e:
        load_scores(p)
    assert e.value.line == 3 and "'x'" in str(e.value) and "s2" in str(e.value)
    assert "tidy table" not in str(e.value)
    # a tidy table with other column names reads as wide: the error says why, and what a tidy
    # table needs (fuzz audit 2026-11-30: only "non-numeric value 'a' for system 'run'")
    p.write_text("topic,run,bm25\n1,0.5,x\n")        # a wide table with a system named 'run': no hint
    with pytest.raises(InputError) as e:
        load_scores(p)
    assert "non-numeric value 'x' for system 'bm25'" in str(e.value) and "tidy table" not in str(e.value)
    # a tab-separated 'runid qid score' header was taken for trec_eval's 'runid all NAME' line
    p.write_text("runid\tqid\tscore\nbm25\t1\t0.5\n")
    with pytest.raises(InputError, match=r"w.csv:2: non-numeric value 'bm25' .*a tidy table needs the columns"):
        load_scores(p)
    for head in ("run,topic,score", "system,query,score", "s,topic,v"):
        p.write_text(head + "\na,1,0.5\nb,1,0.25\n")
        with pytest.raises(InputError, match=rf"w.csv:2: non-numeric value 'a' .*\(the header "
                                             rf"{head.replace(',', ', ')} is read as a wide table, one column "
                                             r"a system; a tidy table needs the columns system, topic and value\)"):
            load_scores(p)
    p.write_text("s1,s2\n0.1,0.2\n0.3\n")
    with pytest.raises(InputError, match=":3: expected 2 fields"):
        load_scores(p)
    p.write_text("s1,s2\n0.1,NA\n0.3,0.2\n")
    with pytest.raises(InputError, match="missing cell"):
        load_scores(p)
    assert load_scores(p, missing="zero").values[1, 0] == 0.0
    p.write_text("")
    with pytest.raises(InputError, match="empty"):
        load_scores(p)


def test_tables_with_lone_carriage_returns_read_like_newlines(tmp_path):
    # classic-Mac line ends ("\r" alone) used to stop the csv module with a traceback
    for name, body in (("w.csv", "topic,s1,s2\n1,0.1,0.2\n2,0.3,0.5\n"),
                       ("t.csv", "system,topic,value\ns1,1,0.1\ns1,2,0.3\ns2,1,0.2\ns2,2,0.5\n")):
        lf, cr = tmp_path / ("lf_" + name), tmp_path / ("cr_" + name)
        lf.write_text(body)
        cr.write_bytes(body.replace("\n", "\r").encode())
        a, b = load_scores(lf), load_scores(cr)
        assert a.systems == b.systems == ("s1", "s2") and a.topics == b.topics == ("1", "2")
        np.testing.assert_array_equal(a.values, b.values)
    cr = tmp_path / "cr_bad.csv"
    cr.write_bytes(b"topic,s1,s2\r1,0.1,0.2\r2,0.3,x\r")
    with pytest.raises(InputError, match=":3: non-numeric value 'x'"):
        load_scores(cr)
    topics = tmp_path / "cr_topics.csv"
    topics.write_bytes(b"topic,stratum\r1,a\r2,b\r")
    assert read_topics(topics)["stratum"].tolist() == ["a", "b"]


def test_oversized_csv_field_names_its_line(tmp_path):
    p = tmp_path / "long.csv"
    p.write_text("topic,s1,s2\n1,0.1,0.2\n" + "t" * 200_000 + ",0.3,0.4\n")
    with pytest.raises(InputError, match=r"long.csv:3: malformed CSV record \(field larger than field limit"):
        load_scores(p)


def test_wide_table_without_header_row_warns(tmp_path):
    # its first row silently became the system names and a topic was lost
    p = tmp_path / "nohdr.csv"
    p.write_text("0.1,0.2,0.3\n0.4,0.5,0.6\n0.2,0.1,0.9\n")
    with pytest.warns(PlannerWarning, match=r"nohdr.csv:1: the header holds only numbers \(0.1, 0.2, 0.3\)"):
        m = load_scores(p)
    assert m.systems == ("0.1", "0.2", "0.3") and m.n_topics == 2
    p.write_text("topic,2019,2020\n1,0.1,0.2\n2,0.3,0.4\n")      # a header row with numeric names
    with warnings.catch_warnings():
        warnings.simplefilter("error", PlannerWarning)
        assert load_scores(p).systems == ("2019", "2020")


def test_tidy_csv_and_tsv(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("system,topic,value,measure\na,1,0.1,AP\nb,1,0.2,AP\na,2,0.3,AP\nb,2,0.4,AP\n"
                 "a,1,0.9,P10\nb,1,0.8,P10\na,2,0.7,P10\nb,2,0.6,P10\n")
    with pytest.raises(ParameterError, match="several measures"):
        load_scores(p)
    m = load_scores(p, measure="P10")
    np.testing.assert_array_equal(m.values, [[0.9, 0.7], [0.8, 0.6]])
    with pytest.raises(ParameterError, match="'nDCG' not in"):
        load_scores(p, measure="nDCG")
    t = tmp_path / "t.tsv"
    t.write_text("system\ttopic\tvalue\na\t1\t0.1\nb\t1\t0.2\na\t2\t0.3\nb\t2\t0.4\na\t2\t0.5\n")
    with pytest.raises(InputError) as e:
        load_scores(t)
    assert e.value.line == 6 and "repeated cell" in str(e.value)


def test_topics_and_strata(tmp_path):
    meta = tmp_path / "topics.csv"
    meta.write_text("topic,stratum,year\nt1,A,2019\nt2,B,2020\nt3,B,2020\n")
    df = read_topics(meta)
    assert list(df.columns) == ["topic", "stratum", "year"] and df["stratum"].tolist() == ["A", "B", "B"]
    p = tmp_path / "w.csv"
    p.write_text("topic,s1,s2\nt1,0.1,0.2\nt2,0.3,0.4\n")
    with pytest.warns(PlannerWarning, match="1 topic\\(s\\) not in the scores ignored: 't3'"):
        m = load_scores(p, strata=meta)
    assert m.strata == ("A", "B")
    meta.write_text("topic,stratum\nt1,A\nt1,B\n")
    with pytest.raises(InputError, match=":3: topic 't1' repeated"):
        read_topics(meta)
    meta.write_text("topic,stratum\nt1,A\n")
    with pytest.raises(InputError, match="no stratum"):
        load_scores(p, strata=meta)
    meta.write_text("stratum\nA\n")
    with pytest.raises(InputError, match="'topic' column"):
        read_topics(meta)
    # a repeated column: 'stratum' twice was a pandas traceback, 'topic' and 'Topic' read the
    # header's 'Topic' cells as topic ids (fuzz audit 2026-11-30)
    for head, msg in (("topic,stratum,stratum", r":1: column 'stratum' appears twice in the header \(also column 2\)"),
                      ("topic,Topic,stratum", r":1: column 'Topic' appears twice .*also column 1: topic and stratum "
                                              r"ignore case"),
                      ("topic,stratum,year,year", "column 'year' appears twice")):
        meta.write_text(head + "\n" + "\n".join(f"t{i}," + ",".join("A" for _ in head.split(",")[1:])
                                                for i in (1, 2)) + "\n")
        with pytest.raises(InputError, match=msg):
            read_topics(meta)
    meta.write_text("topic,stratum,,\nt1,A,,\nt2,B,,\n")        # unnamed trailing columns stay allowed
    assert read_topics(meta)["stratum"].tolist() == ["A", "B"]


def test_real_wide_matrices(shared_data):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        m = load_scores(shared_data / "trec-adhoc" / "adhoc5_ap.csv")
        t = load_scores(shared_data / "trec-terabyte" / "terabyte2006_ap.csv")
        d = load_scores(shared_data / "trec-dl2019-passage" / "reference" / "matrix_official_AP_rel2.csv")
    assert m.shape == (61, 50) and t.shape == (61, 149)  # data README table
    assert d.shape == (37, 43) and d.topics[0] == "1037798"
    with pytest.warns(DegenerateDataWarning, match="identical on every topic"):
        load_scores(shared_data / "trec-web" / "web2010_ndcg20.csv")


# ------------------------------------------------------------------ CLI
def test_cli_scores_wide_tidy_json(tmp_path, capsys):
    import json

    from planner.cli import main

    p = tmp_path / "w.csv"
    p.write_text("s1,s2\n0.1,5e-04\n0.3,0.4\n")
    assert main(["scores", str(p)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == ["topic,s1,s2", "1,0.1,0.0005", "2,0.3,0.4"]
    assert main(["scores", str(p), "--tidy", "--measure", "AP"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "system,topic,value,measure" and lines[1] == "s1,1,0.1,AP" and len(lines) == 5
    o = tmp_path / "out.csv"
    assert main(["scores", str(p), "-o", str(o)]) == 0
    assert o.read_text().startswith("topic,s1,s2\n")
    assert main(["scores", str(p), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["matrices"][0]["values"] == [[0.1, 0.3], [5e-04, 0.4]]


@pytest.mark.parametrize("argv,needle", [
    (["scores", "{d}/nope.csv"], "{d}/nope.csv: no such scores file"),
    (["scores", "{d}/bad.csv"], "{d}/bad.csv:3: non-numeric value 'x' for system 's2'"),
    (["scores"], "SCORES: give a score file"),
    (["scores", "--runs", "{d}"], "--qrels: --runs and --qrels go together"),
    (["scores", "dl19-passage", "--measure", "ERR"], "measure 'ERR' is not shipped"),
    # -o and --tidy were ignored under --json: no file, exit 0
    (["scores", "{d}/ok.csv", "--json", "-o", "{d}/x.csv"], "--output: not used with --json"),
    (["scores", "{d}/ok.csv", "--json", "--tidy"], "--tidy: not used with --json"),
])
def test_cli_scores_errors_exit_2_one_line(tmp_path, capsys, argv, needle):
    from planner.cli import main

    (tmp_path / "bad.csv").write_text("s1,s2\n0.1,0.2\n0.3,x\n")
    (tmp_path / "ok.csv").write_text("s1,s2\n0.1,0.2\n0.3,0.5\n")
    argv = [a.format(d=tmp_path) for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and needle.format(d=tmp_path) in err
    assert "Traceback" not in err
    assert not (tmp_path / "x.csv").exists()


def test_cli_scores_embedded_dataset(capsys):
    from planner.cli import main

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        assert main(["scores", "dl19-passage", "--measure", "nDCG@10"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 44 and lines[0].startswith("topic,ICT-BERT2,")  # 43 topics + header
    # a measure given twice wrote every tidy row twice, a table planner cannot read back
    assert main(["scores", "dl19-passage", "--measure", "nDCG@10", "--measure", "nDCG@10", "--tidy"]) == 2
    assert "--measure: measure 'nDCG@10' given more than once" in capsys.readouterr().err


def test_every_scores_option_takes_an_embedded_dataset(capsys, tmp_path):
    # --scores NAME loads planner.datasets NAME (as `planner scores NAME` does) when no such
    # file exists; a file of that name still wins
    import planner
    from planner.cli import main

    m = planner.datasets.load("dl20-passage", measure="AP(rel=2)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        for argv in (["fit", "--json"], ["predict", "--topics", "20", "--method", "analytic", "--json"],
                     ["validate", "--pilot", "20", "--topics", "10", "--repeats", "2", "--methods", "analytic",
                      "--json"]):
            assert main(argv + ["--scores", "dl20-passage", "--measure", "AP"]) == 0, argv
            text = capsys.readouterr().out
            assert "AP(rel=2)" in text and ("dl20-passage" in text or '"n_systems": 59' in text), argv
        assert main(["size", "--design", "paired-t", "--min-diff", "0.05", "--scores", "dl20-passage",
                     "--measure", "AP", "--json"]) == 0
        n = planner.topic_set_size(design="paired-t", min_diff=0.05, scores=m, power=0.8).n_topics
        assert json.loads(capsys.readouterr().out)["n_topics"] == n
        ref = planner.fit(m)
        assert main(["fit", "--scores", "dl20-passage", "--measure", "AP(rel=2)", "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["components"]["var_e"] == pytest.approx(ref.var_e, rel=1e-12)
        assert main(["fit", "--scores", "dl20-passage", "--measure", "ERR"]) == 2
        assert "measure 'ERR' is not shipped" in capsys.readouterr().err
        # a file named like a data set is read as the file
        f = tmp_path / "dl20-passage"
        f.write_text("topic,a,b\nt1,0.1,0.2\nt2,0.3,0.5\nt3,0.2,0.2\n")
        import os

        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:
            assert main(["fit", "--scores", "dl20-passage", "--json"]) == 0
        finally:
            os.chdir(cwd)
        assert json.loads(capsys.readouterr().out)["components"]["n_systems"] == 2


# ------------------------------------------------- byte-order marks (audit 7, 8)
BOM = "\ufeff"


def test_trec_eval_with_bom_reads_first_measure(tmp_path):
    # a BOM before the first line made the measure '\ufeffmap', so with --missing zero
    # r1's first topic silently scored 0 instead of 0.5
    (tmp_path / "r1.res").write_text(BOM + "map\t1\t0.5\nmap\t2\t0.25\n", encoding="utf-8")
    (tmp_path / "r2.res").write_text("map\t1\t0.3\nmap\t2\t0.125\n")
    mats = read_trec_eval(tmp_path)
    assert list(mats) == ["map"]
    np.testing.assert_array_equal(mats["map"].values, [[0.5, 0.25], [0.3, 0.125]])
    m = load_scores(tmp_path, measure="map", missing="zero")
    assert m.values[0, 0] == 0.5 and m.topics == ("1", "2")


def test_trec_eval_gzip_with_bom(tmp_path):
    (tmp_path / "r1.res.gz").write_bytes(gzip.compress((BOM + "map\t1\t0.5\nmap\t2\t0.25\n").encode()))
    (tmp_path / "r2.res").write_text("map\t1\t0.3\nmap\t2\t0.125\n")
    assert load_scores(tmp_path, measure="map").values[0, 0] == 0.5


def test_qrels_with_bom_has_no_phantom_topic(tmp_path):
    p = tmp_path / "q.txt"
    p.write_text(BOM + "101 0 d0 0\n101 0 d1 2\n102 0 d0 1\n", encoding="utf-8")
    q = read_qrels(p)
    assert q == {"101": {"d0": 0, "d1": 2}, "102": {"d0": 1}}
    assert read_qrels(BOM + "7 0 a 1\n7 0 b 0\n") == {"7": {"a": 1, "b": 0}}  # text too


# ------------------------------------------- tidy CSV empty labels (audit 16)
@pytest.mark.parametrize("body,line,col", [
    ("a,1,0.1\n,2,0.2\nb,1,0.3\nb,2,0.4\n", 3, "system"),
    ("a,1,0.1\na,,0.2\nb,1,0.3\nb,2,0.4\n", 3, "topic"),
])
@pytest.mark.parametrize("missing", ["error", "zero"])
def test_tidy_empty_system_or_topic_is_an_error(tmp_path, body, line, col, missing):
    p = tmp_path / "t.csv"
    p.write_text("system,topic,value\n" + body)
    with pytest.raises(InputError) as e:
        load_scores(p, missing=missing)
    assert str(e.value) == f"{p}:{line}: empty {col} cell"


def test_tidy_empty_variant_or_stratum_cell_and_stratum_conflict_line(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("system,topic,value,stratum\na,1,0.1,x\nb,1,0.2,\na,2,0.3,y\nb,2,0.4,y\n")
    with pytest.raises(InputError, match=r"t\.csv:3: empty stratum cell"):
        load_scores(p)
    p.write_text("system,topic,value,stratum\na,1,0.1,x\nb,1,0.2,z\na,2,0.3,y\nb,2,0.4,y\n")
    with pytest.raises(InputError, match=r"t\.csv:3: topic '1' has several strata \('x' and 'z'\)"):
        load_scores(p)


# ---------------------------------- missing cells name file, line, --missing (audit 23)
def test_wide_missing_cell_names_line_and_option(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("topic,s1,s2\nt1,0.1,0.2\nt2,0.3,NA\nt3,,0.5\n")
    with pytest.raises(InputError) as e:
        load_scores(p)
    assert e.value.file == str(p) and e.value.line == 3
    assert "system 's2', topic 't2'" in str(e.value) and "2 missing cell(s)" in str(e.value)
    assert "--missing zero" in str(e.value)
    assert load_scores(p, missing="zero").values[1, 1] == 0.0


def test_tidy_missing_cell_names_line_or_absent_row(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("system,topic,value\na,1,0.1\nb,1,NA\na,2,0.3\nb,2,0.4\n")
    with pytest.raises(InputError) as e:
        load_scores(p)
    assert e.value.line == 3 and "system 'b', topic '1'" in str(e.value) and "--missing" in str(e.value)
    p.write_text("system,topic,value\na,1,0.1\nb,1,0.2\na,2,0.3\n")  # no row for (b, 2)
    with pytest.raises(InputError) as e:
        load_scores(p)
    assert e.value.file == str(p) and "no row for system 'b', topic '2'" in str(e.value)
    assert "--missing" in str(e.value)
    assert load_scores(p, missing="zero").values[1, 1] == 0.0


def test_trec_eval_missing_and_infinite_name_file_and_line(tmp_path):
    (tmp_path / "r1.res").write_text("map\t1\t0.5\nmap\t2\t0.25\n")
    (tmp_path / "r2.res").write_text("map\t1\t0.3\n")
    with pytest.raises(InputError) as e:
        load_scores(tmp_path, measure="map")
    assert e.value.file == str(tmp_path / "r2.res") and "topic '2'" in str(e.value)
    assert "--missing" in str(e.value)
    (tmp_path / "r2.res").write_text("map\t1\t0.3\nmap\t2\tnan\n")
    with pytest.raises(InputError) as e:
        load_scores(tmp_path, measure="map")
    assert (e.value.file, e.value.line) == (str(tmp_path / "r2.res"), 2) and "--missing" in str(e.value)
    (tmp_path / "r2.res").write_text("map\t1\t0.3\nmap\t2\tinf\n")
    with pytest.raises(InputError) as e:
        load_scores(tmp_path, measure="map")
    assert (e.value.file, e.value.line) == (str(tmp_path / "r2.res"), 2) and "infinite" in str(e.value)


def test_strata_lacking_topics_names_file_and_ids(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("topic,s1,s2\n" + "".join(f"t{i},0.{i},0.{i + 1}\n" for i in range(1, 9)))
    meta = tmp_path / "topics.csv"
    meta.write_text("topic,stratum\nt1,A\nt2,B\n")
    with pytest.raises(InputError) as e:
        load_scores(p, strata=meta)
    assert e.value.file == str(meta)
    assert "6 of the scores' 8 topics have no stratum: 't3', 't4', 't5', 't6', 't7' and 1 more" in str(e.value)
    with pytest.raises(ParameterError) as e:
        load_scores(p, strata={"t1": "A", "x9": "B"})
    assert str(e.value).startswith("strata: 7 of the scores' 8 topics have no stratum: 't2'")
    assert "'x9'" in str(e.value)  # the mapping's own ids, to spot a format mismatch


# ----------------------------------------------- strata naming unknown topics (audit 19)
def test_strata_unknown_topics_warn_and_make_no_empty_stratum(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("topic,s1,s2\nt1,0.1,0.2\nt2,0.3,0.4\nt3,0.5,0.6\n")
    meta = tmp_path / "topics.csv"
    meta.write_text("topic,stratum\nt1,a\nt2,a\nt3,b\nt9,b\nt99,c\n")
    with pytest.warns(PlannerWarning) as rec:
        m = load_scores(p, strata=meta)
    msg = str(rec[0].message)
    assert msg.startswith(f"{meta}: 2 topic(s) not in the scores ignored: 't9', 't99'")
    assert "no stratum made for 'c'" in msg
    assert m.strata == ("a", "a", "b") and m.stratum_labels() == ("a", "b")
    with pytest.warns(PlannerWarning, match="the strata mapping: 1 topic\\(s\\) not in the scores"):
        m = load_scores(p, strata={"t1": "a", "t2": "a", "t3": "b", "t99": "c"})
    assert m.stratum_labels() == ("a", "b")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an exact mapping: no warning
        assert load_scores(p, strata={"t1": "a", "t2": "b", "t3": "b"}).strata == ("a", "b", "b")


def test_strata_empty_label_or_topic_is_an_error(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("topic,s1,s2\nt1,0.1,0.2\nt2,0.3,0.4\n")
    with pytest.raises(ParameterError, match="topic 't2' has an empty stratum"):
        load_scores(p, strata={"t1": "a", "t2": " "})
    meta = tmp_path / "topics.csv"
    meta.write_text("topic,stratum\nt1,a\n,b\nt2,b\n")
    with pytest.raises(InputError, match=r"topics\.csv:3: empty topic id"):
        read_topics(meta)


# ------------------------------------------- Python float quirks (audit 17)
def test_underscore_or_non_ascii_number_is_not_a_number(tmp_path):
    p = tmp_path / "w.csv"
    p.write_text("topic,s1,s2\nt1,1_0,0.2\nt2,0.4,0.5\n")
    with pytest.raises(InputError, match=r"w\.csv:2: non-numeric value '1_0' for system 's1'"):
        load_scores(p)
    p.write_text("topic,s1,s2\nt1,0.1,0.2\nt2,0.4,\u0660.5\n", encoding="utf-8")  # Arabic-Indic zero
    with pytest.raises(InputError, match=r"w\.csv:3: non-numeric value"):
        load_scores(p)
    r = tmp_path / "a.run"
    r.write_text("1 Q0 d1 1 3.5 a\n1 Q0 d2 2 1_0 a\n")
    with pytest.raises(InputError, match=r"a\.run:2: non-numeric score '1_0'"):
        read_run(r)
    q = tmp_path / "q.txt"
    q.write_text("1 0 a 1\n1 0 b 1_0\n")
    with pytest.raises(InputError, match=r"q\.txt:2: grade must be an integer, found '1_0'"):
        read_qrels(q)
    (tmp_path / "te").mkdir()
    (tmp_path / "te" / "r1.res").write_text("map\t1\t0.5\nmap\t2\t2_5e-1\n")
    (tmp_path / "te" / "r2.res").write_text("map\t1\t0.3\nmap\t2\t0.1\n")
    with pytest.raises(InputError, match=r"r1\.res:2: non-numeric value '2_5e-1'"):
        read_trec_eval(tmp_path / "te")


def test_cli_tidy_empty_cell_and_missing_hint_one_line(tmp_path, capsys):
    from planner.cli import main

    p = tmp_path / "t.csv"
    p.write_text("system,topic,value\na,1,0.1\n,2,0.2\nb,1,0.3\nb,2,0.4\n")
    assert main(["scores", str(p), "--missing", "zero"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"{p}:3: empty system cell" in err
    w = tmp_path / "w.csv"
    w.write_text("topic,s1,s2\nt1,0.1,NA\nt2,0.3,0.4\n")
    assert main(["scores", str(w)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and f"{w}:2: missing cell ('NA')" in err and "--missing" in err


def test_cli_failure_prints_one_line_and_success_prints_the_warnings(tmp_path, capsys):
    # warnings used to print before a later error (two or more lines for one failure); they are
    # now held until the command ends: printed when it succeeds, dropped when it fails
    from planner.cli import main

    const = tmp_path / "const.csv"
    const.write_text("topic,a,b,c\n1,0.5,0.5,0.5\n2,0.5,0.5,0.5\n3,0.5,0.5,0.5\n")
    assert main(["fit", "--scores", str(const)]) == 2
    err = capsys.readouterr().err
    assert err == f"planner fit: error: {const}: every score is 0.5: a constant matrix has no variance to decompose\n"
    nohdr = tmp_path / "nohdr.csv"
    nohdr.write_text("0.1,0.2,0.3\n0.4,0.5,0.6\n0.2,0.1,0.9\n")
    assert main(["scores", str(nohdr)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("topic,0.1,0.2,0.3\n")
    assert err.count("planner: warning: ") == 1 and "the header holds only numbers" in err


def test_trec_eval_measures_may_be_one_name_and_names_is_checked(tmp_path):
    # API audit F12 / F14: measures="map" was read letter by letter ("measure 'm' not in ..."), and
    # load_scores(names="foo") on a file was accepted although only 'file' / 'runid' mean anything
    (tmp_path / "r1.res").write_text(TE.format(r="R1"))
    (tmp_path / "r2.res").write_text(TE.format(r="R2").replace("0.25", "5e-04"))
    one = read_trec_eval(tmp_path, measures="map")
    assert list(one) == ["map"]
    np.testing.assert_array_equal(one["map"].values, read_trec_eval(tmp_path, measures=["map"])["map"].values)
    wide = tmp_path / "w.csv"
    wide.write_text("topic,a,b\n1,0.1,0.2\n2,0.3,0.5\n")
    for path in (wide, tmp_path):
        with pytest.raises(ParameterError, match="names: expected 'file' or 'runid', got 'foo'"):
            load_scores(path, measure="map", names="foo")


def test_stack_with_strata_takes_topic_or_query_ids(tmp_path):
    # query variants stacked from ids topic * 1000 + variant: strata may name the topics
    # (101) or, as the un-stacked scores did, the query ids (101001, 101002); a file naming
    # neither is the topic-level error (audit 2026-11-30: only query ids worked)
    from planner.collection import stack_with_strata
    from planner.scores import ScoreMatrix

    qids = [f"{t}{v:03d}" for t in (101, 102, 103) for v in (1, 2)]
    m = ScoreMatrix.build(np.arange(18, dtype=float).reshape(3, 6) / 20, ["a", "b", "c"], qids, warn=False)
    by_topic = tmp_path / "t.csv"
    by_topic.write_text("topic,stratum\n101,x\n102,y\n103,y\n")
    by_query = tmp_path / "q.csv"
    by_query.write_text("topic,stratum\n" + "".join(f"{q},{'x' if q.startswith('101') else 'y'}\n" for q in qids))
    for f in (by_topic, by_query):
        with warnings.catch_warnings():
            warnings.simplefilter("error")          # no warning leaks from the attempt that failed
            s = stack_with_strata(m, 1000, str(f))
        assert s.shape == (3, 3, 2) and s.topics == ("101", "102", "103") and s.strata == ("x", "y", "y")
    bad = tmp_path / "b.csv"
    bad.write_text("topic,stratum\n999,x\n")
    with pytest.raises(InputError, match="3 of the scores' 3 topics have no stratum: '101'"):
        stack_with_strata(m, 1000, str(bad))
    assert stack_with_strata(m, 1000).strata is None
    # a file by query id that puts two variants of one topic in different strata was silently
    # read as the first variant's stratum (fuzz audit 2026-11-30): an error naming the file
    split = tmp_path / "split.csv"
    split.write_text("topic,stratum\n" + "".join(f"{q},{'x' if q == '102002' else 'y'}\n" for q in qids))
    with pytest.raises(InputError, match=r"split\.csv: topic 102 has variants in two strata "
                                         r"\('y' for query id 102001, 'x' for 102002\)"):
        stack_with_strata(m, 1000, str(split))
    with pytest.raises(ParameterError, match="strata: topic 102 has variants in two strata"):
        stack_with_strata(m, 1000, {q: ("x" if q == "102002" else "y") for q in qids})


def test_non_utf8_files_name_their_line_and_utf16(tmp_path):
    # a Latin-1 byte names its line; a UTF-16 file (Excel's "Unicode text", PowerShell's default)
    # is said to be one (fuzz audit 2026-11-30: only "not UTF-8 text")
    latin = tmp_path / "latin.csv"
    latin.write_bytes("topic,stratum\nt1,A\nt2,caf\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"latin\.csv:3: not UTF-8 text$"):
        read_topics(latin)
    wide = tmp_path / "utf16.csv"
    wide.write_text("topic,s1,s2\nt1,0.1,0.2\nt2,0.3,0.4\n", encoding="utf-16")
    with pytest.raises(InputError, match=r"utf16\.csv:1: not UTF-8 text \(it starts like UTF-16: save it as UTF-8\)"):
        load_scores(wide)

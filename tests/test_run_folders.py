"""Run folders as they are (issue 25, item 1): a campaign's folder of real runs with empty files,
runs that repeat (topic, document) pairs and tag columns that disagree with the file names goes
through ``scores``, ``pool``, ``budget``, ``reuse`` and a study with one command each, and every
skipped file and dropped line is said once.

The folder is built in a temporary folder from the TREC DL 2019 runs of ``../shared/data``: nine
real runs cut to their top 100 per topic (six named ``input.<runid>`` as in the TREC archives,
so their tag disagrees with the name), three of them with repeated pairs appended (the repeats
come last, with the lowest scores, so keeping the first line gives back the real run), and
four empty files (a gzip of nothing, two of 0 bytes, one of blank lines).
"""

from __future__ import annotations

import gzip
import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

from planner import cli
from planner.errors import ConfigError, InputError, ParameterError, PlannerWarning

#: (name in the folder, DL 2019 run, how many of each topic's first lines are repeated)
DUPLICATED = [("input.dupA", "TUW19-p1-f", 5), ("input.dupB", "srchvrs_ps_run1", 10), ("input.dupC", "test1", 20)]
TAGGED = ["bm25base_p", "bm25tuned_p", "idst_bert_p1"]        # written as input.<runid>.gz
PLAIN = ["ICT-BERT2", "UNH_bm25", "p_bert"]                    # written as <runid>.run
EMPTY = ["input.empty1.gz", "input.empty2", "input.empty3.run", "input.empty4"]
DEPTH = 100


def _top_lines(shared: Path, runid: str) -> list[str]:
    """The run's lines, its first DEPTH of each topic (the files are in rank order)."""
    out, seen = [], {}
    with gzip.open(shared / "trec-dl2019-passage" / "runs" / f"{runid}.run.gz", "rt") as fh:
        for line in fh:
            q = line.split()[0]
            seen[q] = seen.get(q, 0) + 1
            if seen[q] <= DEPTH:
                out.append(line)
    return out


def _repeats(lines: list[str], k: int) -> list[str]:
    """Each topic's first ``k`` lines again, with rank 999 and the lowest score."""
    out, seen = [], {}
    for line in lines:
        p = line.split()
        seen[p[0]] = seen.get(p[0], 0) + 1
        if seen[p[0]] <= k:
            out.append(" ".join([p[0], p[1], p[2], "999", "-1000", p[5]]) + "\n")
    return out


@pytest.fixture(scope="module")
def campaign(shared_data, tmp_path_factory):
    """(runs folder, qrels, {duplicated run: lines repeated}, folder of the clean originals)."""
    root = tmp_path_factory.mktemp("campaign")
    runs, clean = root / "runs", root / "clean"
    runs.mkdir()
    clean.mkdir()
    for r in TAGGED:
        (runs / f"input.{r}.gz").write_bytes(gzip.compress("".join(_top_lines(shared_data, r)).encode()))
    for r in PLAIN:
        (runs / f"{r}.run").write_text("".join(_top_lines(shared_data, r)))
    repeated = {}
    for name, src, k in DUPLICATED:
        lines = _top_lines(shared_data, src)
        extra = _repeats(lines, k)
        repeated[name] = len(extra)
        (runs / f"{name}.gz").write_bytes(gzip.compress("".join(lines + extra).encode()))
        (clean / f"{name}.run").write_text("".join(lines))
    (runs / EMPTY[0]).write_bytes(gzip.compress(b""))
    (runs / EMPTY[1]).write_bytes(b"")
    (runs / EMPTY[2]).write_text("\n  \n")
    (runs / EMPTY[3]).write_bytes(b"")
    return runs, shared_data / "trec-dl2019-passage" / "qrels.txt", repeated, clean


def _notes(err: str) -> dict[str, list[str]]:
    """The warning lines about reading the folder, by kind."""
    lines = [x for x in err.splitlines() if x.startswith("planner: warning:")]
    return {"empty": [x for x in lines if "empty run file" in x],
            "dups": [x for x in lines if "repeated (topic, document) pair" in x],
            "tags": [x for x in lines if "tag column disagrees" in x]}


def _check_said_once(err: str, repeated: dict[str, int]) -> None:
    """Each kind of note in one line, with its count, its first names and every dropped line."""
    notes = _notes(err)
    assert [len(v) for v in notes.values()] == [1, 1, 1], err
    assert "skipped 4 empty run files: 'input.empty1.gz', 'input.empty2', 'input.empty3.run' and 1 more" \
        in notes["empty"][0]
    total = sum(repeated.values())
    worst = sorted(repeated.items(), key=lambda kv: -kv[1])
    assert (f"dropping {total:,} lines in 3 runs: " + ", ".join(f"{n!r} {c:,}" for n, c in worst)) in notes["dups"][0]
    assert "disagrees with the run name (its file name) in 6 runs: 'input.bm25base_p' (tag 'bm25base_p')" \
        in notes["tags"][0] and "and 3 more" in notes["tags"][0]


def _systems(csv_text: str) -> list[str]:
    return csv_text.splitlines()[0].split(",")[1:]


# ------------------------------------------------------------------ one command each
def test_scores_reads_the_campaign_folder(campaign, tmp_path, capsys):
    runs, qrels, repeated, clean = campaign
    out = tmp_path / "ndcg.csv"
    assert cli.main(["scores", "--runs", str(runs), "--qrels", str(qrels), "--measure", "nDCG@10",
                     "--duplicates", "first", "-o", str(out)]) == 0
    _check_said_once(capsys.readouterr().err, repeated)
    got = pd.read_csv(out, dtype={"topic": str}).set_index("topic")
    assert sorted(got.columns) == sorted([f"input.{r}" for r in TAGGED] + PLAIN + [n for n, _, _ in DUPLICATED])
    # keeping the first line of each repeated pair gives back the real run: the same scores
    assert cli.main(["scores", "--runs", str(clean), "--qrels", str(qrels), "--measure", "nDCG@10",
                     "-o", str(tmp_path / "clean.csv")]) == 0
    want = pd.read_csv(tmp_path / "clean.csv", dtype={"topic": str}).set_index("topic")
    pd.testing.assert_frame_equal(got[want.columns], want)
    assert got.shape == (43, 9) and 0.3 < got.mean().mean() < 0.8


def test_repeated_pairs_without_a_policy_are_one_error_line(campaign, capsys):
    runs, qrels, _, _ = campaign
    assert cli.main(["scores", "--runs", str(runs), "--qrels", str(qrels), "--measure", "nDCG@10"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{runs}/input.dupA.gz:" in err
    # the way out, in the three interfaces
    assert "--duplicates first, duplicates='first' in Python, collection.duplicates: first in a study" in err


def test_pool_reads_the_campaign_folder(campaign, capsys):
    runs, qrels, repeated, _ = campaign
    assert cli.main(["pool", "--runs", str(runs), "--qrels", str(qrels), "--depth", "10,20",
                     "--duplicates", "first", "--json"]) == 0
    cap = capsys.readouterr()
    _check_said_once(cap.err, repeated)
    read = json.loads(cap.out)["read"]
    assert read["empty"] == EMPTY and read["duplicates"] == repeated
    assert sorted(read["tags"]) == sorted([f"input.{r}" for r in TAGGED] + [n for n, _, _ in DUPLICATED])


def test_budget_reads_the_campaign_folder(campaign, capsys):
    # budget had no --duplicates: the error's advice could not be followed
    runs, qrels, repeated, _ = campaign
    assert cli.main(["budget", "--runs", str(runs), "--qrels", str(qrels), "--depths", "10",
                     "--topics", "50", "--duplicates", "first"]) == 0
    cap = capsys.readouterr()
    _check_said_once(cap.err, repeated)
    assert "(9 runs, 43 topics)" in cap.out


def test_reuse_reads_the_campaign_folder(campaign, capsys):
    runs, qrels, repeated, _ = campaign
    assert cli.main(["reuse", "--runs", str(runs), "--qrels", str(qrels), "--duplicates", "first",
                     "--json"]) == 0
    cap = capsys.readouterr()
    _check_said_once(cap.err, repeated)
    assert json.loads(cap.out)["n_runs"] == 9


@pytest.mark.slow   # writes the whole report (about 12 s); test_study_keys_... reads the folder fast
def test_study_reads_the_campaign_folder(campaign, tmp_path, capsys):
    runs, qrels, repeated, _ = campaign
    study = tmp_path / "campaign.yaml"
    study.write_text(f"name: campaign\nseed: 7\nresamples: 10\n"
                     f"collection: {{runs: {runs}, qrels: {qrels}, duplicates: first}}\n"
                     "method: analytic\ntopics: [10, 20]\ntargets: [{target: swap_rate, value: 0.05}]\n"
                     "measure: [nDCG@10, RR(rel=2)]\n")
    out = tmp_path / "out"
    assert cli.main(["study", str(study), "-o", str(out), "--quiet"]) == 0
    _check_said_once(capsys.readouterr().err, repeated)
    # the report says each note once, though two scenarios read the folder
    said = json.loads((out / "results.json").read_text())["warnings"]
    _check_said_once("\n".join(f"planner: warning: {w}" for w in said), repeated)
    md = (out / "report.md").read_text()
    assert md.count("skipped 4 empty run files") == 1 and md.count("tag column disagrees") == 1


# ------------------------------------------------------------------ choosing runs
def test_select_runs_on_the_command_line(campaign, tmp_path, capsys):
    runs, qrels, _, _ = campaign
    out = tmp_path / "some.csv"
    assert cli.main(["scores", "--runs", str(runs), "--qrels", str(qrels), "--measure", "nDCG@10",
                     "--select-runs", "input.bm25*", "--select-runs", "ICT-BERT2,p_bert", "-o", str(out)]) == 0
    assert _systems(out.read_text()) == ["ICT-BERT2", "input.bm25base_p", "input.bm25tuned_p", "p_bert"]
    # the files left out are not read: no note about the empty files or the repeats
    notes = _notes(capsys.readouterr().err)
    assert notes["empty"] == notes["dups"] == [] and "in 2 runs" in notes["tags"][0]
    assert cli.main(["pool", "--runs", str(runs), "--qrels", str(qrels), "--depth", "10", "--select-runs",
                     "input.dup*", "--duplicates", "first", "--per", "run"]) == 0
    table = capsys.readouterr().out
    assert "input.dupA" in table and "p_bert" not in table


@pytest.mark.parametrize("argv, needle", [
    (["--select-runs", "bm26*"], "--select-runs: 'bm26*' matches none of the 13 run names in"),
    (["--select-runs", "p_bert,"], "--select-runs: empty name in 'p_bert,'"),
    (["--select-runs", "p_bert", "--select-runs", "p_bert"], "--select-runs: 'p_bert' is listed more than once"),
])
def test_select_runs_bad_values_are_one_error_line(campaign, capsys, argv, needle):
    runs, qrels, _, _ = campaign
    assert cli.main(["scores", "--runs", str(runs), "--qrels", str(qrels), "--measure", "nDCG@10", *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and needle in err, err


def test_run_options_only_where_runs_are_read(small_scores, capsys):
    assert cli.main(["scores", str(small_scores), "--select-runs", "a*"]) == 2
    assert "--select-runs: only used with --runs" in capsys.readouterr().err
    assert cli.main(["budget", "--dataset", "dl19-passage", "--topics", "50", "--duplicates", "first"]) == 2
    assert "--duplicates: only used with --runs" in capsys.readouterr().err


def test_study_keys_select_runs_and_duplicates(campaign):
    from planner.study import run_study

    runs, qrels, repeated, _ = campaign
    base = {"seed": 3, "resamples": 10, "method": "analytic", "topics": [10, 20],
            "targets": [{"target": "swap_rate", "value": 0.05}]}
    coll = {"runs": str(runs), "qrels": str(qrels)}
    with pytest.warns(PlannerWarning) as rec:
        res = run_study({**base, "collection": {**coll, "select_runs": ["input.dup*", "p_bert"],
                                                "duplicates": "first"}}, write=False, quiet=True)
    assert res.scenario_results[0].data.n_systems == 4
    said = res.results["warnings"]
    assert sum("dropping" in w for w in said) == 1 and not any("empty run file" in w for w in said)
    assert [str(w.message) for w in rec if "dropping" in str(w.message)] == \
        [w for w in said if "dropping" in w]


@pytest.mark.parametrize("jobs", [1, 2])
def test_study_reads_the_folder_once_and_says_its_notes_once(campaign, tmp_path, monkeypatch, jobs):
    # the whole-study estimate read the runs to learn their shape, then the first scenario (and with
    # --jobs the first of each worker, and the pool reuse in this process) read them again
    import planner.study.inputs as inputs
    from planner.study import run_study

    runs, qrels, repeated, _ = campaign
    log = tmp_path / "reads.log"        # a file: the --jobs workers are other processes
    real = inputs.read_runs

    def counted(*a, **k):
        with open(log, "a") as fh:
            fh.write("read\n")
        return real(*a, **k)

    monkeypatch.setattr(inputs, "read_runs", counted)
    doc = {"seed": 3, "resamples": 10, "method": "analytic", "topics": [10, 20],
           "targets": [{"target": "swap_rate", "value": 0.05}], "measure": ["nDCG@10", "RR(rel=2)"],
           "collection": {"runs": str(runs), "qrels": str(qrels), "duplicates": "first"}}
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = run_study(doc, write=False, quiet=True, jobs=jobs)
    assert log.read_text().count("read") == 1
    said = [str(w.message) for w in rec]
    _check_said_once("\n".join(f"planner: warning: {w}" for w in said), repeated)
    _check_said_once("\n".join(f"planner: warning: {w}" for w in res.results["warnings"]), repeated)
    assert res.scenario_results[1].data.n_systems == 9
    # the estimate alone (outside a study) keeps nothing: a scenario run after it reads and says
    from planner.study import load_config
    from planner.study.estimate import check_study_work
    from planner.study.inputs import held_inputs, load_scores

    check_study_work(load_config(doc))
    coll = load_config(doc).scenarios[0]["collection"]
    with held_inputs() as held, warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        load_scores(coll, "nDCG@10", "collection")
        load_scores(coll, "RR(rel=2)", "collection")
    assert log.read_text().count("read") == 3 and held.reads == 1
    assert [str(w.message) for w in rec] == held.notes and len(held.notes) == 3


@pytest.mark.parametrize("extra, key, needle", [
    ({"select_runs": "zz*"}, "collection.select_runs", "'zz*' matches none of the 13 run names"),
    ({"duplicates": "last"}, "collection.duplicates", "last"),
    ({"select_runs": []}, "collection.select_runs", ""),
])
def test_study_run_keys_bad_values_name_the_key(campaign, extra, key, needle):
    from planner.study import run_study

    runs, qrels, _, _ = campaign
    doc = {"resamples": 10, "topics": [10], "collection": {"runs": str(runs), "qrels": str(qrels), **extra}}
    with pytest.raises(ConfigError) as e:
        run_study(doc, write=False, quiet=True)
    # (an error met while a scenario runs names the scenario first: "s01 [...]: collection...")
    assert f"{key}: " in str(e.value) and needle in str(e.value), str(e.value)


def test_run_keys_only_with_runs():
    from planner.study import load_config

    for k, v in (("duplicates", "first"), ("select_runs", "a*")):
        with pytest.raises(ConfigError, match=rf"^collection\.{k}: only used with runs \+ qrels"):
            load_config({"collection": {"dataset": "dl19-passage", k: v}})


# ------------------------------------------------------------------ the library
def test_read_runs_says_each_kind_once_and_keeps_every_count(campaign):
    from planner.collection import RunReader, read_runs, run_files

    runs, _, repeated, _ = campaign
    with pytest.warns(PlannerWarning) as rec:
        got = read_runs(runs, duplicates="first")
    assert len(rec) == 3 and len(got) == 9
    assert {n: r.dropped_pairs for n, r in got.items() if r.dropped_pairs} == repeated
    reader = RunReader(run_files(runs, select_runs="input.dup*"), duplicates="first")
    assert reader.names == ["input.dupA", "input.dupB", "input.dupC"]
    for n in reader.names:
        reader(n)
    read = reader.record()
    assert read.empty == () and read.duplicates == repeated and read.dropped_pairs == sum(repeated.values())
    assert read.to_frame().set_index("name")["dropped_pairs"].to_dict() == repeated


def test_score_runs_and_pool_stats_keep_the_record(campaign):
    from planner import pool_stats, score_runs

    runs, qrels, repeated, _ = campaign
    with pytest.warns(PlannerWarning):
        m = score_runs(runs, qrels, "nDCG@10", duplicates="first")["nDCG@10"]
    assert m.meta["read"].empty == tuple(EMPTY) and m.meta["read"].duplicates == repeated
    assert {n: r["duplicates"] for n, r in m.meta["report"].items() if r["duplicates"]} == repeated
    with pytest.warns(PlannerWarning):
        ps = pool_stats(runs, qrels, depths=[10], duplicates="first", select_runs=["input.dupB"])
    assert ps.pool_runs == ("input.dupB",) and ps.read.duplicates == {"input.dupB": repeated["input.dupB"]}


def test_one_run_read_with_first_says_how_many_lines_it_dropped(tmp_path):
    # duplicates="first" dropped repeated pairs without saying how many
    from planner.collection import read_run

    p = tmp_path / "r.run"
    p.write_text("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 a 3 1 r\n1 Q0 b 4 0 r\n2 Q0 a 1 1 r\n")
    with pytest.warns(PlannerWarning, match=r"r\.run: kept the first line .* dropping 2 lines in 1 run: 'r' 2"):
        r = read_run(p, duplicates="first")
    assert len(r) == 3


def test_twenty_four_disagreeing_tags_are_one_line(tmp_path):
    from planner.collection import read_runs

    for i in range(24):
        (tmp_path / f"input.sys{i:02d}").write_text(f"1 Q0 d{i} 1 1.0 sys{i:02d}\n")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert len(read_runs(tmp_path)) == 24
    said = [str(w.message) for w in rec]
    assert said == [f"{tmp_path}: the tag column disagrees with the run name (its file name) in 24 runs: "
                    "'input.sys00' (tag 'sys00'), 'input.sys01' (tag 'sys01'), 'input.sys02' (tag 'sys02') "
                    "and 21 more"]


def test_empty_files_in_a_folder(tmp_path):
    from planner.collection import read_runs

    (tmp_path / "a.run").write_text("")
    (tmp_path / "b.run.gz").write_bytes(gzip.compress(b"\n"))
    with pytest.raises(InputError, match=r"no run file holds a line \(2 empty files\): 'a.run', 'b.run.gz'"):
        read_runs(tmp_path)
    # an empty file beside a real one of the same run name is skipped, not a clash of names
    (tmp_path / "a.txt").write_text("1 Q0 d 1 1.0 a\n")
    with pytest.warns(PlannerWarning, match="skipped 2 empty run files"):
        assert list(read_runs(tmp_path)) == ["a"]


def test_as_runs_mapping_of_paths_says_once_and_given_runs_not_again(campaign):
    from planner.collection import read_run
    from planner.measures import as_runs

    runs, _, repeated, _ = campaign
    paths = {n: runs / f"{n}.gz" for n, _, _ in DUPLICATED}
    with pytest.warns(PlannerWarning) as rec:
        got = as_runs(paths, duplicates="first")
    assert len(rec) == 2 and {n: r.dropped_pairs for n, r in got.items()} == repeated
    given = {"x": read_run(runs / "input.dupA.gz", duplicates="first", warn=False)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(as_runs(given, select_runs="x")) == ["x"]
    with pytest.raises(ParameterError, match=r"^select_runs: 'y' matches none of the 1 run name \('x'\)"):
        as_runs(given, select_runs="y")


def test_trec_eval_measures_skipped_are_one_line(tmp_path):
    # each skipped measure was a warning of its own (a trec_eval -q file holds dozens)
    from planner.collection import read_trec_eval

    full = "".join(f"{m}\t{t}\t0.{i}{t}\n" for i, m in enumerate(["map", "P_10", "recip_rank", "ndcg"]) for t in (1, 2))
    for r in "ab":
        (tmp_path / f"{r}.res").write_text(full)
    (tmp_path / "c.res").write_text("map\t1\t0.1\nmap\t2\t0.2\nP_10\t1\t0.3\nrecip_rank\t1\t0.5\nndcg\t1\t0.7\n")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        got = read_trec_eval(tmp_path)
    assert list(got) == ["map"] and got["map"].values[2].tolist() == [0.1, 0.2]
    said = [str(w.message) for w in rec]
    assert len(said) == 1 and said[0].startswith(f"{tmp_path}: skipped 3 measures: 'P_10' (")
    assert "c.res: no 'P_10' row for topic '2'" in said[0] and said[0].endswith(")")

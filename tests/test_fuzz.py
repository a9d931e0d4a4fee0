"""Hostile inputs and failing disks (issue 23): every case of the audit, each a test that
failed on main before the fix. The limits are in docs/robustness.md. Fast: under 30 s."""

from __future__ import annotations

import bz2
import contextlib
import fcntl
import gzip
import lzma
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import planner
from planner import cli
from planner.collection import load_scores, read_qrels, read_run, read_runs, read_trec_eval
from planner.collection import text as textmod
from planner.errors import ConfigError, InputError, ParameterError, PlannerWarning
from planner.measures import score_runs
from planner.report import write_report
from planner.report.render import md_escape
from planner.study import load_config
from planner.study.config import MAX_SCENARIOS
from planner.study.yamlfile import MAX_YAML_NODES

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

RUN = "101 Q0 d1 1 2.0 r\n101 Q0 d2 2 1.0 r\n102 Q0 d1 1 0.5 r\n"
WIDE = "topic,a,b,c\n1,0.1,0.2,0.3\n2,0.4,0.2,0.1\n3,0.5,0.6,0.2\n4,0.3,0.1,0.4\n"


def _one_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert "Traceback" not in err
    return err


# ----------------------------------------------------------------- 1. memory from tiny files
def _alias_bomb(levels: int = 9) -> str:
    text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n'
    prev = "a"
    for c in "bcdefghijkl"[:levels - 1]:
        text += f"{c}: &{c} [" + ",".join([f"*{prev}"] * 9) + "]\n"
        prev = c
    return text


def test_yaml_alias_bomb_refused_before_expansion(tmp_path, capsys):
    # 600 bytes that expand to 9^9 strings: 30-54 s and 1.5-2.3 GB on main
    f = tmp_path / "bomb.yaml"
    f.write_text("collection: {dataset: dl19-passage}\n" + _alias_bomb())
    t0 = time.perf_counter()
    assert cli.main(["study", str(f), "-o", str(tmp_path / "out"), "--quiet"]) == 2
    assert time.perf_counter() - t0 < 5
    err = _one_error(capsys)
    assert f"{f}:" in err and f"more than {MAX_YAML_NODES} values" in err and "MAX_YAML_NODES" in err


def test_yaml_small_aliases_still_work_and_schema_errors_stay_short(tmp_path):
    f = tmp_path / "ok.yaml"
    f.write_text("collection: {dataset: dl19-passage}\nmethod: analytic\n"
                 "topics: &t [10, 20]\nscenarios: [{topics: *t, measure: nDCG@10}]\n")
    assert load_config(f).scenarios[0]["topics"] == [10, 20]
    # a wrong value built from aliases: the message names the key and stays short
    g = tmp_path / "bad.yaml"
    g.write_text("collection: {dataset: dl19-passage}\n" + _alias_bomb(4) + "description: *d\n")
    with pytest.raises(ConfigError) as ei:
        load_config(g)
    assert len(str(ei.value)) < 400


def test_yaml_recursive_alias_and_huge_integer_are_one_line(tmp_path, capsys):
    rec = tmp_path / "rec.yaml"
    rec.write_text("collection: &c {dataset: dl19-passage, x: *c}\n")
    big = tmp_path / "big.yaml"
    big.write_text("collection: {dataset: dl19-passage}\nseed: " + "9" * 5000 + "\n")
    for f, words in ((rec, "recursive alias"), (big, "more than 4,300 digits")):
        assert cli.main(["study", str(f), "-o", str(tmp_path / "out"), "--quiet"]) == 2
        err = _one_error(capsys)
        assert f"{f}:" in err and words in err


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["gz", "bz2", "xz"])
def test_decompression_bomb_refused_while_streaming(tmp_path, monkeypatch, kind):
    # a 3 KB .bz2 read whole into 12.7 GB on main; here the limit (lowered to 1 MB) stops it
    monkeypatch.setenv("PLANNER_MAX_INPUT_MB", "1")
    payload = b"101 Q0 d1 1 1.0 r\n" * 200_000          # 3.6 MB of a valid run
    comp = {"gz": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[kind](payload)
    assert len(comp) < 100_000
    f = tmp_path / f"run.{kind}"
    f.write_bytes(comp)
    with pytest.raises(InputError, match=r"larger than the input limit of 1 MB \(after decompression") as ei:
        read_run(f)
    assert ei.value.file == str(f)


def test_compressed_input_has_its_own_lower_limit(tmp_path, monkeypatch):
    # a 1.9 MB .gz held 256 MB of valid scores (under the input limit): reading them took over
    # 5 minutes and 1.3 GB. Compressed content now stops at MAX_DECOMPRESSED_BYTES (64 MB),
    # here lowered to 1 MB; a plain file of the same bytes is read
    assert textmod.MAX_DECOMPRESSED_BYTES == 64 << 20 < textmod.MAX_INPUT_BYTES
    monkeypatch.setattr(textmod, "MAX_DECOMPRESSED_BYTES", 1 << 20)
    payload = b"".join(f"101 Q0 d{k} {k + 1} 1.0 r\n".encode() for k in range(80_000))     # 2 MB
    (tmp_path / "run").write_bytes(payload)
    (tmp_path / "run.gz").write_bytes(gzip.compress(payload))
    assert len(read_run(tmp_path / "run").frame) == 80_000
    with pytest.raises(InputError, match=r"larger than the input limit of 1 MB \(after decompression") as ei:
        read_run(tmp_path / "run.gz")
    assert ei.value.file == str(tmp_path / "run.gz")
    monkeypatch.setenv("PLANNER_MAX_INPUT_MB", "3")          # raises both limits
    assert len(read_run(tmp_path / "run.gz").frame) == 80_000


def test_a_line_without_end_is_refused_with_its_line(tmp_path):
    f = tmp_path / "long.xz"
    f.write_bytes(lzma.compress(b"101 Q0 d1 1 1.0 r\n" + b"x" * (textmod.MAX_LINE_BYTES + 10)))
    with pytest.raises(InputError, match="a line longer than the limit of 1 MB") as ei:
        read_run(f)
    assert ei.value.line == 2


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_devices_and_fifos_refused_by_type(tmp_path, capsys):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    for path, words in (("/dev/zero", "is a device"), (str(fifo), "is a FIFO")):
        t0 = time.perf_counter()
        for reader in (read_run, read_qrels, load_scores, read_trec_eval):
            with pytest.raises(InputError, match=words):
                reader(path)
        assert cli.main(["fit", "--scores", path]) == 2
        assert words in _one_error(capsys)
        assert time.perf_counter() - t0 < 5
    study = tmp_path / "s.yaml"
    os.mkfifo(study)
    assert cli.main(["study", str(study), "--quiet"]) == 2
    assert "is a FIFO" in _one_error(capsys)


def test_output_symlink_loop_is_one_line(tmp_path, capsys):
    (tmp_path / "l1").symlink_to(tmp_path / "l2")
    (tmp_path / "l2").symlink_to(tmp_path / "l1")
    scores = tmp_path / "s.csv"
    scores.write_text(WIDE)
    assert cli.main(["scores", str(scores), "-o", str(tmp_path / "l1")]) == 2
    err = _one_error(capsys)
    assert "--output" in err and "symlink loop" in err
    assert cli.main(["study", "-o", str(tmp_path / "l1"), "--quiet", "--force"]) == 2
    assert "symlink loop" in _one_error(capsys)


def test_pair_statistics_over_the_memory_limit_refused_before_allocation():
    # 20,000 systems took 6.3 GB and failed on main; every pair computation starts at pair_index.
    # 4,000 systems ran under the old 2 GB pair limit and peaked over 1 GB (predict's band: 24 GB
    # on 3,950): the limit is now 128 MB of pair statistics, 2,219 systems
    for S in (12_000, 3_000):
        x = np.random.default_rng(0).random((S, 3))
        for f in (planner.variance.pair_stats, lambda m: planner.predict(m, topics=[2], method="analytic")):
            t0 = time.perf_counter()
            with pytest.raises(InputError, match="over the limit of 128 MB"):
                f(x)
            assert time.perf_counter() - t0 < 5


# ----------------------------------------------------------------- 2. nothing silently wrong
@FAST
@given(ch=st.sampled_from([chr(c) for c in [*range(0, 9), 11, 12, *range(14, 32), *range(127, 160)]]),
       where=st.sampled_from(["doc", "topic", "tag"]))
def test_control_characters_in_run_ids_name_the_line(ch, where):
    # `d1\0junk` was cut to d1 by the scorer: it scored as the relevant d1
    fields = {"topic": "102", "doc": "d1", "tag": "r"}
    fields[where] = fields[where][:1] + ch + "x"
    line = f"{fields['topic']} Q0 {fields['doc']} 1 0.5 {fields['tag']}\n"
    with pytest.raises(InputError, match="control character") as ei:
        read_run((RUN + line).encode())
    assert ei.value.line == 4


def test_nul_in_doc_id_does_not_score_as_the_relevant_doc(tmp_path):
    run = {"r": {"101": {"d1\0junk": 2.0, "d2": 1.0}}}
    with pytest.raises(ParameterError, match="control character"):
        score_runs(run, read_qrels("101 0 d1 1\n"), ["AP"])
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r.run").write_bytes(b"101 Q0 d1\0junk 1 2.0 r\n")
    with pytest.raises(InputError, match="control character") as ei:
        score_runs(tmp_path / "runs", read_qrels("101 0 d1 1\n"), ["AP"])
    assert ei.value.line == 1


def test_nul_in_doc_id_is_not_counted_unjudged_by_pool(tmp_path, capsys):
    # pool counted `d1\0junk` as one more unjudged document
    (tmp_path / "runs").mkdir()
    (tmp_path / "runs" / "r.run").write_bytes(b"101 Q0 d1 1 2.0 r\n101 Q0 d1\0junk 2 1.0 r\n")
    (tmp_path / "q.txt").write_text("101 0 d1 1\n")
    assert cli.main(["pool", "--runs", str(tmp_path / "runs"), "--qrels", str(tmp_path / "q.txt"),
                     "--quiet"]) == 2
    err = _one_error(capsys)
    assert "r.run:2" in err and "control character" in err


@pytest.mark.parametrize("name", ["a\x1bb", "a\x00"])
def test_control_characters_in_system_and_topic_names(tmp_path, name):
    f = tmp_path / "w.csv"
    f.write_text(WIDE.replace(",b,", f",{name},"))
    with pytest.raises(InputError, match="control character") as ei:
        load_scores(f)
    assert ei.value.file == str(f) and ei.value.line == 1
    g = tmp_path / "strata.csv"
    g.write_text(f"topic,stratum\n1,x\n2,{name}\n3,x\n4,y\n")
    with pytest.raises(InputError, match="control character") as ei:
        load_scores(_wide(tmp_path), strata=g)
    assert ei.value.file == str(g) and ei.value.line == 3


def _wide(tmp_path: Path) -> Path:
    f = tmp_path / "ok.csv"
    f.write_text(WIDE)
    return f


def test_folders_report_every_entry_they_skip(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for n in ("a", "b"):
        (runs / f"{n}.run").write_text(RUN.replace(" r\n", f" {n}\n"))
    (runs / "gone.run").symlink_to(tmp_path / "missing")
    (runs / "loop.run").symlink_to(runs / "loop.run")
    os.mkfifo(runs / "pipe.run")
    with pytest.warns(PlannerWarning, match=r"skipped 3 entries .*'gone.run' \(a dangling symlink\), "
                                            r"'loop.run' \(a symlink loop\), 'pipe.run' \(a FIFO\)"):
        got = read_runs(runs)
    assert sorted(got) == ["a", "b"]
    ev = tmp_path / "eval"
    ev.mkdir()
    (ev / "a.eval").write_text("map\t101\t0.5\nmap\t102\t0.25\n")
    (ev / "b.eval").write_text("map\t101\t0.75\nmap\t102\t0.5\n")
    (ev / "c.eval").symlink_to(tmp_path / "missing")
    with pytest.warns(PlannerWarning, match="skipped 1 entry"):
        assert read_trec_eval(ev)["map"].n_systems == 2


# ----------------------------------------------------------------- 3. atomic writes, lock, stale folders
def test_scores_output_failed_write_keeps_the_old_file_and_exits_1(tmp_path, monkeypatch, capsys):
    src, out = _wide(tmp_path), tmp_path / "out.csv"
    out.write_text("old\n")

    def full(*a, **k):
        raise OSError(28, "No space left on device", str(out))
    monkeypatch.setattr("planner._atomic.os.replace", full)
    assert cli.main(["scores", str(src), "-o", str(out)]) == 1
    assert "No space left on device" in _one_error(capsys)
    assert out.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.csv", "out.csv"]


def test_scores_output_through_a_symlink_writes_its_target(tmp_path, capsys):
    src, real = _wide(tmp_path), tmp_path / "real.csv"
    real.write_text("old\n")
    (tmp_path / "link.csv").symlink_to(real)
    assert cli.main(["scores", str(src), "-o", str(tmp_path / "link.csv")]) == 0
    assert (tmp_path / "link.csv").is_symlink() and real.read_text().startswith("topic,a,b,c")
    # a dangling link into a missing folder: refused before any work
    (tmp_path / "dangling.csv").symlink_to(tmp_path / "nowhere" / "x.csv")
    assert cli.main(["scores", str(src), "-o", str(tmp_path / "dangling.csv")]) == 2
    assert "--output" in _one_error(capsys)


def test_score_matrix_to_csv_keeps_the_old_file_when_the_write_fails(tmp_path, monkeypatch):
    # ScoreMatrix.to_csv wrote in place: a failed write left half a file where the old one was
    m = load_scores(_wide(tmp_path))
    out = tmp_path / "m.csv.gz"
    m.to_csv(out)
    before = out.read_bytes()
    assert load_scores(out).values.tolist() == m.values.tolist()     # compressed by its suffix

    def full(*a, **k):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr("planner._atomic.os.replace", full)
    with pytest.raises(OSError, match="No space"):
        m.take(systems=range(2)).to_csv(out)
    assert out.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.csv.gz", "ok.csv"]


RESULTS = {"study": "t", "answer": {"text": "Choose **5 topics**."}}


def test_report_lock_second_run_fails_with_one_line(tmp_path, capsys):
    out = tmp_path / "rep"
    write_report(RESULTS, out)
    with open(tmp_path / ".rep.lock", "a+") as fh:      # another run holds the folder
        fh.write("4242")
        fh.flush()
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert cli.main(["study", "-o", str(out), "--force", "--quiet"]) == 2
        err = _one_error(capsys)
        assert "another planner run (pid 4242) is writing this report folder" in err
    write_report(RESULTS, out, force=True)          # released: a run gets it again
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


def test_stale_temporary_folders_of_dead_runs_are_removed(tmp_path):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    alive = os.getppid()
    write_report(RESULTS, tmp_path / "rep")
    for name in (f".rep.tmp-{dead.pid}", f".rep.old-{dead.pid}", f".rep.tmp-{alive}"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "report.md").write_text("half")
    # (with no rep, the .old folder would be put back: tests/test_kill.py)
    write_report(RESULTS, tmp_path / "rep", force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f".rep.tmp-{alive}", "rep"]


def test_report_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path):
    real = tmp_path / "real"
    write_report(RESULTS, real)
    (tmp_path / "link").symlink_to(real)
    write_report({**RESULTS, "study": "second"}, tmp_path / "link", force=True)
    assert (tmp_path / "link").is_symlink()
    assert "second" in (real / "results.json").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]
    # a dangling link: the folder it names is written, the link stays a link
    (tmp_path / "dangling").symlink_to(tmp_path / "new" / "rep")
    write_report(RESULTS, tmp_path / "dangling")
    assert (tmp_path / "dangling").is_symlink() and (tmp_path / "new" / "rep" / "report.md").is_file()


def test_killed_study_leaves_the_old_report_and_a_rerun_no_stray_files(tmp_path):
    out = tmp_path / "rep"
    write_report(RESULTS, out)
    before = (out / "report.md").read_text()
    script = ("import os, signal\nfrom planner.report import write_report, figure_set\n"
              "def die(tables, folder):\n    os.kill(os.getpid(), signal.SIGKILL)\n"
              "figure_set.render_figures = die\n"
              f"write_report({{'study': 'k', 'answer': {{'text': 'x'}}}}, {str(out)!r}, force=True)\n")
    r = subprocess.run([sys.executable, "-c", script], env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert r.returncode == -9
    assert (out / "report.md").read_text() == before           # the old report, whole
    assert {p.name.split("-")[0] for p in tmp_path.iterdir()} == {"rep", ".rep.tmp", ".rep.lock"}
    with pytest.raises(InputError, match="exists"):       # a rerun without force: refused, but cleans up
        write_report(RESULTS, out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]
    assert (out / "report.md").read_text() == before
    write_report(RESULTS, out, force=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


# ----------------------------------------------------------------- 4. injection
@FAST
@given(st.text(alphabet=st.sampled_from(list("<>[]()&;#!/?`*_ ax=\n")), max_size=40))
def test_markdown_escape_leaves_no_tag_or_link(s):
    e = md_escape(s)
    assert "\n" not in e
    assert not any((e[i] == "<" and e[i + 1:i + 2].isalpha()) or e[i:i + 2] in ("</", "<!", "<?")
                   for i in range(len(e)))
    assert "](" not in e.replace("\\](", "")


def test_report_md_escapes_names_from_the_data(tmp_path):
    evil = "<img src=x onerror=alert(1)>"
    res = {"study": evil, "description": evil + " [x](javascript:alert(1))",
           "answer": {"text": f"Choose **5 topics** (scenario **{evil}**).", "buys": [evil]},
           "honest": {"paragraphs": [evil]}, "warnings": [evil]}
    import pandas as pd
    out = write_report(res, tmp_path / "rep", tables={
        "scenarios": pd.DataFrame({"scenario": [evil], "system": [evil]})})
    md = (out / "report.md").read_text()
    assert "<img" not in md
    assert "[x](javascript" not in md and "[x\\](javascript" in md      # the bracket escaped: no link
    assert "&lt;img src=x onerror=alert(1)>" in md
    assert "<img" not in (out / "report.html").read_text()


# ----------------------------------------------------------------- 5. one validation everywhere
def test_min_diff_zero_and_tau_minus_one_rejected_by_cli_as_by_schema(tmp_path, capsys):
    src = _wide(tmp_path)
    for argv in (["predict", "--scores", str(src), "--topics", "2", "--min-diff", "0"],
                 ["size", "--design", "paired-t", "--sigma2", "0.02", "--min-diff", "0"],
                 ["size", "--scores", str(src), "--target", "kendall_tau:-1"]):
        assert cli.main(argv) == 2
        err = _one_error(capsys)
        assert "--min-diff" in err or "--target" in err
    with pytest.raises(ParameterError, match="positive"):
        planner.predict(load_scores(src), topics=[2], min_diff=0)
    with pytest.raises(ConfigError):
        load_config({"collection": {"dataset": "dl19-passage"}, "min_diff": 0})


def test_a_locked_file_or_folder_is_exit_2(tmp_path, capsys, monkeypatch):
    # as root nothing is locked: the PermissionError the system raises is made
    src = _wide(tmp_path)
    real_stat = os.stat

    def locked(p, *a, **k):
        if str(p).startswith(str(tmp_path)):
            raise PermissionError(13, "Permission denied", str(p))
        return real_stat(p, *a, **k)
    monkeypatch.setattr(os, "stat", locked)
    assert cli.main(["fit", "--scores", str(src)]) == 2
    assert "ermission denied" in _one_error(capsys)


# ----------------------------------------------------------------- 6. unbounded work
def test_a_large_grid_is_refused_with_its_size_before_expansion(tmp_path, capsys):
    doc = {"collection": {"dataset": "dl19-passage"}, "method": "analytic",
           "min_diff": [round(0.001 * (i + 1), 3) for i in range(100)],
           "measure": [f"nDCG@{k}" for k in range(1, 101)], "topics": [10, 20]}
    t0 = time.perf_counter()
    with pytest.raises(ConfigError, match=r"expands to 10,000 scenarios \(20,000,000 topic-count x resample "
                                          rf"draws\); the limit is {MAX_SCENARIOS} scenarios") as ei:
        load_config(doc)
    assert ei.value.key == "scenarios" and time.perf_counter() - t0 < 2
    small = dict(doc, min_diff=[0.05], measure=[f"nDCG@{k}" for k in range(1, 11)], max_scenarios=5)
    with pytest.raises(ConfigError, match="10 scenarios"):
        load_config(small)
    assert len(load_config(small, max_scenarios=10).scenarios) == 10
    f = tmp_path / "grid.yaml"
    import yaml
    f.write_text(yaml.safe_dump(doc))
    assert cli.main(["study", str(f), "-o", str(tmp_path / "o"), "--quiet"]) == 2
    assert "--max-scenarios N" in _one_error(capsys)


# ----------------------------------------------------------------- 7. numbers
def test_drop_keeps_both_systems_with_equal_totals():
    # the same P@10 values in another order: float means 0.45799999999999996 and 0.458
    rng = np.random.default_rng(0)
    a = rng.integers(0, 11, size=50) / 10
    b = rng.permutation(a)
    assert np.mean(a) != np.mean(b)            # the float trap this test is about
    x = np.vstack([np.full(50, 0.05), a, b, np.full(50, 0.9)])
    # the 2/3 quantile of 4 means is the third smallest, the tied value; gt4ireval keeps
    # means >= the quantile, so both tied systems stay (float means dropped one of them)
    for order in (x, x[[0, 2, 1, 3]]):
        f = planner.fit(order, drop=2 / 3)
        assert f.dropped == ("s1",) and f.n_systems == 3     # s1: the first row, mean 0.05


def _plain_first_set(x, n, R, rng, edges):
    """Voorhees & Buckley's procedure as a plain loop, one pair (x has two rows)."""
    draws, swaps = np.zeros(len(edges) - 1), np.zeros(len(edges) - 1)
    T = x.shape[1]
    for _ in range(R):
        p = rng.permutation(T)
        d1 = round(float(np.sum(x[0, p[:n]] - x[1, p[:n]])) / n, 10)
        d2 = round(float(np.sum(x[0, p[n:2 * n]] - x[1, p[n:2 * n]])) / n, 10)
        k = np.searchsorted(edges, abs(d1), side="right") - 1
        draws[k] += 1
        swaps[k] += abs(np.sign(d1) - np.sign(d2)) / 2
    return draws, swaps


def test_first_set_binning_matches_a_plain_loop_within_binomial_bounds():
    x = np.array([[0.1, 0.3, 0.5, 0.2, 0.6, 0.0, 0.4, 0.9, 0.3, 0.1, 0.5, 0.7],
                  [0.2, 0.1, 0.4, 0.4, 0.2, 0.1, 0.5, 0.3, 0.3, 0.0, 0.6, 0.2]])
    edges = (0.0, 0.1, 0.2, math.inf)
    R = 4000
    got = planner.simulate.first_set_bins(x, topics=[4], bins=edges, n_resamples=R, rng=5)
    assert got.draws.sum() == R
    d, s = _plain_first_set(x, 4, R, np.random.default_rng(99), np.array(edges))
    for k in range(3):
        if min(d[k], got.draws[0, k]) < 200:
            continue
        p1, p2 = got.swaps[0, k] / got.draws[0, k], s[k] / d[k]
        p = (p1 + p2) / 2
        se = math.sqrt(p * (1 - p) * (1 / d[k] + 1 / got.draws[0, k]))
        assert abs(p1 - p2) < 4 * se + 1e-9, (k, p1, p2, se)
    again = planner.simulate.first_set_bins(x, topics=[4], bins=edges, n_resamples=R, rng=5)
    assert np.array_equal(again.swaps, got.swaps)      # seeded: the same numbers


def test_predict_bins_on_the_command_line(tmp_path, capsys):
    src = tmp_path / "s.csv"
    rng = np.random.default_rng(1)
    cols = ",".join(f"s{i}" for i in range(4))
    src.write_text("topic," + cols + "\n" + "".join(
        f"{t}," + ",".join(f"{v:.2f}" for v in rng.random(4)) + "\n" for t in range(20)))
    assert cli.main(["predict", "--scores", str(src), "--topics", "5", "--bins", "0,0.1,inf"]) == 0
    out = capsys.readouterr().out
    assert "[0, 0.1)" in out and "[0.1, inf)" in out
    assert cli.main(["predict", "--scores", str(src), "--topics", "5", "--bins", "--bin-by", "first-set",
                     "--seed", "3", "--resamples", "50", "--method", "analytic"]) == 0
    out = capsys.readouterr().out
    assert "Voorhees & Buckley" in out and "seed 3" in out
    assert cli.main(["predict", "--scores", str(src), "--topics", "5", "--bins", "0.1,0"]) == 2
    assert "--bins" in _one_error(capsys)



# ----------------------------------------------------------------- 8. any bytes: a result or one error
@settings(FAST, max_examples=25)
@given(data=st.binary(max_size=200) | st.text(alphabet="101 Q0 d\t.5e-\n\r\x00\x1b#,\"'", max_size=200)
       .map(lambda t: t.encode()))
def test_readers_give_a_result_or_a_planner_error_for_any_bytes(data):
    from planner.errors import PlannerError
    for reader in (read_run, read_qrels):
        with contextlib.suppress(PlannerError):
            reader(data)


@settings(FAST, max_examples=25)
@given(text=st.text(alphabet="ab:-[]{}&*!,\n 0123456789.'\"#|>", max_size=120))
def test_study_files_give_a_config_or_one_error(tmp_path_factory, text):
    from planner.errors import PlannerError
    f = tmp_path_factory.mktemp("y") / "s.yaml"
    f.write_text(text)
    with contextlib.suppress(PlannerError):
        load_config(f)

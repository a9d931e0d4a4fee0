"""A study killed (SIGKILL) at any point, then rerun with and without --force: exactly one
complete report (the old one or the new one) and no stray files (issue 23)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from planner import cli
from planner.report import write_report

STUDY = """\
name: kill-test
seed: 1
resamples: 20
collection:
  dataset: dl19-passage
measure: nDCG@10
method: [analytic]
variance: pair
min_diff: 0.05
topics: [10, 20, 43]
targets:
  - {target: swap_rate, value: 0.05}
"""
RESULTS = {"study": "t", "answer": {"text": "Choose **5 topics**."}}


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _complete(folder: Path) -> dict:
    assert (folder / "report.md").is_file() and (folder / "report.html").is_file()
    return json.loads((folder / "results.json").read_text())


def test_kill_between_the_renames_puts_the_old_report_back(tmp_path, capsys):
    # killed after the old report was set aside (.rep.old-PID) and before the new one
    # (.rep.tmp-PID) was renamed in: a rerun put neither back and removed both
    out = tmp_path / "rep"
    write_report(RESULTS, out)
    pid = _dead_pid()
    os.replace(out, tmp_path / f".rep.old-{pid}")
    write_report({**RESULTS, "study": "new"}, tmp_path / "new")
    os.replace(tmp_path / "new", tmp_path / f".rep.tmp-{pid}")
    (tmp_path / ".rep.lock").write_text(str(pid))
    assert cli.main(["study", "-o", str(out), "--quiet"]) == 2       # exists: refused, cleaned
    assert "exists" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep"]
    assert _complete(out)["study"] == "t"


def test_killed_file_output_leaves_no_temporary_file_after_a_rerun(tmp_path):
    src, out = tmp_path / "w.csv", tmp_path / "out.csv"
    src.write_text("topic,a,b\n1,0.1,0.2\n2,0.3,0.5\n")
    (tmp_path / f".out.csv.tmp-{_dead_pid()}").write_text("topic,a,b\n1,0.")      # half a file
    assert cli.main(["scores", str(src), "-o", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.csv", "w.csv"]


def _kill_when(proc: subprocess.Popen, folder: Path, prefix: str, timeout: float = 120) -> None:
    """SIGKILL ``proc`` as soon as an entry named ``prefix...`` appears in ``folder``."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        if any(p.name.startswith(prefix) for p in folder.iterdir()):
            break
        time.sleep(0.002)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


@pytest.mark.slow
@pytest.mark.parametrize("stage", [".rep.lock", ".rep.tmp-"])     # computing; writing the report
def test_study_killed_and_rerun_leaves_one_complete_report(tmp_path, stage):
    study = tmp_path / "s.yaml"
    study.write_text(STUDY)
    out = tmp_path / "rep"
    cmd = [sys.executable, "-m", "planner", "study", str(study), "-o", str(out), "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}

    def run(*extra: str) -> int:
        return subprocess.run(cmd + list(extra), env=env, capture_output=True).returncode

    # no report yet: killed, then a plain rerun writes one
    _kill_when(subprocess.Popen(cmd, env=env), tmp_path, stage)
    assert not out.exists()
    assert run() == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep", "s.yaml"]
    first = (out / "results.json").read_bytes()
    _complete(out)
    # a report there: a --force run killed leaves it whole; reruns clean up after the dead run
    _kill_when(subprocess.Popen(cmd + ["--force"], env=env), tmp_path, stage)
    assert (out / "results.json").read_bytes() == first
    assert run() == 2                                               # exists, without --force
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep", "s.yaml"]
    assert run("--force") == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep", "s.yaml"]
    assert (out / "results.json").read_bytes() == first             # same seed, same bytes

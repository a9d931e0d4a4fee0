"""Where tasks run (planner.parallel): serially, in local processes, on a Dask cluster; the
same numbers, byte for byte, in every case."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml

import planner
from planner import cli
from planner.errors import ParameterError
from planner.parallel import run_tasks
from planner.study import run_study

pytestmark = pytest.mark.filterwarnings("ignore::planner.errors.DegenerateDataWarning")

STUDY = {"collection": {"dataset": "dl19-passage"}, "method": ["analytic", "bootstrap"], "topics": [10, 20],
         "resamples": 50, "measure": ["nDCG@10", "RR(rel=2)"],
         "targets": [{"target": "swap_rate", "value": 0.05}]}


def _study_bytes(**where) -> tuple[str, dict]:
    res = run_study(STUDY, quiet=True, write=False, **where)
    return json.dumps(res.results, sort_keys=True), {k: v.to_csv() for k, v in res.tables.items()}


def _square(x: int) -> int:
    return x * x


def test_run_tasks_keeps_task_order_in_local_processes():
    assert run_tasks(_square, range(7), jobs=2) == [x * x for x in range(7)]


def test_bad_jobs_and_scheduler_are_named():
    with pytest.raises(ParameterError, match="jobs"):
        planner.validate(planner.datasets.load("dl19-passage"), pilot=20, topics=[5], repeats=2, jobs=0)
    with pytest.raises(ParameterError, match="scheduler"):
        run_study(STUDY, quiet=True, write=False, scheduler=3)


@pytest.mark.slow
def test_cli_unreachable_scheduler_is_one_line_exit_2(capsys, tmp_path):
    pytest.importorskip("distributed")
    assert cli.main(["study", "-o", str(tmp_path / "out"), "--scheduler", "tcp://127.0.0.1:9", "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "--scheduler" in err and "cannot reach" in err and len(err.splitlines()) == 1


@pytest.fixture(scope="module")
def cluster():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as c:
        yield c


@pytest.mark.slow
def test_study_on_a_two_worker_cluster_writes_the_same_bytes(cluster):
    serial = _study_bytes()
    assert _study_bytes(scheduler=cluster.scheduler_address) == serial
    assert _study_bytes(jobs=2) == serial


@pytest.mark.slow
def test_study_key_sends_the_scenarios_to_the_cluster(cluster, tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump({**STUDY, "scheduler": cluster.scheduler_address}))
    res = run_study(f, quiet=True, write=False)
    assert res.provenance["scheduler"] == cluster.scheduler_address
    assert "scheduler" not in res.results["config"]      # where it ran is not part of the results
    assert json.dumps(res.results["scenarios"], sort_keys=True) == \
        json.dumps(run_study(STUDY, quiet=True, write=False).results["scenarios"], sort_keys=True)


@pytest.mark.slow
def test_validate_repeats_on_the_cluster_match_serial(cluster):
    scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
    kw = {"pilot": 20, "topics": [5, 10], "repeats": 4, "subsets": 50, "rng": 3,
          "methods": ("predictive", "analytic", "bootstrap")}
    serial = planner.validate(scores, **kw)
    remote = planner.validate(scores, scheduler=cluster.scheduler_address, **kw)
    assert remote.rows == serial.rows
    for k in serial.observed:
        assert np.array_equal(remote.observed[k], serial.observed[k])

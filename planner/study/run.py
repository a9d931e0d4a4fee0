"""Running a study: a random stream per scenario, the worker pool, and the results put together."""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path

from .._random import keyed_stream
from ..errors import ConfigError, DegenerateDataWarning, ParameterError
from ..parallel import check_jobs, check_scheduler, run_tasks
from ..progress import Progress, Share, bar, check_progress
from ..report import check_target, jsonable, versions, write_report
from .config import StudyConfig, load_config
from .estimate import StudyWork, check_study_work
from .honest import honest_paragraphs
from .inputs import held_inputs, sha256_file
from .narrative import answer
from .paired import paired_measures
from .results import ScenarioResult, StudyResult
from .reuse import pool_reuse, reuse_paragraph
from .scenario import run_scenario
from .selection import run_selection, selection_tables
from .tables import tables

__all__ = ["run_study", "scenario_key"]

#: (key, sub-key) -> default of settings added later (see :func:`scenario_key`)
_KEY_LATER_DEFAULTS = {("costs", "variant"): 0.0}


def _worker(args, progress: Progress = False) -> ScenarioResult:
    sc, rng, resamples, seed = args
    try:
        return run_scenario(sc, rng, resamples, seed, progress)
    except (ParameterError, ConfigError) as exc:
        # name the scenario: "s03 [dl19-passage, RR(rel=2)]: measure: ..."
        raise ConfigError(str(exc), key=f"{sc['id']} [{sc['name']}]") from None


def _plain(v, key=None):
    if isinstance(v, Mapping):
        return {str(k): _plain(x, str(k)) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if key in ("scores", "runs", "qrels", "strata") and isinstance(v, str):
        return os.path.basename(os.path.normpath(v))
    return v


def scenario_key(sc: Mapping) -> str:
    """The settings that define a scenario's computation, as canonical JSON.

    Not its id, name or position in the grid, and each input file by its name only (the
    resolved paths differ between checkouts, the numbers must not). Settings added after
    studies were published, at their default (which changes no draw), stay out of the key, so
    that those studies keep their streams and numbers. A scenario's random stream is
    :func:`planner._random.keyed_stream` of the study seed and this key.

    Examples
    --------
    >>> scenario_key({"id": "s01", "name": "x", "method": "analytic", "costs": {"variant": 0.0}})
    '{"costs": {}, "method": "analytic"}'
    """
    kept = {k: _plain(v, k) for k, v in sc.items() if k not in ("id", "name", "index")}
    for (k, sub), default in _KEY_LATER_DEFAULTS.items():
        if isinstance(kept.get(k), dict) and kept[k].get(sub) == default:
            kept[k] = {a: b for a, b in kept[k].items() if a != sub}
    return json.dumps(kept, sort_keys=True, default=str)


def _input_paths(cfg: StudyConfig) -> list[str]:
    """The study file and every file or folder its scenarios read (collections, strata)."""
    paths = [cfg.source] if cfg.source else []
    for sc in cfg.scenarios:
        coll = sc["collection"]
        for c in coll.get("stack", [coll]):
            paths += [c[k] for k in ("scores", "runs", "qrels", "strata") if isinstance(c.get(k), str)]
    return list(dict.fromkeys(paths))


def _run_all(tasks: list, jobs: int, tick: Callable[..., None], scheduler=None) -> list[ScenarioResult]:
    """Every scenario, in order; in ``jobs`` processes or on a Dask cluster (planner.parallel).

    In this process ``tick`` (the study's bar) advances inside each scenario, step by step (its
    slice of the bar, a :class:`planner.progress.Share`); elsewhere as each scenario finishes."""
    if jobs == 1 and scheduler is None:
        return [_worker(t, Share(tick, 1.0)) for t in tasks]
    return run_tasks(_worker, tasks, jobs=jobs, scheduler=scheduler, progress=tick)


def _unique(items) -> list:
    out: list = []
    for x in items:
        if x not in out:
            out.append(x)
    return out


def _say_long(name: str, work: StudyWork, quiet: bool) -> None:
    """A study estimated over :data:`~planner.study.estimate.LONG_SECONDS` says so before it starts."""
    if not quiet and work.long:
        print(f"study {name}: {work.describe()} estimated ({len(work.per_scenario):,} scenarios)",
              file=sys.stderr, flush=True)


def _check_args(jobs, write: bool, out) -> None:
    check_jobs(jobs)
    if not write and out is not None:
        raise ParameterError("not used with write=False (no report folder is written)", parameter="out")


def _provenance(cfg: StudyConfig, vers: dict, inputs: list, jobs: int, command: str | None,
                scheduler=None) -> dict:
    return {"planner_version": vers["planner"], "versions": vers, "seed": cfg.seed,
            "resamples": cfg.resamples, "jobs": int(jobs), "inputs": inputs,
            "scheduler": scheduler if scheduler is None or isinstance(scheduler, str) else "client", "config": cfg.raw,
            "study_file": cfg.source,
            "study_file_sha256": sha256_file(Path(cfg.source)) if cfg.source else None,
            "command": command, "platform": sys.platform,
            "finished_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
            "elapsed_seconds": None}


def run_study(config: str | os.PathLike | Mapping | None = None, *, out: str | os.PathLike | None = None,
              force: bool = False, seed: int | None = None, jobs: int = 1, quiet: bool = False,
              write: bool = True, command: str | None = None, max_scenarios: int | None = None,
              scheduler=None, progress: Progress = None) -> StudyResult:
    """Run a study and (unless ``write=False``) write its report folder.

    Parameters
    ----------
    config : str, os.PathLike, Mapping or None
        A study YAML path, a mapping, or ``None`` for the embedded quick start (DL 2019
        passage, nDCG@10).
    out : str or os.PathLike, optional
        Report folder (default ``reports/<study name>`` under the current folder); an error
        with ``write=False``.
    force : bool, optional
        Replace an existing report folder.
    seed : int, optional
        Overrides the study's seed.
    jobs : int, optional
        Scenarios run in parallel processes; results are identical for any ``jobs`` (each
        scenario has its own random stream, keyed on its settings).
    scheduler : str or distributed.Client, optional
        Run the scenarios on a Dask cluster instead (its scheduler's address, e.g.
        ``tcp://host:8786``, or a client); default: the study file's ``scheduler`` key.
        The same results as a serial run (:mod:`planner.parallel`); needs
        ``pip install 'planner[dask]'``.
    quiet : bool, optional
        No progress bar (the same as ``progress=False``).
    progress : bool, "auto" or None, optional
        The bar of the scenarios (:mod:`planner.progress`), which advances inside each scenario
        when they run in this process; default ``None``: ``"auto"`` (a bar on standard error
        when it is a terminal) unless ``quiet``. The numbers are the same with or without.
    write : bool, optional
        Write the report folder.
    command : str, optional
        The command line, recorded in the provenance.
    max_scenarios : int, optional
        Raise (or lower) the scenario limit (:data:`planner.study.config.MAX_SCENARIOS`).
        The whole study's work is estimated before its first scenario
        (:func:`planner.study.estimate.study_work`, said on standard error when over
        :data:`~planner.study.estimate.LONG_SECONDS` of CPU unless ``quiet``); over
        :data:`planner.simulate.MAX_WORK` it is refused, unless the environment variable
        ``PLANNER_MAX_WORK`` raises that limit.

    Returns
    -------
    StudyResult
        Raises :class:`~planner.errors.ConfigError` (key path) for a bad study or one over the
        work limit,
        :class:`~planner.errors.InputError` for missing files or an existing report folder.

    Examples
    --------
    >>> doc = {"collection": {"dataset": "dl19-passage"}, "method": "analytic", "topics": [10, 50],
    ...        "resamples": 20, "targets": [{"target": "erho2", "value": 0.9}]}
    >>> res = run_study(doc, quiet=True, write=False)
    >>> res.answer["n_topics"]
    12
    >>> res.scenario_results[0].targets[0].interval.how
    <IntervalMethod.ANALYTIC: 'analytic'>
    """
    t0 = time.perf_counter()
    _check_args(jobs, write, out)
    progress = False if quiet else "auto" if progress is None else check_progress(progress)
    cfg = load_config(config, seed=seed, max_scenarios=max_scenarios)
    with held_inputs() as held:         # each input read once (by the estimate) for the whole study
        _say_long(cfg.name, check_study_work(cfg), quiet)
        target = None
        if write:
            target = Path(out) if out is not None else Path("reports") / cfg.name
            check_target(target, force=force, keep=_input_paths(cfg))
        # a stream per scenario keyed on its settings: adding, removing or reordering other
        # scenarios leaves a scenario's numbers unchanged (and any --jobs gives the same)
        tasks = [(dict(sc), keyed_stream(cfg.seed, scenario_key(sc)), cfg.resamples, cfg.seed)
                 for sc in cfg.scenarios]
        scheduler = check_scheduler(scheduler if scheduler is not None else cfg.scheduler)
        # the bar: one unit a scenario, and one the report (its figures take a while)
        with bar(progress, len(tasks) + write, f"study {cfg.name}" + (" (then its report)" if write else ""),
                 unit="scenario", fractions=True) as tick:
            scens = _run_all(tasks, jobs, tick, scheduler)
            result, prov = _results(cfg, scens, held.notes, jobs, command, scheduler, t0)
            if target is not None:
                prov["elapsed_seconds"] = round(time.perf_counter() - t0, 2)
                prov["_t0"] = t0          # write_report times the study up to its finished figures
                path = write_report(result, target, force=force)
                prov.pop("_t0", None)
                object.__setattr__(result, "out", str(path))
                object.__setattr__(result, "elapsed", time.perf_counter() - t0)
                tick()
    return result


def _results(cfg: StudyConfig, scens: list[ScenarioResult], notes: list[str], jobs: int, command: str | None,
             scheduler, t0: float) -> tuple[StudyResult, dict]:
    """The study's results from its scenarios' (the answer, the paired comparisons, the tables),
    and its provenance; ``notes``: what reading its inputs skipped or changed, said first."""
    all_warn = _unique([*notes, *(w for s in scens for w in s.warnings)])
    for w in all_warn:
        warnings.warn(w, DegenerateDataWarning, stacklevel=3)   # the caller of run_study
    vers = versions()
    inputs = _unique(i for s in scens for i in s.inputs)
    paired = paired_measures(scens)
    ans = answer(scens, paired)
    sels = run_selection(cfg.selection, scens, cfg.seed)
    reuse = pool_reuse(scens, cfg.selection)
    honest = honest_paragraphs(scens, reuse_paragraph(reuse, ans.n_topics) if reuse is not None else None)
    results = jsonable({
        "study": cfg.name, "description": cfg.description, "seed": cfg.seed, "resamples": cfg.resamples,
        "planner_version": vers["planner"], "versions": vers, "inputs": inputs, "config": cfg.raw,
        "answer": ans.to_dict(), "scenarios": [s.to_dict() for s in scens],
        "paired": [p.to_dict() for p in paired], "honest": {"paragraphs": honest},
        "warnings": all_warn, **({"selection": [s.to_dict() for s in sels]} if sels else {}),
        **({"reuse": reuse.to_dict()} if reuse is not None else {})})
    prov = _provenance(cfg, vers, inputs, jobs, command, scheduler)
    result = StudyResult(name=cfg.name, config=cfg.raw, results=results,
                         tables={**tables(scens, results["paired"]), **selection_tables(sels),
                                 **({"reuse": reuse.to_frame()} if reuse is not None else {})},
                         provenance=prov, out=None,
                         elapsed=time.perf_counter() - t0, scenario_results=tuple(scens), answer_result=ans)
    return result, prov

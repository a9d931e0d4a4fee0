"""A scenario's inputs: its scores (with their hashes for provenance), the informative-topic
filter, the judged share of the runs, and the random streams keyed on the data.

A study reads each input once (:func:`held_inputs`): the whole-study estimate reads it to learn
its shape, and the scenarios, the pool reuse and the selection find it read (in this process and
in the worker processes it forks; elsewhere, a Dask worker, it is read there again). What reading
skipped or changed (the reading notes) is gathered for the study to say once."""

from __future__ import annotations

import hashlib
import json
import os
import re
import warnings
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import datasets
from ..collection import attach_strata, read_qrels, read_runs, stack_with_strata
from ..collection import load_scores as _read_score_file
from ..errors import ConfigError, InputError, ParameterError, PlannerError, ReadNoteWarning
from ..measures import pool_stats, score_runs
from ..simulate import filter_informative
from .results import JudgedShare

__all__ = ["HeldInputs", "apply_filter", "data_stream", "held_inputs", "judged_share", "load_runs_qrels",
           "load_scores", "sha256_file", "systems_key", "topics_key", "topics_stream"]

_RUNS_CACHE: dict = {}

#: said when a study's input is missing: the path in the message is already resolved
_NOT_FOUND_HINT = (" (a study's relative paths start at its file's folder; the example studies in "
                   "configs/ say in their header where to get their data)")


def sha256_file(path: Path) -> str:
    """The SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _sha256_path(path: str) -> str:
    p = Path(path)
    if p.is_dir():
        h = hashlib.sha256()
        for f in sorted(q for q in p.rglob("*") if q.is_file()):
            h.update(str(f.relative_to(p)).encode() + b"\0" + sha256_file(f).encode() + b"\n")
        return h.hexdigest()
    return sha256_file(p)


def _sha256_matrix(m) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(m.values).tobytes())
    h.update("\0".join(m.systems).encode() + b"\1" + "\0".join(m.topics).encode())
    return h.hexdigest()


@dataclass(eq=False)
class HeldInputs:
    """What a study has read (:func:`held_inputs`): each collection once, kept for every later load.

    Attributes
    ----------
    notes : list of str
        The reading notes (:class:`~planner.errors.ReadNoteWarning` messages: skipped files,
        dropped lines) of every read, in order, each once: the study says them, a load that finds
        its input here says nothing.
    reads : int
        How many inputs were read: the runs and qrels of a collection once, a score file or a
        data set once at each measure (the runs are scored at each measure from the one read).
    """

    notes: list[str] = field(default_factory=list)
    reads: int = 0
    runs: dict = field(default_factory=dict, repr=False)
    scores: dict = field(default_factory=dict, repr=False)


#: the study's inputs while :func:`held_inputs` is open (inherited by the worker processes it forks)
_HELD: list[HeldInputs] = []


@contextmanager
def held_inputs() -> Iterator[HeldInputs]:
    """Within it, :func:`load_runs_qrels` and :func:`load_scores` read each input once and keep it
    (in this process and the ``--jobs`` workers it forks): the whole-study estimate, the scenarios,
    the pool reuse and the selection share one read. Nested, it yields the outer one; closed, its
    inputs are dropped (a study holds every collection it reads until it ends)."""
    if _HELD:
        yield _HELD[-1]
        return
    _HELD.append(HeldInputs())
    try:
        yield _HELD[-1]
    finally:
        _HELD.clear()


#: a warning as recorded, to be said again: (message, category, filename, lineno)
_Said = tuple[Any, type[Warning], str, int]


def _read_noted(read: Callable[[], Any], held: HeldInputs, *, counted: bool = True) -> tuple[Any, tuple[_Said, ...]]:
    """``read()``, and the warnings it gave other than reading notes: a load that finds the value
    held says them again (what the data are, e.g. identical systems, belongs to every scenario that
    uses them). Its reading notes go to ``held.notes`` (said once, by the study); ``counted``: the
    read counts in ``held.reads`` (scoring runs already read does not)."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        value = read()
    held.reads += counted
    other = []
    for w in said:
        if issubclass(w.category, ReadNoteWarning):
            if str(w.message) not in held.notes:
                held.notes.append(str(w.message))
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        else:
            other.append((w.message, w.category, w.filename, w.lineno))
    return value, tuple(other)


def _say(said: tuple[_Said, ...]) -> None:
    for message, category, filename, lineno in said:
        warnings.warn_explicit(message, category, filename, lineno)


def load_runs_qrels(coll: Mapping, key: str = "collection"):
    """(runs, qrels) of a collection: read once per study (:func:`held_inputs`), else cached per
    process (a grid reads the same runs for every measure); the cache key holds the modification
    times so that edited files are read again.

    The runs are read as ``duplicates`` and ``select_runs`` say (:func:`planner.read_runs`), and
    what reading skipped or changed is warned once, when they are read; a pattern of
    ``select_runs`` that matches no run is a ConfigError naming ``key.select_runs``."""
    for p, what in ((coll["runs"], "runs"), (coll["qrels"], "qrels")):
        if not Path(p).exists():
            raise InputError(f"{what} not found{_NOT_FOUND_HINT}", file=p)
    select = coll.get("select_runs")
    opts = {"duplicates": coll.get("duplicates", "error"), "select_runs": select}
    ckey = (coll["runs"], coll["qrels"], os.stat(coll["runs"]).st_mtime_ns, os.stat(coll["qrels"]).st_mtime_ns,
            opts["duplicates"], tuple([select] if isinstance(select, str) else select or ()))
    cache = _HELD[-1].runs if _HELD else _RUNS_CACHE
    if ckey in cache:
        return cache[ckey]

    def read():
        try:
            runs = read_runs(coll["runs"], **opts)
        except ParameterError as e:
            raise ConfigError(e.message, key=f"{key}.{e.parameter}") from None
        return runs, read_qrels(coll["qrels"])

    if not _HELD:
        _RUNS_CACHE.clear()
    if not _HELD:
        cache[ckey] = read()
        return cache[ckey]
    cache[ckey], said = _read_noted(read, _HELD[-1])
    _say(said)
    return cache[ckey]


def _from_dataset(coll: Mapping, measure: str, key: str, strata):
    names = list(datasets.available())
    if coll["dataset"] not in names:
        raise ConfigError(f"unknown data set {coll['dataset']!r}; available: {', '.join(names)}",
                          key=f"{key}.dataset")
    m = datasets.load(coll["dataset"], measure=measure)
    if strata is not None:
        m = attach_strata(m, strata)
    return m, [{"path": f"planner.datasets:{coll['dataset']}:{measure}", "sha256": _sha256_matrix(m)}]


def _from_score_file(coll: Mapping, measure: str, strata):
    if not Path(coll["scores"]).exists():
        raise InputError(f"score file not found{_NOT_FOUND_HINT}", file=coll["scores"])
    m = _read_score_file(coll["scores"], measure=measure, missing=coll.get("missing", "error"), strata=strata)
    return m, [{"path": coll["scores"], "sha256": _sha256_path(coll["scores"])}]


def _from_runs(coll: Mapping, measure: str, key: str, strata):
    runs, qrels = load_runs_qrels(coll, key)
    m = score_runs(runs, qrels, [measure])[measure]
    if strata is not None:
        m = attach_strata(m, strata)
    return m, [{"path": coll["runs"], "sha256": _sha256_path(coll["runs"])},
               {"path": coll["qrels"], "sha256": _sha256_path(coll["qrels"])}]


def _split_variants(m, coll: Mapping, key: str, given):
    """Query ids ``topic * d + variant`` split into topics with variants (``variant_divisor``)."""
    if m.has_variants:
        raise ConfigError("the scores already have query variants (a 'variant' column): nothing to split",
                          key=f"{key}.variant_divisor")
    try:
        return stack_with_strata(m, int(coll["variant_divisor"]), given)
    except ParameterError as e:         # a strata mapping in the config, or the divisor
        raise ConfigError(e.message, key=f"{key}.{e.parameter or 'variant_divisor'}") from None
    except InputError as e:
        if e.file is None or e.file != m.source:
            raise
        # the scores' ids do not split by this divisor: name the key as well as the data
        raise ConfigError(str(e), key=f"{key}.variant_divisor") from None


def load_scores(coll: Mapping, measure: str, key: str):
    """(ScoreMatrix, inputs list for provenance) of a resolved collection; ``key`` names it in errors.
    Read once per study at each measure (:func:`held_inputs`)."""
    if not _HELD:
        return _load_scores(coll, measure, key)
    held = _HELD[-1]
    skey = (json.dumps(coll, sort_keys=True, default=str), measure)
    if skey not in held.scores:
        held.scores[skey] = _read_noted(lambda: _load_scores(coll, measure, key), held, counted="runs" not in coll)
    (m, inputs), said = held.scores[skey]
    _say(said)
    return m, [dict(i) for i in inputs]


def _load_scores(coll: Mapping, measure: str, key: str):
    strata = given = coll.get("strata")
    if isinstance(strata, str) and strata != "dataset" and not Path(strata).exists():
        raise InputError("strata file not found", file=strata)
    if coll.get("variant_divisor"):
        strata = None      # attached after stacking the variants (they may name topics)
    if "dataset" in coll:
        m, inputs = _from_dataset(coll, measure, key, strata)
    elif "scores" in coll:
        m, inputs = _from_score_file(coll, measure, strata)
    else:
        m, inputs = _from_runs(coll, measure, key, strata)
    if given is not None and isinstance(given, str):
        inputs.append({"path": given, "sha256": _sha256_path(given)})
    if coll.get("variant_divisor"):
        m = _split_variants(m, coll, key, given)
    return m, inputs


def apply_filter(m, flt: Mapping | None):
    """Informative-topic filter (:func:`planner.simulate.filter_informative`): drop topics
    where every system scores <= lo, or every system >= hi, or the across-system range is
    below min_spread. Returns the filtered matrix and one row per dropped topic."""
    if not flt:
        return m, []
    x = m.topic_scores()
    f, removed = filter_informative(m, lo=flt["lo"], hi=flt["hi"], min_spread=flt["min_spread"])
    pos = {t: i for i, t in enumerate(m.topics)}
    rows = []
    for t in removed:
        col = x[:, pos[t]]
        why = ("all <= lo" if np.all(col <= flt["lo"]) else
               "all >= hi" if np.all(col >= flt["hi"]) else "spread < min_spread")
        rows.append({"topic": t, "reason": why, "spread": float(np.nanmax(col) - np.nanmin(col)),
                     "mean": float(np.nanmean(col))})
    return f, rows


def data_stream(seed: int | None, m, fallback):
    """The honest statement's random stream: keyed on the study seed and the scores, so
    scenarios with the same data (differing in method, say) show the same figures; without a
    seed, ``fallback`` (the scenario's own stream)."""
    if seed is None:
        return fallback
    return np.random.default_rng([int(seed), int(_sha256_matrix(m)[:15], 16)])


def topics_key(m) -> str:
    """A key of the topic list alone: scenarios whose scores cover the same topics (in the same
    order) share it, whatever their measure."""
    return hashlib.sha256("\0".join(m.topics).encode()).hexdigest()


def systems_key(m) -> str:
    """A key of the system list alone (the runs a matrix scores, whatever its measure or file)."""
    return hashlib.sha256("\0".join(m.systems).encode()).hexdigest()


def topics_stream(seed: int | None, m, fallback):
    """The stream of the topic resamples behind the intervals on n: keyed on the study seed and
    the topic list, so scenarios on the same topics (two measures of the same runs, say) draw
    the same resamples and their counts can be compared resample by resample; without a seed,
    ``fallback``."""
    if seed is None:
        return fallback
    return np.random.default_rng([int(seed), int(topics_key(m)[:15], 16), 1])


def matrix_key(m) -> str:
    """A key of a score matrix's values, systems and topics."""
    return _sha256_matrix(m)


def _pool_of(coll: Mapping, k: int):
    if "runs" in coll:
        runs, qrels = load_runs_qrels(coll)
        return pool_stats(runs, qrels, depths=[k], pool_runs=coll.get("pool_runs"))
    if "dataset" in coll and hasattr(datasets, "load_pool"):
        return datasets.load_pool(coll["dataset"])
    return None


def judged_share(coll: Mapping, measure: str | None) -> JudgedShare | None:
    """Judged share of the evaluated runs' top k (k from the measure cutoff, default 10)."""
    mk = re.search(r"@(\d+)", measure or "")
    k = int(mk.group(1)) if mk else 10
    try:
        ps = _pool_of(coll, k)
    except (ImportError, AttributeError, KeyError, PlannerError):
        ps = None
    return None if ps is None else _share_from_pool(ps, k)


def _share_from_pool(ps, k: int) -> JudgedShare | None:
    """Judged share of each run's top k from :class:`planner.measures.PoolStats` (``runs``
    frame: depth, run, in_pool, judged_share); the depth nearest k is used."""
    df = getattr(ps, "runs", None)
    if df is None or "judged_share" not in getattr(df, "columns", ()):
        return None
    depths = sorted(int(d) for d in df["depth"].unique())
    kk = k if k in depths else min(depths, key=lambda d: abs(d - k))
    df = df[df["depth"] == kk]
    per_run = df.groupby("run")["judged_share"].mean()
    in_pool = None
    if "in_pool" in df.columns:
        in_pool = int(df.drop_duplicates("run")["in_pool"].astype(bool).sum())
    return JudgedShare(depth=int(kk), mean=float(per_run.mean()), min=float(per_run.min()),
                       runs=int(len(per_run)), lowest_run=str(per_run.idxmin()), runs_in_pool=in_pool)

"""``trec_eval -q`` output: ``measure TAB topic TAB value`` lines, one file a run."""

from __future__ import annotations

import math
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from .._checks import check_choice
from ..errors import InputError, ParameterError
from ..methods import suggest
from ..scores import ScoreMatrix
from .folders import files_in, run_name
from .notes import plural, warn_collapsed
from .text import MISSING_HINT, decode, is_text, parse_float, read_bytes


def _parse_trec_eval(text: str, source: str | None
                     ) -> tuple[str | None, dict[str, dict[str, float]], dict[tuple[str, str], int]]:
    """(runid, ``{measure: {topic: value}}``, ``{(measure, topic): line}`` of NaN values)."""
    runid = None
    res: dict[str, dict[str, float]] = {}
    nan_lines: dict[tuple[str, str], int] = {}
    n = n_all = 0
    for i, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 3:
            raise InputError(f"expected 3 fields (measure, topic, value), found {len(parts)}",
                             file=source, line=i)
        m, t, v = parts
        if m == "runid":
            runid = v
            continue
        if t == "all":
            n_all += 1
            continue
        try:
            val = parse_float(v)
        except ValueError:
            raise InputError(f"non-numeric value {v!r} for measure {m!r}", file=source, line=i) from None
        if math.isinf(val):
            raise InputError(f"infinite value {v!r} for measure {m!r}, topic {t!r}", file=source, line=i)
        res.setdefault(m, {})
        if t in res[m]:
            raise InputError(f"measure {m!r} repeated for topic {t!r}", file=source, line=i)
        res[m][t] = val
        if math.isnan(val):
            nan_lines[(m, t)] = i
        n += 1
    if n == 0 and runid is None and n_all == 0:
        raise InputError("empty trec_eval file", file=source)
    if n == 0:
        raise InputError("no per-topic rows, only summaries (was trec_eval run with -q?)", file=source)
    return runid, res, nan_lines


_PerRun = dict[str, dict[str, dict[str, float]]]


def _trec_eval_missing(m: str, topics: list[str], per_run: _PerRun, sources: dict[str, str | None],
                       nan_lines: dict[str, dict[tuple[str, str], int]]) -> None:
    """Raise the missing-cell error of measure ``m``, naming the run's file (and the
    line of a ``nan`` value), when a run lacks a topic or has ``nan`` for it."""
    n_miss = 0
    first: tuple[str, str, int | None] | None = None
    for s, res in per_run.items():
        got = res.get(m, {})
        for t in topics:
            v = got.get(t)
            if v is None or math.isnan(v):
                n_miss += 1
                if first is None or (first[2] is None and v is not None):
                    first = (s, t, None if v is None else nan_lines[s][(m, t)])
    if first is None:
        return
    s, t, line = first
    where = f"{n_miss} missing cell(s) in all; {MISSING_HINT}"
    if line is not None:
        raise InputError(f"missing value for measure {m!r}, topic {t!r} ({where})",
                         file=sources[s], line=line)
    if m not in per_run[s]:
        alike = [k for k in per_run[s] if k.lower() == m.lower()]
        spelt = f"; it writes {alike[0]!r}: the measure names differ in case" if alike else ""
        raise InputError(f"no {m!r} rows, other runs have them{spelt} ({where})", file=sources[s])
    raise InputError(f"no {m!r} row for topic {t!r}, other runs have one ({where})", file=sources[s])


def read_trec_eval(path_or_folder, *, missing: str = "error", names: str = "file",
                   measures: str | Iterable[str] | None = None) -> dict[str, ScoreMatrix]:
    """Read ``trec_eval -q`` output: a folder of files (one a run) or one file.

    Parameters
    ----------
    path_or_folder : str or os.PathLike
        A folder of ``trec_eval -q`` files, one a run (a single file holds one system,
        and a score matrix needs 2: that is an InputError).
    missing : str
        The missing-cell policy of :meth:`ScoreMatrix.build` (a topic a run lacks).
    names : {"file", "runid"}
        Name systems by file name without extensions (default) or by their ``runid`` row.
    measures : str or iterable of str, optional
        One trec_eval measure name or a list of them (default: all).

    Returns
    -------
    dict of str to ScoreMatrix
        ``{trec_eval measure name: ScoreMatrix}``, systems in file-name order, topics in
        order of first appearance. Without ``measures``, a measure that cannot be read
        is skipped with a warning.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> for run, ap in (("a", (0.5, 0.25)), ("b", (0.75, 0.5))):
    ...     _ = (folder / f"{run}.eval").write_text(
    ...         f"map\\t101\\t{ap[0]}\\nmap\\t102\\t{ap[1]}\\nmap\\tall\\t0.4\\n")
    >>> read_trec_eval(folder)["map"]
    ScoreMatrix(map: 2 systems x 2 topics)
    """
    check_choice(names, ("file", "runid"), "names", quote=True)
    p = Path(path_or_folder) if not is_text(path_or_folder) else None
    files = files_in(p) if p is not None and p.is_dir() else [path_or_folder]
    if not files:
        raise InputError("no trec_eval files in folder", file=str(p))
    per_run, nans, sources = _read_files(files, names)
    all_measures = list(dict.fromkeys(m for res in per_run.values() for m in res))
    if measures is not None:
        want = [measures] if isinstance(measures, str) else list(measures)   # one name, as in score_runs
        unknown = [m for m in want if m not in all_measures]
        if unknown:
            raise ParameterError(f"measure {unknown[0]!r} not in the trec_eval output"
                                 f"{suggest(unknown[0], all_measures)}; found: "
                                 + ", ".join(all_measures[:30]), parameter="measure")
        all_measures = want
    src = str(path_or_folder) if p is not None else None
    out = {}
    skipped: list[tuple[str, InputError]] = []
    for m in all_measures:
        try:
            out[m] = _matrix(m, per_run, nans, sources, missing=missing, source=src)
        except InputError as exc:
            if measures is not None:
                raise
            skipped.append((m, exc))
    if not out:
        _none_read(skipped, src)
    # one line for all the measures skipped (a trec_eval -q file holds dozens)
    warn_collapsed(src or "trec_eval", f"skipped {plural(len(skipped), 'measure')}",
                   [f"{m!r} ({exc.message if exc.file in (None, src) else exc})" for m, exc in skipped],
                   stacklevel=2)
    return out


def _read_files(files: list, names: str
                ) -> tuple[_PerRun, dict[str, dict[tuple[str, str], int]], dict[str, str | None]]:
    """``(per_run, nan_lines, sources)``, each keyed by system name, of the files' results."""
    per_run: _PerRun = {}
    nans: dict[str, dict[tuple[str, str], int]] = {}
    sources: dict[str, str | None] = {}
    for f in files:
        data, source = read_bytes(f, what="trec_eval")
        if not data.strip():
            raise InputError("empty trec_eval file", file=source)
        runid, res, nan_lines = _parse_trec_eval(decode(data, source), source)
        name = runid if (names == "runid" and runid) else (run_name(f) if source else (runid or "run"))
        if name in per_run:
            raise InputError(f"two files give system name {name!r} ({sources[name]})", file=source)
        per_run[name] = res
        nans[name] = nan_lines
        sources[name] = source
    if len(per_run) < 2:
        raise InputError("one trec_eval file holds one system and a score matrix needs at least 2: "
                         "give the folder of all runs' trec_eval -q files", file=next(iter(sources.values())))
    return per_run, nans, sources


def _matrix(m: str, per_run: _PerRun, nans: dict[str, dict[tuple[str, str], int]],
            sources: dict[str, str | None], *, missing: str, source: str | None) -> ScoreMatrix:
    """The ScoreMatrix of measure ``m`` (systems in ``per_run`` order)."""
    systems = list(per_run)
    topics = list(dict.fromkeys(t for res in per_run.values() for t in res.get(m, {})))
    vals = np.full((len(systems), len(topics)), np.nan)
    tpos = {t: j for j, t in enumerate(topics)}
    for i, s in enumerate(systems):
        for t, v in per_run[s].get(m, {}).items():
            vals[i, tpos[t]] = v
    if missing == "error":
        _trec_eval_missing(m, topics, per_run, sources, nans)
    return ScoreMatrix.build(vals, systems, topics, measure=m, missing=missing, source=source, warn=False)


def _none_read(skipped: list[tuple[str, InputError]], src: str | None) -> None:
    """Raise the error for a folder none of whose measures could be read, saying why."""
    if skipped:       # say why the measures were skipped, not only that none is left
        m, exc = skipped[0]
        raise InputError(f"no measure could be read: all {len(skipped)} were skipped (first, {m!r}: "
                         f"{exc if exc.file not in (None, src) else exc.message})", file=src)
    raise InputError("no measure with at least 2 systems and 2 topics", file=src)

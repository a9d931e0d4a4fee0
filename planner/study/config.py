"""A study's configuration: load, validate strictly, resolve every default, expand the grid."""

from __future__ import annotations

import copy
import itertools
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, InputError, ParameterError
from ..measures import parse_measures
from .schema import DEFAULTS, EXPECTED, GRID_KEYS, SCENARIO_KEYS, STACK_TARGETS, quickstart_path
from .selection import resolve_selection
from .validate import check_doc, check_name, validate
from .yamlfile import read_yaml

__all__ = ["StudyConfig", "expand_scenarios", "load_config"]

#: the scenario keys every resolved scenario holds, in the order of the resolved config
_RESOLVED_KEYS = ("collection", "measure", "method", "variance", "min_diff", "strata", "filter",
                  "topics", "alpha", "targets", "pool", "costs", "variants")
#: why a stacked collection cannot take a key, for the keys that are then set
_NOT_FOR_STACKS = {
    "strata": "a stacked collection is already stratified by its sources (each one is a "
              "stratum, curves are per stratum), so this key has nothing to choose; remove it",
    "pool": "a pool study needs one collection of runs + qrels, not a stack",
    "variants": "query variants need one collection with variants, not a stack",
    "filter": "informative-topic filters are not available for a stack"}
#: the collection keys that say how runs are read: a collection without runs takes none of them
RUN_KEYS = ("pool_runs", "select_runs", "duplicates")


@dataclass(frozen=True)
class StudyConfig:
    """A validated study with every default resolved.

    Attributes
    ----------
    name : str
        Study name (report title, default folder name).
    description : str
        Free text from the file.
    seed : int
        The study seed.
    resamples : int
        Bootstrap / subsample repetitions.
    base : str
        The folder relative paths are resolved against.
    source : str or None
        The study file path (``None`` for a mapping).
    scenarios : tuple of dict
        The expanded grid, one plain dict per scenario (every key resolved).
    raw : dict
        The resolved config (top level plus scenarios), as written to the report.
    scheduler : str or None
        The file's Dask scheduler address (``scheduler:``), where the scenarios run; not in
        ``raw``, since the numbers do not depend on it (:mod:`planner.parallel`).
    selection : dict or None
        The ``selection:`` section with its defaults (:mod:`planner.study.selection`).
    """

    name: str
    description: str
    seed: int
    resamples: int
    base: str
    source: str | None
    scenarios: tuple
    raw: dict
    scheduler: str | None = None
    selection: dict | None = None

    def to_dict(self) -> dict:
        """A JSON-ready dict of the config."""
        return {"name": self.name, "description": self.description, "seed": self.seed,
                "resamples": self.resamples, "source": self.source,
                "scenarios": [dict(s) for s in self.scenarios], "resolved": self.raw}


def _read(config) -> tuple[Any, str | None, Path, str]:
    """(document, source file or None, base folder, default name) of a path or mapping."""
    if isinstance(config, Mapping):
        return copy.deepcopy(dict(config)), None, Path.cwd(), "study"
    if not isinstance(config, (str, os.PathLike)):
        raise ParameterError(f"expected a study file path, a mapping or None, got "
                             f"{type(config).__name__}", parameter="config")
    path = Path(config)
    if not path.exists():
        raise InputError("study file not found", file=path)
    return read_yaml(path), str(path), path.resolve().parent, path.stem


def _check_seed(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError(f"expected an integer >= 0, got {seed!r}", parameter="seed")
    return int(seed)


#: most scenarios a study may expand to unless raised (``--max-scenarios N``, ``max_scenarios=``
#: of :func:`planner.run_study`, or ``max_scenarios: N`` in the study): every scenario costs a
#: curve over its topic counts x resamples (1,000 scenarios on a 6 x 10 matrix took 82 s and
#: wrote a 16 MB report); the grid is counted before it is expanded
MAX_SCENARIOS = 200


def grid_size(top: Mapping, scenario_docs: Sequence[Mapping]) -> int:
    """The number of scenarios :func:`expand_scenarios` makes, counted without making them."""
    total = 0
    for sdoc in scenario_docs:
        merged = {**top, **sdoc}
        n = 1
        for k in GRID_KEYS:
            v = merged.get(k)
            n *= len(v) if isinstance(v, list) and k != "topics" else 1
        total += n
    return total


def _check_grid(doc: Mapping, top: Mapping, max_scenarios: int | None, source: str | None) -> None:
    """Refuse, before anything is expanded, a grid over the scenario limit, with its estimate."""
    limit = max_scenarios if max_scenarios is not None else doc.get("max_scenarios", MAX_SCENARIOS)
    n = grid_size(top, doc.get("scenarios") or [{}])
    if n <= limit:
        return
    topics = len(top.get("topics") or DEFAULTS["topics"])
    draws = n * topics * int(doc.get("resamples", DEFAULTS["resamples"]))
    raise ConfigError(f"the study expands to {n:,} scenarios ({draws:,} topic-count x resample draws); "
                      f"the limit is {limit:,} scenarios (MAX_SCENARIOS {MAX_SCENARIOS}): raise it with "
                      "--max-scenarios N, or max_scenarios: N in the study", key="scenarios", file=source)


def load_config(config: str | os.PathLike | Mapping | None = None, *, seed: int | None = None,
                max_scenarios: int | None = None) -> StudyConfig:
    """Read, validate and expand a study.

    Parameters
    ----------
    config : str, os.PathLike, Mapping or None
        A study YAML path, a mapping with the same keys, or ``None`` for the embedded quick
        start (:func:`quickstart_path`).
    seed : int, optional
        Overrides the file's seed.
    max_scenarios : int, optional
        Overrides the study's ``max_scenarios`` (default :data:`MAX_SCENARIOS`): a grid of more
        scenarios is a ConfigError giving its size, before it is expanded.

    Returns
    -------
    StudyConfig
        The study with every default resolved and the grid expanded.

    Raises
    ------
    planner.errors.ConfigError
        A schema violation, naming the key path.
    planner.errors.InputError
        An unreadable file or invalid YAML, naming the file and line.

    Examples
    --------
    >>> cfg = load_config({"collection": {"dataset": "dl19-passage"}, "method": ["analytic", "bootstrap"]})
    >>> [s["name"] for s in cfg.scenarios]
    ['analytic', 'bootstrap']
    >>> cfg.scenarios[0]["targets"]
    [{'target': 'swap_rate', 'value': 0.05}, {'target': 'power', 'value': 0.8}]
    >>> load_config({"collection": {"dataset": "dl19-passage"}, "topcs": [10]})
    Traceback (most recent call last):
    ...
    planner.errors.ConfigError: topcs: unknown key 'topcs' (did you mean 'topics'?) ...
    """
    doc, source, base, default_name = _read(quickstart_path() if config is None else config)
    if doc is None:
        raise ConfigError("empty study file", key="(top level)", file=source)
    validate(doc, source)
    check_doc(doc, source, base)
    if "name" in doc:
        check_name(str(doc["name"]), source)
    elif default_name in (".", ".."):        # a file named "..yaml": no folder name in it
        default_name = "study"
    if seed is not None:
        doc["seed"] = _check_seed(seed)
    resolved: dict[str, Any] = {"name": doc.get("name", default_name),
                                "description": doc.get("description", ""),
                                "seed": int(doc.get("seed", DEFAULTS["seed"])),
                                "resamples": int(doc.get("resamples", DEFAULTS["resamples"]))}
    top = {k: doc[k] for k in SCENARIO_KEYS if k in doc and k != "name"}
    _check_grid(doc, top, max_scenarios, source)
    scenarios = expand_scenarios(top, doc.get("scenarios") or [{}], base=base, source=source)
    resolved["defaults"] = _resolve_defaults(top)
    colls = top.get("collection")
    colls = colls if isinstance(colls, list) else [colls] if colls is not None else []
    if "measure" not in top and colls and all(isinstance(c, Mapping) and _only_score_files(c) for c in colls):
        resolved["defaults"]["measure"] = None      # score files keep their own measure
    resolved["scenarios"] = [dict(s) for s in scenarios]
    selection = resolve_selection(doc.get("selection"), base=base, resamples=resolved["resamples"], source=source,
                                  scenarios=scenarios)
    if selection is not None:
        resolved["selection"] = selection
    return StudyConfig(name=str(resolved["name"]), description=str(resolved["description"]),
                       seed=resolved["seed"], resamples=resolved["resamples"], base=str(base),
                       source=source, scenarios=tuple(scenarios), raw=resolved,
                       scheduler=str(doc["scheduler"]).strip() if "scheduler" in doc else None,
                       selection=selection)


def _resolve_defaults(d: Mapping) -> dict:
    out = {}
    for k in _RESOLVED_KEYS:
        if k in d:
            out[k] = copy.deepcopy(d[k])
        elif k in DEFAULTS:
            out[k] = copy.deepcopy(DEFAULTS[k])
    costs = dict(DEFAULTS["costs"])
    costs.update(out.get("costs") or {})
    out["costs"] = costs
    return out


def _resolve_filter(f):
    if f in (None, "none"):
        return None
    return {"lo": float(f.get("lo", 0.0)), "hi": float(f.get("hi", 1.0)),
            "min_spread": float(f.get("min_spread", 0.0))}


def _resolve_path(value: str, base: Path) -> str:
    p = Path(os.path.expanduser(str(value)))
    return os.path.normpath(str(p if p.is_absolute() else (base / p)))


def _default_label(c: Mapping) -> str:
    if "dataset" in c:
        return c["dataset"]
    if "scores" in c:
        return Path(c["scores"]).name
    # a runs folder is usually just "runs": name it with its parent (trec-dl2019-passage/runs)
    r = Path(c["runs"])
    return f"{r.parent.name}/{r.name}" if r.parent.name else r.name


def _resolve_collection(c: Mapping, base: Path) -> dict:
    if "stack" in c:
        parts = [_resolve_collection(x, base) for x in c["stack"]]
        return {"stack": parts, "label": c.get("label") or " + ".join(p["label"] for p in parts)}
    out = dict(c.items())
    out.setdefault("missing", "error")
    for k in ("scores", "runs", "qrels"):
        if k in out:
            out[k] = _resolve_path(out[k], base)
    if isinstance(out.get("strata"), str):
        out["strata"] = _resolve_path(out["strata"], base)
    if "label" not in out:
        out["label"] = _default_label(out)
    return out


def _only_score_files(c: Mapping) -> bool:
    """Whether every source of a resolved collection is a score file (``scores``)."""
    parts = c.get("stack", [c])
    return all("scores" in p for p in parts)


def _grid_label(value) -> str:
    if isinstance(value, dict):
        if "label" in value:
            return str(value["label"])
        return ",".join(f"{k}={v}" for k, v in value.items())
    if value is None:
        return "none"
    return str(value)


def _check_measure(measure: str, key: str, source: str | None) -> None:
    """A measure that runs are scored with must parse (ir_measures) with a cut-off >= 1."""
    try:
        parse_measures([measure])
    except ParameterError as exc:
        raise ConfigError(exc.message, key=key, file=source) from None


def _check_stacked(sc: Mapping, sdoc: Mapping, i: int, source) -> None:
    """A stack takes no strata, pool, variants or filter, and needs a target it can answer."""
    bad = [k for k, on in (("strata", sc["strata"] != "uniform"), ("pool", sc["pool"] is not None),
                           ("variants", bool(sc["variants"])), ("filter", bool(sc["filter"]))) if on]
    if bad:
        k = bad[0]
        raise ConfigError(_NOT_FOR_STACKS[k], key=f"scenarios[{i}].{k}" if k in sdoc else k, file=source)
    if not any(tg["target"] in STACK_TARGETS for tg in sc["targets"]):
        raise ConfigError(
            f"a stack answers {', '.join(STACK_TARGETS)} only (pair rates and Kendall tau "
            f"need systems common to all strata), got {sc['targets'][0]['target']}; add one "
            "of them", key=f"scenarios[{i}].targets[0].target" if "targets" in sdoc
            else "targets[0].target", file=source)


def _check_run_keys(coll: Mapping, where: str, source) -> None:
    """The keys of :data:`RUN_KEYS` only in a collection of runs + qrels."""
    for part in coll.get("stack", [coll]):
        extra = [k for k in RUN_KEYS if k in part]
        if extra and "runs" not in part:
            raise ConfigError("only used with runs + qrels (it says how run files are read)",
                              key=f"{where}.{extra[0]}", file=source)


def _check_cell(sc: Mapping, sdoc: Mapping, i: int, n_docs: int, source) -> None:
    _check_run_keys(sc["collection"], f"scenarios[{i}].collection" if "collection" in sdoc else "collection",
                    source)
    if "stack" in sc["collection"]:
        _check_stacked(sc, sdoc, i, source)
    if sc["pool"] is not None and "runs" not in sc["collection"]:
        raise ConfigError("a pool study needs a collection with runs + qrels",
                          key=f"scenarios[{i}].pool" if n_docs > 1 or sdoc else "pool", file=source)
    if sc["variance"].startswith("percentile:"):
        q = float(sc["variance"].split(":", 1)[1])
        if not 0 < q <= 100:
            raise ConfigError(f"expected {EXPECTED['variance']}, got {sc['variance']!r}",
                              key="variance", file=source)


def _cell(merged: Mapping, axes: list, combo: tuple, base: Path) -> tuple[dict, list[str]]:
    """One grid cell: the merged scenario with the axes' values, and the labels of those that vary."""
    sc = copy.deepcopy(dict(merged))
    varying = []
    for (k, _, is_axis), v in zip(axes, combo):
        sc[k] = copy.deepcopy(v)
        if is_axis:
            varying.append(_grid_label(v if k != "collection" else _resolve_collection(v, base)))
    sc["collection"] = _resolve_collection(sc["collection"], base)
    sc["filter"] = _resolve_filter(sc["filter"])
    sc["topics"] = sorted(int(n) for n in sc["topics"])
    return sc, varying


def _cell_name(sc: Mapping, sname: str | None, varying: list[str]) -> str:
    if sname and varying:
        return f"{sname} ({', '.join(varying)})"
    if sname:
        return sname
    if varying:
        return ", ".join(varying)
    return " ".join(str(x) for x in (sc["collection"]["label"], sc["measure"], sc["method"]) if x is not None)


def _expand_one(top: Mapping, sdoc: Mapping, i: int, n_docs: int, base: Path, source) -> list[dict]:
    """The grid cells of scenario entry ``i``."""
    merged = _resolve_defaults({**top, **{k: v for k, v in sdoc.items() if k != "name"}})
    # without a measure key, a score file is read with its own measure (labelled by it,
    # or "score" when it names none), never the default nDCG@10 of the embedded data
    measure_given = "measure" in top or "measure" in sdoc
    if "collection" not in merged:
        raise ConfigError("no collection: give one at the top level or in the scenario",
                          key=f"scenarios[{i}].collection", file=source)
    axes = []
    for k in GRID_KEYS:
        v = merged[k]
        axes.append((k, v if isinstance(v, list) else [v], isinstance(v, list) and len(v) > 1))
    out = []
    for combo in itertools.product(*[vals for _, vals, _ in axes]):
        sc, varying = _cell(merged, axes, combo, base)
        if not measure_given and _only_score_files(sc["collection"]):
            sc["measure"] = None
        if sc["measure"] is not None and "runs" in sc["collection"]:
            _check_measure(sc["measure"], "measure" if "measure" not in sdoc else f"scenarios[{i}].measure",
                           source)
        sc["name"] = _cell_name(sc, sdoc.get("name"), varying)
        sc["index"] = i
        _check_cell(sc, sdoc, i, n_docs, source)
        out.append(sc)
    return out


def expand_scenarios(top: Mapping, scenario_docs: Sequence[Mapping], *, base: Path | str = ".",
                     source: str | None = None) -> list[dict]:
    """Expand defaults + scenario overrides into the grid of fully resolved scenarios.

    Each scenario entry is merged over the top-level keys; every key in
    :data:`GRID_KEYS` holding a list becomes one axis of a Cartesian product
    (in :data:`GRID_KEYS` order).

    Parameters
    ----------
    top : Mapping
        The top level's scenario keys (the defaults of every scenario).
    scenario_docs : sequence of Mapping
        The ``scenarios`` entries (``[{}]`` for none).
    base : str or Path, optional
        The folder relative paths are resolved against.
    source : str, optional
        The study file, for error messages.

    Returns
    -------
    list of dict
        One dict per grid cell with every key resolved, an ``id`` (``s01``, ``s02``, ...) and
        a ``name``.

    Examples
    --------
    >>> cells = expand_scenarios({"collection": {"dataset": "dl19-passage"}, "min_diff": [0.02, 0.05]},
    ...                          [{"method": "analytic"}])
    >>> [(c["id"], c["name"], c["min_diff"]) for c in cells]
    [('s01', '0.02', 0.02), ('s02', '0.05', 0.05)]
    """
    base = Path(base)
    out: list[dict] = []
    for i, sdoc in enumerate(scenario_docs):
        out.extend(_expand_one(top, sdoc, i, len(scenario_docs), base, source))
    names = [s["name"] for s in out]
    for j, s in enumerate(out):
        s["id"] = f"s{j + 1:02d}"
        if names.count(s["name"]) > 1:
            s["name"] = f"{s['name']} [{s['id']}]"
    return [dict(sorted(s.items())) for s in out]

"""Studies: a YAML what-if grid that drives the whole pipeline, and :func:`run_study`.

A study file names a collection, the settings to compare and the targets to meet;
``planner study FILE`` (or :func:`run_study`) loads the scores, fits the variance
components, predicts the curves against topic count, solves for the topics each
target needs and writes a report folder (see :mod:`planner.report`).

Schema (strict; ``planner schema`` prints it as JSON Schema). Top level::

    name: dl19-quickstart          # report title and folder name (default: the file name)
    description: free text
    seed: 20190                    # int >= 0; every random number derives from it
    resamples: 1000                # int >= 10; bootstrap / subsample repetitions
    collection: {...}              # where the scores come from (below)
    <scenario keys>                # defaults for every scenario (below)
    scenarios: [ {...}, ... ]      # optional; each entry overrides the defaults

Scenario keys (a list value of a key marked * expands into a grid; the grid is the
Cartesian product in the order the keys are listed here)::

    name: label                    # default: built from the grid values
    collection*: {...}             # overrides the top-level collection
    measure*: nDCG@10              # measure name (embedded data, trec_eval, runs + qrels)
    method*: analytic              # analytic | bootstrap | subsample | parametric | predictive
    variance*: pair                # pair | pooled | within-system | percentile:Q
    min_diff*: 0.05                # difference that matters (power, detectable differences)
    strata*: uniform               # uniform | stratified (resampling within strata)
    filter*: none                  # none | {lo: 0.0, hi: 1.0, min_spread: 0.0}
    topics: [10, 20, ...]          # topic counts of the curves (integers >= 2)
    alpha: 0.05                    # test level / interval coverage 1 - alpha
    targets: [{target: swap_rate, value: 0.05}, {target: power, value: 0.8}]
    pool: {depths: [10, 20, 50, 100]}               # needs runs + qrels
    costs: {topic: 0.0, judgment: 1.0, budget: null} # cost per topic / per judgment
    variants: [1, 2, 4]           # query variants per topic for the three-facet D-study

Collection (exactly one source)::

    dataset: dl19-passage          # embedded data set (planner.datasets.available())
    scores: path                   # wide / tidy CSV|TSV, trec_eval -q file or folder
    runs: folder + qrels: file     # TREC runs scored with ir_measures
    variant_divisor: 1000          # query id = topic * d + variant (query variations)
    strata: path | {topic: stratum}  # topic metadata (stratum per topic)
    missing: error                 # missing-cell policy (planner.scores)
    label: text                    # name shown in the report

Relative paths in a study file are relative to that file's folder. Every default
is resolved and written back into the report (``config.resolved.yaml`` and
``results.json``), so a report says exactly what ran.

Randomness: the study seed makes one generator; one child stream is spawned per
scenario in grid order (:func:`planner._random.child_streams`), so results do not
depend on ``jobs``. ``results.json`` holds no timestamps: the same seed and inputs
give a byte-identical file.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import os
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from ._random import child_streams
from .errors import ConfigError, InputError, ParameterError, PlannerError

__all__ = ["SCHEMA", "StudyConfig", "StudyResult", "load_config", "expand_scenarios",
           "run_study", "schema", "quickstart_path"]

METHODS = ["analytic", "bootstrap", "subsample", "parametric", "predictive"]
TARGETS = ["swap_rate", "reversal_rate", "kendall_tau", "ci_width", "power", "erho2", "phi"]
GRID_KEYS = ("collection", "measure", "method", "variance", "min_diff", "strata", "filter")
DEFAULT_TOPICS = [10, 20, 30, 40, 50, 75, 100, 150, 200]

# what each key expects, in words: used for error messages ("key: expected ...")
EXPECTED = {
    "name": "a string",
    "description": "a string",
    "seed": "an integer >= 0",
    "resamples": "an integer >= 10",
    "collection": "a collection object (dataset, scores, or runs + qrels) or a list of them",
    "measure": "a measure name or a list of measure names",
    "method": "one of " + ", ".join(METHODS) + " (or a list of them)",
    "variance": "pair, pooled, within-system or percentile:Q with 0 < Q < 100 (or a list of them)",
    "min_diff": "a number > 0 (or a list of them)",
    "strata": "uniform or stratified (or a list of them)",
    "filter": "none or {lo, hi, min_spread} (or a list of them)",
    "topics": "a list of integers >= 2",
    "alpha": "a number with 0 < alpha < 0.5",
    "targets": "a list of {target, value} objects",
    "target": "one of " + ", ".join(TARGETS),
    "value": "a number",
    "pool": "an object {depths: [integers >= 1]}",
    "depths": "a list of integers >= 1",
    "costs": "an object {topic, judgment, budget} of numbers >= 0",
    "topic": "a number >= 0",
    "judgment": "a number >= 0",
    "budget": "a number > 0 or null",
    "variants": "a list of integers >= 1",
    "scenarios": "a list of scenario objects",
    "dataset": "an embedded data set name",
    "scores": "a path to a score table or trec_eval output",
    "runs": "a path to a folder of TREC runs",
    "qrels": "a path to a qrels file",
    "variant_divisor": "an integer >= 2",
    "missing": "one of error, zero, drop-topic, drop-system, keep",
    "label": "a string",
    "lo": "a number",
    "hi": "a number",
    "min_spread": "a number >= 0",
    "pool_runs": "a list of run names",
}


def _one_or_list(item: dict) -> dict:
    return {"oneOf": [item, {"type": "array", "items": item, "minItems": 1}]}


_COLLECTION = {
    "type": "object",
    "additionalProperties": False,
    "description": "Where the scores come from: exactly one of dataset, scores, runs (+ qrels).",
    "properties": {
        "dataset": {"type": "string", "minLength": 1,
                    "description": "embedded data set, e.g. dl19-passage"},
        "scores": {"type": "string", "minLength": 1,
                   "description": "wide/tidy CSV|TSV, trec_eval -q file or folder of them"},
        "runs": {"type": "string", "minLength": 1, "description": "folder of TREC run files"},
        "qrels": {"type": "string", "minLength": 1, "description": "TREC qrels file"},
        "pool_runs": {"type": "array", "items": {"type": "string"},
                      "description": "runs that formed the judgment pool (default: all)"},
        "variant_divisor": {"type": "integer", "minimum": 2,
                            "description": "query id = topic * d + variant"},
        "strata": {"oneOf": [{"type": "string", "minLength": 1},
                             {"type": "object", "additionalProperties": {"type": ["string", "integer"]}}],
                   "description": "topic metadata CSV (topic, stratum) or a mapping topic -> stratum"},
        "missing": {"enum": ["error", "zero", "drop-topic", "drop-system", "keep"], "default": "error"},
        "label": {"type": "string"},
    },
    "oneOf": [{"required": ["dataset"]}, {"required": ["scores"]}, {"required": ["runs", "qrels"]}],
}

_FILTER = {"oneOf": [
    {"enum": ["none", None]},
    {"type": "object", "additionalProperties": False,
     "properties": {"lo": {"type": "number", "default": 0.0},
                    "hi": {"type": "number", "default": 1.0},
                    "min_spread": {"type": "number", "minimum": 0, "default": 0.0}}},
]}

_VARIANCE = {"type": "string", "pattern": r"^(pair|pooled|within-system|percentile:([1-9][0-9]?(\.[0-9]+)?|0\.[0-9]*[1-9][0-9]*))$"}

_SCENARIO_PROPS = {
    "name": {"type": "string", "minLength": 1},
    "collection": _one_or_list(_COLLECTION),
    "measure": _one_or_list({"type": "string", "minLength": 1}),
    "method": _one_or_list({"enum": METHODS}),
    "variance": _one_or_list(_VARIANCE),
    "min_diff": _one_or_list({"type": "number", "exclusiveMinimum": 0}),
    "strata": _one_or_list({"enum": ["uniform", "stratified"]}),
    "filter": {"oneOf": [_FILTER, {"type": "array", "items": _FILTER, "minItems": 1}]},
    "topics": {"type": "array", "items": {"type": "integer", "minimum": 2}, "minItems": 1,
               "uniqueItems": True},
    "alpha": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 0.5},
    "targets": {"type": "array", "items": {
        "type": "object", "additionalProperties": False, "required": ["target", "value"],
        "properties": {"target": {"enum": TARGETS}, "value": {"type": "number"}}}},
    "pool": {"type": "object", "additionalProperties": False, "required": ["depths"],
             "properties": {"depths": {"type": "array", "minItems": 1, "uniqueItems": True,
                                       "items": {"type": "integer", "minimum": 1}}}},
    "costs": {"type": "object", "additionalProperties": False,
              "properties": {"topic": {"type": "number", "minimum": 0},
                             "judgment": {"type": "number", "minimum": 0},
                             "budget": {"type": ["number", "null"], "exclusiveMinimum": 0}}},
    "variants": {"type": "array", "minItems": 1, "uniqueItems": True,
                 "items": {"type": "integer", "minimum": 1}},
}

SCHEMA: dict = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://planner.invalid/study.schema.json",
    "title": "planner study",
    "description": "A what-if study: a collection, settings to compare (lists expand into a grid) "
                   "and targets; run with `planner study FILE`.",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "description": {"type": "string"},
        "seed": {"type": "integer", "minimum": 0},
        "resamples": {"type": "integer", "minimum": 10},
        **_SCENARIO_PROPS,
        "scenarios": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "properties": _SCENARIO_PROPS}},
    },
    "required": ["collection"],
}

DEFAULTS: dict = {
    "seed": 20190,
    "resamples": 1000,
    "measure": "nDCG@10",
    "method": "analytic",
    "variance": "pair",
    "min_diff": 0.05,
    "strata": "uniform",
    "filter": "none",
    "topics": DEFAULT_TOPICS,
    "alpha": 0.05,
    "targets": [{"target": "swap_rate", "value": 0.05}, {"target": "power", "value": 0.8}],
    "pool": None,
    "costs": {"topic": 0.0, "judgment": 1.0, "budget": None},
    "variants": None,
}


def schema() -> dict:
    """The JSON Schema of a study file (a deep copy of :data:`SCHEMA`)."""
    return copy.deepcopy(SCHEMA)


def quickstart_path() -> Path:
    """Path of the embedded quick-start study (``planner/configs/quickstart.yaml``)."""
    return Path(__file__).resolve().parent / "configs" / "quickstart.yaml"


# ---------------------------------------------------------------------- config
@dataclass(frozen=True)
class StudyConfig:
    """A validated study with every default resolved.

    Attributes:
        name: study name (report title, default folder name).
        description: free text from the file.
        seed: the study seed.
        resamples: bootstrap / subsample repetitions.
        base: the folder relative paths are resolved against.
        source: the study file path (``None`` for a dict).
        scenarios: the expanded grid, one plain dict per scenario (every key resolved).
        raw: the resolved config (top level plus scenarios), as written to the report.
    """

    name: str
    description: str
    seed: int
    resamples: int
    base: str
    source: str | None
    scenarios: tuple
    raw: dict

    def to_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "seed": self.seed,
                "resamples": self.resamples, "source": self.source,
                "scenarios": [dict(s) for s in self.scenarios], "resolved": self.raw}


def _key_path(path) -> str:
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out or "(top level)"


def _short(value) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _error_to_config(err, source) -> ConfigError:
    """One jsonschema error -> ConfigError naming the key path in the user's words."""
    path = list(err.absolute_path)
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        allowed = ", ".join(sorted(err.schema.get("properties", {})))
        key = _key_path(path + [extra[0]]) if extra else _key_path(path)
        return ConfigError(f"unknown key {extra[0]!r} (allowed: {allowed})" if extra else err.message,
                           key=key, file=source)
    if err.validator == "required":
        missing = [k for k in err.validator_value if k not in err.instance]
        return ConfigError(f"missing required key {missing[0]!r}" if missing else err.message,
                           key=_key_path(path + missing[:1]), file=source)
    # report at the innermost named key (topics[1] -> topics)
    cut = len(path)
    while cut > 0 and isinstance(path[cut - 1], int):
        cut -= 1
    name = path[cut - 1] if cut else None
    # a collection object that names no source / several sources
    if isinstance(err.instance, dict) and err.validator == "oneOf" and (
            {"dataset", "scores", "runs", "qrels"} & set(err.instance) or name == "collection"):
        srcs = [k for k in ("dataset", "scores", "runs") if k in err.instance]
        if len(srcs) != 1 or ("runs" in err.instance) != ("qrels" in err.instance):
            return ConfigError("expected exactly one source: dataset, scores, or runs + qrels "
                               f"(got {', '.join(sorted(err.instance)) or 'none'})",
                               key=_key_path(path), file=source)
        # the source is fine: look for the first real problem inside
        sub = _first_inner_error(err)
        if sub is not None:
            return _error_to_config(sub, source)
    expected = EXPECTED.get(name) if isinstance(name, str) else None
    key = _key_path(path[:cut]) if cut else _key_path(path)
    value = err.instance if cut == len(path) else _get(err, path, cut)
    if expected:
        return ConfigError(f"expected {expected}, got {_short(value)}", key=key, file=source)
    return ConfigError(err.message, key=key, file=source)


def _get(err, path, cut):
    # best effort: the value at the named key (the error instance is deeper)
    return err.instance


def _first_inner_error(err):
    best = None
    for ctx in err.context or ():
        if ctx.validator in ("oneOf", "required") and not list(ctx.relative_path):
            continue
        if best is None or len(ctx.absolute_path) > len(best.absolute_path):
            best = ctx
    return best


def _validate(doc: Any, source: str | None) -> None:
    import jsonschema

    if not isinstance(doc, dict):
        raise ConfigError(f"expected a mapping of keys at the top level, got {type(doc).__name__}",
                          key="(top level)", file=source)
    validator = jsonschema.Draft202012Validator(SCHEMA)
    errors = list(validator.iter_errors(doc))
    if not errors:
        return
    errors.sort(key=lambda e: (list(map(str, e.absolute_path)), e.validator != "additionalProperties"))
    best = jsonschema.exceptions.best_match(errors)
    # prefer unknown-key errors: they explain the others
    for e in errors:
        if e.validator == "additionalProperties":
            best = e
            break
    raise _error_to_config(best, source)


def _yaml_load(path: Path):
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read study file: {exc.strerror}", file=path) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        line = None
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            line = mark.line + 1
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"invalid YAML: {problem}", file=path, line=line) from None


def load_config(config: str | os.PathLike | Mapping | None = None, *, seed: int | None = None) -> StudyConfig:
    """Read, validate and expand a study (a YAML path, a mapping, or ``None`` for the quick start).

    Raises :class:`ConfigError` naming the key path for a schema violation and
    :class:`InputError` for an unreadable file or invalid YAML. ``seed`` overrides
    the file's seed.
    """
    if config is None:
        config = quickstart_path()
    if isinstance(config, Mapping):
        doc = copy.deepcopy(dict(config))
        source = None
        base = Path.cwd()
        default_name = "study"
    else:
        path = Path(config)
        if not path.is_file():
            raise InputError("study file not found", file=path)
        doc = _yaml_load(path)
        source = str(path)
        base = path.resolve().parent
        default_name = path.stem
    if doc is None:
        raise ConfigError("empty study file", key="(top level)", file=source)
    _validate(doc, source)
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ParameterError(f"expected an integer >= 0, got {seed!r}", parameter="seed")
        doc["seed"] = int(seed)
    resolved = {"name": doc.get("name", default_name),
                "description": doc.get("description", ""),
                "seed": int(doc.get("seed", DEFAULTS["seed"])),
                "resamples": int(doc.get("resamples", DEFAULTS["resamples"]))}
    top = {k: doc[k] for k in _SCENARIO_PROPS if k in doc and k != "name"}
    scenario_docs = doc.get("scenarios") or [{}]
    scenarios = expand_scenarios(top, scenario_docs, base=base, source=source)
    resolved["defaults"] = _resolve_defaults(top)
    resolved["scenarios"] = [dict(s) for s in scenarios]
    return StudyConfig(name=str(resolved["name"]), description=str(resolved["description"]),
                       seed=resolved["seed"], resamples=resolved["resamples"], base=str(base),
                       source=source, scenarios=tuple(scenarios), raw=resolved)


def _resolve_defaults(d: Mapping) -> dict:
    out = {}
    for k in ("collection", "measure", "method", "variance", "min_diff", "strata", "filter",
              "topics", "alpha", "targets", "pool", "costs", "variants"):
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


def _resolve_collection(c: Mapping, base: Path) -> dict:
    out = {k: v for k, v in c.items()}
    out.setdefault("missing", "error")
    for k in ("scores", "runs", "qrels"):
        if k in out:
            p = Path(os.path.expanduser(str(out[k])))
            out[k] = str(p if p.is_absolute() else (base / p))
    if isinstance(out.get("strata"), str):
        p = Path(os.path.expanduser(out["strata"]))
        out["strata"] = str(p if p.is_absolute() else (base / p))
    if "label" not in out:
        if "dataset" in out:
            out["label"] = out["dataset"]
        elif "scores" in out:
            out["label"] = Path(out["scores"]).name
        else:
            out["label"] = Path(out["runs"]).name
    return out


def _grid_label(value) -> str:
    if isinstance(value, dict):
        if "label" in value:
            return str(value["label"])
        return ",".join(f"{k}={v}" for k, v in value.items())
    if value is None:
        return "none"
    return str(value)


def expand_scenarios(top: Mapping, scenario_docs, *, base: Path | str = ".", source: str | None = None) -> list[dict]:
    """Expand defaults + scenario overrides into the grid of fully resolved scenarios.

    Each scenario entry is merged over the top-level keys; every key in
    :data:`GRID_KEYS` holding a list becomes one axis of a Cartesian product
    (in :data:`GRID_KEYS` order). Returns one dict per grid cell with every key
    resolved, an ``id`` (``s01``, ``s02``, ...) and a ``name``.
    """
    base = Path(base)
    out: list[dict] = []
    for i, sdoc in enumerate(scenario_docs):
        merged = _resolve_defaults({**{k: v for k, v in top.items()}, **{k: v for k, v in sdoc.items() if k != "name"}})
        if "collection" not in merged:
            raise ConfigError("no collection: give one at the top level or in the scenario",
                              key=f"scenarios[{i}].collection", file=source)
        axes = []
        for k in GRID_KEYS:
            v = merged[k]
            vals = v if isinstance(v, list) else [v]
            axes.append((k, vals, isinstance(v, list) and len(v) > 1))
        for combo in itertools.product(*[vals for _, vals, _ in axes]):
            sc = copy.deepcopy(merged)
            varying = []
            for (k, _, is_axis), v in zip(axes, combo):
                sc[k] = copy.deepcopy(v)
                if is_axis:
                    varying.append(_grid_label(v if k != "collection" else _resolve_collection(v, base)))
            sc["collection"] = _resolve_collection(sc["collection"], base)
            sc["filter"] = _resolve_filter(sc["filter"])
            sc["topics"] = sorted(int(n) for n in sc["topics"])
            sname = sdoc.get("name")
            if sname and varying:
                sname = f"{sname} ({', '.join(varying)})"
            elif not sname:
                sname = ", ".join(varying) if varying else (
                    f"{sc['collection']['label']} {sc['measure']} {sc['method']}")
            sc["name"] = sname
            sc["index"] = i
            if sc["pool"] is not None and "runs" not in sc["collection"]:
                raise ConfigError("a pool study needs a collection with runs + qrels",
                                  key=f"scenarios[{i}].pool" if len(scenario_docs) > 1 or sdoc else "pool",
                                  file=source)
            if sc["variance"].startswith("percentile:"):
                q = float(sc["variance"].split(":", 1)[1])
                if not 0 < q < 100:
                    raise ConfigError(f"expected {EXPECTED['variance']}, got {sc['variance']!r}",
                                      key="variance", file=source)
            out.append(sc)
    names = [s["name"] for s in out]
    for j, s in enumerate(out):
        s["id"] = f"s{j + 1:02d}"
        if names.count(s["name"]) > 1:
            s["name"] = f"{s['name']} [{s['id']}]"
    return [dict(sorted(s.items())) for s in out]

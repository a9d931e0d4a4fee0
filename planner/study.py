"""Studies: a YAML what-if grid that drives the whole pipeline, and :func:`run_study`.

A study file names a collection, the settings to compare and the targets to meet;
``planner study FILE`` (or :func:`run_study`) loads the scores, fits the variance
components, predicts the curves against topic count, solves for the topics each
target needs and writes a report folder (see :mod:`planner.report`).

Schema (strict; ``planner schema`` prints it as JSON Schema). Top level::

    name: dl19-quickstart          # report title and folder name (default: the file name);
                                   # a plain folder name: no / or \\, not . or ..
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
    measure*: nDCG@10              # measure name (embedded data, trec_eval, runs + qrels);
                                   # default nDCG@10, for score files the file's own measure
    method*: analytic              # analytic | bootstrap | subsample | parametric | predictive
                                   # or a variant named as in `planner validate`
                                   # (predictive-shrunk, predictive-integrated, ...)
    variance*: pair                # pair | pooled | within-system | percentile:Q
    min_diff*: 0.05                # difference that matters (power, detectable differences)
    strata*: uniform               # uniform | stratified (resampling within strata)
    filter*: none                  # none | {lo: 0.0, hi: 1.0, min_spread: 0.0}
    topics: [10, 20, ...]          # topic counts of the curves (integers >= 2)
    alpha: 0.05                    # test level / interval coverage 1 - alpha
    targets: [{target: swap_rate, value: 0.05}, {target: power, value: 0.8}]
    pool: {depths: [10, 20, 50, 100], tau_min: 0.9}  # needs runs + qrels; solves every target
    costs: {topic: 0.0, judgment: 1.0, variant: 0.0, budget: null} # per topic / judgment / query variant
    variants: [1, 2, 4]           # query variants per topic: three-facet D-study and variant trade-off

Collection (exactly one source)::

    dataset: dl19-passage          # embedded data set (planner.datasets.available())
    scores: path                   # wide / tidy CSV|TSV, trec_eval -q file or folder
    runs: folder + qrels: file     # TREC runs scored with ir_measures
    stack: [{...}, {...}]          # collections as strata (systems may differ; _run_stacked)
    variant_divisor: 1000          # query id = topic * d + variant (query variations)
    strata: path | {topic: stratum}  # topic metadata (stratum per topic)
    missing: error                 # missing-cell policy (planner.scores)
    label: text                    # name shown in the report

Relative paths in a study file are relative to that file's folder. Every default
is resolved and written back into the report (``config.resolved.yaml`` and
``results.json``), so a report says exactly what ran.

What each scenario computes (filter, fit, curve, targets, variants, pool study, the
honest statement) and the stacked-strata formulas are written out in
``docs/studies.md`` and in the docstrings of :func:`_run_scenario`, :func:`_run_stacked`,
:func:`_pool_study`, :func:`_honest` and :func:`_solve_exact`. The answer's figures (what
its topic count buys, and the collection's own topic count) are computed at exactly
those counts with the scenario's method (:func:`_replay` keeps the resampling methods'
random stream of each count), never interpolated along the curve.

Randomness: each scenario gets a random stream derived from the study seed and keyed on
the scenario's settings (:func:`planner._random.keyed_stream`, :func:`_scenario_key`), so
results depend neither on ``jobs`` nor on the other scenarios in the grid. ``results.json`` holds no timestamps: the same seed and inputs
give a byte-identical file.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
import os
import re
import sys
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import simulate as _simulate
from ._random import keyed_stream
from .errors import ConfigError, DegenerateDataWarning, InputError, ParameterError, PlannerError
from .plan import MAX_COST, MAX_VARIANTS

_MAX_COST_TXT = f"{MAX_COST:.0e}".replace("e+", "e")      # 1e15
from .simulate import CLOSED_FORM as _CLOSED_FORM
from .simulate import METHODS as _SIM_METHODS
from .simulate import allocate_counts

__all__ = [
    "SCHEMA",
    "StudyConfig",
    "StudyResult",
    "expand_scenarios",
    "load_config",
    "quickstart_path",
    "run_study",
    "schema",
]

# planner.simulate.predict's methods, analytic first (the default)
METHODS = ["analytic"] + [m for m in _SIM_METHODS if m != "analytic"]
TARGETS = ["swap_rate", "reversal_rate", "kendall_tau", "ci_width", "power", "erho2", "phi"]
# what a stack of collections (strata with their own systems) can solve for
_STACK_TARGETS = ("ci_width", "power", "erho2", "phi")
GRID_KEYS = ("collection", "measure", "method", "variance", "min_diff", "strata", "filter")
DEFAULT_TOPICS = [10, 20, 30, 40, 50, 75, 100, 150, 200]

# what each key expects, in words: used for error messages ("key: expected ...")
EXPECTED = {
    "name": "a string",
    "study_name": "a plain folder name (no / or \\ or control characters, not '.' or '..')",
    "description": "a string",
    "seed": "an integer >= 0",
    "resamples": "an integer from 10 to 1,000,000",
    "collection": "a collection object (dataset, scores, runs + qrels, or stack) or a list of them",
    "stack": "a list of at least 2 collection objects",
    "measure": "a measure name or a list of measure names",
    "method": "one of " + ", ".join(METHODS) + " (or a list of them)",
    "variance": "pair, pooled, within-system or percentile:Q with 0 < Q <= 100 (or a list of them)",
    "min_diff": "a number > 0 (or a list of them)",
    "strata": "uniform or stratified (or a list of them)",
    "filter": "none or {lo, hi, min_spread} (or a list of them)",
    "topics": "a list of integers >= 2 (distinct, at most 10,000,000)",
    "alpha": "a number with 1e-10 <= alpha < 0.5",
    "targets": "a non-empty list of {target, value} objects",
    "target": "one of " + ", ".join(TARGETS),
    "value": "a number",
    "pool": "an object {depths: [integers >= 1], tau_min: number in [-1, 1]}",
    "tau_min": "a number in [-1, 1]",
    "depths": "a list of integers >= 1",
    "costs": f"an object {{topic, judgment, variant, budget}} of numbers from 0 to {_MAX_COST_TXT}",
    "topic": f"a number >= 0 and at most {_MAX_COST_TXT}",
    "judgment": f"a number >= 0 and at most {_MAX_COST_TXT}",
    "variant": f"a number >= 0 and at most {_MAX_COST_TXT}",
    "budget": f"a number > 0 and at most {_MAX_COST_TXT}, or null",
    "variants": f"a list of integers from 1 to {MAX_VARIANTS}",
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
    return {"oneOf": [item, {"type": "array", "items": item, "minItems": 1, "uniqueItems": True}]}


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
# a stack: several collections as strata of one topic population (systems may differ)
_STACK = {
    "type": "object", "additionalProperties": False, "required": ["stack"],
    "description": "Several collections stacked as strata (one stratum each); their systems may "
                   "differ, so components are fitted per stratum and combined with weights W_k.",
    "properties": {"stack": {"type": "array", "minItems": 2, "uniqueItems": True, "items": _COLLECTION},
                   "label": {"type": "string"}},
}
_ANY_COLLECTION = {"oneOf": [_COLLECTION, _STACK]}

#: the largest topic count planner.simulate.predict accepts
MAX_TOPICS = int(getattr(_simulate, "MAX_TOPICS", 10_000_000))

# target -> (JSON Schema range of its value, the range in words); the rates and
# coefficients are probabilities/correlations that are reached only in the limit at
# 0 or 1, a width only at 0 (infinitely many topics)
TARGET_RANGES = {
    "swap_rate": ({"exclusiveMinimum": 0, "exclusiveMaximum": 0.5}, "a number in (0, 0.5) (a swap rate is at most 0.5)"),
    "reversal_rate": ({"exclusiveMinimum": 0, "exclusiveMaximum": 1}, "a number in (0, 1)"),
    "kendall_tau": ({"exclusiveMinimum": -1, "exclusiveMaximum": 1}, "a number in (-1, 1)"),
    "ci_width": ({"exclusiveMinimum": 0}, "a number > 0"),
    "power": ({"exclusiveMinimum": 0, "exclusiveMaximum": 1}, "a number in (0, 1)"),
    "erho2": ({"exclusiveMinimum": 0, "exclusiveMaximum": 1}, "a number in (0, 1)"),
    "phi": ({"exclusiveMinimum": 0, "exclusiveMaximum": 1}, "a number in (0, 1)"),
}

_TARGET = {
    "type": "object", "additionalProperties": False, "required": ["target", "value"],
    "properties": {"target": {"enum": TARGETS}, "value": {"type": "number"}},
    "allOf": [{"if": {"properties": {"target": {"const": t}}, "required": ["target"]},
               "then": {"properties": {"value": {"type": "number", **rng,
                                                 "x-expected": f"{words} for a {t} target"}}}}
              for t, (rng, words) in TARGET_RANGES.items()],
}

_FILTER = {"oneOf": [
    {"enum": ["none", None]},
    {"type": "object", "additionalProperties": False,
     "properties": {"lo": {"type": "number", "default": 0.0},
                    "hi": {"type": "number", "default": 1.0},
                    "min_spread": {"type": "number", "minimum": 0, "default": 0.0}}},
]}

_VARIANCE = {"type": "string",
             "pattern": r"^(pair|pooled|within-system|percentile:([1-9][0-9]?(\.[0-9]+)?|0\.[0-9]*[1-9][0-9]*|100(\.0+)?))$"}

_SCENARIO_PROPS = {
    "name": {"type": "string", "minLength": 1},
    "collection": {"oneOf": [_COLLECTION, _STACK,
                             {"type": "array", "minItems": 1, "uniqueItems": True, "items": _ANY_COLLECTION}]},
    "measure": _one_or_list({"type": "string", "minLength": 1}),
    "method": _one_or_list({"enum": METHODS}),
    "variance": _one_or_list(_VARIANCE),
    "min_diff": _one_or_list({"type": "number", "exclusiveMinimum": 0}),
    "strata": _one_or_list({"enum": ["uniform", "stratified"]}),
    "filter": {"oneOf": [_FILTER, {"type": "array", "items": _FILTER, "minItems": 1}]},
    "topics": {"type": "array", "items": {"type": "integer", "minimum": 2, "maximum": MAX_TOPICS},
               "minItems": 1, "uniqueItems": True},
    "alpha": {"type": "number", "minimum": 1e-10, "exclusiveMaximum": 0.5},
    "targets": {"type": "array", "minItems": 1, "items": _TARGET},
    "pool": {"type": "object", "additionalProperties": False, "required": ["depths"],
             "properties": {"depths": {"type": "array", "minItems": 1, "uniqueItems": True,
                                       "items": {"type": "integer", "minimum": 1}},
                            "tau_min": {"type": "number", "minimum": -1, "maximum": 1}}},
    "costs": {"type": "object", "additionalProperties": False,
              "properties": {"topic": {"type": "number", "minimum": 0, "maximum": MAX_COST},
                             "judgment": {"type": "number", "minimum": 0, "maximum": MAX_COST},
                             "variant": {"type": "number", "minimum": 0, "maximum": MAX_COST},
                             "budget": {"type": ["number", "null"], "exclusiveMinimum": 0,
                                        "maximum": MAX_COST}}},
    "variants": {"type": "array", "minItems": 1, "uniqueItems": True,
                 "items": {"type": "integer", "minimum": 1, "maximum": MAX_VARIANTS}},
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
        "resamples": {"type": "integer", "minimum": 10, "maximum": 1_000_000},
        **_SCENARIO_PROPS,
        # the study name is also the default report folder: a plain folder name
        "name": {"type": "string", "minLength": 1, "pattern": r"^(?!\.\.?$)[^/\\\x00-\x1f\x7f]+$",
                 "x-expected": EXPECTED["study_name"]},
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
    "costs": {"topic": 0.0, "judgment": 1.0, "variant": 0.0, "budget": None},
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


def _did_you_mean(word, choices) -> str:
    """`` (did you mean 'targets'?)`` for a key close to an allowed one, else ``""``."""
    import difflib

    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.7)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _error_to_config(err, source) -> ConfigError:
    """One jsonschema error -> ConfigError naming the key path in the user's words."""
    path = list(err.absolute_path)
    if err.validator == "additionalProperties":
        extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
        allowed = ", ".join(sorted(err.schema.get("properties", {})))
        key = _key_path(path + [extra[0]]) if extra else _key_path(path)
        return ConfigError(f"unknown key {extra[0]!r}{_did_you_mean(extra[0], err.schema.get('properties', {}))} "
                           f"(allowed: {allowed})" if extra else err.message, key=key, file=source)
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
            {"dataset", "scores", "runs", "qrels", "stack"} & set(err.instance) or name in ("collection", "stack")):
        srcs = [k for k in ("dataset", "scores", "runs", "stack") if k in err.instance]
        if len(srcs) != 1 or ("runs" in err.instance) != ("qrels" in err.instance):
            return ConfigError("expected exactly one source: dataset, scores, runs + qrels, or stack "
                               f"(got {', '.join(sorted(err.instance)) or 'none'})",
                               key=_key_path(path), file=source)
        if "stack" in err.instance:
            extra = sorted(set(err.instance) - set(_STACK["properties"]))
            if extra:
                return ConfigError(f"unknown key {extra[0]!r}{_did_you_mean(extra[0], _STACK['properties'])} "
                                   "(allowed: " + ", ".join(sorted(_STACK["properties"])) + ")",
                                   key=_key_path(path + [extra[0]]), file=source)
            for ctx in err.context or ():
                if ctx.validator == "additionalProperties" and "stack" in ctx.schema.get("properties", {}):
                    return _error_to_config(ctx, source)
            sub = _first_inner_error(err, prefer="stack")
            if sub is not None:
                return _error_to_config(sub, source)
        # the source is fine: look for the first real problem inside
        sub = _first_inner_error(err)
        if sub is not None:
            return _error_to_config(sub, source)
    key = _key_path(path[:cut]) if cut else _key_path(path)
    value = err.instance
    # a list with a repeated entry (a grid axis, topics, a stack): name the entry
    dup_err = err if err.validator == "uniqueItems" else next(
        (c for c in err.context or () if c.validator == "uniqueItems" and not list(c.relative_path)), None)
    if dup_err is not None and isinstance(dup_err.instance, list):
        seen: list = []
        for item in dup_err.instance:
            if item in seen:
                return ConfigError(f"{_short(item)} is listed more than once", key=key, file=source)
            seen.append(item)
    expected = err.schema.get("x-expected") if isinstance(err.schema, dict) else None
    if expected is None:
        expected = EXPECTED.get(name) if isinstance(name, str) else None
    if expected:
        hint = ""
        if isinstance(value, str) and name in ("method", "strata", "variance", "missing"):
            hint = _did_you_mean(value, {"method": METHODS, "strata": ("uniform", "stratified"),
                                         "variance": ("pair", "pooled", "within-system"),
                                         "missing": ("error", "zero", "drop-topic", "drop-system", "keep")}[name])
        return ConfigError(f"expected {expected}, got {_short(value)}{hint}", key=key, file=source)
    return ConfigError(err.message, key=key, file=source)


def _first_inner_error(err, prefer: str | None = None):
    best = None
    ctxs = list(err.context or ())
    if prefer is not None:
        inside = [c for c in ctxs if prefer in list(c.relative_path)[:1]]
        ctxs = inside or ctxs
    for ctx in ctxs:
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
    else:
        # a list with a repeated entry fails its oneOf too: name the repeated entry
        stack = list(errors)
        while stack:
            e = stack.pop(0)
            if e.validator == "uniqueItems":
                best = e
                break
            stack.extend(e.context or ())
    raise _error_to_config(best, source)


def _check_doc(doc: dict, source: str | None, base: Path | None = None) -> None:
    """Rules the JSON Schema cannot express, checked before anything runs: finite numbers,
    each target once per list, distinct scenario names, no stratum of a stack given twice,
    ``costs`` only with a pool study or query variants. Raises :class:`ConfigError` naming the key."""
    import math

    def walk(v, path):
        if isinstance(v, float) and not math.isfinite(v):
            raise ConfigError(f"expected a finite number, got {v}", key=_key_path(path), file=source)
        if isinstance(v, dict):
            for k, x in v.items():
                walk(x, path + [k])
        elif isinstance(v, list):
            for i, x in enumerate(v):
                walk(x, path + [i])

    walk(doc, [])
    entries = [([], doc)] + [(["scenarios", i], sd) for i, sd in enumerate(doc.get("scenarios") or [])]
    for prefix, d in entries:
        flts = d.get("filter")
        for fi, f in enumerate(flts if isinstance(flts, list) else [flts]):
            if isinstance(f, dict) and not float(f.get("lo", 0.0)) < float(f.get("hi", 1.0)):
                raise ConfigError(f"the low bound must be below the high bound, got lo {f.get('lo', 0.0)} and "
                                  f"hi {f.get('hi', 1.0)}", file=source,
                                  key=_key_path(prefix + ["filter"] + ([fi] if isinstance(flts, list) else [])
                                                + ["lo"]))
        seen: dict = {}
        for j, t in enumerate(d.get("targets") or []):
            if t["target"] in seen:
                raise ConfigError(f"target {t['target']} is given twice (also "
                                  f"{_key_path(prefix + ['targets', seen[t['target']]])}); give each "
                                  "target once", key=_key_path(prefix + ["targets", j, "target"]),
                                  file=source)
            seen[t["target"]] = j
        colls = d.get("collection")
        for ci, c in enumerate(colls if isinstance(colls, list) else [colls] if colls else []):
            cpath = prefix + ["collection"] + ([ci] if isinstance(colls, list) else [])
            if "stack" not in c:
                continue
            srcs: dict = {}
            labels: dict = {}
            for k, part in enumerate(c["stack"]):
                src = _source_id(part, Path.cwd() if base is None else base)
                if src in srcs:
                    shown = {kk: part[kk] for kk in ("dataset", "scores", "runs", "qrels") if kk in part}
                    raise ConfigError(f"the same collection ({_short(shown)}) is stacked twice (also "
                                      f"stack[{srcs[src]}]): each stratum needs its own collection",
                                      key=_key_path(cpath + ["stack", k]), file=source)
                srcs[src] = k
                lab = part.get("label") or part.get("dataset") or Path(
                    str(part.get("scores") or part.get("runs"))).name
                if lab in labels:
                    raise ConfigError(f"stratum label {lab!r} is used twice (also stack[{labels[lab]}]); "
                                      "give each stacked collection its own label",
                                      key=_key_path(cpath + ["stack", k, "label"]), file=source)
                labels[lab] = k
    names: dict = {}
    for i, sd in enumerate(doc.get("scenarios") or []):
        nm = sd.get("name")
        if nm is not None:
            if nm in names:
                raise ConfigError(f"scenario name {nm!r} is used twice (also scenarios[{names[nm]}])",
                                  key=f"scenarios[{i}].name", file=source)
            names[nm] = i
    # costs feed the pool study (the cost per topic of each depth, the budget) and the query
    # variants' trade-off (a topic and each of its variants)
    scen = doc.get("scenarios") or [{}]

    def has(sd, k):
        return sd.get(k, doc.get(k)) is not None

    def check_costs(c: Mapping, where: str, pool: bool, variants: bool) -> None:
        c = c or {}
        if not pool and not variants:
            key = f"{where}.budget" if c.get("budget") is not None else where
            raise ConfigError("has no effect without a pool study (pool: {depths: [...]}, runs + qrels) "
                              "or query variants (variants: [...]): costs are the cost per topic and per "
                              "judgment of each pool depth, or per topic and per query variant",
                              key=key, file=source)
        if "variant" in c and not variants:
            raise ConfigError("has no effect without query variants (variants: [...])", key=f"{where}.variant",
                              file=source)
        if "variant" in c and pool:
            raise ConfigError("query-variant costs are not combined with a pool study (their judgments "
                              "would count twice)", key=f"{where}.variant", file=source)
        if not pool:
            for k in ("judgment", "budget"):
                if c.get(k) is not None:
                    raise ConfigError("has no effect without a pool study (pool: {depths: [...]}, runs + "
                                      "qrels)", key=f"{where}.{k}", file=source)

    if "costs" in doc:
        check_costs(doc["costs"], "costs", any(has(sd, "pool") for sd in scen),
                    any(has(sd, "variants") for sd in scen))
    for i, sd in enumerate(doc.get("scenarios") or []):
        if "costs" in sd:
            check_costs(sd["costs"], f"scenarios[{i}].costs", has(sd, "pool"), has(sd, "variants"))


def _source_id(c: Mapping, base: Path) -> tuple:
    """What identifies a collection's topics: its data set name or its files (resolved against
    the study file's folder). Options (missing, variant_divisor, pool_runs, ...) are left out:
    the same topics read two ways are still the same topics."""
    out = []
    for k in ("dataset", "scores", "runs", "qrels"):
        if k in c:
            v = str(c[k])
            if k != "dataset":
                p = Path(os.path.expanduser(v))
                v = os.path.realpath(p if p.is_absolute() else base / p)
            out.append((k, v))
    return tuple(out)


def _check_name(name: str, source: str | None, key: str = "name") -> None:
    from .report import MAX_NAME_BYTES

    if not re.fullmatch(SCHEMA["properties"]["name"]["pattern"], name):
        raise ConfigError(f"expected {EXPECTED['study_name']}, got {_short(name)} (the study name is the "
                          "default report folder, reports/<name>; choose the folder with -o)",
                          key=key, file=source)
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise ConfigError(f"expected a name of at most {MAX_NAME_BYTES} bytes, got {len(name.encode('utf-8'))} "
                          "(the study name is the default report folder, reports/<name>)", key=key, file=source)


def _unique_key_loader():
    """A PyYAML SafeLoader that rejects a key given twice in one mapping (PyYAML keeps the last)."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def construct_mapping(loader, node, deep=False):
        seen: dict = {}
        for key_node, _ in node.value:      # the keys written here (merged keys may be overridden)
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = loader.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                continue         # the base constructor reports unhashable keys
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first given on line {seen[key] + 1})",
                    key_node.start_mark)
            seen[key] = key_node.start_mark.line
        loader.flatten_mapping(node)
        return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)

    Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    # YAML 1.1 (PyYAML) reads 1e-3 and 1e3 as strings (its floats need a dot and a signed
    # exponent); as in YAML 1.2 they are numbers here
    Loader.add_implicit_resolver("tag:yaml.org,2002:float",
                                 re.compile(r"^[-+]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[eE][-+]?[0-9]+$"),
                                 list("-+0123456789."))
    return Loader


def _yaml_load(path: Path):
    import yaml

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read study file: {exc.strerror}", file=path) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[:exc.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 text (byte 0x{data[exc.start]:02x} cannot be decoded); save the "
                         "study file as UTF-8", file=path, line=line) from None
    try:
        return yaml.load(text, Loader=_unique_key_loader())
    except RecursionError:
        raise InputError("invalid YAML: nested too deeply (a study needs a few levels)", file=path) from None
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
        if not isinstance(config, (str, os.PathLike)):
            raise ParameterError(f"expected a study file path, a mapping or None, got "
                                 f"{type(config).__name__}", parameter="config")
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
    _check_doc(doc, source, base)
    if "name" in doc:
        _check_name(str(doc["name"]), source)
    elif default_name in (".", ".."):        # a file named "..yaml": no folder name in it
        default_name = "study"
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
    colls = top.get("collection")
    colls = colls if isinstance(colls, list) else [colls] if colls is not None else []
    if "measure" not in top and colls and all(isinstance(c, Mapping) and _only_score_files(c) for c in colls):
        resolved["defaults"]["measure"] = None      # score files keep their own measure
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
    if "stack" in c:
        parts = [_resolve_collection(x, base) for x in c["stack"]]
        return {"stack": parts, "label": c.get("label") or " + ".join(p["label"] for p in parts)}
    out = {k: v for k, v in c.items()}
    out.setdefault("missing", "error")
    for k in ("scores", "runs", "qrels"):
        if k in out:
            p = Path(os.path.expanduser(str(out[k])))
            out[k] = os.path.normpath(str(p if p.is_absolute() else (base / p)))
    if isinstance(out.get("strata"), str):
        p = Path(os.path.expanduser(out["strata"]))
        out["strata"] = os.path.normpath(str(p if p.is_absolute() else (base / p)))
    if "label" not in out:
        if "dataset" in out:
            out["label"] = out["dataset"]
        elif "scores" in out:
            out["label"] = Path(out["scores"]).name
        else:
            # a runs folder is usually just "runs": name it with its parent (trec-dl2019-passage/runs)
            r = Path(out["runs"])
            out["label"] = f"{r.parent.name}/{r.name}" if r.parent.name else r.name
    return out


def _only_score_files(c: Mapping) -> bool:
    """Whether every source of a resolved collection is a score file (``scores``)."""
    parts = c["stack"] if "stack" in c else [c]
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
    from .measures import parse_measures

    try:
        parse_measures([measure])
    except ParameterError as exc:
        raise ConfigError(exc.message, key=key, file=source) from None


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
        # without a measure key, a score file is read with its own measure (labelled by it,
        # or "score" when it names none), never the default nDCG@10 of the embedded data
        measure_given = "measure" in top or "measure" in sdoc
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
            if not measure_given and _only_score_files(sc["collection"]):
                sc["measure"] = None
            if sc["measure"] is not None and "runs" in sc["collection"]:
                _check_measure(sc["measure"], "measure" if "measure" not in sdoc else f"scenarios[{i}].measure",
                               source)
            sc["filter"] = _resolve_filter(sc["filter"])
            sc["topics"] = sorted(int(n) for n in sc["topics"])
            sname = sdoc.get("name")
            if sname and varying:
                sname = f"{sname} ({', '.join(varying)})"
            elif not sname:
                sname = ", ".join(varying) if varying else " ".join(
                    str(x) for x in (sc["collection"]["label"], sc["measure"], sc["method"]) if x is not None)
            sc["name"] = sname
            sc["index"] = i
            if "stack" in sc["collection"]:
                why = {"strata": "a stacked collection is already stratified by its sources (each one is a "
                                 "stratum, curves are per stratum), so this key has nothing to choose; remove it",
                       "pool": "a pool study needs one collection of runs + qrels, not a stack",
                       "variants": "query variants need one collection with variants, not a stack",
                       "filter": "informative-topic filters are not available for a stack"}
                bad = [k for k, on in (("strata", sc["strata"] != "uniform"), ("pool", sc["pool"] is not None),
                                       ("variants", bool(sc["variants"])), ("filter", bool(sc["filter"])))
                       if on]
                if bad:
                    k = bad[0]
                    raise ConfigError(why[k], key=f"scenarios[{i}].{k}" if k in sdoc else k, file=source)
                if not any(tg["target"] in _STACK_TARGETS for tg in sc["targets"]):
                    raise ConfigError(
                        f"a stack answers {', '.join(_STACK_TARGETS)} only (pair rates and Kendall tau "
                        f"need systems common to all strata), got {sc['targets'][0]['target']}; add one "
                        "of them", key=f"scenarios[{i}].targets[0].target" if "targets" in sdoc
                        else "targets[0].target", file=source)
            if sc["pool"] is not None and "runs" not in sc["collection"]:
                raise ConfigError("a pool study needs a collection with runs + qrels",
                                  key=f"scenarios[{i}].pool" if len(scenario_docs) > 1 or sdoc else "pool",
                                  file=source)
            if sc["variance"].startswith("percentile:"):
                q = float(sc["variance"].split(":", 1)[1])
                if not 0 < q <= 100:
                    raise ConfigError(f"expected {EXPECTED['variance']}, got {sc['variance']!r}",
                                      key="variance", file=source)
            out.append(sc)
    names = [s["name"] for s in out]
    for j, s in enumerate(out):
        s["id"] = f"s{j + 1:02d}"
        if names.count(s["name"]) > 1:
            s["name"] = f"{s['name']} [{s['id']}]"
    return [dict(sorted(s.items())) for s in out]


# ---------------------------------------------------------------------- running
@dataclass(frozen=True)
class StudyResult:
    """What a study produced.

    Attributes:
        name: the study name.
        config: the resolved config (every default filled in).
        results: every number, JSON-able and deterministic (written as ``results.json``).
        tables: name -> pandas DataFrame (written as ``tables/<name>.csv``).
        provenance: versions, seed, input hashes, command, time (``provenance.json``).
        out: the report folder, or ``None`` when no report was written.
        elapsed: wall-clock seconds of the whole study.
    """

    name: str
    config: dict
    results: dict
    tables: dict = field(repr=False)
    provenance: dict = field(repr=False)
    out: str | None = None
    elapsed: float = 0.0

    @property
    def answer(self) -> dict:
        return self.results.get("answer", {})

    def to_dict(self) -> dict:
        return self.results

    def to_frame(self):
        """The required-topics table (scenario, target, value, n_topics, how)."""
        return self.tables["targets"]


_RUNS_CACHE: dict = {}


def _sha256_file(path: Path) -> str:
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
            h.update(str(f.relative_to(p)).encode() + b"\0" + _sha256_file(f).encode() + b"\n")
        return h.hexdigest()
    return _sha256_file(p)


def _sha256_matrix(m) -> str:
    h = hashlib.sha256()
    h.update(np.ascontiguousarray(m.values).tobytes())
    h.update("\0".join(m.systems).encode() + b"\1" + "\0".join(m.topics).encode())
    return h.hexdigest()


#: said when a study's input is missing: the path in the message is already resolved
_NOT_FOUND_HINT = (" (a study's relative paths start at its file's folder; the example studies in "
                   "configs/ say in their header where to get their data)")


def _load_runs_qrels(coll: Mapping):
    from .collection import read_qrels, read_runs

    for p, what in ((coll["runs"], "runs"), (coll["qrels"], "qrels")):
        if not Path(p).exists():
            raise InputError(f"{what} not found{_NOT_FOUND_HINT}", file=p)
    # cached per process (a grid reads the same runs for every measure); the key holds the
    # modification times so that edited files are read again
    key = (coll["runs"], coll["qrels"], os.stat(coll["runs"]).st_mtime_ns, os.stat(coll["qrels"]).st_mtime_ns)
    if key not in _RUNS_CACHE:
        _RUNS_CACHE.clear()
        _RUNS_CACHE[key] = (read_runs(coll["runs"]), read_qrels(coll["qrels"]))
    return _RUNS_CACHE[key]


def _load_scores(coll: Mapping, measure: str, key: str):
    """(ScoreMatrix, inputs list for provenance)."""
    strata = given = coll.get("strata")
    if isinstance(strata, str) and strata != "dataset" and not Path(strata).exists():
        raise InputError("strata file not found", file=strata)
    if coll.get("variant_divisor"):
        strata = None      # attached after stacking the variants (they may name topics)
    if "dataset" in coll:
        from . import datasets

        names = list(datasets.available())
        if coll["dataset"] not in names:
            raise ConfigError(f"unknown data set {coll['dataset']!r}; available: {', '.join(names)}",
                              key=f"{key}.dataset")
        m = datasets.load(coll["dataset"], measure=measure)
        if strata is not None:
            from .collection import attach_strata

            m = attach_strata(m, strata)
        inputs = [{"path": f"planner.datasets:{coll['dataset']}:{measure}", "sha256": _sha256_matrix(m)}]
    elif "scores" in coll:
        from .collection import load_scores

        if not Path(coll["scores"]).exists():
            raise InputError(f"score file not found{_NOT_FOUND_HINT}", file=coll["scores"])
        m = load_scores(coll["scores"], measure=measure, missing=coll.get("missing", "error"),
                        strata=strata)
        inputs = [{"path": coll["scores"], "sha256": _sha256_path(coll["scores"])}]
    else:
        from .measures import score_runs

        runs, qrels = _load_runs_qrels(coll)
        m = score_runs(runs, qrels, [measure])[measure]
        if strata is not None:
            from .collection import attach_strata

            m = attach_strata(m, strata)
        inputs = [{"path": coll["runs"], "sha256": _sha256_path(coll["runs"])},
                  {"path": coll["qrels"], "sha256": _sha256_path(coll["qrels"])}]
    if given is not None and isinstance(given, str):
        inputs.append({"path": given, "sha256": _sha256_path(given)})
    if coll.get("variant_divisor"):
        from .collection import stack_with_strata

        if m.has_variants:
            raise ConfigError("the scores already have query variants (a 'variant' column): nothing to split",
                              key=f"{key}.variant_divisor")
        try:
            m3 = stack_with_strata(m, int(coll["variant_divisor"]), given)
        except ParameterError as e:         # a strata mapping in the config, or the divisor
            raise ConfigError(e.message, key=f"{key}.{e.parameter or 'variant_divisor'}") from None
        except InputError as e:
            if e.file is None or e.file != m.source:
                raise
            # the scores' ids do not split by this divisor: name the key as well as the data
            raise ConfigError(str(e), key=f"{key}.variant_divisor") from None
        m = m3
    return m, inputs


def _apply_filter(m, flt: Mapping | None):
    """Informative-topic filter (:func:`planner.simulate.filter_informative`): drop topics
    where every system scores <= lo, or every system >= hi, or the across-system range is
    below min_spread. Returns the filtered matrix and one row per dropped topic."""
    if not flt:
        return m, []
    from .simulate import filter_informative

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


#: topic resamples behind the interval on n of the analytic swap/reversal/Kendall-tau sizes
INTERVAL_RESAMPLES = 200

_DECREASING = {"swap_rate": "swap_rate_mean", "reversal_rate": "reversal_rate_mean",
               "ci_width": "ci_width_median"}
_INCREASING = {"kendall_tau": "kendall_tau_mean", "power": "power_mean", "erho2": "erho2", "phi": "phi"}


def _from_curve(rows: list[dict], target: str, value: float) -> tuple[float | None, str]:
    """Smallest n meeting ``target`` along the curve (linear interpolation between the
    simulated topic counts, rounded up); ``None`` when not reached. Only the fallback of
    :func:`_solve_exact` when the method cannot be evaluated inside the bracket."""
    col = _DECREASING.get(target) or _INCREASING[target]
    dec = target in _DECREASING
    pts = [(r["n_topics"], r.get(col)) for r in rows if r.get(col) is not None
           and np.isfinite(r.get(col))]
    prev = None
    for n, v in pts:
        ok = v <= value if dec else v >= value
        if ok:
            if prev is None:
                return float(n), f"curve ({col}; met at the smallest n studied)"
            n0, v0 = prev
            if v == v0:
                return float(n), f"curve ({col})"
            frac = (value - v0) / (v - v0)
            return float(min(n, max(n0 + 1, int(np.ceil(n0 + frac * (n - n0) - 1e-9))))), \
                f"curve ({col}, interpolated)"
        prev = (n, v)
    return None, f"curve ({col}; not reached up to n = {pts[-1][0] if pts else '?'})"


def _replay(rng) -> callable:
    """A factory of generators that start where ``rng`` is now: the same seed sequence
    with the same number of children spawned so far. :func:`planner.simulate.predict`
    derives one random stream per topic count from its generator's next child, so a
    count evaluated on its own with a replayed generator gives exactly the numbers it
    has on the scenario's curve (and the same for any ``--jobs``)."""
    ss = rng.bit_generator.seed_seq
    kind = type(rng.bit_generator)
    state = (ss.entropy, tuple(ss.spawn_key), ss.pool_size, ss.n_children_spawned)

    def make():
        return np.random.Generator(kind(np.random.SeedSequence(
            state[0], spawn_key=state[1], pool_size=state[2], n_children_spawned=state[3])))

    return make


def _solve_exact(rows: list[dict], target: str, value: float, at) -> dict:
    """Smallest n meeting ``target`` with the scenario's method evaluated AT n.

    The studied counts give the bracket (the last count that fails, the first that meets;
    below the smallest count the bracket starts at 1); bisection then evaluates the method
    at each candidate n (``at(n)`` -> a curve row or ``None``), so the n returned meets the
    target and n - 1 does not (for the resampling methods: with their random stream for
    that n, as on the curve, whose noise can make the curve locally non-monotone). When
    the method cannot be evaluated inside the bracket the count is interpolated between
    the bracket's ends, and the result says so.

    Returns ``{"n_topics", "how", "bracket", "interpolated"}``.
    """
    col = _DECREASING.get(target) or _INCREASING[target]
    dec = target in _DECREASING

    def ok(v):
        return v <= value if dec else v >= value

    pts = [(int(r["n_topics"]), r.get(col)) for r in rows
           if r.get(col) is not None and np.isfinite(r.get(col))]
    hit = next((i for i, (_, v) in enumerate(pts) if ok(v)), None)
    if hit is None:
        return {"n_topics": None, "bracket": None, "interpolated": False,
                "how": f"curve ({col}; not reached up to n = {pts[-1][0] if pts else '?'})"}
    n_hi = pts[hit][0]
    n_lo = pts[hit - 1][0] if hit > 0 else 1
    lo0, hi0 = n_lo, n_hi
    while n_hi - n_lo > 1:
        mid = (n_lo + n_hi) // 2
        r = at(mid)
        v = None if r is None else r.get(col)
        if v is None or not np.isfinite(v):
            n, _ = _from_curve(rows, target, value)
            return {"n_topics": n, "bracket": [lo0, hi0], "interpolated": True,
                    "how": f"{col} interpolated linearly between the studied counts {lo0} and {hi0} "
                           f"(the method cannot be evaluated at n = {mid}); the count is not exact"}
        if ok(v):
            n_hi = mid
        else:
            n_lo = mid
    where = (f"between the studied counts {lo0} and {hi0}" if hit > 0
             else f"below the smallest studied count {hi0}")
    return {"n_topics": float(n_hi), "bracket": [lo0, hi0], "interpolated": False,
            "how": f"smallest n whose {col} meets the target, the method evaluated at each candidate "
                   f"n by bisection {where}"}


def _data_stream(seed: int | None, m, fallback):
    """The honest statement's random stream: keyed on the study seed and the scores, so
    scenarios with the same data (differing in method, say) show the same figures; without a
    seed, ``fallback`` (the scenario's own stream)."""
    if seed is None:
        return fallback
    return np.random.default_rng([int(seed), int(_sha256_matrix(m)[:15], 16)])


def _topics_key(m) -> str:
    """A key of the topic list alone: scenarios whose scores cover the same topics (in the same
    order) share it, whatever their measure."""
    return hashlib.sha256("\0".join(m.topics).encode()).hexdigest()


def _topics_stream(seed: int | None, m, fallback):
    """The stream of the topic resamples behind the intervals on n: keyed on the study seed and
    the topic list, so scenarios on the same topics (two measures of the same runs, say) draw
    the same resamples and their counts can be compared resample by resample
    (:func:`_paired_measures`); without a seed, ``fallback``."""
    if seed is None:
        return fallback
    return np.random.default_rng([int(seed), int(_topics_key(m)[:15], 16), 1])


def _honest(m, rng, resamples: int, alpha: float) -> dict:
    """Mean and topic count; paired bootstrap over topics of all system pairs."""
    x = m.topic_scores()
    S, T = x.shape
    means = x.mean(axis=1)
    order = np.argsort(-means, kind="stable")
    a = int(order[0])
    # "the second": the best-scoring system that is not identical to the best on every topic (a
    # duplicate run would give a lead of 0 with the interval [0, 0] and reversal rate 0.5)
    b = next((int(j) for j in order[1:] if not np.array_equal(x[int(j)], x[a])), int(order[1]))
    idx = rng.integers(0, T, size=(resamples, T))
    boot = np.empty((S, resamples))
    for s in range(S):                      # memory S * resamples floats
        boot[s] = x[s][idx].mean(axis=1)
    d_ab = boot[a] - boot[b]
    obs = means[a] - means[b]
    lo, hi = np.quantile(d_ab, [alpha / 2, 1 - alpha / 2])
    rev_ab = float(np.mean(np.sign(d_ab) == -np.sign(obs)) + 0.5 * np.mean(d_ab == 0)) if obs != 0 else 0.5
    ia, ib = np.triu_indices(S, 1)
    obs_sign = np.sign(means[ia] - means[ib])
    rev = np.empty(len(ia))
    for start in range(0, len(ia), 2000):    # memory 2000 * resamples floats per chunk
        sl = slice(start, start + 2000)
        d = boot[ia[sl]] - boot[ib[sl]]
        rev[sl] = np.mean(np.sign(d) == -obs_sign[sl, None], axis=1) + 0.5 * np.mean(d == 0, axis=1)
    rev = np.where(obs_sign == 0, 0.5, rev)
    return {"n_systems": S, "n_topics": T, "grand_mean": float(x.mean()),
            "best_system": m.systems[a], "best_mean": float(means[a]),
            "second_system": m.systems[b], "second_mean": float(means[b]),
            "identical_to_best": [m.systems[int(j)] for j in order[1:] if np.array_equal(x[int(j)], x[a])],
            "diff_top2": float(obs), "diff_top2_lo": float(lo), "diff_top2_hi": float(hi),
            "reversal_top2": rev_ab, "reversal_mean_pairs": float(rev.mean()),
            "pairs_reversal_over_5pct": float(np.mean(rev > 0.05)),
            "interval": f"{100 * (1 - alpha):g}% paired bootstrap percentile interval, {resamples} resamples"}


def _judged_share(coll: Mapping, measure: str, runs_qrels=None) -> dict | None:
    """Judged share of the evaluated runs' top k (k from the measure cutoff, default 10)."""
    mk = re.search(r"@(\d+)", measure or "")
    k = int(mk.group(1)) if mk else 10
    ps = None
    try:
        if "runs" in coll:
            from .measures import pool_stats

            runs, qrels = runs_qrels or _load_runs_qrels(coll)
            ps = pool_stats(runs, qrels, depths=[k], pool_runs=coll.get("pool_runs"))
        elif "dataset" in coll:
            from . import datasets

            if hasattr(datasets, "load_pool"):
                ps = datasets.load_pool(coll["dataset"])
    except (ImportError, AttributeError, KeyError, PlannerError):
        ps = None
    if ps is None:
        return None
    return _share_from_pool(ps, k)


def _share_from_pool(ps, k: int) -> dict | None:
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
    return {"depth": int(kk), "mean": float(per_run.mean()), "min": float(per_run.min()),
            "runs": int(len(per_run)), "lowest_run": str(per_run.idxmin()), "runs_in_pool": in_pool}


_SIZE_CACHE: dict = {}


def _size(m, **kw):
    """:func:`planner.plan.topic_set_size` on matrix ``m``, memoised per process (the
    ``pair`` selector solves once per pair; scenarios differing only in the method share it)."""
    from .plan import topic_set_size

    key = (_sha256_matrix(m), tuple(sorted(kw.items())))
    if key not in _SIZE_CACHE:
        if kw.get("variance_selector") == "pair":
            # plan's "pair" selector plans with the median pair variance (= percentile:50 of
            # s2_d, same n) and also solves every pair separately for quantiles, which the
            # study does not report; ask for the median directly and name it as "pair".
            from dataclasses import replace

            res = topic_set_size(variance=m, **{**kw, "variance_selector": "percentile:50"})
            res = replace(res, variance="pair (median over pairs)")
        else:
            res = topic_set_size(variance=m, **kw)
        _SIZE_CACHE[key] = res
    return _SIZE_CACHE[key]


def _allocate(n: int, share: np.ndarray) -> np.ndarray:
    """``n`` topics across strata in proportion to ``share`` (planner.simulate.allocate_counts,
    at least 2 per stratum); below ``2 K`` topics, 2 per stratum."""
    K = len(share)
    if n < 2 * K:
        return np.full(K, 2)
    return allocate_counts(n, share)


def _run_stacked(sc: dict, rng, resamples: int, seed: int | None = None) -> dict:
    """A stack of collections as strata (module docs, "Stacked strata").

    Each stratum k (one stacked collection, its own systems) gets its own fit and curve.
    Combined, with weights ``W_k = T_k / sum T`` and ``sigma_k^2 = 2 var_e,k`` (the mean
    over pairs of the variance of per-topic differences, an identity of the ANOVA), the
    stratified mean difference of a pair over ``n_k`` topics per stratum has variance
    ``V = sum_k W_k^2 sigma_k^2 / n_k``; the study reports, for each n, the proportional
    (``n_k = n W_k``) and Neyman-optimal (``n_k ∝ W_k sigma_k``) allocations, the interval
    width ``2 t_{1-alpha/2}(n - K) sqrt(V)`` and the power of the two-sided test at
    ``min_diff`` (normal approximation). Uniform sampling from the mixed population has
    variance ``(sum_k W_k sigma_k^2 + between-strata spread of the pair's effect) / n``;
    without systems common to the strata the spread cannot be estimated, so the uniform
    width shown is a lower bound (spread 0), equal to the proportional one.
    """
    from types import SimpleNamespace

    from scipy import special, stats

    from .plan import interval_quantiles, smallest_n
    from .simulate import predict
    from .variance import anova_components, fit

    parts = sc["collection"]["stack"]
    streams = rng.spawn(2 * len(parts))
    labels, comps, rows_k, honest_k, inputs, Ts, data = [], [], [], [], [], [], []
    measures, mats, topics_k = [], [], []
    for i, coll in enumerate(parts):
        m, inp = _load_scores(coll, sc["measure"], f"collection.stack[{i}]")
        measures.append(sc["measure"] or m.measure or "score")
        m = m.collapse_variants()
        c = fit(m)
        mats.append(None if m.has_missing else m.values)
        topics_k.append(m.topics)
        cv = predict(m, topics=sc["topics"], method=sc["method"],
                     variance=sc["variance"] if sc["method"] == "analytic" else None,
                     min_diff=sc["min_diff"], alpha=sc["alpha"], resamples=resamples, rng=streams[2 * i])
        labels.append(coll["label"])
        comps.append(c)
        rows_k.append([dict(r) for r in cv.rows])
        h = _honest(m, _data_stream(seed, m, streams[2 * i + 1]), resamples, sc["alpha"])
        h["judged_share"] = _judged_share(coll, measures[-1])
        h["stratum"] = coll["label"]
        honest_k.append(h)
        inputs.extend(inp)
        Ts.append(m.n_topics)
        data.append({"stratum": coll["label"], "n_systems": m.n_systems, "n_topics": m.n_topics,
                     "source": m.source})
    sc = {**sc, "measure": " / ".join(dict.fromkeys(measures))}
    W = np.array(Ts, dtype=float) / sum(Ts)
    sig2 = np.array([2 * c.var_e for c in comps])
    K = len(parts)
    alpha, delta = sc["alpha"], sc["min_diff"]
    z = stats.norm.ppf(1 - alpha / 2)

    tcrit: dict[int, float] = {}

    def combo(nk, sig2=sig2):
        V = float(np.sum(W ** 2 * sig2 / nk))
        n = int(nk.sum())
        if n not in tcrit:
            tcrit[n] = float(stats.t.ppf(1 - alpha / 2, max(n - K, 1)))
        width = 2 * tcrit[n] * np.sqrt(V)
        power = float(special.ndtr(delta / np.sqrt(V) - z) + special.ndtr(-delta / np.sqrt(V) - z))
        return V, width, power

    allocs: dict[int, np.ndarray] = {}

    def prop(n: int) -> np.ndarray:
        """The proportional allocation of n topics (the same for every resample)."""
        if n not in allocs:
            allocs[n] = _allocate(n, W)
        return allocs[n]

    def weighted(attr, comps=comps):
        return float(np.sum(W * np.array([getattr(c, attr) for c in comps])))

    wc = {"method": "W-weighted mean of per-stratum components", "var_s": weighted("var_s"),
          "var_t": weighted("var_t"), "var_e": weighted("var_e"), "grand_mean": weighted("grand_mean"),
          "truncated": sorted({t for c in comps for t in c.truncated})}
    for k in ("ms_s", "ms_t", "ms_e", "df_s", "df_t", "df_e"):
        wc[k] = None

    def erho(n):
        return wc["var_s"] / (wc["var_s"] + wc["var_e"] / n) if wc["var_s"] + wc["var_e"] > 0 else None

    def phi(n):
        tot = wc["var_s"] + (wc["var_t"] + wc["var_e"]) / n
        return wc["var_s"] / tot if tot > 0 else None

    def at(n):
        _, w_p, p_p = combo(_allocate(n, W))
        return {"n_topics": int(n), "ci_width_median": w_p, "power_mean": p_p, "erho2": erho(n), "phi": phi(n)}

    rows, extra, alloc = [], [], []
    for n in sc["topics"]:
        n_prop = _allocate(n, W)
        n_opt = _allocate(n, W * np.sqrt(sig2))
        _, w_p, p_p = combo(n_prop)
        _, w_o, p_o = combo(n_opt)
        w_u = 2 * stats.t.ppf(1 - alpha / 2, n - 1) * np.sqrt(float(np.sum(W * sig2)) / n)
        rows.append({"n_topics": n, "ci_width_median": w_p, "power_mean": p_p,
                     "erho2": erho(n), "phi": phi(n)})
        extra.append({"label": "optimal allocation", "n_topics": n, "ci_width_median": w_o, "power_mean": p_o})
        alloc.append({"n_topics": n, **{f"n_{lab}_proportional": int(v) for lab, v in zip(labels, n_prop)},
                      **{f"n_{lab}_optimal": int(v) for lab, v in zip(labels, n_opt)},
                      "width_proportional": w_p, "width_optimal": w_o, "width_uniform_lower_bound": w_u,
                      "power_proportional": p_p, "power_optimal": p_o})
    for lab, rk in zip(labels, rows_k):
        for r in rk:
            extra.append({"label": f"stratum {lab} alone", **r})
    def solve(t: str, v: float, sig2_k, comps_k) -> int | None:
        """The smallest n meeting target ``t`` with these per-stratum variances and fits."""
        if t in ("erho2", "phi"):
            vs_ = weighted("var_s", comps_k)
            num = weighted("var_e", comps_k) + (weighted("var_t", comps_k) if t == "phi" else 0.0)
            return int(np.ceil(v / (1 - v) * num / vs_)) if vs_ > 0 else None

        def ok(n):
            _, w, p = combo(prop(n), sig2_k)
            return w <= v if t == "ci_width" else p >= v
        # bisection, then the first n meeting it from a little below (allocation rounding can
        # make the criterion flicker near the answer)
        lo = max(2 * K, 2)
        n0 = smallest_n(ok, lo, 100_000)
        if n0 is None:
            return None
        return next(n for n in range(max(lo, n0 - 20), n0 + 1) if ok(n))

    kinds = [tg["target"] for tg in sc["targets"] if tg["target"] in _STACK_TARGETS]
    # the stack's topics, stratum by stratum: what two measures of the same stack share
    stack_key = hashlib.sha256("\0".join(f"{lab}\1{t}" for lab, tk in zip(labels, topics_k)
                                         for t in tk).encode()).hexdigest()
    ns_boot: dict[int, np.ndarray] = {}
    no_interval = None
    if kinds and any(x is None for x in mats):
        no_interval = "a stratum has missing cells (its resamples would need a REML fit each)"
    elif kinds:
        # topics resampled within each stratum (the weights W_k stay the design's), each
        # resample's per-stratum ANOVA fit re-solved: the same percentile interval as the
        # other scenarios' targets, from INTERVAL_RESAMPLES resamples. The stream is keyed on
        # the seed and the stack's topics, so two measures of the same stack draw the same
        # resamples and _paired_measures can compare their counts resample by resample
        boot = rng.spawn(1)[0] if seed is None else \
            np.random.default_rng([int(seed), int(stack_key[:15], 16), 2])
        got = {j: [] for j, tg in enumerate(sc["targets"]) if tg["target"] in _STACK_TARGETS}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for g in boot.spawn(INTERVAL_RESAMPLES):
                cb = [SimpleNamespace(**anova_components(x[:, g.integers(0, x.shape[1], x.shape[1])]))
                      for x in mats]
                s2b = np.array([2 * c.var_e for c in cb])
                for j in got:
                    tg = sc["targets"][j]
                    nb = solve(tg["target"], float(tg["value"]), s2b, cb)
                    got[j].append(np.inf if nb is None else nb)
        ns_boot = {j: np.array(v_, dtype=float) for j, v_ in got.items()}
    targets = []
    for j, tg in enumerate(sc["targets"]):
        t, v = tg["target"], float(tg["value"])
        row = {"target": t, "value": v, "n_topics": None, "lower": None, "upper": None}
        if t in _STACK_TARGETS:
            n_found = solve(t, v, sig2, comps)
            row["n_topics"] = n_found
            row["how"] = ("stratified, proportional allocation, pooled sigma_k^2 = 2 var_e,k per stratum"
                          if t in ("ci_width", "power") else
                          "D-study on the W-weighted components (not with the Feldt or Arteaga intervals, "
                          "which need one crossed design)")
            if no_interval:
                row["how"] += f"; no interval on n: {no_interval}"
            elif n_found is None:
                row["how"] += "; no interval on n (the target is not reached on the collection itself)"
            else:
                lo_, hi_ = interval_quantiles(ns_boot[j], 0.95)
                row.update(lower=int(lo_) if np.isfinite(lo_) else None,
                           upper=int(hi_) if np.isfinite(hi_) else None)
                if seed is not None:
                    row["_resampled_n"] = ns_boot[j]      # for _paired_measures; not written
                row["how"] += (f"; 95% interval on n: topic resampling within each stratum "
                               f"({INTERVAL_RESAMPLES} resamples, per-stratum ANOVA re-fit)")
        else:
            row["how"] = ("not available for stacked strata: pair rates need systems common to all "
                          "strata; see each stratum's own curve")
        targets.append(row)
    n_ans = _answer_n({"targets": targets, "pool": None})
    at_n = [at(n) for n in sorted({n for n in (n_ans, int(sum(Ts))) if n is not None})]
    return {
        "id": sc["id"], "name": sc["name"],
        "settings": {k: sc[k] for k in ("collection", "measure", "method", "variance", "min_diff",
                                        "strata", "filter", "topics", "alpha", "targets", "pool",
                                        "costs", "variants")},
        "data": {"source": " + ".join(str(d["source"]) for d in data), "measure": sc["measure"],
                 "n_systems": sum(d["n_systems"] for d in data), "n_topics": int(sum(Ts)),
                 "n_topics_before_filter": int(sum(Ts)), "n_variants": 1, "strata": labels,
                 "per_stratum": data},
        "inputs": inputs, "filtered": [],
        "components": wc, "erho2_at_T": erho(sum(Ts)), "phi_at_T": phi(sum(Ts)),
        "strata": {"weights": dict(zip(labels, W.tolist())),
                   "sigma2": dict(zip(labels, sig2.tolist())),
                   "components": {lab: {"var_s": c.var_s, "var_t": c.var_t, "var_e": c.var_e,
                                        "n_topics": c.n_topics, "grand_mean": c.grand_mean}
                                  for lab, c in zip(labels, comps)}},
        "curve": {"method": f"stratified ({sc['method']} per stratum)", "variance": "pooled per stratum",
                  "rows": rows},
        "extra_curves": extra, "allocation": alloc,
        "targets": targets, "at_n": at_n, "variants": None,
        "honest": honest_k[0], "honest_strata": honest_k, "pool": None, "warnings": [],
        "_topics_key": stack_key if seed is not None else None,
    }


def _run_scenario(sc: dict, rng, resamples: int, seed: int | None = None) -> dict:
    """Everything for one scenario: scores, filter, fit, curve, targets, variants, honest
    statement, pool study; returns plain data (picklable, JSON-able after :func:`jsonable`)."""
    if "stack" in sc["collection"]:
        with warnings.catch_warnings(record=True) as wlist:
            warnings.simplefilter("always")
            out = _run_stacked(sc, rng, resamples, seed)
        out["warnings"] = list(dict.fromkeys(f"{sc['id']}: {w.message}" for w in wlist))
        return out

    caught: list[str] = []
    out: dict[str, Any] = {"id": sc["id"], "name": sc["name"]}
    with warnings.catch_warnings(record=True) as wlist:
        warnings.simplefilter("always")
        r_pred, r_honest, r_extra = rng.spawn(3)
        replay = _replay(r_pred)
        key = "collection"
        m, inputs = _load_scores(sc["collection"], sc["measure"], key)
        # the measure's label: the one asked for, else the file's own, else neutral
        sc = {**sc, "measure": sc["measure"] or m.measure or "score"}
        m3 = m if m.has_variants else None
        if sc["variants"] and m3 is None:
            raise ConfigError("has no effect: these scores have no query variants (give "
                              "collection.variant_divisor, or a tidy file with a variant column)",
                              key="variants")
        m2 = m.collapse_variants() if m.has_variants else m
        m2, dropped = _apply_filter(m2, sc["filter"])
        if sc["strata"] == "stratified" and m2.strata is None:
            raise ConfigError("'stratified' needs topic strata: give collection.strata (a topic metadata "
                              "file or a mapping topic -> stratum)", key="strata")
        from .variance import fit

        comp = fit(m2)
        from .simulate import predict

        pkw = dict(method=sc["method"], variance=sc["variance"] if sc["method"] == "analytic" else None,
                   min_diff=sc["min_diff"], alpha=sc["alpha"], resamples=resamples, strata=sc["strata"])
        curve = predict(m2, topics=sc["topics"], rng=r_pred, **pkw)
        rows = [dict(r) for r in curve.rows]
        comp_d = comp.to_dict()

        def fill(r):
            if r.get("erho2") is None:
                r["erho2"] = float(comp.erho2(r["n_topics"]))
            if r.get("phi") is None:
                r["phi"] = float(comp.phi(r["n_topics"]))
            return r

        for r in rows:
            fill(r)
        # the method evaluated at any single n, with the stream it has there on the curve
        evaluated: dict[int, dict | None] = {int(r["n_topics"]): r for r in rows}

        def at(n: int) -> dict | None:
            n = int(n)
            if n not in evaluated:
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")      # the curve's warnings say it already
                        evaluated[n] = fill(dict(predict(m2, topics=[n], rng=replay(), **pkw).rows[0]))
                except PlannerError:
                    evaluated[n] = None
            return evaluated[n]
        try:   # D-study intervals (Feldt for Erho2, Arteaga-Jeyaratnam-Franklin for Phi): plot bands
            ds = {int(d["n_topics"]): d for d in comp.dstudy(sc["topics"], alpha=sc["alpha"]).rows}
            for r in rows:
                d = ds.get(int(r["n_topics"]))
                if d is not None:
                    r.update(erho2_lo=d["erho2_lower"], erho2_hi=d["erho2_upper"],
                             phi_lo=d["phi_lower"], phi_hi=d["phi_upper"])
        except PlannerError:
            pass
        targets = []
        # every target's interval on n resamples the same topics (common random numbers), so
        # equivalent targets (swap_rate v and kendall_tau 1 - 2v) get the same interval and the
        # intervals of different targets are comparable
        # and the resamples depend only on the seed and the topic list, so scenarios on the same
        # topics (other measures, methods) share them: _paired_measures compares them pairwise
        target_base = _topics_stream(seed, m2, r_extra.spawn(1)[0])
        target_streams = [copy.deepcopy(target_base) for _ in sc["targets"]]
        for j, tg in enumerate(sc["targets"]):
            t, v = tg["target"], float(tg["value"])
            row = {"target": t, "value": v, "n_topics": None, "lower": None, "upper": None, "how": ""}
            try:
                if t in ("erho2", "phi"):
                    tn = comp.topics_for(**{t: v}, alpha=sc["alpha"])
                    row.update(n_topics=tn.n_topics, lower=tn.lower, upper=tn.upper,
                               how=f"D-study ({t}), {100 * (1 - sc['alpha']):g}% interval on n")
                elif t in ("power", "ci_width"):
                    # the classical design with the planning variance, and an interval on n from the
                    # same topic resamples as the other targets (the variance re-estimated on each)
                    ts_seed = int(copy.deepcopy(target_base).integers(0, 2 ** 31))
                    kw = (dict(design="paired-t", min_diff=sc["min_diff"], power=v) if t == "power"
                          else dict(design="ci", width=v))
                    sr = _size(m2, variance_selector=sc["variance"], alpha=sc["alpha"],
                               resamples=INTERVAL_RESAMPLES, rng=ts_seed, **kw)
                    what = (f"paired t-test at min_diff {sc['min_diff']:g}" if t == "power" else
                            f"expected {100 * (1 - sc['alpha']):g}% interval width")
                    row.update(n_topics=sr.n_topics, lower=sr.n_lower, upper=sr.n_upper,
                               how=f"{what}, variance {sr.variance}"
                                   + (f"; 95% interval on n: {sr.interval_method}" if sr.interval_method else ""))
                    if t == "power":
                        row.update(sigma2=float(sr.sigma2), variance=sr.variance)
                    row["curve_n_topics"] = _solve_exact(rows, t, v, at)["n_topics"]
                elif sc["method"] in _CLOSED_FORM:
                    # exact smallest n by bisection, and a 95% interval on n from
                    # INTERVAL_RESAMPLES topic resamples, each re-solved with the same method
                    from .plan import size_for_target

                    nres = INTERVAL_RESAMPLES
                    with warnings.catch_warnings():
                        # the curve has already said that identical pairs count as ties
                        warnings.filterwarnings("ignore", message=".*identical on every topic: each counts as a tie in the",
                                                category=DegenerateDataWarning)
                        tr = size_for_target(m2, target=t, value=v, method=sc["method"],
                                             variance=sc["variance"] if sc["method"] == "analytic" else "pair",
                                             min_diff=sc["min_diff"], alpha=sc["alpha"], resamples=nres,
                                             rng=target_streams[j])
                    row.update(n_topics=tr.n_topics, lower=tr.lower, upper=tr.upper,
                               how=f"{sc['method']}: smallest n meeting the target (plan.size_for_target)"
                                   + f"; 95% interval on n: {tr.interval_method}")
                    if tr.identical_pairs:
                        # identical runs are permanent ties (swap 0.5 at every n): what the target
                        # needs with one run of each identical group kept
                        groups = m2.identical_systems()
                        drop = {name for g in groups for name in g[1:]}
                        keep = [x for x in m2.systems if x not in drop]
                        if len(keep) >= 2:
                            with warnings.catch_warnings():
                                warnings.simplefilter("ignore")
                                tr2 = size_for_target(m2.take(systems=keep), target=t, value=v,
                                                      method=sc["method"],
                                                      variance=sc["variance"] if sc["method"] == "analytic"
                                                      else "pair", min_diff=sc["min_diff"], alpha=sc["alpha"],
                                                      resamples=nres, rng=copy.deepcopy(target_base))
                            # the same topic resamples as the count with the duplicates (the
                            # stream depends on the seed and the topic list, not on the systems)
                            row.update(identical_pairs=int(tr.identical_pairs),
                                       duplicate_runs=sorted(drop), n_without_duplicates=tr2.n_topics,
                                       n_without_duplicates_lower=tr2.lower,
                                       n_without_duplicates_upper=tr2.upper)
                    if tr.resampled_n is not None and seed is not None:
                        row["_resampled_n"] = tr.resampled_n     # for _paired_measures; not written
                    row["curve_n_topics"] = _solve_exact(rows, t, v, at)["n_topics"]
                else:
                    sol = _solve_exact(rows, t, v, at)
                    row.update(n_topics=sol["n_topics"], how=f"{sc['method']}: {sol['how']}"
                               + ("; no interval on n (it would re-run the simulation on every topic "
                                  "resample)" if sol["n_topics"] is not None else ""))
                    if sol["interpolated"]:
                        row.update(interpolated=True, bracket=sol["bracket"])
            except PlannerError as exc:
                row["how"] = f"not computed: {exc}"
            top = max(sc["topics"])
            if row["n_topics"] is not None and np.isfinite(row["n_topics"]) and row["n_topics"] > top:
                # closed forms solve at any n; the curves (and figures) stop at the largest count
                row["how"] += (f"; beyond the largest studied count ({top}): from the formula, not on the "
                               "curves")
            # topic counts are integers everywhere (the D-study's came as floats: 32.0); an
            # infinite one is None
            for k in ("n_topics", "lower", "upper", "curve_n_topics"):
                v = row.get(k)
                if v is not None:
                    row[k] = int(v) if np.isfinite(v) else None
            targets.append(row)
        variants = None
        if m3 is not None:
            from .variance import fit_variants

            if tuple(m3.topics) != tuple(m2.topics):      # the filter's topics
                m3 = m3.take(topics=list(m2.topics))
            vc = fit_variants(m3)
            nv = sc["variants"] or list(range(1, m3.n_variants + 1))
            vds = vc.dstudy(sc["topics"], nv)
            variants = {"components": vc.to_dict(), "dstudy": vds.to_dict()["rows"],
                        "targets": _variant_targets(m3, sc, nv, target_base)}
        honest = _honest(m2, _data_stream(seed, m2, r_honest), resamples, sc["alpha"])
        honest["judged_share"] = _judged_share(sc["collection"], sc["measure"])
        pool = None
        if sc["pool"] is not None:
            pool = _pool_study(sc)
        # the answer's statistics, computed AT its topic count and at the collection's own
        n_ans = _answer_n({"targets": targets, "pool": pool})
        n_budget = None
        if pool and pool.get("choice") and sc["costs"].get("budget") and pool["choice"]["cost_per_topic"]:
            # what the whole budget buys at the chosen depth, next to what the targets need
            n_budget = int(math.floor(float(sc["costs"]["budget"]) / pool["choice"]["cost_per_topic"] + 1e-9))
            pool["budget_topics"] = n_budget
        at_n = []
        for n in sorted({n for n in (n_ans, m2.n_topics, n_budget) if n is not None}):
            r = at(n) if n <= MAX_TOPICS else None
            at_n.append(r if r is not None else {"n_topics": int(n), "not_computed": True,
                                                  "erho2": float(comp.erho2(n)), "phi": float(comp.phi(n))})
        strata_info = None
        if m2.strata is not None and comp.strata:
            strata_info = {"weights": comp_d.get("weights"),
                           "components": {k: {kk: v[kk] for kk in ("var_s", "var_t", "var_e", "n_topics",
                                                                   "grand_mean")}
                                          for k, v in comp_d["strata"].items()}}
    for w in wlist:
        msg = f"{sc['id']}: {w.message}"
        if msg not in caught:
            caught.append(msg)
    cd = curve.to_dict() if hasattr(curve, "to_dict") else {}
    out.update({
        "settings": {k: sc[k] for k in ("collection", "measure", "method", "variance", "min_diff",
                                        "strata", "filter", "topics", "alpha", "targets", "pool",
                                        "costs", "variants")},
        "data": {"source": m.source, "measure": m2.measure or sc["measure"], "n_systems": m2.n_systems,
                 "n_topics": m2.n_topics, "n_topics_before_filter": m.n_topics,
                 "n_variants": m.n_variants, "strata": list(m2.stratum_labels()) or None},
        "inputs": inputs,
        "filtered": dropped,
        "components": {k: comp_d[k] for k in ("method", "var_s", "var_t", "var_e", "ms_s", "ms_t", "ms_e",
                                              "df_s", "df_t", "df_e", "grand_mean", "truncated")},
        "erho2_at_T": float(comp.erho2(m2.n_topics)), "phi_at_T": float(comp.phi(m2.n_topics)),
        "strata": strata_info,
        "curve": {"method": cd.get("method", sc["method"]), "variance": cd.get("variance", sc["variance"]),
                  "rows": rows},
        "targets": targets,
        "at_n": at_n,
        "variants": variants,
        "honest": honest,
        "pool": pool,
        "warnings": caught,
        "_topics_key": _topics_key(m2),
    })
    return out


def _pool_study(sc: dict) -> dict:
    """Pool depth against topics (:func:`planner.plan.pool_depth_study`): for each depth k
    the runs are re-scored with judgments restricted to the depth-k pool; reported are
    judgments per topic, Kendall tau against the full judgments, the components and the
    topics every target of the scenario needs (the largest count), solved with the scenario's
    method when it has a closed form (analytic or pilot-aware), else analytically. The
    choice is the cheapest total cost among depths with tau >= ``pool.tau_min`` (and within
    ``costs.budget`` when given)."""
    from .plan import pool_depth_study

    coll = sc["collection"]
    runs, qrels = _load_runs_qrels(coll)
    tgs = sc["targets"] or [{"target": "swap_rate", "value": 0.05}]
    costs = sc["costs"]
    tau_min = float(sc["pool"].get("tau_min", 0.9))
    method = sc["method"] if sc["method"] in _CLOSED_FORM else "analytic"
    ds = pool_depth_study(runs, qrels, depths=sorted(sc["pool"]["depths"]), measure=sc["measure"],
                          pool_runs=coll.get("pool_runs"),
                          targets=[(t["target"], float(t["value"])) for t in tgs], method=method,
                          variance=sc["variance"] if method == "analytic" else "pair",
                          min_diff=sc["min_diff"], alpha=sc["alpha"],
                          topic_cost=costs["topic"], judgment_cost=costs["judgment"], tau_min=tau_min,
                          resamples=0)
    tnames = "; ".join(f"{t['target']} {float(t['value']):g}" for t in tgs)
    rows = [dict(r) for r in ds.rows]
    ok = [r for r in rows if r.get("tau_ok") and r.get("total_cost") is not None
          and (costs.get("budget") is None or r["total_cost"] <= costs["budget"])]
    choice = min(ok, key=lambda r: (r["total_cost"], -r["depth"])) if ok else None
    if choice is not None:
        reason = (f"cheapest total cost among depths with Kendall tau >= {tau_min:g} against the full "
                  "judgments" + (f" within the budget {costs['budget']:g}" if costs.get("budget") else ""))
    else:
        tau_ok = [r for r in rows if r.get("tau_ok")]
        solved = [r for r in tau_ok if r.get("total_cost") is not None]
        if not tau_ok:
            best = max(rows, key=lambda r: r["kendall_tau_vs_full"] if _finite(r.get("kendall_tau_vs_full"))
                       else -2.0)
            reason = (f"no depth reaches Kendall tau >= {tau_min:g} against the full judgments (highest: "
                      f"{best.get('kendall_tau_vs_full', float('nan')):.3f} at depth {best['depth']})")
        elif not solved:
            reason = (f"the targets ({tnames}) are not all reached at any depth with "
                      f"Kendall tau >= {tau_min:g}")
        else:
            cheap = min(solved, key=lambda r: r["total_cost"])
            reason = (f"every depth with Kendall tau >= {tau_min:g} that reaches the targets costs more "
                      f"than the budget {costs['budget']:g} (cheapest: depth {cheap['depth']}, "
                      f"{cheap['total_cost']:.0f})")
    return {"targets": [dict(t) for t in tgs], "method": method, "tau_min": tau_min, "depths": rows,
            "full": dict(ds.full),
            "choice": choice, "reason": reason, "pool_runs": len(ds.pool_runs), "n_runs": ds.n_runs,
            "note": "cost per topic = topic cost + judgments per topic x judgment cost; judgments per "
                    "topic = mean over topics of distinct documents in the union of the pooled runs' top k"}


def _finite(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and bool(np.isfinite(v))


def _answer_n(s: Mapping) -> int | None:
    """The topic count the answer speaks about: the pool study's at its chosen depth, else
    the largest over the targets (all reached), else the largest over the reached ones."""
    pool = s.get("pool")
    if pool and pool.get("choice") and pool["choice"].get("n_topics_needed") is not None:
        return int(pool["choice"]["n_topics_needed"])
    need = _scenario_need(s)
    if need is not None:
        return need
    reached = [t["n_topics"] for t in s["targets"] if t["n_topics"] is not None]
    return int(max(reached)) if reached else None


def _scenario_need(s: dict) -> int | None:
    """Topics the scenario needs: the largest over its targets (None if one is not reached)."""
    ns = [t["n_topics"] for t in s["targets"]]
    if not ns or any(n is None for n in ns):
        return None
    return int(max(ns))


def _answer(scens: list[dict], paired: list[dict] | None = None) -> dict:
    s0 = scens[0]
    need = _scenario_need(s0)
    reached = [t["n_topics"] for t in s0["targets"] if t["n_topics"] is not None]
    missing = [t for t in s0["targets"] if t["n_topics"] is None]
    pool = s0.get("pool")
    depth = pool["choice"]["depth"] if pool and pool.get("choice") else None
    if pool and pool.get("choice"):
        need = pool["choice"]["n_topics_needed"]
    def _target_txt(t):
        txt = f"{t['target']} {'<=' if t['target'] in _DECREASING else '>='} {t['value']:g}"
        if t["target"] == "power" and t.get("variance"):
            # a study's power target is the classical design's (one pair with the planning
            # variance), not the mean power over pairs of planner size --target power
            txt += (f" (a paired t-test at alpha {s0['settings']['alpha']:g} detects a true difference of "
                    f"{s0['settings']['min_diff']:g} with this probability for a pair with the planning "
                    f"variance of per-topic differences, {t['variance']})")
        return txt
    targets_txt = "; ".join(_target_txt(t) for t in s0["targets"])
    n_show = need if need is not None else (int(max(reached)) if reached else None)
    if n_show is None:
        text = (f"Scenario **{s0['name']}**: no target ({targets_txt}) is reached within the topic "
                f"counts studied (up to {max(s0['settings']['topics'])}); study larger topic counts "
                "or relax the targets.")
    elif need is None:
        at_show = {int(r["n_topics"]): r for r in s0.get("at_n") or []}.get(int(n_show), {})

        def why(t):
            # the target's own reason (its `how`), and whether the count shown meets it anyway
            col = _DECREASING.get(t["target"]) or _INCREASING[t["target"]]
            v = at_show.get(col)
            met = (v is not None and _finite(v)
                   and (v <= t["value"] if t["target"] in _DECREASING else v >= t["value"]))
            return (f"{t['target']} {t['value']:g} ({t.get('how') or 'not reached'}"
                    + (f"; at {n_show} topics it is {v:.3g}, which meets it: study topic counts up to "
                       f"{n_show} to find the smallest n" if met else "") + ")")
        text = (f"Choose **at least {n_show} topics** (scenario **{s0['name']}**; targets: {targets_txt}): "
                f"that is what the reached targets need, but " + "; ".join(why(t) for t in missing)
                + (" is" if len(missing) == 1 else " are") + " not solved.")
    elif pool and not pool.get("choice"):
        text = (f"**No pool depth meets the targets** ({targets_txt}; scenario **{s0['name']}**): "
                f"{pool['reason']}. With the full judgments the targets need {n_show} topics "
                "(tables/pool.csv lists every depth).")
    else:
        text = (f"Choose **{need} topics**" + (f" judged to **depth {depth}**" if depth else "")
                + f" (scenario **{s0['name']}**; targets: {targets_txt}).")
        full = (pool.get("full") or {}).get("n_topics_needed") if depth else None
        if depth and full is not None:
            text += (f" That count meets every target with the scores re-computed from depth-{depth} "
                     f"judgments (method {pool['method']}); with the full judgments the same targets "
                     + ("need the same count." if full == need else f"need {full}."))
        thin = [r for r in (pool or {}).get("depths") or []
                if r.get("pool_judged_share") is not None and r["pool_judged_share"] < 0.9]
        if depth and thin:
            r0 = min(thin, key=lambda r: r["depth"])
            shares = ", ".join(f"{r['pool_judged_share']:.0%} at depth {r['depth']}"
                               for r in sorted(thin, key=lambda r: r["depth"]))
            text += (f" The existing judgments cover only part of the deeper pools ({shares} is judged), so the Kendall tau of those depths shows the "
                     "judgments already made, not what a deeper pool would find; the depth comparison holds "
                     "for these judgments only.")
        binding = max((t for t in s0["targets"] if t["n_topics"] is not None), key=lambda t: t["n_topics"])
        dup_note = ""
        if binding.get("identical_pairs") and binding.get("n_without_duplicates") is not None:
            meas = s0["settings"]["measure"] or "this measure"
            dup_note = (f" {binding['identical_pairs']} pair(s) of systems score the same on every topic "
                        f"under {meas} (duplicate runs, or runs this measure cannot tell apart), each a tie "
                        f"that keeps a swap and reversal rate of 0.5 at any topic count; with one run of "
                        f"each such group ({len(binding['duplicate_runs'])} run(s) left out, with all "
                        f"their pairs) the target needs {binding['n_without_duplicates']} topics"
                        + (f" (95% interval on n: {int(binding['n_without_duplicates_lower'])} to "
                           f"{int(binding['n_without_duplicates_upper'])})"
                           if binding.get("n_without_duplicates_lower") is not None
                           and binding.get("n_without_duplicates_upper") is not None else "") + ".")
        if not depth:
            text += f" The binding target is {binding['target']} {binding['value']:g}"
            if binding.get("lower") is not None and binding.get("upper") is not None:
                text += (f" (95% interval on n: {int(binding['lower'])} to {int(binding['upper'])}, "
                         "from the uncertainty of the collection's own estimates)")
                T0 = s0["data"].get("n_topics") or 0
                if T0 and "topic resampling" in str(binding.get("how", "")) and binding["n_topics"] >= 1.5 * T0:
                    text += (f"; a count {binding['n_topics'] / T0:.1f} times the collection's {T0} topics "
                             "tends to run low, interval included (see 'Intervals on n' in the honest "
                             "statement)")
            text += "."
        text += dup_note
    top = max(s0["settings"]["topics"])
    if n_show is not None and n_show > top and not (pool and pool.get("choice")):
        text += (f" That count is beyond the largest topic count studied ({top}): it comes from the "
                 f"method's formula, and the curves and figures stop at {top} (add larger counts to "
                 "`topics` to see them).")
    nv = s0["data"].get("n_variants") or 1
    if n_show is not None and nv > 1:
        text += f" Each topic counts with its {nv} query variants, averaged, as in the collection"
        bt = _binding(s0)
        vrows = [r for r in (s0.get("variants") or {}).get("targets") or []
                 if bt is not None and r["target"] == bt["target"] and r["value"] == bt["value"]
                 and r.get("n_variants") is not None]
        filtered = (s0["data"].get("n_topics_before_filter") or 0) > (s0["data"].get("n_topics") or 0)
        if vrows:
            parts = [f"{r['n_variants']} variant{'s' if r['n_variants'] > 1 else ''}: "
                     + (f"{r['n_topics']} topics"
                        + (f" [{r['lower']}, {'-' if r.get('upper') is None else r['upper']}]"
                           if r.get("lower") is not None else "")
                        + f" ({r['queries']} query formulations)" if r["n_topics"] is not None
                        else "not reached") for r in vrows]
            ivl = any(r.get("lower") is not None for r in vrows)
            more = [r["n_variants"] for r in vrows if r["n_variants"] > nv]
            T0 = s0["data"].get("n_topics") or 0
            far = max((r["n_topics"] for r in vrows if r["n_topics"] is not None), default=None)
            dups = [r.get("n_without_duplicates") for r in vrows]
            text += (f"; with v variants per topic, {bt['target']} {bt['value']:g} needs {'; '.join(parts)} "
                     f"(method {vrows[0]['method']}, the variant part of each pair's variance scaled by 1/v; "
                     + ("95% intervals on n from the scenario's topic resamples" if ivl else "no interval on n")
                     + ("; every run counted, the tied pairs included: with one run of each tied group "
                        + " / ".join("-" if d is None else str(d) for d in dups) + " topics"
                        if "n_without_duplicates" in vrows[0] else "")
                     + (f"; the largest, {far}, is {far / T0:.1f} times the collection's {T0} topics, and "
                        "counts this far out tend to run low (see 'Intervals on n')"
                        if far is not None and T0 and far >= 1.5 * T0 else "")
                     + (f"; more than the collection's {nv} variants extrapolates the model" if more else "")
                     + ("; informative topics, before scaling up to the topics to build" if filtered else "")
                     + ").")
            priced = [r for r in vrows if r.get("cost") is not None]
            if priced:
                best = min(priced, key=lambda r: (r["cost"], r["n_variants"]))
                c = s0["settings"]["costs"]
                text += (f" At {c['topic']:g} per topic and {c['variant']:g} per variant, the cheapest is "
                         f"{best['n_variants']} variant{'s' if best['n_variants'] > 1 else ''} per topic: "
                         f"{best['n_topics']} topics, cost {best['cost']:.6g}"
                         + (f" (with the collection's {nv}: cost "
                            f"{next((r['cost'] for r in priced if r['n_variants'] == nv), float('nan')):.6g})"
                            if any(r["n_variants"] == nv for r in priced) and best["n_variants"] != nv else "")
                         + ".")
            else:
                text += (" Fewer variants need fewer query formulations but more topics to judge; costs are "
                         "not included (a topic and a variant both cost 0; give costs: {topic: ..., variant: "
                         "...} to compare them).")
            text += (" The table 'Topics against query variants' has every ranking target, and Erho2 "
                     "and Phi from the D-study.")
        else:
            ranked = sorted({r["target"] for r in (s0.get("variants") or {}).get("targets") or []
                             if r.get("n_variants") is not None})
            text += ("; the table 'Topics against query variants' trades topics against variants per topic "
                     + (f"for {', '.join(ranked)} and " if ranked else "for ")
                     + "Erho2 and Phi (the D-study).")
    for t in s0["targets"]:
        if t.get("interpolated") and t.get("bracket"):
            text += (f" The count for {t['target']} {t['value']:g} is interpolated between the studied "
                     f"counts {t['bracket'][0]} and {t['bracket'][1]} (the method cannot be evaluated "
                     "between them), not computed.")
    buys: list[str] = []
    if n_show is not None:
        at_n = {int(r["n_topics"]): r for r in s0.get("at_n") or []}
        stacked = "stack" in s0["settings"]["collection"]
        ci_lab = (f"{100 * (1 - s0['settings']['alpha']):g}% interval width of a pair's stratified mean "
                  "difference (pooled variance per stratum, proportional allocation)" if stacked else
                  f"median {100 * (1 - s0['settings']['alpha']):g}% interval width of a pair's mean difference")
        pw_lab = (f"power at min_diff {s0['settings']['min_diff']:g} (normal approximation, stratified)"
                  if stacked else f"mean power over pairs of the paired t-test at min_diff "
                  f"{s0['settings']['min_diff']:g}")
        for col, lab in (("ci_width_median", ci_lab),
                         ("swap_rate_mean", "mean swap rate over system pairs"),
                         ("reversal_rate_mean", "mean reversal rate over system pairs"
                          + (" (against the collection's order, counting the chance that this order is "
                             "itself wrong, so it levels off as n grows; the honest statement's bootstrap "
                             "rate treats the order as given)" if str(s0["settings"]["method"]).startswith(
                                 "predictive") else "")),
                         ("kendall_tau_mean", "expected Kendall tau between two topic sets' rankings"),
                         ("power_mean", pw_lab)):
            v = (at_n.get(n_show) or {}).get(col)
            if _finite(v):
                extra = ""
                if col == "ci_width_median":
                    # the width is the whole interval: a pair's difference is pinned down to +- half
                    md = s0["settings"]["min_diff"]
                    extra = (f" (a pair's difference known to +-{v / 2:.3f}, "
                             + ("below" if v / 2 < md else "not below") + f" min_diff {md:g})")
                buys.append(f"{lab}: {v:.3f}{extra}")
        for t in s0["targets"]:
            if t["target"] == "power" and _finite(t.get("sigma2")):
                # the power target's own definition: one pair with the planning variance
                from .plan import design_power

                p = float(design_power("paired-t", n_show, s0["settings"]["min_diff"], t["sigma2"],
                                       alpha=s0["settings"]["alpha"]))
                buys.append(f"power of the paired t-test at min_diff {s0['settings']['min_diff']:g} for a "
                            f"pair with the planning variance ({t['variance']}, {t['sigma2']:.4g}; what "
                            f"the power target is solved on): {p:.3f}")
        if stacked and s0.get("strata"):
            labs = list(s0["strata"]["weights"])
            W = np.array([s0["strata"]["weights"][k] for k in labs])
            sig = np.sqrt(np.array([s0["strata"]["sigma2"][k] for k in labs]))
            prop, opt = _allocate(n_show, W), _allocate(n_show, W * sig)
            buys.append("split: proportional " + ", ".join(f"{k} {int(v)}" for k, v in zip(labs, prop))
                        + "; Neyman-optimal " + ", ".join(f"{k} {int(v)}" for k, v in zip(labs, opt)))
        buys.append(f"Erho2 = {_erho(s0, n_show):.3f}, Phi = {_phi(s0, n_show):.3f} (D-study)")
        T = s0["data"]["n_topics"]
        today = [(lab, (at_n.get(T) or {}).get(col)) for col, lab in (("ci_width_median", "interval width"),
                                                                     ("swap_rate_mean", "swap rate"),
                                                                     ("kendall_tau_mean", "Kendall tau"),
                                                                     ("power_mean", "power"))]
        today = [f"{lab} {v:.3f}" for lab, v in today if _finite(v)]
        if today and n_show != T:
            buys.append(f"for comparison, at the collection's own {T} topics: " + ", ".join(today))
        missing_at = [n for n in sorted({n_show, T}) if n in at_n and (
            at_n[n].get("not_computed") or (not stacked and not _finite(at_n[n].get("swap_rate_mean"))))]
        method = s0["settings"]["method"]
        for n in missing_at:
            if at_n[n].get("not_computed"):
                buys.append(f"the curve statistics cannot be computed at {n} topics (above the "
                            f"{MAX_TOPICS:,} topics planner simulates)")
            elif method == "subsample":
                buys.append(f"subsample draws two disjoint topic sets from the collection's {T} topics, "
                            f"so its statistics exist only up to {T // 2} topics, not at {n}")
        if depth and pool:
            ch = pool["choice"]
            cst = s0["settings"].get("costs") or {}
            buys.append(f"about {ch['judgments_per_topic']:.0f} judgments per topic, "
                        f"{ch['n_topics_needed'] * ch['judgments_per_topic']:.0f} in all; total cost "
                        f"{ch['total_cost']:.0f} ({cst.get('topic', 0):g} per topic created + "
                        f"{cst.get('judgment', 1):g} per judgment); ranking Kendall tau "
                        f"{ch['kendall_tau_vs_full']:.3f} against the full judgments")
            buys.append("the rates above are from the full judgments; the pool study re-scores at "
                        "each depth (tables/pool.csv)")
            buys.append(f"depth chosen by the pool study of every target (method {pool['method']}): "
                        f"{pool['reason']}")
            nb = pool.get("budget_topics")
            if nb is not None and nb > n_show:
                rb = at_n.get(nb) or {}
                stats_b = [f"{lab} {rb[col]:.3f}" for col, lab in (("swap_rate_mean", "swap rate"),
                                                                   ("kendall_tau_mean", "Kendall tau"),
                                                                   ("power_mean", "mean power"))
                           if _finite(rb.get(col))]
                budget = float(s0["settings"]["costs"]["budget"])
                buys.append(f"the whole budget {budget:g} would buy {nb} topics at depth {depth} "
                            f"({budget - ch['total_cost']:.0f} is left after the {n_show} chosen)"
                            + (": " + ", ".join(stats_b) if stats_b else ""))
        random = "" if stacked or method in _CLOSED_FORM else (
            "; the resamples at each count use the random stream that count has on the scenario's curve")
        buys.append(f"(every figure above is computed at exactly that topic count, not interpolated "
                    f"along the curve; method {s0['curve']['method']}, variance {s0['curve']['variance']}"
                    f"{random})")
    said = None                    # the paired comparison already given for the extremes
    if len(scens) > 1:
        text += (f" The answer speaks for the first scenario of the grid ({s0['name']}); list the "
                 "settings you plan with first.")
        per = [(s["name"], _scenario_need(s)) for s in scens]
        reach = [p for p in per if p[1] is not None]
        if reach:
            lo = min(reach, key=lambda p: p[1])
            hi = max(reach, key=lambda p: p[1])
            if lo[1] == hi[1]:
                text += f" Every scenario that reaches its targets needs {lo[1]} topics"
                bts = {(_binding(s) or {}).get("target") for s in scens if _scenario_need(s) is not None}
                if bts <= {"power", "ci_width", "erho2", "phi"} and len({s["settings"]["method"] for s in scens}) > 1:
                    # the grid's methods cannot differ there: that target's formula has no method
                    text += (f", because the binding target ({', '.join(sorted(bts))}) is solved by the "
                             "same formula whatever the method; the methods differ only on the other targets "
                             "(the table 'Topics needed')")
                text += "."
            else:
                which = (f"{len(scens)} scenarios" if len(reach) == len(per) else
                         f"{len(reach)} of the {len(scens)} scenarios that reach every target")
                full = " with the full judgments" if depth else ""
                text += (f" Across the {which} the topics needed{full} range from {lo[1]} ({lo[0]}) to "
                         f"{hi[1]} ({hi[0]}).")
                trip = [(s["name"], _scenario_need(s), _to_build(s)) for s in scens if _to_build(s) is not None]
                if any(b != n for _, n, b in trip):
                    # a filter keeps a share of the topics: the needed ones are counted after it,
                    # but a new collection must create more (the topics_to_build column)
                    blo = min(((x, b) for x, _, b in trip), key=lambda p: p[1])
                    bhi = max(((x, b) for x, _, b in trip), key=lambda p: p[1])
                    text += (f" Filters count the topics kept after filtering; counted as topics to "
                             f"create (topics_to_build), the range is {blo[1]} ({blo[0]}) to {bhi[1]} "
                             f"({bhi[0]}).")
                bounds = {s["name"]: _binding_interval(s) for s in scens}
                a_, b_ = bounds.get(lo[0]), bounds.get(hi[0])
                pr = _paired_row(paired or [], scens, lo[0], hi[0])
                if a_ and b_ and pr is not None:
                    said = pr
                    # measures on the same topics: the paired interval is the verdict; the two
                    # intervals on n can overlap while it excludes 0
                    text += (f" Their 95% intervals on n are [{a_[0]}, {a_[1]}] and [{b_[0]}, {b_[1]}]; "
                             f"paired over the same {pr['resamples']} topic resamples, the difference "
                             f"({_signed(hi[1] - lo[1])}, 95% interval [{_signed(_bound(pr['extra_lower'], -1))}, "
                             f"{_signed(_bound(pr['extra_upper'], 1))}]) "
                             + ("is larger than the uncertainty of the collection's own estimates."
                                if pr["verdict"] in ("separated", "reversed") else
                                "is within the uncertainty of the collection's own estimates."))
                elif a_ and b_:
                    # a rough verdict on the comparison the grid asks for: overlapping intervals do
                    # not prove that a difference is noise, and two scenarios that differ in several
                    # settings do not say which one matters
                    by = {s["name"]: s for s in scens}
                    diff = [k for k in ("collection", "measure", "method", "variance", "min_diff", "strata",
                                        "filter") if by[lo[0]]["settings"][k] != by[hi[0]]["settings"][k]]
                    text += (f" Their 95% intervals on n ([{a_[0]}, {a_[1]}] and [{b_[0]}, {b_[1]}]) "
                             + ("overlap, a rough sign that the difference may be within the uncertainty of "
                                "the estimates (overlap is not a test)" if a_[1] >= b_[0] else
                                "do not overlap: the difference is larger than the uncertainty of the "
                                "estimates")
                             + (f"; the two differ in {', '.join(diff[:-1])} and {diff[-1]}, so this does "
                                "not say which setting matters." if len(diff) > 1 else "."))
            if len(reach) < len(per):
                text += f" {len(per) - len(reach)} scenario(s) do not reach all targets."
        if depth:
            text += _pool_others(s0, scens, depth)
        ts0 = [t for t in s0["targets"] if t["n_topics"] is not None]
        if paired and ts0 and need is not None:
            text += _paired_sentence(s0, max(ts0, key=lambda t: t["n_topics"]),
                                     [r for r in paired if r is not said])
    if buys:
        text += f" What {n_show} topics buy (scenario {s0['name']}):"
    return {"scenario": s0["id"], "n_topics": need, "depth": depth, "text": text, "buys": buys}


#: targets the variant trade-off answers in a study (power and width come from the classical
#: designs there, which have no variant model)
_VARIANT_TARGETS = ("swap_rate", "reversal_rate", "kendall_tau")


def _variant_targets(m3, sc: Mapping, nv, stream=None) -> list[dict]:
    """Topics each ranking target needs with ``v`` query variants per topic, for every ``v``
    of the study (:func:`planner.plan.topics_for_variants`); a row per (target, v). With
    ``stream`` (the scenario's target stream), each row gets a 95% interval on n from
    :data:`INTERVAL_RESAMPLES` topic resamples, the same ones as the scenario's targets: at the
    collection's own number of variants it is the scenario's interval."""
    from .plan import VARIANT_METHODS, topics_for_variants

    out = []
    for tg in sc["targets"]:
        t, v = tg["target"], float(tg["value"])
        if t not in _VARIANT_TARGETS:
            continue
        why = None
        if sc["method"] not in VARIANT_METHODS:
            why = f"method {sc['method']} has no model of query variants"
        elif sc["method"] == "analytic" and sc["variance"] != "pair":
            why = f"the variant model uses each pair's own variance (variance: pair), not {sc['variance']}"
        if why is None:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", DegenerateDataWarning)   # the curve says it already
                    tr = topics_for_variants(m3, target=t, value=v, n_variants=nv, method=sc["method"],
                                             min_diff=sc["min_diff"], alpha=sc["alpha"],
                                             resamples=INTERVAL_RESAMPLES if stream is not None else 0,
                                             rng=copy.deepcopy(stream))
            except PlannerError as exc:
                why = str(exc)
            else:
                ct, cv = float(sc["costs"].get("topic") or 0.0), float(sc["costs"].get("variant") or 0.0)
                priced = ct > 0 or cv > 0
                # runs scoring the same on every topic are permanent ties (swap 0.5 at any n): the
                # counts with one run of each such group, as the scenario's own target gives them
                dedup = {}
                drop = {x for g in m3.collapse_variants().identical_systems() for x in g[1:]}
                keep = [x for x in m3.systems if x not in drop]
                if drop and len(keep) >= 2:
                    try:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", DegenerateDataWarning)
                            td = topics_for_variants(m3.take(systems=keep), target=t, value=v, n_variants=nv,
                                                     method=sc["method"], min_diff=sc["min_diff"],
                                                     alpha=sc["alpha"])
                        dedup = {r["n_variants"]: r["n_topics"] for r in td.rows}
                    except PlannerError:
                        dedup = {}
                for row in tr.rows:
                    out.append({"target": t, "value": v, "n_variants": row["n_variants"],
                                "n_topics": row["n_topics"], "lower": row["n_lower"], "upper": row["n_upper"],
                                **({"n_without_duplicates": dedup.get(row["n_variants"])} if drop else {}),
                                "queries": row["queries"],
                                **({"cost": None if row["n_topics"] is None else
                                    row["n_topics"] * (ct + row["n_variants"] * cv)} if priced else {}),
                                "variance_ratio": row["variance_ratio"], "variant_share": tr.variant_share,
                                "method": sc["method"]})
                continue
        out.append({"target": t, "value": v, "n_variants": None, "n_topics": None, "lower": None,
                    "upper": None, "queries": None,
                    "variance_ratio": None, "variant_share": None, "method": sc["method"],
                    "note": f"not computed: {why}"})
    return out


def _binding_interval(s: Mapping) -> tuple[int, int] | None:
    """The 95% interval on n of the scenario's binding target (its largest count), when known."""
    ts = [t for t in s["targets"] if t.get("n_topics") is not None]
    if not ts or _scenario_need(s) is None:
        return None
    t = max(ts, key=lambda t: t["n_topics"])
    if t.get("lower") is None or t.get("upper") is None:
        return None
    return int(t["lower"]), int(t["upper"])


#: settings two scenarios must share for their counts to be compared measure against measure
_PAIRED_SAME = ("collection", "method", "variance", "min_diff", "strata", "filter", "alpha", "pool",
                "costs", "variants")


def _paired_measures(scens: list[dict]) -> list[dict]:
    """Measures compared on the same topics: for every two scenarios that differ only in the
    measure and cover the same topics, and every target both solved with topic-resampling
    intervals, the difference of their counts resample by resample
    (:func:`planner.plan.paired_difference`). ``fewer`` is the scenario whose count is the
    smaller (the earlier one on a tie); ``extra = n_more - n_fewer`` (``None`` when ``more`` is
    not reached), ``extra_median``, ``extra_lower`` and ``extra_upper`` describe that difference
    over the resamples."""
    from .plan import paired_difference

    rows: list[dict] = []
    for i, a in enumerate(scens):
        for b in scens[i + 1:]:
            sa, sb = a["settings"], b["settings"]
            if (a.get("_topics_key") is None or a.get("_topics_key") != b.get("_topics_key")
                    or sa["measure"] == sb["measure"] or any(sa[k] != sb[k] for k in _PAIRED_SAME)):
                continue
            for ta in a["targets"]:
                tb = next((t for t in b["targets"]
                           if t["target"] == ta["target"] and t["value"] == ta["value"]), None)
                if tb is None or ta.get("_resampled_n") is None or tb.get("_resampled_n") is None:
                    continue
                na = math.inf if ta["n_topics"] is None else ta["n_topics"]
                nb = math.inf if tb["n_topics"] is None else tb["n_topics"]
                (f, tf), (m, tm) = ((a, ta), (b, tb)) if na <= nb else ((b, tb), (a, ta))
                d = paired_difference(tf["_resampled_n"], tm["_resampled_n"])
                verdict = ("separated" if d["separated"] == "b more" else
                           "reversed" if d["separated"] == "b fewer" else
                           # the point estimate's order is not the resamples' majority
                           "not separated (order not stable)" if d["share_b_fewer"] > d["share_b_more"]
                           else "not separated")
                rows.append({"collection": sa["collection"]["label"], "target": ta["target"],
                             "value": ta["value"], "fewer": f["name"], "more": m["name"],
                             "measure_fewer": f["settings"]["measure"], "measure_more": m["settings"]["measure"],
                             "n_fewer": tf["n_topics"], "n_more": tm["n_topics"],
                             "extra": (None if tm["n_topics"] is None else
                                       tm["n_topics"] - tf["n_topics"]),
                             "extra_median": d["diff_median"], "extra_lower": d["lower"],
                             "extra_upper": d["upper"], "share_more": d["share_b_more"],
                             "share_equal": d["share_equal"], "share_fewer": d["share_b_fewer"],
                             "resamples": d["resamples"], "verdict": verdict})
    return rows


def _pool_others(s0: Mapping, scens: list[dict], depth: int) -> str:
    """The other scenarios' pool studies at the chosen depth, and the cheapest depth serving all:
    a depth chosen for one measure can fail another's tau_min or need more topics for it."""
    others = [s for s in scens[1:] if s.get("pool") and s["pool"].get("depths")]
    if not others:
        return ""
    rows = {s["name"]: {int(r["depth"]): r for r in s["pool"]["depths"]} for s in [s0] + others}
    bad = []
    for s in others:
        r = rows[s["name"]].get(int(depth))
        if r is None:
            continue
        n = r.get("n_topics_needed")
        if not r.get("tau_ok", True) or n is None or n > s0["pool"]["choice"]["n_topics_needed"]:
            tau = r.get("kendall_tau_vs_full")
            bad.append(f"{s['name']} needs {'no reachable count' if n is None else f'{n} topics'}"
                       + (f" and its Kendall tau against its full judgments is {tau:.3f}"
                          + (f", below tau_min {s['pool'].get('tau_min')}" if not r.get("tau_ok", True) else "")
                          if tau is not None else ""))
    if not bad:
        return (f" At depth {depth} the other scenarios need no more topics and keep their Kendall tau "
                "against the full judgments.")
    text = f" At depth {depth}, " + "; ".join(bad) + "."
    best = None
    for d in sorted(rows[s0["name"]]):
        rs = [rows[k].get(d) for k in rows]
        if any(r is None or r.get("n_topics_needed") is None or not r.get("tau_ok", True) for r in rs):
            continue
        n = max(int(r["n_topics_needed"]) for r in rs)
        cpt = rows[s0["name"]][d].get("cost_per_topic")
        cost = None if cpt is None else n * cpt
        key = cost if cost is not None else n
        if best is None or key < best[0]:
            best = (key, d, n, cost)
    if best is not None:
        text += (f" Serving every scenario at once takes depth {best[1]} with {best[2]} topics"
                 + (f" (cost {best[3]:.0f})" if best[3] is not None else "") + ".")
    else:
        text += " No depth serves every scenario at once."
    return text


def _to_build(s: Mapping) -> int | None:
    """Topics a new collection must create so that a filtered scenario keeps the informative
    topics it needs: ``ceil(needed x topics before / topics after the filter)``."""
    need = _scenario_need(s)
    d = s["data"]
    if need is None or not d.get("n_topics") or "n_topics_before_filter" not in d:
        return need
    return int(math.ceil(need * d["n_topics_before_filter"] / d["n_topics"] - 1e-9))


def _binding(s: Mapping) -> Mapping | None:
    ts = [t for t in s["targets"] if t.get("n_topics") is not None]
    return max(ts, key=lambda t: t["n_topics"]) if ts else None


def _paired_row(paired: list[dict], scens: list[dict], name_a: str, name_b: str) -> dict | None:
    """The paired comparison of two scenarios on the binding target they share, if any."""
    by = {s["name"]: s for s in scens}
    ba, bb = _binding(by[name_a]), _binding(by[name_b])
    if ba is None or bb is None or (ba["target"], ba["value"]) != (bb["target"], bb["value"]):
        return None
    return next((r for r in paired if {r["fewer"], r["more"]} == {name_a, name_b}
                 and (r["target"], r["value"]) == (ba["target"], ba["value"])), None)


def _bound(v, side: int) -> float:
    """An interval end of :func:`planner.plan.paired_difference` (``None`` = unbounded)."""
    return side * math.inf if v is None else v


def _signed(v) -> str:
    return ("+inf" if v > 0 else "-inf") if not math.isfinite(v) else f"{int(v):+d}"


def _paired_sentence(s0: Mapping, binding: Mapping, paired: list[dict]) -> str:
    """What the answer says about the chosen scenario against the other measures on its topics."""
    rows = [r for r in paired if s0["name"] in (r["fewer"], r["more"])
            and r["target"] == binding["target"] and r["value"] == binding["value"]]
    if not rows:
        return ""
    parts, apart = [], []
    for r in rows:
        mine_fewer = r["fewer"] == s0["name"]
        other = r["measure_more"] if mine_fewer else r["measure_fewer"]
        n_other = r["n_more"] if mine_fewer else r["n_fewer"]
        sign = 1 if mine_fewer else -1
        # the other measure's count minus this one's: paired_difference's interval is symmetric,
        # so negating the table's gives exactly paired_difference(mine, other)
        lo, hi = sorted((sign * _bound(r["extra_lower"], -1), sign * _bound(r["extra_upper"], 1)))
        diff = math.inf if r["extra"] is None else sign * r["extra"]
        unstable = ""
        if str(r["verdict"]).endswith("(order not stable)"):
            # the point difference's sign is the minority over the resamples
            share = r["share_more"] if mine_fewer else r["share_fewer"]
            unstable = (f"; which of the two needs fewer is not settled: {other} needs more in "
                        f"{share:.0%} of the resamples")
        parts.append(f"{other} {n_other if n_other is not None else 'not reached'} "
                     f"({_signed(diff)}, 95% interval [{_signed(lo)}, {_signed(hi)}]{unstable})")
        if r["verdict"] in ("separated", "reversed"):
            apart.append(other)
    full = " with the full judgments" if s0.get("pool") else ""
    text = (f" Paired over the same {rows[0]['resamples']} topic resamples of {rows[0]['collection']} "
            f"(each resample solved for every measure), the counts the other measures need for "
            f"{binding['target']} {binding['value']:g}{full}, against {s0['settings']['measure']}'s "
            f"{binding['n_topics']}: " + "; ".join(parts) + ". ")
    if not apart:
        text += "None of these differences is larger than the resampling noise."
    elif len(apart) == len(rows):
        text += "Every one of these differences is larger than the resampling noise."
    else:
        text += ("Only " + ", ".join(apart) + (" differs" if len(apart) == 1 else " differ")
                 + " by more than the resampling noise.")
    return text


def _comp_obj(s):
    c = s["components"]
    return c["var_s"], c["var_t"], c["var_e"]


def _erho(s, n):
    vs, vt, ve = _comp_obj(s)
    return vs / (vs + ve / n) if vs + ve > 0 else float("nan")


def _phi(s, n):
    vs, vt, ve = _comp_obj(s)
    return vs / (vs + (vt + ve) / n) if vs + vt + ve > 0 else float("nan")


def _honest_paragraphs(scens: list[dict]) -> list[str]:
    out = []
    s0 = scens[0]
    d = s0["data"]
    for h in s0.get("honest_strata") or [s0["honest"]]:
        where = h.get("stratum") or s0["settings"]["collection"]["label"]
        filtered = ""
        if not h.get("stratum") and d["n_topics_before_filter"] != d["n_topics"]:
            filtered = (f" (after filtering {d['n_topics_before_filter'] - d['n_topics']} of "
                        f"{d['n_topics_before_filter']})")
        out.append(f"**Mean and topics.** On {where} ({d['measure']}), {h['n_systems']} systems were "
                   f"scored on **{h['n_topics']} topics**{filtered}; the mean score over systems and "
                   f"topics is {h['grand_mean']:.3f}, the best system ({h['best_system']}) has mean "
                   f"{h['best_mean']:.3f}.")
        same = h.get("identical_to_best") or []
        dup = (f" ({', '.join(same)}, identical to the best on every topic, {'is' if len(same) == 1 else 'are'} "
               "skipped)" if same else "")
        out.append(f"**Sampling error (paired resampling of topics).** The best system leads the second"
                   f"{dup} ({h['second_system']}, {h['second_mean']:.3f}) by {h['diff_top2']:.3f}, "
                   f"{h['interval']} [{h['diff_top2_lo']:.3f}, {h['diff_top2_hi']:.3f}]; "
                   f"reversal rate of that pair {h['reversal_top2']:.3f}. Over all pairs the mean bootstrap "
                   f"reversal rate at {h['n_topics']} topics (the share of topic resamples that order a pair "
                   "against the collection, whose order is taken as given here"
                   + (", unlike the predictive curves" if str(s0["settings"]["method"]).startswith("predictive")
                      else "")
                   + f") is {h['reversal_mean_pairs']:.3f}, and "
                   f"{100 * h['pairs_reversal_over_5pct']:.0f}% of pairs reverse in more than 5% of resamples.")
        if h is (s0.get("honest_strata") or [s0["honest"]])[0] and not s0.get("honest_strata"):
            out.extend(_interval_caveat(scens))
        js = h.get("judged_share")
        if js is None:
            out.append("**Pool bias.** Unknown: this input gives per-topic scores only, so whether the "
                       "evaluated runs contributed to the judgment pool (the judged share of their top k) "
                       "cannot be checked; give runs + qrels to see it.")
            continue
        if js["min"] >= 0.999:
            verdict = ("every evaluated run's top {k} is judged, so unjudged documents cannot bias "
                       "these scores at this depth")
        elif js["min"] >= 0.95:
            verdict = ("the runs' top {k} is almost fully judged (unjudged documents count as "
                       "non-relevant), so pool bias at this depth is small")
        else:
            verdict = ("some runs have many unjudged documents in their top {k}, counted as "
                       "non-relevant: those runs did not fully contribute to the pool and their "
                       "scores may be biased low")
        contrib = ""
        if js.get("runs_in_pool") is not None and js["runs_in_pool"] < js["runs"]:
            contrib = (f"{js['runs_in_pool']} of the {js['runs']} evaluated runs formed the pool "
                       "(pool_runs); the others did not contribute to it. ")
        out.append(f"**Pool bias.** {contrib}Judged share of the evaluated runs' top {js['depth']}: mean "
                   f"{js['mean']:.3f}, lowest {js['min']:.3f}"
                   + (f" ({js['lowest_run']})" if js.get("lowest_run") else "")
                   + "; " + verdict.format(k=js["depth"]) + ".")
    # the other collections of the grid: their pool bias can differ from the first one's
    if s0.get("honest_strata"):
        out.extend(_interval_caveat(scens))     # after every stratum's paragraphs: it is about the stack
    seen = {s0["settings"]["collection"].get("label")}
    for s in scens[1:]:
        lab = s["settings"]["collection"].get("label")
        js = (s.get("honest") or {}).get("judged_share")
        if lab in seen or "stack" in s["settings"]["collection"]:
            continue
        seen.add(lab)
        if js and js.get("min") is not None and js["min"] < 0.95:
            out.append(f"**Pool bias on {lab}.** Judged share of the evaluated runs' top {js['depth']}: mean "
                       f"{js['mean']:.3f}, lowest {js['min']:.3f}"
                       + (f" ({js['lowest_run']})" if js.get("lowest_run") else "")
                       + f"; runs with many unjudged documents in their top {js['depth']} count them as "
                         "non-relevant, so their scores may be biased low.")
    if len(scens) > 1:
        out.append("The table below gives the same statement for every scenario. Compare systems "
                   "with per-topic (paired) differences, never with two means computed separately.")
    else:
        out.append("Compare systems with per-topic (paired) differences, never with two means "
                   "computed separately.")
    return out


def _far_targets(s: Mapping) -> list[tuple[Mapping, float]]:
    """A scenario's targets whose count comes with an interval from topic resampling, each with
    the count's multiple of the collection's topics."""
    T = s["data"].get("n_topics") or 0
    return [(t, t["n_topics"] / T) for t in s["targets"]
            if T and t.get("n_topics") is not None and t.get("lower") is not None
            and "topic resampling" in str(t.get("how", ""))]


#: the largest multiple of a sample's topics that benchmarks/bench_coverage.py checked
_COVERAGE_CHECKED = 4.7


def _interval_caveat(scens: list[dict]) -> list[str]:
    """What the intervals on n from topic resampling are, and what a coverage check found, when a
    scenario's answer has one; names the count farthest beyond its collection's topics."""
    far = [(s, t, r) for s in scens for t, r in _far_targets(s)]
    if not far:
        return []
    s, t, ratio = max(far, key=lambda x: x[2])
    T = s["data"]["n_topics"]
    if all("stack" in x["settings"]["collection"] for x, _, _ in far):
        # stacked strata: width, power, Erho2 and Phi only, from the strata's variance estimates
        return [f"**Intervals on n.** The 95% intervals on n re-solve each target on resamples of the topics "
                "within each stratum (the strata's weights kept): they show how much the count moves with the "
                "topics, not a calibrated confidence interval for the count a larger topic set would show. "
                "These targets (interval width, power, Erho2, Phi) depend on the strata's variance estimates "
                "only, not on the pairs' mean differences, and no coverage check has been made for them (the "
                "one for swap rates, docs/planning.md, found those intervals low far beyond the collection's "
                f"size). The farthest here: {t['target']} {t['value']:g} needs {t['n_topics']} topics in "
                f"{s['name']}, {ratio:.1f} times the stack's {T} topics. The ends also carry Monte Carlo error "
                f"from the {INTERVAL_RESAMPLES} resamples."]
    here = ""
    if ratio >= 1.5:
        here = (f" The farthest here: {t['target']} {t['value']:g} needs {t['n_topics']} topics in "
                f"{s['name']}, {ratio:.1f} times the collection's {T}"
                + (f", beyond the {_COVERAGE_CHECKED:g} times that check reached, so its miss rate is "
                   "unmeasured and probably higher." if ratio > _COVERAGE_CHECKED else "."))
    return [f"**Intervals on n.** The 95% intervals on n re-solve the target on resamples of the "
            "collection's own topics: they show how much the count moves with the topics, not a calibrated "
            "confidence interval for the count a larger topic set would show. When the count is several "
            "times the collection's size, the count and its interval both tend to run low: in a coverage "
            "check of the swap_rate 0.05 target on TREC 2006 Terabyte AP (benchmarks/bench_coverage.py, "
            f"docs/planning.md), when the count was {_COVERAGE_CHECKED:g} times the sample's topics the true "
            "count lay above the interval in 26% (analytic) to 43% (predictive) of the samples, and when it "
            "was 2 times, in 13% to 21%; it never lay below. The ends also carry Monte Carlo error: with "
            f"the {INTERVAL_RESAMPLES} resamples a study draws, the upper end moves by about 5-10% from one "
            "seed to another (DL 2019 nDCG@10, swap_rate 0.05: 153 to 196 over 20 seeds)." + here
            + " Plan towards the upper end, or pilot more topics."]


def _tables(scens: list[dict]) -> dict:
    import pandas as pd

    def lab(s):
        return s["name"]

    scen_rows, curves, targets, comps, filt, hon, pool, variants, budget = [], [], [], [], [], [], [], [], []
    variant_targets: list[dict] = []
    allocation: list[dict] = []
    for s in scens:
        st = s["settings"]
        flt = st["filter"]
        scen_rows.append({"id": s["id"], "scenario": lab(s), "collection": st["collection"]["label"],
                          "measure": st["measure"], "method": st["method"],
                          "variance": (str(s["curve"]["variance"]) if str(s["curve"]["variance"]) == st["variance"]
                                       or "stack" in st["collection"]
                                       else f"{s['curve']['variance']} (curve); {st['variance']} (sizes)"),
                          "min_diff": st["min_diff"],
                          "strata": ("stacked: " + ", ".join(s["data"]["strata"])
                                     if "stack" in st["collection"] else st["strata"]),
                          "filter": "none" if not flt else
                          f"lo={flt['lo']:g}, hi={flt['hi']:g}, min_spread={flt['min_spread']:g}",
                          # a stack's strata may hold disjoint systems: one count per stratum
                          "systems": (" / ".join(str(d["n_systems"]) for d in s["data"]["per_stratum"])
                                      if s["data"].get("per_stratum") else s["data"]["n_systems"]),
                          "topics": (" / ".join(str(d["n_topics"]) for d in s["data"]["per_stratum"])
                                     if s["data"].get("per_stratum") else s["data"]["n_topics"]),
                          "topics_needed": _scenario_need(s),
                          # a filter keeps a share of the topics a new collection creates: the
                          # topics to build are the needed informative ones over that share
                          "topics_to_build": _to_build(s)})
        for r in s["curve"]["rows"]:
            curves.append({"scenario": lab(s), **r})
        for r in s.get("extra_curves") or []:
            r = dict(r)
            curves.append({"scenario": f"{lab(s)} / {r.pop('label')}", **r})
        for r in s.get("allocation") or []:
            allocation.append({"scenario": lab(s), **r})
        for t in s["targets"]:
            targets.append({"scenario": lab(s), "target": t["target"], "value": t["value"],
                            "n_topics": t["n_topics"], "lower": t.get("lower"), "upper": t.get("upper"),
                            "how": t["how"]})
        c = s["components"]
        comps.append({"scenario": lab(s), "method": c["method"], "var_s": c["var_s"], "var_t": c["var_t"],
                      "var_e": c["var_e"], "grand_mean": c["grand_mean"], "erho2": s["erho2_at_T"],
                      "phi": s["phi_at_T"], "n_topics": s["data"]["n_topics"],
                      "truncated": ",".join(c["truncated"]) or ""})
        if s.get("strata"):
            for k, v in s["strata"]["components"].items():
                comps.append({"scenario": f"{lab(s)} / stratum {k}", "method": "per stratum",
                              "var_s": v["var_s"], "var_t": v["var_t"], "var_e": v["var_e"],
                              "grand_mean": v["grand_mean"], "erho2": None, "phi": None,
                              "n_topics": v["n_topics"], "truncated": ""})
        for f in s["filtered"]:
            filt.append({"scenario": lab(s), **f})
        for h in s.get("honest_strata") or [s["honest"]]:
            js = h.get("judged_share") or {}
            hon.append({"scenario": lab(s) + (f" / {h['stratum']}" if h.get("stratum") else ""),
                        "topics": h["n_topics"], "systems": h["n_systems"],
                        "mean": h["grand_mean"], "best": h["best_system"], "best_mean": h["best_mean"],
                        # runs identical to the best on every topic, skipped as the second
                        "identical_to_best": "; ".join(h.get("identical_to_best") or []),
                        "second": h["second_system"], "diff_top2": h["diff_top2"], "ci_lo": h["diff_top2_lo"], "ci_hi": h["diff_top2_hi"],
                        "reversal_top2": h["reversal_top2"], "reversal_mean": h["reversal_mean_pairs"],
                        "judged_share_depth": js.get("depth"), "judged_share_mean": js.get("mean"),
                        "judged_share_min": js.get("min")})
        if s.get("pool"):
            for r in s["pool"]["depths"]:
                by = r.get("n_by_target") or {}
                pool.append({"scenario": lab(s), **{k: v for k, v in r.items() if k != "n_by_target"},
                             **{f"n_{t}": n for t, n in by.items()}})
                if r["cost_per_topic"] is not None:
                    for n in st["topics"]:
                        budget.append({"depth": r["depth"], "n_topics": n, "cost": n * r["cost_per_topic"]})
        if s.get("variants"):
            for r in s["variants"]["dstudy"]:
                variants.append({"scenario": lab(s), **r})
            for r in s["variants"].get("targets") or []:
                variant_targets.append({"scenario": lab(s), **r})
    if not any(s["settings"]["filter"] for s in scens):
        for r in scen_rows:          # only a filter makes the topics to build differ from those needed
            r.pop("topics_to_build")
    T = {"scenarios": pd.DataFrame(scen_rows), "curves": pd.DataFrame(curves),
         "targets": pd.DataFrame(targets), "components": pd.DataFrame(comps), "honest": pd.DataFrame(hon)}
    if filt:
        T["filtered"] = pd.DataFrame(filt)
    if pool:
        T["pool"] = pd.DataFrame(pool)
        T["budget"] = pd.DataFrame(budget).drop_duplicates(["depth", "n_topics"])
    if variants:
        T["variants"] = pd.DataFrame(variants)
    if variant_targets:
        T["variant_targets"] = pd.DataFrame(variant_targets)
    if allocation:
        T["allocation"] = pd.DataFrame(allocation)
    return T


def _worker(args):
    sc, rng, resamples, seed = args
    try:
        return _run_scenario(sc, rng, resamples, seed)
    except (ParameterError, ConfigError) as exc:
        # name the scenario: "s03 [dl19-passage, RR(rel=2)]: measure: ..."
        raise ConfigError(str(exc), key=f"{sc['id']} [{sc['name']}]") from None


def _scenario_key(sc: Mapping) -> str:
    """The settings that define a scenario's computation, as canonical JSON: not its id, name or
    position in the grid, and each input file by its name only (the resolved paths differ
    between checkouts, the numbers must not)."""
    def plain(v, key=None):
        if isinstance(v, Mapping):
            return {str(k): plain(x, str(k)) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if key in ("scores", "runs", "qrels", "strata") and isinstance(v, str):
            return os.path.basename(os.path.normpath(v))
        return v

    kept = {k: plain(v, k) for k, v in sc.items() if k not in ("id", "name", "index")}
    # settings added after studies were published, at their default (which changes no draw), stay
    # out of the key, so that those studies keep their streams and numbers
    for (k, sub), default in _KEY_LATER_DEFAULTS.items():
        if isinstance(kept.get(k), dict) and kept[k].get(sub) == default:
            kept[k] = {a: b for a, b in kept[k].items() if a != sub}
    return json.dumps(kept, sort_keys=True, default=str)


#: (key, sub-key) -> default of settings added later (see :func:`_scenario_key`)
_KEY_LATER_DEFAULTS = {("costs", "variant"): 0.0}


def _input_paths(cfg: StudyConfig) -> list[str]:
    """The study file and every file or folder its scenarios read (collections, strata)."""
    paths = [cfg.source] if cfg.source else []
    for sc in cfg.scenarios:
        coll = sc["collection"]
        for c in coll.get("stack", [coll]):
            paths += [c[k] for k in ("scores", "runs", "qrels", "strata") if isinstance(c.get(k), str)]
    return list(dict.fromkeys(paths))


def run_study(config: str | os.PathLike | Mapping | None = None, *, out: str | os.PathLike | None = None,
              force: bool = False, seed: int | None = None, jobs: int = 1, quiet: bool = False,
              write: bool = True, command: str | None = None) -> StudyResult:
    """Run a study and (unless ``write=False``) write its report folder.

    Args:
        config: a study YAML path, a mapping, or ``None`` for the embedded quick start
            (DL 2019 passage, nDCG@10).
        out: report folder (default ``reports/<study name>`` under the current folder); an
            error with ``write=False``.
        force: replace an existing report folder.
        seed: override the study's seed.
        jobs: scenarios run in parallel processes; results are identical for any ``jobs``
            (each scenario has its own random stream, keyed on its settings).
        quiet: no progress bar (otherwise tqdm on stderr when stderr is a terminal).

    Returns:
        :class:`StudyResult`. Raises :class:`ConfigError` (key path) for a bad
        study, :class:`InputError` for missing files or an existing report folder.
    """
    t0 = time.perf_counter()
    if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or jobs < 1:
        raise ParameterError(f"expected an integer >= 1, got {jobs!r}", parameter="jobs")
    if not write and out is not None:
        raise ParameterError("not used with write=False (no report folder is written)", parameter="out")
    cfg = load_config(config, seed=seed)
    from .report import check_target, write_report

    if write:
        out = Path(out) if out is not None else Path("reports") / cfg.name
        check_target(out, force=force, keep=_input_paths(cfg))
    # a stream per scenario keyed on its settings: adding, removing or reordering other
    # scenarios leaves a scenario's numbers unchanged (and any --jobs gives the same)
    tasks = [(dict(sc), keyed_stream(cfg.seed, _scenario_key(sc)), cfg.resamples, cfg.seed)
             for sc in cfg.scenarios]
    from tqdm import tqdm

    # only on a terminal (disable=None), where leave=False erases it: logs and captured stderr
    # get no bar, and a failing study leaves only its error line
    bar = tqdm(total=len(tasks), desc=f"study {cfg.name}", unit="scenario", file=sys.stderr,
               disable=True if quiet else None, leave=False)
    scens: list[dict | None] = [None] * len(tasks)
    try:
        if jobs == 1 or len(tasks) == 1:
            for i, t in enumerate(tasks):
                scens[i] = _worker(t)
                bar.update(1)
        else:
            import concurrent.futures as cf
            import multiprocessing as mp

            ctx = mp.get_context("spawn") if sys.platform == "win32" else mp.get_context("fork")
            with cf.ProcessPoolExecutor(max_workers=min(jobs, len(tasks)), mp_context=ctx) as ex:
                futs = {ex.submit(_worker, t): i for i, t in enumerate(tasks)}
                for f in cf.as_completed(futs):
                    scens[futs[f]] = f.result()
                    bar.update(1)
    finally:
        bar.close()
    scens_l: list[dict] = [s for s in scens if s is not None]
    all_warn: list[str] = []
    for s in scens_l:
        for w in s["warnings"]:
            if w not in all_warn:
                all_warn.append(w)
    for w in all_warn:
        warnings.warn(w, DegenerateDataWarning, stacklevel=2)
    from .report import versions as _versions

    versions = _versions()
    inputs: list[dict] = []
    for s in scens_l:
        for i in s["inputs"]:
            if i not in inputs:
                inputs.append(i)
    paired = _paired_measures(scens_l)
    for s in scens_l:             # the per-resample counts stay out of results.json
        s.pop("_topics_key", None)
        for t in s["targets"]:
            t.pop("_resampled_n", None)
    answer = _answer(scens_l, paired)
    results = {
        "study": cfg.name, "description": cfg.description, "seed": cfg.seed, "resamples": cfg.resamples,
        "planner_version": versions["planner"], "versions": versions, "inputs": inputs,
        "config": cfg.raw,
        "answer": answer,
        "scenarios": scens_l,
        "paired": paired,
        "honest": {"paragraphs": _honest_paragraphs(scens_l)},
        "warnings": all_warn,
    }
    from .report import jsonable

    results = jsonable(results)
    tables = _tables(scens_l)
    if paired:
        import pandas as pd

        tables["paired"] = pd.DataFrame(results["paired"])
    elapsed = time.perf_counter() - t0
    prov = {"planner_version": versions["planner"], "versions": versions, "seed": cfg.seed,
            "resamples": cfg.resamples, "jobs": int(jobs), "inputs": inputs, "config": cfg.raw,
            "study_file": cfg.source,
            "study_file_sha256": _sha256_file(Path(cfg.source)) if cfg.source else None,
            "command": command, "platform": sys.platform,
            "finished_utc": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()),
            "elapsed_seconds": None}
    result = StudyResult(name=cfg.name, config=cfg.raw, results=results, tables=tables, provenance=prov,
                         out=None, elapsed=elapsed)
    if write:
        prov["elapsed_seconds"] = round(time.perf_counter() - t0, 2)
        prov["_t0"] = t0          # write_report times the study up to its finished figures
        path = write_report(result, out, force=force)
        prov.pop("_t0", None)
        elapsed = time.perf_counter() - t0
        object.__setattr__(result, "out", str(path))
        object.__setattr__(result, "elapsed", elapsed)
    return result

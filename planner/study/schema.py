"""The study file's schema: JSON Schema, what each key expects in words, and the defaults.

Method and target names come from :mod:`planner.methods`; ``planner schema`` prints
:func:`schema`.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import cast

from .. import methods
from ..plan import MAX_COST, MAX_VARIANTS, STACK_TARGETS
from ..policies import COMPLETE_POLICIES, DUPLICATE_POLICIES
from ..simulate import MAX_TOPICS as _SIM_MAX_TOPICS

__all__ = ["DEFAULTS", "DEFAULT_TOPICS", "EXPECTED", "GRID_KEYS", "MAX_TOPICS", "METHODS", "SCENARIO_KEYS",
           "SCHEMA", "SETTINGS_KEYS", "STACK_KEYS", "STACK_TARGETS", "TARGETS", "TARGET_RANGES",
           "quickstart_path", "schema"]

_MAX_COST_TXT = f"{MAX_COST:.0e}".replace("e+", "e")      # 1e15
#: the methods a study may name, the default (planner.methods.DEFAULT_METHOD) first
METHODS = list(methods.method_names())
#: the targets a study may set: those planner.plan.size_for_target solves for
TARGETS = list(methods.target_names(lambda t: t.solvable))
GRID_KEYS = ("collection", "measure", "method", "variance", "min_diff", "strata", "filter")
DEFAULT_TOPICS = [10, 20, 30, 40, 50, 75, 100, 150, 200]

# what each key expects, in words: used for error messages ("key: expected ...")
EXPECTED = {
    "name": "a string",
    "study_name": "a plain folder name (no / or \\ or control characters, not '.' or '..')",
    "description": "a string",
    "seed": "an integer >= 0",
    "resamples": "an integer from 10 to 1,000,000",
    "max_scenarios": "an integer >= 1",
    "scheduler": "a Dask scheduler address such as tcp://host:8786",
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
    "missing": f"one of {', '.join(COMPLETE_POLICIES)} (a study simulates, which needs a complete matrix; "
               "'keep' is for planner fit)",
    "label": "a string",
    "lo": "a number",
    "hi": "a number",
    "min_spread": "a number >= 0",
    "pool_runs": "a list of run names",
    "duplicates": "error or first",
    "select_runs": "a run name or glob pattern ('bm25*'), or a list of them",
    "selection": "an object {groups, n_dev, n_test, k, margin, confidence_level, accuracy, width, budget, "
                 "resamples}",
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
        "select_runs": {"oneOf": [{"type": "string", "minLength": 1, "pattern": r"\S"},
                                  {"type": "array", "minItems": 1, "uniqueItems": True,
                                   "items": {"type": "string", "minLength": 1, "pattern": r"\S"}}],
                        "description": "read only the runs whose name matches: run names or glob "
                                       "patterns such as 'bm25*' (default: all)"},
        "duplicates": {"enum": list(DUPLICATE_POLICIES), "default": "error",
                       "description": "a document repeated for a topic in a run: error, or keep its "
                                      "first line (the lines dropped are counted per run)"},
        "variant_divisor": {"type": "integer", "minimum": 2,
                            "description": "query id = topic * d + variant"},
        "strata": {"oneOf": [{"type": "string", "minLength": 1},
                             {"type": "object", "additionalProperties": {"type": ["string", "integer"]}}],
                   "description": "topic metadata CSV (topic, stratum) or a mapping topic -> stratum"},
        "missing": {"enum": list(COMPLETE_POLICIES), "default": "error",
                    "description": "missing cells: error, score 0, or drop their topics or systems"},
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
MAX_TOPICS = int(_SIM_MAX_TOPICS)



def _value_range(t: methods.Target) -> dict:
    """The JSON Schema range of a target's value: strictly between its low and high."""
    out: dict = {"exclusiveMinimum": t.low}
    if not math.isinf(t.high):
        out["exclusiveMaximum"] = t.high
    return out


# target -> (JSON Schema range of its value, the range in words); the rates and
# coefficients are probabilities/correlations that are reached only in the limit at
# 0 or 1, a width only at 0 (infinitely many topics)
TARGET_RANGES = {name: (_value_range(methods.target(name)), methods.target(name).words) for name in TARGETS}

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
             "pattern": r"^(pair|pooled|within-system|percentile:"
                        r"([1-9][0-9]?(\.[0-9]+)?|0\.[0-9]*[1-9][0-9]*|100(\.0+)?))$"}

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

#: a study's selection section (planner.study.selection runs it): the options of `planner select`
def _ints2(words: str) -> dict:
    """An integer >= 2 or a non-empty list of distinct ones, ``words`` on every branch."""
    one = {"type": "integer", "minimum": 2, "x-expected": words}
    return {"oneOf": [one, {"type": "array", "minItems": 1, "uniqueItems": True, "items": one, "x-expected": words}],
            "x-expected": words}


_SELECTION = {
    "type": "object", "additionalProperties": False,
    "description": "Selection on the test topics (planner select): optimism of the best of k candidates "
                   "of a group and the probability of a right pick against n_dev, and with accuracy "
                   "and/or width the dev/test split of budget topics that meets them.",
    "properties": {
        "groups": {"oneOf": [{"type": "string", "minLength": 1},
                             {"type": "object", "minProperties": 1,
                              "additionalProperties": {"oneOf": [
                                  {"type": "string", "minLength": 1},
                                  {"type": "array", "minItems": 1, "items": {"type": "string"}}]}}],
                   "x-expected": "prefix, regex:PATTERN, a CSV FILE[:COLUMN], or a mapping system -> group "
                                 "(or group -> [systems])"},
        "n_dev": _ints2("an integer >= 2 or a list of them (dev topics)"),
        "n_test": {"type": "integer", "minimum": 2, "x-expected": "an integer >= 2 (test topics)"},
        "k": _ints2("an integer >= 2 or a list of them (candidates drawn from a group)"),
        "margin": {"type": "number", "minimum": 0, "x-expected": "a number >= 0"},
        "confidence_level": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1,
                             "x-expected": "a number strictly between 0 and 1"},
        "accuracy": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1,
                     "x-expected": "a probability strictly between 0 and 1 (target pick accuracy)"},
        "width": {"type": "number", "exclusiveMinimum": 0,
                  "x-expected": "a number > 0 (target width of the reported score's interval)"},
        "budget": {"type": "integer", "minimum": 4, "x-expected": "an integer >= 4 (topics to split)"},
        "resamples": {"type": "integer", "minimum": 10, "maximum": 1_000_000,
                      "x-expected": "an integer from 10 to 1,000,000 (random dev/test splits)"},
    },
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
        "max_scenarios": {"type": "integer", "minimum": 1},
        # where the scenarios run (planner.parallel); not part of the results
        "scheduler": {"type": "string", "minLength": 1, "pattern": r"\S"},
        **_SCENARIO_PROPS,
        # the study name is also the default report folder: a plain folder name
        "name": {"type": "string", "minLength": 1, "pattern": r"^(?!\.\.?$)[^/\\\x00-\x1f\x7f]+$",
                 "x-expected": EXPECTED["study_name"]},
        "scenarios": {"type": "array", "minItems": 1, "items": {
            "type": "object", "additionalProperties": False, "properties": _SCENARIO_PROPS}},
        "selection": _SELECTION,
    },
    "required": ["collection"],
}

DEFAULTS: dict = {
    "seed": 20190,
    "resamples": 1000,
    "measure": "nDCG@10",
    "method": methods.DEFAULT_METHOD,
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
    """The JSON Schema of a study file (a deep copy of :data:`SCHEMA`).

    Returns
    -------
    dict
        A JSON Schema (draft 2020-12) of the study YAML; ``planner schema`` prints it.

    Examples
    --------
    >>> s = schema()
    >>> s["required"]
    ['collection']
    >>> s["properties"]["method"]["oneOf"][0]["enum"][:2]
    ['predictive', 'analytic']
    """
    return copy.deepcopy(SCHEMA)


def quickstart_path() -> Path:
    """Path of the embedded quick-start study (``planner/configs/quickstart.yaml``).

    Examples
    --------
    >>> quickstart_path().name
    'quickstart.yaml'
    """
    return Path(__file__).resolve().parent.parent / "configs" / "quickstart.yaml"


#: the keys of a scenario (and of the top level's scenario defaults), in schema order
SCENARIO_KEYS = tuple(_SCENARIO_PROPS)
#: the keys of a stack object
STACK_KEYS: tuple[str, ...] = tuple(cast(dict, _STACK["properties"]))
#: the settings a scenario result echoes, in order
SETTINGS_KEYS = ("collection", "measure", "method", "variance", "min_diff", "strata", "filter", "topics",
                 "alpha", "targets", "pool", "costs", "variants")

"""Strict validation of a study document: schema violations and the rules a schema cannot say,
each raised as a :class:`planner.errors.ConfigError` naming the key path in the user's words."""

from __future__ import annotations

import difflib
import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jsonschema

from .. import methods
from ..errors import ConfigError
from ..policies import COMPLETE_POLICIES, DUPLICATE_POLICIES
from ..report import MAX_NAME_BYTES
from .schema import EXPECTED, METHODS, SCHEMA, STACK_KEYS

__all__ = ["check_doc", "check_name", "key_path", "short", "source_id", "validate"]

#: the collection keys that name a source
_SOURCES = ("dataset", "scores", "runs", "qrels")
#: choices a misspelt value of these keys is matched against ("did you mean ...?")
_CHOICES = {"method": METHODS, "strata": ("uniform", "stratified"),
            "variance": tuple(v for v in methods.VARIANCE_SELECTORS if v != "percentile"),
            "missing": COMPLETE_POLICIES, "duplicates": DUPLICATE_POLICIES}


def key_path(path) -> str:
    """``scenarios[0].targets[1].value`` from a JSON path (``(top level)`` when empty)."""
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out or "(top level)"


def _clip(value, depth: int = 3):
    """``value`` with containers cut to their first 4 items and 3 levels (a value built from
    aliases can be large: its message must not be)."""
    if isinstance(value, dict):
        return {str(k): _clip(v, depth - 1) for k, v in list(value.items())[:4]} if depth else {}
    if isinstance(value, list):
        return [_clip(v, depth - 1) for v in value[:4]] if depth else []
    return value if not isinstance(value, str) else value[:80]


def short(value) -> str:
    """A value as JSON, cut to 60 characters."""
    text = json.dumps(_clip(value), default=str)
    return text if len(text) <= 60 else text[:57] + "..."


def _did_you_mean(word, choices) -> str:
    """`` (did you mean 'targets'?)`` for a key close to an allowed one, else ``""``."""
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1, cutoff=0.7)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _unknown_key(err, path: list, source) -> ConfigError:
    props = err.schema.get("properties", {})
    extra = sorted(set(err.instance) - set(props))
    if not extra:
        return ConfigError(err.message, key=key_path(path), file=source)
    return ConfigError(f"unknown key {extra[0]!r}{_did_you_mean(extra[0], props)} "
                       f"(allowed: {', '.join(sorted(props))})", key=key_path(path + [extra[0]]), file=source)


def _missing_key(err, path: list, source) -> ConfigError:
    missing = [k for k in err.validator_value if k not in err.instance]
    return ConfigError(f"missing required key {missing[0]!r}" if missing else err.message,
                       key=key_path(path + missing[:1]), file=source)


def _collection_error(err, path: list, source) -> ConfigError | None:
    """A collection object that names no source or several, or a problem inside one."""
    inst = err.instance
    srcs = [k for k in ("dataset", "scores", "runs", "stack") if k in inst]
    if len(srcs) != 1 or ("runs" in inst) != ("qrels" in inst):
        return ConfigError("expected exactly one source: dataset, scores, runs + qrels, or stack "
                           f"(got {', '.join(sorted(inst)) or 'none'})", key=key_path(path), file=source)
    if "stack" in inst:
        extra = sorted(set(inst) - set(STACK_KEYS))
        if extra:
            return ConfigError(f"unknown key {extra[0]!r}{_did_you_mean(extra[0], STACK_KEYS)} "
                               "(allowed: " + ", ".join(sorted(STACK_KEYS)) + ")",
                               key=key_path(path + [extra[0]]), file=source)
        for ctx in err.context or ():
            if ctx.validator == "additionalProperties" and "stack" in ctx.schema.get("properties", {}):
                return error_to_config(ctx, source)
        sub = _first_inner_error(err, prefer="stack")
        if sub is not None:
            return error_to_config(sub, source)
    # the source is fine: look for the first real problem inside
    sub = _first_inner_error(err)
    return None if sub is None else error_to_config(sub, source)


def _duplicate(err, key: str, source) -> ConfigError | None:
    """A list with a repeated entry (a grid axis, topics, a stack): name the entry."""
    dup = err if err.validator == "uniqueItems" else next(
        (c for c in err.context or () if c.validator == "uniqueItems" and not list(c.relative_path)), None)
    if dup is None or not isinstance(dup.instance, list):
        return None
    seen: list = []
    for item in dup.instance:
        if item in seen:
            return ConfigError(f"{short(item)} is listed more than once", key=key, file=source)
        seen.append(item)
    return None


def _is_collection(err, name) -> bool:
    return isinstance(err.instance, dict) and err.validator == "oneOf" and bool(
        {"dataset", "scores", "runs", "qrels", "stack"} & set(err.instance) or name in ("collection", "stack"))


def error_to_config(err, source) -> ConfigError:
    """One jsonschema error -> ConfigError naming the key path in the user's words."""
    path = list(err.absolute_path)
    if err.validator == "additionalProperties":
        return _unknown_key(err, path, source)
    if err.validator == "required":
        return _missing_key(err, path, source)
    # report at the innermost named key (topics[1] -> topics)
    cut = len(path)
    while cut > 0 and isinstance(path[cut - 1], int):
        cut -= 1
    name = path[cut - 1] if cut else None
    if _is_collection(err, name):
        found = _collection_error(err, path, source)
        if found is not None:
            return found
    key = key_path(path[:cut]) if cut else key_path(path)
    dup = _duplicate(err, key, source)
    if dup is not None:
        return dup
    expected = err.schema.get("x-expected") if isinstance(err.schema, dict) else None
    if expected is None:
        expected = EXPECTED.get(name) if isinstance(name, str) else None
    if not expected:
        return ConfigError(err.message, key=key, file=source)
    value = err.instance
    hint = _did_you_mean(value, _CHOICES[name]) if isinstance(value, str) and name in _CHOICES else ""
    return ConfigError(f"expected {expected}, got {short(value)}{hint}", key=key, file=source)


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


def _best_error(errors: list):
    """Unknown keys first (they explain the others); then a repeated list entry (it fails its
    oneOf too); else jsonschema's best match."""
    errors.sort(key=lambda e: (list(map(str, e.absolute_path)), e.validator != "additionalProperties"))
    unknown = next((e for e in errors if e.validator == "additionalProperties"), None)
    if unknown is not None:
        return unknown
    stack = list(errors)
    while stack:
        e = stack.pop(0)
        if e.validator == "uniqueItems":
            return e
        stack.extend(e.context or ())
    return jsonschema.exceptions.best_match(errors)


def validate(doc: Any, source: str | None) -> None:
    """Check ``doc`` against :data:`SCHEMA`; the first problem as a :class:`ConfigError`."""
    if not isinstance(doc, dict):
        raise ConfigError(f"expected a mapping of keys at the top level, got {type(doc).__name__}",
                          key="(top level)", file=source)
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(doc))
    if errors:
        raise error_to_config(_best_error(errors), source)


# --------------------------------------------------------------- rules beyond the schema
def _check_finite(v, path: list, source) -> None:
    if isinstance(v, float) and not math.isfinite(v):
        raise ConfigError(f"expected a finite number, got {v}", key=key_path(path), file=source)
    if isinstance(v, dict):
        for k, x in v.items():
            _check_finite(x, path + [k], source)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            _check_finite(x, path + [i], source)


def _check_filters(prefix: list, d: Mapping, source) -> None:
    flts = d.get("filter")
    for fi, f in enumerate(flts if isinstance(flts, list) else [flts]):
        if isinstance(f, dict) and not float(f.get("lo", 0.0)) < float(f.get("hi", 1.0)):
            where = prefix + ["filter"] + ([fi] if isinstance(flts, list) else []) + ["lo"]
            raise ConfigError(f"the low bound must be below the high bound, got lo {f.get('lo', 0.0)} and "
                              f"hi {f.get('hi', 1.0)}", file=source, key=key_path(where))


def _check_targets_once(prefix: list, d: Mapping, source) -> None:
    seen: dict = {}
    for j, t in enumerate(d.get("targets") or []):
        if t["target"] in seen:
            raise ConfigError(f"target {t['target']} is given twice (also "
                              f"{key_path(prefix + ['targets', seen[t['target']]])}); give each "
                              "target once", key=key_path(prefix + ["targets", j, "target"]), file=source)
        seen[t["target"]] = j


def _check_stack(c: Mapping, cpath: list, source, base: Path) -> None:
    """No collection stacked twice, no stratum label used twice."""
    srcs: dict = {}
    labels: dict = {}
    for k, part in enumerate(c["stack"]):
        src = source_id(part, base)
        if src in srcs:
            shown = {kk: part[kk] for kk in _SOURCES if kk in part}
            raise ConfigError(f"the same collection ({short(shown)}) is stacked twice (also "
                              f"stack[{srcs[src]}]): each stratum needs its own collection",
                              key=key_path(cpath + ["stack", k]), file=source)
        srcs[src] = k
        lab = part.get("label") or part.get("dataset") or Path(str(part.get("scores") or part.get("runs"))).name
        if lab in labels:
            raise ConfigError(f"stratum label {lab!r} is used twice (also stack[{labels[lab]}]); "
                              "give each stacked collection its own label",
                              key=key_path(cpath + ["stack", k, "label"]), file=source)
        labels[lab] = k


def _check_stacks(prefix: list, d: Mapping, source, base: Path) -> None:
    colls = d.get("collection")
    for ci, c in enumerate(colls if isinstance(colls, list) else [colls] if colls else []):
        if "stack" in c:
            _check_stack(c, prefix + ["collection"] + ([ci] if isinstance(colls, list) else []), source, base)


def _check_scenario_names(doc: Mapping, source) -> None:
    names: dict = {}
    for i, sd in enumerate(doc.get("scenarios") or []):
        nm = sd.get("name")
        if nm is None:
            continue
        if nm in names:
            raise ConfigError(f"scenario name {nm!r} is used twice (also scenarios[{names[nm]}])",
                              key=f"scenarios[{i}].name", file=source)
        names[nm] = i


def _check_costs(c: Mapping | None, where: str, pool: bool, variants: bool, source) -> None:
    """Costs feed the pool study (the cost per topic of each depth, the budget) and the query
    variants' trade-off (a topic and each of its variants): anything else has no effect."""
    c = c or {}
    if not pool and not variants:
        key = f"{where}.budget" if c.get("budget") is not None else where
        raise ConfigError("has no effect without a pool study (pool: {depths: [...]}, runs + qrels) "
                          "or query variants (variants: [...]): costs are the cost per topic and per "
                          "judgment of each pool depth, or per topic and per query variant", key=key, file=source)
    if "variant" in c and not variants:
        raise ConfigError("has no effect without query variants (variants: [...])", key=f"{where}.variant",
                          file=source)
    if "variant" in c and pool:
        raise ConfigError("query-variant costs are not combined with a pool study (their judgments "
                          "would count twice)", key=f"{where}.variant", file=source)
    for k in ("judgment", "budget"):
        if not pool and c.get(k) is not None:
            raise ConfigError("has no effect without a pool study (pool: {depths: [...]}, runs + "
                              "qrels)", key=f"{where}.{k}", file=source)


def _check_all_costs(doc: Mapping, source) -> None:
    scen = doc.get("scenarios") or [{}]

    def has(sd, k):
        return sd.get(k, doc.get(k)) is not None

    if "costs" in doc:
        _check_costs(doc["costs"], "costs", any(has(sd, "pool") for sd in scen),
                     any(has(sd, "variants") for sd in scen), source)
    for i, sd in enumerate(doc.get("scenarios") or []):
        if "costs" in sd:
            _check_costs(sd["costs"], f"scenarios[{i}].costs", has(sd, "pool"), has(sd, "variants"), source)


def check_doc(doc: dict, source: str | None, base: Path | None = None) -> None:
    """Rules the JSON Schema cannot express, checked before anything runs: finite numbers,
    each target once per list, distinct scenario names, no stratum of a stack given twice,
    ``costs`` only with a pool study or query variants. Raises :class:`ConfigError` naming the key."""
    _check_finite(doc, [], source)
    base = Path.cwd() if base is None else base
    entries: list[tuple[list, Mapping]] = [([], doc)]
    entries += [(["scenarios", i], sd) for i, sd in enumerate(doc.get("scenarios") or [])]
    for prefix, d in entries:
        _check_filters(prefix, d, source)
        _check_targets_once(prefix, d, source)
        _check_stacks(prefix, d, source, base)
    _check_scenario_names(doc, source)
    _check_all_costs(doc, source)


def source_id(c: Mapping, base: Path) -> tuple:
    """What identifies a collection's topics: its data set name or its files (resolved against
    the study file's folder). Options (missing, variant_divisor, pool_runs, ...) are left out:
    the same topics read two ways are still the same topics."""
    out = []
    for k in _SOURCES:
        if k in c:
            v = str(c[k])
            if k != "dataset":
                p = Path(os.path.expanduser(v))
                v = os.path.realpath(p if p.is_absolute() else base / p)
            out.append((k, v))
    return tuple(out)


def check_name(name: str, source: str | None, key: str = "name") -> None:
    """The study name is the default report folder: a plain folder name of limited length."""
    if not re.fullmatch(SCHEMA["properties"]["name"]["pattern"], name):
        raise ConfigError(f"expected {EXPECTED['study_name']}, got {short(name)} (the study name is the "
                          "default report folder, reports/<name>; choose the folder with -o)",
                          key=key, file=source)
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise ConfigError(f"expected a name of at most {MAX_NAME_BYTES} bytes, got {len(name.encode('utf-8'))} "
                          "(the study name is the default report folder, reports/<name>)", key=key, file=source)

"""Groups of systems: a team's runs, a sweep's checkpoints.

Pool reusability (:mod:`planner.plan.reusability`) leaves a team's runs out of the pool,
and selection (:mod:`planner.plan.selection`) picks the best candidate of a group; both
need to know which systems belong together. :func:`resolve_groups` turns any of these into
one mapping ``system -> group``:

- ``"prefix"`` (the default rule): the run name up to its first ``-`` or ``_``
  (``idst_bert_p1`` -> ``idst``, ``TUW19-p1-f`` -> ``TUW19``); a name with neither loses
  its trailing digits (``runid3`` -> ``runid``), unless nothing would be left (``1`` -> ``1``).
  This is an approximation of team membership: two teams may share a prefix (``p_``
  runs of different years) and one team may use two (``bcai_`` and ``bl_bcai_``). Pass a
  mapping when you know the teams.
- ``"regex:PATTERN"``: the first capture group of ``PATTERN`` (or the whole match) at the
  start of the name; a name it does not match is its own group.
- a mapping ``system -> group`` or ``group -> [systems]``;
- a path to a CSV with a ``system`` (or ``run``) column and a group column,
  ``"FILE:COLUMN"`` (default column ``group``).

Every system must be in exactly one group; a mapping that names a system the scores do
not have is an error (:func:`check_groups`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import InputError, ParameterError

__all__ = ["GROUP_RULES", "check_groups", "group_members", "prefix_group", "resolve_groups"]

#: the named rules :func:`resolve_groups` accepts as a string
GROUP_RULES = ("prefix",)


def prefix_group(name: str) -> str:
    """The default team rule: the name up to the first ``-`` or ``_``; without either, the
    name without its trailing digits (the whole name when it is all digits).

    Examples
    --------
    >>> [prefix_group(n) for n in ("idst_bert_p1", "TUW19-p1-f", "runid3", "1", "test1")]
    ['idst', 'TUW19', 'runid', '1', 'test']
    """
    head = re.split(r"[-_]", name, maxsplit=1)[0]
    if "-" not in name and "_" not in name:
        head = head.rstrip("0123456789")
    return head or name


def _regex_rule(pattern: str, parameter: str) -> Callable[[str], str]:
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise ParameterError(f"bad regular expression {pattern!r}: {exc}", parameter=parameter) from None

    def rule(name: str) -> str:
        m = rx.match(name)
        if m is None:
            return name
        return (m.group(1) if rx.groups else m.group(0)) or name
    return rule


def _read_group_file(spec: str, parameter: str) -> dict[str, str]:
    import pandas as pd

    path, column = (spec, "group") if Path(spec).is_file() else spec.rsplit(":", 1)
    try:
        df = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read the group file: {exc}", file=path) from None
    key = "system" if "system" in df.columns else "run" if "run" in df.columns else None
    if key is None or column not in df.columns:
        raise InputError(f"needs a 'system' (or 'run') column and a {column!r} column; "
                         f"has {', '.join(df.columns)}", file=path)
    return dict(zip(df[key], df[column]))


def _from_mapping(groups: Mapping, parameter: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in groups.items():
        if isinstance(v, str):
            out[str(k)] = v
        elif isinstance(v, Sequence):
            for s in v:
                if str(s) in out:
                    raise ParameterError(f"system {s!r} is in two groups", parameter=parameter)
                out[str(s)] = str(k)
        else:
            raise ParameterError(f"group of {k!r}: expected a name or a list of systems", parameter=parameter)
    return out


def resolve_groups(systems: Sequence[str], groups: Any = "prefix", *, parameter: str = "groups"
                   ) -> dict[str, str]:
    """``{system: group}`` for every system in ``systems`` (module docstring for ``groups``).

    A mapping or file must place every system and name no unknown one; a rule places all.

    Examples
    --------
    >>> resolve_groups(["a_1", "a_2", "b"])
    {'a_1': 'a', 'a_2': 'a', 'b': 'b'}
    >>> resolve_groups(["x1", "x2"], {"g": ["x1", "x2"]})
    {'x1': 'g', 'x2': 'g'}
    """
    names = [str(s) for s in systems]
    if callable(groups):
        return {n: str(groups(n)) for n in names}
    if isinstance(groups, str) and groups in GROUP_RULES:
        return {n: prefix_group(n) for n in names}
    if isinstance(groups, str) and groups.startswith("regex:"):
        rule = _regex_rule(groups[len("regex:"):], parameter)
        return {n: rule(n) for n in names}
    if isinstance(groups, (str, os.PathLike)):
        spec = os.fspath(groups)
        if not Path(spec.rsplit(":", 1)[0]).is_file() and not Path(spec).is_file():
            raise ParameterError(f"expected 'prefix', 'regex:PATTERN' or a CSV file[:COLUMN], got {spec!r}",
                                 parameter=parameter)
        mapping = _read_group_file(spec, parameter)
    elif isinstance(groups, Mapping):
        mapping = _from_mapping(groups, parameter)
    else:
        raise ParameterError(f"expected a rule, a mapping or a file, got {type(groups).__name__}",
                             parameter=parameter)
    check_groups(names, mapping, parameter=parameter)
    return {n: mapping[n] for n in names}


def check_groups(systems: Sequence[str], mapping: Mapping[str, str], *, parameter: str = "groups") -> None:
    """A mapping must name only known systems and place every one of them."""
    known = set(systems)
    unknown = sorted(set(mapping) - known)
    if unknown:
        raise ParameterError(f"names unknown system {unknown[0]!r}"
                             + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""), parameter=parameter)
    missing = [s for s in systems if s not in mapping]
    if missing:
        raise ParameterError(f"system {missing[0]!r} is in no group"
                             + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""), parameter=parameter)


def group_members(mapping: Mapping[str, str]) -> dict[str, list[str]]:
    """``{group: [systems]}`` in first-seen order.

    Examples
    --------
    >>> group_members({"a1": "a", "b": "b", "a2": "a"})
    {'a': ['a1', 'a2'], 'b': ['b']}
    """
    out: dict[str, list[str]] = {}
    for s, g in mapping.items():
        out.setdefault(g, []).append(s)
    return out

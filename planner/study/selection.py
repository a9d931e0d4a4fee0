"""A study's ``selection:`` section: selection on the test topics for each collection of the grid.

The section takes the options of ``planner select`` (:mod:`planner.plan.selection` owns every
definition and check):

.. code-block:: yaml

    selection:
      groups: prefix          # or regex:PATTERN, a CSV FILE[:COLUMN], or {system: group}
      n_dev: [5, 10, 20, 30]  # dev topic counts (default 5, 10, 15, ... up to N - 2)
      k: [2, 3]               # candidates drawn from each group (default: the whole group)
      margin: 0.01            # a pick within this of the best on the test topics is right
      accuracy: 0.8           # targets: with either, the dev/test split of `budget` topics
      width: 0.15             #   (default the smallest budget) that meets them, for whole
                              #   groups (or k candidates when k is one number)
      budget: 40
      resamples: 1000         # random dev/test splits (default the study's resamples)

It runs once on every collection (and measure) of the study's scenarios; a stack is
skipped (its strata hold different systems). Each run uses the study seed as its ``rng``, so
:func:`planner.selection_bias` called with that seed and the same options gives the same
numbers. A group file's path is relative to the study file's folder.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ConfigError, InputError, ParameterError
from ..plan.groups import GROUP_RULES
from ..plan.selection import SelectionBias, SplitPlan, check_budget, plan_split, selection_bias
from ..results import ResultMixin, short_repr
from .inputs import load_scores

__all__ = ["StudySelection", "resolve_selection", "run_selection", "selection_tables"]

#: the section's keys at their defaults (``resamples`` defaults to the study's)
SELECTION_DEFAULTS: dict[str, Any] = {"groups": "prefix", "n_dev": None, "n_test": None, "k": None, "margin": 0.0,
                                      "confidence_level": 0.95, "accuracy": None, "width": None, "budget": None}
#: the ``all`` rows' columns the report shows
SELECTION_COLUMNS = ("collection", "measure", "k", "n_dev", "n_test", "optimism", "optimism_se", "pick_accuracy",
                     "pick_accuracy_se", "width")


def _resolve_groups(groups: Any, base: Path) -> Any:
    """A group file's path made absolute (relative to the study file's folder); rules and
    mappings as given."""
    if not isinstance(groups, str) or groups in GROUP_RULES or groups.startswith("regex:"):
        return groups
    path, sep, column = groups.rpartition(":")
    if not sep or (base / os.path.expanduser(groups)).is_file():
        path, column = groups, ""
    p = Path(os.path.expanduser(path))
    full = os.path.normpath(str(p if p.is_absolute() else base / p))
    return f"{full}:{column}" if column else full


def resolve_selection(section: Mapping | None, *, base: Path, resamples: int, source: str | None,
                      scenarios: Sequence[Mapping] = ()) -> dict | None:
    """The ``selection`` section with every default filled in (``None`` without one); an error
    when every scenario's collection is a stack."""
    if section is None:
        return None
    if scenarios and all("stack" in sc["collection"] for sc in scenarios):
        raise ConfigError("needs a collection that is not a stack (a stack's strata hold different systems)",
                          key="selection", file=source)
    out = {**SELECTION_DEFAULTS, "resamples": resamples, **dict(section)}
    try:
        check_budget(out["budget"], out["accuracy"], out["width"])
    except ParameterError as exc:
        raise ConfigError(exc.message, key=f"selection.{exc.parameter}", file=source) from None
    out["groups"] = _resolve_groups(out["groups"], base)
    return out


@dataclasses.dataclass(frozen=True, repr=False)
class StudySelection(ResultMixin):
    """Selection on the test topics for one collection and measure of a study.

    Attributes
    ----------
    collection : str
        The collection's label.
    measure : str or None
        The measure.
    bias : SelectionBias
        Optimism and pick accuracy against ``n_dev`` (and ``k``).
    plan : SplitPlan or None
        The dev/test split that meets the targets (with ``accuracy`` and/or ``width``).
    """

    collection: str
    measure: str | None
    bias: SelectionBias
    plan: SplitPlan | None = None

    def __repr__(self) -> str:
        return short_repr(self, ("collection", "measure"))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready; the plan without the table of every split it tried (``selection_split.csv``
        holds those of the chosen budget)."""
        plan = None
        if self.plan is not None:
            plan = {f.name: getattr(self.plan, f.name) for f in dataclasses.fields(self.plan)
                    if f.name != "selection"}
        return {"collection": self.collection, "measure": self.measure, "bias": self.bias.to_dict(), "plan": plan}


def _collections(scens: Sequence[Any]) -> list[tuple[dict, str | None]]:
    """(collection, measure) of every scenario, once each; stacks left out."""
    out: list[tuple[dict, str | None]] = []
    seen = set()
    for s in scens:
        coll, measure = s.settings["collection"], s.settings["measure"]
        key = (coll.get("label"), measure)
        if "stack" in coll or key in seen:
            continue
        seen.add(key)
        out.append((coll, measure))
    return out


def _one(coll: dict, measure: Any, sel: Mapping, seed: int) -> StudySelection:
    m, _ = load_scores(coll, measure, "collection")
    common = {"margin": sel["margin"], "confidence_level": sel["confidence_level"],
              "n_resamples": sel["resamples"], "rng": seed}
    bias = selection_bias(m, sel["groups"], n_dev=sel["n_dev"], n_test=sel["n_test"], k=sel["k"], **common)
    plan = None
    if sel["accuracy"] is not None or sel["width"] is not None:
        k = sel["k"] if not isinstance(sel["k"], list) else None      # several k: whole groups
        plan = plan_split(m, sel["groups"], accuracy=sel["accuracy"], width=sel["width"], budget=sel["budget"],
                          k=k, **common)
    return StudySelection(collection=str(coll.get("label")), measure=m.measure, bias=bias, plan=plan)


def run_selection(sel: Mapping | None, scens: Sequence[Any], seed: int) -> tuple[StudySelection, ...]:
    """The section on every collection of the grid (empty without a section).

    A bad option (a group of one, a group naming an unknown system, too many dev topics) is a
    :class:`ConfigError` naming ``selection.<key>``.
    """
    if sel is None:
        return ()
    out = []
    for coll, measure in _collections(scens):
        try:
            out.append(_one(coll, measure, sel, seed))
        except ParameterError as exc:
            key = {"n_resamples": "resamples"}.get(str(exc.parameter), exc.parameter)
            where = f"selection.{key}" if key in sel else "selection"
            raise ConfigError(f"{coll.get('label')}: {exc.message}", key=where) from None
        except InputError as exc:
            if exc.file is not None and str(exc.file) in str(sel["groups"]):
                raise ConfigError(str(exc), key="selection.groups") from None
            raise
    return tuple(out)


def selection_tables(sels: Sequence[StudySelection]) -> dict[str, pd.DataFrame]:
    """``selection`` (every group's and the ``all`` rows, per collection) and, with targets,
    ``selection_split`` (the ``all`` rows of the splits of each plan's budget)."""
    if not sels:
        return {}
    rows, splits = [], []
    for s in sels:
        t = s.bias.table.copy()
        t.insert(0, "measure", s.measure)
        t.insert(0, "collection", s.collection)
        rows.append(t)
        if s.plan is not None:
            p = s.plan.to_frame()
            # the splits of the chosen budget (none met: of the largest budget tried)
            budget = s.plan.budget if s.plan.budget is not None else int((p["n_dev"] + p["n_test"]).max())
            p = p[p["n_dev"] + p["n_test"] == budget]
            p = p.drop(columns="group")
            p.insert(0, "chosen", (p["n_dev"] == s.plan.n_dev) & (p["n_test"] == s.plan.n_test))
            p.insert(0, "measure", s.measure)
            p.insert(0, "collection", s.collection)
            splits.append(p)
    out = {"selection": pd.concat(rows, ignore_index=True)}
    if splits:
        out["selection_split"] = pd.concat(splits, ignore_index=True)
    return out

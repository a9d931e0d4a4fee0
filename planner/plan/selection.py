"""Selection on the test topics: optimism of the best of k, pick accuracy, dev/test splits.

A group of ``k`` candidate configurations (a team's runs, a sweep's checkpoints) is scored
on the same topics; one is picked by its mean on ``n_dev`` *dev* topics and reported on
``n_test`` other *test* topics. Each resample draws a random permutation of the
collection's ``N`` topics; its first ``n_dev`` are the dev topics and the next ``n_test``
(default all the rest) the test topics (no topic in both). Per group and resample:

- ``chosen`` = the candidate with the highest dev mean (the first, on a tie);
- **optimism** = its dev mean minus its test mean: how much the score of the best of k on
  the topics it was chosen on overstates its score on new topics. Averaged over resamples.
- **pick accuracy** = the share of resamples in which the chosen candidate's test mean is
  at least the best test mean of the group minus ``margin`` (``margin=0``: it is the best on
  the test topics, ties counting as right). The test topics stand for "new topics".
- **interval width** = the width of the ``confidence_level`` t-interval of the chosen
  candidate's mean over the test topics, ``2 t_{(1+cl)/2}(n_test-1) s / sqrt(n_test)``,
  averaged over resamples: what the reported score's interval will be.

With ``k`` smaller than a group, each resample also draws ``k`` of its candidates at random
(without replacement), so optimism and accuracy can be read as functions of ``k`` and ``n``.

Groups come from :func:`planner.plan.groups.resolve_groups`. A rule (``"prefix"``,
``"regex:..."``) may leave a system alone in its group: such groups are set aside and listed
in ``skipped``; a mapping or file that gives a group one system is an error (there is no
selection in a group of one). The ``all`` rows average the groups, each group weighing the same.

Splitting a budget (:func:`plan_split`): for ``B`` topics (at most ``N``), every split
``n_dev + n_test = B`` with both at least 2 is evaluated on the same permutations; a split
meets the targets when the ``all`` pick accuracy is at least ``accuracy`` and the ``all``
mean interval width is at most ``width``. The recommended split is the feasible one with the
fewest dev topics (the most test topics: the narrowest interval). With ``budget=None`` the
smallest ``B`` with a feasible split is found. Splits of more topics than the collection has
are not estimated (no topic may be in both halves, and resampling with replacement would put
copies of one topic on both sides).

Monte Carlo error: ``optimism_se`` is the standard deviation over resamples divided by
``sqrt(n_resamples)``, ``pick_accuracy_se`` the binomial ``sqrt(p (1 - p) / n_resamples)``.
Resamples share topics, so these describe the Monte Carlo error of the estimate on this
collection, not the error of the collection itself.

Memory: per group ``8 x size x n_resamples x N`` bytes for each of the permuted scores, their
squares and their two cumulative sums; a group whose draws would pass :data:`MAX_DRAW_MEMORY`
is refused before any is made (:func:`check_draw_memory`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._checks import check_int, check_open_unit
from .._random import as_generator, keyed_stream, seed_of, seed_to_use
from ..collection.load import as_matrix
from ..errors import ParameterError
from ..results import ResultMixin, short_repr
from .groups import group_members, resolve_groups

__all__ = ["MAX_DRAW_MEMORY", "SelectionBias", "SplitPlan", "check_budget", "check_draw_memory", "plan_split",
           "selection_bias"]

#: bytes the permuted scores of one group may take (4 arrays of size x n_resamples x (N + 1) float64)
MAX_DRAW_MEMORY = 256 << 20


def check_draw_memory(size: int, n_resamples: int, n_topics: int) -> None:
    """A ParameterError naming ``n_resamples`` when a group of ``size`` systems would need more than
    :data:`MAX_DRAW_MEMORY` for its draws.

    Examples
    --------
    >>> check_draw_memory(37, 1000, 43)        # DL 2019: 51 MB
    >>> check_draw_memory(2220, 1000, 30)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    planner.errors.ParameterError: n_resamples: 1,000 resamples of 2,220 systems x 30 topics need 2,100 MB ...
    """
    per = 32 * size * (n_topics + 1)
    if per * n_resamples > MAX_DRAW_MEMORY:
        raise ParameterError(f"{n_resamples:,} resamples of {size:,} systems x {n_topics:,} topics need "
                             f"{per * n_resamples / 2**20:,.0f} MB of draws, over the limit of "
                             f"{MAX_DRAW_MEMORY >> 20} MB (MAX_DRAW_MEMORY); use at most "
                             f"{MAX_DRAW_MEMORY // per:,} resamples, or smaller groups", parameter="n_resamples")


@dataclasses.dataclass(frozen=True, repr=False)
class SelectionBias(ResultMixin):
    """Optimism and pick accuracy of the best of k (module docstring).

    Attributes
    ----------
    measure : str or None
        The scores' measure.
    n_topics : int
        Topics in the collection (``N``).
    groups : dict
        ``{group: [systems]}`` of the groups used.
    skipped : tuple of str
        Groups set aside: one system (rules only), or fewer than ``k``.
    margin, confidence_level : float
        As given.
    n_resamples : int
        Topic permutations drawn.
    seed : int or None
        The seed, when given (or drawn) as an integer.
    table : pandas.DataFrame
        One row per group (and ``all``), ``k`` and split: ``group, k, n_dev, n_test, optimism,
        optimism_se, pick_accuracy, pick_accuracy_se, width``.
    """

    measure: str | None
    n_topics: int
    groups: dict
    skipped: tuple[str, ...]
    margin: float
    confidence_level: float
    n_resamples: int
    seed: int | None
    table: pd.DataFrame

    def __repr__(self) -> str:
        a = self.table[self.table["group"] == "all"]
        head = short_repr(self, ("measure", "n_topics", "n_resamples"))[:-1]
        return f"{head}, groups={len(self.groups)}, splits={len(a)})"

    def to_dict(self) -> dict[str, Any]:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "table"}
        out["skipped"] = list(self.skipped)
        out["table"] = [{k: (v.item() if hasattr(v, "item") else v) for k, v in r.items()}
                        for r in self.table.to_dict("records")]
        return out

    def to_frame(self) -> pd.DataFrame:
        """The table."""
        return self.table.copy()


@dataclasses.dataclass(frozen=True, repr=False)
class SplitPlan(ResultMixin):
    """The dev/test split of a budget that meets the targets (module docstring).

    Attributes
    ----------
    budget : int or None
        Topics in the split (``n_dev + n_test``); ``None`` when no budget up to ``N`` meets them.
    n_dev, n_test : int or None
        The recommended split (``None`` when none meets the targets).
    pick_accuracy, width : float
        Its ``all`` pick accuracy and mean interval width.
    met : bool
        Whether the targets are met.
    accuracy_target, width_target : float or None
        The targets.
    selection : SelectionBias
        Every split evaluated (for the budget given, or for every budget tried).
    """

    budget: int | None
    n_dev: int | None
    n_test: int | None
    pick_accuracy: float
    width: float
    met: bool
    accuracy_target: float | None
    width_target: float | None
    selection: SelectionBias

    def __repr__(self) -> str:
        return short_repr(self, ("budget", "n_dev", "n_test", "pick_accuracy", "width"))[:-1] + f", met={self.met})"

    def to_frame(self) -> pd.DataFrame:
        """Every split evaluated (the ``all`` rows)."""
        t = self.selection.table
        return t[t["group"] == "all"].reset_index(drop=True)


# ------------------------------------------------------------------ inputs
def _groups(systems: Sequence[str], groups: Any, k: int | None) -> tuple[dict[str, list[str]], list[str]]:
    mapping = resolve_groups(systems, groups)
    members = group_members(mapping)
    is_rule = callable(groups) or (isinstance(groups, str) and (groups == "prefix" or groups.startswith("regex:")))
    if not is_rule:
        lone = [g for g, m in members.items() if len(m) < 2]
        if lone:
            raise ParameterError(f"group {lone[0]!r} has one system ({members[lone[0]][0]}): "
                                 "a selection needs at least 2 candidates", parameter="groups")
    need = max(2, k or 2)
    used = {g: m for g, m in members.items() if len(m) >= need}
    skipped = [g for g in members if g not in used]
    if not used:
        raise ParameterError(f"no group has {need} or more systems", parameter="groups")
    return used, skipped


def _splits(n_dev: Any, n_test: Any, N: int) -> list[tuple[int, int]]:
    if n_dev is None:
        n_dev = [n for n in (5, 10, 15, 20, 25, 30, 40, 50, 75, 100) if n <= N - 2] or [N // 2]
    devs = [n_dev] if isinstance(n_dev, (int, np.integer)) else list(n_dev)
    out = []
    for d in devs:
        d = check_int(d, "n_dev", minimum=2)
        t = N - d if n_test is None else check_int(n_test, "n_test", minimum=2)
        if t < 2 or d + t > N:
            raise ParameterError(f"n_dev {d} + n_test {t} must leave at least 2 test topics and fit in the "
                                 f"collection's {N} topics", parameter="n_dev" if n_test is None else "n_test")
        out.append((d, t))
    return out


# ------------------------------------------------------------------ core
@dataclasses.dataclass(frozen=True)
class _Draws:
    """Cumulative sums of one group's scores (and squares) along permuted topics, and the
    candidate mask of each resample."""

    c1: np.ndarray       # (size, R, N + 1)
    c2: np.ndarray
    mask: np.ndarray     # (size, R) bool: the candidate is among the k drawn


def _draws(x: np.ndarray, perms: np.ndarray, k: int | None, stream: np.random.Generator) -> _Draws:
    xp = x[:, perms]                                             # (size, R, N)
    zero = np.zeros(xp.shape[:2] + (1,))
    c1 = np.concatenate([zero, np.cumsum(xp, axis=2)], axis=2)
    c2 = np.concatenate([zero, np.cumsum(xp * xp, axis=2)], axis=2)
    size, R = x.shape[0], perms.shape[0]
    if k is None or k >= size:
        mask = np.ones((size, R), dtype=bool)
    else:
        order = np.argsort(stream.random((R, size)), axis=1)[:, :k]
        mask = np.zeros((size, R), dtype=bool)
        mask[order.T, np.arange(R)[None, :]] = True
    return _Draws(c1, c2, mask)


def _one_split(d: _Draws, n_dev: int, n_test: int, margin: float, cl: float) -> dict[str, float]:
    R = d.c1.shape[1]
    end = n_dev + n_test
    dev = d.c1[:, :, n_dev] / n_dev
    s1 = d.c1[:, :, end] - d.c1[:, :, n_dev]
    test = s1 / n_test
    pick = np.argmax(np.where(d.mask, dev, -np.inf), axis=0)     # first on a tie
    r = np.arange(R)
    opt = dev[pick, r] - test[pick, r]
    best = np.max(np.where(d.mask, test, -np.inf), axis=0)
    right = test[pick, r] >= best - margin - 1e-12
    ss = d.c2[pick, r, end] - d.c2[pick, r, n_dev]
    var = np.maximum(ss - n_test * test[pick, r] ** 2, 0.0) / (n_test - 1)
    width = 2 * stats.t.ppf((1 + cl) / 2, n_test - 1) * np.sqrt(var / n_test)
    acc = float(right.mean())
    return {"optimism": float(opt.mean()), "optimism_se": float(opt.std(ddof=1) / np.sqrt(R)),
            "pick_accuracy": acc, "pick_accuracy_se": float(np.sqrt(acc * (1 - acc) / R)),
            "width": float(width.mean())}


def _table(m: Any, members: dict[str, list[str]], splits: list[tuple[int, int]], ks: list[int | None],
           perms: np.ndarray, margin: float, cl: float, rng: Any) -> pd.DataFrame:
    index = {s: i for i, s in enumerate(m.systems)}
    x = m.topic_scores()
    rows = []
    for g, systems in members.items():
        xg = x[[index[s] for s in systems]]
        for k in ks:
            if k is not None and k > len(systems):
                continue
            draws = _draws(xg, perms, k, keyed_stream(rng, f"{g}:{k}"))
            for n_dev, n_test in splits:
                rows.append({"group": g, "k": len(systems) if k is None else k, "k_asked": -1 if k is None else k,
                             "n_dev": n_dev,
                             "n_test": n_test, **_one_split(draws, n_dev, n_test, margin, cl)})
    df = pd.DataFrame(rows)
    return pd.concat([df, _all_rows(df)], ignore_index=True).drop(columns="k_asked")


def _all_rows(df: pd.DataFrame) -> pd.DataFrame:
    """The mean over groups, each weighing the same; standard errors combined as independent."""
    def agg(g: pd.DataFrame) -> pd.Series:
        n = len(g)
        return pd.Series({"optimism": g["optimism"].mean(),
                          "optimism_se": float(np.sqrt((g["optimism_se"] ** 2).sum()) / n),
                          "pick_accuracy": g["pick_accuracy"].mean(),
                          "pick_accuracy_se": float(np.sqrt((g["pick_accuracy_se"] ** 2).sum()) / n),
                          "width": g["width"].mean()})
    out = df.groupby(["k_asked", "n_dev", "n_test"], sort=False)[
        ["optimism", "optimism_se", "pick_accuracy", "pick_accuracy_se", "width"]].apply(agg).reset_index()
    out["k"] = out["k_asked"]
    out.insert(0, "group", "all")
    return out[["group", "k", "k_asked", "n_dev", "n_test", "optimism", "optimism_se", "pick_accuracy",
                "pick_accuracy_se", "width"]]


def _ks(k: Any) -> list[int | None]:
    if k is None:
        return [None]
    ks = [k] if isinstance(k, (int, np.integer)) else list(k)
    return [check_int(v, "k", minimum=2) for v in ks]


def _perms(rng: Any, R: int, N: int) -> np.ndarray:
    gen = keyed_stream(rng, "topic permutations")
    return np.argsort(gen.random((R, N)), axis=1)


def selection_bias(scores: Any, groups: Any = "prefix", *, n_dev: Any = None, n_test: int | None = None,
                   k: Any = None, margin: float = 0.0, confidence_level: float = 0.95,
                   n_resamples: int = 1000, rng: Any = None) -> SelectionBias:
    """Optimism of the best of k and pick accuracy at ``n_dev`` dev topics (module docstring).

    Parameters
    ----------
    scores : ScoreMatrix or path or array_like
        Systems x topics (``planner.datasets.load("dl19-passage")``, a score file, ...).
    groups : str or Mapping or callable
        Groups of candidates (:func:`planner.plan.groups.resolve_groups`); default the
        run-name prefix rule.
    n_dev : int or sequence of int, optional
        Dev topic counts (default 5, 10, 15, ... up to ``N - 2``).
    n_test : int, optional
        Test topics (default: all the others).
    k : int or sequence of int, optional
        Candidates drawn from each group per resample (default: the whole group). In the
        ``all`` rows, ``k = -1`` stands for "whole groups" (their sizes differ).
    margin : float
        A pick is right when within ``margin`` of the best test mean.
    confidence_level : float
        Of the reported score's t-interval.
    n_resamples : int
        Topic permutations.
    rng : int or numpy.random.Generator or None
        Seed; ``None`` draws one (recorded in ``seed``).

    Returns
    -------
    SelectionBias

    Examples
    --------
    >>> from planner.datasets import load
    >>> sb = selection_bias(load("dl19-passage"), n_dev=[10, 30], n_resamples=200, rng=1)
    >>> sb.table[sb.table.group == "all"][["n_dev", "n_test"]].values.tolist()
    [[10, 33], [30, 13]]
    """
    m = as_matrix(scores).collapse_variants()
    return _run(m, groups, _splits(n_dev, n_test, m.n_topics), k, margin, confidence_level, n_resamples, rng)


def plan_split(scores: Any, groups: Any = "prefix", *, accuracy: float | None = 0.8, width: float | None = None,
               budget: int | None = None, margin: float = 0.0, k: int | None = None,
               confidence_level: float = 0.95, n_resamples: int = 1000, rng: Any = None) -> SplitPlan:
    """The dev/test split of ``budget`` topics (or the smallest budget) that meets the targets.

    ``accuracy``: the pick accuracy to reach (the ``all`` rows); ``width``: the largest mean
    interval width of the reported score. At least one must be given. Other parameters as
    for :func:`selection_bias`.

    Examples
    --------
    >>> from planner.datasets import load
    >>> p = plan_split(load("dl19-passage"), accuracy=0.5, margin=0.02, budget=43, n_resamples=200, rng=1)
    >>> p.met, p.n_dev + p.n_test
    (True, 43)
    """
    if accuracy is None and width is None:
        raise ParameterError("give a target: accuracy, width or both", parameter="accuracy")
    acc = None if accuracy is None else check_open_unit(accuracy, "accuracy")
    if width is not None and not float(width) > 0:
        raise ParameterError(f"must be > 0, got {width!r}", parameter="width")
    m = as_matrix(scores).collapse_variants()
    N = m.n_topics
    budgets = [check_int(budget, "budget", minimum=4)] if budget is not None else list(range(4, N + 1))
    if budgets[-1] > N:
        raise ParameterError(f"at most the collection's {N} topics can be split", parameter="budget")
    splits = [(d, b - d) for b in budgets for d in range(2, b - 1)]
    sb = _run(m, groups, splits, k, margin, confidence_level, n_resamples, rng)
    return _choose(sb, acc, None if width is None else float(width))


def check_budget(budget: int | None, accuracy: float | None, width: float | None) -> None:
    """A budget is split only to meet a target: without ``accuracy`` or ``width`` it has no
    effect, which is an error (``planner select --budget``, a study's ``selection.budget``).

    Examples
    --------
    >>> check_budget(30, None, None)
    Traceback (most recent call last):
    ...
    planner.errors.ParameterError: budget: has no effect without a target: give accuracy, width or both
    """
    if budget is not None and accuracy is None and width is None:
        raise ParameterError("has no effect without a target: give accuracy, width or both", parameter="budget")


def _run(m: Any, groups: Any, splits: list[tuple[int, int]], k: Any, margin: float, cl: Any, R: Any,
         rng: Any) -> SelectionBias:
    """Check the options once, draw the permutations, fill the table."""
    if m.has_missing:
        raise ParameterError("selection needs every system scored on every topic", parameter="scores")
    ks = _ks(k)
    members, skipped = _groups(m.systems, groups, min(v or 2 for v in ks))
    if not margin >= 0:
        raise ParameterError(f"must be >= 0, got {margin!r}", parameter="margin")
    cl = check_open_unit(cl, "confidence_level", what="level")
    R = check_int(R, "n_resamples", minimum=10)
    check_draw_memory(max(len(v) for v in members.values()), R, m.n_topics)
    rng = seed_to_use(rng)
    gen = as_generator(rng)
    table = _table(m, members, splits, ks, _perms(gen, R, m.n_topics), float(margin), cl, gen)
    return SelectionBias(measure=m.measure, n_topics=m.n_topics, groups=members, skipped=tuple(skipped),
                         margin=float(margin), confidence_level=cl, n_resamples=R, seed=seed_of(rng), table=table)


def _choose(sb: SelectionBias, acc: float | None, width: float | None) -> SplitPlan:
    t = sb.table[sb.table["group"] == "all"].copy()
    t["budget"] = t["n_dev"] + t["n_test"]
    ok = np.ones(len(t), dtype=bool)
    if acc is not None:
        ok &= t["pick_accuracy"].to_numpy() >= acc
    if width is not None:
        ok &= t["width"].to_numpy() <= width
    feasible = t[ok].sort_values(["budget", "n_dev"])
    if feasible.empty:
        best = t.sort_values("pick_accuracy", ascending=False).iloc[0]
        return SplitPlan(budget=None, n_dev=None, n_test=None, pick_accuracy=float(best["pick_accuracy"]),
                         width=float(best["width"]), met=False, accuracy_target=acc, width_target=width,
                         selection=sb)
    r = feasible.iloc[0]
    return SplitPlan(budget=int(r["budget"]), n_dev=int(r["n_dev"]), n_test=int(r["n_test"]),
                     pick_accuracy=float(r["pick_accuracy"]), width=float(r["width"]), met=True,
                     accuracy_target=acc, width_target=width, selection=sb)

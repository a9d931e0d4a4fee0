"""Scenario axes: the topics each measure, stratum mode or topic filter needs for one target.

:func:`topics_needed` reads the smallest count of a curve that meets a target;
:func:`compare_measures` and :func:`scenarios` run :func:`planner.simulate.predict` over
measures, or over stratum modes x informative-topic filters, and tabulate it.

Examples
--------
>>> import planner
>>> from planner.simulate import topics_needed
>>> scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
>>> curve = planner.predict(scores, topics=[10, 20, 40, 80, 160], method="analytic")
>>> topics_needed(curve, target="swap_rate", value=0.05)
160
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .._json import plain as _plain
from .._random import as_generator, keyed_stream, seed_of
from ..errors import ParameterError
from ..methods import METHODS, TARGETS, Target, target_names
from ..results import ResultMixin
from ..scores import ScoreMatrix
from .checks import check_method, complete_matrix, seed_to_use, topic_counts
from .curve import Curve
from .extrapolation import EXTRAPOLATED
from .informative import filter_informative
from .predict import predict

__all__ = ["ScenarioTable", "check_target", "compare_measures", "default_grid", "scenarios", "topics_needed"]


def target_of(name: str) -> Target:
    """The registered target ``name`` (checked by :func:`check_target`)."""
    return TARGETS[name]


def check_target(target: str, value) -> Target:
    """The registered target, or a :class:`ParameterError`; ``value`` must be a finite number."""
    if target not in TARGETS:
        raise ParameterError(f"unknown target {target!r}; expected one of " + ", ".join(target_names()),
                             parameter="target")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ParameterError(f"expected a number, got {value!r}", parameter="value")
    return TARGETS[target]


def topics_needed(curve: Curve, *, target: str = "swap_rate", value: float = 0.05) -> int | None:
    """Smallest topic count of ``curve`` whose row meets the target (``None`` if none does).

    Only the counts in the curve are candidates (no interpolation); extrapolated
    rows (subsample) count only for the statistics the extrapolation fills (swap rate
    and Kendall tau).

    Parameters
    ----------
    curve : Curve
        A result of :func:`planner.simulate.predict`.
    target : str, optional
        A target of :data:`planner.methods.TARGETS`.
    value : float, optional
        The threshold the target's statistic must meet.

    Returns
    -------
    int or None
        The smallest count that meets it.

    Examples
    --------
    >>> import planner
    >>> scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> curve = planner.predict(scores, topics=[10, 40], method="analytic")
    >>> topics_needed(curve, target="kendall_tau", value=0.99) is None
    True
    """
    t = check_target(target, value)
    best = None
    for r in curve.rows:
        v = r.get(t.statistic)
        if v is None or not math.isfinite(v):
            continue
        if r.get("extrapolated") and t.statistic not in EXTRAPOLATED:
            continue
        if t.met(v, value) and (best is None or r["n_topics"] < best):
            best = r["n_topics"]
    return best


def default_grid(n_collection_topics: int, method: str) -> tuple[int, ...]:
    """Topic counts used when a scenario call gets none: for the closed-form methods
    5, 10, ..., 100, then steps of 20 to 300 and of 50 to 1000; for the random
    methods 12 evenly spaced counts from 5 to ``2 T`` (``T / 2`` for a disjoint one)."""
    m = METHODS.get(method)
    if m is not None and m.closed_form:
        return tuple(list(range(5, 101, 5)) + list(range(120, 301, 20)) + list(range(350, 1001, 50)))
    hi = max(6, 2 * n_collection_topics)
    if m is not None and m.disjoint:
        hi = max(6, n_collection_topics // 2)
    return tuple(int(v) for v in np.unique(np.linspace(5, hi, 12).astype(int)))


@dataclass(frozen=True, repr=False)
class ScenarioTable(ResultMixin):
    """Topics each scenario needs for one target (see :func:`compare_measures`, :func:`scenarios`).

    Attributes:
        target, value: the target (``TARGETS`` key) and its threshold.
        method: the prediction method.
        rows: one dict per scenario: ``scenario``, ``measure``, ``strata``,
            ``filter`` (thresholds or ``None``), ``removed_topics``,
            ``n_collection_topics``, ``topics_needed`` (``None`` when no count of
            the grid meets the target), ``value_at_needed`` and ``note``.
        curves: scenario name -> :class:`Curve` (each drew from a stream of the seed keyed
            on its name, so its own ``seed`` is ``None``).
        seed: the integer seed given, or drawn when ``rng=None`` and the method is
            random (``rng=seed`` repeats the table); ``None`` for a Generator or a
            closed-form method given no seed.
    """

    _repr_fields = ('target', 'value', 'method', 'seed')

    target: str
    value: float
    method: str
    rows: tuple[dict, ...]
    curves: dict
    seed: int | None = None

    def to_dict(self) -> dict:
        return {"target": self.target, "value": float(self.value), "method": self.method,
                "seed": self.seed, "rows": [_plain(r) for r in self.rows],
                "curves": {k: c.to_dict() for k, c in self.curves.items()}}

    def to_frame(self):
        import pandas as pd  # heavy, and needed only here

        return pd.DataFrame([dict(r) for r in self.rows])


def _scenario_row(name, curve, *, target, value, measure, strata, filt, removed, T):
    need = topics_needed(curve, target=target, value=value)
    key = target_of(target).statistic
    at = None if need is None else curve.row(need)[key]
    note = ""
    if filt is not None:
        note = "filtered mean: not comparable with the unfiltered one"
    if need is None:
        note = (note + "; " if note else "") + f"no count up to {max(curve.topics)} meets the target"
    return {"scenario": name, "measure": measure, "strata": strata, "filter": filt,
            "removed_topics": list(removed), "n_removed": len(removed), "n_collection_topics": T,
            "topics_needed": need, "value_at_needed": at, "note": note}


def _predict_options(options: Mapping, caller: str, own: Sequence[str]) -> None:
    """The ``**options`` a scenario function passes on must be :func:`predict`'s, and not
    one the function sets itself (``own``)."""
    known = [p for p in inspect.signature(predict).parameters if p != "scores"]
    for k in options:
        if k in own:
            raise ParameterError(f"{caller}() sets {k!r} itself for every scenario", parameter=k)
        if k not in known:
            passed = ", ".join(p for p in known if p not in own)
            raise ParameterError(f"unknown option of {caller}() (it passes these on to predict(): "
                                 f"{passed})", parameter=k)


def compare_measures(scores_by_measure: Mapping[str, ScoreMatrix], *, target: str = "swap_rate",
                     value: float = 0.05, topics: Sequence[int] | None = None,
                     method: str = "analytic", rng=None, **options) -> ScenarioTable:
    """The topics each measure needs for the same target (same systems, several measures).

    ``scores_by_measure`` maps a measure name to its scores (anything :func:`predict`
    accepts); every matrix must hold the same systems. ``topics`` defaults to
    :func:`default_grid`; ``options`` go to :func:`predict` (an option it does not take
    is a :class:`ParameterError` naming it). Each measure gets its own random stream,
    keyed on its name, so its numbers do not depend on the other measures listed or their
    order; the table records the seed
    (:attr:`ScenarioTable.seed`, drawn when ``rng=None`` and the method is random).

    Parameters
    ----------
    scores_by_measure : mapping
        Measure name -> scores of the same systems.
    target : str, optional
        A target of :data:`planner.methods.TARGETS`.
    value : float, optional
        The target's threshold.
    topics : sequence of int, optional
        The topic counts tried (:func:`default_grid` by default).
    method : str, optional
        The prediction method.
    rng : int, Generator or None, optional
        The seed (drawn and recorded when None and the method is random).
    **options
        Passed on to :func:`planner.simulate.predict`.

    Returns
    -------
    ScenarioTable
        One row per measure, with its curve.

    Examples
    --------
    >>> import planner
    >>> from planner.simulate import compare_measures
    >>> ndcg = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> table = compare_measures({"nDCG@10": ndcg}, target="swap_rate", value=0.05, topics=[40, 80, 160])
    >>> [(r["scenario"], r["topics_needed"]) for r in table.rows]
    [('nDCG@10', 160)]
    """
    check_target(target, value)
    _predict_options(options, "compare_measures", ("topics", "method", "rng", "keep_pairs"))
    if not isinstance(scores_by_measure, Mapping) or len(scores_by_measure) < 1:
        raise ParameterError("expected a mapping measure -> ScoreMatrix", parameter="scores_by_measure")
    mats = {str(k): complete_matrix(v, "scores_by_measure") for k, v in scores_by_measure.items()}
    first = next(iter(mats.values()))
    for k, v in mats.items():
        if set(v.systems) != set(first.systems):
            raise ParameterError(f"measure {k!r} holds other systems than the first measure",
                                 parameter="scores_by_measure")
    meth = check_method(method)
    rng = seed_to_use(rng, meth)
    base = as_generator(rng).spawn(1)[0]
    rows, curves = [], {}
    for name, mat in mats.items():
        g = keyed_stream(base, name)       # a measure's numbers do not depend on the others listed
        grid = topic_counts(topics) if topics is not None else default_grid(mat.n_topics, method)
        c = predict(mat, topics=grid, method=method, rng=g, keep_pairs=False, **options)
        curves[name] = c
        rows.append(_scenario_row(name, c, target=target, value=value, measure=name, strata=c.strata,
                                  filt=None, removed=(), T=mat.n_topics))
    return ScenarioTable(target=target, value=float(value), method=method, rows=tuple(rows), curves=curves,
                         seed=seed_of(rng))


def _check_filters(filters) -> tuple:
    filters = tuple(filters)
    for f in filters:
        if f is not None and not isinstance(f, Mapping):
            raise ParameterError("each filter is None or a dict of lo/hi/min_spread", parameter="filters")
        if f is not None and set(f) - {"lo", "hi", "min_spread"}:
            raise ParameterError(f"unknown filter key(s) {sorted(set(f) - {'lo', 'hi', 'min_spread'})}",
                                 parameter="filters")
    return filters


def scenarios(scores, *, target: str = "swap_rate", value: float = 0.05,
              topics: Sequence[int] | None = None, method: str = "bootstrap",
              strata: Sequence[str] = ("uniform", "proportional", "optimal"),
              filters: Sequence[Mapping | None] = (None,), costs: Mapping[str, float] | None = None,
              rng=None, **options) -> ScenarioTable:
    """One call over the scenario axes: stratum modes x informative-topic filters.

    ``strata``: modes of :func:`predict` (the stratified ones need strata on the
    topics; ``"uniform"`` is always possible). ``filters``: ``None`` (no filter)
    or dicts of :func:`filter_informative` thresholds (``lo``, ``hi``,
    ``min_spread``); each row lists the removed topics. ``costs`` go to the
    ``"optimal"`` scenarios only (and are an error when there is none). ``options``
    go to :func:`predict`, as in :func:`compare_measures`. Each scenario draws from a
    stream keyed on its name (:func:`planner._random.keyed_stream`), so its numbers do not
    depend on the other scenarios listed; the table records the seed, as in
    :func:`compare_measures`.

    Examples
    --------
    >>> import planner
    >>> from planner.simulate import scenarios
    >>> ndcg = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> table = scenarios(ndcg, method="analytic", strata=["uniform"], topics=[10, 40, 80],
    ...                   filters=[None, {"min_spread": 0.05}])
    >>> [r["scenario"] for r in table.rows]
    ['strata=uniform; filter=off', 'strata=uniform; filter=min_spread=0.05']
    """
    check_target(target, value)
    _predict_options(options, "scenarios", ("topics", "method", "rng", "keep_pairs", "strata", "costs"))
    meth = check_method(method)
    m = complete_matrix(scores)
    strata = (strata,) if isinstance(strata, str) else tuple(strata)
    if costs is not None and "optimal" not in strata:
        raise ParameterError("costs apply only to strata='optimal', which is not among the scenarios' "
                             f"strata {strata!r}", parameter="costs")
    filters = _check_filters(filters)
    rng = seed_to_use(rng, meth)
    base = as_generator(rng).spawn(1)[0]
    rows, curves = [], {}
    removed: tuple[str, ...]
    for f in filters:
        if f is None:
            mat, removed = m, ()
        else:
            mat, removed = filter_informative(m, **f)
        for mode in strata:
            fname = "off" if f is None else ",".join(f"{k}={f[k]:g}" for k in sorted(f))
            name = f"strata={mode}; filter={fname}"
            grid = topic_counts(topics) if topics is not None else default_grid(mat.n_topics, method)
            # a stream keyed on the scenario's name: its numbers do not depend on the others listed
            c = predict(mat, topics=grid, method=method, strata=mode, costs=costs if mode == "optimal" else None,
                        rng=keyed_stream(base, name), keep_pairs=False, **options)
            curves[name] = c
            rows.append(_scenario_row(name, c, target=target, value=value, measure=mat.measure,
                                      strata=mode, filt=None if f is None else dict(f), removed=removed,
                                      T=mat.n_topics))
    return ScenarioTable(target=target, value=float(value), method=method, rows=tuple(rows), curves=curves,
                         seed=seed_of(rng))

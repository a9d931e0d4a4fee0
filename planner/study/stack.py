"""A scenario on a stack of collections: each collection a stratum with its own systems.

The statistics (allocation, stratified width and power, the weighted D-study, the topic
resampling within strata) are :mod:`planner.plan.stacked`'s; this module fits each stratum, runs its
own curve and honest statement, and lays the results out as a scenario result.
"""

from __future__ import annotations

import hashlib
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import methods
from ..plan import StackedStrata, jackknife_intervals, paired_bootstrap, resampled_n
from ..results import Interval
from ..simulate import predict
from ..variance import fit
from .inputs import data_stream, judged_share, load_scores
from .results import NO_INTERVAL as _NONE
from .results import (
    HonestStatement,
    ScenarioComponents,
    ScenarioCurve,
    ScenarioData,
    ScenarioResult,
    ScenarioTarget,
    SolveKind,
    answer_count,
    plan_count,
)
from .schema import SETTINGS_KEYS, STACK_TARGETS
from .targets import INTERVAL_RESAMPLES, chooses_variance

__all__ = ["run_stacked"]



@dataclass(frozen=True)
class _Stratum:
    """One stacked collection, fitted, with its own curve and honest statement."""

    label: str
    measure: str
    components: Any
    matrix: np.ndarray                # complete: the study's schema takes no missing cells
    topics: list
    rows: list
    honest: HonestStatement
    inputs: list
    n_systems: int
    n_topics: int
    source: str


def _stratum(i: int, coll: dict, sc: dict, streams: list, resamples: int, seed: int | None) -> _Stratum:
    m, inp = load_scores(coll, sc["measure"], f"collection.stack[{i}]")
    measure = sc["measure"] or m.measure or "score"
    m = m.collapse_variants()
    c = fit(m)
    cv = predict(m, topics=sc["topics"], method=sc["method"],
                 variance=sc["variance"] if chooses_variance(sc["method"]) else None,
                 min_diff=sc["min_diff"], alpha=sc["alpha"], n_resamples=resamples, rng=streams[2 * i])
    boot = paired_bootstrap(m, n_resamples=resamples, alpha=sc["alpha"],
                            rng=data_stream(seed, m, streams[2 * i + 1]))
    honest = HonestStatement(boot, judged_share(coll, measure), stratum=coll["label"])
    return _Stratum(coll["label"], measure, c, m.values, m.topics, [dict(r) for r in cv.rows], honest, inp,
                    m.n_systems, m.n_topics, m.source)


def _curves(st: StackedStrata, strata: list[_Stratum], topics) -> tuple[list, list, list]:
    """(the stack's curve, the other curves, the allocations) at each studied count."""
    labels = [s.label for s in strata]
    rows, extra, alloc = [], [], []
    for n in topics:
        p = st.at(n)
        rows.append({"n_topics": n, "ci_width_median": p.width_proportional, "power_mean": p.power_proportional,
                     "erho2": p.erho2, "phi": p.phi})
        extra.append({"label": "optimal allocation", "n_topics": n, "ci_width_median": p.width_optimal,
                      "power_mean": p.power_optimal})
        alloc.append({"n_topics": n, **{f"n_{lab}_proportional": int(v) for lab, v in zip(labels, p.n_proportional)},
                      **{f"n_{lab}_optimal": int(v) for lab, v in zip(labels, p.n_optimal)},
                      "width_proportional": p.width_proportional, "width_optimal": p.width_optimal,
                      "width_uniform_lower_bound": p.width_uniform_lower_bound,
                      "power_proportional": p.power_proportional, "power_optimal": p.power_optimal})
    for s in strata:
        for r in s.rows:
            extra.append({"label": f"stratum {s.label} alone", **r})
    return rows, extra, alloc


def _stack_key(strata: list[_Stratum]) -> str:
    """The stack's topics, stratum by stratum: what two measures of the same stack share."""
    return hashlib.sha256("\0".join(f"{s.label}\1{t}" for s in strata for t in s.topics).encode()).hexdigest()


def _stack_targets(sc: dict) -> tuple[list[int], list[tuple[str, float]]]:
    """The indices of the scenario's targets a stack answers and their (target, value)."""
    idx = [j for j, tg in enumerate(sc["targets"]) if tg["target"] in STACK_TARGETS]
    return idx, [(sc["targets"][j]["target"], float(sc["targets"][j]["value"])) for j in idx]


def _intervals(st: StackedStrata, strata: list[_Stratum], sc: dict) -> dict:
    """The 95% interval on n of each stack target (target index -> interval): the stratified
    jackknife of the strata's components (:func:`planner.plan.jackknife_intervals`)."""
    idx, targets = _stack_targets(sc)
    if not idx:
        return {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ivs = jackknife_intervals(st, [s.matrix for s in strata], targets, 0.95)
    return dict(zip(idx, ivs))


def _resampled(st: StackedStrata, strata: list[_Stratum], sc: dict, seed: int, key: str) -> dict:
    """Each target's counts on topic resamples drawn within each stratum (the weights W_k stay the
    design's, each stratum's ANOVA re-fitted), for comparing two measures of the same stack resample
    by resample (:mod:`planner.study.paired`), not for the interval. The stream is keyed on the seed
    and the stack's topics, so two measures of the same stack draw the same resamples."""
    idx, targets = _stack_targets(sc)
    if not idx:
        return {}
    boot = np.random.default_rng([int(seed), int(key[:15], 16), 2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ns = resampled_n(st, [s.matrix for s in strata], targets, boot,
                         INTERVAL_RESAMPLES)
    return dict(zip(idx, ns))


def _target(st: StackedStrata, tg: dict, ivl: Interval | None, ns: np.ndarray | None) -> ScenarioTarget:
    t, v = tg["target"], float(tg["value"])
    if t not in STACK_TARGETS:
        return ScenarioTarget(t, v, None, _NONE, "not available for stacked strata: pair rates need "
                              "systems common to all strata; see each stratum's own curve", SolveKind.NOT_COMPUTED)
    n_found = st.smallest_n(t, v)
    how = ("D-study on the W-weighted components (not with the Feldt or Arteaga intervals, which need one "
           "crossed design)" if methods.target(t).reliability else
           "stratified, proportional allocation, pooled sigma_k^2 = 2 var_e,k per stratum")
    if n_found is None or ivl is None:
        return ScenarioTarget(t, v, None, _NONE, how + "; no interval on n (the target is not reached on "
                              "the collection itself)", SolveKind.STACKED)
    return ScenarioTarget(t, v, n_found, ivl, how + f"; 95% interval on n: {ivl.describe()}", SolveKind.STACKED,
                          resampled_n=ns)


def _components(st: StackedStrata, strata: list[_Stratum]) -> ScenarioComponents:
    comps = [s.components for s in strata]
    return ScenarioComponents(
        "W-weighted mean of per-stratum components", st.weighted("var_s"), st.weighted("var_t"),
        st.weighted("var_e"), float(np.sum(st.weights * np.array([c.grand_mean for c in comps]))),
        tuple(sorted({t for c in comps for t in c.truncated})), weighted=True)


def _strata_info(st: StackedStrata, strata: list[_Stratum]) -> dict:
    labels = [s.label for s in strata]
    return {"weights": dict(zip(labels, st.weights.tolist())),
            "sigma2": dict(zip(labels, st.sigma2.tolist())),
            "components": {s.label: {"var_s": s.components.var_s, "var_t": s.components.var_t,
                                     "var_e": s.components.var_e, "n_topics": s.components.n_topics,
                                     "grand_mean": s.components.grand_mean} for s in strata}}


def _at(st: StackedStrata, n: int) -> dict:
    p = st.at(n)
    return {"n_topics": int(n), "ci_width_median": p.width_proportional, "power_mean": p.power_proportional,
            "erho2": p.erho2, "phi": p.phi}


def run_stacked(sc: dict, rng: np.random.Generator, resamples: int, seed: int | None = None) -> ScenarioResult:
    """A stack of collections as strata: each stratum (one stacked collection, its own systems)
    gets its own fit, curve and honest statement; combined as :mod:`planner.plan.stacked` describes."""
    parts = sc["collection"]["stack"]
    streams = rng.spawn(2 * len(parts))
    strata = [_stratum(i, coll, sc, streams, resamples, seed) for i, coll in enumerate(parts)]
    sc = {**sc, "measure": " / ".join(dict.fromkeys(s.measure for s in strata))}
    st = StackedStrata.from_components([s.components for s in strata], [s.n_topics for s in strata],
                                       alpha=sc["alpha"], min_diff=sc["min_diff"])
    rows, extra, alloc = _curves(st, strata, sc["topics"])
    ivs = _intervals(st, strata, sc)
    key = _stack_key(strata)
    ns = _resampled(st, strata, sc, seed, key) if seed is not None else {}
    targets = tuple(_target(st, tg, ivs.get(j), ns.get(j)) for j, tg in enumerate(sc["targets"]))
    total = int(sum(s.n_topics for s in strata))
    at_n = [_at(st, n) for n in sorted({n for n in (answer_count(targets, None), plan_count(targets), total)
                                        if n is not None})]
    per = tuple({"stratum": s.label, "n_systems": s.n_systems, "n_topics": s.n_topics, "source": s.source}
                for s in strata)
    data = ScenarioData(source=" + ".join(str(s.source) for s in strata), measure=sc["measure"],
                        n_systems=sum(s.n_systems for s in strata), n_topics=total, n_topics_before_filter=total,
                        n_variants=1, strata=[s.label for s in strata], per_stratum=per)
    return ScenarioResult(
        id=sc["id"], name=sc["name"], settings={k: sc[k] for k in SETTINGS_KEYS}, data=data,
        inputs=[i for s in strata for i in s.inputs], filtered=[], components=_components(st, strata),
        erho2_at_T=st.erho2(total), phi_at_T=st.phi(total), strata=_strata_info(st, strata),
        curve=ScenarioCurve(f"stratified ({sc['method']} per stratum)", "pooled per stratum", rows),
        targets=targets, at_n=at_n, variants=None, honest=strata[0].honest, pool=None, warnings=[],
        extra_curves=extra, allocation=alloc, honest_strata=tuple(s.honest for s in strata),
        topics_key=key if seed is not None else None)

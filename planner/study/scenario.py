"""One scenario on one collection: scores, filter, fit, curve, targets, variants, the honest
statement and the pool study, as a :class:`~planner.study.results.ScenarioResult`."""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np

from ..errors import ConfigError, PlannerError, ReadNoteWarning, repeats
from ..plan import paired_bootstrap
from ..progress import Progress, Share, part
from ..simulate import predict
from ..variance import fit, fit_variants
from .inputs import apply_filter, data_stream, judged_share, load_scores, systems_key, topics_key, topics_stream
from .pool import pool_study
from .results import (
    HonestStatement,
    ScenarioComponents,
    ScenarioCurve,
    ScenarioData,
    ScenarioResult,
    ScenarioTarget,
    answer_count,
    plan_count,
)
from .schema import MAX_TOPICS, SETTINGS_KEYS
from .stack import run_stacked
from .targets import TargetContext, chooses_variance, replay, solve_target, variant_targets

__all__ = ["run_scenario"]

def run_scenario(sc: dict, rng: np.random.Generator, resamples: int, seed: int | None = None,
                 progress: Progress = False) -> ScenarioResult:
    """Everything for one scenario (a stack of collections, or one collection).

    Parameters
    ----------
    sc : dict
        The resolved scenario (:func:`planner.study.expand_scenarios`).
    rng : numpy.random.Generator
        The scenario's stream (keyed on its settings).
    resamples : int
        Bootstrap / subsample repetitions.
    seed : int or None
        The study seed (keys the honest statement's and the intervals' streams on the data).
    progress : Share, optional
        The scenario's slice of the study's bar (:mod:`planner.progress`), filled as its steps
        run: the curve's chunks, each target, the bootstrap of the honest statement.

    Returns
    -------
    ScenarioResult
        Picklable; its ``to_dict()`` is JSON-able after :func:`planner.report.jsonable`.
    """
    with warnings.catch_warnings(record=True) as wlist:
        warnings.simplefilter("always")
        if "stack" in sc["collection"]:
            res = run_stacked(sc, rng, resamples, seed)
        else:
            res = _run_one(sc, rng, resamples, seed, progress)
    if isinstance(progress, Share):
        progress.rest()
    # a note on reading the inputs is the same for every scenario that reads them: said once;
    # of the kinds said once per scenario (identical systems), the first stands for the rest
    said: set[type[Warning]] = set()
    kept = [w for w in wlist if not repeats(w.category, said)]
    return replace(res, warnings=list(dict.fromkeys(
        str(w.message) if issubclass(w.category, ReadNoteWarning) else f"{sc['id']}: {w.message}" for w in kept)))


def _scores(sc: dict):
    """(settings with the measure's label, scores, the scores averaged over variants and filtered,
    the scores with variants or None, input hashes, dropped topics)."""
    m, inputs = load_scores(sc["collection"], sc["measure"], "collection")
    # the measure's label: the one asked for, else the file's own, else neutral
    sc = {**sc, "measure": sc["measure"] or m.measure or "score"}
    m3 = m if m.has_variants else None
    if sc["variants"] and m3 is None:
        raise ConfigError("has no effect: these scores have no query variants (give "
                          "collection.variant_divisor, or a tidy file with a variant column)", key="variants")
    m2 = m.collapse_variants() if m.has_variants else m
    m2, dropped = apply_filter(m2, sc["filter"])
    if sc["strata"] == "stratified" and m2.strata is None:
        raise ConfigError("'stratified' needs topic strata: give collection.strata (a topic metadata "
                          "file or a mapping topic -> stratum)", key="strata")
    return sc, m, m2, m3, inputs, dropped


class _Evaluator:
    """The scenario's method evaluated at any single n, with the stream it has there on the curve."""

    def __init__(self, m2, comp, pkw: dict, make: Callable[[], np.random.Generator], rows: list[dict]):
        self.m2, self.comp, self.pkw, self.make = m2, comp, pkw, make
        self.evaluated: dict[int, dict | None] = {int(r["n_topics"]): self.fill(r) for r in rows}

    def fill(self, r: dict) -> dict:
        """The D-study's Erho2 and Phi where the method gives none."""
        if r.get("erho2") is None:
            r["erho2"] = float(self.comp.erho2(r["n_topics"]))
        if r.get("phi") is None:
            r["phi"] = float(self.comp.phi(r["n_topics"]))
        return r

    def __call__(self, n: int) -> dict | None:
        n = int(n)
        if n not in self.evaluated:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")      # the curve's warnings say it already
                    row = predict(self.m2, topics=[n], rng=self.make(), **self.pkw).rows[0]
                self.evaluated[n] = self.fill(dict(row))
            except PlannerError:
                self.evaluated[n] = None
        return self.evaluated[n]


def _dstudy_bands(comp, rows: list[dict], sc: Mapping) -> None:
    """D-study intervals (Feldt for Erho2, Arteaga-Jeyaratnam-Franklin for Phi): the plots' bands."""
    try:
        ds = {int(d["n_topics"]): d for d in comp.dstudy(sc["topics"], alpha=sc["alpha"]).rows}
    except PlannerError:
        return
    for r in rows:
        d = ds.get(int(r["n_topics"]))
        if d is not None:
            r.update(erho2_lo=d["erho2_lower"], erho2_hi=d["erho2_upper"],
                     phi_lo=d["phi_lower"], phi_hi=d["phi_upper"])


def _variants(m3, m2, sc: Mapping, stream) -> dict | None:
    """The three-facet D-study and the topics-against-variants trade-off."""
    if m3 is None:
        return None
    if tuple(m3.topics) != tuple(m2.topics):      # the filter's topics
        m3 = m3.take(topics=list(m2.topics))
    vc = fit_variants(m3)
    nv = sc["variants"] or list(range(1, m3.n_variants + 1))
    return {"components": vc.to_dict(), "dstudy": vc.dstudy(sc["topics"], nv).to_dict()["rows"],
            "targets": variant_targets(m3, sc, nv, stream)}


def _budget_topics(sc: Mapping, pool: dict | None) -> int | None:
    """What the whole budget buys at the chosen depth, next to what the targets need."""
    if not (pool and pool.get("choice") and sc["costs"].get("budget") and pool["choice"]["cost_per_topic"]):
        return None
    n = int(math.floor(float(sc["costs"]["budget"]) / pool["choice"]["cost_per_topic"] + 1e-9))
    pool["budget_topics"] = n
    return n


def _at_counts(ns, at: _Evaluator, comp) -> list[dict]:
    """The curve's statistics computed at exactly each count (above MAX_TOPICS: the D-study only)."""
    out = []
    for n in sorted({n for n in ns if n is not None}):
        r = at(n) if n <= MAX_TOPICS else None
        out.append(r if r is not None else {"n_topics": int(n), "not_computed": True,
                                            "erho2": float(comp.erho2(n)), "phi": float(comp.phi(n))})
    return out


def _strata_info(m2, comp, comp_d: dict) -> dict | None:
    if m2.strata is None or not comp.strata:
        return None
    return {"weights": comp_d.get("weights"),
            "components": {k: {kk: v[kk] for kk in ("var_s", "var_t", "var_e", "n_topics", "grand_mean")}
                           for k, v in comp_d["strata"].items()}}


def _targets(sc: dict, m2, comp, rows, at, seed, r_extra,
             progress: Progress = False) -> tuple[tuple[ScenarioTarget, ...], Any]:
    """Every target's count. Every target's interval on n resamples the same topics (common random
    numbers), so equivalent targets (swap_rate v and kendall_tau 1 - 2v) get the same interval and
    the intervals of different targets are comparable; the resamples depend only on the seed and
    the topic list, so scenarios on the same topics (other measures, methods) share them."""
    target_base = topics_stream(seed, m2, r_extra.spawn(1)[0])
    streams = [copy.deepcopy(target_base) for _ in sc["targets"]]
    ctx = TargetContext(sc, m2, comp, rows, at, target_base, seed)
    out = []
    for tg, s in zip(sc["targets"], streams):
        out.append(solve_target(ctx, tg, s))
        part(progress, 1 / len(streams)).rest()
    return tuple(out), target_base


def _run_one(sc: dict, rng: np.random.Generator, resamples: int, seed: int | None,
             progress: Progress = False) -> ScenarioResult:
    r_pred, r_honest, r_extra = rng.spawn(3)
    make = replay(r_pred)
    sc, m, m2, m3, inputs, dropped = _scores(sc)
    comp = fit(m2)
    pkw = dict(method=sc["method"], variance=sc["variance"] if chooses_variance(sc["method"]) else None,
               min_diff=sc["min_diff"], alpha=sc["alpha"], n_resamples=resamples, strata=sc["strata"])
    curve = predict(m2, topics=sc["topics"], rng=r_pred, progress=part(progress, 0.4), **pkw)
    rows = [dict(r) for r in curve.rows]
    at = _Evaluator(m2, comp, pkw, make, rows)
    _dstudy_bands(comp, rows, sc)
    targets, target_base = _targets(sc, m2, comp, rows, at, seed, r_extra, part(progress, 0.4))
    variants = _variants(m3, m2, sc, target_base)
    honest = HonestStatement(paired_bootstrap(m2, n_resamples=resamples, alpha=sc["alpha"],
                                              rng=data_stream(seed, m2, r_honest)),
                             judged_share(sc["collection"], sc["measure"]))
    pool = pool_study(sc) if sc["pool"] is not None else None
    # the answer's statistics, computed AT its topic count and at the collection's own
    at_n = _at_counts((answer_count(targets, pool), plan_count(targets, pool), m2.n_topics,
                       _budget_topics(sc, pool)), at, comp)
    comp_d = comp.to_dict()
    cd = curve.to_dict() if hasattr(curve, "to_dict") else {}
    return ScenarioResult(
        id=sc["id"], name=sc["name"], settings={k: sc[k] for k in SETTINGS_KEYS},
        data=ScenarioData(source=m.source, measure=m2.measure or sc["measure"], n_systems=m2.n_systems,
                          n_topics=m2.n_topics, n_topics_before_filter=m.n_topics, n_variants=m.n_variants,
                          strata=list(m2.stratum_labels()) or None),
        inputs=inputs, filtered=dropped, components=ScenarioComponents.from_dict(comp_d),
        erho2_at_T=float(comp.erho2(m2.n_topics)), phi_at_T=float(comp.phi(m2.n_topics)),
        strata=_strata_info(m2, comp, comp_d),
        curve=ScenarioCurve(cd.get("method", sc["method"]), cd.get("variance", sc["variance"]), rows),
        targets=targets, at_n=at_n, variants=variants, honest=honest, pool=pool, warnings=[],
        topics_key=topics_key(m2), systems_key=systems_key(m2))


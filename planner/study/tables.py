"""The report's tables (``tables/<name>.csv``), one pandas DataFrame each, from the typed results."""

from __future__ import annotations

from collections import defaultdict

import pandas as pd

from .narrative import to_build
from .results import ScenarioResult, plan_count

__all__ = ["ANSWER_COLUMNS", "answer_table", "tables"]


def _variance(s: ScenarioResult) -> str:
    cv, sv = str(s.curve.variance), s.settings["variance"]
    return cv if cv == sv or s.stacked else f"{cv} (curve); {sv} (sizes)"


def _scenario_row(s: ScenarioResult) -> dict:
    st = s.settings
    flt = st["filter"]
    per = s.data.per_stratum
    return {"id": s.id, "scenario": s.name, "collection": st["collection"]["label"],
            "measure": st["measure"], "method": st["method"], "variance": _variance(s),
            "min_diff": st["min_diff"],
            "strata": "stacked: " + ", ".join(s.data.strata or []) if s.stacked else st["strata"],
            "filter": "none" if not flt else
            f"lo={flt['lo']:g}, hi={flt['hi']:g}, min_spread={flt['min_spread']:g}",
            # a stack's strata may hold disjoint systems: one count per stratum
            "systems": " / ".join(str(d["n_systems"]) for d in per) if per else s.data.n_systems,
            "topics": " / ".join(str(d["n_topics"]) for d in per) if per else s.data.n_topics,
            "topics_needed": s.need(),
            # a filter keeps a share of the topics a new collection creates: the topics to build
            # are the needed informative ones over that share
            "topics_to_build": to_build(s)}


def _components(s: ScenarioResult) -> list[dict]:
    c = s.components
    out = [{"scenario": s.name, "method": c.method, "var_s": c.var_s, "var_t": c.var_t,
            "var_e": c.var_e, "grand_mean": c.grand_mean, "erho2": s.erho2_at_T,
            "phi": s.phi_at_T, "n_topics": s.data.n_topics, "truncated": ",".join(c.truncated) or ""}]
    for k, v in (s.strata or {}).get("components", {}).items():
        out.append({"scenario": f"{s.name} / stratum {k}", "method": "per stratum",
                    "var_s": v["var_s"], "var_t": v["var_t"], "var_e": v["var_e"],
                    "grand_mean": v["grand_mean"], "erho2": None, "phi": None,
                    "n_topics": v["n_topics"], "truncated": ""})
    return out


def _honest(s: ScenarioResult) -> list[dict]:
    out = []
    for h in s.honest_strata or (s.honest,):
        p, js = h.paired, h.judged_share
        out.append({"scenario": s.name + (f" / {h.stratum}" if h.stratum else ""),
                    "topics": p.n_topics, "systems": p.n_systems,
                    "mean": p.grand_mean, "best": p.best_system, "best_mean": p.best_mean,
                    # runs identical to the best on every topic, skipped as the second
                    "identical_to_best": "; ".join(p.identical_to_best),
                    "second": p.second_system, "diff_top2": p.diff_top2, "ci_lo": p.diff_top2_interval.low,
                    "ci_hi": p.diff_top2_interval.high, "reversal_top2": p.reversal_top2,
                    "reversal_mean": p.reversal_mean_pairs,
                    "judged_share_depth": js.depth if js else None, "judged_share_mean": js.mean if js else None,
                    "judged_share_min": js.min if js else None})
    return out


def _pool(s: ScenarioResult, out: dict[str, list]) -> None:
    for r in (s.pool or {}).get("depths") or []:
        by = r.get("n_by_target") or {}
        out["pool"].append({"scenario": s.name, **{k: v for k, v in r.items() if k != "n_by_target"},
                            **{f"n_{t}": n for t, n in by.items()}})
        if r["cost_per_topic"] is not None:
            for n in s.settings["topics"]:
                out["budget"].append({"depth": r["depth"], "n_topics": n, "cost": n * r["cost_per_topic"]})


#: the answer table's columns: the curve statistics a reader weighs a topic count by
ANSWER_COLUMNS = ("ci_width_median", "swap_rate_mean", "power_mean")


def answer_table(s: ScenarioResult) -> pd.DataFrame:
    """What the collection's own topic count, the point estimate and the count to plan with buy:
    the curve's statistics computed at exactly each count (``–`` where the method gives none)."""
    counts: dict[int, list[str]] = {}
    for label, n in (("the collection's own", s.data.n_topics), ("point estimate", s.answer_n()),
                     ("count to plan with", plan_count(s.targets, s.pool) if s.need() is not None else None)):
        if n:
            counts.setdefault(int(n), []).append(label)
    rows = [{"topics": n, "which": "; ".join(labels), **{c: s.at(n).get(c) for c in ANSWER_COLUMNS}}
            for n, labels in sorted(counts.items())]
    df = pd.DataFrame(rows, columns=["topics", "which", *ANSWER_COLUMNS])
    return df.dropna(axis=1, how="all")


def _rows(s: ScenarioResult, out: dict[str, list]) -> None:
    """Every table's rows of one scenario."""
    out["scenarios"].append(_scenario_row(s))
    out["curves"] += [{"scenario": s.name, **r} for r in s.curve.rows]
    for r in s.extra_curves or []:
        r = dict(r)
        out["curves"].append({"scenario": f"{s.name} / {r.pop('label')}", **r})
    out["allocation"] += [{"scenario": s.name, **r} for r in s.allocation or []]
    out["targets"] += [{"scenario": s.name, "target": t.target, "value": t.value, "n_topics": t.n_topics,
                        "lower": t.interval.low, "upper": t.interval.high, "how": t.how} for t in s.targets]
    out["components"] += _components(s)
    out["filtered"] += [{"scenario": s.name, **f} for f in s.filtered]
    out["honest"] += _honest(s)
    _pool(s, out)
    if s.variants:
        out["variants"] += [{"scenario": s.name, **r} for r in s.variants["dstudy"]]
        out["variant_targets"] += [{"scenario": s.name, **r} for r in s.variants.get("targets") or []]


def tables(scens: list[ScenarioResult], paired: list[dict] | None = None) -> dict:
    """Name -> DataFrame: answer (:func:`answer_table` of the first scenario), scenarios, curves,
    targets, components, honest, and where there are
    rows: filtered, pool, budget, variants, variant_targets, allocation, paired (``paired``: the
    plain rows of the measures compared pairwise, as written to results.json)."""
    out: dict[str, list] = defaultdict(list)
    for s in scens:
        _rows(s, out)
    if not any(s.settings["filter"] for s in scens):
        for r in out["scenarios"]:          # only a filter makes the topics to build differ from those needed
            r.pop("topics_to_build")
    T = {k: pd.DataFrame(out[k]) for k in ("scenarios", "curves", "targets", "components", "honest")}
    if scens:
        T["answer"] = answer_table(scens[0])
    if out["filtered"]:
        T["filtered"] = pd.DataFrame(out["filtered"])
    if out["pool"]:
        T["pool"] = pd.DataFrame(out["pool"])
        T["budget"] = pd.DataFrame(out["budget"]).drop_duplicates(["depth", "n_topics"])
    for k in ("variants", "variant_targets", "allocation"):
        if out[k]:
            T[k] = pd.DataFrame(out[k])
    if paired:
        T["paired"] = pd.DataFrame(paired)
    return T

"""A scenario's pool study: judgment depth against topics, and the cheapest depth that serves."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from .. import methods
from ..plan import pool_depth_study
from ..plan.pool import cheapest_depth
from .inputs import load_runs_qrels
from .schema import DEFAULTS
from .targets import ANALYTIC, chooses_variance

__all__ = ["finite", "pool_study"]


def finite(v) -> bool:
    """True for a finite number (numpy scalars included)."""
    return isinstance(v, (int, float, np.integer, np.floating)) and bool(np.isfinite(v))


def _no_choice_reason(rows: list[dict], tau_min: float, tnames: str, budget) -> str:
    """Why no depth is chosen: the tau bound, the targets, or the budget."""
    if not any(r.get("tau_ok") for r in rows):
        best = max(rows, key=lambda r: r["kendall_tau_vs_full"] if finite(r.get("kendall_tau_vs_full"))
                   else -2.0)
        return (f"no depth reaches Kendall tau >= {tau_min:g} against the full judgments (highest: "
                f"{best.get('kendall_tau_vs_full', float('nan')):.3f} at depth {best['depth']})")
    cheap = cheapest_depth(rows)
    if cheap is None:
        return f"the targets ({tnames}) are not all reached at any depth with Kendall tau >= {tau_min:g}"
    return (f"every depth with Kendall tau >= {tau_min:g} that reaches the targets costs more "
            f"than the budget {budget:g} (cheapest: depth {cheap['depth']}, {cheap['total_cost']:.0f})")


def pool_study(sc: Mapping) -> dict:
    """Pool depth against topics (:func:`planner.plan.pool_depth_study`): for each depth k
    the runs are re-scored with judgments restricted to the depth-k pool; reported are
    judgments per topic, Kendall tau against the full judgments, the components and the
    topics every target of the scenario needs (the largest count, and the count to plan with),
    solved with the scenario's method when it has a closed form (analytic or pilot-aware), else
    analytically. The choice is :func:`planner.plan.pool.cheapest_depth` within ``costs.budget``."""
    coll = sc["collection"]
    runs, qrels = load_runs_qrels(coll)
    tgs = sc["targets"] or DEFAULTS["targets"][:1]
    costs = sc["costs"]
    tau_min = float(sc["pool"].get("tau_min", 0.9))
    method = sc["method"] if methods.method(sc["method"]).closed_form else ANALYTIC
    ds = pool_depth_study(runs, qrels, depths=sorted(sc["pool"]["depths"]), measure=sc["measure"],
                          pool_runs=coll.get("pool_runs"),
                          targets=[(t["target"], float(t["value"])) for t in tgs], method=method,
                          variance=sc["variance"] if chooses_variance(method) else "pair",
                          min_diff=sc["min_diff"], alpha=sc["alpha"],
                          topic_cost=costs["topic"], judgment_cost=costs["judgment"], tau_min=tau_min,
                          n_resamples=0)
    tnames = "; ".join(f"{t['target']} {float(t['value']):g}" for t in tgs)
    rows = [dict(r) for r in ds.rows]
    choice = cheapest_depth(rows, costs.get("budget"))
    if choice is not None:
        reason = (f"cheapest total cost among depths with Kendall tau >= {tau_min:g} against the full "
                  "judgments" + (f" within the budget {costs['budget']:g}" if costs.get("budget") else ""))
    else:
        reason = _no_choice_reason(rows, tau_min, tnames, costs.get("budget"))
    return {"targets": [dict(t) for t in tgs], "method": method, "tau_min": tau_min, "depths": rows,
            "full": dict(ds.full),
            "choice": choice, "reason": reason, "pool_runs": len(ds.pool_runs), "n_runs": ds.n_runs,
            "note": "cost per topic = topic cost + judgments per topic x judgment cost; judgments per "
                    "topic = mean over topics of distinct documents in the union of the pooled runs' top k"}

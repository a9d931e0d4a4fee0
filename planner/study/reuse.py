"""Pool reusability in a study's honest statement: the leave-one-team-out bias beside the
sampling error at n topics.

When the grid's first scenario reads runs + qrels (not a stack), each team's runs are left
out of the depth-10 pool and re-scored (:func:`planner.plan.reusability.leave_group_out`,
which owns every definition), teams from the ``selection:`` section's ``groups`` or else the
run-name prefix rule, the pool from the collection's ``pool_runs``. The paragraph sets the
largest drop beside the median 95% half-width of a run's mean at the collection's topics and
at the count the answer chooses, ``t_{0.975}(n-1) s / sqrt(n)`` with ``s`` each run's
standard deviation over topics (more topics shrink that half-width, not the bias).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from scipy import stats

from ..errors import ConfigError, ParameterError
from ..plan.reusability import DL_POOL_DEPTH, Reusability, leave_group_out
from .inputs import load_runs_qrels

__all__ = ["half_width_at", "pool_reuse", "reuse_paragraph"]


def pool_reuse(scens: Sequence[Any], selection: Mapping | None) -> Reusability | None:
    """Leave-one-team-out scores of the first scenario's runs (``None`` without runs + qrels)."""
    if not scens:
        return None
    sc = scens[0].settings
    coll = sc["collection"]
    if "runs" not in coll or "stack" in coll:
        return None
    runs, qrels = load_runs_qrels(coll)
    groups = selection["groups"] if selection is not None else "prefix"
    try:
        return leave_group_out(runs, qrels, measure=sc["measure"] or "nDCG@10", groups=groups,
                               pool_runs=coll.get("pool_runs"))
    except ParameterError as exc:
        key = "selection.groups" if exc.parameter == "groups" and selection is not None else "collection"
        raise ConfigError(f"pool reusability: {exc.message}", key=key) from None


def half_width_at(r: Reusability, n: int) -> float:
    """Median over runs of the 95% half-width of a run's mean at ``n`` topics (each run's own
    standard deviation over the collection's topics, recovered from ``ci_half_width``)."""
    N = r.n_topics
    s = r.runs["ci_half_width"].to_numpy(float) * math.sqrt(N) / stats.t.ppf(0.975, N - 1)
    return float(np.nanmedian(stats.t.ppf(0.975, n - 1) * s / math.sqrt(n)))


def reuse_paragraph(r: Reusability, n_answer: int | None) -> str:
    """The honest statement's paragraph: the bias beside the sampling error."""
    N = r.n_topics
    at_N = half_width_at(r, N)
    at = f"{at_N:.3f} at the collection's {N} topics"
    compare_n, compare_hw = N, at_N
    if n_answer is not None and n_answer >= 2 and n_answer != N:
        compare_n, compare_hw = n_answer, half_width_at(r, n_answer)
        at += f" and {compare_hw:.3f} at the {n_answer} topics the answer chooses"
    drops = -r.runs["change"].to_numpy(float)
    verdict = ("larger than" if r.largest_drop > compare_hw else "smaller than")
    depth = f"depth-{r.depth} pool" + (" (the TREC DL pool depth)" if r.depth == DL_POOL_DEPTH else "")
    return (f"**Pool reusability (leave one team out).** Each of {r.n_groups} teams' runs was left out of the "
            f"{depth}, the documents only that team contributed lost their judgments, and its runs were re-scored "
            f"({r.measure}): the largest drop is {r.largest_drop:.3f}"
            + (f" ({r.largest_drop_run})" if r.largest_drop_run else "")
            + f", the median drop over the {r.n_runs} runs {float(np.median(drops)):.3f}, the largest rank drop "
              f"{r.largest_rank_drop}, and Kendall's tau between the full and the left-out ranking "
              f"{r.kendall_tau:.3f}. Beside it, the sampling error: the median 95% half-width of a run's mean is "
              f"{at}. The largest drop is {verdict} the sampling error at {compare_n} topics; more topics shrink "
              "the sampling error, not this bias, so a new run that did not contribute to the pool can lose more "
              "than its interval says (docs/deep-learning.md). Documents judged outside the depth-"
              f"{r.depth} pool stay judged for every team, so this understates the bias.")

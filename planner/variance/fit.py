"""The two-way fit: :func:`fit` (ANOVA or REML, ``drop``, truncation, per-stratum fits)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from .._checks import check_choice, check_fraction
from ..collection import as_matrix
from ..errors import DegenerateDataWarning, InputError, ParameterError
from ..scores import ScoreMatrix
from .anova import anova2, no_residual
from .common import check_degenerate, check_size, label
from .components import VarianceComponents
from .reml import reml_direct, reml_statsmodels

#: the values of ``method``
METHODS = ("auto", "anova", "reml")


def fit(scores, *, method: str = "auto", drop: float = 0.0,
        weights: Mapping[str, float] | None = None, reml_engine: str = "direct",
        reml_start: str = "moments") -> VarianceComponents:
    """Fit the two-way crossed variance-components model (:mod:`planner.variance`).

    Parameters
    ----------
    scores : ScoreMatrix or path or DataFrame or array_like
        A :class:`~planner.ScoreMatrix` (or a path read by ``load_scores``, a wide
        DataFrame whose index is named ``topic`` or ``system``, or an ``(S, T)`` array, one
        row a system: :func:`planner.collection.as_matrix`). A matrix with variants is averaged over its
        variants first (use :func:`fit_variants` for the three-facet model).
    method : {"auto", "anova", "reml"}
        ``"anova"`` (complete matrices), ``"reml"`` (see ``reml_engine``) or ``"auto"``
        (ANOVA when complete, REML when cells are missing).
    drop : float
        Fraction in ``[0, 1)`` of lowest-scoring systems to drop first (gt4ireval).
    weights : Mapping, optional
        Stratum weights (stratum -> weight, normalised to sum 1) replacing the default
        ``T_k / T``; only with strata.
    reml_engine : {"direct", "statsmodels"}
        ``"direct"`` (default: the restricted likelihood maximised here, in ``min(S, T)``
        dimensions) or ``"statsmodels"`` (MixedLM with crossed variance components; the
        same likelihood, much slower on large matrices).
    reml_start : {"moments", "default"}
        statsmodels engine only: start at moment estimates (L-BFGS) or statsmodels' own
        start and optimiser.

    Returns
    -------
    VarianceComponents
        With per-stratum fits in ``strata`` when the matrix has strata (two or more
        distinct labels).

    Raises
    ------
    ParameterError
        Unknown method, bad drop, ANOVA asked on missing cells, bad weights.
    InputError
        Fewer than 2 systems or topics, or a constant matrix.

    Examples
    --------
    >>> import planner
    >>> vc = fit(planner.datasets.load("dl19-passage", measure="nDCG@10"))
    >>> vc.method, vc.n_systems, vc.n_topics
    ('anova', 37, 43)
    >>> round(vc.var_s, 5), round(vc.var_t, 5), round(vc.var_e, 5)
    (0.01659, 0.03778, 0.02086)
    """
    m = as_matrix(scores)
    check_choice(method, METHODS, "method", noun="method")
    drop = check_fraction(drop, "drop")
    check_choice(reml_engine, ("direct", "statsmodels"), "reml_engine")
    check_choice(reml_start, ("moments", "default"), "reml_start")
    if m.has_variants:
        m = m.collapse_variants()
    m, dropped = _drop_systems(m, drop)
    res = _fit_array(m.values, m, m.topics, method, drop=drop, dropped=dropped, reml_start=reml_start,
                     reml_engine=reml_engine)
    labels = m.stratum_labels()
    if weights is not None and len(labels) < 2:
        raise ParameterError("weights given but the scores have fewer than 2 strata", parameter="weights")
    if len(labels) >= 2:
        per, sizes = _fit_strata(m, labels, method, reml_start=reml_start, reml_engine=reml_engine)
        res = replace(res, strata=per, weights=_stratum_weights(per, sizes, weights, labels))
    return res


#: significant digits at which system means are compared by ``drop``: scores with a few
#: decimals (P@10 in tenths) that total the same are equal at this precision, while float
#: sums of them (0.1 + 0.2 against 0.3) differ in the 17th digit
MEAN_DIGITS = 12


def exact_means(values: np.ndarray) -> np.ndarray:
    """Per-row means from correctly rounded sums (:func:`math.fsum`, any order gives the same),
    rounded to :data:`MEAN_DIGITS` significant digits; NaN cells left out."""
    out = np.full(values.shape[0], np.nan)
    for i, row in enumerate(values):
        row = row[~np.isnan(row)]
        if row.size:
            out[i] = float(f"{math.fsum(row.tolist()) / row.size:.{MEAN_DIGITS}g}")
    return out


def _drop_systems(m: ScoreMatrix, drop: float) -> tuple[ScoreMatrix, tuple[str, ...]]:
    """``m`` without the systems whose mean is below the ``drop``-quantile of the system means.

    The means are compared as :func:`exact_means` gives them, so two systems with equal totals
    tie (floating sums in another order would drop one of them)."""
    if drop <= 0:
        return m, ()
    means = exact_means(m.values)
    cut = np.quantile(means, drop)          # R quantile type 7 == numpy "linear"
    keep = means >= cut
    dropped = tuple(s for s, k in zip(m.systems, keep.tolist()) if not k)
    if keep.sum() < 2:
        raise InputError(f"drop={drop} leaves {int(keep.sum())} system(s); need at least 2",
                         file=m.source)
    return m.take(systems=keep), dropped


def _fit_array(x: np.ndarray, m: ScoreMatrix, topics: Sequence[str], method: str, *,
               drop=0.0, dropped=(), name=None, reml_start: str = "moments",
               reml_engine: str = "direct") -> VarianceComponents:
    name = name or label(m)
    check_size(x, m)
    check_degenerate(x, m, topics)
    missing = bool(np.isnan(x).any())
    use = method
    if method == "auto":
        use = "reml" if missing else "anova"
    if use == "anova":
        if missing:
            raise ParameterError(f"{name}: {int(np.isnan(x).sum())} missing cell(s); the ANOVA fit "
                                 "needs a complete matrix (use the REML fit, method 'reml', or a "
                                 "missing-cell policy)", parameter="method")
        est = anova2(x)
    else:
        # the REML likelihood is parametrised relative to the residual variance, which is 0
        # when system and topic effects explain every cell (identical systems, systems a
        # constant apart): no REML estimate exists (the engines fail or stop anywhere)
        none = InputError("the REML fit has no solution on these scores: system and topic effects "
                          "explain every cell (no residual variance; identical systems, or systems "
                          "a constant apart?)" + ("; the ANOVA fit (method 'anova') handles them"
                                                  if not missing else ""), file=name)
        if no_residual(x):
            raise none
        try:
            est = reml_direct(x, name) if reml_engine == "direct" else reml_statsmodels(x, name, reml_start)
        except (ZeroDivisionError, FloatingPointError, np.linalg.LinAlgError):
            raise none from None
        comps = [float(est[k]) for k in ("var_s", "var_t", "var_e")]
        if not all(math.isfinite(v) for v in comps) or comps[2] <= 1e-12 * sum(abs(v) for v in comps):
            raise none
    return _finish(est, method=use, name=name, measure=m.measure, drop=drop, dropped=dropped,
                   reml_boundary=(use == "reml"))


def _truncate(raw: dict[str, float], reml_boundary: bool) -> tuple[dict[str, float], list[str]]:
    """(components with estimates at or below 0 set to 0, names of the truncated ones)."""
    truncated = []
    vals = dict(raw)
    scale = max(sum(abs(v) for v in raw.values()), 1e-300)
    for k, v in raw.items():
        if not reml_boundary and abs(v) <= 1e-13 * scale:
            # rounding noise of an exactly-zero moment estimate: 0, not a truncation (REML
            # estimates at the boundary are reported as truncated below)
            vals[k] = 0.0
            continue
        if v < 0 or (reml_boundary and v <= 1e-8 * scale):
            truncated.append(k)
            vals[k] = 0.0
    return vals, truncated


def _finish(est: dict, *, method: str, name: str, measure, drop=0.0, dropped=(), warn=True,
            reml_boundary: bool = False) -> VarianceComponents:
    raw = {k: float(est[k]) for k in ("var_s", "var_t", "var_e")}
    vals, truncated = _truncate(raw, reml_boundary)
    if truncated and warn:
        what = {"var_s": "system", "var_t": "topic", "var_e": "residual"}
        listed = ", ".join(f"{what[k]} ({raw[k]:.3g})" for k in truncated)
        warnings.warn(f"{name}: variance estimate(s) at or below 0 set to 0: {listed}",
                      DegenerateDataWarning, stacklevel=4)
    if warn and vals["var_s"] == 0 and vals["var_e"] == 0:
        warnings.warn(f"{name}: neither system nor residual variance (are all systems identical?): "
                      "Erho2 is 0/0 and reported as NaN", DegenerateDataWarning, stacklevel=4)
    return VarianceComponents(
        var_s=vals["var_s"], var_t=vals["var_t"], var_e=vals["var_e"],
        ms_s=float(est["ms_s"]), ms_t=float(est["ms_t"]), ms_e=float(est["ms_e"]),
        df_s=int(est["df_s"]), df_t=int(est["df_t"]), df_e=int(est["df_e"]),
        n_systems=int(est["n_systems"]), n_topics=int(est["n_topics"]),
        grand_mean=float(est["grand_mean"]), method=method, truncated=tuple(truncated),
        raw=raw, dropped=tuple(dropped), drop=float(drop), n_cells=int(est["n_cells"]),
        measure=measure, converged=bool(est["converged"]))


def _fit_strata(m: ScoreMatrix, labels: Sequence[str], method: str, *, reml_start: str,
                reml_engine: str) -> tuple[dict[str, VarianceComponents], dict[str, int]]:
    """(fit a stratum, topics a stratum) of the strata that could be fitted; a stratum's
    systems with a missing cell in it are left out of its fit."""
    x = m.values
    strata_l = np.array(m.strata, dtype=object)
    per: dict[str, VarianceComponents] = {}
    sizes: dict[str, int] = {}
    for lab in labels:
        cols = np.flatnonzero(strata_l == lab)
        sub = x[:, cols]
        complete = ~np.isnan(sub).any(axis=1)
        partial = (~complete) & (~np.isnan(sub).all(axis=1))
        if partial.any():
            warnings.warn(f"{label(m)}: stratum {lab!r}: {int(partial.sum())} system(s) with some "
                          "missing cells left out of this stratum's fit",
                          DegenerateDataWarning, stacklevel=3)
        sm = m.take(systems=complete, topics=cols)
        try:
            with warnings.catch_warnings():
                # already reported for the whole matrix
                warnings.filterwarnings("ignore", message=".*every system scores the same")
                per[lab] = _fit_array(sub[complete], sm, sm.topics, "anova" if method == "auto" else method,
                                      name=f"{label(m)} [stratum {lab}]", reml_start=reml_start,
                                      reml_engine=reml_engine)
        except (InputError, ParameterError) as exc:
            warnings.warn(f"{label(m)}: stratum {lab!r} not fitted: {exc}",
                          DegenerateDataWarning, stacklevel=3)
            continue
        sizes[lab] = len(cols)
    return per, sizes


def _stratum_weights(per: Mapping[str, VarianceComponents], sizes: Mapping[str, int],
                     weights: Mapping[str, float] | None, labels: Sequence[str]) -> dict[str, float]:
    """Weights of the fitted strata, summing to 1: ``T_k / T`` or the given ``weights``."""
    if weights is None:
        tot = sum(sizes.values())
        return {k: v / tot for k, v in sizes.items()} if tot else {}
    w = _check_weights(weights, labels)
    w = {k: w[k] for k in per}
    tot_w = sum(w.values())
    return {k: v / tot_w for k, v in w.items()} if tot_w > 0 else w


def _check_weights(weights: Mapping[str, float], labels: Sequence[str]) -> dict[str, float]:
    if not isinstance(weights, Mapping):
        raise ParameterError("expected a mapping stratum -> weight", parameter="weights")
    w = {str(k): v for k, v in weights.items()}
    unknown = [k for k in w if k not in labels]
    if unknown:
        raise ParameterError(f"unknown stratum {unknown[0]!r}", parameter="weights")
    missing = [k for k in labels if k not in w]
    if missing:
        raise ParameterError(f"no weight for stratum {missing[0]!r}", parameter="weights")
    out = {}
    for k, v in w.items():
        try:
            fv = float(v)
        except (TypeError, ValueError):
            raise ParameterError(f"weight of {k!r} is not a number: {v!r}", parameter="weights") from None
        if not np.isfinite(fv) or fv < 0:
            raise ParameterError(f"weight of {k!r} must be >= 0, got {v!r}", parameter="weights")
        out[k] = fv
    if sum(out.values()) <= 0:
        raise ParameterError("weights sum to 0", parameter="weights")
    return out

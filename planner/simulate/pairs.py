"""Each pair's moments on the collection, the variance components, the variance selectors.

The pair statistics every engine starts from: ``dbar`` and ``s2_d`` of every pair
(:func:`pair_moments`), the ANOVA components behind Erho2 and Phi (:func:`components`) and
the per-pair variance a closed-form method uses under a ``variance=`` selector
(:func:`select_variance`).
"""

from __future__ import annotations

import warnings
from typing import cast

import numpy as np

from .._blas import one_blas_thread
from ..errors import DegenerateDataWarning, PlannerError
from ..scores import ScoreMatrix
from ..variance import anova_components, fit, parse_selector, within_system
from ..variance import pair_moments as _direct_pair_moments

__all__ = ["components", "pair_moments", "select_variance"]


def pair_moments(x: np.ndarray, a: np.ndarray, b: np.ndarray, *,
                 block: int = 2_000_000) -> tuple[np.ndarray, np.ndarray]:
    """``dbar`` and ``s2_d`` (ddof=1) of ``d[t] = x[a,t] - x[b,t]`` for the given pairs.

    Large problems use the covariance matrix (``s2_d = C_aa + C_bb - 2 C_ab``,
    one matrix product); pairs whose variance is within rounding of 0 are then
    recomputed from their differences, so identical systems give exactly 0.
    The product runs on one BLAS thread. Memory: ``8 * (S^2 + S * T + 5 * P)`` bytes for the covariance way, ``24 *
    min(P * T, max(T, block))`` for the direct way (differences in blocks of ``block``
    values; the numbers do not depend on ``block``).
    """
    T = x.shape[1]
    P = a.size
    if P * T <= 4_000_000:
        return _direct_pair_moments(x, a, b, block=block)
    mean = x.mean(axis=1)
    xc = x - mean[:, None]
    with one_blas_thread():  # one product: idle BLAS threads only add CPU time (planner._blas)
        C = (xc @ xc.T) / (T - 1)
    diag = np.diag(C)
    s2 = diag[a] + diag[b] - 2.0 * C[a, b]
    dbar = mean[a] - mean[b]
    small = np.flatnonzero(s2 <= 1e-9 * (diag[a] + diag[b]) + 1e-300)
    if small.size:
        dbar[small], s2[small] = _direct_pair_moments(x, a[small], b[small], block=block)
    return dbar, np.maximum(s2, 0.0)


def components(m: ScoreMatrix) -> dict:
    """Variance components from :func:`planner.variance.fit` (ANOVA); the plain ANOVA
    mean squares of the scores when ``fit`` refuses the matrix (constant scores)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            vc = fit(m, method="anova")
        return {"var_s": float(vc.var_s), "var_t": float(vc.var_t), "var_e": float(vc.var_e),
                "ms_s": float(vc.ms_s), "ms_t": float(vc.ms_t), "ms_e": float(vc.ms_e)}
    except PlannerError:  # e.g. a constant matrix: the ANOVA of the scores (all zero)
        return anova_components(m.topic_scores())


def select_variance(selector: str, s2: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Per-pair variance of the per-topic differences under a selector (paired design)."""
    kind, q = parse_selector(selector, parameter="variance")
    if kind == "pair":
        return s2
    if kind == "pooled":
        return np.full_like(s2, 2.0 * anova_components(x)["var_e"])
    if kind == "within-system":
        return np.full_like(s2, 2.0 * within_system(x))
    return np.full_like(s2, np.percentile(s2, cast(float, q)))  # percentile:q always has its q

"""The result of a two-way fit: :class:`VarianceComponents`."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._checks import check_alpha, check_open_unit, positive_numbers
from ..errors import DegenerateDataWarning, ParameterError
from ..results import ResultMixin
from .common import ratio, scalar_or_array
from .dstudy import DStudy, MeanSquares, TopicsNeeded, d_study, topics_needed


@dataclass(frozen=True, repr=False)
class VarianceComponents(ResultMixin):
    """Variance components of the two-way crossed model (:mod:`planner.variance`).

    Attributes
    ----------
    var_s, var_t, var_e : float
        System, topic and residual (interaction + error) variances, after truncation of
        negative estimates to 0.
    ms_s, ms_t, ms_e : float
        Mean squares (REML: the ones implied by the components).
    df_s, df_t, df_e : int
        Degrees of freedom ``S-1``, ``T-1``, ``(S-1)(T-1)``.
    n_systems, n_topics : int
        ``S`` and ``T`` of the fit (after ``drop``).
    grand_mean : float
        Mean score (REML: the GLS estimate of ``mu``).
    method : str
        ``"anova"`` or ``"reml"``.
    truncated : tuple of str
        Names of the components set to 0 (``"var_s"``, ...).
    strata : Mapping or None
        Per-stratum fits (stratum -> VarianceComponents) or ``None``.
    weights : Mapping or None
        Stratum weights ``W_k`` (default ``T_k / T``) or ``None``.
    raw : Mapping
        The estimates before truncation.
    dropped : tuple of str
        Systems removed by ``drop``.
    drop : float
        The ``drop`` fraction used.
    n_cells : int
        Observed cells used.
    measure : str or None
        The measure of the scores, if known.
    converged : bool
        REML convergence (``True`` for ANOVA).

    Examples
    --------
    >>> import planner
    >>> vc = planner.fit(planner.datasets.load("dl19-passage", measure="nDCG@10"))
    >>> round(vc.erho2(50), 3), vc.topics_for(erho2=0.95).n_topics
    (0.975, 24.0)
    """

    _repr_fields = ('var_s', 'var_t', 'var_e', 'n_systems', 'n_topics', 'method')

    var_s: float
    var_t: float
    var_e: float
    ms_s: float
    ms_t: float
    ms_e: float
    df_s: int
    df_t: int
    df_e: int
    n_systems: int
    n_topics: int
    grand_mean: float
    method: str
    truncated: tuple[str, ...] = ()
    strata: Mapping[str, VarianceComponents] | None = None
    weights: Mapping[str, float] | None = None
    raw: Mapping[str, float] = field(default_factory=dict)
    dropped: tuple[str, ...] = ()
    drop: float = 0.0
    n_cells: int = 0
    measure: str | None = None
    converged: bool = True

    # ---------------------------------------------------------------- coefficients
    @property
    def total(self) -> float:
        return self.var_s + self.var_t + self.var_e

    def erho2(self, n):
        """Generalizability coefficient at ``n`` topics (scalar or array)."""
        nn = positive_numbers(n)
        out = ratio(self.var_s, self.var_s + self.var_e / nn)
        return scalar_or_array(out, n)

    def phi(self, n):
        """Dependability index at ``n`` topics (scalar or array)."""
        nn = positive_numbers(n)
        out = ratio(self.var_s, self.var_s + (self.var_t + self.var_e) / nn)
        return scalar_or_array(out, n)

    def mean_squares(self) -> MeanSquares:
        """The mean squares, degrees of freedom and sizes the intervals use."""
        return MeanSquares(self.ms_s, self.ms_t, self.ms_e, self.df_s, self.df_t, self.df_e,
                           self.n_systems, self.n_topics)

    def dstudy(self, n=None, *, alpha: float = 0.05) -> DStudy:
        """Erho2 and Phi at ``n`` topics (default: the fitted ``T``) with ``1 - alpha`` intervals."""
        a = check_alpha(alpha)
        nn = np.atleast_1d(positive_numbers(self.n_topics if n is None else n))
        return d_study(self.mean_squares(), nn, a, erho2=np.atleast_1d(self.erho2(nn)),
                       phi=np.atleast_1d(self.phi(nn)))

    def topics_for(self, *, erho2: float | None = None, phi: float | None = None,
                   alpha: float = 0.05) -> TopicsNeeded:
        """Topics needed for a target Erho2 or Phi (give exactly one), with its interval."""
        if (erho2 is None) == (phi is None):
            raise ParameterError("give exactly one of erho2= and phi=", parameter="erho2")
        coef = "erho2" if erho2 is not None else "phi"
        g = check_open_unit(erho2 if erho2 is not None else phi, coef)
        a = check_alpha(alpha)
        if self.var_s <= 0:
            warnings.warn("system variance is 0: no number of topics reaches the target",
                          DegenerateDataWarning, stacklevel=2)
        return topics_needed(self.mean_squares(), coef, g, a, var_s=self.var_s, var_t=self.var_t,
                             var_e=self.var_e)

    # ---------------------------------------------------------------- output
    def to_dict(self) -> dict:
        d: dict[str, object] = {
            "method": self.method, "measure": self.measure,
            "n_systems": int(self.n_systems), "n_topics": int(self.n_topics), "n_cells": int(self.n_cells),
            "grand_mean": float(self.grand_mean),
            "var_s": float(self.var_s), "var_t": float(self.var_t), "var_e": float(self.var_e),
            "ms_s": float(self.ms_s), "ms_t": float(self.ms_t), "ms_e": float(self.ms_e),
            "df_s": int(self.df_s), "df_t": int(self.df_t), "df_e": int(self.df_e),
            "truncated": list(self.truncated), "raw": {k: float(v) for k, v in self.raw.items()},
            "drop": float(self.drop), "dropped": list(self.dropped), "converged": bool(self.converged),
            "strata": None, "weights": None,
        }
        if self.strata is not None:
            d["strata"] = {k: v.to_dict() for k, v in self.strata.items()}
        if self.weights is not None:
            d["weights"] = {k: float(v) for k, v in self.weights.items()}
        return d

    def to_frame(self) -> pd.DataFrame:
        """Components table: component, variance, share of the total, mean square, df."""
        tot = self.total
        rows = []
        for name, var, ms, df in (("system", self.var_s, self.ms_s, self.df_s),
                                  ("topic", self.var_t, self.ms_t, self.df_t),
                                  ("residual", self.var_e, self.ms_e, self.df_e)):
            rows.append({"component": name, "variance": var,
                         "share": var / tot if tot > 0 else math.nan,
                         "mean_square": ms, "df": df})
        return pd.DataFrame(rows)

"""The predictive engine: the analytic statistics, with pilot-aware swap and reversal rates.

The swap and reversal rates come from :func:`planner.simulate.rates.predictive_pair_rates`,
which accounts for the noise in the observed ``dbar`` (empirical-Bayes posterior
predictive; the prior, pair variance and integration over the variance named by the
method's :attr:`planner.methods.Method.spec`). The prior is fitted once over all pairs;
identical systems are ties (0.5), as in every method. The other statistics are those of
the analytic engine with ``variance="pair"``.

Examples
--------
>>> import numpy as np
>>> from planner.simulate.engine import Setup
>>> from planner.simulate.predictive import PredictiveEngine
>>> x = np.array([[0.5, 0.6, 0.7, 0.4], [0.3, 0.5, 0.6, 0.5], [0.1, 0.2, 0.4, 0.3]])
>>> engine = PredictiveEngine.prepare(Setup.build(x, "predictive", topics=(10,)))
>>> engine.prior_info["kind"], engine.prior_info["variance"]
('normal', 'pair')
>>> engine.chunk(0, slice(0, 3))["swap_rate"].round(3).tolist()
[0.157, 0.001, 0.0]
"""

from __future__ import annotations

import numpy as np

from ..variance import pair_moments as _direct_pair_moments
from .analytic import AnalyticEngine
from .engine import Setup
from .priors import Prior, fit_prior
from .rates import VarianceScales, pair_variance_model, predictive_pair_rates, variance_df, variance_scales
from .work import Shape, Work

__all__ = ["PredictiveEngine", "prior_summary"]


def prior_summary(prior: Prior, s2_pred: np.ndarray, n0: int, variance: str, integrate: bool) -> dict:
    """:attr:`planner.simulate.Curve.prior`: the prior's fields, the variance model and, for the
    normal prior, ``shrinkage_median`` (median over pairs of ``tau2 / (tau2 + sigma_d^2 / T)``)."""
    info: dict = {**prior.to_dict(), "variance": variance, "integrated": bool(integrate)}
    if prior.kind == "normal":
        pos = s2_pred[s2_pred > 0]
        info["shrinkage_median"] = float(np.median(prior.tau2 / (prior.tau2 + pos / n0))) \
            if pos.size and prior.tau2 > 0 else (0.0 if pos.size else None)
    return info


class PredictiveEngine(AnalyticEngine):
    """Analytic statistics per chunk; swap and reversal from the posterior predictive."""

    def __init__(self, setup: Setup):
        super().__init__(setup)
        spec = setup.method.spec
        if spec is None:
            raise ValueError(f"method {setup.method.name!r} is not predictive")
        T = setup.x.shape[1]
        self.s2_pred = pair_variance_model(setup.s2, spec.variance)
        # the prior once, over all pairs (the scale prior apart on the close ones where they differ);
        # the rates are then per chunk and n
        self.prior = (setup.prior if setup.prior is not None
                      else fit_prior(setup.dbar, self.s2_pred, T, prior=spec.prior,
                                     system_var=setup.x.var(axis=1, ddof=1)))
        self.prior_info = prior_summary(self.prior, self.s2_pred, T, spec.variance, spec.integrate)
        self.nu = variance_df(T, _direct_pair_moments(setup.x, setup.a, setup.b, kurtosis=True,
                                                      block=setup.pair_block)[2]) if spec.integrate else None

    @staticmethod
    def memory(setup: Setup) -> tuple[int, int]:
        # 16 float64 values more per pair than analytic for its rates (one n at a time),
        # 32 more with the variance integrated (its 16 quadrature scales)
        integrate = setup.method.spec is not None and setup.method.spec.integrate
        return 8 * (12 + 6 * max(1, setup.n_strata) + (32 if integrate else 16)), 0

    @staticmethod
    def work(shape: Shape) -> Work:
        # about 320 units a pair and topic count (the posterior predictive rates of the
        # deconvolved method; measured, docs/research/known-limits.md) beside the analytic ones
        return AnalyticEngine.work(shape) + Work(320.0 * shape.pairs * len(shape.counts) * shape.strata, 0)

    def per_chunk(self, pairs: slice) -> tuple[np.ndarray, VarianceScales | None]:
        # the quadrature over each pair's variance: once per chunk, for every n
        scales = variance_scales(self.nu[pairs], pairs=pairs.stop - pairs.start) if self.nu is not None else None
        return self.stratum_variances(pairs), scales

    def chunk(self, j: int, pairs: slice) -> dict[str, np.ndarray]:
        s = self.setup
        sig2_k, scales = self._chunk_state(pairs)
        res = self.analytic(j, pairs, sig2_k)
        pr = predictive_pair_rates(s.dbar[pairs], self.s2_pred[pairs], s.x.shape[1], [s.topics[j]],
                                   prior=self.prior, df=scales,
                                   close=None if self.prior.close is None else self.prior.close[pairs])
        res["swap_rate"] = pr["swap_rate"][:, 0]         # ties: TIE_RATE, as everywhere
        res["reversal_rate"] = pr["reversal_rate"][:, 0]
        return res

"""The result of :func:`planner.simulate.predict`: what ``n`` topics buy, as curves against n.

Examples
--------
>>> import planner
>>> scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
>>> curve = planner.predict(scores, topics=[10, 40], method="analytic")
>>> curve.topics, curve.method, curve.variance
((10, 40), 'analytic', 'pair')
>>> bool(curve.row(40)["swap_rate_mean"] < curve.row(10)["swap_rate_mean"])
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._json import plain as _plain
from ..errors import ParameterError
from ..results import ResultMixin
from .prediction import PredictionBand

__all__ = ["DEFAULT_BINS", "Curve"]

#: edges of the ``|dbar|`` bins of :attr:`Curve.bins`
DEFAULT_BINS = (0.0, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, math.inf)


@dataclass(frozen=True, repr=False)
class Curve(ResultMixin):
    """What ``n`` topics buy: :func:`predict`'s result.

    Attributes:
        method: the method used (``"analytic"``, ``"bootstrap"``, ...).
        variance: which variance drove the numbers (``"pair"``, ``"pooled"``,
            ``"within-system"``, ``"percentile:95"``, ``"empirical"`` for the
            resampling methods).
        seed: the integer seed given, or the one drawn when ``rng=None`` and the method
            is random (``rng=seed`` repeats the curve); ``None`` for a Generator, or a
            closed-form method given no seed.
        topics: the topic counts, in the order given.
        rows: one dict per topic count: ``n_topics``, ``n_pairs``,
            ``swap_rate_mean``, ``reversal_rate_mean``, ``kendall_tau_mean``,
            ``ci_width_median``, ``ci_width_p90``, ``power_mean``,
            ``discriminative_power``, ``erho2``, ``phi``, ``extrapolated``
            (bool), and ``allocation`` (stratum -> n_k) for stratified modes.
        bins: the same summaries by bins of observed ``|dbar|``: one dict per
            (topic count, bin) with ``n_topics``, ``bin_lo``, ``bin_hi``,
            ``n_pairs`` and the means / median.
        per_pair: statistic -> array ``(pairs, len(topics))`` (``swap_rate``,
            ``reversal_rate``, ``ci_width``, ``power``, ``significant``), or
            ``None`` with ``keep_pairs=False``.
        pair_a, pair_b: system indices of the pairs (``a < b``).
        dbar, s2_d: per-pair mean difference and variance (ddof=1) on the collection.
        systems: system names.
        measure: the measure of the scores.
        n_collection_topics: ``T``.
        min_diff, alpha, resamples: the options used.
        strata: the stratum mode; ``weights``: stratum -> ``W_k`` (or ``None``).
        extrapolation: for ``subsample``: ``{"A", "B", "fit_topics", "extrapolates", "by_bin"}``
            of ``swap = A exp(-B n)``; else ``None``.
        prediction: with ``predict(..., prediction=level)``, the prediction intervals of the
            swap rate, reversal rate and Kendall tau that new topic sets will show
            (:class:`~planner.simulate.prediction.PredictionBand`); the rows then also carry
            ``swap_rate_pred_low`` / ``_pred_high``, ``reversal_rate_pred_low`` / ``_pred_high``
            and ``kendall_tau_pred_low`` / ``_pred_high``. ``None`` otherwise.
        prior: for the pilot-aware methods, the empirical-Bayes prior fitted over
            all pairs (:meth:`planner.simulate.priors.Prior.to_dict`: ``kind``, ``tau2``, ...)
            with ``variance`` (each pair's ``sigma_d^2`` model), ``integrated`` and,
            for the normal prior, ``shrinkage_median``: the median over pairs of
            ``tau2 / (tau2 + sigma_d^2 / T)``, the factor by which a pair's observed
            difference is pulled towards 0 (1 = plug-in); else ``None``.
    """

    _repr_fields = ('method', 'variance', 'seed', 'topics', 'measure')

    method: str
    variance: str
    seed: int | None
    topics: tuple[int, ...]
    rows: tuple[dict, ...]
    bins: tuple[dict, ...]
    per_pair: dict | None
    pair_a: np.ndarray
    pair_b: np.ndarray
    dbar: np.ndarray
    s2_d: np.ndarray
    systems: tuple[str, ...]
    measure: str | None
    n_collection_topics: int
    min_diff: float
    alpha: float
    resamples: int | None
    strata: str
    weights: dict | None = None
    extrapolation: dict | None = None
    components: dict = field(default_factory=dict)
    prior: dict | None = None
    prediction: PredictionBand | None = None

    def to_dict(self, *, pairs: bool = False) -> dict:
        """JSON-able dict: ``method``, ``variance``, ``seed``, ``rows`` (and more; ``prediction``
        when the curve has prediction intervals).

        ``pairs=True`` adds ``pairs``: one dict per pair with the system names,
        ``dbar``, ``s2_d`` and each kept statistic as a list over topic counts.
        """
        out = {
            "method": self.method,
            "variance": self.variance,
            "seed": self.seed,
            "measure": self.measure,
            "topics": [int(n) for n in self.topics],
            "n_systems": len(self.systems),
            "n_collection_topics": int(self.n_collection_topics),
            "n_pairs": int(self.pair_a.size),
            "min_diff": float(self.min_diff),
            "alpha": float(self.alpha),
            "resamples": None if self.resamples is None else int(self.resamples),
            "strata": self.strata,
            "weights": None if self.weights is None else {k: float(v) for k, v in self.weights.items()},
            "components": {k: float(v) for k, v in self.components.items()},
            "rows": [_plain(r) for r in self.rows],
            "bins": [_plain(r) for r in self.bins],
            "extrapolation": _plain(self.extrapolation),
            "prior": _plain(self.prior),
        }
        if self.prediction is not None:
            out["prediction"] = self.prediction.to_dict()
        if pairs:
            items = []
            for i in range(self.pair_a.size):
                item = {"a": self.systems[self.pair_a[i]], "b": self.systems[self.pair_b[i]],
                        "dbar": float(self.dbar[i]), "s2_d": float(self.s2_d[i])}
                if self.per_pair is not None:
                    for k, v in self.per_pair.items():
                        item[k] = [float(x) for x in v[i]]
                items.append(item)
            out["pairs"] = items
        return out

    def to_frame(self):
        """The rows as a pandas DataFrame (one row a topic count)."""
        import pandas as pd  # heavy, and needed only here

        return pd.DataFrame([dict(r) for r in self.rows])

    def bins_frame(self):
        """The by-|difference| summaries as a pandas DataFrame."""
        import pandas as pd  # heavy, and needed only here

        return pd.DataFrame([dict(r) for r in self.bins])

    def pairs_frame(self):
        """Per-pair results in long form: ``a, b, dbar, s2_d, n_topics`` + statistics."""
        import pandas as pd  # heavy, and needed only here

        if self.per_pair is None:
            raise ParameterError("per-pair results were not kept (keep_pairs=False)",
                                 parameter="keep_pairs")
        P, N = self.pair_a.size, len(self.topics)
        cols = {
            "a": np.repeat(np.array(self.systems, dtype=object)[self.pair_a], N),
            "b": np.repeat(np.array(self.systems, dtype=object)[self.pair_b], N),
            "dbar": np.repeat(self.dbar, N), "s2_d": np.repeat(self.s2_d, N),
            "n_topics": np.tile(np.asarray(self.topics), P),
        }
        for k, v in self.per_pair.items():
            cols[k] = v.reshape(-1)
        return pd.DataFrame(cols)

    def pair(self, a: str, b: str) -> dict:
        """One named pair: ``a``, ``b``, ``dbar``, ``s2_d`` (oriented as asked) and each kept
        statistic as a list over :attr:`topics` (interval width, reversal, swap, ...)."""
        pos = {s: i for i, s in enumerate(self.systems)}
        for name in (a, b):
            if name not in pos:
                raise ParameterError(f"unknown system {name!r}", parameter="pair")
        i, j = pos[a], pos[b]
        if i == j:
            raise ParameterError("a pair needs two different systems", parameter="pair")
        lo, hi = min(i, j), max(i, j)
        S = len(self.systems)
        k = lo * S - lo * (lo + 1) // 2 + (hi - lo - 1)  # row-major index among a < b
        sign = 1.0 if i < j else -1.0
        out = {"a": a, "b": b, "dbar": sign * float(self.dbar[k]), "s2_d": float(self.s2_d[k]),
               "topics": [int(n) for n in self.topics]}
        if self.per_pair is not None:
            for name, v in self.per_pair.items():
                out[name] = [float(x) for x in v[k]]
        return out

    def row(self, n: int) -> dict:
        """The row of topic count ``n``."""
        for r in self.rows:
            if r["n_topics"] == n:
                return r
        raise ParameterError(f"no row for {n} topics", parameter="n")

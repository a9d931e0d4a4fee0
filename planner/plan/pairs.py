"""The closed-form pair model the targets are solved on: pair differences, their variances,
the variance components, and each target's statistic at n topics.

Per pair ``(a, b)`` the observed mean difference ``dbar`` is taken as the true difference and
``sigma_d^2`` comes from the variance selector. At ``n`` topics: ``p = Phi(-|dbar| sqrt(n) /
sigma_d)``; reversal rate ``p``; swap rate ``2 p (1 - p)``; expected Kendall tau ``1 - 2 *
mean swap``; interval width ``2 t_{1-alpha/2}(n-1) sigma_d / sqrt(n)`` (a quantile over pairs);
power of the paired t at ``min_diff`` (mean over pairs); ``Erho2(n)`` and ``Phi(n)`` from the
variance components.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from .. import methods
from ..errors import ParameterError
from ..parallel import over_share
from ..scores import ScoreMatrix
from ..simulate.analytic import t_power
from ..simulate.rates import variance_df
from ..variance import anova_components as _variance_anova
from ..variance import pair_index, pair_moments, pair_variance, parse_selector, within_system
from .checks import complete_values

__all__ = ["MAX_RESAMPLED_PAIR_BYTES", "PairModel", "anova_components", "batch_stat",
           "check_resampled_pairs", "median_unbiased", "median_unbiased_factors", "pair_variances",
           "planning_variances", "quantile_variance"]

#: most memory the pair models of the topic resamples of an interval on n may take together
#: (``RESAMPLED_PAIR_BYTES`` a pair and resample: its mean, its variance and the temporaries of
#: a step of the search, solved all resamples at once): 512 MB, so 200 resamples of ~320
#: systems or 20 of ~1,000; :func:`check_resampled_pairs` refuses more before they are drawn
MAX_RESAMPLED_PAIR_BYTES = 512 << 20
RESAMPLED_PAIR_BYTES = 40


def check_resampled_pairs(n_systems: int, n_resamples: int) -> None:
    """Refuse, before any is drawn, ``n_resamples`` pair models of ``n_systems`` systems over
    :data:`MAX_RESAMPLED_PAIR_BYTES` (a ParameterError of ``n_resamples``, giving the most
    resamples that fit); inside one of ``N`` local worker processes (a study's ``--jobs``), over
    its share ``MAX_RESAMPLED_PAIR_BYTES / N`` (:func:`planner.parallel.over_share`)."""
    K = n_systems * (n_systems - 1) // 2
    need = RESAMPLED_PAIR_BYTES * K * n_resamples
    over = over_share(need, MAX_RESAMPLED_PAIR_BYTES, "MAX_RESAMPLED_PAIR_BYTES")
    if over is None:
        return
    most = over.share // (RESAMPLED_PAIR_BYTES * max(K, 1))
    fixes = ([f"at most {most} resamples"] if most >= 2 else []) + \
        ([f"--jobs {over.jobs}"] if over.jobs else []) + ["0 for no interval", "or fewer systems"]
    raise ParameterError(f"{n_resamples} topic resamples of {n_systems:,} systems ({K:,} pairs) need "
                         f"{need / 2**30:.1f} GB for the interval on n{over.clause}: use " + ", ".join(fixes),
                         parameter="n_resamples")


def anova_components(vals: np.ndarray) -> dict[str, float]:
    """Two-way ANOVA (method of moments) components ``var_s``, ``var_t``, ``var_e`` of a complete
    (S, T) matrix."""
    c = _variance_anova(vals)
    return {k: c[k] for k in ("var_s", "var_t", "var_e")}


def _variances(vals: np.ndarray, selector: str, design: str, var_e: float | None = None,
               pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """The per-pair variances of ``selector`` (``var_e``: the ANOVA residual, when already
    fitted; ``pairs``: ``(a, b, s2d)`` when already computed). A variance shared by every pair
    (pooled, within-system, percentile) is one value broadcast to all pairs (a read-only view,
    no memory per pair), and pooled and within-system need no pair at all."""
    kind, q = parse_selector(selector, parameter="variance")
    if design not in ("paired", "independent"):
        raise ParameterError(f"unknown design {design!r}; expected paired or independent", parameter="design")
    S = vals.shape[0]
    K = S * (S - 1) // 2
    paired = design == "paired"
    factor = 2.0 if paired else 1.0
    if kind == "pooled":
        ve = anova_components(vals)["var_e"] if var_e is None else var_e
        return np.broadcast_to(np.float64(factor * ve), (K,))
    if kind == "within-system":
        return np.broadcast_to(np.float64(factor * within_system(vals)), (K,))
    if pairs is None:
        a, b = pair_index(S)
        s2d = pair_moments(vals, a, b)[1]
    else:
        a, b, s2d = pairs
    if paired:
        own = s2d
    else:
        var_sys = vals.var(axis=1, ddof=1)
        own = (var_sys[a] + var_sys[b]) / 2
    if kind == "pair":
        return own
    assert q is not None        # (parse_selector gives percentile:q its q)
    return np.broadcast_to(np.float64(np.percentile(own, q)), (K,))


def pair_variances(scores: Any, selector: str = "pooled", *, design: str = "paired") -> np.ndarray:
    """One variance per system pair (all pairs a < b in order), as DESIGN.md defines them.

    Parameters
    ----------
    scores : ScoreMatrix or array
        A ScoreMatrix goes to :func:`planner.variance.pair_variance`; a complete (S, T)
        array (the resampling loops) is computed here with the same definitions and the
        ANOVA residual for ``pooled``.
    selector : str, optional
        ``pair``, ``pooled``, ``within-system`` or ``percentile:q``.
    design : {"paired", "independent"}, optional
        Variances of differences, or within-system variances.

    Returns
    -------
    numpy.ndarray
        ``S (S - 1) / 2`` variances; one value shared by every pair (``pooled``,
        ``within-system``, ``percentile:q``) is a read-only broadcast view of it.

    Examples
    --------
    >>> x = np.array([[0.1, 0.4, 0.3], [0.2, 0.2, 0.5]])
    >>> pair_variances(x, "pair")
    array([0.04333333])
    """
    if isinstance(scores, ScoreMatrix):
        parse_selector(selector, parameter="variance")
        return np.asarray(pair_variance(scores, selector, design=design), dtype=float)
    return _variances(complete_values(scores), selector, design)


def median_unbiased_factors(kurtosis: np.ndarray, topics: int) -> np.ndarray:
    """The factor on each pair's variance of per-topic differences that makes it as likely to fall
    short of the pair's true variance as to exceed it: ``nu / chi2.median(nu)``, ``nu`` the pair's
    degrees of freedom from its differences' sample excess ``kurtosis`` over ``topics`` topics
    (:func:`planner.simulate.variance_df`; the kurtosis as from
    ``planner.variance.pair_moments(..., kurtosis=True)``).

    ``s2_d`` is unbiased but right-skewed, and the more so the heavier the differences' tails: a
    topic set that lacks the few heavy topics falls short of the variance further than one with
    them overshoots it. A design planned on the median over pairs of ``s2_d`` therefore asked for
    too few topics in most 20-50-topic draws: that variance's median over draws was 0.85-0.98 of
    the population's (draws with replacement from 27 collection and measure matrices, where the
    population's variance is known); with the factors, 0.91-1.04 (docs/research/calibration.md,
    seventeenth session).

    Examples
    --------
    >>> median_unbiased_factors(np.array([0.0, 3.0]), 20).round(3).tolist()
    [1.043, 1.116]
    """
    nu = variance_df(topics, kurtosis)
    return nu / stats.chi2.median(nu)


def median_unbiased(selector: str, design: str = "paired") -> bool:
    """True when a count that rises with one planning variance (a design's power or width, the
    ``ci_width`` target) plans on each pair's variance made median-unbiased
    (:func:`median_unbiased_factors`): the ``pair`` selector of a paired design. A variance shared
    by every pair (pooled, within-system, a percentile) is not made so."""
    kind, _ = parse_selector(selector, parameter="variance")
    return design == "paired" and kind == "pair"


def planning_variances(scores: Any, selector: str, *, design: str = "paired") -> np.ndarray:
    """The pairs' variances a count that rises with one planning variance plans on: those of
    :func:`pair_variances`, each made median-unbiased where :func:`median_unbiased` says so (a
    complete matrix; a ScoreMatrix keeps its own exact zeros for pairs a constant apart, and their
    warning). A leave-out fit (an array) takes its variances and kurtoses from one pass."""
    if not median_unbiased(selector, design):
        return pair_variances(scores, selector, design=design)
    s2d, factors = _variances_and_factors(complete_values(scores))
    own = pair_variances(scores, selector) if isinstance(scores, ScoreMatrix) else s2d
    return own * factors


def _variances_and_factors(vals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each pair's ``s2_d`` and its :func:`median_unbiased_factors`, from one pass over the pairs."""
    _, s2d, kurt = pair_moments(vals, *pair_index(vals.shape[0]), kurtosis=True)
    return s2d, median_unbiased_factors(kurt, vals.shape[1])


def quantile_variance(var: np.ndarray, quantile: float) -> float:
    """The planning variance of a count that rises with one variance (an interval-width target):
    the square of the ``quantile``-th percentile over pairs of their standard deviations, whose
    width is that percentile of the pairs' widths."""
    return float(np.percentile(np.sqrt(var), quantile)) ** 2


class PairModel:
    """Pair differences and variance components of a complete (S, T) matrix, computed once.

    Attributes
    ----------
    vals : numpy.ndarray
        The (S, T) scores.
    dbar, var : numpy.ndarray
        Each pair's mean difference and its variance (of the selector).
    identical : numpy.ndarray of bool
        Pairs identical on every topic (ties, as in :func:`planner.simulate.predict`).
    comp : dict
        ANOVA components ``var_s``, ``var_t``, ``var_e``.

    ``moments=(dbar, s2d)``: the pair means and variances (ddof=1) when already computed (the
    topic resamples of :mod:`planner.plan.resolve`, all from one product).

    Examples
    --------
    >>> m = PairModel(np.array([[0.1, 0.4, 0.3], [0.2, 0.2, 0.5]]), "pair")
    >>> round(m.stat("swap_rate", 10, min_diff=0.05, alpha=0.05), 4)
    0.425
    """

    def __init__(self, vals: np.ndarray, selector: str, *,
                 moments: tuple[np.ndarray, np.ndarray] | None = None):
        self.vals = vals
        a, b = pair_index(vals.shape[0])
        dbar, s2d = pair_moments(vals, a, b) if moments is None else moments
        self.comp = anova_components(vals)
        self.var = _variances(vals, selector, "paired", self.comp["var_e"], (a, b, s2d))
        # pairs identical on every topic are ties, as in planner.simulate.predict
        self.identical = (s2d == 0) & (dbar == 0)
        self.dbar = dbar
        self.selector = selector
        self._factors: np.ndarray | None = None

    def planning_factors(self) -> np.ndarray:
        """Each pair's factor from its variance to the one a count that rises with the variance
        alone plans on (:func:`planning_variances`; ones where :func:`median_unbiased` says no),
        computed once."""
        if self._factors is None:
            self._factors = (_variances_and_factors(self.vals)[1] if median_unbiased(self.selector)
                             else np.ones_like(self.dbar))
        return self._factors

    def for_target(self, target: str, var: np.ndarray) -> np.ndarray:
        """The pair variances ``var`` (these pairs', or a function of them such as their
        variances with fewer query variants) as ``target`` is solved on them: made
        median-unbiased for a count that rises with the variance alone
        (:attr:`planner.methods.Target.variance_count`), else as they are."""
        return var * self.planning_factors() if methods.target(target).variance_count else var

    def stat(self, target: str, n: float, *, min_diff: float, alpha: float, quantile: float = 50.0,
             var_scale: float = 1.0) -> float:
        """The statistic of ``target`` at ``n`` topics on the pair variances it is solved on
        (:meth:`for_target`), every one times ``var_scale`` (an end of the jackknife interval of
        the planning variance, :mod:`planner.plan.jackknife`)."""
        comp = {k: np.array([v]) for k, v in self.comp.items()}
        var = var_scale * self.for_target(target, self.var)
        return float(batch_stat(target, np.array([float(n)]), self.dbar[None, :], var[None, :],
                                comp, min_diff=min_diff, alpha=alpha, quantile=quantile)[0])


def _pair_rate(name: str, nn: np.ndarray, dbar: np.ndarray, sd: np.ndarray, safe: np.ndarray) -> np.ndarray:
    z = np.where(sd > 0, np.abs(dbar) * np.sqrt(nn) / safe, np.where(dbar != 0, np.inf, 0.0))
    p = stats.norm.sf(z)
    if name == "reversal_rate":
        return p.mean(axis=1)
    swap = (2 * p * (1 - p)).mean(axis=1)
    return swap if name == "swap_rate" else 1.0 - 2.0 * swap


def _reliability(name: str, n: np.ndarray, comp: dict) -> np.ndarray:
    vs, vt, ve = comp["var_s"], comp["var_t"], comp["var_e"]
    with np.errstate(divide="ignore", invalid="ignore"):
        if name == "erho2":
            return np.where(vs + ve > 0, vs / (vs + ve / n), 0.0)
        return np.where(vs + vt + ve > 0, vs / (vs + (vt + ve) / n), 0.0)


#: above this many pair-resample values the paired-t power of a batch is interpolated
_POWER_EXACT_MAX = 20_000
#: knots of the interpolation of the power in log(1 + nc), per topic count
_POWER_KNOTS = 1025


def batch_stat(target: str, n: np.ndarray, dbar: np.ndarray, var: np.ndarray, comp: dict, *, min_diff: float,
               alpha: float, quantile: float = 50.0) -> np.ndarray:
    """The target statistic at ``n[i]`` for each of ``B`` models (rows).

    ``dbar``, ``var`` are ``(B, K)``, ``comp`` holds ``(B,)`` components. A pair with
    ``var = 0`` and ``dbar = 0`` (identical systems) is a tie: swap and reversal rate 0.5,
    power 1, width 0.

    Examples
    --------
    >>> comp = {"var_s": np.array([0.01]), "var_t": np.array([0.02]), "var_e": np.array([0.01])}
    >>> batch_stat("erho2", np.array([10.0]), np.zeros((1, 1)), np.ones((1, 1)), comp, min_diff=0.05, alpha=0.05)
    array([0.90909091])
    """
    t = methods.target(target, where=lambda t: t.solvable)
    n = np.asarray(n, dtype=float)
    if t.reliability:
        return _reliability(t.name, n, comp)
    nn = n[:, None]
    sd = np.sqrt(var)
    safe = np.where(sd > 0, sd, 1.0)
    if t.pair_rate:
        return _pair_rate(t.name, nn, dbar, sd, safe)
    if t.needs_min_diff:        # power: the noncentral t of planner.simulate's analytic engine
        pw = np.stack([t_power(min_diff / (row / np.sqrt(k)), k - 1, stats.t.ppf(1 - alpha / 2, k - 1))
                       for k, row in zip(n, np.broadcast_to(safe, (n.size, safe.shape[1])))])
        return np.where(sd > 0, pw, 1.0).mean(axis=1)
    w = 2 * stats.t.isf(alpha / 2, nn - 1) * sd / np.sqrt(nn)      # ci_width
    return np.percentile(w, quantile, axis=1)

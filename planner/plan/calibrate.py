"""A topic count that does not depend on the size of the collection it is learnt from.

A swap-rate count learnt from ``n0`` topics runs low when it lies beyond them. The count is
set by the pairs of systems whose true standardized difference ``theta = delta / sigma_d``
is close to 0, and ``n0`` topics show each pair's ``theta`` with noise of variance ``1 / n0``:
the close pairs look further apart than they are, the more so the smaller ``n0``
(docs/research/calibration.md). Plugging the observed differences in cannot undo that.

The calibrated count deconvolves instead. The standardized differences
``z = dbar sqrt(n0) / s_d`` of the pairs are modelled as ``theta sqrt(n0)`` plus standard normal
noise, with ``theta`` drawn from a zero-centred scale mixture of normals,
``G = sum_j w_j N(0, tau_j^2)``, on a fixed geometric grid of scales from :data:`TAU_MIN` to
:data:`TAU_MAX` (empirical Bayes, weights by maximum likelihood on a fine histogram of ``|z|``;
the grid and the binning are the only choices). Under ``G`` the rates at ``n`` topics are
closed forms: with ``r_j = n tau_j^2 / (n tau_j^2 + 1)``,

    swap rate      = sum_j w_j (1/2 - arcsin(r_j) / pi)
    reversal rate  = sum_j w_j (1/2 - arcsin(sqrt(r_j)) / pi)
    Kendall tau    = 1 - 2 swap rate

(the chance that two independent n-topic means, or one mean and the truth, differ in sign,
averaged over ``theta ~ G``); pairs identical on every topic stay ties (0.5). The noise is
part of the model, so the fitted ``G`` and the count it gives do not drift with ``n0``.

The interval is the percentile interval of the counts of the topic resamples, each
deconvolved the same way. The power and interval-width targets read only the pairs'
variances, whose plug-in is not biased by ``n0`` (measured: docs/research/calibration.md), so
their calibrated answer is the plain one.

Examples
--------
>>> import numpy as np
>>> rng = np.random.default_rng(0)
>>> theta = rng.normal(0, 0.5, 2000)                 # true standardized differences
>>> z = theta * np.sqrt(25) + rng.normal(size=2000)  # what 25 topics show
>>> mix = fit_scale_mixture(z[None, :], np.zeros((1, 2000), bool), 25)
>>> n = mixture_counts(mix, "swap_rate", 0.05)
>>> truth = mixture_counts(ScaleMixture(np.array([0.5]), np.ones((1, 1)), np.zeros(1)), "swap_rate", 0.05)
>>> int(truth[0]), bool(abs(n[0] / truth[0] - 1) < 0.1)   # the plug-in count of z / 5 is far lower
(321, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtr

from .. import methods
from ..errors import ParameterError
from .search import interval_quantiles, smallest_n_vec

__all__ = [
    "CALIBRATION_NOTE",
    "TAU_MAX",
    "TAU_MIN",
    "VARIANCE_ONLY_NOTE",
    "Calibrated",
    "ScaleMixture",
    "calibrated_count",
    "check_calibrate",
    "fit_scale_mixture",
    "mixture_counts",
    "mixture_rate",
    "standardized",
]

#: what a reader of a calibrated count must know (written once, read by results and docs)
CALIBRATION_NOTE = ("corrected for the collection's size: pair differences deconvolved (empirical-Bayes scale "
                    "mixture), each topic resample likewise (docs/research/calibration.md)")
#: what a reader of a calibrated power or width count must know
VARIANCE_ONLY_NOTE = ("reads only the pairs' variances, which the collection's size does not bias: the plain "
                      "count (docs/research/calibration.md)")
#: smallest and largest scale of the mixture of standardized true differences (in pair SDs);
#: below TAU_MIN a pair is as good as tied for any count under 1 / TAU_MIN^2 = 100 topics
TAU_MIN, TAU_MAX, N_SCALES = 0.1, 5.0, 20
_EM_STEPS = 400
#: histogram of |z|: 0.05 wide to 8, then wide tail bins
_EDGES = np.concatenate([np.arange(0.0, 8.0, 0.05), [8.0, 12.0, 20.0, 50.0, np.inf]])


@dataclass(frozen=True)
class ScaleMixture:
    """Fitted mixtures ``G = sum_j w_j N(0, scales_j^2)`` of standardized true pair differences.

    Attributes
    ----------
    scales : numpy.ndarray
        ``(J,)`` scales ``tau_j``, in pair standard deviations.
    weights : numpy.ndarray
        ``(B, J)``: one mixture per row (the collection, or a topic resample of it).
    tie_frac : numpy.ndarray
        ``(B,)`` share of pairs identical on every topic (ties at every n).
    """

    scales: np.ndarray
    weights: np.ndarray
    tie_frac: np.ndarray


def standardized(dbar: np.ndarray, var: np.ndarray, n0: int) -> tuple[np.ndarray, np.ndarray]:
    """``z = |dbar| sqrt(n0) / s_d`` of ``(B, K)`` pair means and variances, and the ties.

    A pair with ``var = 0`` and ``dbar != 0`` is infinitely far apart (``z = inf``); with
    ``dbar = 0`` too it is a tie (``True`` in the second array).
    """
    tie = (var <= 0) & (dbar == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, np.abs(dbar) * math.sqrt(n0) / np.sqrt(np.where(var > 0, var, 1.0)), np.inf)
    return z, tie


def _bin_probs(n0: int, scales: np.ndarray) -> np.ndarray:
    """``(M, J)``: chance of each |z| bin under ``N(0, 1 + n0 tau_j^2)`` (folded)."""
    s = np.sqrt(1.0 + n0 * scales ** 2)
    cdf = ndtr(_EDGES[:, None] / s)
    return np.maximum(2.0 * np.diff(cdf, axis=0), 1e-300)


def fit_scale_mixture(z: np.ndarray, tie: np.ndarray, n0: int) -> ScaleMixture:
    """Maximum-likelihood weights of the scale mixture, one per row of ``z`` (EM on binned ``|z|``).

    Parameters
    ----------
    z : array, shape (B, K)
        Standardized pair differences (:func:`standardized`); their sign is not used.
    tie : bool array, shape (B, K)
        Pairs identical on every topic (left out of the fit, kept as ``tie_frac``).
    n0 : int
        Topics the differences were learnt from.
    """
    z, tie = np.atleast_2d(z), np.atleast_2d(tie)
    scales = np.geomspace(TAU_MIN, TAU_MAX, N_SCALES)
    idx = np.minimum(np.searchsorted(_EDGES, np.abs(z), side="right") - 1, _EDGES.size - 2)
    B, M = z.shape[0], _EDGES.size - 1
    counts = np.zeros((B, M))
    rows = np.broadcast_to(np.arange(B)[:, None], z.shape)
    np.add.at(counts, (rows[~tie], idx[~tie]), 1.0)
    like = _bin_probs(n0, scales)                              # (M, J)
    w = np.full((B, scales.size), 1.0 / scales.size)
    total = np.maximum(counts.sum(1, keepdims=True), 1.0)
    for _ in range(_EM_STEPS):
        post = like[None] * w[:, None, :]
        post /= post.sum(2, keepdims=True)
        w = np.einsum("bm,bmj->bj", counts, post) / total
    return ScaleMixture(scales, w, tie.mean(axis=1))


def mixture_rate(mix: ScaleMixture, target: str, n: np.ndarray) -> np.ndarray:
    """The ``target`` (swap_rate, reversal_rate or kendall_tau) of each mixture at ``n[b]`` topics."""
    nn = np.asarray(n, dtype=float).reshape(-1, 1)
    r = nn * mix.scales ** 2 / (nn * mix.scales ** 2 + 1.0)
    if target == "reversal_rate":
        r = np.sqrt(r)
    rate = (mix.weights * (0.5 - np.arcsin(r) / np.pi)).sum(axis=1)
    rate = (1.0 - mix.tie_frac) * rate + 0.5 * mix.tie_frac
    return 1.0 - 2.0 * rate if target == "kendall_tau" else rate


def mixture_counts(mix: ScaleMixture, target: str, value: float, n_max: int = 100_000) -> np.ndarray:
    """Smallest n of each mixture meeting ``target`` (``inf`` where none up to ``n_max``)."""
    t = methods.target(target)
    sign = 1.0 if t.direction == "<=" else -1.0
    return smallest_n_vec(lambda n: sign * mixture_rate(mix, target, n) <= sign * value,
                          mix.weights.shape[0], 2, n_max)


@dataclass(frozen=True)
class Calibrated:
    """A calibrated count and its interval.

    Attributes
    ----------
    n_topics : int or None
        The calibrated count (``None`` when no n up to the search limit meets the target).
    low : int or None
        Lower end.
    high : int or None
        Upper end; ``None`` when the resamples cannot bound it (see ``note``).
    note : str
        Empty, or why an end (or the count) is unbounded.
    """

    n_topics: int | None
    low: int | None
    high: int | None
    note: str = ""


def calibrated_count(counts: np.ndarray, level: float) -> Calibrated:
    """The calibrated answer from deconvolved counts: ``counts[0]`` the collection's, the rest its resamples'.

    Examples
    --------
    >>> c = calibrated_count(np.array([150.0] + [120.0] * 5 + [160.0] * 90 + [200.0] * 5), 0.9)
    >>> c.n_topics, c.low, c.high
    (150, 120, 160)
    >>> calibrated_count(np.array([150.0, 120.0] + [np.inf] * 9), 0.9).high is None
    True
    """
    ns = np.asarray(counts, dtype=float)
    if ns.ndim != 1 or ns.size < 3 or np.isnan(ns).any():
        raise ParameterError("counts must hold the collection's count and at least 2 resamples' counts",
                             parameter="counts")
    if not 0 < level < 1:
        raise ParameterError(f"level must be in (0, 1), got {level!r}", parameter="level")
    lo, hi = interval_quantiles(ns[1:], level)
    point = int(ns[0]) if math.isfinite(ns[0]) else None
    note = "" if math.isfinite(hi) else ("no finite upper end: too many topic resamples show pairs so close "
                                         "that no topic count up to the search limit separates them")
    return Calibrated(point, int(lo) if math.isfinite(lo) else None, int(hi) if math.isfinite(hi) else None,
                      note)


def check_calibrate(calibrate: object, method: methods.Method, target: methods.Target, resamples: int) -> None:
    """A ParameterError naming ``calibrate`` when the question has no topic resamples to correct with."""
    if not isinstance(calibrate, (bool, np.bool_)):
        raise ParameterError(f"calibrate must be True or False, got {calibrate!r}", parameter="calibrate")
    if not calibrate:
        return
    if target.reliability:
        raise ParameterError(f"calibrate: the {target.name} target's interval is the D-study's (Feldt / AJF), "
                             "not from topic resamples; use calibrate=False", parameter="calibrate")
    if not method.interval_on_n:
        raise ParameterError(f"calibrate needs an interval on n from topic resamples, which method "
                             f"{method.name!r} does not give; use 'analytic' or a predictive method",
                             parameter="calibrate")
    if resamples < 2:
        raise ParameterError("calibrate needs topic resamples (n_resamples >= 2)", parameter="calibrate")

"""Empirical-Bayes priors on the true pair differences ``delta`` (the predictive engine).

Every pair's pilot difference ``dbar`` is ``N(delta, se2)`` with ``se2 = sigma_d^2 / n0``;
``delta`` is drawn from a prior ``G`` fitted to all pairs, symmetric about 0 (pair
orientation is arbitrary): ``"normal"`` ``N(0, tau2)`` by the method of moments,
``"mixture"`` a scale mixture of normals by EM, ``"npmle"`` the nonparametric
maximum-likelihood prior on a grid (see :mod:`planner.simulate.rates` for the whole model), and
``"scale"`` the deconvolved prior: a zero-centred scale mixture of the *standardized* true
differences ``theta = delta / sigma_d`` on a fixed grid of scales (:func:`fit_scale_weights`).
Given each system's variance over the topics, the ``"scale"`` prior is fitted apart on the *close*
pairs (:func:`close_pairs`: the half whose differences vary least against the two systems' own
spread, near-identical systems) and on the others, where the data say the two differ
(:func:`split_close`).

Examples
--------
>>> from planner.simulate.priors import fit_prior
>>> p = fit_prior([0.1, -0.05, 0.02, 0.0], [0.01, 0.02, 0.01, 0.03], 25)
>>> p.kind, round(p.tau2, 6)
('normal', 0.002525)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from .._blas import one_blas_thread
from ..errors import ParameterError
from ..variance import pair_index

__all__ = ["PRIORS", "RAISE_TAIL", "SCALE_EDGES", "SCALE_GRID", "SPLIT_GAIN", "TAU_MAX", "TAU_MIN", "Prior",
           "check_pair_inputs", "close_pairs", "fit_prior", "fit_scale_weights", "group_weights", "mixture_loglik",
           "mixture_sds", "raise_drop", "scale_bin_probs", "scale_histogram", "split_close", "split_gain",
           "standardized", "unseen_mass_prior", "unseen_mass_weights"]

PRIORS = ("normal", "mixture", "npmle", "scale")

#: smallest and largest scale of the ``"scale"`` prior's mixture of standardized true differences
#: (in pair standard deviations). Below TAU_MIN a pair is as good as tied for any count under
#: ``1 / TAU_MIN^2 = 100`` topics: a smaller floor lets the fit put weight on scales a pilot
#: cannot tell from 0, and the count's spread across pilots grows (docs/research/calibration.md)
TAU_MIN, TAU_MAX, N_SCALES = 0.1, 5.0, 20
SCALE_GRID = np.geomspace(TAU_MIN, TAU_MAX, N_SCALES)
_EM_STEPS = 400
#: histogram of |z| the scale prior is fitted on: 0.05 wide to 8, then wide tail bins
SCALE_EDGES = np.concatenate([np.arange(0.0, 8.0, 0.05), [8.0, 12.0, 20.0, 50.0, np.inf]])
#: the ``"scale"`` prior is fitted apart on the close pairs and the others (:func:`split_close`) when
#: twice the log-likelihood gain, the pairs counted as ``systems`` observations, is at least this
#: (the 95% point of chi-square with about 1 df; chosen on the coverage benchmark's matrices,
#: docs/research/calibration.md, tenth and eleventh sessions)
SPLIT_GAIN = 4.0

#: the near-zero raise of an interval's upper end (:func:`unseen_mass_weights`) bounds its share
#: one-sided at ``1 - RAISE_TAIL * (1 - level)`` (90% for a 95% interval). The upper end is the
#: larger of the resamples' end (stretched: :data:`planner.plan.search.RESAMPLE_SPREAD`) and the
#: raised count; at 90% the count of the population of topics lay above it in 2.5% of 20-50-topic
#: draws (27 swap rows, 200 draws each), the share a 95% interval states; bounded at the interval's
#: own ``(1 + level) / 2``, in 1.3% (chosen on the coverage benchmark's matrices,
#: docs/research/calibration.md, fourteenth and fifteenth sessions)
RAISE_TAIL = 2.0


def check_pair_inputs(dbar, s2_d, n0, topics):
    dbar = np.asarray(dbar, dtype=np.float64).reshape(-1)
    s2_d = np.asarray(s2_d, dtype=np.float64).reshape(-1)
    if dbar.shape != s2_d.shape:
        raise ParameterError(f"dbar has {dbar.size} values but s2_d has {s2_d.size}", parameter="s2_d")
    if not (np.all(np.isfinite(dbar)) and np.all(np.isfinite(s2_d))):
        raise ParameterError("dbar and s2_d must be finite", parameter="dbar")
    if np.any(s2_d < 0):
        raise ParameterError("s2_d must be >= 0", parameter="s2_d")
    if isinstance(n0, bool) or not isinstance(n0, (int, np.integer)) or n0 < 2:
        raise ParameterError(f"pilot size must be an integer >= 2, got {n0!r}", parameter="n0")
    t = np.atleast_1d(np.asarray(topics))
    if t.ndim != 1 or t.size == 0 or not np.issubdtype(t.dtype, np.integer) or np.any(t < 1):
        raise ParameterError(f"topics must be positive integers, got {topics!r}", parameter="topics")
    return dbar, s2_d, int(n0), t.astype(np.int64)



@dataclass(frozen=True)
class Prior:
    """Empirical-Bayes prior on pair differences ``delta``.

    Attributes:
        kind: ``"normal"``, ``"mixture"``, ``"npmle"`` or ``"scale"``.
        grid: support points (npmle), component sds (mixture), component sds in pair standard
            deviations (scale), or empty (normal).
        weights: probabilities of the grid points / components, or empty (normal).
        tau2: variance of the prior (scale: of the standardized differences).
        n0: pilot size the prior was fitted for.
        n_pairs: number of pairs used in the fit.
        iterations: EM iterations used (npmle, mixture), 0 for normal.
        close: scale prior fitted apart on the close pairs (:func:`split_close`): which of the pairs
            it was fitted on are close, else ``None``. ``weights`` are then the other pairs'.
        close_weights: the close pairs' weights on ``grid``, or ``None``.
    """

    kind: str
    grid: np.ndarray
    weights: np.ndarray
    tau2: float
    n0: int
    n_pairs: int
    iterations: int = 0
    close: np.ndarray | None = None
    close_weights: np.ndarray | None = None

    def to_dict(self) -> dict:
        return {"kind": self.kind, "grid": [float(x) for x in self.grid],
                "weights": [float(x) for x in self.weights], "tau2": float(self.tau2),
                "n0": int(self.n0), "n_pairs": int(self.n_pairs), "iterations": int(self.iterations),
                "close_pairs": None if self.close is None else int(self.close.sum()),
                "close_weights": None if self.close_weights is None else [float(x) for x in self.close_weights]}

    def pair_log_weights(self, close: np.ndarray | None) -> np.ndarray:
        """``log`` of the weights on ``grid``: ``(J,)``, or ``(pairs, J)`` for a prior fitted apart on
        the close pairs, whose ``close`` (one flag per pair) picks each pair's."""
        with np.errstate(divide="ignore"):
            logw = np.log(self.weights)
            if self.close_weights is None:
                return logw
            assert close is not None, "a prior fitted apart on the close pairs needs each pair's flag"
            return np.where(close[:, None], np.log(self.close_weights)[None, :], logw[None, :])


def fit_prior(dbar, s2_d, n0, *, prior: str = "normal", grid: int = 121, max_fit_pairs: int = 20_000,
              max_iter: int = 500, tol: float = 1e-7, system_var=None, close=None) -> Prior:
    """Fit the symmetric empirical-Bayes prior on ``delta`` (module docstring).

    ``system_var``: each system's variance over the topics (``dbar`` then holds every pair of them, in
    :func:`planner.variance.pair_index` order); the ``"scale"`` prior is then fitted apart on the close
    pairs where :func:`split_close` says so. ``close``: the close pairs to fit it apart on, decided
    elsewhere (a topic resample of a collection whose prior is fitted apart: the resample's own
    :func:`close_pairs`), in place of ``system_var``'s. Other priors ignore both.

    Memory: ``min(pairs, max_fit_pairs) * 2 * grid`` float64 values for npmle (the
    likelihoods and their rescaling),
    ``min(pairs, max_fit_pairs) * components`` for mixture.
    """
    dbar, s2_d, n0, _ = check_pair_inputs(dbar, s2_d, n0, [1])
    if prior not in PRIORS:
        raise ParameterError(f"unknown prior {prior!r}; expected one of {', '.join(PRIORS)}", parameter="prior")
    ok = s2_d > 0
    d = dbar[ok]
    se2 = s2_d[ok] / n0
    if d.size == 0:
        return Prior(prior, np.zeros(1), np.ones(1), 0.0, n0, 0)
    if prior == "normal":
        tau2 = max(0.0, float(np.mean(d * d) - np.mean(se2)))
        return Prior("normal", np.empty(0), np.empty(0), tau2, n0, int(d.size))
    if prior == "scale":
        close = split_close(dbar, s2_d, n0, system_var) if close is None else np.asarray(close, dtype=bool)
        return _scale_prior(dbar, s2_d, n0, close, None)
    if d.size > max_fit_pairs:
        idx = np.linspace(0, d.size - 1, max_fit_pairs).round().astype(np.int64)
        d, se2 = d[idx], se2[idx]
    if prior == "mixture":
        return _fit_mixture(d, se2, n0, max_iter=max_iter, tol=tol)
    if isinstance(grid, bool) or not isinstance(grid, (int, np.integer)) or grid < 3:
        raise ParameterError(f"grid must be an integer >= 3, got {grid!r}", parameter="grid")
    return _fit_npmle(d, se2, n0, int(grid), max_iter=max_iter, tol=tol)


def _fit_npmle(d: np.ndarray, se2: np.ndarray, n0: int, grid: int, *, max_iter: int, tol: float) -> Prior:
    """The NPMLE prior on a symmetric grid of ``grid`` points (odd), by EM on ``d`` and ``-d``."""
    se = np.sqrt(se2)
    top = float(np.max(np.abs(d)))
    if top == 0.0:
        return Prior("npmle", np.zeros(1), np.ones(1), 0.0, n0, int(d.size))
    g = np.linspace(-top, top, grid | 1)  # odd count: 0 is a grid point
    # log-likelihood of each observation at each grid point, rescaled per row
    ll = -0.5 * ((d[:, None] - g[None, :]) / se[:, None]) ** 2
    ll -= ll.max(axis=1, keepdims=True)
    L = np.exp(ll)
    # The fit is on dbar and -dbar. The grid is symmetric, so the likelihood of -dbar at g
    # is that of dbar at -g (L reversed), and with symmetric weights f(-dbar) = f(dbar):
    # the EM step over both halves is w * (v + v reversed) / (2 pairs), v = L.T @ (1 / f),
    # computed from dbar alone, and the objective is twice the sum over dbar.
    w = np.full(g.size, 1.0 / g.size)
    it = 0
    prev = -np.inf
    for it in range(1, max_iter + 1):
        f = L @ w
        obj = 2.0 * float(np.sum(np.log(f)))
        v = L.T @ (1.0 / f)
        w = w * (v + v[::-1]) / (2 * d.size)
        w = 0.5 * (w + w[::-1])  # keep exact symmetry
        w /= w.sum()
        if obj - prev < tol * abs(obj) and it > 10:
            break
        prev = obj
    tau2 = float(np.sum(w * g * g))
    return Prior("npmle", g, w, tau2, n0, int(d.size), it)



def mixture_sds(d: np.ndarray, se2: np.ndarray) -> np.ndarray:
    """Component sds of the scale-mixture prior: 0, then a geometric grid (ratio sqrt 2)
    from ``min(se)/10`` to ``2 max|dbar|``."""
    lo = max(float(np.sqrt(np.min(se2))) / 10.0, 1e-12)
    hi = max(2.0 * float(np.max(np.abs(d))), 2.0 * lo)
    k = int(np.ceil(np.log(hi / lo) / np.log(math.sqrt(2.0)))) + 1
    return np.concatenate([[0.0], lo * math.sqrt(2.0) ** np.arange(k)])


def mixture_loglik(d, se2, sds):
    tot = sds[None, :] ** 2 + se2[:, None]
    return -0.5 * d[:, None] ** 2 / tot - 0.5 * np.log(tot), tot


def _fit_mixture(d, se2, n0, *, max_iter, tol) -> Prior:
    sds = mixture_sds(d, se2)
    ll, _ = mixture_loglik(d, se2, sds)
    ll -= ll.max(axis=1, keepdims=True)
    L = np.exp(ll)
    w = np.full(sds.size, 1.0 / sds.size)
    prev = -np.inf
    it = 0
    for it in range(1, max_iter + 1):
        f = L @ w
        obj = float(np.sum(np.log(f)))
        w = w * (L.T @ (1.0 / f)) / d.size
        w /= w.sum()
        if obj - prev < tol * abs(obj) and it > 10:
            break
        prev = obj
    return Prior("mixture", sds, w, float(np.sum(w * sds ** 2)), n0, int(d.size), it)


def standardized(dbar: np.ndarray, var: np.ndarray, n0: int) -> tuple[np.ndarray, np.ndarray]:
    """``z = |dbar| sqrt(n0) / s_d`` of pair means and variances (any shape), and the ties.

    A pair with ``var = 0`` and ``dbar != 0`` is infinitely far apart (``z = inf``); with
    ``dbar = 0`` too it is a tie (``True`` in the second array).
    """
    tie = (var <= 0) & (dbar == 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(var > 0, np.abs(dbar) * math.sqrt(n0) / np.sqrt(np.where(var > 0, var, 1.0)), np.inf)
    return z, tie


def scale_bin_probs(n0: int, scales: np.ndarray) -> np.ndarray:
    """``(M, J)``: chance of each |z| bin (:data:`SCALE_EDGES`) under ``N(0, 1 + n0 tau_j^2)`` (folded),
    for each scale ``tau_j`` of ``scales``: the likelihood :func:`fit_scale_weights` fits on."""
    s = np.sqrt(1.0 + n0 * scales ** 2)
    cdf = special.ndtr(SCALE_EDGES[:, None] / s)
    return np.maximum(2.0 * np.diff(cdf, axis=0), 1e-300)


def scale_histogram(z: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """``(B, M)`` counts of ``|z|`` (rows of :func:`standardized`) in the bins the ``"scale"`` prior is
    fitted on (:data:`SCALE_EDGES`); pairs marked in ``tie`` (identical on every topic) are left out."""
    z, tie = np.atleast_2d(z), np.atleast_2d(tie)
    idx = np.minimum(np.searchsorted(SCALE_EDGES, np.abs(z), side="right") - 1, SCALE_EDGES.size - 2)
    counts = np.zeros((z.shape[0], SCALE_EDGES.size - 1))
    rows = np.broadcast_to(np.arange(z.shape[0])[:, None], z.shape)
    np.add.at(counts, (rows[~tie], idx[~tie]), 1.0)
    return counts


def fit_scale_weights(counts: np.ndarray, n0: int) -> np.ndarray:
    """``(B, J)`` maximum-likelihood weights of the ``"scale"`` prior on :data:`SCALE_GRID`, one row per
    row of ``counts`` (:func:`scale_histogram`), by EM.

    ``z = dbar sqrt(n0) / s_d`` (:func:`standardized`) is modelled as ``theta sqrt(n0)`` plus standard
    normal noise, ``theta ~ sum_j w_j N(0, tau_j^2)``: the noise of ``n0`` topics is part of the
    model, so the fitted prior (and the rates it predicts far beyond ``n0``) does not drift with
    ``n0``.
    """
    counts = np.atleast_2d(counts)
    like = scale_bin_probs(n0, SCALE_GRID)                              # (M, J)
    w = np.full((counts.shape[0], SCALE_GRID.size), 1.0 / SCALE_GRID.size)
    share = counts / np.maximum(counts.sum(1, keepdims=True), 1.0)
    # hundreds of small products: BLAS's idle threads would cost 10 times the work (docs/research/speed.md)
    with one_blas_thread():
        for _ in range(_EM_STEPS):
            # w_j <- w_j sum_m share_m L_mj / f_m, f_m = sum_j L_mj w_j: two products per step
            w = w * ((share / (w @ like.T)) @ like)
    return w


def unseen_mass_weights(counts: np.ndarray, n0: int, systems: float | np.ndarray, level: float) -> np.ndarray:
    """``(B, J)``: the ``"scale"`` prior with the most mass at the smallest scale (``TAU_MIN``) that the
    pilot's ``|z|`` histogram ``counts`` (one row per collection) does not reject at ``level``.

    From ``n0`` topics the share of pairs at the smallest scales (pairs that need hundreds of topics)
    cannot be told from zero, and the maximum-likelihood fit (:func:`fit_scale_weights`) puts it at
    zero in most pilots, in every topic resample of one as well (docs/research/calibration.md,
    sixth and seventh sessions). This prior moves a share ``e`` of the fitted weights to ``TAU_MIN``,
    ``e`` as large as the likelihood allows at ``level``, the interval's: a drop of at most
    :func:`raise_drop`. The pairs of ``systems`` systems are not
    independent (their differences span ``systems - 1`` dimensions): the log-likelihood counts them
    as ``systems`` observations (one value, or one per row), the histogram's shares times ``systems``.
    """
    counts = np.atleast_2d(counts)
    w = fit_scale_weights(counts, n0)
    like = scale_bin_probs(n0, SCALE_GRID)
    share = counts / np.maximum(counts.sum(1, keepdims=True), 1.0)
    floor = np.zeros(SCALE_GRID.size)
    floor[0] = 1.0
    drop = raise_drop(level)

    def loglik(e: np.ndarray) -> np.ndarray:
        mixed = (1.0 - e[:, None]) * w + e[:, None] * floor
        return systems * np.einsum("bm,bm->b", share, np.log(mixed @ like.T))

    top = loglik(np.zeros(w.shape[0]))
    lo, hi = np.zeros(w.shape[0]), np.ones(w.shape[0])
    for _ in range(40):         # bisection on e (the likelihood falls as e grows past the fit)
        mid = 0.5 * (lo + hi)
        ok = top - loglik(mid) <= drop
        lo, hi = np.where(ok, mid, lo), np.where(ok, hi, mid)
    return (1.0 - lo[:, None]) * w + lo[:, None] * floor


def raise_drop(level: float) -> float:
    """The log-likelihood drop that bounds the near-zero raise of an interval at ``level``
    (:func:`unseen_mass_weights`): the one-sided bound of a share on the boundary at confidence
    ``c = 1 - RAISE_TAIL * (1 - level)``, ``chi2_1(2 c - 1) / 2``; none when ``c <= 1/2``.

    Examples
    --------
    >>> round(raise_drop(0.95), 4), round(raise_drop(0.99), 4), raise_drop(0.75)
    (0.8212, 2.1089, 0.0)
    """
    c = 1.0 - RAISE_TAIL * (1.0 - level)
    return float(stats.chi2.ppf(2.0 * c - 1.0, 1)) / 2.0 if c > 0.5 else 0.0


def unseen_mass_prior(dbar, s2_d, n0: int, systems: int, level: float, close=None) -> Prior:
    """The ``"scale"`` prior of :func:`fit_prior` with :func:`unseen_mass_weights` in place of the
    maximum-likelihood ones, for the pairs ``dbar``, ``s2_d`` of ``systems`` systems and ``n0`` topics;
    fitted apart on the ``close`` pairs (the maximum-likelihood prior's :attr:`Prior.close`), it raises
    the close pairs' weights alone: the mass no pilot sees belongs to near-identical systems."""
    dbar, s2_d, n0, _ = check_pair_inputs(dbar, s2_d, n0, [1])
    return _scale_prior(dbar, s2_d, n0, None if close is None else np.asarray(close, dtype=bool), (systems, level))


def close_pairs(pair_var, system_var) -> np.ndarray:
    """``(..., P)`` flags: the close pairs, the half with the smallest ``r = s_d / sqrt(s_a^2 + s_b^2)``.

    ``pair_var``: ``(..., P)`` variances of the per-topic differences of every pair (in
    :func:`planner.variance.pair_index` order) of the ``S`` systems whose variances over the same
    topics are ``system_var`` ``(..., S)``. ``r^2`` is about ``1 - rho``: close pairs are systems
    that rise and fall together on the topics, whose true differences are the ones near zero (the
    pairs a small pilot cannot tell from tied: docs/research/calibration.md, tenth session). The
    first ``ceil(P / 2)`` by rank are close, ties broken by pair order.
    """
    V = np.asarray(pair_var, dtype=np.float64)
    sv = np.asarray(system_var, dtype=np.float64)
    a, b = pair_index(sv.shape[-1])
    if V.shape[-1] != a.size:
        raise ParameterError(f"system_var has {sv.shape[-1]} systems, whose {a.size} pairs are not the "
                             f"{V.shape[-1]} pair variances given", parameter="system_var")
    r = np.sqrt(np.maximum(V, 0.0)) / np.sqrt(sv[..., a] + sv[..., b] + 1e-300)
    ranks = np.argsort(np.argsort(r, axis=-1, kind="stable"), axis=-1)
    return 2 * ranks < r.shape[-1]


def split_close(dbar, s2_d, n0: int, system_var) -> np.ndarray | None:
    """The close pairs (:func:`close_pairs`) when the ``"scale"`` prior is to be fitted apart on them and
    on the others, else ``None``: apart when twice the log-likelihood gain of the two fits over one,
    the pairs counted as ``systems`` observations (as in :func:`unseen_mass_weights`), is at least
    :data:`SPLIT_GAIN`. ``None`` without ``system_var``.

    One prior on all pairs mixes the near-identical pairs, whose true differences sit near zero, with
    the others: fitted on both, it underweights that mass in small pilots and the count runs low
    (0.70 of the whole collection's on 20-topic draws of TREC-6 P@10; 0.88 with the split over 200
    draws: docs/research/calibration.md, tenth session). Where the two halves do not differ the split
    would only add noise, and the rule keeps one prior.
    """
    if system_var is None:
        return None
    close = close_pairs(s2_d, system_var)
    gain = split_gain(dbar, s2_d, n0, close.astype(np.int64), np.asarray(system_var).shape[-1])
    return close if gain >= SPLIT_GAIN else None


def split_gain(dbar, s2_d, n0: int, groups: np.ndarray, systems: int) -> float:
    """Twice the log-likelihood gain of the ``"scale"`` prior fitted apart in each group of pairs
    (``groups``: one integer label per pair) over one prior on all pairs, the pairs counted as
    ``systems`` observations: the statistic :func:`split_close` compares with :data:`SPLIT_GAIN`."""
    z, tie = standardized(np.asarray(dbar, dtype=np.float64), np.asarray(s2_d, dtype=np.float64), n0)
    like = scale_bin_probs(n0, SCALE_GRID)

    def loglik(on: np.ndarray) -> float:
        h = scale_histogram(z[on], tie[on])
        return float(np.sum(h * np.log(fit_scale_weights(h, n0) @ like.T)))
    gain = sum(loglik(groups == g) for g in np.unique(groups)) - loglik(np.ones(z.size, dtype=bool))
    return 2.0 * gain * systems / max(z.size, 1)


def group_weights(counts: list[np.ndarray], n0: int, shares: list, unseen: tuple[float, float] | None = None
                  ) -> list[np.ndarray]:
    """``(B, J)`` weights of the ``"scale"`` prior of each group of pairs from its ``|z|`` histogram
    (``counts``, :func:`scale_histogram`; the groups: all pairs, or the close pairs then the others):
    maximum likelihood, or with ``unseen = (systems, level)`` the first group's raised near zero
    (:func:`unseen_mass_weights`, its pairs counted as ``systems`` times its share of the pairs,
    ``shares``): the mass no pilot sees belongs to near-identical systems, so a split prior raises the
    close pairs' weights alone."""
    return [fit_scale_weights(c, n0) if unseen is None or k > 0 else
            unseen_mass_weights(c, n0, unseen[0] * share, unseen[1])
            for k, (c, share) in enumerate(zip(counts, shares))]


def _scale_prior(dbar: np.ndarray, s2_d: np.ndarray, n0: int, close: np.ndarray | None,
                 unseen: tuple[int, float] | None) -> Prior:
    """The ``"scale"`` prior of the pairs, fitted apart on the ``close`` ones (``None``: one prior), its
    weights maximum-likelihood or (``unseen``: ``(systems, level)``) raised near zero, in the close
    pairs alone when apart."""
    z, tie = standardized(dbar, s2_d, n0)
    n_pairs = int(np.sum(s2_d > 0))
    groups = [np.ones(z.size, dtype=bool)] if close is None else [close, ~close]
    ws = [w[0] for w in group_weights([scale_histogram(z[g], tie[g]) for g in groups], n0,
                                      [float(g.mean()) for g in groups], unseen)]
    tau2 = sum(float(g.mean()) * float(np.sum(w * SCALE_GRID ** 2)) for g, w in zip(groups, ws))
    if close is None:
        return Prior("scale", SCALE_GRID, ws[0], tau2, n0, n_pairs, _EM_STEPS)
    return Prior("scale", SCALE_GRID, ws[1], tau2, n0, n_pairs, _EM_STEPS, close=close, close_weights=ws[0])

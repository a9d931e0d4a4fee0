"""Pairs of systems: per-pair mean and variance of per-topic differences, and the variance
selectors (``pair``, ``pooled``, ``within-system``, ``percentile:q``) of :func:`pair_variance`."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .._checks import check_choice
from ..collection import as_matrix
from ..errors import DegenerateDataWarning, IdenticalPairsWarning, InputError, ParameterError, PlannerWarning
from ..methods import suggest
from ..parallel import over_share
from ..results import ResultMixin
from ..scores import ScoreMatrix
from .common import check_size, label
from .fit import fit

#: floats of differences per chunk in pair_moments (16 MB), and of the Gram matrix per block of
#: systems in pair_stats
PAIR_BLOCK = 2_000_000
#: bytes :func:`pair_stats` keeps and works with per pair of systems (a, b, dbar, s2_d and
#: two temporaries of 8 bytes)
PAIR_BYTES = 48
#: most memory the per-pair arrays of any pair computation may need (``PAIR_BYTES * S (S - 1) / 2``
#: plus a block of ``8 * PAIR_BLOCK``): 128 MB, 2,219 systems; :func:`pair_index`, which every
#: pair computation (fit's pair summary, predict, size, validate, a study's scenarios) starts from,
#: refuses more before anything is allocated. A whole command peaks at up to 5 times that plus
#: 150 MB: a two-scenario study on 2,219 systems, 0.74 GB; at the former 256 MB (3,243 systems)
#: it would be about 1.4 GB, over the 1 GB every command must stay under (docs/robustness.md,
#: docs/research/known-limits.md). Local ``--jobs`` workers share it (:func:`pair_jobs`): two
#: ``validate`` workers on 3,200 systems took 1.4 GB before
MAX_PAIR_MEMORY = 128 << 20


@dataclass(frozen=True, repr=False)
class PairStats(ResultMixin):
    """Per-pair mean and variance of per-topic differences, all ``S (S - 1) / 2`` pairs.

    Attributes
    ----------
    a, b : numpy.ndarray
        System indices of each pair (``a < b``, row-major order of ``np.triu_indices``).
    dbar : numpy.ndarray
        Mean over topics of ``x[a, t] - x[b, t]``.
    s2_d : numpy.ndarray
        Variance (``ddof=1``) of those differences.
    n_topics : int
        Number of topics ``T``.
    systems : tuple of str
        The system names.
    var_system : numpy.ndarray
        Per-system variance over topics (``ddof=1``), shape ``(S,)``.
    n_common : numpy.ndarray or None
        Topics observed for both systems of each pair (only with missing cells, else ``None``).
    """

    _repr_fields = ('n_topics', 'systems', 'var_system')

    a: np.ndarray
    b: np.ndarray
    dbar: np.ndarray
    s2_d: np.ndarray
    n_topics: int
    systems: tuple[str, ...]
    var_system: np.ndarray
    n_common: np.ndarray | None = None

    @property
    def n_pairs(self) -> int:
        return int(self.a.size)

    def to_frame(self) -> pd.DataFrame:
        names = np.array(self.systems, dtype=object)
        d = {"system_a": names[self.a], "system_b": names[self.b], "dbar": self.dbar, "s2_d": self.s2_d}
        if self.n_common is not None:
            d["n_common"] = self.n_common
        return pd.DataFrame(d)

    def to_dict(self) -> dict:
        return {"n_topics": int(self.n_topics), "systems": list(self.systems), "a": self.a.tolist(),
                "b": self.b.tolist(), "dbar": self.dbar.tolist(), "s2_d": self.s2_d.tolist()}


def pair_index(n_systems: int) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``a < b`` in row-major order (``numpy.triu_indices(S, 1)``), as ``intp``.

    The one pair order every module uses (pair_stats, planner.simulate, planner.validation);
    more pairs than :data:`MAX_PAIR_MEMORY` allows are refused here, before any is made.
    """
    check_pair_memory(n_systems)
    a, b = np.triu_indices(n_systems, 1)
    return a.astype(np.intp), b.astype(np.intp)


def pair_moments(x: np.ndarray, a: np.ndarray, b: np.ndarray, *, kurtosis: bool = False,
                 block: int = PAIR_BLOCK):
    """``dbar`` and ``s2_d`` (ddof=1) of ``d[t] = x[a,t] - x[b,t]`` for every pair.

    Computed from the differences themselves (so identical systems give exactly
    0), in chunks of ``block // T`` pairs (at least one): memory about ``3 * max(block, T)``
    float64 values (the differences and two temporaries, with or without ``kurtosis``;
    ``block`` defaults to ``2e6``). Per pair the same numbers as one unchunked
    ``d.mean(axis=1)``, ``d.var(axis=1, ddof=1)``; used by planner.validation,
    planner.plan and the direct path of ``planner.simulate.pair_moments``.

    With ``kurtosis=True`` a third array is returned: each pair's sample excess
    kurtosis ``m4 / m2^2 - 3`` of the differences (``m2``, ``m4`` central moments
    with divisor ``T``, as ``scipy.stats.kurtosis(d, axis=1, bias=True)``), 0 for
    pairs whose differences are constant.
    """
    T = x.shape[1]
    dbar = np.empty(a.size)
    s2 = np.empty(a.size)
    kurt = np.empty(a.size) if kurtosis else None
    chunk = max(1, int(block) // max(1, T))
    for lo in range(0, a.size, chunk):
        d = x[a[lo:lo + chunk]] - x[b[lo:lo + chunk]]
        dbar[lo:lo + chunk] = d.mean(axis=1)
        s2[lo:lo + chunk] = d.var(axis=1, ddof=1)
        if kurt is not None:
            kurt[lo:lo + chunk] = _excess_kurtosis(d, dbar[lo:lo + chunk])
    return (dbar, s2, kurt) if kurt is not None else (dbar, s2)


def _excess_kurtosis(d: np.ndarray, dbar: np.ndarray) -> np.ndarray:
    """Each row's ``m4 / m2^2 - 3`` (central moments with divisor ``T``); 0 for a constant row."""
    c = d - dbar[:, None]
    c *= c
    m2 = c.mean(axis=1)
    m4 = (c * c).mean(axis=1)
    ok = m2 > 0
    return np.where(ok, m4 / np.where(ok, m2 * m2, 1.0) - 3.0, 0.0)


def score_grid(xg: np.ndarray, n_max: int) -> tuple[np.ndarray, float]:
    """Scores as integers on a grid, ``(q, unit)`` with ``x ~= q * unit``, for exact sums.

    Decimal scores (e.g. trec_eval's 4 decimals) use ``unit = 10^-k``, the
    fewest decimals that represent every score within ``1e-6 unit``: then
    sums of decimals that are equal, e.g. 0.3 + 0.5 and 0.4 + 0.4, are equal.
    Other scores use ``unit = 2^-k``, ``k`` the largest such that
    ``n_max max|x| / unit < 2^50`` (each score moves by at most
    ``2^-50 n_max max|x|``, ~4e-14 for n = 50 and scores in [0, 1]). Either way
    any sum of at most ``n_max`` scores with integer weights is an integer
    below ``2^50``, exact in float64 whatever order a matrix product adds it in.
    """
    amax = float(np.max(np.abs(xg))) if xg.size else 0.0
    found = _decimals(xg, amax, n_max)
    if found is not None:
        return found
    k = 50 - math.frexp(amax * n_max)[1]
    return np.rint(np.ldexp(xg, k)), math.ldexp(1.0, -k)


def decimal_grid(xg: np.ndarray, n_max: int) -> tuple[np.ndarray, float] | None:
    """:func:`score_grid` ``(xg, n_max)`` when it is a decimal grid (or all scores are 0), else
    None: then it is also :func:`score_grid` ``(xg, n)`` for every ``n <= n_max`` (a smaller
    ``n_max`` only allows more decimals, and the fewest that fit are taken), so one grid serves
    every topic count up to ``n_max``."""
    return _decimals(xg, float(np.max(np.abs(xg))) if xg.size else 0.0, n_max)


def _decimals(xg: np.ndarray, amax: float, n_max: int) -> tuple[np.ndarray, float] | None:
    """The decimal grid of :func:`score_grid` (``amax`` the largest ``|score|``), or None."""
    if amax == 0.0:
        return np.zeros_like(xg), 1.0
    flat = xg.ravel()
    sample = flat[::max(1, flat.size // _GRID_SAMPLE)]  # a count of decimals it fails fails on all
    for k in range(10):
        if amax * 10.0 ** k * n_max >= 2.0 ** 50:
            break
        if _on_decimals(sample, k) is None:
            continue
        q = _on_decimals(xg, k)
        if q is not None:
            return q, 10.0 ** -k
    return None


#: scores a decimal count is tried on before all of them (:func:`score_grid`)
_GRID_SAMPLE = 4096


def _on_decimals(v: np.ndarray, k: int) -> np.ndarray | None:
    """``v`` in units of ``10^-k``, rounded, when every value is within ``1e-6 10^-k`` of a
    multiple of ``10^-k``; else None."""
    y = v * 10.0 ** k
    q = np.rint(y)
    y -= q
    np.abs(y, out=y)
    return q if np.max(y) <= 1e-6 else None


def exact_dbar(x: np.ndarray, a: np.ndarray, b: np.ndarray, *,
               grid: tuple[np.ndarray, float] | None = None) -> np.ndarray:
    """Each pair's observed mean difference, from the scores' integer grid (:func:`score_grid`).

    Every system's total is an exact integer there, so pairs with equal totals get exactly 0
    (a tie: reversal 0.5) and, on a decimal grid, a difference is the double nearest its
    decimal value (one rounding), so that e.g. 0.02 falls in the bin ``[0.02, 0.03)``. The
    float mean of the differences can instead be 1e-18 for a tie, or 0.019999999999999987
    (TREC-6 P@10). On a binary grid the value moves by at most ``2^-50 max|x|``. ``grid``:
    :func:`score_grid` ``(x, T)`` when already made (:func:`decimal_grid`).
    """
    T = x.shape[1]
    q, unit = score_grid(x, T) if grid is None else grid
    tot = q.sum(axis=1)                      # exact integers below 2^50
    diff = tot[a] - tot[b]
    if unit <= 1.0:
        return diff / (T * float(round(1.0 / unit)))
    return diff * unit / T


def pair_stats(scores) -> PairStats:
    """Mean and variance of per-topic differences for every pair of systems.

    Complete matrices use the Gram matrix of topic-centred scores (memory in
    :mod:`planner.variance`) and the exact mean differences of :func:`exact_dbar` (equal
    totals give 0, as in :func:`planner.simulate.predict`); with missing cells each pair
    uses the topics both systems have (needs >= 2 such topics, else ``NaN`` with a warning).

    Parameters
    ----------
    scores : ScoreMatrix or path or DataFrame or array_like
        The scores (:func:`planner.collection.as_matrix`); variants are averaged.

    Returns
    -------
    PairStats

    Examples
    --------
    >>> ps = pair_stats([[0.2, 0.4, 0.6], [0.3, 0.6, 0.6], [0.1, 0.1, 0.4]])
    >>> ps.n_pairs, ps.dbar.round(3).tolist()
    (3, [-0.1, 0.2, 0.3])
    >>> ps.s2_d.round(3).tolist()
    [0.01, 0.01, 0.03]
    """
    m = as_matrix(scores)
    x = m.topic_scores()
    check_size(x, m)
    check_pair_memory(x.shape[0], m)
    a, b = pair_index(x.shape[0])
    if not np.isnan(x).any():
        dbar, s2, v = _complete_pairs(x, a, b)
        n_common = None
    else:
        dbar, s2, v, n_common = _pairs_with_missing(x, a, b, m)
    zero = np.flatnonzero(s2 == 0)
    if zero.size:
        _warn_zero_variance(m, zero.size, (int(a[zero[0]]), int(b[zero[0]])), stacklevel=3)
    return PairStats(a=a, b=b, dbar=dbar, s2_d=s2, n_topics=x.shape[1], systems=m.systems,
                     var_system=v, n_common=n_common)


def _zero_variance_kind(m: ScoreMatrix, n_zero: int) -> type[DegenerateDataWarning]:
    """The class of a warning about ``n_zero`` pairs of ``m`` with zero variance of per-topic
    differences: :class:`~planner.errors.IdenticalPairsWarning` when they are exactly the pairs of
    the matrix's identical systems (:meth:`ScoreMatrix.identical_systems`, which the matrix has
    warned about: a command says it once), else :class:`~planner.errors.DegenerateDataWarning`
    (systems a constant apart, or identical on the topic means only)."""
    identical = sum(len(g) * (len(g) - 1) // 2 for g in m.identical_systems())
    return IdenticalPairsWarning if n_zero == identical else DegenerateDataWarning


def _warn_zero_variance(m: ScoreMatrix, n_zero: int, first: tuple[int, int], stacklevel: int) -> None:
    a, b = first
    warnings.warn(f"{label(m)}: {n_zero} pair(s) with zero variance of per-topic differences "
                  f"(first: {m.systems[a]!r} vs {m.systems[b]!r}); tests and intervals for them are degenerate",
                  _zero_variance_kind(m, n_zero), stacklevel=stacklevel)


def pair_memory(n_systems: int) -> int:
    """Bytes the per-pair arrays of one pair computation on ``n_systems`` systems need
    (``PAIR_BYTES`` a pair and a block of ``8 * PAIR_BLOCK``)."""
    return PAIR_BYTES * (n_systems * (n_systems - 1) // 2) + 8 * PAIR_BLOCK


def pair_jobs(n_systems: int, jobs: int) -> int:
    """The most of ``jobs`` local processes whose pair computations on ``n_systems`` systems fit
    in :data:`MAX_PAIR_MEMORY` together (at least 1), with a warning when that is fewer.

    Each worker of a parallel command (``validate --jobs``) holds its own pair statistics;
    :func:`check_pair_memory` gives each the share ``MAX_PAIR_MEMORY / jobs``. The results do
    not depend on ``jobs``, so running fewer keeps the command within its memory.

    Examples
    --------
    >>> pair_jobs(500, 2)
    2
    """
    fit_in = max(1, MAX_PAIR_MEMORY // pair_memory(n_systems))
    if jobs <= fit_in:
        return jobs
    warnings.warn(f"{n_systems:,} systems: their pair statistics need {pair_memory(n_systems) / 2**20:,.0f} MB "
                  f"a process, and MAX_PAIR_MEMORY ({MAX_PAIR_MEMORY / 2**20:,.0f} MB) holds {fit_in} of them: "
                  f"running {fit_in} of --jobs {jobs} processes (the same results)", PlannerWarning, stacklevel=2)
    return fit_in


def check_pair_memory(n_systems: int, m: ScoreMatrix | None = None) -> None:
    """Refuse, before allocating, per-pair statistics over :data:`MAX_PAIR_MEMORY` (an
    InputError naming the score file when ``m`` has one); inside one of ``N`` local worker
    processes (:func:`planner.parallel.local_workers`), over its share ``MAX_PAIR_MEMORY / N``
    (:func:`planner.parallel.over_share`)."""
    n_pairs = n_systems * (n_systems - 1) // 2
    need = pair_memory(n_systems)
    over = over_share(need, MAX_PAIR_MEMORY, "MAX_PAIR_MEMORY")
    if over is None:
        return
    jobs = f"--jobs {over.jobs} or " if over.jobs else ""
    raise InputError(f"{n_systems:,} systems make {n_pairs:,} pairs, whose statistics need {need / 2**20:,.2f} MB"
                     f"{over.clause}: use {jobs}fewer systems", file=None if m is None else m.source)


def _pair_cov(xc: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(cov of each pair, per-system variance) from the Gram matrix of the centred scores,
    ``PAIR_BLOCK // S`` systems' rows at a time (one block, the whole matrix, up to ~1,400
    systems): memory ``8 * PAIR_BLOCK`` bytes beside the per-pair arrays."""
    S, T = xc.shape
    rows = max(1, PAIR_BLOCK // S)
    cov = np.empty(a.size)
    v = np.empty(S)
    start = np.concatenate(([0], np.cumsum(np.arange(S - 1, 0, -1)))) if S > 1 else np.zeros(1, int)
    for lo in range(0, S, rows):
        hi = min(S, lo + rows)
        gram = xc[lo:hi] @ xc.T
        gram /= (T - 1)
        v[lo:hi] = gram[np.arange(hi - lo), np.arange(lo, hi)]
        p0, p1 = int(start[min(lo, S - 1)]), int(start[hi]) if hi < S else a.size
        cov[p0:p1] = gram[a[p0:p1] - lo, b[p0:p1]]
    return cov, v


def _complete_pairs(x: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dbar, s2_d, per-system variance) of a complete matrix, from the Gram matrix."""
    mean = x.mean(axis=1)
    xc = x - mean[:, None]
    cov, v = _pair_cov(xc, a, b)
    cov *= -2.0
    s2 = v[a]
    s2 += v[b]
    # rounding noise around 0 for (nearly) identical systems
    tiny = s2 * (64 * np.finfo(float).eps)
    s2 += cov
    del cov
    s2[s2 < tiny] = 0.0
    # on the scores' integer grid, as planner.simulate.predict: equal totals are an exact
    # tie (0), not the 1e-18 that the float means can leave
    return exact_dbar(x, a, b), s2, v


def _pairs_with_missing(x: np.ndarray, a: np.ndarray, b: np.ndarray, m: ScoreMatrix
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(dbar, s2_d, per-system variance, common topics) over each pair's common topics."""
    mask = (~np.isnan(x)).astype(float)
    x0 = np.where(np.isnan(x), 0.0, x)
    n = mask @ mask.T
    sx = x0 @ mask.T            # sum over common topics of x_a
    sxx = (x0 * x0) @ mask.T
    cross = x0 @ x0.T
    nab = n[a, b]
    sum_d = sx[a, b] - sx[b, a]
    sum_d2 = sxx[a, b] + sxx[b, a] - 2 * cross[a, b]
    with np.errstate(divide="ignore", invalid="ignore"):
        dbar = sum_d / nab
        s2 = (sum_d2 - sum_d * dbar) / (nab - 1)
    s2[nab < 2] = np.nan
    s2 = np.where(s2 < 0, 0.0, s2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        v = np.nanvar(x, axis=1, ddof=1)
    few = int((nab < 2).sum())
    if few:
        warnings.warn(f"{label(m)}: {few} pair(s) share fewer than 2 topics; their s2_d is NaN",
                      DegenerateDataWarning, stacklevel=3)
    return dbar, s2, v, nab.astype(int)


def within_system_variance(scores) -> float:
    """``V_E1``: residual of the one-way ANOVA with systems as the factor (module docstring)."""
    m = as_matrix(scores)
    x = m.topic_scores()
    check_size(x, m)
    v = within_system(x)
    if not math.isfinite(v):
        raise InputError("no system has 2 observed topics", file=m.source)
    return v


def within_system(x: np.ndarray) -> float:
    """``V_E1`` of an (S, T) array, missing cells as NaN (nan when no system has 2
    observed topics); for complete arrays the mean of the per-system variances."""
    obs = ~np.isnan(x)
    n_s = obs.sum(axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        mean = np.nanmean(x, axis=1)
    ss = float(np.nansum((x - mean[:, None]) ** 2))
    dof = int(np.sum(np.maximum(n_s - 1, 0)))
    return ss / dof if dof > 0 else math.nan


def parse_selector(selector: str, *, parameter: str = "selector") -> tuple[str, float | None]:
    """``"pair" | "pooled" | "within-system" | "percentile:q"`` -> (kind, q), ``0 < q <= 100``
    (``percentile:100`` is the largest pair variance; 0 would be the smallest, often 0).

    The one parser of variance selectors (planner.plan and planner.simulate use it
    with ``parameter="variance"``, the name of their option)."""
    if not isinstance(selector, str):
        raise ParameterError(f"expected a variance selector string, got {selector!r}", parameter=parameter)
    s = selector.strip().lower()
    if s in ("pair", "pooled", "within-system"):
        return s, None
    if s.startswith("percentile:"):
        try:
            q = float(s.split(":", 1)[1])
        except ValueError:
            q = math.nan
        if not 0 < q <= 100:
            raise ParameterError(f"percentile must be in (0, 100], got {selector!r}", parameter=parameter)
        return "percentile", q
    near = suggest(s, ("pair", "pooled", "within-system", "percentile:95"))
    raise ParameterError(f"unknown variance selector {selector!r}{near}; expected pair, pooled, "
                         "within-system or percentile:q", parameter=parameter)


def pair_variance(scores, selector: str = "pair", *, design: str = "paired",
                  pairs: PairStats | None = None) -> np.ndarray:
    """The variance each pair's computation uses, one value per pair (the table in
    :mod:`planner.variance`).

    Parameters
    ----------
    scores : ScoreMatrix or path or DataFrame or array_like
        The scores (:func:`planner.collection.as_matrix`).
    selector : str
        ``"pair"``, ``"pooled"``, ``"within-system"`` or ``"percentile:q"`` (``0 < q <= 100``).
    design : {"paired", "independent"}
        ``"paired"``: variance of per-topic differences; ``"independent"``: the
        within-system variance.
    pairs : PairStats, optional
        A :func:`pair_stats` result to reuse.

    Returns
    -------
    numpy.ndarray
        One variance a pair, in :func:`pair_index` order; a value shared by every pair
        (``pooled``, ``within-system``, ``percentile:q``) is a read-only broadcast view of it.

    Examples
    --------
    >>> x = [[0.2, 0.4, 0.6], [0.3, 0.6, 0.6], [0.1, 0.1, 0.4]]
    >>> pair_variance(x, "pair").round(3).tolist()
    [0.01, 0.01, 0.03]
    >>> pair_variance(x, "percentile:100").round(3).tolist()
    [0.03, 0.03, 0.03]
    """
    kind, q = parse_selector(selector)
    check_choice(design, ("paired", "independent"), "design", noun="design")
    m = as_matrix(scores)
    S = m.n_systems
    n_pairs = S * (S - 1) // 2
    factor = 2.0 if design == "paired" else 1.0
    # a variance shared by every pair is one value broadcast to all (a read-only view): pooled
    # and within-system need no per-pair memory, and so no pair limit
    if kind == "pooled":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            var_e = fit(m).var_e
        return np.broadcast_to(np.float64(factor * var_e), (n_pairs,))
    if kind == "within-system":
        return np.broadcast_to(np.float64(factor * within_system_variance(m)), (n_pairs,))
    check_pair_memory(S, m)
    ps = pairs if pairs is not None else pair_stats(m)
    if design == "paired":
        per = ps.s2_d
    else:
        per = (ps.var_system[ps.a] + ps.var_system[ps.b]) / 2
    if q is None:       # "pair"
        return np.array(per, dtype=float)
    return np.broadcast_to(np.float64(np.nanpercentile(per, q)), (n_pairs,))


#: bytes a pair :func:`pair_variance_summary` needs without a :class:`PairStats` (each pair's
#: ``s2_d`` and one copy for the percentiles)
SUMMARY_PAIR_BYTES = 16
#: most memory of that summary: 768 MB, about 10,000 systems
MAX_SUMMARY_MEMORY = 768 << 20


def pair_s2(x: np.ndarray) -> np.ndarray:
    """``s2_d`` of every pair of a complete (S, T) matrix in :func:`pair_index` order, the same
    numbers as :func:`pair_stats` from the same blocks of the Gram matrix, without the pair
    index, means or covariances (8 bytes a pair)."""
    S, T = x.shape
    xc = x - x.mean(axis=1)[:, None]
    out = np.empty(S * (S - 1) // 2)
    rows = max(1, PAIR_BLOCK // S)

    def block(lo: int, hi: int) -> np.ndarray:       # as _pair_cov, so that the sums are the same
        gram = xc[lo:hi] @ xc.T
        gram /= (T - 1)
        return gram

    v = np.empty(S)
    for lo in range(0, S, rows):           # the variances first: every pair needs both ends'
        hi = min(S, lo + rows)
        v[lo:hi] = block(lo, hi)[np.arange(hi - lo), np.arange(lo, hi)]
    p = 0
    for lo in range(0, S, rows):
        hi = min(S, lo + rows)
        gram = block(lo, hi)
        for i in range(lo, min(hi, S - 1)):
            cov = gram[i - lo, i + 1:] * -2.0
            s2 = v[i] + v[i + 1:]
            tiny = s2 * (64 * np.finfo(float).eps)
            s2 += cov
            s2[s2 < tiny] = 0.0
            out[p:p + s2.size] = s2
            p += s2.size
    return out


def pair_variance_summary(scores, *, pairs: PairStats | None = None) -> dict:
    """Summary of the variance of per-topic differences and of each selector's value.

    Keys: ``pair`` (mean, median, p90, p95, max and p95/mean of ``s2_d``), ``pooled``
    (``2 var_e``), ``within-system`` (``2 V_E1``), ``percentile:95``, ``n_pairs``.
    Without ``pairs`` a complete matrix keeps only each pair's ``s2_d``
    (:data:`SUMMARY_PAIR_BYTES`, at most :data:`MAX_SUMMARY_MEMORY`).
    """
    m = as_matrix(scores)
    s2 = _summary_s2(m) if pairs is None else pairs.s2_d
    if not np.isfinite(s2).all():
        s2 = s2[np.isfinite(s2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        pooled = 2 * fit(m).var_e
    n_pairs = m.n_systems * (m.n_systems - 1) // 2
    mean = float(s2.mean())
    return {
        "design": "paired",
        "n_pairs": n_pairs,
        "pair": {"mean": mean, "median": float(np.median(s2)), "p90": float(np.percentile(s2, 90)),
                 "p95": float(np.percentile(s2, 95)), "max": float(s2.max()),
                 "p95_over_mean": float(np.percentile(s2, 95) / mean) if mean > 0 else math.nan},
        "pooled": float(pooled),
        "within-system": float(2 * within_system_variance(m)),
        "percentile:95": float(np.percentile(s2, 95)),
    }


def _summary_s2(m: ScoreMatrix) -> np.ndarray:
    """Each pair's ``s2_d`` for the summary: :func:`pair_s2` for a complete matrix (refused,
    naming the file, over :data:`MAX_SUMMARY_MEMORY`), :func:`pair_stats` otherwise."""
    x = m.topic_scores()
    if np.isnan(x).any():
        return pair_stats(m).s2_d
    check_size(x, m)
    S = x.shape[0]
    n_pairs = S * (S - 1) // 2
    need = SUMMARY_PAIR_BYTES * n_pairs + 8 * PAIR_BLOCK
    if need > MAX_SUMMARY_MEMORY:
        raise InputError(f"{S:,} systems make {n_pairs:,} pairs, whose variance summary needs "
                         f"{need / 2**30:.1f} GB, over the limit of {MAX_SUMMARY_MEMORY >> 20} MB "
                         "(MAX_SUMMARY_MEMORY): use fewer systems", file=m.source)
    s2 = pair_s2(x)
    zero = np.flatnonzero(s2 == 0)
    if zero.size:
        _warn_zero_variance(m, zero.size, _pair_at(int(zero[0]), S), stacklevel=4)
    return s2


def _pair_at(k: int, S: int) -> tuple[int, int]:
    """The systems ``(a, b)`` of the ``k``-th pair in :func:`pair_index` order."""
    a = 0
    while k >= S - 1 - a:
        k -= S - 1 - a
        a += 1
    return a, a + 1 + k

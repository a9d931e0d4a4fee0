"""Training seeds: a seed facet nested in systems, and the tests that ignore it.

Scores ``x[s, r, t]`` for system (training recipe) ``s`` trained with seed ``r`` on topic
``t``. Seeds are nested in systems (seed 1 of recipe A has nothing to do with seed 1 of
recipe B), topics are crossed with both: the design ``(r:s) x t``
(``docs/variance.md``, facet tables). The random-effects model

    x[s,r,t] = mu + a[s] + b[t] + (ab)[s,t] + c[r:s] + e[r:s,t]

has the components ``var_s``, ``var_t``, ``var_st`` (system x topic), ``var_seed``
(``var_r:s``, seed within system) and ``var_e`` (seed x topic within system, plus error).
:func:`fit_seeds` estimates them from a balanced array by ANOVA (the expected mean squares
of the nested design; negative estimates truncated to 0 and listed in ``truncated``):

    MS_res = var_e                     MS_r:s = var_e + n_t var_seed
    MS_st  = var_e + n_r var_st        MS_t   = var_e + n_r var_st + n_s n_r var_t
    MS_s   = var_e + n_t var_seed + n_r var_st + n_r n_t var_s

Comparing two recipes with ``m`` seeds each on ``n`` topics, with ``dbar`` the difference of
their means over seeds and topics,

    V = Var(dbar) = 2 (var_seed / m + var_st / n + var_e / (n m)).

Per topic, the seed-averaged difference ``d[t]`` has variance ``sigma_d2 = 2 (var_st +
var_e / m)`` around ``delta + (seed effects)``; the seed effects are common to all topics,
so the spread of ``d[t]`` over topics does not see them. Two tests (:func:`seed_power`):

- the **paired t-test over topics** (what a paper with one seed per recipe does):
  ``T = dbar / (s_d / sqrt(n))`` against ``t_{1-alpha/2}(n-1)``. Exactly,
  ``T / sqrt(1 + lam) ~`` noncentral t(``n-1``, ``delta / sqrt(V)``) with
  ``lam = 2 n var_seed / (m sigma_d2)``, so its rejection rate is
  ``P(|T'| > t_c / sqrt(1 + lam))``: under ``delta = 0`` this is its **false-positive rate**,
  ``2 * t.sf(t_c / sqrt(1 + lam), n - 1)``, above ``alpha`` whenever ``var_seed > 0``;
- the **seed-aware test**: the same statistic against ``sqrt(1 + lam) t_c`` (the seed
  variance taken as known, as planning does), of size exactly ``alpha``; its **power** is
  ``P(|T'| > t_c)`` with ``T' ~`` noncentral t(``n-1``, ``delta / sqrt(V)``).

With ``var_seed = 0`` both are the paired t design of :func:`planner.plan.topic_set_size`
with ``sigma2 = sigma_d2``. :func:`seed_topic_tradeoff` finds, for each number of seeds
``m``, the fewest topics that give the target power, and the cheapest ``(m, n)`` when a
seed costs a training run (``2 m`` runs: both recipes) and a topic its judgments.

Not covered: the seed variance is taken as known (a pilot with few seeds estimates it with
``n_s (n_r - 1)`` degrees of freedom; plan with an upper value); recipes whose seed
variances differ; seeds shared between recipes (a common initialisation), which is a
crossed, not nested, design.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._checks import check_alpha, check_int, check_open_unit
from ..errors import ParameterError
from ..results import ResultMixin, short_repr

__all__ = ["SEED_PATTERN", "SeedComponents", "SeedPower", "SeedTradeoff", "fit_seeds", "seed_frame", "seed_power",
           "seed_topic_tradeoff"]

#: how a run name says its recipe and seed when a folder holds one run per training seed:
#: ``RECIPE.seedK`` (or ``-seed``, ``_seed``, ``@seed``), e.g. ``bert-base.seed3``
SEED_PATTERN = r"(?P<system>.+?)[._@-]seed[._-]?(?P<seed>[^._@-]+)$"


@dataclasses.dataclass(frozen=True, repr=False)
class SeedComponents(ResultMixin):
    """Variance components of the ``(r:s) x t`` design (module docstring).

    Attributes
    ----------
    var_s, var_t, var_st, var_seed, var_e : float
        The components (``var_seed`` = seed within system).
    n_systems, n_seeds, n_topics : int
        The shape they were fitted on (0 when given directly).
    truncated : tuple of str
        Components estimated negative and set to 0.
    simulated : bool
        True when the scores behind them were simulated, not measured.
    """

    var_s: float = 0.0
    var_t: float = 0.0
    var_st: float = 0.0
    var_seed: float = 0.0
    var_e: float = 0.0
    n_systems: int = 0
    n_seeds: int = 0
    n_topics: int = 0
    truncated: tuple[str, ...] = ()
    simulated: bool = False

    def __post_init__(self) -> None:
        for f in ("var_s", "var_t", "var_st", "var_seed", "var_e"):
            v = getattr(self, f)
            if not (isinstance(v, (int, float, np.floating)) and math.isfinite(v) and v >= 0):
                raise ParameterError(f"expected a finite number >= 0, got {v!r}", parameter=f)

    def __repr__(self) -> str:
        label = ", simulated" if self.simulated else ""
        return short_repr(self, ("var_s", "var_t", "var_st", "var_seed", "var_e"))[:-1] + label + ")"


def fit_seeds(scores: Any, *, simulated: bool = False) -> SeedComponents:
    """ANOVA estimates of the ``(r:s) x t`` components from a balanced ``(systems, seeds, topics)``
    array, or a tidy DataFrame with columns ``system, seed, topic, value``.

    Examples
    --------
    >>> x = np.arange(2 * 2 * 3, dtype=float).reshape(2, 2, 3) ** 1.1
    >>> fit_seeds(x).n_seeds
    2
    """
    if isinstance(scores, pd.DataFrame):
        scores = _tidy_to_array(scores)
    x = np.asarray(scores, dtype=float)
    if x.ndim != 3:
        raise ParameterError(f"expected a (systems, seeds, topics) array, got shape {x.shape}", parameter="scores")
    S, R, T = x.shape
    if R < 2:
        raise ParameterError("one seed per system: the seed component cannot be estimated (need 2 or more)",
                             parameter="scores")
    if S < 2 or T < 2:
        raise ParameterError(f"need at least 2 systems and 2 topics, got {S} and {T}", parameter="scores")
    if not np.isfinite(x).all():
        raise ParameterError("missing or non-finite scores: the nested ANOVA needs a balanced array",
                             parameter="scores")
    mu = x.mean()
    ms, mt = x.mean(axis=(1, 2)), x.mean(axis=(0, 1))
    msr, mst = x.mean(axis=2), x.mean(axis=1)                  # (S, R), (S, T)
    ss_s = R * T * ((ms - mu) ** 2).sum()
    ss_t = S * R * ((mt - mu) ** 2).sum()
    ss_r = T * ((msr - ms[:, None]) ** 2).sum()
    ss_st = R * ((mst - ms[:, None] - mt[None, :] + mu) ** 2).sum()
    ss_e = ((x - msr[:, :, None] - mst[:, None, :] + ms[:, None, None]) ** 2).sum()
    MS_s, MS_t = ss_s / (S - 1), ss_t / (T - 1)
    MS_r, MS_st, MS_e = ss_r / (S * (R - 1)), ss_st / ((S - 1) * (T - 1)), ss_e / (S * (R - 1) * (T - 1))
    raw = {"var_s": (MS_s - MS_r - MS_st + MS_e) / (R * T), "var_t": (MS_t - MS_st) / (S * R),
           "var_st": (MS_st - MS_e) / R, "var_seed": (MS_r - MS_e) / T, "var_e": MS_e}
    truncated = tuple(k for k, v in raw.items() if v < 0)
    return SeedComponents(**{k: float(max(v, 0.0)) for k, v in raw.items()}, n_systems=S, n_seeds=R, n_topics=T,
                          truncated=truncated, simulated=simulated)


def seed_frame(scores: Any, pattern: str = SEED_PATTERN) -> pd.DataFrame:
    """The tidy ``system, seed, topic, value`` frame of a score matrix whose systems are runs
    named for their recipe and seed (one run per training seed), for :func:`fit_seeds`.

    ``pattern`` is a regular expression with the named groups ``system`` and ``seed`` that
    every run name must match in full (default :data:`SEED_PATTERN`); a name that does not is a
    ParameterError naming ``pattern`` and the run.

    Examples
    --------
    >>> from planner import ScoreMatrix
    >>> m = ScoreMatrix(np.array([[0.5, 0.25], [0.5, 0.5]]), ["bert.seed1", "bert.seed2"], ["t1", "t2"])
    >>> seed_frame(m).to_dict("list")["seed"]
    ['1', '1', '2', '2']
    """
    try:
        rx = re.compile(pattern)
    except re.error as exc:
        raise ParameterError(f"not a regular expression: {exc}", parameter="pattern") from None
    if not {"system", "seed"} <= set(rx.groupindex):
        raise ParameterError("the pattern needs the named groups (?P<system>...) and (?P<seed>...)",
                             parameter="pattern")
    rows = []
    for i, name in enumerate(scores.systems):
        hit = rx.fullmatch(str(name))
        if hit is None:
            raise ParameterError(f"run {name!r} does not say its recipe and seed (pattern {pattern!r}; "
                                 "name runs like RECIPE.seedK)", parameter="pattern")
        rows += [(hit["system"], hit["seed"], t, float(v)) for t, v in zip(scores.topics, scores.values[i])]
    return pd.DataFrame(rows, columns=["system", "seed", "topic", "value"])


def _tidy_to_array(df: pd.DataFrame) -> np.ndarray:
    need = {"system", "seed", "topic", "value"}
    if not need <= set(df.columns):
        raise ParameterError(f"a tidy table needs the columns {', '.join(sorted(need))}", parameter="scores")
    cube = df.set_index(["system", "seed", "topic"])["value"].unstack("topic")
    seeds = df.groupby("system")["seed"].nunique()
    if seeds.nunique() != 1:
        raise ParameterError("systems have different numbers of seeds: the nested ANOVA needs a balanced table",
                             parameter="scores")
    # seeds are nested: the r-th seed of each system, whatever its label
    cube = cube.groupby(level="system", sort=False).apply(lambda g: g.reset_index(drop=True))
    S, R = cube.index.get_level_values(0).nunique(), int(seeds.iloc[0])
    return cube.to_numpy(dtype=float).reshape(S, R, -1)


@dataclasses.dataclass(frozen=True, repr=False)
class SeedPower(ResultMixin):
    """Power and false-positive rate for two recipes (module docstring).

    Attributes
    ----------
    n_topics, n_seeds : int
        ``n`` topics, ``m`` seeds per recipe.
    min_diff, alpha : float
        The true difference ``delta`` and the test level.
    variance : float
        ``V``, the variance of the difference of the two recipes' means.
    sigma_d2 : float
        Variance of the seed-averaged per-topic difference, ``2 (var_st + var_e / m)``.
    power : float
        Of the seed-aware test (size ``alpha``).
    naive_power : float
        Rejection rate of the paired t-test over topics at ``delta`` (ignores seeds).
    false_positive_rate : float
        Rejection rate of that paired t-test when ``delta = 0``.
    simulated : bool
        The components came from simulated scores.
    """

    n_topics: int
    n_seeds: int
    min_diff: float
    alpha: float
    variance: float
    sigma_d2: float
    power: float
    naive_power: float
    false_positive_rate: float
    simulated: bool = False

    def __repr__(self) -> str:
        label = ", simulated" if self.simulated else ""
        return short_repr(self, ("n_topics", "n_seeds", "min_diff", "power", "false_positive_rate"))[:-1] + label + ")"


def _rates(c: SeedComponents, delta: float, n: int, m: int, alpha: float) -> tuple[float, float, float, float, float]:
    sigma_d2 = 2 * (c.var_st + c.var_e / m)
    V = 2 * (c.var_seed / m + c.var_st / n + c.var_e / (n * m))
    if not V > 0:
        raise ParameterError("all components are 0: the difference has no variance", parameter="components")
    tc = stats.t.ppf(1 - alpha / 2, n - 1)
    lam = 2 * n * c.var_seed / (m * sigma_d2) if sigma_d2 > 0 else math.inf
    ncp = delta / math.sqrt(V)
    nct = stats.nct(n - 1, ncp)
    power = float(nct.sf(tc) + nct.cdf(-tc))
    crit = tc / math.sqrt(1 + lam)
    naive = float(nct.sf(crit) + nct.cdf(-crit))
    fpr = float(2 * stats.t.sf(crit, n - 1))
    return V, sigma_d2, power, naive, fpr


def seed_power(components: SeedComponents, *, min_diff: float, n_topics: int, n_seeds: int = 1,
               alpha: float = 0.05) -> SeedPower:
    """Power to detect ``min_diff`` between two recipes with ``n_seeds`` seeds each on ``n_topics``
    topics, and the false-positive rate of the paired t-test that ignores seeds.

    Examples
    --------
    >>> c = SeedComponents(var_st=0.01, var_seed=0.0004, var_e=0.005)
    >>> p = seed_power(c, min_diff=0.03, n_topics=50, n_seeds=1)
    >>> round(p.false_positive_rate, 3), round(p.power, 3)
    (0.194, 0.123)
    """
    if not isinstance(components, SeedComponents):
        raise ParameterError("expected SeedComponents (fit_seeds, or given directly)", parameter="components")
    n = check_int(n_topics, "n_topics", minimum=2)
    m = check_int(n_seeds, "n_seeds", minimum=1)
    a = check_alpha(alpha)
    d = float(min_diff)
    if not math.isfinite(d):
        raise ParameterError(f"expected a finite number, got {min_diff!r}", parameter="min_diff")
    V, s2, power, naive, fpr = _rates(components, d, n, m, a)
    return SeedPower(n_topics=n, n_seeds=m, min_diff=d, alpha=a, variance=V, sigma_d2=s2, power=power,
                     naive_power=naive, false_positive_rate=fpr, simulated=components.simulated)


@dataclasses.dataclass(frozen=True, repr=False)
class SeedTradeoff(ResultMixin):
    """Topics x seeds for a target power (module docstring).

    Attributes
    ----------
    n_seeds, n_topics : int or None
        The cheapest design that reaches ``power`` (``None``: none within the limits).
    cost : float or None
        Its cost ``n_topics * topic_cost + 2 * n_seeds * seed_cost``.
    power : float
        The target.
    table : pandas.DataFrame
        Per ``n_seeds``: ``n_topics`` needed (NaN: not reachable with ``max_topics``), ``power``, ``cost``.
    simulated : bool
        The components came from simulated scores.
    at_max_seeds : bool
        The cheapest is at ``max_seeds``, the most seeds tried: more seeds may cost less.
    """

    n_seeds: int | None
    n_topics: int | None
    cost: float | None
    power: float
    table: pd.DataFrame
    simulated: bool = False
    at_max_seeds: bool = False

    def __repr__(self) -> str:
        return short_repr(self, ("n_seeds", "n_topics", "cost", "power"))

    def to_frame(self) -> pd.DataFrame:
        """The per-``n_seeds`` table."""
        return self.table.copy()


def seed_topic_tradeoff(components: SeedComponents, *, min_diff: float, power: float = 0.8, alpha: float = 0.05,
                        topic_cost: float = 1.0, seed_cost: float = 0.0, max_seeds: int = 10,
                        max_topics: int = 2000) -> SeedTradeoff:
    """For each ``m = 1..max_seeds``, the fewest topics giving the seed-aware test ``power``;
    the cheapest. More seeds lower only ``var_seed / m`` and ``var_e / (n m)``: when ``var_seed``
    is large, no number of topics reaches the target with few seeds.

    Examples
    --------
    >>> c = SeedComponents(var_st=0.01, var_seed=0.0004, var_e=0.005)
    >>> t = seed_topic_tradeoff(c, min_diff=0.05, topic_cost=1, seed_cost=20, max_seeds=4)
    >>> t.table["n_topics"].tolist()
    [nan, nan, 462.0, 196.0]
    """
    target = check_open_unit(power, "power")
    a = check_alpha(alpha)
    M = check_int(max_seeds, "max_seeds", minimum=1)
    N = check_int(max_topics, "max_topics", minimum=2)
    if topic_cost < 0 or seed_cost < 0:
        raise ParameterError("costs must be >= 0", parameter="topic_cost" if topic_cost < 0 else "seed_cost")
    rows = []
    for m in range(1, M + 1):
        n_need, p_at = _fewest_topics(components, float(min_diff), m, a, target, N)
        cost = n_need * topic_cost + 2 * m * seed_cost if n_need is not None else math.nan
        rows.append({"n_seeds": m, "n_topics": n_need if n_need is not None else math.nan, "power": p_at,
                     "cost": cost})
    table = pd.DataFrame(rows)
    ok = table.dropna(subset=["n_topics"])
    if ok.empty:
        return SeedTradeoff(None, None, None, target, table, components.simulated)
    best = ok.sort_values(["cost", "n_seeds"]).iloc[0]
    return SeedTradeoff(int(best["n_seeds"]), int(best["n_topics"]), float(best["cost"]), target, table,
                        components.simulated, at_max_seeds=int(best["n_seeds"]) == M)


def _fewest_topics(c: SeedComponents, d: float, m: int, alpha: float, target: float, N: int
                   ) -> tuple[int | None, float]:
    """Smallest n in [2, N] whose power reaches ``target`` (power rises with n: bisection)."""
    def pw(n: int) -> float:
        return _rates(c, d, n, m, alpha)[2]
    top = pw(N)
    if top < target:
        return None, top
    lo, hi = 2, N
    while lo < hi:
        mid = (lo + hi) // 2
        if pw(mid) >= target:
            hi = mid
        else:
            lo = mid + 1
    return lo, pw(lo)

"""Three facets: ``x[s, t, v]`` with variants nested in topics or seeds nested in systems
(:func:`fit_variants`, and the D-study over topics x variants)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .._checks import check_choice, positive_numbers
from ..collection import as_matrix
from ..errors import DegenerateDataWarning, InputError, ParameterError
from .common import check_size, label, ratio


@dataclass(frozen=True)
class VariantDStudy:
    """Erho2 and Phi over a grid of topics x variants (seeds).

    Attributes
    ----------
    nesting : str
        ``"topic"`` (variants within topics) or ``"system"`` (seeds within systems).
    rows : tuple of dict
        One dict per (n_topics, n_variants): ``n_topics``, ``n_variants``, ``units``
        (``n_topics * n_variants``), ``rel_error``, ``abs_error``, ``erho2``, ``phi``.
    """

    nesting: str
    rows: tuple[dict, ...]

    def to_dict(self) -> dict:
        return {"nesting": self.nesting, "rows": [dict(r) for r in self.rows]}

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame(list(self.rows))


@dataclass(frozen=True)
class VariantComponents:
    """Three-facet components (:mod:`planner.variance`).

    Attributes
    ----------
    nesting : str
        ``"topic"`` (design ``s x (v:t)``) or ``"system"`` (``(v:s) x t``).
    var_s, var_t : float
        System and topic variances.
    var_v : float
        Variants within topics (``nesting="topic"``) or seeds within systems.
    var_st : float
        System x topic interaction.
    var_e : float
        Residual (variant x system within topic, or seed x topic within system, + error).
    ms, df : Mapping
        Mean squares and degrees of freedom by source (``s``, ``t``, ``v``, ``st``, ``e``).
    n_systems, n_topics, n_variants, grand_mean, truncated, raw
        As in :class:`VarianceComponents`.
    """

    nesting: str
    var_s: float
    var_t: float
    var_v: float
    var_st: float
    var_e: float
    ms: Mapping[str, float]
    df: Mapping[str, int]
    n_systems: int
    n_topics: int
    n_variants: int
    grand_mean: float
    truncated: tuple[str, ...] = ()
    raw: Mapping[str, float] = field(default_factory=dict)
    method: str = "anova"
    measure: str | None = None

    def _errors(self, n, m):
        n = positive_numbers(n, "n_topics")
        m = positive_numbers(m, "n_variants")
        if self.nesting == "topic":
            rel = self.var_st / n + self.var_e / (n * m)
            ab = rel + self.var_t / n + self.var_v / (n * m)
        else:
            rel = self.var_v / m + self.var_st / n + self.var_e / (n * m)
            ab = rel + self.var_t / n
        return rel, ab

    def erho2(self, n_topics, n_variants=1):
        rel, _ = self._errors(n_topics, n_variants)
        out = ratio(self.var_s, self.var_s + rel)
        return out if np.ndim(out) else float(out)

    def phi(self, n_topics, n_variants=1):
        _, ab = self._errors(n_topics, n_variants)
        out = ratio(self.var_s, self.var_s + ab)
        return out if np.ndim(out) else float(out)

    def dstudy(self, n_topics, n_variants=None) -> VariantDStudy:
        """Erho2 and Phi for every combination of ``n_topics`` and ``n_variants``
        (default ``1..V``)."""
        ns = np.atleast_1d(positive_numbers(n_topics, "n_topics"))
        ms = np.atleast_1d(positive_numbers(np.arange(1, self.n_variants + 1) if n_variants is None
                                       else n_variants, "n_variants"))
        rows = []
        for n in ns:
            for mm in ms:
                rel, ab = self._errors(n, mm)
                rel, ab = float(rel), float(ab)
                rows.append({"n_topics": _intish(n), "n_variants": _intish(mm), "units": _intish(n * mm),
                             "rel_error": rel, "abs_error": ab,
                             "erho2": float(ratio(self.var_s, self.var_s + rel)),
                             "phi": float(ratio(self.var_s, self.var_s + ab))})
        return VariantDStudy(nesting=self.nesting, rows=tuple(rows))

    def to_dict(self) -> dict:
        return {"nesting": self.nesting, "method": self.method, "measure": self.measure,
                "var_s": float(self.var_s), "var_t": float(self.var_t), "var_v": float(self.var_v),
                "var_st": float(self.var_st), "var_e": float(self.var_e),
                "ms": {k: float(v) for k, v in self.ms.items()}, "df": {k: int(v) for k, v in self.df.items()},
                "n_systems": int(self.n_systems), "n_topics": int(self.n_topics),
                "n_variants": int(self.n_variants), "grand_mean": float(self.grand_mean),
                "truncated": list(self.truncated), "raw": {k: float(v) for k, v in self.raw.items()}}

    def to_frame(self) -> pd.DataFrame:
        vname = "variant:topic" if self.nesting == "topic" else "seed:system"
        rows = [("system", "s", self.var_s), ("topic", "t", self.var_t), (vname, "v", self.var_v),
                ("system x topic", "st", self.var_st), ("residual", "e", self.var_e)]
        tot = sum(r[2] for r in rows)
        return pd.DataFrame([{"component": c, "variance": v, "share": v / tot if tot > 0 else math.nan,
                              "mean_square": self.ms[k], "df": self.df[k]} for c, k, v in rows])


def _intish(v):
    f = float(v)
    return int(f) if f.is_integer() else f


def fit_variants(scores, *, nesting: str = "topic") -> VariantComponents:
    """Three-facet ANOVA of ``x[s, t, v]`` (balanced, no missing cells).

    Parameters
    ----------
    scores : ScoreMatrix or path or DataFrame or array_like
        Scores with a variant axis (a tidy table with a ``variant`` column, an
        ``(S, T, V)`` array, or :func:`stack_variants`).
    nesting : {"topic", "system"}
        ``"topic"``: the ``V`` variants are query variations nested in topics;
        ``"system"``: they are seeds (replicates) nested in systems.

    Returns
    -------
    VariantComponents

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(8)
    >>> x = (rng.uniform(size=(4, 6, 3)) + np.arange(4)[:, None, None] / 4
    ...      + rng.uniform(size=(1, 6, 1))) / 3         # 4 systems, 6 topics, 3 variants
    >>> vc = fit_variants(x, nesting="topic")
    >>> vc.n_systems, vc.n_topics, vc.n_variants, vc.df["e"]
    (4, 6, 3, 36)
    >>> vc.dstudy([25, 50], [1, 2]).to_frame().shape
    (4, 7)
    """
    m = as_matrix(scores)
    check_choice(nesting, ("topic", "system"), "nesting", noun="nesting")
    if not m.has_variants:
        raise ParameterError("the scores have no variant axis (use stack_variants() or a tidy table "
                             "with a variant column)", parameter="scores")
    x = m.values
    S, T, V = x.shape
    check_size(x[:, :, 0], m)
    if V < 2:
        raise InputError(f"need at least 2 variants per topic, got {V}", file=m.source)
    if np.isnan(x).any():
        raise ParameterError(f"{int(np.isnan(x).sum())} missing cell(s); the three-facet fit needs a "
                             "complete matrix", parameter="scores")
    flat = x.reshape(S, T * V)
    if np.all(flat == flat.flat[0]):
        raise InputError(f"every score is {flat.flat[0]:.6g}: a constant matrix has no variance to "
                         "decompose", file=m.source)
    ss, df = _sums_of_squares(x, nesting)
    ms = {k: ss[k] / df[k] for k in ss}
    raw = _expected_mean_squares(ms, S, T, V, nesting)
    vals = {k: max(v, 0.0) for k, v in raw.items()}
    truncated = tuple(k for k, v in raw.items() if v < 0)
    if truncated:
        warnings.warn(f"{label(m)}: negative variance estimate(s) set to 0: "
                      + ", ".join(f"{k} ({raw[k]:.3g})" for k in truncated),
                      DegenerateDataWarning, stacklevel=2)
    return VariantComponents(nesting=nesting, var_s=vals["var_s"], var_t=vals["var_t"], var_v=vals["var_v"],
                             var_st=vals["var_st"], var_e=vals["var_e"], ms=ms, df=df, n_systems=S,
                             n_topics=T, n_variants=V, grand_mean=float(x.mean()), truncated=truncated,
                             raw=raw, measure=m.measure)


def _sums_of_squares(x: np.ndarray, nesting: str) -> tuple[dict[str, float], dict[str, int]]:
    """Sums of squares and degrees of freedom by source (``s``, ``t``, ``v``, ``st``, ``e``)."""
    S, T, V = x.shape
    g = float(x.mean())
    m_s = x.mean(axis=(1, 2))
    m_t = x.mean(axis=(0, 2))
    m_st = x.mean(axis=2)
    ss_s = T * V * float(np.sum((m_s - g) ** 2))
    ss_t = S * V * float(np.sum((m_t - g) ** 2))
    ss_st = V * float(np.sum((m_st - m_s[:, None] - m_t[None, :] + g) ** 2))
    if nesting == "topic":
        m_tv = x.mean(axis=0)                                    # (T, V)
        ss_v = S * float(np.sum((m_tv - m_t[:, None]) ** 2))
        res = x - m_st[:, :, None] - m_tv[None, :, :] + m_t[None, :, None]
        df_v, df_e = T * (V - 1), (S - 1) * T * (V - 1)
    else:
        m_sv = x.mean(axis=1)                                    # (S, V)
        ss_v = T * float(np.sum((m_sv - m_s[:, None]) ** 2))
        res = x - m_st[:, :, None] - m_sv[:, None, :] + m_s[:, None, None]
        df_v, df_e = S * (V - 1), S * (V - 1) * (T - 1)
    ss_e = float(np.einsum("ijk,ijk->", res, res))
    df = {"s": S - 1, "t": T - 1, "v": df_v, "st": (S - 1) * (T - 1), "e": df_e}
    return {"s": ss_s, "t": ss_t, "v": ss_v, "st": ss_st, "e": ss_e}, df


def _expected_mean_squares(ms: Mapping[str, float], S: int, T: int, V: int, nesting: str) -> dict[str, float]:
    """The components solved from the expected mean squares (before truncation)."""
    if nesting == "topic":
        return {"var_e": ms["e"], "var_st": (ms["st"] - ms["e"]) / V, "var_v": (ms["v"] - ms["e"]) / S,
                "var_t": (ms["t"] - ms["st"] - ms["v"] + ms["e"]) / (S * V),
                "var_s": (ms["s"] - ms["st"]) / (T * V)}
    return {"var_e": ms["e"], "var_st": (ms["st"] - ms["e"]) / V, "var_v": (ms["v"] - ms["e"]) / T,
            "var_s": (ms["s"] - ms["st"] - ms["v"] + ms["e"]) / (T * V),
            "var_t": (ms["t"] - ms["st"]) / (S * V)}

"""Sums over pairs, kept per aligned block, and the rows of a :class:`~planner.simulate.Curve`.

Each engine's per-pair statistics are added block by block of
:data:`~planner.simulate.kernels.BLOCK` pairs (each block summed on its own, the block
sums added at the end), so the floating-point summation order does not depend on the
chunk size or on the order the engine computes the blocks in.

Examples
--------
>>> import numpy as np
>>> from planner.simulate.summary import PairSums
>>> sums = PairSums(np.array([0.005, 0.05, 0.3]), topics=(10,), edges=np.array([0.0, 0.1, np.inf]),
...                 keep_pairs=False)
>>> stats = {k: np.array([0.4, 0.1, 0.0]) for k in ("swap_rate", "reversal_rate", "power", "significant")}
>>> sums.add(slice(0, 3), 0, {**stats, "ci_width": np.array([0.2, 0.2, 0.1])})
>>> sums.totals()["swap_rate"].tolist()
[0.5]
>>> sums.bin_counts.tolist()
[2, 1]
"""

from __future__ import annotations

import math

import numpy as np

from .engine import PAIR_STATS
from .kernels import BLOCK

__all__ = ["PAIR_MEANS", "PARTIAL_STATS", "ROW_STATS", "PairSums", "bin_index", "bin_rows", "prediction_columns",
           "rows"]

#: the summaries of a row over pairs, NaN for a count that is not simulated
ROW_STATS = ("swap_rate_mean", "reversal_rate_mean", "kendall_tau_mean", "ci_width_median", "ci_width_p90",
             "power_mean", "discriminative_power")
#: the statistics of a row that are means over the ``P`` pairs of a per-pair value in [0, 1] (that
#: per-pair statistic; ``kendall_tau_mean`` is ``1 - 2 swap_rate_mean``): after some of the pairs,
#: the range the row's value must end in is known (:meth:`PairSums.mean_range`)
PAIR_MEANS = {"swap_rate_mean": "swap_rate", "reversal_rate_mean": "reversal_rate", "power_mean": "power",
              "discriminative_power": "significant", "kendall_tau_mean": "swap_rate"}
#: the statistics of a row whose range is known after some of the pairs (:meth:`PairSums.stat_range`):
#: the means over pairs, and the median interval width (each width in ``[0, inf]``)
PARTIAL_STATS = (*PAIR_MEANS, "ci_width_median")
_BIN_STATS = ("swap_rate_mean", "reversal_rate_mean", "ci_width_median", "power_mean", "discriminative_power")


def bin_index(dbar: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each pair's bin of ``|dbar|`` among ``edges`` (``-1``: in none)."""
    idx = np.clip(np.searchsorted(edges, np.abs(dbar), side="right") - 1, -1, edges.size - 2)
    return np.where(np.abs(dbar) >= edges[-1], -1 if math.isfinite(edges[-1]) else edges.size - 2, idx)


class PairSums:
    """Per-pair results (kept or not) and their sums per aligned block and ``|dbar|`` bin.

    Memory: ``8 * P * N * k`` for the per-pair arrays (``k = 5`` kept, else 1: the widths,
    needed for the medians) and ``8 * 5 * ceil(P / BLOCK) * (B + 1) * N`` for the sums.
    """

    def __init__(self, dbar: np.ndarray, *, topics: tuple[int, ...], edges: np.ndarray, keep_pairs: bool):
        P, N = dbar.size, len(topics)
        # per-pair results stored (N, P): one contiguous row per topic count
        self.pairs = {k: np.full((N, P), np.nan) for k in (PAIR_STATS if keep_pairs else ("ci_width",))}
        nb = -(-P // BLOCK)
        self.edges = edges
        self.n_bins = B = edges.size - 1
        self.bin_idx = bin_index(dbar, edges)
        self.bin_counts = np.bincount(self.bin_idx[self.bin_idx >= 0], minlength=B)
        self.blocks = {k: np.zeros((nb, N)) for k in PAIR_STATS}
        self.bins = {k: np.zeros((nb, B, N)) for k in PAIR_STATS}

    def add(self, sl: slice, j: int, res: dict[str, np.ndarray]) -> None:
        """Store the statistics of the pairs ``sl`` (starting on a block boundary) at count ``j``."""
        B = self.n_bins
        for k, v in res.items():
            if k in self.pairs:
                self.pairs[k][j, sl] = v
        b0 = sl.start // BLOCK
        c = sl.stop - sl.start
        nb = -(-c // BLOCK)
        ib = np.full(nb * BLOCK, B, dtype=np.intp)
        ib[:c] = np.where(self.bin_idx[sl] >= 0, self.bin_idx[sl], B)
        code = (np.arange(nb)[:, None] * (B + 1) + ib.reshape(nb, BLOCK)).ravel()
        vp = np.zeros(nb * BLOCK)
        for k, v in res.items():
            vp[:c] = v
            self.blocks[k][b0:b0 + nb, j] = vp.reshape(nb, BLOCK).sum(axis=1)
            self.bins[k][b0:b0 + nb, :, j] = np.bincount(code, weights=vp, minlength=nb * (B + 1)) \
                .reshape(nb, B + 1)[:, :B]

    def mean_range(self, statistic: str, j: int, done: int) -> tuple[float, float]:
        """The range the row's ``statistic`` (one of :data:`PAIR_MEANS`) at count ``j`` ends in, once
        ``done`` of the pairs are added (each of the others adds a value in [0, 1]).

        Examples
        --------
        >>> sums = PairSums(np.zeros(4), topics=(10,), edges=np.array([0.0, np.inf]), keep_pairs=False)
        >>> sums.add(slice(0, 2), 0, {k: np.array([0.5, 0.25]) for k in ("swap_rate", "reversal_rate",
        ...                                                               "power", "significant", "ci_width")})
        >>> sums.mean_range("swap_rate_mean", 0, 2), sums.mean_range("kendall_tau_mean", 0, 2)
        ((0.1875, 0.6875), (-0.375, 0.625))
        """
        P = self.bin_idx.size
        total = float(self.blocks[PAIR_MEANS[statistic]][:, j].sum())
        lo, hi = total / P, (total + max(P - done, 0)) / P      # (a chunk may end past P)
        return (1.0 - 2.0 * hi, 1.0 - 2.0 * lo) if statistic == "kendall_tau_mean" else (lo, hi)

    def median_range(self, j: int, done: int) -> tuple[float, float]:
        """The range the row's ``ci_width_median`` at count ``j`` ends in, once the first ``done`` pairs
        are added (each of the others adds a width in ``[0, inf]``): the same quantile with the others
        at 0, and at ``inf`` (``inf`` when the median reaches them).

        Examples
        --------
        >>> sums = PairSums(np.zeros(5), topics=(10,), edges=np.array([0.0, np.inf]), keep_pairs=False)
        >>> sums.add(slice(0, 3), 0, {k: np.array([0.5, 0.25, 0.75]) for k in PAIR_STATS})
        >>> sums.median_range(0, 3), sums.median_range(0, 2)
        ((0.25, 0.75), (0.0, inf))
        """
        w = self.pairs["ci_width"][j]
        d = min(done, w.size)
        known = w[:d]
        low = float(np.quantile(np.concatenate([known, np.zeros(w.size - d)]), 0.5))
        if math.ceil(0.5 * (w.size - 1)) >= d:        # the median reaches the widths not yet known
            return low, math.inf
        # the others at the largest known width: the same order statistics as at inf, all finite
        return low, float(np.quantile(np.concatenate([known, np.full(w.size - d, known.max())]), 0.5))

    def stat_range(self, statistic: str, j: int, done: int) -> tuple[float, float]:
        """:meth:`mean_range` or :meth:`median_range`, by ``statistic`` (one of :data:`PARTIAL_STATS`)."""
        return self.median_range(j, done) if statistic == "ci_width_median" else self.mean_range(statistic, j, done)

    def totals(self) -> dict[str, np.ndarray]:
        """Sum over all pairs of each statistic, shape ``(N,)``."""
        return {k: v.sum(axis=0) for k, v in self.blocks.items()}

    def bin_totals(self) -> dict[str, np.ndarray]:
        """Sum over the pairs of each bin, shape ``(B, N)``."""
        return {k: v.sum(axis=0) for k, v in self.bins.items()}

    def bin_medians(self) -> np.ndarray:
        """Median interval width per bin and count, ``(B, N)`` (NaN for an empty bin)."""
        ci_t = self.pairs["ci_width"]
        med = np.full((self.n_bins, ci_t.shape[0]), np.nan)
        for k in range(self.n_bins):
            if self.bin_counts[k]:
                med[k] = np.median(ci_t[:, self.bin_idx == k], axis=1)
        return med


def _reliability(comps: dict, n: int) -> tuple[float, float]:
    """Erho2 and Phi at ``n`` topics (0 when ``var_s`` is 0)."""
    if not comps["var_s"] > 0:
        return 0.0, 0.0
    er = comps["var_s"] / (comps["var_s"] + comps["var_e"] / n)
    ph = comps["var_s"] / (comps["var_s"] + (comps["var_t"] + comps["var_e"]) / n)
    return er, ph


def rows(sums: PairSums, topics: tuple[int, ...], computed: list[bool], comps: dict,
         allocations: list[dict | None]) -> list[dict]:
    """One row per topic count: the means / quantiles over pairs, Erho2, Phi, the allocation."""
    P = sums.pairs["ci_width"].shape[1]
    tot = sums.totals()
    ci_med, ci_p90 = np.quantile(sums.pairs["ci_width"], [0.5, 0.9], axis=1)
    out = []
    for j, n in enumerate(topics):
        er, ph = _reliability(comps, n)
        row: dict = {"n_topics": int(n), "n_pairs": int(P)}
        if computed[j]:
            sw = tot["swap_rate"][j] / P
            row.update({
                "swap_rate_mean": sw,
                "reversal_rate_mean": tot["reversal_rate"][j] / P,
                "kendall_tau_mean": 1.0 - 2.0 * sw,
                "ci_width_median": float(ci_med[j]),
                "ci_width_p90": float(ci_p90[j]),
                "power_mean": tot["power"][j] / P,
                "discriminative_power": tot["significant"][j] / P,
            })
        else:
            row.update({k: math.nan for k in ROW_STATS})
        row.update({"erho2": er, "phi": ph, "extrapolated": not computed[j]})
        if allocations[j] is not None:
            row["allocation"] = allocations[j]
        out.append(row)
    return out


def bin_rows(sums: PairSums, topics: tuple[int, ...], computed: list[bool]) -> list[dict]:
    """One row per (topic count, ``|dbar|`` bin): the means and the median width over its pairs."""
    bt, med, edges = sums.bin_totals(), sums.bin_medians(), sums.edges
    out = []
    for j, n in enumerate(topics):
        for k in range(sums.n_bins):
            cnt = int(sums.bin_counts[k])
            br: dict = {"n_topics": int(n), "bin_lo": float(edges[k]), "bin_hi": float(edges[k + 1]),
                        "n_pairs": cnt}
            if computed[j] and cnt:
                br.update({
                    "swap_rate_mean": bt["swap_rate"][k, j] / cnt,
                    "reversal_rate_mean": bt["reversal_rate"][k, j] / cnt,
                    "ci_width_median": float(med[k, j]),
                    "power_mean": bt["power"][k, j] / cnt,
                    "discriminative_power": bt["significant"][k, j] / cnt,
                })
            else:
                br.update({k2: math.nan for k2 in _BIN_STATS})
            br["extrapolated"] = not computed[j]
            out.append(br)
    return out


def prediction_columns(row_list: list[dict], band) -> None:
    """Add each row's prediction interval (``<stat>_pred_low`` / ``<stat>_pred_high`` of the
    swap rate, reversal rate and Kendall tau) from a
    :class:`~planner.simulate.prediction.PredictionBand` with the rows' topic counts; NaN for a
    row that is not computed."""
    from .prediction import PREDICTED

    for j, row in enumerate(row_list):
        for k in PREDICTED:
            lo, hi = band.ends(k)
            ok = not row["extrapolated"]
            row[f"{k}_pred_low"] = float(lo[j]) if ok else math.nan
            row[f"{k}_pred_high"] = float(hi[j]) if ok else math.nan

"""Voorhees & Buckley's extrapolation of the subsample swap rate to ``n > T / 2``.

``swap(n) = A exp(-B n)`` fitted by least squares on ``log swap`` over the simulated
counts, overall and per ``|difference|`` bin. A fit with ``B <= 0`` (a swap rate that does
not fall with ``n``) is not used and leaves its counts undefined, with a warning; no swap
at the largest simulated count extrapolates as 0. Above ``T / 2`` the all-pairs rate is
the pair-weighted mean of the bins' extrapolations when there are bins.

Examples
--------
>>> import numpy as np
>>> from planner.simulate.extrapolation import fit_exp
>>> f = fit_exp(np.array([10, 20, 40]), 0.3 * np.exp(-0.05 * np.array([10, 20, 40])))
>>> round(f["A"], 6), round(f["B"], 6), f["extrapolates"]
(0.3, 0.05, True)
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from ..errors import DegenerateDataWarning

__all__ = ["EXTRAPOLATED", "exp_value", "extrapolate", "fit_exp", "zero_fit"]

#: the row statistics the extrapolation fills above ``T / 2`` (the others stay undefined)
EXTRAPOLATED = ("swap_rate_mean", "kendall_tau_mean")


def fit_exp(ns: np.ndarray, sw: np.ndarray) -> dict | None:
    """Least-squares line through ``(n, log swap)`` over the positive rates, in increasing
    ``n`` (so the fit, to the last bit, does not depend on the order the counts were given)."""
    ok = np.isfinite(sw) & (sw > 0)
    if ok.sum() < 2:
        return None
    order = np.argsort(ns[ok], kind="stable")
    x, y = ns[ok][order].astype(float), np.log(sw[ok][order])
    slope, icpt = np.polyfit(x, y, 1)
    return {"A": float(math.exp(icpt)), "B": float(-slope), "fit_topics": [int(v) for v in x],
            "extrapolates": bool(-slope > 0)}


def zero_fit(ns: np.ndarray, sw: np.ndarray) -> dict | None:
    """No swap at the largest simulated count (and fewer than 2 positive rates to fit): the
    expected swap rate only falls with n, so the counts above T/2 are extrapolated as 0."""
    fin = np.isfinite(sw)
    if not fin.any() or sw[fin][np.argmax(ns[fin])] != 0:
        return None
    return {"A": 0.0, "B": None, "fit_topics": sorted(int(v) for v in ns[fin]), "extrapolates": True,
            "zero": True}


def exp_value(fit: dict, n: int) -> float:
    """The fitted swap rate at ``n``."""
    return 0.0 if fit.get("zero") else fit["A"] * math.exp(-fit["B"] * n)


def _bin_fits(comp, computed, bin_rows, B):
    """Fit each bin, fill its extrapolated rows; ``(by_bin, rising, unfit)`` (bin labels)."""
    by_bin, rising, unfit = [], [], []
    partial = not all(computed)
    for k in range(B):
        brs = [br for br in bin_rows if br["bin_lo"] == bin_rows[k]["bin_lo"]]
        bsw = np.array([br["swap_rate_mean"] for br, c in zip(brs, computed) if c])
        f = (fit_exp(comp, bsw) or zero_fit(comp, bsw)) if bsw.size else None
        by_bin.append({"bin_lo": bin_rows[k]["bin_lo"], "bin_hi": bin_rows[k]["bin_hi"], "fit": f})
        label = f"[{bin_rows[k]['bin_lo']:g}, {bin_rows[k]['bin_hi']:g})"
        if f is not None and not f["extrapolates"] and partial:
            rising.append(label)
        if f is None and bsw.size and np.isfinite(bsw).any() and partial:
            unfit.append(label)
        if f is not None and f["extrapolates"]:
            for br, c in zip(brs, computed):
                if not c:
                    br["swap_rate_mean"] = exp_value(f, br["n_topics"])
    return by_bin, rising, unfit


def _from_bins(rows, bin_rows, computed) -> list[int]:
    """The all-pairs rate above T/2 as the pair-weighted mean of the bins; the counts left undefined.

    The pairs of a bin decay at a similar rate; one exponential fitted to the mean of pairs
    that decay at different rates falls too fast: on TREC-5 AP at n = 100 it gave 0.022,
    below the 0.035 the bins give even with the near-ties never swapping.
    """
    undefined = []
    for r, c in zip(rows, computed):
        if c:
            continue
        brs = [br for br in bin_rows if br["n_topics"] == r["n_topics"] and br["n_pairs"]]
        vals = np.array([br["swap_rate_mean"] for br in brs], dtype=float)
        w = np.array([br["n_pairs"] for br in brs], dtype=float)
        # every pair must be in a bin that extrapolates (bins need not cover all pairs)
        covered = brs and int(w.sum()) == int(r.get("n_pairs", w.sum()))
        s = float(np.sum(vals * w) / np.sum(w)) if covered and np.isfinite(vals).all() else math.nan
        if not math.isfinite(s):
            undefined.append(int(r["n_topics"]))
        r["swap_rate_mean"] = s
        r["kendall_tau_mean"] = 1.0 - 2.0 * s
    return undefined


def _warn(fit: dict, rising: list[str], unfit: list[str], undefined: list[int]) -> None:
    # stacklevel 5: the caller of planner.simulate.predict (through _curve and extrapolate)
    if unfit and fit.get("A") is not None:     # (without an overall fit its own warning says it)
        warnings.warn("subsample: fewer than 2 simulated topic counts with a positive swap rate in "
                      + ", ".join(unfit) + "; counts above T/2 are not extrapolated there",
                      DegenerateDataWarning, stacklevel=5)
    if rising:
        warnings.warn("subsample: the swap rate does not fall with n (fitted B <= 0) for "
                      + ", ".join(rising) + "; counts above T/2 are not extrapolated there (disjoint "
                      "halves of a finite collection order near-tied pairs oppositely)"
                      + (", nor over all pairs, whose rate is the pair-weighted mean of the bins"
                         if undefined else ""), DegenerateDataWarning, stacklevel=5)
    elif undefined and fit.get("A") is not None and not unfit:
        warnings.warn("subsample: the swap rate over all pairs above T/2 (the pair-weighted mean of "
                      "the bins) is not extrapolated at n = " + ", ".join(map(str, undefined)),
                      DegenerateDataWarning, stacklevel=5)


def extrapolate(ns, computed: list[bool], rows: list[dict], bin_rows: list[dict], B: int) -> dict:
    """Fill the swap rate and Kendall tau of the counts above ``T / 2`` in ``rows`` and
    ``bin_rows``; returns :attr:`planner.simulate.Curve.extrapolation`.

    A fit whose swap rate does not fall with ``n`` (``B <= 0``) is kept in the output
    with ``"extrapolates": False`` and its counts above ``T/2`` stay undefined (NaN):
    growing it would leave [0, 1]. It happens in the bin of near-ties, where two
    disjoint halves of a finite collection tend to order a pair oppositely. A bin (or the
    whole curve) with no swap at its largest simulated count and fewer than two positive
    rates is extrapolated as 0 (``"zero": True``); one with a single positive rate at its
    largest count cannot be fitted and stays NaN, with a warning naming it.
    """
    comp = np.array([n for n, c in zip(ns, computed) if c])
    sw = np.array([r["swap_rate_mean"] for r, c in zip(rows, computed) if c])
    fit = fit_exp(comp, sw) or zero_fit(comp, sw)
    by_bin, rising, unfit = _bin_fits(comp, computed, bin_rows, B)
    undefined: list[int] = []
    if B and not all(computed):
        undefined = _from_bins(rows, bin_rows, computed)
    elif fit is not None and fit["extrapolates"]:
        for r, c in zip(rows, computed):
            if not c:
                s = exp_value(fit, r["n_topics"])
                r["swap_rate_mean"] = s
                r["kendall_tau_mean"] = 1.0 - 2.0 * s
    if fit is not None:
        if not fit["extrapolates"] and not all(computed) and B == 0:
            rising.insert(0, "all pairs")
    else:
        fit = {"A": None, "B": None, "fit_topics": [int(v) for v in comp], "extrapolates": False}
        if not all(computed):
            warnings.warn("subsample: fewer than 2 simulated topic counts (<= T/2) with a positive "
                          "swap rate; counts above T/2 cannot be extrapolated", DegenerateDataWarning,
                          stacklevel=4)
    _warn(fit, rising, unfit, undefined)
    fit["by_bin"] = by_bin
    fit["all_pairs"] = "pair-weighted mean of the bins" if B else "the fit above"
    return fit

"""REML fits of the crossed model on the observed cells of an ``(S, T)`` array (NaN = missing).

Two engines with the same likelihood: :func:`reml_direct` maximises it here, in
``min(S, T)`` dimensions; :func:`reml_statsmodels` fits statsmodels ``MixedLM``. Each
returns the estimates as a dict (components, implied mean squares, sizes, convergence).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import linalg, optimize

from .._blas import one_blas_thread
from ..errors import DegenerateDataWarning
from .anova import moment_start


def _estimates(var_s: float, var_t: float, var_e: float, mean: float, S: int, T: int, n_cells: int,
               converged: bool) -> dict:
    """The estimate dict of a REML fit: components and the mean squares they imply."""
    df_s, df_t = S - 1, T - 1
    return {"ms_s": var_e + T * var_s, "ms_t": var_e + S * var_t, "ms_e": var_e,
            "df_s": df_s, "df_t": df_t, "df_e": df_s * df_t,
            "var_s": var_s, "var_t": var_t, "var_e": var_e,
            "grand_mean": mean, "n_systems": S, "n_topics": T,
            "n_cells": n_cells, "converged": converged}


def _warn_not_converged(name: str) -> None:
    warnings.warn(f"{name}: REML fit did not converge; components may be inaccurate",
                  DegenerateDataWarning, stacklevel=5)


# ============================================================================ statsmodels
def statsmodels_work(n_cells: int, systems: int, topics: int) -> tuple[float, int]:
    """Work units (:mod:`planner.simulate.work`) and bytes of a statsmodels ``MixedLM`` fit of
    ``n_cells`` observed cells of ``systems`` x ``topics``: its crossed effects are ``q = S + T``
    dense columns, each likelihood step about ``n q^2`` products, and its steps and copies took up
    to 200 ns of CPU and 80 bytes per ``n q^2`` and ``n q`` (docs/research/known-limits.md):
    ``12.5 n q^2`` units, ``80 n q`` bytes.

    Examples
    --------
    >>> statsmodels_work(2_850, 100, 30)
    (602062500.0, 29640000)
    """
    q = systems + topics
    return 12.5 * n_cells * q * q, 80 * n_cells * q


def check_statsmodels(n_cells: int, systems: int, topics: int) -> None:
    """Refuse, before statsmodels is imported, a fit over the work limits
    (:func:`planner.simulate.work.check_fits`; 1,000 systems x 30 topics ran for minutes), naming
    ``reml_engine`` and offering the direct engine."""
    # imported here: planner.simulate imports this package
    from ..simulate.work import Work, check_fits

    units, held = statsmodels_work(n_cells, systems, topics)
    check_fits(Work(units, held), what=f"REML with statsmodels on {systems:,} systems x {topics:,} topics "
               f"({n_cells:,} cells)", parameter="reml_engine",
               fixes=["the engine 'direct' (the same likelihood, solved in min(S, T) dimensions)"])


def reml_statsmodels(x: np.ndarray, name: str, start: str = "moments") -> dict:
    """REML fit of the crossed model with statsmodels ``MixedLM``.

    ``start="moments"`` starts the optimiser at moment estimates (the ANOVA solution on
    balanced data, which is the REML optimum when no component is negative) with
    L-BFGS; ``start="default"`` uses statsmodels' own start and optimiser choice.
    """
    obs = ~np.isnan(x)
    si, ti = np.nonzero(obs)
    # relabel to the systems / topics that have data
    su, si = np.unique(si, return_inverse=True)
    tu, ti = np.unique(ti, return_inverse=True)
    check_statsmodels(si.size, len(su), len(tu))
    # statsmodels takes about a second to import: only this (non-default) engine needs it
    from statsmodels.regression.mixed_linear_model import MixedLM, MixedLMParams

    df = pd.DataFrame({"y": x[obs], "system": si, "topic": ti, "g": np.zeros(si.size, dtype=int)})
    with warnings.catch_warnings(), one_blas_thread():   # small products again (see reml_direct)
        # statsmodels warns "MLE may be on the boundary" for every fit without a group-level
        # random effect (re_formula="0"); convergence is read from the result instead
        warnings.simplefilter("ignore")
        model = MixedLM.from_formula("y ~ 1", groups="g", re_formula="0", data=df,
                                     vc_formula={"system": "0 + C(system)", "topic": "0 + C(topic)"})
        names = list(model.exog_vc.names)
        if start == "moments":
            vs, vt, ve, mu = moment_start(x)
            comp = {"system": vs / ve, "topic": vt / ve}
            sp = MixedLMParams.from_components(fe_params=np.array([mu]), cov_re=np.zeros((0, 0)),
                                               vcomp=np.array([comp[n] for n in names]))
            res = model.fit(reml=True, start_params=sp, method="lbfgs")
            if not bool(getattr(res, "converged", True)):
                res = model.fit(reml=True)
        else:
            res = model.fit(reml=True)
    converged = bool(getattr(res, "converged", True))
    if not converged:
        _warn_not_converged(name)
    vc = dict(zip(names, np.asarray(res.vcomp, dtype=float)))
    return _estimates(vc["system"], vc["topic"], float(res.scale), float(np.asarray(res.fe_params)[0]),
                      len(su), len(tu), int(obs.sum()), converged)


# ============================================================================ direct
@dataclass
class _Factor:
    """The pieces of ``A = I + D Z'Z D`` at one ``theta`` (block 1: the larger side, diagonal;
    block 2: the Schur complement ``C``), and the quadratic forms of the likelihood."""

    th_s: float
    th_t: float
    p: np.ndarray
    q: np.ndarray
    B: np.ndarray
    Bp: np.ndarray
    cf: tuple
    u1: np.ndarray
    w1: np.ndarray
    sol: np.ndarray
    logdet: float
    xhx: float
    beta: float
    rhr: float


class RestrictedLikelihood:
    """``-2 log L_R`` of the crossed model and its gradient, in ``min(S, T)`` dimensions.

    With ratios ``g_s = var_s / var_e`` and ``g_t = var_t / var_e``, ``H = I + Z diag(g) Z'``
    and ``A = I + D Z'Z D`` (``D = diag(sqrt(g))``), every quadratic form ``u' H^-1 v`` is
    ``u'v - (D Z'u)' A^-1 (D Z'v)``, ``log|H| = log|A|``, and ``A`` is reduced to its Schur
    complement on the smaller of the system and topic blocks. The profile
    ``-2 log L_R = log|A| + log(1' H^-1 1) + (n - 1) log(r' H^-1 r / (n - 1))`` is a function
    of ``theta = (sqrt g_s, sqrt g_t)``. Systems and topics without an observed cell are
    left out (``x`` holds the rest).
    """

    def __init__(self, x: np.ndarray) -> None:
        obs = ~np.isnan(x)
        x = x[obs.any(axis=1)][:, obs.any(axis=0)]
        obs = ~np.isnan(x)
        self.x = x
        self.S, self.T = x.shape
        x0 = np.where(obs, x, 0.0)
        M = obs.astype(float)
        n_s, n_t = M.sum(axis=1), M.sum(axis=0)
        y_s, y_t = x0.sum(axis=1), x0.sum(axis=0)
        self.n = float(M.sum())
        self.sum_y = float(x0.sum())
        self.yy = float(np.einsum("ij,ij->", x0, x0))
        self.swap = self.T > self.S                 # dense block = the smaller of the two
        if self.swap:
            M, n_s, n_t, y_s, y_t = M.T, n_t, n_s, y_t, y_s
        self.M, self.n_s, self.n_t, self.y_s, self.y_t = M, n_s, n_t, y_s, y_t

    def factor(self, theta: np.ndarray) -> _Factor:
        """The factorisation and quadratic forms at ``theta``."""
        th_s, th_t = (theta[1], theta[0]) if self.swap else (theta[0], theta[1])
        p = 1.0 + th_s ** 2 * self.n_s                         # diagonal block (large side)
        q = 1.0 + th_t ** 2 * self.n_t
        B = (th_s * th_t) * self.M
        Bp = B / p[:, None]
        C = np.diag(q) - B.T @ Bp
        cf = linalg.cho_factor(C, lower=True, check_finite=False)
        logdet = float(np.sum(np.log(p)) + 2 * np.sum(np.log(np.diag(cf[0]))))
        # u = D Z'1 and w = D Z'y, split into the two blocks
        u1, u2 = th_s * self.n_s, th_t * self.n_t
        w1, w2 = th_s * self.y_s, th_t * self.y_t
        ru = u2 - Bp.T @ u1
        rw = w2 - Bp.T @ w1
        sol = linalg.cho_solve(cf, np.column_stack([ru, rw]), check_finite=False)
        uu = float(u1 @ (u1 / p) + ru @ sol[:, 0])
        uw = float(u1 @ (w1 / p) + ru @ sol[:, 1])
        ww = float(w1 @ (w1 / p) + rw @ sol[:, 1])
        xhx = self.n - uu                   # 1' H^-1 1
        xhy = self.sum_y - uw               # 1' H^-1 y
        yhy = self.yy - ww                  # y' H^-1 y
        beta = xhy / xhx
        return _Factor(th_s=th_s, th_t=th_t, p=p, q=q, B=B, Bp=Bp, cf=cf, u1=u1, w1=w1, sol=sol,
                       logdet=logdet, xhx=xhx, beta=beta, rhr=yhy - beta * xhy)

    def gradient(self, f: _Factor) -> np.ndarray:
        """Gradient of ``-2 log L_R`` in theta: with ``A^-1 (D Z'v) = D Z' H^-1 v``,
        ``d/d theta_k = (2 / theta_k) [tr_k(I - A^-1) - |(A^-1 u)_k|^2 / xhx
        - (n - 1) |(A^-1 D Z'r)_k|^2 / rhr]`` (k = block)."""
        a2u = f.sol[:, 0]                          # A^-1 u, block 2 (Schur side)
        a1u = (f.u1 - f.B @ a2u) / f.p             # block 1
        a2r = f.sol[:, 1] - f.beta * f.sol[:, 0]   # A^-1 D Z'r, r = y - beta
        a1r = (f.w1 - f.beta * f.u1 - f.B @ a2r) / f.p
        Cinv = linalg.cho_solve(f.cf, np.eye(f.q.size), check_finite=False)
        tr2 = float(np.trace(Cinv))
        tr1 = float(np.sum(1.0 / f.p) + np.einsum("ij,ji->", Cinv, f.Bp.T @ f.Bp))
        g = np.zeros(2)
        for k, (th, size, tr, au, ar) in enumerate(((f.th_s, f.p.size, tr1, a1u, a1r),
                                                    (f.th_t, f.q.size, tr2, a2u, a2r))):
            if th == 0:
                continue
            bracket = (size - tr) - float(au @ au) / f.xhx - (self.n - 1) * float(ar @ ar) / f.rhr
            g[k] = 2.0 * bracket / th
        return g[::-1] if self.swap else g

    def _value(self, f: _Factor) -> float:
        if not (f.xhx > 0 and f.rhr > 0):
            return np.inf
        return f.logdet + math.log(f.xhx) + (self.n - 1) * math.log(f.rhr / (self.n - 1))

    def objective(self, theta: np.ndarray) -> float:
        """``-2 log L_R`` at ``theta`` (``inf`` where it is undefined)."""
        try:
            return self._value(self.factor(theta))
        except (np.linalg.LinAlgError, ValueError):
            return np.inf

    def objective_grad(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """``-2 log L_R`` and its gradient at ``theta``."""
        try:
            f = self.factor(theta)
            g = self.gradient(f)
        except (np.linalg.LinAlgError, ValueError):
            return np.inf, np.zeros(2)
        if not (f.xhx > 0 and f.rhr > 0):
            return np.inf, np.zeros(2)
        return self._value(f), g


def _refine_boundary(lik: RestrictedLikelihood, theta: np.ndarray, best: float) -> tuple[np.ndarray, float]:
    """A component whose optimum is the boundary (g = 0): compare with the profile there."""
    for k in (0, 1):
        if theta[k] == 0:
            continue
        free = 1 - k

        def along(v, free=free):
            th = np.zeros(2)
            th[free] = v
            return lik.objective(th)

        if not along(theta[free]) < best + 1e-10 * max(1.0, abs(best)):
            continue            # the boundary is clearly worse: nothing to refine there
        r1 = optimize.minimize_scalar(along, bracket=(0.5 * theta[free] + 1e-6, theta[free] + 1e-6))
        if r1.fun < best - 1e-10 * max(1.0, abs(best)):
            theta = np.zeros(2)
            theta[free] = abs(r1.x)
            best = float(r1.fun)
    return theta, best


def reml_direct(x: np.ndarray, name: str) -> dict:
    """REML of the crossed model by direct maximisation of the restricted likelihood
    (:class:`RestrictedLikelihood`), minimised over ``(sqrt g_s, sqrt g_t)`` with
    L-BFGS-B from the moment start; the same likelihood as :func:`reml_statsmodels`."""
    lik = RestrictedLikelihood(x)
    vs, vt, ve, _ = moment_start(lik.x)
    start = np.sqrt([vs / ve, vt / ve])
    opts = {"ftol": 1e-14, "gtol": 1e-10, "maxiter": 500}
    # one BLAS thread: every iteration is a few products of min(S, T)-sized matrices, where
    # idle BLAS threads busy-wait for more CPU than they save (5-40x CPU; planner._blas)
    with one_blas_thread():
        res = optimize.minimize(lik.objective_grad, start, jac=True, method="L-BFGS-B", options=opts)
        theta, best = _refine_boundary(lik, np.abs(res.x), float(res.fun))
        g = lik.objective_grad(theta)[1]
    # the gradient vanishes at an interior optimum; at 0 only one-sided moves matter
    converged = bool(np.isfinite(best)) and all(
        abs(g[k]) < 1e-3 * max(1.0, abs(best)) ** 0.5 or (theta[k] == 0 and g[k] >= 0) for k in (0, 1))
    if not converged:
        _warn_not_converged(name)
    f = lik.factor(theta)
    var_e = f.rhr / (lik.n - 1)
    return _estimates(float(theta[0] ** 2 * var_e), float(theta[1] ** 2 * var_e), float(var_e), float(f.beta),
                      lik.S, lik.T, int(lik.n), converged)

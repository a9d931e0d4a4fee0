"""Plots of study results: every ``plot_*(..., ax=None)`` returns a matplotlib Figure.

Functions draw on ``ax`` when given (and return ``ax.figure``), else on a new
:class:`matplotlib.figure.Figure` that is not registered with pyplot, so nothing
is shown and no GUI backend is needed (the figures render with Agg when saved).

Inputs are pandas frames with the columns the study writes to its CSV tables:

- curves (``curves.csv``): ``scenario, n_topics, swap_rate_mean, reversal_rate_mean,
  kendall_tau_mean, ci_width_median, ci_width_p90, power_mean`` (optional
  ``<column>_lo`` / ``<column>_hi`` pairs are drawn as bands);
- required topics (``targets.csv``): ``scenario, target, value, n_topics``;
- variance components (``components.csv``): ``scenario, var_s, var_t, var_e``;
- pool depth (``pool.csv``): ``depth, judgments_per_topic`` and optionally
  ``judged_share_mean`` (mean over runs of the judged share of their top k).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["plot_curve", "plot_ci_width", "plot_swap_reversal", "plot_kendall_tau", "plot_power",
           "plot_generalizability",
           "plot_required_topics", "plot_components", "plot_pool_depth", "plot_budget"]

_LINESTYLES = ["-", "--", ":", "-."]


def _axes(ax, figsize=(6.4, 4.0)):
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots()


def _need(frame, cols: Sequence[str], what: str) -> None:
    from .errors import ParameterError

    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise ParameterError(f"{what} needs column(s) {', '.join(missing)}", parameter="frame")


def _groups(frame, by: str | None):
    if by is None or by not in frame.columns:
        return [(None, frame)]
    order = list(dict.fromkeys(frame[by]))
    return [(g, frame[frame[by] == g]) for g in order]


def plot_curve(frame: "pd.DataFrame", y: str, *, by: str | None = "scenario", band: tuple[str, str] | None = None,
               ylabel: str | None = None, title: str | None = None, hline: float | None = None,
               logx: bool = False, ax: "Axes | None" = None, linestyle: str = "-",
               label_suffix: str = "") -> "Figure":
    """One line of ``y`` against ``n_topics`` per ``by`` group, with an optional band.

    ``band=(lo, hi)`` names two columns filled between; without it, columns
    ``y + "_lo"`` and ``y + "_hi"`` are used when present.
    """
    _need(frame, ["n_topics", y], "plot_curve")
    fig, ax = _axes(ax)
    if band is None and f"{y}_lo" in frame.columns and f"{y}_hi" in frame.columns:
        band = (f"{y}_lo", f"{y}_hi")
    for i, (g, sub) in enumerate(_groups(frame, by)):
        sub = sub.sort_values("n_topics")
        x = sub["n_topics"].to_numpy(dtype=float)
        yy = sub[y].to_numpy(dtype=float)
        label = (str(g) if g is not None else y) + label_suffix
        (line,) = ax.plot(x, yy, marker="o", markersize=3, linestyle=linestyle, label=label)
        if band is not None and band[0] in sub.columns and band[1] in sub.columns:
            lo = sub[band[0]].to_numpy(dtype=float)
            hi = sub[band[1]].to_numpy(dtype=float)
            ok = np.isfinite(lo) & np.isfinite(hi)
            if ok.any():
                ax.fill_between(x[ok], lo[ok], hi[ok], alpha=0.15, color=line.get_color(), linewidth=0)
    if hline is not None:
        ax.axhline(hline, color="grey", linewidth=0.8, linestyle=":")
    if logx:
        ax.set_xscale("log")
    ax.set_xlabel("topics (n)")
    ax.set_ylabel(ylabel or y)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    if len(ax.get_lines()) > 1 or by is not None:
        ax.legend(fontsize="small")
    return fig


def plot_ci_width(frame: "pd.DataFrame", *, ax: "Axes | None" = None, by: str | None = "scenario") -> "Figure":
    """Median width of the pairs' 95% intervals against n; band up to the 90th percentile over pairs."""
    band = ("ci_width_median", "ci_width_p90") if "ci_width_p90" in frame.columns else None
    return plot_curve(frame, "ci_width_median", by=by, band=band, ax=ax,
                      ylabel="interval width (median over pairs; band to p90)",
                      title="Interval width of a pair's mean difference")


def plot_swap_reversal(frame: "pd.DataFrame", *, ax: "Axes | None" = None, by: str | None = "scenario") -> "Figure":
    """Swap rate (solid) and reversal rate (dashed), mean over pairs, against n."""
    fig = plot_curve(frame, "swap_rate_mean", by=by, ax=ax, ylabel="rate (mean over pairs)",
                     title="Swap rate (solid) and reversal rate (dashed)", label_suffix=" swap")
    if "reversal_rate_mean" in frame.columns:
        ax2 = fig.axes[0] if ax is None else ax
        for i, (g, sub) in enumerate(_groups(frame, by)):
            sub = sub.sort_values("n_topics")
            color = ax2.get_lines()[i].get_color() if i < len(ax2.get_lines()) else None
            ax2.plot(sub["n_topics"], sub["reversal_rate_mean"], linestyle="--", marker="x",
                     markersize=3, color=color, label=(str(g) if g is not None else "") + " reversal")
        ax2.legend(fontsize="small")
    return fig


def plot_kendall_tau(frame: "pd.DataFrame", *, ax: "Axes | None" = None, by: str | None = "scenario") -> "Figure":
    """Expected Kendall tau between rankings of two independent n-topic sets."""
    return plot_curve(frame, "kendall_tau_mean", by=by, ax=ax, ylabel="expected Kendall tau",
                      title="Ranking agreement between two topic sets")


def plot_power(frame: "pd.DataFrame", *, ax: "Axes | None" = None, by: str | None = "scenario",
               target: float | None = None) -> "Figure":
    """Mean power of the paired t-test over pairs at the study's min_diff, against n."""
    return plot_curve(frame, "power_mean", by=by, ax=ax, ylabel="power (mean over pairs)",
                      title="Power of the paired t-test", hline=target)


def plot_generalizability(frame: "pd.DataFrame", *, ax: "Axes | None" = None, by: str | None = "scenario") -> "Figure":
    """D-study Erho2 (solid) and Phi (dashed) against n, with their intervals as bands
    (columns ``erho2_lo/erho2_hi``, ``phi_lo/phi_hi`` when present)."""
    fig = plot_curve(frame, "erho2", by=by, ax=ax, ylabel="coefficient",
                     title="Generalizability Erho2 (solid) and dependability Phi (dashed)",
                     label_suffix=" Erho2")
    if "phi" in frame.columns:
        ax2 = fig.axes[0] if ax is None else ax
        n_lines = len(ax2.get_lines())
        for i, (g, sub) in enumerate(_groups(frame, by)):
            sub = sub.sort_values("n_topics")
            color = ax2.get_lines()[i].get_color() if i < n_lines else None
            x = sub["n_topics"].to_numpy(dtype=float)
            ax2.plot(x, sub["phi"], linestyle="--", marker="x", markersize=3, color=color,
                     label=(str(g) if g is not None else "") + " Phi")
            if "phi_lo" in sub.columns and "phi_hi" in sub.columns:
                lo, hi = sub["phi_lo"].to_numpy(dtype=float), sub["phi_hi"].to_numpy(dtype=float)
                ok = np.isfinite(lo) & np.isfinite(hi)
                if ok.any():
                    ax2.fill_between(x[ok], lo[ok], hi[ok], alpha=0.1, color=color, linewidth=0)
        ax2.legend(fontsize="small")
    return fig


def plot_required_topics(frame: "pd.DataFrame", *, ax: "Axes | None" = None) -> "Figure":
    """Horizontal bars: topics each scenario needs for each target (``n_topics``; NaN = not reached)."""
    _need(frame, ["scenario", "target", "n_topics"], "plot_required_topics")
    scen = list(dict.fromkeys(frame["scenario"]))
    targets = list(dict.fromkeys(frame["target"].astype(str)))
    fig, ax = _axes(ax, figsize=(6.4, max(2.5, 0.45 * len(scen) * max(1, len(targets)) + 1.2)))
    h = 0.8 / max(1, len(targets))
    for j, tg in enumerate(targets):
        sub = frame[frame["target"].astype(str) == tg].set_index("scenario")
        vals = np.array([float(sub["n_topics"].get(s, np.nan)) if s in sub.index else np.nan for s in scen])
        y = np.arange(len(scen)) + j * h
        shown = np.where(np.isfinite(vals), vals, 0.0)
        ax.barh(y, shown, height=h, label=tg)
        for yi, v in zip(y, vals):
            ax.text(v if np.isfinite(v) else 0, yi, f" {int(v)}" if np.isfinite(v) else " not reached",
                    va="center", fontsize="small")
    ax.set_yticks(np.arange(len(scen)) + h * (len(targets) - 1) / 2)
    ax.set_yticklabels([str(s) for s in scen], fontsize="small")
    ax.invert_yaxis()
    ax.set_xlabel("topics needed")
    ax.set_title("Topics needed per scenario and target")
    ax.legend(fontsize="small")
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def plot_components(frame: "pd.DataFrame", *, ax: "Axes | None" = None) -> "Figure":
    """Stacked bars of the variance components (system, topic, residual) per scenario."""
    _need(frame, ["scenario", "var_s", "var_t", "var_e"], "plot_components")
    fig, ax = _axes(ax, figsize=(6.4, max(2.5, 0.4 * len(frame) + 1.2)))
    y = np.arange(len(frame))
    left = np.zeros(len(frame))
    for col, lab in (("var_s", "systems"), ("var_t", "topics"), ("var_e", "residual (s x t)")):
        v = frame[col].to_numpy(dtype=float)
        ax.barh(y, v, left=left, label=lab)
        left = left + np.nan_to_num(v)
    ax.set_yticks(y)
    ax.set_yticklabels([str(s) for s in frame["scenario"]], fontsize="small")
    ax.invert_yaxis()
    ax.set_xlabel("variance")
    ax.set_title("Variance components")
    ax.legend(fontsize="small")
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def plot_pool_depth(frame: "pd.DataFrame", *, ax: "Axes | None" = None) -> "Figure":
    """Judgments per topic (distinct documents in the depth-k pool) against pool depth k;
    the mean judged share of the runs' top k on a second axis when given."""
    _need(frame, ["depth", "judgments_per_topic"], "plot_pool_depth")
    fig, ax = _axes(ax)
    # pool statistics do not depend on the measure: one row per depth
    f = frame.drop_duplicates("depth").sort_values("depth")
    ax.plot(f["depth"], f["judgments_per_topic"], marker="o", label="judgments per topic")
    ax.set_xlabel("pool depth k")
    ax.set_ylabel("judgments per topic (mean)")
    ax.set_title("Judgments against pool depth")
    ax.grid(True, alpha=0.3)
    if "judged_share_mean" in f.columns:
        ax2 = ax.twinx()
        ax2.plot(f["depth"], f["judged_share_mean"], marker="s", linestyle="--", color="tab:red",
                 label="judged share of top k (mean over runs)")
        ax2.set_ylabel("judged share of top k")
        ax2.set_ylim(0, 1.05)
        lines = ax.get_lines() + ax2.get_lines()
        ax.legend(lines, [ln.get_label() for ln in lines], fontsize="small", loc="center right")
    return fig


def plot_budget(frame: "pd.DataFrame", *, ax: "Axes | None" = None) -> "Figure":
    """Total cost against topics, one line per pool depth (``depth, n_topics, cost``)."""
    _need(frame, ["depth", "n_topics", "cost"], "plot_budget")
    fig, ax = _axes(ax)
    for d in sorted(frame["depth"].unique()):
        sub = frame[frame["depth"] == d].sort_values("n_topics")
        ax.plot(sub["n_topics"], sub["cost"], marker="o", markersize=3, label=f"depth {d}")
    ax.set_xlabel("topics (n)")
    ax.set_ylabel("cost")
    ax.set_title("Cost of topics x pool depth")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig

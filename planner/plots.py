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
  ``pool_judged_share`` (share of the depth-k pool that the qrels judge).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "plot_budget",
    "plot_ci_width",
    "plot_components",
    "plot_curve",
    "plot_generalizability",
    "plot_kendall_tau",
    "plot_paired",
    "plot_panels",
    "plot_pool_depth",
    "plot_power",
    "plot_required_topics",
    "plot_swap_reversal",
]

_LINESTYLES = ["-", "--", ":", "-."]

#: up to this many legend entries the legend sits inside the axes; beyond, to their right
LEGEND_INSIDE = 8
#: rows of one legend column outside the axes
LEGEND_ROWS = 30
#: more line groups than this get no legend (a note names the table instead)
LEGEND_MAX = 60
#: most bar groups whose labels are drawn (beyond, a note names the table)
BAR_LABELS_MAX = 80

_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">"]


def _axes(ax, figsize=(6.4, 4.0)):
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.subplots()


def _colors(n: int) -> list:
    """``n`` distinguishable colours: matplotlib's default cycle up to 10, ``tab20`` up
    to 20, evenly spaced ``turbo`` beyond."""
    from matplotlib import colormaps

    if n <= 10:
        return [f"C{i}" for i in range(n)]
    if n <= 20:
        return [colormaps["tab20"](i) for i in range(n)]
    return [colormaps["turbo"](v) for v in np.linspace(0.05, 0.95, n)]


def _band_alpha(n: int) -> float:
    """Opacity of one group's band: 0.15 for up to 4 groups, less with more, so that
    overlapping bands do not hide the lines."""
    return 0.15 if n <= 4 else max(0.03, 0.6 / n)


def _legend(ax, n: int, *, owned: bool, table: str, handles=None, labels=None) -> None:
    """Legend of ``n`` entries: inside the axes when few, to their right in columns of
    :data:`LEGEND_ROWS` when more (a figure made here grows to keep the axes' size), and
    left out above :data:`LEGEND_MAX`, with a note naming ``table``."""
    if n > LEGEND_MAX:
        ax.text(0.99, 0.99, f"{n} scenarios: legend left out (see {table})", transform=ax.transAxes,
                ha="right", va="top", fontsize="small", color="dimgrey")
        return
    kw = {} if handles is None else {"handles": handles, "labels": labels}
    if n <= LEGEND_INSIDE:
        ax.legend(fontsize="small", **kw)
        return
    ncol = -(-n // LEGEND_ROWS)
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
              ncol=ncol, **kw)
    if owned:
        rows = -(-n // ncol)
        w, h = ax.figure.get_size_inches()
        ax.figure.set_size_inches(w + 2.4 * ncol, max(h, 0.17 * rows + 1.2))


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


def _same_curves(curves: list) -> list:
    """For each curve (a tuple of arrays), the index of the first earlier curve with the same
    values (NaN equal to NaN, within 1e-12 relative), or None: drawn over it, it cannot be
    seen, so the legend names both on the first curve's entry."""
    out: list = []
    for i, c in enumerate(curves):
        first = None
        for j in range(i):
            if out[j] is None and all(a.shape == b.shape and np.allclose(a, b, rtol=1e-12, atol=0.0, equal_nan=True)
                                      for a, b in zip(c, curves[j])):
                first = j
                break
        out.append(first)
    return out


def _merged_labels(names: list, same: list) -> list:
    """Legend labels: a curve identical to an earlier one is left out (``_nolegend_``) and
    named on that one's entry, ``"A (same curve: B; C)"``."""
    labels = list(names)
    for i, j in enumerate(same):
        if j is not None:
            labels[j] = (labels[j] + "; " if "(same curve: " in labels[j] else labels[j] + " (same curve: ") \
                + str(names[i])
            labels[i] = "_nolegend_"
    out = []
    for lab in labels:
        if "(same curve: " in lab:
            lab += ")"
            if len(lab) > 45:       # a long entry would run past the axes: the names on a second line
                lab = lab.replace(" (same curve: ", "\n(same curve: ", 1)
        out.append(lab)
    return out


def plot_curve(frame: pd.DataFrame, y: str, *, by: str | None = "scenario", band: tuple[str, str] | None = None,
               ylabel: str | None = None, title: str | None = None, hline: float | None = None,
               logx: bool = False, ax: Axes | None = None, linestyle: str = "-",
               label_suffix: str = "", legend: bool = True) -> Figure:
    """One line of ``y`` against ``n_topics`` per ``by`` group, with an optional band.

    ``band=(lo, hi)`` names two columns filled between; without it, columns
    ``y + "_lo"`` and ``y + "_hi"`` are used when present.
    """
    _need(frame, ["n_topics", y], "plot_curve")
    owned = ax is None
    fig, ax = _axes(ax)
    if band is None and f"{y}_lo" in frame.columns and f"{y}_hi" in frame.columns:
        band = (f"{y}_lo", f"{y}_hi")
    groups = _groups(frame, by)
    colors = _colors(len(groups))
    sorted_ = [sub.sort_values("n_topics") for _, sub in groups]
    same = _same_curves([(sub["n_topics"].to_numpy(dtype=float), sub[y].to_numpy(dtype=float))
                         for sub in sorted_])
    names = _merged_labels([(str(g) if g is not None else y) for g, _ in groups], same)
    for i, (g, sub) in enumerate(groups):
        sub = sorted_[i]
        x = sub["n_topics"].to_numpy(dtype=float)
        yy = sub[y].to_numpy(dtype=float)
        label = names[i] + label_suffix if names[i] != "_nolegend_" else names[i]
        if not np.isfinite(yy).any():
            label = "_nolegend_"     # drawn (nothing shows) but kept out of the legend: no such curve
        marker = "o" if len(groups) <= 10 else _MARKERS[i % len(_MARKERS)]
        # a curve identical to an earlier one is drawn in that one's colour (its legend entry
        # names both), without a second band
        (line,) = ax.plot(x, yy, marker=marker, markersize=3, linestyle=linestyle, label=label,
                          color=colors[i if same[i] is None else same[i]])
        if same[i] is None and band is not None and band[0] in sub.columns and band[1] in sub.columns:
            lo = sub[band[0]].to_numpy(dtype=float)
            hi = sub[band[1]].to_numpy(dtype=float)
            ok = np.isfinite(lo) & np.isfinite(hi)
            if ok.any():
                ax.fill_between(x[ok], lo[ok], hi[ok], alpha=_band_alpha(len(groups)), color=line.get_color(),
                                linewidth=0)
    if hline is not None:
        ax.axhline(hline, color="grey", linewidth=0.8, linestyle=":")
    if logx:
        from matplotlib import ticker

        ax.set_xscale("log")
        # plain topic counts (10, 20, 50, 100, ...), not powers of ten
        ax.xaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        ax.xaxis.set_minor_formatter(ticker.NullFormatter())
    ax.set_xlabel("topics (n)")
    ax.set_ylabel(ylabel or y)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    named = [ln for ln in ax.get_lines() if not str(ln.get_label()).startswith("_")]
    if legend and named and (len(named) > 1 or by is not None):
        _legend(ax, len(named), owned=owned, table="curves.csv")
    return fig


def _numeric(values) -> np.ndarray:
    """Float values of a column that may hold None."""
    import pandas as pd

    return pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)


def _second_style(fig, ax, frame, by, column: str, first: str, second: str, *, owned: bool,
                  bands: tuple[str, str] | None = None) -> None:
    """Dashed lines (``x`` markers) of ``column`` in the colours of the solid ones drawn by
    :func:`plot_curve`; the legend then names each scenario once, plus two entries
    (black) saying which style is which (or, for one group, the two statistics)."""
    from matplotlib.lines import Line2D

    ax2 = fig.axes[0] if ax is None else ax
    solid = list(ax2.get_lines())
    groups = _groups(frame, by)
    for i, (g, sub) in enumerate(groups):
        sub = sub.sort_values("n_topics")
        color = solid[i].get_color() if i < len(solid) else None
        x = sub["n_topics"].to_numpy(dtype=float)
        ax2.plot(x, sub[column], linestyle="--", marker="x", markersize=3, color=color,
                 label=(str(g) if g is not None else "") + " " + second)
        if bands and bands[0] in sub.columns and bands[1] in sub.columns:
            lo, hi = sub[bands[0]].to_numpy(dtype=float), sub[bands[1]].to_numpy(dtype=float)
            ok = np.isfinite(lo) & np.isfinite(hi)
            if ok.any():
                ax2.fill_between(x[ok], lo[ok], hi[ok], alpha=_band_alpha(len(groups)) * 2 / 3, color=color,
                                 linewidth=0)
    if len(groups) == 1:
        g = groups[0][0]
        names = [first, second] if g is None else [f"{g} {first}", f"{g} {second}"]
        _legend(ax2, 2, owned=owned, table="curves.csv", handles=ax2.get_lines()[-2:], labels=names)
        return
    # groups with neither curve (e.g. a stratified scenario has no pair rates) stay out of the legend,
    # and so do groups whose two curves are both those of an earlier group (named on its entry)
    has = [(i < len(solid) and bool(np.isfinite(np.asarray(solid[i].get_ydata(), dtype=float)).any()))
           or bool(np.isfinite(_numeric(sub[column])).any()) for i, (_, sub) in enumerate(groups)]
    same = _same_curves([(np.asarray(solid[i].get_xdata(), dtype=float), np.asarray(solid[i].get_ydata(), dtype=float),
                          _numeric(sub.sort_values("n_topics")[column])) if i < len(solid) else (np.array([i]),)
                         for i, (_, sub) in enumerate(groups)])
    names = _merged_labels([str(g) for g, _ in groups], same)
    handles = [h for h, k, nm in zip(solid[:len(groups)], has, names) if k and nm != "_nolegend_"] + [
        Line2D([], [], color="black", linestyle="-", marker="o", markersize=3),
        Line2D([], [], color="black", linestyle="--", marker="x", markersize=3)]
    labels = [nm for nm, k in zip(names, has) if k and nm != "_nolegend_"] + [f"solid: {first}", f"dashed: {second}"]
    if len(groups) > LEGEND_MAX:
        _legend(ax2, len(groups), owned=owned, table="curves.csv")
    else:
        _legend(ax2, len(labels), owned=owned, table="curves.csv", handles=handles, labels=labels)


def _target_lines(fig, ax, targets) -> None:
    """Dotted grey reference lines at target values, labelled at the left edge
    (``targets``: label -> values, e.g. ``{"swap": [0.05]}``); drawn last, so legends
    and line counts are not affected."""
    if not targets:
        return
    a = ax if ax is not None else fig.axes[0]
    drawn = [(np.asarray(ln.get_xdata(), dtype=float), np.asarray(ln.get_ydata(), dtype=float))
             for ln in a.get_lines()]
    for lab, values in targets.items():
        for v in values:
            if v is None or not np.isfinite(v):
                continue
            a.axhline(v, color="grey", linewidth=0.8, linestyle=":", zorder=1)
            x = 0.99 if _label_side(a, drawn, v) == "right" else 0.01
            a.text(x, v, f"{lab} target {v:g}", transform=a.get_yaxis_transform(), fontsize="x-small",
                   color="dimgrey", va="bottom", ha="right" if x > 0.5 else "left", zorder=5,
                   bbox={"facecolor": "white", "alpha": 0.75, "edgecolor": "none", "pad": 0.5})


def _label_side(a, lines, v: float) -> str:
    """The end of the x axis ("left" or "right") where the curves keep farthest from the
    reference value ``v``, so that its label is not struck through: curves that rise through a
    target (tau, Erho2) leave the left end free, falling ones (swap rates) the right end."""
    x0, x1 = a.get_xlim()
    span = (x1 - x0) or 1.0
    gap = {}
    for side, keep in (("left", lambda x: x <= x0 + 0.2 * span), ("right", lambda x: x >= x1 - 0.2 * span)):
        d = [np.abs(y[keep(x) & np.isfinite(y)] - v) for x, y in lines if x.size == y.size]
        d = np.concatenate(d) if d else np.array([])
        gap[side] = float(d.min()) if d.size else np.inf
    return "right" if gap["right"] > gap["left"] else "left"


def plot_ci_width(frame: pd.DataFrame, *, ax: Axes | None = None, by: str | None = "scenario",
                  targets=None) -> Figure:
    """Median width of the pairs' 95% intervals against n; band up to the 90th percentile over pairs.
    ``targets``: label -> values drawn as reference lines (as in every curve plot)."""
    band = ("ci_width_median", "ci_width_p90") if "ci_width_p90" in frame.columns else None
    fig = plot_curve(frame, "ci_width_median", by=by, band=band, ax=ax,
                     ylabel="interval width (median over pairs; band to p90)",
                     title="Interval width of a pair's mean difference")
    _target_lines(fig, ax, targets)
    return fig


def plot_swap_reversal(frame: pd.DataFrame, *, ax: Axes | None = None, by: str | None = "scenario",
                       targets=None) -> Figure:
    """Swap rate (solid) and reversal rate (dashed), mean over pairs, against n."""
    owned = ax is None
    fig = plot_curve(frame, "swap_rate_mean", by=by, ax=ax, ylabel="rate (mean over pairs)",
                     title="Swap rate (solid) and reversal rate (dashed)", label_suffix=" swap",
                     legend="reversal_rate_mean" not in frame.columns)
    if "reversal_rate_mean" in frame.columns:
        _second_style(fig, ax, frame, by, "reversal_rate_mean", "swap", "reversal", owned=owned)
    _target_lines(fig, ax, targets)
    return fig


def plot_kendall_tau(frame: pd.DataFrame, *, ax: Axes | None = None, by: str | None = "scenario",
                     targets=None) -> Figure:
    """Expected Kendall tau between rankings of two independent n-topic sets."""
    fig = plot_curve(frame, "kendall_tau_mean", by=by, ax=ax, ylabel="expected Kendall tau",
                     title="Ranking agreement between two topic sets")
    _target_lines(fig, ax, targets)
    return fig


def plot_power(frame: pd.DataFrame, *, ax: Axes | None = None, by: str | None = "scenario",
               target: float | None = None, targets=None) -> Figure:
    """Mean power of the paired t-test over pairs at the study's min_diff, against n
    (``target``: one power target, the same as ``targets={"power": [target]}``)."""
    fig = plot_curve(frame, "power_mean", by=by, ax=ax, ylabel="power (mean over pairs)",
                     title="Power of the paired t-test")
    _target_lines(fig, ax, {**({"power": [target]} if target is not None else {}), **(targets or {})})
    return fig


def plot_generalizability(frame: pd.DataFrame, *, ax: Axes | None = None, by: str | None = "scenario",
                          targets=None) -> Figure:
    """D-study Erho2 (solid) and Phi (dashed) against n, with their intervals as bands
    (columns ``erho2_lo/erho2_hi``, ``phi_lo/phi_hi`` when present). The coefficients rise
    steeply and then flatten, so when the topic counts span a factor of 10 or more the x axis
    is logarithmic (on a linear axis the curves meet their targets in the first tenth of it)."""
    owned = ax is None
    _need(frame, ["n_topics"], "plot_generalizability")
    n = frame["n_topics"].to_numpy(dtype=float)
    n = n[np.isfinite(n) & (n > 0)]
    logx = bool(n.size) and n.max() >= 10 * n.min()
    fig = plot_curve(frame, "erho2", by=by, ax=ax, ylabel="coefficient",
                     title="Generalizability Erho2 (solid) and dependability Phi (dashed)",
                     label_suffix=" Erho2", legend="phi" not in frame.columns, logx=logx)
    if "phi" in frame.columns:
        _second_style(fig, ax, frame, by, "phi", "Erho2", "Phi", owned=owned, bands=("phi_lo", "phi_hi"))
    _target_lines(fig, ax, targets)
    return fig


def plot_panels(frame: pd.DataFrame, plot, panels, *, by: str = "scenario", ncols: int = 2,
                **kwargs) -> Figure:
    """One panel per value of ``panels`` (a mapping ``by`` value -> panel name, e.g.
    scenario -> collection), each drawn by ``plot`` (one of the curve functions above, e.g.
    :func:`plot_kendall_tau`) on the rows of that panel, with a shared y axis. The panel
    name is the panel's title and is cut from the front of the group labels
    (``"dl19-passage, AP, none"`` -> ``"AP, none"``); the plot's own title becomes the
    figure's. Rows whose ``by`` value has no panel are left out. ``kwargs`` go to ``plot``.
    With one panel this is ``plot`` on that panel's rows, unchanged (without any, on all rows)."""
    import pandas as pd
    from matplotlib.figure import Figure

    _need(frame, [by], "plot_panels")
    names = pd.Series([panels.get(v) for v in frame[by]], index=frame.index, dtype=object)
    order = [p for p in dict.fromkeys(names) if p is not None]
    if len(order) <= 1:
        return plot(frame if not order else frame[names == order[0]], **kwargs)
    ncols = max(1, min(int(ncols), len(order)))
    nrows = -(-len(order) // ncols)
    fig = Figure(figsize=(6.4 * ncols, 4.0 * nrows + 0.4), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, sharey=True, squeeze=False)).ravel()
    title = ""
    for ax, name in zip(axes, order):
        sub = frame[names == name].copy()
        prefix = f"{name}, "
        sub[by] = [str(v)[len(prefix):] if str(v).startswith(prefix) and len(str(v)) > len(prefix) else v
                   for v in sub[by]]
        plot(sub, ax=ax, **kwargs)
        title = ax.get_title() or title
        ax.set_title(str(name))
        ax.yaxis.set_tick_params(labelleft=True)
    for ax in axes[len(order):]:
        ax.set_visible(False)
    if title:
        fig.suptitle(title)
    return fig


def plot_required_topics(frame: pd.DataFrame, *, ax: Axes | None = None) -> Figure:
    """Horizontal bars: topics each scenario needs for each target (``n_topics``; NaN = not reached),
    with the 95% interval on n as error bars where the frame has ``lower`` and ``upper``."""
    _need(frame, ["scenario", "target", "n_topics"], "plot_required_topics")
    scen = list(dict.fromkeys(frame["scenario"]))
    targets = list(dict.fromkeys(frame["target"].astype(str)))
    fig, ax = _axes(ax, figsize=(6.4, _bar_height(0.45 * len(scen) * max(1, len(targets)))))
    labelled = len(scen) <= BAR_LABELS_MAX
    h = 0.8 / max(1, len(targets))
    for j, tg in enumerate(targets):
        sub = frame[frame["target"].astype(str) == tg].set_index("scenario")
        import pandas as pd

        need = pd.to_numeric(sub["n_topics"], errors="coerce")        # None (not reached) -> NaN
        vals = np.array([float(need.get(s, np.nan)) if s in sub.index else np.nan for s in scen])
        y = np.arange(len(scen)) + j * h
        shown = np.where(np.isfinite(vals), vals, 0.0)
        bars = ax.barh(y, shown, height=h, label=tg)
        if {"lower", "upper"} <= set(sub.columns):
            # the 95% interval on n where the target has one (an unbounded end is left out)
            num = {c: pd.to_numeric(sub[c], errors="coerce") for c in ("lower", "upper")}   # None -> NaN
            lo = np.array([float(num["lower"].get(s, np.nan)) if s in sub.index else np.nan for s in scen])
            hi = np.array([float(num["upper"].get(s, np.nan)) if s in sub.index else np.nan for s in scen])
            ok = np.isfinite(vals) & np.isfinite(lo) & np.isfinite(hi)
            if ok.any():
                ax.errorbar(vals[ok], y[ok], xerr=[vals[ok] - lo[ok], hi[ok] - vals[ok]], fmt="none",
                            ecolor="black", elinewidth=0.8, capsize=2, color=bars.patches[0].get_facecolor())
        for yi, v in zip(y, vals):
            if labelled:
                ax.text(v if np.isfinite(v) else 0, yi, f" {int(v)}" if np.isfinite(v) else " not reached",
                        va="center", fontsize="small")
    _bar_labels(ax, np.arange(len(scen)) + h * (len(targets) - 1) / 2, scen, "targets.csv")
    ax.set_xlabel("topics needed")
    ax.set_title("Topics needed per scenario and target")
    ax.legend(fontsize="small")
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def _bar_height(bars_inches: float) -> float:
    """Figure height for horizontal bars: their share plus room for titles, at most 40 inches."""
    return min(40.0, max(2.5, bars_inches + 1.2))


def _bar_labels(ax, ticks, names, table: str) -> None:
    """Scenario names on the bars' axis, top down; above :data:`BAR_LABELS_MAX` bars they
    would overlap, so a note names ``table`` instead."""
    if len(names) <= BAR_LABELS_MAX:
        ax.set_yticks(ticks)
        ax.set_yticklabels([str(s) for s in names], fontsize="small")
    else:
        ax.set_yticks([])
        ax.set_ylabel(f"{len(names)} scenarios (top to bottom in {table} order)")
    ax.invert_yaxis()


def plot_components(frame: pd.DataFrame, *, ax: Axes | None = None) -> Figure:
    """Stacked bars of the variance components (system, topic, residual) per scenario."""
    _need(frame, ["scenario", "var_s", "var_t", "var_e"], "plot_components")
    fig, ax = _axes(ax, figsize=(6.4, _bar_height(0.4 * len(frame))))
    y = np.arange(len(frame))
    left = np.zeros(len(frame))
    for col, lab in (("var_s", "systems"), ("var_t", "topics"), ("var_e", "residual (s x t)")):
        v = frame[col].to_numpy(dtype=float)
        ax.barh(y, v, left=left, label=lab)
        left = left + np.nan_to_num(v)
    _bar_labels(ax, y, list(frame["scenario"]), "components.csv")
    ax.set_xlabel("variance")
    ax.set_title("Variance components")
    ax.legend(fontsize="small")
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def plot_pool_depth(frame: pd.DataFrame, *, ax: Axes | None = None) -> Figure:
    """Judgments per topic (distinct documents in the depth-k pool) against pool depth k;
    the share of the depth-k pool that the qrels judge on a second axis when given."""
    _need(frame, ["depth", "judgments_per_topic"], "plot_pool_depth")
    fig, ax = _axes(ax)
    # pool statistics do not depend on the measure: one row per depth
    f = frame.drop_duplicates("depth").sort_values("depth")
    ax.plot(f["depth"], f["judgments_per_topic"], marker="o", label="judgments per topic")
    ax.set_xlabel("pool depth k")
    ax.set_ylabel("judgments per topic (mean)")
    ax.set_title("Judgments against pool depth")
    ax.grid(True, alpha=0.3)
    if "pool_judged_share" in f.columns:
        ax2 = ax.twinx()
        ax2.plot(f["depth"], f["pool_judged_share"], marker="s", linestyle="--", color="tab:red",
                 label="share of the depth-k pool judged in the qrels")
        ax2.set_ylabel("judged share of the pool")
        ax2.set_ylim(0, 1.05)
        lines = ax.get_lines() + ax2.get_lines()
        # below the axes: inside, the rising and the falling line leave no corner free
        ax.legend(lines, [ln.get_label() for ln in lines], fontsize="small", loc="upper center",
                  bbox_to_anchor=(0.5, -0.15), ncol=2, frameon=False)
    return fig


def plot_budget(frame: pd.DataFrame, *, ax: Axes | None = None, needed: pd.DataFrame | None = None) -> Figure:
    """Total cost against topics, one line per pool depth (``depth, n_topics, cost``).

    ``needed`` (``tables/pool.csv``: ``depth, n_topics_needed, total_cost``, optionally
    ``scenario``) marks what each depth needs for the targets: a large open marker in the
    depth's colour at (topics needed, their cost), one marker shape per scenario."""
    _need(frame, ["depth", "n_topics", "cost"], "plot_budget")
    fig, ax = _axes(ax)
    colour = {}
    for d in sorted(frame["depth"].unique()):
        sub = frame[frame["depth"] == d].sort_values("n_topics")
        (line,) = ax.plot(sub["n_topics"], sub["cost"], marker="o", markersize=3, label=f"depth {d}")
        colour[d] = line.get_color()
    if needed is not None and {"depth", "n_topics_needed", "total_cost"} <= set(needed.columns):
        import pandas as pd

        nd = needed.assign(n=pd.to_numeric(needed["n_topics_needed"], errors="coerce"),
                           c=pd.to_numeric(needed["total_cost"], errors="coerce"))
        nd = nd[nd["n"].notna() & nd["c"].notna() & nd["depth"].notna()]
        groups = _groups(nd, "scenario" if "scenario" in nd.columns else None)
        for i, (g, sub) in enumerate(groups):
            shape = _MARKERS[(i + 1) % len(_MARKERS)]
            for r in sub.itertuples(index=False):
                ax.plot([r.n], [r.c], linestyle="none", marker=shape, markersize=9, markerfacecolor="none",
                        markeredgewidth=1.5, color=colour.get(r.depth, "black"), zorder=4)
            ax.plot([], [], linestyle="none", marker=shape, markersize=8, markerfacecolor="none", color="black",
                    label=f"needed: {g}" if g is not None else "topics needed")
    ax.set_xlabel("topics (n)")
    ax.set_ylabel("cost")
    ax.set_title("Cost of topics x pool depth")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def plot_paired(frame: pd.DataFrame, *, ax: Axes | None = None) -> Figure:
    """Measures compared on the same topics (``tables/paired.csv``): for each pair, the extra
    topics the measure needing more needs (``extra``, a dot) with the 95% interval of the
    per-resample difference (``extra_lower`` to ``extra_upper``; an unbounded end runs to the
    edge with an arrow), and a line at 0. Rows whose numbers are equal (equivalent targets
    such as ``swap_rate 0.05`` and ``kendall_tau 0.9``) are drawn once, naming both targets."""
    _need(frame, ["collection", "target", "value", "measure_fewer", "measure_more", "extra",
                  "extra_lower", "extra_upper", "verdict"], "plot_paired")
    rows: dict[tuple, list[str]] = {}
    for r in frame.itertuples(index=False):
        key = (str(r.collection), str(r.measure_more), str(r.measure_fewer),
               *(None if v is None or not np.isfinite(float(v)) else float(v)
                 for v in (r.extra, r.extra_lower, r.extra_upper)), str(r.verdict))
        rows.setdefault(key, []).append(f"{r.target} {float(r.value):g}")
    keys = list(rows)
    owned = ax is None
    fig, ax = _axes(ax, figsize=(8.0, _bar_height(0.35 * len(keys)) + 0.6))
    # what every row shares goes to the title, so that the labels stay short
    tsets = {" = ".join(v) for v in rows.values()}
    colls = {k[0] for k in keys}
    common = [next(iter(tsets))] if len(tsets) == 1 else []
    finite = [v for k in keys for v in k[3:6] if v is not None] + [0.0]
    lo_edge, hi_edge = min(finite), max(finite)
    pad = 0.08 * max(1.0, hi_edge - lo_edge)
    lo_edge, hi_edge = lo_edge - pad, hi_edge + pad
    labels = []
    for i, k in enumerate(keys):
        coll, more, fewer, extra, lo, hi, verdict = k
        colour = "C3" if not str(verdict).startswith("not separated") else "C0"
        a = lo_edge if lo is None else lo
        b = hi_edge if hi is None else hi
        ax.plot([a, b], [i, i], color=colour, lw=2, solid_capstyle="butt")
        for end, val, edge in ((a, lo, lo_edge), (b, hi, hi_edge)):
            if val is None:          # unbounded: an arrow at the edge
                ax.annotate("", xy=(edge, i), xytext=(edge - np.sign(edge) * pad, i),
                            arrowprops={"arrowstyle": "->", "color": colour})
        if extra is not None:
            ax.plot([extra], [i], "o", color=colour)
        extra_lab = [] if len(colls) == 1 else [coll]
        extra_lab += [] if common else [" = ".join(rows[k])]
        labels.append(f"{more} - {fewer}" + (f" ({'; '.join(extra_lab)})" if extra_lab else ""))
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlim(lo_edge, hi_edge)
    _bar_labels(ax, np.arange(len(keys)), labels, "paired.csv")
    ax.set_xlabel("extra topics the first measure needs (dot); 95% interval over shared resamples (line)")
    sub = "; ".join(([next(iter(colls))] if len(colls) == 1 else []) + common)
    ax.set_title("Measures compared on the same topics" + (f"\n({sub})" if sub else ""), fontsize="medium")
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color="C3", lw=2), Line2D([], [], color="C0", lw=2)]
    names = ["separated (interval excludes 0)", "not separated"]
    if owned:                    # below the axes, outside them (constrained layout)
        fig.legend(handles=handles, labels=names, fontsize="small", loc="outside lower center", ncol=2)
    else:
        ax.legend(handles=handles, labels=names, fontsize="small")
    ax.grid(True, axis="x", alpha=0.3)
    return fig

"""Plots of study results: every ``plot_*(..., ax=None)`` returns a matplotlib Figure.

Functions draw on ``ax`` when given (and return ``ax.figure``), else on a new
:class:`matplotlib.figure.Figure` that is not registered with pyplot, so nothing
is shown and no GUI backend is needed (the figures render with Agg when saved).

Inputs are pandas frames with the columns the study writes to its CSV tables:

- curves (``curves.csv``, or :meth:`planner.simulate.Curve.to_frame`): ``scenario, n_topics,
  swap_rate_mean, reversal_rate_mean, kendall_tau_mean, ci_width_median, ci_width_p90,
  power_mean`` (optional ``<column>_lo`` / ``<column>_hi`` pairs are drawn as bands);
- required topics (``targets.csv``): ``scenario, target, value, n_topics``;
- variance components (``components.csv``): ``scenario, var_s, var_t, var_e``;
- pool depth (``pool.csv``): ``depth, judgments_per_topic`` and optionally
  ``pool_judged_share`` (share of the depth-k pool that the qrels judge).

matplotlib is imported inside the functions that draw, not here: importing it takes about a
second, and ``planner.report`` (and so ``planner.run_study(..., write=False)``) should not pay
that unless a figure is drawn.

Examples
--------
>>> import planner
>>> from planner.report import figures
>>> scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
>>> frame = planner.predict(scores, topics=[10, 25, 50], method="analytic").to_frame()
>>> fig = figures.plot_kendall_tau(frame)
>>> fig.axes[0].get_ylabel()
'expected Kendall tau'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..errors import ParameterError

if TYPE_CHECKING:  # pragma: no cover
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
    "plot_selection",
    "plot_swap_reversal",
]

#: up to this many legend entries the legend sits inside the axes; beyond, to their right
LEGEND_INSIDE = 8
#: rows of one legend column outside the axes
LEGEND_ROWS = 30
#: more line groups than this get no legend (a note names the table instead)
LEGEND_MAX = 60
#: most bar groups whose labels are drawn (beyond, a note names the table)
BAR_LABELS_MAX = 80
#: the paired table's verdicts whose interval excludes 0 (drawn in EMPHASIS, vermillion); every other verdict
#: ("not separated", "not separated (order not stable)") is drawn blue
SEPARATED = frozenset({"separated", "reversed"})

_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">"]
_NOLEGEND = "_nolegend_"
_SAME = " (same curve: "


#: the colours every figure draws with, in order: Okabe and Ito's palette, which readers with
#: any common colour-vision deficiency can tell apart (yellow and black last: thin on white,
#: and black is the key entries' colour)
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
#: the colour of what is "separated" / warns (vermillion) and of what is not (blue)
EMPHASIS, PLAIN = PALETTE[3], PALETTE[0]
#: the legend font of a figure of several panels (shown smaller in the page)
PANEL_LEGEND_SIZE = "medium"


def _axes(ax: Axes | None, figsize: tuple[float, float] = (6.4, 4.0)) -> tuple[Figure, Axes]:
    if ax is not None:
        return ax.figure, ax  # type: ignore[return-value]  # a SubFigure's axes are not drawn here
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    ax = fig.subplots()
    ax.set_prop_cycle(color=list(PALETTE))
    return fig, ax


def _colors(n: int) -> list:
    """``n`` distinguishable colours: :data:`PALETTE` (safe for colour-blind readers) up to its
    length, ``tab20`` up to 20, evenly spaced ``turbo`` beyond (there the legend's order and the
    markers have to tell the lines apart)."""
    from matplotlib import colormaps

    if n <= len(PALETTE):
        return list(PALETTE[:n])
    if n <= 20:
        return [colormaps["tab20"](i) for i in range(n)]
    return [colormaps["turbo"](v) for v in np.linspace(0.05, 0.95, n)]


def _band_alpha(n: int) -> float:
    """Opacity of one group's band: 0.15 for up to 4 groups, less with more, so that
    overlapping bands do not hide the lines."""
    return 0.15 if n <= 4 else max(0.03, 0.6 / n)


def _legend(ax: Axes, n: int, *, owned: bool, table: str, handles: list | None = None,
            labels: list | None = None) -> None:
    """Legend of ``n`` entries: inside the axes when few, to their right in columns of
    :data:`LEGEND_ROWS` when more (a figure made here grows to keep the axes' size), and
    left out above :data:`LEGEND_MAX`, with a note naming ``table``."""
    if n > LEGEND_MAX:
        ax.text(0.99, 0.99, f"{n} scenarios: legend left out (see {table})", transform=ax.transAxes,
                ha="right", va="top", fontsize="small", color="dimgrey")
        return
    kw: dict[str, Any] = {} if handles is None else {"handles": handles, "labels": labels}
    if n <= LEGEND_INSIDE:
        ax.legend(fontsize="small", **kw)
        return
    ncol = -(-n // LEGEND_ROWS)
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0,
              ncol=ncol, **kw)
    if owned:
        rows = -(-n // ncol)
        w, h = ax.figure.get_size_inches()  # type: ignore[union-attr]  # a Figure here
        ax.figure.set_size_inches(w + 2.4 * ncol, max(h, 0.17 * rows + 1.2))  # type: ignore[union-attr]


def _need(frame: pd.DataFrame, cols: Sequence[str], what: str) -> None:
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise ParameterError(f"{what} needs column(s) {', '.join(missing)}", parameter="frame")


def _groups(frame: pd.DataFrame, by: str | None) -> list[tuple[Any, pd.DataFrame]]:
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
    also: dict[int, list[str]] = {}
    for i, j in enumerate(same):
        if j is not None:
            also.setdefault(j, []).append(str(names[i]))
    out = []
    for i, name in enumerate(names):
        if same[i] is not None:
            out.append(_NOLEGEND)
        elif i in also:
            lab = f"{name}{_SAME}{'; '.join(also[i])})"
            # a long entry would run past the axes: the names on a second line
            out.append(lab.replace(_SAME, "\n" + _SAME.lstrip(), 1) if len(lab) > 45 else lab)
        else:
            out.append(name)
    return out


def _fill_band(ax: Axes, x: np.ndarray, sub: pd.DataFrame, band: tuple[str, str], alpha: float,
               color: Any) -> None:
    """Fill between the band's two columns where both are finite."""
    if band[0] not in sub.columns or band[1] not in sub.columns:
        return
    lo, hi = sub[band[0]].to_numpy(dtype=float), sub[band[1]].to_numpy(dtype=float)
    ok = np.isfinite(lo) & np.isfinite(hi)
    if ok.any():
        ax.fill_between(x[ok], lo[ok], hi[ok], alpha=alpha, color=color, linewidth=0)


def _log_topics_axis(ax: Axes) -> None:
    """A logarithmic x axis labelled with plain topic counts (10, 20, 50, 100, ...)."""
    from matplotlib import ticker

    ax.set_xscale("log")
    ax.xaxis.set_major_locator(ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(ticker.NullFormatter())


def _curve_lines(ax: Axes, groups: list, y: str, band: tuple[str, str] | None, linestyle: str,
                 label_suffix: str) -> None:
    """One line of ``y`` per group; a group identical to an earlier one shares its colour and
    legend entry, without a second band."""
    colors = _colors(len(groups))
    sorted_ = [sub.sort_values("n_topics") for _, sub in groups]
    same = _same_curves([(sub["n_topics"].to_numpy(dtype=float), sub[y].to_numpy(dtype=float))
                         for sub in sorted_])
    names = _merged_labels([(str(g) if g is not None else y) for g, _ in groups], same)
    for i, sub in enumerate(sorted_):
        x = sub["n_topics"].to_numpy(dtype=float)
        yy = sub[y].to_numpy(dtype=float)
        label = names[i] + label_suffix if names[i] != _NOLEGEND else names[i]
        if not np.isfinite(yy).any():
            label = _NOLEGEND     # drawn (nothing shows) but kept out of the legend: no such curve
        marker = "o" if len(groups) <= 10 else _MARKERS[i % len(_MARKERS)]
        (line,) = ax.plot(x, yy, marker=marker, markersize=3, linestyle=linestyle, label=label,
                          color=colors[i if same[i] is None else same[i]])
        if same[i] is None and band is not None:
            _fill_band(ax, x, sub, band, _band_alpha(len(groups)), line.get_color())


def plot_curve(frame: pd.DataFrame, y: str, *, by: str | None = "scenario", band: tuple[str, str] | None = None,
               ylabel: str | None = None, title: str | None = None, hline: float | None = None,
               logx: bool = False, ax: Axes | None = None, linestyle: str = "-",
               label_suffix: str = "", legend: bool = True) -> Figure:
    """One line of ``y`` against ``n_topics`` per ``by`` group, with an optional band.

    Parameters
    ----------
    frame : DataFrame
        Columns ``n_topics``, ``y`` and (optionally) ``by`` and the band's.
    y : str
        The column drawn.
    by : str or None, optional
        One line per value of this column (one line when None or absent).
    band : (str, str), optional
        Two columns filled between; without it, ``y + "_lo"`` and ``y + "_hi"`` when present.
    ylabel, title : str, optional
        Axis label (default ``y``) and title.
    hline : float, optional
        A dotted reference line.
    logx : bool, optional
        Logarithmic topic axis.
    ax : matplotlib Axes, optional
        Draw here (else on a new Figure).
    linestyle, label_suffix : str, optional
        The lines' style, and a suffix to their legend labels.
    legend : bool, optional
        Draw a legend.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import planner
    >>> from planner.report.figures import plot_curve
    >>> scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> frame = planner.predict(scores, topics=[10, 25, 50], method="analytic").to_frame()
    >>> fig = plot_curve(frame, "swap_rate_mean", hline=0.05)
    >>> len(fig.axes[0].get_lines())        # the curve and the reference line
    2
    """
    _need(frame, ["n_topics", y], "plot_curve")
    owned = ax is None
    fig, ax = _axes(ax)
    if band is None and f"{y}_lo" in frame.columns and f"{y}_hi" in frame.columns:
        band = (f"{y}_lo", f"{y}_hi")
    _curve_lines(ax, _groups(frame, by), y, band, linestyle, label_suffix)
    if hline is not None:
        ax.axhline(hline, color="grey", linewidth=0.8, linestyle=":")
    if logx:
        _log_topics_axis(ax)
    ax.set_xlabel("topics (n)")
    ax.set_ylabel(ylabel or y)
    if title:
        ax.set_title(title)
    ax.grid(True, alpha=0.3)
    named = [ln for ln in ax.get_lines() if not str(ln.get_label()).startswith("_")]
    if legend and named and (len(named) > 1 or by is not None):
        _legend(ax, len(named), owned=owned, table="curves.csv")
    return fig


def _numeric(values: Any) -> np.ndarray:
    """Float values of a column that may hold None."""
    return pd.to_numeric(pd.Series(values), errors="coerce").to_numpy(dtype=float)


def _second_lines(ax: Axes, groups: list, column: str, second: str, solid: list,
                  bands: tuple[str, str] | None) -> None:
    """Dashed lines (``x`` markers) of ``column``, each in its solid line's colour."""
    for i, (g, sub) in enumerate(groups):
        sub = sub.sort_values("n_topics")
        color = solid[i].get_color() if i < len(solid) else None
        x = sub["n_topics"].to_numpy(dtype=float)
        ax.plot(x, sub[column], linestyle="--", marker="x", markersize=3, color=color,
                label=(str(g) if g is not None else "") + " " + second)
        if bands:
            _fill_band(ax, x, sub, bands, _band_alpha(len(groups)) * 2 / 3, color)


def _second_legend(ax: Axes, groups: list, column: str, first: str, second: str, solid: list,
                   owned: bool) -> None:
    """Each scenario once (groups with neither curve, e.g. a stratified scenario without pair
    rates, and groups whose two curves are both an earlier group's are left out), and two
    black entries saying which style is which."""
    from matplotlib.lines import Line2D

    has = [(i < len(solid) and bool(np.isfinite(np.asarray(solid[i].get_ydata(), dtype=float)).any()))
           or bool(np.isfinite(_numeric(sub[column])).any()) for i, (_, sub) in enumerate(groups)]
    same = _same_curves([(np.asarray(solid[i].get_xdata(), dtype=float), np.asarray(solid[i].get_ydata(), dtype=float),
                          _numeric(sub.sort_values("n_topics")[column])) if i < len(solid) else (np.array([i]),)
                         for i, (_, sub) in enumerate(groups)])
    names = _merged_labels([str(g) for g, _ in groups], same)
    handles = [h for h, k, nm in zip(solid[:len(groups)], has, names) if k and nm != _NOLEGEND] + [
        Line2D([], [], color="black", linestyle="-", marker="o", markersize=3),
        Line2D([], [], color="black", linestyle="--", marker="x", markersize=3)]
    labels = [nm for nm, k in zip(names, has) if k and nm != _NOLEGEND] + [f"solid: {first}", f"dashed: {second}"]
    if len(groups) > LEGEND_MAX:
        _legend(ax, len(groups), owned=owned, table="curves.csv")
    else:
        _legend(ax, len(labels), owned=owned, table="curves.csv", handles=handles, labels=labels)


def _second_style(fig: Figure, ax: Axes | None, frame: pd.DataFrame, by: str | None, column: str, first: str,
                  second: str, *, owned: bool, bands: tuple[str, str] | None = None) -> None:
    """Dashed lines (``x`` markers) of ``column`` in the colours of the solid ones drawn by
    :func:`plot_curve`; the legend then names each scenario once, plus two entries
    (black) saying which style is which (or, for one group, the two statistics)."""
    ax2 = fig.axes[0] if ax is None else ax
    solid = list(ax2.get_lines())
    groups = _groups(frame, by)
    _second_lines(ax2, groups, column, second, solid, bands)
    if len(groups) == 1:
        g = groups[0][0]
        names = [first, second] if g is None else [f"{g} {first}", f"{g} {second}"]
        _legend(ax2, 2, owned=owned, table="curves.csv", handles=ax2.get_lines()[-2:], labels=names)
        return
    _second_legend(ax2, groups, column, first, second, solid, owned)


def _target_lines(fig: Figure, ax: Axes | None, targets: Mapping[str, Sequence[float]] | None) -> None:
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


def _label_side(a: Axes, lines: list[tuple[np.ndarray, np.ndarray]], v: float) -> str:
    """The end of the x axis ("left" or "right") where the curves keep farthest from the
    reference value ``v``, so that its label is not struck through: curves that rise through a
    target (tau, Erho2) leave the left end free, falling ones (swap rates) the right end."""
    x0, x1 = a.get_xlim()
    span = (x1 - x0) or 1.0
    gap = {}
    for side, keep in (("left", lambda x: x <= x0 + 0.2 * span), ("right", lambda x: x >= x1 - 0.2 * span)):
        parts = [np.abs(y[keep(x) & np.isfinite(y)] - v) for x, y in lines if x.size == y.size]
        d = np.concatenate(parts) if parts else np.array([])
        gap[side] = float(d.min()) if d.size else np.inf
    return "right" if gap["right"] > gap["left"] else "left"


def plot_ci_width(frame: pd.DataFrame, *, ax: Axes | None = None, by: str | None = "scenario",
                  targets: Mapping[str, Sequence[float]] | None = None) -> Figure:
    """Median width of the pairs' 95% intervals against n; band up to the 90th percentile over pairs.

    Parameters
    ----------
    frame : DataFrame
        Curves: ``n_topics``, ``ci_width_median`` and optionally ``ci_width_p90`` and ``by``.
    ax : matplotlib Axes, optional
        Draw here (else on a new Figure).
    by : str or None, optional
        One line per value of this column.
    targets : mapping of str to list of float, optional
        Label -> values drawn as reference lines (as in every curve plot).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import planner
    >>> scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> frame = planner.predict(scores, topics=[10, 25, 50], method="analytic").to_frame()
    >>> from planner.report.figures import plot_ci_width
    >>> fig = plot_ci_width(frame, targets={"width": [0.1]})
    >>> fig.axes[0].texts[0].get_text()
    'width target 0.1'
    """
    band = ("ci_width_median", "ci_width_p90") if "ci_width_p90" in frame.columns else None
    fig = plot_curve(frame, "ci_width_median", by=by, band=band, ax=ax,
                     ylabel="interval width (median over pairs; band to p90)",
                     title="Interval width of a pair's mean difference")
    _target_lines(fig, ax, targets)
    return fig


def plot_swap_reversal(frame: pd.DataFrame, *, ax: Axes | None = None, by: str | None = "scenario",
                       targets: Mapping[str, Sequence[float]] | None = None) -> Figure:
    """Swap rate (solid) and reversal rate (dashed), mean over pairs, against n.

    Parameters and Returns as :func:`plot_ci_width` (columns ``swap_rate_mean`` and
    optionally ``reversal_rate_mean``).

    Examples
    --------
    >>> import planner
    >>> scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> frame = planner.predict(scores, topics=[10, 25, 50], method="analytic").to_frame()
    >>> from planner.report.figures import plot_swap_reversal
    >>> fig = plot_swap_reversal(frame)
    >>> [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    ['swap', 'reversal']
    """
    owned = ax is None
    fig = plot_curve(frame, "swap_rate_mean", by=by, ax=ax, ylabel="rate (mean over pairs)",
                     title="Swap rate (solid) and reversal rate (dashed)", label_suffix=" swap",
                     legend="reversal_rate_mean" not in frame.columns)
    if "reversal_rate_mean" in frame.columns:
        _second_style(fig, ax, frame, by, "reversal_rate_mean", "swap", "reversal", owned=owned)
    _target_lines(fig, ax, targets)
    return fig


def plot_kendall_tau(frame: pd.DataFrame, *, ax: Axes | None = None, by: str | None = "scenario",
                     targets: Mapping[str, Sequence[float]] | None = None) -> Figure:
    """Expected Kendall tau between rankings of two independent n-topic sets.

    Parameters and Returns as :func:`plot_ci_width` (column ``kendall_tau_mean``).

    Examples
    --------
    >>> import planner
    >>> scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> frame = planner.predict(scores, topics=[10, 25, 50], method="analytic").to_frame()
    >>> from matplotlib.figure import Figure
    >>> from planner.report.figures import plot_kendall_tau
    >>> ax = Figure().subplots()
    >>> plot_kendall_tau(frame, ax=ax) is ax.figure
    True
    """
    fig = plot_curve(frame, "kendall_tau_mean", by=by, ax=ax, ylabel="expected Kendall tau",
                     title="Ranking agreement between two topic sets")
    _target_lines(fig, ax, targets)
    return fig


def plot_power(frame: pd.DataFrame, *, ax: Axes | None = None, by: str | None = "scenario",
               target: float | None = None, targets: Mapping[str, Sequence[float]] | None = None) -> Figure:
    """Mean power of the paired t-test over pairs at the study's min_diff, against n.

    Parameters and Returns as :func:`plot_ci_width` (column ``power_mean``); ``target``: one
    power target, the same as ``targets={"power": [target]}``.

    Examples
    --------
    >>> import planner
    >>> scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> frame = planner.predict(scores, topics=[10, 25, 50], method="analytic").to_frame()
    >>> from planner.report.figures import plot_power
    >>> plot_power(frame, target=0.8).axes[0].texts[0].get_text()
    'power target 0.8'
    """
    fig = plot_curve(frame, "power_mean", by=by, ax=ax, ylabel="power (mean over pairs)",
                     title="Power of the paired t-test")
    _target_lines(fig, ax, {**({"power": [target]} if target is not None else {}), **(targets or {})})
    return fig


def plot_generalizability(frame: pd.DataFrame, *, ax: Axes | None = None, by: str | None = "scenario",
                          targets: Mapping[str, Sequence[float]] | None = None) -> Figure:
    """D-study Erho2 (solid) and Phi (dashed) against n, with their intervals as bands.

    Bands from columns ``erho2_lo/erho2_hi``, ``phi_lo/phi_hi`` when present. The coefficients
    rise steeply and then flatten, so when the topic counts span a factor of 10 or more the x
    axis is logarithmic (on a linear axis the curves meet their targets in the first tenth of it).
    Parameters and Returns as :func:`plot_ci_width` (columns ``erho2`` and optionally ``phi``).

    Examples
    --------
    >>> import planner
    >>> scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> frame = planner.predict(scores, topics=[10, 25, 50], method="analytic").to_frame()
    >>> from planner.report.figures import plot_generalizability
    >>> fig = plot_generalizability(frame)
    >>> fig.axes[0].get_xscale()          # 10 to 50 topics: a linear axis
    'linear'
    """
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


def _strip_panel(values: pd.Series, name: str) -> list:
    """Cut ``"<name>, "`` from the front of each label (unless nothing would be left)."""
    prefix = f"{name}, "
    return [str(v)[len(prefix):] if str(v).startswith(prefix) and len(str(v)) > len(prefix) else v
            for v in values]


def plot_panels(frame: pd.DataFrame, plot: Callable[..., Figure], panels: Mapping[Any, str], *,
                by: str = "scenario", ncols: int = 2, **kwargs: Any) -> Figure:
    """One panel per value of ``panels``, each drawn by ``plot`` on that panel's rows.

    Parameters
    ----------
    frame : DataFrame
        The rows to draw, with column ``by``.
    plot : callable
        One of the curve functions (e.g. :func:`plot_kendall_tau`).
    panels : mapping
        ``by`` value -> panel name (e.g. scenario -> collection). Rows whose ``by`` value has
        no panel are left out.
    by : str, optional
        The column ``panels`` maps.
    ncols : int, optional
        Panels per row.
    **kwargs
        Passed to ``plot``.

    Returns
    -------
    matplotlib.figure.Figure
        The panels share the y axis. The panel name is the panel's title and is cut from the
        front of the group labels (``"dl19-passage, AP, none"`` -> ``"AP, none"``); the plot's
        own title becomes the figure's. With one panel this is ``plot`` on that panel's rows,
        unchanged (without any, on all rows).

    Examples
    --------
    >>> import planner
    >>> scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> frame = planner.predict(scores, topics=[10, 25, 50], method="analytic").to_frame()
    >>> import pandas as pd
    >>> from planner.report.figures import plot_panels, plot_kendall_tau
    >>> two = pd.concat([frame.assign(scenario="dl19, a"), frame.assign(scenario="dl20, a")])
    >>> fig = plot_panels(two, plot_kendall_tau, {"dl19, a": "dl19", "dl20, a": "dl20"})
    >>> [ax.get_title() for ax in fig.axes]
    ['dl19', 'dl20']
    """
    from matplotlib.figure import Figure

    _need(frame, [by], "plot_panels")
    names = pd.Series([panels.get(v) for v in frame[by]], index=frame.index, dtype=object)
    order = [p for p in dict.fromkeys(names) if p is not None]
    if len(order) <= 1:
        return plot(frame if not order else frame[names == order[0]], **kwargs)
    ncols = max(1, min(int(ncols), len(order)))
    nrows = -(-len(order) // ncols)
    # panels narrower than a lone figure, so that the page, which shrinks the figure to its
    # width, keeps the text legible
    fig = Figure(figsize=(5.2 * ncols, 3.8 * nrows + 0.4), layout="constrained")
    axes = np.atleast_1d(fig.subplots(nrows, ncols, sharey=True, squeeze=False)).ravel()
    title = ""
    for ax, name in zip(axes, order):
        ax.set_prop_cycle(color=list(PALETTE))
        sub = frame[names == name].copy()
        sub[by] = _strip_panel(sub[by], str(name))
        plot(sub, ax=ax, **kwargs)
        title = ax.get_title() or title
        ax.set_title(str(name))
        ax.yaxis.set_tick_params(labelleft=True)
    for ax in axes[len(order):]:
        ax.set_visible(False)
    _panel_legends(fig, list(axes[:len(order)]))
    if title:
        fig.suptitle(title)
    return fig


def _panel_legends(fig: Figure, axes: list) -> None:
    """The panels' legends at :data:`PANEL_LEGEND_SIZE`: one legend below all panels when every
    panel's says the same, else each panel's own, enlarged (a legend beside its axes, for many
    lines, keeps its size)."""
    legends = [ax.get_legend() for ax in axes]
    texts = {tuple(t.get_text() for t in lg.get_texts()) for lg in legends if lg is not None}
    if legends and all(lg is not None for lg in legends) and len(texts) == 1:
        handles, labels = legends[0].legend_handles, list(next(iter(texts)))
        if len(labels) <= LEGEND_INSIDE:
            for lg in legends:
                lg.remove()
            fig.legend(handles=handles, labels=labels, loc="outside lower center", fontsize=PANEL_LEGEND_SIZE,
                       ncol=min(4, len(labels)), frameon=False)
            return
    for lg in legends:
        if lg is not None and len(lg.get_texts()) <= LEGEND_INSIDE:
            for t in lg.get_texts():
                t.set_fontsize(PANEL_LEGEND_SIZE)


def _per_scenario(sub: pd.DataFrame, column: str, scen: list) -> np.ndarray:
    """``column`` of ``sub`` (indexed by scenario) for each of ``scen``; None and missing -> NaN."""
    num = pd.to_numeric(sub[column], errors="coerce")
    return np.array([float(num.get(s, np.nan)) if s in sub.index else np.nan for s in scen])


def _interval_bars(ax: Axes, sub: pd.DataFrame, scen: list, vals: np.ndarray, y: np.ndarray, bars: Any) -> None:
    """The 95% interval on n as error bars where the target has one (an unbounded end is left out)."""
    if not {"lower", "upper"} <= set(sub.columns):
        return
    lo, hi = _per_scenario(sub, "lower", scen), _per_scenario(sub, "upper", scen)
    ok = np.isfinite(vals) & np.isfinite(lo) & np.isfinite(hi)
    if ok.any():
        # drawn about the interval's own middle: a resampled interval need not hold its point
        # (few resamples, or a count beyond what most resamples reach), and an error bar measured
        # from the point would then be negative
        mid, half = (lo[ok] + hi[ok]) / 2, (hi[ok] - lo[ok]) / 2
        ax.errorbar(mid, y[ok], xerr=half, fmt="none",
                    ecolor="black", elinewidth=0.8, capsize=2, color=bars.patches[0].get_facecolor())


def _count_labels(ax: Axes, sub: pd.DataFrame, scen: list, vals: np.ndarray, y: np.ndarray) -> None:
    """Each bar's count, written past the end of its interval's error bar (not struck through)."""
    hi = _per_scenario(sub, "upper", scen) if "upper" in sub.columns else np.full(len(scen), np.nan)
    for yi, v, u in zip(y, vals, hi):
        x = max(v, u) if np.isfinite(u) and np.isfinite(v) else (v if np.isfinite(v) else 0)
        ax.text(x, yi, f" {int(v)}" if np.isfinite(v) else " not reached", va="center", fontsize="small")


def plot_required_topics(frame: pd.DataFrame, *, ax: Axes | None = None) -> Figure:
    """Horizontal bars: the topics each scenario needs for each target.

    Parameters
    ----------
    frame : DataFrame
        ``targets.csv``: ``scenario, target, n_topics`` (None or NaN: not reached), and
        optionally ``lower``, ``upper`` (the 95% interval on n, drawn as error bars).
    ax : matplotlib Axes, optional
        Draw here (else on a new Figure).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import pandas as pd
    >>> from planner.report.figures import plot_required_topics
    >>> tg = pd.DataFrame({"scenario": ["a", "b"], "target": ["swap_rate"] * 2, "n_topics": [109, None]})
    >>> [t.get_text() for t in plot_required_topics(tg).axes[0].texts]
    [' 109', ' not reached']
    """
    _need(frame, ["scenario", "target", "n_topics"], "plot_required_topics")
    scen = list(dict.fromkeys(frame["scenario"]))
    targets = list(dict.fromkeys(frame["target"].astype(str)))
    fig, ax = _axes(ax, figsize=(6.4, _bar_height(0.45 * len(scen) * max(1, len(targets)))))
    labelled = len(scen) <= BAR_LABELS_MAX
    h = 0.8 / max(1, len(targets))
    for j, tg in enumerate(targets):
        sub = frame[frame["target"].astype(str) == tg].set_index("scenario")
        vals = _per_scenario(sub, "n_topics", scen)
        y = np.arange(len(scen)) + j * h
        bars = ax.barh(y, np.where(np.isfinite(vals), vals, 0.0), height=h, label=tg)
        _interval_bars(ax, sub, scen, vals, y, bars)
        if labelled:
            _count_labels(ax, sub, scen, vals, y)
    _bar_labels(ax, np.arange(len(scen)) + h * (len(targets) - 1) / 2, scen, "targets.csv")
    ends = pd.to_numeric(pd.concat([frame["n_topics"], frame.get("upper", frame["n_topics"])]), errors="coerce")
    if labelled and np.isfinite(ends).any():
        ax.set_xlim(0, float(np.nanmax(ends)) * 1.15)       # room for the counts past the error bars
    ax.set_xlabel("topics needed")
    ax.set_title("Topics needed per scenario and target")
    ax.legend(fontsize="small")
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def _bar_height(bars_inches: float) -> float:
    """Figure height for horizontal bars: their share plus room for titles, at most 40 inches."""
    return min(40.0, max(2.5, bars_inches + 1.2))


def _bar_labels(ax: Axes, ticks: np.ndarray, names: list, table: str) -> None:
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
    """Stacked bars of the variance components (system, topic, residual) per scenario.

    Parameters
    ----------
    frame : DataFrame
        ``components.csv``: ``scenario, var_s, var_t, var_e``.
    ax : matplotlib Axes, optional
        Draw here (else on a new Figure).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import pandas as pd
    >>> import planner
    >>> from planner.report.figures import plot_components
    >>> vc = planner.fit(planner.datasets.load("dl19-passage", measure="nDCG@10"))
    >>> comp = pd.DataFrame({"scenario": ["dl19"], "var_s": [vc.var_s], "var_t": [vc.var_t], "var_e": [vc.var_e]})
    >>> fig = plot_components(comp)
    >>> len(fig.axes[0].patches)           # one bar per component
    3
    """
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
    """Judgments per topic (distinct documents in the depth-k pool) against pool depth k.

    Parameters
    ----------
    frame : DataFrame
        ``pool.csv``: ``depth, judgments_per_topic`` and optionally ``pool_judged_share``
        (drawn on a second axis: the share of the depth-k pool that the qrels judge).
    ax : matplotlib Axes, optional
        Draw here (else on a new Figure).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import pandas as pd
    >>> from planner.report.figures import plot_pool_depth
    >>> pool = pd.DataFrame({"depth": [10, 20], "judgments_per_topic": [80.0, 150.0], "pool_judged_share": [1, .9]})
    >>> len(plot_pool_depth(pool).axes)    # judgments, and the judged share on a second axis
    2
    """
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
        ax2.plot(f["depth"], f["pool_judged_share"], marker="s", linestyle="--", color=EMPHASIS,
                 label="share of the depth-k pool judged in the qrels")
        ax2.set_ylabel("judged share of the pool")
        ax2.set_ylim(0, 1.05)
        lines = ax.get_lines() + ax2.get_lines()
        # below the axes: inside, the rising and the falling line leave no corner free
        ax.legend(lines, [str(ln.get_label()) for ln in lines], fontsize="small", loc="upper center",
                  bbox_to_anchor=(0.5, -0.15), ncol=2, frameon=False)
    return fig


def _needed_markers(ax: Axes, needed: pd.DataFrame, colour: Mapping[Any, Any]) -> None:
    """A large open marker at (topics to plan with, their cost) in each depth's colour, one marker
    shape per scenario."""
    nd = needed.assign(n=pd.to_numeric(needed["n_topics_plan"], errors="coerce"),
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


def plot_budget(frame: pd.DataFrame, *, ax: Axes | None = None, needed: pd.DataFrame | None = None) -> Figure:
    """Total cost against topics, one line per pool depth.

    Parameters
    ----------
    frame : DataFrame
        ``budget.csv``: ``depth, n_topics, cost``.
    ax : matplotlib Axes, optional
        Draw here (else on a new Figure).
    needed : DataFrame, optional
        ``pool.csv``: ``depth, n_topics_plan, total_cost``, optionally ``scenario``: marks
        what each depth needs for the targets, a large open marker in the depth's colour at
        (the topics to plan with, their cost), one marker shape per scenario.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import pandas as pd
    >>> from planner.report.figures import plot_budget
    >>> cost = pd.DataFrame({"depth": [10, 10, 20, 20], "n_topics": [50, 100] * 2, "cost": [600, 1200, 1100, 2200]})
    >>> [t.get_text() for t in plot_budget(cost).axes[0].get_legend().get_texts()]
    ['depth 10', 'depth 20']
    """
    _need(frame, ["depth", "n_topics", "cost"], "plot_budget")
    fig, ax = _axes(ax)
    colour = {}
    for d in sorted(frame["depth"].unique()):
        sub = frame[frame["depth"] == d].sort_values("n_topics")
        (line,) = ax.plot(sub["n_topics"], sub["cost"], marker="o", markersize=3, label=f"depth {d}")
        colour[d] = line.get_color()
    if needed is not None and {"depth", "n_topics_plan", "total_cost"} <= set(needed.columns):
        _needed_markers(ax, needed, colour)
    ax.set_xlabel("topics (n)")
    ax.set_ylabel("cost")
    ax.set_title("Cost of topics x pool depth")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small")
    return fig


def _finite_or_none(v: Any) -> float | None:
    return None if v is None or not np.isfinite(float(v)) else float(v)


def _paired_rows(frame: pd.DataFrame) -> dict[tuple, list[str]]:
    """(collection, more, fewer, extra, lower, upper, verdict) -> the targets with those numbers:
    equivalent targets (``swap_rate 0.05`` and ``kendall_tau 0.9``) share a row."""
    rows: dict[tuple, list[str]] = {}
    for r in frame.itertuples(index=False):
        key = (str(r.collection), str(r.measure_more), str(r.measure_fewer),
               *(_finite_or_none(v) for v in (r.extra, r.extra_lower, r.extra_upper)), str(r.verdict))
        rows.setdefault(key, []).append(f"{r.target} {float(r.value):g}")
    return rows


def _paired_row(ax: Axes, i: int, key: tuple, edges: tuple[float, float], pad: float) -> None:
    """One comparison: its interval (an unbounded end runs to the edge, with an arrow) and its dot."""
    _, _, _, extra, lo, hi, verdict = key
    colour = EMPHASIS if verdict in SEPARATED else PLAIN
    a = edges[0] if lo is None else lo
    b = edges[1] if hi is None else hi
    ax.plot([a, b], [i, i], color=colour, lw=2, solid_capstyle="butt")
    for val, edge in ((lo, edges[0]), (hi, edges[1])):
        if val is None:          # unbounded: an arrow at the edge
            ax.annotate("", xy=(edge, i), xytext=(edge - np.sign(edge) * pad, i),
                        arrowprops={"arrowstyle": "->", "color": colour})
    if extra is not None:
        ax.plot([extra], [i], "o", color=colour)


def _paired_legend(fig: Figure, ax: Axes, owned: bool) -> None:
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], color=EMPHASIS, lw=2), Line2D([], [], color=PLAIN, lw=2)]
    names = ["separated (interval excludes 0)", "not separated"]
    if owned:                    # below the axes, outside them (constrained layout)
        fig.legend(handles=handles, labels=names, fontsize="small", loc="outside lower center", ncol=2)
    else:
        ax.legend(handles=handles, labels=names, fontsize="small")


def plot_paired(frame: pd.DataFrame, *, ax: Axes | None = None) -> Figure:
    """Measures compared on the same topics: the extra topics one needs, with their interval.

    Parameters
    ----------
    frame : DataFrame
        ``paired.csv``: ``collection, target, value, measure_fewer, measure_more, extra,
        extra_lower, extra_upper, verdict``. For each row, the extra topics the measure
        needing more needs (``extra``, a dot) with the 95% interval of the per-resample
        difference (``extra_lower`` to ``extra_upper``; an unbounded end runs to the edge with
        an arrow), vermillion when the verdict is one of :data:`SEPARATED`. Rows whose numbers are
        equal (equivalent targets such as ``swap_rate 0.05`` and ``kendall_tau 0.9``) are
        drawn once, naming both targets.
    ax : matplotlib Axes, optional
        Draw here (else on a new Figure).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import pandas as pd
    >>> from planner.report.figures import plot_paired
    >>> df = pd.DataFrame([{"collection": "dl19", "target": "swap_rate", "value": 0.05, "measure_fewer": "AP",
    ...                     "measure_more": "nDCG@10", "extra": 3, "extra_lower": -53, "extra_upper": 101,
    ...                     "verdict": "not separated"}])
    >>> [t.get_text() for t in plot_paired(df).axes[0].get_yticklabels()]
    ['nDCG@10 - AP']
    """
    _need(frame, ["collection", "target", "value", "measure_fewer", "measure_more", "extra",
                  "extra_lower", "extra_upper", "verdict"], "plot_paired")
    rows = _paired_rows(frame)
    keys = list(rows)
    owned = ax is None
    fig, ax = _axes(ax, figsize=(8.0, _bar_height(0.35 * len(keys)) + 0.6))
    # what every row shares goes to the title, so that the labels stay short
    tsets = {" = ".join(v) for v in rows.values()}
    colls = {k[0] for k in keys}
    common = [next(iter(tsets))] if len(tsets) == 1 else []
    finite = [v for k in keys for v in k[3:6] if v is not None] + [0.0]
    pad = 0.08 * max(1.0, max(finite) - min(finite))
    edges = (min(finite) - pad, max(finite) + pad)
    labels = []
    for i, k in enumerate(keys):
        _paired_row(ax, i, k, edges, pad)
        extra_lab = [] if len(colls) == 1 else [k[0]]
        extra_lab += [] if common else [" = ".join(rows[k])]
        labels.append(f"{k[1]} - {k[2]}" + (f" ({'; '.join(extra_lab)})" if extra_lab else ""))
    ax.axvline(0, color="black", lw=0.8)
    ax.set_xlim(*edges)
    _bar_labels(ax, np.arange(len(keys)), labels, "paired.csv")
    ax.set_xlabel("extra topics the first measure needs (dot); 95% interval over shared resamples (line)")
    sub = "; ".join(([next(iter(colls))] if len(colls) == 1 else []) + common)
    ax.set_title("Measures compared on the same topics" + (f"\n({sub})" if sub else ""), fontsize="medium")
    _paired_legend(fig, ax, owned)
    ax.grid(True, axis="x", alpha=0.3)
    return fig


def _selection_lines(frame: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The ``all`` rows of a selection table, one line per collection (and measure) and k."""
    f = frame[frame["group"] == "all"] if "group" in frame.columns else frame
    keys = [c for c in ("collection", "measure", "k") if c in f.columns]
    out = []
    for key, sub in f.groupby(keys, sort=False, dropna=False) if keys else [((), f)]:
        key = key if isinstance(key, tuple) else (key,)
        parts = [str(v) for c, v in zip(keys, key) if c != "k" and f[c].nunique() > 1]
        if "k" in keys:
            kv = int(key[keys.index("k")])
            parts.append("whole groups" if kv < 0 else f"best of {kv}")
        out.append((", ".join(parts) or "all groups", sub.sort_values("n_dev")))
    return out


def plot_selection(frame: pd.DataFrame, *, ax: Axes | None = None) -> Figure:
    """Optimism of the best of k (left) and the probability of a right pick (right) against the
    dev topics it was chosen on, averaged over groups (the ``all`` rows), with +-2 Monte Carlo
    standard errors as bands.

    Parameters
    ----------
    frame : DataFrame
        ``selection.csv`` (:mod:`planner.plan.selection`): ``n_dev, optimism, pick_accuracy`` and
        optionally ``group`` (only ``all`` rows drawn), ``collection``, ``measure``, ``k``
        (one line each) and ``optimism_se``, ``pick_accuracy_se``.
    ax : matplotlib Axes, optional
        Draw the optimism panel here (the accuracy panel is then left out).

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> import pandas as pd
    >>> from planner.report.figures import plot_selection
    >>> t = pd.DataFrame({"group": "all", "k": -1, "n_dev": [5, 10], "optimism": [0.02, 0.01],
    ...                   "pick_accuracy": [0.5, 0.6]})
    >>> len(plot_selection(t).axes)
    2
    """
    _need(frame, ["n_dev", "optimism", "pick_accuracy"], "plot_selection")
    if ax is not None:
        fig, axes = ax.figure, [ax]
    else:
        from matplotlib.figure import Figure

        fig = Figure(figsize=(9.6, 4.0), layout="constrained")
        axes = list(fig.subplots(1, 2))
    lines = _selection_lines(frame)
    colours = _colors(len(lines))
    panels = (("optimism", "optimism (dev minus test mean of the pick)", "Optimism of the best of k"),
              ("pick_accuracy", "probability the pick is right", "Right pick against dev topics"))
    for a, (col, ylabel, title) in zip(axes, panels):
        for (label, sub), colour in zip(lines, colours):
            x, y = sub["n_dev"].to_numpy(float), sub[col].to_numpy(float)
            a.plot(x, y, marker="o", color=colour, label=label)
            if f"{col}_se" in sub.columns:
                se = sub[f"{col}_se"].to_numpy(float)
                a.fill_between(x, y - 2 * se, y + 2 * se, color=colour, alpha=_band_alpha(len(lines)), lw=0)
        a.set_xlabel("dev topics the pick is chosen on (n_dev)")
        a.set_ylabel(ylabel)
        a.set_title(title)
        a.grid(True, alpha=0.3)
    axes[0].axhline(0, color="grey", lw=0.8)
    if len(lines) <= LEGEND_MAX:
        axes[-1].legend(fontsize="small")
    return fig  # type: ignore[return-value]

"""The figures a report draws from its tables, and their PNG and SVG files.

:data:`FIGURES` names each figure, the table it is drawn from, the function of
:mod:`planner.report.figures` that draws it and its caption; a curve figure also names the
curve columns it draws, and the study targets whose statistic is one of them are drawn as
reference lines (read from :data:`planner.methods.TARGETS`, which owns the statistics).

Examples
--------
>>> from planner.report.figure_set import FIGURES, curve_figures
>>> FIGURES["swap_reversal"].table
'curves'
>>> curve_figures()
('ci_width', 'swap_reversal', 'kendall_tau', 'power', 'generalizability')
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from ..methods import TARGETS
from . import figures

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

__all__ = ["FIGURES", "FigureSpec", "collection_panels", "curve_columns", "curve_figures", "render_figures"]


@dataclass(frozen=True)
class FigureSpec:
    """One figure of the report.

    Attributes
    ----------
    table : str
        The table it is drawn from.
    plot : str
        The function of :mod:`planner.report.figures` that draws it.
    caption : str
        Its caption in the report.
    lines : dict of str to str
        For a curve figure: the columns it draws -> their label on target reference lines.
        The figure is drawn only when the table has the first of them.
    needs_values : bool
        Drawn only when that first column has a value (not only NaN).
    """

    table: str
    plot: str
    caption: str
    lines: dict[str, str] = field(default_factory=dict)
    needs_values: bool = False


#: figure name -> what it draws, in the order the report lists them
FIGURES: dict[str, FigureSpec] = {
    "required_topics": FigureSpec(
        "targets", "plot_required_topics",
        "Topics each scenario needs to meet each target (bars; 'not reached' within the curve's "
        "range), with the 95% interval on n where the target has one (black lines)."),
    "ci_width": FigureSpec(
        "curves", "plot_ci_width",
        "Width of the 95% interval of a pair's mean difference against topic count "
        "(median over pairs; band up to the 90th percentile).", {"ci_width_median": "width"}),
    "swap_reversal": FigureSpec(
        "curves", "plot_swap_reversal", "Swap rate (solid) and reversal rate (dashed), mean over system pairs.",
        {"swap_rate_mean": "swap", "reversal_rate_mean": "reversal"}),
    "kendall_tau": FigureSpec(
        "curves", "plot_kendall_tau",
        "Expected Kendall tau between the rankings from two independent topic sets.", {"kendall_tau_mean": "tau"}),
    "power": FigureSpec(
        "curves", "plot_power", "Power of the paired t-test at the scenario's min_diff, mean over pairs.",
        {"power_mean": "power"}),
    "generalizability": FigureSpec(
        "curves", "plot_generalizability",
        "D-study Erho2 (solid) and Phi (dashed) against topic count, with their "
        "intervals as bands (Feldt; Arteaga-Jeyaratnam-Franklin).", {"erho2": "Erho2", "phi": "Phi"},
        needs_values=True),
    "paired": FigureSpec(
        "paired", "plot_paired",
        "Extra topics one measure needs over another on the same topics (dot) and the 95% "
        "interval of that difference over the shared topic resamples (line); vermillion: the interval "
        "excludes 0, blue: it does not."),
    "components": FigureSpec("components", "plot_components",
                             "Variance components (systems, topics, residual)."),
    "pool_depth": FigureSpec(
        "pool", "plot_pool_depth",
        "Judgments per topic against pool depth, and the share of the pool the qrels judge."),
    "budget": FigureSpec("budget", "plot_budget", "Total cost against topics for each pool depth."),
    "selection": FigureSpec(
        "selection", "plot_selection",
        "Selection on the test topics, averaged over groups: optimism of the best of k (its dev mean "
        "minus its mean on the other topics, left) and the probability that the pick is the best of its "
        "group on those topics (within the margin, right), against the dev topics it was chosen on; "
        "bands: +-2 Monte Carlo standard errors."),
}


def curve_figures() -> tuple[str, ...]:
    """The figures drawn from the curves table, in report order."""
    return tuple(name for name, spec in FIGURES.items() if spec.table == "curves")


def curve_columns() -> tuple[str, ...]:
    """The curve columns the curve figures draw, in report order."""
    return tuple(col for name in curve_figures() for col in FIGURES[name].lines)


def collection_panels(tables: Mapping[str, pd.DataFrame]) -> dict[str, str]:
    """Scenario -> collection from the scenarios table (empty without one)."""
    sc = tables.get("scenarios")
    if sc is None or not {"scenario", "collection"} <= set(sc.columns):
        return {}
    return {str(s): str(c) for s, c in zip(sc["scenario"], sc["collection"])}


def _drawn(spec: FigureSpec, df: pd.DataFrame | None) -> bool:
    if df is None or len(df) == 0:
        return False
    if not spec.lines:
        return True
    first = next(iter(spec.lines))
    return first in df.columns and (not spec.needs_values or bool(df[first].notna().any()))


def _target_lines(spec: FigureSpec, tables: Mapping[str, pd.DataFrame]) -> dict[str, list[float]] | None:
    """Label -> the values of the study's targets on the figure's columns (at most 3 each)."""
    tg = tables.get("targets")
    if not spec.lines or tg is None or not len(tg) or not {"target", "value"} <= set(tg.columns):
        return None
    vals = {}
    for column, label in spec.lines.items():
        names = [t.name for t in TARGETS.values() if t.statistic == column]
        vals[label] = sorted({float(v) for v in tg.loc[tg["target"].isin(names), "value"]})
    return {k: v for k, v in vals.items() if 0 < len(v) <= 3}


def _draw(name: str, spec: FigureSpec, df: pd.DataFrame, tables: Mapping[str, pd.DataFrame]) -> Figure:
    kw: dict[str, Any] = {}
    lines = _target_lines(spec, tables)
    if lines is not None:
        kw["targets"] = lines
    if name == "budget" and tables.get("pool") is not None:
        kw["needed"] = tables["pool"]          # mark the topics each depth needs
    panels = collection_panels(tables) if spec.table == "curves" else {}
    plot = getattr(figures, spec.plot)
    if len(set(panels.values())) > 1 and "scenario" in df.columns:
        # one panel per collection: different topic populations, and fewer lines per panel
        return figures.plot_panels(df, plot, panels, **kw)
    return plot(df, **kw)


def _save(fig: Figure, folder: Path, name: str) -> bytes:
    """Write ``name``.png and ``name``.svg (reproducible bytes); return the PNG."""
    # matplotlib is imported only when a report draws (importing it takes a second)
    import matplotlib

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
    png = buf.getvalue()
    (folder / f"{name}.png").write_bytes(png)
    fig.set_layout_engine("none")     # keep the layout computed for the PNG (saves a pass)
    # a fixed hash salt makes matplotlib's clip-path ids, and so the SVG bytes, reproducible
    with matplotlib.rc_context({"svg.hashsalt": "planner"}):
        fig.savefig(folder / f"{name}.svg", format="svg", metadata={"Date": None, "Creator": None})
    return png


def render_figures(tables: Mapping[str, pd.DataFrame], folder: Path) -> dict[str, bytes]:
    """Draw every figure whose table has what it needs into ``folder``; return name -> PNG bytes.

    Parameters
    ----------
    tables : mapping of str to DataFrame
        The study's tables (the names of :data:`FIGURES`' ``table`` fields).
    folder : Path
        Where ``<name>.png`` and ``<name>.svg`` go (created when missing).

    Returns
    -------
    dict of str to bytes
        The figures drawn, in :data:`FIGURES` order.
    """
    pngs: dict[str, bytes] = {}
    folder.mkdir(parents=True, exist_ok=True)
    for name, spec in FIGURES.items():
        df = tables.get(spec.table)
        if df is None or not _drawn(spec, df):
            continue
        pngs[name] = _save(_draw(name, spec, df, tables), folder, name)
    return pngs

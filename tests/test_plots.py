"""Tests of planner.plots on small frames: every plot_* returns a Figure, draws on a
given ax, one line per scenario, bands where interval columns exist, and names the
missing column."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pandas as pd
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure

from planner import plots
from planner.errors import ParameterError


def _curves():
    n = [10, 20, 50]
    return pd.DataFrame({
        "scenario": ["a"] * 3 + ["b"] * 3, "n_topics": n * 2,
        "swap_rate_mean": [.2, .1, .05, .25, .15, .08], "reversal_rate_mean": [.1, .05, .02, .12, .07, .03],
        "kendall_tau_mean": [.6, .8, .9, .5, .7, .85], "ci_width_median": [.3, .2, .1, .35, .25, .15],
        "ci_width_p90": [.4, .3, .2, .45, .35, .25], "power_mean": [.3, .5, .8, .2, .4, .7]})


@pytest.mark.parametrize("func", [plots.plot_ci_width, plots.plot_swap_reversal, plots.plot_kendall_tau,
                                  plots.plot_power])
def test_curve_plots_return_figure_one_line_per_scenario(func):
    fig = func(_curves())
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    per = 2 if func is plots.plot_swap_reversal else 1     # swap and reversal per scenario
    assert len(ax.get_lines()) == 2 * per
    xs = ax.get_lines()[0].get_xdata()
    assert list(xs) == [10, 20, 50]


def test_plot_draws_on_given_ax():
    from matplotlib.figure import Figure as F

    fig = F()
    ax = fig.subplots()
    assert plots.plot_kendall_tau(_curves(), ax=ax) is fig
    assert len(ax.get_lines()) == 2


def test_bands_from_interval_columns():
    df = _curves()
    fig = plots.plot_ci_width(df)                 # band median..p90
    assert sum(isinstance(c, PolyCollection) for c in fig.axes[0].collections) == 2
    df2 = df.assign(kendall_tau_mean_lo=df.kendall_tau_mean - .05, kendall_tau_mean_hi=df.kendall_tau_mean + .05)
    fig2 = plots.plot_kendall_tau(df2)            # *_lo/*_hi columns -> band
    assert sum(isinstance(c, PolyCollection) for c in fig2.axes[0].collections) == 2
    fig3 = plots.plot_kendall_tau(df)             # no interval -> no band
    assert not any(isinstance(c, PolyCollection) for c in fig3.axes[0].collections)


def test_bar_plots_and_pool():
    tg = pd.DataFrame({"scenario": ["a", "a", "b", "b"], "target": ["swap_rate", "power"] * 2,
                       "value": [.05, .8] * 2, "n_topics": [50, 60, np.nan, 70]})
    fig = plots.plot_required_topics(tg)
    bars = fig.axes[0].patches
    assert len(bars) == 4
    assert sorted(b.get_width() for b in bars) == [0, 50, 60, 70]     # not reached drawn as 0 + label
    assert any("not reached" in t.get_text() for t in fig.axes[0].texts)
    comp = pd.DataFrame({"scenario": ["a", "b"], "var_s": [.01, .02], "var_t": [.05, .04], "var_e": [.02, .03]})
    fig = plots.plot_components(comp)
    assert len(fig.axes[0].patches) == 6
    # stacked: the residual bar of a starts at var_s + var_t
    assert fig.axes[0].patches[4].get_x() == pytest.approx(0.06)
    pool = pd.DataFrame({"depth": [10, 20, 50], "judgments_per_topic": [80, 150, 300],
                         "judged_share_mean": [1, .9, .7]})
    fig = plots.plot_pool_depth(pool)
    assert len(fig.axes) == 2
    fig = plots.plot_budget(pd.DataFrame({"depth": [10, 10, 20, 20], "n_topics": [10, 20, 10, 20],
                                          "cost": [1, 2, 3, 4]}))
    assert len(fig.axes[0].get_lines()) == 2


def test_missing_columns_are_named():
    with pytest.raises(ParameterError, match="power_mean"):
        plots.plot_power(_curves().drop(columns="power_mean"))
    with pytest.raises(ParameterError, match="var_e"):
        plots.plot_components(pd.DataFrame({"scenario": ["a"], "var_s": [1], "var_t": [1]}))


def test_no_pyplot_figures_left_open():
    import matplotlib.pyplot as plt

    before = len(plt.get_fignums())
    plots.plot_power(_curves())
    assert len(plt.get_fignums()) == before


def test_generalizability_bands():
    df = _curves().assign(erho2=[.8, .9, .95, .7, .8, .9], phi=[.6, .7, .8, .5, .6, .7])
    df = df.assign(erho2_lo=df.erho2 - .05, erho2_hi=df.erho2 + .02, phi_lo=df.phi - .1, phi_hi=df.phi + .05)
    fig = plots.plot_generalizability(df)
    ax = fig.axes[0]
    assert len(ax.get_lines()) == 4                      # Erho2 and Phi per scenario
    assert sum(isinstance(c, PolyCollection) for c in ax.collections) == 4

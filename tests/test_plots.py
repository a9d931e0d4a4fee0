"""Tests of planner.report.figures on small frames: every plot_* returns a Figure, draws on a
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

from planner.errors import ParameterError
from planner.report import figures as plots


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
                         "pool_judged_share": [1, .9, .7]})
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


def _many(k: int):
    n = [10, 20, 50]
    rows = []
    for i in range(k):
        for j, t in enumerate(n):
            # distinct curves (identical ones share one legend entry)
            e = i / 1000
            rows.append({"scenario": f"s{i}", "n_topics": t, "swap_rate_mean": .3 / (j + 1) + e,
                         "reversal_rate_mean": .2 / (j + 1) + e, "ci_width_median": .3 - .05 * j + e,
                         "ci_width_p90": .4 - .05 * j + e, "kendall_tau_mean": .5 + .1 * j - e,
                         "power_mean": .3 + .2 * j + e, "erho2": .8 - e, "phi": .7 - e})
    return pd.DataFrame(rows)


def _render_without_warnings(fig):
    import io
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")      # e.g. "constrained_layout not applied ... collapsed to zero"
        fig.savefig(io.BytesIO(), format="png", dpi=50)


@pytest.mark.slow
def test_many_scenarios_keep_the_axes_readable():
    # 25 scenarios used to stack 50 legend entries inside the axes, which collapsed them
    df = _many(25)
    for func in (plots.plot_ci_width, plots.plot_swap_reversal, plots.plot_generalizability):
        fig = func(df)
        _render_without_warnings(fig)
        ax = fig.axes[0]
        leg = ax.get_legend()
        labels = [t.get_text() for t in leg.get_texts()]
        assert labels[:25] == [f"s{i}" for i in range(25)]              # each scenario once
        if func is not plots.plot_ci_width:
            assert labels[25:] == {plots.plot_swap_reversal: ["solid: swap", "dashed: reversal"],
                                   plots.plot_generalizability: ["solid: Erho2", "dashed: Phi"]}[func]
        assert leg.get_bbox_to_anchor().x0 > ax.get_window_extent().x1 - 1   # right of the axes
        assert fig.get_size_inches()[0] > 6.4                              # grown for it
        colors = {tuple(ln.get_color()) if not isinstance(ln.get_color(), str) else ln.get_color()
                  for ln in ax.get_lines()[:25]}
        assert len(colors) == 25


@pytest.mark.slow
def test_legend_left_out_beyond_its_maximum():
    k = plots.LEGEND_MAX + 1
    for func in (plots.plot_kendall_tau, plots.plot_swap_reversal):
        fig = func(_many(k))
        _render_without_warnings(fig)
        ax = fig.axes[0]
        assert ax.get_legend() is None
        assert any(f"{k} scenarios: legend left out (see curves.csv)" in t.get_text() for t in ax.texts)


def test_few_scenarios_legend_stays_inside():
    fig = plots.plot_swap_reversal(_curves())
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b", "solid: swap", "dashed: reversal"]
    assert tuple(fig.get_size_inches()) == (6.4, 4.0)
    one = plots.plot_swap_reversal(_curves().query("scenario == 'a'"), by=None)
    assert [t.get_text() for t in one.axes[0].get_legend().get_texts()] == ["swap", "reversal"]
    one = plots.plot_generalizability(_curves().assign(erho2=.8, phi=.7).query("scenario == 'a'"))
    assert [t.get_text() for t in one.axes[0].get_legend().get_texts()] == ["a Erho2", "a Phi"]


def test_bar_plots_with_many_scenarios_drop_labels_and_cap_height():
    k = plots.BAR_LABELS_MAX + 5
    tg = pd.DataFrame({"scenario": [f"s{i}" for i in range(k)] * 2, "target": ["swap_rate"] * k + ["power"] * k,
                       "value": [.05] * k + [.8] * k, "n_topics": np.arange(2 * k) + 10.0})
    fig = plots.plot_required_topics(tg)
    ax = fig.axes[0]
    assert fig.get_size_inches()[1] == 40.0 and not ax.texts and list(ax.get_yticks()) == []
    assert ax.get_ylabel() == f"{k} scenarios (top to bottom in targets.csv order)"
    few = plots.plot_required_topics(tg[tg.scenario.isin(["s0", "s1"])])
    assert [t.get_text() for t in few.axes[0].get_yticklabels()] == ["s0", "s1"]


@pytest.mark.parametrize("func,targets", [(plots.plot_swap_reversal, {"swap": [0.05], "reversal": [0.1]}),
                                          (plots.plot_kendall_tau, {"tau": [0.9]}),
                                          (plots.plot_ci_width, {"width": [0.1, 0.2]}),
                                          (plots.plot_power, {"power": [0.8]})])
def test_targets_are_drawn_as_labelled_reference_lines(func, targets):
    # the study's targets were not drawn, so a reader could not see where a curve meets one
    # (organiser walkthrough); the lines come last and leave the legend alone
    plain = func(_curves())
    fig = func(_curves(), targets=targets)
    ax = fig.axes[0]
    want = sorted(v for vs in targets.values() for v in vs)
    extra = ax.get_lines()[len(plain.axes[0].get_lines()):]
    assert sorted(ln.get_ydata()[0] for ln in extra) == want
    assert all(ln.get_linestyle() == ":" for ln in extra)
    labels = sorted(t.get_text() for t in ax.texts)
    assert labels == sorted(f"{k} target {v:g}" for k, vs in targets.items() for v in vs)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == \
        [t.get_text() for t in plain.axes[0].get_legend().get_texts()]


def test_paired_plot_one_row_per_comparison_with_unbounded_ends():
    base = {"collection": "c", "measure_fewer": "AP", "fewer": "c, AP", "more": "c, RR"}
    df = pd.DataFrame([
        {**base, "target": "swap_rate", "value": 0.05, "measure_more": "RR", "extra": 300, "extra_lower": 120,
         "extra_upper": None, "verdict": "separated"},
        {**base, "target": "kendall_tau", "value": 0.9, "measure_more": "RR", "extra": 300, "extra_lower": 120,
         "extra_upper": None, "verdict": "separated"},          # the equivalent target: drawn once
        {**base, "target": "swap_rate", "value": 0.05, "measure_more": "P10", "extra": 4, "extra_lower": -30,
         "extra_upper": 50, "verdict": "not separated"},
        {**base, "target": "kendall_tau", "value": 0.9, "measure_more": "P10", "extra": 4, "extra_lower": -30,
         "extra_upper": 50, "verdict": "not separated"}])
    fig = plots.plot_paired(df)
    ax = fig.axes[0]
    assert len(ax.lines) == 2 + 2 + 1      # an interval and a dot per comparison, and the line at 0
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["RR - AP", "P10 - AP"]          # shared collection and targets go to the title
    assert "swap_rate 0.05 = kendall_tau 0.9" in ax.get_title()
    # the unbounded upper end runs to the axis edge, with an arrow
    lo, hi = ax.get_xlim()
    assert lo < -30 and hi > 300 and any(type(c).__name__ == "Annotation" for c in ax.get_children())
    with pytest.raises(ParameterError, match="verdict"):
        plots.plot_paired(df.drop(columns="verdict"))


def test_required_topics_draws_the_interval_on_n_as_error_bars():
    tg = pd.DataFrame({"scenario": ["a", "a", "b"], "target": ["swap_rate", "erho2", "swap_rate"],
                       "n_topics": [100, 30, 60], "lower": [70, 20, None], "upper": [150, 45, None]},
                      dtype=object)        # as a study's table: None, not NaN, where there is no interval
    ax = plots.plot_required_topics(tg).axes[0]
    segs = [seg for c in ax.collections for seg in getattr(c, "get_segments", lambda: [])()]
    spans = sorted((round(s[0][0]), round(s[1][0])) for s in segs if len(s) == 2 and s[0][1] == s[1][1])
    assert (70, 150) in spans and (20, 45) in spans and len(spans) == 2    # b has no interval
    # a study's table has None where no count was reached (a traceback in planner study)
    none = pd.DataFrame({"scenario": ["a"], "target": ["ci_width"], "n_topics": [None], "lower": [None],
                         "upper": [None]}, dtype=object)
    assert "not reached" in [t.get_text().strip() for t in plots.plot_required_topics(none).axes[0].texts]
    # a count outside its own resampled interval (AP 1907 against [64, 1420] with 20 resamples:
    # a traceback, "'xerr' must not contain negative values"): the interval is still drawn as it is
    out = pd.DataFrame({"scenario": ["a"], "target": ["swap_rate"], "n_topics": [1907], "lower": [64],
                        "upper": [1420]}, dtype=object)
    ax = plots.plot_required_topics(out).axes[0]
    segs = [seg for c in ax.collections for seg in getattr(c, "get_segments", lambda: [])()]
    assert (64, 1420) in [(round(s[0][0]), round(s[1][0])) for s in segs if len(s) == 2 and s[0][1] == s[1][1]]


def test_scenarios_without_a_curve_stay_out_of_the_legend():
    # dl-stratified: the stratified scenarios have no pair rates, yet were listed in the swap and
    # Kendall tau legends (report audit)
    f = _curves()
    f.loc[f["scenario"] == "b", ["swap_rate_mean", "reversal_rate_mean", "kendall_tau_mean"]] = None
    for fig in (plots.plot_kendall_tau(f), plots.plot_swap_reversal(f)):
        texts = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        assert "a" in texts and "b" not in texts


def test_panels_one_per_collection_with_shared_y_and_short_labels():
    df = _curves()
    df = pd.concat([df.assign(scenario="c1, " + df.scenario), df.assign(scenario="c2, " + df.scenario,
                                                                        kendall_tau_mean=df.kendall_tau_mean - .1)])
    panels = {"c1, a": "c1", "c1, b": "c1", "c2, a": "c2", "c2, b": "c2"}
    fig = plots.plot_panels(df, plots.plot_kendall_tau, panels, targets={"tau": [0.9]})
    axes = [a for a in fig.axes if a.get_visible()]
    assert [a.get_title() for a in axes] == ["c1", "c2"]
    assert fig._suptitle.get_text() == "Ranking agreement between two topic sets"
    for a, shift in zip(axes, (0.0, 0.1)):
        named = [ln for ln in a.get_lines() if not ln.get_label().startswith("_")]
        assert [ln.get_label() for ln in named] == ["a", "b"]            # the collection cut from the label
        assert list(named[0].get_ydata()) == pytest.approx([.6 - shift, .8 - shift, .9 - shift])
    assert axes[0].get_shared_y_axes().joined(axes[0], axes[1])
    # one panel: the plain figure
    one = plots.plot_panels(df, plots.plot_kendall_tau, {"c1, a": "c1", "c1, b": "c1"})
    assert len(one.axes) == 1 and len([ln for ln in one.axes[0].get_lines()]) == 2
    # three panels in two columns: the fourth axes is hidden
    three = plots.plot_panels(df.assign(scenario=df.scenario.str.replace("c2, b", "c3, b")),
                              plots.plot_swap_reversal, {"c1, a": "c1", "c1, b": "c1", "c2, a": "c2", "c3, b": "c3"})
    assert [a.get_title() for a in three.axes if a.get_visible()] == ["c1", "c2", "c3"]
    assert sum(not a.get_visible() for a in three.axes) == 1


def test_target_labels_go_to_the_end_the_curves_leave_free():
    # the Erho2 target label sat where the rising curves cross it, struck through (report audit):
    # it now goes to the end of the x axis where the curves keep farthest from the target
    rising = pd.DataFrame({"scenario": ["a"] * 4, "n_topics": [10, 50, 200, 500],
                           "kendall_tau_mean": [0.6, 0.93, 0.97, 0.99]})
    fig = plots.plot_kendall_tau(rising, targets={"tau": [0.95]})
    (txt,) = [t for t in fig.axes[0].texts if "target" in t.get_text()]
    assert txt.get_position()[0] > 0.5 and txt.get_ha() == "right"
    falling = pd.DataFrame({"scenario": ["a"] * 4, "n_topics": [10, 50, 200, 500],
                            "swap_rate_mean": [0.3, 0.1, 0.06, 0.04]})   # ends just below the target
    fig = plots.plot_swap_reversal(falling, targets={"swap": [0.05]})
    (txt,) = [t for t in fig.axes[0].texts if "target" in t.get_text()]
    assert txt.get_position()[0] < 0.5 and txt.get_ha() == "left"


def test_pool_depth_legend_sits_below_the_axes():
    # inside the axes it hid the depth-50 point of the rising line (report audit)
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    frame = pd.DataFrame({"depth": [10, 20, 50, 100], "judgments_per_topic": [58.0, 115, 282, 561],
                          "pool_judged_share": [1.0, 0.63, 0.34, 0.21]})
    fig = plots.plot_pool_depth(frame)
    FigureCanvasAgg(fig).draw()
    ax = fig.axes[0]
    leg = ax.get_legend()
    assert leg is not None and len(leg.get_texts()) == 2
    assert leg.get_window_extent().y1 <= ax.get_window_extent().y0


def test_generalizability_uses_a_log_axis_over_a_wide_range_of_counts():
    # on a linear axis to 500 the coefficients met their targets in the first tenth (report audit)
    wide = pd.DataFrame({"scenario": ["a"] * 4, "n_topics": [10, 50, 200, 500],
                         "erho2": [0.8, 0.95, 0.98, 0.99], "phi": [0.6, 0.9, 0.96, 0.98]})
    ax = plots.plot_generalizability(wide).axes[0]
    assert ax.get_xscale() == "log"
    assert "500" in [t.get_text() for t in ax.get_xticklabels()] or ax.xaxis.get_major_formatter()(500, 0) == "500"
    narrow = wide.assign(n_topics=[20, 40, 60, 100])
    assert plots.plot_generalizability(narrow).axes[0].get_xscale() == "linear"


def test_budget_marks_the_topics_each_depth_needs():
    # budget.png had no marker for the counts the answer is about (report audit)
    budget = pd.DataFrame({"depth": [10, 10, 20, 20], "n_topics": [50, 100, 50, 100],
                           "cost": [500.0, 1000, 900, 1800]})
    pool = pd.DataFrame({"scenario": ["A", "A", "B", "B"], "depth": [10, 20, 10, 20],
                         "n_topics_plan": [80, 70, 120, None], "total_cost": [800.0, 1260, 1200, None]})
    ax = plots.plot_budget(budget, needed=pool).axes[0]
    marks = [ln for ln in ax.get_lines() if ln.get_linestyle() == "None" and len(ln.get_xdata())]
    assert sorted((float(ln.get_xdata()[0]), float(ln.get_ydata()[0])) for ln in marks) == \
        [(70.0, 1260.0), (80.0, 800.0), (120.0, 1200.0)]               # the unreached one is left out
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["depth 10", "depth 20", "needed: A", "needed: B"]
    assert len(plots.plot_budget(budget).axes[0].get_lines()) == 2     # without needed: the lines only


def test_identical_curves_share_one_legend_entry():
    # topic-filtering on DL 2020: filters that remove no topic give the unfiltered curve
    # exactly; drawn over each other, only the last colour showed, under three names
    df = _curves()
    b = df[df["scenario"] == "b"]
    twins = pd.concat([df, b.assign(scenario="b2"), b.assign(scenario="b3"), df[df["scenario"] == "a"].assign(
        scenario="a-close", kendall_tau_mean=lambda f: f["kendall_tau_mean"] + 1e-6)])
    fig = plots.plot_kendall_tau(twins)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert labels == ["a", "b (same curve: b2; b3)", "a-close"]      # near is not the same
    # drawn in b's colour, so the colour the legend gives b is the one that shows
    colours = [ln.get_color() for ln in fig.axes[0].get_lines()[:5]]
    assert colours[1] == colours[2] == colours[3] and len({colours[0], colours[1], colours[4]}) == 3
    fig = plots.plot_swap_reversal(twins)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    # a-close differs from a in Kendall tau only: its swap and reversal curves are a's
    assert labels == ["a (same curve: a-close)", "b (same curve: b2; b3)", "solid: swap", "dashed: reversal"]
    # the same swap curve with another reversal curve is another scenario
    other = pd.concat([df, b.assign(scenario="b2", reversal_rate_mean=b["reversal_rate_mean"] / 2)])
    labels = [t.get_text() for t in plots.plot_swap_reversal(other).axes[0].get_legend().get_texts()]
    assert labels[:3] == ["a", "b", "b2"]

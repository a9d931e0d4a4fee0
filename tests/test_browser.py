"""report.html in a real browser: headless Chromium at 1280 px (scripts/report_layout.py).

Nothing may run off the page's width (wide tables scroll in their own box), every figure
must load, and the what-if slider must change the numbers it shows. Skipped, with the
reason, where Chromium, its driver or selenium are missing (.ci/run installs Chromium from
the Debian packages; selenium is in the ``test`` extra).
"""

from __future__ import annotations

import importlib.util
import re
import sys

import pandas as pd
import pytest
from conftest import ROOT

_spec = importlib.util.spec_from_file_location("report_layout", ROOT / "scripts" / "report_layout.py")
layout = importlib.util.module_from_spec(_spec)
sys.modules["report_layout"] = layout
_spec.loader.exec_module(layout)

_missing = layout.available()
if _missing:
    pytest.skip(f"no browser test: {_missing}", allow_module_level=True)

SHIPPED = sorted(p for p in (ROOT / "reports").iterdir() if (p / "report.html").is_file())


@pytest.fixture(scope="module")
def driver():
    drv = layout.browser()
    yield drv
    drv.quit()


@pytest.fixture(scope="module")
def fresh_report(small_scores, tmp_path_factory):
    """A study's report, with a scenario table far wider than the page (40 settings)."""
    from planner.report import write_report
    from planner.study import run_study

    doc = {"collection": {"scores": str(small_scores)}, "method": ["analytic", "predictive"],
           "topics": [5, 10, 24, 50], "seed": 1, "resamples": 20,
           "targets": [{"target": "swap_rate", "value": 0.05}]}
    res = run_study(doc, quiet=True, write=False)
    tables = dict(res.tables)
    tables["scenarios"] = tables["scenarios"].assign(**{f"a_long_setting_name_{i}": "some-long-value"
                                                        for i in range(40)})
    return write_report(res, tmp_path_factory.mktemp("b") / "wide", tables=tables) / "report.html"


def test_fresh_report_fits_the_page_and_loads_every_figure(driver, fresh_report):
    lay = layout.measure(driver, fresh_report)
    assert lay.overflow == () and lay.page_width <= layout.WIDTH
    n_figures = len(re.findall(r"<figure ", fresh_report.read_text()))
    assert lay.figures == n_figures >= 4 and lay.broken_images == ()
    assert lay.answer_words is not None and lay.answer_words <= 40
    # the wide table is there, in a box that scrolls sideways
    wide = driver.execute_script(
        "const b = document.querySelector('#scenarios ~ .scroll'); return [b.scrollWidth, b.clientWidth]")
    assert wide[0] > wide[1]


def test_the_slider_changes_the_numbers_shown(driver, fresh_report):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    driver.get(fresh_report.resolve().as_uri())

    def shown():
        return {k: driver.find_element(By.ID, k).text
                for k in ("whatif-n-out", "whatif-ci_width_median", "whatif-swap_rate_mean", "whatif-power_mean")}

    before = shown()
    assert all(re.fullmatch(r"\d+(\.\d+)?", v) for v in before.values())
    slider = driver.find_element(By.ID, "whatif-n")
    slider.send_keys(Keys.HOME)                     # the smallest studied count
    low = shown()
    assert low["whatif-n-out"] == slider.get_attribute("min") == "5"
    assert low != before and float(low["whatif-swap_rate_mean"]) > float(before["whatif-swap_rate_mean"])
    assert float(low["whatif-power_mean"]) < float(before["whatif-power_mean"])
    # at a studied count the panel shows the curve's own numbers
    curves = pd.read_csv(fresh_report.parent / "tables" / "curves.csv")
    first = curves[curves["scenario"] == curves["scenario"].iloc[0]].set_index("n_topics")
    assert float(low["whatif-swap_rate_mean"]) == pytest.approx(first.loc[5, "swap_rate_mean"], abs=5e-4)
    assert driver.find_element(By.ID, "whatif-how").text == "computed at this topic count"
    slider.send_keys(Keys.ARROW_RIGHT)               # 6: between the studied 5 and 10
    assert shown()["whatif-n-out"] == "6" and "interpolated between the studied counts 5 and 10" in \
        driver.find_element(By.ID, "whatif-how").text


@pytest.mark.parametrize("folder", SHIPPED, ids=[p.name for p in SHIPPED])
def test_shipped_reports_fit_the_page(driver, folder):
    lay = layout.measure(driver, folder / "report.html")
    assert lay.overflow == () and lay.page_width <= layout.WIDTH, lay.overflow
    assert lay.broken_images == () and lay.figures == len(list((folder / "figures").glob("*.png")))
    assert lay.answer_words is not None and lay.answer_words <= 40

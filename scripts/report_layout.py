"""Render report.html in headless Chromium and say what a reader at 1280 px sees.

For each report folder: what runs off the page's width (elements wider than the window that
no scrolling box holds), the figures that did not load, the answer's word count, and
optionally a full-page screenshot.

    python scripts/report_layout.py reports/*/ [--shots DIR]

Needs Chromium and its driver (Debian: ``apt-get install chromium chromium-driver``) and
selenium (the ``test`` extra). tests/test_browser.py drives the same functions.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: the window width a report must fit
WIDTH = 1280
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
#: Chromium's flags for a run with no network, no profile and no sandbox (CI containers run as root)
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--hide-scrollbars")

#: elements wider than the page that no scrolling box holds: "tag#id in section 'heading'"
_OVERFLOW_JS = """
const W = document.documentElement.clientWidth, out = [];
function held(el) {
  for (let p = el.parentElement; p; p = p.parentElement) {
    const ox = getComputedStyle(p).overflowX;
    if (ox === 'auto' || ox === 'scroll' || ox === 'hidden') return p !== document.body
        && p !== document.documentElement;
  }
  return false;
}
for (const el of document.body.querySelectorAll('*')) {
  const r = el.getBoundingClientRect();
  if (r.right <= W + 1 || held(el)) continue;
  if (el.parentElement && el.parentElement.getBoundingClientRect().right > W + 1
      && !held(el.parentElement) && el.parentElement !== document.body) continue;
  let h = el, head = '';
  while (h && !head) {
    let s = h.previousElementSibling;
    while (s && !/^H[1-3]$/.test(s.tagName)) s = s.previousElementSibling;
    if (s) head = s.textContent; else h = h.parentElement;
  }
  out.push(el.tagName.toLowerCase() + (el.className ? '.' + el.className : '') + ' in "' + head
           + '" (' + Math.round(r.right) + ' px)');
}
return out;
"""

_BROKEN_IMAGES_JS = """
return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.alt);
"""


def available() -> str | None:
    """None when Chromium, its driver and selenium are here, else what is missing."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not Path(path).exists() and shutil.which(Path(path).name) is None:
            return f"{path} not found (Debian: apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    return None


def browser(width: int = WIDTH, height: int = 900):
    """A headless Chromium (selenium WebDriver) with a fresh profile, ``width`` px wide."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM if Path(CHROMIUM).exists() else str(shutil.which("chromium"))
    for f in (*FLAGS, f"--user-data-dir={tempfile.mkdtemp(prefix='planner-chromium-')}",
              f"--window-size={width},{height}"):
        opts.add_argument(f)
    driver = CHROMEDRIVER if Path(CHROMEDRIVER).exists() else str(shutil.which("chromedriver"))
    return webdriver.Chrome(service=Service(driver), options=opts)


@dataclass(frozen=True)
class Layout:
    """What one report.html looks like at :data:`WIDTH` px."""

    report: str
    page_width: int
    overflow: tuple[str, ...]
    broken_images: tuple[str, ...]
    figures: int
    answer_words: int | None


def answer_words(text: str) -> int:
    """Words in the answer's lead: its tokens between spaces (``**`` marks left out), as
    :func:`planner.study.narrative.headline` counts them."""
    return len(text.replace("**", "").split())


def measure(drv, report: Path, shot: Path | None = None) -> Layout:
    """Load ``report`` (a report.html) in ``drv`` and measure it; a full-page PNG to ``shot``."""
    drv.get(report.resolve().as_uri())
    drv.execute_script("return document.readyState")
    overflow = tuple(drv.execute_script(_OVERFLOW_JS))
    broken = tuple(drv.execute_script(_BROKEN_IMAGES_JS))
    n_fig = int(drv.execute_script("return document.images.length"))
    width = int(drv.execute_script("return document.documentElement.scrollWidth"))
    lead = drv.execute_script("const p = document.querySelector('p.answer'); return p ? p.textContent : null")
    if shot is not None:
        height = int(drv.execute_script("return document.documentElement.scrollHeight"))
        drv.set_window_size(WIDTH, min(height + 100, 16000))
        drv.save_screenshot(str(shot))
        drv.set_window_size(WIDTH, 900)
    return Layout(str(report), width, overflow, broken, n_fig, None if lead is None else answer_words(lead))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("reports", nargs="+", type=Path, help="report folders (or report.html files)")
    ap.add_argument("--shots", type=Path, help="write a full-page screenshot of each here")
    args = ap.parse_args(argv)
    why = available()
    if why:
        print(f"report_layout: {why}", file=sys.stderr)
        return 2
    if args.shots:
        args.shots.mkdir(parents=True, exist_ok=True)
    drv = browser()
    try:
        for r in args.reports:
            page = r / "report.html" if r.is_dir() else r
            name = page.parent.name
            lay = measure(drv, page, args.shots / f"{name}.png" if args.shots else None)
            print(f"{name}: page {lay.page_width} px wide at {WIDTH}; answer {lay.answer_words} words; "
                  f"{lay.figures} figures, {len(lay.broken_images)} not loaded; "
                  f"{len(lay.overflow)} element(s) off the page")
            for o in lay.overflow:
                print(f"    {o}")
    finally:
        drv.quit()
    return 0


if __name__ == "__main__":
    sys.exit(main())

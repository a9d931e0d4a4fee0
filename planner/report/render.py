"""The report's document model and its two renderings, Markdown and self-contained HTML.

A :class:`Document` is a list of blocks (headings, paragraphs, lists, tables, figures,
preformatted text); :meth:`Document.markdown` and :meth:`Document.html` render the same
blocks, so ``report.md`` and ``report.html`` always say the same thing. Table cells are
written by :func:`format_value`, one style per magnitude.

Examples
--------
>>> doc = Document()
>>> doc.h(2, "The answer")
>>> doc.p("Choose **50 topics**.", cls="answer")
>>> print(doc.markdown(), end="")
## The answer
<BLANKLINE>
> Choose **50 topics**.
>>> "<p class='answer'>Choose <strong>50 topics</strong>.</p>" in doc.html("t", {})
True
"""

from __future__ import annotations

import base64
import html
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["CSS", "WHAT_IF_JS", "Document", "format_value", "html_table", "markdown_table", "md_escape"]

#: rows of a table shown in the report (the CSV table holds them all)
MAX_ROWS = 60

CSS = """body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:60rem;
margin:2rem auto;padding:0 1rem;line-height:1.45;color:#222;overflow-wrap:anywhere}
.scroll{overflow-x:auto;max-width:100%;margin:.5rem 0 1rem}table{border-collapse:collapse;font-size:.85rem}
th,td{border:1px solid #ccc;padding:.2rem .45rem;text-align:left;overflow-wrap:normal}th{background:#f3f3f3}
figure{margin:1rem 0}figure img{max-width:100%;height:auto}figcaption{font-size:.85rem;color:#555}
.answer{background:#eef6ee;border-left:4px solid #4a4;padding:.6rem 1rem}p.answer{font-size:1.1rem}
.honest{background:#f6f3e8;border-left:4px solid #b90;padding:.6rem 1rem}ul.answer,ul.honest{padding-left:2.2rem}
li{margin:.2rem 0}
pre{background:#f6f6f6;padding:.5rem;overflow:auto;font-size:.8rem}
.note{font-size:.85rem;color:#555}.whatif{border:1px solid #ccc;border-radius:4px;padding:.4rem 1rem;margin:1rem 0}
.whatif input[type=range]{width:100%}.whatif h3{margin:.3rem 0}"""

#: the what-if panel's script: the curve statistics at the slider's topic count, read off the
#: curves embedded in the page (at a studied count exactly, between two linearly interpolated)
WHAT_IF_JS = """(function () {
  const D = JSON.parse(document.getElementById('whatif-data').textContent);
  const sel = document.getElementById('whatif-scenario'), n = document.getElementById('whatif-n');
  function at(c, key, x) {
    const ns = c.n, ys = c[key];
    for (let i = 0; i < ns.length; i++) {
      if (ns[i] === x) return ys[i];
      if (ns[i] > x) {
        if (i === 0 || ys[i - 1] === null || ys[i] === null) return null;
        return ys[i - 1] + (ys[i] - ys[i - 1]) * (x - ns[i - 1]) / (ns[i] - ns[i - 1]);
      }
    }
    return null;
  }
  function show() {
    const c = D.curves[sel.value];
    n.min = c.n[0]; n.max = c.n[c.n.length - 1];
    const x = Number(n.value);
    document.getElementById('whatif-n-out').textContent = x;
    for (const k in D.labels) {
      const v = at(c, k, x);
      document.getElementById('whatif-' + k).textContent = v === null ? '\u2013' : v.toFixed(3);
    }
    let lo = c.n[0], hi = c.n[c.n.length - 1];
    for (const m of c.n) { if (m <= x) lo = m; if (m >= x && hi > m) hi = m; }
    document.getElementById('whatif-how').textContent = c.n.includes(x)
      ? 'computed at this topic count' : 'interpolated between the studied counts ' + lo + ' and ' + hi;
  }
  sel.addEventListener('change', show);
  n.addEventListener('input', show);
  show();
})();"""


def _format_float(v: float) -> str:
    if not math.isfinite(v):
        return "–"
    if v == int(v) and abs(v) < 1e6:
        return str(int(v)) if abs(v) >= 1 or v == 0 else f"{v:.4g}"
    if 1e3 <= abs(v) < 1e9:
        return f"{v:.0f}"       # costs and counts: 15323, not 1.532e+04 next to 9418
    return f"{v:.4g}"


def format_value(v: Any) -> str:
    """A table cell: ``–`` for missing, ``yes``/``no``, whole numbers plain, costs rounded.

    Parameters
    ----------
    v : object
        A cell value (None, bool, int, float, numpy scalar or anything with ``str``).

    Returns
    -------
    str
        Large non-integers are rounded to whole numbers, small ones keep 4 significant digits.

    Examples
    --------
    >>> [format_value(v) for v in (9418.488, 0.09598, 107.0, float("nan"), None, True)]
    ['9418', '0.09598', '107', '–', '–', 'yes']
    """
    if v is None:
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return _format_float(float(v))
    return str(v)


def _more_rows(df: pd.DataFrame, max_rows: int) -> int:
    return max(0, len(df) - max_rows)


def markdown_table(df: pd.DataFrame, max_rows: int = MAX_ROWS) -> str:
    """``df`` as a Markdown table of at most ``max_rows`` rows (a note counts the rest)."""
    cols = [md_escape(str(c)) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, row in df.head(max_rows).iterrows():
        lines.append("| " + " | ".join(md_escape(format_value(v)).replace("|", "\\|") for v in row.tolist()) + " |")
    if _more_rows(df, max_rows):
        lines.append(f"\n({_more_rows(df, max_rows)} more rows in the CSV table)")
    return "\n".join(lines)


def html_table(df: pd.DataFrame, max_rows: int = MAX_ROWS) -> str:
    """``df`` as an HTML table of at most ``max_rows`` rows (a note counts the rest)."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = ["<tr>" + "".join(f"<td>{html.escape(format_value(v))}</td>" for v in row.tolist()) + "</tr>"
            for _, row in df.head(max_rows).iterrows()]
    more = (f"<p class='note'>({_more_rows(df, max_rows)} more rows in the CSV table)</p>"
            if _more_rows(df, max_rows) else "")
    return (f"<div class='scroll'><table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
            f"</div>{more}")


def _inline(text: str) -> str:
    """Escape, then render **bold** and `code` spans."""
    t = html.escape(text)
    t = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", t)
    return re.sub(r"`(.+?)`", r"<code>\1</code>", t)


def _cls(cls: str | None) -> str:
    return f" class='{cls}'" if cls else ""


# ------------------------------------------------------------------ Markdown, one function a block kind
#: what Markdown would turn into HTML or a link: a tag, comment or autolink start (``<img``,
#: ``</``, ``<!--``, ``<?``), an entity, and the ``](`` of an inline link or image
_MD_ACTIVE = re.compile(r"<(?=[A-Za-z/!?])|&(?=#?\w+;)|\](?=\()")
_MD_SAFE = {"<": "&lt;", "&": "&amp;", "]": "\\]"}


def md_escape(text: str) -> str:
    """``text`` with what Markdown renders as HTML or a link escaped, and line breaks made
    spaces (a name on a line of its own would start a block): names from the data (systems,
    scenarios, a study's description) stay text in ``report.md``, as ``report.html`` escapes them.

    Examples
    --------
    >>> md_escape("<img src=x onerror=alert(1)> [a](javascript:x) n <= 5")
    '&lt;img src=x onerror=alert(1)> [a\\\\](javascript:x) n <= 5'
    """
    return _MD_ACTIVE.sub(lambda m: _MD_SAFE[m.group()], re.sub(r"[\r\n]+", " ", text))


def _md_h(level: int, text: str) -> str:
    return "#" * level + " " + md_escape(text)


def _md_p(text: str, cls: str | None) -> str:
    return ("> " if cls else "") + md_escape(text)


def _md_ul(items: list[str], cls: str | None) -> str:
    return "\n".join(("> " if cls else "") + "- " + md_escape(i) for i in items)


def _md_table(df: pd.DataFrame, caption: str | None) -> str:
    return (f"*{md_escape(caption)}*\n\n" if caption else "") + markdown_table(df)


def _md_fig(name: str, caption: str) -> str:
    return f"![{name}](figures/{name}.png)\n\n*Figure {name}: {md_escape(caption)}* ([SVG](figures/{name}.svg))"


def _md_pre(text: str) -> str:
    fence = "`" * max(3, 1 + max((len(r) for r in re.findall("`+", text)), default=0))
    return fence + "\n" + text.rstrip() + "\n" + fence


def _md_whatif(data: Mapping[str, Any]) -> str:
    return ("*What if: `report.html` has a slider over topic counts that reads "
            + ", ".join(data["labels"].values()) + " off the curves (tables/curves.csv).*")


_MARKDOWN: dict[str, Callable[..., str]] = {"h": _md_h, "p": _md_p, "ul": _md_ul, "table": _md_table,
                                            "fig": _md_fig, "pre": _md_pre, "whatif": _md_whatif}


# ------------------------------------------------------------------ HTML, one function a block kind
def _html_h(level: int, text: str) -> str:
    anchor = "".join(ch if ch.isalnum() else "-" for ch in text.lower()).strip("-")
    return f"<h{level} id='{anchor}'>{html.escape(text)}</h{level}>"


def _html_p(text: str, cls: str | None) -> str:
    return f"<p{_cls(cls)}>{_inline(text)}</p>"


def _html_ul(items: list[str], cls: str | None) -> str:
    return f"<ul{_cls(cls)}>" + "".join(f"<li>{_inline(i)}</li>" for i in items) + "</ul>"


def _html_table(df: pd.DataFrame, caption: str | None) -> str:
    note = f"<p class='note'><em>{html.escape(caption)}</em></p>\n" if caption else ""
    return note + html_table(df)


def _html_pre(text: str) -> str:
    return f"<pre>{html.escape(text)}</pre>"


def _html_fig(name: str, caption: str, pngs: Mapping[str, bytes]) -> str:
    data = base64.b64encode(pngs[name]).decode("ascii")
    return (f"<figure id='fig-{name}' data-figure='{name}'>"
            f"<img alt='{name}' src='data:image/png;base64,{data}'>"
            f"<figcaption>Figure {html.escape(name)}: {html.escape(caption)}</figcaption></figure>")


def _html_whatif(data: Mapping[str, Any]) -> str:
    """The what-if panel: a scenario menu, a topic-count slider, the statistics it reads, the curves as JSON."""
    c0 = data["curves"][data["scenario"]]
    start = min(max(int(data["start"]), c0["n"][0]), c0["n"][-1])
    opts = "".join(f"<option{' selected' if k == data['scenario'] else ''} value='{html.escape(k)}'>"
                   f"{html.escape(k)}</option>" for k in data["curves"])
    rows = "".join(f"<tr><th>{html.escape(lab)}</th><td id='whatif-{html.escape(k)}'>–</td></tr>"
                   for k, lab in data["labels"].items())
    payload = json.dumps(data, allow_nan=False).replace("</", "<\\/")
    return (f"<section class='whatif' id='what-if'><h3>What if: another topic count</h3>"
            "<p class='note'>Move the slider to read the scenario's curves at any topic count between the "
            "studied ones; no server, the curves are in this page.</p>"
            f"<p><label>Scenario <select id='whatif-scenario'>{opts}</select></label></p>"
            f"<p><label for='whatif-n'>Topics: <strong><output id='whatif-n-out'>{start}</output></strong>"
            f"</label><input type='range' id='whatif-n' min='{c0['n'][0]}' max='{c0['n'][-1]}' step='1' "
            f"value='{start}'></p><div class='scroll'><table>{rows}</table></div>"
            "<p class='note' id='whatif-how'></p>"
            f"<script type='application/json' id='whatif-data'>{payload}</script>"
            f"<script>{WHAT_IF_JS}</script></section>")


_HTML: dict[str, Callable[..., str]] = {"h": _html_h, "p": _html_p, "ul": _html_ul, "table": _html_table,
                                        "pre": _html_pre, "whatif": _html_whatif}


class Document:
    """A report as blocks rendered both to Markdown and to HTML.

    Examples
    --------
    >>> import pandas as pd
    >>> doc = Document()
    >>> doc.table(pd.DataFrame({"n": [50], "swap": [0.0498]}), caption="targets")
    >>> print(doc.markdown(), end="")
    *targets*
    <BLANKLINE>
    | n | swap |
    |---|---|
    | 50 | 0.0498 |
    """

    def __init__(self) -> None:
        self.blocks: list[tuple[Any, ...]] = []

    def h(self, level: int, text: str) -> None:
        """A heading of ``level`` (1 the title)."""
        self.blocks.append(("h", level, text))

    def p(self, text: str, cls: str | None = None) -> None:
        """A paragraph; ``cls`` (``"answer"``, ``"honest"``) marks it as a quote / styled box."""
        self.blocks.append(("p", text, cls))

    def ul(self, items: Iterable[object], cls: str | None = None) -> None:
        """A bulleted list."""
        self.blocks.append(("ul", [str(i) for i in items], cls))

    def table(self, df: pd.DataFrame, caption: str | None = None) -> None:
        """A table (at most :data:`MAX_ROWS` rows shown) with an optional caption."""
        self.blocks.append(("table", df, caption))

    def fig(self, name: str, caption: str) -> None:
        """The figure ``figures/<name>.png`` with its caption."""
        self.blocks.append(("fig", name, caption))

    def whatif(self, data: Mapping[str, Any]) -> None:
        """The what-if panel: ``data`` holds ``curves`` (scenario -> ``n`` and one list a
        statistic), ``scenario`` (shown first), ``start`` (the slider's first count) and
        ``labels`` (statistic -> its name)."""
        self.blocks.append(("whatif", data))

    def pre(self, text: str) -> None:
        """Preformatted text."""
        self.blocks.append(("pre", text))

    def markdown(self) -> str:
        """The document as Markdown (figures linked from ``figures/``)."""
        return "\n\n".join(_MARKDOWN[b[0]](*b[1:]) for b in self.blocks) + "\n"

    def html(self, title: str, pngs: Mapping[str, bytes]) -> str:
        """The document as one self-contained HTML page, every figure in ``pngs`` embedded."""
        out = ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
               f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>"]
        for b in self.blocks:
            out.append(_html_fig(b[1], b[2], pngs) if b[0] == "fig" else _HTML[b[0]](*b[1:]))
        out.append("</body></html>")
        return "\n".join(out) + "\n"

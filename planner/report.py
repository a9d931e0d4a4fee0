"""Report writer: a study's results as a folder of Markdown, HTML, JSON, CSV and plots.

:func:`write_report` writes, into ``out``:

- ``report.md`` and ``report.html`` (self-contained: every plot embedded as a
  base64 PNG): the answer first (topics, and pool depth when known, and what they
  buy), then the details, provenance, and at the end the honest statement (mean
  score and topic count; interval and reversal rate from paired resampling; the
  judged share of the evaluated runs' top k);
- ``results.json``: every number, deterministic (no timestamps: the same seed and
  inputs give a byte-identical file);
- ``provenance.json``: planner and dependency versions, seed, sha256 of the
  inputs, the resolved config, the command, the wall-clock time;
- ``config.resolved.yaml``: the study with every default filled in;
- ``tables/*.csv`` and ``figures/*.png`` + ``figures/*.svg``.

The folder is built under a temporary name next to ``out`` and renamed into
place only when complete; an existing ``out`` is replaced only with
``force=True`` (else :class:`~planner.errors.InputError`). The temporary folder
is removed on any error, on Ctrl-C and on SIGTERM/SIGHUP (the process then ends
by that signal, as it would have).
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

from .errors import InputError

__all__ = ["FIGURES", "check_target", "dump_json", "jsonable", "write_report"]

# figure name -> (table it is drawn from, plots function name, caption)
FIGURES = {
    "required_topics": ("targets", "plot_required_topics",
                        "Topics each scenario needs to meet each target (bars; 'not reached' within the curve's "
                        "range), with the 95% interval on n where the target has one (black lines)."),
    "ci_width": ("curves", "plot_ci_width",
                 "Width of the 95% interval of a pair's mean difference against topic count "
                 "(median over pairs; band up to the 90th percentile)."),
    "swap_reversal": ("curves", "plot_swap_reversal",
                      "Swap rate (solid) and reversal rate (dashed), mean over system pairs."),
    "kendall_tau": ("curves", "plot_kendall_tau",
                    "Expected Kendall tau between the rankings from two independent topic sets."),
    "power": ("curves", "plot_power", "Power of the paired t-test at the scenario's min_diff, mean over pairs."),
    "generalizability": ("curves", "plot_generalizability",
                         "D-study Erho2 (solid) and Phi (dashed) against topic count, with their "
                         "intervals as bands (Feldt; Arteaga-Jeyaratnam-Franklin)."),
    "paired": ("paired", "plot_paired",
               "Extra topics one measure needs over another on the same topics (dot) and the 95% "
               "interval of that difference over the shared topic resamples (line); red: the interval "
               "excludes 0."),
    "components": ("components", "plot_components", "Variance components (systems, topics, residual)."),
    "pool_depth": ("pool", "plot_pool_depth",
                   "Judgments per topic against pool depth, and the share of the pool the qrels judge."),
    "budget": ("budget", "plot_budget", "Total cost against topics for each pool depth."),
}


#: curve figure -> {study target: its label on the figure}: targets drawn as reference lines
_TARGET_LINES = {"ci_width": {"ci_width": "width"}, "swap_reversal": {"swap_rate": "swap", "reversal_rate": "reversal"},
                 "kendall_tau": {"kendall_tau": "tau"}, "power": {"power": "power"},
                 "generalizability": {"erho2": "Erho2", "phi": "Phi"}}


# ------------------------------------------------------------------ JSON
def jsonable(obj):
    """Plain-Python, JSON-able copy of ``obj`` (``to_dict()`` results, numpy, paths; NaN -> None)."""
    from ._json import plain

    return plain(obj)


def versions() -> dict:
    """The versions behind every number: planner, Python and the libraries that compute or read."""
    import sys
    from importlib import metadata

    from . import __version__

    out = {"planner": __version__, "python": sys.version.split()[0]}
    for pkg in ("numpy", "scipy", "pandas", "statsmodels", "matplotlib", "ir-measures", "jsonschema",
                "pyyaml"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


def dump_json(obj) -> str:
    """Deterministic JSON text (indent 2, NaN as null, trailing newline)."""
    return json.dumps(jsonable(obj), indent=2, allow_nan=False, ensure_ascii=False) + "\n"


#: longest report folder name (the folder is built as ``.<name>.tmp-<pid>`` first)
MAX_NAME_BYTES = 200


def check_target(out: str | os.PathLike, *, force: bool = False,
                 keep: Sequence[str | os.PathLike] = ()) -> Path:
    """Raise :class:`InputError` when ``out`` exists and ``force`` is false, when ``out`` is
    the current folder or contains it (replacing it would pull the folder from under the
    command), when ``force`` would delete one of the inputs ``keep`` inside ``out``, or when
    ``out`` is a non-empty folder that is not a report (no ``provenance.json``)."""
    out = Path(out)
    where = out.resolve()
    cwd = Path.cwd().resolve()
    if where == cwd or where in cwd.parents:
        raise InputError("is the current folder or contains it; give the report a folder of its own (-o)",
                         file=out)
    if len(out.name.encode("utf-8")) > MAX_NAME_BYTES:
        raise InputError(f"folder name longer than {MAX_NAME_BYTES} bytes (the file system allows 255, "
                         "and the report is built under a longer temporary name)", file=out)
    if out.exists() and not force:
        raise InputError("report folder exists; use --force (force=True) to replace it", file=out)
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a folder", file=out)
    if out.exists():
        for k in keep:
            kp = Path(k).resolve()
            if kp == where or where in kp.parents:
                raise InputError(f"holds the input {k}, which replacing the folder would delete; "
                                 "choose another folder for the report", file=out)
        if not (out / "provenance.json").is_file() and any(out.iterdir()):
            raise InputError("is not a planner report folder (no provenance.json) and not empty; --force "
                             "replaces only report folders: choose another folder", file=out)
    # fail before the study runs when the folder cannot be written, but create nothing yet
    # (missing parent folders are made when the report is written, so a failed study
    # leaves none behind): the nearest existing ancestor must be a writable folder
    anc = where.parent
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise InputError(f"cannot create the report folder: {anc} is not a folder", file=out)
    if not os.access(anc, os.W_OK):
        raise InputError("cannot write the report folder here (permission denied)", file=out)
    return out


# ------------------------------------------------------------------ formatting
def _fmt(v) -> str:
    import numpy as np

    if v is None:
        return "–"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        if not math.isfinite(v):
            return "–"
        if v == int(v) and abs(v) < 1e6:
            return str(int(v)) if abs(v) >= 1 or v == 0 else f"{v:.4g}"
        if 1e3 <= abs(v) < 1e9:
            return f"{v:.0f}"       # costs and counts: 15323, not 1.532e+04 next to 9418
        return f"{v:.4g}"
    return str(v)


def _md_table(df: pd.DataFrame, max_rows: int = 60) -> str:
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for _, row in df.head(max_rows).iterrows():
        lines.append("| " + " | ".join(_fmt(v).replace("|", "\\|") for v in row.tolist()) + " |")
    if len(df) > max_rows:
        lines.append(f"\n({len(df) - max_rows} more rows in the CSV table)")
    return "\n".join(lines)


def _html_table(df: pd.DataFrame, max_rows: int = 60) -> str:
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
    body = []
    for _, row in df.head(max_rows).iterrows():
        body.append("<tr>" + "".join(f"<td>{html.escape(_fmt(v))}</td>" for v in row.tolist()) + "</tr>")
    more = (f"<p class='note'>({len(df) - max_rows} more rows in the CSV table)</p>"
            if len(df) > max_rows else "")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{more}"


_CSS = """body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;max-width:60rem;
margin:2rem auto;padding:0 1rem;line-height:1.45;color:#222}table{border-collapse:collapse;margin:.5rem 0 1rem;
font-size:.85rem}th,td{border:1px solid #ccc;padding:.2rem .45rem;text-align:left}th{background:#f3f3f3}
figure{margin:1rem 0}figure img{max-width:100%}figcaption{font-size:.85rem;color:#555}
.answer{background:#eef6ee;border-left:4px solid #4a4;padding:.6rem 1rem}.honest{background:#f6f3e8;
border-left:4px solid #b90;padding:.6rem 1rem}pre{background:#f6f6f6;padding:.5rem;overflow:auto;font-size:.8rem}
.note{font-size:.85rem;color:#555}"""


class _Doc:
    """A report as blocks rendered both to Markdown and to HTML."""

    def __init__(self) -> None:
        self.blocks: list[tuple] = []

    def h(self, level: int, text: str) -> None:
        self.blocks.append(("h", level, text))

    def p(self, text: str, cls: str | None = None) -> None:
        self.blocks.append(("p", text, cls))

    def ul(self, items, cls: str | None = None) -> None:
        self.blocks.append(("ul", [str(i) for i in items], cls))

    def table(self, df, caption: str | None = None) -> None:
        self.blocks.append(("table", df, caption))

    def fig(self, name: str, caption: str) -> None:
        self.blocks.append(("fig", name, caption))

    def pre(self, text: str) -> None:
        self.blocks.append(("pre", text))

    def markdown(self) -> str:
        out = []
        for b in self.blocks:
            kind = b[0]
            if kind == "h":
                out.append("#" * b[1] + " " + b[2])
            elif kind == "p":
                out.append(("> " if b[2] else "") + b[1])
            elif kind == "ul":
                out.append("\n".join(("> " if b[2] else "") + "- " + i for i in b[1]))
            elif kind == "table":
                out.append((f"*{b[2]}*\n\n" if b[2] else "") + _md_table(b[1]))
            elif kind == "fig":
                out.append(f"![{b[1]}](figures/{b[1]}.png)\n\n*Figure {b[1]}: {b[2]}* "
                           f"([SVG](figures/{b[1]}.svg))")
            elif kind == "pre":
                out.append("```\n" + b[1].rstrip() + "\n```")
        return "\n\n".join(out) + "\n"

    def html(self, title: str, pngs: Mapping[str, bytes]) -> str:
        out = ["<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
               f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"]
        for b in self.blocks:
            kind = b[0]
            if kind == "h":
                anchor = "".join(ch if ch.isalnum() else "-" for ch in b[2].lower()).strip("-")
                out.append(f"<h{b[1]} id='{anchor}'>{html.escape(b[2])}</h{b[1]}>")
            elif kind == "p":
                cls = f" class='{b[2]}'" if b[2] else ""
                out.append(f"<p{cls}>{_inline(b[1])}</p>")
            elif kind == "ul":
                cls = f" class='{b[2]}'" if b[2] else ""
                out.append(f"<ul{cls}>" + "".join(f"<li>{_inline(i)}</li>" for i in b[1]) + "</ul>")
            elif kind == "table":
                if b[2]:
                    out.append(f"<p class='note'><em>{html.escape(b[2])}</em></p>")
                out.append(_html_table(b[1]))
            elif kind == "fig":
                data = base64.b64encode(pngs[b[1]]).decode("ascii")
                out.append(f"<figure id='fig-{b[1]}' data-figure='{b[1]}'>"
                           f"<img alt='{b[1]}' src='data:image/png;base64,{data}'>"
                           f"<figcaption>Figure {html.escape(b[1])}: {html.escape(b[2])}</figcaption></figure>")
            elif kind == "pre":
                out.append(f"<pre>{html.escape(b[1])}</pre>")
        out.append("</body></html>")
        return "\n".join(out) + "\n"


def _inline(text: str) -> str:
    """Escape, then render **bold** and `code` spans."""
    import re

    t = html.escape(text)
    t = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", t)
    t = re.sub(r"`(.+?)`", r"<code>\1</code>", t)
    return t


# ------------------------------------------------------------------ figures
def _collection_panels(tables: Mapping[str, pd.DataFrame]) -> dict:
    """Scenario -> collection from the scenarios table (empty without one)."""
    sc = tables.get("scenarios")
    if sc is None or not {"scenario", "collection"} <= set(sc.columns):
        return {}
    return {str(s): str(c) for s, c in zip(sc["scenario"], sc["collection"])}


def _render_figures(tables: Mapping[str, pd.DataFrame], folder: Path) -> dict[str, bytes]:
    import matplotlib

    from . import plots

    pngs: dict[str, bytes] = {}
    folder.mkdir(parents=True, exist_ok=True)
    for name, (table, func, _) in FIGURES.items():
        df = tables.get(table)
        if df is None or len(df) == 0:
            continue
        if name == "power" and "power_mean" not in df.columns:
            continue
        if name in ("kendall_tau",) and "kendall_tau_mean" not in df.columns:
            continue
        if name in ("swap_reversal",) and "swap_rate_mean" not in df.columns:
            continue
        if name == "ci_width" and "ci_width_median" not in df.columns:
            continue
        if name == "generalizability" and ("erho2" not in df.columns or not df["erho2"].notna().any()):
            continue
        lines = _TARGET_LINES.get(name)
        tg = tables.get("targets")
        kw = {}
        if lines and tg is not None and len(tg) and {"target", "value"} <= set(tg.columns):
            # the targets the study set, as reference lines (at most 3 values each)
            vals = {lab: sorted({float(v) for v in tg.loc[tg["target"] == t, "value"]})
                    for t, lab in lines.items()}
            kw["targets"] = {k: v for k, v in vals.items() if 0 < len(v) <= 3}
        panels = _collection_panels(tables) if table == "curves" else {}
        if name == "budget" and tables.get("pool") is not None:
            kw["needed"] = tables["pool"]          # mark the topics each depth needs
        if len(set(panels.values())) > 1 and "scenario" in df.columns:
            # one panel per collection: different topic populations, and fewer lines per panel
            fig = plots.plot_panels(df, getattr(plots, func), panels, **kw)
        else:
            fig = getattr(plots, func)(df, **kw)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
        pngs[name] = buf.getvalue()
        (folder / f"{name}.png").write_bytes(pngs[name])
        fig.set_layout_engine("none")     # keep the layout computed for the PNG (saves a pass)
        # a fixed hash salt makes matplotlib's clip-path ids, and so the SVG bytes, reproducible
        with matplotlib.rc_context({"svg.hashsalt": "planner"}):
            fig.savefig(folder / f"{name}.svg", format="svg", metadata={"Date": None, "Creator": None})
    return pngs


# ------------------------------------------------------------------ the report
def _build_doc(results: Mapping, tables: Mapping[str, pd.DataFrame], provenance: Mapping,
               figures: Mapping[str, bytes]) -> _Doc:
    doc = _Doc()
    name = results.get("study", "study")
    doc.h(1, f"Study: {name}")
    if results.get("description"):
        doc.p(str(results["description"]).strip())

    ans = results.get("answer") or {}
    doc.h(2, "The answer")
    doc.p(ans.get("text", "No answer could be computed (see the warnings below)."), cls="answer")
    if ans.get("buys"):
        doc.ul(ans["buys"], cls="answer")

    scen = tables.get("scenarios")
    if scen is not None and len(scen):
        doc.h(2, "Scenarios")
        doc.p("Each row is one cell of the study grid; every setting is listed, defaults included "
              "(the full resolved config is in `config.resolved.yaml` and `results.json`).")
        doc.table(scen)

    tg = tables.get("targets")
    if tg is not None and len(tg):
        doc.h(2, "Topics needed")
        doc.p("Smallest topic count meeting each target, per scenario. `how` names the computation "
              "(the method's formula solved for n, the method evaluated at each candidate n by "
              "bisection between the studied topic counts, the paired t-test power formula, or the "
              "D-study). An empty count means not reached: for the resampling methods within the topic counts "
              "studied; the closed forms solve at any n, and a count beyond the largest studied one "
              "says so in `how`. An empty `lower`/`upper` next to a count means no interval on n was "
              "computed for it (`how` says why), not that the target was missed. `kendall_tau v` is the same target as `swap_rate (1 - v) / 2` (tau = "
              "1 - 2 swap), so the two get the same count.")
        doc.table(tg)
        if "required_topics" in figures:
            doc.fig("required_topics", FIGURES["required_topics"][2])

    pr = tables.get("paired")
    if pr is not None and len(pr):
        doc.h(2, "Measures compared on the same topics")
        nres = int(pr["resamples"].iloc[0])
        doc.p(f"Scenarios that differ only in the measure score the same topics, so the {nres} topic "
              "resamples behind their intervals on n are the same draws, and each resample is solved "
              "for both measures. `extra` is the count of the measure needing more (`more`) minus that "
              "of the one needing fewer (`fewer`); `extra_lower` and `extra_upper` are the 95% interval "
              "of that difference resample by resample, and `share_*` the share of resamples in which `more` needs more, the same or fewer topics. The two "
              "measures' own intervals on n can overlap while this interval excludes 0, when both "
              "measures find the same topics hard. `separated`: the interval excludes 0; `not "
              "separated`: this collection cannot tell which measure needs fewer topics (`order not stable`: "
              "in most resamples the order is even the other way). This compares "
              "the measures' sampling behaviour on these runs, not which measure is the better one.")
        cols = ["collection", "target", "value", "fewer", "more", "n_fewer", "n_more", "extra",
                "extra_median", "extra_lower", "extra_upper", "share_more", "share_equal", "share_fewer", "verdict"]
        if "paired" in figures:
            doc.fig("paired", FIGURES["paired"][2])
        doc.table(pr[[c for c in cols if c in pr.columns]], caption="paired.csv")

    cv = tables.get("curves")
    if cv is not None and len(cv):
        doc.h(2, "Curves against topic count")
        doc.p("Rates are means over all system pairs; the interval width is the median (and 90th "
              "percentile) over pairs. Each scenario names the variance that drives its numbers.")
        colls = list(dict.fromkeys(_collection_panels(tables).values()))
        if len(colls) > 1:
            doc.p(f"Each figure has one panel per collection ({', '.join(colls)}), with a shared y axis; "
                  "a panel's legend leaves out its collection's name.")
        for f in ("ci_width", "swap_reversal", "kendall_tau", "power", "generalizability"):
            if f in figures:
                doc.fig(f, FIGURES[f][2])
        cols = [c for c in ("scenario", "n_topics", "ci_width_median", "swap_rate_mean",
                            "reversal_rate_mean", "kendall_tau_mean", "power_mean", "erho2", "phi")
                if c in cv.columns]
        doc.table(cv[cols], caption="curves.csv (all columns in tables/curves.csv)")

    comp = tables.get("components")
    if comp is not None and len(comp):
        doc.h(2, "Variance components")
        doc.p("Two-way crossed random-effects model x[s,t] = mu + a[s] + b[t] + e[s,t]; ANOVA (method of "
              "moments) on complete data, REML otherwise. Erho2 and Phi are the D-study generalizability "
              "and dependability coefficients at the collection's topic count.")
        doc.table(comp)
        if "components" in figures:
            doc.fig("components", FIGURES["components"][2])

    al = tables.get("allocation")
    if al is not None and len(al):
        doc.h(2, "Stratified allocation")
        doc.p("Topics per stratum for each total n: proportional (n_k = n W_k) and Neyman-optimal "
              "(n_k proportional to W_k sigma_k), with the interval width and power of a pair's "
              "stratified mean difference (sigma_k^2 = 2 var_e of stratum k). `width_uniform_lower_bound` "
              "is the width of an unstratified (uniformly sampled) topic set if a pair's effect were the "
              "same in every stratum: the real unstratified width can only be larger, since the "
              "between-strata spread of a pair's effect, which needs systems common to all strata, is "
              "taken as 0. The Neyman-optimal width can fall slightly below it; the proportional one "
              "equals it up to degrees of freedom (at small n the uniform width can be below the stratified "
              "ones only because it uses n - 1 degrees of freedom where they use n - K, K strata). When "
              "no system took part in every stratum (the systems column then adds up disjoint sets), "
              "these widths describe a future pair of systems run on every stratum's topics, with each "
              "stratum's residual variance.")
        doc.table(al)

    vt = tables.get("variants")
    vtt = tables.get("variant_targets")
    if (vt is not None and len(vt)) or (vtt is not None and len(vtt)):
        doc.h(2, "Topics against query variants")
    if vtt is not None and len(vtt):
        doc.p("Topics each ranking target needs when every topic is written with `n_variants` query "
              "variants (its score the mean over them), and the query formulations that makes (`queries`, "
              "topics x variants). Each pair's mean difference stays the collection's; its variance over "
              "topics is split into a topic part and a within-topic (variant) part, and the variant part "
              "shrinks as 1/`n_variants`: `variance_ratio` is the median over pairs of the variance with "
              "`n_variants` against the collection's own, `variant_share` the median share of the variant "
              "part in one variant's variance (the counts need not move with these medians: the close pairs, "
              "which set the swap rate, count most). At the collection's own number of variants the count is "
              "the scenario's. Counts above the collection's number of variants extrapolate the model. "
              "`n_without_duplicates` (when runs score the same on every topic): the counts with one run of "
              "each tied group. `lower`, `upper`: a 95% interval on n from the same 200 topic resamples as the "
              "scenario's targets (each topic drawn with all its variants, the model re-fitted), so at the "
              "collection's own number of variants it is the scenario's interval; like that one it reflects "
              "the uncertainty of the collection's own estimates only. `cost` (with `costs: {topic, variant}`): "
              "topics x (topic cost + variants x variant cost); without it, cost is not included: a variant "
              "usually costs less to write than a topic, but may add judgments.")
        doc.table(vtt)
    if vt is not None and len(vt):
        doc.p("Three-facet D-study of Erho2 and Phi: systems x topics x query variants per topic.")
        doc.table(vt)

    dr = tables.get("filtered")
    filt_sc = [(sc.get("name"), sc["data"]["n_topics_before_filter"] - sc["data"]["n_topics"],
                sc["data"]["n_topics_before_filter"]) for sc in results.get("scenarios") or []
               if (sc.get("settings") or {}).get("filter") and "n_topics_before_filter" in (sc.get("data") or {})]
    if (dr is not None and len(dr)) or filt_sc:
        doc.h(2, "Informative-topic filtering")
        if filt_sc:
            # say it when a filter removed nothing: the table lists dropped topics only
            doc.p("Topics removed by each filtered scenario: " + "; ".join(
                f"{name}: {k} of {t}" if k else f"{name}: none of {t}" for name, k, t in filt_sc)
                + ". A filter that removes no topic changes nothing; one that does averages over a "
                  "different topic population, so its mean is not comparable with the unfiltered one, and a "
                  "new collection has to create the removed share of topics too, since which topics will be "
                  "uninformative is not known in advance: the scenarios table's `topics_to_build` is the "
                  "needed count divided by the share of topics the filter kept here.")
        if dr is not None and len(dr):
            doc.table(dr)

    pool = tables.get("pool")
    if pool is not None and len(pool):
        doc.h(2, "Pool depth")
        doc.p("Judgments per topic = distinct documents in the union of the pooled runs' top k; "
              "pool judged share = share of those documents, over all topics, that the existing qrels judge "
              "(below 1, the re-scored depth-k pool counts the unjudged rest as non-relevant).")
        cols = [c for c in ("scenario", "depth", "judgments_per_topic", "pool_judged_share",
                            "kendall_tau_vs_full", "var_e_ratio", "n_topics_needed", "cost_per_topic",
                            "total_cost", "tau_ok") if c in pool.columns]
        doc.table(pool[cols], caption="pool.csv (all columns in tables/pool.csv); n_topics_needed is the "
                                      "largest over the scenario's targets (each in its n_<target> column), "
                                      "re-scored at each depth")
        fewer, ap_like, spans = [], False, []
        for sc in results.get("scenarios") or []:
            pl = sc.get("pool") or {}
            full = (pl.get("full") or {}).get("n_topics_needed")
            below = [(d["depth"], d["n_topics_needed"]) for d in pl.get("depths") or []
                     if full is not None and d.get("n_topics_needed") is not None
                     and d["n_topics_needed"] < 0.9 * full]     # a topic or two is the solver's rounding
            if below:
                fewer.append(f"{sc.get('name')} at depth " + ", ".join(str(k) for k, _ in below)
                             + f" ({', '.join(str(n) for _, n in below)} topics, against {full} with the full "
                               "judgments)")
                meas = str((sc.get("settings") or {}).get("measure") or "")
                ap_like = ap_like or bool(re.match(r"(AP|map)\b", meas, flags=re.IGNORECASE))
                # the full-judgment count's own interval on n (its binding target's), when it has one
                tg = [t for t in sc.get("targets") or [] if t.get("n_topics") == full
                      and t.get("lower") is not None and t.get("upper") is not None]
                if tg:
                    spans.append(f"{sc.get('name')}: {full} [{tg[0]['lower']}, {tg[0]['upper']}]")
        if fewer:
            doc.p("Fewer topics (by more than a tenth) than with the full judgments: " + "; ".join(fewer) + ". "
                  "Restricting the judgments changes what the measure measures, not only its noise."
                  + (" For AP two effects pull opposite ways: relevant documents outside every run's top k stop "
                     "counting in the numerator, which raises the count, and in the denominator (the number of "
                     "relevant documents), which scales up the topics whose relevant documents the runs miss and "
                     "lowers it; on TREC DL 2019 the denominator wins from depth 50 on (docs/planning.md, 'Fewer "
                     "topics at a shallower depth')." if ap_like else "")
                  + " The depth counts have no interval on n, and a difference of this size can lie within the "
                    "full-judgment count's own uncertainty"
                  + (f" ({'; '.join(spans)})" if spans else "")
                  + ". A smaller count would say that the ranking under the restricted judgments is steadier "
                    "across topic samples, not that judging less measures the full-judgment scores better: "
                    "`kendall_tau_vs_full` says how far the two rankings agree.")
        if "pool_depth" in figures:
            doc.fig("pool_depth", FIGURES["pool_depth"][2])
        if "budget" in figures:
            doc.fig("budget", FIGURES["budget"][2])

    warns = results.get("warnings") or []
    if warns:
        doc.h(2, "Warnings")
        doc.ul(warns)

    doc.h(2, "Provenance")
    items = [f"planner {provenance.get('planner_version', '?')}; seed {provenance.get('seed')}; "
             f"resamples {provenance.get('resamples')}"]
    vers = provenance.get("versions") or {}
    if vers:
        items.append("versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()))
    for inp in provenance.get("inputs") or []:
        items.append(f"input `{inp.get('path')}` sha256 `{inp.get('sha256')}`")
    if provenance.get("command"):
        items.append(f"command: `{provenance['command']}`")
    if provenance.get("finished_utc"):
        items.append(f"finished {provenance['finished_utc']} (UTC)")
    doc.ul(items)
    doc.p("Tables: " + ", ".join(f"`tables/{n}.csv`" for n in sorted(tables) if tables[n] is not None)
          + ". Figures: " + ", ".join(f"`figures/{n}.png`/`.svg`" for n in figures) + ".")

    hs = results.get("honest") or {}
    doc.h(2, "The honest statement")
    for para in hs.get("paragraphs", []):
        doc.p(para, cls="honest")
    ht = tables.get("honest")
    if ht is not None and len(ht):
        doc.table(ht, caption="per scenario: mean, topics, paired-resampling interval and reversal rate "
                              "of the top two systems (the second skips runs identical to the best, "
                              "named in identical_to_best), judged share")
    if provenance.get("elapsed_seconds") is not None:
        doc.p(f"This study ran in {provenance['elapsed_seconds']:.1f} s"
              + (f" with {provenance.get('jobs')} job(s)" if provenance.get("jobs") else "")
              + " (loading, computing and plotting; `benchmarks/bench_study.py` times the whole "
                "command including start-up).")
    return doc


def write_report(result: Any, out: str | os.PathLike, *, force: bool = False,
                 provenance: Mapping | None = None, config: Mapping | None = None,
                 tables: Mapping[str, pd.DataFrame] | None = None) -> Path:
    """Write a report folder for ``result`` at ``out``; returns the folder path.

    ``result`` is a :class:`planner.study.StudyResult` or a mapping of
    JSON-able results (keys used: ``study``, ``description``, ``answer``
    {``text``, ``buys``}, ``honest`` {``paragraphs``}, ``warnings``); then
    ``tables`` (name -> DataFrame; known names: scenarios, targets, curves,
    components, variants, filtered, allocation, pool, budget, honest),
    ``provenance`` and ``config`` may be given separately.
    """
    if hasattr(result, "results") and hasattr(result, "tables"):
        results = result.results
        tables = result.tables if tables is None else tables
        provenance = result.provenance if provenance is None else provenance
        config = result.config if config is None else config
    else:
        results = dict(result)
    tables = dict(tables or {})
    provenance = dict(provenance or {})
    config = dict(config or results.get("config") or {})
    out = check_target(out, force=force)
    with _cleanup_on_signals() as guard:
        return _write(results, tables, provenance, config, out, force, guard)


class _Terminated(BaseException):
    """Raised by the SIGTERM handler while a report is written, so that the temporary
    folder is removed on the way out (Python's default SIGTERM action skips ``finally``)."""


class _Guard:
    def __init__(self) -> None:
        self.critical = False
        self.pending: int | None = None

    def handler(self, signum, frame):
        if self.critical:          # renaming into place: finish that first, then stop
            self.pending = signum
            return
        raise _Terminated(signum)

    def leave_critical(self) -> None:
        self.critical = False
        if self.pending is not None:
            signum, self.pending = self.pending, None
            raise _Terminated(signum)


class _cleanup_on_signals:
    """While a report is written: SIGTERM (and SIGHUP), when they have their default action,
    raise :class:`_Terminated`, so the ``finally`` clauses remove the temporary folder;
    afterwards the default action is restored and the signal raised again, so the process
    ends as it would have (killed by that signal)."""

    def __enter__(self) -> _Guard:
        import signal
        import threading

        self.guard = _Guard()
        self.old: dict = {}
        if threading.current_thread() is threading.main_thread():
            for name in ("SIGTERM", "SIGHUP"):
                sig = getattr(signal, name, None)
                if sig is None:
                    continue
                # only the default action (end the process) is replaced: an ignored signal
                # stays ignored and a handler someone installed stays theirs
                if signal.getsignal(sig) is not signal.SIG_DFL:
                    continue
                try:
                    self.old[sig] = signal.signal(sig, self.guard.handler)
                except (ValueError, OSError):   # pragma: no cover - not allowed here
                    pass
        return self.guard

    def __exit__(self, exc_type, exc, tb):
        import signal

        for sig, old in self.old.items():
            signal.signal(sig, old)
        if isinstance(exc, _Terminated):
            # the folder is cleaned up: now end the way the signal would have ended us
            signal.raise_signal(exc.args[0])
            raise SystemExit(128 + int(exc.args[0]))   # the previous handler returned
        return False


def _write(results, tables, provenance, config, out: Path, force: bool, guard: _Guard) -> Path:
    import yaml

    parent = out.resolve().parent
    tmp = parent / f".{out.name}.tmp-{os.getpid()}"
    try:
        parent.mkdir(parents=True, exist_ok=True)
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir()
    except OSError as exc:
        raise InputError(f"cannot create the report folder: {exc.strerror}", file=out) from None
    try:
        (tmp / "tables").mkdir()
        for name, df in tables.items():
            if df is not None:
                df.to_csv(tmp / "tables" / f"{name}.csv", index=False, float_format="%.10g")
        pngs = _render_figures(tables, tmp / "figures")
        t0 = provenance.pop("_t0", None)
        if t0 is not None:      # the study's start: time everything up to the finished figures
            import time

            provenance["elapsed_seconds"] = round(time.perf_counter() - t0, 2)
            provenance["elapsed_includes"] = "loading, computing and plotting (not interpreter start-up)"
        (tmp / "results.json").write_text(dump_json(results), encoding="utf-8")
        (tmp / "provenance.json").write_text(dump_json(provenance), encoding="utf-8")
        (tmp / "config.resolved.yaml").write_text(
            yaml.safe_dump(jsonable(config), sort_keys=False, allow_unicode=True), encoding="utf-8")
        doc = _build_doc(results, tables, provenance, pngs)
        (tmp / "report.md").write_text(doc.markdown(), encoding="utf-8")
        (tmp / "report.html").write_text(doc.html(f"planner study: {results.get('study', '')}", pngs),
                                         encoding="utf-8")
        # move into place only now that everything is written (a signal waits for the renames)
        guard.critical = True
        try:
            if out.exists():
                if not force:
                    raise InputError("report folder exists; use --force (force=True) to replace it", file=out)
                old = parent / f".{out.name}.old-{os.getpid()}"
                if old.exists():
                    shutil.rmtree(old)
                os.replace(out, old)
                os.replace(tmp, out)
                shutil.rmtree(old, ignore_errors=True)
            else:
                os.replace(tmp, out)
        finally:
            guard.leave_critical()
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out

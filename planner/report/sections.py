"""The report's sections, in order: one function a section, each adding its blocks to a Document.

Every section reads the study's results as plain dicts (:meth:`StudyResult.results`, the
shape ``results.json`` holds) and its tables (name -> DataFrame); a section whose table is
missing or empty adds nothing. :func:`build_document` runs them all.

Examples
--------
>>> from planner.report import sections
>>> doc = sections.build_document({"study": "demo", "answer": {"text": "Choose **50 topics**."}},
...                               tables={}, provenance={"seed": 1}, figures={})
>>> print(doc.markdown().splitlines()[0])
# Study: demo
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .figure_set import FIGURES, collection_panels, curve_columns, curve_figures
from .render import Document

__all__ = ["SECTIONS", "Inputs", "build_document"]


@dataclass(frozen=True)
class Inputs:
    """What the sections read: the results (plain dicts), the tables, the provenance and the
    names of the figures drawn (name -> PNG bytes)."""

    results: Mapping[str, Any]
    tables: Mapping[str, pd.DataFrame]
    provenance: Mapping[str, Any]
    figures: Mapping[str, bytes]

    def table(self, name: str) -> pd.DataFrame | None:
        """The table ``name`` when it has rows, else None."""
        df = self.tables.get(name)
        return df if df is not None and len(df) else None

    def scenarios(self) -> list[dict]:
        """The scenario results (plain dicts)."""
        return list(self.results.get("scenarios") or [])

    def figure(self, doc: Document, name: str) -> None:
        """Add the figure ``name`` when it was drawn."""
        if name in self.figures:
            doc.fig(name, FIGURES[name].caption)


def title(doc: Document, inp: Inputs) -> None:
    """The study's name and description."""
    doc.h(1, f"Study: {inp.results.get('study', 'study')}")
    if inp.results.get("description"):
        doc.p(str(inp.results["description"]).strip())


#: the answer table's columns as the report heads them
_ANSWER_HEADS = {"topics": "topics", "which": "which count", "ci_width_median": "interval width (median)",
                 "swap_rate_mean": "swap rate (mean)", "power_mean": "power (mean)"}


def _lead_and_details(ans: Mapping[str, Any]) -> tuple[str, str]:
    """The answer's headline and the rest of its text (a plain ``text`` is all headline)."""
    text = str(ans.get("text") or "")
    lead = str(ans.get("headline") or "")
    if not lead:
        return text or "No answer could be computed (see the warnings below).", ""
    return lead, text[len(lead):].strip() if text.startswith(lead) else text


def _what_if(doc: Document, inp: Inputs) -> None:
    """The what-if panel: the curves of the answer table's statistics, embedded for a topic-count slider."""
    cv, at = inp.table("curves"), inp.table("answer")
    if cv is None or at is None:
        return
    cols = [c for c in at.columns if c in cv.columns and c != "n_topics"]
    if not cols:
        return
    curves = {str(name): {"n": [int(v) for v in g["n_topics"]],
                          **{c: [None if pd.isna(v) else float(v) for v in g[c]] for c in cols}}
              for name, g in cv.sort_values("n_topics").groupby("scenario", sort=False)}
    scen = inp.scenarios()
    first = str(scen[0].get("name")) if scen and str(scen[0].get("name")) in curves else next(iter(curves))
    start = int(at["topics"].max())
    doc.whatif({"curves": curves, "scenario": first, "start": start,
                "labels": {c: _ANSWER_HEADS[c] for c in cols}})


def answer(doc: Document, inp: Inputs) -> None:
    """The answer first (at most 40 words), what its counts buy, a what-if slider, then the details."""
    ans = inp.results.get("answer") or {}
    doc.h(2, "The answer")
    lead, details = _lead_and_details(ans)
    doc.p(lead, cls="answer")
    at = inp.table("answer")
    if at is not None:
        doc.table(at.rename(columns=_ANSWER_HEADS),
                  caption="What these counts buy: the scenario's curve statistics computed at exactly each "
                          "count (tables/answer.csv)")
    _what_if(doc, inp)
    if details:
        doc.p(details)
    if ans.get("buys"):
        doc.ul(ans["buys"], cls="answer")


def scenarios(doc: Document, inp: Inputs) -> None:
    """The study grid, one row a scenario."""
    scen = inp.table("scenarios")
    if scen is None:
        return
    doc.h(2, "Scenarios")
    doc.p("Each row is one cell of the study grid; every setting is listed, defaults included "
          "(the full resolved config is in `config.resolved.yaml` and `results.json`).")
    doc.table(scen)


def topics_needed(doc: Document, inp: Inputs) -> None:
    """The topics each scenario needs for each target, with the interval on n."""
    tg = inp.table("targets")
    if tg is None:
        return
    doc.h(2, "Topics needed")
    doc.p("Smallest topic count meeting each target, per scenario. `how` names the computation "
          "(the method's formula solved for n, the method evaluated at each candidate n by "
          "bisection between the studied topic counts, the paired t-test power formula, or the "
          "D-study). An empty count means not reached: for the resampling methods within the topic counts "
          "studied; the closed forms solve at any n, and a count beyond the largest studied one "
          "says so in `how`. An empty `lower`/`upper` next to a count means no interval on n was "
          "computed for it (`how` says why), not that the target was missed. `kendall_tau v` is the same "
          "target as `swap_rate (1 - v) / 2` (tau = "
          "1 - 2 swap), so the two get the same count.")
    doc.table(tg)
    inp.figure(doc, "required_topics")


#: the paired table's columns shown in the report
_PAIRED_COLUMNS = ("collection", "target", "value", "fewer", "more", "n_fewer", "n_more", "extra",
                   "extra_median", "extra_lower", "extra_upper", "share_more", "share_equal", "share_fewer",
                   "verdict")


def paired(doc: Document, inp: Inputs) -> None:
    """Measures compared on the same topic resamples."""
    pr = inp.table("paired")
    if pr is None:
        return
    doc.h(2, "Measures compared on the same topics")
    nres = int(pr["resamples"].iloc[0])
    doc.p(f"Scenarios that differ only in the measure score the same topics, so the {nres} topic "
          "resamples behind their intervals on n are the same draws, and each resample is solved "
          "for both measures. `extra` is the count of the measure needing more (`more`) minus that "
          "of the one needing fewer (`fewer`); `extra_lower` and `extra_upper` are the 95% interval "
          "of that difference resample by resample, and `share_*` the share of resamples in which `more` "
          "needs more, the same or fewer topics. The two "
          "measures' own intervals on n can overlap while this interval excludes 0, when both "
          "measures find the same topics hard. `separated`: the interval excludes 0; `not "
          "separated`: this collection cannot tell which measure needs fewer topics (`order not stable`: "
          "in most resamples the order is even the other way). This compares "
          "the measures' sampling behaviour on these runs, not which measure is the better one.")
    inp.figure(doc, "paired")
    doc.table(pr[[c for c in _PAIRED_COLUMNS if c in pr.columns]], caption="paired.csv")


def curves(doc: Document, inp: Inputs) -> None:
    """The curves against topic count: the figures and the table's main columns."""
    cv = inp.table("curves")
    if cv is None:
        return
    doc.h(2, "Curves against topic count")
    doc.p("Rates are means over all system pairs; the interval width is the median (and 90th "
          "percentile) over pairs. Each scenario names the variance that drives its numbers.")
    colls = list(dict.fromkeys(collection_panels(inp.tables).values()))
    if len(colls) > 1:
        doc.p(f"Each figure has one panel per collection ({', '.join(colls)}), with a shared y axis; "
              "a panel's legend leaves out its collection's name.")
    for f in curve_figures():
        inp.figure(doc, f)
    cols = [c for c in ("scenario", "n_topics", *curve_columns()) if c in cv.columns]
    doc.table(cv[cols], caption="curves.csv (all columns in tables/curves.csv)")


def components(doc: Document, inp: Inputs) -> None:
    """The variance components of each scenario."""
    comp = inp.table("components")
    if comp is None:
        return
    doc.h(2, "Variance components")
    doc.p("Two-way crossed random-effects model x[s,t] = mu + a[s] + b[t] + e[s,t]; ANOVA (method of "
          "moments) on complete data, REML otherwise. Erho2 and Phi are the D-study generalizability "
          "and dependability coefficients at the collection's topic count.")
    doc.table(comp)
    inp.figure(doc, "components")


def allocation(doc: Document, inp: Inputs) -> None:
    """Topics per stratum: proportional and Neyman-optimal allocation."""
    al = inp.table("allocation")
    if al is None:
        return
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


_VARIANT_TARGETS = (
    "Topics each ranking target needs when every topic is written with `n_variants` query "
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


def variants(doc: Document, inp: Inputs) -> None:
    """Topics against query variants per topic (targets and the three-facet D-study)."""
    vt, vtt = inp.table("variants"), inp.table("variant_targets")
    if vt is None and vtt is None:
        return
    doc.h(2, "Topics against query variants")
    if vtt is not None:
        doc.p(_VARIANT_TARGETS)
        doc.table(vtt)
    if vt is not None:
        doc.p("Three-facet D-study of Erho2 and Phi: systems x topics x query variants per topic.")
        doc.table(vt)


def _filtered_counts(inp: Inputs) -> list[tuple[Any, int, int]]:
    """(scenario, topics removed, topics before) for every scenario with a filter."""
    return [(sc.get("name"), sc["data"]["n_topics_before_filter"] - sc["data"]["n_topics"],
             sc["data"]["n_topics_before_filter"]) for sc in inp.scenarios()
            if (sc.get("settings") or {}).get("filter") and "n_topics_before_filter" in (sc.get("data") or {})]


def filtering(doc: Document, inp: Inputs) -> None:
    """Informative-topic filtering: how many topics each filter removed, and which."""
    dr = inp.table("filtered")
    filt_sc = _filtered_counts(inp)
    if dr is None and not filt_sc:
        return
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
    if dr is not None:
        doc.table(dr)


#: the pool table's columns shown in the report
_POOL_COLUMNS = ("scenario", "depth", "judgments_per_topic", "pool_judged_share", "kendall_tau_vs_full",
                 "var_e_ratio", "n_topics_needed", "n_topics_plan", "cost_per_topic", "total_cost", "tau_ok")


@dataclass
class _FewerTopics:
    """Scenarios where a restricted pool needs fewer topics than the full judgments."""

    fewer: list[str]
    ap_like: bool
    spans: list[str]


def _fewer_topics(inp: Inputs) -> _FewerTopics:
    out = _FewerTopics([], False, [])
    for sc in inp.scenarios():
        pl = sc.get("pool") or {}
        full = (pl.get("full") or {}).get("n_topics_needed")
        below = [(d["depth"], d["n_topics_needed"]) for d in pl.get("depths") or []
                 if full is not None and d.get("n_topics_needed") is not None
                 and d["n_topics_needed"] < 0.9 * full]     # a topic or two is the solver's rounding
        if not below:
            continue
        out.fewer.append(f"{sc.get('name')} at depth " + ", ".join(str(k) for k, _ in below)
                         + f" ({', '.join(str(n) for _, n in below)} topics, against {full} with the full "
                           "judgments)")
        meas = str((sc.get("settings") or {}).get("measure") or "")
        out.ap_like = out.ap_like or bool(re.match(r"(AP|map)\b", meas, flags=re.IGNORECASE))
        # the full-judgment count's own interval on n (its binding target's), when it has one
        tg = [t for t in sc.get("targets") or [] if t.get("n_topics") == full
              and t.get("lower") is not None and t.get("upper") is not None]
        if tg:
            out.spans.append(f"{sc.get('name')}: {full} [{tg[0]['lower']}, {tg[0]['upper']}]")
    return out


_AP_EFFECTS = (" For AP two effects pull opposite ways: relevant documents outside every run's top k stop "
               "counting in the numerator, which raises the count, and in the denominator (the number of "
               "relevant documents), which scales up the topics whose relevant documents the runs miss and "
               "lowers it; on TREC DL 2019 the denominator wins from depth 50 on (docs/planning.md, 'Fewer "
               "topics at a shallower depth').")


def _fewer_topics_text(ft: _FewerTopics) -> str:
    return ("Fewer topics (by more than a tenth) than with the full judgments: " + "; ".join(ft.fewer) + ". "
            "Restricting the judgments changes what the measure measures, not only its noise."
            + (_AP_EFFECTS if ft.ap_like else "")
            + " The depth counts have no interval on n, and a difference of this size can lie within the "
              "full-judgment count's own uncertainty"
            + (f" ({'; '.join(ft.spans)})" if ft.spans else "")
            + ". A smaller count would say that the ranking under the restricted judgments is steadier "
              "across topic samples, not that judging less measures the full-judgment scores better: "
              "`kendall_tau_vs_full` says how far the two rankings agree.")


def pool(doc: Document, inp: Inputs) -> None:
    """Pool depth: judgments per topic, judged share, and the topics each depth needs."""
    pl = inp.table("pool")
    if pl is None:
        return
    doc.h(2, "Pool depth")
    doc.p("Judgments per topic = distinct documents in the union of the pooled runs' top k; "
          "pool judged share = share of those documents, over all topics, that the existing qrels judge "
          "(below 1, the re-scored depth-k pool counts the unjudged rest as non-relevant).")
    cols = [c for c in _POOL_COLUMNS if c in pl.columns]
    doc.table(pl[cols], caption="pool.csv (all columns in tables/pool.csv); n_topics_needed is the "
                                "largest over the scenario's targets (each in its n_<target> column), "
                                "re-scored at each depth; total_cost is n_topics_plan, the count to plan "
                                "with, x cost_per_topic")
    ft = _fewer_topics(inp)
    if ft.fewer:
        doc.p(_fewer_topics_text(ft))
    inp.figure(doc, "pool_depth")
    inp.figure(doc, "budget")


#: the selection table's columns shown in the report (the ``all`` rows)
_SELECTION_COLUMNS = ("collection", "measure", "k", "n_dev", "n_test", "optimism", "optimism_se", "pick_accuracy",
                      "pick_accuracy_se", "width")


def _selection_plans(inp: Inputs) -> list[str]:
    """One sentence per collection with a split plan (results["selection"])."""
    out = []
    for s in inp.results.get("selection") or []:
        p = s.get("plan")
        if not p:
            continue
        want = [f"pick accuracy >= {p['accuracy_target']:g}" if p.get("accuracy_target") is not None else "",
                f"interval width <= {p['width_target']:g}" if p.get("width_target") is not None else ""]
        want_s = " and ".join(w for w in want if w)
        if p.get("met"):
            out.append(f"{s['collection']} ({s['measure']}): for {want_s}, split **{p['budget']} topics** into "
                       f"{p['n_dev']} dev + {p['n_test']} test (pick accuracy {p['pick_accuracy']:.3f}, "
                       f"interval width {p['width']:.3f}).")
        else:
            out.append(f"{s['collection']} ({s['measure']}): no split of the collection's topics meets "
                       f"{want_s} (best pick accuracy seen {p['pick_accuracy']:.3f}).")
    return out


def selection(doc: Document, inp: Inputs) -> None:
    """Selection on the test topics: optimism of the best of k, probability of a right pick, split."""
    st = inp.table("selection")
    if st is None:
        return
    doc.h(2, "Selection on the test topics")
    first = (inp.results.get("selection") or [{}])[0].get("bias") or {}
    doc.p("Each group of candidates (a team's runs, a sweep's checkpoints) is picked by its mean on `n_dev` "
          "random dev topics and reported on `n_test` other topics of the collection, over "
          f"{first.get('n_resamples', '?')} random splits (seed {first.get('seed')}). `optimism` is the pick's "
          "dev mean minus its test mean: how much reporting the best of k on the topics it was chosen on "
          "overstates its score on new topics. `pick_accuracy` is the share of splits whose pick is the best "
          f"of its group on the test topics (within a margin of {first.get('margin', 0):g}); few test topics "
          "make that best noisy and the accuracy low. `width`: the mean width of the "
          f"{first.get('confidence_level', 0.95):g} t-interval of the pick's test mean."
          + (" `k` -1: whole groups (their sizes differ)." if "k" in st.columns and (st["k"] < 0).any() else "")
          + " Rows average the groups, each weighing the same; `*_se` are Monte Carlo standard errors of this "
          "collection's resampling, not of another collection. A dev set unlike the test set (another year, "
          "another query source) adds a bias that resampling one collection cannot show "
          "(docs/deep-learning.md).")
    inp.figure(doc, "selection")
    a = st[st["group"] == "all"] if "group" in st.columns else st
    doc.table(a[[c for c in _SELECTION_COLUMNS if c in a.columns]],
              caption="selection.csv (the rows of each group too)")
    plans = _selection_plans(inp)
    if plans:
        doc.p("Splitting a budget: among the splits that meet the targets, the one with the fewest dev "
              "topics (the narrowest interval); without a budget, the smallest budget with such a split.")
        doc.ul(plans)


def study_warnings(doc: Document, inp: Inputs) -> None:
    """The study's warnings."""
    warns = inp.results.get("warnings") or []
    if warns:
        doc.h(2, "Warnings")
        doc.ul(warns)


def provenance(doc: Document, inp: Inputs) -> None:
    """Versions, seed, inputs and their hashes, the command; the tables and figures written."""
    prov = inp.provenance
    doc.h(2, "Provenance")
    items = [f"planner {prov.get('planner_version', '?')}; seed {prov.get('seed')}; "
             f"resamples {prov.get('resamples')}"]
    vers = prov.get("versions") or {}
    if vers:
        items.append("versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()))
    for i in prov.get("inputs") or []:
        items.append(f"input `{i.get('path')}` sha256 `{i.get('sha256')}`")
    if prov.get("command"):
        items.append(f"command: `{prov['command']}`")
    if prov.get("finished_utc"):
        items.append(f"finished {prov['finished_utc']} (UTC)")
    doc.ul(items)
    doc.p("Tables: " + ", ".join(f"`tables/{n}.csv`" for n in sorted(inp.tables) if inp.tables[n] is not None)
          + ". Figures: " + ", ".join(f"`figures/{n}.png`/`.svg`" for n in inp.figures) + ".")


def honest(doc: Document, inp: Inputs) -> None:
    """The honest statement: its caveats as bullets, its table, and the study's run time."""
    hs = inp.results.get("honest") or {}
    doc.h(2, "The honest statement")
    if hs.get("paragraphs"):
        doc.ul(hs["paragraphs"], cls="honest")      # one caveat a bullet
    ht = inp.table("honest")
    if ht is not None:
        doc.table(ht, caption="per scenario: mean, topics, paired-resampling interval and reversal rate "
                              "of the top two systems (the second skips runs identical to the best, "
                              "named in identical_to_best), judged share")
    prov = inp.provenance
    if prov.get("elapsed_seconds") is not None:
        doc.p(f"This study ran in {prov['elapsed_seconds']:.1f} s"
              + (f" with {prov.get('jobs')} job(s)" if prov.get("jobs") else "")
              + " (loading, computing and plotting; `benchmarks/bench_study.py` times the whole "
                "command including start-up).")


#: every section, in the order the report shows them
SECTIONS: tuple[Callable[[Document, Inputs], None], ...] = (
    title, answer, scenarios, topics_needed, paired, curves, components, allocation, variants, filtering,
    pool, selection, study_warnings, provenance, honest)


def build_document(results: Mapping[str, Any], tables: Mapping[str, pd.DataFrame],
                   provenance: Mapping[str, Any], figures: Mapping[str, bytes]) -> Document:
    """The report as a :class:`~planner.report.render.Document`: every section in turn.

    Parameters
    ----------
    results : mapping
        The study's results as plain dicts (``results.json``).
    tables : mapping of str to DataFrame
        The study's tables (``tables/*.csv``).
    provenance : mapping
        Versions, seed, inputs, command, times (``provenance.json``).
    figures : mapping of str to bytes
        The figures drawn (name -> PNG); a figure not in it is left out.

    Returns
    -------
    Document
        Render it with ``.markdown()`` or ``.html(title, figures)``.
    """
    doc = Document()
    inp = Inputs(results, tables, provenance, figures)
    for section in SECTIONS:
        section(doc, inp)
    return doc

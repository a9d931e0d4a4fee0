"""``planner fit``: variance components (G-study), D-study and pair variances."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from .. import methods
from ..errors import ParameterError
from .format import print_json
from .inputs import load_scores
from .options import Subparsers, add_command, add_scores_option, parse_int_list

NAME = "fit"


def add(subparsers: Subparsers) -> None:
    """Declare ``planner fit``."""
    p = add_command(subparsers, NAME, "variance components (G-study), D-study and pair variances",
                    """  planner fit adhoc5_ap.csv
  planner fit adhoc5_ap.csv --topics 25,50,100 --alpha 0.1 --json
  planner fit runs_eval/ --measure map --drop 0.25
  planner fit dl_ndcg.csv --strata topics.csv --method reml
  planner fit clef_map.csv --variant-divisor 1000 --topics 25,50""",
                    description="Fit the two-way crossed random-effects model x[s,t] = mu + a[s] + b[t] + e[s,t] "
                                "(ANOVA on complete matrices, REML when cells are missing), print the "
                                "components, the D-study (Erho2 with Feldt and Phi with "
                                "Arteaga-Jeyaratnam-Franklin intervals at level 1-alpha), the topics needed for "
                                "Erho2/Phi targets and the variance of per-topic differences under each "
                                "selector (pair, pooled, within-system, percentile:95). Definitions: "
                                "docs/variance.md.")
    add_scores_option(p, missing_help="missing-cell policy when reading SCORES (keep: fit by REML)")
    p.add_argument("--strata", default=None, metavar="FILE",
                   help="topic metadata CSV (topic, stratum): per-stratum fits")
    p.add_argument("--drop", type=float, default=0.0, metavar="Q",
                   help="drop the systems whose mean is below the Q-quantile of system means first (gt4ireval)")
    p.add_argument("--method", default="auto", choices=["auto", "anova", "reml"],
                   help="auto (default): ANOVA when complete, REML when cells are missing and kept (--missing keep); "
                        "reml keeps missing cells by itself")
    p.add_argument("--alpha", type=float, default=0.05, metavar="A",
                   help="D-study intervals cover 1-A, two-sided (0.05)")
    p.add_argument("--topics", default=None, metavar="N,N,...",
                   help="topic counts of the D-study (default: the collection's count)")
    p.add_argument("--target", default="0.8,0.9,0.95", metavar="G,G,...",
                   help="Erho2/Phi targets for the topics-needed table (0.8,0.9,0.95)")
    p.add_argument("--reml-engine", default="direct", choices=["direct", "statsmodels"],
                   help="REML implementation (direct, default; statsmodels MixedLM is much slower)")


def _targets(text: str) -> list[float]:
    out = []
    for item in text.split(","):
        try:
            g = float(item)
        except ValueError:
            raise ParameterError(f"expected comma-separated numbers in (0, 1), got {item!r}",
                                 parameter="--target") from None
        if not 0 < g < 1:
            raise ParameterError(f"targets must be in (0, 1), got {item!r}", parameter="--target")
        out.append(g)
    return out


@dataclass
class _Fit:
    """What ``planner fit`` computed (the library's results)."""

    scores: Any
    comp: Any
    dstudy: Any
    need: list[Any]
    pairs: dict[str, Any]
    variants: Any
    topics: list[int] | None


def _compute(args: argparse.Namespace) -> _Fit:
    from ..variance import check_alpha, fit, fit_variants, pair_variance_summary  # heavy (scipy)

    topics = None if args.topics is None else parse_int_list(args.topics, option="--topics", minimum=1)
    targets = _targets(args.target)
    check_alpha(args.alpha, "--alpha")
    if not 0 <= args.drop < 1:
        raise ParameterError(f"must be a fraction in [0, 1), got {args.drop:g}", parameter="--drop")
    missing = "keep" if args.method == "reml" and args.missing == "error" else args.missing
    scores = load_scores(args.scores, measure=args.measure, strata=args.strata, missing=missing,
                         variant_divisor=args.variant_divisor)
    variants = fit_variants(scores) if scores.has_variants else None
    comp = fit(scores, method=args.method, drop=args.drop, reml_engine=args.reml_engine)
    ds = comp.dstudy(topics, alpha=args.alpha)
    need = [comp.topics_for(**{c: g}, alpha=args.alpha) for g in targets
            for c in methods.target_names(lambda t: t.reliability)]
    kept = scores.take(systems=[s for s in scores.systems if s not in set(comp.dropped)]).collapse_variants() \
        if comp.dropped else scores.collapse_variants()
    pv = pair_variance_summary(kept)
    return _Fit(scores, comp, ds, need, pv, variants, topics)


def _json(args: argparse.Namespace, r: _Fit) -> None:
    out = {"scores": str(args.scores), "measure": r.scores.measure, "components": r.comp.to_dict(),
           "dstudy": r.dstudy.to_dict(), "topics_needed": [n.to_dict() for n in r.need],
           "pair_variance": r.pairs}
    if r.variants is not None:
        out["variants"] = {"components": r.variants.to_dict(),
                           "dstudy": r.variants.dstudy(r.topics or [r.comp.n_topics]).to_dict()["rows"]}
    print_json(out, args)


def _print_components(args: argparse.Namespace, r: _Fit) -> None:
    comp = r.comp
    print(f"{args.scores}: {comp.n_systems} systems x {comp.n_topics} topics"
          + (f" ({comp.n_cells} observed cells)" if comp.n_cells != comp.n_systems * comp.n_topics else "")
          + f", measure {r.scores.measure or 'not named'}, method {comp.method}, grand mean {comp.grand_mean:.4f}")
    if comp.dropped:
        print(f"drop {comp.drop:g}: left out {len(comp.dropped)} lowest-scoring system(s)")
    print("\nG-study (variance components)")
    print(f"{'component':<10} {'variance':>11} {'share':>7} {'mean sq.':>11} {'df':>7}")
    for row in comp.to_frame().to_dict("records"):
        share = "-" if row["share"] != row["share"] else f"{100 * row['share']:.1f}%"
        print(f"{row['component']:<10} {row['variance']:11.6f} {share:>7} {row['mean_square']:11.6f} "
              f"{row['df']:7d}")
    if comp.truncated:
        print("truncated to 0: " + ", ".join(comp.truncated))
    if comp.strata:
        print("\nper stratum (own two-way fit; weight W_k)")
        print(f"{'stratum':<12} {'W_k':>6} {'systems':>7} {'topics':>6} {'var_s':>10} {'var_t':>10} {'var_e':>10}")
        for k, v in comp.strata.items():
            print(f"{k:<12} {comp.weights[k]:6.3f} {v.n_systems:7d} {v.n_topics:6d} {v.var_s:10.6f} "
                  f"{v.var_t:10.6f} {v.var_e:10.6f}")


def _count(v: float | None) -> str:
    return "inf" if v is None or v != v or v == float("inf") else str(int(v))


def _print_dstudy(args: argparse.Namespace, r: _Fit) -> None:
    level = f"{100 * (1 - args.alpha):g}%"
    print(f"\nD-study ({level} intervals: Feldt for Erho2, Arteaga-Jeyaratnam-Franklin for Phi)")
    print(f"{'topics':>7} {'Erho2':>7} {'lower':>7} {'upper':>7}   {'Phi':>7} {'lower':>7} {'upper':>7}")
    for row in r.dstudy.rows:
        print(f"{row['n_topics']:>7} {row['erho2']:7.4f} {row['erho2_lower']:7.4f} {row['erho2_upper']:7.4f}   "
              f"{row['phi']:7.4f} {row['phi_lower']:7.4f} {row['phi_upper']:7.4f}")
    print(f"\ntopics needed ({level} interval)")
    print(f"{'target':>7} {'Erho2':>7} {'interval':>15}   {'Phi':>7} {'interval':>15}")
    for e, p in zip(r.need[::2], r.need[1::2]):
        ei = "[" + _count(e.interval.low) + ", " + _count(e.interval.high) + "]"
        pi = "[" + _count(p.interval.low) + ", " + _count(p.interval.high) + "]"
        print(f"{e.target:7g} {_count(e.n_topics):>7} {ei:>15}   {_count(p.n_topics):>7} {pi:>15}")


def _print_pairs(r: _Fit) -> None:
    pv = r.pairs
    pr = pv["pair"]
    print(f"\nvariance of per-topic differences over {pv['n_pairs']} pairs (selector: value)")
    print(f"  pair:           mean {pr['mean']:.6f}  median {pr['median']:.6f}  p90 {pr['p90']:.6f}  "
          f"p95 {pr['p95']:.6f}  max {pr['max']:.6f}  (p95/mean {pr['p95_over_mean']:.2f})")
    print(f"  pooled:         {pv['pooled']:.6f}  (2 var_e)")
    print(f"  within-system:  {pv['within-system']:.6f}  (2 V_E1)")
    print(f"  percentile:95:  {pv['percentile:95']:.6f}")


def _print_variants(r: _Fit) -> None:
    variants = r.variants
    print(f"\nthree facets: {variants.n_variants} variants nested in topics")
    print(f"{'component':<15} {'variance':>11} {'share':>7}")
    for row in variants.to_frame().to_dict("records"):
        print(f"{row['component']:<15} {row['variance']:11.6f} {100 * row['share']:6.1f}%")
    print(f"{'topics':>7} {'variants':>8} {'Erho2':>7} {'Phi':>7}")
    for row in variants.dstudy(r.topics or [r.comp.n_topics]).rows:
        print(f"{row['n_topics']:>7} {row['n_variants']:>8} {row['erho2']:7.4f} {row['phi']:7.4f}")


def run(args: argparse.Namespace) -> int:
    """Run ``planner fit``."""
    r = _compute(args)
    if args.json:
        _json(args, r)
        return 0
    _print_components(args, r)
    _print_dstudy(args, r)
    _print_pairs(r)
    if r.variants is not None:
        _print_variants(r)
    return 0

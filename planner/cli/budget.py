"""``planner budget``: cost per topic by pool depth, the frontier and the cheapest depth."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import methods
from ..errors import ParameterError
from ..results import IntervalMethod
from .format import dash, print_json, words_or
from .inputs import draw_seed, seed_note
from .options import (
    Subparsers,
    add_command,
    add_run_options,
    method_help,
    parse_int_list,
    parse_name_list,
    parse_target,
    reject_unused,
    run_options,
    seed_type,
)

if TYPE_CHECKING:
    from ..plan import BudgetResult, DepthStudy, GrowthCurve

NAME = "budget"
#: the target solved when none is given (the JSON keeps ``None`` for a fixed --topics)
DEFAULT_TARGET = methods.DEFAULT_BUDGET_TARGET


def _closed_form(m: methods.Method) -> bool:
    return m.closed_form


def add(subparsers: Subparsers) -> None:
    """Declare ``planner budget``."""
    p = add_command(subparsers, NAME, "assessment budget: cost per topic by pool depth, frontier, cheapest depth",
                    """  planner budget --runs dl19/runs --qrels dl19/qrels.txt --depths 10,20,50 \\
      --topic-cost 20 --judgment-cost 1 --total 30000 --target swap_rate:0.05
  planner budget --dataset dl19-passage --topic-cost 20 --judgment-cost 1 --total 20000 --topics 50
  planner budget --runs dl19/runs --qrels dl19/qrels.txt --project-runs 80 --json""",
                    description="Cost per topic = topic cost + judgments at depth k x judgment cost, with the "
                                "judgments at depth k from the pool of real runs (optionally projected to "
                                "another number of runs with a power-law growth curve). With runs and qrels "
                                "the runs are re-scored with the depth-k pool only, so each depth gets its "
                                "own Kendall tau against full judgments and its own topics needed.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--runs", metavar="DIR", help="folder of TREC run files (needs --qrels)")
    src.add_argument("--dataset", metavar="NAME", help="embedded data set (planner.datasets)")
    p.add_argument("--qrels", metavar="FILE", help="qrels of the runs")
    p.add_argument("--depths", default="10,20,50,100", help="pool depths (default 10,20,50,100)")
    p.add_argument("--measure", default="nDCG@10", help="measure (ir_measures name; default nDCG@10)")
    p.add_argument("--topic-cost", type=float, default=0.0, metavar="C", help="cost of creating a topic")
    p.add_argument("--judgment-cost", type=float, default=1.0, metavar="J", help="cost of one judgment")
    p.add_argument("--total", type=float, default=None, metavar="B", help="total budget")
    tg = p.add_mutually_exclusive_group()
    tg.add_argument("--target", action="append", default=None, metavar="NAME:VALUE",
                    help=words_or(methods.target_names(lambda t: t.solvable)) + ", e.g. "
                    + ":".join(map(str, DEFAULT_TARGET)) + " (default); repeat it for several: a depth then "
                    "needs the largest count over them")
    tg.add_argument("--topics", type=int, default=None, metavar="N", help="a fixed number of topics instead")
    p.add_argument("--variance", default="pair", metavar="SEL",
                   help="pair variance selector (default pair, as size --target and studies use)")
    p.add_argument("--method", default=None, metavar="METHOD",
                   help=method_help("how the target is solved at every depth (a closed form), as in size --target",
                                    _closed_form))
    p.add_argument("--min-diff", type=float, default=0.05, help="difference for the power target")
    p.add_argument("--tau-min", type=float, default=None,
                   help="least Kendall tau vs full judgments (with --runs; default 0.9)")
    p.add_argument("--pool-runs", default=None, metavar="A,B", help="runs forming the pool (default all)")
    p.add_argument("--project-runs", type=int, default=None, metavar="R",
                   help="project judgments to R participating runs (needs --runs)")
    p.add_argument("--resamples", type=int, default=200,
                   help="topic resamples of each count's 95%% interval on n, whose upper end is the count "
                        "planned with and costed (default 200; 0: the point count)")
    p.add_argument("--seed", type=seed_type, default=None,
                   help="seed of the interval's topic resamples and of the run subsets of the growth fit")
    add_run_options(p)


@dataclass
class _Ask:
    """What the options ask for: depths, and the target (None with a fixed --topics) and its method."""

    depths: list[int]
    targets: list[tuple[str, float]]
    method: str

    @property
    def target(self) -> str | None:
        """The first target (None with a fixed --topics)."""
        return self.targets[0][0] if self.targets else None

    @property
    def value(self) -> float | None:
        """The first target's value."""
        return self.targets[0][1] if self.targets else None


def _check_method(args: argparse.Namespace, target: str | None) -> str:
    if args.method is not None and args.topics is not None:
        raise ParameterError("not used with --topics (a fixed count solves no target)", parameter="--method")
    method = methods.DEFAULT_METHOD if args.method is None else args.method
    closed = methods.method_names(_closed_form)
    if method not in closed:
        raise ParameterError(f"expected one of {', '.join(closed)} (a closed form, solved at every "
                             f"depth), got {method!r}" + methods.suggest(method, closed), parameter="--method")
    fixed = methods.method(method).variances
    if len(fixed) == 1 and args.variance != fixed[0]:      # the method's variance is not a choice
        raise ParameterError(f"method {method!r} uses each pair's own variance ({fixed[0]}), got {args.variance!r}",
                             parameter="--variance")
    if target == "power" and not (args.min_diff > 0 and math.isfinite(args.min_diff)):
        raise ParameterError(f"the power target needs a positive difference, got {args.min_diff:g}",
                             parameter="--min-diff")
    return method


def _check(args: argparse.Namespace) -> _Ask:
    depths = parse_int_list(args.depths, option="--depths")
    if args.topics is not None and args.topics < 1:
        raise ParameterError(f"expected an integer >= 1, got {args.topics}", parameter="--topics")
    targets: list[tuple[str, float]] = []
    if args.topics is None:
        for text in args.target or [":".join(map(str, DEFAULT_TARGET))]:
            one = parse_target(text)
            if one in targets:
                raise ParameterError(f"{text} given more than once", parameter="--target")
            targets.append(one)
    method = _check_method(args, targets[0][0] if targets else None)
    if any(t == "power" for t, _ in targets[1:]):
        _check_method(args, "power")
    if args.runs is None:
        # options that only the runs + qrels path reads
        reject_unused({"--qrels": args.qrels, "--pool-runs": args.pool_runs, "--tau-min": args.tau_min,
                       "--select-runs": args.select_runs,
                       "--duplicates": None if args.duplicates == "error" else args.duplicates},
                      "only used with --runs (the data set's pool statistics are fixed)")
    if args.seed is not None and args.project_runs is None and not (targets and args.resamples):
        raise ParameterError("only used with --project-runs or a target's interval on n (--resamples)",
                             parameter="--seed")
    if args.resamples < 0:
        raise ParameterError(f"expected an integer >= 0, got {args.resamples}", parameter="--resamples")
    return _Ask(depths, targets, method)


def _from_runs(args: argparse.Namespace, ask: _Ask) -> tuple[BudgetResult, DepthStudy, GrowthCurve | None]:
    """The budget with judgments and topics needed measured on re-scored runs."""
    from .. import plan  # heavy (scipy): loaded when the command runs
    from ..collection import read_qrels
    from ..measures import as_runs
    from ..plan.pool import check_growth

    if not args.qrels:
        raise ParameterError("--runs needs --qrels", parameter="--qrels")
    runs = as_runs(args.runs, **run_options(args))
    qrels = read_qrels(args.qrels)
    pool_runs = None if args.pool_runs is None else parse_name_list(args.pool_runs, option="--pool-runs")
    if ask.targets and args.resamples:
        draw_seed(args)
    if args.project_runs is not None:       # its growth curve, bounded before any work
        check_growth(runs, qrels, depths=ask.depths)
    study = plan.pool_depth_study(runs, qrels, depths=ask.depths, measure=args.measure, pool_runs=pool_runs,
                                  targets=ask.targets or [DEFAULT_TARGET],
                                  variance=args.variance, method=ask.method, min_diff=args.min_diff,
                                  topic_cost=args.topic_cost, judgment_cost=args.judgment_cost,
                                  tau_min=0.9 if args.tau_min is None else args.tau_min, progress=args.progress,
                                  n_resamples=args.resamples if ask.targets else 0, rng=args.seed)
    growth = None
    if args.project_runs is not None:
        draw_seed(args)
        growth = plan.judgment_growth(runs, qrels, depths=ask.depths, rng=args.seed)
    res = plan.budget(topic_cost=args.topic_cost, judgment_cost=args.judgment_cost, total=args.total,
                      judgments=study, topics_needed=args.topics, n_runs=args.project_runs, growth=growth)
    return res, study, growth


def _from_dataset(args: argparse.Namespace, ask: _Ask) -> BudgetResult:
    """The budget from an embedded data set's pool statistics (no runs to re-score)."""
    from .. import datasets, plan  # heavy (scipy, pandas): loaded when the command runs
    from ..plan.budget import Need
    from ..results import joint_need

    if args.project_runs is not None:
        raise ParameterError("projection to other run counts needs --runs", parameter="--project-runs")
    pool = datasets.load_pool(args.dataset)
    need: Any = args.topics
    if ask.targets:      # no fixed --topics: solve each target; they need together what joint_need says
        scores = datasets.load(args.dataset, measure=args.measure)
        if args.resamples:
            draw_seed(args)
        needs = []
        for target, value in ask.targets:
            r = plan.size_for_target(scores, target=target, value=value, variance=args.variance,
                                     method=ask.method, min_diff=args.min_diff, n_resamples=args.resamples,
                                     rng=args.seed)
            if r.n_topics is None:
                raise ParameterError(f"no topic count reaches {target} {value}: {r.why_unreached()}",
                                     parameter="--target")
            needs.append(r)
        need = Need(*joint_need(needs))
    ps_depths = set(int(d) for d in pool.depths)
    bad = [d for d in ask.depths if d not in ps_depths]
    if bad:
        raise ParameterError(f"the data set has pool statistics at depths {sorted(ps_depths)}, not {bad[0]}",
                             parameter="--depths")
    jm = pool.topics.groupby("depth")["pool_size"].mean()
    return plan.budget(topic_cost=args.topic_cost, judgment_cost=args.judgment_cost, total=args.total,
                       judgments={d: float(jm[d]) for d in ask.depths}, topics_needed=need,
                       source=f"pool statistics of data set {args.dataset} ({len(pool.pool_runs)} pooled runs)")


def run(args: argparse.Namespace) -> int:
    """Run ``planner budget``."""
    ask = _check(args)
    study = growth = None
    if args.runs is not None:
        res, study, growth = _from_runs(args, ask)
    else:
        res = _from_dataset(args, ask)
    if args.json:
        fixed = args.topics is not None
        print_json({"target": ask.target, "value": ask.value,
                    **({"targets": [list(t) for t in ask.targets]} if len(ask.targets) > 1 else {}),
                    "method": None if fixed else ask.method,
                    "variance": None if fixed else args.variance,
                    "budget": res.to_dict(), "pool_study": None if study is None else study.to_dict(),
                    "seed": args.seed,
                    "growth": None if growth is None else growth.to_dict()}, args)
        return 0
    _print_table(args, ask, res)
    hows = {IntervalMethod(r["n_interval"]) for r in res.rows}
    if IntervalMethod.TOPIC_RESAMPLING in hows:
        print(f"intervals on n: {args.resamples} topic resamples, seed {args.seed}{seed_note(args)}")
    elif IntervalMethod.ANALYTIC in hows:
        print("intervals on n: the D-study's closed form (no topic resamples)")
    if growth is not None:
        fits = "; ".join(f"depth {d}: {growth.a[d]:.3g} * r^{growth.b[d]:.3f} (R^2 {growth.r2[d]:.3f})"
                         for d in growth.depths)
        print(f"judgments per topic against runs r, fitted on {growth.n_runs} runs: {fits}; "
              f"seed {growth.seed}{seed_note(args)}")
    if study is None:
        # embedded pool statistics: no runs to re-score, so no depth's bias was measured
        print("no runs: the depths' pool bias (Kendall tau against the full judgments) is not assessed, "
              "so the depth is chosen by cost alone; give --runs and --qrels to measure it")
    return 0


def _print_table(args: argparse.Namespace, ask: _Ask, res: BudgetResult) -> None:
    if ask.targets:
        what = (" and ".join(f"{t} {methods.target(t).direction} {v}" for t, v in ask.targets)
                + (" (each depth needs the largest count)" if len(ask.targets) > 1 else "")
                + f" ({ask.method}, variance {args.variance})")
    else:
        what = f"{args.topics} topics (fixed)"
    print(f"budget for {what}, measure {args.measure}; topic cost {args.topic_cost:g}, judgment cost "
          f"{args.judgment_cost:g}" + (f", total {args.total:g}" if args.total is not None else "")
          + f"; judgments from {res.judgments_source}")
    print(f"{'depth':>6} {'judg/topic':>10} {'cost/topic':>10} {'max topics':>10} {'plan with':>9} "
          f"{'count':>6} {'95% interval':>13} {'total cost':>11} {'tau':>6}")
    taus = {r["depth"]: r["kendall_tau_vs_full"] for r in res.rows}
    for r in res.rows:
        print(f"{r['depth']:>6} {r['judgments_per_topic']:>10.1f} {r['cost_per_topic']:>10.2f} "
              f"{dash(r['max_topics'], 'd'):>10} {dash(r['n_topics_plan'], 'd'):>9} "
              f"{dash(r['n_topics_needed'], 'd'):>6} {_interval(r):>13} "
              f"{dash(r['total_cost'], '.1f'):>11} {dash(taus.get(r['depth']), '.3f'):>6}")
    print(f"cheapest depth{_cheapest_condition(res)}: " + _cheapest(res.cheapest))


def _cheapest_condition(res: BudgetResult) -> str:
    cond = "within the total" if res.total is not None else ""
    if res.tau_min is not None:
        cond += (" and " if cond else "") + f"with Kendall tau vs full judgments >= {res.tau_min}"
    return " " + cond if cond else ""


def _interval(r: dict[str, Any]) -> str:
    if IntervalMethod(r["n_interval"]) is IntervalMethod.NONE:
        return "-"
    return f"[{dash(r['n_lower'], 'd')}, {'unbounded' if r['n_upper'] is None else r['n_upper']}]"


def _cheapest(c: dict[str, Any] | None) -> str:
    if c is None:
        return "none"
    count = "" if c["n_topics_plan"] == c["n_topics_needed"] else \
        f" (count {c['n_topics_needed']}, 95% interval {_interval(c)})"
    return f"depth {c['depth']}, plan with {c['n_topics_plan']} topics{count}, cost {c['total_cost']:.1f}"

"""Pool depth versus topics on the real TREC DL 2019 and 2020 passage runs (not run by pytest).

    /work/venv/bin/python benchmarks/bench_plan.py [--data DATA_DIR] [--measures "nDCG@10;AP(rel=2)"]

For each collection and measure: re-score all runs under the depth-k pool
(k = 10, 20, 50, 100; unjudged = non-relevant), print per depth the judgments per
topic, Kendall tau vs full judgments, var_e, the topics needed for a swap rate of
0.05 (pooled variance) with a topic-resampling interval, the cost at 20 per topic +
1 per judgment, the growth-curve exponent, and the recommendation; then time
topic_set_size (last line: its time per call against a goal of 10 ms).
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

from planner import plan
from planner.collection import read_qrels
from planner.measures import as_runs

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
GOAL_MS = 10.0  # per topic_set_size call


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA, help="the shared data folder (default: %(default)s)")
    ap.add_argument("--measures", default="nDCG@10;AP(rel=2)", help="measures separated by ';'")
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    data = args.data
    measures = args.measures.split(";")
    for coll, measure in [(c, m) for c in ("trec-dl2019-passage", "trec-dl2020-passage") for m in measures]:
        t0 = time.perf_counter()
        runs = as_runs(data / coll / "runs")
        qrels = read_qrels(data / coll / "qrels.txt")
        t_read = time.perf_counter() - t0
        t0 = time.perf_counter()
        st = plan.pool_depth_study(runs, qrels, depths=(10, 20, 50, 100), measure=measure,
                                   target="swap_rate", value=0.05, variance="pooled", method="analytic",
                                   topic_cost=20.0, judgment_cost=1.0, tau_min=0.9,
                                   n_resamples=100, rng=1)
        t_study = time.perf_counter() - t0
        t0 = time.perf_counter()
        g = plan.judgment_growth(runs, qrels, depths=(10, 20, 50, 100), subsets=10, rng=1)
        t_growth = time.perf_counter() - t0
        print(f"\n{coll} {measure}: {st.n_runs} runs, {st.n_topics} topics "
              f"(read {t_read:.1f}s, study {t_study:.1f}s, growth {t_growth:.1f}s)")
        f = st.full
        print(f"  full qrels: {f['judgments_per_topic']:.1f} judgments/topic, var_e {f['var_e']:.5f}, "
              f"topics for swap<=0.05: {f['n_topics_needed']} [{f['n_lower']}, {f['n_upper']}]")
        print(f"  {'depth':>5} {'judg/t':>7} {'tau':>6} {'var_e':>8} {'ratio':>6} {'need':>5} "
              f"{'interval':>12} {'cost/t':>7} {'total':>9} {'b':>5}")
        for r in st.rows:
            print(f"  {r['depth']:>5} {r['judgments_per_topic']:>7.1f} {r['kendall_tau_vs_full']:>6.3f} "
                  f"{r['var_e']:>8.5f} {r['var_e_ratio']:>6.2f} {r['n_topics_needed']!s:>5} "
                  f"{'[' + str(r['n_lower']) + ', ' + str(r['n_upper']) + ']':>12} "
                  f"{r['cost_per_topic']:>7.1f} {r['total_cost'] or float('nan'):>9.0f} {g.b[r['depth']]:>5.2f}")
        print(f"  recommendation: depth {st.recommendation['depth']}, {st.recommendation['n_topics']} topics: "
              f"{st.recommendation['reason']}")
        b = plan.budget(topic_cost=20, judgment_cost=1, total=50_000, judgments=st, n_runs=100, growth=g)
        c = b.cheapest
        print("  budget 50000, projected to 100 runs: cheapest "
              + ("none" if c is None else f"depth {c['depth']}, {c['n_topics_needed']} topics, "
                                          f"cost {c['total_cost']:.0f}"))
    t0 = time.perf_counter()
    for _ in range(100):
        plan.topic_set_size(design="paired-t", min_diff=0.05, sigma2=0.02, power=0.8)
    paired = (time.perf_counter() - t0) * 10
    print(f"\ntopic_set_size paired-t: {paired:.2f} ms per call")
    t0 = time.perf_counter()
    for _ in range(20):
        plan.topic_set_size(design="anova", min_diff=0.1, sigma2=0.04, power=0.8, systems=20)
    anova = (time.perf_counter() - t0) * 50
    print(f"topic_set_size anova m=20: {anova:.2f} ms per call")
    worst = max(paired, anova)
    print(f"slowest topic_set_size call {worst:.2f} ms: ratio to goal {worst / GOAL_MS:.2f} "
          f"(goal {GOAL_MS:.0f} ms: <= 1)")
    return 0 if worst <= GOAL_MS else 1


if __name__ == "__main__":
    raise SystemExit(main())

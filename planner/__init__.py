"""planner: how many topics (and how deep a pool) does an IR test collection need?

The pipeline, one module a step::

    runs + qrels / trec_eval -q / score tables
        -> collection  (read files)            load_scores(), read_run(), read_qrels(), ...
        -> measures    (score runs, pools)     score_runs(), pool_stats()
        -> scores      (ScoreMatrix)           ScoreMatrix
        -> variance    (fit the model)         fit(), pair_stats()
        -> simulate    (curves against n)      predict()
        -> validation  (pilot vs held-out)     validate()
        -> plan        (solve n, budgets)      topic_set_size(), size_for_target(), budget()
        -> report      (md/html/json/plots)    write_report()
    study: a YAML what-if grid driving all of it   run_study()
    methods: the registry of methods and targets every step reads

Example::

    import planner
    scores = planner.datasets.load("dl19-passage", measure="nDCG@10")
    fit = planner.fit(scores)
    curve = planner.predict(scores, topics=[25, 50, 100], method="analytic", rng=1)
"""

from __future__ import annotations

import importlib

from .errors import (
    ConfigError,
    DegenerateDataWarning,
    IdenticalPairsWarning,
    InputError,
    ParameterError,
    PlannerError,
    PlannerWarning,
)
from .scores import ScoreMatrix

__version__ = "0.1.0"

# public name -> module that defines it (imported on first use, so that
# `import planner` stays fast and light)
_LAZY = {
    "load_scores": "collection",
    "read_run": "collection",
    "read_runs": "collection",
    "read_qrels": "collection",
    "read_trec_eval": "collection",
    "read_topics": "collection",
    "score_runs": "measures",
    "pool_stats": "measures",
    "restrict_qrels": "measures",
    "fit": "variance",
    "pair_stats": "variance",
    "pair_variance": "variance",
    "fit_variants": "variance",
    "predict": "simulate",
    "validate": "validation",
    "filter_informative": "simulate",
    "compare_measures": "simulate",
    "topic_set_size": "plan",
    "budget": "plan",
    "size_for_target": "plan",
    "paired_difference": "plan",
    "topics_for_variants": "plan",
    "pool_depth_study": "plan",
    "judgment_growth": "plan",
    "allocate": "plan",
    "leave_group_out": "plan",
    "selection_bias": "plan",
    "plan_split": "plan",
    "fit_seeds": "plan",
    "seed_power": "plan",
    "seed_topic_tradeoff": "plan",
    "run_study": "study",
    "write_report": "report",
    "versions": "report",
}

__all__ = [
    "ScoreMatrix", "PlannerError", "InputError", "ConfigError", "ParameterError",
    "PlannerWarning", "DegenerateDataWarning", "IdenticalPairsWarning", "datasets", "__version__", *_LAZY,
]


# submodules reachable as attributes after a plain `import planner` (planner.plan.size_for_target)
_SUBMODULES = ("collection", "datasets", "measures", "methods", "plan", "report", "results", "scores",
               "simulate", "study", "validation", "variance")


def __getattr__(name: str):
    if name in _SUBMODULES:
        return importlib.import_module("." + name, __name__)
    if name in _LAZY:
        module = importlib.import_module("." + _LAZY[name], __name__)
        return getattr(module, name)
    raise AttributeError(f"module 'planner' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))

"""Studies: a YAML what-if grid that drives the whole pipeline, and :func:`run_study`.

A study file names a collection, the settings to compare and the targets to meet;
``planner study FILE`` (or :func:`run_study`) loads the scores, fits the variance
components, predicts the curves against topic count, solves for the topics each
target needs and writes a report folder (see :mod:`planner.report`).

Schema (strict; ``planner schema`` prints it as JSON Schema). Top level::

    name: dl19-quickstart          # report title and folder name (default: the file name);
                                   # a plain folder name: no / or \\, not . or ..
    description: free text
    seed: 20190                    # int >= 0; every random number derives from it
    resamples: 1000                # int >= 10; bootstrap / subsample repetitions
    collection: {...}              # where the scores come from (below)
    <scenario keys>                # defaults for every scenario (below)
    scenarios: [ {...}, ... ]      # optional; each entry overrides the defaults

Scenario keys (a list value of a key marked * expands into a grid; the grid is the
Cartesian product in the order the keys are listed here)::

    name: label                    # default: built from the grid values
    collection*: {...}             # overrides the top-level collection
    measure*: nDCG@10              # measure name (embedded data, trec_eval, runs + qrels);
                                   # default nDCG@10, for score files the file's own measure
    method*: predictive            # a method of planner.methods (predictive, analytic,
                                   # bootstrap, subsample, parametric, predictive-shrunk, ...);
                                   # default planner.methods.DEFAULT_METHOD
    variance*: pair                # pair | pooled | within-system | percentile:Q
    min_diff*: 0.05                # difference that matters (power, detectable differences)
    strata*: uniform               # uniform | stratified (resampling within strata)
    filter*: none                  # none | {lo: 0.0, hi: 1.0, min_spread: 0.0}
    topics: [10, 20, ...]          # topic counts of the curves (integers >= 2)
    alpha: 0.05                    # test level / interval coverage 1 - alpha
    targets: [{target: swap_rate, value: 0.05}, {target: power, value: 0.8}]
    pool: {depths: [10, 20, 50, 100], tau_min: 0.9}  # needs runs + qrels; solves every target
    costs: {topic: 0.0, judgment: 1.0, variant: 0.0, budget: null} # per topic / judgment / query variant
    variants: [1, 2, 4]           # query variants per topic: three-facet D-study and variant trade-off

Collection (exactly one source)::

    dataset: dl19-passage          # embedded data set (planner.datasets.available())
    scores: path                   # wide / tidy CSV|TSV, trec_eval -q file or folder
    runs: folder + qrels: file     # TREC runs scored with ir_measures
    stack: [{...}, {...}]          # collections as strata (systems may differ; planner.plan.stacked)
    variant_divisor: 1000          # query id = topic * d + variant (query variations)
    strata: path | {topic: stratum}  # topic metadata (stratum per topic)
    missing: error                 # missing-cell policy (planner.scores)
    label: text                    # name shown in the report

Relative paths in a study file are relative to that file's folder. Every default
is resolved and written back into the report (``config.resolved.yaml`` and
``results.json``), so a report says exactly what ran.

The package, one module per step: :mod:`~planner.study.schema` (JSON Schema, defaults),
:mod:`~planner.study.validate` and :mod:`~planner.study.config` (strict validation, the
resolved grid), :mod:`~planner.study.inputs` (scores, filter, judged share),
:mod:`~planner.study.scenario`, :mod:`~planner.study.stack`, :mod:`~planner.study.targets`
and :mod:`~planner.study.pool` (one scenario, typed :mod:`~planner.study.results`),
:mod:`~planner.study.run` (the grid, the worker pool), :mod:`~planner.study.narrative` and
:mod:`~planner.study.honest` (the answer and the honest statement in words),
:mod:`~planner.study.tables`. The statistics a study needs beyond the library's planning
functions are public in :mod:`planner.plan.stacked` (stratified width, power and allocation
over stacked collections) and :mod:`planner.plan.paired_bootstrap` (the paired topic bootstrap).

The answer's figures (what its topic count buys, and the collection's own topic count) are
computed at exactly those counts with the scenario's method (the resampling methods keep
the random stream of each count), never interpolated along the curve.

Randomness: each scenario gets a random stream derived from the study seed and keyed on
the scenario's settings (:func:`planner._random.keyed_stream`, :func:`scenario_key`), so
results depend neither on ``jobs`` nor on the other scenarios in the grid. ``results.json``
holds no timestamps: the same seed and inputs give a byte-identical file.
"""

from __future__ import annotations

from .config import StudyConfig, expand_scenarios, load_config
from .honest import honest_paragraphs
from .narrative import answer
from .results import (
    Answer,
    HonestStatement,
    JudgedShare,
    PairedComparison,
    ScenarioComponents,
    ScenarioCurve,
    ScenarioData,
    ScenarioResult,
    ScenarioTarget,
    SolveKind,
    StudyResult,
    Verdict,
    WithoutDuplicates,
)
from .run import run_study, scenario_key
from .scenario import run_scenario
from .schema import (
    DEFAULT_TOPICS,
    DEFAULTS,
    EXPECTED,
    GRID_KEYS,
    MAX_TOPICS,
    METHODS,
    SCHEMA,
    TARGET_RANGES,
    TARGETS,
    quickstart_path,
    schema,
)
from .targets import INTERVAL_RESAMPLES, CurveSolution, from_curve, solve_exact

__all__ = [
    "DEFAULTS",
    "DEFAULT_TOPICS",
    "EXPECTED",
    "GRID_KEYS",
    "INTERVAL_RESAMPLES",
    "MAX_TOPICS",
    "METHODS",
    "SCHEMA",
    "TARGETS",
    "TARGET_RANGES",
    "Answer",
    "CurveSolution",
    "HonestStatement",
    "JudgedShare",
    "PairedComparison",
    "ScenarioComponents",
    "ScenarioCurve",
    "ScenarioData",
    "ScenarioResult",
    "ScenarioTarget",
    "SolveKind",
    "StudyConfig",
    "StudyResult",
    "Verdict",
    "WithoutDuplicates",
    "answer",
    "expand_scenarios",
    "from_curve",
    "honest_paragraphs",
    "load_config",
    "quickstart_path",
    "run_scenario",
    "run_study",
    "scenario_key",
    "schema",
    "solve_exact",
]

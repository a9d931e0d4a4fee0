"""Small real example data shipped with planner (see ``ATTRIBUTION.md``).

Per-topic scores of the official runs of the TREC 2019 and 2020 Deep Learning
track passage task (NIST qrels), and their pool statistics at depths 10, 20, 50
and 100, generated from ``../shared/data`` by ``scripts/make_datasets.py`` with
planner's own code. The runs themselves are not shipped.

::

    from planner import datasets
    datasets.available()                     # ['dl19-passage', 'dl20-passage']
    m = datasets.load("dl19-passage", measure="nDCG@10")    # ScoreMatrix 37 x 43
    pool = datasets.load_pool("dl20-passage")               # PoolStats

Measures (:data:`MEASURES`, ir_measures syntax; binary measures count grade >= 2
as relevant, as TREC DL does): ``nDCG@10`` (graded gains 0-3), ``AP(rel=2)``,
``RR(rel=2)``, ``P(rel=2)@10``, ``RBP(rel=2,p=0.8)`` (planner's RBP, ties ordered
as trec_eval does). Aliases accepted by :func:`load` (``MEASURE_ALIASES``):
``nDCG``, ``ndcg@10``, ``ndcg_cut_10`` -> ``nDCG@10``; ``AP``, ``map``, ``MAP`` ->
``AP(rel=2)``; ``RR``, ``MRR``, ``recip_rank`` -> ``RR(rel=2)``; ``P@10``, ``P_10`` ->
``P(rel=2)@10``; ``RBP``, ``RBP(rel=2)``, ``RBP(p=0.8,rel=2)`` -> ``RBP(rel=2,p=0.8)``.

A judged topic that a run did not retrieve for scores 0 (trec_eval ``-c``).
"""

from __future__ import annotations

import gzip
import io
import json
from dataclasses import replace
from pathlib import Path

import pandas as pd

from ..errors import ParameterError
from ..measures import PoolStats
from ..methods import closest
from ..scores import ScoreMatrix

__all__ = [
    "COLLECTIONS",
    "DEPTHS",
    "MEASURES",
    "MEASURE_ALIASES",
    "available",
    "info",
    "load",
    "load_pool",
]

DATA_DIR = Path(__file__).resolve().parent

#: data set name -> folder in ../shared/data it was generated from
COLLECTIONS = {"dl19-passage": "trec-dl2019-passage", "dl20-passage": "trec-dl2020-passage"}

#: the measures shipped for every data set
MEASURES = ("nDCG@10", "AP(rel=2)", "RR(rel=2)", "P(rel=2)@10", "RBP(rel=2,p=0.8)")

#: pool depths shipped
DEPTHS = (10, 20, 50, 100)

MEASURE_ALIASES = {
    "nDCG": "nDCG@10", "ndcg@10": "nDCG@10", "ndcg_cut_10": "nDCG@10",
    "AP": "AP(rel=2)", "map": "AP(rel=2)", "MAP": "AP(rel=2)",
    "RR": "RR(rel=2)", "MRR": "RR(rel=2)", "recip_rank": "RR(rel=2)",
    "P@10": "P(rel=2)@10", "P_10": "P(rel=2)@10",
    "RBP": "RBP(rel=2,p=0.8)", "RBP(rel=2)": "RBP(rel=2,p=0.8)", "RBP(p=0.8,rel=2)": "RBP(rel=2,p=0.8)",
}

_CACHE: dict[str, pd.DataFrame] = {}


def available() -> list[str]:
    """Names of the shipped data sets."""
    return list(COLLECTIONS)


def _check_name(name: str) -> str:
    if name not in COLLECTIONS:
        raise ParameterError(f"unknown data set {name!r}; available: {', '.join(COLLECTIONS)}",
                             parameter="name")
    return name


def canonical_measure(measure: str) -> str:
    """The shipped measure name for ``measure`` (an alias or a shipped name)."""
    m = MEASURE_ALIASES.get(measure, measure)
    if m not in MEASURES:
        near = closest(measure, [*MEASURES, *MEASURE_ALIASES])
        hint = "" if near is None else f" (did you mean {MEASURE_ALIASES.get(near, near)!r}?)"
        raise ParameterError(f"measure {measure!r} is not shipped{hint}; choose one of "
                             + ", ".join(MEASURES) + " (or an alias: " + ", ".join(MEASURE_ALIASES) + ")",
                             parameter="measure")
    return m


def info(name: str | None = None) -> dict:
    """The generation record (``index.json``): sizes, measures, depths, tool versions."""
    with open(DATA_DIR / "index.json", encoding="utf-8") as fh:
        idx = json.load(fh)
    return idx if name is None else idx[_check_name(name)]


def _read_csv(fname: str) -> pd.DataFrame:
    path = DATA_DIR / fname
    data = path.read_bytes()
    if fname.endswith(".gz"):
        data = gzip.decompress(data)
    return pd.read_csv(io.BytesIO(data), dtype={"topic": str, "system": str, "run": str, "measure": str})


def load(name: str, *, measure: str = "nDCG@10") -> ScoreMatrix:
    """The ScoreMatrix (systems x judged topics) of data set ``name`` for ``measure``.

    Parameters
    ----------
    name : str
        One of :func:`available` (``"dl19-passage"``, ``"dl20-passage"``).
    measure : str
        A shipped measure (:data:`MEASURES`) or an alias (``MEASURE_ALIASES``).

    Returns
    -------
    ScoreMatrix
        ``source`` is ``"planner.datasets:<name>"``; ``meta`` holds the attribution and
        the generation record.

    Examples
    --------
    >>> m = load("dl19-passage", measure="AP")
    >>> m
    ScoreMatrix(AP(rel=2): 37 systems x 43 topics)
    >>> m.source
    'planner.datasets:dl19-passage'
    """
    name = _check_name(name)
    m = canonical_measure(measure)
    key = f"{name}.scores"
    if key not in _CACHE:
        _CACHE[key] = _read_csv(f"{name}.scores.csv.gz")
    df = _CACHE[key]
    sub = df[df["measure"] == m][["system", "topic", "value"]]
    mat = ScoreMatrix.from_frame(sub, measure=m, source=f"planner.datasets:{name}")
    return replace(mat, meta={"dataset": name, "attribution": attribution(), "generated": info(name)})


def load_pool(name: str) -> PoolStats:
    """Pool statistics of data set ``name`` at depths 10, 20, 50, 100 (PoolStats)."""
    name = _check_name(name)
    topics = _read_csv(f"{name}.pool-topics.csv")
    runs = _read_csv(f"{name}.pool-runs.csv")
    rt = _read_csv(f"{name}.pool-run-topics.csv.gz")
    pool_runs = tuple(runs.loc[runs["in_pool"].astype(bool), "run"].drop_duplicates())
    return PoolStats(depths=tuple(int(d) for d in sorted(topics["depth"].unique())),
                     pool_runs=pool_runs, topics=topics, runs=runs, per_run_topic=rt,
                     qrels_judgments=int(info(name)["qrels_judgments"]))


def attribution() -> str:
    """The attribution text (``ATTRIBUTION.md``)."""
    return (DATA_DIR / "ATTRIBUTION.md").read_text(encoding="utf-8")

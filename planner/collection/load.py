"""One entry for score files: :func:`load_scores` (format detected from the content) and
:func:`as_matrix` (the input coercion of the analyses)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from .._checks import check_choice
from ..errors import InputError, ParameterError
from ..scores import ScoreMatrix
from .strata import attach_strata
from .tables import read_tidy, read_wide, sniff
from .text import decode, head_text, is_text, read_bytes
from .trec_eval import read_trec_eval


def load_scores(path, *, measure: str | None = None, missing: str = "error",
                strata=None, names: str = "file") -> ScoreMatrix:
    """Load a score matrix from what an IR researcher has on disk.

    Parameters
    ----------
    path : str or os.PathLike or ScoreMatrix
        One of (detected from content, not extension):

        - a folder of ``trec_eval -q`` files (one a run): ``measure`` selects the
          trec_eval measure (``map``, ``P_10``, ...); required when the files hold several;
        - a single ``trec_eval -q`` file (one system: gives an error, a matrix needs 2);
        - a tidy CSV/TSV (``system,topic,value`` [+ ``measure``, ``variant``, ``stratum``]):
          ``measure`` selects rows when there is a ``measure`` column;
        - a wide CSV (one row a topic, one column a system, optional first column ``topic``):
          ``measure`` only labels the matrix;
        - the text of a table (a str holding a line break), or a ScoreMatrix (strata attached).
    measure : str, optional
        See ``path``.
    missing : str
        The missing-cell policy of :meth:`ScoreMatrix.build`; under ``"error"`` a missing
        cell is an :class:`InputError` naming the file and, where the cell is written out
        (``NA``, empty, ``nan``), its line.
    strata : str or os.PathLike or Mapping, optional
        A topic metadata CSV path (see :func:`read_topics`) or a mapping topic -> stratum,
        attached by :func:`attach_strata`: every topic of the scores needs one; topics the
        strata name that the scores lack are ignored with a warning and never make a
        stratum of their own.
    names : {"file", "runid"}
        trec_eval folders: name systems by file or by ``runid``; any other value is a
        :class:`ParameterError`, whatever ``path`` is.

    Returns
    -------
    ScoreMatrix

    Examples
    --------
    >>> m = load_scores("topic,bm25,dense\\n101,0.25,0.5\\n102,0.5,0.75\\n", measure="nDCG@10")
    >>> m
    ScoreMatrix(nDCG@10: 2 systems x 2 topics)
    >>> m.systems, m.topics
    (('bm25', 'dense'), ('101', '102'))
    """
    check_choice(names, ("file", "runid"), "names", quote=True)
    if isinstance(path, ScoreMatrix):
        m = path
    elif not is_text(path) and Path(path).is_dir():
        m = _load_folder(Path(path), measure=measure, missing=missing, names=names)
    else:
        data, source = read_bytes(path, what="scores")
        kind = sniff(head_text(data, source))
        # a wide table is parsed from the bytes by pandas (read_wide); the others as text
        content = data if kind == "wide" else decode(data, source).lstrip("\ufeff")
        m = _table_reader(kind, source)(content, source, measure=measure, missing=missing)
    if strata is not None:
        m = attach_strata(m, strata)
    return m


def _load_folder(p: Path, *, measure: str | None, missing: str, names: str) -> ScoreMatrix:
    """The matrix of ``measure`` from a folder of trec_eval files (the only one when None)."""
    mats = read_trec_eval(p, missing=missing, names=names, measures=None if measure is None else [measure])
    if measure is None:
        if len(mats) > 1:
            raise ParameterError(f"{p} holds {len(mats)} measures ("
                                 + ", ".join(list(mats)[:12])
                                 + ("..." if len(mats) > 12 else "") + "); choose one",
                                 parameter="measure")
        measure = next(iter(mats))
    m = mats[measure]
    m.warn_degenerate()
    return m


def _table_reader(kind: str, source: str | None) -> Callable[..., ScoreMatrix]:
    """The reader of a score file of ``kind`` (:func:`sniff`); an error for the others."""
    if kind == "empty":
        raise InputError("empty score file", file=source)
    if kind == "trec_eval":
        raise InputError("a single trec_eval -q file holds one system; give the folder of "
                         "all runs' trec_eval files", file=source)
    return read_tidy if kind == "tidy" else read_wide


#: the one orientation rule of frames and arrays (:func:`as_matrix`), stated in its errors
ORIENTATION = ("an array is systems x topics (one row a system); a wide DataFrame names its rows: "
               "index named 'topic' (or a first column 'topic'), one row a topic, as a wide CSV and "
               "ScoreMatrix.to_frame() have them, or index named 'system', one row a system")


def _wide_frame(df: pd.DataFrame, parameter: str) -> ScoreMatrix:
    """A wide frame by :data:`ORIENTATION`: its index (or first column) says what its rows are."""
    first = str(df.columns[0]).lower() if len(df.columns) else ""
    if first in ("topic", "system") and df.index.name is None:
        df = df.set_index(df.columns[0])
    rows = str(df.index.name).lower() if df.index.name is not None else None
    if rows == "system":
        df = df.T
    elif rows != "topic":
        raise ParameterError(f"a DataFrame of {df.shape[0]} rows x {df.shape[1]} columns does not say whether its "
                             f"rows are topics or systems: {ORIENTATION} (df.rename_axis('topic'))",
                             parameter=parameter)
    return ScoreMatrix.from_frame(df, missing="keep")


def as_matrix(scores, parameter: str = "scores") -> ScoreMatrix:
    """A ScoreMatrix from what the analyses accept, with one orientation rule (:data:`ORIENTATION`).

    Parameters
    ----------
    scores : ScoreMatrix or str or os.PathLike or pandas.DataFrame or array_like
        A ScoreMatrix (returned as is), a path (:func:`load_scores`), a tidy DataFrame
        (``system``, ``topic``, ``value`` columns), a wide DataFrame that names its rows
        (index named ``topic``, or a first column ``topic``: one row a topic; index named
        ``system``: one row a system; a frame that says neither is an error), or a 2-D
        ``(S, T)`` (or 3-D ``(S, T, V)``) array, one row a system. Missing cells of frames
        and arrays are kept (``NaN``).
    parameter : str
        The name errors give the argument.

    Returns
    -------
    ScoreMatrix

    Examples
    --------
    >>> as_matrix([[0.1, 0.2, 0.4], [0.3, 0.3, 0.5]])
    ScoreMatrix(?: 2 systems x 3 topics)
    """
    if isinstance(scores, ScoreMatrix):
        return scores
    if isinstance(scores, (str, os.PathLike)):
        return load_scores(scores)
    if isinstance(scores, pd.DataFrame):
        if {"system", "topic", "value"} <= set(scores.columns):
            return ScoreMatrix.from_frame(scores, missing="keep")
        return _wide_frame(scores, parameter)
    if isinstance(scores, (np.ndarray, list, tuple)):
        try:
            arr = np.asarray(scores, dtype=np.float64)
        except (TypeError, ValueError):
            raise ParameterError("expected numbers in a systems x topics array (or a ScoreMatrix, "
                                 "DataFrame or path)", parameter=parameter) from None
        if arr.ndim not in (2, 3):
            raise ParameterError(f"expected a systems x topics array, got shape {arr.shape} ({ORIENTATION})",
                                 parameter=parameter)
        return ScoreMatrix.build(arr, [f"s{i + 1}" for i in range(arr.shape[0])],
                                 [f"t{j + 1}" for j in range(arr.shape[1])], missing="keep")
    raise ParameterError(f"expected a ScoreMatrix, DataFrame or array, got {type(scores).__name__}",
                         parameter=parameter)

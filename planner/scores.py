"""ScoreMatrix: per-topic scores of systems, the object every later step uses.

A :class:`ScoreMatrix` holds ``values[s, t]`` (``S`` systems x ``T`` topics), or
``values[s, t, v]`` when each topic has several query variants (or each system
several seeds), with the labels, the measure name and optional per-topic strata.

Missing cells are ``NaN`` and only exist when a matrix was built with
``missing="keep"`` (for the REML fit). Build matrices with
:meth:`ScoreMatrix.build`, which validates and applies the missing-cell policy:

- ``"error"`` (default): a missing cell is an error naming system and topic;
- ``"zero"``: a missing cell scores 0 (trec_eval ``-c``);
- ``"drop-topic"``: topics with any missing cell are removed;
- ``"drop-system"``: systems with any missing cell are removed;
- ``"keep"``: missing cells stay ``NaN`` (only the REML fit accepts them).
"""

from __future__ import annotations

import io
import math
import os
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from ._atomic import write_atomic
from ._checks import check_choice
from .errors import DegenerateDataWarning, IdenticalPairsWarning, InputError, ParameterError
from .policies import MISSING_POLICIES

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


#: largest |score| accepted: the pilot's kurtosis takes fourth powers of pair differences,
#: which stay finite in float64 for any realistic number of topics below this
MAX_ABS_SCORE = 1e50

#: topics a notebook view of a matrix shows beside each system's mean
HTML_TOPICS = 6

#: groups of identical systems the warning names (5 names a group), the rest counted
MAX_LISTED_GROUPS = 10

#: compression of :meth:`ScoreMatrix.to_csv` by the file's suffix (pandas' ``infer``)
_COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip", ".zst": "zstd"}


@dataclass(frozen=True, eq=False)
class ScoreMatrix:
    """Per-topic scores: ``values[s, t]`` or ``values[s, t, v]``.

    Build one with :meth:`build` (validates, applies the missing-cell policy),
    :meth:`from_frame`, :func:`planner.load_scores` or :func:`planner.score_runs`.

    Attributes
    ----------
    values : numpy.ndarray
        float64 array, shape ``(S, T)`` or ``(S, T, V)``; read-only.
    systems : tuple of str
        The ``S`` system (run) names.
    topics : tuple of str
        The ``T`` topic ids, as strings.
    measure : str or None
        The measure the scores are of (``"nDCG@10"``), if known.
    strata : tuple of str or None
        One stratum label per topic, or ``None``.
    variants : tuple of str or None
        The ``V`` variant (or seed) labels of the third axis, or ``None``.
    source : str or None
        Where the scores came from (a path or a data set name), for provenance.
    meta : Mapping
        Extra records (the scoring report of :func:`planner.score_runs`, a data set's
        attribution).

    Examples
    --------
    >>> import planner
    >>> m = planner.datasets.load("dl19-passage", measure="nDCG@10")
    >>> m
    ScoreMatrix(nDCG@10: 37 systems x 43 topics)
    >>> m.take(systems=m.systems[:2]).n_systems
    2
    """

    values: np.ndarray
    systems: tuple[str, ...]
    topics: tuple[str, ...]
    measure: str | None = None
    strata: tuple[str, ...] | None = None
    variants: tuple[str, ...] | None = None
    source: str | None = None
    meta: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        vals = self.values
        if not (isinstance(vals, np.ndarray) and vals.dtype == np.float64 and vals.flags.owndata
                and not vals.flags.writeable):          # build() hands over a frozen copy of its own
            vals = np.array(vals, dtype=np.float64, copy=True)
            vals.setflags(write=False)
        object.__setattr__(self, "values", vals)
        object.__setattr__(self, "systems", tuple(str(s) for s in self.systems))
        object.__setattr__(self, "topics", tuple(str(t) for t in self.topics))
        if self.strata is not None:
            object.__setattr__(self, "strata", tuple(str(k) for k in self.strata))
        if self.variants is not None:
            object.__setattr__(self, "variants", tuple(str(v) for v in self.variants))
        self._check_labels(vals)
        if math.isinf(self._extent.lo) or math.isinf(self._extent.hi):
            s, t = np.argwhere(np.isinf(vals))[0][:2]
            raise InputError(f"infinite score for system {self.systems[s]!r}, topic {self.topics[t]!r}",
                             file=self.source)

    def _check_labels(self, vals: np.ndarray) -> None:
        """Labels that match the shape of ``vals``, unique; default variant labels ``1..V``."""
        if vals.ndim not in (2, 3):
            raise ParameterError(f"values must be 2- or 3-dimensional, got shape {vals.shape}",
                                 parameter="values")
        S, T = vals.shape[:2]
        if len(self.systems) != S:
            raise ParameterError(f"{len(self.systems)} system labels for {S} rows", parameter="systems")
        if len(self.topics) != T:
            raise ParameterError(f"{len(self.topics)} topic labels for {T} columns", parameter="topics")
        _check_unique(self.systems, "systems")
        _check_unique(self.topics, "topics")
        if vals.ndim == 3:
            V = vals.shape[2]
            if self.variants is None:
                object.__setattr__(self, "variants", tuple(str(i + 1) for i in range(V)))
            elif len(self.variants) != V:
                raise ParameterError(f"{len(self.variants)} variant labels for {V} variants",
                                     parameter="variants")
        elif self.variants is not None:
            raise ParameterError("variant labels given for a 2-dimensional matrix", parameter="variants")
        if self.strata is not None and len(self.strata) != T:
            raise ParameterError(f"{len(self.strata)} strata for {T} topics", parameter="strata")

    # ------------------------------------------------------------------ building
    @classmethod
    def build(cls, values, systems: Sequence[str], topics: Sequence[str], *,
              measure: str | None = None, strata: Sequence[str] | None = None,
              variants: Sequence[str] | None = None, missing: str = "error",
              source: str | None = None, warn: bool = True) -> ScoreMatrix:
        """Validate scores and apply the missing-cell policy (module docstring).

        Parameters
        ----------
        values : array_like
            ``(S, T)`` or ``(S, T, V)`` scores; ``NaN`` cells are missing cells.
        systems, topics : sequence of str
            The labels of the first two axes.
        measure, strata, variants, source
            As the attributes of the same names.
        missing : str
            The missing-cell policy: ``"error"``, ``"zero"``, ``"drop-topic"``,
            ``"drop-system"`` or ``"keep"``.
        warn : bool
            Warn (:class:`DegenerateDataWarning`) for values outside [0, 1] and for
            systems identical on every topic.

        Returns
        -------
        ScoreMatrix

        Raises
        ------
        InputError
            (naming ``source``) for fewer than 2 systems or 2 topics after the policy,
            infinite values or values beyond ``MAX_ABS_SCORE`` (1e50) in absolute value,
            or a missing cell under ``missing="error"``.

        Examples
        --------
        >>> import numpy as np
        >>> m = ScoreMatrix.build(np.array([[0.2, np.nan], [0.4, 0.5]]), ["a", "b"], ["1", "2"],
        ...                       missing="zero")
        >>> m.values.tolist()
        [[0.2, 0.0], [0.4, 0.5]]
        """
        check_choice(missing, MISSING_POLICIES, "missing", noun="missing-cell policy")
        vals = np.array(values, dtype=np.float64, copy=True)
        systems = [str(s) for s in systems]
        topics = [str(t) for t in topics]
        strata_l = None if strata is None else [str(k) for k in strata]
        if vals.ndim in (2, 3):
            ext = _extent_of(vals)
            _check_magnitude(vals, ext, systems, topics, source)
            if ext.nan and vals.shape[:2] == (len(systems), len(topics)):
                vals, systems, topics, strata_l = _apply_missing(vals, systems, topics, strata_l,
                                                                 missing, source)
            if vals.shape[0] < 2:
                raise InputError(f"need at least 2 systems, got {vals.shape[0]}", file=source)
            if vals.shape[1] < 2:
                raise InputError(f"need at least 2 topics, got {vals.shape[1]}", file=source)
        if vals.flags.owndata:
            vals.setflags(write=False)
        m = cls(vals, tuple(systems), tuple(topics), measure=measure,
                strata=None if strata_l is None else tuple(strata_l),
                variants=None if variants is None else tuple(variants), source=source)
        if warn:
            m.warn_degenerate()
        return m

    def warn_degenerate(self) -> None:
        """Warn (:class:`DegenerateDataWarning`) for values outside [0, 1] and for systems
        identical on every topic (what :meth:`build` does with ``warn=True``)."""
        v = self.values
        if self._extent.lo < 0 or self._extent.hi > 1:        # (False when no cell is a number)
            lo, hi = np.nanmin(v), np.nanmax(v)
            out = [s for s, row in zip(self.systems, v) if np.any((row < 0) | (row > 1))]
            hint = ""
            if len(out) == 1 and len(self.systems) > 1:
                row = v[self.systems.index(out[0])]
                hint = f"; only system {out[0]!r} ({np.nanmin(row):.4g} to {np.nanmax(row):.4g})"
                if np.all(row[~np.isnan(row)] == np.round(row[~np.isnan(row)])):
                    hint += (": if that column holds topic ids, head it 'topic' (or 'qid', 'query_id', "
                             "'topic_id')")
            warnings.warn(f"{self._name()}: scores outside [0, 1] (min {lo:.4g}, "
                          f"max {hi:.4g}){hint}", DegenerateDataWarning, stacklevel=3)
        groups = self.identical_systems()
        if groups:
            # one readable line however many groups (20,000 systems listed every name: 300 KB)
            listed = "; ".join(" = ".join(g if len(g) <= 5 else [*g[:5], f"{len(g) - 5} more"])
                               for g in groups[:MAX_LISTED_GROUPS])
            more = f"; and {len(groups) - MAX_LISTED_GROUPS:,} more groups" if len(groups) > MAX_LISTED_GROUPS else ""
            warnings.warn(f"{self._name()}: systems identical on every topic: {listed}{more}: each such pair "
                          "counts as a tie (swap and reversal rate 0.5 at any topic count)",
                          IdenticalPairsWarning, stacklevel=3)

    def _name(self) -> str:
        return self.source or (self.measure or "score matrix")

    # ----------------------------------------------------------------- shape
    @property
    def n_systems(self) -> int:
        return self.values.shape[0]

    @property
    def n_topics(self) -> int:
        return self.values.shape[1]

    @property
    def n_variants(self) -> int:
        return 1 if self.values.ndim == 2 else self.values.shape[2]

    @property
    def shape(self) -> tuple[int, ...]:
        return self.values.shape

    @property
    def has_variants(self) -> bool:
        return self.values.ndim == 3

    @property
    def has_missing(self) -> bool:
        return self._extent.nan

    @cached_property
    def _extent(self) -> _Extent:
        """The values' range and whether any is missing (the values are read-only: computed once)."""
        return _extent_of(self.values)

    def __repr__(self) -> str:
        extra = f" x {self.n_variants} variants" if self.has_variants else ""
        strata = f", {len(set(self.strata))} strata" if self.strata is not None else ""
        return (f"ScoreMatrix({self.measure or '?'}: {self.n_systems} systems x "
                f"{self.n_topics} topics{extra}{strata})")

    def _repr_html_(self) -> str:
        """The notebook view: the repr, where the scores came from, and one row a system
        (its mean over topics, then its first topics' scores), best first."""
        import pandas as pd

        from .results import html_view

        cells = self.topic_scores()
        means = self.system_means()
        frame = pd.DataFrame(cells[:, :HTML_TOPICS], index=pd.Index(self.systems, name="system"),
                             columns=list(self.topics[:HTML_TOPICS]))
        frame.insert(0, "mean", means)
        frame = frame.iloc[np.argsort(-means, kind="stable")]
        rows = [("measure", self.measure or "?"), ("systems", str(self.n_systems)),
                ("topics", str(self.n_topics))]
        if self.has_variants:
            rows.append(("variants", str(self.n_variants)))
        if self.strata is not None:
            rows.append(("strata", ", ".join(self.stratum_labels())))
        if self.has_missing:
            rows.append(("missing cells", str(int(np.isnan(self.values).sum()))))
        if self.source:
            rows.append(("source", str(self.source)))
        return html_view(repr(self), rows, frame=frame)

    # ----------------------------------------------------------- derived views
    def topic_scores(self) -> np.ndarray:
        """``(S, T)`` scores, averaging variants when there are any."""
        if self.values.ndim == 2:
            return self.values
        return np.nanmean(self.values, axis=2)

    def collapse_variants(self) -> ScoreMatrix:
        """A 2-D matrix whose cells are the mean over the variants of each topic."""
        if not self.has_variants:
            return self
        return replace(self, values=self.topic_scores(), variants=None)

    def system_means(self) -> np.ndarray:
        """Mean score of each system over topics (and variants); NaN cells ignored."""
        return np.nanmean(self.topic_scores(), axis=1)

    def identical_systems(self) -> list[tuple[str, ...]]:
        """Groups of systems whose scores are identical on every topic (and variant).

        Rows are compared as bytes (missing cells equal each other; ``0.0`` and ``-0.0``
        differ). Every row is hashed at once (its 64-bit words times fixed odd weights,
        summed modulo 2^64) and only rows with equal hashes are compared. Groups come in the order
        of their first system, each in matrix order.
        """
        S = self.n_systems
        vals = self.values.reshape(S, -1)
        if self._extent.nan:
            vals = np.where(np.isnan(vals), np.inf, vals)
        bits = vals.view(np.uint64)
        weights = np.random.default_rng(_ROW_HASH_SEED).integers(0, 2 ** 63, bits.shape[1], dtype=np.uint64) * 2 + 1
        h = np.empty(S, dtype=np.uint64)
        step = max(1, 2 ** 15 // max(1, bits.shape[1]))
        for r0 in range(0, S, step):  # (in pieces: a temporary of 2^15 words, in cache; products wrap)
            h[r0:r0 + step] = (bits[r0:r0 + step] * weights).sum(axis=1, dtype=np.uint64)
        _, inverse, counts = np.unique(h, return_inverse=True, return_counts=True)
        order = np.argsort(inverse.ravel(), kind="stable")  # systems by hash, each hash in matrix order
        starts = np.cumsum(counts) - counts
        groups: list[np.ndarray] = []
        for k in np.flatnonzero(counts > 1):
            groups += _equal_rows(bits, order[starts[k]:starts[k] + counts[k]])
        groups.sort(key=lambda g: int(g[0]))
        return [tuple(self.systems[i] for i in g) for g in groups]

    # ----------------------------------------------------------------- subsets
    def take(self, *, systems: Iterable | str | int | None = None,
             topics: Iterable | str | int | None = None) -> ScoreMatrix:
        """A sub-matrix (it may hold fewer than 2 systems or topics; the analyses refuse those).

        ``systems`` / ``topics`` select, in the order given:

        - labels: a string or an integer, or a list (tuple, pandas Index, ...) of them,
          matched by their string form, as :meth:`with_strata` does, so TREC's numeric
          topic ids select themselves (``take(topics=[1, 2])`` is topics ``'1'`` and
          ``'2'``, and ``take(systems="bm25")`` one system);
        - positions: a ``range`` or a NumPy integer array (what ``np.arange``,
          ``np.flatnonzero`` or ``argsort`` give), ``0 <= i < len`` (a NumPy array of
          strings selects labels);
        - a boolean mask (a NumPy or Python list of booleans) of the full length.

        An unknown label or a position out of range is a :class:`ParameterError`
        naming ``systems`` or ``topics``.
        """
        vals = self.values
        sys_idx = self._index(systems, self.systems, "systems")
        top_idx = self._index(topics, self.topics, "topics")
        vals = vals[sys_idx][:, top_idx]
        strata = None if self.strata is None else tuple(self.strata[i] for i in top_idx)
        return replace(self, values=vals, systems=tuple(self.systems[i] for i in sys_idx),
                       topics=tuple(self.topics[i] for i in top_idx), strata=strata)

    @staticmethod
    def _index(sel, labels: tuple[str, ...], what: str) -> np.ndarray:
        if sel is None:
            return np.arange(len(labels))
        if isinstance(sel, (str, bytes, int, np.integer)) and not isinstance(sel, (bool, np.bool_)):
            sel = [sel.decode() if isinstance(sel, bytes) else sel]     # one label
        positional = isinstance(sel, range) or (isinstance(sel, np.ndarray)
                                                and np.issubdtype(sel.dtype, np.integer))
        if not isinstance(sel, np.ndarray):
            try:
                sel = list(sel)
            except TypeError:
                raise ParameterError(f"expected labels, positions or a boolean mask, got {sel!r}",
                                     parameter=what) from None
        arr = np.asarray(sel)
        if arr.dtype == bool:
            if arr.shape != (len(labels),):
                raise ParameterError(f"boolean mask of length {arr.shape} for {len(labels)} {what}",
                                     parameter=what)
            return np.flatnonzero(arr)
        if positional:
            return _positions(arr, len(labels), what)
        return _label_positions(sel, labels, what)

    def with_strata(self, strata: Mapping[str, str] | Sequence[str] | None, *,
                    source: str | None = None) -> ScoreMatrix:
        """Attach strata: a mapping topic -> stratum (every topic must be present) or a sequence."""
        if strata is None:
            return replace(self, strata=None)
        if isinstance(strata, Mapping):
            lookup = {str(k): str(v) for k, v in strata.items()}
            missing = [t for t in self.topics if t not in lookup]
            if missing:
                raise InputError(f"{len(missing)} topic(s) have no stratum, first: {missing[0]!r}",
                                 file=source)
            strata = [lookup[t] for t in self.topics]
        return replace(self, strata=tuple(str(s) for s in strata))

    def with_measure(self, measure: str | None) -> ScoreMatrix:
        return replace(self, measure=measure)

    def stratum_labels(self) -> tuple[str, ...]:
        """Distinct strata in order of first appearance (empty without strata)."""
        if self.strata is None:
            return ()
        return tuple(dict.fromkeys(self.strata))

    # ------------------------------------------------------------- conversion
    def to_frame(self, *, tidy: bool = False) -> pd.DataFrame:
        """Wide frame (index topic, one column a system) or tidy frame
        (``system, topic[, variant], value[, measure][, stratum]``)."""
        import pandas as pd

        if not tidy:
            if self.has_variants:
                raise ParameterError("a matrix with variants has no wide form; use tidy=True",
                                     parameter="tidy")
            df = pd.DataFrame(self.values.T, index=pd.Index(self.topics, name="topic"),
                              columns=list(self.systems))
            return df
        S, T = self.n_systems, self.n_topics
        V = self.n_variants
        cols: dict[str, object] = {
            "system": np.repeat(np.array(self.systems, dtype=object), T * V),
            "topic": np.tile(np.repeat(np.array(self.topics, dtype=object), V), S),
        }
        if self.has_variants:
            cols["variant"] = np.tile(np.array(self.variants, dtype=object), S * T)
        cols["value"] = self.values.reshape(-1)
        if self.measure is not None:
            cols["measure"] = self.measure
        if self.strata is not None:
            cols["stratum"] = np.tile(np.repeat(np.array(self.strata, dtype=object), V), S)
        df = pd.DataFrame(cols)
        return df.dropna(subset=["value"]).reset_index(drop=True)

    def to_csv(self, path, *, tidy: bool = False) -> None:
        """Write as wide CSV (first column ``topic``) or tidy CSV; values in full precision.

        A path is written whole or not at all (:func:`planner._atomic.write_atomic`: the old
        file stays when the write fails); a file object is written to directly."""
        df = self.to_frame(tidy=tidy)
        if isinstance(path, (str, os.PathLike)):
            buf = io.BytesIO()      # compressed as the name says (.gz, .bz2, .xz, .zip), as pandas does
            df.to_csv(buf, index=not tidy, float_format="%.17g", lineterminator="\n",
                      compression=_COMPRESSION.get(Path(path).suffix.lower()))
            write_atomic(path, buf.getvalue())
        else:
            df.to_csv(path, index=not tidy, float_format="%.17g")

    @classmethod
    def from_frame(cls, df: pd.DataFrame, *, measure: str | None = None,
                   missing: str = "error", source: str | None = None) -> ScoreMatrix:
        """From a wide frame (index topics, columns systems) or a tidy frame with
        ``system``, ``topic`` and ``value`` columns (optional ``variant``, ``stratum``).

        Examples
        --------
        >>> import pandas as pd
        >>> df = pd.DataFrame({"system": ["a", "a", "b", "b"], "topic": ["1", "2", "1", "2"],
        ...                    "value": [0.1, 0.3, 0.2, 0.6]})
        >>> ScoreMatrix.from_frame(df, measure="AP")
        ScoreMatrix(AP: 2 systems x 2 topics)
        """
        if {"system", "topic", "value"} <= set(df.columns):
            return cls._from_tidy(df, measure=measure, missing=missing, source=source)
        return cls.build(df.to_numpy(dtype=float).T, [str(c) for c in df.columns],
                         [str(i) for i in df.index], measure=measure, missing=missing, source=source)

    @classmethod
    def _from_tidy(cls, df: pd.DataFrame, *, measure: str | None, missing: str,
                   source: str | None) -> ScoreMatrix:
        has_var = "variant" in df.columns
        keys = ["system", "topic"] + (["variant"] if has_var else [])
        dup = df.duplicated(subset=keys)
        if dup.any():
            row = df[dup].iloc[0]
            raise InputError("repeated cell: " + ", ".join(f"{k} {row[k]!r}" for k in keys),
                             file=source)
        systems, si = _codes(df["system"])
        topics, ti = _codes(df["topic"])
        variants = None
        if has_var:
            variants, vi = _codes(df["variant"])
            vals = np.full((len(systems), len(topics), len(variants)), np.nan)
            vals[si, ti, vi] = df["value"].to_numpy(dtype=float)
        else:
            vals = np.full((len(systems), len(topics)), np.nan)
            vals[si, ti] = df["value"].to_numpy(dtype=float)
        strata = None
        if "stratum" in df.columns:
            first = df.drop_duplicates("topic").set_index(df.drop_duplicates("topic")["topic"].astype(str))
            strata = [str(first.loc[t, "stratum"]) for t in topics]
        if measure is None and "measure" in df.columns:
            ms = df["measure"].astype(str).unique()
            if len(ms) > 1:
                raise InputError(f"several measures in one table ({', '.join(ms[:4])}); "
                                 "select one", file=source)
            measure = ms[0] if len(ms) else None
        return cls.build(vals, systems, topics, measure=measure, strata=strata,
                         variants=variants, missing=missing, source=source)


def _codes(col: pd.Series) -> tuple[list[str], np.ndarray]:
    """(distinct labels in order of first appearance, the position of each row's label)."""
    labels = list(dict.fromkeys(col.astype(str)))
    pos = {lab: i for i, lab in enumerate(labels)}
    return labels, col.astype(str).map(pos).to_numpy()


def _check_unique(labels: tuple[str, ...], what: str) -> None:
    if len(set(labels)) != len(labels):
        seen: set[str] = set()
        for lab in labels:
            if lab in seen:
                raise ParameterError(f"repeated label {lab!r}", parameter=what)
            seen.add(lab)


class _Extent(NamedTuple):
    """The smallest and largest value (missing cells ignored; NaN when no cell is a number) and
    whether any cell is missing (NaN)."""
    lo: float
    hi: float
    nan: bool


def _extent_of(vals: np.ndarray) -> _Extent:
    """The :class:`_Extent` of ``vals``: two passes (reductions, no temporary of the matrix' size)
    when no cell is missing, as ``min`` and ``max`` propagate NaN; two more when one is."""
    if not vals.size:
        return _Extent(math.nan, math.nan, False)
    lo = float(vals.min())
    if not math.isnan(lo):
        return _Extent(lo, float(vals.max()), False)
    return _Extent(float(np.fmin.reduce(vals, axis=None)), float(np.fmax.reduce(vals, axis=None)), True)


def _check_magnitude(vals: np.ndarray, ext: _Extent, systems: list[str], topics: list[str],
                     source: str | None) -> None:
    """InputError naming the first infinite score or score beyond ``MAX_ABS_SCORE``."""
    lo, hi = ext.lo, ext.hi
    if math.isnan(lo):              # no cells, or every one missing
        return
    if math.isinf(lo) or math.isinf(hi):
        s, t = np.argwhere(np.isinf(vals))[0][:2]
        raise InputError(f"infinite score for system {systems[s]!r}, topic {topics[t]!r}", file=source)
    if max(-lo, hi) > MAX_ABS_SCORE:
        s, t = np.argwhere(np.abs(vals) > MAX_ABS_SCORE)[0][:2]
        raise InputError(f"score {vals[(s, t)].flat[0]:.4g} for system {systems[s]!r}, topic "
                         f"{topics[t]!r} is too large to analyse (|score| at most {MAX_ABS_SCORE:g}: "
                         "fourth powers of differences must stay finite; rescale the measure)",
                         file=source)


def _apply_missing(vals: np.ndarray, systems: list[str], topics: list[str], strata: list[str] | None,
                   missing: str, source: str | None
                   ) -> tuple[np.ndarray, list[str], list[str], list[str] | None]:
    """``(values, systems, topics, strata)`` after the missing-cell policy ``missing``."""
    miss = np.isnan(vals)
    if vals.ndim == 3:
        miss = miss.any(axis=2)
    if not miss.any():
        return vals, systems, topics, strata
    if missing == "error":
        s, t = np.argwhere(miss)[0]
        raise InputError(
            f"{int(miss.sum())} missing cell(s), first: system {systems[s]!r}, "
            f"topic {topics[t]!r} (choose a missing-cell policy: zero, drop-topic, "
            "drop-system, keep)", file=source)
    if missing == "zero":
        vals = np.where(np.isnan(vals), 0.0, vals)
    elif missing == "drop-topic":
        keep = ~miss.any(axis=0)
        vals = vals[:, keep]
        topics = [t for t, k in zip(topics, keep.tolist()) if k]
        if strata is not None:
            strata = [x for x, k in zip(strata, keep.tolist()) if k]
    elif missing == "drop-system":
        keep = ~miss.any(axis=1)
        vals = vals[keep]
        systems = [s for s, k in zip(systems, keep.tolist()) if k]
    return vals, systems, topics, strata


def _positions(arr: np.ndarray, n: int, what: str) -> np.ndarray:
    """Integer positions ``0 <= i < n``, else a ParameterError naming ``what``."""
    arr = arr.reshape(-1).astype(np.intp)
    bad = arr[(arr < 0) | (arr >= n)]
    if bad.size:
        raise ParameterError(f"position {int(bad[0])} out of range for {n} {what} "
                             "(a range or NumPy integer array selects by position; a list "
                             "selects labels)", parameter=what)
    return arr


def _label_positions(sel, labels: tuple[str, ...], what: str) -> np.ndarray:
    """Positions of the labels in ``sel`` (matched by their string form)."""
    pos = {lab: i for i, lab in enumerate(labels)}
    out = []
    for lab in sel:
        if str(lab) not in pos:
            hint = ""
            if isinstance(lab, (int, np.integer)):
                hint = (" (integers in a list are labels; select positions with a range or a "
                        "NumPy integer array)")
            raise ParameterError(f"unknown {what[:-1]} {lab!r}{hint}", parameter=what)
        out.append(pos[str(lab)])
    return np.asarray(out, dtype=np.intp)


#: seed of the fixed weights of :meth:`ScoreMatrix.identical_systems`' row hashes
_ROW_HASH_SEED = 20_240_611


def _equal_rows(bits: np.ndarray, members: np.ndarray) -> list[np.ndarray]:
    """The groups (two or more) of equal rows among ``bits[members]`` (rows with one hash)."""
    same = np.all(bits[members] == bits[members[0]], axis=1)
    if same.all():
        return [members]
    seen: dict[bytes, list[int]] = {}  # a hash collision: split by the bytes themselves
    for i in members:
        seen.setdefault(bits[i].tobytes(), []).append(int(i))
    return [np.array(g) for g in seen.values() if len(g) > 1]

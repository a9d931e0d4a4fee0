"""Readers: TREC runs, qrels, ``trec_eval -q`` output, score tables, topic metadata.

Every reader takes a path (gzip is detected from the file's magic bytes and read
transparently, whatever the extension) or the text itself (a ``str`` that
contains a newline), and reports bad input as :class:`~planner.errors.InputError`
naming the file and line (``runs/a.run.gz:17: ...``).

Formats (``docs/inputs.md`` has the long version):

- **TREC run**: 6 whitespace-separated columns ``topic Q0 doc rank score tag``.
  The second column may be ``Q0``, ``q0`` or ``0``; the rank column is ignored
  (as trec_eval does). A repeated ``(topic, doc)`` pair is an error, or with
  ``duplicates="first"`` the first occurrence is kept (the lines dropped counted per run).
  A run's name is the file name without the extensions ``.gz .bz2 .xz`` and
  ``.run .txt .res .trec .tsv``; a tag column that disagrees with that name (or with
  itself) gives a warning. In a folder, empty files are skipped, ``select_runs`` (names
  or globs) chooses runs, and each kind of note (empty files, dropped pairs, tags) is said
  once with a count and the first names (``notes``; :class:`RunsRead` keeps them all).
- **qrels**: 4 columns ``topic iteration doc grade`` with an integer grade.
- **trec_eval -q**: lines ``measure <spaces> TAB topic TAB value``; rows of
  topic ``all`` are skipped except ``runid`` (the run's name when a single file
  is read; in a folder the file name is used so names stay unique).
- **wide CSV**: one row a topic, one column a system, an optional first column
  ``topic`` (otherwise topics are numbered 1..T); R-style numbers (``5e-04``);
  empty cells and ``NA`` are missing cells.
- **tidy CSV/TSV**: columns ``system, topic, value`` and optionally ``measure``,
  ``variant``, ``stratum``.
- **topic metadata CSV**: ``topic`` and ``stratum`` columns; extra columns kept.

Every reader drops a UTF-8 byte-order mark (Excel and Windows tools write one),
so it never becomes part of a topic id or measure name. Numbers must be plain
ASCII: Python's ``float`` would read ``1_0`` as 10, which no score file means, so
a cell with ``_`` or non-ASCII characters is a non-numeric cell.

Modules, one a reader: ``runs`` (TREC runs), ``qrels``, ``trec_eval`` (``-q``
output), ``tables`` (wide and tidy score tables), ``topics`` (topic metadata),
``folders`` (folders of files, run names, the run files chosen), ``notes`` (one line for a
note many inputs share), ``load`` (:func:`load_scores` and
:func:`as_matrix`), ``strata`` (:func:`attach_strata`), ``variants``
(:func:`stack_variants`, :func:`stack_with_strata`); ``text`` holds what they share.
"""

from __future__ import annotations

from .folders import RunFiles, files_in, match_runs, run_files, run_name
from .load import as_matrix, load_scores
from .qrels import Qrels, read_qrels
from .runs import Run, RunReader, RunsRead, read_run, read_runs
from .strata import attach_strata
from .tables import TOPIC_HEADERS
from .topics import read_topics
from .trec_eval import read_trec_eval
from .variants import stack_variants, stack_with_strata

__all__ = [
    "TOPIC_HEADERS",
    "Qrels",
    "Run",
    "RunFiles",
    "RunReader",
    "RunsRead",
    "as_matrix",
    "attach_strata",
    "files_in",
    "load_scores",
    "match_runs",
    "read_qrels",
    "read_run",
    "read_runs",
    "read_topics",
    "read_trec_eval",
    "run_files",
    "run_name",
    "stack_variants",
    "stack_with_strata",
]

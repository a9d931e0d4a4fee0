"""Input policies every interface offers (Python keyword, command-line option, study key).

A light module (no numpy, no pandas): the command line declares its choices from here
before any data is read.
"""

from __future__ import annotations

#: what to do with the missing cells of a score table: refuse them (``"error"``), score them 0,
#: drop the topics or the systems that have them, or keep them (REML fits only)
MISSING_POLICIES = ("error", "zero", "drop-topic", "drop-system", "keep")
#: the policies that leave a complete matrix: what the simulator, and so a study, takes ("keep" is
#: for fits alone)
COMPLETE_POLICIES = tuple(p for p in MISSING_POLICIES if p != "keep")

#: what to do with a (topic, document) pair a run repeats: refuse the run (``"error"``) or keep
#: the pair's first line and drop the others, counted per run (``"first"``)
DUPLICATE_POLICIES = ("error", "first")

#: how to choose the duplicate policy, in every interface (ends the repeated-pair error)
DUPLICATES_HINT = ("to keep the first occurrence: --duplicates first, duplicates='first' in Python, "
                   "collection.duplicates: first in a study")

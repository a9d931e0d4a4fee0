"""Random streams: one ``rng`` argument at each public entry, child streams per task.

Every public function that draws random numbers takes ``rng`` (``int``,
``numpy.random.Generator`` or ``None``) and turns it into a generator once with
:func:`as_generator`. Independent work items (scenarios, pairs chunks, repeats)
get their own child streams from :func:`child_streams`, derived from the parent's
seed sequence in a fixed order, so results do not depend on batch size or on how
many jobs run in parallel.
"""

from __future__ import annotations

import numpy as np


def as_generator(rng: int | np.random.Generator | None) -> np.random.Generator:
    """``np.random.default_rng(rng)``; a Generator passes through unchanged."""
    if isinstance(rng, np.random.Generator):
        return rng
    return np.random.default_rng(rng)


def child_streams(rng: int | np.random.Generator | None, n: int) -> list[np.random.Generator]:
    """``n`` independent generators spawned from ``rng`` in a fixed order."""
    return as_generator(rng).spawn(n)


def seed_of(rng: int | np.random.Generator | None) -> int | None:
    """The integer seed to record in outputs (``None`` when not given as an int)."""
    if isinstance(rng, (int, np.integer)):
        return int(rng)
    return None

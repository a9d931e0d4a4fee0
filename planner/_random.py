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

from .errors import ParameterError


def as_generator(rng: int | np.random.Generator | None) -> np.random.Generator:
    """``np.random.default_rng(rng)``; a Generator passes through unchanged."""
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (np.random.SeedSequence, np.random.BitGenerator)):
        return np.random.default_rng(rng)
    if isinstance(rng, bool) or not (rng is None or isinstance(rng, (int, np.integer))):
        raise ParameterError(f"expected an integer seed >= 0, a numpy Generator or None, got {rng!r}",
                             parameter="rng")
    if rng is not None and rng < 0:
        raise ParameterError(f"a seed must be an integer >= 0, got {rng}", parameter="rng")
    return np.random.default_rng(rng)


def child_streams(rng: int | np.random.Generator | None, n: int) -> list[np.random.Generator]:
    """``n`` independent generators spawned from ``rng`` in a fixed order."""
    return as_generator(rng).spawn(n)


def seed_of(rng: int | np.random.Generator | None) -> int | None:
    """The integer seed to record in outputs (``None`` when not given as an int)."""
    if isinstance(rng, (int, np.integer)):
        return int(rng)
    return None

"""Random streams: one ``rng`` argument at each public entry, child streams per task.

Every public function that draws random numbers takes ``rng`` (``int``,
``numpy.random.Generator`` or ``None``) and turns it into a generator once with
:func:`as_generator`. Independent work items (scenarios, pairs chunks, repeats)
get their own child streams from :func:`child_streams`, derived from the parent's
seed sequence in a fixed order, so results do not depend on batch size or on how
many jobs run in parallel.
"""

from __future__ import annotations

import hashlib

import numpy as np

from ._checks import check_rng
from .errors import ParameterError


def as_generator(rng: int | np.random.Generator | None) -> np.random.Generator:
    """``np.random.default_rng(rng)``; a Generator passes through unchanged."""
    if isinstance(rng, np.random.Generator):
        return rng
    check_rng(rng)
    return np.random.default_rng(rng)


def child_streams(rng: int | np.random.Generator | None, n: int) -> list[np.random.Generator]:
    """``n`` independent generators spawned from ``rng`` in a fixed order."""
    return as_generator(rng).spawn(n)


def seed_of(rng: int | np.random.Generator | None) -> int | None:
    """The integer seed to record in outputs (``None`` when not given as an int)."""
    if isinstance(rng, (int, np.integer)):
        return int(rng)
    return None


def draw_seed() -> int:
    """A fresh integer seed in ``[0, 2^31)`` for a call made with ``rng=None``: recorded in
    the result, it repeats the run (the CLI draws its seeds the same way)."""
    import secrets

    return secrets.randbelow(2 ** 31)


def seed_to_use(rng: int | np.random.Generator | None) -> int | np.random.Generator:
    """``rng`` itself (checked), or a drawn seed (:func:`draw_seed`) when it is None."""
    if rng is None:
        return draw_seed()
    as_generator(rng)       # a bad rng is an error before any work
    return rng


def keyed_stream(parent: int | np.random.Generator, key: str) -> np.random.Generator:
    """An independent stream named ``key``, derived from ``parent``'s seed sequence without
    advancing it: the same parent and key give the same stream whatever other keys are drawn,
    and in whatever order (unlike :func:`child_streams`, whose children depend on their
    position). Used where the work items are named (methods, scenarios), not numbered."""
    ss = as_generator(parent).bit_generator.seed_seq
    if not isinstance(ss, np.random.SeedSequence):   # numpy types it as the ISeedSequence interface
        raise ParameterError("the generator's seed sequence is not a numpy SeedSequence", parameter="rng")
    k = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big")
    return np.random.default_rng(np.random.SeedSequence(ss.entropy, spawn_key=(*ss.spawn_key, k),
                                                        pool_size=ss.pool_size))

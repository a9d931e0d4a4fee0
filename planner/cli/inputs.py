"""What several commands read: a score matrix (or an embedded data set), and a seed.

The library modules are imported inside the functions: they are heavy (numpy, pandas,
scipy), and ``planner --help`` or a usage error should not wait for them.
"""

from __future__ import annotations

import argparse
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ParameterError

if TYPE_CHECKING:
    from ..scores import ScoreMatrix


def load_scores(path: str, *, measure: str | None = None, strata: str | None = None, missing: str = "error",
                variant_divisor: int | None = None) -> ScoreMatrix:
    """:func:`planner.load_scores`, or the embedded data set of that name (``planner.datasets``,
    measure default nDCG@10) when no such file or folder exists; with ``variant_divisor``
    the query ids become (topic, variant) (:func:`planner.collection.stack_with_strata`)."""
    from .. import datasets  # heavy (pandas): loaded when a command reads scores
    from ..collection import load_scores as read
    from ..collection import stack_with_strata

    if variant_divisor is not None and variant_divisor < 2:   # before any data warning
        raise ParameterError(f"expected an integer >= 2, got {variant_divisor}", parameter="--variant-divisor")
    # with query variants the strata are attached after stacking (they may name topics)
    own = None if variant_divisor is not None else strata
    if path in datasets.available() and not Path(path).exists():
        m = datasets.load(path, measure=measure or "nDCG@10")
        m = read(m, strata=own) if own is not None else m
    else:
        m = read(path, measure=measure, strata=own, missing=missing)
    if variant_divisor is not None:
        if m.has_variants:
            raise ParameterError("the scores already have query variants (a 'variant' column): nothing to "
                                 "split", parameter="--variant-divisor")
        m = stack_with_strata(m, variant_divisor, strata)
    return m


def draw_seed(args: argparse.Namespace) -> None:
    """A command that draws random numbers without ``--seed`` gets a fresh seed, recorded in its
    output and added to the provenance command line, so the run can be repeated exactly."""
    if getattr(args, "seed", None) is None:
        args.seed = secrets.randbelow(2 ** 31)
        args.seed_drawn = True
        if getattr(args, "argv", None) is not None:
            args.argv = [*args.argv, "--seed", str(args.seed)]


def seed_note(args: argparse.Namespace) -> str:
    """`` (drawn; --seed repeats this run)`` after a seed :func:`draw_seed` drew, else ``""``."""
    return " (drawn; --seed repeats this run)" if getattr(args, "seed_drawn", False) else ""

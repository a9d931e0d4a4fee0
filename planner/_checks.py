"""Argument validators: one a concept, each raising :class:`~planner.errors.ParameterError`
with the parameter named.

The readers, scores, measures and variance steps check their arguments here, so one
concept (a test level, a fraction, a topic count, a choice among names, a seed) has one
rule and one wording.
"""

from __future__ import annotations

import re
from collections.abc import Collection

import numpy as np

from .errors import ParameterError

__all__ = [
    "MAX_ALPHA",
    "MIN_ALPHA",
    "check_alpha",
    "check_choice",
    "check_fraction",
    "check_int",
    "check_min_diff",
    "check_open_unit",
    "check_printable",
    "check_rng",
    "positive_numbers",
]

#: smallest test level accepted: below it t, F and chi-square quantiles overflow or lose
#: all precision (alpha 1e-300 gave a "power" of 2 and NaN interval bounds)
MIN_ALPHA = 1e-10
#: test levels are below this (a 1 - alpha interval narrower than 50% is not a confidence
#: statement); the same range as the study schema's ``alpha``
MAX_ALPHA = 0.5


def check_alpha(alpha: object, parameter: str = "alpha") -> float:
    """``alpha`` as a float in ``[MIN_ALPHA, MAX_ALPHA)``, else a ParameterError naming ``parameter``.

    Examples
    --------
    >>> check_alpha(0.05)
    0.05
    """
    rng = f"[{MIN_ALPHA:g}, {MAX_ALPHA:g})"
    if isinstance(alpha, bool):
        raise ParameterError(f"expected a number in {rng}, got {alpha!r}", parameter=parameter)
    try:
        a = float(alpha)  # type: ignore[arg-type]  # any object: float() decides
    except (TypeError, ValueError):
        raise ParameterError(f"expected a number in {rng}, got {alpha!r}", parameter=parameter) from None
    if not MIN_ALPHA <= a < MAX_ALPHA:
        raise ParameterError(f"must be in {rng}, got {alpha!r}", parameter=parameter)
    return a


def check_open_unit(value: object, parameter: str, *, what: str = "target") -> float:
    """A probability-like number strictly inside ``(0, 1)`` (a target Erho2 or Phi)."""
    try:
        g = float(value)  # type: ignore[arg-type]  # any object: float() decides
    except (TypeError, ValueError):
        raise ParameterError(f"expected a number in (0, 1), got {value!r}", parameter=parameter) from None
    if not 0 < g < 1:
        raise ParameterError(f"{what} must be in (0, 1), got {g!r}", parameter=parameter)
    return g


def check_fraction(value: object, parameter: str) -> float:
    """A fraction in ``[0, 1)`` (the share of systems ``drop`` removes)."""
    try:
        f = float(value)  # type: ignore[arg-type]  # any object: float() decides
    except (TypeError, ValueError):
        raise ParameterError(f"expected a fraction in [0, 1), got {value!r}", parameter=parameter) from None
    if not 0 <= f < 1:
        raise ParameterError(f"must be a fraction in [0, 1), got {f!r}", parameter=parameter)
    return f


def positive_numbers(n: object, parameter: str = "n") -> np.ndarray:
    """``n`` (a number or an array of them) as float64, every value positive and finite
    (topic or variant counts of a D-study)."""
    arr = np.asarray(n, dtype=np.float64)
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ParameterError(f"topic counts must be positive finite numbers, got {n!r}",
                             parameter=parameter)
    return arr


def check_int(value: object, parameter: str, *, minimum: int) -> int:
    """An integer ``>= minimum`` (anything ``int()`` takes, as the CLI passes strings)."""
    try:
        k = int(value)  # type: ignore[call-overload]  # any object: int() decides
    except (TypeError, ValueError):
        raise ParameterError(f"expected a positive integer, got {value!r}", parameter=parameter) from None
    if k < minimum:
        raise ParameterError(f"expected an integer >= {minimum}, got {value!r}", parameter=parameter)
    return k


def check_choice(value: object, choices: Collection[str], parameter: str, *,
                 noun: str | None = None, quote: bool = False) -> str:
    """``value`` when it is one of ``choices``, else a ParameterError.

    The message lists the choices (``a or b`` for two, ``one of a, b, c`` otherwise; each
    ``'quoted'`` with ``quote``): ``unknown <noun> 'x'; expected ...`` when ``noun`` is
    given, else ``expected ..., got 'x'``.

    Examples
    --------
    >>> check_choice("first", ("error", "first"), "duplicates")
    'first'
    """
    if isinstance(value, str) and value in choices:
        return value
    shown = [repr(c) if quote else str(c) for c in choices]
    alts = " or ".join(shown) if len(shown) == 2 else "one of " + ", ".join(shown)
    if noun is not None:
        raise ParameterError(f"unknown {noun} {value!r}; expected {alts}", parameter=parameter)
    raise ParameterError(f"expected {alts}, got {value!r}", parameter=parameter)


def check_rng(rng: object, parameter: str = "rng") -> None:
    """An ``rng`` argument: an integer seed >= 0, a numpy Generator, SeedSequence or
    BitGenerator, or ``None``."""
    if isinstance(rng, (np.random.Generator, np.random.SeedSequence, np.random.BitGenerator)):
        return
    if isinstance(rng, bool) or not (rng is None or isinstance(rng, (int, np.integer))):
        raise ParameterError(f"expected an integer seed >= 0, a numpy Generator or None, got {rng!r}",
                             parameter=parameter)
    if rng is not None and rng < 0:
        raise ParameterError(f"a seed must be an integer >= 0, got {rng}", parameter=parameter)



#: C0 control characters (and DEL) that ids and names may not hold: the scorer cuts a
#: document id at a NUL (``d1\\0junk`` would score as ``d1``); the file readers check the
#: same set (:func:`planner.collection.text.check_control`)
CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def check_printable(text: str, parameter: str, *, what: str = "id") -> str:
    """``text`` when it holds no control character (NUL, escape, ...), else a ParameterError."""
    m = CONTROL.search(text)
    if m is not None:
        raise ParameterError(f"{what} {text!r} holds the control character {m.group()!r}",
                             parameter=parameter)
    return text


def check_min_diff(value: object, parameter: str = "min_diff") -> float:
    """The true difference a power (or minimum-detectable) statement is made at: a finite
    number > 0 (at 0 no topic count detects it). The one rule of the CLI's ``--min-diff``,
    the Python functions' ``min_diff`` and the study schema's ``min_diff`` (``exclusiveMinimum: 0``)."""
    try:
        v = float(value)  # type: ignore[arg-type]  # any object: float() decides
    except (TypeError, ValueError):
        v = float("nan")
    if isinstance(value, bool) or not (v > 0 and np.isfinite(v)):
        raise ParameterError(f"the difference must be a positive finite number, got {value!r}",
                             parameter=parameter)
    return v

"""Type and range checks of numeric API arguments: a clear error naming the argument, never a crash deep inside.

Python's ``bool`` is an ``int``, and ``"1000"`` or ``1000.0`` silently "work" in some places and crash in
others; every public numeric option goes through one of these instead.
"""

from __future__ import annotations

import math
from numbers import Integral, Real


def check_int(name: str, value: object, minimum: int | None = 1) -> int:
    """``value`` as an ``int`` if it is an integer (not a bool) ``>= minimum``; else TypeError/ValueError."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_number(name: str, value: object, low: float | None = None, high: float | None = None, why: str = "") -> float:
    """``value`` as a finite ``float`` in ``[low, high]``; else TypeError/ValueError (``why`` explains the range)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise TypeError(f"{name} must be a number, got {type(value).__name__} {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value}")
    if (low is not None and value < low) or (high is not None and value > high):
        bounds = f"[{'-inf' if low is None else low}, {'inf' if high is None else high}]"
        raise ValueError(f"{name} must be in {bounds}{f' ({why})' if why else ''}, got {value}")
    return value

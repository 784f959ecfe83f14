"""Type, range and key checks of API arguments and recipes: an error naming the argument, never a crash deep inside
(``True``, ``"1000"`` or ``1000.0`` is refused where an integer is due)."""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Mapping
from numbers import Integral, Real
from typing import Any, NamedTuple


def check_int(name: str, value: object, minimum: int | None = 1) -> int:
    """``value`` as an ``int`` if it is an integer (not a bool) ``>= minimum``; else TypeError/ValueError."""
    if isinstance(value, bool) or not isinstance(value, Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__} {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_names(name: str, value: object, kind: str = "column names") -> list[str]:
    """``value`` (column names, or another ``kind`` of names) as a list of strings; one ``str`` (iterated, it would
    be its characters) or a non-string item is a TypeError naming ``name``."""
    if isinstance(value, str):
        raise TypeError(f"{name} must be a list of {kind}, got the single str {value!r}: write [{value!r}]")
    try:
        names = list(value)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(f"{name} must be a list of {kind}, got {type(value).__name__}") from None
    bad = [item for item in names if not isinstance(item, str)]
    if bad:
        raise TypeError(f"{name} must hold {kind} (str), got {bad[0]!r}")
    return names


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


def check_probability(name: str, value: object) -> float:
    """``value`` as a ``float`` in ``[0, 1)`` (a dropout or scrambling probability); else TypeError/ValueError."""
    value = check_number(name, value)
    if not 0.0 <= value < 1.0:
        raise ValueError(f"{name} must be in [0, 1), got {value}")
    return value


def check_keys(where: str, mapping: Mapping[str, object], known: Iterable[str]) -> None:
    """Refuse the first key of ``mapping`` outside ``known``, naming it as ``where.key`` with the closest known key."""
    known = sorted(known)
    prefix = f"{where} " if where.endswith(":") else f"{where}."  # "recipe:" names top-level keys as "recipe: key"
    for key in mapping:
        if key not in known:
            close = difflib.get_close_matches(str(key), known, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise ValueError(f"{prefix}{key} is not a known key{hint}; known: {', '.join(known)}")


def _numeric(value: Any) -> bool:
    """True for a string that reads as a number (``"1e-3"``, ``"32"``): YAML's text for what was meant as one."""
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return isinstance(value, str)


class Check(NamedTuple):
    """What a recipe value or training argument must be: of ``kind``, ``> 0`` (``positive``), within ``[low, high]``,
    one of ``choices``; None passes. Numbers go through :func:`check_int` / :func:`check_number`."""

    kind: type | tuple[type, ...]
    low: float | None = None
    high: float | None = None
    positive: bool = False
    choices: tuple[Any, ...] = ()

    def __call__(self, where: str, value: Any) -> None:
        if value is None:
            return
        if self.kind in (int, float):  # the API's numeric checks; a recipe reports every bad value as ValueError
            try:
                if self.kind is int:
                    check_int(where, value, None if self.low is None else int(self.low))
                    if self.high is not None and value > self.high:
                        raise ValueError(f"{where} must be <= {self.high:.0f}, got {value}")
                else:  # a positive value's range excludes a low bound of 0 (wise_ft, norm_power: (0, 1])
                    check_number(
                        where, value, self.low, self.high, "0 excluded" if self.positive and self.low == 0 else ""
                    )
            except TypeError as error:
                hint = (
                    " (YAML reads 1e-3 and quoted numbers as text: write 1.0e-3, unquoted)" if _numeric(value) else ""
                )
                raise ValueError(f"{error}{hint}") from None
        elif not isinstance(value, self.kind):
            names = " or ".join(k.__name__ for k in (self.kind if isinstance(self.kind, tuple) else (self.kind,)))
            raise ValueError(f"{where} must be a {names}, got {value!r}")
        if self.positive and value <= 0:
            raise ValueError(f"{where} must be > 0, got {value!r}")
        if self.choices and value not in self.choices:
            raise ValueError(f"{where} must be one of {list(self.choices)}, got {value!r}")

"""``apply_filters``: run the filters named in a recipe's ``filters:`` block and report rows kept/dropped per step."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from psp_st.arguments import Check, check_int, check_keys
from psp_st.data.dedup import ExactDedup
from psp_st.data.filters import (
    FilterCount,
    LengthFilter,
    LengthRatioFilter,
    ScoreRangeFilter,
    TrigramOverlapFilter,
    is_streaming,
)
from psp_st.data.lowercase import Lowercase


@dataclass
class FilterReport:
    """Rows in, and kept/dropped per step. For a streaming dataset the counts fill in while it is iterated."""

    total: int | None
    steps: list[FilterCount] = field(default_factory=list)
    streaming: bool = False

    @property
    def kept(self) -> int | None:
        if self.streaming:
            return None
        return self.steps[-1].kept if self.steps else self.total

    def to_dict(self) -> dict[str, Any]:
        steps = [
            {"filter": step.name, "params": step.params, "kept": step.kept, "dropped": step.dropped}
            for step in self.steps
        ]
        return {"total": self.total, "kept": self.kept, "streaming": self.streaming, "steps": steps}

    def __str__(self) -> str:
        header = "data filters" + (" (streaming: counts so far)" if self.streaming else f" ({self.total:,} pairs in)")
        lines = [header, f"  {'step':<16} {'kept':>12} {'dropped':>12} {'dropped %':>10}"]
        for step in self.steps:
            seen = step.kept + step.dropped
            share = f"{100 * step.dropped / seen:.2f}" if seen else "-"
            lines.append(f"  {step.name:<16} {step.kept:>12,} {step.dropped:>12,} {share:>10}")
        return "\n".join(lines)


#: Filter options that take a number (the others: ``symmetric`` a bool, language codes anything).
_NUMBERS = ("min", "max", "sentence1_scale", "min_confidence")


def _options(name: str, value: Any, known: tuple[str, ...], scalar: str | None = None) -> dict[str, Any]:
    """A filter's options as a mapping with known keys of the right kind (a bare value is the ``scalar`` key's;
    ``true``: none)."""
    if not isinstance(value, Mapping):
        if value is not True and scalar is None:
            options = f" or a mapping of {list(known)}" if known else ""
            raise ValueError(f"filter {name!r} takes true{options}, got {value!r}")
        value = {} if value is True else {scalar: value}
    check_keys(f"filter {name!r}:", value, known)
    for key, option in value.items():
        kind = bool if key == "symmetric" else float if key in _NUMBERS else object
        Check(kind)(f"filter {name!r}: {key}", option)
    return dict(value)


def _range(value: Any, step: str) -> tuple[float, float]:
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        value = dict(zip(("min", "max"), value, strict=True))
    elif not isinstance(value, Mapping):
        raise ValueError(f"filter {step!r} takes {{min: .., max: ..}} or [low, high], got {value!r}")
    low, high = (_options(step, value, ("min", "max")).get(key) for key in ("min", "max"))
    return (-math.inf if low is None else float(low)), (math.inf if high is None else float(high))


def _build_step(name: str, value: Any):
    if name == "lowercase":
        _options(name, value, ())
        return Lowercase()
    if name == "length":
        low, high = _range(value, name)
        return LengthFilter(min_length=max(low, 0.0), max_length=high)
    if name in ("score", "score_range"):
        low, high = _range(value, name)
        return ScoreRangeFilter(min_score=low, max_score=high)
    if name == "trigram_overlap":
        return TrigramOverlapFilter(max_overlap=float(_options(name, value, ("max",), "max").get("max", 0.7)))
    if name == "dedup":
        return ExactDedup(symmetric=bool(_options(name, value, ("symmetric",)).get("symmetric", False)))
    if name == "language":
        from psp_st.data.language import LanguageFilter, language_codes

        if isinstance(value, (str, Sequence)) and not isinstance(value, Mapping):
            return LanguageFilter(sentence1=language_codes(value), sentence2=language_codes(value))
        if isinstance(value, Mapping):
            return LanguageFilter(**_options(name, value, ("sentence1", "sentence2", "min_confidence", "candidates")))
        raise ValueError(f"filter 'language' takes a code, a list of codes or a mapping, got {value!r}")
    if name == "length_ratio":
        options = _options(name, value, ("max", "sentence1_scale"), "max")
        return LengthRatioFilter(float(options.get("max", 2.0)), float(options.get("sentence1_scale", 1.0)))
    raise ValueError(f"unknown filter {name!r}; known filters: {sorted(FILTER_NAMES)}")


FILTER_NAMES = ("lowercase", "length", "score", "score_range", "trigram_overlap", "dedup", "language", "length_ratio")


def _entries(config: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> list[tuple[str, Any]]:
    if isinstance(config, Mapping):
        return list(config.items())
    entries: list[tuple[str, Any]] = []
    for item in config:
        if not isinstance(item, Mapping) or len(item) != 1:
            raise ValueError(f"a list of filters must hold one-key mappings like {{'length': [3, 30]}}, got {item!r}")
        entries.extend(item.items())
    return entries


def filter_steps(config: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None) -> list[tuple[str, Any, Any]]:
    """``(name, value, filter)`` of each enabled step of a ``filters:`` block (see :func:`apply_filters`), all built
    first: a misspelt name or a bad value is an error before any data is read."""
    entries = _entries(config or {})
    return [
        (name, value, _build_step(name, value)) for name, value in entries if value is not None and value is not False
    ]


def apply_filters(
    dataset: Any, config: Mapping[str, Any] | Sequence[Mapping[str, Any]] | None, *, num_proc: int | None = None
):
    """Apply the filters of a recipe's ``filters:`` block (a mapping, in its order, or a list of one-key mappings;
    ``false`` / ``null`` disables a step); return ``(dataset, FilterReport)``. Known steps::

        filters:
          lowercase: true
          length: {min: 3, max: 30}          # mean whitespace length of the two sides, inclusive
          trigram_overlap: {max: 0.7}        # or just 0.7
          score: {min: 0.5, max: 1.0}        # needs a 'score' column
          language: {sentence1: de, sentence2: en, min_confidence: 0.5}   # or "en" for both sides
          length_ratio: {max: 2.0, sentence1_scale: 0.88}   # characters, sentence1 scaled (X-English bitext)
          dedup: true                        # or {symmetric: true}

    ``num_proc`` (datasets' processes) is ignored when streaming.
    """
    if num_proc is not None:
        check_int("num_proc (--num-proc)", num_proc)
    streaming = is_streaming(dataset)
    report = FilterReport(total=None if streaming else len(dataset), streaming=streaming)
    for name, value, step in filter_steps(config):
        count = FilterCount(name=name, params=dict(value) if isinstance(value, Mapping) else {"value": value})
        before = None if streaming else len(dataset)
        dataset = step.apply(dataset, num_proc=num_proc, counter=count if streaming else None)
        if before is not None:
            count.kept = len(dataset)
            count.dropped = before - count.kept
        report.steps.append(count)
    return dataset, report

"""``validate_pairs``: find bad rows (missing or empty side, null/NaN/inf score) before training, not mid-epoch."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from psp_st.arguments import check_int, check_names
from psp_st.data.filters import drop_rows, is_streaming
from psp_st.data.text_files import TEXT_COLUMNS, row_problem

_STRING_TYPES = ("string", "large_string")
_NUMBER_PREFIXES = ("float", "int", "uint", "double")
_MAX_EXAMPLES = 5


@dataclass
class ValidationReport:
    """Rows checked and rows skipped, by reason (for streaming datasets: counts so far)."""

    total: int | None = None
    skipped: int = 0
    reasons: Counter = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)
    streaming: bool = False

    def add(self, message: str, reason: str) -> None:
        self.skipped += 1
        self.reasons[reason] += 1
        if len(self.examples) < _MAX_EXAMPLES:
            self.examples.append(message)

    def __str__(self) -> str:
        seen = "streaming, counts so far" if self.streaming else f"{self.total:,} rows checked"
        if not self.skipped:
            return f"data validation ({seen}): no bad rows"
        reasons = ", ".join(f"{reason}: {count:,}" for reason, count in sorted(self.reasons.items()))
        examples = "; ".join(self.examples)
        return f"data validation ({seen}): skipped {self.skipped:,} bad rows ({reasons}); e.g. {examples}"


def check_schema(
    dataset: Any, columns: Sequence[str] = TEXT_COLUMNS, score_column: str | None = "score", where: str = ""
) -> None:
    """Raise if a sentence column is missing or not text, or the score column is not numeric (``where``: a prefix
    naming the data in messages)."""
    columns = check_names("columns", columns)
    available = dataset.column_names
    if available is None:
        return  # a streaming dataset with unknown columns: rows are checked one by one
    for column in columns:
        if column not in available:
            raise ValueError(
                f"{where}column {column!r} is missing; the dataset has {available}. "
                f"Rename it, e.g. load_pairs(..., columns={{{column!r}: '<column name>'}})"
            )
    features = dataset.features
    if features is None:
        return
    for column in columns:
        dtype = getattr(features[column], "dtype", None)
        if dtype not in _STRING_TYPES:
            raise TypeError(f"{where}column {column!r} holds {dtype or repr(features[column])}, expected strings")
    if score_column and score_column in available:
        dtype = getattr(features[score_column], "dtype", None)
        if dtype is None or not dtype.startswith(_NUMBER_PREFIXES):
            kind = dtype or repr(features[score_column])
            raise TypeError(f"{where}column {score_column!r} holds {kind}, expected numbers")


def _message(index: int, column: str, reason: str, row: dict[str, Any] | None = None) -> str:
    value = "" if row is None or column not in row else f" (value {row[column]!r:.60})"
    return f"row {index + 1}: column {column!r}: {reason}{value}"


def _bad_pair(where: str, message: str) -> ValueError:
    return ValueError(f"bad training pair: {where}{message}; fix the data or pass on_error='skip' (--on-error skip)")


def _bad_rows_arrow(table: Any, columns: Sequence[str], score_column: str | None) -> np.ndarray:
    """Positions of the bad rows of one Arrow batch (vectorised; text is not copied into Python)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    bad = np.zeros(table.num_rows, dtype=bool)
    for column in columns:
        values = table.column(column)
        empty = pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(values)), 0)
        bad |= pc.or_kleene(pc.is_null(values), pc.fill_null(empty, False)).to_numpy(zero_copy_only=False)
    if score_column and score_column in table.column_names:
        scores = table.column(score_column)
        floating = pa.types.is_floating(scores.type)
        bad |= pc.is_null(scores, nan_is_null=floating).to_numpy(zero_copy_only=False)
        if floating:
            bad |= pc.fill_null(pc.is_inf(scores), False).to_numpy(zero_copy_only=False)
    return np.flatnonzero(bad)


class _StreamCheck:
    """Per-row check for streaming datasets: raises or counts (runs in the iterating process)."""

    def __init__(
        self, columns: Sequence[str], score_column: str | None, skip: bool, report: ValidationReport, where: str
    ) -> None:
        self.columns, self.score_column, self.skip, self.report = tuple(columns), score_column, skip, report
        self.where = where

    def __call__(self, row: dict[str, Any], index: int) -> bool:
        problem = row_problem(row, self.columns, self.score_column)
        if problem is None:
            return True
        message = _message(index, *problem, row)
        if not self.skip:
            raise _bad_pair(self.where, message)
        self.report.add(message, problem[1])
        return False


def validate_pairs(
    dataset: Any,
    *,
    columns: Sequence[str] = TEXT_COLUMNS,
    score_column: str | None = "score",
    on_error: str = "raise",
    batch_size: int = 10_000,
    source: str | None = None,
):
    """Check every row of a pair dataset; return ``(dataset, ValidationReport)``.

    Args:
        dataset: a :class:`datasets.Dataset` (checked now, vectorised) or an :class:`datasets.IterableDataset`
            (schema checked now, rows lazily as they stream, with the same errors).
        score_column: checked for null/NaN/inf when present (None: not checked).
        on_error: ``"raise"``: ValueError naming the first bad row and column; ``"skip"``: drop bad rows and
            count them in the report. A missing or mistyped column always raises (ValueError / TypeError).
        source: the data's file name(s), named in errors (rows count from 1).
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    where = f"{source}: " if source else ""
    batch_size = check_int("batch_size", batch_size)
    columns = check_names("columns", columns)
    check_schema(dataset, columns, score_column, where)
    skip = on_error == "skip"
    if is_streaming(dataset):
        report = ValidationReport(streaming=True)
        return dataset.filter(_StreamCheck(columns, score_column, skip, report, where), with_indices=True), report

    report = ValidationReport(total=len(dataset))
    keep = np.ones(len(dataset), dtype=bool)
    needed = list(columns) + ([score_column] if score_column and score_column in dataset.column_names else [])
    view = dataset.select_columns(needed).with_format("arrow")
    offset = 0
    for table in view.iter(batch_size=batch_size):
        for position in _bad_rows_arrow(table, columns, score_column):
            row = table.slice(int(position), 1).to_pylist()[0]
            column, reason = row_problem(row, columns, score_column) or (columns[0], "bad value")
            message = _message(offset + int(position), column, reason, row)
            if not skip:
                raise _bad_pair(where, message)
            keep[offset + int(position)] = False
            report.add(message, reason)
        offset += table.num_rows
    return drop_rows(dataset, keep, "drop bad rows"), report

"""Line-checked TSV and JSONL pair readers: every malformed line is reported as ``file:line`` (datasets' are not)."""

from __future__ import annotations

import bz2
import functools
import gzip
import json
import logging
import lzma
import math
import os
import re
import sys
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any

from psp_st.io import lines

logger = logging.getLogger(__name__)

TEXT_COLUMNS = ("sentence1", "sentence2")

_SURROGATE = re.compile("[\ud800-\udfff]")
_OPENERS: dict[str, Callable[..., IO[Any]]] = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


class BadLineError(ValueError):
    """A malformed line of a TSV/JSONL file; the message starts with ``file:line:``."""

    def __init__(self, path: str, line_number: int, reason: str) -> None:
        super().__init__(f"{path}:{line_number}: {reason}")
        self.path = path
        self.line_number = line_number
        self.reason = reason


def _byte_lines(path: str, limit: int) -> Iterator[bytes]:
    """The lines of ``path`` as bytes (at most ``limit`` each), decompressed by its suffix; a compressed file that
    does not decompress (truncated, damaged, or not compressed) raises a ValueError naming it."""
    suffix = os.path.splitext(path)[1].lower()
    done = 0
    with _OPENERS.get(suffix, open)(path, "rb") as handle:
        while True:
            try:
                data = handle.readline(limit)
            except (EOFError, OSError, zlib.error, lzma.LZMAError) as error:  # gzip's BadGzipFile is an OSError
                if suffix not in _OPENERS:
                    raise
                raise ValueError(
                    f"{path}: cannot decompress it after line {done} ({type(error).__name__}: {error}): the file is "
                    f"truncated, damaged or not {suffix[1:]}-compressed; copy it again, or drop the {suffix} suffix"
                ) from error
            if not data:
                return
            done += 1
            yield data


def text_lines(path: str) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` of a UTF-8 text file (decompressed; line ends and a leading BOM removed); a line that
    is not UTF-8 raises :class:`BadLineError`, one over ``MAX_LINE_CHARS`` a ValueError before it is read whole."""
    limit = 4 * lines.MAX_LINE_CHARS + 2  # bytes: the longest line, its line end and one more
    for line_number, data in enumerate(_byte_lines(path, limit), start=1):
        if len(data) == limit and not data.endswith(b"\n"):
            raise lines.too_long_error(path, line_number, f"more than {lines.MAX_LINE_CHARS:,}")
        if line_number == 1 and (hint := lines.utf16_hint(data)):
            raise BadLineError(path, line_number, hint)
        try:
            line = data.decode("utf-8-sig" if line_number == 1 else "utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            raise BadLineError(
                path,
                line_number,
                f"line is not valid UTF-8 ({error.reason}); "
                f"{lines.re_encode_hint(data) if line_number == 1 else lines.RE_ENCODE}",
            ) from None
        if len(line) > lines.MAX_LINE_CHARS:
            raise lines.too_long_error(path, line_number, f"{len(line):,}")
        yield line_number, line


@dataclass(frozen=True)
class TextLayout:
    """Where each output column lives in a line: ``fields`` maps it to a position (TSV, 0-based) or key (JSONL),
    ``sentence1`` and ``sentence2`` required; ``header`` (TSV): every file starts with a header naming the fields;
    ``on_bad_lines``: ``"error"`` raises :class:`BadLineError`, ``"skip"`` drops bad lines (logged per file);
    ``unmapped`` (JSONL): optional keys the first line lacks, so a later line holding one is refused (not dropped)."""

    fields: Mapping[str, int | str]
    header: bool = False
    on_bad_lines: str = "error"
    unmapped: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        missing = [name for name in TEXT_COLUMNS if name not in self.fields]
        if missing:
            raise ValueError(f"layout must map {missing}; got {dict(self.fields)}")
        if self.on_bad_lines not in ("error", "skip"):
            raise ValueError(f"on_bad_lines must be 'error' or 'skip', got {self.on_bad_lines!r}")


def row_problem(
    row: dict[str, Any], columns: Sequence[str], score_column: str | None, content: bool = True
) -> tuple[str, str] | None:
    """(column, reason) of the first problem in a row, or None; ``content=False`` lets missing and empty texts pass
    (the readers leave those to :func:`psp_st.data.validate_pairs`, as for Parquet)."""
    for column in columns:
        if column not in row:
            return column, "missing column"
        value = row[column]
        if value is None:
            if content:
                return column, "missing value"
            continue
        if not isinstance(value, str):
            return column, f"non-string ({type(value).__name__})"
        if content and not value.strip():
            return column, "empty"
    if score_column and score_column in row:
        value = row[score_column]
        if value is None:
            return score_column, "missing score"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return score_column, f"non-numeric score ({type(value).__name__})"
        try:
            number = float(value)
        except OverflowError:  # a JSON integer beyond float64
            return score_column, "score out of range"
        if math.isnan(number):
            return score_column, "NaN score"
        if math.isinf(number):
            return score_column, "infinite score"
    return None


def _convert(raw: Mapping[str, object], path: str, line_number: int) -> dict[str, object]:
    """A parsed line as a row (a TSV score parsed as a number), or :class:`BadLineError` naming its first problem."""
    row = dict(raw)
    if isinstance(row.get("score"), str):
        try:
            row["score"] = float(str(row["score"]))
        except ValueError:
            raise BadLineError(path, line_number, f"column 'score' is not a number: {row['score']!r:.40}") from None
    problem = row_problem(row, TEXT_COLUMNS, "score", content=False) or next(
        ((column, "lone surrogate (not Unicode text)") for column, value in row.items() if _has_surrogate(value)),
        None,
    )
    if problem is not None:
        raise BadLineError(path, line_number, f"column {problem[0]!r}: {problem[1]}")
    keep = (*TEXT_COLUMNS, "score")
    return {column: value if column in keep or value is None else str(value) for column, value in row.items()}


def _has_surrogate(value: object) -> bool:
    """True for a string Arrow cannot store (JSON's ``"\\ud800"`` escape decodes to a lone surrogate)."""
    return isinstance(value, str) and _SURROGATE.search(value) is not None


#: What a reader yields per line: its number and either the raw row or why the line is bad.
_Line = tuple[int, dict[str, object] | str]


def tsv_rows(path: str, fields: Mapping[str, int | str], header: bool = False) -> Iterator[_Line]:
    """The ``fields`` (output name -> position, or header name with ``header``) of each non-blank line."""
    positions: dict[str, int] | None = None
    expected: int | None = None
    for line_number, line in text_lines(path):
        if not line.strip():
            continue
        parts = line.split("\t")
        if header and positions is None:
            names = {name: index for index, name in enumerate(parts)}
            missing = [str(key) for key in fields.values() if key not in names]
            if missing:
                raise BadLineError(path, line_number, f"header {parts} lacks column(s) {missing}")
            positions = {column: names[str(key)] for column, key in fields.items()}
            expected = len(parts)
            continue
        if positions is None:
            positions = {column: int(key) for column, key in fields.items()}
        if expected is None:
            expected = len(parts)
            needed = max(positions.values()) + 1
            if expected < needed:
                raise BadLineError(
                    path, line_number, f"expected at least {needed} tab-separated fields, got {expected}"
                )
        if len(parts) != expected:
            yield line_number, f"expected {expected} tab-separated fields (as on the first line), got {len(parts)}"
            continue
        quoted = next((part for part in parts if _csv_quoted(part)), None)
        if quoted is not None:
            yield (
                line_number,
                (
                    f"field {quoted:.40} is CSV-quoted (its quotes doubled, as pandas' to_csv writes a text holding a "
                    "quote); TSV fields are read as they are: write the pairs as JSONL or Parquet, or as TSV without quoting"
                ),
            )
            continue
        yield line_number, {column: parts[index] for column, index in positions.items()}


def _csv_quoted(field: str) -> bool:
    """True for a field a CSV writer quoted: wrapped in double quotes, the quotes inside doubled (``"say ""hi"" "``)."""
    return len(field) > 2 and field[0] == field[-1] == '"' and '""' in field[1:-1]


def json_line(line: str) -> Any:
    """One JSONL line parsed; ValueError with the reason (the JSON error and its column, an integer beyond Python's
    digit limit, nesting too deep), never Python's advice to change interpreter settings or a RecursionError."""
    try:
        return json.loads(line)
    except json.JSONDecodeError as error:
        raise ValueError(f"{error.msg} at column {error.colno}") from None
    except ValueError:  # int("1" * 5000): Python's limit on integer digits
        raise ValueError(f"an integer of more than {sys.get_int_max_str_digits():,} digits") from None
    except RecursionError:
        raise ValueError("nested too deeply") from None


def jsonl_rows(
    path: str, fields: Mapping[str, int | str], header: bool = False, unmapped: Sequence[str] = ()
) -> Iterator[_Line]:
    """The ``fields`` (output name -> key) of each non-blank line; ``header`` is unused. A line holding one of the
    ``unmapped`` keys raises ValueError: the first line set the columns without it, so its values would be lost."""
    for line_number, line in text_lines(path):
        if not line.strip():
            continue
        try:
            record = json_line(line)
        except ValueError as error:
            yield line_number, f"invalid JSON ({error})"
            continue
        if not isinstance(record, dict):
            yield line_number, f"expected a JSON object, got {type(record).__name__}"
            continue
        missing = [str(key) for key in fields.values() if key not in record]
        if missing:
            yield line_number, f"missing key(s) {missing}; the line has {sorted(record)}"
            continue
        late = [key for key in unmapped if key in record]
        if late:
            raise ValueError(
                f"{path}:{line_number}: key(s) {late} are not on the first line, whose keys set the columns, so their "
                "values would be dropped: give every line the same keys, or put the lines without them in another file"
            )
        yield line_number, {column: record[key] for column, key in fields.items()}


def generate_pairs(
    files: Sequence[str], stamps: Sequence[object], layout: TextLayout, file_format: str
) -> Iterator[dict]:
    """Yield checked rows (``sentence1``, ``sentence2`` and the layout's optional columns) from ``files``; ``stamps``
    (:func:`~psp_st.data.loaders.file_stamps`) only feeds datasets' cache fingerprint."""
    del stamps
    reader = tsv_rows if file_format == "tsv" else functools.partial(jsonl_rows, unmapped=layout.unmapped)
    for path in files:
        skipped = kept = 0
        examples: list[str] = []
        for line_number, raw in reader(path, layout.fields, layout.header):
            try:
                if isinstance(raw, str):
                    raise BadLineError(path, line_number, raw)
                row = _convert(raw, path, line_number)
            except BadLineError as error:
                if layout.on_bad_lines == "error":
                    raise
                skipped += 1
                examples = examples if len(examples) == 3 else [*examples, str(error)]
                continue
            kept += 1
            yield row
        if not kept:
            found = f"{skipped} malformed line(s)" if skipped else "a header or blank lines"
            raise ValueError(f"{path}: no pairs in the file (it holds {found})")
        if skipped:
            logger.warning("skipped %d malformed line(s) in %s, e.g. %s", skipped, path, "; ".join(examples))

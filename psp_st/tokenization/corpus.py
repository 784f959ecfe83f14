"""Reading texts from plain text files (one per line) or from columns of tabular files (Parquet, JSONL, CSV/TSV)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from psp_st.io.lines import iter_lines

TABULAR_SUFFIXES = {".parquet", ".jsonl", ".json", ".csv", ".tsv"}
DEFAULT_COLUMNS = (("sentence1", "sentence2"), ("sentence",), ("text",))


def read_texts(
    paths: Sequence[str | os.PathLike],
    columns: Sequence[str] | None = None,
    exclude: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """All texts of ``paths``: lines of text files, or the given (or default) columns of tabular files.

    Null cells are skipped. ``exclude`` (tabular files only): ``{other column: values}``, rows whose column holds
    one of the values are skipped (e.g. a corpus's dev rows).
    """
    texts: list[str] = []
    for path in map(Path, paths):
        if not path.is_file():
            raise FileNotFoundError(f"input file not found: {path}")
        if path.suffix.lower() in TABULAR_SUFFIXES:
            texts.extend(_read_columns(path, columns, exclude or {}))
        elif exclude:
            raise ValueError(f"{path}: exclude needs a tabular file with the columns {sorted(exclude)}")
        else:
            texts.extend(text for _, text in iter_lines(path))
    return texts


def _read_columns(path: Path, columns: Sequence[str] | None, exclude: Mapping[str, Sequence[str]]) -> list[str]:
    from datasets import load_dataset

    kind = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".csv": "csv", ".tsv": "csv"}[path.suffix.lower()]
    options = {"delimiter": "\t"} if path.suffix.lower() == ".tsv" else {}
    dataset = load_dataset(kind, data_files=str(path), split="train", **options)
    available = set(dataset.column_names)
    if columns is None:
        columns = next((list(group) for group in DEFAULT_COLUMNS if set(group) <= available), None)
        if columns is None:
            raise ValueError(f"{path}: no text column found among {sorted(available)}; pass --column NAME")
    missing = [column for column in [*columns, *exclude] if column not in available]
    if missing:
        raise ValueError(f"{path}: missing column(s) {missing}; it has {dataset.column_names}")
    for name, banned in exclude.items():
        keep = lambda values, banned=frozenset(banned): [value not in banned for value in values]  # noqa: E731
        dataset = dataset.filter(keep, input_columns=name, batched=True)
    texts: list[str] = []
    for column in columns:
        for row, value in enumerate(dataset[column][:]):  # one list per column: iterating the column reads row by row
            if value is None:
                continue  # a missing cell holds no text
            if not isinstance(value, str):
                raise TypeError(f"{path}: column {column!r} row {row} is {type(value).__name__}, expected str")
            texts.append(value)
    return texts

"""The one reader: ``load_pairs`` (Hub id or Parquet / TSV / JSONL files), ``load_table`` and ``read_texts``."""

from __future__ import annotations

import glob
import hashlib
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, NoReturn

from psp_st.arguments import check_names
from psp_st.data.text_files import (
    TEXT_COLUMNS,
    BadLineError,
    TextLayout,
    generate_pairs,
    json_line,
    jsonl_rows,
    text_lines,
    tsv_rows,
)
from psp_st.io.data_dir import resolve_data_files
from psp_st.io.extras import require_installed
from psp_st.io.lines import check_input_file, iter_lines

PASSTHROUGH_COLUMNS: tuple[str, ...] = ("group_id", "score", "lang")
"""Optional columns kept (when present) next to ``sentence1`` / ``sentence2``."""

FORMATS: dict[str, str] = {
    ".parquet": "parquet",
    ".tsv": "tsv",
    ".txt": "tsv",
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".ndjson": "jsonl",
}
_COMPRESSION = (".gz", ".bz2", ".xz")
#: Why a CSV file is refused, and what to do.
CSV_REFUSED = "CSV is not read; save it as TSV (with a header line), JSONL or Parquet"
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(/[\w.-]+)?$")

Source = str | os.PathLike | Sequence[str | os.PathLike]


def _suffix(path: str | os.PathLike) -> str:
    """The lower-cased suffix of a file name, compression suffixes looked through (``x.tsv.gz``: ``.tsv``)."""
    name = os.fspath(path).lower()
    for suffix in _COMPRESSION:
        name = name.removesuffix(suffix)
    return os.path.splitext(name)[1]


def _suffix_format(path: str | os.PathLike) -> str | None:
    return FORMATS.get(_suffix(path))


def infer_format(path: str | os.PathLike) -> str:
    """``"parquet"``, ``"tsv"`` or ``"jsonl"`` from a file name (``.gz`` / ``.bz2`` / ``.xz`` are looked through)."""
    file_format = _suffix_format(path)
    if file_format is None:
        if _suffix(path) == ".csv":
            raise ValueError(f"{os.fspath(path)}: {CSV_REFUSED}")
        raise ValueError(
            f"cannot tell the format of {os.fspath(path)!r} from its suffix ({', '.join(FORMATS)}; "
            f"{', '.join(_COMPRESSION)} looked through): rename the file, or give the format "
            "(psp-st data --format; load_pairs(format='parquet', 'tsv' or 'jsonl'))"
        )
    return file_format


def local_files(source: Source, data_dir: str | os.PathLike | None = None) -> list[str] | None:
    """The local files ``source`` names (:func:`psp_st.io.data_dir.resolve_data_files`), or None for a Hub id."""
    try:
        return resolve_data_files(source, data_dir, keep=lambda name: _suffix_format(name) is not None)
    except FileNotFoundError:
        text = source if isinstance(source, str) else ""
        local = text.startswith((".", "/")) or _suffix_format(text) is not None or os.path.exists(text)
        if _HUB_ID.match(text) and not local:  # a local folder without pair files is not a Hub id
            return None
        raise


def load_pairs(
    source: Source,
    *,
    format: str | None = None,
    columns: Mapping[str, str | int] | None = None,
    split: str = "train",
    streaming: bool = False,
    cache_dir: str | os.PathLike | None = None,
    on_bad_lines: str = "error",
    tsv_header: bool | None = None,
    keep_columns: Sequence[str] = (),
    data_dir: str | os.PathLike | None = None,
):
    """Load sentence pairs with columns ``sentence1``, ``sentence2`` (+ ``group_id`` / ``score`` / ``lang`` if present).

    Args:
        source: a Hub dataset id, a local file, folder or glob (Parquet, TSV, JSONL; text may be compressed), or a
            list of local files / globs (one format).
        columns: output column -> source column (a 0-based position in TSV without header), e.g. ``{"sentence1": 1}``.
        split: split to read from a Hub dataset (the split name given to local files).
        on_bad_lines: TSV/JSONL only: ``"error"`` raises :class:`~psp_st.data.text_files.BadLineError` naming
            the file and line of a malformed line; ``"skip"`` drops such lines and logs a count per file.
        tsv_header: whether TSV files start with a header line; None detects it (the first line holds every
            requested column name). Header-less TSV defaults to ``sentence1, sentence2[, score]`` by position.
        keep_columns: further source columns to keep unchanged (e.g. ``("corpus",)``); a missing one raises.

    Null or empty texts (and all Parquet and Hub rows) are not checked here: run :func:`psp_st.data.validate_pairs`.
    """
    require_installed(("datasets", "pyarrow"), "train", "psp_st.data.load_pairs")
    if columns is not None and not isinstance(columns, Mapping):
        raise TypeError(
            f"columns must map output columns to source columns (e.g. {{'sentence1': 0, 'sentence2': 1}}), got "
            f"{type(columns).__name__} {columns!r:.60}"
        )
    columns = dict(columns or {})
    keep_columns = check_names("keep_columns", keep_columns)
    cache_dir = None if cache_dir is None else os.fspath(cache_dir)
    unknown = [name for name in columns if name not in (*TEXT_COLUMNS, *PASSTHROUGH_COLUMNS, *keep_columns)]
    if unknown:
        raise ValueError(
            f"columns maps unknown output column(s) {unknown}; outputs are {[*TEXT_COLUMNS, *PASSTHROUGH_COLUMNS]}"
        )
    files = local_files(source, data_dir)
    if files is None:
        return _load_hub(str(source), columns, split, streaming, cache_dir, keep_columns)
    formats = {format or infer_format(path) for path in files}
    if len(formats) > 1:
        raise ValueError(
            f"source mixes formats {sorted(formats)}; load each format separately and combine them with datasets.concatenate_datasets"
        )
    file_format = formats.pop()
    if file_format == "parquet":
        return _load_parquet(files, columns, split, streaming, cache_dir, keep_columns)
    if file_format in ("tsv", "jsonl"):
        layout = _text_layout(files[0], file_format, columns, tsv_header, on_bad_lines, keep_columns)
        if file_format == "tsv" and tsv_header is None:
            _check_same_header(files, layout.header, columns)
        return _load_text(files, file_format, layout, split, streaming, cache_dir)
    raise ValueError(f"format must be 'parquet', 'tsv' or 'jsonl', got {file_format!r}")


def _output_mapping(
    available: Sequence[str], columns: Mapping[str, Any], keep_columns: Sequence[str], where: str
) -> dict[str, str]:
    """output column -> source column; raises naming ``where`` when a sentence column is absent."""
    mapping: dict[str, str] = {}
    for output in (*TEXT_COLUMNS, *PASSTHROUGH_COLUMNS, *keep_columns):
        name = columns.get(output, output)
        if name in available:
            mapping[output] = name
        elif output in TEXT_COLUMNS or output in columns or output in keep_columns:
            hint = f". {mapping_hint(available, columns)}"
            hint = hint if output in TEXT_COLUMNS else ""
            raise ValueError(
                f"{where}: column {name!r} (for {output!r}) is missing; available columns: {list(available)}{hint}"
            )
    return mapping


def mapping_hint(names: Sequence[str], columns: Mapping[str, Any] | None = None) -> str:
    """How to map a file's own column ``names`` to ``sentence1``/``sentence2`` (keeping what ``columns`` maps right,
    the others from the unused names in order), in each place a source is given: a recipe's ``data.sources`` entry,
    ``psp-st data`` and :func:`load_pairs`."""
    columns = columns or {}
    free = iter([name for name in names if name not in columns.values()] + ["<column>", "<column>"])
    first, second = (columns[out] if columns.get(out) in names else next(free) for out in TEXT_COLUMNS)
    return (
        f"Map the columns: in a recipe source `columns: {{sentence1: {first}, sentence2: {second}}}`, on the command "
        f"line `--column sentence1={first} --column sentence2={second}`, in Python "
        f"load_pairs(..., columns={{'sentence1': {first!r}, 'sentence2': {second!r}}})"
    )


_COLUMN_NAME = re.compile(r"[^\W\d][\w.-]*")


def _unnamed_header(path: str, fields: Sequence[str]) -> bool:
    """True when a TSV's first line looks like column names (every field a name without spaces) above a line of text
    (a field with a space): a header naming none of ``sentence1``/``sentence2``, not a pair of words."""
    if len(fields) < 2 or not all(_COLUMN_NAME.fullmatch(name) for name in fields):
        return False
    lines = (line for _, line in text_lines(path) if line.strip())
    second = next(lines, None) and next(lines, None)
    return second is not None and any(" " in value.strip() for value in second.split("\t"))


def _rename(dataset, mapping: Mapping[str, str]):
    dataset = dataset.select_columns(list(dict.fromkeys(mapping.values())))
    renames = {source: output for output, source in mapping.items() if source != output}
    return dataset.rename_columns(renames) if renames else dataset


def _load_hub(name: str, columns, split: str, streaming: bool, cache_dir, keep_columns):
    from datasets import load_dataset

    dataset = load_dataset(name, split=split, streaming=streaming, cache_dir=cache_dir)
    available = dataset.column_names
    if available is None:
        raise ValueError(f"Hub dataset {name!r} does not declare its columns; load it without streaming")
    return _rename(dataset, _output_mapping(available, columns, keep_columns, f"Hub dataset {name!r}"))


def parquet_schema(path: str, text_columns: Sequence[str] = (), numeric_columns: Sequence[str] = ()):
    """The Arrow schema of a Parquet file with rows whose ``text_columns`` hold strings (``numeric_columns``:
    numbers); errors name the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        metadata = pq.read_metadata(path)
    except (pa.ArrowException, OSError) as error:
        raise ValueError(f"{path}: not a readable Parquet file ({error})") from None
    if metadata.num_rows == 0:
        raise ValueError(f"{path}: no rows")
    schema = metadata.schema.to_arrow_schema()
    repeated = sorted({name for name in schema.names if schema.names.count(name) > 1})
    if repeated:
        raise ValueError(f"{path}: column name(s) {repeated} appear more than once; write the file with unique names")
    for name in (*text_columns, *numeric_columns):
        kind = schema.field(name).type if name in schema.names else None
        text = name in text_columns
        checks = (pa.types.is_string, pa.types.is_large_string) if text else (pa.types.is_integer, pa.types.is_floating)
        if kind is not None and not any(check(kind) for check in checks):
            raise ValueError(f"{path}: column {name!r} holds {kind}, expected {'strings' if text else 'numbers'}")
    return schema


def _load_parquet(files: list[str], columns, split: str, streaming: bool, cache_dir, keep_columns):
    first: dict[str, tuple[str, str]] | None = None  # output -> (source column, Arrow type) of the first file
    for path in files:
        schema = parquet_schema(path, [columns.get(name, name) for name in TEXT_COLUMNS])
        mapping = _output_mapping(schema.names, columns, keep_columns, path)
        layout = {out: (name, str(schema.field(name).type).replace("large_", "")) for out, name in mapping.items()}
        if first is not None and layout != first:
            raise ValueError(
                f"{path}: columns {layout} (name, type) differ from the first file's {first}; "
                "load the files separately or write them with one schema"
            )
        first = layout
    if streaming:
        from psp_st.data.parquet_stream import stream_parquet

        return stream_parquet(files, mapping, split=split)
    read = list(dict.fromkeys(mapping.values()))
    dataset = _read_parquet(files, split=split, cache_dir=cache_dir, columns=read)
    return _rename(dataset, mapping)


def _read_parquet(files: list[str], split: str = "train", cache_dir=None, **kwargs: Any):
    """``datasets.load_dataset("parquet", ...)`` of ``files``; a file whose pages do not decode (corrupt or
    overwritten bytes) raises a ValueError naming the file(s), not datasets' bare DatasetGenerationError."""
    from datasets import load_dataset
    from datasets.exceptions import DatasetGenerationError

    # named by the files' stamps: datasets' own key of a local file is its mtime alone, so a file replaced by another
    # of the same mtime (cp -p, rsync -a, tar, a 1 s/2 s-mtime file system) was read from its old Arrow copy (C13-2);
    # every map and filter after it is keyed from this name on
    name = "files-" + hashlib.sha1(" ".join(file_stamps(files)).encode()).hexdigest()[:16]
    try:
        return load_dataset(
            "parquet", name, data_files={split: _literal(files)}, split=split, cache_dir=cache_dir, **kwargs
        )
    except DatasetGenerationError as error:
        where = files[0] if len(files) == 1 else f"one of {len(files)} files ({files[0]}, ...)"
        raise ValueError(
            f"{where}: not a readable Parquet file ({type(error.__cause__).__name__}: {error.__cause__}); "
            "write it again or check the copy"
        ) from error


def load_table(
    source: Source,
    columns: Sequence[str],
    text_columns: Sequence[str] = (),
    numeric_columns: Sequence[str] = (),
    *,
    data_dir: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
):
    """Every column of local Parquet file(s) as one memory-mapped ``Dataset``: ``columns`` must exist, ``text_columns``
    hold a string and ``numeric_columns`` a number in every row (errors name the file and the first null row)."""
    require_installed(("datasets", "pyarrow"), "train", "psp_st.data.load_table")
    import pyarrow.compute as pc

    columns = check_names("columns", columns)
    text_columns = check_names("text_columns", text_columns)
    numeric_columns = check_names("numeric_columns", numeric_columns)
    files = resolve_data_files(source, data_dir, keep=lambda name: infer_format(name) == "parquet")
    for path in files:
        if infer_format(path) != "parquet":
            raise ValueError(
                f"{path}: this table is read from Parquet only (columns {list(columns)}): save it as Parquet "
                "(pandas: pd.read_csv(path, sep='\\t').to_parquet(...)); training pairs may be TSV or JSONL (load_pairs)"
            )
        names = parquet_schema(path, text_columns, numeric_columns).names
        missing = [column for column in columns if column not in names]
        if missing:
            raise ValueError(f"{path}: missing column(s) {missing}; it has {names}")
    cache = None if cache_dir is None else os.fspath(cache_dir)
    dataset = _read_parquet(files, cache_dir=cache)
    where = files[0] if len(files) == 1 else f"{files[0]} (+{len(files) - 1} files)"
    for column in (*text_columns, *numeric_columns):
        nulls = pc.is_null(dataset.data.column(column)).to_numpy(zero_copy_only=False)
        if nulls.any():
            expected = "a string" if column in text_columns else "a number"
            raise ValueError(
                f"{where}: column {column!r} row {int(nulls.argmax()) + 1} is null (missing), expected {expected}"
            )
    return dataset


def file_stamps(files: Sequence[str]) -> list[str]:
    """What datasets' cache of the files' rows is keyed by: ``size:mtime_ns`` of each file and psp-st's version
    (datasets hashes psp-st's reader and filter functions by name, not code: an upgrade's reading and filtering
    rules would otherwise apply to the older version's cached rows, C13-4)."""
    from psp_st import __version__

    return [*(f"{stat.st_size}:{stat.st_mtime_ns}" for stat in map(os.stat, files)), f"psp-st {__version__}"]


def _literal(files: list[str]) -> list[str]:
    """Resolved files as ``datasets`` data_files, which it globs again: ``pairs [v2].parquet`` must not be a pattern
    (matching nothing or another file). Names without ``*?[`` are unchanged (and so are their cache fingerprints)."""
    return [glob.escape(path) for path in files]


def _header(path: str, file_format: str) -> list[str]:
    """The column names of a Parquet file, of a JSONL file's first object or in a TSV file's first line."""
    if file_format == "parquet":
        return parquet_schema(path).names
    first = next((line for _, line in text_lines(path) if line.strip()), None)
    if first is None:
        raise ValueError(f"{path}: file is empty")
    if file_format == "tsv":
        return first.split("\t")
    try:
        record = json_line(first)
    except ValueError as error:
        raise ValueError(f"{path}: first line is not valid JSON ({error})") from None
    if not isinstance(record, dict):
        raise ValueError(f"{path}: first line is a JSON {type(record).__name__}, expected an object")
    return list(record)


def _names_columns(fields: Sequence[str], columns: Mapping[str, str | int]) -> bool:
    """Whether a TSV first line is a header: it names both sentence columns (never when columns are positions)."""
    if any(isinstance(value, int) for value in columns.values()):
        return False
    return all(columns.get(name, name) in fields for name in TEXT_COLUMNS)


def _check_same_header(files: Sequence[str], header: bool, columns: Mapping[str, str | int]) -> None:
    """Refuse TSV files of which some start with a header line and some do not (the layout comes from the first
    file, so another file's header would be read as a pair, or its first pair as a header)."""
    for path in files[1:]:
        fields = _header(path, "tsv")
        other = _names_columns(fields, columns) or (not columns and _unnamed_header(path, fields))
        if other != header:
            raise ValueError(
                f"{path} {'has no' if header else 'has a'} header line and {files[0]} {'has' if header else 'has not'}: "
                "give every file of a source the same layout, or load them as separate sources"
            )


def _text_layout(path: str, file_format: str, columns, tsv_header, on_bad_lines: str, keep_columns) -> TextLayout:
    fields = _header(path, file_format)
    if file_format == "jsonl":
        mapping = _output_mapping(fields, columns, keep_columns, f"{path}:1")
        unmapped = tuple(name for name in PASSTHROUGH_COLUMNS if name not in mapping)
        return TextLayout(fields=mapping, on_bad_lines=on_bad_lines, unmapped=unmapped)
    by_position = any(isinstance(value, int) for value in columns.values())
    detect = tsv_header is None
    if detect:
        tsv_header = _names_columns(fields, columns)
    if tsv_header:
        if by_position:
            raise ValueError("columns holds positions but tsv_header=True; give column names instead")
        mapping = _output_mapping(fields, columns, keep_columns, f"{path}:1 (header)")
        return TextLayout(fields=mapping, header=True, on_bad_lines=on_bad_lines)
    if columns and not by_position:
        if any(name in fields for name in columns.values()) or _unnamed_header(path, fields):
            _output_mapping(fields, columns, keep_columns, f"{path}:1 (header)")  # raises naming the missing column
        raise ValueError(f"{path} has no header line (first line: {fields[:4]}); give columns as 0-based positions")
    if not columns and detect and _unnamed_header(path, fields):  # else the header is trained as a pair
        raise ValueError(
            f"{path}:1 looks like a header {fields[:4]} that names no 'sentence1'/'sentence2' column. "
            f"{mapping_hint(fields)}; or give positions (sentence1: 0, sentence2: 1) to read line 1 as a pair"
        )
    if columns:
        positions = dict(columns)  # TextLayout refuses positions without sentence1 and sentence2
    else:
        positions = {"sentence1": 0, "sentence2": 1}
        if len(fields) == 3:
            positions["score"] = 2
            try:
                float(fields[2])
            except ValueError:
                raise ValueError(
                    f"{path}:1: the third field of a header-less TSV is read as the score, and {fields[2]!r:.40} is "
                    "not a number: give positions (sentence1: 0, sentence2: 1; --column sentence1=0 --column "
                    "sentence2=1) to leave it out, or a header line naming the columns"
                ) from None
    for name, value in positions.items():
        if not isinstance(value, int) or value < 0:
            raise ValueError(f"columns[{name!r}] must be a 0-based field position, got {value!r}")
    return TextLayout(fields=positions, on_bad_lines=on_bad_lines)


def _load_text(files: list[str], file_format: str, layout: TextLayout, split: str, streaming: bool, cache_dir):
    from datasets import Dataset, Features, IterableDataset, Value
    from datasets.exceptions import DatasetGenerationError

    features = Features({name: Value("float64" if name == "score" else "string") for name in layout.fields})
    # a tuple: datasets shards over gen_kwargs lists, which must all have the length of files
    gen_kwargs = {
        "files": list(files),
        "stamps": tuple(file_stamps(files)),
        "layout": layout,
        "file_format": file_format,
    }
    if streaming:
        return IterableDataset.from_generator(generate_pairs, features=features, gen_kwargs=gen_kwargs, split=split)
    try:
        return Dataset.from_generator(
            generate_pairs, features=features, cache_dir=cache_dir, gen_kwargs=gen_kwargs, split=split
        )
    except DatasetGenerationError as error:
        if isinstance(error.__cause__, ValueError):  # datasets wraps it; surface our file:line message
            raise error.__cause__ from None
        raise


DEFAULT_TEXT_COLUMNS = (("sentence1", "sentence2"), ("sentence",), ("text",))
_TABLE_SUFFIXES = (".parquet", ".jsonl", ".json", ".ndjson", ".tsv")


def read_texts(
    paths: Sequence[str | os.PathLike],
    columns: Sequence[str] | None = None,
    exclude: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """All texts of ``paths``, column by column: the lines of text files, or the ``columns`` (default: the first of
    :data:`DEFAULT_TEXT_COLUMNS` present) of Parquet/JSONL/TSV files, null cells skipped. ``exclude`` (tables only):
    ``{column: values}`` skips the rows whose column holds one of the values (e.g. a corpus's dev rows)."""
    texts: list[str] = []
    skip = {name: set(values) for name, values in (exclude or {}).items()}
    for path in (os.fspath(name) for name in paths):
        check_input_file(path)
        if not path.lower().endswith(_TABLE_SUFFIXES):
            if _suffix(path) == ".csv":
                raise ValueError(f"{path}: {CSV_REFUSED}")
            if exclude:
                raise ValueError(f"{path}: exclude needs a Parquet, JSONL or TSV table with the columns {sorted(skip)}")
            texts.extend(text for _, text in iter_lines(path))
            continue
        file_format = infer_format(path)
        names = _header(path, file_format)
        wanted = columns or next((group for group in DEFAULT_TEXT_COLUMNS if set(group) <= set(names)), None)
        if wanted is None:
            raise ValueError(f"{path}: no text column found among {names}; pass --column NAME")
        needed = [*wanted, *skip]
        if file_format == "parquet":
            table = load_table(path, needed)
            values = [table[column][:] for column in needed]  # one list per column, not one row at a time
            rows: Iterator[tuple[str, dict]] = (
                (f"{path}: row {number}", dict(zip(needed, row, strict=True)))
                for number, row in enumerate(zip(*values, strict=True), start=1)
            )
        else:
            reader = jsonl_rows if file_format == "jsonl" else tsv_rows
            rows = (
                (f"{path}:{number}", row) if isinstance(row, dict) else _bad_line(path, number, row)
                for number, row in reader(path, {name: name for name in needed}, True)
            )
        found: dict[str, list[str]] = {column: [] for column in wanted}
        for where, row in rows:
            if any(row[name] in banned for name, banned in skip.items()):
                continue
            for column in wanted:
                if row[column] is not None and not isinstance(row[column], str):
                    raise ValueError(f"{where}: column {column!r}: non-string ({type(row[column]).__name__})")
                if row[column] is not None:
                    found[column].append(row[column])
        texts.extend(text for column in wanted for text in found[column])
    return texts


def _bad_line(path: str, number: int, reason: str) -> NoReturn:
    raise BadLineError(path, number, reason)

"""Sharded jobs on disk: cutting inputs into row ranges, one output file per shard, and the manifest.

A job folder::

    plan.json              written first: psp-st's version, the job settings, shards and input fingerprints; a rerun
                           must match it
    part-00000.npy         one output file per shard, written atomically
    part-00000.done.json   written after its shard file (rows, sha256): marks the shard done
    manifest.json          written last, when every shard is done: shard -> file, rows, checksum
A shard whose ``.done.json`` still matches its file is never recomputed, so a rerun of the same command resumes."""

from __future__ import annotations

import itertools
import json
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from psp_st.arguments import check_int
from psp_st.io.atomic import atomic_path, atomic_write_json, sweep_temporaries
from psp_st.io.checksums import sha256_file
from psp_st.io.data_dir import resolve_data_files
from psp_st.io.lines import iter_line_blocks, line_offsets

logger = logging.getLogger(__name__)

PLAN_FILE = "plan.json"
MANIFEST_FILE = "manifest.json"
TEXT_SUFFIXES = (".txt", ".text", ".tsv")


def is_parquet(path: str | os.PathLike) -> bool:
    """Whether a sharded job reads ``path`` as Parquet (any case of ``.parquet``); else as text lines."""
    return Path(path).suffix.lower() == ".parquet"


@dataclass(frozen=True)
class Shard:
    """Rows ``[start, stop)`` of one input file (``row`` = global index of the first row over all inputs)."""

    index: int
    path: str
    start: int
    stop: int
    row: int
    column: str | None = None
    byte_start: int | None = None
    byte_stop: int | None = None

    @property
    def rows(self) -> int:
        return self.stop - self.start

    @property
    def name(self) -> str:
        return f"part-{self.index:05d}"


def read_job_json(path: Path) -> Any:
    """A job folder's JSON file; unreadable (damaged, cut short): ``ValueError`` naming it and what to do."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError) as error:  # JSONDecodeError, UnicodeDecodeError, a folder in its place
        raise ValueError(
            f"{path} is damaged ({error}): delete it and rerun the command (a damaged {PLAN_FILE}: pass --overwrite "
            "to start the job over)"
        ) from error


def input_files(spec: str | os.PathLike | Sequence[str | os.PathLike]) -> list[Path]:
    """The files of an input (:func:`psp_st.io.data_dir.resolve_data_files`; of a folder, its Parquet and text files).
    A file named twice (overlapping globs, a file beside its folder) is refused: its rows would be read twice."""
    files = [
        Path(name)
        for name in resolve_data_files(spec, keep=lambda name: name.lower().endswith((".parquet", *TEXT_SUFFIXES)))
    ]
    seen: set[Path] = set()
    for file in files:
        if file.resolve() in seen:
            raise ValueError(f"{file} is named twice by the input: its rows would be read twice; name each file once")
        seen.add(file.resolve())
    return files


def _parquet_rows(path: Path, column: str, shard_rows: int) -> int:
    import pyarrow.parquet as pq

    metadata = pq.ParquetFile(path)
    names = metadata.schema_arrow.names
    if column not in names:
        raise ValueError(
            f"{path}: no column {column!r} (columns: {names}); pass the right --column (--target-column for a --target file)"
        )
    groups = [metadata.metadata.row_group(group).num_rows for group in range(metadata.metadata.num_row_groups)]
    if groups and max(groups) > 2 * shard_rows:  # a shard decodes its row group from its start (batch by batch)
        logger.warning(
            "%s has row groups of up to %d rows: each of its shards of %d rows decodes its row group from the start "
            "up to its own rows, so time grows with the row group (memory does not); rewrite it with row groups of "
            "at most --shard-rows rows (pyarrow.parquet.write_table(..., row_group_size=N)) or raise --shard-rows",
            path,
            max(groups),
            shard_rows,
        )
    return metadata.metadata.num_rows


def plan_shards(files: Sequence[Path], shard_rows: int, column: str = "sentence") -> list[Shard]:
    """Cut ``files`` into shards of at most ``shard_rows`` rows, never spanning two files: a text file's lines (an
    empty line too), a Parquet file's values of ``column`` (a null is read as the empty text)."""
    check_int("shard_rows (--shard-rows)", shard_rows)
    shards: list[Shard] = []
    row = 0
    for path in files:
        if not is_parquet(path):  # a text file: shards are byte ranges
            offsets, total = line_offsets(path, shard_rows)
            offsets.append(path.stat().st_size)
        else:
            total, offsets = _parquet_rows(path, column, shard_rows), []
        for number, start in enumerate(range(0, total, shard_rows)):
            stop = min(total, start + shard_rows)
            where: dict[str, Any] = {"column": column}
            if offsets:
                where = {"byte_start": offsets[number], "byte_stop": offsets[number + 1]}
            shards.append(Shard(len(shards), str(path), start, stop, row, **where))
            row += stop - start
    return shards


def read_shard_texts(shard: Shard) -> list[str]:
    """The texts of one shard, in row order."""
    return [text for texts in iter_shard_texts(shard) for text in texts]


def iter_shard_texts(shard: Shard, chunk_rows: int = 1 << 62) -> Iterator[list[str]]:
    """The texts of one shard in row order, as lists of at most ``chunk_rows`` texts: memory holds one list (and, of
    Parquet, one decoded batch: the rows of a row group before the shard are decoded and dropped, never held)."""
    check_int("chunk_rows (--chunk-size)", chunk_rows)
    chunks: Iterator[list[str]]
    if shard.column is None:
        blocks = iter_line_blocks(
            shard.path,
            chunk_rows,
            byte_start=shard.byte_start or 0,
            byte_stop=shard.byte_stop or 0,
            first_line=shard.start + 1,
        )
        chunks = (texts for _, texts in blocks)
    else:
        chunks = _iter_parquet_texts(shard, min(chunk_rows, max(shard.rows, 1)))
    count = 0
    for texts in chunks:
        count += len(texts)
        if count > shard.rows:
            break
        yield texts
    if count != shard.rows:
        raise ValueError(
            f"{shard.path}: expected {shard.rows} rows in [{shard.start}, {shard.stop}), read "
            f"{'more' if count > shard.rows else count}; was the file changed after the job was planned?"
        )


def _iter_parquet_texts(shard: Shard, batch_rows: int) -> Iterator[list[str]]:
    """The shard's texts of its column, ``batch_rows`` decoded at a time (a null is the empty text); only the row
    groups that overlap the shard are read, the file in 1 MiB pieces (not a whole column chunk at once)."""
    import pyarrow.parquet as pq

    handle = pq.ParquetFile(shard.path, buffer_size=1 << 20, pre_buffer=False)
    sizes = [handle.metadata.row_group(group).num_rows for group in range(handle.metadata.num_row_groups)]
    starts = [0, *itertools.accumulate(sizes)]
    groups = [i for i in range(len(sizes)) if starts[i] < shard.stop and starts[i + 1] > shard.start]
    if not groups:
        return
    row = starts[groups[0]]  # the file's row number of the next batch's first row
    batches = handle.iter_batches(batch_size=batch_rows, row_groups=groups, columns=[shard.column], use_threads=False)
    for batch in batches:
        first, row = row, row + len(batch)
        low, high = max(shard.start, first), min(shard.stop, row)
        if low >= high:  # a batch of the row group before the shard: decoded, dropped
            continue
        texts = []
        for number, value in enumerate(batch.column(0).slice(low - first, high - low).to_pylist(), low):
            if value is not None and not isinstance(value, str):
                raise TypeError(
                    f"{shard.path}: row {number} of column {shard.column!r} is {type(value).__name__}, expected str"
                )
            texts.append(value or "")
        yield texts
        if row >= shard.stop:
            break


class ShardStore:
    """The output folder of one sharded job (see the module docstring for its layout)."""

    def __init__(self, folder: str | os.PathLike, suffix: str) -> None:
        self.folder = Path(folder)
        self.suffix = suffix

    def file(self, shard: Shard) -> Path:
        return self.folder / f"{shard.name}{self.suffix}"

    def _done_file(self, shard: Shard) -> Path:
        return self.folder / f"{shard.name}.done.json"

    def pending(self, job: dict[str, Any], shards: Sequence[Shard], restart: bool = False) -> list[dict[str, Any]]:
        """Record the plan (or check it against the folder's: another job's folder is refused, or with ``restart``
        cleared; nothing is mixed, not even shards of another psp-st version) and return the shards still to
        compute, as dicts for the workers."""
        import psp_st

        shard_dicts = [asdict(shard) for shard in shards]
        plan = json.loads(json.dumps({"psp_st_version": psp_st.__version__, "job": job, "shards": shard_dicts}))
        path = self.folder / PLAN_FILE
        saved = None
        if path.is_file():
            try:
                saved = read_job_json(path)
            except ValueError:
                if not restart:
                    raise
                saved = {}  # damaged: started over, like another job's plan
        if saved is not None and restart and saved != plan:
            self.clear()
            saved = None
        if saved is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            atomic_write_json(path, plan)
        elif saved != plan:
            old_job = saved.get("job", {})
            old, new = old_job.get("fingerprints", {}), job.get("fingerprints", {})
            changed = [name for name in new if name in old and old[name] != new[name]]
            settings = [
                f"{key} {old_job.get(key)!r} -> {value!r}"
                for key, value in plan["job"].items()
                if key != "fingerprints" and old_job.get(key) != value
            ]
            differs = f"settings {', '.join(settings)}" if settings else "other settings or inputs"
            why = f"{self.folder} holds another job (its {PLAN_FILE} differs: {differs})"
            if changed:
                why = f"{changed[0]} changed since the job in {self.folder} started"
            if saved.get("psp_st_version") != plan["psp_st_version"]:  # its shards may hold other vectors
                started = f"psp-st {saved['psp_st_version']}" if saved.get("psp_st_version") else "an older psp-st"
                why = f"{self.folder} holds a job started by {started}, not by this psp-st {plan['psp_st_version']}"
            raise ValueError(f"{why}: pass --overwrite to start over, or use a new output folder")
        self.sweep(shards)  # once for the job: the shards' own writes do not sweep
        return [asdict(shard) for shard in shards if self.record(shard) is None]

    def sweep(self, shards: Sequence[Shard]) -> None:
        """Delete dead writers' temporaries of the shards' files and done-records, one pass over the folder (each
        write sweeping for itself costs a pass per file: quadratic in shards)."""
        sweep_temporaries(self.folder, [n for s in shards for n in (self.file(s).name, self._done_file(s).name)])

    def clear(self) -> None:
        """Delete this job's files (manifest, shards, done-records, plan) so that it starts over; others are kept."""
        (self.folder / MANIFEST_FILE).unlink(missing_ok=True)
        for file in [*self.folder.glob(f"part-*{self.suffix}"), *self.folder.glob("part-*.done.json")]:
            file.unlink()
        (self.folder / PLAN_FILE).unlink(missing_ok=True)

    def record(self, shard: Shard) -> dict[str, Any] | None:
        """The done-record of a shard if it is finished and its file is intact, else None."""
        done = self._done_file(shard)
        if not done.is_file() or not self.file(shard).is_file():
            return None
        try:
            record = read_job_json(done)
        except ValueError:  # a damaged done-record: the shard is computed again, like a damaged shard file
            return None
        if (
            not isinstance(record, dict)
            or record.get("rows") != shard.rows
            or record.get("sha256") != sha256_file(self.file(shard))
        ):
            return None
        return record

    def write(self, shard: Shard, **arrays: np.ndarray) -> dict[str, Any]:
        """Save one shard's row-aligned arrays (``.npy``: the one array; ``.npz``: each by name); mark the shard done."""
        for key, array in arrays.items():
            if len(array) != shard.rows:
                raise ValueError(f"shard {shard.index}: {key} has {len(array)} rows for {shard.rows} input rows")
        if self.suffix == ".npy":
            return self.write_rows(shard, arrays.values())
        with atomic_path(self.file(shard), sweep=False) as tmp, open(tmp, "wb") as handle:
            np.savez(handle, allow_pickle=False, **arrays)
        return self._mark_done(shard)

    def write_rows(self, shard: Shard, blocks: Iterable[np.ndarray]) -> dict[str, Any]:
        """Save one shard's ``.npy`` from consecutive blocks of its rows (one dtype and row shape), each written as it
        comes: the bytes ``np.save`` writes for the whole array, with one block in memory; mark the shard done. The
        file appears only when complete (a killed job leaves no shard file, and no done-record)."""
        rows, kind = 0, None
        with atomic_path(self.file(shard), sweep=False) as tmp, open(tmp, "wb") as handle:
            for block in blocks:
                if kind is None:
                    kind = (block.dtype, block.shape[1:])
                    header = {"descr": np.lib.format.dtype_to_descr(block.dtype), "fortran_order": False}
                    np.lib.format.write_array_header_1_0(handle, {**header, "shape": (shard.rows, *block.shape[1:])})
                elif (block.dtype, block.shape[1:]) != kind:
                    raise ValueError(f"shard {shard.index}: a block of {block.dtype} {block.shape} after {kind}")
                rows += len(block)
                if rows > shard.rows:
                    break
                handle.write(np.ascontiguousarray(block).data)
            if kind is None or rows != shard.rows:
                raise ValueError(f"shard {shard.index}: {rows} rows written for {shard.rows} input rows")
        return self._mark_done(shard)

    def _mark_done(self, shard: Shard) -> dict[str, Any]:
        """Write the done-record of a shard whose file is complete (its rows and sha256) and return it."""
        record = {"shard": shard.index, "file": self.file(shard).name, "source": shard.path, "start": shard.start}
        record.update(stop=shard.stop, row=shard.row, rows=shard.rows, sha256=sha256_file(self.file(shard)))
        atomic_write_json(self._done_file(shard), record, sweep=False)
        return record

    def finish(self, job: dict[str, Any], shards: Sequence[Shard], extra: dict[str, Any] | None = None) -> dict:
        """Write ``manifest.json`` once every shard is done (raises naming the first missing shard otherwise)."""
        records = []
        for shard in shards:
            record = self.record(shard)
            if record is None:
                raise RuntimeError(f"shard {shard.index} ({self.file(shard)}) is not done; rerun the job to finish it")
            records.append(record)
        manifest = {"job": job, "rows": sum(shard.rows for shard in shards), "shards": records, **(extra or {})}
        self.sweep(shards)  # what workers killed during the job left
        atomic_write_json(self.folder / MANIFEST_FILE, manifest)
        return manifest


def read_manifest(folder: str | os.PathLike) -> dict[str, Any]:
    """The manifest of a finished job folder (raises when the job is unfinished)."""
    path = Path(folder) / MANIFEST_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: the job in {folder} is unfinished; rerun it to complete it")
    return read_job_json(path)


class ShardedVectors:
    """Row-addressable view of the ``.npy`` shards of an embedding job (memory-mapped, nothing loaded up front)."""

    def __init__(self, arrays: Sequence[np.ndarray]) -> None:
        if not arrays:
            raise ValueError("no vectors: the input has no rows")
        self.arrays = list(arrays)
        self.offsets = np.cumsum([0] + [len(array) for array in self.arrays])
        self.dim = int(self.arrays[0].shape[1])

    @classmethod
    def open(cls, folder: str | os.PathLike) -> ShardedVectors:
        manifest = read_manifest(folder)
        return cls([np.load(Path(folder) / record["file"], mmap_mode="r") for record in manifest["shards"]])

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def blocks(self, size: int = 65_536) -> Iterator[tuple[int, np.ndarray]]:
        """``(first_row, float32 block)`` over all rows in order."""
        for offset, array in zip(self.offsets, self.arrays, strict=False):
            for start in range(0, len(array), size):
                yield int(offset) + start, np.ascontiguousarray(array[start : start + size], dtype=np.float32)

    def take(self, ids: np.ndarray) -> np.ndarray:
        """Rows ``ids`` (any order) as a float32 array."""
        ids = np.asarray(ids, dtype=np.int64)
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        which = np.searchsorted(self.offsets, ids, side="right") - 1
        for shard in np.unique(which):
            mask = which == shard
            local = ids[mask] - self.offsets[shard]
            order = np.argsort(local)  # the memory map read in row order
            out[np.flatnonzero(mask)[order]] = self.arrays[shard][local[order]]
        return out

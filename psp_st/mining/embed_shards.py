"""Sharded embedding: every shard of the input becomes one ``.npy`` of vectors, locally or on Ray Data."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from psp_st.arguments import check_int
from psp_st.inference.files import EMBED_CHUNK_ROWS
from psp_st.io.checksums import sha256_file
from psp_st.io.model_names import resolve_model_name
from psp_st.mining.executor import Execution, run_tasks
from psp_st.mining.shards import Shard, ShardStore, input_files, is_parquet, iter_shard_texts, plan_shards

logger = logging.getLogger(__name__)


class EmbedWorker:
    """Shard worker: one model per process (the vectors of ``psp-st embed``); ``run`` embeds one shard into its ``.npy``."""

    def __init__(
        self,
        model: str,
        folder: str,
        normalize: bool = False,
        float16: bool = False,
        threads: int | None = None,
        chunk_rows: int = EMBED_CHUNK_ROWS,
    ) -> None:
        from psp_st.inference.load import open_model

        self.model = open_model(model, threads, engine=True)
        self.store = ShardStore(folder, ".npy")
        self.normalize = normalize
        self.dtype = np.float16 if float16 else np.float32
        self.chunk_rows = check_int("chunk_rows (--chunk-size)", chunk_rows)

    def run(self, task: dict[str, Any]) -> dict[str, Any]:
        shard = Shard(**task)
        record = self.store.record(shard)
        if record is not None:
            return record
        return self.store.write_rows(shard, self._blocks(shard))

    def _blocks(self, shard: Shard) -> Iterator[np.ndarray]:
        """The shard's vectors, ``chunk_rows`` texts embedded at a time (RAM: one chunk, whatever the shard's rows)."""
        from psp_st.inference import encode_texts
        from psp_st.inference.finite import check_finite

        row = shard.row
        for texts in iter_shard_texts(shard, self.chunk_rows) if shard.rows else [[]]:  # [[]]: an empty shard's dim
            vectors = encode_texts(self.model, texts, normalize=self.normalize)
            with np.errstate(over="ignore"):  # a float16 overflow is refused naming its row
                yield check_finite(vectors.astype(self.dtype, copy=False), start=row)
            row += len(texts)


def model_fingerprint(model: str) -> str:
    """sha256 over a model folder's files (cards and hidden files aside: a folder rebuilt in place differs); else
    the Hub id."""
    folder = Path(resolve_model_name(model))
    if not folder.is_dir():
        return str(model)
    digest = hashlib.sha256()
    for file in sorted(folder.rglob("*")):
        name = file.relative_to(folder).as_posix()
        if file.is_file() and file.suffix != ".md" and not any(part.startswith(".") for part in name.split("/")):
            digest.update(f"{name}:{sha256_file(file)}\n".encode())
    return digest.hexdigest()


def embed_shards(
    inputs: str | os.PathLike | Sequence[str | os.PathLike],
    folder: str | os.PathLike,
    model: str,
    shard_rows: int = 100_000,
    column: str = "sentence",
    normalize: bool = False,
    float16: bool = False,
    execution: Execution | None = None,
    overwrite: bool = False,
    chunk_rows: int = EMBED_CHUNK_ROWS,
) -> dict[str, Any]:
    """Embed every row of ``inputs`` into ``folder`` (one ``.npy`` per shard + ``manifest.json``); returns the manifest.
    A rerun resumes; an input or model folder whose content changed (sha256), or other settings, are refused, and
    with ``overwrite`` start over. Row ``i`` of a shard is input row ``shard.row + i``, locally and on Ray alike. A
    worker embeds and writes ``chunk_rows`` rows at a time (its RAM bound; not a job setting: the vectors are the
    same)."""
    execution = execution or Execution()
    files = input_files(inputs)
    # an empty input gives an empty result (one shard of 0 rows), as `psp-st embed` without shards does
    empty = Shard(0, str(files[0]), 0, 0, 0, column=column if is_parquet(files[0]) else None)
    shards = plan_shards(files, shard_rows, column=column) or [empty]
    settings = {"model": str(model), "normalize": normalize, "float16": float16}
    fingerprints = {f"the input {path}": sha256_file(path) for path in files}
    fingerprints[f"the model {model}"] = model_fingerprint(model)
    job = {"kind": "embed", **settings, "column": column, "shard_rows": shard_rows, "fingerprints": fingerprints}
    store = ShardStore(folder, ".npy")
    todo = store.pending(job, shards, restart=overwrite)
    logger.info(
        "embed: %d shards (%d done, %d to compute) into %s", len(shards), len(shards) - len(todo), len(todo), folder
    )
    check_int("chunk_rows (--chunk-size)", chunk_rows)
    worker = {**settings, "folder": str(Path(folder)), "threads": execution.threads, "chunk_rows": chunk_rows}
    run_tasks(todo, EmbedWorker, worker, execution)
    first = np.load(store.file(shards[0]), mmap_mode="r")
    return store.finish(job, shards, extra={"dim": int(first.shape[1]), "dtype": str(first.dtype)})

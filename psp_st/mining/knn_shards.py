"""Sharded k-nearest-neighbour search: each query shard of an embedding job becomes one ``.npz`` of ``ids`` (rows
of the indexed set) and ``sims`` ``(rows, k)``, best first, the exact cosines (the margin needs them; a quantised or
PCA index only chooses the neighbours). On a cluster the work folder must be on storage all nodes can read."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import numpy as np

from psp_st.arguments import check_int
from psp_st.io.checksums import sha256_file
from psp_st.mining.ann import exact_similarities, load_index, search
from psp_st.mining.executor import Execution, run_tasks
from psp_st.mining.shards import PLAN_FILE, Shard, ShardedVectors, ShardStore, read_job_json, read_manifest

logger = logging.getLogger(__name__)

#: Vectors re-ranked at once (queries x k): the (queries x k x dim) block is 128 MiB at 1024 dims, whatever k is.
RERANK_ROWS = 8192 * 4


def vector_shards(folder: str | os.PathLike) -> list[Shard]:
    """The shards of a finished embedding job folder."""
    read_manifest(folder)  # raises when unfinished
    plan = read_job_json(Path(folder) / PLAN_FILE)
    return [Shard(**shard) for shard in plan["shards"]]


class KnnWorker:
    """Shard worker: one index per process; ``run`` searches one shard of queries and saves its neighbours."""

    def __init__(
        self,
        index_path: str,
        queries: str,
        targets: str,
        folder: str,
        k: int,
        exclude_self: bool,
        nprobe: int | None = None,
        ef_search: int | None = None,
    ) -> None:
        self.index = load_index(index_path, nprobe=nprobe, ef_search=ef_search)
        self.queries = Path(queries)
        self.targets = ShardedVectors.open(targets)
        self.store = ShardStore(folder, ".npz")
        self.k = k
        self.exclude_self = exclude_self

    def run(self, task: dict[str, Any]) -> dict[str, Any]:
        shard = Shard(**task)
        record = self.store.record(shard)
        if record is not None:
            return record
        vectors = np.load(self.queries / f"{shard.name}.npy", mmap_mode="r")
        rows = np.arange(shard.row, shard.row + shard.rows, dtype=np.int64)
        ids = np.empty((shard.rows, self.k), dtype=np.int64)
        sims = np.empty((shard.rows, self.k), dtype=np.float32)
        block = max(1, RERANK_ROWS // self.k)
        for start in range(0, shard.rows, block):
            stop = min(shard.rows, start + block)
            queries = np.asarray(vectors[start:stop], dtype=np.float32)
            _, found = search(self.index, queries, self.k, exclude=rows[start:stop] if self.exclude_self else None)
            exact = exact_similarities(queries, self.targets, found)
            order = np.argsort(-exact, axis=1, kind="stable")
            ids[start:stop] = np.take_along_axis(found, order, axis=1)
            sims[start:stop] = np.take_along_axis(exact, order, axis=1)
        return self.store.write(shard, ids=ids, sims=sims)


def knn_shards(
    index_path: str | os.PathLike,
    queries: str | os.PathLike,
    targets: str | os.PathLike,
    folder: str | os.PathLike,
    k: int,
    exclude_self: bool = False,
    nprobe: int | None = None,
    ef_search: int | None = None,
    execution: Execution | None = None,
) -> dict[str, Any]:
    """Search every vector of the embedding folder ``queries`` against ``targets``'s index; returns the manifest."""
    check_int("k", k)
    execution = execution or Execution()
    shards = vector_shards(queries)
    settings = {"k": k, "exclude_self": exclude_self, "nprobe": nprobe, "ef_search": ef_search}
    job = {
        "kind": "knn",
        "index": str(index_path),
        "index_sha256": sha256_file(index_path),
        "queries": read_manifest(queries)["shards"],
        "targets": read_manifest(targets)["shards"],
        **settings,
    }
    store = ShardStore(folder, ".npz")
    todo = store.pending(job, shards, restart=True)  # only derived data: other settings recompute it
    logger.info(
        "knn: %d query shards (%d done, %d to search), k=%d", len(shards), len(shards) - len(todo), len(todo), k
    )
    paths = {"index_path": str(index_path), "queries": str(queries), "targets": str(targets), "folder": str(folder)}
    run_tasks(todo, KnnWorker, {**paths, **settings}, execution)
    return store.finish(job, shards, extra={"k": k})


def read_neighbours(folder: str | os.PathLike) -> tuple[np.ndarray, np.ndarray]:
    """All ``(sims, ids)`` of a finished knn folder, in query-row order."""
    manifest = read_manifest(folder)
    sims, ids = [], []
    for record in manifest["shards"]:
        with np.load(Path(folder) / record["file"], allow_pickle=False) as data:
            sims.append(data["sims"])
            ids.append(data["ids"])
    return np.concatenate(sims), np.concatenate(ids)

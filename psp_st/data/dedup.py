"""Exact de-duplication of sentence pairs by 64-bit pair hashes (datasets has none): 9 bytes per row for a
``Dataset``, a ``set`` of ~65 bytes per distinct pair for an ``IterableDataset``. A hash collision drops a pair."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from psp_st.data.filters import FilterCount, batch_pairs, drop_rows, is_streaming, require_columns
from psp_st.data.text_files import TEXT_COLUMNS


def pair_hash(text1: str, text2: str, symmetric: bool = False) -> int:
    """64-bit hash of a pair (order-free when ``symmetric``)."""
    if symmetric and text2 < text1:
        text1, text2 = text2, text1
    digest = hashlib.blake2b(text1.encode("utf-8", "surrogatepass"), digest_size=8)
    digest.update(b"\x00")
    digest.update(text2.encode("utf-8", "surrogatepass"))
    return int.from_bytes(digest.digest(), "little")


def _stream_unique(source: Any, symmetric: bool, counter: FilterCount | None) -> Iterator[dict]:
    unique = ExactDedup(symmetric)  # a fresh memory on every pass over the stream
    for row in source:
        kept = unique.keep({"sentence1": [row["sentence1"]], "sentence2": [row["sentence2"]]})
        if counter is not None:
            counter.update(kept)
        if kept[0]:
            yield row


@dataclass(frozen=True)
class ExactDedup:
    """Drop exact duplicate pairs (``symmetric``: also ``(b, a)`` after ``(a, b)``), keeping the first occurrence."""

    symmetric: bool = False
    batch_size: int = 10_000
    seen: set[int] = field(default_factory=set, compare=False, repr=False)
    name: ClassVar[str] = "dedup"

    def keep(self, batch: dict[str, list]) -> list[bool]:
        """Batched predicate with a memory (streams, ``psp-st mine``): a pair is kept the first time any batch has it."""
        verdict = []
        for a, b in batch_pairs(batch):
            key = pair_hash(a, b, self.symmetric)
            verdict.append(key not in self.seen)
            self.seen.add(key)
        return verdict

    def first_occurrences(self, dataset: Any) -> np.ndarray:
        """Boolean mask over the rows of a ``Dataset``: True at the first occurrence of each pair."""
        hashes = np.empty(len(dataset), dtype=np.uint64)
        offset = 0
        view = dataset.select_columns(list(TEXT_COLUMNS)).with_format("arrow")
        for table in view.iter(batch_size=self.batch_size):
            keys = [pair_hash(a, b, self.symmetric) for a, b in batch_pairs(table.to_pydict())]
            hashes[offset : offset + len(keys)] = keys
            offset += len(keys)
        keep = np.zeros(len(dataset), dtype=bool)
        keep[np.unique(hashes, return_index=True)[1]] = True
        return keep

    def apply(self, dataset: Any, num_proc: int | None = None, counter: FilterCount | None = None) -> Any:
        require_columns(dataset, TEXT_COLUMNS, self.name)
        if is_streaming(dataset):
            from datasets import IterableDataset

            return IterableDataset.from_generator(
                _stream_unique,
                features=dataset.features,
                gen_kwargs={"source": dataset, "symmetric": self.symmetric, "counter": counter},
            )
        return drop_rows(dataset, self.first_occurrences(dataset), "filter: dedup", num_proc)

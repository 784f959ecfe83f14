"""A shuffling batch sampler whose per-epoch permutation costs 4 bytes per row: ST's default one is a Python list,
the one part of training memory that grows with a memory-mapped corpus."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from sentence_transformers.base.sampler import DefaultBatchSampler


class CompactShuffleBatchSampler(DefaultBatchSampler):
    """Shuffled batches from a ``uint32`` permutation; the order depends only on ``(seed, epoch)``, so a resumed run
    sees the same order. Pass the class itself as the training arguments' ``batch_sampler``."""

    def __init__(
        self,
        dataset: Any,
        batch_size: int,
        drop_last: bool,
        valid_label_columns: list[str] | None = None,
        generator: Any = None,
        seed: int = 0,
    ) -> None:
        super().__init__(dataset, batch_size, drop_last, valid_label_columns, generator, seed)
        self.dataset = dataset
        self.num_rows = len(dataset)

    def permutation(self) -> np.ndarray:
        """This epoch's row order (``uint32`` below 2**32 rows, else ``int64``)."""
        dtype = np.uint32 if self.num_rows < 2**32 else np.int64
        order = np.arange(self.num_rows, dtype=dtype)
        np.random.default_rng([self.seed, self.epoch]).shuffle(order)
        return order

    def __iter__(self) -> Iterator[list[int]]:
        order = self.permutation()
        for start in range(0, len(self) * self.batch_size, self.batch_size):  # drop_last: whole batches only
            yield order[start : start + self.batch_size].tolist()

    def __len__(self) -> int:
        if self.drop_last:
            return self.num_rows // self.batch_size
        return (self.num_rows + self.batch_size - 1) // self.batch_size

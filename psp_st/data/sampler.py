"""A shuffling batch sampler whose per-epoch permutation costs 4 bytes per row instead of ~40.

Why our own: ST's default ``BatchSamplers.BATCH_SAMPLER`` wraps ``torch.utils.data.RandomSampler``, which
materialises every epoch's permutation as a Python list (``torch.randperm(n).tolist()``: an int object and a
pointer per row). That is the one piece of a training run whose memory grows with the corpus once the data
itself is memory-mapped. This sampler keeps the permutation as a ``uint32`` numpy array and yields one batch of
indices at a time (``dataset`` vs ``dataset-compact`` rows of ``benchmarks/results/data_rss.md``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
from sentence_transformers.base.sampler import DefaultBatchSampler


class CompactShuffleBatchSampler(DefaultBatchSampler):
    """Shuffled batches from a ``uint32`` permutation; the order depends only on ``(seed, epoch)``.

    Being a subclass of ST's :class:`~sentence_transformers.base.sampler.DefaultBatchSampler`, the class itself
    can be passed as ``batch_sampler``; the trainer calls ``set_epoch`` every epoch, and a resumed run sees the
    same order (``transformers`` skips the batches already trained on).

    Example::

        from sentence_transformers import SentenceTransformerTrainingArguments
        from psp_st.data.sampler import CompactShuffleBatchSampler

        args = SentenceTransformerTrainingArguments(output_dir="out", batch_sampler=CompactShuffleBatchSampler)
    """

    def __init__(
        self,
        dataset: Any,
        batch_size: int,
        drop_last: bool,
        valid_label_columns: list[str] | None = None,
        generator: Any = None,
        seed: int = 0,
    ) -> None:
        super().__init__(
            dataset,
            batch_size=batch_size,
            drop_last=drop_last,
            valid_label_columns=valid_label_columns,
            generator=generator,
            seed=seed,
        )
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
        for start in range(0, self.num_rows, self.batch_size):
            batch = order[start : start + self.batch_size]
            if self.drop_last and len(batch) < self.batch_size:
                return
            yield batch.tolist()

    def __len__(self) -> int:
        if self.drop_last:
            return self.num_rows // self.batch_size
        return (self.num_rows + self.batch_size - 1) // self.batch_size

"""Integer group ids for trainers that need them (the mega-batch miner compares ``int64`` group tensors).

A stable 63-bit hash of the string group id: no corpus-wide pass and no vocabulary in memory, so it works
on memory-mapped and streaming datasets alike. Two different groups share a code with probability about
``g**2 / 2**64`` for ``g`` groups (1e-8 for 500k groups); a collision only makes the miner skip a few more
negatives, it never lets a true paraphrase through as a negative.
"""

from __future__ import annotations

import hashlib
from typing import Any

_MASK = (1 << 63) - 1


def group_code(group: str) -> int:
    """Non-negative int64 code of one string group id."""
    digest = hashlib.blake2b(group.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little") & _MASK


def _codes(batch: dict[str, list], column: str) -> dict[str, list]:
    return {column: [-1 if group is None else group_code(str(group)) for group in batch[column]]}


def int_group_ids(dataset: Any, column: str = "group_id") -> Any:
    """Replace the string ``column`` by int64 codes (``-1`` for a missing group); lazy on streaming datasets."""
    from datasets import Value

    if dataset.column_names is not None and column not in dataset.column_names:
        raise ValueError(f"no {column!r} column to convert; the dataset has {dataset.column_names}")
    features = dataset.features.copy() if dataset.features is not None else None
    if features is not None:
        features[column] = Value("int64")
    kwargs: dict[str, Any] = {"batched": True, "fn_kwargs": {"column": column}, "features": features}
    return dataset.map(_codes, **kwargs)

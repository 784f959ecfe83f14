"""Speed of the baselines: pairs scored per second on one thread (the interleaved pass over saved models that
fills the table's column is ``benchmarks/baselines_table.py speed``)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from typing import Any

from .pair_data import load_pair_frame


def measure_pairs_per_second(
    score_pairs: Callable[[list[tuple[str, str]]], Any], pairs: Sequence[tuple[str, str]], threads: int = 1
) -> float:
    """Pairs per second of ``score_pairs`` over ``pairs`` with ``torch`` limited to ``threads`` (after a warm-up)."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        score_pairs(list(pairs[:32]))
        start = time.perf_counter()
        score_pairs(list(pairs))
        return len(pairs) / (time.perf_counter() - start)
    finally:
        torch.set_num_threads(previous)


def encode_pairs(model: Any) -> Callable[[list[tuple[str, str]]], None]:
    """Scoring pairs with a bi-encoder: both sides embedded (batch 32), as the speed column counts them."""

    def score(pairs: list[tuple[str, str]]) -> None:
        model.encode([a for a, _ in pairs], batch_size=32, show_progress_bar=False)
        model.encode([b for _, b in pairs], batch_size=32, show_progress_bar=False)

    return score


def speed_pairs(data_dir: str | os.PathLike | None = None, n: int = 1000) -> list[tuple[str, str]]:
    """The first ``n`` STS Benchmark test pairs: the speed-test input shared by every baseline."""
    frame = load_pair_frame("stsb-test", data_dir, limit=n)
    return list(zip(frame.sentence1, frame.sentence2, strict=True))

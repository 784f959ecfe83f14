"""The annealed mega-batch size schedule of Wieting & Gimpel (2018) / Wieting et al. (P-SP)."""

from __future__ import annotations

from dataclasses import dataclass

from psp_st.arguments import check_int


@dataclass(frozen=True)
class MegaBatchSchedule:
    """M (mini-batches per mega-batch): 1, then 1 more every ``anneal`` mini-batches up to ``megabatch_size``
    (``anneal=0``: always ``megabatch_size``). A pure function of the global mini-batch index, so it carries across
    epochs and resume; the last mega-batch of an epoch is cut short."""

    megabatch_size: int = 100
    anneal: int = 150

    def __post_init__(self) -> None:
        check_int("megabatch_size", self.megabatch_size)
        check_int("anneal", self.anneal, minimum=0)

    def size_at(self, batch_index: int) -> int:
        """M for a mega-batch that starts at global mini-batch ``batch_index``."""
        if self.anneal == 0:
            return self.megabatch_size
        return min(1 + batch_index // self.anneal, self.megabatch_size)

    def boundaries(self, first_batch: int, num_batches: int) -> list[tuple[int, int]]:
        """``(start, end)`` epoch-local mini-batch ranges of the mega-batches of an epoch whose first mini-batch has
        global index ``first_batch``."""
        spans = []
        start = 0
        while start < num_batches:
            end = min(start + self.size_at(first_batch + start), num_batches)
            spans.append((start, end))
            start = end
        return spans

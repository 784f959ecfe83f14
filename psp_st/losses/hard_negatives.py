"""Hardest opposite-side negatives over a (mega-)batch of pairs, fully vectorized."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from psp_st.arguments import check_int


def same_group(row_groups: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
    """``[i, j]``: pair ``i`` of ``row_groups`` and pair ``j`` of ``groups`` share a group id (``-1``: no group)."""
    return (row_groups.unsqueeze(1) == groups.unsqueeze(0)) & (row_groups.unsqueeze(1) >= 0)


def check_pairs(anchors: torch.Tensor, positives: torch.Tensor) -> int:
    """The number of pairs of two ``(N, dim)`` embedding columns of the same shape; else a ValueError."""
    if anchors.shape != positives.shape or anchors.ndim != 2:
        raise ValueError(
            f"anchors and positives must be (N, dim) with the same shape, got {tuple(anchors.shape)} "
            f"and {tuple(positives.shape)}"
        )
    return anchors.shape[0]


def mine_hardest_negatives(
    anchors: torch.Tensor,
    positives: torch.Tensor,
    groups: torch.Tensor | None = None,
    anchor_text_ids: torch.Tensor | None = None,
    positive_text_ids: torch.Tensor | None = None,
    chunk_size: int = 4096,
    dtype: torch.dtype = torch.float32,
    anchor_languages: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """For every pair ``(s_i, t_i)`` pick the most similar sentence of the *opposite side*.

    Returns ``(anchor_negative, positive_negative)``, two index tensors of shape ``(N,)``:

    * ``anchor_negative[i] = argmax_j cos(s_i, t_j)`` over positives ``j != i`` (the ``t'`` of the paper),
    * ``positive_negative[i] = argmax_j cos(t_i, s_j)`` over anchors ``j != i`` (the ``s'``).

    Opposite-side mining keeps bilingual (X-English) training valid: a negative comes from the side of the sentence
    it stands in for. When the first side mixes languages (X-English bitext: the second side is English), pass
    ``anchor_languages`` (an integer code per pair) and the negative of ``t_i`` also has the language of ``s_i``
    (``positive_negative[i]`` among anchors of ``anchor_languages[i]``).

    False-negative guards (both optional):

    * ``groups``: pairs with the same non-negative group id (e.g. all captions of one image) are never each
      other's negatives; ``-1`` means "no group".
    * ``anchor_text_ids`` / ``positive_text_ids``: integer ids of the *text* of each sentence (equal text ->
      equal id). A candidate whose text equals the sentence itself or its partner is skipped, so a sentence
      repeated in another pair is never its own hardest negative.

    A row whose every candidate is guarded (languages included) falls back to "anything but the partner"; with a
    single pair the partner itself is returned. Similarities are computed in row chunks of ``chunk_size``, in
    ``dtype`` (``torch.bfloat16`` is faster only on CPUs with native bf16 matmuls; argmax exact up to bf16 rounding).
    """
    n = check_pairs(anchors, positives)
    check_int("chunk_size", chunk_size)
    device = anchors.device
    names = ("groups", "anchor_text_ids", "positive_text_ids", "anchor_languages")
    for name, values in zip(names, (groups, anchor_text_ids, positive_text_ids, anchor_languages), strict=True):
        if values is not None and torch.as_tensor(values).numel() != n:
            raise ValueError(f"{name} has {torch.as_tensor(values).numel()} entries for {n} pairs")
    if groups is not None:
        groups = torch.as_tensor(groups, device=device).view(-1)
    if anchor_languages is not None:
        anchor_languages = torch.as_tensor(anchor_languages, device=device).view(-1)
    with torch.no_grad():
        a = F.normalize(anchors.detach().float(), dim=-1).to(dtype)
        p = F.normalize(positives.detach().float(), dim=-1).to(dtype)
        anchor_negative = torch.empty(n, dtype=torch.long, device=device)
        positive_negative = torch.empty(n, dtype=torch.long, device=device)
        for start in range(0, n, chunk_size):
            rows = torch.arange(start, min(start + chunk_size, n), device=device)
            local = torch.arange(len(rows), device=device)
            for queries, candidates, query_ids, partner_ids, candidate_languages, out in (
                (a, p, anchor_text_ids, positive_text_ids, None, anchor_negative),
                (p, a, positive_text_ids, anchor_text_ids, anchor_languages, positive_negative),
            ):
                scores = (queries[rows] @ candidates.T).float()
                guard = None
                if groups is not None:
                    guard = same_group(groups[rows], groups)
                if query_ids is not None and partner_ids is not None:
                    candidate_ids = partner_ids.to(device).unsqueeze(0)  # candidates are the partners' side
                    same_text = (candidate_ids == query_ids.to(device)[rows].unsqueeze(1)) | (
                        candidate_ids == partner_ids.to(device)[rows].unsqueeze(1)
                    )
                    guard = same_text if guard is None else guard | same_text
                if candidate_languages is not None:  # candidates must share the language of the partner
                    other_language = candidate_languages.unsqueeze(0) != candidate_languages[rows].unsqueeze(1)
                    guard = other_language if guard is None else guard | other_language
                if n > 1:
                    scores[local, rows] = float("-inf")  # never the partner
                best = (scores.masked_fill(guard, float("-inf")) if guard is not None else scores).argmax(dim=1)
                if guard is not None:
                    # rows whose every candidate is guarded fall back to "anything but the partner"
                    empty = torch.isneginf(scores.gather(1, best.unsqueeze(1)).squeeze(1)) | guard[local, best]
                    if bool(empty.any()):
                        best[empty] = scores[empty].argmax(dim=1)
                out[rows] = best
    return anchor_negative, positive_negative


def text_ids(*columns: list[str]) -> list[torch.Tensor]:
    """Integer ids shared across ``columns``: texts equal after lower-casing and stripping get equal ids.

    Vectorized with :func:`pandas.factorize` (feeds the text guard of :func:`mine_hardest_negatives`).
    """
    import numpy as np
    import pandas as pd

    sizes = [len(column) for column in columns]
    flat = pd.Series(np.concatenate([np.asarray(column, dtype=object) for column in columns]) if columns else [])
    codes, _ = pd.factorize(flat.str.lower().str.strip())
    return [torch.from_numpy(part.astype(np.int64)) for part in np.split(codes, np.cumsum(sizes)[:-1])]

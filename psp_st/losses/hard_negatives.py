"""Hardest opposite-side negatives over a (mega-)batch of pairs, fully vectorized."""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from psp_st.arguments import check_int
from psp_st.tokenization.text_checks import refuse_single_text


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
    guide: tuple[torch.Tensor, torch.Tensor] | None = None,
    guide_margin: float = 0.0,
) -> tuple[torch.Tensor, torch.Tensor]:
    """For every pair ``(s_i, t_i)``, the most similar sentence of the *opposite side* but the partner.

    Returns index tensors ``(N,)``: ``argmax_j cos(s_i, t_j)`` (the paper's ``t'``) and ``argmax_j cos(t_i, s_j)``
    (``s'``), ``j != i``; opposite sides keep X-English training valid. Guards: pairs of one ``groups`` id (``-1``:
    none); candidates whose text id (:func:`text_ids`) equals the sentence's or its partner's; with
    ``anchor_languages``, a negative of ``t_i`` of another language than ``s_i``; with ``guide`` (the two columns
    embedded by another model), a candidate the guide scores above the pair's own guide cosine minus
    ``guide_margin`` (a likely paraphrase: GISTEmbed's false-negative filter). A row whose every candidate is
    guarded falls back to "anything but the partner"; one pair gets its partner. ``chunk_size`` rows are scored at
    once in ``dtype`` (``torch.bfloat16`` pays only with native bf16 matmuls; argmax up to its rounding).
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
    guides: tuple[torch.Tensor | None, torch.Tensor | None] = (None, None)
    if guide is not None:
        if len(guide) != 2 or any(g.ndim != 2 or g.shape[0] != n for g in guide):
            raise ValueError(f"guide must be two (N, d) columns for {n} pairs, got {[tuple(g.shape) for g in guide]}")
        guides = tuple(F.normalize(g.detach().float().to(device), dim=-1) for g in guide)  # type: ignore[assignment]
    with torch.no_grad():
        a = F.normalize(anchors.detach().float(), dim=-1).to(dtype)
        p = F.normalize(positives.detach().float(), dim=-1).to(dtype)
        anchor_negative = torch.empty(n, dtype=torch.long, device=device)
        positive_negative = torch.empty(n, dtype=torch.long, device=device)
        for start in range(0, n, chunk_size):
            rows = torch.arange(start, min(start + chunk_size, n), device=device)
            local = torch.arange(len(rows), device=device)
            for queries, candidates, query_ids, partner_ids, candidate_languages, (guide_q, guide_c), out in (
                (a, p, anchor_text_ids, positive_text_ids, None, guides, anchor_negative),
                (p, a, positive_text_ids, anchor_text_ids, anchor_languages, guides[::-1], positive_negative),
            ):
                scores = (queries[rows] @ candidates.T).float()
                guard = (
                    torch.zeros_like(scores, dtype=torch.bool) if groups is None else same_group(groups[rows], groups)
                )
                if query_ids is not None and partner_ids is not None:
                    candidate_ids = partner_ids.to(device).unsqueeze(0)  # candidates are the partners' side
                    guard |= candidate_ids == query_ids.to(device)[rows].unsqueeze(1)
                    guard |= candidate_ids == partner_ids.to(device)[rows].unsqueeze(1)
                if candidate_languages is not None:  # candidates must share the language of the partner
                    guard |= candidate_languages.unsqueeze(0) != candidate_languages[rows].unsqueeze(1)
                if guide_q is not None and guide_c is not None:  # the guide's likely paraphrases are no negatives
                    by_guide = guide_q[rows] @ guide_c.T  # the partner's cosine from the same product: a copy of
                    guard |= by_guide > by_guide[local, rows].unsqueeze(1) - guide_margin  # the partner ties it
                if n > 1:
                    scores[local, rows] = float("-inf")  # never the partner
                best = scores.masked_fill(guard, float("-inf")).argmax(dim=1)
                # rows whose every candidate is guarded fall back to "anything but the partner"
                empty = torch.isneginf(scores.gather(1, best.unsqueeze(1)).squeeze(1)) | guard[local, best]
                if bool(empty.any()):
                    best[empty] = scores[empty].argmax(dim=1)
                out[rows] = best
    return anchor_negative, positive_negative


def text_ids(*columns: Sequence[str]) -> list[torch.Tensor]:
    """Integer ids shared across ``columns`` (the text guard of :func:`mine_hardest_negatives`): texts equal after
    lower-casing and stripping get equal ids."""
    import numpy as np
    import pandas as pd

    for column in columns:
        refuse_single_text(column)
    sizes = [len(column) for column in columns]
    flat = pd.Series(np.concatenate([np.asarray(column, dtype=object) for column in columns]) if columns else [])
    codes, _ = pd.factorize(flat.str.lower().str.strip())
    return [torch.from_numpy(part.astype(np.int64)) for part in np.split(codes, np.cumsum(sizes)[:-1])]

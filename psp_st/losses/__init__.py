"""Training losses; they see sentence embeddings only, so they work for every encoder."""

from __future__ import annotations

from psp_st.losses.contrastive import CosineContrastiveLoss, add_random_negatives
from psp_st.losses.distillation import TeacherDistillationLoss
from psp_st.losses.hard_negatives import mine_hardest_negatives, text_ids
from psp_st.losses.margin import ParaphraseMarginLoss

__all__ = [
    "CosineContrastiveLoss",
    "ParaphraseMarginLoss",
    "TeacherDistillationLoss",
    "add_random_negatives",
    "mine_hardest_negatives",
    "text_ids",
]

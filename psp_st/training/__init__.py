"""Paraphrastic training inside Sentence-Transformers: annealed mega-batching, sparse Adam, recipes."""

from __future__ import annotations

from psp_st.training.arguments import PSPTrainingArguments
from psp_st.training.megabatch import NEGATIVE_COLUMNS, MegaBatchStream, MegaBatchTrainer
from psp_st.training.optimizer import SparseDenseAdam
from psp_st.training.schedule import MegaBatchSchedule

__all__ = [
    "NEGATIVE_COLUMNS",
    "MegaBatchSchedule",
    "MegaBatchStream",
    "MegaBatchTrainer",
    "PSPTrainingArguments",
    "SparseDenseAdam",
]

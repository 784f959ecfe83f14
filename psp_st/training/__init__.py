"""Paraphrastic training inside Sentence-Transformers: annealed mega-batching, sparse Adam, recipes."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from psp_st.training.arguments import PSPTrainingArguments
    from psp_st.training.megabatch import NEGATIVE_COLUMNS, MegaBatchStream, MegaBatchTrainer
    from psp_st.training.optimizer import SparseDenseAdam
    from psp_st.training.schedule import MegaBatchSchedule

#: Imported on first use: ``psp-st data --filters`` reads YAML with ``psp_st.training.recipe.RecipeLoader`` and
#: needs no trainer (Sentence-Transformers and transformers: seconds to import and ~0.5 GB).
_LAZY = {
    "NEGATIVE_COLUMNS": "psp_st.training.megabatch",
    "MegaBatchSchedule": "psp_st.training.schedule",
    "MegaBatchStream": "psp_st.training.megabatch",
    "MegaBatchTrainer": "psp_st.training.megabatch",
    "PSPTrainingArguments": "psp_st.training.arguments",
    "SparseDenseAdam": "psp_st.training.optimizer",
}

__all__ = [
    "NEGATIVE_COLUMNS",
    "MegaBatchSchedule",
    "MegaBatchStream",
    "MegaBatchTrainer",
    "PSPTrainingArguments",
    "SparseDenseAdam",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'psp_st.training' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})

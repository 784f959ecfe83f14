"""The one data path, on HF ``datasets``: read, validate and filter pairs; a recipe's training pairs and groups."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from psp_st.data.corpora import load_opusparcus
from psp_st.data.dedup import ExactDedup, pair_hash
from psp_st.data.filters import (
    ExcludeFilter,
    FilterCount,
    LengthFilter,
    PairFilter,
    ScoreRangeFilter,
    TrigramOverlapFilter,
    mean_length,
    trigram_overlap,
)
from psp_st.data.groups import pair_groups
from psp_st.data.loaders import PASSTHROUGH_COLUMNS, infer_format, load_pairs, load_table
from psp_st.data.lowercase import Lowercase
from psp_st.data.pipeline import FILTER_NAMES, FilterReport, apply_filters
from psp_st.data.sources import PairSource, load_training_pairs, sample_rows
from psp_st.data.text_files import BadLineError
from psp_st.data.validation import ValidationReport, check_schema, validate_pairs

if TYPE_CHECKING:
    from psp_st.data.sampler import CompactShuffleBatchSampler

__all__ = [
    "FILTER_NAMES",
    "PASSTHROUGH_COLUMNS",
    "BadLineError",
    "CompactShuffleBatchSampler",
    "ExactDedup",
    "ExcludeFilter",
    "FilterCount",
    "FilterReport",
    "LengthFilter",
    "Lowercase",
    "PairFilter",
    "PairSource",
    "ScoreRangeFilter",
    "TrigramOverlapFilter",
    "ValidationReport",
    "apply_filters",
    "check_schema",
    "infer_format",
    "load_opusparcus",
    "load_pairs",
    "load_table",
    "load_training_pairs",
    "mean_length",
    "pair_groups",
    "pair_hash",
    "sample_rows",
    "trigram_overlap",
    "validate_pairs",
]


def __getattr__(name: str) -> Any:
    """Import the sampler lazily: it needs sentence-transformers (and torch), the rest of the package does not."""
    if name == "CompactShuffleBatchSampler":
        from psp_st.data.sampler import CompactShuffleBatchSampler

        return CompactShuffleBatchSampler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "CompactShuffleBatchSampler"})

"""Data pipeline on HF ``datasets``: load pairs, validate them, filter them (all memory-mapped or streaming)."""

from __future__ import annotations

from psp_st.data.corpora import load_bitext, load_opusparcus, load_scored_pairs, load_training_pairs
from psp_st.data.dedup import ExactDedup, pair_hash
from psp_st.data.filters import (
    FilterCount,
    LengthFilter,
    PairFilter,
    ScoreRangeFilter,
    TrigramOverlapFilter,
    mean_length,
    trigram_overlap,
)
from psp_st.data.groups import group_code, int_group_ids
from psp_st.data.loaders import PASSTHROUGH_COLUMNS, infer_format, load_pairs
from psp_st.data.lowercase import Lowercase
from psp_st.data.pipeline import FILTER_NAMES, FilterReport, apply_filters
from psp_st.data.text_files import BadLineError
from psp_st.data.validation import ValidationReport, check_schema, validate_pairs

__all__ = [
    "FILTER_NAMES",
    "PASSTHROUGH_COLUMNS",
    "BadLineError",
    "CompactShuffleBatchSampler",
    "ExactDedup",
    "FilterCount",
    "FilterReport",
    "LengthFilter",
    "Lowercase",
    "PairFilter",
    "ScoreRangeFilter",
    "TrigramOverlapFilter",
    "ValidationReport",
    "apply_filters",
    "check_schema",
    "group_code",
    "infer_format",
    "int_group_ids",
    "load_bitext",
    "load_opusparcus",
    "load_pairs",
    "load_scored_pairs",
    "load_training_pairs",
    "mean_length",
    "pair_hash",
    "trigram_overlap",
    "validate_pairs",
]


def __getattr__(name: str):
    """Import the sampler lazily: it needs sentence-transformers (and torch), the rest of the package does not."""
    if name == "CompactShuffleBatchSampler":
        from psp_st.data.sampler import CompactShuffleBatchSampler

        return CompactShuffleBatchSampler
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

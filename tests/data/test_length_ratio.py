"""Length-ratio filter: characters of the longer side over the shorter side."""

from __future__ import annotations

import math

import pytest

from psp_st.data.filters import LengthRatioFilter, length_ratio


def test_length_ratio_counts_stripped_characters():
    assert length_ratio("abcd", "ab") == 2.0
    assert length_ratio("  ab  ", "abcd") == 2.0
    assert length_ratio("", "") == 1.0
    assert math.isinf(length_ratio("", "abc"))


def test_length_ratio_filter_keeps_pairs_up_to_the_ratio():
    batch = {"sentence1": ["abcd", "abcdefg", ""], "sentence2": ["ab", "ab", "x"]}
    assert LengthRatioFilter(max_ratio=2.0).keep(batch) == [True, False, False]
    with pytest.raises(ValueError, match="max_ratio must be >= 1"):
        LengthRatioFilter(max_ratio=0.9)

"""Length-ratio filter: characters of the longer side over the shorter side."""

from __future__ import annotations

import math

import pytest

from psp_st.data.filters import LengthRatioFilter, length_ratio, median_length_ratio


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


def test_scale_multiplies_the_first_side_before_the_ratio():
    assert length_ratio("ab", "abcdefgh", scale=4.0) == 1.0
    assert length_ratio("abcd", "ab", scale=0.25) == 2.0


def test_median_length_ratio_is_the_median_of_second_over_first():
    # ratios 2, 3, 0.5 (their mean is 1.83): the median, not the mean
    assert median_length_ratio(["ab", "a", "abcdef", ""], ["abcd", "aaa", "abc", "x"]) == 2.0
    with pytest.raises(ValueError, match="no pair with two non-empty sides"):
        median_length_ratio([""], ["x"])


def test_scaled_ratio_keeps_chinese_english_pairs_the_unscaled_one_drops(data_dir):
    import pandas as pd

    frame = pd.read_parquet(data_dir / "bitext" / "zh-en.parquet").head(200)
    batch = {"sentence1": frame.source.tolist(), "sentence2": frame.target.tolist()}
    scale = median_length_ratio(batch["sentence1"], batch["sentence2"])
    assert scale > 2.5  # English needs about 3.5 characters per Chinese character
    assert sum(LengthRatioFilter(2.0).keep(batch)) < len(frame) / 4
    assert sum(LengthRatioFilter(2.0, sentence1_scale=scale).keep(batch)) > 0.9 * len(frame)


def test_scale_must_be_positive():
    with pytest.raises(ValueError, match="sentence1_scale must be a finite number > 0"):
        LengthRatioFilter(2.0, sentence1_scale=0.0)


def test_recipe_filter_block_length_ratio_keeps_what_the_filter_keeps(data_dir):
    import pandas as pd
    from datasets import Dataset

    from psp_st.data import apply_filters

    frame = pd.read_parquet(data_dir / "bitext" / "zh-en.parquet")
    pairs = Dataset.from_dict({"sentence1": frame.source.tolist(), "sentence2": frame.target.tolist()})
    kept, report = apply_filters(pairs, {"length_ratio": {"max": 2.0, "sentence1_scale": 3.5}})
    expected = LengthRatioFilter(2.0, sentence1_scale=3.5).keep(pairs.to_dict())
    assert kept["sentence1"] == [text for text, keep in zip(pairs["sentence1"], expected, strict=True) if keep]
    assert report.steps[0].dropped == len(frame) - sum(expected)
    with pytest.raises(ValueError, match="filter .length_ratio.: .* is not a known key"):
        apply_filters(pairs, {"length_ratio": {"ratio": 2.0}})

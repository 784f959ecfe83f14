from __future__ import annotations

import numpy as np
import pytest

from psp_st.evaluation.correlation import UndefinedCorrelationError, correlations


def test_pearson_and_spearman_match_hand_computed_values_with_ties():
    gold = [1.0, 2.0, 2.0, 4.0]
    predicted = [0.1, 0.3, 0.2, 0.4]
    result = correlations(gold, predicted)
    # Pearson by hand: centred gold (-1.25, -0.25, -0.25, 1.75), predicted (-0.15, 0.05, -0.05, 0.15)
    # covariance sum = 0.1875 + -0.0125 + 0.0125 + 0.2625 = 0.45; norms sqrt(4.75) * sqrt(0.05)
    assert result["pearson"] == pytest.approx(0.45 / np.sqrt(4.75 * 0.05))
    # Spearman: gold ranks (1, 2.5, 2.5, 4) (tie averaged), predicted ranks (1, 3, 2, 4)
    # centred (-1.5, 0, 0, 1.5) and (-1.5, 0.5, -0.5, 1.5): 4.5 / sqrt(4.5 * 5)
    assert result["spearman"] == pytest.approx(4.5 / np.sqrt(4.5 * 5.0))


def test_constant_predictions_raise_instead_of_nan():
    with pytest.raises(UndefinedCorrelationError, match="stsb.*all 3 predicted similarities are equal"):
        correlations([1.0, 2.0, 3.0], [0.5, 0.5, 0.5], name="stsb")


def test_constant_gold_scores_raise():
    with pytest.raises(UndefinedCorrelationError, match="gold scores are equal"):
        correlations([2.0, 2.0, 2.0], [0.1, 0.2, 0.3])


def test_nan_prediction_names_the_row():
    with pytest.raises(ValueError, match="predicted similarities has 1 NaN/inf values, first at row 1"):
        correlations([1.0, 2.0, 3.0], [0.1, float("nan"), 0.3])


def test_length_mismatch_and_too_few_pairs():
    with pytest.raises(ValueError, match="3 gold scores but 2 predictions"):
        correlations([1.0, 2.0, 3.0], [0.1, 0.2])
    with pytest.raises(UndefinedCorrelationError, match="at least 2 pairs"):
        correlations([1.0], [0.1])

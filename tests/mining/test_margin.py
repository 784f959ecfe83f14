"""Ratio margin (Artetxe & Schwenk 2019) against a hand computation; candidate pairs; the ``max`` strategy."""

from __future__ import annotations

import numpy as np
import pytest

from psp_st.mining.margin import best_margin_mask, candidate_pairs, knn_mean, ratio_margin


def test_ratio_margin_matches_the_formula_by_hand():
    # x's 2 neighbours have cosines 0.9 and 0.7, y's 0.8 and 0.6; cos(x, y) = 0.9
    # margin = 0.9 / ((0.9 + 0.7) / 4 + (0.8 + 0.6) / 4) = 0.9 / 0.75 = 1.2
    mean_x, mean_y = knn_mean(np.array([[0.9, 0.7]])), knn_mean(np.array([[0.8, 0.6]]))
    assert ratio_margin(np.array([0.9]), mean_x, mean_y)[0] == pytest.approx(1.2)


def test_knn_mean_ignores_missing_neighbours():
    assert knn_mean(np.array([[0.5, -np.inf], [-np.inf, -np.inf]])).tolist() == [0.5, 0.0]
    assert np.isnan(ratio_margin(np.array([0.3]), np.array([0.0]), np.array([0.0]))[0])


def test_monolingual_candidates_are_unordered_and_unique():
    forward = np.array([[1, 2], [0, 2], [1, -1]])
    left, right = candidate_pairs(forward)
    assert list(zip(left.tolist(), right.tolist(), strict=True)) == [(0, 1), (0, 2), (1, 2)]


def test_bitext_candidates_take_both_directions():
    forward = np.array([[0], [0]])  # both sources' nearest target is target 0
    backward = np.array([[0], [1]])  # target 1's nearest source is source 1
    left, right = candidate_pairs(forward, backward)
    assert list(zip(left.tolist(), right.tolist(), strict=True)) == [(0, 0), (1, 0), (1, 1)]


def test_max_strategy_keeps_each_sentences_best_candidate():
    left, right = np.array([0, 0, 1]), np.array([0, 1, 1])
    margin = np.array([1.3, 1.1, 1.2])
    # bitext: source 0's best is (0, 0); source 1's only is (1, 1); target 1's best is (1, 1)
    assert best_margin_mask(left, right, margin, monolingual=False).tolist() == [True, False, True]
    # monolingual over one set {0, 1}: sentence 0's best (0, 0) ... sentence 1's best among (0, 1), (1, 1)
    assert best_margin_mask(left, right, margin, monolingual=True).tolist() == [True, False, True]

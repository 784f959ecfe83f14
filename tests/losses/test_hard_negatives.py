"""The miner returns the opposite-side argmax of cosine, excluding the partner, same-group and same-text rows."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from psp_st.losses import mine_hardest_negatives, text_ids


def brute_force(anchors, positives, exclude):
    """Reference: a per-row Python loop over the full cosine matrix; a row whose every candidate is excluded takes
    any but the partner."""
    scores = F.normalize(anchors, dim=-1) @ F.normalize(positives, dim=-1).T
    result = []
    for i in range(len(anchors)):
        allowed = [j for j in range(len(positives)) if j != i and not exclude[i][j]]
        candidates = allowed or [j for j in range(len(positives)) if j != i]
        result.append(max(candidates, key=lambda j: scores[i, j]))
    return torch.tensor(result)


def test_miner_is_opposite_side_argmax_excluding_partner_and_group():
    torch.manual_seed(0)
    n = 97
    anchors, positives = torch.randn(n, 8), torch.randn(n, 8)
    groups = torch.randint(-1, 20, (n,))
    same_group = [[bool(groups[i] == groups[j] and groups[i] >= 0) for j in range(n)] for i in range(n)]
    negative_of_anchor, negative_of_positive = mine_hardest_negatives(anchors, positives, groups, chunk_size=16)
    assert torch.equal(negative_of_anchor, brute_force(anchors, positives, same_group))
    assert torch.equal(negative_of_positive, brute_force(positives, anchors, same_group))


def test_miner_without_guard_can_pick_same_group_and_never_partner():
    # positives[1] is nearly anchors[0]: the hardest negative of pair 0 unless the group guard forbids it
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.1]])
    positives = torch.tensor([[0.9, 0.1], [1.0, 0.01], [0.0, -1.0]])
    unguarded, _ = mine_hardest_negatives(anchors, positives)
    guarded, _ = mine_hardest_negatives(anchors, positives, torch.tensor([7, 7, -1]))
    assert unguarded[0] == 1
    assert guarded[0] == 2
    assert all(unguarded[i] != i for i in range(3))


def test_pairs_of_no_group_stay_each_others_negatives():
    """M6-3: ``-1`` is no group, not one group of all ungrouped pairs."""
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.1]])
    positives = torch.tensor([[0.9, 0.1], [1.0, 0.01], [0.0, -1.0]])
    negative_of_anchor, _ = mine_hardest_negatives(anchors, positives, torch.tensor([-1, -1, 5]))
    assert negative_of_anchor[0] == 1


def test_text_guard_skips_a_repeated_sentence():
    a_texts = ["a dog runs", "a cat sits", "a bird sings"]
    p_texts = ["the dog is running", "A dog runs ", "a bird is singing"]  # pair 1's positive repeats anchor 0
    anchor_ids, positive_ids = text_ids(a_texts, p_texts)
    assert anchor_ids[0] == positive_ids[1]
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    positives = torch.tensor([[0.9, 0.2], [1.0, 0.0], [0.6, 0.4]])
    plain, _ = mine_hardest_negatives(anchors, positives)
    guarded, _ = mine_hardest_negatives(anchors, positives, anchor_text_ids=anchor_ids, positive_text_ids=positive_ids)
    assert plain[0] == 1 and guarded[0] == 2


def test_text_guard_skips_a_copy_of_the_partner():
    """M6-4: a candidate with the partner's own text (a duplicate pair) is no negative either."""
    a_texts = ["a dog runs", "a cat sits", "a bird sings"]
    p_texts = ["the dog is running", "The dog is running", "a bird is singing"]  # pair 1's positive copies pair 0's
    anchor_ids, positive_ids = text_ids(a_texts, p_texts)
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]])
    positives = torch.tensor([[0.9, 0.2], [1.0, 0.0], [0.6, 0.4]])
    plain, _ = mine_hardest_negatives(anchors, positives)
    guarded, _ = mine_hardest_negatives(anchors, positives, anchor_text_ids=anchor_ids, positive_text_ids=positive_ids)
    assert plain[0] == 1 and guarded[0] == 2


def test_two_pairs_take_each_other_even_when_the_partner_is_closer():
    """M6-5: the partner is excluded from n = 2 on (only a single pair gets its partner)."""
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    positives = torch.tensor([[1.0, 0.1], [0.1, 1.0]])  # each partner is far closer than the other pair
    negative_of_anchor, negative_of_positive = mine_hardest_negatives(anchors, positives)
    assert negative_of_anchor.tolist() == [1, 0] and negative_of_positive.tolist() == [1, 0]


def test_guide_skips_only_candidates_strictly_above_the_partners_guide_cosine():
    """M6-6: at ``guide_margin=0`` a candidate the guide ties with the partner stays a negative ("above")."""
    anchors = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    positives = torch.tensor([[0.0, -1.0], [1.0, 0.1], [0.0, 1.0]])  # for anchor 0: positive 1 hardest, then 2
    guide_a = torch.tensor([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    guide_p = torch.tensor([[0.6, 0.8], [0.6, 0.8], [0.0, -1.0]])  # positive 1 ties positive 0 under the guide
    negative_of_anchor, _ = mine_hardest_negatives(anchors, positives, guide=(guide_a, guide_p), guide_margin=0.0)
    assert negative_of_anchor[0] == 1


def test_all_guarded_row_falls_back_to_any_non_partner():
    anchors, positives = torch.randn(4, 3), torch.randn(4, 3)
    negative_of_anchor, negative_of_positive = mine_hardest_negatives(
        anchors, positives, torch.zeros(4, dtype=torch.long)
    )
    assert all(negative_of_anchor[i] != i for i in range(4))
    assert all(negative_of_positive[i] != i for i in range(4))


def test_language_guard_gives_each_sentence_a_negative_of_its_partners_language():
    torch.manual_seed(1)
    n = 60
    anchors, positives = torch.randn(n, 8), torch.randn(n, 8)
    anchor_languages = torch.randint(0, 3, (n,))  # a mixed first side (de, fr, en pairs); the second is English
    negative_of_anchor, negative_of_positive = mine_hardest_negatives(
        anchors, positives, anchor_languages=anchor_languages, chunk_size=16
    )
    other_anchor = [[bool(anchor_languages[i] != anchor_languages[j]) for j in range(n)] for i in range(n)]
    assert torch.equal(negative_of_anchor, brute_force(anchors, positives, [[False] * n for _ in range(n)]))
    assert torch.equal(negative_of_positive, brute_force(positives, anchors, other_anchor))
    assert torch.equal(anchor_languages[negative_of_positive], anchor_languages)


@pytest.mark.parametrize("margin", [0.0, 0.1])
def test_guide_guard_skips_what_the_guide_scores_near_the_partner(margin):
    torch.manual_seed(1)
    n = 61
    anchors, positives, guide_a, guide_p = (torch.randn(n, 6) for _ in range(4))
    g = F.normalize(guide_a, dim=-1) @ F.normalize(guide_p, dim=-1).T
    partner = g.diagonal()
    by_anchor = [[bool(g[i, j] > partner[i] - margin) for j in range(n)] for i in range(n)]
    by_positive = [[bool(g[j, i] > partner[i] - margin) for j in range(n)] for i in range(n)]
    negative_of_anchor, negative_of_positive = mine_hardest_negatives(
        anchors, positives, guide=(guide_a, guide_p), guide_margin=margin, chunk_size=8
    )
    assert torch.equal(negative_of_anchor, brute_force(anchors, positives, by_anchor))
    assert torch.equal(negative_of_positive, brute_force(positives, anchors, by_positive))
    assert not torch.equal(negative_of_anchor, mine_hardest_negatives(anchors, positives)[0])  # the guard acted


def test_a_guide_of_the_wrong_shape_is_a_clear_error():
    anchors = torch.randn(4, 3)
    with pytest.raises(ValueError, match=r"guide must be two \(N, d\) columns for 4 pairs"):
        mine_hardest_negatives(anchors, anchors, guide=(torch.randn(4, 3), torch.randn(5, 3)))


def test_text_ids_of_the_wrong_length_are_a_clear_error():
    anchors, positives = torch.randn(3, 4), torch.randn(3, 4)
    with pytest.raises(ValueError, match="anchor_text_ids has 2 entries for 3 pairs"):
        mine_hardest_negatives(
            anchors, positives, anchor_text_ids=torch.tensor([0, 1]), positive_text_ids=torch.tensor([0, 1, 2])
        )


def test_chunk_size_must_be_positive():
    with pytest.raises(ValueError, match="chunk_size must be >= 1"):
        mine_hardest_negatives(torch.randn(3, 4), torch.randn(3, 4), chunk_size=0)


def test_text_ids_refuse_a_column_given_as_one_string():
    """AP16: 'zero-dimensional arrays cannot be concatenated' from numpy."""
    with pytest.raises(TypeError, match="got a single str"):
        text_ids("a dog", ["a cat"])


def test_text_ids_are_typed_for_any_sequence_of_texts():
    """Y8-3: ``*columns: list[str]`` made mypy reject the tuples text_ids takes at run time."""
    import collections.abc
    import typing

    assert typing.get_origin(typing.get_type_hints(text_ids)["columns"]) is collections.abc.Sequence
    assert [ids.tolist() for ids in text_ids(("a", "B "), ("b",))] == [[0, 1], [1]]

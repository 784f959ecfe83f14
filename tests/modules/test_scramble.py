"""Scrambling permutes non-padding tokens of the selected rows only."""

from __future__ import annotations

import torch

from psp_st.modules.scramble import scramble_ids as scramble_input_ids


def test_scramble_keeps_multiset_and_padding():
    ids = torch.tensor([[1, 2, 3, 4, 9, 9], [5, 6, 7, 9, 9, 9]])
    mask = (ids != 9).long()
    out = scramble_input_ids(ids, mask, probability=1.0, generator=torch.Generator().manual_seed(0))
    assert torch.equal(out[:, 4:], ids[:, 4:]) and out[1, 3] == 9
    assert sorted(out[0, :4].tolist()) == [1, 2, 3, 4] and sorted(out[1, :3].tolist()) == [5, 6, 7]


def test_probability_zero_is_identity_and_one_changes_order():
    ids = torch.arange(1, 41).view(2, 20)
    assert torch.equal(scramble_input_ids(ids, None, 0.0), ids)
    assert not torch.equal(scramble_input_ids(ids, None, 1.0, torch.Generator().manual_seed(0)), ids)

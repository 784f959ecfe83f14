"""M follows the annealing schedule, across epoch boundaries."""

from __future__ import annotations

import pytest

from psp_st.training import MegaBatchSchedule


def test_m_grows_by_one_every_anneal_batches_up_to_max():
    schedule = MegaBatchSchedule(megabatch_size=3, anneal=4)
    assert [schedule.size_at(i) for i in range(0, 14)] == [1] * 4 + [2] * 4 + [3] * 6


def test_growth_carries_across_epochs():
    schedule = MegaBatchSchedule(megabatch_size=10, anneal=5)
    epoch0 = schedule.boundaries(0, 7)  # 7 mini-batches per epoch
    epoch1 = schedule.boundaries(7, 7)
    assert [end - start for start, end in epoch0] == [1, 1, 1, 1, 1, 2]
    # epoch 1 starts at global mini-batch 7 with M = 2 (not reset to 1); M = 3 from global mini-batch 11
    assert [end - start for start, end in epoch1] == [2, 2, 3]
    assert epoch1[0] == (0, 2)


def test_bad_arguments():
    with pytest.raises(ValueError):
        MegaBatchSchedule(megabatch_size=0)
    with pytest.raises(ValueError):
        MegaBatchSchedule(anneal=-1)

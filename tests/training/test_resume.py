"""Killing a run and resuming continues from the last checkpoint with the same step count and data order."""

from __future__ import annotations

import pytest
import torch
from transformers import TrainerCallback


class KillAt(TrainerCallback):
    """Simulates a crash (kill) right after optimizer step ``step``."""

    def __init__(self, step: int) -> None:
        self.step = step

    def on_step_end(self, args, state, control, **kwargs):
        if state.global_step == self.step:
            raise KeyboardInterrupt(f"killed at step {state.global_step}")


def test_resume_continues_with_same_steps_and_data_order(make_trainer, caption_pairs, sp_tokenizer, tmp_path):
    from psp_st.modules.psp import PSPEmbedding

    def module():
        torch.manual_seed(0)
        return PSPEmbedding(sp_tokenizer, embedding_dim=16)

    pairs = caption_pairs.select(range(24))  # 6 mini-batches of 4 per epoch, 2 epochs, checkpoints every 4 steps
    options = {"megabatch_size": 2, "anneal": 2}  # mega-batches (global): 0 | 1 | 2-3 | 4-5 || 6-7 | 8-9 | 10-11
    full = make_trainer(module(), pairs, output_dir=tmp_path / "full", **options)
    full.train()

    crashed = make_trainer(module(), pairs, output_dir=tmp_path / "crash", callbacks=[KillAt(10)], **options)
    with pytest.raises(KeyboardInterrupt):
        crashed.train()
    assert sorted(p.name for p in (tmp_path / "crash").glob("checkpoint-*")) == ["checkpoint-4", "checkpoint-8"]
    resumed = make_trainer(module(), pairs, output_dir=tmp_path / "crash", **options)
    resumed.train(resume_from_checkpoint=True)

    assert resumed.state.global_step == full.state.global_step == 12
    assert len(resumed.seen) == 12 - 8  # steps 9..12, continuing after checkpoint-8 (in the second epoch)
    for got, want in zip(resumed.seen, full.seen[8:], strict=True):
        assert torch.equal(got["sentence1_input_ids"], want["sentence1_input_ids"])
        assert torch.equal(got["sentence2_input_ids"], want["sentence2_input_ids"])
    # checkpoint-8 sits on a mega-batch boundary and restores the exact weights: even the mined negatives match
    for got, want in zip(resumed.seen, full.seen[8:], strict=True):
        assert torch.equal(got["anchor_negative_input_ids"], want["anchor_negative_input_ids"])

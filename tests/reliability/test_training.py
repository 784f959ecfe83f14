"""Training: resume from any checkpoint (boundary or inside a mega-batch) reproduces the uninterrupted run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from transformers import TrainerCallback

from psp_st.training.megabatch import MINING_STATE_FILE


class KillAt(TrainerCallback):
    """Simulates a crash (kill) right after optimizer step ``step``, before that step's checkpoint is written; with
    ``on_save``, the moment the trainer reports checkpoint ``step`` saved, before any other callback runs."""

    def __init__(self, step: int, on_save: bool = False) -> None:
        self.step, self.on_save_only = step, on_save

    def _kill(self, state, event: bool) -> None:
        if event and state.global_step == self.step:
            raise KeyboardInterrupt(f"killed at step {state.global_step}")

    def on_step_end(self, args, state, control, **kwargs):
        self._kill(state, not self.on_save_only)

    def on_save(self, args, state, control, **kwargs):
        self._kill(state, self.on_save_only)


def _weights(trainer) -> dict[str, torch.Tensor]:
    return {name: tensor.detach().clone() for name, tensor in trainer.model.state_dict().items()}


@pytest.fixture
def resume_setup(make_trainer, caption_pairs, sp_tokenizer, tmp_path):
    """24 pairs, 6 mini-batches of 4 per epoch, 2 epochs, a checkpoint after every step; float32 mining.

    Mega-batches (global mini-batch index): 0 | 1 | 2-3 | 4-5 || 6-7 | 8-9 | 10-11, so checkpoint-3, -5, -7, -9
    and -11 sit inside a mega-batch and checkpoint-4, -6 and -8 on a boundary.
    """
    from psp_st.modules.psp import PSPEmbedding

    def run(output, callbacks=None):
        torch.manual_seed(0)
        module = PSPEmbedding(sp_tokenizer, embedding_dim=16)
        return make_trainer(
            module,
            caption_pairs.select(range(24)),
            output_dir=tmp_path / output,
            callbacks=callbacks,
            megabatch_size=2,
            anneal=2,
            mining_dtype="float32",
            args={"save_steps": 1, "learning_rate": 1.0},
        )

    full = run("full")
    full.train()
    return run, full


@pytest.mark.parametrize("kill_at", [4, 5, 9, 10])  # resumes from checkpoint 3 (mid), 4 (boundary), 8, 9 (mid)
def test_resume_from_any_checkpoint_is_bit_identical(resume_setup, kill_at):
    run, full = resume_setup
    crashed = run(f"crash{kill_at}", callbacks=[KillAt(kill_at)])
    with pytest.raises(KeyboardInterrupt):
        crashed.train()
    resumed = run(f"crash{kill_at}")
    resumed.train(resume_from_checkpoint=True)

    assert resumed.state.global_step == full.state.global_step == 12
    assert len(resumed.seen) == 12 - (kill_at - 1)
    for got, want in zip(resumed.seen, full.seen[kill_at - 1 :], strict=True):
        assert got.keys() == want.keys()
        for key in got:  # the same pairs and the same mined negatives, batch by batch
            assert torch.equal(got[key], want[key]), key
    expected = _weights(full)
    for name, tensor in _weights(resumed).items():
        assert torch.equal(tensor, expected[name]), name


def test_a_checkpoint_holds_its_mined_negatives_when_the_save_is_reported(resume_setup):
    run, full = resume_setup
    crashed = run("crash-save", callbacks=[KillAt(5, on_save=True)])  # checkpoint-5 sits inside the mega-batch 4-5
    with pytest.raises(KeyboardInterrupt):
        crashed.train()
    assert (Path(crashed.args.output_dir) / "checkpoint-5" / MINING_STATE_FILE).is_file()
    resumed = run("crash-save")
    resumed.train(resume_from_checkpoint=True)
    expected = _weights(full)
    for name, tensor in _weights(resumed).items():
        assert torch.equal(tensor, expected[name]), name


class PoisonAt(TrainerCallback):
    """Sets one embedding row (or the whole table) to NaN right after optimizer step ``step``."""

    def __init__(self, step: int, everything: bool = False) -> None:
        self.step, self.everything = step, everything

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if state.global_step == self.step:
            weight = model[0].embedding.weight
            with torch.no_grad():
                (weight if self.everything else weight[0]).fill_(float("nan"))
        return control


def _tiny(make_trainer, caption_pairs, sp_tokenizer, tmp_path, callback, **args):
    from psp_st.modules.psp import PSPEmbedding

    torch.manual_seed(0)
    return make_trainer(
        PSPEmbedding(sp_tokenizer, embedding_dim=16),
        caption_pairs.select(range(24)),
        output_dir=tmp_path / "run",
        callbacks=[callback],
        megabatch_size=2,
        anneal=2,
        args=args,
    )


def test_non_finite_loss_stops_training_naming_the_step(make_trainer, caption_pairs, sp_tokenizer, tmp_path):
    from psp_st.training.finite import NonFiniteTrainingError

    trainer = _tiny(make_trainer, caption_pairs, sp_tokenizer, tmp_path, PoisonAt(3, everything=True), save_steps=2)
    with pytest.raises(NonFiniteTrainingError, match=r"step 4: the loss is not finite.*checkpoint-2"):
        trainer.train()
    assert sorted(p.name for p in (tmp_path / "run").glob("checkpoint-*")) == ["checkpoint-2"]


def test_non_finite_weight_is_never_checkpointed(make_trainer, caption_pairs, sp_tokenizer, tmp_path):
    from psp_st.training.finite import NonFiniteTrainingError

    trainer = _tiny(make_trainer, caption_pairs, sp_tokenizer, tmp_path, PoisonAt(2), save_steps=1)
    with pytest.raises(
        NonFiniteTrainingError, match=r"step 2: weight '.*embedding.weight' is not finite.*checkpoint-1"
    ):
        trainer.train()
    assert sorted(p.name for p in (tmp_path / "run").glob("checkpoint-*")) == ["checkpoint-1"]


def test_last_good_checkpoint_loads(make_trainer, caption_pairs, sp_tokenizer, tmp_path):
    from psp_st.inference.load import load
    from psp_st.training.finite import NonFiniteTrainingError

    trainer = _tiny(make_trainer, caption_pairs, sp_tokenizer, tmp_path, PoisonAt(2), save_steps=1)
    with pytest.raises(NonFiniteTrainingError):
        trainer.train()
    model = load(tmp_path / "run" / "checkpoint-1")
    assert np.isfinite(model.encode(["a dog"])).all()


class _Payload:
    def __reduce__(self):
        import os

        return (os.system, ("true",))


def _truncate(file):
    with open(file, "r+b") as handle:
        handle.truncate(100)


@pytest.mark.parametrize(
    ("name", "damage"),
    [
        ("optimizer.pt", _truncate),
        ("model.safetensors", _truncate),
        ("rng_state.pth", lambda file: torch.save(_Payload(), file)),
        ("trainer_state.json", lambda file: file.write_text("{junk")),
        ("megabatch_negatives.json", lambda file: file.write_text("{junk")),
    ],
)
def test_resume_from_a_damaged_checkpoint_names_the_file_and_the_earlier_one(
    make_trainer, caption_pairs, sp_tokenizer, tmp_path, name, damage
):
    trainer = _tiny(make_trainer, caption_pairs, sp_tokenizer, tmp_path, TrainerCallback(), save_steps=4)
    trainer.train()
    file = tmp_path / "run" / "checkpoint-12" / name
    damage(file)
    resumed = _tiny(make_trainer, caption_pairs, sp_tokenizer, tmp_path, TrainerCallback(), save_steps=4)
    with pytest.raises(ValueError, match=rf"{file} is unreadable .*continues from {tmp_path / 'run'}/checkpoint-8$"):
        resumed.train(resume_from_checkpoint=True)


@pytest.mark.parametrize("name", ["trainer_state.json", "megabatch_negatives.json"])
def test_resume_from_a_checkpoint_missing_a_state_file_names_it(
    make_trainer, caption_pairs, sp_tokenizer, tmp_path, name
):
    trainer = _tiny(make_trainer, caption_pairs, sp_tokenizer, tmp_path, TrainerCallback(), save_steps=4)
    trainer.train()
    file = tmp_path / "run" / "checkpoint-12" / name
    file.unlink()  # a save cut short (the trainer writes its state last)
    resumed = _tiny(make_trainer, caption_pairs, sp_tokenizer, tmp_path, TrainerCallback(), save_steps=4)
    with pytest.raises(ValueError, match=rf"{file} is missing: the checkpoint is damaged .*checkpoint-8$"):
        resumed.train(resume_from_checkpoint=True)


def test_resume_never_torch_loads_a_checkpoint_file_on_a_torch_before_2_6(tmp_path, monkeypatch):  # S13-4
    """Before torch 2.6 ``torch.load(weights_only=True)`` runs code from a crafted file (CVE-2025-32434): psp-st's own
    check of a resumed checkpoint (a run folder someone gave you) must refuse first, as transformers' loads do."""
    import transformers.utils.import_utils as import_utils

    from psp_st.training.megabatch import read_checkpoint_state

    checkpoint = tmp_path / "run" / "checkpoint-4"
    checkpoint.mkdir(parents=True)
    (checkpoint / "trainer_state.json").write_text("{}")
    torch.save({"python": 1}, checkpoint / "rng_state.pth")
    loaded = []
    monkeypatch.setattr(import_utils, "is_torch_greater_or_equal", lambda *args, **kwargs: False)  # torch 2.5
    monkeypatch.setattr(torch, "load", lambda *args, **kwargs: loaded.append(args))
    with pytest.raises(ValueError, match=r"torch to at least v2\.6"):
        read_checkpoint_state(checkpoint)
    assert loaded == []

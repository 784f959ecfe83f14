"""The auxiliary (distillation) objective inside MegaBatchTrainer: trained each step, never mined over."""

from __future__ import annotations

import numpy as np
import pytest
import torch


@pytest.fixture
def distill_data(caption_sentences):
    from datasets import Dataset

    texts = caption_sentences[5000:5032]
    vectors = np.random.default_rng(0).standard_normal((len(texts), 6)).astype(np.float32)
    return Dataset.from_dict({"sentence": texts, "embedding": list(vectors)})


def objective(model, dataset, **options):
    from psp_st.losses import TeacherDistillationLoss
    from psp_st.training.auxiliary import AuxiliaryObjective

    return AuxiliaryObjective(dataset, TeacherDistillationLoss(model, teacher_dim=6), batch_size=8, seed=1, **options)


def test_batches_are_a_function_of_the_step(psp_model, distill_data):
    first, second = objective(psp_model, distill_data), objective(psp_model, distill_data)
    assert [first.rows(step).tolist() for step in (0, 3, 4, 9)] == [second.rows(step).tolist() for step in (0, 3, 4, 9)]
    epoch = np.concatenate([first.rows(step) for step in range(4)])
    assert sorted(epoch.tolist()) == list(range(32))  # one pass over the data every 4 steps
    assert first.rows(4).tolist() != first.rows(0).tolist()  # the next pass is reshuffled


def test_trainer_adds_it_and_trains_the_projection(psp_module, caption_pairs, distill_data, make_trainer):
    from sentence_transformers import SentenceTransformer

    probe = SentenceTransformer(modules=[psp_module], device="cpu")
    aux = objective(probe, distill_data, lr=0.01)
    before = aux.loss.projection.weight.detach().clone()
    trainer = make_trainer(
        psp_module, caption_pairs, megabatch_size=2, anneal=0, auxiliary=aux, args={"max_steps": 4, "logging_steps": 2}
    )
    trainer.train()
    assert not torch.equal(before, aux.loss.projection.weight.detach())
    groups = trainer.optimizer.param_groups
    assert len(groups) == 2 and groups[1]["params"][0] is aux.loss.projection.weight
    logged = [entry for entry in trainer.state.log_history if "auxiliary" in entry]
    assert logged and all(entry["auxiliary"] > 0 for entry in logged)
    # the mined stream only ever saw the pair columns
    assert all(
        set(batch) <= {f"{c}_input_ids" for c in ("sentence1", "sentence2", "anchor_negative", "positive_negative")}
        for batch in trainer.seen
    )


def test_weight_zero_changes_nothing(psp_module, caption_pairs, distill_data, make_trainer):
    """With weight 0 the model trains exactly as without the objective (same seed, same data order)."""
    import copy

    from sentence_transformers import SentenceTransformer

    plain_module = copy.deepcopy(psp_module)
    aux = objective(SentenceTransformer(modules=[psp_module], device="cpu"), distill_data, weight=0.0)
    with_aux = make_trainer(psp_module, caption_pairs, megabatch_size=2, anneal=0, auxiliary=aux, args={"max_steps": 3})
    with_aux.train()
    plain = make_trainer(plain_module, caption_pairs, megabatch_size=2, anneal=0, args={"max_steps": 3})
    plain.train()
    torch.testing.assert_close(psp_module.embedding.weight, plain_module.embedding.weight)


def test_a_resumed_run_restores_the_projection(psp_module, caption_pairs, distill_data, make_trainer, tmp_path):
    """X1: the projection is saved with each checkpoint; a resume from step 4 ends where an uninterrupted run does."""
    import copy

    from sentence_transformers import SentenceTransformer

    runs = []
    for resume in (None, str(tmp_path / "run" / "checkpoint-4")):
        module = copy.deepcopy(psp_module)
        aux = objective(SentenceTransformer(modules=[module], device="cpu"), distill_data, lr=0.05)
        trainer = make_trainer(module, caption_pairs, megabatch_size=2, anneal=0, auxiliary=aux, args={"max_steps": 8})
        trainer.train(resume_from_checkpoint=resume)
        runs.append((module.embedding.weight.detach().clone(), aux.loss.projection.weight.detach().clone()))
    torch.testing.assert_close(runs[0][1], runs[1][1], rtol=0, atol=0)
    torch.testing.assert_close(runs[0][0], runs[1][0], rtol=0, atol=0)


def test_a_checkpoint_keeps_the_projection_in_safetensors_and_refuses_a_mismatch(psp_module, distill_data, tmp_path):
    from safetensors.torch import save_file
    from sentence_transformers import SentenceTransformer

    from psp_st.training.auxiliary import STATE_FILE

    aux = objective(SentenceTransformer(modules=[psp_module], device="cpu"), distill_data, lr=0.05)
    aux.save(tmp_path, aux.loss.model)
    assert STATE_FILE.endswith(".safetensors") and (tmp_path / STATE_FILE).is_file()  # no pickle in a checkpoint
    save_file({"0": torch.zeros(2, 2)}, str(tmp_path / STATE_FILE))
    with pytest.raises(ValueError, match="does not hold this run's distillation parameters"):
        aux.load(tmp_path, aux.loss.model)


def test_the_texts_are_read_in_one_arrow_read(psp_model, monkeypatch):  # F7-3
    """``list()`` of datasets' lazy ``Column`` makes a Python call per row: ~1.1 s per 160k distillation sentences."""
    from datasets import Dataset
    from datasets.arrow_dataset import Column

    data = Dataset.from_dict({"sentence": ["a dog", "a cat"], "embedding": [[0.0] * 6, [1.0] * 6]})

    def refuse(self):
        raise AssertionError("a datasets Column was iterated row by row")

    monkeypatch.setattr(Column, "__iter__", refuse)
    assert objective(psp_model, data).texts == ["a dog", "a cat"]

"""CompactShuffleBatchSampler: every row once per epoch, order fixed by (seed, epoch), usable by ST's trainer."""

from __future__ import annotations

from psp_st.data.sampler import CompactShuffleBatchSampler


def _sampler(rows: int, batch_size: int = 4, drop_last: bool = False, seed: int = 0) -> CompactShuffleBatchSampler:
    return CompactShuffleBatchSampler(list(range(rows)), batch_size=batch_size, drop_last=drop_last, seed=seed)


def test_each_row_once_per_epoch_in_batches():
    batches = list(_sampler(10))
    assert [len(batch) for batch in batches] == [4, 4, 2]
    assert sorted(index for batch in batches for index in batch) == list(range(10))
    assert len(_sampler(10)) == 3


def test_drop_last_drops_the_short_batch():
    sampler = _sampler(10, drop_last=True)
    assert [len(batch) for batch in sampler] == [4, 4] and len(sampler) == 2


def test_order_depends_only_on_seed_and_epoch():
    first, again, other_seed = _sampler(50), _sampler(50), _sampler(50, seed=1)
    assert list(first) == list(again) != list(other_seed)
    epoch0 = list(first)
    first.set_epoch(1)
    assert list(first) != epoch0
    again.set_epoch(1)
    assert list(first) == list(again)


def test_permutation_is_stored_as_uint32():
    assert _sampler(1000).permutation().dtype.name == "uint32"


def test_trainer_accepts_the_class_as_batch_sampler(tmp_path, psp_model):
    from datasets import Dataset
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    pairs = Dataset.from_dict(
        {"sentence1": [f"a dog number {i}" for i in range(16)], "sentence2": [f"dog {i}" for i in range(16)]}
    )
    args = SentenceTransformerTrainingArguments(
        output_dir=str(tmp_path),
        max_steps=2,
        per_device_train_batch_size=4,
        batch_sampler=CompactShuffleBatchSampler,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
    )
    trainer = SentenceTransformerTrainer(
        model=psp_model, args=args, train_dataset=pairs, loss=MultipleNegativesRankingLoss(psp_model)
    )
    assert isinstance(trainer.get_train_dataloader().batch_sampler, CompactShuffleBatchSampler)
    assert trainer.train().global_step == 2

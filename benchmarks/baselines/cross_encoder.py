"""BERT pairwise-classifier baseline: ST's ``CrossEncoder`` trained as a binary paraphrase classifier.

The pair is read jointly as ``[CLS] A [SEP] B [SEP]``; one logit, ``BinaryCrossEntropyLoss``, trained with
:class:`~sentence_transformers.cross_encoder.CrossEncoderTrainer`. ``predict`` gives the sigmoid probability
of "paraphrase"; 0.5 is the decision threshold.

References:
    Devlin et al., "BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding", 2019
    (the sentence-pair classification set-up); Reimers and Gurevych, EMNLP 2019 (the cross-encoder baseline).
"""

from __future__ import annotations

import os
from typing import Any

from .bi_encoder import check_pair_dataset


def build_cross_encoder(model_name_or_path: str = "all-MiniLM-L6-v2", max_length: int = 128, device: str = "cpu"):
    """A one-logit ``CrossEncoder`` over a transformer (a new, randomly initialised classification head)."""
    from sentence_transformers.cross_encoder import CrossEncoder

    from psp_st.io.model_names import resolve_model_name

    return CrossEncoder(resolve_model_name(model_name_or_path), num_labels=1, max_length=max_length, device=device)


def train_cross_encoder(
    model,
    labelled_sets: dict[str, Any],
    output_dir: str | os.PathLike | None = None,
    **loop: Any,
) -> dict[str, Any]:
    """Fine-tune ``model`` on labelled pairs (name -> ``Dataset`` with ``sentence1``, ``sentence2``, ``label`` 0/1).

    ``loop``: the training-loop options of :func:`.trainer_run.timed_trainer_run` (here
    ``batch_size`` defaults to 16). Returns ``{"steps", "seconds", "loss"}``; saves to ``output_dir`` when given.
    """
    from datasets import Value, concatenate_datasets
    from sentence_transformers.cross_encoder import CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    from .trainer_run import timed_trainer_run

    if not labelled_sets:
        raise ValueError("train_cross_encoder needs at least one labelled set")
    parts = []
    for name, dataset in labelled_sets.items():
        check_pair_dataset(dataset, name, labelled=True)
        part = dataset.select_columns(["sentence1", "sentence2", "label"])
        parts.append(part.cast_column("label", Value("float32")))
    train = concatenate_datasets(parts)

    return timed_trainer_run(
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
        model,
        train,
        BinaryCrossEntropyLoss(model),
        output_dir,
        **{"batch_size": 16, **loop},
    )

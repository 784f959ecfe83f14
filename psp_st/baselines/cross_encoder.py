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
import time
from typing import Any

from psp_st.baselines.bi_encoder import check_pair_dataset


def build_cross_encoder(model_name_or_path: str = "all-MiniLM-L6-v2", max_length: int = 128, device: str = "cpu"):
    """A one-logit ``CrossEncoder`` over a transformer (a new, randomly initialised classification head)."""
    from sentence_transformers.cross_encoder import CrossEncoder

    from psp_st.baselines.backbone import resolve_backbone

    return CrossEncoder(resolve_backbone(model_name_or_path), num_labels=1, max_length=max_length, device=device)


def train_cross_encoder(
    model,
    labelled_sets: dict[str, Any],
    output_dir: str | os.PathLike | None = None,
    batch_size: int = 16,
    learning_rate: float = 2e-5,
    epochs: float = 1.0,
    max_steps: int = -1,
    warmup_ratio: float = 0.1,
    seed: int = 0,
    show_progress_bar: bool = True,
) -> dict[str, float]:
    """Fine-tune ``model`` on labelled pairs (name -> ``Dataset`` with ``sentence1``, ``sentence2``, ``label`` 0/1).

    Returns ``{"steps", "seconds", "loss"}``; saves to ``output_dir`` (safetensors) when given.
    """
    import tempfile

    from datasets import concatenate_datasets
    from sentence_transformers.cross_encoder import CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    if not labelled_sets:
        raise ValueError("train_cross_encoder needs at least one labelled set")
    parts = []
    for name, dataset in labelled_sets.items():
        check_pair_dataset(dataset, name, labelled=True)
        part = dataset.select_columns(["sentence1", "sentence2", "label"])
        parts.append(part.cast_column("label", _float_feature()))
    train = concatenate_datasets(parts)

    with tempfile.TemporaryDirectory(prefix="psp-st-ce-") as scratch:
        args = CrossEncoderTrainingArguments(
            output_dir=scratch,
            per_device_train_batch_size=batch_size,
            learning_rate=learning_rate,
            num_train_epochs=epochs,
            max_steps=max_steps,
            warmup_steps=warmup_ratio,
            save_strategy="no",
            report_to=[],
            logging_steps=max(1, min(50, max_steps if max_steps > 0 else 50)),
            disable_tqdm=not show_progress_bar,
            seed=seed,
            use_cpu=str(model.device) == "cpu",
            dataloader_num_workers=0,
        )
        trainer = CrossEncoderTrainer(model=model, args=args, train_dataset=train, loss=BinaryCrossEntropyLoss(model))
        start = time.perf_counter()
        output = trainer.train()
        seconds = time.perf_counter() - start
    if output_dir is not None:
        model.save(str(output_dir))
    return {"steps": float(output.global_step), "seconds": seconds, "loss": float(output.training_loss)}


def _float_feature():
    from datasets import Value

    return Value("float32")

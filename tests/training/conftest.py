"""Tiny paired datasets and a trainer factory for the mega-batching tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def caption_pairs(caption_sentences):
    """40 real caption pairs with group ids (4 pairs per group)."""
    from datasets import Dataset

    return Dataset.from_dict({
        "sentence1": caption_sentences[:40],
        "sentence2": caption_sentences[10_000:10_040],
        "group_id": [i // 4 for i in range(40)],
    })


@pytest.fixture
def make_trainer(tmp_path):
    """Build a MegaBatchTrainer over a fresh dim-32 model; records every training batch it computes a loss on."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

    from psp_st.losses import ParaphraseMarginLoss
    from psp_st.training import MegaBatchTrainer

    class RecordingTrainer(MegaBatchTrainer):
        def compute_loss(self, model, inputs, *args, **kwargs):
            self.seen.append({k: v.clone() for k, v in inputs.items() if k.endswith("input_ids")})
            return super().compute_loss(model, inputs, *args, **kwargs)

    def build(module, dataset, output_dir=None, callbacks=None, **options):
        model = SentenceTransformer(modules=[module], device="cpu")
        trainer_args = {"output_dir": str(output_dir or tmp_path / "run"), "per_device_train_batch_size": 4,
                        "num_train_epochs": 2, "learning_rate": 0.05, "report_to": "none", "use_cpu": True,
                        "save_strategy": "steps", "save_steps": 4, "logging_steps": 100, "seed": 3,
                        "disable_tqdm": True}
        trainer_args.update(options.pop("args", {}))
        trainer = RecordingTrainer(model=model, args=SentenceTransformerTrainingArguments(**trainer_args),
                                   train_dataset=dataset, loss=ParaphraseMarginLoss(model), callbacks=callbacks,
                                   **options)
        trainer.seen = []
        return trainer

    return build

"""One timed, checkpoint-free run of an ST trainer: the training loop both transformer baselines share."""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any


def timed_trainer_run(
    trainer_class: type,
    args_class: type,
    model,
    train_dataset,
    loss,
    output_dir: str | os.PathLike | None = None,
    *,
    batch_size: int = 32,
    learning_rate: float = 2e-5,
    epochs: float = 1.0,
    max_steps: int = -1,
    warmup_ratio: float = 0.1,
    seed: int = 0,
    show_progress_bar: bool = True,
    **extra_args: Any,
) -> dict[str, Any]:
    """Train ``model`` with ``trainer_class(args_class(...))`` in a scratch folder (no checkpoints), time the loop.

    The loop options (``batch_size`` to ``show_progress_bar``; ``max_steps=-1`` runs ``epochs``) are those that
    :func:`.train_bi_encoder` and :func:`.train_cross_encoder` take as
    ``**loop``; ``extra_args`` go to ``args_class`` (e.g. the bi-encoder's batch samplers). Saves the model to
    ``output_dir`` when given and returns ``{"steps", "seconds", "loss"}``.
    """
    with tempfile.TemporaryDirectory(prefix="psp-st-baseline-") as scratch:
        args = args_class(
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
            **extra_args,
        )
        trainer = trainer_class(model=model, args=args, train_dataset=train_dataset, loss=loss)
        start = time.perf_counter()
        output = trainer.train()
        seconds = time.perf_counter() - start
    if output_dir is not None:
        model.save(str(output_dir))
    return {"steps": float(output.global_step), "seconds": seconds, "loss": float(output.training_loss)}

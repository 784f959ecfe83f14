"""Finite-or-fail training: stop at the first NaN/inf loss or weight, before a broken checkpoint is written."""

from __future__ import annotations

import os
import shutil

import torch
from transformers import TrainerCallback
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR, get_last_checkpoint


class NonFiniteTrainingError(FloatingPointError):
    """The training loss or a weight became NaN or infinite."""


def first_non_finite_parameter(model: torch.nn.Module) -> str | None:
    """Name of the first floating-point parameter holding a NaN/inf value, else ``None``."""
    for name, parameter in model.named_parameters():
        if parameter.is_floating_point() and not bool(torch.isfinite(parameter.detach()).all()):
            return name
    return None


def non_finite_error(what: str, step: int, output_dir: str) -> NonFiniteTrainingError:
    """The one message: what went non-finite at which step, and the last good checkpoint to resume from."""
    checkpoint = get_last_checkpoint(output_dir) if output_dir else None
    kept = "no checkpoint was saved yet"
    if checkpoint:
        kept = f"the last good checkpoint is {checkpoint} (nothing later was saved)"
    return NonFiniteTrainingError(
        f"training stopped at step {step}: {what} is not finite (NaN/inf); {kept}. Lower trainer.learning_rate or "
        "check the data, then train again (--resume continues from that checkpoint)."
    )


class FiniteGuard(TrainerCallback):
    """Checks the weights every ``logging_steps`` steps (every step would cost a pass over the embedding table; the
    trainer checks the loss every step) and before every checkpoint, so a checkpoint never holds a NaN/inf weight.
    A save decided after ``on_step_end`` (``save_strategy="best"``) is checked in ``on_save``, its folder removed."""

    def on_step_end(self, args, state, control, model=None, **kwargs):
        every = max(int(args.logging_steps or 0), 1)
        if control.should_save or (args.logging_steps and state.global_step % every == 0):
            check_weights(model, state.global_step, args.output_dir)
        return control

    def on_epoch_end(self, args, state, control, model=None, **kwargs):
        if control.should_save:
            check_weights(model, state.global_step, args.output_dir)
        return control

    def on_save(self, args, state, control, model=None, **kwargs):
        if model is not None and first_non_finite_parameter(model) is not None:
            shutil.rmtree(os.path.join(args.output_dir or "", f"{PREFIX_CHECKPOINT_DIR}-{state.global_step}"), True)
            check_weights(model, state.global_step, args.output_dir)
        return control


def check_weights(model: torch.nn.Module | None, step: int, output_dir: str | None) -> None:
    """Raise :func:`non_finite_error` naming the first NaN/inf weight of ``model``, if any."""
    name = None if model is None else first_non_finite_parameter(model)
    if name is not None:
        raise non_finite_error(f"weight '{name}'", step, output_dir or "")

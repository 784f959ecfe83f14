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
    kept = (
        f"the last good checkpoint is {checkpoint} (nothing later was saved)"
        if checkpoint
        else "no checkpoint was saved yet"
    )
    return NonFiniteTrainingError(
        f"training stopped at step {step}: {what} is not finite (NaN/inf); {kept}. Lower trainer.learning_rate or "
        "check the data, then train again (--resume continues from that checkpoint)."
    )


class FiniteGuard(TrainerCallback):
    """Checks the weights every ``logging_steps`` optimizer steps and before every checkpoint (the loss is checked
    every step by the trainer), so a checkpoint never holds a NaN/inf weight.

    Checking every weight after every step would cost a full pass over the embedding table per step; a NaN in a
    row the data uses shows up in the next step's loss. The pre-save check runs in ``on_step_end`` /
    ``on_epoch_end`` once ``control.should_save`` is set (this callback runs after transformers' flow callback);
    a save decided later (``save_strategy="best"``) is checked in ``on_save`` and its folder removed if broken.
    """

    def on_step_end(self, args, state, control, model=None, **kwargs):
        every = max(int(args.logging_steps or 0), 1)
        if control.should_save or (args.logging_steps and state.global_step % every == 0):
            _check(model, state.global_step, args.output_dir)
        return control

    def on_epoch_end(self, args, state, control, model=None, **kwargs):
        if control.should_save:
            _check(model, state.global_step, args.output_dir)
        return control

    def on_save(self, args, state, control, model=None, **kwargs):
        if model is not None and first_non_finite_parameter(model) is not None:
            shutil.rmtree(os.path.join(args.output_dir or "", f"{PREFIX_CHECKPOINT_DIR}-{state.global_step}"), True)
            _check(model, state.global_step, args.output_dir)
        return control


def _check(model: torch.nn.Module | None, step: int, output_dir: str | None) -> None:
    name = None if model is None else first_non_finite_parameter(model)
    if name is not None:
        raise non_finite_error(f"weight '{name}'", step, output_dir or "")

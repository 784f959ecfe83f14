"""Finite-or-fail training: stop at the first NaN/inf loss or weight, before a broken checkpoint is written."""

from __future__ import annotations

import torch
from transformers import TrainerCallback
from transformers.trainer_utils import get_last_checkpoint


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
    """Checks the weights every ``logging_steps`` optimizer steps (the loss is checked every step by the trainer).

    Checking every weight after every step would cost a full pass over the embedding table per step; a NaN in a
    row the data uses shows up in the next step's loss, and the trainer checks all weights before every save.
    """

    def on_step_end(self, args, state, control, model=None, **kwargs):
        if model is not None and args.logging_steps and state.global_step % max(int(args.logging_steps), 1) == 0:
            name = first_non_finite_parameter(model)
            if name is not None:
                raise non_finite_error(f"weight '{name}'", state.global_step, args.output_dir)
        return control

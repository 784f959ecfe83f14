"""A second objective (e.g. distillation) in the same optimizer steps as the pairs. Not ST's multi-dataset training:
it gives each step a batch of *one* dataset, taking steps from the pairs and interleaving with mega-batch mining."""

from __future__ import annotations

import copy
import logging
import os
from collections.abc import Iterator
from typing import Any, Protocol

import numpy as np
import torch
from safetensors.torch import load_file, save_file
from sentence_transformers.util import batch_to_device
from torch import nn

logger = logging.getLogger(__name__)


#: File in a checkpoint folder holding the auxiliary loss's own parameters (a resume restores them).
STATE_FILE = "auxiliary_parameters.safetensors"
#: File in a checkpoint folder holding the main loss's own parameters (e.g. a distillation projection trained as the
#: main loss or in a dict of losses): ST checkpoints hold the model and the optimizer only, so a resume restores them.
LOSS_STATE_FILE = "loss_parameters.safetensors"


def own_parameters(loss: AuxiliaryLoss | nn.Module | dict[str, nn.Module], model: nn.Module) -> list[nn.Parameter]:
    """The trainable parameters of ``loss`` (or of each loss of a dict, in its order) that are not ``model``'s."""
    seen = {id(p) for p in model.parameters()}
    found = []
    for module in loss.values() if isinstance(loss, dict) else [loss]:
        for parameter in module.parameters():
            if parameter.requires_grad and id(parameter) not in seen:
                seen.add(id(parameter))
                found.append(parameter)
    return found


def save_parameters(path: str | os.PathLike, parameters: list[nn.Parameter]) -> None:
    """Save ``parameters`` (by position) to ``path``; nothing when there are none."""
    if parameters:
        save_file({str(i): p.detach().contiguous() for i, p in enumerate(parameters)}, os.fspath(path))


@torch.no_grad()
def load_parameters(path: str | os.PathLike, parameters: list[nn.Parameter], what: str) -> None:
    """Restore what :func:`save_parameters` wrote to ``path`` into ``parameters`` (``what`` names them in messages;
    a missing file, from a checkpoint older than the code that writes it: a warning, they restart)."""
    if not parameters:
        return
    if not os.path.isfile(path):
        logger.warning("%s is missing: this run's %s restart from their initial values", path, what)
        return
    saved = load_file(os.fspath(path))
    shapes = {str(i): tuple(p.shape) for i, p in enumerate(parameters)}
    if {name: tuple(tensor.shape) for name, tensor in saved.items()} != shapes:
        raise ValueError(f"{path} does not hold this run's {what} (shapes {shapes})")
    for i, parameter in enumerate(parameters):
        parameter.copy_(saved[str(i)])


class AuxiliaryLoss(Protocol):
    """What :class:`AuxiliaryObjective` needs of its loss: an ST-style ``nn.Module`` loss with a config dict."""

    def __call__(self, sentence_features: list[dict[str, Any]], labels: torch.Tensor) -> torch.Tensor: ...

    def parameters(self) -> Iterator[nn.Parameter]: ...

    def get_config_dict(self) -> dict[str, Any]: ...


class AuxiliaryObjective:
    """``weight * loss(batch)`` over a ``(text, label)`` dataset, one batch per optimizer step; the batch of step ``k``
    is a pure function of ``(seed, k)`` (epoch ``e`` of the data is ``permutation(seed, e)``), the same on resume.

    Args:
        loss: an ST-style loss taking ``([features], labels)``, e.g. :class:`~psp_st.losses.TeacherDistillationLoss`;
            its own parameters (e.g. a projection) are trained with ``lr`` (``None``: the trainer's).
    """

    def __init__(
        self,
        dataset,
        loss: AuxiliaryLoss,
        weight: float = 1.0,
        batch_size: int = 128,
        seed: int = 0,
        text_column: str = "sentence",
        label_column: str = "embedding",
        lr: float | None = None,
    ) -> None:
        missing = [c for c in (text_column, label_column) if c not in dataset.column_names]
        if missing:
            raise ValueError(
                f"auxiliary objective: the dataset has no column(s) {missing} (columns: {dataset.column_names})"
            )
        if len(dataset) == 0:
            raise ValueError("auxiliary objective: the dataset is empty")
        if weight < 0 or batch_size < 1:
            raise ValueError(f"auxiliary objective: need weight >= 0 and batch_size >= 1, got {weight}, {batch_size}")
        self.texts = list(dataset[text_column][:])  # [:]: one Arrow read, not a Python call per row
        self.labels = torch.from_numpy(np.asarray(dataset.with_format("numpy")[label_column][:], dtype=np.float32))
        self.loss = loss
        self.weight = float(weight)
        self.batch_size = batch_size
        self.seed = seed
        self.lr = lr
        self._order: tuple[int, np.ndarray] | None = None

    def with_loss(self, loss: AuxiliaryLoss, seed: int) -> AuxiliaryObjective:
        """This objective's data and settings with another ``loss`` (e.g. bound to another model) and batch order."""
        other = copy.copy(self)
        other.loss, other.seed, other._order = loss, seed, None
        return other

    def rows(self, step: int) -> np.ndarray:
        """Row indices of the batch of optimizer step ``step`` (epochs of the auxiliary data wrap around)."""
        per_epoch = -(-len(self.texts) // self.batch_size)
        epoch, position = divmod(step, per_epoch)
        if self._order is None or self._order[0] != epoch:
            self._order = (epoch, np.random.default_rng([self.seed, epoch]).permutation(len(self.texts)))
        return self._order[1][position * self.batch_size : (position + 1) * self.batch_size]

    def parameters(self, model: nn.Module) -> list[nn.Parameter]:
        """The loss's trainable parameters that are not the model's (e.g. the projection)."""
        return own_parameters(self.loss, model)

    def save(self, folder: str | os.PathLike, model: nn.Module) -> None:
        """Save the loss's own parameters (e.g. the projection) into checkpoint ``folder``."""
        save_parameters(os.path.join(folder, STATE_FILE), self.parameters(model))

    def load(self, folder: str | os.PathLike, model: nn.Module) -> None:
        """Restore the parameters :meth:`save` wrote into ``folder`` (an older checkpoint without them: a warning)."""
        load_parameters(os.path.join(folder, STATE_FILE), self.parameters(model), "distillation parameters")

    def __call__(self, model, step: int) -> torch.Tensor:
        """The weighted auxiliary loss of optimizer step ``step`` (``model`` is the SentenceTransformer)."""
        rows = self.rows(step)
        features = batch_to_device(model.preprocess([self.texts[i] for i in rows]), model.device)
        return self.weight * self.loss([features], self.labels[rows].to(model.device))

    def config(self) -> dict[str, Any]:
        return {
            "weight": self.weight,
            "batch_size": self.batch_size,
            "sentences": len(self.texts),
            "lr": self.lr,
            "loss": type(self.loss).__name__,
            **self.loss.get_config_dict(),
        }

"""A model soup (Wortsman et al., 2022, "Model soups"): the element-wise mean of the weights of runs trained from one
initial model with different data orders; it scores above its members at no inference cost. Sentence-Transformers
and transformers have no weight averaging of whole runs, hence this module."""

from __future__ import annotations

import torch
from torch import nn

SOUP_CITATION = """@inproceedings{wortsman2022soups,
    title = {Model soups: averaging weights of multiple fine-tuned models improves accuracy without increasing inference time},
    author = {Wortsman, Mitchell and Ilharco, Gabriel and Gadre, Samir Yitzhak and Roelofs, Rebecca and Gontijo-Lopes, Raphael and Morcos, Ari S. and Namkoong, Hongseok and Farhadi, Ali and Carmon, Yair and Kornblith, Simon and Schmidt, Ludwig},
    booktitle = {Proceedings of the 39th International Conference on Machine Learning},
    year = {2022},
}"""


def add_to_soup(soup: dict[str, torch.Tensor], model: nn.Module, members: int) -> None:
    """Add ``model``'s floating-point weights divided by ``members`` to ``soup`` (a state dict, ``{}`` at first,
    summed in float64); other tensors (e.g. integer buffers) are the first member's."""
    for name, tensor in model.state_dict().items():
        if not tensor.is_floating_point():
            soup.setdefault(name, tensor.detach().clone())
        elif name in soup:
            soup[name] += tensor.detach().double() / members
        else:
            soup[name] = tensor.detach().double() / members

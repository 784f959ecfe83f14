"""Cosine-distance contrastive loss with labels (Sjöblom et al. 2018) and random negative pairing."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
import torch.nn.functional as F
from sentence_transformers.sentence_transformer.losses import ContrastiveLoss, SiameseDistanceMetric
from torch import Tensor

from psp_st.losses.hard_negatives import check_pairs
from psp_st.losses.margin import check_columns, check_margin

#: BibTeX of the paper whose loss this is (Sjöblom et al. 2018); the one copy: model cards cite from here.
CITATION = """@inproceedings{sjoblom-etal-2018-paraphrase,
    title = "Paraphrase Detection on Noisy Subtitles in Six Languages",
    author = "Sj{\\"o}blom, Eetu and Creutz, Mathias and Aulamo, Mikko",
    booktitle = "Proceedings of the 2018 EMNLP Workshop W-NUT: The 4th Workshop on Noisy User-generated Text",
    year = "2018",
    address = "Brussels, Belgium",
    publisher = "Association for Computational Linguistics",
    pages = "64--73",
}
"""


class CosineContrastiveLoss(ContrastiveLoss):
    def __init__(self, model, margin: float = 0.5, size_average: bool = True) -> None:
        """Contrastive loss on cosine distance ``d = 1 - cos``: paraphrases pulled together, others pushed apart::

            loss = y * d + (1 - y) * relu(margin - d) ** 2

        Unlike its base, ST's ``ContrastiveLoss``: the positive term is linear in ``d``, no ``0.5`` factors; the hinge
        is on the non-paraphrases, as in the paper's text (its equation swaps ``y``).

        Args:
            model: the SentenceTransformer being trained (any encoder).
            margin: non-paraphrases should be at least this cosine distance apart.
            size_average: average (else sum) over the batch.

        References:
            - Sjöblom et al., Paraphrase Detection on Noisy Subtitles in Six Languages (W-NUT 2018), section 3.2

        Inputs:
            ``(sentence1, sentence2)`` pairs labelled 1 (paraphrase) or 0 (in between weighs the two terms);
            :func:`add_random_negatives` makes negatives for positive-only data.

        Example::

            loss = CosineContrastiveLoss(model, margin=0.5)  # train on add_random_negatives(positive_pairs, seed=0)
        """
        super().__init__(
            model,
            distance_metric=SiameseDistanceMetric.COSINE_DISTANCE,
            margin=check_margin(margin),
            size_average=size_average,
        )

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor) -> Tensor:
        features = check_columns(self, sentence_features, (2,), "2 columns (sentence1, sentence2)")
        return super().forward(features, labels)

    def compute_loss_from_embeddings(self, embeddings: list[Tensor], labels: Tensor) -> Tensor:
        if labels is None:
            raise ValueError(
                f"{type(self).__name__} needs a 'label' column (1 = paraphrase, 0 = not); "
                "use psp_st.losses.add_random_negatives on positive-only data"
            )
        if len(embeddings) != 2:
            raise ValueError(f"{type(self).__name__} expects 2 columns (sentence1, sentence2), got {len(embeddings)}")
        pairs = check_pairs(embeddings[0], embeddings[1])
        if labels.numel() != pairs:
            raise ValueError(
                f"{type(self).__name__} expects one label per pair, got {labels.numel()} labels for {pairs} pairs"
            )
        labels = labels.view(-1).float()
        if not bool(((labels >= 0) & (labels <= 1)).all()):
            raise ValueError(
                f"{type(self).__name__}: labels must be in [0, 1] (1 = paraphrase, 0 = not), got {labels[:5].tolist()}"
            )
        distances = 1 - F.cosine_similarity(embeddings[0], embeddings[1])
        losses = labels * distances + (1 - labels) * F.relu(self.margin - distances).pow(2)
        return losses.mean() if self.size_average else losses.sum()

    def get_config_dict(self) -> dict[str, Any]:
        return {"margin": self.margin, "size_average": self.size_average}

    @property
    def citation(self) -> str:
        return CITATION


def add_random_negatives(dataset, seed: int = 0):
    """A positive-only pair dataset plus as many random negatives: ``sentence1, sentence2, label`` (1 / 0), shuffled.

    Each ``sentence1`` also gets the ``sentence2`` of a random other row (never its own partner; with a ``group_id``
    column, not one of its group as far as 8 re-draws avoid it). Only index arrays are built in RAM.
    """
    from datasets import Dataset, concatenate_datasets

    if not isinstance(dataset, Dataset):
        raise TypeError(f"add_random_negatives expects a datasets.Dataset, got {type(dataset).__name__}")
    missing = [c for c in ("sentence1", "sentence2") if c not in dataset.column_names]
    if missing:
        raise ValueError(f"add_random_negatives: dataset has no column(s) {missing} (columns: {dataset.column_names})")
    n = len(dataset)
    if n < 2:
        raise ValueError(f"add_random_negatives needs at least 2 pairs to pair randomly, got {n}")
    rng = np.random.default_rng(seed)
    partner = (np.arange(n) + rng.integers(1, n, size=n)) % n  # never i itself
    if "group_id" in dataset.column_names:
        groups = np.asarray(dataset["group_id"][:])  # [:]: one Arrow read, not a Python call per row
        for _ in range(8):
            clash = np.flatnonzero((groups[partner] == groups) & (groups != -1))
            if not len(clash):
                break
            partner[clash] = (clash + rng.integers(1, n, size=len(clash))) % n
    positives = dataset.select_columns(["sentence1", "sentence2"]).add_column("label", np.ones(n, dtype=np.int64))
    partners = dataset.select(partner).select_columns(["sentence2"]).flatten_indices()
    negatives = concatenate_datasets([dataset.select_columns(["sentence1"]), partners], axis=1)
    negatives = negatives.add_column("label", np.zeros(n, dtype=np.int64))
    return concatenate_datasets([positives, negatives]).shuffle(seed=seed).flatten_indices()

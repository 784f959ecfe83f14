"""The paraphrase margin loss of Wieting & Gimpel (ParaNMT-50M) and Wieting et al. (P-SP)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import torch
import torch.nn.functional as F
from sentence_transformers.base.losses.merged_forward import embed_columns
from torch import Tensor, nn

from psp_st.arguments import check_number
from psp_st.losses.hard_negatives import mine_hardest_negatives, same_group

#: BibTeX of the P-SP paper (annealed mega-batching; the P-SP model itself). The one copy: model cards cite from here.
PSP_CITATION = """@inproceedings{wieting-etal-2022-paraphrastic,
    title = "Paraphrastic Representations at Scale",
    author = "Wieting, John and Gimpel, Kevin and Neubig, Graham and Berg-Kirkpatrick, Taylor",
    booktitle = "Proceedings of the 2022 Conference on Empirical Methods in Natural Language Processing: System Demonstrations",
    year = "2022",
    publisher = "Association for Computational Linguistics",
}"""
#: BibTeX of the papers this loss implements (ParaNMT-50M: the margin loss; P-SP).
CITATION = (
    """@inproceedings{wieting-gimpel-2018-paranmt,
    title = "{P}ara{NMT}-50{M}: Pushing the Limits of Paraphrastic Sentence Embeddings with Millions of Machine Translations",
    author = "Wieting, John and Gimpel, Kevin",
    booktitle = "Proceedings of the 56th Annual Meeting of the Association for Computational Linguistics (Volume 1: Long Papers)",
    year = "2018",
    address = "Melbourne, Australia",
    publisher = "Association for Computational Linguistics",
    pages = "451--462",
}

"""
    + PSP_CITATION
    + "\n"
)


def check_margin(margin: float) -> float:
    """A loss margin: a finite number >= 0 (the hinge never acts below 0)."""
    return check_number("margin", margin, 0.0)


def check_columns(
    loss: nn.Module, sentence_features: Iterable[dict[str, Tensor]], counts: tuple[int, ...], expected: str
) -> list[dict[str, Tensor]]:
    """A loss's text columns as a list: ``counts`` of them (``expected`` says which), no column empty."""
    features = list(sentence_features)
    if len(features) not in counts:
        raise ValueError(f"{type(loss).__name__} expects {expected}, got {len(features)}")
    if any(not feature or not len(next(iter(feature.values()))) for feature in features):
        raise ValueError(f"{type(loss).__name__}: the batch is empty (no sentences)")
    return features


#: A batch at least this large whose labels are only 0 and 1 holds class labels, not group ids (see below).
CLASS_LABEL_MIN_PAIRS = 8


def check_group_labels(loss: str, groups: Tensor) -> None:
    """Refuse 0/1 class labels (a paraphrase-classification dataset's ``label``) read as group ids: every pair would
    train as a paraphrase and the label-0 pairs, one "group", never be each other's negatives. Real group ids (one per
    image, verse, ...) never leave a shuffled batch of :data:`CLASS_LABEL_MIN_PAIRS` pairs in groups 0 and 1 alone."""
    if groups.numel() < CLASS_LABEL_MIN_PAIRS:
        return
    values = groups[groups >= 0].unique()
    if values.numel() > 0 and set(values.tolist()) <= {0, 1}:
        raise ValueError(
            f"{loss}: the labels of a batch of {groups.numel()} pairs are only {sorted(values.tolist())}: class labels, "
            "not the group ids this loss reads labels as (each pair trains as a paraphrase). Keep only the paraphrase "
            "pairs and remove the label/score column (dataset.remove_columns), or rename a group id column to 'label'"
        )


class ParaphraseMarginLoss(nn.Module):
    def __init__(
        self,
        model: nn.Module,
        margin: float = 0.4,
        symmetric: bool = True,
        in_batch_weight: float = 0.0,
        in_batch_scale: float = 20.0,
    ) -> None:
        """Margin loss with hardest negatives: a paraphrase must beat its hardest non-paraphrase by ``margin``::

            loss = relu(margin - cos(s, t) + cos(s, t')) + relu(margin - cos(s, t) + cos(t, s'))

        averaged over pairs ``(s, t)``; ``t'`` is from the ``t`` side, ``s'`` from the ``s`` side, mined in the batch
        or given as two more columns (mined over a mega-batch by :class:`~psp_st.training.MegaBatchTrainer`). Not
        ST's ``MegaBatchMarginLoss``: its margins are absolute and its negatives same-batch.

        Args:
            model: the SentenceTransformer being trained (any encoder).
            margin: the margin delta (0.4 in both papers).
            symmetric: also the second term (``False``: the P-SP objective, eq. 1).
            in_batch_weight: weight of an added in-batch softmax term (0: none, the papers' loss): ST's
                ``MultipleNegativesRankingLoss`` both ways, pairs of one group masked when labels carry groups
                (the mega-batch trainer's mini-batches carry none: there every other pair is a candidate).
            in_batch_scale: its cosine scale (ST's default, 20).

        References:
            - Wieting & Gimpel, ParaNMT-50M (ACL 2018), section 4: https://aclanthology.org/P18-1042/
            - Wieting et al., Paraphrastic Representations at Scale (EMNLP 2022 demos), section 3

        Inputs:
            ``(anchor, positive)`` pairs, labels none or a group id per pair (``-1``: none; in-batch mining never
            pairs two of one group); or ``(anchor, positive, anchor_negative, positive_negative)``, labels ignored
            (``anchor_negative`` is from the positive side).

        Example::

            loss = ParaphraseMarginLoss(model, margin=0.4)  # on a sentence1/sentence2 dataset
        """
        super().__init__()
        self.model = model
        self.margin = check_margin(margin)
        self.symmetric = symmetric
        self.in_batch_weight = check_number("in_batch_weight", in_batch_weight, 0.0)
        self.in_batch_scale = check_number("in_batch_scale", in_batch_scale, 0.0)
        if not self.in_batch_scale:
            raise ValueError("in_batch_scale must be > 0, got 0.0")

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor | None = None) -> Tensor:
        features = check_columns(
            self,
            sentence_features,
            (2, 4),
            "2 columns (anchor, positive) or 4 columns (anchor, positive, anchor_negative, positive_negative)",
        )
        # one forward over all columns (ST's merged forward); psp-st encoders read padding from the attention mask
        embeddings = embed_columns(self.model, features, separate_first=False)
        return self.compute_loss_from_embeddings(embeddings, labels)

    def compute_loss_from_embeddings(self, embeddings: list[Tensor], labels: Tensor | None = None) -> Tensor:
        anchors, positives = embeddings[0], embeddings[1]
        groups = None if labels is None else labels.view(-1)
        if groups is not None and groups.numel() != anchors.shape[0]:
            raise ValueError(f"{type(self).__name__}: got {groups.numel()} group labels for {anchors.shape[0]} pairs")
        if groups is not None and groups.is_floating_point() and not torch.equal(groups, groups.round()):
            raise ValueError(f"{type(self).__name__}: group labels must be integer ids, got {groups.tolist()[:5]}")
        groups = None if groups is None else groups.long()
        if groups is not None and len(embeddings) == 2:
            check_group_labels(type(self).__name__, groups)
        if len(embeddings) == 4:
            anchor_negatives, positive_negatives = embeddings[2], embeddings[3]
        else:
            negative_of_anchor, negative_of_positive = mine_hardest_negatives(anchors, positives, groups)
            anchor_negatives, positive_negatives = positives[negative_of_anchor], anchors[negative_of_positive]
        positive_score = F.cosine_similarity(anchors, positives)
        losses = F.relu(self.margin - positive_score + F.cosine_similarity(anchors, anchor_negatives))
        if self.symmetric:
            losses = losses + F.relu(self.margin - positive_score + F.cosine_similarity(positives, positive_negatives))
        loss = losses.mean()
        if self.in_batch_weight:
            loss = loss + self.in_batch_weight * self._in_batch_softmax(anchors, positives, groups)
        return loss

    def _in_batch_softmax(self, anchors: Tensor, positives: Tensor, groups: Tensor | None) -> Tensor:
        """MultipleNegativesRankingLoss over the mini-batch, both directions, same-group candidates masked."""
        scores = self.in_batch_scale * (F.normalize(anchors, dim=-1) @ F.normalize(positives, dim=-1).T)
        if groups is not None:
            scores = scores.masked_fill(same_group(groups, groups).fill_diagonal_(False), float("-inf"))
        target = torch.arange(len(anchors), device=anchors.device)
        return (F.cross_entropy(scores, target) + F.cross_entropy(scores.T, target)) / 2

    def get_config_dict(self) -> dict[str, Any]:
        config: dict[str, Any] = {"margin": self.margin, "symmetric": self.symmetric}
        if self.in_batch_weight:
            config.update(in_batch_weight=self.in_batch_weight, in_batch_scale=self.in_batch_scale)
        return config

    @property
    def citation(self) -> str:
        if not self.in_batch_weight:
            return CITATION
        from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

        in_batch = MultipleNegativesRankingLoss(self.model)  # type: ignore[arg-type]  # only its citation is read
        return CITATION + "\n" + in_batch.citation.strip() + "\n"

"""Sentence distillation: pull a (static) student's sentence vectors towards a teacher's, through a projection."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from psp_st.arguments import check_int
from psp_st.losses.margin import check_columns

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

#: BibTeX of the distillation method (Reimers & Gurevych 2020); the one copy: model cards cite from here.
CITATION = """@inproceedings{reimers-2020-multilingual-sentence-bert,
    title = "Making Monolingual Sentence Embeddings Multilingual using Knowledge Distillation",
    author = "Reimers, Nils and Gurevych, Iryna",
    booktitle = "Proceedings of the 2020 Conference on Empirical Methods in Natural Language Processing",
    year = "2020",
    url = "https://arxiv.org/abs/2004.09813",
}
"""


class TeacherDistillationLoss(nn.Module):
    def __init__(self, model: SentenceTransformer, teacher_dim: int, seed: int = 0) -> None:
        """Cosine distance between the student's projected sentence vectors and the teacher's (precomputed) ones::

            loss = mean(1 - cos(W s, t))

        ``W``: a learned bias-free projection to the teacher's dimension, trained with the student, never saved with
        the model. Not ST's ``MSELoss``: it has no projection (the dimensions must match) and no cosine variant.
        ``W`` is in no checkpoint of ``SentenceTransformerTrainer``: a resumed run restarts it from ``seed``;
        ``MegaBatchTrainer`` saves and restores it (as the main loss, in a dict of losses or as an
        :class:`~psp_st.training.auxiliary.AuxiliaryObjective`).

        Args:
            model: the SentenceTransformer being trained (the student).
            teacher_dim: dimension of the teacher vectors (384 for all-MiniLM-L6-v2).
            seed: seed of ``W``'s (scaled orthogonal) initialisation.

        References:
            - Reimers & Gurevych (EMNLP 2020), https://arxiv.org/abs/2004.09813 (MSE on teacher vectors)

        Inputs:
            a ``sentence`` column; labels: the teacher vector ``(teacher_dim,)`` of each row.

        Example::

            loss = TeacherDistillationLoss(model, teacher_dim=384)  # labels: teacher.encode(sentences)
        """
        super().__init__()
        check_int("teacher_dim", teacher_dim)
        self.model = model
        self.teacher_dim = teacher_dim
        self.seed = int(seed)  # JSON-safe in the card (a numpy integer is not)
        dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        student_dim = dimension()
        if student_dim is None:  # ST returns None when no module reports an output dimension
            raise ValueError(
                f"{type(self).__name__}: the student model does not report its embedding dimension "
                "(get_embedding_dimension() is None); end it with a module that does, e.g. Pooling"
            )
        self.projection = nn.Linear(student_dim, teacher_dim, bias=False)
        with torch.no_grad():
            weight = torch.empty(teacher_dim, student_dim)
            nn.init.orthogonal_(weight, generator=torch.Generator().manual_seed(seed))
            # a standardised student vector of n pieces has norm ~ sqrt(student_dim / n): start near unit scale
            self.projection.weight.copy_(weight / student_dim**0.5)

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor) -> Tensor:
        features = check_columns(self, sentence_features, (1,), "one text column (the sentence)")
        embeddings = [self.model(features[0])["sentence_embedding"]]
        return self.compute_loss_from_embeddings(embeddings, labels)

    def compute_loss_from_embeddings(self, embeddings: list[Tensor], labels: Tensor) -> Tensor:
        student = embeddings[0]
        if labels is None or labels.ndim != 2 or labels.shape != (student.shape[0], self.teacher_dim):
            raise ValueError(
                f"{type(self).__name__}: labels must be teacher vectors of shape "
                f"({student.shape[0]}, {self.teacher_dim}), got "
                f"{None if labels is None else tuple(labels.shape)}"
            )
        if not bool(torch.isfinite(labels).all()):
            raise ValueError(f"{type(self).__name__}: the teacher vectors (labels) hold NaN or infinite values")
        # the projection is float32; a float64 (or half) student is cast, not a dtype error deep in torch
        projected = self.projection(student.to(self.projection.weight.dtype))
        return (1.0 - F.cosine_similarity(projected, labels.to(projected.dtype), dim=-1)).mean()

    def get_config_dict(self) -> dict[str, Any]:
        return {"teacher_dim": self.teacher_dim, "seed": self.seed}  # the seed draws W: the card's run needs it

    @property
    def citation(self) -> str:
        return CITATION

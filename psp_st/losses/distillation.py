"""Sentence distillation: pull a (static) student's sentence vectors towards a teacher's, through a projection."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from psp_st.arguments import check_int

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

METRICS = ("cosine", "mse", "similarity")

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
    def __init__(
        self,
        model: SentenceTransformer,
        teacher_dim: int,
        metric: str = "cosine",
        projection: bool = True,
        seed: int = 0,
    ) -> None:
        """Distance between the student's projected sentence vectors and the teacher's (precomputed) vectors.

        For student vectors ``s`` (the model's ``sentence_embedding``), the learned projection ``W`` (a bias-free
        linear map from the student's to the teacher's dimension) and the teacher vectors ``t``::

            cosine:  loss = mean(1 - cos(W s, t))
            mse:     loss = mean(||W s - t||^2) / teacher_dim       (ST's MSELoss, after the projection)
            similarity: loss = mean((cos(s_i, s_j) - cos(t_i, t_j))^2)   over all pairs i, j of the batch

        ``similarity`` (relational distillation) uses no projection. The projection is trained with the student
        and never saved with the model. Why not ST's ``MSELoss``: it has no projection (the dimensions must
        match) and no cosine variant; like it, this loss reads the (cached) teacher vectors as labels.

        Args:
            model: the SentenceTransformer being trained (the student).
            teacher_dim: dimension of the teacher vectors (384 for all-MiniLM-L6-v2).
            metric: ``"cosine"`` (direction only), ``"mse"`` or ``"similarity"`` (in-batch cosine matrices).
            projection: learn ``W``; otherwise the student's dimension must equal ``teacher_dim``.
            seed: seed of ``W``'s initialisation (scaled orthogonal rows/columns).

        References:
            - Reimers & Gurevych (EMNLP 2020), https://arxiv.org/abs/2004.09813 (MSE on teacher vectors)
            - Tung & Mori, Similarity-Preserving Knowledge Distillation (ICCV 2019), https://arxiv.org/abs/1907.09682

        Inputs:
            a ``sentence`` column; labels: the teacher vector ``(teacher_dim,)`` of each row (e.g. from
            :func:`psp_st.distillation.teacher_vectors`).

        Example::

            dataset = Dataset.from_dict({"sentence": sentences, "label": teacher.encode(sentences).tolist()})
            loss = TeacherDistillationLoss(model, teacher_dim=384)
        """
        super().__init__()
        if metric not in METRICS:
            raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
        check_int("teacher_dim", teacher_dim)
        self.model = model
        self.teacher_dim = teacher_dim
        self.metric = metric
        dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        student_dim = dimension()
        if student_dim is None:  # ST returns None when no module reports an output dimension
            raise ValueError(
                f"{type(self).__name__}: the student model does not report its embedding dimension "
                "(get_embedding_dimension() is None); end it with a module that does, e.g. Pooling"
            )
        self.projection: nn.Linear | None = None
        if projection:
            self.projection = nn.Linear(student_dim, teacher_dim, bias=False)
            generator = torch.Generator().manual_seed(seed)
            with torch.no_grad():
                weight = torch.empty(teacher_dim, student_dim)
                nn.init.orthogonal_(weight, generator=generator)
                # a standardised student vector of n pieces has norm ~ sqrt(student_dim / n): start near unit scale
                self.projection.weight.copy_(weight / student_dim**0.5)
        else:
            if student_dim != teacher_dim:
                raise ValueError(
                    f"projection=False needs equal dimensions, got student {student_dim} and teacher {teacher_dim}"
                )

    def forward(self, sentence_features: Iterable[dict[str, Tensor]], labels: Tensor) -> Tensor:
        features = list(sentence_features)
        if len(features) != 1:
            raise ValueError(f"{type(self).__name__} expects one text column (the sentence), got {len(features)}")
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
        if self.metric == "similarity":
            student_unit = F.normalize(student, dim=-1)
            teacher_unit = F.normalize(labels.to(student.dtype), dim=-1)
            return (student_unit @ student_unit.T - teacher_unit @ teacher_unit.T).pow(2).mean()
        projected = self.projection(student) if self.projection is not None else student
        target = labels.to(projected.dtype)
        if self.metric == "cosine":
            return (1.0 - F.cosine_similarity(projected, target, dim=-1)).mean()
        return F.mse_loss(projected, target)

    def get_config_dict(self) -> dict[str, Any]:
        return {"teacher_dim": self.teacher_dim, "metric": self.metric, "projection": self.projection is not None}

    @property
    def citation(self) -> str:
        return CITATION

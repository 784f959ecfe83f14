"""psp-en round 10: graded similarity from the teacher, and a distillation-weight schedule (all lost or tied on dev).

Runs ``benchmarks/psp_en_ablation.py`` (every argument this script does not know goes to it) with the package's
distillation objective changed in this process only:

* ``--fixed-sample-seed S``: the distillation sample is seed ``S``'s whatever the recipe's seed, so runs at other
  seeds reuse one teacher cache (the seed still sets the tokenizer sample, the initialisation and the data order).
* ``--neighbour-batches G``: each distillation batch is ``batch_size / G`` random sentences, each with its
  ``G - 1`` nearest neighbours by teacher cosine (instead of a random batch), so a batch holds related sentences.
* ``--relational-weight W``: adds ``W * (1 - Pearson(student cosines, teacher cosines))`` over the batch's sentence
  pairs to the distillation loss: the student's own cosines (no projection) learn the teacher's graded similarity.
* ``--contrastive-weight W`` (``--contrastive-scale S``): adds ``W`` times an in-batch softmax over the batch's
  teacher vectors (cross-entropy of ``S * cos(W s_i, t_j)`` with target ``j = i``): each projected student vector
  must pick out its own sentence's teacher vector among the batch's, not only point near it (round 20).
* ``--decay-to F``: the distillation weight goes linearly from the recipe's to ``F`` times it over the epoch.
* ``--row-bias-correction``: the optimizer corrects each embedding row's Adam moments by that row's own number of
  updates instead of the global step (``SparseDenseAdam(row_bias_correction=True)``): a piece seen k times moves as
  dense Adam would after k steps, not ~3x faster on its first touches (round 21).

Round 22's guide against false negatives is a recipe key, not a flag of this script: ``--set
megabatch.negative_guide=<model>`` (``PSPTrainingArguments.negative_guide``).

    OMP_NUM_THREADS=1 python benchmarks/psp_en_graded_distillation.py --fixed-sample-seed 42 \\
        --neighbour-batches 8 --relational-weight 1 --row v5 --set seed=42 --tag=-rel8w1-s42 --log runs.jsonl

Numbers: ``benchmarks/results/psp_en_v3_ablation.md`` (round 10, raw log ``psp_en_v10_runs.jsonl``; the contrastive
term: round 20, ``psp_en_v20_runs.jsonl``; the per-row bias correction: round 21, ``psp_en_v21_runs.jsonl``; the
negative guide: round 22, ``psp_en_v22_runs.jsonl``).
"""

from __future__ import annotations

import argparse
import functools
import runpy
import sys
from pathlib import Path

import numpy as np
import torch

ABLATION = Path(__file__).resolve().parent / "psp_en_ablation.py"


def nearest(labels: torch.Tensor, k: int) -> np.ndarray:
    """The ``k`` nearest rows of every row by cosine (itself excluded), exact: a FAISS flat index searched through
    :func:`psp_st.mining.ann.search`, the miner's self-exclusion."""
    from psp_st.mining.ann import import_faiss, search

    unit = np.ascontiguousarray(torch.nn.functional.normalize(labels, dim=-1).numpy(), dtype=np.float32)
    index = import_faiss().IndexFlatIP(unit.shape[1])
    index.add(unit)
    return search(index, unit, k, exclude=np.arange(len(unit)))[1]


def pearson_of_cosines(student: torch.Tensor, teacher: torch.Tensor) -> torch.Tensor:
    """Pearson correlation between the student's and the teacher's cosines over all pairs of a batch."""
    student = torch.nn.functional.normalize(student, dim=-1)
    teacher = torch.nn.functional.normalize(teacher.to(student.dtype), dim=-1)
    upper = torch.triu_indices(len(student), len(student), offset=1)
    s = (student @ student.T)[upper[0], upper[1]]
    t = (teacher @ teacher.T)[upper[0], upper[1]]
    s, t = s - s.mean(), t - t.mean()
    return (s * t).sum() / (s.norm() * t.norm() + 1e-8)


def teacher_softmax(projected: torch.Tensor, teacher: torch.Tensor, scale: float) -> torch.Tensor:
    """Cross-entropy of each row's scaled cosines to every teacher vector of the batch, its own being the target."""
    student = torch.nn.functional.normalize(projected, dim=-1)
    teacher = torch.nn.functional.normalize(teacher.to(student.dtype), dim=-1)
    logits = scale * student @ teacher.T
    return torch.nn.functional.cross_entropy(logits, torch.arange(len(student)))


def patch(args: argparse.Namespace) -> None:
    """Change the distillation objective as the options say (this process only)."""
    import psp_st.distillation as distillation
    from psp_st.losses.distillation import TeacherDistillationLoss
    from psp_st.training.auxiliary import AuxiliaryObjective

    if args.fixed_sample_seed is not None:
        sample = distillation.distillation_sentences

        def fixed_sample(*a, **kw):
            return sample(*a, **{**kw, "seed": args.fixed_sample_seed})

        distillation.distillation_sentences = fixed_sample
    if args.neighbour_batches:
        group = args.neighbour_batches
        init = AuxiliaryObjective.__init__

        def init_with_neighbours(self, *a, **kw):
            init(self, *a, **kw)
            self.neighbours = nearest(self.labels, group - 1)

        def neighbour_rows(self, step: int) -> np.ndarray:
            rng = np.random.default_rng([self.seed, step, 7])
            anchors = rng.choice(len(self.texts), self.batch_size // group, replace=False)
            return np.concatenate([np.concatenate([[a], self.neighbours[a]]) for a in anchors])

        AuxiliaryObjective.__init__ = init_with_neighbours  # type: ignore[method-assign]
        AuxiliaryObjective.rows = neighbour_rows  # type: ignore[method-assign]
    if args.relational_weight:
        compute = TeacherDistillationLoss.compute_loss_from_embeddings

        def with_relational(self, embeddings, labels):
            relational = 1.0 - pearson_of_cosines(embeddings[0], labels)
            return compute(self, embeddings, labels) + args.relational_weight * relational

        TeacherDistillationLoss.compute_loss_from_embeddings = with_relational  # type: ignore[method-assign]
    if args.contrastive_weight:
        compute_base = TeacherDistillationLoss.compute_loss_from_embeddings

        def with_contrastive(self, embeddings, labels):
            contrastive = teacher_softmax(self.projection(embeddings[0]), labels, args.contrastive_scale)
            return compute_base(self, embeddings, labels) + args.contrastive_weight * contrastive

        TeacherDistillationLoss.compute_loss_from_embeddings = with_contrastive  # type: ignore[method-assign]
    if args.row_bias_correction:
        import psp_st.training.megabatch as megabatch
        from psp_st.training.optimizer import SparseDenseAdam

        megabatch.SparseDenseAdam = functools.partial(SparseDenseAdam, row_bias_correction=True)  # type: ignore[misc]
    if args.decay_to is not None:
        call = AuxiliaryObjective.__call__

        def decayed(self, model, step: int):
            fraction = min(step / args.decay_steps, 1.0)
            return call(self, model, step) * (1.0 - fraction * (1.0 - args.decay_to))

        AuxiliaryObjective.__call__ = decayed  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False
    )
    parser.add_argument("--fixed-sample-seed", type=int, default=None)
    parser.add_argument("--neighbour-batches", type=int, default=0, help="group size G (0: random batches)")
    parser.add_argument("--relational-weight", type=float, default=0.0)
    parser.add_argument("--contrastive-weight", type=float, default=0.0)
    parser.add_argument("--contrastive-scale", type=float, default=20.0)
    parser.add_argument("--decay-to", type=float, default=None, help="final fraction of the distillation weight")
    parser.add_argument("--decay-steps", type=int, default=3769, help="steps of the decay (one epoch of psp-en)")
    parser.add_argument("--row-bias-correction", action="store_true", help="per-row Adam bias correction")
    args, rest = parser.parse_known_args()
    patch(args)
    sys.argv = [str(ABLATION), *rest]
    runpy.run_path(str(ABLATION), run_name="__main__")


if __name__ == "__main__":
    main()

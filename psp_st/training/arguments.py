"""``PSPTrainingArguments``: Sentence-Transformers' training arguments plus the mega-batch options of the trainer."""

from __future__ import annotations

from dataclasses import dataclass, field

from sentence_transformers.base.sampler import BatchSamplers
from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments
from transformers.training_args import OptimizerNames

from psp_st.arguments import Check
from psp_st.training.optimizer import check_adam

#: dtypes the mega-batch similarity matmul may run in.
MINING_DTYPES = ("float32", "bfloat16", "float16")

#: The checks of the mega-batch options (a recipe's ``megabatch`` section, ``megabatch_size`` as ``size``).
MEGABATCH_CHECKS = {
    "megabatch_size": Check(int, low=0),
    "anneal": Check(int, low=0),
    "group_column": Check(str),
    "text_guard": Check(bool),
    "sparse_embeddings": Check(bool),
    "mining_chunk_size": Check(int, positive=True),
    "mining_dtype": Check(str, choices=MINING_DTYPES),
    "encode_batch_size": Check(int, positive=True),
    "language_guard": Check(bool),
    "negative_guide": Check(str),
    "guide_margin": Check(float, low=-2.0, high=2.0),
}


@dataclass
class PSPTrainingArguments(SentenceTransformerTrainingArguments):
    """ST's training arguments plus the options of :class:`~psp_st.training.MegaBatchTrainer`.

    Args:
        megabatch_size: the largest mega-batch M, in mini-batches (100 for P-SP, 40 for the ParaNMT models);
            ``None`` or 0: no mega-batching (plain ST training with the given loss, e.g. in-batch MNRL; the group
            ids reach a ParaphraseMarginLoss as labels, its in-batch group guard).
        sparse_embeddings: sparse embedding-table gradients, trained with ``SparseDenseAdam`` (``max_grad_norm``
            clips sparse and dense gradients together); off: ST's default optimizer.
        mining_dtype: ``"bfloat16"`` pays only on CPUs with native bf16 matmuls (``benchmarks/mining_dtype.py``).
        language_guard: the negative of a second sentence has the language (``lang``; a missing value is one more)
            of its own first sentence. Off: sides only (right for one language per side).
        negative_guide: a trained model (folder or name; a P-SP model embeds through the torch-free engine) whose
            likely paraphrases are never mined as negatives: a candidate it scores above the pair's own cosine
            minus ``guide_margin`` is skipped (GISTEmbed's false-negative filter). Single runs gain with a faster
            ``anneal``; psp-en's soups do not (round 22 of ``benchmarks/results/psp_en_v3_ablation.md``).
    """

    megabatch_size: int | None = field(default=100, metadata={"help": "Largest mega-batch, in mini-batches."})
    anneal: int = field(default=150, metadata={"help": "Mini-batches between increments of the mega-batch size."})
    group_column: str | None = field(
        default="group_id", metadata={"help": "Group id column (-1: none); ignored if absent."}
    )
    text_guard: bool = field(default=True, metadata={"help": "Never a negative with the sentence's own text."})
    sparse_embeddings: bool = field(default=True, metadata={"help": "Sparse embedding gradients, SparseDenseAdam."})
    mining_chunk_size: int = field(default=4096, metadata={"help": "Rows of the mining matrix computed at once."})
    mining_dtype: str = field(default="float32", metadata={"help": f"Mining matmul dtype: {MINING_DTYPES}."})
    encode_batch_size: int = field(default=4096, metadata={"help": "Sentences per no-grad mining forward."})
    language_guard: bool = field(default=False, metadata={"help": "Negatives of the partner's language (lang)."})
    negative_guide: str | None = field(
        default=None, metadata={"help": "Model whose likely paraphrases are never mined as negatives."}
    )
    guide_margin: float = field(default=0.0, metadata={"help": "Skip candidates above the pair's guide cosine - this."})

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, check in MEGABATCH_CHECKS.items():
            check(name, getattr(self, name))
        if self.megabatch_size and self.dataloader_num_workers:  # MegaBatchTrainer's loader is num_workers=0
            raise ValueError(
                f"dataloader_num_workers {self.dataloader_num_workers} would do nothing with mega-batching: its "
                "batches are mined in the training process with the current model; drop it (or set megabatch_size, "
                "a recipe's megabatch.size, to 0 for plain batches)"
            )
        if self.sparse_embeddings and self.optim not in (OptimizerNames.ADAMW_TORCH, OptimizerNames.ADAMW_TORCH_FUSED):
            raise ValueError(
                f"optim {getattr(self.optim, 'value', self.optim)!r} would do nothing with sparse_embeddings: "
                "SparseDenseAdam trains the model (adam_beta1, adam_beta2, adam_epsilon and weight_decay apply); set "
                "sparse_embeddings=False (a recipe's megabatch.sparse_embeddings) for transformers' optimizers"
            )
        if self.sparse_embeddings:  # SparseDenseAdam's own check, now rather than when training starts
            check_adam((self.adam_beta1, self.adam_beta2), self.adam_epsilon)
        if self.sparse_embeddings and self.learning_rate_mapping:
            raise ValueError(
                f"learning_rate_mapping {self.learning_rate_mapping!r} would do nothing with sparse_embeddings: "
                "SparseDenseAdam trains every parameter at learning_rate; drop it, or set sparse_embeddings=False (a "
                "recipe's megabatch.sparse_embeddings) for ST's optimizer, which reads it"
            )
        if self.megabatch_size and self.batch_sampler != BatchSamplers.BATCH_SAMPLER:
            sampler = self.batch_sampler
            label = sampler.value if isinstance(sampler, BatchSamplers) else getattr(sampler, "__name__", repr(sampler))
            raise ValueError(
                f"batch_sampler {label!r} would do nothing with mega-batching: its mini-batches are a shuffle of the "
                "rows by (seed, epoch), and the text guard keeps a sentence's own text from being its negative; drop "
                "it (or set megabatch_size, a recipe's megabatch.size, to 0 for ST's batch samplers)"
            )

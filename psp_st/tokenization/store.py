"""Save and load any psp-st tokenizer into a model folder, by kind (words, trigrams, sentencepiece, morfessor).

The token-based encoders (:mod:`psp_st.modules.averaging`, :mod:`psp_st.modules.recurrent`) accept any of these
tokenizers; they record the kind in their ``psp_config.json`` and this module reads the matching files back.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from psp_st.tokenization.sentencepiece import SentencePieceTokenizer
from psp_st.tokenization.words import TrigramTokenizer, WordTokenizer

#: File a sentencepiece tokenizer is saved to (the same name PSPEmbedding uses).
SENTENCEPIECE_FILE = "sentencepiece.model"


def tokenizer_kind(tokenizer: Any) -> str:
    """``"words"``, ``"trigrams"``, ``"morfessor"`` or ``"sentencepiece"``."""
    if isinstance(tokenizer, SentencePieceTokenizer):
        return "sentencepiece"
    kind = getattr(tokenizer, "kind", None)
    if kind in ("words", "trigrams", "morfessor"):
        return kind
    raise TypeError(
        f"unsupported tokenizer {type(tokenizer).__name__}: use WordTokenizer, TrigramTokenizer, MorfessorTokenizer "
        "or SentencePieceTokenizer"
    )


def tokenizer_files(kind: str) -> list[str]:
    """The files a tokenizer of ``kind`` writes into a model folder."""
    return {
        "words": ["vocab.json"],
        "trigrams": ["vocab.json"],
        "morfessor": ["vocab.json", "morfessor_segmentation.txt"],
        "sentencepiece": [SENTENCEPIECE_FILE],
    }[kind]


def save_tokenizer(tokenizer: Any, directory: str | os.PathLike) -> None:
    """Write ``tokenizer``'s files into ``directory``."""
    kind = tokenizer_kind(tokenizer)
    if kind == "sentencepiece":
        tokenizer.save(Path(directory) / SENTENCEPIECE_FILE)
    else:
        tokenizer.save(directory)


def load_tokenizer(kind: str, directory: str | os.PathLike, lowercase: bool | None = None) -> Any:
    """Read a tokenizer of ``kind`` from ``directory`` (raises ValueError/FileNotFoundError naming the file)."""
    if kind == "words":
        return WordTokenizer.load(directory)
    if kind == "trigrams":
        return TrigramTokenizer.load(directory)
    if kind == "morfessor":
        from psp_st.tokenization.morfessor import MorfessorTokenizer

        return MorfessorTokenizer.load(directory)
    if kind == "sentencepiece":
        tokenizer = SentencePieceTokenizer.from_file(Path(directory) / SENTENCEPIECE_FILE)
        if lowercase is not None:
            tokenizer.lowercase = lowercase
        return tokenizer
    raise ValueError(f"unknown tokenizer kind {kind!r} (expected words, trigrams, morfessor or sentencepiece)")


def train_tokenizer_of_kind(
    kind: str, texts, min_count: int = 1, max_size: int | None = None, lowercase: bool = True, **options: Any
) -> Any:
    """Train a tokenizer of ``kind`` on ``texts``.

    ``min_count``/``max_size`` bound the vocabulary of words, trigrams and morphs; for ``"sentencepiece"``
    ``max_size`` is the sentencepiece ``vocab_size`` (default 20,000) and ``options`` go to
    :meth:`SentencePieceTokenizer.train`; for ``"morfessor"`` they go to :meth:`MorfessorSegmenter.train`.
    """
    if kind == "words":
        return WordTokenizer.train(texts, min_count=min_count, max_size=max_size, lowercase=lowercase)
    if kind == "trigrams":
        return TrigramTokenizer.train(texts, min_count=min_count, max_size=max_size, lowercase=lowercase)
    if kind == "morfessor":
        from psp_st.tokenization.morfessor import MorfessorTokenizer

        return MorfessorTokenizer.train(texts, min_count=min_count, max_size=max_size, lowercase=lowercase, **options)
    if kind == "sentencepiece":
        return SentencePieceTokenizer.train(texts, vocab_size=max_size or 20_000, lowercase=lowercase, **options)
    raise ValueError(f"unknown tokenizer kind {kind!r} (expected words, trigrams, morfessor or sentencepiece)")

"""Train, save and load any psp-st tokenizer by kind (words, trigrams, Morfessor morphs, sentencepiece).

The token-based encoders record the kind in their ``psp_config.json``; this module reads the matching files back.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from psp_st.tokenization.morfessor import MorfessorTokenizer
from psp_st.tokenization.sentencepiece import SentencePieceTokenizer
from psp_st.tokenization.words import TrigramTokenizer, WordTokenizer

#: File a sentencepiece tokenizer is saved to (the same name PSPEmbedding uses).
SENTENCEPIECE_FILE = "sentencepiece.model"
_VOCABULARY_KINDS: dict[str, Any] = {
    "words": WordTokenizer,
    "trigrams": TrigramTokenizer,
    "morfessor": MorfessorTokenizer,
}


def _vocabulary_class(kind: str) -> Any:
    if kind not in _VOCABULARY_KINDS and kind != "sentencepiece":
        raise ValueError(f"unknown tokenizer kind {kind!r} (expected words, trigrams, morfessor or sentencepiece)")
    return _VOCABULARY_KINDS.get(kind)


def tokenizer_kind(tokenizer: Any) -> str:
    """``"words"``, ``"trigrams"``, ``"morfessor"`` or ``"sentencepiece"``."""
    if isinstance(tokenizer, SentencePieceTokenizer):
        return "sentencepiece"
    kind = getattr(tokenizer, "kind", None)
    if kind in _VOCABULARY_KINDS:
        return kind
    raise TypeError(
        f"unsupported tokenizer {type(tokenizer).__name__}: use WordTokenizer, TrigramTokenizer, MorfessorTokenizer "
        "or SentencePieceTokenizer"
    )


def tokenizer_files(kind: str) -> list[str]:
    """The files a tokenizer of ``kind`` writes into a model folder (``KeyError`` for an unknown kind)."""
    if kind == "sentencepiece":
        return [SENTENCEPIECE_FILE]
    return list(_VOCABULARY_KINDS[kind].files)


def save_tokenizer(tokenizer: Any, directory: str | os.PathLike) -> None:
    """Write ``tokenizer``'s files into ``directory``."""
    if tokenizer_kind(tokenizer) == "sentencepiece":
        tokenizer.save(Path(directory) / SENTENCEPIECE_FILE)
    else:
        tokenizer.save(directory)


def load_tokenizer(kind: str, directory: str | os.PathLike, lowercase: bool | None = None) -> Any:
    """Read a tokenizer of ``kind`` from ``directory`` (raises ValueError/FileNotFoundError naming the file)."""
    cls = _vocabulary_class(kind)
    if cls is not None:
        return cls.load(directory)
    tokenizer = SentencePieceTokenizer.from_file(Path(directory) / SENTENCEPIECE_FILE)
    if lowercase is not None:
        tokenizer.lowercase = lowercase
    return tokenizer


def train_tokenizer_of_kind(
    kind: str, texts, min_count: int = 1, max_size: int | None = None, lowercase: bool = True, **options: Any
) -> Any:
    """Train a tokenizer of ``kind`` on ``texts``.

    ``min_count``/``max_size`` bound the vocabulary of words, trigrams and morphs; for ``"sentencepiece"``
    ``max_size`` is the sentencepiece ``vocab_size`` (default 20,000) and ``options`` go to
    :meth:`SentencePieceTokenizer.train`; for ``"morfessor"`` they go to :meth:`MorfessorSegmenter.train`.
    """
    cls = _vocabulary_class(kind)
    if cls is not None:
        return cls.train(texts, min_count=min_count, max_size=max_size, lowercase=lowercase, **options)
    return SentencePieceTokenizer.train(texts, vocab_size=max_size or 20_000, lowercase=lowercase, **options)

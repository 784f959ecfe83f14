"""Train, save and load any psp-st tokenizer by kind (the kind a token encoder records in ``psp_config.json``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from psp_st.tokenization.morfessor import MorfessorTokenizer
from psp_st.tokenization.sentencepiece import SentencePieceTokenizer
from psp_st.tokenization.words import TrigramTokenizer, WordTokenizer

KINDS: dict[str, Any] = {
    cls.kind: cls for cls in (WordTokenizer, TrigramTokenizer, MorfessorTokenizer, SentencePieceTokenizer)
}


def _vocabulary_class(kind: str) -> Any:
    """The vocabulary tokenizer class of ``kind``, ``None`` for sentencepiece."""
    if kind not in KINDS:
        raise ValueError(f"unknown tokenizer kind {kind!r} (expected words, trigrams, morfessor or sentencepiece)")
    return None if kind == SentencePieceTokenizer.kind else KINDS[kind]


def tokenizer_kind(tokenizer: Any) -> str:
    """``"words"``, ``"trigrams"``, ``"morfessor"`` or ``"sentencepiece"``."""
    kind = getattr(tokenizer, "kind", None)
    if kind in KINDS and isinstance(tokenizer, KINDS[kind]):
        return kind
    raise TypeError(
        f"unsupported tokenizer {type(tokenizer).__name__}: use WordTokenizer, TrigramTokenizer, MorfessorTokenizer "
        "or SentencePieceTokenizer"
    )


def tokenizer_files(kind: str) -> list[str]:
    """The files a tokenizer of ``kind`` writes (``KeyError`` for an unknown kind)."""
    return list(KINDS[kind].files)


def save_tokenizer(tokenizer: Any, directory: str | os.PathLike) -> None:
    """Write ``tokenizer``'s files into ``directory``."""
    if tokenizer_kind(tokenizer) == "sentencepiece":
        tokenizer.save(Path(directory) / tokenizer.files[0])
    else:
        tokenizer.save(directory)


def load_tokenizer(kind: str, directory: str | os.PathLike, lowercase: bool | None = None) -> Any:
    """Read a tokenizer of ``kind`` from ``directory`` (raises ValueError/FileNotFoundError naming the file)."""
    cls = _vocabulary_class(kind)
    if cls is not None:
        return cls.load(directory)
    tokenizer = SentencePieceTokenizer.from_file(Path(directory) / SentencePieceTokenizer.files[0])
    if lowercase is not None:
        tokenizer.lowercase = lowercase
    return tokenizer


def train_tokenizer_of_kind(
    kind: str, texts, min_count: int = 1, max_size: int | None = None, lowercase: bool = True, **options: Any
) -> Any:
    """Train a tokenizer of ``kind`` on ``texts`` (``options``: its ``train``); for ``"sentencepiece"``
    ``max_size`` is the ``vocab_size`` (default 20,000) and ``min_count`` is unused."""
    cls = _vocabulary_class(kind)
    if cls is not None:
        return cls.train(texts, min_count=min_count, max_size=max_size, lowercase=lowercase, **options)
    return SentencePieceTokenizer.train(texts, vocab_size=max_size or 20_000, lowercase=lowercase, **options)

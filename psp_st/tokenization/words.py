"""Word and character-trigram tokenizers with a vocabulary (as ParaNMT-50M's WORD / TRIGRAM models, section 4)."""

from __future__ import annotations

import json
import os
import re
import string
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import islice
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np
import regex

from psp_st.arguments import check_int
from psp_st.io.atomic import atomic_path
from psp_st.tokenization.text_checks import check_max_length, check_texts, refuse_single_text, training_text_error

#: Words keep inner ', - and . ("don't", "u.s") and combining marks; other punctuation marks are tokens of their own.
WORD_PATTERN = regex.compile(r"\w+(?:['’\-.]\w+)*|[^\w\s]")
_WHITESPACE = re.compile(r"\s+")
#: Invisible format characters (Unicode Cf: BOM, zero-width space and joiners, direction marks, soft hyphen).
_FORMAT_CHARACTERS = regex.compile(r"\p{Cf}+")
UNK_TOKEN = "<unk>"
TOKENIZER_FORMAT_VERSION = 1


def _canonical_text(text: str) -> str:
    """``text`` in Unicode NFC without format characters: canonically equivalent texts (NFD accents) and texts
    differing only by invisible characters get the same words and trigrams."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFC", _FORMAT_CHARACTERS.sub("", text))


def _strip_punctuation(word: str) -> str:
    """``word`` without ASCII and Unicode (category P*) punctuation."""
    return "".join(ch for ch in word if ch not in string.punctuation and not unicodedata.category(ch).startswith("P"))


class Vocabulary:
    """Token <-> id table; ``tokens`` in id order, ``tokens[0]`` must be ``"<unk>"``."""

    def __init__(self, tokens: Sequence[str]) -> None:
        tokens = list(tokens)
        if not tokens or tokens[0] != UNK_TOKEN:
            raise ValueError(f"a vocabulary must start with {UNK_TOKEN!r}, got {tokens[:1]}")
        index = {token: i for i, token in enumerate(tokens)}
        if len(index) != len(tokens):
            raise ValueError("vocabulary has duplicate tokens")
        self.tokens = tokens
        self.index = index

    @classmethod
    def from_counts(cls, counts: Counter, min_count: int = 1, max_size: int | None = None) -> Vocabulary:
        """Tokens seen at least ``min_count`` times, most frequent first, at most ``max_size`` (``<unk>`` included)."""
        min_count = check_int("min_count", min_count)
        if max_size is not None and max_size < 2:
            raise ValueError(f"max_size must be >= 2 (<unk> and one token), got {max_size}")
        ranked = sorted(
            (item for item in counts.items() if item[1] >= min_count and item[0] != UNK_TOKEN),
            key=lambda item: (-item[1], item[0]),
        )
        if max_size is not None:
            ranked = ranked[: max_size - 1]
        if not ranked:
            raise ValueError(f"no token occurs at least min_count={min_count} times in the training texts")
        return cls([UNK_TOKEN] + [token for token, _ in ranked])

    def __len__(self) -> int:
        return len(self.tokens)


class _VocabularyTokenizer:
    """Shared encode/save/load of the vocabulary-based tokenizers; subclasses define :meth:`split`."""

    kind: ClassVar[str]
    file_name: ClassVar[str] = "vocab.json"
    files: ClassVar[tuple[str, ...]] = (file_name,)

    def __init__(self, vocabulary: Vocabulary | Sequence[str], lowercase: bool = True) -> None:
        self.vocab = vocabulary if isinstance(vocabulary, Vocabulary) else Vocabulary(vocabulary)
        self.lowercase = lowercase

    def split(self, text: str, max_length: int | None = None) -> list[str]:
        raise NotImplementedError

    def lookup(self, token: str) -> int:
        return self.vocab.index.get(token, 0)

    def _extra_config(self) -> dict[str, Any]:
        return {}

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    @property
    def unk_id(self) -> int:
        return 0

    def id_to_token(self, index: int) -> str:
        return self.vocab.tokens[index]

    def get_vocab(self) -> dict[str, int]:
        """``{token: id}``, as a transformers tokenizer gives it (what ``SentenceTransformer.merge`` compares)."""
        return dict(self.vocab.index)

    def token_texts(self) -> list[str]:
        """The text of every token id as a teacher should read it (trigram padding spaces stripped)."""
        return [token.strip() or token for token in self.vocab.tokens]

    def tokenize(self, texts: Sequence[str] | str, max_length: int | None = None) -> list[list[str]]:
        """Token strings of each text (before the vocabulary lookup)."""
        max_length = check_max_length(max_length)
        return [self.split(text, max_length) for text in check_texts(texts)]

    def encode(self, texts: Sequence[str] | str, max_length: int | None = None) -> list[list[int]]:
        """Token ids of each text (unknown tokens: :attr:`unk_id`), at most ``max_length`` each."""
        max_length = check_max_length(max_length)
        lookup = self.lookup
        return [[lookup(token) for token in self.split(text, max_length)] for text in check_texts(texts)]

    def encode_flat(self, texts: Sequence[str], max_length: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """One flat id array and the per-text lengths (the layout :func:`pad_flat_ids` takes)."""
        ids = self.encode(texts, max_length=max_length)
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        flat = np.fromiter((i for row in ids for i in row), dtype=np.int64, count=int(lengths.sum()))
        return flat, lengths

    @classmethod
    def count_tokens(cls, texts: Iterable[str], **options: Any) -> Counter:
        refuse_single_text(texts)
        splitter = cls(Vocabulary([UNK_TOKEN]), **options)
        counts: Counter = Counter()
        for index, text in enumerate(texts):
            error = training_text_error(index, text)
            if error is not None:
                raise error
            counts.update(splitter.split(text))
        return counts

    @classmethod
    def train(cls, texts: Iterable[str], min_count: int = 1, max_size: int | None = None, **options: Any) -> Self:
        """Build the vocabulary from ``texts``: tokens seen ``min_count`` times, the ``max_size`` most frequent."""
        counts = cls.count_tokens(texts, **options)
        return cls(Vocabulary.from_counts(counts, min_count=min_count, max_size=max_size), **options)

    def save(self, directory: str | os.PathLike) -> None:
        """Write ``vocab.json`` (kind, options, tokens) into ``directory``."""
        data = {"format_version": TOKENIZER_FORMAT_VERSION, "kind": self.kind, "lowercase": self.lowercase}
        data.update(self._extra_config(), tokens=self.vocab.tokens)
        with atomic_path(Path(directory) / self.file_name) as tmp:
            tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def _load_options(cls, directory: str | os.PathLike, options: dict[str, Any]) -> dict[str, Any]:
        """Constructor arguments (besides the vocabulary) from the options saved in ``vocab.json``."""
        return options

    @classmethod
    def load(cls, directory: str | os.PathLike) -> Self:
        """Read a tokenizer written by :meth:`save`, with errors naming the file."""
        path = Path(directory) / cls.file_name
        if not path.is_file():
            raise FileNotFoundError(f"tokenizer file not found: {path}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"{path} is not valid JSON ({error})") from error
        if not isinstance(data, dict) or data.get("kind") != cls.kind:
            found = data.get("kind") if isinstance(data, dict) else type(data).__name__
            raise ValueError(f"{path}: expected a '{cls.kind}' tokenizer, found {found!r}")
        if data.get("format_version", 0) > TOKENIZER_FORMAT_VERSION:
            raise ValueError(
                f"{path}: tokenizer format_version {data['format_version']} is newer than this "
                f"psp-st reads ({TOKENIZER_FORMAT_VERSION}): pip install -U psp-st"
            )
        options = {key: value for key, value in data.items() if key not in ("format_version", "kind", "tokens")}
        if not isinstance(options.get("lowercase", True), bool):
            raise ValueError(f"{path}: lowercase must be true or false, got {options['lowercase']!r}")
        try:
            return cls(Vocabulary(data["tokens"]), **cls._load_options(directory, options))
        except (KeyError, TypeError) as error:
            raise ValueError(f"{path}: malformed tokenizer file ({error!r})") from error

    def __repr__(self) -> str:
        return f"{type(self).__name__}(vocab_size={self.vocab_size}, lowercase={self.lowercase})"


class WordTokenizer(_VocabularyTokenizer):
    """Lower-cased words and punctuation marks; an unknown word is retried without its punctuation ("don't" ->
    "dont") before it becomes ``<unk>``."""

    kind: ClassVar[str] = "words"

    def __init__(self, vocabulary: Vocabulary | Sequence[str], lowercase: bool = True) -> None:
        super().__init__(vocabulary, lowercase)
        self._retry_cache: dict[str, int] = {}

    def split(self, text: str, max_length: int | None = None) -> list[str]:
        text = _canonical_text(text)
        if self.lowercase:
            text = text.lower()
        if max_length is None:
            return WORD_PATTERN.findall(text)
        return [match.group() for match in islice(WORD_PATTERN.finditer(text), max_length)]

    def lookup(self, token: str) -> int:
        index = self.vocab.index.get(token)
        if index is not None:
            return index
        cached = self._retry_cache.get(token)
        if cached is None:
            stripped = _strip_punctuation(token)
            cached = self.vocab.index.get(stripped, 0) if stripped else 0
            if len(self._retry_cache) < 1_000_000:
                self._retry_cache[token] = cached
        return cached


class TrigramTokenizer(_VocabularyTokenizer):
    """Character trigrams of ``" " + text + " "`` (whitespace runs collapsed, lower-cased): ``n`` characters give
    ``n`` trigrams, ``""`` none."""

    kind: ClassVar[str] = "trigrams"

    def split(self, text: str, max_length: int | None = None) -> list[str]:
        text = _WHITESPACE.sub(" ", _canonical_text(text)).strip()
        if self.lowercase:
            text = text.lower()
        padded = f" {text} "
        count = len(text) if max_length is None else min(len(text), max_length)
        return [padded[i : i + 3] for i in range(count)]

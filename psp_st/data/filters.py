"""Row filters for sentence pairs: a batched ``keep(batch) -> list[bool]`` predicate, and ``apply`` for a ``Dataset``
(an indices mapping on disk) or, lazily, an ``IterableDataset`` (``counter`` then counts rows as they stream by)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import regex

from psp_st.data.text_files import TEXT_COLUMNS

_WORD = regex.compile(r"\w+")  # Unicode words: combining marks (Devanagari vowel signs, NFD accents) included


@dataclass
class FilterCount:
    """Rows kept and dropped by one pipeline step (live counts for streaming datasets)."""

    name: str
    kept: int = 0
    dropped: int = 0
    params: dict[str, Any] = field(default_factory=dict)

    def update(self, mask: list[bool]) -> None:
        kept = sum(mask)
        self.kept += kept
        self.dropped += len(mask) - kept


def is_streaming(dataset: Any) -> bool:
    """True for a :class:`datasets.IterableDataset`."""
    from datasets import IterableDataset

    return isinstance(dataset, IterableDataset)


def require_columns(dataset: Any, names: tuple[str, ...], step: str) -> None:
    """Raise a ValueError naming the missing column(s) a step needs (no-op when the columns are unknown)."""
    available = dataset.column_names
    if available is None:
        return
    missing = [name for name in names if name not in available]
    if missing:
        raise ValueError(f"filter {step!r} needs column(s) {missing}; the dataset has {available}")


class PairFilter:
    """Base class: a batched keep-predicate over the columns in :attr:`input_columns`."""

    name: ClassVar[str] = "filter"
    input_columns: ClassVar[tuple[str, ...]] = TEXT_COLUMNS

    def keep(self, batch: dict[str, list]) -> list[bool]:
        raise NotImplementedError

    def columns(self) -> tuple[str, ...]:
        """The columns :meth:`keep` reads."""
        return self.input_columns

    def apply(self, dataset: Any, num_proc: int | None = None, counter: FilterCount | None = None) -> Any:
        """Filter ``dataset`` (``Dataset`` or ``IterableDataset``); ``counter`` is updated while streaming."""
        require_columns(dataset, self.columns(), self.name)
        if is_streaming(dataset):
            predicate = self.keep if counter is None else functools.partial(_counted_verdicts, self.keep, counter)
            return dataset.filter(predicate, batched=True)
        return dataset.filter(self.keep, batched=True, num_proc=num_proc, desc=f"filter: {self.name}")


def _counted_verdicts(keep: Callable[[dict[str, list]], list[bool]], counter: FilterCount, batch: dict) -> list[bool]:
    """``keep(batch)``, its verdicts added to ``counter``; module-level (with ``functools.partial``) so that a
    streamed dataset still pickles into DataLoader worker processes."""
    mask = keep(batch)
    counter.update(mask)
    return mask


def batch_pairs(batch: dict[str, list]) -> Iterator[tuple[str, str]]:
    """The ``(sentence1, sentence2)`` pairs of a batch."""
    return zip(batch["sentence1"], batch["sentence2"], strict=True)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (Unicode ``\\w+`` runs: punctuation and tokenisation differences are ignored)."""
    return _WORD.findall(text.lower())


def text_key(text: str) -> str:
    """The words of ``text`` joined by spaces: texts equal up to case and punctuation share a key (dedup, exclusion)."""
    return " ".join(words(text))


def trigram_overlap(text1: str, text2: str) -> float:
    """ParaNMT's trigram overlap (Wieting & Gimpel 2018): the shared word trigrams over those of the side with fewer
    (distinct lower-cased ``\\w+`` words; 0..1). A side of fewer than 3 words compares n-grams of its word count
    (the paper leaves it undefined), so short near-copies are not waved through; a side without words gives 0."""
    words1, words2 = words(text1), words(text2)
    n = min(3, len(words1), len(words2))
    if n == 0:
        return 0.0
    grams1 = set(zip(*(words1[i:] for i in range(n)), strict=False))
    grams2 = set(zip(*(words2[i:] for i in range(n)), strict=False))
    return len(grams1 & grams2) / min(len(grams1), len(grams2))


def mean_length(text1: str, text2: str) -> float:
    """Mean whitespace-token length of the two sides."""
    return (len(text1.split()) + len(text2.split())) / 2


@dataclass(frozen=True)
class TrigramOverlapFilter(PairFilter):
    """Keep pairs whose :func:`trigram_overlap` is at most ``max_overlap`` (drops near-copies, as ParaNMT does)."""

    max_overlap: float = 0.7
    name: ClassVar[str] = "trigram_overlap"

    def __post_init__(self) -> None:
        if not 0.0 <= self.max_overlap <= 1.0:
            raise ValueError(f"max_overlap must be in [0, 1], got {self.max_overlap}")

    def keep(self, batch: dict[str, list]) -> list[bool]:
        return [trigram_overlap(a, b) <= self.max_overlap for a, b in batch_pairs(batch)]


@dataclass(frozen=True)
class LengthFilter(PairFilter):
    """Keep pairs whose :func:`mean_length` (whitespace tokens) is within ``[min_length, max_length]``."""

    min_length: float = 0.0
    max_length: float = math.inf
    name: ClassVar[str] = "length"

    def __post_init__(self) -> None:
        if math.isnan(self.min_length) or math.isnan(self.max_length):  # every comparison False: nothing kept
            raise ValueError(f"min_length and max_length must be numbers, got {self.min_length}, {self.max_length}")
        if self.min_length > self.max_length:
            raise ValueError(f"min_length {self.min_length} > max_length {self.max_length}")

    def keep(self, batch: dict[str, list]) -> list[bool]:
        return [self.min_length <= mean_length(a, b) <= self.max_length for a, b in batch_pairs(batch)]


def length_ratio(text1: str, text2: str, scale: float = 1.0) -> float:
    """Longer side's character count (so scripts without spaces work too) over the shorter side's (stripped texts;
    ``inf`` when one side is empty); ``text1``'s is multiplied by ``scale`` (:func:`median_length_ratio`) first."""
    length1, length2 = scale * len(text1.strip()), len(text2.strip())
    shorter, longer = min(length1, length2), max(length1, length2)
    if shorter == 0:
        return math.inf if longer else 1.0
    return longer / shorter


@dataclass(frozen=True)
class LengthRatioFilter(PairFilter):
    """Keep pairs whose :func:`length_ratio` is at most ``max_ratio`` (drops pairs where one side is a fragment, as
    bitext mining does). For X-English bitext pass ``sentence1_scale``: unscaled, denser scripts fail the ratio."""

    max_ratio: float = 2.0
    sentence1_scale: float = 1.0
    name: ClassVar[str] = "length_ratio"

    def __post_init__(self) -> None:
        if not self.max_ratio >= 1.0:
            raise ValueError(f"max_ratio must be >= 1 (longer / shorter), got {self.max_ratio}")
        if not (math.isfinite(self.sentence1_scale) and self.sentence1_scale > 0):
            raise ValueError(f"sentence1_scale must be a finite number > 0, got {self.sentence1_scale}")

    def keep(self, batch: dict[str, list]) -> list[bool]:
        return [length_ratio(a, b, self.sentence1_scale) <= self.max_ratio for a, b in batch_pairs(batch)]


def median_length_ratio(sentence1: Iterable[str], sentence2: Iterable[str]) -> float:
    """Median over pairs of ``len(sentence2) / len(sentence1)`` in characters (pairs with an empty side skipped):
    the ``sentence1_scale`` of :class:`LengthRatioFilter` for one language's bitext."""
    ratios = [
        len(b.strip()) / len(a.strip()) for a, b in zip(sentence1, sentence2, strict=True) if a.strip() and b.strip()
    ]
    if not ratios:
        raise ValueError("median_length_ratio: no pair with two non-empty sides")
    return float(np.median(ratios))


@dataclass(frozen=True)
class ScoreRangeFilter(PairFilter):
    """Keep pairs whose paraphrase score is within ``[min_score, max_score]``; a missing or NaN score is dropped."""

    min_score: float = -math.inf
    max_score: float = math.inf
    name: ClassVar[str] = "score"
    input_columns: ClassVar[tuple[str, ...]] = ("score",)

    def __post_init__(self) -> None:
        if math.isnan(self.min_score) or math.isnan(self.max_score):  # every comparison False: nothing kept
            raise ValueError(f"min_score and max_score must be numbers, got {self.min_score}, {self.max_score}")
        if self.min_score > self.max_score:
            raise ValueError(f"min_score {self.min_score} > max_score {self.max_score}")

    def keep(self, batch: dict[str, list]) -> list[bool]:
        return [score is not None and self.min_score <= score <= self.max_score for score in batch["score"]]


@dataclass(frozen=True)
class ExcludeFilter(PairFilter):
    """Drop rows whose ``column`` holds one of ``values``, e.g. ``corpus == "flores200-devtest"`` (bitext rows of
    an evaluation set); a recipe source's ``exclude: {column: [values]}``."""

    column: str
    values: frozenset[str]
    name: ClassVar[str] = "exclude"

    def columns(self) -> tuple[str, ...]:
        return (self.column,)

    def keep(self, batch: dict[str, list]) -> list[bool]:
        return [value not in self.values for value in batch[self.column]]


@dataclass(frozen=True)
class IdenticalFilter(PairFilter):
    """Drop pairs whose sides are equal up to case and punctuation (equal :func:`text_key`), or have no word."""

    name: ClassVar[str] = "identical"

    def keep(self, batch: dict[str, list]) -> list[bool]:
        pairs = zip(map(text_key, batch["sentence1"]), map(text_key, batch["sentence2"]), strict=True)
        return [a != b and bool(a) and bool(b) for a, b in pairs]


@dataclass(frozen=True)
class ExcludeTextsFilter(PairFilter):
    """Drop pairs with a side whose :func:`text_key` is one of ``keys`` (e.g. evaluation sentences' keys)."""

    keys: frozenset[str]
    name: ClassVar[str] = "excluded"

    def keep(self, batch: dict[str, list]) -> list[bool]:
        return [text_key(a) not in self.keys and text_key(b) not in self.keys for a, b in batch_pairs(batch)]


def keep_by_mask(batch: dict[str, list], indices: list[int], keep: Any) -> list[bool]:
    """Batched ``filter(..., with_indices=True)`` predicate: keep the rows whose ``keep[index]`` is True."""
    return keep[np.asarray(indices, dtype=np.int64)].tolist()


def drop_rows(dataset: Any, keep: Any, desc: str, num_proc: int | None = None) -> Any:
    """A ``Dataset`` without the rows where the boolean array ``keep`` is False (``dataset`` itself if none)."""
    if keep.all():
        return dataset
    return dataset.filter(
        keep_by_mask, with_indices=True, batched=True, fn_kwargs={"keep": keep}, num_proc=num_proc, desc=desc
    )

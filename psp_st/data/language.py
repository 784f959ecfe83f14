"""Language-id filter with py3langid (a langid.py fork whose model ships in its PyPI wheel, no download)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, ClassVar

from psp_st.data.filters import PairFilter, batch_pairs
from psp_st.io.extras import require


@lru_cache(maxsize=8)
def language_identifier(normalized: bool, candidates: tuple[str, ...] | None = None) -> Any:
    """A cached py3langid identifier (one per process; loaded lazily so forked workers build their own)."""
    langid = require("py3langid.langid", "the language filter")
    identifier = langid.LanguageIdentifier.from_model_file(langid.MODEL_FILE, norm_probs=normalized)
    if candidates:
        identifier.set_languages(list(candidates))
    return identifier


def language_codes(value: str | Iterable[str] | None) -> frozenset[str] | None:
    """One code or several as a frozenset (None stays None: any language)."""
    if value is None:
        return None
    return frozenset([value] if isinstance(value, str) else value)


@dataclass(frozen=True)
class LanguageFilter(PairFilter):
    """Keep pairs whose sides are identified as the allowed languages of ``sentence1`` / ``sentence2`` (ISO 639-1
    codes, e.g. ``"en"``; None: any), with a normalised probability of at least ``min_confidence`` if given;
    ``candidates`` restricts the classifier to these languages (often more accurate on short text)."""

    sentence1: frozenset[str] | None = None
    sentence2: frozenset[str] | None = None
    min_confidence: float | None = None
    candidates: tuple[str, ...] | None = None
    name: ClassVar[str] = "language"

    def __post_init__(self) -> None:
        object.__setattr__(self, "sentence1", language_codes(self.sentence1))
        object.__setattr__(self, "sentence2", language_codes(self.sentence2))
        if self.candidates is not None:
            object.__setattr__(self, "candidates", tuple(sorted(language_codes(self.candidates) or ())))
        if self.sentence1 is None and self.sentence2 is None:
            raise ValueError("LanguageFilter needs the expected language of sentence1 and/or sentence2")
        if self.min_confidence is not None and not 0.0 <= self.min_confidence <= 1.0:
            raise ValueError(f"min_confidence must be in [0, 1], got {self.min_confidence}")
        identifier = language_identifier(self.min_confidence is not None, self.candidates)
        unknown = ((self.sentence1 or frozenset()) | (self.sentence2 or frozenset())) - set(identifier.labels)
        if unknown:
            raise ValueError(f"unknown language code(s) {sorted(unknown)} for py3langid")

    def _matches(self, text: str, allowed: frozenset[str] | None, identifier: Any) -> bool:
        if allowed is None:
            return True
        language, confidence = identifier.classify(text)
        return language in allowed and (self.min_confidence is None or confidence >= self.min_confidence)

    def keep(self, batch: dict[str, list]) -> list[bool]:
        identifier = language_identifier(self.min_confidence is not None, self.candidates)
        return [
            self._matches(a, self.sentence1, identifier) and self._matches(b, self.sentence2, identifier)
            for a, b in batch_pairs(batch)
        ]

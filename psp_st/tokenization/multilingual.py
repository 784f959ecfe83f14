"""One shared sentencepiece vocabulary over several languages, trained on a temperature-balanced sample.

P-SP's bilingual models share one vocabulary between English and the other language (paper 002, section 5.1).
Over many languages the raw text is very unbalanced (the shared bitext has 72k German pairs and 2k Arabic
ones), so the training text is drawn per language with temperature sampling (XLM, Conneau & Lample 2019):
language ``l`` with ``n_l`` sentences gets the share ``n_l^T / sum_k n_k^T`` of the sample; ``T = 1`` keeps the
raw proportions, ``T -> 0`` makes them uniform. A language asked for more sentences than it has repeats them
(whole copies plus a seeded sample of the rest), which is how sentencepiece sees a heavier weight.

The character coverage stays at :data:`~psp_st.tokenization.sentencepiece.DEFAULT_CHARACTER_COVERAGE` (1.0):
every character of the sample gets a piece, so Chinese and Arabic characters are never unknown (sentencepiece's
usual 0.9995 for CJK drops the rarest Han characters; an unknown piece is dropped from the sentence by P-SP).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from psp_st.arguments import check_int, check_number
from psp_st.tokenization.sentencepiece import DEFAULT_CHARACTER_COVERAGE, SentencePieceTokenizer


def temperature_shares(counts: Mapping[str, int], temperature: float) -> dict[str, float]:
    """Each language's share ``n_l^T / sum_k n_k^T`` (sums to 1; a language with no sentence gets 0).

    Args:
        counts: sentences (or pairs) per language.
        temperature: ``T`` in ``(0, 1]``: 1 keeps the raw proportions, smaller values flatten them.
    """
    temperature = check_number("temperature", temperature, 0.0, 1.0, why="1 = raw proportions, towards 0 = uniform")
    if temperature == 0.0:
        raise ValueError("temperature must be > 0 (a small value such as 0.01 is nearly uniform)")
    for lang, count in counts.items():
        check_int(f"count of {lang!r}", count, minimum=0)
    weights = {lang: float(count) ** temperature if count else 0.0 for lang, count in counts.items()}
    total = sum(weights.values())
    if total == 0:
        raise ValueError(f"temperature_shares: every language has 0 sentences ({dict(counts)})")
    return {lang: weight / total for lang, weight in weights.items()}


def temperature_sample(
    texts_by_language: Mapping[str, Sequence[str]],
    temperature: float,
    total: int | None = None,
    seed: int = 0,
) -> dict[str, list[str]]:
    """``round(total * share)`` texts per language (:func:`temperature_shares`), deterministic in ``seed``.

    ``total`` defaults to the number of texts given. A language asked for more texts than it has repeats all of
    them ``k`` times and adds a seeded sample of the remainder; one asked for fewer gets a seeded subset, in order.
    """
    counts = {lang: len(texts) for lang, texts in texts_by_language.items()}
    shares = temperature_shares(counts, temperature)
    total = check_int("total", sum(counts.values()) if total is None else total)
    rng = np.random.default_rng(seed)
    sample: dict[str, list[str]] = {}
    for lang, texts in texts_by_language.items():
        n, wanted = len(texts), int(round(total * shares[lang]))
        if n == 0 or wanted == 0:
            sample[lang] = []
            continue
        whole, rest = divmod(wanted, n)
        rows = np.concatenate([np.tile(np.arange(n), whole), np.sort(rng.choice(n, size=rest, replace=False))])
        sample[lang] = [texts[int(row)] for row in rows]
    return sample


def language_balanced_texts(
    first: Sequence[str],
    languages: Sequence[str | None],
    second: Sequence[str],
    temperature: float,
    pivot: str = "en",
    seed: int = 42,
) -> list[str]:
    """The training text of a shared vocabulary for X-``pivot`` pairs: :func:`temperature_sample` over languages.

    ``first[i]`` is in ``languages[i]`` (``None``: the pivot, e.g. an English paraphrase pair mixed into
    X-English bitext) and every ``second[i]`` is in the pivot language. Each language's texts are de-duplicated
    first (a source repeated by a recipe weight counts once), so the balance comes from ``temperature`` only.
    """
    if not (len(first) == len(languages) == len(second)):
        raise ValueError(
            f"first, languages and second must have one entry per pair, got {len(first)}, {len(languages)}, "
            f"{len(second)}"
        )
    by_language: dict[str, dict[str, None]] = {}
    for text, lang in zip(first, languages, strict=True):
        by_language.setdefault(lang or pivot, {})[text] = None
    pivot_texts = by_language.setdefault(pivot, {})
    for text in second:
        pivot_texts[text] = None
    sample = temperature_sample({lang: list(texts) for lang, texts in by_language.items()}, temperature, seed=seed)
    return [text for part in sample.values() for text in part]


def train_multilingual_tokenizer(
    texts_by_language: Mapping[str, Sequence[str]],
    vocab_size: int = 32_000,
    temperature: float = 0.5,
    total: int | None = None,
    character_coverage: float = DEFAULT_CHARACTER_COVERAGE,
    seed: int = 42,
    **options: Any,
) -> SentencePieceTokenizer:
    """A sentencepiece unigram model shared by all languages, trained on :func:`temperature_sample`'s texts.

    Args:
        texts_by_language: ``{language: sentences}`` (e.g. the foreign sides of the bitext per language and
            English from the English sides and paraphrase pairs).
        vocab_size: pieces of the shared vocabulary (a soft limit, see :meth:`SentencePieceTokenizer.train`).
        temperature: language balancing of the training text (1 = raw proportions).
        total: sentences in the training sample (default: as many as given).
        character_coverage: 1.0 keeps every character (Chinese, Arabic); see the module docstring.
        seed: seeds the sample and sentencepiece.
        options: further :meth:`SentencePieceTokenizer.train` options (``lowercase``, ``input_sentence_size``...).
    """
    sample = temperature_sample(texts_by_language, temperature, total=total, seed=seed)
    texts = [text for part in sample.values() for text in part]
    return SentencePieceTokenizer.train(
        texts, vocab_size=vocab_size, character_coverage=character_coverage, seed=seed, **options
    )


def language_piece_stats(
    tokenizer: SentencePieceTokenizer, texts_by_language: Mapping[str, Sequence[str]]
) -> dict[str, dict[str, float]]:
    """Per language: pieces per sentence, characters per piece and the share of sentences with an unknown piece
    (how well the shared vocabulary serves each language; a language squeezed out gets short pieces)."""
    stats = {}
    for lang, texts in texts_by_language.items():
        texts = list(texts)
        if not texts:
            continue
        ids = tokenizer.encode(texts)
        pieces = sum(map(len, ids))
        characters = sum(len(text) for text in texts)
        stats[lang] = {
            "sentences": float(len(texts)),
            "pieces_per_sentence": pieces / len(texts),
            "characters_per_piece": characters / max(pieces, 1),
            "unknown_rate": sum(tokenizer.unk_id in row for row in ids) / len(texts),
        }
    return stats

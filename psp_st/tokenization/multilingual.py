"""The training text of a shared multilingual vocabulary: a temperature-balanced sample (XLM, Conneau & Lample 2019)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from psp_st.arguments import check_int, check_number


def temperature_shares(counts: Mapping[str, int], temperature: float) -> dict[str, float]:
    """Each language's share ``n_l^T / sum_k n_k^T`` of ``counts`` (sentences per language); ``T`` in ``(0, 1]``:
    1 keeps the raw proportions, towards 0 uniform."""
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
    """``round(total * share)`` texts per language (:func:`temperature_shares`; ``total``: all texts by default):
    all of them repeated plus a seeded sample of the remainder, or a seeded subset, in order."""
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
    """:func:`temperature_sample` of X-``pivot`` pairs' texts: ``first[i]`` is in ``languages[i]`` (``None``: the
    pivot), ``second[i]`` in the pivot; de-duplicated first (a source repeated by a recipe weight counts once)."""
    if not (len(first) == len(languages) == len(second)):
        raise ValueError(
            f"first, languages and second must have one entry per pair, got {len(first)}, {len(languages)}, "
            f"{len(second)}"
        )
    by_language: dict[str, dict[str, None]] = {}
    for text, lang in zip(first, languages, strict=True):
        by_language.setdefault(lang or pivot, {})[text] = None
    by_language.setdefault(pivot, {}).update(dict.fromkeys(second))
    sample = temperature_sample({lang: list(texts) for lang, texts in by_language.items()}, temperature, seed=seed)
    return [text for part in sample.values() for text in part]

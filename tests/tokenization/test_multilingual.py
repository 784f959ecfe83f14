"""The shared multilingual sentencepiece vocabulary: temperature balancing and CJK/Arabic coverage."""

from __future__ import annotations

import random

import pytest

from psp_st.tokenization.multilingual import language_balanced_texts, temperature_sample, temperature_shares
from psp_st.tokenization.sentencepiece import SentencePieceTokenizer


def synthetic(first: int, last: int, n: int, seed: int, word=(1, 1), words=(6, 12), sep: str = "") -> list[str]:
    """``n`` sentences of random characters from the Unicode block ``first..last`` (Han, Arabic...)."""
    rng = random.Random(seed)
    alphabet = [chr(code) for code in range(first, last + 1)]
    return [
        sep.join("".join(rng.choice(alphabet) for _ in range(rng.randint(*word))) for _ in range(rng.randint(*words)))
        for _ in range(n)
    ]


@pytest.fixture(scope="module")
def languages(caption_sentences):
    return {
        "en": caption_sentences[:8000],
        "zh": synthetic(0x4E00, 0x4E00 + 299, 200, seed=1),  # 300 Han characters, ~8 uses each
        "ar": synthetic(0x0621, 0x064A, 200, seed=2, word=(3, 6), sep=" "),
    }


def test_shares_follow_counts_to_the_power_t():
    shares = temperature_shares({"de": 900, "ar": 100}, 0.5)
    assert shares["de"] == pytest.approx(30 / 40) and shares["ar"] == pytest.approx(10 / 40)
    assert temperature_shares({"de": 900, "ar": 100}, 1.0)["ar"] == pytest.approx(0.1)
    assert temperature_shares({"de": 900, "ar": 0}, 0.3)["ar"] == 0.0


def test_shares_reject_bad_temperatures_and_empty_counts():
    with pytest.raises(ValueError, match="temperature must be > 0"):
        temperature_shares({"de": 1}, 0.0)
    with pytest.raises(ValueError, match=r"temperature must be in \[0.0, 1.0\]"):
        temperature_shares({"de": 1}, 1.5)
    with pytest.raises(ValueError, match="every language has 0 sentences"):
        temperature_shares({"de": 0}, 0.5)


def test_sample_repeats_small_languages_and_subsamples_large_ones():
    texts = {"de": [f"de {i}" for i in range(900)], "ar": [f"ar {i}" for i in range(100)]}
    sample = temperature_sample(texts, 0.5, total=1000, seed=3)
    assert len(sample["de"]) == 750 and len(set(sample["de"])) == 750
    assert len(sample["ar"]) == 250 and set(sample["ar"]) == set(texts["ar"])  # every one twice, 50 three times
    assert sample == temperature_sample(texts, 0.5, total=1000, seed=3)


def shared_tokenizer(languages, temperature, **options):
    sample = temperature_sample(languages, temperature, seed=0)
    return SentencePieceTokenizer.train([t for part in sample.values() for t in part], vocab_size=2000, **options)


def test_shared_vocabulary_keeps_chinese_and_arabic_characters(languages):
    tokenizer = shared_tokenizer(languages, temperature=0.5, seed=0)
    assert tokenizer.unknown_rate(languages["zh"]) == 0.0 and tokenizer.unknown_rate(languages["ar"]) == 0.0
    pieces = {tokenizer.id_to_piece(i) for i in range(tokenizer.vocab_size)}
    han = {char for text in languages["zh"] for char in text}  # every Han character of the texts has a piece
    assert len(han) > 250 and han <= {char for piece in pieces for char in piece}
    assert any(any("\u0621" <= char <= "\u064a" for char in piece) for piece in pieces)


def test_coverage_below_one_on_raw_proportions_loses_han_characters(languages):
    # why the module keeps coverage 1.0: sentencepiece's usual coverage drops characters of the small languages
    tokenizer = shared_tokenizer(languages, temperature=1.0, character_coverage=0.995)
    assert tokenizer.unknown_rate(languages["zh"]) > 0.5


def test_language_balanced_texts_dedups_each_language_then_samples_by_temperature():
    # pairs as a recipe loads them: German repeated by a weight, English paraphrase pairs with no language
    first = ["de a", "de b", "de a", "de b", "ar a", "en p"]
    languages = ["de", "de", "de", "de", "ar", None]
    second = ["en a", "en b", "en a", "en b", "en c", "en q"]
    texts = language_balanced_texts(first, languages, second, temperature=0.5, seed=0)
    # distinct texts: de 2, ar 1, en 5 (4 English sides + the paraphrase pair's first side); T = 0.5 -> sqrt shares
    weights = {"de": 2**0.5, "ar": 1.0, "en": 5**0.5}
    expected = {lang: round(8 * w / sum(weights.values())) for lang, w in weights.items()}
    found = {lang: sum(text.startswith(lang) for text in texts) for lang in weights}
    assert found == expected
    with pytest.raises(ValueError, match="one entry per pair"):
        language_balanced_texts(first, languages[:-1], second, temperature=0.5)

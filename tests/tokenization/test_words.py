"""Word and character-trigram tokenizers: splitting, vocabulary limits, unknown handling, saving."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from psp_st.tokenization.words import TrigramTokenizer, Vocabulary, WordTokenizer


def test_words_are_lowercased_and_punctuation_split():
    tokenizer = WordTokenizer(["<unk>"])
    assert tokenizer.tokenize(["A Dog, running! Don't stop well-known U.S."]) == [
        ["a", "dog", ",", "running", "!", "don't", "stop", "well-known", "u.s", "."]
    ]


def test_unknown_word_is_retried_without_punctuation_then_unk():
    tokenizer = WordTokenizer(["<unk>", "dont", "dog"])
    assert tokenizer.encode(["don't dog cat"]) == [[1, 2, 0]]


def test_vocabulary_min_count_and_max_size():
    texts = ["a a a b b c", "a b d"]
    assert WordTokenizer.train(texts, min_count=2).vocab.tokens == ["<unk>", "a", "b"]
    assert WordTokenizer.train(texts, max_size=3).vocab.tokens == ["<unk>", "a", "b"]
    assert WordTokenizer.train(texts).vocab_size == 5


def test_vocabulary_validation():
    with pytest.raises(ValueError, match="<unk>"):
        Vocabulary(["a"])
    with pytest.raises(ValueError, match="duplicate"):
        Vocabulary(["<unk>", "a", "a"])
    with pytest.raises(ValueError, match="min_count"):
        Vocabulary.from_counts(Counter({"a": 1}), min_count=5)


def test_training_rejects_non_strings():
    with pytest.raises(TypeError, match="#1"):
        WordTokenizer.train(["fine", None])


def test_trigrams_pad_both_ends_and_collapse_whitespace():
    tokenizer = TrigramTokenizer(["<unk>"])
    assert tokenizer.tokenize(["A  cat"]) == [[" a ", "a c", " ca", "cat", "at "]]
    assert tokenizer.tokenize(["", "  "]) == [[], []]


def test_max_length_stops_tokenizing_early():
    words, trigrams = WordTokenizer(["<unk>"]), TrigramTokenizer(["<unk>"])
    text = "a dog runs " * 100_000
    assert len(words.encode([text], max_length=7)[0]) == 7
    assert len(trigrams.encode([text], max_length=7)[0]) == 7


def test_combining_marks_stay_inside_words():
    tokenizer = WordTokenizer(["<unk>"])
    assert tokenizer.tokenize(["İstanbul cafe\u0301 हिन्दी"]) == [["i\u0307stanbul", "café", "हिन्दी"]]  # NFC: K10-2


@pytest.mark.parametrize("cls", [WordTokenizer, TrigramTokenizer])
def test_decomposed_accents_give_the_tokens_of_the_composed_text(cls):
    """K10-2: NFD 'café' (macOS, some scrapers) was another word and other trigrams than NFC 'café'."""
    tokenizer = cls(["<unk>"])
    assert tokenizer.tokenize(["a cafe\u0301 with a nai\u0308ve man"]) == tokenizer.tokenize(
        ["a café with a naïve man"]
    )


@pytest.mark.parametrize("cls", [WordTokenizer, TrigramTokenizer])
def test_invisible_format_characters_give_no_tokens(cls):
    """K10-2: a BOM, zero-width space or direction mark was a token of its own (an <unk> in a word model's mean)."""
    tokenizer = cls(["<unk>"])
    assert tokenizer.tokenize(["\ufeffa dog\u200b runs\u200e", "infor\xadmation"]) == tokenizer.tokenize(
        ["a dog runs", "information"]
    )


def test_trigram_max_length_keeps_the_first_trigrams_after_long_whitespace():
    tokenizer = TrigramTokenizer(["<unk>"])
    for text in ["hello" + "\t" * 400 + "world", " " * 500 + "hello world"]:
        assert tokenizer.tokenize([text], max_length=128) == tokenizer.tokenize([text])


def test_encode_flat_layout(caption_sentences):
    tokenizer = WordTokenizer.train(caption_sentences[:500])
    flat, lengths = tokenizer.encode_flat(["a dog", "", "two dogs run"])
    assert lengths.tolist() == [2, 0, 3] and len(flat) == 5


@pytest.mark.parametrize("cls", [WordTokenizer, TrigramTokenizer])
def test_save_load_round_trip(cls, caption_sentences, tmp_path):
    tokenizer = cls.train(caption_sentences[:500], min_count=2, lowercase=False)
    tokenizer.save(tmp_path)
    loaded = cls.load(tmp_path)
    assert loaded.vocab.tokens == tokenizer.vocab.tokens and loaded.lowercase is False
    texts = caption_sentences[500:600]
    assert loaded.encode(texts) == tokenizer.encode(texts)


def test_load_rejects_wrong_kind_and_bad_json(caption_sentences, tmp_path):
    WordTokenizer.train(caption_sentences[:100]).save(tmp_path)
    with pytest.raises(ValueError, match="trigrams"):
        TrigramTokenizer.load(tmp_path)
    (tmp_path / "vocab.json").write_text("{oops")
    with pytest.raises(ValueError, match="not valid JSON"):
        WordTokenizer.load(tmp_path)
    (tmp_path / "vocab.json").write_text(json.dumps({"kind": "words", "format_version": 1}))
    with pytest.raises(ValueError, match="malformed"):
        WordTokenizer.load(tmp_path)
    with pytest.raises(FileNotFoundError):
        WordTokenizer.load(tmp_path / "nowhere")


def test_load_rejects_a_non_boolean_lowercase(tmp_path):
    (tmp_path / "vocab.json").write_text(json.dumps({"kind": "words", "lowercase": "false", "tokens": ["<unk>"]}))
    with pytest.raises(ValueError, match="vocab.json: lowercase must be true or false, got 'false'"):
        WordTokenizer.load(tmp_path)


def test_get_vocab_maps_each_token_to_its_id_as_st_merge_compares_it():
    """S10-1: ``SentenceTransformer.merge`` refuses zoo models only when their tokenizers have ``get_vocab``."""
    assert WordTokenizer(["<unk>", "dog", "runs"]).get_vocab() == {"<unk>": 0, "dog": 1, "runs": 2}


def test_vocabulary_ids_do_not_depend_on_the_order_of_the_texts():
    """Tokens seen equally often are ordered by their text, so shuffled training texts give the same ids."""
    texts = ["b a", "c d"]
    assert WordTokenizer.train(texts).vocab.tokens == WordTokenizer.train(texts[::-1]).vocab.tokens

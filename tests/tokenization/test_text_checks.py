from __future__ import annotations

import pytest

from psp_st.tokenization import check_texts


def test_single_string_is_a_list_of_one():
    assert check_texts("hello") == ["hello"]


def test_non_string_names_its_index():
    with pytest.raises(TypeError, match=r"texts\[2\] is int"):
        check_texts(["a", "b", 7])


def test_bytes_are_rejected_with_a_hint():
    with pytest.raises(TypeError, match="decode"):
        check_texts(b"raw")


@pytest.mark.parametrize("texts", [{"a dog", "a cat"}, {"a dog": 1}], ids=["set", "dict"])
def test_unordered_or_keyed_collections_are_rejected(texts):
    with pytest.raises(TypeError, match="sequence of strings, got (set|dict): pass a list"):
        check_texts(texts)


def test_empty_and_whitespace_strings_are_valid():
    assert check_texts(["", "  "]) == ["", "  "]


@pytest.mark.parametrize("kind", ["words", "trigrams", "sentencepiece"])
def test_a_lone_surrogate_in_training_texts_is_named_before_training(kind):  # Z8-7
    from psp_st.tokenization.store import train_tokenizer_of_kind

    texts = ["a dog runs", "a cat sleeps", "a \ud800 bird"] * 10  # was: a crash at save (or sentencepiece's own)
    with pytest.raises(ValueError, match=r"training text #2 has an unpaired surrogate '\\ud800' at character 2"):
        train_tokenizer_of_kind(kind, texts, max_size=50)

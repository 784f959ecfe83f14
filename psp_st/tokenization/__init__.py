"""Tokenizers shared by the encoders: sentencepiece (P-SP), words and character trigrams, Morfessor morphs."""

from __future__ import annotations

from psp_st.tokenization.morfessor import MorfessorSegmenter, MorfessorTokenizer
from psp_st.tokenization.sentencepiece import SentencePieceTokenizer
from psp_st.tokenization.store import load_tokenizer, save_tokenizer, train_tokenizer_of_kind
from psp_st.tokenization.text_checks import check_texts
from psp_st.tokenization.words import TrigramTokenizer, Vocabulary, WordTokenizer

__all__ = [
    "MorfessorSegmenter",
    "MorfessorTokenizer",
    "SentencePieceTokenizer",
    "TrigramTokenizer",
    "Vocabulary",
    "WordTokenizer",
    "check_texts",
    "load_tokenizer",
    "save_tokenizer",
    "train_tokenizer_of_kind",
]

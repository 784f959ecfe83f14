"""Tokenizers shared by the encoders: sentencepiece (P-SP), words and character trigrams, Morfessor morphs."""

from __future__ import annotations

from psp_st.tokenization.sentencepiece import SentencePieceTokenizer, train_tokenizer
from psp_st.tokenization.text_checks import check_texts

__all__ = ["SentencePieceTokenizer", "check_texts", "train_tokenizer"]

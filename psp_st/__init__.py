"""psp-st: paraphrastic sentence embeddings (P-SP and friends) for Sentence-Transformers."""

from __future__ import annotations

__version__ = "0.1.0"

from psp_st.hub.load import load
from psp_st.modules import PSPEmbedding
from psp_st.tokenization import SentencePieceTokenizer, train_tokenizer

__all__ = ["PSPEmbedding", "load", "SentencePieceTokenizer", "__version__", "train_tokenizer"]

"""psp-st: paraphrastic sentence embeddings (P-SP and friends) for Sentence-Transformers."""

from __future__ import annotations

__version__ = "0.1.0"

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the lazy names are, for type checkers and IDEs (nothing is imported at run time)
    from psp_st.inference.load import load
    from psp_st.modules.psp import PSPEmbedding
    from psp_st.tokenization.sentencepiece import SentencePieceTokenizer

__all__ = ["PSPEmbedding", "load", "SentencePieceTokenizer", "__version__"]

#: Imported on first use, so that the torch-free parts (psp_st.inference.engine) import without torch.
_LAZY = {
    "load": "psp_st.inference.load",
    "PSPEmbedding": "psp_st.modules.psp",
    "SentencePieceTokenizer": "psp_st.tokenization.sentencepiece",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'psp_st' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})

"""Encoders as Sentence-Transformers modules. Class paths here are stored in saved models: never move them."""

from __future__ import annotations

import importlib
from typing import Any

from psp_st.modules.folder_format import ModelFolderError

#: Imported on first use (they need torch), so that torch-free code can import psp_st.modules.folder_format.
_LAZY = {
    "TokenAveraging": "averaging",
    "TrigramAveraging": "averaging",
    "WordAveraging": "averaging",
    "CombinedEncoder": "combine",
    "PSPEmbedding": "psp",
    "GRAN": "recurrent",
    "LSTMAveraging": "recurrent",
    "TokenEncoder": "token_encoder",
}
__all__ = ["ModelFolderError", *_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(f"psp_st.modules.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'psp_st.modules' has no attribute {name!r}")

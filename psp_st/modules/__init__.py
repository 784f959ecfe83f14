"""Encoders as Sentence-Transformers modules. Class paths here are stored in saved models: never move them."""

from __future__ import annotations

from psp_st.modules.averaging import TokenAveraging, TrigramAveraging, WordAveraging
from psp_st.modules.base import ModelFolderError
from psp_st.modules.combine import CombinedEncoder
from psp_st.modules.psp import PSPEmbedding
from psp_st.modules.recurrent import GRAN, LSTMAveraging
from psp_st.modules.token_encoder import TokenEncoder

__all__ = [
    "GRAN",
    "CombinedEncoder",
    "LSTMAveraging",
    "ModelFolderError",
    "PSPEmbedding",
    "TokenAveraging",
    "TokenEncoder",
    "TrigramAveraging",
    "WordAveraging",
]

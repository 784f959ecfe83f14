"""Encoders as Sentence-Transformers modules. Class paths here are stored in saved models: never move them."""

from __future__ import annotations

from psp_st.modules.base import ModelFolderError
from psp_st.modules.psp import PSPEmbedding

__all__ = ["ModelFolderError", "PSPEmbedding"]

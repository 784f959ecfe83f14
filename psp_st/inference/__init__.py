"""Inference over lists and files: the fast P-SP path when the model has one, ``encode`` otherwise."""

from __future__ import annotations

from psp_st.inference.encode import encode_texts
from psp_st.inference.files import embed_file, score_file

__all__ = ["embed_file", "encode_texts", "score_file"]

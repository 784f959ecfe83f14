"""Inference over lists and files: psp-st's P-SP engine (torch-free) for P-SP models, ``encode`` otherwise."""

from __future__ import annotations

from psp_st.inference.encode import encode_texts
from psp_st.inference.engine import PSPEngine, load_engine
from psp_st.inference.files import embed_file, score_file

__all__ = ["PSPEngine", "embed_file", "encode_texts", "load_engine", "score_file"]

"""Teacher distillation for static models: cached teacher vectors, the sentence sample, piece-vector init."""

from __future__ import annotations

from psp_st.distillation.sentences import distillation_sentences, parse_source
from psp_st.distillation.teacher_cache import cache_folder, teacher_vectors

__all__ = ["cache_folder", "distillation_sentences", "parse_source", "teacher_vectors"]

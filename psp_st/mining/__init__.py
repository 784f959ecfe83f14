"""Mining training pairs from unlabelled text with a teacher sentence encoder."""

from __future__ import annotations

from psp_st.mining.teacher import TeacherMiner, load_teacher, read_sentences, trigram_overlap

__all__ = ["TeacherMiner", "load_teacher", "read_sentences", "trigram_overlap"]

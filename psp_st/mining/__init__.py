"""Mining training pairs from unlabelled text (``psp-st mine``); the modules: docs/architecture.md."""

from __future__ import annotations

from psp_st.mining.teacher import load_teacher

__all__ = ["load_teacher"]

"""Building releases, model cards, and publishing to the Hugging Face Hub."""

from __future__ import annotations

from psp_st.hub.build import build
from psp_st.hub.card import render_model_card, write_model_cards
from psp_st.hub.push import push, stage_upload
from psp_st.io.model_names import resolve_model_name

__all__ = ["build", "push", "render_model_card", "resolve_model_name", "stage_upload", "write_model_cards"]

"""Loading by short name, model cards, and publishing to the Hugging Face Hub."""

from __future__ import annotations

from psp_st.hub.load import load, resolve_model_name

__all__ = ["load", "resolve_model_name"]

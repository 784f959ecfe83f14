"""The evaluation sentences mining and distillation leave out (decontamination)."""

from __future__ import annotations

import os
from pathlib import Path


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

"""The evaluation sentences that mining and distillation leave out (decontamination)."""

from __future__ import annotations

import os
from pathlib import Path

from psp_st.evaluation.loaders import flores_languages, load_flores

#: The evaluation files of the English suite (glob patterns under the data folder): what psp-en's distillation
#: sample leaves out. Kept as it was when the released recipes were tuned, so a rebuild draws the same sample.
ENGLISH_EVALUATION_FILES = (
    "sts/**/*.parquet",
    "pair_classification/msrpc/*.parquet",
    "pair_classification/pawsx/en_*.parquet",
)
#: Every evaluation file of the data folder, in every language: STS, SICK, STS17, MSRPC, PAWS-X, Turku and Tatoeba
#: (the FLORES-200 devtest rows of ``bitext/`` are added by :func:`evaluation_sentences`).
EVALUATION_FILES = ("sts/**/*.parquet", "pair_classification/**/*.parquet", "bitext_mining/**/*.parquet")
#: The text columns of the evaluation files: pair files have ``sentence1/2``, bitext files (``bitext_mining/``,
#: FLORES) ``source/target`` (a pair file's ``source`` column, as Turku's, is no text).
PAIR_TEXT_COLUMNS = ("sentence1", "sentence2")
BITEXT_TEXT_COLUMNS = ("source", "target")


def evaluation_sentences(data_dir: str | os.PathLike, every_language: bool = False) -> set[str]:
    """Every sentence of the data folder's evaluation files, for decontamination.

    ``every_language`` False: the English suite's files (:data:`ENGLISH_EVALUATION_FILES`, what psp-en's recipe
    excludes); True: every evaluation file (:data:`EVALUATION_FILES`) and the FLORES-200 devtest rows of
    ``bitext/*-en.parquet``, what ``psp-st mine --exclude-data-dir`` excludes (mined bitext must not hold the
    cross-lingual dev and test sentences). A folder with no evaluation file gives the empty set (a recipe's own data
    folder may hold none); ``psp-st mine`` refuses that for ``--exclude-data-dir``.
    """
    from psp_st.data.loaders import load_table

    data_dir = Path(data_dir)
    patterns = EVALUATION_FILES if every_language else ENGLISH_EVALUATION_FILES
    files = sorted({path for pattern in patterns for path in data_dir.glob(pattern)})
    flores = flores_languages(data_dir) if every_language and (data_dir / "bitext").is_dir() else []
    tables = [
        (
            load_table(path, []),
            BITEXT_TEXT_COLUMNS if path.relative_to(data_dir).parts[0] == "bitext_mining" else PAIR_TEXT_COLUMNS,
        )
        for path in files
    ]
    tables += [(load_flores(lang, data_dir), BITEXT_TEXT_COLUMNS) for lang in flores]
    found: set[str] = set()
    for table, columns in tables:  # a Dataset's column, not its .data: load_flores selects rows through an index
        for column in columns:
            if column in table.column_names:
                found.update(text for text in table[column] if isinstance(text, str))
    return found

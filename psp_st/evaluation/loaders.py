"""Evaluation datasets as HF ``datasets.Dataset`` from the shared data folder, their columns checked (errors name
the file, the column or the row); the official Hub copies run through MTEB (``get_tasks(offline=False)``)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from psp_st.data.loaders import load_table
from psp_st.io.data_dir import data_folder

#: The languages of the PAWS-X files (dev and test for each).
PAWSX_LANGS = ("de", "en", "es", "fr", "ja", "ko", "zh")

#: Local files of the shared data folder, by dataset key.
LOCAL_FILES: dict[str, str] = {
    **{f"stsb-{split}": f"sts/stsbenchmark/{split}.parquet" for split in ("train", "dev", "test")},
    **{f"sick-{split}": f"sts/sick/{split}.parquet" for split in ("train", "dev", "test")},
    "sts17-en-en": "sts/sts2017/en-en.parquet",
    **{f"msrpc-{split}": f"pair_classification/msrpc/{split}.parquet" for split in ("train", "test")},
    "turku-release1-dev": "pair_classification/turku/fi_release1_dev.parquet",
    "turku-opus-parsebank-dev": "pair_classification/turku/fi_opus_parsebank_dev.parquet",
    **{
        f"pawsx-{lang}-{split}": f"pair_classification/pawsx/{lang}_{split}.parquet"
        for lang in PAWSX_LANGS
        for split in ("dev", "test")
    },
    **{f"tatoeba-{lang}": f"bitext_mining/tatoeba/{lang}-eng.parquet" for lang in ("deu", "fra")},
}

#: The ``corpus`` of the FLORES-200 devtest rows of ``bitext/<lang>-en.parquet``: the cross-lingual dev set (the
#: recipes drop these rows, the ``xling`` suite evaluates on them).
FLORES_CORPUS = "flores200-devtest"
#: The languages of the X-English bitext files (``bitext/<lang>-en.parquet``), ISO 639-1.
BITEXT_LANGS = ("ar", "cs", "de", "es", "fi", "fr", "ru", "sv", "tr", "zh")

#: Columns every dataset kind must have.
STS_COLUMNS = ("sentence1", "sentence2", "score")
PAIR_COLUMNS = ("sentence1", "sentence2", "label")
BITEXT_COLUMNS = ("source", "target")


def check_columns(dataset: Any, columns: Sequence[str], source: str, text_columns: Sequence[str] = ()) -> None:
    """Raise ``ValueError`` naming ``source`` if a column is missing, there are no rows or a text cell is no string
    (``dataset``: a ``datasets.Dataset``, a pandas ``DataFrame`` or a dict of columns)."""
    if hasattr(dataset, "column_names"):  # a datasets.Dataset
        names = list(dataset.column_names)
    elif hasattr(dataset, "columns"):  # a DataFrame
        names = list(dataset.columns)
    else:  # a mapping of columns
        names = list(dataset)
    missing = [column for column in columns if column not in names]
    if missing:
        raise ValueError(f"{source}: missing column(s) {missing}; it has {names}")
    if len(dataset[columns[0]]) == 0:
        raise ValueError(f"{source}: no rows")
    for column in text_columns:
        for row, value in enumerate(dataset[column][:]):  # [:]: a datasets Column in one Arrow read
            if not isinstance(value, str):
                missing_value = value is None or isinstance(value, float) and value != value
                shown = "null (missing)" if missing_value else repr(value)
                raise ValueError(f"{source}: column {column!r} row {row} is {shown}, expected a string")


def local_path(key: str, data_dir: str | os.PathLike | None = None) -> Path:
    """Path of the local file of dataset ``key`` (see :data:`LOCAL_FILES`); FileNotFoundError when it is absent."""
    if key not in LOCAL_FILES:
        raise ValueError(f"unknown dataset {key!r}; known: {sorted(LOCAL_FILES)}")
    folder = data_folder(data_dir)
    if not (folder / LOCAL_FILES[key]).is_file():
        raise FileNotFoundError(
            f"the data folder {folder} has no {LOCAL_FILES[key]}: point --data-dir (or data_dir=) at the shared data folder"
        )
    return folder / LOCAL_FILES[key]


def load_local(key: str, data_dir: str | os.PathLike | None = None) -> Any:
    """Load local dataset ``key`` with the columns its kind needs checked."""
    columns: tuple[str, ...]
    if key.startswith(("stsb", "sick", "sts17")):
        columns = STS_COLUMNS
    elif key.startswith("tatoeba"):
        columns = BITEXT_COLUMNS
    else:
        columns = PAIR_COLUMNS
    text_columns, numeric_columns = columns[:2], columns[2:]
    if key.startswith("turku"):
        columns = (*columns, "label_str")
    return load_table(local_path(key, data_dir), columns, text_columns, numeric_columns)


def bitext_path(lang: str, data_dir: str | os.PathLike | None = None) -> Path:
    """``<data_dir>/bitext/<lang>-en.parquet``."""
    return data_folder(data_dir) / "bitext" / f"{lang}-en.parquet"


def load_flores(lang: str, data_dir: str | os.PathLike | None = None) -> Any:
    """The FLORES-200 devtest rows (corpus :data:`FLORES_CORPUS`) of ``bitext/<lang>-en.parquet`` as ``source``
    (``lang``) / ``target`` (English), a :class:`BitextMiningEvaluator` input."""
    import numpy as np
    import pyarrow.compute as pc

    path = bitext_path(lang, data_dir)
    if not path.is_file():
        raise FileNotFoundError(
            f"bitext file {path} does not exist (pass --data-dir / data_dir= the folder holding bitext/; "
            "MTEB's FloresBitextMining.local: keep the languages you have with task.filter_languages(['deu', ...]), "
            "without 'eng': every subset holds English, so 'eng' keeps them all)"
        )
    dataset = load_table(path, (*BITEXT_COLUMNS, "corpus"))
    flores = pc.equal(dataset.data.column("corpus"), FLORES_CORPUS).fill_null(False)
    rows = np.flatnonzero(flores.to_numpy(zero_copy_only=False))
    if not len(rows):
        raise ValueError(f"{path}: no row with corpus == {FLORES_CORPUS!r}")
    dataset = dataset.select(rows).select_columns(list(BITEXT_COLUMNS))
    check_columns(dataset, BITEXT_COLUMNS, f"{path} ({FLORES_CORPUS} rows)", BITEXT_COLUMNS)
    return dataset


def flores_languages(data_dir: str | os.PathLike | None = None) -> list[str]:
    """The languages whose ``bitext/<lang>-en.parquet`` holds FLORES-200 devtest rows, sorted."""
    import pyarrow.parquet as pq

    found = []
    for path in sorted((data_folder(data_dir) / "bitext").glob("*-en.parquet")):
        table = pq.read_table(path, columns=["corpus"]) if "corpus" in pq.read_schema(path).names else None
        if table is not None and FLORES_CORPUS in set(table.column("corpus").to_pylist()):
            found.append(path.name.removesuffix("-en.parquet"))
    return found


def load_sts_folder(path: str | os.PathLike) -> dict[str, Any]:
    """``{subset: Dataset}`` of a held-out STS year's ``<subset>.parquet`` files (``sts2012/MSRpar.parquet``)."""
    files = sorted(Path(path).glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"{path} holds no .parquet files (expected one file per STS subset)")
    return {file.stem: load_table(file, STS_COLUMNS, STS_COLUMNS[:2], STS_COLUMNS[2:]) for file in files}


def opusparcus_path(root: str | os.PathLike, lang: str, split: str) -> Path:
    """``<root>/<lang>/<split>/<lang>-<split>.txt``, the layout of the Opusparcus 1.0 archive."""
    return Path(root) / lang / split / f"{lang}-{split}.txt"


def opusparcus_binary(dataset: Any, positive_from: float = 3.0, negative_upto: float = 2.0) -> Any:
    """Add a 0/1 ``label`` (score >= 3 paraphrase, <= 2 not) and drop the undecided pairs in between (2.5)."""
    scores = dataset["score"]
    kept = dataset.select([row for row, score in enumerate(scores) if score >= positive_from or score <= negative_upto])
    labels = [int(score >= positive_from) for score in kept["score"]]
    if "label" in kept.column_names:
        kept = kept.remove_columns("label")
    return kept.add_column("label", labels)

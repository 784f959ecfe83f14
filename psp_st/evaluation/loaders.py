"""Evaluation datasets as Hugging Face ``datasets.Dataset``: local Parquet / TSV files (read by :mod:`psp_st.data`),
or the Hub.

Local files follow the layout of the shared data folder (``sts/``, ``pair_classification/``,
``bitext_mining/``; schemas in its README). Every loader checks that the file exists and has the columns the
evaluation needs, and raises naming the file, the column or the row otherwise. Hub loaders are thin wrappers
around ``datasets.load_dataset`` for the official copies (``mteb/sts12-sts`` ...); they need network access.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from psp_st.data.loaders import load_table
from psp_st.io.data_dir import default_data_dir

#: The languages of the PAWS-X files (dev and test for each).
PAWSX_LANGS = ("de", "en", "es", "fr", "ja", "ko", "zh")

#: Local files of the shared data folder, by dataset key.
LOCAL_FILES: dict[str, str] = {
    "stsb-train": "sts/stsbenchmark/train.parquet",
    "stsb-dev": "sts/stsbenchmark/dev.parquet",
    "stsb-test": "sts/stsbenchmark/test.parquet",
    "sick-train": "sts/sick/train.parquet",
    "sick-dev": "sts/sick/dev.parquet",
    "sick-test": "sts/sick/test.parquet",
    "sts17-en-en": "sts/sts2017/en-en.parquet",
    "msrpc-train": "pair_classification/msrpc/train.parquet",
    "msrpc-test": "pair_classification/msrpc/test.parquet",
    "turku-release1-dev": "pair_classification/turku/fi_release1_dev.parquet",
    "turku-opus-parsebank-dev": "pair_classification/turku/fi_opus_parsebank_dev.parquet",
    **{
        f"pawsx-{lang}-{split}": f"pair_classification/pawsx/{lang}_{split}.parquet"
        for lang in PAWSX_LANGS
        for split in ("dev", "test")
    },
    **{f"tatoeba-{lang}": f"bitext_mining/tatoeba/{lang}-eng.parquet" for lang in ("deu", "fra")},
}

#: Columns every dataset kind must have.
STS_COLUMNS = ("sentence1", "sentence2", "score")
PAIR_COLUMNS = ("sentence1", "sentence2", "label")
BITEXT_COLUMNS = ("source", "target")

#: Score range of each STS dataset (SICK relatedness is on a 1-5 scale, the others 0-5).
SCORE_RANGES: dict[str, tuple[float, float]] = {
    "stsb": (0.0, 5.0),
    "sick": (1.0, 5.0),
    "sts17": (0.0, 5.0),
    "sts": (0.0, 5.0),
    "opusparcus": (1.0, 4.0),
}

#: Hub copies of the STS sets (MTEB's), by key.
HUB_STS: dict[str, str] = {
    "sts12": "mteb/sts12-sts",
    "sts13": "mteb/sts13-sts",
    "sts14": "mteb/sts14-sts",
    "sts15": "mteb/sts15-sts",
    "sts16": "mteb/sts16-sts",
    "stsb": "mteb/stsbenchmark-sts",
    "sick": "mteb/sickr-sts",
    "sts17": "mteb/sts17-crosslingual-sts",
}


def check_columns(dataset: Any, columns: Sequence[str], source: str, text_columns: Sequence[str] = ()) -> None:
    """Raise ``ValueError`` naming ``source`` if a column is missing or a text cell is empty/None.

    Works on a ``datasets.Dataset``, a pandas ``DataFrame`` or a dict of columns.
    """
    if hasattr(dataset, "column_names"):
        names = list(dataset.column_names)
    elif hasattr(dataset, "columns"):
        names = list(dataset.columns)
    else:  # a mapping of columns
        names = list(dataset)
    missing = [column for column in columns if column not in names]
    if missing:
        raise ValueError(f"{source}: missing column(s) {missing}; it has {names}")
    if len(dataset[columns[0]]) == 0:
        raise ValueError(f"{source}: no rows")
    for column in text_columns:
        values = dataset[column]
        for row, value in enumerate(values):
            if not isinstance(value, str):
                missing_value = value is None or isinstance(value, float) and value != value
                shown = "null (missing)" if missing_value else repr(value)
                raise ValueError(f"{source}: column {column!r} row {row} is {shown}, expected a string")


def local_path(key: str, data_dir: str | os.PathLike | None = None) -> Path:
    """Path of the local file of dataset ``key`` (see :data:`LOCAL_FILES`)."""
    if key not in LOCAL_FILES:
        raise ValueError(f"unknown dataset {key!r}; known: {sorted(LOCAL_FILES)}")
    return Path(data_dir or default_data_dir()) / LOCAL_FILES[key]


def load_local(key: str, data_dir: str | os.PathLike | None = None) -> Any:
    """Load local dataset ``key`` with the columns its kind needs checked."""
    columns: tuple[str, ...]
    if key.startswith(("stsb", "sick", "sts17")):
        columns = STS_COLUMNS
    elif key.startswith("tatoeba"):
        columns = BITEXT_COLUMNS
    else:
        columns = PAIR_COLUMNS
    text_columns = columns[:2]
    if key.startswith("turku"):
        columns = (*columns, "label_str")
    return load_table(local_path(key, data_dir), columns, text_columns)


def load_sts_folder(path: str | os.PathLike, subset_column: str = "subset") -> dict[str, Any]:
    """Held-out STS years stored locally, as ``{subset: Dataset}``.

    ``path`` is either a folder of ``<subset>.parquet`` files (e.g. ``sts2012/MSRpar.parquet``) or one
    Parquet file with a ``subset`` column. Each needs ``sentence1``, ``sentence2``, ``score``.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(path.glob("*.parquet"))
        if not files:
            raise FileNotFoundError(f"{path} holds no .parquet files (expected one file per STS subset)")
        return {file.stem: load_table(file, STS_COLUMNS, STS_COLUMNS[:2]) for file in files}
    dataset = load_table(path, (*STS_COLUMNS, subset_column), STS_COLUMNS[:2])
    subsets = list(dataset[subset_column])
    return {
        name: dataset.select([row for row, value in enumerate(subsets) if value == name])
        for name in sorted(set(subsets))
    }


# -- Opusparcus ----------------------------------------------------------------------------------------------
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


# -- Hub -------------------------------------------------------------------------------------------------------
def load_sts_hub(key: str, split: str = "test", subset: str | None = None, **kwargs: Any) -> Any:
    """An STS set from the Hub (MTEB's copies; see :data:`HUB_STS`), with its score column checked.

    ``subset`` picks a configuration, e.g. ``"en-de"`` for ``sts17``. Needs network access.
    """
    from datasets import load_dataset

    if key not in HUB_STS:
        raise ValueError(f"unknown Hub STS set {key!r}; known: {sorted(HUB_STS)}")
    dataset = load_dataset(HUB_STS[key], subset, split=split, **kwargs)
    check_columns(dataset, STS_COLUMNS, f"{HUB_STS[key]}[{split}]", STS_COLUMNS[:2])
    return dataset


def load_opusparcus_hub(lang: str, split: str = "test", **kwargs: Any) -> Any:
    """Opusparcus dev/test pairs of ``lang`` from the Hub (``GEM/opusparcus``), renamed to our columns."""
    from datasets import load_dataset

    dataset = load_dataset("GEM/opusparcus", f"{lang}.100", split=split, **kwargs)
    dataset = dataset.rename_columns({"input": "sentence1", "target": "sentence2", "annot_score": "score"})
    check_columns(dataset, STS_COLUMNS, f"GEM/opusparcus[{lang}, {split}]", STS_COLUMNS[:2])
    return dataset

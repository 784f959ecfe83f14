"""Named sentence-pair sets of the shared data folder that the baselines train and are scored on.

A name picks a file (or, for Turku, a fixed split of the two dev files) and gives back a ``pandas`` frame with
``sentence1``, ``sentence2`` and the target columns of that set.

Splits where the data has no training part (stated here and in the results file):

* **PAWS-X**: only dev and test exist; baselines train on ``pawsx-<lang>-dev`` and are scored on
  ``pawsx-<lang>-test``.
* **Turku**: only ``fi_release1_dev`` (folds 80-89) and ``fi_opus_parsebank_dev`` exist. ``turku-train`` is the
  whole OPUS/Parsebank dev file plus release-1 folds 80-84; ``turku-eval`` is release-1 folds 85-89 (2,214
  pairs, never trained on). Both carry ``label_str`` (full label) and ``label`` (base label).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from psp_st.evaluation.loaders import LOCAL_FILES, PAWSX_LANGS
from psp_st.io.data_dir import default_data_dir

#: Release-1 dev folds used for training (the rest, 85-89, are the evaluation split).
TURKU_TRAIN_FOLDS = frozenset(range(80, 85))

#: The shared-data files of the evaluation suite, under the names the baselines use.
_FILES = {
    **{key: path for key, path in LOCAL_FILES.items() if key.split("-")[0] in {"stsb", "sick", "msrpc"}},
    "turku-release1-dev": LOCAL_FILES["turku-release1-dev"],
    "turku-opus-pb-dev": LOCAL_FILES["turku-opus-parsebank-dev"],
}


def pair_set_names() -> list[str]:
    """Every name :func:`load_pair_frame` accepts (besides ``.parquet`` paths)."""
    pawsx = [f"pawsx-{lang}-{split}" for lang in PAWSX_LANGS for split in ("dev", "test")]
    return sorted([*_FILES, *pawsx, "turku-train", "turku-eval"])


def _read(path: Path, data_dir: Path | None = None):
    """A pair file (relative paths: in the data folder) as a DataFrame, read by :func:`psp_st.data.load_table`."""
    from psp_st.data.loaders import load_table

    return load_table(path, ["sentence1", "sentence2"], data_dir=data_dir).to_pandas()


def load_pair_frame(name: str, data_dir: str | os.PathLike | None = None, limit: int | None = None):
    """The pairs of a named set (see :func:`pair_set_names`) or of a ``.parquet`` file, as a DataFrame.

    ``limit`` keeps the first ``limit`` rows (after the Turku split), for quick runs.
    """
    import pandas as pd

    data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
    if name.endswith(".parquet"):
        frame = _read(Path(name), data_dir)
    elif name in _FILES:
        frame = _read(data_dir / _FILES[name])
    elif match := re.fullmatch(r"pawsx-([a-z]{2})-(dev|test)", name):
        if match.group(1) not in PAWSX_LANGS:
            raise ValueError(f"unknown PAWS-X language {match.group(1)!r}; known: {', '.join(PAWSX_LANGS)}")
        frame = _read(data_dir / f"pair_classification/pawsx/{match.group(1)}_{match.group(2)}.parquet")
    elif name in ("turku-train", "turku-eval"):
        release1 = _read(data_dir / _FILES["turku-release1-dev"])
        in_train = release1["fold"].isin(TURKU_TRAIN_FOLDS)
        if name == "turku-eval":
            frame = release1[~in_train]
        else:
            opus_pb = _read(data_dir / _FILES["turku-opus-pb-dev"])
            columns = ["sentence1", "sentence2", "label", "label_str"]
            frame = pd.concat([opus_pb[columns], release1.loc[in_train, columns]], ignore_index=True)
    else:
        raise ValueError(f"unknown pair set {name!r}; known: {', '.join(pair_set_names())} or a .parquet path")
    frame = frame.reset_index(drop=True)
    return frame.head(limit) if limit is not None else frame

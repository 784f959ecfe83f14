"""Training pairs for the recipes: load, validate, and give every pair a false-negative group id."""

from __future__ import annotations

import glob
import logging
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from psp_st.io.data_dir import default_data_dir

logger = logging.getLogger(__name__)


def resolve_data_path(pattern: str | os.PathLike) -> list[str]:
    """Files matching ``pattern`` (absolute, or relative to the shared data folder), sorted."""
    pattern, data_dir = str(pattern), default_data_dir()
    if not os.path.isabs(pattern) and not glob.glob(pattern):
        pattern = str(data_dir / pattern)
    files = sorted(glob.glob(pattern))
    if not files:
        raise FileNotFoundError(f"no training file matches {pattern!r} (data folder: {data_dir}; set PSP_ST_DATA_DIR)")
    return files


def load_training_pairs(
    sources: Sequence[str],
    sentence1_column: str = "sentence1",
    sentence2_column: str = "sentence2",
    group_column: str | None = "group_id",
    shared_sentence_groups: bool = True,
    max_pairs: int | None = None,
    seed: int = 0,
):
    """Parquet pair files -> ``datasets.Dataset`` with ``sentence1, sentence2, group_id`` (int64, -1 = none).

    ``group_id`` values are made unique per file (captions of image "1.jpg" in two files are different
    groups). With ``shared_sentence_groups`` pairs that share a sentence (after lower-casing) are put in one
    group as well (connected components), e.g. the up-to-8 simplifications of one Wikipedia sentence, so the
    miner never treats one of them as the negative of another. Rows with a missing/empty/non-string side are
    dropped and counted in the log. (Small function on purpose: ``psp_st.data`` loaders can replace it.)
    """
    import pandas as pd
    from datasets import Dataset

    frames = []
    for source in sources:
        for path in resolve_data_path(source):
            columns = pd.read_parquet(path, columns=None).columns
            for required in (sentence1_column, sentence2_column):
                if required not in columns:
                    raise ValueError(f"{path}: no column {required!r} (columns: {list(columns)})")
            use = [sentence1_column, sentence2_column] + ([group_column] if group_column in columns else [])
            frame = pd.read_parquet(path, columns=use)
            frame.columns = ["sentence1", "sentence2"] + (["group"] if len(use) == 3 else [])
            frame["source"] = Path(path).name
            frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    bad = np.zeros(len(frame), dtype=bool)
    for column in ("sentence1", "sentence2"):
        values = frame[column]
        bad |= ~values.map(lambda v: isinstance(v, str)).to_numpy()
        bad |= values.astype(str).str.strip().eq("").to_numpy()
    if bad.any():
        logger.warning("dropped %d training pair(s) with a missing, empty or non-string side (first: row %d)",
                       int(bad.sum()), int(np.flatnonzero(bad)[0]))
        frame = frame[~bad].reset_index(drop=True)
    if max_pairs is not None and len(frame) > max_pairs:
        keep = np.sort(np.random.default_rng(seed).choice(len(frame), size=max_pairs, replace=False))
        frame = frame.iloc[keep].reset_index(drop=True)
    frame["group_id"] = pair_groups(frame, shared_sentence_groups)
    logger.info("training pairs: %d from %d file(s), %d groups", len(frame), frame.source.nunique(),
                frame.group_id.nunique())
    return Dataset.from_pandas(frame[["sentence1", "sentence2", "group_id"]], preserve_index=False)


def pair_groups(frame, shared_sentence_groups: bool = True) -> np.ndarray:
    """One int64 group id per pair: connected components of "same (file, group)" and "shares a sentence"."""
    import pandas as pd
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    n = len(frame)
    links = []
    if "group" in frame:
        has = frame["group"].notna().to_numpy()
        keys = frame["source"].astype(str) + "\x00" + frame["group"].astype(str)
        codes, _ = pd.factorize(keys.where(has))
        links.append(codes)
    if shared_sentence_groups:
        codes, _ = pd.factorize(pd.concat([frame.sentence1, frame.sentence2]).str.lower().str.strip())
        links += [codes[:n], codes[n:]]
    if not links:
        return np.arange(n, dtype=np.int64)
    rows, cols, offset = [], [], n
    for codes in links:
        valid = codes >= 0
        rows.append(np.flatnonzero(valid))
        cols.append(codes[valid] + offset)
        offset += int(codes.max(initial=-1)) + 1
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    graph = coo_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(offset, offset))
    _, labels = connected_components(graph, directed=False)
    return pd.factorize(labels[:n])[0].astype(np.int64)

"""Training pairs for the recipes: load, validate, and give every pair a false-negative group id."""

from __future__ import annotations

import glob
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

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


#: Keys of a ``data.sources`` entry given as a mapping (a bare string is ``{path: ...}``).
SOURCE_KEYS = ("path", "max_pairs", "weight", "filters")
#: Keys of ``filters`` (per source, or ``data.filters`` for every source): psp_st.data.filters' pair filters.
FILTER_KEYS = ("max_trigram_overlap", "min_length", "max_length")


def parse_pair_source(entry: str | Mapping[str, Any], filters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A ``data.sources`` entry as ``{path, max_pairs, weight, filters}``, checked (errors name the entry)."""
    entry = {"path": entry} if isinstance(entry, (str, os.PathLike)) else dict(entry)
    unknown = set(entry) - set(SOURCE_KEYS)
    if unknown or "path" not in entry:
        raise ValueError(
            f"recipe: data.sources entry {entry!r}: needs 'path'; allowed keys {list(SOURCE_KEYS)} "
            f"(unknown: {sorted(unknown)})"
        )
    cap, weight = entry.get("max_pairs"), entry.get("weight")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
        raise ValueError(f"recipe: data.sources {entry['path']}: max_pairs must be a positive integer, got {cap!r}")
    if weight is not None and (isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight <= 0):
        raise ValueError(f"recipe: data.sources {entry['path']}: weight must be a number > 0, got {weight!r}")
    merged = {**(filters or {}), **(entry.get("filters") or {})}
    bad = set(merged) - set(FILTER_KEYS)
    if bad:
        raise ValueError(
            f"recipe: data.sources {entry['path']}: unknown filter(s) {sorted(bad)} (allowed: {list(FILTER_KEYS)})"
        )
    return {"path": str(entry["path"]), "max_pairs": cap, "weight": weight, "filters": merged}


def sample_rows(n: int, weight: float | None, max_pairs: int | None, seed: int | Sequence[int]) -> np.ndarray:
    """Row indices of one source after its weight and cap (deterministic in ``seed``).

    ``weight`` w: ``round(w * n)`` rows: every row ``floor(w)`` times plus a seeded sample of the remainder
    (w < 1 subsamples, w > 1 repeats); then ``max_pairs`` caps the count with a seeded sample. Sorted.
    ``seed`` is anything ``numpy.random.default_rng`` takes (an int or a sequence of ints).
    """
    rng = np.random.default_rng(seed)
    rows = np.arange(n)
    if weight is not None and weight != 1:
        target = int(round(weight * n))
        whole, rest = divmod(target, n) if n else (0, 0)
        rows = np.concatenate([np.tile(rows, whole), np.sort(rng.choice(n, size=rest, replace=False))])
    if max_pairs is not None and len(rows) > max_pairs:
        rows = rows[np.sort(rng.choice(len(rows), size=max_pairs, replace=False))]
    return np.sort(rows, kind="stable")


def load_training_pairs(
    sources: Sequence[str | Mapping[str, Any]],
    sentence1_column: str = "sentence1",
    sentence2_column: str = "sentence2",
    group_column: str | None = "group_id",
    shared_sentence_groups: bool = True,
    max_pairs: int | None = None,
    seed: int = 0,
    filters: Mapping[str, Any] | None = None,
    counts: dict[str, int] | None = None,
):
    """Parquet pair files -> ``datasets.Dataset`` with ``sentence1, sentence2, group_id`` (int64, -1 = none).

    A source is a path/glob or a mapping ``{path, max_pairs, weight, filters}`` (see :func:`parse_pair_source`):
    per source (all the files its glob matches, together), invalid rows are dropped, then ``filters`` (the pair
    filters of :mod:`psp_st.data.filters`: ``max_trigram_overlap``, ``min_length``/``max_length`` in mean
    whitespace words; ``filters`` here applies to every source, an entry's own ``filters`` override it), then
    :func:`sample_rows` applies ``weight``/``max_pairs``, once per load (every epoch sees the same rows),
    seeded by ``seed`` and the entry's position. ``counts`` (if given) receives the pairs kept per source path.

    ``group_id`` values are made unique per file (captions of image "1.jpg" in two files are different
    groups). With ``shared_sentence_groups`` pairs that share a sentence (after lower-casing) are put in one
    group as well (connected components), e.g. the up-to-8 simplifications of one Wikipedia sentence, so the
    miner never treats one of them as the negative of another. Rows with a missing/empty/non-string side are
    dropped and counted in the log. (Small function on purpose: ``psp_st.data`` loaders can replace it.)
    """
    import pandas as pd
    from datasets import Dataset

    selected = []
    for number, source in enumerate(sources):
        entry = parse_pair_source(source, filters)
        frames = []
        for path in resolve_data_path(entry["path"]):
            columns = pd.read_parquet(path, columns=None).columns
            for required in (sentence1_column, sentence2_column):
                if required not in columns:
                    raise ValueError(f"{path}: no column {required!r} (columns: {list(columns)})")
            use = [sentence1_column, sentence2_column] + ([group_column] if group_column in columns else [])
            frame = pd.read_parquet(path, columns=use)
            frame.columns = ["sentence1", "sentence2"] + (["group"] if len(use) == 3 else [])
            frame["source"] = Path(path).name
            frames.append(frame)
        frame = _drop_invalid(pd.concat(frames, ignore_index=True))
        frame = _filter(frame, entry["filters"], entry["path"])
        rows = sample_rows(len(frame), entry["weight"], entry["max_pairs"], seed=(seed, number))
        if len(rows) != len(frame) or (len(rows) and rows[-1] != len(rows) - 1):
            frame = frame.iloc[rows].reset_index(drop=True)
        frame["entry"] = entry["path"]
        selected.append(frame)
    frame = pd.concat(selected, ignore_index=True)
    if max_pairs is not None and len(frame) > max_pairs:
        keep = np.sort(np.random.default_rng(seed).choice(len(frame), size=max_pairs, replace=False))
        frame = frame.iloc[keep].reset_index(drop=True)
    if counts is not None:  # pairs per source entry, after the global max_pairs too
        for path, count in frame["entry"].value_counts(sort=False).items():
            counts[path] = counts.get(path, 0) + int(count)
    frame["group_id"] = pair_groups(frame, shared_sentence_groups)
    logger.info(
        "training pairs: %d from %d file(s), %d groups", len(frame), frame.source.nunique(), frame.group_id.nunique()
    )
    return Dataset.from_pandas(frame[["sentence1", "sentence2", "group_id"]], preserve_index=False)


def _drop_invalid(frame):
    """Drop (and count in the log) rows with a missing, empty or non-string side."""
    bad = np.zeros(len(frame), dtype=bool)
    for column in ("sentence1", "sentence2"):
        values = frame[column]
        bad |= ~values.map(lambda v: isinstance(v, str)).to_numpy()
        bad |= values.astype(str).str.strip().eq("").to_numpy()
    if bad.any():
        logger.warning(
            "dropped %d training pair(s) with a missing, empty or non-string side (first: row %d)",
            int(bad.sum()),
            int(np.flatnonzero(bad)[0]),
        )
        frame = frame[~bad].reset_index(drop=True)
    return frame


def _filter(frame, options: Mapping[str, Any], where: str):
    """Apply psp_st.data.filters' trigram-overlap and length filters named in ``options`` to a pair frame."""
    if not options:
        return frame
    import math

    from psp_st.data.filters import LengthFilter, PairFilter, TrigramOverlapFilter

    steps: list[PairFilter] = []
    if options.get("max_trigram_overlap") is not None:
        steps.append(TrigramOverlapFilter(float(options["max_trigram_overlap"])))
    if options.get("min_length") is not None or options.get("max_length") is not None:
        steps.append(
            LengthFilter(
                float(options.get("min_length") or 0.0),
                float(options["max_length"]) if options.get("max_length") is not None else math.inf,
            )
        )
    batch = {"sentence1": frame.sentence1.tolist(), "sentence2": frame.sentence2.tolist()}
    keep = np.ones(len(frame), dtype=bool)
    for step in steps:
        keep &= np.asarray(step.keep(batch), dtype=bool)
    if not keep.all():
        logger.info("%s: filters %s dropped %d of %d pairs", where, dict(options), int((~keep).sum()), len(frame))
        frame = frame[keep].reset_index(drop=True)
    return frame


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
    row_parts, col_parts, offset = [], [], n
    for codes in links:
        valid = codes >= 0
        row_parts.append(np.flatnonzero(valid))
        col_parts.append(codes[valid] + offset)
        offset += int(codes.max(initial=-1)) + 1
    rows, cols = np.concatenate(row_parts), np.concatenate(col_parts)
    graph = coo_matrix((np.ones(len(rows), dtype=np.int8), (rows, cols)), shape=(offset, offset))
    _, labels = connected_components(graph, directed=False)
    return pd.factorize(labels[:n])[0].astype(np.int64)

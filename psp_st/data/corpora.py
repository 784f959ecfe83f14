"""The Opusparcus layout (Creutz 2018) over ``load_pairs`` (ParaNMT and X-English bitext need no loader of their own)."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from psp_st.data.filters import is_streaming
from psp_st.data.loaders import Source, load_pairs, local_files

logger = logging.getLogger(__name__)

OPUSPARCUS_ANNOTATION_RANGE = (1.0, 4.0)


def _opusparcus_split(files: Sequence[str]) -> str:
    splits = set()
    for path in files:
        match = re.search(r"(train|dev|test)", Path(path).name)
        if match is None:
            raise ValueError(
                f"cannot tell the Opusparcus split of {path!r} from its name: it must contain 'train', 'dev' or "
                "'test' (Python: or pass split=...)"
            )
        splits.add(match.group(1))
    if len(splits) > 1:
        raise ValueError(f"files mix Opusparcus splits {sorted(splits)}; load each split separately")
    return splits.pop()


def _scores(dataset: Any) -> np.ndarray:
    return np.asarray(dataset["score"][:], dtype=np.float64)


def load_opusparcus(
    source: Source,
    *,
    split: str | None = None,
    top_n: int | None = None,
    streaming: bool = False,
    cache_dir: str | os.PathLike | None = None,
    on_bad_lines: str = "error",
):
    """Opusparcus TSV files of one split as pairs with a ``score`` (field 4: the PMI score in training files, ranked
    best first; the mean of two annotators' 1-4 scores in dev/test files). ``split``: None reads it from the file
    names. ``top_n`` (training only): keep the N best-ranked pairs, sorted by score first if the files are not
    (streaming: file order is trusted)."""
    files = local_files(source)
    if files is None:
        raise ValueError(
            "load_opusparcus reads local Opusparcus files; for the Hub copy use load_pairs('GEM/opusparcus', ...)"
        )
    split = split or _opusparcus_split(files)
    if split not in ("train", "dev", "test"):
        raise ValueError(f"split must be 'train', 'dev' or 'test', got {split!r}")
    if top_n is not None and (split != "train" or top_n < 1):
        raise ValueError(
            f"top_n selects the N best-ranked training pairs (N >= 1); got top_n={top_n} for split {split!r}"
        )
    dataset = load_pairs(
        files,
        format="tsv",
        columns={"sentence1": 1, "sentence2": 2, "score": 3},
        split=split,
        streaming=streaming,
        cache_dir=cache_dir,
        on_bad_lines=on_bad_lines,
        tsv_header=False,
    )
    if split == "train":
        if top_n is None:
            return dataset
        if is_streaming(dataset):
            return dataset.take(top_n)
        scores = _scores(dataset)
        if np.any(np.diff(scores) > 0):  # the training files are ranked best first
            logger.info("Opusparcus scores of %s are not ranked; sorting them to take the top %d", files, top_n)
            # best first, ties in file order; not Dataset.sort, whose pyarrow options are deprecated (pyarrow >= 25)
            dataset = dataset.select(np.argsort(-scores, kind="stable"))
        if top_n > len(dataset):
            logger.warning("top_n=%d exceeds the %d pairs available; keeping all", top_n, len(dataset))
        return dataset.select(range(min(top_n, len(dataset))))
    if not is_streaming(dataset):
        scores = _scores(dataset)
        outside = np.flatnonzero((scores < OPUSPARCUS_ANNOTATION_RANGE[0]) | (scores > OPUSPARCUS_ANNOTATION_RANGE[1]))
        if len(outside):
            raise ValueError(
                f"Opusparcus dev/test annotation scores must be in {list(OPUSPARCUS_ANNOTATION_RANGE)}; row "
                f"{int(outside[0]) + 1} of {list(files)} has {scores[outside[0]]}. Is this a training (ranked) file? "
                "Pass split='train'"
            )
    return dataset

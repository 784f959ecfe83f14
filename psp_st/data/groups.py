"""The one false-negative group rule: pairs of one (file, group id), or sharing a sentence on one side, are a group."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from psp_st.tokenization.text_checks import refuse_single_text


def group_keys(values: Sequence[object]) -> np.ndarray:
    """int64 codes of one file's ``group_id`` values (equal value, equal code); ``-1`` where a value is missing."""
    import pandas as pd

    codes, _ = pd.factorize(pd.Series(list(values), dtype=object), use_na_sentinel=True)
    return codes.astype(np.int64)


def pair_groups(
    sentence1: Sequence[str],
    sentence2: Sequence[str],
    keys: np.ndarray | None = None,
    shared_sentence_groups: bool = True,
) -> np.ndarray:
    """One int64 group id per pair (in order of first appearance): the connected components of "same ``keys``
    value" (one code per pair, ``-1`` = no group) and, with ``shared_sentence_groups``, "same ``sentence1``" or
    "same ``sentence2``" after lower-casing and stripping (not one pair's ``sentence1`` and another's ``sentence2``)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    refuse_single_text(sentence1, "sentence1")
    refuse_single_text(sentence2, "sentence2")
    n = len(sentence1)
    if len(sentence2) != n or (keys is not None and len(keys) != n):
        sizes = f"{n} sentence1, {len(sentence2)} sentence2" + ("" if keys is None else f", {len(keys)} keys")
        raise ValueError(f"pair_groups needs one entry per pair in each argument, got {sizes}")
    links = []
    if keys is not None:
        links.append(np.asarray(keys, dtype=np.int64))
    if shared_sentence_groups:
        texts = pa.concat_arrays([_as_arrow(sentence1), _as_arrow(sentence2)])
        normalized = pc.utf8_trim_whitespace(pc.utf8_lower(texts))  # Arrow's Unicode lower-casing and whitespace
        codes = normalized.dictionary_encode().indices.to_numpy(zero_copy_only=False).astype(np.int64)
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


def _as_arrow(texts: Sequence[str]):
    import pyarrow as pa

    if isinstance(texts, pa.ChunkedArray):
        texts = texts.combine_chunks()
    array = texts if isinstance(texts, pa.Array) else pa.array(list(texts), type=pa.large_string())
    return array.cast(pa.large_string())

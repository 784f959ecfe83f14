"""Nearest-neighbour tables (Opusparcus Tables 4-5): torch is imported to compute cosines, Sentence-Transformers is
not (``psp-st neighbours`` on a P-SP model runs psp-st's engine)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from psp_st.arguments import check_int
from psp_st.evaluation.embeddings import EmbeddingCache, cosine_matrix
from psp_st.tokenization.text_checks import check_texts


def nearest_neighbours(
    query_embeddings: np.ndarray,
    candidate_embeddings: np.ndarray,
    candidates: Sequence[str],
    k: int = 10,
    exclude: Sequence[str] | None = None,
) -> list[list[tuple[str, float]]]:
    """For each query, the ``k`` most cosine-similar candidates as ``(text, cosine)``, best first, ``exclude[i]``
    (usually the query itself) skipped for query ``i``. ``candidates[j]`` is the text of ``candidate_embeddings[j]``
    (a length mismatch, or a str where a list is due, is a ValueError)."""
    k = check_int("k", k)
    queries = np.atleast_2d(np.asarray(query_embeddings, dtype=np.float32))
    matrix = np.atleast_2d(np.asarray(candidate_embeddings, dtype=np.float32))
    candidates = check_texts(candidates, where="candidates")
    if queries.ndim != 2 or matrix.ndim != 2 or queries.shape[1] != matrix.shape[1]:
        raise ValueError(
            f"query_embeddings and candidate_embeddings must be (n, dim) arrays of one dim, got shapes "
            f"{queries.shape} and {matrix.shape}"
        )
    if len(candidates) != len(matrix):
        raise ValueError(f"{len(candidates)} candidates but {len(matrix)} candidate_embeddings: one text per row")
    if exclude is not None:
        exclude = check_texts(exclude, where="exclude")
        if len(exclude) != len(queries):
            raise ValueError(f"exclude has {len(exclude)} texts for {len(queries)} queries: one per query (or None)")
    results = []
    for row, similarities in enumerate(cosine_matrix(queries, matrix)):
        order = [
            c for c in np.argsort(-similarities, kind="stable") if exclude is None or candidates[c] != exclude[row]
        ]
        results.append([(candidates[column], float(similarities[column])) for column in order[:k]])
    return results


def neighbour_table_markdown(query: str, neighbours: Sequence[tuple[str, float]], gold: str | None = None) -> str:
    """A markdown table like Opusparcus' Tables 4-5 (rank, cosine, sentence; the gold paraphrase in bold)."""
    lines = [
        f"Nearest neighbours of **{query}**" + (f" (annotated paraphrase: *{gold}*)" if gold else ""),
        "",
        "| rank | cosine | sentence |",
        "|---:|---:|---|",
    ]
    for rank, (text, cosine) in enumerate(neighbours, start=1):
        shown = text.replace("|", "\\|")
        lines.append(f"| {rank} | {cosine:.3f} | {'**' + shown + '**' if text == gold else shown} |")
    return "\n".join(lines)


def neighbour_tables(
    cache: EmbeddingCache,
    queries: Sequence[str],
    candidates: Sequence[str],
    k: int = 10,
    golds: Sequence[str] | None = None,
) -> list[str]:
    """One :func:`neighbour_table_markdown` per query (itself excluded); ``golds[i]`` is query ``i``'s paraphrase."""
    found = nearest_neighbours(cache.encode(queries), cache.encode(candidates), candidates, k=k, exclude=queries)
    return [
        neighbour_table_markdown(query, rows, gold=golds[index] if golds else None)
        for index, (query, rows) in enumerate(zip(queries, found, strict=True))
    ]

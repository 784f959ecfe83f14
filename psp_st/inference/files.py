"""Embed a text file into a ``.npy`` and score a TSV of pairs, streamed in chunks (10M lines fit in little RAM)."""

from __future__ import annotations

import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from psp_st.arguments import check_int
from psp_st.inference.encode import encode_texts
from psp_st.io.atomic import atomic_path, reserve_space
from psp_st.io.lines import count_lines, iter_line_blocks


def _progress(total: int, desc: str, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="line", disable=not enabled)


def embed_file(
    model,
    input_path: str | os.PathLike,
    output_path: str | os.PathLike,
    chunk_size: int = 16_384,
    float16: bool = False,
    normalize: bool = False,
    show_progress_bar: bool = True,
) -> tuple[int, int]:
    """Embed every line of ``input_path`` (UTF-8, one text per line) into the ``.npy`` file ``output_path``.

    Row ``i`` of the array is line ``i + 1``. An empty line is embedded as the empty text (for P-SP: the
    ``<unk>`` vector), so rows stay aligned with lines. The array is written chunk by chunk (memory stays at
    two chunks) and renamed into place only when complete. One I/O thread reads the next chunk and writes the
    previous one while the current one is embedded (file I/O releases the GIL). Returns the array shape.
    """
    from psp_st.inference.engine import PSPEngine

    check_int("chunk_size (--chunk-size)", chunk_size)
    total = count_lines(input_path)
    dim = model.get_embedding_dimension()
    dtype = np.dtype(np.float16 if float16 else np.float32)
    header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (total, dim)}
    buffers = [np.empty((chunk_size, dim), dtype=dtype) for _ in range(2)] if isinstance(model, PSPEngine) else None
    # sequential writes, not a memory map: a map's dirty pages count as resident, so RSS would grow with the file
    with (
        atomic_path(output_path) as tmp,
        open(tmp, "wb") as handle,
        _progress(total, "embed", show_progress_bar) as bar,
        ThreadPoolExecutor(max_workers=1) as io,
    ):
        np.lib.format.write_array_header_1_0(handle, header)
        # ENOSPC now, not in the middle of the job
        reserve_space(tmp, handle.tell() + total * dim * dtype.itemsize, final=output_path)
        blocks = iter_line_blocks(input_path, chunk_size)
        reading = io.submit(next, blocks, None)
        writing = None
        for index in itertools.count():
            block = reading.result()
            if block is None:
                break
            texts = block[1]
            reading = io.submit(next, blocks, None)
            if buffers is not None:
                out = buffers[index % 2][: len(texts)]
                vectors = model.encode(texts, normalize=normalize, dtype=dtype, out=out)
            else:
                vectors = encode_texts(model, texts, normalize=normalize, dtype=dtype)
            if writing is not None:
                writing.result()  # the previous chunk is on disk: its buffer is free again
            writing = io.submit(vectors.tofile, handle)
            bar.update(len(texts))
        if writing is not None:
            writing.result()
    return total, dim


def _split_pair(path: Path, number: int, text: str) -> tuple[str, str]:
    fields = text.split("\t")
    if len(fields) != 2:
        what = "an empty line" if text == "" else f"{len(fields)} field(s)"
        raise ValueError(f"{path}:{number}: expected 2 tab-separated sentences, got {what}")
    return fields[0], fields[1]


def score_file(
    model,
    pairs_path: str | os.PathLike,
    output_path: str | os.PathLike,
    chunk_size: int = 50_000,
    header: bool = False,
    show_progress_bar: bool = True,
) -> int:
    """Write each ``sentence1<TAB>sentence2`` line of ``pairs_path`` with a third column: their cosine.

    Lines keep their order. A line without exactly one tab (including an empty line) raises
    :class:`ValueError` naming its line number; nothing is written then. With ``header`` the first line is
    copied with a ``cosine`` column added. Returns the number of scored pairs.
    """
    pairs_path = Path(pairs_path)
    total = count_lines(pairs_path)
    scored = 0
    with (
        atomic_path(output_path) as tmp,
        open(tmp, "w", encoding="utf-8") as out,
        _progress(total, "score", show_progress_bar) as bar,
    ):
        for first, texts in iter_line_blocks(pairs_path, chunk_size):
            if header and first == 1:
                out.write(f"{texts[0]}\tcosine\n")
                texts, first = texts[1:], 2
                bar.update(1)
            pairs = [_split_pair(pairs_path, number, text) for number, text in enumerate(texts, start=first)]
            left = encode_texts(model, [a for a, _ in pairs], normalize=True)
            right = encode_texts(model, [b for _, b in pairs], normalize=True)
            cosines = np.einsum("ij,ij->i", left, right)
            out.writelines(f"{a}\t{b}\t{c:.6f}\n" for (a, b), c in zip(pairs, cosines, strict=True))
            scored += len(pairs)
            bar.update(len(pairs))
    return scored

"""Embed a text file into a ``.npy`` and score a TSV of pairs, streamed in chunks (10M lines fit in little RAM)."""

from __future__ import annotations

import errno
import io
import itertools
import logging
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import numpy as np

from psp_st.arguments import check_int
from psp_st.inference.encode import encode_texts
from psp_st.inference.engine import PSPEngine
from psp_st.inference.finite import NonFiniteOutputError, check_finite
from psp_st.io.atomic import atomic_path, reserve_space
from psp_st.io.lines import check_input_file, count_lines, iter_line_blocks
from psp_st.io.progress import progress_bar

logger = logging.getLogger(__name__)


#: Block size of the output writes: O_DIRECT needs address, offset and length aligned to the logical block size.
_ALIGN = 4096


def _aligned_bytes(size: int) -> np.ndarray:
    """An uninitialised ``uint8`` array of ``size`` bytes starting on an ``_ALIGN`` boundary."""
    raw = np.empty(size + _ALIGN, dtype=np.uint8)
    start = -raw.ctypes.data % _ALIGN
    return raw[start : start + size]


def _open_unbuffered(path: Path) -> int:
    """``path`` opened for writing past the page cache (``O_DIRECT``) where the OS and file system allow it: copying
    a multi-GB output into the page cache costs the kernel CPU time taken from the engine."""
    direct = getattr(os, "O_DIRECT", 0)
    if direct:
        try:
            return os.open(path, os.O_WRONLY | direct)
        except OSError as error:
            if error.errno != errno.EINVAL:  # EINVAL: this file system has no direct I/O
                raise
    return os.open(path, os.O_WRONLY | getattr(os, "O_BINARY", 0))  # O_BINARY: Windows would write \n as \r\n


#: Serialises the seek-and-write pairs that stand in for ``os.pwrite`` where the OS has none (Windows).
_SEEK_WRITE = threading.Lock()


def _write_at(fd: int, data: memoryview, offset: int) -> int:
    """``os.pwrite``, or on Windows (which has none) a seek and a write under one lock (two I/O threads write)."""
    if hasattr(os, "pwrite"):
        return os.pwrite(fd, data, offset)
    with _SEEK_WRITE:
        os.lseek(fd, offset, os.SEEK_SET)
        return os.write(fd, data)


def _pwrite(fd: int, data: np.ndarray, offset: int) -> None:
    """Write all of ``data`` at ``offset``; a file system that refuses a direct write gets buffered ones."""
    view, direct, buffered = data.data.cast("B"), getattr(os, "O_DIRECT", 0), False
    while view:
        try:
            written = _write_at(fd, view, offset)
        except OSError as error:
            if error.errno != errno.EINVAL or not direct or buffered:
                raise
            import fcntl  # POSIX only, like O_DIRECT

            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~direct)
            buffered = True
            continue
        view, offset = view[written:], offset + written


#: Texts embedded per chunk by ``psp-st embed`` (streamed, and each shard of a sharded job): its RAM bound.
EMBED_CHUNK_ROWS = 16_384
#: Pairs scored per chunk by ``psp-st score``: its RAM bound.
SCORE_CHUNK_ROWS = 50_000


def embed_file(
    model,
    input_path: str | os.PathLike,
    output_path: str | os.PathLike,
    chunk_size: int = EMBED_CHUNK_ROWS,
    float16: bool = False,
    normalize: bool = False,
    show_progress_bar: bool = True,
) -> tuple[int, int]:
    """Embed every line of ``input_path`` (UTF-8) into the ``.npy`` file ``output_path``; return the array shape.

    Row ``i`` is line ``i + 1`` (an empty line is the empty text). Memory stays at two chunks: I/O threads read the
    next chunk and write the previous one while the current one is embedded in place; the file appears when complete.
    """
    check_int("chunk_size (--chunk-size)", chunk_size)
    input_path = check_input_file(input_path)  # a pipe: refused before count_lines reads it up
    total = count_lines(input_path)
    chunk_size = min(chunk_size, max(total, 1))  # the buffers hold a chunk: never more rows than the file has
    dim = model.get_embedding_dimension()
    dtype = np.dtype(np.float16 if float16 else np.float32)
    row_bytes = dim * dtype.itemsize
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        header, {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": (total, dim)}
    )
    size = header.tell() + total * row_bytes
    # each buffer: the bytes of the last unwritten block (< _ALIGN) first, then the chunk's rows
    buffers = [_aligned_bytes(_ALIGN + chunk_size * row_bytes) for _ in range(2)]
    with (
        atomic_path(output_path) as tmp,
        progress_bar(total=total, desc="embed", unit="line", disable=not show_progress_bar) as bar,
    ):
        reserve_space(tmp, size, final=output_path)  # ENOSPC now, not in the middle of the job
        fd = _open_unbuffered(tmp)
        try:
            carry = np.frombuffer(header.getvalue(), dtype=np.uint8)  # the file's bytes from `offset` on, not written
            offset = 0
            with ThreadPoolExecutor(max_workers=2) as pool:
                blocks = iter_line_blocks(input_path, chunk_size)
                reading = pool.submit(next, blocks, None)
                writing: list[Future | None] = [None, None]
                for index in itertools.count():
                    block = reading.result()
                    if block is None:
                        break
                    texts = block[1]
                    reading = pool.submit(next, blocks, None)
                    buffer, head = buffers[index % 2], len(carry)
                    if (previous := writing[index % 2]) is not None:
                        previous.result()  # this buffer's last chunk is on disk: the buffer is free again
                    end = head + len(texts) * row_bytes
                    rows = buffer[head:end].view(dtype).reshape(len(texts), dim)
                    if not isinstance(model, PSPEngine):
                        rows[...] = encode_texts(model, texts, normalize=normalize, dtype=dtype)
                    else:
                        try:
                            model.encode(texts, normalize=normalize, dtype=dtype, out=rows)
                        except NonFiniteOutputError:  # rows are filled: name the row of the whole output
                            check_finite(rows, start=block[0] - 1)
                            raise
                    buffer[:head] = carry
                    aligned = end - end % _ALIGN
                    carry = buffer[aligned:end].copy()
                    if aligned:
                        writing[index % 2] = pool.submit(_pwrite, fd, buffer[:aligned], offset)
                        offset += aligned
                    bar.update(len(texts))
            if len(carry):  # the last partial block: written whole (direct I/O), then the file cut to size
                tail = _aligned_bytes(_ALIGN)
                tail[: len(carry)] = carry
                tail[len(carry) :] = 0
                _pwrite(fd, tail, offset)
                os.ftruncate(fd, size)
        finally:
            os.close(fd)
    return total, dim


def _split_pair(path: Path, number: int, text: str) -> tuple[str, str]:
    fields = text.split("\t")
    if len(fields) != 2:
        what = "an empty line" if text == "" else f"{len(fields)} field(s)"
        raise ValueError(f"{path}:{number}: expected 2 tab-separated sentences, got {what}")
    return fields[0], fields[1]


def no_known_piece(model, vectors: np.ndarray, normalize: bool = True) -> np.ndarray:
    """Which rows of ``vectors`` are a :class:`PSPEngine`'s ``<unk>`` vector (texts with no known piece; else none)."""
    if not isinstance(model, PSPEngine):
        return np.zeros(len(vectors), dtype=bool)
    return (vectors == encode_texts(model, [""], normalize=normalize)[0]).all(axis=1)


def _pair_cosines(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Row-wise cosines for ``score`` in float64, in [-1, 1] (a zero row: 0); not evaluation's ``cosine_pairs`` (ST's
    float32 ``pairwise_cos_sim``): float32 unit vectors leave identical texts at 1 +- 1e-6, printed 1.000001 or
    0.999999 (N8-2 in benchmarks/results/audit_round8/numerics_findings.md)."""
    units = [rows.astype(np.float64) for rows in (left, right)]
    for rows in units:
        rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
    return np.clip(np.einsum("ij,ij->i", *units), -1.0, 1.0)


def score_file(
    model,
    pairs_path: str | os.PathLike,
    output_path: str | os.PathLike,
    chunk_size: int = SCORE_CHUNK_ROWS,
    header: bool = False,
    show_progress_bar: bool = True,
) -> int:
    """Write each ``sentence1<TAB>sentence2`` line of ``pairs_path`` with a third column, their cosine; return the
    number of pairs. A line without exactly one tab raises :class:`ValueError` naming its number (nothing is written);
    ``header``: the first line gets a ``cosine`` column. Pairs with a side that has no known piece get one warning."""
    pairs_path = check_input_file(pairs_path)  # a pipe: refused before count_lines reads it up
    total = count_lines(pairs_path)
    scored = unknown = 0
    with (
        atomic_path(output_path) as tmp,
        open(tmp, "w", encoding="utf-8") as out,
        progress_bar(total=total, desc="score", unit="line", disable=not show_progress_bar) as bar,
    ):
        for first, texts in iter_line_blocks(pairs_path, chunk_size):
            if header and first == 1:
                out.write(f"{texts[0]}\tcosine\n")
                texts, first = texts[1:], 2
                bar.update(1)
            pairs = [_split_pair(pairs_path, number, text) for number, text in enumerate(texts, start=first)]
            left = encode_texts(model, [a for a, _ in pairs])
            right = encode_texts(model, [b for _, b in pairs])
            cosines = _pair_cosines(left, right)
            unknown += int(
                (no_known_piece(model, left, normalize=False) | no_known_piece(model, right, normalize=False)).sum()
            )
            out.writelines(f"{a}\t{b}\t{c:.6f}\n" for (a, b), c in zip(pairs, cosines, strict=True))
            scored += len(pairs)
            bar.update(len(pairs))
    if unknown:
        logger.warning(
            "%s: %d of %d pairs have a side with no known piece (empty, or only characters the model does not know): "
            "that side is the <unk> vector, so their cosine says nothing about meaning",
            pairs_path,
            unknown,
            scored,
        )
    return scored

"""Line-oriented text files with errors that name the file and line number."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from psp_st.arguments import check_int


def count_lines(path: str | os.PathLike) -> int:
    """Number of lines of ``path`` (a last line without a newline counts), read in 1 MiB blocks."""
    count, last = 0, b"\n"
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


def iter_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` with the line ending removed; invalid UTF-8 raises naming the line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"input file not found: {path}")
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as error:
                raise ValueError(f"{path}:{number}: line is not valid UTF-8 ({error.reason})") from None
            yield number, text.rstrip("\r\n")


def iter_line_chunks(path: str | os.PathLike, chunk_size: int) -> Iterator[list[tuple[int, str]]]:
    """:func:`iter_lines` grouped into lists of at most ``chunk_size`` lines (an integer >= 1)."""
    check_int("chunk_size (--chunk-size)", chunk_size)
    chunk: list[tuple[int, str]] = []
    for item in iter_lines(path):
        chunk.append(item)
        if len(chunk) == chunk_size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk

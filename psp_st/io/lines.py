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


def line_offsets(path: str | os.PathLike, every: int) -> tuple[list[int], int]:
    """Byte offsets of lines ``0, every, 2 * every, ...`` of ``path`` and its line count (:func:`count_lines` rule).

    One pass in 1 MiB blocks; lets a large file be cut into shards of ``every`` lines that are read independently.
    """
    if every < 1:
        raise ValueError(f"lines per shard must be >= 1, got {every}")
    offsets, count, position, last = [0], 0, 0, b"\n"
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            start = 0
            while (found := block.find(b"\n", start)) != -1:
                count += 1
                start = found + 1
                if count % every == 0:
                    offsets.append(position + start)
            position += len(block)
            last = block[-1:]
    total = count + (last != b"\n")
    if offsets[-1] >= position and len(offsets) > 1:
        offsets.pop()  # the file ends exactly on a shard boundary
    return offsets, total


def read_line_range(path: str | os.PathLike, byte_start: int, byte_stop: int, first_line: int) -> list[str]:
    """The lines stored in bytes ``[byte_start, byte_stop)`` of ``path`` (line endings removed).

    ``first_line`` is the 1-based number of the first of them, so invalid UTF-8 is reported as in :func:`iter_lines`.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"input file not found: {path}")
    with open(path, "rb") as handle:
        handle.seek(byte_start)
        data = handle.read(byte_stop - byte_start)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    texts = []
    for number, raw in enumerate(lines, start=first_line):
        try:
            texts.append(raw.decode("utf-8").rstrip("\r"))
        except UnicodeDecodeError as error:
            raise ValueError(f"{path}:{number}: line is not valid UTF-8 ({error.reason})") from None
    return texts

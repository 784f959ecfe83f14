"""Line-oriented text files with errors that name the file and line number."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

from psp_st.arguments import check_int

#: Longest line (characters) the line readers accept: one sentence (or paragraph) per line, never a whole file.
#: Embedding cost grows with a text's length; a longer line is refused naming it, before it is tokenized.
MAX_LINE_CHARS = 1_000_000
#: A block of lines is cut short once it holds this many characters: embedding a block takes ~20 bytes a character.
MAX_BLOCK_CHARS = 1 << 24
#: Leading bytes of compressed files, named when one is handed to a line reader (which reads plain UTF-8 text).
COMPRESSED_MAGIC = {
    b"\x1f\x8b": "gzip",
    b"BZh": "bzip2",
    b"\xfd7zXZ\x00": "xz",
    b"\x28\xb5\x2f\xfd": "zstd",
    b"PK\x03\x04": "zip",
}

#: What to do about a line that is not UTF-8 (a Latin-1 or Windows-1252 export, the usual case).
RE_ENCODE = "save the file as UTF-8 (from Latin-1: iconv -f latin1 -t utf-8 IN > OUT)"
#: Byte order marks of the other Unicode encodings (UTF-32's first: UTF-16 LE's is a prefix of UTF-32 LE's).
UNICODE_BOMS = {
    b"\xff\xfe\x00\x00": "utf-32",
    b"\x00\x00\xfe\xff": "utf-32",
    b"\xff\xfe": "utf-16",
    b"\xfe\xff": "utf-16",
}


def re_encode_hint(first_bytes: bytes) -> str:
    """What to do about a file that is not UTF-8, given its first bytes: :data:`RE_ENCODE`, or for a file that starts
    with a UTF-16/32 byte order mark (Windows' "Unicode" text) the iconv command from that encoding."""
    encoding = next((name for bom, name in UNICODE_BOMS.items() if first_bytes.startswith(bom)), None)
    if encoding is None:
        return RE_ENCODE
    return f"the file is {encoding.upper()} (byte order mark): save it as UTF-8 (iconv -f {encoding} -t utf-8 IN > OUT)"


def utf16_hint(first_line: bytes) -> str | None:
    """What to do about a file whose first line (bytes) looks like UTF-16 without a byte order mark, else None.

    Such a file is valid UTF-8 (ASCII letters and NUL bytes), so it would be read as other text with no error: the
    sign is a NUL at every other byte of a line of two or more characters, and none between (a NUL here and there
    stays text)."""
    line = first_line.split(b"\n", 1)[0]
    if len(line) < 4:
        return None
    even, odd = line[0::2], line[1::2]
    encoding = None
    if odd.count(0) == len(odd) and 0 not in even:
        encoding = "utf-16le"
    elif even.count(0) == len(even) and 0 not in odd:
        encoding = "utf-16be"
    if encoding is None:
        return None
    return (
        f"the file looks like {encoding.upper()} without a byte order mark (a NUL at every other byte): save it as "
        f"UTF-8 (iconv -f {encoding} -t utf-8 IN > OUT)"
    )


#: Why a file or folder name cannot be passed to a library that takes UTF-8 names (pyarrow, tokenizers, Ray), and the fix.
NAME_NOT_UTF8 = (
    "a file or folder name is not UTF-8 here (non-ASCII letters under an ASCII locale, LANG=C with PYTHONUTF8=0, or "
    "bytes that are no UTF-8), and the library reading it takes UTF-8 names only: set PYTHONUTF8=1 (or a UTF-8 "
    "locale, e.g. LANG=C.UTF-8), or rename it"
)


def check_input_file(path: str | os.PathLike) -> Path:
    """``path`` if it is a regular file; else an OSError naming it (missing, a folder) or, for a pipe, a device or
    ``/dev/stdin`` fed by one, a ValueError saying to save the text to a file (inputs are read by name)."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.exists():
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path))
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    raise ValueError(
        f"{path} is a pipe or a device, not a file: psp-st reads its inputs from files; save the text to a file first "
        "(e.g. COMMAND > input.txt) and pass that"
    )


def too_long_error(path: str | os.PathLike, number: int, length: str) -> ValueError:
    return ValueError(
        f"{path}:{number}: line has {length} characters; the limit is {MAX_LINE_CHARS:,} per text (one text per "
        "line: split long texts, or check the file's line endings)"
    )


def count_lines(path: str | os.PathLike) -> int:
    """Number of lines of ``path`` (a last line without a newline counts), read in 1 MiB blocks."""
    count, last = 0, b"\n"
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            count += block.count(b"\n")
            last = block[-1:]
    return count + (last != b"\n")


def decode_lines(data: bytes, path: str | os.PathLike, first_line: int) -> list[str]:
    """The lines of ``data`` (UTF-8, ``\\n``-separated, no final newline; trailing ``\\r`` removed), decoded in one
    pass; invalid UTF-8 raises naming ``path`` and the line (``first_line``: data's first, 1 drops a byte order mark),
    or, for a compressed file (:data:`COMPRESSED_MAGIC`), its format."""
    if first_line == 1 and data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if first_line == 1 and (hint := utf16_hint(data)):
        raise ValueError(f"{path}:1: {hint}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        kind = next((kind for magic, kind in COMPRESSED_MAGIC.items() if data.startswith(magic)), None)
        if first_line == 1 and kind:
            raise ValueError(f"{path} is a {kind} file: decompress it first (this reads plain UTF-8 text)") from None
        number = first_line + data.count(b"\n", 0, error.start)
        hint = re_encode_hint(data) if first_line == 1 else RE_ENCODE
        raise ValueError(f"{path}:{number}: line is not valid UTF-8 ({error.reason}); {hint}") from None
    lines = text.split("\n")
    if len(text) > MAX_LINE_CHARS and len(longest := max(lines, key=len)) > MAX_LINE_CHARS:
        raise too_long_error(path, first_line + lines.index(longest), f"{len(longest):,}")
    if "\r" in text:
        lines = [line.rstrip("\r") for line in lines]
    return lines


def iter_line_blocks(
    path: str | os.PathLike,
    block_lines: int,
    read_bytes: int = 1 << 22,
    byte_start: int = 0,
    byte_stop: int | None = None,
    first_line: int = 1,
) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(first_line_number, texts)`` of up to ``block_lines`` lines (fewer past about :data:`MAX_BLOCK_CHARS`
    characters); each ``read_bytes`` block's whole lines are decoded at once; invalid UTF-8 raises naming the line.
    Only bytes ``[byte_start, byte_stop)`` are read (a shard of the file), ``first_line`` being the number of the
    first."""
    check_int("chunk_size (--chunk-size)", block_lines)
    path = check_input_file(path)
    pending: list[str] = []
    first, chars = first_line, 0  # line number of pending[0]; characters in pending
    rest = b""
    left = float("inf") if byte_stop is None else byte_stop - byte_start  # bytes of the range still to read
    with open(path, "rb") as handle:
        handle.seek(byte_start)
        while True:
            block = handle.read(int(min(read_bytes, left))) if left > 0 else b""
            left -= len(block)
            data = rest + block
            if block:
                cut = data.rfind(b"\n")
                if cut < 0:
                    if len(data) > 4 * MAX_LINE_CHARS:  # UTF-8: at most 4 bytes a character
                        raise too_long_error(path, first + len(pending), f"more than {MAX_LINE_CHARS:,}")
                    rest = data
                    continue
                data, rest = data[:cut], data[cut + 1 :]
            elif not data:
                break
            else:
                rest = b""  # the last line, without a newline
            new = decode_lines(data, path, first + len(pending))
            pending.extend(new)
            chars += sum(map(len, new))
            start = 0  # blocks are sliced off by position: cutting `pending` per block is quadratic in small blocks
            while len(pending) - start >= block_lines:
                lines = pending[start : start + block_lines]
                chars -= sum(map(len, lines))
                yield first + start, lines
                start += block_lines
            first, pending = first + start, pending[start:]
            if chars >= MAX_BLOCK_CHARS:
                yield first, pending
                first, pending, chars = first + len(pending), [], 0
            if not block:
                break
    if pending:
        yield first, pending


def iter_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """Yield ``(line_number, text)`` with the line ending removed; invalid UTF-8 raises naming the line."""
    for first, texts in iter_line_blocks(path, 1 << 16):
        yield from enumerate(texts, start=first)


def line_offsets(path: str | os.PathLike, every: int) -> tuple[list[int], int]:
    """Byte offsets of lines ``0, every, 2 * every, ...`` of ``path`` (shards read independently) and its line count
    (:func:`count_lines` rule)."""
    check_int("lines per shard", every)
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

"""Line readers: the block reader gives the lines of the file, whatever the block boundaries."""

from __future__ import annotations

import pytest

from psp_st.io.lines import count_lines, iter_line_blocks

TEXT = "a man rides\r\n\ntwo kids play\nné café\r\r\nlast line without newline"


@pytest.mark.parametrize("read_bytes", [1, 5, 7, 1 << 22])
def test_blocks_join_to_the_files_lines(tmp_path, read_bytes):
    path = tmp_path / "in.txt"
    path.write_bytes(TEXT.encode("utf-8"))
    blocks = list(iter_line_blocks(path, 2, read_bytes=read_bytes))
    expected = [line.rstrip("\r") for line in TEXT.split("\n")]
    assert [text for _, texts in blocks for text in texts] == expected
    assert [first for first, _ in blocks] == list(range(1, len(expected) + 1, 2))
    assert count_lines(path) == len(expected)


@pytest.mark.parametrize("read_bytes", [1, 1 << 22])
def test_a_leading_byte_order_mark_is_not_text(tmp_path, read_bytes):
    path = tmp_path / "in.txt"
    path.write_bytes("\ufeffone\ntwo\n".encode())
    assert [text for _, texts in iter_line_blocks(path, 1, read_bytes=read_bytes) for text in texts] == ["one", "two"]


@pytest.mark.parametrize("read_bytes", [3, 1 << 22])
def test_invalid_utf8_names_its_line(tmp_path, read_bytes):
    path = tmp_path / "in.txt"
    path.write_bytes(b"one\ntwo\nthr\xffee\nfour\n")
    with pytest.raises(ValueError, match=r"in.txt:3: line is not valid UTF-8 .*; save the file as UTF-8"):
        list(iter_line_blocks(path, 100, read_bytes=read_bytes))


def test_a_compressed_file_is_named_as_one(tmp_path):
    """`psp-st embed --input s.txt.gz` said "s.txt.gz:1: line is not valid UTF-8", as if the text were damaged."""
    import gzip

    path = tmp_path / "in.txt.gz"
    path.write_bytes(gzip.compress(b"one\ntwo\n" * 1000))
    with pytest.raises(ValueError, match=r"in\.txt\.gz is a gzip file: decompress it first"):
        list(iter_line_blocks(path, 100))


def test_a_utf16_file_is_named_as_one(tmp_path):
    """Z6-12: the remedy for a UTF-16 file (Windows' "Unicode" text) was the Latin-1 iconv, which makes garbage."""
    path = tmp_path / "in.txt"
    path.write_bytes("a dog\nthe cat\n".encode("utf-16"))
    with pytest.raises(ValueError, match=r"in\.txt:1: .*the file is UTF-16 .*iconv -f utf-16 -t utf-8"):
        list(iter_line_blocks(path, 100))


@pytest.mark.parametrize("encoding", ["utf-16le", "utf-16be"])
def test_a_utf16_file_without_a_byte_order_mark_is_named_as_one(tmp_path, encoding):
    """It is valid UTF-8 (letters and NULs): read as text, it embedded as other sentences with no error."""
    path = tmp_path / "in.txt"
    path.write_bytes("a dog\nthe cat\n".encode(encoding))
    with pytest.raises(ValueError, match=rf"in\.txt:1: .*looks like {encoding.upper()} .*iconv -f {encoding} -t utf-8"):
        list(iter_line_blocks(path, 100))


def test_a_nul_here_and_there_is_text(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\x00b c d\n\x00\x00\n")
    assert list(iter_line_blocks(path, 100)) == [(1, ["a\x00b c d", "\x00\x00"])]


@pytest.mark.parametrize("read_bytes", [8, 1 << 22])  # the long line spans reads / fits in one read
def test_a_line_over_the_length_limit_is_refused_naming_it(tmp_path, monkeypatch, read_bytes):
    import psp_st.io.lines as lines

    monkeypatch.setattr(lines, "MAX_LINE_CHARS", 10)
    path = tmp_path / "in.txt"
    path.write_text("short\n" + "é" * 10 + "\n" + "x" * 100 + "\nlast\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"in\.txt:3: line has .* characters; the limit is 10 per text"):
        list(lines.iter_line_blocks(path, 2, read_bytes=read_bytes))


def test_a_block_of_long_lines_is_cut_short_by_characters(tmp_path, monkeypatch):
    import psp_st.io.lines as lines

    monkeypatch.setattr(lines, "MAX_BLOCK_CHARS", 200, raising=False)
    path = tmp_path / "in.txt"
    expected = [f"{i:02d}" + "x" * 38 for i in range(50)]
    path.write_text("\n".join(expected) + "\n", encoding="utf-8")
    blocks = list(lines.iter_line_blocks(path, 1000, read_bytes=64))  # embed's memory grows with a block's characters
    assert [text for _, texts in blocks for text in texts] == expected
    assert [first for first, _ in blocks] == [1 + sum(len(t) for _, t in blocks[:i]) for i in range(len(blocks))]
    assert max(sum(map(len, texts)) for _, texts in blocks) <= 200 + 64 + 40


def test_small_blocks_are_read_in_linear_time(tmp_path):
    import time

    path = tmp_path / "in.txt"
    path.write_bytes(b"\n" * 100_000)  # one read; cutting the pending list per block took 5 s (quadratic)
    started = time.perf_counter()
    assert sum(len(texts) for _, texts in iter_line_blocks(path, 1)) == 100_000
    assert time.perf_counter() - started < 1.0


def test_a_range_holding_one_empty_line_reads_that_line(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"a cat\nthe dog\n\n")

    def read(start: int, stop: int, first_line: int) -> list[str]:
        blocks = iter_line_blocks(path, 1 << 62, byte_start=start, byte_stop=stop, first_line=first_line)
        return [text for _, texts in blocks for text in texts]

    assert read(14, 15, 3) == [""]
    assert read(0, 14, 1) == ["a cat", "the dog"]
    assert read(15, 15, 4) == []

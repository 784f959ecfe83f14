from __future__ import annotations

import errno
import os

import numpy as np
import pytest

from psp_st.inference import PSPEngine, embed_file

DIRECT = getattr(os, "O_DIRECT", 0)


@pytest.fixture
def engine(sp_tokenizer):
    # 48 float32 = 192 bytes a row: chunks and the 128-byte header straddle the 4096-byte write blocks
    weights = np.random.default_rng(0).standard_normal((sp_tokenizer.vocab_size, 48)).astype(np.float32)
    return PSPEngine(weights, sp_tokenizer, threads=1)


@pytest.fixture
def lines(caption_sentences):
    return [*caption_sentences[:150], "", "last line"]


@pytest.fixture
def lines_file(lines, tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def _np_save_bytes(array: np.ndarray, tmp_path) -> bytes:
    np.save(tmp_path / "reference.npy", array)
    return (tmp_path / "reference.npy").read_bytes()


@pytest.mark.parametrize(("chunk_size", "float16"), [(1, False), (7, True), (40, False), (16_384, True)])
def test_output_is_byte_identical_to_np_save(engine, lines, lines_file, tmp_path, chunk_size, float16):
    out = tmp_path / "out.npy"
    dtype = np.float16 if float16 else np.float32
    assert embed_file(engine, lines_file, out, chunk_size=chunk_size, float16=float16, show_progress_bar=False) == (
        len(lines),
        48,
    )
    assert out.read_bytes() == _np_save_bytes(engine.encode(lines, dtype=dtype), tmp_path)


def test_a_chunk_size_beyond_the_files_lines_allocates_for_the_file(engine, lines, lines_file, tmp_path):
    out = tmp_path / "out.npy"  # two 10**12-row buffers (175 TiB each) were allocated up front: MemoryError
    assert embed_file(engine, lines_file, out, chunk_size=10**12, show_progress_bar=False) == (len(lines), 48)
    assert out.read_bytes() == _np_save_bytes(engine.encode(lines), tmp_path)


def test_empty_input_gives_an_empty_array(engine, tmp_path):
    (tmp_path / "in.txt").write_bytes(b"")
    embed_file(engine, tmp_path / "in.txt", tmp_path / "out.npy", show_progress_bar=False)
    assert (tmp_path / "out.npy").read_bytes() == _np_save_bytes(np.zeros((0, 48), np.float32), tmp_path)


def _probe_direct(folder) -> None:
    if not DIRECT:
        pytest.skip("no O_DIRECT on this platform")
    try:
        os.close(os.open(folder / "probe", os.O_WRONLY | os.O_CREAT | DIRECT))
    except OSError:
        pytest.skip("this file system has no direct I/O")


def test_writes_bypass_the_page_cache(engine, lines_file, tmp_path, monkeypatch):
    import fcntl

    _probe_direct(tmp_path)
    real, direct_writes = os.pwrite, []

    def spy(fd, data, offset):
        direct_writes.append(bool(fcntl.fcntl(fd, fcntl.F_GETFL) & DIRECT))
        return real(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", spy)
    embed_file(engine, lines_file, tmp_path / "out.npy", chunk_size=40, show_progress_bar=False)
    assert direct_writes and all(direct_writes)


def test_refused_direct_writes_fall_back_to_buffered_ones(engine, lines, lines_file, tmp_path, monkeypatch):
    import fcntl

    _probe_direct(tmp_path)
    real, refused = os.pwrite, []

    def no_direct(fd, data, offset):
        if fcntl.fcntl(fd, fcntl.F_GETFL) & DIRECT:
            refused.append(offset)
            raise OSError(errno.EINVAL, "Invalid argument")
        return real(fd, data, offset)

    monkeypatch.setattr(os, "pwrite", no_direct)
    embed_file(engine, lines_file, tmp_path / "out.npy", chunk_size=40, show_progress_bar=False)
    assert refused and (tmp_path / "out.npy").read_bytes() == _np_save_bytes(engine.encode(lines), tmp_path)


def test_file_system_without_direct_io_gets_buffered_writes(engine, lines, lines_file, tmp_path, monkeypatch):
    real = os.open

    def no_direct(path, flags, *args):
        if flags & DIRECT:
            raise OSError(errno.EINVAL, "Invalid argument")
        return real(path, flags, *args)

    monkeypatch.setattr(os, "open", no_direct)
    embed_file(engine, lines_file, tmp_path / "out.npy", chunk_size=40, show_progress_bar=False)
    assert (tmp_path / "out.npy").read_bytes() == _np_save_bytes(engine.encode(lines), tmp_path)


@pytest.mark.parametrize(
    "missing", [["posix_fallocate"], ["posix_fallocate", "pwrite", "O_DIRECT"]], ids=["macos", "windows"]
)
def test_an_os_without_fallocate_or_pwrite_embeds_the_same_bytes(
    engine, lines, lines_file, tmp_path, monkeypatch, missing
):
    """P6-11: macOS has no os.posix_fallocate, Windows neither nor os.pwrite: embed_file raised AttributeError."""
    for name in missing:
        monkeypatch.delattr(os, name, raising=False)
    embed_file(engine, lines_file, tmp_path / "out.npy", chunk_size=7, show_progress_bar=False)
    assert (tmp_path / "out.npy").read_bytes() == _np_save_bytes(engine.encode(lines), tmp_path)


def test_float16_overflow_is_refused_naming_the_row(engine, tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("\n".join(["", "a dog", "a cat"]) + "\n", encoding="utf-8")  # "": the <unk> vector
    unk = engine.tokenizer.unk_id
    engine.weights[np.arange(len(engine.weights)) != unk] *= 1e6  # finite float32, beyond float16's 65504
    with pytest.raises(ValueError, match=r"row 1\b.*float32 output"):
        embed_file(engine, path, tmp_path / "out.npy", chunk_size=1, float16=True)
    assert not (tmp_path / "out.npy").exists()
    embed_file(engine, path, tmp_path / "out.npy", chunk_size=1)  # float32 works


def test_score_warns_once_about_pairs_with_no_known_piece(engine, tmp_path, caplog):
    from psp_st.inference import score_file

    path = tmp_path / "pairs.tsv"
    path.write_text("😀😀\t你好世界\na dog runs\ta dog runs\n\ta cat\n", encoding="utf-8")
    score_file(engine, path, tmp_path / "out.tsv", show_progress_bar=False)
    warnings = [record.getMessage() for record in caplog.records if record.levelname == "WARNING"]
    assert len(warnings) == 1 and "2 of 3 pairs have a side with no known piece" in warnings[0]


@pytest.mark.parametrize("command", ["embed", "score"])
def test_an_output_that_cannot_be_created_shows_no_bar(engine, lines_file, tmp_path, capsys, command):
    from psp_st.inference import score_file

    (tmp_path / "afile").write_text("")
    write = embed_file if command == "embed" else score_file
    with pytest.raises(OSError):
        write(engine, lines_file, tmp_path / "afile" / "out", show_progress_bar=True)
    assert command not in capsys.readouterr().err


def test_score_of_identical_texts_is_exactly_one(engine, caption_sentences, tmp_path):
    """N8-2: float32 unit vectors printed identical texts' cosine as 1.000001 or 0.999999 (~1 in 10 at d=384)."""
    from psp_st.inference import score_file

    weights = np.random.default_rng(0).standard_normal((engine.vocab_size, 384)).astype(np.float32)
    engine = PSPEngine(weights, engine.tokenizer, threads=1)

    path = tmp_path / "pairs.tsv"
    path.write_text("".join(f"{text}\t{text}\n" for text in caption_sentences[:300]), encoding="utf-8")
    score_file(engine, path, tmp_path / "out.tsv", show_progress_bar=False)
    cosines = {line.rsplit("\t", 1)[1] for line in (tmp_path / "out.tsv").read_text(encoding="utf-8").splitlines()}
    assert cosines == {"1.000000"}

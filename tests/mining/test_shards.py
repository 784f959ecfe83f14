"""Shard plans over text and Parquet inputs, shard outputs with checksums, resume, and the sharded embed job."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from psp_st.io.lines import line_offsets
from psp_st.mining.embed_shards import embed_shards
from psp_st.mining.shards import ShardStore, input_files, plan_shards, read_shard_texts


@pytest.mark.parametrize("ending", ["\n", ""])
def test_text_shards_cover_every_line_once(tmp_path, ending):
    lines = ["one", "", "three é", "four", "five", "six", "seven"]
    path = tmp_path / "in.txt"
    path.write_text("\n".join(lines) + ending, encoding="utf-8")
    shards = plan_shards([path], shard_rows=3)
    assert [(s.start, s.stop, s.row) for s in shards] == [(0, 3, 0), (3, 6, 3), (6, 7, 6)]
    assert [text for shard in shards for text in read_shard_texts(shard)] == lines


def test_line_offsets_when_the_file_ends_on_a_shard_boundary(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\nb\nc\nd\n")
    assert line_offsets(path, 2) == ([0, 4], 4)


def test_bad_utf8_is_reported_with_its_line_number(tmp_path):
    path = tmp_path / "in.txt"
    path.write_bytes(b"ok\nok\nok\nbad \xff\n")
    shard = plan_shards([path], shard_rows=2)[1]
    with pytest.raises(ValueError, match=r"in.txt:4: line is not valid UTF-8"):
        read_shard_texts(shard)


def test_parquet_shards_span_row_groups_and_files(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = [f"sentence {i}" for i in range(23)]
    texts[5] = None
    pq.write_table(pa.table({"sentence": texts[:13]}), tmp_path / "a.parquet", row_group_size=4)
    pq.write_table(pa.table({"sentence": texts[13:]}), tmp_path / "b.parquet", row_group_size=3)
    files = input_files(tmp_path)
    shards = plan_shards(files, shard_rows=5)
    assert [s.rows for s in shards] == [5, 5, 3, 5, 5]
    assert [t for shard in shards for t in read_shard_texts(shard)] == [t or "" for t in texts]
    with pytest.raises(ValueError, match="no column 'text'"):
        plan_shards(files, shard_rows=5, column="text")


def test_embed_shards_writes_manifest_and_resumes_without_recomputing(
    psp_model_dir, psp_module, caption_file, tmp_path
):
    out = tmp_path / "vectors"
    manifest = embed_shards(caption_file, out, str(psp_model_dir), shard_rows=300, normalize=True)
    lines = caption_file.read_text(encoding="utf-8").splitlines()
    assert manifest["rows"] == len(lines) and [r["rows"] for r in manifest["shards"]] == [300, 300, 200]
    vectors = np.concatenate([np.load(out / r["file"]) for r in manifest["shards"]])
    np.testing.assert_allclose(vectors, psp_module.embed(lines, normalize=True), rtol=1e-5, atol=1e-6)
    assert json.loads((out / "manifest.json").read_text())["shards"][0]["sha256"] == manifest["shards"][0]["sha256"]

    before = {p.name: p.stat().st_mtime_ns for p in out.glob("part-*.npy")}
    (out / "part-00001.npy").write_bytes(b"damaged")  # a torn shard: its checksum no longer matches
    embed_shards(caption_file, out, str(psp_model_dir), shard_rows=300, normalize=True)
    after = {p.name: p.stat().st_mtime_ns for p in out.glob("part-*.npy")}
    assert after["part-00000.npy"] == before["part-00000.npy"] and after["part-00002.npy"] == before["part-00002.npy"]
    np.testing.assert_array_equal(np.load(out / "part-00001.npy"), vectors[300:600])


def test_a_folder_of_another_job_is_refused(psp_model_dir, caption_file, tmp_path):
    embed_shards(caption_file, tmp_path / "v", str(psp_model_dir), shard_rows=500)
    with pytest.raises(ValueError, match="holds another job"):
        embed_shards(caption_file, tmp_path / "v", str(psp_model_dir), shard_rows=500, normalize=True)


def test_a_job_started_by_another_psp_st_version_is_not_resumed(tmp_path, monkeypatch):
    """W3 (audit 7): shards computed by another psp-st were kept and the rest computed by this one, mixing vectors
    of two versions in one output (zeros and <unk> for texts with no known piece, across the F16 change)."""
    import psp_st

    path = tmp_path / "in.txt"
    path.write_text("a\nb\n", encoding="utf-8")
    shards = plan_shards([path], shard_rows=1)
    monkeypatch.setattr(psp_st, "__version__", "0.0.1")
    ShardStore(tmp_path / "out", ".npy").pending({"kind": "test"}, shards)
    monkeypatch.setattr(psp_st, "__version__", "0.0.2")
    with pytest.raises(ValueError, match="started by psp-st 0.0.1, not by this psp-st 0.0.2: pass --overwrite"):
        ShardStore(tmp_path / "out", ".npy").pending({"kind": "test"}, shards)


def test_unfinished_job_has_no_manifest(tmp_path):
    path = tmp_path / "in.txt"
    path.write_text("a\nb\n", encoding="utf-8")
    shards = plan_shards([path], shard_rows=1)
    store = ShardStore(tmp_path / "out", ".npy")
    store.pending({"kind": "test"}, shards)
    store.write(shards[0], vectors=np.zeros((1, 2)))
    with pytest.raises(RuntimeError, match="shard 1 .* is not done"):
        store.finish({"kind": "test"}, shards)
    assert not (tmp_path / "out" / "manifest.json").exists()


def test_a_same_size_edit_of_the_input_is_refused_and_overwrite_starts_over(
    psp_model_dir, psp_module, caption_file, tmp_path
):
    out = tmp_path / "v"
    embed_shards(caption_file, out, str(psp_model_dir), shard_rows=300)
    lines = caption_file.read_text(encoding="utf-8").splitlines()
    caption_file.write_text("\n".join(lines[400:] + lines[:400]) + "\n", encoding="utf-8")  # same bytes, reordered
    with pytest.raises(ValueError, match=r"the input .*captions.txt changed since the job .* pass --overwrite"):
        embed_shards(caption_file, out, str(psp_model_dir), shard_rows=300)
    manifest = embed_shards(caption_file, out, str(psp_model_dir), shard_rows=300, overwrite=True)
    vectors = np.concatenate([np.load(out / r["file"]) for r in manifest["shards"]])
    np.testing.assert_allclose(vectors, psp_module.embed(lines[400:] + lines[:400]), rtol=1e-5, atol=1e-6)


def test_a_model_folder_rebuilt_in_place_is_refused(psp_model_dir, caption_file, tmp_path):
    embed_shards(caption_file, tmp_path / "v", str(psp_model_dir), shard_rows=500)
    weights = next(psp_model_dir.rglob("*.safetensors"))
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1  # one changed weight bit, same size
    weights.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="the model .* changed since the job"):
        embed_shards(caption_file, tmp_path / "v", str(psp_model_dir), shard_rows=500)


def test_a_parquet_row_group_much_larger_than_a_shard_is_warned_about(tmp_path, caplog):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"sentence": [f"s{i}" for i in range(100)]}), tmp_path / "one.parquet")  # one row group
    pq.write_table(pa.table({"sentence": ["x"] * 100}), tmp_path / "small.parquet", row_group_size=10)
    with caplog.at_level("WARNING", logger="psp_st.mining.shards"):
        assert len(plan_shards([tmp_path / "small.parquet"], 10)) == 10
        assert not caplog.records
        assert len(plan_shards([tmp_path / "one.parquet"], 10)) == 10
    assert "row groups of up to 100 rows" in caplog.text and "memory does not" in caplog.text


def test_a_shard_of_a_large_parquet_row_group_is_decoded_a_batch_at_a_time(tmp_path):
    """SC6/H2: each shard read (and held) its whole row group: memory grew with the row group, not the shard."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    texts = [f"{i:0100d}" for i in range(100_000)]  # one row group of 10 MB of text
    pq.write_table(pa.table({"sentence": texts}), tmp_path / "one.parquet", row_group_size=len(texts))
    code = (  # a fresh process: Arrow's peak allocation is per process
        "import sys, pyarrow as pa\n"
        "from psp_st.mining.shards import plan_shards, read_shard_texts\n"
        "texts = read_shard_texts(plan_shards([sys.argv[1]], 1000)[-2])\n"
        "print(texts[0], len(texts), pa.default_memory_pool().max_memory())\n"
    )
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "one.parquet")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]
    first, rows, peak = result.stdout.split()
    assert first == texts[98_000] and rows == "1000"
    assert int(peak) < 8_000_000  # a few pages and one batch (~4 MB), not the 10 MB column (was 20 MB)


def test_a_shard_written_in_blocks_is_np_save_and_a_failure_mid_shard_leaves_no_file(tmp_path):
    (tmp_path / "in.txt").write_text("a\nb\nc\nd\ne\n", encoding="utf-8")
    (shard,) = plan_shards([tmp_path / "in.txt"], 10)
    vectors = np.arange(15, dtype=np.float16).reshape(5, 3)
    np.save(tmp_path / "saved.npy", vectors)
    store = ShardStore(tmp_path / "blocks", ".npy")
    store.write_rows(shard, [vectors[:2], vectors[2:4], vectors[4:]])
    assert store.file(shard).read_bytes() == (tmp_path / "saved.npy").read_bytes() and store.record(shard)

    def killed():
        yield vectors[:2]
        raise RuntimeError("killed")

    store = ShardStore(tmp_path / "killed", ".npy")
    with pytest.raises(RuntimeError, match="killed"):
        store.write_rows(shard, killed())
    assert not list((tmp_path / "killed").iterdir()) and store.record(shard) is None  # no half file, no temp


def test_a_job_sweeps_its_folder_once_at_the_start_and_once_at_the_end_not_per_shard(tmp_path, monkeypatch):
    """F7-6: every shard write listed the whole folder, so a job of many small shards was quadratic."""
    import psp_st.io.atomic as atomic_module
    import psp_st.mining.shards as shards_module

    path = tmp_path / "in.txt"
    path.write_text("\n".join(f"line {i}" for i in range(40)) + "\n", encoding="utf-8")
    shards = plan_shards([path], shard_rows=1)
    passes = []
    sweep = atomic_module.sweep_temporaries
    monkeypatch.setattr(atomic_module, "sweep_temporaries", lambda *a: passes.append("write") or sweep(*a))
    monkeypatch.setattr(shards_module, "sweep_temporaries", lambda *a: passes.append("job") or sweep(*a))
    store = ShardStore(tmp_path / "out", ".npy")
    store.pending({"kind": "test"}, shards)
    for shard in shards:
        store.write(shard, vectors=np.zeros((1, 2)))
    store.finish({"kind": "test"}, shards)
    assert passes.count("job") == 2 and passes.count("write") == 2  # the plan and the manifest sweep for themselves


def test_a_job_removes_what_a_killed_worker_left_of_a_shard_when_it_finishes(tmp_path):
    import socket

    path = tmp_path / "in.txt"
    path.write_text("a\nb\n", encoding="utf-8")
    shards = plan_shards([path], shard_rows=1)
    store = ShardStore(tmp_path / "out", ".npy")
    store.pending({"kind": "test"}, shards)
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    stale = tmp_path / "out" / f".part-00001.npy.{socket.gethostname()}-{child.pid}.k1l2m3.tmp"  # killed mid-shard
    stale.write_bytes(b"half")
    for shard in shards:
        store.write(shard, vectors=np.zeros((1, 2)))
    store.finish({"kind": "test"}, shards)
    assert not stale.exists()


def test_a_local_job_with_a_sentence_transformers_model_leaves_the_callers_torch_threads(
    caption_file, distinct_captions, tmp_path
):
    """E14-3: the in-process workers ran torch on ``execution.threads`` (1) and left the caller's torch there."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as models

    vocab = sorted({word for text in distinct_captions[:50] for word in text.lower().split()})
    words = models.WordEmbeddings(models.tokenizer.WhitespaceTokenizer(vocab), torch.randn(len(vocab), 8))
    SentenceTransformer(modules=[words, models.Pooling(8)], device="cpu").save(str(tmp_path / "st"))
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        manifest = embed_shards(caption_file, tmp_path / "v", str(tmp_path / "st"), shard_rows=500)
        assert manifest["dim"] == 8 and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(threads)

"""The mining job end to end on real captions with a tiny P-SP model: margins by hand, filters counted, atomic output."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("faiss")

from psp_st.mining import pairs as pairs_module  # noqa: E402
from psp_st.mining.pairs import PAIR_COLUMNS, MiningConfig, mine_pairs  # noqa: E402


def _mine(model_dir, source, out, **settings):
    config = MiningConfig(**{"min_margin": 1.0, "shard_rows": 300, "recall_sample": 50, **settings})
    return mine_pairs(source, out, str(model_dir), config=config)


def test_margins_match_a_hand_computation_over_the_full_similarity_matrix(
    psp_model_dir, psp_module, caption_file, tmp_path
):
    report = _mine(psp_model_dir, caption_file, tmp_path / "pairs.parquet", k=4)
    pairs = pd.read_parquet(tmp_path / "pairs.parquet")
    assert list(pairs.columns) == list(PAIR_COLUMNS) and len(pairs) == report["pairs"] > 0
    lines = caption_file.read_text(encoding="utf-8").splitlines()
    vectors = psp_module.embed(lines, normalize=True).astype(np.float64)
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, -np.inf)
    mean = np.sort(sims, axis=1)[:, -4:].mean(axis=1)  # each sentence's 4 nearest others
    cosine = np.einsum("ij,ij->i", vectors[pairs.id1], vectors[pairs.id2])
    np.testing.assert_allclose(pairs.cosine, cosine, atol=1e-5)
    np.testing.assert_allclose(pairs.score, cosine / ((mean[pairs.id1] + mean[pairs.id2]) / 2), rtol=1e-4)
    assert (pairs.score >= 1.0).all() and (pairs.id1 < pairs.id2).all()
    assert [lines[i] for i in pairs.id1] == pairs.sentence1.tolist()
    assert report["index"] == "flat" and report["recall"]["recall"] == 1.0


def test_filters_are_applied_and_counted(psp_model_dir, distinct_captions, tmp_path):
    base = distinct_captions[:300]
    extra = [base[0], base[1] + "!", base[2] + " and so on and so forth for a while longer than before"]
    source = tmp_path / "s.txt"
    source.write_text("\n".join(base + extra) + "\n", encoding="utf-8")
    report = _mine(psp_model_dir, source, tmp_path / "p.parquet", max_length_ratio=1.5, max_trigram_overlap=0.5)
    counts = {step["filter"]: step for step in report["filters"]}
    assert report["source_repeats"] == 2  # the repeated sentence and the one with "!" added: collapsed
    assert counts["length_ratio"]["dropped"] >= 1
    assert counts["trigram_overlap"]["dropped"] >= 1
    chain = [step for step in report["filters"] if step["filter"] != "candidates"]
    for before, after in zip(chain, chain[1:], strict=False):  # each step sees what the previous one kept
        assert after["kept"] + after["dropped"] == before["kept"]
    assert chain[-1]["kept"] == report["pairs"]
    pairs = pd.read_parquet(tmp_path / "p.parquet")
    assert (pairs.length_ratio <= 1.5).all() and (pairs.trigram_overlap <= 0.5).all()
    assert json.loads((tmp_path / "p.json").read_text())["pairs"] == len(pairs)


def test_bitext_mining_pairs_each_source_with_its_translation(psp_model_dir, caption_sentences, tmp_path):
    sources = list(dict.fromkeys(caption_sentences))[:200]
    order = np.random.default_rng(0).permutation(200)
    (tmp_path / "x.txt").write_text("\n".join(sources) + "\n", encoding="utf-8")
    (tmp_path / "en.txt").write_text("\n".join(sources[i] + " today" for i in order) + "\n", encoding="utf-8")
    report = mine_pairs(
        tmp_path / "x.txt",
        tmp_path / "b.parquet",
        str(psp_model_dir),
        target=tmp_path / "en.txt",
        config=MiningConfig(strategy="max", min_margin=1.0, max_trigram_overlap=None, recall_sample=20),
    )
    pairs = pd.read_parquet(tmp_path / "b.parquet")
    correct = (order[pairs.id2.to_numpy()] == pairs.id1.to_numpy()).mean()
    assert report["mode"] == "bitext" and len(pairs) >= 150 and correct >= 0.95


def test_bitext_length_scale_keeps_translations_in_a_denser_script(psp_model_dir, caption_sentences, tmp_path, caplog):
    """XL1: a target 3x longer in characters (Chinese-English is ~3.5x) failed the unscaled --max-length-ratio 2."""
    sources = list(dict.fromkeys(caption_sentences))[:100]
    (tmp_path / "x.txt").write_text("\n".join(sources) + "\n", encoding="utf-8")
    (tmp_path / "en.txt").write_text("\n".join(" ".join([s] * 3) for s in sources) + "\n", encoding="utf-8")
    settings = dict(strategy="max", min_margin=1.0, max_trigram_overlap=None, recall_sample=20)
    with caplog.at_level("WARNING", logger="psp_st.mining.pairs"):
        plain = mine_pairs(
            tmp_path / "x.txt",
            tmp_path / "a.parquet",
            str(psp_model_dir),
            target=tmp_path / "en.txt",
            config=MiningConfig(**settings),
        )
    assert plain["pairs"] == 0 and "pass --length-scale" in caplog.text
    scaled = mine_pairs(
        tmp_path / "x.txt",
        tmp_path / "b.parquet",
        str(psp_model_dir),
        target=tmp_path / "en.txt",
        config=MiningConfig(**settings, length_scale=3.0),
    )
    pairs = pd.read_parquet(tmp_path / "b.parquet")
    assert scaled["pairs"] >= 90 and (pairs.length_ratio <= 1.1).all()


def test_output_is_written_in_chunks_and_only_when_complete(psp_model_dir, caption_file, tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    _mine(psp_model_dir, caption_file, tmp_path / "ok.parquet", chunk_rows=40)
    assert pq.ParquetFile(tmp_path / "ok.parquet").metadata.num_row_groups > 1

    real, calls = pairs_module._filter_chunk, []

    def failing(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("disk full")
        return real(*args, **kwargs)

    monkeypatch.setattr(pairs_module, "_filter_chunk", failing)
    with pytest.raises(RuntimeError, match="disk full"):
        _mine(psp_model_dir, caption_file, tmp_path / "bad.parquet", chunk_rows=40)
    assert not (tmp_path / "bad.parquet").exists()
    assert not list(tmp_path.glob(".bad.parquet*"))


def test_bad_settings_raise_clear_errors():
    with pytest.raises(ValueError, match="unknown strategy"):
        MiningConfig(strategy="best")
    with pytest.raises(ValueError, match="max_ratio must be >= 1"):
        MiningConfig(max_length_ratio=0.5)
    with pytest.raises(ValueError, match="unknown index kind"):
        from psp_st.mining.ann import IndexSpec

        IndexSpec(kind="lsh")


def test_mining_config_from_command_options():
    from psp_st.mining.pairs import mining_config

    options = {"k": 8, "index": "ivf", "nprobe": 4, "seed": 3, "lang": "en", "no_dedup": True, "shard_rows": None}
    config = mining_config(options)
    assert (config.k, config.strategy, config.dedup, config.languages) == (8, "all", False, ("en", "en"))
    assert (config.index.kind, config.index.nprobe, config.index.seed, config.shard_rows) == ("ivf", 4, 3, 100_000)
    bitext = mining_config({"source_lang": "de", "target_lang": "en"}, bitext=True)
    assert bitext.strategy == "max" and bitext.languages == ("de", "en")
    with pytest.raises(ValueError, match="--source-lang"):
        mining_config({"source_lang": "de"})


def test_repeated_texts_are_collapsed_before_mining(psp_model_dir, caption_file, tmp_path):
    lines = caption_file.read_text(encoding="utf-8").splitlines()[:300]
    (tmp_path / "once.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp_path / "twice.txt").write_text("\n".join(lines + [line.upper() for line in lines]) + "\n", encoding="utf-8")
    once = _mine(psp_model_dir, tmp_path / "once.txt", tmp_path / "once.parquet")
    twice = _mine(psp_model_dir, tmp_path / "twice.txt", tmp_path / "twice.parquet")
    assert (twice["source_rows"], twice["source_repeats"], once["source_repeats"]) == (600, 300, 0)
    assert once["pairs"] > 0
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "twice.parquet"), pd.read_parquet(tmp_path / "once.parquet")
    )


def test_a_resume_after_a_same_size_edit_is_refused_and_overwrite_starts_over(psp_model_dir, caption_file, tmp_path):
    _mine(psp_model_dir, caption_file, tmp_path / "a.parquet")
    lines = caption_file.read_text(encoding="utf-8").splitlines()
    caption_file.write_text("\n".join(lines[400:] + lines[:400]) + "\n", encoding="utf-8")  # same bytes, reordered
    fresh = _mine(psp_model_dir, caption_file, tmp_path / "fresh.parquet")
    work = {"work_dir": tmp_path / "a.parquet.work"}
    config = MiningConfig(min_margin=1.0, shard_rows=300, recall_sample=50)
    with pytest.raises(ValueError, match="the input .*captions.txt changed since the job"):
        mine_pairs(caption_file, tmp_path / "b.parquet", str(psp_model_dir), config=config, **work)
    again = mine_pairs(caption_file, tmp_path / "b.parquet", str(psp_model_dir), config=config, overwrite=True, **work)
    assert again["pairs"] == fresh["pairs"]
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "b.parquet"), pd.read_parquet(tmp_path / "fresh.parquet"))


def test_overwrite_reuses_the_vectors_and_a_new_k_only_redoes_the_neighbours(psp_model_dir, caption_file, tmp_path):
    _mine(psp_model_dir, caption_file, tmp_path / "a.parquet")
    vectors = tmp_path / "a.parquet.work" / "source-vectors" / "part-00000.npy"
    before = vectors.stat().st_mtime_ns
    config = MiningConfig(min_margin=1.05, shard_rows=300, recall_sample=50)
    mine_pairs(caption_file, tmp_path / "a.parquet", str(psp_model_dir), config=config, overwrite=True)
    changed_k = MiningConfig(k=6, min_margin=1.0, shard_rows=300, recall_sample=50)
    work = {"work_dir": tmp_path / "a.parquet.work"}
    mine_pairs(caption_file, tmp_path / "k6.parquet", str(psp_model_dir), config=changed_k, **work)
    assert vectors.stat().st_mtime_ns == before
    fresh = mine_pairs(caption_file, tmp_path / "fresh.parquet", str(psp_model_dir), config=changed_k)
    assert fresh["filters"] == json.loads((tmp_path / "k6.json").read_text())["filters"]


def test_pairs_of_texts_with_no_known_piece_are_dropped(psp_model_dir, distinct_captions, tmp_path):
    source = tmp_path / "s.txt"  # two unknown-script lines: both the <unk> vector, cosine 1, the best margin
    source.write_text("\n".join(distinct_captions[:300] + ["今天天气很好", "我明天去北京"]) + "\n", encoding="utf-8")
    report = _mine(psp_model_dir, source, tmp_path / "p.parquet", max_length_ratio=None)
    assert {step["filter"]: step["dropped"] for step in report["filters"]}["no_known_piece"] == 1
    assert not pd.read_parquet(tmp_path / "p.parquet").id1.isin([300, 301]).any()


def test_min_margin_nan_is_refused():
    with pytest.raises(ValueError, match=r"min_margin \(--min-margin\) must be a finite number"):
        MiningConfig(min_margin=float("nan"))


def test_k_1_with_a_margin_above_1_is_refused():  # mined every vector, then wrote 0 pairs
    with pytest.raises(ValueError, match=r"k \(--k\) 1 makes every margin <= 1: no pair reaches 1.1; use k >= 2"):
        MiningConfig(k=1)
    MiningConfig(k=1, min_margin=1.0)


def test_the_report_names_the_ivf_lists_used(psp_model_dir, caption_file, tmp_path):
    from psp_st.mining.ann import IndexSpec

    report = _mine(psp_model_dir, caption_file, tmp_path / "p.parquet", index=IndexSpec(kind="ivf", nlist=1000))
    assert (report["config"]["index"]["nlist"], report["index_lists"]) == (1000, 800 // 39)


@pytest.mark.parametrize("empty", ["source", "target"])
def test_bitext_with_an_empty_side_names_it(psp_model_dir, caption_file, tmp_path, empty):
    (tmp_path / "empty.txt").write_text("")
    sides = {"source": caption_file, "target": caption_file, empty: tmp_path / "empty.txt"}
    flag = "--input" if empty == "source" else "--target"
    with pytest.raises(ValueError, match=f"{flag} .*empty.txt has no sentences"):
        mine_pairs(sides["source"], tmp_path / "p.parquet", str(psp_model_dir), target=sides["target"])


def test_the_rerank_block_does_not_grow_with_k(psp_model_dir, caption_file, tmp_path, monkeypatch):
    from psp_st.mining import knn_shards

    sizes, exact = [], knn_shards.exact_similarities
    monkeypatch.setattr(knn_shards, "exact_similarities", lambda q, v, ids: sizes.append(ids.size) or exact(q, v, ids))
    _mine(psp_model_dir, caption_file, tmp_path / "p.parquet", k=120, min_margin=2.0)  # was 300 x 120 x dim at once
    assert sizes and max(sizes) <= 8192 * 4  # 128 MiB of float32 vectors at 1024 dims, whatever k is

"""`psp-st embed --shard-rows` / `mine` options without Ray, and the ImportError naming the extra."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from psp_st.cli import main


def test_embed_with_shard_rows_writes_shards_and_a_manifest(psp_model_dir, psp_module, caption_file, tmp_path, capsys):
    out = tmp_path / "vectors"
    code = main(
        [
            "embed",
            "--model",
            str(psp_model_dir),
            "--input",
            str(caption_file),
            "--output",
            str(out),
            "--shard-rows",
            "300",
            "--float16",
        ]
    )
    assert code == 0 and "800 x 32 float16 in 3 shards" in capsys.readouterr().out
    manifest = json.loads((out / "manifest.json").read_text())
    vectors = np.concatenate([np.load(out / record["file"]) for record in manifest["shards"]])
    lines = caption_file.read_text(encoding="utf-8").splitlines()
    np.testing.assert_allclose(vectors, psp_module.embed(lines).astype(np.float16), rtol=1e-3)


def test_ray_option_without_ray_names_the_extra(psp_model_dir, caption_file, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if ray were not installed
    code = main(
        ["embed", "--model", str(psp_model_dir), "--input", str(caption_file), "--output", str(tmp_path / "v"), "--ray"]
    )
    assert code == 2 and 'pip install "psp-st[ray]"' in capsys.readouterr().err


@pytest.mark.parametrize(
    "command, output, extra",
    [("embed", "v.npy", []), ("embed", "v", ["--shard-rows", "5"]), ("mine", "p.parquet", [])],
)
def test_workers_without_ray_is_refused_not_ignored(
    psp_model_dir, caption_file, tmp_path, capsys, command, output, extra
):
    """SC8: --workers without --ray was silently ignored (the job ran in this process)."""
    args = ["--model", str(psp_model_dir), "--input", str(caption_file), "--output", str(tmp_path / output)]
    assert main([command, *args, *extra, "--workers", "4"]) == 2
    assert "--workers sets the Ray actors of a --ray job: add --ray, or drop --workers" in capsys.readouterr().err
    assert not (tmp_path / output).exists()


def test_mine_rejects_language_options_meant_for_bitext(psp_model_dir, caption_file, tmp_path, capsys):
    code = main(
        [
            "mine",
            "--model",
            str(psp_model_dir),
            "--input",
            str(caption_file),
            "--output",
            str(tmp_path / "p.parquet"),
            "--source-lang",
            "en",
        ]
    )
    assert code == 2 and "--source-lang/--target-lang are for bitext mining" in capsys.readouterr().err


def test_mine_output_must_be_parquet(psp_model_dir, caption_file, tmp_path, capsys):
    assert (
        main(["mine", "--model", str(psp_model_dir), "--input", str(caption_file), "--output", str(tmp_path / "p.csv")])
        == 2
    )
    assert "must end in .parquet" in capsys.readouterr().err


def test_embed_of_an_empty_file_gives_zero_rows_with_and_without_shard_rows(psp_model_dir, tmp_path, capsys):
    (tmp_path / "empty.txt").write_text("")
    args = ["embed", "--model", str(psp_model_dir), "--input", str(tmp_path / "empty.txt"), "--output"]
    assert main([*args, str(tmp_path / "e.npy")]) == 0
    assert main([*args, str(tmp_path / "shards"), "--shard-rows", "10"]) == 0
    assert np.load(tmp_path / "e.npy").shape == np.load(tmp_path / "shards" / "part-00000.npy").shape == (0, 32)


def test_sharded_embed_gives_the_streamed_vectors_for_texts_with_no_known_piece(psp_model, tmp_path, capsys):
    from psp_st.hub.release import write_release
    from psp_st.modules.folder_format import FORMAT_VERSION

    release = tmp_path / "release"
    write_release(
        psp_model, release, {"name": "psp-test", "format_version": FORMAT_VERSION}, suite=None
    )  # root: ST StaticEmbedding (zeros for these)
    texts = tmp_path / "odd.txt"
    texts.write_text("a man plays a guitar\n\n   \n\t\n😀😀😀\n你好世界\n🏳️‍🌈\n", encoding="utf-8")
    common = ["embed", "--model", str(release), "--input", str(texts), "--threads", "1", "--output"]
    assert main([*common, str(tmp_path / "streamed.npy")]) == 0
    assert main([*common, str(tmp_path / "sharded"), "--shard-rows", "3"]) == 0
    streamed = np.load(tmp_path / "streamed.npy")
    sharded = np.concatenate([np.load(path) for path in sorted((tmp_path / "sharded").glob("part-*.npy"))])
    np.testing.assert_array_equal(sharded, streamed)
    assert np.abs(streamed[1:]).max(axis=1).min() > 0  # the <unk> vector, not zeros


def test_sharded_float16_overflow_is_refused_naming_the_row(psp_model, psp_module, tmp_path, capsys):
    import torch

    with torch.no_grad():  # every piece but <unk> beyond float16's range (65504)
        weight = psp_module.embedding.weight
        weight[torch.arange(len(weight)) != psp_module.tokenizer.unk_id] *= 1e6
    psp_model.save(str(tmp_path / "big"))
    (tmp_path / "in.txt").write_text("\n\na dog\n", encoding="utf-8")
    args = ["--input", str(tmp_path / "in.txt"), "--output", str(tmp_path / "v"), "--shard-rows", "2", "--float16"]
    assert main(["embed", "--model", str(tmp_path / "big"), *args]) == 2
    assert "(first: row 2)" in capsys.readouterr().err


def test_sharded_embed_resumes_a_half_done_folder_and_overwrite_redoes_what_changed(
    psp_model_dir, caption_file, tmp_path, capsys
):
    out = tmp_path / "v"
    args = ["embed", "--model", str(psp_model_dir), "--input", str(caption_file), "--output", str(out)]
    assert main([*args, "--shard-rows", "300"]) == 0
    (out / "manifest.json").unlink()  # as if killed before the end
    (out / "part-00002.done.json").unlink()
    before = (out / "part-00000.npy").stat().st_mtime_ns
    assert main([*args, "--shard-rows", "300"]) == 0  # resumes: no --overwrite needed
    assert (out / "part-00000.npy").stat().st_mtime_ns == before
    assert main([*args, "--shard-rows", "300", "--overwrite"]) == 0  # the same job: nothing to redo
    assert (out / "part-00000.npy").stat().st_mtime_ns == before
    assert main([*args, "--shard-rows", "300", "--normalize"]) == 2  # another job: refused, naming what differs
    assert "normalize False -> True" in capsys.readouterr().err
    assert main([*args, "--shard-rows", "300", "--normalize", "--overwrite"]) == 0  # starts over
    assert (out / "part-00000.npy").stat().st_mtime_ns != before


def test_mine_summary_counts_both_bitext_sides_and_the_collapsed_repeats(psp_model_dir, caption_file, tmp_path, capsys):
    lines = caption_file.read_text(encoding="utf-8").splitlines()
    (tmp_path / "x.txt").write_text("\n".join(lines[:100] + lines[:20]) + "\n", encoding="utf-8")
    (tmp_path / "en.txt").write_text("\n".join(lines[:90]) + "\n", encoding="utf-8")
    args = ["mine", "--model", str(psp_model_dir), "--input", str(tmp_path / "x.txt"), "--threads", "1"]
    assert main([*args, "--target", str(tmp_path / "en.txt"), "--output", str(tmp_path / "p.parquet")]) == 0
    assert "from 120 source and 90 target sentences (20 repeated texts collapsed)" in capsys.readouterr().out


def test_embed_output_must_be_npy(psp_model_dir, caption_file, tmp_path, capsys):
    args = ["embed", "--model", str(psp_model_dir), "--input", str(caption_file), "--output", str(tmp_path / "v.txt")]
    assert main(args) == 2 and "must end in .npy" in capsys.readouterr().err
    assert not (tmp_path / "v.txt").exists()


def test_sharded_zero_threads_and_zero_shard_rows_are_refused(psp_model_dir, caption_file, tmp_path, capsys):
    args = ["embed", "--model", str(psp_model_dir), "--input", str(caption_file), "--output", str(tmp_path / "v")]
    assert (
        main([*args, "--shard-rows", "0"]) == 2 and "shard_rows (--shard-rows) must be >= 1" in capsys.readouterr().err
    )
    assert main([*args, "--shard-rows", "10", "--threads", "0"]) == 2
    assert "threads (--threads) must be >= 1" in capsys.readouterr().err


@pytest.mark.parametrize("sharded", [False, True])
def test_embed_refuses_a_column_that_text_input_would_ignore(psp_model_dir, caption_file, tmp_path, capsys, sharded):
    """`embed --column text` on a text file embedded its lines and ignored the column without a word."""
    args = ["embed", "--model", str(psp_model_dir), "--input", str(caption_file), "--output", str(tmp_path / "v.npy")]
    code = main([*args, "--column", "text", *(["--shard-rows", "100"] if sharded else [])])
    assert code == 2 and "--column 'text' names a Parquet column" in capsys.readouterr().err
    assert not (tmp_path / "v.npy").exists()


def test_mine_refuses_column_options_that_text_input_would_ignore(psp_model_dir, caption_file, tmp_path, capsys):
    import pandas as pd

    lines = caption_file.read_text(encoding="utf-8").splitlines()[:60]
    pd.DataFrame({"text": lines}).to_parquet(tmp_path / "x.parquet")
    args = ["mine", "--model", str(psp_model_dir), "--output", str(tmp_path / "p.parquet"), "--threads", "1"]
    assert main([*args, "--input", str(caption_file), "--column", "text"]) == 2
    assert "--column 'text' names a Parquet column" in capsys.readouterr().err
    bitext = ["--input", str(tmp_path / "x.parquet"), "--column", "text", "--target", str(caption_file)]
    assert main([*args, *bitext, "--target-column", "en"]) == 2
    assert "--target-column 'en' names a Parquet column" in capsys.readouterr().err
    assert main([*args, "--input", str(caption_file), "--target-column", "en"]) == 2
    assert "--target-column is for bitext mining" in capsys.readouterr().err
    assert main([*args, *bitext]) == 0  # --column applies to the Parquet side; the text target needs none


def test_mine_column_is_the_parquet_targets_default_column_beside_a_text_source(
    psp_model_dir, caption_file, tmp_path, capsys
):
    """`--target-column` defaults to `--column`: with a text --input and a Parquet --target, `--column en` names the
    target's column and was refused as if ignored."""
    import pandas as pd

    lines = caption_file.read_text(encoding="utf-8").splitlines()[:60]
    pd.DataFrame({"en": lines}).to_parquet(tmp_path / "x.parquet")
    args = ["mine", "--model", str(psp_model_dir), "--output", str(tmp_path / "p.parquet"), "--threads", "1"]
    assert main([*args, "--input", str(caption_file), "--target", str(tmp_path / "x.parquet"), "--column", "en"]) == 0
    assert "from 800 source and 60 target sentences" in capsys.readouterr().out


def test_sharded_embed_reads_an_upper_case_parquet_suffix_as_parquet(psp_model_dir, caption_file, tmp_path):
    """`IN.PARQUET` was read as text lines (a UTF-8 error), and `--column` with it was refused as ignored."""
    import pandas as pd

    lines = caption_file.read_text(encoding="utf-8").splitlines()[:30]
    vectors = {}
    for name in ("lower.parquet", "UPPER.PARQUET"):
        pd.DataFrame({"text": lines}).to_parquet(tmp_path / name)
        out = tmp_path / f"v-{name}"
        args = ["embed", "--model", str(psp_model_dir), "--input", str(tmp_path / name), "--output", str(out)]
        assert main([*args, "--shard-rows", "10", "--column", "text"]) == 0
        vectors[name] = np.concatenate([np.load(part) for part in sorted(out.glob("part-*.npy"))])
    np.testing.assert_array_equal(vectors["UPPER.PARQUET"], vectors["lower.parquet"])
    assert len(vectors["lower.parquet"]) == 30


def test_a_damaged_plan_is_named_and_a_damaged_done_record_recomputes_its_shard(
    psp_model_dir, caption_file, tmp_path, capsys
):
    out = tmp_path / "v"
    args = ["embed", "--model", str(psp_model_dir), "--input", str(caption_file), "--output", str(out)]
    assert main([*args, "--shard-rows", "300"]) == 0
    expected = np.load(out / "part-00001.npy")
    (out / "part-00001.done.json").write_text("{cut sh", encoding="utf-8")  # as if the disk filled up
    assert main([*args, "--shard-rows", "300"]) == 0
    np.testing.assert_array_equal(np.load(out / "part-00001.npy"), expected)
    (out / "plan.json").write_text("{cut sh", encoding="utf-8")
    capsys.readouterr()
    assert main([*args, "--shard-rows", "300"]) == 2
    assert "plan.json is damaged" in capsys.readouterr().err
    assert main([*args, "--shard-rows", "300", "--overwrite"]) == 0


def test_mine_refuses_a_file_named_twice_by_its_inputs(psp_model_dir, caption_file, tmp_path, capsys):
    args = ["mine", "--model", str(psp_model_dir), "--input", str(caption_file), str(tmp_path / "*.txt")]
    assert main([*args, "--output", str(tmp_path / "out" / "p.parquet"), "--no-dedup"]) == 2
    assert "is named twice by the input" in capsys.readouterr().err


def test_sharded_embed_embeds_a_shard_chunk_by_chunk_with_the_streamed_vectors(
    psp_model_dir, caption_file, tmp_path, capsys, monkeypatch
):
    """SC4/H1: a shard was embedded at once (RAM grew with --shard-rows) and --chunk-size was refused with it."""
    import psp_st.inference

    args = ["embed", "--model", str(psp_model_dir), "--input", str(caption_file), "--threads", "1", "--output"]
    assert main([*args, str(tmp_path / "streamed.npy")]) == 0
    assert main([*args, str(tmp_path / "whole"), "--shard-rows", "300", "--chunk-size", "300"]) == 0
    calls: list[int] = []
    encode = psp_st.inference.encode_texts
    monkeypatch.setattr(
        psp_st.inference,
        "encode_texts",
        lambda model, texts, **kw: calls.append(len(texts)) or encode(model, texts, **kw),
    )
    assert main([*args, str(tmp_path / "chunked"), "--shard-rows", "300", "--chunk-size", "70"]) == 0
    assert max(calls) == 70 and sum(calls) == 800
    chunked = [(tmp_path / "chunked" / f"part-0000{i}.npy").read_bytes() for i in range(3)]
    assert chunked == [(tmp_path / "whole" / f"part-0000{i}.npy").read_bytes() for i in range(3)]
    vectors = np.concatenate([np.load(tmp_path / "chunked" / f"part-0000{i}.npy") for i in range(3)])
    np.testing.assert_array_equal(vectors, np.load(tmp_path / "streamed.npy"))


def test_embed_help_gives_the_sharded_default_of_threads(capsys):
    with pytest.raises(SystemExit):
        main(["embed", "--help"])
    assert "sharded: per worker, default 1" in " ".join(capsys.readouterr().out.split())

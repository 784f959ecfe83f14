"""The scripts users and contributors are told to run: benchmarks/*.py and examples/*.py parse their options."""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPTS = sorted((REPO / "benchmarks").glob("*.py")) + sorted((REPO / "examples").glob("*.py"))


def run_script(path: Path, monkeypatch, *args: str) -> None:
    monkeypatch.setattr(sys, "argv", [str(path), *args])
    monkeypatch.setattr(sys, "path", [str(path.parent), *sys.path])
    runpy.run_path(str(path), run_name="__main__")


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_every_script_answers_help(path, monkeypatch, capsys):
    with pytest.raises(SystemExit) as exit_:
        run_script(path, monkeypatch, "--help")
    assert exit_.value.code == 0 and "usage:" in capsys.readouterr().out


def test_training_rss_needs_a_model_folder(monkeypatch, capsys):
    with pytest.raises(SystemExit) as exit_:
        run_script(REPO / "benchmarks" / "training_rss.py", monkeypatch, "--pairs", "5")
    assert exit_.value.code == 2 and "--model" in capsys.readouterr().err


def test_encode_speed_resolves_paths_from_the_callers_folder(tmp_path, monkeypatch):
    absolute_paths = runpy.run_path(str(REPO / "benchmarks" / "encode_speed.py"))["absolute_paths"]
    (tmp_path / "model").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PSP_ST_DATA_DIR", str(tmp_path))
    args = argparse.Namespace(data_dir=None, model="model", float16_model=None, release="psp-st/psp-en")
    absolute_paths(args)  # the workers run in the repository's folder: "model" must still mean ./model
    assert args.model == tmp_path.resolve() / "model" and args.data_dir == tmp_path.resolve()
    assert args.release == "psp-st/psp-en"  # not a path here: a name, passed on as it is


def test_example_passes_resume_and_overwrite_and_reports_errors_in_one_line(monkeypatch, capsys):
    import psp_st.training.recipe as recipe
    from psp_st.io.output_policy import OutputExistsError

    calls = []

    def refuse(*args, **kwargs):
        calls.append(kwargs)
        raise OutputExistsError("--output runs/x is a folder that is not empty: pass --overwrite")

    monkeypatch.setattr(recipe, "train_from_config", refuse)
    with pytest.raises(SystemExit) as exit_:
        run_script(REPO / "examples" / "train_psp.py", monkeypatch, "--output", "runs/x", "--resume", "--overwrite")
    assert exit_.value.code == 2 and "pass --overwrite" in capsys.readouterr().err
    assert calls[0]["resume"] is True and calls[0]["overwrite"] is True


def test_scale_resolves_work_and_model_from_the_callers_folder(tmp_path, monkeypatch):
    main = runpy.run_path(str(REPO / "benchmarks" / "scale.py"))["main"]
    corpora = []

    def stop(path, rows):
        corpora.append(path)
        raise KeyboardInterrupt  # before any corpus is written or psp-st mine runs (in the repository's folder)

    monkeypatch.setitem(main.__globals__, "make_corpus", stop)
    (tmp_path / "model").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["scale.py", "--model", "model", "--work", "work", "--rows", "10"])
    with pytest.raises(KeyboardInterrupt):
        main()
    assert corpora == [tmp_path.resolve() / "work" / "corpus-10.txt"]


def test_memo_insert_speed_reads_the_corpus_from_the_data_folder(tmp_path, monkeypatch):
    import subprocess

    commands = []

    def fake_run(command, **kwargs):
        commands.append(command)
        return subprocess.CompletedProcess(command, 0, stdout="{}")

    monkeypatch.setenv("PSP_ST_DATA_DIR", str(tmp_path))
    monkeypatch.setattr(subprocess, "run", fake_run)
    run_script(REPO / "benchmarks" / "memo_insert_speed.py", monkeypatch, "--tokenizer", "sp.model", "--checkout", ".")
    assert commands[0][5] == str(tmp_path / "corpus" / "english_sentences.parquet")


def test_probe_inputs_subset_keeps_the_rows_of_the_named_sources(tmp_path, monkeypatch):
    import pyarrow as pa
    import pyarrow.parquet as pq

    corpus, out = tmp_path / "corpus.parquet", tmp_path / "out" / "wmt.parquet"
    subset = ("subset", str(corpus), "--source-prefix", "wmt:", "--out", str(out))
    pq.write_table(pa.table({"sentence": ["a", "b", "c"], "source": ["wmt:x", "brown:y", "wmt:z"]}), corpus)
    run_script(REPO / "benchmarks" / "psp_en_probe_inputs.py", monkeypatch, *subset)
    assert pq.read_table(out).column("sentence").to_pylist() == ["a", "c"]
    pq.write_table(pa.table({"sentence": ["a"]}), corpus)
    with pytest.raises(SystemExit, match="no 'source' column"):
        run_script(REPO / "benchmarks" / "psp_en_probe_inputs.py", monkeypatch, *subset)


def test_teacher_softmax_is_the_cross_entropy_of_scaled_cosines(monkeypatch):
    import numpy as np
    import torch

    monkeypatch.setattr(sys, "path", [str(REPO / "benchmarks"), *sys.path])
    namespace = runpy.run_path(str(REPO / "benchmarks" / "psp_en_graded_distillation.py"))
    student, teacher = np.random.default_rng(0).normal(size=(2, 5, 4))
    cosines = (student / np.linalg.norm(student, axis=1, keepdims=True)) @ (
        teacher / np.linalg.norm(teacher, axis=1, keepdims=True)
    ).T
    logits = 20.0 * cosines
    expected = np.mean(np.log(np.exp(logits).sum(axis=1)) - np.diag(logits))
    loss = namespace["teacher_softmax"](torch.tensor(student), torch.tensor(teacher), 20.0)
    assert loss.item() == pytest.approx(expected, rel=1e-6)


def test_probe_inputs_whitening_gives_the_model_back_at_1_and_the_teacher_spectrum_at_0(
    tmp_path, monkeypatch, sp_tokenizer, stub_teacher
):
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from psp_st.modules.psp import PSPEmbedding
    from psp_st.modules.trusted import load_trusted

    cache, teacher = tmp_path / "cache", stub_teacher(dim=16)
    module = PSPEmbedding.from_teacher(teacher, sp_tokenizer, embedding_dim=16, cache_dir=cache, teacher_name="stub")
    SentenceTransformer(modules=[module], device="cpu").save(str(tmp_path / "initial"))
    weights = {}
    for strength in ("1", "0"):
        out = tmp_path / f"strength{strength}"
        args = ("--initial", str(tmp_path / "initial"), "--teacher-cache", str(cache), "--teacher", "stub")
        run_script(
            REPO / "benchmarks" / "psp_en_probe_inputs.py",
            monkeypatch,
            "whitening",
            *args,
            "--strength",
            strength,
            "--out",
            str(out),
        )
        model = load_trusted(str(out))[0]
        weights[strength] = model.embedding.weight[: model.vocab_size].detach().numpy()
    np.testing.assert_array_equal(weights["1"], module.embedding.weight[: module.vocab_size].detach().numpy())
    pieces = np.stack([teacher.vector(text) for text in sp_tokenizer.token_texts()]).astype(np.float64)
    singular = np.linalg.svd(pieces - pieces.mean(0), compute_uv=False)
    np.testing.assert_allclose(weights["0"].std(0), singular / np.sqrt(np.mean(singular**2)), rtol=1e-4)


@pytest.mark.parametrize("basis", [[], ["--same-basis"]], ids=["new-pca", "same-basis"])
def test_probe_inputs_contextual_gives_the_model_back_when_context_agrees_with_the_piece_alone(
    tmp_path, monkeypatch, sp_tokenizer, stub_teacher, basis
):
    import numpy as np
    from sentence_transformers import SentenceTransformer

    from psp_st.modules.psp import PSPEmbedding
    from psp_st.modules.trusted import load_trusted

    cache, teacher = tmp_path / "cache", stub_teacher(dim=16)
    module = PSPEmbedding.from_teacher(teacher, sp_tokenizer, embedding_dim=16, cache_dir=cache, teacher_name="stub")
    SentenceTransformer(modules=[module], device="cpu").save(str(tmp_path / "initial"))
    alone = np.stack([teacher.vector(text) for text in sp_tokenizer.token_texts()]).astype(np.float64)
    counts = np.arange(len(alone)) % 3  # a third never seen, the rest seen once or twice, in the piece's direction
    np.savez(tmp_path / "sums.npz", sums=alone * (2.0 * counts)[:, None], counts=counts)
    run_script(
        REPO / "benchmarks" / "psp_en_probe_inputs.py",
        monkeypatch,
        *("contextual", "--initial", str(tmp_path / "initial"), "--sums", str(tmp_path / "sums.npz")),
        *("--shrink", "2", "--teacher-cache", str(cache), "--teacher", "stub", "--out", str(tmp_path / "out")),
        *basis,
    )
    got = load_trusted(str(tmp_path / "out"))[0].embedding.weight[: module.vocab_size].detach().numpy()
    np.testing.assert_allclose(got, module.embedding.weight[: module.vocab_size].detach().numpy(), atol=1e-4)


def test_common_component_removal_folds_into_the_table_as_done_to_sentence_vectors(monkeypatch, sp_tokenizer):
    import numpy as np

    from psp_st.inference.engine import PSPEngine

    monkeypatch.setattr(sys, "path", [str(REPO / "benchmarks"), *sys.path])
    remove = runpy.run_path(str(REPO / "benchmarks" / "psp_en_combine.py"))["common_component_removed"]
    weights = np.random.default_rng(0).normal(size=(sp_tokenizer.vocab_size, 8)).astype(np.float32)
    texts = ["a dog runs on the grass", "two men play football", "a woman is cooking", "the cat sleeps", "kids swim"]
    vectors = PSPEngine(weights, sp_tokenizer, threads=1).encode(texts).astype(np.float64)
    centred = vectors - vectors.mean(0)
    top = np.linalg.svd(centred, full_matrices=False)[2][:2]
    expected = centred - centred @ top.T @ top
    got = PSPEngine(remove(weights, sp_tokenizer, texts, 2), sp_tokenizer, threads=1).encode(texts)
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_combine_max_pooling_is_each_texts_elementwise_max(sp_tokenizer, monkeypatch):
    import numpy as np

    monkeypatch.setattr(sys, "path", [str(REPO / "benchmarks"), *sys.path])
    pooled = runpy.run_path(str(REPO / "benchmarks" / "psp_en_combine.py"))["extreme_pooled"]
    weights = np.random.default_rng(0).normal(size=(sp_tokenizer.vocab_size, 8))
    texts = ["a dog runs on the grass", "the cat sleeps"]
    expected = np.stack([weights[sp_tokenizer.encode([text])[0]].max(0) for text in texts])
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)
    np.testing.assert_allclose(pooled(weights, sp_tokenizer, texts, np.maximum), expected)


def test_the_packaged_ablation_row_trains_the_packaged_psp_en_recipe(monkeypatch):
    from psp_st.training.recipe import load_config

    monkeypatch.setattr(sys, "path", [str(REPO / "benchmarks"), *sys.path])
    namespace = runpy.run_path(str(REPO / "benchmarks" / "psp_en_ablation.py"))
    row = namespace["row_config"](namespace["PACKAGED_ROW"])
    assert namespace["same_training"](row, load_config("psp-en"))
    assert not namespace["same_training"](row, {**row, "seed": row["seed"] + 1})


def write_mined_pairs(folder: Path, scores: list[float], min_margin: float) -> Path:
    """A tiny ``psp-st mine`` output: pairs with these margins and a report naming its model and input."""
    import json

    import pandas as pd

    pairs = folder / "pairs.parquet"
    texts = [f"sentence {i}" for i in range(len(scores))]
    pd.DataFrame({"sentence1": texts, "sentence2": texts, "score": scores, "cosine": scores}).to_parquet(pairs)
    report = {
        "model": "/models/my-model",
        "source": ["/data/news.parquet"],
        "target": None,
        "source_rows": 10,
        "index": "flat",
        "config": {"k": 4, "strategy": "all", "min_margin": min_margin},
        "recall": {"k": 10, "queries": 10, "recall": 1.0},
        "seconds": {},
        "filters": [],
    }
    pairs.with_suffix(".json").write_text(json.dumps(report))
    return pairs


def test_mining_sample_titles_the_page_with_the_reports_model_and_input(tmp_path, monkeypatch):
    pairs = write_mined_pairs(tmp_path, [1.2], 1.1)
    with pytest.raises(SystemExit, match="0"):
        run_script(
            REPO / "benchmarks" / "mining_sample.py", monkeypatch, str(pairs), "--output", str(tmp_path / "s.md")
        )
    assert (tmp_path / "s.md").read_text().splitlines()[0] == "# `psp-st mine` of `news.parquet` with `my-model`"


def test_mining_sample_shows_pairs_below_the_default_margin_when_mined_with_a_lower_one(tmp_path, monkeypatch):
    pairs = write_mined_pairs(tmp_path, [1.05, 1.2], 1.0)
    with pytest.raises(SystemExit, match="0"):
        run_script(
            REPO / "benchmarks" / "mining_sample.py", monkeypatch, str(pairs), "--output", str(tmp_path / "s.md")
        )
    assert "| 1.050 | 1.050 | sentence 0 | sentence 0 |" in (tmp_path / "s.md").read_text()


def test_baselines_table_renders_a_records_old_psp_st_baseline_command_as_todays_script(tmp_path, monkeypatch):
    import json

    record = {"name": "P-SP", "metrics": {}, "command": "psp-st baseline sbert --no-train --model ./psp-en"}
    (tmp_path / "r.json").write_text(json.dumps(record))
    with pytest.raises(SystemExit, match="0"):
        run_script(
            REPO / "benchmarks" / "baselines_table.py",
            monkeypatch,
            "table",
            str(tmp_path / "r.json"),
            "--output",
            str(tmp_path / "t.md"),
        )
    assert (
        "\npython benchmarks/baselines_table.py sbert --no-train --model ./psp-en\n" in (tmp_path / "t.md").read_text()
    )


def test_scale_projects_the_index_size_at_the_models_dimension():
    report = {
        "seconds": {"embed": 1.0, "search": 1.0, "index": 1.0, "score_filter_write": 1.0},
        "config": {"index": {"pca": None}},
        "index": "ivf-sq8",
    }
    projection = runpy.run_path(str(REPO / "benchmarks" / "scale.py"))["projection"]
    text = projection({"local": {"report": report}}, 1000, 384)
    assert "at 384 dimensions that is 384 bytes per vector, ~38 GB for 100M" in text


def test_zoo_run_creates_its_workdir_before_the_run_needs_it(tmp_path, monkeypatch):
    main = runpy.run_path(str(REPO / "benchmarks" / "zoo.py"))["main"]

    def stop(row, args):
        raise KeyboardInterrupt  # before any data is read or a model trained

    monkeypatch.setitem(main.__globals__, "training_pairs", stop)
    workdir = tmp_path / "new" / "work"
    monkeypatch.setattr(sys, "argv", ["zoo.py", "run", "--row", "WORD", "--workdir", str(workdir)])
    with pytest.raises(KeyboardInterrupt):
        main()
    assert workdir.is_dir()

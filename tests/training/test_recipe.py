"""A YAML recipe trains end to end: tokenizer, model, mega-batching, STS-B dev evaluation, final save + card."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pandas as pd
import pytest


@pytest.fixture
def pairs_file(tmp_path, caption_sentences):
    frame = pd.DataFrame(
        {
            "sentence1": caption_sentences[:60],
            "sentence2": caption_sentences[10_000:10_060],
            "group_id": [f"img{i // 5}" for i in range(60)],
        }
    )
    frame.loc[3, "sentence2"] = None  # a missing side: dropped and counted
    frame.loc[4, "sentence1"] = "   "  # an empty side: dropped and counted
    path = tmp_path / "pairs.parquet"
    frame.to_parquet(path)
    return path


def recipe(pairs_file, data_dir):
    return {
        "name": "tiny",
        "seed": 0,
        "data": {"sources": [str(pairs_file)]},
        "tokenizer": {"vocab_size": 300},
        "model": {"embedding_dim": 16},
        "loss": {"name": "margin"},
        "megabatch": {"size": 2, "anneal": 2},
        "trainer": {
            "per_device_train_batch_size": 8,
            "eval_steps": 4,
            "save_steps": 4,
            "logging_steps": 2,
            "learning_rate": 0.05,
            "disable_tqdm": True,
        },
        "evaluation": {"sts_dev": str(data_dir / "sts" / "stsbenchmark" / "dev.parquet")},
    }


def test_recipe_trains_saves_and_counts_bad_rows(pairs_file, data_dir, tmp_path, caplog):
    from sentence_transformers import SentenceTransformer

    from psp_st.training.recipe import train_from_config

    with caplog.at_level(logging.WARNING):
        train_from_config(recipe(pairs_file, data_dir), output_dir=tmp_path / "run", max_steps=6)
    assert "dropped 2 training pair(s)" in caplog.text
    metrics = json.loads((tmp_path / "run" / "train_metrics.json").read_text())
    assert metrics["global_step"] == 6 and metrics["train_pairs"] == 58
    final = tmp_path / "run" / "final"
    assert (final / "README.md").exists()
    state = json.loads((tmp_path / "run" / "checkpoint-6" / "trainer_state.json").read_text())
    assert any("eval_sts-dev_spearman" in entry for entry in state["log_history"])
    reloaded = SentenceTransformer(str(final), device="cpu", trust_remote_code=True)
    assert reloaded.encode(["a dog runs"]).shape == (1, 16)


def test_unknown_recipe_key_is_a_clear_error(pairs_file, data_dir):
    from psp_st.training.recipe import load_config

    bad = {**recipe(pairs_file, data_dir), "optimiser": {}}
    with pytest.raises(ValueError, match=r"recipe: optimiser is not a known key; known: data, "):
        load_config(bad)


@pytest.mark.parametrize(
    "section, message",
    [
        ({"megabatch": {"sise": 3}}, r"recipe: megabatch\.sise is not a known key \(did you mean size\?\)"),
        (
            {"trainer": {"learning_rat": 0.1}},
            r"recipe: trainer\.learning_rat is not a known key \(did you mean learning_rate",
        ),
        ({"loss": {"name": "margin", "margn": 0.3}}, r"recipe: loss\.margn is not a known key \(did you mean margin"),
        ({"loss": {"name": "margin", "hardness": 1.0}}, r"recipe: loss\.hardness is not a known key"),
        ({"loss": {"name": "margin", "margin": "abc"}}, r"recipe: loss\.margin must be a number, got str 'abc'"),
        ({"loss": {"name": "margin", "symmetric": "no"}}, r"recipe: loss\.symmetric must be a bool, got 'no'"),
        ({"tokenizer": {"vocab": 10}}, r"recipe: tokenizer\.vocab is not a known key \(did you mean vocab_size"),
        ({"model": {"init": "zeros"}}, r"recipe: model\.init must be one of \['random', 'teacher'\]"),
        ({"distillation": {"wieght": 1}}, r"recipe: distillation\.wieght is not a known key \(did you mean weight"),
        ({"distillation": {"weight": 1}}, r"needs distillation\.sources"),
        ({"distillation": {"max_words": 0}}, r"recipe: distillation\.max_words must be > 0"),
        ({"megabatch": {"mining_dtype": "int8"}}, r"recipe: megabatch\.mining_dtype must be one of"),
        ({"release": {"dtype": "int8"}}, r"recipe: release\.dtype must be one of"),
        ({"release": {"suite": "qiuck"}}, r"recipe: release\.suite must be one of \['quick', 'full', 'xling'\]"),
        ({"loss": {"name": "margin", "margin": -1.0}}, r"recipe: loss\.margin must be in \[0\.0, inf\], got -1\.0"),
        ({"loss": {"name": "margin", "in_batch_weight": -5}}, r"recipe: loss\.in_batch_weight must be in \[0\.0"),
        ({"loss": {"name": "contrastive", "margin": -1.0}}, r"recipe: loss\.margin must be in \[0\.0, inf\]"),
        ({"loss": {"name": "mnrl", "scale": -20.0}}, r"recipe: loss\.scale: Scale must be a positive value"),
        ({"trainer": {"seed": 7}}, r"recipe: trainer\.seed is set by psp-st: use the top-level seed"),
        ({"trainer": {"output_dir": "elsewhere"}}, r"recipe: trainer\.output_dir is set by psp-st: use --output"),
        ({"trainer": {"push_to_hub": True}}, r"trainer\.push_to_hub is set by psp-st: a run uploads nothing"),  # S2
        ({"trainer": {"hub_token": "hf_x"}}, r"trainer\.hub_token is set by psp-st: .*`psp-st push`"),
        ({"name": 5}, r"recipe: name must be a folder name .*got 5"),  # G1: the default output ./NAME
        ({"name": None}, r"recipe: name must be a folder name .*got None"),
        ({"name": "../out"}, r"recipe: name must be a folder name .*no '/'.*got '\.\./out'"),
        ({"description": ["a"]}, r"recipe: description must be a str, got \['a'\]"),
        ({"seed": -1}, r"recipe: seed must be >= 0, got -1"),
        ({"seed": 2**33}, r"recipe: seed must be <= 4294967295"),
        (
            {"evaluation": {}, "trainer": {"eval_strategy": "steps"}},
            r"trainer\.eval_strategy needs evaluation\.sts_dev",
        ),
        ({"megabatch": {"size": 1}, "trainer": {"per_device_train_batch_size": 1}}, r"batch_size 1 gives no negative"),
        ({"megabatch": {"negative_guide": 3}}, r"megabatch\.negative_guide must be a str, got 3"),
        ({"megabatch": {"negative_guide": "g", "size": 0}}, r"negative_guide filters mined negatives: it needs"),
        ({"megabatch": {"negative_guide": "g"}, "loss": {"name": "mnrl"}}, r"negative_guide .* needs mega-batching"),
        ({"megabatch": {"guide_margin": 5}}, r"megabatch\.guide_margin must be in \[-2\.0, 2\.0\], got 5"),
        ({"loss": {"name": "mnrl"}, "trainer": {"per_device_train_batch_size": 1}}, r"batch_size 1 gives no negative"),
        ({"trainer": {"lr_scheduler_type": "linera"}}, r"recipe: trainer\.lr_scheduler_type: linera is not a valid"),
        ({"trainer": {"warmup_steps": -3}}, r"recipe: trainer\.warmup_steps: .*warmup_steps"),  # U4
        ({"trainer": {"dataloader_num_workers": 2}}, r"trainer\.dataloader_num_workers: .*would do nothing"),  # P6-5
        ({"trainer": {"batch_sampler": "no_duplicates"}}, r"trainer\.batch_sampler: .*would do nothing"),  # T7-5
        ({"trainer": {"learning_rate_mapping": {"emb": 0.1}}}, r"trainer\.learning_rate_mapping: .*would do"),  # T7-12
        (
            {"trainer": {"optim": "sgd"}},
            r"trainer\.optim: optim 'sgd' would do nothing with sparse_embeddings",
        ),  # T7-10
        ({"release": {"license": 2}}, r"recipe: release\.license must be a str, got 2"),
        ({"release": {"license_link": 2}}, r"recipe: release\.license_link must be a str, got 2"),
        ({"release": {"license": "Apache 2.0"}}, r"release\.license must be a Hugging Face licence id"),  # H8-4
        ({"release": {"license": "other"}}, r"license: other needs license_name .* and license_link"),  # H8-4
        ({"release": {"license_name": "my-terms"}}, r"release\.license_name go with license: other only"),  # H8-4
        ({"distillation": {"sources": [{"path": "c.parquet", "license": ""}]}}, r"sources\[0\]\.license must be a"),
        # sentencepiece's own floor, before any data loads (the schema took 0.9-0.98, the tokenizer refused it later)
        ({"tokenizer": {"character_coverage": 0.95}}, r"tokenizer\.character_coverage must be in \[0\.98, 1\.0\]"),
    ],
)
def test_recipe_schema_names_the_bad_key(section, message):
    from psp_st.training.schema import parse_recipe

    with pytest.raises(ValueError, match=message):
        parse_recipe({"name": "t", "data": {"sources": ["x.parquet"]}, **section})


def test_retired_keys_with_the_value_psp_st_still_trains_with_are_accepted():
    """W6 (audit 7): a psp-en v2/v3 release's psp_recipe.yaml (distillation metric: cosine, projection: true) was
    refused as holding unknown keys, so the documented rebuild from it failed."""
    from psp_st.training.schema import parse_recipe

    old = {"name": "t", "data": {"sources": ["x.parquet"]}, "distillation": {"metric": "cosine", "projection": True}}
    assert parse_recipe(old).distillation == parse_recipe({**old, "distillation": {}}).distillation


def test_a_retired_key_with_another_value_says_it_was_removed():
    from psp_st.training.schema import parse_recipe

    with pytest.raises(
        ValueError, match=r"distillation\.metric was removed from psp-st, .* 'cosine' only \(got 'mse'\)"
    ):
        parse_recipe({"name": "t", "data": {"sources": ["x.parquet"]}, "distillation": {"metric": "mse"}})


@pytest.mark.parametrize(
    "data, message",
    [
        (["a.parquet"], r"recipe: data must be a mapping, got \['a\.parquet'\]"),
        (
            {"sources": ["x.parquet"], "filters": {"lenght": {"max": 3}}},
            r"recipe: data\.filters\.lenght is not a known key \(did you mean length\?\)",
        ),
        ({"sources": [{"path": "x.parquet", "wieght": 2}]}, r"recipe: data\.sources\[0\]\.wieght is not a known key"),
        ({"sources": [{"path": "x.parquet", "license": 4}]}, r"data\.sources\[0\]\.license must be a non-empty text"),
        ({"sources": [{"path": "x.parquet", "genre": " "}]}, r"data\.sources\[0\]\.genre must be a non-empty text"),
    ],
)
def test_recipe_data_section_errors_name_the_key(data, message):
    from psp_st.training.schema import parse_recipe

    with pytest.raises(ValueError, match=message):
        parse_recipe({"name": "t", "data": data})


def test_recipe_file_with_a_duplicate_key_is_refused_naming_it_and_its_line(tmp_path):
    import yaml

    from psp_st.training.recipe import load_config

    path = tmp_path / "dup.yaml"
    path.write_text(
        "name: x\ntrainer: {learning_rate: 0.1}\ndata: {sources: [a.parquet]}\ntrainer: {max_grad_norm: 2.0}\n"
    )
    with pytest.raises(yaml.YAMLError, match=r"(?s)duplicate key 'trainer'.*dup\.yaml\", line 4"):
        load_config(path)
    path.write_text("name: x\ndata: {sources: [a.parquet], sources: [b.parquet]}\n")
    with pytest.raises(yaml.YAMLError, match=r"(?s)duplicate key 'sources'.*line 2"):
        load_config(path)


def test_recipe_file_that_is_not_utf8_is_named(tmp_path):
    from psp_st.training.recipe import load_config

    path = tmp_path / "binary.yaml"
    path.write_bytes(b"name: \x94\x00\xff")
    with pytest.raises(ValueError, match=r"recipe .*binary\.yaml: not a UTF-8 text file"):
        load_config(path)


def test_recipe_sections_become_training_arguments():
    from psp_st.training.schema import parse_recipe

    recipe = parse_recipe(
        {
            "name": "t",
            "seed": 5,
            "data": {"sources": ["x.parquet"]},
            "megabatch": {"size": 7, "anneal": 3, "mining_dtype": "bfloat16", "negative_guide": "psp-en"},
            "trainer": {"learning_rate": 0.5},
        }
    )
    args = recipe.training_arguments("out", max_steps=9)
    assert (args.megabatch_size, args.anneal, args.mining_dtype, args.seed) == (7, 3, "bfloat16", 5)
    assert (args.negative_guide, args.guide_margin) == ("psp-en", 0.0)
    assert (args.learning_rate, args.max_steps, args.per_device_train_batch_size) == (0.5, 9, 128)
    mnrl = parse_recipe({"name": "t", "data": {"sources": ["x.parquet"]}, "loss": {"name": "mnrl"}})
    assert mnrl.training_arguments("out").megabatch_size is None


def test_unknown_recipe_lists_where_it_looked(tmp_path, monkeypatch):
    from psp_st.training.recipe import find_recipe

    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        FileNotFoundError, match=r"no recipe for 'nope'.*hub_configs/nope\.yaml.*packaged recipes: .*psp-en"
    ):
        find_recipe("nope")


def test_a_recipe_file_under_home_is_found(tmp_path, monkeypatch):
    from psp_st.training.recipe import find_recipe

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "my recipe é.yaml").write_text("name: x\n", encoding="utf-8")
    assert find_recipe("~/my recipe é.yaml") == tmp_path / "my recipe é.yaml"


def test_packaged_recipes_are_real_files_that_load_by_name(tmp_path, monkeypatch):
    from psp_st.training.recipe import PACKAGED_RECIPES, find_recipe, load_config
    from psp_st.training.schema import parse_recipe

    monkeypatch.chdir(tmp_path)  # no hub_configs/ here: the package's copy is found
    assert find_recipe("psp-en") == PACKAGED_RECIPES / "psp-en.yaml"
    assert not PACKAGED_RECIPES.is_symlink() and not (PACKAGED_RECIPES / "psp-en.yaml").is_symlink()
    for path in sorted(PACKAGED_RECIPES.glob("*.yaml")):
        assert load_config(path.stem)["name"] == path.stem
        parse_recipe(load_config(path.stem))  # every key known, every value checked; sources' columns, filters too


def test_recipe_trains_its_tokenizer_on_its_own_thread_count_not_the_machines(pairs_file, data_dir, monkeypatch):
    """sentencepiece's model depends on its thread count: the same recipe on a machine with more cores must train
    the same tokenizer (tokenizer.num_threads, default 2)."""
    import os

    import sentencepiece as spm

    from psp_st.training.recipe import build_model, load_recipe_pairs

    threads, train = [], spm.SentencePieceTrainer.train

    def spy(*args, **kwargs):
        threads.append(kwargs["num_threads"])
        return train(*args, **kwargs)

    monkeypatch.setattr(spm.SentencePieceTrainer, "train", spy)
    monkeypatch.setattr(os, "cpu_count", lambda: 7)
    config = recipe(pairs_file, data_dir)
    pairs = load_recipe_pairs(config["data"], seed=0)
    build_model(config, pairs, seed=0)
    config["tokenizer"]["num_threads"] = 1
    build_model(config, pairs, seed=0)
    assert threads == [2, 1]


def test_init_from_starts_from_the_saved_model_with_the_recipe_dropout(pairs_file, data_dir, tmp_path):
    import numpy as np

    from psp_st.modules.trusted import load_trusted
    from psp_st.training.recipe import build_model, load_recipe_pairs

    config = recipe(pairs_file, data_dir)
    first = build_model(config, load_recipe_pairs(config["data"], seed=0), seed=0)
    first.save(str(tmp_path / "initial"))
    config["model"] = {"init_from": str(tmp_path / "initial"), "dropout": 0.3}
    second = build_model(config, None, seed=1)  # init_from needs no pairs: nothing is trained or drawn
    assert second[0].dropout == 0.3 and load_trusted(tmp_path / "initial")[0].dropout == 0.0
    np.testing.assert_array_equal(second.encode(["a dog runs"]), first.encode(["a dog runs"]))


def test_no_sts_dev_file_means_no_evaluation():
    from psp_st.training.schema import parse_recipe

    recipe = parse_recipe({"name": "t", "data": {"sources": ["x.parquet"]}, "evaluation": {}})
    assert recipe.training_arguments("out").eval_strategy == "no"


def test_init_from_a_release_folder_takes_its_trainable_form(pairs_file, data_dir, tmp_path):
    from psp_st.training.recipe import build_model, load_recipe_pairs

    config = recipe(pairs_file, data_dir)
    first = build_model(config, load_recipe_pairs(config["data"], seed=0), seed=0)
    first.save(str(tmp_path / "release" / "trainable"))  # the release root (a StaticEmbedding) is not needed
    config["model"] = {"init_from": str(tmp_path / "release")}
    assert type(build_model(config, None, seed=0)[0]) is type(first[0])


def test_init_from_warns_about_the_size_and_tokenizer_keys_it_ignores(pairs_file, data_dir, tmp_path, caplog):
    """U5: init_from with embedding_dim 32 and vocab_size 300 trained the loaded model's own size without a word."""
    from psp_st.training.recipe import build_model, load_recipe_pairs

    config = recipe(pairs_file, data_dir)
    build_model(config, load_recipe_pairs(config["data"], seed=0), seed=0).save(str(tmp_path / "initial"))
    config["model"] = {"init_from": str(tmp_path / "initial"), "embedding_dim": 32}
    with caplog.at_level("WARNING", logger="psp_st.training.recipe"):
        assert build_model(config, None, seed=0).get_embedding_dimension() == 16
    assert "model.embedding_dim, tokenizer.vocab_size ignored: model.init_from keeps" in caplog.text


def test_a_bad_sts_dev_file_fails_before_the_run_starts(pairs_file, data_dir, tmp_path):
    """U9: a TSV (or missing) evaluation.sts_dev failed after the tokenizer, leaving initial/ that blocked the rerun."""
    from psp_st.training.recipe import train_from_config

    (tmp_path / "dev.tsv").write_text("sentence1\tsentence2\tscore\na b\tc d\t3.0\n")
    config = recipe(pairs_file, data_dir)
    config["evaluation"] = {"sts_dev": str(tmp_path / "dev.tsv")}
    with pytest.raises(ValueError, match=r"recipe: evaluation\.sts_dev: .*dev\.tsv: this table is read from Parquet"):
        train_from_config(config, output_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_drop_last_with_a_batch_larger_than_the_data_is_refused(pairs_file, data_dir, tmp_path):
    from psp_st.training.recipe import train_from_config

    config = recipe(pairs_file, data_dir)
    config["trainer"].update(per_device_train_batch_size=100, dataloader_drop_last=True)
    with pytest.raises(ValueError, match=r"drops the only mini-batch: 58 pairs, fewer than .* 100"):
        train_from_config(config, output_dir=tmp_path / "run")
    assert not (tmp_path / "run" / "initial").exists()


def test_a_negative_guide_found_nowhere_fails_before_the_data_is_read(pairs_file, data_dir, tmp_path, monkeypatch):
    import psp_st.training.recipe as recipe_module
    from psp_st.modules.trusted import ModelNotFoundError

    config = recipe(pairs_file, data_dir)
    config["megabatch"] = {**config.get("megabatch", {}), "negative_guide": str(tmp_path / "no-guide")}
    monkeypatch.setattr(recipe_module, "load_recipe_pairs", lambda *a, **k: pytest.fail("data read before the check"))
    with pytest.raises(ModelNotFoundError, match="no-guide"):
        recipe_module.train_from_config(config, output_dir=tmp_path / "run")


def test_language_guard_without_a_lang_column_fails_before_the_tokenizer(pairs_file, data_dir, tmp_path):
    """XL2: it failed in the trainer with a mega-batching message, after the tokenizer and initial/ (blocking a rerun)."""
    from psp_st.training.recipe import train_from_config

    config = recipe(pairs_file, data_dir)
    config["megabatch"] = {**config["megabatch"], "language_guard": True}
    with pytest.raises(ValueError, match=r"recipe: megabatch\.language_guard needs a 'lang' column .*columns: \{lang:"):
        train_from_config(config, output_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_missing_distillation_file_fails_before_the_data_is_read(pairs_file, data_dir, tmp_path, monkeypatch):
    """XL3: psp-multi without one corpus file failed after 3.5 minutes (data, tokenizer, teacher pieces)."""
    import psp_st.training.recipe as recipe_module

    config = recipe(pairs_file, data_dir)
    config["distillation"] = {"weight": 1.0, "sources": [str(pairs_file), "corpus/no-such-file.parquet"]}
    monkeypatch.setattr(recipe_module, "load_recipe_pairs", lambda *a, **k: pytest.fail("data read before the check"))
    with pytest.raises(FileNotFoundError, match=r"recipe: distillation\.sources\[1\]: no data file matches .*no-such"):
        recipe_module.train_from_config(config, output_dir=tmp_path / "run", data_dir=data_dir)


def test_pairs_without_a_possible_negative_are_refused(tmp_path):
    from psp_st.training.recipe import load_recipe_pairs

    path = tmp_path / "same.parquet"
    pd.DataFrame({"sentence1": ["a dog"] * 5, "sentence2": ["a dog"] * 5}).to_parquet(path)
    with pytest.raises(ValueError, match=r"5 pair\(s\), fewer than 2 distinct ones: no pair can be another's negative"):
        load_recipe_pairs({"sources": [str(path)], "cache_dir": str(tmp_path / "cache")}, seed=0)


def test_pair_cache_appears_whole_and_is_reused(pairs_file, tmp_path, monkeypatch):
    """The Arrow cache of a recipe's pairs is written beside its final folder and renamed into place, so a run
    memory-mapping it never sees it rewritten by another run of the same recipe; a second call reads it back."""
    from datasets import Dataset

    from psp_st.training.recipe import PAIR_COUNTS_FILE, load_recipe_pairs

    data = {"sources": [str(pairs_file)], "cache_dir": str(tmp_path / "cache")}
    save = Dataset.save_to_disk
    seen: list[tuple[str, list[str]]] = []

    def recording_save(self, path, *args, **kwargs):
        seen.append((path, sorted(p.name for p in (tmp_path / "cache").glob("pairs-*"))))
        return save(self, path, *args, **kwargs)

    monkeypatch.setattr(Dataset, "save_to_disk", recording_save)
    counts: dict[str, int] = {}
    first = load_recipe_pairs(data, seed=0, counts=counts)
    (target,) = (tmp_path / "cache").glob("pairs-*")
    assert len(seen) == 1 and seen[0][1] == [] and not seen[0][0].startswith(str(target))
    assert (target / PAIR_COUNTS_FILE).is_file() and not list((tmp_path / "cache").glob(".pairs-*"))

    again: dict[str, int] = {}
    second = load_recipe_pairs(data, seed=0, counts=again)
    assert len(seen) == 1  # memory-mapped, not written again
    assert again == counts and second["sentence1"] == first["sentence1"]


def test_pair_cache_is_not_reused_after_a_source_file_changed(tmp_path):
    from psp_st.training.recipe import load_recipe_pairs

    path = tmp_path / "p.parquet"
    data = {"sources": [str(path)], "cache_dir": str(tmp_path / "cache")}
    pd.DataFrame({"sentence1": ["a b", "c d"], "sentence2": ["e f", "g h"]}).to_parquet(path)
    load_recipe_pairs(data, seed=0)
    pd.DataFrame({"sentence1": ["new one", "new two", "new three"], "sentence2": ["x", "y", "z"]}).to_parquet(path)
    assert load_recipe_pairs(data, seed=0)["sentence1"][:] == ["new one", "new two", "new three"]


# -- a run folder: resume, the recorded recipe, final/ ----------------------------------------------------------
@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, caption_sentences, data_dir):
    """A recipe and its run folder, trained with ``psp-st train --max-steps 4`` (checkpoint-4, final/)."""
    import yaml

    from psp_st.cli import main

    folder = tmp_path_factory.mktemp("finished")
    pairs = pd.DataFrame({"sentence1": caption_sentences[:40], "sentence2": caption_sentences[10_000:10_040]})
    pairs.to_parquet(folder / "pairs.parquet")
    config = recipe(folder / "pairs.parquet", data_dir)
    (folder / "tiny.yaml").write_text(yaml.safe_dump(config))
    assert (
        main(["train", "--config", str(folder / "tiny.yaml"), "--output", str(folder / "run"), "--max-steps", "4"]) == 0
    )
    return config, folder / "run"


def _copy(run, tmp_path):
    return Path(shutil.copytree(run, tmp_path / "run"))


def test_resume_of_a_finished_run_trains_no_step_and_keeps_final(finished_run, tmp_path):
    from psp_st.cli import main

    config, run = finished_run
    copy = _copy(run, tmp_path)
    recipe_file = str(run.parent / "tiny.yaml")
    assert main(["train", "--config", recipe_file, "--output", str(copy), "--max-steps", "4", "--resume"]) == 0
    assert json.loads((copy / "train_metrics.json").read_text())["global_step"] == 4
    assert sorted(p.name for p in copy.glob("checkpoint-*")) == ["checkpoint-4"]
    for file in (run / "final").iterdir():  # the card names its folder
        want = file.read_bytes().replace(str(run).encode(), str(copy).encode())
        assert (copy / "final" / file.name).read_bytes() == want, file.name


def test_train_seed_replaces_the_recipes_and_is_recorded(finished_run, tmp_path):
    import numpy as np
    import safetensors.numpy
    import yaml

    from psp_st.cli import main

    _, run = finished_run
    recipe_file = str(run.parent / "tiny.yaml")
    out = tmp_path / "seeded"
    assert main(["train", "--config", recipe_file, "--output", str(out), "--max-steps", "4", "--seed", "7"]) == 0
    assert yaml.safe_load((out / "psp_recipe.yaml").read_text())["seed"] == 7
    record = json.loads((out / "final" / "psp_build.json").read_text())
    assert record["seed"] == 7 and "--seed 7" in record["command"]
    weights = [safetensors.numpy.load_file(str(r / "final" / "model.safetensors")) for r in (run, out)]
    assert any(not np.array_equal(weights[0][k], weights[1][k]) for k in weights[0])  # another seed, another run


def test_resume_with_fewer_max_steps_than_trained_is_refused(finished_run, tmp_path):
    from psp_st.training.recipe import train_from_config

    config, run = finished_run
    with pytest.raises(ValueError, match=r"checkpoint-4 is at step 4, past max_steps 2: resume with max_steps >= 4"):
        train_from_config(config, output_dir=_copy(run, tmp_path), resume=True, max_steps=2)


def test_resume_with_another_recipe_is_refused_naming_the_keys(finished_run, tmp_path):
    from psp_st.training.recipe import train_from_config

    config, run = finished_run
    changed = {**config, "seed": 5, "model": {"embedding_dim": 32}}
    with pytest.raises(ValueError, match=r"differs .*: model\.embedding_dim: 16 -> 32; seed: 0 -> 5; resume with"):
        train_from_config(changed, output_dir=_copy(run, tmp_path), resume=True, max_steps=8)


def test_resume_after_the_training_data_changed_is_refused(finished_run, tmp_path, caption_sentences):
    """X3: the run records a digest of its pairs; a resume on other pairs is refused, naming the file."""
    import yaml

    from psp_st.training.recipe import train_from_config

    config, run = finished_run
    pairs = pd.DataFrame({"sentence1": caption_sentences[:30], "sentence2": caption_sentences[10_000:10_030]})
    pairs.to_parquet(tmp_path / "pairs.parquet")
    changed = {**config, "data": {"sources": [str(tmp_path / "pairs.parquet")]}}
    copy = _copy(run, tmp_path)
    (copy / "psp_recipe.yaml").write_text(yaml.safe_dump(changed))  # as if the file was rewritten in place
    with pytest.raises(ValueError, match=r"training pairs or distillation sentences differ .*training_data\.json"):
        train_from_config(changed, output_dir=copy, resume=True, max_steps=8)


def test_resume_of_a_run_without_its_recorded_recipe_warns(finished_run, tmp_path, caplog):
    """W5 (audit 7): a run folder of an older psp-st (no psp_recipe.yaml, no training_data.json) resumed with another
    recipe without a word."""
    from psp_st.training.recipe import train_from_config

    config, run = finished_run
    copy = _copy(run, tmp_path)
    (copy / "psp_recipe.yaml").unlink()
    (copy / "training_data.json").unlink()
    with caplog.at_level(logging.WARNING, logger="psp_st.training.recipe"):
        train_from_config({**config, "seed": 5}, output_dir=copy, resume=True, max_steps=4)
    assert "holds no psp_recipe.yaml (started by an older psp-st)" in caplog.text


def test_resume_names_a_recorded_recipe_this_psp_st_cannot_read(finished_run, tmp_path):
    """W7 (audit 7): a run folder's psp_recipe.yaml with a key of a newer psp-st was reported as if the recipe given
    had it ('recipe: future_key is not a known key')."""
    from psp_st.training.recipe import train_from_config

    config, run = finished_run
    copy = _copy(run, tmp_path)
    with (copy / "psp_recipe.yaml").open("a", encoding="utf-8") as recorded:
        recorded.write("future_key: 1\n")
    with pytest.raises(ValueError, match=r"psp_recipe\.yaml, the recipe .* was started with, is not one this psp-st"):
        train_from_config(config, output_dir=copy, resume=True, max_steps=4)


def test_resume_may_change_only_labels_caches_and_max_steps():
    from psp_st.training.recipe import recipe_changes
    from psp_st.training.schema import parse_recipe

    base = {"name": "t", "data": {"sources": ["x.parquet"]}, "trainer": {"learning_rate": 1e-3}}
    resumed = {
        "name": "renamed",
        "data": {"sources": ["x.parquet"], "cache_dir": "cache"},
        "trainer": {"max_steps": 99, "learning_rate": 0.5},
    }
    assert recipe_changes(parse_recipe(base), parse_recipe(resumed)) == ["trainer.learning_rate: 0.001 -> 0.5"]
    assert recipe_changes(parse_recipe(base), parse_recipe({**base, "trainer": {}})) == []  # the default


def test_resume_refuses_a_folder_holding_no_run(finished_run, tmp_path):
    from psp_st.training.recipe import train_from_config

    config, _ = finished_run
    (tmp_path / "checkpoint-5").mkdir()
    with pytest.raises(ValueError, match=r"holds no psp-st run \(no initial/ folder\)"):
        train_from_config(config, output_dir=tmp_path, resume=True)


def test_resume_refuses_a_run_folder_holding_its_recipe(finished_run, tmp_path):
    import yaml

    from psp_st.io.output_policy import OutputExistsError
    from psp_st.training.recipe import train_from_config

    config, run = finished_run
    copy = _copy(run, tmp_path)
    (copy / "recipe.yaml").write_text(yaml.safe_dump(config))
    with pytest.raises(OutputExistsError, match="is the input"):
        train_from_config(copy / "recipe.yaml", output_dir=copy, resume=True)


@pytest.mark.parametrize("linked", ["initial", "final"])
def test_overwrite_never_writes_through_a_run_folder_link_to_outside(finished_run, tmp_path, linked):  # S6-2
    from psp_st.training.recipe import train_from_config

    config, run = finished_run
    copy = _copy(run, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.rmtree(copy / linked)
    (copy / linked).symlink_to(elsewhere)
    with pytest.raises(ValueError, match=f"{linked} is a symbolic link to .*outside the folder"):
        train_from_config(config, output_dir=copy, overwrite=True)
    assert not any(elsewhere.iterdir())


def test_final_is_written_whole_or_not_at_all(finished_run, tmp_path, monkeypatch):
    from psp_st.modules.psp import PSPEmbedding
    from psp_st.training.recipe import train_from_config

    config, run = finished_run
    copy = _copy(run, tmp_path)
    shutil.rmtree(copy / "final")
    save = PSPEmbedding.save

    def crash_in_final(self, path, *args, **kwargs):
        save(self, path, *args, **kwargs)
        if "final" in Path(path).name:
            raise OSError("disk gone")

    monkeypatch.setattr(PSPEmbedding, "save", crash_in_final)
    with pytest.raises(OSError, match="disk gone"):
        train_from_config(config, output_dir=copy, resume=True, max_steps=4)
    assert not (copy / "final").exists()


def test_interrupted_training_names_the_checkpoint_resume_continues_from(finished_run, tmp_path, monkeypatch):
    from psp_st.training import MegaBatchTrainer
    from psp_st.training.recipe import train_from_config

    def interrupt(self, *args, **kwargs):
        raise KeyboardInterrupt

    config, run = finished_run
    copy = _copy(run, tmp_path)
    monkeypatch.setattr(MegaBatchTrainer, "train", interrupt)
    with pytest.raises(KeyboardInterrupt, match=rf"{copy / 'checkpoint-4'} is the last checkpoint: --resume continues"):
        train_from_config(config, output_dir=copy, resume=True, max_steps=8)


def test_interrupted_checkpoint_save_names_the_checkpoint_resume_continues_from(finished_run, tmp_path, monkeypatch):
    """Ctrl-C while checkpoint-6 was written named it as the one --resume continues from; --resume refuses it."""
    from psp_st.training import MegaBatchTrainer
    from psp_st.training.recipe import train_from_config

    config, run = finished_run
    copy = _copy(run, tmp_path)

    def interrupt_while_saving(self, *args, **kwargs):
        shutil.copytree(copy / "checkpoint-4", copy / "checkpoint-6")
        (copy / "checkpoint-6" / "trainer_state.json").unlink()  # the trainer writes it last
        raise KeyboardInterrupt

    monkeypatch.setattr(MegaBatchTrainer, "train", interrupt_while_saving)
    with pytest.raises(KeyboardInterrupt, match=rf"move away\) {copy / 'checkpoint-6'} and --resume continues from "):
        train_from_config(config, output_dir=copy, resume=True, max_steps=8)


@pytest.mark.parametrize("trainer", [{}, {"max_steps": 0}, {"max_steps": -5}])
def test_max_steps_below_one_is_refused(trainer, tmp_path):
    from psp_st.training.recipe import train_from_config

    config = {"name": "t", "data": {"sources": ["x.parquet"]}, "trainer": trainer}
    with pytest.raises(ValueError, match=r"max_steps must be (>= 1|> 0), got (0|-5)"):
        train_from_config(config, output_dir=tmp_path / "run", max_steps=None if trainer else 0)


@pytest.mark.parametrize("threads", ["0", "-1"])
def test_train_threads_below_one_is_refused(threads, tmp_path, capsys):
    from psp_st.cli import EXIT_ERROR, main

    args = ["train", "--config", str(tmp_path / "none.yaml"), "--output", str(tmp_path / "run"), "--threads", threads]
    assert main(args) == EXIT_ERROR
    assert f"threads (--threads) must be >= 1, got {threads}" in capsys.readouterr().err


def test_init_from_applies_the_recipe_max_seq_length(pairs_file, data_dir, tmp_path):
    from psp_st.training.recipe import build_model, load_recipe_pairs

    config = recipe(pairs_file, data_dir)
    build_model(config, load_recipe_pairs(config["data"], seed=0), seed=0).save(str(tmp_path / "initial"))
    config["model"] = {"init_from": str(tmp_path / "initial"), "max_seq_length": 3}
    assert build_model(config, None, seed=0)[0].max_seq_length == 3


def test_init_from_a_training_run_folder_names_its_final_model(pairs_file, data_dir, tmp_path):
    from psp_st.modules.base import ModelFolderError
    from psp_st.training.recipe import build_model, load_recipe_pairs

    config = recipe(pairs_file, data_dir)
    build_model(config, load_recipe_pairs(config["data"], seed=0), seed=0).save(str(tmp_path / "run" / "final"))
    config["model"] = {"init_from": str(tmp_path / "run")}
    with pytest.raises(ModelFolderError, match=r"run folder, whose trained model is .*final"):
        build_model(config, None, seed=0)


@pytest.mark.parametrize("key", ["seed", "soup", "wise_ft", "norm_power"])
def test_a_top_level_number_without_value_is_refused(key):
    from psp_st.training.schema import parse_recipe

    with pytest.raises(ValueError, match=f"recipe: {key} has no value; give .* or leave the key out"):
        parse_recipe({"name": "x", "data": {"sources": ["pairs.parquet"]}, key: None})


@pytest.mark.parametrize("value", [0, -0.5, 1.5, "0.8"])
def test_wise_ft_outside_zero_to_one_is_refused(value):
    from psp_st.training.schema import parse_recipe

    with pytest.raises(ValueError, match="recipe: wise_ft"):
        parse_recipe({"name": "x", "data": {"sources": ["pairs.parquet"]}, "wise_ft": value})


@pytest.mark.parametrize("value", [0, -0.5, 1.5, "0.9"])
def test_norm_power_outside_zero_to_one_is_refused(value):
    from psp_st.training.schema import parse_recipe

    with pytest.raises(ValueError, match="recipe: norm_power"):
        parse_recipe({"name": "x", "data": {"sources": ["pairs.parquet"]}, "norm_power": value})


@pytest.mark.parametrize("key", ["wise_ft", "norm_power"])
def test_a_value_above_one_is_refused_with_a_range_that_excludes_zero(key):  # D12-5
    from psp_st.training.schema import parse_recipe

    with pytest.raises(ValueError, match=rf"recipe: {key} must be in \[0.0, 1.0\] \(0 excluded\), got 1.5"):
        parse_recipe({"name": "x", "data": {"sources": ["pairs.parquet"]}, key: 1.5})


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: x\na: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
            "c: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n",
            r"(?s)more than 1,000 values .*line 4",
        ),
        ("name: x\na: &a [1, *a]\n", r"(?s)refers to its own anchor.*line 2"),
        ("name: x\na: " + "[" * 5000 + "]" * 5000 + "\n", r"(?s)nested too deeply.*line 2"),
    ],
    ids=["alias-bomb", "recursive-alias", "deep-nesting"],
)
def test_recipe_file_with_an_alias_bomb_a_recursive_alias_or_deep_nesting_is_refused_naming_the_line(
    tmp_path, monkeypatch, text, message
):
    import yaml

    from psp_st.training import recipe

    monkeypatch.setattr(
        recipe, "MAX_YAML_VALUES", 1_000, raising=False
    )  # "billion laughs" with 10**9 values: the same, later
    path = tmp_path / "bomb.yaml"
    path.write_text(text)
    with pytest.raises(yaml.YAMLError, match=message):
        recipe.load_config(path)


def test_pair_cache_is_not_reused_by_another_psp_st_version(tmp_path, monkeypatch):
    """W1 (audit 7): pairs cached by an older psp-st are prepared again after an upgrade, whose reading rules may
    refuse or change them (a cache written before a data fix kept training on the old pairs)."""
    import psp_st
    from psp_st.training.recipe import load_recipe_pairs

    path = tmp_path / "p.parquet"
    data = {"sources": [str(path)], "cache_dir": str(tmp_path / "cache")}
    pd.DataFrame({"sentence1": ["a b", "c d"], "sentence2": ["e f", "g h"]}).to_parquet(path)
    monkeypatch.setattr(psp_st, "__version__", "0.0.1")
    load_recipe_pairs(data, seed=0)
    monkeypatch.setattr(psp_st, "__version__", "0.0.2")
    load_recipe_pairs(data, seed=0)
    assert len(list((tmp_path / "cache").glob("pairs-*"))) == 2

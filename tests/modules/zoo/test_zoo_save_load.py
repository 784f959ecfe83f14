"""Every zoo encoder saves safetensors + psp_config.json + tokenizer files and loads back with identical vectors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.torch import load_file
from sentence_transformers import SentenceTransformer

from psp_st.modules.base import ModelFolderError

TEXTS = ["a dog runs", "unseen wordz here", "", "Two children play football in the park."]


def saved(module, path):
    model = SentenceTransformer(modules=[module], device="cpu")
    model.save(str(path))
    return model


def test_round_trip_gives_identical_vectors(make_encoder, encoder_kind, tmp_path):
    model = saved(make_encoder(encoder_kind), tmp_path)
    reloaded = SentenceTransformer(str(tmp_path), trust_remote_code=True, device="cpu")
    assert type(reloaded[0]) is type(model[0])
    np.testing.assert_array_equal(reloaded.encode(TEXTS), model.encode(TEXTS))


def test_folder_holds_config_with_format_version_and_safetensors(make_encoder, tmp_path):
    saved(make_encoder("gran_gru"), tmp_path)
    config = json.loads((tmp_path / "psp_config.json").read_text())
    assert config["format_version"] >= 1 and config["tokenizer"] == "words" and config["gate"] == "gru"
    assert "embedding.weight" in load_file(tmp_path / "model.safetensors")
    assert (tmp_path / "vocab.json").is_file() and not list(tmp_path.glob("*.bin"))
    modules = json.loads((tmp_path / "modules.json").read_text())
    assert modules[0]["type"] == "psp_st.modules.recurrent.GRAN"


def test_morfessor_model_is_saved_as_text(make_encoder, tmp_path):
    saved(make_encoder("lstm_morfessor"), tmp_path)
    lines = (tmp_path / "morfessor_segmentation.txt").read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("#") and all(line.split(" ", 1)[0].isdigit() for line in lines[1:])


def test_combined_encoder_saves_each_part_in_its_folder(make_encoder, tmp_path):
    saved(make_encoder("word_gran_sum"), tmp_path)
    config = json.loads((tmp_path / "psp_config.json").read_text())
    assert [e["class"] for e in config["encoders"]] == [
        "psp_st.modules.averaging.WordAveraging",
        "psp_st.modules.recurrent.GRAN",
    ]
    assert (tmp_path / "encoder_1" / "sentencepiece.model").is_file()


@pytest.mark.parametrize("missing", ["psp_config.json", "model.safetensors", "vocab.json"])
def test_missing_file_is_a_model_folder_error_naming_it(make_encoder, tmp_path, missing):
    saved(make_encoder("lstm"), tmp_path)
    (tmp_path / missing).unlink()
    with pytest.raises(ModelFolderError, match=missing.replace(".", r"\.")):
        SentenceTransformer(str(tmp_path), trust_remote_code=True, device="cpu")


def test_missing_morfessor_file_is_a_model_folder_error(make_encoder, tmp_path):
    saved(make_encoder("word_morfessor"), tmp_path)
    (tmp_path / "morfessor_segmentation.txt").unlink()
    with pytest.raises(ModelFolderError, match="morfessor_segmentation"):
        SentenceTransformer(str(tmp_path), trust_remote_code=True, device="cpu")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("psp_config.json", "{not json"),
        ("vocab.json", "{not json"),
        ("vocab.json", '{"kind": "trigrams", "tokens": ["<unk>", "a"]}'),
        ("model.safetensors", "truncated"),
    ],
)
def test_corrupt_file_is_a_model_folder_error(make_encoder, tmp_path, name, content):
    saved(make_encoder("gran_lstm"), tmp_path)
    (tmp_path / name).write_text(content)
    with pytest.raises(ModelFolderError):
        SentenceTransformer(str(tmp_path), trust_remote_code=True, device="cpu")


def test_weights_of_another_model_are_refused(make_encoder, tmp_path):
    saved(make_encoder("gran_gru"), tmp_path / "a")
    saved(make_encoder("lstm"), tmp_path / "b")
    (tmp_path / "a" / "model.safetensors").write_bytes((tmp_path / "b" / "model.safetensors").read_bytes())
    with pytest.raises(ModelFolderError, match="do not match"):
        SentenceTransformer(str(tmp_path / "a"), trust_remote_code=True, device="cpu")


def test_newer_format_version_is_refused(make_encoder, tmp_path):
    saved(make_encoder("word"), tmp_path)
    config = json.loads((tmp_path / "psp_config.json").read_text())
    (tmp_path / "psp_config.json").write_text(json.dumps({**config, "format_version": 99}))
    with pytest.raises(ModelFolderError, match="format_version"):
        SentenceTransformer(str(tmp_path), trust_remote_code=True, device="cpu")


def test_combined_encoder_refuses_foreign_classes(make_encoder, tmp_path):
    saved(make_encoder("word_trigram_concat"), tmp_path)
    config = json.loads((tmp_path / "psp_config.json").read_text())
    config["encoders"][0]["class"] = "os.system"
    (tmp_path / "psp_config.json").write_text(json.dumps(config))
    with pytest.raises(ModelFolderError, match="refusing"):
        SentenceTransformer(str(tmp_path), trust_remote_code=True, device="cpu")


@pytest.mark.parametrize(
    ("kind", "key", "value", "message"),
    [
        ("blstm_sum", "bidirectional", "false", "bidirectional must be true or false, got 'false'"),
        ("lstm", "scramble", "0.1", "scramble must be a number, got str '0.1'"),
        ("gran_gru", "dropout", "0.1", "dropout must be a number, got str '0.1'"),
        ("gran_gru", "hiden_size", 8, "unexpected keyword argument 'hiden_size'"),
        ("word", "tokenizer", ["words"], r"unknown tokenizer kind \['words'\]"),
        ("gran_gru_sentencepiece", "lowercase", "false", "lowercase must be true or false, got 'false'"),  # Z8-8
    ],
)
def test_a_bad_config_value_is_a_model_folder_error_naming_the_key(make_encoder, tmp_path, kind, key, value, message):
    saved(make_encoder(kind), tmp_path)
    config = json.loads((tmp_path / "psp_config.json").read_text())
    (tmp_path / "psp_config.json").write_text(json.dumps({**config, key: value}))
    with pytest.raises(ModelFolderError, match=message):
        SentenceTransformer(str(tmp_path), trust_remote_code=True, device="cpu")


def test_a_config_path_that_is_a_folder_is_a_model_folder_error(make_encoder, tmp_path):
    saved(make_encoder("word"), tmp_path)
    (tmp_path / "psp_config.json").unlink()
    (tmp_path / "psp_config.json").mkdir()
    with pytest.raises(ModelFolderError, match="psp_config.json is not a readable JSON file"):
        SentenceTransformer(str(tmp_path), trust_remote_code=True, device="cpu")


def test_integer_weights_are_refused_naming_the_tensor(make_encoder, tmp_path):
    from safetensors.torch import save_file

    saved(make_encoder("gran_lstm"), tmp_path)
    weights = load_file(tmp_path / "model.safetensors")
    save_file({name: (tensor * 100).long() for name, tensor in weights.items()}, tmp_path / "model.safetensors")
    with pytest.raises(ModelFolderError, match=r"tensor '.*' has dtype torch.int64, not a float type"):
        SentenceTransformer(str(tmp_path), trust_remote_code=True, device="cpu")

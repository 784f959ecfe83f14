from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from sentence_transformers import SentenceTransformer

from psp_st.inference.engine import PSPEngine
from psp_st.modules import ModelFolderError
from psp_st.modules.psp import PSPEmbedding
from psp_st.tokenization import SentencePieceTokenizer

TEXTS = ["a man rides a horse", "two kids play in the snow", "", "dog 😀 3"]


@pytest.fixture
def saved(psp_model, tmp_path):
    path = tmp_path / "model"
    psp_model.save(str(path))
    return path


def test_round_trip_through_sentence_transformer(psp_model, saved):
    reloaded = SentenceTransformer(str(saved), trust_remote_code=True, device="cpu")
    np.testing.assert_array_equal(reloaded.encode(TEXTS), psp_model.encode(TEXTS))


def test_saved_files_and_stable_class_path(saved):
    assert {"model.safetensors", "sentencepiece.model", "psp_config.json", "modules.json"} <= set(os.listdir(saved))
    assert not (saved / "config.json").exists()
    modules = json.loads((saved / "modules.json").read_text())
    assert modules[0]["type"] == "psp_st.modules.psp.PSPEmbedding"


def test_config_round_trips_options(sp_tokenizer, tmp_path):
    module = PSPEmbedding(sp_tokenizer, embedding_dim=8, max_seq_length=5, dropout=0.1, lowercase=False)
    module.save(str(tmp_path))
    loaded = PSPEmbedding.load(str(tmp_path))
    assert (loaded.max_seq_length, loaded.dropout, loaded.lowercase, loaded.embedding_dim) == (5, 0.1, False, 8)


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ("model.safetensors", "weights file 'model.safetensors' is missing"),
        ("sentencepiece.model", "sentencepiece tokenizer file 'sentencepiece.model' is missing"),
        ("psp_config.json", "config file 'psp_config.json' is missing"),
    ],
)
def test_missing_file_is_named(saved, missing, message):
    (saved / missing).unlink()
    with pytest.raises(ModelFolderError, match=message):
        PSPEmbedding.load(str(saved))


def test_wrong_shape_is_reported(saved, sp_tokenizer):
    other = PSPEmbedding(sp_tokenizer, embedding_dim=16)
    other.save(str(saved.parent / "other"))
    os.replace(saved.parent / "other" / "model.safetensors", saved / "model.safetensors")
    with pytest.raises(ModelFolderError, match=r"shape \(\d+, 16\), expected \(\d+, 32\)"):
        PSPEmbedding.load(str(saved))


def test_truncated_weights_are_reported(saved):
    (saved / "model.safetensors").write_bytes(b"\x00" * 10)
    with pytest.raises(ModelFolderError, match="cannot read weights"):
        PSPEmbedding.load(str(saved))


def test_corrupt_tokenizer_is_reported(saved):
    (saved / "sentencepiece.model").write_bytes(b"garbage")
    with pytest.raises(ValueError, match="sentencepiece.model.*Not a valid sentencepiece model"):
        PSPEmbedding.load(str(saved))


def test_folder_with_the_removed_word_dropout_option_still_loads(saved):
    config = json.loads((saved / "psp_config.json").read_text())
    (saved / "psp_config.json").write_text(json.dumps({**config, "word_dropout": 0.0}))  # written before its removal
    assert PSPEmbedding.load(str(saved)).dropout == config["dropout"]


#: The two readers of a PSPEmbedding folder: the torch module and the torch-free engine (one config check).
READERS = [lambda path: PSPEmbedding.load(str(path)), PSPEngine.from_folder]


@pytest.mark.parametrize("read", READERS, ids=["module", "engine"])
def test_integer_weights_are_refused(saved, read):
    import torch
    from safetensors.torch import load_file, save_file

    weights = load_file(saved / "model.safetensors")
    save_file({"embedding.weight": (weights["embedding.weight"] * 10).to(torch.int8)}, saved / "model.safetensors")
    with pytest.raises(ModelFolderError, match="'embedding.weight' has dtype .*int8, not a float type"):
        read(saved)


def test_bfloat16_weights_are_a_clear_engine_error(saved):
    import torch
    from safetensors.torch import load_file, save_file

    weights = load_file(saved / "model.safetensors")
    save_file({"embedding.weight": weights["embedding.weight"].bfloat16()}, saved / "model.safetensors")
    with pytest.raises(ModelFolderError, match="model.safetensors: .*bfloat16.*engine reads float32 or float16"):
        PSPEngine.from_folder(saved)
    assert PSPEmbedding.load(str(saved)).embedding.weight.dtype == torch.float32  # the module widens it


@pytest.mark.parametrize("read", READERS, ids=["module", "engine"])
def test_newer_format_asks_to_upgrade(saved, read):
    config = json.loads((saved / "psp_config.json").read_text())
    config["format_version"] = 99
    (saved / "psp_config.json").write_text(json.dumps(config))
    with pytest.raises(ModelFolderError, match="pip install -U psp-st"):
        read(saved)


@pytest.mark.parametrize("version", [None, 0, -3], ids=["missing", "zero", "negative"])
@pytest.mark.parametrize("read", READERS, ids=["module", "engine"])
def test_pre_release_format_is_reported(saved, read, version):
    config = json.loads((saved / "psp_config.json").read_text())
    config["format_version"] = version  # psp-st never wrote a version below 1
    (saved / "psp_config.json").write_text(json.dumps(config))
    with pytest.raises(ModelFolderError, match="pre-release"):
        read(saved)


def test_static_export_matches_on_known_pieces(psp_module, tmp_path):
    psp_module.export_static(tmp_path / "static")
    static = SentenceTransformer(str(tmp_path / "static"), device="cpu")
    known = ["a man rides a horse", "Two KIDS play in the snow.", "3 dogs"]
    np.testing.assert_allclose(static.encode(known), psp_module.embed(known), rtol=1e-5, atol=1e-6)
    # Unknown characters are dropped by the static tokenizer as PSPEmbedding drops unknown pieces ...
    with_unknown = ["a dog \u2603", "ca\u2603t"]
    np.testing.assert_allclose(static.encode(with_unknown), psp_module.embed(with_unknown), rtol=1e-5, atol=1e-6)
    # ... documented difference: a text with no known piece gives zeros there, the <unk> vector here.
    assert not np.abs(static.encode(["\u2603"])).any()


def test_static_export_of_a_byte_fallback_tokenizer_keeps_the_byte_pieces(caption_sentences, tmp_path):
    """With byte fallback an unseen character is byte pieces, not unknown: the export dropped them (other vectors)."""
    tokenizer = SentencePieceTokenizer.train(caption_sentences[:2000], vocab_size=500, seed=0, byte_fallback=True)
    module = PSPEmbedding(tokenizer, embedding_dim=8)
    module.export_static(tmp_path / "static")
    static = SentenceTransformer(str(tmp_path / "static"), device="cpu")
    texts = ["a dog \u2603", "ca\u2603t", "\u65e5\u672c"]
    np.testing.assert_allclose(static.encode(texts), module.embed(texts), rtol=1e-5, atol=1e-6)


def test_static_export_keeps_the_first_max_seq_length_pieces(sp_tokenizer, tmp_path):
    module = PSPEmbedding(sp_tokenizer, embedding_dim=8, max_seq_length=3)
    module.export_static(tmp_path / "static")
    static = SentenceTransformer(str(tmp_path / "static"), device="cpu")
    texts = ["a man rides a horse through the snow", "two kids play"]
    np.testing.assert_allclose(static.encode(texts), module.embed(texts), rtol=1e-5, atol=1e-6)


def test_model2vec_export_refuses_max_seq_length(sp_tokenizer, tmp_path):
    pytest.importorskip("model2vec")
    with pytest.raises(ValueError, match="max_seq_length = None"):
        PSPEmbedding(sp_tokenizer, embedding_dim=8, max_seq_length=3).export_model2vec(tmp_path / "m2v")
    assert not (tmp_path / "m2v").exists()


def test_model2vec_export_card_claims_no_licence(psp_module, tmp_path):
    """H8-1: model2vec's card says ``license: mit`` (its code's) whatever the weights were trained on."""
    pytest.importorskip("model2vec")
    from huggingface_hub import ModelCard

    psp_module.export_model2vec(tmp_path / "m2v")
    assert ModelCard.load(tmp_path / "m2v" / "README.md").data.license is None


def test_static_export_loads_without_psp_st(psp_module, tmp_path):
    psp_module.export_static(tmp_path / "static", normalize=True)
    code = (
        "import sys; sys.modules['psp_st'] = None\n"  # make psp_st unimportable
        "from sentence_transformers import SentenceTransformer\n"
        f"m = SentenceTransformer({str(tmp_path / 'static')!r}, device='cpu')\n"
        "import numpy as np; v = m.encode(['a dog']); print(v.shape, round(float(np.linalg.norm(v)), 4))\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "(1, 32) 1.0"


@pytest.mark.parametrize("export", ["export_static", "export_model2vec"])
def test_export_refuses_a_non_empty_folder_unless_overwrite(psp_module, tmp_path, export):
    from psp_st.io.output_policy import OutputExistsError

    if export == "export_model2vec":
        pytest.importorskip("model2vec")
    (tmp_path / "note.txt").write_text("the user's file")
    with pytest.raises(OutputExistsError, match=r"not empty: pass overwrite=True"):
        getattr(psp_module, export)(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["note.txt"]
    getattr(psp_module, export)(tmp_path / "out")
    getattr(psp_module, export)(tmp_path / "out", overwrite=True)


def test_st_merge_check_refuses_models_whose_pieces_differ(psp_module):
    """S10-1: ``SentenceTransformer.merge`` averaged row i of two different piece tables; ST's pre-merge check
    (mergekit itself is optional, so its validation is called directly) compares ``tokenizer.get_vocab()``."""
    from sentence_transformers.base.merging import _validate_models

    proto = psp_module.tokenizer.parsed_proto()  # the same table with two pieces swapped: same size and config
    proto.pieces[10].piece, proto.pieces[11].piece = proto.pieces[11].piece, proto.pieces[10].piece
    other = PSPEmbedding(SentencePieceTokenizer(proto.SerializeToString()), embedding_dim=32)
    models = [SentenceTransformer(modules=[module], device="cpu") for module in (psp_module, other)]
    with pytest.raises(ValueError, match="Tokenizer vocabulary"):
        _validate_models(models)

"""Python API: bad arguments raise a clear TypeError/ValueError naming the argument, never a silent wrong result."""

from __future__ import annotations

import numpy as np
import pytest
import torch

TEXTS = ["a cat sat on the mat", "a dog ran in the park", "the bird flew over the house"] * 50


def test_from_texts_refuses_a_single_string():
    from psp_st.modules.psp import PSPEmbedding

    with pytest.raises(TypeError, match="list .*of strings, got a single str"):
        PSPEmbedding.from_texts("a cat sat on the mat", vocab_size=40, embedding_dim=4)


def test_tokenizer_train_refuses_a_single_string():
    from psp_st.tokenization import SentencePieceTokenizer

    with pytest.raises(TypeError, match="got a single str"):
        SentencePieceTokenizer.train("a cat sat on the mat", vocab_size=40)


@pytest.mark.parametrize(
    "batch_size, error", [(-1, ValueError), (0, ValueError), ("2", TypeError), (2.5, TypeError), (True, TypeError)]
)
def test_embed_checks_batch_size(psp_module, batch_size, error):
    with pytest.raises(error, match="batch_size"):
        psp_module.embed(["a dog"], batch_size=batch_size)


def test_encode_texts_checks_batch_size(psp_model):
    from psp_st.inference import encode_texts

    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        encode_texts(psp_model, ["a dog"], batch_size=-1)


@pytest.mark.parametrize("dtype", [np.int8, np.bool_])
def test_encode_texts_refuses_a_non_float_dtype_for_a_sentence_transformer(psp_model, dtype):
    """N8-4: the engine refused dtype=int8; a SentenceTransformer's vectors were truncated to it (not quantized)."""
    from psp_st.inference import encode_texts

    with pytest.raises(ValueError, match="dtype must be a float type.*quantize_embeddings"):
        encode_texts(psp_model, ["a dog"], dtype=dtype)


def test_vocab_size_given_as_text_is_a_type_error():
    from psp_st.tokenization import SentencePieceTokenizer

    with pytest.raises(TypeError, match=r"vocab_size \(--vocab-size\) must be an integer, got str '1000'"):
        SentencePieceTokenizer.train(TEXTS, vocab_size="1000")


def test_character_coverage_below_sentencepiece_limit_says_the_range():
    from psp_st.tokenization import SentencePieceTokenizer

    with pytest.raises(ValueError, match=r"character_coverage must be in \[0.98, 1.0\] \(sentencepiece's limit"):
        SentencePieceTokenizer.train(TEXTS, vocab_size=40, character_coverage=0.5)


def test_embedding_dim_given_as_text_is_a_type_error():
    from psp_st.modules.psp import PSPEmbedding

    with pytest.raises(TypeError, match="embedding_dim must be an integer"):
        PSPEmbedding.from_texts(TEXTS, vocab_size=40, embedding_dim="16")


def test_lone_surrogate_names_the_text_index(psp_module):
    with pytest.raises(ValueError, match=r"texts\[1\] has an unpaired surrogate '\\udc80' at character 4"):
        psp_module.embed(["fine", "bad \udc80 text"])


def test_lone_surrogate_through_sentence_transformers_encode(psp_model):
    with pytest.raises(ValueError, match="unpaired surrogate"):
        psp_model.encode(["fine", "bad \udc80 text"])


def test_non_finite_embeddings_are_never_returned(psp_model, psp_module):
    from psp_st.inference import encode_texts
    from psp_st.inference.finite import NonFiniteOutputError

    with torch.no_grad():
        psp_module.embedding.weight.fill_(float("nan"))
    with pytest.raises(NonFiniteOutputError, match="non-finite"):
        encode_texts(psp_model, ["a dog", "a cat"])


def test_finite_embeddings_pass_unchanged(psp_model, psp_module):
    from psp_st.inference import encode_texts

    np.testing.assert_array_equal(encode_texts(psp_model, ["a dog"]), psp_module.embed(["a dog"]))


# -- recipes ------------------------------------------------------------------------------------------------
def _recipe(**sections):
    return {"name": "t", "data": {"sources": ["x.parquet"]}, **sections}


@pytest.mark.parametrize(
    "trainer, key",
    [
        ({"learning_rate": float("nan")}, "trainer.learning_rate"),
        ({"learning_rate": float("inf")}, "trainer.learning_rate"),
        ({"max_grad_norm": float("nan")}, "trainer.max_grad_norm"),
    ],
)
def test_non_finite_recipe_number_names_the_key(trainer, key):
    from psp_st.training.recipe import load_config

    with pytest.raises(ValueError, match=rf"recipe: {key} is (nan|inf)"):
        load_config(_recipe(trainer=trainer))


@pytest.mark.parametrize(
    "section, value, message",
    [
        ({"trainer": {"learning_rate": -0.1}}, None, r"trainer\.learning_rate must be > 0"),
        ({"trainer": {"learning_rate": "1e-3"}}, None, r"trainer\.learning_rate must be a number.*write 1\.0e-3"),
        ({"trainer": {"per_device_train_batch_size": 0}}, None, r"per_device_train_batch_size must be > 0"),
        ({"tokenizer": {"vocab_size": "1000"}}, None, r"tokenizer\.vocab_size must be an integer"),
        ({"model": {"dropout": 1.5}}, None, r"model\.dropout must be in \[0\.0, 1\.0\]"),
        ({"megabatch": {"size": 2.5}}, None, r"megabatch\.size must be an integer"),
        ({"megabatch": {"size": -1}}, None, r"megabatch\.size must be >= 0, got -1"),
        ({"megabatch": {"anneal": "x"}}, None, r"megabatch\.anneal must be an integer, got str 'x'$"),  # U14: no hint
    ],
)
def test_bad_recipe_numbers_name_the_key(section, value, message):
    from psp_st.training.recipe import load_config

    with pytest.raises(ValueError, match=message):
        load_config(_recipe(**section))


def test_recipe_nan_from_yaml_is_rejected(tmp_path):
    from psp_st.training.recipe import load_config

    recipe = tmp_path / "r.yaml"
    recipe.write_text("data: {sources: [x.parquet]}\ntrainer: {learning_rate: .nan}\n")
    with pytest.raises(ValueError, match=r"trainer\.learning_rate is nan"):
        load_config(recipe)


def test_recipe_sources_as_one_string_is_a_one_element_list():
    from psp_st.training.recipe import load_config

    config = load_config({"name": "t", "data": {"sources": "training_pairs/coco.parquet"}})
    assert config["data"]["sources"] == ["training_pairs/coco.parquet"]


def test_recipe_sources_of_wrong_type_is_refused():
    from psp_st.training.recipe import load_config

    with pytest.raises(ValueError, match="data.sources must be a list of file paths"):
        load_config({"name": "t", "data": {"sources": [1, 2]}})


@pytest.mark.parametrize("kind", ["words", "trigrams", "morfessor"])
def test_zoo_tokenizers_refuse_a_single_string(kind):
    """AP1: a str was iterated, training a vocabulary of its characters."""
    from psp_st.tokenization import train_tokenizer_of_kind

    with pytest.raises(TypeError, match="got a single str: wrap it in a list"):
        train_tokenizer_of_kind(kind, "a cat sat on the mat")


def test_zoo_from_texts_refuses_a_single_string():
    from psp_st.modules import WordAveraging

    with pytest.raises(TypeError, match="got a single str"):
        WordAveraging.from_texts("a cat sat on the mat")


@pytest.mark.parametrize("model", ["psp-en", None])
def test_encode_texts_asks_for_a_loaded_model(model):
    """AP7: a model name called str.encode ('encode() takes at most 2 arguments'); None was 'not iterable'."""
    from psp_st.inference import encode_texts

    with pytest.raises(TypeError, match="model must be a loaded model .*psp_st.load"):
        encode_texts(model, ["a dog"])


def test_the_top_level_api_has_return_annotations():
    """AP9: psp_st.load and the public methods of PSPEmbedding / SentencePieceTokenizer had none (no IDE types)."""
    import inspect

    import psp_st

    functions = [psp_st.load]
    for cls in (psp_st.PSPEmbedding, psp_st.SentencePieceTokenizer):
        functions += [f for name, f in vars(cls).items() if inspect.isfunction(f) and not name.startswith("_")]
    missing = [f.__qualname__ for f in functions if inspect.signature(f).return_annotation is inspect.Signature.empty]
    assert missing == []


@pytest.mark.parametrize("call", ["encode", "encode_flat", "encode_flat_memo", "words"])
def test_a_negative_max_length_is_refused(sp_tokenizer, call):
    """AP15: -1 dropped the last piece (encode), gave a length of -1 (encode_flat) or was ignored (the word memo)."""
    from psp_st.tokenization import WordTokenizer

    calls = {
        "encode": lambda: sp_tokenizer.encode(["a dog runs"], max_length=-1),
        "encode_flat": lambda: sp_tokenizer.encode_flat(["a dog runs"], max_length=-1, memo=False),
        "encode_flat_memo": lambda: sp_tokenizer.encode_flat(["a dog runs"], max_length=-1, drop_unknown=True),
        "words": lambda: WordTokenizer.train(["a dog runs"]).encode(["a dog runs"], max_length=-1),
    }
    with pytest.raises(ValueError, match="max_length must be >= 0, got -1"):
        calls[call]()


@pytest.mark.parametrize("package", ["psp_st", "psp_st.data", "psp_st.evaluation", "psp_st.training"])
def test_lazy_public_names_are_listed_and_typed(package):
    """Y8-1: psp_st.load / PSPEmbedding / SentencePieceTokenizer (and psp_st.data.CompactShuffleBatchSampler) were
    missing from dir() and were ``Any`` to mypy: no TYPE_CHECKING import told a type checker what they are."""
    import ast
    import importlib
    from pathlib import Path

    module = importlib.import_module(package)
    lazy = set(module.__all__) - set(vars(module))
    assert lazy <= set(dir(module))
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    typed = {
        alias.asname or alias.name
        for statement in tree.body
        if isinstance(statement, ast.If) and "TYPE_CHECKING" in ast.unparse(statement.test)
        for node in statement.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }
    assert lazy <= typed


def test_classmethod_constructors_return_their_class():
    """Y8-2: PSPEmbedding.from_teacher (README) and the word/trigram tokenizers' train/load were typed ``Any``, so a
    typed caller's module or tokenizer was unchecked; they return ``cls(...)``."""
    import typing

    from psp_st.modules.base import PSPInputModule
    from psp_st.tokenization.words import WordTokenizer

    for method in (PSPInputModule.from_teacher, WordTokenizer.train, WordTokenizer.load):
        assert typing.get_type_hints(method)["return"] is typing.Self, method.__qualname__

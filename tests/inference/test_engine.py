"""psp-st's P-SP inference engine: the same vectors on every path, torch-free, threads, bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

import numpy as np
import pytest

#: Texts with and without unknown pieces (the captions tokenizer knows no snowman, Greek or CJK).
TEXTS = [
    "A man plays a guitar.",
    "a dog ☃ runs",
    "ca☃t on a mat",
    "☃ two dogs",
    "the Ω ΣΑΣ end ☃",
    "Two  children\tplay\u00a0soccer outside.",
    "日本 people walk",
]


def reference_embed(module, texts: list[str]) -> np.ndarray:
    """An independent computation: sentencepiece ids (unknown pieces + the bare ▁ before them dropped), mean."""
    weights = module.embedding.weight.detach().numpy()
    tokenizer = module.tokenizer
    rows = []
    for ids in tokenizer.encode(texts):
        kept = [
            piece
            for i, piece in enumerate(ids)
            if piece != tokenizer.unk_id
            and not (piece == tokenizer.word_boundary_id and i + 1 < len(ids) and ids[i + 1] == tokenizer.unk_id)
        ]
        rows.append(weights[kept].mean(axis=0) if kept else weights[tokenizer.unk_id])
    return np.stack(rows)


@pytest.fixture
def release_folder(psp_module, tmp_path):
    """The release layout of psp-st build: StaticEmbedding export at the root, PSPEmbedding in trainable/."""
    from sentence_transformers import SentenceTransformer

    root = tmp_path / "release"
    psp_module.export_static(root)
    SentenceTransformer(modules=[psp_module], device="cpu").save(str(root / "trainable"))
    return root


def test_texts_have_unknown_pieces(psp_module):
    unknown = [psp_module.unk_id in ids for ids in psp_module.tokenizer.encode(TEXTS)]
    assert unknown[0] is False and sum(unknown) >= 4


def test_engine_matches_independent_mean(psp_module):
    from psp_st.inference import PSPEngine

    engine = PSPEngine.from_module(psp_module, threads=1)
    np.testing.assert_allclose(engine.encode(TEXTS), reference_embed(psp_module, TEXTS), atol=1e-5)


def test_all_paths_agree(psp_module, release_folder):
    from sentence_transformers import SentenceTransformer

    from psp_st.inference import load_engine

    expected = reference_embed(psp_module, TEXTS)
    trainable = SentenceTransformer(str(release_folder / "trainable"), device="cpu", trust_remote_code=True)
    root = SentenceTransformer(str(release_folder), device="cpu")
    np.testing.assert_allclose(psp_module.embed(TEXTS), expected, atol=1e-5)
    np.testing.assert_allclose(load_engine(release_folder, threads=1).encode(TEXTS), expected, atol=1e-5)
    np.testing.assert_allclose(load_engine(release_folder / "trainable").encode(TEXTS), expected, atol=1e-5)
    np.testing.assert_allclose(trainable.encode(TEXTS), expected, atol=1e-5)
    np.testing.assert_allclose(root.encode(TEXTS), expected, atol=1e-5)


def test_torch_free_path_imports_no_torch(release_folder, psp_module):
    code = (
        "import sys, json, numpy as np\n"
        "from psp_st.inference.engine import load_engine\n"
        f"vectors = load_engine({str(release_folder)!r}, threads=1).encode({TEXTS!r})\n"
        "assert 'torch' not in sys.modules and 'sentence_transformers' not in sys.modules, 'torch imported'\n"
        "np.save(sys.argv[1], vectors)\n"
    )
    out = release_folder.parent / "vectors.npy"
    subprocess.run([sys.executable, "-c", code, str(out)], check=True)
    np.testing.assert_allclose(np.load(out), reference_embed(psp_module, TEXTS), atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_small_job_loads_no_numba_and_a_larger_one_the_same_vectors(psp_module, tmp_path, dtype):  # T4, T5
    from sentence_transformers import SentenceTransformer

    pytest.importorskip("numba")
    psp_module.weights_dtype = dtype
    SentenceTransformer(modules=[psp_module], device="cpu").save(str(tmp_path / "model"))
    code = (
        "import sys, numpy as np\n"
        "import psp_st.inference.pooling as pooling\n"
        "from psp_st.inference.engine import load_engine\n"
        f"engine = load_engine({str(tmp_path / 'model')!r}, threads=1)\n"
        f"assert engine.weights.dtype == np.{dtype}\n"
        f"small = engine.encode({TEXTS!r}, normalize=True)\n"
        "assert 'numba' not in sys.modules, 'numba loaded for a small job'\n"
        "pooling.KERNEL_AFTER_PIECES = 1\n"
        f"large = engine.encode({TEXTS!r}, normalize=True)\n"
        "assert pooling.has_compiled_kernel() and np.array_equal(small.view(np.uint32), large.view(np.uint32))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-2000:]


def test_prepare_takes_the_one_time_costs_before_the_first_encode(psp_module, tmp_path):
    from sentence_transformers import SentenceTransformer

    pytest.importorskip("numba")
    SentenceTransformer(modules=[psp_module], device="cpu").save(str(tmp_path / "model"))
    code = (
        "import sys\n"
        "from psp_st.inference.engine import load_engine\n"
        f"engine = load_engine({str(tmp_path / 'model')!r}, threads=1)\n"
        "assert 'numba' not in sys.modules\n"
        "assert engine.prepare() is engine\n"
        "assert 'numba' in sys.modules and engine.tokenizer.__dict__['_word_memo'] is not None\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_numpy_pooling_before_the_kernel_loads_is_the_kernel_bit_for_bit(normalize, dtype):  # T4
    import psp_st.inference.pooling as pooling

    kernel = pooling._numba_kernel()
    if kernel is None:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(0)
    weights = (rng.standard_normal((50, 40)) * 10.0 ** rng.integers(-3, 4, (50, 1))).astype(dtype)
    lengths = np.array([0, 1, 3, 4, 5, 8, 11, 2, 30])
    flat = rng.integers(0, 50, int(lengths.sum()))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    compiled, sequential = (np.empty((len(lengths), 40), np.float32) for _ in range(2))
    kernel(weights.view(np.uint16) if dtype == np.float16 else weights, flat, offsets, 7, normalize, compiled)
    pooling._pool_sequential(weights, flat, offsets, 7, normalize, sequential)
    assert np.array_equal(compiled.view(np.uint32), sequential.view(np.uint32))


def test_numba_without_a_writable_cache_folder_falls_back_to_numpy(release_folder, psp_module):
    # psp-st[fast] installed read-only (a container image, another user's site-packages) with no writable home:
    # numba's cache=True finds no folder for its compiled code. NUMBA_CACHE_LOCATOR_CLASSES plays that machine.
    numba = pytest.importorskip("numba")
    if not hasattr(numba.core.config, "CACHE_LOCATOR_CLASSES"):  # numba < 0.62 reads no NUMBA_CACHE_LOCATOR_CLASSES
        pytest.skip("this numba cannot be made to miss its cache folder; checked by hand under a read-only mount (D11)")
    code = (
        "import sys, numpy as np\n"
        "from psp_st.inference.engine import load_engine\n"
        "from psp_st.inference.pooling import has_compiled_kernel\n"
        f"vectors = load_engine({str(release_folder)!r}, threads=1).encode({TEXTS!r})\n"
        "assert not has_compiled_kernel()\n"
        "np.save(sys.argv[1], vectors)\n"
    )
    out = release_folder.parent / "vectors.npy"
    env = {**os.environ, "NUMBA_CACHE_LOCATOR_CLASSES": "ZipCacheLocator"}  # only for code inside a zip file
    result = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "NUMBA_CACHE_DIR" in result.stderr  # the warning says how to get the compiled kernels back
    np.testing.assert_allclose(np.load(out), reference_embed(psp_module, TEXTS), atol=1e-5)


def test_empty_and_unknown_only_texts_get_the_unk_vector(psp_module):
    unk = psp_module.embedding.weight.detach().numpy()[psp_module.unk_id]
    vectors = psp_module.embed(["", "   ", "☃☃"])
    np.testing.assert_allclose(vectors, np.stack([unk] * 3), atol=1e-6)


def test_threads_give_identical_output(psp_module, caption_sentences):
    from psp_st.inference import PSPEngine

    texts = caption_sentences[:3000] + TEXTS
    one = PSPEngine.from_module(psp_module, threads=1).encode(texts, batch_size=256)
    two = PSPEngine.from_module(psp_module, threads=2).encode(texts, batch_size=256)
    assert np.array_equal(one, two)


def test_normalize_and_float16(psp_module):
    from psp_st.inference import PSPEngine

    engine = PSPEngine.from_module(psp_module, threads=1)
    plain = engine.encode(TEXTS)
    normed = engine.encode(TEXTS, normalize=True)
    np.testing.assert_allclose(normed, plain / np.linalg.norm(plain, axis=1, keepdims=True), atol=1e-6)
    half = engine.encode(TEXTS, dtype=np.float16)
    assert half.dtype == np.float16
    np.testing.assert_allclose(half, plain, atol=2e-3 * np.abs(plain).max())


def test_out_buffer_is_filled_and_returned(psp_module):
    from psp_st.inference import PSPEngine

    engine = PSPEngine.from_module(psp_module, threads=1)
    buffer = np.full((len(TEXTS), engine.dim), np.nan, dtype=np.float32)
    assert engine.encode(TEXTS, out=buffer) is buffer
    np.testing.assert_array_equal(buffer, engine.encode(TEXTS))


def test_out_buffer_of_wrong_shape_is_refused(psp_module):
    from psp_st.inference import PSPEngine

    engine = PSPEngine.from_module(psp_module, threads=1)
    with pytest.raises(ValueError, match="out must be"):
        engine.encode(TEXTS, out=np.empty((len(TEXTS) + 1, engine.dim), dtype=np.float32))


@pytest.mark.parametrize("buffer", [[], [[0.0]], "out"])
def test_an_out_buffer_that_is_no_array_is_named(psp_module, buffer):
    """A list as `out` gave AttributeError ('list' object has no attribute 'shape')."""
    from psp_st.inference import PSPEngine

    engine = PSPEngine.from_module(psp_module, threads=1)
    with pytest.raises(TypeError, match=f"out must be a numpy array \\(or None\\), got {type(buffer).__name__}"):
        engine.encode(TEXTS, out=buffer)


def test_read_only_out_buffer_is_refused(psp_module):
    from psp_st.inference import PSPEngine

    engine = PSPEngine.from_module(psp_module, threads=1)
    buffer = np.zeros((len(TEXTS), engine.dim), dtype=np.float32)
    buffer.setflags(write=False)
    with pytest.raises(ValueError, match="out is read-only"):
        engine.encode(TEXTS, out=buffer)


def test_non_contiguous_out_buffer_is_named(psp_module):
    from psp_st.inference import PSPEngine

    engine = PSPEngine.from_module(psp_module, threads=1)
    with pytest.raises(ValueError, match="not C-contiguous"):
        engine.encode(TEXTS, out=np.zeros((engine.dim, len(TEXTS)), dtype=np.float32).T)


def test_embed_follows_weight_updates(psp_module):
    import torch

    before = psp_module.embed(TEXTS[:1])
    with torch.no_grad():
        psp_module.embedding.weight.mul_(2)
    np.testing.assert_allclose(psp_module.embed(TEXTS[:1]), 2 * before, rtol=1e-5)


def test_embed_of_bfloat16_weights_follows_a_fused_adam_step(psp_module):
    """T7-7: fused Adam (transformers' default optimizer) leaves the version counter alone: ``embed`` of a module
    with copied (bfloat16) weights kept giving the untrained vectors."""
    import torch

    psp_module.to(torch.bfloat16)
    before = psp_module.embed(TEXTS[:1])
    features = psp_module.preprocess(TEXTS[:1])
    optimizer = torch.optim.AdamW(psp_module.parameters(), lr=0.5, fused=True)
    psp_module.train()
    psp_module(features)["sentence_embedding"].sum().backward()
    optimizer.step()
    psp_module.eval()
    after = psp_module.embed(TEXTS[:1])
    assert not np.allclose(after, before)
    with torch.no_grad():
        expected = psp_module(psp_module.preprocess(TEXTS[:1]))["sentence_embedding"].float().numpy()
    np.testing.assert_allclose(after, expected, atol=1e-2)


def test_max_seq_length_keeps_first_known_pieces(sp_tokenizer):
    from psp_st.inference import PSPEngine

    weights = np.random.default_rng(0).normal(size=(sp_tokenizer.vocab_size, 8)).astype(np.float32)
    engine = PSPEngine(weights, sp_tokenizer, max_seq_length=2, threads=1)
    flat, lengths = sp_tokenizer.encode_flat(["a dog ☃ runs fast"], drop_unknown=True)
    np.testing.assert_allclose(engine.encode(["a dog ☃ runs fast"])[0], weights[flat[:2]].mean(axis=0), atol=1e-6)


@pytest.mark.parametrize("bad, error", [([1, "a"], TypeError), ([None], TypeError), (b"bytes", TypeError)])
def test_non_strings_are_refused(psp_module, bad, error):
    with pytest.raises(error, match="str"):
        psp_module.embed(bad)


def test_empty_list_gives_empty_array(psp_module):
    from psp_st.inference import PSPEngine

    assert PSPEngine.from_module(psp_module).encode([]).shape == (0, psp_module.embedding_dim)


@pytest.mark.parametrize("options", [{"batch_size": 0}, {"batch_size": -3}, {"dtype": np.int32}])
def test_bad_options_are_refused(psp_module, options):
    from psp_st.inference import PSPEngine

    with pytest.raises(ValueError):
        PSPEngine.from_module(psp_module).encode(TEXTS, **options)


def test_bad_threads_and_non_psp_folder(psp_module, tmp_path):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize

    from psp_st.inference import PSPEngine, load_engine
    from psp_st.modules.folder_format import ModelFolderError

    with pytest.raises(ValueError, match="threads"):
        PSPEngine.from_module(psp_module, threads=0)
    static = tmp_path / "static"
    SentenceTransformer(modules=[psp_module.to_static_embedding(), Normalize()], device="cpu").save(str(static))
    with pytest.raises(ModelFolderError, match="no P-SP model"):
        load_engine(static)


def test_model2vec_export_loads_and_agrees(psp_module, tmp_path):
    model2vec = pytest.importorskip("model2vec")

    psp_module.export_model2vec(tmp_path / "m2v")
    model = model2vec.StaticModel.from_pretrained(str(tmp_path / "m2v"))
    np.testing.assert_allclose(model.encode(TEXTS), psp_module.embed(TEXTS), atol=1e-5)
    assert not np.abs(model.encode(["\u2603"])).any()  # documented: no known piece -> zeros in model2vec


def test_float16_release_is_half_size_and_within_tolerance(psp_module, tmp_path):
    from sentence_transformers import SentenceTransformer

    from psp_st.inference import load_engine
    from psp_st.inference.pooling import has_compiled_kernel

    expected = psp_module.embed(TEXTS)
    folders = {}
    for dtype in ("float32", "float16"):
        psp_module.weights_dtype = dtype
        root = folders[dtype] = tmp_path / dtype
        psp_module.export_static(root)
        SentenceTransformer(modules=[psp_module], device="cpu").save(str(root / "trainable"))
    size = {dtype: (root / "trainable" / "model.safetensors").stat().st_size for dtype, root in folders.items()}
    assert size["float16"] < 0.51 * size["float32"]
    half = folders["float16"]
    scale = np.abs(expected).max()
    np.testing.assert_allclose(load_engine(half).encode(TEXTS), expected, atol=1e-3 * scale)
    np.testing.assert_allclose(SentenceTransformer(str(half), device="cpu").encode(TEXTS), expected, atol=2e-3 * scale)
    reloaded = SentenceTransformer(str(half / "trainable"), device="cpu", trust_remote_code=True)[0]
    assert reloaded.weights_dtype == "float16" and reloaded.embedding.weight.dtype.is_floating_point
    engine = load_engine(half)  # pools from float16 with the compiled kernel, from float32 without
    assert engine.weights.dtype == (np.float16 if has_compiled_kernel() else np.float32)
    assert load_engine(folders["float32"]).weights.dtype == np.float32
    np.testing.assert_array_equal(reloaded.embed(TEXTS), engine.encode(TEXTS))


def test_bad_weights_dtype_is_refused(sp_tokenizer):
    from psp_st.modules.psp import PSPEmbedding

    with pytest.raises(ValueError, match="weights_dtype"):
        PSPEmbedding(sp_tokenizer, embedding_dim=8, weights_dtype="int4")


def test_pooling_backends_agree(psp_module, caption_sentences):
    """The numba kernel, torch's embedding_bag (without numba, when torch is loaded) and the numpy fallback."""
    import torch

    import psp_st.inference.pooling as pooling
    from psp_st.inference import PSPEngine

    engine = PSPEngine.from_module(psp_module, threads=1)
    texts = caption_sentences[:500] + TEXTS + [""]
    flat, lengths = engine.token_ids(texts)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    out = {}
    out["torch"] = np.empty((len(texts), engine.dim), np.float32)
    pooling._pool_torch(torch, engine.weights, flat, offsets, engine.tokenizer.unk_id, out["torch"])
    pooling._normalize_rows(out["torch"])
    out["numpy"] = np.empty_like(out["torch"])
    pooling._pool_numpy(engine.weights, flat, offsets, engine.tokenizer.unk_id, out["numpy"])
    pooling._normalize_rows(out["numpy"])
    kernel = pooling._numba_kernel()
    if kernel is not None:
        out["numba"] = np.empty_like(out["torch"])
        kernel(engine.weights, flat, offsets, engine.tokenizer.unk_id, True, out["numba"])
    for name, vectors in out.items():
        np.testing.assert_allclose(vectors, out["torch"], atol=1e-6, err_msg=name)


def test_numpy_pooling_of_a_batch_of_only_empty_texts_gives_the_empty_row():
    """M6-13: a group of rows with no piece at all (width 0) takes the same ``weights[empty_row]`` as a lone one."""
    import psp_st.inference.pooling as pooling

    weights = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = np.empty((2, 3), np.float32)
    pooling._pool_numpy(weights, np.zeros(0, np.int64), np.array([0, 0, 0]), 3, out)
    assert np.array_equal(out, weights[[3, 3]])


def test_numpy_pooling_of_long_texts_gathers_a_bounded_block(monkeypatch):
    """N8-5: the numpy fallback (no numba, no torch: ``psp-st embed``) padded 64 texts to the longest and gathered them
    at once (64 texts of 20,000 pieces at d=384: 1.8 GB); now at most ``GATHER_ELEMENTS`` values, the same means."""
    import tracemalloc

    import psp_st.inference.pooling as pooling

    monkeypatch.setattr(pooling, "GATHER_ELEMENTS", 1 << 16, raising=False)  # 4,096 pieces of d=16
    rng = np.random.default_rng(0)
    weights = rng.standard_normal((1000, 16)).astype(np.float32)
    lengths = np.array([20_000] * 8 + [3, 0, 5_000, 1])
    flat = rng.integers(1, 1000, int(lengths.sum()))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    out = np.empty((len(lengths), 16), np.float32)
    tracemalloc.start()
    pooling._pool_numpy(weights, flat, offsets, 0, out)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 2 << 20  # the old single gather of 8 x 20,000 x 16 float32 was 10 MB
    means = [weights[flat[a:b]].astype(np.float64).mean(0) if b > a else weights[0] for a, b in pairwise(offsets)]
    np.testing.assert_allclose(out, np.stack(means), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape", [(16, 8), (600, 1024), (1100, 1024)])
def test_huge_page_copy_is_an_equal_copy(shape, dtype):
    """Small matrices get a plain copy; large ones (>= 2 MiB) start on a 2 MiB boundary where Linux offers it."""
    import mmap

    from psp_st.inference.pooling import huge_page_copy

    weights = np.random.default_rng(0).standard_normal(shape).astype(np.float16)
    copy = huge_page_copy(weights, dtype)
    assert copy.dtype == dtype and copy.flags.c_contiguous and copy.flags.writeable
    np.testing.assert_array_equal(copy, weights.astype(dtype))
    assert not np.shares_memory(copy, weights)
    if hasattr(mmap, "MADV_HUGEPAGE") and copy.nbytes >= 2 << 20:
        assert copy.ctypes.data % (2 << 20) == 0


def test_numba_kernel_sums_in_piece_order():
    """Grouped passes (4 rows at a time, then the rest) give exactly the sequential float32 sum in piece order."""
    import psp_st.inference.pooling as pooling

    kernel = pooling._numba_kernel()
    if kernel is None:
        pytest.skip("numba is not installed")
    rng = np.random.default_rng(0)
    weights = (rng.standard_normal((50, 40)) * 10.0 ** rng.integers(-3, 4, (50, 1))).astype(np.float32)
    lengths = np.array([0, 1, 3, 4, 5, 8, 11, 2])
    flat = rng.integers(0, 50, int(lengths.sum()))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    out = np.empty((len(lengths), 40), np.float32)
    kernel(weights, flat, offsets, 7, False, out)
    for i, (start, stop) in enumerate(zip(offsets[:-1], offsets[1:], strict=True)):
        expected = weights[7].copy() if stop == start else np.zeros(40, np.float32)
        for piece in flat[start:stop]:
            expected = expected + weights[piece]
        assert np.array_equal(out[i], expected / np.float32(max(stop - start, 1))), i


@pytest.mark.parametrize(
    ("key", "value"),
    [("lowercase", "tr"), ("weights_dtype", "int8xxxx"), ("dropout", 9.0), ("embedding_dim", "384"), ("foo", 1)],
)
def test_engine_and_module_refuse_the_same_bad_config(release_folder, key, value):
    import json

    from psp_st.inference import load_engine
    from psp_st.modules.folder_format import ModelFolderError
    from psp_st.modules.psp import PSPEmbedding

    file = release_folder / "trainable" / "psp_config.json"
    file.write_text(json.dumps({**json.loads(file.read_text()), key: value}))
    for load in (load_engine, lambda path: PSPEmbedding.load(str(path / "trainable"))):
        with pytest.raises(ModelFolderError, match=rf"psp_config\.json is invalid: .*{key}"):
            load(release_folder)


def test_garbage_sentencepiece_model_names_the_file(release_folder):
    from psp_st.inference import load_engine
    from psp_st.modules.folder_format import ModelFolderError

    model = release_folder / "trainable" / "sentencepiece.model"
    model.write_bytes(b"\x07garbage" * 100)
    with pytest.raises(ModelFolderError, match=rf"{model}: Not a valid sentencepiece model"):
        load_engine(release_folder)


def test_engine_refuses_a_folder_with_python_code_like_psp_st_load(release_folder):
    from psp_st.inference import load_engine
    from psp_st.modules.folder_format import ModelFolderError

    (release_folder / "trainable" / "evil.py").write_text("print('PWNED')\n")
    with pytest.raises(ModelFolderError, match=r"carries Python code \(trainable/evil\.py\)"):
        load_engine(release_folder)


def test_a_saved_default_prompt_applies_on_every_path(psp_module, tmp_path):
    from sentence_transformers import SentenceTransformer

    import psp_st
    from psp_st.inference import encode_texts, load_engine

    model = SentenceTransformer(modules=[psp_module], prompts={"query": "two dogs "}, default_prompt_name="query")
    model.save(str(tmp_path / "prompted"))
    expected = model.encode(TEXTS)
    np.testing.assert_allclose(load_engine(tmp_path / "prompted", threads=1).encode(TEXTS), expected, atol=1e-6)
    np.testing.assert_allclose(encode_texts(psp_st.load(tmp_path / "prompted"), TEXTS), expected, atol=1e-6)


@pytest.mark.parametrize("content", ["{bad", '{"prompts": ["query"], "default_prompt_name": "query"}'])
def test_a_malformed_sentence_transformers_config_names_the_file(psp_module, tmp_path, content):
    """The engine read the prompt with a bare json.loads: an unnamed JSONDecodeError or an AttributeError."""
    from sentence_transformers import SentenceTransformer

    from psp_st.inference import load_engine
    from psp_st.modules.folder_format import ModelFolderError

    SentenceTransformer(modules=[psp_module]).save(str(tmp_path / "model"))
    (tmp_path / "model" / "config_sentence_transformers.json").write_text(content, encoding="utf-8")
    with pytest.raises(ModelFolderError, match=r"config_sentence_transformers\.json"):
        load_engine(tmp_path / "model")


def test_encode_texts_applies_the_model_truncate_dim(psp_module):
    from sentence_transformers import SentenceTransformer

    from psp_st.inference import encode_texts

    model = SentenceTransformer(modules=[psp_module], truncate_dim=8, device="cpu")
    expected = model.encode(TEXTS, normalize_embeddings=True)  # ST truncates, then normalizes
    np.testing.assert_allclose(encode_texts(model, TEXTS, normalize=True), expected, atol=1e-6)


def test_numpy_integers_are_valid_batch_sizes_and_threads(psp_module):
    """AP4: np.int64(4) was refused as 'not an integer >= 1' while encode_texts and PSPEmbedding.embed took it."""
    from psp_st.inference import PSPEngine

    engine = PSPEngine.from_module(psp_module, threads=np.int64(1))
    assert engine.threads == 1 and type(engine.threads) is int
    expected = engine.encode(TEXTS)
    np.testing.assert_array_equal(engine.encode(TEXTS, batch_size=np.int64(2)), expected)


def test_a_pickled_prepared_engine_is_prepared_where_it_is_unpickled(psp_module):  # V4: a Ray actor, a spawned worker
    import copy
    import pickle

    from psp_st.inference.engine import PSPEngine

    pytest.importorskip("numba")
    tokenizer = copy.deepcopy(psp_module.tokenizer)  # its own word memo: the shared fixture's stays unbuilt
    engine = PSPEngine(psp_module.embedding.weight.detach()[:-1].numpy(), tokenizer).prepare()
    assert engine.tokenizer.word_memo() is not None
    clone = pickle.loads(pickle.dumps(engine))
    assert "_word_memo" in clone.tokenizer.__dict__, "the unpickled engine builds its memo in its first request"
    np.testing.assert_array_equal(clone.encode(["a dog runs"]), engine.encode(["a dog runs"]))


PLANTED_LOCATOR = """\
from pathlib import Path
Path({marker!r}).write_text("pwned")
class Locator:
    @classmethod
    def from_function(cls, py_func, source_path):
        return None
"""


def test_numba_config_file_in_the_current_folder_is_never_read(release_folder, tmp_path):  # S13-1
    """A folder someone gave you (a cloned data repository) with numba's ``.numba_config.yaml``: numba would import a
    module it names, load its cache (pickles) from a folder it names and overwrite a file it names at exit."""
    pytest.importorskip("numba")
    folder, marker, victim = tmp_path / "cloned", tmp_path / "marker", tmp_path / "victim.txt"
    folder.mkdir()
    victim.write_text("precious")
    (folder / "planted_locator.py").write_text(PLANTED_LOCATOR.format(marker=str(marker)))
    (folder / ".numba_config.yaml").write_text(
        f"cache_locator_classes: planted_locator.Locator\nchrome_trace: {victim}\n"
    )
    code = (
        "from psp_st.inference.engine import load_engine\n"
        "from psp_st.inference.pooling import has_compiled_kernel\n"
        f"load_engine({str(release_folder)!r}, threads=1).encode({TEXTS!r})\n"
        "assert not has_compiled_kernel()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=folder)
    assert result.returncode == 0, result.stderr[-2000:]
    assert not marker.exists() and victim.read_text() == "precious"
    assert ".numba_config.yaml" in result.stderr  # the warning names the file


def test_numba_cache_folder_other_users_can_write_is_never_used(release_folder, tmp_path):  # S13-3
    """numba unpickles its cache files: a NUMBA_CACHE_DIR anyone can write (a shared /tmp folder) runs their code."""
    pytest.importorskip("numba")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    code = (
        "from psp_st.inference.engine import load_engine\n"
        "from psp_st.inference.pooling import has_compiled_kernel\n"
        f"load_engine({str(release_folder)!r}, threads=1).encode({TEXTS!r})\n"
        "assert not has_compiled_kernel()\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "NUMBA_CACHE_DIR": str(shared)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "only you can write" in result.stderr and not any(shared.iterdir())

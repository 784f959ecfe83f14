"""One entry point to embed texts with any SentenceTransformer, taking the P-SP fast path when possible."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from psp_st.arguments import check_int
from psp_st.inference.engine import PSPEngine, check_float_dtype
from psp_st.inference.finite import check_finite
from psp_st.tokenization.text_checks import check_texts


def fast_module(model):
    """``(module, normalized)``: the SentenceTransformer's first module whose ``embed`` :func:`encode_texts` runs and
    whether a Normalize follows it; ``(None, False)`` where ``model.encode`` must run (not a SentenceTransformer, a
    module after the first that changes the vector, or ``truncate_dim``: ST truncates, then normalizes)."""
    from sentence_transformers.sentence_transformer.modules import Normalize

    try:
        modules = list(model)
    except TypeError:  # not iterable: not a SentenceTransformer
        return None, False
    if getattr(model, "truncate_dim", None) is not None:
        return None, False
    if modules and hasattr(modules[0], "embed") and all(isinstance(m, Normalize) for m in modules[1:]):
        return modules[0], len(modules) > 1
    return None, False


def takes_fast_path(model: object) -> bool:
    """Whether :func:`encode_texts` embeds with psp-st's own code (a :class:`PSPEngine`, or a SentenceTransformer whose
    first module has ``embed`` and no ``truncate_dim``) rather than ``model.encode``."""
    return isinstance(model, PSPEngine) or fast_module(model)[0] is not None


def check_model(model: object) -> None:
    """TypeError unless ``model`` is a loaded model (anything with ``encode``): a name or path, or None, is named."""
    if isinstance(model, (str, os.PathLike)) or not callable(getattr(model, "encode", None)):
        raise TypeError(
            f"model must be a loaded model (a SentenceTransformer or PSPEngine), got {type(model).__name__} "
            f"{model!r:.60}: open it first with psp_st.load(name) or psp_st.inference.load_engine(name)"
        )


def encode_texts(
    model, texts: Sequence[str], batch_size: int = 8192, normalize: bool = False, dtype: npt.DTypeLike = np.float32
) -> np.ndarray:
    """Embed ``texts`` as a ``(n, dim)`` array of ``dtype`` (a float type: float32, float16 or float64) with a
    :class:`~psp_st.inference.engine.PSPEngine` or a SentenceTransformer (its first module's ``embed`` if any)."""
    check_model(model)
    texts = check_texts(texts)
    batch_size = check_int("batch_size", batch_size)
    dtype = check_float_dtype(dtype)  # a SentenceTransformer's float32 vectors were cast to any dtype (N8-4)
    if isinstance(model, PSPEngine):
        return model.encode(texts, batch_size=batch_size, normalize=normalize, dtype=dtype)
    module, has_normalize = fast_module(model)
    if module is not None:
        # ST's encode prepends the model's default prompt: so does the fast path
        prompt = model.prompts.get(model.default_prompt_name or "", "")
        texts = [prompt + text for text in texts] if prompt else texts
        vectors = module.embed(texts, batch_size=batch_size, normalize=normalize or has_normalize)
    elif not texts:
        return np.zeros((0, model.get_embedding_dimension() or 0), dtype=dtype)
    else:
        vectors = model.encode(
            texts, batch_size=min(batch_size, 256), convert_to_numpy=True, normalize_embeddings=normalize
        )
    with np.errstate(over="ignore"):  # an overflow to float16 is refused by name below
        return check_finite(np.asarray(vectors, dtype=np.float32).astype(dtype, copy=False))

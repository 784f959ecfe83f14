"""One entry point to embed texts with any SentenceTransformer, taking the P-SP fast path when possible."""

from __future__ import annotations

import os
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from psp_st.arguments import check_int
from psp_st.inference.engine import PSPEngine
from psp_st.inference.finite import check_finite
from psp_st.tokenization.text_checks import check_texts


def fast_module(model):
    """The model's first module if it has a fast ``embed`` path and nothing after it changes the vector."""
    from sentence_transformers.sentence_transformer.modules import Normalize

    modules = list(model)
    if modules and hasattr(modules[0], "embed") and all(isinstance(m, Normalize) for m in modules[1:]):
        return modules[0], len(modules) > 1
    return None, False


def takes_fast_path(model: object) -> bool:
    """Whether :func:`encode_texts` embeds with psp-st's own code (a :class:`PSPEngine`, or a SentenceTransformer whose
    first module has ``embed`` and no ``truncate_dim``) rather than ``model.encode``."""
    if isinstance(model, PSPEngine):
        return True
    try:
        module, _ = fast_module(model)
    except TypeError:  # not iterable: not a SentenceTransformer
        return False
    return module is not None and getattr(model, "truncate_dim", None) is None


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
    """Embed ``texts`` as a ``(n, dim)`` array of ``dtype`` (float32 or float16) with a
    :class:`~psp_st.inference.engine.PSPEngine` or a SentenceTransformer (its first module's ``embed`` if any)."""
    check_model(model)
    texts = check_texts(texts)
    batch_size = check_int("batch_size", batch_size)
    if isinstance(model, PSPEngine):
        return model.encode(texts, batch_size=batch_size, normalize=normalize, dtype=dtype)
    if takes_fast_path(model):  # not with truncate_dim: ST truncates, then normalizes
        module, has_normalize = fast_module(model)
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

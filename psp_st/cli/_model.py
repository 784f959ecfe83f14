"""Opening a model for a CLI command: thread settings, then :func:`psp_st.hub.load`."""

from __future__ import annotations


def open_model(name: str, threads: int | None = None, engine: bool = False):
    """The model ``name`` for a CLI command; with ``engine``, a P-SP model (a release folder, a PSPEmbedding
    folder, a psp-st short name) opens as psp-st's inference engine (:func:`psp_st.inference.load_engine`)."""
    if threads is not None and threads < 1:
        raise ValueError(f"--threads must be >= 1, got {threads}")
    if engine:
        from pathlib import Path

        from psp_st.inference.engine import is_psp_folder, load_engine
        from psp_st.io.model_names import PRETRAINED, resolve_model_name

        resolved = resolve_model_name(name)
        if name in PRETRAINED or (Path(resolved).is_dir() and is_psp_folder(resolved)):
            return load_engine(name, threads=threads)
    import torch

    from psp_st.hub import load

    if threads is not None:
        torch.set_num_threads(threads)
    model = load(name)
    if threads is not None:
        for module in model:
            tokenizer = getattr(module, "tokenizer", None)
            if tokenizer is not None and hasattr(tokenizer, "num_threads"):
                tokenizer.num_threads = threads
    return model

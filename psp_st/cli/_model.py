"""Opening a model for a CLI command: thread settings, then :func:`psp_st.hub.load`."""

from __future__ import annotations


def open_model(name: str, threads: int | None = None):
    import torch

    from psp_st.hub import load

    if threads is not None:
        if threads < 1:
            raise ValueError(f"--threads must be >= 1, got {threads}")
        torch.set_num_threads(threads)
    model = load(name)
    if threads is not None:
        for module in model:
            tokenizer = getattr(module, "tokenizer", None)
            if hasattr(tokenizer, "num_threads"):
                tokenizer.num_threads = threads
    return model

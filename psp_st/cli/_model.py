"""Opening a model for a CLI command: thread settings, then :func:`psp_st.hub.load`."""

from __future__ import annotations

from psp_st.arguments import check_int


def open_model(name: str, threads: int | None = None, engine: bool = False):
    """The model ``name`` for a CLI command; with ``engine``, a P-SP model (a release folder, a PSPEmbedding
    folder, a psp-st short name) opens as psp-st's inference engine (:func:`psp_st.inference.load_engine`)."""
    if threads is not None:
        check_int("--threads", threads)
    if engine:
        from pathlib import Path

        from psp_st.inference.engine import is_psp_folder, load_engine
        from psp_st.io.model_names import PRETRAINED, resolve_model_name

        resolved = resolve_model_name(name)
        if name in PRETRAINED or (Path(resolved).is_dir() and is_psp_folder(resolved)):
            return load_engine(name, threads=threads)
    from psp_st.hub.load import load, set_threads

    return set_threads(load(name), threads)

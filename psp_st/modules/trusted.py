"""The trust model: which module classes a model folder may name, and loading a folder without remote code.

A ``modules.json`` names the Python class of every module, so a model folder chooses what code runs when it is
loaded. psp-st trusts exactly the class paths listed in :data:`TRUSTED_MODULE_CLASSES` (never a prefix: a folder
naming ``psp_st.Evil`` is not trusted), and only when the class imports from the *installed* psp-st package and is a
Sentence-Transformers module class. Everything else is Sentence-Transformers' own decision: its own classes load,
any other class needs ``trust_remote_code=True`` from the user.

Why not ``trust_remote_code=True`` for psp-st folders: Sentence-Transformers 6.x imports any class outside
``sentence_transformers.*`` only with that flag, and the flag is blanket: it also lets transformers'
``get_class_from_dynamic_module`` import a ``.py`` file shipped in the folder (a type ``psp_st.Evil`` plus a
``psp_st.py`` next to ``modules.json`` runs that file). Instead :func:`load_trusted` hands Sentence-Transformers the
already imported allow-listed classes through ``SentenceTransformer._load_with_module_classes`` (the mechanism its
own trainer uses to reload checkpoints of classes it already holds, see ``SentenceTransformerTrainer
._load_from_checkpoint``): those ``modules.json`` types resolve to our classes without any import, every other type
goes through Sentence-Transformers' normal gate, so nothing in the folder can run code. It is a private method, so
:func:`load_trusted` fails loudly (not silently trusting) if a future Sentence-Transformers drops it.
"""

from __future__ import annotations

import importlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from psp_st.modules.folder_format import ModelFolderError

#: The exact class paths of the modules psp-st ships (as written to ``modules.json``); never matched by prefix.
TRUSTED_MODULE_CLASSES: tuple[str, ...] = (
    "psp_st.modules.psp.PSPEmbedding",
    "psp_st.modules.averaging.TokenAveraging",
    "psp_st.modules.averaging.WordAveraging",
    "psp_st.modules.averaging.TrigramAveraging",
    "psp_st.modules.recurrent.LSTMAveraging",
    "psp_st.modules.recurrent.GRAN",
    "psp_st.modules.combine.CombinedEncoder",
)

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


def trusted_module_class(class_path: str) -> type | None:
    """The class for an allow-listed ``class_path`` imported from the installed psp-st, else ``None``.

    The class must be listed verbatim in :data:`TRUSTED_MODULE_CLASSES`, be defined in a file of this installed
    psp_st package (not a same-named module elsewhere on ``sys.path``), carry exactly that name, and be a
    Sentence-Transformers ``Module``.
    """
    if class_path not in TRUSTED_MODULE_CLASSES:
        return None
    return _import_trusted(class_path)


@cache
def _import_trusted(class_path: str) -> type | None:
    from sentence_transformers.base.modules import Module

    module_name, _, class_name = class_path.rpartition(".")
    module = importlib.import_module(module_name)
    cls = getattr(module, class_name, None)
    source = getattr(module, "__file__", None)
    if not isinstance(cls, type) or source is None:
        return None
    if not Path(source).resolve().is_relative_to(_PACKAGE_DIR) or f"{cls.__module__}.{cls.__name__}" != class_path:
        return None
    return cls if issubclass(cls, Module) else None


def trusted_module_classes() -> dict[str, type]:
    """Every allow-listed class path mapped to its installed class (what :func:`load_trusted` hands ST)."""
    classes = {path: trusted_module_class(path) for path in TRUSTED_MODULE_CLASSES}
    return {path: cls for path, cls in classes.items() if cls is not None}


def module_types(folder: str | os.PathLike) -> list[str]:
    """The ``type`` of every module in ``folder/modules.json`` (empty if the file is absent)."""
    modules_file = Path(folder) / "modules.json"
    if not modules_file.is_file():
        return []
    try:
        entries = json.loads(modules_file.read_text(encoding="utf-8"))
        return [str(entry.get("type", "")) for entry in entries]
    except (json.JSONDecodeError, AttributeError, TypeError) as error:
        raise ModelFolderError(
            f"{modules_file} is not a valid modules.json ({error}): re-save the model or download it again."
        ) from error


def code_files(folder: str | os.PathLike) -> list[Path]:
    """Python files anywhere inside ``folder`` (symlinks not followed), which psp-st never imports unasked."""
    return sorted(path for path in Path(folder).rglob("*.py"))


def check_no_code(folder: str | os.PathLike) -> None:
    """Refuse a model folder that carries ``.py`` files or names a class outside the trusted set.

    Raises:
        ModelFolderError: naming the file or class, and saying that ``trust_remote_code=True`` is the user's call.
    """
    files = code_files(folder)
    if files:
        shown = ", ".join(str(path.relative_to(folder)) for path in files[:3])
        raise ModelFolderError(
            f"{folder} carries Python code ({shown}{', ...' if len(files) > 3 else ''}); psp-st does not load a "
            "folder with code unless you pass trust_remote_code=True (only if you trust whoever wrote it)."
        )
    for class_path in module_types(folder):
        if class_path.startswith("sentence_transformers."):
            continue
        if trusted_module_class(class_path) is None:
            raise ModelFolderError(
                f"{Path(folder) / 'modules.json'} names the module class {class_path!r}, which is neither a "
                "Sentence-Transformers class nor one of psp-st's own modules; psp-st does not import it unless you "
                "pass trust_remote_code=True (only if you trust whoever wrote the folder)."
            )


def load_trusted(name_or_path: str | os.PathLike, device: str | None = "cpu", **kwargs: Any):
    """``SentenceTransformer(name_or_path)`` with psp-st's allow-listed classes, never ``trust_remote_code``.

    With ``trust_remote_code=True`` in ``kwargs`` (the user's own choice) this is plain ``SentenceTransformer``.
    Otherwise a local folder is first checked with :func:`check_no_code`, and the model is built with the
    allow-listed classes resolved in-process (see the module docstring).
    """
    from sentence_transformers import SentenceTransformer

    if kwargs.get("trust_remote_code"):
        return _finite(SentenceTransformer(str(name_or_path), device=device, **kwargs), name_or_path)
    kwargs.pop("trust_remote_code", None)
    if Path(name_or_path).is_dir():
        check_no_code(name_or_path)
    loader = getattr(SentenceTransformer, "_load_with_module_classes", None)
    if loader is None:  # pragma: no cover - guards a future Sentence-Transformers
        raise ImportError(
            "this sentence-transformers has no _load_with_module_classes, which psp-st needs to load "
            "its modules without trust_remote_code: pip install 'sentence-transformers>=6.0,<7'"
        )
    return _finite(loader(str(name_or_path), trusted_module_classes(), device=device, **kwargs), name_or_path)


def _finite(model, name_or_path: str | os.PathLike):
    """Refuse a model with NaN/inf parameters (psp-st modules already name the file; this covers ST's own)."""
    import torch

    for name, parameter in model.named_parameters():
        if parameter.is_floating_point() and not bool(torch.isfinite(parameter).all()):
            raise ModelFolderError(
                f"{name_or_path}: weight '{name}' has non-finite (NaN/inf) values; the model is "
                "broken (a diverged training run?): retrain it or use an earlier checkpoint."
            )
    return model

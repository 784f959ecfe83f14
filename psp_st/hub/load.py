"""``psp_st.load``: open any model by path, Hub id or psp-st short name, with the right loading flags.

A released psp-st model (``psp-st build``) is one folder: the root is a plain Sentence-Transformers
``StaticEmbedding`` model (loads with no flag and without psp-st), the ``trainable/`` subfolder holds the same
weights as a :class:`~psp_st.modules.psp.PSPEmbedding` (fine-tunable, needs psp-st), and ``psp_build.json``
records the recipe, the measured numbers and every file with its size, so a damaged folder is caught here with
a message that says what to do instead of an obscure error deep in a loader.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from psp_st.modules.base import FORMAT_VERSION, ModelFolderError

#: Short names of the pretrained models and their Hub ids.
PRETRAINED: dict[str, str] = {"psp-en": "psp-st/psp-en"}

#: Module class paths whose code ships with psp-st or sentence-transformers (installed, not remote).
TRUSTED_PREFIXES = ("psp_st.", "sentence_transformers.")

#: Subfolder of a released model holding the trainable PSPEmbedding form.
TRAINABLE_SUBFOLDER = "trainable"

#: Build record written by ``psp-st build`` next to the model files.
BUILD_INFO_FILE = "psp_build.json"


def resolve_model_name(name: str | os.PathLike) -> str:
    """A local folder if ``name`` is one; else, for a short name like ``psp-en``, its Hub id; else ``name``."""
    name = str(name)
    if Path(name).is_dir():
        return name
    return PRETRAINED.get(name, name)


def _rebuild_hint(path: Path) -> str:
    info = _read_build_info(path, check=False) or {}
    name = info.get("name")
    if name in PRETRAINED:
        return (f"rebuild it with `psp-st build {name} --output {path}` or download it again "
                f"(psp_st.load('{PRETRAINED[name]}'))")
    return "re-save the model (model.save(path)) or download it again"


def _read_build_info(path: Path, check: bool = True) -> dict[str, Any] | None:
    file = path / BUILD_INFO_FILE
    if not file.is_file():
        return None
    try:
        info = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        if not check:
            return None
        raise ModelFolderError(f"{file} is not valid JSON ({error}): rebuild the folder with `psp-st build` or "
                               "download it again.") from error
    if check:
        version = info.get("format_version")
        if not isinstance(version, int):
            raise ModelFolderError(
                f"{file} has no integer 'format_version': the folder was written by a pre-release psp-st. "
                f"Rebuild it with this psp-st (psp-st build {info.get('name', 'psp-en')} --output {path})."
            )
        if version > FORMAT_VERSION:
            raise ModelFolderError(
                f"{path} was built with format_version {version} (psp-st {info.get('psp_st_version', '?')}), but "
                f"this psp-st reads up to {FORMAT_VERSION}. Upgrade psp-st: pip install -U psp-st"
            )
    return info


def check_model_folder(path: str | os.PathLike) -> None:
    """Raise :class:`ModelFolderError` (saying what to do) if a model folder is incomplete or too new.

    Checks ``modules.json`` and the folder of every psp-st module it names (folders of other modules are left to
    Sentence-Transformers: e.g. ``Normalize`` has no files, and published models often omit its folder); for folders written by ``psp-st build`` also the
    recorded ``format_version`` and that every recorded file is present with its recorded size.
    """
    path = Path(path)
    modules_file = path / "modules.json"
    if not modules_file.is_file():
        raise ModelFolderError(
            f"{path} is not a Sentence-Transformers model folder (no modules.json): {_rebuild_hint(path)}."
        )
    try:
        modules = json.loads(modules_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise ModelFolderError(f"{modules_file} is not valid JSON ({error}): {_rebuild_hint(path)}.") from error
    for entry in modules:
        module_dir = path / entry.get("path", "")
        if entry.get("type", "").startswith("psp_st.") and not module_dir.is_dir():
            raise ModelFolderError(
                f"{path}: module folder '{entry.get('path')}' named in modules.json is missing: {_rebuild_hint(path)}."
            )
    info = _read_build_info(path)
    if info:
        for relative, size in info.get("files", {}).items():
            file = path / relative
            if not file.is_file():
                raise ModelFolderError(f"{path}: file '{relative}' is missing: {_rebuild_hint(path)}.")
            if file.stat().st_size != size:
                raise ModelFolderError(
                    f"{path}: file '{relative}' has {file.stat().st_size} bytes, expected {size} (truncated or "
                    f"replaced): {_rebuild_hint(path)}."
                )


def _needs_installed_code(path: Path) -> bool:
    modules_file = path / "modules.json"
    if not modules_file.is_file():
        return False
    with open(modules_file, encoding="utf-8") as handle:
        types = [entry.get("type", "") for entry in json.load(handle)]
    if any(not t.startswith(TRUSTED_PREFIXES) for t in types):
        return False  # genuinely remote code: leave the decision to the caller's trust_remote_code
    return any(t.startswith("psp_st.") for t in types)


def _download(repo_id: str, **kwargs: Any) -> Path:
    """Fetch a whole Hub model repo (both forms: the folder is checked as one) and return its local folder."""
    from huggingface_hub import snapshot_download

    hub_keys = ("revision", "cache_folder", "token", "local_files_only")
    hub_kwargs = {key: kwargs[key] for key in hub_keys if kwargs.get(key) is not None}
    if "cache_folder" in hub_kwargs:
        hub_kwargs["cache_dir"] = hub_kwargs.pop("cache_folder")
    return Path(snapshot_download(repo_id, **hub_kwargs))


def load(name: str | os.PathLike, device: str | None = "cpu", trainable: bool = False, **kwargs: Any):
    """Load a ``SentenceTransformer``: a local folder, a psp-st short name (local build first), or a Hub id.

    Args:
        name: a model folder, a short name (``psp-en``: ``./psp-en`` if it exists, else the Hub id
            ``psp-st/psp-en``) or any Hub id.
        device: torch device.
        trainable: load the trainable :class:`~psp_st.modules.psp.PSPEmbedding` form (the ``trainable/``
            subfolder of a released model) instead of the static export.
        kwargs: passed to ``SentenceTransformer``.

    Folders whose modules are psp-st classes are loaded with ``trust_remote_code=True``: that code is the
    installed psp-st package, not code downloaded with the model.
    """
    from sentence_transformers import SentenceTransformer

    resolved = resolve_model_name(name)
    path = Path(resolved)
    if not path.is_dir() and trainable:
        path = _download(resolved, **kwargs)
    if path.is_dir():
        root = path
        if trainable and (path / TRAINABLE_SUBFOLDER).is_dir():
            path = path / TRAINABLE_SUBFOLDER
        elif trainable and not _needs_installed_code(path):
            raise ModelFolderError(
                f"{root} has no '{TRAINABLE_SUBFOLDER}/' subfolder, so there is no trainable form to load: "
                f"{_rebuild_hint(root)}, or load it without trainable=True."
            )
        check_model_folder(root)
        if path != root:
            check_model_folder(path)
        if _needs_installed_code(path):
            kwargs.setdefault("trust_remote_code", True)
        return SentenceTransformer(str(path), device=device, **kwargs)
    return SentenceTransformer(resolved, device=device, **kwargs)

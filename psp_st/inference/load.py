"""``psp_st.load``: open any model by path, Hub id or psp-st short name, checked against its build record (a
damaged folder fails here with a message that says what to do, not deep in a loader)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Any

from psp_st.arguments import check_int
from psp_st.inference.engine import is_psp_folder, load_engine
from psp_st.io.atomic import inside
from psp_st.io.checksums import sha256_file
from psp_st.io.model_names import (
    BUILD_INFO_FILE,
    PRETRAINED,
    TRAINABLE_SUBFOLDER,
    check_model_name,
    hub_cache_hint,
    read_build_record,
    refetch_advice,
    resolve_model_name,
)
from psp_st.modules.folder_format import ModelFolderError, check_format_version
from psp_st.modules.trusted import ModelNotFoundError as ModelNotFoundError  # psp_st.load's error, re-exported
from psp_st.modules.trusted import from_hub, load_trusted, module_entries, module_types, trusted_module_class

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer


def _rebuild_hint(path: Path) -> str:
    cached = hub_cache_hint(path)  # never advise building into the Hugging Face cache
    if cached:
        return cached
    info = read_build_record(path) or {}
    name = info.get("name")
    if name in PRETRAINED:
        return (
            f"rebuild it with `psp-st build {name} --output {path}` or download it again "
            f"(psp_st.load('{PRETRAINED[name]}'))"
        )
    if (path / "final" / "modules.json").is_file():
        return f"this is a `psp-st train` run folder, whose trained model is {path / 'final'}"
    if _build_command(info.get("command")):
        return f"rebuild it with `{info['command']}` (its recorded build command) or download it again"
    return "re-save the model (model.save(path)) or download it again"


def _build_command(command: object) -> bool:
    """Whether a shell runs nothing but ``psp-st build`` from ``command`` (a record may be planted)."""
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:  # unbalanced quotes
        return False
    return words[:2] == ["psp-st", "build"] and shlex.join(words) == command


def _read_build_info(path: Path) -> dict[str, Any] | None:
    """The build record of ``path``, checked: a JSON object whose ``format_version`` this psp-st reads."""
    file = path / BUILD_INFO_FILE
    if not file.is_file():
        return None
    info = read_build_record(path)
    if info is None:
        raise ModelFolderError(
            f"{file} is not a valid JSON object: rebuild the folder with `psp-st build` or download it again."
        )
    redo = f"Rebuild it with this psp-st (psp-st build {info.get('name', 'psp-en')} --output {path})."
    check_format_version(info.get("format_version"), str(file), redo)
    return info


#: How a Git LFS pointer file starts (what a clone without Git LFS holds in place of each large file).
LFS_POINTER = b"version https://git-lfs.github.com/spec/"


def _lfs_pointer(file: Path) -> bool:
    """Whether ``file`` is a Git LFS pointer (a few lines naming the real file's hash) rather than the file."""
    with open(file, "rb") as handle:
        return handle.read(len(LFS_POINTER)) == LFS_POINTER


def check_model_folder(path: str | os.PathLike, sha256: bool = False) -> None:
    """Raise :class:`ModelFolderError` (saying what to do) if a model folder is incomplete or too new: checks
    ``modules.json``, the folder of every psp-st module it names (published models often omit ``Normalize``'s), and
    with a build record its ``format_version`` and every recorded file's size (with ``sha256``, its hash)."""
    path = Path(path)
    if not (path / "modules.json").is_file():
        raise ModelFolderError(
            f"{path} is not a Sentence-Transformers model folder (no modules.json): {_rebuild_hint(path)}."
        )
    for entry in module_entries(path):
        if entry.get("type", "").startswith("psp_st.") and not (path / entry.get("path", "")).is_dir():
            raise ModelFolderError(
                f"{path}: module folder '{entry.get('path')}' named in modules.json is missing: {_rebuild_hint(path)}."
            )
    info = _read_build_info(path)
    if info:
        files, hashes = info.get("files", {}), info.get("sha256", {}) if sha256 else {}
        if not isinstance(files, dict) or not isinstance(hashes, dict):
            raise ModelFolderError(
                f"{path / BUILD_INFO_FILE}: 'files'/'sha256' must map file names to sizes/hashes: the record is "
                f"corrupt; {_rebuild_hint(path)}."
            )
        for relative, size in files.items():
            try:
                file = inside(path, relative)
            except ValueError:  # a planted record: never stat, hash or name the size of a file elsewhere
                raise ModelFolderError(
                    f"{path / BUILD_INFO_FILE} lists the file {relative!r}, which is outside the folder (an absolute "
                    f"name, '..' or a linked folder): the record is damaged or planted; {_rebuild_hint(path)}."
                ) from None
            if not file.is_file():
                raise ModelFolderError(f"{path}: file '{relative}' is missing: {_rebuild_hint(path)}.")
            actual = file.stat().st_size
            if actual != size and _lfs_pointer(file):
                raise ModelFolderError(
                    f"{path}: file '{relative}' is a Git LFS pointer, not the file (a git clone without Git LFS): "
                    f"run `git lfs install` and then `git lfs pull` in {path}."
                )
            if actual != size:
                raise ModelFolderError(
                    f"{path}: file '{relative}' has {actual} bytes, expected {size} (truncated or "
                    f"replaced): {_rebuild_hint(path)}."
                )
            if relative in hashes and sha256_file(file) != hashes[relative]:
                raise ModelFolderError(
                    f"{path}: file '{relative}' differs from the one built (sha256 in {BUILD_INFO_FILE}): it was "
                    f"changed after the build, so the forms may disagree; {_rebuild_hint(path)}."
                )


def _download(repo_id: str, **kwargs: Any) -> Path:
    """Fetch a whole Hub model repo (both forms: the folder is checked as one) and return its local folder."""
    from huggingface_hub import snapshot_download

    hub_kwargs = {key: kwargs[key] for key in ("revision", "token", "local_files_only") if kwargs.get(key) is not None}
    if kwargs.get("cache_folder") is not None:
        hub_kwargs["cache_dir"] = kwargs["cache_folder"]
    return Path(snapshot_download(repo_id, **hub_kwargs))


def model_folder(name: str | os.PathLike, **kwargs: Any) -> Path:
    """The local folder of ``name``, or the downloaded Hub repo of a short name or Hub id (``kwargs``: ``revision``,
    ``cache_folder``, ``token``, ``local_files_only``); else :class:`ModelNotFoundError`."""
    name = check_model_name(name)
    resolved = resolve_model_name(name)
    if Path(resolved).is_dir():
        return Path(resolved)
    return from_hub(name, resolved, _download, **kwargs)


def _check_load_arguments(device: str | None, kwargs: dict[str, Any]) -> None:
    """The caller's mistakes, named before loading (an error while loading is blamed on the folder): a keyword
    ``SentenceTransformer`` does not take, a device string torch cannot parse or a CUDA device on a machine without."""
    import inspect

    import torch
    from sentence_transformers import SentenceTransformer

    known = set(inspect.signature(SentenceTransformer.__init__).parameters) - {"self", "model_name_or_path", "modules"}
    unknown = sorted(set(kwargs) - known)
    if unknown:
        raise TypeError(
            f"psp_st.load got unexpected keyword argument(s) {', '.join(unknown)}: it passes keywords to "
            f"SentenceTransformer, which takes {', '.join(sorted(known))}"
        )
    if device is None:
        return
    try:
        parsed = torch.device(device)
    except (RuntimeError, TypeError) as error:
        raise ValueError(f"device {device!r} is not a torch device (e.g. 'cpu', 'cuda', 'cuda:0'): {error}") from None
    if parsed.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"device {device!r}: no CUDA device is available here (torch.cuda.is_available() is False)")


def load(
    name: str | os.PathLike, device: str | None = "cpu", trainable: bool = False, **kwargs: Any
) -> SentenceTransformer:
    """Load a ``SentenceTransformer``: a local folder, a psp-st short name (local build first), or a Hub id.

    Args:
        name: a folder, a short name (``psp-en``: ``./psp-en`` if it holds psp-st's build of ``psp-en``, else the
            Hub id ``psp-st/psp-en``) or any Hub id.
        trainable: load the ``PSPEmbedding`` form (a release's ``trainable/``) instead of the static export.
        kwargs: passed to ``SentenceTransformer``.

    psp-st's own module classes load without ``trust_remote_code``; a folder carrying ``.py`` files or naming another
    non-Sentence-Transformers class is refused unless you pass ``trust_remote_code=True`` yourself.

    Raises:
        ModelNotFoundError: ``name`` is no folder, short name or reachable Hub id.
        ModelFolderError: the folder is incomplete, corrupt, too new, or carries code.
    """
    name = check_model_name(name)
    _check_load_arguments(device, kwargs)
    resolved = resolve_model_name(name)
    if not Path(resolved).is_dir() and not trainable:
        try:
            return from_hub(name, resolved, load_trusted, device=device, **kwargs)
        except TypeError as error:  # a module handed None for a file the cache lacks (tokenizers: "'None' is not...")
            message = " ".join(str(error).split())[:200]
            raise ModelFolderError(
                f"{resolved}: cannot load the model ({type(error).__name__}: {message}); a file it needs is missing "
                f"from the Hugging Face cache (offline) or from the repository: {refetch_advice(resolved)}."
            ) from error
    path = model_folder(name, **kwargs)
    root = path
    if trainable and (path / TRAINABLE_SUBFOLDER).is_dir():
        path = path / TRAINABLE_SUBFOLDER
    elif trainable and not any(trusted_module_class(t) for t in module_types(path)):  # e.g. a training run's final/
        raise ModelFolderError(
            f"{root} has no '{TRAINABLE_SUBFOLDER}/' subfolder, so there is no trainable form to load: "
            f"{_rebuild_hint(root)}, or load it without trainable=True."
        )
    check_model_folder(root)
    if path != root:
        check_model_folder(path)
    try:
        return load_trusted(path, device=device, **kwargs)
    except (ModelFolderError, OSError, ImportError):
        raise
    except Exception as error:  # a parser deep inside (e.g. tokenizers' bare Exception on a corrupt tokenizer.json)
        message = " ".join(str(error).split())[:300]
        raise ModelFolderError(
            f"{path}: cannot load the model ({type(error).__name__}: {message}); the folder is "
            f"corrupt or incomplete: {_rebuild_hint(root)}."
        ) from error


def set_threads(model: Any, threads: int | None) -> Any:
    """Run this process's torch and ``model``'s tokenizers on ``threads`` threads (None: unchanged); returns it."""
    if threads is None:
        return model
    threads = check_int("threads", threads)
    import torch

    torch.set_num_threads(threads)
    for module in model:
        if hasattr(getattr(module, "tokenizer", None), "num_threads"):
            module.tokenizer.num_threads = threads
    return model


def open_model(name: str, threads: int | None = None, engine: bool = False) -> Any:
    """:func:`load` on ``threads`` threads; with ``engine``, a P-SP model opens as the inference engine
    (:func:`psp_st.inference.load_engine`), so every command that embeds gives the same vectors."""
    if threads is not None:
        check_int("--threads", threads)
    if engine and is_psp_model(name):
        return load_engine(name, threads=threads)
    return set_threads(load(name), threads)


def is_psp_model(name: str) -> bool:
    """Whether ``name`` is a P-SP model that ``open_model(..., engine=True)`` opens as the inference engine."""
    resolved = resolve_model_name(name)
    return name in PRETRAINED or (Path(resolved).is_dir() and is_psp_folder(resolved))

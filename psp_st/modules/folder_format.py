"""The on-disk format version of psp-st model folders and the error for bad folders (torch-free, so the
inference engine can check folders without importing torch)."""

from __future__ import annotations

import json
import os

#: Version of the on-disk layout written by psp-st modules; bumped on incompatible changes.
FORMAT_VERSION = 1


class ModelFolderError(ValueError):
    """A model folder is incomplete, corrupt, or was written by an incompatible psp-st version."""


def check_format_version(version: object, where: str, redo: str) -> int:
    """``version`` if this psp-st reads it; else :class:`ModelFolderError` naming ``where`` (``redo``: how to
    rewrite a folder without a version)."""
    if isinstance(version, bool) or not isinstance(version, int):
        raise ModelFolderError(
            f"{where} has no integer 'format_version' (got {version!r}): the file is corrupt or was written by a "
            f"pre-release psp-st. {redo}"
        )
    if version > FORMAT_VERSION:
        raise ModelFolderError(
            f"{where} has format_version {version}, but this psp-st reads up to {FORMAT_VERSION}. "
            "Upgrade psp-st: pip install -U psp-st"
        )
    return version


def read_config(path: str | os.PathLike, owner: str) -> dict:
    """The JSON object in the config file ``path``, its ``format_version`` checked and removed; a corrupt file or an
    unreadable version is a :class:`ModelFolderError` naming ``owner`` and ``path``."""
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ModelFolderError(
            f"{owner}: {path} is not valid JSON ({error}): the file is corrupt; re-save the model or download it again."
        ) from error
    if not isinstance(config, dict):
        raise ModelFolderError(
            f"{owner}: {path} must hold a JSON object, got {type(config).__name__}: the file is corrupt; re-save "
            "the model or download it again."
        )
    check_format_version(
        config.pop("format_version", None),
        f"{owner}: {path}",
        "Re-save it with the psp-st version that wrote it, or retrain it with this one.",
    )
    return config

"""The on-disk format version of psp-st model folders and the error for bad folders (torch-free, for the engine)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

#: Version of the on-disk layout written by psp-st modules; bumped on incompatible changes.
FORMAT_VERSION = 1
#: The dtypes a PSPEmbedding's weights may be saved in.
PSP_WEIGHTS_DTYPES = ("float32", "float16")
#: File names of a psp-st module folder (every module's ST ``config_file_name`` / ``weights_file_name``; the
#: torch-free engine reads them too) and the tensor of a saved PSPEmbedding's piece vectors.
CONFIG_FILE = "psp_config.json"
WEIGHTS_FILE = "model.safetensors"
PSP_WEIGHT_KEY = "embedding.weight"
#: The keys of a PSPEmbedding config: its ``config_keys``, what ``psp_config.json`` may hold.
PSP_CONFIG_KEYS = ("embedding_dim", "max_seq_length", "dropout", "lowercase", "weights_dtype")


class ModelFolderError(ValueError):
    """A model folder is incomplete, corrupt, or was written by an incompatible psp-st version."""


def check_format_version(version: object, where: str, redo: str) -> int:
    """``version`` if this psp-st reads it; else :class:`ModelFolderError` naming ``where`` (``redo``: how to
    rewrite a folder without a version)."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:  # psp-st wrote 1 first
        raise ModelFolderError(
            f"{where} has no valid 'format_version' (got {version!r}): the file is corrupt or was written by a "
            f"pre-release psp-st. {redo}"
        )
    if version > FORMAT_VERSION:
        raise ModelFolderError(
            f"{where} has format_version {version}, but this psp-st reads up to {FORMAT_VERSION}. "
            "Upgrade psp-st: pip install -U psp-st"
        )
    return version


def check_float_weights(path: str | os.PathLike, name: str, is_float: bool, dtype: object) -> None:
    """:class:`ModelFolderError` unless tensor ``name`` of the weights file ``path`` is floating point."""
    if not is_float:
        raise ModelFolderError(
            f"weights {path}: tensor '{name}' has dtype {dtype}, not a float type: the file is corrupt or not a psp-st "
            "model; re-save the model or download it again."
        )


def tensor_is_finite(tensor: Any, chunk: int = 1 << 20) -> bool:
    """Whether a torch tensor holds no NaN/inf, checked ``chunk`` values at a time: ``torch.isfinite`` of a whole
    tensor holds about twice its size in temporaries (T3 in benchmarks/results/audit_round5/start_findings.md).
    A CPU tensor is checked in numpy: a torch op on a chunk starts torch's OpenMP threads, and a process forked after
    that (gunicorn ``--preload``, a fork ``Pool``) hangs in its first parallel torch op (V1 in
    benchmarks/results/audit_round7/serve_findings.md)."""
    flat = tensor.detach().reshape(-1)
    if flat.device.type != "cpu":
        return all(bool(part.isfinite().all()) for part in flat.split(chunk))
    if str(flat.dtype) == "torch.bfloat16":  # no numpy dtype: NaN and inf have all eight exponent bits set
        import torch

        bits = flat.view(torch.int16).numpy()
        return all(not ((bits[i : i + chunk] & 0x7F80) == 0x7F80).any() for i in range(0, len(bits), chunk))
    values = flat.numpy()
    return all(bool(np.isfinite(values[i : i + chunk]).all()) for i in range(0, len(values), chunk))


def check_psp_config(config: Mapping[str, Any]) -> None:
    """The one check of a PSPEmbedding config (its constructor's arguments, ``psp_config.json`` for the module and
    the torch-free engine): ``TypeError``/``ValueError`` naming the key and the bad value."""
    from psp_st.arguments import check_int, check_keys, check_probability

    # word_dropout: saved by earlier versions, ignored
    check_keys("config:", config, [*PSP_CONFIG_KEYS, "word_dropout"])
    for key in ("embedding_dim", "max_seq_length"):
        if config.get(key) is not None:
            check_int(key, config[key])
    if config.get("dropout") is not None:
        check_probability("dropout", config["dropout"])
    if config.get("lowercase") is not None and not isinstance(config["lowercase"], bool):
        raise TypeError(f"lowercase must be true or false, got {config['lowercase']!r}")
    if config.get("weights_dtype", "float32") not in PSP_WEIGHTS_DTYPES:
        raise ValueError(
            f"weights_dtype must be one of {', '.join(PSP_WEIGHTS_DTYPES)}, got {config['weights_dtype']!r}"
        )


def read_json_object(path: str | os.PathLike, owner: str) -> dict:
    """The JSON object in the file ``path``; unreadable or not an object: :class:`ModelFolderError` naming ``owner``
    and ``path``."""
    try:
        with open(path, encoding="utf-8") as handle:
            config = json.load(handle)
    except (ValueError, RecursionError, OSError) as error:  # bad JSON or UTF-8, too deep, a folder in its place, ...
        raise ModelFolderError(
            f"{owner}: {path} is not a readable JSON file ({error}): the file is corrupt; re-save the model or "
            "download it again."
        ) from error
    if not isinstance(config, dict):
        raise ModelFolderError(
            f"{owner}: {path} must hold a JSON object, got {type(config).__name__}: the file is corrupt; re-save "
            "the model or download it again."
        )
    return config


def read_config(path: str | os.PathLike, owner: str, check: Callable[[dict], None] | None = None) -> dict:
    """The JSON object in the config file ``path``, ``format_version`` checked and removed, values checked by
    ``check``; anything bad is a :class:`ModelFolderError` naming ``owner`` and ``path``."""
    config = read_json_object(path, owner)
    check_format_version(
        config.pop("format_version", None),
        f"{owner}: {path}",
        "Re-save it with the psp-st version that wrote it, or retrain it with this one.",
    )
    try:
        if check is not None:
            check(config)
    except (TypeError, ValueError) as error:
        raise ModelFolderError(f"{owner}: {path} is invalid: {error}; fix the value or re-save the model.") from error
    return config

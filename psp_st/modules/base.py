"""What every psp-st encoder module shares: the padded id batch contract and checked loading.

Every encoder is a Sentence-Transformers ``InputModule`` whose ``preprocess`` emits padded 2-D ``input_ids``
and ``attention_mask`` (what ST's merged forwards and cached losses expect), saves its weights as safetensors
next to its own config file (never ``config.json``, which ST takes for a transformers config), and fails on
load with a message that says which file is missing or wrong.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

import numpy as np
import torch
from safetensors.torch import load_file as load_safetensors_file
from safetensors.torch import save_file as save_safetensors_file
from sentence_transformers.base.modules.input_module import InputModule

from psp_st.io.atomic import apply_umask
from psp_st.modules.folder_format import FORMAT_VERSION, ModelFolderError

__all__ = ["FORMAT_VERSION", "ModelFolderError", "PSPInputModule", "pad_flat_ids"]


def pad_flat_ids(
    flat: np.ndarray, lengths: np.ndarray, pad_id: int, empty_id: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Turn a flat id array plus per-row lengths into padded ``(input_ids, attention_mask)``, vectorized.

    Args:
        flat: all ids of the batch, row after row.
        lengths: number of ids of each row.
        pad_id: id written into padding positions.
        empty_id: a row with no id gets this single id (P-SP: the unknown piece); ``None`` leaves the row
            all padding.
    """
    batch = len(lengths)
    rows = np.repeat(np.arange(batch), lengths)
    starts = np.cumsum(lengths) - lengths
    cols = np.arange(len(flat)) - np.repeat(starts, lengths)
    width = max(int(lengths.max(initial=0)), 1)
    ids = np.full((batch, width), pad_id, dtype=np.int64)
    ids[rows, cols] = flat
    if empty_id is not None:
        ids[lengths == 0, 0] = empty_id
    input_ids = torch.from_numpy(ids)
    return input_ids, (input_ids != pad_id).long()


class IdTokenizer(Protocol):
    """What the shared id layout needs of a module's tokenizer (every psp_st.tokenization tokenizer has it)."""

    @property
    def vocab_size(self) -> int: ...

    @property
    def unk_id(self) -> int: ...


class PSPInputModule(InputModule):
    """Checked loading helpers for psp-st modules (config, files, weights)."""

    # ST declares an HF tokenizer (PreTrainedTokenizerBase | tokenizers.Tokenizer); psp-st modules hold their own.
    tokenizer: IdTokenizer  # type: ignore[assignment]  # narrower-than-ST contract: psp-st's own tokenizers
    config_file_name: str = "psp_config.json"
    weights_file_name: str = "model.safetensors"

    def get_config_dict(self) -> dict[str, Any]:
        return {**super().get_config_dict(), "format_version": FORMAT_VERSION}

    # Token-id layout shared by the encoders: rows 0 .. vocab_size-1 are tokens, row vocab_size is padding.
    @property
    def vocab_size(self) -> int:
        return self.tokenizer.vocab_size

    @property
    def pad_id(self) -> int:
        return self.tokenizer.vocab_size

    @property
    def unk_id(self) -> int:
        return self.tokenizer.unk_id

    def padded_ids(self, features: dict[str, torch.Tensor]) -> torch.Tensor:
        """``features["input_ids"]`` with every position the attention mask excludes set to ``self.pad_id``.

        Sentence-Transformers' merged forward (``merge_feature_batches``: one forward for anchor, positive and
        negative columns) pads ``input_ids`` with 0, which is a real piece here; the mask is what says padding.
        """
        input_ids = features["input_ids"]
        mask = features.get("attention_mask")
        if mask is not None and mask.shape == input_ids.shape:
            input_ids = input_ids.masked_fill(mask == 0, self.pad_id)
        return input_ids

    @classmethod
    def _hub_kwargs(cls, **kwargs) -> dict[str, Any]:
        keys = ("subfolder", "token", "cache_folder", "revision", "local_files_only")
        return {key: kwargs[key] for key in keys if key in kwargs}

    @classmethod
    def _require_file(cls, model_name_or_path: str, filename: str, what: str, **hub_kwargs) -> str:
        path = cls.load_file_path(model_name_or_path, filename=filename, **hub_kwargs)
        if path is None:
            where = f"{model_name_or_path}/{hub_kwargs.get('subfolder') or ''}".rstrip("/")
            raise ModelFolderError(
                f"{cls.__name__}: {what} '{filename}' is missing from {where}. The folder is incomplete or "
                f"corrupt: re-save the model (model.save(path)) or download it again."
            )
        return path

    @classmethod
    def _load_checked_config(cls, model_name_or_path: str, **hub_kwargs) -> dict[str, Any]:
        path = cls._require_file(model_name_or_path, cls.config_file_name, "config file", **hub_kwargs)
        try:
            with open(path, encoding="utf-8") as handle:
                config = json.load(handle)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ModelFolderError(
                f"{cls.__name__}: {path} is not valid JSON ({error}): the file is corrupt; re-save "
                "the model or download it again."
            ) from error
        if not isinstance(config, dict):
            raise ModelFolderError(
                f"{cls.__name__}: {path} must hold a JSON object, got {type(config).__name__}: "
                "the file is corrupt; re-save the model or download it again."
            )
        version = config.pop("format_version", None)
        if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
            raise ModelFolderError(
                f"{cls.__name__}: {path} has a non-integer format_version {version!r}: the file is "
                "corrupt; re-save the model or download it again."
            )
        if version is None:
            raise ModelFolderError(
                f"{cls.__name__}: {path} has no 'format_version': it was written by a pre-release psp-st. "
                "Re-save it with the psp-st version that wrote it, or retrain it with this one."
            )
        if version > FORMAT_VERSION:
            raise ModelFolderError(
                f"{cls.__name__}: {path} has format_version {version}, but this psp-st reads up to "
                f"{FORMAT_VERSION}. Upgrade psp-st: pip install -U psp-st"
            )
        return config

    @classmethod
    def _load_checked_weights(cls, model_name_or_path: str, **hub_kwargs) -> dict[str, torch.Tensor]:
        path = cls._require_file(model_name_or_path, cls.weights_file_name, "weights file", **hub_kwargs)
        try:
            weights = load_safetensors_file(path)
        except Exception as error:  # safetensors raises its own SafetensorError on truncated files
            raise ModelFolderError(f"{cls.__name__}: cannot read weights {path}: {error}") from error
        for name, tensor in weights.items():
            if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
                bad = int((~torch.isfinite(tensor)).sum())
                raise ModelFolderError(
                    f"{cls.__name__}: weights {path}: tensor '{name}' has {bad} non-finite (NaN/inf) value(s); the "
                    "model is broken (a diverged training run?): retrain it or use an earlier checkpoint."
                )
        return weights

    @staticmethod
    def _save_weights(tensors: dict[str, torch.Tensor], path: str) -> None:
        """Save safetensors weights with the umask permissions (safetensors alone writes them ``0600``)."""
        save_safetensors_file(tensors, path)
        apply_umask(path)

    @staticmethod
    def _check_shape(name: str, tensor: torch.Tensor, expected: tuple[int, ...], hint: str) -> None:
        if tuple(tensor.shape) != expected:
            raise ModelFolderError(
                f"weight '{name}' has shape {tuple(tensor.shape)}, expected {expected} ({hint}). The weights do not "
                "belong to this tokenizer/config: the folder mixes files from different models."
            )

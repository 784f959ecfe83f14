"""What every psp-st encoder module shares: padded 2-D ``input_ids``/``attention_mask`` (what ST's merged forwards
and cached losses expect), safetensors weights next to ``psp_config.json`` (``config.json`` would be taken for a
transformers config) and loading that names the missing or bad file."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Protocol, Self

import numpy as np
import torch
from safetensors.torch import load_file as load_safetensors_file
from safetensors.torch import save_file as save_safetensors_file
from sentence_transformers.base.modules.input_module import InputModule

from psp_st.io.atomic import apply_umask
from psp_st.modules.folder_format import (
    CONFIG_FILE,
    FORMAT_VERSION,
    WEIGHTS_FILE,
    ModelFolderError,
    check_float_weights,
    read_config,
    tensor_is_finite,
)
from psp_st.modules.teacher_init import teacher_token_vectors
from psp_st.tokenization.sentencepiece import SentencePieceTokenizer
from psp_st.tokenization.store import tokenizer_kind
from psp_st.tokenization.text_checks import check_texts

__all__ = ["FORMAT_VERSION", "NO_TOKEN_EMBEDDINGS", "ModelFolderError", "PSPInputModule", "pad_flat_ids"]


def pad_flat_ids(
    flat: np.ndarray, lengths: np.ndarray, pad_id: int, empty_id: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Flat ids (row after row) plus per-row ``lengths`` -> padded ``(input_ids, attention_mask)``; a row with no id
    gets the single ``empty_id`` (P-SP: the unknown piece) unless it is ``None``."""
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


class NoTokenEmbeddings:
    """``features["token_embeddings"]`` of psp-st encoders: they pool a text into one vector, with no token output."""

    def __iter__(self):
        raise ValueError(
            "psp-st encoders give one vector per text and no token embeddings: use output_value='sentence_embedding'"
        )

    def __repr__(self) -> str:  # what encode(output_value=None) shows under "token_embeddings"
        return "<no token embeddings: psp-st encoders pool each text into one vector>"


NO_TOKEN_EMBEDDINGS = NoTokenEmbeddings()


class IdTokenizer(Protocol):
    """What the shared id layout needs of a module's tokenizer (every psp_st.tokenization tokenizer has it)."""

    @property
    def vocab_size(self) -> int: ...

    @property
    def unk_id(self) -> int: ...

    def token_texts(self) -> list[str]: ...


class PSPInputModule(InputModule):
    """What psp-st's modules share: text preprocessing, the token-id layout, ``from_teacher``, checked loading."""

    tokenizer: IdTokenizer  # type: ignore[assignment]  # ST declares an HF tokenizer; psp-st modules hold their own
    config_file_name: str = CONFIG_FILE
    weights_file_name: str = WEIGHTS_FILE
    modalities = ["text"]
    embedding_dim: int
    teacher_embedding_dim: ClassVar[int] = 300

    def get_config_dict(self) -> dict[str, Any]:
        return {**super().get_config_dict(), "format_version": FORMAT_VERSION}

    def get_embedding_dimension(self) -> int:
        return self.get_sentence_embedding_dimension()

    def get_sentence_embedding_dimension(self) -> int:
        return self.embedding_dim

    @classmethod
    def check_tokenizer_kind(cls, kind: str) -> None:
        """Raise ``ValueError`` when this module does not take tokenizers of ``kind`` (every kind by default)."""

    @classmethod
    def from_teacher(
        cls,
        teacher: Any,
        tokenizer: Any,
        embedding_dim: int | None = None,
        seed: int = 42,
        cache_dir: str | os.PathLike | None = None,
        teacher_name: str | None = None,
        batch_size: int = 256,
        **options: Any,
    ) -> Self:
        """Token vectors distilled from a sentence encoder: each token's text through ``teacher.encode``, then PCA
        to ``embedding_dim`` (default :attr:`teacher_embedding_dim`) standardised components; for the zoo, the
        stand-in for the papers' PARAGRAM-SL999. ``seed`` draws the dimensions beyond the PCA components.

        Args:
            teacher: an encoder with ``encode(list[str], batch_size=..., convert_to_numpy=True, ...)``, or a name
                for :func:`~psp_st.modules.teacher_init.load_teacher` (loaded only for texts not cached yet).
            tokenizer: a trained psp-st tokenizer, or the path of a sentencepiece ``.model`` file.
            cache_dir: cache the teacher's vectors there (:mod:`psp_st.distillation.teacher_cache`, keyed by
                ``teacher_name``, required then, and the texts).
            options: further module arguments (``max_seq_length``, ``hidden_size``, ``dropout``, ...).
        """
        if isinstance(tokenizer, (str, os.PathLike)):
            tokenizer = SentencePieceTokenizer.from_file(tokenizer)
        kind = tokenizer_kind(tokenizer)
        cls.check_tokenizer_kind(kind)
        dim = cls.teacher_embedding_dim if embedding_dim is None else embedding_dim
        label = "pieces" if kind == "sentencepiece" else "tokens"
        weights = teacher_token_vectors(
            tokenizer.token_texts(), teacher, dim, seed, cache_dir, teacher_name, batch_size, label
        )
        return cls(tokenizer, embedding_dim=dim, embedding_weights=torch.from_numpy(weights), **options)

    # text only: narrower inputs than ST's multimodal preprocess (check_texts rejects anything else)
    def preprocess(  # type: ignore[override]
        self, inputs: Sequence[str], prompt: str | None = None, **kwargs: Any
    ) -> dict[str, torch.Tensor]:
        """Padded ``input_ids`` and ``attention_mask``; a text with no known token is the single ``<unk>`` id."""
        texts = check_texts(inputs, where="SentenceTransformer.encode")
        if prompt:
            texts = self._prepend_prompt(texts, prompt)
        flat, lengths = self.encode_flat(texts)
        input_ids, attention_mask = pad_flat_ids(flat, lengths, pad_id=self.pad_id, empty_id=self.unk_id)
        return {"input_ids": input_ids, "attention_mask": attention_mask}

    def encode_flat(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """Flat token ids of ``texts`` and their lengths; a text with no known token has length 0."""
        raise NotImplementedError

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
        """``features["input_ids"]`` with every position the attention mask excludes set to ``self.pad_id``: ST's
        merged forward (``merge_feature_batches``) pads with 0, a real token here."""
        input_ids = features["input_ids"]
        mask = features.get("attention_mask")
        if mask is not None and mask.shape == input_ids.shape:
            input_ids = input_ids.masked_fill(mask == 0, self.pad_id)
        return input_ids

    def _start_save(self, output_path: str | os.PathLike) -> str:
        output_path = str(output_path)
        os.makedirs(output_path, exist_ok=True)
        self.save_config(output_path)
        return output_path

    @classmethod
    def _construct(cls, where: str, *args: Any, **config: Any) -> Any:
        try:
            return cls(*args, **config)
        except (TypeError, ValueError) as error:
            raise ModelFolderError(f"{cls.__name__}: {cls.config_file_name} in {where} is invalid: {error}") from error

    @classmethod
    def _hub_kwargs(cls, **kwargs) -> dict[str, Any]:
        """The Hub options among the keyword arguments ST calls ``load`` with (hence the narrower ``load``s)."""
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
    def _load_checked_config(
        cls, model_name_or_path: str, check: Callable[[dict], None] | None = None, **hub_kwargs
    ) -> dict[str, Any]:
        path = cls._require_file(model_name_or_path, cls.config_file_name, "config file", **hub_kwargs)
        return read_config(path, cls.__name__, check)

    @classmethod
    def _load_checked_weights(cls, model_name_or_path: str, **hub_kwargs) -> dict[str, torch.Tensor]:
        path = cls._require_file(model_name_or_path, cls.weights_file_name, "weights file", **hub_kwargs)
        try:
            weights = load_safetensors_file(path)
        except Exception as error:  # safetensors raises its own SafetensorError on truncated files
            raise ModelFolderError(f"{cls.__name__}: cannot read weights {path}: {error}") from error
        for name, tensor in weights.items():
            check_float_weights(path, name, tensor.is_floating_point(), tensor.dtype)
            if not tensor_is_finite(tensor):
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

"""Sum or concatenation of several encoders, trained jointly (ParaNMT's best model is WORD,TRIGRAM concat). Why our
own: Sentence-Transformers chains modules in sequence and has no module that runs input modules side by side."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Sequence
from typing import Any, cast

import torch
from torch import nn

from psp_st.modules.base import NO_TOKEN_EMBEDDINGS, ModelFolderError, PSPInputModule
from psp_st.modules.trusted import trusted_module_class
from psp_st.tokenization.text_checks import check_texts


class CombinedEncoder(PSPInputModule):
    """Several psp-st encoders whose sentence vectors are summed or concatenated.

    Args:
        encoders: any psp-st input modules (WordAveraging, GRAN, PSPEmbedding, ...), trained jointly.
        mode: ``"concat"`` (output size = sum of sizes) or ``"sum"`` (all sizes must be equal).
    """

    config_keys: list[str] = ["mode"]

    def __init__(self, encoders: Sequence[PSPInputModule], mode: str = "concat") -> None:
        super().__init__()
        if mode not in ("concat", "sum"):
            raise ValueError(f"mode must be 'concat' or 'sum', got {mode!r}")
        encoders = list(encoders)
        if not encoders:
            raise ValueError("CombinedEncoder needs at least one encoder")
        for index, encoder in enumerate(encoders):
            if not (hasattr(encoder, "preprocess") and hasattr(encoder, "pad_id")):
                raise TypeError(f"encoders[{index}] ({type(encoder).__name__}) is not a psp-st encoder module")
        dims = [encoder.get_sentence_embedding_dimension() for encoder in encoders]
        if mode == "sum" and len(set(dims)) > 1:
            raise ValueError(f"mode='sum' needs encoders of equal output size, got {dims}; use mode='concat'")
        self.encoders = nn.ModuleList(encoders)
        self.mode = mode

    @classmethod
    def from_teacher(cls, *args: Any, **kwargs: Any) -> Any:
        """Refused before any teacher runs: a combination has no token table of its own (Z8-2)."""
        raise TypeError(
            "CombinedEncoder.from_teacher: a combination has no token table of its own: build each part with its "
            "class's from_teacher (e.g. WordAveraging.from_teacher(teacher, tokenizer)), then CombinedEncoder([...])"
        )

    @property
    def parts(self) -> list[PSPInputModule]:
        """The encoders, in order (``self.encoders`` is the ``nn.ModuleList`` that registers their parameters)."""
        return cast("list[PSPInputModule]", list(self.encoders))

    def get_sentence_embedding_dimension(self) -> int:
        dims = [int(encoder.get_embedding_dimension()) for encoder in self.parts]
        return sum(dims) if self.mode == "concat" else dims[0]

    @property
    def max_seq_length(self) -> int | None:
        lengths = [getattr(encoder, "max_seq_length", None) for encoder in self.parts]
        known = [int(length) for length in lengths if length is not None]
        return None if len(known) < len(lengths) else max(known)

    @max_seq_length.setter
    def max_seq_length(self, value: int | None) -> None:  # ST sets it as model.max_seq_length = N
        """Cap every encoder at ``value`` tokens; each checks it (a recurrent one refuses ``None`` and > 1024), and
        a refused value changes none of them."""
        parts: list[Any] = self.parts  # each part's max_seq_length is a checked property of its own
        previous = [encoder.max_seq_length for encoder in parts]
        try:
            for encoder in parts:
                encoder.max_seq_length = value
        except ValueError:
            for encoder, length in zip(parts, previous, strict=True):
                encoder.max_seq_length = length
            raise

    @property
    def id_offsets(self) -> list[int]:
        """First joint id of each encoder: encoder ``k`` owns ids ``offsets[k] .. offsets[k] + pad_id_k``."""
        return [0, *itertools.accumulate(int(encoder.pad_id) + 1 for encoder in self.parts[:-1])]

    @property
    def pad_id(self) -> int:
        return sum(int(encoder.pad_id) + 1 for encoder in self.parts)

    @staticmethod
    def _compact(ids: torch.Tensor, keep: torch.Tensor, pad_id: int) -> torch.Tensor:
        """Move the kept ids of each row to its front (order preserved) and pad the rest with ``pad_id``."""
        columns = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
        order = torch.where(keep, columns, columns + ids.shape[1]).argsort(dim=1, stable=True)
        counts = keep.sum(1, keepdim=True)
        width = max(int(counts.max()) if ids.shape[0] else 1, 1)
        out = ids.gather(1, order)[:, :width]
        return out.masked_fill(columns[:, :width] >= counts, pad_id)

    # text only: narrower inputs than ST's multimodal preprocess (check_texts rejects anything else)
    def preprocess(  # type: ignore[override]
        self, inputs: Sequence[str], prompt: str | None = None, **kwargs: Any
    ) -> dict[str, torch.Tensor]:
        """Each encoder's ids, shifted into its own range of one joint id space: row ``i`` holds encoder 0's tokens
        of text ``i``, then encoder 1's, ..., then padding. Each id names its encoder, so the layout survives what
        trainers do to right-padded ids (selecting rows, trimming padding, scrambling a row)."""
        texts = check_texts(inputs, where="SentenceTransformer.encode")
        ids, masks = [], []
        for encoder, offset in zip(self.parts, self.id_offsets, strict=True):
            part = encoder.preprocess(texts, prompt)
            ids.append(part["input_ids"] + offset)
            masks.append(part["attention_mask"].bool())
        input_ids = self._compact(torch.cat(ids, dim=1), torch.cat(masks, dim=1), self.pad_id)
        return {"input_ids": input_ids, "attention_mask": (input_ids != self.pad_id).long()}

    def forward(self, features: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        input_ids = self.padded_ids(features)
        vectors = []
        for encoder, offset in zip(self.parts, self.id_offsets, strict=True):
            pad = int(encoder.pad_id)
            own = (input_ids >= offset) & (input_ids < offset + pad)
            part_ids = self._compact(input_ids - offset, own, pad)
            part = {"input_ids": part_ids, "attention_mask": (part_ids != pad).long()}
            vectors.append(encoder(part)["sentence_embedding"])
        combined = torch.cat(vectors, dim=-1) if self.mode == "concat" else torch.stack(vectors).sum(0)
        features["sentence_embedding"] = combined
        features["token_embeddings"] = NO_TOKEN_EMBEDDINGS
        return features

    def get_config_dict(self) -> dict[str, Any]:
        config = super().get_config_dict()
        config["encoders"] = [
            {"class": f"{type(encoder).__module__}.{type(encoder).__qualname__}", "folder": f"encoder_{index}"}
            for index, encoder in enumerate(self.parts)
        ]
        return config

    def save(self, output_path: str, *args: Any, safe_serialization: bool = True, **kwargs: Any) -> None:
        output_path = self._start_save(output_path)
        for index, encoder in enumerate(self.parts):
            encoder.save(os.path.join(output_path, f"encoder_{index}"))

    @classmethod
    def load(cls, model_name_or_path: str, **kwargs: Any) -> CombinedEncoder:  # type: ignore[override]
        hub_kwargs = cls._hub_kwargs(**kwargs)
        config = cls._load_checked_config(model_name_or_path, **hub_kwargs)
        entries = config.pop("encoders", None)
        if not isinstance(entries, list) or not entries:
            raise ModelFolderError(f"{cls.__name__}: {cls.config_file_name} in {model_name_or_path} lists no encoders")
        encoders: list[PSPInputModule] = []
        for index, entry in enumerate(entries):
            try:
                class_path, folder = entry["class"], entry["folder"]
            except (TypeError, KeyError):
                raise ModelFolderError(
                    f"{cls.__name__}: encoders[{index}] in {cls.config_file_name} is malformed: "
                    f"{json.dumps(entry)[:200]}"
                ) from None
            encoder_cls = trusted_module_class(str(class_path))
            plain_folder = isinstance(folder, str) and "/" not in folder and not folder.startswith(".")
            if encoder_cls is None or not issubclass(encoder_cls, PSPInputModule) or not plain_folder:
                raise ModelFolderError(
                    f"{cls.__name__}: refusing encoders[{index}] = {class_path!r} in {folder!r}: "
                    "only psp-st's own module classes in plain sub-folders are loaded"
                )
            subfolder = "/".join(p for p in (hub_kwargs.get("subfolder"), folder) if p)
            encoders.append(encoder_cls.load(model_name_or_path, **{**hub_kwargs, "subfolder": subfolder}))
        return cls._construct(model_name_or_path, encoders, **config)

    def __repr__(self) -> str:
        inner = ", ".join(repr(encoder) for encoder in self.encoders)
        return f"CombinedEncoder(mode={self.mode!r}, encoders=[{inner}])"

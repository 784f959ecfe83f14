"""Sum or concatenation of several encoders, trained jointly (ParaNMT's best model is WORD,TRIGRAM concat).

Sentence-Transformers chains modules in sequence; it has no module that runs several input modules side by side,
so :class:`CombinedEncoder` holds them. Its ``preprocess`` runs every encoder's own tokenizer, shifts each
encoder's ids into its own range of one joint id space and lays them one after the other in each row of a single
right-padded ``input_ids`` matrix (the contract every psp-st module follows, so mega-batch mining, row
selection and padding trimming work unchanged); ``forward`` routes the ids back by range, runs each encoder and
sums or concatenates their sentence vectors. Mining and similarity therefore use the combined vector.
"""

from __future__ import annotations

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
        encoders: the encoder modules (any psp-st input module: WordAveraging, TrigramAveraging, LSTMAveraging,
            GRAN, PSPEmbedding, ...). Their parameters are trained jointly.
        mode: ``"concat"`` (output size = sum of sizes) or ``"sum"`` (all sizes must be equal).

    Example::

        from psp_st.modules.averaging import TrigramAveraging, WordAveraging
        from psp_st.modules.combine import CombinedEncoder

        word = WordAveraging.from_texts(sentences, embedding_dim=300)
        trigram = TrigramAveraging.from_texts(sentences, embedding_dim=300)
        model = SentenceTransformer(modules=[CombinedEncoder([word, trigram], mode="concat")])
    """

    config_keys: list[str] = ["mode"]

    def __init__(self, encoders: Sequence[PSPInputModule], mode: str = "concat", **kwargs: Any) -> None:
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

    # -- id layout ----------------------------------------------------------------------------------------
    @property
    def id_offsets(self) -> list[int]:
        """First joint id of each encoder: encoder ``k`` owns ids ``offsets[k] .. offsets[k] + pad_id_k``."""
        offsets, total = [], 0
        for encoder in self.parts:
            offsets.append(total)
            total += int(encoder.pad_id) + 1
        return offsets

    @property
    def pad_id(self) -> int:
        return sum(int(encoder.pad_id) + 1 for encoder in self.parts)

    @staticmethod
    def _compact(ids: torch.Tensor, keep: torch.Tensor, pad_id: int, width: int | None = None) -> torch.Tensor:
        """Move the kept ids of each row to its front (order preserved) and pad the rest with ``pad_id``."""
        columns = torch.arange(ids.shape[1], device=ids.device).expand_as(ids)
        order = torch.where(keep, columns, columns + ids.shape[1]).argsort(dim=1, stable=True)
        counts = keep.sum(1, keepdim=True)
        width = max(int(counts.max()) if ids.shape[0] else 1, 1) if width is None else width
        out = ids.gather(1, order)[:, :width]
        return out.masked_fill(columns[:, :width] >= counts, pad_id)

    # -- Sentence-Transformers interface -----------------------------------------------------------------
    # Text only: ST's signature also admits images and audio, which check_texts rejects with a clear error.
    def preprocess(  # type: ignore[override]
        self, inputs: Sequence[str], prompt: str | None = None, **kwargs: Any
    ) -> dict[str, torch.Tensor]:
        """Each encoder's ids, shifted into one joint id space and laid out one after the other in each row.

        Row ``i`` holds encoder 0's tokens of text ``i``, then encoder 1's, ..., then padding (:attr:`pad_id`).
        Each id says which encoder it belongs to, so the layout survives what trainers do to plain right-padded
        ids: selecting rows, trimming padding columns, even shuffling a row (scrambling then shuffles each
        encoder's tokens among themselves).
        """
        texts = check_texts(inputs, where="SentenceTransformer.encode")
        if prompt:
            texts = self._prepend_prompt(texts, prompt)
        ids, masks = [], []
        for encoder, offset in zip(self.parts, self.id_offsets, strict=True):
            part = encoder.preprocess(texts)
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

    # -- saving and loading -------------------------------------------------------------------------------
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
    # ST calls ``load`` with keyword arguments; the Hub options arrive in ``kwargs`` (see _hub_kwargs).
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
            if (
                encoder_cls is None
                or not issubclass(encoder_cls, PSPInputModule)
                or not isinstance(folder, str)
                or "/" in folder
                or folder.startswith(".")
            ):
                raise ModelFolderError(
                    f"{cls.__name__}: refusing encoders[{index}] = {class_path!r} in {folder!r}: "
                    "only psp-st's own module classes in plain sub-folders are loaded"
                )
            sub_kwargs = dict(hub_kwargs)
            sub_kwargs["subfolder"] = "/".join(p for p in (hub_kwargs.get("subfolder"), folder) if p)
            encoders.append(encoder_cls.load(model_name_or_path, **sub_kwargs))
        return cls._construct(model_name_or_path, encoders, **config)

    def __repr__(self) -> str:
        inner = ", ".join(repr(encoder) for encoder in self.encoders)
        return f"CombinedEncoder(mode={self.mode!r}, encoders=[{inner}])"

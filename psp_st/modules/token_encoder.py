"""The base of the token encoders (P-SP, WORD/TRIGRAM, LSTM/BLSTM/GRAN). Unknown words, trigrams and morphs map to
a trained ``<unk>`` (ParaNMT); unknown sentencepiece pieces are dropped (P-SP). A text with no known token is the
single ``<unk>`` token. Row ``vocab_size`` of the table is padding."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np
import torch
from torch import nn

from psp_st.arguments import check_int, check_probability
from psp_st.modules.base import NO_TOKEN_EMBEDDINGS, ModelFolderError, PSPInputModule
from psp_st.modules.scramble import scramble_ids
from psp_st.tokenization.store import (
    load_tokenizer,
    save_tokenizer,
    tokenizer_files,
    tokenizer_kind,
    train_tokenizer_of_kind,
)
from psp_st.tokenization.text_checks import refuse_single_text
from psp_st.tokenization.words import UNK_TOKEN, WordTokenizer


def drop_rows_without_known_tokens(flat: np.ndarray, lengths: np.ndarray, unk_id: int) -> tuple[np.ndarray, np.ndarray]:
    """Empty the rows whose tokens are all ``unk_id``, so that they embed exactly like ``""`` (one ``<unk>``)."""
    rows = np.repeat(np.arange(len(lengths)), lengths)
    known = np.bincount(rows, weights=(flat != unk_id), minlength=len(lengths))
    empty = (known == 0) & (lengths > 0)
    if not empty.any():
        return flat, lengths
    return flat[~empty[rows]], np.where(empty, 0, lengths)


class TokenEncoder(PSPInputModule):
    """Base class: tokenizer, embedding table, preprocessing, checked saving and loading. Subclasses implement
    :meth:`pool` and list their extra constructor arguments in ``config_keys``.

    Args:
        tokenizer: a WordTokenizer, TrigramTokenizer, MorfessorTokenizer or SentencePieceTokenizer.
        embedding_weights: initial token vectors ``(vocab_size, embedding_dim)``; otherwise :meth:`init_embeddings`.
        max_seq_length: tokens kept per text (``None``: all; default: the class's ``default_max_seq_length``).
        scramble: while training, shuffle a text's token order with this probability (ParaNMT: 0.3 for LSTMs).
    """

    config_keys: list[str] = ["embedding_dim", "max_seq_length", "scramble"]
    tokenizer: Any
    default_max_seq_length: ClassVar[int | None] = None
    default_tokenizer: ClassVar[str] = "words"
    max_seq_length_limit: ClassVar[int | None] = None
    #: draw ``nn.Embedding``'s own random init before the given or initial vectors replace it: the zoo's seeded
    #: runs depend on that random stream (their later layers are drawn after it); P-SP never drew it
    draw_default_init: ClassVar[bool] = True

    def __init__(
        self,
        tokenizer: Any,
        embedding_dim: int = 300,
        embedding_weights: np.ndarray | torch.Tensor | None = None,
        max_seq_length: int | None | str = "default",
        scramble: float = 0.0,
    ) -> None:
        super().__init__()
        embedding_dim = check_int("embedding_dim", embedding_dim)
        self.tokenizer_kind = tokenizer_kind(tokenizer)
        self.check_tokenizer_kind(self.tokenizer_kind)
        self.tokenizer = tokenizer
        self.max_seq_length = self.default_max_seq_length if max_seq_length == "default" else max_seq_length
        self.scramble = check_probability("scramble", scramble)
        self.embedding_dim = embedding_dim
        vocab_size = tokenizer.vocab_size
        table = None if self.draw_default_init else torch.empty(vocab_size + 1, embedding_dim)
        self.embedding = nn.Embedding(vocab_size + 1, embedding_dim, padding_idx=vocab_size, _weight=table)
        with torch.no_grad():
            if embedding_weights is not None:
                weights = torch.as_tensor(embedding_weights).detach()
                if tuple(weights.shape) != (vocab_size, embedding_dim):
                    raise ValueError(
                        f"embedding_weights has shape {tuple(weights.shape)}, expected "
                        f"({vocab_size}, {embedding_dim}) (tokenizer vocab_size x embedding_dim)"
                    )
                if weights.device.type == "cpu" and weights.dtype in (torch.float16, torch.float32, torch.float64):
                    # numpy's copy starts no torch OpenMP threads, which hang a process forked after loading (V3)
                    np.copyto(self.embedding.weight.detach()[:vocab_size].numpy(), weights.numpy())
                else:
                    self.embedding.weight[:vocab_size] = weights.to(torch.float32)
            else:
                self.init_embeddings(self.embedding.weight[:vocab_size])
            self.embedding.weight[vocab_size].zero_()

    @property
    def max_seq_length(self) -> int | None:
        return self._max_seq_length

    @max_seq_length.setter
    def max_seq_length(self, value: object) -> None:  # checked here: ST sets it as model.max_seq_length = N
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ValueError(f"max_seq_length must be a positive int or None, got {value!r}")
        limit = self.max_seq_length_limit
        if limit is not None and (value is None or value > limit):
            raise ValueError(
                f"{type(self).__name__}: max_seq_length must be at most {limit} (got {value}): "
                "a recurrent encoder unrolls one step per token"
            )
        self._max_seq_length = value

    def init_embeddings(self, weight: torch.Tensor) -> None:
        """Initial token vectors (in place); default ``N(0, 1)`` like ``nn.Embedding``."""
        nn.init.normal_(weight)

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        embedding_dim: int = 300,
        tokenizer: str | None = None,
        min_count: int = 1,
        max_size: int | None = None,
        lowercase: bool = True,
        seed: int = 42,
        tokenizer_options: dict[str, Any] | None = None,
        **options: Any,
    ) -> TokenEncoder:
        """Build the vocabulary (or train the Morfessor / sentencepiece model) on ``texts``; fresh vectors.

        Args:
            tokenizer: ``"words"``, ``"trigrams"``, ``"morfessor"`` or ``"sentencepiece"`` (default: the class's).
            max_size: vocabulary size cap (``<unk>`` included).
            tokenizer_options: extra arguments of the tokenizer training (e.g. Morfessor ``corpus_weight``).
            **options: module arguments (``max_seq_length``, ``hidden_size``, ``scramble``, ...).
        """
        refuse_single_text(texts)
        texts = list(texts)
        check_int("embedding_dim", embedding_dim)  # before the tokenizer trains
        kind = tokenizer or cls.default_tokenizer
        cls.check_tokenizer_kind(kind)
        tokenizer_options = tokenizer_options or {}
        clash = sorted({"min_count", "max_size", "lowercase", "vocab_size"} & set(tokenizer_options))
        if clash:
            raise ValueError(
                f"tokenizer_options {clash} repeat from_texts' own arguments: pass min_count, max_size (also the "
                "sentencepiece vocab_size) and lowercase to from_texts itself"
            )
        with torch.device("meta"):  # every module option checked before a long tokenizer training (Z8-4)
            cls(WordTokenizer([UNK_TOKEN]), embedding_dim=embedding_dim, **options)
        trained = train_tokenizer_of_kind(
            kind, texts, min_count=min_count, max_size=max_size, lowercase=lowercase, **tokenizer_options
        )
        with torch.random.fork_rng():
            torch.manual_seed(seed)
            return cls(trained, embedding_dim=embedding_dim, **options)

    def get_config_dict(self) -> dict[str, Any]:
        config = super().get_config_dict()
        config["tokenizer"] = self.tokenizer_kind
        if self.tokenizer_kind == "sentencepiece":
            config["lowercase"] = self.tokenizer.lowercase
        return config

    def encode_flat(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        if self.tokenizer_kind == "sentencepiece":  # P-SP semantics: unknown pieces (and their "▁") are dropped
            return self.tokenizer.encode_flat(texts, max_length=self.max_seq_length, drop_unknown=True)
        flat, lengths = self.tokenizer.encode_flat(texts, max_length=self.max_seq_length)
        return drop_rows_without_known_tokens(flat, lengths, self.unk_id)

    def forward(self, features: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        input_ids = self.padded_ids(features)
        mask = input_ids != self.pad_id
        if self.training and self.scramble > 0:
            input_ids = scramble_ids(input_ids, mask, self.scramble)
        features["sentence_embedding"] = self.pool(input_ids, mask)
        features["token_embeddings"] = NO_TOKEN_EMBEDDINGS
        return features

    def pool(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Sentence vectors ``(batch, dim)`` from padded ids and their mask (padding at the end of each row)."""
        raise NotImplementedError

    def save(self, output_path: str, *args: Any, safe_serialization: bool = True, **kwargs: Any) -> None:
        output_path = self._start_save(output_path)
        state = {name: tensor.detach().contiguous().cpu() for name, tensor in self.state_dict().items()}
        self._save_weights(state, os.path.join(output_path, self.weights_file_name))
        save_tokenizer(self.tokenizer, output_path)

    @classmethod
    def load(cls, model_name_or_path: str, **kwargs: Any) -> TokenEncoder:  # type: ignore[override]
        hub_kwargs = cls._hub_kwargs(**kwargs)
        config = cls._load_checked_config(model_name_or_path, **hub_kwargs)
        kind = config.pop("tokenizer", None)
        lowercase = config.pop("lowercase", None)
        if kind is None:
            raise ModelFolderError(f"{cls.__name__}: {cls.config_file_name} in {model_name_or_path} names no tokenizer")
        if lowercase is not None and not isinstance(lowercase, bool):  # "false" would lower-case (Z8-8)
            raise ModelFolderError(
                f"{cls.__name__}: {cls.config_file_name} in {model_name_or_path} is invalid: lowercase must be true or "
                f"false, got {lowercase!r}"
            )
        tokenizer, directory = cls._read_tokenizer(model_name_or_path, kind, lowercase, hub_kwargs)
        weights = cls._load_checked_weights(model_name_or_path, **hub_kwargs)
        module = cls._construct(directory, tokenizer, **config)
        expected = {name: tuple(t.shape) for name, t in module.state_dict().items()}
        found = {name: tuple(t.shape) for name, t in weights.items()}
        if expected != found:
            diff = sorted(set(expected.items()) ^ set(found.items()))[:4]
            raise ModelFolderError(
                f"{cls.__name__}: the weights in {directory} do not match its config/tokenizer (first differences: "
                f"{diff}). The folder mixes files from different models: re-save it."
            )
        module.load_state_dict(weights, strict=True)
        return module

    @classmethod
    def _read_tokenizer(cls, path: str, kind: str, lowercase: bool | None, hub_kwargs: dict) -> tuple[Any, str]:
        """The ``kind`` tokenizer saved in the model folder (or Hub repo) ``path``, and the local folder holding it."""
        try:
            files = tokenizer_files(kind)
        except (KeyError, TypeError):  # TypeError: a kind that is not a string (a list, ...)
            raise ModelFolderError(
                f"{cls.__name__}: unknown tokenizer kind {kind!r} in {cls.config_file_name}"
            ) from None
        paths = [cls._require_file(path, name, f"{kind} tokenizer file", **hub_kwargs) for name in files]
        directory = os.path.dirname(paths[0])
        try:
            return load_tokenizer(kind, directory, lowercase=lowercase), directory
        except (ValueError, FileNotFoundError) as error:
            raise ModelFolderError(
                f"{cls.__name__}: cannot read the {kind} tokenizer {', '.join(paths)}: {error}"
            ) from error

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(tokenizer={self.tokenizer_kind}, vocab_size={self.vocab_size}, "
            f"embedding_dim={self.embedding_dim}, output_dim={self.get_sentence_embedding_dimension()}, "
            f"max_seq_length={self.max_seq_length})"
        )

"""P-SP: the sentencepiece-averaging encoder of Wieting et al., "Paraphrastic Representations at Scale"."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import torch
import torch.nn.functional as F
from torch import nn

from psp_st.arguments import check_int
from psp_st.io.atomic import atomic_directory
from psp_st.io.output_policy import check_output
from psp_st.modules.base import ModelFolderError, PSPInputModule
from psp_st.modules.folder_format import PSP_CONFIG_KEYS, PSP_WEIGHT_KEY, check_psp_config
from psp_st.modules.sparse_mean import bag_mean
from psp_st.modules.token_encoder import TokenEncoder
from psp_st.tokenization.sentencepiece import SentencePieceTokenizer
from psp_st.tokenization.store import save_tokenizer

if TYPE_CHECKING:
    from sentence_transformers.sentence_transformer.modules import StaticEmbedding

    from psp_st.inference.engine import PSPEngine


class PSPEmbedding(TokenEncoder):
    """Sentence embedding = mean of the embeddings of the sentence's sentencepiece pieces.

    As in the paper, unknown pieces are dropped with the ``▁`` before them (``"a dog ☃ runs"`` embeds as
    ``"a dog runs"``); a text with no known piece (also ``""``) gets the ``<unk>`` vector, never zeros or NaN.

    Args:
        embedding_weights: initial piece vectors ``(vocab_size, embedding_dim)`` (their size wins over
            ``embedding_dim``); random ``N(0, 1)`` if None.
        max_seq_length: keep at most this many known pieces per text (``None``: no limit).
        dropout: dropout on piece vectors while training (the paper tunes 0, 0.1, 0.3).
        lowercase: ``None`` keeps the tokenizer's setting.
        weights_dtype: ``"float32"`` or ``"float16"``: the dtype the weights are saved and exported in (loading
            widens them to float32).
    """

    config_keys: list[str] = list(PSP_CONFIG_KEYS)
    teacher_embedding_dim = 384
    draw_default_init = False
    tokenizer: SentencePieceTokenizer  # satisfies base.py's IdTokenizer protocol

    def __init__(
        self,
        tokenizer: SentencePieceTokenizer | str | os.PathLike,
        embedding_dim: int = 1024,
        embedding_weights: np.ndarray | torch.Tensor | None = None,
        max_seq_length: int | None = None,
        dropout: float = 0.0,
        lowercase: bool | None = None,
        weights_dtype: str = "float32",
    ) -> None:
        options = {"max_seq_length": max_seq_length, "dropout": dropout, "lowercase": lowercase}
        check_psp_config({**options, "embedding_dim": embedding_dim, "weights_dtype": weights_dtype})
        if not isinstance(tokenizer, SentencePieceTokenizer):
            tokenizer = SentencePieceTokenizer.from_file(tokenizer)
        if lowercase is not None and lowercase != tokenizer.lowercase:
            tokenizer = SentencePieceTokenizer(
                tokenizer.model_proto, lowercase=lowercase, num_threads=tokenizer.num_threads
            )
        if embedding_weights is not None:  # the vector size is the weights'
            embedding_dim = int(np.shape(embedding_weights)[-1])
        super().__init__(tokenizer, embedding_dim, embedding_weights, max_seq_length)
        self.weights_dtype = weights_dtype
        self.dropout = dropout

    @classmethod
    def check_tokenizer_kind(cls, kind: str) -> None:
        if kind != "sentencepiece":
            raise ValueError(f"{cls.__name__} averages sentencepiece pieces, not {kind}")

    def get_config_dict(self) -> dict[str, Any]:
        return PSPInputModule.get_config_dict(self)  # the tokenizer kind is implied (and never saved here)

    @property
    def lowercase(self) -> bool:
        return self.tokenizer.lowercase

    @classmethod
    def from_texts(  # type: ignore[override]  # a sentencepiece vocabulary size instead of min_count/max_size
        cls,
        texts: Iterable[str],
        vocab_size: int = 50_000,
        embedding_dim: int = 1024,
        character_coverage: float | None = None,
        lowercase: bool = True,
        seed: int = 42,
        **options: Any,
    ) -> PSPEmbedding:
        """Train a sentencepiece unigram model on ``texts``; a fresh module. ``options`` go to :class:`PSPEmbedding`
        when they are its arguments (``max_seq_length``, ``dropout``, ``weights_dtype``), else to
        :meth:`SentencePieceTokenizer.train`."""
        embedding_dim = check_int("embedding_dim", embedding_dim)
        cls.check_tokenizer_kind(options.pop("tokenizer", "sentencepiece"))  # not a sentencepiece trainer option
        module_options: dict[str, Any] = {
            key: options.pop(key) for key in ("max_seq_length", "dropout", "weights_dtype") if key in options
        }
        check_psp_config({**module_options, "embedding_dim": embedding_dim})  # before sentencepiece trains (Z8-5)
        if character_coverage is not None:
            options["character_coverage"] = character_coverage
        tokenizer = SentencePieceTokenizer.train(
            texts, vocab_size=vocab_size, lowercase=lowercase, seed=seed, **options
        )
        generator = torch.Generator().manual_seed(seed)
        weights = torch.randn(tokenizer.vocab_size, embedding_dim, generator=generator)
        return cls(tokenizer, embedding_weights=weights, **module_options)

    def pool(self, input_ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # a training step: the optimizer step that follows may change the weights without the version counter the
        # engine's key reads (fused Adam), so an engine holding a copy of them would go stale
        if self.training and torch.is_grad_enabled():
            self.__dict__.pop("_engine", None)
        if not (self.training and self.dropout > 0):
            return bag_mean(input_ids, self.embedding, self.pad_id)
        tokens = F.embedding(input_ids, self.embedding.weight, padding_idx=self.pad_id, sparse=self.embedding.sparse)
        tokens = F.dropout(tokens, self.dropout, training=True)
        mask_f = mask.unsqueeze(-1).to(tokens.dtype)
        return (tokens * mask_f).sum(1) / mask_f.sum(1).clamp(min=1)

    def embed(
        self,
        sentences: Sequence[str],
        batch_size: int = 8192,
        normalize: bool = False,
        dtype: npt.DTypeLike = np.float32,
        show_progress_bar: bool = False,
    ) -> np.ndarray:
        """``(n, embedding_dim)`` vectors of ``sentences`` through :meth:`inference_engine`, with no
        Sentence-Transformers overhead: the same vectors as ``SentenceTransformer.encode`` (to float32 rounding)."""
        batch_size = check_int("batch_size", batch_size)
        return self.inference_engine().encode(
            sentences, batch_size=batch_size, normalize=normalize, dtype=dtype, show_progress_bar=show_progress_bar
        )

    def inference_engine(self) -> PSPEngine:
        """The :class:`~psp_st.inference.engine.PSPEngine` of this module, run with ``tokenizer.num_threads``
        threads (cached; rebuilt when the weight tensor, the tokenizer or ``max_seq_length`` change; CPU float32
        weights are shared, not copied; a copy, of other dtypes or devices, is rebuilt after any in-place change)."""
        from psp_st.inference.engine import PSPEngine

        weight = self.embedding.weight
        shared = weight.device.type == "cpu" and weight.dtype == torch.float32  # what from_module does not copy
        key = (
            weight.data_ptr(),
            str(weight.device),
            str(weight.dtype),
            id(self.tokenizer),
            self.max_seq_length,
            None if shared else weight._version,
        )
        cached = self.__dict__.get("_engine")
        if cached is None or cached[0] != key:
            cached = (key, PSPEngine.from_module(self))
            self.__dict__["_engine"] = cached
        engine = cached[1]
        engine.threads = self.tokenizer.num_threads
        return engine

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_engine", None)  # its copy of the weights would double a pickle or deepcopy; rebuilt on use
        return state

    def save(self, output_path: str, *args: Any, safe_serialization: bool = True, **kwargs: Any) -> None:
        output_path = self._start_save(output_path)
        weights = self._export_weights()
        self._save_weights({PSP_WEIGHT_KEY: weights}, os.path.join(output_path, self.weights_file_name))
        save_tokenizer(self.tokenizer, output_path)

    @classmethod
    def load(cls, model_name_or_path: str, **kwargs: Any) -> PSPEmbedding:  # type: ignore[override]
        hub_kwargs = cls._hub_kwargs(**kwargs)
        config = cls._load_checked_config(model_name_or_path, check=check_psp_config, **hub_kwargs)
        config.pop("word_dropout", None)  # saved by earlier versions, ignored
        tokenizer, _ = cls._read_tokenizer(model_name_or_path, "sentencepiece", None, hub_kwargs)
        weights = cls._load_checked_weights(model_name_or_path, **hub_kwargs)
        if PSP_WEIGHT_KEY not in weights:
            raise ModelFolderError(f"{cls.__name__}: weights file has no '{PSP_WEIGHT_KEY}' (found: {sorted(weights)})")
        weight = weights[PSP_WEIGHT_KEY]
        expected = (tokenizer.vocab_size, config.get("embedding_dim", weight.shape[-1]))
        if tuple(weight.shape) != expected:
            raise ModelFolderError(
                f"weight '{PSP_WEIGHT_KEY}' has shape {tuple(weight.shape)}, expected {expected} "
                f"({tokenizer.vocab_size} sentencepiece pieces x embedding_dim). The weights do not belong to this "
                "tokenizer/config: the folder mixes files from different models."
            )
        return cls._construct(model_name_or_path, tokenizer, embedding_weights=weight, **config)

    def _export_weights(self) -> torch.Tensor:
        """The piece vectors (no padding row) as a new CPU tensor of :attr:`weights_dtype`."""
        weights = self.embedding.weight.detach()[: self.vocab_size].cpu()
        return weights.to(getattr(torch, self.weights_dtype), copy=True).contiguous()

    def to_static_embedding(self) -> StaticEmbedding:
        """The same model as ST's built-in ``StaticEmbedding``, with the tokenizer of
        :meth:`SentencePieceTokenizer.to_hf_tokenizer` (``drop_unknown=True``, truncated to ``max_seq_length``
        pieces): the same vectors, except that a text with no known piece gives zeros (not the ``<unk>`` vector).
        With ``weights_dtype="float16"`` ST computes in float16 (a text of tens of thousands of pieces overflows to
        ``inf``: ``model.float()`` first)."""
        from sentence_transformers.sentence_transformer.modules import StaticEmbedding

        tokenizer = self.tokenizer.to_hf_tokenizer(drop_unknown=True)
        if self.max_seq_length is not None:  # saved in tokenizer.json: StaticEmbedding keeps the first N pieces too
            tokenizer.enable_truncation(self.max_seq_length)
        return StaticEmbedding(tokenizer, embedding_weights=self._export_weights())

    def export_static(self, path: str | os.PathLike, normalize: bool = False, overwrite: bool = False) -> None:
        """Write :meth:`to_static_embedding` (plus ST's ``Normalize`` if ``normalize``) as a folder that
        ``SentenceTransformer(path)`` loads without psp-st. An existing non-empty ``path`` is refused unless
        ``overwrite``."""
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Normalize

        check_output(path, overwrite=overwrite, folder=True, option="export_static:", flag="overwrite=True")
        modules: list[nn.Module] = [self.to_static_embedding()]
        if normalize:
            modules.append(Normalize())
        with atomic_directory(path) as folder:  # whole or absent; umask permissions (safetensors writes 0600)
            SentenceTransformer(modules=modules, device="cpu").save(str(folder))

    def export_model2vec(self, path: str | os.PathLike, normalize: bool = False, overwrite: bool = False) -> None:
        """Write model2vec's own folder format (``StaticModel.from_pretrained(path)``): the tokenizer and vectors of
        :meth:`to_static_embedding`. Its ``max_length`` cuts characters, not pieces, so a ``max_seq_length`` is
        refused. An existing non-empty ``path`` is refused unless ``overwrite``. The card states no licence (the
        weights' is their training data's, which the module does not know), as :meth:`export_static`'s."""
        from huggingface_hub import ModelCard

        from psp_st.io.extras import require

        StaticModel = require("model2vec", "export_model2vec").StaticModel
        if self.max_seq_length is not None:
            raise ValueError(
                f"export_model2vec: model2vec cannot keep the first {self.max_seq_length} pieces (its max_length "
                "cuts characters): set module.max_seq_length = None to export a model that averages every piece"
            )
        check_output(path, overwrite=overwrite, folder=True, option="export_model2vec:", flag="overwrite=True")
        weights = self._export_weights().numpy()
        tokenizer = self.tokenizer.to_hf_tokenizer(drop_unknown=True)
        with atomic_directory(path) as folder:  # whole or absent; umask permissions (safetensors writes 0600)
            model = StaticModel(weights, tokenizer, normalize=normalize, max_length=None)
            model.save_pretrained(str(folder), model_name=Path(path).name)  # not the temp name
            card = ModelCard.load(Path(folder) / "README.md")  # model2vec's says MIT, its code's licence
            card.data.license = None
            card.save(Path(folder) / "README.md")

    def __repr__(self) -> str:
        return (
            f"PSPEmbedding(vocab_size={self.vocab_size}, embedding_dim={self.embedding_dim}, "
            f"lowercase={self.lowercase}, max_seq_length={self.max_seq_length})"
        )

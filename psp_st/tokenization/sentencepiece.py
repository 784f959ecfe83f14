"""Training and batch encoding of sentencepiece unigram models.

Why ``sentencepiece`` rather than HF ``tokenizers``: it encodes a list faster on one core
(``benchmarks/encode_speed.py``); :meth:`SentencePieceTokenizer.to_hf_tokenizer` converts a model for the
StaticEmbedding export.
"""

from __future__ import annotations

import io
import itertools
import logging
import os
import random
import re
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import ClassVar

import numpy as np
import sentencepiece as spm

from psp_st.arguments import check_int, check_number
from psp_st.io.atomic import atomic_write_bytes
from psp_st.io.progress import progress_bar
from psp_st.tokenization.text_checks import check_texts

logger = logging.getLogger(__name__)
#: Serializes building a tokenizer's word memo (threads encoding with one tokenizer build it once).
_MEMO_LOCK = threading.Lock()

#: Keep every character seen in training (the reference's 0.995 drops digits and letters of caption data).
DEFAULT_CHARACTER_COVERAGE = 1.0
#: The reference preprocessing caps the sentences sentencepiece sees while training.
DEFAULT_INPUT_SENTENCE_SIZE = 10_000_000


def truncate_flat(flat: np.ndarray, lengths: np.ndarray, max_length: int) -> tuple[np.ndarray, np.ndarray]:
    """Keep the first ``max_length`` ids of each row of a flat id array (vectorized)."""
    starts = np.cumsum(lengths) - lengths
    cols = np.arange(len(flat)) - np.repeat(starts, lengths)
    return flat[cols < max_length], np.minimum(lengths, max_length)


class SentencePieceTokenizer:
    """A sentencepiece model plus the preprocessing P-SP applies around it (lower-casing, truncation).

    Args:
        model_proto: the serialized sentencepiece ``ModelProto`` (the bytes of a ``.model`` file).
        lowercase: lower-case texts before encoding, as the P-SP paper does.
        num_threads: threads sentencepiece uses to encode a list (``1`` for single-thread benchmarks,
            ``-1`` for all cores).
    """

    kind: ClassVar[str] = "sentencepiece"
    #: the file a model folder holds it in
    files: ClassVar[tuple[str, ...]] = ("sentencepiece.model",)

    def __init__(self, model_proto: bytes, lowercase: bool = True, num_threads: int = -1) -> None:
        self.model_proto = bytes(model_proto)
        self.processor = spm.SentencePieceProcessor()
        try:
            self.processor.LoadFromSerializedProto(self.model_proto)
        except Exception as error:  # sentencepiece raises a bare RuntimeError/OSError on a bad proto
            raise ValueError(f"Not a valid sentencepiece model: {error}") from error
        self.lowercase = lowercase
        self.num_threads = num_threads

    # -- construction -------------------------------------------------------------------------------------
    @classmethod
    def from_file(cls, path: str | os.PathLike, **kwargs) -> SentencePieceTokenizer:
        """Load a ``.model`` file written by sentencepiece or by :meth:`save`."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"sentencepiece model file not found: {path}")
        return cls(path.read_bytes(), **kwargs)

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        vocab_size: int = 50_000,
        character_coverage: float = DEFAULT_CHARACTER_COVERAGE,
        lowercase: bool = True,
        input_sentence_size: int = DEFAULT_INPUT_SENTENCE_SIZE,
        model_type: str = "unigram",
        byte_fallback: bool = False,
        seed: int = 42,
        max_sentence_length: int = 4192,
        num_threads: int | None = None,
        **trainer_options,
    ) -> SentencePieceTokenizer:
        """Train a sentencepiece model on ``texts``.

        Args:
            texts: training sentences (any iterable; a ``datasets`` column works).
            vocab_size: target vocabulary size. It is a soft limit: a corpus too small to fill it gives a
                smaller vocabulary instead of an error.
            character_coverage: share of characters the model must cover; ``1.0`` (default) keeps all.
            lowercase: lower-case the training text (and, later, every input).
            input_sentence_size: at most this many sentences are sampled for training, as in the reference.
            model_type: ``"unigram"`` (P-SP) or ``"bpe"``.
            byte_fallback: decompose unknown characters into UTF-8 byte pieces instead of ``<unk>``.
            seed: seed of sentencepiece's sentence sampling, for reproducible vocabularies.
            max_sentence_length: longer training sentences (in bytes) are skipped by sentencepiece.
            num_threads: sentencepiece's training threads (default: every core).
            **trainer_options: passed to ``sentencepiece.SentencePieceTrainer.train``.
        """
        if isinstance(texts, (str, bytes)):
            raise TypeError(
                "texts must be a list (or other iterable) of strings, got a single "
                f"{type(texts).__name__}: wrap it in a list"
            )
        vocab_size = check_int("vocab_size", vocab_size, minimum=8)
        character_coverage = check_number(
            "character_coverage", character_coverage, 0.98, 1.0, why="sentencepiece's limit; 1.0 keeps every character"
        )
        input_sentence_size = check_int("input_sentence_size", input_sentence_size, minimum=0)
        seed = check_int("seed", seed, minimum=0)
        num_threads = check_int("num_threads", (os.cpu_count() or 1) if num_threads is None else num_threads)

        count = too_long = 0
        bad_input: TypeError | None = None
        # one progress line while sentencepiece reads, then trains
        bar = progress_bar(desc=f"sentencepiece {vocab_size:,} pieces, reading", unit=" texts", leave=False)

        def sentences():
            # sentencepiece turns exceptions raised here into a bare RuntimeError: keep ours to re-raise it
            nonlocal count, too_long, bad_input
            for index, text in enumerate(texts):
                if not isinstance(text, str):
                    bad_input = TypeError(f"training text #{index} is {type(text).__name__}, expected str")
                    return
                text = text.strip()
                if 4 * len(text) > max_sentence_length and len(text.encode()) > max_sentence_length:
                    too_long += 1  # sentencepiece would skip it without a word
                elif text:
                    count += 1
                    if count % 10_000 == 0:
                        bar.update(10_000)
                    yield text.lower() if lowercase else text
            bar.update(count % 10_000)
            bar.set_description_str(f"sentencepiece {vocab_size:,} pieces, training on", refresh=True)

        spm.set_random_generator_seed(seed)
        random.seed(seed)
        buffer = io.BytesIO()
        try:
            spm.SentencePieceTrainer.train(
                sentence_iterator=sentences(),
                model_writer=buffer,
                vocab_size=vocab_size,
                hard_vocab_limit=False,
                character_coverage=character_coverage,
                model_type=model_type,
                byte_fallback=byte_fallback,
                input_sentence_size=input_sentence_size,
                shuffle_input_sentence=True,
                max_sentence_length=max_sentence_length,
                num_threads=num_threads,
                minloglevel=2,
                **trainer_options,
            )
        except RuntimeError as error:
            if bad_input is not None:
                raise bad_input from None
            if count == 0:
                longer = (
                    f" ({too_long:,} longer than max_sentence_length={max_sentence_length:,} bytes)" if too_long else ""
                )
                raise ValueError(f"cannot train a sentencepiece model: no non-empty training text{longer}") from error
            needed = re.search(r"smaller than required_chars\. \d+ vs (\d+)", str(error))
            if needed:
                raise ValueError(
                    f"vocab_size (--vocab-size) {vocab_size} is below the {needed[1]} pieces the training text's "
                    f"characters need: use at least {needed[1]}, or a lower character_coverage"
                ) from None
            raise
        finally:
            bar.close()
        if bad_input is not None:
            raise bad_input
        if too_long:
            logger.warning(
                "skipped %d training texts longer than max_sentence_length=%d bytes", too_long, max_sentence_length
            )
        logger.info("trained sentencepiece %s model on %d sentences", model_type, count)
        return cls(buffer.getvalue(), lowercase=lowercase)

    def save(self, path: str | os.PathLike) -> None:
        """Write the model as a standard sentencepiece ``.model`` file (atomically)."""
        atomic_write_bytes(Path(path), self.model_proto)

    # -- properties ---------------------------------------------------------------------------------------
    @property
    def vocab_size(self) -> int:
        return self.processor.get_piece_size()

    @property
    def unk_id(self) -> int:
        return self.processor.unk_id()

    def id_to_piece(self, index: int) -> str:
        return self.processor.id_to_piece(index)

    def token_texts(self) -> list[str]:
        """The text of every piece as a teacher should read it: ``▁`` -> space, stripped; bare ``▁`` stays."""
        pieces = [self.id_to_piece(index) for index in range(self.vocab_size)]
        return [piece.replace("\u2581", " ").strip() or piece for piece in pieces]

    # -- encoding -----------------------------------------------------------------------------------------
    def encode(
        self, texts: Sequence[str], max_length: int | None = None, num_threads: int | None = None
    ) -> list[list[int]]:
        """Piece ids of each text (unknown pieces included as :attr:`unk_id`); ``num_threads`` overrides
        :attr:`num_threads` for this call."""
        texts = check_texts(texts)
        if self.lowercase:
            texts = [text.lower() for text in texts]
        threads = self.num_threads if num_threads is None else num_threads
        ids = self.processor.encode(texts, out_type=int, num_threads=threads)
        if max_length is not None:
            ids = [row[:max_length] for row in ids]
        return ids

    def encode_flat(
        self,
        texts: Sequence[str],
        max_length: int | None = None,
        drop_unknown: bool = False,
        num_threads: int | None = None,
        memo: bool = True,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Encode ``texts`` into one flat id array and per-text lengths (no per-token Python work).

        With ``drop_unknown``, unknown pieces are removed with the bare ``▁`` right before them (``"a dog ☃
        runs"`` encodes as ``"a dog runs"``), through the exact word memo (:mod:`psp_st.tokenization.word_memo`)
        when numba is installed and ``memo``; ``max_length`` then keeps the first pieces of each text.
        """
        if drop_unknown and memo and num_threads in (None, 1):
            word_memo = self.word_memo()
            if word_memo is not None:
                return word_memo.encode_flat(check_texts(texts), max_length=max_length)
        ids = self.encode(texts, num_threads=num_threads)
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        flat = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
        if drop_unknown and len(flat):
            flat, lengths = self._drop_unknown(flat, lengths)
        if max_length is not None:
            flat, lengths = truncate_flat(flat, lengths, max_length)
        return flat, lengths

    def word_memo(self):
        """This model's :class:`~psp_st.tokenization.word_memo.WordMemo` (built on first use), or ``None``
        without numba (``pip install "psp-st[fast]"``) or for a model it cannot be exact for."""
        with _MEMO_LOCK:
            memo = self.__dict__.get("_word_memo")
            if memo is None:
                memo = False
                try:
                    import numba  # noqa: F401  # the memo's kernels are compiled with numba
                except ImportError:
                    pass
                else:
                    from psp_st.tokenization.word_memo import WordMemo, unsupported_reason

                    reason = unsupported_reason(self)
                    if reason is None:
                        memo = WordMemo(self)
                    else:
                        logger.info(
                            "no word memo for this sentencepiece model (%s): sentencepiece on every text", reason
                        )
                self.__dict__["_word_memo"] = memo
        return memo or None

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_word_memo", None)  # rebuilt on first use (it holds a lock)
        return state

    def _drop_unknown(self, flat: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        rows = np.repeat(np.arange(len(lengths)), lengths)
        unknown = flat == self.unk_id
        if not unknown.any():
            return flat, lengths
        drop = unknown.copy()
        space = self.word_boundary_id
        if space is not None:
            before_unknown = np.zeros_like(unknown)
            before_unknown[:-1] = unknown[1:] & (rows[:-1] == rows[1:])
            drop |= before_unknown & (flat == space)
        keep = ~drop
        return flat[keep], np.bincount(rows[keep], minlength=len(lengths))

    @property
    def word_boundary_id(self) -> int | None:
        """Id of the bare ``▁`` piece that sentencepiece emits before a word it cannot start with a piece."""
        index = self.processor.piece_to_id("\u2581")
        return None if index == self.unk_id else index

    def unknown_rate(self, texts: Sequence[str]) -> float:
        """Share of texts that contain at least one unknown piece."""
        if len(texts) == 0:
            return 0.0
        unk = self.unk_id
        return sum(unk in row for row in self.encode(texts)) / len(texts)

    # -- conversion ---------------------------------------------------------------------------------------
    def to_hf_tokenizer(self, drop_unknown: bool = False):
        """An equivalent ``tokenizers.Tokenizer`` (same normalization, pieces, scores and unknown id).

        With ``drop_unknown`` the pre-tokenizer removes every run of characters without a single-character piece
        (and the ``▁`` before it), so the ids are those of :meth:`encode_flat` with ``drop_unknown=True``, except
        that a text with no known piece gives no id, and a character found only inside longer pieces is ``<unk>``.
        """
        from sentencepiece import sentencepiece_model_pb2
        from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

        # The protobuf-generated module defines its classes at import time; mypy cannot see them.
        proto = sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]
        proto.ParseFromString(self.model_proto)
        if proto.trainer_spec.model_type != sentencepiece_model_pb2.TrainerSpec.UNIGRAM:  # type: ignore[attr-defined]
            raise ValueError("only unigram sentencepiece models can be converted to a tokenizers.Tokenizer")
        vocab = [(piece.piece, piece.score) for piece in proto.pieces]
        tokenizer = Tokenizer(
            models.Unigram(vocab, unk_id=proto.trainer_spec.unk_id, byte_fallback=proto.trainer_spec.byte_fallback)
        )
        steps: list[normalizers.Normalizer] = []
        if self.lowercase:
            steps.append(normalizers.Lowercase())
        charsmap = proto.normalizer_spec.precompiled_charsmap
        if charsmap:
            steps.append(normalizers.Precompiled(charsmap))
        if proto.normalizer_spec.remove_extra_whitespaces:
            steps.append(normalizers.Strip())
            steps.append(normalizers.Replace(Regex(" {2,}"), " "))
        tokenizer.normalizer = normalizers.Sequence(steps)
        prepend = "always" if proto.normalizer_spec.add_dummy_prefix else "never"
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme=prepend, split=False)
        if drop_unknown:
            known = sorted({piece.piece for piece in proto.pieces if len(piece.piece) == 1} | {"\u2581"})
            unknown_run = "\u2581?[^" + "".join(f"\\x{{{ord(char):x}}}" for char in known) + "]+"
            tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
                [tokenizer.pre_tokenizer, pre_tokenizers.Split(Regex(unknown_run), behavior="removed")]
            )
        tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme=prepend, split=False)
        return tokenizer

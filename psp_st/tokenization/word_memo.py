"""Exact memoised sentencepiece segmentation: each distinct word is segmented once, then looked up (compiled)."""

from __future__ import annotations

import contextlib
import gc
import itertools
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from psp_st.tokenization.sentencepiece import SentencePieceTokenizer

#: Byte standing for ``▁`` in the memo's piece keys (a control byte: never in a memoised word).
BOUNDARY_BYTE = 1
#: How a text reaches the memo: sentencepiece only; raw printable ASCII; sentencepiece-normalized UTF-8.
SENTENCEPIECE, RAW, NORMALIZED = 0, 1, 2
#: Text status after a memo pass: all words found and certified; some word not in the memo; sentencepiece's.
OK, MISSING, FALLBACK = 0, 1, 2
#: 64-bit FNV-1a as signed int64, the kernels' key of words and pieces (0 becomes 1: 0 marks an empty slot).
FNV_OFFSET, FNV_PRIME = np.int64(0xCBF29CE484222325 - (1 << 64)), np.int64(0x100000001B3)
#: Texts per memo pass (new words found in a pass are added before the next one).
CHUNK = 8192
#: Most new words collected per pass.
MAX_MISSES = 1 << 16
#: Normalizations under which printable ASCII is left unchanged (checked on every character at construction).
ASCII_STABLE_NORMALIZERS = ("nmt_nfkc", "nfkc", "identity", "nmt_nfkc_cf", "nfkc_cf")
#: sentencepiece ModelProto piece types (sentencepiece_model.proto).
NORMAL, USER_DEFINED = 1, 4


def unsupported_reason(tokenizer: SentencePieceTokenizer) -> str | None:
    """Why the memo cannot be exact for this model (``None``: it can), from the model's own settings."""
    proto = tokenizer.parsed_proto()
    spec = proto.normalizer_spec
    if proto.trainer_spec.model_type != proto.trainer_spec.UNIGRAM:
        return "not a unigram model"
    if spec.name not in ASCII_STABLE_NORMALIZERS:
        return f"normalization {spec.name!r}"
    if not (spec.add_dummy_prefix and spec.remove_extra_whitespaces and spec.escape_whitespaces):
        return "non-default whitespace handling"
    if proto.trainer_spec.treat_whitespace_as_suffix:
        return "whitespace as suffix"
    if any(piece.type == USER_DEFINED for piece in proto.pieces):
        return "user-defined pieces"
    if any("\u2581" in piece.piece[1:] for piece in proto.pieces):
        return "pieces spanning words"
    if tokenizer.word_boundary_id is None:
        return "no '▁' piece"
    printable = "".join(chr(code) for code in range(33, 127))
    if tokenizer.processor.normalize(printable) != "\u2581" + printable:
        return "normalization changes printable ASCII"
    return None


def _piece_tables(tokenizer: SentencePieceTokenizer) -> dict[str, Any]:
    """Hash table of the pieces' UTF-8 bytes (a leading ``▁`` as :data:`BOUNDARY_BYTE`) and their scores."""
    proto = tokenizer.parsed_proto()
    vocab = len(proto.pieces)
    scores = np.array([piece.score for piece in proto.pieces], dtype=np.float32).astype(np.float64)
    normal = [piece.type == NORMAL for piece in proto.pieces]
    unk_score = float(np.float32(scores[normal].min()) - np.float32(10.0))
    encoded: list[bytes | None] = []
    for piece, is_normal in zip(proto.pieces, normal, strict=True):
        body = piece.piece.removeprefix("\u2581")
        prefix = bytes([BOUNDARY_BYTE]) if piece.piece.startswith("\u2581") else b""
        usable = is_normal and all(ord(char) >= 33 for char in body)
        encoded.append(prefix + body.encode("utf-8") if usable else None)
    table = np.zeros(1 << max(4, (2 * vocab).bit_length()), dtype=np.int64)
    records = np.zeros((vocab, 4), dtype=np.int64)  # the memo's record layout: [pool start, 0, length, 0]
    pool = bytearray()
    kernels = memo_kernels()
    for index, data in enumerate(encoded):
        if data is not None:
            records[index, 0], records[index, 2] = len(pool), len(data)
            pool += data
            kernels.put(table, kernels.word_key(np.frombuffer(data, dtype=np.uint8), 0, len(data)), index)
    scale = 4.0 * 2.0**-24 * max(float(np.abs(scores[normal]).max()), abs(unk_score))
    return {
        "arrays": (table, records, np.frombuffer(bytes(pool), dtype=np.uint8).copy(), scores),
        "model": (int(records[:, 2].max(initial=1)), tokenizer.unk_id, tokenizer.word_boundary_id, unk_score, scale),
    }


def memo_kernels():
    """The kernels module (importing it loads numba and the compiled code)."""
    from psp_st.tokenization import memo_kernels

    return memo_kernels


class _ReadWriteLock:
    """Many concurrent readers (memo look-ups) or one writer (memo insertion)."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._readers = 0
        self._writer = False

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        with self._condition:
            while self._writer:
                self._condition.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._condition:
                self._readers -= 1
                if self._readers == 0:
                    self._condition.notify_all()

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with self._condition:
            while self._writer or self._readers:
                self._condition.wait()
            self._writer = True
        try:
            yield
        finally:
            with self._condition:
                self._writer = False
                self._condition.notify_all()


class WordMemo:
    """Word -> piece ids of one sentencepiece model, certified exact.

    Why: P-SP's inference is mostly tokenization, and sentencepiece re-runs its lattice search on every word. It
    breaks near-ties by the float32 rounding of the running *sentence* score, so each word has a certificate: a
    float64 top-2 Viterbi finds sentencepiece's path for the word alone, with a margin over the second-best above
    sentencepiece's largest rounding error inside the text (``4 * pieces * 2**-24 * (characters + 1) * max
    |score|``). Texts it cannot certify (a character outside printable ASCII, a margin too small for the text's
    length) go to sentencepiece unchanged.

    Args:
        max_words: the memo is emptied when it would hold more words (about 70 bytes per word).
        prefill: segment the vocabulary's whole-word pieces up front.
    """

    def __init__(self, tokenizer: SentencePieceTokenizer, max_words: int = 500_000, prefill: bool = True) -> None:
        reason = unsupported_reason(tokenizer)
        if reason is not None:
            raise ValueError(f"the word memo cannot be exact for this sentencepiece model: {reason}")
        if not 1 <= max_words < 1 << 31:
            raise ValueError(f"max_words must be >= 1 and < 2**31 (the memo's 32-bit entries), got {max_words}")
        self.tokenizer = tokenizer
        self.max_words = max_words
        self._pieces = _piece_tables(tokenizer)
        self._lock = _ReadWriteLock()
        self._clear()
        if prefill:
            self._add(self._vocabulary_words())

    def _clear(self, words: int = 1 << 14, pool_bytes: int = 1 << 17, ids: int = 1 << 16) -> None:
        """An empty memo (layout: :mod:`psp_st.tokenization.memo_kernels`)."""
        self._table = np.zeros(1 << max(4, (2 * words).bit_length()), dtype=np.int64)
        self._records = np.zeros((words, 4), dtype=np.int64)
        self._word_pool = np.zeros(pool_bytes, dtype=np.uint8)
        self._id_pool = np.zeros(ids, dtype=np.int32)
        self._counts = np.zeros(3, dtype=np.int64)  # words, word bytes, ids

    def _state(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return self._table, self._records, self._word_pool, self._id_pool

    def __len__(self) -> int:
        return int(self._counts[0])

    def _reserve(self, words: int, pool_bytes: int, ids: int) -> None:
        """Room for ``words`` more words (their bytes and ids), growing arrays geometrically (writer only)."""

        def grown(array: np.ndarray, used: int, need: int) -> np.ndarray:
            if need <= len(array):
                return array
            bigger = np.zeros((max(need, 2 * len(array)), *array.shape[1:]), dtype=array.dtype)
            bigger[:used] = array[:used]
            return bigger

        count, used_bytes, used_ids = (int(value) for value in self._counts)
        self._records = grown(self._records, count, count + words)
        self._word_pool = grown(self._word_pool, used_bytes, used_bytes + pool_bytes)
        self._id_pool = grown(self._id_pool, used_ids, used_ids + ids)
        if 2 * (count + words) > len(self._table):  # a quarter to half full after growing
            self._table = np.zeros(1 << (2 * (count + words)).bit_length(), dtype=np.int64)
            memo_kernels().rehash(self._table, self._records, self._word_pool, count)

    def _vocabulary_words(self) -> list[bytes]:
        """The whole-word pieces (``▁word``) as memo keys: what a text of the model's language mostly holds."""
        words = set()
        for index in range(self.tokenizer.vocab_size):
            piece = self.tokenizer.id_to_piece(index)
            word = piece[1:].lower() if self.tokenizer.lowercase else piece[1:]
            if piece.startswith("\u2581") and word and word.isascii() and all(33 <= ord(c) <= 126 for c in word):
                words.add(word.encode("ascii"))
        return sorted(words)

    def _add(self, words: Sequence[bytes]) -> None:
        """Segment ``words`` (exactly the bytes sentencepiece would see) with sentencepiece, certify, insert."""
        words = list(words)[: self.max_words]
        if not words:
            return
        texts = [word.decode("utf-8") for word in words]
        processor = self.tokenizer.processor
        # one acyclic list per word (freed by reference counting): spare the collector's gen-0 passes
        collect = gc.isenabled()
        gc.disable()
        try:
            ids = processor.encode(texts, out_type=int, num_threads=1)
            lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
            sp_offsets = np.zeros(len(ids) + 1, dtype=np.int64)
            np.cumsum(lengths, out=sp_offsets[1:])
            sp_ids = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=int(sp_offsets[-1]))
            del ids
        finally:
            if collect:
                gc.enable()
        # a non-ASCII word is trusted only if sentencepiece's normalization leaves it as it is (idempotent)
        trusted = np.ones(len(words), dtype=np.bool_)
        unusual = [i for i, text in enumerate(texts) if not text.isascii()]
        if unusual:
            normalized = processor.normalize([texts[i] for i in unusual])
            for i, text in zip(unusual, normalized, strict=True):
                trusted[i] = text == "\u2581" + texts[i]
        joined = b"".join(words)
        word_offsets = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, words), dtype=np.int64, count=len(words)), out=word_offsets[1:])
        with self._lock.writing():
            if int(self._counts[0]) + len(words) > self.max_words:
                self._clear()
            self._reserve(len(words), len(joined), len(sp_ids))
            pieces = self._pieces
            memo_kernels().insert(
                np.frombuffer(joined, dtype=np.uint8), word_offsets, trusted, sp_ids, sp_offsets, pieces["arrays"],
                pieces["model"], self._state(), self._counts,
            )  # fmt: skip

    def _scan(
        self, text: np.ndarray, starts: np.ndarray, lengths: np.ndarray, which: np.ndarray, modes: np.ndarray,
        max_length: int, out: np.ndarray, out_start: np.ndarray, out_len: np.ndarray, status: np.ndarray,
    ) -> list[bytes]:  # fmt: skip
        """One memo pass over texts ``which``; returns the distinct words the memo lacks (as memo keys)."""
        miss_start = np.empty(min(MAX_MISSES, len(text) // 2 + 1), dtype=np.int64)
        miss_len = np.empty_like(miss_start)
        miss_fold = np.empty(len(miss_start), dtype=np.bool_)
        with self._lock.reading():
            _, misses = memo_kernels().scan(
                text, starts, lengths, which, modes, self.tokenizer.lowercase, max_length, self._state(), out,
                out_start, out_len, status, (miss_start, miss_len, miss_fold),
            )  # fmt: skip
        raw = text.data
        new = set()
        for start, width, fold in zip(miss_start[:misses], miss_len[:misses], miss_fold[:misses], strict=True):
            word = bytes(raw[start : start + width])
            new.add(word.lower() if fold else word)
        return sorted(new)

    def _buffer(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The texts as one byte buffer, their byte lengths and modes: printable ASCII as it is, other texts as
        sentencepiece normalizes them after Python's lower-casing, unless a ``▁`` of their own would be lost."""
        count = len(texts)
        joined = "".join(texts)
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=count)
        if joined.isascii():
            return np.frombuffer(joined.encode("ascii"), dtype=np.uint8), lengths, np.full(count, RAW, dtype=np.int8)
        modes = np.fromiter(map(str.isascii, texts), dtype=np.int8, count=count)  # RAW == 1
        other = np.flatnonzero(modes == 0)
        chosen = [texts[i] for i in other]
        lowered = self.tokenizer.lower_case_all(chosen) if self.tokenizer.lowercase else chosen
        parts = list(texts)
        for i, normalized in zip(other, self.tokenizer.processor.normalize(lowered), strict=True):
            if "\u2581\u2581" in normalized or normalized.endswith("\u2581"):
                parts[i] = ""  # sentencepiece keeps a bare ▁ there: leave the text to it
                lengths[i] = 0
                continue
            parts[i] = normalized.replace("\u2581", " ")
            lengths[i] = len(parts[i].encode("utf-8"))
            modes[i] = NORMALIZED
        return np.frombuffer("".join(parts).encode("utf-8"), dtype=np.uint8), lengths, modes

    def encode_flat(self, texts: list[str], max_length: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``tokenizer.encode_flat(texts, max_length, drop_unknown=True)`` (``texts``: checked strings)."""
        if len(texts) > CHUNK:
            parts = [self.encode_flat(texts[i : i + CHUNK], max_length) for i in range(0, len(texts), CHUNK)]
            return np.concatenate([flat for flat, _ in parts]), np.concatenate([lengths for _, lengths in parts])
        count = len(texts)
        text, lengths, modes = self._buffer(texts)
        starts = np.zeros(count, dtype=np.int64)
        np.cumsum(lengths[:-1], out=starts[1:])
        limit = -1 if max_length is None else int(max_length)
        out = np.empty(2 * len(text) + 1, dtype=np.int64)  # at most ▁ + one piece per byte of each word
        out_start = np.empty(count, dtype=np.int64)
        out_len = np.empty(count, dtype=np.int64)
        status = np.empty(count, dtype=np.int8)
        new_words = self._scan(text, starts, lengths, np.arange(count), modes, limit, out, out_start, out_len, status)
        kinds = np.zeros(count, dtype=np.int64)
        second = third = out[:0]
        if new_words:
            self._add(new_words)
            again = np.flatnonzero(status == MISSING)
            second = np.empty(2 * int(lengths[again].sum()) + 1, dtype=np.int64)
            self._scan(text, starts, lengths, again, modes, limit, second, out_start, out_len, status)
            kinds[again] = 1
        rest = np.flatnonzero(status != OK)
        if len(rest):
            third, rest_len = self.tokenizer.encode_flat(
                [texts[i] for i in rest], max_length=max_length, drop_unknown=True, num_threads=1, memo=False
            )
            kinds[rest] = 2
            out_len[rest] = rest_len
            out_start[rest] = np.cumsum(rest_len) - rest_len
        if not kinds.any():
            return out[: int(out_len.sum())].copy(), out_len
        result = np.empty(int(out_len.sum()), dtype=np.int64)
        memo_kernels().gather(out, second, third, kinds, out_start, out_len, result)
        return result, out_len

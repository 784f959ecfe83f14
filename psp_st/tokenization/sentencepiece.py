"""Training and batch encoding of sentencepiece unigram models (faster on one core than HF ``tokenizers``)."""

from __future__ import annotations

import io
import itertools
import logging
import os
import re
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import sentencepiece as spm

from psp_st.arguments import check_int, check_number
from psp_st.io.atomic import atomic_write_bytes
from psp_st.io.progress import progress_bar
from psp_st.tokenization.text_checks import check_max_length, check_texts, refuse_single_text, training_text_error

if TYPE_CHECKING:
    import tokenizers

    from psp_st.tokenization.word_memo import WordMemo

logger = logging.getLogger(__name__)
#: Threads encoding with one tokenizer build its word memo once.
_MEMO_LOCK = threading.Lock()
#: Texts a tokenizer encodes with sentencepiece before it builds its word memo (~0.5 s: the vocabulary's words and
#: numba's compiled code loaded): a small job (a few sentences, a CLI call in a loop) never pays for it; a job of one
#: full engine batch (``PSPEngine.encode``'s ``batch_size``) or more builds it at once, as before.
MEMO_AFTER_TEXTS = 8192
#: Threads lower-casing with one tokenizer build its table of normalized capitals once.
_CAPITALS_LOCK = threading.Lock()

#: Keep every character seen in training (the reference's 0.995 drops digits and letters of caption data).
DEFAULT_CHARACTER_COVERAGE = 1.0
#: As the reference preprocessing.
DEFAULT_INPUT_SENTENCE_SIZE = 10_000_000
#: Normalizations whose sentencepiece charsmap HF ``tokenizers`` reproduces (they map every whitespace to a space
#: and ``▁`` away first); with the others (``identity``, ``nfkc``, ...) about 5% of noisy texts segment differently.
#: Left even here: a grapheme under 6 bytes whose start has a mapping (``"¸\u200c"``, ``"Ａ\u0301"``, NFD ``"ế"``)
#: gets only that start's mapping in HF's ``Precompiled`` (huggingface/tokenizers#2116), and ties between segmentations.
HF_EXACT_NORMALIZERS = ("nmt_nfkc", "nmt_nfkc_cf")
#: A capital sigma that ``str.lower`` makes a final ``ς`` (Unicode's Final_Sigma: after a cased letter and up to 16
#: case-ignorable characters, before no cased letter); HF ``tokenizers``' ``Lowercase`` maps each character alone.
FINAL_SIGMA = r"(?<=\p{Cased}\p{Case_Ignorable}{0,16})\u03a3(?!\p{Case_Ignorable}*\p{Cased})"


def truncate_flat(flat: np.ndarray, lengths: np.ndarray, max_length: int) -> tuple[np.ndarray, np.ndarray]:
    """Keep the first ``max_length`` ids of each row of a flat id array."""
    starts = np.cumsum(lengths) - lengths
    cols = np.arange(len(flat)) - np.repeat(starts, lengths)
    return flat[cols < max_length], np.minimum(lengths, max_length)


class SentencePieceTokenizer:
    """A sentencepiece model (``model_proto``: a ``.model`` file's bytes) plus P-SP's lower-casing and truncation;
    ``num_threads``: sentencepiece's threads for encoding a list (``-1``: all cores)."""

    kind: ClassVar[str] = "sentencepiece"
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
            vocab_size: a soft limit: a corpus too small to fill it gives a smaller vocabulary, not an error.
            character_coverage: share of characters the model must cover (``1.0``: all).
            input_sentence_size: train on a sample of this many texts (drawn with ``seed`` from a sequence; an
                iterator's is sentencepiece's own, which no seed reproduces); ``0``: all of them.
            max_sentence_length: longer training sentences (in bytes) are skipped.
            num_threads: sentencepiece's training threads (None: all cores); the model depends on their number.
            **trainer_options: passed to ``sentencepiece.SentencePieceTrainer.train``.
        """
        refuse_single_text(texts)
        vocab_size = check_int("vocab_size (--vocab-size)", vocab_size, minimum=8)
        character_coverage = check_number(
            "character_coverage", character_coverage, 0.98, 1.0, why="sentencepiece's limit; 1.0 keeps every character"
        )
        input_sentence_size = check_int("input_sentence_size", input_sentence_size, minimum=0)
        seed = check_int("seed (--seed)", seed, minimum=0)
        num_threads = check_int(
            "num_threads (--threads)", (os.cpu_count() or 1) if num_threads is None else num_threads
        )
        if input_sentence_size and isinstance(texts, Sequence) and len(texts) > input_sentence_size:
            # sentencepiece's own sample ignores the seed (0.2.0: always the same rows; 0.2.3: other rows in every
            # process): draw it here, so the same seed gives the same model
            rows = np.random.default_rng(seed).choice(len(texts), size=input_sentence_size, replace=False)
            texts = [texts[row] for row in np.sort(rows)]

        count = too_long = 0
        bad_input: Exception | None = None
        bar = progress_bar(desc=f"sentencepiece {vocab_size:,} pieces, reading", unit=" texts", leave=False)

        cancelled = threading.Event()  # set on Ctrl-C: the reading stops (the training itself cannot be stopped)

        def sentences():
            # sentencepiece turns exceptions raised here into a bare RuntimeError: keep ours to re-raise it
            nonlocal count, too_long, bad_input
            for index, text in enumerate(texts):
                if index % 1024 == 0 and cancelled.is_set():
                    raise KeyboardInterrupt
                bad_input = training_text_error(index, text)
                if bad_input is not None:
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

        spm.set_random_generator_seed(seed)  # sentencepiece's own generator; Python's random is the caller's
        buffer = io.BytesIO()
        failure: list[BaseException] = []

        def train() -> None:
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
            except BaseException as error:  # handed to the caller's thread
                failure.append(error)

        # sentencepiece's C++ training ignores Ctrl-C until it returns (minutes on a large corpus): it runs in a
        # daemon thread, so Ctrl-C ends the wait at once and the process can exit
        worker = threading.Thread(target=train, name="sentencepiece-train", daemon=True)
        try:
            worker.start()
            try:
                while worker.is_alive():
                    worker.join(0.2)
            except KeyboardInterrupt:
                cancelled.set()
                raise
            if failure:
                raise failure[0]
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
                    f"vocab_size (--vocab-size; a recipe's tokenizer.vocab_size) {vocab_size} is below the "
                    f"{needed[1]} pieces the training text's characters need: use at least {needed[1]}, or a lower "
                    "character_coverage (at least 0.9; the rarest characters become unknown)"
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

    @property
    def vocab_size(self) -> int:
        return self.processor.get_piece_size()

    @property
    def unk_id(self) -> int:
        return self.processor.unk_id()

    def id_to_piece(self, index: int) -> str:
        return self.processor.id_to_piece(index)

    def get_vocab(self) -> dict[str, int]:
        """``{piece: id}``, as a transformers tokenizer gives it: what Sentence-Transformers compares, e.g. before
        ``SentenceTransformer.merge`` averages two models' rows (different pieces are then refused)."""
        return {self.id_to_piece(index): index for index in range(self.vocab_size)}

    def token_texts(self) -> list[str]:
        """The text of every piece as a teacher should read it: ``▁`` -> space, stripped; bare ``▁`` stays."""
        pieces = [self.id_to_piece(index) for index in range(self.vocab_size)]
        return [piece.replace("\u2581", " ").strip() or piece for piece in pieces]

    def lower_case(self, text: str) -> str:
        """``text`` lower-cased as a ``lowercase`` model reads it (:meth:`lower_case_all` of one text)."""
        return self.lower_case_all([text])[0]

    def lower_case_all(self, texts: Sequence[str]) -> list[str]:
        """``texts`` lower-cased as a ``lowercase`` model reads them: ``str.lower``, then the characters that the
        model's normalization makes capitals (𝐓, ℍ, 🄷: no lower case of their own, NFKC ``T``, ``H``) lower-cased
        as well. The non-ASCII texts are searched for those characters at once (one code-point lookup in numpy: a
        per-text Python search cost a quarter of the engine's speed on Chinese or Arabic text)."""
        lowered = [text.lower() for text in texts]
        other = [i for i, text in enumerate(lowered) if not text.isascii()]
        if not other:
            return lowered
        flags, table = self._capitals()
        codes = np.frombuffer("".join(lowered[i] for i in other).encode("utf-32-le", "surrogatepass"), np.uint32)
        hits = flags[np.minimum(codes, len(flags) - 1)]
        if hits.any():
            starts = np.cumsum([0] + [len(lowered[i]) for i in other[:-1]])  # non-ASCII texts are never empty
            for i, count in zip(other, np.add.reduceat(hits, starts), strict=True):
                if count:
                    lowered[i] = lowered[i].translate(table)
        return lowered

    def _capitals(self) -> tuple[np.ndarray, dict[int, str]]:
        """Which code points (below U+20000, where all of Unicode's are; the last entry, False, stands for the rest)
        this model's normalization turns into capitals, and a ``str.translate`` table to their lower-cased normal
        form (built once, ~0.15 s)."""
        if "_capital_table" in self.__dict__:
            return self.__dict__["_capital_table"]
        with _CAPITALS_LOCK:
            if "_capital_table" not in self.__dict__:
                chars = [chr(code) for code in range(0x80, 0x20000) if not 0xD800 <= code < 0xE000]
                chars = [char for char in chars if char.lower() == char]  # what str.lower leaves
                table = {}
                for char, normalized in zip(chars, self.processor.normalize(chars), strict=True):
                    normalized = normalized.removeprefix("\u2581").replace("\u2581", " ")  # no dummy-prefix space
                    if normalized != normalized.lower():
                        table[ord(char)] = normalized.lower()
                flags = np.zeros(0x20001, dtype=bool)
                flags[list(table)] = True
                self.__dict__["_capital_table"] = (flags, table)
        return self.__dict__["_capital_table"]

    def encode(
        self, texts: Sequence[str], max_length: int | None = None, num_threads: int | None = None
    ) -> list[list[int]]:
        """Piece ids of each text (unknown pieces included as :attr:`unk_id`), at most ``max_length`` each."""
        max_length = check_max_length(max_length)
        texts = check_texts(texts)
        if self.lowercase:
            texts = self.lower_case_all(texts)
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
        """``texts`` as one flat id array and per-text lengths; ``drop_unknown`` removes unknown pieces with the bare
        ``▁`` before them (``"a dog ☃ runs"`` -> ``"a dog runs"``), through the word memo with numba and ``memo``
        (the same ids; built once this tokenizer has been given :data:`MEMO_AFTER_TEXTS` texts)."""
        max_length = check_max_length(max_length)
        if drop_unknown and memo and num_threads in (None, 1):
            texts = check_texts(texts)
            word_memo = self.word_memo() if self._memo_due(len(texts)) else None
            if word_memo is not None:
                return word_memo.encode_flat(texts, max_length=max_length)
        ids = self.encode(texts, num_threads=num_threads)
        lengths = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        flat = np.fromiter(itertools.chain.from_iterable(ids), dtype=np.int64, count=int(lengths.sum()))
        if drop_unknown and len(flat):
            flat, lengths = self._drop_unknown(flat, lengths)
        if max_length is not None:
            flat, lengths = truncate_flat(flat, lengths, max_length)
        return flat, lengths

    def word_memo(self) -> WordMemo | None:
        """This model's :class:`~psp_st.tokenization.word_memo.WordMemo` (built on first use), or ``None``
        without numba (``pip install "psp-st[fast]"``) or for a model it cannot be exact for."""
        with _MEMO_LOCK:
            if "_word_memo" not in self.__dict__:
                self.__dict__["_word_memo"] = self._new_word_memo()
        return self.__dict__["_word_memo"] or None

    def _memo_due(self, texts: int) -> bool:
        """Count ``texts`` more texts asked of the memo route; whether the word memo is built or now worth building."""
        with _MEMO_LOCK:
            seen = self.__dict__.get("_memo_texts", 0) + texts
            self.__dict__["_memo_texts"] = seen
            return "_word_memo" in self.__dict__ or seen >= MEMO_AFTER_TEXTS

    def _new_word_memo(self):
        from psp_st.io.extras import import_kernels

        if import_kernels("psp_st.tokenization.memo_kernels") is None:  # the memo's kernels are compiled with numba
            return None
        from psp_st.tokenization.word_memo import WordMemo, unsupported_reason

        reason = unsupported_reason(self)
        if reason is None:
            return WordMemo(self)
        logger.info("no word memo for this sentencepiece model (%s): sentencepiece on every text", reason)
        return None

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state.pop("_word_memo", None)  # rebuilt on first use (it holds a lock)
        state.pop("_memo_texts", None)  # a copy counts its own texts
        state.pop("_capital_table", None)  # lower_case's table, rebuilt on use
        return state

    def _drop_unknown(self, flat: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        unknown = flat == self.unk_id
        if not unknown.any():
            return flat, lengths
        rows = np.repeat(np.arange(len(lengths)), lengths)
        drop = unknown.copy()
        space = self.word_boundary_id
        if space is not None:  # the bare ▁ right before an unknown piece of the same text
            drop[:-1] |= unknown[1:] & (rows[:-1] == rows[1:]) & (flat[:-1] == space)
        keep = ~drop
        return flat[keep], np.bincount(rows[keep], minlength=len(lengths))

    @property
    def word_boundary_id(self) -> int | None:
        """Id of the bare ``▁`` piece that sentencepiece emits before a word it cannot start with a piece."""
        index = self.processor.piece_to_id("\u2581")
        return None if index == self.unk_id else index

    def unknown_rate(self, texts: Sequence[str]) -> float:
        """Share of texts that contain at least one unknown piece."""
        unk = self.unk_id
        return sum(unk in row for row in self.encode(texts)) / max(len(texts), 1)

    def parsed_proto(self) -> Any:
        """The model as a sentencepiece ``ModelProto`` message."""
        from sentencepiece import sentencepiece_model_pb2

        proto = sentencepiece_model_pb2.ModelProto()  # type: ignore[attr-defined]
        proto.ParseFromString(self.model_proto)
        return proto

    def to_hf_tokenizer(self, drop_unknown: bool = False) -> tokenizers.Tokenizer:
        """An equivalent ``tokenizers.Tokenizer``; with ``drop_unknown`` its ids are :meth:`encode_flat`'s with
        ``drop_unknown=True`` (runs of characters without a one-character piece removed with the ``▁`` before them;
        with byte fallback such characters are byte pieces, kept as sentencepiece keeps them),
        except that a text with no known piece gives no id, and a character only inside longer pieces is ``<unk>``.
        Unigram models with a :data:`HF_EXACT_NORMALIZERS` normalization only (else ``ValueError``).
        """
        from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers

        proto = self.parsed_proto()
        if proto.trainer_spec.model_type != proto.trainer_spec.UNIGRAM:
            raise ValueError("only unigram sentencepiece models can be converted to a tokenizers.Tokenizer")
        if proto.normalizer_spec.name not in HF_EXACT_NORMALIZERS:
            raise ValueError(
                f"this sentencepiece model normalizes text with {proto.normalizer_spec.name!r}, which HF tokenizers do "
                f"not reproduce (other whitespace than spaces, a leading '▁'): only {', '.join(HF_EXACT_NORMALIZERS)} "
                "models convert; train the tokenizer with sentencepiece's default normalization to export it"
            )
        vocab = [(piece.piece, piece.score) for piece in proto.pieces]
        tokenizer = Tokenizer(
            models.Unigram(vocab, unk_id=proto.trainer_spec.unk_id, byte_fallback=proto.trainer_spec.byte_fallback)
        )
        steps: list[normalizers.Normalizer] = []
        if self.lowercase:  # Python's str.lower, which encode applies, also writes a word-final capital sigma as ς
            steps += [normalizers.Replace(Regex(FINAL_SIGMA), "\u03c2"), normalizers.Lowercase()]
        if proto.normalizer_spec.precompiled_charsmap:
            steps.append(normalizers.Precompiled(proto.normalizer_spec.precompiled_charsmap))
            if self.lowercase:  # the capitals the charsmap makes (𝐓 -> T), as lower_case
                steps.append(normalizers.Lowercase())
        if proto.normalizer_spec.remove_extra_whitespaces:
            # spaces only, as sentencepiece: Strip() would also take a U+0085 (NEL) that the charsmap keeps; the
            # lookbehind tries the trailing run once per run (" +\z" alone retries it from every space: quadratic)
            steps += [normalizers.Replace(Regex(r"\A +|(?<! ) +\z"), ""), normalizers.Replace(Regex(" {2,}"), " ")]
        tokenizer.normalizer = normalizers.Sequence(steps)
        prepend = "always" if proto.normalizer_spec.add_dummy_prefix else "never"
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme=prepend, split=False)
        if drop_unknown and not proto.trainer_spec.byte_fallback:  # byte fallback: every character has pieces
            known = sorted({piece.piece for piece in proto.pieces if len(piece.piece) == 1} | {"\u2581"})
            unknown_run = "\u2581?[^" + "".join(f"\\x{{{ord(char):x}}}" for char in known) + "]+"
            tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
                [tokenizer.pre_tokenizer, pre_tokenizers.Split(Regex(unknown_run), behavior="removed")]
            )
        tokenizer.decoder = decoders.Metaspace(replacement="▁", prepend_scheme=prepend, split=False)
        return tokenizer

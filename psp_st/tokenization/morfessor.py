"""Morfessor Baseline morphs as the token unit of any token-based encoder (Sjöblom et al., W-NUT 2018, 4.1).

Saved in Morfessor's own text segmentation format (never pickle); ``pip install psp-st[zoo]``.
"""

from __future__ import annotations

import math
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

from psp_st.io.atomic import atomic_path
from psp_st.tokenization.text_checks import refuse_single_text
from psp_st.tokenization.words import UNK_TOKEN, Vocabulary, WordTokenizer, _VocabularyTokenizer


def _import_morfessor():
    from psp_st.io.extras import require

    morfessor = require("morfessor", "Morfessor segmentation")
    utils: Any = require("morfessor.utils")
    utils.show_progress_bar = False  # it prints dots to stderr otherwise
    return morfessor


class MorfessorSegmenter:
    """A Morfessor Baseline model with a per-word cache, built from ``BaselineModel.get_segmentations()``'s
    ``(count, word, morphs)`` triples."""

    file_name: ClassVar[str] = "morfessor_segmentation.txt"

    def __init__(
        self,
        segmentations: Iterable[tuple[int, str, Sequence[str]]],
        corpus_weight: float = 1.0,
        max_word_length: int = 60,
    ) -> None:
        morfessor = _import_morfessor()
        rows = [(int(count), str(word), tuple(morphs)) for count, word, morphs in segmentations]
        for count, word, morphs in rows:
            if "".join(morphs) != word or word.split() != [word] or any(" + " in m or not m for m in morphs):
                raise ValueError(f"bad Morfessor segmentation {count} {word!r} -> {morphs!r}")
        # rebuilt from the segmentation list (what the file holds): trained and reloaded segment alike
        self.model = morfessor.BaselineModel(corpusweight=corpus_weight)
        self.model.load_segmentations(rows)
        self.segmentations = rows
        self.corpus_weight = corpus_weight
        self.max_word_length = max_word_length
        self._cache: dict[str, tuple[str, ...]] = {word: morphs for _, word, morphs in rows}
        self._known = len(self._cache)

    @classmethod
    def train(
        cls,
        words: Counter | Iterable[str],
        corpus_weight: float = 1.0,
        count_modifier: str = "log",
        finish_threshold: float = 0.005,
        max_epochs: int | None = None,
        max_words: int | None = None,
        seed: int = 0,
    ) -> MorfessorSegmenter:
        """Train Morfessor Baseline (recursive batch algorithm) on a ``Counter`` of words (or the words).

        ``corpus_weight`` (Morfessor's ``alpha``): larger values give longer morphs; ``count_modifier``: ``"log"``
        (``round(log2(count + 1))``), ``"types"`` or ``"tokens"``; ``max_words``: train on the most frequent words.
        """
        import random

        morfessor = _import_morfessor()
        refuse_single_text(words)
        counts = words if isinstance(words, Counter) else Counter(words)
        modifiers = {"log": lambda c: max(1, int(round(math.log(c + 1, 2)))), "types": lambda c: 1, "tokens": None}
        if count_modifier not in modifiers:
            raise ValueError(f"count_modifier must be one of {sorted(modifiers)}, got {count_modifier!r}")
        # no whitespace in str.split's sense: Morfessor's text reader strips it ("\x1c".."\x1f" too; Z8-6)
        items = [(word, count) for word, count in counts.items() if word.split() == [word]]
        if max_words is not None:
            items = sorted(items, key=lambda item: (-item[1], item[0]))[:max_words]
        data = [(count, word) for word, count in sorted(items)]
        if not data:
            raise ValueError("cannot train Morfessor: no words in the training texts")
        caller_state = random.getstate()  # Morfessor draws from Python's global generator: seeded here, then restored
        random.seed(seed)
        try:
            model = morfessor.BaselineModel(corpusweight=corpus_weight)
            model.load_data(data, count_modifier=modifiers[count_modifier])
            model.train_batch(finish_threshold=finish_threshold, max_epochs=max_epochs)
        finally:
            random.setstate(caller_state)
        return cls(model.get_segmentations(), corpus_weight=corpus_weight)

    def segment(self, word: str) -> tuple[str, ...]:
        """Morphs of ``word`` (cached; Viterbi segmentation for words not in the training data)."""
        morphs = self._cache.get(word)
        if morphs is None:
            if len(word) > self.max_word_length:  # Viterbi is quadratic in the word length
                morphs = tuple(word[i : i + self.max_word_length] for i in range(0, len(word), self.max_word_length))
            else:
                morphs = tuple(self.model.viterbi_segment(word)[0])
            if len(self._cache) < self._known + 1_000_000:
                self._cache[word] = morphs
        return morphs

    def save(self, directory: str | os.PathLike) -> None:
        """Write the model in Morfessor's text segmentation format."""
        io = _import_morfessor().MorfessorIO(encoding="utf-8")
        with atomic_path(Path(directory) / self.file_name) as tmp:
            io.write_segmentation_file(str(tmp), self.segmentations)

    @classmethod
    def load(cls, directory: str | os.PathLike, corpus_weight: float = 1.0, **options: Any) -> MorfessorSegmenter:
        """Read a model written by :meth:`save` (or ``morfessor -S``) with Morfessor's text reader."""
        io = _import_morfessor().MorfessorIO(encoding="utf-8")
        path = Path(directory) / cls.file_name
        if not path.is_file():
            raise FileNotFoundError(f"Morfessor segmentation file not found: {path}")
        try:
            segmentations = list(io.read_segmentation_file(str(path)))
        except (ValueError, UnicodeDecodeError) as error:
            raise ValueError(f"{path} is not a Morfessor segmentation file ({error})") from error
        if not segmentations:
            raise ValueError(f"{path} holds no segmentation")
        return cls(segmentations, corpus_weight=corpus_weight, **options)


class MorfessorTokenizer(_VocabularyTokenizer):
    """Words segmented into Morfessor morphs (``"talossa"`` -> ``talo``, ``ssa``), mapped to ids by a morph
    vocabulary."""

    kind: ClassVar[str] = "morfessor"
    files: ClassVar[tuple[str, ...]] = ("vocab.json", MorfessorSegmenter.file_name)

    def __init__(
        self, vocabulary: Vocabulary | Sequence[str], segmenter: MorfessorSegmenter, lowercase: bool = True
    ) -> None:
        super().__init__(vocabulary, lowercase)
        self.segmenter = segmenter
        self.words = WordTokenizer([UNK_TOKEN], lowercase=lowercase)

    def split(self, text: str, max_length: int | None = None) -> list[str]:
        segment = self.segmenter.segment
        morphs: list[str] = []
        for word in self.words.split(text, max_length):
            morphs.extend(segment(word))
            if max_length is not None and len(morphs) >= max_length:
                return morphs[:max_length]
        return morphs

    def _extra_config(self) -> dict[str, Any]:
        # the segmentation count: a cut segmentation file would load and silently segment differently (Z8-1)
        return {"corpus_weight": self.segmenter.corpus_weight, "segmentations": len(self.segmenter.segmentations)}

    @classmethod
    def train(
        cls,
        texts: Iterable[str],
        min_count: int = 1,
        max_size: int | None = None,
        lowercase: bool = True,
        **morfessor_options: Any,
    ) -> MorfessorTokenizer:
        """Train Morfessor Baseline on the words of ``texts`` (``morfessor_options``: :meth:`MorfessorSegmenter.train`),
        then build the morph vocabulary."""
        word_counts = WordTokenizer.count_tokens(texts, lowercase=lowercase)
        segmenter = MorfessorSegmenter.train(word_counts, **morfessor_options)
        morph_counts: Counter = Counter()
        for word, count in word_counts.items():
            for morph in segmenter.segment(word):
                morph_counts[morph] += count
        return cls(Vocabulary.from_counts(morph_counts, min_count, max_size), segmenter, lowercase=lowercase)

    def save(self, directory: str | os.PathLike) -> None:
        """Write ``vocab.json`` and ``morfessor_segmentation.txt``."""
        self.segmenter.save(directory)
        super().save(directory)

    @classmethod
    def _load_options(cls, directory: str | os.PathLike, options: dict[str, Any]) -> dict[str, Any]:
        segmenter = MorfessorSegmenter.load(directory, corpus_weight=float(options.get("corpus_weight", 1.0)))
        expected = options.get("segmentations")  # absent from folders saved before Z8-1
        if expected is not None and expected != len(segmenter.segmentations):
            raise ValueError(
                f"{Path(directory) / MorfessorSegmenter.file_name} holds {len(segmenter.segmentations)} segmentations, "
                f"{cls.file_name} {expected}: the file is truncated or from another model; re-save the model "
                "(model.save(path)) or download it again"
            )
        return {"segmenter": segmenter, "lowercase": options.get("lowercase", True)}

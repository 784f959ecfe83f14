"""The unlabelled English sentences a recipe distils the teacher on: a seeded sample per source file or glob.

Recipe form (``distillation.sources``)::

    - {path: corpus/wikipedia_sentences.parquet, max_sentences: 15000}              # column "sentence"
    - {path: training_pairs_extra/*.parquet, columns: [sentence1, sentence2], max_sentences: 15000}
    - {path: corpus/english_sentences.parquet, exclude: {source: flores200-devtest}}   # rows dropped (Parquet)
    - {path: bitext/de-en.parquet, columns: [source], teacher_column: target, max_sentences: 3000,
       exclude: {corpus: flores200-devtest}, filters: {language: {sentence1: de, sentence2: en}}}

Per entry: the texts of the given column(s), de-duplicated (:func:`candidates`), then a seeded nested sample of
``max_sentences`` (:func:`sample`), less the sentences an earlier entry chose.

``teacher_column``: cross-lingual distillation (Reimers & Gurevych 2020): the student learns the text of the
other column to match the teacher vector of the row's ``teacher_column`` text (its English translation); with
``teacher_column`` in ``columns`` too, the sampled pairs' English sides also learn their own vectors
(student(x) ~ teacher(en) and student(en) ~ teacher(en)). ``max_sentences`` then counts pairs. The rows are read
as pairs (sentence1 = the student column, sentence2 = the teacher column) by
:func:`psp_st.data.load_training_pairs`, so ``exclude`` and the pair ``filters`` (language id, length ratio, ...)
work as in ``data.sources``.
"""

from __future__ import annotations

import logging
import os
import zlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from psp_st.arguments import Check, check_keys
from psp_st.data.filters import text_key
from psp_st.data.sources import PairSource, parse_exclude

logger = logging.getLogger(__name__)

SOURCE_KEYS = ("path", "columns", "max_sentences", "exclude", "teacher_column", "filters")


def parse_source(entry: str | Mapping[str, Any], where: str = "recipe: distillation.sources entry") -> dict[str, Any]:
    """A ``distillation.sources`` entry as ``{path, columns, max_sentences, exclude, teacher_column, filters}``
    (a bare string is a path)."""
    entry = {"path": entry} if isinstance(entry, str) else dict(entry)
    check_keys(where, entry, SOURCE_KEYS)
    if not entry.get("path"):
        raise ValueError(f"{where}.path is required (a file path or glob)")
    columns = entry.get("columns", ["sentence"])
    entry["columns"] = [columns] if isinstance(columns, str) else list(columns)
    Check(int, positive=True)(f"{where}.max_sentences", entry.get("max_sentences"))
    entry["exclude"] = parse_exclude(entry.get("exclude"), where)
    teacher = entry.setdefault("teacher_column", None)
    if teacher is None and entry.get("filters"):
        raise ValueError(f"{where}.filters needs teacher_column (the filters are pair filters)")
    if teacher is not None:
        students = [column for column in entry["columns"] if column != teacher]
        if not isinstance(teacher, str) or not teacher or len(students) != 1:
            raise ValueError(
                f"{where}.teacher_column must be a column name and columns one other column (plus, optionally, "
                f"the teacher column), got teacher_column {teacher!r}, columns {entry['columns']!r}"
            )
        columns = {"sentence1": students[0], "sentence2": teacher}
        entry["pairs"] = {"path": entry["path"], "columns": columns, "exclude": entry["exclude"]}
        entry["pairs"]["filters"] = entry.get("filters")
        PairSource.parse(entry["pairs"], where=where)  # the pair source's own checks, errors naming this entry
    return entry


def distillation_sentences(
    sources: Iterable[str | Mapping[str, Any]],
    seed: int = 0,
    exclude: Iterable[str] = (),
    data_dir: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    max_words: int | None = None,
) -> list[tuple[str, list[str], list[str]]]:
    """``[(label, sentences, teacher_texts), ...]``, one per source entry (label = file stem or glob stem, for the
    cache; ``teacher_texts[i]`` is the text whose teacher vector ``sentences[i]`` learns: itself, or its
    ``teacher_column`` text); relative paths resolve in the data folder ``data_dir``
    (:func:`psp_st.io.data_dir.resolve_data_files`). ``cache_dir``: datasets' cache for the ``teacher_column``
    pairs (:func:`psp_st.data.load_training_pairs`); the training pairs' cache reuses their filter results.
    ``max_words``: drop sampled sentences of more than this many whitespace words (after sampling, so the kept
    sentences are a subset of the uncapped sample and reuse its cached teacher vectors; long sentences cost the
    teacher pass most per sentence)."""
    from psp_st.data.loaders import read_texts
    from psp_st.data.sources import load_training_pairs
    from psp_st.io.data_dir import resolve_data_files

    evaluation = {text_key(text) for text in exclude}
    excluded = set(exclude)
    out = []
    entries = [parse_source(source, f"recipe: distillation.sources[{n}]") for n, source in enumerate(sources)]
    for number, entry in enumerate(entries):
        texts: list[str] = []
        teacher_of: dict[str, str] = {}
        if entry["teacher_column"]:
            pairs = load_training_pairs(
                [entry["pairs"]], seed=seed, shared_sentence_groups=False, data_dir=data_dir, cache_dir=cache_dir
            )
            for student, english in zip(pairs["sentence1"], pairs["sentence2"], strict=True):
                teacher_of.setdefault(student, english)
            texts = list(teacher_of)
        else:
            for path in resolve_data_files(entry["path"], data_dir):
                for column in entry["columns"]:
                    stripped = (text.strip() for text in read_texts([path], [column], entry["exclude"]))
                    texts.extend(text for text in stripped if text)
        kept = candidates(texts, evaluation)
        stem = Path(entry["path"]).name.replace(".parquet", "").replace("*", "all")
        # sample first, then drop what an earlier entry chose: the sample stays nested across sizes (a larger
        # max_sentences only adds sentences), so a grown recipe reuses every cached teacher vector
        chosen = sample(kept, entry.get("max_sentences"), seed=zlib.crc32(f"{seed}:{stem}".encode()))
        chosen = [text for text in chosen if text not in excluded]
        if entry["teacher_column"] in entry["columns"]:  # each chosen pair's teacher side learns its own vector too
            chosen += candidates([teacher_of[text] for text in chosen], evaluation | set(map(text_key, excluded)))
        excluded.update(chosen)  # a later entry never repeats a chosen sentence, kept or not
        if max_words is not None:
            chosen = [text for text in chosen if len(text.split()) <= max_words]
        log = logger.info if chosen else logger.warning  # e.g. every sentence excluded, filtered or over max_words
        log("distillation source %s: %d sentences (%d candidates)", entry["path"], len(chosen), len(kept))
        out.append((f"{number:02d}-{stem}", chosen, [teacher_of.get(text, text) for text in chosen]))
    return out


def candidates(sentences: Iterable[str], exclude: set[str], max_words: int = 80) -> list[str]:
    """Unique sentences (first occurrence, up to case and punctuation: :func:`psp_st.data.filters.text_key`) of
    1 to ``max_words`` whitespace words whose key is not in ``exclude`` (keys of evaluation text)."""
    seen: set[str] = set()
    kept = []
    for text in sentences:
        key = text_key(text)
        if key and key not in seen and key not in exclude and len(text.split()) <= max_words:
            seen.add(key)
            kept.append(text)
    return kept


def sample(sentences: Iterable[str], limit: int | None, seed: int = 0) -> list[str]:
    """A seeded random subset of at most ``limit`` sentences, in their original order.

    Nested: for one seed, the subset of a smaller ``limit`` is part of the subset of a larger one (the first
    ``limit`` of one seeded permutation), so growing a sample reuses every cached teacher vector.
    """
    sentences = list(sentences)
    if limit is None or limit >= len(sentences):
        return sentences
    keep = np.sort(np.random.default_rng(seed).permutation(len(sentences))[:limit])
    return [sentences[i] for i in keep]

"""The unlabelled sentences a recipe distils the teacher on: a seeded nested sample per source file or glob.

Recipe form (``distillation.sources``; ``columns`` default to ``[sentence]``)::

    - {path: bitext/de-en.parquet, columns: [source], teacher_column: target, max_sentences: 3000,
       exclude: {corpus: flores200-devtest}, filters: {language: {sentence1: de, sentence2: en}}}

``teacher_column`` (Reimers & Gurevych 2020): the student text learns the teacher vector of the row's English
text (rows read as pairs, so ``exclude`` and ``filters`` work as in ``data.sources``).
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
from psp_st.data.sources import CARD_KEYS, PairSource, check_card_keys, parse_exclude

logger = logging.getLogger(__name__)

SOURCE_KEYS = ("path", "columns", "max_sentences", "exclude", "teacher_column", "filters", *CARD_KEYS)


def parse_source(
    entry: str | os.PathLike | Mapping[str, Any], where: str = "recipe: distillation.sources entry"
) -> dict[str, Any]:
    """A ``distillation.sources`` entry (a bare string is a path) as a dict of every :data:`SOURCE_KEYS`."""
    if isinstance(entry, os.PathLike):
        entry = os.fspath(entry)
    if not isinstance(entry, (str, Mapping)):
        raise TypeError(
            f"{where} must be a path or a mapping with a 'path' key, got {type(entry).__name__} {entry!r:.60}"
        )
    entry = {"path": entry} if isinstance(entry, str) else dict(entry)
    check_keys(where, entry, SOURCE_KEYS)
    if not entry.get("path"):
        raise ValueError(f"{where}.path is required (a file path or glob)")
    columns = entry.get("columns", ["sentence"])
    entry["columns"] = [columns] if isinstance(columns, str) else list(columns)
    Check(int, positive=True)(f"{where}.max_sentences", entry.get("max_sentences"))
    entry["exclude"] = parse_exclude(entry.get("exclude"), where)
    check_card_keys(entry, where)
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
        entry["pairs"] = dict(path=entry["path"], columns={"sentence1": students[0], "sentence2": teacher})
        entry["pairs"].update(exclude=entry["exclude"], filters=entry.get("filters"))
        PairSource.parse(entry["pairs"], where=where)  # the pair source's own checks, errors naming this entry
    return entry


def distillation_sentences(
    sources: str | os.PathLike | Mapping[str, Any] | Iterable[str | Mapping[str, Any]],
    seed: int = 0,
    exclude: Iterable[str] = (),
    data_dir: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
    max_words: int | None = None,
) -> list[tuple[str, list[str], list[str]]]:
    """``[(label, sentences, teacher_texts), ...]`` per source entry (``sentences[i]`` learns the teacher vector of
    ``teacher_texts[i]``); ``sources``: entries, or one path or entry; ``cache_dir`` caches the ``teacher_column``
    pairs; ``max_words`` drops longer sentences after sampling (the kept ones reuse the uncapped sample's cached
    teacher vectors)."""
    from psp_st.data.loaders import read_texts
    from psp_st.data.sources import load_training_pairs
    from psp_st.io.data_dir import resolve_data_files

    evaluation = {text_key(text) for text in exclude}
    excluded = set(exclude)
    out = []
    one = isinstance(sources, (str, os.PathLike, Mapping))  # one source, not its characters (or keys)
    listed: list[Any] = [sources] if one else list(sources)  # type: ignore[arg-type]
    entries = [parse_source(source, f"recipe: distillation.sources[{n}]") for n, source in enumerate(listed)]
    for number, entry in enumerate(entries):
        teacher_of: dict[str, str] = {}
        if entry["teacher_column"]:
            pairs = load_training_pairs(
                [entry["pairs"]], seed=seed, shared_sentence_groups=False, data_dir=data_dir, cache_dir=cache_dir
            )
            for student, english in zip(pairs["sentence1"], pairs["sentence2"], strict=True):
                teacher_of.setdefault(student, english)
            texts = list(teacher_of)
        else:  # empty texts have no key: candidates() skips them
            files = resolve_data_files(entry["path"], data_dir)
            texts = [text.strip() for text in read_texts(files, entry["columns"], entry["exclude"])]
        kept = candidates(texts, evaluation)
        stem = Path(entry["path"]).name.replace(".parquet", "").replace("*", "all")
        # sample first, then drop what an earlier entry chose: a grown recipe reuses every cached teacher vector
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
    """Unique sentences (by ``text_key``) of 1 to ``max_words`` words whose key is not in ``exclude``."""
    seen: set[str] = set()
    kept = []
    for text in sentences:
        key = text_key(text)
        if key and key not in seen and key not in exclude and len(text.split()) <= max_words:
            seen.add(key)
            kept.append(text)
    return kept


def sample(sentences: Iterable[str], limit: int | None, seed: int = 0) -> list[str]:
    """A seeded random subset of at most ``limit`` sentences, in their original order; nested (for one seed, a
    smaller ``limit``'s subset is part of a larger one's), so growing a sample reuses the cached teacher vectors."""
    sentences = list(sentences)
    if limit is None or limit >= len(sentences):
        return sentences
    keep = np.sort(np.random.default_rng(seed).permutation(len(sentences))[:limit])
    return [sentences[i] for i in keep]

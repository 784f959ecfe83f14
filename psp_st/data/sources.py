"""Training pairs from a recipe's ``data.sources``, with one false-negative group id per pair.

A source is a path/glob (``training_pairs/*.parquet``) or a mapping::

    {path: bitext/*.parquet,                                  # Parquet, TSV or JSONL; relative to the data folder
     columns: {sentence1: source, sentence2: target},         # output column -> file column
     exclude: {corpus: flores200-devtest},                    # drop rows whose column holds one of these values
     filters: {length: {max: 30}, trigram_overlap: 0.7},      # apply_filters' filters, on this source alone
     weight: 0.5, max_pairs: 20000,                           # subsample / repeat, then cap (seeded)
     license: CC BY 4.0, genre: support tickets}              # your own data's, for the model card only
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from psp_st.arguments import Check, check_int, check_keys, check_number
from psp_st.data.filters import ExcludeFilter
from psp_st.data.groups import group_keys, pair_groups
from psp_st.data.loaders import load_pairs, local_files
from psp_st.data.pipeline import FILTER_NAMES, apply_filters
from psp_st.data.validation import validate_pairs

logger = logging.getLogger(__name__)

#: Keys of a source entry that only the model card reads: the licence and genre of a file psp-st's table does not know.
CARD_KEYS = ("license", "genre")

#: Output columns a source may map (``columns``); ``lang`` is kept when present.
SOURCE_OUTPUTS = ("sentence1", "sentence2", "group_id", "lang")


@dataclass(frozen=True)
class PairSource:
    """One ``data.sources`` entry (see the module docstring)."""

    path: str
    max_pairs: int | None = None
    weight: float | None = None
    filters: dict[str, Any] = field(default_factory=dict)
    columns: dict[str, str] = field(default_factory=dict)
    exclude: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @classmethod
    def parse(
        cls, entry: str | os.PathLike | Mapping[str, Any], filters: Mapping[str, Any] | None = None, where: str = ""
    ) -> PairSource:
        """An entry checked, with the data-wide ``filters`` under its own; errors name ``where`` and the bad key."""
        where = where or "recipe: data.sources entry"
        if isinstance(entry, (str, os.PathLike)):
            entry = {"path": os.fspath(entry)}
        if not isinstance(entry, Mapping):
            raise ValueError(f"{where} must be a path or a mapping with 'path', got {entry!r}")
        check_keys(where, entry, ("path", "max_pairs", "weight", "filters", "columns", "exclude", *CARD_KEYS))
        path = entry.get("path")
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise ValueError(f"{where}.path is required (a file path or glob), got {path!r}")
        cap, weight = entry.get("max_pairs"), entry.get("weight")
        Check(int, positive=True)(f"{where}.max_pairs", cap)
        Check(float, positive=True)(f"{where}.weight", weight)
        columns = dict(entry.get("columns") or {})
        check_keys(f"{where}.columns", columns, SOURCE_OUTPUTS)
        exclude = parse_exclude(entry.get("exclude"), where)
        check_keys("recipe: data.filters", filters or {}, FILTER_NAMES)
        check_keys(f"{where}.filters", entry.get("filters") or {}, FILTER_NAMES)
        merged = {**(filters or {}), **(entry.get("filters") or {})}
        check_card_keys(entry, where)
        return cls(os.fspath(path), cap, None if weight is None else float(weight), merged, columns, exclude)


def check_card_keys(entry: Mapping[str, Any], where: str) -> None:
    """A source's :data:`CARD_KEYS` are non-empty text or absent; the card reads them from the recorded recipe
    (:func:`psp_st.data.licenses.source_license`), so loading never carries them."""
    for key in CARD_KEYS:
        value = entry.get(key)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise ValueError(f"{where}.{key} must be a non-empty text (e.g. 'CC BY 4.0'), got {value!r}")


def parse_exclude(value: Mapping[str, Any] | None, where: str) -> dict[str, tuple[str, ...]]:
    """An ``exclude: {column: value or [values]}`` block as ``{column: (values, ...)}``; errors name ``where``."""
    exclude: dict[str, tuple[str, ...]] = {}
    for column, values in dict(value or {}).items():
        values = [values] if isinstance(values, str) else values
        if not isinstance(values, Sequence) or not all(isinstance(text, str) for text in values):
            raise ValueError(f"{where}.exclude.{column} must be a value or a list of values, got {values!r}")
        exclude[str(column)] = tuple(values)
    return exclude


def sample_rows(n: int, weight: float | None, max_pairs: int | None, seed: int | Sequence[int]) -> np.ndarray:
    """Sorted row indices of one source after its ``weight`` w (``round(w * n)`` rows: every row ``floor(w)`` times
    plus a sample of the rest), then its cap (a sample); ``seed``: any ``numpy.random.default_rng`` seed."""
    n = check_int("n", n, minimum=0)
    if weight is not None:
        weight = check_number("weight", weight, low=0.0)
    if max_pairs is not None:
        max_pairs = check_int("max_pairs", max_pairs, minimum=0)
    rng = np.random.default_rng(seed)
    rows = np.arange(n)
    if weight is not None and weight != 1:
        target = int(round(weight * n))
        whole, rest = divmod(target, n) if n else (0, 0)
        rows = np.concatenate([np.tile(rows, whole), np.sort(rng.choice(n, size=rest, replace=False))])
    if max_pairs is not None and len(rows) > max_pairs:
        rows = rows[np.sort(rng.choice(len(rows), size=max_pairs, replace=False))]
    return np.sort(rows, kind="stable")


#: Temporary column: the group key of each pair (its file's ``group_id`` value, unique across files).
_KEY = "__group_key"


def _load_file(path: str, source: PairSource, key_offset: int, cache_dir: str | os.PathLike | None) -> tuple[Any, int]:
    """One file of a source: mapped columns, excluded rows dropped, group keys made unique across files."""
    pairs = load_pairs(path, columns=source.columns, keep_columns=tuple(source.exclude), cache_dir=cache_dir)
    for column, values in source.exclude.items():
        before = len(pairs)
        pairs = ExcludeFilter(column, frozenset(values)).apply(pairs)
        logger.info("%s: exclude %s %s dropped %d of %d pairs", path, column, list(values), before - len(pairs), before)
    has_groups = "group_id" in pairs.column_names
    keys = group_keys(pairs["group_id"][:]) if has_groups else np.full(len(pairs), -1, dtype=np.int64)
    used = int(keys.max(initial=-1)) + 1
    keys[keys >= 0] += key_offset
    kept = [name for name in ("sentence1", "sentence2", "lang") if name in pairs.column_names]
    return pairs.select_columns(kept).add_column(_KEY, keys), key_offset + used


def load_training_pairs(
    sources: str | os.PathLike | Sequence[str | os.PathLike | Mapping[str, Any]],
    *,
    seed: int = 0,
    max_pairs: int | None = None,
    shared_sentence_groups: bool = True,
    filters: Mapping[str, Any] | None = None,
    counts: dict[str, int] | None = None,
    data_dir: str | os.PathLike | None = None,
    cache_dir: str | os.PathLike | None = None,
):
    """A recipe's training pairs: ``sentence1, sentence2, group_id`` (int64) and ``lang`` when a source has it.

    Per source (its files together): columns mapped, excluded and bad rows dropped, ``filters`` applied (the
    data-wide ones under the source's own), :func:`sample_rows`; then ``max_pairs`` caps the whole set. ``counts``
    (if given) receives the pairs kept per source path."""
    if isinstance(sources, (str, os.PathLike)):
        sources = [sources]
    if not sources:
        raise ValueError("sources is empty: give at least one file, folder, glob or source entry")
    if max_pairs is not None:
        max_pairs = check_int("max_pairs", max_pairs)
    parts, paths, offset = [], [], 0  # paths: the source path of each part
    matched: dict[str, int] = {}  # file -> the first entry that matched it
    for number, entry in enumerate(sources):
        source = PairSource.parse(entry, filters, where=f"recipe: data.sources[{number}]")
        files = local_files(source.path, data_dir)
        if files is None:
            raise FileNotFoundError(f"recipe: data.sources[{number}]: no local file matches {source.path!r}")
        loaded = []
        for path in files:
            first = matched.setdefault(os.path.realpath(path), number)
            if first != number:
                logger.warning(
                    "%s is matched by data.sources[%d] and data.sources[%d]: its pairs are trained twice "
                    "(to up-weight a source, set its weight)",
                    path,
                    first,
                    number,
                )
            pairs, offset = _load_file(path, source, offset, cache_dir)
            loaded.append(pairs)
        pairs = _concatenate(loaded)
        pairs, report = validate_pairs(pairs, score_column=None, on_error="skip")
        if report.skipped:
            logger.warning("%s: dropped %d training pair(s) with a missing or empty side", source.path, report.skipped)
        if source.filters:
            pairs, filtered = apply_filters(pairs, source.filters)
            logger.info("%s: %s", source.path, filtered)
        available = len(pairs)
        rows = sample_rows(available, source.weight, source.max_pairs, seed=(seed, number))
        if len(rows) != len(pairs) or (len(rows) and rows[-1] != len(rows) - 1):
            pairs = pairs.select(rows)
        if not len(rows):
            logger.warning(
                "recipe: data.sources[%d] (%s) gives no training pair after its filters and weight (%d pair(s) "
                "before the weight): check its filters, or raise its weight",
                number,
                source.path,
                available,
            )
        parts.append(pairs)
        paths.append(source.path)
    sizes = np.array([len(part) for part in parts])
    pairs = _concatenate(parts)
    if max_pairs is not None and len(pairs) > max_pairs:
        keep = np.sort(np.random.default_rng(seed).choice(len(pairs), size=max_pairs, replace=False))
        pairs = pairs.select(keep)
        sizes = np.bincount(np.searchsorted(np.cumsum(sizes), keep, side="right"), minlength=len(parts))
    if counts is not None:  # pairs per source entry, after the global max_pairs too
        for path, size in zip(paths, sizes.tolist(), strict=True):
            counts[path] = counts.get(path, 0) + size
    table = pairs.with_format("arrow")[:]
    keys = table.column(_KEY).to_numpy()
    groups = pair_groups(table.column("sentence1"), table.column("sentence2"), keys, shared_sentence_groups)
    pairs = pairs.remove_columns(_KEY).flatten_indices().add_column("group_id", groups)
    logger.info("training pairs: %d from %d source(s), %d groups", len(pairs), len(parts), len(np.unique(groups)))
    return pairs


def _concatenate(parts: list[Any]) -> Any:
    """Concatenate datasets whose text columns may be ``string`` or ``large_string`` and may lack ``lang``."""
    from datasets import Value, concatenate_datasets

    with_lang = any("lang" in part.column_names for part in parts)
    same: list[Any] = []
    for part in [part for part in parts if len(part)] or parts[:1]:  # an empty selection takes no added column
        if with_lang and "lang" not in part.column_names:
            part = part.add_column("lang", [None] * len(part), feature=Value("string"))
        for name in ("sentence1", "sentence2", "lang"):
            if name in part.column_names and getattr(part.features[name], "dtype", None) == "string":
                part = part.cast_column(name, Value("large_string"))
        same.append(part)
    return same[0] if len(same) == 1 else concatenate_datasets(same)


#: Key of the pairs without a language (no ``lang`` value, e.g. English paraphrase pairs next to bitext).
NO_LANGUAGE = "-"


def pairs_per_language(dataset) -> dict[str, dict[str, int]]:
    """``{lang: {"pairs": pairs per epoch, "distinct": distinct pairs}}`` of a training set with a ``lang``
    column (missing values under :data:`NO_LANGUAGE`); recipe weights repeat pairs, so the two differ."""
    frame = dataset.select_columns(["sentence1", "sentence2", "lang"]).to_pandas()
    frame["lang"] = frame["lang"].fillna(NO_LANGUAGE)
    pairs = frame.groupby("lang").size()
    distinct = frame.drop_duplicates().groupby("lang").size()
    return {str(lang): {"pairs": int(pairs[lang]), "distinct": int(distinct[lang])} for lang in sorted(pairs.index)}

"""Teacher vectors of sentences, cached on disk as HF ``datasets`` Arrow shards keyed by teacher and sentence text.

Not ``Dataset.map``'s cache: keyed by the whole input, it would encode a sample grown by one sentence again. A
sentence's vector is the one of the pass that first encoded it (batch padding can change the last float bits).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from psp_st.arguments import check_int
from psp_st.io.atomic import atomic_directory, atomic_write_json
from psp_st.io.progress import progress_bar, progress_bars_disabled
from psp_st.tokenization.text_checks import refuse_single_text

if TYPE_CHECKING:
    import datasets

logger = logging.getLogger(__name__)

META_FILE = "teacher_cache.json"
#: Version of the cache folder layout (checked on every read).
FORMAT_VERSION = 2


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "teacher"


def cache_folder(cache_dir: str | os.PathLike, teacher_name: str) -> Path:
    """The folder holding every cached vector of one teacher."""
    return Path(cache_dir) / _slug(Path(str(teacher_name)).name)


def _shard_name(number: int, sentences: Sequence[str]) -> str:
    """``shard-<number>-<content hash>``: two processes filling one cache never write the same folder."""
    digest = hashlib.sha1()
    for text in sentences:
        digest.update(text.encode("utf-8") + b"\x00")
    return f"shard-{number:05d}-{digest.hexdigest()[:12]}"


def _check_meta(folder: Path, teacher_name: str) -> None:
    """Write the cache's metadata on first use; refuse a folder of another layout version."""
    meta_path = folder / META_FILE
    if meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise ValueError(f"teacher cache {folder}: unreadable {META_FILE} ({error}); delete the folder") from error
        if not isinstance(meta, dict):
            raise ValueError(f"teacher cache {folder}: {META_FILE} is not a JSON object; delete the folder")
        version = meta.get("format_version")
        if version != FORMAT_VERSION:
            newer = isinstance(version, int) and not isinstance(version, bool) and version > FORMAT_VERSION
            remedy = (
                "it was written by a newer psp-st: upgrade psp-st (pip install -U psp-st), or give this one another "
                "distillation.cache_dir"
                if newer
                else "delete the folder (it is only a cache) and run again"
            )
            raise ValueError(
                f"teacher cache {folder} has format_version {version!r}, this psp-st reads {FORMAT_VERSION}; {remedy}"
            )
        recorded = meta.get("teacher")
        if recorded != str(teacher_name) and _model_path(recorded) != _model_path(teacher_name):
            raise ValueError(
                f"teacher cache {folder} holds the vectors of teacher {recorded!r}, not {str(teacher_name)!r} (the "
                "folder is named after the last part of the name); give this teacher another distillation.cache_dir"
            )
        return
    folder.mkdir(parents=True, exist_ok=True)
    meta = {"format_version": FORMAT_VERSION, "teacher": str(teacher_name), "key": "sentence text"}
    atomic_write_json(meta_path, meta)


def _model_path(name: Any) -> str:
    """Where a teacher name points (e.g. ``all-MiniLM-L6-v2`` with or without its org)."""
    from psp_st.io.model_names import resolve_model_name

    return os.path.realpath(resolve_model_name(str(name)))


def _read_shards(folder: Path) -> tuple[list[Any], dict[str, int]]:
    """The complete shards of ``folder`` (memory-mapped) and each cached sentence's row in their concatenation."""
    from datasets import load_from_disk

    shards: list[Any] = []
    row_of: dict[str, int] = {}
    offset = 0
    for path in sorted(path for path in folder.glob("shard-*") if path.is_dir() and not path.name.endswith(".tmp")):
        try:
            shards.append(load_from_disk(str(path)))
        except Exception as error:  # a shard is only ever renamed into place complete: this is damage
            raise ValueError(f"teacher cache shard {path} is unreadable ({error}); delete it and run again") from error
        for row, text in enumerate(shards[-1]["sentence"][:]):  # [:]: one Arrow read, not a Python call per row
            row_of.setdefault(text, offset + row)
        offset += len(shards[-1])
    return shards, row_of


def _check_same_teacher(folder: Path, teacher_name: str, teacher: Any, shard: Any, batch_size: int) -> None:
    """Refuse to add to a cache whose first cached vector ``teacher`` no longer gives (another model or revision,
    or other settings, under the same name): the run would train on two teachers' vectors."""
    text = shard["sentence"][0]
    cached = np.asarray(shard.with_format("numpy")["embedding"][0], dtype=np.float32)
    fresh = np.asarray(
        teacher.encode([text], batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False), dtype=np.float32
    ).reshape(-1)
    # batch padding moves the last float bits only; another model moves every value
    if fresh.shape != cached.shape:
        why = f"{cached.shape[0]} dimensions cached, {fresh.shape[0]} now"
    elif not np.allclose(fresh, cached, rtol=1e-3, atol=1e-3 * np.abs(cached).max()):
        why = f"values differ by up to {np.abs(fresh - cached).max():.3g}"
    else:
        return
    raise ValueError(
        f"teacher cache {folder} holds vectors that teacher {teacher_name!r} no longer gives (for {text!r:.60}: "
        f"{why}): the name now loads another model, revision or setting; delete the folder (it is only a cache), "
        "or give this teacher another distillation.cache_dir"
    )


def teacher_vectors(
    sentences: Sequence[str],
    teacher_name: str,
    cache_dir: str | os.PathLike,
    label: str = "sentences",
    teacher: Any | None = None,
    shard_size: int = 4096,
    batch_size: int = 32,
    show_progress_bar: bool = True,
) -> datasets.Dataset:
    """Teacher vectors of ``sentences`` as a memory-mapped ``Dataset`` (``sentence``, ``embedding`` float32; row ``i``
    is ``sentences[i]``); the teacher (default: :func:`psp_st.modules.teacher_init.load_teacher`; else anything with
    ST's ``encode(texts, batch_size=, convert_to_numpy=True, show_progress_bar=)``) is loaded only when a sentence
    is not cached yet (and must then still give the cached vectors: C13-1); ``label`` names the sentences in logs, ``shard_size`` is the unit of resumption."""
    from datasets import Dataset, concatenate_datasets

    check_int("shard_size", shard_size)
    refuse_single_text(sentences)
    sentences = list(sentences)
    bad = [i for i, text in enumerate(sentences) if not isinstance(text, str)]
    if bad:
        raise TypeError(f"teacher_vectors: sentence {bad[0]} is {type(sentences[bad[0]]).__name__}, expected str")
    folder = cache_folder(cache_dir, teacher_name)
    _check_meta(folder, teacher_name)
    shards, row_of = _read_shards(folder)
    missing = list(dict.fromkeys(text for text in sentences if text not in row_of))
    if missing:
        if teacher is None:
            from psp_st.modules.teacher_init import load_teacher

            teacher = load_teacher(teacher_name)
        if shards:  # new vectors join the cached ones: only if this teacher still gives those
            _check_same_teacher(folder, teacher_name, teacher, shards[0], batch_size)
        logger.info("teacher %s: encoding %d new sentence(s) of %s into %s", teacher_name, len(missing), label, folder)
        progress = progress_bar(total=len(missing), desc=f"teacher {label}", unit="sent", disable=not show_progress_bar)
        for number, start in enumerate(range(0, len(missing), shard_size), start=len(shards)):
            chunk = missing[start : start + shard_size]
            vectors = np.asarray(
                teacher.encode(chunk, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False),
                dtype=np.float32,
            )
            if vectors.ndim != 2 or vectors.shape[0] != len(chunk) or not np.isfinite(vectors).all():
                raise ValueError(
                    f"teacher {teacher_name} returned {vectors.shape} (non-finite values: "
                    f"{not np.isfinite(vectors).all()}) for {len(chunk)} sentences"
                )
            shard = Dataset.from_dict({"sentence": chunk, "embedding": list(vectors)})
            with atomic_directory(folder / _shard_name(number, chunk)) as temporary, progress_bars_disabled():
                shard.save_to_disk(str(temporary))
            progress.update(len(chunk))
        progress.close()
        shards, row_of = _read_shards(folder)
    if not sentences:
        return Dataset.from_dict({"sentence": [], "embedding": []})
    return concatenate_datasets(shards).select([row_of[text] for text in sentences])

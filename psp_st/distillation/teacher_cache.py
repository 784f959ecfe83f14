"""Teacher featurisation as a cached, resumable step: sentences -> teacher vectors, as HF ``datasets`` Arrow on disk.

A teacher pass is the longest step of a distilled build (all-MiniLM-L6-v2 encodes ~250 sentences/s on two CPU
cores), so it is done once per (teacher, sentence list) and memory-mapped afterwards. The cache folder is
``<cache_dir>/<teacher slug>/<label>-<key>`` where ``key`` hashes the teacher name and the exact sentence list
(so a different corpus, sample size or seed is a different entry, and a changed file is never served stale).
Vectors are written in shards of ``shard_size`` sentences (``shard-00000/`` ...), each saved to a temporary
folder and renamed into place when complete: an interrupted pass resumes at the first missing shard, and a
finished entry never loads the teacher at all.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from psp_st.io.atomic import atomic_directory, atomic_write_bytes

if TYPE_CHECKING:
    import datasets

logger = logging.getLogger(__name__)

META_FILE = "teacher_cache.json"


def cache_key(teacher_name: str, sentences: Sequence[str]) -> str:
    """16 hex digits identifying ``(teacher, sentence list)``; order and content both count."""
    digest = hashlib.sha1(f"{teacher_name}\x00{len(sentences)}\x00".encode())
    for text in sentences:
        digest.update(text.encode("utf-8"))
        digest.update(b"\x00")
    return digest.hexdigest()[:16]


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("_") or "teacher"


def cache_path(cache_dir: str | os.PathLike, teacher_name: str, label: str, sentences: Sequence[str]) -> Path:
    """The folder of one cache entry (see the module docstring)."""
    return Path(cache_dir) / _slug(Path(teacher_name).name) / f"{_slug(label)}-{cache_key(teacher_name, sentences)}"


def teacher_vectors(
    sentences: Sequence[str],
    teacher_name: str,
    cache_dir: str | os.PathLike,
    label: str = "sentences",
    teacher: Any | None = None,
    load: Callable[[str], Any] | None = None,
    shard_size: int = 4096,
    batch_size: int = 64,
    show_progress_bar: bool = True,
) -> datasets.Dataset:
    """Teacher vectors of ``sentences`` as a memory-mapped ``Dataset`` (``sentence``, ``embedding`` float32).

    Args:
        sentences: the texts, in order (row ``i`` of the result is ``sentences[i]``).
        teacher_name: the teacher's name (part of the cache key), e.g. ``"all-MiniLM-L6-v2"``.
        cache_dir: root folder of the cache.
        label: readable prefix of the entry's folder name (e.g. the corpus file's stem).
        teacher: an encoder with ``encode(list[str], batch_size=..., convert_to_numpy=True, ...)``; loaded with
            ``load(teacher_name)`` (default :func:`psp_st.mining.teacher.load_teacher`) only when a shard is missing.
        shard_size: sentences per shard (the unit of resumption).
        batch_size: teacher batch size.
        show_progress_bar: a tqdm bar over sentences (resumed shards count as done).
    """
    from datasets import Dataset, concatenate_datasets, load_from_disk

    if shard_size < 1:
        raise ValueError(f"shard_size must be >= 1, got {shard_size}")
    sentences = list(sentences)
    bad = [i for i, text in enumerate(sentences) if not isinstance(text, str)]
    if bad:
        raise TypeError(f"teacher_vectors: sentence {bad[0]} is {type(sentences[bad[0]]).__name__}, expected str")
    folder = cache_path(cache_dir, teacher_name, label, sentences)
    folder.mkdir(parents=True, exist_ok=True)
    meta = {
        "teacher": teacher_name,
        "label": label,
        "sentences": len(sentences),
        "shard_size": shard_size,
        "key": folder.name.rsplit("-", 1)[-1],
    }
    meta_path = folder / META_FILE
    if meta_path.is_file():
        previous = json.loads(meta_path.read_text())
        if previous.get("shard_size") != shard_size:
            raise ValueError(
                f"teacher cache {folder} was written with shard_size={previous.get('shard_size')}, "
                f"asked for {shard_size}; use the same shard size or delete the folder"
            )
    else:
        atomic_write_bytes(meta_path, json.dumps(meta, indent=2).encode())

    starts = list(range(0, len(sentences), shard_size))
    names = [f"shard-{number:05d}" for number in range(len(starts))]
    missing = [number for number, name in enumerate(names) if not (folder / name).is_dir()]
    progress = None
    if missing:
        if teacher is None:
            if load is None:
                from psp_st.mining.teacher import load_teacher

                load = load_teacher
            teacher = load(teacher_name)
        logger.info(
            "teacher %s: encoding %d of %d shard(s) of %s into %s",
            teacher_name,
            len(missing),
            len(names),
            label,
            folder,
        )
        if show_progress_bar:
            from tqdm.auto import tqdm

            done = sum(min(shard_size, len(sentences) - starts[n]) for n in range(len(names)) if n not in missing)
            progress = tqdm(total=len(sentences), initial=done, desc=f"teacher {label}", unit="sent")
        for number in missing:
            chunk = sentences[starts[number] : starts[number] + shard_size]
            vectors = np.asarray(
                teacher.encode(chunk, batch_size=batch_size, convert_to_numpy=True, show_progress_bar=False),
                dtype=np.float32,
            )
            if vectors.shape[0] != len(chunk) or not np.isfinite(vectors).all():
                raise ValueError(
                    f"teacher {teacher_name} returned {vectors.shape} (non-finite values: "
                    f"{not np.isfinite(vectors).all()}) for {len(chunk)} sentences"
                )
            shard = Dataset.from_dict({"sentence": chunk, "embedding": list(vectors)})
            with atomic_directory(folder / names[number]) as temporary:
                shard.save_to_disk(str(temporary))
            if progress is not None:
                progress.update(len(chunk))
    if progress is not None:
        progress.close()
    if not names:
        return Dataset.from_dict({"sentence": [], "embedding": []})
    return concatenate_datasets([load_from_disk(str(folder / name)) for name in names])

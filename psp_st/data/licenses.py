"""Licence and genre of every shared training file (by file stem) for model cards, from the package data table."""

from __future__ import annotations

import fnmatch
import posixpath
import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

#: Terms of a licence text that limit the use of a model trained on it (``restrictions``), by the pattern finding them.
RESTRICTIONS: dict[str, str] = {
    "non-commercial": r"non-?commercial|\bBY-NC\b|\bNC\b",
    "research use": r"(?i:research)",
    "no licence stated": r"(?i:no licen[cs]e stated|not stated)",
    "ShareAlike": r"\bBY-(?:NC-)?SA\b|(?i:share-?alike)",
}

#: A file the table does not know, whose recipe source states no ``license``/``genre`` (see :func:`source_license`).
UNKNOWN = ("?", "not stated (a recipe source's `license` key states it)")


@cache
def data_licenses() -> dict[str, tuple[str, str]]:
    """file stem -> ``(genre, licence as stated by the source)``."""
    import yaml

    text = (resources.files("psp_st") / "resources" / "data_licenses.yaml").read_text(encoding="utf-8")
    return {stem: (genre, licence) for stem, (genre, licence) in yaml.safe_load(text).items()}


def data_license(path: str) -> tuple[str, str]:
    """``(genre, licence)`` of a shared data file (any path or glob whose stem is in :func:`data_licenses`)."""
    return data_licenses().get(Path(str(path)).name.removesuffix(".parquet"), UNKNOWN)


def source_license(path: str, sources: list[Any]) -> tuple[str, str]:
    """``(genre, licence)`` of a file a recipe trained on: the shared table's, else the ``genre``/``license`` keys of
    the first of the recipe's ``sources`` whose path or glob matches it (or its end: a relative path resolved elsewhere)."""
    known = data_license(path)
    if known != UNKNOWN:
        return known
    for source in sources:
        if not isinstance(source, dict) or not (source.get("license") or source.get("genre")):
            continue
        if source_matches(path, str(source.get("path") or "")):
            return source.get("genre") or UNKNOWN[0], source.get("license") or UNKNOWN[1]
    return UNKNOWN


def source_matches(path: str, source: str) -> bool:
    """``path`` (a file a recipe trained on, as the build record names it) is one of the files of the recipe source
    ``source``: its glob, the file itself (even named like a glob, ``pairs [v2].parquet``) or a file directly in the
    folder it names (as :func:`psp_st.io.data_dir.resolve_data_files` reads them), also at the end of ``path`` (a
    relative source resolved elsewhere)."""
    source = source.rstrip("/")
    if not source:
        return False
    folder = posixpath.dirname(path)
    for name in (path, folder):
        if name == source or name.endswith(f"/{source}"):
            return True
    return fnmatch.fnmatch(path, source) or fnmatch.fnmatch(path, f"*/{source}")


def restrictions(licence: str) -> list[str]:
    """The terms of ``licence`` (a table or recipe licence text) that limit a trained model's use: keys of
    :data:`RESTRICTIONS` (``[]`` for a permissive one, e.g. ``CC BY 4.0`` or ``public domain``)."""
    return [term for term, pattern in RESTRICTIONS.items() if re.search(pattern, licence, re.IGNORECASE)]

"""Licence and genre of every shared training file (by file stem) for model cards, from the package data table."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

UNKNOWN = ("?", "not in psp_st.data.licenses: check its source")


@cache
def data_licenses() -> dict[str, tuple[str, str]]:
    """file stem -> ``(genre, licence as stated by the source)``."""
    import yaml

    text = (resources.files("psp_st") / "resources" / "data_licenses.yaml").read_text(encoding="utf-8")
    return {stem: (genre, licence) for stem, (genre, licence) in yaml.safe_load(text).items()}


def data_license(path: str) -> tuple[str, str]:
    """``(genre, licence)`` of a shared data file (any path or glob whose stem is in :func:`data_licenses`)."""
    return data_licenses().get(Path(str(path)).name.removesuffix(".parquet"), UNKNOWN)

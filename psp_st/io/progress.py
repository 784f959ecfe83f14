"""One switch for every progress bar a psp-st process shows: psp-st's own and its libraries' (each decides by its
own rule: an environment variable, a logger level or a switch; :func:`progress_bars_disabled` sets all)."""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from typing import Any

_enabled = True

#: Environment variables that turn bars off: the Hugging Face libraries' (read when they are imported) and tqdm's
#: default for bars created without an explicit ``disable`` (e.g. Sentence-Transformers' "Computing widget examples").
HF_ENV = ("HF_HUB_DISABLE_PROGRESS_BARS", "HF_DATASETS_DISABLE_PROGRESS_BARS", "TQDM_DISABLE")

#: Loggers whose level decides a library's bar when it is not asked explicitly, and the level that hides it (they
#: log nothing else a user needs at INFO).
LOGGER_LEVELS = {
    "sentence_transformers.sentence_transformer.model": logging.WARNING,  # encode's "Batches" bar
    "transformers.training_args": logging.ERROR,  # the Trainer's bar (disable_tqdm=None)
}


def _set_env(name: str, value: str | None) -> None:
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


@contextlib.contextmanager
def progress_bars_disabled() -> Iterator[None]:
    """Inside the block, every progress bar of this process is off (the command line's ``--no-progress``);
    the switches, variables and logger levels are restored afterwards."""
    global _enabled
    with contextlib.ExitStack() as restore:
        restore.callback(globals().__setitem__, "_enabled", _enabled)
        _enabled = False
        for name in HF_ENV:
            restore.callback(_set_env, name, os.environ.get(name))
            os.environ[name] = "1"
        for name, level in LOGGER_LEVELS.items():
            logger = logging.getLogger(name)
            restore.callback(logger.setLevel, logger.level)
            logger.setLevel(max(level, logger.getEffectiveLevel()))
        # libraries imported already read their variable at import: flip their switches too
        if "huggingface_hub" in sys.modules:
            from huggingface_hub.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars

            if not are_progress_bars_disabled():
                disable_progress_bars()
                restore.callback(enable_progress_bars)
        if "transformers" in sys.modules:
            from transformers.utils import logging as hf_logging

            if hf_logging.is_progress_bar_enabled():
                hf_logging.disable_progress_bar()
                restore.callback(hf_logging.enable_progress_bar)
        if "datasets" in sys.modules:
            import datasets

            if datasets.is_progress_bar_enabled():
                datasets.disable_progress_bars()
                restore.callback(datasets.enable_progress_bars)
        yield


def progress_bar(**options: Any):
    """A ``tqdm`` bar (``options`` as for tqdm) that is hidden when progress bars are disabled."""
    from tqdm.auto import tqdm

    return tqdm(**{**options, "disable": options.get("disable", False) or not _enabled})

"""One home per concept: a value several layers need is defined once and imported, never written again."""

from __future__ import annotations

import dataclasses

from psp_st.modules.folder_format import PSP_WEIGHTS_DTYPES


def _build_option(flag: str):
    from psp_st.cli import build_parser

    commands = next(action for action in build_parser()._actions if action.dest == "command")
    return next(action for action in commands.choices["build"]._actions if flag in action.option_strings)


def test_release_dtypes_are_the_modules_weight_dtypes():
    """A6-1: the release dtypes were written four times (module, release writer, recipe schema, ``build --dtype``)."""
    from psp_st.hub import release
    from psp_st.training.schema import ReleaseSection

    dtype = next(f for f in dataclasses.fields(ReleaseSection) if f.name == "dtype")
    assert dtype.metadata["check"].choices is PSP_WEIGHTS_DTYPES
    assert _build_option("--dtype").choices is PSP_WEIGHTS_DTYPES
    assert not hasattr(release, "DTYPES")


def test_a_psp_config_has_the_keys_its_checker_takes():
    """A6-2: ``PSPEmbedding.config_keys`` and ``check_psp_config``'s known keys were two lists of the same five keys
    (a key added to one only: every saved model refused on loading, or a setting silently not saved)."""
    from psp_st.modules.folder_format import PSP_CONFIG_KEYS
    from psp_st.modules.psp import PSPEmbedding

    assert PSPEmbedding.config_keys == list(PSP_CONFIG_KEYS)


def test_the_engine_reads_the_files_the_module_writes():
    """A6-3: the engine wrote its own copies of the PSPEmbedding file names and weight key (the module's in base.py
    and psp.py): one renamed, and the engine would refuse every saved folder as "not a PSPEmbedding folder"."""
    from psp_st.inference import engine
    from psp_st.modules import folder_format
    from psp_st.modules.psp import PSPEmbedding

    assert PSPEmbedding.config_file_name is folder_format.CONFIG_FILE is engine.CONFIG_FILE
    assert PSPEmbedding.weights_file_name is folder_format.WEIGHTS_FILE is engine.WEIGHTS_FILE
    assert engine.PSP_WEIGHT_KEY is folder_format.PSP_WEIGHT_KEY

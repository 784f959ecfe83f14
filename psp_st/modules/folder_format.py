"""The on-disk format version of psp-st model folders and the error for bad folders (torch-free, so the
inference engine can check folders without importing torch)."""

from __future__ import annotations

#: Version of the on-disk layout written by psp-st modules; bumped on incompatible changes.
FORMAT_VERSION = 1


class ModelFolderError(ValueError):
    """A model folder is incomplete, corrupt, or was written by an incompatible psp-st version."""

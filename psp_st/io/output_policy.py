"""The one overwrite policy every command that writes an output follows (build, train, tokenizer, embed, score, data,
mine, eval; the Python exports, with ``overwrite=True`` for ``--overwrite``).

* An output that already exists is refused unless the user passed ``--overwrite`` (an output folder counts as
  existing when it is not empty). A folder that ``ours`` recognises (``psp-st build``'s own release folder of the
  same name) may be rebuilt without the flag, so a release job can simply be re-run.
* An output that is one of the inputs, contains one, is an existing file inside an input folder (a model's weights)
  or anything inside a folder read whole (``sealed``: a model, a folder of input shards, where a new file changes the
  model's fingerprint or is read as input next time), or is the same file under another name (symlink, ``..``) is
  always refused, ``--overwrite`` or not: writing it would destroy or change the input.
* A folder given where a file is expected (or a file where a folder is) is refused with a message saying so.

Writers never delete files they did not write themselves (see :func:`psp_st.io.atomic.atomic_directory`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path

#: Help text of every command's ``--overwrite`` flag.
OVERWRITE_HELP = "replace an existing output (never one of the inputs; files psp-st did not write are left alone)"


class OutputExistsError(FileExistsError):
    """The output exists and ``--overwrite`` was not given, or the output is one of the inputs."""


def _same_or_inside(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def check_output(
    path: str | os.PathLike,
    inputs: Iterable[str | os.PathLike | None] = (),
    overwrite: bool = False,
    folder: bool = False,
    ours: Callable[[Path], bool] | None = None,
    option: str = "--output",
    flag: str = "--overwrite",
    sealed: Iterable[str | os.PathLike | None] = (),
) -> Path:
    """Apply the overwrite policy to ``path`` before any work starts; return it as a ``Path``.

    Args:
        path: the output file (or folder, with ``folder=True``).
        inputs: files or folders the command reads (``None`` entries are ignored).
        overwrite: the user passed ``--overwrite``.
        folder: the output is a folder.
        ours: for a folder output, says whether an existing non-empty folder is psp-st's own output of the same
            job (then it may be replaced without ``--overwrite``).
        option: the option name used in messages.
        flag: how the caller says "overwrite" (a Python API: ``overwrite=True``), used in messages.
        sealed: inputs read as whole folders (a model, a folder of shards): no output may lie inside them.

    Raises:
        OutputExistsError: the output exists (and may not be replaced) or is one of the inputs.
        IsADirectoryError / NotADirectoryError: a folder where a file is expected, or the reverse.
    """
    path = Path(path)
    target = path.resolve()
    sealed = list(sealed)
    for source in [*inputs, *sealed]:
        if source is None:
            continue
        source_path = Path(source).resolve()
        exists = path.exists() and not folder  # an existing file inside an input folder (e.g. a model's weights)
        if (
            _same_or_inside(source_path, target)
            or ((exists or (source in sealed and source_path.is_dir())) and _same_or_inside(target, source_path))
            or (exists and Path(source).exists() and os.path.samefile(path, source))
        ):
            raise OutputExistsError(
                f"{option} {path} is the input {source}, contains it or lies inside it: writing it would destroy "
                "or change the input; choose another output path"
            )
    if not path.exists() and not path.is_symlink():
        parent = next((p for p in path.parents if p.exists()), None)
        if parent is not None and not parent.is_dir():
            raise NotADirectoryError(f"{option} {path}: {parent} is a file, not a folder; choose another path")
        return path
    if folder:
        if not path.is_dir():
            raise NotADirectoryError(f"{option} {path} exists and is not a folder: give a folder path")
        if overwrite or not any(path.iterdir()) or (ours is not None and ours(path)):
            return path
        raise OutputExistsError(
            f"{option} {path} is a folder that is not empty: pass {flag} to write into it "
            "(files psp-st does not write there are kept), or choose a new folder"
        )
    if path.is_dir():
        raise IsADirectoryError(f"{option} {path} is a folder: give a file path")
    if overwrite:
        return path
    raise OutputExistsError(f"{option} {path} already exists: pass {flag} to replace it, or choose a new path")

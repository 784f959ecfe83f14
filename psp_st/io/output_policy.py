"""The one overwrite policy (:func:`check_output`) every command and Python export that writes an output follows;
writers never delete files they did not write themselves (:func:`psp_st.io.atomic.atomic_directory`)."""

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


def check_home_prefix(path: str | os.PathLike, option: str = "--output") -> None:
    """ValueError for an output starting with an unexpanded ``~`` (``--output=~/x``, a quoted ``"~/x"``): the
    shell did not expand it, and writing would create a folder named ``~`` here (later ``rm -rf ~`` deletes home)."""
    text = os.fspath(path)
    if text.startswith("~") and os.path.expanduser(text) != text:
        raise ValueError(
            f"{option} {text} starts with '~', which the shell did not expand (it does not after '=' or in quotes): "
            f"write {os.path.expanduser(text)} (or an absolute path for a folder really named '~')"
        )


def check_no_outside_links(folder: Path, option: str = "--output") -> None:
    """ValueError for a symbolic link inside ``folder`` (at any depth) to a file or folder outside it: writing into
    the folder (``initial/``, ``final/``, a checkpoint, a model file) would write through it."""
    root = folder.resolve()
    for parent, names, files in os.walk(folder):  # links to folders are listed, never followed
        for name in [*names, *files]:
            item = Path(parent) / name
            if not item.is_symlink():
                continue
            try:
                target = item.resolve()
            except (OSError, RuntimeError):  # a loop of links
                target = Path(os.readlink(item))
            if not target.is_relative_to(root):
                raise ValueError(
                    f"{option} {folder}: {item} is a symbolic link to {target}, outside the folder (or a loop); psp-st "
                    "would write through it: remove the link, or choose a new folder"
                )


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
    """Apply the overwrite policy to ``path`` (a file, or a folder with ``folder=True``) before any work starts.
    OutputExistsError: an existing output (a folder: a non-empty one) unless ``overwrite`` or ``ours`` says it is
    psp-st's own output of the same job (a release re-run); always, an output that is an input, contains one, is an
    existing file inside an input folder, lies inside a ``sealed`` folder (read whole: a model, a folder of shards)
    or is the same file under another name. ValueError: an unexpanded ``~`` (:func:`check_home_prefix`), a folder
    holding a link to outside it (:func:`check_no_outside_links`).
    IsADirectoryError / NotADirectoryError: a folder where a file is
    expected, or the reverse.

    Args:
        inputs: files or folders the command reads (``None`` and empty entries are ignored).
        option / flag: the option name and how the caller says "overwrite" (``overwrite=True``), for messages.
    """
    if os.fspath(path) == "":  # Path("") is the current folder
        raise ValueError(f"{option}: empty path (an unset variable?): give a file or folder, './NAME' for one here")
    if os.fspath(path) == "-":  # Unix habit for stdout: a file named '-' would appear instead (E14-8)
        raise ValueError(f"{option} -: psp-st writes this output to a file, not to stdout: name a file ('./-' is one)")
    check_home_prefix(path, option)
    path = Path(path)
    target = path.resolve()
    sealed = list(sealed)
    for source in [*inputs, *sealed]:
        if source is None or str(source) == "":  # "" is no path (not the current folder); its command refuses it
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
            check_no_outside_links(path, option)
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

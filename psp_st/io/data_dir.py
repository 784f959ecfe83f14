"""Where the shared data folder is, and which files a data path names: one rule for every part of psp-st."""

from __future__ import annotations

import glob
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from psp_st.io.lines import check_input_file

#: Environment variable naming the shared data folder (``sts/``, ``pair_classification/``, ``training_pairs/`` ...).
ENV_VAR = "PSP_ST_DATA_DIR"

DataPath = str | os.PathLike | Sequence[str | os.PathLike]


def default_data_dir() -> Path:
    """The shared data folder: ``$PSP_ST_DATA_DIR`` (read at call time); else ``../shared/data`` from the working
    directory; else ``shared/data`` beside a source checkout. When none exists, the first candidate."""
    if os.environ.get(ENV_VAR):  # "~/data" from a quoted .env or unit file: no shell expanded it
        return Path(os.environ[ENV_VAR]).expanduser()
    candidates = [Path("../shared/data"), Path(__file__).resolve().parents[3] / "shared" / "data"]
    return next((path for path in candidates if path.is_dir()), candidates[0])


def data_folder(data_dir: str | os.PathLike | None = None) -> Path:
    """``data_dir`` (a leading ``~`` is the home folder: ``--data-dir=~/data`` reaches no shell), else
    :func:`default_data_dir`."""
    return Path(data_dir).expanduser() if data_dir else default_data_dir()


def resolve_data_files(
    source: DataPath, data_dir: str | os.PathLike | None = None, keep: Callable[[str], bool] | None = None
) -> list[str]:
    """The files a data path names: a file, a folder (its files ``keep`` accepts), a glob (``**`` recursive) or a
    list of these, each pattern's files sorted; a leading ``~`` is the home folder. A relative path that names nothing
    from the working directory is looked up in ``data_dir`` (default :func:`default_data_dir`); one that matches no
    file is a FileNotFoundError."""
    if not isinstance(source, (str, os.PathLike)):
        if isinstance(source, (bytes, bytearray)):
            raise TypeError("a data path is a path, a glob or a list of them, not bytes")
        files = [path for item in source for path in resolve_data_files(item, data_dir, keep)]
        if not files:
            raise ValueError("the data path is an empty list")
        return files
    # "~/x" is home (a recipe has no shell); an existing file or folder is itself, even named like a glob ("a [1]")
    pattern = literal = os.path.expanduser(os.fspath(source))
    folder = data_folder(data_dir)
    exists = os.path.exists(pattern) or (glob.has_magic(pattern) and glob.glob(pattern, recursive=True))
    if not os.path.isabs(pattern) and not exists:  # the data folder's own name is no pattern ("data [2026]")
        literal, pattern = str(folder / pattern), os.path.join(glob.escape(str(folder)), pattern)
    if os.path.isdir(literal):
        files = sorted(str(path) for path in Path(literal).iterdir() if path.is_file())
        files = [path for path in files if keep is None or keep(path)]
    elif os.path.exists(literal):
        files = [literal] if os.path.isfile(literal) else []
    else:
        files = sorted(path for path in glob.glob(pattern, recursive=True) if os.path.isfile(path))
    if not files and os.path.exists(literal) and not os.path.isdir(literal):
        check_input_file(literal)  # a pipe or a device: say so, not "no data file matches"
    if not files:
        where = (
            ""
            if os.path.isabs(os.fspath(source))
            else f" (a relative path is from the working directory {os.getcwd()}, then the data folder {folder})"
        )
        raise FileNotFoundError(
            f"no data file matches {os.fspath(source)!r}{where}; pass --data-dir or set {ENV_VAR} to the shared data folder"
        )
    return files

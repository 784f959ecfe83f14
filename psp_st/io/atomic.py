"""Atomic file and folder writes: a crash never leaves a half-written model, embedding or score file. Outputs get
the umask permissions of a plain ``open`` (``tempfile`` alone would leave them ``0600``/``0700``)."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path


def current_umask() -> int:
    """The process umask (read by setting and restoring it: the only portable way)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def apply_umask(path: str | os.PathLike) -> None:
    """Give ``path`` (a file, or a folder and everything in it) the permissions a plain ``open`` would (some writers,
    like safetensors >= 0.8, create files ``0600`` whatever the umask)."""
    mask = current_umask()
    path = Path(path)
    for item in [path, *path.rglob("*")] if path.is_dir() else [path]:
        if item.is_symlink():
            continue
        mode = item.stat().st_mode
        full = 0o777 if item.is_dir() or mode & 0o111 else 0o666
        os.chmod(item, full & ~mask)


def atomic_write_json(path: str | os.PathLike, data: object, sweep: bool = True) -> None:
    """Write ``data`` as indented UTF-8 JSON (other values as ``str``) through :func:`atomic_path` (``sweep``: as
    there); a lone surrogate (a file name that is not UTF-8, any name under an ASCII locale) is written as its JSON
    escape ``\\udce9``, which reads back as itself."""
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n"
    with atomic_path(path, sweep) as tmp:
        tmp.write_text(text, encoding="utf-8", errors="backslashreplace")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through :func:`atomic_path`."""
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def _temporary_prefix(path: Path, sweep: bool = True) -> str:
    """``.NAME.HOST-PID.``: the prefix of this process's temporaries for ``path``; with ``sweep``, those left by a dead
    process on this host are deleted first (:func:`sweep_temporaries`)."""
    if sweep:
        sweep_temporaries(path.parent, [path.name])
    return f".{path.name}.{socket.gethostname()}-{os.getpid()}."


def sweep_temporaries(folder: str | os.PathLike, names: Iterable[str]) -> None:
    """Delete the temporaries that writers of ``folder/NAME`` (each of ``names``) on this host left when they died
    (``kill -9``, the OOM killer), and the temporaries of such a temporary (a folder written inside one, e.g. a
    release's static export: ``..NAME.HOST-PID.*.tmp.*.tmp``); live writers', other hosts' and other names' stay.
    One pass over the folder whatever the number of names: a job writing thousands of shards sweeps once, not per
    file (:class:`~psp_st.mining.shards.ShardFolder`)."""
    wanted, marker = set(names), f".{socket.gethostname()}-"
    try:
        entries = list(os.scandir(os.fspath(folder)))
    except FileNotFoundError:
        return
    for entry in entries:
        name = entry.name
        if not (name.startswith(".") and name.endswith(".tmp")):
            continue
        at = name.find(marker, 1)
        while at != -1:
            if name[1:at] in wanted or (name.startswith("..") and name[2:at] in wanted):
                pid = name[at + len(marker) :].partition(".")[0]
                if pid.isdigit() and not _alive(int(pid)):
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path, ignore_errors=True)
                    else:
                        Path(entry.path).unlink(missing_ok=True)
                break
            at = name.find(marker, at + 1)


def _alive(pid: int) -> bool:
    """Whether process ``pid`` may still run (another user's does). On Windows always: there ``os.kill(pid, 0)`` is no
    probe but ``TerminateProcess``, which would kill a live writer, or whatever process has since got that pid; a dead
    writer's temporary is then left behind (a hidden file), never a process killed."""
    if sys.platform == "win32":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        pass
    return True


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike, sweep: bool = True) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` (umask permissions); on success it replaces ``path``, on error it is
    removed. ``sweep=False``: leave dead writers' temporaries to the caller's own :func:`sweep_temporaries` (a job
    writing many files in one folder sweeps it once)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=_temporary_prefix(path, sweep), suffix=".tmp", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        os.fchmod(fd, 0o666 & ~current_umask())
        os.close(fd)
        yield tmp
        os.replace(tmp, path)
    except BaseException as error:
        tmp.unlink(missing_ok=True)
        if type(error) is OSError and error.filename is None:  # a short write (full disk, size limit) names none
            raise OSError(error.errno or errno.ENOSPC, error.strerror or str(error), str(path)) from error
        raise


def reserve_space(path: str | os.PathLike, size: int, final: str | os.PathLike | None = None) -> None:
    """Allocate ``size`` bytes of ``path`` on disk now, so a full disk is an ``OSError`` naming ``final`` here, not a
    SIGBUS while writing through a memory map later. Where the OS has no ``posix_fallocate`` (macOS, Windows) nothing
    is reserved: a full disk is then an error of the write itself."""
    fallocate = getattr(os, "posix_fallocate", None)
    if fallocate is None:
        return
    with open(path, "r+b") as handle:
        try:
            fallocate(handle.fileno(), 0, size)
        except OSError as error:
            if error.errno in (errno.ENOSPC, errno.EDQUOT):
                free = shutil.disk_usage(Path(path).parent).free
                raise OSError(
                    error.errno,
                    f"no space left on the device: it needs {size:,} bytes, {free:,} are free",
                    str(final or path),
                ) from error
            if error.errno not in (errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS):
                raise


def inside(folder: Path, relative: str) -> Path:
    """``folder / relative``; ValueError if that leads out of ``folder`` (an absolute name, '..', a linked folder)."""
    target = folder / relative
    if ".." in Path(relative).parts or not target.parent.resolve().is_relative_to(folder.resolve()):
        raise ValueError(
            f"{folder}: refusing to write or remove {relative!r}, which is outside the folder (an absolute name, '..' "
            "or a linked folder): the folder's records are damaged or planted; write to another folder"
        )
    return target


@contextlib.contextmanager
def atomic_directory(path: str | os.PathLike, replaces: Iterable[str] = ()) -> Iterator[Path]:
    """Yield a temporary folder beside ``path``; on success its files are moved into ``path`` (a new or empty one is
    replaced in one rename). Files of ``replaces`` (relative paths, e.g. a previous build's) that the new content
    lacks are removed; every other file is kept: a writer never deletes files it did not write."""
    path, replaces = Path(path), list(replaces)
    for relative in replaces:  # refused before the caller's work
        inside(path, relative)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=_temporary_prefix(path), suffix=".tmp", dir=path.parent))
    try:
        yield tmp
        apply_umask(tmp)
        if path.is_dir() and not any(path.iterdir()):
            path.rmdir()
        if not path.exists():
            os.replace(tmp, path)
            return
        new = {p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file() or p.is_symlink()}
        for relative in sorted(set(replaces) - new):
            (path / relative).unlink(missing_ok=True)
        for relative in sorted(new):
            target = inside(path, relative)
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            os.replace(tmp / relative, target)
        for folder in sorted({(path / r).parent for r in set(replaces) - new}, key=lambda p: -len(p.parts)):
            with contextlib.suppress(OSError):
                if folder != path and not any(folder.iterdir()):
                    folder.rmdir()
        shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise

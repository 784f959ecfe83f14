"""Publishing a model folder to the Hugging Face Hub (cards re-rendered for the repo id), or a dry run that writes
the exact upload to a folder. The token never appears in logs or error messages."""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from psp_st.hub.card import ST_PLACEHOLDER, write_model_cards
from psp_st.inference.load import check_model_folder, load
from psp_st.io.atomic import atomic_directory
from psp_st.io.model_names import BUILD_INFO_FILE, TRAINABLE_SUBFOLDER, hub_cache_repo, read_build_record
from psp_st.io.output_policy import check_home_prefix
from psp_st.modules.trusted import load_trusted, looks_like_hub_id, module_types, trusted_module_class

logger = logging.getLogger(__name__)

#: Files and folders never uploaded (caches, temporary and editor files).
EXCLUDED = re.compile(r"(^|/)(\.[^/]*|__pycache__|checkpoints?)(/|$)|\.tmp$|~$")
#: Pickle files, never uploaded: loading one can run code, and psp-st models are safetensors.
PICKLES = re.compile(r"\.(bin|pt|pth|pkl|pickle|ckpt)$")


@contextlib.contextmanager
def redacted(token: str | None) -> Iterator[None]:
    """While active, log handlers drop ``token`` from records and raised errors have it replaced by ``***``."""
    if not token:
        yield
        return
    handlers = list(logging.getLogger().handlers)
    for name in list(logging.root.manager.loggerDict):
        handlers += getattr(logging.getLogger(name), "handlers", [])

    def redactor(record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if token in message:
            record.msg, record.args = message.replace(token, "***"), None
        return True

    for handler in handlers:
        handler.addFilter(redactor)
    try:
        yield
    except Exception as error:
        message = str(error)
        if token in message:
            raise RuntimeError(f"{type(error).__name__}: {message.replace(token, '***')}") from None
        raise
    finally:
        for handler in handlers:
            handler.removeFilter(redactor)


def check_repo_id(repo_id: str) -> str:
    """``ORG/NAME`` or raise ValueError."""
    if not isinstance(repo_id, str) or repo_id.count("/") != 1 or not looks_like_hub_id(repo_id):
        raise ValueError(f"--repo-id must look like ORG/NAME (letters, digits, '-', '_', '.'), got {repo_id!r}")
    return repo_id


def upload_files(folder: str | os.PathLike) -> list[str]:
    """Relative paths (posix) of the files in ``folder`` that an upload includes, sorted."""
    folder = Path(folder)
    cache_repo = hub_cache_repo(folder)
    files = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder).as_posix()
        if EXCLUDED.search(relative):
            continue
        if path.is_symlink() and cache_repo:  # its files link to the cache's blobs
            raise ValueError(
                f"{folder} is the Hugging Face cache's copy of {cache_repo}, whose files are links into "
                f"the cache: push a copy of it (cp -rL {folder} COPY; psp-st push COPY ...), never the cache itself"
            )
        if path.is_symlink():
            raise ValueError(
                f"{path} is a symbolic link; push uploads only regular files inside the folder (a link "
                "would upload its target): replace it with a copy of the file or remove it"
            )
        if path.is_file():
            files.append(relative)
    return files


def _refresh_cards(staged: Path, repo_id: str) -> None:
    """Re-render the cards of a psp-st folder for ``repo_id``; in any other model folder point the card's snippets
    at ``repo_id`` (Sentence-Transformers' id placeholder, the ``"model_name"`` a model2vec card loads)."""
    if (staged / BUILD_INFO_FILE).is_file() or any(trusted_module_class(t) for t in module_types(staged)):
        write_model_cards(staged, model_id=repo_id)
        return
    readme = staged / "README.md"
    if readme.is_file():
        text = readme.read_text(encoding="utf-8").replace(ST_PLACEHOLDER, repo_id)
        front = text.split("\n---", 1)[0] if text.startswith("---\n") else ""
        name = re.search(r"^model_name: (\S+)$", front, flags=re.M)  # what a model2vec card loads
        if name:
            text = text.replace(f'"{name[1]}"', f'"{repo_id}"').replace(name[0], f"model_name: {repo_id}", 1)
        readme.write_text(text, encoding="utf-8")


def stage_upload(folder: str | os.PathLike, repo_id: str, out: str | os.PathLike) -> list[str]:
    """Write into ``out`` (new or empty; atomically: nothing is left on failure) exactly the files a push of
    ``folder`` to ``repo_id`` uploads; return their paths. ``folder`` must match its build record's sha256 and load,
    each form as :func:`psp_st.load` loads it."""
    check_home_prefix(out, "--dry-run")
    folder, out = Path(folder), Path(out)
    check_repo_id(repo_id)
    if not folder.is_dir():  # push takes a folder only: it uploads local files, never a name resolved elsewhere
        raise FileNotFoundError(
            f"no such folder: {folder} (push uploads a local model folder, e.g. a `psp-st build` output)"
        )
    check_model_folder(folder, sha256=True)  # never publish files that differ from the build record
    if out.resolve() == folder.resolve() or folder.resolve() in out.resolve().parents:
        raise ValueError(f"the dry-run folder {out} must be outside the model folder {folder}")
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"dry-run folder {out} exists and is a file; pass a new folder")
    if out.exists() and any(out.iterdir()):
        raise ValueError(f"dry-run folder {out} exists and is not empty; pass a new folder")
    files = upload_files(folder)
    info = read_build_record(folder) or {}
    recorded = info.get("files")  # a release uploads exactly itself, and the licence file its card links to
    link = ((info.get("recipe") or {}).get("release") or {}).get("license_link")
    licence = [PurePosixPath(link).as_posix()] if isinstance(link, str) and "://" not in link else []
    if licence and licence[0] not in {*files, "README.md"}:  # push writes README.md (the card) in any case
        raise ValueError(
            f"{folder}: the card links its licence to the repository file {licence[0]!r} (the recipe's "
            f"release.license_link), which the folder lacks: put the licence text in {folder / licence[0]}"
        )
    release = {*(recorded or files), BUILD_INFO_FILE, "README.md", f"{TRAINABLE_SUBFOLDER}/README.md", *licence}
    for bad, why in (
        (
            [f for f in files if f not in release],
            "not part of the release (psp_build.json does not list them): move them out of the folder",
        ),
        (
            [f for f in files if PICKLES.search(f)],
            "pickle files, which can run code when loaded: re-save the model "
            "with safetensors (model.save(path)); of a training run, push final/, not a checkpoint",
        ),
    ):
        if bad:
            raise ValueError(f"{folder}: {', '.join(bad[:5])}{', ...' if len(bad) > 5 else ''} are {why}")
    load(folder.resolve())  # an absolute path: never taken for a short name
    if (folder / TRAINABLE_SUBFOLDER).is_dir():
        load(folder.resolve(), trainable=True)
    with atomic_directory(out) as staged:
        for relative in files:
            target = staged / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(folder / relative, target)
        _refresh_cards(staged, repo_id)
    return upload_files(out)


def push(
    folder: str | os.PathLike,
    repo_id: str,
    token: str | None = None,
    private: bool = False,
    dry_run: str | os.PathLike | None = None,
    commit_message: str | None = None,
) -> str:
    """Upload a model folder to ``repo_id`` and return the commit URL (with ``dry_run``: write the upload to that
    folder instead and return it). The token (argument, ``HF_TOKEN`` or the cached login) never appears in logs or
    error messages."""
    check_repo_id(repo_id)
    if dry_run is not None:
        files = stage_upload(folder, repo_id, dry_run)
        logger.info("dry run: %d files that would be uploaded to %s written to %s", len(files), repo_id, dry_run)
        return str(dry_run)
    with tempfile.TemporaryDirectory(prefix="psp-st-push-") as tmp, redacted(token):
        staged = Path(tmp) / "upload"
        files = stage_upload(folder, repo_id, staged)
        model = load_trusted(staged)
        logger.info("uploading %d files to %s", len(files), repo_id)
        message = commit_message or f"Upload {Path(folder).name} with psp-st"
        return model.push_to_hub(
            repo_id, token=token, private=private, local_model_path=str(staged), exist_ok=True, commit_message=message
        )

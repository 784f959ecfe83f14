"""Writing a release folder: the ``StaticEmbedding`` export at the root, the same weights as a ``PSPEmbedding`` in
``trainable/``, the recipe as run, the build record (``psp_build.json``, every file's sha256) and the model cards."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from psp_st.hub.card import write_model_cards
from psp_st.hub.push import upload_files
from psp_st.io.atomic import atomic_directory, atomic_write_json, inside
from psp_st.io.checksums import sha256_file
from psp_st.io.model_names import BUILD_INFO_FILE, RECIPE_FILE, TRAINABLE_SUBFOLDER, read_build_record
from psp_st.modules.folder_format import PSP_WEIGHTS_DTYPES


def previous_release_files(folder: Path, name: str) -> set[str] | None:
    """The files of an earlier release of ``name`` in ``folder`` (from its build record), else ``None``."""
    info = read_build_record(folder)
    if info is None or info.get("name") != name or not isinstance(info.get("files"), dict):
        return None
    files = {str(relative) for relative in info["files"]}
    for relative in files:  # a planted record must not make a build delete files elsewhere
        inside(folder, relative)
    return files | {BUILD_INFO_FILE}


def evaluate(model, data_dir: str | os.PathLike | None, suite: str = "quick") -> dict[str, Any]:
    """Run the evaluation suite on ``model``; keep its summary table and timing."""
    from psp_st.evaluation import run_suite

    result = run_suite(model, suite=suite, data_dir=str(data_dir) if data_dir else None)
    metrics = {f"{row['task']} / {row['metric']}": round(float(row["value"]), 4) for row in result["summary"]}
    skipped = result.get("skipped", {})
    return {"suite": suite, "metrics": metrics, "skipped": skipped, "seconds": round(float(result["seconds"]), 1)}


def write_record(folder: str | os.PathLike, info: dict[str, Any]) -> None:
    """Write the build record ``psp_build.json`` (atomically)."""
    atomic_write_json(Path(folder) / BUILD_INFO_FILE, info)


def _file_records(folder: Path) -> tuple[dict[str, int], dict[str, str]]:
    """Size and sha256 of every release file but the cards and the record itself."""
    files = [r for r in upload_files(folder) if not r.endswith("README.md") and r != BUILD_INFO_FILE]
    return {r: (folder / r).stat().st_size for r in files}, {r: sha256_file(folder / r) for r in files}


def write_release(
    model,
    output: str | os.PathLike,
    info: dict[str, Any],
    data_dir: str | os.PathLike | None = None,
    suite: str | None = "quick",
    dtype: str = "float32",
    replaces: Iterable[str] = (),
    model_id: str | None = None,
) -> dict[str, Any]:
    """Write ``model`` (around a trained ``PSPEmbedding``) as the release folder ``output``, atomically: files in
    ``replaces`` (an earlier release's) that it lacks are removed, others kept. ``info``, the build record so far, is
    completed (dtype, the ``suite``'s evaluation of the static form as written, times, sizes, hashes) and returned;
    ``model_id``: what the cards' snippets load (default: the record's short name)."""
    import yaml
    from sentence_transformers import SentenceTransformer

    from psp_st.modules.psp import PSPEmbedding

    module = model[0]
    if not isinstance(module, PSPEmbedding):
        raise TypeError(f"a psp-st release publishes PSPEmbedding models, not {type(module).__name__}")
    if dtype not in PSP_WEIGHTS_DTYPES:
        raise ValueError(f"release dtype must be one of {PSP_WEIGHTS_DTYPES}, got {dtype!r}")
    stages = info.setdefault("stage_seconds", {})
    info["weights_dtype"] = dtype
    info["citations"] = dict(getattr(model.model_card_data, "citations", None) or info.get("citations") or {})
    with atomic_directory(output, replaces=replaces) as folder:
        module.eval()
        module.weights_dtype = dtype
        module.export_static(folder)
        if suite:
            start = time.perf_counter()
            info["evaluation"] = evaluate(SentenceTransformer(str(folder), device="cpu"), data_dir, suite)
            stages["evaluation"] = round(time.perf_counter() - start, 1)
        start = time.perf_counter()
        model.save(str(folder / TRAINABLE_SUBFOLDER))
        (folder / RECIPE_FILE).write_text(yaml.safe_dump(info.get("recipe"), sort_keys=False), encoding="utf-8")
        info["files"], info["sha256"] = _file_records(folder)
        stages["export"] = round(time.perf_counter() - start, 1)
        write_record(folder, info)
        write_model_cards(folder, model_id=model_id)
    return info

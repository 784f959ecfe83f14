"""``psp-st build``: run a recipe (:func:`psp_st.training.recipe.find_recipe`) end to end and write the release folder.

The release folder is what gets published: the root is the ``StaticEmbedding`` export (loads with
``SentenceTransformer("psp-en")`` from the folder's parent, no flag, no psp-st), ``trainable/`` holds the same
weights as a ``PSPEmbedding``, ``psp_recipe.yaml`` the recipe as run, ``psp_build.json`` the build record
(versions, recipe, seed, training time, the evaluation suite's numbers, one-thread speed, file sizes) and
``README.md`` the model card rendered from that record.
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import platform
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from psp_st.hub.load import BUILD_INFO_FILE, TRAINABLE_SUBFOLDER
from psp_st.modules.trusted import load_trusted

logger = logging.getLogger(__name__)

RECIPE_FILE = "psp_recipe.yaml"
#: Sentences used for the speed measurement (relative to the data folder) and how many.
SPEED_CORPUS = "corpus/english_sentences.parquet"
SPEED_SENTENCES = 20_000


def source_files(sources: list[str | dict[str, Any]], data_dir: Path) -> dict[str, int | None]:
    """Every file the recipe's sources matched, relative to ``data_dir``, with its row count (Parquet metadata;
    ``None`` for other files)."""
    import pyarrow.parquet as pq

    from psp_st.io.data_dir import resolve_data_files

    files: dict[str, int | None] = {}
    for source in sources:
        source = source["path"] if isinstance(source, dict) else source
        for path in resolve_data_files(source, data_dir):
            relative = os.path.relpath(path, data_dir)
            name = path if relative.startswith("..") else relative
            files[name] = pq.ParquetFile(path).metadata.num_rows if path.endswith(".parquet") else None
    return files


def _train_metrics(work: Path) -> dict[str, Any]:
    """The training run's ``train_metrics.json`` (pairs per epoch and per source, stage seconds, distillation)."""
    metrics = work / "train_metrics.json"
    return json.loads(metrics.read_text()) if metrics.is_file() else {}


def _relative(path: str, data_dir: Path) -> str:
    relative = os.path.relpath(path, data_dir)
    return path if relative.startswith("..") else relative


@contextlib.contextmanager
def torch_threads(threads: int) -> Iterator[None]:
    """Temporarily run torch with ``threads`` intra-op threads."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def speed_sentences(data_dir: Path, count: int = SPEED_SENTENCES, seed: int = 0) -> list[str]:
    """A seeded sample of English corpus sentences for speed measurements."""
    from psp_st.data.loaders import load_table

    path = data_dir / SPEED_CORPUS
    if not path.is_file():
        raise FileNotFoundError(f"speed corpus {path} not found (pass --data-dir, the shared data folder)")
    sentences = load_table(path, ["sentence"]).data.column("sentence").to_pylist()
    if len(sentences) > count:
        keep = np.sort(np.random.default_rng(seed).choice(len(sentences), size=count, replace=False))
        sentences = [sentences[i] for i in keep]
    return sentences


def measure_speed(static_model, module, sentences: Sequence[str], batch_size: int = 1024) -> dict[str, Any]:
    """Sentences/s on one thread: ``SentenceTransformer.encode`` of the static form and ``PSPEmbedding.embed``."""
    sentences = list(sentences)
    result: dict[str, Any] = {
        "threads": 1,
        "sentences": len(sentences),
        "batch_size": batch_size,
        "corpus": SPEED_CORPUS,
        "cpu": platform.processor() or platform.machine(),
    }
    threads_before = getattr(module.tokenizer, "num_threads", None)
    with torch_threads(1):
        static_model.encode(sentences[:1000], batch_size=batch_size, show_progress_bar=False)  # warm-up
        start = time.perf_counter()
        static_model.encode(sentences, batch_size=batch_size, show_progress_bar=False)
        result["sentences_per_second"] = len(sentences) / (time.perf_counter() - start)
        module.tokenizer.num_threads = 1
        try:
            module.embed(sentences[:1000], batch_size=batch_size)
            start = time.perf_counter()
            module.embed(sentences, batch_size=batch_size)
            result["fast_path_sentences_per_second"] = len(sentences) / (time.perf_counter() - start)
        finally:
            module.tokenizer.num_threads = threads_before
    return result


def evaluate(model, data_dir: Path, suite: str = "quick") -> dict[str, Any]:
    """Run the project's evaluation suite on ``model``; keep its summary table (values x100) and timing."""
    try:
        from psp_st.evaluation import run_suite
    except ImportError as error:
        raise ImportError(
            f"the evaluation suite is not available ({error}); install psp-st[eval] or pass --no-eval"
        ) from error
    result = run_suite(model, suite=suite, data_dir=str(data_dir))
    metrics = {f"{row['task']} / {row['metric']}": round(float(row["value"]), 4) for row in result["summary"]}
    return {
        "suite": suite,
        "metrics": metrics,
        "skipped": result.get("skipped", {}),
        "seconds": round(float(result["seconds"]), 1),
    }


def _file_sizes(folder: Path) -> dict[str, int]:
    from psp_st.hub.push import upload_files

    return {
        relative: (folder / relative).stat().st_size
        for relative in upload_files(folder)
        if not relative.endswith("README.md") and relative != BUILD_INFO_FILE
    }


def write_release(model, folder: Path, info: dict[str, Any]) -> dict[str, Any]:
    """Write the static export, the trainable form, the recipe, the cards and the build record into ``folder``."""
    import yaml
    from sentence_transformers import SentenceTransformer

    from psp_st.hub.card import render_model_card
    from psp_st.modules.psp import PSPEmbedding

    module = model[0]
    if not isinstance(module, PSPEmbedding):
        raise TypeError(f"psp-st build publishes PSPEmbedding models; the recipe produced {type(module).__name__}")
    module.export_static(folder)
    model.save(str(folder / TRAINABLE_SUBFOLDER))
    (folder / RECIPE_FILE).write_text(yaml.safe_dump(info.get("recipe"), sort_keys=False), encoding="utf-8")
    static = SentenceTransformer(str(folder), device="cpu")
    (folder / "README.md").write_text(render_model_card(static, info), encoding="utf-8")
    trainable = load_trusted(folder / TRAINABLE_SUBFOLDER)
    (folder / TRAINABLE_SUBFOLDER / "README.md").write_text(
        render_model_card(trainable, info, form="trainable"), encoding="utf-8"
    )
    info["files"] = _file_sizes(folder)
    (folder / BUILD_INFO_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return info


def previous_release_files(folder: Path, name: str) -> set[str] | None:
    """The files of an earlier ``psp-st build`` of ``name`` in ``folder`` (from its build record), else ``None``."""
    try:
        info = json.loads((folder / BUILD_INFO_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or info.get("name") != name or not isinstance(info.get("files"), dict):
        return None
    return {str(relative) for relative in info["files"]} | {BUILD_INFO_FILE}


def build(
    name: str = "psp-en",
    output: str | os.PathLike | None = None,
    data_dir: str | os.PathLike | None = None,
    seed: int | None = None,
    max_steps: int | None = None,
    suite: str | None = "quick",
    speed: bool = True,
    work_dir: str | os.PathLike | None = None,
    overwrite: bool = False,
    dtype: str | None = None,
) -> Path:
    """Train the ``name`` recipe and write its release folder (default ``./<name>``); return the folder.

    Args:
        name: recipe name (a packaged recipe such as ``psp-en``, see :func:`~psp_st.training.recipe.find_recipe`)
            or a recipe file.
        output: release folder, written when the build succeeds. An existing non-empty folder is refused before
            training starts unless it is this recipe's own earlier release (its ``psp_build.json`` names the
            recipe) or ``overwrite`` is set; either way only the files of the old release are replaced or removed,
            other files in the folder are kept (:mod:`psp_st.io.output_policy`).
        data_dir: the shared data folder the recipe's relative paths refer to (default: :func:`psp_st.io.data_dir.default_data_dir`).
        seed: overrides the recipe's seed.
        max_steps: stop training after this many optimizer steps (for smoke tests).
        suite: evaluation suite recorded in the card (``None`` skips evaluation).
        speed: measure one-thread encoding speed.
        work_dir: keep training checkpoints here (default: a temporary folder, removed afterwards).
        overwrite: write into a non-empty ``output`` that is not this recipe's release.
        dtype: weights dtype of the release files, ``float32`` or ``float16`` (half the size); default: the
            recipe's ``release.dtype``, else ``float32``. The evaluation and speed numbers are measured on the
            folder as written, so they include the rounding.
    """
    import psp_st
    from psp_st.io.atomic import atomic_directory
    from psp_st.io.data_dir import default_data_dir
    from psp_st.io.output_policy import check_output
    from psp_st.modules.base import FORMAT_VERSION
    from psp_st.training.recipe import find_recipe, load_config, train_from_config

    recipe_path = find_recipe(name)
    config = load_config(recipe_path)
    if seed is not None:
        config["seed"] = int(seed)
    config.setdefault("seed", 42)
    data_dir = Path(data_dir) if data_dir else default_data_dir()
    if not data_dir.is_dir():
        raise FileNotFoundError(f"data folder {data_dir} not found (pass --data-dir or set PSP_ST_DATA_DIR)")
    release = dict(config.get("release") or {})
    recipe_dtype = release.pop("dtype", "float32")
    if release:
        raise ValueError(f"recipe: unknown release option(s) {sorted(release)} (known: dtype)")
    dtype = dtype or recipe_dtype
    if dtype not in ("float32", "float16"):
        raise ValueError(f"release dtype must be float32 or float16, got {dtype!r}")
    run_config = copy.deepcopy(config)
    run_config.pop("release", None)
    output = Path(output) if output else Path.cwd() / config["name"]
    previous = previous_release_files(output, config["name"])
    check_output(
        output,
        inputs=[recipe_path, data_dir, work_dir],
        overwrite=overwrite,
        folder=True,
        ours=lambda _: previous is not None,
    )

    import torch

    build_start = time.perf_counter()
    info: dict[str, Any] = {
        "name": config["name"],
        "psp_st_version": psp_st.__version__,
        "format_version": FORMAT_VERSION,
        "recipe_file": recipe_path.name,
        "recipe": config,
        "seed": config["seed"],
        "max_steps": max_steps,
    }
    with contextlib.ExitStack() as stack:
        work = (
            Path(work_dir)
            if work_dir
            else Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="psp-st-build-")))
        )
        cache_dir = run_config.get("data", {}).get("cache_dir")
        if cache_dir and not Path(cache_dir).is_absolute():  # keep the user's folder clean: cache in the work dir
            run_config["data"]["cache_dir"] = str(work / cache_dir)
        start = time.perf_counter()
        model = train_from_config(
            run_config, output_dir=work, max_steps=max_steps, overwrite=overwrite, data_dir=data_dir
        )
        metrics = _train_metrics(work)
        info["training"] = {
            "seconds": round(time.perf_counter() - start, 1),
            "threads": torch.get_num_threads(),
            "datasets": [
                source["path"] if isinstance(source, dict) else str(source) for source in config["data"]["sources"]
            ],
            "files": source_files(run_config["data"]["sources"], data_dir),
            "pairs": metrics.get("train_pairs"),
            "pairs_per_source": {
                _relative(name, data_dir): count for name, count in (metrics.get("pairs_per_source") or {}).items()
            },
        }
        distillation = metrics.get("distillation")
        if distillation:
            distillation = {
                **distillation,
                "teacher": (config.get("distillation") or {}).get("teacher"),
                "files": list(source_files(run_config["distillation"]["sources"], data_dir)),
            }
            info["training"]["distillation"] = distillation
        # seconds per build stage: data, tokenizer, teacher passes, training (from the run), then eval and export
        stages = {key.removesuffix("_seconds"): value for key, value in (metrics.get("stage_seconds") or {}).items()}
        info["stage_seconds"] = stages
        with atomic_directory(output, replaces=previous or ()) as folder:
            module = model[0]
            module.eval()
            module.weights_dtype = dtype
            info["weights_dtype"] = dtype
            from sentence_transformers import SentenceTransformer

            module.export_static(folder)  # written again by write_release; needed here to evaluate what ships
            static = SentenceTransformer(str(folder), device="cpu")
            if suite:
                start_eval = time.perf_counter()
                info["evaluation"] = evaluate(static, data_dir, suite)
                stages["evaluation"] = round(time.perf_counter() - start_eval, 1)
            if speed:
                start_speed = time.perf_counter()
                info["speed"] = measure_speed(static, module, speed_sentences(data_dir))
                stages["speed"] = round(time.perf_counter() - start_speed, 1)
            start_export = time.perf_counter()
            write_release(model, folder, info)
            stages["export"] = round(time.perf_counter() - start_export, 1)
            info["total_seconds"] = round(time.perf_counter() - build_start, 1)
            (folder / BUILD_INFO_FILE).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    logger.info("wrote %s", output)
    return output

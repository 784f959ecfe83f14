"""``psp-st build``: train a recipe (:func:`~psp_st.training.recipe.train_from_config`) and write its release folder
(:func:`~psp_st.hub.release.write_release`)."""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import os
import shlex
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from psp_st.arguments import check_int
from psp_st.hub.release import previous_release_files, write_record, write_release
from psp_st.io.data_dir import data_folder, resolve_data_files
from psp_st.io.output_policy import check_output
from psp_st.modules.folder_format import FORMAT_VERSION, PSP_WEIGHTS_DTYPES

logger = logging.getLogger(__name__)

#: ``build(suite=...)``'s default: the recipe's ``release.suite`` (``quick`` when the recipe names none).
RECIPE_SUITE = "recipe"


def source_files(sources: list[str | dict[str, Any]], data_dir: Path) -> dict[str, int | None]:
    """Every file the recipe's sources matched, relative to ``data_dir``, with its Parquet row count (else ``None``)."""
    import pyarrow.parquet as pq

    files: dict[str, int | None] = {}
    for source in sources:
        for path in resolve_data_files(source["path"] if isinstance(source, dict) else source, data_dir):
            rows = pq.ParquetFile(path).metadata.num_rows if path.endswith(".parquet") else None
            files[_relative(path, data_dir)] = rows
    return files


def training_record(config: dict[str, Any], run: Path, data_dir: Path) -> dict[str, Any]:
    """The build record's ``training`` and ``stage_seconds`` of the finished ``train_from_config(config)`` run in the
    folder ``run`` (from its ``train_metrics.json``): the sources' files and rows, the pairs per epoch and per source,
    soup, WiSE-FT, distillation, the checkpoint a resumed run went on from; file names relative to ``data_dir`` when inside it."""
    metrics_file = run / "train_metrics.json"
    metrics = json.loads(metrics_file.read_text(encoding="utf-8")) if metrics_file.is_file() else {}
    training: dict[str, Any] = {
        "datasets": [
            source["path"] if isinstance(source, dict) else str(source) for source in config["data"]["sources"]
        ],
        "files": source_files(config["data"]["sources"], data_dir),
        "pairs": metrics.get("train_pairs"),
        "pairs_per_source": {
            _relative(name, data_dir): count for name, count in (metrics.get("pairs_per_source") or {}).items()
        },
    }
    for key in ("pairs_per_language", "soup", "wise_ft", "norm_power", "resumed_from"):
        if metrics.get(key):
            training[key] = metrics[key]
    if metrics.get("distillation"):
        training["distillation"] = {
            **metrics["distillation"],
            "teacher": (config.get("distillation") or {}).get("teacher"),
            "files": list(source_files(config["distillation"]["sources"], data_dir)),
        }
    stages = {key.removesuffix("_seconds"): value for key, value in (metrics.get("stage_seconds") or {}).items()}
    return {"training": training, "stage_seconds": stages}


def write_train_record(
    final: str | os.PathLike,
    command: str,
    data_dir: str | os.PathLike | None = None,
    max_steps: int | None = None,
    citations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """Write the build record of a ``psp-st train`` run's ``final/`` folder and return it: the run folder's recipe
    and training data as a build records them (:func:`training_record`), so its card (and a push's) lists the data
    with their licences. It has no ``name``: the folder is a trainable model, not a release."""
    import psp_st
    from psp_st.io.model_names import RECIPE_FILE
    from psp_st.training.recipe import load_config
    from psp_st.training.schema import parse_recipe

    final = Path(final)
    config = load_config(final.parent / RECIPE_FILE)
    info: dict[str, Any] = {
        "psp_st_version": psp_st.__version__,
        "format_version": FORMAT_VERSION,
        "command": command,
        "recipe": config,
        "seed": parse_recipe(config).seed,
        "max_steps": max_steps,
        # no stage seconds: after --resume they would time the last process only (a build's record says so)
        "training": training_record(config, final.parent, data_folder(data_dir))["training"],
        "citations": dict(citations or {}),
    }
    info["training"].pop("resumed_from", None)  # it qualifies times, which this record has not: final/ stays as it was
    write_record(final, info)
    return info


def _command(name: Any, output: Any, data_dir: Any, seed: Any, max_steps: Any, suite: Any, dtype: Any) -> str:
    """The ``psp-st build`` command line of these ``build`` arguments."""
    words = ["psp-st", "build", str(name)]
    options = {"--output": output, "--data-dir": data_dir, "--seed": seed, "--max-steps": max_steps, "--dtype": dtype}
    options["--suite"] = None if suite in (RECIPE_SUITE, None) else suite
    for option, value in options.items():
        words += [option, str(value)] if value is not None else []
    return shlex.join(words + (["--no-eval"] if suite is None else []))


def _relative(path: str, data_dir: Path) -> str:
    """``path`` relative to ``data_dir`` when inside it, else as given; with ``/`` on every OS, so that a record written
    on Windows names the same files (and their licences) when its card is rendered elsewhere."""
    try:
        relative = os.path.relpath(path, data_dir)
    except ValueError:  # Windows: another drive than the data folder's
        relative = ".."
    return Path(path if relative.startswith("..") else relative).as_posix()


@contextlib.contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run torch with ``threads`` intra-op threads inside the block (``None``: leave torch's choice)."""
    import torch

    before = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(check_int("threads (--threads)", threads))
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _check_init_from(init_from: str | None) -> None:
    """A recipe's ``model.init_from`` must be a P-SP model: a release of another encoder fails only after training."""
    from psp_st.inference.engine import is_psp_folder
    from psp_st.io.model_names import resolve_model_name
    from psp_st.modules.trusted import module_types

    if not init_from or not (folder := Path(resolve_model_name(init_from))).is_dir():
        return
    types = module_types(folder)
    if types and not is_psp_folder(folder):
        raise ValueError(
            f"recipe: model.init_from {init_from} is a {', '.join(types)} model, not P-SP: a psp-st "
            "release publishes PSPEmbedding models (train other encoders with `psp-st train`)"
        )


def build(
    name: str = "psp-en",
    output: str | os.PathLike | None = None,
    data_dir: str | os.PathLike | None = None,
    seed: int | None = None,
    max_steps: int | None = None,
    suite: str | None = RECIPE_SUITE,
    threads: int | None = None,
    work_dir: str | os.PathLike | None = None,
    overwrite: bool = False,
    dtype: str | None = None,
) -> Path:
    """Train the ``name`` recipe (packaged, or a recipe file) and write its release folder; return the folder.

    Args:
        output: release folder (default ``./<name>``). A non-empty folder is refused before training unless it is
            this recipe's earlier release or ``overwrite`` is set; only the old release's files are replaced.
        data_dir: the data folder of the recipe's relative paths (default: ``default_data_dir()``).
        max_steps: stop training after this many optimizer steps (for smoke tests).
        suite: evaluation suite for the card (``None``: no evaluation; default: the recipe's, else ``quick``).
        work_dir: keep checkpoints here (default: a temporary folder); a run there is resumed unless ``overwrite``.
        dtype: ``float32`` or ``float16`` release weights (default: the recipe's, else ``float32``).

    The overrides are folded into the recorded recipe (``psp_recipe.yaml`` rebuilds the same release into another
    folder: the release folder holds that recipe, an input, so building into it is refused).
    """
    import psp_st
    from psp_st.training.recipe import find_recipe

    recipe_path = find_recipe(name)  # the cheap checks first: a typo fails before torch and datasets load
    command = _command(name, output, data_dir, seed, max_steps, suite, dtype)
    data_dir = data_folder(data_dir)
    if not data_dir.is_dir():
        raise FileNotFoundError(f"data folder {data_dir} not found (pass --data-dir or set PSP_ST_DATA_DIR)")
    from psp_st.training.recipe import INITIAL_FOLDER, load_config, train_from_config

    config = load_config(recipe_path)
    if seed is not None:
        config["seed"] = int(seed)
    config.setdefault("seed", 42)
    if max_steps is not None:
        config["trainer"] = {**(config.get("trainer") or {}), "max_steps": max_steps}
    release = dict(config.get("release") or {})  # checked by load_config (psp_st.training.schema.ReleaseSection)
    if dtype:
        release["dtype"] = dtype
    if suite not in (RECIPE_SUITE, None):
        release["suite"] = suite
    if release:
        config["release"] = release
    if suite == RECIPE_SUITE:
        suite = release.get("suite", "quick")
    if suite is not None:  # a typo fails here, not after the training
        from psp_st.evaluation.suite import check_suite

        check_suite(suite)
    dtype = release.get("dtype", "float32")
    if dtype not in PSP_WEIGHTS_DTYPES:
        raise ValueError(f"release dtype must be one of {PSP_WEIGHTS_DTYPES}, got {dtype!r}")
    _check_init_from((config.get("model") or {}).get("init_from"))
    run_config = copy.deepcopy(config)
    run_config.pop("release", None)
    model_id = str(output or config["name"])  # the folder as given (./NAME by default): what the cards load
    output = Path(output) if output else Path.cwd() / config["name"]
    previous = previous_release_files(output, config["name"])
    inputs = [recipe_path, data_dir, work_dir]
    check_output(output, inputs=inputs, overwrite=overwrite, folder=True, ours=lambda _: previous is not None)
    if previous is not None:  # no --overwrite needed: say so before minutes of training
        logger.warning(
            "%s holds an earlier %s release: this build replaces it (another --output keeps it)", output, config["name"]
        )

    import torch

    build_start = time.perf_counter()
    info: dict[str, Any] = {
        "name": config["name"],
        "psp_st_version": psp_st.__version__,
        "format_version": FORMAT_VERSION,
        "recipe_file": recipe_path.name,
        "command": command,
        "recipe": config,
        "seed": config["seed"],
        "max_steps": max_steps,
    }
    with contextlib.ExitStack() as stack:
        stack.enter_context(torch_threads(threads))
        work = Path(work_dir or stack.enter_context(tempfile.TemporaryDirectory(prefix="psp-st-build-")))
        cache_dir, own = run_config.get("data", {}).get("cache_dir"), set()
        if cache_dir and not Path(cache_dir).is_absolute():  # keep the user's folder clean: cache in the work dir
            run_config["data"]["cache_dir"] = str(work / cache_dir)
            own.add(Path(cache_dir).parts[0])
        start = time.perf_counter()
        resume = work_dir is not None and not overwrite and (work / INITIAL_FOLDER).is_dir()  # a killed build goes on
        # killed before initial/ (data, tokenizer, teacher pass): the work dir holds only the pair cache; start again
        fresh = not resume and work.is_dir() and {p.name for p in work.iterdir()} <= own
        model = train_from_config(
            run_config,
            output_dir=work,
            resume=resume,
            max_steps=max_steps,
            overwrite=overwrite or fresh,
            data_dir=data_dir,
            output_option="--work-dir",
        )
        record = training_record(run_config, work, data_dir)
        record["training"] = {
            "seconds": round(time.perf_counter() - start, 1),
            "threads": torch.get_num_threads(),
            **record["training"],
        }
        info.update(record)
        write_release(
            model, output, info, data_dir=data_dir, suite=suite, dtype=dtype, replaces=previous or (), model_id=model_id
        )
    info["total_seconds"] = round(time.perf_counter() - build_start, 1)
    write_record(output, info)
    logger.info("wrote %s", output)
    return output

"""The evaluation suites, each run on a model by one call: ``quick`` (English STS, PAWS-X en, MSRPC: what the recipes
evaluate with), ``full`` (+ STS years, PAWS-X x7, MLP protocol, Turku, Tatoeba, agreement plots, neighbours) and
``xling`` (FLORES-200 devtest per language, Tatoeba, PAWS-X x7, English STS)."""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from psp_st.data.corpora import load_opusparcus
from psp_st.data.loaders import load_table
from psp_st.evaluation.agreement import (
    ScoreAgreementEvaluator,
    exact_level,
    neighbour_tables,
    plot_score_levels,
    sts_bucket,
)
from psp_st.evaluation.base import CachedEmbeddingEvaluator
from psp_st.evaluation.bitext import BitextMiningEvaluator, MultiBitextEvaluator
from psp_st.evaluation.classification import ParaphraseMLPEvaluator, ThresholdClassificationEvaluator, turku_binary
from psp_st.evaluation.embeddings import EmbeddingCache, model_label
from psp_st.evaluation.loaders import (
    BITEXT_LANGS,
    FLORES_CORPUS,
    PAWSX_LANGS,
    STS_COLUMNS,
    bitext_path,
    flores_languages,
    load_flores,
    load_local,
    load_sts_folder,
    local_path,
    opusparcus_binary,
    opusparcus_path,
)
from psp_st.evaluation.retrieval import RetrievalEvaluator
from psp_st.evaluation.sts import STSEvaluator
from psp_st.inference.encode import check_model
from psp_st.io.data_dir import data_folder
from psp_st.io.extras import require, require_installed
from psp_st.io.progress import progress_bar, progress_bars_disabled

SUITES = ("quick", "full", "xling")
OPUSPARCUS_LANGS = ("de", "en", "fi", "fr", "ru", "sv")
STS_YEARS = ("sts2012", "sts2013", "sts2014", "sts2015", "sts2016")
#: The STS tasks of the quick suite: task name -> local dataset key.
QUICK_STS = {"stsb-dev": "stsb-dev", "stsb-test": "stsb-test", "sick-r-test": "sick-test", "sts17-en-en": "sts17-en-en"}
TURKU_KEYS = ("turku-release1-dev", "turku-opus-parsebank-dev")
SPLITS = ("dev", "test")


@dataclass
class SuiteTask:
    """One line of the suite: its evaluator's builder, and ``headline``, ``{metric key: (column label, scale)}`` of
    the summary table (scale 100 for fractions)."""

    name: str
    group: str
    build: Callable[[EmbeddingCache], Any]
    headline: dict[str, tuple[str, float]] = field(default_factory=dict)
    plot: str = ""  #: the data set whose score-level agreement (``stats``) is plotted when the suite writes files


def _sts(name: str, load: Callable[[], Any]) -> SuiteTask:
    headline = {f"{name}_spearman": ("Spearman", 100.0), f"{name}_pearson": ("Pearson", 100.0)}
    return SuiteTask(name, "STS", lambda cache: STSEvaluator({name: load()}, cache=cache), headline)


def _bitext(name: str, group: str, load: Callable[[], Any], directions: tuple[str, str]) -> SuiteTask:
    headline = {"src2trg_error": (f"{directions[0]} error %", 1.0), "trg2src_error": (f"{directions[1]} error %", 1.0)}
    return SuiteTask(name, group, lambda cache: BitextMiningEvaluator(load(), cache=cache), headline)


def _local(key: str, data_dir: Path) -> Callable[[], Any]:
    """A loader of local dataset ``key``; its file is checked now, so a missing one stops the suite before any work."""
    local_path(key, data_dir)
    return partial(load_local, key, data_dir)


def _tatoeba(lang: str, data_dir: Any) -> SuiteTask:
    load = _local(f"tatoeba-{lang}", data_dir)
    return _bitext(f"tatoeba-{lang}", "Bitext mining (Tatoeba)", load, (f"{lang}->eng", f"eng->{lang}"))


def xling_tasks(data_dir: Path) -> tuple[list[SuiteTask], dict[str, str]]:
    """The ``xling`` suite: FLORES devtest retrieval per language and its mean, Tatoeba, PAWS-X, English STS."""
    group = f"Bitext retrieval ({FLORES_CORPUS}, dev)"
    langs = flores_languages(data_dir)
    skipped = {
        f"flores-{lang}": f"no {FLORES_CORPUS} rows in {path}" if path.is_file() else f"{path} does not exist"
        for lang in BITEXT_LANGS
        if lang not in langs
        for path in [bitext_path(lang, data_dir)]
    }
    tasks = [
        _bitext(f"flores-{lang}", group, partial(load_flores, lang, data_dir), ("x->en", "en->x")) for lang in langs
    ]
    if langs:
        tasks.append(
            SuiteTask(
                "flores-mean",
                group,
                lambda cache: MultiBitextEvaluator({lang: load_flores(lang, data_dir) for lang in langs}, cache=cache),
                {
                    "mean_src2trg_error": ("x->en error %", 1.0),
                    "mean_trg2src_error": ("en->x error %", 1.0),
                    "mean_error": ("mean error %", 1.0),
                },
            )
        )
    tasks += [_tatoeba(lang, data_dir) for lang in ("deu", "fra")]
    group = "Paraphrase classification (PAWS-X, cosine threshold)"
    tasks += [
        _threshold(
            f"pawsx-{lang}-{split}",
            group,
            _local(f"pawsx-{lang}-{split}", data_dir),
            _local(f"pawsx-{lang}-dev", data_dir) if split == "test" else None,
        )
        for lang in PAWSX_LANGS
        for split in SPLITS
    ]
    tasks += [_sts(key, _local(key, data_dir)) for key in ("stsb-dev", "stsb-test", "sts17-en-en")]
    return tasks, skipped


def _threshold(
    name: str, group: str, loader: Callable[[], Any], threshold_loader: Callable[[], Any] | None = None
) -> SuiteTask:
    """A cosine-threshold task; ``threshold_loader`` (a test set's dev or train split) adds the accuracy at the
    threshold chosen there, so a test set's headline has a number that chose nothing on the test set."""

    def build(cache: EmbeddingCache) -> ThresholdClassificationEvaluator:
        dev = threshold_loader() if threshold_loader is not None else None
        source = f"pair classification set {name}"
        return ThresholdClassificationEvaluator(loader(), cache=cache, source=source, threshold_data=dev)

    return SuiteTask(
        name,
        group,
        build,
        {
            "cosine_accuracy": ("accuracy", 100.0),
            "cosine_accuracy_at_dev_threshold": ("accuracy at dev threshold", 100.0),
            "cosine_majority": ("majority rate", 100.0),
            "cosine_f1": ("F1", 100.0),
            "cosine_ap": ("AP", 100.0),
        },
    )


def _mlp(name: str, train: Callable[[], Any], test: Callable[[], Any]) -> SuiteTask:
    return SuiteTask(
        name,
        "Paraphrase MLP (Opusparcus protocol)",
        lambda cache: ParaphraseMLPEvaluator(train(), test(), cache=cache),
        {"accuracy": ("accuracy", 100.0), "all_paraphrase_accuracy": ("all-paraphrase baseline", 100.0)},
    )


def _agreement(
    name: str, loader: Callable[[], Any], level: Callable[[float], str], score_column: str = "score"
) -> SuiteTask:
    return SuiteTask(
        f"{name} agreement",  # not ``name``: that is also its STS or classification task's name
        "Human-score agreement",
        lambda cache: ScoreAgreementEvaluator(loader(), level=level, score_column=score_column, cache=cache),
        {"separation": ("mean cosine top level - bottom level", 1.0)},
        plot=name,
    )


def check_suite(suite: str) -> str:
    """``suite`` if it names one of :data:`SUITES`; else a ValueError listing them."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; choose one of {SUITES}")
    return suite


def suite_tasks(
    suite: str = "quick", data_dir: str | os.PathLike | None = None, opusparcus_dir: str | os.PathLike | None = None
) -> tuple[list[SuiteTask], dict[str, str]]:
    """The tasks of ``suite`` and ``{task: reason}`` for optional data that is absent (never silently)."""
    check_suite(suite)
    data_dir = data_folder(data_dir)
    if not data_dir.is_dir():
        raise FileNotFoundError(f"evaluation data folder {data_dir} does not exist (pass --data-dir / data_dir=)")
    if opusparcus_dir is not None and suite != "full":
        raise ValueError(f"--opusparcus-dir (opusparcus_dir=) is read by the full suite only, not by {suite!r}")
    if suite == "xling":
        return xling_tasks(data_dir)
    skipped: dict[str, str] = {}
    local = partial(_local, data_dir=data_dir)

    classification = "Paraphrase classification (cosine threshold)"
    tasks = [
        *(_sts(name, local(key)) for name, key in QUICK_STS.items()),
        _threshold("pawsx-en-test", classification, local("pawsx-en-test"), local("pawsx-en-dev")),
        _threshold("msrpc-test", classification, local("msrpc-test"), local("msrpc-train")),  # MSRPC has no dev
    ]
    if suite == "quick":
        return tasks, skipped

    # STS years (held out from the shared folder; used when a local copy sits next to the others)
    year_dirs = {year: data_dir / "sts" / year for year in STS_YEARS if (data_dir / "sts" / year).exists()}
    if year_dirs:

        def build_years(cache: EmbeddingCache) -> STSEvaluator:
            subsets: dict[str, Any] = {}
            for year, folder in year_dirs.items():
                subsets.update({f"{year}/{name}": data for name, data in load_sts_folder(folder).items()})
            groups = {year: [name for name in subsets if name.startswith(f"{year}/")] for year in year_dirs}
            return STSEvaluator(subsets, groups=groups, cache=cache)

        headline = {
            "wieting_pearson": ("mean Pearson over years (Wieting)", 100.0),
            "sbert_spearman": ("mean Spearman of pooled years (SBERT)", 100.0),
        }
        tasks.append(SuiteTask("sts2012-2016", "STS", build_years, headline))
    else:
        skipped["sts2012-2016"] = f"no {data_dir}/sts/sts2012..sts2016 folders (held-out data; MTEB has them online)"
    for track in sorted((data_dir / "sts" / "sts2017").glob("*.parquet")):
        if track.stem != "en-en":
            tasks.append(
                _sts(f"sts17-{track.stem}", partial(load_table, track, STS_COLUMNS, STS_COLUMNS[:2], STS_COLUMNS[2:]))
            )
    tasks.append(_sts("sick-r-dev", local("sick-dev")))
    others = [lang for lang in PAWSX_LANGS if lang != "en"]
    tasks += [
        _threshold(f"pawsx-{lang}-test", classification, local(f"pawsx-{lang}-test"), local(f"pawsx-{lang}-dev"))
        for lang in others
    ]
    for key in TURKU_KEYS:
        binary = partial(lambda load: turku_binary(load()), local(key))
        tasks.append(_threshold(f"{key} (labels>=3)", classification, binary))
    tasks.append(_mlp("msrpc train->test", local("msrpc-train"), local("msrpc-test")))
    tasks.append(_mlp("pawsx-en dev->test", local("pawsx-en-dev"), local("pawsx-en-test")))
    if opusparcus_dir is not None:
        found = [lang for lang in OPUSPARCUS_LANGS if opusparcus_path(opusparcus_dir, lang, "test").is_file()]
        if not found:
            raise FileNotFoundError(f"--opusparcus-dir {opusparcus_dir} has no <lang>/test/<lang>-test.txt file")
        for lang in found:
            dev, test = (partial(load_opusparcus, opusparcus_path(opusparcus_dir, lang, split)) for split in SPLITS)
            binary_dev, binary_test = (lambda load=load: opusparcus_binary(load()) for load in (dev, test))
            tasks.append(_mlp(f"opusparcus-{lang} dev->test", binary_dev, binary_test))
            tasks.append(_agreement(f"opusparcus-{lang}-dev", dev, exact_level))
    else:
        skipped["opusparcus"] = "no --opusparcus-dir given (Opusparcus is not in the shared data; Hub: GEM/opusparcus)"
    retrieval_headline = {
        f"{group}_{metric}": (f"{group} {label}", 1.0)
        for group in ("2", "3", "4<>", "4", "positive")
        for metric, label in (("top1", "top-1 %"), ("top10", "top-10 %"), ("mean_rank_pct", "mean rank %"))
    }
    for key in TURKU_KEYS:
        build = partial(lambda load, cache: RetrievalEvaluator(load(), cache=cache), local(key))
        tasks.append(SuiteTask(f"{key} retrieval", "Retrieval per label (Turku)", build, retrieval_headline))
    tasks += [_tatoeba(lang, data_dir) for lang in ("deu", "fra")]
    tasks.append(_agreement("stsb-test", local("stsb-test"), sts_bucket))
    tasks.append(_agreement("sick-r-test", local("sick-test"), sts_bucket))
    tasks.append(_agreement("turku-release1-dev", local("turku-release1-dev"), exact_level, score_column="label"))
    return tasks, skipped


def stsb_neighbour_tables(cache: EmbeddingCache, data_dir: Path, queries: int = 2, k: int = 10) -> list[str]:
    """Nearest-neighbour tables (Opusparcus Tables 4-5 style) for the first STSb-test pairs scored 5."""
    data = load_local("stsb-test", data_dir)
    picked = [row for row in data if row["score"] >= 5.0][:queries]
    candidates = list(dict.fromkeys([*data["sentence1"], *data["sentence2"]]))
    return neighbour_tables(
        cache, [row["sentence1"] for row in picked], candidates, k, [row["sentence2"] for row in picked]
    )


def run_suite(
    model: Any,
    suite: str = "quick",
    data_dir: str | os.PathLike | None = None,
    out_dir: str | os.PathLike | None = None,
    batch_size: int = 64,
    show_progress_bar: bool = False,
    opusparcus_dir: str | os.PathLike | None = None,
    model_name: str | None = None,
) -> dict[str, Any]:
    """Run the ``quick``, ``full`` or ``xling`` suite on ``model`` (open names with :func:`psp_st.load` first).

    Args:
        data_dir: the shared data folder (default ``$PSP_ST_DATA_DIR`` or ``../shared/data``).
        out_dir: when given, plots are written there (the report itself: :func:`psp_st.evaluation.write_report`).
        opusparcus_dir: root of an Opusparcus 1.0 copy (``<lang>/{dev,test}/<lang>-{dev,test}.txt``).
        model_name: name shown in the results and plots (default: from the model card, else its class).

    Returns:
        ``{"model", "suite", "data_dir", "seconds", "embedded_texts", "task_seconds", "results": {task: metrics},
        "summary": [{"group", "task", "metric", "value"}], "skipped": {task: reason}, "plots", "neighbours"}``.
    """
    require_installed(("datasets", "pyarrow", "scipy", "sklearn"), "eval", "run_suite")
    check_model(model)
    if not hasattr(model, "model_card_data"):  # ST's evaluators record their metrics on the model's card data
        raise TypeError(
            f"run_suite needs a SentenceTransformer, got {type(model).__name__}: open the model with "
            "psp_st.load(name) (a P-SP model is still embedded by psp-st's engine)"
        )
    # datasets' own bars ("Generating train split" of each file read) are off too unless bars are asked for (E14-4)
    with contextlib.nullcontext() if show_progress_bar else progress_bars_disabled():
        data_dir = data_folder(data_dir)
        model_name = model_name or model_label(model)
        tasks, skipped = suite_tasks(suite, data_dir, opusparcus_dir)
        if out_dir is not None and any(task.plot for task in tasks):
            require("matplotlib", "plots")  # before any work, not after the tasks before the first plot
        cache = EmbeddingCache(model, batch_size=batch_size, show_progress_bar=show_progress_bar)
        start = time.perf_counter()
        results: dict[str, dict[str, float]] = {}
        summary: list[dict[str, Any]] = []
        timings: dict[str, float] = {}
        plots: list[str] = []
        if out_dir is not None:
            Path(out_dir).mkdir(parents=True, exist_ok=True)
        bar = progress_bar(iterable=tasks, desc=f"{suite} suite", unit="task", disable=not show_progress_bar)
        for task in bar:
            bar.set_postfix_str(task.name)
            task_start = time.perf_counter()
            try:
                evaluator = task.build(cache)
                metrics = {key: float(value) for key, value in evaluator(model).items()}
            except ValueError as error:  # name the task: evaluators built here have no name of their own
                error.args = (f"suite task {task.name}: {error}",)
                raise
            timings[task.name] = time.perf_counter() - task_start
            results[task.name] = metrics
            for key, (label, scale) in task.headline.items():
                if key in metrics:
                    summary.append(
                        {"group": task.group, "task": task.name, "metric": label, "value": metrics[key] * scale}
                    )
            if task.plot and out_dir is not None:
                path = Path(out_dir) / f"agreement_{task.plot.replace('/', '_')}.png"
                plots.append(plot_score_levels(task.plot, evaluator.stats, path, title=f"{model_name}: {task.plot}"))
        neighbours = stsb_neighbour_tables(cache, data_dir) if suite == "full" else []
    return {
        "model": model_name,
        "suite": suite,
        "data_dir": str(data_dir),
        "seconds": time.perf_counter() - start,
        "embedded_texts": len(cache),
        "task_seconds": timings,
        "results": results,
        "summary": summary,
        "skipped": skipped,
        "plots": [os.path.basename(path) for path in plots],
        "neighbours": neighbours,
    }


class SuiteEvaluator(CachedEmbeddingEvaluator):
    """The suite as an ST evaluator (a trainer's ``evaluator=``): flat ``{task}_{metric}`` results; the primary
    metric is STS Benchmark dev Spearman, so checkpoint selection never looks at a test set."""

    def __init__(
        self, suite: str = "quick", data_dir: str | os.PathLike | None = None, name: str = "", batch_size: int = 64
    ) -> None:
        super().__init__(name=name, batch_size=batch_size)
        self.suite = check_suite(suite)
        self.data_dir = data_dir
        self.primary_metric = "stsb-dev_spearman"

    def compute_metrics(self, model: Any) -> dict[str, float]:
        result = run_suite(model, self.suite, data_dir=self.data_dir, batch_size=self.batch_size)
        return {
            key if key.startswith(f"{task}_") else f"{task}_{key}": value
            for task, values in result["results"].items()
            for key, value in values.items()
        }

    def get_config_dict(self) -> dict[str, Any]:
        return {"suite": self.suite}

"""MTEB tasks that read our local files, so ``mteb.evaluate(model, tasks)`` runs with no network.

Each class subclasses MTEB's own abstract task (``AbsTaskSTS``, ``AbsTaskPairClassification``,
``AbsTaskBitextMining``) and only replaces ``load_data``: scoring is MTEB's. The task names end in ``.local``
so their results never mix with the official tasks' in an MTEB results cache. With network access, use the
official tasks unchanged: ``mteb.get_tasks(tasks=list(OFFICIAL_NAMES.values()))`` (see :func:`get_tasks`).

Example::

    import mteb
    from psp_st.evaluation.mteb_tasks import get_tasks

    results = mteb.evaluate(model, get_tasks(["STSBenchmark"], data_dir="../shared/data"), cache=None)
"""

from __future__ import annotations

import os
from typing import Any

try:
    from mteb.abstasks.pair_classification import AbsTaskPairClassification
    from mteb.abstasks.sts import AbsTaskSTS
    from mteb.abstasks.task_metadata import TaskMetadata, TaskType
    from mteb.abstasks.text.bitext_mining import AbsTaskBitextMining
except ImportError as error:  # pragma: no cover - mteb ships with the eval extra
    raise ImportError("the MTEB tasks need mteb>=2: pip install 'psp-st[eval]'") from error

from psp_st.evaluation.loaders import BITEXT_LANGS, PAWSX_LANGS, load_flores, load_local

_COMMON: dict[str, Any] = {
    "category": "t2t",
    "modalities": ["text"],
    "date": ("2012-01-01", "2017-12-31"),
    "domains": ["Written"],
    "task_subtypes": [],
    "annotations_creators": "human-annotated",
    "dialect": [],
    "sample_creation": "found",
    "bibtex_citation": "",
}


def _metadata(
    name: str,
    description: str,
    task_type: TaskType,
    main_score: str,
    eval_langs: Any,
    reference: str,
    license: str = "not specified",
    eval_splits: tuple[str, ...] = ("test",),
    adapted_from: str | None = None,
) -> TaskMetadata:
    return TaskMetadata(
        name=name,
        description=description,
        reference=reference,
        type=task_type,
        main_score=main_score,
        eval_splits=list(eval_splits),
        eval_langs=eval_langs,
        license=license,
        # MTEB requires a dataset reference; these tasks never call load_dataset with it
        dataset={"path": f"local/{name}", "revision": "local"},
        adapted_from=[adapted_from] if adapted_from else None,
        **_COMMON,
    )


class _LocalData:
    """Mixin: ``load_data`` builds ``self.dataset`` from the shared data folder instead of the Hub."""

    #: ``{hf subset: {split: local dataset key}}``; the subset ``None`` for a task without subsets.
    files: dict[str | None, dict[str, str]] = {}
    #: Column renames from our files to MTEB's columns.
    renames: dict[str, str] = {}
    #: Set by MTEB's ``AbsTask`` (the other base of every subclass).
    data_loaded: bool
    dataset: Any
    hf_subsets: list[str]

    def __init__(self, data_dir: str | os.PathLike | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_dir = data_dir

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        from datasets import DatasetDict

        def splits(files: dict[str, str]) -> Any:
            return DatasetDict({split: self.load(key) for split, key in files.items()})

        if None in self.files:
            self.dataset = splits(self.files[None])
        else:
            self.dataset = {subset: splits(self.files[subset]) for subset in self.hf_subsets}
        self.data_loaded = True

    def load(self, key: str) -> Any:
        """One split: the local dataset ``key`` with MTEB's column names."""
        dataset = load_local(key, self.data_dir)
        return dataset.rename_columns(self.renames) if self.renames else dataset


class STSBenchmarkLocal(_LocalData, AbsTaskSTS):
    """MTEB's ``STSBenchmark`` on the local STS Benchmark files (scores 0-5)."""

    min_score = 0
    max_score = 5
    files = {None: {"validation": "stsb-dev", "test": "stsb-test"}}
    metadata = _metadata(
        "STSBenchmark.local",
        "STS Benchmark (Cer et al., 2017) read from local Parquet files.",
        "STS",
        "cosine_spearman",
        ["eng-Latn"],
        "https://aclanthology.org/S17-2001",
        license="cc-by-sa-4.0",
        adapted_from="STSBenchmark",
    )


class SICKRLocal(_LocalData, AbsTaskSTS):
    """MTEB's ``SICK-R`` on the local SICK files (relatedness on a 1-5 scale)."""

    min_score = 1
    max_score = 5
    files = {None: {"test": "sick-test"}}
    metadata = _metadata(
        "SICK-R.local",
        "SICK relatedness (Marelli et al., 2014) read from local Parquet files.",
        "STS",
        "cosine_spearman",
        ["eng-Latn"],
        "https://aclanthology.org/L14-1314",
        license="cc-by-nc-sa-3.0",
        adapted_from="SICK-R",
    )


class STS17Local(_LocalData, AbsTaskSTS):
    """MTEB's ``STS17`` English-English track on the local file (the other tracks are held out here)."""

    min_score = 0
    max_score = 5
    files = {"en-en": {"test": "sts17-en-en"}}
    metadata = _metadata(
        "STS17.local",
        "SemEval-2017 STS track 5 (en-en) read from a local Parquet file.",
        "STS",
        "cosine_spearman",
        {"en-en": ["eng-Latn", "eng-Latn"]},
        "https://aclanthology.org/S17-2001",
        license="cc-by-sa-4.0",
        adapted_from="STS17",
    )


class MSRPCLocal(_LocalData, AbsTaskPairClassification):
    """Microsoft Research Paraphrase Corpus test set as an MTEB pair-classification task."""

    files = {None: {"test": "msrpc-test"}}
    renames = {"label": "labels"}
    metadata = _metadata(
        "MSRPC.local",
        "MSR Paraphrase Corpus (Dolan & Brockett, 2005), local test file.",
        "PairClassification",
        "max_ap",
        ["eng-Latn"],
        "https://aclanthology.org/I05-5002",
    )


#: MTEB language-script code of each PAWS-X language (the languages themselves: ``loaders.PAWSX_LANGS``).
PAWSX_CODES = {
    "de": "deu-Latn",
    "en": "eng-Latn",
    "es": "spa-Latn",
    "fr": "fra-Latn",
    "ja": "jpn-Jpan",
    "ko": "kor-Hang",
    "zh": "cmn-Hans",
}


class PawsXLocal(_LocalData, AbsTaskPairClassification):
    """MTEB's ``PawsXPairClassification`` on the local PAWS-X files (7 languages)."""

    files = {lang: {"test": f"pawsx-{lang}-test", "validation": f"pawsx-{lang}-dev"} for lang in PAWSX_LANGS}
    renames = {"label": "labels"}
    metadata = _metadata(
        "PawsXPairClassification.local",
        "PAWS-X (Yang et al., 2019) read from local files.",
        "PairClassification",
        "max_ap",
        {lang: [PAWSX_CODES[lang]] for lang in PAWSX_LANGS},
        "https://aclanthology.org/D19-1382",
        eval_splits=("test", "validation"),
        adapted_from="PawsXPairClassification",
    )


class TatoebaLocal(_LocalData, AbsTaskBitextMining):
    """MTEB's ``Tatoeba`` bitext mining on the local LASER v1 test sets (deu-eng, fra-eng)."""

    files = {f"{lang}-eng": {"test": f"tatoeba-{lang}"} for lang in ("deu", "fra")}
    renames = {"source": "sentence1", "target": "sentence2"}
    metadata = _metadata(
        "Tatoeba.local",
        "Tatoeba (LASER v1 test sets) read from local Parquet files.",
        "BitextMining",
        "f1",
        {"deu-eng": ["deu-Latn", "eng-Latn"], "fra-eng": ["fra-Latn", "eng-Latn"]},
        "https://github.com/facebookresearch/LASER",
        license="cc-by-2.0",
        adapted_from="Tatoeba",
    )


#: FLORES-200 code (language_Script) of each bitext language (the languages: ``loaders.BITEXT_LANGS``).
FLORES_CODES = {
    "ar": "arb_Arab",
    "cs": "ces_Latn",
    "de": "deu_Latn",
    "es": "spa_Latn",
    "fi": "fin_Latn",
    "fr": "fra_Latn",
    "ru": "rus_Cyrl",
    "sv": "swe_Latn",
    "tr": "tur_Latn",
    "zh": "zho_Hans",
}
_ENGLISH = "eng_Latn"
#: ``{subset: [lang-Script, lang-Script]}``, both directions per language, named like the official task's.
_FLORES_SUBSETS = {
    f"{first}-{second}": [first.replace("_", "-"), second.replace("_", "-")]
    for lang in BITEXT_LANGS
    for first, second in ((FLORES_CODES[lang], _ENGLISH), (_ENGLISH, FLORES_CODES[lang]))
}


class FloresLocal(_LocalData, AbsTaskBitextMining):
    """MTEB's ``FloresBitextMining`` (X-English pairs only) on the FLORES-200 devtest rows of the local bitext
    files, both directions (``deu_Latn-eng_Latn`` retrieves English for German sentences, ``eng_Latn-deu_Latn``
    the reverse). These rows are the cross-lingual *dev* set of psp-st's recipes (dropped from training).
    Narrow the languages with ``task.filter_languages(...)``; a language whose file is absent is an error."""

    files = {subset: {"devtest": subset} for subset in _FLORES_SUBSETS}
    metadata = _metadata(
        "FloresBitextMining.local",
        "FLORES-200 devtest X-English pairs read from the local bitext files.",
        "BitextMining",
        "f1",
        _FLORES_SUBSETS,
        "https://huggingface.co/datasets/facebook/flores",
        license="cc-by-sa-4.0",
        eval_splits=("devtest",),
        adapted_from="FloresBitextMining",
    )

    def load(self, key: str) -> Any:
        first, second = key.split("-")
        foreign = first if first != _ENGLISH else second
        lang = next(lang for lang, code in FLORES_CODES.items() if code == foreign)
        columns = ("sentence1", "sentence2") if first == foreign else ("sentence2", "sentence1")
        return load_flores(lang, self.data_dir).rename_columns(dict(zip(("source", "target"), columns, strict=True)))


#: Local task class by official MTEB task name.
LOCAL_TASKS: dict[str, type] = {
    "STSBenchmark": STSBenchmarkLocal,
    "SICK-R": SICKRLocal,
    "STS17": STS17Local,
    "MSRPC": MSRPCLocal,
    "PawsXPairClassification": PawsXLocal,
    "Tatoeba": TatoebaLocal,
    "FloresBitextMining": FloresLocal,
}

#: Official MTEB names of the local tasks (MSRPC is not an MTEB task, so it has no online twin here).
OFFICIAL_NAMES = ["STSBenchmark", "SICK-R", "STS17", "PawsXPairClassification", "Tatoeba", "FloresBitextMining"]
#: The MTEB tasks of the ``xling`` suite (cross-lingual models and their English retention).
XLING_TASKS = ["FloresBitextMining", "Tatoeba", "PawsXPairClassification", "STS17", "STSBenchmark"]


def get_tasks(
    names: list[str] | None = None, data_dir: str | os.PathLike | None = None, offline: bool = True
) -> list[Any]:
    """MTEB task objects: local (offline) versions by default, the official ones with ``offline=False``.

    Args:
        names: official task names (keys of :data:`LOCAL_TASKS`); all when ``None``.
        data_dir: the shared data folder for the local tasks.
        offline: ``False`` returns ``mteb.get_tasks(names)`` (downloads from the Hub).
    """
    names = list(names or LOCAL_TASKS)
    unknown = [name for name in names if name not in LOCAL_TASKS]
    if unknown:
        raise ValueError(f"no local MTEB task for {unknown}; available: {sorted(LOCAL_TASKS)}")
    if not offline:
        import mteb

        return list(mteb.get_tasks(tasks=[name for name in names if name in OFFICIAL_NAMES]))
    return [LOCAL_TASKS[name](data_dir=data_dir) for name in names]

"""MTEB's own tasks reading our local files (``mteb.evaluate(model, get_tasks(...))`` with no network; scoring is
MTEB's), named ``<official>.local`` so their results never mix with the official tasks' in an MTEB results cache."""

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

#: MTEB's task type and main score, and the renames of our columns to MTEB's, of each abstract task we have twins of.
_KINDS: dict[type, tuple[TaskType, str, dict[str, str]]] = {
    AbsTaskSTS: ("STS", "cosine_spearman", {}),
    AbsTaskPairClassification: ("PairClassification", "max_ap", {"label": "labels"}),
    AbsTaskBitextMining: ("BitextMining", "f1", {"source": "sentence1", "target": "sentence2"}),
}


class _LocalData:
    """Mixin: ``load_data`` builds ``self.dataset`` from the shared data folder instead of the Hub."""

    #: ``{hf subset: {split: local dataset key}}``; the subset ``None`` for a task without subsets.
    files: dict[str | None, dict[str, str]] = {}
    renames: dict[str, str] = {}
    # set by MTEB's ``AbsTask`` (the other base of every subclass)
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

        def splits(keys: dict[str, str]) -> Any:
            return DatasetDict({split: self.load(key) for split, key in keys.items()})

        files = self.files
        self.dataset = splits(files[None]) if None in files else {name: splits(files[name]) for name in self.hf_subsets}
        self.data_loaded = True

    def load(self, key: str) -> Any:
        """One split: the local dataset ``key`` with MTEB's column names."""
        dataset = load_local(key, self.data_dir)
        return dataset.rename_columns(self.renames) if self.renames else dataset


def _local_task(
    official: str,
    base: type,
    files: dict[str | None, dict[str, str]],
    description: str,
    reference: str,
    eval_langs: Any = None,
    license: str = "not specified",
    eval_splits: tuple[str, ...] = ("test",),
    **attributes: Any,
) -> type[Any]:
    """MTEB's ``base`` task named ``<official>.local`` whose ``load_data`` reads ``files`` (local dataset keys);
    ``attributes`` become class attributes (``min_score``, ``renames``, a ``load`` override). ``eval_langs``: English by default."""
    task_type, main_score, renames = _KINDS[base]
    metadata = TaskMetadata(
        name=f"{official}.local",
        description=f"{description} read from local files.",
        reference=reference,
        type=task_type,
        main_score=main_score,
        eval_splits=list(eval_splits),
        eval_langs=eval_langs or ["eng-Latn"],
        license=license,
        dataset={"path": f"local/{official}.local", "revision": "local"},  # required by MTEB, never loaded
        adapted_from=None if official == "MSRPC" else [official],  # MSRPC is no MTEB task
        category="t2t",
        date=("2012-01-01", "2017-12-31"),
        domains=["Written"],
        task_subtypes=[],
        annotations_creators="human-annotated",
        dialect=[],
        sample_creation="found",
        bibtex_citation="",
    )
    doc = f"MTEB's ``{official}`` on the local files: {description}."
    body = {"__doc__": doc, "__module__": __name__, "files": files, "metadata": metadata, "renames": renames}
    return type(f"{official.replace('-', '')}Local", (_LocalData, base), {**body, **attributes})


#: FLORES-200 code (language_Script) of each bitext and PAWS-X language (MTEB writes them ``lang-Script``).
FLORES_CODES = {
    "ar": "arb_Arab",
    "cs": "ces_Latn",
    "de": "deu_Latn",
    "en": "eng_Latn",
    "es": "spa_Latn",
    "fi": "fin_Latn",
    "fr": "fra_Latn",
    "ja": "jpn_Jpan",
    "ko": "kor_Hang",
    "ru": "rus_Cyrl",
    "sv": "swe_Latn",
    "tr": "tur_Latn",
    "zh": "zho_Hans",
}
_ENGLISH = FLORES_CODES["en"]
#: ``{subset: [lang-Script, lang-Script]}``, both directions per language, named like the official task's.
_FLORES_SUBSETS = {
    f"{first}-{second}": [first.replace("_", "-"), second.replace("_", "-")]
    for lang in BITEXT_LANGS
    for first, second in ((FLORES_CODES[lang], _ENGLISH), (_ENGLISH, FLORES_CODES[lang]))
}


def _load_flores(task: Any, key: str) -> Any:
    """One FLORES subset (``deu_Latn-eng_Latn``: German ``sentence1``, English ``sentence2``; the reverse too)."""
    first, second = key.split("-")
    foreign = first if first != _ENGLISH else second
    lang = next(lang for lang, code in FLORES_CODES.items() if code == foreign)
    columns = ("sentence1", "sentence2") if first == foreign else ("sentence2", "sentence1")
    return load_flores(lang, task.data_dir).rename_columns(dict(zip(("source", "target"), columns, strict=True)))


_STS_PAPER = "https://aclanthology.org/S17-2001"
_TASKS = [
    _local_task(
        "STSBenchmark",
        AbsTaskSTS,
        {None: {"validation": "stsb-dev", "test": "stsb-test"}},
        "STS Benchmark (Cer et al., 2017), scores 0-5",
        _STS_PAPER,
        license="cc-by-sa-4.0",
        min_score=0,
        max_score=5,
    ),
    _local_task(
        "SICK-R",
        AbsTaskSTS,
        {None: {"test": "sick-test"}},
        "SICK relatedness (Marelli et al., 2014), scores 1-5",
        "https://aclanthology.org/L14-1314",
        license="cc-by-nc-sa-3.0",
        min_score=1,
        max_score=5,
    ),
    _local_task(
        "STS17",
        AbsTaskSTS,
        {"en-en": {"test": "sts17-en-en"}},
        "SemEval-2017 STS track 5, en-en (the other tracks are held out here)",
        _STS_PAPER,
        {"en-en": ["eng-Latn", "eng-Latn"]},
        license="cc-by-sa-4.0",
        min_score=0,
        max_score=5,
    ),
    _local_task(
        "MSRPC",
        AbsTaskPairClassification,
        {None: {"test": "msrpc-test"}},
        "MSR Paraphrase Corpus (Dolan & Brockett, 2005), test set",
        "https://aclanthology.org/I05-5002",
    ),
    _local_task(
        "PawsXPairClassification",
        AbsTaskPairClassification,
        {lang: {"test": f"pawsx-{lang}-test", "validation": f"pawsx-{lang}-dev"} for lang in PAWSX_LANGS},
        "PAWS-X (Yang et al., 2019), 7 languages",
        "https://aclanthology.org/D19-1382",
        {lang: [FLORES_CODES[lang].replace("_", "-").replace("zho", "cmn")] for lang in PAWSX_LANGS},  # MTEB: cmn
        eval_splits=("test", "validation"),
    ),
    _local_task(
        "Tatoeba",
        AbsTaskBitextMining,
        {f"{lang}-eng": {"test": f"tatoeba-{lang}"} for lang in ("deu", "fra")},
        "Tatoeba bitext mining, LASER v1 test sets deu-eng and fra-eng",
        "https://github.com/facebookresearch/LASER",
        {"deu-eng": ["deu-Latn", "eng-Latn"], "fra-eng": ["fra-Latn", "eng-Latn"]},
        license="cc-by-2.0",
    ),
    # X-English, both directions: the recipes' cross-lingual dev set. Narrow it with ``task.filter_languages(...)``.
    _local_task(
        "FloresBitextMining",
        AbsTaskBitextMining,
        {subset: {"devtest": subset} for subset in _FLORES_SUBSETS},
        "FLORES-200 devtest X-English pairs of the bitext files",
        "https://huggingface.co/datasets/facebook/flores",
        _FLORES_SUBSETS,
        license="cc-by-sa-4.0",
        eval_splits=("devtest",),
        load=_load_flores,
        renames={},  # _load_flores orients each subset itself
    ),
]
#: Local task class by official MTEB task name.
LOCAL_TASKS: dict[str, type] = {task.metadata.name.removesuffix(".local"): task for task in _TASKS}
STSBenchmarkLocal = LOCAL_TASKS["STSBenchmark"]

#: Official MTEB names of the local tasks (MSRPC is not an MTEB task, so it has no online twin here).
OFFICIAL_NAMES = [name for name in LOCAL_TASKS if name != "MSRPC"]
#: The MTEB tasks of the ``xling`` suite (cross-lingual models and their English retention).
XLING_TASKS = ["FloresBitextMining", "Tatoeba", "PawsXPairClassification", "STS17", "STSBenchmark"]


def get_tasks(
    names: list[str] | None = None, data_dir: str | os.PathLike | None = None, offline: bool = True
) -> list[Any]:
    """MTEB task objects of official ``names`` (keys of :data:`LOCAL_TASKS`; all when ``None``): the local versions
    reading ``data_dir``, or with ``offline=False`` the official ones (``mteb.get_tasks``, downloads from the Hub)."""
    names = list(names or LOCAL_TASKS)
    unknown = [name for name in names if name not in LOCAL_TASKS]
    if unknown:
        raise ValueError(f"no local MTEB task for {unknown}; available: {sorted(LOCAL_TASKS)}")
    if not offline:
        import mteb

        return list(mteb.get_tasks(tasks=[name for name in names if name in OFFICIAL_NAMES]))
    return [LOCAL_TASKS[name](data_dir=data_dir) for name in names]

"""The mining job (paraphrases from one input, bitext from a source and a target): embed, index, search both ways,
score by margin, filter, write pairs to Parquet in chunks; every stage resumable in the work folder."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import math
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from psp_st.arguments import check_int, check_number
from psp_st.data.dedup import ExactDedup
from psp_st.data.filters import (
    ExcludeTextsFilter,
    FilterCount,
    IdenticalFilter,
    LengthRatioFilter,
    TrigramOverlapFilter,
    length_ratio,
    text_key,
    trigram_overlap,
)
from psp_st.io.atomic import atomic_path, atomic_write_json
from psp_st.io.checksums import sha256_file
from psp_st.mining.ann import (
    IndexSpec,
    build_index,
    exact_search,
    exact_similarities,
    ivf_lists,
    load_index,
    recall_at_k,
    save_index,
    search,
)
from psp_st.mining.embed_shards import embed_shards
from psp_st.mining.executor import Execution, session
from psp_st.mining.knn_shards import knn_shards, read_neighbours, vector_shards
from psp_st.mining.margin import STRATEGIES, best_margin_mask, candidate_pairs, knn_mean, ratio_margin
from psp_st.mining.shards import (
    ShardedVectors,
    input_files,
    plan_shards,
    read_job_json,
    read_manifest,
    read_shard_texts,
)

logger = logging.getLogger(__name__)

#: Columns of the mined-pairs Parquet file and their Arrow types.
_SCHEMA = {"sentence1": "large_string", "sentence2": "large_string"}
_SCHEMA |= dict.fromkeys(("score", "cosine", "trigram_overlap", "length_ratio"), "float32")
_SCHEMA |= {"id1": "int64", "id2": "int64"}
PAIR_COLUMNS = tuple(_SCHEMA)


@dataclass(frozen=True)
class MiningConfig:
    """Settings of a mining job.

    Args:
        k: neighbours per sentence, for candidates and for the margin's neighbourhood means (the margin paper: 4).
        strategy: ``all`` (every candidate; default for paraphrases) or ``max`` (best per sentence; the bitext paper).
        max_cosine: below 1 drops near-copies.
        max_trigram_overlap / max_length_ratio: drop pairs sharing more word trigrams than this (ParaNMT: 0.7) /
            whose character lengths differ by more than this factor; None: off.
        length_scale: sentence1's character count is multiplied by this before the length ratio (bitext in a denser
            script: the median target/source character ratio, :func:`psp_st.data.filters.median_length_ratio`, e.g.
            ~3.5 for Chinese-English); the ``length_ratio`` column is the scaled one.
        dedup: collapse repeated texts (up to case and punctuation) before embedding (a copy would fill a neighbour
            slot and raise the margin's denominator) and drop repeated pairs (monolingual: in either order).
        languages: expected language(s) of sentence1 and sentence2 (py3langid codes; None: no language filter).
        exclude: texts whose pairs are dropped (e.g. evaluation sentences, for decontamination).
        recall_k / recall_sample: ANN recall@k is measured against exact search on this many sampled queries.
        shard_rows / chunk_rows: rows per embedding/search shard; candidate pairs per scoring chunk (row group).
        float16: store the work folder's vectors as float16.
    """

    k: int = 4
    strategy: str = "all"
    min_margin: float = 1.1
    min_cosine: float = -1.0
    max_cosine: float = 1.0
    max_trigram_overlap: float | None = 0.7
    max_length_ratio: float | None = 2.0
    length_scale: float = 1.0
    dedup: bool = True
    languages: tuple[str | None, str | None] | None = None
    exclude: frozenset[str] = field(default_factory=frozenset, repr=False)
    index: IndexSpec = field(default_factory=IndexSpec)
    recall_k: int = 10
    recall_sample: int = 1000
    shard_rows: int = 100_000
    chunk_rows: int = 200_000
    float16: bool = False
    seed: int = 0

    def __post_init__(self) -> None:
        check_int("k (--k)", self.k)
        check_int("recall_k (--recall-k)", self.recall_k)
        check_int("recall_sample (--recall-sample)", self.recall_sample, minimum=0)
        if self.strategy not in STRATEGIES:
            raise ValueError(f"unknown strategy {self.strategy!r}; use one of {STRATEGIES}")
        if not -1.0 <= self.min_cosine <= self.max_cosine <= 1.0:
            raise ValueError(f"need -1 <= min_cosine <= max_cosine <= 1, got {self.min_cosine}, {self.max_cosine}")
        check_int("chunk_rows", self.chunk_rows)
        check_number("min_margin (--min-margin)", self.min_margin)
        if not (math.isfinite(self.length_scale) and self.length_scale > 0):
            raise ValueError(f"length_scale (--length-scale) must be a finite number > 0, got {self.length_scale}")
        if self.k == 1 and self.min_margin > 1:  # a pair's cosine is at most either side's nearest neighbour's
            raise ValueError(f"k (--k) 1 makes every margin <= 1: no pair reaches {self.min_margin}; use k >= 2")
        object.__setattr__(self, "exclude", frozenset(text_key(text) for text in self.exclude))
        self.filters()  # validates the filter settings (and py3langid's language codes)

    def filters(self, monolingual: bool = True) -> list[Any]:
        """The text filters in the order applied (cheap first), each with ``name`` and ``keep(batch)``."""
        steps: list[Any] = [IdenticalFilter()]
        if self.exclude:
            steps.append(ExcludeTextsFilter(self.exclude))
        if self.max_length_ratio is not None:
            steps.append(LengthRatioFilter(self.max_length_ratio, self.length_scale))
        if self.max_trigram_overlap is not None:
            steps.append(TrigramOverlapFilter(self.max_trigram_overlap))
        if self.dedup:
            steps.append(ExactDedup(symmetric=monolingual))
        if self.languages is not None:
            from psp_st.data.language import LanguageFilter, language_codes

            steps.append(
                LanguageFilter(sentence1=language_codes(self.languages[0]), sentence2=language_codes(self.languages[1]))
            )
        return steps

    def to_dict(self) -> dict[str, Any]:
        data = {key: value for key, value in asdict(self).items() if key != "exclude"}
        data["excluded_texts"] = len(self.exclude)
        return data


def _read_texts(folder: Path) -> Any:
    """All texts of an embedding job's input, as one Arrow string array indexed by row."""
    import pyarrow as pa

    arrays = [pa.array(read_shard_texts(shard), type=pa.large_string()) for shard in vector_shards(folder)]
    return pa.concat_arrays(arrays)


def _distinct_texts(
    spec: Any, path: Path, column: str, config: MiningConfig, overwrite: bool = False
) -> tuple[Any, str, np.ndarray, int]:
    """What to embed for one side: ``spec`` itself, or (``config.dedup`` and repeated texts) the Parquet ``path``
    of its distinct texts, the first of each group of equal :func:`text_key`. Returns it, its column, the input row
    of each row embedded and the input's row count."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    shards = plan_shards(input_files(spec), config.shard_rows, column)
    total = sum(shard.rows for shard in shards)
    if not config.dedup:
        return spec, column, np.arange(total), total
    texts = [text for shard in shards for text in read_shard_texts(shard)]
    first: dict[str, int] = {}
    rows = np.asarray([i for i, text in enumerate(texts) if first.setdefault(text_key(text), i) == i], np.int64)
    if len(rows) == total:
        return spec, column, rows, total
    table = pa.table({"sentence": pa.array([texts[i] for i in rows], pa.large_string()), "row": rows})
    same = path.is_file() and pq.read_table(path).equals(table)
    if not same and (overwrite or not path.is_file()):
        with atomic_path(path) as tmp:
            pq.write_table(table, tmp, row_group_size=config.shard_rows)
    elif not same:
        raise ValueError(
            f"the input {' '.join(map(str, _as_list(spec)))} changed since the job in {path.parent} started: pass "
            "--overwrite to start over, or use a new output folder"
        )
    return [path], "sentence", rows, total


def _index(vectors_folder: Path, path: Path, spec: IndexSpec) -> Path:
    """Build (or reuse, when built from the same vectors with the same spec) the FAISS index of a vector folder."""
    meta_path = path.with_suffix(".json")
    meta = {"vectors": read_manifest(vectors_folder)["shards"], "spec": spec.config()}
    saved = None
    if path.is_file() and meta_path.is_file():
        with contextlib.suppress(ValueError):  # a damaged record: the index is built again
            saved = read_job_json(meta_path)
        if (
            isinstance(saved, dict)
            and saved.get("meta") == json.loads(json.dumps(meta))
            and saved.get("sha256") == sha256_file(path)
        ):
            return path
    started = time.perf_counter()
    vectors = ShardedVectors.open(vectors_folder)
    save_index(build_index(vectors, spec), path)
    seconds = time.perf_counter() - started
    kind = spec.resolve(len(vectors))
    nlist = ivf_lists(spec, len(vectors)) if kind.startswith("ivf") else None
    atomic_write_json(
        meta_path, {"meta": meta, "sha256": sha256_file(path), "kind": kind, "nlist": nlist, "seconds": seconds}
    )
    return path


def measure_recall(
    index_path: Path,
    queries: ShardedVectors,
    targets: ShardedVectors,
    k: int,
    sample: int,
    seed: int,
    monolingual: bool,
    spec: IndexSpec,
) -> dict[str, Any]:
    """ANN recall@k against exact search on ``sample`` seeded random queries."""
    size = min(sample, len(queries))
    if size == 0:
        return {"k": k, "queries": 0, "recall": None}
    rows = np.sort(np.random.default_rng(seed).choice(len(queries), size=size, replace=False))
    vectors = queries.take(rows)
    k = min(k, len(targets) - int(monolingual))
    index = load_index(index_path, nprobe=spec.nprobe, ef_search=spec.ef_search)
    _, approx = search(index, vectors, k, exclude=rows if monolingual else None)
    exact_sims, exact = exact_search(vectors, targets, k, exclude=rows if monolingual else None)
    true_sims = exact_similarities(vectors, targets, approx)
    return {
        "k": k,
        "queries": size,
        "recall": recall_at_k(approx, exact),
        "recall_with_ties": recall_at_k(approx, exact, true_sims, exact_sims),
    }


def mining_config(options: dict[str, Any], bitext: bool = False) -> MiningConfig:
    """A :class:`MiningConfig` from ``psp-st mine``'s flat options, named like its and :class:`IndexSpec`'s fields
    (``index``: the kind; other names are ignored). ``strategy`` None: ``all``, or ``max`` for ``bitext``; ``lang``
    sets both languages, ``source_lang``/``target_lang`` one (bitext only); ``exclude_data_dir`` drops pairs with a
    sentence of that data folder's evaluation files, in every language (FLORES-200 devtest rows included);
    ``shard_rows`` None is the default."""

    def pick(cls: type) -> dict[str, Any]:
        return {f.name: options[f.name] for f in fields(cls) if options.get(f.name) is not None}

    lang, source_lang, target_lang = options.get("lang"), options.get("source_lang"), options.get("target_lang")
    if not bitext and (source_lang or target_lang):
        raise ValueError("--source-lang/--target-lang are for bitext mining (with --target); use --lang")
    exclude: frozenset[str] = frozenset()
    if options.get("exclude_data_dir"):
        from psp_st.evaluation.decontamination import evaluation_sentences  # imports the evaluators: only when asked

        exclude = frozenset(evaluation_sentences(options["exclude_data_dir"], every_language=True))
        if not exclude:  # a wrong folder would exclude nothing, silently
            raise ValueError(
                f"--exclude-data-dir {options['exclude_data_dir']} holds no evaluation file (sts/, "
                "pair_classification/, bitext_mining/, FLORES rows of bitext/): pass the shared data folder"
            )
    settings = {
        **pick(MiningConfig),
        "strategy": options.get("strategy") or ("max" if bitext else "all"),
        "languages": (source_lang or lang, target_lang or lang) if (lang or source_lang or target_lang) else None,
        "dedup": not options.get("no_dedup", False),
        "exclude": exclude,
        "index": IndexSpec(**{**pick(IndexSpec), "kind": options.get("index") or "auto"}),
    }
    return MiningConfig(**settings)


def mine_pairs(
    source: str | os.PathLike | Sequence[str | os.PathLike],
    output: str | os.PathLike,
    model: str,
    target: str | os.PathLike | Sequence[str | os.PathLike] | None = None,
    config: MiningConfig | None = None,
    column: str = "sentence",
    target_column: str | None = None,
    work_dir: str | os.PathLike | None = None,
    execution: Execution | None = None,
    overwrite: bool = False,
) -> dict[str, Any]:
    """Mine pairs from ``source`` (monolingual) or between ``source`` and ``target`` (bitext) into ``output``; returns
    the report (also written as ``<output>.json``). ``work_dir`` (default ``<output>.work``) keeps the resumable
    stages: one whose input or settings changed is refused (kNN: recomputed), or with ``overwrite`` started over."""
    config = config or MiningConfig()
    execution = execution or Execution()
    output = Path(output)
    if output.suffix != ".parquet":
        raise ValueError(f"output must end in .parquet, got {output}")
    work = Path(work_dir) if work_dir else output.with_name(output.name + ".work")
    monolingual = target is None
    timings: dict[str, float] = {}

    def stage(name: str, started: float) -> None:
        timings[name] = round(time.perf_counter() - started, 3)
        logger.info("mine: %s took %.1f s", name, timings[name])

    started = time.perf_counter()
    sides = {"source": (source, column)}
    if target is not None:
        sides["target"] = (target, target_column or column)
    distinct = {}
    for name, (spec, side_column) in sides.items():
        distinct[name] = _distinct_texts(spec, work / f"{name}-distinct.parquet", side_column, config, overwrite)
        files, count = " ".join(map(str, _as_list(spec))), len(distinct[name][2])
        if not monolingual and not count:
            raise ValueError(f"{'--input' if name == 'source' else '--target'} {files} has no sentences")
        if monolingual and count < 2:
            adjective = "distinct " if config.dedup else ""
            raise ValueError(f"need at least 2 {adjective}sentences to mine pairs; --input {files} has {count}")
    with session(execution):  # one Ray connection for the embedding and search jobs
        embed = functools.partial(
            embed_shards,
            model=model,
            shard_rows=config.shard_rows,
            normalize=True,
            float16=config.float16,
            execution=execution,
            overwrite=overwrite,
        )
        for name, (spec, side_column, _, _) in distinct.items():
            embed(spec, work / f"{name}-vectors", column=side_column)
        stage("embed", started)
        source_dir = work / "source-vectors"
        target_dir = source_dir if monolingual else work / "target-vectors"
        sources, targets = ShardedVectors.open(source_dir), ShardedVectors.open(target_dir)
        k = min(config.k, len(targets) - int(monolingual))

        started = time.perf_counter()
        target_index = _index(target_dir, work / "target.faiss", config.index)
        source_index = None if monolingual else _index(source_dir, work / "source.faiss", config.index)
        stage("index", started)

        started = time.perf_counter()
        search = functools.partial(
            knn_shards, nprobe=config.index.nprobe, ef_search=config.index.ef_search, execution=execution
        )
        search(target_index, source_dir, target_dir, work / "knn-forward", k, exclude_self=monolingual)
        if source_index is not None:  # None exactly when monolingual
            search(source_index, target_dir, source_dir, work / "knn-backward", min(config.k, len(sources)))
        stage("search", started)

    started = time.perf_counter()
    recall = measure_recall(
        target_index, sources, targets, config.recall_k, config.recall_sample, config.seed, monolingual, config.index
    )
    stage("recall", started)

    started = time.perf_counter()
    source_texts = _read_texts(source_dir)
    target_texts = source_texts if monolingual else _read_texts(target_dir)
    target_side = distinct["source" if monolingual else "target"]
    counts, written = _score_filter_write(
        work,
        output,
        config,
        monolingual,
        _unknown_vector(model, config.float16),
        (sources, source_texts, distinct["source"][2]),
        (targets, target_texts, target_side[2]),
    )
    stage("score_filter_write", started)

    report = {
        "model": str(model),
        "source": [str(p) for p in _as_list(source)],
        "target": None if monolingual else [str(p) for p in _as_list(target)],
        "mode": "monolingual" if monolingual else "bitext",
        "source_rows": distinct["source"][3],
        "target_rows": target_side[3],
        "source_repeats": distinct["source"][3] - len(sources),
        "target_repeats": target_side[3] - len(targets),
        "pairs": written,
        "filters": counts,
        "recall": recall,
        "index": (index := json.loads((work / "target.json").read_text(encoding="utf-8")))["kind"],
        "index_lists": index.get("nlist"),  # IVF lists used (--nlist is capped at 1 per 39 vectors)
        "config": config.to_dict(),
        "execution": asdict(execution),
        "seconds": timings,
    }
    atomic_write_json(output.with_suffix(".json"), report)
    return report


def _as_list(value: Any) -> list[Any]:
    return [value] if isinstance(value, (str, os.PathLike)) else list(value)


def _unknown_vector(model: str, float16: bool) -> np.ndarray | None:
    """A P-SP model's vector of every text with no known piece (``<unk>``) as the work folder stores it, else None."""
    from psp_st.inference import encode_texts
    from psp_st.inference.load import is_psp_model, open_model

    if not is_psp_model(model):
        return None
    vector = encode_texts(open_model(model, 1, engine=True), [""], normalize=True)[0]
    return vector.astype(np.float16 if float16 else np.float32).astype(np.float32)


def _score_filter_write(
    work: Path,
    output: Path,
    config: MiningConfig,
    monolingual: bool,
    unknown: np.ndarray | None,
    source_side: tuple[ShardedVectors, Any, np.ndarray],
    target_side: tuple[ShardedVectors, Any, np.ndarray],
) -> tuple[list[dict], int]:
    """Score the candidates, filter them and write the kept pairs; ``*_side``: the vectors, texts and input row of
    each distinct text. Pairs with a side whose vector is ``unknown`` (no known piece: meaningless) are dropped."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (sources, source_texts, source_rows), (targets, target_texts, target_rows) = source_side, target_side
    forward_sims, forward_ids = read_neighbours(work / "knn-forward")
    source_mean = knn_mean(forward_sims)
    if monolingual:
        left, right = candidate_pairs(forward_ids)
        target_mean = source_mean
    else:
        backward_sims, backward_ids = read_neighbours(work / "knn-backward")
        left, right = candidate_pairs(forward_ids, backward_ids)
        target_mean = knn_mean(backward_sims)
    del forward_sims, forward_ids

    filters = config.filters(monolingual)
    names = ("margin", "strategy", "cosine", "no_known_piece", *(s.name for s in filters))
    counters = {name: FilterCount(name) for name in names}
    total = len(left)
    schema = pa.schema([(name, getattr(pa, kind)()) for name, kind in _SCHEMA.items()])
    written = 0
    with atomic_path(output) as tmp, pq.ParquetWriter(str(tmp), schema) as writer:
        margins = np.empty(total)
        cosines = np.empty(total, dtype=np.float32)
        known = np.ones(total, dtype=bool)
        for start in range(0, total, 16_384):  # vector blocks of 64 MiB at 1024 dims
            stop = min(total, start + 16_384)
            a, b = sources.take(left[start:stop]), targets.take(right[start:stop])
            cosines[start:stop] = np.clip(np.einsum("ij,ij->i", a, b), -1.0, 1.0)  # unit vectors: rounding only
            if unknown is not None:
                known[start:stop] = ~((a == unknown).all(1) | (b == unknown).all(1))
            margins[start:stop] = ratio_margin(
                cosines[start:stop], source_mean[left[start:stop]], target_mean[right[start:stop]]
            )
        masks = {"margin": margins >= config.min_margin}  # applied in this order, each counted on what is left
        if config.strategy == "max":
            masks["strategy"] = best_margin_mask(left, right, margins, monolingual)
        masks["cosine"] = (cosines >= config.min_cosine) & (cosines <= config.max_cosine)
        if unknown is not None:
            masks["no_known_piece"] = known
        keep = np.ones(total, dtype=bool)
        for name, mask in masks.items():
            counters[name].update(mask[keep].tolist())
            keep &= mask
        survivors = np.flatnonzero(keep)
        for start in range(0, len(survivors), config.chunk_rows):
            rows = survivors[start : start + config.chunk_rows]
            texts = (source_texts.take(pa.array(left[rows])), target_texts.take(pa.array(right[rows])))
            batch = {"sentence1": texts[0].to_pylist(), "sentence2": texts[1].to_pylist()}
            kept = _filter_chunk(batch, filters, counters)
            chosen = rows[kept]
            ids = source_rows[left[chosen]], target_rows[right[chosen]]
            table = _pair_table(batch, kept, *ids, margins[chosen], cosines[chosen], config.length_scale)
            if table.num_rows:
                writer.write_table(table.cast(schema))
                written += table.num_rows
    steps = [{"filter": c.name, "kept": c.kept, "dropped": c.dropped} for c in counters.values() if c.kept + c.dropped]
    ratio_count = counters.get("length_ratio")
    if not monolingual and config.length_scale == 1.0 and ratio_count and ratio_count.dropped > ratio_count.kept:
        logger.warning(
            "the length ratio (--max-length-ratio %s) dropped %d of %d bitext pairs: if the two sides' scripts differ "
            "in density (Chinese-English: ~3.5 English characters per Chinese one), pass --length-scale with the "
            "median target/source character ratio (psp_st.data.filters.median_length_ratio)",
            config.max_length_ratio,
            ratio_count.dropped,
            ratio_count.kept + ratio_count.dropped,
        )
    return [{"filter": "candidates", "kept": total, "dropped": 0}, *steps], written


def _filter_chunk(batch: dict[str, list[str]], filters: list[Any], counters: dict[str, FilterCount]) -> np.ndarray:
    """Positions (in ``batch``) of the pairs that pass the text filters, applied in order."""
    mask = np.ones(len(batch["sentence1"]), dtype=bool)
    for step in filters:
        index = np.flatnonzero(mask)
        verdict = step.keep({column: [batch[column][i] for i in index] for column in ("sentence1", "sentence2")})
        counters[step.name].update(verdict)
        mask[index] = verdict
    return np.flatnonzero(mask)


def _pair_table(
    batch: dict[str, list[str]],
    kept: np.ndarray,
    id1: np.ndarray,
    id2: np.ndarray,
    margins: np.ndarray,
    cosines: np.ndarray,
    length_scale: float = 1.0,
) -> Any:
    """The kept pairs of one chunk as an Arrow table with the :data:`PAIR_COLUMNS` (``length_scale``: of sentence1)."""
    import pyarrow as pa

    one, two = [batch["sentence1"][i] for i in kept], [batch["sentence2"][i] for i in kept]
    overlap = np.asarray([trigram_overlap(a, b) for a, b in zip(one, two, strict=True)], np.float32)
    ratios = [min(length_ratio(a, b, length_scale), math.inf) for a, b in zip(one, two, strict=True)]
    ratio = np.asarray(ratios, np.float32)
    columns = {"sentence1": one, "sentence2": two, "score": margins.astype(np.float32), "cosine": cosines}
    columns |= {"trigram_overlap": overlap, "length_ratio": ratio, "id1": id1, "id2": id2}
    return pa.table(columns)

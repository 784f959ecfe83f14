"""Peak RSS of load -> validate -> filter -> train on a 5M-pair on-disk corpus versus a 50k-pair one.

The corpora are built under ``--workdir`` (default ``/tmp/psp_st_data_rss``, never inside the repo) by repeating
the 482k real pairs of ``shared/data/training_pairs/*.parquet``. Each size runs in its own subprocess with a
fresh datasets cache, so the peak RSS (``VmHWM`` / ``ru_maxrss``) is per run and includes the Parquet -> Arrow
cache build, validation, filtering, sentencepiece training on a 20k-pair sample and a few hundred steps of a
``SentenceTransformerTrainer`` (small ``PSPEmbedding``, ST's ``MultipleNegativesRankingLoss``, batch 128).

Usage::

    python benchmarks/data_rss.py                     # 50k vs 5M pairs, 300 steps, table to benchmarks/results/data_rss.md
    python benchmarks/data_rss.py --pairs 200000 50000 --steps 50 --output /tmp/rss.md   # quick check
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("PSP_ST_DATA_DIR", REPO.parent / "shared" / "data"))
FILTERS = {"length": {"min": 3, "max": 40}, "trigram_overlap": {"max": 0.7}}


def proc_status() -> dict[str, float]:
    """VmRSS / VmHWM (peak) / RssAnon / RssFile of this process in MiB, from /proc/self/status."""
    values: dict[str, float] = {}
    with open("/proc/self/status") as handle:
        for line in handle:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                values[key] = int(rest.split()[0]) / 1024
    return values


class PeakSampler:
    """Polls /proc/self/status every ``interval`` s in a thread: peak RssAnon / RssFile (VmHWM has only the sum)."""

    def __init__(self, interval: float = 0.05) -> None:
        import threading

        self.interval = interval
        self.peaks = {"RssAnon": 0.0, "RssFile": 0.0}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def sample(self) -> None:
        status = proc_status()
        for key in self.peaks:
            self.peaks[key] = max(self.peaks[key], status[key])

    def stop(self) -> dict[str, float]:
        self._stop.set()
        self._thread.join()
        self.sample()
        return dict(self.peaks)


def build_corpus(pairs: int, folder: Path, rows_per_file: int = 500_000) -> Path:
    """Write ``pairs`` rows (the real pairs repeated in order) as zstd Parquet parts under ``folder``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    done = folder / "_complete"
    if done.exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    tables = []
    for path in sorted((DATA_DIR / "training_pairs").glob("*.parquet")):
        table = pq.read_table(path)
        groups = table.column("group_id").to_pylist() if "group_id" in table.column_names else range(table.num_rows)
        group_ids = pa.array([f"{path.stem}:{group}" for group in groups], pa.string())
        tables.append(
            pa.table({"sentence1": table["sentence1"], "sentence2": table["sentence2"], "group_id": group_ids})
        )
    real = pa.concat_tables(tables).combine_chunks()
    if pairs < real.num_rows:  # a smaller corpus is an even sample of all files, so the sentence mix matches
        real = real.take(np.linspace(0, real.num_rows - 1, pairs).round().astype(np.int64))
    written, part = 0, 0
    while written < pairs:
        with pq.ParquetWriter(folder / f"part-{part:04d}.parquet", real.schema, compression="zstd") as writer:
            in_file = 0
            while in_file < rows_per_file and written < pairs:
                start = written % real.num_rows
                take = min(real.num_rows - start, rows_per_file - in_file, pairs - written)
                writer.write_table(real.slice(start, take), row_group_size=50_000)
                in_file += take
                written += take
        part += 1
    done.touch()
    return folder


def run(args: argparse.Namespace) -> None:
    """One measured run (in its own process): prints one JSON line."""
    import resource

    import pyarrow.parquet as pq
    import torch

    torch.set_num_threads(1)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
    )
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss

    from psp_st.data import apply_filters, load_pairs, validate_pairs
    from psp_st.data.sampler import CompactShuffleBatchSampler
    from psp_st.modules.psp import PSPEmbedding

    phases: dict[str, dict[str, float]] = {"imports": proc_status()}
    sampler = PeakSampler()
    times: dict[str, float] = {}
    streaming = args.mode == "streaming"
    start = time.perf_counter()
    pairs = load_pairs(str(Path(args.data) / "*.parquet"), cache_dir=args.cache_dir, streaming=streaming)
    times["load"] = time.perf_counter() - start
    phases["load"] = proc_status()

    start = time.perf_counter()
    pairs, validation = validate_pairs(pairs, on_error="skip")
    pairs, report = apply_filters(pairs, FILTERS)
    times["validate+filter"] = time.perf_counter() - start
    phases["filter"] = proc_status()

    start = time.perf_counter()
    if streaming:
        sample = list(pairs.take(20_000))
        texts = [row["sentence1"] for row in sample] + [row["sentence2"] for row in sample]
        train = pairs.select_columns(["sentence1", "sentence2"]).shuffle(seed=0, buffer_size=10_000)
    else:
        sample = pairs.select(range(min(20_000, len(pairs))))
        texts = list(sample["sentence1"]) + list(sample["sentence2"])
        train = pairs.select_columns(["sentence1", "sentence2"])  # group_id would be read as a third text column
    module = PSPEmbedding.from_texts(texts, vocab_size=8000, embedding_dim=args.dim, seed=0)
    model = SentenceTransformer(modules=[module], device="cpu")
    training_args = SentenceTransformerTrainingArguments(
        output_dir=str(Path(args.cache_dir) / "trainer"),
        max_steps=args.steps,
        per_device_train_batch_size=args.batch_size,
        learning_rate=0.05,
        save_strategy="no",
        report_to="none",
        logging_steps=max(1, args.steps // 3),
        dataloader_num_workers=0,
        disable_tqdm=True,
        **({"batch_sampler": CompactShuffleBatchSampler} if args.mode == "dataset-compact" else {}),
        use_cpu=True,
        seed=0,
    )
    trainer = SentenceTransformerTrainer(
        model=model, args=training_args, train_dataset=train, loss=MultipleNegativesRankingLoss(model)
    )
    output = trainer.train()
    times["train"] = time.perf_counter() - start
    phases["train"] = proc_status()
    peaks = sampler.stop()
    result = {
        "mode": args.mode,
        "pairs_on_disk": sum(pq.ParquetFile(path).metadata.num_rows for path in Path(args.data).glob("*.parquet")),
        "parquet_mib": sum(p.stat().st_size for p in Path(args.data).glob("*.parquet")) / 2**20,
        "pairs_after_filters": None if streaming else len(pairs),
        "peak_rss_anon_mib": peaks["RssAnon"],
        "peak_rss_file_mib": peaks["RssFile"],
        "skipped_bad_rows": validation.skipped,
        "filter_report": report.to_dict(),
        "steps": args.steps,
        "batch_size": args.batch_size,
        "train_loss": output.training_loss,
        "ru_maxrss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "phases": phases,
        "seconds": times,
    }
    print("RESULT " + json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, nargs="+", default=[50_000, 5_000_000])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument(
        "--modes", nargs="+", default=["dataset", "streaming"], choices=["dataset", "dataset-compact", "streaming"]
    )
    parser.add_argument("--append", action="store_true", help="add the rows to those saved in the output's .json")
    parser.add_argument("--mode", default="dataset", help=argparse.SUPPRESS)
    parser.add_argument("--dim", type=int, default=256, help="PSPEmbedding dimension")
    parser.add_argument("--workdir", default="/tmp/psp_st_data_rss")
    parser.add_argument("--output", default=str(REPO / "benchmarks" / "results" / "data_rss.md"))
    parser.add_argument("--keep", action="store_true", help="keep the corpora and caches under --workdir")
    parser.add_argument("--run", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--cache-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        run(args)
        return

    workdir = Path(args.workdir)
    saved = Path(args.output).with_suffix(".json")
    rows = json.loads(saved.read_text()) if args.append and saved.exists() else []
    for pairs in args.pairs:
        folder = build_corpus(pairs, workdir / f"pairs_{pairs}")
        for mode in args.modes:
            cache = workdir / f"cache_{pairs}_{mode}"
            shutil.rmtree(cache, ignore_errors=True)  # cold cache: the run includes the Parquet -> Arrow build
            command = [
                sys.executable,
                __file__,
                "--run",
                "--mode",
                mode,
                "--data",
                str(folder),
                "--cache-dir",
                str(cache),
            ]
            command += ["--steps", str(args.steps), "--batch-size", str(args.batch_size), "--dim", str(args.dim)]
            env = dict(
                os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", TOKENIZERS_PARALLELISM="false", HF_HUB_OFFLINE="1"
            )
            print(f"[data_rss] {pairs:,} pairs, {mode}: {' '.join(command)}", flush=True)
            completed = subprocess.run(command, env=env, capture_output=True, text=True)
            if completed.returncode != 0:
                sys.stderr.write(completed.stderr[-5000:])
                raise SystemExit(f"run with {pairs:,} pairs ({mode}) failed (exit {completed.returncode})")
            line = next(line for line in completed.stdout.splitlines() if line.startswith("RESULT "))
            result = json.loads(line[len("RESULT ") :])
            result["command"] = (
                f"python benchmarks/data_rss.py --pairs {' '.join(map(str, args.pairs))} --modes {' '.join(args.modes)} "
                f"--steps {args.steps} --batch-size {args.batch_size} --dim {args.dim}"
                + (" --append" if args.append else "")
            )
            print(f"[data_rss] {json.dumps(result)}", flush=True)
            rows.append(result)
            write_table(rows, args, Path(args.output))  # partial table after every run
            if not args.keep:
                shutil.rmtree(cache, ignore_errors=True)
    write_table(rows, args, Path(args.output))
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


def write_table(rows: list[dict], args: argparse.Namespace, output: Path) -> None:
    commands = list(dict.fromkeys(row.get("command", "?") for row in rows))
    lines = [
        "# Peak RSS of the data pipeline + training vs corpus size",
        "",
        "Command(s): " + "; ".join(f"`{command}`" for command in commands),
        "",
        "One thread; every row is its own subprocess with a cold datasets cache. Modes: `dataset` = memory-mapped "
        "`datasets.Dataset` with ST's default batch sampler; `dataset-compact` = the same with "
        "`psp_st.data.CompactShuffleBatchSampler`; `streaming` = `IterableDataset`.",
        "Pipeline: `load_pairs` (Parquet -> memory-mapped Arrow cache; `streaming`: lazy Parquet reads) -> "
        f"`validate_pairs(on_error='skip')` -> `apply_filters({json.dumps(FILTERS)})` -> sentencepiece (8k pieces) "
        f"on 20k pairs -> `SentenceTransformerTrainer`, PSPEmbedding dim {args.dim}, MultipleNegativesRankingLoss, "
        f"{args.steps} steps of batch {args.batch_size} (streaming: shuffle buffer 10k).",
        "",
        "| mode | pairs on disk | pairs after filters | peak RSS MiB (VmHWM) | peak RssAnon MiB | peak RssFile MiB "
        "| RSS after imports | after load | after filters | after training | load s | validate+filter s | train s |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        phases, seconds = row["phases"], row["seconds"]
        kept = "lazy" if row["pairs_after_filters"] is None else f"{row['pairs_after_filters']:,}"
        lines.append(
            f"| {row['mode']} | {row['pairs_on_disk']:,} | {kept} | {phases['train']['VmHWM']:.0f} | "
            f"{row['peak_rss_anon_mib']:.0f} | {row['peak_rss_file_mib']:.0f} | {phases['imports']['VmRSS']:.0f} | "
            f"{phases['load']['VmRSS']:.0f} | {phases['filter']['VmRSS']:.0f} | {phases['train']['VmRSS']:.0f} | "
            f"{seconds['load']:.0f} | {seconds['validate+filter']:.0f} | {seconds['train']:.0f} |"
        )
    lines += [
        "",
        "Peak RssAnon / RssFile are sampled every 50 ms by a thread (VmHWM is their joint peak). RssAnon is heap "
        "memory; RssFile counts the pages of the memory-mapped Arrow cache (and of shared libraries) that are "
        "resident: page cache that the kernel reclaims under memory pressure, so it is bounded by free RAM, not "
        "needed by the run.",
        "",
        "Filter reports (streaming: counts over the rows actually read):",
        "",
    ]
    for row in rows:
        steps = ", ".join(
            f"{step['filter']}: kept {step['kept']:,} / dropped {step['dropped']:,}"
            for step in row["filter_report"]["steps"]
        )
        lines.append(
            f"- {row['mode']}, {row['pairs_on_disk']:,} pairs: {steps}; bad rows skipped: {row['skipped_bad_rows']}"
        )
    output.parent.mkdir(parents=True, exist_ok=True)
    output.with_suffix(".json").write_text(json.dumps(rows, indent=1) + "\n")
    output.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

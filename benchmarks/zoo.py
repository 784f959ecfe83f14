"""The encoder zoo at real budget: one command trains and measures one row; another renders the results table.

Rows (``--list`` prints them with their settings): WORD, TRIGRAM, LSTM, BLSTM, GRAN-LSTM, GRAN-GRU,
GRAN-GRU+Morfessor, WORD+TRIGRAM, P-SP and its combinations, and the Finnish rows of the Morfessor question
(GRAN-GRU-fi, GRAN-GRU+Morfessor-fi, WORD-fi, WORD+Morfessor-fi: trained on ``bitext/fi-en.parquet``, measured on
the Turku dev sets). Each row is trained as in its paper where we can build it:

- dimension 300 (ParaNMT: WORD, TRIGRAM, LSTM, BLSTM; the GRAN papers: 300); the concatenations are 600;
- initial vectors: words and morphs distilled from all-MiniLM-L6-v2 (``TokenEncoder.from_teacher``, the stand-in
  for PARAGRAM-SL999) for WORD, LSTM, BLSTM and GRAN-LSTM (ParaNMT and Wieting et al. 2017 start from
  PARAGRAM-SL999); random N(0, 1) trigram vectors for TRIGRAM; uniform [-0.01, 0.01] for the GRU-GRANs (Sjöblom
  et al.: pretrained vectors did not help them); P-SP pieces from the teacher as in psp-en;
- the paraphrase margin loss (delta 0.4) with the hardest opposite-side negative of each pair, Adam, batch 100,
  scrambling 0.3 for the LSTMs (ParaNMT), variational dropout 0.1 for the GRU-GRANs (Sjöblom et al.); negatives
  come from the mini-batch (``--megabatch 0``, the group guard on) or from mega-batches of M mini-batches mined
  by ``MegaBatchTrainer`` (group and text guards);
- row settings (learning rate, mega-batch size, scrambling, initialisation) chosen on STS Benchmark dev, never on
  test: the small-budget runs that chose them are in the same log (tag ``small``). M = 40 (ParaNMT's) lowered
  STS-B dev below the untrained score on this caption-heavy mix; M = 1 and in-batch negatives tie, and in-batch
  trains ~2x faster (no separate mining forward, no re-embedded negative columns), so every row uses M = 0;
  Adam lr 0.001 (the papers') beat 0.01 for every recurrent row; for the bag-of-tokens rows (sparse Adam on the
  token table) 0.05 beat 0.01 and 0.001, and teacher-initialised word vectors beat random ones.

Per run: STS Benchmark dev/test Spearman, SICK-R test Spearman and Pearson (and Turku dev Spearman against the
labels for the Finnish rows), the same numbers before training (the untrained encoder, same initialisation),
training pairs/s (wall and process CPU; mining included), ``SentenceTransformer.encode`` sentences/s on one
thread, parameters, wall time. One JSON line per run goes to ``--log``; ``table`` renders the log.

    python benchmarks/zoo.py run --row GRAN-GRU                            # the full row: one epoch of the mix
    python benchmarks/zoo.py run --row GRAN-GRU --pairs 20000 --tag small  # a small-budget run (dev sweeps)
    python benchmarks/zoo.py table --log benchmarks/results/zoo_runs.jsonl --out benchmarks/results/zoo.md
    python benchmarks/zoo.py --list
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import logging
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
DEFAULT_LOG = REPO / "benchmarks" / "results" / "zoo_runs.jsonl"
TEACHER = "all-MiniLM-L6-v2"

#: The English training mix: every file of ``training_pairs/`` (482k pairs); ``--extra`` adds ``training_pairs_extra/``.
ENGLISH_MIX = ["training_pairs/*.parquet"]
EXTRA_MIX = ["training_pairs_extra/*.parquet"]
#: The Finnish rows train on the Finnish-English bitext (the only Finnish pairs in the shared data).
FINNISH_PAIRS = "bitext/fi-en.parquet"


@dataclass(frozen=True)
class Row:
    """One zoo encoder and the settings it trains with (``run`` options override them)."""

    encoders: tuple[str, ...]  # parts: word, trigram, lstm, blstm, gran-lstm, gran-gru, psp (several: concat)
    init: tuple[str, ...]  # per part: teacher (distilled), random (N(0, 1)), uniform ([-0.01, 0.01])
    tokenizer: str = "default"  # words / trigrams / morfessor for the token encoders ("default": the encoder's)
    language: str = "en"
    lr: float = 1e-3
    megabatch: int = 0
    anneal: int = 0
    scramble: float = 0.0
    dropout: float = 0.0
    epochs: float = 1.0
    note: str = ""
    options: dict[str, Any] = field(default_factory=dict)


ROWS: dict[str, Row] = {
    "WORD": Row(("word",), ("teacher",), lr=0.05),
    "TRIGRAM": Row(("trigram",), ("random",), lr=0.05),
    "LSTM": Row(("lstm",), ("teacher",), scramble=0.3),
    "BLSTM": Row(("blstm",), ("teacher",), scramble=0.3),
    "GRAN-LSTM": Row(("gran-lstm",), ("teacher",), scramble=0.3),
    "GRAN-GRU": Row(("gran-gru",), ("uniform",), dropout=0.1),
    "GRAN-GRU+Morfessor": Row(("gran-gru",), ("uniform",), tokenizer="morfessor", dropout=0.1),
    "GRAN-GRU-teacher": Row(("gran-gru",), ("teacher",), dropout=0.1),
    "WORD+TRIGRAM": Row(("word", "trigram"), ("teacher", "random"), lr=0.05),
    "P-SP": Row(("psp",), ("teacher",), lr=0.05),
    "P-SP+TRIGRAM": Row(("psp", "trigram"), ("teacher", "random"), lr=0.05),
    "P-SP+GRAN-GRU": Row(("psp", "gran-gru"), ("teacher", "uniform"), dropout=0.1),
    "GRAN-GRU-fi": Row(("gran-gru",), ("uniform",), language="fi", dropout=0.1, epochs=10),
    "GRAN-GRU+Morfessor-fi": Row(
        ("gran-gru",), ("uniform",), tokenizer="morfessor", language="fi", dropout=0.1, epochs=10
    ),
    "WORD-fi": Row(("word",), ("uniform",), language="fi", lr=0.05, epochs=10),
    "WORD+Morfessor-fi": Row(("word",), ("uniform",), tokenizer="morfessor", language="fi", lr=0.05, epochs=10),
}

#: Initialisations of a part: teacher-distilled vectors, N(0, 1), uniform in [-0.01, 0.01].
INITS = ("teacher", "random", "uniform")
#: Settings a ``run`` may override (``--lr`` ...), with their types.
SETTINGS = {"lr": float, "megabatch": int, "anneal": int, "scramble": float, "dropout": float, "epochs": float}


def data_dir() -> Path:
    from psp_st.io.data_dir import default_data_dir

    return Path(default_data_dir())


# -- building an encoder --------------------------------------------------------------------------------------
def build_part(kind: str, init: str, texts: list[str], settings: dict[str, Any], args: argparse.Namespace) -> Any:
    """A fresh encoder part, its vocabulary (or sentencepiece / Morfessor model) trained on ``texts``."""
    import torch

    from psp_st.modules.averaging import TrigramAveraging, WordAveraging
    from psp_st.modules.psp import PSPEmbedding
    from psp_st.modules.recurrent import GRAN, LSTMAveraging
    from psp_st.tokenization.sentencepiece import SentencePieceTokenizer
    from psp_st.tokenization.store import train_tokenizer_of_kind

    dim, seed = args.dim, args.seed
    if kind == "psp":
        tokenizer = SentencePieceTokenizer.train(texts, vocab_size=args.psp_vocab, lowercase=True, seed=seed)
        if init == "teacher":
            return PSPEmbedding.from_teacher(
                TEACHER, tokenizer, embedding_dim=dim, seed=seed, cache_dir=args.teacher_cache, teacher_name=TEACHER
            )
        return PSPEmbedding(tokenizer, embedding_dim=dim)
    classes: dict[str, tuple[type, dict[str, Any]]] = {
        "word": (WordAveraging, {}),
        "trigram": (TrigramAveraging, {}),
        "lstm": (LSTMAveraging, {}),
        "blstm": (LSTMAveraging, {"bidirectional": True, "combine": "sum"}),
        "gran-lstm": (GRAN, {"gate": "lstm", "dropout": settings["dropout"]}),
        "gran-gru": (GRAN, {"gate": "gru", "dropout": settings["dropout"]}),
    }
    cls, options = classes[kind]
    if kind not in ("word", "trigram"):
        options = {**options, "scramble": settings["scramble"], "max_seq_length": args.max_seq_length}
    tokenizer_kind = settings["tokenizer"] if settings["tokenizer"] != "default" else cls.default_tokenizer
    extra = {"max_words": args.morfessor_words, "seed": seed} if tokenizer_kind == "morfessor" else {}
    tokenizer = train_tokenizer_of_kind(
        tokenizer_kind, texts, min_count=args.min_count, max_size=args.max_vocab, lowercase=True, **extra
    )
    if init == "teacher":
        return cls.from_teacher(
            TEACHER,
            tokenizer,
            embedding_dim=dim,
            seed=seed,
            cache_dir=args.teacher_cache,
            teacher_name=TEACHER,
            **options,
        )
    with torch.random.fork_rng():
        torch.manual_seed(seed)
        module = cls(tokenizer, embedding_dim=dim, **options)
        if init == "uniform":
            with torch.no_grad():
                torch.nn.init.uniform_(module.embedding.weight[: module.vocab_size], -0.01, 0.01)
        elif init == "random":
            with torch.no_grad():
                torch.nn.init.normal_(module.embedding.weight[: module.vocab_size])
    return module


def build(row: Row, texts: list[str], settings: dict[str, Any], args: argparse.Namespace) -> Any:
    from psp_st.modules.combine import CombinedEncoder

    parts = [
        build_part(kind, init, texts, settings, args) for kind, init in zip(row.encoders, settings["init"], strict=True)
    ]
    return parts[0] if len(parts) == 1 else CombinedEncoder(parts, mode="concat")


# -- data -----------------------------------------------------------------------------------------------------
def training_pairs(row: Row, args: argparse.Namespace):
    """The row's training pairs (a seeded sample of ``--pairs`` when given) as a ``datasets.Dataset``."""
    from psp_st.data import load_training_pairs

    if row.language == "fi":
        source = {"path": FINNISH_PAIRS, "columns": {"sentence1": "source", "sentence2": "target"}}
        return load_training_pairs([source], max_pairs=args.pairs, seed=args.seed)
    sources = ENGLISH_MIX + (EXTRA_MIX if args.extra else [])
    return load_training_pairs(sources, max_pairs=args.pairs, seed=args.seed)


def evaluation_sets(language: str) -> dict[str, Any]:
    """``{name: dataset with sentence1, sentence2, score}``: the English STS sets or the Turku dev sets."""
    from psp_st.evaluation.loaders import load_local

    if language == "fi":
        return {
            name: load_local(key, data_dir()).rename_column("label", "score")
            for name, key in (
                ("turku_release1_dev", "turku-release1-dev"),
                ("turku_opb_dev", "turku-opus-parsebank-dev"),
            )
        }
    return {
        name: load_local(key, data_dir())
        for name, key in (("stsb_dev", "stsb-dev"), ("stsb_test", "stsb-test"), ("sickr_test", "sick-test"))
    }


def evaluate(model: Any, sets: dict[str, Any]) -> dict[str, float]:
    """Spearman (and Pearson) x 100 of the cosine similarity against the gold scores, per set."""
    from psp_st.evaluation.sts import STSEvaluator

    metrics = STSEvaluator(sets, batch_size=256)(model)
    out = {}
    for name in sets:
        out[name] = round(100 * metrics[f"{name}_spearman"], 2)
        out[f"{name}_pearson"] = round(100 * metrics[f"{name}_pearson"], 2)
    return out


def encode_speed(model: Any, language: str, sentences: int, seed: int) -> tuple[float, float]:
    """``SentenceTransformer.encode`` sentences per wall second and per process CPU second, on one thread."""
    import pandas as pd
    import torch

    if language == "fi":
        texts = pd.read_parquet(data_dir() / FINNISH_PAIRS, columns=["source"]).source
    else:
        texts = pd.read_parquet(data_dir() / "corpus/english_sentences.parquet", columns=["sentence"]).sentence
    texts = texts.sample(n=min(sentences, len(texts)), random_state=seed).tolist()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model.encode(texts[:256], batch_size=256)  # warm-up
        start, cpu_start = time.perf_counter(), time.process_time()
        model.encode(texts, batch_size=256)
        return len(texts) / (time.perf_counter() - start), len(texts) / (time.process_time() - cpu_start)
    finally:
        torch.set_num_threads(threads)


# -- one run --------------------------------------------------------------------------------------------------
def run(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    from sentence_transformers import SentenceTransformer

    from psp_st.losses import ParaphraseMarginLoss
    from psp_st.training import MegaBatchTrainer, PSPTrainingArguments

    row = ROWS[args.row]
    settings = {**dataclasses.asdict(row), **{k: getattr(args, k) for k in SETTINGS if getattr(args, k) is not None}}
    if args.init is not None:
        settings["init"] = tuple(args.init.split(","))
        if len(settings["init"]) != len(row.encoders) or set(settings["init"]) - set(INITS):
            raise SystemExit(f"--init needs {len(row.encoders)} comma-separated values from {INITS}, got {args.init!r}")
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    if args.workdir:  # the trainer's temporary folder goes in it once the model is built and scored untrained
        Path(args.workdir).mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    pairs = training_pairs(row, args)
    texts = list(pairs["sentence1"]) + list(pairs["sentence2"])
    logging.info("%s: %d training pairs", args.row, len(pairs))
    build_start = time.perf_counter()
    module = build(row, texts, settings, args)
    build_seconds = time.perf_counter() - build_start
    model = SentenceTransformer(modules=[module], device="cpu")
    if not settings["megabatch"]:
        # in-batch negatives (M = 0): the loss mines each mini-batch itself, without MegaBatchTrainer's extra
        # no-gradient forward and re-embedded negative columns; the group ids reach it as ST labels, so the group
        # guard stays (it covers the text guard: pairs sharing a sentence are one group); every other column (the
        # bitext's lang) would reach the loss as an input column
        pairs = pairs.select_columns(["sentence1", "sentence2", "group_id"]).rename_column("group_id", "label")
    sets = evaluation_sets(row.language)
    untrained = evaluate(model, sets)
    logging.info("%s untrained: %s", args.row, untrained)
    params = sum(p.numel() for p in model.parameters())
    with tempfile.TemporaryDirectory(dir=args.workdir) as out:
        targs = PSPTrainingArguments(
            output_dir=out,
            megabatch_size=settings["megabatch"],
            anneal=settings["anneal"],
            mining_dtype=args.mining_dtype,
            num_train_epochs=settings["epochs"],
            per_device_train_batch_size=args.batch_size,
            learning_rate=settings["lr"],
            lr_scheduler_type="constant",
            warmup_steps=0,
            max_grad_norm=1.0,
            save_strategy="no",
            logging_steps=args.logging_steps,
            report_to="none",
            use_cpu=True,
            seed=args.seed,
            disable_tqdm=True,
        )
        trainer = MegaBatchTrainer(
            model=model,
            args=targs,
            train_dataset=pairs,
            loss=ParaphraseMarginLoss(model, margin=0.4),
        )
        train_start, cpu_start = time.perf_counter(), time.process_time()
        trainer.train()
        train_seconds, train_cpu = time.perf_counter() - train_start, time.process_time() - cpu_start
        steps = trainer.state.global_step
        losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    model.eval()
    trained = evaluate(model, sets)
    speed, speed_cpu = encode_speed(model, row.language, args.encode_sentences, args.seed)
    record = {
        "row": args.row,
        "tag": args.tag,
        "command": "python " + " ".join(["benchmarks/zoo.py", *sys.argv[1:]]),
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "commit": git_commit(),
        "host": platform.node(),
        "settings": {k: settings[k] for k in (*SETTINGS, "encoders", "init", "tokenizer", "language")},
        "budget": {
            "pairs": len(pairs),
            "sources": FINNISH_PAIRS if row.language == "fi" else ENGLISH_MIX + (EXTRA_MIX if args.extra else []),
            "epochs": settings["epochs"],
            "steps": steps,
            "batch_size": args.batch_size,
        },
        "dim": module.get_sentence_embedding_dimension(),
        "params": params,
        "untrained": untrained,
        "trained": trained,
        "first_loss": losses[0] if losses else None,
        "last_loss": losses[-1] if losses else None,
        "train_pairs_per_s": len(pairs) * settings["epochs"] / train_seconds,
        "train_pairs_per_cpu_s": len(pairs) * settings["epochs"] / train_cpu,
        "encode_per_s": speed,
        "encode_per_cpu_s": speed_cpu,
        "build_s": round(build_seconds, 1),
        "train_s": round(train_seconds, 1),
        "wall_s": round(time.perf_counter() - started, 1),
        "max_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "threads": args.threads,
        "mining_dtype": args.mining_dtype,
    }
    if args.log:
        args.log.parent.mkdir(parents=True, exist_ok=True)
        with open(args.log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
    print(json.dumps(record, indent=1))
    return record


def git_commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


# -- the table ------------------------------------------------------------------------------------------------
TABLE_START = "<!-- zoo table {tag}: generated by benchmarks/zoo.py table, do not edit -->"
TABLE_END = "<!-- end zoo table {tag} -->"


def render(records: list[dict[str, Any]]) -> str:
    """A markdown table of runs (the newest run of each row), with the command of each row under it."""
    english = [r for r in records if r["settings"]["language"] == "en"]
    finnish = [r for r in records if r["settings"]["language"] == "fi"]
    lines: list[str] = []
    if english:
        lines += [
            "| row | settings | dim | STS-B dev | STS-B test (untrained) | SICK-R test ρ / r | train pairs/s wall (CPU) "
            "| encode sent/s, 1 thread: wall (CPU) | parameters | budget: pairs x epochs (steps) | train / total wall |",
            "|---|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in english:
            t, u = r["trained"], r["untrained"]
            lines.append(
                f"| {r['row']} | {settings(r)} | {r['dim']} | {t['stsb_dev']:.1f} | **{t['stsb_test']:.1f}** ({u['stsb_test']:.1f}) "
                f"| {t['sickr_test']:.1f} / {t['sickr_test_pearson']:.1f} "
                f"| {r['train_pairs_per_s']:,.0f} ({r['train_pairs_per_cpu_s']:,.0f}) | {encode(r)} "
                f"| {r['params']:,} | {budget(r)} | {duration(r['train_s'])} / {duration(r['wall_s'])} |"
            )
    if finnish:
        lines += [
            "",
            "| row | settings | dim | Turku release-1 dev ρ (untrained) | Turku opus/parsebank dev ρ (untrained) "
            "| train pairs/s wall (CPU) | encode sent/s, 1 thread: wall (CPU) | parameters "
            "| budget: pairs x epochs (steps) | train / total wall |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for r in finnish:
            t, u = r["trained"], r["untrained"]
            lines.append(
                f"| {r['row']} | {settings(r)} | {r['dim']} | **{t['turku_release1_dev']:.1f}** ({u['turku_release1_dev']:.1f}) "
                f"| **{t['turku_opb_dev']:.1f}** ({u['turku_opb_dev']:.1f}) "
                f"| {r['train_pairs_per_s']:,.0f} ({r['train_pairs_per_cpu_s']:,.0f}) | {encode(r)} "
                f"| {r['params']:,} | {budget(r)} | {duration(r['train_s'])} / {duration(r['wall_s'])} |"
            )
    lines += ["", "Commands:", ""]
    for r in records:
        s = r["settings"]
        lines.append(
            f"- {r['row']}: `{r['command']}` ({r['budget']['pairs']:,} pairs x {s['epochs']:g} epoch(s), lr {s['lr']:g}, "
            f"M={s['megabatch']}, scrambling {s['scramble']:g}, dropout {s['dropout']:g}, init {'+'.join(s['init'])}; "
            f"commit {r['commit']}, {r['date'][:10]})"
        )
    return "\n".join(lines)


def settings(record: dict[str, Any]) -> str:
    """``lr 0.001, M 0, scr 0.3, do 0.1, teacher``: what a run was trained with (non-defaults only for scr/do)."""
    s = record["settings"]
    parts = [f"lr {s['lr']:g}", f"M {s['megabatch']}"]
    parts += [f"{name} {s[key]:g}" for name, key in (("scr", "scramble"), ("do", "dropout")) if s[key]]
    return ", ".join([*parts, "+".join(s["init"])])


def budget(record: dict[str, Any]) -> str:
    """``482,315 x 1 (4,824)``: the pairs a run trained on, its epochs and optimizer steps."""
    b = record["budget"]
    return f"{b['pairs']:,} x {b['epochs']:g} ({b['steps']:,})"


def encode(record: dict[str, Any]) -> str:
    cpu = record.get("encode_per_cpu_s")
    return f"{record['encode_per_s']:,.0f}" + (f" ({cpu:,.0f})" if cpu else "")


def duration(seconds: float) -> str:
    minutes = seconds / 60
    return f"{minutes / 60:.1f} h" if minutes >= 90 else f"{minutes:.0f} min" if minutes >= 2 else f"{seconds:.0f} s"


def table(args: argparse.Namespace) -> None:
    """Render the newest run of every row (``--all``: every run) with ``--tag`` between the tag's markers in ``--out``."""
    records = [json.loads(line) for line in args.log.read_text(encoding="utf-8").splitlines() if line.strip()]
    tagged = [record for record in records if record.get("tag") == args.tag]
    if args.all:  # every run, grouped by row
        chosen = sorted(tagged, key=lambda r: list(ROWS).index(r["row"]) if r["row"] in ROWS else len(ROWS))
    else:
        newest = {record["row"]: record for record in tagged}
        chosen = [newest[name] for name in ROWS if name in newest]
    text = render(chosen)
    start, end = TABLE_START.format(tag=args.tag), TABLE_END.format(tag=args.tag)
    document = args.out.read_text(encoding="utf-8") if args.out.exists() else ""
    if start in document and end in document:
        before, rest = document.split(start, 1)
        document = before + start + "\n" + text + "\n" + end + rest.split(end, 1)[1]
    else:
        document = document.rstrip() + ("\n\n" if document.strip() else "") + f"{start}\n{text}\n{end}\n"
    args.out.write_text(document, encoding="utf-8")
    print(text)


def list_rows() -> None:
    for name, row in ROWS.items():
        settings = {k: v for k, v in dataclasses.asdict(row).items() if v not in ("", {}, "default")}
        print(f"{name}: {settings}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--list", action="store_true", help="print the rows and their settings")
    commands = parser.add_subparsers(dest="command")
    one = commands.add_parser("run", help="train and measure one row")
    one.add_argument("--row", required=True, choices=list(ROWS))
    one.add_argument("--pairs", type=int, default=None, help="a seeded sample of this many pairs (default: all)")
    one.add_argument("--extra", action="store_true", help="add training_pairs_extra/ to the English mix")
    for name, kind in SETTINGS.items():
        one.add_argument(f"--{name}", type=kind, default=None, help=f"override the row's {name}")
    one.add_argument("--init", default=None, help=f"override the initialisation of each part: {', '.join(INITS)}")
    one.add_argument("--dim", type=int, default=300)
    one.add_argument("--batch-size", type=int, default=100)
    one.add_argument("--max-seq-length", type=int, default=64, help="tokens kept per text by the recurrent encoders")
    one.add_argument("--min-count", type=int, default=1)
    one.add_argument("--max-vocab", type=int, default=50_000, help="words / trigrams / morphs kept (<unk> included)")
    one.add_argument("--morfessor-words", type=int, default=20_000, help="Morfessor trains on the most frequent words")
    one.add_argument("--psp-vocab", type=int, default=16_000, help="sentencepiece vocabulary of the P-SP rows")
    one.add_argument("--mining-dtype", default="float32", choices=["float32", "bfloat16"])
    one.add_argument("--teacher-cache", default=str(REPO / "runs" / "teacher_cache"))
    one.add_argument("--encode-sentences", type=int, default=5_000)
    one.add_argument("--threads", type=int, default=1)
    one.add_argument("--seed", type=int, default=0)
    one.add_argument("--logging-steps", type=int, default=500)
    one.add_argument("--tag", default="full", help="groups runs in the log and the table (e.g. full, small)")
    one.add_argument("--log", type=Path, default=DEFAULT_LOG, help="JSON-lines log the run is appended to")
    one.add_argument("--workdir", default=None, help="folder for the trainer's temporary output")
    render_ = commands.add_parser("table", help="render the newest run of each row into a markdown file")
    render_.add_argument("--log", type=Path, default=DEFAULT_LOG)
    render_.add_argument("--tag", default="full")
    render_.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "zoo.md")
    render_.add_argument("--all", action="store_true", help="every run of the tag, not only the newest per row")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    if args.list:
        list_rows()
    elif args.command == "run":
        run(args)
    elif args.command == "table":
        table(args)
    else:
        parser.print_help()


if __name__ == "__main__":
    main()

"""psp-multi recipe probes: short trainings through the recipe path, chosen on dev only (issue 12, part A).

Dev: FLORES-200 devtest retrieval error (mean over languages of x->en and en->x) and STS Benchmark dev Spearman.
Test numbers (Tatoeba deu/fra, STS Benchmark test) are logged next to them and never used to choose.

    # 1. converted training data (outside the repository; FLORES rows dropped; filters as in bitext_filters.md)
    python benchmarks/psp_multi_probes.py prepare --out /work/scratch-xling/probe-data
    # 2. one probe: builds the initial model (shared tokenizer, piece vectors), writes the recipe, runs
    #    `python -m psp_st train --config <recipe> --output <run>`, evaluates with the xling suite, logs one line
    python benchmarks/psp_multi_probes.py run --name t05-v32k --data /work/scratch-xling/probe-data \\
        --runs /work/scratch-xling/probes --vocab 32000 --temperature 0.5 --english-pairs 100000 --epochs 1
    python benchmarks/psp_multi_probes.py table      # the logged probes as markdown

Sampling policy: language ``l`` with ``n_l`` filtered pairs gets ``N * n_l^T / sum_k n_k^T`` pairs per epoch
(``N`` = all bitext pairs; recipe ``weight`` per source file, repeats above 1); the tokenizer's training text uses
the same temperature (:mod:`psp_st.tokenization.multilingual`).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
LOG = REPO / "benchmarks" / "results" / "psp_multi_probes.jsonl"
LANGS = ("ar", "cs", "de", "es", "fi", "fr", "ru", "tr", "zh")  # sv-en holds FLORES rows only: no training pairs
FLORES = "flores200-devtest"
#: psp-en v2's distillation sample (hub_configs/psp-en.yaml), with corpus/english_sentences.parquet replaced by a
#: copy without its FLORES-200 devtest sentences (they are the English side of the dev set).
DISTILLATION_SOURCES = [
    {"path": "{data}/english_sentences_no_flores.parquet", "max_sentences": 10000},
    {"path": "corpus/wikipedia_sentences.parquet", "max_sentences": 4000},
    {"path": "corpus/query_wellformedness_questions.parquet", "max_sentences": 3000},
    {"path": "corpus/intent_queries_and_questions.parquet", "max_sentences": 3000},
    {"path": "corpus/sgd_dialogue_utterances.parquet", "max_sentences": 2000},
    {"path": "corpus/nltk_corpora.parquet", "max_sentences": 4000},
    {"path": "corpus/senteval_sentences.parquet", "max_sentences": 2000},
    {"path": "corpus/gutenberg_books_sample.parquet", "max_sentences": 2000},
    {"path": "corpus/bible_verses.parquet", "max_sentences": 500},
    {"path": "training_pairs_extra/[!b]*.parquet", "columns": ["sentence1", "sentence2"], "max_sentences": 5000},
    {"path": "training_pairs/*.parquet", "columns": ["sentence1", "sentence2"], "max_sentences": 3000},
]


def data_dir() -> Path:
    from psp_st.io.data_dir import default_data_dir

    return Path(default_data_dir())


def prepare(out: Path) -> None:
    """Filtered bitext per language (sentence1 = foreign, sentence2 = English), FLORES sentences removed."""
    import pandas as pd

    from psp_st.data.filters import LengthRatioFilter, median_length_ratio
    from psp_st.data.language import LanguageFilter

    out.mkdir(parents=True, exist_ok=True)
    shared = data_dir()
    frames = {lang: pd.read_parquet(shared / "bitext" / f"{lang}-en.parquet") for lang in (*LANGS, "sv")}
    flores = set()
    for frame in frames.values():
        rows = frame[frame.corpus == FLORES]
        flores |= set(rows.source) | set(rows.target)
    report = {}
    for lang in LANGS:
        frame = frames[lang]
        frame = frame[frame.corpus != FLORES]
        total = len(frame)
        frame = frame[~frame.source.isin(flores) & ~frame.target.isin(flores)]
        batch = {"sentence1": frame.source.tolist(), "sentence2": frame.target.tolist()}
        scale = median_length_ratio(batch["sentence1"], batch["sentence2"])
        candidates = (*LANGS, "sv", "en")
        keep = [
            a and b
            for a, b in zip(
                LanguageFilter(sentence1=lang, sentence2="en", candidates=candidates).keep(batch),
                LengthRatioFilter(2.0, sentence1_scale=scale).keep(batch),
                strict=True,
            )
        ]
        kept = frame[keep]
        pd.DataFrame({"sentence1": kept.source, "sentence2": kept.target}).to_parquet(out / f"bitext-{lang}.parquet")
        report[lang] = {"pairs": total, "flores_overlap_dropped": total - len(frame), "kept": len(kept)}
    corpus = pd.read_parquet(shared / "corpus" / "english_sentences.parquet")
    clean = corpus[(corpus.source != FLORES) & ~corpus.sentence.isin(flores)]
    clean.to_parquet(out / "english_sentences_no_flores.parquet")
    report["english_sentences"] = {"rows": len(corpus), "kept": len(clean)}
    (out / "prepare.json").write_text(json.dumps(report, indent=2))
    print(json.dumps(report, indent=2))


def pair_counts(data: Path) -> dict[str, int]:
    import pyarrow.parquet as pq

    return {lang: pq.read_metadata(data / f"bitext-{lang}.parquet").num_rows for lang in LANGS}


def language_piece_stats(tokenizer, texts_by_language: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    """Per language: pieces per sentence, characters per piece and the share of sentences with an unknown piece
    (how well the shared vocabulary serves each language; a language squeezed out gets short pieces)."""
    stats = {}
    for lang, texts in texts_by_language.items():
        if not texts:
            continue
        ids = tokenizer.encode(texts)
        pieces = sum(map(len, ids))
        stats[lang] = {
            "sentences": float(len(texts)),
            "pieces_per_sentence": pieces / len(texts),
            "characters_per_piece": sum(map(len, texts)) / max(pieces, 1),
            "unknown_rate": tokenizer.unknown_rate(texts),
        }
    return stats


def tokenizer_texts(data: Path, english_pairs: int, seed: int) -> dict[str, list[str]]:
    """Foreign sides per language; English from the bitext's English sides plus the English pairs' sentences."""
    import pandas as pd

    from psp_st.data import load_training_pairs

    texts: dict[str, list[str]] = {}
    english: list[str] = []
    for lang in LANGS:
        frame = pd.read_parquet(data / f"bitext-{lang}.parquet")
        texts[lang] = frame.sentence1.tolist()
        english += frame.sentence2.tolist()
    if english_pairs:
        pairs = load_training_pairs(
            [{"path": "training_pairs/*.parquet", "max_pairs": english_pairs}], seed=seed, shared_sentence_groups=False
        )
        english += list(pairs["sentence1"]) + list(pairs["sentence2"])
    texts["en"] = list(dict.fromkeys(english))
    return texts


def initial_model(args: argparse.Namespace, folder: Path) -> dict:
    """The shared tokenizer and the initial piece vectors, saved as a model folder (the recipe's model.init_from)."""
    if (folder / "init.json").is_file():
        return json.loads((folder / "init.json").read_text())
    import torch
    from sentence_transformers import SentenceTransformer

    from psp_st.modules.psp import PSPEmbedding
    from psp_st.tokenization.multilingual import temperature_sample
    from psp_st.tokenization.sentencepiece import SentencePieceTokenizer

    start = time.perf_counter()
    texts = tokenizer_texts(args.data, args.tokenizer_english_pairs, args.seed)
    # the same tokenizer settings with another initialisation: reuse that vocabulary (identical, and 5-8 min saved)
    parts = folder.name.split("-")  # init, v<vocab>, t<temperature>, <init><dim>, e<English pairs>
    siblings = sorted(folder.parent.glob("-".join([*parts[:3], "*", *parts[4:]]) + "/init.json"))
    if siblings:
        tokenizer = SentencePieceTokenizer.from_file(siblings[0].parent / "sentencepiece.model")
        reused = json.loads(siblings[0].read_text())
        tokenizer_seconds = reused["tokenizer_seconds"]
    else:
        temperature = args.tokenizer_temperature or args.temperature
        sample = temperature_sample(texts, temperature, seed=args.seed)
        tokenizer = SentencePieceTokenizer.train(
            [text for part in sample.values() for text in part], vocab_size=args.vocab, seed=args.seed
        )
        tokenizer_seconds = time.perf_counter() - start
    start = time.perf_counter()
    if args.init == "teacher":
        module = PSPEmbedding.from_teacher(
            "all-MiniLM-L6-v2",
            tokenizer,
            embedding_dim=args.dim,
            seed=args.seed,
            cache_dir=str(REPO / "runs" / "teacher_cache"),
            teacher_name="all-MiniLM-L6-v2",
        )
    else:
        generator = torch.Generator().manual_seed(args.seed)
        weights = torch.randn(tokenizer.vocab_size, args.dim, generator=generator)
        module = PSPEmbedding(tokenizer, embedding_dim=args.dim, embedding_weights=weights)
    SentenceTransformer(modules=[module], device="cpu").save(str(folder))
    sample = {lang: values[:2000] for lang, values in texts.items()}
    info = {
        "vocab_size": tokenizer.vocab_size,
        "tokenizer_seconds": round(tokenizer_seconds, 1),
        "init_seconds": round(time.perf_counter() - start, 1),
        "piece_stats": {
            lang: {key: round(value, 3) for key, value in stats.items()}
            for lang, stats in language_piece_stats(tokenizer, sample).items()
        },
    }
    (folder / "init.json").write_text(json.dumps(info, indent=2))
    return info


def recipe(args: argparse.Namespace, init_folder: Path) -> dict:
    from psp_st.tokenization.multilingual import temperature_shares

    counts = pair_counts(args.data)
    shares = temperature_shares(counts, args.temperature)
    total = sum(counts.values())
    sources: list = [
        {"path": str(args.data / f"bitext-{lang}.parquet"), "weight": round(total * shares[lang] / counts[lang], 4)}
        for lang in LANGS
    ]
    if args.english_pairs:
        sources.append({"path": "training_pairs/*.parquet", "max_pairs": args.english_pairs})
    config: dict = {
        "name": f"psp-multi-probe-{args.name}",
        "seed": args.seed,
        "data": {"sources": sources, "shared_sentence_groups": True},
        "model": {"type": "psp", "init_from": str(init_folder)},
        "loss": {
            "name": "margin",
            "margin": 0.4,
            "symmetric": True,
            **({"in_batch_weight": args.in_batch_weight} if args.in_batch_weight else {}),
        },
        "megabatch": {
            "size": args.megabatch,
            "anneal": 150,
            "text_guard": True,
            "sparse_embeddings": True,
            "mining_dtype": args.mining_dtype,
            **({"language_guard": True} if args.language_guard else {}),
        },
        "trainer": {
            "num_train_epochs": args.epochs,
            "per_device_train_batch_size": 128,
            "learning_rate": args.lr,
            "lr_scheduler_type": "linear",
            "max_grad_norm": 1.0,
            "eval_steps": 100000,
            "save_steps": 100000,
            "logging_steps": 200,
        },
        "evaluation": {"sts_dev": "sts/stsbenchmark/dev.parquet"},
    }
    if args.distillation_weight:
        config["distillation"] = {
            "teacher": "all-MiniLM-L6-v2",
            "cache_dir": str(REPO / "runs" / "teacher_cache"),
            "weight": args.distillation_weight,
            "batch_size": 128,
            "lr": 0.001,
            "sources": [{**source, "path": source["path"].format(data=args.data)} for source in DISTILLATION_SOURCES],
        }
        if args.cross_per_language:  # Reimers & Gurevych 2020: student(x) ~ teacher(en) and student(en) ~ teacher(en)
            config["distillation"]["sources"] += [
                {
                    "path": str(args.data / f"bitext-{lang}.parquet"),
                    "columns": ["sentence1", "sentence2"],
                    "teacher_column": "sentence2",
                    "max_sentences": args.cross_per_language,
                }
                for lang in LANGS
            ]
    return config


def evaluate(model_folder: Path) -> dict:
    """xling suite numbers: dev (FLORES, STS-B dev) and test (Tatoeba, STS-B test), per language too."""
    from psp_st.evaluation import run_suite
    from psp_st.inference.load import load

    result = run_suite(load(str(model_folder)), "xling")["results"]
    out = {
        "flores_mean_error": round(result["flores-mean"]["mean_error"], 2),
        "flores_x2en_error": round(result["flores-mean"]["mean_src2trg_error"], 2),
        "flores_en2x_error": round(result["flores-mean"]["mean_trg2src_error"], 2),
        "stsb_dev": round(100 * result["stsb-dev"]["stsb-dev_spearman"], 2),
        "stsb_test": round(100 * result["stsb-test"]["stsb-test_spearman"], 2),
        "tatoeba_deu_error": round(result["tatoeba-deu"]["mean_error"], 2),
        "tatoeba_fra_error": round(result["tatoeba-fra"]["mean_error"], 2),
        "sts17_en_en": round(100 * result["sts17-en-en"]["sts17-en-en_spearman"], 2),
        "flores_per_language": {
            task.removeprefix("flores-"): [round(values["src2trg_error"], 1), round(values["trg2src_error"], 1)]
            for task, values in result.items()
            if task.startswith("flores-") and task != "flores-mean"
        },
    }
    return out


def train_in_process(recipe_file: Path, output: Path, args: argparse.Namespace) -> None:
    """The recipe path (``train_from_config``, in this process) with what the recipe cannot say yet.

    ``--language-guard``: the converted probe files have no ``lang`` column, so the pairs get one here: the
    language of the bitext file whose foreign side holds the first sentence, else ``en`` (an English paraphrase
    pair); the recipe sets ``megabatch.language_guard: true`` (MegaBatchTrainer's language guard).
    """
    import pandas as pd

    import psp_st.training.recipe as recipe_module

    original = recipe_module.load_recipe_pairs
    lookup: dict[str, str] = {}
    for lang in LANGS:
        lookup.update(dict.fromkeys(pd.read_parquet(args.data / f"bitext-{lang}.parquet").sentence1, lang))

    def with_languages(data_cfg, seed, counts=None, data_dir=None):
        dataset = original(data_cfg, seed, counts=counts, data_dir=data_dir)
        if "lang" in dataset.column_names:
            return dataset
        return dataset.add_column("lang", [lookup.get(text, "en") for text in dataset["sentence1"]])

    if args.language_guard:
        recipe_module.load_recipe_pairs = with_languages
    try:
        recipe_module.train_from_config(recipe_file, output_dir=output, max_steps=args.max_steps, overwrite=True)
    finally:
        recipe_module.load_recipe_pairs = original


def run(args: argparse.Namespace) -> None:
    import yaml

    if args.cross_per_language and not args.distillation_weight:
        raise SystemExit("--cross-per-language needs --distillation-weight > 0 (it joins the distillation term)")
    run_dir = args.runs / args.name
    temperature = args.tokenizer_temperature or args.temperature
    init_key = f"init-v{args.vocab}-t{temperature}-{args.init}{args.dim}-e{args.tokenizer_english_pairs}"
    init_folder = args.runs / "inits" / init_key
    start = time.perf_counter()
    info = initial_model(args, init_folder)
    config = recipe(args, init_folder)
    run_dir.mkdir(parents=True, exist_ok=True)
    recipe_file = run_dir / "recipe.yaml"
    recipe_file.write_text(yaml.safe_dump(config, sort_keys=False))
    train = [sys.executable, "-m", "psp_st", "train", "--config", str(recipe_file), "--output", str(run_dir / "train")]
    if args.max_steps:
        train += ["--max-steps", str(args.max_steps)]
    train_start = time.perf_counter()
    if args.language_guard:
        train_in_process(recipe_file, run_dir / "train", args)
    else:
        subprocess.run([*train, "--overwrite"], check=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    train_seconds = time.perf_counter() - train_start
    metrics = json.loads((run_dir / "train" / "train_metrics.json").read_text())
    record = {
        "name": args.name,
        "command": "python benchmarks/psp_multi_probes.py " + " ".join(shlex.quote(a) for a in sys.argv[1:]),
        "settings": {
            key: getattr(args, key)
            for key in (
                "vocab",
                "temperature",
                "tokenizer_temperature",
                "english_pairs",
                "tokenizer_english_pairs",
                "epochs",
                "init",
                "dim",
                "distillation_weight",
                "lr",
                "megabatch",
                "max_steps",
                "language_guard",
                "cross_per_language",
                "mining_dtype",
            )
        },
        **evaluate(run_dir / "train" / "final"),
        "steps": metrics["global_step"],
        "train_pairs": metrics["train_pairs"],
        "pairs_per_source": {Path(k).name: v for k, v in metrics["pairs_per_source"].items()},
        "vocab_size": info["vocab_size"],
        "init": info,
        "train_seconds": round(train_seconds, 1),
        "wall_seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(record))
    with open(args.log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def table(log: Path) -> None:
    print(
        "| probe | vocab | T | en pairs | epochs | init | distil | cross distil | lang guard | mining "
        "| FLORES err (mean / x->en / en->x) "
        "| STS-B dev | Tatoeba deu / fra err | STS-B test | steps | train s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for line in log.read_text().splitlines():
        r = json.loads(line)
        s = r["settings"]
        # cross-lingual distillation: pairs per language (teacher_column sources), or the old in-driver total
        cross = f"{s['cross_per_language']}/lang" if s.get("cross_per_language") else s.get("cross_distillation") or "-"
        print(
            f"| {r['name']} | {r['vocab_size']} | {s['temperature']} | {s['english_pairs']} | {s['epochs']} "
            f"| {s['init']}-{s['dim']} | {s['distillation_weight']} | {cross} | {'yes' if s.get('language_guard') else 'no'} "
            f"| {s.get('mining_dtype', 'bfloat16')} "
            f"| **{r['flores_mean_error']:.2f}** / {r['flores_x2en_error']:.2f} / {r['flores_en2x_error']:.2f} "
            f"| **{r['stsb_dev']:.2f}** | {r['tatoeba_deu_error']:.1f} / {r['tatoeba_fra_error']:.1f} "
            f"| {r['stsb_test']:.2f} | {r['steps']} | {r['train_seconds']:.0f} |"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    prep = commands.add_parser("prepare")
    prep.add_argument("--out", type=Path, required=True)
    probe = commands.add_parser("run")
    probe.add_argument("--name", required=True)
    probe.add_argument("--data", type=Path, required=True)
    probe.add_argument("--runs", type=Path, required=True)
    probe.add_argument("--vocab", type=int, default=32000)
    probe.add_argument("--temperature", type=float, default=1.0, help="language sampling of the pairs")
    probe.add_argument("--tokenizer-temperature", type=float, default=None, help="default: --temperature")
    probe.add_argument("--english-pairs", type=int, default=0, help="English paraphrase pairs mixed in per epoch")
    probe.add_argument(
        "--tokenizer-english-pairs",
        type=int,
        default=100000,
        help="English pairs whose sentences join the bitext's English sides in the tokenizer's text (fixed across "
        "probes so that the English mix does not change the vocabulary)",
    )
    probe.add_argument("--epochs", type=float, default=1.0)
    probe.add_argument("--init", choices=("random", "teacher"), default="random")
    probe.add_argument("--dim", type=int, default=384)
    probe.add_argument("--distillation-weight", type=float, default=0.0)
    probe.add_argument("--lr", type=float, default=0.05)
    probe.add_argument("--megabatch", type=int, default=100)
    probe.add_argument("--max-steps", type=int, default=None)
    probe.add_argument(
        "--mining-dtype",
        choices=("float32", "bfloat16"),
        default="float32",
        help="mega-batch mining precision (the probes before the float32 default ran bfloat16: mining_dtype.md)",
    )
    probe.add_argument(
        "--language-guard", action="store_true", help="negatives of the language of the sentence they stand in for"
    )
    probe.add_argument(
        "--cross-per-language",
        type=int,
        default=0,
        help="bitext pairs per language distilled cross-lingually (foreign and English sentence -> teacher vector "
        "of the English side: a teacher_column distillation source per bitext file)",
    )
    probe.add_argument(
        "--in-batch-weight", type=float, default=0.0, help="weight of the margin loss's in-batch softmax term"
    )
    probe.add_argument("--seed", type=int, default=42)
    probe.add_argument("--log", type=Path, default=LOG)
    show = commands.add_parser("table")
    show.add_argument("--log", type=Path, default=LOG)
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.out)
    elif args.command == "run":
        import torch

        torch.set_num_threads(1)
        run(args)
    else:
        table(args.log)


if __name__ == "__main__":
    main()

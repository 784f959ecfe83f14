"""``psp-st eval``: run the evaluation suite on a model, print a table, write JSON + markdown + plots."""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from psp_st.cli import path_argument
from psp_st.io.output_policy import OVERWRITE_HELP, check_output


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="evaluate a model (STS, paraphrase classification, retrieval, bitext mining, human-score agreement)",
        description=run.__doc__,
    )
    parser.add_argument("--model", required=True, help="model folder, psp-st short name (psp-en) or Hub id")
    parser.add_argument(
        "--suite",
        choices=("quick", "full", "xling"),
        default="quick",
        help="quick: STSb, SICK-R, STS17 en-en, PAWS-X en, MSRPC (seconds for a static model); "
        "full: everything English and more; xling: FLORES-200 devtest retrieval per language (dev), Tatoeba "
        "deu/fra, PAWS-X dev/test in 7 languages, STSb and STS17 en-en (default: quick)",
    )
    parser.add_argument(
        "--data-dir", type=path_argument, help="shared data folder (default: $PSP_ST_DATA_DIR or ../shared/data)"
    )
    parser.add_argument("--out", "--output", required=True, help="output folder for results.json, report.md and plots")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.add_argument(
        "--opusparcus-dir",
        type=path_argument,
        help="Opusparcus 1.0 folder (<lang>/{dev,test}/<lang>-{dev,test}.txt) for the full suite",
    )
    parser.add_argument("--batch-size", type=int, default=64, help="encode batch size (default: 64)")
    parser.add_argument("--threads", type=int, help="torch threads (default: all)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the quick, full or xling suite, print a summary table, and write results.json, report.md (with the command
    line) and the plots into --out; a non-empty --out needs --overwrite, which replaces the earlier files as one."""
    from psp_st.arguments import check_int
    from psp_st.evaluation import run_suite, summary_markdown, write_report
    from psp_st.inference.load import check_model_folder, open_model
    from psp_st.io.atomic import atomic_directory
    from psp_st.io.data_dir import data_folder
    from psp_st.io.model_names import resolve_model_name

    check_int("--batch-size", args.batch_size)
    folder = resolve_model_name(args.model)
    data_dir = data_folder(args.data_dir) if args.data_dir else None  # "~/data" too
    inputs = [folder if Path(folder).is_dir() else None, data_dir, args.opusparcus_dir]
    out = check_output(args.out, inputs=inputs, overwrite=args.overwrite, folder=True, option="--out")
    if Path(folder).is_dir():
        check_model_folder(folder, sha256=True)  # what eval measures is the release as built
    model = open_model(args.model, args.threads)
    earlier = ["results.json", "report.md", *(p.name for p in out.glob("agreement_*.png"))] if out.is_dir() else []
    with atomic_directory(out, replaces=earlier) as staged:
        result = run_suite(
            model,
            suite=args.suite,
            data_dir=data_dir,
            out_dir=staged,
            batch_size=args.batch_size,
            show_progress_bar=not args.no_progress,
            opusparcus_dir=args.opusparcus_dir,
            model_name=args.model,
        )
        command = "psp-st " + " ".join(shlex.quote(arg) for arg in sys.argv[1:]) if sys.argv[1:] else None
        write_report(result, staged, command=command)
    print(summary_markdown(result["summary"]) or "(no results)")
    for task, reason in result["skipped"].items():
        print(f"not run: {task}: {reason}")
    print(f"{result['seconds']:.1f} s; wrote {out / 'results.json'} and {out / 'report.md'}")
    return 0

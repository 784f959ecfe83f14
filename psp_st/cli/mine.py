"""``psp-st mine``: paraphrase (one input) or bitext (``--target``) mining with FAISS and margin scoring."""

from __future__ import annotations

import argparse
import logging

from psp_st.cli import path_argument
from psp_st.cli._shards import add_shard_options, execution_from_args, parquet_column
from psp_st.io.output_policy import OVERWRITE_HELP, check_output

logger = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "mine",
        help="mine paraphrase pairs (or X-English bitext with --target): FAISS neighbours + margin + filters",
        description="Embed the sentences (repeats, equal up to case and punctuation, collapsed to their first row), "
        "find each one's k nearest neighbours with FAISS (exact below --exact-below vectors, else IVF or HNSW), score "
        "them by the ratio margin of Artetxe & Schwenk (2019), filter (margin, cosine, length ratio, word-trigram "
        "overlap, duplicates, optionally language id) and write Parquet (sentence1, sentence2, score = margin, cosine, "
        "trigram_overlap, length_ratio, id1, id2) and a .json report (filter counts, ANN recall@k vs exact search). "
        "Resumable in --work-dir: a changed input or model is refused; --overwrite redoes only what changed.",
    )
    parser.add_argument(
        "--model", default="all-MiniLM-L6-v2", help="model folder, short name or Hub id (default: all-MiniLM-L6-v2)"
    )
    parser.add_argument(
        "--input", required=True, nargs="+", help="sentences (bitext: X side): .parquet (--column), text; folders/globs"
    )
    parser.add_argument("--target", nargs="+", help="bitext mining: the English side (same forms)")
    parser.add_argument("--target-column", help="Parquet column of --target (default: --column)")
    parser.add_argument("--output", required=True, type=path_argument, help="output .parquet of mined pairs")
    parser.add_argument(
        "--work-dir",
        type=path_argument,
        help="folder for vectors, index and neighbours (default: OUTPUT.work); rerun to resume",
    )
    parser.add_argument(
        "-k",
        "--k",
        "--top-k",
        type=int,
        default=4,
        help="neighbours per sentence, for candidates and the margin (default 4)",
    )
    parser.add_argument(
        "--strategy", choices=("all", "max"), help="all: every candidate; max: each sentence's best (bitext default)"
    )
    parser.add_argument(
        "--min-margin", type=float, default=1.1, help="minimum ratio margin (default 1.1; bitext ~1.06, --strategy max)"
    )
    parser.add_argument("--min-cosine", type=float, default=-1.0, help="minimum cosine (default -1: off)")
    parser.add_argument(
        "--max-cosine", type=float, default=1.0, help="maximum cosine (default 1: off; below 1 drops near-copies)"
    )
    parser.add_argument(
        "--max-trigram-overlap", type=float, default=0.7, help="maximum word-trigram overlap (default 0.7; 1: off)"
    )
    parser.add_argument(
        "--max-length-ratio", type=float, default=2.0, help="maximum ratio of character lengths (default 2.0)"
    )
    parser.add_argument(
        "--length-scale",
        type=float,
        default=1.0,
        help="bitext: multiply --input's character count by this before the length ratio (the median target/source "
        "character ratio; Chinese-English ~3.5: unscaled, most true pairs fail --max-length-ratio; default 1.0)",
    )
    parser.add_argument(
        "--no-dedup", action="store_true", help="keep repeated texts and text pairs (a copy takes a neighbour slot)"
    )
    parser.add_argument("--lang", help="language id filter: both sides must be this language (py3langid)")
    parser.add_argument("--source-lang", help="bitext: language of --input (language id filter)")
    parser.add_argument("--target-lang", help="bitext: language of --target (language id filter)")
    parser.add_argument(
        "--exclude-data-dir",
        type=path_argument,
        help="drop pairs with a sentence of this data folder's evaluation sets (every language, FLORES devtest too)",
    )
    parser.add_argument(
        "--index",
        choices=("auto", "flat", "ivf", "ivf-sq8", "hnsw"),
        default="auto",
        help="FAISS index (default auto: exact below --exact-below vectors, else ivf)",
    )
    parser.add_argument(
        "--exact-below", type=int, default=100_000, help="auto: exact search below this many vectors (default 100000)"
    )
    parser.add_argument("--nlist", type=int, help="IVF lists (default 4 * sqrt(n))")
    parser.add_argument("--nprobe", type=int, default=16, help="IVF lists searched per query (default 16)")
    parser.add_argument("--pca", type=int, help="PCA dimensions to search in (ivf/hnsw; e.g. 256 for 1024-d P-SP)")
    parser.add_argument(
        "--train-size", type=int, help="vectors sampled to train IVF/PCA (default 64 x max(nlist, 1024))"
    )
    parser.add_argument("--recall-k", type=int, default=10, help="report ANN recall@k vs exact search (default 10)")
    parser.add_argument("--recall-sample", type=int, default=1000, help="queries sampled for the recall (default 1000)")
    parser.add_argument("--float16", action="store_true", help="keep the work folder's vectors as float16")
    parser.add_argument("--threads", type=int, help="threads per worker (default 1)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the recall sample and IVF training (default 0)")
    add_shard_options(parser, "mine")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from psp_st.mining.pairs import mine_pairs, mining_config

    sealed = [*args.input, *(args.target or []), args.model]
    for output in (args.output, args.output.with_suffix(".json")):
        check_output(output, inputs=[args.exclude_data_dir], overwrite=args.overwrite, sealed=sealed)
    work = args.work_dir or args.output.with_name(args.output.name + ".work")
    check_output(work, [args.exclude_data_dir], folder=True, ours=lambda _: True, option="--work-dir", sealed=sealed)
    # --column is --target's column too when --target-column is not given
    uses_column = [*args.input, *(args.target if args.target is not None and args.target_column is None else [])]
    column = parquet_column("--column", args.column, uses_column)
    target_column = None
    if args.target is not None:
        target_column = parquet_column("--target-column", args.target_column, args.target, default=column)
    elif args.target_column is not None:
        raise ValueError("--target-column is for bitext mining: pass --target too")
    report = mine_pairs(
        args.input,
        args.output,
        args.model,
        target=args.target,
        config=mining_config(vars(args), bitext=args.target is not None),
        column=column,
        target_column=target_column,
        work_dir=args.work_dir,
        execution=execution_from_args(args),
        overwrite=args.overwrite,
    )
    for step in report["filters"]:
        logger.info("  %-16s kept %10d  dropped %10d", step["filter"], step["kept"], step["dropped"])
    recall = report["recall"]
    if recall["recall"] is not None:
        message = "ANN (%s) recall@%d vs exact search on %d queries: %.4f"
        logger.info(message, report["index"], recall["k"], recall["queries"], recall["recall"])
    sentences = f"{report['source_rows']} " + (f"source and {report['target_rows']} target " if args.target else "")
    repeats = report["source_repeats"] + (report["target_repeats"] if args.target else 0)
    print(
        f"wrote {report['pairs']} pairs from {sentences}sentences"
        + (f" ({repeats} repeated texts collapsed)" if repeats else "")
        + f" to {args.output} (report: {args.output.with_suffix('.json')})"
    )
    return 0

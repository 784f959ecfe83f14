"""``psp-st embed``: embed a text file (one sentence per line) into a ``.npy`` array."""

from __future__ import annotations

import argparse

from psp_st.cli._shards import add_shard_options, check_workers, execution_from_args, parquet_column
from psp_st.io.output_policy import OVERWRITE_HELP, check_output


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("embed", help="embed text lines into a .npy (streamed)", description=run.__doc__)
    parser.add_argument("--model", required=True, help="model folder, psp-st short name (psp-en) or Hub id")
    parser.add_argument("--input", required=True, help="UTF-8 text, one sentence per line (Parquet: with --shard-rows)")
    parser.add_argument("--output", required=True, help="output .npy file (shape: lines x dim)")
    parser.add_argument("--float16", action="store_true", help="store float16 (half the size)")
    parser.add_argument("--normalize", action="store_true", help="L2-normalize the vectors")
    parser.add_argument(
        "--chunk-size",
        type=int,
        help="lines embedded per chunk (the RAM bound, of each shard too with --shard-rows; default 16384)",
    )
    parser.add_argument(
        "--threads", type=int, help="torch/sentencepiece threads (default: all; sharded: per worker, default 1)"
    )
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    add_shard_options(parser, "embed")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Row i of the output is line i+1 of the input; an empty line gets the model's empty-text vector."""
    if args.ray is not None or args.shard_rows is not None:
        return run_sharded(args)
    check_workers(args)
    from psp_st.inference.files import EMBED_CHUNK_ROWS, embed_file
    from psp_st.inference.load import open_model

    check_output(args.output, overwrite=args.overwrite, sealed=[args.input, args.model])
    if not args.output.endswith(".npy"):
        raise ValueError(f"--output {args.output} must end in .npy (with --shard-rows it is a folder of .npy shards)")
    if args.input.lower().endswith(".parquet"):
        raise ValueError(f"--input {args.input} is Parquet: pass --shard-rows N (and --column) to embed a column")
    parquet_column("--column", args.column, args.input)  # refuses a --column that text input would ignore
    model = open_model(args.model, args.threads, engine=True)
    rows, dim = embed_file(
        model,
        args.input,
        args.output,
        chunk_size=EMBED_CHUNK_ROWS if args.chunk_size is None else args.chunk_size,
        float16=args.float16,
        normalize=args.normalize,
        show_progress_bar=not args.no_progress,
    )
    print(f"wrote {args.output}: {rows} x {dim} {'float16' if args.float16 else 'float32'}")
    return 0


def run_sharded(args: argparse.Namespace) -> int:
    """Sharded embedding into a folder (``part-NNNNN.npy`` + ``manifest.json``); resumes a half-done folder."""
    from psp_st.inference.files import EMBED_CHUNK_ROWS
    from psp_st.mining.embed_shards import embed_shards

    # a folder with a plan.json is a sharded job's: embed_shards resumes it, or refuses another job's (--overwrite)
    check_output(
        args.output,
        sealed=[args.input, args.model],
        overwrite=args.overwrite,
        folder=True,
        ours=lambda folder: (folder / "plan.json").is_file(),
    )
    manifest = embed_shards(
        args.input,
        args.output,
        args.model,
        shard_rows=100_000 if args.shard_rows is None else args.shard_rows,
        column=parquet_column("--column", args.column, args.input),
        normalize=args.normalize,
        float16=args.float16,
        execution=execution_from_args(args),
        overwrite=args.overwrite,
        chunk_rows=EMBED_CHUNK_ROWS if args.chunk_size is None else args.chunk_size,
    )
    print(
        f"wrote {args.output}: {manifest['rows']} x {manifest['dim']} {manifest['dtype']} in "
        f"{len(manifest['shards'])} shards (manifest.json)"
    )
    return 0

"""``psp-st score``: cosine similarity of sentence pairs in a TSV file."""

from __future__ import annotations

import argparse

from psp_st.io.output_policy import OVERWRITE_HELP, check_output


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("score", help="cosine similarity of sentence pairs (TSV)", description=run.__doc__)
    parser.add_argument("--model", required=True, help="model folder, psp-st short name (psp-en) or Hub id")
    parser.add_argument("--pairs", required=True, help="UTF-8 TSV: sentence1<TAB>sentence2 per line")
    parser.add_argument("--output", required=True, help="output TSV: the input columns plus a cosine column")
    parser.add_argument("--header", action="store_true", help="the first line is a header")
    parser.add_argument("--chunk-size", type=int, help="pairs scored per chunk (RAM bound; default 50000)")
    parser.add_argument("--threads", type=int, help="torch/sentencepiece threads (default: all)")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Lines keep their order; a line without exactly one tab (or an empty line) is an error naming it."""
    from psp_st.inference.files import SCORE_CHUNK_ROWS, score_file
    from psp_st.inference.load import open_model

    check_output(args.output, overwrite=args.overwrite, sealed=[args.pairs, args.model])
    model = open_model(args.model, args.threads, engine=True)
    count = score_file(
        model,
        args.pairs,
        args.output,
        chunk_size=SCORE_CHUNK_ROWS if args.chunk_size is None else args.chunk_size,
        header=args.header,
        show_progress_bar=not args.no_progress,
    )
    print(f"wrote {args.output}: {count} scored pairs")
    return 0

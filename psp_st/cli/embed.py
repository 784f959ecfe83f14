"""``psp-st embed``: embed a text file (one sentence per line) into a ``.npy`` array."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("embed", help="embed a text file into a .npy array (streamed, low RAM)",
                                   description=run.__doc__)
    parser.add_argument("--model", required=True, help="model folder, psp-st short name (psp-en) or Hub id")
    parser.add_argument("--input", required=True, help="UTF-8 text file, one sentence per line")
    parser.add_argument("--output", required=True, help="output .npy file (shape: lines x dim)")
    parser.add_argument("--float16", action="store_true", help="store float16 (half the size)")
    parser.add_argument("--normalize", action="store_true", help="L2-normalize the vectors")
    parser.add_argument("--chunk-size", type=int, default=100_000, help="lines embedded per chunk (RAM bound)")
    parser.add_argument("--threads", type=int, default=None, help="torch/sentencepiece threads (default: all)")
    parser.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Row i of the output is line i+1 of the input; an empty line gets the model's empty-text vector."""
    from psp_st.cli._model import open_model
    from psp_st.inference import embed_file

    model = open_model(args.model, args.threads, engine=True)
    rows, dim = embed_file(model, args.input, args.output, chunk_size=args.chunk_size, float16=args.float16,
                           normalize=args.normalize, show_progress_bar=not args.no_progress)
    print(f"wrote {args.output}: {rows} x {dim} {'float16' if args.float16 else 'float32'}")
    return 0

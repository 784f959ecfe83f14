"""``psp-st tokenizer train``: train a sentencepiece model (unigram or BPE) on a text file or a dataset column."""

from __future__ import annotations

import argparse

from psp_st.io.output_policy import OVERWRITE_HELP, check_output


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("tokenizer", help="train sentencepiece tokenizers")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    train = actions.add_parser(
        "train", help="train a sentencepiece model (unigram or BPE)", description=run_train.__doc__
    )
    train.add_argument(
        "--input", required=True, nargs="+", help="text files (a sentence per line) or Parquet/JSONL/TSV (see --column)"
    )
    train.add_argument(
        "--column",
        action="append",
        help="column(s) to read from tabular input (repeatable; default: sentence1 and sentence2 "
        "if present, else sentence, else text)",
    )
    train.add_argument("--output", required=True, help="output .model file")
    train.add_argument("--vocab-size", type=int, default=50_000, help="pieces (an upper bound; default 50000)")
    train.add_argument(
        "--character-coverage",
        type=float,
        default=1.0,
        help="1.0 (default) keeps every character (0.995 drops caption digits)",
    )
    train.add_argument("--no-lowercase", dest="lowercase", action="store_false", help="keep case")
    train.add_argument(
        "--input-sentence-size", type=int, default=10_000_000, help="cap on sampled sentences (default 10000000)"
    )
    train.add_argument("--model-type", choices=["unigram", "bpe"], default="unigram", help="default: unigram")
    train.add_argument("--byte-fallback", action="store_true", help="unknown characters become byte pieces")
    train.add_argument("--seed", type=int, default=42, help="seed of the --input-sentence-size sample (default 42)")
    train.add_argument(
        "--threads",
        type=int,
        help="sentencepiece training threads (default: all cores; the model depends on the count)",
    )
    train.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    train.set_defaults(func=run_train)


def run_train(args: argparse.Namespace) -> int:
    """Train on the given texts and report the vocabulary size and the share of texts with unknown pieces."""
    from psp_st.data.loaders import read_texts
    from psp_st.tokenization import SentencePieceTokenizer

    check_output(args.output, inputs=args.input, overwrite=args.overwrite)
    texts = read_texts(args.input, args.column)
    tokenizer = SentencePieceTokenizer.train(
        texts,
        vocab_size=args.vocab_size,
        character_coverage=args.character_coverage,
        lowercase=args.lowercase,
        input_sentence_size=args.input_sentence_size,
        model_type=args.model_type,
        byte_fallback=args.byte_fallback,
        seed=args.seed,
        num_threads=args.threads,
    )
    tokenizer.save(args.output)
    sample = texts[:50_000]
    print(
        f"wrote {args.output}: {tokenizer.vocab_size} pieces from {len(texts)} texts; "
        f"{tokenizer.unknown_rate(sample):.2%} of {len(sample)} training texts contain an unknown piece"
    )
    return 0

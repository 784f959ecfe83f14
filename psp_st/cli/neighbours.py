"""``psp-st neighbours``: the most similar sentences of a collection to a query (Opusparcus Tables 4-5)."""

from __future__ import annotations

import argparse
import logging

from psp_st.cli import text_argument

logger = logging.getLogger(__name__)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("neighbours", help="the most similar sentences to a query", description=run.__doc__)
    parser.add_argument("--model", required=True, help="model folder, psp-st short name (psp-en) or Hub id")
    parser.add_argument(
        "--query", required=True, action="append", type=text_argument, help="query sentence (repeat for several tables)"
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--candidates", help="UTF-8 text file, one candidate sentence per line")
    source.add_argument("--parquet", help="Parquet file; candidates are the distinct texts of --columns")
    parser.add_argument(
        "--columns", default="sentence1,sentence2", help="comma-separated columns of --parquet (default: %(default)s)"
    )
    parser.add_argument(
        "--gold",
        action="append",
        type=text_argument,
        help="each query's annotated paraphrase, in bold (repeat in order)",
    )
    parser.add_argument("-k", "--top-k", "--k", type=int, default=10, help="neighbours per query (default: 10)")
    parser.add_argument("--threads", type=int, help="torch threads (default: all)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Cosine similarity of each query to every distinct candidate; prints one markdown table per query."""
    from psp_st.arguments import check_int
    from psp_st.data.loaders import read_texts
    from psp_st.evaluation.embeddings import EmbeddingCache
    from psp_st.evaluation.neighbours import neighbour_tables
    from psp_st.inference.files import no_known_piece
    from psp_st.inference.load import open_model

    check_int("--top-k", args.top_k)
    if not all(query.strip() for query in args.query):
        raise ValueError("--query is empty: give the sentence whose neighbours to list")
    if args.gold is not None and len(args.gold) != len(args.query):
        raise ValueError(f"{len(args.gold)} --gold sentences for {len(args.query)} --query sentences")
    if args.parquet and not args.parquet.lower().endswith(".parquet"):
        raise ValueError(f"--parquet {args.parquet} is not a .parquet file; give a text file with --candidates")
    columns = [column.strip() for column in args.columns.split(",") if column.strip()] if args.parquet else None
    texts = read_texts([args.candidates or args.parquet], columns)
    candidates = list(dict.fromkeys(text for text in texts if text.strip()))
    if not candidates:
        raise ValueError(f"no candidate sentences in {args.candidates or args.parquet}")
    model = open_model(args.model, args.threads, engine=True)
    cache = EmbeddingCache(model, show_progress_bar=len(candidates) > 10_000 and not args.no_progress)
    unknown = no_known_piece(model, cache.encode(args.query), normalize=False)
    for query in (query for query, bad in zip(args.query, unknown, strict=True) if bad):
        logger.warning("--query %r has no piece the model knows: its cosines say nothing about meaning", query)
    for table in neighbour_tables(cache, args.query, candidates, args.top_k, args.gold):
        print(table, end="\n\n")
    return 0

"""``psp-st data``: load a pair corpus, validate it, apply filters, print the reports, optionally save the result."""

from __future__ import annotations

import argparse

from psp_st.io.atomic import atomic_path
from psp_st.io.output_policy import OVERWRITE_HELP, check_output


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "data", help="check and filter a pair corpus (Parquet/TSV/JSONL/Hub), print the counts", description=run.__doc__
    )
    parser.add_argument("source", nargs="+", help="Hub id, or local files / folders / globs (Parquet, TSV, JSONL)")
    parser.add_argument(
        "--kind",
        choices=["pairs", "bitext", "opusparcus", "training-pairs"],
        default="pairs",
        help="layout: generic pairs (default), bitext (source/target/lang), Opusparcus TSV, our training_pairs/*.parquet",
    )
    parser.add_argument("--format", choices=["parquet", "tsv", "jsonl"], help="file format (default: from the suffix)")
    parser.add_argument(
        "--column",
        action="append",
        default=[],
        metavar="OUT=SRC",
        help="map an output column to a source column (name, or 0-based position for header-less TSV); repeatable",
    )
    parser.add_argument("--filters", help="YAML file or inline YAML: 'filters:' at the top or under a recipe's 'data:'")
    parser.add_argument(
        "--on-error", choices=["raise", "skip"], default="raise", help="bad rows: stop (default) or skip and count"
    )
    parser.add_argument("--num-proc", type=int, help="processes for datasets' filter/map")
    parser.add_argument("--cache-dir", help="datasets cache folder")
    parser.add_argument("--output", help="write the kept pairs to this .parquet file")
    parser.add_argument("--overwrite", action="store_true", help=OVERWRITE_HELP)
    parser.set_defaults(func=run)


def _columns(items: list[str]) -> dict[str, str | int]:
    columns: dict[str, str | int] = {}
    for item in items:
        output, sep, source = item.partition("=")
        if not sep or not output or not source:
            raise ValueError(f"--column takes OUT=SRC, got {item!r}")
        columns[output] = int(source) if source.isdigit() else source
    return columns


def _filters(value: str | None) -> dict | list | None:
    import os

    import yaml

    from psp_st.training.recipe import RecipeLoader

    if value is None:
        return None
    path = os.path.expanduser(value)  # "--filters=~/f.yaml": no shell expanded it
    if os.path.isfile(path):
        with open(path, encoding="utf-8") as handle:
            config = yaml.load(handle, Loader=RecipeLoader)
    else:
        config = yaml.load(value, Loader=RecipeLoader)
    if isinstance(config, str):  # a file name that names no file (a typo), not inline filters
        raise FileNotFoundError(
            f"--filters {value}: no such file, and not inline YAML filters (a mapping or list): give an existing "
            "YAML file, or e.g. --filters '{length: {max: 30}}'"
        )
    if isinstance(config, dict) and "filters" in config:
        return config["filters"]
    if isinstance(config, dict) and isinstance(config.get("data"), dict):
        return config["data"].get("filters")
    if config is not None and not isinstance(config, (dict, list)):
        raise ValueError(f"--filters must be a mapping or list of filters, got {config!r}")
    return config


def run(args: argparse.Namespace) -> int:
    """Loads with psp_st.data.load_pairs (memory-mapped), validates every row, applies the filters in order."""
    from psp_st.arguments import check_int
    from psp_st.data import apply_filters, load_opusparcus, load_pairs, load_training_pairs, validate_pairs
    from psp_st.data.loaders import local_files
    from psp_st.data.pipeline import filter_steps

    filters = _filters(args.filters)
    filter_steps(filters)  # a misspelt filter or a bad value fails now, not after every row is loaded and validated
    if args.num_proc is not None:
        check_int("num_proc (--num-proc)", args.num_proc)

    if args.kind != "pairs" and (args.column or args.format):
        raise ValueError(f"--column and --format apply to --kind pairs; --kind {args.kind} has its own layout")
    if args.output is not None:  # "" is refused by check_output, not taken for "no --output"
        files = [path for item in args.source for path in local_files(item) or []]  # what globs / folders name
        check_output(args.output, inputs=[*args.source, *files, args.filters], overwrite=args.overwrite)
        if not args.output.lower().endswith(".parquet"):
            raise ValueError(f"--output {args.output}: the kept pairs are written as Parquet; end the name in .parquet")
    source = args.source[0] if len(args.source) == 1 else args.source
    bad_lines = "skip" if args.on_error == "skip" else "error"
    if args.kind == "training-pairs":
        pairs = load_training_pairs(args.source, cache_dir=args.cache_dir)
    elif args.kind == "bitext":
        bitext = {"sentence1": "source", "sentence2": "target"}  # the X side first; lang kept
        pairs = load_pairs(source, columns=bitext, cache_dir=args.cache_dir, on_bad_lines=bad_lines)
    elif args.kind == "opusparcus":
        pairs = load_opusparcus(source, cache_dir=args.cache_dir, on_bad_lines=bad_lines)
    else:
        pairs = load_pairs(
            source, format=args.format, columns=_columns(args.column), cache_dir=args.cache_dir, on_bad_lines=bad_lines
        )
    pairs, validation = validate_pairs(pairs, on_error=args.on_error, source=" ".join(args.source))
    print(validation)
    pairs, report = apply_filters(pairs, filters, num_proc=args.num_proc)
    print(report)
    if args.output is not None:
        with atomic_path(args.output) as temporary:
            pairs.to_parquet(str(temporary))
        print(f"wrote {args.output}: {len(pairs):,} pairs")
    return 0

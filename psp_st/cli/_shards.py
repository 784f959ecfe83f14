"""Options shared by the sharded commands (``embed``, ``mine``): ``--ray [ADDRESS]``, ``--workers``, ``--shard-rows``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

#: The text column of Parquet input when ``--column`` is not given.
DEFAULT_COLUMN = "sentence"


def add_shard_options(parser: argparse.ArgumentParser, command: str) -> None:
    """``--ray [ADDRESS]``, ``--workers``, ``--shard-rows``, ``--column``: the sharded (optionally Ray Data) job."""
    group = parser.add_argument_group("sharded job (resumable; Ray Data with --ray)")
    group.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help=f"run {command} as a Ray Data job: on a new local Ray instance (no ADDRESS) or on the "
        "cluster at ADDRESS (e.g. head:6379, ray://head:10001 or auto; a HOST:PORT that accepts no connection "
        'within 10 s is an error); needs pip install "psp-st[ray]"',
    )
    group.add_argument("--workers", type=int, help="Ray actors, each holding one model (default 2; needs --ray)")
    group.add_argument(
        "--shard-rows",
        type=int,
        help="rows per shard (default 100000 with --ray; a worker's unit of work, and of resuming; embedded in "
        + ("chunks of --chunk-size rows" if command == "embed" else "chunks of 16384 rows")
        + "); --input may then be a folder or glob of .parquet/.txt shards"
        + (" and --output is a folder of .npy shards + manifest.json" if command == "embed" else ""),
    )
    group.add_argument("--column", help=f"text column of Parquet input (default: {DEFAULT_COLUMN})")


def parquet_column(option: str, value: str | None, inputs: str | Sequence[str], default: str = DEFAULT_COLUMN) -> str:
    """The column ``option`` names, ``default`` when not given; given for inputs that hold no Parquet file (text is
    one sentence per line), it would be ignored: ``ValueError`` says so."""
    from psp_st.mining.shards import input_files, is_parquet

    if value is not None and not any(is_parquet(path) for path in input_files(inputs)):
        shown = inputs if isinstance(inputs, str) else " ".join(map(str, inputs))
        raise ValueError(
            f"{option} {value!r} names a Parquet column, but {shown} holds no .parquet file (a text file is read "
            f"one sentence per line): drop {option}"
        )
    return default if value is None else value


def check_workers(args: argparse.Namespace) -> None:
    """``--workers`` without ``--ray`` would do nothing (the job runs in this process): ``ValueError`` says so."""
    if args.workers is not None and not args.ray:
        raise ValueError("--workers sets the Ray actors of a --ray job: add --ray, or drop --workers")


def execution_from_args(args: argparse.Namespace):
    """The :class:`~psp_st.mining.executor.Execution` the options ask for (``--threads`` per worker, default 1)."""
    from psp_st.mining.executor import Execution

    check_workers(args)
    workers = 2 if args.workers is None else args.workers
    return Execution(ray=args.ray, workers=workers, threads=1 if args.threads is None else args.threads)

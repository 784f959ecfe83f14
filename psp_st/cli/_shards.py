"""Options shared by the sharded commands (``embed``, ``mine``): ``--ray [ADDRESS]``, ``--workers``, ``--shard-rows``."""

from __future__ import annotations

import argparse


def add_shard_options(parser: argparse.ArgumentParser, command: str) -> None:
    """``--ray [ADDRESS]``, ``--workers``, ``--shard-rows``, ``--column``: the sharded (optionally Ray Data) job."""
    group = parser.add_argument_group("sharded job (resumable; Ray Data with --ray)")
    group.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help=f"run {command} as a Ray Data job: on a new local Ray instance (no ADDRESS) or on the "
        'cluster at ADDRESS (e.g. ray://head:10001 or auto); needs pip install "psp-st[ray]"',
    )
    group.add_argument("--workers", type=int, default=2, help="Ray actors, each holding one model (default 2)")
    group.add_argument(
        "--shard-rows",
        type=int,
        help="rows per shard; --input may then be a folder or glob of .parquet/.txt shards"
        + (" and --output is a folder of .npy shards + manifest.json" if command == "embed" else ""),
    )
    group.add_argument("--column", default="sentence", help="text column of Parquet input (default: sentence)")


def execution_from_args(args: argparse.Namespace):
    """The :class:`~psp_st.mining.executor.Execution` the options ask for (``--threads`` per worker, default 1)."""
    from psp_st.mining.executor import Execution

    return Execution(ray=args.ray, workers=args.workers, threads=1 if args.threads is None else args.threads)

"""The ``psp-st`` command line: thin argument parsing over the library.

Each command lives in its own module of this package and exposes ``register(subparsers)``, which adds its
parser and sets ``func`` (called with the parsed arguments, returns an exit code). Commands import heavy
libraries inside ``func`` so that ``psp-st --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys

from psp_st import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="psp-st", description="Paraphrastic sentence embeddings for Sentence-Transformers.")
    parser.add_argument("--version", action="version", version=f"psp-st {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug messages")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        if hasattr(module, "register"):
            module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except (ValueError, TypeError, FileNotFoundError, ImportError) as error:
        if args.verbose:
            raise
        print(f"psp-st {args.command}: error: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

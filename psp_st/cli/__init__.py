"""The ``psp-st`` command line: one module per command with ``register(subparsers)`` setting ``func`` (args -> exit
code); commands import heavy libraries inside ``func``, so ``psp-st --help`` imports no torch.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import errno
import importlib
import logging
import os
import pkgutil
import sys
from pathlib import Path

from psp_st import __version__
from psp_st.io.extras import COMMAND_EXTRAS, command_extra, missing_extra


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="psp-st", description="Paraphrastic sentence embeddings for Sentence-Transformers."
    )
    parser.add_argument("--version", action="version", version=f"psp-st {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help=VERBOSE_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_")):
        importlib.import_module(f"{__name__}.{name}").register(subparsers)
    _add_common_options(parser)
    return parser


#: Help of ``-v``, before the command or after it.
VERBOSE_HELP = "progress messages and, on error, the traceback (-vv: debug)"


def _add_common_options(parser: argparse.ArgumentParser, command: bool = False) -> None:
    """Give every command (also nested ones like ``tokenizer train``) ``--no-progress`` and ``-v`` (``psp-st embed
    ... -v`` as ``psp-st -v embed ...``; unset, the top-level count stands)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in set(action.choices.values()):
                _add_common_options(sub, command=True)
            return
    parser.add_argument("--no-progress", action="store_true", help="hide every progress bar")
    if command:
        parser.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS, help=VERBOSE_HELP)


#: Exit code of every expected failure (bad input, missing file, full disk, offline Hub, ...); argparse uses it too.
EXIT_ERROR = 2

#: Exit code after Ctrl-C (the shell's 128 + SIGINT).
EXIT_INTERRUPTED = 130

#: Exit code when the reader of the output went away (``psp-st neighbours ... | head``): the shell's 128 + SIGPIPE.
EXIT_BROKEN_PIPE = 141

DATA_DIR_HELP = "shared data folder for the recipe's relative paths (default: $PSP_ST_DATA_DIR or ../shared/data)"


def path_argument(text: str) -> Path:
    """argparse ``type`` for a file or folder: an empty string (an unset ``$VARIABLE``) is refused, where ``Path("")``
    would quietly mean the current folder (``push ""`` uploaded it)."""
    if not text:
        raise argparse.ArgumentTypeError("empty path (an unset variable?): give a file or folder, '.' for this one")
    return Path(text)


def text_argument(text: str) -> str:
    """argparse ``type`` for a sentence: under a locale that is not UTF-8 (``LANG=C`` with ``PYTHONUTF8=0``) Python
    decodes the command line's UTF-8 bytes to lone surrogates, which are decoded as UTF-8 here (bytes that are not
    UTF-8 stay as given, and are refused naming the character later)."""
    if not any("\udc80" <= character <= "\udcff" for character in text):
        return text
    try:
        return os.fsencode(text).decode("utf-8")
    except UnicodeError:
        return text


#: Errors writing a library cache that another cache folder avoids (a read-only, foreign or full HOME).
CACHE_ERRNOS = (errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC)


def cache_hint(filename: str | os.PathLike) -> str | None:
    """The setting that moves the library cache ``filename`` lies in or on the way to (datasets' Arrow cache, which
    ``data``, ``train``, ``build`` and ``eval`` write; the Hub cache), or None; only libraries already imported."""
    path = Path(os.fsdecode(filename))
    caches = [
        (module, attribute, what, variable)
        for module, attribute, what, variable in (
            ("datasets.config", "HF_DATASETS_CACHE", "the datasets cache", "HF_DATASETS_CACHE (or HF_HOME)"),
            ("huggingface_hub.constants", "HF_HUB_CACHE", "the Hugging Face Hub cache", "HF_HUB_CACHE (or HF_HOME)"),
        )
        if module in sys.modules
    ]
    for module, attribute, what, variable in caches:
        cache = Path(getattr(sys.modules[module], attribute))
        if cache == path or path in cache.parents or cache in path.parents:
            return f"{what} {cache} is not writable here: set {variable} to a writable folder"
    return None


def error_message(error: BaseException) -> str:
    """One line naming the problem: the file for OS errors, the key for a KeyError, YAML's position for YAML."""
    if isinstance(error, KeyError) and len(error.args) == 1:
        text = f"missing key {error.args[0]!r} (a config, recipe or data file lacks it)"
    elif isinstance(error, OSError) and error.filename and error.strerror:
        where = f"{error.filename}" + (f" -> {error.filename2}" if error.filename2 else "")
        hints = {
            errno.ENOSPC: "free some space or write elsewhere",
            errno.EFBIG: "a file size limit: see ulimit -f, or write to another file system",
            errno.EROFS: "write to a writable folder",
            errno.EACCES: "check the permissions",
            errno.EISDIR: "give a file, not a folder",
            errno.ENOTDIR: "give a folder, not a file",
            errno.ENOENT: "check the path",
        }
        hint = cache_hint(error.filename) if error.errno in CACHE_ERRNOS else None
        hint = hint or hints.get(error.errno or -1)
        text = f"{where}: {error.strerror}" + (f" ({hint})" if hint else "")
    elif isinstance(error, UnicodeEncodeError) and error.reason == "surrogates not allowed":
        from psp_st.io.lines import NAME_NOT_UTF8

        text = f"{error} ({NAME_NOT_UTF8})"
    elif isinstance(error, ImportError) and missing_extra(error) and "psp-st[" not in str(error):
        text = f"{error} ({missing_extra(error)})"
    else:
        text = str(error) or type(error).__name__
    return " ".join(text.split())


def _escape_unencodable(error: UnicodeError) -> tuple[str | bytes, int]:
    """Codec error handler of stdout: a file name's undecodable bytes as they were (``surrogateescape``), any other
    character the stream's encoding lacks as an escape (``\\U0001f415`` on a cp1252 or ASCII stdout, not a crash)."""
    try:
        return codecs.lookup_error("surrogateescape")(error)
    except UnicodeError:
        return codecs.backslashreplace_errors(error)


codecs.register_error("psp-st-escape", _escape_unencodable)


@contextlib.contextmanager
def _escaping_stdout():
    """While a command runs, stdout escapes what its encoding cannot show (a sentence printed by ``neighbours`` or
    ``data`` to a redirected Windows stdout, to ``LANG=C``) instead of failing half-way through the output."""
    stream = sys.stdout
    errors = getattr(stream, "errors", None)
    try:
        stream.reconfigure(errors="psp-st-escape")  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):  # not a TextIOWrapper (an application's own stream)
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors=errors)  # type: ignore[union-attr]


def main(argv: list[str] | None = None) -> int:
    """Run a command; an expected failure prints one line (``-v``: the traceback) and returns :data:`EXIT_ERROR`."""
    parser = build_parser()
    args = parser.parse_args(argv)
    level = logging.DEBUG if args.verbose >= 2 else logging.INFO if args.verbose == 1 else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger().setLevel(level)  # also when a handler was installed before (an embedding application)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_ERROR
    import yaml  # a base dependency

    from psp_st.io.progress import progress_bars_disabled

    args.no_progress = args.no_progress or not sys.stderr.isatty()  # bars only on a terminal, never in a log
    extra = command_extra.set(COMMAND_EXTRAS.get(args.command))  # a missing package is named with this command's extra
    # a failure caused by the input or the environment is one line; anything else is a bug (traceback)
    try:
        with progress_bars_disabled() if args.no_progress else contextlib.nullcontext(), _escaping_stdout():
            return int(args.func(args) or 0)
    except BrokenPipeError:  # stop quietly, like any Unix tool; stdout to /dev/null so exiting flushes nothing more
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except (OSError, ValueError, TypeError, KeyError, ImportError, FloatingPointError, yaml.YAMLError) as error:
        if args.verbose:
            raise
        print(f"psp-st {args.command}: error: {error_message(error)} (-v shows the traceback)", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt as error:  # Ctrl-C: one line (train's names the checkpoint --resume continues from)
        if args.verbose:
            raise
        print(f"psp-st {args.command}: {str(error) or 'interrupted'}", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        command_extra.reset(extra)

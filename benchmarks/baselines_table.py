"""The baselines table (benchmarks/results/baselines.md): train and score each baseline, interleaved speed of the
saved baselines, then the table.

Experiment tooling, not library (the baselines live in ``benchmarks/baselines/``): ``sbert``, ``cross-encoder``
and ``turku`` train and score one baseline and write its JSON record (``--results``). ``speed`` measures every saved model in one process, round by round (``--repeats`` rounds, the median
kept), so a busy moment of the shared machine hits every model alike; ``table`` renders the records (no number
typed by hand), the speed JSON replacing the pairs/s column.

    python benchmarks/baselines_table.py sbert|cross-encoder|turku [--model all-MiniLM-L6-v2] --results RECORD.json
    python benchmarks/baselines_table.py speed 'NAME=sbert|cross-encoder|turku:PATH' ... --output speed.json
    python benchmarks/baselines_table.py table RECORD.json ... [--speed speed.json] [--preamble notes.md]
        [--output benchmarks/results/baselines.md]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from baselines import cli  # noqa: E402  (benchmarks/baselines: the transformer baselines)
from baselines.runner import setup_threads  # noqa: E402
from baselines.speed import encode_pairs, measure_pairs_per_second, speed_pairs  # noqa: E402

from psp_st.cli import EXIT_ERROR, error_message  # noqa: E402
from psp_st.io.atomic import atomic_path, atomic_write_json  # noqa: E402

KINDS = ("sbert", "cross-encoder", "turku")
#: Table columns: (header, metric key, decimals).
COLUMNS: tuple[tuple[str, str, int], ...] = (
    ("STSb test ρ", "stsb_spearman", 1),
    ("SICK-R ρ", "sick_spearman", 1),
    ("PAWS-X en acc", "pawsx_en_accuracy", 1),
    ("PAWS-X de acc", "pawsx_de_accuracy", 1),
    ("PAWS-X fr acc", "pawsx_fr_accuracy", 1),
    ("MSRPC acc", "msrpc_accuracy", 1),
    ("MSRPC F1", "msrpc_f1", 1),
    ("Turku acc", "turku_accuracy", 1),
    ("Turku W-F1", "turku_weighted_f1", 1),
    ("Turku binary bal. acc", "turku_binary_balanced_accuracy", 1),
    ("pairs/s (1 thread)", "pairs_per_second", 0),
    ("train time", "train_seconds", 0),
)


def parse_model_spec(spec: str) -> tuple[str, str, str]:
    """``NAME=KIND:PATH`` -> ``(name, kind, path)``; a clear error otherwise."""
    name, _, rest = spec.partition("=")
    kind, _, path = rest.partition(":")
    if not (name and path) or kind not in KINDS:
        raise SystemExit(f"bad model spec {spec!r}: expected NAME=sbert|cross-encoder|turku:PATH")
    return name, kind, path


def scorer(kind: str, path: str) -> Callable[[list[tuple[str, str]]], Any]:
    """A function that scores a list of pairs with the saved model of ``kind`` at ``path``."""
    if kind == "sbert":
        from baselines.bi_encoder import build_bi_encoder

        return encode_pairs(build_bi_encoder(path))
    if kind == "cross-encoder":
        from sentence_transformers.cross_encoder import CrossEncoder

        cross = CrossEncoder(path, device="cpu")
        return lambda pairs: cross.predict(pairs, batch_size=32, show_progress_bar=False)
    from baselines.turku_classifier import TurkuClassifier

    turku = TurkuClassifier.load(path)
    return lambda pairs: turku.predict(pairs, batch_size=32)


def compare_speed(args: argparse.Namespace, command: str) -> dict[str, float]:
    """Median pairs/s of each model over ``--repeats`` interleaved rounds on the first ``--pairs`` STSb test pairs."""
    setup_threads(args.threads)
    scorers = {name: scorer(kind, path) for name, kind, path in map(parse_model_spec, args.models)}
    inputs = speed_pairs(args.data_dir, n=args.pairs)
    runs: dict[str, list[float]] = {name: [] for name in scorers}
    for _ in range(args.repeats):
        for name, score in scorers.items():
            runs[name].append(measure_pairs_per_second(score, inputs, threads=args.threads))
    result = {name: statistics.median(values) for name, values in runs.items()}
    for name, value in result.items():
        print(f"{name}: {value:.1f} pairs/s")
    if args.output:
        record = {"pairs_per_second": result, "runs": runs, "pairs": len(inputs), "threads": args.threads}
        load = [round(x, 2) for x in os.getloadavg()]
        atomic_write_json(args.output, {**record, "command": command, "load_average_at_end": load})
    return result


def _cell(record: dict[str, Any], key: str, decimals: int) -> str:
    if key == "train_seconds":
        seconds = (record.get("train") or {}).get("seconds")
        return "—" if seconds is None else f"{seconds / 60:.1f} min"
    value = record["metrics"].get(key)
    return "—" if value is None else f"{value:.{decimals}f}"


def results_table(records: Sequence[dict[str, Any]]) -> str:
    """Markdown: one row per record, the :data:`COLUMNS`; "—" where a metric does not apply."""
    header = "| model | " + " | ".join(name for name, _, _ in COLUMNS) + " |"
    rule = "|---|" + "---|" * len(COLUMNS)
    rows = [f"| {r['name']} | " + " | ".join(_cell(r, key, d) for _, key, d in COLUMNS) + " |" for r in records]
    return "\n".join([header, rule, *rows])


def _runnable(command: str) -> str:
    """A record's command as it runs today: records written before 2026-11 name ``psp-st baseline``, now this script."""
    old = "psp-st baseline "
    return "python benchmarks/baselines_table.py " + command[len(old) :] if command.startswith(old) else command


def render_table(args: argparse.Namespace, command: str) -> str:
    """The table of the run records, written to ``--output`` (preamble above, commands below) or returned."""
    records = []
    for path in args.records:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
        if "metrics" not in record or "name" not in record:
            raise SystemExit(f"{path}: not a baseline record (needs 'name' and 'metrics')")
        records.append(record)
    commands = [f"# {r['name']}\n{_runnable(r['command'])}" for r in records if r.get("command")]
    if args.speed:
        speed = json.loads(Path(args.speed).read_text(encoding="utf-8"))
        commands.append(f"# pairs/s column\n{_runnable(speed.get('command') or '')}")
        for record in records:
            if record["name"] in speed["pairs_per_second"]:
                record["metrics"]["pairs_per_second"] = speed["pairs_per_second"][record["name"]]
    if not args.output:
        return results_table(records)
    preamble = Path(args.preamble).read_text(encoding="utf-8").rstrip() + "\n\n" if args.preamble else ""
    commands.append(f"# this file\n{command}")
    text = preamble + results_table(records)
    text += "\n\nCommands (each writes the JSON record the row is read from):\n\n```bash\n"
    text += "\n".join(commands) + "\n```\n"
    with atomic_path(args.output) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return f"wrote {args.output}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    speed = commands.add_parser("speed", help="pairs/s of saved baselines, measured in one process, interleaved")
    speed.add_argument("models", nargs="+", metavar="NAME=KIND:PATH", help="KIND: sbert, cross-encoder or turku")
    speed.add_argument("--data-dir", type=Path)
    speed.add_argument("--pairs", type=int, default=1000, help="first N STSb test pairs")
    speed.add_argument("--repeats", type=int, default=3, help="rounds over all models; the median is kept")
    speed.add_argument("--threads", type=int, default=1)
    speed.add_argument("--output", type=Path, help="JSON {name: pairs/s} for `table --speed`")
    table = commands.add_parser("table", help="markdown table from run records")
    table.add_argument("records", nargs="+", type=Path)
    table.add_argument("--speed", type=Path, help="JSON from `speed`: replaces the pairs/s column")
    table.add_argument("--output", type=Path, help="write the table (and commands) here; default: print")
    table.add_argument("--preamble", type=Path, help="markdown file whose text goes above the table")
    cli.register(commands)
    args = parser.parse_args(argv)
    command = shlex.join(["python", "benchmarks/baselines_table.py", *(sys.argv[1:] if argv is None else argv)])
    args.command_line = command
    try:
        if args.command == "speed":
            compare_speed(args, command)
        elif args.command == "table":
            print(render_table(args, command))
        else:
            return args.func(args)
    except (OSError, ValueError, TypeError, KeyError, ImportError) as error:
        print(f"baselines_table.py {args.command}: error: {error_message(error)}", file=sys.stderr)
        return EXIT_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())

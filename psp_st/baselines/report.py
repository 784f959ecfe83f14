"""The baselines results table: one JSON record per run in, one markdown table out (no number typed by hand)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from psp_st.io.atomic import atomic_path

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


def write_record(path: str | os.PathLike, record: dict[str, Any]) -> None:
    """Write one run's record (name, kind, command, training facts, metrics) as JSON, atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def read_records(paths: Sequence[str | os.PathLike]) -> list[dict[str, Any]]:
    records = []
    for path in paths:
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
        if "metrics" not in record or "name" not in record:
            raise ValueError(f"{path}: not a baseline record (needs 'name' and 'metrics')")
        records.append(record)
    return records


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


def commands_list(records: Sequence[dict[str, Any]]) -> str:
    return "\n".join(f"# {r['name']}\n{r['command']}" for r in records if r.get("command"))


def write_table(
    records: Sequence[dict[str, Any]], path: str | os.PathLike, preamble: str = "", extra_commands: Sequence[str] = ()
) -> Path:
    """Write the table and the commands that produced every row (then ``extra_commands``) to a markdown file."""
    text = (preamble.rstrip() + "\n\n" if preamble else "") + results_table(records)
    commands = "\n".join([commands_list(records), *extra_commands])
    text += "\n\nCommands (each writes the JSON record the row is read from):\n\n```bash\n" + commands + "\n```\n"
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def table_from_records(
    paths: Sequence[str | os.PathLike],
    speed: str | os.PathLike | None = None,
    output: str | os.PathLike | None = None,
    preamble: str | os.PathLike | None = None,
    command: str | None = None,
) -> str:
    """The results table of the run records at ``paths``, written to ``output`` (with ``preamble`` above it and
    the commands below) or returned as markdown. ``speed`` (a ``psp-st baseline speed`` JSON) replaces the
    pairs/s column. Returns the table, or the line naming the file written."""
    records = read_records(paths)
    extra = []
    if speed:
        speed_record = json.loads(Path(speed).read_text(encoding="utf-8"))
        speeds = speed_record["pairs_per_second"]
        extra.append(f"# pairs/s column\n{speed_record.get('command') or ''}")
        for record in records:
            if record["name"] in speeds:
                record["metrics"]["pairs_per_second"] = speeds[record["name"]]
    if not output:
        return results_table(records)
    text = Path(preamble).read_text(encoding="utf-8") if preamble else ""
    if command:
        extra.append(f"# this file\n{command}")
    return f"wrote {write_table(records, output, text, extra)}"

"""Turn :func:`~psp_st.evaluation.run_suite` results into markdown tables, JSON and a markdown report."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from psp_st.io.atomic import atomic_path, atomic_write_json

#: What a cosine-threshold row of the report means (a test set's accuracy and F1 chose their threshold on it).
THRESHOLD_NOTE = (
    "Pair classification: accuracy and F1 use the best threshold on the evaluated set itself (ST's and MTEB's "
    "convention: optimistic, on a test set the test set chose it); accuracy at dev threshold applies the threshold "
    "best on the dev split (MSRPC, which has none: train)."
)


def summary_markdown(summary: list[dict[str, Any]]) -> str:
    """The summary rows as markdown tables: one per group, one row per task, one column per metric."""
    blocks = []
    for group in dict.fromkeys(row["group"] for row in summary):
        rows = [row for row in summary if row["group"] == group]
        metrics = list(dict.fromkeys(row["metric"] for row in rows))
        tasks = list(dict.fromkeys(row["task"] for row in rows))
        values = {(row["task"], row["metric"]): row["value"] for row in rows}
        lines = [f"### {group}", "", "| task | " + " | ".join(metrics) + " |", "|---|" + "---:|" * len(metrics)]
        for task in tasks:
            cells = [f"{values[(task, m)]:.2f}" if (task, m) in values else "" for m in metrics]
            lines.append(f"| {task} | " + " | ".join(cells) + " |")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def to_markdown(result: dict[str, Any], command: str | None = None) -> str:
    """A markdown report: summary tables, skipped tasks, plots, nearest-neighbour tables and timing."""
    lines = [f"# Evaluation of {result['model']} ({result['suite']} suite)", ""]
    if command:
        lines += ["Command:", "", "```bash", command, "```", ""]
    lines += [
        f"Data: `{result['data_dir']}`. {result['embedded_texts']:,} distinct texts embedded; "
        f"total {result['seconds']:.1f} s.",
        "",
        "Correlations, accuracies, F1 and AP are ×100; retrieval and bitext numbers are percentages.",
        "",
    ]
    if any(row["metric"] == "majority rate" for row in result["summary"]):
        lines += [THRESHOLD_NOTE, ""]
    lines += [summary_markdown(result["summary"]), ""]
    if result.get("skipped"):
        lines += ["### Not run", ""] + [f"- **{task}**: {reason}" for task, reason in result["skipped"].items()] + [""]
    if result.get("plots"):
        lines += ["### Mean cosine per human score level", ""]
        lines += [f"![{plot}]({plot})" for plot in result["plots"]] + [""]
    if result.get("neighbours"):
        lines += ["### Nearest neighbours (STS Benchmark test sentences)", ""]
        lines += [line for table in result["neighbours"] for line in (table, "")]
    if result.get("task_seconds"):
        lines += ["### Time per task (s)", "", "| task | seconds |", "|---|---:|"]
        lines += [f"| {task} | {seconds:.1f} |" for task, seconds in result["task_seconds"].items()] + [""]
    return "\n".join(lines)


def write_report(result: dict[str, Any], out_dir: str | os.PathLike, command: str | None = None) -> dict[str, Path]:
    """Write ``results.json`` and ``report.md`` into ``out_dir`` (atomically) and return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "results.json", "markdown": out / "report.md"}
    atomic_write_json(paths["json"], dict(result, command=command) if command else result)
    with atomic_path(paths["markdown"]) as temporary:
        Path(temporary).write_text(to_markdown(result, command), encoding="utf-8", errors="backslashreplace")
    return paths

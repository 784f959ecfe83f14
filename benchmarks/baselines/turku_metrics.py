"""Scores of full Turku label predictions, laid out like Table 4 of the Turku paraphrase paper.

Table 4 reports precision/recall/F1 for the base labels merged with the subsumption flag (``2``, ``3``, ``4``,
``4<``, ``4>``), the flags ``i`` and ``s`` on their own, and on the complete labels (every allowed combination
of base label and flags as its own class) the support-weighted average ("W. avg") and the accuracy. We add
each head's accuracy and weighted F1: the base head over all rows, the flag heads over rows whose gold base
label is 4 (the only rows they are trained on).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from psp_st.evaluation.turku_labels import FLAGGED_BASE, TurkuLabel, parse_labels


def _prf(
    gold: Sequence[Hashable], pred: Sequence[Hashable], average: str | None, labels: Sequence[Hashable] | None = None
):
    from sklearn.metrics import precision_recall_fscore_support

    return precision_recall_fscore_support(gold, pred, average=average, labels=labels, zero_division=0)


def turku_scores(gold: Sequence[object], predicted: Sequence[object]) -> dict[str, Any]:
    """Table-4-style scores of predicted against gold labels (strings or :class:`TurkuLabel`).

    Returns ``accuracy`` and ``weighted_{precision,recall,f1}`` on complete labels, ``classes`` (per merged
    class and flag: precision, recall, f1, support), and ``heads`` (per head: accuracy, weighted_f1, rows).
    """
    from sklearn.metrics import accuracy_score

    gold_labels = [g if isinstance(g, TurkuLabel) else parse_labels([g], "gold labels")[0] for g in gold]
    pred_labels = [p if isinstance(p, TurkuLabel) else parse_labels([p], "predicted labels")[0] for p in predicted]
    if len(gold_labels) != len(pred_labels):
        raise ValueError(f"got {len(gold_labels)} gold labels but {len(pred_labels)} predictions")
    if not gold_labels:
        raise ValueError("no labels to score")
    full_gold, full_pred = [str(g) for g in gold_labels], [str(p) for p in pred_labels]
    precision, recall, f1, _ = _prf(full_gold, full_pred, "weighted")
    result: dict[str, Any] = {
        "n": len(full_gold),
        "accuracy": float(accuracy_score(full_gold, full_pred)),
        "weighted_precision": float(precision),
        "weighted_recall": float(recall),
        "weighted_f1": float(f1),
    }

    classes: dict[str, dict[str, float]] = {}
    # base label merged with the subsumption flag (``4<``): the classes of the paper's Table 4
    merged_gold = [g.base + g.subsumption for g in gold_labels]
    merged_pred = [q.base + q.subsumption for q in pred_labels]
    names = sorted(set(merged_gold) | set(merged_pred))
    p, r, f, s = _prf(merged_gold, merged_pred, None, labels=names)
    for i, name in enumerate(names):
        classes[name] = {"precision": float(p[i]), "recall": float(r[i]), "f1": float(f[i]), "support": int(s[i])}
    for flag, attribute in (("i", "minor"), ("s", "style")):
        flag_gold = [getattr(g, attribute) == flag for g in gold_labels]
        flag_pred = [getattr(q, attribute) == flag for q in pred_labels]
        p, r, f, s = _prf(flag_gold, flag_pred, None, labels=[True])
        classes[flag] = {"precision": float(p[0]), "recall": float(r[0]), "f1": float(f[0]), "support": int(s[0])}
    result["classes"] = classes

    heads: dict[str, dict[str, float]] = {}
    flagged = [i for i, g in enumerate(gold_labels) if g.base == FLAGGED_BASE]
    for head, rows in (
        ("base", range(len(gold_labels))),
        ("subsumption", flagged),
        ("style", flagged),
        ("minor", flagged),
    ):
        rows = list(rows)
        if not rows:
            continue
        head_gold = [getattr(gold_labels[i], head) or "none" for i in rows]
        head_pred = [getattr(pred_labels[i], head) or "none" for i in rows]
        heads[head] = {
            "accuracy": float(accuracy_score(head_gold, head_pred)),
            "weighted_f1": float(_prf(head_gold, head_pred, "weighted")[2]),
            "rows": len(rows),
        }
    result["heads"] = heads
    return result


def format_turku_table(scores: dict[str, Any]) -> str:
    """A markdown table in the layout of the paper's Table 4 (P/R/F per class, then W. avg and Acc)."""
    lines = ["| class | P | R | F | support |", "|---|---|---|---|---|"]
    for name, row in scores["classes"].items():
        lines.append(
            f"| {name} | {100 * row['precision']:.1f} | {100 * row['recall']:.1f} | {100 * row['f1']:.1f} | {row['support']} |"
        )
    lines.append(
        f"| W. avg | {100 * scores['weighted_precision']:.1f} | {100 * scores['weighted_recall']:.1f} | "
        f"{100 * scores['weighted_f1']:.1f} | {scores['n']} |"
    )
    lines.append(f"| Acc | | | {100 * scores['accuracy']:.1f} | {scores['n']} |")
    lines.append("")
    lines.append("| head | accuracy | weighted F1 | rows |")
    lines.append("|---|---|---|---|")
    for head, row in scores["heads"].items():
        lines.append(f"| {head} | {100 * row['accuracy']:.1f} | {100 * row['weighted_f1']:.1f} | {row['rows']} |")
    return "\n".join(lines)

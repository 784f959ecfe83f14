"""The Turku Paraphrase Corpus label scheme: a base label plus optional flags, parsed strictly.

A label is a base label ``1``-``4`` (1 unrelated, 2 related but not a paraphrase, 3 paraphrase in context,
4 paraphrase in all contexts), and, on base label 4 only, the flags ``<`` or ``>`` (one side is more
general; at most one of the two), ``i`` (minor deviation) and ``s`` (style difference). The corpus writes
them in the order base, subsumption, ``i``, ``s`` (``4>is``); :func:`parse_label` also accepts the flags in
another order but always gives back that canonical order.

References:
    Kanerva et al., "Towards Diverse and Contextually Anchored Paraphrase Modeling: A Dataset and Baselines
    for Finnish", Natural Language Engineering (2023), sections 4 and 7.1.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: Base labels of the scheme, in head order.
BASE_LABELS: tuple[str, ...] = ("1", "2", "3", "4")
#: The base label on which flags are allowed.
FLAGGED_BASE = "4"

SCHEME_HELP = (
    "a Turku label is a base label 1-4, and only on 4 optional flags: one of '<' or '>', 'i', 's' "
    "(e.g. '3', '4', '4>', '4<i', '4>is')"
)


@dataclass(frozen=True)
class TurkuLabel:
    """One parsed label: the base label and its three flags (empty strings when absent)."""

    base: str
    subsumption: str = ""
    minor: str = ""
    style: str = ""

    def __str__(self) -> str:
        return f"{self.base}{self.subsumption}{self.minor}{self.style}"

    @property
    def group(self) -> str:
        """The retrieval reporting group (section 8.1): ``1``, ``2``, ``3``, ``4<>`` (4 with ``<`` or ``>``) or
        ``4``; the flags ``i`` and ``s`` do not change it (``4i`` is ``4``, ``4>s`` is ``4<>``)."""
        return f"{self.base}<>" if self.subsumption else self.base


def parse_label(text: object) -> TurkuLabel:
    """Parse one label string such as ``'4>i'``; raise ``ValueError`` for anything outside the scheme."""
    if isinstance(text, bool) or not isinstance(text, (str, int)):
        raise ValueError(f"label {text!r} is of type {type(text).__name__}, expected a string; {SCHEME_HELP}")
    raw = str(text).strip()
    if not raw or raw[0] not in BASE_LABELS:
        raise ValueError(f"label {text!r} is not in the Turku scheme: {SCHEME_HELP}")
    base, flags = raw[0], raw[1:]
    if flags and base != FLAGGED_BASE:
        raise ValueError(f"label {text!r} is not in the Turku scheme: flags are only allowed on base label 4")
    unknown = sorted(set(flags) - {"<", ">", "i", "s"})
    if unknown:
        raise ValueError(f"label {text!r} is not in the Turku scheme: unknown flag(s) {unknown}; {SCHEME_HELP}")
    if len(set(flags)) != len(flags):
        raise ValueError(f"label {text!r} is not in the Turku scheme: a flag is repeated")
    if "<" in flags and ">" in flags:
        raise ValueError(f"label {text!r} is not in the Turku scheme: '<' and '>' exclude each other")
    subsumption = "<" if "<" in flags else ">" if ">" in flags else ""
    return TurkuLabel(base, subsumption, "i" if "i" in flags else "", "s" if "s" in flags else "")


def parse_labels(labels: Iterable[object], source: str = "labels") -> list[TurkuLabel]:
    """Parse a column of labels; the error names the first bad row (0-based) and ``source``."""
    parsed = []
    for row, text in enumerate(labels):
        try:
            parsed.append(parse_label(text))
        except ValueError as error:
            raise ValueError(f"{source}, row {row}: {error}") from None
    return parsed

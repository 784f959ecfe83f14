"""The Turku Paraphrase Corpus label scheme, parsed strictly (Kanerva et al., "Towards Diverse and Contextually
Anchored Paraphrase Modeling: A Dataset and Baselines for Finnish", NLE 2023, sections 4 and 7.1)."""

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
    """One parsed label: the base label ``1``-``4`` (unrelated, related, paraphrase in context, in all contexts) and,
    on 4 only, its flags (empty when absent): ``<`` or ``>`` (one side more general), ``i`` (minor deviation), ``s``
    (style). ``str()`` gives the corpus' order, ``4>is``, whatever order :func:`parse_label` read."""

    base: str
    subsumption: str = ""
    minor: str = ""
    style: str = ""

    def __str__(self) -> str:
        return f"{self.base}{self.subsumption}{self.minor}{self.style}"

    @property
    def group(self) -> str:
        """The retrieval reporting group (section 8.1): ``4<>`` for 4 with ``<`` or ``>``, else the base label."""
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

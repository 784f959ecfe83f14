"""Validation of text inputs shared by every tokenizer: a clear error instead of a crash deep inside."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_texts(texts: Sequence[str] | str, where: str | None = None) -> list[str]:
    """Return ``texts`` as a list of strings, or raise naming the first bad element.

    A single string is treated as a list of one. ``None``, numbers and other non-strings raise
    :class:`TypeError` with their index (or, with ``where``, naming the caller instead: Sentence-Transformers
    reorders inputs by length, so a batch index would mislead); empty and whitespace-only strings are valid (each encoder documents
    what they embed to).
    """
    if isinstance(texts, str):
        return [texts]
    if isinstance(texts, (bytes, bytearray)):
        raise TypeError("texts must be str, not bytes: decode them first (e.g. bytes.decode('utf-8'))")
    if isinstance(texts, (Set, Mapping)):  # rows in an order nobody chose, or the keys of a mapping
        raise TypeError(f"texts must be a sequence of strings, got {type(texts).__name__}: pass a list")
    try:
        texts = list(texts)
    except TypeError:
        raise TypeError(f"texts must be a list of strings, got {type(texts).__name__}") from None
    try:  # fast path, in C: every element a string, all of them valid Unicode
        joined = "".join(texts)
    except TypeError:
        joined = None  # a non-string: the loop below names it
    if joined is not None and (joined.isascii() or not _has_surrogate(joined)):
        return texts
    for index, text in enumerate(texts):
        label = f"texts[{index}]" if where is None else f"an input of {where}"
        if not isinstance(text, str):
            raise TypeError(f"{label} is {type(text).__name__} ({text!r:.40}), expected str")
        if not text.isascii():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError as error:  # a lone surrogate (e.g. from a bad decode with errors=surrogateescape)
                raise ValueError(
                    f"{label} has an unpaired surrogate {text[error.start]!r} at character {error.start}, "
                    "which is not valid Unicode text: decode the input as UTF-8 with errors='replace' "
                    "or fix it"
                ) from None
    return texts

"""Validation of text inputs shared by every tokenizer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

from psp_st.arguments import check_int


def check_max_length(max_length: object) -> int | None:
    """``max_length`` (tokens kept per text) as an int ``>= 0``, or None; a negative one would count from the end."""
    return None if max_length is None else check_int("max_length", max_length, minimum=0)


def refuse_single_text(texts: object, name: str = "texts") -> None:
    """TypeError naming ``name`` for one ``str``/``bytes`` where an iterable of texts is due (iterating it would
    give its characters)."""
    if isinstance(texts, (str, bytes)):
        raise TypeError(
            f"{name} must be a list (or other iterable) of strings, got a single {type(texts).__name__}: wrap it in a list"
        )


def check_texts(texts: Sequence[str] | str, where: str | None = None) -> list[str]:
    """``texts`` as a list of strings (a string: a list of one); a non-string raises TypeError naming its index,
    or ``where`` (Sentence-Transformers reorders inputs by length, so an index would mislead), a lone surrogate
    ValueError. Empty and whitespace-only strings are valid."""
    if isinstance(texts, str):
        return [texts]
    if isinstance(texts, (bytes, bytearray)):
        raise TypeError("texts must be str, not bytes: decode them first (e.g. bytes.decode('utf-8'))")
    if isinstance(texts, (Set, Mapping)):  # an order nobody chose
        raise TypeError(f"texts must be a sequence of strings, got {type(texts).__name__}: pass a list")
    try:
        texts = list(texts)
    except TypeError:
        raise TypeError(f"texts must be a list of strings, got {type(texts).__name__}") from None
    try:  # fast path, in C: every element a string, all of them valid Unicode
        joined = "".join(texts)
        if not joined.isascii():
            joined.encode("utf-8")
        return texts
    except (TypeError, UnicodeEncodeError):
        pass  # the loop below names the bad element
    for index, text in enumerate(texts):
        label = f"texts[{index}]" if where is None else f"an input of {where}"
        if not isinstance(text, str):
            raise TypeError(f"{label} is {type(text).__name__} ({text!r:.40}), expected str")
        error = surrogate_error(label, text)
        if error is not None:
            raise error
    return texts


def surrogate_error(label: str, text: str) -> ValueError | None:
    """The error naming ``label`` when ``text`` holds a lone surrogate (e.g. from errors=surrogateescape), else None."""
    if text.isascii():
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return ValueError(
            f"{label} has an unpaired surrogate {text[error.start]!r} at character {error.start}, which is "
            "not valid Unicode text: decode the input as UTF-8 with errors='replace' or fix it"
        )
    return None


def training_text_error(index: int, text: object) -> Exception | None:
    """Why training text ``index`` cannot be trained on (not a string, a lone surrogate, which no tokenizer file
    can hold), else None: the trainers report it before training, not at save time (Z8-7)."""
    if not isinstance(text, str):
        return TypeError(f"training text #{index} is {type(text).__name__}, expected str")
    return surrogate_error(f"training text #{index}", text)

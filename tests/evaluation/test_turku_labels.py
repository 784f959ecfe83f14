from __future__ import annotations

import pytest

from psp_st.evaluation.turku_labels import TurkuLabel, parse_label, parse_labels


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1", TurkuLabel("1")),
        ("3", TurkuLabel("3")),
        ("4", TurkuLabel("4")),
        ("4>", TurkuLabel("4", subsumption=">")),
        ("4<i", TurkuLabel("4", subsumption="<", minor="i")),
        ("4>is", TurkuLabel("4", subsumption=">", minor="i", style="s")),
        ("4si", TurkuLabel("4", minor="i", style="s")),
        (4, TurkuLabel("4")),
    ],
)
def test_parse_label_accepts_the_scheme(text, expected):
    assert parse_label(text) == expected


def test_str_is_canonical_order():
    assert str(parse_label("4s>i")) == "4>is"
    assert parse_label("4<s").group == "4<>"


@pytest.mark.parametrize("bad", ["5", "0", "4<>", "3i", "2>", "4x", "4ii", "", " ", "x4", None, 4.0, True])
def test_parse_label_rejects_labels_outside_the_scheme(bad):
    with pytest.raises(ValueError, match="Turku scheme|expected a string"):
        parse_label(bad)


def test_parse_labels_names_the_bad_row_and_source():
    with pytest.raises(ValueError, match=r"train\.parquet, row 2: label '4<>'"):
        parse_labels(["4", "3", "4<>", "5"], source="train.parquet")
    with pytest.raises(ValueError, match="row 1: label '5'"):
        parse_labels(["4", "5"])

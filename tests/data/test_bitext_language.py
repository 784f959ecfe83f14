"""Language identification on both sides of X-English bitext (LanguageFilter, py3langid)."""

from __future__ import annotations

import pandas as pd
import pytest

pytest.importorskip("py3langid")


def test_language_filter_drops_pairs_whose_sides_are_swapped_or_wrong(data_dir):
    from psp_st.data.language import LanguageFilter

    frame = pd.read_parquet(data_dir / "bitext" / "fr-en.parquet").head(40)
    sources, targets = frame.source.tolist(), frame.target.tolist()
    batch = {"sentence1": sources + targets[:5], "sentence2": targets + sources[:5]}  # 5 swapped pairs at the end
    keep = LanguageFilter(sentence1="fr", sentence2="en", candidates=("de", "en", "fr")).keep(batch)
    assert keep[len(sources) :] == [False] * 5
    assert sum(keep[: len(sources)]) >= 0.9 * len(sources)

"""Lower-casing of both sides as a batched :meth:`datasets.Dataset.map` step."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, ClassVar

from psp_st.data.filters import FilterCount, is_streaming, require_columns
from psp_st.data.text_files import TEXT_COLUMNS


@dataclass(frozen=True)
class Lowercase:
    """Lower-case ``sentence1`` and ``sentence2`` (keeps every row; a ``Dataset`` is copied to datasets' cache)."""

    name: ClassVar[str] = "lowercase"

    @staticmethod
    def transform(batch: dict[str, list]) -> dict[str, list]:
        return {column: [text.lower() for text in batch[column]] for column in TEXT_COLUMNS}

    def apply(self, dataset: Any, num_proc: int | None = None, counter: FilterCount | None = None) -> Any:
        require_columns(dataset, TEXT_COLUMNS, self.name)
        if is_streaming(dataset):
            function = self.transform if counter is None else functools.partial(_counted_transform, counter)
            return dataset.map(function, batched=True)
        return dataset.map(self.transform, batched=True, num_proc=num_proc, desc="lowercase")


def _counted_transform(counter: FilterCount, batch: dict[str, list]) -> dict[str, list]:
    """:meth:`Lowercase.transform`, its rows counted as kept (module-level: a stream pickles into workers)."""
    counter.kept += len(batch["sentence1"])
    return Lowercase.transform(batch)

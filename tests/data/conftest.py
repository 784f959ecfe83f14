"""Fixtures of the data-pipeline tests: the tiny text files in ``fixtures/`` and Parquet files made on the fly."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def fixture_path():
    """Path of a file in tests/data/fixtures."""

    def resolve(name: str) -> Path:
        return FIXTURES / name

    return resolve


@pytest.fixture
def cache_dir(tmp_path) -> str:
    """A private datasets cache, so tests never read or write ~/.cache/huggingface."""
    return str(tmp_path / "hf-cache")


@pytest.fixture
def write_parquet(tmp_path):
    """Write a dict of columns as a Parquet file under tmp_path and return its path."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(name: str, columns: dict) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        pq.write_table(pa.table(columns), path)
        return path

    return write


@pytest.fixture
def pairs_dataset():
    """Build an in-memory datasets.Dataset from a dict of columns."""
    from datasets import Dataset

    def build(columns: dict):
        return Dataset.from_dict(columns)

    return build

"""Streaming Parquet, one row group at a time (datasets' streaming builder holds far more heap); row groups as shards."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any


def _rows(
    files: Sequence[str], row_groups: Sequence[int | None], mapping: Mapping[str, str], batch_size: int
) -> Iterator[dict]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = list(dict.fromkeys(mapping.values()))
    for path, group in zip(files, row_groups, strict=True):
        if group is None:
            continue
        try:
            with pq.ParquetFile(path) as reader:
                for batch in reader.iter_batches(batch_size=batch_size, row_groups=[group], columns=columns):
                    data = batch.to_pydict()
                    for index in range(batch.num_rows):
                        yield {output: data[source][index] for output, source in mapping.items()}
        except (pa.ArrowException, OSError) as error:  # pages that do not decode: corrupt or overwritten bytes
            raise ValueError(
                f"{path}: row group {group}: not a readable Parquet file ({type(error).__name__}: {error}); "
                "write it again or check the copy"
            ) from error


def stream_parquet(
    files: Sequence[str], mapping: Mapping[str, str], split: str = "train", batch_size: int = 1000
) -> Any:
    """An :class:`~datasets.IterableDataset` over ``files`` with columns renamed by ``mapping`` (output -> source)."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from datasets import Features, IterableDataset

    shard_files: list[str] = []
    shard_groups: list[int | None] = []
    for path in files:
        count = pq.ParquetFile(path).metadata.num_row_groups
        shard_files += [path] * count
        shard_groups += list(range(count))
    if not shard_files:  # only empty files: one empty shard
        shard_files, shard_groups = [files[0]], [None]
    schema = pq.read_schema(files[0])
    features = Features.from_arrow_schema(
        pa.schema([pa.field(output, schema.field(source).type) for output, source in mapping.items()])
    )
    return IterableDataset.from_generator(
        _rows,
        features=features,
        gen_kwargs=dict(files=shard_files, row_groups=shard_groups, mapping=dict(mapping), batch_size=batch_size),
        split=split,
    )

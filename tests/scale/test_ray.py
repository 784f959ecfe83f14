"""Ray Data execution (local Ray, 2 workers): same outputs as one process; a worker that dies mid-job is survived."""

from __future__ import annotations

import logging
import os
import socket
import sys
import time

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("ray", reason='Ray Data is not installed (pip install "psp-st[ray]")')
pytest.importorskip("faiss", reason='FAISS is not installed (pip install "psp-st[ray]")')

from psp_st.mining.embed_shards import EmbedWorker  # noqa: E402
from psp_st.mining.executor import Execution, check_ray_address, ray_session, run_tasks  # noqa: E402
from psp_st.mining.pairs import MiningConfig, mine_pairs  # noqa: E402
from psp_st.mining.shards import ShardStore, plan_shards, read_manifest  # noqa: E402

RAY = Execution(ray="local", workers=2, threads=1)


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray instance (2 CPUs) for the module: starting Ray takes seconds."""
    with ray_session("local", num_cpus=2) as ray:
        yield ray


class DyingEmbedWorker(EmbedWorker):
    """Exits its process (no cleanup, like a killed worker) the first time it reaches shard 2."""

    def __init__(self, marker: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.marker = marker

    def run(self, task):
        if task["index"] == 2 and not os.path.exists(self.marker):
            with open(self.marker, "w") as handle:
                handle.write(str(os.getpid()))
            os._exit(1)
        return super().run(task)


def test_mining_on_ray_equals_the_single_process_run(local_ray, psp_model_dir, caption_file, tmp_path):
    config = MiningConfig(min_margin=1.0, shard_rows=200, recall_sample=50)
    local = mine_pairs(caption_file, tmp_path / "local.parquet", str(psp_model_dir), config=config)
    remote = mine_pairs(caption_file, tmp_path / "ray.parquet", str(psp_model_dir), config=config, execution=RAY)
    pd.testing.assert_frame_equal(
        pd.read_parquet(tmp_path / "local.parquet"), pd.read_parquet(tmp_path / "ray.parquet")
    )
    assert local["filters"] == remote["filters"] and local["pairs"] > 0
    for stage in ("source-vectors", "knn-forward"):  # same shards, rows and checksums
        left, right = (read_manifest(tmp_path / f"{name}.parquet.work" / stage)["shards"] for name in ("local", "ray"))
        assert [(r["rows"], r["sha256"]) for r in left] == [(r["rows"], r["sha256"]) for r in right]


def test_a_worker_killed_mid_job_is_replaced_and_every_row_is_embedded_once(
    local_ray, psp_model_dir, psp_module, caption_file, tmp_path
):
    import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the test module is not importable by Ray workers
    marker = tmp_path / "died"
    out = tmp_path / "vectors"
    shards = plan_shards([caption_file], shard_rows=100)
    store = ShardStore(out, ".npy")
    store.pending({"kind": "embed-test"}, shards)
    kwargs = {"marker": str(marker), "model": str(psp_model_dir), "folder": str(out)}
    results = run_tasks([shard.__dict__ for shard in shards], DyingEmbedWorker, kwargs, RAY)
    assert marker.is_file()  # a worker did die on shard 2
    assert [r["shard"] for r in results] == list(range(len(shards)))
    manifest = store.finish({"kind": "embed-test"}, shards)
    vectors = np.concatenate([np.load(out / record["file"]) for record in manifest["shards"]])
    lines = caption_file.read_text(encoding="utf-8").splitlines()
    assert manifest["rows"] == len(lines) == len(vectors)
    np.testing.assert_allclose(vectors, psp_module.embed(lines), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("level", [logging.WARNING, logging.INFO])
def test_rays_own_log_level_follows_psp_st(monkeypatch, caplog, level):
    import ray

    seen = {}

    def init(**kwargs):
        seen.update(kwargs)
        raise RuntimeError("stop before starting Ray")

    caplog.set_level(level, logger="psp_st")
    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", init)
    with pytest.raises(RuntimeError, match="stop"), ray_session("local", num_cpus=1):
        pass
    assert seen["logging_level"] == level


def test_a_ray_address_where_nothing_listens_is_refused_quickly_saying_what_to_do():
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(ConnectionError, match="no Ray cluster answers.*ray start --head"):
        check_ray_address(f"127.0.0.1:{port}", timeout=2)
    assert time.monotonic() - started < 5

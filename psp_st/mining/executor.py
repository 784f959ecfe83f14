"""Running one worker per shard: in this process, or as a Ray Data ``map_batches`` job over an actor pool. A shard
worker is built once per process; its ``run(task)`` writes one JSON-able shard task's output (or skips a done one)."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from psp_st.arguments import check_int

logger = logging.getLogger(__name__)

#: The value of ``--ray`` given without an address: start a local Ray instance.
LOCAL = "local"

#: Seconds a ``HOST:PORT`` Ray address has to accept a connection (Ray itself retries for ~14 minutes).
CONNECT_TIMEOUT = 10.0


@dataclass(frozen=True)
class Execution:
    """Where shard tasks run: ``ray`` is None (this process), ``"local"`` (a new local Ray) or a cluster address."""

    ray: str | None = None
    workers: int = 2
    threads: int = 1

    def __post_init__(self) -> None:
        check_int("workers (--workers)", self.workers)
        check_int("threads (--threads)", self.threads)


def set_worker_threads(threads: int) -> None:
    """Bound torch (when imported), BLAS and FAISS to ``threads`` threads in this process."""
    os.environ["OMP_NUM_THREADS"] = str(threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    with contextlib.suppress(ImportError):
        import faiss

        faiss.omp_set_num_threads(threads)


def check_ray_address(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """Refuse a ``HOST:PORT`` Ray address where nothing accepts a TCP connection within ``timeout`` seconds, with an
    error saying what to do (``auto`` and ``ray://`` addresses are left to Ray, which fails fast on them)."""
    import socket

    if address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"--ray {address}: expected HOST:PORT (e.g. head:6379), ray://HOST:PORT or auto")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout).close()
    except OSError as error:
        raise ConnectionError(
            f"--ray {address}: no Ray cluster answers there within {timeout:g} s ({error}); start one with "
            "`ray start --head` on that host, fix the address, or pass --ray without an address for a local Ray"
        ) from error


@contextlib.contextmanager
def ray_session(address: str, num_cpus: int | None = None) -> Iterator[Any]:
    """Connect to Ray (``"local"``: start a local instance, whose workers run this process's ``psp_st``, with
    ``num_cpus``; a cluster's nodes run their own installed psp-st); shut down only what was started here."""
    from psp_st.io.extras import require

    require("ray.data", "--ray")  # Ray with Ray Data, or an ImportError naming the extra
    import ray

    if ray.is_initialized():
        yield ray
        return
    level = logging.INFO if logger.isEnabledFor(logging.INFO) else logging.WARNING  # Ray's INFO only with psp-st -v
    if level == logging.WARNING:
        logging.getLogger("ray.data").setLevel(level)
    if address == LOCAL:
        import psp_st

        source = str(Path(psp_st.__file__).resolve().parents[1])
        path = os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH")]))
        env = {"PYTHONPATH": path, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false"}
        ray.init(
            num_cpus=num_cpus,
            include_dashboard=False,
            runtime_env={"env_vars": env},
            log_to_driver=False,
            logging_level=level,
        )
    else:
        check_ray_address(address)  # Ray would retry an address that does not answer for ~14 minutes
        ray.init(address=address, logging_level=level)
    try:
        yield ray
    finally:
        ray.shutdown()


def session(execution: Execution) -> contextlib.AbstractContextManager[Any]:
    """Keep one Ray connection open across several jobs of ``execution`` (a no-op when it runs locally)."""
    if execution.ray is None:
        return contextlib.nullcontext()
    return ray_session(execution.ray, num_cpus=execution.workers * execution.threads)


class _RayShardActor:
    """The ``map_batches`` callable class: one shard worker per actor, one JSON task per batch row."""

    def __init__(self, worker_class: type, worker_kwargs: dict[str, Any], threads: int) -> None:
        set_worker_threads(threads)
        self.worker = worker_class(**worker_kwargs)

    def __call__(self, batch: dict[str, Any]) -> dict[str, list[str]]:
        return {"result": [json.dumps(self.worker.run(json.loads(str(task)))) for task in batch["task"]]}


def run_tasks(
    tasks: Sequence[dict[str, Any]], worker_class: type, worker_kwargs: dict[str, Any], execution: Execution
) -> list[dict[str, Any]]:
    """Run ``worker_class(**worker_kwargs).run(task)`` for every task; results in task order."""
    if not tasks:
        return []
    if execution.ray is None:  # in this process: a worker's torch threads (a non-P-SP model's) are the caller's after
        torch = sys.modules.get("torch")
        threads = None if torch is None else torch.get_num_threads()
        try:
            worker = worker_class(**worker_kwargs)
            return [worker.run(dict(task)) for task in tasks]
        finally:
            if torch is not None:
                torch.set_num_threads(threads)
    with session(execution) as ray:
        ray.data.DataContext.get_current().enable_progress_bars = False
        dataset = ray.data.from_items([{"task": json.dumps(task)} for task in tasks], override_num_blocks=len(tasks))
        actor_kwargs = {"worker_class": worker_class, "worker_kwargs": worker_kwargs, "threads": execution.threads}
        dataset = dataset.map_batches(
            _RayShardActor,
            fn_constructor_kwargs=actor_kwargs,
            batch_size=1,
            compute=ray.data.ActorPoolStrategy(size=min(execution.workers, len(tasks))),
            num_cpus=execution.threads,  # a dead actor is restarted and its task retried: Ray Data's default
        )
        rows = dataset.take_all()
    return sorted((json.loads(row["result"]) for row in rows), key=lambda result: result["shard"])

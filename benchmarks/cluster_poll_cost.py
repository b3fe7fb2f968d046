"""The cluster poller's cost: a real LocalCluster of 8 process workers and a recorded 64-worker answer,
side by side in one run.

The poller reads every ``cluster_interval_s`` (2 s by default); the target is at most 1 % of one
core at that rate with 64 workers. Two figures per reading:

- real, 8 process workers: the process's CPU (every thread: the poller's, its deadline thread,
  distributed's event loop that sends the request and decodes the answer, and the in-process
  scheduler that builds it) over back-to-back readings, less the same process's idle CPU over
  the same wall time (heartbeats), divided by the readings;
- real, 64 thread workers (``processes=False``: 64 process workers do not fit the 2-core
  development VM): as above, the answer of 64 workers through the real rpc; their heartbeats
  run in the same process, so the idle figure subtracted is large and the result noisier;
- recorded, 64 workers: the helper's own Python per reading (finding the client, reading 64
  workers, totals, events, the change test) against a client that returns the scheduler answer
  recorded from a real LocalCluster of 64 thread workers (tests/fixtures/), so no rpc is in it.

    python benchmarks/cluster_poll_cost.py [--workers 8] [--readings 40] [--interval 2]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "python_helper"))

from jupyterlab_vram_helper.cluster.cluster_poller import ClusterPoller  # noqa: E402
from jupyterlab_vram_helper.config import SamplerConfig  # noqa: E402

RECORDED = ROOT / "tests" / "fixtures" / "dask_identity_64_workers.json"


class RecordedClient:
    """A client whose scheduler answers with the recorded identity at once (no rpc, no copy)."""

    def __init__(self, answer: dict[str, Any]):
        self.status = "running"
        self.cluster = None
        self.scheduler = SimpleNamespace(address=answer["address"], identity=lambda n_workers=0: answer)

    def sync(self, fn: Any, *args: Any, callback_timeout: float | None = None, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)


def per_reading_us(poller: ClusterPoller, readings: int) -> float:
    """The process's CPU per reading, back to back (every thread), in microseconds."""
    started = time.process_time()
    for _ in range(readings):
        poller.read_once()
    return (time.process_time() - started) / readings * 1e6


def recorded(readings: int, interval: float) -> tuple[float, int]:
    answer = json.loads(RECORDED.read_text(encoding="utf-8"))
    answer.pop("_recorded", None)
    client = RecordedClient(answer)
    modules = {
        "distributed": SimpleNamespace(__version__="recorded"),
        "distributed.client": SimpleNamespace(Client=RecordedClient, _get_global_client=lambda: None),
    }
    shell = SimpleNamespace(user_ns={"client": client})
    config = SamplerConfig(cluster_interval_s=interval)
    poller = ClusterPoller(lambda: shell, lambda: config, lambda message: None, modules=modules)
    poller.read_once()  # the first reading imports the readers
    return per_reading_us(poller, readings), len(answer["workers"])


def real(workers: int, readings: int, interval: float, processes: bool = True) -> tuple[float, float, int]:
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=workers, threads_per_worker=1, processes=processes, memory_limit="256MiB", dashboard_address=None
    )
    client = Client(cluster)
    try:
        client.wait_for_workers(workers, timeout=120)
        time.sleep(2)
        shell = SimpleNamespace(user_ns={"client": client})
        config = SamplerConfig(cluster_interval_s=interval)
        poller = ClusterPoller(lambda: shell, lambda: config, lambda message: None)
        poller.read_once()
        # The idle process (heartbeats, the nannies' monitors) over a few seconds, per second.
        idle_wall, idle_cpu = time.monotonic(), time.process_time()
        time.sleep(5)
        idle_rate = (time.process_time() - idle_cpu) / (time.monotonic() - idle_wall)
        wall, cpu = time.monotonic(), time.process_time()
        for _ in range(readings):
            poller.read_once()
        spent_wall = time.monotonic() - wall
        spent = time.process_time() - cpu - idle_rate * spent_wall
        seen = len(next(iter(poller.states.values()))["workers"])
        return max(0.0, spent) / readings * 1e6, idle_rate * 100, seen
    finally:
        client.close()
        cluster.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--readings", type=int, default=40)
    parser.add_argument("--interval", type=float, default=2.0)
    args = parser.parse_args()
    recorded_us, recorded_workers = recorded(args.readings * 5, args.interval)
    real_us, idle_percent, real_workers = real(args.workers, args.readings, args.interval)
    threads_us, threads_idle, thread_workers = real(64, args.readings, args.interval, processes=False)
    columns = [
        (f"{real_workers} process", real_us, real_workers, idle_percent),
        (f"{thread_workers} thread", threads_us, thread_workers, threads_idle),
        (f"{recorded_workers} recorded", recorded_us, recorded_workers, None),
    ]
    print(f"cluster poll at one reading per {args.interval:g} s (CPU per reading; target <= 1 % of one core)")
    print(f"  {'':30}" + "".join(f"{name:>16}" for name, *_ in columns))
    print(f"  {'per reading (us)':30}" + "".join(f"{us:16.0f}" for _, us, _, _ in columns))
    print(
        f"  {'share of one core (%)':30}"
        + "".join(f"{us / 1e6 / args.interval * 100:16.3f}" for _, us, _, _ in columns)
    )
    print(f"  {'per worker (us)':30}" + "".join(f"{us / n:16.0f}" for _, us, n, _ in columns))
    idle = "".join(f"{i:16.1f}" if i is not None else f"{'-':>16}" for *_, i in columns)
    print(f"  {'idle process, not ours (%)':30}" + idle)


if __name__ == "__main__":
    main()

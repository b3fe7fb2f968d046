"""Found, not imposed: clusters are found in sys.modules and the user's namespace, never made."""

import sys
from typing import Any

import pytest
from cluster_fakes import FakeClient, FakeRay, Shell, dask_modules

from jupyterlab_vram_helper.cluster.cluster_discovery import find_clusters
from jupyterlab_vram_helper.cluster.cluster_watch import ClusterWatch, engine_imported


def test_nothing_is_found_where_no_engine_was_imported() -> None:
    assert find_clusters(Shell(client=FakeClient()).user_ns, {}) == []
    assert engine_imported({}) is False and engine_imported({"ray": object()}) is True


def test_a_namespace_client_is_named_and_the_same_default_client_is_not_counted_twice() -> None:
    client, other = FakeClient(), FakeClient(address="tcp://10.0.0.9:1")
    shell = Shell(client=client, also=client, _hidden=other)
    found = find_clusters(shell.user_ns, dask_modules(default=client))
    assert [(f.engine, f.found_by, f.variable) for f in found] == [("dask", "namespace", "client")]
    found = find_clusters({}, dask_modules(default=other))
    assert [(f.found_by, f.variable, f.handle) for f in found] == [("default_client", None, other)]


def test_ray_is_found_only_when_initialised() -> None:
    assert [f.found_by for f in find_clusters({}, {"ray": FakeRay()})] == ["initialized"]
    assert find_clusters({}, {"ray": FakeRay(initialized=False)}) == []


def test_the_watch_starts_a_poller_only_once_an_engine_is_imported_and_stops_it_when_turned_off(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[Any] = []

    class Poller:
        running = False
        final = None

        def start(self) -> None:
            self.running = True

        def stop(self, final: bool) -> None:
            self.running, self.final = False, final

    def make() -> Any:
        made.append(Poller())
        return made[-1]

    for name in ("distributed", "ray"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    watch = ClusterWatch(make)
    watch.tick(True)
    assert made == []
    monkeypatch.setitem(sys.modules, "ray", object())
    watch.tick(False)
    assert made == []  # turned off: not even made
    watch.tick(True)
    assert len(made) == 1 and made[0].running
    watch.tick(False)
    assert made[0].running is False and made[0].final is True
    watch.tick(True)
    assert len(made) == 1 and made[0].running

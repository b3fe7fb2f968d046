"""A cell's cluster section: the reading before, the largest during, the first after, named sampled."""

from jupyterlab_vram_helper.cluster.cell_cluster import CellClusters, ClusterReading


def reading(at: float, memory: int | None, workers: int = 2, event: int = 0) -> ClusterReading:
    return ClusterReading(at, ("tcp://s:1",), memory, workers, event)


def test_no_window_opens_without_a_cluster() -> None:
    clusters = CellClusters()
    assert clusters.begin() is None
    clusters.observe(reading(1.0, 10))
    clusters.observe(None)
    assert clusters.begin() is None


def test_before_during_and_after_make_the_section() -> None:
    clusters = CellClusters()
    clusters.event_ids = lambda first: [i for i in (1, 2, 3) if i >= first]
    clusters.observe(reading(1.0, 100, event=1))
    window = clusters.begin()
    assert window is not None
    clusters.observe(reading(2.0, 300))
    clusters.observe(reading(3.0, 200))
    window.ended_at = 3.5
    clusters.observe(reading(4.0, 150, workers=1))
    clusters.observe(reading(5.0, 900))  # after the reading after: not this cell's
    clusters.wait_after([window], timeout=0.01)
    section = clusters.section(window)
    assert section == {
        "clusters": ["tcp://s:1"],
        "before_bytes": 100,
        "after_bytes": 150,
        "sampled_max_bytes": 300,
        "workers_before": 2,
        "workers_after": 1,
        "samples": 4,
        "sample_spacing_s": 2.0,
        "events": [2, 3],
    }


def test_the_wait_for_the_reading_after_is_bounded_and_asks_for_one() -> None:
    clusters = CellClusters()
    asked = []
    clusters.request_reading = lambda: asked.append(1)
    clusters.observe(reading(1.0, 100))
    window = clusters.begin()
    assert window is not None
    window.ended_at = 2.0
    clusters.wait_after([window], timeout=0.05)
    assert asked == [1] and clusters.section(window)["after_bytes"] is None

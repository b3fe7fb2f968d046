import sys
from typing import Any

from fakes import known, nested_stats

from jupyterlab_vram_helper.sampling.readers.nvml import UNNAMED_RETRY_S, NvmlReader
from jupyterlab_vram_helper.sampling.sample import ENVIRONMENT_CHECK_S, SampleSource, make_sample, significant_change

MB = 1 << 20


def figures(rss=100 * MB, gpus=None, ooms=None):
    return {
        "host": {"rss_bytes": rss, "total_bytes": 1000 * MB, "available_bytes": 500 * MB},
        "torch": {"imported": True, "cuda_initialized": True},
        "tensorflow": {"imported": False, "gpus_initialized": False},
        "gpus": gpus if gpus is not None else [],
    }


def gpu(allocated, ooms=0, index=0):
    return {
        "index": index,
        "name": "g",
        "total_bytes": 80 * MB,
        "nvml": None,
        "tensorflow": None,
        "torch": {"allocated_bytes": allocated, "num_ooms": ooms},
    }


def test_no_previous_is_a_change() -> None:
    assert significant_change(None, figures(), MB)


def test_threshold_is_strictly_more_than() -> None:
    assert not significant_change(figures(rss=100 * MB), figures(rss=101 * MB), MB)
    assert significant_change(figures(rss=100 * MB), figures(rss=101 * MB + 1), MB)
    assert significant_change(figures(rss=100 * MB), figures(rss=99 * MB - 1), MB)
    assert significant_change(figures(rss=100 * MB), figures(rss=100 * MB + 1), 0)


def test_gpu_figures_counters_devices_flags() -> None:
    base = figures(gpus=[gpu(10 * MB)])
    assert not significant_change(base, figures(gpus=[gpu(10 * MB + 5)]), MB)
    assert significant_change(base, figures(gpus=[gpu(20 * MB)]), MB)
    assert significant_change(base, figures(gpus=[gpu(10 * MB, ooms=1)]), MB)  # counters: any change
    assert significant_change(base, figures(gpus=[]), MB)  # device disappeared
    assert significant_change(base, figures(gpus=[gpu(10 * MB), gpu(0, index=1)]), MB)
    flipped = figures(gpus=[gpu(10 * MB)])
    flipped["torch"]["cuda_initialized"] = False
    assert significant_change(base, flipped, MB)


def test_known_unknown_transitions_count() -> None:
    assert significant_change(figures(rss=None), figures(rss=5), MB)
    assert significant_change(figures(rss=5), figures(rss=None), MB)
    assert not significant_change(figures(rss=None), figures(rss=None), MB)


def test_source_reads_torch_and_nvml_per_device(fake_torch, fake_pynvml, two_gpus) -> None:
    two_gpus[1].processes = [(77, 3 * MB)]
    nvml = NvmlReader(pid=77, load=lambda: fake_pynvml, pid_exists=lambda p: True)
    nvml.start()
    source = SampleSource(nvml=nvml, environ={"CUDA_VISIBLE_DEVICES": "1"})
    before = source.read()
    assert [g["index"] for g in before["gpus"]] == [0]
    assert before["gpus"][0]["torch"] is None
    assert before["gpus"][0]["nvml"] == {
        "used_bytes": 2 << 30,
        "total_bytes": 80 << 30,
        "free_bytes": (80 << 30) - (2 << 30),
        "process_used_bytes": 3 * MB,
        "processes": [{"pid": 77, "used_bytes": 3 * MB, "this_process": True}],
    }
    assert before["torch"] == {"imported": True, "cuda_initialized": False}

    # The user's cell initialises CUDA; torch (seeing only GPU 1) numbers it 0.
    fake_torch.initialized = True
    fake_torch.cuda.device_count = lambda: 1
    props = fake_torch.cuda.get_device_properties
    fake_torch.cuda.get_device_properties = lambda i: props(i + 1)
    fake_torch.stats[0] = nested_stats(allocated=7, reserved=8, peak=9)
    after = source.read()
    g = after["gpus"][0]
    assert (g["index"], known(g["torch"])["allocated_bytes"], known(g["nvml"])["used_bytes"]) == (0, 7, 2 << 30)
    assert significant_change(before, after, MB)
    sample = make_sample(after, 3, 1.5, "change")
    assert (sample["type"], sample["seq"], sample["time"], sample["reason"]) == ("sample", 3, 1.5, "change")


def test_machine_wide_host_figures_alone_cost_no_sample() -> None:
    # Other processes move host available memory all the time; only this
    # kernel's figures (and the GPUs) decide whether a sample is worth sending.
    base = figures()
    busy_machine = figures()
    busy_machine["host"] = {**base["host"], "available_bytes": 100 * MB}
    assert not significant_change(base, busy_machine, MB)
    busy_machine["host"]["rss_bytes"] = 300 * MB
    assert significant_change(base, busy_machine, MB)


def test_the_containers_usage_alone_costs_no_sample_its_limit_and_kills_do() -> None:
    def contained(**container):
        f = figures()
        f["host"]["container"] = {
            "limit_bytes": 4096 * MB,
            "usage_bytes": 1024 * MB,
            "oom_kill_count": 0,
            "cgroup_version": 2,
            **container,
        }
        return f

    base = contained()
    assert not significant_change(base, contained(usage_bytes=3000 * MB), MB)  # the whole cgroup's, page cache too
    assert significant_change(base, contained(limit_bytes=2048 * MB), MB)
    assert significant_change(base, contained(oom_kill_count=1), MB)
    assert significant_change(base, contained(limit_bytes=None), MB)  # known -> unknown
    assert significant_change(base, figures(), MB)  # the container section went away
    assert significant_change(figures(), base, MB)  # ... or came


def test_any_section_that_moves_counts_whatever_else_stays() -> None:
    base = figures(gpus=[gpu(10 * MB)])
    moved = figures(gpus=[gpu(10 * MB)])
    moved["tensorflow"] = {"imported": True, "gpus_initialized": False}
    assert significant_change(base, moved, MB)
    extra = figures(gpus=[gpu(10 * MB)])
    extra["host"]["swap_bytes"] = 0  # a field this version does not know of
    assert significant_change(base, extra, MB)
    assert not significant_change(base, figures(gpus=[gpu(10 * MB)]), MB)


def test_a_process_list_that_lacks_this_kernel_while_torch_reserves_memory(fake_torch, fake_pynvml, two_gpus) -> None:
    # Seen on an H100: NVML listed the processes while the kernel created its
    # context, without it; the sample then said "0 bytes" for seconds.
    now = [100.0]
    nvml = NvmlReader(
        pid=77, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True, process_refresh_s=5.0
    )
    nvml.start()
    source = SampleSource(nvml=nvml, environ={})
    assert known(source.read()["gpus"][0]["nvml"])["process_used_bytes"] == 0  # no CUDA yet: provably 0
    fake_torch.initialized = True
    fake_torch.stats[0] = nested_stats(allocated=7 * MB, reserved=20 * MB, peak=7 * MB)
    listed = fake_pynvml.calls.count("processes")
    now[0] += 0.1
    # NVML still does not list us: unknown, not 0 (and it was asked again at once).
    assert known(source.read()["gpus"][0]["nvml"])["process_used_bytes"] is None
    assert fake_pynvml.calls.count("processes") == listed + 1
    # Once NVML lists the process, its figure shows at the next retry, not after the cache's 5 s.
    two_gpus[0].processes = [(77, 520 * MB)]
    now[0] += UNNAMED_RETRY_S
    assert known(source.read()["gpus"][0]["nvml"])["process_used_bytes"] == 520 * MB
    assert known(source.read()["gpus"][1]["nvml"])["process_used_bytes"] == 0  # torch reserves nothing there


def test_a_context_without_reserved_memory_is_not_a_provable_zero(fake_torch, fake_pynvml, two_gpus) -> None:
    # Between torch's initialisation and its first allocation the kernel has a
    # context (hundreds of MiB to NVML) but reserves nothing; a list read as the
    # context was created may lack the process: its figure is unknown, not 0.
    nvml = NvmlReader(pid=77, load=lambda: fake_pynvml, pid_exists=lambda p: True)
    nvml.start()
    source = SampleSource(nvml=nvml, environ={})
    fake_torch.initialized = True
    fake_torch.contexts = {0}
    two_gpus[0].processes = [(1, 300 * MB)]
    first, second = source.read()["gpus"]
    assert known(first["torch"])["reserved_bytes"] == 0
    assert known(first["nvml"])["process_used_bytes"] is None
    assert known(second["nvml"])["process_used_bytes"] == 0  # no context there, nothing reserved: provably 0


def test_a_tensorflow_kernel_missing_from_the_process_list_is_not_a_provable_zero(
    fake_pynvml, two_gpus, monkeypatch
) -> None:
    # TensorFlow alone has initialised the GPUs (a context and its pool on
    # each); NVML lists no process of this kernel (a container's pid
    # namespace): its figure is unknown, not 0, or the card would show the
    # kernel's own memory as other processes'.
    import types

    eager = types.ModuleType("tensorflow.python.eager.context")

    class Context:
        _context_handle = object()

        def list_logical_devices(self, kind: str) -> list:
            return [types.SimpleNamespace(name="/device:GPU:0")]

    eager._context = Context()  # type: ignore[attr-defined]
    tf = types.ModuleType("tensorflow")
    memory_info = {"current": 2 << 30, "peak": 3 << 30}
    tf.config = types.SimpleNamespace(  # type: ignore[attr-defined]
        experimental=types.SimpleNamespace(get_memory_info=lambda device: memory_info)
    )
    monkeypatch.setitem(sys.modules, "tensorflow", tf)
    monkeypatch.setitem(sys.modules, "tensorflow.python.eager.context", eager)
    nvml = NvmlReader(pid=77, load=lambda: fake_pynvml, pid_exists=lambda p: p < 100)
    nvml.start()
    two_gpus[0].processes = []
    first = SampleSource(nvml=nvml, environ={}).read()["gpus"][0]
    assert known(first["tensorflow"])["current_bytes"] == 2 << 30
    assert known(first["nvml"])["process_used_bytes"] is None


def test_cuda_visible_devices_is_seen_within_a_second_and_at_once_when_cuda_comes_up(
    fake_torch, fake_pynvml, two_gpus
) -> None:
    nvml = NvmlReader(pid=77, load=lambda: fake_pynvml, pid_exists=lambda p: True)
    nvml.start()
    environ: dict = {}
    now = [100.0]
    source = SampleSource(nvml=nvml, environ=environ, clock=lambda: now[0])
    first, second = "GPU-aaaa-1111", "GPU-bbbb-2222"
    assert [d.uuid for d in source.devices()] == [first, second]

    environ["CUDA_VISIBLE_DEVICES"] = "1"  # a cell sets it
    now[0] += 0.5
    assert [d.uuid for d in source.devices()] == [first, second]  # not looked at yet
    now[0] += ENVIRONMENT_CHECK_S
    assert [d.uuid for d in source.devices()] == [second]

    # A cell changes it again and initialises CUDA at once: read now, not a second later.
    environ["CUDA_VISIBLE_DEVICES"] = "0"
    fake_torch.initialized = True
    fake_torch.cuda.device_count = lambda: 1
    assert [d.uuid for d in source.devices()] == [first]


def test_the_comparison_decides_as_comparing_copies_without_the_machine_wide_figures() -> None:
    # significant_change compares in place for speed; its decisions must be those of
    # the plain definition: copies without the machine-wide figures, compared whole,
    # or a rise of the machine's OOM kill count.
    # (Not for one NaN object on both sides: the readers send ints and None, and the
    # copies' own walk calls it equal or not depending on what else moved.)
    import copy
    import random

    from jupyterlab_vram_helper.sampling.sample import _differs, _kernel_figures, _machine_counts_rose

    rng = random.Random(20261124)
    values: list[Any] = [None, 0, 1, True, 1.0, float("nan"), "x", MB, 3 * MB, [], {}, {"usage_bytes": 5 * MB}]

    def some_figures():
        host = {"rss_bytes": rng.choice([100 * MB, None]), "total_bytes": 1000 * MB, "available_bytes": 500 * MB}
        if rng.random() < 0.7:
            host["oom_kill_count"] = rng.choice([None, 0, 41])
        if rng.random() < 0.6:
            host["container"] = rng.choice(
                [None, {"limit_bytes": 4096 * MB, "usage_bytes": MB, "oom_kill_count": 0, "cgroup_version": 2}]
            )
            if host["container"] is not None and rng.random() < 0.3:  # a shape no reader makes
                host["container"]["container"] = {"usage_bytes": MB}
        return {
            "host": host,
            "torch": {"imported": True, "cuda_initialized": rng.random() < 0.5},
            "tensorflow": {"imported": False, "gpus_initialized": False},
            "gpus": [gpu(rng.choice([0, 10 * MB]), index=i) for i in range(rng.randint(0, 2))],
        }

    def mutate(figures):
        figures = copy.deepcopy(figures)
        for _ in range(rng.randint(0, 3)):
            section = rng.choice(["host", "host", "host", "torch", "gpus", "top"])
            target = figures if section == "top" else figures.get(section)
            if section == "gpus":
                if type(target) is not list or not target or type(target[0]) is not dict:
                    continue
                target = rng.choice(target)["torch"]
            if type(target) is not dict:
                continue
            if section == "host" and type(target.get("container")) is dict and rng.random() < 0.5:
                target = target["container"]
            key = rng.choice(
                list(target) + ["available_bytes", "usage_bytes", "container", "extra_bytes", "oom_kill_count"]
            )
            move = rng.random()
            if move < 0.15:
                target.pop(key, None)
            elif move < 0.55 and type(target.get(key)) is int:
                target[key] += rng.choice([1, MB, 2 * MB, -3 * MB])
            else:
                target[key] = rng.choice(values)
        return figures

    decided = set()
    for _ in range(20000):
        before = some_figures()
        now = mutate(before)
        expected = _differs(_kernel_figures(before), _kernel_figures(now), MB, "") or _machine_counts_rose(before, now)
        assert significant_change(before, now, MB) is expected, (before, now)
        decided.add(expected)
    assert decided == {True, False}  # both decisions were reached


def test_nvml_memory_is_read_again_the_tick_the_kernels_own_memory_moves(fake_torch, fake_pynvml, two_gpus) -> None:
    # At 10 Hz NVML's device memory is read every other tick while the kernel's
    # own figures stand still, and at once when they move.
    now = [100.0]
    nvml = NvmlReader(pid=77, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True)
    nvml.start()
    source = SampleSource(nvml=nvml, environ={})
    fake_torch.initialized = True
    fake_torch.stats[0] = nested_stats(allocated=7 * MB, reserved=20 * MB, peak=7 * MB)
    used = lambda: known(source.read()["gpus"][0]["nvml"])["used_bytes"]  # noqa: E731
    first = known(used())
    two_gpus[0].used += 100 * MB  # the allocation below, as NVML will see it
    now[0] += 0.1
    assert used() == first  # the kernel's figures stood still: 0.1 s old figures given again
    fake_torch.stats[0] = nested_stats(allocated=100 * MB, reserved=120 * MB, peak=100 * MB)
    now[0] += 0.01
    assert used() == first + 100 * MB  # torch reserved more: NVML read in the same tick


def test_the_kernels_own_memory_moving_lists_the_processes_again(fake_torch, fake_pynvml, two_gpus) -> None:
    # Alone on the card, the kernel reserves 20 MiB more: with the process
    # list of before, those 20 MiB would read as another process's.
    now = [100.0]
    nvml = NvmlReader(pid=77, clock=lambda: now[0], load=lambda: fake_pynvml, pid_exists=lambda p: True)
    nvml.start()
    source = SampleSource(nvml=nvml, environ={})
    fake_torch.initialized = True
    fake_torch.contexts = {0}
    gpu = two_gpus[0]
    fake_torch.stats[0] = nested_stats(allocated=1000 * MB, reserved=1000 * MB, peak=1000 * MB)
    gpu.used, gpu.processes = 1500 * MB, [(77, 1500 * MB)]

    def other_processes() -> int:
        figures = known(source.read()["gpus"][0]["nvml"])
        return known(figures["used_bytes"]) - known(figures["process_used_bytes"])

    assert other_processes() == 0
    for step in range(1, 4):
        now[0] += 1.0
        fake_torch.stats[0] = nested_stats(allocated=1000 * MB, reserved=(1000 + 20 * step) * MB, peak=1000 * MB)
        gpu.used, gpu.processes = (1500 + 20 * step) * MB, [(77, (1500 + 20 * step) * MB)]
        assert other_processes() == 0


def test_one_devices_nvml_failure_leaves_the_others_and_the_sample(fake_torch, fake_pynvml, two_gpus) -> None:
    nvml = NvmlReader(pid=77, load=lambda: fake_pynvml, pid_exists=lambda p: True)
    nvml.start()
    source = SampleSource(nvml=nvml, environ={})
    real_read = nvml.read

    def read(device, *args, **kwargs):
        if device.nvml_index == 0:
            raise OverflowError("signed integer is greater than maximum")
        return real_read(device, *args, **kwargs)

    nvml.read = read  # type: ignore[method-assign]
    first, second = source.read()["gpus"]
    assert first["nvml"] is None
    assert known(second["nvml"])["used_bytes"] == two_gpus[1].used


def test_the_sampler_benchmarks_made_up_sample_has_every_field_the_helper_reads() -> None:
    """benchmarks/sampler_overhead.py sizes samples from made-up figures; the GPU kit runs it,
    so a field the helper grew must be there too, or the kit's run ends in a KeyError."""
    from pathlib import Path

    from jupyterlab_vram_helper.protocol_types import (
        GpuFigures,
        GpuLoad,
        GpuProcessLoad,
        NvmlGpuFigures,
        TorchGpuFigures,
    )

    benchmarks = str(Path(__file__).resolve().parents[3] / "benchmarks")
    sys.path.insert(0, benchmarks)
    try:
        import sampler_overhead
    finally:
        sys.path.remove(benchmarks)
    base, gpu = sampler_overhead.made_up_figures()
    real = SampleSource(nvml=NvmlReader(load=lambda: None)).read()
    assert set(base) == set(real)
    assert set(base["host"]) == set(real["host"])
    # No GPU here to read one from: the message shapes say what a GPU entry holds.
    assert set(gpu) == set(GpuFigures.__annotations__)
    assert set(gpu["torch"]) == set(TorchGpuFigures.__annotations__)
    assert set(gpu["nvml"]) == set(NvmlGpuFigures.__annotations__)
    assert set(gpu["load"]) == set(GpuLoad.__annotations__)
    assert set(gpu["load"]["processes"][0]) == set(GpuProcessLoad.__annotations__)
    empty, one, two = sampler_overhead.per_device_bytes()
    assert empty > 300 and one > 300 and abs(two - one) <= 2  # the second entry costs what the first did
